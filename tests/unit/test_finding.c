/* Review findings: the seed 001 shapes validate; every broken rule is
 * named by field and rule. JSON here is written with single quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/finding.h"
#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

static cJSON *parse_q(const char *s)
{
	char *d = xstrdup(s);
	for (char *p = d; *p; p++)
		if (*p == '\'')
			*p = '"';
	cJSON *j = cJSON_Parse(d);
	free(d);
	assert_non_null(j);
	return j;
}

/* The errors of one finding, joined ("" when valid). Caller frees. */
static char *errors_of(const char *json, int *n)
{
	cJSON *j = parse_q(json);
	struct msg_errors e = { 0 };
	*n = finding_validate(j, "", &e);
	char *s = msg_errors_join(&e);
	msg_errors_release(&e);
	cJSON_Delete(j);
	return s;
}

static void expect(const char *json, int count, const char *text)
{
	int n;
	char *s = errors_of(json, &n);
	if (n != count || (text && !strstr(s, text)))
		fail_msg("%s -> %d errors \"%s\" (wanted %d with \"%s\")", json, n, s, count,
			 text ? text : "");
	free(s);
}

/* The three examples of the seed, verbatim apart from the quotes. */
static void test_seed_examples_validate(void **st)
{
	(void)st;
	expect("{'type':'debt','severity':'high','description':'d','file':'a.c','line':42,"
	       "'suggestion':'s','reference':'r'}", 0, NULL);
	expect("{'type':'improvement','severity':'medium','description':'d','file':'src/b.c',"
	       "'line':88,'suggestion':'s','reference':'r'}", 0, NULL);
	expect("{'type':'critical','severity':'high','description':'d','file':'c.c','line':12,"
	       "'remediation':'fix','reference':'CWE-415'}", 0, NULL);
}

static void test_fields_and_rules_named(void **st)
{
	(void)st;
	expect("{'type':'critical','severity':'high','description':'d','file':'c.c','line':12,"
	       "'suggestion':'fix','reference':'CWE-415'}", 2,
	       "remediation: required when type is critical");
	expect("{'type':'critical','severity':'high','description':'d','file':'c.c','line':12,"
	       "'suggestion':'fix','reference':'CWE-415'}", 2,
	       "suggestion: not allowed when type is critical (use remediation)");
	expect("{'type':'debt','severity':'high','description':'d','file':'a.c','line':4,"
	       "'remediation':'s','reference':'r'}", 2, "suggestion: required when type is debt");
	expect("{'type':'bug','severity':'high','description':'d','file':'a.c','line':4,"
	       "'suggestion':'s','reference':'r'}", 1,
	       "type: must be one of debt, improvement, critical");
	expect("{'type':'debt','severity':'blocker','description':'d','file':'a.c','line':4,"
	       "'suggestion':'s','reference':'r'}", 1,
	       "severity: must be one of low, medium, high, critical");
	expect("{'type':'debt','severity':'low','description':'d','file':'a.c','line':0,"
	       "'suggestion':'s','reference':'r'}", 1, "line: must be >= 1");
	expect("{'type':'debt','severity':'low','description':'d','file':'a.c','line':2.5,"
	       "'suggestion':'s','reference':'r'}", 1, "line: must be an integer");
	expect("{'type':'debt','severity':'low','description':'','file':'a.c','line':2,"
	       "'suggestion':'s','reference':'r'}", 1, "description: must not be empty");
	expect("{'type':'debt','severity':'low','description':'d','file':'a.c','line':2,"
	       "'suggestion':'s'}", 1, "reference: required");
	expect("{'type':'debt','severity':'low','description':'d','file':'a.c','line':2,"
	       "'suggestion':'s','reference':'r','confidence':0.9}", 1, "confidence: not allowed");
	expect("{'type':'debt','severity':'low','description':'d','file':'/etc/passwd','line':2,"
	       "'suggestion':'s','reference':'r'}", 1,
	       "file: must be a path relative to the codebase root");
	expect("{'type':'debt','severity':'low','description':'d','file':'a/../../x','line':2,"
	       "'suggestion':'s','reference':'r'}", 1, "file: must be a path relative");
	expect("[1]", 1, "must be an object");
}

static void test_list_and_builder(void **st)
{
	(void)st;
	cJSON *arr = cJSON_CreateArray();
	cJSON *f = finding_new(FINDING_CRITICAL, "high", "double free of p", "src/a.c", 12,
			       "free once", "CWE-415");
	assert_non_null(f);
	assert_string_equal(cJSON_GetObjectItem(f, "remediation")->valuestring, "free once");
	assert_null(cJSON_GetObjectItem(f, "suggestion"));
	cJSON_AddItemToArray(arr, f);
	struct msg_errors e = { 0 };
	assert_int_equal(finding_list_validate(arr, FINDING_CRITICAL, "critical", &e), 0);
	assert_int_equal(finding_list_validate(arr, FINDING_DEBT, "debt", &e), 1);
	char *s = msg_errors_join(&e);
	assert_string_equal(s, "debt[0].type: must be debt in this list");
	free(s);
	msg_errors_release(&e);
	cJSON_Delete(arr);
	/* the builder refuses what would not validate */
	assert_null(finding_new(FINDING_DEBT, "huge", "d", "a.c", 1, "s", "r"));
	assert_null(finding_new(FINDING_DEBT, "low", "d", "a.c", 0, "s", "r"));
	assert_null(finding_new(FINDING_DEBT, "low", "d", "a.c", 3, "", "r"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_examples_validate),
		cmocka_unit_test(test_fields_and_rules_named),
		cmocka_unit_test(test_list_and_builder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
