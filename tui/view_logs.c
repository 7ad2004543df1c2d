/* View 4, logs: one agent's structured log lines, every category of its
 * newest day merged by time, following new lines, with a level filter. */
#include <curses.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

#define LOGS_MAX_LINES 5000

struct log_line {
	char *ts;
	char *text;
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

unsigned view_logs_refresh(struct console *c)
{
	struct console_rows *r = &c->rows[VIEW_LOGS];
	char *dir = xasprintf("%s/agents/%s", c->cli->log_dir, c->log_agent);
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
	sbuf_addf(&sig, "%d", c->log_level);
	/* a window moves with the clock: read again every 5 s */
	int64_t since_ns = c->log_since_s ? util_now_ns() - c->log_since_s * 1000000000LL : 0;
	if (c->log_since_s)
		sbuf_addf(&sig, ":%lld:%lld", (long long)c->log_since_s,
			  (long long)(util_now_ns() / 5000000000LL));
	unsigned f = 0;
	if (!c->log_sig || strcmp(c->log_sig, sig.data) || !r->nvis) {
		free(c->log_sig);
		c->log_sig = sbuf_detach(&sig);
		struct log_line *lines = NULL;
		size_t n = 0;
		for (size_t i = 0; i < nf; i++)
			logs_read(files[i], c->log_level, since_ns, &lines, &n);
		if (n)
			qsort(lines, n, sizeof(*lines), line_cmp);
		console_rows_clear(r);
		size_t from = n > LOGS_MAX_LINES ? n - LOGS_MAX_LINES : 0;
		for (size_t i = 0; i < n; i++) {
			if (i >= from) {
				char id[32];
				snprintf(id, sizeof(id), "%zu", i);
				console_rows_add(r, id, lines[i].level >= 3 ? SLOT_ERROR :
						 lines[i].level == 2 ? SLOT_WARN : lines[i].level == 0 ?
						 SLOT_DIM : SLOT_NORMAL, "%s", lines[i].text);
			}
			free(lines[i].ts);
			free(lines[i].text);
		}
		free(lines);
		f = console_rows_done(c, r);
		if (c->log_follow && r->nvis) {
			r->sel = r->nvis - 1;
			free(r->sel_id);
			r->sel_id = NULL;
			f |= CONSOLE_REDRAW;
		}
	}
	sbuf_release(&sig);
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	free(files);
	free(dir);
	return f;
}

void view_logs_draw(struct console *c, int y0, int y1)
{
	static const char *const levels[] = { "debug", "info", "warn", "error" };
	char line[256];
	char window[32] = "all day";
	if (c->log_since_s)
		snprintf(window, sizeof(window), "since %s", c->log_since);
	snprintf(line, sizeof(line), " logs of %s   level %s and above   %s   follow %s   "
		 "(:logs NAME, v level, f follow, :since 10m)", c->log_agent, levels[c->log_level & 3],
		 window, c->log_follow ? "on" : "off");
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	console_rows_draw(c, &c->rows[VIEW_LOGS], y0 + 1, y1,
			  " TIME         LEVEL CATEGORY    EVENT              MESSAGE");
}
