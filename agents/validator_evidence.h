/* The validator's independent evidence on a claimed central-bank act
 * (bank, action, day, pair), gathered from what the researcher's reading
 * of its cited stories did not give (pure, no I/O: the validator fetches
 * the stories and prices through the data tools and hands them here).
 *
 * - Reports: every story of the archive around the act (cited or not)
 *   that reports the act as done on that day (agents/events.h), grouped by
 *   dateline city and publication day. Stories from one city on one day
 *   are one report (a desk's updates); each further city or day is an
 *   independent report. Stories that deny the act on that day are
 *   contrary reports.
 * - Price: the day's close of the pair against the previous trading day's
 *   close. A hike should firm the bank's currency, a cut weaken it, an
 *   intervention firm the currency it bought (or weaken the one it sold);
 *   a hold predicts no move. The move is "consistent" (more than
 *   VEV_FLAT_PCT the expected way), "flat", "damped" (an intervention
 *   against a move that went on, but by less than the day before: leaning
 *   against the wind) or "against".
 * - Plausibility: a hike after the bank's cut reported as done in the
 *   previous VEV_PLAUSIBLE_DAYS days (or a cut after a hike) with no
 *   second report of the reversal is implausible.
 *
 * The claim's cited stories count as reports whatever their publication
 * day; other stories when published from the day before the act to the
 * day after next.
 *
 * Verdict: the price corroborates but never refutes (central banks buy a
 * currency because it is falling; an expected cut can see the currency
 * firm): disputed when, with fewer than two independent reports, a story
 * denies the act or the act is implausible, severity high when it is
 * implausible or the denials (grouped by city and day, as reports)
 * outnumber the reports, medium when they balance; confirmed with at least two independent reports, whatever
 * the price; unverified otherwise. The reason names every piece of
 * evidence and the story ids. */
#ifndef MADF_VALIDATOR_EVIDENCE_H
#define MADF_VALIDATOR_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/events.h"

#define VEV_FLAT_PCT 0.10
#define VEV_PLAUSIBLE_DAYS 7
#define VEV_MAX_GROUPS 12

struct vev_story {
	const char *id, *title, *body;
	const char *dateline;  /* "TOKYO, March 24 -", or NULL (read from the body) */
	int32_t pub_day;       /* days since 1970-01-01 (UTC) */
	const struct ev_story *ev; /* its acts if already read, or NULL */
	int32_t local_day;     /* the day its "today" means (events_local_day), 0: pub_day */
};

struct vev_point {
	int32_t day;
	double close;
};

struct vev_claim {
	const char *bank;      /* "BOJ" */
	enum ev_kind kind;     /* EV_HIKE .. EV_INTERVENTION */
	int32_t day;
	const char *pair;      /* "USD/JPY" */
	const char *const *cited; /* the researcher's story ids */
	size_t ncited;
};

enum vev_verdict { VEV_CONFIRMED, VEV_DISPUTED, VEV_UNVERIFIED };
enum vev_price { VEV_PRICE_NA, VEV_PRICE_CONSISTENT, VEV_PRICE_FLAT, VEV_PRICE_DAMPED,
		 VEV_PRICE_AGAINST };

struct vev_group {
	char city[24];
	int32_t pub_day;       /* the local day its desk wrote (a Tokyo story sent the UTC
				* evening before is the next Tokyo day's) */
	char ids[400];        /* "reuters-21578-8591, ..." */
	unsigned n, uncited;
};

struct vev_result {
	enum vev_verdict verdict;
	struct vev_group groups[VEV_MAX_GROUPS]; /* independent reports */
	size_t ngroups;
	char denials[400];    /* ids of stories denying the act */
	unsigned ndenials;
	unsigned denial_groups; /* the denials by city and day, as reports */
	enum vev_price price;
	char firmer[4];       /* the currency the act should firm ("" if none) */
	char weaker[4];
	int32_t d0, d1;       /* the closes compared */
	double c0, c1, pct, prev_pct;
	char implausible[200]; /* the earlier opposite act, "" if none */
	const char *severity;  /* a dispute's: "high" or "medium"; "" otherwise */
};

/* Judges the claim from the stories around the act (those of the act's
 * day and the day after, and for a hike or cut those of the
 * VEV_PLAUSIBLE_DAYS before) and the pair's closes (ascending, ending
 * on or after the act's day). Caller owns everything. */
void vev_judge(const struct vev_claim *c, const struct vev_story *st, size_t n,
	       const struct vev_point *pts, size_t npts, struct vev_result *out);

/* The closes of pair from ten days before day on (ascending), into *out
 * (caller frees; NULL when none); how many. ctx is the caller's. */
typedef size_t (*vev_prices_fn)(void *ctx, const char *pair, int32_t day,
				struct vev_point **out);

/* The validator's check of one claim, as the validator agent runs it and
 * `madf bench news` measures it: vev_judge on the claim's pair with the
 * prices fetched through prices(ctx, ...), then, when the reports say the
 * bank bought or sold dollars against a currency the pair lacks (dollars
 * bought for yen, reported under USD/CHF), again on that currency's dollar
 * pair; c->pair then points to own (the pair judged). */
void vev_check(struct vev_claim *c, const struct vev_story *st, size_t n, vev_prices_fn prices,
	       void *ctx, char own[8], struct vev_result *out);

/* The reason a verdict was given, naming the evidence used. Caller frees. */
char *vev_reason(const struct vev_claim *c, const struct vev_result *r);

/* Reads "bought dollars against yen", "selling sterling", "to support the
 * dollar" in text: the currency bought (firmer) and the one sold (weaker),
 * "" when not said. Returns true when one was found. */
bool vev_direction(const char *text, char firmer[4], char weaker[4]);

const char *vev_verdict_name(enum vev_verdict v);  /* "confirmed" */
const char *vev_price_name(enum vev_price p);      /* "consistent" */

#endif
