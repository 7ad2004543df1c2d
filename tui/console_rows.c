/* The console's rows (a view's lines, filtered, marked, selected, kept
 * across refreshes) and drawing primitives; the journal of actions. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

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

void console_rows_release(struct console_rows *r)
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

void console_rows_skip_headings(struct console_rows *r, int dir)
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
