/* Unit tests of the file-system bus's durable sends from many threads:
 * one directory sync shared by a commit group, and a failed sync reaching
 * every sender of its group with its send withdrawn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/bus_fs.h"
#include "core/util.h"
#include "tests/unit/bus_test.h"

/* ---- durable sends from many threads (group commit) ------------------- */

#define GC_THREADS 8
#define GC_EACH 40

struct gc_sender {
	const struct bus_config *cfg;
	int k, each, ok, failed;
	char *err; /* the first error */
	pthread_t th;
};

/* One agent thread: a bus handle of its own, s->each durable sends. */
static void *gc_send_thread(void *arg)
{
	struct gc_sender *s = arg;
	struct bus *b;
	char *err = NULL;
	if (bus_open(s->cfg, &b, &err) < 0) {
		s->err = err;
		s->failed = s->each;
		return NULL;
	}
	for (int i = 0; i < s->each; i++) {
		struct msg *m = msg_new("operator", "writer_agent", MSG_HEARTBEAT,
					hb(s->k * 1000 + i));
		if (bus_send(b, m, &err) == 0) {
			s->ok++;
		} else {
			s->failed++;
			if (!s->err)
				s->err = err;
			else
				free(err);
			err = NULL;
		}
		msg_free(&m);
	}
	bus_free(&b);
	return NULL;
}

static void gc_run(struct fx *f, struct gc_sender *s, int nthreads, int each)
{
	struct bus_config cfg = f->cfg;
	cfg.durable = true;
	for (int k = 0; k < nthreads; k++) {
		s[k] = (struct gc_sender){ .cfg = &cfg, .k = k, .each = each };
		assert_int_equal(pthread_create(&s[k].th, NULL, gc_send_thread, &s[k]), 0);
	}
	for (int k = 0; k < nthreads; k++)
		assert_int_equal(pthread_join(s[k].th, NULL), 0);
}

static void test_durable_concurrent_senders(void **state)
{
	struct fx *f = *state;
	unsigned long joined0 = atomic_load(&bus_fs_commit_joined);
	struct gc_sender s[GC_THREADS];
	gc_run(f, s, GC_THREADS, GC_EACH);
	for (int k = 0; k < GC_THREADS; k++) {
		if (s[k].err)
			fail_msg("thread %d: %s", k, s[k].err);
		assert_int_equal(s[k].ok, GC_EACH);
	}
	/* Every send waited for a data sync and a directory sync. */
	assert_true(atomic_load(&bus_fs_commit_joined) - joined0 >= 2UL * GC_THREADS * GC_EACH);
	/* Each message arrives once, with its content. */
	char *idir = xasprintf("%s/messages/inbox/writer_agent", f->dir);
	assert_int_equal(count_in(idir, ".json"), GC_THREADS * GC_EACH);
	assert_int_equal(count_in(idir, ".tmp"), 0);
	free(idir);
	int seen[GC_THREADS][GC_EACH] = { { 0 } };
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "writer_agent", &c, &err), 0);
	struct bus_delivery *d;
	int got = 0;
	while (bus_claim(c, &d, &err) == 1) {
		int q = seq_of(d);
		assert_in_range(q / 1000, 0, GC_THREADS - 1);
		assert_in_range(q % 1000, 0, GC_EACH - 1);
		seen[q / 1000][q % 1000]++;
		assert_string_equal(d->msg->from, "operator");
		assert_string_equal(cJSON_GetObjectItem(d->msg->content, "status")->valuestring,
				    "idle");
		assert_int_equal(bus_ack(c, &d, &err), 0);
		got++;
	}
	assert_int_equal(got, GC_THREADS * GC_EACH);
	for (int k = 0; k < GC_THREADS; k++)
		for (int i = 0; i < GC_EACH; i++)
			assert_int_equal(seen[k][i], 1);
	bus_consumer_free(&c);
}

/* The fault: every directory sync fails with EIO; the first one waits
 * until every sender has joined a commit group, so the others all queue
 * behind it and share the second. */
static atomic_int gc_calls;
static unsigned long gc_target;

static int gc_failing_sync(const char *dir)
{
	(void)dir;
	if (atomic_fetch_add(&gc_calls, 1) == 0) {
		/* Bounded, so that a broken group cannot hang the test: the
		 * count of syncs below then says what went wrong. */
		for (int i = 0; i < 30000 && atomic_load(&bus_fs_commit_joined) < gc_target; i++)
			usleep(1000);
	}
	errno = EIO;
	return -1;
}

static void test_dir_sync_error_reaches_every_sender(void **state)
{
	struct fx *f = *state;
	enum { N = 6 };
	int (*saved)(const char *) = bus_fs_dir_sync;
	atomic_store(&gc_calls, 0);
	/* Each sender joins a data group, then a directory group. */
	gc_target = atomic_load(&bus_fs_commit_joined) + 2 * N;
	bus_fs_dir_sync = gc_failing_sync;
	struct gc_sender s[N];
	gc_run(f, s, N, 1);
	bus_fs_dir_sync = saved;
	/* Two syncs for six senders: the second served five or so, and
	 * each of them heard of its failure. */
	assert_int_equal(atomic_load(&gc_calls), 2);
	for (int k = 0; k < N; k++) {
		assert_int_equal(s[k].ok, 0);
		assert_int_equal(s[k].failed, 1);
		assert_non_null(s[k].err);
		if (!strstr(s[k].err, "cannot sync directory") ||
		    !strstr(s[k].err, strerror(EIO)) || !strstr(s[k].err, "withdrawn"))
			fail_msg("thread %d: %s", k, s[k].err);
		free(s[k].err);
	}
	/* Withdrawn: nothing waits in the inbox, no temporary file is left. */
	char *idir = xasprintf("%s/messages/inbox/writer_agent", f->dir);
	assert_int_equal(count_in(idir, ".json"), 0);
	assert_int_equal(count_in(idir, ".tmp"), 0);
	/* The next durable send, with the disk well again, goes through. */
	f->bus->cfg.durable = true;
	free(send_hb(f->bus, "writer_agent", 1, PRIO_NORMAL));
	assert_int_equal(count_in(idir, ".json"), 1);
	free(idir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_durable_concurrent_senders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_sync_error_reaches_every_sender, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
