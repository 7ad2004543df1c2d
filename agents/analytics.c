/* The research agents' analytics: window, ISO week, per-pair statistics,
 * central-bank event classification and currency sentiment. */
#include "agents/analytics.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"
#include "core/banned.h"

/* Window and weeks. */

void analytics_window(int64_t as_of_ns, int32_t *start_day, int32_t *end_day)
{
	*end_day = market_day_from_ns(as_of_ns);
	*start_day = *end_day - (ANALYTICS_WINDOW_DAYS - 1);
}

void analytics_iso_week(int32_t day, int *iso_year, int *iso_week)
{
	/* The Thursday of the day's week decides the year. */
	int32_t thursday = day - market_weekday(day) + 4;
	int y, m, d;
	market_day_to_ymd(thursday, &y, &m, &d);
	*iso_year = y;
	*iso_week = (thursday - market_day_from_ymd(y, 1, 1)) / 7 + 1;
}

void analytics_iso_week_format(int32_t day, char *buf, size_t size)
{
	int y, w;
	analytics_iso_week(day, &y, &w);
	snprintf(buf, size, "%04d-W%02d", y, w);
}

/* Per-pair statistics. */

const char *analytics_trend_name(enum fx_trend t)
{
	switch (t) {
	case FX_TREND_UP:
		return "up";
	case FX_TREND_DOWN:
		return "down";
	case FX_TREND_FLAT:
		return "flat";
	case FX_TREND_NONE:
		break;
	}
	return "n/a";
}

/* Index of the first quote after day (quotes [0, result) are <= day). */
static size_t upper_bound(const struct fx_series *s, int32_t day)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->days[mid] <= day)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static double mean_of(const double *v, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

/* Sample standard deviation (n - 1) of n >= 2 values. */
static double sd_of(const double *v, size_t n, double mean)
{
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return sqrt(ss / (double)(n - 1));
}

/* ln(last / first) of the quotes inside [a, b]; false with fewer than 2. */
static bool window_move(const struct fx_series *s, int32_t a, int32_t b,
			double *move)
{
	size_t i0 = market_series_lower_bound(s, a), i1 = upper_bound(s, b);
	if (i1 < i0 + 2)
		return false;
	*move = log(s->close[i1 - 1] / s->close[i0]);
	return true;
}

static void stats_trend(const struct fx_series *s, size_t i1,
			struct fx_stats *o)
{
	if (i1 < ANALYTICS_MA_LONG)
		return;
	o->ma_short = mean_of(s->close + i1 - ANALYTICS_MA_SHORT,
			      ANALYTICS_MA_SHORT);
	o->ma_long = mean_of(s->close + i1 - ANALYTICS_MA_LONG,
			     ANALYTICS_MA_LONG);
	if (o->ma_short > o->ma_long * (1 + ANALYTICS_TREND_FLAT))
		o->trend = FX_TREND_UP;
	else if (o->ma_short < o->ma_long * (1 - ANALYTICS_TREND_FLAT))
		o->trend = FX_TREND_DOWN;
	else
		o->trend = FX_TREND_FLAT;
}

static void stats_zscore(const struct fx_series *s, struct fx_stats *o)
{
	int32_t len = o->window_end - o->window_start;
	if (len <= 0)
		return;
	int32_t k_max = ANALYTICS_Z_LOOKBACK_DAYS / len;
	double *moves = xmalloc((size_t)(k_max > 0 ? k_max : 1) *
				sizeof(*moves));
	size_t n = 0;
	for (int32_t k = 1; k <= k_max; k++) {
		int32_t a = o->window_start - k * len;
		if (window_move(s, a, a + len, &moves[n]))
			n++;
	}
	o->z_samples = n;
	if (n >= ANALYTICS_Z_MIN_SAMPLES) {
		o->z_mean = mean_of(moves, n);
		o->z_sd = sd_of(moves, n, o->z_mean);
		if (o->z_sd > 0) {
			o->zscore = (o->log_move - o->z_mean) / o->z_sd;
			o->z_ok = true;
		}
	}
	free(moves);
}

int analytics_fx_stats(const struct fx_series *s, int32_t window_start,
		       int32_t window_end, struct fx_stats *out, char **err)
{
	struct fx_stats *o = out;
	memset(o, 0, sizeof(*o));
	util_strlcpy(o->pair, s->pair, sizeof(o->pair));
	o->simulated = s->simulated;
	o->window_start = window_start;
	o->window_end = window_end;
	o->start_close = o->end_close = o->change_pct = o->log_move = NAN;
	o->high = o->low = o->vol_pct = o->max_move_pct = NAN;
	o->zscore = o->z_mean = o->z_sd = o->ma_short = o->ma_long = NAN;
	o->trend = FX_TREND_NONE;
	o->last_day = INT32_MIN;
	o->freshness_days = -1;
	if (window_start > window_end)
		return err_set(err, "%s: window starts after it ends", s->pair);
	size_t i0 = market_series_lower_bound(s, window_start);
	size_t i1 = upper_bound(s, window_end);
	if (i1 > 0) {
		o->last_day = s->days[i1 - 1];
		o->freshness_days = window_end - o->last_day;
	}
	stats_trend(s, i1, o);
	o->nobs = i1 > i0 ? i1 - i0 : 0;
	if (!o->nobs) {
		char a[16], b[16], l[16] = "none";
		market_day_format(window_start, a, sizeof(a));
		market_day_format(window_end, b, sizeof(b));
		if (i1 > 0)
			market_day_format(o->last_day, l, sizeof(l));
		return err_set(err, "no %s quote in %s .. %s (last quote: %s)",
			       s->pair, a, b, l);
	}
	const double *c = s->close;
	o->start_day = s->days[i0];
	o->start_close = c[i0];
	o->end_day = s->days[i1 - 1];
	o->end_close = c[i1 - 1];
	o->change_pct = (o->end_close / o->start_close - 1) * 100;
	o->log_move = log(o->end_close / o->start_close);
	o->high = o->low = c[i0];
	o->high_day = o->low_day = s->days[i0];
	for (size_t i = i0 + 1; i < i1; i++) {
		if (c[i] > o->high) {
			o->high = c[i];
			o->high_day = s->days[i];
		}
		if (c[i] < o->low) {
			o->low = c[i];
			o->low_day = s->days[i];
		}
	}
	o->nreturns = o->nobs - 1;
	if (o->nreturns >= 1) {
		double *r = xmalloc(o->nreturns * sizeof(*r));
		for (size_t i = i0 + 1; i < i1; i++) {
			r[i - i0 - 1] = log(c[i] / c[i - 1]);
			double pct = (c[i] / c[i - 1] - 1) * 100;
			if (!o->max_move_ok || fabs(pct) > fabs(o->max_move_pct)) {
				o->max_move_pct = pct;
				o->max_move_day = s->days[i];
				o->max_move_ok = true;
			}
		}
		if (o->nreturns >= 2) {
			double m = mean_of(r, o->nreturns);
			o->vol_pct = sd_of(r, o->nreturns, m) * sqrt(252.0) * 100;
			o->vol_ok = true;
		}
		free(r);
	}
	stats_zscore(s, o);
	return 0;
}

/* Words. A word is a run of letters and digits (bytes >= 0x80 count as
 * letters), with '.', '\'' or '&' inside it between two such ("U.S",
 * "people's", "S&L"). A hyphen separates words: wire headlines write
 * "RATE-SUMITA" and "-DEALERS". */

struct tok {
	size_t off, len;
	bool sent_end;   /* a sentence ends right after this word */
	bool num;
};

struct toks {
	const char *text;
	char *low;
	struct tok *t;
	size_t n;
};

static bool word_char(char ch)
{
	return isalnum((unsigned char)ch) || (unsigned char)ch >= 0x80;
}

static bool abbreviation(const char *w, size_t n)
{
	static const char *const abbr[] = {
		"u.s", "u.k", "mr", "mrs", "ms", "dr", "st", "inc", "corp",
		"co", "ltd", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
		"sep", "sept", "oct", "nov", "dec", "no", "vs", "n.y", "gov",
	};
	if (n == 1)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(abbr); i++)
		if (strlen(abbr[i]) == n && !memcmp(w, abbr[i], n))
			return true;
	return false;
}

static void toks_init(struct toks *tk, const char *text)
{
	size_t len = strlen(text), cap = 0;
	tk->text = text;
	tk->low = xmalloc(len + 1);
	for (size_t i = 0; i <= len; i++)
		tk->low[i] = (char)tolower((unsigned char)text[i]);
	tk->t = NULL;
	tk->n = 0;
	size_t i = 0;
	while (i < len) {
		if (!word_char(text[i])) {
			i++;
			continue;
		}
		size_t s = i;
		while (i < len) {
			if (word_char(text[i]))
				i++;
			else if (strchr(".'&", text[i]) && i + 1 < len &&
				 word_char(text[i + 1]))
				i++;
			else
				break;
		}
		if (tk->n == cap) {
			cap = cap ? 2 * cap : 64;
			tk->t = xrealloc(tk->t, cap * sizeof(*tk->t));
		}
		struct tok *t = &tk->t[tk->n++];
		t->off = s;
		t->len = i - s;
		t->num = isdigit((unsigned char)text[s]);
		t->sent_end = i < len && strchr(".!?;", text[i]) &&
			      (i + 1 == len || isspace((unsigned char)text[i + 1]) ||
			       text[i + 1] == '"' || text[i + 1] == ')') &&
			      !abbreviation(tk->low + s, t->len);
	}
}

static void toks_release(struct toks *tk)
{
	free(tk->low);
	free(tk->t);
}

/* Does word w match one alternative of spec ("a|b|c*", '*' = prefix)? */
static bool word_match(const char *w, size_t n, const char *spec,
		       size_t slen)
{
	const char *p = spec, *end = spec + slen;
	while (p < end) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		size_t an = bar ? (size_t)(bar - p) : (size_t)(end - p);
		if (an && p[an - 1] == '*') {
			if (n >= an - 1 && !memcmp(w, p, an - 1))
				return true;
		} else if (n == an && !memcmp(w, p, n)) {
			return true;
		}
		p += an + 1;
	}
	return false;
}

/* Matches the token at i against spec, also as a possessive ("japan's"). */
static bool tok_match(const struct toks *tk, size_t i, const char *spec,
		      size_t slen, bool exact)
{
	const struct tok *t = &tk->t[i];
	const char *w = (exact ? tk->text : tk->low) + t->off;
	if (word_match(w, t->len, spec, slen))
		return true;
	return t->len > 2 && w[t->len - 2] == '\'' &&
	       (w[t->len - 1] == 's' || w[t->len - 1] == 'S') &&
	       word_match(w, t->len - 2, spec, slen);
}

/* Matches a phrase (words separated by spaces) at token i within one
 * sentence; returns the number of tokens matched, 0 for none. */
static size_t phrase_match(const struct toks *tk, size_t i,
			   const char *phrase, bool exact)
{
	size_t k = 0;
	const char *p = phrase;
	while (*p) {
		const char *sp = strchr(p, ' ');
		size_t wl = sp ? (size_t)(sp - p) : strlen(p);
		if (i + k >= tk->n || (k && tk->t[i + k - 1].sent_end) ||
		    !tok_match(tk, i + k, p, wl, exact))
			return 0;
		k++;
		p += wl;
		while (*p == ' ')
			p++;
	}
	return k;
}

struct rule {
	const char *a;
	const char *b;      /* NULL: a alone */
	int gap;            /* words allowed between a and b */
	bool exact;         /* match the case as written */
	const char *unless; /* a does not count when this word follows */
};

/* Matches a rule at token i; returns the end token (exclusive) or 0. */
static size_t rule_match(const struct toks *tk, size_t i,
			 const struct rule *r)
{
	size_t la = phrase_match(tk, i, r->a, r->exact);
	if (!la)
		return 0;
	if (r->unless && i + la < tk->n && !tk->t[i + la - 1].sent_end &&
	    phrase_match(tk, i + la, r->unless, false))
		return 0;
	if (!r->b)
		return i + la;
	for (size_t j = i + la; j <= i + la + (size_t)r->gap && j < tk->n; j++) {
		if (tk->t[j - 1].sent_end)
			break;
		size_t lb = phrase_match(tk, j, r->b, r->exact);
		if (lb)
			return j + lb;
	}
	return 0;
}

/* The text of tokens [i, end) as written, white space collapsed. */
static void span_text(const struct toks *tk, size_t i, size_t end, char *buf,
		      size_t size)
{
	size_t a = tk->t[i].off, b = tk->t[end - 1].off + tk->t[end - 1].len;
	size_t w = 0;
	bool space = false;
	for (size_t k = a; k < b && w + 1 < size; k++) {
		char ch = tk->text[k];
		if (isspace((unsigned char)ch)) {
			space = true;
			continue;
		}
		if (space && w + 2 < size)
			buf[w++] = ' ';
		space = false;
		buf[w++] = ch;
	}
	buf[w] = '\0';
}

/* Central banks and policy bodies. */

struct bank {
	const char *code, *name;
	bool central;
};

enum {
	B_FED, B_BOJ, B_ECB, B_BUBA, B_BOE, B_RBA, B_RBNZ, B_SNB, B_BOC,
	B_PBOC, B_BDF, B_BDI, B_BOK, B_RBI, B_MAS, B_HKMA, B_BOT, B_BNM,
	B_CBC, B_POLICY, B_N
};

static const struct bank banks[B_N] = {
	[B_FED] = { "Fed", "Federal Reserve", true },
	[B_BOJ] = { "BOJ", "Bank of Japan", true },
	[B_ECB] = { "ECB", "European Central Bank", true },
	[B_BUBA] = { "Bundesbank", "Deutsche Bundesbank", true },
	[B_BOE] = { "BoE", "Bank of England", true },
	[B_RBA] = { "RBA", "Reserve Bank of Australia", true },
	[B_RBNZ] = { "RBNZ", "Reserve Bank of New Zealand", true },
	[B_SNB] = { "SNB", "Swiss National Bank", true },
	[B_BOC] = { "BoC", "Bank of Canada", true },
	[B_PBOC] = { "PBoC", "People's Bank of China", true },
	[B_BDF] = { "BdF", "Bank of France", true },
	[B_BDI] = { "BdI", "Bank of Italy", true },
	[B_BOK] = { "BoK", "Bank of Korea", true },
	[B_RBI] = { "RBI", "Reserve Bank of India", true },
	[B_MAS] = { "MAS", "Monetary Authority of Singapore", true },
	[B_HKMA] = { "HKMA", "Hong Kong Monetary Authority", true },
	[B_BOT] = { "BOT", "Bank of Thailand", true },
	[B_BNM] = { "BNM", "Bank Negara Malaysia", true },
	[B_CBC] = { "CBC", "Central Bank of China (Taiwan)", true },
	[B_POLICY] = { "policy", "Treasury, finance ministers, G-5/G-7", false },
};

#define PHRASE(a) { a, NULL, 0, false, NULL }
#define ACRONYM(a) { a, NULL, 0, true, NULL }
#define NEAR(a, b, gap) { a, b, gap, false, NULL }

static const struct {
	int bank;
	struct rule r;
} bank_rules[] = {
	{ B_FED, PHRASE("federal reserve") },
	{ B_FED, PHRASE("federal open market committee") },
	{ B_FED, ACRONYM("Fed|FED|FOMC") },
	{ B_BOJ, PHRASE("bank of japan") },
	{ B_BOJ, ACRONYM("BOJ|BoJ") },
	{ B_ECB, PHRASE("european central bank") },
	{ B_ECB, ACRONYM("ECB") },
	{ B_BUBA, PHRASE("bundesbank") },
	{ B_BOE, PHRASE("bank of england") },
	{ B_BOE, ACRONYM("BOE|BoE") },
	{ B_RBA, PHRASE("reserve bank of australia") },
	{ B_RBA, ACRONYM("RBA") },
	{ B_RBNZ, PHRASE("reserve bank of new zealand") },
	{ B_RBNZ, ACRONYM("RBNZ") },
	{ B_SNB, PHRASE("swiss national bank") },
	{ B_SNB, ACRONYM("SNB") },
	{ B_BOC, PHRASE("bank of canada") },
	{ B_BOC, ACRONYM("BOC|BoC") },
	{ B_PBOC, PHRASE("people's|peoples bank of china") },
	{ B_PBOC, ACRONYM("PBOC|PBoC") },
	{ B_BDF, PHRASE("bank of france") },
	{ B_BDF, PHRASE("banque de france") },
	{ B_BDI, PHRASE("bank of italy") },
	{ B_BDI, PHRASE("banca d'italia") },
	{ B_BOK, PHRASE("bank of korea") },
	{ B_BOK, ACRONYM("BOK|BoK") },
	{ B_RBI, PHRASE("reserve bank of india") },
	{ B_RBI, ACRONYM("RBI") },
	{ B_MAS, PHRASE("monetary authority of singapore") },
	{ B_MAS, ACRONYM("MAS") },
	{ B_HKMA, PHRASE("hong kong monetary authority") },
	{ B_HKMA, ACRONYM("HKMA") },
	{ B_BOT, PHRASE("bank of thailand") },
	{ B_BNM, PHRASE("bank negara") },
	{ B_CBC, PHRASE("central bank of china") },
	/* The Treasury, but not Treasury bills, bonds, ... */
	{ B_POLICY, { "treasury", NULL, 0, false,
		      "bill|bills|bond|bonds|note|notes|securities|issue|issues|"
		      "yield|yields|market|markets|auction|auctions|refunding|"
		      "debt|paper|certificate|certificates|futures|price|prices|"
		      "balance|balances|deposit|deposits|financing|tax|rate|"
		      "rates|coupon|coupons|borrowing|stock|stocks|curve" } },
	{ B_POLICY, PHRASE("finance minister|ministers|ministry|ministries") },
	{ B_POLICY, PHRASE("ministry of finance") },
	{ B_POLICY, ACRONYM("MOF") },
	{ B_POLICY, PHRASE("g 5|6|7") },
	{ B_POLICY, PHRASE("g5|g6|g7") },
	{ B_POLICY, PHRASE("group of five|six|seven") },
	{ B_POLICY, PHRASE("louvre") },
	{ B_POLICY, NEAR("plaza|paris|louvre", "accord|accords|agreement|pact", 1) },
};

/* Actions, in priority order. */
static const struct {
	enum cb_action action;
	struct rule r;
} action_rules[] = {
	/* not the Banque de France's "intervention rate", its policy rate */
	{ CB_ACTION_INTERVENTION, { "interven*", NULL, 0, false, "rate|rates" } },
	{ CB_ACTION_INTERVENTION,
	  NEAR("bought|buy|buys|buying|sold|sell|sells|selling|purchased|"
	       "purchase|purchases|purchasing",
	       "dollar|dollars|dlr|dlrs|yen|mark|marks|sterling|francs", 5) },
	{ CB_ACTION_INTERVENTION,
	  NEAR("dollar|dlr|yen|mark|sterling", "buying|selling|purchases|sales",
	       0) },
	{ CB_ACTION_CUT,
	  NEAR("cut|cuts|cutting|lowered|lowers|lowering|reduce|reduced|"
	       "reduces|reducing|trim|trimmed|trims|trimming|slash|slashed|"
	       "slashes",
	       "rate|rates", 5) },
	{ CB_ACTION_CUT, NEAR("rate|rates", "cut|cuts|reduction|reductions", 1) },
	{ CB_ACTION_CUT, NEAR("ease|eased|eases|easing", "monetary|credit|policy", 2) },
	{ CB_ACTION_HIKE,
	  NEAR("raise|raised|raises|raising|increase|increased|increases|"
	       "increasing|hike|hiked|hikes|hiking|lift|lifted|lifts|lifting",
	       "rate|rates", 5) },
	{ CB_ACTION_HIKE,
	  NEAR("rate|rates", "hike|hikes|increase|increases|rise|rises", 1) },
	{ CB_ACTION_HIKE,
	  NEAR("tighten|tightened|tightens|tightening", "monetary|credit|policy",
	       2) },
	{ CB_ACTION_HOLD,
	  NEAR("left|leave|leaves|leaving|kept|keep|keeps|keeping|held|hold|"
	       "holds|holding|maintained|maintain|maintains|maintaining",
	       "unchanged|steady", 6) },
	{ CB_ACTION_HOLD, NEAR("rate|rates", "unchanged", 2) },
	{ CB_ACTION_HOLD, NEAR("no change", "rate|rates|policy", 4) },
	/* "unchanged monetary policy", "steady monetary course" */
	{ CB_ACTION_HOLD,
	  NEAR("unchanged|steady", "policy|course|stance", 2) },
	/* "credit policy is on hold", "policy likely to stay on hold" */
	{ CB_ACTION_HOLD, NEAR("policy|rate|rates", "on hold", 3) },
};

const char *analytics_action_name(enum cb_action a)
{
	switch (a) {
	case CB_ACTION_HIKE:
		return "hike";
	case CB_ACTION_CUT:
		return "cut";
	case CB_ACTION_HOLD:
		return "hold";
	case CB_ACTION_INTERVENTION:
		return "intervention";
	case CB_ACTION_STATEMENT:
		return "statement";
	case CB_ACTION_NONE:
		break;
	}
	return "none";
}

struct bank_scan {
	size_t count[B_N];
	size_t first[B_N];           /* token index of the first mention */
	char first_text[B_N][ANALYTICS_EVIDENCE_LEN];
};

static void scan_banks(const struct toks *tk, struct bank_scan *bs)
{
	memset(bs, 0, sizeof(*bs));
	for (size_t i = 0; i < tk->n; i++) {
		for (size_t r = 0; r < ARRAY_SIZE(bank_rules); r++) {
			size_t end = rule_match(tk, i, &bank_rules[r].r);
			if (!end)
				continue;
			int b = bank_rules[r].bank;
			if (!bs->count[b]++) {
				bs->first[b] = i;
				span_text(tk, i, end, bs->first_text[b],
					  sizeof(bs->first_text[b]));
			}
			break;
		}
	}
}

/* The bank picked from one text's scan: central banks by first mention
 * (title) or most mentions (body), else policy; -1 for none. */
static int pick_bank(const struct bank_scan *bs, bool by_first)
{
	int best = -1;
	for (int b = 0; b < B_N; b++) {
		if (!bs->count[b] || !banks[b].central)
			continue;
		if (best < 0) {
			best = b;
			continue;
		}
		bool better = by_first ?
				      bs->first[b] < bs->first[best] :
				      bs->count[b] > bs->count[best] ||
					      (bs->count[b] == bs->count[best] &&
					       bs->first[b] < bs->first[best]);
		if (better)
			best = b;
	}
	if (best < 0 && bs->count[B_POLICY])
		best = B_POLICY;
	return best;
}

static void add_evidence(struct cb_event *ev, const char *text)
{
	if (!*text || ev->nevidence == ANALYTICS_EVIDENCE_MAX)
		return;
	for (size_t i = 0; i < ev->nevidence; i++)
		if (!strcasecmp(ev->evidence[i], text))
			return;
	util_strlcpy(ev->evidence[ev->nevidence++], text,
		     ANALYTICS_EVIDENCE_LEN);
}

static bool is(const struct toks *tk, size_t i, const char *spec);
static int ccy_at(const struct toks *tk, size_t i);

/* A negation within the 3 words before token i, same sentence. */
static bool negated(const struct toks *tk, size_t i)
{
	for (size_t k = 1; k <= 3 && k <= i; k++) {
		if (tk->t[i - k].sent_end)
			break;
		if (is(tk, i - k, "not|no|never|denied|denies|deny|without|nor|"
				  "didn't|won't|doesn't|wouldn't|isn't|wasn't"))
			return true;
	}
	return false;
}

/* Does the text talk about currencies (a currency named, or currency,
 * forex, foreign exchange, exchange rate)? */
static bool about_fx(const struct toks *tk)
{
	for (size_t i = 0; i < tk->n; i++) {
		if (ccy_at(tk, i) >= 0 || is(tk, i, "currency|currencies|forex") ||
		    phrase_match(tk, i, "foreign|exchange exchange|rate|rates",
				 false) == 2)
			return true;
	}
	return false;
}

/* Does the text talk about money-market operations (money market,
 * securities market, reserves, repurchases, liquidity, tenders)? */
static bool about_money_market(const struct toks *tk)
{
	for (size_t i = 0; i < tk->n; i++) {
		if (is(tk, i, "reserves|repurchase|repurchases|repo|repos|"
			      "liquidity|tender|tenders") ||
		    phrase_match(tk, i, "money|securities market|markets",
				 false) == 2)
			return true;
	}
	return false;
}

/* The highest-priority action matching the text, with its matches added
 * as evidence. Intervention is skipped when fx is false (a story about
 * money-market operations that names no currency: the Fed "intervening"
 * in the securities market to add reserves); a negated match ("does not
 * intend to cut") does not count. */
static enum cb_action scan_action(const struct toks *tk, bool fx,
				  struct cb_event *ev)
{
	enum cb_action found = CB_ACTION_NONE;
	for (size_t r = 0; r < ARRAY_SIZE(action_rules); r++) {
		enum cb_action a = action_rules[r].action;
		if (found != CB_ACTION_NONE && a != found)
			break;
		if (a == CB_ACTION_INTERVENTION && !fx)
			continue;
		for (size_t i = 0; i < tk->n; i++) {
			size_t end = rule_match(tk, i, &action_rules[r].r);
			if (!end || negated(tk, i))
				continue;
			char buf[ANALYTICS_EVIDENCE_LEN];
			span_text(tk, i, end, buf, sizeof(buf));
			add_evidence(ev, buf);
			found = a;
		}
	}
	return found;
}

bool analytics_classify_text(const char *title, const char *body,
			     struct cb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	struct toks tt, tb;
	toks_init(&tt, title ? title : "");
	toks_init(&tb, body ? body : "");
	struct bank_scan st, sb;
	scan_banks(&tt, &st);
	scan_banks(&tb, &sb);
	int b = pick_bank(&st, true);
	const char *btext = b >= 0 ? st.first_text[b] : "";
	if (b < 0) {
		b = pick_bank(&sb, false);
		btext = b >= 0 ? sb.first_text[b] : "";
	}
	for (int k = 0; k < B_N; k++)
		if ((st.count[k] || sb.count[k]) &&
		    ev->nbanks < ANALYTICS_BANKS_MAX)
			ev->banks[ev->nbanks++] = banks[k].code;
	if (b >= 0) {
		ev->bank = banks[b].code;
		ev->bank_name = banks[b].name;
		add_evidence(ev, btext);
	}
	bool fx = about_fx(&tt) || about_fx(&tb) ||
		  !(about_money_market(&tt) || about_money_market(&tb));
	ev->action = scan_action(&tt, fx, ev);
	ev->action_in_title = ev->action != CB_ACTION_NONE;
	if (ev->action == CB_ACTION_NONE)
		ev->action = scan_action(&tb, fx, ev);
	if (b >= 0 && ev->action == CB_ACTION_NONE)
		ev->action = CB_ACTION_STATEMENT;
	toks_release(&tt);
	toks_release(&tb);
	return b >= 0;
}

bool analytics_news_classify(const struct news_item *it, struct cb_event *ev)
{
	return analytics_classify_text(it->title, it->body, ev);
}

/* Currency sentiment. */

static const char ccy_codes[ANALYTICS_NCCY][4] = {
	"USD", "JPY", "EUR", "DEM", "GBP", "AUD", "NZD", "CHF", "CAD", "CNY",
	"HKD", "SGD", "KRW", "INR", "THB", "MYR", "TWD", "FRF", "SEK", "NOK",
	"DKK",
};

enum { C_USD, C_JPY, C_EUR, C_DEM, C_GBP, C_AUD, C_NZD, C_CHF, C_CAD, C_CNY,
       C_HKD, C_SGD, C_KRW, C_INR, C_THB, C_MYR, C_TWD, C_FRF, C_SEK, C_NOK,
       C_DKK };

void analytics_sentiment_init(struct fx_sentiment *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < ANALYTICS_NCCY; i++)
		memcpy(s->c[i].ccy, ccy_codes[i], 4);
}

const struct ccy_sentiment *analytics_sentiment_get(const struct fx_sentiment *s,
						    const char *ccy)
{
	for (int i = 0; i < ANALYTICS_NCCY; i++)
		if (!strcmp(s->c[i].ccy, ccy))
			return &s->c[i];
	return NULL;
}

static bool is(const struct toks *tk, size_t i, const char *spec)
{
	return i < tk->n && tok_match(tk, i, spec, strlen(spec), false);
}

/* The word before i in the same sentence matches spec. */
static bool prev_is(const struct toks *tk, size_t i, const char *spec)
{
	return i > 0 && !tk->t[i - 1].sent_end && is(tk, i - 1, spec);
}

/* The currency named by the word at i, or -1. */
static int ccy_at(const struct toks *tk, size_t i)
{
	if (i >= tk->n || tk->t[i].num)
		return -1;
	if (i > 0 && !tk->t[i - 1].sent_end &&
	    (tk->t[i - 1].num ||
	     is(tk, i - 1, "mln|bln|billion|billions|million|millions|trillion|pct")))
		return -1; /* an amount: "500 mln yen" */
	if (is(tk, i, "dollar|dollars|greenback")) {
		if (prev_is(tk, i, "australian|aussie"))
			return C_AUD;
		if (prev_is(tk, i, "zealand"))
			return C_NZD;
		if (prev_is(tk, i, "canadian"))
			return C_CAD;
		if (prev_is(tk, i, "kong"))
			return C_HKD;
		if (prev_is(tk, i, "singapore"))
			return C_SGD;
		if (prev_is(tk, i, "taiwan|taiwanese"))
			return C_TWD;
		return C_USD;
	}
	if (is(tk, i, "yen"))
		return C_JPY;
	if (is(tk, i, "mark|marks"))
		return prev_is(tk, i, "the|german|deutsche|d") ? C_DEM : -1;
	if (is(tk, i, "deutschemark|deutschemarks"))
		return C_DEM;
	if (is(tk, i, "sterling"))
		return C_GBP;
	if (is(tk, i, "pound|pounds"))
		return prev_is(tk, i, "irish|egyptian|cyprus|lebanese|syrian") ?
			       -1 :
			       C_GBP;
	if (is(tk, i, "euro|euros"))
		return C_EUR;
	if (is(tk, i, "franc|francs")) {
		if (prev_is(tk, i, "swiss"))
			return C_CHF;
		if (prev_is(tk, i, "french"))
			return C_FRF;
		return -1;
	}
	if (is(tk, i, "yuan|renminbi"))
		return C_CNY;
	if (is(tk, i, "won"))
		return prev_is(tk, i, "korean") ? C_KRW : -1;
	if (is(tk, i, "rupee|rupees"))
		return prev_is(tk, i, "lankan|pakistani|pakistan|nepalese|mauritian|indonesian") ?
			       -1 :
			       C_INR;
	if (is(tk, i, "baht"))
		return C_THB;
	if (is(tk, i, "ringgit"))
		return C_MYR;
	if (is(tk, i, "krona|kronor"))
		return C_SEK;
	if (is(tk, i, "krone|kroner")) {
		if (prev_is(tk, i, "norwegian"))
			return C_NOK;
		if (prev_is(tk, i, "danish"))
			return C_DKK;
		return -1;
	}
	if (is(tk, i, "kiwi"))
		return C_NZD;
	if (is(tk, i, "aussie"))
		return is(tk, i + 1, "dollar|dollars") ? -1 : C_AUD;
	return -1;
}

static const char up_words[] =
	"firmer|firm|firmed|firming|rose|rise|rises|rising|risen|"
	"strengthened|strengthen|strengthens|strengthening|stronger|strong|"
	"gained|gain|gains|gaining|climbed|climb|climbs|climbing|rallied|"
	"rally|rallies|rallying|recovered|recover|recovers|recovering|"
	"advanced|advance|advances|surged|surge|surges|jumped|jump|jumps|"
	"soared|soar|soars|rebounded|rebound|rebounds|appreciated|"
	"appreciation|higher";
static const char down_words[] =
	"fell|fall|falls|falling|fallen|weaker|weak|weakened|weaken|weakens|"
	"weakening|weakness|slid|slide|slides|sliding|slipped|slip|slips|"
	"slipping|dropped|drop|drops|dropping|declined|decline|declines|"
	"declining|lower|eased|ease|eases|easing|plunged|plunge|plunges|"
	"tumbled|tumble|tumbles|sank|sink|sinks|depreciated|depreciation|"
	"lost|loses|losing|retreated|retreat|retreats|sagged|sag|softer|"
	"softened|slumped|slump|slumps";

static int polarity(const struct toks *tk, size_t i)
{
	if (is(tk, i, "pressure|pressures"))
		return prev_is(tk, i, "upward") ? 1 : -1;
	if (is(tk, i, up_words))
		return 1;
	if (is(tk, i, down_words))
		return -1;
	return 0;
}

static void count(struct fx_sentiment *s, int c, int p)
{
	if (p > 0)
		s->c[c].pos++;
	else
		s->c[c].neg++;
}

/* True when tokens a < b are in the same sentence. */
static bool same_sentence(const struct toks *tk, size_t a, size_t b)
{
	for (size_t k = a; k < b; k++)
		if (tk->t[k].sent_end)
			return false;
	return true;
}

static void sentiment_scan(struct fx_sentiment *s, const char *text)
{
	struct toks tk;
	toks_init(&tk, text);
	for (size_t i = 0; i < tk.n; i++) {
		int p = polarity(&tk, i);
		if (!p)
			continue;
		int subj = -1;
		if (same_sentence(&tk, i, i + 1))
			subj = ccy_at(&tk, i + 1);
		for (size_t j = i; subj < 0 && j > 0 && i - j < 4; j--) {
			if (tk.t[j - 1].sent_end)
				break;
			subj = ccy_at(&tk, j - 1);
		}
		for (size_t j = i + 2; subj < 0 && j <= i + 3 && j < tk.n; j++)
			if (same_sentence(&tk, i, j))
				subj = ccy_at(&tk, j);
		if (subj >= 0)
			count(s, subj, p);
		for (size_t j = i + 1; j <= i + 5 && j < tk.n; j++) {
			if (tk.t[j - 1].sent_end)
				break;
			if (!is(&tk, j, "against|versus|vs"))
				continue;
			for (size_t k = j + 1; k <= j + 3 && k < tk.n; k++) {
				if (tk.t[k - 1].sent_end)
					break;
				int c = ccy_at(&tk, k);
				if (c >= 0) {
					if (c != subj)
						count(s, c, -p);
					break;
				}
			}
			break;
		}
	}
	toks_release(&tk);
}

/* Counts one text or story: the currencies whose counts grew since
 * before[] were in it. */
static void sentiment_finish(struct fx_sentiment *s, const unsigned *before)
{
	s->ntexts++;
	for (int c = 0; c < ANALYTICS_NCCY; c++) {
		unsigned n = s->c[c].pos + s->c[c].neg;
		if (n > before[c])
			s->c[c].stories++;
		s->c[c].score = n ? ((double)s->c[c].pos - s->c[c].neg) / n : 0;
	}
}

static void sentiment_start(const struct fx_sentiment *s, unsigned *before)
{
	for (int c = 0; c < ANALYTICS_NCCY; c++)
		before[c] = s->c[c].pos + s->c[c].neg;
}

void analytics_sentiment_add(struct fx_sentiment *s, const char *text)
{
	if (!text)
		return;
	unsigned before[ANALYTICS_NCCY];
	sentiment_start(s, before);
	sentiment_scan(s, text);
	sentiment_finish(s, before);
}

void analytics_sentiment_add_story(struct fx_sentiment *s, const char *title,
				   const char *body)
{
	unsigned before[ANALYTICS_NCCY];
	sentiment_start(s, before);
	if (title)
		sentiment_scan(s, title);
	if (body)
		sentiment_scan(s, body);
	sentiment_finish(s, before);
}

void analytics_sentiment_add_item(struct fx_sentiment *s,
				  const struct news_item *it)
{
	analytics_sentiment_add_story(s, it->title, it->body);
}
