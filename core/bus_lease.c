/* Lease keeping. A handler may block its thread (and its reactor) for
 * longer than the lease (MADF_LEASE_S): the claim would then be given back
 * and the message delivered again while the first handler still works. So
 * every delivery bus_claim hands out is renewed (the transport's renew: a
 * claimed file's mtime on the file bus, an in-progress ack "+WPI" on NATS)
 * by one thread per bus, every third of the lease, until the delivery is
 * answered (ack, nack, giveback) or freed, but not past the lease's
 * maximum (MADF_LEASE_MAX_S): a handler that hangs would keep its message
 * for ever. Held that long, a claim is "capped": renewed no more (the bus's
 * on_lease_max is told), its lease runs out and the transport delivers it
 * again as for any lease that ran out; the late answer of its handler is
 * refused (bus_lease_end). A consumer that dies, or stops (SIGSTOP), renews
 * nothing: its claims come back after the lease.
 *
 * Locks: k->mu, then the transport's own (a renewal runs under k->mu, so
 * that its delivery is not answered, nor its consumer freed, meanwhile).
 * on_lease_max is called with k->mu released (it logs, and the log may
 * travel on this very bus), so its callee may take any lock but k->mu. The
 * thread is stopped and joined with k->mu released (bus_lease_stop): it
 * needs the lock to see the stop, and a call of on_lease_max under way
 * ends before the join returns. Whoever owns what on_lease_max_ctx points
 * to stops the keeper (bus_lease_stop) before freeing it. */
#include "core/bus_lease.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "core/banned.h"

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

struct bus_lease {
	struct bus_lease *next;
	struct bus_keeper *k;
	struct bus_consumer *c;
	struct bus_delivery *d;   /* the caller's: its ->lease points here */
	struct bus_delivery h;    /* copies of d's handles, for renewing */
	char *mid;                /* d's message id, for the warning */
	int64_t since_ns;         /* monotonic: when it was claimed */
	int64_t due_ns;           /* monotonic: the next renewal (or the cap) */
	bool capped;              /* held past the maximum: renewed no more */
};

struct bus_keeper {
	struct bus *b;
	pthread_mutex_t mu;       /* guards everything below, and is held
				     while a renewal is under way */
	pthread_cond_t cv;        /* on CLOCK_MONOTONIC */
	pthread_t thread;
	bool running, stop;
	struct bus_lease *list;
	size_t n;                 /* in the list */
	size_t ncapped;           /* of which capped */
	uint64_t renewed, failed, capped;
};

/* A third of the lease (at least 100 ms). */
static int64_t every_ns(const struct bus *b)
{
	int64_t ms = b->cfg.lease_s * 1000 / 3;
	return (ms < 100 ? 100 : ms) * NS_PER_MS;
}

/* When l is held too long (monotonic); INT64_MAX: never. */
static int64_t cap_at(const struct bus *b, const struct bus_lease *l)
{
	return b->cfg.lease_max_s > 0 ? l->since_ns + b->cfg.lease_max_s * NS_PER_S : INT64_MAX;
}

/* The next renewal of l from now, or its cap when that comes first. */
static int64_t next_due(const struct bus *b, const struct bus_lease *l, int64_t now)
{
	int64_t due = now + every_ns(b), cap = cap_at(b, l);
	return cap < due ? cap : due;
}

/* Held past the maximum (k->mu held): renewed no more; the warning goes
 * out with the lock released (the callback logs, which may take a while),
 * so the list may change meanwhile: the caller looks at it afresh. */
static void lease_cap(struct bus_keeper *k, struct bus_lease *l, int64_t now)
{
	l->capped = true;
	k->ncapped++;
	k->capped++;
	struct bus *b = k->b;
	if (!b->on_lease_max)
		return;
	char *agent = xstrdup(l->h.agent ? l->h.agent : "?");
	char *mid = xstrdup(l->mid ? l->mid : l->h.canon ? l->h.canon : l->h.name);
	int64_t held_ms = (now - l->since_ns) / NS_PER_MS;
	pthread_mutex_unlock(&k->mu);
	b->on_lease_max(b->on_lease_max_ctx, agent, mid, held_ms, b->cfg.lease_max_s);
	free(agent);
	free(mid);
	pthread_mutex_lock(&k->mu);
}

static void *keeper_main(void *p)
{
	pthread_setname_np(pthread_self(), "bus-lease"); /* top -H, /proc/PID/task/TID/comm */
	struct bus_keeper *k = p;
	pthread_mutex_lock(&k->mu);
	while (!k->stop) {
		int64_t now = util_mono_ns();
		struct bus_lease *next = NULL;
		for (struct bus_lease *l = k->list; l; l = l->next)
			if (!l->capped && (!next || l->due_ns < next->due_ns))
				next = l;
		if (!next) {
			pthread_cond_wait(&k->cv, &k->mu);
			continue;
		}
		if (next->due_ns > now) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int64_t at = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec +
				     (next->due_ns - now);
			ts.tv_sec = (time_t)(at / 1000000000LL);
			ts.tv_nsec = (long)(at % 1000000000LL);
			pthread_cond_timedwait(&k->cv, &k->mu, &ts);
			continue;
		}
		if (now >= cap_at(k->b, next)) {
			lease_cap(k, next, now);
			continue;
		}
		/* Under the lock: the delivery cannot be answered (nor its
		 * consumer freed) during its renewal. A failed renewal (the
		 * broker unreachable a moment) is tried again at the next turn;
		 * one whose claim is gone (given back after all) fails harmlessly
		 * until the handler answers. */
		char *err = NULL;
		if (k->b->t->renew(next->c, &next->h, &err) < 0)
			k->failed++;
		else
			k->renewed++;
		free(err);
		next->due_ns = next_due(k->b, next, util_mono_ns());
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

static struct bus_keeper *keeper_get(struct bus *b)
{
	/* b->keeper is set once, by the first claim, under this lock. */
	static pthread_mutex_t make = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&make);
	struct bus_keeper *k = b->keeper;
	if (!k) {
		k = xcalloc(1, sizeof(*k));
		k->b = b;
		pthread_mutex_init(&k->mu, NULL);
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&k->cv, &ca);
		pthread_condattr_destroy(&ca);
		b->keeper = k;
	}
	pthread_mutex_unlock(&make);
	return k;
}

void bus_lease_hold(struct bus *b, struct bus_consumer *c, struct bus_delivery *d)
{
	struct bus_keeper *k = keeper_get(b);
	struct bus_lease *l = xcalloc(1, sizeof(*l));
	l->k = k;
	l->c = c;
	l->d = d;
	l->h.name = xstrdup(d->name);
	l->h.canon = d->canon ? xstrdup(d->canon) : NULL;
	l->h.agent = d->agent ? xstrdup(d->agent) : NULL;
	l->h.attempts = d->attempts;
	l->mid = d->msg ? xstrdup(d->msg->id) : NULL;
	l->since_ns = util_mono_ns();
	l->due_ns = next_due(b, l, l->since_ns);
	pthread_mutex_lock(&k->mu);
	if (!k->running && !k->stop) {
		int e = pthread_create(&k->thread, NULL, keeper_main, k);
		/* Without a thread nothing renews: the lease runs as before. */
		k->running = e == 0;
	}
	/* The keeper waits for the earliest renewal due, never later than
	 * this one's (each is due a third of the lease after the last): it
	 * needs waking only when it waits for nothing (no lease, or only
	 * capped ones), or when this one's cap may come first (a maximum
	 * shorter than a third of the lease). */
	if (k->n == k->ncapped || l->due_ns < l->since_ns + every_ns(b))
		pthread_cond_signal(&k->cv);
	l->next = k->list;
	k->list = l;
	k->n++;
	d->lease = l;
	pthread_mutex_unlock(&k->mu);
}

static void lease_free(struct bus_lease *l)
{
	l->d->lease = NULL;
	free(l->h.name);
	free(l->h.canon);
	free(l->h.agent);
	free(l->mid);
	free(l);
}

/* Unlinks l (k->mu held). */
static void unlink_lease(struct bus_keeper *k, struct bus_lease *l)
{
	for (struct bus_lease **p = &k->list; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			k->n--;
			if (l->capped)
				k->ncapped--;
			return;
		}
}

void bus_lease_drop(struct bus_delivery *d)
{
	struct bus_lease *l = d ? d->lease : NULL;
	if (!l)
		return;
	struct bus_keeper *k = l->k;
	pthread_mutex_lock(&k->mu);
	unlink_lease(k, l);
	lease_free(l);
	pthread_mutex_unlock(&k->mu);
}

/* Why the handler of l lost it (k->mu held; caller frees). */
static char *lost_why(const struct bus_keeper *k, const struct bus_lease *l)
{
	return xasprintf("lost the claim on %s: its handler held it over the lease maximum "
			 "of %lld s (MADF_LEASE_MAX_S), so its lease was renewed no more and "
			 "the message is delivered again; this answer is refused",
			 l->mid ? l->mid : l->h.canon ? l->h.canon : l->h.name,
			 (long long)k->b->cfg.lease_max_s);
}

int bus_lease_end(struct bus_delivery *d, char **err)
{
	struct bus_lease *l = d ? d->lease : NULL;
	if (!l)
		return 0;
	struct bus_keeper *k = l->k;
	pthread_mutex_lock(&k->mu);
	int r = 0;
	if (l->capped) {
		r = -1;
		if (err)
			*err = lost_why(k, l);
	}
	unlink_lease(k, l);
	lease_free(l);
	pthread_mutex_unlock(&k->mu);
	return r;
}

void bus_lease_forget_consumer(struct bus *b, struct bus_consumer *c)
{
	struct bus_keeper *k = b->keeper;
	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	for (struct bus_lease **p = &k->list; *p;) {
		struct bus_lease *l = *p;
		if (l->c == c) {
			*p = l->next;
			k->n--;
			if (l->capped)
				k->ncapped--;
			lease_free(l);
		} else {
			p = &l->next;
		}
	}
	pthread_mutex_unlock(&k->mu);
}

void bus_lease_stop(struct bus *b)
{
	/* made if need be, stopped: a claim made later starts no thread */
	struct bus_keeper *k = keeper_get(b);
	pthread_mutex_lock(&k->mu);
	k->stop = true;
	pthread_cond_signal(&k->cv);
	bool running = k->running;
	k->running = false; /* joined once, below */
	pthread_mutex_unlock(&k->mu);
	if (running)
		pthread_join(k->thread, NULL);
}

void bus_lease_close(struct bus *b)
{
	struct bus_keeper *k = b->keeper;
	if (!k)
		return;
	bus_lease_stop(b);
	while (k->list) {
		struct bus_lease *l = k->list;
		k->list = l->next;
		lease_free(l);
	}
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	free(k);
	b->keeper = NULL;
}

size_t bus_lease_held(struct bus *b, uint64_t *renewed, uint64_t *failed)
{
	struct bus_keeper *k = b->keeper;
	if (renewed)
		*renewed = 0;
	if (failed)
		*failed = 0;
	if (!k)
		return 0;
	pthread_mutex_lock(&k->mu);
	size_t n = k->n - k->ncapped;
	if (renewed)
		*renewed = k->renewed;
	if (failed)
		*failed = k->failed;
	pthread_mutex_unlock(&k->mu);
	return n;
}

int bus_lease_renew(struct bus_consumer *c, const struct bus_delivery *d, char **err)
{
	/* The consumer's bus: see bus.c (every consumer starts with it). */
	struct bus *b = *(struct bus **)(void *)c;
	struct bus_lease *l = d->lease;
	if (!l)
		return b->t->renew(c, d, err);
	struct bus_keeper *k = l->k;
	pthread_mutex_lock(&k->mu);
	if (l->capped) {
		if (err)
			*err = lost_why(k, l);
		pthread_mutex_unlock(&k->mu);
		return -1;
	}
	int r = b->t->renew(c, &l->h, err);
	if (r == 0) {
		k->renewed++;
		l->due_ns = next_due(b, l, util_mono_ns());
	} else {
		k->failed++;
	}
	pthread_mutex_unlock(&k->mu);
	return r;
}

uint64_t bus_lease_capped(struct bus *b)
{
	struct bus_keeper *k = b->keeper;
	if (!k)
		return 0;
	pthread_mutex_lock(&k->mu);
	uint64_t n = k->capped;
	pthread_mutex_unlock(&k->mu);
	return n;
}
