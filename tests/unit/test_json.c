/* The JSON field getters and setters of core/json_out.h: each getter on a
 * present field of the right type, of the wrong type, a missing field, a
 * NULL or non-object parent; ranges and non-finite numbers; sanitized
 * copies; and the
 * setters replacing what was there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"

#include "core/banned.h"

static cJSON *sample(void)
{
	cJSON *o = cJSON_Parse("{\"s\": \"text\", \"empty\": \"\", \"n\": 2.5, \"i\": 42,"
			       " \"neg\": -7, \"big\": 1e300, \"edge\": 9223372036854775808,"
			       " \"t\": true, \"f\": false,"
			       " \"nul\": null, \"a\": [1, 2], \"o\": {\"S\": \"upper\"}}");
	assert_non_null(o);
	return o;
}

static void test_strings(void **state)
{
	(void)state;
	cJSON *o = sample();
	assert_string_equal(jstr(o, "s"), "text");
	assert_string_equal(jstr(o, "empty"), "");
	assert_null(jstr(o, "n"));       /* a number is no string */
	assert_null(jstr(o, "missing"));
	assert_null(jstr(o, "S"));       /* keys are case sensitive */
	assert_null(jstr(NULL, "s"));
	assert_null(jstr(cJSON_GetObjectItem(o, "a"), "s")); /* not an object */
	assert_string_equal(jstr_or(o, "s", "def"), "text");
	assert_string_equal(jstr_or(o, "empty", "def"), "");
	assert_string_equal(jstr_or(o, "t", "def"), "def");
	assert_string_equal(jstr_or(NULL, "s", "def"), "def");
	assert_true(jstr_is(o, "s", "text"));
	assert_false(jstr_is(o, "s", "tex"));
	assert_false(jstr_is(o, "missing", ""));
	assert_false(jstr_is(o, "nul", "null"));
	assert_string_equal(jstr(jget(o, "o"), "S"), "upper");
	assert_null(jget(o, "missing"));
	assert_null(jget(jget(o, "missing"), "S")); /* chains through NULL */
	cJSON_Delete(o);
}

static void test_numbers(void **state)
{
	(void)state;
	cJSON *o = sample();
	assert_true(jnum(o, "n", -1) == 2.5);
	assert_true(jnum(o, "s", -1) == -1);
	assert_true(jnum(o, "missing", 9) == 9);
	assert_true(jnum(NULL, "n", 3) == 3);
	double v = 123;
	assert_true(jnum_get(o, "n", &v));
	assert_true(v == 2.5);
	v = 123;
	assert_false(jnum_get(o, "s", &v));
	assert_false(jnum_get(o, "missing", &v));
	assert_true(v == 123); /* untouched */
	/* Not finite: refused by jnum_get. */
	cJSON *inf = cJSON_CreateObject();
	cJSON_AddNumberToObject(inf, "x", INFINITY);
	assert_false(jnum_get(inf, "x", &v));
	assert_true(v == 123);
	cJSON_Delete(inf);
	cJSON_Delete(o);
}

static void test_integers_in_range(void **state)
{
	(void)state;
	cJSON *o = sample();
	long v = 5;
	assert_true(jint(o, "i", 0, 100, &v));
	assert_int_equal(v, 42);
	assert_false(jint(o, "i", 0, 41, &v));  /* above max */
	assert_false(jint(o, "neg", 0, 10, &v)); /* below min */
	assert_int_equal(v, 42);
	assert_true(jint(o, "neg", -10, 10, &v));
	assert_int_equal(v, -7);
	assert_true(jint(o, "n", 0, 10, &v));   /* truncated toward zero */
	assert_int_equal(v, 2);
	assert_false(jint(o, "big", LONG_MIN, LONG_MAX, &v)); /* no long holds it */
	assert_false(jint(o, "edge", LONG_MIN, LONG_MAX, &v)); /* 2^63 = (double)LONG_MAX */
	assert_false(jint(o, "s", 0, 10, &v));
	assert_false(jint(o, "missing", 0, 10, &v));
	assert_int_equal(v, 2);
	cJSON_Delete(o);
}

/* A string made safe to show: the escape sequence is gone, the text is
 * kept, and the copy is the caller's. */
static void test_clean_copy(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "esc", "red\x1b[31mtext\x07!");
	cJSON_AddNumberToObject(o, "n", 1);
	char *c = jstr_clean(o, "esc");
	assert_non_null(c);
	assert_null(strchr(c, '\x1b'));
	assert_null(strchr(c, '\x07'));
	assert_non_null(strstr(c, "red"));
	assert_non_null(strstr(c, "text"));
	assert_ptr_not_equal(c, jstr(o, "esc"));
	free(c);
	assert_null(jstr_clean(o, "n"));
	assert_null(jstr_clean(o, "missing"));
	cJSON_Delete(o);
}

static void test_booleans(void **state)
{
	(void)state;
	cJSON *o = sample();
	assert_true(jbool(o, "t", false));
	assert_false(jbool(o, "f", true));
	assert_true(jbool(o, "i", true));   /* a number is no boolean: def */
	assert_false(jbool(o, "missing", false));
	assert_true(jbool(NULL, "t", true));
	cJSON_Delete(o);
}

static void test_setters_replace(void **state)
{
	(void)state;
	cJSON *o = sample();
	jset_str(o, "n", "now text");
	assert_string_equal(jstr(o, "n"), "now text");
	jset_str(o, "s", NULL);
	assert_true(cJSON_IsNull(jget(o, "s")));
	jset_num(o, "s", 7);
	assert_true(jnum(o, "s", 0) == 7);
	cJSON *x = jobj(o, "a"); /* an array there: replaced by an object */
	assert_true(cJSON_IsObject(x));
	assert_ptr_equal(jobj(o, "a"), x);
	cJSON *y = jarr(o, "new");
	assert_true(cJSON_IsArray(y));
	assert_ptr_equal(jarr(o, "new"), y);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_integers_in_range),
		cmocka_unit_test(test_clean_copy),
		cmocka_unit_test(test_booleans),
		cmocka_unit_test(test_setters_replace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
