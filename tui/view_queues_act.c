/* The queues view's operations on messages: R retries dead letters (or
 * restores from the trash), D deletes into the trash, K kills into the
 * dead letters, T retries to another inbox, each on the marked set (or
 * the current message) after a question; past ACT_SYNC_MAX messages on a
 * thread of their own, their progress on the status line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tui/console.h"
#include "tui/view_queues.h"
#include "core/banned.h"

/* ---- bulk actions: past ACT_SYNC_MAX messages, on a thread of their own,
 * with their progress on the status line ---- */



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

/* What an action did to each message it handled (a delete on a bus with
 * no trash, NATS, is for good). */
static const char *act_done_word(const struct console *c, enum console_op op, bool restore)
{
	bool no_trash = c->bus && !bus_has_trash(c->bus);
	return restore ? "restored" : op == OP_RETRY || op == OP_RETRY_TO ? "retried" :
	       op == OP_DELETE ? (no_trash ? "deleted for good (this transport has no trash)"
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
	struct queues *q = arg;
	int64_t last = util_mono_ns();
	for (size_t i = 0; i < q->aj.n; i++) {
		char *err = NULL;
		bool fresh;
		if (act_one(q->aj.bus, q->aj.op, q->aj.restore, q->aj.to, &q->aj.t[i], &fresh, &err) == 0) {
			atomic_fetch_add(&q->aj.ok, 1);
			if (fresh)
				atomic_fetch_add(&q->aj.refreshed, 1);
		} else if (!q->aj.first_err)
			q->aj.first_err = err;
		else
			free(err);
		atomic_store(&q->aj.progress, i + 1);
		if (util_mono_ns() - last > 100 * 1000000LL) {
			last = util_mono_ns();
			queues_efd_poke(q); /* the progress on the status line */
		}
	}
	atomic_store(&q->aj.done, true);
	queues_efd_poke(q);
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
		 act_done_word(c, op, restore), fresh, left);
	console_journal_with(c, act_name(op, restore), jids, result, "deleted", deleted);
	console_status(c, ok < n, "%s: %s", act_name(op, restore), result);
	cJSON_Delete(jids);
	cJSON_Delete(deleted);
}

/* A bulk action's progress: the messages handled, and the ones that
 * could not be, out of all. */
void act_progress(struct console *c, struct queues *q)
{
	size_t done = atomic_load(&q->aj.progress), ok = atomic_load(&q->aj.ok);
	const char *word = act_done_word(c, q->aj.op, q->aj.restore);
	if (done > ok)
		console_status(c, false, "%s: %zu of %zu %s, %zu not (%zu to go)...",
			       act_name(q->aj.op, q->aj.restore), ok, q->aj.n, word, done - ok, q->aj.n - done);
	else
		console_status(c, false, "%s: %zu of %zu %s...", act_name(q->aj.op, q->aj.restore), ok,
			       q->aj.n, word);
}

/* A finished bulk action: joined, journalled, the queue read again. */
bool act_finish(struct console *c, struct queues *q, bool wait)
{
	if (!q->aj.running || (!wait && !atomic_load(&q->aj.done)))
		return false;
	pthread_join(q->aj.th, NULL);
	q->aj.running = false;
	if (c)
		act_report(c, q->aj.op, q->aj.restore, q->aj.to, q->aj.t, q->aj.n, atomic_load(&q->aj.ok),
			   atomic_load(&q->aj.refreshed), q->aj.first_err);
	act_targets_free(q->aj.t, q->aj.n);
	q->aj.t = NULL;
	q->aj.n = 0;
	free(q->aj.first_err);
	q->aj.first_err = NULL;
	q->ql.dirty = true;
	return true;
}

/* What an action applies to: the marked rows, else the current one; with
 * their stored file names when the listing knows them. */
static struct act_target *queues_targets(struct view *view, size_t *n)
{
	struct queues *q = view->data;
	struct console_rows *r = &view->rows;
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
			const char *name = q->ql.valid && i < q->ql.n && q->ql.row[i].name ? q->ql.row[i].name :
					   r->v[i].id;
			v[*n].id = xstrdup(r->v[i].id);
			v[*n].name = xstrdup(name);
			v[*n].deleted = NULL;
			(*n)++;
		}
	}
	return v;
}

/* The messages an action would take: the marked ones, else the current. */
static size_t queues_selected(struct view *v)
{
	size_t n = 0;
	struct console_rows *r = &v->rows;
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].marked && r->v[i].id;
	if (!n) {
		struct console_row *cur = console_rows_current(r);
		n = cur && cur->id ? 1 : 0;
	}
	return n;
}

/* A destructive queue operation on the marked rows (or the current one). */
static unsigned queues_run(struct console *c, struct view *v, enum console_op op)
{
	struct queues *q = v->data;
	if (q->aj.running) {
		console_status(c, true, "%s: %zu of %zu %s, still running; wait for it",
			       act_name(q->aj.op, q->aj.restore), atomic_load(&q->aj.ok), q->aj.n,
			       act_done_word(c, q->aj.op, q->aj.restore));
		return CONSOLE_REDRAW;
	}
	size_t n;
	bool restore = q->kind == QUEUE_TRASH && op == OP_RETRY;
	struct act_target *t = queues_targets(v, &n);
	struct console_rows *r = &v->rows;
	for (size_t i = 0; i < r->n; i++)
		r->v[i].marked = false;
	for (size_t i = 0; i < r->nkeep; i++)
		free(r->keep[i]);
	r->nkeep = 0;
	free(q->detail);
	q->detail = NULL;
	if (n > ACT_SYNC_MAX && queues_efd_open(q)) {
		q->aj.op = op;
		q->aj.restore = restore;
		util_strlcpy(q->aj.to, q->retry_to, sizeof(q->aj.to));
		q->aj.t = t;
		q->aj.n = n;
		q->aj.bus = c->bus;
		q->aj.first_err = NULL;
		atomic_store(&q->aj.done, false);
		atomic_store(&q->aj.progress, 0);
		atomic_store(&q->aj.ok, 0);
		atomic_store(&q->aj.refreshed, 0);
		if (pthread_create(&q->aj.th, NULL, act_worker, q) == 0) {
			q->aj.running = true;
			act_progress(c, q);
			return CONSOLE_REDRAW;
		}
		q->aj.t = NULL;
		q->aj.n = 0;
	}
	size_t ok = 0, refreshed = 0;
	char *first_err = NULL;
	for (size_t i = 0; i < n; i++) {
		char *err = NULL;
		bool fresh;
		if (act_one(c->bus, op, restore, q->retry_to, &t[i], &fresh, &err) == 0) {
			ok++;
			refreshed += fresh;
		} else if (!first_err) {
			first_err = err;
		} else {
			free(err);
		}
	}
	act_report(c, op, restore, q->retry_to, t, n, ok, refreshed, first_err);
	free(first_err);
	act_targets_free(t, n);
	q->ql.dirty = true; /* read the queue again, whatever the monitor saw yet */
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

void view_queues_dirty(struct view *v)
{
	struct queues *q = v->data;
	free(q->detail);
	q->detail = NULL;
	q->ql.dirty = true;
}

/* Why an operation cannot run on the queue shown, or NULL. */
static const char *queues_why(const struct queues *q, enum console_op op)
{
	if (q->kind == QUEUE_PROCESSED)
		return "processed messages are history: read-only here";
	if (q->kind == QUEUE_TRASH)
		return op == OP_RETRY ? NULL :
		       op == OP_DELETE ? "already in the trash (madf gc purges it after 30 days); "
					 "R restores" : "in the trash: R restores it first";
	if (q->kind == QUEUE_PROCESSING)
		return "claimed messages cannot be changed; wait for the lease or kill in the inbox";
	if ((op == OP_RETRY || op == OP_RETRY_TO || op == OP_EDIT) && q->kind != QUEUE_DEAD)
		return op == OP_EDIT ? "E edits dead letters (:dlq)" :
		       op == OP_RETRY ? "R retries dead letters (:dlq)" : "T retries dead letters (:dlq)";
	if (op == OP_KILL && q->kind == QUEUE_DEAD)
		return "already dead letters (D deletes, R retries)";
	return NULL;
}

/* The question before op on n messages. */
static unsigned queues_confirm(struct console *c, struct view *v, enum console_op op, size_t n)
{
	struct queues *q = v->data;
	const char *s = n == 1 ? "" : "s";
	switch (op) {
	case OP_EDIT:
		return console_confirm(c, v, op, false, "Edit and requeue %zu message? y/n", n);
	case OP_RETRY_TO:
		return console_confirm(c, v, op, false, "Retry %zu message%s to %s? y/n", n, s,
				       q->retry_to);
	case OP_DELETE:
		if (c->bus && !bus_has_trash(c->bus))
			return console_confirm(c, v, op, false, "Delete %zu message%s for good (the "
					       "%s transport has no trash)? y/n", n, s, c->bus->t->name);
		return console_confirm(c, v, op, false, "Delete %zu message%s (to the trash for %d "
				       "days; :trash restores)? y/n", n, s, BUS_TRASH_DAYS);
	case OP_RETRY:
		if (q->kind == QUEUE_TRASH)
			return console_confirm(c, v, op, false, "Restore %zu message%s to where %s "
					       "deleted from? y/n", n, s, n == 1 ? "it was" : "they were");
		return console_confirm(c, v, op, false, "Retry %zu message%s? y/n", n, s);
	default:
		return console_confirm(c, v, op, false, "Kill %zu message%s? y/n", n, s);
	}
}

unsigned view_queues_retry_to(struct console *c, const char *agent, bool is_new)
{
	if (c->opts.read_only)
		return console_refuse(c, OP_RETRY_TO);
	struct view *v = console_view(c);
	const char *why = v->ops != &view_queues_ops ? "only in the queues view (:dlq)" :
			  queues_why(v->data, OP_RETRY_TO);
	if (why) {
		console_status(c, true, "retry-to: %s", why);
		return CONSOLE_REDRAW;
	}
	if (!*agent || !util_valid_agent_name(agent) || !strcmp(agent, "broadcast")) {
		console_status(c, true, *agent ? "retry-to: invalid agent name \"%s\"" :
			       "%s:retry-to needs an agent name (Tab completes)", agent);
		return CONSOLE_REDRAW;
	}
	if (!is_new && console_agent_unknown(c, "retry-to", agent))
		return CONSOLE_REDRAW;
	size_t n = queues_selected(v);
	if (!n) {
		console_status(c, true, "no message selected");
		return CONSOLE_REDRAW;
	}
	struct queues *q = v->data;
	util_strlcpy(q->retry_to, agent, sizeof(q->retry_to));
	return queues_confirm(c, v, OP_RETRY_TO, n);
}

unsigned queues_act(struct console *c, struct view *v, enum console_op op, int answer)
{
	if (op == OP_OPEN)
		return 0; /* the detail pane shows the message already */
	if (op != OP_RETRY && op != OP_DELETE && op != OP_KILL && op != OP_EDIT && op != OP_RETRY_TO)
		return CONSOLE_PASS;
	if (answer) /* confirmed */
		return op == OP_EDIT ? view_queues_edit(c, v) : queues_run(c, v, op);
	const char *why = queues_why(v->data, op);
	if (why) {
		console_status(c, true, "%s: %s", keys_op_name(op), why);
		return CONSOLE_REDRAW;
	}
	struct console_row *cur = console_rows_current(&v->rows);
	size_t n = op == OP_EDIT ? (cur && cur->id) : queues_selected(v);
	if (!n) {
		console_status(c, true, "no message selected");
		return CONSOLE_REDRAW;
	}
	if (op == OP_RETRY_TO) {
		/* the agent on the command line, then the confirmation */
		char say[96];
		snprintf(say, sizeof(say), "retry %zu message%s to which inbox? (Tab completes)", n,
			 n == 1 ? "" : "s");
		return console_command_open(c, "retry-to ", say);
	}
	return queues_confirm(c, v, op, n);
}

/* Whether a queue key does something on the queue shown. */
bool queues_applies(const struct view *v, enum console_op op)
{
	const struct queues *q = v->data;
	switch (q->kind) {
	case QUEUE_DEAD:
		return op != OP_KILL;
	case QUEUE_INBOX:
		return op == OP_MARK || op == OP_MARK_ALL || op == OP_KILL || op == OP_DELETE;
	case QUEUE_TRASH:
		return op == OP_MARK || op == OP_MARK_ALL || op == OP_RETRY;
	case QUEUE_PROCESSING:
	case QUEUE_PROCESSED:
		return false;
	}
	return false;
}
