/* The report writer's rendering: a run snapshot (the product_manager's view
 * of one weekly run, as JSON) to the Markdown report and its JSON twin.
 * Pure functions: no bus, no files (the report_writer agent writes them).
 *
 * The run snapshot (every field optional unless marked *; absent sections
 * are rendered as "pending" in a draft and "not available" when final):
 * {
 *  "run_id"*: "weekly-1987-W13-6f2a",  "iso_week"*: "1987-W13",
 *  "title": "Weekly Asia/G10 FX report", "status": "researching" | "validating" | "reporting" | "done",
 *  "as_of": ISO, "window"*: {"start": "1987-03-20", "end": "1987-03-27"},
 *  "pairs"*: ["USD/JPY", ...],
 *  "sources": {"market": "csv:PATH" | "sim", "news": "jsonl:PATH" | "rss:PATH" | "sim",
 *              "market_simulated": bool, "news_simulated": bool},
 *  "market": {"USD/JPY": {                                  (one per pair with figures)
 *      "pair", "simulated": bool, "start": {"date","close"}, "end": {"date","close"},
 *      "change_pct", "high", "low", "volatility_annualised_pct" (null if n/a),
 *      "zscore" (null if n/a), "trend": "up"|"down"|"flat"|null, "ma_short", "ma_long",
 *      "largest_move": {"date","pct"}, "observations", "freshness_days",
 *      "closes": [{"date","close"}...]  (the window's closes, for the sparkline),
 *      "agent", "message_id", "source": "csv:PATH rows 1987-03-20..1987-03-27" }},
 *  "events": [{"id", "bank", "action", "date", "title", "sources": [story ids],
 *              "agent", "message_id"}],
 *  "sentiment": {"JPY": {"score", "stories", "agent", "message_id"}},
 *  "findings": [{"id", "agent", "kind": "market"|"news"|"conflict", "pair", "text",
 *                "sources": [story ids or "csv:..." records], "message_id",
 *                "verdict": "confirmed"|"disputed"|"unverified"|"pending", "verdict_reason"}],
 *  "issues": [{"issue_type": "conflict"|"timing_error"|"stale_data", "severity",
 *              "description", "affected_data": {...}, "recommendation", "confidence"}],
 *  "validation": {"status": "pending"|"done"|"failed", "message_id", "overall_confidence",
 *                 "reason" (when failed)},
 *  "tasks": [{"task_id", "kind", "pair", "assignee", "status", "attempts",
 *             "assignments": [message ids], "result_message_id"}],
 *  "failures": [{"task_id", "kind", "pair", "what": "reassigned"|"failed"|"not_validated",
 *                "from", "to", "reason", "at"}],
 *  "warnings": ["..."],
 *  "messages": {"<message id>": {"from", "type", "timestamp"}}   (for provenance)
 * }
 */
#ifndef MADF_REPORT_H
#define MADF_REPORT_H

#include <stdbool.h>

#include <cJSON.h>

/* The Markdown report. A draft (final = false) marks what is still pending;
 * a final report says what is not available. Sections, in order: title and
 * window; executive summary; per-pair table (start and end close with
 * dates, change %, high, low, volatility, z-score, trend, a Unicode
 * sparkline of the closes); key events with their story ids (acts of one
 * day and action told by the same sentence or story on one line, each act
 * not confirmed by the validator marked disputed, unverified or not
 * validated) and the news sentiment of the currencies the stories discuss;
 * validated and
 * disputed findings; data freshness and warnings; failures and
 * reassignments; provenance (each figure and finding to its message id and
 * source records). Every string taken from the snapshot is stripped of
 * control characters and Markdown/HTML-active characters are escaped where
 * they would change the structure (table pipes, leading #, <). Returns a new
 * string (caller frees). */
char *report_markdown(const cJSON *run, bool final);

/* The JSON twin of the final report: {"run_id", "iso_week", "title",
 * "generated_at", "window": {"start", "end"}, "pairs": [{"pair", "start":
 * {"date", "close"}, "end": {"date", "close"}, "change_pct", "high", "low",
 * "volatility_annualised_pct", "zscore", "trend", "largest_move",
 * "simulated", "provenance": {"message_id", "agent", "source"}}],
 * "events": [{... as in the snapshot, "verdict": "confirmed"|"disputed"|
 * "unverified"|"not validated" (its findings' verdicts), "told_with": [ids
 * of the acts on its Key events line]}], "sentiment": {"JPY": {"score",
 * "stories" (the stories that discuss the currency), ...}},
 * "findings": [{"id", "agent", "text", "sources", "verdict",
 * "message_id"}], "issues": [...], "failures": [...], "warnings": [...],
 * "validation": {...}, "sources": {...}, "complete": bool} where complete
 * is true when every pair has figures and validation is done or failed.
 * Returns a new object (caller deletes). */
cJSON *report_json(const cJSON *run);

/* "1987-W13-asia-g10-fx" for a snapshot's iso_week; buf of size >= 32. */
void report_basename(const cJSON *run, char *buf, size_t size);

/* A sparkline of values with U+2581..U+2588; caller frees. */
char *report_sparkline(const double *v, size_t n);

#endif
