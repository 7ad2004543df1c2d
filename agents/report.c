/* The report writer's rendering: a run snapshot to the Markdown report and
 * its JSON twin. Every string from the snapshot goes through md_put_flags, which
 * strips control characters and escapes what would change the document's
 * structure. */
#include "agents/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report_lead.h"
#include "core/json_out.h"
#include "core/util.h"
#include "agents/analytics.h" /* the MA5 vs MA20 column's constants */
#include "core/banned.h"

#define REPORT_TITLE "Weekly Asia/G10 FX report"
#define REPORT_SUFFIX "-asia-g10-fx"
#define STALE_DAYS 3        /* a last quote older than this is stale */
#define SUMMARY_EVENTS 3    /* events named in the executive summary */

/* Snapshot access (the getters: core/json_out.h). */

/* The pair's market entry when it holds start and end closes, else NULL. */
static const cJSON *pair_figures(const cJSON *run, const char *pair)
{
	const cJSON *f = jget(jget(run, "market"), pair);
	double v;
	if (!jnum_get(jget(f, "start"), "close", &v) || !jnum_get(jget(f, "end"), "close", &v))
		return NULL;
	return f;
}

static bool validation_finished(const cJSON *run)
{
	const cJSON *v = jget(run, "validation");
	return jstr_is(v, "status", "done") || jstr_is(v, "status", "failed");
}

enum verdict { V_CONFIRMED, V_DISPUTED, V_UNVERIFIED, V_PENDING };

static enum verdict verdict_of(const cJSON *finding)
{
	const char *v = jstr(finding, "verdict");
	if (!v)
		return V_PENDING;
	if (!strcmp(v, "confirmed"))
		return V_CONFIRMED;
	if (!strcmp(v, "disputed"))
		return V_DISPUTED;
	if (!strcmp(v, "unverified"))
		return V_UNVERIFIED;
	return V_PENDING;
}

/* "USD/JPY" or "USDJPY" to its two currency codes. */
static bool pair_split(const char *pair, char base[8], char quote[8])
{
	const char *slash = strchr(pair, '/');
	size_t nb = slash ? (size_t)(slash - pair) : 3;
	const char *q = slash ? slash + 1 : pair + 3;
	if (!slash && strlen(pair) != 6)
		return false;
	if (nb == 0 || nb > 7 || !*q || strlen(q) > 7)
		return false;
	memcpy(base, pair, nb);
	base[nb] = '\0';
	util_strlcpy(quote, q, 8);
	return true;
}

/* Warnings of the snapshot and one per pair without figures; new array. */
static cJSON *all_warnings(const cJSON *run, bool final)
{
	cJSON *w = cJSON_CreateArray();
	const cJSON *j;
	cJSON_ArrayForEach(j, jget(run, "warnings"))
		if (cJSON_IsString(j))
			cJSON_AddItemToArray(w, cJSON_CreateString(j->valuestring));
	cJSON_ArrayForEach(j, jget(run, "pairs")) {
		if (!cJSON_IsString(j) || pair_figures(run, j->valuestring))
			continue;
		char *s = xasprintf(final ? "%s: no data; the pair has no figures in this report"
					  : "%s: no figures yet", j->valuestring);
		cJSON_AddItemToArray(w, cJSON_CreateString(s));
		free(s);
	}
	return w;
}

/* Markdown text. */

struct md {
	struct sbuf b;
	const cJSON *run;
	bool final;
};

enum {
	MD_LEAD = 1 << 0,  /* the text starts a block: escape list/quote/heading marks */
	MD_HEAD = 1 << 1,  /* inside an ATX heading: escape every '#' */
};

/* Escapes a block marker at the start of p; returns where copying goes on. */
static const char *md_lead(struct sbuf *b, const char *p)
{
	if (*p && strchr("#>-+*=~_", *p)) {
		sbuf_addch(b, '\\');
		return p;
	}
	size_t n = strspn(p, "0123456789");
	if (n > 0 && n <= 9 && (p[n] == '.' || p[n] == ')')) {
		sbuf_add(b, p, n);
		sbuf_addch(b, '\\');
		return p + n;
	}
	return p;
}

/* Appends snapshot text, sanitized, trimmed and escaped. */
static void md_put_flags(struct sbuf *b, const char *s, unsigned flags)
{
	char *t = util_sanitize(s, strlen(s), false);
	const char *p = t, *end;
	while (*p == ' ')
		p++;
	end = p + strlen(p);
	while (end > p && end[-1] == ' ')
		end--;
	if (flags & MD_LEAD)
		p = md_lead(b, p);
	for (; p < end; p++) {
		switch (*p) {
		case '<':
			sbuf_addstr(b, "&lt;");
			break;
		case '#':
			if (flags & MD_HEAD)
				sbuf_addch(b, '\\');
			sbuf_addch(b, '#');
			break;
		case '|':
		case '`':
		case '\\':
		case '[':
			sbuf_addch(b, '\\');
			sbuf_addch(b, *p);
			break;
		default:
			sbuf_addch(b, *p);
		}
	}
	free(t);
}

static void put(struct md *m, const char *s, const char *fallback)
{
	md_put_flags(&m->b, s ? s : fallback, 0);
}

static void put_lead(struct md *m, const char *s, const char *fallback)
{
	md_put_flags(&m->b, s ? s : fallback, MD_LEAD);
}

static void add(struct md *m, const char *s)
{
	sbuf_addstr(&m->b, s);
}

/* "_pending_" in a draft, "_not available_" in a final report. */
static void missing(struct md *m)
{
	add(m, m->final ? "_not available_\n\n" : "_pending_\n\n");
}

static void heading(struct md *m, const char *title)
{
	sbuf_addf(&m->b, "## %s\n\n", title);
}

/* Joins the strings of a JSON array with ", " (escaped). */
static void put_list(struct md *m, const cJSON *arr, const char *none)
{
	const cJSON *j;
	size_t n = 0;
	cJSON_ArrayForEach(j, arr) {
		if (!cJSON_IsString(j))
			continue;
		if (n++)
			add(m, ", ");
		put(m, j->valuestring, "");
	}
	if (!n)
		add(m, none);
}

/* Numbers and dates. */

/* v with the given decimals and an optional sign; magnitudes no FX figure
 * reaches are shown in exponent form rather than as 300 digits. */
static void fmt_fixed(char *buf, size_t size, double v, int decimals, bool sign)
{
	if (fabs(v) >= 1e15)
		snprintf(buf, size, sign ? "%+.6g" : "%.6g", v);
	else
		snprintf(buf, size, sign ? "%+.*f" : "%.*f", decimals, v);
}

/* Closes, highs and lows: two decimals from 100 up, else four. */
static void fmt_price(char *buf, size_t size, double v)
{
	fmt_fixed(buf, size, v, fabs(v) >= 100 ? 2 : 4, false);
}

/* A signed figure to two decimals; "0.00" when it rounds to zero. */
static void fmt_signed(char *buf, size_t size, double v)
{
	double r = round(v * 100) / 100;
	if (r == 0)
		snprintf(buf, size, "0.00");
	else
		fmt_fixed(buf, size, r, 2, true);
}

static bool date_parse(const char *s, int *y, int *mo, int *d)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int n = 0;
	if (!s || strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d%n", y, mo, d, &n) != 3 || n != 10)
		return false;
	return *mo >= 1 && *mo <= 12 && *d >= 1 && *d <= mdays[*mo - 1];
}

/* "20 Mar 1987" for "1987-03-20"; other text as it is. */
static void put_date_human(struct md *m, const char *iso)
{
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	int y, mo, d;
	if (date_parse(iso, &y, &mo, &d))
		sbuf_addf(&m->b, "%d %s %d", d, months[mo - 1], y);
	else
		put(m, iso, "an unknown date");
}

/* The closes of a market entry as a sparkline; caller frees. */
static char *closes_sparkline(const cJSON *f)
{
	const cJSON *closes = jget(f, "closes"), *c;
	int n = cJSON_GetArraySize(closes);
	if (n <= 0)
		return xstrdup("");
	double *v = xcalloc((size_t)n, sizeof(*v));
	size_t k = 0;
	cJSON_ArrayForEach(c, closes)
		if (k < (size_t)n && jnum_get(c, "close", &v[k]))
			k++;
	char *s = report_sparkline(v, k);
	free(v);
	return s;
}

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
		put_date_human(m, ws);
		add(m, " – ");
		put_date_human(m, we);
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

static void md_title(struct md *m)
{
	add(m, "# ");
	md_put_flags(&m->b, jstr(m->run, "title") ? jstr(m->run, "title") : REPORT_TITLE, MD_HEAD);
	add(m, " — ");
	md_put_flags(&m->b, jstr(m->run, "iso_week") ? jstr(m->run, "iso_week") : "week unknown",
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
	fmt_price(s, sizeof(s), sv);
	fmt_price(e, sizeof(e), ev);
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
	put_date_human(m, jstr(st, "date"));
	sbuf_addf(&m->b, " to %s on ", e);
	put_date_human(m, jstr(en, "date"));
	add(m, ". ");
}

static const char *sbuf_str(const struct sbuf *b)
{
	return b->data ? b->data : "";
}

/* Sorts currency moves against the US dollar into three lists. */
struct usd_moves {
	struct sbuf list[3];    /* strengthened, weakened, unchanged */
	size_t n[3];
};

static void usd_moves_add(struct usd_moves *u, const char *pair, double change)
{
	char b[8], q[8];
	if (!pair_split(pair, b, q) || (strcmp(b, "USD") && strcmp(q, "USD")) ||
	    !strcmp(b, q))
		return;
	double r = round(change * 100) / 100;
	bool usd_base = !strcmp(b, "USD");
	int k = r == 0 ? 2 : ((r > 0) != usd_base ? 0 : 1);
	if (u->n[k]++)
		sbuf_addstr(&u->list[k], ", ");
	md_put_flags(&u->list[k], usd_base ? q : b, 0);
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
	static const char *const verbs[] = { "strengthened", "weakened", "were unchanged" };
	char *parts[3];
	size_t np = 0;
	for (int k = 0; k < 3; k++) {
		if (!u->n[k])
			continue;
		const char *verb = k == 2 && u->n[k] == 1 ? "was unchanged" : verbs[k];
		parts[np++] = xasprintf("%zu %s %s (%s)", u->n[k],
					u->n[k] == 1 ? "currency" : "currencies", verb,
					sbuf_str(&u->list[k]));
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
		put_date_human(m, lead->first);
		add(m, " to ");
		put_date_human(m, lead->last);
	} else {
		add(m, " on ");
		put_date_human(m, lead->first);
	}
	sbuf_addf(&m->b, " (%zu %s)", lead->nstories, lead->nstories == 1 ? "story" : "stories");
	const cJSON *f = lead->pair[0] ? pair_figures(m->run, lead->pair) : NULL;
	char b[8], q[8];
	if (!f || !pair_split(lead->pair, b, q)) {
		add(m, ". ");
		return NULL;
	}
	double r = round(lead->change * 100) / 100;
	char s0[32], s1[32];
	double v0 = 0, v1 = 0;
	jnum_get(jget(f, "start"), "close", &v0);
	jnum_get(jget(f, "end"), "close", &v1);
	fmt_price(s0, sizeof(s0), v0);
	fmt_price(s1, sizeof(s1), v1);
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
	put_date_human(m, jstr(jget(f, "start"), "date"));
	sbuf_addf(&m->b, " to %s on ", s1);
	put_date_human(m, jstr(jget(f, "end"), "date"));
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
	for (int k = 0; k < 3; k++)
		sbuf_init(&u.list[k]);
	cJSON_ArrayForEach(p, jget(m->run, "pairs")) {
		if (!cJSON_IsString(p))
			continue;
		const cJSON *f = pair_figures(m->run, p->valuestring);
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
	for (int k = 0; k < 3; k++)
		sbuf_release(&u.list[k]);
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

struct ev_ref {
	const cJSON *e;
	size_t idx;
	int rank;
};

static int ev_cmp_date(const void *a, const void *b)
{
	const struct ev_ref *x = a, *y = b;
	const char *dx = jstr(x->e, "date"), *dy = jstr(y->e, "date");
	int c = strcmp(dx ? dx : "", dy ? dy : "");
	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Summary order: the kind of action, then a named central bank before a
 * policy body, then the best-sourced (most stories), then the date. */
static int ev_cmp_rank(const void *a, const void *b)
{
	const struct ev_ref *x = a, *y = b;
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	const char *bx = jstr(x->e, "bank"), *by = jstr(y->e, "bank");
	int px = bx && !strcmp(bx, "policy"), py = by && !strcmp(by, "policy");
	if (px != py)
		return px - py;
	int nx = cJSON_GetArraySize(jget(x->e, "sources"));
	int ny = cJSON_GetArraySize(jget(y->e, "sources"));
	if (nx != ny)
		return ny - nx;
	return ev_cmp_date(a, b);
}

/* The events as refs sorted by cmp; caller frees. */
static struct ev_ref *events_sorted(const cJSON *events, size_t *n,
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

static void put_event_label(struct md *m, const cJSON *e)
{
	put(m, jstr(e, "bank"), "policy");
	add(m, " ");
	put(m, jstr(e, "action"), "event");
}

static void summary_events(struct md *m)
{
	const cJSON *events = jget(m->run, "events");
	if (!cJSON_IsArray(events)) {
		add(m, m->final ? "News events are not available. "
				: "News analysis is still pending. ");
		return;
	}
	size_t n;
	struct ev_ref *r = events_sorted(events, &n, ev_cmp_rank);
	if (!n) {
		add(m, "The news search found no central-bank events in the window. ");
		free(r);
		return;
	}
	sbuf_addf(&m->b, "The news flagged %zu central-bank %s", n, n == 1 ? "event" : "events");
	add(m, n > SUMMARY_EVENTS ? ", chief among them " : ": ");
	size_t k = n < SUMMARY_EVENTS ? n : SUMMARY_EVENTS;
	for (size_t i = 0; i < k; i++) {
		if (i > 0)
			add(m, i + 1 == k ? " and " : ", ");
		put_event_label(m, r[i].e);
		add(m, " (");
		put_date_human(m, jstr(r[i].e, "date"));
		add(m, ")");
	}
	add(m, ". ");
	free(r);
}

static void count_verdicts(const cJSON *findings, size_t n[4], size_t *total)
{
	const cJSON *f;
	memset(n, 0, 4 * sizeof(n[0]));
	*total = 0;
	cJSON_ArrayForEach(f, findings) {
		if (!cJSON_IsObject(f))
			continue;
		n[verdict_of(f)]++;
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
	if (re + fa + nv == 1 && re)
		summary_one_reassignment(m, one);
	else
		summary_failure_counts(m, re, fa, nv);
}

static void md_summary(struct md *m)
{
	heading(m, "Executive summary");
	size_t start = m->b.len;
	struct report_lead lead;
	summary_market(m, summary_lead(m, &lead));
	summary_events(m);
	summary_validation(m);
	summary_failures(m);
	while (m->b.len > start && m->b.data[m->b.len - 1] == ' ')
		m->b.data[--m->b.len] = '\0';
	add(m, "\n\n");
}

/* Narrative (LLM mode): the orchestrator model's summary, streamed into
 * the draft as it is written. Absent in deterministic mode. */
static void md_narrative(struct md *m)
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

/* Pairs table. */

static void cell_price(struct md *m, const cJSON *f, const char *k)
{
	char buf[32];
	double v;
	if (!jnum_get(f, k, &v)) {
		add(m, " n/a |");
		return;
	}
	fmt_price(buf, sizeof(buf), v);
	sbuf_addf(&m->b, " %s |", buf);
}

static void cell_close(struct md *m, const cJSON *point)
{
	char buf[32];
	double v = 0;
	jnum_get(point, "close", &v);
	fmt_price(buf, sizeof(buf), v);
	sbuf_addf(&m->b, " %s", buf);
	if (jstr(point, "date")) {
		add(m, " (");
		put(m, jstr(point, "date"), "");
		add(m, ")");
	}
	add(m, " |");
}

static void cell_fixed(struct md *m, const cJSON *f, const char *k, bool sign)
{
	char buf[32];
	double v;
	if (!jnum_get(f, k, &v)) {
		add(m, " n/a |");
		return;
	}
	if (sign)
		fmt_signed(buf, sizeof(buf), v);
	else
		fmt_fixed(buf, sizeof(buf), v, 2, false);
	sbuf_addf(&m->b, " %s |", buf);
}

/* The MA5 vs MA20 cell: where the 5-day average of closes stands against
 * the 20-day one (the analytics' trend "up", "down", "flat"). */
_Static_assert(ANALYTICS_MA_SHORT == 5 && ANALYTICS_MA_LONG == 20,
	       "the Pairs table's header says MA5 vs MA20");

static const char *ma_position(const char *trend)
{
	if (!trend)
		return NULL;
	return !strcmp(trend, "up") ? "above" : !strcmp(trend, "down") ? "below" :
	       !strcmp(trend, "flat") ? "level" : trend;
}

static void pair_row(struct md *m, const char *pair)
{
	const cJSON *f = pair_figures(m->run, pair);
	add(m, "| ");
	put(m, pair, "");
	if (f && cJSON_IsTrue(jget(f, "simulated")))
		add(m, " (simulated)");
	add(m, " |");
	if (!f) {
		add(m, m->final ? " no data |" : " _pending_ |");
		add(m, "  |  |  |  |  |  |  |  |\n");
		return;
	}
	cell_close(m, jget(f, "start"));
	cell_close(m, jget(f, "end"));
	cell_fixed(m, f, "change_pct", true);
	cell_price(m, f, "high");
	cell_price(m, f, "low");
	cell_fixed(m, f, "volatility_annualised_pct", false);
	cell_fixed(m, f, "zscore", true);
	add(m, " ");
	put(m, ma_position(jstr(f, "trend")), "n/a");
	char *spark = closes_sparkline(f);
	sbuf_addf(&m->b, " | %s |\n", *spark ? spark : "n/a");
	free(spark);
}

static void md_pairs(struct md *m)
{
	const cJSON *pairs = jget(m->run, "pairs"), *p;
	heading(m, "Pairs");
	if (!cJSON_IsArray(pairs) || !cJSON_GetArraySize(pairs)) {
		missing(m);
		return;
	}
	add(m, "| Pair | Start (date) | End (date) | Change % | High | Low | Vol (ann.) % | z "
	       "| MA5 vs MA20 | Sparkline |\n"
	       "|:-----|-------------:|-----------:|---------:|-----:|----:|-------------:|--:"
	       "|:------------|:----------|\n");
	cJSON_ArrayForEach(p, pairs)
		if (cJSON_IsString(p))
			pair_row(m, p->valuestring);
	add(m, "\nChange % is the move of the quoted rate from the first to the last close of "
	       "the window; Vol is realised volatility, annualised; z compares the week's move "
	       "with the weekly moves of the previous three months; ");
	sbuf_addf(&m->b, "MA%d vs MA%d says whether the average of the last %d closes is above or "
		  "below the average of the last %d (both up to the window's last day, so reaching "
		  "about four weeks back; within %.1f %% is level): it measures the month's drift, "
		  "not the week's move, and can point the other way from Change %%; ",
		  ANALYTICS_MA_SHORT, ANALYTICS_MA_LONG, ANALYTICS_MA_SHORT, ANALYTICS_MA_LONG,
		  ANALYTICS_TREND_FLAT * 100);
	add(m, "the sparkline plots the window's closes.\n\n");
}

/* Key events and sentiment. */

static void md_sentiment(struct md *m)
{
	const cJSON *s = jget(m->run, "sentiment"), *c;
	size_t n = 0;
	cJSON_ArrayForEach(c, s) {
		double score, stories;
		if (!c->string || !jnum_get(c, "score", &score))
			continue;
		add(m, n++ ? "; " : "News sentiment by currency (score from -1 to +1): ");
		char buf[32];
		fmt_signed(buf, sizeof(buf), score);
		put(m, c->string, "");
		sbuf_addf(&m->b, " %s", buf);
		if (jnum_get(c, "stories", &stories))
			sbuf_addf(&m->b, " (%.0f %s)", stories, stories == 1 ? "story" : "stories");
	}
	if (n)
		add(m, ".\n\n");
}

static void md_events(struct md *m)
{
	const cJSON *events = jget(m->run, "events");
	heading(m, "Key events");
	if (!cJSON_IsArray(events)) {
		missing(m);
		return;
	}
	size_t n;
	struct ev_ref *r = events_sorted(events, &n, ev_cmp_date);
	for (size_t i = 0; i < n; i++) {
		const cJSON *e = r[i].e;
		add(m, "- ");
		put_lead(m, jstr(e, "date"), "undated");
		add(m, " — ");
		put_event_label(m, e);
		add(m, ": ");
		put(m, jstr(e, "title"), "(no title)");
		add(m, " [sources: ");
		put_list(m, jget(e, "sources"), "none cited");
		add(m, "]\n");
	}
	add(m, n ? "\n" : "No central-bank events were found in the news for the window.\n\n");
	free(r);
	md_sentiment(m);
}

/* Findings. */

static void finding_item(struct md *m, const cJSON *f, bool not_validated)
{
	const char *pair = jstr(f, "pair"), *text = jstr(f, "text");
	add(m, "- ");
	if (pair && *pair && !(text && !strncmp(text, pair, strlen(pair)))) {
		put_lead(m, pair, "");
		add(m, ": ");
		put(m, text, "(no text)");
	} else {
		put_lead(m, text, "(no text)");
	}
	add(m, " — by ");
	put(m, jstr(f, "agent"), "an unknown agent");
	add(m, "; sources: ");
	put_list(m, jget(f, "sources"), "none cited");
	if (jstr(f, "id")) {
		add(m, "; finding ");
		put(m, jstr(f, "id"), "");
	}
	add(m, "\n");
	if (jstr(f, "verdict_reason")) {
		add(m, "  - Reason: ");
		put(m, jstr(f, "verdict_reason"), "");
		add(m, "\n");
	}
	if (not_validated)
		add(m, "  - Not validated.\n");
}

/* One verdict's subsection; pending findings count as unverified when
 * validation has finished or the report is final. */
static void findings_group(struct md *m, const char *title, enum verdict want, bool settled)
{
	const cJSON *f;
	size_t n = 0;
	sbuf_addf(&m->b, "### %s\n\n", title);
	cJSON_ArrayForEach(f, jget(m->run, "findings")) {
		if (!cJSON_IsObject(f))
			continue;
		enum verdict v = verdict_of(f);
		bool late = settled && want == V_UNVERIFIED && v == V_PENDING;
		if (v != want && !late)
			continue;
		finding_item(m, f, late);
		n++;
	}
	if (n)
		add(m, "\n");
	else if (settled)
		add(m, "None.\n\n");
	else
		add(m, "_pending_\n\n");
}

static void md_findings(struct md *m)
{
	const cJSON *findings = jget(m->run, "findings"), *v = jget(m->run, "validation");
	heading(m, "Findings");
	if (!cJSON_IsArray(findings)) {
		missing(m);
		return;
	}
	bool finished = validation_finished(m->run), settled = finished || m->final;
	if (jstr_is(v, "status", "failed")) {
		add(m, "Validation failed: ");
		put(m, jstr(v, "reason"), "no reason given");
		add(m, ". Findings it did not check are listed as unverified.\n\n");
	} else if (!finished) {
		add(m, m->final ? "Validation: _not available_; findings it did not check are "
				  "listed as unverified.\n\n"
				: "Validation: _pending_.\n\n");
	}
	findings_group(m, "Confirmed", V_CONFIRMED, settled);
	findings_group(m, "Disputed", V_DISPUTED, settled);
	findings_group(m, "Unverified", V_UNVERIFIED, settled);
	if (!settled)
		findings_group(m, "Awaiting validation", V_PENDING, true);
}

/* Validation issues. */

static void put_scalar(struct md *m, const cJSON *j)
{
	if (cJSON_IsString(j)) {
		put(m, j->valuestring, "");
	} else if (cJSON_IsNumber(j) && isfinite(j->valuedouble)) {
		sbuf_addf(&m->b, "%g", j->valuedouble);
	} else if (cJSON_IsBool(j)) {
		add(m, cJSON_IsTrue(j) ? "true" : "false");
	} else if (cJSON_IsArray(j)) {
		const cJSON *c;
		size_t n = 0;
		cJSON_ArrayForEach(c, j) {
			add(m, n++ ? ", " : "");
			put_scalar(m, c);
		}
	} else {
		add(m, "…");
	}
}

static void issue_item(struct md *m, const cJSON *i)
{
	const cJSON *aff = jget(i, "affected_data"), *c;
	double conf;
	add(m, "- ");
	put_lead(m, jstr(i, "issue_type"), "issue");
	add(m, " (severity ");
	put(m, jstr(i, "severity"), "not given");
	add(m, "): ");
	put(m, jstr(i, "description"), "(no description)");
	add(m, "\n  - Recommendation: ");
	put(m, jstr(i, "recommendation"), "none given");
	add(m, "\n");
	if (cJSON_IsObject(aff) && aff->child) {
		size_t n = 0;
		add(m, "  - Affected: ");
		cJSON_ArrayForEach(c, aff) {
			add(m, n++ ? "; " : "");
			put(m, c->string, "");
			add(m, " ");
			put_scalar(m, c);
		}
		add(m, "\n");
	}
	if (jnum_get(i, "confidence", &conf))
		sbuf_addf(&m->b, "  - Confidence: %.2f\n", conf);
}

static void md_issues(struct md *m)
{
	const cJSON *issues = jget(m->run, "issues"), *i;
	size_t n = 0;
	heading(m, "Validation issues");
	if (!cJSON_IsArray(issues) && !validation_finished(m->run)) {
		missing(m);
		return;
	}
	cJSON_ArrayForEach(i, issues) {
		if (!cJSON_IsObject(i))
			continue;
		issue_item(m, i);
		n++;
	}
	add(m, n ? "\n" : "None.\n\n");
}

/* Freshness and warnings. */

static void freshness_item(struct md *m, const char *pair)
{
	const cJSON *f = pair_figures(m->run, pair);
	double days;
	add(m, "- ");
	put_lead(m, pair, "");
	if (!f) {
		add(m, m->final ? ": no data.\n" : ": _pending_.\n");
		return;
	}
	add(m, ": last quote ");
	put(m, jstr(jget(f, "end"), "date"), "on an unknown date");
	if (jnum_get(f, "freshness_days", &days))
		sbuf_addf(&m->b, ", %.0f %s before the window end%s", days,
			  days == 1 ? "day" : "days", days > STALE_DAYS ? " (stale)" : "");
	add(m, ".\n");
}

static void md_freshness(struct md *m)
{
	const cJSON *pairs = jget(m->run, "pairs"), *p;
	heading(m, "Data freshness and warnings");
	add(m, "### Freshness\n\n");
	if (!cJSON_IsArray(pairs) || !cJSON_GetArraySize(pairs)) {
		missing(m);
	} else {
		cJSON_ArrayForEach(p, pairs)
			if (cJSON_IsString(p))
				freshness_item(m, p->valuestring);
		add(m, "\n");
	}
	add(m, "### Warnings\n\n");
	cJSON *w = all_warnings(m->run, m->final);
	cJSON_ArrayForEach(p, w) {
		add(m, "- ");
		put_lead(m, p->valuestring, "");
		add(m, "\n");
	}
	add(m, cJSON_GetArraySize(w) ? "\n" : "None.\n\n");
	cJSON_Delete(w);
}

/* Failures and reassignments. */

static void failure_row(struct md *m, const cJSON *f)
{
	static const char *const cols[] = { "task_id", "kind", "pair", "what" };
	add(m, "|");
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++) {
		add(m, " ");
		put(m, jstr(f, cols[i]), "n/a");
		add(m, " |");
	}
	add(m, " ");
	put(m, jstr(f, "from"), "n/a");
	if (jstr(f, "to")) {
		add(m, " → ");
		put(m, jstr(f, "to"), "");
	}
	add(m, " | ");
	put(m, jstr(f, "reason"), "n/a");
	add(m, " | ");
	put(m, jstr(f, "at"), "n/a");
	add(m, " |\n");
}

static void md_failures(struct md *m)
{
	const cJSON *f;
	size_t n = 0;
	heading(m, "Failures and reassignments");
	cJSON_ArrayForEach(f, jget(m->run, "failures")) {
		if (!cJSON_IsObject(f))
			continue;
		if (!n++)
			add(m, "| Task | Kind | Pair | What | From → To | Reason | At |\n"
			       "|:-----|:-----|:-----|:-----|:----------|:-------|:---|\n");
		failure_row(m, f);
	}
	add(m, n ? "\n" : m->final ? "None.\n\n" : "None so far.\n\n");
}

/* Provenance. */

struct cited {
	const char **id;
	size_t n, cap;
};

static void cite(struct cited *c, const char *id)
{
	if (!id)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->id[i], id))
			return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->id = xrealloc(c->id, c->cap * sizeof(*c->id));
	}
	c->id[c->n++] = id;
}

/* "message M from AGENT" for an item with message_id and agent. */
static void put_origin(struct md *m, struct cited *c, const cJSON *o)
{
	const char *id = jstr(o, "message_id");
	add(m, "message ");
	put(m, id, "not recorded");
	if (jstr(o, "agent")) {
		add(m, " from ");
		put(m, jstr(o, "agent"), "");
	}
	cite(c, id);
}

static void prov_figures(struct md *m, struct cited *c)
{
	const cJSON *p;
	add(m, "### Figures\n\n");
	cJSON_ArrayForEach(p, jget(m->run, "pairs")) {
		if (!cJSON_IsString(p))
			continue;
		const cJSON *f = pair_figures(m->run, p->valuestring);
		add(m, "- ");
		put_lead(m, p->valuestring, "");
		if (!f) {
			add(m, m->final ? ": no data\n" : ": _pending_\n");
			continue;
		}
		add(m, ": ");
		put_origin(m, c, f);
		add(m, "; source ");
		put(m, jstr(f, "source"), "not recorded");
		add(m, "\n");
	}
	add(m, "\n");
}

static void prov_events(struct md *m, struct cited *c)
{
	const cJSON *s;
	size_t n = 0, nev;
	struct ev_ref *r = events_sorted(jget(m->run, "events"), &nev, ev_cmp_date);
	for (size_t i = 0; i < nev; i++) {
		const cJSON *e = r[i].e;
		add(m, n++ ? "- " : "### Events and sentiment\n\n- ");
		put_lead(m, jstr(e, "id"), "event");
		add(m, " (");
		put_event_label(m, e);
		add(m, "): ");
		put_origin(m, c, e);
		add(m, "\n");
	}
	free(r);
	cJSON_ArrayForEach(s, jget(m->run, "sentiment")) {
		if (!cJSON_IsObject(s) || !s->string)
			continue;
		add(m, n++ ? "- " : "### Events and sentiment\n\n- ");
		put_lead(m, s->string, "");
		add(m, " sentiment: ");
		put_origin(m, c, s);
		add(m, "\n");
	}
	if (n)
		add(m, "\n");
}

static void prov_findings(struct md *m, struct cited *c)
{
	const cJSON *f, *v = jget(m->run, "validation");
	size_t n = 0;
	cJSON_ArrayForEach(f, jget(m->run, "findings")) {
		if (!cJSON_IsObject(f))
			continue;
		add(m, n++ ? "- " : "### Findings\n\n- ");
		put_lead(m, jstr(f, "id"), "finding");
		add(m, ": ");
		put_origin(m, c, f);
		add(m, "\n");
	}
	if (jstr(v, "message_id")) {
		add(m, n++ ? "- " : "### Findings\n\n- ");
		add(m, "Validation: ");
		put_origin(m, c, v);
		add(m, "\n");
	}
	if (n)
		add(m, "\n");
}

static void prov_messages(struct md *m, const struct cited *c)
{
	const cJSON *msgs = jget(m->run, "messages");
	add(m, "### Messages cited\n\n");
	if (!c->n) {
		add(m, "None.\n\n");
		return;
	}
	add(m, "| Message | From | Type | Timestamp |\n|:--------|:-----|:-----|:----------|\n");
	for (size_t i = 0; i < c->n; i++) {
		const cJSON *msg = jget(msgs, c->id[i]);
		add(m, "| ");
		put(m, c->id[i], "");
		add(m, " | ");
		put(m, jstr(msg, "from"), msg ? "n/a" : "not in the run's record");
		add(m, " | ");
		put(m, jstr(msg, "type"), "n/a");
		add(m, " | ");
		put(m, jstr(msg, "timestamp"), "n/a");
		add(m, " |\n");
	}
	add(m, "\n");
}

static void md_provenance(struct md *m)
{
	struct cited c = { NULL, 0, 0 };
	heading(m, "Provenance");
	if (!cJSON_IsArray(jget(m->run, "pairs"))) {
		missing(m);
		return;
	}
	prov_figures(m, &c);
	prov_events(m, &c);
	prov_findings(m, &c);
	prov_messages(m, &c);
	free(c.id);
}

char *report_markdown(const cJSON *run, bool final)
{
	struct md m;
	sbuf_init(&m.b);
	m.run = run;
	m.final = final;
	md_title(&m);
	md_summary(&m);
	md_narrative(&m);
	md_pairs(&m);
	md_events(&m);
	md_findings(&m);
	md_issues(&m);
	md_freshness(&m);
	md_failures(&m);
	md_provenance(&m);
	while (m.b.len > 1 && m.b.data[m.b.len - 1] == '\n' && m.b.data[m.b.len - 2] == '\n')
		m.b.data[--m.b.len] = '\0';
	return sbuf_detach(&m.b);
}

/* JSON twin. */

static void add_copy(cJSON *o, const char *k, const cJSON *src)
{
	cJSON_AddItemToObject(o, k, src ? cJSON_Duplicate(src, true) : cJSON_CreateNull());
}

static cJSON *json_pair(const cJSON *run, const char *pair)
{
	static const char *const keys[] = { "start", "end", "change_pct", "high", "low",
					    "volatility_annualised_pct", "zscore", "trend",
					    "largest_move", "simulated" };
	static const char *const prov[] = { "message_id", "agent", "source" };
	const cJSON *f = pair_figures(run, pair);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "pair", pair);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		add_copy(p, keys[i], jget(f, keys[i]));
	if (!f) {
		cJSON_AddNullToObject(p, "provenance");
		return p;
	}
	cJSON *pv = cJSON_AddObjectToObject(p, "provenance");
	for (size_t i = 0; i < ARRAY_SIZE(prov); i++)
		add_copy(pv, prov[i], jget(f, prov[i]));
	return p;
}

static cJSON *json_findings(const cJSON *findings)
{
	static const char *const keys[] = { "id", "agent", "text", "sources", "verdict",
					    "message_id" };
	const cJSON *f;
	if (!cJSON_IsArray(findings))
		return cJSON_CreateNull();
	cJSON *out = cJSON_CreateArray();
	cJSON_ArrayForEach(f, findings) {
		if (!cJSON_IsObject(f))
			continue;
		cJSON *o = cJSON_CreateObject();
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			add_copy(o, keys[i], jget(f, keys[i]));
		cJSON_AddItemToArray(out, o);
	}
	return out;
}

static bool run_complete(const cJSON *run)
{
	const cJSON *pairs = jget(run, "pairs"), *p;
	if (!cJSON_IsArray(pairs) || !validation_finished(run))
		return false;
	cJSON_ArrayForEach(p, pairs)
		if (!cJSON_IsString(p) || !pair_figures(run, p->valuestring))
			return false;
	return true;
}

cJSON *report_json(const cJSON *run)
{
	const cJSON *w = jget(run, "window"), *p;
	char now[40];
	cJSON *o = cJSON_CreateObject();
	util_iso8601(util_now_ns(), now, sizeof(now));
	add_copy(o, "run_id", jget(run, "run_id"));
	add_copy(o, "iso_week", jget(run, "iso_week"));
	cJSON_AddStringToObject(o, "title", jstr(run, "title") ? jstr(run, "title") : REPORT_TITLE);
	cJSON_AddStringToObject(o, "generated_at", now);
	cJSON *win = cJSON_AddObjectToObject(o, "window");
	add_copy(win, "start", jget(w, "start"));
	add_copy(win, "end", jget(w, "end"));
	cJSON *pairs = cJSON_AddArrayToObject(o, "pairs");
	cJSON_ArrayForEach(p, jget(run, "pairs"))
		if (cJSON_IsString(p))
			cJSON_AddItemToArray(pairs, json_pair(run, p->valuestring));
	add_copy(o, "events", jget(run, "events"));
	cJSON_AddItemToObject(o, "findings", json_findings(jget(run, "findings")));
	add_copy(o, "issues", jget(run, "issues"));
	add_copy(o, "failures", jget(run, "failures"));
	cJSON_AddItemToObject(o, "warnings", all_warnings(run, true));
	add_copy(o, "validation", jget(run, "validation"));
	add_copy(o, "sources", jget(run, "sources"));
	if (jget(run, "narrative")) {
		const cJSON *n = jget(run, "narrative");
		cJSON *no = cJSON_AddObjectToObject(o, "narrative");
		static const char *const nk[] = { "text", "status", "provider", "model", "usage" };
		for (size_t i = 0; i < ARRAY_SIZE(nk); i++)
			add_copy(no, nk[i], jget(n, nk[i]));
	}
	if (jget(run, "llm")) {
		/* What produced the report: the mode and the models, no key. */
		cJSON *mf = cJSON_AddObjectToObject(o, "manifest");
		const cJSON *l = jget(run, "llm");
		static const char *const mk[] = { "mode", "provider", "models", "continue_at_limit" };
		for (size_t i = 0; i < ARRAY_SIZE(mk); i++)
			if (jget(l, mk[i]))
				add_copy(mf, mk[i], jget(l, mk[i]));
		const cJSON *t;
		cJSON *tu = cJSON_CreateObject();
		cJSON_ArrayForEach(t, jget(run, "tasks"))
			if (jget(t, "llm_usage") && jstr(t, "task_id"))
				add_copy(tu, jstr(t, "task_id"), jget(t, "llm_usage"));
		if (tu->child)
			cJSON_AddItemToObject(mf, "task_usage", tu);
		else
			cJSON_Delete(tu);
	}
	cJSON_AddBoolToObject(o, "complete", run_complete(run));
	return o;
}

/* File name and sparkline. */

static bool name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* Copies the allowed characters of s (no leading dot) into at most room
 * bytes of out; returns how many. */
static size_t name_filter(const char *s, char *out, size_t room)
{
	size_t n = 0;
	for (; s && *s && n < room; s++)
		if (name_char(*s) && !(n == 0 && *s == '.'))
			out[n++] = *s;
	return n;
}

void report_basename(const cJSON *run, char *buf, size_t size)
{
	size_t suffix = strlen(REPORT_SUFFIX);
	if (size == 0)
		return;
	if (size <= suffix + 1) {
		buf[name_filter(jstr(run, "iso_week"), buf, size - 1)] = '\0';
		return;
	}
	size_t room = size - suffix - 1;
	size_t n = name_filter(jstr(run, "iso_week"), buf, room);
	if (!n)
		n = name_filter(jstr(run, "run_id"), buf, room);
	if (!n)
		n = name_filter("run", buf, room);
	memcpy(buf + n, REPORT_SUFFIX, suffix + 1);
}

char *report_sparkline(const double *v, size_t n)
{
	static const char *const bars[] = { "\u2581", "\u2582", "\u2583", "\u2584",
					    "\u2585", "\u2586", "\u2587", "\u2588" };
	double lo = INFINITY, hi = -INFINITY;
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; v && i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (size_t i = 0; v && i < n; i++) {
		if (!isfinite(v[i])) {
			sbuf_addch(&b, ' ');
			continue;
		}
		double x = hi > lo ? (v[i] / 2 - lo / 2) / (hi / 2 - lo / 2) : 0.5;
		long k = hi > lo ? lround(x * 7) : 3;
		sbuf_addstr(&b, bars[k < 0 ? 0 : k > 7 ? 7 : k]);
	}
	return sbuf_detach(&b);
}
