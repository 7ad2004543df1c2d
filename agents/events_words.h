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

#endif
