/* The learning system (seed 003 section 6, "Learning System Aggregator"):
 * aggregates the agents' error and result logs into error patterns and
 * per-agent metrics that the product_manager reads before assigning. */
#ifndef MADF_LEARNING_H
#define MADF_LEARNING_H

#include <stddef.h>
#include <stdint.h>

#define LEARNING_RECURRING 3        /* a signature seen this often recurs */
#define LEARNING_MIN_ERRORS 2       /* a recommendation needs this many */
#define LEARNING_MIN_RATE 0.5       /* ... and this error rate */
#define LEARNING_LINE_MAX ((size_t)1 << 20) /* longer log lines are skipped */

/* Reads every <log_dir>/agents/<agent>/errors/ *.jsonl and results/ *.jsonl
 * (lines as written by log_write: errors carry the fields "error_type",
 * "tool" (optional), "task_kind" (optional) and "task_id"; results carry
 * "task_kind", "task_id" and "duration_ms") and writes atomically, with
 * generated_at from now_ns:
 *
 * <log_dir>/learning/error-patterns.json:
 *   {"generated_at", "skipped_lines", "patterns":[{"signature",
 *   "error_type", "agents":{agent:count}, "tools":{tool:count},
 *   "task_kinds":{kind:count}, "count", "first_seen", "last_seen",
 *   "example"}] (count descending, then signature), "recurring":
 *   [signatures seen >= LEARNING_RECURRING times]}
 *   The signature is "<error_type>: <message>" with numbers ("<n>"), hex
 *   ids ("<hex>") and quoted strings ("<str>") replaced, so "timeout after
 *   30 s on task pm_1" and "timeout after 45 s on task pm_2" share
 *   "timeout: timeout after <n> s on task pm_<n>". error_type is the field,
 *   else the line's event, else "unknown"; example is the first message.
 *
 * <log_dir>/learning/improvement-metrics.json:
 *   {"generated_at", "skipped_lines", "by_agent":{agent:{"tasks",
 *   "errors", "failed_tasks", "error_rate", "by_kind":{kind:{"tasks",
 *   "errors", "failed_tasks", "error_rate", "avg_duration_ms"}}}},
 *   "by_error_type":{type:count}, "by_tool":{tool:{"errors"}},
 *   "recommendations":[{"agent","task_kind","text","error_rate"}]}
 *   A task is a distinct task_id of the agent (a line without one is a
 *   task of its own); "errors" counts error lines, "failed_tasks" the
 *   tasks with at least one, and error_rate = failed_tasks / tasks (0..1).
 *   A task's kind is the first task_kind any of its lines gives; tasks of
 *   no kind count in the agent's totals only. avg_duration_ms averages
 *   the results' duration_ms (null when none has one).
 *   Recommendations: one for every (agent, kind) with >= LEARNING_MIN_
 *   ERRORS errors and error_rate >= LEARNING_MIN_RATE, highest rate first,
 *   e.g. "research_agent_1 failed 3 of 3 market tasks (timeout): assign
 *   market tasks to another agent" (the most frequent error type in
 *   parentheses); then one per recurring signature, in pattern order, with
 *   "signature" added, "agent" the agent that hit it most, "task_kind" its
 *   most frequent kind (null when none) and "error_rate" null.
 *
 * A line counts for the agent its "agent" field names (log_write puts the
 * subject there, e.g. a researcher whose failure the product_manager
 * logged), else for the agent whose directory holds the file.
 *
 * Lines that are not strict JSON objects with a string "message" and a
 * valid "ts", or are longer than LEARNING_LINE_MAX, are skipped and counted
 * in "skipped_lines". Directories whose names are not valid agent names,
 * hidden files and files not ending in ".jsonl" are ignored. A missing
 * <log_dir>/agents gives empty reports. Returns 0, or -1 with *err (caller
 * frees) when a directory cannot be read or a report cannot be written. */
int learning_aggregate(const char *log_dir, int64_t now_ns, char **err);
/* The same reading the agents' logs under read_dir/agents (on a bus that
 * carries logs, the local copy of every agent's log: bus_log_root) and
 * writing under log_dir/learning. */
int learning_aggregate_from(const char *read_dir, const char *log_dir, int64_t now_ns,
			    char **err);

/* The signature of an error: "<error_type>: <normalised message>" as
 * described above (error_type NULL: "unknown"). Caller frees. */
char *learning_signature(const char *error_type, const char *message);

/* The error rate (0..1) of agent on task_kind from <log_dir>/learning/
 * improvement-metrics.json: by_agent.<agent>.by_kind.<task_kind>.
 * error_rate, or the agent's overall rate when task_kind is NULL. 0 when
 * the file does not exist (nothing learned yet); -1 when the file exists
 * but has no record for agent (and kind), or cannot be read or parsed. */
double learning_error_rate(const char *log_dir, const char *agent,
			   const char *task_kind);

#endif
