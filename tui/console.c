/* The operator console: setup, the poll() reactor, keys, the command
 * line, the frame around the views, the scripted mode. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "agents/data_tools.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/util.h"
#include "tui/console.h"
#include "cli/host.h"
#include "agents/known_agents.h"
#include "core/banned.h"

#define CONSOLE_MIN_COLS 80
#define CONSOLE_MIN_ROWS 24
#define CONSOLE_TICK_MS 500
#define CONSOLE_SCRIPT_COLS 120
#define CONSOLE_SCRIPT_ROWS 40

const char *const console_view_titles[VIEW_COUNT] = {
	"Overview", "Tasks", "Queues", "Logs", "Reports", "Tools",
};

/* The : commands, for completion (console_run_command runs them). */
const char *const console_commands[] = {
	"agent", "assign", "dlq", "help", "inbox", "logs", "messages", "overview", "processed",
	"processing", "q", "quit", "report", "retry-to", "since", "tasks", "theme", "tools",
	"trash",
};
const size_t console_ncommands = ARRAY_SIZE(console_commands);

/* Signals reach the loop through this pipe. */
static int sig_pipe[2] = { -1, -1 };
static int crash_fd = 2;
static volatile sig_atomic_t curses_up;
static SCREEN *console_screen; /* scripted mode's screen */

static void console_on_signal(int sig)
{
	int e = errno;
	unsigned char b = (unsigned char)sig;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: the loop wakes up anyway */
	}
	errno = e;
}

/* A crash restores the terminal before saying so. */
static void console_on_crash(int sig)
{
	if (curses_up)
		endwin();
	static const char msg[] = "madf: console crashed; the terminal was restored\n";
	if (write(crash_fd, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be done */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int console_signals_init(void)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	struct sigaction sa = { .sa_handler = console_on_signal };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	struct sigaction cr = { .sa_handler = console_on_crash };
	sigemptyset(&cr.sa_mask);
	cr.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &cr, NULL);
	sigaction(SIGABRT, &cr, NULL);
	sigaction(SIGBUS, &cr, NULL);
	sigaction(SIGFPE, &cr, NULL);
	return 0;
}

static void console_signals_release(void)
{
	signal(SIGWINCH, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	for (int i = 0; i < 2; i++)
		if (sig_pipe[i] >= 0) {
			close(sig_pipe[i]);
			sig_pipe[i] = -1;
		}
}

/* ---- rows ---- */

/* A change detector over the rows' texts, not a cryptographic hash: eight
 * bytes at a time, so 100,000 rows hash in a few milliseconds. */
static uint64_t hash_add(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h ^ n;
}

void console_rows_clear(struct console_rows *r)
{
	struct console_row *cur = console_rows_current(r);
	free(r->sel_id);
	r->sel_id = cur && cur->id ? xstrdup(cur->id) : NULL;
	for (size_t i = 0; i < r->nkeep; i++)
		free(r->keep[i]);
	r->nkeep = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].marked && r->v[i].id) {
			r->keep = xrealloc(r->keep, (r->nkeep + 1) * sizeof(*r->keep));
			r->keep[r->nkeep++] = xstrdup(r->v[i].id);
		}
		free(r->v[i].text);
		free(r->v[i].id);
	}
	r->n = 0;
	r->keep_pending = r->nkeep > 0;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Marks the rows whose ids were marked before the last clear: one pass
 * with a hash set, as 100,000 marked dead letters must not cost n^2. */
static void console_rows_apply_keep(struct console_rows *r)
{
	r->keep_pending = false;
	if (!r->nkeep)
		return;
	size_t ns = 16;
	while (ns < r->nkeep * 2)
		ns *= 2;
	size_t *slot = xcalloc(ns, sizeof(*slot));
	for (size_t k = 0; k < r->nkeep; k++) {
		size_t i = str_hash(r->keep[k]) & (ns - 1);
		while (slot[i])
			i = (i + 1) & (ns - 1);
		slot[i] = k + 1;
	}
	for (size_t j = 0; j < r->n; j++) {
		const char *id = r->v[j].id;
		if (!id)
			continue;
		for (size_t i = str_hash(id) & (ns - 1); slot[i]; i = (i + 1) & (ns - 1))
			if (!strcmp(r->keep[slot[i] - 1], id)) {
				r->v[j].marked = true;
				break;
			}
	}
	free(slot);
}

static void console_rows_release(struct console_rows *r)
{
	console_rows_clear(r);
	console_rows_clear(r);
	free(r->v);
	free(r->vis);
	free(r->keep);
	free(r->sel_id);
	memset(r, 0, sizeof(*r));
}

void console_rows_add(struct console_rows *r, const char *id, enum theme_slot slot,
		      const char *fmt, ...)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	va_list ap;
	va_start(ap, fmt);
	char *raw = xvasprintf(fmt, ap);
	va_end(ap);
	struct console_row *row = &r->v[r->n++];
	row->text = util_sanitize(raw, strlen(raw), false);
	free(raw);
	row->id = id ? xstrdup(id) : NULL;
	row->slot = slot;
	row->marked = false;
}

struct console_row *console_rows_current(struct console_rows *r)
{
	if (r->sel >= r->nvis || !r->vis)
		return NULL;
	size_t i = r->vis[r->sel];
	return i < r->n ? &r->v[i] : NULL;
}

static bool console_row_passes(const struct console *c, const struct console_row *row)
{
	if (!c->re_set)
		return true;
	bool m = c->re_literal ? strcasestr(row->text, c->re_literal) != NULL :
		 regexec(&c->re, row->text, 0, NULL, 0) == 0;
	return c->re_invert ? !m : m;
}

/* Moves the cursor off a heading row, in direction dir (1 or -1) first. */
static void console_rows_skip_headings(struct console_rows *r, int dir)
{
	for (int pass = 0; pass < 2; pass++, dir = -dir) {
		size_t k = r->sel;
		while (k < r->nvis && !r->v[r->vis[k]].id) {
			if (dir < 0 && k == 0) {
				k = r->nvis;
				break;
			}
			k = dir > 0 ? k + 1 : k - 1;
		}
		if (k < r->nvis) {
			r->sel = k;
			return;
		}
	}
}

unsigned console_rows_done(struct console *c, struct console_rows *r)
{
	if (r->keep_pending)
		console_rows_apply_keep(r);
	free(r->vis);
	r->vis = xcalloc(r->n ? r->n : 1, sizeof(*r->vis));
	r->nvis = 0;
	uint64_t h = 14695981039346656037ULL;
	for (size_t i = 0; i < r->n; i++) {
		if (!console_row_passes(c, &r->v[i]))
			continue;
		r->vis[r->nvis++] = i;
		h = hash_add(h, r->v[i].text, strlen(r->v[i].text) + 1);
		h = hash_add(h, &r->v[i].marked, sizeof(r->v[i].marked));
		h = hash_add(h, &r->v[i].slot, sizeof(r->v[i].slot));
	}
	if (r->sel_id)
		for (size_t k = 0; k < r->nvis; k++) {
			const char *id = r->v[r->vis[k]].id;
			if (id && !strcmp(id, r->sel_id)) {
				r->sel = k;
				break;
			}
		}
	if (r->sel >= r->nvis)
		r->sel = r->nvis ? r->nvis - 1 : 0;
	console_rows_skip_headings(r, 1);
	h = hash_add(h, &r->sel, sizeof(r->sel));
	if (h == r->hash)
		return 0;
	r->hash = h;
	return CONSOLE_REDRAW;
}

/* ---- drawing ---- */

void console_utf8_next(const char *s, size_t *i, wchar_t *out)
{
	const unsigned char *p = (const unsigned char *)s + *i;
	unsigned c = p[0];
	int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!n) {
		(*i)++;
		*out = L'?';
		return;
	}
	unsigned v = n == 1 ? c : c & (0xffu >> (n + 1));
	for (int k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80) {
			*i += (size_t)k;
			*out = L'?';
			return;
		}
		v = (v << 6) | (p[k] & 0x3f);
	}
	*i += (size_t)n;
	*out = (wchar_t)v;
}

int console_char_width(wchar_t w)
{
	if (w < 0x20 || w == 0x7f)
		return 1; /* shown as '?' */
	int cw = MB_CUR_MAX > 1 ? wcwidth(w) : (w < 0x7f ? 1 : -1);
	return cw < 0 ? 1 : cw;
}

void console_put(struct console *c, int y, int x, int width, enum theme_slot slot,
		 const char *s, bool pad)
{
	if (width <= 0 || y < 0 || y >= LINES)
		return;
	int attr = theme_attr(&c->theme, slot);
	attrset(attr);
	move(y, x);
	int col = 0;
	bool wide = MB_CUR_MAX > 1;
	for (size_t i = 0; s && s[i] && col < width;) {
		wchar_t w;
		console_utf8_next(s, &i, &w);
		int cw = wide ? wcwidth(w) : (w < 0x7f ? 1 : -1);
		if (w < 0x20 || w == 0x7f)
			cw = -1;
		if (cw < 0) {
			w = L'?';
			cw = 1;
		}
		if (col + cw > width)
			break;
		addnwstr(&w, 1);
		col += cw;
	}
	if (pad)
		for (; col < width; col++)
			addch(' ');
	attrset(A_NORMAL);
}

void console_rows_draw(struct console *c, struct console_rows *r, int y0, int y1,
		       const char *hdr)
{
	if (hdr) {
		console_put(c, y0, 0, COLS, SLOT_HEADER, hdr, true);
		y0++;
	}
	int h = y1 - y0;
	if (h <= 0)
		return;
	c->rows_y0 = y0;
	if (r->sel < r->top)
		r->top = r->sel;
	if (r->sel >= r->top + (size_t)h)
		r->top = r->sel - (size_t)h + 1;
	if (r->top > r->nvis)
		r->top = 0;
	for (int y = 0; y < h; y++) {
		size_t k = r->top + (size_t)y;
		if (k >= r->nvis)
			break;
		const struct console_row *row = &r->v[r->vis[k]];
		enum theme_slot s = k == r->sel ? SLOT_SELECTED : row->marked ? SLOT_MARKED : row->slot;
		console_put(c, y0 + y, 0, 1, s, row->marked ? "*" : " ", false);
		console_put(c, y0 + y, 1, COLS - 1, s, row->text, true);
	}
	if (!r->nvis)
		console_put(c, y0, 1, COLS - 1, SLOT_DIM, c->re_set ? "(nothing matches the filter)" :
			    "(nothing here yet)", false);
}

void console_age(int64_t ns, char *buf, size_t size)
{
	int64_t s = ns / 1000000000LL;
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, size, "%lldm", (long long)(s / 60));
	else if (s < 172800)
		snprintf(buf, size, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, size, "%lldd", (long long)(s / 86400));
}

cJSON *console_load_json(const char *path)
{
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	if (util_read_file(path, 64u << 20, &buf, &len, &err) < 0) {
		free(err);
		return NULL;
	}
	cJSON *j = cJSON_ParseWithLength(buf, len);
	free(buf);
	return j;
}

void console_journal(struct console *c, const char *action, const cJSON *ids, const char *result)
{
	console_journal_with(c, action, ids, result, NULL, NULL);
}

void console_journal_with(struct console *c, const char *action, const cJSON *ids,
			  const char *result, const char *key, const cJSON *extra)
{
	char *dir = xasprintf("%s/journal", c->cli->data_dir);
	char *err = NULL;
	if (util_mkdirs(dir, &err) < 0) {
		console_status(c, true, "journal: %s", err);
		free(err);
		free(dir);
		return;
	}
	char *path = xasprintf("%s/actions.jsonl", dir);
	cJSON *o = cJSON_CreateObject();
	char ts[64];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	cJSON_AddStringToObject(o, "ts", ts);
	const char *user = getenv("USER");
	cJSON_AddStringToObject(o, "user", user && *user ? user : "unknown");
	cJSON_AddStringToObject(o, "action", action);
	cJSON_AddItemToObject(o, "ids", ids ? cJSON_Duplicate(ids, 1) : cJSON_CreateArray());
	cJSON_AddStringToObject(o, "result", result);
	if (key && extra)
		cJSON_AddItemToObject(o, key, cJSON_Duplicate(extra, 1));
	cJSON_AddStringToObject(o, "mode", c->opts.attach ? "attach" : "embedded");
	char *line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0 && line) {
		struct sbuf b;
		sbuf_init(&b);
		sbuf_addstr(&b, line);
		sbuf_addch(&b, '\n');
		if (write(fd, b.data, b.len) != (ssize_t)b.len)
			console_status(c, true, "journal: cannot write %s", path);
		sbuf_release(&b);
	} else {
		console_status(c, true, "journal: cannot open %s: %s", path, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	free(line);
	free(path);
	free(dir);
}

static void console_draw_title(struct console *c)
{
	move(0, 0);
	console_put(c, 0, 0, COLS, SLOT_TITLE, " madf ", true);
	int x = 6;
	for (int v = 0; v < VIEW_COUNT; v++) {
		char t[32];
		snprintf(t, sizeof(t), " %d %s ", v + 1, console_view_titles[v]);
		int w = (int)strlen(t);
		console_put(c, 0, x, w, v == (int)c->view ? SLOT_TAB : SLOT_TITLE, t, false);
		x += w;
	}
	char right[96];
	snprintf(right, sizeof(right), "%s%s%s ", c->opts.attach ? "attach" : "embedded",
		 c->opts.read_only ? " read-only" : "", c->paused ? " PAUSED" : "");
	int w = (int)strlen(right);
	if (x + w < COLS)
		console_put(c, 0, COLS - w, w, SLOT_TITLE, right, false);
}

static void console_draw(struct console *c)
{
	c->frames++;
	erase();
	if (COLS < CONSOLE_MIN_COLS || LINES < CONSOLE_MIN_ROWS) {
		char buf[128];
		snprintf(buf, sizeof(buf), "terminal too small: %dx%d (madf needs %dx%d)", COLS, LINES,
			 CONSOLE_MIN_COLS, CONSOLE_MIN_ROWS);
		console_put(c, LINES / 2, 0, COLS, SLOT_ERROR, buf, false);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	console_draw_title(c);
	int y0 = 1, y1 = LINES - 2; /* the key-hint line and the bottom line below */
	if (c->mode == MODE_HELP) {
		console_draw_help(c, y0, y1);
	} else if (c->mode == MODE_READER) {
		console_reader_draw(c, y0, y1);
	} else {
		switch (c->view) {
		case VIEW_OVERVIEW: view_overview_draw(c, y0, y1); break;
		case VIEW_TASKS: view_tasks_draw(c, y0, y1); break;
		case VIEW_QUEUES: view_queues_draw(c, y0, y1); break;
		case VIEW_LOGS: view_logs_draw(c, y0, y1); break;
		case VIEW_REPORTS: view_reports_draw(c, y0, y1); break;
		case VIEW_TOOLS: view_tools_draw(c, y0, y1); break;
		case VIEW_COUNT: break;
		}
	}
	console_draw_bottom(c);
	curs_set(c->mode == MODE_COMMAND || c->mode == MODE_FILTER ? 1 : 0);
	wnoutrefresh(stdscr);
	doupdate();
}

static unsigned console_reload(struct console *c)
{
	c->last_reload_ns = util_mono_ns();
	unsigned f = view_overview_refresh(c); /* the meters feed every view */
	switch (c->view) {
	case VIEW_OVERVIEW: break;
	case VIEW_TASKS: f |= view_tasks_refresh(c); break;
	case VIEW_QUEUES: f |= view_queues_refresh(c); break;
	case VIEW_LOGS: f |= view_logs_refresh(c); break;
	case VIEW_REPORTS: f |= view_reports_refresh(c); break;
	case VIEW_TOOLS: f |= view_tools_refresh(c); break;
	case VIEW_COUNT: break;
	}
	return f;
}

/* ---- keys ---- */

static void console_set_view(struct console *c, enum console_view v)
{
	c->view = v;
	c->rows[v].hash = 0;
}

static void console_filter_set(struct console *c, const char *text)
{
	if (c->re_set)
		regfree(&c->re);
	c->re_set = false;
	free(c->re_literal);
	c->re_literal = NULL;
	util_strlcpy(c->filter, text, sizeof(c->filter));
	if (!*text)
		return;
	c->re_invert = text[0] == '!';
	const char *pat = text + (c->re_invert ? 1 : 0);
	int rc = regcomp(&c->re, pat, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc) {
		char msg[128];
		regerror(rc, &c->re, msg, sizeof(msg));
		regfree(&c->re);
		console_status(c, true, "filter \"%s\": %s", pat, msg);
		c->filter[0] = 0;
		return;
	}
	c->re_set = true;
	/* A pattern without regex syntax matches as a plain substring (case
	 * ignored, as the regex would): far faster over 100,000 rows. */
	bool ascii = true;
	for (const char *p = pat; *p; p++)
		ascii = ascii && !((unsigned char)*p & 0x80);
	if (*pat && ascii && !strpbrk(pat, ".[]()*+?{}|^$\\"))
		c->re_literal = xstrdup(pat);
}

static unsigned console_refuse(struct console *c, enum console_op op);

/* Why a queue action cannot run on what the queues view shows, or NULL. */
static const char *console_queue_why(struct console *c, enum console_op op)
{
	if (c->view != VIEW_QUEUES)
		return "only in the queues view (:dlq)";
	if (c->qkind == QUEUE_PROCESSED)
		return "processed messages are history: read-only here";
	if (c->qkind == QUEUE_TRASH)
		return op == OP_RETRY ? NULL :
		       op == OP_DELETE ? "already in the trash (madf gc purges it after 30 days); "
					 "R restores" : "in the trash: R restores it first";
	if (c->qkind == QUEUE_PROCESSING)
		return "claimed messages cannot be changed; wait for the lease or kill in the inbox";
	if ((op == OP_RETRY || op == OP_RETRY_TO || op == OP_EDIT) && c->qkind != QUEUE_DEAD)
		return op == OP_EDIT ? "E edits dead letters (:dlq)" :
		       op == OP_RETRY ? "R retries dead letters (:dlq)" : "T retries dead letters (:dlq)";
	if (op == OP_KILL && c->qkind == QUEUE_DEAD)
		return "already dead letters (D deletes, R retries)";
	return NULL;
}

/* An agent neither configured nor ever seen on the bus is refused (a typo
 * would make an inbox no agent reads) unless the command ends in '!'; true
 * when refused, the status line naming the known agents. */
static bool console_unknown_agent(struct console *c, const char *cmd, const char *agent)
{
	char *known = NULL;
	if (known_agent(c->cli->data_dir, agent, false, &known))
		return false;
	console_status(c, true, "%s: no agent \"%s\" (known: %s); :%s! %s if it is new", cmd, agent,
		       known ? known : "none", cmd, agent);
	free(known);
	return true;
}

/* :retry-to AGENT: asks to confirm a retry of the marked dead letters (or
 * the current one) to AGENT's inbox. */
static unsigned console_retry_to(struct console *c, const char *agent, bool is_new)
{
	if (c->opts.read_only)
		return console_refuse(c, OP_RETRY_TO);
	const char *why = console_queue_why(c, OP_RETRY_TO);
	if (why) {
		console_status(c, true, "retry-to: %s", why);
		return CONSOLE_REDRAW;
	}
	if (!*agent || !util_valid_agent_name(agent) || !strcmp(agent, "broadcast")) {
		console_status(c, true, *agent ? "retry-to: invalid agent name \"%s\"" :
			       "%s:retry-to needs an agent name (Tab completes)", agent);
		return CONSOLE_REDRAW;
	}
	if (!is_new && console_unknown_agent(c, "retry-to", agent))
		return CONSOLE_REDRAW;
	size_t n = view_queues_count(c);
	if (!n) {
		console_status(c, true, "no message selected");
		return CONSOLE_REDRAW;
	}
	util_strlcpy(c->retry_to, agent, sizeof(c->retry_to));
	c->pending = OP_RETRY_TO;
	c->pending_n = n;
	c->mode = MODE_CONFIRM;
	return CONSOLE_REDRAW;
}

/* :since 10m|2h|1d|90s|all: the logs' time window. */
static unsigned console_since(struct console *c, const char *arg)
{
	char unit = 0, extra = 0;
	long long v = 0;
	if (!strcmp(arg, "all") || !*arg) {
		c->log_since_s = 0;
		c->log_since[0] = 0;
		console_status(c, false, "logs: every line of the day");
	} else if (sscanf(arg, "%lld%c%c", &v, &unit, &extra) == 2 && v > 0 && v < 100000 &&
		   strchr("smhd", unit)) {
		c->log_since_s = v * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400);
		util_strlcpy(c->log_since, arg, sizeof(c->log_since));
		console_status(c, false, "logs: the last %s", arg);
	} else {
		console_status(c, true, ":since takes a duration like 90s, 10m, 2h, 1d, or all");
		return CONSOLE_REDRAW;
	}
	free(c->log_sig);
	c->log_sig = NULL;
	console_set_view(c, VIEW_LOGS);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

static unsigned console_run_command(struct console *c, const char *line)
{
	char cmd[64] = "", arg[192] = "";
	sscanf(line, " %63s %191s", cmd, arg);
	c->status[0] = 0;
	/* :inbox! NAME, :retry-to! NAME: the agent is new, open or send anyway */
	size_t clen = strlen(cmd);
	bool is_new = clen > 1 && cmd[clen - 1] == '!';
	if (is_new)
		cmd[clen - 1] = 0;
	if (!strcmp(cmd, "q") || !strcmp(cmd, "quit"))
		return console_quit_ask(c);
	if (!strcmp(cmd, "messages"))
		return console_messages_open(c);
	if (!strcmp(cmd, "inbox") || !strcmp(cmd, "logs") || !strcmp(cmd, "agent") ||
	    !strcmp(cmd, "processing")) {
		if (*arg && !util_valid_agent_name(arg)) {
			console_status(c, true, "invalid agent name \"%s\"", arg);
			return CONSOLE_REDRAW;
		}
		if (!*arg && strcmp(cmd, "processing")) {
			console_status(c, true, ":%s needs an agent name (Tab completes)", cmd);
			return CONSOLE_REDRAW;
		}
		if (*arg && !is_new && (!strcmp(cmd, "inbox") || !strcmp(cmd, "processing")) &&
		    console_unknown_agent(c, cmd, arg))
			return CONSOLE_REDRAW;
		if (!strcmp(cmd, "logs")) {
			util_strlcpy(c->log_agent, arg, sizeof(c->log_agent));
			free(c->log_sig);
			c->log_sig = NULL;
			console_set_view(c, VIEW_LOGS);
		} else if (!strcmp(cmd, "agent")) {
			console_set_view(c, VIEW_OVERVIEW);
			free(c->rows[VIEW_OVERVIEW].sel_id);
			c->rows[VIEW_OVERVIEW].sel_id = NULL;
			view_overview_refresh(c);
			struct console_rows *r = &c->rows[VIEW_OVERVIEW];
			for (size_t k = 0; k < r->nvis; k++)
				if (r->v[r->vis[k]].id && !strcmp(r->v[r->vis[k]].id, arg))
					r->sel = k;
		} else {
			c->qkind = !strcmp(cmd, "inbox") ? QUEUE_INBOX : QUEUE_PROCESSING;
			util_strlcpy(c->qagent, arg, sizeof(c->qagent));
			console_set_view(c, VIEW_QUEUES);
		}
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	}
	if (!strcmp(cmd, "dlq") || !strcmp(cmd, "processed") || !strcmp(cmd, "trash")) {
		c->qkind = !strcmp(cmd, "dlq") ? QUEUE_DEAD :
			   !strcmp(cmd, "trash") ? QUEUE_TRASH : QUEUE_PROCESSED;
		console_set_view(c, VIEW_QUEUES);
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	}
	if (!strcmp(cmd, "retry-to"))
		return console_retry_to(c, arg, is_new);
	if (!strcmp(cmd, "assign")) {
		if (c->opts.read_only)
			return console_refuse(c, OP_TASK_ASSIGN);
		char kind[16] = "", pair[16] = "", agent[MSG_AGENT_MAX + 1] = "";
		if (sscanf(line, " %*s %15s %15s %64s", kind, pair, agent) < 2) {
			console_status(c, true, "assign: usage :assign market|news PAIR [AGENT]");
			return CONSOLE_REDRAW;
		}
		console_set_view(c, VIEW_TASKS);
		return view_tasks_assign(c, kind, pair, agent);
	}
	if (!strcmp(cmd, "since"))
		return console_since(c, arg);
	static const struct {
		const char *name;
		enum console_view v;
	} views[] = { { "tasks", VIEW_TASKS }, { "report", VIEW_REPORTS }, { "tools", VIEW_TOOLS },
		      { "overview", VIEW_OVERVIEW } };
	for (size_t i = 0; i < ARRAY_SIZE(views); i++)
		if (!strcmp(cmd, views[i].name)) {
			console_set_view(c, views[i].v);
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
	if (!strcmp(cmd, "help")) {
		c->mode = MODE_HELP;
		c->help_top = 0;
		return CONSOLE_REDRAW;
	}
	if (!strcmp(cmd, "theme")) {
		struct theme t;
		char *err = NULL;
		if (!*arg || theme_load(arg, &t, &err) < 0) {
			console_status(c, true, "%s", err ? err : ":theme needs a name (Tab completes)");
			free(err);
			return CONSOLE_REDRAW;
		}
		if (getenv("NO_COLOR"))
			t.mono = true;
		c->theme = t;
		theme_apply(&c->theme);
		console_status(c, false, "theme %s", arg);
		for (int v = 0; v < VIEW_COUNT; v++)
			c->rows[v].hash = 0;
		return CONSOLE_REDRAW;
	}
	if (*cmd)
		console_status(c, true, "unknown command \":%s\" (:help lists them)", cmd);
	return CONSOLE_REDRAW;
}

static unsigned console_key_line(struct console *c, int ch)
{
	if (ch != '\t')
		console_complete_reset(c);
	if (ch == 27) {
		c->mode = MODE_NORMAL;
		return CONSOLE_REDRAW;
	}
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		enum console_mode m = c->mode;
		c->mode = MODE_NORMAL;
		if (m == MODE_FILTER) {
			console_filter_set(c, c->line);
			for (int v = 0; v < VIEW_COUNT; v++)
				c->rows[v].hash = 0;
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		char line[256];
		util_strlcpy(line, c->line, sizeof(line));
		return console_run_command(c, line);
	}
	if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (c->line_len)
			c->line[--c->line_len] = 0;
		else
			c->mode = MODE_NORMAL;
		return CONSOLE_REDRAW;
	}
	if (ch == '\t' && c->mode == MODE_COMMAND) {
		console_complete(c);
		return CONSOLE_REDRAW;
	}
	if (ch >= 32 && ch < 127 && c->line_len + 1 < sizeof(c->line)) {
		c->line[c->line_len++] = (char)ch;
		c->line[c->line_len] = 0;
	}
	return CONSOLE_REDRAW;
}

static unsigned console_move(struct console *c, enum console_op op)
{
	struct console_rows *r = &c->rows[c->view];
	size_t page = LINES > 6 ? (size_t)LINES / 2 : 1;
	switch (op) {
	case OP_UP: if (r->sel) r->sel--; break;
	case OP_DOWN: if (r->sel + 1 < r->nvis) r->sel++; break;
	case OP_PAGE_UP: r->sel = r->sel > page ? r->sel - page : 0; break;
	case OP_PAGE_DOWN: r->sel = r->sel + page < r->nvis ? r->sel + page : (r->nvis ? r->nvis - 1 : 0); break;
	case OP_HOME: r->sel = 0; break;
	case OP_END: r->sel = r->nvis ? r->nvis - 1 : 0; break;
	default: break;
	}
	console_rows_skip_headings(r, op == OP_UP || op == OP_PAGE_UP || op == OP_END ? -1 : 1);
	if (r->sel == 0 && r->top)
		r->top = 0;
	if (c->view == VIEW_LOGS)
		c->log_follow = r->sel + 1 >= r->nvis;
	struct console_row *cur = console_rows_current(r);
	free(r->sel_id);
	r->sel_id = cur && cur->id ? xstrdup(cur->id) : NULL;
	return CONSOLE_REDRAW;
}

static unsigned console_refuse(struct console *c, enum console_op op)
{
	console_status(c, true, "read-only: %s refused (started with --read-only)", keys_op_name(op));
	console_journal(c, keys_op_name(op), NULL, "refused: read-only");
	return CONSOLE_REDRAW;
}

static unsigned console_op(struct console *c, const struct key_binding *k)
{
	struct console_rows *r = &c->rows[c->view];
	switch (k->op) {
	case OP_QUIT:
		return console_quit_ask(c);
	case OP_HELP:
		c->mode = MODE_HELP;
		c->help_top = 0;
		return CONSOLE_REDRAW;
	case OP_VIEW_NEXT:
	case OP_VIEW_PREV:
		console_set_view(c, (enum console_view)((c->view + (k->op == OP_VIEW_NEXT ? 1 : VIEW_COUNT - 1)) % VIEW_COUNT));
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_VIEW_1: case OP_VIEW_2: case OP_VIEW_3:
	case OP_VIEW_4: case OP_VIEW_5: case OP_VIEW_6:
		console_set_view(c, (enum console_view)(k->op - OP_VIEW_1));
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_UP: case OP_DOWN: case OP_PAGE_UP: case OP_PAGE_DOWN: case OP_HOME: case OP_END:
		return console_move(c, k->op);
	case OP_OPEN: {
		struct console_row *cur = console_rows_current(r);
		if (!cur || !cur->id)
			return 0;
		if (c->view == VIEW_REPORTS)
			return view_reports_open(c);
		if (c->view == VIEW_LOGS)
			return view_logs_open(c);
		if (c->view == VIEW_OVERVIEW) {
			c->qkind = QUEUE_INBOX;
			util_strlcpy(c->qagent, cur->id, sizeof(c->qagent));
			console_set_view(c, VIEW_QUEUES);
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		if (c->view != VIEW_QUEUES)
			return console_read_row(c);
		return 0;
	}
	case OP_BACK:
		c->status[0] = 0;
		if (c->view == VIEW_REPORTS && c->report_open[0])
			return view_reports_back(c);
		if (c->view == VIEW_LOGS && c->log_open)
			return view_logs_back(c);
		if (c->re_set || c->filter[0]) {
			console_filter_set(c, "");
			for (int v = 0; v < VIEW_COUNT; v++)
				c->rows[v].hash = 0;
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		return CONSOLE_REDRAW;
	case OP_FILTER:
	case OP_COMMAND:
		c->mode = k->op == OP_FILTER ? MODE_FILTER : MODE_COMMAND;
		c->line_len = util_strlcpy(c->line, k->op == OP_FILTER ? c->filter : "", sizeof(c->line));
		c->status[0] = 0;
		return CONSOLE_REDRAW;
	case OP_PAUSE:
		c->paused = !c->paused;
		console_status(c, false, "refresh %s", c->paused ? "paused (Z resumes)" : "resumed");
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_MARK: {
		struct console_row *cur = console_rows_current(r);
		if (cur && cur->id)
			cur->marked = !cur->marked;
		/* down to the next message, the selection following it (not
		 * the row number) across refreshes */
		console_move(c, OP_DOWN);
		console_rows_done(c, r);
		return CONSOLE_REDRAW;
	}
	case OP_MARK_ALL: {
		bool any_unmarked = false;
		for (size_t i = 0; i < r->nvis; i++)
			any_unmarked = any_unmarked || (r->v[r->vis[i]].id && !r->v[r->vis[i]].marked);
		for (size_t i = 0; i < r->nvis; i++)
			if (r->v[r->vis[i]].id)
				r->v[r->vis[i]].marked = any_unmarked;
		console_rows_done(c, r);
		return CONSOLE_REDRAW;
	}
	case OP_RETRY:
	case OP_DELETE:
	case OP_KILL:
	case OP_EDIT:
	case OP_RETRY_TO: {
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		const char *why = console_queue_why(c, k->op);
		if (why) {
			console_status(c, true, "%s: %s", keys_op_name(k->op), why);
			return CONSOLE_REDRAW;
		}
		size_t n = k->op == OP_EDIT ? (console_rows_current(r) && console_rows_current(r)->id) :
			   view_queues_count(c);
		if (!n) {
			console_status(c, true, "no message selected");
			return CONSOLE_REDRAW;
		}
		if (k->op == OP_RETRY_TO) {
			/* the agent on the command line, then the confirmation */
			c->mode = MODE_COMMAND;
			c->line_len = util_strlcpy(c->line, "retry-to ", sizeof(c->line));
			console_status(c, false, "retry %zu message%s to which inbox? (Tab completes)", n,
				       n == 1 ? "" : "s");
			return CONSOLE_REDRAW;
		}
		c->pending = k->op;
		c->pending_n = n;
		c->mode = MODE_CONFIRM;
		return CONSOLE_REDRAW;
	}
	case OP_TASK_CANCEL:
	case OP_TASK_APPROVE:
	case OP_TASK_SKIP_LLM:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		if (!console_rows_current(&c->rows[VIEW_TASKS])) {
			console_status(c, true, "no task selected");
			return CONSOLE_REDRAW;
		}
		if ((k->op == OP_TASK_APPROVE || k->op == OP_TASK_SKIP_LLM) &&
		    !view_tasks_awaits_approval(c))
			return CONSOLE_REDRAW;
		c->pending = k->op;
		c->pending_n = 1;
		c->mode = MODE_CONFIRM;
		return CONSOLE_REDRAW;
	case OP_TASK_ASSIGN:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		c->mode = MODE_COMMAND;
		c->line_len = util_strlcpy(c->line, "assign ", sizeof(c->line));
		console_status(c, false, "assign market|news PAIR [AGENT]");
		return CONSOLE_REDRAW;
	case OP_REASSIGN:
	case OP_TASK_RETRY:
	case OP_TASK_HOLD:
	case OP_TASK_RELEASE:
	case OP_TASK_PRIORITY:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		return view_tasks_act(c, k->op);
	case OP_EXPORT:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		return view_reports_export(c);
	case OP_LEVEL:
		c->log_level = (c->log_level + 1) % 4;
		console_status(c, false, "logs: level %s and above",
			       (const char *[]){ "debug", "info", "warn", "error" }[c->log_level]);
		free(c->log_sig);
		c->log_sig = NULL;
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_FOLLOW:
		c->log_follow = !c->log_follow;
		console_status(c, false, "follow %s", c->log_follow ? "on" : "off");
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_NONE:
	case OP_COUNT:
		break;
	}
	return 0;
}

/* Wheel scrolls, a click on a tab switches view, a click on a line
 * selects it. */
static unsigned console_mouse(struct console *c)
{
	MEVENT ev;
	if (getmouse(&ev) != OK || c->mode != MODE_NORMAL)
		return 0;
	static const struct key_binding up = { 0, KEYS_GLOBAL, OP_UP, "", false, NULL };
	static const struct key_binding down = { 0, KEYS_GLOBAL, OP_DOWN, "", false, NULL };
	if (ev.bstate & BUTTON4_PRESSED)
		return console_op(c, &up);
	if (ev.bstate & BUTTON5_PRESSED)
		return console_op(c, &down);
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return 0;
	if (ev.y == 0) {
		int x = 6;
		for (int v = 0; v < VIEW_COUNT; v++) {
			int w = (int)strlen(console_view_titles[v]) + 4;
			if (ev.x >= x && ev.x < x + w) {
				console_set_view(c, (enum console_view)v);
				return CONSOLE_RELOAD | CONSOLE_REDRAW;
			}
			x += w;
		}
		return 0;
	}
	struct console_rows *r = &c->rows[c->view];
	for (size_t k = r->top; k < r->nvis; k++) {
		int y = (int)(k - r->top) + c->rows_y0;
		if (y == ev.y && r->v[r->vis[k]].id) {
			r->sel = k;
			free(r->sel_id);
			r->sel_id = xstrdup(r->v[r->vis[k]].id);
			return CONSOLE_REDRAW;
		}
	}
	return 0;
}

static unsigned console_key(struct console *c, int ch)
{
	if (ch == KEY_RESIZE)
		return CONSOLE_REDRAW;
	if (ch == KEY_MOUSE)
		return console_mouse(c);
	if (ch == '\r' || ch == KEY_ENTER)
		ch = '\n';
	switch (c->mode) {
	case MODE_COMMAND:
	case MODE_FILTER:
		return console_key_line(c, ch);
	case MODE_READER:
		return console_reader_key(c, ch);
	case MODE_CONFIRM:
		c->mode = MODE_NORMAL;
		if (c->pending == OP_TASK_PRIORITY)
			return view_tasks_priority(c, ch) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		if (c->pending == OP_QUIT) {
			if (ch == 'y' || ch == 'Y') {
				c->quit = true;
				return CONSOLE_QUIT;
			}
			console_status(c, false, "not quitting");
			return CONSOLE_REDRAW;
		}
		if ((ch == 'y' || ch == 'Y') &&
		    (c->pending == OP_TASK_CANCEL || c->pending == OP_TASK_APPROVE ||
		     c->pending == OP_TASK_SKIP_LLM))
			return view_tasks_act(c, c->pending) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		if ((ch == 'y' || ch == 'Y') && c->pending == OP_EDIT)
			return view_queues_edit(c) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		if (ch == 'y' || ch == 'Y')
			return view_queues_act(c, c->pending) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		console_status(c, false, "cancelled");
		return CONSOLE_REDRAW;
	case MODE_HELP:
		if (ch == KEY_DOWN || ch == 'j')
			c->help_top++;
		else if ((ch == KEY_UP || ch == 'k') && c->help_top)
			c->help_top--;
		else if (ch == 27 || ch == '?' || ch == 'q' || ch == '\n')
			c->mode = MODE_NORMAL;
		return CONSOLE_REDRAW;
	case MODE_NORMAL:
		break;
	}
	const struct key_binding *k = keys_lookup(c->view, ch);
	if (!k) {
		char name[16];
		keys_name(ch, name, sizeof(name));
		console_status(c, true, "%s: no such key here (? shows the keys)", name);
		return CONSOLE_REDRAW;
	}
	if (k->op != OP_FILTER && k->op != OP_COMMAND)
		c->status[0] = c->status_error && k->op >= OP_UP && k->op <= OP_END ? c->status[0] : 0;
	return console_op(c, k);
}

/* ---- the reactor ---- */

static void console_resize(struct console *c)
{
	if (c->headless)
		return;
	struct winsize ws;
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* One wait: signals, bus events, the keyboard, the timer. */
static unsigned console_pump(struct console *c, int max_ms)
{
	struct pollfd p[4];
	int n = 0, ifd = -1, wfd = -1, mfd = c->mon ? bus_monitor_fd(c->mon) : -1;
	p[n++] = (struct pollfd){ .fd = c->sig_fd, .events = POLLIN };
	if (mfd >= 0)
		p[n++] = (struct pollfd){ .fd = mfd, .events = POLLIN };
	if (view_queues_fd() >= 0) {
		wfd = n;
		p[n++] = (struct pollfd){ .fd = view_queues_fd(), .events = POLLIN };
	}
	if (!c->headless) {
		ifd = n;
		p[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
	}
	int64_t now = util_mono_ns();
	int64_t wait = (c->next_tick_ns - now) / 1000000;
	if (wait < 0)
		wait = 0;
	if (max_ms >= 0 && wait > max_ms)
		wait = max_ms;
	unsigned f = 0;
	if (poll(p, (nfds_t)n, (int)wait) < 0 && errno != EINTR)
		return 0;
	if (p[0].revents & POLLIN) {
		unsigned char b[64];
		ssize_t k = read(c->sig_fd, b, sizeof(b));
		for (ssize_t i = 0; i < k; i++) {
			if (b[i] == SIGWINCH) {
				console_resize(c);
				f |= CONSOLE_REDRAW;
			} else if (b[i] == SIGINT || b[i] == SIGTERM) {
				c->quit = true;
				f |= CONSOLE_QUIT;
			}
			/* SIGCHLD only wakes the loop: every child has an owner
			 * that reaps it (the editor's wait, the MCP client, which
			 * reports how a crashed server ended). */
		}
	}
	if (mfd >= 0 && (p[1].revents & POLLIN) && bus_monitor_process(c->mon) > 0) {
		c->bus_gen++;
		/* coalesce bursts: at most one reload every 100 ms */
		int64_t soon = c->last_reload_ns + 100 * 1000000LL;
		if (!c->paused && soon < c->next_tick_ns)
			c->next_tick_ns = soon;
	}
	if (wfd >= 0 && (p[wfd].revents & POLLIN))
		f |= view_queues_wake(c);
	if (ifd >= 0 && (p[ifd].revents & POLLIN))
		f |= CONSOLE_REDRAW; /* keys drained by the loop */
	now = util_mono_ns();
	if (now >= c->next_tick_ns) {
		if (!c->paused)
			f |= CONSOLE_RELOAD;
		c->next_tick_ns = now + CONSOLE_TICK_MS * 1000000LL;
	}
	return f;
}

static void console_frame(struct console *c, unsigned f)
{
	f |= view_tasks_poll(c); /* answers to the task controls */
	if ((f & CONSOLE_RELOAD) && !c->paused)
		f |= console_reload(c);
	if (f & CONSOLE_REDRAW)
		console_draw(c);
}

static int console_loop(struct console *c)
{
	unsigned f = CONSOLE_RELOAD | CONSOLE_REDRAW;
	while (!c->quit) {
		console_frame(c, f);
		f = 0;
		int ch;
		timeout(0);
		while (!c->quit && (ch = getch()) != ERR)
			f |= console_key(c, ch);
		if (f || c->quit)
			continue;
		f = console_pump(c, -1);
	}
	return EXIT_OK;
}

/* ---- scripted mode ---- */

static char *console_screen_text(void)
{
	struct sbuf b;
	sbuf_init(&b);
	for (int y = 0; y < LINES; y++) {
		size_t start = b.len, keep = b.len;
		for (int x = 0; x < COLS; x++) {
			cchar_t cc;
			wchar_t wc[CCHARW_MAX + 1] = { 0 };
			attr_t a;
			short pair;
			if (mvwin_wch(stdscr, y, x, &cc) == ERR || getcchar(&cc, wc, &a, &pair, NULL) == ERR)
				continue;
			for (int i = 0; wc[i]; i++) {
				char mb[8];
				mbstate_t st = { 0 };
				size_t k = wcrtomb(mb, wc[i], &st);
				if (k == (size_t)-1) {
					mb[0] = '?';
					k = 1;
				}
				sbuf_add(&b, mb, k);
			}
			if (wc[0] && wc[0] != L' ')
				keep = b.len;
		}
		b.len = keep > start ? keep : start;
		b.data[b.len] = 0;
		sbuf_addch(&b, '\n');
	}
	return sbuf_detach(&b);
}

static int console_dump(struct console *c, const char *path)
{
	char *text = console_screen_text();
	char *err = NULL;
	int r = util_write_file_atomic(path, text, strlen(text), false, &err);
	if (r < 0) {
		fprintf(stderr, "madf: console: --dump-screen: %s\n", err);
		free(err);
	}
	free(text);
	(void)c;
	return r;
}

static int console_script(struct console *c, const char *path)
{
	char *buf = NULL, *err = NULL;
	size_t len;
	if (util_read_file(path, 1 << 20, &buf, &len, &err) < 0) {
		c->script_error = xasprintf("--script: %s", err);
		free(err);
		return -1;
	}
	double limit_s = getenv("MADF_SCRIPT_TIMEOUT") ? atof(getenv("MADF_SCRIPT_TIMEOUT")) : 10.0;
	console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
	int ln = 0, rc = 0;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line && !c->quit && !rc;
	     line = strtok_r(NULL, "\n", &save)) {
		ln++;
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = 0;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || (line[0] == '#' && line[1]))
			continue;
		if (!strncmp(line, "wait-for ", 9)) {
			const char *want = line + 9;
			int64_t end = util_mono_ns() + (int64_t)(limit_s * 1e9);
			for (;;) {
				console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
				char *text = console_screen_text();
				bool found = strstr(text, want) != NULL;
				free(text);
				if (found)
					break;
				if (util_mono_ns() > end) {
					c->script_error = xasprintf("%s:%d: wait-for \"%s\": not on the screen "
								    "after %.1fs", path, ln, want, limit_s);
					rc = -1;
					break;
				}
				console_frame(c, console_pump(c, 50));
			}
			continue;
		}
		if (!strncmp(line, "type ", 5)) {
			for (const char *p = line + 5; *p && !c->quit; p++)
				console_frame(c, console_key(c, (unsigned char)*p));
			continue;
		}
		int cols, rows;
		if (sscanf(line, "resize %d %d", &cols, &rows) == 2 && cols > 0 && rows > 0) {
			resizeterm(rows, cols);
			console_frame(c, CONSOLE_REDRAW);
			continue;
		}
		int key = keys_parse(line);
		if (key < 0) {
			c->script_error = xasprintf("%s:%d: unknown key \"%s\" (a character, <Enter>, "
						    "<Esc>, <Tab>, <Up>, <Down>, <Left>, <Right>, <Space>, "
						    "<BS>, <PgUp>, <PgDn>, <Home>, <End>, <C-x>; or wait-for "
						    "TEXT, type TEXT, resize COLS ROWS)", path, ln, line);
			rc = -1;
			break;
		}
		console_frame(c, console_key(c, key) | CONSOLE_RELOAD);
		console_frame(c, console_pump(c, 0));
	}
	free(buf);
	console_frame(c, CONSOLE_REDRAW);
	return rc;
}

/* ---- setup ---- */

static void console_release(struct console *c)
{
	view_queues_release(c);
	view_overview_release();
	for (int v = 0; v < VIEW_COUNT; v++)
		console_rows_release(&c->rows[v]);
	if (c->re_set)
		regfree(&c->re);
	free(c->re_literal);
	bus_stats_release(&c->stats);
	bus_monitor_free(&c->mon);
	free(c->detail);
	free(c->log_sig);
	free(c->report_sig);
	free(c->script_error);
	console_status_release(c);
}

static int console_usage(void)
{
	return cli_usage_fail(&cmd_console_entry, "console", "console");
}

/* A source as the status line names it: the file's name without its
 * directories ("csv:fred-daily-1971-2017.csv"), "simulated" for sim. */
static void console_source_label(const char *src, char *buf, size_t size)
{
	if (!src || !*src || !strcmp(src, "sim")) {
		snprintf(buf, size, "simulated");
		return;
	}
	const char *colon = strchr(src, ':');
	const char *slash = strrchr(src, '/');
	if (colon && slash && !data_source_is_live(src))
		snprintf(buf, size, "%.*s:%s", (int)(colon - src), src, slash + 1);
	else
		snprintf(buf, size, "%s", src);
}

/* Sends the weekly trigger for the request of the command line (--as-of,
 * --pairs, --fresh; now and the default pairs without them); sets
 * c->run_id and says which sources the agents really use. */
static void console_trigger(struct console *c, struct agent_env *env, struct wf_request *req)
{
	req->market_source = env->market_source;
	req->news_source = env->news_source;
	wf_run_id(req, c->run_id, sizeof(c->run_id));
	cJSON *prev = wf_load_run(c->cli->data_dir, c->run_id);
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(prev, "status"));
	const char *verb = prev ? "resumed" : "started";
	if (prev && req->fresh) { /* a new run beside the old one, as run weekly --fresh */
		size_t n = strlen(c->run_id);
		snprintf(c->run_id + n, sizeof(c->run_id) - n, "-%llx",
			 (unsigned long long)(util_now_ns() / 1000000) & 0xffffffffULL);
		verb = "started";
	} else if (st && !strcmp(st, "done")) {
		console_status(c, false, "the weekly run %s is done already (--fresh runs it again; "
			       "5 shows its report)", c->run_id);
		cJSON_Delete(prev);
		return;
	}
	cJSON_Delete(prev);
	struct msg *m = msg_new("operator", "product_manager", MSG_TASK_ASSIGNMENT,
				wf_trigger_content(req, c->run_id));
	char *err = NULL;
	if (m) {
		m->priority = PRIO_HIGH;
		m->correlation_id = xstrdup(c->run_id);
		if (bus_send(c->bus, m, &err) < 0) {
			console_status(c, true, "weekly trigger: %s", err);
			free(err);
		} else {
			char ms[256], ns[256], day[40];
			console_source_label(env->market_source, ms, sizeof(ms));
			console_source_label(env->news_source, ns, sizeof(ns));
			util_iso8601(req->as_of_ns, day, sizeof(day));
			day[10] = 0;
			struct sbuf pairs;
			sbuf_init(&pairs);
			for (size_t i = 0; i < req->npairs; i++)
				sbuf_addf(&pairs, "%s%s", i ? ", " : "", req->pairs[i]);
			console_status(c, false, "%s the weekly run %s as of %s for %s (market %s, "
				       "news %s)", verb, c->run_id, day, pairs.data ? pairs.data : "",
				       ms, ns);
			sbuf_release(&pairs);
			cJSON *ids = cJSON_CreateArray();
			cJSON_AddItemToArray(ids, cJSON_CreateString(m->id));
			console_journal(c, "start-run", ids, c->run_id);
			cJSON_Delete(ids);
		}
	}
	msg_free(&m);
}

static int console_curses_init(struct console *c, FILE **null_out, FILE **null_in)
{
	/* The terminal's character set for ncursesw (LC_CTYPE only: numbers
	 * keep the C locale, as JSON needs). */
	setlocale(LC_CTYPE, "");
	if (c->headless) {
		const char *cs = nl_langinfo(CODESET);
		if (!cs || strcmp(cs, "UTF-8"))
			setlocale(LC_CTYPE, "C.UTF-8");
		*null_out = fopen("/dev/null", "w");
		*null_in = fopen("/dev/null", "r");
		const char *term = getenv("TERM");
		if (!term || !*term || !strcmp(term, "dumb"))
			term = "xterm-256color";
		SCREEN *s = *null_out && *null_in ? newterm(term, *null_out, *null_in) : NULL;
		if (!s)
			s = *null_out && *null_in ? newterm("xterm-256color", *null_out, *null_in) : NULL;
		if (!s)
			return -1;
		set_term(s);
		console_screen = s;
		resizeterm(CONSOLE_SCRIPT_ROWS, CONSOLE_SCRIPT_COLS);
	} else {
		if (!initscr())
			return -1;
	}
	curses_up = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	if (has_colors()) {
		start_color();
		use_default_colors();
	}
	theme_apply(&c->theme);
	curs_set(0);
	if (!c->headless)
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	return 0;
}

static int console_main(struct console *cp, struct run_opts *ro);

static int cmd_console(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "console", &cmd_console_entry, 0 };
	struct console c = { .cli = cli, .log_follow = true, .log_level = 1, .sig_fd = -1 };
	struct run_opts ro;
	run_opts_init(&ro);
	const char *name, *val;
	char run_opt[64] = ""; /* a run option given (cli_next's name is reused) */
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			run_opts_release(&ro);
			return console_usage();
		}
		int k = run_option(&ro, "console", name, val);
		if (k < 0) {
			run_opts_release(&ro);
			return EXIT_USAGE;
		}
		if (k > 0) {
			util_strlcpy(run_opt, name, sizeof(run_opt));
			continue;
		}
		if (!strcmp(name, "--attach"))
			c.opts.attach = true;
		else if (!strcmp(name, "--read-only"))
			c.opts.read_only = true;
		else if (!strcmp(name, "--theme"))
			c.opts.theme = val;
		else if (!strcmp(name, "--script"))
			c.opts.script = val;
		else if (!strcmp(name, "--dump-screen"))
			c.opts.dump = val;
	}
	/* Read-only reads only: it starts no agent and no run (it attaches). */
	if (c.opts.read_only)
		c.opts.attach = true;
	if (r >= 0 && run_opt[0] && c.opts.attach) {
		run_opts_release(&ro);
		return cli_fail(EXIT_USAGE, "console", "%s is for the agents the console runs; "
				"%s runs none (drop one of them)", run_opt,
				c.opts.read_only ? "--read-only" : "--attach");
	}
	run_opts_finish(&ro);
	if (r < 0) {
		run_opts_release(&ro);
		return EXIT_USAGE;
	}
	if (c.opts.dump && !c.opts.script) {
		run_opts_release(&ro);
		return cli_fail(EXIT_USAGE, "console", "--dump-screen needs --script");
	}
	c.headless = c.opts.script != NULL;
	if (!c.headless && (!isatty(0) || !isatty(1))) {
		run_opts_release(&ro);
		return cli_fail(EXIT_USAGE, "console", "needs a terminal (or --script FILE)");
	}
	int rc = console_main(&c, &ro);
	run_opts_release(&ro);
	return rc;
}

/* The console's own options and every option of `madf run weekly`. */
static const struct cli_opt console_options[] = {
	{ .name = "--attach",
	  .help = "start no agents; watch the bus of the data directory" },
	{ .name = "--read-only", .help = "attach and refuse every action (journalled)" },
	{ .name = "--theme", .arg = "NAME",
	  .help = "a theme name or file (default: dark; mono under NO_COLOR)" },
	{ .name = "--script", .arg = "FILE",
	  .help = "run headless on a 120x40 screen, reading keys from FILE" },
	{ .name = "--dump-screen", .arg = "FILE",
	  .help = "with --script: write the final screen as text" },
	{ .group = run_weekly_options },
	{ 0 },
};

const struct cli_cmd cmd_console_entry = {
	.name = "console",
	.opts = console_options,
	.summary = "the operator console (the default on a terminal); embeds the agents and "
		   "starts the weekly run (as `run weekly` would) unless --attach; --read-only "
		   "attaches and changes nothing",
	.run = cmd_console,
};

/* The console set up from its options, run, taken down. */
static int console_main(struct console *cp, struct run_opts *ro)
{
	struct console c = *cp;
	struct cli *cli = c.cli;
	struct host_opts ho = ro->host;
	char *err = NULL;
	const char *tname = getenv("NO_COLOR") && !c.opts.theme ? "mono" : c.opts.theme ? c.opts.theme : "dark";
	if (theme_load(tname, &c.theme, &err) < 0) {
		if (c.opts.theme) {
			cli_fail(EXIT_USAGE, "console", "--theme: %s", err);
			free(err);
			return EXIT_USAGE;
		}
		free(err);
		theme_default(&c.theme);
	}
	if (getenv("NO_COLOR"))
		c.theme.mono = true;
	util_strlcpy(c.log_agent, "product_manager", sizeof(c.log_agent));
	if (cli_bus(cli, &c.bus) < 0)
		return EXIT_FAIL;
	if (bus_monitor_open(c.bus, &c.mon, &err) < 0) {
		free(err); /* no inotify: the timer refreshes */
		c.mon = NULL;
	}
	struct agent_env env;
	struct agent *agents[16] = { 0 };
	bool hosted = false;
	int saved_err = -1;
	if (!c.opts.attach) {
		if (host_setup(cli, &env, &ho) < 0) {
			host_teardown(&env);
			console_release(&c);
			return EXIT_FAIL;
		}
		/* the agents' own complaints go to a file, not over the screen */
		char *dir = xasprintf("%s", cli->log_dir);
		util_mkdirs(dir, NULL);
		char *path = xasprintf("%s/console-stderr.log", dir);
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			saved_err = dup(2);
			dup2(fd, 2);
			close(fd);
			crash_fd = saved_err;
		}
		free(path);
		free(dir);
	}
	if (console_signals_init() < 0) {
		console_release(&c);
		return cli_fail(EXIT_FAIL, "console", "pipe: %s", strerror(errno));
	}
	c.sig_fd = sig_pipe[0];
	if (!c.opts.attach) {
		if (host_start_agents(&env, agents) == 0) {
			hosted = true;
			c.embedded_agents = agent_nroles;
			console_trigger(&c, &env, &ro->req);
		} else {
			console_status(&c, true, "could not start the agents (see %s/console-stderr.log)",
				       cli->log_dir);
		}
	}
	FILE *nout = NULL, *nin = NULL;
	int rc = EXIT_OK;
	if (console_curses_init(&c, &nout, &nin) < 0) {
		rc = EXIT_FAIL;
	} else {
		c.next_tick_ns = util_mono_ns();
		if (c.headless) {
			if (console_script(&c, c.opts.script) < 0)
				rc = EXIT_FAIL;
			if (c.opts.dump && console_dump(&c, c.opts.dump) < 0)
				rc = EXIT_FAIL;
		} else {
			rc = console_loop(&c);
		}
		endwin();
		curses_up = 0;
		if (console_screen) {
			delscreen(console_screen);
			console_screen = NULL;
		}
	}
	if (hosted)
		host_stop_agents(&env, agents);
	if (!c.opts.attach)
		host_teardown(&env);
	if (saved_err >= 0) {
		dup2(saved_err, 2);
		close(saved_err);
		crash_fd = 2;
	}
	console_signals_release();
	if (rc != EXIT_OK && !c.script_error)
		cli_fail(rc, "console", "cannot set up the terminal (TERM=%s)",
			 getenv("TERM") ? getenv("TERM") : "");
	if (c.script_error)
		cli_fail(rc, "console", "%s", c.script_error);
	if (nout)
		fclose(nout);
	if (nin)
		fclose(nin);
	console_release(&c);
	return rc;
}

/* ---- benchmark hooks (madf bench console) ---- */

static FILE *bench_nout, *bench_nin;

struct console *console_bench_open(struct cli *cli)
{
	struct console *c = xcalloc(1, sizeof(*c));
	*c = (struct console){ .cli = cli, .log_follow = true, .log_level = 1, .sig_fd = -1,
			       .headless = true };
	c->opts.attach = true;
	theme_default(&c->theme);
	util_strlcpy(c->log_agent, "product_manager", sizeof(c->log_agent));
	char *err = NULL;
	if (cli_bus(cli, &c->bus) < 0) {
		free(c);
		return NULL;
	}
	if (bus_monitor_open(c->bus, &c->mon, &err) < 0) {
		free(err);
		c->mon = NULL;
	}
	if (console_signals_init() < 0 || console_curses_init(c, &bench_nout, &bench_nin) < 0) {
		console_bench_close(c);
		return NULL;
	}
	c->sig_fd = sig_pipe[0];
	c->next_tick_ns = util_mono_ns();
	console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
	return c;
}

void console_bench_key(struct console *c, int key)
{
	console_frame(c, console_key(c, key));
}

void console_bench_turn(struct console *c, int max_ms)
{
	console_frame(c, console_pump(c, max_ms));
}

void console_bench_close(struct console *c)
{
	if (!c)
		return;
	if (curses_up) {
		endwin();
		curses_up = 0;
	}
	if (console_screen) {
		delscreen(console_screen);
		console_screen = NULL;
	}
	console_signals_release();
	if (bench_nout)
		fclose(bench_nout);
	if (bench_nin)
		fclose(bench_nin);
	bench_nout = bench_nin = NULL;
	console_release(c);
	free(c);
}
