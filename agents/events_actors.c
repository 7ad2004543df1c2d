/* Who acted: the actors a clause names and the central bank each stands
 * for (see events.h, "An act is a verb of its kind whose subject ..."). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "agents/events.h"
#include "agents/events_reader.h"
#include "agents/events_text.h"
#include "agents/events_words.h"
#include "core/util.h"
#include "core/banned.h"

size_t events_find_mentions(const struct clause *c, struct mention *m, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n && n < max;) {
		size_t best = 0, bi = 0;
		for (size_t a = 0; a < events_nactors; a++) {
			size_t k = events_match_phrase(c, i, events_actors[a].phrase);
			if (k > best)
				best = k, bi = a;
		}
		/* "X Bank Plc", "<name> Bank Ltd": a commercial bank. */
		if (!best && (is(c, i, "bank") || is(c, i, "banks")) &&
		    (is(c, i + 1, "plc") || is(c, i + 1, "ltd") || is(c, i + 1, "corp") ||
		     is(c, i + 1, "co") || is(c, i + 1, "inc") || is(c, i + 1, "n.a"))) {
			m[n++] = (struct mention){ i, 2, A_COMMERCIAL, NULL };
			i += 2;
			continue;
		}
		/* "the French intervention rate", "the West German discount
		 * rate": the country owns the official rate it names. */
		const char *adj = !best ? events_rate_adjective(c, i) : NULL;
		if (adj) {
			m[n++] = (struct mention){ i, 1, A_COUNTRY, adj };
			i++;
			continue;
		}
		if (!best) {
			i++;
			continue;
		}
		enum actor_type t = events_actors[bi].type;
		/* "the Bank of Canada's bank rate": a rate, not a bank. */
		/* ("purchases of bank bills", "bank lending": a kind of paper
		 * or business, no actor.) */
		if (!strcmp(events_actors[bi].phrase, "bank") && (is(c, i + 1, "rate") ||
								  is(c, i + 1, "rates") ||
								  is(c, i + 1, "bills") ||
								  is(c, i + 1, "bill") ||
								  is(c, i + 1, "lending") ||
								  is(c, i + 1, "deposits") ||
								  is(c, i + 1, "shares") ||
								  is(c, i + 1, "holiday"))) {
			i += best;
			continue;
		}
		/* "the National Bank" of a story; "First National Bank", "National
		 * Bank of New Zealand" are commercial banks. */
		if (!strcmp(events_actors[bi].phrase, "national bank") &&
		    (!is(c, i - 1, "the") || is(c, i + best, "of"))) {
			i += best;
			continue;
		}
		/* "the Bank of England": the longer name starting at "bank". */
		if (!strcmp(events_actors[bi].phrase, "the bank")) {
			size_t longer = 0;
			for (size_t a = 0; a < events_nactors; a++) {
				size_t k = events_match_phrase(c, i + 1, events_actors[a].phrase);
				if (k > longer)
					longer = k;
			}
			if (longer >= 2) {
				i++;
				continue;
			}
		}
		/* "the bank" right after a commercial name is that bank. */
		if (t == A_GENERIC_CB && !strcmp(events_actors[bi].phrase, "the bank") && c->title) {
			i += best;
			continue;
		}
		/* "U.S. authorities" and such are matched whole above; a lone
		 * country followed by "banks" or "bank" is not the central bank. */
		static const char *const ccyn[] = { "dollar", "dollars", "dlrs", "currency", "unit",
						    NULL };
		if (t == A_COUNTRY && (is(c, i + best, "banks") || is(c, i + best, "bank") ||
				       is_any(c, i + best, ccyn))) {
			i += best;
			continue;
		}
		/* "the central bank's sale of Treasury bills": a security, not
		 * the ministry. */
		static const char *const paper[] = { "bill", "bills", "bond", "bonds", "note", "notes",
			"securities", "certificate", "certificates", "stock", "paper", "issue",
			"issues", "auction", "auctions", "refunding", "yields", "yield", "market", NULL };
		if (t == A_GOVT && is(c, i + best - 1, "treasury") && is_any(c, i + best, paper)) {
			i += best;
			continue;
		}
		m[n++] = (struct mention){ i, best, t, events_actors[bi].code };
		i += best;
	}
	return n;
}

const struct mention *events_subject_of(const struct mention *m, size_t nm, size_t v,
				       const struct clause *c, bool noun)
{
	const struct mention *best = NULL;
	for (size_t i = 0; i < nm; i++) {
		size_t e = m[i].pos + m[i].len;
		if (e > v)
			continue;
		/* "dealers said", "economists expect": attributions. */
		if (m[i].type == A_OTHER && e < c->n &&
		    (starts(c, e, "sa") || starts(c, e, "told") || starts(c, e, "report") ||
		     starts(c, e, "not") || starts(c, e, "expect") || starts(c, e, "believ")))
			continue;
		/* "against market pressure for lower rates": "market" as a
		 * modifier is no actor. */
		static const char *const mkt_noun[] = { "pressure", "pressures", "rates", "rate",
			"forces", "conditions", "expectations", "sentiment", "levels", "operations",
			"operation", NULL };
		if (!noun && m[i].type == A_OTHER && is(c, e - 1, "market") && e < c->n &&
		    is_any(c, e, mkt_noun))
			continue;
		best = &m[i];
	}
	/* "the Reserve Bank, using the Fed as agent, sold": a mention inside
	 * commas between a central bank and the verb is not the subject. */
	if (best && best > m && !noun && (best[-1].type == A_CB || best[-1].type == A_GENERIC_CB)) {
		size_t open = best[-1].pos + best[-1].len;
		size_t close = best->pos + best->len;
		while (close < v && !comma_before(c, close))
			close++;
		if (open < best->pos && open + 5 >= best->pos && comma_before(c, open) &&
		    close <= v && close + 3 >= v)
			best = &best[-1];
	}
	/* "Having lifted its rate to 15 pct on Tuesday, the bank opened
	 * ...": the participle's subject is the main clause's, after the
	 * comma. */
	if (!noun && v >= 1 && is(c, v - 1, "having") && (v == 1 || comma_before(c, v - 1))) {
		size_t k = v + 1;
		while (k < c->n && !comma_before(c, k))
			k++;
		for (size_t i = 0; i < nm && k < c->n; i++)
			if (m[i].pos >= k && m[i].pos <= k + 1)
				return &m[i];
	}
	/* "were signalled by the Bank of England": the agent. */
	bool passive = v > 0 && (is(c, v - 1, "were") || is(c, v - 1, "was") ||
				 is(c, v - 1, "been") || is(c, v - 1, "being"));
	/* "intervention by the major industrial nations": by an agent it
	 * does not know, not by the bank named before. */
	if (noun && is(c, v + 1, "by")) {
		bool named = false;
		for (size_t i = 0; i < nm; i++)
			named = named || (m[i].pos > v + 1 && m[i].pos <= v + 4);
		if (!named)
			return NULL;
	}
	if (noun || !best || passive) {
		/* "was cut to 3.0 pct from 3.5 pct by the Bundesbank". */
		size_t span = passive && !noun ? 10 : 4;
		for (size_t i = 0; i < nm; i++)
			if (m[i].pos > v && m[i].pos <= v + span &&
			    (is(c, m[i].pos - 1, "by") || is(c, m[i].pos - 1, "from") ||
			     (is(c, m[i].pos - 1, "the") && (is(c, m[i].pos - 2, "by") ||
							     is(c, m[i].pos - 2, "from")))))
				return &m[i];
	}
	return best;
}

/* The central bank a mention stands for, NULL when none. */
const char *events_resolve(struct reader *r, const struct clause *c, const struct mention *m,
			   const struct mention *first, bool official_rate, bool intervention)
{
	switch (m->type) {
	case A_CB:
		return m->code;
	case A_GENERIC_CB:
		if (m->pos > 0 && is(c, m->pos - 1, "concerted"))
			return NULL;
		/* "The Bank of Spain was the only European central bank to
		 * move": the bank the predicate names. */
		for (size_t k = m->pos; k-- > 0 && k + 5 > m->pos;) {
			if (!is(c, k, "only") && !is(c, k, "first") && !is(c, k, "last"))
				continue;
			if (k < 2 || !is(c, k - 1, "the") ||
			    !(is(c, k - 2, "was") || is(c, k - 2, "is") || is(c, k - 2, "became")))
				break;
			for (const struct mention *p = m; p-- > first;)
				if (p->type == A_CB && p->pos + p->len == k - 2)
					return p->code;
			break;
		}
		/* "Chancellor Lawson said ... the authorities had intervened
		 * heavily": a minister's "authorities" name no bank, as his
		 * "we have been intervening" does not. */
		if (is(c, m->pos, "authorities") || is(c, m->pos + 1, "authorities")) {
			static const char *const gov[] = { "chancellor", "minister", "ministry",
							   "treasury", "government", NULL };
			for (size_t k = 0; k < c->n; k++)
				if (is_any(c, k, gov))
					return NULL;
		}
		/* "the council left the discount and Lombard rates unchanged":
		 * the central bank council the story has named. */
		if (is(c, m->pos + 1, "council") || is(c, m->pos + 1, "board") ||
		    (is(c, m->pos + 1, "policy") && is(c, m->pos + 2, "board")))
			return r->cb_council &&
				       !is(c, m->pos + (is(c, m->pos + 1, "policy") ? 3 : 2), "of") ?
				       (r->last_cb ? r->last_cb : r->story_bank) :
				       NULL;
		/* "the National Bank" of a story that has named one (the
		 * Belgian, Danish or Swiss), else of its dateline's country,
		 * not the Bundesbank named last. */
		if (is(c, m->pos, "national") && is(c, m->pos + 1, "bank")) {
			for (size_t k = 0; k < r->nnamed; k++)
				if (!strcmp(r->named[k], "BNB") || !strcmp(r->named[k], "DKNB") ||
				    !strcmp(r->named[k], "SNB"))
					return r->named[k];
			if (r->title_country && (!strcmp(r->title_country, "BNB") ||
						 !strcmp(r->title_country, "DKNB") ||
						 !strcmp(r->title_country, "SNB")))
				return r->title_country;
		}
		/* "the Swedish central bank", "the Irish central bank": a
		 * country the reader does not know, not the last bank named. */
		if (!c->title && is(c, m->pos, "central") && m->pos > 0 &&
		    isupper((unsigned char)c->text[c->w[m->pos - 1].off]) &&
		    !(m > first && m[-1].pos + m[-1].len == m->pos)) {
			char w[48];
			snprintf(w, sizeof(w), "%.*s", (int)c->w[m->pos - 1].len,
				 c->text + c->w[m->pos - 1].off);
			static const char *const det[] = { "The", "A", "Its", "This", "That", "Their",
							   "Another", "Any", "No", NULL };
			bool d = false;
			for (size_t k = 0; det[k]; k++)
				d = d || !strcmp(w, det[k]);
			if (!d)
				return events_title_country(w);
		}
		/* "the central banks' purchases", "central banks spent":
		 * several, none named ("the central banks of Japan and West
		 * Germany" is read as a group where the act is). */
		if (is(c, m->pos, "central") && is(c, m->pos + 1, "banks") &&
		    !is(c, m->pos + m->len, "of") && !(m->pos > 0 && is(c, m->pos - 1, "other")))
			return NULL;
		/* "the Bank" of a story that has named the Bank of England:
		 * Reuters' name for it, not the last bank named ("talk that
		 * the Bank of France had joined in ... the Bank had sold
		 * sterling"). */
		if (!c->title && is(c, m->pos, "the") && is(c, m->pos + 1, "bank") && m->len == 2 &&
		    c->text[c->w[m->pos + 1].off] == 'B')
			for (size_t k = 0; k < r->nnamed; k++)
				if (!strcmp(r->named[k], "BoE"))
					return "BoE";
		/* "Norway's central bank": the country's. */
		if (m > first && m[-1].type == A_COUNTRY && m[-1].pos + m[-1].len == m->pos)
			return m[-1].code;
		for (const struct mention *p = m; p-- > first;)
			if (p->type == A_CB)
				return p->code;
		/* "prompting central bank intervention": without an article it
		 * is the story's bank only when the story has named one. */
		static const char *const art[] = { "the", "a", "an", "its", "their", "this", "that",
						   "whose", NULL };
		/* A headline's source after its dash ("... - central bank"):
		 * the bank of the country the headline names. */
		const char *dash = c->title ? strstr(c->text, " - ") : NULL;
		if (dash && dash < c->text + c->len && c->text + c->w[m->pos].off > dash &&
		    r->title_country && r->nnamed == 0)
			return r->title_country;
		if (is(c, m->pos, "central") && !(m->pos > 0 && is_any(c, m->pos - 1, art)) &&
		    !is(c, m->pos + m->len, "of"))
			/* "intervention by central banks": several, none named. */
			return r->nnamed == 1 && !is(c, m->pos + 1, "banks") ? r->named[0] : NULL;
		/* "the Central Bank of Ireland": the country named after it,
		 * or a bank the reader does not know, not the last one named. */
		if (is(c, m->pos + m->len, "of")) {
			size_t k = m->pos + m->len + 1 + is(c, m->pos + m->len + 1, "the");
			if (k < c->n && c->text[c->w[k].off] >= 'A' && c->text[c->w[k].off] <= 'Z') {
				char w[48];
				snprintf(w, sizeof(w), "%.*s", (int)c->w[k].len, c->text + c->w[k].off);
				return events_title_country(w);
			}
		}
		if (r->last_cb || r->story_bank)
			return r->last_cb ? r->last_cb : r->story_bank;
		/* None named yet: "the central bank" of the country the title
		 * names ("DANISH CREDIT ..."), not "the bank". */
		return is(c, m->pos, "the") && is(c, m->pos + 1, "bank") ? NULL : r->title_country;
	case A_COUNTRY:
		/* The last of a list of countries is not one bank's act. */
		if (m > first && m[-1].type == A_COUNTRY && m->pos >= 1 &&
		    (is(c, m->pos - 1, "and") || (is(c, m->pos - 1, "the") && is(c, m->pos - 2, "and"))))
			return NULL;
		if (official_rate)
			return m->code;
		/* "Japan intervened": the country's central bank once the
		 * story has named it ("a finance minister said Japan
		 * intervened" names no bank: nor does a minister's "West
		 * Germany had intervened in concert"). */
		for (const struct mention *p = first; intervention && p < m; p++)
			if (p->type == A_GOVT)
				return NULL;
		for (size_t k = 0; intervention && k < r->nnamed; k++)
			if (!strcmp(r->named[k], m->code))
				return m->code;
		return NULL;
	case A_PRONOUN:
		/* "The Bundesbank and the Swiss National Bank denied that they
		 * had bought dollars": "they" is a list of banks just named in
		 * the clause, nothing else (not "dealers said they"). */
		if (is(c, m->pos, "they")) {
			const struct mention *p = m > first ? m - 1 : NULL;
			/* "denied market talk that they had": the market is
			 * not who "they" are. */
			while (p && p > first && p->type == A_OTHER &&
			       (is(c, p->pos, "market") || is(c, p->pos, "markets")))
				p--;
			return p && p->type == A_CB && p->pos >= 1 &&
					       (is(c, p->pos - 1, "and") ||
						(is(c, p->pos - 1, "the") && is(c, p->pos - 2, "and"))) ?
				       p->code :
				       NULL;
		}
		for (const struct mention *p = m; p-- > first;) {
			if (p->type == A_PRONOUN || p->type == A_OTHER)
				continue;
			if (p->type == A_COUNTRY && !official_rate)
				return NULL;
			/* The mention itself, not a copy: "Norway's central bank
			 * said it had raised" reads the country before it. */
			return events_resolve(r, c, p, first, official_rate, intervention);
		}
		if (r->last_type == A_CB || r->last_type == A_GENERIC_CB)
			return r->last_cb;
		/* "a New Zealand firm said it bought": "it" is a country's
		 * central bank only for its official rate. */
		if (r->last_type == A_COUNTRY && official_rate)
			return r->last_code;
		return NULL;
	case A_COMMERCIAL:
	case A_GOVT:
	case A_OTHER:
		return NULL;
	}
	return NULL;
}
