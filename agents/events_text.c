/* The event extractor's text: names of kinds and modes, words of a
 * clause, dates (see events_text.h, events.h). */
#include "agents/events_text.h"
#include "agents/events_words.h"

#include <ctype.h>
#include <stdlib.h>

#include "agents/events.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- names ---------------------------------------------------------------- */

static const char *const kind_names[] = {
	[EV_NONE] = "none", [EV_HIKE] = "hike", [EV_CUT] = "cut", [EV_HOLD] = "hold",
	[EV_INTERVENTION] = "intervention", [EV_MMOP] = "money-market operation",
	[EV_STATEMENT] = "statement", [EV_DATA] = "data",
};

const char *events_kind_name(enum ev_kind k)
{
	return (size_t)k < ARRAY_SIZE(kind_names) ? kind_names[k] : "none";
}

enum ev_kind events_kind_parse(const char *s)
{
	for (size_t i = 1; s && i < ARRAY_SIZE(kind_names); i++)
		if (!strcmp(kind_names[i], s))
			return (enum ev_kind)i;
	return EV_NONE;
}

const char *events_mode_name(enum ev_mode m)
{
	switch (m) {
	case EV_MODE_FACT: return "fact";
	case EV_MODE_BACKGROUND: return "background";
	case EV_MODE_EXPECTED: return "expected";
	case EV_MODE_DENIED: return "denied";
	case EV_MODE_CALLED_FOR: return "called for";
	case EV_MODE_RUMOURED: return "rumoured";
	}
	return "?";
}

bool events_is_policy_fact(const struct ev_act *a)
{
	return a->mode == EV_MODE_FACT && (a->kind == EV_HIKE || a->kind == EV_CUT ||
					   a->kind == EV_HOLD || a->kind == EV_INTERVENTION);
}

/* The Bundesbank's mark stands for the euro. */
static bool ccy_same(const char *act_ccy, const char *pair_ccy)
{
	return !strcmp(act_ccy, pair_ccy) || (!strcmp(act_ccy, "DEM") && !strcmp(pair_ccy, "EUR"));
}

static bool act_has(const struct ev_act *ev, const char *pair_ccy)
{
	for (size_t i = 0; i < ev->nccy; i++)
		if (ccy_same(ev->ccys[i], pair_ccy))
			return true;
	return false;
}

bool events_act_touches(const struct ev_act *ev, const char *b, const char *q)
{
	if (ev->kind == EV_INTERVENTION && ev->nccy >= 3 && !ev->own_named &&
	    strcmp(ev->ccys[0], "USD")) {
		bool hb = false, hq = false;
		for (size_t i = 1; i < ev->nccy; i++) {
			hb = hb || ccy_same(ev->ccys[i], b);
			hq = hq || ccy_same(ev->ccys[i], q);
		}
		return hb && hq;
	}
	if (act_has(ev, b) && act_has(ev, q))
		return true;
	if (ev->nccy == 0)
		return false;
	const char *other = ccy_same(ev->ccys[0], b) ? q : ccy_same(ev->ccys[0], q) ? b : NULL;
	if (!other)
		return false;
	return ev->nccy == 1;
}

const struct ev_act *events_find_fact(const struct ev_story *s, const char *bank,
				      enum ev_kind kind)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->acts[i].mode == EV_MODE_FACT && s->acts[i].kind == kind &&
		    !strcmp(s->acts[i].bank, bank))
			return &s->acts[i];
	return NULL;
}

/* ---- words ---------------------------------------------------------------- */

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '&';
}

void events_clause_words(struct clause *c)
{
	c->n = 0;
	size_t i = 0;
	while (i < c->len && c->n < CLAUSE_WORDS) {
		if (!word_char(c->text[i])) {
			i++;
			continue;
		}
		size_t st = i;
		while (i < c->len && (word_char(c->text[i]) ||
				      ((c->text[i] == '.' || c->text[i] == '\'') && i + 1 < c->len &&
				       word_char(c->text[i + 1]))))
			i++;
		size_t n = i - st;
		/* "U.S." keeps its final dot so that it is one word. */
		if (i < c->len && c->text[i] == '.' && n <= 3 && memchr(c->text + st, '.', n))
			n++, i++;
		struct word *w = &c->w[c->n++];
		w->off = st;
		w->len = n;
		size_t k = 0;
		for (size_t j = 0; j < n && k + 1 < WORD_LEN; j++)
			w->w[k++] = (char)tolower((unsigned char)c->text[st + j]);
		w->w[k] = 0;
		if (k > 2 && !strcmp(w->w + k - 2, "'s"))
			w->w[k - 2] = 0;
	}
}




size_t events_match_phrase(const struct clause *c, size_t i, const char *p)
{
	size_t k = 0;
	while (*p) {
		const char *sp = strchr(p, ' ');
		size_t n = sp ? (size_t)(sp - p) : strlen(p);
		if (i + k >= c->n || strlen(c->w[i + k].w) != n || strncmp(c->w[i + k].w, p, n))
			return 0;
		k++;
		p += n + (sp ? 1 : 0);
	}
	return k;
}

bool events_number_word(const struct clause *c, size_t i)
{
	static const char *const nums[] = { "one", "two", "three", "four", "five", "six", "seven",
		"eight", "nine", "ten", "eleven", "twelve", NULL };
	return i < c->n && (isdigit((unsigned char)c->w[i].w[0]) || is_any(c, i, nums));
}

/* "May" at i is the month: capitalised inside a body's clause, with "'s",
 * before a day or after "in", "of", "since", "until", "end". */
bool events_month_may(const struct clause *c, size_t i)
{
	const char *t = c->text + c->w[i].off;
	if (!c->title && i > 0 && t[0] == 'M')
		return true;
	if (c->w[i].len > 3 && t[3] == '\'')
		return true;
	return (i + 1 < c->n && isdigit((unsigned char)c->w[i + 1].w[0])) || is(c, i - 1, "in") ||
	       is(c, i - 1, "of") || is(c, i - 1, "since") || is(c, i - 1, "until") ||
	       is(c, i - 1, "end");
}

/* ---- dates ----------------------------------------------------------------- */

static const char *const months[] = { "january", "february", "march", "april", "may", "june",
	"july", "august", "september", "october", "november", "december" };
static const char *const weekdays[] = { "thursday", "friday", "saturday", "sunday", "monday",
	"tuesday", "wednesday" }; /* 1970-01-01 was a Thursday */

static int32_t days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	int era = (y >= 0 ? y : y - 399) / 400;
	int yoe = y - era * 400;
	int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int32_t z, int *y, int *m)
{
	z += 719468;
	int era = (z >= 0 ? z : z - 146096) / 146097;
	int doe = z - era * 146097;
	int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int mp = (5 * doy + 2) / 153;
	*m = mp + (mp < 10 ? 3 : -9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* "in New York overnight", "overnight in the U.S.": the American session
 * of the day before, told the next morning in Europe or Asia; not
 * "overnight in Tokyo" (the same day, seen from Europe) nor an overnight
 * rate or assistance. */
static bool overnight_in_us(const struct clause *c, size_t i)
{
	static const char *const us[] = { "york", "u.s.", "america", "american", "wall", NULL };
	static const char *const noun[] = { "rate", "rates", "money", "call", "lending", "funds",
		"assistance", "loans", "deposits", "borrowing", "facility", "interbank", NULL };
	if (is_any(c, i + 1, noun))
		return false;
	for (size_t k = i >= 4 ? i - 4 : 0; k < c->n && k <= i + 4; k++)
		if (is_any(c, k, us))
			return true;
	return false;
}

/* A date phrase starting at word i: true with its day in *out, and *old,
 * *vague, *last_week as events_clause_day says. */
static bool day_at(const struct clause *c, size_t i, int32_t pub, bool *old, bool *vague,
		   bool *last_week, int32_t *out)
{
	int py, pm;
	civil_from_days(pub, &py, &pm);
	/* "yesterday"; "overnight" (the market of the night before: "the
	 * Fed bought dollars in New York overnight", told the next morning). */
	if (is(c, i, "yesterday") || (is(c, i, "overnight") && overnight_in_us(c, i)))
		return *out = (pub - 1), true;
	/* "today", "this afternoon": the day of the story. */
	if (is(c, i, "today") || is(c, i, "tonight") ||
	    (is(c, i, "this") && (is(c, i + 1, "morning") || is(c, i + 1, "afternoon") ||
				  is(c, i + 1, "evening"))))
		return *out = (pub), true;
	/* "bought dollars recently": a week back, as "recent" is read. */
	/* (Not "as recently as Tuesday": the day named after it.) */
	if (is(c, i, "recently") && !is(c, i - 1, "until") && !is(c, i - 1, "only") &&
	    !(is(c, i - 1, "as") && is(c, i + 1, "as"))) {
		*vague = true;
		return *out = (pub - EVENTS_RECENT_DAYS), true;
	}
	/* "three days ago", "a week ago", "two weeks ago". */
	if (is(c, i, "ago") && i >= 2 && (is(c, i - 1, "day") || is(c, i - 1, "days") ||
					   is(c, i - 1, "week") || is(c, i - 1, "weeks"))) {
		static const char *const nums[] = { "one", "two", "three", "four", "five", "six",
			"seven", "eight", "nine", "ten" };
		int n = isdigit((unsigned char)c->w[i - 2].w[0]) ? atoi(c->w[i - 2].w) :
			is(c, i - 2, "a") || is(c, i - 2, "an") ? 1 : 0;
		for (size_t k = 0; k < ARRAY_SIZE(nums); k++)
			if (is(c, i - 2, nums[k]))
				n = (int)k + 1;
		if (n < 1 || n > 60)
			return false;
		bool wk = is(c, i - 1, "week") || is(c, i - 1, "weeks");
		return *out = (pub - (wk ? 7 : 1) * n), true;
	}
	/* "over the weekend", "at the weekend": the Saturday before. */
	if (is(c, i, "weekend") && i > 0 && is(c, i - 1, "the") && i > 1 &&
	    (is(c, i - 2, "over") || is(c, i - 2, "at") || is(c, i - 2, "during"))) {
		int32_t mon0 = (int32_t)(((pub + 3) % 7 + 7) % 7); /* Monday = 0 */
		return *out = (pub - (mon0 - 5 + 7) % 7), true;
	}
	/* "in the past few days", "in recent days": two days back. */
	if (((is(c, i, "past") || is(c, i, "last")) && (is(c, i + 1, "few") || is(c, i + 1, "several")) &&
	     is(c, i + 2, "days")) ||
	    (is(c, i, "recent") && is(c, i + 1, "days"))) {
		*vague = true;
		return *out = (pub - 2), true;
	}
	/* "has intervened on several occasions in the past": long ago, no
	 * day (not "in the past few days", "in the past two weeks"). */
	if (is(c, i, "past") && i >= 2 && is(c, i - 1, "the") && is(c, i - 2, "in") &&
	    !is(c, i + 1, "few") && !is(c, i + 1, "several") && !events_number_word(c, i + 1) &&
	    !is(c, i + 1, "week") && !is(c, i + 1, "weeks") && !is(c, i + 1, "days") &&
	    !is(c, i + 1, "month") && !is(c, i + 1, "months") && !is(c, i + 1, "year") &&
	    !is(c, i + 1, "fortnight") && !is(c, i + 1, "day")) {
		*vague = true;
		return *out = (pub - 60), true;
	}
	/* "late last week": the Thursday before. */
	if (is(c, i, "late") && is(c, i + 1, "last") && is(c, i + 2, "week")) {
		int32_t mon0 = (int32_t)(((pub + 3) % 7 + 7) % 7);
		*last_week = true;
		return *out = (mon0 >= 5 ? pub - mon0 + 3 : pub - mon0 - 4), true;
	}
	/* "last week": the middle of the week before (its Wednesday). */
	if (is(c, i, "last") && is(c, i + 1, "week")) {
		int32_t mon0 = (int32_t)(((pub + 3) % 7 + 7) % 7); /* Monday = 0 */
		*last_week = true;
		/* On a Saturday or Sunday, the week just ended. */
		return *out = (mon0 >= 5 ? pub - mon0 + 2 : pub - mon0 - 5), true;
	}
	if (is(c, i, "last") && is(c, i + 1, "weekend"))
		return *out = (pub - 7), true;
	/* "in the past two weeks": the period's middle, recent. */
	if ((is(c, i, "past") || is(c, i, "last")) && events_number_word(c, i + 1) &&
	    is(c, i + 2, "weeks")) {
		int n = isdigit((unsigned char)c->w[i + 1].w[0]) ? atoi(c->w[i + 1].w) :
			is(c, i + 1, "two") ? 2 : is(c, i + 1, "three") ? 3 : 4;
		*last_week = *vague = true;
		return *out = (pub - 7 * n / 2), true;
	}
	/* "in the last ten days (of March)": the period's middle. */
	if ((is(c, i, "past") || is(c, i, "last")) && is(c, i + 2, "days")) {
		static const char *const nums[] = { "two", "three", "four", "five", "six", "seven",
			"eight", "nine", "ten" };
		int n = isdigit((unsigned char)c->w[i + 1].w[0]) ? atoi(c->w[i + 1].w) : 0;
		for (size_t k = 0; k < ARRAY_SIZE(nums); k++)
			if (is(c, i + 1, nums[k]))
				n = (int)k + 2;
		if (n < 1 || n > 31)
			return false;
		int32_t end = pub;
		for (int m = 0; m < 12 && is(c, i + 3, "of"); m++) {
			if (!is(c, i + 4, months[m]))
				continue;
			int y = py - (m + 1 > pm);
			end = (m == 11 ? days_from_civil(y + 1, 1, 1) : days_from_civil(y, m + 2, 1)) - 1;
			if (end > pub)
				end = pub;
		}
		*vague = true;
		*out = end - n / 2;
		*last_week = *out >= pub - 2 * EVENTS_RECENT_DAYS;
		*old = !*last_week;
		return true;
	}
	/* "two months after", "three months ago". */
	if ((is(c, i, "months") || is(c, i, "years")) && i > 0 && events_number_word(c, i - 1)) {
		*old = true;
		return *out = (pub - 60), true;
	}
	if (is(c, i, "last") && (is(c, i + 1, "month") || is(c, i + 1, "year") ||
				 is(c, i + 1, "autumn") || is(c, i + 1, "summer") ||
				 is(c, i + 1, "spring") || is(c, i + 1, "winter"))) {
		*old = true;
		return *out = (pub - 30), true;
	}
	/* "unlikely before the autumn", "until the summer": a season to
	 * come dates no done act. */
	size_t pre = i >= 1 && is(c, i - 1, "the") ? i - 2 : i - 1;
	bool ahead = i >= 1 && pre < c->n &&
		     (is(c, pre, "before") || is(c, pre, "until") || is(c, pre, "till") ||
		      is(c, pre, "by") || is(c, pre, "next"));
	/* (The "Autumn Statement" is a budget's name.) */
	if ((is(c, i, "autumn") || is(c, i, "summer") || is(c, i, "spring") ||
	     is(c, i, "winter")) && !is(c, i - 1, "this") && !ahead && !is(c, i + 1, "statement")) {
		*old = true;
		return *out = (pub - 90), true;
	}
	if (is(c, i, "earlier") && is(c, i + 1, "this") && is(c, i + 1 + 1, "week"))
		return *out = (pub - 2), true;
	/* "earlier this year", "at the start of this year", "(so far)
	 * this year": the year's acts, not the week's. */
	if (is(c, i, "this") && is(c, i + 1, "year")) {
		*old = true;
		return *out = (pub - 60), true;
	}
	for (int m = 0; m < 12; m++) {
		/* "may" is a month before a day or after "in", "of". */
		if (!is(c, i, months[m]) ||
		    (m == 4 && !events_month_may(c, i) && !is(c, i - 1, "during") &&
		     !is(c, i - 1, "for") && !is(c, i - 1, "through")))
			continue;
		int d = i + 1 < c->n ? atoi(c->w[i + 1].w) : 0;
		int y = py;
		if (m + 1 > pm)
			y--;
		/* "in the week ended April 13": the week's middle, three days
		 * before its end, as a period is read. */
		bool week_ended = i >= 2 && is(c, i - 2, "week") &&
				  (is(c, i - 1, "ended") || is(c, i - 1, "ending") || is(c, i - 1, "to"));
		if (d >= 1 && d <= 31 && week_ended) {
			*vague = true;
			return *out = (days_from_civil(y, m + 1, d) - 3), true;
		}
		if (d >= 1 && d <= 31)
			return *out = (days_from_civil(y, m + 1, d)), true;
		/* "in March" in the first week of April: the month's
		 * end (its last weekday), recent. */
		int32_t first = days_from_civil(py, pm, 1);
		if ((m + 2 == pm || (m == 11 && pm == 1)) && pub - first < 7) {
			*vague = true;
			int32_t e = first - 1;
			int32_t mon0 = (int32_t)(((e + 3) % 7 + 7) % 7);
			return *out = (mon0 >= 5 ? e - (mon0 - 4) : e), true;
		}
		if (m + 1 != pm) {
			*old = true;
			*vague = true;
			return *out = (days_from_civil(y, m + 1, 15)), true;
		}
	}
	for (int k = 0; k < 7; k++) {
		if (!is(c, i, weekdays[k]))
			continue;
		int32_t wd = (int32_t)(((pub % 7) + 7) % 7); /* 0 = Thursday */
		int32_t back = (wd - k + 7) % 7;
		if (is(c, i - 1, "last") && back == 0)
			back = 7;
		if (is(c, i - 1, "next") || is(c, i + 1, "next"))
			continue;
		return *out = (pub - back), true;
	}
	int yv = atoi(c->w[i].w);
	if (yv >= 1900 && yv < py && strlen(c->w[i].w) == 4) {
		*old = true;
		return *out = (days_from_civil(yv, 6, 30)), true;
	}
	return false;
}

int32_t events_clause_day(const struct clause *c, int32_t pub, bool *old, bool *vague,
			  bool *last_week)
{
	return events_clause_day_near(c, c->n, pub, old, vague, last_week);
}

/* A date phrase at word i, before the verb at v, that dates another verb:
 * the saying in "said last week that ... bought", or a leading
 * subordinate clause ("After stifling pressure last week, the
 * authorities sanctioned ..."). */
bool events_superlative_since(const struct clause *c, size_t s)
{
	static const char *const sup[] = { "lowest", "highest", "largest", "biggest", "first",
		"strongest", "weakest", "smallest", "sharpest", "steepest", "best", "worst", "most",
		"least", "heaviest", "fastest", "slowest", "widest", "narrowest", "longest", NULL };
	if (!is(c, s, "since"))
		return false;
	for (size_t k = s; k-- > 0 && k + 8 > s;)
		if (is_any(c, k, sup))
			return true;
	return false;
}

/* "yesterday's", "last week's", "Friday's": a day phrase at i whose
 * word (or the next) ends in "'s". */
static bool possessive_day(const struct clause *c, size_t i)
{
	return possessive(c, i) || possessive(c, i + 1);
}

/* A possessive day of a noun that is neither an act nor its occasion
 * ("yesterday's Autumn Statement"; not "yesterday's auction", "last
 * week's cut", "Monday's buying"). */
static bool possessive_other(const struct clause *c, size_t i)
{
	static const char *const act[] = { "cut", "cuts", "rise", "rises", "increase", "reduction",
		"hike", "fall", "drop", "move", "moves", "intervention", "purchases", "buying", "sales",
		"selling", "sale", "auction", "tender", "meeting", "session", "decision",
		"announcement", "action", "operation", "operations", "fixing", NULL };
	if (!possessive_day(c, i))
		return false;
	/* ("last Wednesday's trimming by the Bundesbank of its repurchase
	 * rate": a verb's gerund is an act too.) */
	for (size_t k = i + 1; k < i + 6 && k < c->n; k++)
		if (is_any(c, k, act) || is_any(c, k, events_cut_verbs) || is_any(c, k, events_hike_verbs))
			return false;
	return true;
}

/* "after yesterday's slide in the Australian dollar, which forced the
 * Reserve Bank of Australia to buy": the verb at v is in a relative
 * clause of the noun the possessive day at i dates. */
static bool relative_of(const struct clause *c, size_t i, size_t v)
{
	if (v <= i + 2 || v >= c->n)
		return false;
	for (size_t k = i + 2; k < v && k < i + 9; k++)
		if (is(c, k, "which") && comma_before(c, k))
			return v < k + 12;
	return false;
}

static bool dates_other_verb(const struct clause *c, size_t i, size_t v)
{
	/* "fell to its lowest level against the mark since the January
	 * realignment", "the largest in a single week since April": the
	 * date of a record, not of the act. */
	if ((i >= 1 && events_superlative_since(c, i - 1)) ||
	    (i >= 2 && is(c, i - 1, "the") && events_superlative_since(c, i - 2)))
		return true;
	static const char *const say[] = { "said", "says", "say", "reported", "announced",
		"stated", "disclosed", "revealed", "confirmed", "told", NULL };
	static const char *const sub[] = { "after", "before", "following", "since", "while",
		"when", "although", "though", NULL };
	/* "rose to 8.59 pct from 8.58 pct last week", "fixed at 722.50 against
	 * 721.10 yesterday", "down from 1.8168 on Friday": the day of the
	 * level compared with, for a verb or the whole clause. */
	static const char *const cmp[] = { "against", "with", "versus", "than", NULL };
	/* "fixed at 1.8465 marks after 1.8390 yesterday": "after" a level. */
	bool after_level = false;
	static const char *const unit[] = { "pct", "dlrs", "yen", "marks", "cents", "francs",
		"lire", "points", NULL };
	/* "from" too after a rate that moved of itself ("rose to 8.59 pct
	 * from 8.58 pct last week"), not after a bank's move ("cut its rate
	 * to 14 pct from 15 pct yesterday": the day of the cut). */
	static const char *const moved[] = { "rose", "rises", "fell", "falls", "jumped", "jumps",
		"climbed", "eased", "dropped", "edged", "slipped", "declined", NULL };
	size_t at = i >= 1 && (is(c, i - 1, "on") || is(c, i - 1, "last")) ? i - 1 : i;
	/* "against 135.40 in New York overnight": the level's market. */
	if (at >= 3 && is(c, at - 1, "york") && is(c, at - 2, "new") && is(c, at - 3, "in"))
		at -= 3;
	else if (at >= 2 && is(c, at - 2, "in") && isupper((unsigned char)c->text[c->w[at - 1].off]))
		at -= 2;
	/* "up from 150.05 yen at the close on Friday", "at Friday's close":
	 * the level's session. */
	if (at >= 3 && is(c, at - 3, "at") && is(c, at - 2, "the") &&
	    (is(c, at - 1, "close") || is(c, at - 1, "fixing") || is(c, at - 1, "opening")))
		at -= 3;
	size_t u = at >= 1 && is_any(c, at - 1, unit) ? 1 : 0;
	bool verb = v < c->n;
	if (at >= u + 3 && is(c, at - 2 - u, "after"))
		after_level = events_number_word(c, at - 3 - u) || is_any(c, at - 3 - u, unit);
	/* "against 1.5985/95 yesterday": a quote's bid and offer are one
	 * level. */
	if (at >= u + 3 && events_number_word(c, at - 1 - u) && events_number_word(c, at - 2 - u) &&
	    c->text[c->w[at - 1 - u].off - 1] == '/')
		u++;
	if (at >= u + 2 && events_number_word(c, at - 1 - u) &&
	    (is_any(c, at - 2 - u, cmp) || after_level ||
	     (is(c, at - 2 - u, "from") &&
	      ((verb && is_any(c, v, moved)) ||
	       (at >= u + 3 && (is(c, at - 3 - u, "up") || is(c, at - 3 - u, "down"))) ||
	       (verb && !(is_any(c, v, events_cut_verbs) || is_any(c, v, events_hike_verbs)))))))
		return true;
	/* "at a fixed rate of 3.60 pct, up from the 3.55 pct it has charged
	 * on its pacts since May": the level compared with. */
	for (size_t k = i; k-- > 1 && k + 12 > i;) {
		if (comma_before(c, k + 1))
			break;
		if (is(c, k, "from") && (is(c, k - 1, "up") || is(c, k - 1, "down")) &&
		    k + 2 < i && (events_number_word(c, k + 1) ||
				 (is(c, k + 1, "the") && events_number_word(c, k + 2))))
			return true;
	}
	/* "before the June 11 general election": the date of the event it
	 * names (not "at its March 31 meeting", an act's occasion, nor "since
	 * the February 22 accord", a period's start). */
	bool since = (i >= 1 && is(c, i - 1, "since")) ||
		     (i >= 2 && is(c, i - 1, "the") && is(c, i - 2, "since")) ||
		     (i >= 3 && is(c, i - 2, "the") && is(c, i - 3, "since"));
	for (size_t k = i + 1; !since && k < c->n && k <= i + 3; k++) {
		static const char *const event[] = { "election", "elections", "summit", "deadline",
			"realignment", "accord", "agreement", "conference", "referendum", "budget",
			NULL };
		if (is_any(c, k, event) && !comma_before(c, k))
			return true;
	}
	/* "the amounts were smaller than last week's": a comparison's day. */
	{
		size_t l = i >= 1 && (is(c, i - 1, "last") || is(c, i - 1, "this")) ? i - 1 : i;
		if (l >= 1 && (is(c, l - 1, "than") || (is(c, l - 1, "with") && l >= 2 &&
							 is(c, l - 2, "compared"))))
			return true;
	}
	/* "up from 3.80 pct in last week's tender", "following last week's
	 * crash": the day of the level compared with, or of what the act
	 * followed ("at yesterday's auction", "last Tuesday's cut" are the
	 * act's). */
	bool poss = possessive_day(c, i);
	size_t lead = i >= 1 && (is(c, i - 1, "last") || is(c, i - 1, "this")) ? i - 1 : i;
	/* (Not "after Tuesday's treasury bill auction": the bank rate the
	 * auction sets.) */
	bool occasion = false;
	for (size_t k = i + 1; k < i + 5 && k < c->n; k++)
		occasion = occasion || is(c, k, "auction") || is(c, k, "tender") ||
			   is(c, k, "meeting") || is(c, k, "session");
	if (poss && !occasion && lead >= 1 &&
	    (is(c, lead - 1, "following") || is(c, lead - 1, "after")) && (!verb || lead > v))
		return true;
	/* "down from the 3.85 pct at which last week's pact was allocated". */
	/* (Not "from 8.29 pct at Thursday's auction": the act's occasion.) */
	if (poss && !(occasion && lead >= 1 && is(c, lead - 1, "at"))) {
		static const char *const glue[] = { "in", "at", "which", "the", "of", NULL };
		size_t k = lead;
		while (k > 0 && k + 4 > lead && is_any(c, k - 1, glue))
			k--;
		if (k < lead && k >= 1 && is_any(c, k - 1, unit))
			k--;
		if (k < lead && k >= 2 && events_number_word(c, k - 1) &&
		    (is(c, k - 2, "from") || (is(c, k - 2, "the") && k >= 3 && is(c, k - 3, "from"))))
			return true;
	}
	if (!verb)
		return false;
	/* "cut its discount rate, effective on Monday", "with effect from
	 * Monday": the day it applies from, not the day of the decision. */
	if ((i >= 1 && is(c, i - 1, "effective")) ||
	    (i >= 2 && is(c, i - 1, "on") && is(c, i - 2, "effective")) ||
	    (i >= 2 && is(c, i - 1, "from") && (is(c, i - 2, "effect") || is(c, i - 2, "as"))))
		return true;
	/* "despite yesterday's cut in the Bundesbank's rate", "bought
	 * dollars, following Federal Reserve purchases in New York
	 * yesterday": the day of another act named as a noun. */
	static const char *const act_noun[] = { "cut", "cuts", "rise", "increase", "reduction",
		"hike", "intervention", "purchases", "buying", "sales", "selling", "move", "action",
		NULL };
	static const char *const adjunct[] = { "despite", "after", "following", "since", "before",
		NULL };
	if (poss && lead >= 1 && is_any(c, lead - 1, adjunct)) {
		for (size_t k = i + 1; k < i + 5 && k < c->n; k++)
			if (is_any(c, k, act_noun))
				return k != v;
	}
	/* "A cut in the Belgian discount rate followed last week's cut in
	 * Dutch rates": a possessive after the act dates the noun it owns. */
	if (poss && i > v) {
		for (size_t k = i + 1; k < i + 5 && k < c->n; k++)
			if (is_any(c, k, act_noun))
				return k != v;
	}
	if (i > v) {
		for (size_t k = v + 1; k < i; k++)
			if (is(c, k, "following") || (is(c, k, "after") && k + 1 < i) ||
			    (is(c, k, "despite") && k + 1 < i)) {
				/* ("leaving its rates unchanged, despite the rise in
				 * German rates over the past two weeks".) */
				/* "..., a surprise after its signals earlier this
				 * week that a cut would be premature": the day of
				 * the words it followed. */
				static const char *const words[] = { "signals", "signal", "signalling",
					"remarks", "comments", "warning", "warnings", "statement",
					"statements", "assurances", "hints", NULL };
				for (size_t j = k + 1; j < i; j++)
					if (is_any(c, j, act_noun) || is_any(c, j, words))
						return true;
				break;
			}
	}
	/* "kept the discount rate unchanged at 2.5 pct, the level to which
	 * the central bank trimmed it on Monday": the relative clause's own
	 * verb's day. */
	for (size_t k = v + 1; k < i; k++) {
		if (!is(c, k, "which") && !is(c, k, "when"))
			continue;
		for (size_t j = k + 1; j < i; j++)
			if (is_any(c, j, events_cut_verbs) || is_any(c, j, events_hike_verbs) ||
			    is_any(c, j, events_trade_verbs) || is_any(c, j, events_interv_verbs))
				return true;
		break;
	}
	/* "bought dollars throughout the day, and the Federal Reserve also
	 * bought dollars in New York overnight": the second verb's day. */
	for (size_t k = v + 1; k < i; k++) {
		if (!is(c, k, "and"))
			continue;
		for (size_t j = k + 1; j < i; j++)
			if (is_any(c, j, events_trade_verbs) || is_any(c, j, events_interv_verbs) ||
			    is_any(c, j, events_cut_verbs) || is_any(c, j, events_hike_verbs))
				return true;
	}
	/* "bought dollars this week, bankers said on Thursday": after the
	 * act, the saying's day. */
	/* (Not "the Federal Reserve's increase in its discount rate, announced
	 * on Friday": the act's own participle.) */
	size_t sv = is_any(c, i - 1, say) ? i - 1 : i > 1 && is(c, i - 1, "on") && is_any(c, i - 2, say) ? i - 2 : 0;
	if (i > v + 1 && sv && !(is(c, sv, "announced") && comma_before(c, sv)))
		return true;
	if (i >= v)
		return false;
	/* "The Bank of France, which left its intervention rate unchanged on
	 * Monday, cut it to 7-1/2 pct today": a date inside a relative clause
	 * between commas does not date the main verb after it. */
	for (size_t k = i; k-- > 0 && k + 12 > i;) {
		if ((is(c, k, "which") || is(c, k, "who")) && comma_before(c, k)) {
			/* The clause closed by a comma before the main verb ("...,
			 * which had resisted lower rates for much of last week,
			 * finally bowed to the buying and signalled its consent";
			 * not "..., when the bank bought crowns"). */
			for (size_t j = i + 1; j <= v; j++)
				if (comma_before(c, j))
					return !is(c, j, "when") && !is(c, j, "as");
			break;
		}
		if (comma_before(c, k))
			break;
	}
	/* "its first full session since the Conservatives' election victory
	 * on Thursday, and the Bank of England sold pounds": a date in a
	 * "since" or "after" phrase with a noun and no verb, ended by a comma
	 * before the act, dates the noun. */
	for (size_t k = i; k-- > 0 && k + 9 > i;) {
		if (comma_before(c, k + 1) && k + 1 <= i)
			break;
		if (!is(c, k, "since") && !is(c, k, "after") && !is(c, k, "following"))
			continue;
		if (k + 1 == i || (k + 2 == i && is(c, i - 1, "on")))
			break;
		bool verbal = false, comma = false;
		for (size_t j = k + 1; j < i; j++)
			verbal = verbal || is_any(c, j, events_trade_verbs) ||
				 is_any(c, j, events_interv_verbs) || is_any(c, j, events_cut_verbs) ||
				 is_any(c, j, events_hike_verbs);
		for (size_t j = i + 1; j <= v && !comma; j++)
			comma = comma_before(c, j);
		if (!verbal && comma)
			return true;
		break;
	}
	/* "opened nervously this morning, their first full session since the
	 * Federal Reserve raised its discount rate ... on Friday": a date
	 * before the "since" (or "after") of the act's own clause is the
	 * main clause's, when the act's clause has a date of its own. */
	for (size_t k = i + 1; k < v && k + 6 > v; k++)
		if ((is(c, k, "since") || is(c, k, "after")) && !events_superlative_since(c, k)) {
			bool own = false;
			bool o, va, lw;
			int32_t d;
			for (size_t j = v + 1; j < c->n && !own; j++)
				own = day_at(c, j, 0, &o, &va, &lw, &d);
			if (own)
				return true;
			break;
		}
	/* "at today's tender, after cutting it by a quarter point on
	 * Tuesday": a date before "after" is the main clause's. */
	if (v >= 1 && (is(c, v - 1, "after") || is(c, v - 1, "following")) && i + 1 < v)
		return true;
	if (i > 0 && is_any(c, i - 1, say))
		for (size_t t = i + 1; t < v; t++)
			if (is(c, t, "that"))
				return true;
	if (is_any(c, 0, sub)) {
		bool before = false;
		for (size_t t = 1; t <= i && !before; t++)
			before = comma_before(c, t);
		for (size_t t = i + 1; t <= v && !before; t++)
			if (comma_before(c, t))
				return true;
	}
	return false;
}

int32_t events_clause_day_near(const struct clause *c, size_t v, int32_t pub, bool *old,
			       bool *vague, bool *last_week)
{
	return events_clause_day_at(c, v, pub, old, vague, last_week, NULL);
}

int32_t events_clause_day_at(const struct clause *c, size_t v, int32_t pub, bool *old,
			     bool *vague, bool *last_week, bool *dated)
{
	int32_t best = pub, d;
	size_t dist = (size_t)-1;
	*old = *vague = *last_week = false;
	/* For a verb, a plain date before a possessive one ("yesterday's
	 * Autumn Statement, and the Bank cut its rates today"); the
	 * possessive when it is the only one ("Last week's cut followed a
	 * signal from the Bank, which lowered its rates"). */
	for (int pass = 0; pass < 2 && dist == (size_t)-1; pass++)
		for (size_t i = 0; i < c->n; i++) {
			bool o = false, va = false, lw = false;
			if (!day_at(c, i, pub, &o, &va, &lw, &d) || dates_other_verb(c, i, v))
				continue;
			if (pass == 0 && v < c->n && possessive_other(c, i) && !relative_of(c, i, v))
				continue;
			/* The first phrase for the clause, the nearest for a verb. */
			size_t k = v >= c->n ? 0 : i > v ? i - v : v - i;
			if (v >= c->n ? dist != (size_t)-1 : k >= dist)
				continue;
			dist = k, best = d, *old = o, *vague = va, *last_week = lw;
		}
	/* "said on Friday it had raised its rate the previous day": the day
	 * before the clause's other date (or the story's). */
	for (size_t i = 1; i + 1 < c->n; i++) {
		if (!is(c, i - 1, "the") || !((is(c, i, "previous") && is(c, i + 1, "day")) ||
					      (is(c, i, "day") && is(c, i + 1, "before") &&
					       (i + 2 >= c->n || comma_before(c, i + 2)))))
			continue;
		int32_t anchor = pub;
		for (size_t j = 0; j < c->n; j++) {
			bool o = false, va = false, lw = false;
			if ((j + 1 < i || j > i + 1) && day_at(c, j, pub, &o, &va, &lw, &d)) {
				anchor = d;
				break;
			}
		}
		best = anchor - 1, dist = 0, *old = false;
		break;
	}
	if (dated)
		*dated = dist != (size_t)-1;
	return best;
}

bool events_abbreviation(const char *s, size_t end)
{
	static const char *const abbr[] = { "mr", "mrs", "dr", "st", "co", "corp", "inc", "ltd",
		"jan", "feb", "mar", "apr", "aug", "sept", "sep", "oct", "nov", "dec", "no", "vs",
		"gen", "sen", "rep", "gov", "bros", "messrs", "ft", "u.s", "u.k", "p.m", "a.m" };
	size_t st = end;
	while (st > 0 && (isalnum((unsigned char)s[st - 1]) || s[st - 1] == '.'))
		st--;
	size_t n = end - st;
	if (n == 1 && isupper((unsigned char)s[st]))
		return true; /* an initial */
	for (size_t i = 0; i < ARRAY_SIZE(abbr); i++)
		if (strlen(abbr[i]) == n && !strncasecmp(s + st, abbr[i], n))
			return true;
	return false;
}

int32_t events_midweek(const struct clause *c, int32_t pub)
{
	for (size_t i = 0; i + 1 < c->n; i++) {
		if (!is(c, i, "this") || !is(c, i + 1, "week") ||
		    (i > 0 && (is(c, i - 1, "earlier") || is(c, i - 1, "later"))))
			continue;
		int32_t mon0 = (int32_t)(((pub + 3) % 7 + 7) % 7); /* Monday = 0 */
		return mon0 >= 2 ? pub - mon0 + 2 : pub;
	}
	return -1;
}
