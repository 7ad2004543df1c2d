/* LLM clients without a network: Retry-After parsing and the request
 * bodies of both providers. The streaming and retries run against the
 * replay server in tests/integration/test_ask.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

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
	struct llm_message msgs[] = { { "user", "hi" }, { "assistant", "yes?" },
				      { "user", "more" } };
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
	struct llm_message msg = { "user", "hi" }, bad = { "system", "x" };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_bad_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
