/* The lease on the file bus (core/bus_lease.c): a claim held longer than
 * the lease (2 s here) is renewed by the bus's own thread while the
 * holder's thread is blocked, so that a rival consumer in another process
 * never gets it and the holder's ack succeeds; a delivery freed without an
 * answer (a crashed handler's) is renewed no more and reaches the rival
 * after the lease, as one more attempt; listing shows when a claim's
 * lease runs out, moved on by a renewal; renewing a claim that is gone
 * says so. The holder's "handler" is a sleep of 7 s: a wait, not an
 * assertion on time. A claim held past the lease's maximum (3 s here) is
 * renewed no more: the rival, or this very process, gets it once its lease
 * ran out, as one more attempt (the dead letters after the last), the
 * bus's on_lease_max says who held what how long, and the late answers of
 * its handler are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "tests/unit/bus_test.h"
#include "tests/unit/lease_rival.h"

#include "core/banned.h"

#define LEASE_S 2
#define HANDLER_S 7
#define CAP_S 3
/* an upper bound for waits that poll, so that a broken build fails
 * rather than hangs: never an assertion on how long something took */
#define WAIT_MAX_S 60
/* file times come from the kernel's coarse clock, a tick behind */
#define COARSE_NS 100000000LL

static int setup_lease(void **state)
{
	setup(state);
	struct fx *f = *state;
	/* reopened with a short lease, fast polling */
	bus_free(&f->bus);
	f->cfg.lease_s = LEASE_S;
	f->cfg.poll_interval_s = 0.05;
	char *err = NULL;
	assert_int_equal(bus_open(&f->cfg, &f->bus, &err), 0);
	return 0;
}

/* What on_lease_max was told (on the bus's lease thread). */
struct capped {
	pthread_mutex_t mu;
	int calls;
	char agent[MSG_AGENT_MAX + 1], id[MSG_ID_MAX + 1];
	int64_t held_ms, max_s;
};

static void note_capped(void *ctx, const char *agent, const char *message_id, int64_t held_ms,
			int64_t max_s)
{
	struct capped *k = ctx;
	pthread_mutex_lock(&k->mu);
	k->calls++;
	util_strlcpy(k->agent, agent, sizeof(k->agent));
	util_strlcpy(k->id, message_id, sizeof(k->id));
	k->held_ms = held_ms;
	k->max_s = max_s;
	pthread_mutex_unlock(&k->mu);
}

static struct capped capped = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* The lease fixture, with a lease maximum of CAP_S and on_lease_max
 * noted in `capped`. */
static int setup_cap(void **state)
{
	setup_lease(state);
	struct fx *f = *state;
	bus_free(&f->bus);
	f->cfg.lease_max_s = CAP_S;
	char *err = NULL;
	assert_int_equal(bus_open(&f->cfg, &f->bus, &err), 0);
	f->bus->on_lease_max = note_capped;
	f->bus->on_lease_max_ctx = &capped;
	pthread_mutex_lock(&capped.mu);
	capped.calls = 0;
	capped.agent[0] = capped.id[0] = '\0';
	capped.held_ms = capped.max_s = 0;
	pthread_mutex_unlock(&capped.mu);
	return 0;
}

static int capped_calls(void)
{
	pthread_mutex_lock(&capped.mu);
	int n = capped.calls;
	pthread_mutex_unlock(&capped.mu);
	return n;
}

/* Waits (polling) until b has capped n claims. */
static void wait_capped(struct bus *b, uint64_t n)
{
	int64_t end = util_mono_ns() + WAIT_MAX_S * 1000000000LL;
	while (bus_lease_capped(b) < n) {
		if (util_mono_ns() > end)
			fail_msg("no claim was capped in %d s", WAIT_MAX_S);
		usleep(20 * 1000);
	}
}

static struct bus_entry *processing(struct fx *f, size_t *n)
{
	struct bus_entry *v = NULL;
	char *err = NULL;
	if (bus_list(f->bus, BUS_Q_PROCESSING, "worker", false, &v, n, &err) < 0)
		fail_msg("list: %s", err);
	return v;
}

/* Held for 7 s (3.5 leases): renewed meanwhile; the rival, sweeping and
 * claiming all along, gets nothing; the holder's ack succeeds and the
 * message is processed once. Before the renewal, the rival took the claim
 * back after 2 s and the ack failed ("lost the claim"). */
static void test_held_claim_is_renewed(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "worker", 1, PRIO_NORMAL);
	struct bus_consumer *c = NULL;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	struct rival r;
	rival_start(&r, &f->cfg, "worker", HANDLER_S + 1, false);
	struct bus_delivery *d = NULL;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 1);
	rival_go(&r);
	sleep(HANDLER_S); /* the handler, its thread blocked */
	uint64_t renewed = 0, failed = 0;
	assert_int_equal(bus_lease_held(f->bus, &renewed, &failed), 1);
	assert_true(renewed >= 1);
	assert_int_equal(failed, 0);
	if (bus_ack(c, &d, &err) < 0)
		fail_msg("the ack failed: %s", err);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 0);
	char *got = rival_finish(&r);
	assert_string_equal(got, ""); /* the rival claimed nothing */
	free(got);
	struct bus_entry *v = NULL;
	size_t n = 0;
	assert_int_equal(bus_list(f->bus, BUS_Q_PROCESSED, NULL, false, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].message_id, id);
	assert_int_equal(v[0].attempts, 0);
	bus_entries_free(v, n);
	bus_consumer_free(&c);
	free(id);
}

/* A delivery freed without an answer (as a handler that crashed leaves
 * it): renewed no more, so the rival gets it once the lease runs out, as
 * a second attempt. */
static void test_freed_claim_comes_back_after_the_lease(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "worker", 2, PRIO_NORMAL);
	struct bus_consumer *c = NULL;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	struct rival r;
	rival_start(&r, &f->cfg, "worker", 60, true);
	struct bus_delivery *d = NULL;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	bus_delivery_free(&d);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 0);
	rival_go(&r);
	char *got = rival_finish(&r);
	char *want = xasprintf("%s 1\n", id);
	assert_string_equal(got, want);
	free(want);
	free(got);
	size_t n = 0;
	struct bus_entry *v = processing(f, &n);
	assert_int_equal(n, 0);
	bus_entries_free(v, n);
	bus_consumer_free(&c);
	free(id);
}

/* The listed lease: the claim's mtime plus the lease, from the claim
 * (however long the message waited before), moved on by a renewal; a
 * claim given back meanwhile cannot be renewed, and the error says why. */
static void test_lease_listed_and_renewed(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "worker", 3, PRIO_NORMAL);
	struct bus_consumer *c = NULL;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	/* it waited long in the inbox (its file's mtime is old) */
	struct bus_entry *w = NULL;
	size_t nw = 0;
	assert_int_equal(bus_list(f->bus, BUS_Q_INBOX, "worker", false, &w, &nw, &err), 0);
	assert_int_equal(nw, 1);
	struct timespec old[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
	assert_int_equal(utimensat(AT_FDCWD, w[0].path, old, 0), 0);
	bus_entries_free(w, nw);
	struct bus_delivery *d = NULL;
	int64_t t0 = util_now_ns();
	assert_int_equal(bus_claim(c, &d, &err), 1);
	size_t n = 0;
	struct bus_entry *v = processing(f, &n);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].message_id, id);
	int64_t first = v[0].lease_ns;
	/* its lease runs from the claim, not from when it was sent (before,
	 * it had run out already: another consumer's sweep took it back) */
	assert_true(first >= t0 - COARSE_NS + LEASE_S * 1000000000LL);
	assert_true(first <= util_now_ns() + LEASE_S * 1000000000LL);
	/* an old mtime, as if the claim were made long ago */
	char *path = xstrdup(v[0].path);
	bus_entries_free(v, n);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	v = processing(f, &n);
	assert_int_equal(v[0].lease_ns, (1000 + LEASE_S) * 1000000000LL);
	bus_entries_free(v, n);
	assert_int_equal(bus_lease_renew(c, d, &err), 0);
	v = processing(f, &n);
	assert_true(v[0].lease_ns >= t0 - COARSE_NS + LEASE_S * 1000000000LL);
	bus_entries_free(v, n);
	/* given back by someone else (moved away): renewing fails, saying so */
	char *aside = xasprintf("%s.aside", path);
	assert_int_equal(rename(path, aside), 0);
	assert_int_equal(bus_lease_renew(c, d, &err), -1);
	assert_non_null(strstr(err, id));
	assert_non_null(strstr(err, "the claim is gone"));
	free(err);
	assert_int_equal(rename(aside, path), 0);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	free(aside);
	free(path);
	bus_consumer_free(&c);
	free(id);
}

/* The renewals stop with the answer: after an ack, a nack and a
 * giveback nothing is held; and a consumer freed with a claim still held
 * leaves none behind either. */
static void test_answers_stop_renewing(void **state)
{
	struct fx *f = *state;
	for (int i = 0; i < 4; i++)
		free(send_hb(f->bus, "worker", 10 + i, PRIO_NORMAL));
	struct bus_consumer *c = NULL;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	struct bus_delivery *d[4] = { 0 };
	for (int i = 0; i < 4; i++)
		assert_int_equal(bus_claim(c, &d[i], &err), 1);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 4);
	assert_int_equal(bus_ack(c, &d[0], &err), 0);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 3);
	assert_int_equal(bus_nack(c, &d[1], "failed in the test", false, &err), 0);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 2);
	assert_int_equal(bus_giveback(c, &d[2], &err), 0);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 1);
	bus_consumer_free(&c);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 0);
	assert_null(d[3]->lease);
	bus_delivery_free(&d[3]);
}

/* A handler that hangs past the lease's maximum (its thread sleeps until
 * the keeper gives up on it): renewed no more, so the rival in another
 * process gets the message once its lease ran out, as a second attempt,
 * and acks it; the keeper's warning names the agent, the message and how
 * long it was held; the hung handler's renewal and ack, when it wakes,
 * are refused ("lost the claim") and change nothing: the message is
 * processed once, by the rival. Before the maximum, the keeper renewed the
 * claim for ever and the rival never got it. */
static void test_hung_handler_loses_its_message(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "worker", 20, PRIO_NORMAL);
	struct bus_consumer *c = NULL;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	struct rival r;
	rival_start(&r, &f->cfg, "worker", WAIT_MAX_S, true);
	struct bus_delivery *d = NULL;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	rival_go(&r);
	/* the handler, hung: its thread waits for the keeper to give up */
	wait_capped(f->bus, 1);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 0); /* renewed no more */
	char *got = rival_finish(&r);
	char *want = xasprintf("%s 1\n", id);
	assert_string_equal(got, want); /* the rival's, as a second attempt */
	free(want);
	free(got);
	pthread_mutex_lock(&capped.mu);
	assert_int_equal(capped.calls, 1);
	assert_string_equal(capped.agent, "worker");
	assert_string_equal(capped.id, id);
	assert_true(capped.held_ms >= CAP_S * 1000);
	assert_int_equal(capped.max_s, CAP_S);
	pthread_mutex_unlock(&capped.mu);
	/* the handler wakes: its renewal and its ack are refused */
	assert_int_equal(bus_lease_renew(c, d, &err), -1);
	assert_non_null(strstr(err, "lost the claim"));
	free(err);
	err = NULL;
	assert_int_equal(bus_ack(c, &d, &err), -1);
	assert_null(d);
	assert_non_null(strstr(err, "lost the claim"));
	assert_non_null(strstr(err, id));
	assert_non_null(strstr(err, "MADF_LEASE_MAX_S"));
	free(err);
	err = NULL;
	struct bus_entry *v = NULL;
	size_t n = 0;
	assert_int_equal(bus_list(f->bus, BUS_Q_PROCESSED, NULL, false, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].message_id, id);
	assert_int_equal(v[0].attempts, 1);
	bus_entries_free(v, n);
	v = processing(f, &n);
	assert_int_equal(n, 0);
	bus_entries_free(v, n);
	assert_int_equal(bus_lease_capped(f->bus), 1);
	bus_consumer_free(&c);
	free(id);
}

/* With nobody else on the inbox (a process running each agent once): the
 * message a hung handler lost comes back to this very process once its
 * lease ran out (its own expired claims are recovered too), one attempt
 * more each time; a message that hangs every handler ends in the dead
 * letters (max_attempts, its error saying the lease ran out) and each late
 * nack or giveback is refused as the ack is. */
static void test_hung_every_time_ends_dead(void **state)
{
	struct fx *f = *state;
	bus_free(&f->bus);
	f->cfg.max_attempts = 2;
	char *err = NULL;
	assert_int_equal(bus_open(&f->cfg, &f->bus, &err), 0);
	f->bus->on_lease_max = note_capped;
	f->bus->on_lease_max_ctx = &capped;
	char *id = send_hb(f->bus, "worker", 21, PRIO_NORMAL);
	struct bus_consumer *c = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	for (int attempt = 0; attempt < 2; attempt++) {
		struct bus_delivery *d = NULL;
		int64_t end = util_mono_ns() + WAIT_MAX_S * 1000000000LL;
		int k;
		while ((k = bus_claim(c, &d, &err)) == 0 && util_mono_ns() < end) {
			bus_sweep(f->bus, "worker", NULL);
			usleep(50 * 1000);
		}
		assert_int_equal(k, 1);
		assert_string_equal(d->msg->id, id);
		assert_int_equal(d->attempts, attempt);
		wait_capped(f->bus, (uint64_t)attempt + 1);
		assert_int_equal(capped_calls(), attempt + 1);
		if (attempt == 0)
			assert_int_equal(bus_nack(c, &d, "late", false, &err), -1);
		else
			assert_int_equal(bus_giveback(c, &d, &err), -1);
		assert_null(d);
		assert_non_null(strstr(err, "lost the claim"));
		free(err);
		err = NULL;
	}
	/* the second attempt's lease runs out too: to the dead letters */
	struct bus_entry *v = NULL;
	size_t n = 0;
	int64_t end = util_mono_ns() + WAIT_MAX_S * 1000000000LL;
	for (;;) {
		bus_sweep(f->bus, "worker", NULL);
		assert_int_equal(bus_list(f->bus, BUS_Q_DEAD, NULL, true, &v, &n, &err), 0);
		if (n || util_mono_ns() > end)
			break;
		bus_entries_free(v, n);
		usleep(50 * 1000);
	}
	assert_int_equal(n, 1);
	assert_string_equal(v[0].message_id, id);
	assert_string_equal(v[0].reason, "max_attempts");
	assert_non_null(strstr(v[0].error, "lease"));
	bus_entries_free(v, n);
	v = processing(f, &n);
	assert_int_equal(n, 0);
	bus_entries_free(v, n);
	bus_consumer_free(&c);
	free(id);
}

/* A capped claim still held (its handler hung on) does not stop the
 * keeper: a claim made after it is renewed as ever. Before, the keeper,
 * having only capped claims to look at, waited to be woken, and nothing
 * woke it: the new claim's lease ran out while its handler worked. */
static void test_capped_claim_does_not_stop_the_others(void **state)
{
	struct fx *f = *state;
	char *id1 = send_hb(f->bus, "worker", 30, PRIO_HIGH);
	char *id2 = send_hb(f->bus, "worker", 31, PRIO_NORMAL);
	struct bus_consumer *c = NULL;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "worker", &c, &err), 0);
	struct bus_delivery *d1 = NULL, *d2 = NULL;
	assert_int_equal(bus_claim(c, &d1, &err), 1);
	assert_string_equal(d1->msg->id, id1);
	wait_capped(f->bus, 1);
	uint64_t before = 0, after = 0;
	assert_int_equal(bus_lease_held(f->bus, &before, NULL), 0);
	assert_int_equal(bus_claim(c, &d2, &err), 1);
	assert_string_equal(d2->msg->id, id2);
	assert_int_equal(bus_lease_held(f->bus, NULL, NULL), 1);
	/* renewed a third of the lease after its claim: wait for it */
	int64_t end = util_mono_ns() + WAIT_MAX_S * 1000000000LL;
	while (bus_lease_held(f->bus, &after, NULL), after == before && util_mono_ns() < end)
		usleep(20 * 1000);
	assert_true(after > before);
	bus_delivery_free(&d2);
	bus_delivery_free(&d1);
	bus_consumer_free(&c);
	free(id1);
	free(id2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answers_stop_renewing, setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_lease_listed_and_renewed, setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_held_claim_is_renewed, setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_freed_claim_comes_back_after_the_lease,
						setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_hung_handler_loses_its_message, setup_cap,
						teardown),
		cmocka_unit_test_setup_teardown(test_hung_every_time_ends_dead, setup_cap, teardown),
		cmocka_unit_test_setup_teardown(test_capped_claim_does_not_stop_the_others, setup_cap,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
