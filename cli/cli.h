/* The command line: one table of commands, each with its usage and help. */
#ifndef MADF_CLI_H
#define MADF_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "core/bus.h"

struct cli {
	char *data_dir;
	char *log_dir;
	int verbose;
	const char *mcp_config; /* --mcp-config FILE, NULL: ./.mcp.json */
	struct bus_config bcfg;
	struct bus *bus; /* opened on first use */
};

struct cli_cmd {
	const char *name;
	const char *usage;   /* arguments after the name */
	const char *summary; /* one line */
	int (*run)(struct cli *cli, int argc, char **argv);
};

extern const struct cli_cmd cli_commands[];
extern const unsigned cli_ncommands;

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* "madf: CMD: message" on stderr, sanitised; returns code. */
int cli_fail(int code, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cli_bus(struct cli *cli, struct bus **out);

/* Option scanning for one command: cli_opt() returns the option name of
 * argv[*i] ("--to" or "--to=x") and its value through *val when the option
 * takes one. Positional arguments are returned as NULL name with *val set. */
struct cli_opts {
	int argc;
	char **argv;
	int i;
	const char *cmd;
	const char *const *with_value; /* NULL-terminated */
	const char *const *flags;      /* NULL-terminated */
	int error;                     /* EXIT_USAGE after a bad option */
};
/* Returns 1 with *name and *val, 0 at the end, -1 on a usage error (printed). */
int cli_next(struct cli_opts *o, const char **name, const char **val);

/* A whole number or a number of seconds within [min, max]: 0, or -1 after
 * printing the usage error for option name of cmd. */
int cli_long(const char *cmd, const char *name, const char *val, long min, long max,
	     long *out);
int cli_double(const char *cmd, const char *name, const char *val, double min,
	       double max, double *out);

/* What `madf status --json` prints, from s at time now (new object). */
cJSON *cli_status_json(const struct bus_stats *s, int64_t now);

/* Commands. */
int cmd_mcp(struct cli *cli, int argc, char **argv);
int cmd_send(struct cli *cli, int argc, char **argv);
int cmd_recv(struct cli *cli, int argc, char **argv);
int cmd_ls(struct cli *cli, int argc, char **argv);
int cmd_show(struct cli *cli, int argc, char **argv);
int cmd_retry(struct cli *cli, int argc, char **argv);
int cmd_delete(struct cli *cli, int argc, char **argv);
int cmd_kill(struct cli *cli, int argc, char **argv);
int cmd_requeue(struct cli *cli, int argc, char **argv);
int cmd_validate(struct cli *cli, int argc, char **argv);
int cmd_gc(struct cli *cli, int argc, char **argv);
int cmd_trash(struct cli *cli, int argc, char **argv);
int cmd_status(struct cli *cli, int argc, char **argv);
int cmd_bench(struct cli *cli, int argc, char **argv);
int cmd_run(struct cli *cli, int argc, char **argv);
int cmd_agent(struct cli *cli, int argc, char **argv);
int cmd_runs(struct cli *cli, int argc, char **argv);  /* cli/cli_runs.c */
int cmd_tasks(struct cli *cli, int argc, char **argv);
int cmd_console(struct cli *cli, int argc, char **argv);
int cmd_ask(struct cli *cli, int argc, char **argv);
int cmd_tools(struct cli *cli, int argc, char **argv);
int cmd_review(struct cli *cli, int argc, char **argv); /* cli/cli_review.c */
/* Its options (NULL-terminated, as cli_next takes them). */
extern const char *const review_value_options[];
extern const char *const review_flag_options[];
/* Starts the code review crew (the four agents on threads, the master in
 * this thread), runs the master on request {"id", "params"} with faults
 * ("AGENT:KIND") injected and progress lines to progress (may be NULL),
 * stops the crew. Returns the status (0, 400, 404, 413, 500) with new
 * *agg and/or *error as review_master_run gives them (agents/review.h). */
struct review_progress;
int cli_review_run_crew(struct cli *cli, const cJSON *request, const char *const *faults,
			size_t nfaults, const struct review_progress *progress, cJSON **agg,
			cJSON **error);

#endif
