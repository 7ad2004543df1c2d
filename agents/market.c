/* FX time series: CSV loaders (wide FRED, long date,pair,close), the
 * simulated market and calendar days. */
#include "agents/market.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "core/banned.h"

#define MARKET_FIELDS_MAX 1024
#define DAYS_PER_YEAR_TRADING 252.0

/* Calendar days (H. Hinnant's days_from_civil / civil_from_days). */

int32_t market_day_from_ymd(int y, int m, int d)
{
	y -= m <= 2;
	int era = (y >= 0 ? y : y - 399) / 400;
	int yoe = y - era * 400;
	int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (int32_t)(era * 146097 + doe - 719468);
}

void market_day_to_ymd(int32_t day, int *y, int *m, int *d)
{
	int z = day + 719468;
	int era = (z >= 0 ? z : z - 146096) / 146097;
	int doe = z - era * 146097;
	int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int mp = (5 * doy + 2) / 153;
	int dd = doy - (153 * mp + 2) / 5 + 1;
	int mm = mp < 10 ? mp + 3 : mp - 9;
	*y = yoe + era * 400 + (mm <= 2);
	*m = mm;
	*d = dd;
}

static int days_in_month(int y, int m)
{
	static const int dim[12] = { 31, 28, 31, 30, 31, 30,
				     31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dim[m - 1];
}

bool market_ymd_valid(int y, int m, int d)
{
	return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 &&
	       d <= days_in_month(y, m);
}

static int digits(const char *s, size_t n)
{
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int market_day_parse(const char *s, size_t len, int32_t *day)
{
	if (len != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	int y = digits(s, 4), m = digits(s + 5, 2), d = digits(s + 8, 2);
	if (y < 0 || m < 0 || d < 0 || !market_ymd_valid(y, m, d))
		return -1;
	*day = market_day_from_ymd(y, m, d);
	return 0;
}

void market_day_format(int32_t day, char *buf, size_t size)
{
	int y, m, d;
	market_day_to_ymd(day, &y, &m, &d);
	snprintf(buf, size, "%04d-%02d-%02d", y, m, d);
}

int market_weekday(int32_t day)
{
	/* 1970-01-01 was a Thursday (4). */
	int r = (int)(((int64_t)day + 3) % 7);
	if (r < 0)
		r += 7;
	return r + 1;
}

int32_t market_day_from_ns(int64_t t_ns)
{
	const int64_t per_day = INT64_C(86400000000000);
	int64_t q = t_ns / per_day;
	if (t_ns % per_day < 0)
		q--;
	return (int32_t)q;
}

/* Currencies: the FRED wide column holding units per USD, and the market
 * convention, level and annualised volatility used by the simulation
 * (level 0: not simulated). */
struct ccy_info {
	char code[4];
	const char *column;
	bool usd_base;   /* quoted USD/XXX (true) or XXX/USD (false) */
	double level;    /* simulation start, in the market convention */
	double vol;      /* annualised, as a fraction */
	int decimals;
};

static const struct ccy_info currencies[] = {
	{ "JPY", "Japan", true, 150.00, 0.100, 3 },
	{ "EUR", "Euro", false, 1.0800, 0.070, 5 },
	{ "GBP", "United Kingdom", false, 1.2700, 0.080, 5 },
	{ "AUD", "Australia", false, 0.6600, 0.100, 5 },
	{ "NZD", "New Zealand", false, 0.6000, 0.105, 5 },
	{ "CHF", "Switzerland", true, 0.8800, 0.075, 5 },
	{ "CAD", "Canada", true, 1.3600, 0.060, 5 },
	{ "CNY", "China", true, 7.2000, 0.030, 4 },
	{ "HKD", "Hong Kong", true, 7.8200, 0.005, 4 },
	{ "SGD", "Singapore", true, 1.3400, 0.045, 4 },
	{ "KRW", "South Korea", true, 1350.0, 0.090, 2 },
	{ "INR", "India", true, 83.000, 0.040, 3 },
	{ "THB", "Thailand", true, 35.500, 0.070, 3 },
	{ "MYR", "Malaysia", true, 4.6000, 0.060, 4 },
	{ "TWD", "Taiwan", true, 31.500, 0.050, 3 },
	{ "SEK", "Sweden", true, 10.500, 0.090, 4 },
	{ "NOK", "Norway", true, 10.600, 0.100, 4 },
	{ "DKK", "Denmark", true, 6.9000, 0.070, 4 },
	{ "BRL", "Brazil", true, 5.0000, 0.150, 4 },
	{ "MXN", "Mexico", true, 17.000, 0.120, 4 },
	{ "ZAR", "South Africa", true, 18.500, 0.150, 4 },
	{ "LKR", "Sri Lanka", true, 0, 0, 2 },
	{ "VEF", "Venezuela", true, 0, 0, 4 },
	{ "ATS", "Austria", true, 0, 0, 4 },
	{ "BEF", "Belgium", true, 0, 0, 4 },
	{ "DEM", "Germany", true, 0, 0, 4 },
	{ "ESP", "Spain", true, 0, 0, 4 },
	{ "FIM", "Finland", true, 0, 0, 4 },
	{ "FRF", "France", true, 0, 0, 4 },
	{ "GRD", "Greece", true, 0, 0, 4 },
	{ "IEP", "Ireland", true, 0, 0, 4 },
	{ "ITL", "Italy", true, 0, 0, 4 },
	{ "NLG", "Netherlands", true, 0, 0, 4 },
	{ "PTE", "Portugal", true, 0, 0, 4 },
};

static const struct ccy_info *ccy_find(const char *code)
{
	for (size_t i = 0; i < ARRAY_SIZE(currencies); i++)
		if (!strcmp(currencies[i].code, code))
			return &currencies[i];
	return NULL;
}

bool market_currency_known(const char *code)
{
	return !strcmp(code, "USD") || ccy_find(code) != NULL;
}

static bool is_code(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (s[i] < 'A' || s[i] > 'Z')
			return false;
	return true;
}

int market_pair_parse(const char *pair, char base[4], char quote[4],
		      char **err)
{
	if (!pair || strlen(pair) != 7 || pair[3] != '/' || !is_code(pair) ||
	    !is_code(pair + 4))
		return err_set(err, "bad pair \"%.20s\": expected ABC/XYZ",
			       pair ? pair : "(null)");
	memcpy(base, pair, 3);
	base[3] = '\0';
	memcpy(quote, pair + 4, 3);
	quote[3] = '\0';
	if (!strcmp(base, quote))
		return err_set(err, "bad pair \"%s\": same currency twice",
			       pair);
	return 0;
}

void market_series_release(struct fx_series *s)
{
	if (!s)
		return;
	free(s->days);
	free(s->close);
	s->days = NULL;
	s->close = NULL;
	s->n = 0;
}

void market_series_release_all(struct fx_series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		market_series_release(&s[i]);
}

size_t market_series_lower_bound(const struct fx_series *s, int32_t day)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->days[mid] < day)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int market_window_check(const struct fx_series *s, int32_t start, int32_t end, char **err)
{
	size_t i = market_series_lower_bound(s, start);
	if (i < s->n && s->days[i] <= end)
		return 0;
	/* The source's file (or "simulated"), without the columns it used. */
	const char *src = s->source[0] ? s->source : "the market data";
	int n = (int)strcspn(src, ":");
	char d0[16], d1[16];
	market_day_format(start, d0, sizeof(d0));
	market_day_format(end, d1, sizeof(d1));
	/* Say why when the pair has quotes, only not in the window: a pair
	 * that starts later (EUR/USD before 1999) or stopped. */
	char dq[16], why[48] = "";
	if (s->n && s->days[0] > end) {
		market_day_format(s->days[0], dq, sizeof(dq));
		snprintf(why, sizeof(why), " (its first quote is on %s)", dq);
	} else if (s->n && s->days[s->n - 1] < start) {
		market_day_format(s->days[s->n - 1], dq, sizeof(dq));
		snprintf(why, sizeof(why), " (its last quote is on %s)", dq);
	}
	return err_set(err, "no data for %s in %.*s between %s and %s%s", s->pair, n, src, d0, d1,
		       why);
}

/* Quotes collected while reading, one list per column or pair. */
struct quote {
	int32_t day;
	int32_t line;
	double v;
};

struct qlist {
	char key[64];
	struct quote *q;
	size_t n, cap;
};

static void qlist_add(struct qlist *l, int32_t day, long line, double v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->q = xrealloc(l->q, l->cap * sizeof(*l->q));
	}
	l->q[l->n++] = (struct quote){ day, (int32_t)line, v };
}

static int quote_cmp(const void *a, const void *b)
{
	const struct quote *x = a, *y = b;
	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorts by day; a repeated day is an error naming both lines. */
static int qlist_sort(struct qlist *l, const char *path, char **err)
{
	if (l->n > 1)
		qsort(l->q, l->n, sizeof(*l->q), quote_cmp);
	for (size_t i = 1; i < l->n; i++) {
		if (l->q[i].day == l->q[i - 1].day) {
			char d[16];
			market_day_format(l->q[i].day, d, sizeof(d));
			return err_set(err,
				       "%s:%d: second quote for %s on %s (first on line %d)",
				       path, l->q[i].line, l->key, d,
				       l->q[i - 1].line);
		}
	}
	return 0;
}

/* One leg: units of a currency per USD, from a list (inverted or not), or
 * the constant 1 for USD itself (l == NULL). */
struct leg {
	const struct qlist *l;
	bool invert;
	char label[72];
};

static void series_push(struct fx_series *s, size_t *cap, int32_t day,
			double v)
{
	if (s->n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		s->days = xrealloc(s->days, *cap * sizeof(*s->days));
		s->close = xrealloc(s->close, *cap * sizeof(*s->close));
	}
	s->days[s->n] = day;
	s->close[s->n] = v;
	s->n++;
}

/* BASE/QUOTE = (QUOTE per USD) / (BASE per USD) = num / den, arranged so
 * that a leg used as given is never divided twice (1 / (1 / x) != x). */
static void series_from_legs(struct fx_series *s, const struct leg *num,
			     const struct leg *den)
{
	size_t cap = 0, i = 0, j = 0;
	const struct qlist *a = num->l, *b = den->l;
	for (;;) {
		double va = 1, vb = 1;
		int32_t day;
		if (a && b) {
			if (i >= a->n || j >= b->n)
				break;
			if (a->q[i].day < b->q[j].day) {
				i++;
				continue;
			}
			if (a->q[i].day > b->q[j].day) {
				j++;
				continue;
			}
			day = a->q[i].day;
			va = a->q[i++].v;
			vb = b->q[j++].v;
		} else if (a) {
			if (i >= a->n)
				break;
			day = a->q[i].day;
			va = a->q[i++].v;
		} else {
			if (j >= b->n)
				break;
			day = b->q[j].day;
			vb = b->q[j++].v;
		}
		double numer = (num->invert ? 1 : va) * (den->invert ? vb : 1);
		double denom = (num->invert ? va : 1) * (den->invert ? 1 : vb);
		series_push(s, &cap, day, numer / denom);
	}
}

static const char *path_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void series_source(struct fx_series *s, const char *file,
			  const struct leg *num, const struct leg *den)
{
	char *t;
	if (num->l && den->l)
		t = xasprintf("%s:%s/%s", file, num->label, den->label);
	else if (num->l)
		t = xasprintf("%s:%s", file, num->label);
	else
		t = xasprintf("%s:1/%s", file, den->label);
	util_strlcpy(s->source, t, sizeof(s->source));
	free(t);
}

/* CSV lines and fields. */

struct field {
	char *s;
	size_t len;
};

static void trim(struct field *f)
{
	while (f->len && (f->s[0] == ' ' || f->s[0] == '\t')) {
		f->s++;
		f->len--;
	}
	while (f->len && (f->s[f->len - 1] == ' ' || f->s[f->len - 1] == '\t'))
		f->len--;
}

/* Splits one line (no newline) into fields, RFC 4180 quoting within the
 * line, unquoting in place. Returns 0 or -1 with *why. */
static int csv_split(char *line, size_t len, struct field *f, size_t *nf,
		     const char **why)
{
	size_t n = 0, i = 0;
	for (;;) {
		if (n == MARKET_FIELDS_MAX) {
			*why = "too many fields";
			return -1;
		}
		size_t start = i;
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i < len && line[i] == '"') {
			size_t w = ++i;
			f[n].s = line + w;
			for (;;) {
				if (i >= len) {
					*why = "unterminated quoted field";
					return -1;
				}
				if (line[i] == '"') {
					if (i + 1 < len && line[i + 1] == '"') {
						line[w++] = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				line[w++] = line[i++];
			}
			f[n].len = (size_t)(line + w - f[n].s);
			while (i < len && (line[i] == ' ' || line[i] == '\t'))
				i++;
			if (i < len && line[i] != ',') {
				*why = "text after a closing quote";
				return -1;
			}
		} else {
			i = start;
			f[n].s = line + i;
			while (i < len && line[i] != ',')
				i++;
			f[n].len = (size_t)(line + i - f[n].s);
			trim(&f[n]);
		}
		n++;
		if (i >= len)
			break;
		i++; /* the comma */
	}
	*nf = n;
	return 0;
}

static bool field_is(const struct field *f, const char *s)
{
	return f->len == strlen(s) && !strncasecmp(f->s, s, f->len);
}

static bool field_missing(const struct field *f)
{
	return f->len == 0 || (f->len == 1 && f->s[0] == '.');
}

/* Strict decimal: digits with an optional fraction and exponent. */
static int parse_rate(const struct field *f, double *out, const char **why)
{
	char buf[64];
	size_t i = 0, nd = 0;
	const char *s = f->s;
	*why = "not a number";
	if (f->len >= sizeof(buf))
		return -1;
	while (i < f->len && isdigit((unsigned char)s[i]))
		i++, nd++;
	if (i < f->len && s[i] == '.') {
		i++;
		while (i < f->len && isdigit((unsigned char)s[i]))
			i++, nd++;
	}
	if (!nd)
		return -1;
	if (i < f->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < f->len && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t ne = 0;
		while (i < f->len && isdigit((unsigned char)s[i]))
			i++, ne++;
		if (!ne)
			return -1;
	}
	if (i != f->len)
		return -1;
	memcpy(buf, s, f->len);
	buf[f->len] = '\0';
	double v = strtod(buf, NULL);
	if (v <= 0) {
		*why = "not a positive rate";
		return -1;
	}
	/* Bounded so that crosses of two legs stay finite and positive. */
	if (!isfinite(v) || v < MARKET_RATE_MIN || v > MARKET_RATE_MAX) {
		*why = "out of range";
		return -1;
	}
	*out = v;
	return 0;
}

/* A short printable copy of bad input for an error message. */
static char *shown(const char *s, size_t len)
{
	if (!len)
		return xstrdup("");
	char *t = util_sanitize(s, len > 40 ? 40 : len, false);
	if (len > 40) {
		char *u = xasprintf("%s...", t);
		free(t);
		return u;
	}
	return t;
}

enum layout { LAYOUT_LONG, LAYOUT_WIDE };

struct loader {
	const char *path;
	const char *file;        /* basename, for sources */
	enum layout layout;
	size_t ncols;            /* header fields */
	struct field *hdr;       /* wide: header names (point into data) */
	struct qlist *lists;     /* wide: one per needed column; long: per pair */
	size_t nlists, caplists;
	long *col_list;          /* wide: column -> list index or -1 */
	struct qlist rows;       /* wide: one entry per row, to catch repeats */
};

static struct qlist *loader_list(struct loader *ld, const char *key)
{
	for (size_t i = 0; i < ld->nlists; i++)
		if (!strcmp(ld->lists[i].key, key))
			return &ld->lists[i];
	return NULL;
}

static struct qlist *loader_list_add(struct loader *ld, const char *key)
{
	if (ld->nlists == ld->caplists) {
		ld->caplists = ld->caplists ? 2 * ld->caplists : 16;
		ld->lists = xrealloc(ld->lists,
				     ld->caplists * sizeof(*ld->lists));
	}
	struct qlist *l = &ld->lists[ld->nlists++];
	memset(l, 0, sizeof(*l));
	util_strlcpy(l->key, key, sizeof(l->key));
	return l;
}

static void loader_release(struct loader *ld)
{
	for (size_t i = 0; i < ld->nlists; i++)
		free(ld->lists[i].q);
	free(ld->lists);
	free(ld->col_list);
	free(ld->hdr);
	free(ld->rows.q);
}

static int loader_header(struct loader *ld, struct field *f, size_t nf,
			 const char *const *pairs, size_t npairs, char **err)
{
	if (nf == 3 && field_is(&f[0], "date") && field_is(&f[1], "pair") &&
	    field_is(&f[2], "close")) {
		ld->layout = LAYOUT_LONG;
		ld->ncols = 3;
		return 0;
	}
	if (nf < 2 || !(field_is(&f[0], "data") || field_is(&f[0], "date"))) {
		char *s = shown(f[0].s, f[0].len);
		err_set(err,
			"%s:1: header not recognised (first column \"%s\"): "
			"expected date,pair,close or a first column Data or "
			"Date followed by country columns",
			ld->path, s);
		free(s);
		return -1;
	}
	ld->layout = LAYOUT_WIDE;
	ld->ncols = nf;
	ld->hdr = xmalloc(nf * sizeof(*ld->hdr));
	memcpy(ld->hdr, f, nf * sizeof(*f));
	ld->col_list = xmalloc(nf * sizeof(*ld->col_list));
	for (size_t c = 0; c < nf; c++) {
		ld->col_list[c] = -1;
		if (c && !f[c].len)
			return err_set(err, "%s:1: column %zu has no name",
				       ld->path, c + 1);
		for (size_t k = 1; k < c; k++) {
			if (f[k].len == f[c].len &&
			    !memcmp(f[k].s, f[c].s, f[c].len)) {
				char *s = shown(f[c].s, f[c].len);
				err_set(err, "%s:1: column \"%s\" appears twice",
					ld->path, s);
				free(s);
				return -1;
			}
		}
	}
	/* The columns the requested pairs need. */
	for (size_t p = 0; p < npairs; p++) {
		char code[2][4];
		if (market_pair_parse(pairs[p], code[0], code[1], err) < 0)
			return err_prefix(err, "%s", ld->path);
		for (int k = 0; k < 2; k++) {
			if (!strcmp(code[k], "USD"))
				continue;
			const struct ccy_info *ci = ccy_find(code[k]);
			if (!ci)
				return err_set(err,
					       "%s: pair %s: unknown currency %s "
					       "(no column for it in the wide layout)",
					       ld->path, pairs[p], code[k]);
			for (size_t c = 1; c < nf; c++) {
				if (field_is(&f[c], ci->column) &&
				    ld->col_list[c] < 0) {
					loader_list_add(ld, ci->column);
					ld->col_list[c] = (long)ld->nlists - 1;
				}
			}
		}
	}
	return 0;
}

static int loader_row(struct loader *ld, long line, struct field *f,
		      size_t nf, char **err)
{
	if (nf != ld->ncols)
		return err_set(err, "%s:%ld: %zu fields, the header has %zu",
			       ld->path, line, nf, ld->ncols);
	int32_t day;
	if (market_day_parse(f[0].s, f[0].len, &day) < 0) {
		char *s = shown(f[0].s, f[0].len);
		err_set(err, "%s:%ld: bad date \"%s\" (expected YYYY-MM-DD)",
			ld->path, line, s);
		free(s);
		return -1;
	}
	const char *why;
	double v;
	if (ld->layout == LAYOUT_LONG) {
		char base[4], quote[4], key[8];
		char *perr = NULL;
		char pair[16];
		if (f[1].len >= sizeof(pair)) {
			pair[0] = '\0';
		} else {
			memcpy(pair, f[1].s, f[1].len);
			pair[f[1].len] = '\0';
			for (char *c = pair; *c; c++)
				*c = (char)toupper((unsigned char)*c);
		}
		if (market_pair_parse(pair, base, quote, &perr) < 0) {
			free(perr);
			char *s = shown(f[1].s, f[1].len);
			err_set(err, "%s:%ld: bad pair \"%s\" (expected ABC/XYZ)",
				ld->path, line, s);
			free(s);
			return -1;
		}
		snprintf(key, sizeof(key), "%s/%s", base, quote);
		if (field_missing(&f[2]))
			return 0;
		if (parse_rate(&f[2], &v, &why) < 0) {
			char *s = shown(f[2].s, f[2].len);
			err_set(err, "%s:%ld: close: %s: \"%s\"", ld->path,
				line, why, s);
			free(s);
			return -1;
		}
		struct qlist *l = loader_list(ld, key);
		if (!l)
			l = loader_list_add(ld, key);
		qlist_add(l, day, line, v);
		return 0;
	}
	qlist_add(&ld->rows, day, line, 0);
	for (size_t c = 1; c < nf; c++) {
		if (field_missing(&f[c]))
			continue;
		if (parse_rate(&f[c], &v, &why) < 0) {
			char *s = shown(f[c].s, f[c].len);
			char *h = shown(ld->hdr[c].s, ld->hdr[c].len);
			err_set(err, "%s:%ld: column %zu (%s): %s: \"%s\"",
				ld->path, line, c + 1, h, why, s);
			free(s);
			free(h);
			return -1;
		}
		if (ld->col_list[c] >= 0)
			qlist_add(&ld->lists[ld->col_list[c]], day, line, v);
	}
	return 0;
}

/* The leg "units of code per USD" in a loaded file; false when the file
 * has nothing for it. */
static bool loader_leg(struct loader *ld, const char *code, struct leg *lg)
{
	memset(lg, 0, sizeof(*lg));
	if (!strcmp(code, "USD"))
		return true;
	if (ld->layout == LAYOUT_WIDE) {
		const struct ccy_info *ci = ccy_find(code);
		lg->l = ci ? loader_list(ld, ci->column) : NULL;
		if (lg->l)
			util_strlcpy(lg->label, ci->column, sizeof(lg->label));
		return lg->l != NULL;
	}
	char key[8];
	snprintf(key, sizeof(key), "USD/%s", code);
	if ((lg->l = loader_list(ld, key))) {
		util_strlcpy(lg->label, key, sizeof(lg->label));
		return true;
	}
	snprintf(key, sizeof(key), "%s/USD", code);
	if ((lg->l = loader_list(ld, key))) {
		lg->invert = true;
		snprintf(lg->label, sizeof(lg->label), "1/%s", key);
		return true;
	}
	return false;
}

static void loader_build(struct loader *ld, const char *pair,
			 struct fx_series *s)
{
	char base[4], quote[4], key[8];
	struct leg num, den;
	memset(s, 0, sizeof(*s));
	util_strlcpy(s->pair, pair, sizeof(s->pair));
	market_pair_parse(pair, base, quote, NULL);
	if (ld->layout == LAYOUT_LONG) {
		memset(&num, 0, sizeof(num));
		memset(&den, 0, sizeof(den));
		snprintf(key, sizeof(key), "%s/%s", base, quote);
		if ((num.l = loader_list(ld, key))) {
			util_strlcpy(num.label, key, sizeof(num.label));
			goto build;
		}
		snprintf(key, sizeof(key), "%s/%s", quote, base);
		if ((den.l = loader_list(ld, key))) {
			util_strlcpy(den.label, key, sizeof(den.label));
			goto build;
		}
	}
	if (!loader_leg(ld, quote, &num) || !loader_leg(ld, base, &den)) {
		snprintf(s->source, sizeof(s->source), "%s", ld->file);
		return;
	}
build:
	series_from_legs(s, &num, &den);
	series_source(s, ld->file, &num, &den);
}

static int loader_parse(struct loader *ld, char *data, size_t len,
			const char *const *pairs, size_t npairs, char **err)
{
	struct field *f = xmalloc(MARKET_FIELDS_MAX * sizeof(*f));
	bool have_header = false;
	long line = 0;
	size_t pos = 0;
	int rc = 0;
	if (len >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3))
		pos = 3;
	while (pos < len) {
		line++;
		char *s = data + pos;
		char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		if (n > MARKET_LINE_MAX) {
			rc = err_set(err, "%s:%ld: line longer than %d bytes",
				     ld->path, line, MARKET_LINE_MAX);
			break;
		}
		if (n && s[n - 1] == '\r')
			n--;
		if (memchr(s, '\0', n)) {
			rc = err_set(err, "%s:%ld: NUL byte in a text file",
				     ld->path, line);
			break;
		}
		size_t k = 0;
		while (k < n && (s[k] == ' ' || s[k] == '\t'))
			k++;
		if (k == n)
			continue; /* blank line */
		size_t nf;
		const char *why;
		if (csv_split(s, n, f, &nf, &why) < 0) {
			rc = err_set(err, "%s:%ld: %s", ld->path, line, why);
			break;
		}
		if (!have_header) {
			if (line != 1) {
				rc = err_set(err, "%s:%ld: blank lines before the header",
					     ld->path, line);
				break;
			}
			if ((rc = loader_header(ld, f, nf, pairs, npairs, err)) < 0)
				break;
			have_header = true;
			continue;
		}
		if ((rc = loader_row(ld, line, f, nf, err)) < 0)
			break;
	}
	free(f);
	if (rc == 0 && !have_header)
		rc = err_set(err, "%s: empty file: no header line", ld->path);
	if (rc == 0 && ld->layout == LAYOUT_WIDE) {
		struct qlist *r = &ld->rows;
		if (r->n > 1)
			qsort(r->q, r->n, sizeof(*r->q), quote_cmp);
		for (size_t i = 1; rc == 0 && i < r->n; i++) {
			if (r->q[i].day != r->q[i - 1].day)
				continue;
			char d[16];
			market_day_format(r->q[i].day, d, sizeof(d));
			rc = err_set(err, "%s:%d: date %s repeated (first on line %d)",
				     ld->path, r->q[i].line, d, r->q[i - 1].line);
		}
	}
	for (size_t i = 0; rc == 0 && i < ld->nlists; i++)
		rc = qlist_sort(&ld->lists[i], ld->path, err);
	return rc;
}

int market_parse_csv(const char *data, size_t len, const char *name,
		     const char *const *pairs, size_t npairs,
		     struct fx_series *out, char **err)
{
	for (size_t p = 0; p < npairs; p++)
		memset(&out[p], 0, sizeof(out[p]));
	for (size_t p = 0; p < npairs; p++) {
		char b[4], q[4];
		if (market_pair_parse(pairs[p], b, q, err) < 0)
			return err_prefix(err, "%s", name);
	}
	if (len > MARKET_FILE_MAX)
		return err_set(err, "%s: %zu bytes, over the %zu-byte limit",
			       name, len, MARKET_FILE_MAX);
	/* Fields are unquoted in place: work on a copy. */
	char *copy = xmalloc(len + 1);
	memcpy(copy, data, len);
	copy[len] = '\0';
	struct loader ld;
	memset(&ld, 0, sizeof(ld));
	ld.path = name;
	ld.file = path_base(name);
	int rc = loader_parse(&ld, copy, len, pairs, npairs, err);
	if (rc == 0)
		for (size_t p = 0; p < npairs; p++)
			loader_build(&ld, pairs[p], &out[p]);
	loader_release(&ld);
	free(copy);
	return rc;
}

int market_load_csv(const char *path, const char *const *pairs, size_t npairs,
		    struct fx_series *out, char **err)
{
	for (size_t p = 0; p < npairs; p++)
		memset(&out[p], 0, sizeof(out[p]));
	char *data;
	size_t len;
	if (util_read_file(path, MARKET_FILE_MAX, &data, &len, err) < 0)
		return -1;
	int rc = market_parse_csv(data, len, path, pairs, npairs, out, err);
	free(data);
	return rc;
}

/* The simulated market. splitmix64 seeds and steps the generator, so a
 * path depends only on (seed, currency, days). */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_unit(uint64_t *state)
{
	return ((double)(splitmix64(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller, one value per call). */
static double rng_normal(uint64_t *state)
{
	double u1 = rng_unit(state), u2 = rng_unit(state);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void sim_currency(const struct ccy_info *ci, int32_t start_day,
			 int32_t end_day, uint64_t seed, struct qlist *l)
{
	uint64_t h = UINT64_C(1469598103934665603);
	for (const char *c = ci->code; *c; c++)
		h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
	uint64_t state = seed ^ h;
	double sd = ci->vol / sqrt(DAYS_PER_YEAR_TRADING);
	double x = ci->level, scale = pow(10, ci->decimals);
	bool first = true;
	util_strlcpy(l->key, ci->code, sizeof(l->key));
	for (int32_t d = start_day; d <= end_day; d++) {
		if (market_weekday(d) > 5)
			continue;
		if (!first)
			x *= exp(sd * rng_normal(&state) - 0.5 * sd * sd);
		first = false;
		qlist_add(l, d, 0, round(x * scale) / scale);
	}
}

int market_sim(const char *const *pairs, size_t npairs, int32_t start_day,
	       int32_t end_day, uint64_t seed, struct fx_series *out,
	       char **err)
{
	for (size_t p = 0; p < npairs; p++)
		memset(&out[p], 0, sizeof(out[p]));
	if (start_day > end_day)
		return err_set(err, "simulated market: start day after end day");
	if ((int64_t)end_day - start_day > 366 * 200)
		return err_set(err, "simulated market: over 200 years asked for");
	for (size_t p = 0; p < npairs; p++) {
		char code[2][4];
		if (market_pair_parse(pairs[p], code[0], code[1], err) < 0)
			return err_prefix(err, "simulated market");
		for (int k = 0; k < 2; k++) {
			const struct ccy_info *ci = ccy_find(code[k]);
			if (strcmp(code[k], "USD") && (!ci || ci->level <= 0))
				return err_set(err,
					       "simulated market: pair %s: no simulation for %s",
					       pairs[p], code[k]);
		}
	}
	struct qlist sims[ARRAY_SIZE(currencies)];
	memset(sims, 0, sizeof(sims));
	for (size_t p = 0; p < npairs; p++) {
		char code[2][4];
		struct leg leg[2];
		market_pair_parse(pairs[p], code[0], code[1], NULL);
		for (int k = 0; k < 2; k++) {
			memset(&leg[k], 0, sizeof(leg[k]));
			const struct ccy_info *ci = ccy_find(code[k]);
			if (!ci)
				continue; /* USD */
			struct qlist *l = &sims[ci - currencies];
			if (!l->n)
				sim_currency(ci, start_day, end_day, seed, l);
			leg[k].l = l;
			/* The walk is in the convention; the leg is per USD. */
			leg[k].invert = !ci->usd_base;
		}
		struct fx_series *s = &out[p];
		util_strlcpy(s->pair, pairs[p], sizeof(s->pair));
		series_from_legs(s, &leg[1], &leg[0]);
		s->simulated = true;
		util_strlcpy(s->source, "simulated", sizeof(s->source));
	}
	for (size_t i = 0; i < ARRAY_SIZE(currencies); i++)
		free(sims[i].q);
	return 0;
}
