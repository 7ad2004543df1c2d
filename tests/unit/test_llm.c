/* LLM clients without a network: Retry-After parsing and the request
 * bodies of both providers. The streaming and retries run against the
 * replay server in tests/integration/test_ask.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/llm_agent.h"
#include "core/llm.h"
#include "core/util.h"

#include "core/banned.h"

static void test_retry_after(void **state)
{
	(void)state;
	double now = 1445412480.0; /* Wed, 21 Oct 2015 07:28:00 GMT */
	assert_int_equal(llm_parse_retry_after("1", now), 1000);
	assert_int_equal(llm_parse_retry_after(" 120 ", now), 120000);
	assert_int_equal(llm_parse_retry_after("0.5", now), 500);
	assert_int_equal(llm_parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now), 30000);
	assert_int_equal(llm_parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), 0);
	assert_int_equal(llm_parse_retry_after("", now), -1);
	assert_int_equal(llm_parse_retry_after("soon", now), -1);
	assert_int_equal(llm_parse_retry_after("-3", now), -1);
	assert_int_equal(llm_parse_retry_after("5s", now), -1);
}

static cJSON *body_of(enum llm_provider p, const struct llm_request *req)
{
	char *err = NULL;
	char *s = llm_request_body(p, req, &err);
	assert_non_null(s);
	cJSON *j = cJSON_Parse(s);
	free(s);
	assert_non_null(j);
	return j;
}

static const char *jstr(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static void test_bodies(void **state)
{
	(void)state;
	struct llm_message msgs[] = { { .role = "user", .content = "hi" },
				      { .role = "assistant", .content = "yes?" },
				      { .role = "user", .content = "more" } };
	struct llm_tool tool = { "fx_rate", "an FX rate",
				 "{\"type\":\"object\",\"properties\":{\"pair\":{\"type\":\"string\"}}}" };
	struct llm_request req = { .model = "m1", .system = "be brief", .messages = msgs,
				   .nmessages = 3, .max_tokens = 50, .temperature = 0.25,
				   .tools = &tool, .ntools = 1 };
	cJSON *a = body_of(LLM_ANTHROPIC, &req);
	assert_string_equal(jstr(a, "model"), "m1");
	assert_string_equal(jstr(a, "system"), "be brief");
	assert_int_equal(cJSON_GetObjectItem(a, "max_tokens")->valueint, 50);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(a, "stream")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(a, "messages")), 3);
	cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "tools"), 0);
	assert_string_equal(jstr(t, "name"), "fx_rate");
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(t, "input_schema")));
	assert_null(cJSON_GetObjectItem(a, "stream_options"));
	cJSON_Delete(a);

	cJSON *o = body_of(LLM_OPENAI, &req);
	cJSON *m = cJSON_GetObjectItem(o, "messages");
	assert_int_equal(cJSON_GetArraySize(m), 4);
	assert_string_equal(jstr(cJSON_GetArrayItem(m, 0), "role"), "system");
	assert_null(cJSON_GetObjectItem(o, "system"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
		cJSON_GetObjectItem(o, "stream_options"), "include_usage")));
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "tools"), 0);
	assert_string_equal(jstr(t, "type"), "function");
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "function"),
						       "parameters")));
	cJSON_Delete(o);

	/* No temperature when negative, no tools when none. */
	req.temperature = -1;
	req.ntools = 0;
	req.system = NULL;
	a = body_of(LLM_ANTHROPIC, &req);
	assert_null(cJSON_GetObjectItem(a, "temperature"));
	assert_null(cJSON_GetObjectItem(a, "tools"));
	assert_null(cJSON_GetObjectItem(a, "system"));
	cJSON_Delete(a);
}

static void test_bad_requests(void **state)
{
	(void)state;
	struct llm_message msg = { .role = "user", .content = "hi" };
	struct llm_message bad = { .role = "system", .content = "x" };
	struct llm_tool tool = { "t", NULL, "[1]" };
	struct llm_request reqs[] = {
		{ .model = "", .messages = &msg, .nmessages = 1, .max_tokens = 1 },
		{ .model = "m", .messages = &msg, .nmessages = 1, .max_tokens = 0 },
		{ .model = "m", .messages = &msg, .nmessages = 0, .max_tokens = 1 },
		{ .model = "m", .messages = &bad, .nmessages = 1, .max_tokens = 1 },
		{ .model = "m", .messages = &msg, .nmessages = 1, .max_tokens = 1,
		  .tools = &tool, .ntools = 1 },
	};
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		char *err = NULL;
		assert_null(llm_request_body(LLM_ANTHROPIC, &reqs[i], &err));
		assert_non_null(err);
		free(err);
	}
	/* A key with a line break could inject headers: refused. */
	struct http_multi *mh = NULL;
	char *err = NULL;
	assert_int_equal(http_multi_new(&mh, &err), 0);
	struct llm_config cfg = { .provider = LLM_ANTHROPIC, .base_url = "http://127.0.0.1:9",
				  .api_key = "sk-abc\r\nX-Evil: 1" };
	assert_int_equal(llm_call_start(mh, &cfg, &reqs[0], NULL, &err), -1);
	assert_null(strstr(err, "sk-abc"));
	free(err);
	err = NULL;
	cfg.api_key = "sk-abc";
	cfg.base_url = "file:///etc/passwd";
	struct llm_request ok = { .model = "m", .messages = &msg, .nmessages = 1, .max_tokens = 1 };
	assert_int_equal(llm_call_start(mh, &cfg, &ok, NULL, &err), -1);
	free(err);
	assert_int_equal(http_multi_pending(mh), 0);
	http_multi_free(&mh);
	assert_null(mh);
}


/* A conversation with tool calls and their results, as each API wants it. */
static void test_tool_turns(void **state)
{
	(void)state;
	struct llm_tool_call calls[] = {
		{ "toolu_1", "fx_rates", "{\"pair\":\"USD/JPY\",\"start\":\"1987-03-20\"}" },
		{ "toolu_2", "news_get", "" },
	};
	struct llm_message msgs[] = {
		{ .role = "user", .content = "look" },
		{ .role = "assistant", .content = "Checking.", .tool_calls = calls, .ntool_calls = 2 },
		{ .role = "tool", .content = "{\"points\":[]}", .tool_call_id = "toolu_1" },
		{ .role = "tool", .content = "no story x", .tool_call_id = "toolu_2", .is_error = 1 },
		{ .role = "assistant", .content = "Done." },
	};
	struct llm_tool tool = { "fx_rates", "rates", "{\"type\":\"object\"}" };
	struct llm_request req = { .model = "m", .system = "sys", .messages = msgs, .nmessages = 5,
				   .max_tokens = 10, .temperature = -1, .tools = &tool, .ntools = 1 };

	/* Anthropic: tool_use blocks with parsed input; both results in one
	 * user message of tool_result blocks. */
	cJSON *a = body_of(LLM_ANTHROPIC, &req);
	cJSON *m = cJSON_GetObjectItem(a, "messages");
	assert_int_equal(cJSON_GetArraySize(m), 4);
	cJSON *asst = cJSON_GetArrayItem(m, 1);
	assert_string_equal(jstr(asst, "role"), "assistant");
	cJSON *blocks = cJSON_GetObjectItem(asst, "content");
	assert_int_equal(cJSON_GetArraySize(blocks), 3);
	assert_string_equal(jstr(cJSON_GetArrayItem(blocks, 0), "type"), "text");
	assert_string_equal(jstr(cJSON_GetArrayItem(blocks, 0), "text"), "Checking.");
	cJSON *tu = cJSON_GetArrayItem(blocks, 1);
	assert_string_equal(jstr(tu, "type"), "tool_use");
	assert_string_equal(jstr(tu, "id"), "toolu_1");
	assert_string_equal(jstr(tu, "name"), "fx_rates");
	assert_string_equal(jstr(cJSON_GetObjectItem(tu, "input"), "pair"), "USD/JPY");
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetArrayItem(blocks, 2), "input")));
	cJSON *res = cJSON_GetArrayItem(m, 2);
	assert_string_equal(jstr(res, "role"), "user");
	cJSON *rb = cJSON_GetObjectItem(res, "content");
	assert_int_equal(cJSON_GetArraySize(rb), 2);
	assert_string_equal(jstr(cJSON_GetArrayItem(rb, 0), "type"), "tool_result");
	assert_string_equal(jstr(cJSON_GetArrayItem(rb, 0), "tool_use_id"), "toolu_1");
	assert_string_equal(jstr(cJSON_GetArrayItem(rb, 0), "content"), "{\"points\":[]}");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(rb, 0), "is_error")));
	assert_string_equal(jstr(cJSON_GetArrayItem(rb, 1), "tool_use_id"), "toolu_2");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(rb, 1), "is_error")));
	assert_string_equal(jstr(cJSON_GetArrayItem(m, 3), "content"), "Done.");
	cJSON_Delete(a);

	/* OpenAI: tool_calls with arguments as a JSON string; role "tool". */
	cJSON *o = body_of(LLM_OPENAI, &req);
	m = cJSON_GetObjectItem(o, "messages");
	assert_int_equal(cJSON_GetArraySize(m), 6); /* system, user, assistant, 2 tools, assistant */
	asst = cJSON_GetArrayItem(m, 2);
	assert_string_equal(jstr(asst, "content"), "Checking.");
	cJSON *tcs = cJSON_GetObjectItem(asst, "tool_calls");
	assert_int_equal(cJSON_GetArraySize(tcs), 2);
	cJSON *tc = cJSON_GetArrayItem(tcs, 0);
	assert_string_equal(jstr(tc, "id"), "toolu_1");
	assert_string_equal(jstr(tc, "type"), "function");
	cJSON *fn = cJSON_GetObjectItem(tc, "function");
	assert_string_equal(jstr(fn, "name"), "fx_rates");
	cJSON *args = cJSON_Parse(jstr(fn, "arguments"));
	assert_string_equal(jstr(args, "start"), "1987-03-20");
	cJSON_Delete(args);
	assert_string_equal(jstr(cJSON_GetObjectItem(cJSON_GetArrayItem(tcs, 1), "function"),
				 "arguments"), "{}");
	cJSON *tr = cJSON_GetArrayItem(m, 3);
	assert_string_equal(jstr(tr, "role"), "tool");
	assert_string_equal(jstr(tr, "tool_call_id"), "toolu_1");
	assert_string_equal(jstr(cJSON_GetArrayItem(m, 4), "tool_call_id"), "toolu_2");
	cJSON_Delete(o);

	/* An assistant turn of tool calls only: OpenAI content null, Anthropic
	 * no text block. */
	msgs[1].content = NULL;
	o = body_of(LLM_OPENAI, &req);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(o, "messages"), 2), "content")));
	cJSON_Delete(o);
	a = body_of(LLM_ANTHROPIC, &req);
	blocks = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "messages"), 1),
				     "content");
	assert_int_equal(cJSON_GetArraySize(blocks), 2);
	assert_string_equal(jstr(cJSON_GetArrayItem(blocks, 0), "type"), "tool_use");
	cJSON_Delete(a);
	msgs[1].content = "Checking.";

	/* Refused: a tool result without its id, arguments that are not an
	 * object, a tool call from the user, a tool name the APIs reject. */
	char *err = NULL;
	msgs[2].tool_call_id = NULL;
	assert_null(llm_request_body(LLM_ANTHROPIC, &req, &err));
	assert_non_null(strstr(err, "tool_call_id"));
	free(err);
	err = NULL;
	msgs[2].tool_call_id = "toolu_1";
	calls[0].arguments = "[1,2]";
	assert_null(llm_request_body(LLM_OPENAI, &req, &err));
	free(err);
	err = NULL;
	calls[0].arguments = NULL;
	msgs[0].tool_calls = calls;
	msgs[0].ntool_calls = 1;
	assert_null(llm_request_body(LLM_OPENAI, &req, &err));
	free(err);
	err = NULL;
	msgs[0].tool_calls = NULL;
	msgs[0].ntool_calls = 0;
	tool.name = "mcp.fx.rates";
	assert_null(llm_request_body(LLM_ANTHROPIC, &req, &err));
	assert_non_null(strstr(err, "[a-zA-Z0-9_-]{1,64}"));
	free(err);
}

static void test_tool_names(void **state)
{
	(void)state;
	char out[65];
	llm_tool_name("yahoo.fx_rates", out);
	assert_string_equal(out, "yahoo_fx_rates");
	assert_true(llm_tool_name_ok(out));
	llm_tool_name("news-get", out);
	assert_string_equal(out, "news-get");
	char longname[100];
	memset(longname, 'a', 99);
	longname[99] = '\0';
	llm_tool_name(longname, out);
	assert_int_equal(strlen(out), 64);
	assert_true(llm_tool_name_ok(out));
	assert_false(llm_tool_name_ok(""));
	assert_false(llm_tool_name_ok("a.b"));
	assert_false(llm_tool_name_ok(longname));
	assert_true(llm_tool_name_ok("Az09_-"));
}

static const char *const llm_vars[] = {
	"MADF_LLM", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAUDE_MODEL_EXECUTION",
	"CLAUDE_MODEL_ORCHESTRATOR", "OPENAI_MODEL", "OPENAI_MODEL_EXECUTION",
	"OPENAI_MODEL_ORCHESTRATOR", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL",
	"MADF_LLM_MAX_STEPS", "MADF_LLM_MAX_TOKENS", "MADF_TASK_TOKEN_BUDGET",
	"MADF_TASK_COST_BUDGET", "MADF_LLM_PRICE_IN", "MADF_LLM_PRICE_OUT",
	"MADF_LLM_CONTINUE_AT_LIMIT",
};

static void clear_llm_env(void)
{
	for (size_t i = 0; i < sizeof(llm_vars) / sizeof(llm_vars[0]); i++)
		unsetenv(llm_vars[i]);
}

/* Mode selection: deterministic without a key or a model, the provider
 * from the key or MADF_LLM, models standing in for each other, budgets. */
static void test_settings(void **state)
{
	(void)state;
	struct llm_agent_settings *s = NULL;
	char *err = NULL;
	clear_llm_env();
	assert_int_equal(llm_agent_settings_from_env(&s, &err), 0);
	assert_null(s);
	char *d = llm_agent_settings_describe(s);
	assert_non_null(strstr(d, "deterministic"));
	free(d);
	cJSON *mf = llm_agent_settings_manifest(NULL);
	assert_string_equal(jstr(mf, "mode"), "deterministic");
	cJSON_Delete(mf);

	setenv("ANTHROPIC_API_KEY", "sk-unit-secret", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), 0);
	assert_null(s); /* a key without a model: deterministic */
	setenv("CLAUDE_MODEL_EXECUTION", "claude-sonnet-4-5", 1);
	setenv("MADF_TASK_TOKEN_BUDGET", "500", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), 0);
	assert_non_null(s);
	assert_int_equal(s->provider, LLM_ANTHROPIC);
	assert_string_equal(s->model_orchestrator, "claude-sonnet-4-5");
	assert_string_equal(s->base_url, "https://api.anthropic.com");
	assert_int_equal(s->max_steps, 8);
	assert_int_equal(s->token_budget, 500);
	assert_false(s->continue_at_limit);
	d = llm_agent_settings_describe(s);
	mf = llm_agent_settings_manifest(s);
	char *mtxt = cJSON_PrintUnformatted(mf);
	assert_null(strstr(d, "sk-unit-secret"));
	assert_null(strstr(mtxt, "sk-unit-secret"));
	assert_string_equal(jstr(mf, "mode"), "llm");
	assert_string_equal(jstr(mf, "provider"), "anthropic");
	free(mtxt);
	cJSON_Delete(mf);
	free(d);
	llm_agent_settings_free(&s);
	assert_null(s);

	setenv("OPENAI_API_KEY", "sk-unit-openai", 1);
	setenv("OPENAI_MODEL", "gpt-4o", 1);
	setenv("MADF_LLM", "openai", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), 0);
	assert_int_equal(s->provider, LLM_OPENAI);
	assert_string_equal(s->model_execution, "gpt-4o");
	llm_agent_settings_free(&s);
	setenv("MADF_LLM", "off", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), 0);
	assert_null(s);
	setenv("MADF_LLM", "mistral", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), -1);
	assert_non_null(strstr(err, "MADF_LLM"));
	free(err);
	err = NULL;
	unsetenv("MADF_LLM");
	setenv("MADF_LLM_MAX_STEPS", "0", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), -1);
	assert_non_null(strstr(err, "MADF_LLM_MAX_STEPS"));
	assert_null(s);
	free(err);
	err = NULL;
	unsetenv("MADF_LLM_MAX_STEPS");
	/* At the cap: skip and carry on, for unattended runs (0 or 1 only). */
	setenv("MADF_LLM_CONTINUE_AT_LIMIT", "1", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), 0);
	assert_true(s->continue_at_limit);
	d = llm_agent_settings_describe(s);
	assert_non_null(strstr(d, "MADF_LLM_CONTINUE_AT_LIMIT"));
	free(d);
	mf = llm_agent_settings_manifest(s);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(mf, "continue_at_limit")));
	cJSON_Delete(mf);
	llm_agent_settings_free(&s);
	setenv("MADF_LLM_CONTINUE_AT_LIMIT", "yes", 1);
	assert_int_equal(llm_agent_settings_from_env(&s, &err), -1);
	assert_non_null(strstr(err, "MADF_LLM_CONTINUE_AT_LIMIT"));
	assert_null(s);
	free(err);
	clear_llm_env();
}

/* The input estimate a one-call task (the narrative) is capped by: about
 * one token per four bytes of the system prompt, the messages and the tool
 * calls' names and arguments, rounded up. */
static void test_input_estimate(void **state)
{
	(void)state;
	assert_int_equal(llm_agent_input_estimate(NULL, NULL), 0);
	assert_int_equal(llm_agent_input_estimate("abcd", NULL), 1);
	assert_int_equal(llm_agent_input_estimate("abcde", NULL), 2);
	cJSON *conv = cJSON_Parse("[{\"role\":\"user\",\"content\":\"12345678\"},"
				  "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":"
				  "[{\"id\":\"c1\",\"name\":\"fx\",\"arguments\":\"{}\"}]},"
				  "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"abcd\"}]");
	assert_non_null(conv);
	/* 4 + 8 + (2 + 2) + 4 = 20 bytes */
	assert_int_equal(llm_agent_input_estimate("sys!", conv), 5);
	cJSON_Delete(conv);
	/* The budget check before a call adds it: a task that used nothing yet
	 * is at a 100-token cap when its call's input is about 100 tokens. */
	struct llm_agent_settings b = { .token_budget = 100, .price_in = -1, .price_out = -1 };
	struct llm_agent_usage u = { .input_tokens = llm_agent_input_estimate(NULL, NULL) };
	assert_false(llm_agent_budget_reached(&b, &u, 0, 0));
	char big[401];
	memset(big, 'x', 400);
	big[400] = '\0';
	u.input_tokens = llm_agent_input_estimate(big, NULL);
	assert_int_equal(u.input_tokens, 100);
	assert_true(llm_agent_budget_reached(&b, &u, 0, 0));
}

static void test_prices_and_budget(void **state)
{
	(void)state;
	double in, out;
	assert_true(llm_agent_price(NULL, "claude-opus-4-1-20250805", &in, &out));
	assert_true(in == 15 && out == 75);
	assert_true(llm_agent_price(NULL, "claude-opus-4-5", &in, &out));
	assert_true(in == 5 && out == 25);
	assert_true(llm_agent_price(NULL, "gpt-4o-mini-2024", &in, &out));
	assert_true(in == 0.15 && out == 0.6);
	assert_false(llm_agent_price(NULL, "llama3:8b", &in, &out));
	assert_true(in == 0 && out == 0);
	struct llm_agent_settings s = { .price_in = 2, .price_out = 3 };
	assert_true(llm_agent_price(&s, "llama3:8b", &in, &out));
	assert_true(in == 2 && out == 3);

	struct llm_agent_settings b = { .token_budget = 1000, .price_in = -1, .price_out = -1 };
	struct llm_agent_usage u = { .calls = 1, .input_tokens = 600, .output_tokens = 300 };
	assert_false(llm_agent_budget_reached(&b, &u, 0, 0));
	u.output_tokens = 400;
	assert_true(llm_agent_budget_reached(&b, &u, 0, 0));
	assert_false(llm_agent_budget_reached(&b, &u, 500, 0)); /* approved extra */
	b.token_budget = 0;
	b.cost_budget = 0.01;
	u.cost_usd = 0.02;
	assert_true(llm_agent_budget_reached(&b, &u, 0, 0));
	assert_false(llm_agent_budget_reached(&b, &u, 0, 0.05));
	assert_false(llm_agent_budget_reached(NULL, &u, 0, 0));
}

/* usage.json: deltas add up per agent and per task; a corrupt file is an
 * error and is left alone. */
static void test_usage_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/madf-test-llm-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct llm_agent_usage d1 = { 1, 100, 10, 0.5 }, d2 = { 1, 200, 20, 0.25 };
	char *err = NULL;
	assert_int_equal(llm_agent_usage_record(dir, "research_agent_1", "t1", "USDJPY-market", &d1, NULL,
					  &err), 0);
	assert_int_equal(llm_agent_usage_record(dir, "research_agent_1", "t2", NULL, &d2, NULL, &err), 0);
	assert_int_equal(llm_agent_usage_record(dir, "validator_agent", "t3", NULL, &d2, "done", &err), 0);
	static const struct llm_agent_usage zero;
	assert_int_equal(llm_agent_usage_record(dir, "research_agent_1", "t1", NULL, &zero,
					  "awaiting_approval", &err), 0);
	char *path = xasprintf("%s/llm/usage.json", dir), *buf;
	size_t len;
	assert_int_equal(util_read_file(path, 1 << 20, &buf, &len, &err), 0);
	cJSON *j = cJSON_Parse(buf);
	free(buf);
	cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "agents"), "research_agent_1");
	struct llm_agent_usage u;
	llm_agent_usage_from_json(a, &u);
	assert_int_equal(u.calls, 2);
	assert_int_equal(u.input_tokens, 300);
	assert_int_equal(u.output_tokens, 30);
	assert_true(u.cost_usd > 0.749 && u.cost_usd < 0.751);
	cJSON *t1 = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tasks"), "t1");
	assert_string_equal(jstr(t1, "agent"), "research_agent_1");
	assert_string_equal(jstr(t1, "status"), "awaiting_approval");
	assert_string_equal(jstr(t1, "label"), "USDJPY-market");
	llm_agent_usage_from_json(t1, &u);
	assert_int_equal(u.input_tokens, 100);
	assert_string_equal(jstr(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "tasks"), "t2"),
				 "status"), "running");
	assert_non_null(jstr(j, "updated_at"));
	cJSON_Delete(j);
	FILE *f = fopen(path, "w");
	fputs("{broken", f);
	fclose(f);
	assert_int_equal(llm_agent_usage_record(dir, "research_agent_1", "t1", NULL, &d1, NULL, &err), -1);
	assert_non_null(strstr(err, "corrupt"));
	free(err);
	assert_int_equal(util_read_file(path, 1 << 20, &buf, &len, NULL), 0);
	assert_string_equal(buf, "{broken");
	free(buf);
	free(path);
	util_rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_tool_turns),
		cmocka_unit_test(test_tool_names),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_prices_and_budget),
		cmocka_unit_test(test_input_estimate),
		cmocka_unit_test(test_usage_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
