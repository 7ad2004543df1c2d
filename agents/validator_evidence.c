/* The validator's independent evidence on a claimed central-bank act
 * (see validator_evidence.h). */
#include "agents/validator_evidence.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/market.h"
#include "core/util.h"
#include "core/banned.h"

const char *vev_verdict_name(enum vev_verdict v)
{
	return v == VEV_CONFIRMED ? "confirmed" : v == VEV_DISPUTED ? "disputed" : "unverified";
}

const char *vev_price_name(enum vev_price p)
{
	static const char *const n[] = { "not used", "consistent", "flat", "damped", "against" };
	return n[p];
}

/* ---- the direction of an intervention ------------------------------------ */

/* Lowercase words of s (letters, digits, apostrophes), at most max. */
static size_t split_words(const char *s, char w[][16], size_t max)
{
	size_t n = 0;
	while (s && *s && n < max) {
		while (*s && !isalnum((unsigned char)*s))
			s++;
		size_t k = 0;
		while (*s && (isalnum((unsigned char)*s) || *s == '\'')) {
			if (k < 15)
				w[n][k++] = (char)tolower((unsigned char)*s);
			s++;
		}
		if (k) {
			w[n][k] = 0;
			n++;
		}
	}
	return n;
}

/* The currency a word (and the one before it) names, NULL if none. */
static const char *word_ccy(char w[][16], size_t i)
{
	const char *p = i ? w[i - 1] : "";
	const char *x = w[i];
	if (!strncmp(x, "dollar", 6) || !strcmp(x, "dlrs") || !strcmp(x, "dlr")) {
		if (!strcmp(p, "canadian"))
			return "CAD";
		if (!strcmp(p, "australian"))
			return "AUD";
		if (!strcmp(p, "hong") || !strcmp(p, "kong"))
			return "HKD";
		return "USD";
	}
	if (!strcmp(x, "yen"))
		return "JPY";
	if (!strcmp(x, "marks") || !strcmp(x, "mark"))
		return "DEM";
	if (!strcmp(x, "sterling") || !strcmp(x, "pounds") || !strcmp(x, "pound"))
		return "GBP";
	if (!strncmp(x, "franc", 5))
		return !strcmp(p, "swiss") ? "CHF" : !strcmp(p, "french") ? "FRF" : NULL;
	if (!strncmp(x, "guilder", 7))
		return "NLG";
	return NULL;
}

static bool word_in(const char *x, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(x, *list))
			return true;
	return false;
}

/* Reads "bought dollars against yen", "selling sterling", "to support
 * the dollar", "stem the dollar's fall" in text: the currency bought
 * (firmer) and the one sold (weaker). Returns true when one was found. */
bool vev_direction(const char *text, char firmer[4], char weaker[4])
{
	static const char *const buy[] = { "buy", "buys", "bought", "buying", "purchase",
					   "purchased", "purchases", "purchasing", "support",
					   "supported", "supporting", "supports", "prop", "propped",
					   "propping", "defend", "defended", "defending", "stem",
					   "stemmed", "stemming", "hold", "holding", NULL };
	static const char *const sell[] = { "sell", "sells", "sold", "selling", "sales",
					    "dumping", "dumped", NULL };
	char w[80][16];
	size_t n = split_words(text, w, 80);
	for (size_t i = 0; i < n; i++) {
		/* "dollar buying", "dollar purchases", "dollar sales". */
		const char *c0 = word_ccy(w, i);
		if (c0 && i + 1 < n && (word_in(w[i + 1], buy) || word_in(w[i + 1], sell))) {
			snprintf(word_in(w[i + 1], buy) ? firmer : weaker, 4, "%s", c0);
			return true;
		}
		int side = word_in(w[i], buy) ? 1 : word_in(w[i], sell) ? -1 : 0;
		if (!side)
			continue;
		for (size_t j = i + 1; j < n && j <= i + 4; j++) {
			const char *c = word_ccy(w, j);
			if (!c)
				continue;
			/* "stem the dollar's fall", "hold the dollar above":
			 * buying it. */
			snprintf(side > 0 ? firmer : weaker, 4, "%s", c);
			/* "... dollars against (for, with) yen": the other side. */
			for (size_t k = j + 1; k < n && k <= j + 3; k++) {
				if (!strcmp(w[k], "against") || !strcmp(w[k], "for") ||
				    !strcmp(w[k], "with")) {
					const char *o = k + 1 < n ? word_ccy(w, k + 1) : NULL;
					if (o && strcmp(o, c))
						snprintf(side > 0 ? weaker : firmer, 4, "%s", o);
					break;
				}
			}
			return true;
		}
	}
	return false;
}

/* ---- reports ------------------------------------------------------------- */

/* The dateline's city: "TOKYO, March 24 -" -> "TOKYO"; without a dateline
 * the body's opening "TOKYO, March 24 - " is read. "" when neither. */
static size_t city_len(const char *d)
{
	size_t k = 0;
	while (d[k] && k < 23 && (isupper((unsigned char)d[k]) || d[k] == ' ' || d[k] == '.'))
		k++;
	while (k && d[k - 1] == ' ')
		k--;
	return k;
}

/* The dateline's city: "TOKYO, March 24 -" -> "TOKYO"; without a dateline
 * the body's opening "TOKYO, March 24 - " or a flash's "TOKYO - " is
 * read. "" when none: such stories of one day count as one report. */
static void story_city(const struct vev_story *s, char city[24])
{
	city[0] = 0;
	const char *src[] = { s->dateline, s->body, s->title };
	for (size_t i = 0; i < 3; i++) {
		const char *d = src[i];
		if (!d || !*d)
			continue;
		size_t k = city_len(d);
		/* A title's "TOKYO - Bank of Japan ...", not "BANK OF JAPAN
		 * INTERVENES - DEALERS". */
		bool flash = i == 2 && !strncmp(d + k, " - ", 3) && d[k + 3] &&
			     islower((unsigned char)d[k + 4]);
		if (k >= 2 && ((i < 2 && d[k] == ',') || flash)) {
			snprintf(city, 24, "%.*s", (int)k, d);
			return;
		}
		if (i == 0)
			return;
	}
}

static bool cited(const struct vev_claim *c, const char *id)
{
	for (size_t i = 0; i < c->ncited; i++)
		if (c->cited[i] && id && !strcmp(c->cited[i], id))
			return true;
	return false;
}

static void ids_add(char *buf, size_t size, const char *id)
{
	size_t l = strlen(buf);
	if (l + strlen(id) + 3 < size)
		snprintf(buf + l, size - l, "%s%s", l ? ", " : "", id);
}

/* The day a story's desk wrote it: its local day (a Tokyo story sent the
 * UTC evening before is of the next Tokyo day). */
static int32_t story_day(const struct vev_story *s)
{
	return s->local_day ? s->local_day : s->pub_day;
}

static void group_add(struct vev_result *r, const struct vev_claim *c, const struct vev_story *s)
{
	char city[24];
	story_city(s, city);
	struct vev_group *g = NULL;
	for (size_t i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].city, city) && r->groups[i].pub_day == story_day(s))
			g = &r->groups[i];
	if (!g) {
		if (r->ngroups == VEV_MAX_GROUPS)
			return;
		g = &r->groups[r->ngroups++];
		memset(g, 0, sizeof(*g));
		snprintf(g->city, sizeof(g->city), "%s", city);
		g->pub_day = story_day(s);
	}
	ids_add(g->ids, sizeof(g->ids), s->id);
	g->n++;
	if (!cited(c, s->id))
		g->uncited++;
}

static const struct ev_act *story_act(const struct ev_story *es, const char *bank,
				      enum ev_kind kind, enum ev_mode mode)
{
	for (size_t i = 0; i < es->n; i++)
		if (es->acts[i].bank && !strcmp(es->acts[i].bank, bank) && es->acts[i].kind == kind &&
		    es->acts[i].mode == mode)
			return &es->acts[i];
	return NULL;
}

/* ---- price --------------------------------------------------------------- */

static bool ccy_is(const char *a, const char *b)
{
	return !strcmp(a, b) || (!strcmp(a, "DEM") && !strcmp(b, "EUR"));
}

/* +1 when the act should raise the pair's rate, -1 lower it, 0 unknown. */
static int expected_sign(const char *pair, const char *firmer, const char *weaker)
{
	if (!pair || strlen(pair) != 7 || pair[3] != '/')
		return 0;
	char b[4], q[4];
	snprintf(b, sizeof(b), "%.3s", pair);
	snprintf(q, sizeof(q), "%.3s", pair + 4);
	if (firmer[0] && ccy_is(firmer, b))
		return 1;
	if (firmer[0] && ccy_is(firmer, q))
		return -1;
	if (weaker[0] && ccy_is(weaker, b))
		return -1;
	if (weaker[0] && ccy_is(weaker, q))
		return 1;
	return 0;
}

static void judge_price(const struct vev_claim *c, const struct vev_point *pts, size_t n,
			struct vev_result *r)
{
	int sign = expected_sign(c->pair, r->firmer, r->weaker);
	r->price = VEV_PRICE_NA;
	if (!sign || n < 2)
		return;
	size_t k = 0;
	while (k < n && pts[k].day < c->day)
		k++;
	if (k == 0 || k == n || pts[k].day > c->day + 3 || !(pts[k - 1].close > 0))
		return;
	r->d0 = pts[k - 1].day;
	r->d1 = pts[k].day;
	r->c0 = pts[k - 1].close;
	r->c1 = pts[k].close;
	r->pct = (r->c1 / r->c0 - 1) * 100;
	r->prev_pct = NAN;
	if (k >= 2 && pts[k - 2].close > 0)
		r->prev_pct = (pts[k - 1].close / pts[k - 2].close - 1) * 100;
	double m = r->pct * sign, p = r->prev_pct * sign;
	if (m > VEV_FLAT_PCT)
		r->price = VEV_PRICE_CONSISTENT;
	else if (m >= -VEV_FLAT_PCT)
		r->price = VEV_PRICE_FLAT;
	else if (c->kind == EV_INTERVENTION && !isnan(p) && p < m)
		r->price = VEV_PRICE_DAMPED;
	else
		r->price = VEV_PRICE_AGAINST;
}

/* ---- the verdict --------------------------------------------------------- */

void vev_judge(const struct vev_claim *c, const struct vev_story *st, size_t n,
	       const struct vev_point *pts, size_t npts, struct vev_result *out)
{
	memset(out, 0, sizeof(*out));
	out->prev_pct = NAN;
	enum ev_kind opposite = c->kind == EV_HIKE ? EV_CUT : c->kind == EV_CUT ? EV_HIKE : EV_NONE;
	int dir_votes = 0;
	struct vev_group dg[VEV_MAX_GROUPS]; /* the denials' cities and days */
	size_t ndg = 0;
	struct ev_story *own = xmalloc(sizeof(*own));
	for (size_t i = 0; i < n; i++) {
		const struct vev_story *s = &st[i];
		if (!s->id)
			continue;
		bool near = s->pub_day >= c->day - 1 && s->pub_day <= c->day + 2;
		/* The claim's own stories report it whenever they came out
		 * (a story of Monday on Wednesday's intervention). */
		bool reports = near || (s->pub_day >= c->day - 1 && cited(c, s->id));
		bool before = opposite != EV_NONE && s->pub_day >= c->day - VEV_PLAUSIBLE_DAYS &&
			      s->pub_day < c->day + 1;
		if (!reports && !before)
			continue;
		const struct ev_story *es = s->ev;
		if (!es) {
			events_extract_story(s->title, s->body, s->dateline,
					     s->local_day ? s->local_day : s->pub_day, own);
			es = own;
		}
		const struct ev_act *f = story_act(es, c->bank, c->kind, EV_MODE_FACT);
		if (reports && f && f->day == c->day) {
			group_add(out, c, s);
			if (c->kind == EV_INTERVENTION && cited(c, s->id) && dir_votes < 3) {
				char fi[4] = "", we[4] = "";
				bool got = vev_direction(f->evidence, fi, we);
				char fi2[4] = "", we2[4] = "";
				if (vev_direction(s->body, fi2, we2) && got &&
				    (!strcmp(fi, fi2) || !strcmp(we, we2))) {
					/* The body's fuller "bought dollars
					 * against yen" completes the title's. */
					if (!fi[0])
						memcpy(fi, fi2, 4);
					if (!we[0])
						memcpy(we, we2, 4);
				}
				if (got || vev_direction(s->title, fi, we)) {
					if (!out->firmer[0] && !out->weaker[0]) {
						memcpy(out->firmer, fi, 4);
						memcpy(out->weaker, we, 4);
					}
					dir_votes++;
				}
			}
		}
		const struct ev_act *d = story_act(es, c->bank, c->kind, EV_MODE_DENIED);
		if (near && d && d->day >= c->day - 1 && d->day <= c->day + 1 && !f) {
			ids_add(out->denials, sizeof(out->denials), s->id);
			out->ndenials++;
			/* One desk's updates (or the same story twice) are
			 * one denial, as they are one report. */
			char city[24];
			story_city(s, city);
			bool seen = false;
			for (size_t k = 0; k < ndg && !seen; k++)
				seen = !strcmp(dg[k].city, city) && dg[k].pub_day == story_day(s);
			if (!seen && ndg < VEV_MAX_GROUPS) {
				snprintf(dg[ndg].city, sizeof(dg[ndg].city), "%s", city);
				dg[ndg++].pub_day = story_day(s);
			}
		}
		const struct ev_act *o = opposite != EV_NONE ?
			story_act(es, c->bank, opposite, EV_MODE_FACT) : NULL;
		if (o && o->day < c->day && o->day >= c->day - VEV_PLAUSIBLE_DAYS &&
		    !out->implausible[0]) {
			char day[16];
			market_day_format(o->day, day, sizeof(day));
			snprintf(out->implausible, sizeof(out->implausible), "%s %s on %s (%s)",
				 c->bank, events_kind_name(opposite), day, s->id);
		}
	}
	free(own);
	out->denial_groups = (unsigned)ndg;
	const char *home = events_bank_ccy(c->bank);
	if (home && c->kind == EV_HIKE)
		snprintf(out->firmer, sizeof(out->firmer), "%s", home);
	else if (home && c->kind == EV_CUT)
		snprintf(out->weaker, sizeof(out->weaker), "%s", home);
	if (c->kind != EV_HOLD)
		judge_price(c, pts, npts, out);
	/* The price corroborates, never refutes: central banks buy a
	 * currency because it falls (and an expected cut can see it firm).
	 * A dispute needs a story denying the act or an earlier opposite
	 * act; it is high when the act is implausible or its denials
	 * (by city and day, as reports) outnumber its reports, medium when
	 * they balance. */
	size_t g = out->ngroups;
	out->severity = "";
	if (g < 2 && (out->ndenials || out->implausible[0])) {
		out->verdict = VEV_DISPUTED;
		out->severity = out->implausible[0] || out->denial_groups > g ? "high" : "medium";
	} else if (g >= 2) {
		out->verdict = VEV_CONFIRMED;
	} else {
		out->verdict = VEV_UNVERIFIED;
	}
}

void vev_check(struct vev_claim *c, const struct vev_story *st, size_t n, vev_prices_fn prices,
	       void *ctx, char own[8], struct vev_result *out)
{
	struct vev_point *pts = NULL;
	size_t npts = c->pair ? prices(ctx, c->pair, c->day, &pts) : 0;
	vev_judge(c, st, n, pts, npts, out);
	free(pts);
	/* The price of the act's own currencies: dollars bought for yen,
	 * reported under USD/CHF, are judged on USD/JPY. */
	const char *x = !strcmp(out->firmer, "USD") ? out->weaker :
			!strcmp(out->weaker, "USD") ? out->firmer : "";
	if (c->pair && strlen(x) == 3 && strcmp(x, "DEM") && !strstr(c->pair, x)) {
		bool base = !strcmp(x, "GBP") || !strcmp(x, "AUD") || !strcmp(x, "NZD") ||
			    !strcmp(x, "EUR");
		snprintf(own, 8, base ? "%s/USD" : "USD/%s", x);
		c->pair = own;
		pts = NULL;
		npts = prices(ctx, own, c->day, &pts);
		vev_judge(c, st, n, pts, npts, out);
		free(pts);
	}
}

static void day_md(int32_t day, char *buf, size_t size)
{
	char d[16];
	market_day_format(day, d, sizeof(d));
	snprintf(buf, size, "%s", strlen(d) == 10 ? d + 5 : d);
}

char *vev_reason(const struct vev_claim *c, const struct vev_result *r)
{
	struct sbuf b;
	sbuf_init(&b);
	char day[16];
	market_day_format(c->day, day, sizeof(day));
	const char *act = events_kind_name(c->kind);
	if (r->ngroups == 0) {
		sbuf_addf(&b, "reports: no story reports %s %s on %s as done", c->bank, act, day);
	} else {
		sbuf_addf(&b, "reports: %zu independent report%s of %s %s on %s (", r->ngroups,
			  r->ngroups == 1 ? "" : "s", c->bank, act, day);
		for (size_t i = 0; i < r->ngroups; i++) {
			const struct vev_group *g = &r->groups[i];
			char md[16];
			day_md(g->pub_day, md, sizeof(md));
			sbuf_addf(&b, "%s%s %s: %s", i ? "; " : "", g->city[0] ? g->city : "no dateline",
				  md, g->ids);
			if (g->uncited)
				sbuf_addf(&b, " [%u not cited]", g->uncited);
		}
		sbuf_addstr(&b, ")");
	}
	if (r->ndenials)
		sbuf_addf(&b, "; denied by %s", r->denials);
	else
		sbuf_addstr(&b, "; no story denies it");
	if (c->kind == EV_HOLD) {
		sbuf_addstr(&b, "; price: not used (a hold predicts no move)");
	} else if (r->price == VEV_PRICE_NA) {
		sbuf_addf(&b, "; price: not used (%s)",
			  !r->firmer[0] && !r->weaker[0] ? "no direction read from the reports" :
			  "no close of the pair on the act's day");
	} else {
		char d0[16], d1[16];
		market_day_format(r->d0, d0, sizeof(d0));
		market_day_format(r->d1, d1, sizeof(d1));
		sbuf_addf(&b, "; price: %s %.6g (%s) to %.6g (%s), %+.2f%%", c->pair, r->c0, d0,
			  r->c1, d1, r->pct);
		if (!isnan(r->prev_pct))
			sbuf_addf(&b, " after %+.2f%% the day before", r->prev_pct);
		sbuf_addf(&b, ", %s (the act should %s%s%s%s%s)", vev_price_name(r->price),
			  r->firmer[0] ? "firm " : "", r->firmer, r->firmer[0] && r->weaker[0] ?
			  " and " : "", r->weaker[0] ? "weaken " : "", r->weaker);
	}
	if (c->kind == EV_HIKE || c->kind == EV_CUT) {
		if (r->implausible[0])
			sbuf_addf(&b, "; plausibility: follows %s", r->implausible);
		else
			sbuf_addf(&b, "; plausibility: no opposite act in the %d days before",
				  VEV_PLAUSIBLE_DAYS);
	}
	return sbuf_detach(&b);
}
