/* News stories: time parsing, items and lists, and JSON lines (cJSON).
 * RSS 2.0 and Atom 1.0 are read in news_feed.c, the simulated feed is
 * news_sim.c; the helpers they share are in news_collect.h. */
#include "agents/news.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/market.h"
#include "agents/news_collect.h"
#include "core/util.h"
#include "core/banned.h"


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
char *news_printable(const char *s)
{
	size_t n = strlen(s);
	return n ? util_sanitize(s, n, false) : xstrdup("");
}

/* Items and lists. */

void news_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void news_strv_add(char ***v, size_t *n, const char *s)
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
	news_strv_free(it->topics, it->ntopics);
	news_strv_free(it->places, it->nplaces);
	news_strv_free(it->orgs, it->norgs);
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
void news_item_fill(struct news_item *it, const char *default_source)
{
	char **f[] = { &it->id, &it->title, &it->body, &it->dateline,
		       &it->url };
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (!*f[i])
			*f[i] = xstrdup("");
	if (!it->source)
		it->source = xstrdup(default_source ? default_source : "");
}

/* Collecting a list (agents/news_collect.h). */

void news_collect_init(struct news_collect *c, struct news_list *out,
			 int64_t from, int64_t to)
{
	memset(out, 0, sizeof(*out));
	c->out = out;
	c->cap = 0;
	sbuf_init(&c->warn);
	c->from = from;
	c->to = to;
}

void news_collect_warn(struct news_collect *c, const char *name, long line,
			 const char *why)
{
	if (c->out->nbad++ < NEWS_WARN_MAX)
		sbuf_addf(&c->warn, "%s:%ld: %s\n", name, line, why);
}

static bool collect_in_range(const struct news_collect *c, int64_t t)
{
	return t >= c->from && t < c->to;
}

/* Takes over *it (in range) or releases it and counts it (out of range). */
void news_collect_item(struct news_collect *c, struct news_item *it)
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
void news_collect_finish(struct news_collect *c)
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

void news_collect_abort(struct news_collect *c)
{
	sbuf_release(&c->warn);
	news_list_release(c->out);
}

const char *news_path_base(const char *path)
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
		news_strv_add(out, n, e->valuestring);
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
		char *s = news_printable(published);
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
	news_item_fill(it, default_source);
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
	struct news_collect c;
	news_collect_init(&c, out, from_ns, to_ns);
	FILE *f = fopen(path, "rbe");
	if (!f)
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	struct lines r = { .f = f, .max = NEWS_LINE_MAX };
	r.cap = NEWS_LINE_MAX + ((size_t)256 << 10);
	r.buf = xmalloc(r.cap);
	const char *base = news_path_base(path);
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
			news_collect_warn(&c, path, r.lineno, why);
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
			news_collect_warn(&c, path, r.lineno, why);
			free(why);
			continue;
		}
		news_collect_item(&c, &it);
	}
	free(r.buf);
	fclose(f);
	if (rc < 0) {
		news_collect_abort(&c);
		return rc;
	}
	news_collect_finish(&c);
	return 0;
}
