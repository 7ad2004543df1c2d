/* The event extractor's readings (agents/events.c), one rule a test, each
 * on sentences written for the test (not copied from the labelled stories):
 * cue words that are not cues, passive rates, asides in commas, verbs of
 * entering the market, partners of a noun, relative clauses. The readings
 * on the archive's stories are in test_news.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "agents/events.h"
#include "agents/market.h"

#include "core/banned.h"

#include "tests/unit/events_check.h"

static size_t policy_facts(const struct ev_story *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += events_is_policy_fact(&s->acts[i]);
	return n;
}

/* Words that look like mode cues but are not: "call money" is a rate, a
 * capitalised "May" the month, "declined" without "to" a falling price. */
static void test_events_false_cues(void **state)
{
	(void)state;
	assert_int_equal(mode_of("The Bank of Spain left its overnight call money rate unchanged "
				 "at 13.5 pct.", "1987-06-03", "BdE", EV_HOLD),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract(NULL, "In May the Bank of England bought sterling, dealers said.",
		       day_of("1987-06-03"), &s);
	const struct ev_act *a = act_of(&s, "BoE", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_FACT);
	/* The month's last weekday: Friday 29 May 1987. */
	assert_int_equal(a->day, day_of("1987-05-29"));
	/* The modal is still a modal. */
	assert_int_equal(mode_of("Dealers said the Bank of England may sell sterling.", "1987-06-03",
				 "BoE", EV_INTERVENTION),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("The dollar declined after the Bank of Japan bought dollars heavily "
				 "in Tokyo.", "1987-04-02", "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The central bank declined to say whether the Bank of Japan sold "
				 "yen.", "1987-04-02", "BOJ", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	/* "reported to have", "thought to have": hearsay. */
	assert_int_equal(mode_of("The Fed was reported to have intervened in New York to support "
				 "the dollar.", "1987-04-02", "Fed", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The Bundesbank is thought to have sold dollars for marks.",
				 "1987-04-02", "Bundesbank", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
}

/* A rate as the subject of a passive verb: its owner ("Italy's") or the
 * agent after "by" acted; a relative clause reports an earlier act. */
static void test_events_passive_rate(void **state)
{
	(void)state;
	const char *d = "1987-03-13";
	assert_int_equal(mode_of("Italy's official discount rate was cut to 11.5 pct from 12 pct.",
				 d, "BdI", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The discount rate was raised to 3.5 pct from 3.0 pct by the "
				 "Bundesbank today.", d, "Bundesbank", EV_HIKE),
			 EV_MODE_FACT);
	/* An announcement for tomorrow is done. */
	assert_int_equal(mode_of("Italy's discount rate would be cut to 11.5 pct effective "
				 "tomorrow, the Treasury said.", d, "BdI", EV_CUT),
			 EV_MODE_FACT);
	/* Expected, and a relative clause. */
	assert_int_equal(mode_of("Economists said Japan's discount rate could be cut again soon.",
				 d, "BOJ", EV_CUT),
			 EV_MODE_EXPECTED);
	struct ev_story s;
	events_extract(NULL, "Japan's discount rate, which was cut to 2.5 pct, is a postwar low.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* A commercial rate cut in the passive is not a central bank's. */
	events_extract(NULL, "U.K. base rates were cut to 10 pct from 10-1/2 pct.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
}

/* A mention in an aside between commas is not the verb's subject. */
static void test_events_aside(void **state)
{
	(void)state;
	struct ev_story s;
	events_extract(NULL, "The Reserve Bank of Australia, using the Fed as its agent, sold "
			     "Australian dollars in New York, dealers said.",
		       day_of("1987-03-13"), &s);
	const struct ev_act *a = act_of(&s, "RBA", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_FACT);
	assert_null(act_of(&s, "Fed", EV_INTERVENTION));
}

/* "stepped in", "entered the market", "came into the market", "was in the
 * market": interventions in the currency market, not the money market. */
static void test_events_market_entry(void **state)
{
	(void)state;
	const char *d = "1987-04-02";
	assert_int_equal(mode_of("Dealers said the Bank of Japan stepped in to buy dollars at "
				 "around 146 yen.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Fed came into the market buying dollars against marks, "
				 "traders said.", d, "Fed", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Swiss National Bank entered the market to sell francs.", d,
				 "SNB", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Dealers said the Bundesbank was in the market selling dollars "
				 "for marks.", d, "Bundesbank", EV_INTERVENTION),
			 EV_MODE_FACT);
	/* Ready to step in: an intention. */
	assert_int_equal(mode_of("The Bank of Japan is ready to step in to support the dollar, "
				 "Sumita said.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_EXPECTED);
	/* The money market is an operation. */
	assert_int_equal(mode_of("The Bank of Japan entered the money market to absorb surplus "
				 "yen.", d, "BOJ", EV_INTERVENTION),
			 -1);
}

/* Banks named as partners of a reported intervention act too; a hedged
 * one does not make its partners act. */
static void test_events_partners(void **state)
{
	(void)state;
	const char *d = "1987-04-02";
	struct ev_story s;
	events_extract(NULL, "The joint intervention by the Fed and the Bundesbank pushed the "
			     "dollar up.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 2);
	assert_non_null(events_find_fact(&s, "Fed", EV_INTERVENTION));
	assert_non_null(events_find_fact(&s, "Bundesbank", EV_INTERVENTION));
	events_extract(NULL, "Traders said the Fed joined the Bank of Japan in selling yen.",
		       day_of(d), &s);
	assert_non_null(events_find_fact(&s, "Fed", EV_INTERVENTION));
	assert_non_null(events_find_fact(&s, "BOJ", EV_INTERVENTION));
	events_extract(NULL, "The Bank of England sold sterling, as did the Bundesbank and the "
			     "Swiss National Bank, dealers said.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 3);
	assert_non_null(events_find_fact(&s, "SNB", EV_INTERVENTION));
	events_extract(NULL, "The central banks of Canada and Britain bought U.S. dollars.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 2);
	assert_non_null(events_find_fact(&s, "BoC", EV_INTERVENTION));
	assert_non_null(events_find_fact(&s, "BoE", EV_INTERVENTION));
	events_extract(NULL, "Concerted intervention by the central banks of the U.S., Japan and "
			     "West Germany lifted the dollar.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 3);
	assert_non_null(events_find_fact(&s, "Bundesbank", EV_INTERVENTION));
	events_extract(NULL, "Dealers said the central banks of Canada and Britain might buy "
			     "U.S. dollars.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
}

/* Words of the currency market used elsewhere: the EC's Intervention
 * Board, a bank's sale of its own currency's securities, a price, a
 * country's exports, a policy that "cut inflation". */
static void test_events_not_currency_market(void **state)
{
	(void)state;
	const char *d = "1987-03-18";
	struct ev_story s;
	events_extract("U.K. INTERVENTION BOARD SELLS BARLEY",
		       "The U.K. Intervention Board sold 20,000 tonnes of barley from intervention "
		       "stocks at the Bank of England's request, it said.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "Leigh-Pemberton said regulators must choose between intervention "
			     "and a free market in the City.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* Still an intervention: the bank right before the noun. */
	assert_int_equal(mode_of("Traders reported heavy Bank of England intervention today.", d,
				 "BoE", EV_INTERVENTION),
			 EV_MODE_FACT);
	/* Amounts of something else, and of a currency. */
	events_extract(NULL, "The Bank of France sold 2.5 billion francs of 8.50 pct state "
			     "guaranteed stock at an auction.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "The Bank of France sold 4.2 billion francs' worth of 13-week "
			     "treasury bills at its tender.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	assert_int_equal(mode_of("Dealers estimate the Fed sold one billion dlrs worth of marks to "
				 "support the dollar.", d, "Fed", EV_INTERVENTION),
			 EV_MODE_FACT);
	/* A price and a country's exports. */
	events_extract(NULL, "U.S. pork sells for 4.20 dlrs per pound in Tokyo.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "U.S. car sales to Japan reached 900 mln dlrs last year.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* A relative clause's verb belongs to the noun before "that". */
	events_extract(NULL, "Volcker ran a tight monetary policy that cut inflation and reduced "
			     "interest rates sharply.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* "announced that its rate would be cut": the bank's own. */
	assert_int_equal(mode_of("Italy announced that its discount rate would be cut to 11.5 pct "
				 "effective tomorrow.", d, "BdI", EV_CUT),
			 EV_MODE_FACT);
}

/* "mark" as a verb, a price paid for something else, a country through
 * "it", prices kept steady: none is a central bank's act. */
static void test_events_not_policy(void **state)
{
	(void)state;
	const char *d = "1987-06-16";
	struct ev_story s;
	events_extract(NULL, "Other members include Britain and Denmark. The changes mark a "
			     "shift, and they mark the end of intervention for grain, officials said.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "A New Zealand holding company said it bought the shares for 4.1 mln "
			     "dlrs.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "Exporters shipped more cargoes to the U.S., keeping spot prices "
			     "steady.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* The rate named before, held as "it", is still a hold. */
	assert_int_equal(mode_of("The Bank of Spain raised its call money rate on Monday. Today "
				 "the bank left it unchanged at 14 pct.", d, "BdE", EV_HOLD),
			 EV_MODE_FACT);
	/* The mark as a currency is still one. */
	assert_int_equal(mode_of("The Bundesbank sold dollars for marks in Frankfurt.", d,
				 "Bundesbank", EV_INTERVENTION),
			 EV_MODE_FACT);
}

/* An official rate held without "unchanged" is a hold ("the Bank of
 * England held its dealing rates"); talks about a rate are not. "bank
 * rate" after the Bank of Canada names the rate, not a commercial bank. */
static void test_events_official_rate_held(void **state)
{
	(void)state;
	const char *d = "1987-04-02";
	assert_int_equal(mode_of("The Bank of England held its money market dealing rates despite "
				 "pressure for a cut.", d, "BoE", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank held its discount rate talks in Frankfurt.", d,
				 "Bundesbank", EV_HOLD),
			 -1);
	assert_int_equal(mode_of("Dealers expect the Bank of England to hold its dealing rates.", d,
				 "BoE", EV_HOLD),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("The Bank of Canada's key bank rate rose to 7.12 pct from 7.05 "
				 "pct.", d, "BoC", EV_HIKE),
			 EV_MODE_FACT);
}

/* A hedge after the act ("..., according to market talk", "..., dealers
 * suspected") makes it hearsay; a plain attribution does not, nor a hedge
 * on another subject after "and". "this year" is not the week. */
static void test_events_tail_hedge(void **state)
{
	(void)state;
	const char *d = "1987-04-06";
	assert_int_equal(mode_of("The Swiss National Bank sold francs for marks, according to "
				 "market talk.", d, "SNB", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The Fed bought yen in New York, some dealers suspected.", d, "Fed",
				 EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The Fed bought yen in New York, dealers said.", d, "Fed",
				 EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Dealers said the Fed bought yen, and traders believed the Bank of "
				 "England sold sterling.", d, "Fed", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank, which has sold about two billion dlrs this year, "
				 "kept out of the market.", d, "Bundesbank", EV_INTERVENTION),
			 EV_MODE_BACKGROUND);
}

/* A market "assuming" a cut expects it; "during May" dates an act. */
static void test_events_expected_and_dated(void **state)
{
	(void)state;
	assert_int_equal(mode_of("The stock market has been assuming a cut in Japan's discount rate.",
				 "1987-06-29", "BOJ", EV_CUT),
			 EV_MODE_EXPECTED);
	struct ev_story s;
	events_extract(NULL, "The Bank of France bought marks worth 9.5 billion francs during May.",
		       day_of("1987-06-18"), &s);
	const struct ev_act *a = act_of(&s, "BdF", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_BACKGROUND);
}

/* Reads a title and body and returns the mode of (bank, kind), -1 when
 * there is no such act. */
static int mode_in(const char *title, const char *body, const char *day, const char *bank,
		   enum ev_kind k)
{
	struct ev_story s;
	events_extract(title, body, day_of(day), &s);
	const struct ev_act *a = act_of(&s, bank, k);
	return a ? (int)a->mode : -1;
}

/* "the central bank" before any bank is named: the bank of the one
 * country the title names, not when it names two; a rate with an
 * official word ("overnight") is the bank's even when "lending" is in it,
 * a commercial bank's "lending rate" is not. */
static void test_events_title_country(void **state)
{
	(void)state;
	const char *d = "1987-05-12";
	const char *body = "Bond prices recovered after the central bank cut the overnight "
			   "money market lending rate to 12 pct from 13 pct.";
	assert_int_equal(mode_in("NORWEGIAN BOND PRICES RECOVER", body, d, "Norges", EV_CUT),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract("NORWEGIAN AND SWEDISH BONDS RECOVER", body, day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* "the bank" alone is not the country's central bank. */
	events_extract("NORWEGIAN BOND PRICES RECOVER",
		       "Prices recovered after the bank cut its overnight rate to 12 pct.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract("NORWEGIAN BOND PRICES RECOVER",
		       "Prices recovered after Christiania Bank cut its lending rate to 12 pct.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
}

/* "central bank intervention" without an article is the story's bank
 * when it has named one, nobody's when it has named two. */
static void test_events_bare_central_bank(void **state)
{
	(void)state;
	const char *d = "1987-06-02";
	assert_int_equal(mode_of("The Bank of Japan watched the yen. The dollar recovered on "
				 "central bank intervention, dealers said.", d, "BOJ",
				 EV_INTERVENTION),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract(NULL, "The Federal Reserve chairman resigned. He is admired at the "
			     "Bundesbank. The dollar fell, prompting central bank intervention, "
			     "dealers said.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
}

/* "has not changed its policy" is a hold; "we" in a quotation is the
 * central bank official who is quoted; other objects are not policy. */
static void test_events_unchanged_policy(void **state)
{
	(void)state;
	const char *d = "1987-06-29";
	assert_int_equal(mode_of("The operation showed the Bank of France has not changed its "
				 "policy, officials said.", d, "BdF", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("\"The purchase shows that we have not changed our policy "
				 "stance,\" a Bundesbank official said.", d, "Bundesbank", EV_HOLD),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract(NULL, "\"We have not changed our policy stance,\" an economist at Chase "
			     "said of the Federal Reserve.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "The Bank of Canada has not changed its forecast for growth.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	assert_int_equal(mode_of("Analysts said the Bank of Italy may not have changed its policy.",
				 d, "BdI", EV_HOLD),
			 EV_MODE_EXPECTED);
}

/* A noun intervention the clause presumes done ("recent", "current",
 * "has carried out") is a fact whatever inference verb precedes it;
 * "further" or "no recent" is not. */
static void test_events_presupposed(void **state)
{
	(void)state;
	const char *d = "1987-06-18";
	assert_int_equal(mode_of("The reserves figures indicate the scale of recent Swiss National "
				 "Bank intervention in the currency markets.", d, "SNB",
				 EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Analysts expect further Swiss National Bank intervention in the "
				 "currency markets.", d, "SNB", EV_INTERVENTION),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("Dealers said there was no recent Swiss National Bank intervention "
				 "in the currency markets.", d, "SNB", EV_INTERVENTION),
			 EV_MODE_DENIED);
	/* "current": now, though the clause names May for another figure. */
	struct ev_story s;
	events_extract(NULL, "Lending rose in May, and the Bank of France looks likely to sell "
			     "bonds to offset its current intervention in the franc.",
		       day_of(d), &s);
	const struct ev_act *a = act_of(&s, "BdF", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_FACT);
	assert_int_equal(a->day, day_of(d));
	/* A reduced relative clause names the bank that intervened. */
	events_extract(NULL, "The scale of currency intervention the Bank of Italy has carried out "
			     "recently shows its resolve to keep the lira stable as agreed in "
			     "February, the minister said.", day_of(d), &s);
	a = act_of(&s, "BdI", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_FACT);
}

/* "the authorities" after a central bank is named are that bank;
 * "discouraging ... from" denies; a country intervenes as its central
 * bank only in a story that has named that bank. */
static void test_events_authorities_and_countries(void **state)
{
	(void)state;
	const char *d = "1987-03-11";
	assert_int_equal(mode_of("The Bank of England sold a tap stock. On Monday the authorities "
				 "finally sanctioned a base rate reduction.", d, "BoE", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bank of France watched. Inflows are discouraging the "
				 "authorities from making a rate cut.", d, "BdF", EV_CUT),
			 EV_MODE_DENIED);
	struct ev_story s;
	events_extract(NULL, "The finance minister told parliament that Japan intervened in the "
			     "market when the dollar fell below 150 yen.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	assert_int_equal(mode_of("The Bank of Japan was active. Japan intervened in the market when "
				 "the dollar fell below 150 yen, dealers said.", d, "BOJ",
				 EV_INTERVENTION),
			 EV_MODE_FACT);
	/* The currency before its buyer; a period's middle. */
	events_extract(NULL, "Dealers overestimated the amount of dollars the Bank of Canada sold "
			     "in the past two weeks.", day_of(d), &s);
	const struct ev_act *a = act_of(&s, "BoC", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_FACT);
	assert_int_equal(a->day, day_of("1987-03-04"));
}

/* Dates that belong elsewhere: a phrase dating the saying or a leading
 * subordinate clause; a retelling of a dated act; "the last ten days of
 * March"; "recent" intervention in a story of the month just ended. */
static void test_events_date_elsewhere(void **state)
{
	(void)state;
	struct ev_story s;
	/* The subordinate clause's "last week" is not the act's day, whatever
	 * the words' distance to the verb. */
	events_extract(NULL, "The Bank of England sold a bond tranche. After stifling pressure "
			     "for a rate cut last week, the authorities sanctioned a base rate "
			     "reduction on Monday, following it with the issue.",
		       day_of("1987-03-11"), &s);
	const struct ev_act *a = act_of(&s, "BoE", EV_CUT);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-09"));
	/* "said last week that ... bought ... during the February-April
	 * period": the purchases are months old, background. */
	events_extract(NULL, "The Federal Reserve said last week that the U.S. monetary "
			     "authorities bought four billion dlrs during the February-April period.",
		       day_of("1987-06-01"), &s);
	a = act_of(&s, "Fed", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_BACKGROUND);
	/* A retelling without a day takes the day of the act told before. */
	events_extract(NULL, "The Bank of Japan is expected to support its discount rate cut "
			     "on February 23. The Bank cut the rate to 2.5 pct from three.",
		       day_of("1987-03-19"), &s);
	a = NULL;
	for (size_t i = 0; i < s.n; i++)
		if (s.acts[i].kind == EV_CUT && s.acts[i].mode == EV_MODE_BACKGROUND)
			a = &s.acts[i];
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-02-23"));
	assert_null(events_find_fact(&s, "BOJ", EV_CUT));
	/* Not when the later act names its own day. */
	events_extract(NULL, "The Bank of Japan cut its discount rate on February 23. "
			     "Today the Bank cut the rate again, to 2.0 pct.",
		       day_of("1987-03-19"), &s);
	a = events_find_fact(&s, "BOJ", EV_CUT);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-19"));
	/* "in the last ten days of March", read on April 1: the period's
	 * middle. */
	events_extract(NULL, "The Bank of Japan bought as much as 10 billion dlrs in the last "
			     "10 days of March.", day_of("1987-04-01"), &s);
	a = events_find_fact(&s, "BOJ", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-26"));
	events_extract(NULL, "The Bank of Japan bought as much as ten billion dlrs in the last "
			     "ten days of January.", day_of("1987-04-01"), &s);
	a = act_of(&s, "BOJ", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_BACKGROUND);
	/* The figures of May, read on June 2: "recent" intervention is May's. */
	events_extract("U.K. RESERVES SHOW RECORD RISE IN MAY",
		       "The rise reflects recent Bank of England intervention to curb sterling.",
		       day_of("1987-06-02"), &s);
	a = events_find_fact(&s, "BoE", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-05-29"));
}

/* The Fed's dollar is in every pair: its intervention with no other
 * currency in its sentence takes those the story names; another bank's
 * does not. */
static void test_events_fed_story_currencies(void **state)
{
	(void)state;
	struct ev_story s;
	events_extract("DOLLAR FALLS BELOW 150 YEN",
		       "The dollar fell against the yen. Dealers said the market challenged the "
		       "authorities despite intervention by the Federal Reserve and the Bank of "
		       "England.", day_of("1987-03-26"), &s);
	const struct ev_act *a = events_find_fact(&s, "Fed", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->nccy, 2);
	assert_string_equal(a->ccys[0], "USD");
	assert_string_equal(a->ccys[1], "JPY");
	a = events_find_fact(&s, "BoE", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->nccy, 1);
	assert_string_equal(a->ccys[0], "GBP");
	/* A story naming no other currency leaves the Fed's dollar alone. */
	events_extract(NULL, "The Federal Reserve intervened to support the dollar, dealers said.",
		       day_of("1987-03-27"), &s);
	a = events_find_fact(&s, "Fed", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->nccy, 1);
}

/* An act belongs to the pairs whose currencies it concerns: the
 * Bundesbank buying dollars for yen is USD/JPY, not EUR/USD; buying
 * dollars for marks, or bare dollars, is EUR/USD. */
static void test_events_pair_relevance(void **state)
{
	(void)state;
	static const struct {
		const char *body, *bank;
		enum ev_kind kind;
		const char *yes, *no; /* a pair it concerns, one it does not */
	} cases[] = {
		{ "The Bundesbank bought dollars for yen in Frankfurt today, dealers said.",
		  "Bundesbank", EV_INTERVENTION, "USD/JPY", "EUR/USD" },
		{ "The Swiss National Bank bought dollars against yen today, dealers said.", "SNB",
		  EV_INTERVENTION, "USD/JPY", "USD/CHF" },
		{ "The Bundesbank sold marks for dollars in Frankfurt today, dealers said.",
		  "Bundesbank", EV_INTERVENTION, "EUR/USD", "USD/JPY" },
		{ "The Bundesbank bought dollars in Frankfurt today, dealers said.", "Bundesbank",
		  EV_INTERVENTION, "EUR/USD", "USD/JPY" },
		/* A BOJ cut: every yen pair, no other. */
		{ "The Bank of Japan cut its discount rate to 2.5 pct from 3.0 pct today.", "BOJ",
		  EV_CUT, "USD/JPY", "EUR/USD" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ev_story s;
		events_extract(NULL, cases[i].body, day_of("1987-03-25"), &s);
		const struct ev_act *a = events_find_fact(&s, cases[i].bank, cases[i].kind);
		assert_non_null(a);
		char yb[4], yq[4], nb[4], nq[4];
		sscanf(cases[i].yes, "%3[A-Z]/%3[A-Z]", yb, yq);
		sscanf(cases[i].no, "%3[A-Z]/%3[A-Z]", nb, nq);
		if (!events_act_touches(a, yb, yq) || events_act_touches(a, nb, nq))
			fail_msg("%s: %s should be under %s, not %s", cases[i].body, cases[i].bank,
				 cases[i].yes, cases[i].no);
	}
}

/* Of several dates in a clause, the one nearest the verb dates the act;
 * "last week" in a Sunday story is the week just ended. */
static void test_events_nearest_date(void **state)
{
	(void)state;
	struct ev_story s;
	events_extract(NULL, "After resisting pressure for a cut last week, the Bank of England "
			     "finally sanctioned a base rate reduction on Monday.",
		       day_of("1987-03-11"), &s);
	const struct ev_act *a = act_of(&s, "BoE", EV_CUT);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-09"));
	events_extract(NULL, "The Bank of Spain, which only yesterday raised its call money rate, "
			     "left it unchanged at today's auction.", day_of("1987-03-05"), &s);
	a = act_of(&s, "BdE", EV_HOLD);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-05"));
	a = act_of(&s, "BdE", EV_HIKE);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-04"));
	/* Sunday 15 March: last week's Wednesday is the 11th. */
	events_extract(NULL, "Last week, dealers said the Federal Reserve intervened to stop the "
			     "dollar rising against the mark.", day_of("1987-03-15"), &s);
	a = act_of(&s, "Fed", EV_INTERVENTION);
	assert_non_null(a);
	assert_int_equal(a->day, day_of("1987-03-11"));
}

/* The evidence is the clause; a long one is cut at a word's end and
 * marked with an ellipsis. */
static void test_events_evidence_cut(void **state)
{
	(void)state;
	char text[1024];
	int k = snprintf(text, sizeof(text), "The Bank of Japan bought dollars for yen in Tokyo today");
	for (int i = 0; i < 60; i++)
		k += snprintf(text + k, sizeof(text) - (size_t)k, " and again");
	snprintf(text + k, sizeof(text) - (size_t)k, ".");
	struct ev_story s;
	events_extract(NULL, text, day_of("1987-03-24"), &s);
	const struct ev_act *a = act_of(&s, "BOJ", EV_INTERVENTION);
	assert_non_null(a);
	size_t n = strlen(a->evidence);
	assert_true(n < EVENTS_EVIDENCE_LEN);
	assert_true(n > EVENTS_EVIDENCE_LEN / 2);
	assert_true(!strncmp(a->evidence, "The Bank of Japan bought dollars for yen in Tokyo today and",
			     59));
	assert_string_equal(a->evidence + n - 13, " and again\xe2\x80\xa6");

	events_extract(NULL, "The Bank of Japan bought dollars for yen in Tokyo today.",
		       day_of("1987-03-24"), &s);
	a = act_of(&s, "BOJ", EV_INTERVENTION);
	assert_non_null(a);
	assert_null(strstr(a->evidence, "\xe2\x80\xa6"));
}

/* "rise" and "reduction" as nouns of an official rate: done when
 * announced, a view when expected; not of base or market rates. A noun's
 * size ("a half-point increase") and a day between it and its rate ("an
 * increase yesterday in the Bank of Spain's ... rate") keep it a noun
 * whose owner acts; a hedge ten words back still hedges it. */
static void test_events_change_nouns(void **state)
{
	(void)state;
	const char *d = "1987-05-06";
	assert_int_equal(mode_of("The Swiss National Bank announced a half-point reduction of its "
				 "Lombard rate to 5.0 pct.", d, "SNB", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bank of Italy announced a one-point rise in its discount "
				 "rate.", d, "BdI", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Traders expect a rise in the Bundesbank's Lombard rate.", d,
				 "Bundesbank", EV_HIKE),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("The Bank of England said the rise in money market rates was "
				 "modest.", d, "BoE", EV_HIKE),
			 -1);
	assert_int_equal(mode_of("The Bank of England watched a rise in bank base rates.", d, "BoE",
				 EV_HIKE),
			 -1);
	struct ev_story s;
	events_extract(NULL, "The step follows a quarter-point increase yesterday in the Bank of "
		       "Spain's overnight call money rate.", day_of(d), &s);
	const struct ev_act *a = act_of(&s, "BdE", EV_HIKE);
	assert_non_null(a);
	assert_int_equal(a->mode, EV_MODE_FACT);
	assert_int_equal(a->day, day_of("1987-05-05"));
	assert_int_not_equal(mode_of("Officials said the plan must not be read as implying an early "
				     "cut in Japan's discount rate.", d, "BOJ", EV_CUT),
			     EV_MODE_FACT);
}

/* A gerund after "on", "of", "for" names a means or a habit ("has relied
 * on raising rates"), not an act; "by raising" reports one; "decision to
 * raise" and "decided today to raise" are decided (a bare stem after them
 * too). */
static void test_events_gerund_and_decision(void **state)
{
	(void)state;
	const char *d = "1987-05-06";
	assert_int_equal(mode_of("The Bank of Italy has relied on raising its discount rate to curb "
				 "credit.", d, "BdI", EV_HIKE),
			 -1);
	assert_int_equal(mode_of("The Bank of Italy acted today by raising its discount rate.", d,
				 "BdI", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bank of Italy's decision to raise its discount rate took "
				 "effect today.", d, "BdI", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank decided today to raise its discount rate.", d,
				 "Bundesbank", EV_HIKE),
			 EV_MODE_FACT);
}

/* Banks by their short names and other names ("SNB", "Nederlandsche
 * Bank", "Bank of Norway"), and official rates named by the words Reuters
 * uses (treasury certificate, rediscount, allocation rates) when a country
 * moves them. */
static void test_events_bank_and_rate_names(void **state)
{
	(void)state;
	const char *d = "1987-05-06";
	assert_int_equal(mode_in("SNB CUTS DISCOUNT RATE TO 3.0 PCT", NULL, d, "SNB", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Nederlandsche Bank raised its rate on secured loans to 5.5 "
				 "pct.", d, "DNB", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_in("BANK OF NORWAY LOWERS OVERNIGHT LENDING RATE", NULL, d, "Norges",
				 EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_in("Belgium cuts three month treasury certificate rate to 6.85 pct",
				 NULL, d, "BNB", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_in("TAIWAN LOWERS REDISCOUNT RATE TO 4.5 PCT", NULL, d, "CBC", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("West Germany raised its allocation rate to 3.85 pct.", d,
				 "Bundesbank", EV_HIKE),
			 EV_MODE_FACT);
}

/* The Bank of Canada's weekly bank rate: "BANK OF CANADA RATE RISES",
 * "the Bank of Canada rate fell"; a rate given without its move is not
 * one. */
static void test_events_canada_bank_rate(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_equal(mode_in("BANK OF CANADA RATE RISES TO 7.54 PCT", NULL, d, "BoC", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bank of Canada rate fell to 7.29 pct from 7.35 pct.", d, "BoC",
				 EV_CUT),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract("CANADA 91-DAY T-BILLS AVERAGE 7.29 PCT, MAKING BANK RATE 7.54 PCT", NULL,
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
}

/* A tender or repurchase rate told with its move ("at a fixed 3.55 pct,
 * down from 3.80") is the rate the bank fixes moved; the same tender at
 * an unchanged rate, or a market rate's move, is not an act; lending by
 * the central bank "at a lower 10 pct" cuts its dealing rate, a
 * commercial bank's does not. */
static void test_events_tender_and_lending_moves(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_equal(mode_of("The Bundesbank set its 28-day securities repurchase tender at a "
				 "fixed 3.55 pct, down from 3.80 pct.", d, "Bundesbank", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank's new repurchase pact carries 3.85 pct, up from "
				 "3.80 pct.", d, "Bundesbank", EV_HIKE),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract(NULL, "The Bundesbank set its securities repurchase tender at a fixed 3.80 "
		       "pct, unchanged from last week.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "The Bundesbank added funds. Call money was 3.55 pct, down from 3.80 "
		       "pct.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	assert_int_equal(mode_of("The Bank of England lent to the discount houses at a lower 10 "
				 "pct.", d, "BoE", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_in(NULL, "The Bank of England gave help. Clearing banks lent to "
				 "customers at a lower rate.", d, "BoE", EV_CUT),
			 -1);
}

/* Currency a central bank bought to repay debt is not an intervention. */
static void test_events_debt_purchase(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_equal(mode_of("The Belgian National Bank bought foreign currency this week. The "
				 "currency purchased was used to repay foreign debt.", d, "BNB",
				 EV_INTERVENTION),
			 -1);
	assert_int_equal(mode_in("BELGIAN CENTRAL BANK BUYS CURRENCY TO REPAY DEBT",
				 "The Belgian National Bank bought foreign currency this week.", d,
				 "BNB", EV_INTERVENTION),
			 -1);
	assert_int_equal(mode_of("The Belgian National Bank bought foreign currency this week.", d,
				 "BNB", EV_INTERVENTION),
			 EV_MODE_FACT);
}

/* A passive official rate without "by": its actor is the central bank the
 * clause names as speaker, else, in a clause naming no actor, the bank
 * last named; not a commercial bank's rate, nor one a minister reports.
 * "made no change to its rates" is a hold. */
static void test_events_passive_actor_and_no_change(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_equal(mode_of("The discount rate was lowered to 2.5 pct, the Bank of Japan said.",
				 d, "BOJ", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank council met today. Its discount and Lombard rates "
				 "were left unchanged.", d, "Bundesbank", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank council made no change to its discount and Lombard "
				 "rates.", d, "Bundesbank", EV_HOLD),
			 EV_MODE_FACT);
	struct ev_story s;
	events_extract(NULL, "The Bundesbank council met today. The prime rate was cut to 7.5 pct.",
		       day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	events_extract(NULL, "The Fed met today. The discount rate was cut, the finance minister "
		       "said.", day_of(d), &s);
	assert_int_equal(policy_facts(&s), 0);
	/* Its "no" is part of the hold, in a title too; "without a rate
	 * change"; a rate "left ... at 3.5 pct"; not a commentator's "voted
	 * no change" nor "expect no change". */
	assert_int_equal(mode_in("NO CHANGE IN BUNDESBANK CREDIT POLICIES", NULL, d, "Bundesbank",
				 EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_in("BUNDESBANK MAKES NO CHANGE IN CREDIT POLICY", NULL, d,
				 "Bundesbank", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_in("BUNDESBANK COUNCIL ENDS MEETING WITHOUT RATE CHANGE", NULL, d,
				 "Bundesbank", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Swiss National Bank left its discount rate at 3.5 pct.", d,
				 "SNB", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("An economist said the Fed's policy committee voted no change in "
				 "policy today.", d, "Fed", EV_HOLD),
			 -1);
	assert_int_not_equal(mode_of("Dealers expect no change in Bundesbank rates on Thursday.", d,
				     "Bundesbank", EV_HOLD),
			     EV_MODE_FACT);
}

/* A country moves its central bank's rate only when the rate is named by
 * an official word of its own ("the rate on three-month treasury
 * certificates", "discount rate"), not by "key" alone; a central bank's
 * own "key rates" are its. A tender word after the move counts too. */
static void test_events_country_named_rate(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_equal(mode_of("West Germany raised its key interest rates today.", d,
				 "Bundesbank", EV_HIKE),
			 -1);
	assert_int_equal(mode_of("Japan's key interest rate was cut today.", d, "BOJ", EV_CUT), -1);
	assert_int_equal(mode_of("The Bundesbank raised its key interest rates today.", d,
				 "Bundesbank", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Belgium increased the rate on three-month treasury certificates "
				 "to 7.10 pct.", d, "BNB", EV_HIKE),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Japan's discount rate was cut today.", d, "BOJ", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank offered funds at 3.80 pct, down from 3.85 pct, in "
				 "a new repurchase tender.", d, "Bundesbank", EV_CUT),
			 EV_MODE_FACT);
}

/* "did not change its intervention rate", "has not changed its discount
 * or Lombard rates": a named official rate left as it was is a hold. */
static void test_events_unchanged_official_rate(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_equal(mode_of("The Bank of France did not change its intervention rate today.", d,
				 "BdF", EV_HOLD),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bundesbank has not changed its discount or Lombard rates "
				 "this month.", d, "Bundesbank", EV_HOLD),
			 EV_MODE_FACT);
}

/* "discount rate cut" is a noun whose rate comes before it, even when a
 * rate follows ("before the Bundesbank discount rate cut that he favoured
 * lower Dutch rates"); a noun act after "before" in a clause with no day
 * is an earlier, known act (background), after "after" it is not;
 * "nothing short of a rate increase would" expects it. */
static void test_events_rate_noun_before(void **state)
{
	(void)state;
	const char *d = "1987-05-07";
	assert_int_not_equal(mode_of("The minister had said before the Bundesbank discount rate cut "
				     "that he favoured lower Dutch rates.", d, "Bundesbank", EV_CUT),
			     EV_MODE_FACT);
	assert_int_equal(mode_of("The minister spoke to parliament before the Bundesbank discount "
				 "rate cut.", d, "Bundesbank", EV_CUT),
			 EV_MODE_BACKGROUND);
	assert_int_equal(mode_of("Dutch rates fell after the Bundesbank discount rate cut.", d,
				 "Bundesbank", EV_CUT),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Nothing short of a Fed discount rate increase, combined with cuts "
				 "abroad, would seem to help the dollar.", d, "Fed", EV_HIKE),
			 EV_MODE_EXPECTED);
}

/* Days counted back: "a week ago", "three days ago", "two weeks ago"
 * (background), "over the weekend" (the Saturday before), "in the past few
 * days" (two days back), "late last week" (the Thursday before). */
static void test_events_days_ago(void **state)
{
	(void)state;
	const char *d = "1987-05-06"; /* a Wednesday */
	const struct {
		const char *body, *day;
		enum ev_mode mode;
	} cases[] = {
		{ "The Bank of France cut its intervention rate a week ago.", "1987-04-29",
		  EV_MODE_FACT },
		{ "The Bank of France cut its intervention rate three days ago.", "1987-05-03",
		  EV_MODE_FACT },
		{ "The Bank of France cut its intervention rate two weeks ago.", "1987-04-22",
		  EV_MODE_BACKGROUND },
		{ "The Bank of Japan bought dollars over the weekend.", "1987-05-02", EV_MODE_FACT },
		{ "The Bank of Japan bought dollars in the past few days.", "1987-05-04",
		  EV_MODE_FACT },
		{ "The Bank of Japan bought dollars late last week.", "1987-04-30", EV_MODE_FACT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ev_story s;
		events_extract(NULL, cases[i].body, day_of(d), &s);
		const struct ev_act *a = s.n ? &s.acts[0] : NULL;
		assert_non_null(a);
		assert_int_equal(a->day, day_of(cases[i].day));
		assert_int_equal(a->mode, cases[i].mode);
	}
}

/* "was a heavy buyer of dollars": a central bank trading currency as a
 * noun, not gilts; "supports" and "propped up" a currency. */
static void test_events_buyer_of_currency(void **state)
{
	(void)state;
	const char *d = "1987-05-06";
	assert_int_equal(mode_of("The Bank of Japan was a heavy buyer of dollars, dealers said.", d,
				 "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Dealers said the Bank of Japan was not a seller of yen.", d, "BOJ",
				 EV_INTERVENTION),
			 EV_MODE_DENIED);
	assert_int_equal(mode_of("The Bank of England was a seller of gilts.", d, "BoE",
				 EV_INTERVENTION),
			 -1);
	/* "BOJ SUPPORTS DOLLAR", "propped up the dollar"; not a policy
	 * for the dollar's stability. */
	assert_int_equal(mode_in("BOJ SUPPORTS DOLLAR - DEALERS", NULL, d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Bank of Japan propped up the dollar in Tokyo, dealers said.",
				 d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Poehl said the Bundesbank supports the dollar's stabilisation.", d,
				 "Bundesbank", EV_INTERVENTION),
			 -1);
}

/* A negation denies the act only when it is the act's own: "did not
 * mention", "was not impressed by", "decided not to follow" negate the
 * saying or the judging (the act is then neither reported nor denied,
 * and a presupposed "this week's intervention" stays done); "no measures
 * other than intervention" leaves the act out of the negation; "not
 * least" is no negation; "did not rule out" expects; "preferred" calls
 * for. Bare plural "central banks" is no one bank, even in a story that
 * has named one. */
static void test_events_negation_scope(void **state)
{
	(void)state;
	const char *d = "1987-05-06";
	assert_int_equal(mode_of("The Bank of Japan did not intervene today, dealers said.", d, "BOJ",
				 EV_INTERVENTION),
			 EV_MODE_DENIED);
	assert_int_equal(mode_of("A spokesman said the Bundesbank had not intervened in the market.",
				 d, "Bundesbank", EV_INTERVENTION),
			 EV_MODE_DENIED);
	assert_int_equal(mode_of("Traders were not overly impressed by this week's intervention by "
				 "the Bank of Japan.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The governor did not mention the Bank of England's intervention "
				 "against the dollar.", d, "BoE", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The Swiss National Bank did not say whether it had bought dollars.",
				 d, "SNB", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("Analysts questioned the Dutch decision not to follow the Bundesbank's "
				 "discount rate cut.", d, "Bundesbank", EV_CUT),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The governor said the Bank of Japan had no measures other than "
				 "intervention planned to steady the yen.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("The Bank of Canada did not rule out a cut in its bank rate.", d,
				 "BoC", EV_CUT),
			 EV_MODE_EXPECTED);
	/* "not least because" is no negation of the act before it; the
	 * governor "preferred" a slow approach: a call, not a cut. */
	assert_int_equal(mode_of("Bank of England Governor Robin Leigh-Pemberton said he preferred a "
				 "slow approach to reducing interest rates, not least because of "
				 "inflation.", d, "BoE", EV_CUT),
			 EV_MODE_CALLED_FOR);
	/* A denial ends where a second verb of its subject starts; the
	 * perfect's "seen" is a sight, and "no sign" after it a denial. */
	assert_int_equal(mode_of("The Fed denied the rumour and bought dollars in New York.", d, "Fed",
				 EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("The Fed denied that it had bought dollars and yen.", d, "Fed",
				 EV_INTERVENTION),
			 EV_MODE_DENIED);
	assert_int_equal(mode_of("Dealers said they had seen no sign of Federal Reserve intervention.",
				 d, "Fed", EV_INTERVENTION),
			 EV_MODE_DENIED);
	struct ev_story s;
	events_extract("FED DENIES DISCOUNT RATE RUMOUR, BUYS DOLLARS", "", day_of(d), &s);
	assert_non_null(act_of(&s, "Fed", EV_INTERVENTION));
	assert_int_equal(act_of(&s, "Fed", EV_INTERVENTION)->mode, EV_MODE_FACT);
	/* A spokesman's denial with no act of its own denies the act the
	 * story told as rumour, before or after it. */
	events_extract("FED SAYS DISCOUNT RATE UNCHANGED",
		       "Rumours that the Federal Reserve had cut its discount rate swept Wall Street, "
		       "but a Fed spokesman said there had been no change.",
		       day_of(d), &s);
	assert_non_null(act_of(&s, "Fed", EV_CUT));
	bool denied = false;
	for (size_t i = 0; i < s.n; i++)
		denied = denied || (!strcmp(s.acts[i].bank, "Fed") && s.acts[i].kind == EV_CUT &&
				    s.acts[i].mode == EV_MODE_DENIED);
	assert_true(denied);
	assert_int_equal(mode_of("A Federal Reserve spokesman said the Board had taken no action on "
				 "the discount rate today, denying rumours on Wall Street of a "
				 "half-point rise.", d, "Fed", EV_HIKE),
			 EV_MODE_DENIED);
	/* "they" after a list of banks is the list, both in a headline's
	 * noun act; "dealers said they" is not a bank. */
	events_extract("BUNDESBANK AND SWISS NATIONAL BANK DENY INTERVENTION",
		       "The Bundesbank and the Swiss National Bank both denied market talk that they "
		       "had bought dollars this morning.",
		       day_of(d), &s);
	assert_non_null(act_of(&s, "Bundesbank", EV_INTERVENTION));
	assert_int_equal(act_of(&s, "Bundesbank", EV_INTERVENTION)->mode, EV_MODE_DENIED);
	assert_non_null(act_of(&s, "SNB", EV_INTERVENTION));
	assert_int_equal(act_of(&s, "SNB", EV_INTERVENTION)->mode, EV_MODE_DENIED);
	events_extract("DOLLAR FIRMER", "The Bank of Japan held its rates. Dealers said they had bought dollars.",
		       day_of(d), &s);
	assert_null(act_of(&s, "BOJ", EV_INTERVENTION));
	/* The act another bank would follow is known, not denied with it. */
	assert_int_equal(mode_of("Duisenberg said he saw no reason for the Dutch central bank to "
				 "follow last week's rise in the Bundesbank's securities repurchase "
				 "rate.", d, "Bundesbank", EV_HIKE),
			 EV_MODE_FACT);
	/* No rumour told: nothing to deny. */
	events_extract("FED SPOKESMAN", "A Fed spokesman said there had been no change.", day_of(d), &s);
	assert_int_equal(s.n, 0);
	events_extract("BANK OF ENGLAND GOVERNOR SPEAKS",
		       "The Bank of England governor spoke to the committee. He said intervention "
		       "by central banks had slowed the dollar's fall.",
		       day_of(d), &s);
	assert_null(act_of(&s, "BoE", EV_INTERVENTION));
}

/* Hedges of belief and evidence: "apparent intervention" (not "apparent
 * confusion ... despite intervention"), "they thought", "signs", "amid
 * caution over", "doubted", "out of the question", "refrained from",
 * "betting on"; "no doubt" hedges nothing, nor "than previously thought".
 * After a noun, its cues follow its actor ("intervention by the Bank of
 * Japan would be"). The FOMC is the Fed. */
static void test_events_hedges(void **state)
{
	(void)state;
	const char *d = "1987-04-08";
	assert_int_equal(mode_of("There was apparent intervention by the Bank of Japan, dealers said.",
				 d, "BOJ", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("Apparent confusion among the G-5 has encouraged the market to "
				 "challenge the authorities despite intervention by the Bank of Japan "
				 "today.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Some dealers said they thought the Bank of Japan had intervened.", d,
				 "BOJ", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The Bank of Japan bought more dollars than previously thought, "
				 "dealers said.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Dealers said there were signs the Bank of Japan was buying dollars.",
				 d, "BOJ", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("The dollar held firm amid caution over Bank of Japan intervention.", d,
				 "BOJ", EV_INTERVENTION),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("Dealers doubted the Fed had intervened.", d, "Fed", EV_INTERVENTION),
			 EV_MODE_RUMOURED);
	assert_int_equal(mode_of("Dealers said there was no doubt the Bank of Japan bought dollars "
				 "today.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_FACT);
	assert_int_equal(mode_of("Intervention by the Bank of Japan would be ineffective, economists "
				 "said.", d, "BOJ", EV_INTERVENTION),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("Poehl said a Bundesbank discount rate cut was out of the question.", d,
				 "Bundesbank", EV_CUT),
			 EV_MODE_DENIED);
	assert_int_equal(mode_of("The Bundesbank refrained from cutting its discount rate.", d,
				 "Bundesbank", EV_CUT),
			 EV_MODE_DENIED);
	assert_int_equal(mode_of("Markets are betting on a Bundesbank discount rate cut.", d,
				 "Bundesbank", EV_CUT),
			 EV_MODE_EXPECTED);
	assert_int_equal(mode_of("The Federal Open Market Committee kept policy unchanged at its "
				 "meeting, the minutes showed.", d, "Fed", EV_HOLD),
			 EV_MODE_FACT);
}

/* The day a story's "today" means: its dateline's (one day either side
 * of the UTC day; a typo leaves the UTC day), else for a flash with no
 * dateline sent after midnight in Tokyo, the next day when it is from an
 * Asian market or tells of "this morning" after 18:00 UTC. */
static void test_events_local_day(void **state)
{
	(void)state;
	int32_t d23 = day_of("1987-03-23");
	assert_int_equal(events_local_day(d23, 19 * 3600, "TOKYO, March 24 -", "X", NULL), d23 + 1);
	assert_int_equal(events_local_day(d23 + 1, 3600, "NEW YORK, March 23 -", "X", NULL), d23);
	assert_int_equal(events_local_day(d23, 12 * 3600, "LONDON, March 23 -", "X", NULL), d23);
	assert_int_equal(events_local_day(day_of("1987-04-02"), 10 * 3600, "PARIS, March 2 -", "X",
					  NULL),
			 day_of("1987-04-02"));
	assert_int_equal(events_local_day(d23, 19 * 3600, NULL,
					  "TOKYO - Bank of Japan buys small amount of dollars", NULL),
			 d23 + 1);
	assert_int_equal(events_local_day(d23, 20 * 3600, "",
					  "Bank of Japan buys dollars around 149.00 yen - Tokyo dealers",
					  NULL),
			 d23 + 1);
	assert_int_equal(events_local_day(d23, 10 * 3600, NULL,
					  "TOKYO - Bank of Japan buys small amount of dollars", NULL),
			 d23);
	assert_int_equal(events_local_day(d23, 19 * 3600 + 57 * 60, NULL,
					  "Bank of Japan bought 200 mln dlrs this morning, dealers said.",
					  NULL),
			 d23 + 1);
	assert_int_equal(events_local_day(d23, 16 * 3600, NULL,
					  "Fed buys dollars this morning, New York dealers say", NULL),
			 d23);
	assert_int_equal(events_local_day(d23, 20 * 3600, NULL, "FED ADDS RESERVES", NULL), d23);
	bool ok;
	assert_int_equal(events_local_day_iso("1987-03-23T19:36:49Z", NULL,
					      "TOKYO - Bank of Japan buys dollars", NULL, &ok),
			 d23 + 1);
	assert_true(ok);
	assert_int_equal(events_local_day_iso("1987-03-23", "TOKYO, March 24 -", NULL, NULL, &ok),
			 d23 + 1);
	(void)events_local_day_iso("yesterday", NULL, NULL, NULL, &ok);
	assert_false(ok);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_false_cues),
		cmocka_unit_test(test_events_passive_rate),
		cmocka_unit_test(test_events_aside),
		cmocka_unit_test(test_events_market_entry),
		cmocka_unit_test(test_events_partners),
		cmocka_unit_test(test_events_not_currency_market),
		cmocka_unit_test(test_events_expected_and_dated),
		cmocka_unit_test(test_events_not_policy),
		cmocka_unit_test(test_events_official_rate_held),
		cmocka_unit_test(test_events_tail_hedge),
		cmocka_unit_test(test_events_evidence_cut),
		cmocka_unit_test(test_events_title_country),
		cmocka_unit_test(test_events_bare_central_bank),
		cmocka_unit_test(test_events_unchanged_policy),
		cmocka_unit_test(test_events_presupposed),
		cmocka_unit_test(test_events_authorities_and_countries),
		cmocka_unit_test(test_events_nearest_date),
		cmocka_unit_test(test_events_date_elsewhere),
		cmocka_unit_test(test_events_fed_story_currencies),
		cmocka_unit_test(test_events_pair_relevance),
		cmocka_unit_test(test_events_change_nouns),
		cmocka_unit_test(test_events_gerund_and_decision),
		cmocka_unit_test(test_events_bank_and_rate_names),
		cmocka_unit_test(test_events_canada_bank_rate),
		cmocka_unit_test(test_events_tender_and_lending_moves),
		cmocka_unit_test(test_events_debt_purchase),
		cmocka_unit_test(test_events_passive_actor_and_no_change),
		cmocka_unit_test(test_events_country_named_rate),
		cmocka_unit_test(test_events_unchanged_official_rate),
		cmocka_unit_test(test_events_rate_noun_before),
		cmocka_unit_test(test_events_days_ago),
		cmocka_unit_test(test_events_buyer_of_currency),
		cmocka_unit_test(test_events_negation_scope),
		cmocka_unit_test(test_events_hedges),
		cmocka_unit_test(test_events_local_day),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
