/* FX time series: loading daily closes from CSV files (the wide FRED H.10
 * layout or a long date,pair,close layout), a deterministic simulated
 * market, and the calendar-day helpers the agents share.
 *
 * Pairs are written "BASE/QUOTE" with ISO 4217 codes ("USD/JPY",
 * "EUR/USD"); a close is the number of QUOTE units for one BASE unit.
 * Days are counted from 1970-01-01 (day 0), proleptic Gregorian, UTC. */
#ifndef MADF_MARKET_H
#define MADF_MARKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MARKET_PAIR_MAX 16      /* "USD/JPY" plus room; always terminated */
#define MARKET_SOURCE_MAX 128
#define MARKET_LINE_MAX 65536   /* longest CSV line accepted, in bytes */
#define MARKET_FILE_MAX ((size_t)64 << 20)
#define MARKET_RATE_MIN 1e-9            /* closes outside are refused */
#define MARKET_RATE_MAX 1e9

/* One pair's daily closes. days is strictly ascending; close[i] > 0 is the
 * close on days[i]; days without a quote are absent (never 0). The arrays
 * belong to the series: market_series_release frees them. */
struct fx_series {
	char pair[MARKET_PAIR_MAX];
	size_t n;
	int32_t *days;
	double *close;
	bool simulated;
	/* Where the numbers come from: "fred-daily-1971-2017.csv:Japan",
	 * "fred-daily-1971-2017.csv:Japan/Euro" (a cross), "prices.csv:USD/JPY",
	 * or "simulated". */
	char source[MARKET_SOURCE_MAX];
};

/* Loads pairs[0..npairs) from the CSV file at path into out[0..npairs)
 * (caller-provided array, same order). The layout is detected from the
 * header line:
 *   long: exactly the columns date,pair,close (any case), one quote a row,
 *         e.g. 1987-03-20,USD/JPY,151.70;
 *   wide: a first column "Data" or "Date", then one column per country
 *         holding units of that currency per US dollar (FRED H.10, e.g.
 *         "Japan", "Euro", "United Kingdom").
 * Dates are YYYY-MM-DD. An empty cell (or FRED's ".") is no quote that day.
 * Rows may come in any order; two quotes for one pair on one day are an
 * error.
 *
 * A requested pair is built from what the file has: in the long layout the
 * pair itself, else its inverse, else two USD legs (USD/X or X/USD); in the
 * wide layout USD/X is column X as is, X/USD is 1 / column X, and a cross
 * X/Y is column Y / column X, on the days both legs have a quote. A pair
 * whose data is simply absent (a column that is empty before 1999, a pair
 * the long file lacks) loads with n == 0; a pair naming an unknown currency
 * (wide layout) or a malformed pair name is an error.
 *
 * Malformed input (missing or unknown header, bad date, non-numeric or
 * non-positive value or one outside MARKET_RATE_MIN..MAX, wrong number of
 * fields, a line over MARKET_LINE_MAX,
 * a NUL byte, a file over MARKET_FILE_MAX) fails with *err naming the file,
 * the line and the reason. Returns 0, or -1 with *err (caller frees) and
 * every out[i] empty. On success the caller releases each out[i]. */
int market_load_csv(const char *path, const char *const *pairs, size_t npairs,
		    struct fx_series *out, char **err);

/* The same on a buffer (not modified); name stands for the file in
 * messages and sources. */
int market_parse_csv(const char *data, size_t len, const char *name,
		     const char *const *pairs, size_t npairs,
		     struct fx_series *out, char **err);

/* A deterministic simulated market: for each currency a geometric random
 * walk in its market convention (EUR/USD, USD/JPY, ...) from a realistic
 * level with a realistic annualised volatility, one close per weekday in
 * [start_day, end_day]. The same seed, days and currency always give the
 * same path, whatever other pairs are asked for; crosses are computed from
 * the simulated legs, so EUR/JPY == EUR/USD * USD/JPY. Each out[i] has
 * simulated = true and source "simulated". Unknown currencies and
 * start_day > end_day are errors. Returns 0 or -1 with *err; on success the
 * caller releases each out[i]. */
int market_sim(const char *const *pairs, size_t npairs, int32_t start_day,
	       int32_t end_day, uint64_t seed, struct fx_series *out,
	       char **err);

/* Frees a series' arrays and empties it (pair and source are kept). */
void market_series_release(struct fx_series *s);
/* Releases s[0..n). */
void market_series_release_all(struct fx_series *s, size_t n);

/* Index of the first quote on or after day (s->n when there is none). */
size_t market_series_lower_bound(const struct fx_series *s, int32_t day);

/* 0 when s has a quote in [start, end]; else -1 with *err "no data for
 * PAIR in SOURCE between START and END" (SOURCE: the file the series came
 * from, or "simulated"): a permanent error, the data cannot price the pair
 * over those days (FRED's euro-legacy columns are empty before 1999). */
int market_window_check(const struct fx_series *s, int32_t start, int32_t end, char **err);

/* Checks "ABC/XYZ" (upper-case letters, two different codes) and copies the
 * codes into base and quote. Returns 0 or -1 with *err. */
int market_pair_parse(const char *pair, char base[4], char quote[4],
		      char **err);

/* True when the currency code is one the wide layout and the simulated
 * market know (USD, JPY, EUR, GBP, AUD, NZD, CHF, CAD, CNY, HKD, SGD, KRW,
 * INR, THB, MYR, TWD, SEK, NOK, DKK, and the other FRED columns). */
bool market_currency_known(const char *code);

/* Calendar days. */
/* Day number of a (valid) date; no range check. */
int32_t market_day_from_ymd(int y, int m, int d);
void market_day_to_ymd(int32_t day, int *y, int *m, int *d);
/* True for a real date with 1 <= y <= 9999. */
bool market_ymd_valid(int y, int m, int d);
/* Parses exactly "YYYY-MM-DD" (len bytes, no NUL needed). Returns 0, or -1
 * for anything else, including 1987-02-29. */
int market_day_parse(const char *s, size_t len, int32_t *day);
/* Writes "YYYY-MM-DD" into buf (size >= 11 for the whole date). */
void market_day_format(int32_t day, char *buf, size_t size);
/* ISO weekday: 1 Monday .. 7 Sunday. */
int market_weekday(int32_t day);
/* floor(t_ns / one day): the UTC day holding the instant t_ns. */
int32_t market_day_from_ns(int64_t t_ns);

#endif
