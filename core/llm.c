#include "core/llm.h"

#include <cJSON.h>
#include <ctype.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/json_out.h"
#include "core/sse.h"
#include "core/util.h"
#include "core/banned.h"

#define LLM_ERRBODY_MAX (64 * 1024)
#define LLM_SSE_MAX (4 * 1024 * 1024)

struct llm_call {
	struct http_multi *m;
	enum llm_provider provider;
	char *url;
	char *body;
	char *key;
	char **headers; /* NULL-terminated; one holds the key */
	struct llm_callbacks cb;
	volatile sig_atomic_t *cancel;
	int max_attempts, attempt;
	int64_t deadline_ns;
	long connect_timeout_ms, backoff_base_ms, backoff_max_ms;
	/* The current attempt. */
	struct sse_parser sse;
	struct sbuf errbody;
	long retry_after_ms; /* -1: none given */
	bool output;         /* something reached the callbacks: no retry */
	bool complete;       /* message_stop, or [DONE] */
	bool failed;         /* err_type and err_msg say why */
	char *stop_reason;
	long in_tok, out_tok;
	char *err_type;
	char *err_msg;
};

static void llm_free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static void llm_call_free(struct llm_call *c)
{
	free(c->url);
	free(c->body);
	llm_free_secret(c->key);
	for (char **h = c->headers; h && *h; h++)
		llm_free_secret(*h);
	free(c->headers);
	sse_release(&c->sse);
	sbuf_release(&c->errbody);
	free(c->stop_reason);
	free(c->err_type);
	free(c->err_msg);
	free(c);
}

/* Text from the server or curl with the key taken out, should it echo it. */
static char *llm_scrub(const struct llm_call *c, const char *s)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "");
	size_t kl = c->key ? strlen(c->key) : 0;
	while (*s) {
		const char *hit = kl ? strstr(s, c->key) : NULL;
		if (!hit) {
			sbuf_addstr(&b, s);
			break;
		}
		sbuf_add(&b, s, (size_t)(hit - s));
		sbuf_addstr(&b, "[redacted]");
		s = hit + kl;
	}
	return sbuf_detach(&b);
}

static void llm_set_error(struct llm_call *c, const char *type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void llm_set_error(struct llm_call *c, const char *type, const char *fmt, ...)
{
	if (c->failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	c->failed = true;
	free(c->err_type);
	free(c->err_msg);
	c->err_type = llm_scrub(c, type);
	c->err_msg = llm_scrub(c, msg);
	free(msg);
}

static void llm_finish(struct llm_call *c, long status)
{
	struct llm_result res = {
		.ok = !c->failed,
		.stop_reason = c->stop_reason ? c->stop_reason : "",
		.input_tokens = c->in_tok,
		.output_tokens = c->out_tok,
		.error_type = c->failed ? c->err_type : "",
		.error = c->failed ? c->err_msg : "",
		.http_status = status,
		.attempts = c->attempt,
	};
	if (c->cb.on_done)
		c->cb.on_done(c->cb.ctx, &res);
	llm_call_free(c);
}

/* --- request bodies ------------------------------------------------------ */

int llm_tool_name_ok(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++)
		if (!isalnum((unsigned char)name[n]) && name[n] != '_' && name[n] != '-')
			return 0;
	return n >= 1 && n <= 64;
}

void llm_tool_name(const char *name, char out[65])
{
	size_t n = 0;
	for (; name && name[n] && n < 64; n++) {
		unsigned char c = (unsigned char)name[n];
		out[n] = (char)(isalnum(c) || c == '-' ? c : '_');
	}
	if (n == 0)
		out[n++] = '_';
	out[n] = '\0';
}

/* A tool call's arguments as a JSON object (a new one), or NULL. */
static cJSON *llm_args_object(const char *args)
{
	if (!args || !*args)
		return cJSON_CreateObject();
	cJSON *j = cJSON_Parse(args);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* One message in the provider's form: a new object to append, or NULL
 * when it went into an earlier one (Anthropic's tool results) or on error
 * (*why set). */
static cJSON *llm_message_json(enum llm_provider provider, const struct llm_message *lm,
			       cJSON **results, cJSON *msgs, char **why)
{
	const char *role = lm->role ? lm->role : "";
	bool tool = !strcmp(role, "tool"), asst = !strcmp(role, "assistant");
	if (!tool && !asst && strcmp(role, "user")) {
		*why = xstrdup("role must be user, assistant or tool");
		return NULL;
	}
	if ((!asst || !lm->ntool_calls) && !lm->content) {
		*why = xstrdup("no content");
		return NULL;
	}
	if (tool && (!lm->tool_call_id || !*lm->tool_call_id)) {
		*why = xstrdup("a tool result needs the tool_call_id it answers");
		return NULL;
	}
	if (lm->ntool_calls && !asst) {
		*why = xstrdup("only an assistant turn makes tool calls");
		return NULL;
	}
	if (tool && provider == LLM_ANTHROPIC) {
		cJSON *last = cJSON_GetArrayItem(msgs, cJSON_GetArraySize(msgs) - 1);
		cJSON *m = NULL;
		if (!*results || last != *results) {
			m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "role", "user");
			cJSON_AddArrayToObject(m, "content");
			*results = m;
		}
		cJSON *b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "type", "tool_result");
		cJSON_AddStringToObject(b, "tool_use_id", lm->tool_call_id);
		cJSON_AddStringToObject(b, "content", lm->content);
		cJSON_AddBoolToObject(b, "is_error", lm->is_error != 0);
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(*results, "content"), b);
		return m;
	}
	*results = NULL;
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", role);
	if (tool) {
		cJSON_AddStringToObject(m, "tool_call_id", lm->tool_call_id);
		cJSON_AddStringToObject(m, "content", lm->content);
		return m;
	}
	if (!lm->ntool_calls) {
		cJSON_AddStringToObject(m, "content", lm->content);
		return m;
	}
	cJSON *blocks = NULL, *calls = NULL;
	if (provider == LLM_ANTHROPIC) {
		blocks = cJSON_AddArrayToObject(m, "content");
		if (lm->content && *lm->content) {
			cJSON *b = cJSON_CreateObject();
			cJSON_AddStringToObject(b, "type", "text");
			cJSON_AddStringToObject(b, "text", lm->content);
			cJSON_AddItemToArray(blocks, b);
		}
	} else {
		if (lm->content && *lm->content)
			cJSON_AddStringToObject(m, "content", lm->content);
		else
			cJSON_AddNullToObject(m, "content");
		calls = cJSON_AddArrayToObject(m, "tool_calls");
	}
	for (size_t k = 0; k < lm->ntool_calls; k++) {
		const struct llm_tool_call *tc = &lm->tool_calls[k];
		cJSON *args = llm_args_object(tc->arguments);
		if (!tc->id || !*tc->id || !tc->name || !llm_tool_name_ok(tc->name) || !args) {
			cJSON_Delete(args);
			cJSON_Delete(m);
			*why = xasprintf("tool call %zu needs an id, a valid name and JSON object "
					 "arguments", k);
			return NULL;
		}
		cJSON *c = cJSON_CreateObject();
		if (provider == LLM_ANTHROPIC) {
			cJSON_AddStringToObject(c, "type", "tool_use");
			cJSON_AddStringToObject(c, "id", tc->id);
			cJSON_AddStringToObject(c, "name", tc->name);
			cJSON_AddItemToObject(c, "input", args);
			cJSON_AddItemToArray(blocks, c);
		} else {
			cJSON_AddStringToObject(c, "id", tc->id);
			cJSON_AddStringToObject(c, "type", "function");
			cJSON *fn = cJSON_AddObjectToObject(c, "function");
			cJSON_AddStringToObject(fn, "name", tc->name);
			char *txt = cJSON_PrintUnformatted(args);
			cJSON_AddStringToObject(fn, "arguments", txt ? txt : "{}");
			free(txt);
			cJSON_Delete(args);
			cJSON_AddItemToArray(calls, c);
		}
	}
	return m;
}

char *llm_request_body(enum llm_provider provider, const struct llm_request *req,
		       char **err)
{
	if (!req->model || !*req->model) {
		err_set(err, "no model");
		return NULL;
	}
	if (req->max_tokens <= 0) {
		err_set(err, "max_tokens must be positive");
		return NULL;
	}
	if (!req->nmessages) {
		err_set(err, "no messages");
		return NULL;
	}
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "model", req->model);
	cJSON_AddNumberToObject(root, "max_tokens", (double)req->max_tokens);
	cJSON_AddBoolToObject(root, "stream", 1);
	if (provider == LLM_OPENAI) {
		cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
		cJSON_AddBoolToObject(so, "include_usage", 1);
	}
	if (req->temperature >= 0)
		cJSON_AddNumberToObject(root, "temperature", req->temperature);
	if (provider == LLM_ANTHROPIC && req->system && *req->system)
		cJSON_AddStringToObject(root, "system", req->system);
	cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
	if (provider == LLM_OPENAI && req->system && *req->system) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "system");
		cJSON_AddStringToObject(m, "content", req->system);
		cJSON_AddItemToArray(msgs, m);
	}
	cJSON *results = NULL; /* Anthropic: the user message collecting tool results */
	for (size_t i = 0; i < req->nmessages; i++) {
		char *why = NULL;
		cJSON *m = llm_message_json(provider, &req->messages[i], &results, msgs, &why);
		if (why) {
			cJSON_Delete(root);
			err_set(err, "message %zu: %s", i, why);
			free(why);
			return NULL;
		}
		if (m)
			cJSON_AddItemToArray(msgs, m);
	}
	if (req->ntools) {
		cJSON *tools = cJSON_AddArrayToObject(root, "tools");
		for (size_t i = 0; i < req->ntools; i++) {
			const struct llm_tool *t = &req->tools[i];
			const char *schema = t->input_schema ? t->input_schema : "{\"type\":\"object\"}";
			cJSON *js = cJSON_Parse(schema);
			if (!t->name || !llm_tool_name_ok(t->name) || !cJSON_IsObject(js)) {
				cJSON_Delete(js);
				cJSON_Delete(root);
				err_set(err, "tool %zu: a name matching [a-zA-Z0-9_-]{1,64} and a JSON "
					"object schema are needed", i);
				return NULL;
			}
			cJSON *tj = cJSON_CreateObject();
			cJSON *fn = tj;
			if (provider == LLM_OPENAI) {
				cJSON_AddStringToObject(tj, "type", "function");
				fn = cJSON_AddObjectToObject(tj, "function");
			}
			cJSON_AddStringToObject(fn, "name", t->name);
			if (t->description)
				cJSON_AddStringToObject(fn, "description", t->description);
			cJSON_AddItemToObject(fn, provider == LLM_OPENAI ? "parameters" : "input_schema",
					      js);
			cJSON_AddItemToArray(tools, tj);
		}
	}
	char *s = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!s)
		err_set(err, "out of memory");
	return s;
}

/* --- stream events ------------------------------------------------------- */

/* Token counts and indexes above this are not believed. */
#define LLM_COUNT_MAX 1000000000000000L

static void llm_text(struct llm_call *c, const char *s)
{
	if (!s || !*s)
		return;
	c->output = true;
	if (c->cb.on_text)
		c->cb.on_text(c->cb.ctx, s, strlen(s));
}

/* {"error": {"type": ..., "message": ...}} as both APIs send it. */
static void llm_error_object(struct llm_call *c, const cJSON *e, const char *prefix)
{
	const char *type = jstr(e, "type");
	if (!type)
		type = jstr(e, "code");
	const char *msg = jstr(e, "message");
	llm_set_error(c, type ? type : "api_error", "%s%s%s%s", prefix, type ? type : "error",
		      msg ? ": " : "", msg ? msg : "");
}

static void llm_anthropic_event(struct llm_call *c, const char *event, const cJSON *j)
{
	const char *type = jstr(j, "type");
	if (!type)
		type = event;
	long idx = 0;
	jint(j, "index", 0, LLM_COUNT_MAX, &idx);
	if (!strcmp(type, "message_start")) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(j, "message"), "usage");
		jint(u, "input_tokens", 0, LLM_COUNT_MAX, &c->in_tok);
		jint(u, "output_tokens", 0, LLM_COUNT_MAX, &c->out_tok);
	} else if (!strcmp(type, "content_block_start")) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "content_block");
		const char *bt = jstr(b, "type");
		if (bt && !strcmp(bt, "text")) {
			llm_text(c, jstr(b, "text"));
		} else if (bt && !strcmp(bt, "tool_use")) {
			c->output = true;
			if (c->cb.on_tool_use_start) {
				const char *id = jstr(b, "id"), *name = jstr(b, "name");
				c->cb.on_tool_use_start(c->cb.ctx, (int)idx, id ? id : "",
							name ? name : "");
			}
		}
	} else if (!strcmp(type, "content_block_delta")) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "delta");
		const char *dt = jstr(d, "type");
		if (dt && !strcmp(dt, "text_delta")) {
			llm_text(c, jstr(d, "text"));
		} else if (dt && !strcmp(dt, "input_json_delta")) {
			const char *pj = jstr(d, "partial_json");
			c->output = true;
			if (pj && *pj && c->cb.on_tool_use_args)
				c->cb.on_tool_use_args(c->cb.ctx, (int)idx, pj, strlen(pj));
		}
	} else if (!strcmp(type, "message_delta")) {
		const char *sr = jstr(cJSON_GetObjectItemCaseSensitive(j, "delta"),
					  "stop_reason");
		if (sr) {
			free(c->stop_reason);
			c->stop_reason = xstrdup(sr);
		}
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
		jint(u, "output_tokens", 0, LLM_COUNT_MAX, &c->out_tok);
		jint(u, "input_tokens", 0, LLM_COUNT_MAX, &c->in_tok);
	} else if (!strcmp(type, "message_stop")) {
		c->complete = true;
	} else if (!strcmp(type, "error")) {
		llm_error_object(c, cJSON_GetObjectItemCaseSensitive(j, "error"), "");
	}
	/* ping, content_block_stop and event types added later: nothing to do. */
}

static void llm_openai_event(struct llm_call *c, const cJSON *j)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	if (e) {
		if (cJSON_IsObject(e))
			llm_error_object(c, e, "");
		else
			llm_set_error(c, "api_error", "error: %s",
				      cJSON_IsString(e) ? e->valuestring : "unknown");
		return;
	}
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "usage");
	if (cJSON_IsObject(u)) {
		jint(u, "prompt_tokens", 0, LLM_COUNT_MAX, &c->in_tok);
		jint(u, "completion_tokens", 0, LLM_COUNT_MAX, &c->out_tok);
	}
	const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "choices");
	const cJSON *choice = cJSON_IsArray(ch) ? cJSON_GetArrayItem(ch, 0) : NULL;
	if (!choice)
		return;
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(choice, "delta");
	llm_text(c, jstr(d, "content"));
	const cJSON *tcs = cJSON_GetObjectItemCaseSensitive(d, "tool_calls");
	const cJSON *tc;
	cJSON_ArrayForEach(tc, tcs) {
		long idx = 0;
		jint(tc, "index", 0, LLM_COUNT_MAX, &idx);
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		const char *id = jstr(tc, "id"), *name = jstr(fn, "name");
		const char *args = jstr(fn, "arguments");
		c->output = true;
		if ((id || name) && c->cb.on_tool_use_start)
			c->cb.on_tool_use_start(c->cb.ctx, (int)idx, id ? id : "", name ? name : "");
		if (args && *args && c->cb.on_tool_use_args)
			c->cb.on_tool_use_args(c->cb.ctx, (int)idx, args, strlen(args));
	}
	const char *fr = jstr(choice, "finish_reason");
	if (fr) {
		free(c->stop_reason);
		c->stop_reason = xstrdup(fr);
	}
}

static int llm_sse_event(void *ctx, const struct sse_event *ev, char **err)
{
	struct llm_call *c = ctx;
	if (c->provider == LLM_OPENAI && ev->data_len == 6 && !memcmp(ev->data, "[DONE]", 6)) {
		c->complete = true;
		return 0;
	}
	if (c->provider == LLM_ANTHROPIC && !strcmp(ev->event, "ping"))
		return 0;
	cJSON *j = cJSON_ParseWithLength(ev->data, ev->data_len);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		llm_set_error(c, "invalid_response", "the stream sent an event that is not a JSON object");
		return err_set(err, "invalid event");
	}
	if (c->provider == LLM_ANTHROPIC)
		llm_anthropic_event(c, ev->event, j);
	else
		llm_openai_event(c, j);
	cJSON_Delete(j);
	if (c->failed)
		return err_set(err, "stream error");
	return 0;
}

/* --- HTTP callbacks and retries --------------------------------------------- */

long llm_parse_retry_after(const char *value, double now_s)
{
	while (isspace((unsigned char)*value))
		value++;
	if (!*value)
		return -1;
	if (isdigit((unsigned char)*value)) {
		char *end;
		double s = strtod(value, &end);
		while (isspace((unsigned char)*end))
			end++;
		if (!*end && s >= 0 && s < 86400.0 * 365)
			return (long)(s * 1000.0 + 0.5);
	}
	time_t t = curl_getdate(value, NULL);
	if (t == (time_t)-1)
		return -1;
	double d = ((double)t - now_s) * 1000.0;
	return d < 0 ? 0 : d > 86400.0 * 365 * 1000 ? -1 : (long)d;
}

static int llm_on_header(void *ctx, const char *name, size_t nlen, const char *value,
			 size_t vlen)
{
	struct llm_call *c = ctx;
	bool secs = nlen == 11 && !strncasecmp(name, "retry-after", 11);
	bool ms = nlen == 14 && !strncasecmp(name, "retry-after-ms", 14);
	if (!secs && !ms)
		return 0;
	char *v = xstrndup(value, vlen);
	if (ms) {
		char *end;
		double d = strtod(v, &end);
		if (end != v && !*end && d >= 0 && d < 1e10)
			c->retry_after_ms = (long)d;
	} else if (c->retry_after_ms < 0) {
		c->retry_after_ms = llm_parse_retry_after(v, util_now_s());
	}
	free(v);
	return 0;
}

static int llm_on_data(void *ctx, long status, const char *buf, size_t len)
{
	struct llm_call *c = ctx;
	if (status < 200 || status > 299) {
		if (c->errbody.len + len <= LLM_ERRBODY_MAX)
			sbuf_add(&c->errbody, buf, len);
		return 0;
	}
	char *err = NULL;
	if (sse_feed(&c->sse, buf, len, &err) < 0) {
		llm_set_error(c, "invalid_response", "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

static bool llm_retryable_status(long s)
{
	return s == 408 || s == 409 || s == 429 || (s >= 500 && s <= 599);
}

static void llm_http_done(void *ctx, const struct http_result *res);

static int llm_attempt_start(struct llm_call *c, int64_t start_at, char **err)
{
	c->attempt++;
	sse_release(&c->sse);
	sse_init(&c->sse, LLM_SSE_MAX, llm_sse_event, c);
	c->errbody.len = 0;
	c->retry_after_ms = -1;
	c->complete = false;
	int64_t left_ms = (c->deadline_ns - start_at) / 1000000;
	struct http_request_opts o = {
		.url = c->url,
		.headers = (const char *const *)c->headers,
		.body = c->body,
		.body_len = strlen(c->body),
		.timeout_ms = left_ms > 1 ? (long)left_ms : 1,
		.connect_timeout_ms = c->connect_timeout_ms,
		.start_at_ns = start_at,
		.cancel = c->cancel,
		.on_header = llm_on_header,
		.on_data = llm_on_data,
		.on_done = llm_http_done,
		.ctx = c,
	};
	return http_multi_start(c->m, &o, err);
}

/* Retries when time and attempts are left: returns true when the next
 * attempt is queued. */
static bool llm_retry(struct llm_call *c)
{
	if (c->output || c->attempt >= c->max_attempts ||
	    (c->cancel && *c->cancel))
		return false;
	long delay = c->retry_after_ms;
	if (delay < 0) {
		long d = c->backoff_base_ms;
		for (int i = 1; i < c->attempt && d < c->backoff_max_ms; i++)
			d *= 2;
		if (d > c->backoff_max_ms)
			d = c->backoff_max_ms;
		uint32_t r;
		util_random(&r, sizeof(r));
		/* Jitter: between half and all of the backoff. */
		delay = d / 2 + (long)((double)(d - d / 2) * ((double)r / 4294967296.0));
	}
	int64_t at = util_mono_ns() + (int64_t)delay * 1000000;
	if (at >= c->deadline_ns)
		return false;
	char *err = NULL;
	if (llm_attempt_start(c, at, &err) < 0) {
		free(err);
		return false;
	}
	c->failed = false;
	return true;
}

static void llm_http_error(struct llm_call *c, long status)
{
	cJSON *j = cJSON_ParseWithLength(c->errbody.data ? c->errbody.data : "",
					 c->errbody.len);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	char *prefix = xasprintf("HTTP %ld: ", status);
	if (cJSON_IsObject(e)) {
		llm_error_object(c, e, prefix);
	} else {
		char *body = util_sanitize(c->errbody.data ? c->errbody.data : "",
					   c->errbody.len > 200 ? 200 : c->errbody.len, false);
		llm_set_error(c, status == 429 ? "rate_limit_error" : "http_error", "HTTP %ld%s%s",
			      status, *body ? ": " : "", body);
		free(body);
	}
	free(prefix);
	cJSON_Delete(j);
}

static void llm_http_done(void *ctx, const struct http_result *res)
{
	struct llm_call *c = ctx;
	switch (res->outcome) {
	case HTTP_CANCELLED:
		c->failed = false;
		llm_set_error(c, "cancelled", "cancelled");
		break;
	case HTTP_ABORTED:
		llm_set_error(c, "invalid_response", "the response was refused");
		break;
	case HTTP_FAILED:
		if (res->timed_out || util_mono_ns() >= c->deadline_ns) {
			llm_set_error(c, "timeout", "timed out: %s", res->error);
			break;
		}
		llm_set_error(c, "network_error", "%s", res->error);
		if (llm_retry(c))
			return;
		break;
	case HTTP_DONE:
		if (res->status < 200 || res->status > 299) {
			llm_http_error(c, res->status);
			if (llm_retryable_status(res->status) && llm_retry(c))
				return;
			break;
		}
		if (!c->failed) {
			char *err = NULL;
			if (sse_finish(&c->sse, &err) < 0)
				llm_set_error(c, "invalid_response", "%s", err);
			free(err);
		}
		if (!c->failed && !c->complete &&
		    !(c->provider == LLM_OPENAI && c->stop_reason))
			llm_set_error(c, "incomplete_response", "the stream ended before %s",
				      c->provider == LLM_ANTHROPIC ? "message_stop" : "[DONE]");
		break;
	}
	llm_finish(c, res->status);
}

/* --- starting a call ----------------------------------------------------- */

static bool llm_header_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int llm_call_start(struct http_multi *m, const struct llm_config *cfg,
		   const struct llm_request *req, const struct llm_callbacks *cb,
		   char **err)
{
	const char *base = cfg->base_url;
	if (!base || (strncmp(base, "http://", 7) && strncmp(base, "https://", 8)))
		return err_set(err, "the base URL must start with http:// or https://");
	if (!llm_header_safe(base))
		return err_set(err, "the base URL has control characters");
	if (!cfg->api_key || !*cfg->api_key)
		return err_set(err, "no API key");
	if (!llm_header_safe(cfg->api_key))
		return err_set(err, "the API key has control characters");
	char *body = llm_request_body(cfg->provider, req, err);
	if (!body)
		return -1;
	struct llm_call *c = xcalloc(1, sizeof(*c));
	c->m = m;
	c->provider = cfg->provider;
	c->body = body;
	c->key = xstrdup(cfg->api_key);
	size_t bl = strlen(base);
	while (bl > 0 && base[bl - 1] == '/')
		bl--;
	c->url = xasprintf("%.*s%s", (int)bl, base,
			   cfg->provider == LLM_ANTHROPIC ? "/v1/messages" : "/chat/completions");
	c->headers = xcalloc(5, sizeof(*c->headers));
	size_t nh = 0;
	if (cfg->provider == LLM_ANTHROPIC) {
		c->headers[nh++] = xasprintf("x-api-key: %s", cfg->api_key);
		c->headers[nh++] = xstrdup("anthropic-version: 2023-06-01");
	} else {
		c->headers[nh++] = xasprintf("Authorization: Bearer %s", cfg->api_key);
	}
	c->headers[nh++] = xstrdup("content-type: application/json");
	c->headers[nh++] = xstrdup("accept: text/event-stream");
	if (cb)
		c->cb = *cb;
	c->cancel = cfg->cancel;
	c->max_attempts = cfg->max_attempts > 0 ? cfg->max_attempts : 4;
	long total = cfg->total_timeout_ms > 0 ? cfg->total_timeout_ms : 600000;
	c->deadline_ns = util_mono_ns() + (int64_t)total * 1000000;
	c->connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 10000;
	c->backoff_base_ms = cfg->backoff_base_ms > 0 ? cfg->backoff_base_ms : 500;
	c->backoff_max_ms = cfg->backoff_max_ms > 0 ? cfg->backoff_max_ms : 8000;
	sbuf_init(&c->errbody);
	sse_init(&c->sse, LLM_SSE_MAX, llm_sse_event, c);
	if (llm_attempt_start(c, util_mono_ns(), err) < 0) {
		llm_call_free(c);
		return -1;
	}
	return 0;
}
