/* madf mcp: an MCP server over stdio (newline-delimited JSON-RPC 2.0).
 * Other MCP clients reach madf's data tools (through the tool registry, as
 * the agents do), the bus (queue status, sending a task) and the weekly
 * workflow (run it with embedded agents, read its report).
 *
 * One reactor (core/loop.h) over stdin and a self-pipe (signals, the end
 * of a weekly run or a review). Every request is answered on the main
 * thread except run_weekly and review_codebase, which run on worker threads
 * so that pings, other calls and notifications/cancelled are still read
 * while they work. Protocol lines
 * go to a private copy of the original stdout; file descriptor 1 is
 * pointed at stderr, so that nothing else can ever reach the client's
 * protocol stream. The tools themselves are in server/mcp_server_tools.c. */
#include "server/mcp_server_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/json_out.h"
#include "core/loop.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/host.h"
#include "core/banned.h"

#define MCP_LATEST "2025-11-25"
#define MCP_LINE_MAX (MSG_MAX_BYTES + 65536u)
#define MCP_CALLER "mcp" /* the agent name the data tools' usage is counted under */

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

volatile sig_atomic_t cli_mcp_term;
static int mcp_wake_fd = -1;
static atomic_int *mcp_stop;

static void on_term(int sig)
{
	(void)sig;
	cli_mcp_term = 1;
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
void cli_mcp_write(struct mcp *s, cJSON *msg)
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

void cli_mcp_rpc_result(struct mcp *s, const cJSON *id, cJSON *result)
{
	cJSON *m = rpc_message(id);
	cJSON_AddItemToObject(m, "result", result);
	cli_mcp_write(s, m);
}

void cli_mcp_rpc_error_data(struct mcp *s, const cJSON *id, int code, const char *msg,
			    cJSON *data)
{
	char *red = config_redact(msg);
	cJSON *m = rpc_message(id);
	cJSON *e = cJSON_AddObjectToObject(m, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", red);
	if (data)
		cJSON_AddItemToObject(e, "data", data);
	cli_mcp_write(s, m);
	free(red);
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
	cli_mcp_write(s, m);
	free(red);
	free(msg);
}

/* A tools/call result: text, and structured content when not NULL (taken
 * over). */
cJSON *cli_mcp_tool_result(const char *text, cJSON *structured, bool is_error)
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

cJSON *cli_mcp_tool_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	char *red = config_redact(msg);
	cJSON *r = cli_mcp_tool_result(red, NULL, true);
	free(red);
	free(msg);
	return r;
}

/* ---- the tool table --------------------------------------------------------- */

struct mcp_tool {
	const char *name, *title, *description;
	const char *input_schema, *output_schema; /* JSON text; output may be NULL */
	const char *const *args;                  /* the arguments it takes */
	bool read_only, idempotent;
	/* Returns the result (answered now), or NULL when a worker answers. */
	cJSON *(*call)(struct mcp *s, const cJSON *id, const cJSON *params,
		       const cJSON *args);
};

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
static const char *const review_args[] = { "id", "params", NULL };

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
	  fx_args, true, true, cli_mcp_call_fx_rates },
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
	  search_args, true, true, cli_mcp_call_news_search },
	{ "news_get", "News story",
	  "One news story by its id (as news_search gives it), from the whole archive.",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},"
	  "\"required\":[\"id\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"source\":"
	  "{\"type\":\"string\"},\"title\":{\"type\":\"string\"},\"published_at\":{\"type\":"
	  "\"string\"},\"topics\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"body\":"
	  "{\"type\":\"string\"}},\"required\":[\"id\",\"title\"]}",
	  get_args, true, true, cli_mcp_call_news_get },
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
	  no_args, true, false, cli_mcp_call_queue_status },
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
	  send_args, false, false, cli_mcp_call_send_task },
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
	  run_args, false, true, cli_mcp_call_run_weekly },
	{ "read_report", "Read a weekly report",
	  "The text of the latest finished weekly report, or of the named run's: "
	  "Markdown (format md, the default) or its JSON twin (format json).",
	  "{\"type\":\"object\",\"properties\":{\"run_id\":{\"type\":\"string\"},\"format\":"
	  "{\"type\":\"string\",\"enum\":[\"md\",\"json\"]}},\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"run_id\":{\"type\":\"string\"},\"format\":"
	  "{\"type\":\"string\"},\"path\":{\"type\":\"string\"},\"finished_at\":{\"type\":"
	  "\"string\"}},\"required\":[\"run_id\",\"format\",\"path\"]}",
	  report_args, true, true, cli_mcp_call_read_report },
	{ "review_codebase", "Review a codebase",
	  "Reviews a codebase with the code review crew of seed 001 (as `madf review` "
	  "does): the master fans the work out to the documentation, debt, improvement "
	  "and critical agents, which run real analyzers (cppcheck, flawfinder, "
	  "shellcheck, ctags, cloc, pmccabe, graphviz), and answers with the aggregate "
	  "{documentation, debt, improvement, critical, review}. id is a directory or a "
	  "name registered with `madf review add`; params as `madf review --params` "
	  "(agents, max_findings, max_files, max_bytes, include, exclude, since, "
	  "checklist, timeout_s). Invalid input (400) is an invalid-params error (an "
	  "isError result from protocol 2025-11-25 on); 404 (unknown codebase), 413 "
	  "(too large) and 500 (an agent failed) are isError results carrying the code. "
	  "Sends progress notifications when the request has a progressToken; other "
	  "requests wait until the review is done.",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"description\":"
	  "\"a directory, or a codebase name registered with madf review add\"},\"params\":"
	  "{\"type\":\"object\",\"description\":\"review parameters (agents, max_findings, "
	  "max_files, max_bytes, include, exclude, since, checklist, timeout_s)\"}},"
	  "\"required\":[\"id\"],\"additionalProperties\":false}",
	  cli_mcp_review_output_schema,
	  review_args, true, true, cli_mcp_call_review_codebase },
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
		"for one agent. review_codebase reviews a codebase with the code review "
		"crew (documentation, debt, improvement and critical findings).");
	util_strlcpy(s->version, ver, sizeof(s->version));
	s->initialized = true;
	cli_mcp_rpc_result(s, id, r);
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
	cli_mcp_rpc_result(s, id, r);
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
			res = cli_mcp_tool_error("%s takes no argument \"%s\" (see its inputSchema)", t->name,
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
	cli_mcp_rpc_result(s, id, res);
}

static void do_cancelled(struct mcp *s, const cJSON *params)
{
	const cJSON *rid = cJSON_GetObjectItem(params, "requestId");
	if (rid && cli_mcp_review_cancel(s, rid))
		return;
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
void cli_mcp_handle_line(struct mcp *s, const char *line, size_t len)
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
		cli_mcp_rpc_result(s, id, cJSON_CreateObject());
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

/* What the reactor's callbacks share: the input not yet cut into lines. */
struct serve {
	struct mcp *s;
	struct sbuf in;
	bool eof, discarding;
};

/* A signal or a finished job: the self-pipe. */
static void on_wake(struct loop *l, int fd, int mask, void *ctx)
{
	(void)l;
	(void)mask;
	struct serve *v = ctx;
	char buf[64];
	ssize_t r = read(fd, buf, sizeof(buf));
	(void)r;
	cli_mcp_job_reap(v->s, false);
	cli_mcp_review_reap(v->s, false);
}

/* The client's lines; the end of input stops the loop. */
static void on_stdin(struct loop *l, int fd, int mask, void *ctx)
{
	(void)mask;
	struct serve *v = ctx;
	struct sbuf *in = &v->in;
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		v->eof = true;
		loop_stop(l);
		if (n < 0)
			cli_fail(0, "mcp", "reading standard input: %s", strerror(errno));
	} else {
		sbuf_add(in, buf, (size_t)n);
	}
	/* Complete lines (the rest at the end of input). */
	size_t start = 0;
	for (;;) {
		char *nl = memchr(in->data + start, '\n', in->len - start);
		if (!nl && !(v->eof && start < in->len))
			break;
		size_t end = nl ? (size_t)(nl - in->data) : in->len;
		if (v->discarding)
			v->discarding = false;
		else
			cli_mcp_handle_line(v->s, in->data + start, end - start);
		start = nl ? end + 1 : end;
	}
	if (start) {
		memmove(in->data, in->data + start, in->len - start);
		in->len -= start;
		in->data[in->len] = '\0';
	}
	if (in->len > MCP_LINE_MAX) {
		if (!v->discarding)
			rpc_error(v->s, NULL, RPC_INVALID_REQUEST, "a message over %u bytes",
				  MCP_LINE_MAX);
		v->discarding = true;
		in->len = 0;
		in->data[0] = '\0';
	}
}

/* SIGTERM or SIGINT (which also write the self-pipe, to wake the poll). */
static void on_turn(struct loop *l, void *ctx)
{
	(void)ctx;
	if (cli_mcp_term)
		loop_stop(l);
}

static int serve(struct mcp *s)
{
	char *err = NULL;
	struct serve v = { .s = s };
	sbuf_init(&v.in);
	struct loop *l = loop_new(&err);
	if (!l || loop_add_fd(l, 0, LOOP_READ, on_stdin, &v, &err) < 0 ||
	    loop_add_fd(l, s->wake[0], LOOP_READ, on_wake, &v, &err) < 0) {
		loop_free(&l);
		sbuf_release(&v.in);
		int rc = cli_fail(EXIT_FAIL, "mcp", "%s", err);
		free(err);
		return rc;
	}
	loop_set_before_sleep(l, on_turn, NULL);
	if (loop_run(l, &err) < 0) {
		loop_free(&l);
		sbuf_release(&v.in);
		int rc = cli_fail(EXIT_FAIL, "mcp", "%s", err);
		free(err);
		return rc;
	}
	loop_free(&l);
	sbuf_release(&v.in);
	/* At the end of input a weekly run in progress finishes and answers;
	 * SIGTERM stops it (it resumes next time). */
	cli_mcp_job_reap(s, true);
	cli_mcp_review_reap(s, true);
	return EXIT_OK;
}

static int cmd_mcp(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "mcp", &cmd_mcp_entry, 0 };
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

const struct cli_cmd cmd_mcp_entry = {
	.name = "mcp",
	.opts = host_options,
	.summary = "serve madf to MCP clients over stdio: data tools, queue status, send_task, "
		   "run_weekly, read_report, review_codebase",
	.run = cmd_mcp,
};
