/* LLM clients over HTTP: the Anthropic Messages API and OpenAI-compatible
 * Chat Completions (OpenAI, Ollama, llama.cpp server, vLLM), streaming,
 * on the caller's http_multi loop. Retries 408, 409, 429 and 5xx (529
 * included) before anything streamed, honouring retry-after, else with
 * exponential backoff and jitter; a total timeout; cancellation by flag. */
#ifndef MADF_LLM_H
#define MADF_LLM_H

#include <signal.h>
#include <stddef.h>

#include "core/http.h"

enum llm_provider { LLM_ANTHROPIC, LLM_OPENAI };

/* Where and how to call. llm_call_start copies what it needs, so the
 * strings may go after it returns. The key is sent in a header only and
 * never appears in an error text. */
struct llm_config {
	enum llm_provider provider;
	const char *base_url;    /* e.g. https://api.anthropic.com, https://api.openai.com/v1 */
	const char *api_key;
	int max_attempts;        /* >= 1; 0 means 4 */
	long total_timeout_ms;   /* every attempt and wait; 0 means 10 minutes */
	long connect_timeout_ms; /* 0 means 10 s */
	long backoff_base_ms;    /* first backoff; 0 means 500 ms */
	long backoff_max_ms;     /* 0 means 8 s */
	volatile sig_atomic_t *cancel; /* nonzero ends the call; may be NULL */
};

/* A tool call the model made, as sent back in a later request. */
struct llm_tool_call {
	const char *id;
	const char *name;      /* as the model knows it (see llm_tool_name) */
	const char *arguments; /* a JSON object as text; NULL or "": {} */
};

/* One turn of the conversation. "user": content. "assistant": content
 * (may be NULL or "" when it made tool calls) and its tool_calls. "tool":
 * the result (content) of the call tool_call_id, is_error when the tool
 * failed. Anthropic gets consecutive "tool" turns as one user message of
 * tool_result blocks, OpenAI as role "tool" messages. */
struct llm_message {
	const char *role;
	const char *content;
	const struct llm_tool_call *tool_calls;
	size_t ntool_calls;
	const char *tool_call_id;
	int is_error;
};

struct llm_tool {
	const char *name;
	const char *description;
	const char *input_schema; /* JSON Schema object, as JSON text */
};

struct llm_request {
	const char *model;
	const char *system;  /* may be NULL */
	const struct llm_message *messages;
	size_t nmessages;
	long max_tokens;
	double temperature;  /* < 0: not sent */
	const struct llm_tool *tools;
	size_t ntools;
};

/* How a call ended, valid during on_done. ok is 1 on success; otherwise
 * error_type ("rate_limit_error", "overloaded_error", "timeout",
 * "cancelled", "network_error", ...) and error say why. */
struct llm_result {
	int ok;
	const char *stop_reason; /* "end_turn", "stop", "tool_use", ... or "" */
	long input_tokens, output_tokens;
	const char *error_type;
	const char *error;
	long http_status;        /* of the last attempt, 0 when none */
	int attempts;
};

/* Streaming callbacks (any may be NULL); text is not NUL-terminated. A
 * tool call is announced by on_tool_use_start with the block index, then
 * its JSON arguments arrive in pieces through on_tool_use_args. on_done is
 * called exactly once. */
struct llm_callbacks {
	void (*on_text)(void *ctx, const char *text, size_t len);
	void (*on_tool_use_start)(void *ctx, int index, const char *id, const char *name);
	void (*on_tool_use_args)(void *ctx, int index, const char *json, size_t len);
	void (*on_done)(void *ctx, const struct llm_result *res);
	void *ctx;
};

/* The JSON body of one request (stream: true), for the provider; the
 * caller frees it. NULL with *err when the request is invalid. */
char *llm_request_body(enum llm_provider provider, const struct llm_request *req,
		       char **err);

/* Whether name is a tool name both APIs accept: ^[a-zA-Z0-9_-]{1,64}$. */
int llm_tool_name_ok(const char *name);
/* A registry tool name (which may hold '.') as the APIs accept it: every
 * other character becomes '_', cut to 64; out has 65 bytes. The mapping
 * is not one to one: keep a table to map the model's calls back. */
void llm_tool_name(const char *name, char out[65]);

/* Starts a call on m; it progresses in http_multi_dispatch. Returns 0, or
 * -1 with *err (the request is invalid; on_done is not called). */
int llm_call_start(struct http_multi *m, const struct llm_config *cfg,
		   const struct llm_request *req, const struct llm_callbacks *cb,
		   char **err);

/* Parses a Retry-After value (delay seconds, or an HTTP date), and returns
 * the delay in ms from now_s (Unix seconds), or -1 when it is not valid. */
long llm_parse_retry_after(const char *value, double now_s);

#endif
