/* The queues view's insides, shared by tui/view_queues.c (listing,
 * drawing, the view's ops), tui/view_queues_act.c (R, D, K, T and the
 * bulk actions) and tui/view_queues_edit.c (E). Not for other files. */
#ifndef MADF_VIEW_QUEUES_H
#define MADF_VIEW_QUEUES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tui/console.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define BUS_TRASH_DAYS_TEXT STR(BUS_TRASH_DAYS)
/* Past this many messages an action runs on a thread of its own. */
#define ACT_SYNC_MAX 200

/* Interned strings, owned: an open-addressing set. */
struct dl_pool {
	char **v;
	size_t n, cap;
	uint32_t *slot;
	size_t nslot;
};

struct queues_row {
	char *name;                  /* file name; NULL for a heading */
	const char *dir, *agent, *reason, *error, *orig; /* interned */
	bool dead;
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

/* The last listing (tui/view_queues.c, at QUEUES_RELIST_S, says why). */
struct qlisting {
	bool valid, dirty;
	enum queue_kind kind;
	char agent[MSG_AGENT_MAX + 1];
	unsigned long gen;
	uint64_t dead_gen;       /* the dead letters: c->stats.dead_gen then */
	int64_t at_ns;
	int idw;                 /* the id column's width it was made for */
	struct queues_row *row;  /* indexed like the view's rows */
	size_t n, cap;
	struct dl_pool xpool;    /* the listing's strings */
};

/* The queue shown last. The selection and the marks belong to messages:
 * a list of another queue starts at its top with nothing marked, rather
 * than at the row number the cursor had in the queue left. */
struct qshown {
	bool any, switched;
	enum queue_kind kind;
	char agent[MSG_AGENT_MAX + 1];
};


/* The listing running in the background (tui/view_queues.c, "long queues"). */
struct qjob {
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
};

/* The bulk action running in the background (tui/view_queues_act.c). */
struct qaction {
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
};

/* The queues view's state (view->data). */
struct queues {
	enum queue_kind kind;    /* the queue shown */
	char agent[MSG_AGENT_MAX + 1];
	char *detail;            /* sanitised, with newlines */
	char detail_id[256];
	char retry_to[MSG_AGENT_MAX + 1]; /* T / :retry-to: the inbox asked for */
	struct qlisting ql;
	struct qshown qshown;
	struct qjob dj;
	struct qaction aj;
};

struct act_target {
	char *id;   /* the message id, for the journal */
	char *name; /* the stored file name when known (a fast lookup), else id */
	cJSON *deleted; /* D: what was deleted (id, type, from, to, reason, where) */
};

/* The eventfd both background jobs (the listing, a bulk action) wake the
 * console's poll with: opened on first use (false when it cannot be);
 * poked when a job has news. (tui/view_queues.c) */
bool queues_efd_open(struct queues *q);
void queues_efd_poke(struct queues *q);
/* A bulk action that has ended (or, with wait, once it ends): joined,
 * journalled and said (when c), the queue read again; false when none
 * ended. Its progress on the status line. (tui/view_queues_act.c) */
bool act_finish(struct console *c, struct queues *q, bool wait);
void act_progress(struct console *c, struct queues *q);
/* The view's act and applies hooks. (tui/view_queues_act.c) */
unsigned queues_act(struct console *c, struct view *v, enum console_op op, int answer);
bool queues_applies(const struct view *v, enum console_op op);

#endif
