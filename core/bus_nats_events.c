/* The NATS transport's conversation event logs (core/bus.h): stream
 * <P>_conv, limits retention, subjects <P>.conv.SESSION.ev (one message per
 * event, in order, deduplicated by SESSION-SEQ) and <P>.conv.SESSION.meta
 * (the meta as it was last written), so that a serve on any host replays a
 * conversation recorded by another. */
#include "core/bus_nats.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

#define CONV_MAX_AGE_DAYS 30          /* the recorded sessions' longest life */
#define CONV_MAX_LINE (8 * 1024 * 1024) /* an event line (a big tool result) */
#define WAIT_MS 5000

static void conv_stream(const struct natsbus *nb, char *buf, size_t size)
{
	snprintf(buf, size, "%s_conv", nb->prefix);
}

/* The stream, created once per bus. */
static int conv_ensure(struct bus *b, char **err)
{
	struct natsbus *nb = NB(b);
	if (atomic_load(&nb->conv_ready))
		return 0;
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	conv_stream(nb, name, sizeof(name));
	snprintf(subj, sizeof(subj), "%s.conv.>", nb->prefix);
	if (nats_add_record_stream(nb, name, subj, CONV_MAX_AGE_DAYS, 0, CONV_MAX_LINE, err) < 0)
		return -1;
	atomic_store(&nb->conv_ready, true);
	return 0;
}

int nats_events_publish(struct bus *b, const char *session, long seq, const char *data,
			size_t len, bool sync, char **err)
{
	struct natsbus *nb = NB(b);
	if (len > CONV_MAX_LINE - 1024)
		return err_set(err, "an event of %zu bytes is over the stream's limit", len);
	if (conv_ensure(b, err) < 0)
		return -1;
	char subj[NATS_NAME_MAX], id[NATS_NAME_MAX];
	snprintf(subj, sizeof(subj), "%s.conv.%s.%s", nb->prefix, session, seq ? "ev" : "meta");
	snprintf(id, sizeof(id), "%s-%ld", session, seq);
	jsPubOptions po;
	jsPubOptions_Init(&po);
	po.MaxWait = WAIT_MS;
	if (seq)
		po.MsgId = id; /* an event published twice is stored once */
	natsStatus s;
	jsErrCode jerr = 0;
	if (sync) {
		/* after the events published before it on this connection: when
		 * it is stored, they are */
		int64_t until = nats_retry_until(nb);
		for (int i = 0;; i++) {
			/* through an election; an event asked again keeps its id,
			 * a meta record is read as the session's last one */
			jsPubAck *pa = NULL;
			jerr = 0;
			s = js_Publish(&pa, nb->js, subj, data, (int)len, &po, &jerr);
			jsPubAck_Destroy(pa);
			if (!nats_retry_again(s, s == NATS_NO_RESPONDERS ? 0 : jerr, until, i))
				break;
		}
	} else {
		atomic_store(&nb->log_sent, true); /* the bus's close waits for them */
		s = js_PublishAsync(nb->js, subj, data, (int)len, &po);
	}
	if (s != NATS_OK)
		return nats_fail(nb, err, s, jerr, "cannot publish to %s", subj);
	return 0;
}

/* The number after the last "seq": of an event line: its data's seq
 * (timestamp, seq and sessionId are data's last members). 0 if none, or
 * if it is more than a long holds. */
long nats_line_seq(const char *p, size_t len)
{
	static const char key[] = "\"seq\":";
	const char *last = NULL;
	for (size_t i = 0; i + sizeof(key) - 1 <= len; i++)
		if (!memcmp(p + i, key, sizeof(key) - 1))
			last = p + i + sizeof(key) - 1;
	if (!last)
		return 0;
	long v = 0;
	for (; last < p + len && *last >= '0' && *last <= '9'; last++) {
		if (v > (LONG_MAX - 9) / 10)
			return 0; /* not a seq of ours (nor a long) */
		v = v * 10 + (*last - '0');
	}
	return v;
}

int nats_conv_meta(struct natsbus *nb, const char *session, char **meta, char **err)
{
	*meta = NULL;
	char name[NATS_NAME_MAX], ms[NATS_NAME_MAX];
	conv_stream(nb, name, sizeof(name));
	snprintf(ms, sizeof(ms), "%s.conv.%s.meta", nb->prefix, session);
	jsDirectGetMsgOptions d;
	memset(&d, 0, sizeof(d));
	d.LastBySubject = ms;
	natsMsg *m = NULL;
	natsStatus s = nats_direct_get(nb, name, &d, &m);
	if (s == NATS_NOT_FOUND)
		return 1; /* no stream, or no such session in it */
	if (s != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot read the meta of session %s", session);
	*meta = xstrndup(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
	natsMsg_Destroy(m);
	return 0;
}

int nats_events_fetch(struct bus *b, const char *session, long after,
		      int (*fn)(void *ctx, long seq, const char *line, size_t len), void *ctx,
		      char **meta, char **err)
{
	struct natsbus *nb = NB(b);
	int r = nats_conv_meta(nb, session, meta, err);
	if (r != 0)
		return r;
	char name[NATS_NAME_MAX], evs[NATS_NAME_MAX];
	conv_stream(nb, name, sizeof(name));
	snprintf(evs, sizeof(evs), "%s.conv.%s.ev", nb->prefix, session);
	jsDirectGetMsgOptions d;
	natsMsg *m;
	natsStatus s;
	/* the events in order, from the first of the session's subject */
	uint64_t seq = 1;
	for (;;) {
		memset(&d, 0, sizeof(d));
		d.Sequence = seq;
		d.NextBySubject = evs;
		m = NULL;
		s = nats_direct_get(nb, name, &d, &m);
		if (s == NATS_NOT_FOUND)
			break;
		if (s != NATS_OK) {
			free(*meta);
			*meta = NULL;
			return nats_fail(nb, err, s, 0, "cannot read the events of session %s",
					 session);
		}
		const char *sq = nats_hdr(m, "Nats-Sequence");
		uint64_t got = sq ? strtoull(sq, NULL, 10) : 0;
		const char *data = natsMsg_GetData(m);
		size_t len = (size_t)natsMsg_GetDataLength(m);
		long ev = nats_line_seq(data, len);
		int stop = got < seq ? 1 : ev > after ? fn(ctx, ev, data, len) : 0;
		natsMsg_Destroy(m);
		if (stop)
			break;
		seq = got + 1;
	}
	return 0;
}
