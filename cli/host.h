/* Hosting the agent runtime inside this process: shared by `madf run` and
 * the console (embedded mode). */
#ifndef MADF_HOST_H
#define MADF_HOST_H

#include <stddef.h>

#include <cJSON.h>

#include "agents/runtime.h"
#include "agents/workflow.h"
#include "cli/cli.h"

/* The options every runtime command shares. */
struct host_opts {
	const char *market, *news, *report_dir;
	const char *faults[16];
	size_t nfaults;
	long task_timeout;
	bool no_mcp;  /* start no MCP servers (madf mcp serves, it is no client) */
};

/* Their options, for the entries of the commands that take them (host.c). */
extern const struct cli_opt host_options[];
/* Parses one runtime option (--market, --news, --report-dir,
 * --inject-fault, --task-timeout) into o. Returns 1 when name was one of
 * them, 0 when not, -1 on a usage error (printed). */
int host_option(struct host_opts *o, const char *cmd, const char *name, const char *val);
/* The shared runtime: cache, tool registry with the data tools. Returns 0,
 * or -1 (printed); call host_teardown either way. */
int host_setup(struct cli *cli, struct agent_env *env, const struct host_opts *o);
void host_teardown(struct agent_env *env);
/* One thread per role into agents[] (agent_nroles entries). Returns 0, or
 * -1 (printed) with every started agent stopped. */
int host_start_agents(struct agent_env *env, struct agent **agents);
/* Asks every agent to stop, joins and frees them. */
void host_stop_agents(struct agent_env *env, struct agent **agents);
/* SIGINT and SIGTERM set env->stop (the agents end their turn and stop). */
void host_catch_signals(struct agent_env *env);

/* The options of `madf run weekly`, shared with the console (which takes
 * every one of them): the runtime's (host_opts) and the request's
 * (--as-of, --pairs, --fresh). Defined in cli/run_weekly.c. */
struct run_opts {
	struct host_opts host;
	struct wf_request req;  /* as_of (default now), pairs (owned), fresh;
				 * the sources are the env's */
};
/* Their options (host_options among them), for the entries of the
 * commands that take them. */
extern const struct cli_opt run_weekly_options[];
void run_opts_init(struct run_opts *o);
/* Parses one of them into o: 1 when name was one, 0 when not, -1 on a
 * usage error (printed as "madf: CMD: ..."). */
int run_option(struct run_opts *o, const char *cmd, const char *name, const char *val);
/* The default pairs when --pairs was not given. */
void run_opts_finish(struct run_opts *o);
void run_opts_release(struct run_opts *o);

/* --as-of: "1987-03-27" (noon UTC that day) or a full ISO 8601 time.
 * Returns 0, or -1. */
int host_parse_as_of(const char *s, int64_t *ns);

/* What host_run_weekly did. */
enum host_run_result {
	HOST_RUN_DONE,     /* the run finished now */
	HOST_RUN_WAS_DONE, /* it had finished before; nothing started */
	HOST_RUN_STOPPED,  /* env->stop was set before it finished */
	HOST_RUN_FAILED,   /* *err says why */
};
/* Runs (or resumes) the weekly workflow for req with one thread per agent
 * in env (set up by host_setup; cli/run_weekly.c): names the run (run_id, at least 96
 * bytes), sends the operator's trigger over b, then polls the run until it
 * is done, env->stop is set or its time limit passes, calling
 * progress(ctx, run) after each poll that found it (progress may be NULL).
 * A run done already (and not req->fresh) starts nothing. *run_out: the
 * run's last state or NULL (caller deletes). Returns a host_run_result. */
int host_run_weekly(struct agent_env *env, struct bus *b, struct wf_request *req,
		    char *run_id, size_t size,
		    void (*progress)(void *ctx, const cJSON *run), void *ctx,
		    cJSON **run_out, char **err);
/* The same with no agent here (cli/host_attach.c): the trigger names an
 * inbox of this run (wf_notify_inbox) where the product_manager, wherever
 * it runs, sends the run's progress and its final report; progress gets a
 * run with "status", "progress_line", "items_done" and "items_total" for
 * each progress message, and the report is written under env's report
 * directory. *run_out: "status", "report" {"md": the local path} and
 * "tasks" (their statuses). Fails when nothing is heard for the run's time
 * limit. */
int host_attach_weekly(struct agent_env *env, struct bus *b, struct wf_request *req,
		       char *run_id, size_t size,
		       void (*progress)(void *ctx, const cJSON *run), void *ctx,
		       cJSON **run_out, char **err);

#endif
