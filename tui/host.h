/* Hosting the agent runtime inside this process: shared by `madf run` and
 * the console (embedded mode). */
#ifndef MADF_HOST_H
#define MADF_HOST_H

#include <stddef.h>

#include "agents/runtime.h"
#include "tui/cli.h"

/* The options every runtime command shares. */
struct host_opts {
	const char *market, *news, *report_dir;
	const char *faults[16];
	size_t nfaults;
	long task_timeout;
};

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

#endif
