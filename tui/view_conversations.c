/* View 7, conversations: those `madf serve` runs and has run (its
 * recorded sessions, data/serve-sessions/SESSION.json and SESSION.jsonl;
 * on a bus spanning hosts, NATS, also those recorded on the bus by a serve
 * on another host, read from the bus without copying them here),
 * newest first; the selected one below as it happens, its events file
 * read on from where the last refresh stopped. C cancels a running one
 * over the bus: an operator_control (cancel) to madf serve's controller
 * (server/serve_bus.h), whose task_acceptance is shown and journalled
 * (tui/task_replies.c); e exports a finished one to Markdown
 * (data/reports/exports/conversation-SESSION.md). */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "server/serve_bus.h"
#include "tui/console.h"
#include "tui/wrap.h"
#include "core/banned.h"

#define CONV_MAX 500            /* conversations listed (the newest) */
#define CONV_MAX_S "500"
#define META_MAX ((size_t)1 << 20)
#define READ_MAX ((size_t)1 << 20) /* bytes of events read per refresh */
#define PANE_TAIL ((size_t)32768)  /* bytes of the transcript the pane wraps */
#define BUS_LINES 2000             /* events read from the bus per refresh */
#define BUS_LIST_NS 1000000000LL   /* the bus's sessions listed at most every 1 s */

struct conv_item {
	char session[25];
	char *user, *agents, *state;
	long rounds;        /* as asked */
	long round;         /* reached: the meta's usage, or the events read */
	bool running;
	int64_t created_ns, ended_ns;
	double tokens;      /* -1: not recorded */
	uint64_t ino;       /* the meta file as read */
	int64_t size, mtime_ns;
	bool remote;        /* on the bus only (another host's serve) */
};

/* One events file followed: where the last read stopped, what it made. */
struct conv_follow {
	char session[25];
	int64_t off;
	struct sbuf partial;   /* a line not yet ended */
	struct sbuf text;      /* the transcript, Markdown */
	long round;
	bool in_text;          /* chunks being joined */
	bool chunked;          /* this turn (or summary) came as chunks */
	bool ended;
	bool remote;           /* read from the bus: pos is where */
	uint64_t pos;
};

/* A conversation on the bus only: its meta as last read. */
struct conv_remote {
	char session[25];
	char *meta;
	bool running;
};

struct convs {
	struct conv_item *v;
	size_t n;
	/* the events files followed: the running conversations' and the
	 * selected one's (each owned) */
	struct conv_follow **fs;
	size_t nfs;
	struct conv_follow *sel; /* the selected one's, in fs (NULL: none) */
	struct task_replies replies; /* the cancels sent, until the controller answers */
	/* the bus's sessions (NATS), as last listed, and their metas */
	char **names;
	size_t nnames;
	struct conv_remote *rm;
	size_t nrm;
	int64_t listed_ns;
	bool list_failed; /* said once */
};

static void items_free(struct convs *cv)
{
	for (size_t i = 0; i < cv->n; i++) {
		free(cv->v[i].user);
		free(cv->v[i].agents);
		free(cv->v[i].state);
	}
	free(cv->v);
	cv->v = NULL;
	cv->n = 0;
}

static void follow_reset(struct conv_follow *f, const char *session)
{
	sbuf_release(&f->partial);
	sbuf_release(&f->text);
	memset(f, 0, sizeof(*f));
	sbuf_init(&f->partial);
	sbuf_init(&f->text);
	util_strlcpy(f->session, session, sizeof(f->session));
}

static void follow_free(struct conv_follow *f)
{
	sbuf_release(&f->partial);
	sbuf_release(&f->text);
	free(f);
}

/* The follower of session, made when there is none (or made again when
 * the session moved between the bus and this host's files). */
static struct conv_follow *follow_get(struct convs *cv, const char *session, bool remote)
{
	for (size_t i = 0; i < cv->nfs; i++)
		if (!strcmp(cv->fs[i]->session, session)) {
			if (cv->fs[i]->remote != remote) {
				follow_reset(cv->fs[i], session);
				cv->fs[i]->remote = remote;
			}
			return cv->fs[i];
		}
	struct conv_follow *f = xcalloc(1, sizeof(*f));
	follow_reset(f, session);
	f->remote = remote;
	cv->fs = xrealloc(cv->fs, (cv->nfs + 1) * sizeof(*cv->fs));
	cv->fs[cv->nfs++] = f;
	return f;
}

static char *sessions_dir(struct console *c)
{
	return xasprintf("%s/serve-sessions", c->cli->data_dir);
}

static bool session_ok(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return false;
	return n == 24;
}

/* "2026-11-25T00:03:56.123Z" as ns since the epoch; 0 when not one. */
static int64_t iso_ns(const char *s)
{
	struct tm tm = { 0 };
	if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			 &tm.tm_min, &tm.tm_sec) != 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000000LL;
}

/* ---- the events, as a transcript ---- */

static void text_line(struct conv_follow *f)
{
	if (f->in_text) {
		sbuf_addch(&f->text, '\n');
		f->in_text = false;
	}
}

/* A JSON value as at most 300 bytes of one line. */
static void add_json_short(struct sbuf *b, const cJSON *j)
{
	char *s = j ? (cJSON_IsString(j) ? xstrdup(j->valuestring) : cJSON_PrintUnformatted(j)) : NULL;
	if (!s)
		return;
	size_t n = strlen(s);
	for (size_t i = 0; i < n && i < 300; i++)
		sbuf_addch(b, s[i] == '\n' ? ' ' : s[i]);
	if (n > 300)
		sbuf_addstr(b, "...");
	free(s);
}

static void follow_event(struct conv_follow *f, const char *line, size_t len)
{
	cJSON *e = cJSON_ParseWithLength(line, len);
	const char *type = jstr_or(e, "type", "");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "data");
	struct sbuf *t = &f->text;
	long round = (long)jnum(d, "round", 0);
	if (round > f->round)
		f->round = round;
	if (!strcmp(type, "agent_response_chunk") || !strcmp(type, "summarizer_chunk")) {
		sbuf_addstr(t, jstr_or(d, "chunk", ""));
		f->in_text = f->chunked = true;
		goto out;
	}
	text_line(f);
	if (!strcmp(type, "conversation_start")) {
		sbuf_addf(t, "Conversation of %ld round%s, agents:", (long)jnum(d, "rounds", 0),
			  jnum(d, "rounds", 0) == 1 ? "" : "s");
		const cJSON *a;
		cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(d, "agents"))
			sbuf_addf(t, " %s", cJSON_IsString(a) ? a->valuestring : "?");
		sbuf_addch(t, '\n');
	} else if (!strcmp(type, "initiator_complete")) {
		sbuf_addf(t, "Goal: %s\n", jstr_or(d, "goal", ""));
	} else if (!strcmp(type, "round_start")) {
		sbuf_addf(t, "\n## Round %ld\n", round);
	} else if (!strcmp(type, "agent_start")) {
		sbuf_addf(t, "\n### %s\n", jstr_or(d, "agent", "?"));
		f->chunked = false;
	} else if (!strcmp(type, "agent_tool_call") || !strcmp(type, "initiator_tool_call")) {
		const cJSON *tc = cJSON_GetObjectItemCaseSensitive(d, "toolCall");
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		sbuf_addf(t, "- tool call %s: ", jstr_or(fn, "name", jstr_or(tc, "name", "?")));
		add_json_short(t, cJSON_GetObjectItemCaseSensitive(fn ? fn : tc, "arguments"));
		sbuf_addch(t, '\n');
	} else if (!strcmp(type, "agent_tool_result")) {
		sbuf_addstr(t, "- tool result: ");
		add_json_short(t, cJSON_GetObjectItemCaseSensitive(d, "result"));
		sbuf_addch(t, '\n');
	} else if (!strcmp(type, "agent_complete")) {
		if (!f->chunked)
			sbuf_addf(t, "%s\n", jstr_or(d, "response", ""));
		f->chunked = false;
	} else if (!strcmp(type, "agent_error")) {
		sbuf_addf(t, "- error of %s: %s (%s)\n", jstr_or(d, "agent", "?"),
			  jstr_or(d, "error", ""), jstr_or(d, "action", ""));
	} else if (!strcmp(type, "summarizer_start")) {
		sbuf_addstr(t, "\n## Summary\n");
		f->chunked = false;
	} else if (!strcmp(type, "conversation_complete")) {
		if (!f->chunked)
			sbuf_addf(t, "%s\n", jstr_or(d, "summary", ""));
		sbuf_addf(t, "\nComplete: %ld rounds.\n", (long)jnum(d, "totalRounds", 0));
		f->ended = true;
	} else if (!strcmp(type, "error")) {
		sbuf_addf(t, "\nError %s: %s\n", jstr_or(d, "code", "?"), jstr_or(d, "error", ""));
		f->ended = true;
	} else if (!e) {
		sbuf_addstr(t, "(an event line that is not JSON)\n");
	}
out:
	cJSON_Delete(e);
}

static void follow_bus_line(void *ctx, const char *line, size_t len)
{
	follow_event(ctx, line, len);
}

/* Reads on from f->off what was appended to the events file (at most
 * READ_MAX a call), or from f->pos what the bus has after it (at most
 * BUS_LINES); true when something new came. */
static bool follow_read(struct console *c, struct conv_follow *f)
{
	if (f->remote) {
		char *err = NULL;
		int n = bus_events_read(c->bus, f->session, &f->pos, BUS_LINES, follow_bus_line, f,
					&err);
		if (n < 0)
			console_status(c, true, "conversation %s: %s", f->session, err);
		free(err);
		return n > 0;
	}
	char *dir = sessions_dir(c);
	char *path = xasprintf("%s/%s.jsonl", dir, f->session);
	free(dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	if (fd < 0)
		return false;
	bool got = false;
	char buf[65536];
	size_t total = 0;
	while (total < READ_MAX) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)f->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		f->off += n;
		total += (size_t)n;
		got = true;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				sbuf_addch(&f->partial, buf[i]);
				continue;
			}
			follow_event(f, f->partial.data ? f->partial.data : "", f->partial.len);
			f->partial.len = 0;
		}
	}
	close(fd);
	return got;
}

/* ---- the list ---- */

static void item_from_meta(struct conv_item *it, const char *session, const cJSON *m)
{
	memset(it, 0, sizeof(*it));
	util_strlcpy(it->session, session, sizeof(it->session));
	it->user = xstrdup(jstr_or(m, "user", "?"));
	struct sbuf a;
	sbuf_init(&a);
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(m, "agents"))
		sbuf_addf(&a, "%s%s", a.len ? "," : "", cJSON_IsString(x) ? x->valuestring : "?");
	it->agents = a.data ? sbuf_detach(&a) : xstrdup("");
	sbuf_release(&a);
	it->rounds = (long)jnum(m, "rounds", 0);
	it->running = !strcmp(jstr_or(m, "state", ""), "running");
	it->created_ns = iso_ns(jstr_or(m, "created", NULL));
	it->ended_ns = iso_ns(jstr_or(m, "ended", NULL));
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "usage");
	it->round = (long)jnum(u, "rounds", 0);
	it->tokens = u ? jnum(u, "inputTokens", 0) + jnum(u, "outputTokens", 0) : -1;
	if (it->running) {
		it->state = xstrdup("running");
	} else {
		const char *o = jstr_or(m, "outcome", "unknown");
		char *s = xstrdup(o);
		for (char *p = s; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		it->state = s;
	}
}

static int item_newest_first(const void *a, const void *b)
{
	const struct conv_item *x = a, *y = b;
	if (x->created_ns != y->created_ns)
		return x->created_ns < y->created_ns ? 1 : -1;
	return strcmp(y->session, x->session);
}

static int item_by_session(const void *a, const void *b)
{
	const struct conv_item *x = a, *y = b;
	return strcmp(x->session, y->session);
}

static struct conv_remote *remote_find(struct convs *cv, const char *session)
{
	for (size_t i = 0; i < cv->nrm; i++)
		if (!strcmp(cv->rm[i].session, session))
			return &cv->rm[i];
	return NULL;
}

static void remote_free(struct convs *cv)
{
	for (size_t i = 0; i < cv->nnames; i++)
		free(cv->names[i]);
	free(cv->names);
	for (size_t i = 0; i < cv->nrm; i++)
		free(cv->rm[i].meta);
	free(cv->rm);
	cv->names = NULL;
	cv->rm = NULL;
	cv->nnames = cv->nrm = 0;
}

/* The bus's sessions (listed again at most every BUS_LIST_NS) that this
 * host has no file of, as items (remote), after the cv->n local ones:
 * their metas read from the bus when first seen, and again at each
 * listing while they run. */
static void items_add_remote(struct console *c, struct convs *cv, size_t *cap)
{
	int64_t now = util_mono_ns();
	bool list = !cv->listed_ns || now - cv->listed_ns >= BUS_LIST_NS;
	if (list) {
		char **names = NULL, *err = NULL;
		size_t n = 0;
		cv->listed_ns = now;
		if (bus_events_sessions(c->bus, &names, &n, &err) < 0) {
			if (!cv->list_failed)
				console_status(c, true, "conversations on the bus: %s", err);
			cv->list_failed = true;
			free(err);
		} else {
			cv->list_failed = false;
			for (size_t i = 0; i < cv->nnames; i++)
				free(cv->names[i]);
			free(cv->names);
			cv->names = names;
			cv->nnames = n;
		}
	}
	size_t nlocal = cv->n;
	for (size_t i = 0; i < cv->nnames; i++) {
		const char *s = cv->names[i];
		if (!session_ok(s))
			continue;
		bool local = false;
		for (size_t k = 0; k < nlocal && !local; k++)
			local = !strcmp(cv->v[k].session, s);
		if (local)
			continue;
		struct conv_remote *r = remote_find(cv, s);
		if (!r || (list && r->running)) {
			char *meta = NULL, *err = NULL;
			if (bus_events_meta(c->bus, s, &meta, &err) != 0) {
				free(err);
				continue;
			}
			if (!r) {
				cv->rm = xrealloc(cv->rm, (cv->nrm + 1) * sizeof(*cv->rm));
				r = &cv->rm[cv->nrm++];
				memset(r, 0, sizeof(*r));
				util_strlcpy(r->session, s, sizeof(r->session));
			}
			free(r->meta);
			r->meta = meta;
		}
		cJSON *m = r->meta ? cJSON_Parse(r->meta) : NULL;
		if (!cJSON_IsObject(m)) {
			cJSON_Delete(m);
			continue;
		}
		if (cv->n == *cap) {
			*cap = *cap ? 2 * *cap : 32;
			cv->v = xrealloc(cv->v, *cap * sizeof(*cv->v));
		}
		struct conv_item *it = &cv->v[cv->n++];
		item_from_meta(it, s, m);
		it->remote = true;
		r->running = it->running;
		cJSON_Delete(m);
	}
}

/* Every meta file of the sessions directory as an item, newest first; a
 * meta file unchanged since the last refresh (inode, size, mtime) is not
 * read again. */
static void items_load(struct console *c, struct convs *cv)
{
	struct conv_item *old = cv->v;
	size_t nold = cv->n;
	if (nold)
		qsort(old, nold, sizeof(*old), item_by_session);
	cv->v = NULL;
	cv->n = 0;
	char *dir = sessions_dir(c);
	DIR *d = opendir(dir);
	size_t cap = 0;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n != 24 + 5 || strcmp(e->d_name + 24, ".json"))
			continue;
		struct conv_item key;
		memcpy(key.session, e->d_name, 24);
		key.session[24] = 0;
		if (!session_ok(key.session))
			continue;
		char *mp = xasprintf("%s/%s", dir, e->d_name);
		struct stat st;
		if (stat(mp, &st) < 0) {
			free(mp);
			continue;
		}
		if (cv->n == cap) {
			cap = cap ? 2 * cap : 32;
			cv->v = xrealloc(cv->v, cap * sizeof(*cv->v));
		}
		struct conv_item *was = nold ? bsearch(&key, old, nold, sizeof(*old), item_by_session) :
				       NULL;
		if (was && was->user && was->ino == (uint64_t)st.st_ino &&
		    was->size == (int64_t)st.st_size &&
		    was->mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec) {
			cv->v[cv->n++] = *was;
			was->user = was->agents = was->state = NULL; /* moved */
			free(mp);
			continue;
		}
		char *buf = NULL, *err = NULL;
		size_t len = 0;
		cJSON *m = util_read_file(mp, META_MAX, &buf, &len, &err) == 0 ?
			   cJSON_ParseWithLength(buf, len) : NULL;
		free(buf);
		free(err);
		free(mp);
		if (!cJSON_IsObject(m)) {
			cJSON_Delete(m);
			continue; /* being written, or not one of serve's */
		}
		struct conv_item *it = &cv->v[cv->n++];
		item_from_meta(it, key.session, m);
		it->ino = (uint64_t)st.st_ino;
		it->size = (int64_t)st.st_size;
		it->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		cJSON_Delete(m);
	}
	if (d)
		closedir(d);
	free(dir);
	for (size_t i = 0; i < nold; i++) {
		free(old[i].user);
		free(old[i].agents);
		free(old[i].state);
	}
	free(old);
	items_add_remote(c, cv, &cap);
	if (cv->n)
		qsort(cv->v, cv->n, sizeof(*cv->v), item_newest_first);
}

static struct conv_item *item_find(struct convs *cv, const char *session)
{
	for (size_t i = 0; session && i < cv->n; i++)
		if (!strcmp(cv->v[i].session, session))
			return &cv->v[i];
	return NULL;
}

static struct conv_item *item_current(const struct view *v)
{
	const struct console_rows *rs = &v->rows;
	if (!rs->nvis || rs->sel >= rs->nvis)
		return NULL;
	return item_find(v->data, rs->v[rs->vis[rs->sel]].id);
}

/* The selected conversation followed: read on, from the start when it
 * was not followed yet. */
static void follow_selected(struct console *c, struct view *v)
{
	struct convs *cv = v->data;
	struct conv_item *it = item_current(v);
	if (!it)
		return;
	cv->sel = follow_get(cv, it->session, it->remote);
	follow_read(c, cv->sel);
	if (it->running && cv->sel->round > it->round)
		it->round = cv->sel->round;
}

/* The running conversations and the selected one (session) followed,
 * the others' followers dropped; true when something new was read. */
static bool follow_all(struct console *c, struct convs *cv, const char *session)
{
	bool got = false;
	cv->sel = NULL;
	for (size_t i = 0; i < cv->n; i++) {
		struct conv_item *it = &cv->v[i];
		bool sel = !strcmp(it->session, session);
		if (!it->running && !sel)
			continue;
		struct conv_follow *f = follow_get(cv, it->session, it->remote);
		got |= follow_read(c, f);
		if (it->running && f->round > it->round)
			it->round = f->round;
		if (sel)
			cv->sel = f;
	}
	size_t k = 0;
	for (size_t i = 0; i < cv->nfs; i++) {
		struct conv_item *it = item_find(cv, cv->fs[i]->session);
		if (it && (it->running || cv->fs[i] == cv->sel))
			cv->fs[k++] = cv->fs[i];
		else
			follow_free(cv->fs[i]);
	}
	cv->nfs = k;
	return got;
}

static unsigned convs_load(struct console *c, struct view *v, bool shown)
{
	if (!shown)
		return 0;
	struct convs *cv = v->data;
	struct console_rows *r = &v->rows;
	struct console_row *cur = console_rows_current(r);
	char sel[25];
	util_strlcpy(sel, cur && cur->id ? cur->id : "", sizeof(sel));
	items_load(c, cv);
	/* the selected one (or the newest) read on, the rounds shown in the rows */
	if (!item_find(cv, sel) && cv->n)
		util_strlcpy(sel, cv->v[0].session, sizeof(sel));
	bool got = follow_all(c, cv, sel);
	struct conv_item *it;
	console_rows_clear(r);
	size_t nrun = 0, nremote = 0;
	for (size_t i = 0; i < cv->n; i++) {
		nrun += cv->v[i].running;
		nremote += cv->v[i].remote;
	}
	char from_bus[64] = "";
	if (nremote)
		snprintf(from_bus, sizeof(from_bus), ", %zu read from the bus (another host's)",
			 nremote);
	console_rows_add(r, NULL, SLOT_HEADING, "Conversations of madf serve: %zu (%zu running)%s%s",
			 cv->n, nrun, from_bus,
			 cv->n > CONV_MAX ? "; the newest " CONV_MAX_S " listed" : "");
	console_rows_add(r, NULL, SLOT_HEADER, "%-24s %-14s %-7s %-22s %7s %8s %s", "SESSION", "USER",
			 "ROUND", "STATE", "ELAPSED", "TOKENS", "AGENTS");
	int64_t now = util_now_ns();
	for (size_t i = 0; i < cv->n && i < CONV_MAX; i++) {
		it = &cv->v[i];
		char el[16], rnd[24], tok[16];
		int64_t end = it->running || !it->ended_ns ? now : it->ended_ns;
		console_age(it->created_ns ? end - it->created_ns : 0, el, sizeof(el));
		snprintf(rnd, sizeof(rnd), "%ld/%ld", it->round, it->rounds);
		if (it->tokens >= 0)
			snprintf(tok, sizeof(tok), "%.0f", it->tokens);
		else
			util_strlcpy(tok, "-", sizeof(tok));
		char *user = util_sanitize(it->user, strlen(it->user), false);
		char *agents = util_sanitize(it->agents, strlen(it->agents), false);
		char *state = util_sanitize(it->state, strlen(it->state), false);
		console_rows_add(r, it->session,
				 it->running ? SLOT_NORMAL :
				 strcmp(it->state, "complete") ? SLOT_WARN : SLOT_DIM,
				 "%-24s %-14.14s %-7s %-22.22s %7s %8s %-26.26s", it->session, user,
				 rnd, state, el, tok, agents);
		free(user);
		free(agents);
		free(state);
	}
	if (!cv->n)
		console_rows_add(r, NULL, SLOT_DIM, "  (no conversations recorded: madf serve "
				 "records them in %s/serve-sessions)", c->cli->data_dir);
	/* the transcript may have grown though the rows did not */
	return console_rows_done(c, r) | (got ? CONSOLE_REDRAW : 0);
}

/* The transcript of the selected conversation, its last lines filling
 * y0..y1. */
static void draw_detail(struct console *c, struct view *v, int y0, int y1)
{
	struct convs *cv = v->data;
	struct conv_item *it = item_current(v);
	if (!it || !cv->sel || strcmp(cv->sel->session, it->session) || y1 - y0 < 2)
		return;
	char *hdr = xasprintf("%s of %s: %s, round %ld of %ld", it->session, it->user, it->state,
			      it->round, it->rounds);
	char *h = util_sanitize(hdr, strlen(hdr), false);
	console_put(c, y0, 0, COLS, SLOT_HEADER, h, true);
	free(h);
	free(hdr);
	/* the pane shows the end: only the last PANE_TAIL bytes are wrapped,
	 * from a line's start */
	const char *t = cv->sel->text.data ? cv->sel->text.data : "";
	size_t len = cv->sel->text.len;
	if (len > PANE_TAIL) {
		const char *nl = strchr(t + len - PANE_TAIL, '\n');
		t = nl ? nl + 1 : t + len - PANE_TAIL;
	}
	char *clean = util_sanitize(t, strlen(t), true);
	char **lines = NULL;
	size_t n = wrap_text(clean, COLS > 12 ? (size_t)COLS - 2 : 8, 2, &lines);
	size_t room = (size_t)(y1 - y0 - 1);
	size_t first = n > room ? n - room : 0;
	for (size_t i = 0; i < n; i++) {
		if (i >= first)
			console_put(c, y0 + 1 + (int)(i - first), 1, COLS - 1, SLOT_NORMAL, lines[i], true);
		free(lines[i]);
	}
	free(lines);
	free(clean);
}

static void convs_draw(struct console *c, struct view *v, int y0, int y1)
{
	int mid = y0 + (y1 - y0) * 2 / 5;
	if (mid < y0 + 4)
		mid = y1;
	console_rows_draw(c, &v->rows, y0, mid, NULL);
	if (mid < y1)
		draw_detail(c, v, mid, y1);
}

/* ---- the actions ---- */

static cJSON *ids_of(const struct conv_item *it)
{
	cJSON *ids = cJSON_CreateArray();
	cJSON_AddItemToArray(ids, cJSON_CreateString(it->session));
	return ids;
}

/* C: asks, then sends an operator_control (action cancel, run_id the
 * session) to madf serve's controller; its task_acceptance (applied,
 * refused, failed, and why) comes later (convs_frame). */
static unsigned convs_cancel(struct console *c, struct view *v, int answer)
{
	struct convs *cv = v->data;
	struct conv_item *it = item_current(v);
	if (!it || !it->running) {
		console_status(c, true, "cancel: %s", it ? "this conversation is not running" :
			       "no conversation selected");
		return CONSOLE_REDRAW;
	}
	if (!answer) {
		char *user = util_sanitize(it->user, strlen(it->user), false);
		unsigned f = console_confirm(c, v, OP_TASK_CANCEL, false,
					     "Cancel conversation %s of %s? y/n", it->session, user);
		free(user);
		return f;
	}
	cJSON *content = wf_control_content("cancel", it->session, it->session, NULL, NULL);
	struct msg *m = msg_new("operator", SERVE_CONTROLLER, MSG_TASK_ASSIGNMENT, content);
	char *err = NULL, *result;
	bool warn = false;
	cJSON *ids = ids_of(it);
	if (!m) {
		result = xstrdup("failed: cannot build the message");
		warn = true;
	} else {
		m->priority = PRIO_URGENT;
		m->correlation_id = xstrdup(it->session);
		cJSON_AddItemToArray(ids, cJSON_CreateString(m->id));
		if (bus_send(c->bus, m, &err) < 0) {
			result = xasprintf("failed: %s", err);
			warn = true;
		} else {
			char label[96], why[96];
			snprintf(label, sizeof(label), "cancel %s", it->session);
			int l = task_replies_sent(&cv->replies, c, SERVE_CONTROLLER, m->id,
						  "conversation-cancel", it->session, label, why,
						  sizeof(why));
			if (l == WF_ALIVE)
				result = xasprintf("asked %s (%s); waiting for its answer",
						   SERVE_CONTROLLER, m->id);
			else
				result = xasprintf("%s is %s (%s): the cancel waits in its inbox",
						   SERVE_CONTROLLER, l == WF_OFFLINE ? "offline" :
						   "not answering", why);
			warn = l != WF_ALIVE;
		}
	}
	console_journal(c, "conversation-cancel", ids, result);
	cJSON_Delete(ids);
	console_status(c, warn, "cancel %s: %s", it->session, result);
	free(result);
	free(err);
	msg_free(&m);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

/* The controller's answers to the cancels sent. */
static unsigned convs_frame(struct console *c, struct view *v)
{
	struct convs *cv = v->data;
	return task_replies_poll(&cv->replies, c);
}

/* e: the finished conversation's transcript as Markdown in
 * data/reports/exports/conversation-SESSION.md. */
static unsigned convs_export(struct console *c, struct view *v)
{
	struct convs *cv = v->data;
	struct conv_item *it = item_current(v);
	if (!it || it->running) {
		console_status(c, true, "export: %s", it ? "the conversation is still running: "
			       "export it when it has ended" : "no conversation selected");
		return CONSOLE_REDRAW;
	}
	struct conv_follow *f = follow_get(cv, it->session, it->remote);
	while (follow_read(c, f))
		;
	char *dir = xasprintf("%s/reports/exports", c->cli->data_dir);
	char *err = NULL, *result;
	int rc = -1;
	if (console_export_dir_ready(dir, &err) == 0) {
		struct sbuf md;
		sbuf_init(&md);
		sbuf_addf(&md, "# Conversation %s\n\n- User: %s\n- Agents: %s\n- Rounds: %ld of %ld\n"
			  "- State: %s\n", it->session, it->user, it->agents, it->round, it->rounds,
			  it->state);
		if (it->tokens >= 0)
			sbuf_addf(&md, "- Tokens: %.0f\n", it->tokens);
		sbuf_addch(&md, '\n');
		if (f->text.data)
			sbuf_addstr(&md, f->text.data);
		char *clean = util_sanitize(md.data, md.len, true);
		sbuf_release(&md);
		char *path = xasprintf("%s/conversation-%s.md", dir, it->session);
		rc = util_write_file_atomic(path, clean, strlen(clean), true, &err);
		free(clean);
		result = rc < 0 ? xasprintf("failed: %s", err) : xasprintf("wrote %s", path);
		free(path);
	} else {
		result = xasprintf("failed: %s", err);
	}
	cJSON *ids = ids_of(it);
	console_journal(c, "conversation-export", ids, result);
	cJSON_Delete(ids);
	console_status(c, rc < 0, "export: %s", result);
	free(result);
	free(err);
	free(dir);
	return CONSOLE_REDRAW;
}

static unsigned convs_act(struct console *c, struct view *v, enum console_op op, int answer)
{
	struct convs *cv = v->data;
	switch (op) {
	case OP_TASK_CANCEL:
		return convs_cancel(c, v, answer);
	case OP_EXPORT:
		return convs_export(c, v);
	case OP_OPEN: {
		struct conv_item *it = item_current(v);
		if (!it)
			return 0;
		follow_selected(c, v);
		char *title = xasprintf("Conversation %s of %s (%s)", it->session, it->user, it->state);
		console_reader_open(c, title, cv->sel && cv->sel->text.data ? cv->sel->text.data : "");
		free(title);
		return CONSOLE_REDRAW;
	}
	default:
		return CONSOLE_PASS;
	}
}

static bool convs_applies(const struct view *v, enum console_op op)
{
	struct conv_item *it = item_current(v);
	if (op == OP_TASK_CANCEL)
		return it && it->running;
	if (op == OP_EXPORT)
		return it && !it->running;
	return true;
}

static void convs_moved(struct console *c, struct view *v)
{
	follow_selected(c, v);
}

static const char *convs_enter_hint(const struct view *v)
{
	(void)v;
	return "Enter read";
}

static void *convs_init(struct console *c)
{
	(void)c;
	return xcalloc(1, sizeof(struct convs));
}

static void convs_release(struct console *c, struct view *v)
{
	(void)c;
	struct convs *cv = v->data;
	if (!cv)
		return;
	items_free(cv);
	remote_free(cv);
	for (size_t i = 0; i < cv->nfs; i++)
		follow_free(cv->fs[i]);
	free(cv->fs);
	free(cv);
}

static const struct key_binding convs_keys[] = {
	{ 'C', OP_TASK_CANCEL, "cancel the selected running conversation (over the bus: madf "
	  "serve's controller ends it and answers)",
	  true, true, "cancel" },
	{ 'e', OP_EXPORT, "export a finished conversation to data/reports/exports as Markdown",
	  false, true, "export" },
};

const struct view_ops view_conversations_ops = {
	.name = "conversations",
	.title = "Conversations",
	.help = "madf serve's conversations, the selected one as it happens",
	.keys = convs_keys,
	.nkeys = ARRAY_SIZE(convs_keys),
	.init = convs_init,
	.load = convs_load,
	.draw = convs_draw,
	.act = convs_act,
	.applies = convs_applies,
	.moved = convs_moved,
	.frame = convs_frame,
	.enter_hint = convs_enter_hint,
	.release = convs_release,
};
