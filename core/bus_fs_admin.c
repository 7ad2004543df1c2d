/* The file-system transport: listing and administration (list, find,
 * read, retry, remove, kill, requeue, sweep). */
#include "core/bus_fs_priv.h"
#include "core/bus_dlx.h"
#include "core/bus_drop.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- listing and administration ----------------------------------------- */

static const char *q_dir(enum bus_queue q)
{
	switch (q) {
	case BUS_Q_INBOX: return "inbox";
	case BUS_Q_PROCESSING: return "processing";
	case BUS_Q_RETRY: return "retry";
	case BUS_Q_DEAD: return "dead-letter";
	case BUS_Q_PROCESSED: return "processed";
	case BUS_Q_COUNT: break;
	}
	return "?";
}

static bool q_per_agent(enum bus_queue q)
{
	return q == BUS_Q_INBOX || q == BUS_Q_PROCESSING || q == BUS_Q_RETRY;
}

/* Fills an entry from a stored file name in queue q. Returns false for
 * names that are not entries (sidecars, temporary and hidden files). */
static bool entry_from_name(struct bus_entry *e, enum bus_queue q,
			    const char *agent, const char *dir, const char *name,
			    const struct dlx_rec *known, bool will_read)
{
	if (name[0] == '.')
		return false;
	const char *base = name;
	memset(e, 0, sizeof(*e));
	e->queue = q;
	e->priority = PRIO_NORMAL;
	if (q == BUS_Q_PROCESSING) {
		const char *at = strchr(name, '@');
		if (!at)
			return false;
		e->owner = xstrndup(name, (size_t)(at - name));
		base = at + 1;
	} else if (q == BUS_Q_RETRY) {
		if (strlen(name) < 21 || name[19] != '.' || !fsbus_all_digits(name, 19))
			return false;
		e->due_ns = fsbus_parse_digits(name, 19);
		base = name + 20;
	} else if (q == BUS_Q_DEAD) {
		if (fsbus_is_sidecar(name) || !bus_fname_wanted(name)) {
			size_t len = strlen(name);
			if (fsbus_is_sidecar(name) || (len > 4 && !strcmp(name + len - 4, ".tmp")))
				return false;
		}
	} else if (!bus_fname_wanted(name)) {
		return false;
	}
	struct bus_fname f;
	if (bus_fname_parse(base, &f) == 0) {
		e->priority = (enum msg_priority)f.prio;
		e->enqueued_ns = f.t_ns;
		e->attempts = f.attempts;
		e->message_id = fsbus_name_message_id(base);
	}
	e->agent = agent ? xstrdup(agent) : NULL;
	e->name = xstrdup(name);
	e->path = xasprintf("%s/%s", dir, name);
	if (known) {
		/* a dead letter the index knows: no stat, no sidecar */
		e->size = known->size;
		return true;
	}
	if (will_read)
		return true; /* the read that follows stats the file it opens */
	struct stat st;
	if (lstat(e->path, &st) == 0) {
		e->size = (size_t)st.st_size;
		if (!e->enqueued_ns)
			e->enqueued_ns = (int64_t)st.st_mtim.tv_sec * NS_PER_S +
					 st.st_mtim.tv_nsec;
	}
	return true;
}

/* For a dead letter: reason, error, original inbox, and (when the sidecar
 * has them) from/to/type. Returns true when from and type were there. */
static bool entry_load_sidecar(struct bus_entry *e)
{
	char *sc = fsbus_sidecar_name(e->path), *buf = NULL;
	size_t len;
	bool about = false;
	if (util_read_file(sc, 1 << 20, &buf, &len, NULL) == 0) {
		cJSON *j = cJSON_ParseWithLength(buf, len);
		e->reason = jstr_clean(j, "reason");
		e->error = jstr_clean(j, "error");
		e->original_inbox = jstr_clean(j, "original_inbox");
		const cJSON *a = cJSON_GetObjectItem(j, "attempts");
		if (cJSON_IsNumber(a))
			e->attempts = a->valueint;
		if (!e->message_id)
			e->message_id = jstr_clean(j, "message_id");
		e->from = jstr_clean(j, "from");
		e->to = jstr_clean(j, "to");
		e->type = jstr_clean(j, "type");
		about = e->from && e->type;
		cJSON_Delete(j);
		free(buf);
	}
	free(sc);
	if (!e->reason)
		e->reason = xstrdup("unknown");
	return about;
}

/* Reads from/to/type (and for dead letters the sidecar) into e. A dead
 * letter whose sidecar says who sent what is not opened at all: listing
 * 100,000 of them reads one small file each. */
static void entry_load_at(struct bus_entry *e, int dfd, const char *name)
{
	if (e->queue == BUS_Q_DEAD && entry_load_sidecar(e))
		return;
	char *buf = NULL;
	size_t len;
	struct stat st;
	if (util_read_file_at(dfd, name, e->path, MSG_MAX_BYTES, &buf, &len, &st, NULL) == 0) {
		e->size = (size_t)st.st_size;
		if (!e->enqueued_ns)
			e->enqueued_ns = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
		struct msg *m = NULL;
		struct msg_errors errs = { 0 };
		free(e->from);
		free(e->to);
		free(e->type);
		e->from = e->to = e->type = NULL;
		if (msg_parse(buf, len, &m, &errs) == 0) {
			e->from = xstrdup(m->from);
			e->to = xstrdup(m->to);
			e->type = xstrdup(msg_type_name(m->type));
			e->priority = m->priority;
			if (!e->message_id)
				e->message_id = xstrdup(m->id);
		} else {
			/* Show what can be shown of an invalid message. */
			cJSON *j = cJSON_ParseWithLength(buf, len);
			if (cJSON_IsObject(j)) {
				e->from = jstr_clean(j, "from");
				e->to = jstr_clean(j, "to");
				e->type = jstr_clean(j, "type");
				if (!e->message_id)
					e->message_id = jstr_clean(j, "message_id");
			}
			cJSON_Delete(j);
		}
		msg_free(&m);
		msg_errors_release(&errs);
		free(buf);
	}
}

static void entry_load(struct bus_entry *e)
{
	entry_load_at(e, AT_FDCWD, e->path);
}

struct entry_vec {
	struct bus_entry *v;
	size_t n, cap;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Fills a dead letter's content from its index record. */
static void entry_from_index(struct bus_entry *e, const struct dlx_rec *r)
{
	e->reason = xstrdup(r->reason ? r->reason : "unknown");
	e->error = dup_or_null(r->error);
	e->original_inbox = dup_or_null(r->original_inbox);
	e->attempts = r->attempts;
	if (!e->message_id)
		e->message_id = dup_or_null(r->message_id);
	e->from = dup_or_null(r->from);
	e->to = dup_or_null(r->to);
	e->type = dup_or_null(r->type);
}

/* How a dead-letter listing used the index. */
struct dl_listing {
	struct dlx *x;
	size_t misses;
};

static void list_dir(struct entry_vec *out, enum bus_queue q, const char *agent,
		     const char *dir, bool content, struct dl_listing *dl)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (out->n == out->cap) {
			out->cap = out->cap ? out->cap * 2 : 64;
			out->v = xrealloc(out->v, out->cap * sizeof(*out->v));
		}
		const struct dlx_rec *r = NULL;
		if (dl && content && de->d_name[0] != '.') {
			r = dlx_get(dl->x, de->d_name, de->d_ino);
			/* without from and type, the message is read as before */
			if (r && (!r->from || !r->type))
				r = NULL;
		}
		struct bus_entry *e = &out->v[out->n];
		if (!entry_from_name(e, q, agent, dir, de->d_name, r,
				     content && !r && q != BUS_Q_DEAD))
			continue;
		if (r) {
			entry_from_index(e, r);
		} else if (content) {
			entry_load_at(e, dirfd(d), de->d_name);
			if (dl)
				dl->misses++;
		}
		out->n++;
	}
	if (d)
		closedir(d);
}

/* After a dead-letter listing that missed the index or read many lines
 * that match nothing any more: the index rewritten from what was found. */
static void dl_reindex(const char *dir, struct dl_listing *dl, const struct entry_vec *v)
{
	if (!dl->misses && dlx_lines(dl->x) <= 2 * v->n + 1024)
		return;
	struct dlx_rec *recs = xcalloc(v->n ? v->n : 1, sizeof(*recs));
	size_t k = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct bus_entry *e = &v->v[i];
		struct stat st;
		if (lstat(e->path, &st) < 0)
			continue;
		recs[k++] = (struct dlx_rec){
			.ino = st.st_ino, .size = (size_t)st.st_size, .attempts = e->attempts,
			.name = e->name, .message_id = e->message_id, .reason = e->reason,
			.original_inbox = e->original_inbox, .from = e->from, .to = e->to,
			.type = e->type, .error = e->error,
		};
	}
	dlx_rewrite(dir, dl->x, recs, k);
	free(recs);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct bus_entry *a = pa, *b = pb;
	if (a->queue == BUS_Q_INBOX && a->priority != b->priority)
		return (int)a->priority - (int)b->priority;
	if (a->enqueued_ns != b->enqueued_ns)
		return a->enqueued_ns < b->enqueued_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* A claim's lease runs from its file's mtime, which each renewal sets to
 * the time of renewal (fsbus_renew). */
static void lease_fill(struct bus *b, struct bus_entry *e)
{
	struct stat st;
	if (e->queue == BUS_Q_PROCESSING && lstat(e->path, &st) == 0)
		e->lease_ns = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec +
			      b->cfg.lease_s * NS_PER_S;
}

int fsbus_list(struct bus *b, enum bus_queue q, const char *agent,
	       bool content, struct bus_entry **out, size_t *n, char **err)
{
	(void)err;
	struct entry_vec v = { 0 };
	char *root = fsbus_qpath(b, q_dir(q), NULL);
	if (q_per_agent(q) && agent) {
		char *dir = xasprintf("%s/%s", root, agent);
		list_dir(&v, q, agent, dir, content, NULL);
		free(dir);
	} else if (q_per_agent(q) || q == BUS_Q_PROCESSED) {
		DIR *d = opendir(root);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char *dir = xasprintf("%s/%s", root, de->d_name);
			list_dir(&v, q, q_per_agent(q) ? de->d_name : NULL, dir, content, NULL);
			free(dir);
		}
		if (d)
			closedir(d);
	} else if (q == BUS_Q_DEAD && content) {
		struct dl_listing dl = { .x = dlx_load(root) };
		list_dir(&v, q, NULL, root, content, &dl);
		dl_reindex(root, &dl, &v);
		dlx_free(&dl.x);
	} else {
		list_dir(&v, q, NULL, root, content, NULL);
	}
	free(root);
	if (q == BUS_Q_PROCESSING)
		for (size_t i = 0; i < v.n; i++)
			lease_fill(b, &v.v[i]);
	if (v.n > 1)
		qsort(v.v, v.n, sizeof(*v.v), entry_cmp);
	*out = v.v;
	*n = v.n;
	return 0;
}

/* Dead letters one by one: the index's entries lent straight from it; the
 * ones it misses read from their sidecars. When the index missed or has
 * grown stale, a full listing afterwards rewrites it. */
int fsbus_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
		    void *ctx, char **err)
{
	char *root = fsbus_qpath(b, q_dir(BUS_Q_DEAD), NULL);
	struct dlx *x = dlx_load(root);
	size_t misses = 0, n = 0;
	DIR *d = opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		const struct dlx_rec *r = dlx_get(x, de->d_name, de->d_ino);
		if (r && r->from && r->type) {
			struct bus_entry e;
			if (!entry_from_name(&e, BUS_Q_DEAD, NULL, root, de->d_name, r, false))
				continue;
			/* the strings lent from the index, the name's own kept */
			char *mid = e.message_id;
			e.reason = (char *)(uintptr_t)(r->reason ? r->reason : "unknown");
			e.error = (char *)(uintptr_t)r->error;
			e.original_inbox = (char *)(uintptr_t)r->original_inbox;
			e.attempts = r->attempts;
			if (!e.message_id)
				e.message_id = (char *)(uintptr_t)r->message_id;
			e.from = (char *)(uintptr_t)r->from;
			e.to = (char *)(uintptr_t)r->to;
			e.type = (char *)(uintptr_t)r->type;
			fn(ctx, &e);
			free(mid);
			free(e.name);
			free(e.path);
			n++;
			continue;
		}
		struct bus_entry e;
		if (!entry_from_name(&e, BUS_Q_DEAD, NULL, root, de->d_name, NULL, false))
			continue;
		entry_load(&e);
		fn(ctx, &e);
		bus_entry_release(&e);
		misses++;
		n++;
	}
	if (d)
		closedir(d);
	bool stale = misses || dlx_lines(x) > 2 * n + 1024;
	dlx_free(&x);
	free(root);
	if (stale) {
		struct bus_entry *v = NULL;
		size_t nv = 0;
		if (fsbus_list(b, BUS_Q_DEAD, NULL, true, &v, &nv, err) < 0)
			return -1;
		bus_entries_free(v, nv);
	}
	return 0;
}

static bool entry_matches(struct bus_entry *e, const char *id)
{
	if (!strcmp(e->name, id))
		return true;
	if (e->message_id && !strcmp(e->message_id, id))
		return true;
	if (!e->message_id && !e->from)
		entry_load(e);
	return e->message_id && !strcmp(e->message_id, id);
}

/* A stored file name (as the console passes them) found where it can
 * only be: the dead letters, then each inbox; a few stats instead of
 * listing every queue, which with 100,000 dead letters takes a quarter of
 * a second per message. */
static bool find_by_name(struct bus *b, const char *name, struct bus_entry *out)
{
	struct bus_fname f;
	if (name[0] == '.' || bus_fname_parse(name, &f) < 0)
		return false;
	char *dir = fsbus_qpath(b, q_dir(BUS_Q_DEAD), NULL);
	char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	bool found = false;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    entry_from_name(out, BUS_Q_DEAD, NULL, dir, name, NULL, false)) {
		entry_load(out);
		found = true;
	}
	free(path);
	free(dir);
	if (found)
		return true;
	char *root = fsbus_qpath(b, q_dir(BUS_Q_INBOX), NULL);
	DIR *d = opendir(root);
	struct dirent *de;
	while (!found && d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !util_valid_agent_name(de->d_name))
			continue;
		dir = xasprintf("%s/%s", root, de->d_name);
		path = xasprintf("%s/%s", dir, name);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    entry_from_name(out, BUS_Q_INBOX, de->d_name, dir, name, NULL, false)) {
			entry_load(out);
			found = true;
		}
		free(path);
		free(dir);
	}
	if (d)
		closedir(d);
	free(root);
	return found;
}

int fsbus_find(struct bus *b, const char *id, struct bus_entry *out,
	       char **err)
{
	if (!id || !*id || strchr(id, '/'))
		return err_set(err, "invalid message id \"%s\"", id ? id : "");
	if (find_by_name(b, id, out))
		return 0;
	static const enum bus_queue order[] = { BUS_Q_INBOX, BUS_Q_RETRY,
						BUS_Q_PROCESSING, BUS_Q_DEAD,
						BUS_Q_PROCESSED };
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		struct bus_entry *v;
		size_t n;
		fsbus_list(b, order[i], NULL, false, &v, &n, NULL);
		for (size_t k = 0; k < n; k++) {
			if (entry_matches(&v[k], id)) {
				*out = v[k];
				if (!out->from)
					entry_load(out);
				memset(&v[k], 0, sizeof(v[k]));
				bus_entries_free(v, n);
				return 0;
			}
		}
		bus_entries_free(v, n);
	}
	return err_set(err, "no message %s in the inboxes, retries, processing, "
			    "dead letters or processed messages", id);
}

int fsbus_read(struct bus *b, const struct bus_entry *e, char **json,
	       size_t *len, char **err)
{
	return util_read_file(e->path, b->cfg.max_bytes, json, len, err);
}

void fsbus_drop_dead(const struct bus_entry *e)
{
	char *sc = fsbus_sidecar_name(e->path);
	unlink(sc);
	free(sc);
}

/* Queues the valid message text json into agent's inbox as a first
 * attempt; src (may be NULL) is removed once queued. */
static int queue_fresh(struct bus *b, const struct msg *m, const char *agent,
		       const char *src, bool rewrite, char **err)
{
	struct bus_fname f = { .prio = m->priority, .t_ns = util_now_ns() };
	util_strlcpy(f.id, m->id, sizeof(f.id));
	if (fsbus_inbox_reserve(b, agent, err) < 0)
		return -1;
	int r;
	if (rewrite || !src) {
		char *js = msg_to_json(m, true);
		size_t len = strlen(js);
		js = xrealloc(js, len + 2);
		js[len++] = '\n';
		js[len] = '\0';
		char *tmp;
		r = fsbus_write_tmp(b, FS(b)->tmpdir, js, len, &tmp, err);
		free(js);
		if (r == 0) {
			r = fsbus_deliver_one(b, tmp, agent, &f, true, err);
			if (r < 0)
				unlink(tmp);
			free(tmp);
		}
		if (r == 0 && src)
			unlink(src);
	} else {
		r = fsbus_deliver_one(b, src, agent, &f, true, err);
	}
	return r;
}

static int load_valid(const struct bus_entry *e, struct msg **m, char **err)
{
	char *buf;
	size_t len;
	if (util_read_file(e->path, MSG_MAX_BYTES, &buf, &len, err) < 0)
		return -1;
	int r = bus_parse_stored(e->name, buf, len, m, err);
	free(buf);
	return r;
}

int fsbus_retry(struct bus *b, const char *id, const char *to, char **note,
		char **err)
{
	struct bus_entry e;
	if (fsbus_find(b, id, &e, err) < 0)
		return -1;
	int r = -1;
	struct msg *m = NULL;
	if (e.queue != BUS_Q_DEAD) {
		err_set(err, "%s is not a dead letter (it is in %s)", id,
			bus_queue_name(e.queue));
		goto out;
	}
	if (load_valid(&e, &m, err) < 0)
		goto out;
	const char *target = to ? to : (e.original_inbox && *e.original_inbox
					? e.original_inbox : m->to);
	if (!util_valid_agent_name(target)) {
		err_set(err, "cannot retry %s: no valid inbox to send it to", id);
		goto out;
	}
	bool rewrite = strcmp(m->to, target) && strcmp(m->to, "broadcast");
	if (rewrite)
		util_strlcpy(m->to, target, sizeof(m->to));
	char *said = bus_expired_refresh(m, e.reason);
	if (said)
		rewrite = true;
	r = queue_fresh(b, m, target, e.path, rewrite, err);
	if (r == 0 && note)
		*note = said;
	else
		free(said);
	if (r == 0) {
		fsbus_drop_dead(&e);
		struct bus_fname f;
		if (bus_fname_parse(e.name, &f) == 0)
			fsbus_attempts_drop(b, target, f.id);
	}
out:
	msg_free(&m);
	bus_entry_release(&e);
	return r;
}

int fsbus_remove(struct bus *b, const char *id, struct bus_entry *out, char **err)
{
	struct bus_entry e;
	if (fsbus_find(b, id, &e, err) < 0)
		return -1;
	int r = 0;
	if (e.queue == BUS_Q_PROCESSING || e.queue == BUS_Q_PROCESSED) {
		r = err_set(err, "%s is %s; only waiting, retrying and dead messages "
				 "can be deleted", id,
			    e.queue == BUS_Q_PROCESSING ? "being handled" : "already processed");
	} else {
		r = bus_trash_put(b, &e, err);
	}
	if (r == 0 && out) {
		*out = e;
		return 0;
	}
	bus_entry_release(&e);
	return r;
}

const char *bus_fs_root(struct bus *b)
{
	return FS(b)->root;
}

int bus_fs_move(const char *src, const char *dir, const char *name, char **final,
		char **err)
{
	return fsbus_move_into(src, dir, name, final, err);
}

char *bus_fs_sidecar(const char *path)
{
	return fsbus_sidecar_name(path);
}

int fsbus_kill(struct bus *b, const char *id, const char *why, char **err)
{
	struct bus_entry e;
	if (fsbus_find(b, id, &e, err) < 0)
		return -1;
	int r;
	if (e.queue != BUS_Q_INBOX && e.queue != BUS_Q_RETRY) {
		r = err_set(err, "%s is in %s; only waiting or retrying messages can be "
				 "killed to the dead letters", id, bus_queue_name(e.queue));
	} else {
		const char *name = e.queue == BUS_Q_RETRY ? e.name + 20 : e.name;
		struct dl_about ab = { e.from, e.to, e.type };
		r = fsbus_dead_letter(b, e.path, name, e.agent, "killed",
				      why ? why : "killed by the operator", NULL,
				      e.message_id, &ab, err);
	}
	bus_entry_release(&e);
	return r;
}

int fsbus_requeue(struct bus *b, const char *id, const char *json,
		  size_t len, char **err)
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
	int r = fsbus_find(b, id, &e, err);
	if (r == 0 && e.queue != BUS_Q_DEAD)
		r = err_set(err, "%s is not a dead letter (it is in %s)", id,
			    bus_queue_name(e.queue));
	if (r == 0 && !strcmp(m->to, "broadcast"))
		r = err_set(err, "cannot requeue to broadcast; address one agent");
	if (r == 0)
		r = queue_fresh(b, m, m->to, NULL, true, err);
	if (r == 0) {
		unlink(e.path);
		fsbus_drop_dead(&e);
	}
	if (e.name)
		bus_entry_release(&e);
	msg_free(&m);
	return r;
}

static void for_each_agent(struct bus *b, const char *q,
			   void (*fn)(struct bus *, const char *))
{
	char *root = fsbus_qpath(b, q, NULL);
	DIR *d = opendir(root);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (util_valid_agent_name(de->d_name))
			fn(b, de->d_name);
	if (d)
		closedir(d);
	free(root);
}

static void promote_one(struct bus *b, const char *agent)
{
	fsbus_promote_retries(b, agent);
}

int fsbus_sweep(struct bus *b, const char *agent, char **err)
{
	(void)err;
	fsbus_owner_refresh(FS(b));
	if (agent) {
		fsbus_recover_claims(b, agent);
		fsbus_promote_retries(b, agent);
	} else {
		for_each_agent(b, "processing", fsbus_recover_claims);
		for_each_agent(b, "retry", promote_one);
	}
	return 0;
}
