/* The streams of madf serve's conversations: each reads the conversation's
 * events file from its own place and sends whole SSE events
 * ("data: {...}\n", then "id: N\n" when asked, then a blank line), so that
 * the seed's client, which parses each chunk's blocks, gets every event
 * whole. Nothing is queued in memory for a stream: a client that reads
 * slowly leaves the events in the file, and one that comes back reads
 * them from there. */
#include "server/conv_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

#define BATCH 256 /* events sent by one call of the reader at most */

struct conv_stream {
	struct conv *c;
	int rfd;
	long next;         /* the seq of the next event to send */
	bool ids;
	bool hello;        /* "retry:" still to send */
	uint64_t piece;    /* bytes of event `next` already sent (one too big for a chunk) */
	long sent;         /* events sent */
	uint64_t bytes;    /* bytes sent */
};

struct conv_stream *conv_stream_new(struct conv *c, long last_id, bool ids, bool hello)
{
	struct conv_stream *s = xcalloc(1, sizeof(*s));
	s->c = c;
	s->next = last_id + 1;
	s->ids = ids;
	s->hello = hello;
	s->rfd = open(c->events_path, O_RDONLY | O_CLOEXEC);
	pthread_mutex_lock(&c->mu);
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
 * bytes) as it goes on the wire into out. */
static int wire_copy(const struct conv_stream *s, long seq, int64_t off, int64_t len,
		     uint64_t from, size_t n, char *out)
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
			if (pread_all(s->rfd, out, k, off + (int64_t)in) < 0)
				return -1;
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
		memcpy(buf, retry, sizeof(retry) - 1);
		return (ssize_t)(sizeof(retry) - 1);
	}
	if (s->rfd < 0)
		return -2; /* MHD_CONTENT_READER_END_WITH_ERROR */
	pthread_mutex_lock(&c->mu);
	if (s->next > c->seq && !c->finished) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += c->ping_ms / 1000;
		ts.tv_nsec += (c->ping_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		int w = 0;
		while (s->next > c->seq && !c->finished && w != ETIMEDOUT)
			w = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	/* The events to send now: their lines' places, copied under the lock. */
	int64_t off[BATCH + 1];
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
		total += w;
		n++;
	}
	bool finished = c->finished, broken = c->broken;
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
		if (wire_copy(s, seq, off[i], len, s->piece, take, buf + k) < 0) {
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
	s->bytes += k;
	return (ssize_t)k;
}

void conv_stream_free(void *cls)
{
	struct conv_stream *s = cls;
	struct conv *c = s->c;
	pthread_mutex_lock(&c->mu);
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
