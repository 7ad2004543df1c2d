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

/* "1987-03-27" (noon UTC that day) or a full ISO 8601 time. */
static int parse_as_of(const char *s, int64_t *ns)
{
	int32_t day;
	if (strlen(s) == 10 && market_day_parse(s, 10, &day) == 0) {
		*ns = ((int64_t)day * 86400 + 43200) * 1000000000LL;
		return 0;
	}
	return msg_parse_time(s, ns);
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
	int failed = count_tasks(run, "failed");
	int reassigned = cJSON_GetArraySize(cJSON_GetObjectItem(run, "failures"));
	const char *st = run_status(run);
	char line[256];
	int paused = count_tasks(run, "awaiting_approval");
	snprintf(line, sizeof(line), "%s: %d/%d tasks done, %d failed, %d reassignments/failures%s",
		 st, done, total, failed, reassigned, paused ? ", awaiting approval: " : "");
	if (paused) {
		/* Which tasks wait for the operator (their LLM budget is spent). */
		const cJSON *t;
		bool first = true;
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
			const cJSON *s = cJSON_GetObjectItem(t, "status");
			const cJSON *id = cJSON_GetObjectItem(t, "task_id");
			if (!cJSON_IsString(s) || strcmp(s->valuestring, "awaiting_approval") ||
			    !cJSON_IsString(id))
				continue;
			size_t n = strlen(line);
			snprintf(line + n, sizeof(line) - n, "%s%s", first ? "" : " ", id->valuestring);
			first = false;
		}
	}
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
			if (parse_as_of(val, &req.as_of_ns) < 0) {
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
	req.market_source = env.market_source;
	req.news_source = env.news_source;
	char run_id[96];
	wf_run_id(&req, run_id, sizeof(run_id));
	cJSON *prev = wf_load_run(cli->data_dir, run_id);
	if (prev && req.fresh) {
		size_t n = strlen(run_id);
		snprintf(run_id + n, sizeof(run_id) - n, "-%llx",
			 (unsigned long long)(util_now_ns() / 1000000) & 0xffffffffULL);
		cJSON_Delete(prev);
		prev = NULL;
	}
	if (prev && !strcmp(run_status(prev), "done")) {
		const cJSON *md = cJSON_GetObjectItem(cJSON_GetObjectItem(prev, "report"), "md");
		fprintf(stderr, "madf: run %s is done already (--fresh runs it again)\n", run_id);
		printf("%s\n", cJSON_IsString(md) ? md->valuestring : "");
		cJSON_Delete(prev);
		host_teardown(&env);
		free_request(&req);
		return EXIT_OK;
	}
	if (env.llm) {
		/* Said in LLM mode only: the deterministic output is unchanged. */
		char *mode = llm_settings_describe(env.llm);
		fprintf(stderr, "madf: %s\n", mode);
		free(mode);
	}
	if (prev)
		fprintf(stderr, "madf: resuming run %s\n", run_id);
	cJSON_Delete(prev);
	catch_signals(&env);
	struct agent *agents[16] = { 0 };
	if (host_start_agents(&env, agents) < 0) {
		host_teardown(&env);
		free_request(&req);
		return EXIT_FAIL;
	}
	/* The operator's request, on the bus like any other message. */
	struct bus *b;
	int rc = EXIT_FAIL;
	char *err = NULL;
	if (cli_bus(cli, &b) == 0) {
		struct msg *m = msg_new("operator", "product_manager", MSG_TASK_ASSIGNMENT,
					wf_trigger_content(&req, run_id));
		m->priority = PRIO_HIGH;
		m->correlation_id = xstrdup(run_id);
		if (bus_send(b, m, &err) < 0) {
			cli_fail(EXIT_FAIL, "run", "%s", err);
			free(err);
			atomic_store(&env.stop, 1);
		}
		msg_free(&m);
	}
	bool tty = isatty(2);
	char last[256] = "";
	int64_t limit = util_mono_ns() + (env.task_timeout_s * 12 + 60) * 1000000000LL;
	cJSON *run = NULL;
	while (!atomic_load(&env.stop)) {
		struct timespec ts = { 0, 50 * 1000000 };
		nanosleep(&ts, NULL);
		cJSON_Delete(run);
		run = wf_load_run(cli->data_dir, run_id);
		if (!run)
			continue;
		show_progress(run, tty, last, sizeof(last));
		if (!strcmp(run_status(run), "done"))
			break;
		if (count_tasks(run, "awaiting_approval") > 0)
			/* Waiting for the operator is not running late. */
			limit = util_mono_ns() + (env.task_timeout_s * 12 + 60) * 1000000000LL;
		if (util_mono_ns() > limit) {
			cli_fail(EXIT_FAIL, "run", "run %s did not finish in time (status %s); "
				 "run the same command again to resume", run_id, run_status(run));
			break;
		}
	}
	bool interrupted = atomic_load(&env.stop) && !(run && !strcmp(run_status(run), "done"));
	host_stop_agents(&env, agents);
	if (run && !strcmp(run_status(run), "done")) {
		const cJSON *md = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "report"), "md");
		printf("%s\n", cJSON_IsString(md) ? md->valuestring : "");
		rc = EXIT_OK;
	} else if (interrupted) {
		fprintf(stderr, "\nmadf: interrupted; run the same command again to resume %s\n", run_id);
		rc = 130;
	}
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
