/* The file-system transport: send (inbox limits, commit groups, delivery). */
#include "core/bus_fs_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

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

int fsbus_inbox_reserve(struct bus *b, const char *agent, char **err)
{
	struct fsbus *fs = FS(b);
	pthread_mutex_lock(&fs->lock);
	struct send_count *c = send_count_get(b, agent);
	int64_t now = util_mono_ns();
	if (c->scanned_ns == 0 || now - c->scanned_ns > SEND_CACHE_NS ||
	    c->count + 1 > b->cfg.inbox_limit) {
		char *dir = fsbus_qpath(b, "inbox", agent);
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
int fsbus_write_tmp(struct bus *b, const char *dir, const char *json,
		    size_t len, char **tmp, char **err)
{
	/* One counter for the whole process: every thread's bus handle
	 * writes temporary files under the same pid. */
	static atomic_uint tmpseq;
	unsigned seq = atomic_fetch_add(&tmpseq, 1);
	char *path = xasprintf("%s/.%d.%u.tmp", dir, (int)getpid(), seq);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT && fsbus_ensure_dir(dir, NULL) == 0)
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

int fsbus_deliver_one(struct bus *b, const char *tmp, const char *agent,
		      const struct bus_fname *f0, bool move, char **err)
{
	struct bus_fname f = *f0;
	char *dir = fsbus_qpath(b, "inbox", agent);
	char name[300];
	char *dst = NULL;
	int r = -1;
	for (int tries = 0; tries < 16; tries++) {
		bus_fname_format(&f, name, sizeof(name));
		free(dst);
		dst = xasprintf("%s/%s", dir, name);
		int rc = move ? fsbus_rename_noreplace(tmp, dst) : link(tmp, dst);
		int e = errno;
		if (rc == 0) {
			r = 0;
			break;
		}
		if (e == ENOENT) {
			if (fsbus_ensure_dir(dir, err) < 0)
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

int fsbus_send(struct bus *b, const struct msg *m, const char *json,
	       size_t len, char **err)
{
	struct bus_fname f = { .prio = m->priority, .t_ns = util_now_ns(),
			       .attempts = 0 };
	util_strlcpy(f.id, m->id, sizeof(f.id));
	bool bcast = !strcmp(m->to, "broadcast");
	if (!bcast && fsbus_inbox_reserve(b, m->to, err) < 0)
		return -1;
	char *tmp;
	char *tdir = bcast ? xstrdup(FS(b)->tmpdir) : fsbus_qpath(b, "inbox", m->to);
	int wr = fsbus_write_tmp(b, tdir, json, len, &tmp, err);
	free(tdir);
	if (wr < 0)
		return -1;
	char name[300];
	bus_fname_format(&f, name, sizeof(name));
	outbox_link(b, tmp, m->from, name);
	int r;
	if (!bcast) {
		r = fsbus_deliver_one(b, tmp, m->to, &f, true, err);
	} else {
		/* A copy (hard link) into every agent's inbox but the
		 * sender's, and one in broadcast/ as the record. */
		char *bdir = fsbus_qpath(b, "broadcast", NULL);
		char *rec = xasprintf("%s/%s", bdir, name);
		if (link(tmp, rec) < 0 && errno == ENOENT &&
		    fsbus_ensure_dir(bdir, NULL) == 0 && link(tmp, rec) < 0) {
			/* the record is an archive, as the outbox */
		}
		free(rec);
		free(bdir);
		char *idir = fsbus_qpath(b, "inbox", NULL);
		DIR *d = opendir(idir);
		r = 0;
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!util_valid_agent_name(de->d_name) ||
			    !strcmp(de->d_name, m->from))
				continue;
			struct bus_fname fc = f;
			snprintf(fc.id, sizeof(fc.id), "%.128s+%.64s", m->id, de->d_name);
			if (fsbus_deliver_one(b, tmp, de->d_name, &fc, false, err) < 0)
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
