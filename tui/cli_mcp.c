/* madf mcp: an MCP server over stdio (newline-delimited JSON-RPC 2.0).
 * Other MCP clients reach madf's data tools (through the tool registry, as
 * the agents do), the bus (queue status, sending a task) and the weekly
 * workflow (run it with embedded agents, read its report).
 *
 * One reactor: poll() over stdin and a self-pipe (signals, the end of a
 * weekly run). Every request is answered on the main thread except
 * run_weekly, which runs on a worker thread so that pings, other calls and
 * notifications/cancelled are still read while it works. Protocol lines
 * go to a private copy of the original stdout; file descriptor 1 is
 * pointed at stderr, so that nothing else can ever reach the client's
 * protocol stream. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/data_tools.h"
#include "agents/market.h"
#include "agents/workflow.h"
#include "core/config.h"
#include "core/json_out.h"
#include "core/util.h"
#include "tui/cli.h"
#include "tui/host.h"
#include "core/banned.h"

#define MCP_LATEST "2025-11-25"
#define MCP_LINE_MAX (MSG_MAX_BYTES + 65536u)
#define MCP_CALLER "mcp" /* the agent name the data tools' usage is counted under */
#define MCP_NEWS_LIMIT 20  /* news_search's default limit */

/* JSON-RPC error codes. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_NOT_INITIALIZED = -32002,
};

static const char *const mcp_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };

struct mcp;

/* The weekly run in progress, on its own thread. */
struct mcp_job {
	struct mcp *s;
	cJSON *id;           /* the request's id */
	cJSON *token;        /* its progress token, or NULL */
	struct wf_request req;
	double progress;
	char last[256];
	pthread_t thread;
};

struct mcp {
	struct cli *cli;
	struct agent_env env;
	struct agent caller;  /* who the data tools are called for */
	FILE *out;            /* the protocol stream */
	pthread_mutex_t out_lock;
	int wake[2];          /* self-pipe: signals, a finished job */
	bool initialized;
	size_t page_size;
	struct mcp_job *job;
	atomic_int job_done, job_cancelled;
};

static volatile sig_atomic_t mcp_term;
static int mcp_wake_fd = -1;
static atomic_int *mcp_stop;

static void on_term(int sig)
{
	(void)sig;
	mcp_term = 1;
	if (mcp_stop)
		atomic_store(mcp_stop, 1);
	if (mcp_wake_fd >= 0) {
		int e = errno;
		ssize_t w = write(mcp_wake_fd, "t", 1);
		(void)w;
		errno = e;
	}
}

/* ---- output ------------------------------------------------------------------ */

/* Writes one message as one line (msg is deleted). cJSON's unformatted
 * output escapes every control character, so it never holds a newline. */
static void mcp_write(struct mcp *s, cJSON *msg)
{
	char *line = cJSON_PrintUnformatted(msg);
	cJSON_Delete(msg);
	if (!line)
		return;
	pthread_mutex_lock(&s->out_lock);
	fputs(line, s->out);
	fputc('\n', s->out);
	fflush(s->out);
	pthread_mutex_unlock(&s->out_lock);
	free(line);
}

static cJSON *rpc_message(const cJSON *id)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	return m;
}

static void rpc_result(struct mcp *s, const cJSON *id, cJSON *result)
{
	cJSON *m = rpc_message(id);
	cJSON_AddItemToObject(m, "result", result);
	mcp_write(s, m);
}

static void rpc_error(struct mcp *s, const cJSON *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void rpc_error(struct mcp *s, const cJSON *id, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	char *red = config_redact(msg);
	cJSON *m = rpc_message(id);
	cJSON *e = cJSON_AddObjectToObject(m, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", red);
	mcp_write(s, m);
	free(red);
	free(msg);
}

/* A tools/call result: text, and structured content when not NULL (taken
 * over). */
static cJSON *tool_result(const char *text, cJSON *structured, bool is_error)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(r, "content");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "type", "text");
	cJSON_AddStringToObject(t, "text", text);
	cJSON_AddItemToArray(content, t);
	if (structured)
		cJSON_AddItemToObject(r, "structuredContent", structured);
	cJSON_AddBoolToObject(r, "isError", is_error);
	return r;
}

static cJSON *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *tool_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	char *red = config_redact(msg);
	cJSON *r = tool_result(red, NULL, true);
	free(red);
	free(msg);
	return r;
}

/* ---- the tools -------------------------------------------------------------- */

struct mcp_tool {
	const char *name, *title, *description;
	const char *input_schema, *output_schema; /* JSON text; output may be NULL */
	const char *const *args;                  /* the arguments it takes */
	bool read_only, idempotent;
	/* Returns the result (answered now), or NULL when a worker answers. */
	cJSON *(*call)(struct mcp *s, const cJSON *id, const cJSON *params,
		       const cJSON *args);
};

/* Calls a data tool through the registry, as the agents do. */
static cJSON *data_tool(struct mcp *s, const char *tool, const cJSON *args, cJSON **res)
{
	char *err = NULL;
	if (data_call(&s->caller, tool, cJSON_Duplicate(args, 1), res, &err) < 0) {
		cJSON *r = tool_error("%s", err ? err : "the data tool failed");
		free(err);
		return r;
	}
	return NULL;
}

static cJSON *call_fx_rates(struct mcp *s, const cJSON *id, const cJSON *params,
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
	cJSON *r = tool_result(b.data, res, false);
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

static cJSON *call_news_search(struct mcp *s, const cJSON *id, const cJSON *params,
			       const cJSON *args)
{
	(void)id;
	(void)params;
	const cJSON *lim = cJSON_GetObjectItem(args, "limit");
	if (lim && (!cJSON_IsNumber(lim) || lim->valuedouble < 1 || lim->valuedouble > 1000 ||
		    lim->valuedouble != (double)lim->valueint))
		return tool_error("limit: a whole number from 1 to 1000");
	const cJSON *topics = cJSON_GetObjectItem(args, "topics"), *t;
	if (topics && !cJSON_IsArray(topics))
		return tool_error("topics: an array of strings, like [\"money-fx\"]");
	cJSON_ArrayForEach(t, topics)
		if (!cJSON_IsString(t))
			return tool_error("topics: an array of strings, like [\"money-fx\"]");
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
	cJSON *r = tool_result(b.data, res, false);
	sbuf_release(&b);
	return r;
}

static cJSON *call_news_get(struct mcp *s, const cJSON *id, const cJSON *params,
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
	cJSON *r = tool_result(b.data, res, false);
	sbuf_release(&b);
	return r;
}

static cJSON *call_queue_status(struct mcp *s, const cJSON *id, const cJSON *params,
				const cJSON *args)
{
	(void)id;
	(void)params;
	(void)args;
	struct bus *b;
	struct bus_stats st;
	char *err = NULL;
	if (cli_bus(s->cli, &b) < 0)
		return tool_error("cannot open the message bus under %s", s->cli->data_dir);
	if (bus_stats(b, &st, &err) < 0) {
		cJSON *r = tool_error("%s", err);
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
	cJSON *r = tool_result(t.data, j, false);
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
static cJSON *call_send_task(struct mcp *s, const cJSON *id, const cJSON *params,
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
		return tool_error("to: required, the agent whose inbox gets the task "
				  "(e.g. product_manager, research_agent_1)");
	const char *to_c = msg_agent_canonical(to);
	if (strcmp(to_c, "broadcast") && !util_valid_agent_name(to_c))
		return tool_error("to: invalid agent name \"%s\": must match "
				  "[a-z0-9][a-z0-9_-]{0,63} or be broadcast", to);
	const char *from = jstr(args, "from") ? jstr(args, "from") : "operator";
	if (cJSON_GetObjectItem(args, "from") && !jstr(args, "from"))
		return tool_error("from: a string");
	const char *from_c = msg_agent_canonical(from);
	if (!util_valid_agent_name(from_c))
		return tool_error("from: invalid agent name \"%s\": must match "
				  "[a-z0-9][a-z0-9_-]{0,63}", from);
	const cJSON *content = cJSON_GetObjectItem(args, "content");
	if (content && !cJSON_IsObject(content))
		return tool_error("content: an object (the task_assignment's content)");
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
			return tool_error("priority: one of urgent, high, normal, low, or 1..5");
	}
	const cJSON *tmo = cJSON_GetObjectItem(args, "timeout_s");
	if (tmo && (!cJSON_IsNumber(tmo) || tmo->valuedouble < 1 ||
		    tmo->valuedouble > 365.0 * 86400 || tmo->valuedouble != (double)tmo->valueint))
		return tool_error("timeout_s: whole seconds from 1 to 31536000");
	const cJSON *corr = cJSON_GetObjectItem(args, "correlation_id");
	if (corr && !cJSON_IsString(corr))
		return tool_error("correlation_id: a string");

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
		cJSON *r = tool_error("%s", err);
		free(err);
		return r;
	}
	struct msg *m = msg_new(from_c, to_c, MSG_TASK_ASSIGNMENT, c);
	if (!m)
		return tool_error("cannot make a message from %s to %s", from, to);
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
		r = tool_error("the task is not a valid task_assignment, nothing was sent: %s", all);
		free(all);
	} else if (cli_bus(s->cli, &b) < 0) {
		r = tool_error("cannot open the message bus under %s", s->cli->data_dir);
	} else if (bus_send(b, m, &err) < 0) {
		r = tool_error("%s", err);
		free(err);
	} else {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "message_id", m->id);
		cJSON_AddStringToObject(j, "to", m->to);
		cJSON_AddStringToObject(j, "from", m->from);
		cJSON_AddStringToObject(j, "type", msg_type_name(m->type));
		cJSON_AddStringToObject(j, "priority", msg_priority_name(m->priority));
		char *t = xasprintf("sent task_assignment %s to %s's inbox", m->id, m->to);
		r = tool_result(t, j, false);
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
	mcp_write(j->s, m);
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
		res = tool_result(t, sum, false);
		free(t);
	} else if (k == HOST_RUN_STOPPED) {
		res = tool_error("weekly run %s was stopped before it finished; call run_weekly "
				 "with the same arguments to resume it", run_id);
	} else {
		res = tool_error("weekly run %s: %s", *run_id ? run_id : "-",
				 err ? err : "it failed");
	}
	free(err);
	cJSON_Delete(run);
	bus_free(&b);
	/* A cancelled request gets no answer (the MCP cancellation rules). */
	if (atomic_load(&s->job_cancelled))
		cJSON_Delete(res);
	else
		rpc_result(s, j->id, res);
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
static void job_reap(struct mcp *s, bool wait)
{
	if (!s->job || (!wait && !atomic_load(&s->job_done)))
		return;
	pthread_join(s->job->thread, NULL);
	job_free(s->job);
	s->job = NULL;
	atomic_store(&s->job_done, 0);
	atomic_store(&s->job_cancelled, 0);
	if (!mcp_term)
		atomic_store(&s->env.stop, 0);
}

static cJSON *call_run_weekly(struct mcp *s, const cJSON *id, const cJSON *params,
			      const cJSON *args)
{
	job_reap(s, false);
	if (s->job)
		return tool_error("a weekly run is in progress already; wait for its answer "
				  "(or cancel its request) first");
	struct wf_request req = { .as_of_ns = util_now_ns() };
	const cJSON *as_of = cJSON_GetObjectItem(args, "as_of");
	if (as_of && (!cJSON_IsString(as_of) || host_parse_as_of(as_of->valuestring,
								 &req.as_of_ns) < 0))
		return tool_error("as_of: a date YYYY-MM-DD or an ISO 8601 time with a zone");
	const cJSON *fresh = cJSON_GetObjectItem(args, "fresh");
	if (fresh && !cJSON_IsBool(fresh))
		return tool_error("fresh: true or false");
	req.fresh = cJSON_IsTrue(fresh);
	const cJSON *pairs = cJSON_GetObjectItem(args, "pairs"), *p;
	char *err = NULL;
	if (pairs && (string_list(pairs, "pairs", &err) < 0 || !cJSON_GetArraySize(pairs))) {
		free(err);
		return tool_error("pairs: a non-empty array of pairs like [\"USD/JPY\", \"EUR/USD\"]");
	}
	cJSON_ArrayForEach(p, pairs) {
		char base[4], quote[4];
		if (market_pair_parse(p->valuestring, base, quote, &err) < 0) {
			cJSON *r = tool_error("pairs: %s", err);
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
		return tool_error("cannot start the run: %s", strerror(e));
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

static cJSON *call_read_report(struct mcp *s, const cJSON *id, const cJSON *params,
			       const cJSON *args)
{
	(void)id;
	(void)params;
	const cJSON *rid = cJSON_GetObjectItem(args, "run_id");
	const cJSON *fmt = cJSON_GetObjectItem(args, "format");
	if (rid && !cJSON_IsString(rid))
		return tool_error("run_id: a string, as run_weekly returns it");
	if (fmt && (!cJSON_IsString(fmt) || (strcmp(fmt->valuestring, "md") &&
					     strcmp(fmt->valuestring, "json"))))
		return tool_error("format: \"md\" (Markdown, the default) or \"json\"");
	const char *f = fmt ? fmt->valuestring : "md";
	cJSON *runs = load_runs(s->cli->data_dir);
	const cJSON *run = NULL, *r;
	cJSON *res = NULL;
	if (rid) {
		run = cJSON_GetObjectItemCaseSensitive(runs, rid->valuestring);
		if (!run)
			res = tool_error("no run %s (run_weekly starts one)", rid->valuestring);
		else if (!jstr(run, "status") || strcmp(jstr(run, "status"), "done"))
			res = tool_error("run %s is not finished (status %s)", rid->valuestring,
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
			res = tool_error("no finished report yet (run_weekly makes one)");
	}
	if (!res) {
		const char *path = jstr(cJSON_GetObjectItem(run, "report"), f);
		char *text = NULL, *err = NULL;
		size_t len;
		if (!path) {
			res = tool_error("run %s names no %s report", run->string, f);
		} else if (util_read_file(path, MSG_MAX_BYTES, &text, &len, &err) < 0) {
			res = tool_error("run %s: %s", run->string, err);
			free(err);
		} else {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "run_id", run->string);
			cJSON_AddStringToObject(j, "format", f);
			cJSON_AddStringToObject(j, "path", path);
			cJSON_AddStringToObject(j, "finished_at", jstr(run, "finished_at") ?
						jstr(run, "finished_at") : "");
			res = tool_result(text, j, false);
			free(text);
		}
	}
	cJSON_Delete(runs);
	return res;
}

#define DATE_PROP(what) "{\"type\":\"string\",\"format\":\"date\",\"description\":\"" what \
	" date, YYYY-MM-DD\"}"

static const char *const fx_args[] = { "pair", "start", "end", NULL };
static const char *const search_args[] = { "start", "end", "topics", "limit", NULL };
static const char *const get_args[] = { "id", NULL };
static const char *const no_args[] = { NULL };
static const char *const send_args[] = { "to", "from", "task_type", "content", "priority",
					 "timeout_s", "correlation_id", "focus_area",
					 "target_pairs", "timeframe", "data_sources", "deadline",
					 "output_format", "special_instructions", NULL };
static const char *const run_args[] = { "as_of", "pairs", "fresh", NULL };
static const char *const report_args[] = { "run_id", "format", NULL };

static const struct mcp_tool mcp_tools[] = {
	{ "fx_rates", "FX rates",
	  "Daily closing rates of one currency pair between two dates (inclusive), from "
	  "the market source madf mcp was started with (--market).",
	  "{\"type\":\"object\",\"properties\":{\"pair\":{\"type\":\"string\",\"description\":"
	  "\"a pair BASE/QUOTE, like USD/JPY\"},\"start\":" DATE_PROP("first") ",\"end\":"
	  DATE_PROP("last") "},\"required\":[\"pair\",\"start\",\"end\"],"
	  "\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"pair\":{\"type\":\"string\"},\"source\":"
	  "{\"type\":\"string\"},\"simulated\":{\"type\":\"boolean\"},\"points\":{\"type\":"
	  "\"array\",\"description\":\"[date, close] pairs, oldest first\",\"items\":{\"type\":"
	  "\"array\",\"items\":{\"type\":[\"string\",\"number\"]}}}},\"required\":[\"pair\","
	  "\"points\"]}",
	  fx_args, true, true, call_fx_rates },
	{ "news_search", "News search",
	  "News stories published between two dates (inclusive), optionally only those "
	  "with one of the given topics (e.g. money-fx, interest), from the news source "
	  "madf mcp was started with (--news). At most limit stories (default 20) are "
	  "returned with their bodies; total counts every match.",
	  "{\"type\":\"object\",\"properties\":{\"start\":" DATE_PROP("first") ",\"end\":"
	  DATE_PROP("last") ",\"topics\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000}},"
	  "\"required\":[\"start\",\"end\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"source\":{\"type\":\"string\"},\"simulated\":"
	  "{\"type\":\"boolean\"},\"total\":{\"type\":\"integer\"},\"stories\":{\"type\":"
	  "\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
	  "\"source\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},\"published_at\":"
	  "{\"type\":\"string\"},\"topics\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"body\":{\"type\":\"string\"}}}}},\"required\":[\"total\",\"stories\"]}",
	  search_args, true, true, call_news_search },
	{ "news_get", "News story",
	  "One news story by its id (as news_search gives it), from the whole archive.",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},"
	  "\"required\":[\"id\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"source\":"
	  "{\"type\":\"string\"},\"title\":{\"type\":\"string\"},\"published_at\":{\"type\":"
	  "\"string\"},\"topics\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"body\":"
	  "{\"type\":\"string\"}},\"required\":[\"id\",\"title\"]}",
	  get_args, true, true, call_news_get },
	{ "queue_status", "Queue status",
	  "The message bus now: per agent inbox the waiting messages, the age of the "
	  "oldest, those in processing and those waiting to be retried; dead letters "
	  "(what `madf status --json` prints).",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"inboxes\":{\"type\":\"object\","
	  "\"additionalProperties\":{\"type\":\"object\",\"properties\":{\"depth\":{\"type\":"
	  "\"integer\"},\"oldest_age_s\":{\"type\":\"number\"},\"processing\":{\"type\":"
	  "\"integer\"},\"retry\":{\"type\":\"integer\"}}}},\"processing\":{\"type\":"
	  "\"integer\"},\"retry\":{\"type\":\"integer\"},\"dead_letter\":{\"type\":\"integer\"}},"
	  "\"required\":[\"inboxes\",\"processing\",\"retry\",\"dead_letter\"]}",
	  no_args, true, false, call_queue_status },
	{ "send_task", "Send a task",
	  "Sends a task_assignment message to an agent's inbox on the bus (validated "
	  "against the message schemas; nothing is written when it is invalid) and "
	  "returns its message_id. The content starts from defaults (task_type research, "
	  "empty focus, pairs, timeframe and sources, a deadline a day ahead, "
	  "structured_json output), then the content object, then the named fields.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"to\":{\"type\":\"string\",\"description\":\"the agent: product_manager, "
	  "research_agent_1, research_agent_2, validator_agent, report_writer, or another "
	  "name\"},"
	  "\"from\":{\"type\":\"string\",\"description\":\"sender, default operator\"},"
	  "\"task_type\":{\"type\":\"string\"},"
	  "\"content\":{\"type\":\"object\",\"description\":\"task_assignment content fields\"},"
	  "\"priority\":{\"description\":\"urgent, high, normal (default), low, or 1..5\","
	  "\"oneOf\":[{\"type\":\"string\",\"enum\":[\"urgent\",\"high\",\"normal\",\"low\"]},"
	  "{\"type\":\"integer\",\"minimum\":1,\"maximum\":5}]},"
	  "\"timeout_s\":{\"type\":\"integer\",\"minimum\":1},"
	  "\"correlation_id\":{\"type\":\"string\"},"
	  "\"focus_area\":{\"type\":\"string\"},"
	  "\"target_pairs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"timeframe\":{\"type\":\"string\"},"
	  "\"data_sources\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"deadline\":{\"type\":\"string\",\"format\":\"date-time\"},"
	  "\"output_format\":{\"type\":\"string\"},"
	  "\"special_instructions\":{\"type\":\"string\"}},"
	  "\"required\":[\"to\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"message_id\":{\"type\":\"string\"},\"to\":"
	  "{\"type\":\"string\"},\"from\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"},"
	  "\"priority\":{\"type\":\"string\"}},\"required\":[\"message_id\",\"to\"]}",
	  send_args, false, false, call_send_task },
	{ "run_weekly", "Run the weekly FX report",
	  "Runs the weekly Asia/G10 FX research workflow with embedded agents (as `madf "
	  "run weekly` does) for the week ending as_of (default now) and the given pairs "
	  "(default the Asia/G10 set), and answers when the report is written: the run id, "
	  "its status and the report's paths. The same request again answers with the "
	  "finished run (fresh: true runs it again); an interrupted run resumes. Sends "
	  "progress notifications when the request has a progressToken; may take minutes.",
	  "{\"type\":\"object\",\"properties\":{\"as_of\":{\"type\":\"string\",\"description\":"
	  "\"the week's last day, YYYY-MM-DD, or an ISO 8601 time with a zone\"},\"pairs\":"
	  "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"description\":"
	  "\"pairs like USD/JPY\"},\"fresh\":{\"type\":\"boolean\"}},"
	  "\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"run_id\":{\"type\":\"string\"},\"status\":"
	  "{\"type\":\"string\"},\"already_done\":{\"type\":\"boolean\"},\"report_md\":{\"type\":"
	  "[\"string\",\"null\"]},\"report_json\":{\"type\":[\"string\",\"null\"]},\"tasks\":"
	  "{\"type\":\"integer\"},\"tasks_done\":{\"type\":\"integer\"},\"tasks_failed\":"
	  "{\"type\":\"integer\"},\"failures\":{\"type\":\"integer\"}},\"required\":[\"run_id\","
	  "\"status\"]}",
	  run_args, false, true, call_run_weekly },
	{ "read_report", "Read a weekly report",
	  "The text of the latest finished weekly report, or of the named run's: "
	  "Markdown (format md, the default) or its JSON twin (format json).",
	  "{\"type\":\"object\",\"properties\":{\"run_id\":{\"type\":\"string\"},\"format\":"
	  "{\"type\":\"string\",\"enum\":[\"md\",\"json\"]}},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"run_id\":{\"type\":\"string\"},\"format\":"
	  "{\"type\":\"string\"},\"path\":{\"type\":\"string\"},\"finished_at\":{\"type\":"
	  "\"string\"}},\"required\":[\"run_id\",\"format\",\"path\"]}",
	  report_args, true, true, call_read_report },
};

static const struct mcp_tool *tool_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(mcp_tools); i++)
		if (!strcmp(mcp_tools[i].name, name))
			return &mcp_tools[i];
	return NULL;
}

static cJSON *tool_json(const struct mcp_tool *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "title", t->title);
	cJSON_AddStringToObject(o, "description", t->description);
	cJSON *in = cJSON_Parse(t->input_schema);
	if (!in)
		BUG("an MCP input schema is not JSON");
	cJSON_AddItemToObject(o, "inputSchema", in);
	if (t->output_schema) {
		cJSON *out = cJSON_Parse(t->output_schema);
		if (!out)
			BUG("an MCP output schema is not JSON");
		cJSON_AddItemToObject(o, "outputSchema", out);
	}
	cJSON *an = cJSON_AddObjectToObject(o, "annotations");
	cJSON_AddStringToObject(an, "title", t->title);
	cJSON_AddBoolToObject(an, "readOnlyHint", t->read_only);
	if (!t->read_only)
		cJSON_AddBoolToObject(an, "destructiveHint", false);
	cJSON_AddBoolToObject(an, "idempotentHint", t->idempotent);
	cJSON_AddBoolToObject(an, "openWorldHint", false);
	return o;
}

/* ---- methods ----------------------------------------------------------------- */

static void do_initialize(struct mcp *s, const cJSON *id, const cJSON *params)
{
	if (s->initialized) {
		rpc_error(s, id, RPC_INVALID_REQUEST, "already initialized");
		return;
	}
	const char *want = jstr(params, "protocolVersion");
	if (!want) {
		rpc_error(s, id, RPC_INVALID_PARAMS, "protocolVersion: required, a string");
		return;
	}
	const char *ver = MCP_LATEST;
	for (size_t i = 0; i < ARRAY_SIZE(mcp_versions); i++)
		if (!strcmp(want, mcp_versions[i]))
			ver = mcp_versions[i];
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", ver);
	cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "tools"), "listChanged", false);
	cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(info, "name", "madf");
	cJSON_AddStringToObject(info, "title", "madf multi-agent FX research");
	cJSON_AddStringToObject(info, "version", MADF_VERSION);
	cJSON_AddStringToObject(r, "instructions",
		"madf runs a team of agents that research Asia/G10 FX markets over a "
		"file-system message bus. fx_rates and news_search/news_get read the data "
		"the agents use. run_weekly runs the weekly research workflow end to end "
		"(it may take minutes; it reports progress) and read_report returns the "
		"report. queue_status shows the agents' inboxes; send_task queues a task "
		"for one agent.");
	s->initialized = true;
	rpc_result(s, id, r);
}

static void do_tools_list(struct mcp *s, const cJSON *id, const cJSON *params)
{
	size_t from = 0, n = ARRAY_SIZE(mcp_tools);
	const cJSON *cur = cJSON_GetObjectItem(params, "cursor");
	if (cur && !cJSON_IsNull(cur)) {
		char *end = NULL;
		unsigned long v = 0;
		bool ok = cJSON_IsString(cur) && !strncmp(cur->valuestring, "madf-tools-", 11);
		if (ok) {
			errno = 0;
			v = strtoul(cur->valuestring + 11, &end, 16);
			ok = !errno && end != cur->valuestring + 11 && !*end && v > 0 && v < n;
		}
		if (!ok) {
			rpc_error(s, id, RPC_INVALID_PARAMS, "invalid cursor");
			return;
		}
		from = v;
	}
	size_t to = from + s->page_size < n ? from + s->page_size : n;
	cJSON *r = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(r, "tools");
	for (size_t i = from; i < to; i++)
		cJSON_AddItemToArray(arr, tool_json(&mcp_tools[i]));
	if (to < n) {
		char c[32];
		snprintf(c, sizeof(c), "madf-tools-%zx", to);
		cJSON_AddStringToObject(r, "nextCursor", c);
	}
	rpc_result(s, id, r);
}

static void do_tools_call(struct mcp *s, const cJSON *id, const cJSON *params)
{
	const char *name = jstr(params, "name");
	if (!name) {
		rpc_error(s, id, RPC_INVALID_PARAMS, "name: required, the tool to call");
		return;
	}
	const struct mcp_tool *t = tool_find(name);
	if (!t) {
		rpc_error(s, id, RPC_INVALID_PARAMS, "unknown tool: %s", name);
		return;
	}
	const cJSON *args = cJSON_GetObjectItem(params, "arguments");
	cJSON *empty = NULL;
	if (!args || cJSON_IsNull(args))
		args = empty = cJSON_CreateObject();
	if (!cJSON_IsObject(args)) {
		rpc_error(s, id, RPC_INVALID_PARAMS, "arguments: must be an object");
		return;
	}
	cJSON *res = NULL;
	const cJSON *a;
	cJSON_ArrayForEach(a, args) {
		bool known = false;
		for (const char *const *k = t->args; *k && !known; k++)
			known = !strcmp(*k, a->string);
		if (!known) {
			res = tool_error("%s takes no argument \"%s\" (see its inputSchema)", t->name,
					 a->string);
			break;
		}
	}
	if (!res) {
		res = t->call(s, id, params, args);
		if (!res) { /* a worker answers */
			cJSON_Delete(empty);
			return;
		}
	}
	cJSON_Delete(empty);
	rpc_result(s, id, res);
}

static void do_cancelled(struct mcp *s, const cJSON *params)
{
	const cJSON *rid = cJSON_GetObjectItem(params, "requestId");
	if (!rid || !s->job || atomic_load(&s->job_done) || !cJSON_Compare(rid, s->job->id, 1))
		return; /* unknown or finished: ignored */
	const char *why = jstr(params, "reason");
	if (s->cli->verbose)
		cli_fail(0, "mcp", "weekly run cancelled by the client%s%s", why ? ": " : "",
			 why ? why : "");
	atomic_store(&s->job_cancelled, 1);
	atomic_store(&s->env.stop, 1);
}

static bool valid_id(const cJSON *id)
{
	if (cJSON_IsString(id))
		return true;
	/* An integer a double holds exactly. */
	double v = cJSON_IsNumber(id) ? id->valuedouble : 0.5;
	return v >= -9007199254740991.0 && v <= 9007199254740991.0 &&
	       v == (double)(int64_t)v;
}

/* One line from the client. */
static void handle_line(struct mcp *s, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	size_t skip = 0;
	while (skip < len && (line[skip] == ' ' || line[skip] == '\t'))
		skip++;
	if (skip == len)
		return; /* a blank line */
	char *err = NULL;
	cJSON *msg = json_parse_strict(line + skip, len - skip, &err);
	if (!msg) {
		rpc_error(s, NULL, RPC_PARSE_ERROR, "parse error: %s", err ? err : "invalid JSON");
		free(err);
		return;
	}
	if (cJSON_IsArray(msg)) {
		rpc_error(s, NULL, RPC_INVALID_REQUEST, "batches are not supported");
		cJSON_Delete(msg);
		return;
	}
	if (!cJSON_IsObject(msg)) {
		rpc_error(s, NULL, RPC_INVALID_REQUEST, "a message must be a JSON object");
		cJSON_Delete(msg);
		return;
	}
	const cJSON *id = cJSON_GetObjectItem(msg, "id");
	const char *method = jstr(msg, "method");
	const cJSON *params = cJSON_GetObjectItem(msg, "params");
	const char *ver = jstr(msg, "jsonrpc");
	bool has_id = id != NULL;
	if (has_id && !valid_id(id)) {
		rpc_error(s, NULL, RPC_INVALID_REQUEST, "id: a string or an integer");
	} else if (!ver || strcmp(ver, "2.0")) {
		if (has_id || !method)
			rpc_error(s, id, RPC_INVALID_REQUEST, "jsonrpc: must be \"2.0\"");
	} else if (!method) {
		/* A response (we send no requests) or nonsense. */
		if (!cJSON_GetObjectItem(msg, "result") && !cJSON_GetObjectItem(msg, "error"))
			rpc_error(s, id, RPC_INVALID_REQUEST, "method: required");
	} else if (params && !cJSON_IsObject(params)) {
		if (has_id)
			rpc_error(s, id, RPC_INVALID_PARAMS, "params: must be an object");
	} else if (!has_id) {
		/* Notifications: never answered. */
		if (!strcmp(method, "notifications/cancelled"))
			do_cancelled(s, params);
		else if (s->cli->verbose)
			cli_fail(0, "mcp", "notification %s", method);
	} else if (!strcmp(method, "ping")) {
		rpc_result(s, id, cJSON_CreateObject());
	} else if (!strcmp(method, "initialize")) {
		do_initialize(s, id, params);
	} else if (!s->initialized) {
		rpc_error(s, id, RPC_NOT_INITIALIZED, "not initialized: send initialize first");
	} else if (!strcmp(method, "tools/list")) {
		do_tools_list(s, id, params);
	} else if (!strcmp(method, "tools/call")) {
		do_tools_call(s, id, params);
	} else {
		rpc_error(s, id, RPC_METHOD_NOT_FOUND, "method not found: %s", method);
	}
	cJSON_Delete(msg);
}

/* ---- the loop ----------------------------------------------------------------- */

static int serve(struct mcp *s)
{
	struct sbuf in;
	sbuf_init(&in);
	bool eof = false, discarding = false;
	while (!eof && !mcp_term) {
		struct pollfd p[2] = { { 0, POLLIN, 0 }, { s->wake[0], POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			sbuf_release(&in);
			return cli_fail(EXIT_FAIL, "mcp", "poll: %s", strerror(errno));
		}
		if (p[1].revents) {
			char buf[64];
			ssize_t r = read(s->wake[0], buf, sizeof(buf));
			(void)r;
			job_reap(s, false);
		}
		if (!p[0].revents)
			continue;
		char buf[65536];
		ssize_t n = read(0, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			eof = true;
			if (n < 0)
				cli_fail(0, "mcp", "reading standard input: %s", strerror(errno));
		} else {
			sbuf_add(&in, buf, (size_t)n);
		}
		/* Complete lines (the rest at the end of input). */
		size_t start = 0;
		for (;;) {
			char *nl = memchr(in.data + start, '\n', in.len - start);
			if (!nl && !(eof && start < in.len))
				break;
			size_t end = nl ? (size_t)(nl - in.data) : in.len;
			if (discarding)
				discarding = false;
			else
				handle_line(s, in.data + start, end - start);
			start = nl ? end + 1 : end;
		}
		if (start) {
			memmove(in.data, in.data + start, in.len - start);
			in.len -= start;
			in.data[in.len] = '\0';
		}
		if (in.len > MCP_LINE_MAX) {
			if (!discarding)
				rpc_error(s, NULL, RPC_INVALID_REQUEST, "a message over %u bytes",
					  MCP_LINE_MAX);
			discarding = true;
			in.len = 0;
			in.data[0] = '\0';
		}
	}
	sbuf_release(&in);
	/* At the end of input a weekly run in progress finishes and answers;
	 * SIGTERM stops it (it resumes next time). */
	job_reap(s, true);
	return EXIT_OK;
}

int cmd_mcp(struct cli *cli, int argc, char **argv)
{
	static const char *const wv[] = { "--market", "--news", "--report-dir", "--task-timeout",
					  "--inject-fault", NULL };
	struct cli_opts o = { argc, argv, 1, "mcp", wv, NULL, 0 };
	struct host_opts ho = { 0 };
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "mcp", "unexpected argument %s", val);
		if (host_option(&ho, "mcp", name, val) < 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	/* The protocol gets its own descriptor; fd 1 becomes stderr, so that
	 * nothing but protocol messages can reach the client. */
	fflush(stdout);
	int pfd = dup(1);
	FILE *out = pfd >= 0 ? fdopen(pfd, "w") : NULL;
	if (!out || dup2(2, 1) < 0) {
		if (pfd >= 0 && !out)
			close(pfd);
		return cli_fail(EXIT_FAIL, "mcp", "cannot set up standard output: %s",
				strerror(errno));
	}
	fcntl(pfd, F_SETFD, FD_CLOEXEC);
	struct mcp *s = xcalloc(1, sizeof(*s));
	s->cli = cli;
	s->out = out;
	pthread_mutex_init(&s->out_lock, NULL);
	s->page_size = ARRAY_SIZE(mcp_tools);
	const char *ps = getenv("MADF_MCP_PAGE_SIZE");
	if (ps && atoi(ps) > 0)
		s->page_size = (size_t)atoi(ps);
	int rc = EXIT_FAIL;
	if (pipe(s->wake) < 0) {
		cli_fail(EXIT_FAIL, "mcp", "pipe: %s", strerror(errno));
		fclose(out);
		pthread_mutex_destroy(&s->out_lock);
		free(s);
		return EXIT_FAIL;
	}
	fcntl(s->wake[0], F_SETFL, O_NONBLOCK);
	fcntl(s->wake[1], F_SETFL, O_NONBLOCK);
	fcntl(s->wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(s->wake[1], F_SETFD, FD_CLOEXEC);
	/* A server is no client: a .mcp.json naming madf itself in the
	 * directory it runs in must not make it start itself, recursively. */
	ho.no_mcp = true;
	if (host_setup(cli, &s->env, &ho) == 0) {
		s->caller.env = &s->env;
		util_strlcpy(s->caller.name, MCP_CALLER, sizeof(s->caller.name));
		mcp_wake_fd = s->wake[1];
		mcp_stop = &s->env.stop;
		struct sigaction sa = { .sa_handler = on_term };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		if (cli->verbose)
			cli_fail(0, "mcp", "serving MCP on standard input and output");
		rc = serve(s);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		mcp_stop = NULL;
		mcp_wake_fd = -1;
	}
	host_teardown(&s->env);
	close(s->wake[0]);
	close(s->wake[1]);
	if (fclose(out) != 0 && rc == EXIT_OK && errno != EPIPE)
		rc = cli_fail(EXIT_FAIL, "mcp", "cannot write output: %s", strerror(errno));
	pthread_mutex_destroy(&s->out_lock);
	free(s);
	return rc;
}
