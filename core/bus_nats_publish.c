/* The NATS JetStream transport's publishing: a message to an inbox (with
 * its priority subject and dedup id), to the drops and to the dead
 * letters, retried through a leader election; and reading one back by
 * sequence. See core/bus_nats.h for the mapping. */
#include "core/bus_nats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/bus_drop.h"
#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S 1000000000LL

/* ---- publishing ------------------------------------------------------- */

/* Publishes m (headers set) with dedup id; retries a timeout or a missing
 * responder (a leader election) with the same id. */
static int publish(struct bus *b, natsMsg *m, const char *dedup, jsErrCode *jerr,
		   natsStatus *st, bool *dup)
{
	struct natsbus *nb = NB(b);
	jsPubOptions po;
	jsPubOptions_Init(&po);
	/* Nats-Msg-Id: a publish asked again after a timeout whose first
	 * attempt was stored is a duplicate within the server's window (2
	 * minutes, far longer than MADF_NATS_ELECTION_S), stored once */
	po.MsgId = dedup;
	natsStatus s = NATS_OK;
	/* A timeout or no responders: a leader election (in a cluster, some
	 * 5 s after the stream leader dies) or a reconnect. Retried with the
	 * same id (stored once) for up to MADF_NATS_ELECTION_S. */
	int64_t until = nats_retry_until(nb);
	for (int i = 0;; i++) {
		jsPubAck *pa = NULL;
		*jerr = 0;
		s = js_PublishMsg(&pa, nb->js, m, &po, jerr);
		if (s == NATS_OK && dup)
			*dup = pa && pa->Duplicate;
		jsPubAck_Destroy(pa);
		/* 10076 "JetStream not enabled" comes with no responders: not
		 * the server's answer (cnats 3.4.1 sets it), the election's */
		if (!nats_retry_again(s, s == NATS_NO_RESPONDERS ? 0 : *jerr, until, i))
			break;
	}
	*st = s;
	return s == NATS_OK ? 0 : -1;
}

int nats_publish_drop(struct bus *b, const struct msg *m, const char *agent,
		      const char *reason, const char *dedup, char **err)
{
	struct natsbus *nb = NB(b);
	char subj[NATS_NAME_MAX];
	snprintf(subj, sizeof(subj), "%s.dropped.%s", nb->prefix, agent);
	char *line = bus_drop_line(m, agent, reason);
	natsMsg *nm = NULL;
	jsErrCode jerr = 0;
	natsStatus s = natsMsg_Create(&nm, subj, NULL, line, (int)strlen(line) - 1);
	if (s == NATS_OK)
		publish(b, nm, dedup, &jerr, &s, NULL);
	natsMsg_Destroy(nm);
	free(line);
	if (s != NATS_OK)
		return nats_fail(nb, err, s, jerr, "cannot record a dropped message of %s",
				 agent);
	return 0;
}

int nats_publish_inbox(struct bus *b, const struct msg *m, const char *agent,
		       const char *json, size_t len, const char *dedup,
		       char **err)
{
	struct natsbus *nb = NB(b);
	if (nats_ensure_inbox(b, agent, err) < 0)
		return -1;
	char subj[NATS_NAME_MAX];
	snprintf(subj, sizeof(subj), "%s.inbox.%s.%s", nb->prefix, agent,
		 nats_prio_tok[m->priority & 3]);
	natsMsg *nm = NULL;
	natsStatus s = natsMsg_Create(&nm, subj, NULL, json, (int)len);
	if (s == NATS_OK) {
		bool bcast = !strcmp(m->to, "broadcast");
		char *mid = bcast ? xasprintf("%s+%s", m->id, agent) : xstrdup(m->id);
		natsMsgHeader_Set(nm, "Madf-Id", mid);
		free(mid);
	}
	jsErrCode jerr = 0;
	if (s == NATS_OK)
		publish(b, nm, dedup, &jerr, &s, NULL);
	natsMsg_Destroy(nm);
	if (s == NATS_OK)
		return 0;
	if (jerr == 10077)
		return err_set(err, "inbox of %s is full: %zu messages held (limit %zu; "
				    "on the nats transport the limit counts messages "
				    "being handled or retried too)", agent,
			       b->cfg.inbox_limit, b->cfg.inbox_limit);
	if (s == NATS_MAX_PAYLOAD || jerr == 10054)
		return nats_fail(nb, err, s, jerr, "message refused: %zu bytes is over "
				 "the NATS server's limit (max_payload must be at least "
				 "16MB for 10 MB messages)", len);
	return nats_fail(nb, err, s, jerr, "cannot send to %s over NATS", agent);
}

int nats_send(struct bus *b, const struct msg *m, const char *json,
	      size_t len, char **err)
{
	if (strcmp(m->to, "broadcast"))
		return nats_publish_inbox(b, m, m->to, json, len, m->id, err);
	char **agents;
	size_t n;
	if (nats_agents(b, &agents, &n, err) < 0)
		return -1;
	int r = 0;
	size_t copies = 0, failed = 0;
	struct sbuf why;
	sbuf_init(&why);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(agents[i], m->from))
			continue;
		copies++;
		char *dedup = xasprintf("%s+%s", m->id, agents[i]);
		char *e = NULL;
		if (nats_publish_inbox(b, m, agents[i], json, len, dedup, &e) < 0) {
			/* the others still get their copy */
			sbuf_addf(&why, "%s%s", failed++ ? "; " : "", e);
			r = -1;
		}
		free(e);
		free(dedup);
	}
	if (r < 0) {
		char *w = sbuf_detach(&why);
		err_set(err, "broadcast reached %zu of %zu inboxes: %s", copies - failed,
			copies, w);
		free(w);
	} else {
		sbuf_release(&why);
	}
	for (size_t i = 0; i < n; i++)
		free(agents[i]);
	free(agents);
	return r;
}

static char *hdr_clean(const char *s)
{
	char *t = xstrdup(s ? s : "");
	for (char *p = t; *p; p++)
		if (*p == '\r' || *p == '\n')
			*p = ' ';
	return t;
}

int nats_publish_dead(struct bus *b, const struct nats_dead *dl,
		      const char *json, size_t len, const char *dedup,
		      char **err)
{
	struct natsbus *nb = NB(b);
	char subj[NATS_NAME_MAX], now[40], att[24];
	snprintf(subj, sizeof(subj), "%s.dlq.%s", nb->prefix, dl->agent);
	util_iso8601(util_now_ns(), now, sizeof(now));
	snprintf(att, sizeof(att), "%d", dl->attempts);
	natsMsg *nm = NULL;
	natsStatus s = natsMsg_Create(&nm, subj, NULL, json, (int)len);
	const char *kv[][2] = {
		{ "Madf-Reason", dl->reason }, { "Madf-Error", dl->error },
		{ "Madf-Original-Inbox", dl->agent }, { "Madf-Attempts", att },
		{ "Madf-First-Failure", dl->first_failure ? dl->first_failure : now },
		{ "Madf-Last-Failure", now }, { "Madf-Dead-Lettered-At", now },
		{ "Madf-Message-Id", dl->message_id }, { "Madf-From", dl->from },
		{ "Madf-To", dl->to }, { "Madf-Type", dl->type },
	};
	for (size_t i = 0; s == NATS_OK && i < ARRAY_SIZE(kv); i++) {
		if (!kv[i][1])
			continue;
		char *v = hdr_clean(kv[i][1]);
		s = natsMsgHeader_Set(nm, kv[i][0], v);
		free(v);
	}
	jsErrCode jerr = 0;
	if (s == NATS_OK)
		publish(b, nm, dedup, &jerr, &s, NULL);
	natsMsg_Destroy(nm);
	if (s != NATS_OK)
		return nats_fail(nb, err, s, jerr, "cannot dead-letter a message of %s",
				 dl->agent);
	if (b->on_dead)
		b->on_dead(b->on_dead_ctx, dl->agent, dl->message_id ? dl->message_id : "?",
			   dl->reason, dl->error);
	return 0;
}

natsStatus nats_get(struct natsbus *nb, const char *stream, uint64_t seq, natsMsg **m)
{
	jsDirectGetMsgOptions d;
	memset(&d, 0, sizeof(d));
	d.Sequence = seq;
	return nats_direct_get(nb, stream, &d, m);
}

const char *nats_hdr(natsMsg *m, const char *key)
{
	const char *v = NULL;
	if (natsMsgHeader_Get(m, key, &v) != NATS_OK)
		return NULL;
	return v;
}

int64_t nats_parse_time(const char *s)
{
	if (!s)
		return 0;
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	int used = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	if (t >= INT64_MAX / NS_PER_S || t <= INT64_MIN / NS_PER_S)
		return 0; /* past 2262 (or before 1677): not a time in ns */
	int64_t ns = (int64_t)t * NS_PER_S;
	const char *p = s + used;
	if (*p == '.') {
		int64_t frac = 0, scale = 100000000;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			if (scale)
				frac += (*p - '0') * scale;
		ns += frac;
	}
	return ns;
}
