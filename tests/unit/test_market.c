/* FX series: calendar days, the wide FRED file read in place
 * (../shared/data/fx/fred-daily-1971-2017.csv), the long layout, crosses
 * and inversions, malformed input, and the simulated market. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/market.h"
#include "core/util.h"

#include "core/banned.h"

#define FRED "../shared/data/fx/fred-daily-1971-2017.csv"

static int32_t D(int y, int m, int d)
{
	return market_day_from_ymd(y, m, d);
}

/* The close on a day, or NAN when the series has none. */
static double close_on(const struct fx_series *s, int32_t day)
{
	size_t i = market_series_lower_bound(s, day);
	return i < s->n && s->days[i] == day ? s->close[i] : NAN;
}

/* Writes data to a new temporary file; returns its path (caller frees and
 * unlinks). */
static char *tmp_file(const char *data, size_t len)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = xasprintf("%s/madf-test-market-XXXXXX", dir);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

/* Loads text as a CSV file; returns the rc and leaves *err set. */
static int load_text(const char *text, const char *const *pairs,
		     size_t npairs, struct fx_series *out, char **err,
		     char **path_out)
{
	char *path = tmp_file(text, strlen(text));
	int rc = market_load_csv(path, pairs, npairs, out, err);
	unlink(path);
	if (path_out)
		*path_out = path;
	else
		free(path);
	return rc;
}

static void test_calendar(void **state)
{
	(void)state;
	/* Counted with Python's datetime: (date(y,m,d) - date(1970,1,1)).days */
	assert_int_equal(D(1970, 1, 1), 0);
	assert_int_equal(D(1971, 1, 4), 368);
	assert_int_equal(D(1987, 3, 20), 6287);
	assert_int_equal(D(1987, 3, 27), 6294);
	assert_int_equal(D(2000, 3, 1), 11017);
	assert_int_equal(D(1969, 12, 31), -1);
	/* Round trip, day by day, 1600-03-01 .. 2400-12-31. */
	int32_t prev = D(1600, 2, 29);
	for (int32_t d = D(1600, 3, 1); d <= D(2400, 12, 31); d++) {
		int y, m, dd;
		market_day_to_ymd(d, &y, &m, &dd);
		assert_true(market_ymd_valid(y, m, dd));
		assert_int_equal(D(y, m, dd), d);
		assert_int_equal(d, prev + 1);
		prev = d;
	}
	/* 1970-01-01 was a Thursday, 1987-03-27 a Friday, 2000-01-01 a
	 * Saturday, 1969-12-28 a Sunday. */
	assert_int_equal(market_weekday(0), 4);
	assert_int_equal(market_weekday(D(1987, 3, 27)), 5);
	assert_int_equal(market_weekday(D(2000, 1, 1)), 6);
	assert_int_equal(market_weekday(D(1969, 12, 28)), 7);
	assert_int_equal(market_weekday(D(1969, 12, 29)), 1);

	int32_t day;
	assert_int_equal(market_day_parse("1987-03-20", 10, &day), 0);
	assert_int_equal(day, 6287);
	assert_int_equal(market_day_parse("1988-02-29", 10, &day), 0);
	assert_int_equal(market_day_parse("1987-02-29", 10, &day), -1);
	assert_int_equal(market_day_parse("1900-02-29", 10, &day), -1);
	assert_int_equal(market_day_parse("2000-02-29", 10, &day), 0);
	assert_int_equal(market_day_parse("1987-3-20", 9, &day), -1);
	assert_int_equal(market_day_parse("1987-03-20x", 11, &day), -1);
	assert_int_equal(market_day_parse("1987/03/20", 10, &day), -1);
	assert_int_equal(market_day_parse("1987-13-01", 10, &day), -1);
	assert_int_equal(market_day_parse("1987-00-10", 10, &day), -1);
	assert_int_equal(market_day_parse("0000-01-01", 10, &day), -1);
	assert_int_equal(market_day_parse("19a7-03-20", 10, &day), -1);

	char buf[16];
	market_day_format(D(1987, 3, 27), buf, sizeof(buf));
	assert_string_equal(buf, "1987-03-27");
	market_day_format(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31");

	const int64_t ns_day = INT64_C(86400000000000);
	assert_int_equal(market_day_from_ns(0), 0);
	assert_int_equal(market_day_from_ns(ns_day - 1), 0);
	assert_int_equal(market_day_from_ns(-1), -1);
	assert_int_equal(market_day_from_ns(-ns_day), -1);
	assert_int_equal(market_day_from_ns(-ns_day - 1), -2);
}

static void test_pair_parse(void **state)
{
	(void)state;
	char b[4], q[4], *err = NULL;
	assert_int_equal(market_pair_parse("USD/JPY", b, q, &err), 0);
	assert_string_equal(b, "USD");
	assert_string_equal(q, "JPY");
	const char *bad[] = { "USDJPY", "usd/jpy", "USD/JP", "USD/USD",
			      "USD/JPYX", "", "US1/JPY" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(market_pair_parse(bad[i], b, q, &err), -1);
		assert_non_null(err);
		free(err);
		err = NULL;
	}
	assert_true(market_currency_known("JPY"));
	assert_true(market_currency_known("USD"));
	assert_false(market_currency_known("XYZ"));
}

static void assert_ascending(const struct fx_series *s)
{
	for (size_t i = 1; i < s->n; i++)
		assert_true(s->days[i] > s->days[i - 1]);
	for (size_t i = 0; i < s->n; i++)
		assert_true(s->close[i] > 0 && isfinite(s->close[i]));
}

static void test_fred_wide(void **state)
{
	(void)state;
	const char *pairs[] = { "USD/JPY", "GBP/USD", "EUR/USD", "EUR/JPY",
				"AUD/USD", "USD/HKD", "USD/CHF", "JPY/USD" };
	struct fx_series s[ARRAY_SIZE(pairs)];
	char *err = NULL;
	int64_t t0 = util_mono_ns();
	int rc = market_load_csv(FRED, pairs, ARRAY_SIZE(pairs), s, &err);
	if (rc < 0)
		fail_msg("%s", err);
	print_message("FRED wide CSV, 8 pairs: %.1f ms\n",
		      (double)(util_mono_ns() - t0) / 1e6);
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		assert_string_equal(s[i].pair, pairs[i]);
		assert_false(s[i].simulated);
		assert_ascending(&s[i]);
	}
	/* USD/JPY is the Japan column as written: 11769 non-empty cells,
	 * 1971-01-04 357.73 .. 2017-12-01 111.88; 1987-03-20 151.70 and
	 * 1987-03-27 147.72 (the CSV's rows). */
	const struct fx_series *jpy = &s[0];
	assert_string_equal(jpy->source, "fred-daily-1971-2017.csv:Japan");
	assert_int_equal(jpy->n, 11769);
	assert_int_equal(jpy->days[0], D(1971, 1, 4));
	assert_true(jpy->close[0] == 357.73);
	assert_int_equal(jpy->days[jpy->n - 1], D(2017, 12, 1));
	assert_true(jpy->close[jpy->n - 1] == 111.88);
	assert_true(close_on(jpy, D(1987, 3, 20)) == 151.70);
	assert_true(close_on(jpy, D(1987, 3, 23)) == 150.25);
	assert_true(close_on(jpy, D(1987, 3, 27)) == 147.72);
	/* Empty cells are no quote: 1987-01-01 and 1987-01-19 are empty,
	 * the weekend 1987-03-21/22 has no row. */
	assert_true(isnan(close_on(jpy, D(1987, 1, 1))));
	assert_true(isnan(close_on(jpy, D(1987, 1, 19))));
	assert_true(isnan(close_on(jpy, D(1987, 3, 21))));

	/* GBP/USD = 1 / United Kingdom: 1987-03-20 0.6241, 2017-12-01
	 * 0.7405 (the README's check: GBP/USD ~ 1.350). */
	const struct fx_series *gbp = &s[1];
	assert_string_equal(gbp->source,
			    "fred-daily-1971-2017.csv:1/United Kingdom");
	assert_int_equal(gbp->n, 11775);
	assert_float_equal(close_on(gbp, D(1987, 3, 20)), 1 / 0.6241, 1e-12);
	assert_float_equal(close_on(gbp, D(1987, 3, 27)), 1 / 0.6238, 1e-12);
	assert_float_equal(close_on(gbp, D(2017, 12, 1)), 1.3504388926401080,
			   1e-12);

	/* EUR/USD = 1 / Euro: nothing before 1999-01-04 (the column is empty
	 * there), 4754 quotes, 2017-12-01 1/0.8396. */
	const struct fx_series *eur = &s[2];
	assert_int_equal(eur->n, 4754);
	assert_int_equal(eur->days[0], D(1999, 1, 4));
	assert_int_equal(market_series_lower_bound(eur, D(1998, 12, 31)), 0);
	assert_float_equal(close_on(eur, D(2017, 12, 1)), 1 / 0.8396, 1e-12);

	/* EUR/JPY = Japan / Euro on the 4754 days both have a quote:
	 * 2017-12-01 111.88 / 0.8396 = 133.253930...  */
	const struct fx_series *ej = &s[3];
	assert_string_equal(ej->source, "fred-daily-1971-2017.csv:Japan/Euro");
	assert_int_equal(ej->n, 4754);
	assert_float_equal(close_on(ej, D(2017, 12, 1)), 111.88 / 0.8396, 1e-9);
	assert_float_equal(close_on(ej, D(2017, 12, 1)) /
				   close_on(eur, D(2017, 12, 1)),
			   close_on(jpy, D(2017, 12, 1)), 1e-9);

	/* AUD/USD = 1 / Australia: 1987-03-20 1/1.4584 = 0.685683... */
	assert_float_equal(close_on(&s[4], D(1987, 3, 20)), 1 / 1.4584, 1e-12);
	/* USD/HKD starts in 1981. */
	assert_int_equal(s[5].days[0], D(1981, 1, 2));
	assert_int_equal(s[5].n, 9275);
	assert_true(close_on(&s[6], D(1987, 3, 20)) == 1.5370);
	/* JPY/USD: the inverse of a column. */
	assert_float_equal(close_on(&s[7], D(1987, 3, 20)), 1 / 151.70, 1e-15);

	market_series_release_all(s, ARRAY_SIZE(pairs));
	assert_int_equal(s[0].n, 0);
	assert_null(s[0].days);
}

/* A pair the data cannot price over a window is a permanent error naming
 * the pair, the file and the days; a window with a quote passes. */
static void test_window_check(void **state)
{
	(void)state;
	const char *pairs[] = { "USD/DEM", "EUR/USD", "EUR/JPY", "USD/JPY" };
	struct fx_series s[ARRAY_SIZE(pairs)];
	char *err = NULL;
	if (market_load_csv(FRED, pairs, ARRAY_SIZE(pairs), s, &err) < 0)
		fail_msg("%s", err);
	int32_t ws = D(1987, 3, 20), we = D(1987, 3, 27);
	assert_int_equal(market_window_check(&s[0], ws, we, &err), -1);
	assert_string_equal(err, "no data for USD/DEM in fred-daily-1971-2017.csv between "
			    "1987-03-20 and 1987-03-27");
	free(err);
	err = NULL;
	assert_int_equal(market_window_check(&s[1], ws, we, &err), -1);
	assert_string_equal(err, "no data for EUR/USD in fred-daily-1971-2017.csv between "
			    "1987-03-20 and 1987-03-27 (its first quote is on 1999-01-04)");
	free(err);
	err = NULL;
	/* A cross's source names its columns; the message names the file. */
	assert_int_equal(market_window_check(&s[2], ws, we, &err), -1);
	assert_string_equal(err, "no data for EUR/JPY in fred-daily-1971-2017.csv between "
			    "1987-03-20 and 1987-03-27 (its first quote is on 1999-01-04)");
	free(err);
	err = NULL;
	assert_int_equal(market_window_check(&s[3], ws, we, &err), 0);
	assert_null(err);
	/* EUR/USD has data from 1999-01-04: a window ending that day passes,
	 * one ending the day before does not. */
	assert_int_equal(market_window_check(&s[1], D(1998, 12, 28), D(1999, 1, 4), NULL), 0);
	assert_int_equal(market_window_check(&s[1], D(1998, 12, 28), D(1999, 1, 3), NULL), -1);
	/* After the file's last quote: that day is named. */
	assert_int_equal(market_window_check(&s[3], D(2018, 1, 2), D(2018, 1, 9), &err), -1);
	assert_string_equal(err, "no data for USD/JPY in fred-daily-1971-2017.csv between "
			    "2018-01-02 and 2018-01-09 (its last quote is on 2017-12-01)");
	free(err);
	err = NULL;
	/* A weekend alone has no quote. */
	assert_int_equal(market_window_check(&s[3], D(1987, 3, 21), D(1987, 3, 22), NULL), -1);
	market_series_release_all(s, ARRAY_SIZE(pairs));
}

static void test_fred_unknown_currency(void **state)
{
	(void)state;
	const char *pairs[] = { "USD/JPY", "USD/XYZ" };
	struct fx_series s[2];
	char *err = NULL;
	assert_int_equal(market_load_csv(FRED, pairs, 2, s, &err), -1);
	assert_non_null(strstr(err, "unknown currency XYZ"));
	assert_non_null(strstr(err, FRED));
	assert_int_equal(s[0].n, 0);
	free(err);
}

static void test_long_layout(void **state)
{
	(void)state;
	/* Out of order, an empty close, lower case, CRLF, a quoted header,
	 * a blank line at the end. */
	const char *text =
		"\"Date\",\"Pair\",\"Close\"\r\n"
		"1987-03-23,USD/JPY,150.25\r\n"
		"1987-03-20,USD/JPY,151.70\r\n"
		"1987-03-20,EUR/USD,1.0800\r\n"
		"1987-03-23,eur/usd,1.1000\r\n"
		"1987-03-24,USD/JPY,\r\n"
		"1987-03-24,EUR/USD,1.1200\r\n"
		"1987-03-20,GBP/USD,1.6023\r\n"
		"\r\n";
	const char *pairs[] = { "USD/JPY", "JPY/USD", "EUR/JPY", "EUR/USD",
				"GBP/JPY", "USD/CHF", "USD/EUR" };
	struct fx_series s[ARRAY_SIZE(pairs)];
	char *err = NULL;
	if (load_text(text, pairs, ARRAY_SIZE(pairs), s, &err, NULL) < 0)
		fail_msg("%s", err);
	/* USD/JPY: 03-20 151.70, 03-23 150.25 (03-24 empty: no quote). */
	assert_int_equal(s[0].n, 2);
	assert_int_equal(s[0].days[0], D(1987, 3, 20));
	assert_true(s[0].close[0] == 151.70);
	assert_true(s[0].close[1] == 150.25);
	assert_non_null(strstr(s[0].source, ":USD/JPY"));
	/* JPY/USD: the inverse. */
	assert_int_equal(s[1].n, 2);
	assert_float_equal(s[1].close[0], 1 / 151.70, 1e-15);
	assert_non_null(strstr(s[1].source, ":1/USD/JPY"));
	/* EUR/JPY from the legs on common days: 03-20 1.08 * 151.70 =
	 * 163.836, 03-23 1.10 * 150.25 = 165.275 (03-24 has no USD/JPY). */
	assert_int_equal(s[2].n, 2);
	assert_float_equal(s[2].close[0], 163.836, 1e-9);
	assert_float_equal(s[2].close[1], 165.275, 1e-9);
	/* EUR/USD as written, three days. */
	assert_int_equal(s[3].n, 3);
	assert_true(s[3].close[2] == 1.12);
	/* GBP/JPY: 1.6023 * 151.70 on 03-20 only. */
	assert_int_equal(s[4].n, 1);
	assert_float_equal(s[4].close[0], 1.6023 * 151.70, 1e-9);
	/* USD/CHF: absent from the file: an empty series, not an error. */
	assert_int_equal(s[5].n, 0);
	/* USD/EUR = 1 / EUR/USD. */
	assert_float_equal(s[6].close[0], 1 / 1.08, 1e-15);
	market_series_release_all(s, ARRAY_SIZE(pairs));
}

/* Each malformed file fails with "path:line: reason". */
static void expect_error(const char *text, const char *pair, int line,
			 const char *why)
{
	const char *pairs[] = { pair };
	struct fx_series s[1];
	char *err = NULL, *path = NULL;
	int rc = load_text(text, pairs, 1, s, &err, &path);
	if (rc != -1)
		fail_msg("accepted: %s", text);
	assert_non_null(err);
	assert_non_null(strstr(err, path));
	if (line > 0) {
		char *at = xasprintf("%s:%d:", path, line);
		if (!strstr(err, at))
			fail_msg("\"%s\" lacks \"%s\"", err, at);
		free(at);
	}
	if (!strstr(err, why))
		fail_msg("\"%s\" lacks \"%s\"", err, why);
	assert_int_equal(s[0].n, 0);
	assert_null(s[0].days);
	free(err);
	free(path);
}

static void test_malformed(void **state)
{
	(void)state;
	const char *hdr = "Data,Japan,Euro\n";
	char *t;
#define WIDE(rows) (free(t), t = xasprintf("%s%s", hdr, rows))
	t = NULL;
	expect_error(WIDE("1987-03-20,151.70,\n1987-02-30,150,\n"), "USD/JPY",
		     3, "bad date \"1987-02-30\"");
	expect_error(WIDE("20/03/1987,151.70,\n"), "USD/JPY", 2, "bad date");
	expect_error(WIDE("1987-03-20,15x.70,\n"), "USD/JPY", 2,
		     "column 2 (Japan): not a number: \"15x.70\"");
	/* A column nobody asked for is still checked. */
	expect_error(WIDE("1987-03-20,151.70,abc\n"), "USD/JPY", 2,
		     "column 3 (Euro): not a number");
	expect_error(WIDE("1987-03-20,0,\n"), "USD/JPY", 2,
		     "not a positive rate");
	expect_error(WIDE("1987-03-20,-1.5,\n"), "USD/JPY", 2, "not a number");
	expect_error(WIDE("1987-03-20,nan,\n"), "USD/JPY", 2, "not a number");
	expect_error(WIDE("1987-03-20,inf,\n"), "USD/JPY", 2, "not a number");
	expect_error(WIDE("1987-03-20,1e999,\n"), "USD/JPY", 2, "out of range");
	expect_error(WIDE("1987-03-20,2e9,\n"), "USD/JPY", 2, "out of range");
	expect_error(WIDE("1987-03-20,0.0000000001,\n"), "USD/JPY", 2,
		     "out of range");
	expect_error(WIDE("1987-03-20,151.70\n"), "USD/JPY", 2,
		     "2 fields, the header has 3");
	expect_error(WIDE("1987-03-20,151.70,1,2\n"), "USD/JPY", 2,
		     "4 fields, the header has 3");
	expect_error(WIDE("1987-03-20,151.70,\n1987-03-23,150.25,\n"
			  "1987-03-20,151.00,\n"),
		     "USD/JPY", 4, "date 1987-03-20 repeated (first on line 2)");
	expect_error(WIDE("1987-03-20,\"151.70,\n"), "USD/JPY", 2,
		     "unterminated quoted field");
	free(t);
#undef WIDE
	/* No header: the first line is data. */
	expect_error("1987-03-20,151.70\n", "USD/JPY", 1,
		     "header not recognised");
	expect_error(",Japan\n1987-03-20,151.70\n", "USD/JPY", 1,
		     "header not recognised (first column \"\")");
	expect_error("", "USD/JPY", 0, "no header line");
	expect_error("\n\n", "USD/JPY", 0, "no header line");
	expect_error("Data,Japan,Japan\n", "USD/JPY", 1, "appears twice");
	/* Long layout. */
	expect_error("date,pair,close\n1987-03-20,USDJPY,151.70\n", "USD/JPY", 2,
		     "bad pair \"USDJPY\"");
	expect_error("date,pair,close\n1987-03-20,USD/JPY,151.70\n"
		     "1987-03-20,USD/JPY,151.80\n",
		     "USD/JPY", 3,
		     "second quote for USD/JPY on 1987-03-20 (first on line 2)");
	expect_error("date,pair,close\n1987-03-20,USD/JPY,x\n", "USD/JPY", 2,
		     "close: not a number: \"x\"");
	/* A NUL byte. */
	{
		const char raw[] = "Data,Japan\n1987-03-20,151\0.70\n";
		const char *pairs[] = { "USD/JPY" };
		struct fx_series s[1];
		char *err = NULL;
		char *path = tmp_file(raw, sizeof(raw) - 1);
		assert_int_equal(market_load_csv(path, pairs, 1, s, &err), -1);
		assert_non_null(strstr(err, ":2: NUL byte"));
		unlink(path);
		free(path);
		free(err);
	}
	/* A line over MARKET_LINE_MAX. */
	{
		size_t n = MARKET_LINE_MAX + 100;
		char *big = xmalloc(n + 64);
		int k = snprintf(big, 64, "Data,Japan\n1987-03-20,");
		memset(big + k, '1', n);
		big[k + n] = '\n';
		big[k + n + 1] = '\0';
		expect_error(big, "USD/JPY", 2, "line longer than 65536 bytes");
		free(big);
	}
	/* A bad pair name asked for, and a missing file. */
	{
		const char *pairs[] = { "USDJPY" };
		struct fx_series s[1];
		char *err = NULL;
		assert_int_equal(market_load_csv(FRED, pairs, 1, s, &err), -1);
		assert_non_null(strstr(err, "bad pair"));
		free(err);
		err = NULL;
		const char *ok[] = { "USD/JPY" };
		assert_int_equal(market_load_csv("../shared/data/fx/none.csv", ok,
						 1, s, &err),
				 -1);
		assert_non_null(strstr(err, "none.csv"));
		free(err);
	}
}

static void test_bom_and_fred_missing_marker(void **state)
{
	(void)state;
	/* A UTF-8 BOM, FRED's "." for no quote, spaces around values. */
	const char *text = "\xEF\xBB\xBF" "DATE, Japan ,United Kingdom\n"
			   "1987-03-20, 151.70 ,.\n"
			   "1987-03-23,.,0.6184\n";
	const char *pairs[] = { "USD/JPY", "GBP/USD" };
	struct fx_series s[2];
	char *err = NULL;
	if (load_text(text, pairs, 2, s, &err, NULL) < 0)
		fail_msg("%s", err);
	assert_int_equal(s[0].n, 1);
	assert_true(s[0].close[0] == 151.70);
	assert_int_equal(s[1].n, 1);
	assert_int_equal(s[1].days[0], D(1987, 3, 23));
	market_series_release_all(s, 2);
}

static void test_sim(void **state)
{
	(void)state;
	const char *pairs[] = { "USD/JPY", "EUR/USD", "EUR/JPY", "AUD/USD",
				"USD/KRW", "GBP/USD" };
	enum { N = ARRAY_SIZE(pairs) };
	struct fx_series a[N], b[N], c[N];
	char *err = NULL;
	int32_t start = D(2015, 1, 1), end = D(2024, 12, 31);
	assert_int_equal(market_sim(pairs, N, start, end, 42, a, &err), 0);
	assert_int_equal(market_sim(pairs, N, start, end, 42, b, &err), 0);
	assert_int_equal(market_sim(pairs, N, start, end, 43, c, &err), 0);
	for (int i = 0; i < N; i++) {
		assert_true(a[i].simulated);
		assert_string_equal(a[i].source, "simulated");
		assert_string_equal(a[i].pair, pairs[i]);
		assert_ascending(&a[i]);
		/* Deterministic: the same seed gives the same path. */
		assert_int_equal(a[i].n, b[i].n);
		assert_memory_equal(a[i].close, b[i].close,
				    a[i].n * sizeof(double));
		assert_memory_equal(a[i].days, b[i].days,
				    a[i].n * sizeof(int32_t));
		assert_true(memcmp(a[i].close, c[i].close,
				   a[i].n * sizeof(double)) != 0);
		/* Weekdays only: 2015-01-01 .. 2024-12-31 holds 2609. */
		assert_int_equal(a[i].n, 2609);
		for (size_t k = 0; k < a[i].n; k++)
			assert_true(market_weekday(a[i].days[k]) <= 5);
	}
	/* The walks start at their levels: USD/JPY 150.000, EUR/USD 1.0800,
	 * USD/KRW 1350.00 on 2015-01-01 (a Thursday). */
	assert_int_equal(a[0].days[0], start);
	assert_true(a[0].close[0] == 150.0);
	assert_true(a[1].close[0] == 1.08);
	assert_true(a[4].close[0] == 1350.0);
	/* Crosses come from the legs: EUR/JPY = EUR/USD * USD/JPY. */
	for (size_t k = 0; k < a[2].n; k++)
		assert_float_equal(a[2].close[k], a[1].close[k] * a[0].close[k],
				   1e-9 * a[2].close[k]);
	/* A path does not depend on the other pairs asked for. */
	struct fx_series one[1];
	assert_int_equal(market_sim(pairs + 3, 1, start, end, 42, one, &err), 0);
	assert_memory_equal(one[0].close, a[3].close, a[3].n * sizeof(double));
	market_series_release_all(one, 1);
	/* Realistic volatility: USD/JPY is simulated at 10% a year; ten years
	 * of daily log returns give an annualised sample vol near it. */
	double sum = 0, ss = 0;
	size_t n = a[0].n - 1;
	for (size_t k = 1; k < a[0].n; k++)
		sum += log(a[0].close[k] / a[0].close[k - 1]);
	double mean = sum / (double)n;
	for (size_t k = 1; k < a[0].n; k++) {
		double r = log(a[0].close[k] / a[0].close[k - 1]) - mean;
		ss += r * r;
	}
	double vol = sqrt(ss / (double)(n - 1)) * sqrt(252.0);
	assert_true(vol > 0.09 && vol < 0.11);
	market_series_release_all(a, N);
	market_series_release_all(b, N);
	market_series_release_all(c, N);

	/* Errors. */
	const char *bad[] = { "USD/XYZ" };
	assert_int_equal(market_sim(bad, 1, start, end, 1, a, &err), -1);
	assert_non_null(strstr(err, "no simulation for XYZ"));
	free(err);
	err = NULL;
	const char *legacy[] = { "USD/DEM" };
	assert_int_equal(market_sim(legacy, 1, start, end, 1, a, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(market_sim(pairs, 1, end, start, 1, a, &err), -1);
	assert_non_null(strstr(err, "start day after end day"));
	free(err);
	/* A weekend alone: no quotes, no error. */
	assert_int_equal(market_sim(pairs, 1, D(2024, 6, 1), D(2024, 6, 2), 1,
				    a, &err),
			 0);
	assert_int_equal(a[0].n, 0);
	market_series_release_all(a, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calendar),
		cmocka_unit_test(test_pair_parse),
		cmocka_unit_test(test_fred_wide),
		cmocka_unit_test(test_window_check),
		cmocka_unit_test(test_fred_unknown_currency),
		cmocka_unit_test(test_long_layout),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_bom_and_fred_missing_marker),
		cmocka_unit_test(test_sim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
