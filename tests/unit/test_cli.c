/* The command entries: cli_next scans what an entry's option table says
 * (groups included), the usage line and --help are generated from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#include "core/banned.h"

static const struct cli_opt shared[] = {
	{ .name = "--market", .arg = "SOURCE", .help = "the market data" },
	{ .name = "--fresh", .help = "start a new run" },
	{ 0 },
};

static const struct cli_opt opts[] = {
	{ .name = "--to", .arg = "AGENT", .required = true, .help = "the recipient" },
	{ .name = "--json", .help = "print JSON" },
	{ .group = shared },
	{ .name = "--max", .arg = "N", .help = "at most N, a help line long enough to be wrapped "
	  "at the seventy-ninth column of the terminal" },
	{ 0 },
};

static int run_nothing(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	return 0;
}

static const struct cli_cmd sub = { .name = "sub", .args = "ID...", .summary = "a subcommand",
				    .run = run_nothing };
static const struct cli_cmd *const subs[] = { &sub, NULL };
static const struct cli_cmd entry = { .name = "demo", .args = "NAME", .opts = opts,
				      .summary = "a demonstration", .run = run_nothing,
				      .subs = subs };

/* argv from a string of words (modified in place). */
static int split(char *s, char **argv, int max)
{
	int n = 0;
	for (char *save = NULL, *t = strtok_r(s, " ", &save); t && n < max;
	     t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	return n;
}

static void test_next_reads_the_table(void **state)
{
	(void)state;
	char line[] = "demo --to=a NAME1 --json --market sim --fresh --max 3 -- --not-an-option";
	char *argv[16];
	int argc = split(line, argv, 16);
	struct cli_opts o = { argc, argv, 1, "demo", &entry, 0 };
	const char *name, *val, *names[8] = { 0 }, *vals[8] = { 0 };
	int n = 0, r;
	while ((r = cli_next(&o, &name, &val)) > 0 && n < 8) {
		names[n] = name;
		vals[n++] = val;
	}
	assert_int_equal(r, 0);
	assert_int_equal(n, 7);
	assert_string_equal(names[0], "--to");
	assert_string_equal(vals[0], "a");
	assert_null(names[1]);
	assert_string_equal(vals[1], "NAME1");
	assert_string_equal(names[2], "--json");
	assert_null(vals[2]);
	/* from the group, by reference */
	assert_string_equal(names[3], "--market");
	assert_string_equal(vals[3], "sim");
	assert_string_equal(names[4], "--fresh");
	assert_string_equal(names[5], "--max");
	assert_string_equal(vals[5], "3");
	/* after --, an option's spelling is an argument */
	assert_null(names[6]);
	assert_string_equal(vals[6], "--not-an-option");
	/* the names are the table's own strings: each stays valid (no buffer
	 * reused by the next call) */
	assert_ptr_equal(names[0], opts[0].name);
	assert_ptr_equal(names[3], shared[0].name);
}

static int next_error(const char *words)
{
	char line[128];
	snprintf(line, sizeof(line), "%s", words);
	char *argv[16];
	int argc = split(line, argv, 16);
	struct cli_opts o = { argc, argv, 1, "demo", &entry, 0 };
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0)
		;
	return r;
}

static void test_next_refuses(void **state)
{
	(void)state;
	assert_int_equal(next_error("demo --to a"), 0);
	assert_int_equal(next_error("demo --bogus"), -1);    /* unknown */
	assert_int_equal(next_error("demo --t x"), -1);      /* no prefixes */
	assert_int_equal(next_error("demo --tox x"), -1);
	assert_int_equal(next_error("demo --json=1"), -1);   /* a flag takes no value */
	assert_int_equal(next_error("demo --to"), -1);       /* a value is needed */
	assert_non_null(cli_opt_find(opts, "--fresh", 7));
	assert_null(cli_opt_find(opts, "--fresh", 6));
}

static void test_usage_from_the_options(void **state)
{
	(void)state;
	char *u = cli_usage(&entry, "demo");
	/* required options first, unbracketed; then the rest in table order,
	 * the group's where it stands */
	assert_string_equal(u, "madf demo NAME --to AGENT [--json] [--market SOURCE] [--fresh] "
			       "[--max N]");
	free(u);
	u = cli_usage(&sub, "demo sub");
	assert_string_equal(u, "madf demo sub ID...");
	free(u);
}

static void test_help(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	cli_help_print(f, &entry, "demo");
	fclose(f);
	const char *want =
		"usage: madf demo NAME --to AGENT [--json] [--market SOURCE] [--fresh] [--max N]\n"
		"       madf demo sub ID...\n"
		"\n"
		"a demonstration\n"
		"\n"
		"options:\n"
		"  --to AGENT            the recipient\n"
		"  --json                print JSON\n"
		"  --market SOURCE       the market data\n"
		"  --fresh               start a new run\n"
		"  --max N               at most N, a help line long enough to be wrapped at the\n"
		"                        seventy-ninth column of the terminal\n"
		"\n"
		"subcommands (madf demo SUBCOMMAND --help for one):\n"
		"  sub                   a subcommand\n";
	assert_string_equal(buf, want);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_reads_the_table),
		cmocka_unit_test(test_next_refuses),
		cmocka_unit_test(test_usage_from_the_options),
		cmocka_unit_test(test_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
