/* `madf console`: its options (its own and every option of `madf run
 * weekly`), then tui/console_main.c's console_main. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/workflow.h"
#include "core/util.h"
#include "cli/host.h"
#include "tui/console.h"
#include "core/banned.h"

static int console_usage(void)
{
	for (unsigned i = 0; i < cli_ncommands; i++)
		if (!strcmp(cli_commands[i].name, "console"))
			return cli_fail(EXIT_USAGE, "console", "usage: madf console %s",
					cli_commands[i].usage);
	return EXIT_USAGE;
}

/* The console's own options and every option of `madf run weekly`. */
static const char *const console_value_options[] = { "--theme", "--script", "--dump-screen", NULL };
static const char *const console_flag_options[] = { "--attach", "--read-only", NULL };

static void console_options(const char **wv, size_t nwv, const char **fl, size_t nfl)
{
	size_t n = 0;
	for (size_t i = 0; console_value_options[i] && n + 1 < nwv; i++)
		wv[n++] = console_value_options[i];
	for (size_t i = 0; run_value_options[i] && n + 1 < nwv; i++)
		wv[n++] = run_value_options[i];
	wv[n] = NULL;
	n = 0;
	for (size_t i = 0; console_flag_options[i] && n + 1 < nfl; i++)
		fl[n++] = console_flag_options[i];
	for (size_t i = 0; run_flag_options[i] && n + 1 < nfl; i++)
		fl[n++] = run_flag_options[i];
	fl[n] = NULL;
}

int cmd_console(struct cli *cli, int argc, char **argv)
{
	const char *wv[32], *fl[16];
	console_options(wv, ARRAY_SIZE(wv), fl, ARRAY_SIZE(fl));
	struct cli_opts o = { argc, argv, 1, "console", wv, fl, 0 };
	struct console c = { .cli = cli, .sig_fd = -1 };
	struct run_opts ro;
	run_opts_init(&ro);
	const char *name, *val;
	char run_opt[64] = ""; /* a run option given (cli_next's name is reused) */
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			run_opts_release(&ro);
			return console_usage();
		}
		int k = run_option(&ro, "console", name, val);
		if (k < 0) {
			run_opts_release(&ro);
			return EXIT_USAGE;
		}
		if (k > 0) {
			util_strlcpy(run_opt, name, sizeof(run_opt));
			continue;
		}
		if (!strcmp(name, "--attach"))
			c.opts.attach = true;
		else if (!strcmp(name, "--read-only"))
			c.opts.read_only = true;
		else if (!strcmp(name, "--theme"))
			c.opts.theme = val;
		else if (!strcmp(name, "--script"))
			c.opts.script = val;
		else if (!strcmp(name, "--dump-screen"))
			c.opts.dump = val;
	}
	/* Read-only reads only: it starts no agent and no run (it attaches). */
	if (c.opts.read_only)
		c.opts.attach = true;
	if (r >= 0 && run_opt[0] && c.opts.attach) {
		run_opts_release(&ro);
		return cli_fail(EXIT_USAGE, "console", "%s is for the agents the console runs; "
				"%s runs none (drop one of them)", run_opt,
				c.opts.read_only ? "--read-only" : "--attach");
	}
	run_opts_finish(&ro);
	if (r < 0) {
		run_opts_release(&ro);
		return EXIT_USAGE;
	}
	if (c.opts.dump && !c.opts.script) {
		run_opts_release(&ro);
		return cli_fail(EXIT_USAGE, "console", "--dump-screen needs --script");
	}
	c.headless = c.opts.script != NULL;
	if (!c.headless && (!isatty(0) || !isatty(1))) {
		run_opts_release(&ro);
		return cli_fail(EXIT_USAGE, "console", "needs a terminal (or --script FILE)");
	}
	int rc = console_main(&c, &ro);
	run_opts_release(&ro);
	return rc;
}

