#include "core/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define NS_PER_DAY INT64_C(86400000000000)

static const char *const cat_names[LOG_CAT_COUNT] = {
	[LOG_ERRORS] = "errors",	   [LOG_QUERIES] = "queries",
	[LOG_RESULTS] = "results",	   [LOG_DECISIONS] = "decisions",
	[LOG_CONFLICTS] = "conflicts",	   [LOG_RESOLUTIONS] = "resolutions",
	[LOG_EVENTS] = "events",
};

static const int cat_days[LOG_CAT_COUNT] = {
	[LOG_ERRORS] = 90,    [LOG_QUERIES] = 7,      [LOG_RESULTS] = 30,
	[LOG_DECISIONS] = 30, [LOG_CONFLICTS] = 30,   [LOG_RESOLUTIONS] = 30,
	[LOG_EVENTS] = 30,
};

struct log_file {
	int fd;
	char date[16];
};

struct log_writer {
	char *agent;
	char *dir; /* <log_dir>/agents/<agent> */
	pthread_mutex_t mu; /* guards files */
	struct log_file files[LOG_CAT_COUNT];
	atomic_size_t dropped;
	void (*sink)(void *ctx, const char *agent, const char *category,
		     const char *line, size_t len);
	void *sink_ctx;
};

const char *log_cat_name(enum log_cat c)
{
	if ((int)c < 0 || c >= LOG_CAT_COUNT)
		return "unknown";
	return cat_names[c];
}

const char *log_level_name(enum log_level l)
{
	switch (l) {
	case LOG_DEBUG:
		return "debug";
	case LOG_INFO:
		return "info";
	case LOG_WARN:
		return "warn";
	case LOG_ERROR:
		return "error";
	}
	return "unknown";
}

int log_cat_from_name(const char *s)
{
	for (int i = 0; s && i < LOG_CAT_COUNT; i++)
		if (!strcmp(s, cat_names[i]))
			return i;
	return -1;
}

int log_retention_days(enum log_cat c)
{
	if ((int)c < 0 || c >= LOG_CAT_COUNT)
		return 30;
	return cat_days[c];
}

int log_writer_open(const char *log_dir, const char *agent,
		   struct log_writer **out, char **err)
{
	*out = NULL;
	if (!log_dir || !*log_dir)
		return err_set(err, "agent log: no log directory");
	if (!util_valid_agent_name(agent))
		return err_set(err, "agent log: invalid agent name");
	struct log_writer *l = xcalloc(1, sizeof(*l));
	l->agent = xstrdup(agent);
	l->dir = xasprintf("%s/agents/%s", log_dir, agent);
	pthread_mutex_init(&l->mu, NULL);
	for (int i = 0; i < LOG_CAT_COUNT; i++)
		l->files[i].fd = -1;
	atomic_init(&l->dropped, 0);
	*out = l;
	return 0;
}

void log_writer_free(struct log_writer **lp)
{
	if (!lp || !*lp)
		return;
	struct log_writer *l = *lp;
	for (int i = 0; i < LOG_CAT_COUNT; i++)
		if (l->files[i].fd >= 0)
			close(l->files[i].fd);
	pthread_mutex_destroy(&l->mu);
	free(l->agent);
	free(l->dir);
	free(l);
	*lp = NULL;
}

size_t log_writer_dropped(const struct log_writer *l)
{
	return l ? atomic_load(&l->dropped) : 0;
}

void agent_log_set_sink(struct log_writer *l,
			void (*sink)(void *ctx, const char *agent, const char *category,
				     const char *line, size_t len),
			void *ctx)
{
	if (!l)
		return;
	l->sink = sink;
	l->sink_ctx = ctx;
}

const char *log_writer_owner(const struct log_writer *l)
{
	return l->agent;
}

/* s with every secret value from the environment replaced, then made
 * valid UTF-8 without control characters (except newline and tab). Done
 * before JSON encoding, since escaping could hide a secret from the
 * redaction of the whole line. */
static char *clean_text(const char *s)
{
	char *red = config_redact(s);
	/* util_sanitize of an empty string leaves its buffer unterminated. */
	char *out = *red ? util_sanitize(red, strlen(red), true) : xstrdup("");
	free(red);
	return out;
}

/* Whole-line redaction; NULL when it leaves text that is not JSON. */
static char *redact_line(const char *text)
{
	char *red = config_redact(text);
	if (!strcmp(red, text))
		return red;
	char *perr = NULL;
	cJSON *chk = json_parse_strict(red, strlen(red), &perr);
	free(perr);
	if (!chk) {
		free(red);
		return NULL;
	}
	cJSON_Delete(chk);
	return red;
}

/* A copy of j with valid UTF-8 and no control characters in every key and
 * string, repeated keys dropped, and nesting cut at MSG_MAX_DEPTH. */
static cJSON *clean_copy(const cJSON *j, int depth)
{
	if (depth >= MSG_MAX_DEPTH)
		return cJSON_CreateString("[nested too deep]");
	if (cJSON_IsObject(j)) {
		cJSON *o = cJSON_CreateObject();
		for (const cJSON *c = j->child; c; c = c->next) {
			char *k = clean_text(c->string ? c->string : "");
			if (!cJSON_GetObjectItemCaseSensitive(o, k))
				cJSON_AddItemToObject(o, k, clean_copy(c, depth + 1));
			free(k);
		}
		return o;
	}
	if (cJSON_IsArray(j)) {
		cJSON *a = cJSON_CreateArray();
		for (const cJSON *c = j->child; c; c = c->next)
			cJSON_AddItemToArray(a, clean_copy(c, depth + 1));
		return a;
	}
	if (cJSON_IsString(j) || cJSON_IsRaw(j)) {
		char *s = clean_text(j->valuestring ? j->valuestring : "");
		cJSON *r = cJSON_CreateString(s);
		free(s);
		return r;
	}
	if (cJSON_IsNumber(j))
		return cJSON_CreateNumber(j->valuedouble);
	if (cJSON_IsBool(j))
		return cJSON_CreateBool(cJSON_IsTrue(j));
	return cJSON_CreateNull();
}

static cJSON *line_head(const char *ts, const char *agent, enum log_cat cat,
			enum log_level lvl, const char *event,
			const char *message)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "ts", ts);
	cJSON_AddStringToObject(o, "level", log_level_name(lvl));
	cJSON_AddStringToObject(o, "agent", agent);
	cJSON_AddStringToObject(o, "category", log_cat_name(cat));
	cJSON_AddStringToObject(o, "event", event);
	cJSON_AddStringToObject(o, "message", message);
	return o;
}

/* The line, redacted, with its newline; NULL when cJSON ran out of
 * memory. */
static char *build_line(const struct log_writer *l, int64_t now,
			enum log_cat cat, enum log_level lvl,
			const char *event, const cJSON *fields,
			const char *message)
{
	char ts[64];
	util_iso8601(now, ts, sizeof(ts));
	char *ev = clean_text(event ? event : "log");
	char *msg = clean_text(message);
	/* A field "agent" naming another agent makes it the subject of the
	 * line (the product_manager logging a researcher's failure). */
	const cJSON *subj = cJSON_IsObject(fields)
				    ? cJSON_GetObjectItemCaseSensitive(fields, "agent")
				    : NULL;
	bool other = cJSON_IsString(subj) &&
		     util_valid_agent_name(subj->valuestring) &&
		     strcmp(subj->valuestring, l->agent);
	cJSON *o = line_head(ts, other ? subj->valuestring : l->agent, cat, lvl,
			     ev, msg);
	if (other)
		cJSON_AddStringToObject(o, "logged_by", l->agent);
	for (const cJSON *f = cJSON_IsObject(fields) ? fields->child : NULL; f;
	     f = f->next) {
		if (f == subj && cJSON_IsString(f) &&
		    util_valid_agent_name(f->valuestring))
			continue;
		char *k = clean_text(f->string ? f->string : "");
		if (cJSON_GetObjectItemCaseSensitive(o, k) ||
		    !strcmp(k, "logged_by")) {
			char *renamed = xasprintf("field_%s", k);
			free(k);
			k = renamed;
		}
		if (!cJSON_GetObjectItemCaseSensitive(o, k))
			cJSON_AddItemToObject(o, k, clean_copy(f, 1));
		free(k);
	}
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text) {
		free(ev);
		free(msg);
		return NULL;
	}
	char *red = redact_line(text);
	if (!red) {
		/* A secret straddling JSON syntax: keep only the header. */
		o = line_head(ts, l->agent, cat, lvl, ev,
			      "[line withheld: it carried a secret value]");
		char *t2 = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		red = t2 ? redact_line(t2) : NULL;
		cJSON_free(t2);
	}
	cJSON_free(text);
	free(ev);
	free(msg);
	if (!red)
		return NULL;
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, red);
	sbuf_addch(&b, '\n');
	free(red);
	return sbuf_detach(&b);
}

/* Returns the descriptor for cat and date, opening it (and creating its
 * directory) when needed. Called with l->mu held. */
static int file_for(struct log_writer *l, enum log_cat cat, const char *date)
{
	struct log_file *f = &l->files[cat];
	if (f->fd >= 0 && !strcmp(f->date, date)) {
		struct stat st;
		/* Reopen when the file was removed under us. */
		if (fstat(f->fd, &st) == 0 && st.st_nlink > 0)
			return f->fd;
	}
	if (f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
	char *dir = xasprintf("%s/%s", l->dir, log_cat_name(cat));
	char *path = xasprintf("%s/%s.jsonl", dir, date);
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	int fd = open(path, flags, 0644);
	if (fd < 0 && errno == ENOENT && util_mkdirs(dir, NULL) == 0)
		fd = open(path, flags, 0644);
	free(dir);
	free(path);
	if (fd < 0)
		return -1;
	f->fd = fd;
	util_strlcpy(f->date, date, sizeof(f->date));
	return fd;
}

void log_vwrite(struct log_writer *l, enum log_cat cat, enum log_level lvl,
		const char *event, const cJSON *fields, const char *fmt,
		va_list ap)
{
	if (!l)
		return;
	if ((int)cat < 0 || cat >= LOG_CAT_COUNT) {
		atomic_fetch_add(&l->dropped, 1);
		return;
	}
	int64_t now = util_now_ns();
	char *message = fmt ? xvasprintf(fmt, ap) : xstrdup("");
	char *line = build_line(l, now, cat, lvl, event, fields, message);
	free(message);
	if (!line) {
		atomic_fetch_add(&l->dropped, 1);
		return;
	}
	size_t len = strlen(line);
	char date[16];
	util_date(now, date, sizeof(date));
	bool ok = false;
	pthread_mutex_lock(&l->mu);
	int fd = file_for(l, cat, date);
	if (fd >= 0) {
		ssize_t w;
		do
			w = write(fd, line, len);
		while (w < 0 && errno == EINTR);
		ok = w == (ssize_t)len;
	}
	pthread_mutex_unlock(&l->mu);
	if (l->sink)
		l->sink(l->sink_ctx, l->agent, log_cat_name(cat), line, len - 1);
	free(line);
	if (!ok)
		atomic_fetch_add(&l->dropped, 1);
}

void log_write(struct log_writer *l, enum log_cat cat, enum log_level lvl,
	       const char *event, const cJSON *fields, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vwrite(l, cat, lvl, event, fields, fmt, ap);
	va_end(ap);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* "YYYY-MM-DD.jsonl" gives its day number; false for any other name. */
static bool dated_name(const char *name, int64_t *day)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (strlen(name) != 16 || strcmp(name + 10, ".jsonl") ||
	    name[4] != '-' || name[7] != '-')
		return false;
	int v[3] = { 0, 0, 0 };
	static const int at[3] = { 0, 5, 8 }, n[3] = { 4, 2, 2 };
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < n[i]; k++) {
			char c = name[at[i] + k];
			if (c < '0' || c > '9')
				return false;
			v[i] = v[i] * 10 + (c - '0');
		}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1)
		return false;
	int md = mdays[v[1] - 1] + (v[1] == 2 && leap(v[0]));
	if (v[2] > md)
		return false;
	*day = days_from_civil(v[0], v[1], v[2]);
	return true;
}

static int64_t floor_day(int64_t ns)
{
	return ns >= 0 ? ns / NS_PER_DAY : -((-ns + NS_PER_DAY - 1) / NS_PER_DAY);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int gc_category(const char *dir, enum log_cat cat, int64_t today,
		       bool dry_run,
		       void (*report)(void *, const char *, const char *),
		       void *ctx, char **err)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR
			       ? 0
			       : err_set(err, "cannot open %s: %s", dir,
					 strerror(errno));
	int r = 0;
	char what[64];
	snprintf(what, sizeof(what), "%s log over %d days", log_cat_name(cat),
		 log_retention_days(cat));
	struct dirent *de;
	while ((de = readdir(d))) {
		int64_t day;
		if (!dated_name(de->d_name, &day) ||
		    today - day <= log_retention_days(cat))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) < 0 || S_ISDIR(st.st_mode)) {
			free(p);
			continue;
		}
		if (report)
			report(ctx, what, p);
		if (!dry_run && unlink(p) < 0 && errno != ENOENT && r == 0)
			r = err_set(err, "cannot remove %s: %s", p, strerror(errno));
		free(p);
	}
	closedir(d);
	return r;
}

int log_gc(const char *log_dir, int64_t now_ns, bool dry_run,
	   void (*report)(void *ctx, const char *what, const char *path),
	   void *ctx, char **err)
{
	char *root = xasprintf("%s/agents", log_dir);
	DIR *d = opendir(root);
	if (!d) {
		int e = errno;
		int r = e == ENOENT ? 0
				    : err_set(err, "cannot open %s: %s", root,
					      strerror(e));
		free(root);
		return r;
	}
	int64_t today = floor_day(now_ns);
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *adir = xasprintf("%s/%s", root, de->d_name);
		if (!is_dir(adir)) {
			free(adir);
			continue;
		}
		for (int c = 0; c < LOG_CAT_COUNT; c++) {
			char *cdir = xasprintf("%s/%s", adir, cat_names[c]);
			char *e = NULL;
			if (gc_category(cdir, (enum log_cat)c, today, dry_run,
					report, ctx, &e) < 0 && r == 0)
				r = err_set(err, "%s", e);
			free(e);
			free(cdir);
		}
		free(adir);
	}
	closedir(d);
	free(root);
	return r;
}
