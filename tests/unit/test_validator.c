/* The validator's independent evidence on a claimed central-bank act:
 * reports grouped by dateline and day, denials, the price reaction and
 * plausibility, on constructed stories and closes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents/market.h"
#include "agents/validator_evidence.h"

#include "core/banned.h"

#define D(m, d) market_day_from_ymd(1987, (m), (d))

static const char *const cited1[] = { "t1" };

/* Closes of USD/JPY: 03-20 151.70, 03-23 150.00, 03-24 the given close. */
static size_t closes(struct vev_point *p, double c24)
{
	p[0] = (struct vev_point){ D(3, 20), 151.70 };
	p[1] = (struct vev_point){ D(3, 23), 150.00 };
	p[2] = (struct vev_point){ D(3, 24), c24 };
	return 3;
}

static struct vev_claim boj(const char *const *cited, size_t n)
{
	return (struct vev_claim){ .bank = "BOJ", .kind = EV_INTERVENTION, .day = D(3, 24),
				   .pair = "USD/JPY", .cited = cited, .ncited = n };
}

/* Reports from Tokyo and London (one the researcher did not cite) and a
 * firmer dollar: confirmed, and the reason names both reports, the
 * uncited story and the move. */
static void test_confirmed_by_other_dateline_and_price(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars against yen "
		  "in Tokyo today, dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "l1", "DOLLAR STEADY IN LONDON", "The Bank of Japan bought dollars in Tokyo "
		  "today, London dealers said.", "LONDON, March 24 -", D(3, 24), NULL, 0 },
		{ "x1", "GOLD FIRMER", "Gold rose two dlrs an ounce.", "ZURICH, March 24 -", D(3, 24), NULL, 0 },
	};
	struct vev_point p[3];
	size_t np = closes(p, 150.75);
	struct vev_claim c = boj(cited1, 1);
	struct vev_result r;
	vev_judge(&c, st, 3, p, np, &r);
	assert_int_equal(r.verdict, VEV_CONFIRMED);
	assert_int_equal(r.ngroups, 2);
	assert_string_equal(r.groups[0].city, "TOKYO");
	assert_string_equal(r.groups[1].city, "LONDON");
	assert_int_equal(r.groups[1].uncited, 1);
	assert_int_equal(r.price, VEV_PRICE_CONSISTENT);
	assert_string_equal(r.firmer, "USD");
	assert_string_equal(r.weaker, "JPY");
	assert_true(fabs(r.pct - 0.5) < 1e-9);
	char *why = vev_reason(&c, &r);
	assert_non_null(strstr(why, "2 independent reports of BOJ intervention on 1987-03-24"));
	assert_non_null(strstr(why, "TOKYO 03-24: t1"));
	assert_non_null(strstr(why, "LONDON 03-24: l1 [1 not cited]"));
	assert_non_null(strstr(why, "USD/JPY 150 (1987-03-23) to 150.75 (1987-03-24), +0.50%"));
	assert_non_null(strstr(why, "consistent"));
	free(why);
}

/* Two stories from one desk on one day are one report: the cited story
 * agreeing with itself is no evidence, so the act stays unverified. */
static void test_same_desk_is_one_report(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars today, "
		  "dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "t2", "BANK OF JAPAN STEPS UP DOLLAR BUYING", "The Bank of Japan bought more "
		  "dollars this afternoon, dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
	};
	static const char *const cited[] = { "t1", "t2" };
	struct vev_point p[3];
	size_t np = closes(p, 150.75);
	struct vev_claim c = boj(cited, 2);
	struct vev_result r;
	vev_judge(&c, st, 2, p, np, &r);
	assert_int_equal(r.ngroups, 1);
	assert_int_equal(r.groups[0].n, 2);
	assert_int_equal(r.verdict, VEV_UNVERIFIED);
}

/* One report and a dollar that fell further than the day before: the
 * price is against, named in the reason, but the act stays unverified
 * (the price corroborates, never refutes). A fall smaller than the day
 * before is "damped" (leaning against the wind), not against. */
static void test_price_against_and_damped(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars today, "
		  "dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
	};
	struct vev_point p[3];
	size_t np = closes(p, 147.00); /* -2.00% after -1.12% */
	struct vev_claim c = boj(cited1, 1);
	struct vev_result r;
	vev_judge(&c, st, 1, p, np, &r);
	assert_int_equal(r.price, VEV_PRICE_AGAINST);
	assert_int_equal(r.verdict, VEV_UNVERIFIED);
	assert_string_equal(r.severity, "");
	char *why = vev_reason(&c, &r);
	assert_non_null(strstr(why, "-2.00% after -1.12% the day before, against"));
	free(why);
	np = closes(p, 149.50); /* -0.33% after -1.12% */
	vev_judge(&c, st, 1, p, np, &r);
	assert_int_equal(r.price, VEV_PRICE_DAMPED);
	assert_int_equal(r.verdict, VEV_UNVERIFIED);
}

/* A story of another desk that denies the act disputes a lone report. */
static void test_denial(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "t1", "BANK OF JAPAN BUYS DOLLARS", "The Bank of Japan bought dollars today, "
		  "dealers said.", "TOKYO, March 24 -", D(3, 24), NULL, 0 },
		{ "n1", "BANK OF JAPAN SAYS NO INTERVENTION", "The Bank of Japan did not intervene "
		  "in the currency market today, a central bank official said.",
		  "TOKYO, March 24 -", D(3, 24), NULL, 0 },
	};
	struct vev_point p[3];
	size_t np = closes(p, 150.00);
	struct vev_claim c = boj(cited1, 1);
	struct vev_result r;
	vev_judge(&c, st, 2, p, np, &r);
	assert_int_equal(r.ndenials, 1);
	assert_string_equal(r.denials, "n1");
	assert_int_equal(r.price, VEV_PRICE_FLAT);
	assert_int_equal(r.verdict, VEV_DISPUTED);
	/* One report against one denial: they balance. */
	assert_int_equal(r.denial_groups, 1);
	assert_string_equal(r.severity, "medium");
	char *why = vev_reason(&c, &r);
	assert_non_null(strstr(why, "denied by n1"));
	free(why);
}

/* A hike three days after the bank's cut, from one story: implausible;
 * the reason names the cut and its story. A cut checks a weaker
 * currency. */
static void test_plausibility_and_rate_direction(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "c1", "BUNDESBANK CUTS DISCOUNT RATE", "The Bundesbank cut its discount rate to "
		  "3.0 pct from 3.5 pct, effective tomorrow.", "FRANKFURT, March 20 -", D(3, 20), NULL, 0 },
		{ "h1", "BUNDESBANK RAISES DISCOUNT RATE", "The Bundesbank raised its discount "
		  "rate to 3.5 pct from 3.0 pct.", "FRANKFURT, March 23 -", D(3, 23), NULL, 0 },
	};
	static const char *const cited[] = { "h1" };
	struct vev_point p[] = { { D(3, 19), 1.80 }, { D(3, 20), 1.80 }, { D(3, 23), 1.81 } };
	struct vev_claim c = { .bank = "Bundesbank", .kind = EV_HIKE, .day = D(3, 23),
			       .pair = "USD/EUR", .cited = cited, .ncited = 1 };
	struct vev_result r;
	vev_judge(&c, st, 2, p, 3, &r);
	assert_non_null(strstr(r.implausible, "Bundesbank cut on 1987-03-20 (c1)"));
	assert_string_equal(r.firmer, "DEM");
	/* USD/EUR up is a weaker mark: against a hike. */
	assert_int_equal(r.price, VEV_PRICE_AGAINST);
	assert_int_equal(r.verdict, VEV_DISPUTED);
	assert_string_equal(r.severity, "high");
	char *why = vev_reason(&c, &r);
	assert_non_null(strstr(why, "plausibility: follows Bundesbank cut on 1987-03-20 (c1)"));
	free(why);

	struct vev_claim cut = { .bank = "Bundesbank", .kind = EV_CUT, .day = D(3, 20),
				 .pair = "USD/EUR", .cited = (const char *const[]){ "c1" },
				 .ncited = 1 };
	vev_judge(&cut, st, 2, p, 3, &r);
	assert_string_equal(r.weaker, "DEM");
	assert_int_equal(r.price, VEV_PRICE_FLAT);
	assert_string_equal(r.implausible, "");
	assert_int_equal(r.verdict, VEV_UNVERIFIED);
}

/* A flash without dateline takes its city from "TOKYO - ..."; flashes
 * without any city of one day are one report. Selling dollars should
 * weaken the dollar. */
static void test_flash_city_and_selling(void **state)
{
	(void)state;
	struct vev_story st[] = {
		{ "f1", "TOKYO - Bank of Japan sold dollars for yen today, dealers said", "", NULL,
		  D(3, 24), NULL, 0 },
		{ "f2", "Bank of Japan sold dollars for yen today, dealers said", "", NULL, D(3, 24), NULL, 0 },
		{ "f3", "Bank of Japan sold dollars this morning, dealers said", "", NULL, D(3, 24), NULL, 0 },
	};
	static const char *const cited[] = { "f1", "f2", "f3" };
	struct vev_point p[3];
	size_t np = closes(p, 149.00);
	struct vev_claim c = boj(cited, 3);
	struct vev_result r;
	vev_judge(&c, st, 3, p, np, &r);
	assert_int_equal(r.ngroups, 2);
	assert_string_equal(r.groups[0].city, "TOKYO");
	assert_string_equal(r.groups[1].city, "");
	assert_int_equal(r.groups[1].n, 2);
	assert_string_equal(r.weaker, "USD");
	assert_string_equal(r.firmer, "JPY");
	assert_int_equal(r.price, VEV_PRICE_CONSISTENT);
	assert_int_equal(r.verdict, VEV_CONFIRMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_confirmed_by_other_dateline_and_price),
		cmocka_unit_test(test_same_desk_is_one_report),
		cmocka_unit_test(test_price_against_and_damped),
		cmocka_unit_test(test_denial),
		cmocka_unit_test(test_plausibility_and_rate_direction),
		cmocka_unit_test(test_flash_city_and_selling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
