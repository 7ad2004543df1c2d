/* Hosting the agent runtime inside this process (madf run, the console). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/data_tools.h"
#include "agents/market.h"
#include "agents/mcp_tools.h"
#include "agents/llm_agent.h"
#include "agents/runtime.h"
#include "core/util.h"
#include "cli/host.h"
#include "core/banned.h"

const struct cli_opt host_options[] = {
	{ .name = "--market", .arg = "SOURCE",
	  .help = "the market data: csv:PATH, ecb[:BASE_URL] (the ECB's daily reference "
		  "rates) or sim (the default)" },
	{ .name = "--news", .arg = "SOURCE",
	  .help = "the news: jsonl:PATH, rss:PATH, rss:URL[,URL...] (live feeds) or sim "
		  "(the default)" },
	{ .name = "--report-dir", .arg = "DIR",
	  .help = "where the reports go (default: data/reports/weekly)" },
	{ .name = "--inject-fault", .arg = "AGENT:KIND",
	  .help = "for recovery tests: KIND error, malformed, slow or crash" },
	{ .name = "--task-timeout", .arg = "S",
	  .help = "a task's deadline in seconds (default 30, or MADF_TASK_TIMEOUT_S)" },
	{ 0 },
};

int host_option(struct host_opts *o, const char *cmd, const char *name, const char *val)
{
	char *err = NULL;
	if (!strcmp(name, "--market") || !strcmp(name, "--news")) {
		bool m = !strcmp(name, "--market");
		if (data_source_check(val, m, &err) < 0) {
			cli_fail(EXIT_USAGE, cmd, "%s", err);
			free(err);
			return -1;
		}
		const char *path = strchr(val, ':');
		struct stat st;
		if (path && !data_source_is_live(val) && stat(path + 1, &st) < 0)
			return cli_fail(EXIT_USAGE, cmd, "%s %s: cannot read %s: %s", name, val,
					path + 1, strerror(errno)), -1;
		if (m)
			o->market = val;
		else
			o->news = val;
	} else if (!strcmp(name, "--report-dir")) {
		o->report_dir = val;
	} else if (!strcmp(name, "--inject-fault")) {
		const char *c = strchr(val, ':');
		char agent[MSG_AGENT_MAX + 1];
		snprintf(agent, sizeof(agent), "%.*s", c ? (int)(c - val) : 0, val);
		if (!c || !agent_role_find(agent) || agent_fault_from_name(c + 1) < 0 ||
		    o->nfaults >= ARRAY_SIZE(o->faults))
			return cli_fail(EXIT_USAGE, cmd, "invalid --inject-fault \"%s\": AGENT:KIND with "
					"KIND one of error, malformed, slow, crash", val), -1;
		o->faults[o->nfaults++] = val;
	} else if (!strcmp(name, "--task-timeout")) {
		if (cli_long(cmd, name, val, 1, 86400, &o->task_timeout) < 0)
			return -1;
	} else {
		return 0;
	}
	return 1;
}

/* The MCP servers' tools of this process (one runtime per process). */
static struct mcp_tools *host_mcp;

static void host_mcp_warn(void *ctx, const char *msg)
{
	(void)ctx;
	cli_fail(0, NULL, "warning: %s", msg);
}

/* The shared runtime: cache, tool registry with the data tools and the MCP
 * servers' tools. */
int host_setup(struct cli *cli, struct agent_env *env, const struct host_opts *o)
{
	agent_env_init(env, cli->data_dir, cli->log_dir);
	env->bcfg.durable = cli->bcfg.durable;
	if (o->market) {
		free(env->market_source);
		env->market_source = xstrdup(o->market);
	}
	if (o->news) {
		free(env->news_source);
		env->news_source = xstrdup(o->news);
	}
	if (o->report_dir)
		env->report_dir = xstrdup(o->report_dir);
	if (o->task_timeout > 0)
		env->task_timeout_s = o->task_timeout;
	for (size_t i = 0; i < o->nfaults; i++)
		env->faults[env->nfaults++] = xstrdup(o->faults[i]);
	char *err = NULL;
	struct mcp_tools_opts mo = { .config_path = cli->mcp_config, .log_dir = env->log_dir,
				     .warn = host_mcp_warn };
	if (llm_agent_settings_from_env(&env->llm, &err) < 0) {
		cli_fail(EXIT_FAIL, NULL, "%s", err);
		free(err);
		return -1;
	}
	if (cache_open(env->data_dir, &env->cache, &err) < 0 ||
	    tools_open(env->data_dir, env->log_dir, env->cache, &env->tools, &err) < 0 ||
	    data_tools_register(env, &err) < 0 ||
	    (!o->no_mcp && mcp_tools_open(env->tools, &mo, &host_mcp, &err) < 0) ||
	    tools_write_registry(env->tools, &err) < 0) {
		cli_fail(EXIT_FAIL, NULL, "%s", err);
		free(err);
		return -1;
	}
	static const char *const market_tools[] = { "fx_rates", "news_search" };
	static const char *const news_tools[] = { "news_search", "fx_rates" };
	static const char *const val_tools[] = { "news_get", "fx_rates" };
	tools_set_essential(env->tools, "research_agent_1", market_tools, 2, NULL);
	tools_set_essential(env->tools, "research_agent_2", news_tools, 2, NULL);
	tools_set_essential(env->tools, "validator_agent", val_tools, 2, NULL);
	return 0;
}

void host_teardown(struct agent_env *env)
{
	if (env->tools)
		tools_save_usage(env->tools, NULL);
	mcp_tools_free(&host_mcp);
	data_tools_release(env);
	tools_free(&env->tools);
	cache_free(&env->cache);
	agent_env_release(env);
}

int host_start_agents(struct agent_env *env, struct agent **agents)
{
	for (size_t i = 0; i < agent_nroles; i++) {
		char *err = NULL;
		if (agent_open(agent_roles[i], env, &agents[i], &err) < 0 ||
		    agent_start_thread(agents[i], &err) < 0) {
			cli_fail(EXIT_FAIL, NULL, "%s: %s", agent_roles[i]->name, err);
			free(err);
			atomic_store(&env->stop, 1);
			for (size_t k = 0; k < i; k++) {
				agent_join(agents[k]);
				agent_free(&agents[k]);
			}
			agent_free(&agents[i]);
			return -1;
		}
	}
	/* Which mode the agents run in, in the product_manager's log (the
	 * console has no stderr to say it on). */
	char *mode = llm_agent_settings_describe(env->llm);
	cJSON *f = llm_agent_settings_manifest(env->llm);
	log_write(agents[0]->log, LOG_EVENTS, LOG_INFO, "mode", f, "agents run in %s", mode);
	cJSON_Delete(f);
	free(mode);
	return 0;
}

void host_stop_agents(struct agent_env *env, struct agent **agents)
{
	atomic_store(&env->stop, 1);
	for (size_t i = 0; i < agent_nroles; i++) {
		if (!agents[i])
			continue;
		agent_join(agents[i]);
		agent_free(&agents[i]);
	}
}


/* "1987-03-27" (noon UTC that day) or a full ISO 8601 time. */
int host_parse_as_of(const char *s, int64_t *ns)
{
	int32_t day;
	if (strlen(s) == 10 && market_day_parse(s, 10, &day) == 0) {
		*ns = ((int64_t)day * 86400 + 43200) * 1000000000LL;
		return 0;
	}
	return msg_parse_time(s, ns);
}

/* The agents of this process, told to stop on SIGINT or SIGTERM. */
static struct agent_env *live_env;

static void on_signal(int sig)
{
	(void)sig;
	if (live_env)
		atomic_store(&live_env->stop, 1);
}

void host_catch_signals(struct agent_env *env)
{
	live_env = env;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
