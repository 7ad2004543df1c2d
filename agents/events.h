/* Central-bank acts in a news story, read the way a rates analyst reads
 * them: who acted (a central bank, named or through its officials or its
 * country's "monetary authorities", as against a finance ministry, a
 * government or a commercial bank), what it did, whether the story reports
 * it as done or only as expected, denied, called for, ruled out or
 * rumoured, when, and which currencies it concerns.
 *
 * Method (deterministic, no I/O):
 * - The title is decoded of HTML entities (&lt; &gt; &amp; &quot; &#39;,
 *   &#NN;) like the body, and read as a sentence of its own; the body is
 *   split into sentences (a full stop after an abbreviation such as U.S.
 *   or Corp does not end one), each sentence into clauses at ';' and
 *   ", but".
 * - An act is a verb of its kind whose subject, the nearest actor named
 *   before it in the clause, is a central bank:
 *     cut:   cut(s), lowered, reduced, trimmed ... a rate; signalled,
 *            sanctioned, endorsed, gave way to ... a cut
 *     hike:  raised, increased, lifted, hiked ... a rate
 *     either, as a noun of an official rate: "a rise in", "a reduction
 *            of", "a half-point increase (yesterday) in" (the rate's owner
 *            acts when none is named before); "rate cut" takes the rate
 *            before it; "the Bank of Canada rate rose"; a tender or
 *            repurchase rate "at 3.55 pct, down from 3.80"; lending "at a
 *            lower 10 pct"; a gerund after "on", "of", "for" ("relied on
 *            raising rates") is no act; "decided (today) to", "decision
 *            to" make the verb done
 *     hold:  left, kept, held, maintained ... a rate, policy, credit or
 *            "it" unchanged / steady; held or kept an official rate
 *            ("held its dealing rates"; not "discount rate talks");
 *            resisted pressure for a cut; "has not changed its policy
 *            (stance)", "did not alter its rates", "did not change its
 *            intervention rate", "made no change to its rates", "NO
 *            CHANGE IN BUNDESBANK CREDIT POLICIES", "without a rate
 *            change", "left its discount rate at 3.5 pct", "did not
 *            reflect any change in credit policy" (of a measure), the
 *            FOMC's "(voted to) maintain the existing degree of reserve
 *            restraint"
 *     intervention: intervened (not in a securities or money market);
 *            bought, sold or supported dollars, yen, marks, sterling,
 *            was a buyer or seller of them, supports or propped up one
 *            (not "supports the dollar's stabilisation"),
 *            crowns, currency (not bills, bonds, CDs, a tap stock, "francs
 *            of 8.50 pct stock" or "francs' worth of bills", a price
 *            "for" something else, a country's exports); stepped in,
 *            entered or came into the market, was in the market (with a
 *            currency named, not the money market); "<bank> dollar
 *            purchases / support / sales" as a noun; "intervention" as a
 *            noun with its bank beside it, "by" a bank or a currency in
 *            the clause (not the EC's Intervention Board or farm
 *            intervention prices); banks named as
 *            partners ("with the Bundesbank and the Fed", "intervention
 *            by the Fed and the Bank of Japan", "as did the Bundesbank",
 *            "the Fed joined the Bank of Japan in buying", "the central
 *            banks of Japan and West Germany") act too; "the amount of
 *            sterling the Bank bought" (the currency before its buyer);
 *            "the intervention the Bank of England has carried out";
 *            not currency bought to repay debt ("BUYS CURRENCY TO REPAY
 *            DEBT")
 *     money-market operation: repurchases, reserves, assistance,
 *            liquidity, tenders, bills, advances
 *   A rate as the subject of a passive verb is the object ("Italy's
 *   discount rate was cut", "... was raised by the Bundesbank"; not in a
 *   relative clause); without "by", an official rate's actor is the
 *   central bank named as the speaker (", the Bank of Japan said"), else,
 *   in a clause naming no actor, the bank last named. A mention in an aside between commas is not the
 *   subject ("the Reserve Bank, using the Fed as agent, sold"); a
 *   relative "that"/"which" not right after the bank stands for another
 *   noun ("a policy that cut inflation"). "it" is a country's central
 *   bank only for its official rate, and for an intervention ("Japan
 *   intervened") only once the story has named that bank. "the central
 *   bank" before any bank is named is the bank of the one country the
 *   title names ("DANISH ..."; not "the bank"); "central bank" without an
 *   article ("prompting central bank intervention") is the story's bank
 *   only when the story has named exactly one; "the authorities" are the
 *   central bank last named; "we" in a quotation attributed to a central
 *   bank's official is that bank.
 *   A rate the central bank does not set (prime, base, mortgage,
 *   deposit, broker loan rates) is a commercial bank's act unless a
 *   central bank is the subject. An actor is a central bank by name
 *   ("Bank of Japan", "BOJ", "Federal Reserve", "the Fed"), by its
 *   officials (Sumita, Volcker, Poehl), by "central bank" or "the Bank"
 *   once a central bank has been named, or by a country with an official
 *   rate ("Belgium cuts discount rate") or with "authorities" for an
 *   intervention (a country's rate must be named by an official word of
 *   its own: discount, Lombard, treasury certificate, rediscount ...; not
 *   "key interest rates"); a commercial bank (a name, "banks", "Plc",
 *   "Corp") or
 *   a ministry, Treasury or minister named nearer the verb takes the act.
 *   The owner named with "'s" in the rate ("a cut in Japan's discount
 *   rate") is the bank of the act; a country ending a list of countries,
 *   a country before a currency ("U.S. dollars") and "concerted central
 *   bank" name no single bank; "Norway's central bank" is Norges Bank;
 *   "the National Bank" is the story's central bank.
 * - Mode: a cue between the clause's start and the verb makes the act
 *   denied (not, no, never, denied, ruled out, little room, unlikely),
 *   called for (urged, calls for, pressure for, should), expected
 *   (likely, expected, may, could, would, will, hopes, seen, forecast,
 *   if, ready to, determined to, worried, to <verb>) or rumoured (rumours,
 *   talk, said to, reported to, thought to, understood to, speculation,
 *   whether; not "call money", the month "May" or "declined" without
 *   "to"); favoured calls
 *   for, opposed, ruled out, rather than, ceasing deny. An infinitive
 *   ("to cut") is not done unless decided or agreed; "a cut", "the cut"
 *   and a gerund without "is" or "was" ("said lowering rates could ...")
 *   are nouns, whose mode words may also follow them. A title is read
 *   whole: any cue in it counts. A hedged attribution after a comma
 *   (", according to market rumours", ", dealers suspected") makes a
 *   body's act rumoured; "assuming", "implying", "nothing short of"
 *   expect; a noun act after "before" in a clause without a day ("said
 *   before the Bundesbank discount rate cut") is background; "discouraging",
 *   "dissuading", "deterring ... from" deny. A negation denies the act
 *   only when it is the act's own: "did not mention", "was not impressed
 *   by", "decided not to follow", "did not say whether" negate the
 *   saying or judging (the act is then rumoured, neither reported nor
 *   denied; a presupposed noun stays done); "no measures other than
 *   intervention" leaves the act out; "not least", "not only" are no
 *   negation; "did not rule out" expects; "preferred" calls for.
 *   Bare plural "central banks" names no one bank. Hedges of belief or
 *   evidence: "apparent" just before the act, "they thought" (not "than
 *   previously thought"), "signs", "caution over", "doubted" (not "no
 *   doubt"), "betting on" expect or hearsay; "out of the question",
 *   "refrained from" deny; after a noun its cues are read past its actor
 *   ("intervention by the Bank of Japan would be"), up to the next comma,
 *   "and", "that" or "which". The FOMC is the Fed. "was reported in the
 *   market", a title's "REPORTED SELLING", "a report that" are hearsay
 *   ("dealers reported the Bank bought" is not); "rules out", "refused to
 *   rule out" (expects); a negated size or effect ("was not large", "did
 *   not prevent") and a negated judging verb leave a noun act dated in
 *   its clause done ("not impressed by the Bundesbank's purchases this
 *   morning"). A subject list acts alike ("the Bundesbank and the SNB
 *   bought", "A, B and C all intervened", "neither A nor B", "not only A
 *   but also B", "A, joined by B,"). "was (not) seen in the market",
 *   "had not seen the Fed in the market", "no sign of X in the market",
 *   "NOT IN MARKET" enter (or deny) the market; "stayed out of the
 *   market", "stood aside" deny an intervention. "a bank official" is
 *   the story's bank, "the central bank" before any is named the bank of
 *   the official quoted ("..., a Bank of Japan official said"). A trade
 *   verb with no object ("bought heavily in early trading") intervenes in
 *   a clause about currencies that names nothing else bought. A
 *   nationality owns the official rate it names ("the French
 *   intervention rate", "the West German discount rate"; not "German
 *   interest rates"); "cannot" expects; "would not raise", "we will not
 *   cut" deny (not "would not resist a cut"); "do not expect the bank to
 *   cut" does not; a noun act after "after", "following", "in response
 *   to" is a known one, whatever the main clause's cues; a possessive
 *   makes a noun ("the Federal Reserve's increase in its discount rate");
 *   "dollar buying by the Bank of Japan", "purchases of foreign currency
 *   by the Bank of France"; "bought dollars ..., joined by the
 *   Bundesbank". A headline's act takes the day its body's lead names;
 *   a date after a level compared with ("against 721.10 yesterday", "up
 *   from", "rose to 8.59 pct from 8.58 pct last week", "down from 1.8168
 *   on Friday") dates the level, for the verb and for the clause whose
 *   day a headline takes; a possessive day after "following" or "after"
 *   ("following last week's crash") or after "from <level> in" ("up from
 *   3.80 pct in last week's tender") dates that noun (not "after
 *   Tuesday's auction", the rate's own).
 *   "eased monetary policy", "tightened credit policy" name a stance, no
 *   official rate moved: read only when denied or expected ("would not
 *   loosen monetary policy"), never as done.
 *   Read from the December challenge stories: a denial's object ends
 *   where a second verb of its subject starts ("denied the rumour and
 *   bought dollars", "FED DENIES ... RUMOUR, BUYS DOLLARS"), and a second
 *   verb with its own auxiliary is out of the first's cues ("had been
 *   ready to support the dollar and had bought dollars"); a headline's
 *   part after a comma opening with "no" or "but" ("..., NO CUT SEEN
 *   SOON") and after ';' is another act's; the perfect's "seen" is a
 *   sight ("had seen no sign of Federal Reserve intervention" denies);
 *   a central bank's spokesman denying in a clause with no act of its own
 *   ("there had been no change", "denying rumours of a half-point
 *   rise") denies the act told as rumour; "they" right after a list of
 *   banks is the list; the act another bank would follow is known ("no
 *   reason to follow last week's rise in the Bundesbank's rate"); an act
 *   in the "that" of a hearsay noun ("reports in the Zurich market
 *   that", "rumours on Thursday that the Fed and the Bundesbank had
 *   bought") is hearsay, as are "talked of", "unconfirmed"; "although
 *   the Swiss central bank's part could not be confirmed" makes that
 *   bank's part of a list hearsay; "made a cut ... unnecessary", "ahead
 *   of any cut", "shuns intervention" are not done; a refusal to move an
 *   official rate is a hold; a bank signalling, sanctioning or
 *   engineering a rise is a hike (not a market rate it "allowed" to
 *   move); a bank that "had resisted a rise" in a story of its rise held
 *   nothing; the act of an "after" or "since" clause is done and dated by
 *   its own phrase; "it" after a rate verb is the official rate named
 *   before; a tender at a new fixed rate is the offering bank's; a date
 *   after a record's "since" ("its lowest level since the January
 *   realignment") dates the record; a season after "before", "until"
 *   dates nothing; "the National Bank" is the Belgian, Danish or Swiss
 *   bank the story names, else its dateline's; "the Swedish central
 *   bank", "the Central Bank of Ireland" and other banks without a code
 *   are not the last bank named; "the council" of a story of a central
 *   bank council is that bank; "U.S. DOLLARS" in a headline names no
 *   country; a rate on a special advance or facility is an operation's.
 *   Read from the wire stories (news-wires.jsonl): brokers are not the
 *   bank ("brokers raised the bill discount rate"); a currency a bank
 *   "allowed to rise" is no rate moved ("allowed it to cut its discount
 *   rate" is); "signalled that the Fed wanted lower rates" reports a
 *   reading, no act; the plural "the central banks'", "central banks
 *   spent" name no bank (not "joined other central banks", whose
 *   subject acts); "CUTS SPECIAL ADVANCES RATE" is an operation's rate;
 *   "said they had heard" is hearsay; a habit ("generally followed the
 *   Bundesbank's lead in supporting the dollar") in a clause with no day
 *   is no act; "could not be ruled out" after an aside (", now eight
 *   pct,") expects; "decided at its regular meeting today to leave" is
 *   done; a headline's part after a comma naming another move ("...,
 *   DISMISSES CUT TALK") keeps its cues; "FED AND BUNDESBANK BUY
 *   DOLLARS" is a present, done; "to signal a further cut" expects (the
 *   cut noun is the signal's); "the bank rate rose to 7.63 pct from 7.41"
 *   after the Bank of Canada is named is its rate; "the Bundesbank's move
 *   this week to raise" is done; the "Autumn Statement" is no season.
 *   Days: "effective Monday", "with effect from" name when it applies,
 *   not the act's day; a day after "and" and a second act verb is that
 *   verb's ("and the Fed also bought dollars in New York overnight"), as
 *   is one after "following" and an act noun; "despite yesterday's cut"
 *   dates that cut; a plain day is taken before a possessive one of
 *   another noun ("yesterday's Autumn Statement, and the Bank cut its
 *   rates today"); "after 1.8390 yesterday" is a level's; "during the
 *   month" under a title naming the month just ended is that month. A
 *   headline that drops its auxiliary ("Danish overnight money market
 *   rate cut to 10 pct from 10.5 - central bank") is a passive whose
 *   actor is the central bank after its dash, the bank of the country
 *   the headline names.
 *   A noun intervention the
 *   clause presumes done ("recent", "current", "continuing", "today's",
 *   "this week's", "has carried out"; not "no recent", "further") is a
 *   fact whatever inference verb precedes it ("the figures indicate the
 *   level of recent Bank of England intervention").
 * - Date: the act's day is the publication day (also for "today", "this
 *   afternoon"), moved by "yesterday", a weekday ("on Wednesday"), "last
 *   week" (the Wednesday before), or a date ("on January 28", "February
 *   23"), the one nearest the verb when the clause names several (not
 *   one dating another verb: "said last week that ... bought", a leading
 *   "After ... last week," clause); "in the past two weeks" and "in the
 *   last ten days of March" are the period's middle; "three days ago", "a
 *   week ago" count back, "over the weekend" is the Saturday before, "in
 *   the past few days" two days back, "late last week" its Thursday;
 *   "last week" in a weekend
 *   story is the week just ended; "in New York overnight" is the day
 *   before (not "overnight in Tokyo", seen from Europe); "the previous
 *   day" the day before the clause's other date ("said on Friday it had
 *   raised its rate the previous day"); a date after "said" dates the
 *   saying ("bought this week, bankers said on Thursday"); an
 *   intervention, hike or cut of "this week" with no day is the week's
 *   middle (its Wednesday, once past); "current" and "has carried out" date
 *   a noun intervention on the publication day; a month named in the
 *   first week of the next one is its last
 *   weekday; "last month", "last year", "two months after", "earlier this
 *   year", "this year" or an earlier year make it background. A body's
 *   fact with no day of its own, told after a mention of the same bank's
 *   act of that kind with a past day, retells it and takes that day;
 *   "recent" intervention in a story whose title names the month just
 *   ended ("RISE IN MAY" early in June) is dated that month's last
 *   weekday; "in the week ended April 13" that week's middle. A fact
 *   more than EVENTS_BACKGROUND_DAYS before publication (other than
 *   "last week") is background: reported as fact, but not an act of the
 *   story's week (the labels' line: more than 8 days).
 * - Currencies: the bank's own, and for an intervention those named in
 *   the same sentence; a Fed intervention whose sentence names no other
 *   currency takes those the story names (the dollar is in every pair).
 *
 * Only acts with mode EV_MODE_FACT are events; the others are context. */
#ifndef MADF_EVENTS_H
#define MADF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVENTS_MAX 16          /* acts kept per story */
#define EVENTS_CCY_MAX 4
#define EVENTS_EVIDENCE_LEN 320
#define EVENTS_RECENT_DAYS 7      /* "recent" with no day: a week back */
#define EVENTS_BACKGROUND_DAYS 8  /* older than this before publication: background */

enum ev_kind {
	EV_NONE,
	EV_HIKE,
	EV_CUT,
	EV_HOLD,
	EV_INTERVENTION,
	EV_MMOP,       /* money-market operation */
	EV_STATEMENT,  /* a central bank or its officials speaking */
	EV_DATA,       /* figures a central bank published */
};

enum ev_mode {
	EV_MODE_FACT,
	EV_MODE_BACKGROUND, /* reported as fact, dated before the week */
	EV_MODE_EXPECTED,
	EV_MODE_DENIED,
	EV_MODE_CALLED_FOR,
	EV_MODE_RUMOURED,
};

struct ev_act {
	const char *bank;       /* "BOJ", "Fed", ... (static) */
	const char *bank_name;  /* "Bank of Japan" (static) */
	enum ev_kind kind;
	enum ev_mode mode;
	int32_t day;            /* days since 1970-01-01 */
	bool in_title;
	char ccys[EVENTS_CCY_MAX][4];
	size_t nccy;
	bool own_named;         /* an intervention's sentence names ccys[0] */
	char cue[24];           /* the word that set the mode, "" for a fact */
	char evidence[EVENTS_EVIDENCE_LEN]; /* the clause, decoded */
};

struct ev_story {
	struct ev_act acts[EVENTS_MAX];
	size_t n;
	/* The story's main kind when it has no act: EV_MMOP, EV_STATEMENT,
	 * EV_DATA or EV_NONE; the act's kind otherwise. */
	enum ev_kind kind;
	const char *bank;       /* the first central bank named, or NULL */
};

/* Reads title and body (either may be NULL) published on pub_day and
 * fills *out. One act per (bank, kind, mode) is kept, the title's first.
 * With its dateline ("TAIPEI, July 9 -", or NULL), "the central bank" of
 * a story whose title names no country and that has named no bank is the
 * dateline's country's. */
void events_extract(const char *title, const char *body, int32_t pub_day,
		    struct ev_story *out);
void events_extract_story(const char *title, const char *body, const char *dateline,
			  int32_t pub_day, struct ev_story *out);

/* The day a story's "today" means, for events_extract's pub_day: the
 * day its dateline names ("TOKYO, March 24 -", one day either side of the
 * UTC publication day; a story of Tokyo's morning goes out the UTC evening
 * before), else, for a flash with no dateline sent after 15:00 UTC, the
 * next day when it is from an Asian market ("TOKYO - ...", "... - Tokyo
 * dealers") or tells of "this morning" after 18:00 UTC; else the UTC day.
 * utc_sec is the time of day in seconds. The _iso form reads an ISO 8601
 * published_at ("1987-03-23T19:36:49Z"); *ok is false when it is none. */
int32_t events_local_day(int32_t utc_day, int utc_sec, const char *dateline, const char *title,
			 const char *body);
int32_t events_local_day_iso(const char *published_at, const char *dateline, const char *title,
			     const char *body, bool *ok);

/* True for a hike, cut, hold or intervention reported as done. */
bool events_is_policy_fact(const struct ev_act *a);

/* True when the act concerns the pair BASE/QUOTE (b, q): it names both
 * currencies (the Bank of France buying dollars for yen: USD/JPY), or the
 * pair holds the bank's own currency (ccys[0]) and the act names no other
 * (a BOJ cut: JPY pairs; the BOJ buying dollars: USD/JPY, not EUR/USD).
 * A non-Fed bank's intervention in two other currencies whose sentence
 * never names its own ("the Bundesbank bought dollars for yen") concerns
 * only the pair of those two: USD/JPY, not EUR/USD. The Bundesbank's mark
 * stands for the euro. */
bool events_act_touches(const struct ev_act *a, const char *b, const char *q);

/* The act for (bank, kind) with mode fact, or NULL. */
const struct ev_act *events_find_fact(const struct ev_story *s, const char *bank,
				      enum ev_kind kind);

const char *events_kind_name(enum ev_kind k);   /* "intervention" */
const char *events_mode_name(enum ev_mode m);   /* "expected" */
/* "hike" .. "data" to the kind; EV_NONE when unknown. */
enum ev_kind events_kind_parse(const char *s);

/* A copy of s with HTML entities decoded (&lt; &gt; &amp; &quot; &apos;
 * &#39; &#NN; &#xNN; of printable ASCII); unknown entities are kept as
 * written. NULL gives "". Caller frees. */
char *events_decode_entities(const char *s);

/* The currency of a bank's home market ("JPY" for "BOJ"), NULL if none
 * is known. */
const char *events_bank_ccy(const char *bank);

#endif
