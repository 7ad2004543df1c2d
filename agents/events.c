/* Central-bank acts in a story: actor, act, mode, date and currencies
 * (see events.h for the rules). */
#include "agents/events.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/events_reader.h"
#include "agents/events_text.h"
#include "agents/events_words.h"
#include "core/banned.h"
#include "core/util.h"

/* The vocabulary (banks, actors, mode cues) is in events_words.c. */

/* ---- the story's reading ------------------------------------------------- */

/* Who acted (events_find_mentions, events_subject_of, events_resolve) is in
 * events_actors.c. */

/* ---- verbs ----------------------------------------------------------------- */

enum vform { VF_FINITE, VF_INFINITIVE, VF_NOUN };

/* ---- acts ------------------------------------------------------------------ */

static bool fx_context(const struct clause *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (events_is_ccy(c, i) || is(c, i, "forex") ||
		    ((is(c, i, "foreign") || is(c, i, "currency")) && (is(c, i + 1, "exchange") ||
								      is(c, i + 1, "market"))))
			return true;
	return false;
}

/* A central bank or country named with "'s" inside a rate object
 * ("Japan's discount rate") starting in [lo, hi), or NULL. */
static const struct mention *rate_owner(const struct clause *c, const struct mention *m,
					size_t nm, size_t lo, size_t hi)
{
	for (size_t i = 0; i < nm; i++) {
		if (m[i].pos < lo || m[i].pos >= hi || (m[i].type != A_CB && m[i].type != A_COUNTRY))
			continue;
		if (possessive(c, m[i].pos + m[i].len - 1))
			return &m[i];
		if (m[i].type == A_COUNTRY && events_rate_adjective(c, m[i].pos))
			return &m[i];
	}
	return NULL;
}

static void read_clause(struct reader *r, struct clause *c)
{
	events_clause_words(c);
	events_clause_ccys(c, &r->story_ccys);
	if (c->title) {
		bool o, va, lw, dt;
		int32_t td = events_clause_day_at(c, c->n, r->pub_day, &o, &va, &lw, &dt);
		if (dt && va && !o && td < r->pub_day)
			r->title_month_end = td;
	}
	struct mention m[32];
	size_t nm = events_find_mentions(c, m, ARRAY_SIZE(m));
	for (size_t i = 1; i < c->n && !r->cb_council; i++)
		r->cb_council = (is(c, i, "council") && (is(c, i - 1, "bank") || is(c, i - 1, "bundesbank"))) ||
				/* "the Bank of Japan's policy board" */
				(is(c, i, "board") && is(c, i - 1, "policy") && i >= 2 &&
				 (is(c, i - 2, "bank") || is(c, i - 2, "japan") || is(c, i - 2, "the")));
	bool old = false, vague = false;
	bool last_week = false;
	int32_t day = events_clause_day(c, r->pub_day, &old, &vague, &last_week);
	size_t before = r->out->n;
	for (size_t v = 0; v < c->n; v++) {
		enum ev_kind kind = EV_NONE;
		enum vform form = VF_FINITE;
		bool official = false, priv = false, signal = false, dealing = false;
		bool speaker = false, presup = false, now = false, nochange = false, absent = false;
		bool stance = false;
		const struct mention *owner = NULL, *agent = NULL;
		size_t objend = v, neg = 0, uo;
		enum ev_kind cn = events_change_noun(c, v), lm = events_lend_move(c, v);
		enum ev_kind bm = events_boc_rate_move(c, v);
		/* "The bank rate rose to 7.63 pct from 7.41 pct" in a story of
		 * the Bank of Canada's auction: its rate, moved from a level. */
		if (!bm && v >= 2 && is(c, v - 1, "rate") && is(c, v - 2, "bank") &&
		    (v == 2 || is(c, v - 3, "the")) && r->last_cb && !strcmp(r->last_cb, "BoC")) {
			bool from = false;
			for (size_t k = v + 1; k < c->n && k < v + 8; k++)
				from = from || is(c, k, "from");
			if (from)
				bm = events_rate_move_kind(c, v);
		}
		/* "at the lower dealing rates established this morning": an
		 * adjective, not the verb "lower". */
		if (is(c, v, "lower") && v > 0 && !events_lend_move(c, v) &&
		    (is(c, v - 1, "the") || is(c, v - 1, "a") || is(c, v - 1, "its") ||
		     is(c, v - 1, "their")))
			continue;
		enum ev_kind pm = events_phrasal_move(c, m, nm, v);
		if ((is_any(c, v, events_cut_verbs) || is_any(c, v, events_hike_verbs) || cn || pm) &&
		    !lm && !bm) {
			kind = cn ? cn : pm ? pm : is_any(c, v, events_cut_verbs) ? EV_CUT : EV_HIKE;
			/* "eased" is a cut only with a rate object right after; a
			 * noun's rate may follow a day and an owner ("a half-point
			 * increase yesterday in the Bank of Spain's key overnight
			 * call money rate"). */
			bool nounw = cn || is(c, v, "cut") || is(c, v, "increase") || is(c, v, "hike");
			/* "the Bundesbank discount rate cut that ...": the rate
			 * before the noun is its object, not a rate after it. */
			bool rate_noun = nounw && v > 0 && is_any(c, v - 1, events_rate_words) &&
					 !is_any(c, v - 1, events_be_words) &&
					 /* (a headline's passive: "RATE CUT TO 10 PCT") */
					 !(c->title && is(c, v + 1, "to") && events_number_word(c, v + 2));
			/* "Monday's rise by the Bank of Spain in its overnight call
			 * money rate": the noun's agent, then its rate. */
			size_t ostart = pm && (is(c, v + 1, "up") || is(c, v + 1, "down")) ? v + 2 : v + 1;
			for (size_t i = 0; nounw && is(c, v + 1, "by") && i < nm; i++)
				if (m[i].type == A_CB &&
				    (m[i].pos == v + 2 || (m[i].pos == v + 3 && is(c, v + 2, "the"))) &&
				    is(c, m[i].pos + m[i].len, "in"))
					ostart = m[i].pos + m[i].len, agent = &m[i];
			long o = rate_noun ? -1 :
				 events_rate_object(c, ostart, is(c, v, "eased") || starts(c, v, "loosen") ? 3 :
						    nounw ? 14 : 10,
						    &priv, &official);
			/* "eased monetary policy", "tightened credit policy": a
			 * stance, not an official rate moved (the Rules label a
			 * rate's change only): read only when denied or expected
			 * ("would not loosen monetary policy"). */
			stance = o >= 0 && (is(c, (size_t)o, "policy") || is(c, (size_t)o, "policies")) &&
				 (is(c, v, "eased") || starts(c, v, "tighten") || starts(c, v, "loosen"));
			/* "left its intervention rate unchanged ..., after cutting it
			 * by a quarter point on Tuesday": "it" is the official rate
			 * the clause named before. */
			for (size_t k = v >= 16 ? v - 16 : 0; o < 0 && !rate_noun && is(c, v + 1, "it") &&
							      !c->title && k < v; k++)
				if (is_any(c, k, events_official_rate) && is_any(c, k + 1, events_rate_words))
					o = (long)(v + 1), official = true, priv = false;
			/* "at the dealing rates it raised on Friday", "the rate
			 * which it cut": the rate before, the verb's object. */
			if (o < 0 && !rate_noun && !nounw && v >= 3 && is(c, v - 1, "it")) {
				size_t rp = is_any(c, v - 2, events_rate_words) ? v - 2 :
					    (is(c, v - 2, "which") || is(c, v - 2, "that")) &&
							    is_any(c, v - 3, events_rate_words) ? v - 3 : 0;
				for (size_t k = rp >= 3 ? rp - 3 : 0; rp && k <= rp; k++) {
					official = official || is_any(c, k, events_official_rate);
					priv = priv || is_any(c, k, events_private_rate);
				}
				if (rp && !is(c, rp, "policy") && !is(c, rp, "policies"))
					o = (long)rp;
			}
			long pr = o < 0 && !rate_noun ? events_passive_rate(c, v, &priv, &official) : -1;
			if (pr >= 0) {
				/* "Italy's discount rate would be cut to 11.5 pct". */
				owner = rate_owner(c, m, nm, pr >= 5 ? (size_t)pr - 5 : 0, (size_t)pr);
				objend = (size_t)pr;
			} else if (o < 0) {
				/* "rate cut": a noun. */
				if ((is(c, v, "cut") || is(c, v, "increase") || is(c, v, "hike") || cn) &&
				    v > 0 && is_any(c, v - 1, events_rate_words)) {
					form = VF_NOUN;
					official = v >= 2 && is_any(c, v - 2, events_official_rate);
					priv = v >= 2 && is_any(c, v - 2, events_private_rate);
				} else {
					continue;
				}
			} else {
				objend = (size_t)o;
				owner = rate_owner(c, m, nm, v + 1, objend);
				if (!owner && agent)
					owner = agent; /* "rise by the Bank of Spain in its" */
				/* "a cut in ...", "a further cut": a noun. */
				static const char *const det[] = { "a", "an", "the", "any", "another",
								   "no", "its", "their", NULL };
				/* "a half-point increase", "a 0.5 percentage point cut". */
				bool size = is(c, v - 1, "point") || is(c, v - 1, "points") ||
					    is(c, v - 1, "pct");
				/* "the Federal Reserve's increase in its discount rate",
				 * "last Tuesday's half-point cut": a possessive. */
				bool poss = false;
				for (size_t k = v; k-- > 0 && k + (size ? 4 : 2) > v && !poss;)
					poss = possessive(c, k);
				if (cn || ((is(c, v, "cut") || is(c, v, "increase") || is(c, v, "hike")) &&
					   v > 0 && (poss || is_any(c, v - 1, det) ||
						     (v > 1 && is_any(c, v - 2, det)) ||
						     (size && v > 2 && is_any(c, v - 3, det)) ||
						     (size && v > 3 && is_any(c, v - 4, det)))))
					form = VF_NOUN;
				/* "cuts in official rates elsewhere": the plural noun,
				 * an act of an official rate or of its owner only ("last
				 * week's increases in West German short-term rates" are
				 * the market's). */
				if ((is(c, v, "cuts") || is(c, v, "increases") || is(c, v, "hikes")) &&
				    is(c, v + 1, "in")) {
					form = VF_NOUN;
					if (priv || (!official && !owner))
						continue;
				}
				/* "said lowering rates too fast could ...": a gerund
				 * without "is" or "was" names the act, it does not
				 * report it. */
				size_t wl = strlen(c->w[v].w);
				static const char *const aux[] = { "is", "are", "was", "were", "been",
								   "be", NULL };
				bool gerund = !c->title && wl > 4 && !strcmp(c->w[v].w + wl - 3, "ing");
				if (gerund && !(v > 0 && is_any(c, v - 1, aux)) &&
				    !(v > 1 && is_any(c, v - 2, aux)) && !events_bank_gerund(c, m, nm, v))
					form = VF_NOUN;
				/* "has relied on raising rates", "its strategy of
				 * raising rates": a means or a habit, not an act. */
				static const char *const prep[] = { "on", "of", "for", "about", "toward",
								    "towards", NULL };
				if (gerund && v > 0 && is_any(c, v - 1, prep))
					continue;
			}
			/* A noun "rise" or "reduction" is an act of an official rate
			 * only ("a rise in the Bundesbank's Lombard rate"; not "a
			 * rise in base rates" or in market rates). */
			if (cn && (priv || (!official && !owner)))
				continue;
		} else if ((uo = events_reserve_restraint(c, v)) > 0) {
			/* "maintain the existing degree of reserve restraint":
			 * the FOMC's hold. */
			kind = EV_HOLD;
			objend = uo;
		} else if (is_any(c, v, events_hold_verbs)) {
			bool steady = false;
			for (size_t j = v + 1; j < c->n && j < v + 9; j++)
				if (is(c, j, "unchanged") || is(c, j, "steady") || is(c, j, "stable") ||
				    is(c, j, "firm") || is(c, j, "constant") ||
				    (is(c, j, "on") && is(c, j + 1, "hold")))
					steady = true, objend = j;
			long o = events_rate_object(c, v + 1, 6, &priv, &official);
			/* "kept its discount rate at 2.5 pct", not "policy at dead center";
			 * "held its dealing rates" (an official rate the bank sets,
			 * held or kept without more: unchanged). */
			static const char *const not_rate_obj[] = { "to", "talks", "meeting",
				"meetings", "decision", "council", "discussions", NULL };
			size_t oe = o >= 0 ? (size_t)o : v;
			while (is_any(c, oe + 1, events_rate_words))
				oe++;
			bool kept_official = o >= 0 && (size_t)o <= v + 6 && official &&
					     !is(c, v, "holding") &&
					     !is_any(c, oe + 1, not_rate_obj) &&
					     (starts(c, v, "held") || starts(c, v, "hold") ||
					      starts(c, v, "kept") || starts(c, v, "keep") ||
					      starts(c, v, "maintain"));
			/* "left its discount rate at 3.5 pct": after the rate's
			 * last word. */
			if (!steady && !kept_official &&
			    !(o >= 0 && is(c, oe + 1, "at") && events_number_word(c, oe + 2)))
				continue;
			/* "kept prices steady": a rate, policy or credit is held, or
			 * "it" (the rate named before). */
			bool held = o >= 0 || is(c, v + 1, "it") || is(c, v + 1, "them") ||
				    is(c, v + 1, "unchanged") || is(c, v + 1, "steady");
			for (size_t j = v + 1; j < c->n && j < objend; j++)
				held = held || is(c, j, "credit") || is(c, j, "monetary") ||
				       is(c, j, "money");
			if (!held)
				continue;
			/* "kept money market rates stable with a repurchase pact":
			 * the market's rates steered, no official rate held. */
			if (o >= 1 && (is(c, (size_t)o - 1, "market") || is(c, (size_t)o - 1, "interbank")))
				continue;
			if (!steady && o >= 0)
				objend = (size_t)o;
			if (o < 0 && !steady)
				continue;
			kind = EV_HOLD;
		} else if (is_any(c, v, events_interv_verbs)) {
			/* Not the securities or money market. */
			static const char *const mmw[] = { "money", "reserves", "discount",
				"repurchase", "liquidity", "absorb", "drain", "add", NULL };
			bool mm = false;
			for (size_t j = v + 1; j < c->n && j < v + 8; j++)
				mm = mm || is_any(c, j, events_not_ccy_words) || is_any(c, j, mmw);
			if (mm)
				continue;
			kind = EV_INTERVENTION;
		} else if (is(c, v, "intervention")) {
			/* A noun: "Bank of Japan intervention", "intervention by". */
			if (is(c, v + 1, "rate") || is(c, v + 1, "rates") || is(c, v + 1, "tender") ||
			    is(c, v + 1, "period") || is(c, v + 1, "levels") || is(c, v + 1, "debt") ||
			    is(c, v + 1, "debts") || is(c, v - 1, "market") ||
			    (is(c, v - 1, "reserve") && !is(c, v - 2, "federal")))
				continue;
			/* The EC's "Intervention Board", "intervention prices" for
			 * cereals: farm support, not the currency market. */
			static const char *const farm[] = { "board", "agency", "stocks", "stock",
				"price", "prices", "system", "mechanism", NULL };
			if (is_any(c, v + 1, farm))
				continue;
			/* Without its bank right before it ("Bank of England
			 * intervention", "the Bank's heavy intervention") or after
			 * ("by the Fed"), the noun needs the currency market in the
			 * clause: "between intervention and a free market" is not. */
			bool named = is(c, v + 1, "by");
			for (size_t i = 0; i < nm; i++)
				named = named || ((m[i].type == A_CB || m[i].type == A_GENERIC_CB ||
						   m[i].type == A_COUNTRY) &&
						  (m[i].pos + m[i].len == v || m[i].pos + m[i].len + 1 == v));
			if (!named && !fx_context(c) && !clause_has(c, "exchanges"))
				continue;
			kind = EV_INTERVENTION;
			form = VF_NOUN;
			/* "the intervention the Bank of England has carried out". */
			for (size_t i = 0; i < nm; i++)
				if ((m[i].pos == v + 1 || (m[i].pos == v + 2 && is(c, v + 1, "the"))) &&
				    (m[i].type == A_CB || m[i].type == A_GENERIC_CB) &&
				    events_done_by(c, m[i].pos + m[i].len))
					agent = &m[i];
			/* "has carried out": the present perfect, of late. */
			if (agent && (is(c, agent->pos + agent->len, "has") ||
				      is(c, agent->pos + agent->len, "have")))
				presup = now = true;
		} else if (events_market_entry(c, v) || (absent = events_market_absence(c, v))) {
			/* "stepped in to buy dollars", "entered the market", "was
			 * in the market selling yen": in the currency market only. */
			static const char *const mmw[] = { "money", "reserves", "repurchase",
				"liquidity", "absorb", "drain", "add", "bills", "bonds", "securities",
				"stock", "shares", NULL };
			bool mm = false;
			for (size_t j = v + 1; j < c->n && j < v + 9; j++)
				mm = mm || is_any(c, j, mmw);
			/* "was not seen in the market", "stayed out": the
			 * currency market of a story about currencies too. */
			if (mm || (!fx_context(c) && !((r->story_ccys.nccy || c->title) && !r->title_mm)))
				continue;
			kind = EV_INTERVENTION;
		} else if (events_bank_ccy_noun(c, m, nm, v)) {
			kind = EV_INTERVENTION;
			form = VF_NOUN;
		} else if ((agent = events_ccy_noun_by(c, m, nm, v)) != NULL) {
			/* "heavy dollar buying by the Bank of Japan in March",
			 * "purchases of foreign currency by the Bank of France". */
			kind = EV_INTERVENTION;
			form = VF_NOUN;
		} else if (events_spent_defending(c, v)) {
			/* "spent the equivalent of 4.5 billion dlrs defending the
			 * lira": the bank's money spent in the currency market. */
			kind = EV_INTERVENTION;
		} else if (is_any(c, v, events_trade_verbs)) {
			bool cur = false;
			/* "bought as much as 10 billion dlrs"; "supported the dollar"
			 * with the currency right after (not "supported by"). */
			bool sup = starts(c, v, "support");
			size_t span = sup ? 3 : 8;
			for (size_t j = v + 1; j < c->n && j < v + span; j++) {
				if (is_any(c, j, events_not_ccy_words) || is(c, j, "into"))
					break;
				/* "4.8 billion francs' worth of bills", "1.6 billion
				 * francs of 8.50 pct stock": an amount of what follows
				 * "of", a currency only when it is one ("two billion
				 * dlrs worth of yen"). */
				if (events_is_ccy(c, j) && (is(c, j + 1, "worth") || is(c, j + 1, "of"))) {
					size_t o = j + 1 + is(c, j + 1, "worth");
					/* "marks worth 9.5 billion francs": marks. */
					cur = !is(c, o, "of") || events_is_ccy(c, o + 1) ||
					      events_is_ccy(c, o + 2);
					break;
				}
				/* "sells for 9.77 dlrs", "bought the stake for 2.3 mln
				 * dlrs": a price paid for something else. */
				if (is(c, j, "for") && !cur)
					break;
				/* "supports the dollar's stabilisation": a policy. */
				bool poss = possessive(c, j);
				if ((events_is_ccy(c, j) && !(sup && poss)) ||
				    (is(c, j, "foreign") && is(c, j + 1, "exchange")))
					cur = true;
			}
			/* "bought 500 mln dlrs of (Treasury) bills". */
			for (size_t j = v + 1; j < c->n && j < v + 11; j++)
				cur = cur && !(j > v + 3 && is_any(c, j, events_not_ccy_words));
			/* "bought dollars for a customer", "on behalf of a client":
			 * an order, not the bank's own intervention (not "on behalf
			 * of the U.S. monetary authorities"). */
			static const char *const client[] = { "customer", "customers", "client",
							      "clients", NULL };
			for (size_t j = v + 1; j < c->n && j < v + 9; j++)
				cur = cur && !is_any(c, j, client);
			/* "the amount of sterling the Bank of England bought": the
			 * currency before its buyer. */
			for (size_t i = 0; i < nm && !cur; i++) {
				size_t p = m[i].pos;
				cur = m[i].pos + m[i].len == v && p >= 2 &&
				      (m[i].type == A_CB || m[i].type == A_GENERIC_CB) &&
				      (events_is_ccy(c, p - 1) ||
				       (is(c, p - 1, "the") && events_is_ccy(c, p - 2)));
			}
			/* "the Bank of Japan bought heavily in early trading",
			 * "while the Bank of Japan bought": no object, in a
			 * clause about currencies and nothing else bought. */
			for (size_t i = 0; i < nm && !cur; i++)
				cur = m[i].pos + m[i].len == v && m[i].type == A_CB &&
				      events_no_object(c, v) && fx_context(c);
			if (!cur)
				continue;
			kind = EV_INTERVENTION;
		} else if (is_any(c, v, events_signal_verbs) || (is(c, v, "gave") && is(c, v + 1, "way")) ||
			   events_gave_blessing(c, v)) {
			/* "signalled a cut", "gave way to a cut in base rates";
			 * "the clearers lowered their base rates after the Bank
			 * finally gave its blessing": the move the clause names
			 * before. */
			bool bless = events_gave_blessing(c, v);
			for (size_t j = bless ? 0 : v >= 4 ? v - 4 : 0; j < c->n && j < v + 18; j++)
				if (is(c, j, "cut") || is(c, j, "cuts") || is(c, j, "reduction") ||
				    is(c, j, "lower") || is(c, j, "drop") || is(c, j, "fall") ||
				    (bless && j < v && (is(c, j, "lowered") || is(c, j, "reduced") ||
							is(c, j, "lowering") || is(c, j, "reducing")))) {
					kind = EV_CUT;
					signal = true;
					if ((is(c, v, "signal") || is(c, v, "signals")) && !is(c, v - 1, "to"))
						form = VF_NOUN;
					objend = j;
					break;
				}
			/* "signalled a rise in base rates", "the base rate rise was
			 * engineered by the Bank of England". */
			for (size_t j = bless ? 0 : v >= 4 ? v - 4 : 0; kind == EV_NONE && j < c->n && j < v + 18;
			     j++)
				if (is(c, j, "rise") || is(c, j, "rises") || is(c, j, "increase") ||
				    is(c, j, "hike") || is(c, j, "higher") ||
				    (bless && j < v && (is(c, j, "raised") || is(c, j, "raising")))) {
					kind = EV_HIKE;
					signal = true;
					if ((is(c, v, "signal") || is(c, v, "signals")) && !is(c, v - 1, "to"))
						form = VF_NOUN;
					objend = j;
					break;
				}
			/* "allowed it to rise by six cents", "allowed sterling to
			 * fall": a currency let go, not a rate (unless a rate is
			 * named by the move: "allowed it to cut its discount
			 * rate"). */
			bool ccy_obj = false, rate_obj = false;
			for (size_t j = v + 1; kind != EV_NONE && j < objend + 5 && j < c->n; j++) {
				ccy_obj = ccy_obj || (j < objend && (is_any(c, j, events_ccy_words) ||
								      (is(c, j, "it") && starts(c, v, "allow"))));
				rate_obj = rate_obj || is_any(c, j, events_rate_words);
			}
			if (ccy_obj && !rate_obj)
				kind = EV_NONE;
			/* "allowed the federal funds rate to rise", "allowed money
			 * market rates to drift higher": a market rate let go. */
			for (size_t j = v + 1; kind != EV_NONE && j < c->n && j < v + 8; j++)
				if (is(c, j, "funds") || is(c, j, "interbank") ||
				    (is(c, j, "call") && (is(c, j + 1, "money") || is(c, j + 1, "rate"))) ||
				    (is(c, j, "market") && (is(c, j + 1, "rates") || is(c, j + 1, "rate"))))
					kind = EV_NONE;
			if (kind == EV_NONE)
				continue;
		} else if ((kind = events_new_rates(c, v)) != EV_NONE) {
			/* "bills bought at the lower rates introduced this
			 * morning", "at the lower dealing rates it put in place
			 * yesterday": the bank moved its dealing rates. */
			official = dealing = true;
		} else if ((kind = bm) != EV_NONE) {
			/* "Canada's bank rate rose", "BANK OF CANADA RATE RISES". */
			official = true;
		} else if ((kind = events_tender_move(c, v)) != EV_NONE) {
			/* "its repurchase tender at a fixed 3.55 pct, down from
			 * 3.80": the rate it fixes moved; "The Bundesbank offered
			 * banks a 28-day securities repurchase pact at a fixed rate
			 * of 3.55 pct, down from": the bank that offered it. */
			official = true;
			for (size_t i = 0; i < nm && !agent; i++)
				if (m[i].type == A_CB && m[i].pos < v)
					agent = &m[i];
		} else if ((kind = lm) != EV_NONE) {
			/* "the bank's move to lend to the discount houses at a
			 * lower 10 pct": its dealing rate. */
			official = true;
		} else if ((uo = events_refused_rate(c, v)) > 0) {
			/* "The Bank of England's refusal yesterday to lower its money
			 * market dealing rates": a hold. */
			kind = EV_HOLD;
			objend = uo;
		} else if (is(c, v, "resisted") || is(c, v, "resists") || is(c, v, "fought") ||
			   is(c, v, "resistance") || is(c, v, "resisting")) {
			for (size_t j = v + 1; j < c->n && j < v + 13; j++)
				if (is(c, j, "cut") || is(c, j, "rise") || is(c, j, "lower"))
					kind = EV_HOLD, objend = j;
			if (kind == EV_NONE)
				continue;
		} else if ((uo = events_no_change(c, v)) > 0) {
			/* "made no change to its discount and Lombard rates", "NO
			 * CHANGE IN BUNDESBANK CREDIT POLICIES", "without a rate
			 * change": a hold, its "no" part of it. */
			kind = EV_HOLD;
			objend = uo;
			form = VF_NOUN;
			nochange = true;
			for (size_t i = 0; i < nm && !owner; i++)
				if (m[i].type == A_CB && m[i].pos > v && m[i].pos < uo)
					owner = &m[i];
		} else if ((uo = events_unchanged_policy(c, v, &neg)) > 0 ||
			   (uo = events_no_policy_change(c, v, &neg)) > 0) {
			/* "has not changed its policy stance", "did not reflect
			 * any change in credit policy": a hold. */
			kind = EV_HOLD;
			objend = uo;
		} else {
			continue;
		}
		/* "recent Bank of England intervention", "its current
		 * intervention": presumed done. */
		static const char *const act_nouns[] = { "purchases", "sales", "buying", "selling",
							 NULL };
		if (kind == EV_INTERVENTION && (form == VF_NOUN || is_any(c, v, act_nouns))) {
			size_t np = v;
			for (size_t i = 0; i < nm; i++)
				if (m[i].type != A_OTHER && m[i].pos + m[i].len + 1 >= v && m[i].pos < v)
					np = m[i].pos;
			presup = presup || events_presupposed(c, np, &now);
		}
		/* "to signal a further half-point cut in base rates": the cut
		 * is the infinitive's object, read with it (not expected). */
		bool signalled = false;
		for (size_t k = v >= 6 ? v - 6 : 1; form == VF_NOUN && !signal && k < v; k++)
			signalled = signalled || (is_any(c, k, events_signal_verbs) && is(c, k - 1, "to"));
		if (signalled && (kind == EV_CUT || kind == EV_HIKE))
			continue;
		/* "decided (today) to raise", "its decision to cut": done. */
		bool decided = events_decided_to(c, v);
		if (form != VF_NOUN && v > 0 && is(c, v - 1, "to") && !decided)
			form = VF_INFINITIVE;
		const struct mention *sub = agent ? agent : events_subject_of(m, nm, v, c, form == VF_NOUN);
		/* "The move follows a rise yesterday in the Bank of Spain's call
		 * money rate": the rate's owner is the noun's actor. */
		if (!sub && owner && form == VF_NOUN)
			sub = owner;
		/* "The discount rate was cut, the Bank of Japan said", "the
		 * discount and Lombard rates were left unchanged": a passive
		 * official rate's actor is the central bank the clause names as
		 * its speaker, else, when the clause names no actor, the one
		 * the story named last. */
		struct mention last = { v, 0, A_CB, r->last_cb };
		bool pp, po;
		if (!sub && !c->title && kind != EV_INTERVENTION &&
		    events_passive_rate(c, v, &pp, &po) >= 0 && po && !pp) {
			for (size_t i = 0; i < nm && !sub; i++)
				if (m[i].pos > v && m[i].type == A_CB &&
				    (starts(c, m[i].pos + m[i].len, "sa") ||
				     starts(c, m[i].pos + m[i].len, "announc")))
					sub = &m[i];
			if (!sub && nm == 0 && r->last_cb)
				sub = &last;
		}
		/* "raised the rate on its special advances, but left its official
		 * discount rate unchanged": a second predicate with no subject
		 * of its own is the last bank's (the clause starts at "but"). */
		if (!sub && !c->title && form == VF_FINITE && v >= 1 && v <= 2 && r->last_cb &&
		    (is(c, 0, "but") || is(c, 0, "and")) && (nm == 0 || m[0].pos > v))
			sub = &last;
		/* A headline's source after its dash: "Danish overnight money
		 * market rate cut to 10 pct from 10.5 - central bank" (the
		 * "market" of the rate's name is no actor). */
		const char *dash = c->title ? strstr(c->text, " - ") : NULL;
		if ((!sub || (sub->type == A_OTHER && is_any(c, sub->pos + sub->len, events_rate_words))) &&
		    dash && dash < c->text + c->len && kind != EV_INTERVENTION &&
		    events_passive_rate(c, v, &pp, &po) >= 0 && po && !pp)
			for (size_t i = 0; i < nm; i++)
				if (c->text + c->w[m[i].pos].off > dash &&
				    (m[i].type == A_CB || m[i].type == A_GENERIC_CB)) {
					sub = &m[i];
					break;
				}
		/* "we have not changed our policy," a central bank official
		 * said: the speaker. */
		/* ("our policy stance remains the same," a senior official of
		 * the bank told Reuters.) */
		bool ours = false;
		for (size_t k = neg >= 6 ? neg - 6 : 0; neg && k < neg; k++)
			ours = ours || is(c, k, "our");
		if ((neg >= 2 && (is(c, neg - 1, "we") || is(c, neg - 2, "we"))) || ours) {
			sub = NULL;
			for (size_t i = 0; i < nm; i++) {
				size_t e = m[i].pos + m[i].len, p = m[i].pos;
				if (m[i].pos > v && (m[i].type == A_CB || m[i].type == A_GENERIC_CB) &&
				    (starts(c, e, "official") || starts(c, e, "source") ||
				     is(c, e, "spokesman") || is(c, e, "governor") ||
				     (p >= 2 && is(c, p - 1, "of") &&
				      (starts(c, p - 2, "official") || is(c, p - 2, "spokesman")))))
					sub = &m[i], speaker = true;
			}
		}
		/* Only a central bank sets dealing rates: the nearest one named. */
		for (size_t i = 0; dealing && sub && sub->type != A_CB && i < nm && m[i].pos < v; i++)
			if (m[i].type == A_CB || m[i].type == A_GENERIC_CB)
				sub = &m[i];
		/* "... as other countries have cut": the verb has its own subject. */
		static const char *const subord[] = { "when", "as", "because", "while", "if", "although",
						      "though", "whereas", NULL };
		size_t from_w = sub ? sub->pos + sub->len : v;
		/* "the Bank, using the Fed as agent, sold": an aside in commas. */
		if (from_w < v && comma_before(c, from_w)) {
			size_t close = from_w + 1;
			while (close < v && !comma_before(c, close))
				close++;
			if (close <= v && close + 3 >= v)
				from_w = close;
		}
		for (size_t i = from_w; i < v; i++)
			sub = is_any(c, i, subord) && !is(c, i + 1, "well") ? NULL : sub;
		/* "a tight policy that cut inflation and reduced rates": the
		 * relative pronoun (not right after the bank) stands for a noun
		 * between them, as "said that" is followed by a noun, not the
		 * bank named earlier ("announced that its discount rate ..."
		 * is the bank's own). */
		/* ("the central bank council, which left the discount rate at
		 * 3.0 pct": the bank's own council, board or committee.) */
		static const char *const body_of[] = { "council", "board", "directorate",
			"committee", "policy", "governors", NULL };
		size_t rel_from = sub ? sub->pos + sub->len : v;
		while (rel_from < v && is_any(c, rel_from, body_of))
			rel_from++;
		for (size_t i = sub ? rel_from + 1 : v; i < v; i++)
			if ((is(c, i, "that") || is(c, i, "which")) && !is(c, i + 1, "its") &&
			    !is(c, i + 1, "their"))
				sub = NULL;
		/* "the Bank of England finally bowed to the relentless buying
		 * of sterling", "the Bank of Japan faced heavy dollar selling":
		 * the market's trading the bank met, not its own. */
		bool trade_noun = form == VF_NOUN || (is_any(c, v, act_nouns) &&
						      !(v > 0 && is_any(c, v - 1, events_be_words)));
		if (sub && kind == EV_INTERVENTION && trade_noun && !owner &&
		    events_met_trading(c, sub->pos + sub->len, v))
			sub = NULL;
		/* "U.S. beef sales of 480 mln dlrs": a country's sales or
		 * purchases are trade, not a central bank's. */
		if (sub && kind == EV_INTERVENTION && (is(c, v, "sales") || is(c, v, "purchases")) &&
		    sub->type != A_CB && sub->type != A_GENERIC_CB)
			sub = NULL;
		/* "U.S. striploin sells for": a country buys or sells only as
		 * the verb's own subject ("Japan sold dollars"). */
		if (sub && sub->type == A_COUNTRY && is_any(c, v, events_trade_verbs) &&
		    sub->pos + sub->len + 1 < v)
			sub = NULL;
		if (!sub)
			continue;
		/* A country moves its central bank's rate only when the rate is
		 * named ("Belgium cuts discount rate"); "West Germany raised its
		 * key interest rates" names no official rate. */
		bool country = sub->type == A_COUNTRY || (owner && owner->type == A_COUNTRY);
		if (country && official && (kind == EV_HIKE || kind == EV_CUT) &&
		    !events_named_official(c, objend > v ? objend : v - 1))
			official = false;
		const char *bank = events_resolve(r, c, sub, m, official || kind == EV_HOLD,
					   kind == EV_INTERVENTION);
		/* "The central bank has not intervened ..., a Bank of Japan
		 * official said": before any bank is named, the speaker's. */
		for (size_t i = 0; !bank && sub->type == A_GENERIC_CB && i < nm; i++)
			if (m[i].pos > v && m[i].type == A_CB &&
			    (starts(c, m[i].pos + m[i].len, "official") ||
			     starts(c, m[i].pos + m[i].len, "spokes") ||
			     is(c, m[i].pos + m[i].len, "said") || is(c, m[i].pos + m[i].len, "governor")))
				bank = m[i].code;
		/* "a cut in Japan's discount rate": the rate's owner acts. */
		if (owner && (owner->type != A_COUNTRY || official))
			bank = owner->code;
		else if (owner)
			continue;
		/* "the central banks of Japan and West Germany bought", "by the
		 * central banks of the U.S. and Japan": each country's bank. */
		const struct mention *group = NULL;
		for (size_t i = 0; i < nm && m[i].pos <= sub->pos; i++)
			if (m[i].type == A_GENERIC_CB && is(c, m[i].pos + 1, "banks") &&
			    is(c, m[i].pos + m[i].len, "of") && sub->pos <= m[i].pos + m[i].len + 12)
				group = &m[i];
		if (group && kind == EV_INTERVENTION) {
			size_t k = group->pos + group->len + 1;
			k += is(c, k, "the");
			bank = NULL;
			for (size_t i = 0; i < nm && !bank; i++)
				if (m[i].pos == k && (m[i].type == A_COUNTRY || m[i].type == A_CB))
					bank = m[i].code;
		}
		if (!bank)
			continue;
		/* A rate only commercial banks set, without a named central
		 * bank as the subject, is theirs. */
		if (priv && sub->type != A_CB && !signal)
			continue;
		/* "Dealers said the Bank of England had not intervened ...,
		 * despite the pound's jump after Wednesday's cut in base
		 * rates": a commercial rate's noun far from the bank is the
		 * banks' own. */
		bool after_noun = false;
		for (size_t k = v; k-- > 0 && k + 4 > v;)
			after_noun = after_noun || is(c, k, "after") || is(c, k, "following") ||
				     is(c, k, "before") || is(c, k, "since");
		if (priv && !signal && form == VF_NOUN && sub != owner && sub->pos < v &&
		    sub->pos + sub->len + 3 < v && after_noun)
			continue;
		/* "had let the call rate rise to about 4.0 pct through its
		 * money market operations": a market rate let go, not an
		 * official rate moved (as "allowed the federal funds rate"). */
		if ((kind == EV_HIKE || kind == EV_CUT) && events_let_market_rate(c, v))
			continue;
		/* "raised its seven-day repurchase rate to 8-1/4 pct from 8 pct on
		 * Monday, a money market operation": the story's own word. */
		if ((kind == EV_HIKE || kind == EV_CUT) && events_called_operation(c, v))
			continue;
		/* An intervention needs the currency market: in a story about
		 * the money market "it has intervened" is an operation. */
		if (kind == EV_INTERVENTION && r->title_mm && !fx_context(c))
			continue;
		/* "warned the U.S. not to intervene in the Gulf": no currency. */
		if (kind == EV_INTERVENTION && sub->type == A_COUNTRY && !fx_context(c))
			continue;
		char cue[24] = "";
		bool resist = is(c, v, "resisted") || is(c, v, "resists") || is(c, v, "fought") ||
			      is(c, v, "resistance") || is(c, v, "resisting") ||
			      (kind == EV_HOLD && starts(c, v, "refus"));
		size_t from = c->title ? 0 : sub->pos >= 6 ? sub->pos - 6 : 0;
		if (!c->title && sub->pos > v)
			from = v >= 6 ? v - 6 : 0;
		/* "Asked about reports in the Zurich market that the central bank
		 * had sold francs", "denying a report in the Sunday Times that it
		 * had spent", "rumours on Thursday that the Fed and the
		 * Bundesbank had bought": the hearsay noun whose "that" the act
		 * (its subject's list) is in. */
		size_t hearsay = 0;
		{
			const struct mention *lst[6];
			size_t nl = form == VF_NOUN ? 0 : events_subject_list(c, m, nm, sub, v, lst, 6);
			size_t first = sub->pos;
			for (size_t i = 0; i < nl; i++)
				if (lst[i]->pos < first)
					first = lst[i]->pos;
			for (size_t k = first; !c->title && sub->pos < v && k-- > 0 && k + 4 > first;) {
				if (!is(c, k, "that"))
					continue;
				for (size_t j = k; j-- > 0 && j + 8 > k;)
					if (is(c, j, "reports") || is(c, j, "report") || is(c, j, "rumours") ||
					    is(c, j, "rumour") || is(c, j, "rumors") || is(c, j, "talk") ||
					    is(c, j, "speculation") || is(c, j, "suggestions") ||
					    is(c, j, "suggestion") || is(c, j, "story")) {
						hearsay = j + 1;
						break;
					} else if (starts(c, j, "said") || starts(c, j, "say")) {
						break;
					}
				break;
			}
			/* "had not intervened, contradicting dealers who said it
			 * had sold marks": the claim the speaker denies. */
			if (!hearsay && !c->title && sub->pos < v)
				hearsay = events_contradicted_claim(c, first);
		}
		/* The owner named after a noun ("should not be taken as implying
		 * an immediate cut in Japan's discount rate"): a longer reach. */
		if (!c->title && (sub == owner || (form == VF_NOUN && sub == agent)) && sub->pos > v)
			from = v >= 10 ? v - 10 : 0;
		/* "saw no reason to raise rates after last week's rise in the
		 * Fed's discount rate", "in response to the Fed's increase": a
		 * noun act after "after" is a known one; the cues before are
		 * the main clause's. */
		for (size_t k = v; form == VF_NOUN && !c->title && k-- > from && k + 5 > v;)
			if (is(c, k, "after") || is(c, k, "following") ||
			    (is(c, k, "to") && k > 0 && is(c, k - 1, "response")) ||
			    (is(c, k, "of") && k > 0 && is(c, k - 1, "wake"))) {
				from = k + 1;
				break;
			}
		/* "with dealers still wary after the Swiss National Bank sold
		 * francs", "steady since the central bank recently sold marks":
		 * the act of an "after" or "since" clause is done, whatever the
		 * main clause's cues. */
		if (!c->title && form != VF_NOUN && sub->pos < v && sub->pos >= 1 &&
		    (is(c, sub->pos - 1, "after") || is(c, sub->pos - 1, "since") ||
		     (sub->pos >= 2 && is(c, sub->pos - 1, "the") &&
		      (is(c, sub->pos - 2, "after") || is(c, sub->pos - 2, "since")))) &&
		    from < sub->pos)
			from = sub->pos;
		/* "dealers remained wary of the Bank of England, which sold
		 * pounds heavily on March 23": the relative clause of the bank
		 * is out of the main clause's cues. */
		size_t sub_end = sub->pos + sub->len;
		while (sub_end < v && is_any(c, sub_end, body_of))
			sub_end++;
		if (!c->title && sub->pos < v && sub_end + 1 <= v &&
		    (is(c, sub_end, "which") || is(c, sub_end, "who")) &&
		    comma_before(c, sub_end) && from < sub_end) {
			from = sub_end;
			/* "the Bank of England, which had resisted downward
			 * pressure for weeks, finally gave its blessing": the
			 * relative clause closed before the verb is out of its
			 * cues too. */
			for (size_t k = sub_end + 2; k <= v; k++)
				if (comma_before(c, k)) {
					from = k;
					break;
				}
		}
		/* "FED DENIES DISCOUNT RATE RUMOUR, BUYS DOLLARS": a headline's
		 * second predicate after a comma is out of the first's cues. */
		if (c->title && v > from && comma_before(c, v) && sub->pos < v)
			from = v;
		/* "no reason for the Dutch central bank to follow last week's
		 * rise in the Bundesbank's securities repurchase rate": the
		 * owner's act followed or matched is a known one. */
		for (size_t k = v; form == VF_NOUN && owner && owner->type == A_CB && owner->pos > v &&
				   k-- > from && k + 5 > v;)
			if ((is(c, k, "follow") || is(c, k, "match") || is(c, k, "copy") ||
			     is(c, k, "mirror")) && !is(c, k + 1, "with") && !is(c, k + 1, "suit")) {
				from = k + 1;
				break;
			}
		size_t to = nochange ? v : neg ? neg : c->title && !resist ? c->n : v;
		/* "BUNDESBANK LEAVES RATES UNCHANGED, NO CUT SEEN SOON": a
		 * headline's part after a comma that opens with a negation is
		 * another act's. */
		size_t title_end = c->n;
		for (size_t k = v + 1; c->title && k < c->n && title_end == c->n; k++) {
			if (!comma_before(c, k))
				continue;
			/* "..., DISMISSES CUT TALK": a part naming another move. */
			bool other = is(c, k, "no") || is(c, k, "but");
			for (size_t j = k; j < c->n && !other; j++)
				other = is(c, j, "cut") || is(c, j, "cuts") || is(c, j, "rise") ||
					is(c, j, "rises") || is(c, j, "hike") || is(c, j, "hikes") ||
					is(c, j, "increase") || is(c, j, "easing") ||
					is(c, j, "tightening");
			if (other)
				title_end = k;
		}
		if (c->title && !neg && !nochange && to > title_end)
			to = title_end;
		if (form == VF_NOUN && !c->title)
			from = events_noun_phrase_from(c, from, v);
		enum ev_mode mode = events_mode_between(c, from, to, cue, sizeof(cue));
		/* "stood firm against market pressure for lower rates, keeping
		 * its dealing rates unchanged": the pressure resisted is no
		 * call for the hold. */
		size_t kp = kind == EV_HOLD && mode == EV_MODE_CALLED_FOR && !strcmp(cue, "pressure") ?
				    events_resisted_pressure(c, from, to) : 0;
		if (kp)
			mode = events_mode_between(c, kp + 1, to, cue, sizeof(cue));
		/* After a noun the cues follow its actor too: "intervention by
		 * the Bank of Japan would be ineffective". */
		size_t tail = objend;
		if (sub->pos > v && sub->pos + sub->len > tail)
			tail = sub->pos + sub->len;
		/* "an increase in the Fed's discount rate in response to the
		 * dollar's slide would be an overreaction": an indefinite act's
		 * modal may come after a longer phrase. */
		bool indefinite = form == VF_NOUN && v >= 1 &&
				  (is(c, v - 1, "a") || is(c, v - 1, "an") ||
				   (v >= 2 && (is(c, v - 2, "a") || is(c, v - 2, "an"))));
		if (mode == EV_MODE_FACT && (form == VF_NOUN || c->title) && !signal && !resist)
			mode = events_mode_between(c, v + 1, c->title ? title_end :
						   events_tail_end(c, tail, tail + (form != VF_NOUN ? 4 :
										   indefinite ? 14 : 8)),
						   cue, sizeof(cue));
		if (mode == EV_MODE_EXPECTED && form == VF_NOUN && !c->title &&
		    events_known_effect(c, v, sub, r->pub_day, cue))
			mode = EV_MODE_FACT, cue[0] = 0;
		/* "signal that it does not want to see a reduction". */
		if (mode == EV_MODE_FACT && signal && objend > v &&
		    events_mode_between(c, v + 1, objend, cue, sizeof(cue)) == EV_MODE_DENIED)
			mode = EV_MODE_DENIED;
		/* "the injection signalled that the Fed wanted lower rates":
		 * what the market read, no act done. */
		else if (mode == EV_MODE_FACT && signal && is(c, v + 1, "that"))
			mode = EV_MODE_EXPECTED, snprintf(cue, sizeof(cue), "%s that", c->w[v].w);
		else if (mode == EV_MODE_FACT && signal)
			cue[0] = 0;
		if (mode == EV_MODE_FACT && form == VF_NOUN && !c->title &&
		    events_noun_hypothetical(c, v, cue, sizeof(cue)))
			mode = EV_MODE_EXPECTED;
		if (mode == EV_MODE_FACT && hearsay)
			mode = EV_MODE_RUMOURED, snprintf(cue, sizeof(cue), "%s", c->w[hearsay - 1].w);
		/* "..., according to market rumours", "..., dealers believed":
		 * an attribution after the act that makes it hearsay. */
		if (mode == EV_MODE_FACT && !c->title && sub->pos < v)
			mode = events_tail_hedge(c, m, nm, v, cue, sizeof(cue), mode);
		/* "central banks generally followed the Bundesbank's lead in
		 * supporting the dollar": a habit, no act of a day (not "the
		 * Bundesbank, which normally stays out, bought today"). */
		size_t habit = mode == EV_MODE_FACT && !c->title && !events_clause_dated(c) ?
				       events_habit(c, v) : 0;
		if (!habit && mode == EV_MODE_FACT && !r->chronology && !events_clause_dated(c) &&
		    events_present_practice(c, v))
			habit = v + 1;
		if (habit)
			mode = EV_MODE_EXPECTED, snprintf(cue, sizeof(cue), "%s", c->w[habit - 1].w);
		/* Inside a quotation from a commentator: a view. */
		if (mode == EV_MODE_FACT && !c->title && memchr(c->text, '"', c->w[v].off) &&
		    sub->type != A_CB && !speaker) {
			mode = EV_MODE_EXPECTED;
			snprintf(cue, sizeof(cue), "quoted view");
		}
		/* "would be cut ... effective tomorrow": announced. */
		if ((mode == EV_MODE_EXPECTED) && (!strcmp(cue, "will") || !strcmp(cue, "would")) &&
		    clause_has(c, "effective"))
			mode = EV_MODE_FACT, cue[0] = 0;
		bool made = form == VF_INFINITIVE && events_made_to(c, v);
		if (mode == EV_MODE_FACT && form == VF_INFINITIVE && !made) {
			mode = EV_MODE_EXPECTED;
			snprintf(cue, sizeof(cue), "to %s", c->w[v].w);
		}
		if (mode == EV_MODE_FACT && (is(c, v, "lower") || is(c, v, "reduce") ||
					     is(c, v, "trim") || is(c, v, "raise") ||
					     is(c, v, "increase") || is(c, v, "lift") ||
					     is(c, v, "hike") || is(c, v, "buy") || is(c, v, "sell") ||
					     is(c, v, "intervene") || is(c, v, "keep") ||
					     is(c, v, "step") || is(c, v, "enter") || is(c, v, "come") ||
					     is(c, v, "leave") || is(c, v, "hold") ||
					     is(c, v, "maintain")) && form != VF_NOUN && !lm && !decided && !made &&
		    !events_plural_banks_before(c, m, nm, v)) {
			/* A bare stem after a modal or in a headline's
			 * "MAY CUT" is handled above; elsewhere it is not a
			 * report of a done act. */
			mode = EV_MODE_EXPECTED;
			snprintf(cue, sizeof(cue), "%s", c->w[v].w);
		}
		if (presup && (mode == EV_MODE_EXPECTED ||
			       (mode == EV_MODE_RUMOURED && !strncmp(cue, "not ", 4))))
			mode = EV_MODE_FACT, cue[0] = 0;
		/* "not impressed by the Bundesbank's dollar purchases this
		 * morning", "did not follow yesterday's rise": a dated noun after
		 * a negated judging or imitating verb is done. */
		if (mode == EV_MODE_RUMOURED && form == VF_NOUN && events_factive_cue(cue) &&
		    events_clause_dated(c))
			mode = EV_MODE_FACT, cue[0] = 0;
		/* "having said before the Bundesbank discount rate cut": a
		 * noun act that dates something else is an earlier, known act. */
		if (mode == EV_MODE_FACT && form == VF_NOUN && events_before_noun(c, v) &&
		    !events_clause_dated(c))
			mode = EV_MODE_BACKGROUND, snprintf(cue, sizeof(cue), "before");
		/* Of several dates in the clause, the one nearest the verb. */
		bool dated = false;
		day = events_clause_day_at(c, v, r->pub_day, &old, &vague, &last_week, &dated);
		int32_t d = presup && now ? r->pub_day : day;
		/* "sold dollars this week", "this week's intervention", "raised
		 * its rate this week": the week's middle, no day being named
		 * (not a hold, which lasts to the story's day). */
		int32_t mid = kind != EV_HOLD && !dated ? events_midweek(c, r->pub_day) : -1;
		if (mid >= 0)
			d = mid, dated = true;
		/* "recent intervention" in a story of the figures of the month
		 * just ended ("RESERVES SHOW RECORD RISE IN MAY"): that month. */
		if (presup && !now && !dated && r->title_month_end)
			d = r->title_month_end, dated = true;
		/* "its purchases ... during the month" under "RESERVES RISE IN
		 * FEBRUARY": the month the title names, vague. */
		else if (!dated && r->title_month_end && events_the_month(c))
			d = r->title_month_end, dated = vague = true;
		/* "recent Bank of England intervention", no day named: a week
		 * back, as the labels read "recent". */
		else if (presup && !now && !dated)
			d = r->pub_day - EVENTS_RECENT_DAYS, vague = true;
		/* (A "recent" act is dated, vaguely: a week back.) */
		r->cur_dated = dated || presup;
		if (mode == EV_MODE_FACT &&
		    ((old && !(presup && now)) || (d < r->pub_day - EVENTS_BACKGROUND_DAYS && !last_week)))
			mode = EV_MODE_BACKGROUND;
		if (stance && (mode == EV_MODE_FACT || mode == EV_MODE_BACKGROUND))
			continue;
		/* "stayed out of the market": not done. */
		if (absent && mode == EV_MODE_FACT)
			mode = EV_MODE_DENIED, snprintf(cue, sizeof(cue), "%s", c->w[v].w);
		events_story_add(r, c, bank, kind, mode, cue, d, vague);
		/* The other banks of the subject's list act alike. */
		const struct mention *co[6];
		/* A noun act takes the list of the subject before it
		 * ("BUNDESBANK AND SWISS NATIONAL BANK DENY INTERVENTION"). */
		size_t nco = form == VF_NOUN && sub->pos > v ? 0 :
			     events_subject_list(c, m, nm, sub, v, co, 6);
		if (sub->type == A_PRONOUN && is(c, sub->pos, "they") && sub > m) {
			const struct mention *p = sub - 1;
			while (p > m && p->type == A_OTHER &&
			       (is(c, p->pos, "market") || is(c, p->pos, "markets")))
				p--;
			nco = events_subject_list(c, m, nm, p, p->pos + p->len, co, 6);
		}
		for (size_t i = 0; i < nco; i++)
			events_story_add(r, c, co[i]->code, kind, mode, cue, d, vague);
		if (group && kind == EV_INTERVENTION && mode == EV_MODE_FACT)
			events_add_list(r, c, m, nm, group->pos, kind, d, vague);
		if (kind == EV_INTERVENTION && mode == EV_MODE_FACT)
			events_add_partners(r, c, m, nm, v, form == VF_NOUN, d, vague);
	}
	if (r->out->n == before)
		events_rumour_denied(r, c, m, nm);
	events_part_doubted(r, c, m, nm);
	events_this_was_talk(r, c);
	events_not_follow(r, c, m, nm);
	if (r->out->n == before)
		events_took_no_part(r, c, m, nm);
	events_no_sign_of_it(r, c, m, nm);
	events_others_said(r, c);
	r->prev_from = before;
	r->prev_to = r->out->n;
	if (r->out->n > before)
		r->last_from = before, r->last_to = r->out->n, r->since_last = 0;
	else
		r->since_last = events_names_only_last(r, m, nm) ? r->since_last + 1 : 99;
	/* Context: money-market words and the actors named. */
	static const char *const mmw[] = { "money", "repurchase", "repurchases", "reserves",
		"assistance", "liquidity", "tender", "advances", "help", "shortage", NULL };
	static const char *const dataw[] = { "figures", "data", "showed", "statistics",
		"return", "supply", NULL };
	for (size_t i = 0; i < c->n; i++) {
		if (is_any(c, i, mmw))
			r->mm_words = true;
		if (is_any(c, i, dataw))
			r->data_words = true;
	}
	for (size_t i = 0; i < nm; i++) {
		if (m[i].type == A_OTHER)
			continue;
		if (m[i].type == A_PRONOUN)
			continue;
		const char *b = m[i].type == A_CB ? m[i].code :
				m[i].type == A_GENERIC_CB ? (r->last_cb ? r->last_cb : r->story_bank) :
				NULL;
		r->last_type = m[i].type;
		r->last_code = m[i].code;
		if (b) {
			r->last_cb = b;
			bool seen = false;
			for (size_t k = 0; k < r->nnamed; k++)
				seen = seen || !strcmp(r->named[k], b);
			if (!seen && r->nnamed < ARRAY_SIZE(r->named))
				r->named[r->nnamed++] = b;
			if (!r->story_bank)
				r->story_bank = b;
		}
	}
}

/* A headline's comma before a part naming another central bank ("BANK OF
 * JAPAN BUYS DOLLARS, FED ROLE UNCONFIRMED", "BOJ BUYS DOLLARS, FED SAID
 * TO JOIN"): a part of its own, its hedge not the first part's. Not a
 * list of banks ("BANK OF FRANCE, BUNDESBANK BUY DOLLARS": the part before
 * is a name and nothing else) and not an attribution ("..., DEALERS
 * SAY", no bank after the comma). */
static bool title_part_comma(const char *text, size_t st, size_t i, size_t len)
{
	struct clause *a = xcalloc(1, sizeof(*a)), *b = xcalloc(1, sizeof(*b));
	a->text = text + st, a->len = i - st, a->title = true;
	b->text = text + i + 1, b->len = len - i - 1, b->title = true;
	const char *comma = memchr(b->text, ',', b->len);
	if (comma)
		b->len = (size_t)(comma - b->text);
	events_clause_words(a);
	events_clause_words(b);
	struct mention ma[16], mb[16];
	size_t na = events_find_mentions(a, ma, 16), nb = events_find_mentions(b, mb, 16);
	size_t named = 0;
	for (size_t k = 0; k < na; k++)
		named += ma[k].len;
	bool cb = false, hedge = false;
	for (size_t k = 0; k < nb; k++)
		cb = cb || mb[k].type == A_CB;
	/* Only a part with a hedge of its own ("..., FED BUYS" keeps the
	 * first part's currency). */
	static const char *const part[] = { "role", "part", "involvement", "participation", NULL };
	for (size_t k = 0; k < b->n; k++)
		hedge = hedge || events_cue_at(b, k) || is_any(b, k, part);
	bool split = cb && hedge && named < a->n && b->n >= 2;
	free(a);
	free(b);
	return split;
}

/* Splits text into clauses and reads each. */
static void read_text(struct reader *r, const char *text, bool title)
{
	size_t len = strlen(text), st = 0;
	for (size_t i = 0; i <= len; i++) {
		bool end = i == len;
		size_t cut = i, next = i + 1;
		/* "BANK OF ENGLAND HOLDS RATES AFTER ELECTION; IRISH RATE CUT":
		 * a headline's parts are clauses of their own. */
		if (!end && title && text[i] == ';')
			end = true;
		if (!end && title && text[i] == ',' && text[i + 1] == ' ' &&
		    title_part_comma(text, st, i, len))
			end = true, next = i + 2;
		if (!end && !title) {
			char ch = text[i];
			if ((ch == '.' || ch == '?' || ch == '!') && (i + 1 == len || isspace((unsigned char)text[i + 1])) &&
			    !events_abbreviation(text, i))
				end = true;
			else if (ch == ';')
				end = true;
			else if (ch == '\n' && i + 1 < len && (text[i + 1] == ' ' || text[i + 1] == '\n'))
				end = true;
			else if (ch == ',' && !strncmp(text + i, ", but ", 6))
				end = true, next = i + 2;
			else if (ch == ' ' && !strncmp(text + i, " -- ", 4))
				end = true, next = i + 4;
		}
		if (!end)
			continue;
		if (cut > st) {
			struct clause *c = xcalloc(1, sizeof(*c));
			c->text = text + st;
			c->len = cut - st;
			c->title = title;
			read_clause(r, c);
			free(c);
		}
		/* The lead ends with the first full stop. */
		if (!title && i < len && text[i] != ';' && text[i] != ',')
			r->lead = false;
		st = next;
		i = next - 1;
	}
}

void events_extract(const char *title, const char *body, int32_t pub_day,
		    struct ev_story *out)
{
	events_extract_story(title, body, NULL, pub_day, out);
}

void events_extract_story(const char *title, const char *body, const char *dateline,
			  int32_t pub_day, struct ev_story *out)
{
	memset(out, 0, sizeof(*out));
	struct reader r = { .pub_day = pub_day, .out = out, .last_type = A_OTHER };
	char *t = events_decode_entities(title);
	char *b = events_decode_entities(body);
	/* "JAPAN'S RESERVES FALL" over "foreign exchange reserves fell":
	 * the currency reserves, not the banks' reserves of a money-market
	 * story. */
	bool fx_reserves = b && (strcasestr(b, "exchange reserves") || strcasestr(b, "currency reserves") ||
				 strcasestr(b, "foreign reserves") || strcasestr(b, "gold reserves") ||
				 strcasestr(b, "foreign exchange holdings"));
	for (char *p = t; *p && !r.title_mm; p++)
		r.title_mm = !strncasecmp(p, "money market", 12) ||
			     (!strncasecmp(p, "reserves", 8) && !fx_reserves) ||
			     !strncasecmp(p, "repurchase", 10) || !strncasecmp(p, "assistance", 10) ||
			     !strncasecmp(p, "liquidity", 9);
	r.title_country = events_title_country(t);
	r.chronology = events_chronology(t, b);
	if (!r.title_country)
		r.title_country = events_dateline_country(dateline);
	read_text(&r, t, true);
	/* The title's actor does not carry into the body's first "it". */
	r.last_type = A_OTHER;
	r.lead = true;
	read_text(&r, b, false);
	/* A title's intervention over a money-market body without a currency. */
	bool fx = events_names_currency(b, false);
	/* "the right balance between intervention by the authorities and
	 * the free working of markets" in a story naming no currency. */
	if (!fx && !events_names_currency(t, true))
		events_drop_regulator_acts(&r);
	for (size_t i = 0; *b && !fx && r.mm_words && i < out->n; i++)
		if (out->acts[i].in_title && out->acts[i].kind == EV_INTERVENTION) {
			memmove(&out->acts[i], &out->acts[i + 1], (out->n - i - 1) * sizeof(out->acts[0]));
			out->n--, i--;
		}
	/* "BUYS CURRENCY TO REPAY DEBT": currency bought for the Treasury's
	 * debt is not bought in the market's support. */
	bool debt = events_debt_purchase(t) || events_debt_purchase(b);
	for (size_t i = 0; debt && i < out->n; i++) {
		if (out->acts[i].kind == EV_INTERVENTION &&
		    !strcasestr(out->acts[i].evidence, "interven")) {
			events_drop_act(&r, i--);
		}
	}
	events_settle_story(&r);
	free(t);
	free(b);
	events_redate_retold(&r);
	/* The Fed's own dollar is in every pair: its intervention concerns
	 * the other currencies the story names ("concerted intervention"
	 * in a story of the dollar's fall against the yen: USD/JPY). */
	for (size_t i = 0; i < out->n; i++) {
		struct ev_act *a = &out->acts[i];
		if (a->kind != EV_INTERVENTION || a->nccy != 1 || strcmp(a->ccys[0], "USD"))
			continue;
		for (size_t k = 0; k < r.story_ccys.nccy; k++)
			events_add_ccy(a, r.story_ccys.ccys[k]);
	}
	out->bank = r.story_bank;
	out->kind = EV_NONE;
	for (size_t i = 0; i < out->n; i++)
		if (events_is_policy_fact(&out->acts[i])) {
			out->kind = out->acts[i].kind;
			return;
		}
	if (r.story_bank)
		out->kind = r.mm_words ? EV_MMOP : r.data_words ? EV_DATA : EV_STATEMENT;
}
