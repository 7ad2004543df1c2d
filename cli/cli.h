/* The command line: one table of commands, each with its usage and help. */
#ifndef MADF_CLI_H
#define MADF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

/* One option of a command: its name ("--to"), its argument's name
 * ("AGENT"; NULL for a flag) and one line of help. A row with only .group
 * takes in a table shared by several commands (by reference); a row of
 * zeros ends a table. */
struct cli_opt {
	const char *name;
	const char *arg;
	const char *help;
	bool required;                /* shown without brackets in the usage */
	const struct cli_opt *group;
};

/* One command or subcommand, defined in the file that implements it (as
 * tmux's cmd_entry): parsing (cli_next), --help and the usage line all
 * read it. run gets the whole command line from the command's name
 * (argv[0] "bench", argv[1] "bus" for `madf bench bus`). A command with
 * subs runs the one its next word names; with none named, its own run,
 * or a usage error when it has none. */
struct cli_cmd {
	const char *name;                  /* "send"; a subcommand's own word */
	const char *args;                  /* positional arguments ("ID..."), or NULL */
	const struct cli_opt *opts;        /* NULL, or ended by a row of zeros */
	const char *summary;               /* one line */
	int (*run)(struct cli *cli, int argc, char **argv);
	const struct cli_cmd *const *subs; /* NULL-terminated, or NULL */
};

/* The top-level commands (cli/main.c), NULL-terminated. */
extern const struct cli_cmd *const cli_commands[];

/* The option named by the first n bytes of s in table t (groups
 * included), or NULL. */
const struct cli_opt *cli_opt_find(const struct cli_opt *t, const char *s, size_t n);
/* The usage line of e without "usage: ": "madf PATH ARGS OPTIONS", PATH
 * being the words before it ("bench bus"). New string. */
char *cli_usage(const struct cli_cmd *e, const char *path);
/* madf PATH --help: the usage lines (e's and its subcommands'), the
 * summary, each option with its help and the subcommands. */
void cli_help_print(FILE *f, const struct cli_cmd *e, const char *path);
/* An option table as --help shows it ("  --to AGENT   help"). */
void cli_opts_print(FILE *f, const struct cli_opt *t);
/* "madf: CMD: usage: madf PATH ..." on stderr; returns EXIT_USAGE. */
int cli_usage_fail(const struct cli_cmd *e, const char *cmd, const char *path);

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* "madf: CMD: message" on stderr, sanitised; returns code. */
int cli_fail(int code, const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cli_bus(struct cli *cli, struct bus **out);

/* Option scanning for one command: cli_next() returns the option name of
 * argv[*i] ("--to" or "--to=x"; the entry's own string) and its value
 * through *val when the option takes one, as entry's table says.
 * Positional arguments are returned as NULL name with *val set. */
struct cli_opts {
	int argc;
	char **argv;
	int i;                       /* the next argument */
	const char *cmd;             /* for messages: "bench" */
	const struct cli_cmd *entry; /* its options */
	int error;                   /* EXIT_USAGE after a bad option */
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

/* The commands' entries, each in the file that implements it. */
extern const struct cli_cmd cmd_console_entry;   /* tui/console_cli.c */
extern const struct cli_cmd cmd_run_entry;       /* cli/cli_run.c */
extern const struct cli_cmd cmd_agent_entry;
extern const struct cli_cmd cmd_runs_entry;      /* cli/cli_runs.c */
extern const struct cli_cmd cmd_tasks_entry;
extern const struct cli_cmd cmd_send_entry;      /* cli/cli_bus.c */
extern const struct cli_cmd cmd_recv_entry;
extern const struct cli_cmd cmd_ls_entry;
extern const struct cli_cmd cmd_show_entry;
extern const struct cli_cmd cmd_retry_entry;
extern const struct cli_cmd cmd_delete_entry;
extern const struct cli_cmd cmd_kill_entry;
extern const struct cli_cmd cmd_requeue_entry;
extern const struct cli_cmd cmd_validate_entry;
extern const struct cli_cmd cmd_gc_entry;
extern const struct cli_cmd cmd_status_entry;
extern const struct cli_cmd cmd_trash_entry;     /* cli/cli_trash.c */
extern const struct cli_cmd cmd_bench_entry;     /* cli/cli_bench.c */
extern const struct cli_cmd cmd_mcp_entry;       /* server/mcp_server.c */
extern const struct cli_cmd cmd_serve_entry;     /* server/cmd_serve.c */
extern const struct cli_cmd cmd_ask_entry;       /* cli/cli_ask.c */
extern const struct cli_cmd cmd_tools_entry;     /* cli/cli_tools.c */
extern const struct cli_cmd cmd_review_entry;    /* cli/cli_review.c */
/* Its options (madf run review takes them too). */
extern const struct cli_opt review_options[];
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
