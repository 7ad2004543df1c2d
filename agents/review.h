/* The code review crew (seed 001) on madf's runtime: a master that fans
 * review tasks out over the bus to the debt, improvement, critical and
 * documentation agents and aggregates what they return. Deterministic
 * mode: the agents run real analyzers through the tool registry.
 *
 * Over the bus a review task is a task_assignment (task_type
 * "code_review", focus_area the agent's part, data_sources the files)
 * whose special_instructions carry the agent's input as JSON text,
 * {"root": DIR, "files": [...], "checklist": [...], "max_findings": N};
 * the answer is a research_result whose raw_data is {"findings": [...]}
 * (documentation: {"documentation": {...}}) plus {"notes": [...],
 * "tools": {...}}, or an error_report whose context carries "status"
 * (400: invalid input, never retried; 500: internal). */
#ifndef MADF_REVIEW_H
#define MADF_REVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "agents/runtime.h"
#include "core/json_out.h"

/* o's string field k (borrowed), or "" when absent or not a string: jstr
 * for the crew's findings, whose text fields are compared and printed. */
static inline const char *review_str(const cJSON *o, const char *k)
{
	const char *s = jstr(o, k);
	return s ? s : "";
}

/* The crew's roles (not started by `madf run weekly`; `madf agent NAME`
 * runs one alone). */
extern const struct agent_role role_review_master;
extern const struct agent_role role_review_debt;
extern const struct agent_role role_review_improvement;
extern const struct agent_role role_review_critical;
extern const struct agent_role role_review_documentation;
extern const struct agent_role *const review_roles[];
extern const size_t review_nroles;
const struct agent_role *review_role_find(const char *name);

/* The worker parts, in aggregate order. */
enum review_part { REVIEW_DOCUMENTATION, REVIEW_DEBT, REVIEW_IMPROVEMENT,
		   REVIEW_CRITICAL, REVIEW_NPARTS };
const char *review_part_name(enum review_part p);   /* "debt" */
const char *review_part_agent(enum review_part p);  /* "review_debt" */
int review_part_from_name(const char *s);           /* -1 if unknown */

/* Limits (documented in madf(1)); params and MADF_REVIEW_MAX_FILES,
 * MADF_REVIEW_MAX_BYTES, MADF_REVIEW_MAX_FILE_BYTES override them. */
#define REVIEW_MAX_FILES 5000
#define REVIEW_MAX_BYTES (64L * 1024 * 1024)
#define REVIEW_MAX_FILE_BYTES (1L * 1024 * 1024)

/* ---- running a program (agents/review_exec.c) ---- */

/* Runs argv (argv[0] looked up on PATH) in dir with stdin from /dev/null,
 * capturing stdout and stderr (each cut at max bytes), killed after
 * timeout_ms. Returns 0 with *status the exit status (128+N for signal N,
 * 124 after the timeout) and new *out, *errout (may be NULL to drop), or
 * -1 with *err (127-like: the program cannot be run). */
int review_exec(const char *const *argv, const char *dir, int64_t timeout_ms,
		size_t max, char **out, char **errout, int *status, char **err);
/* Whether a program is on PATH. */
bool review_have(const char *prog);

/* ---- the codebase (agents/review_scan.c) ---- */

struct review_limits {
	long max_files, max_bytes, max_file_bytes;
};
void review_limits_default(struct review_limits *l);

/* Walks root (a directory; symlinks never followed; .git skipped):
 * returns {"root": realpath, "files": [{"path","bytes","lang","utf8"}],
 * "notes": ["..."], "bytes": N}. lang is "c", "shell", "other". Binary
 * and huge files are left out with a note; a link leaving the tree is
 * noted, never followed. Returns 0, or an HTTP-like status with *err: 404
 * (no such directory), 413 (over l's files or bytes). */
int review_scan(const char *root, const struct review_limits *l, cJSON **out,
		char **err);

/* Appends the formatted note, stripped of control characters, to the
 * notes array (the crew's notes for the report). */
void review_note(cJSON *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The language ("c", "shell", "other") of root/relpath and whether it is
 * valid UTF-8 (false when unreadable). */
const char *review_file_lang(const char *root, const char *relpath, bool *utf8);

/* The text of line (1-based) of root/file, blanks trimmed ("" when there
 * is no such line). Caller frees. */
char *review_line_text(const char *root, const char *file, long line);

/* Registered codebases: <data_dir>/review/codebases.json {"NAME": PATH}.
 * review_resolve: a registered name's path, or id itself when it is a
 * directory; NULL (404) otherwise. Caller frees. */
int review_register(const char *data_dir, const char *name, const char *path,
		    char **err);
char *review_resolve(const char *data_dir, const char *id);

/* ---- the analyzers as tools (agents/review_tools.c) ---- */

/* Registers review.cppcheck, review.flawfinder, review.shellcheck,
 * review.ctags, review.cloc, review.pmccabe, review.dot, review.secrets,
 * review.markers, and (agents/review_analyzers.c) review.gcc_analyzer and
 * review.clang_analyzer in tools. Each takes {"root": DIR, "files": [relative
 * paths]} (review.dot: {"dot": TEXT}) and returns {"items": [...]} (raw
 * findings {"tool","rule","level","file","line","message","cwe"}, or the
 * tool's records), or fails with "PROG is not installed" when missing. */
int review_tools_register(struct tools *t, char **err);
/* Frees what t's review tools keep for the review (cppcheck's result,
 * shared by the agents that ask for the same files); call it once the
 * agents are done, before tools_free. */
void review_tools_release(const struct tools *t);
/* The program behind a tool, and its Debian package. */
const char *review_tool_program(const char *tool);

/* Progress lines (each agent's steps, the master's events) and a way to
 * stop a review. */
struct review_progress {
	void (*fn)(void *ctx, const char *line);
	void *ctx;
	atomic_int *cancel; /* nonzero: stop the review (499); may be NULL */
	/* The crew's workers, when the caller runs them (else NULL):
	 * alive(crew, part) says whether part's worker still runs (the
	 * master fails its attempt at once when it stopped, without waiting
	 * for the deadline); reassign(crew, part) starts a fresh worker in
	 * place of a stopped one before the retry (1: it did). */
	bool (*alive)(void *crew, enum review_part part);
	int (*reassign)(void *crew, enum review_part part);
	void *crew;
	/* Keep the review as this run (agents/review_run.c; NULL: no run).
	 * The master then also answers the operator's controls of its
	 * tasks (reassign, retry, cancel) while it reviews. */
	const char *run_id;
};

/* ---- the agents' work (agents/review_agents.c, review_docs.c) ---- */

/* Runs part's analysis for input {"root","files","checklist",
 * "max_findings"} with tools on behalf of agent (prog, may be NULL, hears
 * each analyzer as it starts). Returns 0 and *result
 * ({"findings": [...]} or {"documentation": {...}}, plus "notes" and
 * "tools"), or an HTTP-like status (400, 500) with *err. */
int review_part_run(enum review_part part, struct tools *tools, const char *agent,
		    const cJSON *input, const struct review_progress *prog, cJSON **result,
		    char **err);
int review_docs_run(struct tools *tools, const char *agent, const cJSON *input,
		    cJSON **result, char **err);

/* ---- the master (agents/review_master.c) ---- */


/* Reviews input {"id": PATH|NAME, "params": {...}} with master (an open
 * review_master agent; its env's worker agents running): validates, scans,
 * sends one task per agent, collects, retries. Returns 0 with *aggregate
 * {"documentation","debt","improvement","critical","review"}, or a status
 * (400, 404, 413, 500; 499 when progress->cancel was set) with *error
 * {"status","error"[,"field","rule"]} and *aggregate possibly set (500
 * after partial results). */
int review_master_run(struct agent *master, const cJSON *input,
		      const struct review_progress *progress, cJSON **aggregate,
		      cJSON **error);

/* The task_type of the trigger of a review run (operator ->
 * review_master): content "run_id" and special_instructions the request
 * {"id", "params"} as JSON text. The master hosts the workers (the crew,
 * agents/review_crew.c) and keeps the run until it is done. */
#define REVIEW_TASK_RUN "code_review_run"

/* The crew on request with master (an open review_master agent: its inbox
 * is claimed here) or, when master is NULL, a master opened here: the four
 * workers on threads of an environment of their own (data_dir, log_dir,
 * bus durability and faults ("agent:kind") as given), the review tools
 * registered (write_registry: the tool registry file written too). The
 * rest as review_master_run. */
struct review_crew_opts {
	const char *data_dir, *log_dir;
	bool durable, write_registry;
	const char *const *faults;
	size_t nfaults;
};
int review_crew_run(struct agent *master, const struct review_crew_opts *o, const cJSON *request,
		    const struct review_progress *progress, cJSON **aggregate, cJSON **error);

/* ---- review runs (agents/review_run.c) ---- */

/* Under the data directory: the runs (RUN_ID.json), the live drafts and
 * the finished reports (RUN_ID.md). */
#define REVIEW_RUNS_DIR "review/runs"
#define REVIEW_DRAFTS_DIR "reports/review-drafts"
#define REVIEW_REPORTS_DIR "reports/review"

/* A new run id, "review-YYYYMMDDTHHMMSS-xxxx" (buf of size >= 64). */
void review_run_id(char *buf, size_t size);
bool review_run_id_valid(const char *id);
/* A new run of request (status "starting", a "waiting" task per agent it
 * asks for: task_id and kind the agent's part, assignee its role). */
cJSON *review_run_new(const char *run_id, const cJSON *request);
/* The task of run called task_id (borrowed), or NULL. */
cJSON *review_run_task(const cJSON *run, const char *task_id);
/* Writes run atomically to DATA_DIR/review/runs/RUN_ID.json ("updated_at"
 * set; its "aggregate" in RUN_ID.aggregate.json beside it, which
 * review_run_load joins again and review_runs leaves out), its Markdown report to the drafts and, once done or failed, to the
 * finished reports ("report": {"md": path} set). 0, or -1 with *err. */
int review_run_save(const char *data_dir, cJSON *run, bool durable, char **err);
/* One run (new; caller deletes), or NULL. */
cJSON *review_run_load(const char *data_dir, const char *run_id);
/* Every run without its aggregate, earliest started first (a new array;
 * empty when none). */
cJSON *review_runs(const char *data_dir, char **err);
/* The lines of root/file from line-around to line+around as [{"line",
 * "text"}], tabs expanded, each cut at 160 bytes and sanitized for a
 * terminal (invalid UTF-8 replaced), a line that looks as if it held a
 * credential (a well-known key prefix, a quoted literal beside key,
 * secret, token, password, ...) REVIEW_WITHHELD instead (as is, in the
 * report, a line a CWE-798 finding names); empty for a path outside root. */
#define REVIEW_WITHHELD "[withheld: a hard-coded secret]"
cJSON *review_source_context(const char *root, const char *file, long line, int around);
/* The run's report: Markdown (new string) with the tasks, the findings by
 * severity (critical first) each with file:line and the source lines
 * around it, the documentation agent's files and the notes; its JSON twin
 * (new object: tasks, findings_by_severity, documentation, aggregate); the
 * base name of its files (buf of size >= 64). */
char *review_run_markdown(const cJSON *run, bool final);
cJSON *review_run_json(const cJSON *run);
void review_run_basename(const cJSON *run, char *buf, size_t size);

/* ---- LLM mode (agents/review_llm.c) ---- */

/* The scoring pass drops findings the model scores under this (0-10;
 * MADF_REVIEW_MIN_SCORE overrides). */
#define REVIEW_LLM_MIN_SCORE 5
/* The code sent in one findings call, in tokens (a token per four bytes;
 * MADF_REVIEW_LLM_INPUT_TOKENS overrides): the files that do not fit are
 * named only, with a note. */
#define REVIEW_LLM_INPUT_TOKENS 24000
/* review_llm_run's answer when the task's budget is reached: the state
 * (st) is kept for the operator's approval. */
#define REVIEW_LLM_PAUSED 1
long review_llm_min_score(void);

/* The debt, improvement or critical agent a in LLM mode on input (as
 * review_part_run's): the findings call, its strict validation, the
 * scoring call. st (an object the caller keeps across a pause) holds the
 * usage, approved extras ("extra_tokens", "extra_cost_usd") and, between
 * the calls, the findings. Returns 0 with *result ({"findings", "notes",
 * "tools": {}, "llm": {provider, model, scored, dropped, min_score,
 * usage}}), REVIEW_LLM_PAUSED with *err (why), or a status with *err: 400
 * (input), 422 (the model's answer failed the schema: not retried), 502
 * (the model call failed for good), 503 (a transient failure that lasted
 * through the call's retries), 500. prog (may be NULL) hears each step. */
int review_llm_run(struct agent *a, enum review_part part, const char *task_id,
		   const cJSON *input, cJSON *st, const struct review_progress *prog,
		   cJSON **result, char **err);
/* The documentation agent's LLM part over its deterministic result
 * (changed in place): README.md and CONTRIBUTING.md from the model, once
 * more with a simplified prompt (README.md only) when the first answer
 * fails; when both fail the analyzers' drafts stay, with llm-error.md
 * saying why. Adds "llm" to result. Returns 0, or -1 when the drafts are
 * the analyzers'. */
int review_llm_docs(struct agent *a, const char *task_id, const cJSON *input, cJSON *result,
		    const struct review_progress *prog);

/* ---- SARIF (agents/review_sarif.c) ---- */

/* The aggregate of review_master_run as a SARIF 2.1.0 log (new): one run
 * per finding agent that ran, ruleId the reference (a CWE id, a rule name),
 * level error (critical) or warning/note (high-medium/low), a location
 * relative to the codebase root with startLine, partialFingerprints
 * primaryLocationLineHash from the rule, file and the line's text. */
cJSON *review_sarif(const cJSON *aggregate);

#endif
