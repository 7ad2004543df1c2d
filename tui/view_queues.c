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
#include "core/banned.h"

static void queue_title(const struct console *c, char *buf, size_t size)
{
	if (c->qkind == QUEUE_DEAD)
		snprintf(buf, size, "dead letters");
	else if (c->qkind == QUEUE_PROCESSED)
		snprintf(buf, size, "processed (read-only)");
	else if (c->qkind == QUEUE_TRASH)
		snprintf(buf, size, "trash (deleted, kept %d days; R restores)", BUS_TRASH_DAYS);
	else if (c->qkind == QUEUE_PROCESSING)
		snprintf(buf, size, "processing%s%s", c->qagent[0] ? " of " : "", c->qagent);
	else
		snprintf(buf, size, "inbox of %s", c->qagent);
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
#define QCOL_WHERE 22 /* trash: where it was deleted from */

/* The id column's width for a screen cols wide. */
static int queues_idw(enum queue_kind kind, int cols)
{
	int rest = kind == QUEUE_DEAD ? 2 + 1 + QCOL_TYPE + 1 + QCOL_ORIG + 1 + QCOL_FROM + 1 + QCOL_AGE :
		   kind == QUEUE_TRASH ? 1 + QCOL_TYPE + 1 + QCOL_FROM + 1 + QCOL_WHERE + 1 + QCOL_AGE :
		   1 + QCOL_TYPE + 1 + QCOL_FROM + 1 + QCOL_PRIO + 1 + QCOL_TRIES + 1 + QCOL_AGE;
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
	else
		snprintf(buf, size, " %-*s %-*s %-*s %-*s %-*s %s", idw, "MESSAGE ID", QCOL_TYPE,
			 "TYPE", QCOL_FROM, "FROM", QCOL_PRIO, "PRIO", QCOL_TRIES, "TRIES", "AGE");
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
#define STR_(x) #x
#define STR(x) STR_(x)
#define BUS_TRASH_DAYS_TEXT STR(BUS_TRASH_DAYS)

/* Interned strings, owned: an open-addressing set. */
struct dl_pool {
	char **v;
	size_t n, cap;
	uint32_t *slot;
	size_t nslot;
};

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

struct queues_row {
	char *name;                  /* file name; NULL for a heading */
	const char *dir, *agent, *reason, *error, *orig; /* interned */
	bool dead;
};

static struct {
	bool valid, dirty;
	enum queue_kind kind;
	char agent[MSG_AGENT_MAX + 1];
	unsigned long gen;
	uint64_t dead_gen;       /* the dead letters: c->stats.dead_gen then */
	int64_t at_ns;
	int idw;                 /* the id column's width it was made for */
	struct queues_row *row;  /* indexed like rows[VIEW_QUEUES].v */
	size_t n, cap;
	struct dl_pool xpool;    /* the listing's strings */
} ql;

/* The queue shown last. The selection and the marks belong to messages:
 * a list of another queue starts at its top with nothing marked, rather
 * than at the row number the cursor had in the queue left. */
static struct {
	bool any, switched;
	enum queue_kind kind;
	char agent[MSG_AGENT_MAX + 1];
} qshown;

static void queues_note_shown(const struct console *c)
{
	if (qshown.any && qshown.kind == c->qkind && !strcmp(qshown.agent, c->qagent))
		return;
	qshown.any = qshown.switched = true;
	qshown.kind = c->qkind;
	util_strlcpy(qshown.agent, c->qagent, sizeof(qshown.agent));
}

/* Rows of a queue just switched to (after console_rows_clear): the cursor
 * at the top, no marks carried over from the queue left. */
static void queues_fresh_list(struct console_rows *r)
{
	if (!qshown.switched)
		return;
	qshown.switched = false;
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

static void queues_forget(void)
{
	for (size_t i = 0; i < ql.n; i++)
		free(ql.row[i].name);
	ql.n = 0;
	ql.valid = false;
	dl_pool_release(&ql.xpool);
}

/* Row i (just added) has no message behind it (a "listing..." line). */
static void queues_note_blank(size_t i)
{
	if (i >= ql.cap) {
		ql.cap = ql.cap ? ql.cap * 2 : 256;
		while (ql.cap <= i)
			ql.cap *= 2;
		ql.row = xrealloc(ql.row, ql.cap * sizeof(*ql.row));
	}
	while (ql.n <= i)
		memset(&ql.row[ql.n++], 0, sizeof(*ql.row));
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

/* What one listing produced: rows for the view, the per-row facts, and
 * the strings they point into. */
struct dl_result {
	struct console_row *rows;
	struct queues_row *q;
	size_t n, cap;
	struct dl_pool pool;
	char *err;
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
		snprintf(text, sizeof(text), "%-*s %-*.*s %-*.*s %-*s %-*d %s", idw, shown, QCOL_TYPE,
			 QCOL_TYPE, e->type ? e->type : "?", QCOL_FROM, QCOL_FROM,
			 e->from ? e->from : "?", QCOL_PRIO, msg_priority_name(e->priority),
			 QCOL_TRIES, e->attempts, age);
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

static struct {
	pthread_t th;
	bool running;        /* a worker was started and not yet joined */
	atomic_bool done;    /* it has finished */
	int efd;             /* eventfd, written when done; 0 before first use */
	bool efd_open;
	struct bus *bus;
	enum queue_kind kind; /* what it lists */
	char agent[MSG_AGENT_MAX + 1];
	int idw;
	unsigned long gen;   /* c->bus_gen when it started */
	uint64_t dead_gen;   /* c->stats.dead_gen when it started */
	int64_t at_ns;
	struct dl_result res;
} dj;

/* The eventfd both background jobs (the listing, a bulk action) wake the
 * console's poll with; opened on first use. */
static bool q_efd_open(void)
{
	if (!dj.efd_open) {
		dj.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		dj.efd_open = dj.efd >= 0;
	}
	return dj.efd_open;
}

static void q_efd_poke(void)
{
	uint64_t one = 1;
	ssize_t w = write(dj.efd, &one, sizeof(one));
	(void)w;
}

/* ---- bulk actions: past ACT_SYNC_MAX messages, on a thread of their own,
 * with their progress on the status line ---- */
#define ACT_SYNC_MAX 200

struct act_target {
	char *id;   /* the message id, for the journal */
	char *name; /* the stored file name when known (a fast lookup), else id */
	cJSON *deleted; /* D: what was deleted (id, type, from, to, reason, where) */
};

static struct {
	pthread_t th;
	bool running;
	atomic_bool done;
	atomic_size_t progress, ok, refreshed;
	enum console_op op;
	bool restore;        /* R in the trash */
	char to[MSG_AGENT_MAX + 1];
	struct act_target *t;
	size_t n;
	char *first_err;
	struct bus *bus;
} aj;

/* What a D of one message journals: what it was and where. */
static cJSON *act_deleted_json(const struct bus_entry *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", e->message_id ? e->message_id : e->name);
	cJSON_AddItemToObject(o, "type", e->type ? cJSON_CreateString(e->type) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "from", e->from ? cJSON_CreateString(e->from) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "to", e->to ? cJSON_CreateString(e->to) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "reason", e->queue == BUS_Q_DEAD && e->reason ?
				  cJSON_CreateString(e->reason) : cJSON_CreateNull());
	cJSON_AddStringToObject(o, "queue", bus_queue_name(e->queue));
	if (e->agent)
		cJSON_AddStringToObject(o, "agent", e->agent);
	return o;
}

/* One action on target t; 0 or -1 with *err. *refreshed is set when a
 * retried message had expired and went out with a new timestamp. */
static int act_one(struct bus *bus, enum console_op op, bool restore, const char *to,
		   struct act_target *t, bool *refreshed, char **err)
{
	*refreshed = false;
	if (restore)
		return bus_trash_restore(bus, t->name, NULL, err);
	if (op == OP_RETRY || op == OP_RETRY_TO) {
		char *note = NULL;
		int r = bus_retry_note(bus, t->name, op == OP_RETRY_TO ? to : NULL, &note, err);
		*refreshed = note != NULL;
		free(note);
		return r;
	}
	if (op == OP_DELETE) {
		struct bus_entry e;
		if (bus_remove_entry(bus, t->name, &e, err) < 0)
			return -1;
		t->deleted = act_deleted_json(&e);
		bus_entry_release(&e);
		return 0;
	}
	return bus_kill(bus, t->name, "killed by the operator", err);
}

/* The bus of the last action keeps no trash (NATS): a delete is for good. */
static bool act_no_trash;

/* What an action did to each message it handled. */
static const char *act_done_word(enum console_op op, bool restore)
{
	return restore ? "restored" : op == OP_RETRY || op == OP_RETRY_TO ? "retried" :
	       op == OP_DELETE ? (act_no_trash ? "deleted for good (this transport has no trash)"
			       : "deleted (to the trash for " BUS_TRASH_DAYS_TEXT " days)") : "killed";
}

/* Where the messages an action could not handle still are. */
static const char *act_left_where(enum console_op op, bool restore)
{
	return restore ? "in the trash" : op == OP_RETRY || op == OP_RETRY_TO ?
	       "in the dead letters" : "where they were";
}

static const char *act_name(enum console_op op, bool restore)
{
	return restore ? "restore" : keys_op_name(op);
}

static void *act_worker(void *arg)
{
	(void)arg;
	int64_t last = util_mono_ns();
	for (size_t i = 0; i < aj.n; i++) {
		char *err = NULL;
		bool fresh;
		if (act_one(aj.bus, aj.op, aj.restore, aj.to, &aj.t[i], &fresh, &err) == 0) {
			atomic_fetch_add(&aj.ok, 1);
			if (fresh)
				atomic_fetch_add(&aj.refreshed, 1);
		} else if (!aj.first_err)
			aj.first_err = err;
		else
			free(err);
		atomic_store(&aj.progress, i + 1);
		if (util_mono_ns() - last > 100 * 1000000LL) {
			last = util_mono_ns();
			q_efd_poke(); /* the progress on the status line */
		}
	}
	atomic_store(&aj.done, true);
	q_efd_poke();
	return NULL;
}

static void act_targets_free(struct act_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].id);
		free(t[i].name);
		cJSON_Delete(t[i].deleted);
	}
	free(t);
}

/* Journals and says how an action over ids went: how many were handled,
 * how many were not and where they still are, and why (the first error).
 * A deletion journals what each deleted message was. */
static void act_report(struct console *c, enum console_op op, bool restore, const char *to,
		       const struct act_target *t, size_t n, size_t ok, size_t refreshed,
		       const char *first_err)
{
	cJSON *jids = cJSON_CreateArray();
	cJSON *deleted = op == OP_DELETE ? cJSON_CreateArray() : NULL;
	for (size_t i = 0; i < n; i++) {
		cJSON_AddItemToArray(jids, cJSON_CreateString(t[i].id));
		if (deleted && t[i].deleted)
			cJSON_AddItemToArray(deleted, cJSON_Duplicate(t[i].deleted, 1));
	}
	char result[900], fresh[128] = "", left[700] = "";
	if (refreshed)
		snprintf(fresh, sizeof(fresh), " (%zu had expired: sent again with a new timestamp)",
			 refreshed);
	if (ok < n)
		snprintf(left, sizeof(left), "; %zu left %s%s%s", n - ok, act_left_where(op, restore),
			 first_err ? ": " : "", first_err ? first_err : "");
	snprintf(result, sizeof(result), "%s%s%s%zu of %zu %s%s%s", op == OP_RETRY_TO ? "to " : "",
		 op == OP_RETRY_TO ? to : "", op == OP_RETRY_TO ? ": " : "", ok, n,
		 act_done_word(op, restore), fresh, left);
	console_journal_with(c, act_name(op, restore), jids, result, "deleted", deleted);
	console_status(c, ok < n, "%s: %s", act_name(op, restore), result);
	cJSON_Delete(jids);
	cJSON_Delete(deleted);
}

/* A bulk action's progress: the messages handled, and the ones that
 * could not be, out of all. */
static void act_progress(struct console *c)
{
	size_t done = atomic_load(&aj.progress), ok = atomic_load(&aj.ok);
	const char *word = act_done_word(aj.op, aj.restore);
	if (done > ok)
		console_status(c, false, "%s: %zu of %zu %s, %zu not (%zu to go)...",
			       act_name(aj.op, aj.restore), ok, aj.n, word, done - ok, aj.n - done);
	else
		console_status(c, false, "%s: %zu of %zu %s...", act_name(aj.op, aj.restore), ok,
			       aj.n, word);
}

/* A finished bulk action: joined, journalled, the queue read again. */
static bool act_finish(struct console *c, bool wait)
{
	if (!aj.running || (!wait && !atomic_load(&aj.done)))
		return false;
	pthread_join(aj.th, NULL);
	aj.running = false;
	if (c)
		act_report(c, aj.op, aj.restore, aj.to, aj.t, aj.n, atomic_load(&aj.ok),
			   atomic_load(&aj.refreshed), aj.first_err);
	act_targets_free(aj.t, aj.n);
	aj.t = NULL;
	aj.n = 0;
	free(aj.first_err);
	aj.first_err = NULL;
	ql.dirty = true;
	return true;
}

static void *dl_worker(void *arg)
{
	(void)arg;
	lst_build(dj.bus, dj.kind, dj.agent, dj.idw, &dj.res);
	atomic_store(&dj.done, true);
	q_efd_poke();
	return NULL;
}

int view_queues_fd(void)
{
	return (dj.running || aj.running) && dj.efd_open ? dj.efd : -1;
}

unsigned view_queues_wake(struct console *c)
{
	uint64_t v;
	ssize_t k = read(dj.efd, &v, sizeof(v));
	(void)k;
	if (aj.running && !act_finish(c, false))
		act_progress(c);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

/* Joins a worker that has finished (or waits for it when wait). */
static bool dl_join(bool wait)
{
	if (!dj.running || (!wait && !atomic_load(&dj.done)))
		return false;
	pthread_join(dj.th, NULL);
	dj.running = false;
	return true;
}

/* The listing in res becomes the view's rows; the marks and the selection
 * stay on the same messages. */
static unsigned dl_swap(struct console *c, struct console_rows *r, struct dl_result *res,
			enum queue_kind kind, const char *agent, unsigned long gen,
			uint64_t dead_gen, int64_t at_ns)
{
	if (res->err) {
		console_status(c, true, "bus: %s", res->err);
		free(res->err);
		res->err = NULL;
	}
	queues_forget();
	console_rows_clear(r);
	free(r->v);
	r->v = res->rows;
	r->n = res->n;
	r->cap = res->cap;
	free(ql.row);
	ql.row = res->q;
	ql.n = ql.cap = res->n;
	dl_pool_release(&ql.xpool);
	ql.xpool = res->pool;
	memset(res, 0, sizeof(*res));
	ql.valid = true;
	ql.kind = kind;
	util_strlcpy(ql.agent, agent, sizeof(ql.agent));
	ql.gen = gen;
	ql.dead_gen = dead_gen;
	ql.at_ns = at_ns;
	ql.idw = queues_idw(kind, COLS);
	r->hash = 0;
	queues_fresh_list(r);
	return console_rows_done(c, r);
}

void view_queues_release(struct console *c)
{
	(void)c;
	act_finish(NULL, true);
	dl_join(true);
	dl_result_release(&dj.res);
	if (dj.efd_open)
		close(dj.efd);
	dj.efd_open = false;
	queues_forget();
	free(ql.row);
	ql.row = NULL;
	ql.cap = 0;
}

/* How many messages the queue shown holds, as the monitor counts them;
 * 0 when it does not count them (the processed ones). */
static size_t queues_count(const struct console *c)
{
	if (c->qkind == QUEUE_DEAD)
		return c->stats.dead_letter;
	if (c->qkind == QUEUE_PROCESSED || c->qkind == QUEUE_TRASH)
		return 0;
	if (c->qkind == QUEUE_PROCESSING && !c->qagent[0])
		return c->stats.processing;
	for (size_t i = 0; i < c->stats.nagents; i++)
		if (!strcmp(c->stats.agents[i].agent, c->qagent))
			return c->qkind == QUEUE_PROCESSING ? c->stats.agents[i].processing :
			       c->stats.agents[i].depth;
	return 0;
}

static size_t queues_sync_max(const struct console *c)
{
	const char *env = getenv(c->qkind == QUEUE_DEAD ? "MADF_DLQ_SYNC_MAX" :
				 "MADF_QUEUE_SYNC_MAX");
	if (env && *env)
		return (size_t)strtoul(env, NULL, 10);
	return c->qkind == QUEUE_DEAD ? DLQ_SYNC_MAX : QUEUE_SYNC_MAX;
}

static void queues_what(const struct console *c, size_t n, char *buf, size_t size)
{
	if (c->qkind == QUEUE_DEAD)
		snprintf(buf, size, "%zu dead letters", n);
	else if (c->qkind == QUEUE_TRASH)
		snprintf(buf, size, "%zu deleted messages", n);
	else if (c->qkind == QUEUE_INBOX)
		snprintf(buf, size, "%zu messages of %s", n, c->qagent);
	else
		snprintf(buf, size, "%zu messages", n);
}

/* The rows shown while the queue is being listed: older rows of it, else one "listing N ..." line. */
static unsigned queues_pending_rows(struct console *c, struct console_rows *r, size_t n)
{
	if (ql.valid && ql.kind == c->qkind && !strcmp(ql.agent, c->qagent))
		return r->hash ? 0 : console_rows_done(c, r); /* older rows of it */
	char what[128];
	queues_what(c, n, what, sizeof(what));
	queues_forget();
	console_rows_clear(r);
	queues_fresh_list(r);
	console_rows_add(r, NULL, SLOT_DIM, "listing %s...", what);
	queues_note_blank(r->n - 1);
	ql.kind = c->qkind;
	util_strlcpy(ql.agent, c->qagent, sizeof(ql.agent));
	return console_rows_done(c, r);
}

/* Lists the queue shown: on the spot up to its sync limit, past it on the
 * worker thread (the rows shown stay until its rows are swapped in). */
static unsigned queues_list(struct console *c, struct console_rows *r)
{
	bool same = dj.kind == c->qkind && !strcmp(dj.agent, c->qagent);
	size_t n = queues_count(c);
	char what[128];
	if (dj.running) {
		if (!dl_join(false))
			/* still listing: this queue's rows come when it is done;
			 * another queue's listing is dropped then */
			return same ? (r->hash ? 0 : console_rows_done(c, r)) :
				      queues_pending_rows(c, r, n);
		if (same) {
			unsigned f = dl_swap(c, r, &dj.res, dj.kind, dj.agent, dj.gen, dj.dead_gen,
					     dj.at_ns);
			/* "listing..." replaced, but not what an action said since */
			if (!strncmp(c->status, "listing ", 8)) {
				queues_what(c, r->n, what, sizeof(what));
				if (c->qkind == QUEUE_DEAD)
					console_status(c, false, "dead letters: %zu listed",
						       c->stats.dead_letter);
				else
					console_status(c, false, "%s listed", what);
			}
			return f;
		}
		dl_result_release(&dj.res); /* another queue's, not wanted now */
	}
	ql.dirty = false;
	if (n < queues_sync_max(c) || !c->mon || bus_monitor_fd(c->mon) < 0 || !q_efd_open()) {
		struct dl_result res = { 0 };
		lst_build(c->bus, c->qkind, c->qagent, queues_idw(c->qkind, COLS), &res);
		return dl_swap(c, r, &res, c->qkind, c->qagent, c->bus_gen, c->stats.dead_gen,
			       util_mono_ns());
	}
	dj.bus = c->bus;
	dj.kind = c->qkind;
	dj.idw = queues_idw(c->qkind, COLS);
	util_strlcpy(dj.agent, c->qagent, sizeof(dj.agent));
	dj.gen = c->bus_gen;
	dj.dead_gen = c->stats.dead_gen;
	dj.at_ns = util_mono_ns();
	atomic_store(&dj.done, false);
	memset(&dj.res, 0, sizeof(dj.res));
	if (pthread_create(&dj.th, NULL, dl_worker, NULL) != 0) {
		struct dl_result res = { 0 };
		lst_build(c->bus, c->qkind, c->qagent, queues_idw(c->qkind, COLS), &res);
		return dl_swap(c, r, &res, c->qkind, c->qagent, c->bus_gen, c->stats.dead_gen,
			       util_mono_ns());
	}
	dj.running = true;
	unsigned f = queues_pending_rows(c, r, n);
	queues_what(c, n, what, sizeof(what));
	if (!c->status[0] || !strncmp(c->status, "dead letters: ", 14) ||
	    !strncmp(c->status, "listing ", 8) || strstr(c->status, " listed"))
		console_status(c, false, "listing %s in the background", what);
	return f;
}

unsigned view_queues_refresh(struct console *c)
{
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	if (c->qkind == QUEUE_INBOX && !c->qagent[0])
		util_strlcpy(c->qagent, "product_manager", sizeof(c->qagent));
	queues_note_shown(c);
	if (ql.valid && !ql.dirty && c->mon && bus_monitor_fd(c->mon) >= 0 &&
	    !(dj.running && atomic_load(&dj.done)) &&
	    ql.kind == c->qkind && !strcmp(ql.agent, c->qagent) &&
	    /* the dead letters are listed again only when they changed */
	    (c->qkind == QUEUE_DEAD ? ql.dead_gen == c->stats.dead_gen : ql.gen == c->bus_gen) &&
	    util_mono_ns() - ql.at_ns < QUEUES_RELIST_S * 1000000000LL) {
		/* the same data: only the filter or the view may have changed
		 * (they reset the hash) */
		return r->hash ? 0 : console_rows_done(c, r);
	}
	return queues_list(c, r);
}

/* The entry of row i from the last listing, without searching the bus;
 * false when not known (then bus_find). Fields borrowed, but path. */
static bool queues_known(size_t i, struct bus_entry *e)
{
	if (!ql.valid || i >= ql.n || !ql.row[i].name)
		return false;
	const struct queues_row *q = &ql.row[i];
	memset(e, 0, sizeof(*e));
	e->queue = q->dead ? BUS_Q_DEAD : ql.kind == QUEUE_PROCESSING ? BUS_Q_PROCESSING :
		   ql.kind == QUEUE_PROCESSED ? BUS_Q_PROCESSED : BUS_Q_INBOX;
	e->name = q->name;
	e->agent = (char *)(uintptr_t)q->agent;
	e->reason = (char *)(uintptr_t)q->reason;
	e->error = (char *)(uintptr_t)q->error;
	e->original_inbox = (char *)(uintptr_t)q->orig;
	e->path = xasprintf("%s/%s", q->dir, q->name);
	return true;
}

/* The detail of the current message (row index row): pretty JSON, the
 * dead-letter reason. */
static void queues_detail(struct console *c, const char *id, size_t row)
{
	if (id && !strcmp(id, c->detail_id) && c->detail)
		return;
	free(c->detail);
	c->detail = NULL;
	util_strlcpy(c->detail_id, id ? id : "", sizeof(c->detail_id));
	if (!id)
		return;
	struct bus_entry e;
	char *err = NULL, *json = NULL;
	size_t len = 0;
	memset(&e, 0, sizeof(e));
	struct sbuf b;
	sbuf_init(&b);
	bool known = queues_known(row, &e);
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
	} else if (c->qkind == QUEUE_TRASH && known) {
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
	c->detail = util_sanitize(b.data, b.len, true);
	sbuf_release(&b);
}

void view_queues_draw(struct console *c, int y0, int y1)
{
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	char title[128], line[256];
	queue_title(c, title, sizeof(title));
	size_t marked = 0, msgs = 0;
	for (size_t i = 0; i < r->n; i++) {
		marked += r->v[i].marked;
		msgs += r->v[i].id != NULL;
	}
	snprintf(line, sizeof(line), " %s: %zu message%s, %zu marked   (:inbox NAME, :processing, :dlq, :processed, :trash)",
		 title, msgs, msgs == 1 ? "" : "s", marked);
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	int mid = y0 + 1 + (y1 - y0 - 1) / 2;
	char hdr[256];
	int idw = ql.valid && ql.kind == c->qkind ? ql.idw : queues_idw(c->qkind, COLS);
	queues_header(c->qkind, idw, hdr, sizeof(hdr));
	if (ql.valid && ql.idw != queues_idw(c->qkind, COLS))
		ql.dirty = true; /* resized: listed again for the new width */
	console_rows_draw(c, r, y0 + 1, mid, hdr);
	struct console_row *cur = console_rows_current(r);
	queues_detail(c, cur ? cur->id : NULL, cur ? (size_t)(cur - r->v) : 0);
	/* A plain U+2500 under UTF-8 (no alternate character set, which
	 * some multiplexers pass on as "q"), '-' otherwise. */
	const char *cs = nl_langinfo(CODESET);
	const char *rule = cs && !strcmp(cs, "UTF-8") ? "\xe2\x94\x80" : "-";
	move(mid, 0);
	for (int x = 0; x < COLS; x++)
		addstr(rule);
	int y = mid + 1;
	const char *p = c->detail ? c->detail : "";
	while (y < y1 && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *one = xstrndup(p, n);
		console_put(c, y++, 1, COLS - 1, SLOT_NORMAL, one, false);
		free(one);
		p += n + (nl ? 1 : 0);
	}
}

/* What an action applies to: the marked rows, else the current one; with
 * their stored file names when the listing knows them. */
static struct act_target *queues_targets(struct console *c, size_t *n)
{
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	struct act_target *v = NULL;
	size_t cap = 0;
	*n = 0;
	struct console_row *cur = console_rows_current(r);
	for (int pass = 0; pass < 2 && !*n; pass++) {
		for (size_t i = 0; i < r->n; i++) {
			bool take = pass == 0 ? r->v[i].marked : &r->v[i] == cur;
			if (!take || !r->v[i].id)
				continue;
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				v = xrealloc(v, cap * sizeof(*v));
			}
			const char *name = ql.valid && i < ql.n && ql.row[i].name ? ql.row[i].name :
					   r->v[i].id;
			v[*n].id = xstrdup(r->v[i].id);
			v[*n].name = xstrdup(name);
			v[*n].deleted = NULL;
			(*n)++;
		}
	}
	return v;
}

size_t view_queues_count(struct console *c)
{
	size_t n = 0;
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].marked && r->v[i].id;
	if (!n) {
		struct console_row *cur = console_rows_current(r);
		n = cur && cur->id ? 1 : 0;
	}
	return n;
}

unsigned view_queues_act(struct console *c, enum console_op op)
{
	if (!aj.running)
		act_no_trash = c->bus && !bus_has_trash(c->bus);
	if (aj.running) {
		console_status(c, true, "%s: %zu of %zu %s, still running; wait for it",
			       act_name(aj.op, aj.restore), atomic_load(&aj.ok), aj.n,
			       act_done_word(aj.op, aj.restore));
		return CONSOLE_REDRAW;
	}
	size_t n;
	bool restore = c->qkind == QUEUE_TRASH && op == OP_RETRY;
	struct act_target *t = queues_targets(c, &n);
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	for (size_t i = 0; i < r->n; i++)
		r->v[i].marked = false;
	for (size_t i = 0; i < r->nkeep; i++)
		free(r->keep[i]);
	r->nkeep = 0;
	free(c->detail);
	c->detail = NULL;
	if (n > ACT_SYNC_MAX && q_efd_open()) {
		aj.op = op;
		aj.restore = restore;
		util_strlcpy(aj.to, c->retry_to, sizeof(aj.to));
		aj.t = t;
		aj.n = n;
		aj.bus = c->bus;
		aj.first_err = NULL;
		atomic_store(&aj.done, false);
		atomic_store(&aj.progress, 0);
		atomic_store(&aj.ok, 0);
		atomic_store(&aj.refreshed, 0);
		if (pthread_create(&aj.th, NULL, act_worker, NULL) == 0) {
			aj.running = true;
			act_progress(c);
			return CONSOLE_REDRAW;
		}
		aj.t = NULL;
		aj.n = 0;
	}
	size_t ok = 0, refreshed = 0;
	char *first_err = NULL;
	for (size_t i = 0; i < n; i++) {
		char *err = NULL;
		bool fresh;
		if (act_one(c->bus, op, restore, c->retry_to, &t[i], &fresh, &err) == 0) {
			ok++;
			refreshed += fresh;
		} else if (!first_err) {
			first_err = err;
		} else {
			free(err);
		}
	}
	act_report(c, op, restore, c->retry_to, t, n, ok, refreshed, first_err);
	free(first_err);
	act_targets_free(t, n);
	ql.dirty = true; /* read the queue again, whatever the monitor saw yet */
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

void view_queues_dirty(void)
{
	ql.dirty = true;
}
