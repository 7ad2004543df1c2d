/* The validator's verdict rules (agents/validator_evidence.h), one case
 * each: the price corroborates but never refutes, a dispute's severity
 * follows its evidence, the claim's own later stories report the act, and
 * vev_check judges the act on its own currencies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/market.h"
#include "agents/validator_evidence.h"
#include "core/util.h"

#include "core/banned.h"

#define D(m, d) market_day_from_ymd(1987, (m), (d))

static struct vev_claim boj(const char *const *cited, size_t n)
{
	return (struct vev_claim){ .bank = "BOJ", .kind = EV_INTERVENTION, .day = D(3, 24),
				   .pair = "USD/JPY", .cited = cited, .ncited = n };
}

/* The dollar fell 2% on the day two desks say the Bank of Japan bought
 * dollars (it buys them because they fall): confirmed, the price against
 * named in the reason. Before, a price against needed three reports. */
static void test_price_against_does_not_block_confirmation(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars against yen "
		  "today, dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "l1", "DOLLAR FALLS IN LONDON", "The Bank of Japan bought dollars in Tokyo "
		  "today, London dealers said.", "LONDON, March 24 -", D(3, 24), NULL, 0 },
	};
	static const char *const cited[] = { "t1" };
	struct vev_point p[] = { { D(3, 20), 151.70 }, { D(3, 23), 150.00 }, { D(3, 24), 147.00 } };
	struct vev_claim c = boj(cited, 1);
	struct vev_result r;
	vev_judge(&c, st, 2, p, 3, &r);
	assert_int_equal(r.ngroups, 2);
	assert_int_equal(r.price, VEV_PRICE_AGAINST);
	assert_int_equal(r.verdict, VEV_CONFIRMED);
	char *why = vev_reason(&c, &r);
	assert_non_null(strstr(why, "-2.00% after -1.12% the day before, against"));
	free(why);
}

/* Denials count by desk and day, as reports do: the same denial twice
 * from one desk against one report is medium; denials from two desks
 * against one report are high. */
static void test_dispute_severity_by_desks(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars today, "
		  "dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "n1", "BANK OF JAPAN SAYS NO INTERVENTION", "The Bank of Japan did not intervene "
		  "in the currency market today, a central bank official said.",
		  "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "n2", "BANK OF JAPAN SAYS NO INTERVENTION", "The Bank of Japan did not intervene "
		  "in the currency market today, a central bank official said.",
		  "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "n3", "DOLLAR FIRMER IN NEW YORK", "The Bank of Japan did not intervene in "
		  "Tokyo today, a Bank of Japan official said.", "NEW YORK, March 24 -",
		  D(3, 24), NULL, 0 },
	};
	static const char *const cited[] = { "t1" };
	struct vev_point p[] = { { D(3, 20), 151.70 }, { D(3, 23), 150.00 }, { D(3, 24), 150.00 } };
	struct vev_claim c = boj(cited, 1);
	struct vev_result r;
	vev_judge(&c, st, 3, p, 3, &r);
	assert_int_equal(r.verdict, VEV_DISPUTED);
	assert_int_equal(r.ndenials, 2);
	assert_int_equal(r.denial_groups, 1);
	assert_string_equal(r.severity, "medium");
	vev_judge(&c, st, 4, p, 3, &r);
	assert_int_equal(r.verdict, VEV_DISPUTED);
	assert_int_equal(r.ndenials, 3);
	assert_int_equal(r.denial_groups, 2);
	assert_string_equal(r.severity, "high");
	assert_string_equal(r.denials, "n1, n2, n3");
}

/* A cited story published five days after the act (a weekly review of
 * Monday's intervention) is a report of it; an uncited story of that day
 * is not read as one. Before, only stories of the day before to the day
 * after next were. */
static void test_cited_later_story_reports(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars today, "
		  "dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "w1", "FED INTERVENED THIS WEEK", "The Bank of Japan bought dollars on "
		  "March 24, the Fed said in its review.", "WASHINGTON, March 29 -", D(3, 29),
		  NULL, 0 },
		{ "w2", "DOLLAR REVIEW", "The Bank of Japan bought dollars on March 24, "
		  "dealers recalled.", "LONDON, March 29 -", D(3, 29), NULL, 0 },
	};
	static const char *const cited[] = { "t1", "w1" };
	struct vev_claim c = boj(cited, 2);
	struct vev_result r;
	vev_judge(&c, st, 3, NULL, 0, &r);
	assert_int_equal(r.ngroups, 2);
	assert_string_equal(r.groups[1].city, "WASHINGTON");
	assert_string_equal(r.groups[1].ids, "w1");
	assert_int_equal(r.verdict, VEV_CONFIRMED);
}

/* vev_check: dollars bought for yen, reported under USD/CHF, are judged
 * on USD/JPY, the pair it asks for second. */
struct asked {
	char pairs[4][8];
	size_t n;
};

static size_t fake_prices(void *ctx, const char *pair, int32_t day, struct vev_point **out)
{
	struct asked *a = ctx;
	if (a->n < 4)
		snprintf(a->pairs[a->n++], 8, "%s", pair);
	*out = xcalloc(2, sizeof(**out));
	(*out)[0] = (struct vev_point){ day - 1, 150.00 };
	(*out)[1] = (struct vev_point){ day, 151.00 };
	return 2;
}

static void test_check_own_pair(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars against yen "
		  "today, dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
	};
	static const char *const cited[] = { "t1" };
	struct vev_claim c = boj(cited, 1);
	c.pair = "USD/CHF";
	struct asked a = { 0 };
	struct vev_result r;
	char own[8];
	vev_check(&c, st, 1, fake_prices, &a, own, &r);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.pairs[0], "USD/CHF");
	assert_string_equal(a.pairs[1], "USD/JPY");
	assert_string_equal(c.pair, "USD/JPY");
	assert_int_equal(r.price, VEV_PRICE_CONSISTENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_price_against_does_not_block_confirmation),
		cmocka_unit_test(test_dispute_severity_by_desks),
		cmocka_unit_test(test_cited_later_story_reports),
		cmocka_unit_test(test_check_own_pair),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
