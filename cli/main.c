/* madf: the command line's entry point. Global options may appear before
 * or after the command. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

/* The commands, each defined in the file that implements it. */
const struct cli_cmd *const cli_commands[] = {
	&cmd_console_entry, &cmd_run_entry, &cmd_runs_entry, &cmd_tasks_entry,
	&cmd_agent_entry, &cmd_send_entry, &cmd_recv_entry, &cmd_ls_entry,
	&cmd_show_entry, &cmd_retry_entry, &cmd_delete_entry, &cmd_trash_entry,
	&cmd_kill_entry, &cmd_requeue_entry, &cmd_validate_entry, &cmd_gc_entry,
	&cmd_status_entry, &cmd_bench_entry, &cmd_mcp_entry, &cmd_ask_entry,
	&cmd_review_entry, &cmd_tools_entry, &cmd_serve_entry, NULL,
};

/* The options every command takes, before or after it. */
static const struct cli_opt global_options[] = {
	{ .name = "--data-dir", .arg = "DIR",
	  .help = "data directory (default: MADF_DATA_DIR, MESSAGE_DIR's parent from "
		  ".env, or ./data)" },
	{ .name = "--log-dir", .arg = "DIR",
	  .help = "log directory (default: LOG_DIR, or logs/ beside the data directory)" },
	{ .name = "--config", .arg = "FILE", .help = "KEY=VALUE settings (as .env)" },
	{ .name = "--mcp-config", .arg = "FILE",
	  .help = "MCP servers, .mcp.json format (default: ./.mcp.json)" },
	{ .name = "--bus", .arg = "URL",
	  .help = "the message bus: file: (default, the data directory) or "
		  "nats://[user:password@]host:port[,host:port...] (an @ in the user or "
		  "password is %40, a : %3A, a % %25), tls://... for TLS "
		  "(NATS_CA, NATS_CREDS: see madf(1)) (default: MADF_BUS, BUS_URL from .env, "
		  "or file:)" },
	{ .name = "--no-fsync", .help = "do not fsync sends (faster, not crash-safe)" },
	{ .name = "-v", .help = "more output on stderr" },
	{ .name = "--verbose", .help = "the same as -v" },
	{ .name = "--version", .help = "print the version" },
	{ .name = "--help", .help = "this help; after a command, that command's" },
	{ .name = "-h", .help = "the same as --help" },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: madf [GLOBAL OPTIONS] COMMAND [ARGS]\n\n"
		   "madf is an operations console for multi-agent work: agents exchange\n"
		   "JSON messages over a file-system message bus.\n\ncommands:\n");
	for (const struct cli_cmd *const *c = cli_commands; *c; c++)
		fprintf(f, "  %-9s %s\n", (*c)->name, (*c)->summary);
	fprintf(f, "\nglobal options:\n");
	cli_opts_print(f, global_options);
	fprintf(f, "\n`madf COMMAND --help` shows one command's usage; man madf has it all.\n"
		   "exit status: 0 success, 1 failure, 2 usage error\n");
}

static const struct cli_cmd *find_cmd(const struct cli_cmd *const *v, const char *name)
{
	for (; v && *v; v++)
		if (!strcmp((*v)->name, name))
			return *v;
	return NULL;
}

/* The names of e's subcommands, "a, b or c" (new string). */
static char *sub_names(const struct cli_cmd *e)
{
	struct sbuf b;
	sbuf_init(&b);
	for (const struct cli_cmd *const *s = e->subs; s && *s; s++)
		sbuf_addf(&b, "%s%s", s == e->subs ? "" : s[1] ? ", " : " or ", (*s)->name);
	return sbuf_detach(&b);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	struct cli cli = { 0 };
	const char *data_dir = NULL, *log_dir = NULL, *config = NULL, *mcp_config = NULL;
	const char *bus_url = NULL;
	bool help = false, no_fsync = false;
	/* Pull global options out wherever they stand. */
	char **rest = xcalloc((size_t)argc + 1, sizeof(*rest));
	int nrest = 0;
	bool after_dashes = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		size_t n = 0;
		if (after_dashes) {
			rest[nrest++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			after_dashes = true;
			rest[nrest++] = argv[i];
			continue;
		}
		const char *eq = strchr(a, '=');
		n = eq ? (size_t)(eq - a) : strlen(a);
		const struct cli_opt *g = a[0] == '-' ? cli_opt_find(global_options, a, n) : NULL;
		if (g && g->arg) {
			if (!strcmp(g->name, "--data-dir"))
				slot = &data_dir;
			else if (!strcmp(g->name, "--log-dir"))
				slot = &log_dir;
			else if (!strcmp(g->name, "--config"))
				slot = &config;
			else if (!strcmp(g->name, "--mcp-config"))
				slot = &mcp_config;
			else
				slot = &bus_url;
		}
		if (slot) {
			if (a[n] == '=') {
				*slot = a + n + 1;
			} else if (i + 1 < argc) {
				*slot = argv[++i];
			} else {
				free(rest);
				return cli_fail(EXIT_USAGE, NULL, "option %s needs a value", a);
			}
		} else if (!g || eq) {
			rest[nrest++] = argv[i];
		} else if (!strcmp(g->name, "-v") || !strcmp(g->name, "--verbose")) {
			cli.verbose++;
		} else if (!strcmp(g->name, "--no-fsync")) {
			no_fsync = true;
		} else if (!strcmp(g->name, "--version")) {
			printf("madf %s\n", MADF_VERSION);
			free(rest);
			return EXIT_OK;
		} else {
			help = true;
		}
	}
	/* In the environment, so that the agents madf starts use it too. */
	if (bus_url)
		setenv("MADF_BUS", bus_url, 1);
	char *err = NULL;
	if (config && config_load_env_file(config, false, &err) < 0) {
		cli_fail(EXIT_USAGE, NULL, "--config: %s", err);
		free(err);
		free(rest);
		return EXIT_USAGE;
	}
	if (config_load_env_file(".env", true, &err) < 0) {
		cli_fail(EXIT_FAIL, NULL, "%s", err);
		free(err);
		free(rest);
		return EXIT_FAIL;
	}
	if (nrest == 0 && !help && isatty(0) && isatty(1)) {
		static char console_name[] = "console";
		rest[nrest++] = console_name;
	}
	if (nrest == 0) {
		usage(help ? stdout : stderr);
		free(rest);
		return help ? EXIT_OK : EXIT_USAGE;
	}
	const struct cli_cmd *cmd = find_cmd(cli_commands, rest[0]);
	if (!cmd) {
		cli_fail(EXIT_USAGE, NULL, "unknown command \"%s\" (see madf --help)", rest[0]);
		free(rest);
		return EXIT_USAGE;
	}
	/* Down the subcommands the next words name: "bench bus". */
	struct sbuf path;
	sbuf_init(&path);
	sbuf_addstr(&path, cmd->name);
	int depth = 1;
	for (const struct cli_cmd *sub; depth < nrest && (sub = find_cmd(cmd->subs, rest[depth]));
	     depth++) {
		cmd = sub;
		sbuf_addf(&path, " %s", sub->name);
	}
	if (help) {
		cli_help_print(stdout, cmd, path.data);
		sbuf_release(&path);
		free(rest);
		return EXIT_OK;
	}
	if (!cmd->run) {
		/* A group of subcommands, none of them named. */
		char *names = sub_names(cmd);
		if (depth < nrest)
			cli_fail(EXIT_USAGE, path.data, "unknown subcommand \"%s\": %s (see madf %s "
				 "--help)", rest[depth], names, path.data);
		else
			cli_fail(EXIT_USAGE, path.data, "a subcommand is needed: %s (see madf %s "
				 "--help)", names, path.data);
		free(names);
		sbuf_release(&path);
		free(rest);
		return EXIT_USAGE;
	}
	sbuf_release(&path);
	cli.data_dir = config_data_dir(data_dir);
	cli.log_dir = config_log_dir(log_dir, cli.data_dir);
	cli.mcp_config = mcp_config;
	bus_config_init(&cli.bcfg, cli.data_dir);
	if (no_fsync)
		cli.bcfg.durable = false;
	int r = cmd->run(&cli, nrest, rest);
	bus_free(&cli.bus);
	bus_config_release(&cli.bcfg);
	free(cli.data_dir);
	free(cli.log_dir);
	free(rest);
	if (fflush(stdout) != 0 && r == EXIT_OK)
		r = cli_fail(EXIT_FAIL, NULL, "cannot write output: %s", strerror(errno));
	return r;
}
