/* Unit tests of the file-system bus: send and claim, ordering, retries
 * and backoff, dead letters and their sidecars, expiry, limits, broadcast,
 * recovery of a dead consumer's claims, counters, administration. Durable
 * sends from many threads (group commit) are in test_bus_durable.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/bus_fs.h"
#include "core/util.h"

#include "tests/unit/bus_test.h"

static void test_send_claim_ack(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "research_agent_1", 7, PRIO_NORMAL);
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_1", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	assert_int_equal(seq_of(d), 7);
	assert_int_equal(d->attempts, 0);
	/* While claimed it is in processing/, not in the inbox. */
	char *pdir = xasprintf("%s/messages/processing/research_agent_1", f->dir);
	assert_int_equal(count_in(pdir, ".json"), 1);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	assert_null(d);
	assert_int_equal(count_in(pdir, ".json"), 0);
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, id, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_PROCESSED);
	bus_entry_release(&e);
	assert_int_equal(bus_claim(c, &d, &err), 0);
	bus_consumer_free(&c);
	free(pdir);
	free(id);
}

static void test_priority_then_age(void **state)
{
	struct fx *f = *state;
	enum msg_priority ps[] = { PRIO_LOW, PRIO_NORMAL, PRIO_URGENT, PRIO_NORMAL,
				   PRIO_HIGH, PRIO_URGENT, PRIO_LOW };
	for (int i = 0; i < 7; i++)
		free(send_hb(f->bus, "validator_agent", i, ps[i]));
	int expect[] = { 2, 5, 4, 1, 3, 0, 6 };
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "validator_agent", &c, &err), 0);
	for (int i = 0; i < 7; i++) {
		struct bus_delivery *d;
		assert_int_equal(bus_claim(c, &d, &err), 1);
		assert_int_equal(seq_of(d), expect[i]);
		assert_int_equal(bus_ack(c, &d, &err), 0);
	}
	bus_consumer_free(&c);
}

static void test_arrivals_seen_live(void **state)
{
	struct fx *f = *state;
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_2", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 0);
	free(send_hb(f->bus, "research_agent_2", 1, PRIO_LOW));
	free(send_hb(f->bus, "research_agent_2", 2, PRIO_URGENT));
	assert_true(bus_consumer_wait(c, 2000) >= 0);
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(seq_of(d), 2); /* urgent first, though it came later */
	assert_int_equal(bus_ack(c, &d, &err), 0);
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(seq_of(d), 1);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	bus_consumer_free(&c);
}

/* bus_consumer_timeout, for a reactor: the poll interval while nothing is
 * known; 0 once the drained fd brought messages; a retry's backoff after a
 * nack. The fd is readable after a send (what a reactor watches). */
static void test_consumer_timeout_for_a_reactor(void **state)
{
	struct fx *f = *state;
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_2", &c, &err), 0);
	int interval = (int)(f->cfg.poll_interval_s * 1000);
	assert_true(interval > 5);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 0);
	assert_int_equal(bus_consumer_timeout(c), interval);
	free(send_hb(f->bus, "research_agent_2", 1, PRIO_LOW));
	free(send_hb(f->bus, "research_agent_2", 2, PRIO_LOW));
	struct pollfd p = { .fd = bus_consumer_fd(c), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(bus_consumer_timeout(c), interval); /* not drained yet */
	assert_int_equal(bus_consumer_wait(c, 0), 1);
	assert_int_equal(bus_consumer_timeout(c), 0);
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(bus_nack(c, &d, "again", false, &err), 0);
	bus_consumer_wait(c, 0);
	int t = bus_consumer_timeout(c);
	assert_true(t >= 0 && t <= f->cfg.retry_max_ms + 1);
	bus_consumer_free(&c);
}

static void test_backoff_grows_with_jitter(void **state)
{
	struct fx *f = *state;
	struct bus_config cfg = f->cfg;
	cfg.retry_base_ms = 1000;
	cfg.retry_max_ms = 300000;
	for (int i = 0; i < 200; i++) {
		int64_t a = bus_backoff_ms(&cfg, 1), b = bus_backoff_ms(&cfg, 2);
		int64_t c = bus_backoff_ms(&cfg, 3), z = bus_backoff_ms(&cfg, 30);
		assert_true(a >= 500 && a <= 1000);
		assert_true(b >= 1000 && b <= 2000);
		assert_true(c >= 2000 && c <= 4000);
		assert_true(z >= 150000 && z <= 300000);
	}
}

static void test_retry_then_dead_letter(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "product_manager", 1, PRIO_NORMAL);
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "product_manager", &c, &err), 0);
	for (int attempt = 0; attempt < 3; attempt++) {
		struct bus_delivery *d = NULL;
		int got = 0;
		for (int spin = 0; spin < 2000 && got != 1; spin++) {
			got = bus_claim(c, &d, &err);
			if (got == 0)
				bus_consumer_wait(c, 5);
		}
		assert_int_equal(got, 1);
		assert_int_equal(d->attempts, attempt);
		char *why = xasprintf("handler failed #%d", attempt + 1);
		assert_int_equal(bus_nack(c, &d, why, false, &err), 0);
		free(why);
	}
	/* Three failures: a dead letter whose sidecar says why. */
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, id, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_DEAD);
	assert_string_equal(e.reason, "max_attempts");
	assert_string_equal(e.error, "handler failed #3");
	assert_string_equal(e.original_inbox, "product_manager");
	assert_int_equal(e.attempts, 3);
	char *sc = xasprintf("%.*s.reason.json", (int)(strlen(e.path) - 5), e.path);
	char *buf;
	size_t len;
	assert_int_equal(util_read_file(sc, 1 << 20, &buf, &len, &err), 0);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(cJSON_GetObjectItem(j, "first_failure"));
	assert_non_null(cJSON_GetObjectItem(j, "last_failure"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "errors")), 3);
	cJSON_Delete(j);
	free(buf);
	free(sc);
	bus_entry_release(&e);
	/* Retry from the dead letters: back in the inbox, attempts reset. */
	assert_int_equal(bus_retry(f->bus, id, NULL, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	assert_int_equal(d->attempts, 0);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	bus_consumer_free(&c);
	free(id);
}

static void test_permanent_failure_dead_at_once(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "research_agent_1", 1, PRIO_NORMAL);
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_1", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(bus_nack(c, &d, "cannot handle this type", true, &err), 0);
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, id, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_DEAD);
	assert_string_equal(e.reason, "rejected");
	/* The sidecar says who sent what: listing reads it alone, so even a
	 * message file that can no longer be parsed lists its sender. */
	int fd = open(e.path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "garbage", 7), 7);
	close(fd);
	bus_entry_release(&e);
	struct bus_entry *v;
	size_t n;
	assert_int_equal(bus_list(f->bus, BUS_Q_DEAD, NULL, true, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].from, "operator");
	assert_string_equal(v[0].to, "research_agent_1");
	assert_string_equal(v[0].type, "heartbeat");
	assert_string_equal(v[0].reason, "rejected");
	bus_entries_free(v, n);
	bus_consumer_free(&c);
	free(id);
}

/* A message sent `ago_s` seconds ago with a timeout of 1 s. */
static struct msg *stale_msg(const char *to, enum msg_type t, cJSON *content, int ago_s)
{
	struct msg *m = msg_new("operator", to, t, content);
	m->timeout_s = 1;
	m->ts_ns -= (int64_t)ago_s * 1000000000;
	free(m->timestamp);
	char ts[40];
	util_iso8601(m->ts_ns, ts, sizeof(ts));
	m->timestamp = xstrdup(ts);
	return m;
}

static cJSON *progress_content(void)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", "t1");
	cJSON_AddNumberToObject(c, "percent_complete", 50);
	cJSON_AddStringToObject(c, "current_step", "reading");
	return c;
}

static void test_expired_not_delivered(void **state)
{
	struct fx *f = *state;
	struct msg *m = stale_msg("research_agent_1", MSG_TASK_PROGRESS, progress_content(), 5);
	char *err = NULL;
	assert_int_equal(bus_send(f->bus, m, &err), 0);
	free(send_hb(f->bus, "research_agent_1", 2, PRIO_LOW));
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_1", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(seq_of(d), 2); /* the expired one was skipped */
	assert_int_equal(bus_ack(c, &d, &err), 0);
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, m->id, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_DEAD);
	assert_string_equal(e.reason, "expired");
	bus_entry_release(&e);
	bus_consumer_free(&c);
	msg_free(&m);
}

/* Item 7: an expired heartbeat or system_status is dropped and counted,
 * never a dead letter. */
static void test_expired_heartbeat_dropped_counted(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct msg *m1 = stale_msg("product_manager", MSG_HEARTBEAT, hb(1), 5);
	struct msg *m2 = stale_msg("product_manager", MSG_HEARTBEAT, hb(2), 9);
	assert_int_equal(bus_send(f->bus, m1, &err), 0);
	assert_int_equal(bus_send(f->bus, m2, &err), 0);
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "product_manager", &c, &err), 0);
	struct bus_delivery *d = NULL;
	assert_int_equal(bus_claim(c, &d, &err), 0); /* nothing deliverable */
	char *dl = xasprintf("%s/messages/dead-letter", f->dir);
	assert_int_equal(count_in(dl, ".json"), 0);
	char *ib = xasprintf("%s/messages/inbox/product_manager", f->dir);
	assert_int_equal(count_in(ib, ".json"), 0);
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, m1->id, &e, &err), -1);
	free(err);
	err = NULL;
	struct bus_stats st;
	assert_int_equal(bus_stats(f->bus, &st, &err), 0);
	assert_int_equal(st.dead_letter, 0);
	assert_int_equal(st.expired_dropped, 2);
	bus_stats_release(&st);
	/* the record names what was dropped */
	char *rec = xasprintf("%s/messages/dropped/expired.jsonl", f->dir);
	char *buf = NULL;
	size_t len;
	assert_int_equal(util_read_file(rec, 1 << 20, &buf, &len, &err), 0);
	assert_non_null(strstr(buf, m1->id));
	assert_non_null(strstr(buf, m2->id));
	assert_non_null(strstr(buf, "\"type\":\"heartbeat\""));
	free(buf);
	free(rec);
	free(ib);
	free(dl);
	bus_consumer_free(&c);
	msg_free(&m1);
	msg_free(&m2);
}

/* Item 5: retrying an expired dead letter refreshes it (and says so); it
 * is then delivered, not dead-lettered again. */
static void test_retry_expired_refreshes(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct msg *m = stale_msg("research_agent_1", MSG_TASK_PROGRESS, progress_content(), 5);
	assert_int_equal(bus_send(f->bus, m, &err), 0);
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_1", &c, &err), 0);
	struct bus_delivery *d = NULL;
	assert_int_equal(bus_claim(c, &d, &err), 0);
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, m->id, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_DEAD);
	assert_string_equal(e.reason, "expired");
	bus_entry_release(&e);
	char *note = NULL;
	int64_t before = util_now_ns();
	assert_int_equal(bus_retry_note(f->bus, m->id, NULL, &note, &err), 0);
	assert_non_null(note);
	assert_non_null(strstr(note, "refreshed"));
	free(note);
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, m->id);
	assert_true(d->msg->ts_ns >= before - 1000000); /* a new timestamp */
	assert_int_equal(d->msg->timeout_s, 1);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	char *dl = xasprintf("%s/messages/dead-letter", f->dir);
	assert_int_equal(count_in(dl, ".json"), 0);
	free(dl);
	/* a dead letter that had not expired is retried as it was, no note */
	bus_consumer_free(&c);
	msg_free(&m);
}

/* Item 6: a file whose name has no time counts with its mtime in OLDEST. */
static void test_oldest_uses_mtime_of_foreign_name(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "research_agent_2", 1, PRIO_NORMAL);
	char *ib = xasprintf("%s/messages/inbox/research_agent_2", f->dir);
	DIR *dd = opendir(ib);
	struct dirent *de;
	char *src = NULL;
	while ((de = readdir(dd)))
		if (de->d_name[0] != '.')
			src = xasprintf("%s/%s", ib, de->d_name);
	closedir(dd);
	assert_non_null(src);
	char *buf = NULL, *err = NULL;
	size_t len;
	assert_int_equal(util_read_file(src, 1 << 20, &buf, &len, &err), 0);
	char *x = xasprintf("%s/x.json", ib);
	assert_int_equal(util_write_file_atomic(x, buf, len, false, &err), 0);
	/* the foreign file is 600 s old, older than the madf one */
	struct timespec ts[2];
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= 600;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, x, ts, 0), 0);
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: a one-shot scan; pass 1: the file arriving while a
		 * monitor watches */
		struct bus_stats st;
		struct bus_monitor *mon = NULL;
		if (pass == 0) {
			assert_int_equal(bus_stats(f->bus, &st, &err), 0);
		} else {
			char *tmp = xasprintf("%s/y.json", f->dir);
			assert_int_equal(rename(x, tmp), 0);
			assert_int_equal(bus_monitor_open(f->bus, &mon, &err), 0);
			assert_int_equal(rename(tmp, x), 0);
			free(tmp);
			bus_monitor_process(mon);
			bus_monitor_stats(mon, &st);
		}
		bool found = false;
		for (size_t i = 0; i < st.nagents; i++) {
			if (strcmp(st.agents[i].agent, "research_agent_2"))
				continue;
			found = true;
			assert_int_equal(st.agents[i].depth, 2);
			assert_true(st.agents[i].oldest_ns != 0);
			double age = (double)(util_now_ns() - st.agents[i].oldest_ns) / 1e9;
			assert_true(age > 590 && age < 700);
		}
		assert_true(found);
		bus_stats_release(&st);
		bus_monitor_free(&mon);
	}
	/* and the listing's age is the mtime too */
	struct bus_entry *v;
	size_t n;
	assert_int_equal(bus_list(f->bus, BUS_Q_INBOX, "research_agent_2", true, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	double age = (double)(util_now_ns() - v[0].enqueued_ns) / 1e9;
	assert_string_equal(v[0].name, "x.json");
	assert_true(age > 590 && age < 700);
	bus_entries_free(v, n);
	free(x);
	free(buf);
	free(src);
	free(ib);
	free(id);
}

/* Item 8: the monitor counts deliveries (acks), and their rate. */
static void test_monitor_counts_acks(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct bus_monitor *mon;
	assert_int_equal(bus_monitor_open(f->bus, &mon, &err), 0);
	if (bus_monitor_fd(mon) < 0) {
		bus_monitor_free(&mon);
		skip();
	}
	enum { N = 50 };
	for (int i = 0; i < N; i++)
		free(send_hb(f->bus, "validator_agent", i, PRIO_NORMAL));
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "validator_agent", &c, &err), 0);
	struct bus_delivery *d;
	int got = 0;
	while (bus_claim(c, &d, &err) == 1) {
		if (got < 10) {
			assert_int_equal(bus_ack(c, &d, &err), 0);
		} else {
			/* given back, not delivered: not counted */
			assert_int_equal(bus_nack(c, &d, "no", true, &err), 0);
		}
		got++;
	}
	assert_int_equal(got, N);
	bus_monitor_process(mon);
	struct bus_stats st;
	bus_monitor_stats(mon, &st);
	assert_int_equal(st.acked, 10);
	/* 10 acks within the last few seconds: at least 10/5 per second */
	assert_true(st.acked_per_s >= 10.0 / 5 && st.acked_per_s <= 10.0);
	bus_stats_release(&st);
	bus_consumer_free(&c);
	bus_monitor_free(&mon);
}

/* bus_forget_agent: a gone agent's empty inbox, claim and retry
 * directories go (one with a message waiting keeps its inbox), and a
 * monitor watching stops listing it (its inotify watches, gone with the
 * directories, not mistaken for new ones); a send makes it come back. */
static bool listed(struct bus_monitor *mon, const char *agent)
{
	struct bus_stats st;
	bus_monitor_process(mon);
	bus_monitor_stats(mon, &st);
	bool found = false;
	for (size_t i = 0; i < st.nagents; i++)
		found = found || !strcmp(st.agents[i].agent, agent);
	bus_stats_release(&st);
	return found;
}

static void test_forget_agent(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct bus_monitor *mon;
	assert_int_equal(bus_monitor_open(f->bus, &mon, &err), 0);
	free(send_hb(f->bus, "conv-abc-x", 1, PRIO_NORMAL));
	free(send_hb(f->bus, "conv-abc-y", 1, PRIO_NORMAL));
	assert_true(listed(mon, "conv-abc-x"));
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "conv-abc-x", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	bus_consumer_free(&c);
	assert_int_equal(bus_forget_agent(f->bus, "conv-abc-x", &err), 0);
	/* y has a message waiting: its inbox stays */
	assert_int_equal(bus_forget_agent(f->bus, "conv-abc-y", &err), 0);
	char *px = xasprintf("%s/messages/inbox/conv-abc-x", f->dir);
	char *pp = xasprintf("%s/messages/processing/conv-abc-x", f->dir);
	char *py = xasprintf("%s/messages/inbox/conv-abc-y", f->dir);
	assert_int_equal(access(px, F_OK), -1);
	assert_int_equal(access(pp, F_OK), -1);
	assert_int_equal(access(py, F_OK), 0);
	if (bus_monitor_fd(mon) >= 0) {
		assert_false(listed(mon, "conv-abc-x"));
		assert_true(listed(mon, "conv-abc-y"));
	}
	struct bus_stats st;
	assert_int_equal(bus_stats(f->bus, &st, &err), 0);
	for (size_t i = 0; i < st.nagents; i++)
		assert_string_not_equal(st.agents[i].agent, "conv-abc-x");
	bus_stats_release(&st);
	/* back with a new message, counted by the same monitor */
	free(send_hb(f->bus, "conv-abc-x", 2, PRIO_NORMAL));
	if (bus_monitor_fd(mon) >= 0) {
		assert_true(listed(mon, "conv-abc-x"));
		bus_monitor_stats(mon, &st);
		for (size_t i = 0; i < st.nagents; i++)
			if (!strcmp(st.agents[i].agent, "conv-abc-x"))
				assert_int_equal(st.agents[i].depth, 1);
		bus_stats_release(&st);
	}
	assert_int_equal(bus_forget_agent(f->bus, "Not An Agent", &err), -1);
	free(err);
	free(px);
	free(pp);
	free(py);
	bus_monitor_free(&mon);
}

static void test_inbox_full(void **state)
{
	struct fx *f = *state;
	f->bus->cfg.inbox_limit = 5;
	for (int i = 0; i < 5; i++)
		free(send_hb(f->bus, "validator_agent", i, PRIO_NORMAL));
	struct msg *m = msg_new("operator", "validator_agent", MSG_HEARTBEAT, hb(9));
	char *err = NULL;
	assert_int_equal(bus_send(f->bus, m, &err), -1);
	assert_non_null(strstr(err, "inbox of validator_agent is full"));
	free(err);
	msg_free(&m);
	char *dir = xasprintf("%s/messages/inbox/validator_agent", f->dir);
	assert_int_equal(count_in(dir, ".json"), 5);
	free(dir);
}

static void test_too_large_refused_at_send(void **state)
{
	struct fx *f = *state;
	f->bus->cfg.max_bytes = 4096;
	cJSON *c = hb(1);
	char *big = xmalloc(5000);
	memset(big, 'x', 4999);
	big[4999] = '\0';
	cJSON_AddStringToObject(c, "current_task", big);
	free(big);
	struct msg *m = msg_new("operator", "validator_agent", MSG_HEARTBEAT, c);
	char *err = NULL;
	assert_int_equal(bus_send(f->bus, m, &err), -1);
	assert_non_null(strstr(err, "over the 4096-byte limit"));
	free(err);
	msg_free(&m);
}

static void write_raw(struct fx *f, const char *agent, const char *name,
		      const char *body, size_t len)
{
	char *p = xasprintf("%s/messages/inbox/%s/%s", f->dir, agent, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, body, len), (ssize_t)len);
	close(fd);
	free(p);
}

static void test_bad_files_dead_lettered_good_flow(void **state)
{
	struct fx *f = *state;
	const char *agent = "research_agent_2";
	write_raw(f, agent, "bad-json.json", "{\"message_id\": ", 15);
	write_raw(f, agent, "nul.json", "{\"a\":\0}", 7);
	write_raw(f, agent, "ignored.tmp", "{}", 2);
	write_raw(f, agent, ".hidden.json", "{}", 2);
	char *link = xasprintf("%s/messages/inbox/%s/link.json", f->dir, agent);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	char *fifo = xasprintf("%s/messages/inbox/%s/fifo.json", f->dir, agent);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	char *id = send_hb(f->bus, agent, 42, PRIO_LOW);
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, agent, &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	assert_int_equal(bus_claim(c, &d, &err), 0);
	char *dl = xasprintf("%s/messages/dead-letter", f->dir);
	assert_int_equal(count_in(dl, ".json"), 4);
	char *inbox = xasprintf("%s/messages/inbox/%s", f->dir, agent);
	/* .tmp and hidden files are never taken */
	char *t = xasprintf("%s/ignored.tmp", inbox), *h = xasprintf("%s/.hidden.json", inbox);
	assert_int_equal(access(t, F_OK), 0);
	assert_int_equal(access(h, F_OK), 0);
	/* the symlink moved as a link; its target untouched */
	struct stat st;
	assert_int_equal(lstat("/etc/passwd", &st), 0);
	struct bus_entry *v;
	size_t n;
	assert_int_equal(bus_list(f->bus, BUS_Q_DEAD, NULL, true, &v, &n, &err), 0);
	int seen_link = 0, seen_fifo = 0, seen_invalid = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, "link.json")) {
			seen_link = 1;
			assert_string_equal(v[i].reason, "not_regular");
			assert_int_equal(lstat(v[i].path, &st), 0);
			assert_true(S_ISLNK(st.st_mode));
		} else if (!strcmp(v[i].name, "fifo.json")) {
			seen_fifo = 1;
			assert_string_equal(v[i].reason, "not_regular");
		} else {
			seen_invalid++;
			assert_string_equal(v[i].reason, "invalid");
			assert_string_equal(v[i].original_inbox, agent);
		}
	}
	assert_true(seen_link && seen_fifo && seen_invalid == 2);
	bus_entries_free(v, n);
	bus_consumer_free(&c);
	free(t); free(h); free(inbox); free(dl); free(id); free(link); free(fifo);
}

static void test_broadcast_reaches_every_agent_once(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct msg *m = msg_new("product_manager", "broadcast", MSG_HEARTBEAT, hb(3));
	assert_int_equal(bus_send(f->bus, m, &err), 0);
	for (size_t i = 0; i < bus_default_agent_count; i++) {
		const char *a = bus_default_agents[i];
		struct bus_consumer *c;
		assert_int_equal(bus_consumer_open(f->bus, a, &c, &err), 0);
		struct bus_delivery *d;
		if (!strcmp(a, "product_manager")) {
			assert_int_equal(bus_claim(c, &d, &err), 0); /* not to the sender */
		} else {
			assert_int_equal(bus_claim(c, &d, &err), 1);
			assert_string_equal(d->msg->id, m->id);
			assert_int_equal(bus_ack(c, &d, &err), 0);
			assert_int_equal(bus_claim(c, &d, &err), 0);
		}
		bus_consumer_free(&c);
	}
	msg_free(&m);
}

static void test_dead_consumer_claim_recovered(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "research_agent_1", 5, PRIO_NORMAL);
	pid_t pid = fork();
	if (pid == 0) {
		struct bus *b;
		struct bus_consumer *c;
		struct bus_delivery *d;
		char *err = NULL;
		if (bus_open(&f->cfg, &b, &err) < 0 ||
		    bus_consumer_open(b, "research_agent_1", &c, &err) < 0 ||
		    bus_claim(c, &d, &err) != 1)
			_exit(3);
		_exit(0); /* dies holding the claim */
	}
	int st;
	waitpid(pid, &st, 0);
	assert_int_equal(WEXITSTATUS(st), 0);
	struct bus_stats s;
	char *err = NULL;
	assert_int_equal(bus_stats(f->bus, &s, &err), 0);
	assert_int_equal(s.processing, 1);
	bus_stats_release(&s);
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_1", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	assert_int_equal(d->attempts, 1); /* the dead consumer's try counts */
	assert_int_equal(bus_ack(c, &d, &err), 0);
	bus_consumer_free(&c);
	free(id);
}

static void test_monitor_counts_incrementally(void **state)
{
	struct fx *f = *state;
	struct bus_monitor *m;
	char *err = NULL;
	assert_int_equal(bus_monitor_open(f->bus, &m, &err), 0);
	for (int i = 0; i < 3; i++)
		free(send_hb(f->bus, "validator_agent", i, PRIO_NORMAL));
	free(send_hb(f->bus, "newcomer", 1, PRIO_NORMAL));
	for (int spin = 0; spin < 100; spin++) {
		if (bus_monitor_process(m))
			continue;
		usleep(2000);
	}
	struct bus_stats s;
	bus_monitor_stats(m, &s);
	size_t depth_v = 0, depth_n = 0;
	int64_t oldest = 0;
	for (size_t i = 0; i < s.nagents; i++) {
		if (!strcmp(s.agents[i].agent, "validator_agent")) {
			depth_v = s.agents[i].depth;
			oldest = s.agents[i].oldest_ns;
		}
		if (!strcmp(s.agents[i].agent, "newcomer"))
			depth_n = s.agents[i].depth;
	}
	assert_int_equal(depth_v, 3);
	assert_int_equal(depth_n, 1);
	assert_true(oldest > 0 && oldest <= util_now_ns());
	bus_stats_release(&s);
	/* consume one: the counter follows */
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "validator_agent", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_int_equal(bus_nack(c, &d, "boom", true, &err), 0);
	for (int spin = 0; spin < 50; spin++) {
		if (!bus_monitor_process(m))
			usleep(2000);
	}
	bus_monitor_stats(m, &s);
	for (size_t i = 0; i < s.nagents; i++)
		if (!strcmp(s.agents[i].agent, "validator_agent"))
			assert_int_equal(s.agents[i].depth, 2);
	assert_int_equal(s.dead_letter, 1);
	bus_stats_release(&s);
	bus_consumer_free(&c);
	bus_monitor_free(&m);
}

static void test_kill_delete_requeue(void **state)
{
	struct fx *f = *state;
	char *a = send_hb(f->bus, "research_agent_1", 1, PRIO_NORMAL);
	char *b = send_hb(f->bus, "research_agent_1", 2, PRIO_NORMAL);
	char *err = NULL;
	assert_int_equal(bus_kill(f->bus, a, "operator says no", &err), 0);
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, a, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_DEAD);
	assert_string_equal(e.reason, "killed");
	assert_string_equal(e.error, "operator says no");
	bus_entry_release(&e);
	/* requeue an edited version to another agent */
	struct msg *m = msg_new("operator", "validator_agent", MSG_HEARTBEAT, hb(77));
	util_strlcpy(m->id, a, sizeof(m->id));
	char *js = msg_to_json(m, true);
	assert_int_equal(bus_requeue(f->bus, a, js, strlen(js), &err), 0);
	free(js);
	msg_free(&m);
	assert_int_equal(bus_find(f->bus, a, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_INBOX);
	assert_string_equal(e.agent, "validator_agent");
	bus_entry_release(&e);
	/* invalid edits are refused and lose nothing */
	assert_int_equal(bus_kill(f->bus, b, NULL, &err), 0);
	assert_int_equal(bus_requeue(f->bus, b, "{\"x\":1}", 7, &err), -1);
	assert_non_null(strstr(err, "edited message is invalid"));
	free(err);
	err = NULL;
	assert_int_equal(bus_find(f->bus, b, &e, &err), 0);
	assert_int_equal(e.queue, BUS_Q_DEAD);
	bus_entry_release(&e);
	assert_int_equal(bus_remove(f->bus, b, &err), 0);
	assert_int_equal(bus_find(f->bus, b, &e, &err), -1);
	free(err);
	free(a);
	free(b);
}

struct each_acc {
	size_t n;
	char ids[8][MSG_ID_MAX + 1];
	char reasons[8][32];
};

static void each_take(void *ctx, const struct bus_entry *e)
{
	struct each_acc *a = ctx;
	if (a->n < 8) {
		util_strlcpy(a->ids[a->n], e->message_id ? e->message_id : "", sizeof(a->ids[0]));
		util_strlcpy(a->reasons[a->n], e->reason ? e->reason : "", sizeof(a->reasons[0]));
	}
	a->n++;
}

static size_t index_lines(const char *dir)
{
	char *p = xasprintf("%s/messages/dead-letter/.index", dir), *buf = NULL;
	size_t len = 0, n = 0;
	if (util_read_file(p, 1 << 24, &buf, &len, NULL) == 0)
		for (size_t i = 0; i < len; i++)
			n += buf[i] == '\n';
	free(buf);
	free(p);
	return n;
}

/* The dead-letter index answers listings without the sidecars; lines that
 * name a file no longer there (or another inode) count for nothing; a
 * garbled index or a missing one costs sidecar reads and is rewritten. */
static void test_dead_letter_index(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	char *a = send_hb(f->bus, "research_agent_1", 1, PRIO_NORMAL);
	char *b = send_hb(f->bus, "research_agent_2", 2, PRIO_NORMAL);
	assert_int_equal(bus_kill(f->bus, a, "first reason", &err), 0);
	assert_int_equal(bus_kill(f->bus, b, "second reason", &err), 0);
	assert_int_equal(index_lines(f->dir), 2);
	/* the sidecars gone: the listing still knows why from the index */
	struct bus_entry e;
	assert_int_equal(bus_find(f->bus, a, &e, &err), 0);
	char *sc = xasprintf("%.*s.reason.json", (int)(strlen(e.path) - 5), e.path);
	char *sc_keep = xasprintf("%s/messages/dead-letter/.sidecar-kept", f->dir);
	assert_int_equal(rename(sc, sc_keep), 0);
	bus_entry_release(&e);
	struct bus_entry *v;
	size_t n;
	assert_int_equal(bus_list(f->bus, BUS_Q_DEAD, NULL, true, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(v[i].reason, "killed");
		assert_string_equal(v[i].from, "operator");
		assert_string_equal(v[i].type, "heartbeat");
		assert_string_equal(v[i].error, !strcmp(v[i].message_id, a) ? "first reason" :
					       "second reason");
	}
	bus_entries_free(v, n);
	assert_int_equal(rename(sc_keep, sc), 0);
	/* retried then killed again under the same name: the newer line counts */
	assert_int_equal(bus_retry(f->bus, a, NULL, &err), 0);
	assert_int_equal(bus_kill(f->bus, a, "third reason", &err), 0);
	struct each_acc acc = { 0 };
	assert_int_equal(bus_each_dead(f->bus, each_take, &acc, &err), 0);
	assert_int_equal(acc.n, 2);
	assert_int_equal(bus_find(f->bus, a, &e, &err), 0);
	assert_string_equal(e.error, "third reason");
	bus_entry_release(&e);
	/* a replaced file (another inode) is read from its sidecar */
	assert_int_equal(bus_find(f->bus, b, &e, &err), 0);
	char *tmp = xasprintf("%s.copy", e.path);
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(util_read_file(e.path, 1 << 20, &buf, &len, NULL), 0);
	assert_int_equal(util_write_file_atomic(tmp, buf, len, false, NULL), 0);
	assert_int_equal(rename(tmp, e.path), 0);
	free(buf);
	free(tmp);
	char *side = xasprintf("%.*s.reason.json", (int)(strlen(e.path) - 5), e.path);
	const char *sj = "{\"reason\":\"expired\",\"error\":\"from the sidecar\","
			 "\"from\":\"operator\",\"type\":\"heartbeat\"}";
	assert_int_equal(util_write_file_atomic(side, sj, strlen(sj), false, NULL), 0);
	free(side);
	bus_entry_release(&e);
	assert_int_equal(bus_list(f->bus, BUS_Q_DEAD, NULL, true, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].message_id, b))
			assert_string_equal(v[i].error, "from the sidecar");
	bus_entries_free(v, n);
	/* that listing rewrote the index: one line per dead letter */
	assert_int_equal(index_lines(f->dir), 2);
	/* a garbled index is ignored line by line, then rewritten */
	char *ip = xasprintf("%s/messages/dead-letter/.index", f->dir);
	const char *junk = "DLX1\tnot a number\nrandom\tgarbage\n\n\tDLX1\n";
	assert_int_equal(util_write_file_atomic(ip, junk, strlen(junk), false, NULL), 0);
	memset(&acc, 0, sizeof(acc));
	assert_int_equal(bus_each_dead(f->bus, each_take, &acc, &err), 0);
	assert_int_equal(acc.n, 2);
	for (size_t i = 0; i < 2; i++)
		assert_string_equal(acc.reasons[i], !strcmp(acc.ids[i], b) ? "expired" : "killed");
	assert_int_equal(index_lines(f->dir), 2);
	/* no index at all (an older data directory): the same, and rebuilt */
	assert_int_equal(unlink(ip), 0);
	assert_int_equal(bus_list(f->bus, BUS_Q_DEAD, NULL, true, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	bus_entries_free(v, n);
	assert_int_equal(index_lines(f->dir), 2);
	/* removed dead letters leave lines behind that match nothing */
	assert_int_equal(bus_remove(f->bus, a, &err), 0);
	memset(&acc, 0, sizeof(acc));
	assert_int_equal(bus_each_dead(f->bus, each_take, &acc, &err), 0);
	assert_int_equal(acc.n, 1);
	assert_string_equal(acc.ids[0], b);
	free(ip);
	free(sc);
	free(sc_keep);
	free(a);
	free(b);
}

static void test_retry_to_other_agent_rewrites_to(void **state)
{
	struct fx *f = *state;
	char *id = send_hb(f->bus, "research_agent_1", 1, PRIO_HIGH);
	char *err = NULL;
	assert_int_equal(bus_kill(f->bus, id, NULL, &err), 0);
	assert_int_equal(bus_retry(f->bus, id, "research_agent_2", &err), 0);
	struct bus_consumer *c;
	assert_int_equal(bus_consumer_open(f->bus, "research_agent_2", &c, &err), 0);
	struct bus_delivery *d;
	assert_int_equal(bus_claim(c, &d, &err), 1);
	assert_string_equal(d->msg->id, id);
	assert_string_equal(d->msg->to, "research_agent_2");
	assert_int_equal(d->msg->priority, PRIO_HIGH);
	assert_int_equal(bus_ack(c, &d, &err), 0);
	bus_consumer_free(&c);
	free(id);
}

static void test_fname_roundtrip(void **state)
{
	(void)state;
	struct bus_fname f = { .prio = 1, .t_ns = 1763786751123456789LL, .attempts = 2 };
	util_strlcpy(f.id, "pm_20261122_043911_0011223344556677", sizeof(f.id));
	char buf[300];
	bus_fname_format(&f, buf, sizeof(buf));
	assert_string_equal(buf, "1.1763786751123456789.pm_20261122_043911_0011223344556677.2.json");
	struct bus_fname g;
	assert_int_equal(bus_fname_parse(buf, &g), 0);
	assert_int_equal(g.prio, 1);
	assert_true(g.t_ns == f.t_ns);
	assert_string_equal(g.id, f.id);
	assert_int_equal(g.attempts, 2);
	assert_int_equal(bus_fname_parse("4.1763786751123456789.x.0.json", &g), -1);
	assert_int_equal(bus_fname_parse("1.17.x.0.json", &g), -1);
	assert_int_equal(bus_fname_parse("1.1763786751123456789.a/b.0.json", &g), -1);
	assert_int_equal(bus_fname_parse("pm_1.json", &g), -1);
	assert_false(bus_fname_wanted("x.tmp"));
	assert_false(bus_fname_wanted(".x.json"));
	assert_true(bus_fname_wanted("x.json"));
}

static void test_invalid_agent_refused(void **state)
{
	struct fx *f = *state;
	struct bus_consumer *c;
	char *err = NULL;
	assert_int_equal(bus_consumer_open(f->bus, "../etc", &c, &err), -1);
	assert_non_null(strstr(err, "invalid agent name"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fname_roundtrip),
		cmocka_unit_test_setup_teardown(test_send_claim_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_priority_then_age, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arrivals_seen_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_consumer_timeout_for_a_reactor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_grows_with_jitter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_then_dead_letter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permanent_failure_dead_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_not_delivered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_heartbeat_dropped_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_expired_refreshes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oldest_uses_mtime_of_foreign_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_monitor_counts_acks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inbox_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_large_refused_at_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files_dead_lettered_good_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broadcast_reaches_every_agent_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_consumer_claim_recovered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_monitor_counts_incrementally, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_delete_requeue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_letter_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_to_other_agent_rewrites_to, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_agent_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget_agent, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
