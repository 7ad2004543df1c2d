/* Conversation event logs on the bus (core/bus.h): the local files every
 * transport keeps (the file bus's record, another transport's copy), and
 * what a transport spanning hosts carries (events_publish, events_fetch). */
#include "core/bus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

#define META_MAX ((size_t)1 << 20)

struct bus_events {
	struct bus *b;
	char session[MSG_AGENT_MAX + 1];
	char *path;
	int fd;
	bool published_failed; /* said once */
};

static char *events_path(struct bus *b, const char *session, const char *ext)
{
	return xasprintf("%s/%s/%s.%s", b->cfg.data_dir, BUS_EVENTS_DIR, session, ext);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int bus_events_open(struct bus *b, const char *session, bool create, struct bus_events **out,
		    char **err)
{
	if (!util_valid_agent_name(session))
		return err_set(err, "\"%s\" is not a session id", session);
	char *dir = xasprintf("%s/%s", b->cfg.data_dir, BUS_EVENTS_DIR);
	int r = util_mkdirs(dir, err);
	free(dir);
	if (r < 0)
		return -1;
	struct bus_events *e = xcalloc(1, sizeof(*e));
	e->b = b;
	util_strlcpy(e->session, session, sizeof(e->session));
	e->path = events_path(b, session, "jsonl");
	e->fd = open(e->path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
		     (create ? O_CREAT | O_EXCL : 0), 0600);
	if (e->fd < 0) {
		err_set(err, "cannot %s %s: %s", create ? "create" : "open", e->path, strerror(errno));
		free(e->path);
		free(e);
		return -1;
	}
	*out = e;
	return 0;
}

int bus_events_append(struct bus_events *e, long seq, const char *line, size_t len, char **err)
{
	if (e->fd < 0 || write_all(e->fd, line, len) < 0)
		return err_set(err, "cannot write to %s: %s", e->path,
			       e->fd < 0 ? "closed" : strerror(errno));
	struct bus *b = e->b;
	if (b->t->events_publish) {
		char *perr = NULL;
		/* without its newline; not waited for (the end's meta is) */
		if (b->t->events_publish(b, e->session, seq, line, len && line[len - 1] == '\n' ?
					 len - 1 : len, false, &perr) < 0 && !e->published_failed) {
			e->published_failed = true;
			fprintf(stderr, "madf: warning: session %s: its events are not all on the "
				"bus (%s); they are in %s\n", e->session, perr ? perr : "?", e->path);
		}
		free(perr);
	}
	return 0;
}

void bus_events_close(struct bus_events **ep, bool sync)
{
	struct bus_events *e = *ep;
	if (!e)
		return;
	if (e->fd >= 0) {
		if (sync)
			fdatasync(e->fd);
		close(e->fd);
	}
	free(e->path);
	free(e);
	*ep = NULL;
}

int bus_events_put_meta(struct bus *b, const char *session, const char *json, size_t len,
			bool sync, char **err)
{
	if (!util_valid_agent_name(session))
		return err_set(err, "\"%s\" is not a session id", session);
	char *path = events_path(b, session, "json");
	int r = util_write_file_atomic(path, json, len, sync && b->cfg.durable, err);
	free(path);
	if (r == 0 && b->t->events_publish &&
	    b->t->events_publish(b, session, 0, json, len, sync, err) < 0)
		r = -1;
	return r;
}

/* ---- a copy brought up to date ---- */

struct fetch {
	const char *session;
	int fd;
	long have;     /* lines in the copy */
	bool failed;
	int err_no;
	char *refused; /* why an event was not copied (the copy stops before it) */
};

/* Appends event seq (the next one) to the copy: one line each. An event
 * with a line break of its own (a raw \n or \r; ours never have one:
 * their JSON escapes it) would be two lines in the copy, every event
 * after it one line off, and two on the wire of a stream (each line goes
 * out as "data: LINE"): it is refused whole, and the copy stops before it. */
static int fetch_line(void *ctx, long seq, const char *line, size_t len)
{
	struct fetch *f = ctx;
	if (seq != f->have + 1)
		return 0; /* one it has (or a gap: the next comes in order) */
	for (size_t i = 0; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r') {
			f->refused = xasprintf("session %s: event %ld on the bus is not one line "
					       "(a raw %s at byte %zu of %zu): not copied, nor any "
					       "after it (this host's copy keeps the %ld before it)",
					       f->session, seq, line[i] == '\n' ? "newline" :
					       "carriage return", i + 1, len, f->have);
			return 1;
		}
	if (write_all(f->fd, line, len) < 0 || write_all(f->fd, "\n", 1) < 0) {
		f->failed = true;
		f->err_no = errno;
		return 1;
	}
	f->have++;
	return 0;
}

/* Complete lines in the file at path (a last one cut short is cut off). */
static long count_lines(const char *path, int fd)
{
	char buf[65536];
	long n = 0;
	off_t off = 0, good = 0;
	for (;;) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] == '\n') {
				n++;
				good = off + i + 1;
			}
		off += r;
	}
	if (off > good && ftruncate(fd, good) < 0)
		fprintf(stderr, "madf: warning: %s: %s\n", path, strerror(errno));
	return n;
}

int bus_events_fetch(struct bus *b, const char *session, char **err)
{
	if (!util_valid_agent_name(session))
		return 1;
	char *path = events_path(b, session, "jsonl");
	char *mpath = events_path(b, session, "json");
	bool local = access(mpath, F_OK) == 0;
	int rc = 0;
	if (!b->t->events_fetch) {
		rc = local ? 0 : 1; /* the file bus: the files are the record */
		goto out;
	}
	char *dir = xasprintf("%s/%s", b->cfg.data_dir, BUS_EVENTS_DIR);
	rc = util_mkdirs(dir, err);
	free(dir);
	if (rc < 0)
		goto out;
	struct fetch f = { .session = session,
			   .fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				      0600) };
	if (f.fd < 0) {
		rc = err_set(err, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	f.have = count_lines(path, f.fd);
	long had = f.have;
	char *meta = NULL;
	rc = b->t->events_fetch(b, session, f.have, fetch_line, &f, &meta, err);
	if (rc == 0 && f.failed)
		rc = err_set(err, "cannot write to %s: %s", path, strerror(f.err_no));
	else if (rc == 0 && f.refused)
		rc = err_set(err, "%s", f.refused);
	free(f.refused);
	close(f.fd);
	if (rc == 1 && !had && !local)
		unlink(path); /* made for nothing */
	if (rc == 1 && local)
		rc = 0; /* only here (recorded before the bus kept them) */
	if (rc == 0 && meta && (f.have > had || !local) &&
	    util_write_file_atomic(mpath, meta, strlen(meta), false, err) < 0)
		rc = -1;
	free(meta);
out:
	free(path);
	free(mpath);
	return rc;
}
