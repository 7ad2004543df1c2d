/* View 3, queues: one inbox, the claimed messages, the dead letters
 * grouped by reason, or the trash; a detail pane; retry, delete (into the
 * trash), kill, restore (from the trash) on the marked set. */
#include <curses.h>
#include <langinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/util.h"
#include "tui/console.h"
#include "tui/view_queues.h"
#include "core/banned.h"

/* trash_none: the transport's name when it keeps no trash (NATS), else
 * NULL. */
static void queue_title(enum queue_kind kind, const char *agent, const char *trash_none,
			char *buf, size_t size)
{
	if (kind == QUEUE_DEAD)
		snprintf(buf, size, "dead letters");
	else if (kind == QUEUE_PROCESSED)
		snprintf(buf, size, "processed (read-only)");
	else if (kind == QUEUE_TRASH && trash_none)
		snprintf(buf, size, "trash (none on the %s transport: a delete there is permanent)",
			 trash_none);
	else if (kind == QUEUE_TRASH)
		snprintf(buf, size, "trash (deleted, kept %d days; R restores)", BUS_TRASH_DAYS);
	else if (kind == QUEUE_PROCESSING)
		snprintf(buf, size, "processing%s%s", agent[0] ? " of " : "", agent);
	else
		snprintf(buf, size, "inbox of %s", agent);
}

/* Columns. The message id takes what the others leave (at most
 * QCOL_ID_MAX), cut in the middle when longer, so that at 80 columns every
 * column shows; header and rows come from the same widths, so values start
 * under their headers. Rows are drawn from column 1 (column 0 is the
 * mark), the header from column 0: hence its leading space. */
#define QCOL_ID_MAX 56
#define QCOL_ID_MIN 16
#define QCOL_TYPE 18
#define QCOL_FROM 16
#define QCOL_ORIG 16
#define QCOL_PRIO 6
#define QCOL_TRIES 5
#define QCOL_AGE 5
#define QCOL_LEASE 6 /* processing: the time left on the lease */
#define QCOL_WHERE 22 /* trash: where it was deleted from */

/* The id column's width for a screen cols wide. */
static int queues_idw(enum queue_kind kind, int cols)
{
	int rest = kind == QUEUE_DEAD ? 2 + 1 + QCOL_TYPE + 1 + QCOL_ORIG + 1 + QCOL_FROM + 1 + QCOL_AGE :
		   kind == QUEUE_TRASH ? 1 + QCOL_TYPE + 1 + QCOL_FROM + 1 + QCOL_WHERE + 1 + QCOL_AGE :
		   1 + QCOL_TYPE + 1 + QCOL_FROM + 1 + QCOL_PRIO + 1 + QCOL_TRIES + 1 + QCOL_AGE +
			   (kind == QUEUE_PROCESSING ? 1 + QCOL_LEASE : 0);
	int w = cols - 1 - rest;
	return w > QCOL_ID_MAX ? QCOL_ID_MAX : w < QCOL_ID_MIN ? QCOL_ID_MIN : w;
}

/* s in at most w columns (ids are ASCII): the head and the tail kept, ".."
 * between them when cut. The tail gets two thirds: madf's ids end in their
 * nonce and counter (what tells two apart), and begin with the sender's
 * name, which the FROM column shows anyway. */
static void queues_mid(const char *s, int w, char *buf, size_t size)
{
	size_t n = strlen(s), max = (size_t)w;
	if (n <= max || max < 6) {
		snprintf(buf, size, "%.*s", w, s);
		return;
	}
	size_t head = (max - 2) / 3, tail = max - 2 - head;
	snprintf(buf, size, "%.*s..%s", (int)head, s, s + n - tail);
}

static void queues_header(enum queue_kind kind, int idw, char *buf, size_t size)
{
	if (kind == QUEUE_DEAD)
		snprintf(buf, size, "   %-*s %-*s %-*s %-*s %s", idw, "MESSAGE ID", QCOL_TYPE, "TYPE",
			 QCOL_ORIG, "ORIGINAL INBOX", QCOL_FROM, "FROM", "AGE");
	else if (kind == QUEUE_TRASH)
		snprintf(buf, size, " %-*s %-*s %-*s %-*s %s", idw, "MESSAGE ID", QCOL_TYPE, "TYPE",
			 QCOL_FROM, "FROM", QCOL_WHERE, "DELETED FROM", "AGO");
	else if (kind == QUEUE_PROCESSING)
		snprintf(buf, size, " %-*s %-*s %-*s %-*s %-*s %-*s %s", idw, "MESSAGE ID",
			 QCOL_TYPE, "TYPE", QCOL_FROM, "FROM", QCOL_PRIO, "PRIO", QCOL_TRIES, "TRIES",
			 QCOL_AGE, "AGE", "LEASE");
	else
		snprintf(buf, size, " %-*s %-*s %-*s %-*s %-*s %s", idw, "MESSAGE ID", QCOL_TYPE,
			 "TYPE", QCOL_FROM, "FROM", QCOL_PRIO, "PRIO", QCOL_TRIES, "TRIES", "AGE");
}

/* A claim's LEASE: the time left until its lease runs out, in at most
 * QCOL_LEASE columns ("58s", "4m58s", "2h05m"); "over" once it ran out (as
 * madf ls processing says: its handler renews it no more, held past
 * MADF_LEASE_MAX_S, or its consumer died or stopped), "-" when not known
 * (on NATS before its first renewal). A handler at work keeps it near
 * MADF_LEASE_S; once one has held its claim MADF_LEASE_MAX_S (hung), it
 * runs down to "over" and the message is delivered again. */
static void queues_lease(int64_t lease_ns, int64_t now, char *buf, size_t size)
{
	if (!lease_ns) {
		snprintf(buf, size, "-");
		return;
	}
	int64_t s = (lease_ns - now) / 1000000000LL;
	if (lease_ns <= now)
		snprintf(buf, size, "over");
	else if (s < 60)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, size, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 100 * 3600LL)
		snprintf(buf, size, "%lldh%02lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
	else
		snprintf(buf, size, "%lldd", (long long)(s / 86400));
}

/* The last listing, so that the view re-reads the bus only when it
 * changed. Reading a queue means reading every message file (and every
 * dead letter's sidecar): 100,000 dead letters take seconds, far too long
 * for a timer tick or a keypress. So the listing is kept until the bus
 * monitor reports a change (c->bus_gen), the queue shown changes, an
 * action ran, or QUEUES_RELIST_S passed (the ages). Without inotify it is
 * read on every refresh, as before.
 * Per row it keeps where the message is and why it died, so the detail
 * pane reads one file instead of searching the bus (bus_find lists every
 * queue) on each cursor move. Directory, reason, error and original inbox
 * repeat across rows: they are interned in the listing's pool. */
#define QUEUES_RELIST_S 60
/* The claimed messages, every few seconds: their LEASE column counts down. */
#define QUEUES_RELIST_PROCESSING_S 3


static uint64_t dl_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void dl_pool_rehash(struct dl_pool *p)
{
	free(p->slot);
	p->nslot = p->nslot ? p->nslot * 2 : 64;
	p->slot = xcalloc(p->nslot, sizeof(*p->slot));
	for (size_t k = 0; k < p->n; k++) {
		size_t i = dl_hash(p->v[k]) & (p->nslot - 1);
		while (p->slot[i])
			i = (i + 1) & (p->nslot - 1);
		p->slot[i] = (uint32_t)(k + 1);
	}
}

static const char *dl_pool_intern(struct dl_pool *p, const char *s)
{
	if (!s)
		return NULL;
	if ((p->n + 1) * 2 > p->nslot)
		dl_pool_rehash(p);
	size_t i = dl_hash(s) & (p->nslot - 1);
	for (; p->slot[i]; i = (i + 1) & (p->nslot - 1))
		if (!strcmp(p->v[p->slot[i] - 1], s))
			return p->v[p->slot[i] - 1];
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n] = xstrdup(s);
	p->slot[i] = (uint32_t)(p->n + 1);
	return p->v[p->n++];
}

static void dl_pool_release(struct dl_pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	free(p->slot);
	memset(p, 0, sizeof(*p));
}





static void queues_note_shown(struct queues *q)
{
	if (q->qshown.any && q->qshown.kind == q->kind && !strcmp(q->qshown.agent, q->agent))
		return;
	q->qshown.any = q->qshown.switched = true;
	q->qshown.kind = q->kind;
	util_strlcpy(q->qshown.agent, q->agent, sizeof(q->qshown.agent));
}

/* Rows of a queue just switched to (after console_rows_clear): the cursor
 * at the top, no marks carried over from the queue left. */
static void queues_fresh_list(struct queues *q, struct console_rows *r)
{
	if (!q->qshown.switched)
		return;
	q->qshown.switched = false;
	free(r->sel_id);
	r->sel_id = NULL;
	for (size_t i = 0; i < r->nkeep; i++)
		free(r->keep[i]);
	r->nkeep = 0;
	r->keep_pending = false;
	for (size_t i = 0; i < r->n; i++)
		r->v[i].marked = false;
	r->sel = r->top = 0;
}

static void queues_forget(struct queues *q)
{
	for (size_t i = 0; i < q->ql.n; i++)
		free(q->ql.row[i].name);
	q->ql.n = 0;
	q->ql.valid = false;
	dl_pool_release(&q->ql.xpool);
}

/* Row i (just added) has no message behind it (a "listing..." line). */
static void queues_note_blank(struct queues *q, size_t i)
{
	if (i >= q->ql.cap) {
		q->ql.cap = q->ql.cap ? q->ql.cap * 2 : 256;
		while (q->ql.cap <= i)
			q->ql.cap *= 2;
		q->ql.row = xrealloc(q->ql.row, q->ql.cap * sizeof(*q->ql.row));
	}
	while (q->ql.n <= i)
		memset(&q->ql.row[q->ql.n++], 0, sizeof(*q->ql.row));
}

/* ---- long queues: listed in the background ----
 * 100,000 dead letters take a few hundred milliseconds to list even from
 * the bus's index, and an inbox of 1,000 messages ~15 ms: more than a
 * keypress may. Past DLQ_SYNC_MAX dead letters or QUEUE_SYNC_MAX messages
 * (as the monitor counts them) a worker thread lists them, sorts them and
 * makes the rows, touching nothing the UI thread uses; the UI thread keeps
 * the rows it has until the worker says (an eventfd in the console's poll)
 * that the new ones are ready, then swaps them in. A listing of a queue
 * left meanwhile is dropped when it ends; no key waits for it. */
#define DLQ_SYNC_MAX 5000
/* The same for the other queues, past this many messages: each is a file
 * to open and parse (about 12 us each here), so 1,000 take ~15 ms. */
#define QUEUE_SYNC_MAX 500

struct dl_item {
	char *name;
	const char *reason, *error, *orig, *from, *type; /* interned in the pool */
	char *mid;            /* NULL: the message id is in the name */
	unsigned short mid_at, mid_len; /* where in the name */
	int64_t enqueued_ns;
};


struct dl_list {
	struct dl_item *v;
	size_t n, cap;
	struct dl_pool *pool;
	const char *last_in[6]; /* the last string interned per field */
	const char *dir;
};

static const char *dl_intern(struct dl_list *l, int k, const char *s)
{
	if (!s)
		return NULL;
	if (l->last_in[k] && !strcmp(l->last_in[k], s))
		return l->last_in[k];
	return l->last_in[k] = dl_pool_intern(l->pool, s);
}

static void dl_take(void *ctx, const struct bus_entry *e)
{
	struct dl_list *l = ctx;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	struct dl_item *it = &l->v[l->n++];
	size_t plen = strlen(e->path), nlen = strlen(e->name);
	if (!l->dir && plen > nlen + 1) {
		char *d = xstrndup(e->path, plen - nlen - 1);
		l->dir = dl_pool_intern(l->pool, d);
		free(d);
	}
	it->name = xstrdup(e->name);
	const char *at = e->message_id ? strstr(e->name, e->message_id) : NULL;
	size_t mlen = e->message_id ? strlen(e->message_id) : 0;
	it->mid = NULL;
	it->mid_at = it->mid_len = 0;
	if (at && mlen < 65535 && (size_t)(at - e->name) < 65535) {
		it->mid_at = (unsigned short)(at - e->name);
		it->mid_len = (unsigned short)mlen;
	} else if (e->message_id) {
		it->mid = xstrdup(e->message_id);
	}
	it->reason = dl_intern(l, 0, e->reason ? e->reason : "?");
	it->error = dl_intern(l, 1, e->error);
	it->orig = dl_intern(l, 2, e->original_inbox);
	it->from = dl_intern(l, 3, e->from);
	it->type = dl_intern(l, 4, e->type);
	it->enqueued_ns = e->enqueued_ns;
}

static int dl_cmp(const void *a, const void *b)
{
	const struct dl_item *x = a, *y = b;
	if (x->reason != y->reason) {
		int r = strcmp(x->reason ? x->reason : "?", y->reason ? y->reason : "?");
		if (r)
			return r;
	}
	if (x->enqueued_ns != y->enqueued_ns)
		return x->enqueued_ns < y->enqueued_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The message id shown for an item: its own, or the name's id part. */
static const char *dl_id(const struct dl_item *it, char *buf, size_t size)
{
	if (it->mid)
		return it->mid;
	if (!it->mid_len)
		return it->name;
	snprintf(buf, size, "%.*s", (int)it->mid_len, it->name + it->mid_at);
	return buf;
}

static void dl_row(struct dl_result *res, const char *id, enum theme_slot slot,
		   const char *text)
{
	if (res->n == res->cap) {
		res->cap = res->cap ? res->cap * 2 : 1024;
		res->rows = xrealloc(res->rows, res->cap * sizeof(*res->rows));
		res->q = xrealloc(res->q, res->cap * sizeof(*res->q));
	}
	struct console_row *row = &res->rows[res->n];
	row->text = util_sanitize(text, strlen(text), false);
	row->id = id ? xstrdup(id) : NULL;
	row->slot = slot;
	row->marked = false;
	memset(&res->q[res->n], 0, sizeof(res->q[0]));
	res->n++;
}

/* Lists the dead letters into res: the worker's whole job (or the UI
 * thread's, for a few). Touches nothing but bus and res. */
static void dl_build(struct bus *bus, int idw, struct dl_result *res)
{
	struct dl_list l = { .pool = &res->pool };
	if (bus_each_dead(bus, dl_take, &l, &res->err) < 0 && !res->err)
		res->err = xstrdup("cannot list the dead letters");
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), dl_cmp);
	int64_t now = util_now_ns();
	char idbuf[MSG_ID_MAX + 1], text[512], shown[MSG_ID_MAX + 1];
	for (size_t i = 0; i < l.n; i++) {
		struct dl_item *it = &l.v[i];
		if (i == 0 || it->reason != l.v[i - 1].reason) {
			size_t k = i;
			while (k < l.n && l.v[k].reason == it->reason)
				k++;
			snprintf(text, sizeof(text), "%s (%zu)", it->reason ? it->reason : "?", k - i);
			dl_row(res, NULL, SLOT_HEADING, text);
		}
		char age[16] = "-";
		if (it->enqueued_ns)
			console_age(now - it->enqueued_ns, age, sizeof(age));
		const char *id = dl_id(it, idbuf, sizeof(idbuf));
		queues_mid(id, idw, shown, sizeof(shown));
		snprintf(text, sizeof(text), "  %-*s %-*.*s %-*.*s %-*.*s %s", idw, shown,
			 QCOL_TYPE, QCOL_TYPE, it->type ? it->type : "?", QCOL_ORIG, QCOL_ORIG,
			 it->orig ? it->orig : "?", QCOL_FROM, QCOL_FROM, it->from ? it->from : "?",
			 age);
		dl_row(res, id, SLOT_NORMAL, text);
		struct queues_row *qr = &res->q[res->n - 1];
		qr->dead = true;
		qr->dir = l.dir;
		qr->reason = it->reason;
		qr->error = it->error;
		qr->orig = it->orig;
		if (l.dir) {
			qr->name = it->name; /* taken */
			it->name = NULL;
		}
		free(it->name);
		free(it->mid);
	}
	free(l.v);
}

/* Lists an inbox, the claimed messages or the processed ones into res,
 * as dl_build does the dead letters. Touches nothing but bus and res. */
static void ls_build(struct bus *bus, enum queue_kind kind, const char *agent, int idw,
		     struct dl_result *res)
{
	enum bus_queue q = kind == QUEUE_PROCESSING ? BUS_Q_PROCESSING :
			   kind == QUEUE_PROCESSED ? BUS_Q_PROCESSED : BUS_Q_INBOX;
	struct bus_entry *v = NULL;
	size_t n = 0;
	if (bus_list(bus, q, agent[0] && q != BUS_Q_PROCESSED ? agent : NULL, true, &v, &n,
		     &res->err) < 0) {
		if (!res->err)
			res->err = xstrdup("cannot list the queue");
		return;
	}
	int64_t now = util_now_ns();
	char text[768], shown[300];
	for (size_t i = 0; i < n; i++) {
		struct bus_entry *e = &v[i];
		char age[16] = "-";
		if (e->enqueued_ns)
			console_age(now - e->enqueued_ns, age, sizeof(age));
		const char *id = e->message_id ? e->message_id : e->name;
		queues_mid(id, idw, shown, sizeof(shown));
		/* AGE last, or AGE and LEASE for the claimed messages */
		char tail[40], lease[16];
		if (kind == QUEUE_PROCESSING) {
			queues_lease(e->lease_ns, now, lease, sizeof(lease));
			snprintf(tail, sizeof(tail), "%-*s %s", QCOL_AGE, age, lease);
		} else {
			snprintf(tail, sizeof(tail), "%s", age);
		}
		snprintf(text, sizeof(text), "%-*s %-*.*s %-*.*s %-*s %-*d %s", idw, shown, QCOL_TYPE,
			 QCOL_TYPE, e->type ? e->type : "?", QCOL_FROM, QCOL_FROM,
			 e->from ? e->from : "?", QCOL_PRIO, msg_priority_name(e->priority),
			 QCOL_TRIES, e->attempts, tail);
		dl_row(res, id, SLOT_NORMAL, text);
		struct queues_row *qr = &res->q[res->n - 1];
		size_t plen = e->path ? strlen(e->path) : 0, nlen = e->name ? strlen(e->name) : 0;
		if (plen > nlen + 1 && !strcmp(e->path + plen - nlen, e->name) &&
		    e->path[plen - nlen - 1] == '/') {
			e->path[plen - nlen - 1] = 0;
			qr->dir = dl_pool_intern(&res->pool, e->path);
			e->path[plen - nlen - 1] = '/';
			qr->agent = dl_pool_intern(&res->pool, e->agent);
			qr->name = e->name; /* taken */
			e->name = NULL;
		}
	}
	bus_entries_free(v, n);
}

/* Lists the trash into res: the last deleted first, with where each was
 * deleted from. */
static void tr_build(struct bus *bus, int idw, struct dl_result *res)
{
	struct bus_trash_entry *v = NULL;
	size_t n = 0;
	if (bus_trash_list(bus, &v, &n, &res->err) < 0) {
		if (!res->err)
			res->err = xstrdup("cannot list the trash");
		return;
	}
	int64_t now = util_now_ns();
	char text[768], shown[300], where[160];
	for (size_t i = 0; i < n; i++) {
		struct bus_trash_entry *e = &v[i];
		char age[16] = "-";
		if (e->deleted_ns)
			console_age(now - e->deleted_ns, age, sizeof(age));
		if (e->agent)
			snprintf(where, sizeof(where), "%s/%s", bus_queue_name(e->queue), e->agent);
		else
			snprintf(where, sizeof(where), "%s%s%s", bus_queue_name(e->queue),
				 e->reason ? ": " : "", e->reason ? e->reason : "");
		const char *id = e->message_id ? e->message_id : e->name;
		queues_mid(id, idw, shown, sizeof(shown));
		snprintf(text, sizeof(text), "%-*s %-*.*s %-*.*s %-*.*s %s", idw, shown, QCOL_TYPE,
			 QCOL_TYPE, e->type ? e->type : "?", QCOL_FROM, QCOL_FROM,
			 e->from ? e->from : "?", QCOL_WHERE, QCOL_WHERE, where, age);
		dl_row(res, id, SLOT_NORMAL, text);
		struct queues_row *qr = &res->q[res->n - 1];
		size_t plen = strlen(e->path), nlen = strlen(e->name);
		if (plen > nlen + 1) {
			e->path[plen - nlen - 1] = 0;
			qr->dir = dl_pool_intern(&res->pool, e->path);
			qr->orig = dl_pool_intern(&res->pool, where);
			qr->name = e->name; /* taken */
			e->name = NULL;
		}
	}
	bus_trash_entries_free(v, n);
}

static void lst_build(struct bus *bus, enum queue_kind kind, const char *agent, int idw,
		      struct dl_result *res)
{
	if (kind == QUEUE_DEAD)
		dl_build(bus, idw, res);
	else if (kind == QUEUE_TRASH)
		tr_build(bus, idw, res);
	else
		ls_build(bus, kind, agent, idw, res);
}

static void dl_result_release(struct dl_result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		free(res->rows[i].text);
		free(res->rows[i].id);
		free(res->q[i].name);
	}
	free(res->rows);
	free(res->q);
	dl_pool_release(&res->pool);
	free(res->err);
	memset(res, 0, sizeof(*res));
}


/* The eventfd both background jobs (the listing, a bulk action) wake the
 * console's poll with; opened on first use. */
bool queues_efd_open(struct queues *q)
{
	if (!q->dj.efd_open) {
		q->dj.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		q->dj.efd_open = q->dj.efd >= 0;
	}
	return q->dj.efd_open;
}

void queues_efd_poke(struct queues *q)
{
	uint64_t one = 1;
	ssize_t w = write(q->dj.efd, &one, sizeof(one));
	(void)w;
}

static void *dl_worker(void *arg)
{
	struct queues *q = arg;
	lst_build(q->dj.bus, q->dj.kind, q->dj.agent, q->dj.idw, &q->dj.res);
	atomic_store(&q->dj.done, true);
	queues_efd_poke(q);
	return NULL;
}

static int queues_fd(const struct view *v)
{
	const struct queues *q = v->data;
	return (q->dj.running || q->aj.running) && q->dj.efd_open ? q->dj.efd : -1;
}

static unsigned queues_wake(struct console *c, struct view *v)
{
	struct queues *q = v->data;
	uint64_t one;
	ssize_t k = read(q->dj.efd, &one, sizeof(one));
	(void)k;
	/* every message handled: the worker is only setting done, so wait
	 * for it rather than say "N of N ..." */
	if (q->aj.running && !act_finish(c, q, atomic_load(&q->aj.progress) == q->aj.n))
		act_progress(c, q);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

/* Joins a worker that has finished (or waits for it when wait). */
static bool dl_join(struct queues *q, bool wait)
{
	if (!q->dj.running || (!wait && !atomic_load(&q->dj.done)))
		return false;
	pthread_join(q->dj.th, NULL);
	q->dj.running = false;
	return true;
}

/* The listing in res becomes the view's rows; the marks and the selection
 * stay on the same messages. */
static unsigned dl_swap(struct console *c, struct queues *q, struct console_rows *r,
			struct dl_result *res,
			enum queue_kind kind, const char *agent, unsigned long gen,
			uint64_t dead_gen, int64_t at_ns)
{
	if (res->err) {
		console_status(c, true, "bus: %s", res->err);
		free(res->err);
		res->err = NULL;
	}
	queues_forget(q);
	console_rows_clear(r);
	free(r->v);
	r->v = res->rows;
	r->n = res->n;
	r->cap = res->cap;
	free(q->ql.row);
	q->ql.row = res->q;
	q->ql.n = q->ql.cap = res->n;
	dl_pool_release(&q->ql.xpool);
	q->ql.xpool = res->pool;
	memset(res, 0, sizeof(*res));
	q->ql.valid = true;
	q->ql.kind = kind;
	util_strlcpy(q->ql.agent, agent, sizeof(q->ql.agent));
	q->ql.gen = gen;
	q->ql.dead_gen = dead_gen;
	q->ql.at_ns = at_ns;
	q->ql.idw = queues_idw(kind, COLS);
	r->hash = 0;
	queues_fresh_list(q, r);
	return console_rows_done(c, r);
}

static void queues_release(struct console *c, struct view *v)
{
	struct queues *q = v->data;
	if (!q)
		return;
	act_finish(c, q, true); /* a bulk action ends, journalled, before the console */
	dl_join(q, true);
	dl_result_release(&q->dj.res);
	if (q->dj.efd_open)
		close(q->dj.efd);
	q->dj.efd_open = false;
	queues_forget(q);
	free(q->ql.row);
	free(q->detail);
	free(q);
}

/* How many messages the queue shown holds, as the monitor counts them;
 * 0 when it does not count them (the processed ones). */
static size_t queues_count(const struct console *c, const struct queues *q)
{
	if (q->kind == QUEUE_DEAD)
		return c->stats.dead_letter;
	if (q->kind == QUEUE_PROCESSED || q->kind == QUEUE_TRASH)
		return 0;
	if (q->kind == QUEUE_PROCESSING && !q->agent[0])
		return c->stats.processing;
	for (size_t i = 0; i < c->stats.nagents; i++)
		if (!strcmp(c->stats.agents[i].agent, q->agent))
			return q->kind == QUEUE_PROCESSING ? c->stats.agents[i].processing :
			       c->stats.agents[i].depth;
	return 0;
}

static size_t queues_sync_max(const struct queues *q)
{
	const char *env = getenv(q->kind == QUEUE_DEAD ? "MADF_DLQ_SYNC_MAX" :
				 "MADF_QUEUE_SYNC_MAX");
	if (env && *env)
		return (size_t)strtoul(env, NULL, 10);
	return q->kind == QUEUE_DEAD ? DLQ_SYNC_MAX : QUEUE_SYNC_MAX;
}

static void queues_what(const struct queues *q, size_t n, char *buf, size_t size)
{
	if (q->kind == QUEUE_DEAD)
		snprintf(buf, size, "%zu dead letters", n);
	else if (q->kind == QUEUE_TRASH)
		snprintf(buf, size, "%zu deleted messages", n);
	else if (q->kind == QUEUE_INBOX)
		snprintf(buf, size, "%zu messages of %s", n, q->agent);
	else
		snprintf(buf, size, "%zu messages", n);
}

/* The rows shown while the queue is being listed: older rows of it, else one "listing N ..." line. */
static unsigned queues_pending_rows(struct console *c, struct queues *q, struct console_rows *r,
				    size_t n)
{
	if (q->ql.valid && q->ql.kind == q->kind && !strcmp(q->ql.agent, q->agent))
		return r->hash ? 0 : console_rows_done(c, r); /* older rows of it */
	char what[128];
	queues_what(q, n, what, sizeof(what));
	queues_forget(q);
	console_rows_clear(r);
	queues_fresh_list(q, r);
	console_rows_add(r, NULL, SLOT_DIM, "listing %s...", what);
	queues_note_blank(q, r->n - 1);
	q->ql.kind = q->kind;
	util_strlcpy(q->ql.agent, q->agent, sizeof(q->ql.agent));
	return console_rows_done(c, r);
}

/* Lists the queue shown: on the spot up to its sync limit, past it on the
 * worker thread (the rows shown stay until its rows are swapped in). */
static unsigned queues_list(struct console *c, struct queues *q, struct console_rows *r)
{
	bool same = q->dj.kind == q->kind && !strcmp(q->dj.agent, q->agent);
	size_t n = queues_count(c, q);
	char what[128];
	if (q->dj.running) {
		if (!dl_join(q, false))
			/* still listing: this queue's rows come when it is done;
			 * another queue's listing is dropped then */
			return same ? (r->hash ? 0 : console_rows_done(c, r)) :
				      queues_pending_rows(c, q, r, n);
		if (same) {
			unsigned f = dl_swap(c, q, r, &q->dj.res, q->dj.kind, q->dj.agent, q->dj.gen, q->dj.dead_gen,
					     q->dj.at_ns);
			/* "listing..." replaced, but not what an action said since */
			if (!strncmp(c->status, "listing ", 8)) {
				queues_what(q, r->n, what, sizeof(what));
				if (q->kind == QUEUE_DEAD)
					console_status(c, false, "dead letters: %zu listed",
						       c->stats.dead_letter);
				else
					console_status(c, false, "%s listed", what);
			}
			return f;
		}
		dl_result_release(&q->dj.res); /* another queue's, not wanted now */
	}
	q->ql.dirty = false;
	if (n < queues_sync_max(q) || !c->mon || bus_monitor_fd(c->mon) < 0 || !queues_efd_open(q)) {
		struct dl_result res = { 0 };
		lst_build(c->bus, q->kind, q->agent, queues_idw(q->kind, COLS), &res);
		return dl_swap(c, q, r, &res, q->kind, q->agent, c->bus_gen, c->stats.dead_gen,
			       util_mono_ns());
	}
	q->dj.bus = c->bus;
	q->dj.kind = q->kind;
	q->dj.idw = queues_idw(q->kind, COLS);
	util_strlcpy(q->dj.agent, q->agent, sizeof(q->dj.agent));
	q->dj.gen = c->bus_gen;
	q->dj.dead_gen = c->stats.dead_gen;
	q->dj.at_ns = util_mono_ns();
	atomic_store(&q->dj.done, false);
	memset(&q->dj.res, 0, sizeof(q->dj.res));
	if (pthread_create(&q->dj.th, NULL, dl_worker, q) != 0) {
		struct dl_result res = { 0 };
		lst_build(c->bus, q->kind, q->agent, queues_idw(q->kind, COLS), &res);
		return dl_swap(c, q, r, &res, q->kind, q->agent, c->bus_gen, c->stats.dead_gen,
			       util_mono_ns());
	}
	q->dj.running = true;
	unsigned f = queues_pending_rows(c, q, r, n);
	queues_what(q, n, what, sizeof(what));
	if (!c->status[0] || !strncmp(c->status, "dead letters: ", 14) ||
	    !strncmp(c->status, "listing ", 8) || strstr(c->status, " listed"))
		console_status(c, false, "listing %s in the background", what);
	return f;
}

static unsigned queues_refresh(struct console *c, struct view *v, bool shown)
{
	if (!shown)
		return 0;
	struct queues *q = v->data;
	struct console_rows *r = &v->rows;
	if (q->kind == QUEUE_INBOX && !q->agent[0])
		util_strlcpy(q->agent, "product_manager", sizeof(q->agent));
	queues_note_shown(q);
	if (q->ql.valid && !q->ql.dirty && c->mon && bus_monitor_fd(c->mon) >= 0 &&
	    !(q->dj.running && atomic_load(&q->dj.done)) &&
	    q->ql.kind == q->kind && !strcmp(q->ql.agent, q->agent) &&
	    /* the dead letters are listed again only when they changed */
	    (q->kind == QUEUE_DEAD ? q->ql.dead_gen == c->stats.dead_gen : q->ql.gen == c->bus_gen) &&
	    util_mono_ns() - q->ql.at_ns < (q->kind == QUEUE_PROCESSING ? QUEUES_RELIST_PROCESSING_S :
					    QUEUES_RELIST_S) * 1000000000LL) {
		/* the same data: only the filter or the view may have changed
		 * (they reset the hash) */
		return r->hash ? 0 : console_rows_done(c, r);
	}
	return queues_list(c, q, r);
}

/* The entry of row i from the last listing, without searching the bus;
 * false when not known (then bus_find). Fields borrowed, but path. */
static bool queues_known(const struct queues *q, size_t i, struct bus_entry *e)
{
	if (!q->ql.valid || i >= q->ql.n || !q->ql.row[i].name)
		return false;
	const struct queues_row *qr = &q->ql.row[i];
	memset(e, 0, sizeof(*e));
	e->queue = qr->dead ? BUS_Q_DEAD : q->ql.kind == QUEUE_PROCESSING ? BUS_Q_PROCESSING :
		   q->ql.kind == QUEUE_PROCESSED ? BUS_Q_PROCESSED : BUS_Q_INBOX;
	e->name = qr->name;
	e->agent = (char *)(uintptr_t)qr->agent;
	e->reason = (char *)(uintptr_t)qr->reason;
	e->error = (char *)(uintptr_t)qr->error;
	e->original_inbox = (char *)(uintptr_t)qr->orig;
	e->path = xasprintf("%s/%s", qr->dir, qr->name);
	return true;
}

/* The detail of the current message (row index row): pretty JSON, the
 * dead-letter reason. */
static void queues_detail(struct console *c, struct queues *q, const char *id, size_t row)
{
	if (id && !strcmp(id, q->detail_id) && q->detail)
		return;
	free(q->detail);
	q->detail = NULL;
	util_strlcpy(q->detail_id, id ? id : "", sizeof(q->detail_id));
	if (!id)
		return;
	struct bus_entry e;
	char *err = NULL, *json = NULL;
	size_t len = 0;
	memset(&e, 0, sizeof(e));
	struct sbuf b;
	sbuf_init(&b);
	bool known = queues_known(q, row, &e);
	if (known && bus_read(c->bus, &e, &json, &len, NULL) < 0) {
		/* moved since the listing */
		free(e.path);
		memset(&e, 0, sizeof(e));
		known = false;
	}
	if (!known && (bus_find(c->bus, id, &e, &err) < 0 ||
		       bus_read(c->bus, &e, &json, &len, &err) < 0)) {
		sbuf_addf(&b, "(%s)", err ? err : "gone");
		free(err);
	} else if (q->kind == QUEUE_TRASH && known) {
		sbuf_addf(&b, "trash: deleted from %s   file: %s\n", e.original_inbox ?
			  e.original_inbox : "?", e.name);
		cJSON *j = cJSON_ParseWithLength(json, len);
		char *pretty = j ? json_pretty(j) : NULL;
		sbuf_addstr(&b, pretty ? pretty : json);
		free(pretty);
		cJSON_Delete(j);
	} else {
		sbuf_addf(&b, "queue: %s%s%s   file: %s\n", bus_queue_name(e.queue), e.agent ? "/" : "",
			  e.agent ? e.agent : "", e.name);
		if (e.reason || e.error)
			sbuf_addf(&b, "dead-letter reason: %s\nerror: %s\noriginal inbox: %s\n",
				  e.reason ? e.reason : "?", e.error ? e.error : "?",
				  e.original_inbox ? e.original_inbox : "?");
		cJSON *j = cJSON_ParseWithLength(json, len);
		char *pretty = j ? json_pretty(j) : NULL;
		sbuf_addstr(&b, pretty ? pretty : json);
		free(pretty);
		cJSON_Delete(j);
	}
	free(json);
	if (known)
		free(e.path);
	else
		bus_entry_release(&e);
	q->detail = util_sanitize(b.data, b.len, true);
	sbuf_release(&b);
}

static void queues_draw(struct console *c, struct view *v, int y0, int y1)
{
	struct queues *q = v->data;
	struct console_rows *r = &v->rows;
	char title[128], line[320];
	queue_title(q->kind, q->agent, c->bus && !bus_has_trash(c->bus) ? c->bus->t->name : NULL,
		    title, sizeof(title));
	size_t marked = 0, msgs = 0, shown = 0;
	for (size_t i = 0; i < r->n; i++) {
		marked += r->v[i].marked;
		msgs += r->v[i].id != NULL;
	}
	for (size_t k = 0; k < r->nvis; k++)
		shown += r->v[r->vis[k]].id != NULL;
	/* under a / filter: how many of them are shown (the marks count
	 * hidden rows too, as the actions take them) */
	char count[64];
	if (c->re_set)
		snprintf(count, sizeof(count), "%zu of %zu", shown, msgs);
	else
		snprintf(count, sizeof(count), "%zu", msgs);
	snprintf(line, sizeof(line), " %s: %s message%s, %zu marked   (:inbox NAME, :processing, :dlq, :processed, :trash)",
		 title, count, msgs == 1 ? "" : "s", marked);
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	int mid = y0 + 1 + (y1 - y0 - 1) / 2;
	char hdr[256];
	int idw = q->ql.valid && q->ql.kind == q->kind ? q->ql.idw : queues_idw(q->kind, COLS);
	queues_header(q->kind, idw, hdr, sizeof(hdr));
	if (q->ql.valid && q->ql.idw != queues_idw(q->kind, COLS))
		q->ql.dirty = true; /* resized: listed again for the new width */
	console_rows_draw(c, r, y0 + 1, mid, hdr);
	struct console_row *cur = console_rows_current(r);
	queues_detail(c, q, cur ? cur->id : NULL, cur ? (size_t)(cur - r->v) : 0);
	/* A plain U+2500 under UTF-8 (no alternate character set, which
	 * some multiplexers pass on as "q"), '-' otherwise. */
	const char *cs = nl_langinfo(CODESET);
	const char *rule = cs && !strcmp(cs, "UTF-8") ? "\xe2\x94\x80" : "-";
	move(mid, 0);
	for (int x = 0; x < COLS; x++)
		addstr(rule);
	int y = mid + 1;
	const char *p = q->detail ? q->detail : "";
	while (y < y1 && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *one = xstrndup(p, n);
		console_put(c, y++, 1, COLS - 1, SLOT_NORMAL, one, false);
		free(one);
		p += n + (nl ? 1 : 0);
	}
}

unsigned view_queues_show(struct console *c, enum queue_kind kind, const char *agent)
{
	struct view *v = console_view_find(c, &view_queues_ops);
	struct queues *q = v->data;
	q->kind = kind;
	if (agent)
		util_strlcpy(q->agent, agent, sizeof(q->agent));
	console_show(c, v);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

bool view_queues_shows_dead(struct console *c)
{
	struct view *v = console_view(c);
	return v->ops == &view_queues_ops && ((struct queues *)v->data)->kind == QUEUE_DEAD;
}

static void *queues_init(struct console *c)
{
	(void)c;
	return xcalloc(1, sizeof(struct queues));
}

static const struct key_binding queues_keys[] = {
	{ ' ', OP_MARK, "mark or unmark the message", false, false, "mark" },
	{ 'A', OP_MARK_ALL, "mark all shown (again: none)", false, false, "all" },
	{ 'R', OP_RETRY, "retry dead letters to their original inbox", true, true, "retry" },
	{ 'D', OP_DELETE, "delete the messages (into the trash for 30 days, R in :trash restores; for good on NATS)", true, true, "delete" },
	{ 'K', OP_KILL, "kill waiting messages to the dead letters", true, true, "kill" },
	{ 'E', OP_EDIT, "edit a dead letter in $EDITOR and requeue it (validated)", true, true, "edit" },
	{ 'T', OP_RETRY_TO, "retry dead letters to another inbox (:retry-to AGENT)", true, true, "retry-to" },
};

const struct view_ops view_queues_ops = {
	.name = "queues",
	.title = "Queues",
	.help = "queues: an inbox, processing, dead letters",
	.keys = queues_keys,
	.nkeys = ARRAY_SIZE(queues_keys),
	.init = queues_init,
	.load = queues_refresh,
	.draw = queues_draw,
	.act = queues_act,
	.applies = queues_applies,
	.fd = queues_fd,
	.wake = queues_wake,
	.release = queues_release,
};
