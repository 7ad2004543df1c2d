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
#include "tui/cli.h"
#include "tui/host.h"
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

static int split_pairs(const char *list, struct wf_request *r)
{
	char *copy = xstrdup(list), *save = NULL;
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		while (*p == ' ')
			p++;
		char b[4], q[4];
		char *err = NULL;
		if (market_pair_parse(p, b, q, &err) < 0) {
			cli_fail(EXIT_USAGE, "run", "--pairs: %s", err);
			free(err);
			free(copy);
			return -1;
		}
		r->pairs = xrealloc(r->pairs, (r->npairs + 1) * sizeof(*r->pairs));
		r->pairs[r->npairs++] = xasprintf("%s/%s", b, q);
	}
	free(copy);
	if (!r->npairs) {
		cli_fail(EXIT_USAGE, "run", "--pairs is empty");
		return -1;
	}
	return 0;
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

static void free_request(struct wf_request *r)
{
	for (size_t i = 0; i < r->npairs; i++)
		free(r->pairs[i]);
	free(r->pairs);
}

static int run_weekly(struct cli *cli, int argc, char **argv)
{
	static const char *const wv[] = { "--as-of", "--pairs", "--market", "--news",
					  "--report-dir", "--inject-fault", "--task-timeout", NULL };
	static const char *const fl[] = { "--fresh", NULL };
	struct cli_opts o = { argc, argv, 2, "run", wv, fl, 0 };
	struct host_opts ro = { 0 };
	struct wf_request req = { .as_of_ns = util_now_ns() };
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			free_request(&req);
			return cli_fail(EXIT_USAGE, "run", "unexpected argument %s", val);
		}
		int k = host_option(&ro, "run", name, val);
		if (k < 0) {
			free_request(&req);
			return EXIT_USAGE;
		}
		if (k > 0)
			continue;
		if (!strcmp(name, "--fresh")) {
			req.fresh = true;
		} else if (!strcmp(name, "--as-of")) {
			if (host_parse_as_of(val, &req.as_of_ns) < 0) {
				free_request(&req);
				return cli_fail(EXIT_USAGE, "run", "invalid --as-of \"%s\": a date "
						"YYYY-MM-DD or an ISO 8601 time with a zone", val);
			}
		} else if (!strcmp(name, "--pairs") && split_pairs(val, &req) < 0) {
			free_request(&req);
			return EXIT_USAGE;
		}
	}
	if (r < 0) {
		free_request(&req);
		return EXIT_USAGE;
	}
	if (!req.npairs)
		for (size_t i = 0; i < wf_default_npairs; i++) {
			req.pairs = xrealloc(req.pairs, (req.npairs + 1) * sizeof(*req.pairs));
			req.pairs[req.npairs++] = xstrdup(wf_default_pairs[i]);
		}
	struct agent_env env;
	if (host_setup(cli, &env, &ro) < 0) {
		host_teardown(&env);
		free_request(&req);
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
		free_request(&req);
		return EXIT_FAIL;
	}
	bool tty = isatty(2);
	struct progress_ctx pc = { tty, "" };
	char run_id[96];
	char *err = NULL;
	cJSON *run = NULL;
	int k = host_run_weekly(&env, b, &req, run_id, sizeof(run_id), progress_cb, &pc, &run,
				&err);
	int rc = EXIT_FAIL;
	if (k == HOST_RUN_WAS_DONE)
		fprintf(stderr, "madf: run %s is done already (--fresh runs it again)\n", run_id);
	if (k == HOST_RUN_DONE || k == HOST_RUN_WAS_DONE) {
		const cJSON *md = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "report"), "md");
		printf("%s\n", cJSON_IsString(md) ? md->valuestring : "");
		rc = EXIT_OK;
	} else if (k == HOST_RUN_STOPPED) {
		fprintf(stderr, "\nmadf: interrupted; run the same command again to resume %s\n", run_id);
		rc = 130;
	} else {
		cli_fail(EXIT_FAIL, "run", "%s", err ? err : "the run failed");
	}
	free(err);
	cJSON_Delete(run);
	host_teardown(&env);
	free_request(&req);
	return rc;
}

static int run_agent(struct cli *cli, int argc, char **argv)
{
	static const char *const wv[] = { "--market", "--news", "--report-dir", "--inject-fault",
					  "--task-timeout", NULL };
	struct cli_opts o = { argc, argv, 1, "agent", wv, NULL, 0 };
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

int cmd_run(struct cli *cli, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "weekly"))
		return cli_fail(EXIT_USAGE, "run", "what to run: weekly");
	return run_weekly(cli, argc, argv);
}

int cmd_agent(struct cli *cli, int argc, char **argv)
{
	return run_agent(cli, argc, argv);
}
