/* The NATS transport's administration: listing (by direct get, since a
 * WorkQueue stream admits no second consumer), find, read, the operator's
 * edits of dead and waiting messages, and the counts for the console. */
#include "core/bus_nats.h"
#include "core/bus_drop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

static const char *const prio_tok[4] = { "urgent", "high", "normal", "low" };

static int prio_from_subject(const char *subj)
{
	const char *dot = subj ? strrchr(subj, '.') : NULL;
	for (int p = 0; dot && p < 4; p++)
		if (!strcmp(dot + 1, prio_tok[p]))
			return p;
	return PRIO_NORMAL;
}

/* Where each priority's consumer stands: a message past delivered is
 * waiting; one at or below it and above the ack floor is being handled or
 * waiting out a backoff. */
struct cpos {
	uint64_t delivered[4];
};

/* A consumer that is not there (yet) has delivered nothing; one whose
 * information cannot be read (after the election's retries) fails the
 * listing: a waiting message is not to be shown as handled, nor the
 * reverse. */
static int consumer_positions(struct natsbus *nb, const char *agent,
			      struct cpos *pos, char **err)
{
	char stream[NATS_NAME_MAX];
	nats_stream_name(nb, agent, stream, sizeof(stream));
	memset(pos, 0, sizeof(*pos));
	for (int p = 0; p < 4; p++) {
		char durable[NATS_NAME_MAX];
		snprintf(durable, sizeof(durable), "%s_%s", agent, prio_tok[p]);
		jsConsumerInfo *ci = NULL;
		jsErrCode jerr = 0;
		natsStatus s = nats_consumer_info(nb, stream, durable, &ci, &jerr);
		if (s == NATS_OK)
			pos->delivered[p] = ci->Delivered.Stream;
		jsConsumerInfo_Destroy(ci);
		if (s != NATS_OK && s != NATS_NOT_FOUND)
			return nats_fail(nb, err, s, jerr, "cannot read the NATS consumer %s",
					 durable);
	}
	return 0;
}

/* Calls fn on each stored message of stream (subject filter subj) in
 * sequence order; fn returns nonzero to stop (-1: it failed, *err set).
 * 0 at the end, -1 with *err when a read failed (after the election's
 * retries): never a short listing that reads as messages gone. */
static int scan(struct natsbus *nb, const char *stream, const char *subj,
		int (*fn)(void *ctx, natsMsg *m, uint64_t seq), void *ctx, char **err)
{
	uint64_t seq = 1;
	for (;;) {
		jsDirectGetMsgOptions d;
		memset(&d, 0, sizeof(d));
		d.Sequence = seq;
		d.NextBySubject = subj;
		natsMsg *m = NULL;
		natsStatus st = nats_direct_get(nb, stream, &d, &m);
		if (st == NATS_NOT_FOUND)
			return 0; /* nothing after seq */
		if (st != NATS_OK)
			return nats_fail(nb, err, st, 0, "cannot read the NATS stream %s", stream);
		const char *s = nats_hdr(m, "Nats-Sequence");
		uint64_t got = s ? strtoull(s, NULL, 10) : 0;
		int stop = got < seq ? 1 : fn(ctx, m, got);
		natsMsg_Destroy(m);
		if (stop)
			return stop < 0 ? -1 : 0;
		seq = got + 1;
	}
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Fills e from a stored message (name "<stream>:<seq>"). */
static void entry_fill(struct bus_entry *e, enum bus_queue q, const char *agent,
		       const char *stream, uint64_t seq, natsMsg *m, bool content)
{
	memset(e, 0, sizeof(*e));
	e->queue = q;
	e->agent = q == BUS_Q_DEAD ? NULL : dup_or_null(agent);
	e->name = xasprintf("%s:%llu", stream, (unsigned long long)seq);
	e->path = xasprintf("nats:%s", e->name);
	e->enqueued_ns = nats_parse_time(nats_hdr(m, "Nats-Time-Stamp"));
	e->size = (size_t)natsMsg_GetDataLength(m);
	if (q == BUS_Q_DEAD) {
		const char *a = nats_hdr(m, "Madf-Attempts");
		e->attempts = a ? atoi(a) : 0;
		e->message_id = dup_or_null(nats_hdr(m, "Madf-Message-Id"));
		e->reason = dup_or_null(nats_hdr(m, "Madf-Reason"));
		e->error = dup_or_null(nats_hdr(m, "Madf-Error"));
		e->original_inbox = dup_or_null(nats_hdr(m, "Madf-Original-Inbox"));
		e->from = dup_or_null(nats_hdr(m, "Madf-From"));
		e->to = dup_or_null(nats_hdr(m, "Madf-To"));
		e->type = dup_or_null(nats_hdr(m, "Madf-Type"));
		e->priority = PRIO_NORMAL;
	} else {
		e->message_id = dup_or_null(nats_hdr(m, "Madf-Id"));
		e->priority = (enum msg_priority)prio_from_subject(nats_hdr(m, "Nats-Subject"));
	}
	if (content || q == BUS_Q_DEAD) {
		cJSON *j = cJSON_ParseWithLength(natsMsg_GetData(m),
						 (size_t)natsMsg_GetDataLength(m));
		const char *keys[] = { "from", "to", "type", "priority" };
		char **dst[] = { &e->from, &e->to, &e->type, NULL };
		for (int k = 0; j && k < 4; k++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
			if (!cJSON_IsString(v))
				continue;
			if (dst[k] && !*dst[k])
				*dst[k] = xstrdup(v->valuestring);
			else if (!dst[k] && q == BUS_Q_DEAD) {
				int p = msg_priority_from_name(v->valuestring);
				if (p >= 0)
					e->priority = (enum msg_priority)p;
			}
		}
		if (!e->message_id && j) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "message_id");
			if (cJSON_IsString(v))
				e->message_id = xstrdup(v->valuestring);
		}
		cJSON_Delete(j);
	}
}

struct lst {
	struct natsbus *nb;
	const char *agent, *stream;
	enum bus_queue want;   /* BUS_Q_COUNT: inbox and processing */
	bool content;
	struct cpos pos;
	jsStreamInfo *att;     /* the agent's failure records, by subject */
	struct bus_entry *v;
	size_t n;
	const char *match;     /* find: stop at this id */
	void (*fn)(void *ctx, const struct bus_entry *e);
	void *ctx;
	char **err;            /* a callback's failure */
};

static int lst_inbox(void *ctx, natsMsg *m, uint64_t seq)
{
	struct lst *l = ctx;
	int p = prio_from_subject(nats_hdr(m, "Nats-Subject"));
	enum bus_queue q = seq > l->pos.delivered[p] ? BUS_Q_INBOX : BUS_Q_PROCESSING;
	int failures = 0;
	int64_t due = 0;
	if (q == BUS_Q_PROCESSING && l->att && l->att->State.Subjects) {
		/* failed before: retrying while its backoff runs */
		char sj[NATS_NAME_MAX + 24];
		snprintf(sj, sizeof(sj), "%s.att.%s.%llu", l->nb->prefix, l->agent,
			 (unsigned long long)seq);
		for (int i = 0; i < l->att->State.Subjects->Count; i++)
			if (!strcmp(l->att->State.Subjects->List[i].Subject, sj))
				failures = (int)l->att->State.Subjects->List[i].Msgs;
		natsMsg *last = NULL;
		char an[NATS_NAME_MAX];
		snprintf(an, sizeof(an), "%s_att", l->nb->prefix);
		jsDirectGetMsgOptions dg;
		memset(&dg, 0, sizeof(dg));
		dg.LastBySubject = sj;
		natsStatus st = failures ? nats_direct_get(l->nb, an, &dg, &last) : NATS_NOT_FOUND;
		if (st == NATS_OK) {
			const char *d = nats_hdr(last, "Madf-Due");
			due = d ? strtoll(d, NULL, 10) : 0;
		}
		natsMsg_Destroy(last);
		if (st != NATS_OK && st != NATS_NOT_FOUND)
			return nats_fail(l->nb, l->err, st, 0, "cannot read the failures of %s:%llu",
					 l->stream, (unsigned long long)seq);
		if (due > util_now_ns())
			q = BUS_Q_RETRY;
	}
	if (l->want != BUS_Q_COUNT && q != l->want)
		return 0;
	if (l->match) {
		const char *id = nats_hdr(m, "Madf-Id");
		char name[NATS_NAME_MAX + 24];
		snprintf(name, sizeof(name), "%s:%llu", l->stream, (unsigned long long)seq);
		if (!(id && !strcmp(id, l->match)) && strcmp(name, l->match))
			return 0;
	}
	l->v = xrealloc(l->v, sizeof(*l->v) * (l->n + 1));
	entry_fill(&l->v[l->n], q, l->agent, l->stream, seq, m, l->content);
	if (q == BUS_Q_PROCESSING)
		nats_lease_fill(l->nb, l->agent, seq, &l->v[l->n]);
	l->v[l->n].attempts = failures;
	l->v[l->n++].due_ns = due;
	return l->match != NULL;
}

static int lst_dead(void *ctx, natsMsg *m, uint64_t seq)
{
	struct lst *l = ctx;
	if (l->match) {
		const char *id = nats_hdr(m, "Madf-Message-Id");
		char name[NATS_NAME_MAX + 24];
		snprintf(name, sizeof(name), "%s:%llu", l->stream, (unsigned long long)seq);
		if (!(id && !strcmp(id, l->match)) && strcmp(name, l->match))
			return 0;
	}
	struct bus_entry e;
	entry_fill(&e, BUS_Q_DEAD, NULL, l->stream, seq, m, true);
	if (l->fn) {
		l->fn(l->ctx, &e);
		bus_entry_release(&e);
		return 0;
	}
	l->v = xrealloc(l->v, sizeof(*l->v) * (l->n + 1));
	l->v[l->n++] = e;
	return l->match != NULL;
}

static int list_agent(struct lst *l, const char *agent)
{
	char stream[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	nats_stream_name(l->nb, agent, stream, sizeof(stream));
	snprintf(subj, sizeof(subj), "%s.inbox.%s.*", l->nb->prefix, agent);
	l->agent = agent;
	l->stream = stream;
	if (consumer_positions(l->nb, agent, &l->pos, l->err) < 0)
		return -1;
	char an[NATS_NAME_MAX], af[NATS_NAME_MAX];
	snprintf(an, sizeof(an), "%s_att", l->nb->prefix);
	snprintf(af, sizeof(af), "%s.att.%s.*", l->nb->prefix, agent);
	jsOptions o;
	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = af;
	jsErrCode jerr = 0;
	natsStatus s = nats_stream_info(l->nb, an, &o, &l->att, &jerr);
	if (s != NATS_OK && s != NATS_NOT_FOUND)
		return nats_fail(l->nb, l->err, s, jerr, "cannot read the NATS stream %s", an);
	int r = scan(l->nb, stream, subj, lst_inbox, l, l->err);
	jsStreamInfo_Destroy(l->att);
	l->att = NULL;
	l->stream = NULL;
	return r;
}

static int list_dead(struct lst *l)
{
	char stream[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	nats_dlq_stream(l->nb, stream, sizeof(stream));
	snprintf(subj, sizeof(subj), "%s.dlq.*", l->nb->prefix);
	l->stream = stream;
	int r = scan(l->nb, stream, subj, lst_dead, l, l->err);
	l->stream = NULL;
	return r;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct bus_entry *x = a, *y = b;
	if (x->priority != y->priority)
		return (int)x->priority - (int)y->priority;
	return (x->enqueued_ns > y->enqueued_ns) - (x->enqueued_ns < y->enqueued_ns);
}

static void free_agents(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int nats_list(struct bus *b, enum bus_queue q, const char *agent, bool content,
	      struct bus_entry **out, size_t *n, char **err)
{
	*out = NULL;
	*n = 0;
	if (q == BUS_Q_PROCESSED)
		return err_set(err, NATS_UNSUPPORTED "the processed queue (an "
			       "acknowledged message leaves the stream)");
	struct lst l = { .nb = NB(b), .want = q, .content = content, .err = err };
	int r = 0;
	if (q == BUS_Q_DEAD) {
		r = list_dead(&l);
	} else if (agent) {
		r = list_agent(&l, agent);
	} else {
		char **agents;
		size_t na;
		if (nats_agents(b, &agents, &na, err) < 0)
			return -1;
		for (size_t i = 0; i < na && r == 0; i++)
			r = list_agent(&l, agents[i]);
		free_agents(agents, na);
	}
	if (r < 0) {
		bus_entries_free(l.v, l.n);
		return -1;
	}
	if (l.n > 1 && q != BUS_Q_DEAD)
		qsort(l.v, l.n, sizeof(*l.v), cmp_entry);
	*out = l.v;
	*n = l.n;
	return 0;
}

int nats_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
		   void *ctx, char **err)
{
	struct lst l = { .nb = NB(b), .want = BUS_Q_DEAD, .fn = fn, .ctx = ctx, .err = err };
	return list_dead(&l);
}

int nats_find(struct bus *b, const char *id, struct bus_entry *out, char **err)
{
	if (!id || !*id || strchr(id, '/'))
		return err_set(err, "invalid message id \"%s\"", id ? id : "");
	char **agents;
	size_t na;
	if (nats_agents(b, &agents, &na, err) < 0)
		return -1;
	struct lst l = { .nb = NB(b), .want = BUS_Q_COUNT, .content = true, .match = id,
			 .err = err };
	int r = 0;
	for (size_t i = 0; i < na && !l.n && r == 0; i++)
		r = list_agent(&l, agents[i]);
	free_agents(agents, na);
	if (!l.n && r == 0)
		r = list_dead(&l);
	if (r < 0) {
		/* a read failed: not "no message" */
		bus_entries_free(l.v, l.n);
		return -1;
	}
	if (!l.n)
		return err_set(err, "no message %s in the inboxes, processing or dead "
				    "letters of the NATS bus (acknowledged messages are "
				    "not kept there)", id);
	*out = l.v[0];
	free(l.v);
	return 0;
}

static int name_split(const char *name, char *stream, size_t size, uint64_t *seq)
{
	const char *colon = strrchr(name, ':');
	if (!colon || (size_t)(colon - name) >= size)
		return -1;
	snprintf(stream, size, "%.*s", (int)(colon - name), name);
	*seq = strtoull(colon + 1, NULL, 10);
	return *seq ? 0 : -1;
}

int nats_read(struct bus *b, const struct bus_entry *e, char **json, size_t *len,
	      char **err)
{
	char stream[NATS_NAME_MAX];
	uint64_t seq;
	if (name_split(e->name, stream, sizeof(stream), &seq) < 0)
		return err_set(err, "bad NATS message name %s", e->name);
	natsMsg *m = NULL;
	natsStatus s = nats_get(NB(b), stream, seq, &m);
	if (s == NATS_NOT_FOUND)
		return err_set(err, "%s is gone", e->name);
	if (s != NATS_OK)
		return nats_fail(NB(b), err, s, 0, "cannot read %s", e->name);
	*len = (size_t)natsMsg_GetDataLength(m);
	*json = xstrndup(natsMsg_GetData(m), *len);
	natsMsg_Destroy(m);
	return 0;
}

static int delete_entry(struct bus *b, const struct bus_entry *e, char **err)
{
	char stream[NATS_NAME_MAX];
	uint64_t seq;
	if (name_split(e->name, stream, sizeof(stream), &seq) < 0)
		return err_set(err, "bad NATS message name %s", e->name);
	jsErrCode jerr = 0;
	natsStatus s = NATS_OK;
	int64_t until = nats_retry_until(NB(b));
	int i;
	for (i = 0;; i++) {
		jerr = 0;
		s = js_DeleteMsg(NB(b)->js, stream, seq, NULL, &jerr);
		if (!nats_retry_again(s, jerr, until, i))
			break;
	}
	/* Asked again through an election, "no such message" (10057) says the
	 * first attempt, whose answer was lost, deleted it. */
	if (s != NATS_OK && !(i > 0 && jerr == 10057))
		return nats_fail(NB(b), err, s, jerr, "cannot delete %s", e->name);
	if (e->queue == BUS_Q_RETRY && e->agent) {
		/* its failure records go with it */
		char an[NATS_NAME_MAX], sj[NATS_NAME_MAX + 24];
		snprintf(an, sizeof(an), "%s_att", NB(b)->prefix);
		snprintf(sj, sizeof(sj), "%s.att.%s.%llu", NB(b)->prefix, e->agent,
			 (unsigned long long)seq);
		jsOptions o;
		jsOptions_Init(&o);
		o.Stream.Purge.Subject = sj;
		/* best effort (they expire), through an election too */
		until = nats_retry_until(NB(b));
		for (i = 0;; i++) {
			jerr = 0;
			s = js_PurgeStream(NB(b)->js, an, &o, &jerr);
			if (!nats_retry_again(s, jerr, until, i))
				break;
		}
	}
	return 0;
}

/* A fresh dedup id for a message queued again (the original id may still
 * be inside the duplicate window). */
static char *fresh_dedup(const char *id)
{
	uint32_t r;
	util_random(&r, sizeof(r));
	return xasprintf("%s:r%08x", id, r);
}

static int queue_fresh(struct bus *b, const struct msg *m, const char *agent,
		       char **err)
{
	char *js = msg_to_json(m, true);
	size_t len = strlen(js);
	js = xrealloc(js, len + 2);
	js[len++] = '\n';
	js[len] = '\0';
	char *dedup = fresh_dedup(m->id);
	int r = nats_publish_inbox(b, m, agent, js, len, dedup, err);
	free(dedup);
	free(js);
	return r;
}

static int load_valid(struct bus *b, const struct bus_entry *e, struct msg **m,
		      char **err)
{
	char *buf;
	size_t len;
	if (nats_read(b, e, &buf, &len, err) < 0)
		return -1;
	int r = bus_parse_stored(e->name, buf, len, m, err);
	free(buf);
	return r;
}

int nats_retry(struct bus *b, const char *id, const char *to, char **note, char **err)
{
	struct bus_entry e;
	if (nats_find(b, id, &e, err) < 0)
		return -1;
	int r = -1;
	struct msg *m = NULL;
	if (e.queue != BUS_Q_DEAD) {
		err_set(err, "%s is not a dead letter (it is in %s)", id,
			bus_queue_name(e.queue));
		goto out;
	}
	if (load_valid(b, &e, &m, err) < 0)
		goto out;
	const char *target = to ? to : (e.original_inbox && *e.original_inbox
					? e.original_inbox : m->to);
	if (!util_valid_agent_name(target)) {
		err_set(err, "cannot retry %s: no valid inbox to send it to", id);
		goto out;
	}
	if (strcmp(m->to, target) && strcmp(m->to, "broadcast"))
		util_strlcpy(m->to, target, sizeof(m->to));
	char *said = bus_expired_refresh(m, e.reason); /* an expired one: a new timestamp */
	/* Queued first, then the dead letter removed: a crash between the
	 * two duplicates, never loses. */
	r = queue_fresh(b, m, target, err);
	if (r == 0)
		r = delete_entry(b, &e, err);
	if (r == 0 && note)
		*note = said;
	else
		free(said);
out:
	msg_free(&m);
	bus_entry_release(&e);
	return r;
}

int nats_remove(struct bus *b, const char *id, struct bus_entry *out, char **err)
{
	struct bus_entry e;
	if (nats_find(b, id, &e, err) < 0)
		return -1;
	int r;
	if (e.queue == BUS_Q_PROCESSING)
		r = err_set(err, "%s is being handled or retried; only waiting and "
				 "dead messages can be deleted", id);
	else
		r = delete_entry(b, &e, err);
	if (r == 0 && out) {
		*out = e;
		return 0;
	}
	bus_entry_release(&e);
	return r;
}

/* A waiting message to the dead letters (published there first, then
 * deleted from the inbox: a crash between the two duplicates). */
static int kill_entry(struct bus *b, const struct bus_entry *e, const char *reason,
		      const char *why, char **err)
{
	char *buf = NULL;
	size_t len;
	int r = nats_read(b, e, &buf, &len, err);
	struct nats_dead dl = {
		.agent = e->agent, .reason = reason, .error = why,
		.message_id = e->message_id, .from = e->from, .to = e->to,
		.type = e->type, .attempts = e->attempts,
	};
	char *dedup = xasprintf("dlq:%s", e->name);
	if (r == 0)
		r = nats_publish_dead(b, &dl, buf, len, dedup, err);
	if (r == 0)
		r = delete_entry(b, e, err);
	free(dedup);
	free(buf);
	return r;
}

int nats_kill(struct bus *b, const char *id, const char *why, char **err)
{
	struct bus_entry e;
	if (nats_find(b, id, &e, err) < 0)
		return -1;
	int r;
	if (e.queue != BUS_Q_INBOX && e.queue != BUS_Q_RETRY)
		r = err_set(err, "%s is in %s; only waiting or retrying messages can be "
				 "killed to the dead letters", id, bus_queue_name(e.queue));
	else
		r = kill_entry(b, &e, "killed", why ? why : "killed by the operator", err);
	bus_entry_release(&e);
	return r;
}

int nats_requeue(struct bus *b, const char *id, const char *json, size_t len,
		 char **err)
{
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	if (msg_parse(json, len, &m, &errs) < 0) {
		char *j = msg_errors_join(&errs);
		msg_errors_release(&errs);
		err_set(err, "edited message is invalid: %s", j);
		free(j);
		return -1;
	}
	struct bus_entry e;
	memset(&e, 0, sizeof(e));
	int r = nats_find(b, id, &e, err);
	if (r == 0 && e.queue != BUS_Q_DEAD)
		r = err_set(err, "%s is not a dead letter (it is in %s)", id,
			    bus_queue_name(e.queue));
	if (r == 0 && !strcmp(m->to, "broadcast"))
		r = err_set(err, "cannot requeue to broadcast; address one agent");
	if (r == 0)
		r = queue_fresh(b, m, m->to, err);
	if (r == 0)
		r = delete_entry(b, &e, err);
	if (e.name)
		bus_entry_release(&e);
	msg_free(&m);
	return r;
}

int nats_sweep(struct bus *b, const char *agent, char **err)
{
	/* Nothing to do: the server gives back expired leases (AckWait) and
	 * redelivers nacked messages when their backoff ends. */
	(void)b;
	(void)agent;
	(void)err;
	return 0;
}

/* A waiting message past retention, dropped: recorded in the drop stream
 * as an expired one is, then deleted. 1 when it is not a readable
 * message (then it is a dead letter after all). */
static int gc_drop(struct bus *b, const struct bus_entry *e, char **err)
{
	struct msg *m = NULL;
	char *buf = NULL;
	size_t len;
	if (nats_read(b, e, &buf, &len, err) < 0)
		return -1;
	int r = msg_parse(buf, len, &m, NULL) < 0 ? 1 : 0;
	free(buf);
	char *dedup = xasprintf("drop:%s", e->name);
	if (r == 0)
		r = nats_publish_drop(b, m, e->agent, "retention", dedup, err);
	if (r == 0)
		r = delete_entry(b, e, err);
	free(dedup);
	msg_free(&m);
	return r;
}

int nats_gc(struct bus *b, bool dry_run, int64_t now_ns,
	    void (*report)(void *ctx, const char *what, const char *path),
	    void *ctx, char **err)
{
	/* Dead letters expire by their stream's 30-day max age and failure
	 * records likewise; acknowledged messages are not kept. What is left:
	 * messages waiting over 24 hours. A heartbeat or status message is
	 * dropped and counted, a reply to the operator is taken as read (as
	 * an ack would, it leaves the stream), the rest go to the dead
	 * letters. */
	struct bus_entry *v;
	size_t n;
	if (nats_list(b, BUS_Q_INBOX, NULL, true, &v, &n, err) < 0)
		return -1;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (now_ns - v[i].enqueued_ns <= 86400LL * 1000000000LL)
			continue;
		enum bus_gc_fate f = bus_gc_fate(v[i].agent, v[i].type);
		if (f == BUS_GC_FATE_DROP && !dry_run && (r = gc_drop(b, &v[i], err)) == 1) {
			f = BUS_GC_FATE_DEAD;
			r = 0;
		} else if (f == BUS_GC_FATE_READ && !dry_run) {
			r = delete_entry(b, &v[i], err);
		}
		if (r < 0)
			break;
		if (report)
			report(ctx, f == BUS_GC_FATE_DROP ? BUS_GC_DROPPED :
				    f == BUS_GC_FATE_READ ? BUS_GC_READ : BUS_GC_DEAD,
			       v[i].path);
		if (f == BUS_GC_FATE_DEAD && !dry_run)
			r = kill_entry(b, &v[i], "retention",
				       "waited in the inbox over 24 hours", err);
	}
	bus_entries_free(v, n);
	return r;
}
