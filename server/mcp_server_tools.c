/* madf mcp: the tools the MCP server offers (data tools, the bus, the
 * weekly workflow on a worker thread, its report). The protocol, the tool
 * table and the loop are in server/mcp_server.c. */
#include "server/mcp_server_priv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/data_tools.h"
#include "agents/market.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/host.h"
#include "core/banned.h"

#define MCP_NEWS_LIMIT 20  /* news_search's default limit */

/* ---- the tools -------------------------------------------------------------- */

/* Calls a data tool through the registry, as the agents do. */
static cJSON *data_tool(struct mcp *s, const char *tool, const cJSON *args, cJSON **res)
{
	char *err = NULL;
	if (data_call(&s->caller, tool, cJSON_Duplicate(args, 1), res, &err) < 0) {
		cJSON *r = cli_mcp_tool_error("%s", err ? err : "the data tool failed");
		free(err);
		return r;
	}
	return NULL;
}

cJSON *cli_mcp_call_fx_rates(struct mcp *s, const cJSON *id, const cJSON *params,
			     const cJSON *args)
{
	(void)id;
	(void)params;
	cJSON *res = NULL, *e = data_tool(s, "fx_rates", args, &res);
	if (e)
		return e;
	const cJSON *pts = cJSON_GetObjectItem(res, "points");
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "%s daily closes from %s%s: %d between %s and %s\n", jstr(res, "pair"),
		  jstr(res, "source") ? jstr(res, "source") : "-",
		  cJSON_IsTrue(cJSON_GetObjectItem(res, "simulated")) ? " (simulated)" : "",
		  cJSON_GetArraySize(pts), jstr(args, "start"), jstr(args, "end"));
	const cJSON *pt;
	cJSON_ArrayForEach(pt, pts) {
		const cJSON *d = cJSON_GetArrayItem(pt, 0), *c = cJSON_GetArrayItem(pt, 1);
		if (cJSON_IsString(d) && cJSON_IsNumber(c))
			sbuf_addf(&b, "%s %.4f\n", d->valuestring, c->valuedouble);
	}
	cJSON *r = cli_mcp_tool_result(b.data, res, false);
	sbuf_release(&b);
	return r;
}

static void story_line(struct sbuf *b, const cJSON *st, bool body)
{
	sbuf_addf(b, "[%s] %s  %s", jstr(st, "id") ? jstr(st, "id") : "-",
		  jstr(st, "published_at") ? jstr(st, "published_at") : "-",
		  jstr(st, "title") ? jstr(st, "title") : "");
	const cJSON *t;
	bool first = true;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(st, "topics"))
		if (cJSON_IsString(t)) {
			sbuf_addf(b, "%s%s", first ? "  (topics: " : ", ", t->valuestring);
			first = false;
		}
	sbuf_addstr(b, first ? "\n" : ")\n");
	if (body && jstr(st, "body"))
		sbuf_addf(b, "\n%s\n", jstr(st, "body"));
}

cJSON *cli_mcp_call_news_search(struct mcp *s, const cJSON *id, const cJSON *params,
				const cJSON *args)
{
	(void)id;
	(void)params;
	const cJSON *lim = cJSON_GetObjectItem(args, "limit");
	if (lim && (!cJSON_IsNumber(lim) || lim->valuedouble < 1 || lim->valuedouble > 1000 ||
		    lim->valuedouble != (double)lim->valueint))
		return cli_mcp_tool_error("limit: a whole number from 1 to 1000");
	const cJSON *topics = cJSON_GetObjectItem(args, "topics"), *t;
	if (topics && !cJSON_IsArray(topics))
		return cli_mcp_tool_error("topics: an array of strings, like [\"money-fx\"]");
	cJSON_ArrayForEach(t, topics)
		if (!cJSON_IsString(t))
			return cli_mcp_tool_error("topics: an array of strings, like [\"money-fx\"]");
	cJSON *a = cJSON_Duplicate(args, 1);
	if (!lim)
		cJSON_AddNumberToObject(a, "limit", MCP_NEWS_LIMIT);
	cJSON *res = NULL, *e = data_tool(s, "news_search", a, &res);
	cJSON_Delete(a);
	if (e)
		return e;
	const cJSON *stories = cJSON_GetObjectItem(res, "stories"), *st;
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "%d stories published %s..%s in %s%s; %d shown\n",
		  (int)jnum(res, "total", 0), jstr(args, "start"), jstr(args, "end"),
		  jstr(res, "source") ? jstr(res, "source") : "-",
		  cJSON_IsTrue(cJSON_GetObjectItem(res, "simulated")) ? " (simulated)" : "",
		  cJSON_GetArraySize(stories));
	cJSON_ArrayForEach(st, stories)
		story_line(&b, st, false);
	cJSON *r = cli_mcp_tool_result(b.data, res, false);
	sbuf_release(&b);
	return r;
}

cJSON *cli_mcp_call_news_get(struct mcp *s, const cJSON *id, const cJSON *params,
			     const cJSON *args)
{
	(void)id;
	(void)params;
	cJSON *res = NULL, *e = data_tool(s, "news_get", args, &res);
	if (e)
		return e;
	struct sbuf b;
	sbuf_init(&b);
	story_line(&b, res, true);
	cJSON *r = cli_mcp_tool_result(b.data, res, false);
	sbuf_release(&b);
	return r;
}

cJSON *cli_mcp_call_queue_status(struct mcp *s, const cJSON *id, const cJSON *params,
				 const cJSON *args)
{
	(void)id;
	(void)params;
	(void)args;
	struct bus *b;
	struct bus_stats st;
	char *err = NULL;
	if (cli_bus(s->cli, &b) < 0)
		return cli_mcp_tool_error("cannot open the message bus under %s", s->cli->data_dir);
	if (bus_stats(b, &st, &err) < 0) {
		cJSON *r = cli_mcp_tool_error("%s", err);
		free(err);
		return r;
	}
	cJSON *j = cli_status_json(&st, util_now_ns());
	struct sbuf t;
	sbuf_init(&t);
	for (size_t i = 0; i < st.nagents; i++)
		sbuf_addf(&t, "%s: %zu waiting, %zu processing, %zu retrying\n", st.agents[i].agent,
			  st.agents[i].depth, st.agents[i].processing, st.agents[i].retry);
	sbuf_addf(&t, "total: %zu processing, %zu retrying, %zu dead letters\n", st.processing,
		  st.retry, st.dead_letter);
	bus_stats_release(&st);
	cJSON *r = cli_mcp_tool_result(t.data, j, false);
	sbuf_release(&t);
	return r;
}

static int string_list(const cJSON *v, const char *name, char **err)
{
	const cJSON *x;
	if (!cJSON_IsArray(v))
		return err_set(err, "%s: an array of strings", name);
	cJSON_ArrayForEach(x, v)
		if (!cJSON_IsString(x))
			return err_set(err, "%s: an array of strings", name);
	return 0;
}

/* send_task: a task_assignment built from defaults, then "content", then
 * the named fields; validated before anything is written. */
cJSON *cli_mcp_call_send_task(struct mcp *s, const cJSON *id, const cJSON *params,
			      const cJSON *args)
{
	(void)id;
	(void)params;
	static const char *const str_fields[] = { "task_type", "focus_area", "timeframe",
						   "deadline", "output_format",
						   "special_instructions" };
	static const char *const list_fields[] = { "target_pairs", "data_sources" };
	const char *to = jstr(args, "to");
	if (!to)
		return cli_mcp_tool_error("to: required, the agent whose inbox gets the task "
					  "(e.g. product_manager, research_agent_1)");
	const char *to_c = msg_agent_canonical(to);
	if (strcmp(to_c, "broadcast") && !util_valid_agent_name(to_c))
		return cli_mcp_tool_error("to: invalid agent name \"%s\": must match "
					  "[a-z0-9][a-z0-9_-]{0,63} or be broadcast", to);
	const char *from = jstr(args, "from") ? jstr(args, "from") : "operator";
	if (cJSON_GetObjectItem(args, "from") && !jstr(args, "from"))
		return cli_mcp_tool_error("from: a string");
	const char *from_c = msg_agent_canonical(from);
	if (!util_valid_agent_name(from_c))
		return cli_mcp_tool_error("from: invalid agent name \"%s\": must match "
					  "[a-z0-9][a-z0-9_-]{0,63}", from);
	const cJSON *content = cJSON_GetObjectItem(args, "content");
	if (content && !cJSON_IsObject(content))
		return cli_mcp_tool_error("content: an object (the task_assignment's content)");
	int prio = PRIO_NORMAL;
	const cJSON *p = cJSON_GetObjectItem(args, "priority");
	if (p) {
		if (cJSON_IsString(p))
			prio = msg_priority_from_name(p->valuestring);
		else if (cJSON_IsNumber(p) && p->valuedouble >= 1 && p->valuedouble <= 5 &&
			 p->valuedouble == (double)p->valueint)
			prio = p->valueint == 1 ? PRIO_URGENT : p->valueint == 2 ? PRIO_HIGH :
			       p->valueint == 3 ? PRIO_NORMAL : PRIO_LOW;
		else
			prio = -1;
		if (prio < 0)
			return cli_mcp_tool_error("priority: one of urgent, high, normal, low, or 1..5");
	}
	const cJSON *tmo = cJSON_GetObjectItem(args, "timeout_s");
	if (tmo && (!cJSON_IsNumber(tmo) || tmo->valuedouble < 1 ||
		    tmo->valuedouble > 365.0 * 86400 || tmo->valuedouble != (double)tmo->valueint))
		return cli_mcp_tool_error("timeout_s: whole seconds from 1 to 31536000");
	const cJSON *corr = cJSON_GetObjectItem(args, "correlation_id");
	if (corr && !cJSON_IsString(corr))
		return cli_mcp_tool_error("correlation_id: a string");

	cJSON *c = cJSON_CreateObject();
	char deadline[40];
	util_iso8601(util_now_ns() + 86400LL * 1000000000, deadline, sizeof(deadline));
	cJSON_AddStringToObject(c, "task_type", "research");
	cJSON_AddStringToObject(c, "focus_area", "");
	cJSON_AddArrayToObject(c, "target_pairs");
	cJSON_AddStringToObject(c, "timeframe", "");
	cJSON_AddArrayToObject(c, "data_sources");
	cJSON_AddStringToObject(c, "deadline", deadline);
	cJSON_AddStringToObject(c, "output_format", "structured_json");
	const cJSON *f;
	cJSON_ArrayForEach(f, content) {
		cJSON_DeleteItemFromObjectCaseSensitive(c, f->string);
		cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, 1));
	}
	char *err = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(str_fields); i++) {
		const cJSON *v = cJSON_GetObjectItem(args, str_fields[i]);
		if (!v)
			continue;
		if (!cJSON_IsString(v)) {
			err_set(&err, "%s: a string", str_fields[i]);
			break;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(c, str_fields[i]);
		cJSON_AddStringToObject(c, str_fields[i], v->valuestring);
	}
	for (size_t i = 0; !err && i < ARRAY_SIZE(list_fields); i++) {
		const cJSON *v = cJSON_GetObjectItem(args, list_fields[i]);
		if (!v || string_list(v, list_fields[i], &err) < 0)
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(c, list_fields[i]);
		cJSON_AddItemToObject(c, list_fields[i], cJSON_Duplicate(v, 1));
	}
	if (err) {
		cJSON_Delete(c);
		cJSON *r = cli_mcp_tool_error("%s", err);
		free(err);
		return r;
	}
	struct msg *m = msg_new(from_c, to_c, MSG_TASK_ASSIGNMENT, c);
	if (!m)
		return cli_mcp_tool_error("cannot make a message from %s to %s", from, to);
	m->priority = (enum msg_priority)prio;
	if (tmo)
		m->timeout_s = tmo->valueint;
	if (corr)
		m->correlation_id = xstrdup(corr->valuestring);
	struct msg_errors errs = { 0 };
	cJSON *r = NULL;
	struct bus *b;
	if (msg_validate(m, &errs) < 0) {
		char *all = msg_errors_join(&errs);
		r = cli_mcp_tool_error("the task is not a valid task_assignment, nothing was sent: %s", all);
		free(all);
	} else if (cli_bus(s->cli, &b) < 0) {
		r = cli_mcp_tool_error("cannot open the message bus under %s", s->cli->data_dir);
	} else if (bus_send(b, m, &err) < 0) {
		r = cli_mcp_tool_error("%s", err);
		free(err);
	} else {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "message_id", m->id);
		cJSON_AddStringToObject(j, "to", m->to);
		cJSON_AddStringToObject(j, "from", m->from);
		cJSON_AddStringToObject(j, "type", msg_type_name(m->type));
		cJSON_AddStringToObject(j, "priority", msg_priority_name(m->priority));
		char *t = xasprintf("sent task_assignment %s to %s's inbox", m->id, m->to);
		r = cli_mcp_tool_result(t, j, false);
		free(t);
	}
	msg_errors_release(&errs);
	msg_free(&m);
	return r;
}

/* ---- run_weekly: a worker thread ----------------------------------------------------- */

static int count_tasks(const cJSON *run, const char *status)
{
	int n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const char *st = jstr(t, "status");
		if (!status || (st && !strcmp(st, status)))
			n++;
	}
	return n;
}

static void job_progress(void *ctx, const cJSON *run)
{
	struct mcp_job *j = ctx;
	char line[256];
	snprintf(line, sizeof(line), "%s: %d/%d tasks done, %d failed",
		 jstr(run, "status") ? jstr(run, "status") : "starting", count_tasks(run, "done"),
		 count_tasks(run, NULL), count_tasks(run, "failed"));
	if (!j->token || !strcmp(line, j->last))
		return;
	util_strlcpy(j->last, line, sizeof(j->last));
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddStringToObject(m, "method", "notifications/progress");
	cJSON *p = cJSON_AddObjectToObject(m, "params");
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(j->token, 1));
	cJSON_AddNumberToObject(p, "progress", ++j->progress);
	cJSON_AddStringToObject(p, "message", line);
	cli_mcp_write(j->s, m);
}

static cJSON *run_summary(const char *run_id, const cJSON *run, bool already)
{
	cJSON *j = cJSON_CreateObject();
	const cJSON *rp = cJSON_GetObjectItem(run, "report");
	cJSON_AddStringToObject(j, "run_id", run_id);
	cJSON_AddStringToObject(j, "status", jstr(run, "status") ? jstr(run, "status") : "unknown");
	cJSON_AddBoolToObject(j, "already_done", already);
	cJSON_AddItemToObject(j, "report_md", jstr(rp, "md") ? cJSON_CreateString(jstr(rp, "md")) :
				  cJSON_CreateNull());
	cJSON_AddItemToObject(j, "report_json", jstr(rp, "json") ?
				  cJSON_CreateString(jstr(rp, "json")) : cJSON_CreateNull());
	cJSON_AddNumberToObject(j, "tasks", count_tasks(run, NULL));
	cJSON_AddNumberToObject(j, "tasks_done", count_tasks(run, "done"));
	cJSON_AddNumberToObject(j, "tasks_failed", count_tasks(run, "failed"));
	cJSON_AddNumberToObject(j, "failures",
				cJSON_GetArraySize(cJSON_GetObjectItem(run, "failures")));
	return j;
}

static void *job_main(void *arg)
{
	struct mcp_job *j = arg;
	struct mcp *s = j->s;
	struct bus *b = NULL;
	char *err = NULL, run_id[96] = "";
	cJSON *run = NULL, *res;
	int k = HOST_RUN_FAILED;
	/* A bus of its own: the main thread keeps using the command's. */
	if (bus_open(&s->cli->bcfg, &b, &err) == 0)
		k = host_run_weekly(&s->env, b, &j->req, run_id, sizeof(run_id), job_progress, j,
				    &run, &err);
	if (k == HOST_RUN_DONE || k == HOST_RUN_WAS_DONE) {
		cJSON *sum = run_summary(run_id, run, k == HOST_RUN_WAS_DONE);
		char *t = xasprintf("weekly run %s %s; report %s (JSON twin %s); read_report "
				    "returns its text", run_id,
				    k == HOST_RUN_WAS_DONE ? "was done already" : "is done",
				    jstr(sum, "report_md") ? jstr(sum, "report_md") : "-",
				    jstr(sum, "report_json") ? jstr(sum, "report_json") : "-");
		res = cli_mcp_tool_result(t, sum, false);
		free(t);
	} else if (k == HOST_RUN_STOPPED) {
		res = cli_mcp_tool_error("weekly run %s was stopped before it finished; call run_weekly "
					 "with the same arguments to resume it", run_id);
	} else {
		res = cli_mcp_tool_error("weekly run %s: %s", *run_id ? run_id : "-",
					 err ? err : "it failed");
	}
	free(err);
	cJSON_Delete(run);
	bus_free(&b);
	/* A cancelled request gets no answer (the MCP cancellation rules). */
	if (atomic_load(&s->job_cancelled))
		cJSON_Delete(res);
	else
		cli_mcp_rpc_result(s, j->id, res);
	atomic_store(&s->job_done, 1);
	ssize_t w = write(s->wake[1], "j", 1);
	(void)w;
	return NULL;
}

static void job_free(struct mcp_job *j)
{
	for (size_t i = 0; i < j->req.npairs; i++)
		free(j->req.pairs[i]);
	free(j->req.pairs);
	cJSON_Delete(j->id);
	cJSON_Delete(j->token);
	free(j);
}

/* Joins a finished job. */
void cli_mcp_job_reap(struct mcp *s, bool wait)
{
	if (!s->job || (!wait && !atomic_load(&s->job_done)))
		return;
	pthread_join(s->job->thread, NULL);
	job_free(s->job);
	s->job = NULL;
	atomic_store(&s->job_done, 0);
	atomic_store(&s->job_cancelled, 0);
	if (!cli_mcp_term)
		atomic_store(&s->env.stop, 0);
}

cJSON *cli_mcp_call_run_weekly(struct mcp *s, const cJSON *id, const cJSON *params,
			       const cJSON *args)
{
	cli_mcp_job_reap(s, false);
	if (s->job)
		return cli_mcp_tool_error("a weekly run is in progress already; wait for its answer "
					  "(or cancel its request) first");
	struct wf_request req = { .as_of_ns = util_now_ns() };
	const cJSON *as_of = cJSON_GetObjectItem(args, "as_of");
	if (as_of && (!cJSON_IsString(as_of) || host_parse_as_of(as_of->valuestring,
								 &req.as_of_ns) < 0))
		return cli_mcp_tool_error("as_of: a date YYYY-MM-DD or an ISO 8601 time with a zone");
	const cJSON *fresh = cJSON_GetObjectItem(args, "fresh");
	if (fresh && !cJSON_IsBool(fresh))
		return cli_mcp_tool_error("fresh: true or false");
	req.fresh = cJSON_IsTrue(fresh);
	const cJSON *pairs = cJSON_GetObjectItem(args, "pairs"), *p;
	char *err = NULL;
	if (pairs && (string_list(pairs, "pairs", &err) < 0 || !cJSON_GetArraySize(pairs))) {
		free(err);
		return cli_mcp_tool_error("pairs: a non-empty array of pairs like [\"USD/JPY\", \"EUR/USD\"]");
	}
	cJSON_ArrayForEach(p, pairs) {
		char base[4], quote[4];
		if (market_pair_parse(p->valuestring, base, quote, &err) < 0) {
			cJSON *r = cli_mcp_tool_error("pairs: %s", err);
			free(err);
			for (size_t i = 0; i < req.npairs; i++)
				free(req.pairs[i]);
			free(req.pairs);
			return r;
		}
		req.pairs = xrealloc(req.pairs, (req.npairs + 1) * sizeof(*req.pairs));
		req.pairs[req.npairs++] = xasprintf("%s/%s", base, quote);
	}
	for (size_t i = 0; !pairs && i < wf_default_npairs; i++) {
		req.pairs = xrealloc(req.pairs, (req.npairs + 1) * sizeof(*req.pairs));
		req.pairs[req.npairs++] = xstrdup(wf_default_pairs[i]);
	}
	struct mcp_job *j = xcalloc(1, sizeof(*j));
	j->s = s;
	j->req = req;
	j->id = cJSON_Duplicate(id, 1);
	const cJSON *tok = cJSON_GetObjectItem(cJSON_GetObjectItem(params, "_meta"),
					       "progressToken");
	if (cJSON_IsString(tok) || cJSON_IsNumber(tok))
		j->token = cJSON_Duplicate(tok, 1);
	atomic_store(&s->env.stop, 0);
	int e = pthread_create(&j->thread, NULL, job_main, j);
	if (e) {
		job_free(j);
		return cli_mcp_tool_error("cannot start the run: %s", strerror(e));
	}
	s->job = j;
	return NULL;
}

/* The product_manager's runs (new object, or NULL). */
static cJSON *load_runs(const char *data_dir)
{
	char *path = xasprintf("%s/state/product_manager-state.json", data_dir);
	char *buf = NULL;
	size_t len;
	cJSON *runs = NULL;
	if (util_read_file(path, 256u << 20, &buf, &len, NULL) == 0) {
		cJSON *st = json_parse_strict(buf, len, NULL);
		runs = cJSON_DetachItemFromObjectCaseSensitive(st, "runs");
		cJSON_Delete(st);
	}
	free(buf);
	free(path);
	return runs;
}

cJSON *cli_mcp_call_read_report(struct mcp *s, const cJSON *id, const cJSON *params,
				const cJSON *args)
{
	(void)id;
	(void)params;
	const cJSON *rid = cJSON_GetObjectItem(args, "run_id");
	const cJSON *fmt = cJSON_GetObjectItem(args, "format");
	if (rid && !cJSON_IsString(rid))
		return cli_mcp_tool_error("run_id: a string, as run_weekly returns it");
	if (fmt && (!cJSON_IsString(fmt) || (strcmp(fmt->valuestring, "md") &&
					     strcmp(fmt->valuestring, "json"))))
		return cli_mcp_tool_error("format: \"md\" (Markdown, the default) or \"json\"");
	const char *f = fmt ? fmt->valuestring : "md";
	cJSON *runs = load_runs(s->cli->data_dir);
	const cJSON *run = NULL, *r;
	cJSON *res = NULL;
	if (rid) {
		run = cJSON_GetObjectItemCaseSensitive(runs, rid->valuestring);
		if (!run)
			res = cli_mcp_tool_error("no run %s (run_weekly starts one)", rid->valuestring);
		else if (!jstr(run, "status") || strcmp(jstr(run, "status"), "done"))
			res = cli_mcp_tool_error("run %s is not finished (status %s)", rid->valuestring,
						 jstr(run, "status") ? jstr(run, "status") : "starting");
	} else {
		cJSON_ArrayForEach(r, runs) {
			const char *fin = jstr(r, "finished_at"), *st = jstr(r, "status");
			if (!st || strcmp(st, "done") || !fin)
				continue;
			if (!run || strcmp(fin, jstr(run, "finished_at")) > 0)
				run = r;
		}
		if (!run)
			res = cli_mcp_tool_error("no finished report yet (run_weekly makes one)");
	}
	if (!res) {
		const char *path = jstr(cJSON_GetObjectItem(run, "report"), f);
		char *text = NULL, *err = NULL;
		size_t len;
		if (!path) {
			res = cli_mcp_tool_error("run %s names no %s report", run->string, f);
		} else if (util_read_file(path, MSG_MAX_BYTES, &text, &len, &err) < 0) {
			res = cli_mcp_tool_error("run %s: %s", run->string, err);
			free(err);
		} else {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "run_id", run->string);
			cJSON_AddStringToObject(j, "format", f);
			cJSON_AddStringToObject(j, "path", path);
			cJSON_AddStringToObject(j, "finished_at", jstr(run, "finished_at") ?
						jstr(run, "finished_at") : "");
			res = cli_mcp_tool_result(text, j, false);
			free(text);
		}
	}
	cJSON_Delete(runs);
	return res;
}
