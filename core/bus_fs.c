/* The file-system transport: one directory per queue, one file per
 * message, renames for every state change (atomic on one file system). */
#include "core/bus_fs.h"
#include "core/bus_dlx.h"
#include "core/bus_drop.h"
#include "core/bus_rate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S 1000000000LL
#define STALE_TMP_NS (3600LL * NS_PER_S)
#define SEND_CACHE_NS (1000LL * 1000 * 1000) /* recount an inbox each second */
#define INOTIFY_BUF (64 * 1024)

struct send_count {
	char agent[MSG_AGENT_MAX + 1];
	size_t count;
	int64_t scanned_ns;
};

struct fsbus {
	char *root;      /* <data_dir>/messages */
	char *tmpdir;    /* <root>/tmp */
	char owner[64];  /* this process: HOST-PID-START */
	char host[16];
	pid_t owner_pid;
	pthread_mutex_t lock;
	struct send_count *counts;
	size_t ncounts;
};

#define FS(b) ((struct fsbus *)(b)->impl)

/* ---- names ---------------------------------------------------------- */

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int64_t parse_digits(const char *s, size_t n)
{
	int64_t v = 0;
	for (size_t i = 0; i < n && v < INT64_MAX / 10 - 10; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '-' ||
	       c == '+';
}

int bus_fname_parse(const char *name, struct bus_fname *out)
{
	size_t len = strlen(name);
	if (len < 5 || strcmp(name + len - 5, ".json"))
		return -1;
	const char *p = name, *end = name + len - 5;
	const char *d1 = memchr(p, '.', (size_t)(end - p));
	if (!d1 || d1 - p != 1 || *p < '0' || *p > '3')
		return -1;
	const char *t = d1 + 1;
	const char *d2 = memchr(t, '.', (size_t)(end - t));
	if (!d2 || d2 - t != 19 || !all_digits(t, 19))
		return -1;
	const char *id = d2 + 1;
	const char *d3 = memchr(id, '.', (size_t)(end - id));
	if (!d3 || d3 == id || (size_t)(d3 - id) >= sizeof(out->id))
		return -1;
	for (const char *c = id; c < d3; c++)
		if (!id_char(*c))
			return -1;
	const char *a = d3 + 1;
	if (end - a > 6 || !all_digits(a, (size_t)(end - a)))
		return -1;
	out->prio = *p - '0';
	out->t_ns = parse_digits(t, 19);
	memcpy(out->id, id, (size_t)(d3 - id));
	out->id[d3 - id] = '\0';
	out->attempts = (int)parse_digits(a, (size_t)(end - a));
	return 0;
}

void bus_fname_format(const struct bus_fname *f, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%019lld.%s.%d.json", f->prio,
		 (long long)f->t_ns, f->id, f->attempts);
}

bool bus_fname_wanted(const char *name)
{
	size_t len = strlen(name);
	if (name[0] == '.' || len < 6)
		return false;
	if (strcmp(name + len - 5, ".json"))
		return false;
	return true;
}

/* Dead-letter sidecars: <base>.reason.json beside <base>.json. */
static bool is_sidecar(const char *name)
{
	size_t len = strlen(name);
	return len > 12 && !strcmp(name + len - 12, ".reason.json");
}

static char *sidecar_name(const char *name)
{
	size_t len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".json"))
		len -= 5;
	return xasprintf("%.*s.reason.json", (int)len, name);
}

/* The message id a stored name stands for (broadcast copies: before '+'). */
static char *name_message_id(const char *name)
{
	struct bus_fname f;
	if (bus_fname_parse(name, &f) < 0)
		return NULL;
	char *plus = strchr(f.id, '+');
	if (plus)
		*plus = '\0';
	return xstrdup(f.id);
}

/* ---- paths and moves -------------------------------------------------- */

static char *qpath(struct bus *b, const char *q, const char *agent)
{
	if (agent)
		return xasprintf("%s/%s/%s", FS(b)->root, q, agent);
	return xasprintf("%s/%s", FS(b)->root, q);
}

static int ensure_dir(const char *path, char **err)
{
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	if (errno == ENOENT)
		return util_mkdirs(path, err);
	return err_set(err, "cannot create directory %s: %s", path,
		       strerror(errno));
}

/* rename without replacing; EEXIST and others returned as -1/errno. */
static int rename_noreplace(const char *src, const char *dst)
{
	if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* File systems without RENAME_NOREPLACE: link + unlink. */
	if (link(src, dst) < 0)
		return -1;
	unlink(src);
	return 0;
}

/* Moves src into dir under name, creating dir when missing; when the name
 * is taken, a suffix keeps both. *final gets the name used (may be NULL). */
static int move_into(const char *src, const char *dir, const char *name,
		     char **final, char **err)
{
	char *dst = xasprintf("%s/%s", dir, name);
	for (int tries = 0; tries < 8; tries++) {
		if (rename_noreplace(src, dst) == 0) {
			if (final)
				*final = xstrdup(strrchr(dst, '/') + 1);
			free(dst);
			return 0;
		}
		if (errno == ENOENT) {
			struct stat st;
			if (lstat(src, &st) < 0) {
				err_set(err, "%s vanished", src);
				free(dst);
				errno = ENOENT;
				return -1;
			}
			if (ensure_dir(dir, err) < 0) {
				free(dst);
				return -1;
			}
			continue;
		}
		if (errno != EEXIST && errno != ENOTEMPTY)
			break;
		uint32_t r;
		util_random(&r, sizeof(r));
		size_t len = strlen(name);
		size_t base = len > 5 && !strcmp(name + len - 5, ".json") ? len - 5 : len;
		free(dst);
		dst = xasprintf("%s/%.*s.dup%08x.json", dir, (int)base, name, r);
	}
	int e = errno;
	err_set(err, "cannot move %s to %s: %s", src, dst, strerror(e));
	free(dst);
	errno = e;
	return -1;
}

static void iso_now(char *buf, size_t size)
{
	util_iso8601(util_now_ns(), buf, size);
}

/* ---- attempt records and dead letters ------------------------------------ */

/* messages/attempts/<agent>.<id>.json: failures so far of one message. */
static char *attempts_path(struct bus *b, const char *agent, const char *id)
{
	return xasprintf("%s/attempts/%s.%s.json", FS(b)->root, agent, id);
}

static cJSON *attempts_load(struct bus *b, const char *agent, const char *id)
{
	char *path = attempts_path(b, agent, id);
	char *buf = NULL;
	size_t len;
	cJSON *j = NULL;
	if (util_read_file(path, 1 << 20, &buf, &len, NULL) == 0)
		j = cJSON_ParseWithLength(buf, len);
	free(buf);
	free(path);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = cJSON_CreateObject();
	}
	return j;
}

static void attempts_drop(struct bus *b, const char *agent, const char *id)
{
	char *path = attempts_path(b, agent, id);
	unlink(path);
	free(path);
}

/* Records one more failure in rec (first/last failure, error history). */
static void attempts_note(cJSON *rec, int attempts, const char *error,
			  const char *agent)
{
	char now[40];
	iso_now(now, sizeof(now));
	if (!cJSON_GetObjectItem(rec, "first_failure"))
		cJSON_AddStringToObject(rec, "first_failure", now);
	cJSON_DeleteItemFromObject(rec, "last_failure");
	cJSON_AddStringToObject(rec, "last_failure", now);
	cJSON_DeleteItemFromObject(rec, "attempts");
	cJSON_AddNumberToObject(rec, "attempts", attempts);
	cJSON_DeleteItemFromObject(rec, "error");
	cJSON_AddStringToObject(rec, "error", error);
	if (!cJSON_GetObjectItem(rec, "original_inbox"))
		cJSON_AddStringToObject(rec, "original_inbox", agent);
	cJSON *hist = cJSON_GetObjectItem(rec, "errors");
	if (!cJSON_IsArray(hist)) {
		cJSON_DeleteItemFromObject(rec, "errors");
		hist = cJSON_AddArrayToObject(rec, "errors");
	}
	cJSON *h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "at", now);
	cJSON_AddStringToObject(h, "error", error);
	cJSON_AddItemToArray(hist, h);
	while (cJSON_GetArraySize(hist) > 10)
		cJSON_DeleteItemFromArray(hist, 0);
}

static int attempts_save(struct bus *b, const char *agent, const char *id,
			 const cJSON *rec, char **err)
{
	char *dir = xasprintf("%s/attempts", FS(b)->root);
	int r = ensure_dir(dir, err);
	free(dir);
	if (r < 0)
		return -1;
	char *path = attempts_path(b, agent, id);
	char *s = cJSON_PrintUnformatted(rec);
	r = util_write_file_atomic(path, s, strlen(s), b->cfg.durable, err);
	cJSON_free(s);
	free(path);
	return r;
}

/* What a sidecar says of the message itself, when known: listing the dead
 * letters then reads the sidecars alone. */
struct dl_about {
	const char *from, *to, *type;
};

/* Moves src to the dead letters as name, with a sidecar saying why. rec
 * (may be NULL) carries the attempt history; it is not freed. about may be
 * NULL. */
static int dead_letter(struct bus *b, const char *src, const char *name,
		       const char *agent, const char *reason,
		       const char *error, const cJSON *rec,
		       const char *message_id, const struct dl_about *about,
		       char **err)
{
	char *dir = qpath(b, "dead-letter", NULL);
	char *final = NULL;
	/* Choose the name first so the sidecar can match it. */
	char *dst = xasprintf("%s/%s", dir, name);
	char *use = xstrdup(name);
	if (access(dst, F_OK) == 0) {
		uint32_t r;
		util_random(&r, sizeof(r));
		size_t len = strlen(name);
		size_t base = len > 5 && !strcmp(name + len - 5, ".json") ? len - 5 : len;
		free(use);
		use = xasprintf("%.*s.dup%08x.json", (int)base, name, r);
	}
	free(dst);

	cJSON *side = rec ? cJSON_Duplicate(rec, 1) : cJSON_CreateObject();
	char now[40];
	iso_now(now, sizeof(now));
	cJSON_DeleteItemFromObject(side, "reason");
	cJSON_AddStringToObject(side, "reason", reason);
	cJSON_DeleteItemFromObject(side, "error");
	cJSON_AddStringToObject(side, "error", error);
	if (!cJSON_GetObjectItem(side, "attempts"))
		cJSON_AddNumberToObject(side, "attempts", 0);
	if (!cJSON_GetObjectItem(side, "first_failure"))
		cJSON_AddStringToObject(side, "first_failure", now);
	if (!cJSON_GetObjectItem(side, "last_failure"))
		cJSON_AddStringToObject(side, "last_failure", now);
	cJSON_DeleteItemFromObject(side, "original_inbox");
	cJSON_AddStringToObject(side, "original_inbox", agent ? agent : "");
	cJSON_AddStringToObject(side, "dead_lettered_at", now);
	if (message_id)
		cJSON_AddStringToObject(side, "message_id", message_id);
	static const char *const keys[] = { "from", "to", "type" };
	const char *vals[] = { about ? about->from : NULL, about ? about->to : NULL,
			       about ? about->type : NULL };
	for (int k = 0; k < 3; k++) {
		cJSON_DeleteItemFromObjectCaseSensitive(side, keys[k]);
		if (vals[k])
			cJSON_AddStringToObject(side, keys[k], vals[k]);
	}
	cJSON_AddStringToObject(side, "file", use);
	char *js = json_pretty(side);
	cJSON_Delete(side);
	char *sc = sidecar_name(use);
	char *scpath = xasprintf("%s/%s", dir, sc);
	int r = util_write_file_atomic(scpath, js, strlen(js), b->cfg.durable, err);
	free(js);
	if (r == 0) {
		r = move_into(src, dir, use, &final, err);
		if (r < 0)
			unlink(scpath);
		else if (strcmp(final, use)) {
			/* Lost a race for the name: rename the sidecar too. */
			char *sc2 = sidecar_name(final);
			char *sc2path = xasprintf("%s/%s", dir, sc2);
			rename(scpath, sc2path);
			free(sc2);
			free(sc2path);
		}
	}
	if (r == 0) {
		/* What the sidecar says, in the index the listing reads. */
		char *fpath = xasprintf("%s/%s", dir, final);
		struct stat st;
		if (lstat(fpath, &st) == 0) {
			const cJSON *a = rec ? cJSON_GetObjectItem(rec, "attempts") : NULL;
			struct dlx_rec x = {
				.ino = st.st_ino, .size = (size_t)st.st_size,
				.attempts = cJSON_IsNumber(a) ? a->valueint : 0,
				.name = final, .message_id = message_id, .reason = reason,
				.original_inbox = agent ? agent : "", .error = error,
				.from = about ? about->from : NULL, .to = about ? about->to : NULL,
				.type = about ? about->type : NULL,
			};
			dlx_append(dir, &x, 1);
		}
		free(fpath);
	}
	if (r == 0 && b->on_dead)
		b->on_dead(b->on_dead_ctx, agent, final, reason, error);
	free(final);
	free(sc);
	free(scpath);
	free(use);
	free(dir);
	return r;
}

/* ---- send ---------------------------------------------------------------- */

static size_t count_wanted(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (bus_fname_wanted(de->d_name))
			n++;
	closedir(d);
	return n;
}

/* Waiting messages in agent's inbox, counted at most once a second and
 * again whenever the estimate reaches the limit. Called with lock held. */
static struct send_count *send_count_get(struct bus *b, const char *agent)
{
	struct fsbus *fs = FS(b);
	for (size_t i = 0; i < fs->ncounts; i++)
		if (!strcmp(fs->counts[i].agent, agent))
			return &fs->counts[i];
	fs->counts = xrealloc(fs->counts, (fs->ncounts + 1) * sizeof(*fs->counts));
	struct send_count *c = &fs->counts[fs->ncounts++];
	memset(c, 0, sizeof(*c));
	util_strlcpy(c->agent, agent, sizeof(c->agent));
	return c;
}

static int inbox_reserve(struct bus *b, const char *agent, char **err)
{
	struct fsbus *fs = FS(b);
	pthread_mutex_lock(&fs->lock);
	struct send_count *c = send_count_get(b, agent);
	int64_t now = util_mono_ns();
	if (c->scanned_ns == 0 || now - c->scanned_ns > SEND_CACHE_NS ||
	    c->count + 1 > b->cfg.inbox_limit) {
		char *dir = qpath(b, "inbox", agent);
		c->count = count_wanted(dir);
		c->scanned_ns = now;
		free(dir);
	}
	int r = 0;
	if (c->count + 1 > b->cfg.inbox_limit)
		r = err_set(err, "inbox of %s is full: %zu messages waiting (limit %zu)",
			    agent, c->count, b->cfg.inbox_limit);
	else
		c->count++;
	pthread_mutex_unlock(&fs->lock);
	return r;
}

/* Group commit. A durable send's directory entry is on disk once the
 * directory has been fsynced after its rename. Senders in one process
 * (agents are threads, each with its own bus handle) share those syncs:
 * each inbox directory has a commit group, and a sender that has renamed
 * its file joins the group's pending batch and waits. When no sync of the
 * directory is running, a waiter becomes the leader: it takes the pending
 * batch (every member renamed before this moment), syncs the directory
 * once and hands the result, error included, to every member. Senders
 * arriving meanwhile form the next batch. Processes share nothing here
 * (the kernel's journal still batches their concurrent syncs). */
struct commit_member {
	struct commit_member *next;
	int fd;  /* the file to sync (data groups) */
	uint64_t opened; /* open_ticket taken after fd was opened */
	int err; /* errno of its sync, 0 when it succeeded */
};

struct commit_batch {
	int refs;
	bool done;
	struct commit_member *members;
};

enum commit_kind { COMMIT_DIR, COMMIT_DATA };

struct commit_group {
	struct commit_group *next;
	char *dir;
	enum commit_kind kind;
	pthread_cond_t cv;
	bool syncing;
	struct commit_batch *pending; /* joined, sync not started yet */
};

static pthread_mutex_t commit_lock = PTHREAD_MUTEX_INITIALIZER;
static struct commit_group *commit_groups; /* kept for the process's life */
atomic_ulong bus_fs_commit_joined;
/* Taken by every temporary file just after its open. */
static atomic_uint_fast64_t open_ticket;

static int dir_sync_default(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

int (*bus_fs_dir_sync)(const char *dir) = dir_sync_default;

/* Called with commit_lock held. */
static struct commit_group *commit_group_get(const char *dir, enum commit_kind kind)
{
	for (struct commit_group *g = commit_groups; g; g = g->next)
		if (g->kind == kind && !strcmp(g->dir, dir))
			return g;
	struct commit_group *g = xcalloc(1, sizeof(*g));
	g->dir = xstrdup(dir);
	g->kind = kind;
	pthread_cond_init(&g->cv, NULL);
	g->next = commit_groups;
	commit_groups = g;
	return g;
}

static int errno_or_eio(void)
{
	return errno ? errno : EIO;
}

/* The leader's work, without the lock. A data batch of one file gets an
 * fdatasync; a larger one a single syncfs of the file system, which
 * writes back every member's data (and anything else dirty there) with
 * one journal commit and one cache flush instead of one per file. Since
 * Linux 5.8 syncfs(fd) reports any write-back error on that file system
 * since fd was opened: given the member that took the first ticket after
 * its open, that covers the write-back of every member's data, which
 * starts only after each member took its ticket and wrote. */
static void commit_run(struct commit_group *g, struct commit_batch *bt)
{
	int e;
	if (g->kind == COMMIT_DIR) {
		e = bus_fs_dir_sync(g->dir) < 0 ? errno_or_eio() : 0;
	} else if (!bt->members->next) {
		e = fdatasync(bt->members->fd) < 0 ? errno_or_eio() : 0;
	} else {
		struct commit_member *first = bt->members;
		for (struct commit_member *m = bt->members; m; m = m->next)
			if (m->opened < first->opened)
				first = m;
		e = syncfs(first->fd) < 0 ? errno_or_eio() : 0;
	}
	for (struct commit_member *m = bt->members; m; m = m->next)
		m->err = e;
}

/* Returns once a sync that started after the call has ended: 0, or the
 * errno of that sync. */
static int commit_wait(const char *dir, enum commit_kind kind, int fd,
		       uint64_t opened)
{
	struct commit_member me = { .fd = fd, .opened = opened };
	pthread_mutex_lock(&commit_lock);
	struct commit_group *g = commit_group_get(dir, kind);
	struct commit_batch *bt = g->pending;
	if (!bt) {
		bt = xcalloc(1, sizeof(*bt));
		g->pending = bt;
	}
	bt->refs++;
	me.next = bt->members;
	bt->members = &me;
	atomic_fetch_add(&bus_fs_commit_joined, 1);
	while (!bt->done) {
		if (g->syncing) {
			pthread_cond_wait(&g->cv, &commit_lock);
			continue;
		}
		/* Not done and no sync running: bt is still the pending
		 * batch. Lead it. */
		g->pending = NULL;
		g->syncing = true;
		pthread_mutex_unlock(&commit_lock);
		commit_run(g, bt);
		pthread_mutex_lock(&commit_lock);
		bt->done = true;
		g->syncing = false;
		pthread_cond_broadcast(&g->cv);
	}
	if (--bt->refs == 0)
		free(bt);
	pthread_mutex_unlock(&commit_lock);
	return me.err;
}

/* Writes json to a new temporary file in dir: a hidden ".NAME.tmp" that
 * no reader takes, so that the final rename stays within one directory
 * (cross-directory renames serialise on a file-system-wide lock). */
static int write_tmp(struct bus *b, const char *dir, const char *json,
		     size_t len, char **tmp, char **err)
{
	/* One counter for the whole process: every thread's bus handle
	 * writes temporary files under the same pid. */
	static atomic_uint tmpseq;
	unsigned seq = atomic_fetch_add(&tmpseq, 1);
	char *path = xasprintf("%s/.%d.%u.tmp", dir, (int)getpid(), seq);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT && ensure_dir(dir, NULL) == 0)
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_set(err, "cannot create %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	uint64_t opened = atomic_fetch_add(&open_ticket, 1);
	const char *p = json;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err_set(err, "cannot write %s: %s", path, strerror(errno));
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	int se = b->cfg.durable ? commit_wait(dir, COMMIT_DATA, fd, opened) : 0;
	if (se) {
		err_set(err, "cannot sync %s: %s", path, strerror(se));
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		err_set(err, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	*tmp = path;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(path);
	return -1;
}

/* Hard-links the sent file into outbox/<from>/<date>/ (best effort: the
 * outbox is an archive, the inbox copy is what counts). */
static void outbox_link(struct bus *b, const char *tmp, const char *from,
			const char *name)
{
	char date[16];
	util_date(util_now_ns(), date, sizeof(date));
	char *path = xasprintf("%s/outbox/%s/%s/%s", FS(b)->root, from, date, name);
	if (link(tmp, path) < 0 && errno == ENOENT) {
		char *dir = xasprintf("%s/outbox/%s/%s", FS(b)->root, from, date);
		if (util_mkdirs(dir, NULL) == 0 && link(tmp, path) < 0) {
			/* An archive copy is not worth failing a send for. */
		}
		free(dir);
	}
	free(path);
}

static int deliver_one(struct bus *b, const char *tmp, const char *agent,
		       const struct bus_fname *f0, bool move, char **err)
{
	struct bus_fname f = *f0;
	char *dir = qpath(b, "inbox", agent);
	char name[300];
	char *dst = NULL;
	int r = -1;
	for (int tries = 0; tries < 16; tries++) {
		bus_fname_format(&f, name, sizeof(name));
		free(dst);
		dst = xasprintf("%s/%s", dir, name);
		int rc = move ? rename_noreplace(tmp, dst) : link(tmp, dst);
		int e = errno;
		if (rc == 0) {
			r = 0;
			break;
		}
		if (e == ENOENT) {
			if (ensure_dir(dir, err) < 0)
				break;
			continue;
		}
		if (e != EEXIST) {
			err_set(err, "cannot deliver to %s: %s", dir, strerror(e));
			break;
		}
		f.t_ns++; /* same id and time: take the next nanosecond */
	}
	int e;
	if (r == 0 && b->cfg.durable && (e = commit_wait(dir, COMMIT_DIR, -1, 0)) != 0) {
		/* Its survival is unknown: withdraw it unless its consumer
		 * has taken it already. */
		bool gone = unlink(dst) == 0;
		err_set(err, "cannot sync directory %s: %s (%s)", dir, strerror(e),
			gone ? "the message was withdrawn" :
			"the message may have been delivered");
		r = -1;
	}
	free(dst);
	free(dir);
	return r;
}

static int fs_send(struct bus *b, const struct msg *m, const char *json,
		   size_t len, char **err)
{
	struct bus_fname f = { .prio = m->priority, .t_ns = util_now_ns(),
			       .attempts = 0 };
	util_strlcpy(f.id, m->id, sizeof(f.id));
	bool bcast = !strcmp(m->to, "broadcast");
	if (!bcast && inbox_reserve(b, m->to, err) < 0)
		return -1;
	char *tmp;
	char *tdir = bcast ? xstrdup(FS(b)->tmpdir) : qpath(b, "inbox", m->to);
	int wr = write_tmp(b, tdir, json, len, &tmp, err);
	free(tdir);
	if (wr < 0)
		return -1;
	char name[300];
	bus_fname_format(&f, name, sizeof(name));
	outbox_link(b, tmp, m->from, name);
	int r;
	if (!bcast) {
		r = deliver_one(b, tmp, m->to, &f, true, err);
	} else {
		/* A copy (hard link) into every agent's inbox but the
		 * sender's, and one in broadcast/ as the record. */
		char *bdir = qpath(b, "broadcast", NULL);
		char *rec = xasprintf("%s/%s", bdir, name);
		if (link(tmp, rec) < 0 && errno == ENOENT &&
		    ensure_dir(bdir, NULL) == 0 && link(tmp, rec) < 0) {
			/* the record is an archive, as the outbox */
		}
		free(rec);
		free(bdir);
		char *idir = qpath(b, "inbox", NULL);
		DIR *d = opendir(idir);
		r = 0;
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!util_valid_agent_name(de->d_name) ||
			    !strcmp(de->d_name, m->from))
				continue;
			struct bus_fname fc = f;
			snprintf(fc.id, sizeof(fc.id), "%.128s+%.64s", m->id, de->d_name);
			if (deliver_one(b, tmp, de->d_name, &fc, false, err) < 0)
				r = -1;
		}
		if (d)
			closedir(d);
		free(idir);
		unlink(tmp);
	}
	if (r < 0)
		unlink(tmp);
	free(tmp);
	return r;
}

/* ---- owners and liveness ------------------------------------------------ */

/* Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat),
 * or 0 when the process does not exist. */
static unsigned long long proc_start(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ")": state is field 3; starttime is field 22. */
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

static void host_id(char *buf, size_t size)
{
	char id[64] = "";
	int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, id, sizeof(id) - 1);
		close(fd);
		id[n > 0 ? n : 0] = '\0';
	}
	if (strlen(id) >= 8)
		snprintf(buf, size, "%.8s", id);
	else
		snprintf(buf, size, "%08lx", (unsigned long)gethostid() & 0xffffffffUL);
}

static void owner_refresh(struct fsbus *fs)
{
	pid_t pid = getpid();
	if (fs->owner_pid == pid)
		return;
	fs->owner_pid = pid;
	snprintf(fs->owner, sizeof(fs->owner), "%s-%d-%llu", fs->host, (int)pid,
		 proc_start(pid));
}

/* Is the consumer named by owner (HOST-PID-START) gone for sure? */
static bool owner_dead(struct fsbus *fs, const char *owner)
{
	char host[16];
	int pid;
	unsigned long long start;
	if (sscanf(owner, "%15[0-9a-f]-%d-%llu", host, &pid, &start) != 3)
		return false;
	if (strcmp(host, fs->host) || pid <= 0)
		return false; /* another machine: only its lease tells */
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	unsigned long long now = proc_start(pid);
	return now == 0 || (start != 0 && now != start);
}

/* ---- consumer ---------------------------------------------------------- */

struct cand {
	int prio;
	int64_t t_ns;
	char *name;
};

struct bus_consumer {
	struct bus *bus; /* first: see bus.c */
	char *agent;
	char *inbox, *processing, *retry, *processed_root;
	int ifd, wd_inbox, wd_retry;
	struct cand *heap;
	size_t nheap, capheap;
	bool rescan;
	int64_t last_scan_ns;   /* monotonic */
	int64_t next_due_ns;    /* earliest retry due (realtime), 0 none */
	bool retry_dirty;
	int64_t last_sweep_ns;  /* monotonic */
	char date[16];
};

static bool cand_less(const struct cand *a, const struct cand *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns;
	return strcmp(a->name, b->name) < 0;
}

static void heap_push(struct bus_consumer *c, struct cand x)
{
	if (c->nheap == c->capheap) {
		c->capheap = c->capheap ? c->capheap * 2 : 64;
		c->heap = xrealloc(c->heap, c->capheap * sizeof(*c->heap));
	}
	size_t i = c->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!cand_less(&x, &c->heap[p]))
			break;
		c->heap[i] = c->heap[p];
		i = p;
	}
	c->heap[i] = x;
}

static struct cand heap_pop(struct bus_consumer *c)
{
	struct cand top = c->heap[0];
	struct cand x = c->heap[--c->nheap];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct cand *best = &x;
		if (l < c->nheap && cand_less(&c->heap[l], best)) {
			m = l;
			best = &c->heap[l];
		}
		if (r < c->nheap && cand_less(&c->heap[r], best))
			m = r;
		if (m == i)
			break;
		c->heap[i] = c->heap[m];
		i = m;
	}
	if (c->nheap)
		c->heap[i] = x;
	return top;
}

static void heap_clear(struct bus_consumer *c)
{
	for (size_t i = 0; i < c->nheap; i++)
		free(c->heap[i].name);
	c->nheap = 0;
}

/* Priority and age of a file whose name is not ours: from its content when
 * it can be read cheaply, else normal priority and its mtime. */
static void foreign_key(const char *dir, const char *name, struct cand *x)
{
	x->prio = PRIO_NORMAL;
	x->t_ns = 0;
	char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	if (lstat(path, &st) == 0)
		x->t_ns = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
	if (S_ISREG(st.st_mode) && st.st_size < 1 << 20) {
		char *buf = NULL;
		size_t len;
		if (util_read_file(path, 1 << 20, &buf, &len, NULL) == 0) {
			struct msg *m = NULL;
			struct msg_errors errs = { 0 };
			if (msg_parse(buf, len, &m, &errs) == 0) {
				x->prio = m->priority;
				x->t_ns = m->ts_ns;
			}
			msg_free(&m);
			msg_errors_release(&errs);
		}
		free(buf);
	}
	free(path);
}

static void consumer_add(struct bus_consumer *c, const char *name)
{
	if (!bus_fname_wanted(name))
		return;
	struct bus_fname f;
	struct cand x = { .name = xstrdup(name) };
	if (bus_fname_parse(name, &f) == 0) {
		x.prio = f.prio;
		x.t_ns = f.t_ns;
	} else {
		foreign_key(c->inbox, name, &x);
	}
	heap_push(c, x);
}

static void consumer_scan(struct bus_consumer *c)
{
	heap_clear(c);
	DIR *d = opendir(c->inbox);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			consumer_add(c, de->d_name);
		closedir(d);
	}
	c->rescan = false;
	c->retry_dirty = true;
	c->last_scan_ns = util_mono_ns();
}

/* Reads pending inotify events into the heap. Returns 1 if any. */
static int consumer_drain(struct bus_consumer *c)
{
	if (c->ifd < 0)
		return 0;
	char buf[INOTIFY_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
	int any = 0;
	for (;;) {
		ssize_t n = read(c->ifd, buf, sizeof(buf));
		if (n <= 0)
			break;
		any = 1;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)(void *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW)
				c->rescan = true;
			else if (ev->len && ev->wd == c->wd_inbox)
				consumer_add(c, ev->name);
			else if (ev->wd == c->wd_retry)
				c->retry_dirty = true;
		}
	}
	return any;
}

/* Moves due retries of one agent back to its inbox; returns the earliest
 * due time still waiting (0 if none). */
static int64_t promote_retries(struct bus *b, const char *agent)
{
	char *rdir = qpath(b, "retry", agent);
	char *idir = qpath(b, "inbox", agent);
	int64_t now = util_now_ns(), next = 0;
	DIR *d = opendir(rdir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		if (strlen(n) < 21 || n[19] != '.' || !all_digits(n, 19))
			continue;
		int64_t due = parse_digits(n, 19);
		if (due > now) {
			if (!next || due < next)
				next = due;
			continue;
		}
		char *src = xasprintf("%s/%s", rdir, n);
		move_into(src, idir, n + 20, NULL, NULL);
		free(src);
	}
	if (d)
		closedir(d);
	free(rdir);
	free(idir);
	return next;
}

/* Gives back one agent's claims held by dead consumers or expired leases:
 * to the inbox with one more attempt, or to the dead letters. */
static void recover_claims(struct bus *b, const char *agent)
{
	struct fsbus *fs = FS(b);
	char *pdir = qpath(b, "processing", agent);
	char *idir = qpath(b, "inbox", agent);
	DIR *d = opendir(pdir);
	struct dirent *de;
	int64_t now = util_now_ns();
	while (d && (de = readdir(d))) {
		const char *at = strchr(de->d_name, '@');
		if (!at || de->d_name[0] == '.')
			continue;
		char owner[64];
		snprintf(owner, sizeof(owner), "%.*s", (int)(at - de->d_name), de->d_name);
		if (!strcmp(owner, fs->owner))
			continue;
		char *src = xasprintf("%s/%s", pdir, de->d_name);
		struct stat st;
		char *why = NULL;
		if (owner_dead(fs, owner))
			why = xasprintf("consumer %s died while handling it", owner);
		else if (lstat(src, &st) == 0 &&
			 now - ((int64_t)st.st_mtim.tv_sec * NS_PER_S) >
				 b->cfg.lease_s * NS_PER_S)
			why = xasprintf("lease of consumer %s expired after %lld s",
					owner, (long long)b->cfg.lease_s);
		if (!why) {
			free(src);
			continue;
		}
		const char *name = at + 1;
		struct bus_fname f;
		if (bus_fname_parse(name, &f) == 0) {
			f.attempts++;
			cJSON *rec = attempts_load(b, agent, f.id);
			attempts_note(rec, f.attempts, why, agent);
			char *mid = name_message_id(name);
			if (f.attempts >= b->cfg.max_attempts) {
				dead_letter(b, src, name, agent, "max_attempts", why,
					    rec, mid, NULL, NULL);
				attempts_drop(b, agent, f.id);
			} else if (attempts_save(b, agent, f.id, rec, NULL) == 0) {
				char nn[300];
				bus_fname_format(&f, nn, sizeof(nn));
				move_into(src, idir, nn, NULL, NULL);
			}
			free(mid);
			cJSON_Delete(rec);
		} else {
			move_into(src, idir, name, NULL, NULL);
		}
		free(why);
		free(src);
	}
	if (d)
		closedir(d);
	free(pdir);
	free(idir);
}

/* Removes temporary files older than an hour from tmp/ and one inbox. */
static void clean_stale_tmp(const char *dir, int64_t now, bool dry_run,
			    void (*report)(void *, const char *, const char *),
			    void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		bool tmp = len > 4 && !strcmp(de->d_name + len - 4, ".tmp");
		if (!tmp || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
		    now - (int64_t)st.st_mtim.tv_sec * NS_PER_S > STALE_TMP_NS) {
			if (report)
				report(ctx, "stale temporary file", p);
			if (!dry_run)
				unlink(p);
		}
		free(p);
	}
	if (d)
		closedir(d);
}

static void consumer_sweep(struct bus_consumer *c, bool force)
{
	int64_t mono = util_mono_ns();
	int64_t every = (int64_t)(c->bus->cfg.poll_interval_s * 5 * NS_PER_S);
	if (!force && mono - c->last_sweep_ns < every)
		return;
	c->last_sweep_ns = mono;
	recover_claims(c->bus, c->agent);
	c->retry_dirty = true;
}

static void fs_consumer_free(struct bus_consumer *c)
{
	heap_clear(c);
	free(c->heap);
	if (c->ifd >= 0)
		close(c->ifd);
	free(c->agent);
	free(c->inbox);
	free(c->processing);
	free(c->retry);
	free(c->processed_root);
	free(c);
}

static int fs_consumer_open(struct bus *b, const char *agent,
			    struct bus_consumer **out, char **err)
{
	struct bus_consumer *c = xcalloc(1, sizeof(*c));
	c->bus = b;
	c->agent = xstrdup(agent);
	c->inbox = qpath(b, "inbox", agent);
	c->processing = qpath(b, "processing", agent);
	c->retry = qpath(b, "retry", agent);
	c->processed_root = qpath(b, "processed", NULL);
	c->ifd = c->wd_inbox = c->wd_retry = -1;
	owner_refresh(FS(b));
	if (ensure_dir(c->inbox, err) < 0 || ensure_dir(c->processing, err) < 0 ||
	    ensure_dir(c->retry, err) < 0) {
		fs_consumer_free(c);
		return -1;
	}
	if (!b->cfg.force_poll) {
		c->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (c->ifd >= 0) {
			c->wd_inbox = inotify_add_watch(c->ifd, c->inbox,
							IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
			c->wd_retry = inotify_add_watch(c->ifd, c->retry,
							IN_MOVED_TO | IN_ONLYDIR);
			if (c->wd_inbox < 0 || c->wd_retry < 0) {
				close(c->ifd);
				c->ifd = -1; /* e.g. NFS: poll instead */
			}
		}
	}
	consumer_sweep(c, true);
	clean_stale_tmp(FS(b)->tmpdir, util_now_ns(), false, NULL, NULL);
	clean_stale_tmp(c->inbox, util_now_ns(), false, NULL, NULL);
	consumer_scan(c);
	*out = c;
	return 0;
}

static int fs_consumer_fd(struct bus_consumer *c)
{
	return c->ifd;
}

static int64_t consumer_next_deadline_ms(struct bus_consumer *c)
{
	int64_t ms = (int64_t)(c->bus->cfg.poll_interval_s * 1000);
	if (c->next_due_ns) {
		int64_t d = (c->next_due_ns - util_now_ns()) / 1000000 + 1;
		if (d < ms)
			ms = d < 0 ? 0 : d;
	}
	return ms;
}

static int fs_consumer_wait(struct bus_consumer *c, int timeout_ms)
{
	if (c->nheap || c->rescan)
		return 1;
	if (c->retry_dirty || (c->next_due_ns && c->next_due_ns <= util_now_ns()))
		return 1;
	int64_t limit = consumer_next_deadline_ms(c);
	int t = timeout_ms < 0 || timeout_ms > limit ? (int)limit : timeout_ms;
	if (c->ifd < 0) {
		struct timespec ts = { t / 1000, (long)(t % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		c->rescan = true;
		return 1;
	}
	struct pollfd p = { .fd = c->ifd, .events = POLLIN };
	int r = poll(&p, 1, t);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (r == 0)
		return c->next_due_ns && c->next_due_ns <= util_now_ns();
	return consumer_drain(c);
}

static const char *mode_name(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	return "not a regular file";
}

/* Checks and parses a claimed file. Returns the message, or NULL after
 * dead-lettering it (reason filled). */
static struct msg *claim_check(struct bus_consumer *c, const char *ppath,
			       const char *name)
{
	struct bus *b = c->bus;
	struct stat st;
	char *error = NULL;
	const char *reason = NULL;
	struct msg *m = NULL;
	char *buf = NULL;
	size_t len = 0;
	struct msg_errors errs = { 0 };
	if (lstat(ppath, &st) < 0) {
		reason = "unreadable";
		error = xasprintf("cannot stat: %s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		reason = "not_regular";
		error = xasprintf("%s is %s; only regular files are read", name,
				  mode_name(st.st_mode));
	} else if ((uint64_t)st.st_size > b->cfg.max_bytes) {
		reason = "too_large";
		error = xasprintf("%lld bytes is over the %zu-byte limit",
				  (long long)st.st_size, b->cfg.max_bytes);
	} else if (util_read_file(ppath, b->cfg.max_bytes, &buf, &len, &error) < 0) {
		reason = "unreadable";
	} else if (msg_parse(buf, len, &m, &errs) < 0) {
		reason = "invalid";
		error = msg_errors_join(&errs);
	} else if (strcmp(m->to, c->agent) && strcmp(m->to, "broadcast")) {
		reason = "misrouted";
		error = xasprintf("addressed to %s, found in the inbox of %s",
				  m->to, c->agent);
	} else if (m->timeout_s >= 0 &&
		   m->ts_ns + m->timeout_s * NS_PER_S < util_now_ns()) {
		reason = "expired";
		error = xasprintf("timeout of %lld s passed before delivery (sent %s)",
				  (long long)m->timeout_s, m->timestamp);
	}
	free(buf);
	if (reason && !strcmp(reason, "expired") && bus_drop_type(m->type) &&
	    unlink(ppath) == 0) {
		/* nobody needs a stale heartbeat: dropped and counted */
		bus_drop_note(FS(b)->root, m, c->agent);
		struct bus_fname f;
		if (bus_fname_parse(name, &f) == 0 && f.attempts > 0)
			attempts_drop(b, c->agent, f.id);
		msg_free(&m);
		reason = NULL;
	}
	if (reason) {
		char *mid = m ? xstrdup(m->id) : name_message_id(name);
		cJSON *rec = NULL;
		struct bus_fname f;
		if (bus_fname_parse(name, &f) == 0 && f.attempts > 0)
			rec = attempts_load(b, c->agent, f.id);
		if (errs.count) {
			if (!rec)
				rec = cJSON_CreateObject();
			cJSON *arr = cJSON_AddArrayToObject(rec, "validation_errors");
			for (size_t i = 0; i < errs.count; i++)
				cJSON_AddItemToArray(arr, cJSON_CreateString(errs.items[i]));
		}
		struct dl_about ab = { m ? m->from : NULL, m ? m->to : NULL,
				       m ? msg_type_name(m->type) : NULL };
		dead_letter(b, ppath, name, c->agent, reason, error, rec, mid, &ab, NULL);
		if (rec && bus_fname_parse(name, &f) == 0)
			attempts_drop(b, c->agent, f.id);
		cJSON_Delete(rec);
		free(mid);
		msg_free(&m);
	}
	msg_errors_release(&errs);
	free(error);
	return m;
}

static int fs_claim(struct bus_consumer *c, struct bus_delivery **d, char **err)
{
	struct bus *b = c->bus;
	struct fsbus *fs = FS(b);
	owner_refresh(fs);
	consumer_drain(c);
	consumer_sweep(c, false);
	if (c->retry_dirty || (c->next_due_ns && c->next_due_ns <= util_now_ns())) {
		c->retry_dirty = false;
		c->next_due_ns = promote_retries(b, c->agent);
		consumer_drain(c);
	}
	for (;;) {
		if (c->rescan ||
		    (c->nheap == 0 && c->ifd < 0 &&
		     util_mono_ns() - c->last_scan_ns >=
			     (int64_t)(b->cfg.poll_interval_s * NS_PER_S)))
			consumer_scan(c);
		if (c->nheap == 0)
			return 0;
		struct cand x = heap_pop(c);
		char *src = xasprintf("%s/%s", c->inbox, x.name);
		char *pname = xasprintf("%s@%s", fs->owner, x.name);
		char *ppath = xasprintf("%s/%s", c->processing, pname);
		int rc = rename(src, ppath);
		int e = errno;
		free(src);
		if (rc < 0) {
			free(pname);
			free(ppath);
			free(x.name);
			if (e == ENOENT)
				continue; /* another consumer took it */
			return err_set(err, "cannot claim from %s: %s", c->inbox,
				       strerror(e));
		}
		struct msg *m = claim_check(c, ppath, x.name);
		if (!m) {
			free(pname);
			free(ppath);
			free(x.name);
			continue;
		}
		struct bus_fname f;
		char *canon;
		if (bus_fname_parse(x.name, &f) == 0) {
			canon = x.name;
		} else {
			/* A foreign name: store it under ours from now on. */
			f.prio = m->priority;
			f.t_ns = x.t_ns ? x.t_ns : m->ts_ns;
			util_strlcpy(f.id, m->id, sizeof(f.id));
			f.attempts = 0;
			char nn[300];
			bus_fname_format(&f, nn, sizeof(nn));
			char *pn2 = xasprintf("%s@%s", fs->owner, nn);
			char *pp2 = xasprintf("%s/%s", c->processing, pn2);
			if (rename_noreplace(ppath, pp2) == 0) {
				free(pname);
				pname = pn2;
			} else {
				free(pn2);
			}
			free(pp2);
			free(x.name);
			canon = xstrdup(strchr(pname, '@') + 1);
		}
		free(ppath);
		struct bus_delivery *dv = xcalloc(1, sizeof(*dv));
		dv->msg = m;
		dv->attempts = f.attempts;
		dv->name = pname;
		dv->canon = canon;
		dv->agent = xstrdup(c->agent);
		*d = dv;
		return 1;
	}
}

static int fs_ack(struct bus_consumer *c, struct bus_delivery *d, char **err)
{
	char date[16];
	util_date(util_now_ns(), date, sizeof(date));
	char *src = xasprintf("%s/%s", c->processing, d->name);
	char *dir = xasprintf("%s/%s", c->processed_root, date);
	int r = move_into(src, dir, d->canon, NULL, err);
	if (r < 0 && errno == ENOENT)
		err_set(err, "lost the claim on %s: it was given back to the inbox "
			     "(lease expired) and will be delivered again",
			d->msg->id);
	if (r == 0 && d->attempts > 0) {
		struct bus_fname f;
		if (bus_fname_parse(d->canon, &f) == 0)
			attempts_drop(c->bus, c->agent, f.id);
	}
	free(src);
	free(dir);
	return r;
}

static int fs_nack(struct bus_consumer *c, struct bus_delivery *d,
		   const char *error, bool permanent, char **err)
{
	struct bus *b = c->bus;
	struct bus_fname f;
	if (bus_fname_parse(d->canon, &f) < 0)
		return err_set(err, "bad handle %s", d->canon);
	f.attempts++;
	char *src = xasprintf("%s/%s", c->processing, d->name);
	cJSON *rec = attempts_load(b, c->agent, f.id);
	attempts_note(rec, f.attempts, error, c->agent);
	int r;
	if (permanent || f.attempts >= b->cfg.max_attempts) {
		struct dl_about ab = { d->msg->from, d->msg->to, msg_type_name(d->msg->type) };
		r = dead_letter(b, src, d->canon, c->agent,
				permanent ? "rejected" : "max_attempts", error, rec,
				d->msg->id, &ab, err);
		if (r == 0)
			attempts_drop(b, c->agent, f.id);
	} else if ((r = attempts_save(b, c->agent, f.id, rec, err)) == 0) {
		int64_t due = util_now_ns() + bus_backoff_ms(&b->cfg, f.attempts) * 1000000;
		char nn[300], rn[340];
		bus_fname_format(&f, nn, sizeof(nn));
		snprintf(rn, sizeof(rn), "%019lld.%s", (long long)due, nn);
		r = move_into(src, c->retry, rn, NULL, err);
		if (r == 0 && (!c->next_due_ns || due < c->next_due_ns))
			c->next_due_ns = due;
	}
	cJSON_Delete(rec);
	free(src);
	return r;
}

static int fs_release(struct bus_consumer *c, struct bus_delivery *d, char **err)
{
	char *src = xasprintf("%s/%s", c->processing, d->name);
	int r = move_into(src, c->inbox, d->canon, NULL, err);
	free(src);
	return r;
}

static int fs_renew(struct bus_consumer *c, struct bus_delivery *d)
{
	char *p = xasprintf("%s/%s", c->processing, d->name);
	int r = utimensat(AT_FDCWD, p, NULL, AT_SYMLINK_NOFOLLOW);
	free(p);
	return r;
}

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
		if (strlen(name) < 21 || name[19] != '.' || !all_digits(name, 19))
			return false;
		e->due_ns = parse_digits(name, 19);
		base = name + 20;
	} else if (q == BUS_Q_DEAD) {
		if (is_sidecar(name) || !bus_fname_wanted(name)) {
			size_t len = strlen(name);
			if (is_sidecar(name) || (len > 4 && !strcmp(name + len - 4, ".tmp")))
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
		e->message_id = name_message_id(base);
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

/* A string field, made safe to show: the object may come from a file that
 * failed validation (invalid UTF-8, control characters). */
static char *json_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsString(v))
		return NULL;
	return util_sanitize(v->valuestring, strlen(v->valuestring), false);
}

/* For a dead letter: reason, error, original inbox, and (when the sidecar
 * has them) from/to/type. Returns true when from and type were there. */
static bool entry_load_sidecar(struct bus_entry *e)
{
	char *sc = sidecar_name(e->path), *buf = NULL;
	size_t len;
	bool about = false;
	if (util_read_file(sc, 1 << 20, &buf, &len, NULL) == 0) {
		cJSON *j = cJSON_ParseWithLength(buf, len);
		e->reason = json_str(j, "reason");
		e->error = json_str(j, "error");
		e->original_inbox = json_str(j, "original_inbox");
		const cJSON *a = cJSON_GetObjectItem(j, "attempts");
		if (cJSON_IsNumber(a))
			e->attempts = a->valueint;
		if (!e->message_id)
			e->message_id = json_str(j, "message_id");
		e->from = json_str(j, "from");
		e->to = json_str(j, "to");
		e->type = json_str(j, "type");
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
				e->from = json_str(j, "from");
				e->to = json_str(j, "to");
				e->type = json_str(j, "type");
				if (!e->message_id)
					e->message_id = json_str(j, "message_id");
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

static int fs_list(struct bus *b, enum bus_queue q, const char *agent,
		   bool content, struct bus_entry **out, size_t *n, char **err)
{
	(void)err;
	struct entry_vec v = { 0 };
	char *root = qpath(b, q_dir(q), NULL);
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
	if (v.n > 1)
		qsort(v.v, v.n, sizeof(*v.v), entry_cmp);
	*out = v.v;
	*n = v.n;
	return 0;
}

/* Dead letters one by one: the index's entries lent straight from it; the
 * ones it misses read from their sidecars. When the index missed or has
 * grown stale, a full listing afterwards rewrites it. */
static int fs_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
			void *ctx, char **err)
{
	char *root = qpath(b, q_dir(BUS_Q_DEAD), NULL);
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
		if (fs_list(b, BUS_Q_DEAD, NULL, true, &v, &nv, err) < 0)
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
	char *dir = qpath(b, q_dir(BUS_Q_DEAD), NULL);
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
	char *root = qpath(b, q_dir(BUS_Q_INBOX), NULL);
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

static int fs_find(struct bus *b, const char *id, struct bus_entry *out,
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
		fs_list(b, order[i], NULL, false, &v, &n, NULL);
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

static int fs_read(struct bus *b, const struct bus_entry *e, char **json,
		   size_t *len, char **err)
{
	return util_read_file(e->path, b->cfg.max_bytes, json, len, err);
}

static void drop_dead(const struct bus_entry *e)
{
	char *sc = sidecar_name(e->path);
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
	if (inbox_reserve(b, agent, err) < 0)
		return -1;
	int r;
	if (rewrite || !src) {
		char *js = msg_to_json(m, true);
		size_t len = strlen(js);
		js = xrealloc(js, len + 2);
		js[len++] = '\n';
		js[len] = '\0';
		char *tmp;
		r = write_tmp(b, FS(b)->tmpdir, js, len, &tmp, err);
		free(js);
		if (r == 0) {
			r = deliver_one(b, tmp, agent, &f, true, err);
			if (r < 0)
				unlink(tmp);
			free(tmp);
		}
		if (r == 0 && src)
			unlink(src);
	} else {
		r = deliver_one(b, src, agent, &f, true, err);
	}
	return r;
}

static int load_valid(const struct bus_entry *e, struct msg **m, char **err)
{
	char *buf;
	size_t len;
	if (util_read_file(e->path, MSG_MAX_BYTES, &buf, &len, err) < 0)
		return -1;
	struct msg_errors errs = { 0 };
	int r = msg_parse(buf, len, m, &errs);
	free(buf);
	if (r < 0) {
		char *j = msg_errors_join(&errs);
		err_set(err, "%s is invalid and would fail again (%s); fix it with "
			     "the console's edit action or `madf requeue`", e->name, j);
		free(j);
	}
	msg_errors_release(&errs);
	return r;
}

static int fs_retry(struct bus *b, const char *id, const char *to, char **note,
		    char **err)
{
	struct bus_entry e;
	if (fs_find(b, id, &e, err) < 0)
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
		drop_dead(&e);
		struct bus_fname f;
		if (bus_fname_parse(e.name, &f) == 0)
			attempts_drop(b, target, f.id);
	}
out:
	msg_free(&m);
	bus_entry_release(&e);
	return r;
}

static int fs_remove(struct bus *b, const char *id, struct bus_entry *out, char **err)
{
	struct bus_entry e;
	if (fs_find(b, id, &e, err) < 0)
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
	return move_into(src, dir, name, final, err);
}

char *bus_fs_sidecar(const char *path)
{
	return sidecar_name(path);
}

static int fs_kill(struct bus *b, const char *id, const char *why, char **err)
{
	struct bus_entry e;
	if (fs_find(b, id, &e, err) < 0)
		return -1;
	int r;
	if (e.queue != BUS_Q_INBOX && e.queue != BUS_Q_RETRY) {
		r = err_set(err, "%s is in %s; only waiting or retrying messages can be "
				 "killed to the dead letters", id, bus_queue_name(e.queue));
	} else {
		const char *name = e.queue == BUS_Q_RETRY ? e.name + 20 : e.name;
		struct dl_about ab = { e.from, e.to, e.type };
		r = dead_letter(b, e.path, name, e.agent, "killed",
				why ? why : "killed by the operator", NULL,
				e.message_id, &ab, err);
	}
	bus_entry_release(&e);
	return r;
}

static int fs_requeue(struct bus *b, const char *id, const char *json,
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
	int r = fs_find(b, id, &e, err);
	if (r == 0 && e.queue != BUS_Q_DEAD)
		r = err_set(err, "%s is not a dead letter (it is in %s)", id,
			    bus_queue_name(e.queue));
	if (r == 0 && !strcmp(m->to, "broadcast"))
		r = err_set(err, "cannot requeue to broadcast; address one agent");
	if (r == 0)
		r = queue_fresh(b, m, m->to, NULL, true, err);
	if (r == 0) {
		unlink(e.path);
		drop_dead(&e);
	}
	if (e.name)
		bus_entry_release(&e);
	msg_free(&m);
	return r;
}

static void for_each_agent(struct bus *b, const char *q,
			   void (*fn)(struct bus *, const char *))
{
	char *root = qpath(b, q, NULL);
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
	promote_retries(b, agent);
}

static int fs_sweep(struct bus *b, const char *agent, char **err)
{
	(void)err;
	owner_refresh(FS(b));
	if (agent) {
		recover_claims(b, agent);
		promote_retries(b, agent);
	} else {
		for_each_agent(b, "processing", recover_claims);
		for_each_agent(b, "retry", promote_one);
	}
	return 0;
}

/* ---- retention ---------------------------------------------------------- */

struct gc_ctx {
	struct bus *b;
	bool dry_run;
	int64_t now;
	void (*report)(void *, const char *, const char *);
	void *ctx;
};

static int64_t days_ns(int d)
{
	return (int64_t)d * 86400 * NS_PER_S;
}

/* Date directories (YYYY-MM-DD) under dir older than keep days. */
static void gc_dated(struct gc_ctx *g, const char *dir, int keep, const char *what)
{
	char cutoff[16];
	util_date(g->now - days_ns(keep), cutoff, sizeof(cutoff));
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strlen(de->d_name) != 10 || de->d_name[4] != '-')
			continue;
		if (strcmp(de->d_name, cutoff) >= 0)
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		g->report(g->ctx, what, p);
		if (!g->dry_run)
			util_rm_tree(p);
		free(p);
	}
	if (d)
		closedir(d);
}

static int64_t ctime_ns(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return INT64_MAX;
	return (int64_t)st.st_ctim.tv_sec * NS_PER_S + st.st_ctim.tv_nsec;
}

static void gc_noop(void *ctx, const char *what, const char *path)
{
	(void)ctx;
	(void)what;
	(void)path;
}

static int fs_gc(struct bus *b, bool dry_run, int64_t now_ns,
		 void (*report)(void *ctx, const char *what, const char *path),
		 void *ctx, char **err)
{
	(void)err;
	struct gc_ctx g = { b, dry_run, now_ns, report ? report : gc_noop, ctx };
	if (!dry_run)
		fs_sweep(b, NULL, NULL);
	char *dir = qpath(b, "processed", NULL);
	gc_dated(&g, dir, 7, "processed over 7 days");
	free(dir);
	/* outbox/<agent>/<date> */
	char *ob = qpath(b, "outbox", NULL);
	DIR *d = opendir(ob);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!util_valid_agent_name(de->d_name))
			continue;
		char *p = xasprintf("%s/%s", ob, de->d_name);
		gc_dated(&g, p, 7, "outbox copies over 7 days");
		free(p);
	}
	if (d)
		closedir(d);
	free(ob);
	/* dead letters over 30 days, broadcast records over 7 days */
	struct bus_entry *v;
	size_t n;
	fs_list(b, BUS_Q_DEAD, NULL, false, &v, &n, NULL);
	for (size_t i = 0; i < n; i++) {
		if (now_ns - ctime_ns(v[i].path) <= days_ns(30))
			continue;
		g.report(g.ctx, "dead letter over 30 days", v[i].path);
		if (!dry_run) {
			unlink(v[i].path);
			drop_dead(&v[i]);
		}
	}
	bus_entries_free(v, n);
	char *bd = qpath(b, "broadcast", NULL);
	d = opendir(bd);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", bd, de->d_name);
		if (now_ns - ctime_ns(p) > days_ns(7)) {
			g.report(g.ctx, "broadcast record over 7 days", p);
			if (!dry_run)
				unlink(p);
		}
		free(p);
	}
	if (d)
		closedir(d);
	free(bd);
	/* waiting over 24 hours: to the dead letters, never deleted */
	fs_list(b, BUS_Q_INBOX, NULL, false, &v, &n, NULL);
	for (size_t i = 0; i < n; i++) {
		if (now_ns - v[i].enqueued_ns <= days_ns(1))
			continue;
		g.report(g.ctx, "waiting over 24 hours, to the dead letters", v[i].path);
		if (!dry_run)
			dead_letter(b, v[i].path, v[i].name, v[i].agent, "retention",
				    "waited in the inbox over 24 hours", NULL,
				    v[i].message_id, NULL, NULL);
	}
	bus_entries_free(v, n);
	bus_trash_gc(b, dry_run, now_ns, g.report, g.ctx);
	/* temporary files over an hour */
	clean_stale_tmp(FS(b)->tmpdir, now_ns, dry_run, g.report, g.ctx);
	char *ib = qpath(b, "inbox", NULL);
	d = opendir(ib);
	while (d && (de = readdir(d))) {
		if (!util_valid_agent_name(de->d_name))
			continue;
		char *p = xasprintf("%s/%s", ib, de->d_name);
		clean_stale_tmp(p, now_ns, dry_run, g.report, g.ctx);
		free(p);
	}
	if (d)
		closedir(d);
	free(ib);
	return 0;
}

/* ---- monitor: counters kept from inotify events -------------------------- */

/* A set of names with a time each (open addressing, linear probing). Each
 * slot keeps its name's hash: a probe compares hashes before names, and
 * growing moves the names without hashing or copying them again. */
struct nset {
	char **keys;
	int64_t *vals;
	uint32_t *hashes;    /* each name's hash */
	size_t cap, n, used; /* used counts tombstones too */
};

static char nset_tomb[1];

static uint32_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32));
}

static size_t nset_slot(const struct nset *s, uint32_t h)
{
	return (size_t)(((uint64_t)h * 0x9e3779b97f4a7c15ULL) >> 32) & (s->cap - 1);
}

static void nset_free(struct nset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->keys[i] && s->keys[i] != nset_tomb)
			free(s->keys[i]);
	free(s->keys);
	free(s->vals);
	free(s->hashes);
	memset(s, 0, sizeof(*s));
}

static void nset_grow(struct nset *s)
{
	struct nset old = *s;
	s->cap = old.cap ? old.cap * 2 : 64;
	while (s->cap < old.n * 3)
		s->cap *= 2;
	s->keys = xcalloc(s->cap, sizeof(*s->keys));
	s->vals = xcalloc(s->cap, sizeof(*s->vals));
	s->hashes = xcalloc(s->cap, sizeof(*s->hashes));
	s->used = s->n;
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.keys[i] || old.keys[i] == nset_tomb)
			continue;
		size_t j = nset_slot(s, old.hashes[i]);
		while (s->keys[j])
			j = (j + 1) & (s->cap - 1);
		s->keys[j] = old.keys[i];
		s->vals[j] = old.vals[i];
		s->hashes[j] = old.hashes[i];
	}
	free(old.keys);
	free(old.vals);
	free(old.hashes);
}

static void nset_put(struct nset *s, const char *k, int64_t v)
{
	if ((s->used + 1) * 2 > s->cap)
		nset_grow(s);
	uint32_t h = hash_str(k);
	size_t i = nset_slot(s, h), tomb = SIZE_MAX;
	while (s->keys[i]) {
		if (s->keys[i] == nset_tomb) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (s->hashes[i] == h && !strcmp(s->keys[i], k)) {
			s->vals[i] = v;
			return;
		}
		i = (i + 1) & (s->cap - 1);
	}
	if (tomb != SIZE_MAX)
		i = tomb;
	else
		s->used++;
	s->keys[i] = xstrdup(k);
	s->vals[i] = v;
	s->hashes[i] = h;
	s->n++;
}

/* Removes k; returns its value, or -1 if absent. */
static int64_t nset_del(struct nset *s, const char *k)
{
	if (!s->cap)
		return -1;
	uint32_t h = hash_str(k);
	size_t i = nset_slot(s, h);
	while (s->keys[i]) {
		if (s->keys[i] != nset_tomb && s->hashes[i] == h && !strcmp(s->keys[i], k)) {
			free(s->keys[i]);
			s->keys[i] = nset_tomb;
			s->n--;
			return s->vals[i];
		}
		i = (i + 1) & (s->cap - 1);
	}
	return -1;
}

struct mon_agent {
	char name[MSG_AGENT_MAX + 1];
	struct nset q[3]; /* inbox, processing, retry */
	int64_t oldest;
	bool oldest_dirty;
};

struct mon_watch {
	int wd;
	int kind;   /* 0..2 per-agent queue, 3 dead, 4..6 a queue root,
		       7 processed/, 8 one of its date directories */
	size_t agent;
};

#define MON_PROCESSED_ROOT 7
#define MON_PROCESSED_DAY 8

struct bus_monitor {
	struct bus *bus; /* first: see bus.c */
	int ifd;
	struct mon_agent *agents;
	size_t nagents;
	struct nset dead;
	uint64_t dead_gen;       /* bumped by every dead letter come or gone */
	struct mon_watch *watches;
	size_t nwatches;
	int64_t last_scan_ns;
	/* acks: moves into processed/<date>/, counted from events (a rescan
	 * keeps them) */
	struct bus_rate acks;
	struct bus_drop_counter drops;
};

static const char *const mon_qdirs[3] = { "inbox", "processing", "retry" };

static int64_t mon_key_time(int kind, const char *name)
{
	struct bus_fname f;
	const char *base = name;
	if (kind == 1) {
		const char *at = strchr(name, '@');
		base = at ? at + 1 : name;
	} else if (kind == 2) {
		base = strlen(name) > 20 ? name + 20 : name;
	}
	return bus_fname_parse(base, &f) == 0 ? f.t_ns : 0;
}

static bool mon_counts(int kind, const char *name)
{
	if (name[0] == '.')
		return false;
	if (kind == 0)
		return bus_fname_wanted(name);
	if (kind == 1)
		return strchr(name, '@') != NULL;
	if (kind == 2)
		return strlen(name) > 20 && name[19] == '.';
	/* dead letters: messages, not sidecars or temporary files */
	size_t len = strlen(name);
	return !is_sidecar(name) && !(len > 4 && !strcmp(name + len - 4, ".tmp"));
}

static void mon_add_watch(struct bus_monitor *m, const char *path, int kind,
			  size_t agent)
{
	if (m->ifd < 0)
		return;
	int wd = inotify_add_watch(m->ifd, path,
				   IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
				   IN_DELETE | IN_ONLYDIR);
	if (wd < 0)
		return;
	m->watches = xrealloc(m->watches, (m->nwatches + 1) * sizeof(*m->watches));
	m->watches[m->nwatches++] = (struct mon_watch){ wd, kind, agent };
}

static void mon_note(struct bus_monitor *m, int kind, size_t ai,
		     const char *name, bool add);

static void mon_scan_dir(struct bus_monitor *m, int kind, size_t ai,
			 const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		mon_note(m, kind, ai, de->d_name, true);
	if (d)
		closedir(d);
}

static size_t mon_agent(struct bus_monitor *m, const char *name)
{
	for (size_t i = 0; i < m->nagents; i++)
		if (!strcmp(m->agents[i].name, name))
			return i;
	m->agents = xrealloc(m->agents, (m->nagents + 1) * sizeof(*m->agents));
	struct mon_agent *a = &m->agents[m->nagents];
	memset(a, 0, sizeof(*a));
	util_strlcpy(a->name, name, sizeof(a->name));
	size_t ai = m->nagents++;
	for (int k = 0; k < 3; k++) {
		char *dir = qpath(m->bus, mon_qdirs[k], name);
		ensure_dir(dir, NULL);
		mon_add_watch(m, dir, k, ai);
		mon_scan_dir(m, k, ai, dir);
		free(dir);
	}
	return ai;
}

static void mon_note(struct bus_monitor *m, int kind, size_t ai,
		     const char *name, bool add)
{
	if (kind == MON_PROCESSED_ROOT) {
		/* a new day's directory */
		if (add && strlen(name) == 10 && name[4] == '-') {
			char *dir = xasprintf("%s/processed/%s", FS(m->bus)->root, name);
			mon_add_watch(m, dir, MON_PROCESSED_DAY, 0);
			free(dir);
		}
		return;
	}
	if (kind == MON_PROCESSED_DAY) {
		if (add && name[0] != '.')
			bus_rate_add(&m->acks);
		return;
	}
	if (kind >= 4) {
		/* A new agent directory under a queue root. */
		if (add && util_valid_agent_name(name))
			mon_agent(m, name);
		return;
	}
	if (!mon_counts(kind, name))
		return;
	if (kind == 3) {
		if (add)
			nset_put(&m->dead, name, 0);
		else
			nset_del(&m->dead, name);
		m->dead_gen++;
		return;
	}
	struct mon_agent *a = &m->agents[ai];
	int64_t t = mon_key_time(kind, name);
	if (add && t == 0) {
		/* a name without a time (not written by madf): its mtime */
		char *p = xasprintf("%s/%s/%s/%s", FS(m->bus)->root, mon_qdirs[kind], a->name,
				    name);
		struct stat st;
		if (lstat(p, &st) == 0)
			t = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
		free(p);
	}
	if (add) {
		nset_put(&a->q[kind], name, t);
		if (kind == 0 && !a->oldest_dirty && (a->oldest == 0 || t < a->oldest))
			a->oldest = t;
	} else {
		int64_t old = nset_del(&a->q[kind], name);
		if (kind == 0 && old >= 0 && old <= a->oldest)
			a->oldest_dirty = true;
	}
}

static void mon_reset(struct bus_monitor *m)
{
	for (size_t i = 0; i < m->nagents; i++)
		for (int k = 0; k < 3; k++)
			nset_free(&m->agents[i].q[k]);
	free(m->agents);
	m->agents = NULL;
	m->nagents = 0;
	nset_free(&m->dead);
	free(m->watches);
	m->watches = NULL;
	m->nwatches = 0;
	if (m->ifd >= 0)
		close(m->ifd);
	m->ifd = -1;
}

static void mon_scan_all(struct bus_monitor *m)
{
	mon_reset(m);
	if (!m->bus->cfg.force_poll)
		m->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* Watches first, then scans: an event in between only repeats what
	 * the scan sees, and the sets make repeats harmless. */
	for (int k = 0; k < 3; k++) {
		char *root = qpath(m->bus, mon_qdirs[k], NULL);
		mon_add_watch(m, root, 4 + k, 0);
		free(root);
	}
	for (size_t i = 0; i < bus_default_agent_count; i++)
		mon_agent(m, bus_default_agents[i]);
	for (int k = 0; k < 3; k++) {
		char *root = qpath(m->bus, mon_qdirs[k], NULL);
		mon_scan_dir(m, 4 + k, 0, root);
		free(root);
	}
	char *dd = qpath(m->bus, "dead-letter", NULL);
	mon_add_watch(m, dd, 3, 0);
	mon_scan_dir(m, 3, 0, dd);
	free(dd);
	/* acks from now on: today's directory (made now, so that no ack
	 * creates it unseen) and each new day's */
	if (m->ifd >= 0) {
		char *pr = qpath(m->bus, "processed", NULL);
		mon_add_watch(m, pr, MON_PROCESSED_ROOT, 0);
		char date[16];
		util_date(util_now_ns(), date, sizeof(date));
		char *day = xasprintf("%s/%s", pr, date);
		ensure_dir(day, NULL);
		mon_add_watch(m, day, MON_PROCESSED_DAY, 0);
		free(day);
		free(pr);
	}
	m->last_scan_ns = util_mono_ns();
}

static int fs_monitor_open(struct bus *b, struct bus_monitor **out, char **err)
{
	(void)err;
	struct bus_monitor *m = xcalloc(1, sizeof(*m));
	m->bus = b;
	m->ifd = -1;
	bus_rate_open(&m->acks);
	mon_scan_all(m);
	*out = m;
	return 0;
}

static void fs_monitor_free(struct bus_monitor *m)
{
	mon_reset(m);
	free(m);
}

static int fs_monitor_fd(struct bus_monitor *m)
{
	return m->ifd;
}

static int fs_monitor_process(struct bus_monitor *m)
{
	if (m->ifd < 0) {
		/* Polling: rescan at the poll interval. */
		if (util_mono_ns() - m->last_scan_ns <
		    (int64_t)(m->bus->cfg.poll_interval_s * NS_PER_S))
			return 0;
		mon_scan_all(m);
		return 1;
	}
	char buf[INOTIFY_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
	int changed = 0;
	bool overflow = false;
	for (;;) {
		ssize_t n = read(m->ifd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)(void *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				overflow = true;
				continue;
			}
			if (!ev->len)
				continue;
			for (size_t i = 0; i < m->nwatches; i++) {
				if (m->watches[i].wd != ev->wd)
					continue;
				bool add = ev->mask & (IN_MOVED_TO | IN_CREATE);
				mon_note(m, m->watches[i].kind, m->watches[i].agent,
					 ev->name, add);
				changed = 1;
				break;
			}
		}
	}
	if (overflow) {
		mon_scan_all(m);
		changed = 1;
	}
	return changed;
}

static int agent_stats_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bus_agent_stats *)a)->agent,
		      ((const struct bus_agent_stats *)b)->agent);
}

static void fs_monitor_stats(struct bus_monitor *m, struct bus_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->agents = xcalloc(m->nagents, sizeof(*out->agents));
	out->nagents = m->nagents;
	for (size_t i = 0; i < m->nagents; i++) {
		struct mon_agent *a = &m->agents[i];
		if (a->oldest_dirty) {
			a->oldest = 0;
			for (size_t k = 0; k < a->q[0].cap; k++) {
				const char *key = a->q[0].keys[k];
				if (key && key != nset_tomb &&
				    (a->oldest == 0 || a->q[0].vals[k] < a->oldest))
					a->oldest = a->q[0].vals[k];
			}
			a->oldest_dirty = false;
		}
		struct bus_agent_stats *s = &out->agents[i];
		util_strlcpy(s->agent, a->name, sizeof(s->agent));
		s->depth = a->q[0].n;
		s->oldest_ns = a->q[0].n ? a->oldest : 0;
		s->processing = a->q[1].n;
		s->retry = a->q[2].n;
		out->processing += s->processing;
		out->retry += s->retry;
	}
	out->dead_letter = m->dead.n;
	out->dead_gen = m->dead_gen;
	out->acked = m->acks.total;
	out->acked_per_s = bus_rate_per_s(&m->acks);
	out->expired_dropped = bus_drop_count(FS(m->bus)->root, &m->drops);
	qsort(out->agents, out->nagents, sizeof(*out->agents), agent_stats_cmp);
}

static const char *fs_owner(struct bus *b)
{
	owner_refresh(FS(b));
	return FS(b)->owner;
}

static bool fs_owner_gone(struct bus *b, const char *owner)
{
	return owner_dead(FS(b), owner);
}

/* ---- open/close --------------------------------------------------------- */

static void fs_close(struct bus *b)
{
	struct fsbus *fs = FS(b);
	pthread_mutex_destroy(&fs->lock);
	free(fs->counts);
	free(fs->root);
	free(fs->tmpdir);
	free(fs);
	b->impl = NULL;
}

int bus_fs_open(struct bus *b, char **err)
{
	struct fsbus *fs = xcalloc(1, sizeof(*fs));
	fs->root = xasprintf("%s/messages", b->cfg.data_dir);
	fs->tmpdir = xasprintf("%s/tmp", fs->root);
	pthread_mutex_init(&fs->lock, NULL);
	host_id(fs->host, sizeof(fs->host));
	b->impl = fs;
	owner_refresh(fs);
	static const char *const dirs[] = { "inbox", "processing", "retry",
					    "outbox", "processed", "dead-letter",
					    "broadcast", "tmp", "attempts", "trash" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *p = qpath(b, dirs[i], NULL);
		int r = util_mkdirs(p, err);
		free(p);
		if (r < 0) {
			fs_close(b);
			return -1;
		}
	}
	for (size_t i = 0; i < bus_default_agent_count; i++) {
		char *p = qpath(b, "inbox", bus_default_agents[i]);
		int r = ensure_dir(p, err);
		free(p);
		if (r < 0) {
			fs_close(b);
			return -1;
		}
	}
	return 0;
}

const struct bus_transport bus_fs_transport = {
	.name = "fs",
	.send = fs_send,
	.consumer_open = fs_consumer_open,
	.consumer_free = fs_consumer_free,
	.consumer_fd = fs_consumer_fd,
	.consumer_wait = fs_consumer_wait,
	.claim = fs_claim,
	.ack = fs_ack,
	.nack = fs_nack,
	.release = fs_release,
	.renew = fs_renew,
	.list = fs_list,
	.each_dead = fs_each_dead,
	.find = fs_find,
	.read = fs_read,
	.retry = fs_retry,
	.remove = fs_remove,
	.kill = fs_kill,
	.requeue = fs_requeue,
	.sweep = fs_sweep,
	.gc = fs_gc,
	.monitor_open = fs_monitor_open,
	.monitor_free = fs_monitor_free,
	.monitor_fd = fs_monitor_fd,
	.monitor_process = fs_monitor_process,
	.monitor_stats = fs_monitor_stats,
	.owner = fs_owner,
	.owner_gone = fs_owner_gone,
	.close = fs_close,
};
