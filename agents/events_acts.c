/* The acts a story's reading gathers (see events.h for the rules): one
 * per bank, kind and mode, with its day, currencies and evidence; the
 * partners and lists of banks that act alike; retold acts redated. */
#include "agents/events.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "agents/events_reader.h"
#include "agents/events_text.h"
#include "agents/events_words.h"
#include "core/banned.h"

static const struct bank_def *bank_get(const char *code)
{
	for (size_t i = 0; code && i < events_nbanks; i++)
		if (!strcmp(events_banks[i].code, code))
			return &events_banks[i];
	return NULL;
}

const char *events_bank_ccy(const char *bank)
{
	const struct bank_def *b = bank_get(bank);
	return b ? b->ccy : NULL;
}

void events_add_ccy(struct ev_act *a, const char *ccy)
{
	if (!ccy)
		return;
	for (size_t i = 0; i < a->nccy; i++)
		if (!strcmp(a->ccys[i], ccy)) {
			/* Named again after the bank's own was set. */
			if (i == 0)
				a->own_named = true;
			return;
		}
	if (a->nccy < EVENTS_CCY_MAX)
		snprintf(a->ccys[a->nccy++], sizeof(a->ccys[0]), "%s", ccy);
}

void events_clause_ccys(const struct clause *c, struct ev_act *a)
{
	for (size_t i = 0; i < c->n; i++) {
		/* An amount ("50 mln dlrs") is not the currency. */
		bool amount = i > 0 && (isdigit((unsigned char)c->w[i - 1].w[0]) ||
					is(c, i - 1, "mln") || is(c, i - 1, "billion"));
		const char *w = c->w[i].w;
		if (!strcmp(w, "yen") && !amount)
			events_add_ccy(a, "JPY");
		else if ((!strcmp(w, "dollar") || !strcmp(w, "dollars")) && !amount) {
			if (is(c, i - 1, "australian"))
				events_add_ccy(a, "AUD");
			else if (is(c, i - 1, "zealand"))
				events_add_ccy(a, "NZD");
			else if (is(c, i - 1, "canadian"))
				events_add_ccy(a, "CAD");
			else if (!is(c, i - 1, "taiwan") && !is(c, i - 1, "kong") &&
				 !is(c, i - 1, "singapore"))
				events_add_ccy(a, "USD");
		} else if ((!strcmp(w, "marks") || !strcmp(w, "mark")) && !amount)
			events_add_ccy(a, "DEM");
		else if ((!strcmp(w, "sterling") || !strcmp(w, "pound")) && !amount)
			events_add_ccy(a, "GBP");
		else if (!strcmp(w, "franc") || !strcmp(w, "francs")) {
			if (is(c, i - 1, "swiss"))
				events_add_ccy(a, "CHF");
			else if (is(c, i - 1, "french"))
				events_add_ccy(a, "FRF");
		}
	}
}

void events_drop_act(struct reader *r, size_t i)
{
	struct ev_story *s = r->out;
	size_t n = s->n - i - 1;
	memmove(&s->acts[i], &s->acts[i + 1], n * sizeof(s->acts[0]));
	memmove(&r->dated[i], &r->dated[i + 1], n * sizeof(bool));
	memmove(&r->vague_day[i], &r->vague_day[i + 1], n * sizeof(bool));
	memmove(&r->body_told[i], &r->body_told[i + 1], n * sizeof(bool));
	s->n--;
}

void events_story_add(struct reader *r, const struct clause *c, const char *bank,
		      enum ev_kind kind, enum ev_mode mode, const char *cue, int32_t day,
		      bool vague)
{
	struct ev_story *s = r->out;
	if (!c->title && mode == EV_MODE_FACT && r->nbody_facts < EVENTS_MAX) {
		r->body_facts[r->nbody_facts].bank = bank;
		r->body_facts[r->nbody_facts++].kind = kind;
	}
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->acts[i].bank, bank) && s->acts[i].kind == kind &&
		    s->acts[i].mode == mode) {
			/* The body names the currencies a headline leaves out,
			 * and the day ("on January 28") a headline's "in
			 * January" does not. */
			if (kind == EV_INTERVENTION)
				events_clause_ccys(c, &s->acts[i]);
			if (r->vague_day[i] && !vague && r->cur_dated) {
				s->acts[i].day = day;
				r->vague_day[i] = false;
				r->dated[i] = r->cur_dated;
			}
			/* A headline's act is the body's: its day when the body
			 * names one ("CROW SAYS BANK OF CANADA BOUGHT U.S.
			 * DOLLARS" over "bought U.S. dollars last week"). */
			/* Past the lead, the body's day when it is the first
			 * telling, on an earlier day of the last eight ("U.S.
			 * CREDIT MARKETS DIGEST FED DISCOUNT RATE RISE" over "the
			 * Federal Reserve's decision late on Friday to raise"). */
			if (s->acts[i].in_title && !c->title && !r->dated[i] && r->cur_dated &&
			    (r->lead || (!r->body_told[i] && day < s->acts[i].day &&
					 day + 8 >= s->acts[i].day))) {
				s->acts[i].day = day;
				r->dated[i] = true;
				r->vague_day[i] = vague;
			}
			if (!c->title)
				r->body_told[i] = true;
			return;
		}
	if (s->n >= EVENTS_MAX)
		return;
	const struct bank_def *b = bank_get(bank);
	struct ev_act *a = &s->acts[s->n++];
	memset(a, 0, sizeof(*a));
	a->bank = b ? b->code : "?";
	a->bank_name = b ? b->name : "?";
	a->kind = kind;
	a->mode = mode;
	a->day = day;
	r->vague_day[s->n - 1] = vague;
	r->dated[s->n - 1] = r->cur_dated;
	r->body_told[s->n - 1] = !c->title;
	a->in_title = c->title;
	snprintf(a->cue, sizeof(a->cue), "%s", cue ? cue : "");
	events_add_ccy(a, b ? b->ccy : NULL);
	if (kind == EV_INTERVENTION)
		events_clause_ccys(c, a);
	/* The evidence: the clause, white space folded. */
	size_t k = 0, i;
	bool sp = false;
	for (i = 0; i < c->len && k + 4 < sizeof(a->evidence); i++) {
		unsigned char ch = (unsigned char)c->text[i];
		if (isspace(ch)) {
			sp = k > 0;
			continue;
		}
		if (ch < 32 || ch == 127)
			continue;
		if (sp)
			a->evidence[k++] = ' ';
		sp = false;
		a->evidence[k++] = (char)ch;
	}
	a->evidence[k] = 0;
	/* Cut short: at the last word's end, marked so ("…"). */
	while (i < c->len && isspace((unsigned char)c->text[i]))
		i++;
	if (i < c->len) {
		/* (Not inside a character: a sequence the cut left short
		 * goes.) */
		size_t j = k;
		while (j > 0 && ((unsigned char)a->evidence[j - 1] & 0xC0) == 0x80)
			j--;
		if (j > 0 && (unsigned char)a->evidence[j - 1] >= 0xC0) {
			unsigned char lead = (unsigned char)a->evidence[j - 1];
			size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
			if (k - (j - 1) < need)
				k = j - 1;
		}
		a->evidence[k] = 0;
		char *spc = strrchr(a->evidence, ' ');
		if (spc && spc - a->evidence > (ptrdiff_t)k / 2)
			k = (size_t)(spc - a->evidence);
		memcpy(a->evidence + k, "\xe2\x80\xa6", 4);
	}
}

/* The actor of the verb at v: the nearest mention before it in the clause
 * (an intervening commercial bank or government takes the act), or
 * "by <bank>" after it for a noun. */
/* The banks of a list starting at word k ("the Fed, the Bank of Japan and
 * the Bundesbank", "the U.S., Japan and Britain", "the central banks of
 * Japan and West Germany") act too: each is added as a fact of the kind.
 * Returns the number added. */
size_t events_add_list(struct reader *r, const struct clause *c, const struct mention *m,
		       size_t nm, size_t k, enum ev_kind kind, int32_t day, bool vague)
{
	size_t added = 0;
	if (is(c, k, "the"))
		k++;
	/* "the central banks of": the countries after "of". */
	if (is(c, k, "central") && is(c, k + 1, "banks") && is(c, k + 2, "of"))
		k += 3;
	for (;;) {
		if (is(c, k, "the"))
			k++;
		const struct mention *p = NULL;
		for (size_t i = 0; i < nm && !p; i++)
			if (m[i].pos == k && (m[i].type == A_CB || m[i].type == A_COUNTRY))
				p = &m[i];
		if (!p)
			return added;
		events_story_add(r, c, p->code, kind, EV_MODE_FACT, "", day, vague);
		added++;
		k = p->pos + p->len;
		if (is(c, k, "and"))
			k++;
		else if (p->type != A_COUNTRY && !comma_before(c, k))
			return added;
	}
}

/* The banks named as partners of a reported intervention act too:
 * "bought dollars with the Bundesbank and the Fed", "intervention by the
 * Fed and the Bank of Japan", "... as did the Bundesbank", "the Fed joined
 * the Bank of Japan in buying dollars". */
void events_add_partners(struct reader *r, const struct clause *c, const struct mention *m,
			 size_t nm, size_t v, bool noun, int32_t day, bool vague)
{
	if (noun && is(c, v + 1, "by"))
		events_add_list(r, c, m, nm, v + 2, EV_INTERVENTION, day, vague);
	/* "joined the Bank of Japan in buying": the one who joined. */
	if (!noun && v >= 3 && is(c, v - 1, "in")) {
		const struct mention *b = NULL, *a = NULL;
		for (size_t i = 0; i < nm; i++)
			if (m[i].pos + m[i].len == v - 1)
				b = &m[i];
		size_t j = b ? b->pos : 0;
		if (j > 0 && is(c, j - 1, "the"))
			j--;
		if (b && j > 0 && (is(c, j - 1, "joined") || is(c, j - 1, "joins"))) {
			for (size_t i = 0; i < nm; i++)
				if (m[i].pos + m[i].len <= j - 1)
					a = &m[i];
			if (a && (a->type == A_CB || a->type == A_COUNTRY))
				events_story_add(r, c, a->code, EV_INTERVENTION, EV_MODE_FACT, "", day, vague);
		}
	}
	if (noun)
		return;
	size_t k = v + 1;
	while (k < c->n && k < v + 20 && !(k < v + 12 && is(c, k, "with")) && !is(c, k, "said") &&
	       !(k < v + 12 && is(c, k, "as") && is(c, k + 1, "did")) &&
	       !(is(c, k, "joined") && is(c, k + 1, "by") && comma_before(c, k)))
		k++;
	/* "bought dollars in London this afternoon, joined by the
	 * Bundesbank", also after an "as ..." aside ("as the U.S. currency
	 * fell to new record lows, joined by the Bundesbank"): the partner. */
	if (is(c, k, "joined") && is(c, k + 1, "by"))
		events_add_list(r, c, m, nm, k + 2, EV_INTERVENTION, day, vague);
	else if (k < v + 12 && is(c, k, "with"))
		events_add_list(r, c, m, nm, k + 1, EV_INTERVENTION, day, vague);
	else if (k < v + 12 && is(c, k, "as") && is(c, k + 1, "did"))
		events_add_list(r, c, m, nm, k + 2, EV_INTERVENTION, day, vague);
}

/* A body's fact whose clause names no day, told after a mention of the
 * same bank's act of the same kind that does name a past day ("its
 * discount rate cut on February 23 ... The Bank cut the rate to 2.5 pct
 * from three"), retells that act: it takes that day, and is background
 * when the day is before the week. */
void events_redate_retold(struct reader *r)
{
	struct ev_story *s = r->out;
	for (size_t i = 0; i < s->n; i++) {
		struct ev_act *a = &s->acts[i];
		if (a->mode != EV_MODE_FACT || a->in_title || r->dated[i])
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct ev_act *e = &s->acts[j];
			if (!r->dated[j] || e->in_title || strcmp(e->bank, a->bank) ||
			    e->kind != a->kind || e->day >= r->pub_day - 1)
				continue;
			a->day = e->day;
			r->dated[i] = true;
			if (a->day < r->pub_day - EVENTS_BACKGROUND_DAYS)
				a->mode = EV_MODE_BACKGROUND;
			break;
		}
		/* One act per (bank, kind, mode): a retelling now background
		 * may repeat one. */
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->acts[j].bank, a->bank) && s->acts[j].kind == a->kind &&
			    s->acts[j].mode == a->mode) {
				events_drop_act(r, i--);
				break;
			}
	}
}
