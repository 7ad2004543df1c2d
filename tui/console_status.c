/* The console's frame below and over the views: status messages and their
 * history (:messages), the key-hint line, Tab completion's candidates, the
 * full-screen reader, `?` help and the quit question. */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/workflows.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

/* ---- wrapping ---- */

struct wrapped {
	char **v;
	size_t n;
};

static void wrapped_add(struct wrapped *w, const char *s, size_t len, int indent)
{
	w->v = xrealloc(w->v, (w->n + 1) * sizeof(*w->v));
	w->v[w->n++] = xasprintf("%*s%.*s", indent, "", (int)len, s);
}

static void wrapped_release(struct wrapped *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

/* How many bytes of s fit in cols columns. */
static size_t fit_bytes(const char *s, size_t len, int cols)
{
	size_t i = 0, end = 0;
	int col = 0;
	while (i < len) {
		wchar_t w;
		console_utf8_next(s, &i, &w);
		col += console_char_width(w);
		if (col > cols || i > len)
			break;
		end = i;
	}
	return end;
}

/* text cut into lines of at most width columns, at the last space on the
 * line when there is one, else mid-word; a newline ends a line; the lines
 * after the first of a paragraph are indented by indent columns. */
static void console_wrap(const char *text, int width, int indent, struct wrapped *out)
{
	if (width < 8)
		width = 8;
	if (indent > width / 2)
		indent = width / 2;
	const char *p = text ? text : "";
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t plen = nl ? (size_t)(nl - p) : strlen(p);
		size_t start = 0;
		bool first = true;
		do {
			int avail = first ? width : width - indent;
			int col = 0;
			size_t i = start, end = start, sp_at = 0, sp_after = 0;
			while (i < plen) {
				size_t at = i;
				wchar_t w;
				console_utf8_next(p, &i, &w);
				if (i > plen)
					i = plen;
				int cw = console_char_width(w);
				if (col + cw > avail) {
					i = at;
					break;
				}
				col += cw;
				if (w == L' ' && at > start) {
					sp_at = at;
					sp_after = i;
				}
				end = i;
			}
			size_t cut = end, next = end;
			if (end < plen && sp_after) { /* at the last space; it stays out */
				cut = sp_at;
				next = sp_after;
			} else if (end == start && end < plen) { /* wider than the line */
				wchar_t w;
				console_utf8_next(p, &next, &w);
				cut = next = next > plen ? plen : next;
			}
			wrapped_add(out, p + start, cut - start, first ? 0 : indent);
			start = next;
			while (start < plen && p[start] == ' ')
				start++;
			first = false;
		} while (start < plen);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* ---- status messages ---- */

void console_status(struct console *c, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *raw = xvasprintf(fmt, ap);
	va_end(ap);
	char *clean = *raw ? util_sanitize(raw, strlen(raw), false) : xstrdup("");
	free(raw);
	util_strlcpy(c->status, clean, sizeof(c->status));
	c->status_error = error;
	if (!*clean) {
		free(clean);
		return;
	}
	/* the same message again only moves its time */
	if (c->nmsgs) {
		struct console_msg *last = &c->msgs[(c->msgs_head + c->nmsgs - 1) % CONSOLE_MSGS_MAX];
		if (last->error == error && !strcmp(last->text, clean)) {
			last->ts_ns = util_now_ns();
			free(clean);
			return;
		}
	}
	struct console_msg *m;
	if (c->nmsgs == CONSOLE_MSGS_MAX) {
		m = &c->msgs[c->msgs_head];
		free(m->text);
		c->msgs_head = (c->msgs_head + 1) % CONSOLE_MSGS_MAX;
	} else {
		m = &c->msgs[(c->msgs_head + c->nmsgs++) % CONSOLE_MSGS_MAX];
	}
	*m = (struct console_msg){ util_now_ns(), error, clean };
}

void console_status_release(struct console *c)
{
	for (size_t i = 0; i < c->nmsgs; i++)
		free(c->msgs[(c->msgs_head + i) % CONSOLE_MSGS_MAX].text);
	c->nmsgs = 0;
	free(c->reader_title);
	free(c->reader_text);
	c->reader_title = c->reader_text = NULL;
	console_complete_reset(c);
}

/* ---- the reader ---- */

static void reader_set(struct console *c, const char *title, const char *text, int indent)
{
	free(c->reader_title);
	free(c->reader_text);
	c->reader_title = util_sanitize(title, strlen(title), false);
	char *clean = *text ? util_sanitize(text, strlen(text), true) : xstrdup("");
	struct sbuf b; /* tabs (as cJSON_Print indents) two spaces each */
	sbuf_init(&b);
	for (const char *p = clean; *p; p++) {
		if (*p == '\t')
			sbuf_addstr(&b, "  ");
		else
			sbuf_addch(&b, *p);
	}
	free(clean);
	c->reader_text = sbuf_detach(&b);
	c->reader_indent = indent;
	c->reader_top = 0;
	c->reader_nlines = 0;
	if (c->mode != MODE_READER)
		c->reader_back = c->mode == MODE_HELP ? MODE_HELP : MODE_NORMAL;
	c->mode = MODE_READER;
}

void console_reader_open(struct console *c, const char *title, const char *text)
{
	reader_set(c, title ? title : "", text ? text : "", 0);
}

void console_reader_draw(struct console *c, int y0, int y1)
{
	console_put(c, y0, 0, COLS, SLOT_HEADING, c->reader_title, true);
	y0++;
	struct wrapped w = { 0 };
	console_wrap(c->reader_text, COLS - 2, c->reader_indent, &w);
	int h = y1 - y0;
	c->reader_nlines = w.n;
	c->reader_h = h > 0 ? h : 1;
	size_t max_top = w.n > (size_t)c->reader_h ? w.n - (size_t)c->reader_h : 0;
	if (c->reader_top > max_top)
		c->reader_top = max_top;
	for (int y = 0; y < h && c->reader_top + (size_t)y < w.n; y++)
		console_put(c, y0 + y, 1, COLS - 1, SLOT_NORMAL, w.v[c->reader_top + (size_t)y], true);
	wrapped_release(&w);
}

unsigned console_reader_key(struct console *c, int ch)
{
	size_t page = c->reader_h > 1 ? (size_t)c->reader_h - 1 : 1;
	size_t max_top = c->reader_nlines > (size_t)c->reader_h ?
			 c->reader_nlines - (size_t)c->reader_h : 0;
	switch (ch) {
	case KEY_DOWN: case 'j': c->reader_top++; break;
	case KEY_UP: case 'k': if (c->reader_top) c->reader_top--; break;
	case KEY_NPAGE: case ' ': c->reader_top += page; break;
	case KEY_PPAGE: c->reader_top = c->reader_top > page ? c->reader_top - page : 0; break;
	case KEY_HOME: case 'g': c->reader_top = 0; break;
	case KEY_END: case 'G': c->reader_top = max_top; break;
	case 27: case 'q': case '\n': case 'v':
		c->mode = c->reader_back;
		free(c->reader_text);
		c->reader_text = NULL;
		return CONSOLE_REDRAW;
	default:
		return 0;
	}
	if (c->reader_top > max_top)
		c->reader_top = max_top;
	return CONSOLE_REDRAW;
}

unsigned console_messages_open(struct console *c)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = c->nmsgs; i-- > 0;) {
		const struct console_msg *m = &c->msgs[(c->msgs_head + i) % CONSOLE_MSGS_MAX];
		char ts[40];
		util_iso8601(m->ts_ns, ts, sizeof(ts));
		sbuf_addf(&b, "%.8s  %s%s\n", ts + 11, m->error ? "error: " : "", m->text);
	}
	char title[128];
	snprintf(title, sizeof(title), " Messages (%zu, newest first; times UTC; Esc returns)",
		 c->nmsgs);
	reader_set(c, title, b.len ? b.data : "(no messages yet)", 10);
	sbuf_release(&b);
	return CONSOLE_REDRAW;
}

unsigned console_read_row(struct console *c, const char *extra)
{
	struct view *v = console_view(c);
	struct console_row *cur = console_rows_current(&v->rows);
	if (!cur)
		return 0;
	char title[320];
	snprintf(title, sizeof(title), " %s: %s  (Esc returns)", v->ops->title, cur->id ? cur->id : "");
	char *text = xasprintf("%s%s%s", cur->text, extra ? "\n\n" : "", extra ? extra : "");
	console_reader_open(c, title, text);
	free(text);
	return CONSOLE_REDRAW;
}

/* ---- quitting ---- */

unsigned console_quit_ask(struct console *c)
{
	if (!c->embedded_agents) {
		c->quit = true;
		return CONSOLE_QUIT;
	}
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "quit? %zu embedded agent%s stop", c->embedded_agents,
		  c->embedded_agents == 1 ? "" : "s");
	/* the console's run: the weekly it started (console_trigger), or the
	 * run of another workflow :run started */
	const struct workflow_def *w = c->run_id[0] ? workflow_of_run(c->cli->data_dir, c->run_id) : NULL;
	if (!w)
		w = workflow_defs[0];
	cJSON *run = c->run_id[0] && w->run_load ? w->run_load(c->cli->data_dir, c->run_id) : NULL;
	if (run) {
		const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(run, "status"));
		int n = 0, done = 0;
		const cJSON *t;
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
			const char *ts = cJSON_GetStringValue(cJSON_GetObjectItem(t, "status"));
			n++;
			done += ts && !strcmp(ts, "done");
		}
		if (st && !strcmp(st, "done"))
			sbuf_addf(&b, "; run %s is done", c->run_id);
		else
			sbuf_addf(&b, "; run %s is %s (%d of %d task%s done)", c->run_id,
				  st ? st : "starting", done, n, n == 1 ? "" : "s");
	} else if (c->run_id[0]) {
		sbuf_addf(&b, "; run %s has not started yet", c->run_id);
	}
	sbuf_addstr(&b, " y/n");
	char *clean = util_sanitize(b.data, b.len, false);
	util_strlcpy(c->question, clean, sizeof(c->question));
	free(clean);
	sbuf_release(&b);
	cJSON_Delete(run);
	c->pending = OP_QUIT;
	c->pending_view = NULL;
	c->pending_any = false;
	c->mode = MODE_CONFIRM;
	return CONSOLE_REDRAW;
}

/* ---- completion ---- */

void console_complete_reset(struct console *c)
{
	for (size_t i = 0; i < c->ncomp; i++)
		free(c->comp[i]);
	free(c->comp);
	c->comp = NULL;
	c->ncomp = c->comp_i = 0;
}

/* The line with the word at comp_base replaced by w (and a space after it
 * when final). */
static void complete_put(struct console *c, const char *w, size_t wlen, bool final)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%.*s%.*s%s", (int)c->comp_base, c->line, (int)wlen, w,
		 final ? " " : "");
	c->line_len = util_strlcpy(c->line, tmp, sizeof(c->line));
	if (c->line_len >= sizeof(c->line))
		c->line_len = sizeof(c->line) - 1;
}

static int cand_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void console_complete(struct console *c)
{
	if (c->ncomp > 1) { /* Tab again: the next candidate */
		c->comp_i = c->comp_i + 1 < c->ncomp ? c->comp_i + 1 : 0;
		complete_put(c, c->comp[c->comp_i], strlen(c->comp[c->comp_i]), false);
		return;
	}
	console_complete_reset(c);
	char *sp = strchr(c->line, ' ');
	const char *prefix = sp ? sp + 1 : c->line;
	size_t plen = strlen(prefix);
	const char *cands[256];
	size_t n = 0;
	char **themes = NULL;
	size_t nthemes = 0;
	const struct console_cmd *cmd = NULL;
	for (size_t i = 0; sp && i < console_ncmds; i++)
		if (strlen(console_cmds[i].name) == (size_t)(sp - c->line) &&
		    !strncmp(c->line, console_cmds[i].name, (size_t)(sp - c->line)))
			cmd = &console_cmds[i];
	if (!sp) {
		for (size_t i = 0; i < console_ncmds && n < ARRAY_SIZE(cands); i++)
			cands[n++] = console_cmds[i].name;
		qsort(cands, n, sizeof(cands[0]), cand_cmp);
	} else if (cmd && cmd->complete == CMD_ARG_THEME) {
		themes = theme_list(&nthemes);
		for (size_t i = 0; i < nthemes && n < ARRAY_SIZE(cands); i++)
			cands[n++] = themes[i];
	} else {
		for (size_t i = 0; n < ARRAY_SIZE(cands); i++) {
			const char *a = console_agent_name(c, i);
			if (!a)
				break;
			bool dup = false;
			for (size_t k = 0; k < n; k++)
				dup = dup || !strcmp(cands[k], a);
			if (!dup)
				cands[n++] = a;
		}
	}
	size_t common = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(cands[i], prefix, plen))
			continue;
		if (!c->ncomp) {
			common = strlen(cands[i]);
		} else {
			size_t k = 0;
			while (k < common && c->comp[0][k] == cands[i][k])
				k++;
			common = k;
		}
		c->comp = xrealloc(c->comp, (c->ncomp + 1) * sizeof(*c->comp));
		c->comp[c->ncomp++] = xstrdup(cands[i]);
	}
	for (size_t i = 0; i < nthemes; i++)
		free(themes[i]);
	free(themes);
	c->comp_base = (size_t)(prefix - c->line);
	if (!c->ncomp) {
		console_status(c, true, "nothing to complete for \"%s\"", prefix);
		return;
	}
	complete_put(c, c->comp[0], common, c->ncomp == 1);
	c->comp_i = c->ncomp; /* none chosen: the next Tab takes the first */
	if (c->ncomp == 1)
		console_complete_reset(c);
}

/* The candidates on one line, the chosen one highlighted, scrolled so
 * that it shows. */
static void complete_draw(struct console *c, int y)
{
	console_put(c, y, 0, COLS, SLOT_DIM, "", true);
	size_t from = 0;
	if (c->comp_i < c->ncomp) { /* the chosen one visible */
		int w = 0;
		for (size_t k = c->comp_i + 1; k-- > 0;) {
			w += (int)strlen(c->comp[k]) + 2;
			if (w > COLS - 4)
				break;
			from = k;
		}
	}
	int x = 1;
	if (from) {
		console_put(c, y, 0, 1, SLOT_DIM, "<", false);
	}
	for (size_t k = from; k < c->ncomp && x < COLS - 1; k++) {
		int w = (int)strlen(c->comp[k]);
		if (x + w > COLS - 2) {
			console_put(c, y, COLS - 1, 1, SLOT_DIM, ">", false);
			break;
		}
		console_put(c, y, x, w, k == c->comp_i ? SLOT_SELECTED : SLOT_NORMAL, c->comp[k], false);
		x += w + 2;
	}
}

/* ---- the two bottom lines ---- */

static void hint_item(struct wrapped *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void hint_item(struct wrapped *h, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *t = xvasprintf(fmt, ap);
	va_end(ap);
	wrapped_add(h, t, strlen(t), 0);
	free(t);
}

/* The keys of the view shown, from the key table, then the global ones
 * (only "? help" and "q quit" when short is set): one item each ("R
 * retry"). */
static void console_hints(struct console *c, struct wrapped *h, bool short_global)
{
	const struct view *v = console_view(c);
	for (size_t i = 0; i < v->ops->nkeys; i++) {
		const struct key_binding *k = &v->ops->keys[i];
		if (!k->hint || (v->ops->applies && !v->ops->applies(v, k->op)))
			continue;
		if (c->opts.read_only && (k->destructive || k->writes))
			continue;
		char name[16];
		keys_name(k->key, name, sizeof(name));
		hint_item(h, "%s %s", name, k->hint);
	}
	const char *enter = v->ops->enter_hint ? v->ops->enter_hint(v) : NULL;
	if (enter)
		hint_item(h, "%s", enter);
	static const char *const global[] = { "? help", ": command", "/ filter", "Tab view",
					      "q quit" };
	for (size_t i = 0; i < ARRAY_SIZE(global); i++)
		if (!short_global || i == 0 || i == ARRAY_SIZE(global) - 1)
			hint_item(h, "%s%s", i ? "" : "| ", global[i]);
	if (c->re_set)
		hint_item(h, "filter: %s", c->filter);
}

/* The items laid out on lines of width columns, two spaces apart. */
static void hints_layout(const struct wrapped *items, int width, struct wrapped *lines)
{
	struct sbuf b;
	sbuf_init(&b);
	int col = 0;
	for (size_t i = 0; i < items->n; i++) {
		int w = (int)strlen(items->v[i]);
		if (col && col + 2 + w > width) {
			wrapped_add(lines, b.data, b.len, 0);
			b.len = 0;
			col = 0;
		}
		if (col) {
			sbuf_addstr(&b, "  ");
			col += 2;
		}
		sbuf_addstr(&b, items->v[i]);
		col += w;
	}
	if (b.len)
		wrapped_add(lines, b.data, b.len, 0);
	sbuf_release(&b);
}

void console_draw_bottom(struct console *c)
{
	int y = LINES - 1, yh = LINES - 2;
	char buf[680];
	struct wrapped items = { 0 }, lines = { 0 }, w = { 0 };
	enum theme_slot s = SLOT_STATUS;
	const char *bottom = buf, *above = NULL; /* above: the line over the bottom one */
	enum theme_slot above_slot = SLOT_DIM;
	bool cands = false;
	buf[0] = 0;
	switch (c->mode) {
	case MODE_COMMAND:
	case MODE_FILTER:
		snprintf(buf, sizeof(buf), "%c%s", c->mode == MODE_COMMAND ? ':' : '/', c->line);
		if (c->ncomp)
			cands = true;
		else if (c->status[0])
			above = c->status;
		else
			above = c->mode == MODE_COMMAND ?
				"Tab completes (again: the next candidate)  Enter runs  Esc cancels  "
				":help lists the commands" :
				"a POSIX regex, case ignored; a leading ! inverts  Enter applies  Esc cancels";
		break;
	case MODE_CONFIRM:
		snprintf(buf, sizeof(buf), "%s", c->question);
		s = SLOT_WARN;
		above = c->pending == OP_QUIT && !c->pending_view ?
			"y quits (the same request started again resumes the run)  n (or any other key) stays" :
			"y yes  n (or any other key) no";
		console_wrap(buf, COLS, 0, &w);
		if (w.n > 1) { /* too long for one line: the line above too */
			above = w.v[0];
			above_slot = SLOT_WARN;
			bottom = w.v[1];
		}
		break;
	case MODE_HELP:
	case MODE_READER:
	case MODE_NORMAL:
		if (c->mode == MODE_READER)
			hint_item(&items, "j/k Up/Down scroll  PgUp/PgDn page  g/G first/last  Esc returns");
		else if (c->mode == MODE_HELP)
			hint_item(&items, "j/k scroll  Esc or ? closes");
		else
			console_hints(c, &items, false);
		hints_layout(&items, COLS, &lines);
		if (lines.n > 2 && c->mode == MODE_NORMAL) { /* the view's keys first */
			wrapped_release(&items);
			wrapped_release(&lines);
			console_hints(c, &items, true);
			hints_layout(&items, COLS, &lines);
		}
		if (!c->status[0]) {
			/* the keys of this view, on two lines when they need them */
			bottom = lines.n > 1 ? lines.v[1] : lines.n ? lines.v[0] : "";
			if (lines.n > 1) {
				above = lines.v[0];
				above_slot = SLOT_STATUS;
			}
			break;
		}
		if (c->status_error)
			s = SLOT_ERROR;
		above = lines.n ? lines.v[0] : "";
		/* a long message takes the line above too */
		console_wrap(c->status, COLS, 0, &w);
		if (w.n > 2) {
			static const char more[] = " ... (:messages shows it whole)";
			int room = COLS - (int)sizeof(more) + 1;
			size_t k = fit_bytes(w.v[1], strlen(w.v[1]), room > 10 ? room : 10);
			snprintf(buf, sizeof(buf), "%.*s%s", (int)k, w.v[1], more);
			bottom = buf;
		} else {
			bottom = w.n > 1 ? w.v[1] : c->status;
		}
		if (w.n > 1) {
			above = w.v[0];
			above_slot = s;
		}
		break;
	}
	if (cands)
		complete_draw(c, yh);
	else
		console_put(c, yh, 0, COLS, above_slot, above ? above : "", true);
	console_put(c, y, 0, COLS, s, bottom, true);
	if (c->mode == MODE_COMMAND || c->mode == MODE_FILTER) {
		int x = (int)strlen(buf);
		move(LINES - 1, x < COLS ? x : COLS - 1);
	}
	wrapped_release(&w);
	wrapped_release(&items);
	wrapped_release(&lines);
}

/* ---- help ---- */

/* One line of help: shown when scrolled to (line counts them all). */
static void help_line(struct console *c, size_t *line, int *y, int y1, enum theme_slot slot,
		      const char *text)
{
	if ((*line)++ >= c->help_top && *y < y1)
		console_put(c, (*y)++, 0, COLS, slot, text, true);
}

static void help_key(struct console *c, size_t *line, int *y, int y1,
		     const struct key_binding *k)
{
	char name[16], text[256];
	keys_name(k->key, name, sizeof(name));
	snprintf(text, sizeof(text), "   %-7s %-14s %s%s", name, keys_op_name(k->op), k->help,
		 k->destructive ? " (confirm)" : "");
	help_line(c, line, y, y1, k->destructive ? SLOT_WARN : SLOT_NORMAL, text);
}

/* The : commands on the lines under the title, as many to a line as fit;
 * the lines used. */
static int help_commands(struct console *c, int y)
{
	struct wrapped items = { 0 }, lines = { 0 };
	for (size_t i = 0; i < console_ncmds; i++) {
		const struct console_cmd *k = &console_cmds[i];
		hint_item(&items, ":%s%s%s", k->name, k->args ? " " : "", k->args ? k->args : "");
	}
	hints_layout(&items, COLS - 12, &lines);
	for (size_t i = 0; i < lines.n; i++) {
		char *t = xasprintf(" %-10s%s", i ? "" : "commands:", lines.v[i]);
		console_put(c, y + (int)i, 0, COLS, SLOT_HEADER, t, true);
		free(t);
	}
	int n = (int)lines.n;
	wrapped_release(&items);
	wrapped_release(&lines);
	return n;
}

void console_draw_help(struct console *c, int y0, int y1)
{
	int y = y0;
	console_put(c, y++, 0, COLS, SLOT_HEADING, " Keys (Esc or ? closes, j/k scroll; upper-case keys ask to confirm)", true);
	y += help_commands(c, y);
	size_t line = 0;
	help_line(c, &line, &y, y1, SLOT_HEADER, " everywhere");
	for (size_t i = 0; i < keys_count; i++) {
		help_key(c, &line, &y, y1, &keys_table[i]);
		if (keys_table[i].key != KEY_BTAB)
			continue;
		for (size_t v = 0; v < console_nviews; v++) { /* the views' digits after Tab */
			char text[256];
			snprintf(text, sizeof(text), "   %-7zu view-%-9s %s", v + 1, c->views[v].ops->name,
				 c->views[v].ops->help);
			help_line(c, &line, &y, y1, SLOT_NORMAL, text);
		}
	}
	for (size_t v = 0; v < console_nviews; v++) {
		const struct view_ops *ops = c->views[v].ops;
		if (!ops->nkeys)
			continue;
		char head[64];
		snprintf(head, sizeof(head), " %s", ops->title);
		help_line(c, &line, &y, y1, SLOT_HEADER, head);
		for (size_t i = 0; i < ops->nkeys; i++)
			help_key(c, &line, &y, y1, &ops->keys[i]);
	}
	help_line(c, &line, &y, y1, SLOT_HEADER, " commands (:)");
	for (size_t i = 0; i < console_ncmds; i++) {
		const struct console_cmd *k = &console_cmds[i];
		char name[64], text[320];
		snprintf(name, sizeof(name), ":%s%s%s", k->name, k->args ? " " : "", k->args ? k->args : "");
		snprintf(text, sizeof(text), "   %-25s %s", name, k->help);
		help_line(c, &line, &y, y1, SLOT_NORMAL, text);
	}
}

const char *console_agent_name(struct console *c, size_t i)
{
	if (i < bus_default_agent_count)
		return bus_default_agents[i];
	i -= bus_default_agent_count;
	return i < c->stats.nagents ? c->stats.agents[i].agent : NULL;
}
