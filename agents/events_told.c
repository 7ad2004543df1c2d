/* Readings of a whole clause after its verbs are read (see
 * events_reader.h): a spokesman's denial of a rumour, a bank's part called
 * hearsay, a bank not following another, a bank taking no part, and a
 * refusal to move a rate. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/events.h"
#include "agents/events_reader.h"
#include "agents/events_text.h"
#include "agents/events_words.h"
#include "core/util.h"

#include "core/banned.h"

/* "... rumours that the Federal Reserve had cut its discount rate, but a
 * Fed spokesman said there had been no change", "a Bundesbank spokesman
 * denied the reports": a central bank's spokesman (or the bank) denying
 * in a clause with no act of its own denies the act the story has told
 * as rumour or expectation of that bank, the latest one. */
void events_rumour_denied(struct reader *r, const struct clause *c, const struct mention *m,
			  size_t nm)
{
	const char *bank = NULL;
	for (size_t i = 0; i < nm && !bank; i++)
		if (m[i].type == A_CB)
			bank = m[i].code;
	if (!bank || c->title)
		return;
	static const char *const hearsay[] = { "rumour", "rumours", "rumor", "rumors", "report",
		"reports", "talk", "speculation", "suggestion", "suggestions", NULL };
	static const char *const been[] = { "been", "was", "is", NULL };
	size_t at = 0;
	for (size_t k = 0; k + 2 < c->n && !at; k++) {
		/* "said there had been no change", "there was no such move". */
		if (is(c, k, "there") && is_any(c, k + 1 + is(c, k + 1, "had") + is(c, k + 1, "has"),
						   been)) {
			size_t j = k + 2 + is(c, k + 1, "had") + is(c, k + 1, "has");
			if (is(c, j, "no") && (is(c, j + 1, "change") || is(c, j + 1, "action") ||
					       is(c, j + 1, "move") || is(c, j + 1, "truth") ||
					       (is(c, j + 1, "such") && is(c, j + 2, "move"))))
				at = k + 1;
		}
		/* "had taken no action", "denied the rumours", "dismissed
		 * the reports". */
		if ((is(c, k, "taken") || is(c, k, "took")) && is(c, k + 1, "no") &&
		    is(c, k + 2, "action"))
			at = k + 1;
		if ((starts(c, k, "deni") || starts(c, k, "dismiss") || starts(c, k, "rejected")) &&
		    (is_any(c, k + 1, hearsay) || (is(c, k + 1, "the") && is_any(c, k + 2, hearsay)) ||
		     (is(c, k + 1, "market") && is_any(c, k + 2, hearsay))))
			at = k + 1;
	}
	if (!at)
		return;
	/* The speaker is the bank or its spokesman, before the denial. */
	bool speaker = false;
	for (size_t i = 0; i < nm; i++)
		if (m[i].type == A_CB && !strcmp(m[i].code, bank) && m[i].pos < at)
			speaker = true;
	if (!speaker)
		return;
	struct ev_story *s = r->out;
	for (size_t i = s->n; i-- > 0;) {
		const struct ev_act *a = &s->acts[i];
		if (strcmp(a->bank, bank) || (a->mode != EV_MODE_RUMOURED && a->mode != EV_MODE_EXPECTED) ||
		    (a->kind != EV_HIKE && a->kind != EV_CUT && a->kind != EV_INTERVENTION))
			continue;
		char cue[24];
		snprintf(cue, sizeof(cue), "%s", c->w[at - 1].w);
		events_story_add(r, c, bank, a->kind, EV_MODE_DENIED, cue, a->day, false);
		return;
	}
	/* "had taken no action on the discount rate today, denying rumours
	 * on Wall Street of a half-point rise": the rumour told after. */
	for (size_t k = at; k < c->n; k++) {
		if (!is_any(c, k, hearsay))
			continue;
		for (size_t j = k + 1; j < c->n && j < k + 11; j++) {
			enum ev_kind kind = events_change_noun(c, j);
			if (!kind && (is(c, j, "cut") || is(c, j, "reduction")))
				kind = EV_CUT;
			if (!kind && (is(c, j, "rise") || is(c, j, "increase") || is(c, j, "hike")))
				kind = EV_HIKE;
			if (kind == EV_HIKE || kind == EV_CUT) {
				char cue[24];
				snprintf(cue, sizeof(cue), "%s", c->w[at - 1].w);
				events_story_add(r, c, bank, kind, EV_MODE_DENIED, cue, r->pub_day, false);
				return;
			}
		}
		return;
	}
}

/* "the Bank of Japan did not join in", "the Bank of England was not
 * involved", "the Bundesbank did not join the operation", "had been absent
 * from the Tokyo market": in a story of an intervention (one it has told
 * of some bank, or a clause about currencies), the bank took no part. */
void events_took_no_part(struct reader *r, const struct clause *c, const struct mention *m,
			 size_t nm)
{
	bool story_iv = false;
	for (size_t i = 0; i < r->out->n; i++)
		story_iv = story_iv || r->out->acts[i].kind == EV_INTERVENTION;
	for (size_t i = 0; i < nm; i++) {
		if (m[i].type != A_CB)
			continue;
		size_t k = m[i].pos + m[i].len;
		if (is(c, k, "had") || is(c, k, "has") || is(c, k, "also"))
			k++;
		size_t e = 0;
		if ((is(c, k, "did") || is(c, k, "was") || is(c, k, "had") || is(c, k, "has")) &&
		    is(c, k + 1, "not") &&
		    (is(c, k + 2, "join") || is(c, k + 2, "joined") || is(c, k + 2, "involved") ||
		     is(c, k + 2, "participate") || is(c, k + 2, "participated") ||
		     is(c, k + 2, "take") || is(c, k + 2, "taken")))
			e = k + 3;
		else if (is(c, k, "was") && is(c, k + 1, "absent"))
			e = k + 2;
		else if (is(c, k, "been") && is(c, k + 1, "absent"))
			e = k + 2;
		else if (k >= 1 && is(c, k - 1, "had") && is(c, k, "been") && is(c, k + 1, "absent"))
			e = k + 2;
		if (!e)
			continue;
		/* "did not take part", not "did not take a decision". */
		if ((is(c, e - 1, "take") || is(c, e - 1, "taken")) && !is(c, e, "part"))
			continue;
		bool fx = story_iv;
		for (size_t j = 0; j < c->n && !fx; j++)
			fx = events_is_ccy(c, j) || is(c, j, "intervention") || is(c, j, "operation");
		if (!fx)
			continue;
		char cue[24];
		snprintf(cue, sizeof(cue), "not %s", c->w[e - 1].w);
		events_story_add(r, c, m[i].code, EV_INTERVENTION, EV_MODE_DENIED, cue,
				 events_clause_day(c, r->pub_day, &(bool){ false }, &(bool){ false },
						   &(bool){ false }),
				 false);
	}
}

/* "the Swiss National Bank said it would not follow the Bundesbank's
 * move", "did not follow yesterday's cut in Belgian official interest
 * rates", "would not follow the Australian central bank into the market":
 * the subject denies doing as the other did (the kind the object names,
 * or for a "move" the story's last rate change). */
void events_not_follow(struct reader *r, const struct clause *c, const struct mention *m,
		       size_t nm)
{
	for (size_t v = 2; v + 1 < c->n; v++) {
		if (!is(c, v, "follow"))
			continue;
		size_t n = v - 1;
		if (is(c, n, "to") && is(c, n - 1, "going") && n >= 3 && is(c, n - 2, "is"))
			n -= 3;
		if (!(is(c, n, "not") || is(c, n, "never")) ||
		    !(is(c, n - 1, "would") || is(c, n - 1, "will") || is(c, n - 1, "did") ||
		      is(c, n - 1, "does") || is(c, n - 1, "is") || is(c, n - 1, "n't")))
			continue;
		/* Its subject: the central bank (or "it" for the bank named
		 * before) nearest before the auxiliary. */
		const char *bank = NULL;
		for (size_t i = 0; i < nm && m[i].pos < n; i++)
			if (m[i].type == A_CB)
				bank = m[i].code;
			else if ((m[i].type == A_GENERIC_CB || m[i].type == A_PRONOUN) && !bank &&
				 m[i].pos + m[i].len + 2 >= n)
				bank = r->last_cb;
		if (!bank)
			return;
		enum ev_kind kind = EV_NONE;
		for (size_t j = v + 1; j < c->n && j < v + 10 && kind == EV_NONE; j++) {
			if (is(c, j, "cut") || is(c, j, "cuts") || is(c, j, "reduction") ||
			    is(c, j, "easing"))
				kind = EV_CUT;
			else if (is(c, j, "rise") || is(c, j, "rises") || is(c, j, "increase") ||
				 is(c, j, "hike") || is(c, j, "tightening"))
				kind = EV_HIKE;
			else if (is(c, j, "market") || is(c, j, "intervention"))
				kind = EV_INTERVENTION;
			else if (is(c, j, "move") || is(c, j, "moves") || is(c, j, "lead") ||
				 is(c, j, "example"))
				for (size_t i = r->out->n; i-- > 0 && kind == EV_NONE;)
					if ((r->out->acts[i].kind == EV_HIKE ||
					     r->out->acts[i].kind == EV_CUT) &&
					    r->out->acts[i].mode == EV_MODE_FACT)
						kind = r->out->acts[i].kind;
		}
		if (kind == EV_NONE)
			return;
		char cue[24];
		snprintf(cue, sizeof(cue), "not follow");
		events_story_add(r, c, bank, kind, EV_MODE_DENIED, cue, r->pub_day, false);
		return;
	}
}

/* "..., although the Swiss central bank's part could not be confirmed",
 * "although Swiss involvement was only market talk": the story calls one
 * bank's part of an act it told as done hearsay; that bank's acts told
 * as done become rumoured. */
void events_part_doubted(struct reader *r, const struct clause *c, const struct mention *m,
			 size_t nm)
{
	static const char *const part[] = { "part", "involvement", "participation", "role",
					    "presence", NULL };
	static const char *const doubt[] = { "talk", "rumour", "rumours", "rumor", "unconfirmed",
					     "confirmed", "speculation", "doubt", "doubtful",
					     "unclear", NULL };
	/* "the reports of New York Fed buying in Tokyo were only market
	 * talk": an act noun that is then called talk is a part too. */
	static const char *const actn[] = { "buying", "selling", "purchases", "sales",
					    "intervention", NULL };
	static const char *const be[] = { "was", "were", "is", "are", NULL };
	for (size_t k = 1; k < c->n; k++) {
		bool noun = false;
		if (!is_any(c, k, part)) {
			if (!is_any(c, k, actn))
				continue;
			for (size_t j = k + 1; j < c->n && j < k + 6 && !noun; j++)
				noun = is_any(c, j, be) &&
				       (is_any(c, j + 1, doubt) ||
					((is(c, j + 1, "only") || is(c, j + 1, "just") ||
					  is(c, j + 1, "merely") || is(c, j + 1, "market")) &&
					 (is_any(c, j + 2, doubt) ||
					  (is(c, j + 2, "market") && is_any(c, j + 3, doubt)))));
			if (!noun)
				continue;
		}
		const char *bank = NULL;
		for (size_t i = 0; i < nm; i++)
			if (m[i].type == A_CB && m[i].pos + m[i].len == k)
				bank = m[i].code;
		/* "received no orders from the Fed, and its part remained in
		 * doubt": "its" is the last bank named before it. */
		if (!bank && is(c, k - 1, "its") && is_any(c, k, part))
			for (size_t i = 0; i < nm; i++)
				if (m[i].type == A_CB && m[i].pos + m[i].len < k)
					bank = m[i].code;
		if (!bank) {
			char w[48];
			snprintf(w, sizeof(w), "%.*s", (int)c->w[k - 1].len, c->text + c->w[k - 1].off);
			bank = isupper((unsigned char)w[0]) ? events_title_country(w) : NULL;
		}
		if (!bank)
			continue;
		bool doubted = false;
		for (size_t j = k + 1; j < c->n && j < k + 9 && !doubted; j++)
			doubted = is_any(c, j, doubt) &&
				  (!is(c, j, "confirmed") || is(c, j - 1, "not") || is(c, j - 1, "be"));
		if (!doubted)
			continue;
		/* Its facts told later in the story are hearsay too
		 * (events_settle_story). */
		bool seen = false;
		for (size_t i = 0; i < r->ndoubted; i++)
			seen = seen || !strcmp(r->doubted[i], bank);
		if (!seen && r->ndoubted < ARRAY_SIZE(r->doubted))
			r->doubted[r->ndoubted++] = bank;
		for (size_t i = 0; i < r->out->n; i++) {
			struct ev_act *a = &r->out->acts[i];
			if (!strcmp(a->bank, bank) && a->mode == EV_MODE_FACT) {
				a->mode = EV_MODE_RUMOURED;
				snprintf(a->cue, sizeof(a->cue), "part unconfirmed");
			}
		}
	}
}

void events_this_was_talk(struct reader *r, const struct clause *c)
{
	static const char *const talk[] = { "talk", "rumour", "rumours", "rumor", "speculation",
					    "unconfirmed", "hearsay", NULL };
	size_t k = is(c, 0, "but") || is(c, 0, "and") ? 1 : 0;
	if (!(is(c, k, "this") || is(c, k, "that") || is(c, k, "it")) ||
	    !(is(c, k + 1, "was") || is(c, k + 1, "is") || is(c, k + 1, "remained")))
		return;
	k += 2;
	if (is(c, k, "only") || is(c, k, "just") || is(c, k, "merely") || is(c, k, "still"))
		k++;
	if (is(c, k, "market"))
		k++;
	if (!is_any(c, k, talk))
		return;
	for (size_t i = r->prev_from; i < r->prev_to && i < r->out->n; i++) {
		struct ev_act *a = &r->out->acts[i];
		if (a->mode == EV_MODE_FACT) {
			a->mode = EV_MODE_RUMOURED;
			snprintf(a->cue, sizeof(a->cue), "this was talk");
		}
	}
}

/* A session or time of its own in the clause ("in early trading",
 * "this morning", "overnight", "since", "later"). */
static bool clause_has_time(const struct clause *c)
{
	for (size_t k = 0; k < c->n; k++)
		if (is(c, k, "trading") || is(c, k, "session") || is(c, k, "afternoon") ||
		    is(c, k, "morning") || is(c, k, "since") || is(c, k, "later") ||
		    is(c, k, "overnight"))
			return true;
	return false;
}

void events_others_said(struct reader *r, const struct clause *c)
{
	static const char *const who[] = { "dealers", "bankers", "traders", "analysts",
					   "economists", "sources", "operators", NULL };
	static const char *const said[] = { "said", "say", "says", "believed", "thought",
					    "doubted", "disputed", "denied", "saw", NULL };
	size_t k = is(c, 0, "but") ? 1 : 0;
	if (k && (is(c, k, "others") || (is(c, k, "other") && is_any(c, k + 1, who)))) {
		size_t j = k + (is(c, k, "other") ? 2 : 1);
		if (is_any(c, j, said) && r->prev_some)
			for (size_t i = r->prev_from; i < r->prev_to && i < r->out->n; i++) {
				struct ev_act *a = &r->out->acts[i];
				if (a->mode == EV_MODE_FACT) {
					a->mode = EV_MODE_RUMOURED;
					snprintf(a->cue, sizeof(a->cue), "others said");
				}
			}
	}
	/* "Some bankers said", "Some Tokyo dealers said". */
	r->prev_some = false;
	if (!is(c, 0, "some"))
		return;
	for (size_t j = 1; j < c->n && j < 4; j++)
		if (is_any(c, j, who)) {
			r->prev_some = is_any(c, j + 1, said);
			return;
		}
}

bool events_names_only_last(const struct reader *r, const struct mention *m, size_t nm)
{
	for (size_t i = 0; i < nm; i++) {
		if (m[i].type != A_CB || !m[i].code)
			continue;
		bool among = false;
		for (size_t k = r->last_from; k < r->last_to && k < r->out->n && !among; k++)
			among = !strcmp(r->out->acts[k].bank, m[i].code);
		if (!among)
			return false;
	}
	return true;
}

void events_no_sign_of_it(struct reader *r, const struct clause *c, const struct mention *m,
			  size_t nm)
{
	static const char *const sign[] = { "sign", "signs", "evidence", "trace", NULL };
	static const char *const ref[] = { "it", "this", "that", NULL };
	/* "There was no sign of it on Thursday or Friday", "no sign of it
	 * in early New York trading today": another day's or session's. */
	if (r->last_to <= r->last_from || r->since_last > 1 || events_clause_dated(c) ||
	    clause_has_time(c) || !events_names_only_last(r, m, nm))
		return;
	static const char *const act[] = { "buying", "selling", "intervention", "purchases",
					   "sales", NULL };
	bool denied = false;
	for (size_t k = 1; k + 2 < c->n && !denied; k++) {
		/* "no sign of", "not ... any sign of" */
		if (!is_any(c, k, sign) || !is(c, k + 1, "of") ||
		    !(is(c, k - 1, "no") ||
		      (k > 1 && is(c, k - 1, "any") && (is(c, k - 2, "not") || is(c, k - 2, "n't")))))
			continue;
		/* "of it", "of this" (not "of dollar weakness"); "of such
		 * buying", "of any intervention". */
		if (is(c, k + 2, "such") || is(c, k + 2, "any"))
			denied = is_any(c, k + 3, act);
		else
			denied = is_any(c, k + 2, ref) && !events_is_ccy(c, k + 3);
	}
	if (!denied)
		return;
	for (size_t i = r->last_from; i < r->last_to && i < r->out->n; i++) {
		struct ev_act *a = &r->out->acts[i];
		if (a->kind == EV_INTERVENTION && a->mode == EV_MODE_FACT) {
			a->mode = EV_MODE_DENIED;
			snprintf(a->cue, sizeof(a->cue), "no sign of it");
		}
	}
}

/* "refused to lower its dealing rates", "its refusal yesterday to
 * raise the discount rate": the position of the verb refused, an
 * official rate its object; 0 when none. */
size_t events_refused_rate(const struct clause *c, size_t v)
{
	if (!starts(c, v, "refus"))
		return 0;
	size_t to = is(c, v + 1, "to") ? v + 1 : v + 2;
	if (!is(c, to, "to") || !(is_any(c, to + 1, events_cut_verbs) ||
				  is_any(c, to + 1, events_hike_verbs)))
		return 0;
	bool priv, official;
	return events_rate_object(c, to + 2, 6, &priv, &official) >= 0 && official && !priv ?
		       to + 1 :
		       0;
}

void events_settle_story(struct reader *r)
{
	struct ev_story *s = r->out;
	/* "BANK OF JAPAN BUYS DOLLARS, FED ROLE UNCONFIRMED" over "Some
	 * dealers said the Federal Reserve had also been buying": a part the
	 * story calls talk is hearsay wherever it is told. */
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < r->ndoubted; k++)
			if (!strcmp(s->acts[i].bank, r->doubted[k]) &&
			    s->acts[i].kind == EV_INTERVENTION && s->acts[i].mode == EV_MODE_FACT) {
				s->acts[i].mode = EV_MODE_RUMOURED;
				snprintf(s->acts[i].cue, sizeof(s->acts[i].cue), "part unconfirmed");
			}
	/* "ASIAN CURRENCIES FIRM AS TAIWAN CENTRAL BANK BUYS DOLLARS" over a
	 * body that tells the buying only as belief: the body's telling
	 * qualifies the headline's. */
	for (size_t i = 0; i < s->n; i++) {
		struct ev_act *h = &s->acts[i];
		if (!h->in_title || h->mode != EV_MODE_FACT)
			continue;
		bool told = false, hearsay = false;
		for (size_t k = 0; k < r->nbody_facts; k++)
			told = told || (r->body_facts[k].kind == h->kind &&
					!strcmp(r->body_facts[k].bank, h->bank));
		for (size_t k = 0; k < s->n; k++)
			hearsay = hearsay || (!s->acts[k].in_title && s->acts[k].kind == h->kind &&
					      s->acts[k].mode == EV_MODE_RUMOURED &&
					      !strcmp(s->acts[k].bank, h->bank));
		if (!told && hearsay) {
			h->mode = EV_MODE_RUMOURED;
			snprintf(h->cue, sizeof(h->cue), "body: hearsay");
		}
	}
	/* "The central bank had resisted a rise for more than a week" in a
	 * story of the bank's rise: the resistance gave way, no hold. */
	for (size_t i = 0; i < s->n; i++) {
		const struct ev_act *h = &s->acts[i];
		if (h->kind != EV_HOLD || h->mode != EV_MODE_FACT ||
		    !(strcasestr(h->evidence, "resist") || strcasestr(h->evidence, "fought")))
			continue;
		bool gave_way = false;
		for (size_t k = 0; k < s->n; k++)
			gave_way = gave_way || (s->acts[k].mode == EV_MODE_FACT &&
						(s->acts[k].kind == EV_HIKE ||
						 s->acts[k].kind == EV_CUT) &&
						!strcmp(s->acts[k].bank, h->bank));
		if (!gave_way)
			continue;
		events_drop_act(r, i--);
	}
}

bool events_names_currency(const char *text, bool padded)
{
	static const char *const fxw[] = { " dollar", " yen", " mark ", " marks", " sterling",
		"currenc", "foreign exchange", "forex", " franc", " dlr", " guilder", " lira", " lire",
		" crown", " peseta", " pound", NULL };
	char *s = padded ? xasprintf(" %s ", text) : xstrdup(text);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	bool fx = false;
	for (size_t k = 0; fxw[k] && !fx; k++)
		fx = strstr(s, fxw[k]) != NULL;
	free(s);
	return fx;
}

void events_drop_regulator_acts(struct reader *r)
{
	struct ev_story *out = r->out;
	for (size_t i = 0; i < out->n; i++) {
		const struct ev_act *a = &out->acts[i];
		const char *e = a->evidence;
		/* (A verb, "the Bank of Japan intervened", or the bank named by
		 * its name, stays.) */
		if (a->kind == EV_INTERVENTION && a->mode == EV_MODE_FACT &&
		    !(a->bank_name && strcasestr(e, a->bank_name)) && !strcasestr(e, a->bank) &&
		    !strcasestr(e, "intervened") && !strcasestr(e, "intervenes") &&
		    !strcasestr(e, "intervening") && !strcasestr(e, "intervene "))
			events_drop_act(r, i--);
	}
}
