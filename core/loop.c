/* The reactor: file events and timers on poll(2) (see loop.h). */
#include "core/loop.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/util.h"

#include "core/banned.h"

struct loop_fd {
	int mask;            /* LOOP_READ|LOOP_WRITE watched; 0: free */
	uint64_t gen;        /* changes whenever the slot is emptied or filled */
	loop_fd_fn *rfn, *wfn;
	void *rctx, *wctx;
};

struct loop_timer {
	int64_t id;
	int64_t when_ns;     /* CLOCK_MONOTONIC */
	loop_timer_fn *fn;
	void *ctx;
	uint64_t pass;       /* the timer pass it last ran in */
	bool deleted;
};

struct loop {
	struct loop_fd *fds; /* indexed by fd */
	size_t fds_cap;
	int maxfd;           /* highest watched fd, -1: none */
	size_t nwatched;
	struct pollfd *pfd;  /* one turn's poll set: [0] is wake_fd */
	uint64_t *pgen;      /* each entry's loop_fd.gen when the set was built */
	size_t pcap;
	struct loop_timer *timers;
	size_t ntimers, tcap;
	int64_t next_id;
	uint64_t pass;
	bool in_timers;      /* indices into timers[] must stay put */
	loop_hook_fn *before;
	void *before_ctx;
	int wake_fd;
	atomic_bool stop;
};

struct loop *loop_new(char **err)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fd < 0) {
		err_set(err, "loop: eventfd: %s", strerror(errno));
		return NULL;
	}
	struct loop *l = xcalloc(1, sizeof(*l));
	l->maxfd = -1;
	l->next_id = 1;
	l->wake_fd = fd;
	atomic_init(&l->stop, false);
	return l;
}

void loop_free(struct loop **lp)
{
	struct loop *l = *lp;
	if (!l)
		return;
	close(l->wake_fd);
	free(l->fds);
	free(l->pfd);
	free(l->pgen);
	free(l->timers);
	free(l);
	*lp = NULL;
}

/* ---- file events ---------------------------------------------------------------- */

int loop_add_fd(struct loop *l, int fd, int mask, loop_fd_fn *fn, void *ctx, char **err)
{
	if (fd < 0)
		return err_set(err, "loop: fd %d: not a descriptor", fd);
	if (!(mask & (LOOP_READ | LOOP_WRITE)) || (mask & ~(LOOP_READ | LOOP_WRITE)))
		return err_set(err, "loop: fd %d: mask %#x: LOOP_READ, LOOP_WRITE or both", fd,
			       (unsigned)mask);
	if (!fn)
		return err_set(err, "loop: fd %d: no callback", fd);
	if ((size_t)fd >= l->fds_cap) {
		size_t cap = l->fds_cap ? l->fds_cap : 16;
		while (cap <= (size_t)fd)
			cap *= 2;
		l->fds = xrealloc(l->fds, cap * sizeof(*l->fds));
		memset(l->fds + l->fds_cap, 0, (cap - l->fds_cap) * sizeof(*l->fds));
		l->fds_cap = cap;
	}
	struct loop_fd *e = &l->fds[fd];
	if (!e->mask) {
		e->gen++;
		l->nwatched++;
	}
	e->mask |= mask;
	if (mask & LOOP_READ) {
		e->rfn = fn;
		e->rctx = ctx;
	}
	if (mask & LOOP_WRITE) {
		e->wfn = fn;
		e->wctx = ctx;
	}
	if (fd > l->maxfd)
		l->maxfd = fd;
	return 0;
}

void loop_del_fd(struct loop *l, int fd, int mask)
{
	if (fd < 0 || fd > l->maxfd || !l->fds[fd].mask)
		return;
	struct loop_fd *e = &l->fds[fd];
	e->mask &= ~mask;
	if (!(e->mask & LOOP_READ))
		e->rfn = NULL, e->rctx = NULL;
	if (!(e->mask & LOOP_WRITE))
		e->wfn = NULL, e->wctx = NULL;
	if (e->mask)
		return;
	e->gen++;
	l->nwatched--;
	while (l->maxfd >= 0 && !l->fds[l->maxfd].mask)
		l->maxfd--;
}

int loop_fd_mask(const struct loop *l, int fd)
{
	return fd >= 0 && fd <= l->maxfd ? l->fds[fd].mask : 0;
}

/* ---- timers ----------------------------------------------------------------------- */

int64_t loop_add_timer(struct loop *l, int64_t delay_ms, loop_timer_fn *fn, void *ctx,
		       char **err)
{
	if (delay_ms < 0 || delay_ms > INT64_MAX / 1000000 / 2)
		return err_set(err, "loop: timer delay %lld ms: out of range", (long long)delay_ms);
	if (!fn)
		return err_set(err, "loop: timer without a callback");
	if (l->ntimers == l->tcap) {
		l->tcap = l->tcap ? l->tcap * 2 : 8;
		l->timers = xrealloc(l->timers, l->tcap * sizeof(*l->timers));
	}
	struct loop_timer *t = &l->timers[l->ntimers++];
	*t = (struct loop_timer){ .id = l->next_id++,
				  .when_ns = util_mono_ns() + delay_ms * 1000000,
				  .fn = fn, .ctx = ctx, .pass = l->pass };
	return t->id;
}

static void timers_sweep(struct loop *l)
{
	size_t j = 0;
	for (size_t i = 0; i < l->ntimers; i++)
		if (!l->timers[i].deleted)
			l->timers[j++] = l->timers[i];
	l->ntimers = j;
}

int loop_del_timer(struct loop *l, int64_t id)
{
	for (size_t i = 0; i < l->ntimers; i++) {
		if (l->timers[i].id == id && !l->timers[i].deleted) {
			l->timers[i].deleted = true;
			if (!l->in_timers)
				timers_sweep(l);
			return 0;
		}
	}
	return -1;
}

/* Milliseconds until the nearest timer (rounded up), -1 when there is none. */
static int nearest_timer_ms(const struct loop *l, int64_t now)
{
	int64_t best = -1;
	for (size_t i = 0; i < l->ntimers; i++) {
		const struct loop_timer *t = &l->timers[i];
		if (t->deleted)
			continue;
		int64_t d = t->when_ns <= now ? 0 : (t->when_ns - now + 999999) / 1000000;
		if (best < 0 || d < best)
			best = d;
	}
	return best > INT_MAX ? INT_MAX : (int)best;
}

/* Runs the timers due at the start of the pass, earliest first, each at
 * most once, none added after max_id. */
static int timers_run(struct loop *l, int64_t max_id)
{
	int64_t now = util_mono_ns();
	uint64_t pass = ++l->pass;
	int called = 0;
	l->in_timers = true;
	while (!atomic_load(&l->stop)) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < l->ntimers; i++) {
			const struct loop_timer *t = &l->timers[i];
			if (t->deleted || t->id > max_id || t->pass == pass || t->when_ns > now)
				continue;
			if (best == SIZE_MAX || t->when_ns < l->timers[best].when_ns ||
			    (t->when_ns == l->timers[best].when_ns && t->id < l->timers[best].id))
				best = i;
		}
		if (best == SIZE_MAX)
			break;
		/* Indices stay (no sweep while in_timers); the array may move. */
		l->timers[best].pass = pass;
		int64_t next = l->timers[best].fn(l, l->timers[best].id, l->timers[best].ctx);
		called++;
		struct loop_timer *t = &l->timers[best];
		if (t->deleted)
			continue;
		if (next < 0 || next > INT64_MAX / 1000000 / 2)
			t->deleted = true;
		else
			t->when_ns = util_mono_ns() + next * 1000000;
	}
	l->in_timers = false;
	timers_sweep(l);
	return called;
}

/* ---- the turn --------------------------------------------------------------------- */

static void wake_drain(struct loop *l)
{
	uint64_t v;
	while (read(l->wake_fd, &v, sizeof(v)) > 0)
		;
}

/* The poll set: the wake fd, then every watched fd in order. */
static nfds_t pollset_build(struct loop *l)
{
	size_t need = l->nwatched + 1;
	if (need > l->pcap) {
		l->pcap = need * 2;
		l->pfd = xrealloc(l->pfd, l->pcap * sizeof(*l->pfd));
		l->pgen = xrealloc(l->pgen, l->pcap * sizeof(*l->pgen));
	}
	size_t n = 0;
	l->pfd[n] = (struct pollfd){ .fd = l->wake_fd, .events = POLLIN };
	l->pgen[n++] = 0;
	for (int fd = 0; fd <= l->maxfd; fd++) {
		const struct loop_fd *e = &l->fds[fd];
		if (!e->mask)
			continue;
		short ev = 0;
		if (e->mask & LOOP_READ)
			ev |= POLLIN;
		if (e->mask & LOOP_WRITE)
			ev |= POLLOUT;
		l->pfd[n] = (struct pollfd){ .fd = fd, .events = ev };
		l->pgen[n++] = e->gen;
	}
	return (nfds_t)n;
}

/* Calls the callbacks of one ready fd; returns how many. The entry is
 * looked up again after each call: a callback may remove (or replace) it,
 * and adding fds may move the table. */
static int fd_dispatch(struct loop *l, int fd, short rev, uint64_t gen)
{
	int err = rev & (POLLERR | POLLHUP | POLLNVAL) ? LOOP_ERROR : 0;
	bool rd = err || (rev & POLLIN), wr = err || (rev & POLLOUT);
	int called = 0;
	const struct loop_fd *e = &l->fds[fd];
	if (rd && (e->mask & LOOP_READ)) {
		int m = LOOP_READ | err;
		/* One callback for both: called once with both. */
		if (wr && (e->mask & LOOP_WRITE) && e->wfn == e->rfn && e->wctx == e->rctx) {
			m |= LOOP_WRITE;
			wr = false;
		}
		e->rfn(l, fd, m, e->rctx);
		called++;
		if (atomic_load(&l->stop) || fd > l->maxfd || l->fds[fd].gen != gen)
			return called;
		e = &l->fds[fd];
	}
	if (wr && (e->mask & LOOP_WRITE)) {
		e->wfn(l, fd, LOOP_WRITE | err, e->wctx);
		called++;
	}
	return called;
}

int loop_run_once(struct loop *l, int timeout_ms, char **err)
{
	if (l->before)
		l->before(l, l->before_ctx);
	if (atomic_load(&l->stop))
		return 0;
	int64_t max_id = l->next_id - 1;
	int t = nearest_timer_ms(l, util_mono_ns());
	if (t < 0 || (timeout_ms >= 0 && timeout_ms < t))
		t = timeout_ms < 0 ? -1 : timeout_ms;
	nfds_t n = pollset_build(l);
	int k = poll(l->pfd, n, t);
	if (k < 0) {
		if (errno == EINTR)
			return 0;
		return err_set(err, "loop: poll: %s", strerror(errno));
	}
	int called = 0;
	for (nfds_t i = 0; k > 0 && i < n && !atomic_load(&l->stop); i++) {
		short rev = l->pfd[i].revents;
		if (!rev)
			continue;
		k--;
		if (i == 0) {
			wake_drain(l);
			continue;
		}
		int fd = l->pfd[i].fd;
		if (fd > l->maxfd || l->fds[fd].gen != l->pgen[i])
			continue; /* removed (or replaced) by an earlier callback */
		called += fd_dispatch(l, fd, rev, l->pgen[i]);
	}
	if (!atomic_load(&l->stop))
		called += timers_run(l, max_id);
	return called;
}

int loop_run(struct loop *l, char **err)
{
	while (!atomic_load(&l->stop))
		if (loop_run_once(l, -1, err) < 0)
			return -1;
	atomic_store(&l->stop, false);
	return 0;
}

void loop_set_before_sleep(struct loop *l, loop_hook_fn *fn, void *ctx)
{
	l->before = fn;
	l->before_ctx = ctx;
}

void loop_stop(struct loop *l)
{
	atomic_store(&l->stop, true);
	loop_wake(l);
}

bool loop_stopped(const struct loop *l)
{
	return atomic_load(&l->stop);
}

void loop_wake(struct loop *l)
{
	uint64_t one = 1;
	ssize_t r = write(l->wake_fd, &one, sizeof(one));
	(void)r; /* full (EAGAIN): it is awake already */
}
