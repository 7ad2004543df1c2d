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
#include "cli/host.h"
#include "cli/workflows.h"
#include "server/serve.h"
#include "core/banned.h"

const struct cli_cmd cli_commands[] = {
	{ "console", "[--attach | --read-only] [--theme NAME] [--script FILE --dump-screen FILE] "
		     RUN_WEEKLY_OPTIONS,
	  "the operator console (the default on a terminal); embeds the agents and "
	  "starts the weekly run (as `run weekly` would) unless --attach; --read-only "
	  "attaches and changes nothing", cmd_console },
	{ "run", "NAME [OPTIONS]: weekly " RUN_WEEKLY_OPTIONS " [--attach] | review " REVIEW_USAGE,
	  "run a registered workflow: weekly, the Asia/G10 FX research workflow with embedded "
	  "agents (LLM mode when a model and key are configured; MADF_LLM=off for the "
	  "deterministic agents; --attach: the agents run elsewhere, madf agent NAME, and the "
	  "report is written here); review, the code review crew (as madf review)",
	  cmd_run },
	{ "runs", "[--json]",
	  "list the runs of the registered workflows: status, time in that phase, tasks, "
	  "health (STUCK: over MADF_RUN_STUCK_S, default 900 s, in one phase)", cmd_runs },
	{ "tasks", "[RUN] [--json]",
	  "a run's tasks (default: the last started) with assignee, status, priority, attempts",
	  cmd_tasks },
	{ "agent", "NAME [--market csv:PATH|ecb[:BASE_URL]|sim] [--news jsonl:PATH|rss:PATH|rss:URL[,URL...]|sim] [--report-dir DIR] "
		   "[--inject-fault AGENT:KIND] [--task-timeout S]",
	  "run one agent as its own process", cmd_agent },
	{ "send", "--to AGENT --type TYPE [--from AGENT] [--content JSON|@FILE|@-] "
		  "[--priority P] [--timeout S] [--reply-to ID] [--correlation-id ID] [--new-agent]",
	  "send one message; prints its message_id", cmd_send },
	{ "recv", "AGENT [--wait S] [--max N] [--new-agent]",
	  "claim waiting messages, print each as a JSON line, then ack it", cmd_recv },
	{ "ls", "[inbox [AGENT] | processing [AGENT] | retry [AGENT] | dead-letter | "
		"processed] [--json]",
	  "list stored messages", cmd_ls },
	{ "show", "ID [--json]", "print one message and where it is", cmd_show },
	{ "retry", "ID... [--to AGENT [--new-agent]]",
	  "send dead letters back to their inbox (or another)", cmd_retry },
	{ "delete", "ID...",
	  "delete waiting, retrying or dead messages (into the trash, kept 30 days; on NATS "
	  "for good)", cmd_delete },
	{ "trash", "[ls [--json] | restore ID...]",
	  "list the deleted messages, or put them back where they were deleted from", cmd_trash },
	{ "kill", "ID... [--reason TEXT]",
	  "move waiting or retrying messages to the dead letters", cmd_kill },
	{ "requeue", "ID FILE|-",
	  "replace a dead letter with an edited message (validated) and queue it",
	  cmd_requeue },
	{ "validate", "FILE...", "check message files against the schemas", cmd_validate },
	{ "gc", "[--dry-run]", "apply the retention rules", cmd_gc },
	{ "status", "[--json]",
	  "depth and oldest age per inbox, processing, retries, dead letters",
	  cmd_status },
	{ "bench", "bus [--messages N] [--rate R] [--durable] [--threads T] [--repeat K] [--json] | "
		   "workflow [--runs N] [--weeks W] [--fx PATH] [--news PATH] [--json] | "
		   "console [--idle S] [--scale N] [--json] | "
		   "news [--labels PATH] [--news PATH] [--errors SPLIT] [--json] | "
		   "review [SUITE] [--cwe LIST] [--max-cases N] [--json] | "
		   "serve [--streams N] [--rounds R] [--replay PATH] [--json]",
	  "benchmarks (bench bus with --bus nats://...: NATS, memory and file storage, "
	  "beside raw libnats and the file bus)", cmd_bench },
	{ "mcp", "[--market SOURCE] [--news SOURCE] [--report-dir DIR] [--task-timeout S] "
		 "[--inject-fault AGENT:KIND]",
	  "serve madf to MCP clients over stdio: data tools, queue status, send_task, "
	  "run_weekly, read_report, review_codebase", cmd_mcp },
	{ "ask", "[--provider anthropic|openai] [--model M] [--max-tokens N] PROMPT",
	  "stream one answer from the configured LLM to stdout", cmd_ask },
	{ "review", REVIEW_USAGE,
	  "review a codebase with the code review crew (documentation, debt, improvement, "
	  "critical; the analyzers, or a model in LLM mode); exit 0 completed, 1 failed, 2 usage", cmd_review },
	{ "tools", "list [--json] | call SERVER TOOL [--args JSON] [--timeout S]",
	  "list the tools (built-in and MCP servers' from .mcp.json) or call one",
	  cmd_tools },
	{ "serve", "[--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--behind-tls-proxy] | token add USER | token list [--json] | token revoke USER",
	  "the multi-agent conversation API (POST /api/chat/multi answering Server-Sent "
	  "Events, GET .../{sessionId}/events resuming, GET /api/metrics; default "
	  "127.0.0.1:8765) for the bearer tokens `serve token add` makes", cmd_serve },
};
const unsigned cli_ncommands = ARRAY_SIZE(cli_commands);

static void usage(FILE *f)
{
	fprintf(f, "usage: madf [--data-dir DIR] [--log-dir DIR] [--bus URL] [--config FILE] "
		   "[--mcp-config FILE] [-v] COMMAND [ARGS]\n\n"
		   "madf is an operations console for multi-agent work: agents exchange\n"
		   "JSON messages over a file-system message bus.\n\ncommands:\n");
	for (unsigned i = 0; i < cli_ncommands; i++)
		fprintf(f, "  %-9s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fprintf(f, "\nglobal options:\n"
		   "  --data-dir DIR   data directory (default: MADF_DATA_DIR, MESSAGE_DIR's\n"
		   "                   parent from .env, or ./data)\n"
		   "  --log-dir DIR    log directory (default: LOG_DIR, or logs/ beside the\n"
		   "                   data directory)\n"
		   "  --config FILE    KEY=VALUE settings (as .env)\n"
		   "  --mcp-config FILE\n"
		   "                   MCP servers, .mcp.json format (default: ./.mcp.json)\n"
		   "  --bus URL        the message bus: file: (default, the data directory)\n"
		   "                   or nats://host:port[,host:port...] (default: MADF_BUS,\n"
		   "                   BUS_URL from .env, or file:)\n"
		   "  --no-fsync       do not fsync sends (faster, not crash-safe)\n"
		   "  -v               more output on stderr\n"
		   "  --version, --help\n\n"
		   "`madf COMMAND --help` shows one command's usage; man madf has it all.\n"
		   "exit status: 0 success, 1 failure, 2 usage error\n");
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (unsigned i = 0; i < cli_ncommands; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
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
		if (!strncmp(a, "--data-dir", n = 10) && (a[n] == '=' || !a[n]))
			slot = &data_dir;
		else if (!strncmp(a, "--log-dir", n = 9) && (a[n] == '=' || !a[n]))
			slot = &log_dir;
		else if (!strncmp(a, "--config", n = 8) && (a[n] == '=' || !a[n]))
			slot = &config;
		else if (!strncmp(a, "--mcp-config", n = 12) && (a[n] == '=' || !a[n]))
			slot = &mcp_config;
		else if (!strncmp(a, "--bus", n = 5) && (a[n] == '=' || !a[n]))
			slot = &bus_url;
		if (slot) {
			if (a[n] == '=') {
				*slot = a + n + 1;
			} else if (i + 1 < argc) {
				*slot = argv[++i];
			} else {
				free(rest);
				return cli_fail(EXIT_USAGE, NULL, "option %s needs a value", a);
			}
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			cli.verbose++;
		} else if (!strcmp(a, "--no-fsync")) {
			no_fsync = true;
		} else if (!strcmp(a, "--version")) {
			printf("madf %s\n", MADF_VERSION);
			free(rest);
			return EXIT_OK;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help = true;
		} else {
			rest[nrest++] = argv[i];
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
	const struct cli_cmd *cmd = find_cmd(rest[0]);
	if (!cmd) {
		cli_fail(EXIT_USAGE, NULL, "unknown command \"%s\" (see madf --help)", rest[0]);
		free(rest);
		return EXIT_USAGE;
	}
	if (help) {
		printf("usage: madf %s %s\n  %s\n", cmd->name, cmd->usage, cmd->summary);
		free(rest);
		return EXIT_OK;
	}
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
