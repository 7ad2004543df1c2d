/* The streams of madf serve's conversations: each reads the conversation's
 * events file from its own place and sends whole SSE events
 * ("data: {...}\n", then "id: N\n" when asked, then a blank line), so that
 * the seed's client, which parses each chunk's blocks, gets every event
 * whole. Nothing is queued in memory for a stream: a client that reads
 * slowly leaves the events in the file, and one that comes back reads
 * them from there.
 *
 * The server polls every connection from a couple of threads (epoll), so
 * a reader never blocks: with nothing to send it suspends its connection
 * (MHD_suspend_connection) and returns 0, and is resumed when its
 * conversation records an event (conv_streams_wake) or its keep-alive is
 * due (a timer thread over every suspended stream). One thread per
 * connection cost a thread creation per accept, about 18 KB of stack per
 * open stream, and with a thousand of them every lock they shared stalled
 * whenever its holder was preempted. */
#include "server/conv_priv.h"

#include <pthread.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <microhttpd.h>

#include "core/util.h"
#include "core/banned.h"

#define BATCH 256 /* events sent by one call of the reader at most */

struct conv_stream {
	struct conv *c;
	int rfd;
	long next;         /* the seq of the next event to send */
	bool ids;
	bool hello;        /* "retry:" still to send */
	bool hello_sent;   /* it was: a resume's stream */
	uint64_t piece;    /* bytes of event `next` already sent (one too big for a chunk) */
	long sent;         /* events sent */
	uint64_t bytes;    /* bytes sent */
	struct MHD_Connection *conn; /* its connection (conv_stream_attach) */
	atomic_bool suspended; /* whoever clears it resumes conn */
	int64_t ping_at;   /* monotonic ns: the next keep-alive */
	struct conv_stream *next_in_conv; /* c->streams, under c->mu */
	struct conv_stream *reg_prev, *reg_next; /* every attached stream, under reg_mu */
};

/* Every attached stream, for the keep-alive timer and the shutdown. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static struct conv_stream *reg;
static int64_t reg_deadline; /* when the timer wakes next (0: not waiting) */
static bool reg_stopping;   /* the server stops: nobody suspends again */

static void *timer_main(void *arg)
{
	pthread_setname_np(pthread_self(), "serve-timer"); /* top -H, /proc/PID/task/TID/comm */
	(void)arg;
	pthread_mutex_lock(&reg_mu);
	for (;;) {
		int64_t now = util_mono_ns(), next = now + 1000000000LL;
		for (struct conv_stream *s = reg; s; s = s->reg_next) {
			if (!atomic_load(&s->suspended))
				continue;
			if (s->ping_at <= now) {
				if (atomic_exchange(&s->suspended, false))
					MHD_resume_connection(s->conn);
			} else if (s->ping_at < next) {
				next = s->ping_at;
			}
		}
		reg_deadline = next;
		struct timespec ts = { (time_t)(next / 1000000000LL), (long)(next % 1000000000LL) };
		pthread_cond_timedwait(&reg_cv, &reg_mu, &ts);
	}
	return NULL;
}

static void timer_start(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reg_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, timer_main, NULL) != 0)
		abort(); /* no keep-alives, no disconnects seen: not a server */
	pthread_attr_destroy(&at);
}

void conv_stream_attach(struct conv_stream *s, struct MHD_Connection *conn)
{
	pthread_once(&reg_once, timer_start);
	s->conn = conn;
	pthread_mutex_lock(&reg_mu);
	s->reg_next = reg;
	if (reg)
		reg->reg_prev = s;
	reg = s;
	pthread_mutex_unlock(&reg_mu);
}

void conv_streams_wake(struct conv *c)
{
	for (struct conv_stream *s = c->streams; s; s = s->next_in_conv)
		if (atomic_exchange(&s->suspended, false))
			MHD_resume_connection(s->conn);
}

void conv_streams_stop(void)
{
	pthread_mutex_lock(&reg_mu);
	reg_stopping = true;
	for (struct conv_stream *s = reg; s; s = s->reg_next)
		if (atomic_exchange(&s->suspended, false))
			MHD_resume_connection(s->conn);
	pthread_mutex_unlock(&reg_mu);
}

/* Suspends s's connection until an event or its keep-alive (under c->mu).
 * False when the server stops (nothing is suspended then). */
static bool stream_suspend(struct conv_stream *s)
{
	pthread_mutex_lock(&reg_mu);
	bool ok = !reg_stopping;
	if (ok) {
		MHD_suspend_connection(s->conn);
		atomic_store(&s->suspended, true);
		if (!reg_deadline || s->ping_at < reg_deadline)
			pthread_cond_signal(&reg_cv);
	}
	pthread_mutex_unlock(&reg_mu);
	return ok;
}

struct conv_stream *conv_stream_new(struct conv *c, long last_id, bool ids, bool hello)
{
	struct conv_stream *s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->next = last_id + 1;
	s->ids = ids;
	s->hello = hello;
	s->rfd = -1; /* opened for the first event not kept in memory */
	atomic_init(&s->suspended, false);
	pthread_mutex_lock(&c->mu);
	s->next_in_conv = c->streams;
	c->streams = s;
	c->refs++;
	c->attached++;
	pthread_cond_broadcast(&c->cv); /* a grace timer sees it */
	pthread_mutex_unlock(&c->mu);
	return s;
}

static size_t digits(long n)
{
	size_t d = 1;
	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

/* The bytes an event of a line of len bytes (its newline included) takes
 * on the wire. */
static size_t wire_len(const struct conv_stream *s, long seq, int64_t len)
{
	return 6 + (size_t)len + (s->ids ? 4 + digits(seq) + 1 : 0) + 1;
}

static int pread_all(int fd, char *buf, size_t n, int64_t off)
{
	while (n) {
		ssize_t r = pread(fd, buf, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

/* Copies bytes [from, from + n) of the event seq (its line at off, len
 * bytes, in mem when it is kept in memory, else in the file) as it goes
 * on the wire into out. */
static int wire_copy(struct conv_stream *s, long seq, int64_t off, int64_t len,
		     const char *mem, uint64_t from, size_t n, char *out)
{
	char tail[32];
	int tl = s->ids ? snprintf(tail, sizeof(tail), "id: %ld\n\n", seq) :
			  snprintf(tail, sizeof(tail), "\n");
	while (n) {
		size_t k;
		if (from < 6) {
			k = 6 - (size_t)from < n ? 6 - (size_t)from : n;
			memcpy(out, "data: " + from, k);
		} else if (from < 6 + (uint64_t)len) {
			uint64_t in = from - 6;
			k = (size_t)((uint64_t)len - in) < n ? (size_t)((uint64_t)len - in) : n;
			if (mem) {
				memcpy(out, mem + in, k);
			} else {
				if (s->rfd < 0)
					s->rfd = open(s->c->events_path, O_RDONLY | O_CLOEXEC);
				if (s->rfd < 0 || pread_all(s->rfd, out, k, off + (int64_t)in) < 0)
					return -1;
			}
		} else {
			uint64_t in = from - 6 - (uint64_t)len;
			k = (size_t)((uint64_t)tl - in) < n ? (size_t)((uint64_t)tl - in) : n;
			memcpy(out, tail + in, k);
		}
		out += k;
		from += k;
		n -= k;
	}
	return 0;
}

ssize_t conv_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct conv_stream *s = cls;
	struct conv *c = s->c;
	if (s->hello) {
		static const char retry[] = "retry: 3000\n\n";
		if (max < sizeof(retry) - 1)
			return 0;
		s->hello = false;
		s->hello_sent = true;
		memcpy(buf, retry, sizeof(retry) - 1);
		return (ssize_t)(sizeof(retry) - 1);
	}
	int64_t now = util_mono_ns();
	pthread_mutex_lock(&c->mu);
	if (s->next > c->seq && !c->finished) {
		/* Nothing to send: wait suspended, unless the keep-alive is due. */
		if (!s->ping_at)
			s->ping_at = now + c->ping_ms * 1000000LL;
		if (s->ping_at > now) {
			bool ok = s->conn && stream_suspend(s);
			pthread_mutex_unlock(&c->mu);
			return ok ? 0 : -2; /* stopping: the client can resume */
		}
	}
	/* The events to send now: their lines' places, copied under the lock. */
	int64_t off[BATCH + 1];
	const char *mem[BATCH]; /* lines kept in memory (they never change) */
	long n = 0;
	size_t total = 0;
	while (n < BATCH && s->next + n <= c->seq) {
		long seq = s->next + n;
		int64_t a = seq > 1 ? c->ends[seq - 2] : 0, b = c->ends[seq - 1];
		size_t w = wire_len(s, seq, b - a);
		if (n && total + w > max)
			break;
		off[n] = a;
		off[n + 1] = b;
		mem[n] = seq <= c->nmem ? c->mem[seq - 1] : NULL;
		total += w;
		n++;
	}
	bool finished = c->finished, broken = c->broken;
	s->ping_at = now + c->ping_ms * 1000000LL;
	pthread_mutex_unlock(&c->mu);
	if (!n) {
		if (finished)
			return broken ? -2 : -1; /* MHD_CONTENT_READER_END_OF_STREAM */
		static const char ping[] = ": ping\n\n";
		size_t k = sizeof(ping) - 1 < max ? sizeof(ping) - 1 : max;
		memcpy(buf, ping, k);
		return (ssize_t)k;
	}
	size_t k = 0;
	for (long i = 0; i < n; i++) {
		long seq = s->next;
		int64_t len = off[i + 1] - off[i];
		size_t w = wire_len(s, seq, len);
		size_t take = w - (size_t)s->piece;
		if (take > max - k)
			take = max - k; /* only the first, alone over max: in pieces */
		if (wire_copy(s, seq, off[i], len, mem[i], s->piece, take, buf + k) < 0) {
			conv_log(c, "cannot read %s: %s", c->events_path, strerror(errno));
			return -2;
		}
		k += take;
		s->piece += take;
		if (s->piece < w)
			break;
		s->piece = 0;
		s->next++;
		s->sent++;
	}
	if (c->trace && !s->bytes && !s->hello_sent)
		conv_trace_mark(c, TR_SENT);
	s->bytes += k;
	return (ssize_t)k;
}

void conv_stream_mark(struct conv_stream *s, int m)
{
	conv_trace_mark(s->c, m);
}

void conv_stream_free(void *cls)
{
	struct conv_stream *s = cls;
	struct conv *c = s->c;
	if (s->conn) {
		pthread_mutex_lock(&reg_mu);
		if (s->reg_prev)
			s->reg_prev->reg_next = s->reg_next;
		else
			reg = s->reg_next;
		if (s->reg_next)
			s->reg_next->reg_prev = s->reg_prev;
		pthread_mutex_unlock(&reg_mu);
	}
	pthread_mutex_lock(&c->mu);
	for (struct conv_stream **p = &c->streams; *p; p = &(*p)->next_in_conv)
		if (*p == s) {
			*p = s->next_in_conv;
			break;
		}
	c->attached--;
	bool orphan = !c->attached && !c->finished && c->listed;
	unsigned gen = 0;
	if (orphan) {
		gen = ++c->detach_gen;
		c->refs++; /* the grace timer's */
	}
	bool whole = c->finished && s->next > c->seq;
	pthread_mutex_unlock(&c->mu);
	if (orphan)
		conv_log(c, "the client went away after %ld events: the conversation runs on; "
			    "it is cancelled unless a client resumes it within %ld s "
			    "(GET .../%s/events)", s->sent, c->grace_s, c->session);
	else if (c->verbose || !whole)
		conv_log(c, "a stream closed after %ld events (%llu bytes)%s", s->sent,
			 (unsigned long long)s->bytes, whole ? "" : " before the end");
	if (orphan)
		conv_last_detached(c, gen);
	if (s->rfd >= 0)
		close(s->rfd);
	free(s);
	conv_unref(c);
}

int conv_resume(const char *dir, const char *session, const char *user, long last_id,
		struct conv_stream **out, char **err)
{
	struct conv *c = conv_find_running(session, user);
	if (!c) {
		int r = convlog_open(dir, session, user, &c, err);
		if (r != 0)
			return r;
	}
	pthread_mutex_lock(&c->mu);
	bool done = c->finished && last_id >= c->seq;
	pthread_mutex_unlock(&c->mu);
	int r = 0;
	if (done)
		r = 2;
	else
		*out = conv_stream_new(c, last_id, true, true);
	conv_unref(c);
	return r;
}
