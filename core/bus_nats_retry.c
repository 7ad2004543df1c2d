/* The NATS transport riding through a JetStream leader election: a call
 * that times out or finds no responders is asked again, with backoff, for
 * at most MADF_NATS_ELECTION_S. See core/bus_nats.h. */
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
	/* 10008: "JetStream system temporarily unavailable" (no meta leader) */
	return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS || (s != NATS_OK && jerr == 10008);
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
