/* Internal to the event extractor (agents/events.c): its vocabulary, the
 * central banks it knows, the phrases that name an actor and the words that
 * set an act's mode (see events.h for the rules). Not for other modules. */
#ifndef MADF_EVENTS_WORDS_H
#define MADF_EVENTS_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "agents/events.h"

struct bank_def {
	const char *code, *name, *ccy;
};

enum actor_type {
	A_CB,          /* a central bank, code known */
	A_GENERIC_CB,  /* "central bank", "the Bank": resolved from context */
	A_COUNTRY,     /* "Belgium", "Japan": its central bank for official rates */
	A_COMMERCIAL,  /* a commercial bank, "banks", building societies */
	A_GOVT,        /* ministry, Treasury, minister, government, G-7 */
	A_OTHER,       /* economists, dealers, analysts: not an actor of acts */
	A_PRONOUN,     /* "it": the last actor */
};

/* An actor named in a clause: words [pos, pos + len). */
struct mention {
	size_t pos, len;
	enum actor_type type;
	const char *code;
};

/* Phrases, lowercase words separated by single spaces. */
struct actor_def {
	const char *phrase;
	enum actor_type type;
	const char *code;
};

struct cue_def {
	const char *w;
	enum ev_mode mode;
	bool prefix;
};

extern const struct bank_def events_banks[];
extern const size_t events_nbanks;
extern const struct actor_def events_actors[];
extern const size_t events_nactors;
extern const struct cue_def events_cues[];
extern const size_t events_ncues;

/* Word lists, NULL-terminated. */
extern const char *const events_cut_verbs[], *const events_hike_verbs[],
	*const events_hold_verbs[], *const events_interv_verbs[], *const events_trade_verbs[],
	*const events_signal_verbs[], *const events_ccy_words[], *const events_not_ccy_words[],
	*const events_rate_words[], *const events_private_rate[], *const events_official_rate[],
	*const events_be_words[];

struct clause;

/* A currency word at i of c ("mark" after a pronoun, "to" or a modal is
 * the verb). */
bool events_is_ccy(const struct clause *c, size_t i);

/* The cue word at i of c, or NULL. */
const struct cue_def *events_cue_at(const struct clause *c, size_t i);

/* The mode a cue in words [from, to) of c sets, the cue word copied to
 * cue (cuesz bytes); EV_MODE_FACT and "" when none. */
enum ev_mode events_mode_between(const struct clause *c, size_t from, size_t to, char *cue,
				 size_t cuesz);

#endif
