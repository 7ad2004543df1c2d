/* madf bench news: the validator's verdicts (agents/validator_evidence.h,
 * vev_check: the check the validator agent runs) on the central-bank acts
 * the extractor reports as done in the labelled stories, against the
 * labels. */
#ifndef MADF_BENCH_NEWS_VEV_H
#define MADF_BENCH_NEWS_VEV_H

#include <stddef.h>

#include "agents/events_eval.h"
#include "agents/news.h"

/* Verdict counts (indexed by enum vev_verdict) of the acts of one split:
 * right ones (a labelled fact of the split, bank and action equal, the
 * day one off at most: the bench's "by event" measure) and wrong ones (no
 * labelled fact at all). Acts matching only background facts are counted
 * in background and judged on neither side. */
struct bnv_table {
	unsigned right[3], wrong[3];
	unsigned background;
};

/* Judges every distinct (bank, action, day) act the event extractor
 * reports as done in the labelled stories of splits[0..nsplits), citing
 * the split's stories that report it, as the weekly workflow's validator
 * would: the archive's stories around the act (arch, sorted by time) and
 * the FRED closes of market_path, on the first of the workflow's pairs
 * the act concerns (else its bank's currency against the dollar). Fills
 * out[i] for splits[i]. When list is a split's name, prints each of its
 * acts with its verdict and reason. Returns 0, or -1 with *err (the
 * market file unreadable or malformed); caller frees *err. */
int bench_news_vev_run(const struct eval_set *set, const struct news_list *arch,
		       const char *market_path, const char *const *splits, size_t nsplits,
		       const char *list, struct bnv_table *out, char **err);

#endif
