/* madf mcp: review_codebase, the code review crew of seed 001 (as `madf
 * review` runs it, cli/cli_review.c) behind an MCP tool. It runs on a
 * thread of its own, so that the server goes on reading (pings, other
 * tools, notifications/cancelled) while the agents work; progress
 * notifications go out meanwhile for a progressToken; a cancelled review
 * stops its agents and is not answered. */
#include "server/mcp_server_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/review.h"
#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

#define FINDING_SCHEMA(extra) \
	"{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"},\"severity\":" \
	"{\"type\":\"string\",\"enum\":[\"low\",\"medium\",\"high\",\"critical\"]},\"description\":" \
	"{\"type\":\"string\"},\"file\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\"," \
	"\"minimum\":1},\"" extra "\":{\"type\":\"string\"},\"reference\":{\"type\":\"string\"}}," \
	"\"required\":[\"type\",\"severity\",\"description\",\"file\",\"line\",\"" extra "\"," \
	"\"reference\"]}"

/* The aggregate of a completed review (an isError result carries
 * {"error": {"status", "error"[, "field", "rule"]}} and, after a 500, the
 * parts the other agents completed). */
const char cli_mcp_review_output_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"documentation\":{\"type\":\"object\",\"description\":\"file name -> text (README.md, "
	"CONTRIBUTING.md, diagram.svg, openapi.yaml, diagram.md)\",\"additionalProperties\":"
	"{\"type\":\"string\"}},"
	"\"debt\":{\"type\":\"array\",\"items\":" FINDING_SCHEMA("suggestion") "},"
	"\"improvement\":{\"type\":\"array\",\"items\":" FINDING_SCHEMA("suggestion") "},"
	"\"critical\":{\"type\":\"array\",\"items\":" FINDING_SCHEMA("remediation") "},"
	"\"review\":{\"type\":\"object\",\"description\":\"the codebase, root, files, notes, "
	"tools, each agent's status and attempts, and run_id: the run kept in data/review/runs "
	"(madf runs, madf tasks RUN_ID)\"},"
	"\"error\":{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"integer\"},"
	"\"error\":{\"type\":\"string\"},\"field\":{\"type\":\"string\"},\"rule\":{\"type\":"
	"\"string\"}},\"required\":[\"status\",\"error\"]}}}";

/* A review, on its own thread; one at a time (the crew's agents have one
 * inbox each): the others wait in a queue, in the order they came. */
struct mcp_review {
	struct mcp *s;
	struct mcp_review *next; /* queued after this one */
	cJSON *id;      /* the request's id */
	cJSON *token;   /* its progressToken, or NULL */
	cJSON *request; /* {id, params} */
	int progress;
	atomic_int cancel, done;
	pthread_t thread;
};

static void on_progress(void *ctx, const char *line)
{
	struct mcp_review *c = ctx;
	/* no notification once the request is cancelled */
	if (!c->token || atomic_load(&c->cancel))
		return;
	char *clean = util_sanitize(line, strlen(line), false);
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddStringToObject(m, "method", "notifications/progress");
	cJSON *p = cJSON_AddObjectToObject(m, "params");
	cJSON_AddItemToObject(p, "progressToken", cJSON_Duplicate(c->token, 1));
	cJSON_AddNumberToObject(p, "progress", ++c->progress);
	cJSON_AddStringToObject(p, "message", clean);
	free(clean);
	cli_mcp_write(c->s, m);
}

/* "3 critical, 3 debt, 4 improvement findings in 9 files of ROOT". */
static char *summary(const cJSON *agg)
{
	const cJSON *rv = cJSON_GetObjectItem(agg, "review");
	return xasprintf("review of %s: %d critical, %d debt, %d improvement findings in %d "
			 "files; documentation drafts:%s%s%s%s",
			 jstr(rv, "root") ? jstr(rv, "root") : "-",
			 cJSON_GetArraySize(cJSON_GetObjectItem(agg, "critical")),
			 cJSON_GetArraySize(cJSON_GetObjectItem(agg, "debt")),
			 cJSON_GetArraySize(cJSON_GetObjectItem(agg, "improvement")),
			 (int)cJSON_GetNumberValue(cJSON_GetObjectItem(rv, "files")),
			 cJSON_GetObjectItem(cJSON_GetObjectItem(agg, "documentation"), "README.md") ?
				 " README.md" : "",
			 cJSON_GetObjectItem(cJSON_GetObjectItem(agg, "documentation"), "CONTRIBUTING.md") ?
				 " CONTRIBUTING.md" : "",
			 cJSON_GetObjectItem(cJSON_GetObjectItem(agg, "documentation"), "diagram.svg") ?
				 " diagram.svg" : "",
			 cJSON_GetObjectItem(cJSON_GetObjectItem(agg, "documentation"), "openapi.yaml") ?
				 " openapi.yaml" : "");
}

/* The answer to the request (NULL: answered already, as a JSON-RPC error). */
static cJSON *review_answer(struct mcp *s, const cJSON *id, int st, cJSON *agg, cJSON *error)
{
	if (st == 0 && agg) {
		char *text = summary(agg);
		cJSON *r = cli_mcp_tool_result(text, agg, false);
		free(text);
		cJSON_Delete(error);
		return r;
	}
	if (!error) {
		error = cJSON_CreateObject();
		cJSON_AddNumberToObject(error, "status", st ? st : 500);
		cJSON_AddStringToObject(error, "error", "the review failed");
	}
	int code = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(error, "status"));
	const char *msg = jstr(error, "error") ? jstr(error, "error") : "the review failed";
	char *text = xasprintf("%d: %s", code, msg);
	/* 400 is the caller's mistake: before 2025-11-25 an invalid-params
	 * error; from it on, a tool execution error the model can correct. */
	if (code == 400 && strcmp(s->version, "2025-11-25") < 0) {
		cli_mcp_rpc_error_data(s, id, MCP_INVALID_PARAMS, text, error);
		free(text);
		cJSON_Delete(agg);
		return NULL;
	}
	cJSON *structured = agg ? agg : cJSON_CreateObject();
	cJSON_AddItemToObject(structured, "error", error);
	cJSON *r = cli_mcp_tool_result(text, structured, true);
	free(text);
	return r;
}

static void *review_main(void *arg)
{
	struct mcp_review *c = arg;
	struct mcp *s = c->s;
	cJSON *agg = NULL, *error = NULL;
	/* kept as a run, as madf review keeps one: madf runs, madf tasks and
	 * the console's Tasks and Reports views list it (a request refused
	 * before its tasks are sent keeps none) */
	char run_id[64];
	review_run_id(run_id, sizeof(run_id));
	struct review_progress p = { .fn = on_progress, .ctx = c, .cancel = &c->cancel,
				     .run_id = run_id };
	/* madf mcp --inject-fault (tests) reaches the crew too. */
	int st = cli_review_run_crew(s->cli, c->request, (const char *const *)s->env.faults,
				     s->env.nfaults, &p, &agg, &error);
	/* the client learns which run it is (review.run_id) */
	cJSON *rv = cJSON_GetObjectItemCaseSensitive(agg, "review");
	if (cJSON_IsObject(rv) && !cJSON_GetObjectItemCaseSensitive(rv, "run_id"))
		cJSON_AddStringToObject(rv, "run_id", run_id);
	if (atomic_load(&c->cancel)) {
		/* cancelled: no response (MCP's cancellation) */
		if (s->cli->verbose)
			cli_fail(0, "mcp", "review cancelled by the client");
		cJSON_Delete(agg);
		cJSON_Delete(error);
	} else {
		cJSON *r = review_answer(s, c->id, st, agg, error);
		if (r)
			cli_mcp_rpc_result(s, c->id, r);
	}
	atomic_store(&c->done, 1);
	ssize_t w = write(s->wake[1], "r", 1);
	(void)w;
	return NULL;
}

static void review_free(struct mcp_review *c)
{
	cJSON_Delete(c->id);
	cJSON_Delete(c->token);
	cJSON_Delete(c->request);
	free(c);
}

/* Starts the next queued review, if none runs. */
static void review_next(struct mcp *s)
{
	while (!s->review && s->review_queue) {
		struct mcp_review *c = s->review_queue;
		s->review_queue = c->next;
		c->next = NULL;
		int e = pthread_create(&c->thread, NULL, review_main, c);
		if (!e) {
			s->review = c;
			break;
		}
		cJSON *r = cli_mcp_tool_error("cannot start the review: %s", strerror(e));
		cli_mcp_rpc_result(s, c->id, r);
		review_free(c);
	}
}

void cli_mcp_review_reap(struct mcp *s, bool wait)
{
	for (;;) {
		struct mcp_review *c = s->review;
		if (!c || (!wait && !atomic_load(&c->done)))
			return;
		if (cli_mcp_term) {
			/* SIGTERM: the review stops, the queued ones are dropped */
			atomic_store(&c->cancel, 1);
			while (s->review_queue) {
				struct mcp_review *q = s->review_queue;
				s->review_queue = q->next;
				review_free(q);
			}
		}
		pthread_join(c->thread, NULL);
		review_free(c);
		s->review = NULL;
		review_next(s);
	}
}

bool cli_mcp_review_cancel(struct mcp *s, const cJSON *request_id)
{
	struct mcp_review *c = s->review;
	if (c && !atomic_load(&c->done) && cJSON_Compare(request_id, c->id, 1)) {
		atomic_store(&c->cancel, 1);
		return true;
	}
	for (struct mcp_review **p = &s->review_queue; *p; p = &(*p)->next)
		if (cJSON_Compare(request_id, (*p)->id, 1)) {
			struct mcp_review *q = *p;
			*p = q->next;
			review_free(q); /* never started: no answer */
			return true;
		}
	return false;
}

cJSON *cli_mcp_call_review_codebase(struct mcp *s, const cJSON *id, const cJSON *params,
				    const cJSON *args)
{
	cli_mcp_review_reap(s, false);
	struct mcp_review *c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->id = cJSON_Duplicate(id, 1);
	const cJSON *tok = cJSON_GetObjectItem(cJSON_GetObjectItem(params, "_meta"),
					       "progressToken");
	if (cJSON_IsString(tok) || cJSON_IsNumber(tok))
		c->token = cJSON_Duplicate(tok, 1);
	/* The arguments are the seed's input {id, params}: the master checks them. */
	c->request = cJSON_Duplicate(args, 1);
	struct mcp_review **tail = &s->review_queue;
	while (*tail)
		tail = &(*tail)->next;
	*tail = c;
	review_next(s);
	return NULL; /* the review's thread answers */
}
