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
	return cli_usage_fail(&cmd_console_entry, "console", "console");
}

static int cmd_console(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "console", &cmd_console_entry, 0 };
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


static const struct cli_opt console_options[] = {
	{ .name = "--attach",
	  .help = "start no agents; watch the bus of the data directory" },
	{ .name = "--read-only", .help = "attach and refuse every action (journalled)" },
	{ .name = "--theme", .arg = "NAME",
	  .help = "a theme name or file (default: dark; mono under NO_COLOR)" },
	{ .name = "--script", .arg = "FILE",
	  .help = "run headless on a 120x40 screen, reading keys from FILE" },
	{ .name = "--dump-screen", .arg = "FILE",
	  .help = "with --script: write the final screen as text" },
	{ .group = run_weekly_options },
	{ 0 },
};

const struct cli_cmd cmd_console_entry = {
	.name = "console",
	.opts = console_options,
	.summary = "the operator console (the default on a terminal); embeds the agents and "
		   "starts the weekly run (as `run weekly` would) unless --attach; --read-only "
		   "attaches and changes nothing",
	.run = cmd_console,
};
