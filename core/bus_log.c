/* Logs on the bus (see bus.h): the front end of the transports' log
 * operations, and the local copy of every agent's log that the console's
 * Logs view and the learning system read when the bus carries logs. */
#include "core/bus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "core/banned.h"

bool bus_carries_logs(const struct bus *b)
{
	return b && b->t->log_append && b->t->log_each && b->t->log_agents;
}

int bus_log_append(struct bus *b, const char *agent, const char *category,
		   const char *line, size_t len)
{
	if (!bus_carries_logs(b))
		return 0;
	return b->t->log_append(b, agent, category, line, len);
}

void bus_log_sink(void *ctx, const char *agent, const char *category,
		  const char *line, size_t len)
{
	bus_log_append(ctx, agent, category, line, len);
}

/* ---- the local copy ------------------------------------------------------ */

struct mirror {
	const char *dir, *agent;
	char *err;
};

/* "YYYY-MM-DD" from the line's "ts" (as log_write writes it), else today. */
static void line_date(const char *line, size_t len, char *date, size_t size)
{
	static const char key[] = "{\"ts\":\"";
	size_t kl = sizeof(key) - 1;
	bool ok = len >= kl + 10 && !memcmp(line, key, kl);
	for (size_t i = 0; ok && i < 10; i++) {
		char c = line[kl + i];
		ok = (i == 4 || i == 7) ? c == '-' : (c >= '0' && c <= '9');
	}
	if (ok && size > 10) {
		memcpy(date, line + kl, 10);
		date[10] = '\0';
	} else {
		util_date(util_now_ns(), date, size);
	}
}

static int mirror_line(void *ctx, const char *category, const char *line, size_t len,
		       uint64_t seq)
{
	(void)seq;
	struct mirror *mr = ctx;
	if (log_cat_from_name(category) < 0 || len == 0 || memchr(line, '\n', len))
		return 0; /* not a line log_write writes: skipped */
	char date[16];
	line_date(line, len, date, sizeof(date));
	char *cdir = xasprintf("%s/agents/%s/%s", mr->dir, mr->agent, category);
	char *path = xasprintf("%s/%s.jsonl", cdir, date);
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	int fd = open(path, flags, 0644);
	if (fd < 0 && errno == ENOENT && util_mkdirs(cdir, NULL) == 0)
		fd = open(path, flags, 0644);
	int r = 0;
	if (fd < 0) {
		r = err_set(&mr->err, "cannot write %s: %s", path, strerror(errno));
	} else {
		char *buf = xmalloc(len + 1);
		memcpy(buf, line, len);
		buf[len] = '\n';
		ssize_t w = write(fd, buf, len + 1);
		if (w != (ssize_t)len + 1)
			r = err_set(&mr->err, "cannot write %s: %s", path,
				    w < 0 ? strerror(errno) : "short write");
		free(buf);
		close(fd);
	}
	free(cdir);
	free(path);
	return r < 0 ? 1 : 0;
}

static uint64_t seq_load(const char *path)
{
	char *buf = NULL, *e = NULL;
	size_t len;
	uint64_t v = 0;
	if (util_read_file(path, 64, &buf, &len, &e) == 0)
		v = strtoull(buf, NULL, 10);
	free(buf);
	free(e);
	return v;
}

int bus_log_mirror(struct bus *b, const char *dir, char **err)
{
	if (!bus_carries_logs(b))
		return 0;
	char *sdir = xasprintf("%s/.seq", dir);
	if (util_mkdirs(sdir, err) < 0) {
		free(sdir);
		return -1;
	}
	/* one copier at a time, so that no line is appended twice */
	char *lpath = xasprintf("%s/.lock", dir);
	int lock = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(lpath);
	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		int e = errno;
		if (lock >= 0)
			close(lock);
		free(sdir);
		return err_set(err, "cannot lock %s/.lock: %s", dir, strerror(e));
	}
	char **agents = NULL;
	size_t n = 0;
	int r = b->t->log_agents(b, &agents, &n, err);
	for (size_t i = 0; r == 0 && i < n; i++) {
		char *spath = xasprintf("%s/%s", sdir, agents[i]);
		uint64_t after = seq_load(spath), last = after;
		struct mirror mr = { dir, agents[i], NULL };
		r = b->t->log_each(b, agents[i], after, mirror_line, &mr, &last, err);
		if (last != after) {
			/* what was copied is recorded even when a later line failed */
			char num[32];
			int k = snprintf(num, sizeof(num), "%llu\n", (unsigned long long)last);
			char *e2 = NULL;
			if (util_write_file_atomic(spath, num, (size_t)k, false, &e2) < 0 && r == 0)
				r = err_set(err, "%s", e2);
			free(e2);
		}
		if (r == 0 && mr.err)
			r = err_set(err, "%s", mr.err);
		free(mr.err);
		free(spath);
	}
	for (size_t i = 0; i < n; i++)
		free(agents[i]);
	free(agents);
	close(lock);
	free(sdir);
	return r;
}

char *bus_log_root(struct bus *b, const char *data_dir, const char *log_dir, char **err)
{
	if (!bus_carries_logs(b))
		return xstrdup(log_dir);
	char *dir = xasprintf("%s/bus-logs", data_dir);
	bus_log_mirror(b, dir, err);
	return dir;
}
