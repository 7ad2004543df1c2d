/* The NATS transport's log streams: each agent's structured log lines
 * (core/log.c) published to <P>_log_<A> (subjects <P>.log.<A>.<category>,
 * limits retention), so that a console or the learning system on any host
 * reads every agent's log (core/bus_log.c keeps a local copy of them). */
#include "core/bus_nats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

#define LOG_MAX_AGE_DAYS 90          /* the longest local retention (errors) */
#define LOG_MAX_MSGS 1000000         /* lines kept per agent */
#define LOG_MAX_LINE (1024 * 1024)   /* longer lines are not published */

static void log_stream(const struct natsbus *nb, const char *agent, char *buf, size_t size)
{
	snprintf(buf, size, "%s_log_%s", nb->prefix, agent);
}

/* Creates agent's log stream once per bus. */
static int log_ensure(struct bus *b, const char *agent, char **err)
{
	struct natsbus *nb = NB(b);
	pthread_mutex_lock(&nb->lock);
	for (size_t i = 0; i < nb->nlogs; i++)
		if (!strcmp(nb->logs[i], agent)) {
			pthread_mutex_unlock(&nb->lock);
			return 0;
		}
	pthread_mutex_unlock(&nb->lock);
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	log_stream(nb, agent, name, sizeof(name));
	snprintf(subj, sizeof(subj), "%s.log.%s.*", nb->prefix, agent);
	if (nats_add_record_stream(nb, name, subj, LOG_MAX_AGE_DAYS, LOG_MAX_MSGS, LOG_MAX_LINE,
				   err) < 0)
		return -1;
	pthread_mutex_lock(&nb->lock);
	nb->logs = xrealloc(nb->logs, (nb->nlogs + 1) * sizeof(*nb->logs));
	nb->logs[nb->nlogs++] = xstrdup(agent);
	pthread_mutex_unlock(&nb->lock);
	return 0;
}

int nats_log_append(struct bus *b, const char *agent, const char *category,
		    const char *line, size_t len)
{
	struct natsbus *nb = NB(b);
	if (len > LOG_MAX_LINE - 1024 || !util_valid_agent_name(agent))
		return -1;
	/* A server that cannot set up the stream now is not asked again for a
	 * while: a log line must never hold an agent up. */
	static _Atomic int64_t retry_after;
	if (util_mono_ns() < atomic_load(&retry_after))
		return -1;
	char *err = NULL;
	if (log_ensure(b, agent, &err) < 0) {
		atomic_store(&retry_after, util_mono_ns() + 30 * 1000000000LL);
		free(err);
		return -1;
	}
	char subj[NATS_NAME_MAX];
	snprintf(subj, sizeof(subj), "%s.log.%s.%s", nb->prefix, agent, category);
	/* Asynchronous: an agent's work never waits on its log; the bus's
	 * close waits until every line is stored. */
	atomic_store(&nb->log_sent, true);
	return js_PublishAsync(nb->js, subj, line, (int)len, NULL) == NATS_OK ? 0 : -1;
}

int nats_log_agents(struct bus *b, char ***out, size_t *n, char **err)
{
	struct natsbus *nb = NB(b);
	*out = NULL;
	*n = 0;
	jsStreamNamesList *list = NULL;
	jsErrCode jerr = 0;
	natsStatus s = js_StreamNames(&list, nb->js, NULL, &jerr);
	if (s != NATS_OK && s != NATS_NOT_FOUND)
		return nats_fail(nb, err, s, jerr, "cannot list the NATS streams");
	char pfx[NATS_NAME_MAX];
	int pl = snprintf(pfx, sizeof(pfx), "%s_log_", nb->prefix);
	for (int i = 0; list && i < list->Count; i++) {
		const char *nm = list->List[i];
		if (strncmp(nm, pfx, (size_t)pl) || !util_valid_agent_name(nm + pl))
			continue;
		*out = xrealloc(*out, sizeof(**out) * (*n + 1));
		(*out)[(*n)++] = xstrdup(nm + pl);
	}
	jsStreamNamesList_Destroy(list);
	return 0;
}

int nats_log_each(struct bus *b, const char *agent, uint64_t after,
		  int (*fn)(void *ctx, const char *category, const char *line,
			    size_t len, uint64_t seq),
		  void *ctx, uint64_t *last, char **err)
{
	struct natsbus *nb = NB(b);
	*last = after;
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	log_stream(nb, agent, name, sizeof(name));
	snprintf(subj, sizeof(subj), "%s.log.%s.>", nb->prefix, agent);
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = nats_stream_info(nb, name, NULL, &si, &jerr);
	if (s == NATS_NOT_FOUND)
		return 0; /* the agent never logged */
	if (s != NATS_OK) {
		jsStreamInfo_Destroy(si);
		return nats_fail(nb, err, s, jerr, "cannot read the log stream of %s", agent);
	}
	uint64_t first = si->State.FirstSeq, end = si->State.LastSeq;
	jsStreamInfo_Destroy(si);
	if (after > end)
		after = 0; /* the stream was made anew: read it all */
	uint64_t seq = after + 1 > first ? after + 1 : first;
	/* up to the last line there now; later ones come next time */
	while (seq <= end) {
		jsDirectGetMsgOptions d;
		memset(&d, 0, sizeof(d));
		d.Sequence = seq;
		d.NextBySubject = subj;
		natsMsg *m = NULL;
		s = nats_direct_get(nb, name, &d, &m);
		if (s == NATS_NOT_FOUND)
			break;
		if (s != NATS_OK)
			return nats_fail(nb, err, s, 0, "cannot read the log stream of %s", agent);
		const char *sq = nats_hdr(m, "Nats-Sequence");
		const char *sj = nats_hdr(m, "Nats-Subject");
		uint64_t got = sq ? strtoull(sq, NULL, 10) : 0;
		const char *cat = sj ? strrchr(sj, '.') : NULL;
		int stop = 0;
		if (got < seq || got > end) {
			stop = 1;
		} else {
			if (cat)
				stop = fn(ctx, cat + 1, natsMsg_GetData(m),
					  (size_t)natsMsg_GetDataLength(m), got);
			if (!stop)
				*last = got; /* handled: not read again */
			seq = got + 1;
		}
		natsMsg_Destroy(m);
		if (stop)
			break;
	}
	return 0;
}
