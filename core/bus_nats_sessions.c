/* The conversations a bus carries beyond this host's copies (core/bus.h:
 * bus_events_sessions, bus_events_meta, bus_events_read), read without
 * writing anything here: what a watcher on another host (the console's
 * Conversations view) lists and follows. On NATS the stream <P>_conv
 * (core/bus_nats_events.c writes it: <P>.conv.SESSION.meta, the meta as
 * last written, and <P>.conv.SESSION.ev, the events in order); the file
 * bus carries none but the local files. */
#include "core/bus_nats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

static bool carries(const struct bus *b)
{
	return b && b->t == &bus_nats_transport && b->impl;
}

int bus_events_sessions(struct bus *b, char ***out, size_t *n, char **err)
{
	*out = NULL;
	*n = 0;
	if (!carries(b))
		return 0;
	struct natsbus *nb = NB(b);
	char name[NATS_NAME_MAX], filter[NATS_NAME_MAX], pfx[NATS_NAME_MAX];
	snprintf(name, sizeof(name), "%s_conv", nb->prefix);
	snprintf(filter, sizeof(filter), "%s.conv.*.meta", nb->prefix);
	int plen = snprintf(pfx, sizeof(pfx), "%s.conv.", nb->prefix);
	jsOptions o;
	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = filter;
	jsStreamInfo *si = NULL;
	jsErrCode jerr = 0;
	natsStatus s = nats_stream_info(nb, name, &o, &si, &jerr);
	if (s == NATS_NOT_FOUND)
		return 0; /* no conversation recorded on this bus yet */
	if (s != NATS_OK)
		return nats_fail(nb, err, s, jerr, "cannot list the conversations on %s", name);
	const jsStreamStateSubjects *subs = si->State.Subjects;
	for (int i = 0; subs && i < subs->Count; i++) {
		const char *subj = subs->List[i].Subject;
		size_t len = subj ? strlen(subj) : 0;
		if (len <= (size_t)plen + 5 || strncmp(subj, pfx, (size_t)plen) ||
		    strcmp(subj + len - 5, ".meta"))
			continue;
		char *session = xstrndup(subj + plen, len - (size_t)plen - 5);
		if (!util_valid_agent_name(session)) {
			free(session);
			continue;
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = session;
	}
	jsStreamInfo_Destroy(si);
	return 0;
}

int bus_events_meta(struct bus *b, const char *session, char **meta, char **err)
{
	*meta = NULL;
	if (!carries(b) || !util_valid_agent_name(session))
		return 1;
	return nats_conv_meta(NB(b), session, meta, err);
}

int bus_events_read(struct bus *b, const char *session, uint64_t *pos, size_t max,
		    void (*fn)(void *ctx, const char *line, size_t len), void *ctx, char **err)
{
	if (!carries(b) || !util_valid_agent_name(session))
		return 0;
	struct natsbus *nb = NB(b);
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	snprintf(name, sizeof(name), "%s_conv", nb->prefix);
	snprintf(subj, sizeof(subj), "%s.conv.%s.ev", nb->prefix, session);
	int got = 0;
	while ((size_t)got < max) {
		jsDirectGetMsgOptions d;
		memset(&d, 0, sizeof(d));
		d.Sequence = *pos + 1;
		d.NextBySubject = subj;
		natsMsg *m = NULL;
		natsStatus s = nats_direct_get(nb, name, &d, &m);
		if (s == NATS_NOT_FOUND)
			break; /* nothing after *pos (yet) */
		if (s != NATS_OK)
			return nats_fail(nb, err, s, 0, "cannot read the events of session %s",
					 session);
		const char *sq = nats_hdr(m, "Nats-Sequence");
		uint64_t at = sq ? strtoull(sq, NULL, 10) : 0;
		if (at <= *pos) {
			natsMsg_Destroy(m);
			break; /* not a step forward: stop rather than loop */
		}
		*pos = at;
		fn(ctx, natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
		natsMsg_Destroy(m);
		got++;
	}
	return got;
}
