/* Word wrapping for the console's panes: at spaces, inside a word only
 * when it is longer than a line, never inside a UTF-8 sequence, with a
 * hanging indent; nothing lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tui/wrap.h"

#include "core/banned.h"

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void test_at_spaces(void **state)
{
	(void)state;
	char **v = NULL;
	size_t n = wrap_text("the quick brown fox jumps over the lazy dog", 16, 0, &v);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "the quick brown");
	assert_string_equal(v[1], "fox jumps over");
	assert_string_equal(v[2], "the lazy dog");
	free_lines(v, n);
}

static void test_hanging_indent_and_newlines(void **state)
{
	(void)state;
	char **v = NULL;
	size_t n = wrap_text("- one two three four five\nsix", 12, 2, &v);
	assert_int_equal(n, 4);
	assert_string_equal(v[0], "- one two");
	assert_string_equal(v[1], "  three four");
	assert_string_equal(v[2], "  five");
	assert_string_equal(v[3], "six");
	free_lines(v, n);
	n = wrap_text("", 10, 0, &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0], "");
	free_lines(v, n);
}

static void test_long_word_and_utf8(void **state)
{
	(void)state;
	char **v = NULL;
	/* a word longer than a line is cut at the width */
	size_t n = wrap_text("abcdefghijklmnopqrstuvwxyz", 10, 0, &v);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "abcdefghij");
	assert_string_equal(v[2], "uvwxyz");
	free_lines(v, n);
	/* ten 3-byte characters are ten columns: cut between characters */
	const char *bars = "\xe2\x96\x81\xe2\x96\x82\xe2\x96\x83\xe2\x96\x84\xe2\x96\x85"
			   "\xe2\x96\x86\xe2\x96\x87\xe2\x96\x88\xe2\x96\x81\xe2\x96\x82";
	assert_int_equal(wrap_cols(bars, strlen(bars)), 10);
	n = wrap_text(bars, 8, 0, &v);
	assert_int_equal(n, 2);
	assert_int_equal(wrap_cols(v[0], strlen(v[0])), 8);
	assert_int_equal(strlen(v[0]), 24);
	assert_int_equal(wrap_cols(v[1], strlen(v[1])), 2);
	free_lines(v, n);
}

/* Nothing is lost: the words of the lines are the words of the text. */
static void test_nothing_lost(void **state)
{
	(void)state;
	struct sbuf in;
	sbuf_init(&in);
	for (int i = 0; i < 300; i++)
		sbuf_addf(&in, "w%d%s", i * 7919 % 1000, i % 13 ? " " : "  ");
	for (size_t width = 8; width < 40; width += 3) {
		char **v = NULL;
		size_t n = wrap_text(in.data, width, 3, &v);
		struct sbuf out;
		sbuf_init(&out);
		for (size_t i = 0; i < n; i++) {
			assert_true(wrap_cols(v[i], strlen(v[i])) <= width);
			sbuf_addf(&out, "%s ", v[i]);
		}
		/* compare word by word */
		char *a = xstrdup(in.data), *b = xstrdup(out.data), *sa = NULL, *sb = NULL;
		char *wa = strtok_r(a, " ", &sa), *wb = strtok_r(b, " ", &sb);
		while (wa && wb) {
			assert_string_equal(wa, wb);
			wa = strtok_r(NULL, " ", &sa);
			wb = strtok_r(NULL, " ", &sb);
		}
		assert_null(wa);
		assert_null(wb);
		free(a);
		free(b);
		sbuf_release(&out);
		free_lines(v, n);
	}
	sbuf_release(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_at_spaces),
		cmocka_unit_test(test_hanging_indent_and_newlines),
		cmocka_unit_test(test_long_word_and_utf8),
		cmocka_unit_test(test_nothing_lost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
