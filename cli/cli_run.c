/* madf run NAME, madf agent NAME: a registered workflow (cli/workflows.h)
 * or one agent from the command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/llm_agent.h"
#include "agents/runtime.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/host.h"
#include "cli/workflows.h"
#include "core/banned.h"

static int run_agent(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "agent", &cmd_agent_entry, 0 };
	struct host_opts ro = { 0 };
	const char *who = NULL, *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (who)
				return cli_fail(EXIT_USAGE, "agent", "one NAME only");
			who = val;
			continue;
		}
		if (host_option(&ro, "agent", name, val) < 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	const struct agent_role *role = who ? agent_role_find(who) : NULL;
	if (!role) {
		struct sbuf names;
		sbuf_init(&names);
		for (size_t i = 0; i < agent_nroles; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "", agent_roles[i]->name);
		cli_fail(EXIT_USAGE, "agent", "%s%s%s: one of %s", who ? "unknown agent \"" : "NAME is required",
			 who ? who : "", who ? "\"" : "", names.data);
		sbuf_release(&names);
		return EXIT_USAGE;
	}
	struct agent_env env;
	if (host_setup(cli, &env, &ro) < 0) {
		host_teardown(&env);
		return EXIT_FAIL;
	}
	host_catch_signals(&env);
	struct agent *a;
	char *err = NULL;
	int rc = EXIT_OK;
	if (agent_open(role, &env, &a, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "agent", "%s", err);
		free(err);
	} else {
		char *mode = llm_agent_settings_describe(env.llm);
		fprintf(stderr, "madf: %s running (pid %d) in %s; SIGTERM or Ctrl-C stops it\n",
			a->name, (int)getpid(), mode);
		free(mode);
		agent_run(a);
		if (a->crashed)
			_exit(137); /* an injected crash: die like one */
		agent_free(&a);
	}
	host_teardown(&env);
	return rc;
}

/* madf run NAME with no registered NAME (a registered one is a
 * subcommand: workflow_run_subs[]). */
static int cmd_run(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	char *names = workflow_names();
	int r;
	if (argc < 2)
		r = cli_fail(EXIT_USAGE, "run", "what to run: one of %s", names);
	else
		r = cli_fail(EXIT_USAGE, "run", "unknown workflow \"%s\": one of %s", argv[1],
			     names);
	free(names);
	return r;
}

const struct cli_cmd cmd_run_entry = {
	.name = "run",
	.summary = "run a registered workflow: weekly (the Asia/G10 FX research workflow) or "
		   "review (the code review crew, as madf review)",
	.run = cmd_run,
	.subs = workflow_run_subs,
};

const struct cli_cmd cmd_agent_entry = {
	.name = "agent",
	.args = "NAME",
	.opts = host_options,
	.summary = "run one agent as its own process",
	.run = run_agent,
};
