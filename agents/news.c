/* News stories: JSON lines (cJSON), RSS 2.0 and Atom 1.0 (expat), and the
 * simulated feed. */
#include "agents/news.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/market.h"
#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S INT64_C(1000000000)

/* Dates. */

static bool read_digits(const char *s, size_t n, int *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

/* Seconds since the epoch for a UTC wall time minus a zone offset. */
static int to_ns(int y, int mo, int d, int h, int mi, int s, int off_min,
		 int64_t frac_ns, int64_t *t_ns)
{
	if (!market_ymd_valid(y, mo, d) || h > 23 || mi > 59 || s > 60)
		return -1;
	int64_t secs = (int64_t)market_day_from_ymd(y, mo, d) * 86400 +
		       h * 3600 + mi * 60 + s - (int64_t)off_min * 60;
	/* int64 nanoseconds reach from 1677 to 2262. */
	if (secs < -INT64_C(9000000000) || secs > INT64_C(9000000000))
		return -1;
	*t_ns = secs * NS_PER_S + frac_ns;
	return 0;
}

int news_parse_rfc3339(const char *s, size_t len, int64_t *t_ns)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, off = 0;
	if (len < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' ||
	    s[16] != ':')
		return -1;
	if (!read_digits(s, 4, &y) || !read_digits(s + 5, 2, &mo) ||
	    !read_digits(s + 8, 2, &d) || !read_digits(s + 11, 2, &h) ||
	    !read_digits(s + 14, 2, &mi) || !read_digits(s + 17, 2, &sec))
		return -1;
	size_t i = 19;
	int64_t frac = 0;
	if (i < len && s[i] == '.') {
		size_t nd = 0;
		int64_t scale = NS_PER_S;
		for (i++; i < len && isdigit((unsigned char)s[i]); i++, nd++) {
			if (nd < 9) {
				scale /= 10;
				frac += (s[i] - '0') * scale;
			}
		}
		if (!nd)
			return -1;
	}
	if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
		i++;
	} else if (i + 6 == len && (s[i] == '+' || s[i] == '-') &&
		   s[i + 3] == ':') {
		if (!read_digits(s + i + 1, 2, &oh) ||
		    !read_digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
			return -1;
		off = (oh * 60 + om) * (s[i] == '-' ? -1 : 1);
		i += 6;
	} else {
		return -1;
	}
	if (i != len)
		return -1;
	return to_ns(y, mo, d, h, mi, sec, off, frac, t_ns);
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* Reads 1..max digits. */
static const char *take_num(const char *p, size_t min, size_t max, int *v,
			    size_t *nd)
{
	*v = 0;
	*nd = 0;
	while (*nd < max && isdigit((unsigned char)p[*nd])) {
		*v = *v * 10 + (p[*nd] - '0');
		(*nd)++;
	}
	return *nd >= min ? p + *nd : NULL;
}

static int month_index(const char *p)
{
	static const char names[] = "janfebmaraprmayjunjulaugsepoctnovdec";
	for (int m = 0; m < 12; m++)
		if (!strncasecmp(p, names + 3 * m, 3))
			return m + 1;
	return 0;
}

static bool zone_offset(const char *z, size_t n, int *off_min)
{
	static const struct {
		const char *name;
		int hours;
	} zones[] = {
		{ "GMT", 0 }, { "UT", 0 }, { "UTC", 0 }, { "Z", 0 },
		{ "EST", -5 }, { "EDT", -4 }, { "CST", -6 }, { "CDT", -5 },
		{ "MST", -7 }, { "MDT", -6 }, { "PST", -8 }, { "PDT", -7 },
	};
	if (n == 5 && (z[0] == '+' || z[0] == '-')) {
		int hh, mm;
		if (!read_digits(z + 1, 2, &hh) || !read_digits(z + 3, 2, &mm) ||
		    hh > 23 || mm > 59)
			return false;
		*off_min = (hh * 60 + mm) * (z[0] == '-' ? -1 : 1);
		return true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(zones); i++) {
		if (strlen(zones[i].name) == n &&
		    !strncasecmp(z, zones[i].name, n)) {
			*off_min = zones[i].hours * 60;
			return true;
		}
	}
	return false;
}

int news_parse_rfc822(const char *s, int64_t *t_ns)
{
	static const char days[] = "montuewedthufrisatsun";
	const char *p = skip_ws(s);
	int d, mo, y, h, mi, sec = 0, off;
	size_t nd;
	if (isalpha((unsigned char)p[0])) {
		bool ok = false;
		for (int i = 0; i < 7 && !ok; i++)
			ok = !strncasecmp(p, days + 3 * i, 3);
		if (!ok)
			return -1;
		p = skip_ws(p + 3);
		if (*p != ',')
			return -1;
		p = skip_ws(p + 1);
	}
	if (!(p = take_num(p, 1, 2, &d, &nd)) || *p != ' ')
		return -1;
	p = skip_ws(p);
	if (!(mo = month_index(p)) || p[3] != ' ')
		return -1;
	p = skip_ws(p + 3);
	if (!(p = take_num(p, 2, 4, &y, &nd)) || *p != ' ')
		return -1;
	if (nd == 2)
		y += y < 50 ? 2000 : 1900;
	else if (nd == 3)
		y += 1900;
	p = skip_ws(p);
	if (!(p = take_num(p, 2, 2, &h, &nd)) || *p != ':')
		return -1;
	if (!(p = take_num(p + 1, 2, 2, &mi, &nd)))
		return -1;
	if (*p == ':' && !(p = take_num(p + 1, 2, 2, &sec, &nd)))
		return -1;
	if (*p != ' ' && *p != '\t')
		return -1;
	p = skip_ws(p);
	const char *z = p;
	while (*p && !isspace((unsigned char)*p) && *p != '(')
		p++;
	if (!zone_offset(z, (size_t)(p - z), &off))
		return -1;
	p = skip_ws(p);
	if (*p == '(') {
		while (*p && *p != ')')
			p++;
		if (*p != ')')
			return -1;
		p = skip_ws(p + 1);
	}
	if (*p)
		return -1;
	return to_ns(y, mo, d, h, mi, sec, off, 0, t_ns);
}

/* A printable copy of outside text for a message (caller frees). */
static char *printable(const char *s)
{
	size_t n = strlen(s);
	return n ? util_sanitize(s, n, false) : xstrdup("");
}

/* Items and lists. */

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void strv_add(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

void news_item_release(struct news_item *it)
{
	if (!it)
		return;
	free(it->id);
	free(it->source);
	free(it->title);
	free(it->body);
	free(it->dateline);
	free(it->url);
	strv_free(it->topics, it->ntopics);
	strv_free(it->places, it->nplaces);
	strv_free(it->orgs, it->norgs);
	memset(it, 0, sizeof(*it));
}

void news_list_release(struct news_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		news_item_release(&l->items[i]);
	free(l->items);
	free(l->warnings);
	memset(l, 0, sizeof(*l));
}

bool news_item_has_topic(const struct news_item *it, const char *topic)
{
	for (size_t i = 0; i < it->ntopics; i++)
		if (!strcmp(it->topics[i], topic))
			return true;
	return false;
}

/* Fills NULL strings with "" so every string of an item is allocated. */
static void item_fill(struct news_item *it, const char *default_source)
{
	char **f[] = { &it->id, &it->title, &it->body, &it->dateline,
		       &it->url };
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (!*f[i])
			*f[i] = xstrdup("");
	if (!it->source)
		it->source = xstrdup(default_source ? default_source : "");
}

/* Collecting a list: items, counts and the first warnings. */
struct collect {
	struct news_list *out;
	size_t cap;
	struct sbuf warn;
	int64_t from, to;
};

static void collect_init(struct collect *c, struct news_list *out,
			 int64_t from, int64_t to)
{
	memset(out, 0, sizeof(*out));
	c->out = out;
	c->cap = 0;
	sbuf_init(&c->warn);
	c->from = from;
	c->to = to;
}

static void collect_warn(struct collect *c, const char *name, long line,
			 const char *why)
{
	if (c->out->nbad++ < NEWS_WARN_MAX)
		sbuf_addf(&c->warn, "%s:%ld: %s\n", name, line, why);
}

static bool collect_in_range(const struct collect *c, int64_t t)
{
	return t >= c->from && t < c->to;
}

/* Takes over *it (in range) or releases it and counts it (out of range). */
static void collect_item(struct collect *c, struct news_item *it)
{
	if (!collect_in_range(c, it->published_ns)) {
		c->out->nout++;
		news_item_release(it);
		return;
	}
	struct news_list *l = c->out;
	if (l->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		l->items = xrealloc(l->items, c->cap * sizeof(*l->items));
	}
	l->items[l->n++] = *it;
	memset(it, 0, sizeof(*it));
}

struct sort_key {
	int64_t t;
	size_t i;
};

static int sort_key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Sorts by time, stable, and hands the warnings over. */
static void collect_finish(struct collect *c)
{
	struct news_list *l = c->out;
	if (l->n > 1) {
		struct sort_key *k = xmalloc(l->n * sizeof(*k));
		for (size_t i = 0; i < l->n; i++)
			k[i] = (struct sort_key){ l->items[i].published_ns, i };
		qsort(k, l->n, sizeof(*k), sort_key_cmp);
		struct news_item *v = xmalloc(l->n * sizeof(*v));
		for (size_t i = 0; i < l->n; i++)
			v[i] = l->items[k[i].i];
		free(l->items);
		free(k);
		l->items = v;
	}
	l->warnings = c->warn.len ? sbuf_detach(&c->warn) : NULL;
	sbuf_release(&c->warn);
}

static void collect_abort(struct collect *c)
{
	sbuf_release(&c->warn);
	news_list_release(c->out);
}

static const char *path_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* JSON lines. */

enum jkey { JK_ID, JK_SOURCE, JK_PUBLISHED, JK_TOPICS, JK_PLACES, JK_ORGS,
	    JK_TITLE, JK_DATELINE, JK_BODY, JK_URL, JK_N };

static const char *const jkeys[JK_N] = {
	"id", "source", "published_at", "topics", "places", "orgs",
	"title", "dateline", "body", "url",
};

/* A string field: string, or null / absent when optional. */
static int json_text(const cJSON *v, const char *key, bool required,
		     char **out, char **why)
{
	if (!v || cJSON_IsNull(v)) {
		if (required)
			return err_set(why, "no \"%s\"", key);
		return 0;
	}
	if (!cJSON_IsString(v) || !v->valuestring)
		return err_set(why, "\"%s\" is not a string", key);
	if (required && !v->valuestring[0])
		return err_set(why, "\"%s\" is empty", key);
	*out = xstrdup(v->valuestring);
	return 0;
}

static int json_strv(const cJSON *v, const char *key, char ***out,
		     size_t *n, char **why)
{
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsArray(v))
		return err_set(why, "\"%s\" is not an array", key);
	const cJSON *e;
	cJSON_ArrayForEach(e, v) {
		if (!cJSON_IsString(e) || !e->valuestring)
			return err_set(why, "\"%s\" holds a non-string", key);
		strv_add(out, n, e->valuestring);
	}
	return 0;
}

int news_parse_jsonl_line(const char *line, size_t len,
			  const char *default_source, struct news_item *it,
			  char **why)
{
	memset(it, 0, sizeof(*it));
	const char *end = NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (!o) {
		size_t col = end && end >= line ? (size_t)(end - line) + 1 : 1;
		return err_set(why, "not valid JSON (column %zu)", col);
	}
	int rc = 0;
	while (end < line + len && isspace((unsigned char)*end))
		end++;
	if (end != line + len) {
		rc = err_set(why, "text after the JSON value (column %zu)",
			     (size_t)(end - line) + 1);
		goto out;
	}
	if (!cJSON_IsObject(o)) {
		rc = err_set(why, "not a JSON object");
		goto out;
	}
	const cJSON *k[JK_N] = { 0 };
	const cJSON *c;
	cJSON_ArrayForEach(c, o) {
		for (int j = 0; j < JK_N; j++) {
			if (!c->string || strcmp(c->string, jkeys[j]))
				continue;
			if (k[j]) {
				rc = err_set(why, "key \"%s\" repeated",
					     jkeys[j]);
				goto out;
			}
			k[j] = c;
		}
	}
	char *published = NULL;
	if ((rc = json_text(k[JK_PUBLISHED], "published_at", true,
			    &published, why)) < 0)
		goto out;
	rc = news_parse_rfc3339(published, strlen(published),
				&it->published_ns);
	if (rc < 0) {
		char *s = printable(published);
		err_set(why, "bad published_at \"%.40s\"", s);
		free(s);
	}
	free(published);
	if (rc < 0 ||
	    (rc = json_text(k[JK_ID], "id", true, &it->id, why)) < 0 ||
	    (rc = json_text(k[JK_SOURCE], "source", false, &it->source,
			    why)) < 0 ||
	    (rc = json_text(k[JK_TITLE], "title", false, &it->title, why)) < 0 ||
	    (rc = json_text(k[JK_BODY], "body", false, &it->body, why)) < 0 ||
	    (rc = json_text(k[JK_DATELINE], "dateline", false, &it->dateline,
			    why)) < 0 ||
	    (rc = json_text(k[JK_URL], "url", false, &it->url, why)) < 0 ||
	    (rc = json_strv(k[JK_TOPICS], "topics", &it->topics,
			    &it->ntopics, why)) < 0 ||
	    (rc = json_strv(k[JK_PLACES], "places", &it->places,
			    &it->nplaces, why)) < 0 ||
	    (rc = json_strv(k[JK_ORGS], "orgs", &it->orgs, &it->norgs,
			    why)) < 0)
		goto out;
	item_fill(it, default_source);
out:
	cJSON_Delete(o);
	if (rc < 0)
		news_item_release(it);
	return rc;
}

/* Skips one JSON string starting at s[i] == '"'; returns the index after
 * the closing quote, or 0 when it does not end on this line. */
static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

/* Skips one JSON value of any kind, without checking it; 0 on trouble. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	int depth = 0;
	while (i < n) {
		char ch = s[i];
		if (ch == '"') {
			if (!(i = skip_string(s, n, i)))
				return 0;
		} else if (ch == '{' || ch == '[') {
			depth++;
			i++;
		} else if (ch == '}' || ch == ']') {
			if (depth == 0)
				return i;
			depth--;
			i++;
		} else if (ch == ',' && depth == 0) {
			return i;
		} else {
			i++;
		}
		if (depth == 0 && i < n && (s[i] == ',' || s[i] == '}' ||
					    s[i] == ']' || isspace((unsigned char)s[i])))
			return i;
	}
	return 0;
}

static size_t skip_space(const char *s, size_t n, size_t i)
{
	while (i < n && isspace((unsigned char)s[i]))
		i++;
	return i;
}

/* Finds the top-level "published_at" string of an object line without
 * building it: 1 with its raw text in *v, 0 when it cannot tell (the full
 * parse then decides). Only keys before it are walked, and their values
 * skipped, which for the newswire means the id and source. */
static int scan_published(const char *s, size_t n, const char **v,
			  size_t *vlen)
{
	static const char key[] = "\"published_at\"";
	size_t i = skip_space(s, n, 0);
	if (i >= n || s[i] != '{')
		return 0;
	i++;
	for (;;) {
		i = skip_space(s, n, i);
		if (i >= n || s[i] != '"')
			return 0;
		size_t k = i, e = skip_string(s, n, i);
		if (!e)
			return 0;
		bool match = e - k == sizeof(key) - 1 &&
			     !memcmp(s + k, key, sizeof(key) - 1);
		i = skip_space(s, n, e);
		if (i >= n || s[i] != ':')
			return 0;
		i = skip_space(s, n, i + 1);
		if (match) {
			if (i >= n || s[i] != '"')
				return 0;
			size_t ve = skip_string(s, n, i);
			if (!ve || memchr(s + i + 1, '\\', ve - i - 2))
				return 0;
			*v = s + i + 1;
			*vlen = ve - i - 2;
			return 1;
		}
		if (!(i = skip_value(s, n, i)))
			return 0;
		i = skip_space(s, n, i);
		if (i >= n || s[i] != ',')
			return 0;
		i++;
	}
}

/* Bounded line reader over a FILE: a line longer than max is reported as
 * too long (and skipped) without ever being held whole. */
struct lines {
	FILE *f;
	char *buf;
	size_t cap, start, end, scan, max;
	bool eof, skipping;
	long lineno;
};

/* 1 with a line (its newline removed), 0 at the end, -1 on a read error. */
static int lines_next(struct lines *r, const char **line, size_t *len,
		      bool *too_long)
{
	*too_long = false;
	for (;;) {
		char *nl = r->scan < r->end ?
				   memchr(r->buf + r->scan, '\n',
					  r->end - r->scan) :
				   NULL;
		if (nl) {
			size_t pos = (size_t)(nl - r->buf);
			r->lineno++;
			*line = r->buf + r->start;
			*len = pos - r->start;
			*too_long = r->skipping || *len > r->max;
			r->skipping = false;
			r->start = r->scan = pos + 1;
			return 1;
		}
		r->scan = r->end;
		if (r->end - r->start > r->max) {
			r->skipping = true;
			r->start = r->scan = r->end;
		}
		if (r->eof) {
			if (r->start == r->end && !r->skipping)
				return 0;
			r->lineno++;
			*line = r->buf + r->start;
			*len = r->end - r->start;
			*too_long = r->skipping || *len > r->max;
			r->skipping = false;
			r->start = r->scan = r->end;
			return 1;
		}
		if (r->start > 0) {
			memmove(r->buf, r->buf + r->start, r->end - r->start);
			r->end -= r->start;
			r->scan -= r->start;
			r->start = 0;
		}
		size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->f);
		if (got == 0) {
			if (ferror(r->f))
				return -1;
			r->eof = true;
		}
		r->end += got;
	}
}

int news_load_jsonl(const char *path, int64_t from_ns, int64_t to_ns,
		    struct news_list *out, char **err)
{
	struct collect c;
	collect_init(&c, out, from_ns, to_ns);
	FILE *f = fopen(path, "rbe");
	if (!f)
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	struct lines r = { .f = f, .max = NEWS_LINE_MAX };
	r.cap = NEWS_LINE_MAX + ((size_t)256 << 10);
	r.buf = xmalloc(r.cap);
	const char *base = path_base(path);
	int rc = 0;
	for (;;) {
		const char *line;
		size_t len;
		bool too_long;
		int k = lines_next(&r, &line, &len, &too_long);
		if (k < 0) {
			rc = err_set(err, "cannot read %s: %s", path,
				     strerror(errno));
			break;
		}
		if (k == 0)
			break;
		if (too_long) {
			char why[64];
			snprintf(why, sizeof(why), "line longer than %zu bytes",
				 (size_t)NEWS_LINE_MAX);
			collect_warn(&c, path, r.lineno, why);
			continue;
		}
		if (skip_space(line, len, 0) == len)
			continue;
		const char *v;
		size_t vlen;
		int64_t t;
		if (scan_published(line, len, &v, &vlen) == 1 &&
		    news_parse_rfc3339(v, vlen, &t) == 0 &&
		    !collect_in_range(&c, t)) {
			out->nout++;
			continue;
		}
		struct news_item it;
		char *why = NULL;
		if (news_parse_jsonl_line(line, len, base, &it, &why) < 0) {
			collect_warn(&c, path, r.lineno, why);
			free(why);
			continue;
		}
		collect_item(&c, &it);
	}
	free(r.buf);
	fclose(f);
	if (rc < 0) {
		collect_abort(&c);
		return rc;
	}
	collect_finish(&c);
	return 0;
}

/* RSS 2.0 and Atom 1.0. Element names come from expat as "URI local"
 * (namespace-aware parsing with ' ' as the separator). */

#define ATOM_NS "http://www.w3.org/2005/Atom"
#define DC_NS "http://purl.org/dc/elements/1.1/"
#define CONTENT_NS "http://purl.org/rss/1.0/modules/content/"

enum feed_kind { FEED_NONE, FEED_RSS, FEED_ATOM };

enum feed_field {
	FF_NONE, FF_TITLE, FF_ID, FF_LINK, FF_DATE822, FF_DATE3339,
	FF_UPDATED, FF_SUMMARY, FF_CONTENT, FF_SOURCE, FF_CATEGORY,
	FF_FEED_TITLE, FF_N
};

struct feed {
	XML_Parser p;
	const char *name;
	enum feed_kind kind;
	int depth;
	int channel_depth;   /* RSS <channel>, 0 outside */
	int item_depth;      /* <item> or <entry>, 0 outside */
	enum feed_field field;
	int field_depth;
	struct sbuf text;
	char *f[FF_N];       /* texts of the current item */
	char **topics;
	size_t ntopics;
	long item_line;
	char *feed_title;
	char *error;         /* fatal, set before XML_StopParser */
	struct collect *c;
};

static void feed_fail(struct feed *fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void feed_fail(struct feed *fd, const char *fmt, ...)
{
	if (fd->error)
		return;
	va_list ap;
	va_start(ap, fmt);
	fd->error = xvasprintf(fmt, ap);
	va_end(ap);
	XML_StopParser(fd->p, XML_FALSE);
}

static void feed_item_reset(struct feed *fd)
{
	for (int i = 0; i < FF_N; i++) {
		if (i == FF_FEED_TITLE)
			continue;
		free(fd->f[i]);
		fd->f[i] = NULL;
	}
	strv_free(fd->topics, fd->ntopics);
	fd->topics = NULL;
	fd->ntopics = 0;
}

static char *trimmed_copy(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

static const char *attr(const XML_Char **atts, const char *name)
{
	for (size_t i = 0; atts[i]; i += 2)
		if (!strcmp(atts[i], name))
			return atts[i + 1];
	return NULL;
}

static enum feed_field rss_field(const char *name)
{
	static const struct {
		const char *name;
		enum feed_field f;
	} map[] = {
		{ "title", FF_TITLE }, { "guid", FF_ID }, { "link", FF_LINK },
		{ "pubDate", FF_DATE822 }, { DC_NS " date", FF_DATE3339 },
		{ "description", FF_SUMMARY },
		{ CONTENT_NS " encoded", FF_CONTENT },
		{ "source", FF_SOURCE }, { "category", FF_CATEGORY },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(name, map[i].name))
			return map[i].f;
	return FF_NONE;
}

static enum feed_field atom_field(const char *name)
{
	static const struct {
		const char *name;
		enum feed_field f;
	} map[] = {
		{ ATOM_NS " title", FF_TITLE }, { ATOM_NS " id", FF_ID },
		{ ATOM_NS " published", FF_DATE3339 },
		{ ATOM_NS " updated", FF_UPDATED },
		{ ATOM_NS " summary", FF_SUMMARY },
		{ ATOM_NS " content", FF_CONTENT },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(name, map[i].name))
			return map[i].f;
	return FF_NONE;
}

static void XMLCALL feed_start(void *ud, const XML_Char *name,
			       const XML_Char **atts)
{
	struct feed *fd = ud;
	fd->depth++;
	if (fd->depth == 1) {
		if (!strcmp(name, "rss"))
			fd->kind = FEED_RSS;
		else if (!strcmp(name, ATOM_NS " feed"))
			fd->kind = FEED_ATOM;
		else
			feed_fail(fd, "not an RSS 2.0 or Atom 1.0 feed (root element <%s>)",
				  name);
		return;
	}
	if (fd->field != FF_NONE)
		return; /* markup inside a text element: its text is kept */
	enum feed_field ff = FF_NONE;
	if (fd->kind == FEED_RSS) {
		if (!fd->channel_depth && fd->depth == 2 &&
		    !strcmp(name, "channel")) {
			fd->channel_depth = 2;
		} else if (fd->channel_depth && !fd->item_depth &&
			   fd->depth == 3) {
			if (!strcmp(name, "item")) {
				fd->item_depth = 3;
				fd->item_line = (long)XML_GetCurrentLineNumber(fd->p);
			} else if (!strcmp(name, "title")) {
				ff = FF_FEED_TITLE;
			}
		} else if (fd->item_depth && fd->depth == fd->item_depth + 1) {
			ff = rss_field(name);
		}
	} else if (fd->kind == FEED_ATOM) {
		if (!fd->item_depth && fd->depth == 2) {
			if (!strcmp(name, ATOM_NS " entry")) {
				fd->item_depth = 2;
				fd->item_line = (long)XML_GetCurrentLineNumber(fd->p);
			} else if (!strcmp(name, ATOM_NS " title")) {
				ff = FF_FEED_TITLE;
			}
		} else if (fd->item_depth && fd->depth == fd->item_depth + 1) {
			if (!strcmp(name, ATOM_NS " category")) {
				const char *t = attr(atts, "term");
				if (t && *t)
					strv_add(&fd->topics, &fd->ntopics, t);
			} else if (!strcmp(name, ATOM_NS " link")) {
				const char *href = attr(atts, "href");
				const char *rel = attr(atts, "rel");
				if (href && !fd->f[FF_LINK] &&
				    (!rel || !strcmp(rel, "alternate")))
					fd->f[FF_LINK] = xstrdup(href);
			} else {
				ff = atom_field(name);
			}
		}
	}
	if (ff != FF_NONE) {
		fd->field = ff;
		fd->field_depth = fd->depth;
		fd->text.len = 0;
		fd->text.data[0] = '\0';
	}
}

static void XMLCALL feed_text(void *ud, const XML_Char *s, int len)
{
	struct feed *fd = ud;
	if (fd->field == FF_NONE || len <= 0)
		return;
	if (fd->text.len + (size_t)len > NEWS_FIELD_MAX) {
		feed_fail(fd, "element text over %zu bytes",
			  (size_t)NEWS_FIELD_MAX);
		return;
	}
	sbuf_add(&fd->text, s, (size_t)len);
}

/* The id of an item that has neither guid nor link: FNV-1a of its title
 * and date text, so it is stable across reads. */
static char *feed_synth_id(struct feed *fd, const char *date)
{
	uint64_t h = UINT64_C(1469598103934665603);
	const char *parts[] = { fd->f[FF_TITLE] ? fd->f[FF_TITLE] : "",
				"\n", date ? date : "" };
	for (size_t k = 0; k < ARRAY_SIZE(parts); k++)
		for (const char *c = parts[k]; *c; c++)
			h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
	return xasprintf("urn:madf:fnv1a:%016llx", (unsigned long long)h);
}

static void feed_item_end(struct feed *fd)
{
	const char *date = NULL;
	int64_t t = 0;
	int rc = -1;
	if (fd->kind == FEED_RSS && (date = fd->f[FF_DATE822]))
		rc = news_parse_rfc822(date, &t);
	else if ((date = fd->f[FF_DATE3339]) || (date = fd->f[FF_UPDATED]))
		rc = news_parse_rfc3339(date, strlen(date), &t);
	const char *title = fd->f[FF_TITLE] ? fd->f[FF_TITLE] : "";
	const char *body = fd->f[FF_SUMMARY] && *fd->f[FF_SUMMARY] ?
				   fd->f[FF_SUMMARY] :
				   fd->f[FF_CONTENT];
	if (!body)
		body = "";
	char *why = NULL;
	if (!date) {
		why = xstrdup("item without a date (pubDate, published or updated)");
	} else if (rc < 0) {
		char *s = printable(date);
		why = xasprintf("item with a bad date \"%.40s\"", s);
		free(s);
	}
	if (why) {
		collect_warn(fd->c, fd->name, fd->item_line, why);
		free(why);
		feed_item_reset(fd);
		return;
	}
	struct news_item it;
	memset(&it, 0, sizeof(it));
	it.published_ns = t;
	it.title = xstrdup(title);
	it.body = xstrdup(body);
	if (fd->f[FF_ID] && *fd->f[FF_ID])
		it.id = xstrdup(fd->f[FF_ID]);
	else if (fd->f[FF_LINK] && *fd->f[FF_LINK])
		it.id = xstrdup(fd->f[FF_LINK]);
	else
		it.id = feed_synth_id(fd, date);
	if (fd->f[FF_LINK])
		it.url = xstrdup(fd->f[FF_LINK]);
	if (fd->f[FF_SOURCE] && *fd->f[FF_SOURCE])
		it.source = xstrdup(fd->f[FF_SOURCE]);
	it.topics = fd->topics;
	it.ntopics = fd->ntopics;
	fd->topics = NULL;
	fd->ntopics = 0;
	/* Sources left NULL get the feed title once the whole feed is read. */
	char **f[] = { &it.id, &it.title, &it.body, &it.dateline, &it.url };
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (!*f[i])
			*f[i] = xstrdup("");
	collect_item(fd->c, &it);
	feed_item_reset(fd);
}

static void XMLCALL feed_end(void *ud, const XML_Char *name)
{
	struct feed *fd = ud;
	(void)name;
	if (fd->field != FF_NONE && fd->depth == fd->field_depth) {
		enum feed_field ff = fd->field;
		fd->field = FF_NONE;
		if (ff == FF_CATEGORY) {
			char *t = trimmed_copy(fd->text.data, fd->text.len);
			if (*t)
				strv_add(&fd->topics, &fd->ntopics, t);
			free(t);
		} else if (!fd->f[ff]) {
			fd->f[ff] = trimmed_copy(fd->text.data, fd->text.len);
		}
	} else if (fd->item_depth && fd->depth == fd->item_depth) {
		fd->item_depth = 0;
		feed_item_end(fd);
	} else if (fd->channel_depth && fd->depth == fd->channel_depth) {
		fd->channel_depth = 0;
	}
	fd->depth--;
}

static void XMLCALL feed_entity_decl(void *ud, const XML_Char *name,
				     int is_param, const XML_Char *value,
				     int value_len, const XML_Char *base,
				     const XML_Char *system_id,
				     const XML_Char *public_id,
				     const XML_Char *notation)
{
	(void)is_param, (void)value, (void)value_len, (void)base;
	(void)system_id, (void)public_id, (void)notation;
	feed_fail(ud, "DTD entity declarations are not accepted (entity \"%s\")",
		  name);
}

int news_parse_feed(const char *data, size_t len, const char *name,
		    int64_t from_ns, int64_t to_ns, struct news_list *out,
		    char **err)
{
	struct collect c;
	collect_init(&c, out, from_ns, to_ns);
	if (len > NEWS_FEED_MAX)
		return err_set(err, "%s: feed of %zu bytes, over the %zu-byte limit",
			       name, len, (size_t)NEWS_FEED_MAX);
	struct feed fd;
	memset(&fd, 0, sizeof(fd));
	fd.name = name;
	fd.c = &c;
	sbuf_init(&fd.text);
	sbuf_add(&fd.text, "", 0);
	fd.p = XML_ParserCreateNS(NULL, ' ');
	if (!fd.p)
		BUG("XML_ParserCreateNS: out of memory");
	XML_SetUserData(fd.p, &fd);
	XML_SetElementHandler(fd.p, feed_start, feed_end);
	XML_SetCharacterDataHandler(fd.p, feed_text);
	XML_SetEntityDeclHandler(fd.p, feed_entity_decl);
	XML_SetParamEntityParsing(fd.p, XML_PARAM_ENTITY_PARSING_NEVER);
	int rc = 0;
	if (XML_Parse(fd.p, data, (int)len, XML_TRUE) != XML_STATUS_OK) {
		unsigned long line = XML_GetCurrentLineNumber(fd.p);
		unsigned long col = XML_GetCurrentColumnNumber(fd.p) + 1;
		rc = err_set(err, "%s:%lu:%lu: %s", name, line, col,
			     fd.error ? fd.error :
					XML_ErrorString(XML_GetErrorCode(fd.p)));
	} else if (fd.kind == FEED_NONE) {
		rc = err_set(err, "%s: not an RSS or Atom feed", name);
	}
	if (rc == 0) {
		char *title = fd.f[FF_FEED_TITLE];
		const char *src = title && *title ? title : path_base(name);
		for (size_t i = 0; i < out->n; i++)
			if (!out->items[i].source)
				out->items[i].source = xstrdup(src);
	}
	XML_ParserFree(fd.p);
	feed_item_reset(&fd);
	free(fd.f[FF_FEED_TITLE]);
	free(fd.error);
	sbuf_release(&fd.text);
	if (rc < 0) {
		collect_abort(&c);
		return rc;
	}
	collect_finish(&c);
	return 0;
}

int news_load_rss(const char *path, int64_t from_ns, int64_t to_ns,
		  struct news_list *out, char **err)
{
	memset(out, 0, sizeof(*out));
	char *data;
	size_t len;
	if (util_read_file(path, NEWS_FEED_MAX, &data, &len, err) < 0)
		return -1;
	int rc = news_parse_feed(data, len, path, from_ns, to_ns, out, err);
	free(data);
	return rc;
}

/* The simulated feed. */

struct sim_bank {
	const char *name;     /* in a sentence */
	const char *caps;     /* in a headline */
	const char *ccy;      /* the currency, in a sentence */
	const char *rate;     /* the policy rate */
	double level;         /* its level, pct */
	const char *city;
	const char *place;
	bool intervenes;      /* plausible for it to intervene */
};

static const struct sim_bank sim_banks[] = {
	{ "Federal Reserve", "FED", "dollar", "federal funds rate", 5.25,
	  "WASHINGTON", "usa", false },
	{ "Bank of Japan", "BANK OF JAPAN", "yen", "short-term policy rate",
	  0.25, "TOKYO", "japan", true },
	{ "European Central Bank", "ECB", "euro", "deposit rate", 3.75,
	  "FRANKFURT", "euro-zone", false },
	{ "Bank of England", "BANK OF ENGLAND", "sterling", "Bank Rate", 5.00,
	  "LONDON", "uk", false },
	{ "Reserve Bank of Australia", "RBA", "Australian dollar",
	  "cash rate", 4.35, "SYDNEY", "australia", false },
	{ "Reserve Bank of New Zealand", "RBNZ", "New Zealand dollar",
	  "official cash rate", 5.50, "WELLINGTON", "new-zealand", false },
	{ "Swiss National Bank", "SNB", "Swiss franc", "policy rate", 1.50,
	  "ZURICH", "switzerland", true },
	{ "Bank of Canada", "BANK OF CANADA", "Canadian dollar",
	  "overnight rate", 4.75, "OTTAWA", "canada", false },
	{ "People's Bank of China", "PBOC", "yuan",
	  "one-year loan prime rate", 3.45, "BEIJING", "china", true },
};

static const char *const sim_cross[][3] = {
	/* currency in a sentence, in a headline, city */
	{ "yen", "YEN", "TOKYO" },
	{ "euro", "EURO", "FRANKFURT" },
	{ "sterling", "STERLING", "LONDON" },
	{ "Swiss franc", "SWISS FRANC", "ZURICH" },
	{ "Australian dollar", "AUSTRALIAN DOLLAR", "SYDNEY" },
	{ "yuan", "YUAN", "SHANGHAI" },
};

static uint64_t sim_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static size_t sim_pick(uint64_t *state, size_t n)
{
	return (size_t)(sim_next(state) % n);
}

static char *sim_upper(const char *s)
{
	char *u = xstrdup(s);
	for (char *c = u; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return u;
}

/* Writes one story of the given kind into it. */
static void sim_story(uint64_t *st, int32_t day, struct news_item *it)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	const struct sim_bank *b = &sim_banks[sim_pick(st, ARRAY_SIZE(sim_banks))];
	unsigned roll = (unsigned)sim_pick(st, 100);
	const char *city = b->city, *topic = "money-fx", *place = b->place;
	char *rate_caps = sim_upper(b->rate);
	double step = 0.25;
	if (roll < 12) {
		it->title = xasprintf("%s LEAVES %s UNCHANGED AT %.2f PCT",
				      b->caps, rate_caps, b->level);
		it->body = xasprintf(
			"The %s left its %s unchanged at %.2f pct, in line with "
			"market expectations, and said it would watch incoming "
			"data closely.\n    The %s was little changed after the "
			"decision, dealers said.",
			b->name, b->rate, b->level, b->ccy);
		topic = "interest";
	} else if (roll < 24) {
		bool hike = roll < 18;
		double r = b->level + (hike ? step : -step);
		const char *other = strcmp(b->ccy, "dollar") ? "dollar" : "yen";
		it->title = xasprintf("%s %s %s TO %.2f PCT", b->caps,
				      hike ? "RAISES" : "CUTS", rate_caps, r);
		it->body = xasprintf(
			"The %s %s its %s by 25 basis points to %.2f pct, %s."
			"\n    The %s %s against the %s after the announcement, "
			"dealers said.",
			b->name, hike ? "raised" : "cut", b->rate, r,
			hike ? "citing persistent inflation" :
			       "saying that growth had slowed",
			b->ccy, hike ? "firmed" : "weakened", other);
		topic = "interest";
	} else if (roll < 30 && b->intervenes) {
		char *ccy_caps = sim_upper(b->ccy);
		it->title = xasprintf("%s INTERVENES TO SUPPORT %s, DEALERS SAY",
				      b->caps, ccy_caps);
		it->body = xasprintf(
			"The %s intervened in the foreign exchange market to "
			"support the %s, buying %s and selling dollars, dealers "
			"said.\n    The %s recovered after the intervention but "
			"dealers said underlying sentiment remained cautious.",
			b->name, b->ccy, b->ccy, b->ccy);
		free(ccy_caps);
	} else if (roll < 55) {
		it->title = xasprintf("%s GOVERNOR SAYS INFLATION RISKS BALANCED",
				      b->caps);
		it->body = xasprintf(
			"The governor of the %s said in a speech that risks to "
			"the inflation outlook were broadly balanced and that "
			"policy was well placed.\n    The %s was steady in "
			"quiet trading.",
			b->name, b->ccy);
		topic = "interest";
	} else if (roll < 60) {
		it->title = xstrdup("G7 FINANCE MINISTERS REAFFIRM EXCHANGE RATE COMMITMENTS");
		it->body = xstrdup(
			"Group of Seven finance ministers said excessive "
			"volatility and disorderly movements in exchange rates "
			"were undesirable and that they would consult closely "
			"on currency markets.");
		city = "WASHINGTON";
		place = "usa";
	} else {
		const char *const *x = sim_cross[sim_pick(st, ARRAY_SIZE(sim_cross))];
		bool up = sim_pick(st, 2);
		it->title = xasprintf("DOLLAR %s AGAINST %s IN %s",
				      up ? "FIRMER" : "WEAKER", x[1], x[2]);
		it->body = xasprintf(
			"The dollar %s against the %s in %s trading as "
			"investors reassessed the interest rate outlook, "
			"dealers said.",
			up ? "rose" : "fell", x[0],
			up ? "active" : "nervous");
		city = x[2];
		place = "usa";
	}
	free(rate_caps);
	int y, m, d;
	market_day_to_ymd(day, &y, &m, &d);
	it->dateline = xasprintf("%s, %.3s %d -", city, months + 3 * (m - 1), d);
	it->source = xstrdup("simulated");
	it->url = xstrdup("");
	strv_add(&it->topics, &it->ntopics, topic);
	strv_add(&it->places, &it->nplaces, place);
}

int news_sim(int64_t start_ns, int64_t end_ns, uint64_t seed,
	     struct news_list *out, char **err)
{
	struct collect c;
	collect_init(&c, out, start_ns, end_ns);
	if (start_ns > end_ns)
		return err_set(err, "simulated news: start after end");
	if (end_ns - start_ns > INT64_C(3660) * 86400 * NS_PER_S)
		return err_set(err, "simulated news: over ten years asked for");
	if (start_ns == end_ns) {
		collect_finish(&c);
		return 0;
	}
	int32_t first = market_day_from_ns(start_ns);
	int32_t last = market_day_from_ns(end_ns - 1);
	for (int32_t day = first; day <= last; day++) {
		if (market_weekday(day) > 5)
			continue;
		uint64_t st = seed ^ ((uint64_t)(uint32_t)day *
				      UINT64_C(0xD1B54A32D192ED03));
		size_t n = 3 + sim_pick(&st, 4);
		for (size_t k = 0; k < n; k++) {
			struct news_item it;
			memset(&it, 0, sizeof(it));
			int64_t minute = (int64_t)sim_pick(&st, 22 * 60);
			it.published_ns = ((int64_t)day * 86400 + minute * 60) *
					  NS_PER_S;
			it.id = xasprintf("sim-%016llx-%d-%zu",
					  (unsigned long long)seed, (int)day, k);
			sim_story(&st, day, &it);
			collect_item(&c, &it);
		}
	}
	collect_finish(&c);
	return 0;
}
