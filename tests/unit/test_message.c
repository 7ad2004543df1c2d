/* Messages: strict JSON, envelope and content validation, seed 003
 * normalisation, canonical output, ids. JSON in these tests is written with
 * single quotes (q() turns them into double quotes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

static char *q(const char *s)
{
	char *d = xstrdup(s);
	for (char *p = d; *p; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

static const char *const valid_content[MSG_TYPE_COUNT] = {
	[MSG_TASK_ASSIGNMENT] =
		"{'task_type':'forex_research','focus_area':'Asia/G10',"
		"'target_pairs':['USD/JPY','EUR/USD'],'timeframe':'this_week',"
		"'data_sources':['alpha_vantage','newsapi'],"
		"'deadline':'2024-12-20T17:00:00Z','output_format':'structured_json',"
		"'special_instructions':'Focus on central bank policy impacts'}",
	[MSG_TASK_ACCEPTANCE] =
		"{'task_id':'pm_20241220_150000_001','status':'accepted',"
		"'estimated_completion':'2024-12-20T16:30:00Z','agent_capacity':0.4,"
		"'rejection_reason':null}",
	[MSG_TASK_PROGRESS] =
		"{'task_id':'t1','percent_complete':42.5,'current_step':'fetching rates',"
		"'estimated_completion':'2024-12-20T16:30:00+09:00','items_done':17,"
		"'items_total':40}",
	[MSG_RESEARCH_RESULT] =
		"{'task_id':'pm_20241220_150000_001','status':'completed',"
		"'execution_time_minutes':45.2,'data_points_collected':127,"
		"'sources_accessed':['alpha_vantage','newsapi'],"
		"'key_findings':['USD/JPY showing strength','EUR/USD under pressure'],"
		"'raw_data':{'forex_rates':{},'news_articles':{}},"
		"'confidence_score':0.87,'data_freshness_hours':2.3,"
		"'warnings':['Alpha Vantage rate limit reached']}",
	[MSG_VALIDATION_REQUEST] =
		"{'research_results_to_validate':['ra1_1','ra2_1'],"
		"'validation_type':'cross_reference','validation_sources':['reuters'],"
		"'priority_areas':['USD/JPY'],'deadline':'2024-12-20T18:00:00Z'}",
	[MSG_VALIDATION_RESULT] =
		"{'validation_id':'v1','research_results_validated':['ra1_1'],"
		"'overall_confidence':0.9,'issues_found':[{'issue_type':'conflict',"
		"'severity':'medium','description':'rates differ',"
		"'affected_data':{'pair':'USD/JPY'},'recommendation':'prefer reuters',"
		"'confidence':0.7}],'validated_findings':['USD/JPY up'],"
		"'execution_time_minutes':3.5,'sources_consulted':['reuters']}",
	[MSG_ERROR_REPORT] =
		"{'error_type':'api_failure','error_message':'HTTP 429',"
		"'context':{'tool':'alpha_vantage'},'stack_trace':null,"
		"'recovery_action':'used cache','impact_level':'medium',"
		"'related_task_id':'t1'}",
	[MSG_HEARTBEAT] =
		"{'status':'busy','uptime_seconds':12.5,'active_tasks':1,"
		"'current_task':'t1','pid':4242,'sequence':7}",
	[MSG_SYSTEM_STATUS] =
		"{'agent_status':'healthy','cpu_usage_percent':12.5,"
		"'memory_usage_mb':256,'active_tasks':1,'completed_tasks_today':5,"
		"'error_count_today':0,'last_successful_operation':'2024-12-20T15:00:00Z',"
		"'performance_metrics':{'avg_latency_ms':120.5,'success_rate':0.98}}",
};

/* A full message of the given type around content (single-quoted JSON). */
static char *envelope(enum msg_type t, const char *content)
{
	char *c = q(content);
	char *s = xasprintf("{\"message_id\":\"pm_20241220_150000_001\","
			    "\"from\":\"product_manager\",\"to\":\"research_agent_1\","
			    "\"type\":\"%s\",\"timestamp\":\"2024-12-20T15:00:00Z\","
			    "\"content\":%s}", msg_type_name(t), c);
	free(c);
	return s;
}

static struct msg *parse_ok_n(const char *buf, size_t len)
{
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	int r = msg_parse(buf, len, &m, &errs);
	if (r != 0) {
		char *j = msg_errors_join(&errs);
		print_error("unexpected errors: %s\n", j);
		free(j);
	}
	assert_int_equal(r, 0);
	assert_int_equal(errs.count, 0);
	assert_non_null(m);
	return m;
}

static struct msg *parse_ok(const char *json)
{
	return parse_ok_n(json, strlen(json));
}

static void expect_errors_n(const char *buf, size_t len, const char *expected)
{
	struct msg *m = (struct msg *)1;
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_parse(buf, len, &m, &errs), -1);
	assert_null(m);
	assert_true(errs.count >= 1);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, expected);
	free(j);
	msg_errors_release(&errs);
	assert_int_equal(errs.count, 0);
}

static void expect_errors(const char *json, const char *expected)
{
	expect_errors_n(json, strlen(json), expected);
}

/* Single-quoted json; expected errors. */
static void expect_errors_q(const char *json, const char *expected)
{
	char *s = q(json);
	expect_errors(s, expected);
	free(s);
}

/* The valid content of type t with field set to value (single-quoted JSON,
 * NULL deletes it), wrapped in an envelope, must fail with expected. */
static void expect_content_error(enum msg_type t, const char *field,
				 const char *value, const char *expected)
{
	char *c = q(valid_content[t]);
	cJSON *obj = cJSON_Parse(c);
	assert_non_null(obj);
	cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
	if (value) {
		char *v = q(value);
		cJSON *item = cJSON_Parse(v);
		assert_non_null(item);
		cJSON_AddItemToObject(obj, field, item);
		free(v);
	}
	char *text = cJSON_PrintUnformatted(obj);
	char *json = envelope(t, text);
	expect_errors(json, expected);
	free(json);
	free(text);
	cJSON_Delete(obj);
	free(c);
}

/* The valid envelope with field set to value (raw JSON, NULL deletes it). */
static char *envelope_with(const char *field, const char *value)
{
	char *base = envelope(MSG_HEARTBEAT, valid_content[MSG_HEARTBEAT]);
	cJSON *obj = cJSON_Parse(base);
	assert_non_null(obj);
	cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
	if (value) {
		cJSON *item = cJSON_Parse(value);
		assert_non_null(item);
		cJSON_AddItemToObject(obj, field, item);
	}
	char *text = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	free(base);
	return text;
}

static void expect_envelope_error(const char *field, const char *value,
				  const char *expected)
{
	char *json = envelope_with(field, value);
	expect_errors(json, expected);
	free(json);
}

static void expect_envelope_ok(const char *field, const char *value)
{
	char *json = envelope_with(field, value);
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
}

static char *json_err(const char *buf, size_t len)
{
	char *err = NULL;
	cJSON *j = json_parse_strict(buf, len, &err);
	assert_null(j);
	assert_non_null(err);
	return err;
}

static void expect_json_error_n(const char *buf, size_t len, const char *expected)
{
	char *err = json_err(buf, len);
	assert_string_equal(err, expected);
	free(err);
}

static void expect_json_error(const char *buf, const char *expected)
{
	expect_json_error_n(buf, strlen(buf), expected);
}

/* ---- Strict JSON ---- */

static void test_json_exact_size_buffer(void **state)
{
	(void)state;
	static const char text[] = "{\"a\":[1,2.5e3,-0.5,true,false,null,\"\\ud83d\\ude00\"]}";
	size_t n = sizeof(text) - 1;
	char *buf = xmalloc(n); /* no terminator */
	memcpy(buf, text, n);
	char *err = NULL;
	cJSON *j = json_parse_strict(buf, n, &err);
	assert_non_null(j);
	assert_null(err);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "a");
	assert_int_equal(cJSON_GetArraySize(a), 7);
	assert_true(cJSON_GetArrayItem(a, 1)->valuedouble == 2500.0);
	assert_string_equal(cJSON_GetArrayItem(a, 6)->valuestring, "\xf0\x9f\x98\x80");
	cJSON_Delete(j);
	/* Only len bytes count: a prefix that is valid JSON on its own. */
	j = json_parse_strict("[1]garbage", 3, &err);
	assert_non_null(j);
	cJSON_Delete(j);
	free(buf);
}

static void test_json_empty_and_trailing(void **state)
{
	(void)state;
	expect_json_error("", "empty input");
	expect_json_error(" \n\t ", "empty input");
	expect_json_error("{} x", "trailing data after JSON value at byte 3");
	expect_json_error("{}{}", "trailing data after JSON value at byte 2");
	expect_json_error("{\"a\" 1}", "invalid JSON at byte 5");
	expect_json_error("[1,]", "invalid JSON at byte 3");
	expect_json_error("{\"a\":1,}", "invalid JSON at byte 7");
	expect_json_error("[1", "invalid JSON at byte 2");
	expect_json_error("\"abc", "invalid JSON at byte 4");
	expect_json_error("\xef\xbb\xbf{}", "invalid JSON at byte 0");
	expect_json_error("\x01{}", "invalid JSON at byte 0");
	expect_json_error("[\"a\tb\"]", "invalid JSON at byte 3");
	expect_json_error("[\"\\x\"]", "invalid JSON at byte 3");
	expect_json_error("[tru]", "invalid JSON at byte 1");
	expect_json_error("{'a':1}", "invalid JSON at byte 1");
}

static void test_json_numbers(void **state)
{
	(void)state;
	expect_json_error("[01]", "invalid JSON at byte 2");
	expect_json_error("[+1]", "invalid JSON at byte 1");
	expect_json_error("[1.]", "invalid JSON at byte 3");
	expect_json_error("[.5]", "invalid JSON at byte 1");
	expect_json_error("[1e]", "invalid JSON at byte 3");
	expect_json_error("[-]", "invalid JSON at byte 2");
	expect_json_error("[NaN]", "invalid JSON at byte 1");
	expect_json_error("[Infinity]", "invalid JSON at byte 1");
	expect_json_error("{\"x\":1e999}", "number out of range at x");
	expect_json_error("[0,-1e999]", "number out of range at [1]");
	expect_json_error("{\"a\":{\"b c\":[1E400]}}",
			  "number out of range at a[\"b c\"][0]");
	char longnum[80];
	memset(longnum, '1', sizeof(longnum));
	longnum[0] = '[';
	longnum[65] = ']';
	longnum[66] = '\0';
	expect_json_error(longnum, "number longer than 63 characters at byte 1");
	char *err = NULL;
	cJSON *j = json_parse_strict("[-0.0,1e-999,123456789012345678]", 32, &err);
	assert_non_null(j);
	assert_true(cJSON_GetArrayItem(j, 1)->valuedouble == 0.0);
	cJSON_Delete(j);
}

static void test_json_depth(void **state)
{
	(void)state;
	size_t n = 300000;
	char *deep = xmalloc(n);
	memset(deep, '[', n);
	expect_json_error_n(deep, n, "nesting deeper than 64 levels");
	/* Objects: {"a":{"a":... */
	for (size_t i = 0; i + 5 <= n; i += 5)
		memcpy(deep + i, "{\"a\":", 5);
	expect_json_error_n(deep, n, "nesting deeper than 64 levels");
	/* 64 levels are fine, 65 are not. */
	char ok[129];
	memset(ok, '[', 64);
	memset(ok + 64, ']', 64);
	char *err = NULL;
	cJSON *j = json_parse_strict(ok, 128, &err);
	assert_non_null(j);
	cJSON_Delete(j);
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	expect_json_error_n(deep, 130, "nesting deeper than 64 levels");
	free(deep);
}

static void test_json_utf8(void **state)
{
	(void)state;
	expect_json_error("[\"ab\xc0\xaf\"]", "invalid UTF-8 at byte 4");        /* overlong '/' */
	expect_json_error("[\"\xe0\x80\xaf\"]", "invalid UTF-8 at byte 2");      /* overlong, 3 bytes */
	expect_json_error("[\"\xed\xa0\x80\"]", "invalid UTF-8 at byte 2");      /* surrogate D800 */
	expect_json_error("[\"\xf4\x90\x80\x80\"]", "invalid UTF-8 at byte 2");  /* U+110000 */
	expect_json_error("[\"\xf8\x88\x80\x80\x80\"]", "invalid UTF-8 at byte 2");
	expect_json_error("[\"\xc3\"]", "invalid UTF-8 at byte 2");              /* truncated */
	expect_json_error("[\"\x80\"]", "invalid UTF-8 at byte 2");              /* lone continuation */
	expect_json_error_n("[\"\xe2\x82", 5, "invalid UTF-8 at byte 2");         /* cut at the end */
	/* Escaped surrogates: only proper pairs. */
	expect_json_error("[\"\\ud800\"]", "invalid JSON at byte 8");
	expect_json_error("[\"\\udc00\"]", "invalid JSON at byte 2");
	expect_json_error("[\"\\ud800\\u0041\"]", "invalid JSON at byte 8");
	char *err = NULL;
	cJSON *j = json_parse_strict("[\"\xe2\x82\xac \xf4\x8f\xbf\xbf \\u20ac\"]", 19, &err);
	assert_non_null(j);
	assert_string_equal(cJSON_GetArrayItem(j, 0)->valuestring,
			    "\xe2\x82\xac \xf4\x8f\xbf\xbf \xe2\x82\xac");
	cJSON_Delete(j);
}

static void test_json_nul(void **state)
{
	(void)state;
	expect_json_error_n("[\"a\0b\"]", 7, "NUL byte at byte 3");
	expect_json_error_n("{}\0", 3, "NUL byte at byte 2");
	expect_json_error("[\"ab\\u0000c\"]", "\\u0000 escape at byte 4");
	expect_json_error("{\"k\\u0000\":1}", "\\u0000 escape at byte 3");
}

static void test_json_duplicates(void **state)
{
	(void)state;
	expect_json_error("{\"from\":\"a\",\"to\":\"b\",\"from\":\"c\"}",
			  "duplicate key \"from\" in object at top level");
	expect_json_error("{\"content\":{\"x\":1,\"x\":2}}",
			  "duplicate key \"x\" in object at content");
	expect_json_error("{\"a\":[{},{\"k\":1,\"\\u006b\":2}]}",
			  "duplicate key \"k\" in object at a[1]");
	/* Many keys: sorted, so the duplicate is found wherever it is. */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addch(&b, '{');
	for (int i = 0; i < 1000; i++)
		sbuf_addf(&b, "\"k%d\":%d,", i, i);
	sbuf_addstr(&b, "\"k7\":0}");
	expect_json_error(b.data, "duplicate key \"k7\" in object at top level");
	sbuf_release(&b);
	/* Case matters. */
	char *err = NULL;
	cJSON *j = json_parse_strict("{\"a\":1,\"A\":2}", 13, &err);
	assert_non_null(j);
	cJSON_Delete(j);
}

static void test_json_path_join(void **state)
{
	(void)state;
	struct {
		const char *prefix, *key, *want;
	} cases[] = {
		{ "content", "task_id", "content.task_id" },
		{ "", "from", "from" },
		{ NULL, "from", "from" },
		{ "content", "a b", "content[\"a b\"]" },
		{ "c", "x.y", "c[\"x.y\"]" },
		{ NULL, "\x1b[31m", "[\"\\u001b[31m\"]" },
		{ "c", "q\"\\", "c[\"q\\\"\\\\\"]" },
		{ "c", "\xc2\x9b", "c[\"\\u009b\"]" },
		{ "c", "caf\xc3\xa9", "c[\"caf\xc3\xa9\"]" },
		{ "c", "", "c[\"\"]" },
		{ "c", "\xff", "c[\"\\xff\"]" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *p = json_path_join(cases[i].prefix, cases[i].key);
		assert_string_equal(p, cases[i].want);
		free(p);
	}
	char key[200];
	memset(key, 'a', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	char *p = json_path_join("c", key);
	assert_int_equal(strlen(p), strlen("c[\"\"]") + 64 + 3);
	assert_string_equal(p + strlen(p) - 6, "a...\"]");
	free(p);
}

/* ---- Valid messages ---- */

static void test_valid_each_type(void **state)
{
	(void)state;
	for (int t = 0; t < MSG_TYPE_COUNT; t++) {
		char *json = envelope((enum msg_type)t, valid_content[t]);
		struct msg *m = parse_ok(json);
		assert_int_equal(m->type, t);
		assert_string_equal(m->id, "pm_20241220_150000_001");
		assert_string_equal(m->from, "product_manager");
		assert_string_equal(m->to, "research_agent_1");
		assert_string_equal(m->timestamp, "2024-12-20T15:00:00Z");
		assert_true(m->ts_ns == 1734706800LL * 1000000000);
		assert_int_equal(m->priority, PRIO_NORMAL);
		assert_null(m->reply_to);
		assert_true(m->timeout_s == -1);
		assert_null(m->correlation_id);
		assert_int_equal(msg_validate(m, NULL), 0);
		/* Canonical output is the input plus the default priority. */
		char *out = msg_to_json(m, false);
		char *want = xasprintf("%.*s,\"priority\":\"normal\"}",
				       (int)strlen(json) - 1, json);
		assert_string_equal(out, want);
		struct msg *again = parse_ok(out);
		char *out2 = msg_to_json(again, true);
		struct msg *third = parse_ok(out2);
		char *out3 = msg_to_json(third, false);
		assert_string_equal(out3, out);
		free(out3);
		free(out2);
		free(want);
		free(out);
		msg_free(&third);
		msg_free(&again);
		msg_free(&m);
		assert_null(m);
		free(json);
	}
}

static void test_canonical_order(void **state)
{
	(void)state;
	const char *in =
		"{'correlation_id':'task-7','timeout':300,'content':{'status':'idle',"
		"'uptime_seconds':1,'active_tasks':0},'reply_to':'pm_1:a-b',"
		"'priority':'urgent','timestamp':'2024-12-20T16:00:00+01:00',"
		"'type':'heartbeat','to':'broadcast','from':'validator_agent',"
		"'message_id':'val_1'}";
	char *json = q(in);
	struct msg *m = parse_ok(json);
	assert_true(m->ts_ns == 1734706800LL * 1000000000);
	assert_true(m->timeout_s == 300);
	assert_string_equal(m->reply_to, "pm_1:a-b");
	char *out = msg_to_json(m, false);
	char *want = q("{'message_id':'val_1','from':'validator_agent','to':'broadcast',"
		       "'type':'heartbeat','timestamp':'2024-12-20T16:00:00+01:00',"
		       "'content':{'status':'idle','uptime_seconds':1,'active_tasks':0},"
		       "'priority':'urgent','reply_to':'pm_1:a-b','timeout':300,"
		       "'correlation_id':'task-7'}");
	assert_string_equal(out, want);
	cJSON *tree = msg_to_cjson(m);
	assert_string_equal(tree->child->string, "message_id");
	cJSON_Delete(tree);
	free(want);
	free(out);
	msg_free(&m);
	free(json);
}

static void test_optional_nulls(void **state)
{
	(void)state;
	char *json = q("{'message_id':'m1','from':'a','to':'b','type':'heartbeat',"
		       "'timestamp':'2024-12-20T15:00:00Z','reply_to':null,"
		       "'timeout':null,'correlation_id':null,'content':{'status':'idle',"
		       "'uptime_seconds':0,'active_tasks':0,'current_task':null,"
		       "'pid':null,'extra':{'anything':[1,'x']}}}");
	struct msg *m = parse_ok(json);
	assert_null(m->reply_to);
	assert_true(m->timeout_s == -1);
	assert_null(m->correlation_id);
	msg_free(&m);
	free(json);
}

/* ---- Envelope errors ---- */

static void test_envelope_required(void **state)
{
	(void)state;
	const char *fields[] = { "message_id", "from", "to", "type", "timestamp", "content" };
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		char *want = xasprintf("%s: required", fields[i]);
		expect_envelope_error(fields[i], NULL, want);
		free(want);
	}
	expect_errors("{}", "message_id: required; from: required; to: required; "
		      "type: required; timestamp: required; content: required");
	expect_errors("[]", "message: must be a JSON object");
	expect_errors("\"x\"", "message: must be a JSON object");
	expect_errors("", "empty input");
}

static void test_envelope_types(void **state)
{
	(void)state;
	expect_envelope_error("from", "42", "from: must be a string");
	expect_envelope_error("message_id", "7", "message_id: must be a string");
	expect_envelope_error("to", "null", "to: must be a string");
	expect_envelope_error("type", "[\"heartbeat\"]", "type: must be a string");
	expect_envelope_error("timestamp", "1734706800", "timestamp: must be a string");
	expect_envelope_error("content", "[]", "content: must be an object");
	expect_envelope_error("content", "null", "content: must be an object");
	expect_envelope_error("reply_to", "5", "reply_to: must be a string");
	expect_envelope_error("correlation_id", "true", "correlation_id: must be a string");
}

static void test_envelope_names(void **state)
{
	(void)state;
	const char *agent = "must be an agent name ([a-z0-9][a-z0-9_-]{0,63})";
	char *want = xasprintf("from: %s", agent);
	expect_envelope_error("from", "\"../etc\"", want);
	expect_envelope_error("from", "\"a/b\"", want);
	expect_envelope_error("from", "\"..\"", want);
	expect_envelope_error("from", "\"\"", want);
	expect_envelope_error("from", "\"Research\"", want);
	expect_envelope_error("from", "\"_x\"", want);
	char name[80];
	memset(name, 'a', 65);
	name[65] = '\0';
	char *long_name = xasprintf("\"%s\"", name);
	expect_envelope_error("from", long_name, want);
	free(want);
	want = xasprintf("to: %s or broadcast", agent);
	expect_envelope_error("to", "\"..\"", want);
	expect_envelope_error("to", "\"a/b\"", want);
	free(want);
	name[64] = '\0';
	free(long_name);
	long_name = xasprintf("\"%s\"", name);
	expect_envelope_ok("from", long_name);
	free(long_name);
	expect_envelope_ok("to", "\"broadcast\"");
	expect_envelope_ok("to", "\"report-writer-2\"");
}

static void test_envelope_ids(void **state)
{
	(void)state;
	const char *rule = "must match [A-Za-z0-9_:-]{1,128}";
	struct {
		const char *field, *value;
	} bad[] = {
		{ "message_id", "\"a/b\"" },
		{ "message_id", "\"../x\"" },
		{ "message_id", "\"\"" },
		{ "message_id", "\"a.json\"" },
		{ "reply_to", "\"x/y\"" },
		{ "correlation_id", "\"a b\"" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *want = xasprintf("%s: %s", bad[i].field, rule);
		expect_envelope_error(bad[i].field, bad[i].value, want);
		free(want);
	}
	char id[140];
	memset(id, 'A', 130);
	id[0] = '"';
	id[130] = '"';
	id[131] = '\0'; /* 129 characters */
	char *want = xasprintf("message_id: %s", rule);
	expect_envelope_error("message_id", id, want);
	free(want);
	id[129] = '"';
	id[130] = '\0'; /* 128 */
	expect_envelope_ok("message_id", id);
	expect_envelope_ok("message_id", "\"pm_20241220:x-Y_9\"");
	assert_true(msg_valid_id("a:b-C_1"));
	assert_false(msg_valid_id("a/b"));
	assert_false(msg_valid_id(""));
	assert_false(msg_valid_id(NULL));
}

static void test_envelope_timestamps(void **state)
{
	(void)state;
	const char *bad[] = {
		"\"2024-12-20T15:00\"",         /* no seconds */
		"\"2024-12-20T15:00:00.Z\"",    /* empty fraction, no zone */
		"\"2023-02-30T15:00:00Z\"",     /* Feb 30 */
		"\"2024-12-20T24:00:00Z\"",     /* hour 24 */
		"\"2023-02-29T00:00:00Z\"",     /* not a leap year */
		"\"1900-02-29T00:00:00Z\"",     /* not a leap year either */
		"\"2024-04-31T00:00:00Z\"",
		"\"2024-13-01T00:00:00Z\"",
		"\"2024-00-10T00:00:00Z\"",
		"\"2024-12-20T15:60:00Z\"",
		"\"2024-12-20T15:00:60Z\"",
		"\"2024-12-20 15:00:00Z\"",
		"\"2024-12-20T15:00:00+0100\"",
		"\"2024-12-20T15:00:00+24:00\"",
		"\"2024-12-20T15:00:00.Z\"",
		"\"2024-12-20T15:00:00.1234567890Z\"",
		"\"2024-12-20T15:00:00Zjunk\"",
		"\"2024-12-20\"",
		"\"20241220T150000Z\"",
		"\"\"",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_envelope_error("timestamp", bad[i],
				      "timestamp: must be ISO 8601 with a time zone");
	expect_envelope_error("timestamp", "\"2300-01-01T00:00:00Z\"",
			      "timestamp: must be within years 1678..2261");
	expect_envelope_ok("timestamp", "\"2024-02-29T00:00:00Z\"");
	expect_envelope_ok("timestamp", "\"2000-02-29T23:59:59.999999999-00:30\"");
	/* No zone is read as UTC (see test_message_compat.c); out of range
	 * stays invalid without one too. */
	expect_envelope_error("timestamp", "\"2300-01-01T00:00:00\"",
			      "timestamp: must be within years 1678..2261");
	expect_content_error(MSG_TASK_ASSIGNMENT, "deadline", "'2024-12-20T17:00'",
			     "content.deadline: must be ISO 8601 with a time zone");
	expect_content_error(MSG_TASK_ASSIGNMENT, "deadline", "'2023-02-29T17:00:00Z'",
			     "content.deadline: must be ISO 8601 with a time zone");
}

static void test_parse_time(void **state)
{
	(void)state;
	int64_t ns = 0;
	const int64_t base = 1734706800LL * 1000000000;
	assert_int_equal(msg_parse_time("2024-12-20T15:00:00Z", &ns), 0);
	assert_true(ns == base);
	assert_int_equal(msg_parse_time("2024-12-20T16:00:00+01:00", &ns), 0);
	assert_true(ns == base);
	assert_int_equal(msg_parse_time("2024-12-20T10:00:00.5-05:00", &ns), 0);
	assert_true(ns == base + 500000000);
	assert_int_equal(msg_parse_time("2024-12-20T15:00:00.000000001Z", &ns), 0);
	assert_true(ns == base + 1);
	assert_int_equal(msg_parse_time("2024-12-21T00:30:00+09:30", &ns), 0);
	assert_true(ns == base);
	assert_int_equal(msg_parse_time("1970-01-01T00:00:00Z", &ns), 0);
	assert_true(ns == 0);
	assert_int_equal(msg_parse_time("1969-12-31T23:59:59.75Z", &ns), 0);
	assert_true(ns == -250000000);
	assert_int_equal(msg_parse_time("1678-01-01T00:00:00Z", &ns), 0);
	assert_true(ns == -9214560000LL * 1000000000);
	assert_int_equal(msg_parse_time("2261-12-31T23:59:59.999999999Z", &ns), 0);
	assert_true(ns == 9214646399999999999LL);
	assert_int_equal(msg_parse_time("1677-12-31T23:59:59Z", &ns), -1);
	assert_int_equal(msg_parse_time("2262-01-01T00:00:00Z", &ns), -1);
	assert_int_equal(msg_parse_time("1678-01-01T00:30:00+01:00", &ns), -1);
	assert_int_equal(msg_parse_time("2024-12-20t15:00:00Z", &ns), -1);
	assert_int_equal(msg_parse_time("2024-12-20T15:00:00z", &ns), -1);
	assert_int_equal(msg_parse_time("2024-12-20T15:00:00", &ns), -1);
	assert_int_equal(msg_parse_time("2024-1-20T15:00:00Z", &ns), -1);
	assert_int_equal(msg_parse_time("", &ns), -1);
	assert_int_equal(msg_parse_time(NULL, &ns), -1);
}

static void test_envelope_unknown_and_type(void **state)
{
	(void)state;
	expect_envelope_error("foo", "1", "foo: unknown field");
	expect_envelope_error("From", "\"a\"", "From: unknown field");
	expect_envelope_error("\u00e9 x", "1", "[\"\u00e9 x\"]: unknown field");
	expect_envelope_error("type", "\"task_done\"",
			      "type: must be one of task_assignment, task_acceptance, "
			      "task_progress, research_result, validation_request, "
			      "validation_result, error_report, heartbeat, system_status");
	/* Seed 003's words belong in message_type only. */
	expect_envelope_error("type", "\"result\"",
			      "type: must be one of task_assignment, task_acceptance, "
			      "task_progress, research_result, validation_request, "
			      "validation_result, error_report, heartbeat, system_status");
	expect_errors_q("{'message_id':'m','from':'a','to':'b','message_type':'done',"
			"'timestamp':'2024-12-20T15:00:00Z','content':{}}",
			"message_type: must be one of result, error, status, "
			"task_assignment, task_acceptance, task_progress, research_result, "
			"validation_request, validation_result, error_report, heartbeat, "
			"system_status");
	expect_errors("{\"message_id\":\"m\",\"from\":\"a\",\"\x1b]0;pwn\\u0007\":1,"
		      "\"to\":\"b\",\"type\":\"heartbeat\","
		      "\"timestamp\":\"2024-12-20T15:00:00Z\","
		      "\"content\":{\"status\":\"idle\",\"uptime_seconds\":0,"
		      "\"active_tasks\":0}}",
		      "invalid JSON at byte 30");
	expect_errors("{\"message_id\":\"m\",\"from\":\"a\",\"\\u001b]0;pwn\\u0007\":1,"
		      "\"to\":\"b\",\"type\":\"heartbeat\","
		      "\"timestamp\":\"2024-12-20T15:00:00Z\","
		      "\"content\":{\"status\":\"idle\",\"uptime_seconds\":0,"
		      "\"active_tasks\":0}}",
		      "[\"\\u001b]0;pwn\\u0007\"]: unknown field");
}

static void test_envelope_priority(void **state)
{
	(void)state;
	static const char *const words[] = { NULL, "urgent", "high", "normal", "low", "low" };
	for (int p = 1; p <= 5; p++) {
		char num[16];
		snprintf(num, sizeof(num), "%d", p);
		char *json = envelope_with("priority", num);
		struct msg *m = parse_ok(json);
		assert_string_equal(msg_priority_name(m->priority), words[p]);
		char *out = msg_to_json(m, false);
		char *want = xasprintf("\"priority\":\"%s\"}", words[p]);
		assert_string_equal(out + strlen(out) - strlen(want), want);
		free(want);
		free(out);
		msg_free(&m);
		free(json);
	}
	expect_envelope_error("priority", "0", "priority: must be within 1..5");
	expect_envelope_error("priority", "6", "priority: must be within 1..5");
	expect_envelope_error("priority", "-1", "priority: must be within 1..5");
	expect_envelope_error("priority", "2.5", "priority: must be an integer");
	expect_envelope_error("priority", "\"HIGH\"",
			      "priority: must be one of low, normal, high, urgent");
	expect_envelope_error("priority", "\"3\"",
			      "priority: must be one of low, normal, high, urgent");
	expect_envelope_error("priority", "true", "priority: must be a string or an integer");
	expect_envelope_ok("priority", "null"); /* the default, normal */
	expect_envelope_ok("priority", "\"low\"");
	expect_envelope_ok("priority", "3.0");
}

static void test_envelope_timeout(void **state)
{
	(void)state;
	expect_envelope_error("timeout", "1.5", "timeout: must be an integer");
	expect_envelope_error("timeout", "\"10\"", "timeout: must be an integer");
	expect_envelope_error("timeout", "true", "timeout: must be an integer");
	expect_envelope_error("timeout", "-5", "timeout: must be within 1..2147483647");
	expect_envelope_error("timeout", "0", "timeout: must be within 1..2147483647");
	expect_envelope_error("timeout", "2147483648",
			      "timeout: must be within 1..2147483647");
	expect_envelope_error("timeout", "1e300", "timeout: must be an integer");
	char *json = envelope_with("timeout", "2147483647");
	struct msg *m = parse_ok(json);
	assert_true(m->timeout_s == 2147483647);
	msg_free(&m);
	free(json);
}

static void test_envelope_both_spellings(void **state)
{
	(void)state;
	expect_envelope_error("from_agent", "\"pm-agent\"",
			      "from_agent: not allowed together with from");
	expect_envelope_error("to_agent", "\"pm-agent\"",
			      "to_agent: not allowed together with to");
	expect_envelope_error("message_type", "\"status\"",
			      "message_type: not allowed together with type");
	expect_envelope_error("payload", "{}", "payload: not allowed together with content");
	expect_errors_q("{'message_id':'m','from_agent':'a','to':'b','type':'heartbeat',"
			"'timestamp':'2024-12-20T15:00:00Z','payload':[]}",
			"payload: must be an object");
}

static void test_strict_input_errors(void **state)
{
	(void)state;
	char *base = envelope(MSG_HEARTBEAT, valid_content[MSG_HEARTBEAT]);
	/* Duplicate envelope key. */
	char *dup = xasprintf("{\"from\":\"x\",%s", base + 1);
	expect_errors(dup, "duplicate key \"from\" in object at top level");
	free(dup);
	expect_errors_q("{'message_id':'m','from':'a','to':'b','type':'heartbeat',"
			"'timestamp':'2024-12-20T15:00:00Z','content':{'status':'idle',"
			"'status':'busy','uptime_seconds':0,'active_tasks':0}}",
			"duplicate key \"status\" in object at content");
	/* Deep nesting, in the exact-size buffer msg_parse gets from the bus. */
	size_t n = 300000;
	char *deep = xmalloc(n);
	memset(deep, '[', n);
	expect_errors_n(deep, n, "nesting deeper than 64 levels");
	free(deep);
	/* Raw NUL and \u0000. */
	char *nul = xstrdup(base);
	char *at = strstr(nul, "busy");
	*at = '\0';
	expect_errors_n(nul, strlen(base), "NUL byte at byte 163");
	assert_int_equal(at - nul, 163);
	free(nul);
	expect_errors_q("{'message_id':'m\\u0000x','from':'a'}", "\\u0000 escape at byte 16");
	/* Invalid UTF-8. */
	expect_errors("{\"message_id\":\"m\xed\xbf\xbf\"}", "invalid UTF-8 at byte 16");
	/* 1e999. */
	char *inf = envelope(MSG_HEARTBEAT, "{'status':'idle','uptime_seconds':1e999,"
			     "'active_tasks':0}");
	expect_errors(inf, "number out of range at content.uptime_seconds");
	free(inf);
	expect_errors("{} ,", "trailing data after JSON value at byte 3");
	free(base);
	/* Over the size limit: refused before parsing. */
	char *big = xmalloc(MSG_MAX_BYTES + 1);
	memset(big, ' ', MSG_MAX_BYTES + 1);
	expect_errors_n(big, MSG_MAX_BYTES + 1,
			"message: is 10485761 bytes, over the 10485760-byte limit");
	free(big);
}

/* ---- Content errors ---- */

static void test_content_required(void **state)
{
	(void)state;
	expect_content_error(MSG_TASK_ASSIGNMENT, "task_type", NULL,
			     "content.task_type: required");
	expect_content_error(MSG_TASK_ACCEPTANCE, "estimated_completion", NULL,
			     "content.estimated_completion: required");
	expect_content_error(MSG_RESEARCH_RESULT, "warnings", NULL,
			     "content.warnings: required");
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found", NULL,
			     "content.issues_found: required");
	expect_content_error(MSG_ERROR_REPORT, "context", NULL,
			     "content.context: required");
	expect_content_error(MSG_SYSTEM_STATUS, "performance_metrics", NULL,
			     "content.performance_metrics: required");
	expect_content_error(MSG_HEARTBEAT, "status", NULL, "content.status: required");
	expect_content_error(MSG_TASK_PROGRESS, "current_step", NULL,
			     "content.current_step: required");
	expect_content_error(MSG_VALIDATION_REQUEST, "deadline", NULL,
			     "content.deadline: required");
	/* Required and null is a wrong type. */
	expect_content_error(MSG_TASK_ASSIGNMENT, "focus_area", "null",
			     "content.focus_area: must be a string");
	/* Optional fields may be absent or null. */
	char *json = envelope(MSG_ERROR_REPORT,
			      "{'error_type':'x','error_message':'y','context':{},"
			      "'impact_level':'low','recovery_action':null}");
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
}

static void test_content_types(void **state)
{
	(void)state;
	expect_content_error(MSG_RESEARCH_RESULT, "data_points_collected", "1.5",
			     "content.data_points_collected: must be an integer");
	expect_content_error(MSG_RESEARCH_RESULT, "data_points_collected", "'12'",
			     "content.data_points_collected: must be an integer");
	expect_content_error(MSG_RESEARCH_RESULT, "confidence_score", "'0.9'",
			     "content.confidence_score: must be a number");
	expect_content_error(MSG_TASK_ACCEPTANCE, "agent_capacity", "true",
			     "content.agent_capacity: must be a number");
	expect_content_error(MSG_RESEARCH_RESULT, "raw_data", "[]",
			     "content.raw_data: must be an object");
	expect_content_error(MSG_RESEARCH_RESULT, "sources_accessed", "'newsapi'",
			     "content.sources_accessed: must be an array");
	expect_content_error(MSG_TASK_ASSIGNMENT, "target_pairs", "['USD/JPY',7,null]",
			     "content.target_pairs[1]: must be a string; "
			     "content.target_pairs[2]: must be a string");
	expect_content_error(MSG_TASK_ASSIGNMENT, "task_type", "''",
			     "content.task_type: must not be empty");
	expect_content_error(MSG_TASK_ASSIGNMENT, "special_instructions", "42",
			     "content.special_instructions: must be a string");
	expect_content_error(MSG_VALIDATION_REQUEST, "research_results_to_validate", "[]",
			     "content.research_results_to_validate: must not be empty");
	expect_content_error(MSG_SYSTEM_STATUS, "performance_metrics",
			     "{'a':1,'b':'x','c d':null}",
			     "content.performance_metrics.b: must be a number; "
			     "content.performance_metrics[\"c d\"]: must be a number");
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found", "[{},7]",
			     "content.issues_found[0].issue_type: required; "
			     "content.issues_found[0].severity: required; "
			     "content.issues_found[0].description: required; "
			     "content.issues_found[0].affected_data: required; "
			     "content.issues_found[0].recommendation: required; "
			     "content.issues_found[0].confidence: required; "
			     "content.issues_found[1]: must be an object");
	expect_errors_q("{'message_id':'m','from':'a','to':'b','type':'heartbeat',"
			"'timestamp':'2024-12-20T15:00:00Z','content':{'status':'idle',"
			"'uptime_seconds':0,'active_tasks':0.5,'sequence':-1}}",
			"content.active_tasks: must be an integer; "
			"content.sequence: must be >= 0");
}

static void test_content_enums(void **state)
{
	(void)state;
	expect_content_error(MSG_TASK_ACCEPTANCE, "status", "'maybe'",
			     "content.status: must be one of accepted, rejected, queued");
	expect_content_error(MSG_RESEARCH_RESULT, "status", "'done'",
			     "content.status: must be one of completed, partial, failed");
	expect_content_error(MSG_VALIDATION_REQUEST, "validation_type", "'vibes'",
			     "content.validation_type: must be one of cross_reference, "
			     "timing_check, fact_check");
	expect_content_error(MSG_ERROR_REPORT, "impact_level", "'HIGH'",
			     "content.impact_level: must be one of low, medium, high, critical");
	expect_content_error(MSG_HEARTBEAT, "status", "'sleeping'",
			     "content.status: must be one of idle, busy, waiting, stopping");
	expect_content_error(MSG_SYSTEM_STATUS, "agent_status", "'fine'",
			     "content.agent_status: must be one of healthy, degraded, "
			     "error, offline");
	const char *issue = "{'issue_type':'conflict','severity':'low','description':'d',"
			    "'affected_data':{},'recommendation':'r','confidence':0.5}";
	char *issues = xasprintf("[%s,%s,{'issue_type':'stale_data','severity':'severe',"
				 "'description':'d','affected_data':{},'recommendation':'r',"
				 "'confidence':0.5}]", issue, issue);
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found", issues,
			     "content.issues_found[2].severity: must be one of low, "
			     "medium, high, critical");
	free(issues);
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found",
			     "[{'issue_type':'typo','severity':'low','description':'d',"
			     "'affected_data':[],'recommendation':'r','confidence':2}]",
			     "content.issues_found[0].issue_type: must be one of conflict, "
			     "timing_error, stale_data; "
			     "content.issues_found[0].affected_data: must be an object; "
			     "content.issues_found[0].confidence: must be within 0..1");
}

static void test_content_ranges(void **state)
{
	(void)state;
	expect_content_error(MSG_RESEARCH_RESULT, "confidence_score", "1.5",
			     "content.confidence_score: must be within 0..1");
	expect_content_error(MSG_RESEARCH_RESULT, "confidence_score", "-0.01",
			     "content.confidence_score: must be within 0..1");
	expect_content_error(MSG_TASK_ACCEPTANCE, "agent_capacity", "-0.1",
			     "content.agent_capacity: must be within 0..1");
	expect_content_error(MSG_TASK_ACCEPTANCE, "agent_capacity", "1.0001",
			     "content.agent_capacity: must be within 0..1");
	expect_content_error(MSG_VALIDATION_RESULT, "overall_confidence", "7",
			     "content.overall_confidence: must be within 0..1");
	expect_content_error(MSG_TASK_PROGRESS, "percent_complete", "100.5",
			     "content.percent_complete: must be within 0..100");
	expect_content_error(MSG_RESEARCH_RESULT, "execution_time_minutes", "-1",
			     "content.execution_time_minutes: must be >= 0");
	expect_content_error(MSG_RESEARCH_RESULT, "data_points_collected", "-3",
			     "content.data_points_collected: must be >= 0");
	expect_content_error(MSG_HEARTBEAT, "pid", "0", "content.pid: must be >= 1");
	expect_content_error(MSG_SYSTEM_STATUS, "cpu_usage_percent", "-5",
			     "content.cpu_usage_percent: must be >= 0");
	/* Bounds are inclusive; a float field takes an integer. */
	char *json = envelope(MSG_TASK_ACCEPTANCE,
			      "{'task_id':'t','status':'queued',"
			      "'estimated_completion':'2024-12-20T16:30:00Z','agent_capacity':1}");
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
}

static void test_content_rejected_needs_reason(void **state)
{
	(void)state;
	const char *head = "{'task_id':'t','status':'rejected',"
			   "'estimated_completion':'2024-12-20T16:30:00Z','agent_capacity':1";
	const char *tails[] = { "}", ",'rejection_reason':null}", ",'rejection_reason':''}" };
	for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
		char *c = xasprintf("%s%s", head, tails[i]);
		char *json = envelope(MSG_TASK_ACCEPTANCE, c);
		expect_errors(json, "content.rejection_reason: required when status is rejected");
		free(json);
		free(c);
	}
	char *c = xasprintf("%s,'rejection_reason':5}", head);
	char *json = envelope(MSG_TASK_ACCEPTANCE, c);
	expect_errors(json, "content.rejection_reason: must be a string");
	free(json);
	free(c);
	c = xasprintf("%s,'rejection_reason':'at capacity'}", head);
	json = envelope(MSG_TASK_ACCEPTANCE, c);
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
	free(c);
}

static void test_all_errors_collected(void **state)
{
	(void)state;
	expect_errors_q("{'message_id':'a/b','from':'A','to':'x/y','type':'research_result',"
			"'timestamp':'2024-02-30T00:00:00Z','priority':9,'extra':1,"
			"'content':{'task_id':'t','status':'completed',"
			"'execution_time_minutes':1,'data_points_collected':1,"
			"'sources_accessed':[],'key_findings':[],'raw_data':{},"
			"'confidence_score':3,'data_freshness_hours':-1,'warnings':[]}}",
			"extra: unknown field; "
			"message_id: must match [A-Za-z0-9_:-]{1,128}; "
			"from: must be an agent name ([a-z0-9][a-z0-9_-]{0,63}); "
			"to: must be an agent name ([a-z0-9][a-z0-9_-]{0,63}) or broadcast; "
			"timestamp: must be ISO 8601 with a time zone; "
			"priority: must be within 1..5; "
			"content.confidence_score: must be within 0..1; "
			"content.data_freshness_hours: must be >= 0");
	/* A flood of errors is capped. */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "{'task_type':'x','focus_area':'a','timeframe':'t',"
		    "'data_sources':[],'deadline':'2024-12-20T17:00:00Z',"
		    "'output_format':'o','target_pairs':[");
	for (int i = 0; i < 500; i++)
		sbuf_addf(&b, "%s%d", i ? "," : "", i);
	sbuf_addstr(&b, "]}");
	char *json = envelope(MSG_TASK_ASSIGNMENT, b.data);
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_parse(json, strlen(json), &m, &errs), -1);
	assert_int_equal(errs.count, MSG_ERRORS_MAX + 1);
	assert_string_equal(errs.items[0], "content.target_pairs[0]: must be a string");
	assert_string_equal(errs.items[MSG_ERRORS_MAX],
			    "too many errors; the rest are left out");
	msg_errors_release(&errs);
	/* Errors are appended, and a NULL errs still fails. */
	assert_int_equal(msg_parse(json, strlen(json), &m, NULL), -1);
	assert_null(m);
	free(json);
	sbuf_release(&b);
}

/* ---- Seed 003 ---- */

static void expect_normalised(const char *in_q, const char *want_q)
{
	char *in = q(in_q), *want = q(want_q);
	struct msg *m = parse_ok(in);
	char *out = msg_to_json(m, false);
	assert_string_equal(out, want);
	struct msg *again = parse_ok(out);
	char *out2 = msg_to_json(again, false);
	assert_string_equal(out2, want);
	free(out2);
	free(out);
	msg_free(&again);
	msg_free(&m);
	free(want);
	free(in);
}

static void test_seed003_task_assignment(void **state)
{
	(void)state;
	expect_normalised(
		"{'message_id':'3f2a9c','timestamp':'2025-09-21T14:30:22Z',"
		"'from_agent':'pm-agent','to_agent':'research-agent-1',"
		"'message_type':'task_assignment','priority':2,'correlation_id':'task-1',"
		"'payload':{'task_id':'task-1','task_type':'research_fx',"
		"'target_market':'Asia','time_window':{'start':'2025-09-15','end':'2025-09-21'},"
		"'mcp_tools':['alpha_vantage','newsapi'],'deadline':'2025-09-21T18:00:00Z',"
		"'retry_count':0,'context':{'week':38}}}",
		"{'message_id':'3f2a9c','from':'product_manager','to':'research_agent_1',"
		"'type':'task_assignment','timestamp':'2025-09-21T14:30:22Z',"
		"'content':{'task_id':'task-1','task_type':'research_fx',"
		"'deadline':'2025-09-21T18:00:00Z','retry_count':0,'context':{'week':38},"
		"'target_pairs':[],'focus_area':'Asia','timeframe':'2025-09-15/2025-09-21',"
		"'data_sources':['alpha_vantage','newsapi'],'output_format':'structured_json'},"
		"'priority':'high','correlation_id':'task-1'}");
	expect_normalised(
		"{'message_id':'x1','timestamp':'2025-09-21T14:30:22Z',"
		"'from_agent':'pm-agent','to_agent':'research-agent-2',"
		"'message_type':'task_assignment','priority':5,"
		"'payload':{'task_type':'research_rates','target_market':'USD/JPY',"
		"'time_window':'this_week','mcp_tools':[],'deadline':'2025-09-21T18:00:00Z',"
		"'output_format':'summary_report'}}",
		"{'message_id':'x1','from':'product_manager','to':'research_agent_2',"
		"'type':'task_assignment','timestamp':'2025-09-21T14:30:22Z',"
		"'content':{'task_type':'research_rates','deadline':'2025-09-21T18:00:00Z',"
		"'output_format':'summary_report','target_pairs':['USD/JPY'],"
		"'focus_area':'USD/JPY','timeframe':'this_week','data_sources':[]},"
		"'priority':'low'}");
	/* A time_window that cannot be read is moved as it is and named. */
	expect_errors_q("{'message_id':'x1','timestamp':'2025-09-21T14:30:22Z',"
			"'from_agent':'pm-agent','to_agent':'validator-agent',"
			"'message_type':'task_assignment','priority':3,"
			"'payload':{'task_type':'validate','target_market':'G10',"
			"'time_window':{'from':'a'},'mcp_tools':['reuters'],"
			"'deadline':'2025-09-21T18:00:00Z'}}",
			"content.timeframe: must be a string");
}

static void test_seed003_result_and_error(void **state)
{
	(void)state;
	expect_normalised(
		"{'message_id':'r-1','timestamp':'2025-09-21T15:00:00Z',"
		"'from_agent':'research-agent-1','to_agent':'pm-agent',"
		"'message_type':'result','priority':3,'correlation_id':'task-1',"
		"'payload':{'result_id':'res-1','task_id':'task-1','agent_id':'research-agent-1',"
		"'market_data':[{'event_type':'fx_movement','currency_pair':'USD/JPY',"
		"'description':'Yen strengthens','impact':'high'},{'event_type':'rate_decision'}],"
		"'sources':[{'name':'alpha_vantage','query':'FX_DAILY'},'newsapi',{'tool':'reuters'}],"
		"'confidence_score':0.8,'processing_time':90,'errors_encountered':['rate limited']}}",
		"{'message_id':'r-1','from':'research_agent_1','to':'product_manager',"
		"'type':'research_result','timestamp':'2025-09-21T15:00:00Z',"
		"'content':{'result_id':'res-1','task_id':'task-1','agent_id':'research-agent-1',"
		"'confidence_score':0.8,'status':'completed','execution_time_minutes':1.5,"
		"'data_points_collected':2,'key_findings':['Yen strengthens'],"
		"'raw_data':{'market_data':[{'event_type':'fx_movement','currency_pair':'USD/JPY',"
		"'description':'Yen strengthens','impact':'high'},{'event_type':'rate_decision'}]},"
		"'sources_accessed':['alpha_vantage','newsapi','reuters'],"
		"'data_freshness_hours':0,'warnings':['rate limited']},"
		"'priority':'normal','correlation_id':'task-1'}");
	expect_normalised(
		"{'message_id':'e-1','timestamp':'2025-09-21T15:00:00+02:00',"
		"'from_agent':'validator-agent','to_agent':'pm-agent',"
		"'message_type':'error','priority':1,"
		"'payload':{'error_id':'err-1','agent_id':'validator-agent',"
		"'error_type':'api_failure','error_message':'HTTP 503','mcp_tool':'reuters',"
		"'recovery_action':'retry later','impact':'high','context':{'task_id':'t-9'}}}",
		"{'message_id':'e-1','from':'validator_agent','to':'product_manager',"
		"'type':'error_report','timestamp':'2025-09-21T15:00:00+02:00',"
		"'content':{'error_id':'err-1','agent_id':'validator-agent',"
		"'error_type':'api_failure','error_message':'HTTP 503',"
		"'recovery_action':'retry later','context':{'task_id':'t-9','mcp_tool':'reuters'},"
		"'impact_level':'high'},'priority':'urgent'}");
	/* No context: one is made for mcp_tool. */
	expect_normalised(
		"{'message_id':'e-2','timestamp':'2025-09-21T15:00:00Z',"
		"'from_agent':'learning-system','to_agent':'broadcast',"
		"'message_type':'error','priority':4,"
		"'payload':{'error_type':'timeout','error_message':'slow','mcp_tool':'newsapi',"
		"'impact':'low'}}",
		"{'message_id':'e-2','from':'learning_system','to':'broadcast',"
		"'type':'error_report','timestamp':'2025-09-21T15:00:00Z',"
		"'content':{'error_type':'timeout','error_message':'slow',"
		"'impact_level':'low','context':{'mcp_tool':'newsapi'}},'priority':'low'}");
	/* Validated after mapping, with seed 002 names. */
	expect_errors_q("{'message_id':'r-2','timestamp':'2025-09-21T15:00:00Z',"
			"'from_agent':'research-agent-2','to_agent':'pm-agent',"
			"'message_type':'result','priority':3,"
			"'payload':{'task_id':'t','market_data':[],'sources':[],"
			"'confidence_score':2,'processing_time':-60,'errors_encountered':[]}}",
			"content.execution_time_minutes: must be >= 0; "
			"content.confidence_score: must be within 0..1");
	/* Mapping cannot push the nesting past the limit. */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "{'message_id':'r-3','timestamp':'2025-09-21T15:00:00Z',"
		    "'from_agent':'research-agent-1','to_agent':'pm-agent',"
		    "'message_type':'result','payload':{'task_id':'t','sources':[],"
		    "'confidence_score':1,'processing_time':1,'errors_encountered':[],"
		    "'market_data':");
	for (int i = 0; i < 62; i++)
		sbuf_addch(&b, '[');
	for (int i = 0; i < 62; i++)
		sbuf_addch(&b, ']');
	sbuf_addstr(&b, "}}");
	expect_errors_q(b.data, "content: nesting deeper than 64 levels");
	sbuf_release(&b);
}

static void test_seed003_other_types(void **state)
{
	(void)state;
	/* status -> system_status; canonical names work in message_type too. */
	char *c = q(valid_content[MSG_SYSTEM_STATUS]);
	char *in = xasprintf("{\"message_id\":\"s-1\",\"timestamp\":\"2025-09-21T15:00:00Z\","
			     "\"from_agent\":\"report-writer\",\"to_agent\":\"pm-agent\","
			     "\"message_type\":\"status\",\"priority\":3,\"payload\":%s}", c);
	struct msg *m = parse_ok(in);
	assert_int_equal(m->type, MSG_SYSTEM_STATUS);
	assert_string_equal(m->from, "report_writer");
	assert_string_equal(m->to, "product_manager");
	msg_free(&m);
	free(in);
	free(c);
	c = q(valid_content[MSG_HEARTBEAT]);
	in = xasprintf("{\"message_id\":\"h-1\",\"timestamp\":\"2025-09-21T15:00:00Z\","
		       "\"from_agent\":\"research-agent-2\",\"to\":\"broadcast\","
		       "\"message_type\":\"heartbeat\",\"content\":%s}", c);
	m = parse_ok(in);
	assert_int_equal(m->type, MSG_HEARTBEAT);
	assert_string_equal(m->from, "research_agent_2");
	msg_free(&m);
	free(in);
	free(c);
	/* A seed 002 message never gets seed 003 defaults. */
	expect_content_error(MSG_RESEARCH_RESULT, "status", NULL, "content.status: required");
}

static void test_agent_aliases(void **state)
{
	(void)state;
	assert_string_equal(msg_agent_canonical("pm-agent"), "product_manager");
	assert_string_equal(msg_agent_canonical("research-agent-1"), "research_agent_1");
	assert_string_equal(msg_agent_canonical("research-agent-2"), "research_agent_2");
	assert_string_equal(msg_agent_canonical("validator-agent"), "validator_agent");
	assert_string_equal(msg_agent_canonical("report-writer"), "report_writer");
	assert_string_equal(msg_agent_canonical("learning-system"), "learning_system");
	assert_string_equal(msg_agent_canonical("other"), "other");
	assert_null(msg_agent_canonical(NULL));
	/* Aliases apply in the seed 002 spelling too. */
	expect_envelope_ok("to", "\"validator-agent\"");
}

/* ---- Names, lifecycle, ids ---- */

static void test_names(void **state)
{
	(void)state;
	for (int t = 0; t < MSG_TYPE_COUNT; t++)
		assert_int_equal(msg_type_from_name(msg_type_name((enum msg_type)t)), t);
	assert_string_equal(msg_type_name(MSG_VALIDATION_RESULT), "validation_result");
	assert_string_equal(msg_type_name(MSG_TYPE_COUNT), "unknown");
	assert_int_equal(msg_type_from_name("result"), -1);
	assert_int_equal(msg_type_from_name(NULL), -1);
	assert_int_equal(msg_priority_from_name("urgent"), PRIO_URGENT);
	assert_int_equal(msg_priority_from_name("high"), PRIO_HIGH);
	assert_int_equal(msg_priority_from_name("normal"), PRIO_NORMAL);
	assert_int_equal(msg_priority_from_name("low"), PRIO_LOW);
	assert_int_equal(msg_priority_from_name("Low"), -1);
	assert_string_equal(msg_priority_name(PRIO_HIGH), "high");
}

static void assert_id_shape(const char *id, const char *from)
{
	size_t n = strlen(from);
	assert_true(msg_valid_id(id));
	assert_int_equal(strlen(id), n + 1 + 8 + 1 + 6 + 1 + 16);
	assert_memory_equal(id, from, n);
	const char *p = id + n;
	assert_int_equal(p[0], '_');
	for (int i = 1; i <= 8; i++)
		assert_true(p[i] >= '0' && p[i] <= '9');
	assert_int_equal(p[9], '_');
	for (int i = 10; i <= 15; i++)
		assert_true(p[i] >= '0' && p[i] <= '9');
	assert_int_equal(p[16], '_');
	for (int i = 17; i < 33; i++)
		assert_non_null(strchr("0123456789abcdef", p[i]));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_ids_unique(void **state)
{
	(void)state;
	enum { N = 100000 };
	char **ids = xcalloc(N, sizeof(*ids));
	for (int i = 0; i < N; i++) {
		char buf[MSG_ID_MAX + 1];
		msg_new_id("research_agent_1", buf);
		ids[i] = xstrdup(buf);
	}
	assert_id_shape(ids[0], "research_agent_1");
	/* Same process: the nonce is shared, the counter moves on. */
	assert_memory_equal(ids[0] + strlen(ids[0]) - 16, ids[N - 1] + strlen(ids[N - 1]) - 16, 8);
	qsort(ids, N, sizeof(*ids), cmp_str);
	for (int i = 1; i < N; i++)
		assert_string_not_equal(ids[i - 1], ids[i]);
	for (int i = 0; i < N; i++)
		free(ids[i]);
	free(ids);
	char name[MSG_AGENT_MAX + 1];
	memset(name, 'z', MSG_AGENT_MAX);
	name[MSG_AGENT_MAX] = '\0';
	char buf[MSG_ID_MAX + 1];
	msg_new_id(name, buf);
	assert_id_shape(buf, name);
	/* Whatever the caller passes, the id stays valid and bounded. */
	char huge[300];
	memset(huge, 'x', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	huge[3] = '/';
	msg_new_id(huge, buf);
	assert_true(msg_valid_id(buf));
	assert_memory_equal(buf, "xxx-xx", 6);
	msg_new_id(NULL, buf);
	assert_true(msg_valid_id(buf));
	assert_memory_equal(buf, "msg_", 4);
}

static void test_ids_after_fork(void **state)
{
	(void)state;
	char parent[MSG_ID_MAX + 1];
	msg_new_id("pm", parent);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	enum { KIDS = 3 };
	for (int k = 0; k < KIDS; k++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char id[MSG_ID_MAX + 1];
			msg_new_id("pm", id);
			ssize_t w = write(fds[1], id, sizeof(id));
			_exit(w == (ssize_t)sizeof(id) ? 0 : 1);
		}
	}
	close(fds[1]);
	char kids[KIDS][MSG_ID_MAX + 1];
	for (int k = 0; k < KIDS; k++) {
		size_t got = 0;
		while (got < sizeof(kids[k])) {
			ssize_t r = read(fds[0], kids[k] + got, sizeof(kids[k]) - got);
			assert_true(r > 0);
			got += (size_t)r;
		}
		int status;
		assert_true(wait(&status) > 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	close(fds[0]);
	/* The nonce (8 hex before the counter) is redrawn in each child. */
	size_t nonce_at = strlen(parent) - 16;
	for (int k = 0; k < KIDS; k++) {
		assert_id_shape(kids[k], "pm");
		assert_string_not_equal(kids[k], parent);
		assert_false(memcmp(kids[k] + nonce_at, parent + nonce_at, 8) == 0);
		for (int j = 0; j < k; j++)
			assert_false(memcmp(kids[k] + nonce_at, kids[j] + nonce_at, 8) == 0);
	}
	/* The parent keeps its nonce. */
	char after[MSG_ID_MAX + 1];
	msg_new_id("pm", after);
	assert_memory_equal(after + nonce_at, parent + nonce_at, 8);
}

static void test_msg_new_dup_validate(void **state)
{
	(void)state;
	cJSON *c = cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":3,\"active_tasks\":0}");
	int64_t before = util_now_ns();
	struct msg *m = msg_new("pm-agent", "research-agent-1", MSG_HEARTBEAT, c);
	assert_non_null(m);
	assert_string_equal(m->from, "product_manager");
	assert_string_equal(m->to, "research_agent_1");
	assert_id_shape(m->id, "product_manager");
	assert_int_equal(m->type, MSG_HEARTBEAT);
	assert_int_equal(m->priority, PRIO_NORMAL);
	assert_true(m->timeout_s == -1);
	assert_ptr_equal(m->content, c);
	int64_t ns;
	assert_int_equal(msg_parse_time(m->timestamp, &ns), 0);
	assert_true(ns == m->ts_ns);
	assert_true(ns >= before - 1000 && ns <= util_now_ns());
	assert_int_equal(msg_validate(m, NULL), 0);

	struct msg *d = msg_dup(m);
	char *a = msg_to_json(m, false), *b = msg_to_json(d, false);
	assert_string_equal(a, b);
	assert_ptr_not_equal(d->content, m->content);
	free(b);
	d->reply_to = xstrdup("x/y");
	d->timeout_s = 0;
	d->priority = (enum msg_priority)9;
	util_strlcpy(d->from, "A", sizeof(d->from));
	cJSON_DeleteItemFromObjectCaseSensitive(d->content, "status");
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_validate(d, &errs), -1);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, "from: must be an agent name ([a-z0-9][a-z0-9_-]{0,63}); "
			    "content.status: required; "
			    "priority: must be one of low, normal, high, urgent; "
			    "reply_to: must match [A-Za-z0-9_:-]{1,128}; "
			    "timeout: must be within 1..2147483647");
	free(j);
	msg_errors_release(&errs);
	/* The original is untouched. */
	b = msg_to_json(m, false);
	assert_string_equal(a, b);
	free(a);
	free(b);
	msg_free(&d);
	assert_null(d);
	msg_free(&d);
	msg_free(&m);

	m = msg_new("a", "broadcast", MSG_SYSTEM_STATUS, NULL);
	assert_non_null(m);
	assert_non_null(m->content);
	assert_true(cJSON_IsObject(m->content));
	assert_int_equal(msg_validate_content(m->type, m->content, "content", NULL), 8);
	msg_free(&m);
	/* Refused (and the content freed: ASan would see a leak). */
	assert_null(msg_new("a/b", "pm", MSG_HEARTBEAT, cJSON_CreateObject()));
	assert_null(msg_new("pm", "..", MSG_HEARTBEAT, cJSON_CreateObject()));
	assert_null(msg_new("pm", "x", MSG_TYPE_COUNT, cJSON_CreateObject()));
	assert_null(msg_new("pm", "x", MSG_HEARTBEAT, cJSON_CreateArray()));
	assert_null(msg_new(NULL, "x", MSG_HEARTBEAT, NULL));
}

static cJSON *nested_arrays(int levels)
{
	cJSON *top = cJSON_CreateArray(), *cur = top;
	for (int i = 1; i < levels; i++) {
		cJSON *a = cJSON_CreateArray();
		cJSON_AddItemToArray(cur, a);
		cur = a;
	}
	return top;
}

/* A heartbeat whose content got extra (built in code) must be refused by
 * msg_validate with exactly the error a reader would give. */
static void expect_tree_error(const char *key, cJSON *extra, const char *expected)
{
	cJSON *c = cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":3,"
			       "\"active_tasks\":0}");
	cJSON_AddItemToObject(c, key, extra);
	struct msg *m = msg_new("pm", "broadcast", MSG_HEARTBEAT, c);
	assert_non_null(m);
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_validate(m, &errs), expected ? -1 : 0);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, expected ? expected : "");
	free(j);
	msg_errors_release(&errs);
	msg_free(&m);
}

static void test_check_tree(void **state)
{
	(void)state;
	expect_tree_error("status", cJSON_CreateString("busy"),
			  "duplicate key \"status\" in object at content");
	expect_tree_error("x", cJSON_CreateNumber(1e308 * 10), "number out of range at content.x");
	expect_tree_error("note", cJSON_CreateString("ab\xff"), "invalid UTF-8 at content.note");
	expect_tree_error("k\xff", cJSON_CreateNull(),
			  "invalid UTF-8 in key at content[\"k\\xff\"]");
	expect_tree_error("d", nested_arrays(1000), "nesting deeper than 64 levels");
	expect_tree_error("d", nested_arrays(63), "nesting deeper than 64 levels");
	expect_tree_error("d", nested_arrays(62), NULL);
	expect_tree_error("ok", cJSON_CreateString("caf\xc3\xa9 \x01"), NULL);
	char *err = NULL;
	assert_int_equal(json_check_tree(NULL, NULL, 0, &err), 0);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "a", 1);
	cJSON_AddNumberToObject(root, "a", 2);
	assert_int_equal(json_check_tree(root, NULL, 0, &err), -1);
	assert_string_equal(err, "duplicate key \"a\" in object at top level");
	free(err);
	cJSON_Delete(root);
}

static void test_validate_content_prefix(void **state)
{
	(void)state;
	cJSON *c = cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":-1,\"active_tasks\":0}");
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_validate_content(MSG_HEARTBEAT, c, "payload", &errs), 1);
	assert_string_equal(errs.items[0], "payload.uptime_seconds: must be >= 0");
	assert_int_equal(msg_validate_content(MSG_HEARTBEAT, c, "", &errs), 1);
	assert_string_equal(errs.items[1], "uptime_seconds: must be >= 0");
	assert_int_equal(msg_validate_content(MSG_TYPE_COUNT, c, "content", &errs), 1);
	assert_int_equal(msg_validate_content(MSG_HEARTBEAT, NULL, "content", &errs), 1);
	assert_string_equal(errs.items[3], "content: must be an object");
	assert_int_equal(errs.count, 4);
	msg_errors_release(&errs);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, "");
	free(j);
	cJSON_Delete(c);
}

int main(void)
{
	const struct CMUnitTest json_tests[] = {
		cmocka_unit_test(test_json_exact_size_buffer),
		cmocka_unit_test(test_json_empty_and_trailing),
		cmocka_unit_test(test_json_numbers),
		cmocka_unit_test(test_json_depth),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_json_nul),
		cmocka_unit_test(test_json_duplicates),
		cmocka_unit_test(test_json_path_join),
	};
	const struct CMUnitTest envelope_tests[] = {
		cmocka_unit_test(test_valid_each_type),
		cmocka_unit_test(test_canonical_order),
		cmocka_unit_test(test_optional_nulls),
		cmocka_unit_test(test_envelope_required),
		cmocka_unit_test(test_envelope_types),
		cmocka_unit_test(test_envelope_names),
		cmocka_unit_test(test_envelope_ids),
		cmocka_unit_test(test_envelope_timestamps),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_envelope_unknown_and_type),
		cmocka_unit_test(test_envelope_priority),
		cmocka_unit_test(test_envelope_timeout),
		cmocka_unit_test(test_envelope_both_spellings),
		cmocka_unit_test(test_strict_input_errors),
	};
	const struct CMUnitTest content_tests[] = {
		cmocka_unit_test(test_content_required),
		cmocka_unit_test(test_content_types),
		cmocka_unit_test(test_content_enums),
		cmocka_unit_test(test_content_ranges),
		cmocka_unit_test(test_content_rejected_needs_reason),
		cmocka_unit_test(test_all_errors_collected),
		cmocka_unit_test(test_validate_content_prefix),
		cmocka_unit_test(test_check_tree),
	};
	const struct CMUnitTest seed003_tests[] = {
		cmocka_unit_test(test_seed003_task_assignment),
		cmocka_unit_test(test_seed003_result_and_error),
		cmocka_unit_test(test_seed003_other_types),
		cmocka_unit_test(test_agent_aliases),
	};
	const struct CMUnitTest lifecycle_tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_ids_unique),
		cmocka_unit_test(test_ids_after_fork),
		cmocka_unit_test(test_msg_new_dup_validate),
	};
	int failed = 0;
	failed += cmocka_run_group_tests_name("json", json_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("envelope", envelope_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("content", content_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("seed003", seed003_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("lifecycle", lifecycle_tests, NULL, NULL);
	return failed ? 1 : 0;
}
