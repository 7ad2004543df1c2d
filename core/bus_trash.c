/* The trash: deleted messages kept BUS_TRASH_DAYS, restorable (see
 * bus.h). messages/trash/NAME is the deleted file, unchanged (moved, not
 * copied); NAME minus ".json" plus ".trash.json" is its sidecar:
 *   {"message_id", "from", "to", "type", "queue", "agent", "file",
 *    "deleted_at", "deleted_at_ns", "reason", "dead_letter": {its
 *    dead-letter sidecar}}
 * The sidecar is written first and removed last, so a file in the trash
 * always has one; a sidecar without its file (a crash between the two) is
 * ignored and purged with the rest. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bus_fs.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S 1000000000LL
#define TRASH_SUFFIX ".trash.json"
#define STR_(x) #x
#define STR(x) STR_(x)
#define BUS_TRASH_DAYS_S STR(BUS_TRASH_DAYS)

static char *trash_dir(struct bus *b)
{
	return xasprintf("%s/trash", bus_fs_root(b));
}

static bool is_trash_sidecar(const char *name)
{
	size_t len = strlen(name), sl = strlen(TRASH_SUFFIX);
	return len > sl && !strcmp(name + len - sl, TRASH_SUFFIX);
}

/* The sidecar of trash file name (in dir). */
static char *trash_sidecar(const char *dir, const char *name)
{
	size_t len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".json"))
		len -= 5;
	return xasprintf("%s/%.*s%s", dir, (int)len, name, TRASH_SUFFIX);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
}

int bus_trash_put(struct bus *b, const struct bus_entry *e, char **err)
{
	char *dir = trash_dir(b);
	if (util_mkdirs(dir, err) < 0) {
		free(dir);
		return -1;
	}
	/* the name first, so that the sidecar matches it */
	char *use = xstrdup(e->name);
	char *probe = xasprintf("%s/%s", dir, use);
	if (access(probe, F_OK) == 0) {
		uint32_t r;
		util_random(&r, sizeof(r));
		size_t len = strlen(e->name);
		size_t base = len > 5 && !strcmp(e->name + len - 5, ".json") ? len - 5 : len;
		free(use);
		use = xasprintf("%.*s.del%08x.json", (int)base, e->name, r);
	}
	free(probe);
	int64_t now = util_now_ns();
	char ts[40];
	util_iso8601(now, ts, sizeof(ts));
	cJSON *o = cJSON_CreateObject();
	add_str(o, "message_id", e->message_id);
	add_str(o, "from", e->from);
	add_str(o, "to", e->to);
	add_str(o, "type", e->type);
	cJSON_AddStringToObject(o, "queue", bus_queue_name(e->queue));
	add_str(o, "agent", e->agent);
	cJSON_AddStringToObject(o, "file", e->name);
	cJSON_AddStringToObject(o, "deleted_at", ts);
	cJSON_AddNumberToObject(o, "deleted_at_ns", (double)now);
	char *dlside = NULL;
	if (e->queue == BUS_Q_DEAD) {
		add_str(o, "reason", e->reason);
		dlside = bus_fs_sidecar(e->path);
		char *buf = NULL;
		size_t len;
		cJSON *j = NULL;
		if (util_read_file(dlside, 1 << 20, &buf, &len, NULL) == 0)
			j = cJSON_ParseWithLength(buf, len);
		free(buf);
		if (cJSON_IsObject(j))
			cJSON_AddItemToObject(o, "dead_letter", j);
		else
			cJSON_Delete(j);
	}
	char *js = json_pretty(o);
	cJSON_Delete(o);
	char *sc = trash_sidecar(dir, use);
	int r = util_write_file_atomic(sc, js, strlen(js), b->cfg.durable, err);
	free(js);
	char *final = NULL;
	if (r == 0 && (r = bus_fs_move(e->path, dir, use, &final, err)) < 0) {
		unlink(sc);
	} else if (r == 0 && strcmp(final, use)) {
		/* lost a race for the name: the sidecar follows */
		char *sc2 = trash_sidecar(dir, final);
		rename(sc, sc2);
		free(sc2);
	}
	if (r == 0 && dlside)
		unlink(dlside);
	free(final);
	free(dlside);
	free(sc);
	free(use);
	free(dir);
	return r;
}

static void trash_entry_release(struct bus_trash_entry *e)
{
	free(e->name);
	free(e->path);
	free(e->message_id);
	free(e->from);
	free(e->to);
	free(e->type);
	free(e->agent);
	free(e->file);
	free(e->reason);
	memset(e, 0, sizeof(*e));
}

void bus_trash_entries_free(struct bus_trash_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		trash_entry_release(&v[i]);
	free(v);
}

/* Reads the sidecar of trash file name into e; false when it has none. */
static bool trash_load(const char *dir, const char *name, struct bus_trash_entry *e,
		       cJSON **side)
{
	char *sc = trash_sidecar(dir, name), *buf = NULL;
	size_t len;
	cJSON *j = NULL;
	if (util_read_file(sc, 1 << 20, &buf, &len, NULL) == 0)
		j = cJSON_ParseWithLength(buf, len);
	free(buf);
	free(sc);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return false;
	}
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->path = xasprintf("%s/%s", dir, name);
	e->message_id = jstr_clean(j, "message_id");
	e->from = jstr_clean(j, "from");
	e->to = jstr_clean(j, "to");
	e->type = jstr_clean(j, "type");
	e->agent = jstr_clean(j, "agent");
	e->file = jstr_clean(j, "file");
	e->reason = jstr_clean(j, "reason");
	char *q = jstr_clean(j, "queue");
	int qi = q ? bus_queue_from_name(q) : -1;
	free(q);
	e->queue = qi < 0 ? BUS_Q_DEAD : (enum bus_queue)qi;
	const cJSON *t = cJSON_GetObjectItem(j, "deleted_at_ns");
	e->deleted_ns = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0;
	if (side)
		*side = j;
	else
		cJSON_Delete(j);
	return true;
}

static int trash_cmp(const void *pa, const void *pb)
{
	const struct bus_trash_entry *a = pa, *b = pb;
	if (a->deleted_ns != b->deleted_ns)
		return a->deleted_ns > b->deleted_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

bool bus_has_trash(const struct bus *b)
{
	return !strcmp(b->t->name, "fs");
}

/* The trash is the file bus's: a transport without one says so. */
static int trash_supported(const struct bus *b, char **err)
{
	if (!bus_has_trash(b))
		return err_set(err, "not supported on the %s transport: the trash (a delete "
				    "there is permanent)", b->t->name);
	return 0;
}

int bus_trash_list(struct bus *b, struct bus_trash_entry **out, size_t *n, char **err)
{
	*out = NULL;
	*n = 0;
	if (trash_supported(b, err) < 0)
		return -1;
	char *dir = trash_dir(b);
	struct bus_trash_entry *v = NULL;
	size_t cap = 0;
	*n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!bus_fname_wanted(de->d_name) || is_trash_sidecar(de->d_name))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		if (trash_load(dir, de->d_name, &v[*n], NULL))
			(*n)++;
	}
	if (d)
		closedir(d);
	free(dir);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), trash_cmp);
	*out = v;
	return 0;
}

/* Puts one trash entry back; its content is the same file. */
static int trash_restore_one(struct bus *b, const struct bus_trash_entry *e, cJSON *side,
			     char **where, char **err)
{
	const char *root = bus_fs_root(b);
	bool per_agent = e->queue == BUS_Q_INBOX || e->queue == BUS_Q_RETRY;
	if (per_agent && (!e->agent || !util_valid_agent_name(e->agent)))
		return err_set(err, "cannot restore %s: its trash record names no valid inbox",
			       e->name);
	if (e->queue != BUS_Q_INBOX && e->queue != BUS_Q_RETRY && e->queue != BUS_Q_DEAD)
		return err_set(err, "cannot restore %s: deleted from %s, which takes no restore",
			       e->name, bus_queue_name(e->queue));
	char *dir = per_agent ? xasprintf("%s/%s/%s", root, bus_queue_name(e->queue), e->agent) :
				xasprintf("%s/dead-letter", root);
	const char *name = e->file && *e->file && !strchr(e->file, '/') ? e->file : e->name;
	char *final = NULL;
	int r = 0;
	char *dlside = NULL;
	if (e->queue == BUS_Q_DEAD) {
		/* the dead letter's sidecar first: a dead letter has one */
		cJSON *dl = cJSON_DetachItemFromObject(side, "dead_letter");
		if (!cJSON_IsObject(dl)) {
			cJSON_Delete(dl);
			dl = cJSON_CreateObject();
			cJSON_AddStringToObject(dl, "reason", e->reason ? e->reason : "unknown");
		}
		cJSON_DeleteItemFromObject(dl, "file");
		cJSON_AddStringToObject(dl, "file", name);
		char *js = json_pretty(dl);
		cJSON_Delete(dl);
		char *p = xasprintf("%s/%s", dir, name);
		dlside = bus_fs_sidecar(p);
		free(p);
		r = util_mkdirs(dir, err);
		if (r == 0)
			r = util_write_file_atomic(dlside, js, strlen(js), b->cfg.durable, err);
		free(js);
	}
	if (r == 0 && (r = bus_fs_move(e->path, dir, name, &final, err)) < 0 && dlside)
		unlink(dlside);
	if (r == 0 && dlside && strcmp(final, name)) {
		char *p = xasprintf("%s/%s", dir, final);
		char *sc2 = bus_fs_sidecar(p);
		rename(dlside, sc2);
		free(sc2);
		free(p);
	}
	if (r == 0) {
		char *tdir = trash_dir(b);
		char *sc = trash_sidecar(tdir, e->name);
		unlink(sc);
		free(sc);
		free(tdir);
		if (where)
			*where = e->queue == BUS_Q_DEAD ? xstrdup("the dead letters") :
				 xasprintf("%s of %s", e->queue == BUS_Q_INBOX ? "the inbox" :
					   "the retries", e->agent);
	}
	free(final);
	free(dlside);
	free(dir);
	return r;
}

int bus_trash_restore(struct bus *b, const char *id, char **where, char **err)
{
	if (where)
		*where = NULL;
	if (!id || !*id || strchr(id, '/'))
		return err_set(err, "invalid message id \"%s\"", id ? id : "");
	if (trash_supported(b, err) < 0)
		return -1;
	char *dir = trash_dir(b);
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0, r = 0;
	while (d && (de = readdir(d))) {
		if (!bus_fname_wanted(de->d_name) || is_trash_sidecar(de->d_name))
			continue;
		struct bus_trash_entry e;
		cJSON *side = NULL;
		if (!trash_load(dir, de->d_name, &e, &side))
			continue;
		if (!strcmp(e.name, id) || (e.message_id && !strcmp(e.message_id, id))) {
			char *w = NULL;
			found++;
			if (trash_restore_one(b, &e, side, &w, r < 0 ? NULL : err) < 0) {
				r = -1;
			} else if (where) {
				if (!*where) {
					*where = w;
					w = NULL;
				} else if (strcmp(*where, w)) {
					char *both = xasprintf("%s, %s", *where, w);
					free(*where);
					*where = both;
				}
			}
			free(w);
		}
		cJSON_Delete(side);
		trash_entry_release(&e);
	}
	if (d)
		closedir(d);
	free(dir);
	if (!found)
		return err_set(err, "no message %s in the trash (madf trash ls lists it; deleted "
				    "messages are kept %d days)", id, BUS_TRASH_DAYS);
	return r;
}

void bus_trash_gc(struct bus *b, bool dry_run, int64_t now_ns,
		  void (*report)(void *ctx, const char *what, const char *path), void *ctx)
{
	char *dir = trash_dir(b);
	DIR *d = opendir(dir);
	struct dirent *de;
	int64_t keep = (int64_t)BUS_TRASH_DAYS * 86400 * NS_PER_S;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* a file and its record go together, by the record's time (the
		 * deletion's); a record without its file by its own */
		bool rec = is_trash_sidecar(de->d_name);
		char *p = xasprintf("%s/%s", dir, de->d_name);
		char *sc = rec ? NULL : trash_sidecar(dir, de->d_name);
		struct stat st;
		bool have_rec = sc && lstat(sc, &st) == 0;
		if (rec) {
			/* its file, if any, decides for both */
			size_t len = strlen(de->d_name) - strlen(TRASH_SUFFIX);
			char *f = xasprintf("%s/%.*s.json", dir, (int)len, de->d_name);
			bool alone = lstat(f, &st) < 0;
			free(f);
			if (!alone || lstat(p, &st) < 0) {
				free(p);
				continue;
			}
		} else if (!have_rec && lstat(p, &st) < 0) {
			free(sc);
			free(p);
			continue;
		}
		int64_t t = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
		if (now_ns - t > keep) {
			report(ctx, "trash over " BUS_TRASH_DAYS_S " days", p);
			if (!dry_run) {
				unlink(p);
				if (sc)
					unlink(sc);
			}
		}
		free(sc);
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
}
