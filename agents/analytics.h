/* The research agents' analytics: the weekly window and ISO weeks, per-pair
 * statistics over a window, and news analytics (central-bank / policy
 * event classification and currency sentiment). Pure functions: no I/O,
 * no allocation visible to the caller. */
#ifndef MADF_ANALYTICS_H
#define MADF_ANALYTICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/market.h"
#include "agents/news.h"

/* The weekly window (seed 003, "Monday - 8 days to now"): the 8 calendar
 * days end-7 .. end inclusive, where end is the UTC date holding as_of_ns.
 * Run on Friday 1987-03-27 it is 1987-03-20 .. 1987-03-27, so it holds the
 * previous Friday's close (the week's starting level) and the five
 * trading days after it; run on a Monday it is the Monday a week before
 * up to that Monday. */
#define ANALYTICS_WINDOW_DAYS 8
void analytics_window(int64_t as_of_ns, int32_t *start_day, int32_t *end_day);

/* ISO 8601 week of a day: weeks start on Monday and week 1 holds the
 * year's first Thursday, so 2021-01-01 is 2020-W53 and 2024-12-30 is
 * 2025-W01. The report for a window is named after its end day
 * ("1987-W13"). */
void analytics_iso_week(int32_t day, int *iso_year, int *iso_week);
/* Writes "YYYY-Www" for the day (size >= 9). */
void analytics_iso_week_format(int32_t day, char *buf, size_t size);

/* Per-pair statistics over [window_start, window_end] (days, inclusive).
 *
 * - start/end: the first and last quote inside the window; change_pct =
 *   (end / start - 1) * 100; log_move = ln(end / start).
 * - high/low: the highest and lowest close inside the window, with days.
 * - returns: the daily log returns between consecutive quotes inside the
 *   window (nobs - 1 of them). vol_pct = sample standard deviation
 *   (n - 1) of the returns * sqrt(252) * 100; needs 2 returns, else NaN
 *   with vol_ok false.
 * - max_move: the largest absolute daily move inside the window, in
 *   percent (close / previous close - 1) * 100, signed, dated by the day
 *   it ended on; NaN and max_move_ok false with fewer than 2 quotes.
 * - zscore: (log_move - mean) / sd over the non-overlapping windows of
 *   the same length L = window_end - window_start days stepping back from
 *   window_start through the previous ANALYTICS_Z_LOOKBACK_DAYS (13
 *   windows of 7 days: [start - 7k, start - 7(k-1)], k = 1..13, adjacent
 *   windows sharing their boundary day as the main window shares its start
 *   with the last of them), each window's move measured the same way
 *   (first to last quote inside it; windows with fewer than 2 quotes are
 *   left out). Sample sd (n - 1). Needs ANALYTICS_Z_MIN_SAMPLES moves and
 *   sd > 0, else NaN with z_ok false.
 * - trend: the mean of the last 5 closes (ma_short) against the mean of
 *   the last 20 (ma_long), both taken at window_end (quotes on or before
 *   it, which may start before the window); "up" when ma_short > ma_long *
 *   (1 + ANALYTICS_TREND_FLAT), "down" when below ma_long * (1 -
 *   ANALYTICS_TREND_FLAT), else "flat"; FX_TREND_NONE (NaN MAs) with
 *   fewer than 20 closes.
 * - freshness_days: window_end - the day of the last quote on or before
 *   window_end (0 when the window ends on a quote; -1 with no quote at
 *   all).
 */
#define ANALYTICS_Z_LOOKBACK_DAYS 91
/* The days before a window whose closes its figures need (the z-score's
 * lookback, the 20-day average), with room: the researcher and the
 * validator ask the data for the same range, so one answers from the
 * other's cache (a live source is asked once). */
#define ANALYTICS_HISTORY_DAYS 140
#define ANALYTICS_Z_MIN_SAMPLES 5
#define ANALYTICS_MA_SHORT 5
#define ANALYTICS_MA_LONG 20
#define ANALYTICS_TREND_FLAT 0.001

enum fx_trend { FX_TREND_NONE, FX_TREND_UP, FX_TREND_DOWN, FX_TREND_FLAT };

struct fx_stats {
	char pair[MARKET_PAIR_MAX];
	bool simulated;
	int32_t window_start, window_end;
	size_t nobs;                 /* quotes inside the window */
	int32_t start_day, end_day;
	double start_close, end_close;
	double change_pct, log_move;
	double high, low;
	int32_t high_day, low_day;
	size_t nreturns;
	double vol_pct;
	bool vol_ok;
	double max_move_pct;
	int32_t max_move_day;
	bool max_move_ok;
	double zscore, z_mean, z_sd;
	size_t z_samples;
	bool z_ok;
	enum fx_trend trend;
	double ma_short, ma_long;
	int32_t last_day;            /* last quote on or before window_end */
	int32_t freshness_days;
};

/* Fills *out for series s over the window. Returns 0; or -1 with *err when
 * start > end or the window holds no quote (then *out still says so:
 * nobs 0, NaN figures, last_day and freshness_days set from any earlier
 * quote). */
int analytics_fx_stats(const struct fx_series *s, int32_t window_start,
		       int32_t window_end, struct fx_stats *out, char **err);

const char *analytics_trend_name(enum fx_trend t); /* "up", "down", ... */

/* Central-bank and policy events in a story.
 *
 * Keyword rules on the title and the body: words are matched whole
 * (letters and digits, with inner '.', '\'' and '&'; a hyphen separates
 * words, so "G-7" is "G 7" and "RATE-SUMITA" holds "RATE"), without
 * regard to case except for acronyms (BOJ, ECB, SNB, Fed, MOF, ...),
 * which must be written so; a possessive matches its word ("Fed's"). A
 * rule is a phrase, or two phrases the second following the first within
 * a few words in the same sentence ("cut ... rate", "left ...
 * unchanged"). "Treasury" followed by bill(s), bond(s), note(s),
 * securities, ... is not the Treasury.
 *
 * Bank: the central bank named first in the title; else "policy" when the
 * title names the Treasury, finance ministers or ministry, the
 * G-5/G-6/G-7 or the Plaza, Louvre or Paris accords; else, the title
 * naming neither, the central bank named most often in the body (ties:
 * the earliest), else "policy" when the body names a policy body.
 *
 * Action, when a bank or policy body is named: the actions whose rules
 * match the title, else those matching the body, taken in the order
 * intervention > cut > hike > hold; "statement" when none match. A match
 * with not/no/never/denied/without/... in the 3 words before it does not
 * count ("does not intend to cut"). Intervention rules are skipped for a
 * story about money-market operations (money market, securities market,
 * reserves, repurchases, liquidity, tenders) that names no currency and
 * says nothing of currencies, forex, foreign exchange or exchange rates:
 * the Fed "intervening in the securities market to add reserves".
 *   intervention: interven*, bought/buying/sold/... dollars/yen/...,
 *                 dollar buying, dollar selling, yen purchases, ...
 *   cut:  cut/lowered/reduced/trimmed ... rate, rate cut, eased ... policy
 *   hike: raised/increased/hiked/lifted ... rate, rate hike/rise,
 *         tightened ... policy
 *   hold: left/kept/held/maintained ... unchanged/steady, rate unchanged,
 *         no change ... rate
 * evidence lists the matched text as written (bank first, then up to
 * ANALYTICS_EVIDENCE_MAX - 1 action matches). */
#define ANALYTICS_EVIDENCE_MAX 8
#define ANALYTICS_EVIDENCE_LEN 64
#define ANALYTICS_BANKS_MAX 24

enum cb_action {
	CB_ACTION_NONE,
	CB_ACTION_HIKE,
	CB_ACTION_CUT,
	CB_ACTION_HOLD,
	CB_ACTION_INTERVENTION,
	CB_ACTION_STATEMENT,
};

struct cb_event {
	const char *bank;        /* "BOJ", "Fed", ... or "policy"; NULL: none */
	const char *bank_name;   /* "Bank of Japan", ... (static strings) */
	enum cb_action action;
	bool action_in_title;
	const char *banks[ANALYTICS_BANKS_MAX]; /* every one named, by code */
	size_t nbanks;
	char evidence[ANALYTICS_EVIDENCE_MAX][ANALYTICS_EVIDENCE_LEN];
	size_t nevidence;
};

/* Classifies title + body (either may be NULL). Returns true when a
 * central bank or policy body is named (ev->bank set, action at least
 * statement); false otherwise, with ev->action still telling any action
 * words found. */
bool analytics_classify_text(const char *title, const char *body,
			     struct cb_event *ev);
bool analytics_news_classify(const struct news_item *it, struct cb_event *ev);

const char *analytics_action_name(enum cb_action a); /* "intervention" */

/* Currency sentiment.
 *
 * Method: the text is split into words and sentences. A currency is named
 * by its word, with the word before it telling which one when needed:
 * "dollar" is USD unless after Australian/Aussie (AUD), Zealand (NZD),
 * Canadian (CAD), Hong Kong (HKD), Singapore (SGD) or Taiwan (TWD); "yen"
 * JPY; "mark(s)" DEM after "the", "German" or "Deutsche", "deutschemark"
 * DEM; "sterling", "pound" GBP; "euro" EUR; "Swiss franc" CHF, "French
 * franc" FRF; "yuan", "renminbi" CNY; "Korean won" KRW; "rupee" INR; "baht"
 * THB; "ringgit" MYR; "krona" SEK; "Norwegian/Danish krone" NOK/DKK; "kiwi"
 * NZD; "aussie" AUD. A name right after a number or mln/bln/billion is an
 * amount, not the currency, and is skipped ("dlrs", always an amount on
 * the wire, is never a currency name).
 * Each movement word counts once: up words (firmer, rose, strengthened,
 * gained, climbed, rallied, recovered, higher, ... and "upward pressure")
 * are +1, down words (fell, weaker, slid, slipped, dropped, declined,
 * eased, lower, plunged, pressure, ...) are -1, for the currency named
 * by the next word ("a firmer dollar"), else the nearest one named within
 * 4 words before it in the same sentence ("the yen's sharp rise"), else
 * one named 2 or 3 words after it ("stronger U.S. dollar", "upward
 * pressure on the yen"). When "against",
 * "versus" or "vs" follows the movement word within 5 words and names a
 * currency within 3 words after it, that currency gets the opposite count
 * ("the dollar fell against the yen": USD -1, JPY +1).
 * score = (pos - neg) / (pos + neg), in -1..1, 0 with no counts. */
#define ANALYTICS_NCCY 21

struct ccy_sentiment {
	char ccy[4];
	unsigned pos, neg;
	unsigned stories;   /* texts (or stories) that counted for it */
	double score;
};

struct fx_sentiment {
	struct ccy_sentiment c[ANALYTICS_NCCY]; /* USD, JPY, EUR, DEM, GBP,
						   AUD, NZD, CHF, CAD, CNY,
						   HKD, SGD, KRW, INR, THB,
						   MYR, TWD, FRF, SEK, NOK,
						   DKK */
	size_t ntexts;      /* texts and stories added */
};

void analytics_sentiment_init(struct fx_sentiment *s);
/* Adds the counts of one text (NULL is ignored) and updates the scores. */
void analytics_sentiment_add(struct fx_sentiment *s, const char *text);
/* Title and body of one story (either may be NULL): each currency they
 * discuss counts the story once in its "stories". */
void analytics_sentiment_add_story(struct fx_sentiment *s, const char *title,
				   const char *body);
/* The same for a news item. */
void analytics_sentiment_add_item(struct fx_sentiment *s,
				  const struct news_item *it);
/* The entry for a code ("JPY"), NULL for a currency not tracked. */
const struct ccy_sentiment *analytics_sentiment_get(const struct fx_sentiment *s,
						    const char *ccy);

#endif
