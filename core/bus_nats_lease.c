/* The NATS transport's lease records, so that a listing can say when a
 * processing message's lease runs out: the server keeps the lease (the
 * consumer's ack wait, started again by each in-progress ack) but tells
 * no one when it ends. Each renewal also publishes a record on
 * <P>.lease.<A>.<SEQ> (stream <P>_lease, limits retention, a day): its
 * headers Madf-Lease-Expires (ns since the epoch) and Madf-Owner (the
 * renewing process). A claim not renewed yet (younger than a third of the
 * lease) has no record: its lease is not known. */
#include "core/bus_nats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S 1000000000LL
#define LEASE_KEEP_DAYS 1
#define LEASE_KEEP_MSGS 100000

static void lease_stream(const struct natsbus *nb, char *buf, size_t size)
{
	snprintf(buf, size, "%s_lease", nb->prefix);
}

static void lease_subject(const struct natsbus *nb, const char *agent, uint64_t seq,
			  char *buf, size_t size)
{
	snprintf(buf, size, "%s.lease.%s.%llu", nb->prefix, agent, (unsigned long long)seq);
}

int nats_lease_note(struct bus *b, const char *agent, uint64_t seq, char **err)
{
	struct natsbus *nb = NB(b);
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX + 24];
	if (!atomic_load(&nb->lease_ready)) {
		lease_stream(nb, name, sizeof(name));
		snprintf(subj, sizeof(subj), "%s.lease.>", nb->prefix);
		if (nats_add_record_stream(nb, name, subj, LEASE_KEEP_DAYS, LEASE_KEEP_MSGS,
					   4096, err) < 0)
			return -1;
		atomic_store(&nb->lease_ready, true);
	}
	lease_subject(nb, agent, seq, subj, sizeof(subj));
	int64_t exp = util_now_ns() + b->cfg.lease_s * NS_PER_S;
	char at[40], ns[24];
	util_iso8601(exp, at, sizeof(at));
	snprintf(ns, sizeof(ns), "%lld", (long long)exp);
	natsMsg *m = NULL;
	natsStatus s = natsMsg_Create(&m, subj, NULL, at, (int)strlen(at));
	if (s == NATS_OK)
		s = natsMsgHeader_Set(m, "Madf-Lease-Expires", ns);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(m, "Madf-Owner", nb->owner);
	/* a plain publish: the stream stores it, nobody waits for that */
	if (s == NATS_OK)
		s = natsConnection_PublishMsg(nb->nc, m);
	natsMsg_Destroy(m);
	if (s != NATS_OK)
		return nats_fail(nb, err, s, 0, "cannot record the lease of %s in %s", subj, nb->where);
	return 0;
}

void nats_lease_fill(struct natsbus *nb, const char *agent, uint64_t seq, struct bus_entry *e)
{
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX + 24];
	lease_stream(nb, name, sizeof(name));
	if (!atomic_load(&nb->lease_ready)) {
		/* No record before the stream is made (at the first renewal on
		 * this bus): asked first, since a direct get from a stream that
		 * does not exist waits for the API's time-out (5 s) each time,
		 * and the console lists the claims every few seconds. */
		jsStreamInfo *si = NULL;
		jsErrCode jerr = 0;
		natsStatus s = nats_stream_info(nb, name, NULL, &si, &jerr);
		jsStreamInfo_Destroy(si);
		if (s != NATS_OK)
			return;
		atomic_store(&nb->lease_ready, true);
	}
	lease_subject(nb, agent, seq, subj, sizeof(subj));
	jsDirectGetMsgOptions d;
	memset(&d, 0, sizeof(d));
	d.LastBySubject = subj;
	natsMsg *m = NULL;
	if (nats_direct_get(nb, name, &d, &m) != NATS_OK)
		return; /* none yet, or not readable: not known */
	const char *x = nats_hdr(m, "Madf-Lease-Expires");
	int64_t exp = x ? strtoll(x, NULL, 10) : 0;
	/* one that ran out is an earlier claim's (the message was delivered
	 * again since, or is about to be): not this claim's lease */
	if (exp > util_now_ns()) {
		e->lease_ns = exp;
		const char *o = nats_hdr(m, "Madf-Owner");
		if (o && !e->owner)
			e->owner = util_sanitize(o, strlen(o), false);
	}
	natsMsg_Destroy(m);
}
