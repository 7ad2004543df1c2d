/* The validator's check of the market findings beyond the window's two
 * closes: the range, the volatility, the largest daily move, the moving
 * averages and the z-score, each computed again here from the price data
 * (fx_rates), not by the analytics the researcher used. */
#include "agents/validator_market.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/data_tools.h"
#include "agents/market.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* Closes in day order (a view: the arrays are someone else's). */
struct closes {
	const int32_t *day;
	const double *v;
	size_t n;
};

/* The closes of [from, to] from fx_rates; the caller frees *day and *v. */
static int closes_fetch(struct agent *a, const char *pair, int32_t from, int32_t to,
			int32_t **day, double **v, size_t *n, char **err)
{
	*day = NULL;
	*v = NULL;
	*n = 0;
	char d0[16], d1[16];
	market_day_format(from, d0, sizeof(d0));
	market_day_format(to, d1, sizeof(d1));
	cJSON *res = NULL;
	if (data_fx_rates(a, pair, d0, d1, &res, err) < 0)
		return -1;
	const cJSON *pts = cJSON_GetObjectItem(res, "points");
	size_t cap = (size_t)cJSON_GetArraySize(pts);
	*day = xcalloc(cap ? cap : 1, sizeof(**day));
	*v = xcalloc(cap ? cap : 1, sizeof(**v));
	const cJSON *p;
	cJSON_ArrayForEach(p, pts) {
		const cJSON *ds = cJSON_GetArrayItem(p, 0), *cv = cJSON_GetArrayItem(p, 1);
		int32_t dd;
		if (!cJSON_IsString(ds) || !cJSON_IsNumber(cv) ||
		    market_day_parse(ds->valuestring, strlen(ds->valuestring), &dd) < 0 ||
		    (*n && dd <= (*day)[*n - 1]))
			continue;
		(*day)[*n] = dd;
		(*v)[(*n)++] = cv->valuedouble;
	}
	cJSON_Delete(res);
	return 0;
}

static bool same(double a, double b)
{
	return isfinite(a) && isfinite(b) && fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}

/* Indexes [*i0, *i1) of the closes inside [a, b]. */
static void span(const struct closes *c, int32_t a, int32_t b, size_t *i0, size_t *i1)
{
	*i0 = 0;
	while (*i0 < c->n && c->day[*i0] < a)
		(*i0)++;
	*i1 = *i0;
	while (*i1 < c->n && c->day[*i1] <= b)
		(*i1)++;
}

static double sample_sd(const double *v, size_t n)
{
	double m = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}

static bool day_is(const cJSON *d, const char *key, int32_t day)
{
	const char *s = jstr(d, key);
	int32_t v;
	return s && market_day_parse(s, strlen(s), &v) == 0 && v == day;
}

/* Each recheck: 1 when the finding's figures are the recomputed ones, 0
 * when not (*why says what the data gives), -1 when the data cannot say. */

static int recheck_range(const struct closes *c, int32_t ws, int32_t we, const cJSON *d,
			 char **why)
{
	size_t i0, i1;
	span(c, ws, we, &i0, &i1);
	if (i1 <= i0)
		return -1;
	size_t hi = i0, lo = i0;
	for (size_t i = i0 + 1; i < i1; i++) {
		if (c->v[i] > c->v[hi])
			hi = i;
		if (c->v[i] < c->v[lo])
			lo = i;
	}
	char hd[16], ld[16];
	market_day_format(c->day[hi], hd, sizeof(hd));
	market_day_format(c->day[lo], ld, sizeof(ld));
	double vol = NAN;
	if (i1 - i0 >= 3) {
		double *r = xmalloc((i1 - i0 - 1) * sizeof(*r));
		for (size_t i = i0 + 1; i < i1; i++)
			r[i - i0 - 1] = log(c->v[i] / c->v[i - 1]);
		vol = sample_sd(r, i1 - i0 - 1) * sqrt(252.0) * 100;
		free(r);
	}
	double fvol = jnum(d, "vol_pct", NAN);
	bool ok = same(c->v[hi], jnum(d, "high", NAN)) && same(c->v[lo], jnum(d, "low", NAN)) &&
		  day_is(d, "high_date", c->day[hi]) && day_is(d, "low_date", c->day[lo]) &&
		  (isnan(fvol) ? isnan(vol) : same(vol, fvol));
	char vs[48] = "";
	if (isfinite(vol))
		snprintf(vs, sizeof(vs), "; realised volatility %.2f%%", vol);
	*why = xasprintf("%s: high %.6g (%s), low %.6g (%s)%s", ok ? "the price data agrees" :
			 "the price data says", c->v[hi], hd, c->v[lo], ld, vs);
	return ok;
}

static int recheck_move(const struct closes *c, int32_t ws, int32_t we, const cJSON *d,
			char **why)
{
	size_t i0, i1;
	span(c, ws, we, &i0, &i1);
	if (i1 < i0 + 2)
		return -1;
	size_t best = i0 + 1;
	double bp = (c->v[best] / c->v[best - 1] - 1) * 100;
	for (size_t i = i0 + 2; i < i1; i++) {
		double p = (c->v[i] / c->v[i - 1] - 1) * 100;
		if (fabs(p) > fabs(bp))
			bp = p, best = i;
	}
	char md[16], pd[16];
	market_day_format(c->day[best], md, sizeof(md));
	market_day_format(c->day[best - 1], pd, sizeof(pd));
	bool ok = same(bp, jnum(d, "max_move_pct", NAN)) && day_is(d, "max_move_date", c->day[best]);
	*why = xasprintf("%s: the largest daily move is %+.4f%% on %s (%.6g on %s to %.6g)",
			 ok ? "the price data agrees" : "the price data says", bp, md,
			 c->v[best - 1], pd, c->v[best]);
	return ok;
}

static int recheck_ma(const struct closes *c, int32_t we, const cJSON *d, char **why)
{
	size_t i0, i1;
	span(c, INT32_MIN, we, &i0, &i1);
	if (i1 < ANALYTICS_MA_LONG)
		return -1;
	double s5 = 0, s20 = 0;
	for (size_t i = i1 - ANALYTICS_MA_LONG; i < i1; i++) {
		s20 += c->v[i];
		if (i >= i1 - ANALYTICS_MA_SHORT)
			s5 += c->v[i];
	}
	double m5 = s5 / ANALYTICS_MA_SHORT, m20 = s20 / ANALYTICS_MA_LONG;
	bool ok = same(m5, jnum(d, "ma_short", NAN)) && same(m20, jnum(d, "ma_long", NAN));
	char fd[16];
	market_day_format(c->day[i1 - ANALYTICS_MA_LONG], fd, sizeof(fd));
	*why = xasprintf("%s: the last %d closes average %.6g, the last %d (from %s) %.6g",
			 ok ? "the price data agrees" : "the price data says", ANALYTICS_MA_SHORT,
			 m5, ANALYTICS_MA_LONG, fd, m20);
	return ok;
}

static int recheck_z(const struct closes *c, int32_t ws, int32_t we, const cJSON *d,
		     char **why)
{
	int32_t len = we - ws;
	size_t i0, i1;
	span(c, ws, we, &i0, &i1);
	if (len <= 0 || i1 < i0 + 2)
		return -1;
	double move = log(c->v[i1 - 1] / c->v[i0]);
	double past[ANALYTICS_Z_LOOKBACK_DAYS];
	size_t n = 0;
	for (int32_t k = 1; k <= ANALYTICS_Z_LOOKBACK_DAYS / len; k++) {
		size_t a0, a1;
		span(c, ws - k * len, ws - k * len + len, &a0, &a1);
		if (a1 >= a0 + 2)
			past[n++] = log(c->v[a1 - 1] / c->v[a0]);
	}
	if (n < ANALYTICS_Z_MIN_SAMPLES)
		return -1;
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m += past[i];
	m /= (double)n;
	double sd = sample_sd(past, n);
	if (!(sd > 0))
		return -1;
	double z = (move - m) / sd;
	bool ok = same(z, jnum(d, "zscore", NAN));
	*why = xasprintf("%s: the week's log move %.5f against %zu earlier moves of mean %.5f "
			 "and sd %.5f is a z-score of %.4f", ok ? "the price data agrees" :
			 "the price data says", move, n, m, sd, z);
	return ok;
}

static bool window_of(const cJSON *d, int32_t *ws, int32_t *we)
{
	const char *s0 = jstr(d, "window_start"), *s1 = jstr(d, "window_end");
	return s0 && s1 && market_day_parse(s0, strlen(s0), ws) == 0 &&
	       market_day_parse(s1, strlen(s1), we) == 0 && *ws <= *we;
}

int validator_market_judge(const int32_t *day, const double *close, size_t n, const cJSON *d,
			   char **why)
{
	int32_t ws, we;
	*why = NULL;
	if (!window_of(d, &ws, &we)) {
		*why = xstrdup("no figures to check against the price data");
		return -1;
	}
	const struct closes c = { day, close, n };
	int r;
	if (cJSON_GetObjectItem(d, "high"))
		r = recheck_range(&c, ws, we, d, why);
	else if (cJSON_GetObjectItem(d, "max_move_pct"))
		r = recheck_move(&c, ws, we, d, why);
	else if (cJSON_GetObjectItem(d, "ma_short"))
		r = recheck_ma(&c, we, d, why);
	else if (cJSON_GetObjectItem(d, "zscore"))
		r = recheck_z(&c, ws, we, d, why);
	else
		r = -1;
	if (r < 0 && !*why)
		*why = xstrdup("the price data has too few closes to compute the figure again");
	return r;
}

int validator_market_recheck(struct agent *a, const char *pair, const cJSON *d, char **why)
{
	int32_t ws, we;
	if (!window_of(d, &ws, &we)) {
		*why = xstrdup("no figures to check against the price data");
		return -1;
	}
	int32_t *day;
	double *v;
	size_t n;
	char *err = NULL;
	/* The researcher's range: its cache answers. */
	if (closes_fetch(a, pair, ws - ANALYTICS_HISTORY_DAYS, we, &day, &v, &n, &err) < 0) {
		*why = xasprintf("price data unavailable: %s", err);
		free(err);
		return -1;
	}
	int r = validator_market_judge(day, v, n, d, why);
	free(day);
	free(v);
	return r;
}
