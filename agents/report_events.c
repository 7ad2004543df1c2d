/* The report's central-bank events read as an analyst would: each act's
 * standing with the validator (its findings' verdicts), the Key events
 * lines (acts of one day and action reported by the same sentence or story
 * on one line), the news sentiment by currency (only currencies the
 * stories discuss; pairs whose tone rests on one side said so), and the
 * executive summary's sentence on the acts, by bank and action over days,
 * the banks named in words and the acts not confirmed marked. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report.h"
#include "agents/events_words.h"
#include "agents/report_priv.h"
#include "agents/validator_evidence.h"
#include "core/util.h"
#include "core/banned.h"

#define SUMMARY_THEMES 8    /* banks and actions named in the summary */

/* An act's standing. */

/* The verdict of the findings on the act (bank, action, date): disputed
 * when any finding is, else confirmed when any is, else unverified; "not
 * validated" when no finding reports it and validation has finished (or
 * the report is final); NULL while validation is pending. */
const char *report_event_verdict(const cJSON *run, const cJSON *e, bool final)
{
	const char *bank = jstr(e, "bank"), *action = jstr(e, "action"), *date = jstr(e, "date");
	bool settled = final || report_validation_finished(run);
	bool any = false, confirmed = false, unverified = false;
	const cJSON *f;
	if (!bank || !action || !date)
		return settled ? "not validated" : NULL;
	cJSON_ArrayForEach(f, jget(run, "findings")) {
		const cJSON *d = jget(f, "data");
		if (!jstr_is(d, "bank", bank) || !jstr_is(d, "action", action) ||
		    !jstr_is(d, "date", date))
			continue;
		any = true;
		switch (report_verdict_of(f)) {
		case V_DISPUTED:
			return "disputed";
		case V_CONFIRMED:
			confirmed = true;
			break;
		case V_UNVERIFIED:
			unverified = true;
			break;
		case V_PENDING:
			unverified = unverified || settled;
			break;
		}
	}
	if (confirmed)
		return "confirmed";
	if (unverified)
		return "unverified";
	if (any)
		return NULL; /* pending */
	return settled ? "not validated" : NULL;
}

/* " (disputed)" after an act that is not confirmed. */
static void put_verdict_tag(struct md *m, const cJSON *e)
{
	const char *v = report_event_verdict(m->run, e, m->final);
	if (v && strcmp(v, "confirmed"))
		sbuf_addf(&m->b, " (%s)", v);
}

/* Key events: one line per act, or per acts told together. */

static const char *evidence0(const cJSON *e)
{
	const cJSON *ev = cJSON_GetArrayItem(jget(e, "evidence"), 0);
	return cJSON_IsString(ev) && *ev->valuestring ? ev->valuestring : NULL;
}

/* "bank of japan" in "...the Bank of Japan, Federal..." as whole words. */
static bool names_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = text; n && (p = strcasestr(p, word)); p++) {
		bool left = p == text || !isalnum((unsigned char)p[-1]);
		bool right = !isalnum((unsigned char)p[n]);
		if (left && right)
			return true;
	}
	return false;
}

/* True when text names the bank (its code, its name, or a name the event
 * extractor knows it by: "Federal Reserve Board" for the Fed). */
static bool names_bank(const char *text, const char *bank)
{
	if (!text || !bank)
		return false;
	if (names_word(text, bank))
		return true;
	for (size_t i = 0; i < events_nbanks; i++)
		if (!strcmp(events_banks[i].code, bank) && names_word(text, events_banks[i].name))
			return true;
	for (size_t i = 0; i < events_nactors; i++)
		if (events_actors[i].type == A_CB && events_actors[i].code &&
		    !strcmp(events_actors[i].code, bank) && strchr(events_actors[i].phrase, ' ') &&
		    names_word(text, events_actors[i].phrase))
			return true;
	return false;
}

static bool arr_has(const cJSON *arr, const char *id)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, arr)
		if (cJSON_IsString(s) && !strcmp(s->valuestring, id))
			return true;
	return false;
}

static bool has_source(const cJSON *e, const char *id)
{
	return arr_has(jget(e, "sources"), id);
}

/* Every source of a is one of b's. */
static bool sources_within(const cJSON *a, const cJSON *b)
{
	const cJSON *s;
	size_t n = 0;
	cJSON_ArrayForEach(s, jget(a, "sources")) {
		if (!cJSON_IsString(s) || !has_source(b, s->valuestring))
			return false;
		n++;
	}
	return n > 0;
}

/* How strongly event a is told as part of anchor b's act: 3 the same
 * sentence, 2 a's sentence names b's bank, 1 a's stories are all b's;
 * 0 not at all (another day or action, or no link). */
static int told_with(const cJSON *a, const cJSON *b)
{
	const char *da = jstr(a, "date"), *db = jstr(b, "date");
	const char *aa = jstr(a, "action"), *ab = jstr(b, "action");
	if (!da || !db || !aa || !ab || strcmp(da, db) || strcmp(aa, ab))
		return 0;
	const char *ea = evidence0(a), *eb = evidence0(b);
	if (ea && eb && !strcasecmp(ea, eb))
		return 3;
	if (names_bank(ea, jstr(b, "bank")))
		return 2;
	return sources_within(a, b) ? 1 : 0;
}

/* Groups the date-sorted events r[0..n) into lines: line[i] is the index
 * of the event whose line holds r[i] (its anchor, the best-sourced act of
 * the group). An act joins the anchor it is most strongly told with. */
void report_events_group(const struct ev_ref *r, size_t n, size_t *line)
{
	size_t *order = xcalloc(n ? n : 1, sizeof(*order));
	for (size_t i = 0; i < n; i++) {
		order[i] = i;
		line[i] = i;
	}
	/* Best-sourced first (stable): anchors are met before their parts. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			int a = cJSON_GetArraySize(jget(r[order[j]].e, "sources"));
			int b = cJSON_GetArraySize(jget(r[order[j - 1]].e, "sources"));
			if (a <= b)
				break;
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k], best = i;
		int strength = 0;
		for (size_t q = 0; q < k; q++) {
			size_t j = order[q];
			if (line[j] != j)
				continue;
			int s = told_with(r[i].e, r[j].e);
			if (s > strength) {
				strength = s;
				best = j;
			}
		}
		line[i] = best;
	}
	free(order);
}

/* The words that report the act, then the story they are from: a
 * headline alone ("BUNDESBANK BUYS DOLLARS") does not show why the Bank
 * of England's act is in it. */
static void put_event_quote(struct md *m, const cJSON *e)
{
	const char *ev = evidence0(e), *title = jstr(e, "title");
	if (ev && (!title || strcasecmp(ev, title))) {
		add(m, "\"");
		put(m, ev, "");
		add(m, "\" (");
		put(m, title, "(no title)");
		add(m, ")");
	} else if (title && strlen(title) > 2 && title[strlen(title) - 1] == '.' &&
		   islower((unsigned char)title[strlen(title) - 2])) {
		/* A headline written as a sentence ("... dealers said."):
		 * without its full stop before the "; " or " [sources" (not
		 * "IN U.S."). */
		char *t = xstrndup(title, strlen(title) - 1);
		put(m, t, "(no title)");
		free(t);
	} else {
		put(m, title, "(no title)");
	}
}

static bool any_evidence_says(const struct ev_ref *r, const size_t *line, size_t n, size_t a,
			      const char *word)
{
	for (size_t i = 0; i < n; i++)
		if (line[i] == a && evidence0(r[i].e) && names_word(evidence0(r[i].e), word))
			return true;
	return false;
}

/* The verdict shown beside an act: NULL when confirmed or pending. */
static const char *shown_verdict(struct md *m, const cJSON *e)
{
	const char *v = report_event_verdict(m->run, e, m->final);
	return v && strcmp(v, "confirmed") ? v : NULL;
}

/* The banks of the group anchored at a whose shown verdict is tag,
 * "A, B and C". */
static void put_banks(struct md *m, const struct ev_ref *r, const size_t *line, size_t n, size_t a,
		      const char *tag)
{
	size_t total = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *v = line[i] == a ? shown_verdict(m, r[i].e) : NULL;
		total += v && !strcmp(v, tag);
	}
	for (size_t i = 0; i < n; i++) {
		const char *v = line[i] == a ? shown_verdict(m, r[i].e) : NULL;
		if (!v || strcmp(v, tag))
			continue;
		if (k++)
			add(m, k == total ? " and " : ", ");
		put(m, jstr(r[i].e, "bank"), "policy");
	}
}

/* One Key events line for the group anchored at a. */
static void event_line(struct md *m, const struct ev_ref *r, const size_t *line, size_t n,
		       size_t a)
{
	size_t members = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		members += line[i] == a;
	add(m, "- ");
	put_lead(m, jstr(r[a].e, "date"), "undated");
	add(m, " — ");
	if (members == 1) {
		report_put_event_label(m, r[a].e);
		put_verdict_tag(m, r[a].e);
	} else {
		if (any_evidence_says(r, line, n, a, "concerted") ||
		    any_evidence_says(r, line, n, a, "coordinated") ||
		    any_evidence_says(r, line, n, a, "joint"))
			add(m, "concerted ");
		put(m, jstr(r[a].e, "action"), "event");
		add(m, " by the ");
		/* The confirmed banks first, then the others, and the verdicts
		 * after the list by verdict: "by the BOJ, Fed and BoE (Fed and
		 * BoE unverified)", "(both unverified)"; a tag after each bank
		 * ("the Fed (unverified), BOJ and BoE (unverified)") read as
		 * if the BOJ's were the BoE's. */
		const char *tags[8];
		size_t ntags = 0, tagged = 0;
		for (size_t i = 0; i < n; i++) {
			const char *v = line[i] == a ? shown_verdict(m, r[i].e) : NULL;
			if (!v)
				continue;
			tagged++;
			bool seen = false;
			for (size_t t = 0; t < ntags; t++)
				seen = seen || !strcmp(tags[t], v);
			if (!seen && ntags < ARRAY_SIZE(tags))
				tags[ntags++] = v;
		}
		/* All of them, confirmed first, then by verdict. */
		for (size_t pass = 0; pass <= ntags; pass++)
			for (size_t i = 0; i < n; i++) {
				const char *v = line[i] == a ? shown_verdict(m, r[i].e) : NULL;
				if (line[i] != a || (pass ? !v || strcmp(v, tags[pass - 1]) : v != NULL))
					continue;
				if (k++)
					add(m, k == members ? " and " : ", ");
				put(m, jstr(r[i].e, "bank"), "policy");
			}
		if (tagged == members && ntags == 1) {
			sbuf_addf(&m->b, " (%s %s)", members == 2 ? "both" : "all", tags[0]);
		} else if (tagged) {
			add(m, " (");
			for (size_t t = 0; t < ntags; t++) {
				add(m, t ? ", " : "");
				put_banks(m, r, line, n, a, tags[t]);
				sbuf_addf(&m->b, " %s", tags[t]);
			}
			add(m, ")");
		}
	}
	add(m, ": ");
	/* Each distinct quote once, the anchor's first. */
	const char *said[64];
	size_t nsaid = 0;
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			if (line[i] != a || (pass == 0) != (i == a))
				continue;
			const char *q = evidence0(r[i].e) ? evidence0(r[i].e) : jstr(r[i].e, "title");
			bool dup = false;
			for (size_t s = 0; s < nsaid; s++)
				dup = dup || (q && said[s] && !strcasecmp(q, said[s]));
			if (dup || nsaid == ARRAY_SIZE(said))
				continue;
			add(m, nsaid ? "; " : "");
			said[nsaid++] = q;
			put_event_quote(m, r[i].e);
		}
	/* Every source of the group, once. */
	add(m, " [sources: ");
	cJSON *src = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		const cJSON *s;
		if (line[i] != a)
			continue;
		cJSON_ArrayForEach(s, jget(r[i].e, "sources"))
			if (cJSON_IsString(s) && !arr_has(src, s->valuestring))
				cJSON_AddItemToArray(src, cJSON_CreateString(s->valuestring));
	}
	report_put_list(m, src, "none cited");
	cJSON_Delete(src);
	add(m, "]\n");
}

/* Sentiment by currency. */

struct ccy_list {
	const char *v[64];
	size_t n;
};

static void ccy_list_add(struct ccy_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return;
	if (l->n < ARRAY_SIZE(l->v))
		l->v[l->n++] = s;
}

static void put_joined(struct md *m, const struct ccy_list *l, const char *last)
{
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			add(m, i + 1 == l->n ? last : ", ");
		put(m, l->v[i], "");
	}
}

/* The stories a currency's tone rests on; -1 when not said. */
static double ccy_stories(const cJSON *run, const char *ccy)
{
	double n;
	return jnum_get(jget(jget(run, "sentiment"), ccy), "stories", &n) ? n : -1;
}

static void md_sentiment(struct md *m)
{
	const cJSON *s = jget(m->run, "sentiment"), *c, *p;
	struct ccy_list none = { .n = 0 };
	size_t n = 0;
	cJSON_ArrayForEach(c, s) {
		double score, stories;
		if (!c->string || !jnum_get(c, "score", &score))
			continue;
		bool said = jnum_get(c, "stories", &stories);
		if (said && stories < 1) {
			ccy_list_add(&none, c->string);
			continue;
		}
		add(m, n++ ? "; " : "News sentiment by currency (score from -1 to +1): ");
		char buf[32];
		report_fmt_signed(buf, sizeof(buf), score);
		put(m, c->string, "");
		sbuf_addf(&m->b, " %s", buf);
		if (said)
			sbuf_addf(&m->b, " (%.0f %s)", stories, stories == 1 ? "story" : "stories");
	}
	if (n)
		add(m, ". ");
	if (none.n) {
		add(m, "No story in the window discusses ");
		put_joined(m, &none, " or ");
		add(m, none.n == 1 ? ", so it has no tone. " : ", so they have no tone. ");
	}
	/* Pairs with stories on one side only, by the side they rest on. */
	struct ccy_list sides = { .n = 0 };
	cJSON_ArrayForEach(p, jget(m->run, "pairs")) {
		char b[8], q[8];
		if (!cJSON_IsString(p) || !report_pair_split(p->valuestring, b, q))
			continue;
		double nb = ccy_stories(m->run, b), nq = ccy_stories(m->run, q);
		if (nb == 0 && nq > 0)
			ccy_list_add(&sides, jget(jget(m->run, "sentiment"), q)->string);
		else if (nq == 0 && nb > 0)
			ccy_list_add(&sides, jget(jget(m->run, "sentiment"), b)->string);
	}
	for (size_t i = 0; i < sides.n; i++) {
		struct ccy_list pairs = { .n = 0 };
		cJSON_ArrayForEach(p, jget(m->run, "pairs")) {
			char b[8], q[8];
			if (!cJSON_IsString(p) || !report_pair_split(p->valuestring, b, q))
				continue;
			double nb = ccy_stories(m->run, b), nq = ccy_stories(m->run, q);
			if ((nb == 0 && nq > 0 && !strcmp(q, sides.v[i])) ||
			    (nq == 0 && nb > 0 && !strcmp(b, sides.v[i])))
				ccy_list_add(&pairs, p->valuestring);
		}
		add(m, "The tone of ");
		put_joined(m, &pairs, " and ");
		add(m, " rests on ");
		put(m, sides.v[i], "");
		add(m, " alone, so the news does not say whether ");
		add(m, pairs.n == 1 ? "its move fits it. " : "their moves fit it. ");
	}
	if (n || none.n || sides.n) {
		while (m->b.len && m->b.data[m->b.len - 1] == ' ')
			m->b.data[--m->b.len] = '\0';
		add(m, "\n\n");
	}
}

void report_md_events(struct md *m)
{
	const cJSON *events = jget(m->run, "events");
	heading(m, "Key events");
	if (!cJSON_IsArray(events)) {
		missing(m);
		return;
	}
	size_t n;
	struct ev_ref *r = report_events_sorted(events, &n, report_ev_cmp_date);
	size_t *line = xcalloc(n ? n : 1, sizeof(*line));
	report_events_group(r, n, line);
	for (size_t i = 0; i < n; i++) {
		/* A line where its first act (by date and order) comes. */
		size_t a = line[i];
		bool first = true;
		for (size_t j = 0; j < i; j++)
			first = first && line[j] != a;
		if (first)
			event_line(m, r, line, n, a);
	}
	add(m, n ? "\n" : "No central-bank events were found in the news for the window.\n\n");
	free(line);
	free(r);
	md_sentiment(m);
}

/* The summary's sentence on the acts. */

/* "the Bank of Japan" for "BOJ". */
static void put_bank_words(struct md *m, const char *code)
{
	static const char *const special[][2] = {
		{ "Fed", "the Federal Reserve" }, { "Bundesbank", "the Bundesbank" },
		{ "Riksbank", "the Riksbank" }, { "Norges", "Norges Bank" },
		{ "DKNB", "Danmarks Nationalbank" }, { "BNM", "Bank Negara Malaysia" },
		{ "policy", "policy makers" },
	};
	for (size_t i = 0; code && i < ARRAY_SIZE(special); i++)
		if (!strcmp(code, special[i][0])) {
			add(m, special[i][1]);
			return;
		}
	for (size_t i = 0; code && i < events_nbanks; i++)
		if (!strcmp(code, events_banks[i].code)) {
			add(m, "the ");
			add(m, events_banks[i].name);
			return;
		}
	put(m, code, "a central bank");
}

static const char *ccy_words(const char *ccy)
{
	static const char *const w[][2] = {
		{ "USD", "dollars" }, { "JPY", "yen" }, { "DEM", "marks" }, { "GBP", "sterling" },
		{ "EUR", "euros" }, { "CHF", "Swiss francs" }, { "FRF", "French francs" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		if (!strcmp(ccy, w[i][0]))
			return w[i][1];
	return ccy;
}

/* A bank's acts of one kind over the window. */
struct theme {
	const char *bank, *action;
	const cJSON *ev[32];      /* its events, by date */
	size_t n;
	size_t stories;
	int rank;
	char verb[64];            /* "bought dollars", "cut its rediscount rate" */
};

static int theme_cmp(const void *a, const void *b)
{
	const struct theme *x = a, *y = b;
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	if (x->n != y->n)
		return (x->n < y->n) - (x->n > y->n);
	if (x->stories != y->stories)
		return (x->stories < y->stories) - (x->stories > y->stories);
	return strcmp(x->bank, y->bank);
}

/* The rate a cut or hike names ("rediscount rate"), else NULL. */
static const char *rate_named(const struct theme *t)
{
	static const char *const rates[] = { "rediscount rate", "discount rate", "lombard rate",
					     "repo rate", "prime rate", "base rate",
					     "lending rate", "bank rate" };
	for (size_t i = 0; i < ARRAY_SIZE(rates); i++)
		for (size_t k = 0; k < t->n; k++)
			if (names_word(jstr(t->ev[k], "title") ? jstr(t->ev[k], "title") : "",
				       rates[i]) ||
			    (evidence0(t->ev[k]) && names_word(evidence0(t->ev[k]), rates[i])))
				return rates[i];
	return NULL;
}

static void theme_verb(struct theme *t)
{
	const char *a = t->action;
	if (!strcmp(a, "intervention")) {
		/* The side by the majority of its acts, as the lead reads it. */
		int usd = 0;
		char other[4] = "";
		for (size_t k = 0; k < t->n; k++) {
			char fi[4] = "", we[4] = "";
			const char *txt[] = { jstr(t->ev[k], "title"), evidence0(t->ev[k]) };
			for (size_t i = 0; i < 2 && !fi[0] && !we[0]; i++)
				if (txt[i])
					(void)vev_direction(txt[i], fi, we);
			usd += !strcmp(fi, "USD") ? 1 : !strcmp(we, "USD") ? -1 : 0;
			if (fi[0] && strcmp(fi, "USD") && !other[0])
				memcpy(other, fi, 4);
		}
		if (usd)
			snprintf(t->verb, sizeof(t->verb), "%s dollars", usd > 0 ? "bought" : "sold");
		else if (other[0])
			snprintf(t->verb, sizeof(t->verb), "bought %s", ccy_words(other));
		else
			snprintf(t->verb, sizeof(t->verb), "intervened");
		return;
	}
	const char *rate = rate_named(t);
	if (!strcmp(a, "cut") || !strcmp(a, "hike"))
		snprintf(t->verb, sizeof(t->verb), "%s its %s", !strcmp(a, "cut") ? "cut" : "raised",
			 rate ? rate : "rates");
	else if (!strcmp(a, "hold"))
		snprintf(t->verb, sizeof(t->verb), "left its %s unchanged", rate ? rate : "rates");
	else
		snprintf(t->verb, sizeof(t->verb), "made a %s", a);
}

static bool date_ymd(const char *s, int *y, int *mo, int *d)
{
	int n = 0;
	return s && strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%n", y, mo, d, &n) == 3 && n == 10 &&
	       *mo >= 1 && *mo <= 12 && *d >= 1 && *d <= 31;
}

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Days as "25 Mar 1987", "24 and 26 Mar 1987", "each day from 23 to 27
 * Mar 1987" (three or more days in a row), "24 Mar and 2 Apr 1987"; the
 * year left out when with_year is false. */
static void put_days(struct md *m, const char *const *days, size_t n, bool with_year)
{
	int y[32], mo[32], d[32];
	size_t k = 0;
	for (size_t i = 0; i < n && k < 32; i++)
		if (date_ymd(days[i], &y[k], &mo[k], &d[k]))
			k++;
	if (k == 0) {
		add(m, "an unknown date");
		return;
	}
	bool one_month = true, run = k >= 3;
	for (size_t i = 1; i < k; i++) {
		one_month = one_month && y[i] == y[0] && mo[i] == mo[0];
		run = run && y[i] == y[0] && mo[i] == mo[0] && d[i] == d[i - 1] + 1;
	}
	if (run) {
		sbuf_addf(&m->b, "each day from %d to %d %s", d[0], d[k - 1], months[mo[0] - 1]);
	} else {
		for (size_t i = 0; i < k; i++) {
			if (i)
				add(m, i + 1 == k ? " and " : ", ");
			sbuf_addf(&m->b, "%d", d[i]);
			if (!one_month && (i + 1 == k || mo[i + 1] != mo[i] || y[i + 1] != y[i]))
				sbuf_addf(&m->b, " %s", months[mo[i] - 1]);
		}
		if (one_month)
			sbuf_addf(&m->b, " %s", months[mo[0] - 1]);
	}
	if (with_year)
		sbuf_addf(&m->b, " %d", y[k - 1]);
}

/* "(23 Mar disputed, 27 Mar not validated)" or "(disputed)" when every
 * day shares it; nothing for confirmed acts. */
static void put_theme_notes(struct md *m, const struct theme *t)
{
	static const char *const kinds[] = { "disputed", "unverified", "not validated" };
	const char *v[32];
	size_t nk[3] = { 0, 0, 0 };
	for (size_t k = 0; k < t->n; k++) {
		v[k] = report_event_verdict(m->run, t->ev[k], m->final);
		for (size_t i = 0; i < 3; i++)
			nk[i] += v[k] && !strcmp(v[k], kinds[i]);
	}
	size_t parts = 0;
	for (size_t i = 0; i < 3; i++) {
		if (!nk[i])
			continue;
		add(m, parts++ ? ", " : " (");
		if (nk[i] < t->n) {
			const char *days[32];
			size_t nd = 0;
			for (size_t k = 0; k < t->n; k++)
				if (v[k] && !strcmp(v[k], kinds[i]))
					days[nd++] = jstr(t->ev[k], "date");
			put_days(m, days, nd, false);
			add(m, " ");
		}
		add(m, kinds[i]);
	}
	if (parts)
		add(m, ")");
}

void report_md_summary_events(struct md *m)
{
	const cJSON *events = jget(m->run, "events");
	if (!cJSON_IsArray(events)) {
		add(m, m->final ? "News events are not available. "
				: "News analysis is still pending. ");
		return;
	}
	size_t n;
	struct ev_ref *r = report_events_sorted(events, &n, report_ev_cmp_date);
	if (!n) {
		add(m, "The news search found no central-bank events in the window. ");
		free(r);
		return;
	}
	struct theme *t = xcalloc(n, sizeof(*t));
	size_t nt = 0;
	for (size_t i = 0; i < n; i++) {
		const char *bank = jstr(r[i].e, "bank"), *action = jstr(r[i].e, "action");
		bank = bank ? bank : "policy";
		action = action ? action : "event";
		size_t k = 0;
		while (k < nt && (strcmp(t[k].bank, bank) || strcmp(t[k].action, action)))
			k++;
		if (k == nt) {
			t[nt].bank = bank;
			t[nt].action = action;
			t[nt].rank = r[i].rank;
			nt++;
		}
		if (t[k].n < ARRAY_SIZE(t[k].ev))
			t[k].ev[t[k].n++] = r[i].e;
		t[k].stories += (size_t)cJSON_GetArraySize(jget(r[i].e, "sources"));
	}
	qsort(t, nt, sizeof(*t), theme_cmp);
	sbuf_addf(&m->b, "The news reported %zu central-bank %s: ", n, n == 1 ? "act" : "acts");
	size_t shown = nt < SUMMARY_THEMES ? nt : SUMMARY_THEMES;
	for (size_t k = 0; k < shown; k++) {
		theme_verb(&t[k]);
		add(m, k ? "; " : "");
		put_bank_words(m, t[k].bank);
		/* The verb once for a run of banks that did the same. */
		if (!k || strcmp(t[k].verb, t[k - 1].verb)) {
			add(m, " ");
			put(m, t[k].verb, "");
		}
		add(m, " on ");
		const char *days[32];
		for (size_t i = 0; i < t[k].n; i++)
			days[i] = jstr(t[k].ev[i], "date");
		put_days(m, days, t[k].n, true);
		put_theme_notes(m, &t[k]);
	}
	if (nt > shown) {
		size_t more = 0;
		for (size_t k = shown; k < nt; k++)
			more += t[k].n;
		sbuf_addf(&m->b, "; and %zu more (see Key events)", more);
	}
	add(m, ". ");
	free(t);
	free(r);
}
