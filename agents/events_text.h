/* Internal to the event extractor (agents/events*.c): a clause split into
 * words, the word tests the rules are written with, and the dates a clause
 * names. Not for other modules. */
#ifndef MADF_EVENTS_TEXT_H
#define MADF_EVENTS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agents/events.h"

#define WORD_LEN 24
#define CLAUSE_WORDS 160

struct word {
	char w[WORD_LEN];  /* lowercase, possessive 's dropped */
	size_t off, len;   /* in the clause text */
};

struct clause {
	const char *text;
	size_t len;
	struct word w[CLAUSE_WORDS];
	size_t n;
	bool title;
};

static inline bool is(const struct clause *c, size_t i, const char *w)
{
	return i < c->n && !strcmp(c->w[i].w, w);
}

static inline bool is_any(const struct clause *c, size_t i, const char *const *list)
{
	for (; i < c->n && *list; list++)
		if (!strcmp(c->w[i].w, *list))
			return true;
	return false;
}

static inline bool starts(const struct clause *c, size_t i, const char *prefix)
{
	return i < c->n && !strncmp(c->w[i].w, prefix, strlen(prefix));
}

/* A comma between word i - 1 and word i. */
static inline bool comma_before(const struct clause *c, size_t i)
{
	if (i == 0 || i >= c->n)
		return false;
	size_t a = c->w[i - 1].off + c->w[i - 1].len;
	return memchr(c->text + a, ',', c->w[i].off - a) != NULL;
}

/* Word k is a possessive: its text ends in "'s" ("Bundesbank's",
 * "yesterday's"; the word itself has the "'s" cut off). */
static inline bool possessive(const struct clause *c, size_t k)
{
	if (k >= c->n)
		return false;
	const struct word *w = &c->w[k];
	const char *t = c->text + w->off;
	return w->len > 2 && t[w->len - 2] == '\'' && (t[w->len - 1] == 's' || t[w->len - 1] == 'S');
}

static inline bool clause_has(const struct clause *c, const char *w)
{
	for (size_t i = 0; i < c->n; i++)
		if (is(c, i, w))
			return true;
	return false;
}

/* Splits c->text[0, c->len) into c->w (at most CLAUSE_WORDS). */
void events_clause_words(struct clause *c);

/* Words of phrase p (lowercase words, single spaces) matched at i: their
 * count, else 0. */
size_t events_match_phrase(const struct clause *c, size_t i, const char *p);

/* A number at i: digits or "one", "two" ... */
bool events_number_word(const struct clause *c, size_t i);

/* "May" at i is the month, not the modal. */
bool events_month_may(const struct clause *c, size_t i);

/* The day an act in the clause happened, or pub; *old when the clause puts
 * it before the week without a day ("last year", "in 1985", "this year"),
 * *vague for a month's middle or end, *last_week for "last week". */
int32_t events_clause_day(const struct clause *c, int32_t pub, bool *old, bool *vague,
			  bool *last_week);

/* As events_clause_day for the verb at word v: of several date phrases,
 * the nearest to it ("after stifling pressure last week, the authorities
 * sanctioned a cut on Monday": Monday). */
int32_t events_clause_day_near(const struct clause *c, size_t v, int32_t pub, bool *old,
			       bool *vague, bool *last_week);

/* As events_clause_day_near, *dated (when not NULL) telling whether the
 * clause named the act's day at all (false: pub by default). A phrase
 * that dates another verb is passed over: "said last week that the
 * authorities bought", "After stifling pressure last week, ...". */
int32_t events_clause_day_at(const struct clause *c, size_t v, int32_t pub, bool *old,
			     bool *vague, bool *last_week, bool *dated);

/* The one country (by name or adjective: "DANISH", "Japan") a title names,
 * as the code of its central bank; NULL for none or several. */
const char *events_title_country(const char *title);

/* "has not changed its policy (stance)", "did not alter its rates" with the
 * verb at v: the object's last word, *neg the negation's position; 0 when
 * the words are not there. */
size_t events_unchanged_policy(const struct clause *c, size_t v, size_t *neg);

/* A noun act whose phrase starts at word np and which the clause presumes
 * done: "recent", "current", "continuing", "today's", "this week's" before
 * it (not "no recent", "any further"). *now when it is under way now. */
bool events_presupposed(const struct clause *c, size_t np, bool *now);

/* "this week" in c (not "earlier this week"): the week's middle, its
 * Wednesday once past, else pub; -1 when c does not say it. */
int32_t events_midweek(const struct clause *c, int32_t pub);

/* "stayed out of the market", "stood aside", "remained on the
 * sidelines" at v: an intervention denied. */
bool events_market_absence(const struct clause *c, size_t v);

/* "French" in "the French intervention rate", "German" in "the West
 * German discount rate": the bank of the country whose official rate the
 * adjective at i names, or NULL. */
const char *events_rate_adjective(const struct clause *c, size_t i);

/* The central bank of the city a dateline opens with ("TAIPEI, July 9
 * -": CBC), or NULL. */
const char *events_dateline_country(const char *dateline);

/* "(voted to) maintain the existing degree of reserve restraint", the
 * FOMC's hold: the end of the object, or 0. */
size_t events_reserve_restraint(const struct clause *c, size_t v);
/* "did not reflect any change in credit policy" said of a measure: a
 * hold; the end of the object, 0 when not, *neg the negation's start. */
size_t events_no_policy_change(const struct clause *c, size_t v, size_t *neg);

struct mention;
/* A noun act at v after ", reflecting" or ", citing" ("rates would come
 * down, reflecting the half-point reduction in its discount rate"): the
 * phrase's first word, where the act's cues start, else from. */
size_t events_noun_phrase_from(const struct clause *c, size_t from, size_t v);
/* "stood firm against market pressure for lower rates": the last
 * "pressure" resisted between from and to, where a hold's cues start
 * again, or 0. */
size_t events_resisted_pressure(const struct clause *c, size_t from, size_t to);
/* "the Federal Reserve's half-point increase in its discount rate last
 * Friday would unsettle markets": the noun at v owned by sub and dated
 * before pub, its modal cue (would, will, could, may, might) its
 * effect's. */
bool events_known_effect(const struct clause *c, size_t v, const struct mention *sub, int32_t pub,
			 const char *cue);
/* A noun act at v made hypothetical by the words before it ("any cut",
 * "to follow with increases in", "any move ... toward a cut"): writes
 * the cue and returns true. */
bool events_noun_hypothetical(const struct clause *c, size_t v, char *cue, size_t cuesz);
/* An attribution after a comma following the verb at v that hedges the
 * act ("..., according to market rumours", ", dealers believed"):
 * EV_MODE_RUMOURED with the cue, else mode. */
enum ev_mode events_tail_hedge(const struct clause *c, const struct mention *m, size_t nm,
			       size_t v, char *cue, size_t cuesz, enum ev_mode mode);
/* "Bank of Japan dollar support", "central bank dollar purchases" at v. */
bool events_bank_ccy_noun(const struct clause *c, const struct mention *m, size_t nm, size_t v);
/* "dollar buying by the Bank of Japan", "purchases of foreign currency
 * by the Bank of France" at v: the bank after "by", else NULL. */
const struct mention *events_ccy_noun_by(const struct clause *c, const struct mention *m,
					 size_t nm, size_t v);
/* The other central banks of the subject's list before the verb at v,
 * the subject being sub: "the Bundesbank and the Swiss National Bank
 * bought", "the Bundesbank, the Bank of France and the Bank of Italy all
 * intervened", "neither A nor B", "not only A but also B", "A, joined by
 * B,", "several central banks, including A and B,". Writes up to max of
 * them to out (not sub itself) and returns how many. */
size_t events_subject_list(const struct clause *c, const struct mention *m, size_t nm,
			   const struct mention *sub, size_t v, const struct mention **out,
			   size_t max);

/* "(has) carried out", "had made" at word e, right after the bank that a
 * noun's reduced relative clause names ("the intervention the Bank has
 * carried out"). */
bool events_done_by(const struct clause *c, size_t e);

/* A rate object within span words from word `from`: its position or -1;
 * *priv for a rate only commercial banks set, *official for an official
 * one ("the overnight money market lending rate" is official). */
long events_rate_object(const struct clause *c, size_t from, size_t span, bool *priv,
			bool *official);

/* A passive verb at v whose subject is a rate ("the discount rate was cut",
 * "rates would be raised"): the rate's position or -1, with *priv and
 * *official as events_rate_object sets them. */
long events_passive_rate(const struct clause *c, size_t v, bool *priv, bool *official);

/* A noun of a rate's change at v: "rise" or "reduction" before "in" or
 * "of" (a word between: "a rise yesterday in") or after a rate word ("rate
 * rise"): EV_HIKE or EV_CUT, else EV_NONE. */
enum ev_kind events_change_noun(const struct clause *c, size_t v);

/* "Canada's bank rate rose", "the Bank of Canada rate fell" with the verb
 * at v: EV_HIKE or EV_CUT, else EV_NONE. */
enum ev_kind events_boc_rate_move(const struct clause *c, size_t v);
/* "during the month", "in the month", "over the month" in the clause. */
bool events_the_month(const struct clause *c);

/* "FED AND BUNDESBANK BUY DOLLARS": two banks named just before the verb
 * at v, a bare stem then a plural present. */
bool events_plural_banks_before(const struct clause *c, const struct mention *m, size_t nm,
				size_t v);

/* A habit before the verb at v with no comma between ("central banks
 * generally followed the Bundesbank's lead in supporting the dollar"):
 * the adverb's index + 1, else 0. */
size_t events_habit(const struct clause *c, size_t v);

/* The direction of a rate's own move verb at v ("rose", "edged down"):
 * EV_HIKE, EV_CUT or EV_NONE. */
enum ev_kind events_rate_move_kind(const struct clause *c, size_t v);

/* A tender or repurchase rate given with its move, "... tender at a fixed
 * 3.55 pct, down from 3.80" ("up from", "lower than", "higher than") at
 * v: EV_CUT or EV_HIKE, else EV_NONE. */
enum ev_kind events_tender_move(const struct clause *c, size_t v);

/* Lending "at a lower 10 pct" ("at a higher rate"), a lending word before,
 * with "lower" or "higher" at v: EV_CUT or EV_HIKE, else EV_NONE. */
enum ev_kind events_lend_move(const struct clause *c, size_t v);
/* "the lower rates introduced this morning", "the higher dealing rates
 * it put in place yesterday" at v (the verb): EV_CUT or EV_HIKE. */
enum ev_kind events_new_rates(const struct clause *c, size_t v);
/* A body's present at v ("the central bank intervenes only to smooth
 * erratic movements", "buys dollars when"): a practice, not the news (a
 * headline's present, or a chronology's, is). */
bool events_present_practice(const struct clause *c, size_t v);
/* A chronology: a title saying so, or two paragraphs or more opening
 * with a day and a dash ("March 23 - The Bank of Japan buys dollars"). */
bool events_chronology(const char *title, const char *body);
/* A verb between a bank and a noun of trading at v that makes the
 * trading the market's ("bowed to the relentless buying of sterling",
 * "faced heavy dollar selling"). */
bool events_met_trading(const struct clause *c, size_t from, size_t v);
/* "gave its blessing", "signalled its consent" at v: the bank sanctioning
 * a move of the commercial banks' rates. */
bool events_gave_blessing(const struct clause *c, size_t v);
/* A central bank's gerund at v that reports its act: "the Bank of
 * England, trimming its dealing rates, ...", "within minutes of the Bank
 * of England trimming its rates". */
bool events_bank_gerund(const struct clause *c, const struct mention *m, size_t nm, size_t v);
/* "the Bundesbank nudged up its repurchase rate", "the Bank of England
 * pushed its dealing rates up": a phrasal verb of a rate's move with a
 * central bank named right before it, its particle's direction. */
enum ev_kind events_phrasal_move(const struct clause *c, const struct mention *m, size_t nm,
				 size_t v);

/* A sentence of text saying currency was bought to repay debt ("BUYS
 * CURRENCY TO REPAY DEBT", "the currency purchased was used to repay
 * foreign debt"). */
bool events_debt_purchase(const char *text);

/* The verb at v after "to" that a decision makes done: "decided (today)
 * to", "decision (late on Friday) to", "agreed to", "voted to", "moved
 * to". */
bool events_decided_to(const struct clause *c, size_t v);
/* The infinitive at v told as done by the past verb governing it:
 * "forced the Bank of Italy to raise", "was obliged to sell", "acted to". */
bool events_made_to(const struct clause *c, size_t v);
/* "had not intervened, contradicting dealers who said it had sold
 * marks": the act's subject at first follows "who said" after a verb of
 * denial; the denial's index + 1, else 0. */
size_t events_contradicted_claim(const struct clause *c, size_t first);
/* "spent about 4.5 billion dlrs defending the lira" at v. */
bool events_spent_defending(const struct clause *c, size_t v);
/* ", a money market operation" after the rate move at v. */
bool events_called_operation(const struct clause *c, size_t v);
/* "let the call rate rise": a market rate let go before the move at v. */
bool events_let_market_rate(const struct clause *c, size_t v);

/* "no change to its discount and Lombard rates" ("in its credit policy",
 * "without a rate change") with "no" or "without" at v: the rate's
 * position, else 0. */
size_t events_no_change(const struct clause *c, size_t v);

/* The rate at word j is named by an official word of its own (discount,
 * Lombard, intervention, repurchase, treasury certificate ...), not only
 * "key" or "official". */
bool events_named_official(const struct clause *c, size_t j);

/* The noun act at v follows "before" ("before the Bundesbank discount
 * rate cut"), its bank and rate words between. */
bool events_before_noun(const struct clause *c, size_t v);

/* The clause names a day or a period of its own. */
bool events_clause_dated(const struct clause *c);
/* A trade verb at v with no object ("bought heavily in early trading",
 * "... while the Bank of Japan bought"), in a clause that names nothing
 * else traded (bills, bonds ...). */
bool events_no_object(const struct clause *c, size_t v);
/* The end of the words after a noun act that its cues may be read in:
 * to, or the first comma, "and", "that", "which", "but" ... after from. */
size_t events_tail_end(const struct clause *c, size_t from, size_t to);
/* A cue "not impressed", "not mention", "not follow" ...: a negated verb
 * that presupposes its object (events_mode_between). */
bool events_factive_cue(const char *cue);

/* A verb of entering the market at v: "stepped in", "entered the market",
 * "came into the market", "came in to buy", "was in the market". */
bool events_market_entry(const struct clause *c, size_t v);

/* The full stop at text[end] closes an abbreviation ("U.S.", "Corp", an
 * initial), not a sentence. */
bool events_abbreviation(const char *s, size_t end);

/* Word s is the "since" of a record ("its lowest level since January",
 * "the largest rise since April"): what follows dates the record. */
bool events_superlative_since(const struct clause *c, size_t s);

#endif
