/* View 5, reports: the current run's draft rendered as it grows (headings,
 * aligned tables); `e` exports Markdown, JSON and self-contained HTML with
 * the operator action journal and a run manifest (and, for a code review,
 * SARIF 2.1.0). A code review's report lists its findings by severity with
 * the source lines around each (agents/review_run.c renders it). */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>

#include "agents/runtime.h"
#include "cli/workflows.h"
#include "core/util.h"
#include "tui/console.h"
#include "tui/wrap.h"
#include "core/banned.h"

/* The newest *.md under dir into best (by modification time). */
static void newest_md(const char *dir, char *best, size_t size, int64_t *best_mtime)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".md") || e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		struct stat st;
		int64_t m = stat(p, &st) == 0 ? (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : 0;
		if (m > *best_mtime) {
			*best_mtime = m;
			util_strlcpy(best, p, size);
		}
		free(p);
	}
	if (d)
		closedir(d);
}

/* The reports view's state (view->data). */
struct reports {
	char path[1024];     /* the draft shown */
	char open[1024];     /* a finished report shown instead of the draft */
	char *sig;           /* of what the rows were made from */
};

/* The workflow whose reports the view shows (cli/workflows.h): the one of
 * the console's run, else the first registered that keeps reports. */
static const struct workflow_def *reports_wf(struct console *c)
{
	const struct workflow_def *first = NULL;
	size_t n = 0;
	for (size_t i = 0; i < workflow_ndefs; i++)
		if (workflow_defs[i]->drafts_dir && !n++)
			first = workflow_defs[i];
	if (n <= 1 || !c->run_id[0])
		return first; /* no state to read to choose */
	const struct workflow_def *w = workflow_of_run(c->cli->data_dir, c->run_id);
	return w && w->drafts_dir ? w : first;
}

/* DATA_DIR/DIR, the workflow's drafts_dir or reports_dir (new string). */
static char *reports_dir(struct console *c, bool drafts)
{
	const struct workflow_def *w = reports_wf(c);
	return xasprintf("%s/%s", c->cli->data_dir, !w ? "reports" : drafts ? w->drafts_dir :
			 w->reports_dir);
}

static void reports_pick(struct console *c, struct reports *rp)
{
	rp->path[0] = 0;
	char *dir = reports_dir(c, true);
	if (c->run_id[0]) {
		char *p = xasprintf("%s/%s.md", dir, c->run_id);
		struct stat st;
		if (stat(p, &st) == 0)
			util_strlcpy(rp->path, p, sizeof(rp->path));
		free(p);
		if (rp->path[0]) {
			free(dir);
			return;
		}
	}
	int64_t m = 0;
	newest_md(dir, rp->path, sizeof(rp->path), &m);
	free(dir);
}

static char *cell_trim(char *s)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = 0;
	return s;
}

/* Display columns of UTF-8 text (one per code point: good enough for
 * report tables, whose wide characters are sparklines). */
static size_t text_cols(const char *s)
{
	return wrap_cols(s, SIZE_MAX);
}

/* A block of Markdown table lines rendered with aligned columns. */
static void render_table(struct console_rows *r, char **lines, size_t n)
{
	char ***cells = xcalloc(n, sizeof(*cells));
	size_t *ncell = xcalloc(n, sizeof(*ncell)), widths[32] = { 0 };
	for (size_t i = 0; i < n; i++) {
		char *l = lines[i];
		if (*l == '|')
			l++;
		size_t len = strlen(l);
		if (len && l[len - 1] == '|')
			l[len - 1] = 0;
		char *save = NULL;
		for (char *p = strtok_r(l, "|", &save); p && ncell[i] < 32; p = strtok_r(NULL, "|", &save)) {
			cells[i] = xrealloc(cells[i], (ncell[i] + 1) * sizeof(char *));
			char *t = cell_trim(p);
			cells[i][ncell[i]] = t;
			if (strspn(t, "-: ") != strlen(t) && text_cols(t) > widths[ncell[i]])
				widths[ncell[i]] = text_cols(t);
			ncell[i]++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct sbuf b;
		sbuf_init(&b);
		bool rule = ncell[i] && strspn(cells[i][0], "-: ") == strlen(cells[i][0]);
		for (size_t k = 0; k < ncell[i]; k++) {
			if (rule) {
				for (size_t w = 0; w < widths[k] + 2; w++)
					sbuf_addstr(&b, "─");
				if (k + 1 < ncell[i])
					sbuf_addstr(&b, "┼");
				continue;
			}
			sbuf_addf(&b, " %s", cells[i][k]);
			for (size_t w = text_cols(cells[i][k]); w < widths[k] + 1; w++)
				sbuf_addch(&b, ' ');
			if (k + 1 < ncell[i])
				sbuf_addstr(&b, "│");
		}
		console_rows_add(r, NULL, i == 0 ? SLOT_HEADER : rule ? SLOT_DIM : SLOT_NORMAL, "  %s", b.data);
		sbuf_release(&b);
		free(cells[i]);
	}
	free(cells);
	free(ncell);
}

/* One line of text as rows wrapped to width columns after lead: list
 * items ("- ", "* ", "1. ") and quotes ("> ") continue under their text. */
static void add_wrapped(struct console_rows *r, enum theme_slot slot, const char *lead,
			const char *text, size_t width)
{
	size_t hang = 0;
	if ((text[0] == '-' || text[0] == '*' || text[0] == '>') && text[1] == ' ')
		hang = 2;
	else if (text[0] >= '0' && text[0] <= '9') {
		size_t d = strspn(text, "0123456789");
		if (text[d] == '.' && text[d + 1] == ' ')
			hang = d + 2;
	}
	hang += strspn(text, " ");
	size_t lw = strlen(lead);
	char **lines = NULL;
	size_t n = wrap_text(text, width > lw + 8 ? width - lw : 8, hang, &lines);
	for (size_t i = 0; i < n; i++) {
		console_rows_add(r, NULL, slot, "%s%s", lead, lines[i]);
		free(lines[i]);
	}
	free(lines);
}

/* A Markdown line as shown: emphasis markers and escapes removed, then
 * sanitized (new string). */
static char *md_plain(const char *l)
{
	struct sbuf b;
	sbuf_init(&b);
	for (const char *p = l; *p; p++) {
		if ((p[0] == '*' && p[1] == '*') || (p[0] == '_' && p[1] == '_')) {
			p++;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		sbuf_addch(&b, *p);
	}
	/* sanitised first: the wrap counts the columns shown */
	char *clean = util_sanitize(b.data ? b.data : "", b.len, false);
	sbuf_release(&b);
	return clean;
}

/* Markdown to rows: headings, tables, emphasis markers removed; text
 * wrapped to width columns (tables are not: their columns stay aligned;
 * nor are fenced code blocks, whose lines are shown as they are). */
static void render_markdown(struct console_rows *r, char *md, size_t width)
{
	char **table = NULL;
	size_t nt = 0;
	bool code = false;
	/* split by hand: strtok_r would drop the empty lines of code */
	for (char *l = md, *next; l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(l, "```", 3)) {
			code = !code;
			continue;
		}
		if (code) {
			char *clean = util_sanitize(l, strlen(l), false);
			console_rows_add(r, NULL, SLOT_DIM, "    %s", clean);
			free(clean);
			continue;
		}
		if (!*l)
			continue;
		if (*l == '|') {
			table = xrealloc(table, (nt + 1) * sizeof(*table));
			table[nt++] = l;
			continue;
		}
		if (nt) {
			render_table(r, table, nt);
			nt = 0;
		}
		if (*l == '#') {
			size_t lvl = strspn(l, "#");
			char *clean = md_plain(cell_trim(l + lvl));
			add_wrapped(r, SLOT_HEADING, lvl == 1 ? "" : "  ", clean, width);
			free(clean);
			continue;
		}
		char *clean = md_plain(l);
		add_wrapped(r, SLOT_NORMAL, "  ", clean, width);
		free(clean);
	}
	if (nt)
		render_table(r, table, nt);
	free(table);
}

/* The finished reports listed above the draft (newest first: the names
 * start with the ISO year and week). */
#define REPORTS_LIST_MAX 12
#define REPORT_ROW "report:"

static int name_desc(const void *a, const void *b)
{
	return strcmp(*(char *const *)b, *(char *const *)a);
}

static size_t reports_finished(const char *dir, char ***out)
{
	char **v = NULL;
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 3, ".md") || e->d_name[0] == '.')
			continue;
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), name_desc);
	*out = v;
	return n;
}

static unsigned reports_refresh(struct console *c, struct view *v, bool shown)
{
	if (!shown)
		return 0;
	struct reports *rp = v->data;
	struct console_rows *r = &v->rows;
	reports_pick(c, rp);
	const char *show = rp->open[0] ? rp->open : rp->path;
	char *wdir = reports_dir(c, false);
	struct stat st, wst;
	bool wok = stat(wdir, &wst) == 0;
	char sig[2400];
	/* the width is in it: the text is wrapped to the screen */
	snprintf(sig, sizeof(sig), "%d:%s:%lld:%lld:%lld.%ld", COLS, show,
		 stat(show, &st) == 0 ? (long long)st.st_size : -1LL,
		 show[0] && stat(show, &st) == 0 ? (long long)st.st_mtim.tv_nsec : 0LL,
		 wok ? (long long)wst.st_mtim.tv_sec : 0LL, wok ? (long)wst.st_mtim.tv_nsec : 0L);
	if (rp->sig && !strcmp(rp->sig, sig) && r->n) {
		free(wdir);
		/* the same text under a new filter (or back to this view) */
		return r->hash ? 0 : console_rows_done(c, r);
	}
	free(rp->sig);
	rp->sig = xstrdup(sig);
	console_rows_clear(r);
	char **names = NULL;
	size_t nn = reports_finished(wdir, &names);
	if (nn)
		console_rows_add(r, NULL, SLOT_HEADING, "Finished reports (%zu, newest first; Enter shows one, "
				 "Esc the live draft)", nn);
	for (size_t i = 0; i < nn; i++) {
		if (i < REPORTS_LIST_MAX) {
			char *id = xasprintf(REPORT_ROW "%s", names[i]);
			char *p = xasprintf("%s/%s", wdir, names[i]);
			bool open = !strcmp(p, rp->open);
			console_rows_add(r, id, open ? SLOT_OK : SLOT_NORMAL, "  %s %s", open ? ">" : " ",
					 names[i]);
			free(p);
			free(id);
		}
		free(names[i]);
	}
	if (nn > REPORTS_LIST_MAX)
		console_rows_add(r, NULL, SLOT_DIM, "  ... and %zu older in %s", nn - REPORTS_LIST_MAX, wdir);
	free(names);
	free(wdir);
	size_t body = r->n;
	if (nn)
		console_rows_add(r, NULL, SLOT_HEADING, "%s", rp->open[0] ? "Finished report" :
				 show[0] ? "Live draft" : "Live draft: none yet");
	char *md = NULL, *err = NULL;
	size_t len = 0;
	if (show[0] && util_read_file(show, 16u << 20, &md, &len, &err) == 0) {
		/* each row a line id, so the cursor stays where it was */
		render_markdown(r, md, COLS > 12 ? (size_t)COLS - 2 : 10);
		for (size_t i = body; i < r->n; i++) {
			free(r->v[i].id);
			r->v[i].id = xasprintf("%zu", i - body);
		}
	} else {
		free(err);
	}
	free(md);
	return console_rows_done(c, r);
}

/* Enter on a finished report shows it; Esc back to the draft (passed on
 * when there was nothing to go back from). */
static unsigned reports_open(struct console *c, struct view *v)
{
	struct reports *rp = v->data;
	struct console_row *cur = console_rows_current(&v->rows);
	if (!cur || !cur->id || strncmp(cur->id, REPORT_ROW, strlen(REPORT_ROW)))
		return 0;
	const char *name = cur->id + strlen(REPORT_ROW);
	char *dir = reports_dir(c, false);
	snprintf(rp->open, sizeof(rp->open), "%s/%s", dir, name);
	free(dir);
	free(rp->sig);
	rp->sig = NULL;
	console_status(c, false, "report %s (Esc: back to the live draft)", name);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

static unsigned reports_back(struct console *c, struct view *v)
{
	struct reports *rp = v->data;
	if (!rp->open[0])
		return CONSOLE_PASS;
	rp->open[0] = 0;
	free(rp->sig);
	rp->sig = NULL;
	console_status(c, false, "the live draft");
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

static void reports_draw(struct console *c, struct view *v, int y0, int y1)
{
	struct reports *rp = v->data;
	char line[1200];
	if (rp->open[0])
		snprintf(line, sizeof(line), " report %s   (Esc: back to the live draft)", rp->open);
	else if (rp->path[0])
		snprintf(line, sizeof(line), " draft %s   (e exports Markdown, JSON, HTML%s)", rp->path,
			 reports_wf(c) && reports_wf(c)->render_sarif ? ", SARIF" : "");
	else {
		char *dir = reports_dir(c, true);
		snprintf(line, sizeof(line), " no draft yet in %s", dir);
		free(dir);
	}
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	console_rows_draw(c, &v->rows, y0 + 1, y1, NULL);
}

/* ---- export ---- */

static cJSON *export_journal(struct console *c)
{
	cJSON *arr = cJSON_CreateArray();
	char *path = xasprintf("%s/journal/actions.jsonl", c->cli->data_dir);
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	if (util_read_file(path, 64u << 20, &buf, &len, &err) == 0) {
		char *save = NULL;
		for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			cJSON *j = cJSON_Parse(l);
			if (j)
				cJSON_AddItemToArray(arr, j);
		}
	}
	free(err);
	free(buf);
	free(path);
	return arr;
}

static cJSON *export_manifest(const struct workflow_def *wf, const cJSON *run)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "madf_version", MADF_VERSION);
	cJSON_AddStringToObject(m, "workflow", wf->name);
	cJSON *agents = cJSON_AddArrayToObject(m, "agents");
	for (size_t i = 0; wf->roles && wf->roles[i]; i++)
		cJSON_AddItemToArray(agents, cJSON_CreateString(wf->roles[i]));
	cJSON_AddItemToObject(m, "sources", cJSON_Duplicate(cJSON_GetObjectItem(run, "sources"), 1));
	cJSON_AddStringToObject(m, "cmark_gfm", cmark_version_string());
	char ts[64];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	cJSON_AddStringToObject(m, "exported_at", ts);
	return m;
}

static void md_escape_cell(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '<' || *s == '\\' || *s == '`' || *s == '*' || *s == '_')
			sbuf_addch(b, '\\');
		if ((unsigned char)*s >= 0x20)
			sbuf_addch(b, *s);
	}
}

static char *export_html(const char *md, const char *title)
{
	cmark_gfm_core_extensions_ensure_registered();
	cmark_parser *p = cmark_parser_new(CMARK_OPT_DEFAULT);
	cmark_syntax_extension *table = cmark_find_syntax_extension("table");
	if (table)
		cmark_parser_attach_syntax_extension(p, table);
	cmark_parser_feed(p, md, strlen(md));
	cmark_node *doc = cmark_parser_finish(p);
	char *body = cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p));
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	for (const char *s = title; *s; s++) {
		if (*s == '<')
			sbuf_addstr(&b, "&lt;");
		else if (*s == '&')
			sbuf_addstr(&b, "&amp;");
		else
			sbuf_addch(&b, *s);
	}
	sbuf_addstr(&b, "</title>\n<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;"
		       "padding:0 1em}table{border-collapse:collapse}th,td{border:1px solid #999;"
		       "padding:.2em .5em}th{background:#eee}code{background:#f4f4f4}</style>\n"
		       "</head><body>\n");
	sbuf_addstr(&b, body);
	sbuf_addstr(&b, "</body></html>\n");
	free(body);
	cmark_node_free(doc);
	cmark_parser_free(p);
	return sbuf_detach(&b);
}

/* ---- paths in an export: relative to the data directory ---- */

/* abs (absolute) relative to base (absolute, normalised): "." components
 * and repeated slashes ignored, ".." as many as needed. Caller frees. */
static char *path_relative(const char *abs, size_t len, const char *base)
{
	char *a = xstrndup(abs, len), *b = xstrdup(base);
	/* at most one component per two bytes ("x/") */
	char **av = xcalloc(len / 2 + 2, sizeof(*av)), **bv = xcalloc(strlen(base) / 2 + 2, sizeof(*bv));
	char *sa = NULL, *sb = NULL;
	size_t na = 0, nb = 0;
	for (char *t = strtok_r(a, "/", &sa); t; t = strtok_r(NULL, "/", &sa))
		if (strcmp(t, "."))
			av[na++] = t;
	for (char *t = strtok_r(b, "/", &sb); t; t = strtok_r(NULL, "/", &sb))
		if (strcmp(t, "."))
			bv[nb++] = t;
	size_t common = 0;
	while (common < na && common < nb && !strcmp(av[common], bv[common]))
		common++;
	struct sbuf out;
	sbuf_init(&out);
	for (size_t i = common; i < nb; i++)
		sbuf_addstr(&out, out.len ? "/.." : "..");
	for (size_t i = common; i < na; i++) {
		if (out.len)
			sbuf_addch(&out, '/');
		sbuf_addstr(&out, av[i]);
	}
	if (!out.len)
		sbuf_addch(&out, '.');
	free(av);
	free(bv);
	free(a);
	free(b);
	return sbuf_detach(&out);
}

/* s with every absolute path in it (a '/' that starts the text or follows
 * a space, ':', '=', ',' or an opening quote or bracket, with at least two
 * components: "csv:/home/ann/fx.csv", "wrote /srv/x/data/reports/...")
 * made relative to base. NULL when nothing changed; else caller frees. */
static char *text_relative(const char *s, const char *base)
{
	static const char starts[] = " \t:=,;([{\"'`<|";
	static const char ends[] = " \t\n,;)]}\"'`<>|";
	struct sbuf out;
	sbuf_init(&out);
	bool changed = false;
	size_t i = 0, from = 0, n = strlen(s);
	while (i < n) {
		bool start = s[i] == '/' && (i == 0 || strchr(starts, s[i - 1])) && s[i + 1] &&
			     s[i + 1] != '/' && !strchr(ends, s[i + 1]);
		if (!start) {
			i++;
			continue;
		}
		size_t e = i + 1;
		while (e < n && !strchr(ends, s[e]))
			e++;
		if (!memchr(s + i + 1, '/', e - i - 1)) {
			i = e;
			continue;
		}
		sbuf_add(&out, s + from, i - from);
		char *rel = path_relative(s + i, e - i, base);
		sbuf_addstr(&out, rel);
		free(rel);
		changed = true;
		i = from = e;
	}
	if (!changed) {
		sbuf_release(&out);
		return NULL;
	}
	sbuf_add(&out, s + from, n - from);
	return sbuf_detach(&out);
}

/* Every string in j (j included) with its absolute paths made relative
 * to base. */
static void json_relative(cJSON *j, const char *base)
{
	if (!j)
		return;
	if (cJSON_IsString(j) && j->valuestring) {
		char *rel = text_relative(j->valuestring, base);
		if (rel)
			cJSON_SetValuestring(j, rel);
		free(rel);
	}
	for (cJSON *ch = j->child; ch; ch = ch->next)
		json_relative(ch, base);
}

/* The data directory as an absolute path, for json_relative. Caller frees. */
static char *data_dir_abs(const char *data_dir)
{
	char *r = realpath(data_dir, NULL);
	if (r)
		return r;
	char cwd[4096];
	if (data_dir[0] != '/' && getcwd(cwd, sizeof(cwd)))
		return xasprintf("%s/%s", cwd, data_dir);
	return xstrdup(data_dir);
}

int console_export_dir_ready(const char *dir, char **err)
{
	if (util_mkdirs(dir, err) < 0)
		return -1;
	struct stat st;
	if (stat(dir, &st) < 0) {
		*err = xasprintf("cannot write %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		*err = xasprintf("cannot write %s: %s", dir, strerror(ENOTDIR));
		return -1;
	}
	if (access(dir, W_OK) < 0) {
		*err = xasprintf("cannot write %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static unsigned reports_export(struct console *c, struct view *view)
{
	struct reports *rp = view->data;
	char run_id[128];
	util_strlcpy(run_id, c->run_id, sizeof(run_id));
	if (!run_id[0] && rp->path[0]) {
		const char *base = strrchr(rp->path, '/');
		base = base ? base + 1 : rp->path;
		snprintf(run_id, sizeof(run_id), "%.*s", (int)(strlen(base) - 3), base);
	}
	/* where it goes first: a data directory that cannot be written is
	 * what an operator must hear about, whatever else is missing */
	char *dir = xasprintf("%s/reports/exports", c->cli->data_dir);
	char *err = NULL;
	if (console_export_dir_ready(dir, &err) < 0) {
		console_status(c, true, "export: %s", err);
		free(err);
		free(dir);
		return CONSOLE_REDRAW;
	}
	const struct workflow_def *wf = run_id[0] ? workflow_of_run(c->cli->data_dir, run_id) : NULL;
	cJSON *run = wf && wf->render ? wf->run_load(c->cli->data_dir, run_id) : NULL;
	if (!run) {
		char *drafts = reports_dir(c, true);
		if (run_id[0])
			console_status(c, true, "export: no run \"%s\" in %s", run_id,
				       c->cli->data_dir);
		else
			console_status(c, true, "export: nothing to export: this console started no run "
				       "and %s has no draft", drafts);
		free(drafts);
		free(dir);
		return CONSOLE_REDRAW;
	}
	/* no absolute path of this machine in what is exported: those in the
	 * run (sources, warnings) and in the journal are made relative to the
	 * data directory */
	char *root = data_dir_abs(c->cli->data_dir);
	/* a report that reads its sources (a code review's: the lines around
	 * each finding) is rendered from the run as it is, then its text made
	 * relative */
	cJSON *full = wf->render_sarif ? cJSON_Duplicate(run, true) : NULL;
	json_relative(run, root);
	const cJSON *st = cJSON_GetObjectItem(run, "status");
	bool final = cJSON_IsString(st) && !strcmp(st->valuestring, "done");
	char base[64];
	wf->basename(run, base, sizeof(base));
	cJSON *journal = export_journal(c);
	cJSON *manifest = export_manifest(wf, run);
	json_relative(journal, root);
	json_relative(manifest, root);
	cJSON_AddStringToObject(manifest, "paths", "relative to the data directory");
	/* Markdown: the report, then the journal and the manifest */
	char *md0 = wf->render(full ? full : run, final);
	if (full) {
		char *rel = text_relative(md0, root);
		if (rel) {
			free(md0);
			md0 = rel;
		}
	}
	struct sbuf md;
	sbuf_init(&md);
	sbuf_addstr(&md, md0);
	free(md0);
	sbuf_addstr(&md, "\n\n## Operator actions\n\n");
	if (!cJSON_GetArraySize(journal)) {
		sbuf_addstr(&md, "None.\n");
	} else {
		sbuf_addstr(&md, "| time | user | action | ids | result |\n|---|---|---|---|---|\n");
		const cJSON *a;
		cJSON_ArrayForEach(a, journal) {
			const char *keys[] = { "ts", "user", "action", "ids", "result" };
			for (size_t k = 0; k < 5; k++) {
				const cJSON *v = cJSON_GetObjectItem(a, keys[k]);
				char *txt = cJSON_IsString(v) ? NULL : cJSON_PrintUnformatted(v);
				sbuf_addstr(&md, "| ");
				md_escape_cell(&md, cJSON_IsString(v) ? v->valuestring : txt ? txt : "");
				sbuf_addch(&md, ' ');
				free(txt);
			}
			sbuf_addstr(&md, "|\n");
		}
	}
	char *mtxt = cJSON_Print(manifest);
	sbuf_addf(&md, "\n## Run manifest\n\n```json\n%s\n```\n", mtxt ? mtxt : "{}");
	free(mtxt);
	cJSON *json = wf->render_json(full ? full : run);
	json_relative(json, root);
	cJSON_AddItemToObject(json, "operator_actions", journal);
	cJSON_AddItemToObject(json, "manifest", manifest);
	cJSON_AddBoolToObject(json, "final", final);
	char *jtxt = cJSON_Print(json);
	cJSON_Delete(json);
	char *html = export_html(md.data, base);
	/* SARIF (agents/review_sarif.c) for a workflow with findings, once it
	 * has them */
	cJSON *sarif = full ? wf->render_sarif(full) : NULL;
	json_relative(sarif, root);
	char *stxt = sarif ? cJSON_Print(sarif) : NULL;
	cJSON_Delete(sarif);
	const char *ext[] = { "md", "json", "html", "sarif" };
	const char *body[] = { md.data, jtxt ? jtxt : "{}", html, stxt };
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < 4 && body[i]; i++) {
		char *p = xasprintf("%s/%s.%s", dir, base, ext[i]);
		rc = util_write_file_atomic(p, body[i], strlen(body[i]), true, &err);
		free(p);
	}
	char result[512];
	if (rc == 0)
		snprintf(result, sizeof(result), "wrote %s/%s.{md,json,html%s}", dir, base,
			 stxt ? ",sarif" : "");
	else
		snprintf(result, sizeof(result), "failed: %s", err);
	cJSON *ids = cJSON_CreateArray();
	cJSON_AddItemToArray(ids, cJSON_CreateString(run_id));
	console_journal(c, "export", ids, result);
	console_status(c, rc < 0, "export: %s", result);
	cJSON_Delete(ids);
	free(err);
	free(dir);
	free(html);
	free(stxt);
	free(jtxt);
	sbuf_release(&md);
	free(root);
	cJSON_Delete(full);
	cJSON_Delete(run);
	return CONSOLE_REDRAW;
}

static unsigned reports_act(struct console *c, struct view *v, enum console_op op, int answer)
{
	(void)answer;
	switch (op) {
	case OP_OPEN:
		return reports_open(c, v);
	case OP_BACK:
		return reports_back(c, v);
	case OP_EXPORT:
		return reports_export(c, v);
	default:
		return CONSOLE_PASS;
	}
}

static const char *reports_enter_hint(const struct view *v)
{
	const struct reports *rp = v->data;
	return rp->open[0] ? "Esc draft" : "Enter open";
}

static void *reports_init(struct console *c)
{
	(void)c;
	return xcalloc(1, sizeof(struct reports));
}

static void reports_release(struct console *c, struct view *v)
{
	(void)c;
	struct reports *rp = v->data;
	if (rp)
		free(rp->sig);
	free(rp);
}

static const struct key_binding reports_keys[] = {
	{ 'e', OP_EXPORT, "export Markdown, JSON and HTML (and SARIF for a code review) to data/reports/exports", false, true, "export" },
};

const struct view_ops view_reports_ops = {
	.name = "reports",
	.title = "Reports",
	.help = "report draft of the current run",
	.keys = reports_keys,
	.nkeys = ARRAY_SIZE(reports_keys),
	.init = reports_init,
	.load = reports_refresh,
	.draw = reports_draw,
	.act = reports_act,
	.enter_hint = reports_enter_hint,
	.release = reports_release,
};
