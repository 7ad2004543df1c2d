/* Messages: the strict JSON reader under them (exact-size buffers,
 * trailing data, numbers, depth, UTF-8, NULs, duplicate keys, paths). */
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
	int failed = 0;
	failed += cmocka_run_group_tests_name("json", json_tests, NULL, NULL);
	return failed ? 1 : 0;
}
