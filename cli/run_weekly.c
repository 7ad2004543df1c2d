/* The weekly Asia/G10 FX workflow's definition (cli/workflows.h): `madf
 * run weekly` (its options, shared with the console), the hosting of its
 * agents until the run is done, and how its runs, tasks and reports are
 * read (the product_manager's state, agents/workflow.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/data_tools.h"
#include "agents/llm_agent.h"
#include "agents/market.h"
#include "agents/pm_notify.h"
#include "agents/report.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/host.h"
#include "cli/workflows.h"
#include "core/banned.h"

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

/* run weekly's own option beside those it shares with the console. */
static const struct cli_opt run_weekly_cmd_options[] = {
	{ .group = run_weekly_options },
	{ .name = "--attach",
	  .help = "start no agents: they run elsewhere (madf agent NAME, on any host of the "
		  "bus); follow the run and write its report here" },
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

static const char *run_status(const cJSON *run)
{
	return jstr_or(run, "status", "starting");
}

/* One progress line (plain) or a bar (terminal) on stderr: the run's, or
 * (--attach) the line the product_manager sent. */
static void show_progress(const cJSON *run, bool tty, char *last, size_t size)
{
	int total = wf_count_tasks(run, NULL);
	int finished = wf_count_tasks(run, "done") + wf_count_tasks(run, "failed");
	const char *st = run_status(run);
	char line[256];
	const cJSON *given = cJSON_GetObjectItem(run, "progress_line");
	if (cJSON_IsString(given)) {
		util_strlcpy(line, given->valuestring, sizeof(line));
		total = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(run, "items_total"));
		finished = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(run, "items_done"));
	} else {
		wf_progress_line(run, line, sizeof(line));
	}
	if (!strcmp(line, last))
		return;
	util_strlcpy(last, line, size);
	if (tty) {
		char *clean = *line ? util_sanitize(line, strlen(line), false) : xstrdup("");
		int width = 30, fill = total > 0 ? finished * width / total : 0;
		if (fill < 0 || fill > width || !strcmp(st, "done"))
			fill = width;
		fprintf(stderr, "\r[%.*s%.*s] %-70s", fill,
			"##############################", width - fill,
			"..............................", clean);
		if (!strcmp(st, "done"))
			fputc('\n', stderr);
		free(clean);
	} else {
		char *clean = *line ? util_sanitize(line, strlen(line), false) : xstrdup("");
		fprintf(stderr, "%s\n", clean);
		free(clean);
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

static int run_weekly(struct cli *cli, int argc, char **argv)
{
	bool attach = false;
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
		if (!strcmp(name, "--attach")) {
			attach = true;
			continue;
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
	if (attach && ropts.host.nfaults) {
		run_opts_release(&ropts);
		return cli_fail(EXIT_USAGE, "run", "--inject-fault needs the agents here; with "
				"--attach they run elsewhere");
	}
	ropts.host.no_mcp = attach; /* no agent here uses their tools */
	struct agent_env env;
	if (host_setup(cli, &env, ro) < 0) {
		host_teardown(&env);
		run_opts_release(&ropts);
		return EXIT_FAIL;
	}
	if (env.llm) {
		/* Said in LLM mode only: the deterministic output is unchanged. */
		char *mode = llm_agent_settings_describe(env.llm);
		fprintf(stderr, "madf: %s\n", mode);
		free(mode);
	}
	host_catch_signals(&env);
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
	int k = attach ? host_attach_weekly(&env, b, req, run_id, sizeof(run_id), progress_cb,
					    &pc, &run, &err)
		       : host_run_weekly(&env, b, req, run_id, sizeof(run_id), progress_cb, &pc,
					 &run, &err);
	int rc = EXIT_FAIL;
	if (k == HOST_RUN_WAS_DONE)
		fprintf(stderr, "madf: run %s is done already (--fresh runs it again)\n", run_id);
	if (k == HOST_RUN_DONE || k == HOST_RUN_WAS_DONE) {
		const cJSON *md = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "report"), "md");
		printf("%s\n", cJSON_IsString(md) ? md->valuestring : "");
		rc = EXIT_OK;
		int failed = wf_count_tasks(run, "failed");
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
				      "(the report names them)", run_id, failed, wf_count_tasks(run, NULL),
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

static bool run_is_done(const cJSON *run)
{
	const cJSON *s = cJSON_GetObjectItem(run, "status");
	return cJSON_IsString(s) && !strcmp(s->valuestring, "done");
}

int host_run_weekly(struct agent_env *env, struct bus *b, struct wf_request *req,
		    char *run_id, size_t size,
		    void (*progress)(void *ctx, const cJSON *run), void *ctx,
		    cJSON **run_out, char **err)
{
	*run_out = NULL;
	req->market_source = env->market_source;
	req->news_source = env->news_source;
	wf_run_id(req, run_id, size);
	cJSON *prev = wf_load_run(env->data_dir, run_id);
	if (prev && req->fresh) {
		size_t n = strlen(run_id);
		snprintf(run_id + n, size - n, "-%llx",
			 (unsigned long long)(util_now_ns() / 1000000) & 0xffffffffULL);
		cJSON_Delete(prev);
		prev = NULL;
	}
	if (prev && run_is_done(prev)) {
		*run_out = prev;
		return HOST_RUN_WAS_DONE;
	}
	if (prev)
		fprintf(stderr, "madf: resuming run %s\n", run_id);
	cJSON_Delete(prev);
	struct agent *agents[16] = { 0 };
	if (host_start_agents(env, agents) < 0)
		return err_set(err, "cannot start the agents"), HOST_RUN_FAILED;
	/* The operator's request, on the bus like any other message. */
	struct msg *m = msg_new("operator", "product_manager", MSG_TASK_ASSIGNMENT,
				wf_trigger_content(req, run_id));
	m->priority = PRIO_HIGH;
	m->correlation_id = xstrdup(run_id);
	int rc = HOST_RUN_FAILED;
	if (bus_send(b, m, err) < 0)
		atomic_store(&env->stop, 1);
	msg_free(&m);
	int64_t limit = util_mono_ns() + (env->task_timeout_s * 12 + 60) * 1000000000LL;
	cJSON *run = NULL;
	while (!atomic_load(&env->stop)) {
		struct timespec ts = { 0, 50 * 1000000 };
		nanosleep(&ts, NULL);
		cJSON_Delete(run);
		run = wf_load_run(env->data_dir, run_id);
		if (!run)
			continue;
		if (progress)
			progress(ctx, run);
		if (run_is_done(run)) {
			rc = HOST_RUN_DONE;
			break;
		}
		if (wf_awaiting_approval(run, NULL, 0))
			/* Waiting for the operator is not running late. */
			limit = util_mono_ns() + (env->task_timeout_s * 12 + 60) * 1000000000LL;
		if (util_mono_ns() > limit) {
			const cJSON *st = cJSON_GetObjectItem(run, "status");
			err_set(err, "run %s did not finish in time (status %s); run the same "
				"request again to resume", run_id,
				cJSON_IsString(st) ? st->valuestring : "starting");
			break;
		}
	}
	if (rc != HOST_RUN_DONE && atomic_load(&env->stop) && !(err && *err))
		rc = HOST_RUN_STOPPED;
	host_stop_agents(env, agents);
	*run_out = run;
	return rc;
}

/* ---- the definition: runs, tasks and reports --------------------------- */

static const char *str_or(const cJSON *o, const char *k, const char *def)
{
	return jstr(o, k) ? jstr(o, k) : def;
}

/* The product_manager's runs (its state file), in the order they started:
 * taken out of the state, which is then deleted. */
static cJSON *weekly_runs(const char *data_dir, char **err)
{
	char *path = xasprintf("%s/state/product_manager-state.json", data_dir);
	struct stat sb;
	bool there = stat(path, &sb) == 0;
	free(path);
	char *e = NULL;
	cJSON *st = wf_load_state(data_dir, &e);
	if (!st) {
		if (there) {
			err_set(err, "%s", e ? e : "cannot read the product_manager's state");
			free(e);
			return NULL;
		}
		free(e);
		return cJSON_CreateArray();
	}
	cJSON *runs = cJSON_GetObjectItem(st, "runs"), *out = cJSON_CreateArray();
	while (runs && runs->child) {
		/* the earliest started first (a stable choice among equals) */
		cJSON *first = NULL, *r;
		cJSON_ArrayForEach(r, runs)
			if (!first || strcmp(str_or(r, "started_at", ""),
					     str_or(first, "started_at", "")) < 0)
				first = r;
		cJSON_DetachItemViaPointer(runs, first);
		if (cJSON_IsObject(first))
			cJSON_AddItemToArray(out, first);
		else
			cJSON_Delete(first);
	}
	cJSON_Delete(st);
	return out;
}

static bool llm_mode(const cJSON *run)
{
	const char *m = jstr(cJSON_GetObjectItem(run, "llm"), "mode");
	return m && !strcmp(m, "llm");
}

/* The research tasks, then in LLM mode the validation's review and the
 * narrative as stages (their LLM parts). */
static size_t weekly_tasks(const cJSON *run, struct workflow_task *out, size_t max)
{
	size_t n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		if (n < max)
			out[n] = (struct workflow_task){
				.id = str_or(t, "task_id", ""), .kind = str_or(t, "kind", ""),
				.subject = str_or(t, "pair", ""), .assignee = str_or(t, "assignee", ""),
				.status = str_or(t, "status", ""),
				/* unset: high, as the product_manager sends it */
				.priority = str_or(t, "priority", "high"),
				.attempts = (int)jnum(t, "attempts", 0), .progress = jnum(t, "progress", 0),
				.deadline_ns = (int64_t)jnum(t, "deadline_ns", 0),
				.done_by = str_or(t, "done_by", "") };
		n++;
	}
	if (!llm_mode(run))
		return n;
	const cJSON *v = cJSON_GetObjectItem(run, "validation");
	const char *vs = jstr(v, "status") && *jstr(v, "status") ? jstr(v, "status") : "waiting";
	if (n < max)
		out[n] = (struct workflow_task){ .id = "validation", .kind = "review", .subject = "all",
					   .assignee = "validator_agent", .status = vs, .priority = "-",
					   .attempts = jstr(v, "request_id") ? 1 : 0,
					   .progress = !strcmp(vs, "done") ? 100 : 0,
					   .deadline_ns = !strcmp(vs, "requested") ?
							  (int64_t)jnum(v, "deadline_ns", 0) : 0,
					   .done_by = "", .stage = true };
	n++;
	const cJSON *nv = cJSON_GetObjectItem(run, "narrative");
	const char *ns = jstr(nv, "status") && *jstr(nv, "status") ? jstr(nv, "status") : "waiting";
	if (n < max)
		out[n] = (struct workflow_task){ .id = "narrative", .kind = "summary", .subject = "all",
					   .assignee = "product_manager", .status = ns, .priority = "-",
					   .attempts = nv ? 1 : 0, .progress = !strcmp(ns, "done") ? 100 : 0,
					   .done_by = "", .stage = true };
	return n + 1;
}

static bool weekly_health(const cJSON *run, int64_t now_ns, char *buf, size_t size)
{
	return wf_run_health(run, now_ns, wf_stuck_after_s(), buf, size);
}

static const char *weekly_report(const cJSON *run)
{
	return jstr(cJSON_GetObjectItem(run, "report"), "md");
}

/* A source as the console names it: the file's name without its
 * directories ("csv:fred-daily-1971-2017.csv"), "simulated" for sim. */
static void weekly_source_label(const char *src, char *buf, size_t size)
{
	if (!src || !*src || !strcmp(src, "sim")) {
		snprintf(buf, size, "simulated");
		return;
	}
	const char *colon = strchr(src, ':');
	const char *slash = strrchr(src, '/');
	if (colon && slash && !data_source_is_live(src))
		snprintf(buf, size, "%.*s:%s", (int)(colon - src), src, slash + 1);
	else
		snprintf(buf, size, "%s", src);
}

/* The console's run (workflow_def.trigger): the trigger of req (now and
 * the default pairs without --as-of and --pairs), a new run beside a done
 * one with --fresh, and which sources the agents really use. */
static int weekly_trigger(const char *data_dir, struct bus *b, const struct wf_request *req,
			  char *run_id, size_t id_size, char *msg, size_t msg_size, char **msg_id,
			  char **err)
{
	*msg_id = NULL;
	wf_run_id(req, run_id, id_size);
	cJSON *prev = wf_load_run(data_dir, run_id);
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(prev, "status"));
	const char *verb = prev ? "resumed" : "started";
	if (prev && req->fresh) { /* a new run beside the old one, as run weekly --fresh */
		size_t n = strlen(run_id);
		snprintf(run_id + n, id_size - n, "-%llx",
			 (unsigned long long)(util_now_ns() / 1000000) & 0xffffffffULL);
		verb = "started";
	} else if (st && !strcmp(st, "done")) {
		snprintf(msg, msg_size, "the %s run %s is done already (--fresh runs it again; "
			 "5 shows its report)", workflow_weekly.name, run_id);
		cJSON_Delete(prev);
		return 0;
	}
	cJSON_Delete(prev);
	struct msg *m = msg_new("operator", "product_manager", MSG_TASK_ASSIGNMENT,
				wf_trigger_content(req, run_id));
	if (!m) {
		*err = xasprintf("the trigger of run %s could not be made", run_id);
		return -1;
	}
	m->priority = PRIO_HIGH;
	m->correlation_id = xstrdup(run_id);
	if (bus_send(b, m, err) < 0) {
		msg_free(&m);
		return -1;
	}
	char ms[256], ns[256], day[40];
	weekly_source_label(req->market_source, ms, sizeof(ms));
	weekly_source_label(req->news_source, ns, sizeof(ns));
	util_iso8601(req->as_of_ns, day, sizeof(day));
	day[10] = 0;
	struct sbuf pairs;
	sbuf_init(&pairs);
	for (size_t i = 0; i < req->npairs; i++)
		sbuf_addf(&pairs, "%s%s", i ? ", " : "", req->pairs[i]);
	snprintf(msg, msg_size, "%s the %s run %s as of %s for %s (market %s, news %s)", verb,
		 workflow_weekly.name, run_id, day, pairs.data ? pairs.data : "", ms, ns);
	sbuf_release(&pairs);
	*msg_id = xstrdup(m->id);
	msg_free(&m);
	return 1;
}

static const char *const weekly_kinds[] = { "market", "news", NULL };
static const char *const weekly_workers[] = { "research_agent_1", "research_agent_2", NULL };

static const char *const weekly_roles[] = {
	"product_manager", "research_agent_1", "research_agent_2", "validator_agent",
	"report_writer", NULL
};

const struct cli_cmd run_weekly_entry = {
	.name = "weekly",
	.opts = run_weekly_cmd_options,
	.summary = "run the weekly Asia/G10 FX research workflow with embedded agents (LLM mode "
		   "when a model and key are configured; MADF_LLM=off for the deterministic "
		   "agents); --attach: the agents run elsewhere and the report is written here",
	.run = run_weekly,
};

const struct workflow_def workflow_weekly = {
	.name = "weekly",
	.summary = "the weekly Asia/G10 FX research workflow, with embedded agents (LLM mode "
		   "when a model and key are configured; MADF_LLM=off for the deterministic agents)",
	.roles = weekly_roles,
	.controller = "product_manager",
	.subject = "pair",
	.entry = &run_weekly_entry,
	.runs = weekly_runs,
	.run_load = wf_load_run,
	.tasks = weekly_tasks,
	.health = weekly_health,
	.report = weekly_report,
	.drafts_dir = "reports/drafts",
	.reports_dir = "reports/weekly",
	.render = report_markdown,
	.render_json = report_json,
	.basename = report_basename,
	.task_kinds = weekly_kinds,
	.workers = weekly_workers,
	.trigger = weekly_trigger,
};
