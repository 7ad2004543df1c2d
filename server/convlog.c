/* The recorded conversations of madf serve: each session's events, one
 * JSON line per event (seq N on line N), and its meta, kept by the bus
 * (core/bus.h, bus_events_*): <data_dir>/serve-sessions/SESSION.jsonl and
 * SESSION.json, which on NATS the bus also carries to the stream
 * <P>_conv. Streams replay and follow this host's copy; a restart (or a
 * serve on another host, through bus_events_fetch) finds what was
 * recorded there.
 *
 * Why an event log and not a bus message per event: a bus message is a
 * task one consumer claims, acks and has archived (then collected),
 * inboxes are capped (1,000 waiting) and every send is a file, an fsync
 * and a rename. A stream's events are an ordered log that many readers
 * read from any point, at the rate a model emits tokens: an append-only
 * log is that, and the bus keeps it as one. */
#include "server/conv_priv.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/message.h"
#include "core/util.h"
#include "server/serve_bus.h"
#include "core/banned.h"

#define META_MAX ((size_t)1 << 20)

char *convlog_dir(const char *data_dir)
{
	return xasprintf("%s/serve-sessions", data_dir);
}

bool convlog_session_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return false;
	return n == 24;
}

bool convlog_terminal(const char *type)
{
	return type && (!strcmp(type, "conversation_complete") || !strcmp(type, "error"));
}

static bool no_fsync(void)
{
	const char *v = getenv("MADF_NO_FSYNC");
	return v && *v && strcmp(v, "0");
}

cJSON *convlog_usage_json(const struct conv_usage *u, int64_t wall_ns, int rounds)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "inputTokens", (double)u->tokens_in);
	cJSON_AddNumberToObject(o, "outputTokens", (double)u->tokens_out);
	cJSON_AddNumberToObject(o, "modelCalls", (double)u->model_calls);
	cJSON_AddNumberToObject(o, "rounds", rounds);
	cJSON_AddNumberToObject(o, "wallSeconds", (double)(wall_ns / 1000000) / 1000.0);
	cJSON_AddNumberToObject(o, "toolCalls", (double)u->tool_calls);
	cJSON_AddNumberToObject(o, "toolErrors", (double)u->tool_errors);
	cJSON_AddNumberToObject(o, "agentErrors", (double)u->agent_errors);
	cJSON *a = cJSON_AddObjectToObject(o, "agents");
	for (size_t i = 0; i < u->nagents; i++) {
		cJSON *x = cJSON_AddObjectToObject(a, u->agents[i].name);
		cJSON_AddNumberToObject(x, "turns", (double)u->agents[i].turns);
		cJSON_AddNumberToObject(x, "seconds",
					(double)(u->agents[i].turn_ns / 1000000) / 1000.0);
	}
	return o;
}

/* The meta of c as text (caller frees): state "running", or "ended" with
 * its outcome and usage. */
static char *meta_text(struct conv *c, bool ended)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "version", 1);
	cJSON_AddStringToObject(o, "sessionId", c->session);
	cJSON_AddStringToObject(o, "user", c->user);
	cJSON *a = cJSON_AddArrayToObject(o, "agents");
	for (size_t i = 0; i < c->req.nagents; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->req.agents[i]->name));
	cJSON_AddNumberToObject(o, "rounds", c->req.rounds);
	/* Its rounds' reservation in the limits: a restart after a crash
	 * refunds the rounds it did not start. */
	cJSON_AddNumberToObject(o, "reservation", (double)c->resv);
	char ts[40];
	util_iso8601(c->created_ns, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "created", ts);
	cJSON_AddStringToObject(o, "state", ended ? "ended" : "running");
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) == 0 && host[0])
		cJSON_AddStringToObject(o, "host", host); /* who records it */
	if (ended) {
		util_iso8601(util_now_ns(), ts, sizeof(ts));
		cJSON_AddStringToObject(o, "ended", ts);
		cJSON_AddStringToObject(o, "outcome", c->outcome ? c->outcome : "unknown");
		cJSON_AddNumberToObject(o, "events", (double)c->seq);
		cJSON_AddItemToObject(o, "usage",
				      convlog_usage_json(&c->use, util_mono_ns() - c->start_ns,
							 c->rounds_started));
	}
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* The meta file of c. */
static int meta_write(struct conv *c, bool ended, char **err)
{
	char *s = meta_text(c, ended);
	/* at the end, waited for: the events before it are stored then */
	int r = bus_events_put_meta(serve_bus(), c->session, s, strlen(s), ended, err);
	free(s);
	return r;
}

void convlog_paths(struct conv *c, const char *dir)
{
	c->events_path = xasprintf("%s/%s.jsonl", dir, c->session);
	c->meta_path = xasprintf("%s/%s.json", dir, c->session);
}

int convlog_create(struct conv *c, char **err)
{
	struct bus *b = serve_bus();
	if (!b)
		return err_set(err, "the bus is not open: the conversation has nowhere to record its events");
	struct bus_events *ev = NULL;
	if (bus_events_open(b, c->session, true, &ev, err) < 0)
		return -1;
	if (meta_write(c, false, err) < 0) {
		bus_events_close(&ev, false);
		return -1;
	}
	/* The events so far (clients have them already), then the file is
	 * where they go. */
	pthread_mutex_lock(&c->mu);
	int r = 0;
	for (long i = 0; i < c->nmem && r == 0; i++)
		r = bus_events_append(ev, i + 1, c->mem[i], strlen(c->mem[i]), err);
	if (r == 0) {
		c->ev = ev;
		ev = NULL;
		c->setup = true;
	}
	pthread_mutex_unlock(&c->mu);
	bus_events_close(&ev, false);
	return r;
}

/* One more line of len bytes. Under c->mu. */
static void add_offset(struct conv *c, int64_t len)
{
	if ((size_t)c->seq == c->ends_cap) {
		c->ends_cap = c->ends_cap ? 2 * c->ends_cap : 64;
		c->ends = xrealloc(c->ends, c->ends_cap * sizeof(*c->ends));
	}
	int64_t prev = c->seq ? c->ends[c->seq - 1] : 0;
	c->ends[c->seq++] = prev + len;
}

int convlog_append(struct conv *c, const char *text, size_t len)
{
	if (c->broken)
		return -1;
	if (!c->setup) {
		/* Before its set-up: kept, the file's first lines when it is made. */
		if (c->nmem == CONV_MEM_LINES) {
			c->broken = true;
			conv_log(c, "more events than kept before its set-up: the stream ends");
			return -1;
		}
		c->mem[c->nmem++] = xstrndup(text, len);
		add_offset(c, (int64_t)len);
		return 0;
	}
	char *err = NULL;
	if (!c->ev || bus_events_append(c->ev, c->seq + 1, text, len, &err) < 0) {
		c->broken = true;
		conv_log(c, "cannot record its events: %s; the stream ends",
			 err ? err : "they are closed");
		free(err);
		return -1;
	}
	add_offset(c, (int64_t)len);
	return 0;
}

void convlog_finish(struct conv *c)
{
	pthread_mutex_lock(&c->mu);
	struct bus_events *ev = c->ev;
	c->ev = NULL;
	pthread_mutex_unlock(&c->mu);
	bus_events_close(&ev, !no_fsync());
	char *err = NULL;
	/* A cancel request come too late has nothing left to cancel. */
	if (c->events_path) {
		char *cp = xasprintf("%.*s.cancel", (int)(strlen(c->events_path) - 6), c->events_path);
		unlink(cp);
		free(cp);
	}
	if (c->meta_path && meta_write(c, true, &err) < 0) {
		conv_log(c, "warning: %s", err);
		free(err);
	}
}

/* The offsets of the lines of the file fd (appended to c). The last
 * line's type in *last (caller frees; NULL when empty). -1 on a read
 * error. A final line without its newline (a write cut short) is left
 * out. */
static int scan_lines(int fd, struct conv *c, char **last)
{
	char buf[65536];
	int64_t off = 0, line_start = 0;
	struct sbuf cur;
	sbuf_init(&cur);
	*last = NULL;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sbuf_release(&cur);
			return -1;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (cur.len < 200)
					sbuf_addch(&cur, buf[i]);
				continue;
			}
			int64_t end = off + i + 1;
			pthread_mutex_lock(&c->mu);
			add_offset(c, end - line_start);
			pthread_mutex_unlock(&c->mu);
			line_start = end;
			/* The type is the first member: {"type":"...", */
			free(*last);
			*last = NULL;
			const char *t = cur.data ? strstr(cur.data, "{\"type\":\"") : NULL;
			if (t) {
				t += 9;
				const char *q = strchr(t, '"');
				if (q)
					*last = xstrndup(t, (size_t)(q - t));
			}
			cur.len = 0;
			if (cur.data)
				cur.data[0] = '\0';
		}
		off += n;
	}
	sbuf_release(&cur);
	return 0;
}

static cJSON *meta_read(const char *path, char **err)
{
	char *buf = NULL, *perr = NULL;
	size_t len = 0;
	if (util_read_file(path, META_MAX, &buf, &len, err) < 0)
		return NULL;
	cJSON *j = json_parse_strict(buf, len, &perr);
	free(buf);
	if (!cJSON_IsObject(j)) {
		err_set(err, "%s: %s", path, perr ? perr : "not a JSON object");
		free(perr);
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

int convlog_open(const char *dir, const char *session, const char *user, struct conv **out,
		 char **err)
{
	if (!convlog_session_ok(session))
		return 1;
	char *mp = xasprintf("%s/%s.json", dir, session);
	cJSON *m = access(mp, F_OK) == 0 ? meta_read(mp, err) : NULL;
	const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "state"));
	struct bus *b = serve_bus();
	if (b && (!state || strcmp(state, "ended"))) {
		/* not here, or not ended here: what the bus has (a serve on
		 * another host recorded it, or is recording it) */
		cJSON_Delete(m);
		m = NULL;
		int r = bus_events_fetch(b, session, err);
		if (r == 0 && access(mp, F_OK) == 0)
			m = meta_read(mp, err);
		else if (r != 0) {
			free(mp);
			return r;
		}
	}
	free(mp);
	if (!m)
		return err && *err ? -1 : 1;
	const char *owner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "user"));
	bool mine = owner && !strcmp(owner, user);
	cJSON_Delete(m);
	if (!mine)
		return 1;
	struct conv *c = xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	c->refs = 1;
	c->finished = true;
	c->ping_ms = 15000;
	util_strlcpy(c->session, session, sizeof(c->session));
	c->user = xstrdup(user);
	c->events_path = xasprintf("%s/%s.jsonl", dir, session);
	int fd = open(c->events_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *last = NULL;
	if (fd < 0 || scan_lines(fd, c, &last) < 0) {
		err_set(err, "cannot read %s: %s", c->events_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		conv_unref(c);
		return -1;
	}
	free(last);
	close(fd);
	*out = c;
	return 0;
}

/* ---- the admissions' journal ---- */

#define JOURNAL_NAME "admissions.journal"

static struct {
	pthread_rwlock_t lk; /* appends shared, the compaction exclusive */
	int fd;
	char *path;
	atomic_long pending; /* lines whose conversation waits for its set-up */
} jn = { .lk = PTHREAD_RWLOCK_INITIALIZER, .fd = -1 };

int convlog_journal_open(const char *dir, char **err)
{
	if (util_mkdirs(dir, err) < 0)
		return -1;
	char *path = xasprintf("%s/%s", dir, JOURNAL_NAME);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err_set(err, "cannot open %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	pthread_rwlock_wrlock(&jn.lk);
	jn.fd = fd;
	jn.path = path;
	atomic_store(&jn.pending, 0);
	pthread_rwlock_unlock(&jn.lk);
	return 0;
}

int convlog_journal_add(struct conv *c, char **err)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "session", c->session);
	char *meta = meta_text(c, false);
	cJSON_AddStringToObject(o, "meta", meta);
	free(meta);
	pthread_mutex_lock(&c->mu);
	char *line = c->nmem ? xstrndup(c->mem[0], strlen(c->mem[0]) - 1) : NULL;
	pthread_mutex_unlock(&c->mu);
	if (!line) {
		cJSON_Delete(o);
		return err_set(err, "session %s: no conversation_start to journal", c->session);
	}
	cJSON_AddStringToObject(o, "line", line);
	free(line);
	char *json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	/* a newline first: a line cut short before it (disk full) stays apart */
	char *text = xasprintf("\n%s\n", json);
	free(json);
	size_t n = strlen(text);
	int rc = 0;
	pthread_rwlock_rdlock(&jn.lk);
	if (jn.fd < 0) {
		rc = err_set(err, "the admissions' journal is not open");
	} else {
		atomic_fetch_add(&jn.pending, 1);
		ssize_t w;
		do
			w = write(jn.fd, text, n);
		while (w < 0 && errno == EINTR);
		if (w != (ssize_t)n) {
			atomic_fetch_sub(&jn.pending, 1);
			rc = err_set(err, "cannot write %s: %s", jn.path,
				     w < 0 ? strerror(errno) : "short write (disk full?)");
		}
	}
	pthread_rwlock_unlock(&jn.lk);
	free(text);
	return rc;
}

void convlog_journal_done(void)
{
	atomic_fetch_sub(&jn.pending, 1);
}

void convlog_journal_compact(void)
{
	pthread_rwlock_wrlock(&jn.lk);
	struct stat st;
	if (jn.fd >= 0 && atomic_load(&jn.pending) == 0 && fstat(jn.fd, &st) == 0 &&
	    st.st_size > 0 && ftruncate(jn.fd, 0) < 0)
		fprintf(stderr, "madf: serve: warning: cannot empty %s: %s\n", jn.path,
			strerror(errno));
	pthread_rwlock_unlock(&jn.lk);
}

void convlog_journal_close(void)
{
	pthread_rwlock_wrlock(&jn.lk);
	if (jn.fd >= 0)
		close(jn.fd);
	jn.fd = -1;
	free(jn.path);
	jn.path = NULL;
	pthread_rwlock_unlock(&jn.lk);
}

/* One journalled admission whose files were not made (the server
 * stopped first): its events file gets its conversation_start (unless it
 * has a whole line already), its meta is written (running: the scan
 * that follows ends it). */
static void journal_recover_one(struct bus *b, const char *dir, const cJSON *j)
{
	const char *session = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "session"));
	const char *meta = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "meta"));
	const char *line = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "line"));
	if (!session || !convlog_session_ok(session) || !meta || !line)
		return;
	char *mp = xasprintf("%s/%s.json", dir, session);
	bool made = access(mp, F_OK) == 0;
	free(mp);
	if (made)
		return; /* its set-up was done: the scan finds it */
	char *ep = xasprintf("%s/%s.jsonl", dir, session);
	int fd = open(ep, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	char *err = NULL;
	struct conv tmp = { 0 };
	pthread_mutex_init(&tmp.mu, NULL);
	char *last = NULL;
	if (fd < 0 || scan_lines(fd, &tmp, &last) < 0) {
		fprintf(stderr, "madf: serve: warning: %s: %s\n", ep, strerror(errno));
		goto out;
	}
	if (!tmp.seq) {
		/* nothing whole in it: its first event */
		if (ftruncate(fd, 0) < 0) {
			fprintf(stderr, "madf: serve: warning: %s: %s\n", ep, strerror(errno));
			goto out;
		}
		char *text = xasprintf("%s\n", line);
		struct bus_events *ev = NULL;
		if (bus_events_open(b, session, false, &ev, &err) < 0 ||
		    bus_events_append(ev, 1, text, strlen(text), &err) < 0) {
			fprintf(stderr, "madf: serve: warning: %s\n", err);
			free(err);
			err = NULL;
		}
		bus_events_close(&ev, !no_fsync());
		free(text);
	}
	if (bus_events_put_meta(b, session, meta, strlen(meta), false, &err) < 0) {
		fprintf(stderr, "madf: serve: warning: %s\n", err);
		free(err);
	} else {
		fprintf(stderr, "madf: serve: session %s was admitted but the server stopped "
			"before its files were made: made now\n", session);
	}
out:
	if (fd >= 0)
		close(fd);
	free(last);
	free(tmp.ends);
	pthread_mutex_destroy(&tmp.mu);
	free(ep);
}

/* The admissions the last server journalled: the sessions of those whose
 * files it did not make are made; then the journal is emptied. */
static void journal_recover(struct bus *b, const char *dir)
{
	char *jp = xasprintf("%s/%s", dir, JOURNAL_NAME);
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	if (access(jp, F_OK) < 0) {
		free(jp);
		return;
	}
	if (util_read_file(jp, (size_t)256 << 20, &buf, &len, &err) < 0) {
		fprintf(stderr, "madf: serve: warning: %s (the admissions it holds are not "
			"recovered)\n", err);
		free(err);
		free(jp);
		return;
	}
	for (size_t at = 0; at < len;) {
		char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;
		cJSON *j = n && nl ? json_parse_strict(buf + at, n, NULL) : NULL;
		if (j)
			journal_recover_one(b, dir, j);
		else if (n)
			fprintf(stderr, "madf: serve: warning: %s: a line that is not a whole "
				"admission (a write cut short): skipped\n", jp);
		cJSON_Delete(j);
		at += n + 1;
	}
	free(buf);
	if (truncate(jp, 0) < 0)
		fprintf(stderr, "madf: serve: warning: cannot empty %s: %s\n", jp, strerror(errno));
	free(jp);
}

/* Appends a terminal error to a session whose events stop without one,
 * through the bus b (NATS carries it too), and says so in its meta. */
/* The rounds a recorded conversation started: its round_start lines. */
static int rounds_started(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	char *err = NULL;
	if (util_read_file(path, (size_t)256 << 20, &buf, &len, &err) < 0) {
		free(err);
		return -1;
	}
	int n = 0;
	static const char key[] = "{\"type\":\"round_start\"";
	for (size_t at = 0; at < len;) {
		if (len - at >= sizeof(key) - 1 && !memcmp(buf + at, key, sizeof(key) - 1))
			n++;
		char *nl = memchr(buf + at, '\n', len - at);
		at = nl ? (size_t)(nl - buf) + 1 : len;
	}
	free(buf);
	return n;
}

static void recover_one(struct bus *b, struct serve_limits *lim, const char *dir,
			const char *session, cJSON *m)
{
	char *ep = xasprintf("%s/%s.jsonl", dir, session);
	int fd = open(ep, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		free(ep);
		return;
	}
	struct conv tmp = { 0 };
	pthread_mutex_init(&tmp.mu, NULL);
	char *last = NULL;
	if (scan_lines(fd, &tmp, &last) == 0 && !convlog_terminal(last)) {
		/* A line cut short by the stop is cut off first. */
		struct stat st;
		int64_t good = tmp.seq ? tmp.ends[tmp.seq - 1] : 0;
		if (fstat(fd, &st) == 0 && st.st_size > good && ftruncate(fd, good) < 0)
			fprintf(stderr, "madf: serve: warning: %s: %s\n", ep, strerror(errno));
		char ts[40];
		util_iso8601(util_now_ns(), ts, sizeof(ts));
		char *line = xasprintf("{\"type\":\"error\",\"data\":{\"error\":\"the server stopped "
				       "before the conversation ended; start it again\",\"code\":"
				       "\"SERVER_SHUTDOWN\",\"recoverable\":true,\"timestamp\":\"%s\","
				       "\"seq\":%ld,\"sessionId\":\"%s\"}}\n", ts, tmp.seq + 1, session);
		struct bus_events *ev = NULL;
		char *err = NULL;
		if (bus_events_open(b, session, false, &ev, &err) < 0 ||
		    bus_events_append(ev, tmp.seq + 1, line, strlen(line), &err) < 0) {
			fprintf(stderr, "madf: serve: warning: %s\n", err);
			free(err);
			err = NULL;
		} else {
			fprintf(stderr, "madf: serve: session %s had no final event (the server "
				"stopped under it): SERVER_SHUTDOWN recorded\n", session);
		}
		bus_events_close(&ev, !no_fsync());
		free(line);
		/* Its meta says so. */
		cJSON_DeleteItemFromObjectCaseSensitive(m, "state");
		cJSON_AddStringToObject(m, "state", "ended");
		cJSON_DeleteItemFromObjectCaseSensitive(m, "outcome");
		cJSON_AddStringToObject(m, "outcome", "SERVER_SHUTDOWN");
		cJSON_DeleteItemFromObjectCaseSensitive(m, "events");
		cJSON_AddNumberToObject(m, "events", (double)(tmp.seq + 1));
		char *s = cJSON_PrintUnformatted(m);
		if (bus_events_put_meta(b, session, s, strlen(s), true, &err) < 0) {
			fprintf(stderr, "madf: serve: warning: %s\n", err);
			free(err);
		}
		free(s);
		/* The rounds it reserved and never started go back to its user. */
		const cJSON *rv = cJSON_GetObjectItemCaseSensitive(m, "reservation");
		const char *user = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "user"));
		int used = rounds_started(ep);
		if (lim && user && cJSON_IsNumber(rv) && rv->valuedouble >= 1 &&
		    rv->valuedouble < 9e15 && used >= 0) {
			serve_limits_end(lim, user, (long)rv->valuedouble, used,
					 util_now_ns() / 1000000000LL);
			fprintf(stderr, "madf: serve: session %s: its unstarted rounds are refunded "
				"(%d started)\n", session, used);
		}
	}
	free(last);
	free(tmp.ends);
	pthread_mutex_destroy(&tmp.mu);
	close(fd);
	free(ep);
}

void convlog_recover(const char *dir, long keep_days, struct serve_limits *lim)
{
	if (access(dir, F_OK) < 0)
		return;
	/* the bus the conversations record on (its data directory: dir's
	 * parent), for the final events recovered */
	size_t dl = strlen(dir), sl = strlen("/" BUS_EVENTS_DIR);
	char *data_dir = dl > sl && !strcmp(dir + dl - sl, "/" BUS_EVENTS_DIR) ?
			 xstrndup(dir, dl - sl) : xstrdup(".");
	struct bus_config cfg;
	bus_config_init(&cfg, data_dir);
	free(data_dir);
	struct bus *b = NULL;
	char *berr = NULL;
	if (bus_open(&cfg, &b, &berr) < 0) {
		fprintf(stderr, "madf: serve: warning: the sessions stopped under the last server "
			"are not recovered: %s\n", berr);
		free(berr);
		bus_config_release(&cfg);
		return;
	}
	/* Before the scan: the sessions it makes are scanned too. */
	journal_recover(b, dir);
	DIR *d = opendir(dir);
	if (!d) {
		bus_free(&b);
		bus_config_release(&cfg);
		return;
	}
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	time_t cutoff = time(NULL) - (time_t)keep_days * 86400;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n == 24 + 7 && !strcmp(e->d_name + 24, ".cancel")) {
			/* a cancel request left for a conversation no longer running */
			char *cp = xasprintf("%s/%s", dir, e->d_name);
			unlink(cp);
			free(cp);
			continue;
		}
		if (n != 24 + 5 || strcmp(e->d_name + 24, ".json"))
			continue;
		char session[25];
		memcpy(session, e->d_name, 24);
		session[24] = '\0';
		if (!convlog_session_ok(session))
			continue;
		char *mp = xasprintf("%s/%s", dir, e->d_name);
		char *ep = xasprintf("%s/%s.jsonl", dir, session);
		struct stat st;
		if (stat(mp, &st) == 0 && st.st_mtime < cutoff) {
			unlink(ep);
			unlink(mp);
		} else {
			/* Only a session its meta does not say ended can lack its
			 * end; only one recorded on this host (a copy of another
			 * host's, fetched from the bus, may still be running there). */
			char *err = NULL;
			cJSON *m = meta_read(mp, &err);
			const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "state"));
			const char *mh = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "host"));
			if (m && (!state || strcmp(state, "ended")) && (!mh || !strcmp(mh, host)))
				recover_one(b, lim, dir, session, m);
			cJSON_Delete(m);
			free(err);
		}
		free(mp);
		free(ep);
	}
	closedir(d);
	bus_free(&b);
	bus_config_release(&cfg);
}

void convlog_each_meta(const char *dir, void (*fn)(void *ctx, const cJSON *meta), void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n != 24 + 5 || strcmp(e->d_name + 24, ".json"))
			continue;
		char *mp = xasprintf("%s/%s", dir, e->d_name);
		char *err = NULL;
		cJSON *m = meta_read(mp, &err);
		if (m)
			fn(ctx, m);
		free(err);
		cJSON_Delete(m);
		free(mp);
	}
	closedir(d);
}
