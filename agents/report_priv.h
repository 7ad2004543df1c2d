/* The report writer's rendering, its parts (private to agents/report*.c):
 * report.c holds the snapshot helpers, the Markdown text primitives, the
 * numbers and dates, the sections from the pairs table to the provenance
 * (but Key events),
 * and report_markdown; report_summary.c the title, the executive summary
 * and the narrative; report_events.c the Key events, the sentiment by
 * currency and the summary's sentence on the acts; report_json.c the JSON
 * twin, the file name and the sparkline. All pure: they read the run
 * snapshot (agents/report.h). */
#ifndef MADF_REPORT_PRIV_H
#define MADF_REPORT_PRIV_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cJSON.h>

#include "core/json_out.h"
#include "core/util.h"

#define REPORT_TITLE "Weekly Asia/G10 FX report"

/* Snapshot access. */

/* The pair's market entry when it holds start and end closes, else NULL. */
const cJSON *report_pair_figures(const cJSON *run, const char *pair);
/* True when the run's validation is done or failed. */
bool report_validation_finished(const cJSON *run);

enum verdict { V_CONFIRMED, V_DISPUTED, V_UNVERIFIED, V_PENDING };
/* A finding's verdict (pending when absent or unknown). */
enum verdict report_verdict_of(const cJSON *finding);
/* "USD/JPY" or "USDJPY" to its two currency codes. */
bool report_pair_split(const char *pair, char base[8], char quote[8]);
/* Warnings of the snapshot and one per pair without figures; new array. */
cJSON *report_all_warnings(const cJSON *run, bool final);

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

/* Appends snapshot text, sanitized, trimmed and escaped. */
void report_md_put_flags(struct sbuf *b, const char *s, unsigned flags);

static inline void put(struct md *m, const char *s, const char *fallback)
{
	report_md_put_flags(&m->b, s ? s : fallback, 0);
}

static inline void put_lead(struct md *m, const char *s, const char *fallback)
{
	report_md_put_flags(&m->b, s ? s : fallback, MD_LEAD);
}

static inline void add(struct md *m, const char *s)
{
	sbuf_addstr(&m->b, s);
}

/* "_pending_" in a draft, "_not available_" in a final report. */
static inline void missing(struct md *m)
{
	add(m, m->final ? "_not available_\n\n" : "_pending_\n\n");
}

static inline void heading(struct md *m, const char *title)
{
	sbuf_addf(&m->b, "## %s\n\n", title);
}

/* Closes, highs and lows: two decimals from 100 up, else four. */
void report_fmt_price(char *buf, size_t size, double v);
/* A signed figure to two decimals; "0.00" when it rounds to zero. */
void report_fmt_signed(char *buf, size_t size, double v);
/* Joins the strings of a JSON array with ", " (escaped); none when empty. */
void report_put_list(struct md *m, const cJSON *arr, const char *none);
/* "20 Mar 1987" for "1987-03-20"; other text as it is. */
void report_put_date_human(struct md *m, const char *iso);

/* The sections of agents/report_summary.c: title, window, sources and the
 * simulated-data banner; the executive summary; the narrative (LLM mode). */
void report_md_title(struct md *m);
void report_md_summary(struct md *m);
void report_md_narrative(struct md *m);

/* An event of the snapshot, its index and the rank of its action. */
struct ev_ref {
	const cJSON *e;
	size_t idx;
	int rank;
};

/* By date, then by order in the snapshot (a qsort comparison). */
int report_ev_cmp_date(const void *a, const void *b);
/* The events as refs sorted by cmp; caller frees. */
struct ev_ref *report_events_sorted(const cJSON *events, size_t *n,
				    int (*cmp)(const void *, const void *));
/* "BOJ intervention": an event's bank and action (escaped). */
void report_put_event_label(struct md *m, const cJSON *e);

/* agents/report_events.c: the events as an analyst reads them. */

/* An act's standing with the validator: "confirmed", "disputed",
 * "unverified" (its findings' verdicts: disputed when any is, else
 * confirmed when any is), "not validated" (no finding reports it and
 * validation has finished, or final), NULL while pending. Static string. */
const char *report_event_verdict(const cJSON *run, const cJSON *e, bool final);
/* Acts of one day and action told by the same sentence or story share a
 * Key events line: line[i] is the index in r (date-sorted, n long) of the
 * act whose line holds r[i]. */
void report_events_group(const struct ev_ref *r, size_t n, size_t *line);
/* The Key events section, with the news sentiment by currency. */
void report_md_events(struct md *m);
/* The summary's sentence on the acts, by bank and action over days. */
void report_md_summary_events(struct md *m);

#endif
