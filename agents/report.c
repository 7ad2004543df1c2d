/* The report writer's rendering: a run snapshot to the Markdown report.
 * Every string from the snapshot goes through report_md_put_flags, which
 * strips control characters and escapes what would change the document's
 * structure. The title, the executive summary and the narrative are
 * agents/report_summary.c; the JSON twin is agents/report_json.c. */
#include "agents/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report_priv.h"
#include "core/util.h"
#include "agents/analytics.h" /* the MA5 vs MA20 column's constants */
#include "core/banned.h"

#define STALE_DAYS 3        /* a last quote older than this is stale */

/* The pair's market entry when it holds start and end closes, else NULL. */
const cJSON *report_pair_figures(const cJSON *run, const char *pair)
{
	const cJSON *f = jget(jget(run, "market"), pair);
	double v;
	if (!jnum_get(jget(f, "start"), "close", &v) || !jnum_get(jget(f, "end"), "close", &v))
		return NULL;
	return f;
}

bool report_validation_finished(const cJSON *run)
{
	const cJSON *v = jget(run, "validation");
	return jstr_is(v, "status", "done") || jstr_is(v, "status", "failed");
}

enum verdict report_verdict_of(const cJSON *finding)
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
bool report_pair_split(const char *pair, char base[8], char quote[8])
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
cJSON *report_all_warnings(const cJSON *run, bool final)
{
	cJSON *w = cJSON_CreateArray();
	const cJSON *j;
	cJSON_ArrayForEach(j, jget(run, "warnings"))
		if (cJSON_IsString(j))
			cJSON_AddItemToArray(w, cJSON_CreateString(j->valuestring));
	cJSON_ArrayForEach(j, jget(run, "pairs")) {
		if (!cJSON_IsString(j) || report_pair_figures(run, j->valuestring))
			continue;
		char *s = xasprintf(final ? "%s: no data; the pair has no figures in this report"
					  : "%s: no figures yet", j->valuestring);
		cJSON_AddItemToArray(w, cJSON_CreateString(s));
		free(s);
	}
	return w;
}

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
void report_md_put_flags(struct sbuf *b, const char *s, unsigned flags)
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

/* Joins the strings of a JSON array with ", " (escaped). */
void report_put_list(struct md *m, const cJSON *arr, const char *none)
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
void report_fmt_price(char *buf, size_t size, double v)
{
	fmt_fixed(buf, size, v, fabs(v) >= 100 ? 2 : 4, false);
}

/* A signed figure to two decimals; "0.00" when it rounds to zero. */
void report_fmt_signed(char *buf, size_t size, double v)
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
void report_put_date_human(struct md *m, const char *iso)
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

/* Pairs table. */

static void cell_price(struct md *m, const cJSON *f, const char *k)
{
	char buf[32];
	double v;
	if (!jnum_get(f, k, &v)) {
		add(m, " n/a |");
		return;
	}
	report_fmt_price(buf, sizeof(buf), v);
	sbuf_addf(&m->b, " %s |", buf);
}

static void cell_close(struct md *m, const cJSON *point)
{
	char buf[32];
	double v = 0;
	jnum_get(point, "close", &v);
	report_fmt_price(buf, sizeof(buf), v);
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
		report_fmt_signed(buf, sizeof(buf), v);
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
	const cJSON *f = report_pair_figures(m->run, pair);
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
	report_put_list(m, jget(f, "sources"), "none cited");
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
		enum verdict v = report_verdict_of(f);
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
	bool finished = report_validation_finished(m->run), settled = finished || m->final;
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
	if (!cJSON_IsArray(issues) && !report_validation_finished(m->run)) {
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

/* What a pair's freshness line says after its name, e.g. ": last quote
 * 1987-03-27, 0 days before the window end." (new string). */
static char *freshness_text(struct md *m, const char *pair)
{
	const cJSON *f = report_pair_figures(m->run, pair);
	double days;
	struct md t = { .run = m->run, .final = m->final };
	sbuf_init(&t.b);
	if (!f) {
		add(&t, m->final ? ": no data.\n" : ": _pending_.\n");
		return sbuf_detach(&t.b);
	}
	add(&t, ": last quote ");
	put(&t, jstr(jget(f, "end"), "date"), "on an unknown date");
	if (jnum_get(f, "freshness_days", &days))
		sbuf_addf(&t.b, ", %.0f %s before the window end%s", days,
			  days == 1 ? "day" : "days", days > STALE_DAYS ? " (stale)" : "");
	add(&t, ".\n");
	return sbuf_detach(&t.b);
}

/* One line per distinct state, naming every pair in it: ten pairs quoted
 * to the window's last day are one line, not ten alike. */
static void md_freshness(struct md *m)
{
	const cJSON *pairs = jget(m->run, "pairs"), *p;
	heading(m, "Data freshness and warnings");
	add(m, "### Freshness\n\n");
	if (!cJSON_IsArray(pairs) || !cJSON_GetArraySize(pairs)) {
		missing(m);
	} else {
		size_t n = (size_t)cJSON_GetArraySize(pairs), k = 0;
		const char **name = xcalloc(n, sizeof(*name));
		char **text = xcalloc(n, sizeof(*text));
		cJSON_ArrayForEach(p, pairs)
			if (cJSON_IsString(p) && k < n) {
				name[k] = p->valuestring;
				text[k++] = freshness_text(m, p->valuestring);
			}
		for (size_t i = 0; i < k; i++) {
			bool first = true;
			for (size_t j = 0; j < i; j++)
				first = first && strcmp(text[j], text[i]);
			if (!first)
				continue;
			add(m, "- ");
			for (size_t j = i, c = 0; j < k; j++) {
				if (strcmp(text[j], text[i]))
					continue;
				if (c++) {
					add(m, ", ");
					put(m, name[j], "");
				} else {
					put_lead(m, name[j], "");
				}
			}
			add(m, text[i]);
		}
		for (size_t i = 0; i < k; i++)
			free(text[i]);
		free(text);
		free((void *)name);
		add(m, "\n");
	}
	add(m, "### Warnings\n\n");
	cJSON *w = report_all_warnings(m->run, m->final);
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
		const cJSON *f = report_pair_figures(m->run, p->valuestring);
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
	struct ev_ref *r = report_events_sorted(jget(m->run, "events"), &nev, report_ev_cmp_date);
	for (size_t i = 0; i < nev; i++) {
		const cJSON *e = r[i].e;
		add(m, n++ ? "- " : "### Events and sentiment\n\n- ");
		put_lead(m, jstr(e, "id"), "event");
		add(m, " (");
		report_put_event_label(m, e);
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
	report_md_title(&m);
	report_md_summary(&m);
	report_md_narrative(&m);
	md_pairs(&m);
	report_md_events(&m);
	md_findings(&m);
	md_issues(&m);
	md_freshness(&m);
	md_failures(&m);
	md_provenance(&m);
	while (m.b.len > 1 && m.b.data[m.b.len - 1] == '\n' && m.b.data[m.b.len - 2] == '\n')
		m.b.data[--m.b.len] = '\0';
	return sbuf_detach(&m.b);
}
