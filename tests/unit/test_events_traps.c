/* The event extractor's readings found with the blind trap stories of
 * December (tests/data/news-traps.jsonl), one sentence of each kind that
 * was misread. The other readings are in test_events.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "agents/events.h"
#include "tests/unit/events_check.h"

#include "core/banned.h"

/* Readings from the blind challenge stories of December (tests/data/
 * news-traps.jsonl): each a sentence of the kind that was misread. */
static void test_events_trap_readings(void **state)
{
	(void)state;
	const char *d = "1987-09-25";
	struct ev_story s;
	/* A record's "since" dates the record, not the sale. */
	events_extract(NULL, "The Bank of France sold marks to support the franc, which fell to its "
		       "lowest level against the mark since the January realignment, dealers said.",
		       day_of(d), &s);
	assert_non_null(act_of(&s, "BdF", EV_INTERVENTION));
	assert_int_equal(act_of(&s, "BdF", EV_INTERVENTION)->mode, EV_MODE_FACT);
	assert_int_equal(act_of(&s, "BdF", EV_INTERVENTION)->day, day_of(d));
	/* A headline's parts after ';'; a bank the reader does not know. */
	events_extract("BANK OF ENGLAND HOLDS RATES; IRISH RATE CUT",
		       "In Dublin, the Central Bank of Ireland cut its short-term facility rate.",
		       day_of(d), &s);
	assert_null(act_of(&s, "BoE", EV_CUT));
	assert_int_equal(mode_of("In Stockholm, the Swedish central bank left its discount rate at 7.5 "
				 "pct.", d, "Norges", EV_HOLD),
			 -1);
	/* One bank's part of a list called hearsay. */
	events_extract(NULL, "Dealers said the Fed, the Bundesbank and the Swiss National Bank all "
		       "sold dollars, although the Swiss central bank's part could not be confirmed.",
		       day_of(d), &s);
	assert_int_equal(act_of(&s, "Bundesbank", EV_INTERVENTION)->mode, EV_MODE_FACT);
	assert_int_equal(act_of(&s, "SNB", EV_INTERVENTION)->mode, EV_MODE_RUMOURED);
	/* A refusal to move an official rate holds it; a rise signalled is a
	 * hike; a market rate let go is none. */
	assert_int_equal(mode_of("The Bank of England refused to lower its dealing rates.", d, "BoE",
				 EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The base rate rise was engineered by the Bank of England.", d,
				 "BoE", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Fed had allowed the federal funds rate to rise.", d, "Fed",
				 EV_HIKE),
			 -1);
	/* The Bank of Canada's rate, possessive and in the perfect. */
	assert_int_equal(mode_of("The Bank of Canada's bank rate eased to 9.23 pct from 9.31 pct.", d,
				 "BoC", EV_CUT),
			 EV_MODE_FACT);
	/* An "after" clause's act is done; a tender is the offering bank's. */
	assert_int_equal(mode_of("Dealers were wary after the Swiss National Bank sold francs.", d,
				 "SNB", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank offered banks a securities repurchase pact at a fixed "
				 "rate of 3.55 pct, down from 3.80 pct.", d, "Bundesbank", EV_CUT),
			 EV_MODE_FACT);
	/* A second verb with its own auxiliary; hearsay's "that". */
	assert_int_equal(mode_of("The Bundesbank had been ready to act and had bought dollars.", d,
				 "Bundesbank", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Dealers said there were rumours that the Fed and the Bundesbank "
				 "had bought dollars.", d, "Fed", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	/* Taking no part, and not following another bank. */
	events_extract("BANK OF JAPAN BUYS DOLLARS",
		       "The Bank of Japan bought dollars. The Bundesbank did not join in, dealers said.",
		       day_of(d), &s);
	assert_int_equal(act_of(&s, "Bundesbank", EV_INTERVENTION)->mode, EV_MODE_DENIED);
	events_extract("BUNDESBANK CUTS REPURCHASE RATE",
		       "The Bundesbank cut its securities repurchase rate. The Swiss National Bank "
		       "said it would not follow the Bundesbank's move.",
		       day_of(d), &s);
	assert_non_null(act_of(&s, "SNB", EV_CUT));
	assert_int_equal(act_of(&s, "SNB", EV_CUT)->mode, EV_MODE_DENIED);
	/* The council of a central bank; a season to come. */
	events_extract(NULL, "Investors had hoped for a cut at the central bank council meeting of the "
		       "Bundesbank. But the council left the discount and Lombard rates unchanged and "
		       "a cut was unlikely before the autumn.",
		       day_of(d), &s);
	assert_non_null(act_of(&s, "Bundesbank", EV_HOLD));
	assert_int_equal(act_of(&s, "Bundesbank", EV_HOLD)->mode, EV_MODE_FACT);
	assert_int_equal(act_of(&s, "Bundesbank", EV_HOLD)->day, day_of(d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_trap_readings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
