/* Analytics: the weekly window and ISO weeks, per-pair statistics against
 * hand-computed values on small series and against the FRED file for the
 * week ending 1987-03-27, central-bank event classification and currency
 * sentiment on written examples and on real Reuters stories of that week
 * (../shared/data/...). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "core/util.h"

#include "core/banned.h"

#define FRED "../shared/data/fx/fred-daily-1971-2017.csv"
#define JSONL "../shared/data/news/reuters21578.jsonl"
#define NS_DAY INT64_C(86400000000000)
#define NS_HOUR INT64_C(3600000000000)

static int32_t D(int y, int m, int d)
{
	return market_day_from_ymd(y, m, d);
}

static int64_t at(int y, int m, int d, int hour)
{
	return (int64_t)D(y, m, d) * NS_DAY + hour * NS_HOUR;
}

/* A series over caller-owned arrays (nothing to release). */
static struct fx_series series(const char *pair, int32_t *days, double *close,
			       size_t n)
{
	struct fx_series s;
	memset(&s, 0, sizeof(s));
	util_strlcpy(s.pair, pair, sizeof(s.pair));
	s.days = days;
	s.close = close;
	s.n = n;
	util_strlcpy(s.source, "test", sizeof(s.source));
	return s;
}

static void test_window(void **state)
{
	(void)state;
	int32_t a, b;
	/* Friday 1987-03-27 15:00 UTC: 03-20 .. 03-27, 8 days, holding the
	 * Friday 03-20 close and the five trading days after it. */
	analytics_window(at(1987, 3, 27, 15), &a, &b);
	assert_int_equal(a, D(1987, 3, 20));
	assert_int_equal(b, D(1987, 3, 27));
	assert_int_equal(b - a + 1, ANALYTICS_WINDOW_DAYS);
	/* Midnight belongs to the day it starts. */
	analytics_window(at(1987, 3, 27, 0), &a, &b);
	assert_int_equal(b, D(1987, 3, 27));
	analytics_window(at(1987, 3, 27, 0) - 1, &a, &b);
	assert_int_equal(b, D(1987, 3, 26));
	assert_int_equal(a, D(1987, 3, 19));
	/* Run on Monday 1987-03-30: Monday 03-23 .. Monday 03-30. */
	analytics_window(at(1987, 3, 30, 9), &a, &b);
	assert_int_equal(a, D(1987, 3, 23));
	assert_int_equal(b, D(1987, 3, 30));
	/* Across a year end and a leap day. */
	analytics_window(at(2021, 1, 3, 12), &a, &b);
	assert_int_equal(a, D(2020, 12, 27));
	assert_int_equal(b, D(2021, 1, 3));
	analytics_window(at(2024, 3, 3, 12), &a, &b);
	assert_int_equal(a, D(2024, 2, 25));
	/* Before 1970 (negative times floor to the earlier day). */
	analytics_window(-NS_HOUR, &a, &b);
	assert_int_equal(b, -1);
	assert_int_equal(a, -8);
}

static void test_iso_week(void **state)
{
	(void)state;
	/* Checked with Python's date.isocalendar(). */
	static const struct {
		int y, m, d, iy, iw;
	} cases[] = {
		{ 1987, 3, 27, 1987, 13 },  { 1987, 1, 1, 1987, 1 },
		{ 1986, 12, 29, 1987, 1 },  { 2021, 1, 1, 2020, 53 },
		{ 2020, 12, 31, 2020, 53 }, { 2021, 1, 3, 2020, 53 },
		{ 2021, 1, 4, 2021, 1 },    { 2024, 12, 30, 2025, 1 },
		{ 2026, 12, 31, 2026, 53 }, { 2027, 1, 3, 2026, 53 },
		{ 2004, 12, 31, 2004, 53 }, { 2005, 1, 2, 2004, 53 },
		{ 2008, 12, 29, 2009, 1 },  { 2010, 1, 3, 2009, 53 },
		{ 1970, 1, 1, 1970, 1 },    { 1969, 12, 29, 1970, 1 },
		{ 2000, 1, 1, 1999, 52 },   { 2015, 12, 31, 2015, 53 },
		{ 2016, 1, 3, 2015, 53 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int y, w;
		analytics_iso_week(D(cases[i].y, cases[i].m, cases[i].d), &y, &w);
		if (y != cases[i].iy || w != cases[i].iw)
			fail_msg("%04d-%02d-%02d: %d-W%02d, expected %d-W%02d",
				 cases[i].y, cases[i].m, cases[i].d, y, w,
				 cases[i].iy, cases[i].iw);
	}
	char buf[16];
	analytics_iso_week_format(D(1987, 3, 27), buf, sizeof(buf));
	assert_string_equal(buf, "1987-W13");
	analytics_iso_week_format(D(2021, 1, 1), buf, sizeof(buf));
	assert_string_equal(buf, "2020-W53");
}

/* Six quotes in the window [10, 17] (days 15 and 16 a weekend), one before
 * and one after it. Closes are 100 * exp(L) with L = 0, .02, .01, .04, .04,
 * .05 so the daily log returns are r = .02, -.01, .03, 0, .01:
 *   change   = (exp(.05) - 1) * 100 = 5.127109637602...%
 *   high     = 100 exp(.05) = 105.127... on day 17, low = 100 on day 10
 *   mean r   = .05 / 5 = .01; deviations .01 -.02 .02 -.01 0
 *   ss       = 1e-4 + 4e-4 + 4e-4 + 1e-4 + 0 = 1e-3; var = 1e-3 / 4
 *   vol      = sqrt(2.5e-4 * 252) * 100 = sqrt(.063) * 100 = 25.0998008%
 *   max move = exp(.03) - 1 = 3.0454534% on day 13 */
static void test_stats_hand(void **state)
{
	(void)state;
	int32_t days[] = { 9, 10, 11, 12, 13, 14, 17, 20 };
	double lp[] = { -0.1, 0, 0.02, 0.01, 0.04, 0.04, 0.05, 0.5 };
	double close[ARRAY_SIZE(days)];
	for (size_t i = 0; i < ARRAY_SIZE(days); i++)
		close[i] = 100 * exp(lp[i]);
	struct fx_series s = series("USD/JPY", days, close, ARRAY_SIZE(days));
	struct fx_stats st;
	char *err = NULL;
	assert_int_equal(analytics_fx_stats(&s, 10, 17, &st, &err), 0);
	assert_string_equal(st.pair, "USD/JPY");
	assert_int_equal(st.window_start, 10);
	assert_int_equal(st.window_end, 17);
	assert_int_equal(st.nobs, 6);
	assert_int_equal(st.start_day, 10);
	assert_float_equal(st.start_close, 100, 1e-12);
	assert_int_equal(st.end_day, 17);
	assert_float_equal(st.end_close, 100 * exp(0.05), 1e-12);
	assert_float_equal(st.change_pct, 5.127109637602, 1e-9);
	assert_float_equal(st.log_move, 0.05, 1e-12);
	assert_float_equal(st.high, 105.12710963760241, 1e-9);
	assert_int_equal(st.high_day, 17);
	assert_float_equal(st.low, 100, 1e-12);
	assert_int_equal(st.low_day, 10);
	assert_int_equal(st.nreturns, 5);
	assert_true(st.vol_ok);
	assert_float_equal(st.vol_pct, 25.0998007960223, 1e-9);
	assert_true(st.max_move_ok);
	assert_float_equal(st.max_move_pct, 3.0454533953517, 1e-9);
	assert_int_equal(st.max_move_day, 13);
	assert_int_equal(st.freshness_days, 0);
	assert_int_equal(st.last_day, 17);
	/* Only [3, 10] of the 13 earlier 7-day windows has 2 quotes: one
	 * sample, too few for a z-score. 7 closes up to day 17: no trend. */
	assert_int_equal(st.z_samples, 1);
	assert_false(st.z_ok);
	assert_true(isnan(st.zscore));
	assert_int_equal(st.trend, FX_TREND_NONE);
	assert_true(isnan(st.ma_short));
	assert_string_equal(analytics_trend_name(st.trend), "n/a");

	/* Window [10, 19]: the last quote (day 17) is 2 days old. */
	assert_int_equal(analytics_fx_stats(&s, 10, 19, &st, &err), 0);
	assert_int_equal(st.end_day, 17);
	assert_int_equal(st.freshness_days, 2);

	/* One quote: no return, no vol, no move; change 0. */
	assert_int_equal(analytics_fx_stats(&s, 20, 20, &st, &err), 0);
	assert_int_equal(st.nobs, 1);
	assert_int_equal(st.nreturns, 0);
	assert_false(st.vol_ok);
	assert_true(isnan(st.vol_pct));
	assert_false(st.max_move_ok);
	assert_float_equal(st.change_pct, 0, 1e-12);

	/* An empty window: an error naming the pair and the last quote, the
	 * freshness still told. */
	assert_int_equal(analytics_fx_stats(&s, 18, 19, &st, &err), -1);
	assert_non_null(strstr(err, "no USD/JPY quote"));
	assert_non_null(strstr(err, "last quote: 1970-01-18"));
	free(err);
	err = NULL;
	assert_int_equal(st.nobs, 0);
	assert_true(isnan(st.start_close));
	assert_int_equal(st.last_day, 17);
	assert_int_equal(st.freshness_days, 2);
	assert_int_equal(analytics_fx_stats(&s, 21, 30, &st, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(st.freshness_days, 10);
	assert_int_equal(analytics_fx_stats(&s, 0, 5, &st, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(st.freshness_days, -1);
	assert_int_equal(st.last_day, INT32_MIN);
	/* A reversed window. */
	assert_int_equal(analytics_fx_stats(&s, 17, 10, &st, &err), -1);
	free(err);
}

/* z-score: window [100, 107] (L = 7) with quotes only on the 7-day
 * boundaries 100 - 7k, k = 0..13, and on 107. The 13 earlier windows
 * [100 - 7k, 107 - 7k] move m_k = +.01 for k = 1, 3, .., 11, -.01 for
 * k = 2, 4, .., 12 and 0 for k = 13:
 *   mean = (6 * .01 - 6 * .01 + 0) / 13 = 0
 *   sd   = sqrt(12 * 1e-4 / 12) = .01
 * The window moves +.03, so z = (.03 - 0) / .01 = 3. */
static void test_stats_zscore(void **state)
{
	(void)state;
	int32_t days[15];
	double close[15];
	double lp = log(100);
	/* Fill backwards from day 100 (index 13). */
	days[14] = 107;
	close[14] = exp(lp + 0.03);
	for (int k = 0; k <= 13; k++) {
		days[13 - k] = 100 - 7 * k;
		close[13 - k] = exp(lp);
		double m = k + 1 == 13 ? 0 : ((k + 1) % 2 ? 0.01 : -0.01);
		lp -= m;
	}
	struct fx_series s = series("EUR/USD", days, close, 15);
	struct fx_stats st;
	char *err = NULL;
	assert_int_equal(analytics_fx_stats(&s, 100, 107, &st, &err), 0);
	assert_int_equal(st.nobs, 2);
	assert_int_equal(st.z_samples, 13);
	assert_true(st.z_ok);
	assert_float_equal(st.z_mean, 0, 1e-12);
	assert_float_equal(st.z_sd, 0.01, 1e-12);
	assert_float_equal(st.zscore, 3.0, 1e-9);
	/* One return: vol needs two. */
	assert_int_equal(st.nreturns, 1);
	assert_false(st.vol_ok);
	assert_true(isnan(st.vol_pct));
	assert_true(st.max_move_ok);
	assert_float_equal(st.max_move_pct, 3.0454533953517, 1e-9);

	/* Three weeks of history only: 3 samples, under the 5 needed. */
	struct fx_series shortened = series("EUR/USD", days + 10, close + 10, 5);
	assert_int_equal(analytics_fx_stats(&shortened, 100, 107, &st, &err), 0);
	assert_int_equal(st.z_samples, 3);
	assert_false(st.z_ok);
}

/* Trend: closes 1..20 on days 1..20: MA5 = (16+17+18+19+20)/5 = 18,
 * MA20 = 210/20 = 10.5, up; reversed: MA5 = 3, MA20 = 10.5, down; flat
 * 100s ending 100.05: MA5 = 100.01, MA20 = 100.0025, within 0.1%. */
static void test_stats_trend(void **state)
{
	(void)state;
	int32_t days[20];
	double up[20], down[20], flat[20];
	for (int i = 0; i < 20; i++) {
		days[i] = i + 1;
		up[i] = i + 1;
		down[i] = 20 - i;
		flat[i] = 100;
	}
	flat[19] = 100.05;
	struct fx_stats st;
	char *err = NULL;
	struct fx_series s = series("AUD/USD", days, up, 20);
	assert_int_equal(analytics_fx_stats(&s, 14, 20, &st, &err), 0);
	assert_int_equal(st.trend, FX_TREND_UP);
	assert_string_equal(analytics_trend_name(st.trend), "up");
	assert_float_equal(st.ma_short, 18, 1e-12);
	assert_float_equal(st.ma_long, 10.5, 1e-12);
	s = series("AUD/USD", days, down, 20);
	assert_int_equal(analytics_fx_stats(&s, 14, 20, &st, &err), 0);
	assert_int_equal(st.trend, FX_TREND_DOWN);
	assert_float_equal(st.ma_short, 3, 1e-12);
	/* The MAs are taken at the window end, from quotes before the
	 * window too: a window of one day still has them. */
	s = series("AUD/USD", days, flat, 20);
	assert_int_equal(analytics_fx_stats(&s, 20, 20, &st, &err), 0);
	assert_int_equal(st.trend, FX_TREND_FLAT);
	assert_float_equal(st.ma_short, 100.01, 1e-9);
	assert_float_equal(st.ma_long, 100.0025, 1e-9);
	/* Window ending on day 19: 19 closes, no trend. */
	s = series("AUD/USD", days, up, 20);
	assert_int_equal(analytics_fx_stats(&s, 14, 19, &st, &err), 0);
	assert_int_equal(st.trend, FX_TREND_NONE);
}

/* The week ending Friday 1987-03-27 in the FRED file. USD/JPY rows:
 *   03-20 151.70  03-23 150.25  03-24 149.32  03-25 149.15  03-26 149.20
 *   03-27 147.72
 *   change = (147.72 / 151.70 - 1) * 100 = -3.98 / 151.70 * 100
 *          = -2.6236%
 *   MA5 = (150.25 + 149.32 + 149.15 + 149.20 + 147.72) / 5 = 149.128
 *   largest move: 147.72 / 149.20 - 1 = -0.9920% on 03-27
 * vol, z and MA20 were checked against an independent Python computation
 * of the same definitions (7.5391%, -2.2703 over 13 weeks, 151.9725).
 * GBP/USD = 1 / United Kingdom: 03-20 1/0.6241 = 1.602307,
 * 03-27 1/0.6238 = 1.603078, change = (0.6241 / 0.6238 - 1) * 100 =
 * 0.0481%. */
static void test_stats_fred_week(void **state)
{
	(void)state;
	const char *pairs[] = { "USD/JPY", "GBP/USD", "EUR/USD" };
	struct fx_series s[3];
	char *err = NULL;
	if (market_load_csv(FRED, pairs, 3, s, &err) < 0)
		fail_msg("%s", err);
	int32_t a, b;
	analytics_window(at(1987, 3, 27, 21), &a, &b);
	struct fx_stats st;
	assert_int_equal(analytics_fx_stats(&s[0], a, b, &st, &err), 0);
	assert_int_equal(st.nobs, 6);
	assert_int_equal(st.start_day, D(1987, 3, 20));
	assert_true(st.start_close == 151.70);
	assert_int_equal(st.end_day, D(1987, 3, 27));
	assert_true(st.end_close == 147.72);
	assert_float_equal(st.change_pct, -2.6236, 0.00005);
	assert_float_equal(st.change_pct, (147.72 / 151.70 - 1) * 100, 1e-12);
	assert_true(st.high == 151.70);
	assert_int_equal(st.high_day, D(1987, 3, 20));
	assert_true(st.low == 147.72);
	assert_int_equal(st.low_day, D(1987, 3, 27));
	assert_true(st.vol_ok);
	assert_float_equal(st.vol_pct, 7.5391, 0.00005);
	assert_float_equal(st.max_move_pct, -0.9920, 0.00005);
	assert_int_equal(st.max_move_day, D(1987, 3, 27));
	assert_true(st.z_ok);
	assert_int_equal(st.z_samples, 13);
	assert_float_equal(st.zscore, -2.2703, 0.00005);
	assert_int_equal(st.trend, FX_TREND_DOWN);
	assert_float_equal(st.ma_short, 149.128, 1e-9);
	assert_float_equal(st.ma_long, 151.9725, 1e-9);
	assert_int_equal(st.freshness_days, 0);
	assert_false(st.simulated);

	assert_int_equal(analytics_fx_stats(&s[1], a, b, &st, &err), 0);
	assert_int_equal(st.start_day, D(1987, 3, 20));
	assert_float_equal(st.start_close, 1 / 0.6241, 1e-12);
	assert_float_equal(st.start_close, 1.602307, 5e-7);
	assert_int_equal(st.end_day, D(1987, 3, 27));
	assert_float_equal(st.end_close, 1.603078, 5e-7);
	assert_float_equal(st.change_pct, 0.0481, 0.00005);
	assert_float_equal(st.change_pct, (0.6241 / 0.6238 - 1) * 100, 1e-9);
	assert_int_equal(st.trend, FX_TREND_UP);

	/* EUR/USD has no data in 1987. */
	assert_int_equal(analytics_fx_stats(&s[2], a, b, &st, &err), -1);
	assert_non_null(strstr(err, "no EUR/USD quote in 1987-03-20 .. 1987-03-27"));
	free(err);
	market_series_release_all(s, 3);
}

/* Classification. */

static void expect_event(const char *title, const char *body,
			 const char *bank, enum cb_action action)
{
	struct cb_event ev;
	bool found = analytics_classify_text(title, body, &ev);
	if (!bank) {
		if (found)
			fail_msg("\"%s\": bank %s, expected none", title, ev.bank);
		assert_null(ev.bank);
	} else {
		if (!found || strcmp(ev.bank, bank))
			fail_msg("\"%s\": bank %s, expected %s", title,
				 found ? ev.bank : "none", bank);
	}
	if (ev.action != action)
		fail_msg("\"%s\": action %s, expected %s", title,
			 analytics_action_name(ev.action),
			 analytics_action_name(action));
}

static bool has_evidence(const struct cb_event *ev, const char *text)
{
	for (size_t i = 0; i < ev->nevidence; i++)
		if (!strcmp(ev->evidence[i], text))
			return true;
	return false;
}

static void test_classify_rules(void **state)
{
	(void)state;
	struct cb_event ev;
	assert_true(analytics_classify_text(
		NULL, "The Bank of Japan intervened to buy dollars, dealers said.",
		&ev));
	assert_string_equal(ev.bank, "BOJ");
	assert_string_equal(ev.bank_name, "Bank of Japan");
	assert_int_equal(ev.action, CB_ACTION_INTERVENTION);
	assert_false(ev.action_in_title);
	assert_true(has_evidence(&ev, "Bank of Japan"));
	assert_true(has_evidence(&ev, "intervened"));
	assert_true(has_evidence(&ev, "buy dollars"));
	assert_string_equal(analytics_action_name(ev.action), "intervention");

	assert_true(analytics_classify_text(
		"BUNDESBANK CUTS DISCOUNT RATE",
		"The Bundesbank cut its discount rate to 3.0 pct from 3.5 pct.",
		&ev));
	assert_string_equal(ev.bank, "Bundesbank");
	assert_int_equal(ev.action, CB_ACTION_CUT);
	assert_true(ev.action_in_title);
	assert_true(has_evidence(&ev, "CUTS DISCOUNT RATE"));

	expect_event("FED RAISES DISCOUNT RATE TO 6.5 PCT", NULL, "Fed",
		     CB_ACTION_HIKE);
	expect_event("Fed lifts key rate", NULL, "Fed", CB_ACTION_HIKE);
	expect_event(NULL, "The Reserve Bank of Australia announced a rate hike.",
		     "RBA", CB_ACTION_HIKE);
	expect_event(NULL, "The Bank of England left interest rates unchanged.",
		     "BoE", CB_ACTION_HOLD);
	expect_event("ECB KEEPS RATES STEADY", NULL, "ECB", CB_ACTION_HOLD);
	/* A hold in the headline is the story, whatever the body speculates
	 * about; the Banque de France's "intervention rate" is its policy
	 * rate, not an intervention (Reuters 12495, 3068, 7499, 13157). */
	expect_event("BANK OF FRANCE LEAVES INTERVENTION RATE UNCHANGED AT 7-3/4 PCT",
		     NULL, "BdF", CB_ACTION_HOLD);
	expect_event("BANK OF FRANCE CUTS INTERVENTION RATE", NULL, "BdF", CB_ACTION_CUT);
	expect_event("FED DATA SUGGEST U.S. CREDIT POLICY IS ON HOLD",
		     "Some analysts still look for the Fed to cut its discount rate.", "Fed",
		     CB_ACTION_HOLD);
	expect_event("FEBRUARY FOMC VOTES UNCHANGED MONETARY POLICY", NULL, "Fed",
		     CB_ACTION_HOLD);
	expect_event("BUNDESBANK SEEN STEERING STEADY MONETARY COURSE", NULL, "Bundesbank",
		     CB_ACTION_HOLD);
	/* "steady" about something else is no hold */
	expect_event(NULL, "The Fed said that after a steady retreat, mortgage rates seem "
		     "near bottom.", "Fed", CB_ACTION_STATEMENT);
	expect_event(NULL, "The Swiss National Bank said inflation was subdued.",
		     "SNB", CB_ACTION_STATEMENT);
	expect_event(NULL, "The People's Bank of China trimmed its lending rate.",
		     "PBoC", CB_ACTION_CUT);
	expect_event(NULL, "The Bank of Canada eased monetary policy.", "BoC",
		     CB_ACTION_CUT);
	expect_event(NULL, "The RBNZ tightened monetary policy again.", "RBNZ",
		     CB_ACTION_HIKE);
	expect_event("Finance ministers of the Group of Seven met in Paris",
		     NULL, "policy", CB_ACTION_STATEMENT);
	expect_event("G-7 REAFFIRMS LOUVRE ACCORD", NULL, "policy",
		     CB_ACTION_STATEMENT);
	expect_event("U.S. Treasury Secretary says dollar fall has gone far enough",
		     NULL, "policy", CB_ACTION_STATEMENT);
	/* Treasury bills are not the Treasury. */
	expect_event("Treasury bills rose in active trading", NULL, NULL,
		     CB_ACTION_NONE);
	/* Acronyms keep their case; words are whole. */
	expect_event("The fed up traders went home", NULL, NULL, CB_ACTION_NONE);
	expect_event("BOJANGLES SAYS PROFITS UP", NULL, NULL, CB_ACTION_NONE);
	expect_event("Fedwire volume rose", NULL, NULL, CB_ACTION_NONE);
	/* A negation cancels the action. */
	expect_event("BOJ DOES NOT INTEND TO CUT DISCOUNT RATE-SUMITA", NULL,
		     "BOJ", CB_ACTION_STATEMENT);
	/* Money-market operations are not currency intervention. */
	expect_event(NULL,
		     "The Federal Reserve will intervene in the government "
		     "securities market to add reserves, economists said.",
		     "Fed", CB_ACTION_STATEMENT);
	/* No bank named: not an event, but the action is still told. */
	assert_false(analytics_classify_text("Citibank cuts prime rate", NULL, &ev));
	assert_null(ev.bank);
	assert_int_equal(ev.action, CB_ACTION_CUT);
	/* Title first; else the bank named most often in the body. */
	assert_true(analytics_classify_text(
		"BUNDESBANK BUYS DOLLARS",
		"The Bank of Japan and the Bank of Japan's officials...", &ev));
	assert_string_equal(ev.bank, "Bundesbank");
	assert_int_equal(ev.nbanks, 2);
	assert_true(analytics_classify_text(
		"CENTRAL BANKS BUY DOLLARS",
		"The Bank of England said. The Bank of Japan bought dollars. "
		"The Bank of Japan declined comment.",
		&ev));
	assert_string_equal(ev.bank, "BOJ");
	assert_int_equal(ev.action, CB_ACTION_INTERVENTION);
	assert_true(ev.action_in_title);
	/* Nothing at all. */
	assert_false(analytics_classify_text(NULL, NULL, &ev));
	assert_int_equal(ev.action, CB_ACTION_NONE);
	assert_int_equal(ev.nevidence, 0);
}

static const struct news_item *find_item(const struct news_list *l,
					 const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].id, id))
			return &l->items[i];
	fail_msg("no story %s", id);
	return NULL;
}

/* Stories of 1987-03-23 .. 03-27 read and checked by hand:
 *  10357 "BANK OF JAPAN INTERVENES TO STEM DOLLAR FALL"
 *  8591  "BANK OF JAPAN STEPS UP DOLLAR BUYING" ("the central bank
 *        intervened this afternoon when the dollar stood around 149 yen")
 *  9783  "BANK OF JAPAN BUYS SMALL QUANTITY DOLLARS -DEALERS"
 *  9224  "CENTRAL BANKS BUY DOLLARS FOR YEN IN LONDON": the title names no
 *        bank; the body names the Bank of Japan 3 times (it "intervened to
 *        stem strong yen rises"), the Bank of England twice
 *  9295  "BUNDESBANK BUYS DOLLARS IN FRANKFURT - DEALERS"
 *  10382 "SWISS NATIONAL BANK SAYS IT BOUGHT DOLLARS"
 *  8735  "N.Y. DEALERS BELIEVE FED INTERVENED TO BUY DLRS"
 *  9871  "BANK OF FRANCE BUYS DOLLARS, SELLS YEN - DEALERS"
 *  8299  "FED EXPECTED TO SET CUSTOMER REPURCHASES": the Fed is to
 *        "intervene in the government securities market to add temporary
 *        reserves" - a money-market operation, not an intervention
 *  9720  "MIYAZAWA SAYS MAJOR NATIONS ACTING ON PARIS ACCORD": policy */
static void test_classify_reuters(void **state)
{
	(void)state;
	struct news_list l;
	char *err = NULL;
	if (news_load_jsonl(JSONL, at(1987, 3, 23, 0), at(1987, 3, 28, 0), &l,
			    &err) < 0)
		fail_msg("%s", err);
	static const struct {
		const char *id, *bank;
		enum cb_action action;
		bool in_title;
	} cases[] = {
		{ "reuters-21578-10357", "BOJ", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-8591", "BOJ", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-9783", "BOJ", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-9224", "BOJ", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-9295", "Bundesbank", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-10382", "SNB", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-8735", "Fed", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-9871", "BdF", CB_ACTION_INTERVENTION, true },
		{ "reuters-21578-8299", "Fed", CB_ACTION_STATEMENT, false },
		{ "reuters-21578-9720", "policy", CB_ACTION_STATEMENT, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct news_item *it = find_item(&l, cases[i].id);
		struct cb_event ev;
		assert_true(analytics_news_classify(it, &ev));
		if (strcmp(ev.bank, cases[i].bank) || ev.action != cases[i].action ||
		    ev.action_in_title != cases[i].in_title)
			fail_msg("%s: %s/%s%s, expected %s/%s", cases[i].id,
				 ev.bank, analytics_action_name(ev.action),
				 ev.action_in_title ? " (title)" : "",
				 cases[i].bank,
				 analytics_action_name(cases[i].action));
	}
	struct cb_event ev;
	analytics_news_classify(find_item(&l, "reuters-21578-10357"), &ev);
	assert_true(has_evidence(&ev, "BANK OF JAPAN"));
	assert_true(has_evidence(&ev, "INTERVENES"));
	analytics_news_classify(find_item(&l, "reuters-21578-9224"), &ev);
	assert_true(has_evidence(&ev, "Bank of Japan"));
	assert_true(has_evidence(&ev, "BUY DOLLARS"));
	assert_int_equal(ev.nbanks, 2); /* BOJ, BoE */

	/* Over the week's money-fx stories: Bank of Japan interventions are
	 * found, and sentiment has the dollar falling and the yen rising
	 * (USD/JPY fell 2.6%). */
	size_t boj = 0, stories = 0;
	struct fx_sentiment sent;
	analytics_sentiment_init(&sent);
	int64_t t0 = util_mono_ns();
	for (size_t i = 0; i < l.n; i++) {
		if (!news_item_has_topic(&l.items[i], "money-fx"))
			continue;
		stories++;
		if (analytics_news_classify(&l.items[i], &ev) &&
		    !strcmp(ev.bank, "BOJ") && ev.action == CB_ACTION_INTERVENTION)
			boj++;
		analytics_sentiment_add_item(&sent, &l.items[i]);
	}
	const struct ccy_sentiment *usd = analytics_sentiment_get(&sent, "USD");
	const struct ccy_sentiment *jpy = analytics_sentiment_get(&sent, "JPY");
	print_message("%zu money-fx stories, %zu BOJ interventions, %.1f ms; "
		      "USD +%u -%u %.3f in %u stories, JPY +%u -%u %.3f in "
		      "%u\n",
		      stories, boj, (double)(util_mono_ns() - t0) / 1e6,
		      usd->pos, usd->neg, usd->score, usd->stories, jpy->pos,
		      jpy->neg, jpy->score, jpy->stories);
	assert_int_equal(stories, 139);
	assert_int_equal(sent.ntexts, 139);
	assert_true(usd->stories > 30 && usd->stories <= 139);
	assert_true(boj >= 10);
	assert_true(usd->score < -0.5);
	assert_true(jpy->score > 0.5);
	news_list_release(&l);
}

static void test_sentiment(void **state)
{
	(void)state;
	struct fx_sentiment s;
	const struct ccy_sentiment *c;
#define SCORE(ccy) (analytics_sentiment_get(&s, ccy)->score)
#define POS(ccy) (analytics_sentiment_get(&s, ccy)->pos)
#define NEG(ccy) (analytics_sentiment_get(&s, ccy)->neg)
	/* "fell" after "dollar": USD -1; "against the yen": JPY +1. */
	analytics_sentiment_init(&s);
	analytics_sentiment_add(&s, "The dollar fell against the yen.");
	assert_int_equal(NEG("USD"), 1);
	assert_int_equal(POS("USD"), 0);
	assert_int_equal(POS("JPY"), 1);
	assert_float_equal(SCORE("USD"), -1, 0);
	assert_float_equal(SCORE("JPY"), 1, 0);
	assert_int_equal(s.ntexts, 1);

	/* The adjective before the currency; the possessive; pressure. */
	analytics_sentiment_init(&s);
	analytics_sentiment_add(&s, "A firmer dollar helped exporters.");
	analytics_sentiment_add(&s, "The yen's sharp rise worried Tokyo.");
	analytics_sentiment_add(&s, "Sterling came under pressure.");
	analytics_sentiment_add(&s, "Dealers saw upward pressure on the yen.");
	assert_int_equal(POS("USD"), 1);
	assert_int_equal(POS("JPY"), 2);
	assert_int_equal(NEG("GBP"), 1);
	assert_int_equal(s.ntexts, 4);

	/* Qualified names: Australian dollar, Swiss franc, the mark. */
	analytics_sentiment_init(&s);
	analytics_sentiment_add(&s, "The Australian dollar slid.");
	analytics_sentiment_add(&s, "The mark firmed against the Swiss franc.");
	assert_int_equal(NEG("AUD"), 1);
	assert_int_equal(NEG("USD") + POS("USD"), 0);
	assert_int_equal(POS("DEM"), 1);
	assert_int_equal(NEG("CHF"), 1);

	/* Amounts are not the currency; sentences bound the search. */
	analytics_sentiment_init(&s);
	analytics_sentiment_add(&s, "The dollar rose to 149.50 yen.");
	analytics_sentiment_add(&s, "It bought 500 mln yen. Gold fell.");
	analytics_sentiment_add(&s, "The franc rose.");
	assert_int_equal(POS("USD"), 1);
	assert_int_equal(POS("JPY") + NEG("JPY"), 0);
	for (int i = 0; i < ANALYTICS_NCCY; i++)
		if (strcmp(s.c[i].ccy, "USD"))
			assert_int_equal(s.c[i].pos + s.c[i].neg, 0);

	/* Scores over several texts: +1 -2 gives (1 - 2) / 3. */
	analytics_sentiment_init(&s);
	analytics_sentiment_add(&s, "The dollar rose.");
	analytics_sentiment_add(&s, "The dollar fell sharply.");
	analytics_sentiment_add(&s, "Later the dollar weakened.");
	analytics_sentiment_add(&s, NULL);
	assert_int_equal(s.ntexts, 3);
	c = analytics_sentiment_get(&s, "USD");
	assert_int_equal(c->pos, 1);
	assert_int_equal(c->neg, 2);
	assert_int_equal(c->stories, 3);
	assert_float_equal(c->score, -1.0 / 3.0, 1e-12);
	assert_int_equal(analytics_sentiment_get(&s, "JPY")->stories, 0);
	assert_float_equal(SCORE("JPY"), 0, 0);
	assert_null(analytics_sentiment_get(&s, "XYZ"));
	assert_non_null(analytics_sentiment_get(&s, "KRW"));

	/* A story counts once for each currency it discusses, title and
	 * body together; a currency it does not discuss gets no story (the
	 * researcher's tone by currency rests on these counts). */
	analytics_sentiment_init(&s);
	analytics_sentiment_add_story(&s, "DOLLAR FALLS IN TOKYO",
				      "The dollar fell against the yen. Later the dollar "
				      "weakened again.");
	analytics_sentiment_add_story(&s, "Sterling firmer", NULL);
	analytics_sentiment_add_story(&s, NULL, "Gold rose.");
	assert_int_equal(s.ntexts, 3);
	assert_int_equal(analytics_sentiment_get(&s, "USD")->neg, 3);
	assert_int_equal(analytics_sentiment_get(&s, "USD")->stories, 1);
	assert_int_equal(analytics_sentiment_get(&s, "JPY")->stories, 1);
	assert_int_equal(analytics_sentiment_get(&s, "GBP")->stories, 1);
	assert_int_equal(analytics_sentiment_get(&s, "AUD")->stories, 0);
	assert_int_equal(analytics_sentiment_get(&s, "EUR")->stories, 0);
#undef SCORE
#undef POS
#undef NEG
}

/* The simulated feed is written so that its stories classify as they
 * read: a headline "... LEAVES ... UNCHANGED" is a hold, and so on. */
static void test_classify_simulated(void **state)
{
	(void)state;
	struct news_list l;
	char *err = NULL;
	assert_int_equal(news_sim(at(2024, 1, 1, 0), at(2024, 7, 1, 0), 7, &l,
				  &err),
			 0);
	size_t seen[6] = { 0 };
	for (size_t i = 0; i < l.n; i++) {
		const struct news_item *it = &l.items[i];
		struct cb_event ev;
		bool found = analytics_news_classify(it, &ev);
		enum cb_action want = CB_ACTION_NONE;
		if (strstr(it->title, " LEAVES "))
			want = CB_ACTION_HOLD;
		else if (strstr(it->title, " RAISES "))
			want = CB_ACTION_HIKE;
		else if (strstr(it->title, " CUTS "))
			want = CB_ACTION_CUT;
		else if (strstr(it->title, " INTERVENES "))
			want = CB_ACTION_INTERVENTION;
		else if (strstr(it->title, "GOVERNOR") || strstr(it->title, "G7"))
			want = CB_ACTION_STATEMENT;
		if (ev.action != want)
			fail_msg("%s \"%s\": %s, expected %s", it->id, it->title,
				 analytics_action_name(ev.action),
				 analytics_action_name(want));
		assert_true(found == (want != CB_ACTION_NONE));
		seen[want]++;
	}
	for (int a = CB_ACTION_NONE; a <= CB_ACTION_STATEMENT; a++)
		assert_true(seen[a] > 0);
	news_list_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_iso_week),
		cmocka_unit_test(test_stats_hand),
		cmocka_unit_test(test_stats_zscore),
		cmocka_unit_test(test_stats_trend),
		cmocka_unit_test(test_stats_fred_week),
		cmocka_unit_test(test_classify_rules),
		cmocka_unit_test(test_classify_reuters),
		cmocka_unit_test(test_sentiment),
		cmocka_unit_test(test_classify_simulated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
