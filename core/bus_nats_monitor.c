/* The NATS transport's counts for the console (depth, oldest age,
 * processing, retrying, dead letters per inbox), read from the stream and
 * consumer information without listing a message. A monitor whose fd is
 * asked for (the console's) reads them on a thread of its own every
 * MESSAGE_POLL_INTERVAL and rings an eventfd when they changed, so that
 * the console's loop wakes for a change and never waits on the network;
 * one that is not (bus_stats) reads them once. */
#include "core/bus_nats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

struct bus_monitor {
	struct bus *bus; /* first, as bus.c expects */
	struct bus_stats snap;
	int64_t last_ns;
	/* the thread, once monitor_fd was asked for */
	int efd;                 /* -1 until then */
	pthread_t th;
	bool running;
	pthread_mutex_t mu;      /* guards next, has_next, stop */
	pthread_cond_t cv;       /* stop */
	struct bus_stats next;   /* the thread's newest counts, not yet taken */
	bool has_next;
	bool stop;
};

/* Messages of agent with failures recorded: those waiting out a backoff,
 * or handled again after one. From the subjects of the failure stream. */
static size_t failing(jsStreamInfo *att, const char *prefix, const char *agent)
{
	size_t n = 0, pl = strlen(prefix), al = strlen(agent);
	if (!att || !att->State.Subjects)
		return 0;
	for (int i = 0; i < att->State.Subjects->Count; i++) {
		const char *sj = att->State.Subjects->List[i].Subject;
		/* <P>.att.<agent>.<seq> */
		if (!strncmp(sj, prefix, pl) && !strncmp(sj + pl, ".att.", 5) &&
		    !strncmp(sj + pl + 5, agent, al) && sj[pl + 5 + al] == '.')
			n++;
	}
	return n;
}

static int stats_scan(struct bus *b, struct bus_stats *out, char **err)
{
	struct natsbus *nb = NB(b);
	memset(out, 0, sizeof(*out));
	char **agents;
	size_t na;
	if (nats_agents(b, &agents, &na, err) < 0)
		return -1;
	char attn[NATS_NAME_MAX], filt[NATS_NAME_MAX];
	snprintf(attn, sizeof(attn), "%s_att", nb->prefix);
	snprintf(filt, sizeof(filt), "%s.att.>", nb->prefix);
	jsOptions o;
	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = filt;
	/* Each read asked again through an election (nats_stream_info...);
	 * one that still fails fails the counts: zeros would read as
	 * inboxes emptied. */
	jsStreamInfo *att = NULL;
	jsErrCode jerr = 0;
	natsStatus s = nats_stream_info(nb, attn, &o, &att, &jerr);
	out->agents = xcalloc(na ? na : 1, sizeof(*out->agents));
	if (s != NATS_OK && s != NATS_NOT_FOUND)
		nats_fail(nb, err, s, jerr, "cannot read the NATS stream %s", attn);
	for (size_t i = 0; i < na && (s == NATS_OK || s == NATS_NOT_FOUND); i++) {
		struct bus_agent_stats *a = &out->agents[out->nagents++];
		util_strlcpy(a->agent, agents[i], sizeof(a->agent));
		char stream[NATS_NAME_MAX];
		nats_stream_name(nb, agents[i], stream, sizeof(stream));
		jsConsumerInfoList *cl = NULL;
		size_t ack = 0;
		s = nats_consumers(nb, stream, &cl, &jerr);
		for (int k = 0; s == NATS_OK && cl && k < cl->Count; k++) {
			a->depth += (size_t)cl->List[k]->NumPending;
			ack += (size_t)cl->List[k]->NumAckPending;
		}
		jsConsumerInfoList_Destroy(cl);
		if (s != NATS_OK && s != NATS_NOT_FOUND) {
			nats_fail(nb, err, s, jerr, "cannot read the consumers of %s", stream);
			break;
		}
		size_t f = failing(att, nb->prefix, agents[i]);
		a->retry = f < ack ? f : ack;
		a->processing = ack - a->retry;
		if (a->depth) {
			jsStreamInfo *si = NULL;
			s = nats_stream_info(nb, stream, NULL, &si, &jerr);
			if (s == NATS_OK)
				a->oldest_ns = si->State.FirstTime;
			jsStreamInfo_Destroy(si);
			if (s != NATS_OK && s != NATS_NOT_FOUND) {
				nats_fail(nb, err, s, jerr, "cannot read the NATS stream %s", stream);
				break;
			}
		}
		out->processing += a->processing;
		out->retry += a->retry;
	}
	jsStreamInfo_Destroy(att);
	for (size_t i = 0; i < na; i++)
		free(agents[i]);
	free(agents);
	if (s != NATS_OK && s != NATS_NOT_FOUND) {
		bus_stats_release(out);
		return -1;
	}
	char dlq[NATS_NAME_MAX];
	nats_dlq_stream(nb, dlq, sizeof(dlq));
	jsStreamInfo *si = NULL;
	s = nats_stream_info(nb, dlq, NULL, &si, &jerr);
	if (s != NATS_OK) {
		bus_stats_release(out);
		return nats_fail(nb, err, s, jerr, "cannot count the dead letters");
	}
	out->dead_letter = (size_t)si->State.Msgs;
	out->dead_gen = si->State.LastSeq * 1000003u + (si->State.LastSeq - si->State.Msgs);
	jsStreamInfo_Destroy(si);
	char drop[NATS_NAME_MAX];
	nats_drop_stream(nb, drop, sizeof(drop));
	s = nats_stream_info(nb, drop, NULL, &si, &jerr);
	if (s == NATS_OK)
		out->expired_dropped = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	if (s != NATS_OK && s != NATS_NOT_FOUND) {
		bus_stats_release(out);
		return nats_fail(nb, err, s, jerr, "cannot count the dropped messages");
	}
	return 0;
}

static bool stats_same(const struct bus_stats *a, const struct bus_stats *b)
{
	return a->nagents == b->nagents && a->processing == b->processing &&
	       a->retry == b->retry && a->dead_letter == b->dead_letter &&
	       a->expired_dropped == b->expired_dropped && a->dead_gen == b->dead_gen &&
	       (!a->nagents || !memcmp(a->agents, b->agents, a->nagents * sizeof(*a->agents)));
}

static void stats_copy(struct bus_stats *out, const struct bus_stats *in)
{
	*out = *in;
	out->agents = xcalloc(in->nagents ? in->nagents : 1, sizeof(*out->agents));
	if (in->nagents)
		memcpy(out->agents, in->agents, in->nagents * sizeof(*out->agents));
}

int nats_monitor_open(struct bus *b, struct bus_monitor **out, char **err)
{
	struct bus_monitor *m = xcalloc(1, sizeof(*m));
	m->bus = b;
	m->efd = -1;
	if (stats_scan(b, &m->snap, err) < 0) {
		free(m);
		return -1;
	}
	m->last_ns = util_mono_ns();
	*out = m;
	return 0;
}

/* The thread: the counts every poll interval; a change is kept in next
 * (replacing one not taken yet) and rings efd. It compares with what it
 * read last, so that a change is rung once. */
static void *monitor_thread(void *arg)
{
	struct bus_monitor *m = arg;
	struct bus_stats last;
	pthread_mutex_lock(&m->mu);
	stats_copy(&last, &m->snap);
	pthread_mutex_unlock(&m->mu);
	int64_t every_ns = (int64_t)(m->bus->cfg.poll_interval_s * 1e9);
	if (every_ns < 50 * 1000000LL)
		every_ns = 50 * 1000000LL;
	for (;;) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		int64_t ns = until.tv_nsec + every_ns;
		until.tv_sec += (time_t)(ns / 1000000000LL);
		until.tv_nsec = (long)(ns % 1000000000LL);
		pthread_mutex_lock(&m->mu);
		while (!m->stop && pthread_cond_timedwait(&m->cv, &m->mu, &until) != ETIMEDOUT)
			;
		bool stop = m->stop;
		pthread_mutex_unlock(&m->mu);
		if (stop)
			break;
		struct bus_stats s;
		if (stats_scan(m->bus, &s, NULL) < 0)
			continue; /* the server away: the last counts stand */
		if (stats_same(&s, &last)) {
			bus_stats_release(&s);
			continue;
		}
		bus_stats_release(&last);
		stats_copy(&last, &s);
		pthread_mutex_lock(&m->mu);
		bus_stats_release(&m->next);
		m->next = s;
		m->has_next = true;
		pthread_mutex_unlock(&m->mu);
		uint64_t one = 1;
		if (write(m->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			break;
	}
	bus_stats_release(&last);
	return NULL;
}

void nats_monitor_free(struct bus_monitor *m)
{
	if (m->running) {
		pthread_mutex_lock(&m->mu);
		m->stop = true;
		pthread_cond_signal(&m->cv);
		pthread_mutex_unlock(&m->mu);
		pthread_join(m->th, NULL);
	}
	if (m->efd >= 0) {
		close(m->efd);
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
	}
	bus_stats_release(&m->next);
	bus_stats_release(&m->snap);
	free(m);
}

/* Starts the thread on the first call; -1 (polled by monitor_process at
 * the poll interval) when it cannot. */
int nats_monitor_fd(struct bus_monitor *m)
{
	if (m->efd >= 0 || m->running)
		return m->efd;
	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->efd < 0)
		return -1;
	pthread_mutex_init(&m->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&m->th, NULL, monitor_thread, m) != 0) {
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
		close(m->efd);
		m->efd = -1;
		return -1;
	}
	m->running = true;
	return m->efd;
}

int nats_monitor_process(struct bus_monitor *m)
{
	if (m->running) {
		uint64_t v;
		while (read(m->efd, &v, sizeof(v)) > 0)
			;
		pthread_mutex_lock(&m->mu);
		bool got = m->has_next;
		if (got) {
			bus_stats_release(&m->snap);
			m->snap = m->next;
			memset(&m->next, 0, sizeof(m->next));
			m->has_next = false;
		}
		pthread_mutex_unlock(&m->mu);
		return got;
	}
	if (util_mono_ns() - m->last_ns <
	    (int64_t)(m->bus->cfg.poll_interval_s * 1e9))
		return 0;
	struct bus_stats s;
	m->last_ns = util_mono_ns();
	if (stats_scan(m->bus, &s, NULL) < 0)
		return 0;
	bool same = stats_same(&s, &m->snap);
	bus_stats_release(&m->snap);
	m->snap = s;
	return !same;
}

void nats_monitor_stats(struct bus_monitor *m, struct bus_stats *out)
{
	stats_copy(out, &m->snap);
}
