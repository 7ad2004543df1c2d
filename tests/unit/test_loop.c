/* The reactor (core/loop.c): pipes firing their callbacks, removal and
 * replacement during dispatch, many fds, timers' order, re-arming and
 * deletion, the before-sleep hook each turn, and stopping from a callback,
 * the hook or another thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/loop.h"
#include "core/util.h"

#include "core/banned.h"

static struct loop *new_loop(void)
{
	char *err = NULL;
	struct loop *l = loop_new(&err);
	assert_non_null(l);
	assert_null(err);
	return l;
}

static void make_pipe(int p[2])
{
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
}

static void put(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* A reader: what its callback saw. */
struct rd {
	struct loop *l;
	int calls;
	int last_mask;
	char got[64];
	size_t len;
	int del_fd;          /* removed by the callback (-1: none) */
	int stop;            /* the callback stops the loop */
	int *order;          /* appends its tag here */
	int *norder;
	int tag;
};

static void rd_init(struct rd *r, struct loop *l, int tag)
{
	memset(r, 0, sizeof(*r));
	r->l = l;
	r->del_fd = -1;
	r->tag = tag;
}

static void on_read(struct loop *l, int fd, int mask, void *ctx)
{
	struct rd *r = ctx;
	assert_ptr_equal(l, r->l);
	r->calls++;
	r->last_mask = mask;
	if (mask & LOOP_READ) {
		ssize_t n = read(fd, r->got + r->len, sizeof(r->got) - 1 - r->len);
		if (n > 0)
			r->len += (size_t)n;
		r->got[r->len] = '\0';
	}
	if (r->order)
		r->order[(*r->norder)++] = r->tag;
	if (r->del_fd >= 0)
		loop_del_fd(l, r->del_fd, LOOP_READ | LOOP_WRITE);
	if (r->stop)
		loop_stop(l);
}

static void test_pipe_fires_its_callback(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	int a[2], b[2];
	make_pipe(a);
	make_pipe(b);
	struct rd ra, rb;
	rd_init(&ra, l, 1);
	rd_init(&rb, l, 2);
	assert_int_equal(loop_add_fd(l, a[0], LOOP_READ, on_read, &ra, NULL), 0);
	assert_int_equal(loop_add_fd(l, b[0], LOOP_READ, on_read, &rb, NULL), 0);
	/* Nothing ready: a zero timeout calls nobody. */
	assert_int_equal(loop_run_once(l, 0, NULL), 0);
	put(b[1], "hello");
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(ra.calls, 0);
	assert_int_equal(rb.calls, 1);
	assert_int_equal(rb.last_mask, LOOP_READ);
	assert_string_equal(rb.got, "hello");
	put(a[1], "x");
	put(b[1], "y");
	assert_int_equal(loop_run_once(l, -1, NULL), 2);
	assert_string_equal(ra.got, "x");
	assert_string_equal(rb.got, "helloy");
	/* The writer gone: the reader hears of it (read returns 0). */
	close(a[1]);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(ra.calls, 2);
	assert_true(ra.last_mask & LOOP_READ);
	assert_true(ra.last_mask & LOOP_ERROR);
	assert_string_equal(ra.got, "x");
	loop_del_fd(l, a[0], LOOP_READ);
	assert_int_equal(loop_fd_mask(l, a[0]), 0);
	loop_free(&l);
	assert_null(l);
	close(a[0]);
	close(b[0]);
	close(b[1]);
}

struct rw {
	int calls, rmask, wmask, both;
};

static void on_rw(struct loop *l, int fd, int mask, void *ctx)
{
	(void)l;
	(void)fd;
	struct rw *x = ctx;
	x->calls++;
	if ((mask & LOOP_READ) && (mask & LOOP_WRITE))
		x->both++;
	else if (mask & LOOP_READ)
		x->rmask++;
	else if (mask & LOOP_WRITE)
		x->wmask++;
}

/* One callback for read and write is called once with both bits; two
 * callbacks each get their own; deleting one mask keeps the other. */
static void test_read_and_write_masks(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	put(sv[1], "z");
	struct rw one = { 0 };
	assert_int_equal(loop_add_fd(l, sv[0], LOOP_READ | LOOP_WRITE, on_rw, &one, NULL), 0);
	assert_int_equal(loop_fd_mask(l, sv[0]), LOOP_READ | LOOP_WRITE);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(one.calls, 1);
	assert_int_equal(one.both, 1);
	struct rw w = { 0 };
	assert_int_equal(loop_add_fd(l, sv[0], LOOP_WRITE, on_rw, &w, NULL), 0);
	assert_int_equal(loop_run_once(l, -1, NULL), 2);
	assert_int_equal(one.rmask, 1);
	assert_int_equal(w.wmask, 1);
	loop_del_fd(l, sv[0], LOOP_READ);
	assert_int_equal(loop_fd_mask(l, sv[0]), LOOP_WRITE);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(one.calls, 2);
	assert_int_equal(w.wmask, 2);
	loop_free(&l);
	close(sv[0]);
	close(sv[1]);
}

/* A callback removes another fd that is ready in the same turn: that one
 * is not called; then it is re-added and is called next turn. */
static void test_removal_during_dispatch(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	int a[2], b[2];
	make_pipe(a);
	make_pipe(b);
	struct rd ra, rb;
	rd_init(&ra, l, 1);
	rd_init(&rb, l, 2);
	/* The lower fd is dispatched first. */
	int lo = a[0] < b[0] ? a[0] : b[0], hi = a[0] < b[0] ? b[0] : a[0];
	struct rd *rlo = lo == a[0] ? &ra : &rb, *rhi = lo == a[0] ? &rb : &ra;
	rlo->del_fd = hi;
	assert_int_equal(loop_add_fd(l, lo, LOOP_READ, on_read, rlo, NULL), 0);
	assert_int_equal(loop_add_fd(l, hi, LOOP_READ, on_read, rhi, NULL), 0);
	put(a[1], "1");
	put(b[1], "2");
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(rlo->calls, 1);
	assert_int_equal(rhi->calls, 0);
	assert_int_equal(loop_fd_mask(l, hi), 0);
	rlo->del_fd = -1;
	assert_int_equal(loop_add_fd(l, hi, LOOP_READ, on_read, rhi, NULL), 0);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(rhi->calls, 1);
	/* A callback removing itself. */
	rhi->del_fd = hi;
	put(hi == a[0] ? a[1] : b[1], "3");
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(rhi->calls, 2);
	assert_int_equal(loop_fd_mask(l, hi), 0);
	loop_free(&l);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* The fd number removed by a callback is reused at once (closed, another
 * pipe dup2'd onto it, added with a new callback): the old readiness does
 * not reach the new callback; a fd added during the turn waits for the
 * next one. */
struct swap {
	struct rd *fresh;
	int victim;
	int fresh_src;
};

static void on_swap(struct loop *l, int fd, int mask, void *ctx)
{
	(void)mask;
	struct swap *s = ctx;
	char c;
	assert_int_equal(read(fd, &c, 1), 1);
	loop_del_fd(l, s->victim, LOOP_READ);
	assert_int_equal(dup2(s->fresh_src, s->victim), s->victim);
	assert_int_equal(loop_add_fd(l, s->victim, LOOP_READ, on_read, s->fresh, NULL), 0);
}

static void test_fd_reused_during_dispatch(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	int a[2], b[2], c[2];
	make_pipe(a);
	make_pipe(b);
	make_pipe(c);
	/* a[0] < b[0]: a's callback runs first and replaces b[0]. */
	if (a[0] > b[0]) {
		int t0 = a[0], t1 = a[1];
		a[0] = b[0], a[1] = b[1];
		b[0] = t0, b[1] = t1;
	}
	struct rd old, fresh;
	rd_init(&old, l, 1);
	rd_init(&fresh, l, 2);
	struct swap s = { &fresh, b[0], c[0] };
	assert_int_equal(loop_add_fd(l, a[0], LOOP_READ, on_swap, &s, NULL), 0);
	assert_int_equal(loop_add_fd(l, b[0], LOOP_READ, on_read, &old, NULL), 0);
	put(a[1], "a");
	put(b[1], "b");
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(old.calls, 0);
	assert_int_equal(fresh.calls, 0); /* c is empty: nothing to read yet */
	put(c[1], "c");
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(fresh.calls, 1);
	assert_string_equal(fresh.got, "c");
	loop_free(&l);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
		close(c[i]);
	}
}

/* Many fds, and a high fd number: the tables grow; each callback gets its
 * own ctx. */
static void test_many_fds(void **state)
{
	(void)state;
	enum { N = 200 };
	struct loop *l = new_loop();
	int (*p)[2] = xcalloc(N, sizeof(*p));
	struct rd *r = xcalloc(N, sizeof(*r));
	for (int i = 0; i < N; i++) {
		make_pipe(p[i]);
		rd_init(&r[i], l, i);
		assert_int_equal(loop_add_fd(l, p[i][0], LOOP_READ, on_read, &r[i], NULL), 0);
	}
	int hi = fcntl(p[0][0], F_DUPFD_CLOEXEC, 700);
	assert_true(hi >= 700);
	struct rd rh;
	rd_init(&rh, l, -1);
	assert_int_equal(loop_add_fd(l, hi, LOOP_READ, on_read, &rh, NULL), 0);
	for (int i = 0; i < N; i++) {
		char msg[16];
		snprintf(msg, sizeof(msg), "%d", i);
		put(p[i][1], msg);
	}
	/* p[0] is also behind hi: both were ready when polled, the lower fd
	 * reads the byte, hi's read finds nothing. */
	assert_int_equal(loop_run_once(l, -1, NULL), N + 1);
	assert_int_equal(rh.calls, 1);
	assert_string_equal(rh.got, "");
	for (int i = 0; i < N; i++) {
		char msg[16];
		snprintf(msg, sizeof(msg), "%d", i);
		assert_int_equal(r[i].calls, 1);
		assert_string_equal(r[i].got, msg);
	}
	loop_del_fd(l, hi, LOOP_READ);
	close(hi);
	for (int i = 0; i < N; i++) {
		loop_del_fd(l, p[i][0], LOOP_READ);
		close(p[i][0]);
		close(p[i][1]);
	}
	assert_int_equal(loop_run_once(l, 0, NULL), 0);
	loop_free(&l);
	free(p);
	free(r);
}

/* ---- timers ---------------------------------------------------------------------- */

struct tmr {
	int order[32];
	int n;
	int64_t ret[8];       /* what each call returns, in turn */
	int calls;
	int64_t del_id;       /* deleted by the callback (0: none) */
	int tag;
	int stop_at;          /* loop_stop on this call (0: never) */
	struct tmr *log;       /* where the order goes */
};

static int64_t on_timer(struct loop *l, int64_t id, void *ctx)
{
	(void)id;
	struct tmr *t = ctx;
	int k = t->calls++;
	t->log->order[t->log->n++] = t->tag;
	if (t->del_id)
		assert_int_equal(loop_del_timer(l, t->del_id), 0);
	if (t->stop_at && t->calls == t->stop_at)
		loop_stop(l);
	return t->ret[k < 8 ? k : 7];
}

static void test_timers_run_in_order(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	struct tmr log = { 0 };
	struct tmr t[4];
	static const int64_t delay[4] = { 30, 10, 20, 0 };
	for (int i = 0; i < 4; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].tag = (int)delay[i];
		t[i].log = &log;
		t[i].ret[0] = LOOP_NOMORE;
		assert_true(loop_add_timer(l, delay[i], on_timer, &t[i], NULL) > 0);
	}
	t[0].stop_at = 1; /* the last one stops the loop */
	assert_int_equal(loop_run(l, NULL), 0);
	assert_false(loop_stopped(l));
	assert_int_equal(log.n, 4);
	assert_int_equal(log.order[0], 0);
	assert_int_equal(log.order[1], 10);
	assert_int_equal(log.order[2], 20);
	assert_int_equal(log.order[3], 30);
	/* All returned LOOP_NOMORE: none left, so a turn calls nobody. */
	assert_int_equal(loop_run_once(l, 0, NULL), 0);
	loop_free(&l);
}

/* A timer returning its next delay runs again; LOOP_NOMORE deletes it; one
 * returning 0 runs once per turn, not over and over in one. */
static void test_timer_rearms(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	struct tmr log = { 0 };
	struct tmr t = { .tag = 7, .log = &log, .ret = { 1, 0, 2, LOOP_NOMORE } };
	int64_t id = loop_add_timer(l, 0, on_timer, &t, NULL);
	assert_true(id > 0);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(t.calls, 1);
	assert_int_equal(loop_run_once(l, -1, NULL), 1); /* after its 1 ms */
	assert_int_equal(t.calls, 2);
	assert_int_equal(loop_run_once(l, -1, NULL), 1); /* returned 0: next turn */
	assert_int_equal(t.calls, 3);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(t.calls, 4);
	/* Gone. */
	assert_int_equal(loop_del_timer(l, id), -1);
	assert_int_equal(loop_run_once(l, 0, NULL), 0);
	assert_int_equal(t.calls, 4);
	loop_free(&l);
}

/* A timer deleting another due in the same turn, and one deleting itself
 * although it returns a delay. */
static void test_timer_deletion_in_callback(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	struct tmr log = { 0 };
	struct tmr a = { .tag = 1, .log = &log, .ret = { LOOP_NOMORE } };
	struct tmr b = { .tag = 2, .log = &log, .ret = { 5 } };
	struct tmr c = { .tag = 3, .log = &log, .ret = { 5 } };
	assert_true(loop_add_timer(l, 0, on_timer, &a, NULL) > 0);
	int64_t ib = loop_add_timer(l, 0, on_timer, &b, NULL);
	int64_t ic = loop_add_timer(l, 0, on_timer, &c, NULL);
	a.del_id = ib;
	c.del_id = ic;
	assert_int_equal(loop_run_once(l, -1, NULL), 2);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.order[0], 1);
	assert_int_equal(log.order[1], 3);
	assert_int_equal(b.calls, 0);
	assert_int_equal(loop_del_timer(l, ib), -1);
	assert_int_equal(loop_del_timer(l, ic), -1);
	/* Nothing left: the next turn times out at once. */
	assert_int_equal(loop_run_once(l, 0, NULL), 0);
	assert_int_equal(log.n, 2);
	loop_free(&l);
}

/* A timer added by a callback first runs in a later turn. */
struct adder {
	struct tmr *child;
	int64_t child_id;
};

static int64_t on_add(struct loop *l, int64_t id, void *ctx)
{
	(void)id;
	struct adder *a = ctx;
	a->child_id = loop_add_timer(l, 0, on_timer, a->child, NULL);
	return LOOP_NOMORE;
}

static void test_timer_added_in_callback(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	struct tmr log = { 0 };
	struct tmr child = { .tag = 9, .log = &log, .ret = { LOOP_NOMORE } };
	struct adder ad = { &child, 0 };
	assert_true(loop_add_timer(l, 0, on_add, &ad, NULL) > 0);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_true(ad.child_id > 0);
	assert_int_equal(child.calls, 0);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(child.calls, 1);
	loop_free(&l);
}

/* ---- the hook, stopping, errors --------------------------------------------------- */

struct hook {
	int calls;
	int stop_at;
	int timer_calls_seen;  /* the timer's calls when the hook ran */
	struct tmr *timer;
};

static void on_before(struct loop *l, void *ctx)
{
	struct hook *h = ctx;
	h->calls++;
	if (h->timer)
		h->timer_calls_seen = h->timer->calls;
	if (h->stop_at && h->calls == h->stop_at)
		loop_stop(l);
}

static void test_before_sleep_each_turn(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	struct tmr log = { 0 };
	struct tmr t = { .tag = 1, .log = &log, .ret = { 0, 0, 0, 0, 0, 0, 0, 0 } };
	struct hook h = { .timer = &t };
	loop_set_before_sleep(l, on_before, &h);
	for (int i = 1; i <= 3; i++) {
		assert_int_equal(loop_run_once(l, 0, NULL), 0);
		assert_int_equal(h.calls, i);
	}
	/* Before the sleep, so before that turn's timers. */
	assert_true(loop_add_timer(l, 0, on_timer, &t, NULL) > 0);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(h.calls, 4);
	assert_int_equal(h.timer_calls_seen, 0);
	assert_int_equal(t.calls, 1);
	/* The hook stopping the loop: loop_run returns after that turn's
	 * hook, and no callback runs in it. */
	h.stop_at = 7;
	assert_int_equal(loop_run(l, NULL), 0);
	assert_int_equal(h.calls, 7);
	assert_int_equal(t.calls, 3); /* turns 5 and 6 */
	loop_set_before_sleep(l, NULL, NULL);
	assert_int_equal(loop_run_once(l, -1, NULL), 1);
	assert_int_equal(h.calls, 7);
	assert_int_equal(t.calls, 4);
	loop_free(&l);
}

/* A callback stopping the loop: loop_run returns; the rest of the turn is
 * left (the other ready fd and the due timer), and runs next turn. */
static void test_stop_from_callback(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	int a[2], b[2];
	make_pipe(a);
	make_pipe(b);
	int lo = a[0] < b[0] ? a[0] : b[0], hi = a[0] < b[0] ? b[0] : a[0];
	struct rd rlo, rhi;
	rd_init(&rlo, l, 1);
	rd_init(&rhi, l, 2);
	rlo.stop = 1;
	struct tmr log = { 0 };
	struct tmr t = { .tag = 3, .log = &log, .ret = { LOOP_NOMORE } };
	assert_int_equal(loop_add_fd(l, lo, LOOP_READ, on_read, &rlo, NULL), 0);
	assert_int_equal(loop_add_fd(l, hi, LOOP_READ, on_read, &rhi, NULL), 0);
	assert_true(loop_add_timer(l, 0, on_timer, &t, NULL) > 0);
	put(a[1], "a");
	put(b[1], "b");
	assert_int_equal(loop_run(l, NULL), 0);
	assert_int_equal(rlo.calls, 1);
	assert_int_equal(rhi.calls, 0);
	assert_int_equal(t.calls, 0);
	assert_false(loop_stopped(l));
	rlo.stop = 0;
	assert_int_equal(loop_run_once(l, -1, NULL), 2);
	assert_int_equal(rhi.calls, 1);
	assert_int_equal(t.calls, 1);
	loop_free(&l);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

/* Stopped from another thread while it sleeps with nothing to wait for:
 * loop_run returns (the test would hang otherwise). */
static void *stopper(void *p)
{
	loop_stop(p);
	return NULL;
}

static void test_stop_from_another_thread(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, stopper, l), 0);
	assert_int_equal(loop_run(l, NULL), 0);
	pthread_join(th, NULL);
	assert_false(loop_stopped(l));
	/* loop_wake alone ends a sleep without stopping. */
	loop_wake(l);
	assert_int_equal(loop_run_once(l, -1, NULL), 0);
	assert_false(loop_stopped(l));
	loop_free(&l);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct loop *l = new_loop();
	struct rd r;
	rd_init(&r, l, 0);
	char *err = NULL;
	assert_int_equal(loop_add_fd(l, -1, LOOP_READ, on_read, &r, &err), -1);
	assert_non_null(strstr(err, "fd -1"));
	free(err);
	err = NULL;
	assert_int_equal(loop_add_fd(l, 0, 0, on_read, &r, &err), -1);
	assert_non_null(strstr(err, "mask"));
	free(err);
	err = NULL;
	assert_int_equal(loop_add_fd(l, 0, LOOP_READ, NULL, &r, &err), -1);
	assert_non_null(strstr(err, "callback"));
	free(err);
	err = NULL;
	assert_int_equal(loop_add_timer(l, -5, on_timer, &r, &err), -1);
	assert_non_null(strstr(err, "-5 ms"));
	free(err);
	assert_int_equal(loop_fd_mask(l, 0), 0);
	assert_int_equal(loop_fd_mask(l, 100000), 0);
	assert_int_equal(loop_del_timer(l, 12345), -1);
	loop_del_fd(l, 4000, LOOP_READ); /* never added: ignored */
	loop_free(&l);
	loop_free(&l); /* NULL: nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_fires_its_callback),
		cmocka_unit_test(test_read_and_write_masks),
		cmocka_unit_test(test_removal_during_dispatch),
		cmocka_unit_test(test_fd_reused_during_dispatch),
		cmocka_unit_test(test_many_fds),
		cmocka_unit_test(test_timers_run_in_order),
		cmocka_unit_test(test_timer_rearms),
		cmocka_unit_test(test_timer_deletion_in_callback),
		cmocka_unit_test(test_timer_added_in_callback),
		cmocka_unit_test(test_before_sleep_each_turn),
		cmocka_unit_test(test_stop_from_callback),
		cmocka_unit_test(test_stop_from_another_thread),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
