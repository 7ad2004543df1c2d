/* The request of POST /api/chat/multi, validated as seed 004 says, and
 * the seed's error body. */
#include "server/serve.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

void serve_error_release(struct serve_error *e)
{
	free(e->message);
	e->message = NULL;
}

char *serve_error_body(const struct serve_error *e)
{
	char ts[40];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "error", e->error ? e->error : "Request failed");
	cJSON_AddStringToObject(o, "code", e->code);
	if (e->field || e->message) {
		cJSON *d = cJSON_AddObjectToObject(o, "details");
		cJSON_AddStringToObject(d, "field", e->field ? e->field : "");
		cJSON_AddStringToObject(d, "message", e->message ? e->message : "");
	}
	cJSON_AddStringToObject(o, "timestamp", ts);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

static int refuse(struct serve_error *e, const char *code, const char *field,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(struct serve_error *e, const char *code, const char *field,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	e->status = 400;
	e->code = code;
	e->error = !strcmp(code, "AGENT_NOT_FOUND") ? "Invalid agent specified" :
		   !strcmp(code, "MAX_ROUNDS_EXCEEDED") ? "Too many rounds" :
							  "Invalid request format";
	e->field = field;
	e->message = util_sanitize(m, strlen(m), false);
	free(m);
	return -1;
}

void serve_request_release(struct serve_request *r)
{
	for (size_t i = 0; i < r->nmessages; i++) {
		free(r->messages[i].role);
		free(r->messages[i].content);
	}
	free(r->messages);
	memset(r, 0, sizeof(*r));
}

static int parse_agents(const cJSON *a, const struct serve_agents *known,
			struct serve_request *out, struct serve_error *e)
{
	if (!a)
		return refuse(e, "VALIDATION_ERROR", "agents", "is required: an array of 1 to %d agent names",
			      SERVE_MAX_AGENTS);
	if (!cJSON_IsArray(a))
		return refuse(e, "VALIDATION_ERROR", "agents", "must be an array of agent names");
	int n = cJSON_GetArraySize(a);
	if (n < 1)
		return refuse(e, "VALIDATION_ERROR", "agents", "Must contain at least 1 valid agent");
	if (n > SERVE_MAX_AGENTS)
		return refuse(e, "VALIDATION_ERROR", "agents", "at most %d agents (%d given)",
			      SERVE_MAX_AGENTS, n);
	const cJSON *it;
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it))
			return refuse(e, "VALIDATION_ERROR", "agents", "agent %zu is not a string",
				      out->nagents + 1);
		const struct serve_agent *ag = serve_agents_find(known, it->valuestring);
		if (!ag) {
			struct sbuf names;
			sbuf_init(&names);
			for (size_t i = 0; i < known->n; i++)
				sbuf_addf(&names, "%s%s", i ? ", " : "", known->v[i].name);
			refuse(e, "AGENT_NOT_FOUND", "agents", "unknown agent \"%.64s\" (known: %s)",
			       it->valuestring, names.data ? names.data : "none");
			sbuf_release(&names);
			return -1;
		}
		for (size_t i = 0; i < out->nagents; i++)
			if (out->agents[i] == ag)
				return refuse(e, "VALIDATION_ERROR", "agents",
					      "agent \"%s\" is listed twice", ag->name);
		out->agents[out->nagents++] = ag;
	}
	return 0;
}

static int parse_rounds(const cJSON *r, struct serve_request *out, struct serve_error *e)
{
	if (!r)
		return refuse(e, "VALIDATION_ERROR", "rounds", "is required: an integer from 1 to %d",
			      SERVE_MAX_ROUNDS);
	if (!cJSON_IsNumber(r) || !isfinite(r->valuedouble) || floor(r->valuedouble) != r->valuedouble)
		return refuse(e, "VALIDATION_ERROR", "rounds", "must be an integer from 1 to %d",
			      SERVE_MAX_ROUNDS);
	if (r->valuedouble > SERVE_MAX_ROUNDS)
		return refuse(e, "MAX_ROUNDS_EXCEEDED", "rounds", "at most %d rounds (%.0f asked)",
			      SERVE_MAX_ROUNDS, r->valuedouble);
	if (r->valuedouble < 1)
		return refuse(e, "VALIDATION_ERROR", "rounds", "must be an integer from 1 to %d",
			      SERVE_MAX_ROUNDS);
	out->rounds = (int)r->valuedouble;
	return 0;
}

static int parse_messages(const cJSON *m, struct serve_request *out, struct serve_error *e)
{
	if (!m)
		return refuse(e, "VALIDATION_ERROR", "messages",
			      "is required: a non-empty array of messages");
	if (!cJSON_IsArray(m))
		return refuse(e, "VALIDATION_ERROR", "messages", "must be an array of messages");
	int n = cJSON_GetArraySize(m);
	if (n < 1)
		return refuse(e, "VALIDATION_ERROR", "messages", "must not be empty");
	out->messages = xcalloc((size_t)n, sizeof(*out->messages));
	bool user = false;
	const cJSON *it;
	cJSON_ArrayForEach(it, m) {
		size_t k = out->nmessages + 1;
		if (!cJSON_IsObject(it))
			return refuse(e, "VALIDATION_ERROR", "messages", "message %zu is not an object", k);
		const cJSON *role = cJSON_GetObjectItemCaseSensitive(it, "role");
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(it, "content");
		if (!cJSON_IsString(role) || (strcmp(role->valuestring, "user") &&
					       strcmp(role->valuestring, "assistant") &&
					       strcmp(role->valuestring, "system")))
			return refuse(e, "VALIDATION_ERROR", "messages",
				      "message %zu: role must be user, assistant or system", k);
		if (!cJSON_IsString(content))
			return refuse(e, "VALIDATION_ERROR", "messages",
				      "message %zu: content must be a string", k);
		const cJSON *ts = cJSON_GetObjectItemCaseSensitive(it, "timestamp");
		if (ts && !cJSON_IsString(ts))
			return refuse(e, "VALIDATION_ERROR", "messages",
				      "message %zu: timestamp must be a string", k);
		const cJSON *tc = cJSON_GetObjectItemCaseSensitive(it, "toolCalls");
		if (tc && !cJSON_IsArray(tc))
			return refuse(e, "VALIDATION_ERROR", "messages",
				      "message %zu: toolCalls must be an array", k);
		if (!strcmp(role->valuestring, "user"))
			user = true;
		out->messages[out->nmessages].role = xstrdup(role->valuestring);
		out->messages[out->nmessages].content = xstrdup(content->valuestring);
		out->nmessages++;
	}
	if (!user)
		return refuse(e, "VALIDATION_ERROR", "messages", "needs at least one user message");
	return 0;
}

int serve_request_parse(const char *body, size_t len, const struct serve_agents *agents,
			struct serve_request *out, struct serve_error *e)
{
	memset(out, 0, sizeof(*out));
	memset(e, 0, sizeof(*e));
	if (len > SERVE_BODY_MAX)
		return refuse(e, "VALIDATION_ERROR", "body", "the body is over %zu bytes",
			      SERVE_BODY_MAX);
	char *err = NULL;
	cJSON *j = json_parse_strict(body, len, &err);
	if (!j) {
		refuse(e, "VALIDATION_ERROR", "body", "not valid JSON: %s", err ? err : "?");
		free(err);
		return -1;
	}
	int r = 0;
	if (!cJSON_IsObject(j))
		r = refuse(e, "VALIDATION_ERROR", "body", "must be a JSON object");
	else if (parse_agents(cJSON_GetObjectItemCaseSensitive(j, "agents"), agents, out, e) < 0 ||
		 parse_rounds(cJSON_GetObjectItemCaseSensitive(j, "rounds"), out, e) < 0 ||
		 parse_messages(cJSON_GetObjectItemCaseSensitive(j, "messages"), out, e) < 0)
		r = -1;
	cJSON_Delete(j);
	if (r < 0)
		serve_request_release(out);
	return r;
}
