/* Readings of the event extractor that need more than one word test (see
 * events.h for the rules and events_text.h for each function). */
#include "agents/events_text.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "agents/events_words.h"
#include "core/banned.h"
#include "core/util.h"

/* Adjectives of the countries whose central banks the extractor knows. */
static const struct {
	const char *w, *code;
} country_adj[] = {
	{ "danish", "DKNB" }, { "dutch", "DNB" }, { "swiss", "SNB" }, { "japanese", "BOJ" },
	{ "german", "Bundesbank" }, { "french", "BdF" }, { "italian", "BdI" },
	{ "spanish", "BdE" }, { "belgian", "BNB" }, { "canadian", "BoC" },
	{ "australian", "RBA" }, { "british", "BoE" }, { "norwegian", "Norges" },
	{ "swedish", "Riksbank" }, { "taiwanese", "CBC" },
};

const char *events_rate_adjective(const struct clause *c, size_t i)
{
	static const char *const rate[] = { "discount", "lombard", "intervention", "repurchase",
		"rediscount", "treasury", "call", "overnight", "official", NULL };
	if (!is_any(c, i + 1, rate) && !(is(c, i + 1, "bank") && is(c, i + 2, "rate")))
		return NULL;
	/* "intervention rate", "treasury certificate rate": the rate itself. */
	if ((is(c, i + 1, "intervention") || is(c, i + 1, "call") || is(c, i + 1, "overnight") ||
	     is(c, i + 1, "official")) &&
	    !is(c, i + 2, "rate") && !is(c, i + 2, "rates") && !is(c, i + 3, "rate") &&
	    !is(c, i + 3, "rates"))
		return NULL;
	if (is(c, i + 1, "treasury") && !is(c, i + 2, "certificate"))
		return NULL;
	for (size_t k = 0; k < ARRAY_SIZE(country_adj); k++)
		if (is(c, i, country_adj[k].w))
			return country_adj[k].code;
	return NULL;
}

const char *events_title_country(const char *title)
{
	if (!title || !*title)
		return NULL;
	struct clause *c = xcalloc(1, sizeof(*c));
	c->text = title;
	c->len = strlen(title);
	c->title = true;
	events_clause_words(c);
	const char *found = NULL;
	bool several = false;
	for (size_t i = 0; i < c->n; i++) {
		const char *code = NULL;
		for (size_t a = 0; a < events_nactors && !code; a++)
			if (events_actors[a].type == A_COUNTRY &&
			    events_match_phrase(c, i, events_actors[a].phrase))
				code = events_actors[a].code;
		for (size_t a = 0; a < ARRAY_SIZE(country_adj) && !code; a++)
			if (is(c, i, country_adj[a].w))
				code = country_adj[a].code;
		/* "BUYS U.S. DOLLARS": the dollar every market trades, no
		 * country's story. */
		if (code && !strcmp(code, "Fed") &&
		    (is(c, i + 1, "dollar") || is(c, i + 1, "dollars") || is(c, i + 1, "dlrs") ||
		     is(c, i + 1, "dlr") || is(c, i + 2, "dollar") || is(c, i + 2, "dollars") ||
		     is(c, i + 2, "dlrs")))
			code = NULL;
		if (code && found && strcmp(code, found))
			several = true;
		if (code)
			found = code;
	}
	free(c);
	return several ? NULL : found;
}

/* The policy noun at n ("stance", not a rate) owned by "our" or "its"
 * before its modifiers ("our basic policy stance"). */
static bool own_stance(const struct clause *c, size_t n, const char *const *obj,
		       const char *const *mods)
{
	if (!is_any(c, n, obj) || is(c, n, "rates") || is(c, n, "rate"))
		return false;
	size_t p = n;
	while (p > 0 && is_any(c, p - 1, mods) && !is(c, p - 1, "its") && !is(c, p - 1, "our"))
		p--;
	return p > 0 && (is(c, p - 1, "our") || is(c, p - 1, "its"));
}

size_t events_unchanged_policy(const struct clause *c, size_t v, size_t *neg)
{
	static const char *const verbs[] = { "changed", "change", "altered", "alter", NULL };
	static const char *const aux[] = { "has", "have", "had", "did", "does", "do", NULL };
	static const char *const negs[] = { "not", "n't", "never", NULL };
	static const char *const obj[] = { "policy", "policies", "stance", "course", "rates",
					   "rate", NULL };
	/* "did not change its intervention rate", "its discount or Lombard
	 * rates". */
	static const char *const mods[] = { "its", "their", "our", "monetary", "credit",
					    "interest", "rate", "policy", "basic", "discount",
					    "lombard", "intervention", "repurchase", "official", "key",
					    "dealing", "or", "and", NULL };
	/* "our policy stance remains the same", "its credit policy remained
	 * unchanged": said by the bank, its stance of the day. */
	static const char *const stay[] = { "remains", "remained", "is", "was", "stays", "stayed",
					    NULL };
	/* "our policy stance has not changed", said by the bank. */
	if (is_any(c, v, verbs) && v >= 3 && is_any(c, v - 1, negs) &&
	    (is(c, v - 2, "has") || is(c, v - 2, "had")) && own_stance(c, v - 3, obj, mods)) {
		*neg = v - 1;
		return v;
	}
	if (is_any(c, v, stay) && v >= 2 && own_stance(c, v - 1, obj, mods) &&
	    (is(c, v + 1, "unchanged") || (is(c, v + 1, "the") && is(c, v + 2, "same")))) {
		*neg = v;
		return is(c, v + 1, "unchanged") ? v + 1 : v + 2;
	}
	if (!is_any(c, v, verbs) || v < 2)
		return 0;
	size_t k = v - 1;
	if (!is_any(c, k, negs) && !(is_any(c, k, aux) && k > 0 && is_any(c, k - 1, negs)))
		return 0;
	if (!is_any(c, k, negs))
		k--;
	/* "has not changed", "did not change": the auxiliary before "not". */
	if (!(k > 0 && is_any(c, k - 1, aux)) && !is_any(c, v - 1, aux))
		return 0;
	for (size_t j = v + 1; j < c->n && j <= v + 6; j++) {
		if (is_any(c, j, obj)) {
			/* "its policy stance", "monetary policy course": the last noun. */
			while (is_any(c, j + 1, obj))
				j++;
			*neg = k;
			return j;
		}
		if (!is_any(c, j, mods))
			return 0;
	}
	return 0;
}

bool events_presupposed(const struct clause *c, size_t np, bool *now)
{
	static const char *const past[] = { "recent", "recently", NULL };
	static const char *const cur[] = { "current", "continuing", "continued", "ongoing",
					   "today", "yesterday", NULL };
	static const char *const deny[] = { "no", "not", "any", "without", "further", "more",
					     NULL };
	*now = false;
	for (size_t k = np; k-- > 0 && k + 3 > np;) {
		/* (Not "down from 136.40 yesterday, despite intervention":
		 * a day of its own, past a comma; "yesterday's intervention".) */
		if (comma_before(c, k + 1))
			break;
		bool p = is_any(c, k, past), n = is_any(c, k, cur);
		if ((is(c, k, "today") || is(c, k, "yesterday")) && !possessive(c, k))
			n = false;
		/* "this week's", "last week's" intervention. */
		bool wk = is(c, k, "week") && k > 0 && (is(c, k - 1, "this") || is(c, k - 1, "last"));
		if (!p && !n && !wk)
			continue;
		size_t start = wk ? k - 1 : k;
		if (start > 0 && is_any(c, start - 1, deny))
			return false;
		/* "yesterday's intervention": of yesterday, dated by the clause. */
		*now = n && !is(c, k, "yesterday");
		return true;
	}
	return false;
}

bool events_done_by(const struct clause *c, size_t e)
{
	static const char *const aux[] = { "has", "had", "have", NULL };
	static const char *const done[] = { "carried", "made", "conducted", "undertaken", "done",
					    "mounted", NULL };
	if (is_any(c, e, aux))
		e++;
	return is_any(c, e, done);
}

/* A rate object within the next words: returns its position or -1; sets
 * *priv for a rate only commercial banks set and *official for an official
 * one. */
long events_rate_object(const struct clause *c, size_t from, size_t span, bool *priv,
			bool *official)
{
	*priv = *official = false;
	for (size_t j = from; j < c->n && j < from + span; j++) {
		if (is_any(c, j, events_rate_words)) {
			/* "interest rate ceiling", "rate futures", "rate swaps". */
			if (is(c, j + 1, "ceiling") || is(c, j + 1, "futures") || starts(c, j + 1, "swap") ||
			    is(c, j + 1, "incentive") || is(c, j + 1, "support"))
				return -1;
			for (size_t k = j >= 3 ? j - 3 : 0; k <= j; k++) {
				if (k >= from && is_any(c, k, events_private_rate))
					*priv = true;
				if (k >= from && is_any(c, k, events_official_rate))
					*official = true;
			}
			if (is(c, j, "discount") || is(c, j, "lombard"))
				*official = true;
			/* "the rates at which it deals with the discount houses",
			 * "the rate at which the Bank lends to them": the dealing
			 * rates the bank sets itself. */
			if (is(c, j + 1, "at") && is(c, j + 2, "which")) {
				size_t k = j + 3;
				if (is(c, k, "the") && (is(c, k + 1, "bank") || is(c, k + 1, "central")))
					k += is(c, k + 1, "central") ? 3 : 2;
				else if (is(c, k, "it"))
					k++;
				else
					k = 0;
				if (k && (starts(c, k, "deal") || starts(c, k, "lend") || is(c, k, "lent")))
					*official = true, *priv = false;
			}
			/* "the overnight money market lending rate": "lending" and
			 * "loan" are a commercial bank's only without an official
			 * word in the phrase. */
			bool strong = false, off = false;
			for (size_t k = from; k <= j; k++) {
				strong = strong || (k + 3 >= j && is_any(c, k, events_private_rate) &&
						    !is(c, k, "lending") && !is(c, k, "loan"));
				off = off || is_any(c, k, events_official_rate);
			}
			if (*priv && !strong && off)
				*priv = false;
			/* "the rate on three-month treasury certificates", "the
			 * rate on its securities repurchase pacts". */
			static const char *const on_off[] = { "certificates", "certificate",
				"repurchase", "repurchases", "lombard", "discount", NULL };
			/* "CUTS SPECIAL ADVANCES RATE", "its special lending
			 * facility rate": an operation's rate too. */
			for (size_t k = from; k < j; k++)
				if (is(c, k, "special") || is(c, k, "facility") ||
				    (is(c, k, "advances") && k + 1 == j))
					return -1;
			for (size_t k = j + 2; (is(c, j + 1, "on") || is(c, j + 1, "for")) &&
					       k < c->n && k <= j + 6; k++) {
				/* "the rate on its special advances", "on its
				 * liquidity facility": an operation's rate. */
				if (is(c, k, "special") || is(c, k, "facility") || is(c, k, "facilities"))
					return -1;
				*official = *official || is_any(c, k, on_off);
			}
			return (long)j;
		}
		/* "reducing restrictions on the use of money market rates": the
		 * object is the restrictions. */
		if (is(c, j, "restrictions") || is(c, j, "controls") || is(c, j, "curbs") ||
		    is(c, j, "limits") || is(c, j, "ceilings") || is(c, j, "ceiling") ||
		    is(c, j, "cap") || is(c, j, "requirements") ||
		    is(c, j, "requirement"))
			return -1;
		/* The object ends at a new verb or clause word. */
		/* "its one, two and three month rates": a list of terms. */
		if (is(c, j, "and") && j > 0 && events_number_word(c, j - 1) && events_number_word(c, j + 1))
			continue;
		if (is(c, j, "and") || is(c, j, "which") || is(c, j, "after") || is(c, j, "said"))
			return -1;
	}
	return -1;
}

/* A passive verb at v whose subject is a rate ("the discount rate was cut",
 * "rates would be raised"): the rate's position or -1, with *priv and
 * *official as rate_object sets them. A relative clause ("the rate, which
 * was cut") reports an earlier act and is not read. */
long events_passive_rate(const struct clause *c, size_t v, bool *priv, bool *official)
{
	*priv = *official = false;
	/* A headline drops the auxiliary: "Danish overnight money market rate
	 * cut to 10 pct from 10.5 - central bank". */
	bool headline = c->title && v >= 1 && is_any(c, v - 1, events_rate_words) &&
			!is(c, v - 1, "policy") && is(c, v + 1, "to") && events_number_word(c, v + 2) &&
			(is(c, v, "cut") || is(c, v, "raised") || is(c, v, "lowered") ||
			 is(c, v, "reduced") || is(c, v, "increased"));
	if (!headline &&
	    (v < 2 || !is_any(c, v - 1, events_be_words) || c->w[v].w[strlen(c->w[v].w) - 1] == 'g'))
		return -1;
	size_t aux = headline ? v : v - 1;
	/* "would be cut", "has been raised": the modal or "has" before. */
	while (aux > 0 && (is_any(c, aux - 1, events_be_words) || is(c, aux - 1, "has") ||
			   is(c, aux - 1, "have") || is(c, aux - 1, "had") || events_cue_at(c, aux - 1)))
		aux--;
	if (aux == 0 || !is_any(c, aux - 1, events_rate_words) || is(c, aux - 1, "policy") ||
	    is(c, aux - 1, "policies"))
		return -1;
	size_t j = aux - 1;
	for (size_t k = j >= 3 ? j - 3 : 0; k <= j; k++) {
		if (is_any(c, k, events_private_rate))
			*priv = true;
		if (is_any(c, k, events_official_rate))
			*official = true;
	}
	return (long)j;
}

enum ev_kind events_change_noun(const struct clause *c, size_t v)
{
	static const char *const up[] = { "rise", "rises", NULL };
	static const char *const down[] = { "reduction", "reductions", NULL };
	enum ev_kind k = is_any(c, v, up) ? EV_HIKE : is_any(c, v, down) ? EV_CUT : EV_NONE;
	if (k == EV_NONE)
		return EV_NONE;
	/* "rate rise": the rate before it ("rate rises to" is a verb). */
	if (v > 0 && is_any(c, v - 1, events_rate_words) && (is(c, v, "rise") || is(c, v, "reduction")))
		return k;
	/* "a rise in", "a reduction yesterday of", "a rise today in", "a
	 * reduction this morning in". */
	static const char *const when[] = { "this", "earlier", "late", "on", "last", NULL };
	for (size_t j = v + 1; j < c->n && j <= v + 3; j++)
		if ((is(c, j, "in") || is(c, j, "of")) && (j <= v + 2 || is_any(c, v + 1, when)))
			return k;
	/* "Monday's rise by the Bank of Spain in its call money rate": the
	 * agent between (up to six words: "the Bank of Spain"). */
	if (is(c, v + 1, "by"))
		for (size_t j = v + 3; j < c->n && j <= v + 7; j++)
			if (is(c, j, "in"))
				return k;
	return EV_NONE;
}

enum ev_kind events_rate_move_kind(const struct clause *c, size_t v)
{
	static const char *const up[] = { "rose", "rises", "risen", "climbed", "climbs", "edged",
					  "nudged", "jumped", "jumps", "surged", NULL };
	static const char *const down[] = { "fell", "falls", "dropped", "drops", "declined",
					    "eased", "slipped", "tumbled", NULL };
	enum ev_kind k = is_any(c, v, up) ? EV_HIKE : is_any(c, v, down) ? EV_CUT : EV_NONE;
	/* "edged up", "edged down", "nudged up". */
	if (is(c, v, "edged") || is(c, v, "nudged"))
		k = is(c, v + 1, "up") ? EV_HIKE : is(c, v + 1, "down") ? EV_CUT : EV_NONE;
	return k;
}

enum ev_kind events_boc_rate_move(const struct clause *c, size_t v)
{
	enum ev_kind k = events_rate_move_kind(c, v);
	/* "had already risen": the rate before the auxiliaries. */
	size_t rv = v;
	while (rv > 3 && (is(c, rv - 1, "had") || is(c, rv - 1, "has") || is(c, rv - 1, "already")))
		rv--;
	if (k == EV_NONE || rv < 3 || !is(c, rv - 1, "rate"))
		return EV_NONE;
	size_t j = rv - 1;
	/* "the Bank of Canada rate", "the Bank of Canada's key rate", "the
	 * Bank of Canada's weekly bank rate". */
	if (is(c, j - 1, "bank") && j >= 5 && (is(c, j - 2, "weekly") || is(c, j - 2, "key")) &&
	    events_match_phrase(c, j - 5, "bank of canada"))
		return k;
	/* "the Bank of Canada's bank rate eased". */
	if (is(c, j - 1, "bank") && j >= 4 && events_match_phrase(c, j - 4, "bank of canada"))
		return k;
	if (is(c, j - 1, "key") || is(c, j - 1, "weekly"))
		j--;
	if (j >= 3 && events_match_phrase(c, j - 3, "bank of canada"))
		return k;
	/* "Canada's bank rate", "the Canadian key bank rate". */
	if (!is(c, rv - 2, "bank"))
		return EV_NONE;
	j = rv - 2;
	if (j > 0 && (is(c, j - 1, "key") || is(c, j - 1, "weekly")))
		j--;
	return j > 0 && (is(c, j - 1, "canadian") || is(c, j - 1, "canada")) ? k : EV_NONE;
}

enum ev_kind events_tender_move(const struct clause *c, size_t v)
{
	static const char *const tender[] = { "tender", "tenders", "repurchase", "pact", "pacts",
					      "repo", "repos", NULL };
	enum ev_kind k = EV_NONE;
	if (is(c, v, "down") && is(c, v + 1, "from"))
		k = EV_CUT;
	else if (is(c, v, "up") && is(c, v + 1, "from"))
		k = EV_HIKE;
	else if ((is(c, v, "lower") || is(c, v, "below")) && is(c, v + 1, "than"))
		k = EV_CUT;
	else if ((is(c, v, "higher") || is(c, v, "above")) && is(c, v + 1, "than"))
		k = EV_HIKE;
	if (k == EV_NONE || v < 4)
		return EV_NONE;
	/* The rate just before: "... at a fixed 3.55 pct, down from", "set a
	 * fixed rate of 3.55 pct for its new repurchase pact, down from". */
	bool pct = false;
	for (size_t j = v - 1; j + 10 > v && j > 0 && !pct; j--)
		pct = is(c, j, "pct") && events_number_word(c, j - 1);
	if (!pct || !comma_before(c, v))
		return EV_NONE;
	bool t = false;
	for (size_t j = v >= 16 ? v - 16 : 0; j < c->n && j < v + 16; j++) {
		t = t || is_any(c, j, tender);
		/* "injected liquidity through 24-hour repurchase agreements at
		 * 8-1/4 pct, up from", "added short-term liquidity at 3.80 pct,
		 * down from": a fine-tuning operation's rate, not the regular
		 * tender's. */
		if (j < v && (is(c, j, "overnight") || is(c, j, "quick") || is(c, j, "special") ||
			      (is(c, j, "short") && is(c, j + 1, "term")) ||
			      (is(c, j, "fine") && is(c, j + 1, "tuning")) ||
			      ((is(c, j, "24") || is(c, j, "one")) &&
			       (is(c, j + 1, "hour") || is(c, j + 1, "day")))))
			return EV_NONE;
	}
	return t ? k : EV_NONE;
}

enum ev_kind events_phrasal_move(const struct clause *c, const struct mention *m, size_t nm,
				 size_t v)
{
	static const char *const verbs[] = { "pushed", "pushes", "put", "puts", "nudged", "nudges",
		"moved", "moves", "bumped", "marked", "brought", "knocked", NULL };
	if (!is_any(c, v, verbs))
		return EV_NONE;
	/* Only a central bank's own verb, its name right before: "the
	 * Bundesbank nudged up its repurchase rate" (not "month-end
	 * pressures pushed up call money rates"). */
	/* ("the central bank also pushed its call money rate up".) */
	size_t at = v;
	while (at > 0 && (is(c, at - 1, "also") || is(c, at - 1, "again") || is(c, at - 1, "then")))
		at--;
	bool bank = false;
	for (size_t i = 0; i < nm; i++)
		bank = bank || ((m[i].type == A_CB || m[i].type == A_GENERIC_CB) &&
				m[i].pos + m[i].len == at);
	if (!bank)
		return EV_NONE;
	/* The particle right after the verb or right after the rate it
	 * moves ("pushed its dealing rates up by a full point"). */
	for (size_t j = v + 1; j < c->n && j <= v + 10; j++) {
		if (!is(c, j, "up") && !is(c, j, "down"))
			continue;
		if ((j != v + 1 && !is_any(c, j - 1, events_rate_words)) || is(c, j + 1, "with"))
			return EV_NONE;
		return is(c, j, "up") ? EV_HIKE : EV_CUT;
	}
	return EV_NONE;
}

bool events_bank_gerund(const struct clause *c, const struct mention *m, size_t nm, size_t v)
{
	for (size_t i = 0; i < nm; i++) {
		if (m[i].type != A_CB || m[i].pos + m[i].len != v)
			continue;
		/* "the Bank of England, trimming its dealing rates in its
		 * morning operations, made plain ...": the bank's participle. */
		if (comma_before(c, v))
			return true;
		/* "within minutes of the Bank of England trimming its rates",
		 * "shortly after the Bundesbank raising": a time after the act
		 * (not "the prospect of the Bank of Japan cutting"). */
		size_t p = m[i].pos;
		if (p >= 1 && is(c, p - 1, "the"))
			p--;
		if (p >= 1 && (is(c, p - 1, "after") || is(c, p - 1, "following")))
			return true;
		if (p >= 2 && is(c, p - 1, "of") &&
		    (is(c, p - 2, "minutes") || is(c, p - 2, "hours") || is(c, p - 2, "moments") ||
		     is(c, p - 2, "days")))
			return true;
	}
	return false;
}

bool events_gave_blessing(const struct clause *c, size_t v)
{
	static const char *const nod[] = { "blessing", "approval", "consent", "assent", "backing",
		"go-ahead", "nod", NULL };
	return (is(c, v, "gave") || is(c, v, "gives") || is(c, v, "give") ||
		is(c, v, "signalled") || is(c, v, "signaled") || is(c, v, "signals")) &&
	       (is(c, v + 1, "its") || is(c, v + 1, "the") || is(c, v + 1, "a")) &&
	       is_any(c, v + 2, nod);
}

bool events_met_trading(const struct clause *c, size_t from, size_t v)
{
	static const char *const met[] = { "bowed", "bow", "bows", "bowing", "yielded", "yield",
		"yields", "succumbed", "faced", "faces", "face", "facing", "confronted", "watched",
		"watching", "watches", "monitored", "monitoring", "swamped", "overwhelmed",
		"outweighed", "dwarfed", "battered", "noted", "observed", "tolerated", "ignored",
		NULL };
	for (size_t k = from; k < v && k < c->n; k++)
		if (is_any(c, k, met) || ((is(c, k, "gave") || is(c, k, "give")) && is(c, k + 1, "in")))
			return true;
	return false;
}

enum ev_kind events_new_rates(const struct clause *c, size_t v)
{
	bool put = is(c, v, "put") && is(c, v + 1, "in") && is(c, v + 2, "place");
	if (!put && !is(c, v, "introduced") && !is(c, v, "established") && !is(c, v, "adopted"))
		return EV_NONE;
	size_t r = v >= 2 && is(c, v - 1, "it") ? v - 2 : v - 1;
	if (v < 2 || !is_any(c, r, events_rate_words))
		return EV_NONE;
	for (size_t k = r >= 3 ? r - 3 : 0; k < r; k++)
		if (is(c, k, "lower") || is(c, k, "higher"))
			return is(c, k, "lower") ? EV_CUT : EV_HIKE;
	return EV_NONE;
}

enum ev_kind events_lend_move(const struct clause *c, size_t v)
{
	static const char *const lend[] = { "lend", "lends", "lent", "lending", "borrowing",
					    "borrow", NULL };
	enum ev_kind k = is(c, v, "lower") ? EV_CUT : is(c, v, "higher") ? EV_HIKE : EV_NONE;
	/* "at a lower 10 pct", "at a lower rate of 10 pct". */
	if (k == EV_NONE || v < 3 || !is(c, v - 1, "a") || !is(c, v - 2, "at"))
		return EV_NONE;
	if (!(events_number_word(c, v + 1) && is(c, v + 2, "pct")) && !is(c, v + 1, "rate"))
		return EV_NONE;
	for (size_t j = v >= 12 ? v - 12 : 0; j + 2 < v; j++)
		if (is_any(c, j, lend))
			return k;
	return EV_NONE;
}

bool events_debt_purchase(const char *text)
{
	/* Sentence by sentence: "repay" with "debt" and the currency bought. */
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '.');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *s = xstrndup(p, n);
		for (char *q = s; *q; q++)
			*q = (char)tolower((unsigned char)*q);
		/* ("the foreign currency needed for the repayment": the
		 * repayment is of a debt.) */
		bool hit = strstr(s, "repay") &&
			   (strstr(s, "debt") || strstr(s, "borrowing") || strstr(s, "loan") ||
			    strstr(s, "repayment")) &&
			   (strstr(s, "currenc") || strstr(s, "dollars") || strstr(s, "marks") ||
			    strstr(s, "yen") || strstr(s, "sterling") || strstr(s, "francs")) &&
			   (strstr(s, "bought") || strstr(s, "buy") || strstr(s, "purchase")) &&
			   /* "reports that some large French companies were
			    * buying marks to repay debts": not the bank's. */
			   !strstr(s, "companies") && !strstr(s, "firms") && !strstr(s, "importers") &&
			   !strstr(s, "corporations") && !strstr(s, "exporters");
		free(s);
		if (hit)
			return true;
		p = e ? e + 1 : p + n;
	}
	return false;
}

/* "contradicting dealers who said it had sold marks", "dismissed
 * traders who said the bank had bought": the act's subject at first
 * follows "who said" (or "which said") after a verb of denial within
 * four words; returns the denial's index + 1, else 0. */
size_t events_contradicted_claim(const struct clause *c, size_t first)
{
	static const char *const deny[] = { "contradicting", "contradicted", "contradicts",
					    "dismissing", "dismissed", "rejecting", "rejected",
					    "disputing", "disputed", "denying", "rebutting", NULL };
	if (first < 3 || !(is(c, first - 1, "said") || is(c, first - 1, "says")) ||
	    !(is(c, first - 2, "who") || is(c, first - 2, "which")))
		return 0;
	for (size_t k = first - 2; k-- > 0 && k + 6 >= first;)
		for (size_t j = 0; deny[j]; j++)
			if (is(c, k, deny[j]))
				return k + 1;
	return 0;
}

/* "forced the Bank of Italy to raise its discount rate", "was obliged
 * to sell marks", "acted to": an infinitive at v told as done by the
 * past verb that governs it (not "forcing", "may force": those cues are
 * read first; not "said the Fed had to intervene", an obligation; a
 * decision taken is events_decided_to's). */
bool events_made_to(const struct clause *c, size_t v)
{
	static const char *const made[] = { "forced", "compelled", "obliged", "prompted", NULL };
	if (v < 2 || !is(c, v - 1, "to"))
		return false;
	if (is(c, v - 2, "acted"))
		return true;
	/* (Not "under EMS rules the Bundesbank is obliged to intervene when
	 * ...": a duty, no act.) */
	for (size_t k = v - 1; k-- > 0 && k + 8 > v;)
		if (is_any(c, k, made))
			return !(k > 0 && (is(c, k - 1, "is") || is(c, k - 1, "are") ||
					   is(c, k - 1, "be")));
	return false;
}

/* "spent about 4.5 billion dlrs defending the lira", "spent 2 billion
 * marks in support of the franc": "spent" at v, an amount of a currency
 * within eight words, then a defence or support of a currency. */
bool events_spent_defending(const struct clause *c, size_t v)
{
	if (!is(c, v, "spent") && !is(c, v, "spending") && !is(c, v, "spends"))
		return false;
	size_t amt = 0;
	for (size_t j = v + 1; j < c->n && j < v + 9 && !amt; j++)
		if (events_is_ccy(c, j))
			amt = j;
	if (!amt)
		return false;
	for (size_t j = amt + 1; j < c->n && j < amt + 6; j++)
		if (starts(c, j, "defen") || starts(c, j, "support") || is(c, j, "propping") ||
		    is(c, j, "shoring") || is(c, j, "intervention") || is(c, j, "intervening"))
			for (size_t k = j + 1; k < c->n && k < j + 5; k++)
				if (events_is_ccy(c, k) || is(c, k, "currency"))
					return true;
	return false;
}

/* ", a money market operation", ", a money-market operation" after the
 * verb at v: the move named an operation. */
bool events_called_operation(const struct clause *c, size_t v)
{
	for (size_t k = v + 1; k + 3 < c->n; k++)
		if (comma_before(c, k) && (is(c, k, "a") || is(c, k, "an")) &&
		    ((is(c, k + 1, "money") && is(c, k + 2, "market") &&
		      starts(c, k + 3, "operation")) ||
		     ((is(c, k + 1, "technical") || is(c, k + 1, "routine")) &&
		      (starts(c, k + 2, "operation") || starts(c, k + 3, "operation")))))
			return true;
	return false;
}

/* "let the call rate rise", "letting interbank rates drift lower": a
 * market rate between "let" and the verb at v. */
bool events_let_market_rate(const struct clause *c, size_t v)
{
	for (size_t k = v; k-- > 0 && k + 7 > v;) {
		if (!is(c, k, "let") && !is(c, k, "letting") && !is(c, k, "lets"))
			continue;
		for (size_t j = k + 1; j < v; j++)
			if (is(c, j, "funds") || is(c, j, "interbank") ||
			    (is(c, j, "call") && (is(c, j + 1, "money") || is(c, j + 1, "rate"))) ||
			    (is(c, j, "market") && (is(c, j + 1, "rates") || is(c, j + 1, "rate"))))
				return true;
		return false;
	}
	return false;
}

bool events_decided_to(const struct clause *c, size_t v)
{
	if (v < 2 || !is(c, v - 1, "to"))
		return false;
	for (size_t k = v - 2, n = 0; n < 3; k--, n++) {
		if (starts(c, k, "decid") || is(c, k, "decision") || starts(c, k, "agree") ||
		    starts(c, k, "vote") || is(c, k, "moved"))
			return true;
		/* "the Bundesbank's move this week to raise": a possessive's
		 * move is made (not "a move to raise rates would"). */
		if (is(c, k, "move") && k > 0 && (is(c, k - 1, "its") || possessive(c, k - 1)))
			return true;
		if (k == 0)
			break;
	}
	/* "It followed a move by the Bank of England in its early money
	 * market operations to raise the rates": a move that was followed
	 * was made (not "a move by the Bundesbank to cut would"). */
	for (size_t k = v - 2, n = 0; n < 12 && k >= 3; k--, n++)
		if (is(c, k, "move") && is(c, k + 1, "by") && (is(c, k - 1, "a") || is(c, k - 1, "the")) &&
		    (is(c, k - 2, "followed") || is(c, k - 2, "follows") || is(c, k - 2, "after") ||
		     is(c, k - 2, "following")))
			return true;
	/* "voted at their March 31 meeting to maintain", "decided at its
	 * regular meeting today to leave", "the Federal Reserve's decision
	 * late on Friday to raise": a meeting or a day between. */
	for (size_t k = v - 2, n = 0; n < 8 && k > 0; k--, n++)
		if ((starts(c, k, "vote") || starts(c, k, "decid") || is(c, k, "decision")) &&
		    (is(c, k + 1, "at") || is(c, k + 1, "on") || is(c, k + 1, "today") ||
		     is(c, k + 1, "yesterday") || is(c, k + 1, "late")))
			return true;
	return false;
}

size_t events_no_change(const struct clause *c, size_t v)
{
	/* "made no change", "announced no change", a title's "NO CHANGE
	 * IN ..."; not "voted no change" in a commentator's guess. */
	static const char *const said[] = { "made", "makes", "make", "announced", "announces",
					    NULL };
	if (!is(c, v, "without") && !(is(c, v, "no") && (v == 0 || is_any(c, v - 1, said))))
		return 0;
	size_t k = v + 1;
	if (is(c, k, "a") || is(c, k, "any"))
		k++;
	/* "without a rate change", "no interest rate change". */
	size_t r = k;
	while (r < c->n && r < k + 3 && (is_any(c, r, events_rate_words) || is(c, r, "interest") ||
					  is(c, r, "credit")))
		r++;
	if (r > k && (is(c, r, "change") || is(c, r, "changes")) && is_any(c, r - 1, events_rate_words))
		return r - 1;
	/* "no change to its discount and Lombard rates", "in credit policy". */
	if (!(is(c, k, "change") || is(c, k, "changes")) || !(is(c, k + 1, "to") || is(c, k + 1, "in")))
		return 0;
	for (size_t j = k + 2; j < c->n && j <= k + 8; j++) {
		if (is_any(c, j, events_rate_words) && !is(c, j + 1, "talks"))
			return j;
		if (is(c, j, "and") && !is_any(c, j - 1, events_official_rate))
			return 0;
	}
	return 0;
}

bool events_named_official(const struct clause *c, size_t j)
{
	for (size_t k = j >= 3 ? j - 3 : 0; k <= j && k < c->n; k++)
		if (is_any(c, k, events_official_rate) && !is(c, k, "key") && !is(c, k, "official"))
			return true;
	/* "the rate on three-month treasury certificates". */
	for (size_t k = j + 2; (is(c, j + 1, "on") || is(c, j + 1, "for")) && k < c->n &&
			       k <= j + 6; k++)
		if (is(c, k, "certificates") || is(c, k, "certificate") || is(c, k, "repurchase") ||
		    is(c, k, "lombard") || is(c, k, "discount"))
			return true;
	return false;
}

bool events_before_noun(const struct clause *c, size_t v)
{
	static const char *const np[] = { "the", "its", "a", "latest", "last", "recent", "rate",
		"rates", "discount", "lombard", "central", "bank", "point", "half", "pct", NULL };
	for (size_t k = v, n = 0; k-- > 0 && n < 8; n++) {
		if (is(c, k, "before"))
			return true;
		/* "before the Bundesbank's", "before Japan's": the bank named. */
		bool name = false;
		for (size_t b = 0; b < events_nactors && !name; b++)
			name = (events_actors[b].type == A_CB || events_actors[b].type == A_COUNTRY) &&
			       events_match_phrase(c, k, events_actors[b].phrase) > 0;
		if (!is_any(c, k, np) && !name && !events_number_word(c, k))
			return false;
	}
	return false;
}

bool events_clause_dated(const struct clause *c)
{
	bool old, vague, lw, dated;
	events_clause_day_at(c, c->n, 0, &old, &vague, &lw, &dated);
	return dated || old;
}

/* A verb of entering the market at v: "stepped in", "step into the
 * market", "entered the market", "came into the market", "came in to
 * buy", "was in the market" (up to two words between: "was again in"). */
bool events_market_entry(const struct clause *c, size_t v)
{
	static const char *const step[] = { "stepped", "steps", "stepping", "step", NULL };
	static const char *const enter[] = { "entered", "enters", "entering", "enter", NULL };
	static const char *const come[] = { "came", "comes", "coming", "come", NULL };
	static const char *const tv[] = { "buy", "sell", "support", "prop", "stem", "slow", "cap",
					  "check", "halt", NULL };
	/* "the market", "the foreign exchange market", "the currency
	 * market"; a title's "IN MARKET". */
	size_t k = v + 2;
	if (is(c, k, "foreign") && is(c, k + 1, "exchange"))
		k += 2;
	else if (is(c, k, "currency") || is(c, k, "exchange") || is(c, k, "exchanges") ||
		 is(c, k, "open"))
		k++;
	bool market = (is(c, v + 1, "the") && (is(c, k, "market") || is(c, k, "markets"))) ||
		      (c->title && is(c, v + 1, "market"));
	if (is_any(c, v, step))
		return is(c, v + 1, "in") || (is(c, v + 1, "into") && is(c, v + 2, "the"));
	if (is_any(c, v, enter))
		return market;
	if (is_any(c, v, come))
		return (is(c, v + 1, "into") && is(c, v + 2, "the") && is(c, v + 3, "market")) ||
		       (is(c, v + 1, "in") && is(c, v + 2, "to") && is_any(c, v + 3, tv));
	/* "had been well received in the currency markets": a participle
	 * before "in" is another predicate's. */
	if (is(c, v, "in") && market && v > 0 && strlen(c->w[v - 1].w) > 3 &&
	    !strcmp(c->w[v - 1].w + strlen(c->w[v - 1].w) - 2, "ed") &&
	    !is(c, v - 1, "seen") && !is(c, v - 1, "detected") && !is(c, v - 1, "spotted") &&
	    !is(c, v - 1, "noticed") && !is(c, v - 1, "reported") && !is(c, v - 1, "involved"))
		return false;
	if (is(c, v, "in") && market && v > 0) {
		/* "was (not) in the market", "NOT IN MARKET"; "was seen in
		 * the market", "had not seen the Fed in the market". */
		static const char *const saw[] = { "seen", "see", "saw", "detected", "spotted",
						   "noticed", "sign", "signs", NULL };
		for (size_t j = v; j-- > 0 && j + 7 > v;)
			if (is_any(c, j, events_be_words) || is_any(c, j, saw) ||
			    (c->title && j + 1 == v && (is(c, j, "not") || is(c, j, "no"))))
				return j + 4 > v || is_any(c, j, saw);
	}
	return false;
}

bool events_market_absence(const struct clause *c, size_t v)
{
	static const char *const stay[] = { "stayed", "stays", "stay", "staying", "kept", "keeps",
					    "remained", "remains", NULL };
	if (is_any(c, v, stay) && is(c, v + 1, "out"))
		return is(c, v + 2, "of") ? is(c, v + 3, "the") || is(c, v + 3, "foreign") ||
					     is(c, v + 3, "currency") :
					   true;
	if ((is(c, v, "stood") || is(c, v, "stands") || is(c, v, "stand")) && is(c, v + 1, "aside"))
		return true;
	return is_any(c, v, stay) && is(c, v + 1, "on") && is(c, v + 2, "the") &&
	       is(c, v + 3, "sidelines");
}

/* The mention that ends right before word e (its last word at e - 1), or
 * NULL; "the" before a name belongs to it. */
static const struct mention *ending_at(const struct mention *m, size_t nm, size_t e)
{
	for (size_t i = 0; i < nm; i++)
		if (m[i].pos + m[i].len == e)
			return &m[i];
	return NULL;
}

static const struct mention *starting_at(const struct clause *c, const struct mention *m,
					 size_t nm, size_t k)
{
	if (is(c, k, "the"))
		k++;
	for (size_t i = 0; i < nm; i++)
		if (m[i].pos == k)
			return &m[i];
	return NULL;
}

size_t events_subject_list(const struct clause *c, const struct mention *m, size_t nm,
			   const struct mention *sub, size_t v, const struct mention **out,
			   size_t max)
{
	size_t n = 0;
	if (!sub || sub->pos >= v || sub->type != A_CB)
		return 0;
	/* Back from the subject: "A, B and C", "neither A nor B", "not only A
	 * but also B". */
	for (const struct mention *cur = sub; n < max;) {
		size_t j = cur->pos;
		if (j > 0 && is(c, j - 1, "the"))
			j--;
		const struct mention *p = NULL;
		if (j >= 2 && is(c, j - 1, "also") && is(c, j - 2, "but"))
			p = ending_at(m, nm, j - 2);
		else if (j >= 1 && (is(c, j - 1, "and") || is(c, j - 1, "nor")))
			p = ending_at(m, nm, j - 1);
		else if (comma_before(c, j))
			p = ending_at(m, nm, j);
		if (!p || p->type != A_CB)
			break;
		out[n++] = p;
		cur = p;
	}
	/* After it, before the verb: "A, joined by B," "A, together with B,"
	 * "A, along with B,". */
	size_t e = sub->pos + sub->len;
	if (comma_before(c, e) && e + 2 < v &&
	    ((is(c, e, "joined") && is(c, e + 1, "by")) ||
	     ((is(c, e, "together") || is(c, e, "along")) && is(c, e + 1, "with")))) {
		for (const struct mention *p = starting_at(c, m, nm, e + 2); p && n < max;) {
			if (p->type != A_CB || p->pos >= v)
				break;
			out[n++] = p;
			size_t k = p->pos + p->len;
			if (!is(c, k, "and") && !comma_before(c, k))
				break;
			p = starting_at(c, m, nm, k + is(c, k, "and"));
		}
	}
	return n;
}

/* An attribution after a comma following the verb at v that hedges the
 * act: "according to" or a commentator ("dealers believed") with a word
 * of rumour or belief. Returns EV_MODE_RUMOURED with the cue, else mode. */
enum ev_mode events_tail_hedge(const struct clause *c, const struct mention *m, size_t nm,
			       size_t v, char *cue, size_t cuesz, enum ev_mode mode)
{
	static const char *const hedge[] = { "rumour", "rumor", "speculat", "believ", "suspect",
		"thought", "talk", "unconfirmed", "doubt", "possibl", "probabl", "apparent",
		"reportedly", NULL };
	size_t k = v + 1;
	while (k < c->n && !comma_before(c, k))
		k++;
	if (k >= c->n)
		return mode;
	/* ", and market sources believed the Bundesbank ...": another act. */
	if (is(c, k, "and") || is(c, k, "but") || is(c, k, "while") || is(c, k, "although"))
		return mode;
	bool attrib = is(c, k, "according");
	for (size_t i = 0; i < nm; i++)
		attrib = attrib || (m[i].type == A_OTHER && m[i].pos >= k && m[i].pos <= k + 1);
	if (!attrib)
		return mode;
	for (size_t i = k; i < c->n && i < k + 6; i++)
		for (size_t h = 0; hedge[h]; h++)
			if (starts(c, i, hedge[h])) {
				snprintf(cue, cuesz, "%s", c->w[i].w);
				return EV_MODE_RUMOURED;
			}
	return mode;
}

/* "Bank of Japan dollar support", "central bank dollar purchases": an
 * intervention named as a noun after its bank and currency. */
bool events_bank_ccy_noun(const struct clause *c, const struct mention *m, size_t nm, size_t v)
{
	static const char *const nouns[] = { "support", "purchases", "buying", "sales", "selling",
					     NULL };
	/* "the Bank of Japan's heavy dollar buying": a size or manner
	 * between the bank and its currency. */
	static const char *const adj[] = { "heavy", "modest", "massive", "concerted", "aggressive",
		"renewed", "further", "persistent", "big", "small", "continued", "sustained", "fresh",
		"repeated", "large", "substantial", "steady", "occasional", NULL };
	if (v < 2 || !is_any(c, v, nouns) || !events_is_ccy(c, v - 1))
		return false;
	size_t st = v - 1;
	while (st > 0 && st + 3 > v - 1 && is_any(c, st - 1, adj))
		st--;
	for (size_t i = 0; i < nm; i++)
		if (m[i].pos + m[i].len == st && (m[i].type == A_CB || m[i].type == A_GENERIC_CB))
			return true;
	return false;
}

bool events_no_object(const struct clause *c, size_t v)
{
	static const char *const adv[] = { "heavily", "aggressively", "modestly", "briefly",
		"again", "steadily", "actively", "massively", "persistently", "too", "also", NULL };
	static const char *const after[] = { "in", "at", "when", "as", "on", "early", "late",
		"during", "this", "today", "yesterday", "around", NULL };
	size_t k = v + 1;
	while (is_any(c, k, adv))
		k++;
	if (k < c->n && !comma_before(c, k) && !is_any(c, k, after))
		return false;
	for (size_t j = 0; j < c->n; j++)
		if (is_any(c, j, events_not_ccy_words))
			return false;
	return true;
}

size_t events_tail_end(const struct clause *c, size_t from, size_t to)
{
	static const char *const stop[] = { "and", "that", "which", "but", "while", "because",
					    "although", "whereas", NULL };
	/* "both central bank intervention and rate changes could be used":
	 * one subject. */
	bool both = false;
	for (size_t k = from >= 6 ? from - 6 : 0; k < from; k++)
		both = both || is(c, k, "both");
	/* "a rise in its repurchase rate, now eight pct, could not be ruled
	 * out": an aside between commas is passed over. */
	static const char *const aside[] = { "now", "currently", "already", "then", NULL };
	for (size_t k = from + 1; k < to && k < c->n; k++) {
		if (comma_before(c, k) && is_any(c, k, aside)) {
			size_t j = k + 1;
			while (j < c->n && j < k + 6 && !comma_before(c, j))
				j++;
			if (j < c->n && comma_before(c, j)) {
				to += j - k;
				k = j;
				continue;
			}
		}
		if (comma_before(c, k) || (is_any(c, k, stop) && !(both && is(c, k, "and"))))
			return k;
	}
	return to;
}

const char *events_dateline_country(const char *dateline)
{
	static const struct {
		const char *city, *code;
	} cities[] = {
		{ "TOKYO", "BOJ" }, { "OSAKA", "BOJ" }, { "FRANKFURT", "Bundesbank" },
		{ "BONN", "Bundesbank" }, { "HAMBURG", "Bundesbank" }, { "LONDON", "BoE" },
		{ "PARIS", "BdF" }, { "ROME", "BdI" }, { "MILAN", "BdI" }, { "MADRID", "BdE" },
		{ "BRUSSELS", "BNB" }, { "AMSTERDAM", "DNB" }, { "THE HAGUE", "DNB" },
		{ "COPENHAGEN", "DKNB" }, { "ZURICH", "SNB" }, { "BERNE", "SNB" }, { "BASLE", "SNB" },
		{ "GENEVA", "SNB" }, { "OTTAWA", "BoC" }, { "TORONTO", "BoC" }, { "MONTREAL", "BoC" },
		{ "SYDNEY", "RBA" }, { "MELBOURNE", "RBA" }, { "CANBERRA", "RBA" },
		{ "WELLINGTON", "RBNZ" }, { "TAIPEI", "CBC" }, { "OSLO", "Norges" },
		{ "NEW YORK", "Fed" }, { "WASHINGTON", "Fed" }, { "CHICAGO", "Fed" },
		{ "STOCKHOLM", "Riksbank" },
	};
	if (!dateline)
		return NULL;
	while (*dateline == ' ')
		dateline++;
	for (size_t i = 0; i < ARRAY_SIZE(cities); i++) {
		size_t n = strlen(cities[i].city);
		if (!strncasecmp(dateline, cities[i].city, n) && !isalpha((unsigned char)dateline[n]))
			return cities[i].code;
	}
	return NULL;
}

size_t events_reserve_restraint(const struct clause *c, size_t v)
{
	static const char *const keep[] = { "maintain", "maintained", "maintaining", "keep",
		"kept", "leave", "left", NULL };
	if (!is_any(c, v, keep))
		return 0;
	for (size_t j = v + 1; j + 2 < c->n && j <= v + 6; j++)
		if ((is(c, j, "reserve") && (is(c, j + 1, "restraint") || starts(c, j + 1, "pressure"))) ||
		    (is(c, j, "pressure") && is(c, j + 1, "on") && is(c, j + 2, "reserve")))
			return j + 1;
	return 0;
}

size_t events_no_policy_change(const struct clause *c, size_t v, size_t *neg)
{
	static const char *const verbs[] = { "reflect", "reflects", "reflected", "mean", "means",
		"meant", "signal", "signals", "indicate", "indicates", "imply", "implies", NULL };
	static const char *const chg[] = { "change", "shift", "tightening", "easing", "switch",
					   NULL };
	static const char *const pol[] = { "policy", "policies", "stance", "course", NULL };
	if (!is_any(c, v, verbs) || v < 2)
		return 0;
	size_t k = v - 1;
	if (!is(c, k, "not") && !is(c, k, "n't"))
		return 0;
	for (size_t j = v + 1; j < c->n && j <= v + 3; j++) {
		if (!is_any(c, j, chg))
			continue;
		for (size_t e = j + 1; e < c->n && e <= j + 4; e++)
			if (is_any(c, e, pol)) {
				*neg = k > 0 && (is(c, k - 1, "did") || is(c, k - 1, "does") ||
						 is(c, k - 1, "do")) ? k - 1 : k;
				return e;
			}
	}
	return 0;
}

const struct mention *events_ccy_noun_by(const struct clause *c, const struct mention *m,
					 size_t nm, size_t v)
{
	static const char *const nouns[] = { "buying", "purchases", "sales", "selling", "support",
					     NULL };
	if (!is_any(c, v, nouns))
		return NULL;
	size_t k = v + 1;
	if (v > 0 && events_is_ccy(c, v - 1)) {
		/* "dollar buying by" */
	} else if (is(c, k, "of")) {
		/* "purchases of (foreign) currency", "sales of dollars" */
		k++;
		if (is(c, k, "foreign"))
			k++;
		if (!events_is_ccy(c, k))
			return NULL;
		k++;
	} else if (is(c, k, "by") && !is(c, v, "support")) {
		/* "concerted buying by the Federal Reserve and the Bank of
		 * Japan", in a clause about currencies. */
		bool ccy = false;
		for (size_t j = 0; j < c->n && !ccy; j++)
			ccy = events_is_ccy(c, j);
		if (!ccy)
			return NULL;
	} else {
		return NULL;
	}
	if (!is(c, k, "by"))
		return NULL;
	k += 1 + is(c, k + 1, "the");
	for (size_t i = 0; i < nm; i++)
		if (m[i].pos == k && (m[i].type == A_CB || m[i].type == A_GENERIC_CB))
			return &m[i];
	return NULL;
}

/* "during the month", "in the month", "over the month". */
bool events_the_month(const struct clause *c)
{
	for (size_t i = 2; i < c->n; i++)
		if (is(c, i, "month") && is(c, i - 1, "the") &&
		    (is(c, i - 2, "during") || is(c, i - 2, "in") || is(c, i - 2, "over") ||
		     is(c, i - 2, "through")))
			return true;
	return false;
}

/* "FED AND BUNDESBANK BUY DOLLARS", "BANK OF FRANCE, BUNDESBANK BUY
 * DOLLARS": two banks named just before the verb
 * make a bare stem a plural present, a report of the act. */
bool events_plural_banks_before(const struct clause *c, const struct mention *m, size_t nm,
				size_t v)
{
	for (size_t i = 1; i < nm; i++)
		if (m[i].type == A_CB && m[i].pos + m[i].len == v && m[i - 1].type == A_CB &&
		    m[i].pos >= 1 &&
		    ((m[i - 1].pos + m[i - 1].len + 1 == m[i].pos && is(c, m[i].pos - 1, "and")) ||
		     /* "BANK OF FRANCE, BUNDESBANK BUY DOLLARS". */
		     (m[i - 1].pos + m[i - 1].len == m[i].pos && comma_before(c, m[i].pos))))
			return true;
	return false;
}

bool events_present_practice(const struct clause *c, size_t v)
{
	static const char *const present[] = { "intervenes", "buys", "sells", "raises", "lowers",
		"trims", "lifts", NULL };
	static const char *const obj[] = { "its", "their", "the", NULL };
	return !c->title && !(v > 0 && is_any(c, v - 1, events_be_words)) &&
	       (is_any(c, v, present) || (is(c, v, "cuts") && is_any(c, v + 1, obj)));
}

bool events_chronology(const char *title, const char *body)
{
	static const char *const months[] = { "January", "February", "March", "April", "May",
		"June", "July", "August", "September", "October", "November", "December", "Jan",
		"Feb", "Aug", "Sept", "Oct", "Nov", "Dec" };
	if (title && strcasestr(title, "chronology"))
		return true;
	/* Two paragraphs or more opening with a day and a dash. */
	int n = 0;
	for (const char *p = body; p && *p; p++) {
		if (p != body && p[-1] != '\n')
			continue;
		while (*p == ' ')
			p++;
		for (size_t k = 0; k < ARRAY_SIZE(months); k++) {
			size_t l = strlen(months[k]);
			if (!strncmp(p, months[k], l) && p[l] == ' ' && isdigit((unsigned char)p[l + 1])) {
				const char *q = p + l + 1;
				while (isdigit((unsigned char)*q))
					q++;
				if (!strncmp(q, " - ", 3))
					n++;
				break;
			}
		}
		if (!*p)
			break;
	}
	return n >= 2;
}

size_t events_habit(const struct clause *c, size_t v)
{
	static const char *const habit[] = { "generally", "usually", "normally", "typically",
		"traditionally", "habitually", "customarily", NULL };
	for (size_t h = v >= 8 ? v - 8 : 0; h < v; h++) {
		bool comma = false;
		for (size_t k = h + 1; k <= v && !comma; k++)
			comma = comma_before(c, k);
		if (is_any(c, h, habit) && !comma)
			return h + 1;
	}
	return 0;
}
