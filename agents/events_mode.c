/* The event extractor's reading of an act's mode: the cue words between
 * the actor and the verb (see events.h for the rules). */
#include <stdio.h>
#include <string.h>

#include "agents/events_text.h"
#include "agents/events_words.h"
#include "core/util.h"
#include "core/banned.h"

const struct cue_def *events_cue_at(const struct clause *c, size_t i)
{
	for (size_t k = 0; k < events_ncues; k++)
		if (events_cues[k].prefix ? starts(c, i, events_cues[k].w) : is(c, i, events_cues[k].w))
			return &events_cues[k];
	return NULL;
}

/* Predicates a negation may belong to instead of the act after them:
 * saying, knowing, judging, asking, imitating, effect and size. The
 * factive ones presuppose their object: a dated noun act after them is
 * done ("not impressed by the Bundesbank's purchases this morning", "did
 * not follow yesterday's rise", "was not large"). */
static const struct {
	const char *w;
	bool factive;
} negated_other[] = {
	{ "mention", true }, { "comment", true }, { "discuss", true }, { "elaborat", false },
	{ "disclos", false }, { "specif", false }, { "reveal", false }, { "confirm", false },
	{ "impress", true }, { "surpris", true }, { "copy", true }, { "copie", true },
	{ "follow", true }, { "match", true }, { "say", false }, { "said", false },
	{ "know", false }, { "knew", false }, { "detail", false }, { "explain", false },
	{ "identif", false }, { "quantif", false }, { "refer", false }, { "address", false },
	{ "clear", false }, { "certain", false }, { "sure", false }, { "believ", false },
	{ "thought", false }, { "ask", false }, { "urg", false }, { "press", false },
	{ "request", false }, { "prevent", true }, { "stop", true }, { "halt", true },
	{ "stem", true }, { "help", true }, { "expect", false }, { "anticipat", false },
	{ "forecast", false }, { "predict", false }, { "succeed", false }, { "aim", false },
	{ "calm", true }, { "reverse", true }, { "large", true }, { "big", true },
	{ "heavy", true }, { "substantial", true }, { "enough", true }, { "sufficient", true },
	{ "effective", true }, { "successful", true }, { "massive", true },
};

/* A negation ("not", "no", "never", "n't", "nor") at i that is not the
 * act's own, before the act at to. Returns the index the scan goes on
 * after, or 0 when the negation denies the act. *kind is set to 'o' for
 * the negation of another predicate, of saying, judging or imitating
 * ("did not mention this week's intervention", "were not overly
 * impressed by the intervention", "its decision not to copy the
 * Bundesbank's cut", "did not say whether"), 'e' for an act the negation
 * leaves out ("no measures other than intervention planned") or an idiom
 * ("not least", "not only"), 'r' for "did not rule out". */
static size_t negation_elsewhere(const struct clause *c, size_t i, size_t to, char *kind)
{
	static const char *const neg[] = { "not", "no", "never", "n't", "nor", NULL };
	/* Words that pass the negation on to the next one. */
	static const char *const pass[] = { "be", "been", "being", "is", "was", "were", "are",
		"have", "has", "had", "do", "does", "did", "overly", "yet", "specifically",
		"directly", "immediately", "publicly", "explicitly", "so", "too", "very", "really",
		"even", "always", "necessarily", "formally", "officially", "much", "particularly",
		"want", "wish", "to", NULL };

	if (!is_any(c, i, neg))
		return 0;
	*kind = 'e';
	if (is(c, i, "not") && (is(c, i + 1, "least") || is(c, i + 1, "only") || is(c, i + 1, "just")))
		return i + 1;
	for (size_t k = i + 1; k + 1 < to && k < i + 8; k++)
		if ((is(c, k, "other") && is(c, k + 1, "than")) || is(c, k, "except") ||
		    (is(c, k, "apart") && is(c, k + 1, "from")) || is(c, k, "besides"))
			return k + (is(c, k, "other") || is(c, k, "apart"));
	for (size_t k = i + 1; k < c->n && k < i + 6; k++) {
		if (is_any(c, k, pass))
			continue;
		if (starts(c, k, "rul") && is(c, k + 1, "out")) {
			*kind = 'r';
			return k + 1;
		}
		for (size_t j = 0; j < ARRAY_SIZE(negated_other); j++)
			if (starts(c, k, negated_other[j].w)) {
				*kind = 'o';
				return k;
			}
		return 0;
	}
	return 0;
}

/* "seen the Bank of Japan buying": a trade or intervention verb in -ing
 * after "seen" and a name, before the act at to (the act itself). */
static bool seen_doing(const struct clause *c, size_t i, size_t to)
{
	for (size_t k = i + 2; k <= to && k < c->n && k < i + 8; k++)
		if ((is_any(c, k, events_trade_verbs) || is_any(c, k, events_interv_verbs)) &&
		    strstr(c->w[k].w, "ing"))
			return k == to;
	return false;
}

/* "pressure on the Bank of Italy to follow": a "to" after "pressure on"
 * at i and before the act at to, with no verb between that says the
 * pressure worked ("forced", "prompted", "led"). */
static bool pressure_on_to(const struct clause *c, size_t i, size_t to)
{
	static const char *const made[] = { "forced", "forcing", "prompted", "led",
					    "obliged", "compelled", "drove", "pushed", NULL };
	for (size_t k = i + 2; k < to && k < c->n; k++) {
		for (size_t m = 0; made[m]; m++)
			if (is(c, k, made[m]))
				return false;
		if (is(c, k, "to"))
			return true;
	}
	return false;
}

/* A verb of dismissal just before the hearsay noun at i ("dismissed
 * reports", "denied market rumours"): its index + 1, else 0. */
static size_t dismissed_before(const struct clause *c, size_t i)
{
	static const char *const dis[] = { "dismissed", "dismissing", "dismisses", "denied",
					   "denying", "denies", "rejected", "rejecting", "scotched",
					   "quashed", "brushed", NULL };
	if (!is(c, i, "reports") && !is(c, i, "report") && !starts(c, i, "rumo") &&
	    !starts(c, i, "speculat") && !is(c, i, "talk"))
		return 0;
	for (size_t k = i; k-- > 0 && k + 3 > i;) {
		for (size_t j = 0; dis[j]; j++)
			if (is(c, k, dis[j]))
				return k + 1;
		if (!is(c, k, "the") && !is(c, k, "market") && !is(c, k, "press") &&
		    !is(c, k, "newspaper") && !is(c, k, "all"))
			return 0;
	}
	return 0;
}

/* "warned the Bank of Italy against raising": "against" at i before a
 * gerund (or "any", "a"), not a currency, within eight words of a verb
 * of warning. */
static bool warned_against(const struct clause *c, size_t i)
{
	if (events_is_ccy(c, i + 1) || !((i + 1 < c->n && strstr(c->w[i + 1].w, "ing")) ||
					 is(c, i + 1, "any") || is(c, i + 1, "a")))
		return false;
	for (size_t k = i; k-- > 0 && k + 8 > i;)
		if (starts(c, k, "warn") || starts(c, k, "caution") || starts(c, k, "advis") ||
		    starts(c, k, "argu"))
			return true;
	return false;
}

/* The mode set by a cue in [from, to), with the cue word. */
enum ev_mode events_mode_between(const struct clause *c, size_t from, size_t to, char *cue,
				 size_t cuesz)
{
	size_t neg_other = 0; /* a negation of another predicate, seen */
	/* "it had been ready to support the dollar and had bought dollars":
	 * a second verb with its own auxiliary is out of the first's cues. */
	if (to >= 2 && to < c->n && to > from + 2 && is(c, to - 2, "and") &&
	    (is(c, to - 1, "had") || is(c, to - 1, "has") || is(c, to - 1, "have")))
		from = to - 1;
	for (size_t i = from; i < to && i < c->n; i++) {
		const struct cue_def *d = events_cue_at(c, i);
		if (!d)
			continue;
		/* "no doubt", "little doubt", "without doubt": no hedge. */
		if ((is(c, i, "no") || is(c, i, "little") || is(c, i, "without")) &&
		    starts(c, i + 1, "doubt")) {
			i++;
			continue;
		}
		/* "apparent intervention", "apparent Bank of Japan buying";
		 * not "Apparent confusion ... despite intervention". */
		if (!strcmp(d->w, "apparent") && i + 4 < to)
			continue;
		/* "some dealers thought the Bank intervened"; not "larger than
		 * previously thought". */
		if (!strcmp(d->w, "thought") &&
		    (is(c, i - 1, "previously") || is(c, i - 1, "than") || is(c, i - 1, "originally") ||
		     is(c, i - 1, "initially") || is(c, i - 1, "first") || is(c, i - 1, "earlier")))
			continue;
		/* "refused to rule out", "declined to rule out": not ruled out. */
		if ((!strcmp(d->w, "refused") || !strcmp(d->w, "declined")) && is(c, i + 1, "to") &&
		    starts(c, i + 2, "rul") && is(c, i + 3, "out")) {
			snprintf(cue, cuesz, "not ruled out");
			return EV_MODE_EXPECTED;
		}
		char nk = 0;
		size_t np = negation_elsewhere(c, i, to, &nk);
		if (np && nk == 'r') {
			snprintf(cue, cuesz, "not ruled out");
			return EV_MODE_EXPECTED;
		}
		if (np) {
			if (nk == 'o' && !neg_other)
				neg_other = np;
			i = np;
			continue;
		}
		/* "said to" is a rumour, "said" alone is not a cue. */
		/* "seen buying dollars": dealers saw it done. */
		if ((!strcmp(d->w, "seen") || !strcmp(d->w, "see")) && i + 1 < c->n &&
		    (is_any(c, i + 1, events_trade_verbs) || is_any(c, i + 1, events_interv_verbs)))
			continue;
		/* "had seen no sign of Federal Reserve intervention": the
		 * perfect's "seen" is a sight, not "seen as likely". */
		if (!strcmp(d->w, "seen") && (is(c, i - 1, "had") || is(c, i - 1, "has") ||
					      is(c, i - 1, "have") || is(c, i - 1, "having")))
			continue;
		/* "had seen the Bank of Japan buying dollars": seen done too. */
		if ((!strcmp(d->w, "seen") || !strcmp(d->w, "see")) && seen_doing(c, i, to))
			continue;
		/* "FED DENIES DISCOUNT RATE RUMOUR, BUYS DOLLARS", "denied the
		 * rumour and bought dollars": the denial's object ends where a
		 * second verb of the same subject starts (not "denied that it
		 * had cut rates and bought"). */
		if ((!strcmp(d->w, "denied") || !strcmp(d->w, "denies")) && to > i + 2 &&
		    to < c->n && (is(c, to - 1, "and") || comma_before(c, to))) {
			bool that = false;
			for (size_t k = i + 1; k < to; k++)
				that = that || is(c, k, "that") || is(c, k, "it") || is(c, k, "they");
			if (!that) {
				i = to - 1;
				continue;
			}
		}
		/* "the largest in a single week since April, followed the
		 * Federal Reserve's decision on Friday": a record's "since". */
		if (!strcmp(d->w, "since") && events_superlative_since(c, i))
			continue;
		/* "no change" after a meeting is a hold, kept as such. */
		if (!strcmp(d->w, "set") && !is(c, i + 1, "to"))
			continue;
		if (!strcmp(d->w, "time") && !is(c, i + 1, "is") && !is(c, i - 1, "the") &&
		    !(is(c, i - 1, "of") && is(c, i - 2, "matter")))
			continue;
		/* "further" and "another" only hedge a title ("FURTHER CUT
		 * POSSIBLE"); in a body they describe a done act. */
		if ((!strcmp(d->w, "further") || !strcmp(d->w, "another")) && !c->title)
			continue;
		/* "against" in a body or before a currency: the other currency
		 * (not "warned the Bank of Italy against raising its discount
		 * rate": a warning, the act not done). */
		if (!strcmp(d->w, "against") &&
		    (!c->title || events_is_ccy(c, i + 1) ||
		     (is(c, i + 1, "the") && events_is_ccy(c, i + 2))) &&
		    !(!c->title && warned_against(c, i)))
			continue;
		if (!strcmp(d->w, "little") && !is(c, i + 1, "room"))
			continue;
		if (!strcmp(d->w, "ahead") && !c->title)
			continue;
		/* "ECONOMISTS SPLIT ON NEW BANK OF JAPAN RATE CUT": a headline's
		 * topic of debate (in a body, "the split between" is another
		 * thing). */
		if ((!strcmp(d->w, "split") || !strcmp(d->w, "divided") || !strcmp(d->w, "debate") ||
		     !strcmp(d->w, "mull") || !strcmp(d->w, "ponder")) &&
		    !c->title)
			continue;
		/* "pressure for a cut", "put pressure on the Bank of Italy to
		 * follow with a cut"; not "pressure on the pound forced the
		 * Bank to raise rates" (done) nor "selling pressure". */
		if (!strcmp(d->w, "pressure") && !is(c, i + 1, "for") &&
		    !(is(c, i + 1, "on") && pressure_on_to(c, i, to)))
			continue;
		/* "determined to": an intention; "ruled out": a denial. */
		if (!strcmp(d->w, "determined") && !is(c, i + 1, "to"))
			continue;
		if ((!strcmp(d->w, "ruled") || !strcmp(d->w, "rules") || !strcmp(d->w, "rule")) &&
		    !is(c, i + 1, "out"))
			continue;
		if (!strcmp(d->w, "rather") && !is(c, i + 1, "than"))
			continue;
		/* "what dealers called the heaviest day of intervention": a
		 * name, not a call for ("called for", "called on ... to"). */
		if ((is(c, i, "called") || is(c, i, "calling")) && !is(c, i + 1, "for") &&
		    !is(c, i + 1, "on") && !is(c, i + 1, "upon"))
			continue;
		/* "call money", "the call rate": a rate, not a call for. */
		if (!strcmp(d->w, "call") &&
		    (is(c, i + 1, "money") || is(c, i + 1, "rate") || is(c, i + 1, "rates") ||
		     is(c, i + 1, "loan") || is(c, i + 1, "loans")))
			continue;
		/* "May", "in May", "May 5", "May's reserves": the month. */
		if (!strcmp(d->w, "may") && events_month_may(c, i))
			continue;
		/* "declined to comment" hedges; "the dollar declined" does not. */
		if (!strcmp(d->w, "declined") && !is(c, i + 1, "to"))
			continue;
		/* "was reported in the market", a title's "BUNDESBANK REPORTED
		 * SELLING": hearsay; "dealers reported the Bank bought" is an
		 * attribution, "a report that" hearsay, "its annual report" not. */
		if (!strcmp(d->w, "reported") && !(i > 0 && is_any(c, i - 1, events_be_words)) &&
		    !(c->title && i > 0 && i + 1 < c->n &&
		      (strstr(c->w[i + 1].w, "ing") || is(c, i + 1, "in"))))
			continue;
		if (!strcmp(d->w, "report") && !is(c, i + 1, "that") && !is(c, i + 1, "of"))
			continue;
		/* "would not raise rates simply to defend the dollar", "we will
		 * not cut": an intention denied; "would not hesitate to
		 * intervene" expects it. */
		if ((!strcmp(d->w, "will") || !strcmp(d->w, "would")) &&
		    (is(c, i + 1, "not") || is(c, i + 1, "never")) && i + 2 <= to) {
			/* "it would not resist a half point cut": let it be. */
			bool allow = starts(c, i + 2, "resist") || starts(c, i + 2, "oppos") ||
				     starts(c, i + 2, "object") || starts(c, i + 2, "block") ||
				     starts(c, i + 2, "stand") || starts(c, i + 2, "prevent") ||
				     starts(c, i + 2, "rule") || starts(c, i + 2, "hesitat") ||
				     starts(c, i + 2, "shrink") || starts(c, i + 2, "flinch");
			if (allow)
				snprintf(cue, cuesz, "%s %s %s", c->w[i].w, c->w[i + 1].w, c->w[i + 2].w);
			else
				snprintf(cue, cuesz, "%s %s", c->w[i].w, c->w[i + 1].w);
			return allow ? EV_MODE_EXPECTED : EV_MODE_DENIED;
		}
		/* "out of the question": ruled out. */
		if (!strcmp(d->w, "question") && i >= 3 && is(c, i - 1, "the") && is(c, i - 2, "of") &&
		    is(c, i - 3, "out")) {
			snprintf(cue, cuesz, "out of the question");
			return EV_MODE_DENIED;
		}
		/* "dismissed reports that the bank planned to raise", "denied
		 * rumours that it had sold": the hearsay denied. */
		size_t dis = d->mode == EV_MODE_RUMOURED ? dismissed_before(c, i) : 0;
		if (dis) {
			snprintf(cue, cuesz, "%s %s", c->w[dis - 1].w, c->w[i].w);
			return EV_MODE_DENIED;
		}
		snprintf(cue, cuesz, "%s", c->w[i].w);
		return d->mode;
	}
	for (size_t i = from; i + 1 < to && i + 1 < c->n; i++)
		if ((is(c, i, "said") || is(c, i, "says") || is(c, i, "is") || is(c, i, "was") ||
		     is(c, i, "reported") || is(c, i, "thought") || is(c, i, "alleged")) &&
		    is(c, i + 1, "to")) {
			snprintf(cue, cuesz, "%s to", c->w[i].w);
			return EV_MODE_RUMOURED;
		}
	/* "did not mention the intervention", "did not confirm that it
	 * intervened": neither reported nor denied (a presupposed noun,
	 * "this week's intervention", is still done: see events.c). */
	if (neg_other) {
		snprintf(cue, cuesz, "not %s", c->w[neg_other].w);
		return EV_MODE_RUMOURED;
	}
	cue[0] = 0;
	return EV_MODE_FACT;
}

bool events_factive_cue(const char *cue)
{
	if (strncmp(cue, "not ", 4))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(negated_other); i++)
		if (negated_other[i].factive &&
		    !strncmp(cue + 4, negated_other[i].w, strlen(negated_other[i].w)))
			return true;
	return false;
}

size_t events_noun_phrase_from(const struct clause *c, size_t from, size_t v)
{
	static const char *const lead[] = { "reflecting", "citing", NULL };
	for (size_t k = v; k > from + 1 && k + 6 > v; k--)
		if (comma_before(c, k - 1) && is_any(c, k - 1, lead))
			return k - 1;
	return from;
}

size_t events_resisted_pressure(const struct clause *c, size_t from, size_t to)
{
	size_t kp = 0;
	for (size_t k = from; k < to && k < c->n; k++)
		if (is(c, k, "pressure") &&
		    ((k >= 1 && is(c, k - 1, "against")) || (k >= 2 && is(c, k - 2, "against")) ||
		     (k >= 3 && is(c, k - 3, "against"))))
			kp = k;
	return kp;
}

bool events_known_effect(const struct clause *c, size_t v, const struct mention *sub, int32_t pub,
			 const char *cue)
{
	if (sub->pos >= v || sub->pos + sub->len + 3 < v || !possessive(c, sub->pos + sub->len - 1))
		return false;
	if (strcmp(cue, "would") && strcmp(cue, "will") && strcmp(cue, "could") &&
	    strcmp(cue, "may") && strcmp(cue, "might"))
		return false;
	bool old, vague, last_week, dated;
	int32_t day = events_clause_day_at(c, v, pub, &old, &vague, &last_week, &dated);
	return dated && day < pub;
}

/* "did not expect the Bundesbank to follow with increases in its own
 * rates": the "to" of an infinitive whose object the noun at v is, else
 * 0 (not "due to the cut", "decided to make a cut", nor a known act: "to
 * follow last week's rise", "to match the Bundesbank's cut"). */
static size_t infinitive_of(const struct clause *c, size_t v)
{
	static const char *const not_verb[] = { "the", "a", "an", "its", "their", "this", "that",
		"last", "yesterday's", "today's", "which", NULL };
	static const char *const not_inf[] = { "due", "prior", "owing", "thanks", "response",
		"reaction", "similar", "close", "up", "according", "contrary", "addition", "next",
		"leading", "led", "lead", "prelude", "way", "opposed", "compared", "relative",
		"related", "back", NULL };
	for (size_t k = v >= 5 ? v - 5 : 0; k + 1 < v; k++) {
		if (!is(c, k, "to") || is_any(c, k + 1, not_verb) || events_number_word(c, k + 1) ||
		    (k > 0 && is_any(c, k - 1, not_inf)) || events_decided_to(c, k + 1) ||
		    events_made_to(c, k + 1) || comma_before(c, k + 1))
			continue;
		for (size_t j = k + 1; j < v; j++)
			if (comma_before(c, j + 1) || possessive(c, j) || is(c, j, "the"))
				return 0;
		for (size_t j = v + 1; j < c->n && j < v + 4; j++)
			if (possessive(c, j))
				return 0;
		return k + 1;
	}
	return 0;
}

bool events_noun_hypothetical(const struct clause *c, size_t v, char *cue, size_t cuesz)
{
	if (v == 0)
		return false;
	/* "ahead of any cut by the Bundesbank", "any further rise". */
	if (is(c, v - 1, "any") || (v > 1 && is(c, v - 2, "any") &&
				    (is(c, v - 1, "further") || is(c, v - 1, "such") ||
				     is(c, v - 1, "new") || is(c, v - 1, "early")))) {
		snprintf(cue, cuesz, "any");
		return true;
	}
	size_t inf = v >= 2 ? infinitive_of(c, v) : 0;
	if (inf) {
		snprintf(cue, cuesz, "to %s", c->w[inf].w);
		return true;
	}
	/* "would not point to any move by the Fed toward a cut in its
	 * discount rate": a step toward a hypothetical act. */
	if (v >= 3 && (is(c, v - 1, "a") || is(c, v - 1, "an")) &&
	    (is(c, v - 2, "toward") || is(c, v - 2, "towards")))
		for (size_t k = v - 2; k-- > 0 && k + 9 > v && !comma_before(c, k + 1);)
			if (is(c, k, "any") || is(c, k, "no")) {
				snprintf(cue, cuesz, "%s", c->w[k].w);
				return true;
			}
	return false;
}
