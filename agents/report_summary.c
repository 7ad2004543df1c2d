/* The report's opening: the title, the window and sources, the
 * simulated-data banner, the executive summary (the main story, the
 * market, the events, the validation, the failures) and the narrative the
 * orchestrator model writes in LLM mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report.h"
#include "agents/report_lead.h"
#include "agents/report_priv.h"
#include "core/util.h"
#include "core/banned.h"


/* Title, window, sources and the simulated-data banner. */

static bool any_pair_simulated(const cJSON *run)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, jget(run, "market"))
		if (cJSON_IsTrue(jget(f, "simulated")))
			return true;
	return false;
}

static void md_banner(struct md *m)
{
	const cJSON *src = jget(m->run, "sources");
	bool market = cJSON_IsTrue(jget(src, "market_simulated")) || any_pair_simulated(m->run);
	bool news = cJSON_IsTrue(jget(src, "news_simulated"));
	if (!market && !news)
		return;
	add(m, "> **Simulated data:** ");
	add(m, market && news ? "the market prices and the news stories"
	       : market ? "the market prices" : "the news stories");
	add(m, " in this report are simulated, not real. Do not use them for trading "
	       "or research conclusions.\n\n");
}

static void md_window(struct md *m)
{
	const cJSON *w = jget(m->run, "window"), *src = jget(m->run, "sources");
	const char *ws = jstr(w, "start"), *we = jstr(w, "end");
	add(m, "**Window:** ");
	if (ws && we) {
		report_put_date_human(m, ws);
		add(m, " – ");
		report_put_date_human(m, we);
		add(m, " (");
		put(m, ws, "");
		add(m, " to ");
		put(m, we, "");
		add(m, ")");
	} else {
		add(m, m->final ? "not available" : "pending");
	}
	add(m, ". **Sources:** market ");
	put(m, jstr(src, "market"), "unknown");
	add(m, ", news ");
	put(m, jstr(src, "news"), "unknown");
	add(m, ".\n\n");
}

void report_md_title(struct md *m)
{
	add(m, "# ");
	report_md_put_flags(&m->b, jstr(m->run, "title") ? jstr(m->run, "title") : REPORT_TITLE, MD_HEAD);
	add(m, " — ");
	report_md_put_flags(&m->b, jstr(m->run, "iso_week") ? jstr(m->run, "iso_week") : "week unknown",
		     MD_HEAD);
	add(m, "\n\n");
	if (!m->final)
		add(m, "_Draft: the run is still in progress; sections marked pending fill in "
		       "as results arrive._\n\n");
	md_window(m);
	add(m, "**Run:** ");
	put(m, jstr(m->run, "run_id"), "unknown");
	if (jstr(m->run, "status")) {
		add(m, ", status ");
		put(m, jstr(m->run, "status"), "");
	}
	if (jstr(m->run, "as_of")) {
		add(m, ", as of ");
		put(m, jstr(m->run, "as_of"), "");
	}
	add(m, ".\n\n");
	md_banner(m);
}

/* Executive summary. */

/* Joins clauses as "a", "a and b" or "a, b and c". */
static void join_clauses(struct md *m, char **parts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			add(m, i + 1 == n ? " and " : ", ");
		add(m, parts[i]);
	}
}

/* The biggest mover; "so far" while other pairs are pending. */
static void summary_mover(struct md *m, size_t nfig, bool partial, const char *pair,
			  const cJSON *mover, double change)
{
	char s[32], e[32];
	const cJSON *st = jget(mover, "start"), *en = jget(mover, "end");
	double sv = 0, ev = 0;
	jnum_get(st, "close", &sv);
	jnum_get(en, "close", &ev);
	report_fmt_price(s, sizeof(s), sv);
	report_fmt_price(e, sizeof(e), ev);
	double r = round(change * 100) / 100;
	if (r == 0 && nfig == 1) {
		put(m, pair, "");
		add(m, partial ? ", so far the only pair with figures," : ", the only pair with figures,");
		add(m, " closed the window unchanged. ");
		return;
	}
	if (r == 0) {
		sbuf_addf(&m->b, "All %zu pairs with figures closed the window unchanged to two "
			  "decimals. ", nfig);
		return;
	}
	if (nfig == 1) {
		put(m, pair, "");
		add(m, partial ? ", so far the only pair with figures, " : ", the only pair with figures, ");
		add(m, r < 0 ? "fell" : "rose");
	} else {
		add(m, partial ? "The biggest mover so far was " : "The biggest mover was ");
		put(m, pair, "");
		add(m, r < 0 ? ", down" : ", up");
	}
	sbuf_addf(&m->b, " %.2f%% from %s on ", fabs(r), s);
	report_put_date_human(m, jstr(st, "date"));
	sbuf_addf(&m->b, " to %s on ", e);
	report_put_date_human(m, jstr(en, "date"));
	add(m, ". ");
}

static const char *sbuf_str(const struct sbuf *b)
{
	return b->data ? b->data : "";
}

/* Under this move (in %) a currency was little changed against the
 * dollar: a move an analyst would not call strengthening. */
#define LITTLE_CHANGED_PCT 0.10

/* Currency moves against the US dollar: each currency's own move (the
 * yen's rise when USD/JPY falls), sorted into strengthened, weakened,
 * little changed and unchanged (to two decimals). */
struct usd_move {
	char *ccy;
	double pct;
};

struct usd_moves {
	struct usd_move *v;
	size_t n;
};

static void usd_moves_add(struct usd_moves *u, const char *pair, double change)
{
	char b[8], q[8];
	if (!report_pair_split(pair, b, q) || (strcmp(b, "USD") && strcmp(q, "USD")) ||
	    !strcmp(b, q))
		return;
	bool usd_base = !strcmp(b, "USD");
	/* USD/JPY -2.62%: the yen bought 1/(1 - 0.0262) - 1 = +2.69% more. */
	double own = usd_base ? (change > -100 ? (100 / (100 + change) - 1) * 100 : NAN) : change;
	if (!isfinite(own))
		return;
	u->v = xrealloc(u->v, (u->n + 1) * sizeof(*u->v));
	u->v[u->n].pct = own;
	/* The code as the pair spells it (pairs without '/' have 3 letters). */
	u->v[u->n].ccy = xstrdup(usd_base ? q : b);
	u->n++;
}

static int usd_bucket(double pct)
{
	double r = round(pct * 100) / 100;
	if (r == 0)
		return 3;
	if (fabs(pct) < LITTLE_CHANGED_PCT)
		return 2;
	return pct > 0 ? 0 : 1;
}

static int usd_move_cmp(const void *a, const void *b)
{
	const struct usd_move *x = a, *y = b;
	return (fabs(x->pct) < fabs(y->pct)) - (fabs(x->pct) > fabs(y->pct));
}

/* Snapshot names as "A", "A and B" or "A, B and C" (escaped). */
static void put_names(struct md *m, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			add(m, i + 1 == n ? " and " : ", ");
		put(m, v[i], "");
	}
}

static void summary_usd(struct md *m, struct usd_moves *u, const char *const *nodata,
			size_t nnodata)
{
	static const char *const verbs[][2] = {
		{ "strengthened", "strengthened" }, { "weakened", "weakened" },
		{ "was little changed", "were little changed" },
		{ "was unchanged", "were unchanged" },
	};
	char *parts[4];
	size_t np = 0;
	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), usd_move_cmp);
	for (int k = 0; k < 4; k++) {
		struct sbuf list;
		size_t n = 0;
		sbuf_init(&list);
		for (size_t i = 0; i < u->n; i++) {
			if (usd_bucket(u->v[i].pct) != k)
				continue;
			if (n++)
				sbuf_addstr(&list, ", ");
			report_md_put_flags(&list, u->v[i].ccy, 0);
			if (k < 3)
				sbuf_addf(&list, " %+.2f%%", u->v[i].pct);
		}
		if (n) {
			const char *noun = np ? "" : n == 1 ? "currency " : "currencies ";
			parts[np] = xasprintf("%zu %s%s (%s)", n, noun, verbs[k][n != 1],
					      sbuf_str(&list));
			np++;
		}
		sbuf_release(&list);
	}
	if (np) {
		add(m, "Against the US dollar, ");
		join_clauses(m, parts, np);
	}
	if (nnodata) {
		add(m, np ? "; " : "");
		add(m, m->final ? (np ? "there were no figures for " : "There were no figures for ")
				: (np ? "figures are still pending for " : "Figures are still pending for "));
		put_names(m, nodata, nnodata);
	}
	if (np || nnodata)
		add(m, ". ");
	for (size_t i = 0; i < np; i++)
		free(parts[i]);
}

/* The week's main story (report_lead.h) leads the summary, with the move
 * of its pair; returns that pair (static in *lead) or NULL. */
static const char *summary_lead(struct md *m, struct report_lead *lead)
{
	if (!report_lead_find(m->run, lead))
		return NULL;
	add(m, "The week's main story was the ");
	put(m, lead->bank, "");
	add(m, " ");
	put(m, lead->action, "");
	if (lead->bought[0] || lead->sold[0]) {
		add(m, lead->bought[0] ? ", buying " : ", selling ");
		put(m, lead->bought[0] ? lead->bought : lead->sold, "");
		if (lead->bought[0] && lead->sold[0]) {
			add(m, " for ");
			put(m, lead->sold, "");
		}
		add(m, ",");
	}
	if (lead->ndays > 1) {
		sbuf_addf(&m->b, " on %zu days from ", lead->ndays);
		report_put_date_human(m, lead->first);
		add(m, " to ");
		report_put_date_human(m, lead->last);
	} else {
		add(m, " on ");
		report_put_date_human(m, lead->first);
	}
	sbuf_addf(&m->b, " (%zu %s)", lead->nstories, lead->nstories == 1 ? "story" : "stories");
	const cJSON *f = lead->pair[0] ? report_pair_figures(m->run, lead->pair) : NULL;
	char b[8], q[8];
	if (!f || !report_pair_split(lead->pair, b, q)) {
		add(m, ". ");
		return NULL;
	}
	double r = round(lead->change * 100) / 100;
	char s0[32], s1[32];
	double v0 = 0, v1 = 0;
	jnum_get(jget(f, "start"), "close", &v0);
	jnum_get(jget(f, "end"), "close", &v1);
	report_fmt_price(s0, sizeof(s0), v0);
	report_fmt_price(s1, sizeof(s1), v1);
	if (r != 0) {
		add(m, ", as ");
		put(m, r < 0 ? q : b, "");
		add(m, " strengthened: ");
	} else {
		add(m, ": ");
	}
	put(m, lead->pair, "");
	if (r != 0)
		sbuf_addf(&m->b, " %s %.2f%%", r < 0 ? "fell" : "rose", fabs(r));
	else
		add(m, " was unchanged,");
	sbuf_addf(&m->b, " from %s on ", s0);
	report_put_date_human(m, jstr(jget(f, "start"), "date"));
	sbuf_addf(&m->b, " to %s on ", s1);
	report_put_date_human(m, jstr(jget(f, "end"), "date"));
	add(m, ". ");
	return lead->pair;
}

static void summary_market(struct md *m, const char *lead_pair)
{
	struct usd_moves u;
	const cJSON *p, *mover = NULL;
	const char *mover_pair = NULL;
	size_t nfig = 0, nnodata = 0;
	double best = 0;
	const char **nodata = xcalloc((size_t)cJSON_GetArraySize(jget(m->run, "pairs")) + 1,
				      sizeof(*nodata));
	memset(&u, 0, sizeof(u));
	cJSON_ArrayForEach(p, jget(m->run, "pairs")) {
		if (!cJSON_IsString(p))
			continue;
		const cJSON *f = report_pair_figures(m->run, p->valuestring);
		double c;
		if (!f || !jnum_get(f, "change_pct", &c)) {
			nodata[nnodata++] = p->valuestring;
			continue;
		}
		if (!mover || fabs(c) > fabs(best)) {
			mover = f;
			mover_pair = p->valuestring;
			best = c;
		}
		nfig++;
		usd_moves_add(&u, p->valuestring, c);
	}
	if (mover && lead_pair && !strcmp(lead_pair, mover_pair) && nfig > 1) {
		put(m, lead_pair, "");
		add(m, !m->final && nnodata ? " was the biggest mover so far. " :
					      " was the biggest mover. ");
	} else if (mover)
		summary_mover(m, nfig, !m->final && nnodata, mover_pair, mover, best);
	else
		add(m, m->final ? "No market figures are available for the window. "
				: "Market figures are still pending. ");
	summary_usd(m, &u, nodata, mover ? nnodata : 0);
	for (size_t i = 0; i < u.n; i++)
		free(u.v[i].ccy);
	free(u.v);
	free(nodata);
}

/* Importance of a central-bank action for the summary (lower first). */
static int action_rank(const cJSON *e)
{
	static const char *const order[] = { "intervention", "hike", "cut", "hold", "statement" };
	const char *a = jstr(e, "action");
	for (size_t i = 0; a && i < ARRAY_SIZE(order); i++)
		if (!strcmp(a, order[i]))
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

int report_ev_cmp_date(const void *a, const void *b)
{
	const struct ev_ref *x = a, *y = b;
	const char *dx = jstr(x->e, "date"), *dy = jstr(y->e, "date");
	int c = strcmp(dx ? dx : "", dy ? dy : "");
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The events as refs sorted by cmp; caller frees. */
struct ev_ref *report_events_sorted(const cJSON *events, size_t *n,
				    int (*cmp)(const void *, const void *))
{
	const cJSON *e;
	size_t cap = (size_t)cJSON_GetArraySize(events);
	struct ev_ref *r = xcalloc(cap ? cap : 1, sizeof(*r));
	*n = 0;
	cJSON_ArrayForEach(e, events) {
		if (!cJSON_IsObject(e) || *n >= cap)
			continue;
		r[*n].e = e;
		r[*n].idx = *n;
		r[*n].rank = action_rank(e);
		(*n)++;
	}
	qsort(r, *n, sizeof(*r), cmp);
	return r;
}

void report_put_event_label(struct md *m, const cJSON *e)
{
	put(m, jstr(e, "bank"), "policy");
	add(m, " ");
	put(m, jstr(e, "action"), "event");
}

static void count_verdicts(const cJSON *findings, size_t n[4], size_t *total)
{
	const cJSON *f;
	memset(n, 0, 4 * sizeof(n[0]));
	*total = 0;
	cJSON_ArrayForEach(f, findings) {
		if (!cJSON_IsObject(f))
			continue;
		n[report_verdict_of(f)]++;
		(*total)++;
	}
}

static void summary_validation(struct md *m)
{
	const cJSON *v = jget(m->run, "validation");
	size_t n[4], total;
	double conf;
	count_verdicts(jget(m->run, "findings"), n, &total);
	const char *noun = total == 1 ? "finding" : "findings", *are = total == 1 ? "is" : "are";
	if (jstr_is(v, "status", "done")) {
		if (!total) {
			add(m, "Validation completed with no findings to check. ");
			return;
		}
		sbuf_addf(&m->b, "Of %zu %s, validation confirmed %zu, disputed %zu and left "
			  "%zu unverified", total, noun, n[V_CONFIRMED], n[V_DISPUTED],
			  n[V_UNVERIFIED] + n[V_PENDING]);
		if (jnum_get(v, "overall_confidence", &conf))
			sbuf_addf(&m->b, " (overall confidence %.2f)", conf);
	} else if (jstr_is(v, "status", "failed")) {
		add(m, "Validation failed (");
		put(m, jstr(v, "reason"), "no reason given");
		add(m, ")");
		if (total)
			sbuf_addf(&m->b, ", so the %zu %s %s unverified", total, noun, are);
	} else if (m->final) {
		add(m, "Validation is not available");
		if (total)
			sbuf_addf(&m->b, ", so the %zu %s %s unverified", total, noun, are);
	} else {
		add(m, "Validation is still pending");
		if (total)
			sbuf_addf(&m->b, " for the %zu %s so far", total, noun);
		if (jstr_is(v, "status", "awaiting_approval"))
			add(m, ": the validator's LLM review reached its budget and waits for the "
			       "operator's approval");
	}
	add(m, ". ");
}

/* "the USD/JPY market data task" */
static void put_task_name(struct md *m, const cJSON *f)
{
	const char *kind = jstr(f, "kind");
	char *k = xstrdup(kind ? kind : "");
	for (char *p = k; *p; p++)
		if (*p == '_')
			*p = ' ';
	add(m, "the ");
	if (jstr(f, "pair")) {
		put(m, jstr(f, "pair"), "");
		add(m, " ");
	}
	if (*k) {
		put(m, k, "");
		add(m, " ");
	}
	add(m, "task");
	free(k);
}

static void summary_one_reassignment(struct md *m, const cJSON *f)
{
	put_task_name(m, f);
	add(m, " was reassigned from ");
	put(m, jstr(f, "from"), "an agent");
	add(m, " to ");
	put(m, jstr(f, "to"), "another agent");
	add(m, ". ");
}

static void summary_failure_counts(struct md *m, size_t re, size_t fa, size_t nv)
{
	char *parts[3];
	size_t np = 0;
	if (re)
		parts[np++] = xasprintf("%zu %s reassigned", re, re == 1 ? "task was" : "tasks were");
	if (fa) {
		const char *noun = re ? "" : fa == 1 ? "task " : "tasks ";
		parts[np++] = xasprintf("%zu %sfailed", fa, noun);
	}
	if (nv)
		parts[np++] = xasprintf("%zu %s not validated", nv,
					nv == 1 ? "result was" : "results were");
	join_clauses(m, parts, np);
	add(m, "; see Failures and reassignments. ");
	for (size_t i = 0; i < np; i++)
		free(parts[i]);
}

static void summary_failures(struct md *m)
{
	const cJSON *f, *one = NULL;
	size_t re = 0, fa = 0, nv = 0;
	cJSON_ArrayForEach(f, jget(m->run, "failures")) {
		if (!cJSON_IsObject(f))
			continue;
		one = f;
		if (jstr_is(f, "what", "reassigned"))
			re++;
		else if (jstr_is(f, "what", "not_validated"))
			nv++;
		else
			fa++;
	}
	if (re + fa + nv == 0)
		return;
	add(m, "During the run, ");
	if (re + fa + nv == 1 && re) {
		summary_one_reassignment(m, one);
	} else if (re + fa + nv == 1 && fa) {
		/* One failure: which task and why, as the table says. */
		put_task_name(m, one);
		add(m, " failed");
		const char *why = jstr(one, "reason");
		if (why && *why) {
			add(m, ": ");
			put(m, why, "");
		}
		add(m, why && *why && why[strlen(why) - 1] == '.' ? " " : ". ");
	} else
		summary_failure_counts(m, re, fa, nv);
}

void report_md_summary(struct md *m)
{
	heading(m, "Executive summary");
	size_t start = m->b.len;
	struct report_lead lead;
	summary_market(m, summary_lead(m, &lead));
	report_md_summary_events(m);
	summary_validation(m);
	summary_failures(m);
	while (m->b.len > start && m->b.data[m->b.len - 1] == ' ')
		m->b.data[--m->b.len] = '\0';
	add(m, "\n\n");
}

/* Narrative (LLM mode): the orchestrator model's summary, streamed into
 * the draft as it is written. Absent in deterministic mode. */
void report_md_narrative(struct md *m)
{
	const cJSON *n = jget(m->run, "narrative");
	const char *text = jstr(n, "text"), *st = jstr(n, "status");
	if (!cJSON_IsObject(n))
		return;
	heading(m, "Narrative");
	add(m, "_Written by the orchestrator model ");
	put(m, jstr(n, "model"), "?");
	add(m, " (");
	put(m, jstr(n, "provider"), "?");
	add(m, ") from the compiled findings; every figure in the tables below is computed "
	       "from the data._\n\n");
	if (st && !strcmp(st, "awaiting_approval") && !m->final) {
		add(m, "_paused: its LLM budget is spent (");
		put(m, jstr(n, "paused_because"), "budget reached");
		add(m, "); the report waits for the operator's approval_\n\n");
		return;
	}
	if (!text || !*text) {
		if (st && !strcmp(st, "streaming") && !m->final)
			add(m, "_being written_\n\n");
		else
			missing(m);
		return;
	}
	/* One paragraph per line of text, each escaped as a block. */
	char *copy = util_sanitize(text, strlen(text), true);
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ')
			line++;
		if (!*line)
			continue;
		put_lead(m, line, "");
		add(m, "\n\n");
	}
	free(copy);
	if (st && !strcmp(st, "streaming") && !m->final)
		add(m, "_(still being written)_\n\n");
}
