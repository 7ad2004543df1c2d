/* The review crew on outside input, defects found by the fuzz targets:
 * - the request's check (review_request_check, as review_master_run calls
 *   it on `madf review --request`, the MCP tool review_codebase's
 *   arguments and a bus trigger): its errors are one line each; a
 *   checklist key with a control character is quoted and escaped in the
 *   error's path (it was printed raw; tests/fuzz/fuzz_review_request.c);
 * - the analyzers' output (tests/fuzz/fuzz_review_tools.c), through the
 *   tool registry with fake analyzers on PATH: a file name that is not
 *   UTF-8 comes out valid (it made the findings' message invalid, so the
 *   agent's result could not be sent), and a line or CWE number out of
 *   range is none (it was a float-to-integer overflow);
 * - a worker's error_report (review_report_status, as the master reads
 *   it): a context.status out of int's range, or no HTTP status, is an
 *   error naming the field (it was cast to int as it came). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/review.h"
#include "agents/review_priv.h"
#include "core/message.h"
#include "core/tools.h"
#include "core/util.h"

#include "core/banned.h"

/* The joined errors of checking text (caller frees), or NULL when valid. */
static char *check(const char *text)
{
	cJSON *in = json_parse_strict(text, strlen(text), NULL);
	assert_non_null(in);
	struct msg_errors e = { 0 };
	int n = review_request_check(in, &e);
	char *why = n ? msg_errors_join(&e) : NULL;
	assert_int_equal((size_t)n, e.count);
	msg_errors_release(&e);
	cJSON_Delete(in);
	return why;
}

static void test_request_check(void **state)
{
	(void)state;
	assert_null(check("{\"id\":\"madf\",\"params\":{\"agents\":[\"critical\",\"debt\"],"
			  "\"checklist\":{\"critical\":[\"cppcheck\"]},\"timeout_s\":600}}"));
	char *why = check("{\"id\":\"madf\",\"params\":{\"agents\":[\"boss\"]}}");
	assert_non_null(strstr(why, "params.agents[0]: must be one of documentation, debt, "
				    "improvement, critical"));
	free(why);
	why = check("{\"id\":\"madf\",\"params\":{\"checklist\":{\"nobody\":[]}}}");
	assert_non_null(strstr(why, "params.checklist.nobody: not allowed"));
	free(why);
	/* a key with a newline: quoted and escaped, on one line */
	why = check("{\"id\":\"madf\",\"params\":{\"checklist\":{\"debt\\n\\u001b[2J\":[]}}}");
	assert_non_null(why);
	assert_null(strchr(why, '\n'));
	assert_null(strchr(why, '\033'));
	assert_non_null(strstr(why, "params.checklist[\"debt\\u000a\\u001b[2J\"]: not allowed"));
	assert_non_null(strstr(why, "not allowed"));
	free(why);
	why = check("{\"id\":\"madf\",\"params\":{\"checklist\":{\"debt\":\"markers\"}}}");
	assert_non_null(strstr(why, "params.checklist.debt: must be an array"));
	free(why);
}

/* review_report_status over an error_report's content (JSON text). */
static int report_status(const char *text, char **err)
{
	cJSON *c = cJSON_Parse(text);
	assert_non_null(c);
	*err = NULL;
	int r = review_report_status(c, err);
	cJSON_Delete(c);
	return r;
}

/* A worker's error_report: its context.status out of int's range (or not
 * an HTTP status) is an error naming the field; it was cast to int as it
 * came (undefined for 1e300). */
static void test_report_status(void **state)
{
	(void)state;
	char *err;
	assert_int_equal(report_status("{\"context\":{\"status\":429}}", &err), 429);
	assert_null(err);
	assert_int_equal(report_status("{\"context\":{\"status\":599}}", &err), 599);
	assert_int_equal(report_status("{\"context\":{\"retryable\":true}}", &err), 500);
	assert_int_equal(report_status("{\"error_message\":\"x\"}", &err), 500);
	assert_null(err);
	static const struct {
		const char *in, *shown;
	} bad[] = {
		{ "{\"context\":{\"status\":1e300}}", "1e+300" },
		{ "{\"context\":{\"status\":-1e300}}", "-1e+300" },
		{ "{\"context\":{\"status\":2147483648}}", "2147483648" },
		{ "{\"context\":{\"status\":-2147483649}}", "-2147483649" },
		{ "{\"context\":{\"status\":404.5}}", "404.5" },
		{ "{\"context\":{\"status\":99}}", "99" },
		{ "{\"context\":{\"status\":600}}", "600" },
		{ "{\"context\":{\"status\":\"500\"}}", "\"500\"" },
		{ "{\"context\":{\"status\":null}}", "null" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(report_status(bad[i].in, &err), -1);
		assert_non_null(err);
		char *want = xasprintf("context.status: must be a whole number from 100 to 599 (an "
				       "HTTP status), not %s", bad[i].shown);
		assert_string_equal(err, want);
		free(want);
		free(err);
	}
	/* a long or hostile value is cut short and shown without its escapes */
	assert_int_equal(report_status("{\"context\":{\"status\":\"\\u001b[2J0123456789012345678901"
				       "234567890123456789\"}}", &err), -1);
	assert_null(strchr(err, '\033'));
	assert_non_null(strstr(err, "..."));
	free(err);
}

struct fake {
	char *dir, *out, *root;
	struct tools *reg;
	cJSON *args;
};

/* The analyzers as one script printing $FAKE_OUT on stdout and stderr. */
static void fake_setup(struct fake *f)
{
	f->dir = xstrdup("/tmp/madf-test-review-outside-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	char *bin = xasprintf("%s/bin", f->dir), *script = xasprintf("%s/fake", f->dir);
	assert_int_equal(mkdir(bin, 0700), 0);
	const char *sh = "#!/bin/sh\ncat \"$FAKE_OUT\"; cat \"$FAKE_OUT\" >&2; exit 0\n";
	assert_int_equal(util_write_file_atomic(script, sh, strlen(sh), false, NULL), 0);
	assert_int_equal(chmod(script, 0700), 0);
	static const char *const progs[] = { "cppcheck", "shellcheck", "flawfinder", "gcc" };
	for (size_t i = 0; i < 4; i++) {
		char *l = xasprintf("%s/%s", bin, progs[i]);
		assert_int_equal(symlink(script, l), 0);
		free(l);
	}
	char *path = xasprintf("%s:/usr/bin:/bin", bin);
	setenv("PATH", path, 1);
	free(path);
	f->out = xasprintf("%s/out", f->dir);
	setenv("FAKE_OUT", f->out, 1);
	f->root = xasprintf("%s/root", f->dir);
	assert_int_equal(mkdir(f->root, 0700), 0);
	char *src = xasprintf("%s/a.c", f->root);
	assert_int_equal(util_write_file_atomic(src, "int x;\n", 7, false, NULL), 0);
	free(src);
	char *data = xasprintf("%s/data", f->dir), *logs = xasprintf("%s/log", f->dir);
	char *err = NULL;
	assert_int_equal(tools_open(data, logs, NULL, &f->reg, &err), 0);
	assert_int_equal(review_tools_register(f->reg, &err), 0);
	f->args = cJSON_CreateObject();
	cJSON_AddStringToObject(f->args, "root", f->root);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(f->args, "files"), cJSON_CreateString("a.c"));
	free(data);
	free(logs);
	free(bin);
	free(script);
}

static void fake_free(struct fake *f)
{
	review_tools_release(f->reg);
	tools_free(&f->reg);
	cJSON_Delete(f->args);
	util_rm_tree(f->dir);
	free(f->dir);
	free(f->out);
	free(f->root);
}

/* The first item of tool's result over output text. */
static cJSON *first_item(struct fake *f, const char *tool, const char *text, cJSON **res)
{
	assert_int_equal(util_write_file_atomic(f->out, text, strlen(text), false, NULL), 0);
	char *err = NULL;
	if (tools_call(f->reg, "review_critical", tool, f->args, res, &err) < 0)
		fail_msg("%s: %s", tool, err);
	review_tools_release(f->reg);
	/* what goes in a bus message */
	char *terr = NULL;
	if (json_check_tree(*res, "raw_data", 1, &terr) < 0)
		fail_msg("%s: not a message's JSON: %s", tool, terr);
	cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(*res, "items"), 0);
	assert_non_null(it);
	return it;
}

static void test_tool_output(void **state)
{
	(void)state;
	struct fake f;
	fake_setup(&f);
	cJSON *res = NULL;
	/* cppcheck: a file name and a message with bytes that are not UTF-8 */
	cJSON *it = first_item(&f, "review.cppcheck",
			       "./b\xff\xfe.c\t6\terror\tdoubleFree\t415\tfreed tw\xadice\n", &res);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "rule")), "doubleFree");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "cwe")), "CWE-415");
	assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(it, "file")), "\xef\xbf\xbd"));
	assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")), 6);
	cJSON_Delete(res);
	/* shellcheck: a line and a code no int holds */
	it = first_item(&f, "review.shellcheck",
			"{\"comments\":[{\"file\":\"a.sh\",\"line\":1e300,\"level\":\"info\","
			"\"code\":1e300,\"message\":\"Double quote\"}]}", &res);
	assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")), 1);
	assert_int_equal(strncmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "rule")), "SC1000", 6), 0);
	cJSON_Delete(res);
	it = first_item(&f, "review.shellcheck",
			"{\"comments\":[{\"file\":\"a.sh\",\"line\":12,\"level\":\"info\","
			"\"code\":2086,\"message\":\"Double quote\"}]}", &res);
	assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")), 12);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "rule")), "SC2086");
	cJSON_Delete(res);
	/* flawfinder: a start line and a rank out of range */
	it = first_item(&f, "review.flawfinder",
			"{\"runs\":[{\"results\":[{\"message\":{\"text\":\"buffer/strcpy:CWE-120\"},"
			"\"rank\":1e300,\"locations\":[{\"physicalLocation\":{\"artifactLocation\":"
			"{\"uri\":\"a.c\"},\"region\":{\"startLine\":-1e300}}}]}]}]}", &res);
	assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")), 1);
	assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "level")), 5);
	cJSON_Delete(res);
	/* gcc -fanalyzer: a line and a CWE no int holds */
#define GCC_DIAG(line, cwe) \
	"[{\"kind\":\"warning\",\"message\":\"double-free\",\"option\":" \
	"\"-Wanalyzer-double-free\",\"locations\":[{\"caret\":{\"file\":\"a.c\"," \
	"\"line\":" line "}}],\"metadata\":{\"cwe\":" cwe "}}]"
	const char *text = GCC_DIAG("1e300", "415");
	assert_int_equal(util_write_file_atomic(f.out, text, strlen(text), false, NULL), 0);
	char *err = NULL;
	assert_int_equal(tools_call(f.reg, "review_critical", "review.gcc_analyzer", f.args, &res,
				    &err), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(res, "items")), 0);
	cJSON_Delete(res);
	it = first_item(&f, "review.gcc_analyzer", GCC_DIAG("3", "1e300"), &res);
	assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")), 3);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "cwe")), "CWE-415");
	cJSON_Delete(res);
#undef GCC_DIAG
	fake_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_check),
		cmocka_unit_test(test_report_status),
		cmocka_unit_test(test_tool_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
