/* Internal to the event extractor (agents/events.c, events_acts.c): the
 * state of one story's reading, and the acts it gathers. Not for other
 * modules. */
#ifndef MADF_EVENTS_READER_H
#define MADF_EVENTS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/events.h"
#include "agents/events_words.h"

struct clause;

struct reader {
	int32_t pub_day;
	const char *story_bank;  /* the first central bank named */
	const char *last_cb;     /* the central bank named last */
	enum actor_type last_type;
	const char *last_code;
	struct ev_story *out;
	bool mm_words, data_words;
	bool title_mm;           /* the title is about the money market */
	bool chronology;         /* paragraphs opening "March 23 - ": a chronology */
	bool cb_council;         /* a central bank's council was named */
	struct {                 /* the (bank, kind) the body told as done */
		const char *bank;
		enum ev_kind kind;
	} body_facts[EVENTS_MAX];
	size_t nbody_facts;
	bool vague_day[EVENTS_MAX]; /* the act's day is a month's middle */
	bool dated[EVENTS_MAX];     /* its clause named its day */
	bool body_told[EVENTS_MAX]; /* the body has told it */
	bool cur_dated;             /* the clause being read names its act's day */
	int32_t title_month_end;    /* "... RISE IN MAY" early in June: May's end; 0 none */
	struct ev_act story_ccys;   /* the currencies the story names, first first */
	const char *title_country; /* the one country the title names */
	const char *named[8];    /* the central banks named so far */
	size_t nnamed;
	bool lead;               /* reading the body's first sentence */
	const char *doubted[8];  /* banks whose part the story calls talk */
	size_t ndoubted;
	size_t prev_from, prev_to; /* the acts the previous clause added */
	size_t last_from, last_to; /* the acts of the last clause that added any */
	bool prev_some;            /* the previous clause opened "Some dealers said" */
	unsigned since_last;       /* clauses read since that one (many once one names
				    * another bank) */
};

/* Adds ccy ("JPY") to the act's currencies, once. */
void events_add_ccy(struct ev_act *a, const char *ccy);
/* The currencies clause c names, added to a. */
void events_clause_ccys(const struct clause *c, struct ev_act *a);
/* Keeps the act (bank, kind, mode) of clause c on day: a new one with its
 * evidence, or the one already kept, completed (its currencies, the day a
 * headline or a vague mention lacked). */
void events_story_add(struct reader *r, const struct clause *c, const char *bank,
		      enum ev_kind kind, enum ev_mode mode, const char *cue, int32_t day,
		      bool vague);
/* The banks of a list starting at word k act too (see events_acts.c). */
size_t events_add_list(struct reader *r, const struct clause *c, const struct mention *m,
		       size_t nm, size_t k, enum ev_kind kind, int32_t day, bool vague);
/* The partners of a reported intervention at v act too. */
void events_add_partners(struct reader *r, const struct clause *c, const struct mention *m,
			 size_t nm, size_t v, bool noun, int32_t day, bool vague);
/* Removes act i, with its day flags. */
void events_drop_act(struct reader *r, size_t i);
/* After the whole story is read: a headline's act the body tells only as
 * hearsay becomes hearsay; a hold of "had resisted a rise" in a story of
 * the bank's rise is dropped. */
void events_settle_story(struct reader *r);
/* Whether text names a currency ("dollar", "sterling", "foreign
 * exchange"; padded: as a word at either end too). */
bool events_names_currency(const char *text, bool padded);
/* A story naming no currency: its interventions told by no bank's name
 * and no verb ("intervention by the authorities" of a regulator) go. */
void events_drop_regulator_acts(struct reader *r);
/* A body's undated fact told after a dated mention of that act takes its day. */
void events_redate_retold(struct reader *r);

/* Clause-level readings (events_told.c), run on clause c with its
 * mentions m[0..nm) after its verbs: "a Fed spokesman said there had been
 * no change" denies the rumoured act; "although the Swiss central bank's
 * part could not be confirmed" makes that bank's part hearsay; "would not
 * follow the Bundesbank's move" denies the subject's doing alike; "did not
 * join in", "was not involved" deny an intervention. */
void events_rumour_denied(struct reader *r, const struct clause *c, const struct mention *m,
			  size_t nm);
void events_part_doubted(struct reader *r, const struct clause *c, const struct mention *m,
			 size_t nm);
/* "..., but this was market talk that could not be confirmed": the
 * previous clause's facts become hearsay. */
void events_this_was_talk(struct reader *r, const struct clause *c);
/* "The Bundesbank declined to comment, and dealers said they had seen no
 * sign of it": the interventions of the last clause that told any, one
 * or two clauses before, denied. */
void events_no_sign_of_it(struct reader *r, const struct clause *c, const struct mention *m,
			  size_t nm);
/* "Some bankers said the Bank of Spain had also bought francs, but others
 * said the peseta's strength reflected private inflows alone": the acts of
 * the clause before, disputed, are hearsay. Records whether c opens so. */
void events_others_said(struct reader *r, const struct clause *c);
/* Whether every central bank clause c names is one of the last acts'. */
bool events_names_only_last(const struct reader *r, const struct mention *m, size_t nm);
void events_not_follow(struct reader *r, const struct clause *c, const struct mention *m,
		       size_t nm);
void events_took_no_part(struct reader *r, const struct clause *c, const struct mention *m,
			 size_t nm);
/* The actors clause c names, in order (events_actors.c): at most max
 * written to m; returns how many. */
size_t events_find_mentions(const struct clause *c, struct mention *m, size_t max);
/* The subject of the verb (or noun, when noun) at v among the clause's
 * mentions: the nearest actor before it that is no attribution ("dealers
 * said"), a passive's or a noun's agent after it ("by the Bundesbank"),
 * or NULL. */
const struct mention *events_subject_of(const struct mention *m, size_t nm, size_t v,
				       const struct clause *c, bool noun);
/* The central bank mention m stands for, NULL when none; first is the
 * clause's first mention, official_rate and intervention say what the
 * act is (a country stands for its bank only then). */
const char *events_resolve(struct reader *r, const struct clause *c, const struct mention *m,
			   const struct mention *first, bool official_rate, bool intervention);

/* "refused to lower its dealing rates", "its refusal yesterday to raise
 * the discount rate" at word v: the position of the verb refused, an
 * official rate its object; 0 when none. */
size_t events_refused_rate(const struct clause *c, size_t v);

#endif
