/* The file-system transport: retention (bus_gc). */
#include "core/bus_fs_priv.h"
#include "core/bus_drop.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

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

/* Failure records of a message that leaves the inbox other than as a dead
 * letter. */
static void forget_attempts(struct gc_ctx *g, const struct bus_entry *e)
{
	struct bus_fname f;
	if (bus_fname_parse(e->name, &f) == 0 && f.attempts > 0)
		fsbus_attempts_drop(g->b, e->agent, f.id);
}

/* A message waiting past retention whose fate is to be dropped: recorded
 * as an expired one is, then unlinked. 0, or -1 when it cannot be read as
 * a message (then it is a dead letter after all). */
static int gc_drop(struct gc_ctx *g, const struct bus_entry *e)
{
	char *buf = NULL, *error = NULL;
	size_t len = 0;
	struct msg *m = NULL;
	if (util_read_file(e->path, g->b->cfg.max_bytes, &buf, &len, &error) < 0 ||
	    msg_parse(buf, len, &m, NULL) < 0) {
		free(buf);
		free(error);
		return -1;
	}
	free(buf);
	if (unlink(e->path) == 0) {
		bus_drop_note(FS(g->b)->root, m, e->agent, "retention");
		forget_attempts(g, e);
	}
	msg_free(&m);
	return 0;
}

static void gc_waiting(struct gc_ctx *g, const struct bus_entry *e)
{
	enum bus_gc_fate f = bus_gc_fate(e->agent, e->type);
	if (f == BUS_GC_FATE_DROP) {
		if (g->dry_run || gc_drop(g, e) == 0) {
			g->report(g->ctx, BUS_GC_DROPPED, e->path);
			return;
		}
		f = BUS_GC_FATE_DEAD;
	}
	if (f == BUS_GC_FATE_READ) {
		/* as an ack would: into processed/<today>/ */
		char date[16];
		util_date(util_now_ns(), date, sizeof(date));
		char *pr = fsbus_qpath(g->b, "processed", NULL);
		char *dir = xasprintf("%s/%s", pr, date);
		int r = g->dry_run ? 0 : fsbus_move_into(e->path, dir, e->name, NULL, NULL);
		free(dir);
		free(pr);
		if (r == 0) {
			if (!g->dry_run)
				forget_attempts(g, e);
			g->report(g->ctx, BUS_GC_READ, e->path);
			return;
		}
	}
	g->report(g->ctx, BUS_GC_DEAD, e->path);
	if (!g->dry_run)
		fsbus_dead_letter(g->b, e->path, e->name, e->agent, "retention",
				  "waited in the inbox over 24 hours", NULL,
				  e->message_id, NULL, NULL);
}

static void gc_noop(void *ctx, const char *what, const char *path)
{
	(void)ctx;
	(void)what;
	(void)path;
}

int fsbus_gc(struct bus *b, bool dry_run, int64_t now_ns,
	     void (*report)(void *ctx, const char *what, const char *path),
	     void *ctx, char **err)
{
	(void)err;
	struct gc_ctx g = { b, dry_run, now_ns, report ? report : gc_noop, ctx };
	if (!dry_run)
		fsbus_sweep(b, NULL, NULL);
	char *dir = fsbus_qpath(b, "processed", NULL);
	gc_dated(&g, dir, 7, "processed over 7 days");
	free(dir);
	/* outbox/<agent>/<date> */
	char *ob = fsbus_qpath(b, "outbox", NULL);
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
	fsbus_list(b, BUS_Q_DEAD, NULL, false, &v, &n, NULL);
	for (size_t i = 0; i < n; i++) {
		if (now_ns - ctime_ns(v[i].path) <= days_ns(30))
			continue;
		g.report(g.ctx, "dead letter over 30 days", v[i].path);
		if (!dry_run) {
			unlink(v[i].path);
			fsbus_drop_dead(&v[i]);
		}
	}
	bus_entries_free(v, n);
	char *bd = fsbus_qpath(b, "broadcast", NULL);
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
	/* waiting over 24 hours: a heartbeat or status message dropped and
	 * counted, a reply to the operator marked read, the rest to the dead
	 * letters; nothing else deleted */
	fsbus_list(b, BUS_Q_INBOX, NULL, true, &v, &n, NULL);
	for (size_t i = 0; i < n; i++) {
		if (now_ns - v[i].enqueued_ns <= days_ns(1))
			continue;
		gc_waiting(&g, &v[i]);
	}
	bus_entries_free(v, n);
	bus_trash_gc(b, dry_run, now_ns, g.report, g.ctx);
	/* temporary files over an hour */
	fsbus_clean_stale_tmp(FS(b)->tmpdir, now_ns, dry_run, g.report, g.ctx);
	char *ib = fsbus_qpath(b, "inbox", NULL);
	d = opendir(ib);
	while (d && (de = readdir(d))) {
		if (!util_valid_agent_name(de->d_name))
			continue;
		char *p = xasprintf("%s/%s", ib, de->d_name);
		fsbus_clean_stale_tmp(p, now_ns, dry_run, g.report, g.ctx);
		free(p);
	}
	if (d)
		closedir(d);
	free(ib);
	return 0;
}
