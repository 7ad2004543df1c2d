/* core/util.c's percent-decoder (RFC 3986), which the NATS bus URL's user,
 * password and token go through: escapes decoded in either case, the rest
 * kept byte for byte, a malformed escape refused without quoting the
 * input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#include "core/banned.h"

/* decoded(S): S decoded (asserted to succeed), the caller's */
static char *decoded(const char *s)
{
	char *out = NULL, *err = NULL;
	int r = util_pct_decode(s, strlen(s), &out, &err);
	if (r != 0)
		fail_msg("\"%s\": %s", s, err ? err : "?");
	assert_null(err);
	assert_non_null(out);
	return out;
}

static void test_pct_decodes(void **state)
{
	(void)state;
	static const struct { const char *in, *want; } cases[] = {
		{ "p%40ss", "p@ss" },
		{ "a%3Ab", "a:b" },
		{ "a%3ab", "a:b" },           /* lower-case hex too */
		{ "100%25", "100%" },
		{ "%25%34%30", "%40" },       /* decoded once, not again */
		{ "s3c%40re%3At%25", "s3c@re:t%" },
		{ "plain-Pass_1.~", "plain-Pass_1.~" },
		{ "", "" },
		{ "%C3%A9", "\xc3\xa9" },     /* UTF-8 bytes */
		{ "sp%20ace", "sp ace" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *out = decoded(cases[i].in);
		assert_string_equal(out, cases[i].want);
		free(out);
	}
}

/* Only the n bytes given are decoded: the user part of "user:pw" ends at
 * the colon. */
static void test_pct_length(void **state)
{
	(void)state;
	const char *ui = "us%65r:p%40ss";
	char *out = NULL, *err = NULL;
	assert_int_equal(util_pct_decode(ui, 6, &out, &err), 0);
	assert_string_equal(out, "user");
	free(out);
	/* an escape cut by the length is malformed, not read past it */
	assert_int_equal(util_pct_decode("ab%4", 4, &out, &err), -1);
	assert_null(out);
	free(err);
	err = NULL;
	assert_int_equal(util_pct_decode("ab%41", 4, &out, &err), -1);
	assert_null(out);
	free(err);
}

static void test_pct_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = { "p%zzss", "p%4", "%", "pw%", "p%4gss", "p%g4ss" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *out = NULL, *err = NULL;
		assert_int_equal(util_pct_decode(bad[i], strlen(bad[i]), &out, &err), -1);
		assert_null(out);
		assert_non_null(err);
		assert_non_null(strstr(err, "not followed by two hexadecimal digits"));
		/* the input (a password) is not quoted */
		if (strlen(bad[i]) > 1)
			assert_null(strstr(err, bad[i]));
		free(err);
	}
	char *out = NULL, *err = NULL;
	assert_int_equal(util_pct_decode("a%00b", 5, &out, &err), -1);
	assert_null(out);
	assert_non_null(strstr(err, "%00"));
	free(err);
	/* NULL err: still refused */
	assert_int_equal(util_pct_decode("%zz", 3, &out, NULL), -1);
	assert_null(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pct_decodes),
		cmocka_unit_test(test_pct_length),
		cmocka_unit_test(test_pct_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
