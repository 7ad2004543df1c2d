/* The operator console: the poll() reactor, keys, the command and filter
 * lines, the frame around the views. The views are tables of functions
 * (struct view_ops, tui/views.c); nothing here names one. */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "core/loop.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

#define CONSOLE_MIN_COLS 80
#define CONSOLE_MIN_ROWS 24
#define CONSOLE_TICK_MS 500

static void console_draw_title(struct console *c)
{
	move(0, 0);
	console_put(c, 0, 0, COLS, SLOT_TITLE, " madf ", true);
	int x = 6;
	for (size_t v = 0; v < console_nviews; v++) {
		char t[40];
		snprintf(t, sizeof(t), " %zu %s ", v + 1, c->views[v].ops->title);
		int w = (int)strlen(t);
		console_put(c, 0, x, w, v == c->view ? SLOT_TAB : SLOT_TITLE, t, false);
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
		struct view *v = console_view(c);
		v->ops->draw(c, v, y0, y1);
	}
	console_draw_bottom(c);
	curs_set(c->mode == MODE_COMMAND || c->mode == MODE_FILTER ? 1 : 0);
	wnoutrefresh(stdscr);
	doupdate();
}

/* The bus meters, which every view may use (the overview's, the queue
 * counts, the agents Tab completes). */
static void console_stats(struct console *c)
{
	bus_stats_release(&c->stats);
	memset(&c->stats, 0, sizeof(c->stats));
	if (c->mon) {
		bus_monitor_stats(c->mon, &c->stats);
	} else {
		char *err = NULL;
		if (bus_stats(c->bus, &c->stats, &err) < 0) {
			console_status(c, true, "bus: %s", err);
			free(err);
		}
	}
}

static unsigned console_reload(struct console *c)
{
	c->last_reload_ns = util_mono_ns();
	console_stats(c);
	unsigned f = 0;
	for (size_t i = 0; i < console_nviews; i++)
		f |= c->views[i].ops->load(c, &c->views[i], i == c->view);
	return f;
}

/* ---- keys ---- */

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

unsigned console_confirm(struct console *c, struct view *v, enum console_op op, bool any_key,
			 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *raw = xvasprintf(fmt, ap);
	va_end(ap);
	char *clean = util_sanitize(raw, strlen(raw), false);
	util_strlcpy(c->question, clean, sizeof(c->question));
	free(clean);
	free(raw);
	c->pending = op;
	c->pending_view = v;
	c->pending_any = any_key;
	c->mode = MODE_CONFIRM;
	return CONSOLE_REDRAW;
}

unsigned console_command_open(struct console *c, const char *text, const char *status)
{
	c->mode = MODE_COMMAND;
	c->line_len = util_strlcpy(c->line, text, sizeof(c->line));
	if (status)
		console_status(c, false, "%s", status);
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
			for (size_t v = 0; v < console_nviews; v++)
				c->views[v].rows.hash = 0;
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
	struct view *v = console_view(c);
	struct console_rows *r = &v->rows;
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
	if (v->ops->moved)
		v->ops->moved(c, v);
	struct console_row *cur = console_rows_current(r);
	free(r->sel_id);
	r->sel_id = cur && cur->id ? xstrdup(cur->id) : NULL;
	return CONSOLE_REDRAW;
}

unsigned console_refuse(struct console *c, enum console_op op)
{
	console_status(c, true, "read-only: %s refused (started with --read-only)", keys_op_name(op));
	console_journal(c, keys_op_name(op), NULL, "refused: read-only");
	return CONSOLE_REDRAW;
}

static void console_filter_forget(struct console *c)
{
	for (size_t v = 0; v < console_nviews; v++)
		c->views[v].rows.hash = 0;
}

/* The console's own keys (the global table). */
static unsigned console_op(struct console *c, const struct key_binding *k)
{
	struct view *v = console_view(c);
	struct console_rows *r = &v->rows;
	switch (k->op) {
	case OP_QUIT:
		return console_quit_ask(c);
	case OP_HELP:
		c->mode = MODE_HELP;
		c->help_top = 0;
		return CONSOLE_REDRAW;
	case OP_VIEW_NEXT:
	case OP_VIEW_PREV:
		console_show(c, &c->views[(c->view + (k->op == OP_VIEW_NEXT ? 1 : console_nviews - 1)) %
					  console_nviews]);
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_UP: case OP_DOWN: case OP_PAGE_UP: case OP_PAGE_DOWN: case OP_HOME: case OP_END:
		return console_move(c, k->op);
	case OP_OPEN: {
		struct console_row *cur = console_rows_current(r);
		if (!cur || !cur->id)
			return 0;
		unsigned f = v->ops->act ? v->ops->act(c, v, OP_OPEN, 0) : CONSOLE_PASS;
		return f & CONSOLE_PASS ? console_read_row(c, NULL) : f;
	}
	case OP_BACK: {
		c->status[0] = 0;
		unsigned f = v->ops->act ? v->ops->act(c, v, OP_BACK, 0) : CONSOLE_PASS;
		if (!(f & CONSOLE_PASS))
			return f;
		if (c->re_set || c->filter[0]) {
			console_filter_set(c, "");
			console_filter_forget(c);
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		return CONSOLE_REDRAW;
	}
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
	default:
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
	static const struct key_binding up = { 0, OP_UP, "", false, false, NULL };
	static const struct key_binding down = { 0, OP_DOWN, "", false, false, NULL };
	if (ev.bstate & BUTTON4_PRESSED)
		return console_op(c, &up);
	if (ev.bstate & BUTTON5_PRESSED)
		return console_op(c, &down);
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return 0;
	if (ev.y == 0) {
		int x = 6;
		for (size_t v = 0; v < console_nviews; v++) {
			int w = (int)strlen(c->views[v].ops->title) + 4;
			if (ev.x >= x && ev.x < x + w) {
				console_show(c, &c->views[v]);
				return CONSOLE_RELOAD | CONSOLE_REDRAW;
			}
			x += w;
		}
		return 0;
	}
	struct view *v = console_view(c);
	struct console_rows *r = &v->rows;
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

/* The answer to a question: y (or any key) to the view that asked. */
static unsigned console_answer(struct console *c, int ch)
{
	c->mode = MODE_NORMAL;
	bool yes = ch == 'y' || ch == 'Y';
	struct view *v = c->pending_view;
	if (!v && c->pending == OP_QUIT) {
		if (yes) {
			c->quit = true;
			return CONSOLE_QUIT;
		}
		console_status(c, false, "not quitting");
		return CONSOLE_REDRAW;
	}
	if (v && v->ops->act && (yes || c->pending_any))
		return v->ops->act(c, v, c->pending, ch) | CONSOLE_RELOAD | CONSOLE_REDRAW;
	console_status(c, false, "cancelled");
	return CONSOLE_REDRAW;
}

unsigned console_key(struct console *c, int ch)
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
		return console_answer(c, ch);
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
	if (ch >= '1' && ch <= '9' && (size_t)(ch - '1') < console_nviews) {
		c->status[0] = 0;
		console_show(c, &c->views[ch - '1']);
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	}
	struct view *v = console_view(c);
	const struct key_binding *k = keys_lookup(v->ops->keys, v->ops->nkeys, ch);
	if (!k) {
		char name[16];
		keys_name(ch, name, sizeof(name));
		console_status(c, true, "%s: no such key here (? shows the keys)", name);
		return CONSOLE_REDRAW;
	}
	if (k->op != OP_FILTER && k->op != OP_COMMAND)
		c->status[0] = c->status_error && k->op >= OP_UP && k->op <= OP_END ? c->status[0] : 0;
	bool own = k >= v->ops->keys && k < v->ops->keys + v->ops->nkeys;
	if (!own || k->op == OP_MARK || k->op == OP_MARK_ALL)
		return console_op(c, k);
	if (k->writes && c->opts.read_only)
		return console_refuse(c, k->op);
	return v->ops->act ? v->ops->act(c, v, k->op, 0) : 0;
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

/* The loop's callbacks (core/loop.h) add what they saw to c->turn. */

/* The signal self-pipe. */
static void console_on_signal(struct loop *l, int fd, int mask, void *ctx)
{
	(void)l, (void)mask;
	struct console *c = ctx;
	unsigned char b[64];
	ssize_t k = read(fd, b, sizeof(b));
	for (ssize_t i = 0; i < k; i++) {
		if (b[i] == SIGWINCH) {
			console_resize(c);
			c->turn |= CONSOLE_REDRAW;
		} else if (b[i] == SIGINT || b[i] == SIGTERM) {
			c->quit = true;
			c->turn |= CONSOLE_QUIT;
		}
		/* SIGCHLD only wakes the loop: every child has an owner that
		 * reaps it (the editor's wait, the MCP client, which reports
		 * how a crashed server ended). */
	}
}

/* The bus monitor's inotify descriptor: a change brings the next reload
 * forward, bursts coalesced to at most one reload every 100 ms. */
static void console_on_bus(struct loop *l, int fd, int mask, void *ctx)
{
	(void)l, (void)fd, (void)mask;
	struct console *c = ctx;
	if (bus_monitor_process(c->mon) <= 0)
		return;
	c->bus_gen++;
	int64_t soon = c->last_reload_ns + 100 * 1000000LL;
	if (!c->paused && soon < c->next_tick_ns)
		c->next_tick_ns = soon; /* the timer follows (console_before_sleep) */
}

/* The keyboard: the keys are drained by the loop (getch). */
static void console_on_keys(struct loop *l, int fd, int mask, void *ctx)
{
	(void)l, (void)fd, (void)mask;
	struct console *c = ctx;
	c->turn |= CONSOLE_REDRAW;
}

/* A view's descriptor. */
static void console_on_view(struct loop *l, int fd, int mask, void *ctx)
{
	(void)l, (void)fd, (void)mask;
	struct console_watch *w = ctx;
	w->c->turn |= w->v->ops->wake(w->c, w->v);
}

/* The refresh timer: a reload every CONSOLE_TICK_MS, or at next_tick_ns. */
static int64_t console_on_tick(struct loop *l, int64_t id, void *ctx)
{
	(void)l, (void)id;
	struct console *c = ctx;
	int64_t now = util_mono_ns();
	if (now >= c->next_tick_ns) {
		if (!c->paused)
			c->turn |= CONSOLE_RELOAD;
		c->next_tick_ns = now + CONSOLE_TICK_MS * 1000000LL;
	}
	c->tick_at = c->next_tick_ns;
	int64_t ms = (c->next_tick_ns - now + 999999) / 1000000;
	return ms > 0 ? ms : 0;
}

/* A bus monitor without a descriptor (no inotify: MADF_FORCE_POLL; no
 * NATS monitor thread) counts again only when asked: this timer asks it
 * every poll interval (MESSAGE_POLL_INTERVAL), and a change is taken as
 * the descriptor's would be (console_on_bus). */
static int64_t console_on_poll(struct loop *l, int64_t id, void *ctx)
{
	(void)id;
	struct console *c = ctx;
	console_on_bus(l, -1, 0, c);
	int64_t ms = (int64_t)(c->bus->cfg.poll_interval_s * 1000);
	return ms > 0 ? ms : 1;
}

/* Before each sleep: the descriptors the views want watched now (a
 * background job's, while it runs), and the timer at next_tick_ns when
 * that moved. */
static void console_before_sleep(struct loop *l, void *ctx)
{
	struct console *c = ctx;
	for (size_t i = 0; i < console_nviews && i < CONSOLE_VIEWS_MAX; i++) {
		struct console_watch *w = &c->watch[i];
		struct view *v = &c->views[i];
		int fd = v->ops->fd && v->ops->wake ? v->ops->fd(v) : -1;
		if (fd == w->fd)
			continue;
		if (w->fd >= 0)
			loop_del_fd(l, w->fd, LOOP_READ);
		w->fd = -1;
		char *err = NULL;
		if (fd >= 0 && loop_add_fd(l, fd, LOOP_READ, console_on_view, w, &err) == 0)
			w->fd = fd;
		free(err);
	}
	if (c->tick_at != c->next_tick_ns) {
		loop_del_timer(l, c->tick_id);
		int64_t ms = (c->next_tick_ns - util_mono_ns() + 999999) / 1000000;
		c->tick_id = loop_add_timer(l, ms > 0 ? ms : 0, console_on_tick, c, NULL);
		c->tick_at = c->next_tick_ns;
	}
}

int console_loop_open(struct console *c, char **err)
{
	c->loop = loop_new(err);
	if (!c->loop)
		return -1;
	for (size_t i = 0; i < CONSOLE_VIEWS_MAX; i++)
		c->watch[i] = (struct console_watch){ c, i < console_nviews ? &c->views[i] : NULL, -1 };
	int mfd = c->mon ? bus_monitor_fd(c->mon) : -1;
	if ((c->sig_fd >= 0 && loop_add_fd(c->loop, c->sig_fd, LOOP_READ, console_on_signal, c, err) < 0) ||
	    (mfd >= 0 && loop_add_fd(c->loop, mfd, LOOP_READ, console_on_bus, c, err) < 0) ||
	    (!c->headless && loop_add_fd(c->loop, 0, LOOP_READ, console_on_keys, c, err) < 0)) {
		loop_free(&c->loop);
		return -1;
	}
	c->tick_at = c->next_tick_ns;
	int64_t ms = (c->next_tick_ns - util_mono_ns()) / 1000000;
	c->tick_id = loop_add_timer(c->loop, ms > 0 ? ms : 0, console_on_tick, c, NULL);
	if (c->mon && mfd < 0 && loop_add_timer(c->loop, 0, console_on_poll, c, err) < 0) {
		loop_free(&c->loop);
		return -1;
	}
	loop_set_before_sleep(c->loop, console_before_sleep, c);
	return 0;
}

void console_loop_close(struct console *c)
{
	loop_free(&c->loop);
}

/* One turn of the loop: signals, bus events, the keyboard, the views'
 * descriptors, the timer. */
unsigned console_pump(struct console *c, int max_ms)
{
	c->turn = 0;
	char *err = NULL;
	if (loop_run_once(c->loop, max_ms, &err) < 0)
		free(err); /* poll failed: the next turn tries again */
	unsigned f = c->turn;
	c->turn = 0;
	return f;
}

void console_frame(struct console *c, unsigned f)
{
	for (size_t i = 0; i < console_nviews; i++) /* answers coming in */
		if (c->views[i].ops->frame)
			f |= c->views[i].ops->frame(c, &c->views[i]);
	if ((f & CONSOLE_RELOAD) && !c->paused)
		f |= console_reload(c);
	if (f & CONSOLE_REDRAW)
		console_draw(c);
}

int console_loop(struct console *c)
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
