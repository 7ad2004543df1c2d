/* The config file and .env reader: config_parse_env on a buffer (what
 * config_load_env_file reads and the fuzzer drives) and the file reader
 * setting the environment without replacing what is set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/util.h"

#include "core/banned.h"

/* Collects "KEY=VALUE;" for every variable. */
static int collect(void *ctx, const char *key, const char *value, char **err)
{
	(void)err;
	sbuf_addf(ctx, "%s=%s;", key, value);
	return 0;
}

static void test_parse(void **state)
{
	(void)state;
	static const char text[] = "# madf\n"
				   "\n"
				   "MESSAGE_DIR=data/messages\r\n"
				   "export  LOG_DIR = logs # the logs\n"
				   "_Q1=\"a # kept\"\n"
				   "Q2='single'\n"
				   "EMPTY=\n"
				   "HALF=\"open";
	struct sbuf b;
	sbuf_init(&b);
	char *err = NULL;
	assert_int_equal(config_parse_env(text, sizeof(text) - 1, "x.env", collect, &b, &err), 0);
	assert_null(err);
	assert_string_equal(b.data, "MESSAGE_DIR=data/messages;LOG_DIR=logs;_Q1=a # kept;"
				    "Q2=single;EMPTY=;HALF=\"open;");
	sbuf_release(&b);
}

static void parse_fails(const char *text, size_t len, const char *want_err,
			const char *want_vars)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "");
	char *err = NULL;
	assert_int_equal(config_parse_env(text, len, "x.env", collect, &b, &err), -1);
	assert_string_equal(err, want_err);
	assert_string_equal(b.data, want_vars);
	free(err);
	sbuf_release(&b);
}

static void test_parse_errors(void **state)
{
	(void)state;
	/* the variables before the bad line were passed on */
	parse_fails("A=1\n1B=2\nC=3\n", 12, "x.env:2: invalid variable name", "A=1;");
	parse_fails("A=1\nnot a pair\n", 15, "x.env:2: expected KEY=VALUE", "A=1;");
	parse_fails("=v\n", 3, "x.env:1: invalid variable name", "");
	/* a NUL byte was cut silently by the old line reader */
	parse_fails("A=1\nB=x\0y\n", 10, "x.env:2: a NUL byte", "A=1;");
}

static void test_load_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/madf-config-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *path = xasprintf("%s/.env", dir);
	static const char text[] = "CFG_T_NEW=new value\nCFG_T_SET=from file\n";
	assert_int_equal(util_write_file_atomic(path, text, sizeof(text) - 1, false, NULL), 0);
	setenv("CFG_T_SET", "from env", 1);
	unsetenv("CFG_T_NEW");
	char *err = NULL;
	assert_int_equal(config_load_env_file(path, false, &err), 0);
	assert_string_equal(getenv("CFG_T_NEW"), "new value");
	assert_string_equal(getenv("CFG_T_SET"), "from env");
	unlink(path);
	assert_int_equal(config_load_env_file(path, true, &err), 0);
	assert_int_equal(config_load_env_file(path, false, &err), -1);
	assert_non_null(strstr(err, "cannot open"));
	free(err);
	free(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_load_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
