/* Expired heartbeats and status messages, dropped and counted (see
 * bus_drop.h). */
#include "core/bus_drop.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S 1000000000LL

bool bus_drop_type(enum msg_type t)
{
	return t == MSG_HEARTBEAT || t == MSG_SYSTEM_STATUS;
}

static char *drop_path(const char *root)
{
	return xasprintf("%s/dropped/expired.jsonl", root);
}

char *bus_drop_line(const struct msg *m, const char *agent, const char *reason)
{
	char now[40];
	util_iso8601(util_now_ns(), now, sizeof(now));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "message_id", m->id);
	cJSON_AddStringToObject(o, "type", msg_type_name(m->type));
	cJSON_AddStringToObject(o, "from", m->from);
	cJSON_AddStringToObject(o, "to", m->to);
	cJSON_AddStringToObject(o, "inbox", agent);
	cJSON_AddStringToObject(o, "sent", m->timestamp ? m->timestamp : "");
	cJSON_AddNumberToObject(o, "timeout_s", (double)m->timeout_s);
	cJSON_AddStringToObject(o, "dropped_at", now);
	cJSON_AddStringToObject(o, "reason", reason ? reason : "expired");
	char *line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char *buf = xasprintf("%s\n", line);
	cJSON_free(line);
	return buf;
}

void bus_drop_note(const char *root, const struct msg *m, const char *agent,
		   const char *reason)
{
	char *buf = bus_drop_line(m, agent, reason);
	size_t len = strlen(buf) - 1;
	char *path = drop_path(root);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		char *dir = xasprintf("%s/dropped", root);
		if (util_mkdirs(dir, NULL) == 0)
			fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		free(dir);
	}
	if (fd >= 0) {
		/* one write: concurrent droppers do not interleave */
		ssize_t w = write(fd, buf, len + 1);
		(void)w;
		close(fd);
	}
	free(path);
	free(buf);
}

uint64_t bus_drop_count(const char *root, struct bus_drop_counter *c)
{
	char *path = drop_path(root);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return c->n;
	}
	if ((uint64_t)st.st_ino != c->ino || st.st_size < c->off) {
		/* replaced or truncated: count again */
		c->ino = (uint64_t)st.st_ino;
		c->off = 0;
		c->n = 0;
	}
	if (st.st_size > c->off && lseek(fd, c->off, SEEK_SET) == c->off) {
		char buf[65536];
		ssize_t r;
		while ((r = read(fd, buf, sizeof(buf))) > 0) {
			/* only whole lines: a line being appended counts next time */
			ssize_t last = -1;
			for (ssize_t i = 0; i < r; i++)
				if (buf[i] == '\n') {
					c->n++;
					last = i;
				}
			if (last == r - 1) {
				c->off += r;
				continue;
			}
			/* a line cut by the buffer or still being appended */
			if (last < 0)
				break;
			c->off += last + 1;
			if (lseek(fd, c->off, SEEK_SET) != c->off)
				break;
		}
	}
	close(fd);
	return c->n;
}

/* An expired message retried as it is would expire again on its next
 * receive: it gets a new timestamp, and its timeout counts from now.
 * Returns what to tell the operator, or NULL when it had not expired. */
char *bus_expired_refresh(struct msg *m, const char *reason)
{
	int64_t now = util_now_ns();
	bool passed = m->timeout_s >= 0 && m->ts_ns + m->timeout_s * NS_PER_S < now;
	if (!passed && !(reason && !strcmp(reason, "expired")))
		return NULL;
	char *note = xasprintf("%s expired (sent %s, timeout %lld s): refreshed with a new "
			       "timestamp, its timeout counts from now", m->id,
			       m->timestamp ? m->timestamp : "?", (long long)m->timeout_s);
	now -= now % 1000; /* as msg_new: microseconds */
	char ts[64];
	util_iso8601(now, ts, sizeof(ts));
	free(m->timestamp);
	m->timestamp = xstrdup(ts);
	m->ts_ns = now;
	return note;
}
