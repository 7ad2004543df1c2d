/* View 4, logs: one agent's structured log lines, every category of its
 * newest day merged by time, following new lines, with a level filter;
 * Enter opens a pane with every field of the selected line, wrapped. */
#include <curses.h>
#include <dirent.h>
#include <fcntl.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/log.h"
#include "core/util.h"
#include "tui/console.h"
#include "tui/wrap.h"
#include "core/banned.h"

#define LOGS_MAX_LINES 5000

/* The logs view's state (view->data). */
struct logs {
	char agent[MSG_AGENT_MAX + 1];
	int level;           /* minimum level shown, 0 debug .. 3 error */
	bool follow;
	char *sig;           /* sizes and mtimes of the files read */
	int64_t since_s;     /* :since: lines older than this hidden; 0 all */
	char since[16];      /* as typed, for the header */
	bool open;           /* the selected line's detail pane is shown */
	int64_t mirrored_ns; /* on a bus that carries logs: last copy (monotonic) */
	char mirror_err[256];/* what the last copy said, "" when it worked */
};

/* A line's row id is "<byte offset>@<file>": stable across refreshes,
 * and where the detail pane reads the whole line back from. */
struct log_line {
	char *ts;
	char *text;
	char *id;
	int level;
};

static int line_cmp(const void *a, const void *b)
{
	const struct log_line *x = a, *y = b;
	return strcmp(x->ts, y->ts);
}

static int level_of(const char *s)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return 1;
}

/* The newest <date>.jsonl of each category directory. */
static size_t logs_files(const char *dir, char ***out)
{
	char **v = NULL;
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || log_cat_from_name(e->d_name) < 0)
			continue;
		char *cdir = xasprintf("%s/%s", dir, e->d_name);
		DIR *cd = opendir(cdir);
		struct dirent *f;
		char best[64] = "";
		while (cd && (f = readdir(cd))) {
			size_t len = strlen(f->d_name);
			if (len > 6 && !strcmp(f->d_name + len - 6, ".jsonl") && strcmp(f->d_name, best) > 0)
				util_strlcpy(best, f->d_name, sizeof(best));
		}
		if (cd)
			closedir(cd);
		if (best[0]) {
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = xasprintf("%s/%s", cdir, best);
		}
		free(cdir);
	}
	if (d)
		closedir(d);
	*out = v;
	return n;
}

/* Lines at min_level or above, and (since_ns > 0) not older than since_ns. */
static void logs_read(const char *path, int min_level, int64_t since_ns, struct log_line **lines,
		      size_t *n)
{
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	if (util_read_file(path, 64u << 20, &buf, &len, &err) < 0) {
		free(err);
		return;
	}
	char *save = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t off = (size_t)(l - buf);
		cJSON *j = cJSON_Parse(l);
		if (!j)
			continue;
		const cJSON *ts = cJSON_GetObjectItem(j, "ts"), *lv = cJSON_GetObjectItem(j, "level");
		const cJSON *cat = cJSON_GetObjectItem(j, "category"), *ev = cJSON_GetObjectItem(j, "event");
		const cJSON *msg = cJSON_GetObjectItem(j, "message");
		int level = level_of(cJSON_IsString(lv) ? lv->valuestring : "info");
		int64_t t_ns = 0;
		bool old = since_ns > 0 && cJSON_IsString(ts) && msg_parse_time(ts->valuestring, &t_ns) == 0 &&
			   t_ns < since_ns;
		if (level >= min_level && !old) {
			const char *t = cJSON_IsString(ts) ? ts->valuestring : "";
			*lines = xrealloc(*lines, (*n + 1) * sizeof(**lines));
			struct log_line *o = &(*lines)[(*n)++];
			o->ts = xstrdup(t);
			o->id = xasprintf("%zu@%s", off, path);
			o->level = level;
			o->text = xasprintf("%.12s %-5s %-11.11s %-18.18s %s", strlen(t) > 11 ? t + 11 : t,
					    cJSON_IsString(lv) ? lv->valuestring : "?",
					    cJSON_IsString(cat) ? cat->valuestring : "?",
					    cJSON_IsString(ev) ? ev->valuestring : "?",
					    cJSON_IsString(msg) ? msg->valuestring : "");
		}
		cJSON_Delete(j);
	}
	free(buf);
}

/* Where the logs are read: the log directory, or on a bus that carries
 * logs (NATS) the local copy of every agent's log, wherever it ran, brought
 * up to date at most once a second. Caller frees. */
static char *logs_root(struct console *c, struct logs *lg)
{
	if (!bus_carries_logs(c->bus))
		return xstrdup(c->cli->log_dir);
	char *dir = xasprintf("%s/bus-logs", c->cli->data_dir);
	if (util_mono_ns() - lg->mirrored_ns >= 1000000000LL) {
		lg->mirrored_ns = util_mono_ns();
		char *err = NULL;
		lg->mirror_err[0] = '\0';
		if (bus_log_mirror(c->bus, dir, &err) < 0)
			util_strlcpy(lg->mirror_err, err ? err : "?", sizeof(lg->mirror_err));
		free(err);
	}
	return dir;
}

static unsigned logs_refresh(struct console *c, struct view *v, bool shown)
{
	if (!shown)
		return 0;
	struct logs *lg = v->data;
	struct console_rows *r = &v->rows;
	char *root = logs_root(c, lg);
	char *dir = xasprintf("%s/agents/%s", root, lg->agent);
	free(root);
	char **files = NULL;
	size_t nf = logs_files(dir, &files);
	struct sbuf sig;
	sbuf_init(&sig);
	for (size_t i = 0; i < nf; i++) {
		struct stat st;
		if (stat(files[i], &st) == 0)
			sbuf_addf(&sig, "%s:%lld:%lld;", files[i], (long long)st.st_size,
				  (long long)st.st_mtim.tv_nsec);
	}
	sbuf_addf(&sig, "%d", lg->level);
	/* a window moves with the clock: read again every 5 s */
	int64_t since_ns = lg->since_s ? util_now_ns() - lg->since_s * 1000000000LL : 0;
	if (lg->since_s)
		sbuf_addf(&sig, ":%lld:%lld", (long long)lg->since_s,
			  (long long)(util_now_ns() / 5000000000LL));
	unsigned f = 0;
	if (!lg->sig || strcmp(lg->sig, sig.data) || !r->nvis) {
		free(lg->sig);
		lg->sig = sbuf_detach(&sig);
		struct log_line *lines = NULL;
		size_t n = 0;
		for (size_t i = 0; i < nf; i++)
			logs_read(files[i], lg->level, since_ns, &lines, &n);
		if (n)
			qsort(lines, n, sizeof(*lines), line_cmp);
		console_rows_clear(r);
		size_t from = n > LOGS_MAX_LINES ? n - LOGS_MAX_LINES : 0;
		for (size_t i = 0; i < n; i++) {
			if (i >= from) {
				console_rows_add(r, lines[i].id, lines[i].level >= 3 ? SLOT_ERROR :
						 lines[i].level == 2 ? SLOT_WARN : lines[i].level == 0 ?
						 SLOT_DIM : SLOT_NORMAL, "%s", lines[i].text);
			}
			free(lines[i].ts);
			free(lines[i].text);
			free(lines[i].id);
		}
		free(lines);
		f = console_rows_done(c, r);
		if (lg->follow && r->nvis) {
			r->sel = r->nvis - 1;
			free(r->sel_id);
			r->sel_id = NULL;
			f |= CONSOLE_REDRAW;
		}
	} else if (!r->hash) {
		/* the same lines under a new filter (or back to this view) */
		f = console_rows_done(c, r);
	}
	sbuf_release(&sig);
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	free(dir);
	return f;
}

/* The whole line of a row id "<offset>@<file>", read back from its file;
 * NULL when it is gone. Caller frees. */
#define LOGS_LINE_MAX (1u << 20)

static char *logs_line_read(const char *id)
{
	char *end = NULL;
	unsigned long long off = strtoull(id, &end, 10);
	if (!end || *end != '@')
		return NULL;
	int fd = open(end + 1, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = xmalloc(LOGS_LINE_MAX + 1);
	ssize_t k = pread(fd, buf, LOGS_LINE_MAX, (off_t)off);
	close(fd);
	if (k <= 0) {
		free(buf);
		return NULL;
	}
	buf[k] = 0;
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return buf;
}

/* Every field of the line as "key: value" lines (strings as they are,
 * other values as compact JSON), sanitised, wrapped to width with the
 * continuation lines indented under the value. */
static size_t logs_detail_lines(const char *id, size_t width, char ***out)
{
	char *raw = logs_line_read(id);
	cJSON *j = raw ? cJSON_Parse(raw) : NULL;
	char **v = NULL;
	size_t n = 0;
	if (!j) {
		char *t = xasprintf("%s", raw ? raw : "(the line is no longer in its file)");
		char *clean = util_sanitize(t, strlen(t), false);
		n = wrap_text(clean, width, 0, &v);
		free(clean);
		free(t);
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, j) {
		char *val = cJSON_IsString(it) ? xstrdup(it->valuestring) : cJSON_PrintUnformatted(it);
		char *t = xasprintf("%-9s %s", it->string ? it->string : "?", val ? val : "");
		free(val);
		/* newlines inside a value stay line breaks, under the value */
		char *clean = util_sanitize(t, strlen(t), true);
		free(t);
		size_t key = strlen(it->string ? it->string : "?");
		char **w = NULL;
		size_t nw = wrap_text(clean, width, (key < 9 ? 9 : key) + 1, &w);
		v = xrealloc(v, (n + nw) * sizeof(*v));
		memcpy(v + n, w, nw * sizeof(*w));
		n += nw;
		free(w);
		free(clean);
	}
	cJSON_Delete(j);
	free(raw);
	*out = v;
	return n;
}

/* Enter: opens (or closes) the pane with every field of the selected line;
 * Esc closes it (passed on when it was not open). */
static unsigned logs_open(struct console *c, struct view *v)
{
	struct logs *lg = v->data;
	struct console_row *cur = console_rows_current(&v->rows);
	if (!cur || !cur->id)
		return 0;
	lg->open = !lg->open;
	console_status(c, false, lg->open ? "the whole line below (Enter or Esc closes it)" : "");
	return CONSOLE_REDRAW;
}

static unsigned logs_back(struct console *c, struct view *v)
{
	struct logs *lg = v->data;
	if (!lg->open)
		return CONSOLE_PASS;
	lg->open = false;
	c->status[0] = 0;
	return CONSOLE_REDRAW;
}

/* The detail pane between y0 and y1: a rule, then the lines. */
static void logs_draw_detail(struct console *c, char **lines, size_t n, int y0, int y1)
{
	const char *cs = nl_langinfo(CODESET);
	const char *rule = cs && !strcmp(cs, "UTF-8") ? "\xe2\x94\x80" : "-";
	move(y0, 0);
	for (int x = 0; x < COLS; x++)
		addstr(rule);
	int y = y0 + 1;
	for (size_t i = 0; i < n && y < y1; i++, y++) {
		if (y == y1 - 1 && i + 1 < n) {
			char more[64];
			snprintf(more, sizeof(more), "... %zu more line%s", n - i, n - i == 1 ? "" : "s");
			console_put(c, y, 1, COLS - 1, SLOT_DIM, more, false);
			break;
		}
		console_put(c, y, 1, COLS - 1, SLOT_NORMAL, lines[i], false);
	}
}

static void logs_draw(struct console *c, struct view *v, int y0, int y1)
{
	struct logs *lg = v->data;
	static const char *const levels[] = { "debug", "info", "warn", "error" };
	char line[256];
	char window[32] = "all day";
	if (lg->since_s)
		snprintf(window, sizeof(window), "since %s", lg->since);
	snprintf(line, sizeof(line), " logs of %s   level %s and above   %s   follow %s", lg->agent,
		 levels[lg->level & 3], window, lg->follow ? "on" : "off");
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	/* where they come from: the log directory, or the bus's logs copied */
	bool onbus = bus_carries_logs(c->bus);
	char *dir = xasprintf("%s/agents/%s", onbus ? "bus-logs" : c->cli->log_dir, lg->agent);
	struct stat st;
	char *path = onbus ? xasprintf("%s/%s", c->cli->data_dir, dir) : xstrdup(dir);
	const char *none = stat(path, &st) == 0 ? "" : onbus ? " (none yet)" : " (no such directory)";
	char *from;
	if (onbus && lg->mirror_err[0])
		from = xasprintf(" from the bus, copied so far to %s: %s", path, lg->mirror_err);
	else
		from = xasprintf(" from %s%s/%s   (:logs NAME, v level, f follow, :since 10m, Enter the line)",
				 onbus ? "the bus, copied to " : "", path, none);
	free(path);
	console_put(c, y0 + 1, 0, COLS, SLOT_DIM, from, true);
	free(from);
	free(dir);
	const char *hdr = " TIME         LEVEL CATEGORY    EVENT              MESSAGE";
	struct console_rows *r = &v->rows;
	struct console_row *cur = console_rows_current(r);
	if (!lg->open || !cur || !cur->id) {
		console_rows_draw(c, r, y0 + 2, y1, hdr);
		return;
	}
	char **lines = NULL;
	size_t n = logs_detail_lines(cur->id, COLS > 10 ? (size_t)COLS - 2 : 8, &lines);
	/* the list keeps a header and 3 rows; the pane takes what it needs of the rest */
	int avail = y1 - (y0 + 2) - 4 - 1;
	int pane = (int)n < avail ? (int)n : avail;
	if (pane < 1)
		pane = 1;
	int mid = y1 - pane - 1;
	console_rows_draw(c, r, y0 + 2, mid, hdr);
	logs_draw_detail(c, lines, n, mid, y1);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

unsigned view_logs_show(struct console *c, const char *agent)
{
	struct view *v = console_view_find(c, &view_logs_ops);
	struct logs *lg = v->data;
	util_strlcpy(lg->agent, agent, sizeof(lg->agent));
	free(lg->sig);
	lg->sig = NULL;
	console_show(c, v);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

unsigned view_logs_since(struct console *c, const char *arg)
{
	struct view *v = console_view_find(c, &view_logs_ops);
	struct logs *lg = v->data;
	char unit = 0, extra = 0;
	long long n = 0;
	if (!strcmp(arg, "all") || !*arg) {
		lg->since_s = 0;
		lg->since[0] = 0;
		console_status(c, false, "logs: every line of the day");
	} else if (sscanf(arg, "%lld%c%c", &n, &unit, &extra) == 2 && n > 0 && n < 100000 &&
		   strchr("smhd", unit)) {
		lg->since_s = n * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400);
		util_strlcpy(lg->since, arg, sizeof(lg->since));
		console_status(c, false, "logs: the last %s", arg);
	} else {
		console_status(c, true, ":since takes a duration like 90s, 10m, 2h, 1d, or all");
		return CONSOLE_REDRAW;
	}
	free(lg->sig);
	lg->sig = NULL;
	console_show(c, v);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

static unsigned logs_act(struct console *c, struct view *v, enum console_op op, int answer)
{
	(void)answer;
	struct logs *lg = v->data;
	switch (op) {
	case OP_OPEN:
		return logs_open(c, v);
	case OP_BACK:
		return logs_back(c, v);
	case OP_LEVEL:
		lg->level = (lg->level + 1) % 4;
		console_status(c, false, "logs: level %s and above",
			       (const char *[]){ "debug", "info", "warn", "error" }[lg->level]);
		free(lg->sig);
		lg->sig = NULL;
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_FOLLOW:
		lg->follow = !lg->follow;
		console_status(c, false, "follow %s", lg->follow ? "on" : "off");
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	default:
		return CONSOLE_PASS;
	}
}

/* Following new lines while the cursor is on the last one. */
static void logs_moved(struct console *c, struct view *v)
{
	(void)c;
	struct logs *lg = v->data;
	lg->follow = v->rows.sel + 1 >= v->rows.nvis;
}

static const char *logs_enter_hint(const struct view *v)
{
	(void)v;
	return "Enter read";
}

static void *logs_init(struct console *c)
{
	(void)c;
	struct logs *lg = xcalloc(1, sizeof(*lg));
	util_strlcpy(lg->agent, "product_manager", sizeof(lg->agent));
	lg->level = 1;
	lg->follow = true;
	return lg;
}

static void logs_release(struct console *c, struct view *v)
{
	(void)c;
	struct logs *lg = v->data;
	if (lg)
		free(lg->sig);
	free(lg);
}

static const struct key_binding logs_keys[] = {
	{ 'v', OP_LEVEL, "cycle the lowest level shown", false, false, "level" },
	{ 'f', OP_FOLLOW, "follow new lines on or off", false, false, "follow" },
};

const struct view_ops view_logs_ops = {
	.name = "logs",
	.title = "Logs",
	.help = "logs of one agent",
	.keys = logs_keys,
	.nkeys = ARRAY_SIZE(logs_keys),
	.init = logs_init,
	.load = logs_refresh,
	.draw = logs_draw,
	.act = logs_act,
	.moved = logs_moved,
	.enter_hint = logs_enter_hint,
	.release = logs_release,
};
