/* madf mcp: review_codebase, the code review crew of seed 001 (as `madf
 * review` runs it, cli/cli_review.c) behind an MCP tool. It runs in the
 * server's thread: other requests wait until the review is done; progress
 * notifications go out while the agents work. */
#include "server/mcp_server_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	"tools and each agent's status and attempts\"},"
	"\"error\":{\"type\":\"object\",\"properties\":{\"status\":{\"type\":\"integer\"},"
	"\"error\":{\"type\":\"string\"},\"field\":{\"type\":\"string\"},\"rule\":{\"type\":"
	"\"string\"}},\"required\":[\"status\",\"error\"]}}}";

struct review_call {
	struct mcp *s;
	cJSON *token; /* the request's progressToken, or NULL */
	int progress;
};

static void on_progress(void *ctx, const char *line)
{
	struct review_call *c = ctx;
	if (!c->token)
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

cJSON *cli_mcp_call_review_codebase(struct mcp *s, const cJSON *id, const cJSON *params,
				    const cJSON *args)
{
	struct review_call c = { .s = s };
	const cJSON *tok = cJSON_GetObjectItem(cJSON_GetObjectItem(params, "_meta"),
					       "progressToken");
	if (cJSON_IsString(tok) || cJSON_IsNumber(tok))
		c.token = cJSON_Duplicate(tok, 1);
	/* The arguments are the seed's input {id, params}: the master checks them. */
	cJSON *request = cJSON_Duplicate(args, 1);
	cJSON *agg = NULL, *error = NULL;
	struct review_progress p = { on_progress, &c };
	/* madf mcp --inject-fault (tests) reaches the crew too. */
	int st = cli_review_run_crew(s->cli, request, (const char *const *)s->env.faults,
				     s->env.nfaults, &p, &agg, &error);
	cJSON_Delete(request);
	cJSON_Delete(c.token);
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
