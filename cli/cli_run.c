/* madf run weekly, madf agent NAME: the agent runtime from the command
 * line. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/analytics.h"
#include "agents/data_tools.h"
#include "agents/llm_agent.h"
#include "agents/market.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/host.h"
#include "core/banned.h"

static struct agent_env *live_env;

static void on_signal(int sig)
{
	(void)sig;
	if (live_env)
		atomic_store(&live_env->stop, 1);
}

static void catch_signals(struct agent_env *env)
{
	live_env = env;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int split_pairs(const char *cmd, const char *list, struct wf_request *r)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		while (*p == ' ')
			p++;
		char b[4], q[4];
		char *err = NULL;
		if (market_pair_parse(p, b, q, &err) < 0) {
			cli_fail(EXIT_USAGE, cmd, "--pairs: %s", err);
			free(err);
			free(copy);
			return -1;
		}
		r->pairs = xrealloc(r->pairs, (r->npairs + 1) * sizeof(*r->pairs));
		r->pairs[r->npairs++] = xasprintf("%s/%s", b, q);
	}
	free(copy);
	if (!r->npairs) {
		cli_fail(EXIT_USAGE, cmd, "--pairs is empty");
		return -1;
	}
	return 0;
}

const struct cli_opt run_weekly_options[] = {
	{ .name = "--as-of", .arg = "TIME",
	  .help = "the week's end: a date YYYY-MM-DD or an ISO 8601 time (default: now)" },
	{ .name = "--pairs", .arg = "LIST",
	  .help = "the pairs, like USD/JPY,GBP/USD (default: ten Asia/G10 pairs)" },
	{ .group = host_options },
	{ .name = "--fresh", .help = "start a new run even when this week's is done" },
	{ 0 },
};

void run_opts_init(struct run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->req.as_of_ns = util_now_ns();
}

int run_option(struct run_opts *o, const char *cmd, const char *name, const char *val)
{
	int k = host_option(&o->host, cmd, name, val);
	if (k)
		return k;
	if (!strcmp(name, "--fresh")) {
		o->req.fresh = true;
	} else if (!strcmp(name, "--as-of")) {
		if (host_parse_as_of(val, &o->req.as_of_ns) < 0)
			return cli_fail(EXIT_USAGE, cmd, "invalid --as-of \"%s\": a date "
					"YYYY-MM-DD or an ISO 8601 time with a zone", val), -1;
	} else if (!strcmp(name, "--pairs")) {
		for (size_t i = 0; i < o->req.npairs; i++)
			free(o->req.pairs[i]);
		o->req.npairs = 0;
		if (split_pairs(cmd, val, &o->req) < 0)
			return -1;
	} else {
		return 0;
	}
	return 1;
}

void run_opts_finish(struct run_opts *o)
{
	if (o->req.npairs)
		return;
	for (size_t i = 0; i < wf_default_npairs; i++) {
		o->req.pairs = xrealloc(o->req.pairs, (o->req.npairs + 1) * sizeof(*o->req.pairs));
		o->req.pairs[o->req.npairs++] = xstrdup(wf_default_pairs[i]);
	}
}

void run_opts_release(struct run_opts *o)
{
	for (size_t i = 0; i < o->req.npairs; i++)
		free(o->req.pairs[i]);
	free(o->req.pairs);
	o->req.pairs = NULL;
	o->req.npairs = 0;
}

static int count_tasks(const cJSON *run, const char *status)
{
	int n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const cJSON *s = cJSON_GetObjectItem(t, "status");
		if (!status || (cJSON_IsString(s) && !strcmp(s->valuestring, status)))
			n++;
	}
	return n;
}

static const char *run_status(const cJSON *run)
{
	const cJSON *s = cJSON_GetObjectItem(run, "status");
	return cJSON_IsString(s) ? s->valuestring : "starting";
}

/* One progress line (plain) or a bar (terminal) on stderr. */
static void show_progress(const cJSON *run, bool tty, char *last, size_t size)
{
	int total = count_tasks(run, NULL), done = count_tasks(run, "done");
	int failed = count_tasks(run, "failed"), queued = count_tasks(run, "queued");
	int reassigned = cJSON_GetArraySize(cJSON_GetObjectItem(run, "failures"));
	const char *st = run_status(run);
	char line[256];
	char ids[160];
	int paused = wf_awaiting_approval(run, ids, sizeof(ids));
	/* Which tasks wait for the operator (their LLM budget is spent). */
	snprintf(line, sizeof(line), "%s: %d/%d tasks done, %d failed, %d queued, "
		 "%d reassignments/failures%s%s", st, done, total, failed, queued, reassigned,
		 paused ? ", awaiting approval: " : "", paused ? ids : "");
	if (!strcmp(line, last))
		return;
	util_strlcpy(last, line, size);
	if (tty) {
		int width = 30, fill = total ? (done + failed) * width / total : 0;
		if (!strcmp(st, "done"))
			fill = width;
		fprintf(stderr, "\r[%.*s%.*s] %-70s", fill,
			"##############################", width - fill,
			"..............................", line);
		if (!strcmp(st, "done"))
			fputc('\n', stderr);
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

struct progress_ctx {
	bool tty;
	char last[256];
};

static void progress_cb(void *ctx, const cJSON *run)
{
	struct progress_ctx *pc = ctx;
	show_progress(run, pc->tty, pc->last, sizeof(pc->last));
}

static const struct cli_cmd run_weekly_entry;

static int run_weekly(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "run", &run_weekly_entry, 0 };
	struct run_opts ropts;
	run_opts_init(&ropts);
	const struct host_opts *ro = &ropts.host;
	struct wf_request *req = &ropts.req;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			run_opts_release(&ropts);
			return cli_fail(EXIT_USAGE, "run", "unexpected argument %s", val);
		}
		if (run_option(&ropts, "run", name, val) < 0) {
			run_opts_release(&ropts);
			return EXIT_USAGE;
		}
	}
	if (r < 0) {
		run_opts_release(&ropts);
		return EXIT_USAGE;
	}
	run_opts_finish(&ropts);
	struct agent_env env;
	if (host_setup(cli, &env, ro) < 0) {
		host_teardown(&env);
		run_opts_release(&ropts);
		return EXIT_FAIL;
	}
	if (env.llm) {
		/* Said in LLM mode only: the deterministic output is unchanged. */
		char *mode = llm_settings_describe(env.llm);
		fprintf(stderr, "madf: %s\n", mode);
		free(mode);
	}
	catch_signals(&env);
	struct bus *b;
	if (cli_bus(cli, &b) < 0) {
		host_teardown(&env);
		run_opts_release(&ropts);
		return EXIT_FAIL;
	}
	bool tty = isatty(2);
	struct progress_ctx pc = { tty, "" };
	char run_id[96];
	char *err = NULL;
	cJSON *run = NULL;
	int k = host_run_weekly(&env, b, req, run_id, sizeof(run_id), progress_cb, &pc, &run,
				&err);
	int rc = EXIT_FAIL;
	if (k == HOST_RUN_WAS_DONE)
		fprintf(stderr, "madf: run %s is done already (--fresh runs it again)\n", run_id);
	if (k == HOST_RUN_DONE || k == HOST_RUN_WAS_DONE) {
		const cJSON *md = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "report"), "md");
		printf("%s\n", cJSON_IsString(md) ? md->valuestring : "");
		rc = EXIT_OK;
		int failed = count_tasks(run, "failed");
		if (failed) {
			/* The report is written and names them; the exit status
			 * says the run did not do all it was asked. */
			struct sbuf ids;
			sbuf_init(&ids);
			const cJSON *t;
			cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
				const cJSON *s = cJSON_GetObjectItem(t, "status");
				const cJSON *id = cJSON_GetObjectItem(t, "task_id");
				if (cJSON_IsString(s) && !strcmp(s->valuestring, "failed") &&
				    cJSON_IsString(id))
					sbuf_addf(&ids, "%s%s", ids.len ? ", " : "", id->valuestring);
			}
			rc = cli_fail(EXIT_FAIL, "run", "run %s finished with %d of %d tasks failed: %s "
				      "(the report names them)", run_id, failed, count_tasks(run, NULL),
				      ids.data);
			sbuf_release(&ids);
		}
	} else if (k == HOST_RUN_STOPPED) {
		fprintf(stderr, "\nmadf: interrupted; run the same command again to resume %s\n", run_id);
		rc = 130;
	} else {
		cli_fail(EXIT_FAIL, "run", "%s", err ? err : "the run failed");
	}
	free(err);
	cJSON_Delete(run);
	host_teardown(&env);
	run_opts_release(&ropts);
	return rc;
}

static int run_agent(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "agent", &cmd_agent_entry, 0 };
	struct host_opts ro = { 0 };
	const char *who = NULL, *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (who)
				return cli_fail(EXIT_USAGE, "agent", "one NAME only");
			who = val;
			continue;
		}
		if (host_option(&ro, "agent", name, val) < 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	const struct agent_role *role = who ? agent_role_find(who) : NULL;
	if (!role) {
		struct sbuf names;
		sbuf_init(&names);
		for (size_t i = 0; i < agent_nroles; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "", agent_roles[i]->name);
		cli_fail(EXIT_USAGE, "agent", "%s%s%s: one of %s", who ? "unknown agent \"" : "NAME is required",
			 who ? who : "", who ? "\"" : "", names.data);
		sbuf_release(&names);
		return EXIT_USAGE;
	}
	struct agent_env env;
	if (host_setup(cli, &env, &ro) < 0) {
		host_teardown(&env);
		return EXIT_FAIL;
	}
	catch_signals(&env);
	struct agent *a;
	char *err = NULL;
	int rc = EXIT_OK;
	if (agent_open(role, &env, &a, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "agent", "%s", err);
		free(err);
	} else {
		char *mode = llm_settings_describe(env.llm);
		fprintf(stderr, "madf: %s running (pid %d) in %s; SIGTERM or Ctrl-C stops it\n",
			a->name, (int)getpid(), mode);
		free(mode);
		agent_run(a);
		if (a->crashed)
			_exit(137); /* an injected crash: die like one */
		agent_free(&a);
	}
	host_teardown(&env);
	return rc;
}

static const struct cli_cmd run_weekly_entry = {
	.name = "weekly",
	.opts = run_weekly_options,
	.summary = "run the weekly Asia/G10 FX research workflow with embedded agents (LLM mode "
		   "when a model and key are configured; MADF_LLM=off for the deterministic "
		   "agents)",
	.run = run_weekly,
};

static const struct cli_cmd *const run_subs[] = { &run_weekly_entry, NULL };

const struct cli_cmd cmd_run_entry = {
	.name = "run",
	.summary = "run a workflow with embedded agents: weekly",
	.subs = run_subs,
};

const struct cli_cmd cmd_agent_entry = {
	.name = "agent",
	.args = "NAME",
	.opts = host_options,
	.summary = "run one agent as its own process",
	.run = run_agent,
};
