/* The NATS transport riding through a JetStream leader election: a call
 * that times out, finds no responders or is told the cluster cannot answer
 * now is asked again, with backoff, for at most MADF_NATS_ELECTION_S; the
 * reads and admin calls of listings, show, retry, delete and the console's
 * counts through the wrappers below. See core/bus_nats.h. */
#include "core/bus_nats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "core/banned.h"

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL
#define ELECTION_S_DEFAULT 20
#define ELECTION_S_MAX 3600
/* The backoff between two attempts: 100 ms, doubled up to 1 s, with
 * jitter (bus_backoff_ms: in [d/2, d]) so that the clients of one cluster
 * do not all ask again at the same moment. */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 1000

int nats_election_setup(struct natsbus *nb, char **err)
{
	const char *v = getenv("MADF_NATS_ELECTION_S");
	nb->election_ns = ELECTION_S_DEFAULT * NS_PER_S;
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	long s = strtol(v, &end, 10);
	if (errno || *end || s < 0 || s > ELECTION_S_MAX) {
		/* shown on a terminal: the value's control bytes stripped */
		char *clean = util_sanitize(v, strlen(v), false);
		err_set(err, "invalid MADF_NATS_ELECTION_S \"%s\": a whole number of seconds, "
			     "0 to %d (how long a NATS call that times out or finds no "
			     "responders is retried)", clean, ELECTION_S_MAX);
		free(clean);
		return -1;
	}
	nb->election_ns = (int64_t)s * NS_PER_S;
	return 0;
}

bool nats_transient(natsStatus s, jsErrCode jerr)
{
	/* 10008: "JetStream system temporarily unavailable" (no meta leader,
	 * or a stream or consumer without its leader); 10009: "JetStream
	 * cluster can not handle request" (asked of a node that is not, or no
	 * longer, the leader) */
	return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS ||
	       (s != NATS_OK && (jerr == 10008 || jerr == 10009));
}

int64_t nats_retry_until(const struct natsbus *nb)
{
	return util_mono_ns() + nb->election_ns;
}

bool nats_retry_wait(int64_t until, int attempt)
{
	int64_t left = until - util_mono_ns();
	if (left <= 0)
		return false;
	struct bus_config c = { .retry_base_ms = BACKOFF_FIRST_MS,
				.retry_max_ms = BACKOFF_MAX_MS };
	int64_t ns = bus_backoff_ms(&c, attempt + 1) * NS_PER_MS;
	if (ns > left)
		ns = left;
	struct timespec ts = { (time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return true;
}

bool nats_retry_again(natsStatus s, jsErrCode jerr, int64_t until, int attempt)
{
	return nats_transient(s, jerr) && nats_retry_wait(until, attempt);
}

natsStatus nats_stream_info(struct natsbus *nb, const char *stream, jsOptions *o,
			    jsStreamInfo **si, jsErrCode *jerr)
{
	int64_t until = nats_retry_until(nb);
	natsStatus s;
	for (int i = 0;; i++) {
		*si = NULL;
		*jerr = 0;
		s = js_GetStreamInfo(si, nb->js, stream, o, jerr);
		if (!nats_retry_again(s, *jerr, until, i))
			break;
		jsStreamInfo_Destroy(*si);
	}
	if (s == NATS_OK)
		return s;
	jsStreamInfo_Destroy(*si);
	*si = NULL;
	return s == NATS_NOT_FOUND || *jerr == 10059 ? NATS_NOT_FOUND : s;
}

natsStatus nats_consumer_info(struct natsbus *nb, const char *stream, const char *durable,
			      jsConsumerInfo **ci, jsErrCode *jerr)
{
	int64_t until = nats_retry_until(nb);
	natsStatus s;
	for (int i = 0;; i++) {
		*ci = NULL;
		*jerr = 0;
		s = js_GetConsumerInfo(ci, nb->js, stream, durable, NULL, jerr);
		if (!nats_retry_again(s, *jerr, until, i))
			break;
		jsConsumerInfo_Destroy(*ci);
	}
	if (s == NATS_OK)
		return s;
	jsConsumerInfo_Destroy(*ci);
	*ci = NULL;
	/* 10014: no such consumer; 10059: no such stream */
	return s == NATS_NOT_FOUND || *jerr == 10014 || *jerr == 10059 ? NATS_NOT_FOUND : s;
}

natsStatus nats_consumers(struct natsbus *nb, const char *stream, jsConsumerInfoList **cl,
			  jsErrCode *jerr)
{
	int64_t until = nats_retry_until(nb);
	natsStatus s;
	for (int i = 0;; i++) {
		*cl = NULL;
		*jerr = 0;
		s = js_Consumers(cl, nb->js, stream, NULL, jerr);
		if (!nats_retry_again(s, *jerr, until, i))
			break;
		jsConsumerInfoList_Destroy(*cl);
	}
	if (s == NATS_OK)
		return s;
	jsConsumerInfoList_Destroy(*cl);
	*cl = NULL;
	return s == NATS_NOT_FOUND || *jerr == 10059 ? NATS_NOT_FOUND : s;
}

natsStatus nats_direct_get(struct natsbus *nb, const char *stream, jsDirectGetMsgOptions *d,
			   natsMsg **m)
{
	int64_t until = nats_retry_until(nb);
	bool exists = false;
	natsStatus s;
	for (int i = 0;; i++) {
		*m = NULL;
		s = js_DirectGetMsg(m, nb->js, stream, NULL, d);
		/* NATS_NOT_FOUND: the stream's answer "no such message" (404) */
		if (s == NATS_OK || s == NATS_NOT_FOUND || !nats_transient(s, 0))
			break;
		natsMsg_Destroy(*m);
		*m = NULL;
		if (!exists) {
			/* A stream that does not exist answers no direct get (the
			 * request times out): asked once, that is an answer too.
			 * During an election its information is retried as well. */
			jsStreamInfo *si = NULL;
			jsErrCode jerr = 0;
			natsStatus t = js_GetStreamInfo(&si, nb->js, stream, NULL, &jerr);
			jsStreamInfo_Destroy(si);
			if (t == NATS_NOT_FOUND || jerr == 10059)
				return NATS_NOT_FOUND;
			exists = t == NATS_OK;
		}
		if (!nats_retry_wait(until, i))
			break;
	}
	return s;
}
