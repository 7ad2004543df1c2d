/* Evaluation of central-bank event extraction against a labelled set
 * (tests/data/news-labels.jsonl, rules in tests/data/news-labels.md).
 *
 * A labelled story: {"id", "published": "YYYY-MM-DD", "split", "title",
 * "facts": [{"bank", "action", "date", "background"}], "speculated":
 * [{"bank", "action"}]}. A fact with background true is reported as fact
 * but dated before the story's week: an extractor is neither rewarded nor
 * penalised for finding it.
 *
 * Two measures, each per action (hike, cut, hold, intervention) and over
 * all four:
 * - by story citation: a (bank, action) the extractor reports as done for
 *   a story is right when the story's labels hold it as a fact of the
 *   week; a labelled fact the extractor does not report is missed.
 * - by event: the distinct (bank, action, day) acts of the split, an
 *   extracted act matching a labelled one when bank and action agree and
 *   the days differ by at most one (publication times are UTC, acts are
 *   local). */
#ifndef MADF_EVENTS_EVAL_H
#define MADF_EVENTS_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/events.h"
#include "agents/news.h"

#define EVAL_ACTIONS 4   /* hike, cut, hold, intervention */

struct eval_fact {
	char bank[16];
	enum ev_kind kind;
	int32_t day;
	bool background;
};

struct eval_story {
	char *id;
	char split[16];
	int32_t pub;
	struct eval_fact *facts;
	size_t nfacts;
	struct eval_fact *spec;     /* kind and bank only */
	size_t nspec;
};

struct eval_set {
	struct eval_story *s;
	size_t n;
};

struct eval_counts {
	unsigned tp, fp, fn;
};

struct eval_result {
	size_t stories;
	size_t facts;                               /* of the week, labelled */
	struct eval_counts cite[EVAL_ACTIONS + 1];  /* [EVAL_ACTIONS]: all */
	struct eval_counts event[EVAL_ACTIONS + 1];
};

enum eval_rules { EVAL_RULES_NEW, EVAL_RULES_OLD };

/* Reads the labels. Returns 0, or -1 with *err naming the line and why;
 * the caller releases set. */
int eval_set_load(const char *path, struct eval_set *set, char **err);
void eval_set_release(struct eval_set *set);

/* Scores the stories of the split ("dev", "held-out", "named-week"; NULL
 * for all) found in the archive (by id). *missing counts labelled stories
 * not in the archive. */
void eval_run(const struct eval_set *set, const struct news_list *archive, const char *split,
	      enum eval_rules rules, struct eval_result *out, size_t *missing);

/* True for a bank the labels code (tests/data/news-labels.md, Rules:
 * Fed, BOJ, Bundesbank, ... Norges). The labels leave the others out
 * (the Riksbank, the Bank of Korea ...), so their acts are not scored:
 * neither right nor wrong. */
bool eval_labelled_bank(const char *code);

/* The day the story's "today" means (events_local_day) from its UTC
 * publication time and dateline; pub (its UTC day) when it has no time or
 * another day. */
int32_t eval_item_local_day(const struct news_item *it, int32_t pub);

/* The (bank, action) acts of one story under the rules, for tests and
 * the bench's listing. Returns how many were written (at most max). */
size_t eval_story_acts(const struct news_item *it, int32_t pub, enum eval_rules rules,
		       struct eval_fact *out, size_t max);

/* precision, recall from counts; NaN when undefined. */
double eval_precision(const struct eval_counts *c);
double eval_recall(const struct eval_counts *c);

/* EV_HIKE .. EV_INTERVENTION to 0..3, -1 otherwise. */
int eval_action_index(enum ev_kind k);

#endif
