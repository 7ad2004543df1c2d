/* Live data: the ECB csvdata parser on the Data Portal's real layout,
 * crosses from EUR legs, source specs, hosts, Retry-After, the
 * currencies the ECB publishes, and the cache in front of the network:
 * a fresh entry answers without a request, a stale one is used with a
 * warning when the host refuses connections (127.0.0.1 port 1), and with
 * nothing cached the error names the source and the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "agents/live_data.h"
#include "core/cache.h"
#include "core/util.h"

#include "core/banned.h"

#define NS INT64_C(1000000000)

static const char header[] =
	"KEY,FREQ,CURRENCY,CURRENCY_DENOM,EXR_TYPE,EXR_SUFFIX,TIME_PERIOD,OBS_VALUE,"
	"OBS_STATUS,OBS_CONF,OBS_PRE_BREAK,OBS_COM,TIME_FORMAT,BREAKS,COLLECTION,"
	"COMPILING_ORG,DISS_ORG,DOM_SER_IDS,PUBL_ECB,PUBL_MU,PUBL_PUBLIC,UNIT_INDEX_BASE,"
	"COMPILATION,COVERAGE,DECIMALS,NAT_TITLE,SOURCE_AGENCY,SOURCE_PUB,TITLE,TITLE_COMPL,"
	"UNIT,UNIT_MULT\r\n";

/* One row as the ECB writes it (quoted TITLE_COMPL with commas). */
static char *row(const char *ccy, const char *day, const char *v)
{
	return xasprintf("EXR.D.%s.EUR.SP00.A,D,%s,EUR,SP00,A,%s,%s,A,F,,,P1D,,A,,,,,,,99Q1=100,,,"
			 "4,,4F0,,%s/Euro ECB reference exchange rate,\"ECB reference exchange "
			 "rate, %s/Euro, 2.15 pm (C.E.T.)\",%s,0\r\n",
			 ccy, ccy, day, v, ccy, ccy, ccy);
}

static char *csv_of(const char *const *rows, size_t n)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, header);
	for (size_t i = 0; i + 3 <= n; i += 3) {
		char *r = row(rows[i], rows[i + 1], rows[i + 2]);
		sbuf_addstr(&b, r);
		free(r);
	}
	return sbuf_detach(&b);
}

static int32_t D(int y, int m, int d)
{
	return market_day_from_ymd(y, m, d);
}

static void test_parse(void **state)
{
	(void)state;
	/* out of order, another currency, an empty value and NaN */
	const char *rows[] = { "USD", "2017-03-14", "1.0645", "JPY", "2017-03-13", "122.4",
			       "USD", "2017-03-13", "1.0670", "USD", "2017-03-15", "",
			       "USD", "2017-03-16", "NaN" };
	char *csv = csv_of(rows, ARRAY_SIZE(rows));
	struct fx_series s;
	char *err = NULL;
	assert_int_equal(live_ecb_parse_csv(csv, strlen(csv), "t", "USD", &s, &err), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.days[0], D(2017, 3, 13));
	assert_true(s.close[0] == 1.0670);
	assert_int_equal(s.days[1], D(2017, 3, 14));
	assert_true(s.close[1] == 1.0645);
	market_series_release(&s);
	assert_int_equal(live_ecb_parse_csv(csv, strlen(csv), "t", "JPY", &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_true(s.close[0] == 122.4);
	market_series_release(&s);
	free(csv);

	/* nothing (the ECB's 404 "No results found." is turned into this) */
	assert_int_equal(live_ecb_parse_csv("", 0, "t", "USD", &s, &err), 0);
	assert_int_equal(s.n, 0);
	market_series_release(&s);
	/* a header and only rows of other series: no rows (found by fuzz_ecb_csv:
	 * qsort was given a NULL array, which UBSan stops) */
	const char *other = "CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nJPY,EUR,2017-03-17,122\n";
	assert_int_equal(live_ecb_parse_csv(other, strlen(other), "t", "USD", &s, &err), 0);
	assert_int_equal(s.n, 0);
	assert_null(err);
	market_series_release(&s);
	const char *header_only = "CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\r\n";
	assert_int_equal(live_ecb_parse_csv(header_only, strlen(header_only), "t", "USD", &s, &err),
			 0);
	assert_int_equal(s.n, 0);
	market_series_release(&s);
	/* only the columns needed, LF line ends, no final newline */
	const char *small = "CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nGBP,EUR,2017-03-17,0.86793";
	assert_int_equal(live_ecb_parse_csv(small, strlen(small), "t", "GBP", &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_true(s.close[0] == 0.86793);
	market_series_release(&s);
}

static void parse_fails(const char *body, const char *want)
{
	struct fx_series s;
	char *err = NULL;
	assert_int_equal(live_ecb_parse_csv(body, strlen(body), "ECB D.USD", "USD", &s, &err), -1);
	if (!strstr(err, want))
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
	assert_null(s.days);
	free(err);
}

static void test_parse_errors(void **state)
{
	(void)state;
	parse_fails("<html><body>maintenance</body></html>\n", "not ECB csvdata");
	parse_fails("CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nUSD,EUR,17-03-2017,1.06\n",
		    "ECB D.USD:2: TIME_PERIOD \"17-03-2017\" is not a date");
	parse_fails("CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nUSD,EUR,2017-03-17,abc\n",
		    ":2: OBS_VALUE \"abc\" is not a rate");
	parse_fails("CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nUSD,EUR,2017-03-17,-1\n",
		    "is not a rate");
	parse_fails("CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nUSD,EUR,2017-03-17\n",
		    ":2: 3 fields, the header has 4");
	parse_fails("CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nUSD,EUR,2017-03-17,\"1.06\n",
		    "not closed");
	parse_fails("CURRENCY,CURRENCY_DENOM,TIME_PERIOD,OBS_VALUE\nUSD,EUR,2017-03-17,1.06\n"
		    "USD,EUR,2017-03-17,1.07\n", "two rates for USD on 2017-03-17");
}

static void test_cross(void **state)
{
	(void)state;
	/* USD and JPY per euro, a day missing in each leg */
	int32_t du[] = { D(2017, 3, 13), D(2017, 3, 14), D(2017, 3, 15) };
	double vu[] = { 1.0670, 1.0645, 1.0630 };
	int32_t dj[] = { D(2017, 3, 13), D(2017, 3, 15), D(2017, 3, 16) };
	double vj[] = { 122.40, 121.94, 121.50 };
	struct fx_series usd = { .n = 3, .days = du, .close = vu };
	struct fx_series jpy = { .n = 3, .days = dj, .close = vj };
	struct fx_series s;
	memset(&s, 0, sizeof(s));
	live_cross(&usd, &jpy, &s); /* USD/JPY */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.days[0], D(2017, 3, 13));
	assert_true(fabs(s.close[0] - 122.40 / 1.0670) < 1e-12);
	assert_int_equal(s.days[1], D(2017, 3, 15));
	assert_true(fabs(s.close[1] - 121.94 / 1.0630) < 1e-12);
	market_series_release(&s);
	live_cross(NULL, &usd, &s); /* EUR/USD: the leg itself */
	assert_int_equal(s.n, 3);
	assert_true(s.close[2] == 1.0630);
	market_series_release(&s);
	live_cross(&usd, NULL, &s); /* USD/EUR: its inverse */
	assert_int_equal(s.n, 3);
	assert_true(fabs(s.close[0] - 1 / 1.0670) < 1e-12);
	market_series_release(&s);
}

static void test_specs(void **state)
{
	(void)state;
	char *err = NULL;
	assert_true(live_is_market_spec("ecb"));
	assert_true(live_is_market_spec("ecb:http://x/EXR"));
	assert_false(live_is_market_spec("csv:x"));
	assert_true(live_is_news_spec("rss:https://a/b"));
	assert_false(live_is_news_spec("rss:/tmp/feed.xml"));
	assert_int_equal(live_check_spec("ecb", true, &err), 0);
	assert_int_equal(live_check_spec("ecb:https://data-api.ecb.europa.eu/service/data/EXR", true,
					 &err), 0);
	assert_int_equal(live_check_spec("rss:http://a/x.rss,https://b:8080/y?a=1,2", false, &err),
			 0);
	assert_int_equal(live_check_spec("ecb:ftp://x", true, &err), -1);
	assert_non_null(strstr(err, "not an http:// or https:// URL"));
	free(err);
	err = NULL;
	assert_int_equal(live_check_spec("rss:http://a/x,http:///y", false, &err), -1);
	assert_non_null(strstr(err, "no host"));
	free(err);
	err = NULL;
	assert_int_equal(live_check_spec("rss:http://a/b c", false, &err), -1);
	free(err);

	char h[64];
	live_url_host("http://127.0.0.1:8080/service/data/EXR", h, sizeof(h));
	assert_string_equal(h, "127.0.0.1:8080");
	live_url_host("https://user:pw@example.org?x", h, sizeof(h));
	assert_string_equal(h, "example.org");
	live_url_host("nothing", h, sizeof(h));
	assert_string_equal(h, "?");

	assert_true(live_ecb_currency("USD"));
	assert_true(live_ecb_currency("EUR"));
	assert_true(live_ecb_currency("SGD"));
	assert_false(live_ecb_currency("TWD"));
	assert_false(live_ecb_currency("XAU"));
}

static void test_retry_after(void **state)
{
	(void)state;
	int64_t s, now = (int64_t)1490000000 * NS; /* 2017-03-20T08:53:20Z */
	assert_int_equal(live_parse_retry_after("5", now, &s), 0);
	assert_int_equal(s, 5);
	assert_int_equal(live_parse_retry_after(" 120 ", now, &s), 0);
	assert_int_equal(s, 120);
	assert_int_equal(live_parse_retry_after("Mon, 20 Mar 2017 08:54:00 GMT", now, &s), 0);
	assert_int_equal(s, 40);
	assert_int_equal(live_parse_retry_after("Mon, 20 Mar 2017 08:00:00 GMT", now, &s), 0);
	assert_int_equal(s, 0);
	assert_int_equal(live_parse_retry_after("soon", now, &s), -1);
	assert_int_equal(live_parse_retry_after("-3", now, &s), -1);
	assert_int_equal(live_parse_retry_after("", now, &s), -1);
}

struct fixture {
	char *dir;
	struct cache *c;
	struct live *l;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	f->dir = xstrdup("/tmp/madf-test-live-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	char *err = NULL;
	if (cache_open(f->dir, &f->c, &err) < 0)
		return -1;
	f->l = live_new(f->c);
	unsetenv("MADF_ECB_TTL_S");
	unsetenv("MADF_RSS_TTL_S");
	setenv("MADF_HTTP_MIN_INTERVAL_MS", "0", 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	live_free(&f->l);
	cache_free(&f->c);
	util_rm_tree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Nothing listens on 127.0.0.1 port 1: every request is refused. */
#define DEAD "http://127.0.0.1:1/EXR"

static void put(struct cache *c, const char *source, const char *url, const char *body,
		int64_t at)
{
	char *key = xasprintf("GET %s", url), *err = NULL;
	if (cache_put_at(c, source, key, body, strlen(body), at, &err) < 0)
		fail_msg("%s", err);
	free(key);
}

static void test_ecb_through_cache(void **state)
{
	struct fixture *f = *state;
	const char *usd[] = { "USD", "2017-03-16", "1.0738", "USD", "2017-03-17", "1.0742" };
	const char *jpy[] = { "JPY", "2017-03-16", "121.77", "JPY", "2017-03-17", "121.03" };
	char *cu = csv_of(usd, ARRAY_SIZE(usd)), *cj = csv_of(jpy, ARRAY_SIZE(jpy));
	int64_t now = util_now_ns();
	/* The URLs cover 147 days before the end (the researchers' history). */
	put(f->c, "ecb", DEAD "/D.USD.EUR.SP00.A?startPeriod=2016-10-21&endPeriod=2017-03-17"
			      "&format=csvdata", cu, now - 60 * NS);
	put(f->c, "ecb", DEAD "/D.JPY.EUR.SP00.A?startPeriod=2016-10-21&endPeriod=2017-03-17"
			      "&format=csvdata", cj, now - 3 * 86400 * NS);
	struct fx_series s;
	char *err = NULL;
	cJSON *w = cJSON_CreateArray();
	/* fresh: answered by the cache, no warning */
	assert_int_equal(live_ecb_series(f->l, "ecb:" DEAD, "EUR/USD", D(2017, 3, 10),
					 D(2017, 3, 17), &s, w, &err), 0);
	assert_int_equal(s.n, 2);
	assert_true(s.close[1] == 1.0742);
	assert_string_equal(s.source, "ecb (127.0.0.1:1)");
	assert_false(s.simulated);
	assert_int_equal(cJSON_GetArraySize(w), 0);
	market_series_release(&s);
	/* the JPY leg is 3 days old: the host refuses, the stale entry is
	 * used with a warning naming the source, the reason and the time */
	assert_int_equal(live_ecb_series(f->l, "ecb:" DEAD, "USD/JPY", D(2017, 3, 10),
					 D(2017, 3, 17), &s, w, &err), 0);
	assert_int_equal(s.n, 2);
	assert_true(fabs(s.close[1] - 121.03 / 1.0742) < 1e-12);
	assert_non_null(strstr(s.source, "ecb (127.0.0.1:1; cached 20"));
	assert_int_equal(cJSON_GetArraySize(w), 1);
	const char *msg = cJSON_GetArrayItem(w, 0)->valuestring;
	if (!strstr(msg, "ecb: cannot reach 127.0.0.1:1 (") ||
	    !strstr(msg, "; using cached rates from 20") || !strstr(msg, "(3 days old)"))
		fail_msg("warning: %s", msg);
	market_series_release(&s);
	/* nothing cached for GBP: an error naming the source and reason */
	assert_int_equal(live_ecb_series(f->l, "ecb:" DEAD, "GBP/USD", D(2017, 3, 10),
					 D(2017, 3, 17), &s, w, &err), -1);
	if (!strstr(err, "ecb: cannot reach 127.0.0.1:1 (") ||
	    !strstr(err, "no cached rates to fall back on"))
		fail_msg("error: %s", err);
	free(err);
	err = NULL;
	/* a currency the ECB does not publish: named, before any request */
	assert_int_equal(live_ecb_series(f->l, "ecb:" DEAD, "USD/TWD", D(2017, 3, 10),
					 D(2017, 3, 17), &s, w, &err), -1);
	assert_non_null(strstr(err, "publishes no euro reference rate for TWD"));
	free(err);
	cJSON_Delete(w);
	free(cu);
	free(cj);
}

static const char rss[] =
	"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>T</title>"
	"<item><title>B</title><guid>id-b</guid><pubDate>Fri, 17 Mar 2017 10:00:00 GMT</pubDate></item>"
	"<item><title>A</title><guid>id-a</guid><pubDate>Thu, 16 Mar 2017 10:00:00 GMT</pubDate></item>"
	"</channel></rss>";
static const char atom[] =
	"<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>F</title>"
	"<entry><title>C</title><id>id-c</id><published>2017-03-16T12:00:00Z</published></entry>"
	"<entry><title>A again</title><id>id-a</id><published>2017-03-16T10:00:00Z</published></entry>"
	"</feed>";

static void test_rss_through_cache(void **state)
{
	struct fixture *f = *state;
	int64_t now = util_now_ns();
	put(f->c, "rss", "http://127.0.0.1:1/a.rss", rss, now - 10 * NS);
	put(f->c, "rss", "http://127.0.0.1:1/b.atom", atom, now - 7200 * NS);
	struct news_list nl;
	char *err = NULL;
	cJSON *w = cJSON_CreateArray();
	assert_int_equal(live_rss_load(f->l, "rss:http://127.0.0.1:1/a.rss,http://127.0.0.1:1/b.atom",
				       &nl, w, &err), 0);
	/* merged by time, the story both feeds have once */
	assert_int_equal(nl.n, 3);
	assert_string_equal(nl.items[0].id, "id-a");
	assert_string_equal(nl.items[1].id, "id-c");
	assert_string_equal(nl.items[2].id, "id-b");
	news_list_release(&nl);
	/* the Atom feed was stale (2 h, over 600 s) */
	assert_int_equal(cJSON_GetArraySize(w), 1);
	assert_non_null(strstr(cJSON_GetArrayItem(w, 0)->valuestring,
			       "rss: cannot reach 127.0.0.1:1 ("));
	assert_non_null(strstr(cJSON_GetArrayItem(w, 0)->valuestring, "using cached feed from"));
	cJSON_Delete(w);
	/* a feed with nothing cached next to one that works: skipped, said */
	w = cJSON_CreateArray();
	assert_int_equal(live_rss_load(f->l, "rss:http://127.0.0.1:1/a.rss,http://127.0.0.1:1/none",
				       &nl, w, &err), 0);
	assert_int_equal(nl.n, 2);
	news_list_release(&nl);
	assert_int_equal(cJSON_GetArraySize(w), 1);
	assert_non_null(strstr(cJSON_GetArrayItem(w, 0)->valuestring, "skipping that feed"));
	cJSON_Delete(w);
	/* only that one: an error */
	assert_int_equal(live_rss_load(f->l, "rss:http://127.0.0.1:1/none", &nl, NULL, &err), -1);
	assert_non_null(strstr(err, "no cached feed to fall back on"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_cross),
		cmocka_unit_test(test_specs),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test_setup_teardown(test_ecb_through_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss_through_cache, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
