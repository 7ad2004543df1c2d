/* The lease on the file bus (core/bus_lease.c): a claim held longer than
 * the lease (2 s here) is renewed by the bus's own thread while the
 * holder's thread is blocked, so that a rival consumer in another process
 * never gets it and the holder's ack succeeds; a delivery freed without an
 * answer (a crashed handler's) is renewed no more and reaches the rival
 * after the lease, as one more attempt; listing shows when a claim's
 * lease runs out, moved on by a renewal; renewing a claim that is gone
 * says so. The holder's "handler" is a sleep of 7 s: a wait, not an
 * assertion on time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/unit/bus_test.h"
#include "tests/unit/lease_rival.h"

#include "core/banned.h"

#define LEASE_S 2
#define HANDLER_S 7
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answers_stop_renewing, setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_lease_listed_and_renewed, setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_held_claim_is_renewed, setup_lease, teardown),
		cmocka_unit_test_setup_teardown(test_freed_claim_comes_back_after_the_lease,
						setup_lease, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
