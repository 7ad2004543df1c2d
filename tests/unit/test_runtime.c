/* The agent runtime's loop (agent_run on core/loop.c), with a role of the
 * test's own on a file bus: messages sent while it waits are handled and
 * acked; a handler's failure comes back as a retry and is handled again;
 * a tick asking for 0 ms runs again; env->stop, set by a handler or a tick,
 * ends agent_run with the state saved. With a 2-second lease, a handler
 * that blocks the agent's thread for 7 s is handled once and acked (its
 * claim renewed meanwhile: a rival consumer in another process gets
 * nothing), and a handler that crashes leaves a claim the rival gets after
 * the lease. Each test waits for agent_run to return (pthread_join), never
 * for a time. A claim held past the lease's maximum (1 s) is logged
 * (lease_max) by the bus's lease thread; agent_free stops that thread
 * before anything of the agent goes: a cap falling while the agent is
 * taken apart (its role's fini blocking 1.5 s, an injected delay) logs
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/runtime.h"
#include "core/json_out.h"
#include "core/util.h"

#include "tests/unit/lease_rival.h"

#include "core/banned.h"

#define PROBE "probe_agent"

/* What the probe role saw; one probe at a time (the role has no ctx). */
static struct probe {
	pthread_mutex_t mu;
	int handled;          /* messages handled (every attempt) */
	int done;             /* answered AGENT_DONE */
	int stop_after;       /* sets env->stop after this many done (0: never) */
	int fail_first;       /* answers AGENT_RETRY to the first N attempts */
	int ticks;
	int tick_stop_at;     /* sets env->stop on this tick (0: never) */
	int64_t tick_ms;      /* what tick returns */
	int seq_sum;          /* sum of the heartbeats' sequence numbers done */
	unsigned sleep_s;     /* each handling blocks the thread this long */
	bool crash;           /* the handling crashes (as FAULT_CRASH) */
	unsigned fini_ms;     /* the role's fini blocks this long */
	int finis;            /* fini calls */
} probe;

static int probe_handle(struct agent *a, const struct msg *m, char **err)
{
	pthread_mutex_lock(&probe.mu);
	int n = ++probe.handled;
	unsigned nap = probe.sleep_s;
	pthread_mutex_unlock(&probe.mu);
	if (nap)
		sleep(nap); /* a long handler: the reactor's thread blocked */
	pthread_mutex_lock(&probe.mu);
	int r = AGENT_DONE;
	if (probe.crash) {
		a->crashed = true;
	} else if (n <= probe.fail_first) {
		r = AGENT_RETRY;
		err_set(err, "probe: attempt %d fails", n);
	} else {
		probe.done++;
		probe.seq_sum += (int)jnum(m->content, "sequence", 0);
		if (probe.stop_after && probe.done == probe.stop_after)
			atomic_store(&a->env->stop, 1);
	}
	pthread_mutex_unlock(&probe.mu);
	return r;
}

static int64_t probe_tick(struct agent *a)
{
	pthread_mutex_lock(&probe.mu);
	int n = ++probe.ticks;
	if (probe.tick_stop_at && n == probe.tick_stop_at)
		atomic_store(&a->env->stop, 1);
	int64_t ms = probe.tick_ms;
	pthread_mutex_unlock(&probe.mu);
	return ms;
}

/* The role's teardown (agent_free calls it when a->impl is set): a slow
 * one, so that a lease cap can fall while the agent is being freed. */
static void probe_fini(struct agent *a)
{
	(void)a;
	pthread_mutex_lock(&probe.mu);
	probe.finis++;
	unsigned ms = probe.fini_ms;
	pthread_mutex_unlock(&probe.mu);
	if (ms)
		usleep(ms * 1000);
}

static const struct agent_role probe_role = {
	.name = PROBE, .handle = probe_handle, .tick = probe_tick, .fini = probe_fini,
};

struct fx {
	char dir[64];
	char *logs;
	struct agent_env env;
	struct agent *a;
};

static int setup_lease(void **state, int64_t lease_s, int64_t lease_max_s)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/madf-unit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->logs = xasprintf("%s/logs", f->dir);
	agent_env_init(&f->env, f->dir, f->logs);
	f->env.bcfg.durable = false;
	f->env.bcfg.retry_base_ms = 1;
	f->env.bcfg.retry_max_ms = 4;
	if (lease_s) {
		f->env.bcfg.lease_s = lease_s;
		f->env.bcfg.poll_interval_s = 0.05;
	}
	if (lease_max_s)
		f->env.bcfg.lease_max_s = lease_max_s;
	memset(&probe, 0, sizeof(probe));
	pthread_mutex_init(&probe.mu, NULL);
	probe.tick_ms = -1;
	char *err = NULL;
	if (agent_open(&probe_role, &f->env, &f->a, &err) < 0)
		fail_msg("agent_open: %s", err);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_lease(state, 0, 0);
}

#define LEASE_S 2
#define HANDLER_S 7

static int setup_short_lease(void **state)
{
	return setup_lease(state, LEASE_S, 0);
}

#define CAP_S 1

static int setup_cap(void **state)
{
	return setup_lease(state, LEASE_S, CAP_S);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	agent_free(&f->a);
	agent_env_release(&f->env);
	util_rm_tree(f->dir);
	free(f->logs);
	pthread_mutex_destroy(&probe.mu);
	free(f);
	return 0;
}

static void send_to_probe(struct fx *f, int seq)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "status", "idle");
	cJSON_AddNumberToObject(c, "uptime_seconds", 1);
	cJSON_AddNumberToObject(c, "active_tasks", 0);
	cJSON_AddNumberToObject(c, "sequence", seq);
	struct msg *m = msg_new("operator", PROBE, MSG_HEARTBEAT, c);
	char *err = NULL;
	if (bus_send(f->a->bus, m, &err) < 0)
		fail_msg("send: %s", err);
	msg_free(&m);
}

static size_t count(struct fx *f, enum bus_queue q)
{
	struct bus_entry *e = NULL;
	size_t n = 0;
	char *err = NULL;
	if (bus_list(f->a->bus, q, PROBE, false, &e, &n, &err) < 0)
		fail_msg("list: %s", err);
	bus_entries_free(e, n);
	return n;
}

/* Three messages sent after the agent started (it is waiting in its loop):
 * each is handled once and acked; the third stops the agent. */
static void test_messages_wake_the_loop(void **state)
{
	struct fx *f = *state;
	probe.stop_after = 3;
	char *err = NULL;
	assert_int_equal(agent_start_thread(f->a, &err), 0);
	/* Its first tick: the loop runs, with the inbox empty. */
	for (;;) {
		pthread_mutex_lock(&probe.mu);
		int t = probe.ticks;
		pthread_mutex_unlock(&probe.mu);
		if (t >= 1)
			break;
		usleep(1000);
	}
	for (int i = 1; i <= 3; i++)
		send_to_probe(f, i);
	agent_join(f->a);
	assert_int_equal(probe.handled, 3);
	assert_int_equal(probe.done, 3);
	assert_int_equal(probe.seq_sum, 1 + 2 + 3);
	assert_int_equal(count(f, BUS_Q_INBOX), 0);
	assert_int_equal(count(f, BUS_Q_PROCESSING), 0);
	assert_int_equal(count(f, BUS_Q_PROCESSED), 3);
	/* Stopped cleanly: the state file was saved on the way out. */
	char *path = xasprintf("%s/state/%s-state.json", f->dir, PROBE);
	assert_int_equal(access(path, F_OK), 0);
	free(path);
}

/* The first two attempts fail: the message comes back from the retries
 * (no new file event announces that a backoff ended) and is done on the
 * third. */
static void test_failed_message_comes_back(void **state)
{
	struct fx *f = *state;
	probe.fail_first = 2;
	probe.stop_after = 1;
	send_to_probe(f, 7);
	char *err = NULL;
	assert_int_equal(agent_start_thread(f->a, &err), 0);
	agent_join(f->a);
	assert_int_equal(probe.handled, 3);
	assert_int_equal(probe.done, 1);
	assert_int_equal(probe.seq_sum, 7);
	assert_int_equal(count(f, BUS_Q_RETRY), 0);
	assert_int_equal(count(f, BUS_Q_DEAD), 0);
	assert_int_equal(count(f, BUS_Q_PROCESSED), 1);
}

/* A tick asking for 0 ms is called again, turn after turn, with no
 * message; the tick that sets env->stop is the last. */
static void test_tick_runs_again_and_stops(void **state)
{
	struct fx *f = *state;
	probe.tick_ms = 0;
	probe.tick_stop_at = 20;
	char *err = NULL;
	assert_int_equal(agent_start_thread(f->a, &err), 0);
	agent_join(f->a);
	assert_int_equal(probe.ticks, 20);
	assert_int_equal(probe.handled, 0);
}

/* env->stop set before agent_run: it returns at once, handling nothing. */
static void test_stop_before_start(void **state)
{
	struct fx *f = *state;
	send_to_probe(f, 1);
	atomic_store(&f->env.stop, 1);
	assert_int_equal(agent_run(f->a), 0);
	assert_int_equal(probe.handled, 0);
	assert_int_equal(count(f, BUS_Q_INBOX), 1);
}

static void wait_handled(int n)
{
	for (;;) {
		pthread_mutex_lock(&probe.mu);
		int h = probe.handled;
		pthread_mutex_unlock(&probe.mu);
		if (h >= n)
			return;
		usleep(1000);
	}
}

/* A handler that blocks the agent's thread for 7 s (3.5 leases): its
 * claim is renewed meanwhile, so the rival (another process sweeping and
 * claiming the same inbox all along) gets nothing; the message is handled
 * once and acked. Before the renewal, the rival took it after 2 s and
 * handled it a second time. */
static void test_long_handler_handled_once(void **state)
{
	struct fx *f = *state;
	probe.sleep_s = HANDLER_S;
	probe.stop_after = 1;
	send_to_probe(f, 5);
	struct rival r;
	rival_start(&r, &f->env.bcfg, PROBE, HANDLER_S + 2, false);
	char *err = NULL;
	assert_int_equal(agent_start_thread(f->a, &err), 0);
	wait_handled(1); /* claimed: its handler runs */
	rival_go(&r);
	agent_join(f->a);
	char *got = rival_finish(&r);
	assert_string_equal(got, ""); /* the rival claimed nothing */
	free(got);
	assert_int_equal(probe.handled, 1);
	assert_int_equal(probe.done, 1);
	assert_int_equal(probe.seq_sum, 5);
	assert_int_equal(count(f, BUS_Q_PROCESSING), 0);
	assert_int_equal(count(f, BUS_Q_PROCESSED), 1);
	assert_int_equal(bus_lease_held(f->a->bus, NULL, NULL), 0);
}

/* A handler that crashes (as an injected FAULT_CRASH) leaves its claim
 * unanswered: renewed no more, it reaches the rival after the lease, as a
 * second attempt. */
static void test_crashed_handler_claim_comes_back(void **state)
{
	struct fx *f = *state;
	probe.crash = true;
	send_to_probe(f, 6);
	struct rival r;
	rival_start(&r, &f->env.bcfg, PROBE, 60, true);
	char *err = NULL;
	assert_int_equal(agent_start_thread(f->a, &err), 0);
	agent_join(f->a);
	assert_true(f->a->crashed);
	assert_int_equal(count(f, BUS_Q_PROCESSING), 1);
	assert_int_equal(bus_lease_held(f->a->bus, NULL, NULL), 0);
	rival_go(&r);
	char *got = rival_finish(&r);
	assert_non_null(strstr(got, " 1\n")); /* its second attempt */
	free(got);
	assert_int_equal(probe.handled, 1);
	assert_int_equal(count(f, BUS_Q_PROCESSING), 0);
	assert_int_equal(count(f, BUS_Q_PROCESSED), 1);
}

/* The lease_max warnings in the agent's error logs (every day's file). */
static int lease_max_logged(struct fx *f)
{
	char *dir = xasprintf("%s/agents/%s/errors", f->logs, PROBE);
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name), *buf = NULL;
		size_t len;
		if (util_read_file(p, 1 << 20, &buf, &len, NULL) == 0)
			for (const char *q = buf; (q = strstr(q, "\"event\":\"lease_max\"")); q++)
				n++;
		free(buf);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
	return n;
}

/* A claim of the agent's held unanswered (the handler's, in effect). */
static struct bus_delivery *claim_one(struct fx *f)
{
	send_to_probe(f, 1);
	struct bus_delivery *d = NULL;
	char *err = NULL;
	if (bus_claim(f->a->cons, &d, &err) != 1)
		fail_msg("claim: %s", err ? err : "nothing");
	return d;
}

/* Held past the maximum, a claim is logged once (lease_max, by the bus's
 * lease thread); the agent freed afterwards logs nothing more. */
static void test_lease_max_logged(void **state)
{
	struct fx *f = *state;
	struct bus_delivery *d = claim_one(f);
	while (bus_lease_capped(f->a->bus) < 1)
		usleep(10 * 1000); /* waits for the cap (a test's time-out stops a hang) */
	agent_free(&f->a);
	bus_delivery_free(&d);
	assert_int_equal(lease_max_logged(f), 1);
}

/* agent_free stops the lease thread first: a claim whose cap (1 s after
 * the claim) falls while the agent is being freed (its role's fini blocks
 * 1.5 s) is never reported on the agent half gone. Before, the thread ran
 * until bus_free and logged lease_max during the fini, the log's sink
 * being reset meanwhile. */
static void test_free_stops_the_lease_thread_first(void **state)
{
	struct fx *f = *state;
	struct bus_delivery *d = claim_one(f);
	f->a->impl = &probe; /* so that agent_free calls the role's fini */
	probe.fini_ms = CAP_S * 1000 + 500;
	/* a machine that stalled a second since the claim: the cap came
	 * before the free, as it may; not this test's case */
	if (bus_lease_capped(f->a->bus) > 0) {
		agent_free(&f->a);
		bus_delivery_free(&d);
		skip();
	}
	agent_free(&f->a);
	bus_delivery_free(&d);
	assert_int_equal(probe.finis, 1);
	assert_int_equal(lease_max_logged(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_messages_wake_the_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_message_comes_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tick_runs_again_and_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_before_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_handler_handled_once, setup_short_lease,
						teardown),
		cmocka_unit_test_setup_teardown(test_crashed_handler_claim_comes_back,
						setup_short_lease, teardown),
		cmocka_unit_test_setup_teardown(test_lease_max_logged, setup_cap, teardown),
		cmocka_unit_test_setup_teardown(test_free_stops_the_lease_thread_first, setup_cap,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
