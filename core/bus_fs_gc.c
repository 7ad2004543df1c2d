/* The file-system transport: retention (bus_gc). */
#include "core/bus_fs_priv.h"

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
	/* waiting over 24 hours: to the dead letters, never deleted */
	fsbus_list(b, BUS_Q_INBOX, NULL, false, &v, &n, NULL);
	for (size_t i = 0; i < n; i++) {
		if (now_ns - v[i].enqueued_ns <= days_ns(1))
			continue;
		g.report(g.ctx, "waiting over 24 hours, to the dead letters", v[i].path);
		if (!dry_run)
			fsbus_dead_letter(b, v[i].path, v[i].name, v[i].agent, "retention",
					  "waited in the inbox over 24 hours", NULL,
					  v[i].message_id, NULL, NULL);
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
