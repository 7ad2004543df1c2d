/* Messages: valid messages of each type, canonical output, envelope
 * validation (names, ids, timestamps, priority, timeout, spellings), and
 * names, ids and the message lifecycle. Strict JSON is in
 * test_message_json.c, content validation and seed 003 normalisation in
 * test_message_content.c. JSON in these tests is written with single
 * quotes (q() in message_test.h turns them into double quotes). */
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
#include "tests/unit/message_test.h"

#include "core/banned.h"

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

int main(void)
{
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
	const struct CMUnitTest lifecycle_tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_ids_unique),
		cmocka_unit_test(test_ids_after_fork),
		cmocka_unit_test(test_msg_new_dup_validate),
	};
	int failed = 0;
	failed += cmocka_run_group_tests_name("envelope", envelope_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("lifecycle", lifecycle_tests, NULL, NULL);
	return failed ? 1 : 0;
}
