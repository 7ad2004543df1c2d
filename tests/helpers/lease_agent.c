/* An agent with a slow handler, for tests/integration/test_lease.sh:
 *   lease_agent AGENT HANDLE_S
 * runs one agent named AGENT in the agent runtime (agents/runtime.c:
 * agent_open, agent_run on this thread) on the bus MADF_BUS names, data
 * under MADF_DATA_DIR (default "data"). For each message its handler
 * prints "begin ID", blocks the agent's thread (and its reactor) HANDLE_S
 * seconds, prints "end ID" and answers done: the runtime acks it. SIGTERM
 * or SIGINT stops it (noticed between messages). Exit status 0, 1 when
 * the agent cannot start. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/runtime.h"
#include "core/util.h"
#include "core/banned.h"

static unsigned handle_s;
static struct agent_env env;

static int slow_handle(struct agent *a, const struct msg *m, char **err)
{
	(void)a;
	(void)err;
	printf("begin %s\n", m->id);
	fflush(stdout);
	if (handle_s)
		sleep(handle_s);
	printf("end %s\n", m->id);
	fflush(stdout);
	return AGENT_DONE;
}

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&env.stop, 1);
}

int main(int argc, char **argv)
{
	if (argc != 3 || !util_valid_agent_name(argv[1])) {
		fprintf(stderr, "usage: lease_agent AGENT HANDLE_S\n");
		return 2;
	}
	handle_s = (unsigned)atoi(argv[2]);
	struct agent_role role = { .name = argv[1], .handle = slow_handle };
	const char *dd = getenv("MADF_DATA_DIR");
	char *logs = xasprintf("%s/logs", dd && *dd ? dd : "data");
	agent_env_init(&env, dd && *dd ? dd : "data", logs);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct agent *a = NULL;
	char *err = NULL;
	int rc = 0;
	if (agent_open(&role, &env, &a, &err) < 0) {
		fprintf(stderr, "lease_agent: %s\n", err ? err : "?");
		free(err);
		rc = 1;
	} else {
		printf("ready\n");
		fflush(stdout);
		agent_run(a);
	}
	agent_free(&a);
	agent_env_release(&env);
	free(logs);
	return rc;
}
