/* The review crew's own structures and helpers: the review master's
 * (agents/review_master.c, the review; agents/review_control.c, its run
 * kept in the data directory and the operator's controls of its tasks),
 * and the review tools' (agents/review_tools.c, agents/review_analyzers.c,
 * agents/review_critical.c: the analyzer slots, the raw finding, the
 * critical agent's keep-policy). */
#ifndef MADF_REVIEW_PRIV_H
#define MADF_REVIEW_PRIV_H

#include <stdbool.h>

#include <cJSON.h>

#include "core/tools.h"

#include "agents/review.h"
#include "core/message.h"

/* One agent's task in a review. */
struct task {
	enum review_part part;
	bool wanted, done, failed;
	bool accepted;        /* the current attempt was accepted */
	bool cancelled;       /* by the operator (failed is set too) */
	int attempts;
	int pct;              /* the worker's last percent_complete */
	int status;           /* of a failure */
	char id[MSG_ID_MAX + 1];
	int64_t deadline_ns, retry_at_ns; /* retry_at_ns: 0 = none pending */
	int64_t timeout_s;    /* a task's deadline after assignment or progress */
	bool paused;          /* awaiting the operator's approval (no deadline) */
	cJSON *result;        /* raw_data */
	cJSON *attempt_log;   /* [{"attempt","error"}] */
};

/* A review under way. */
struct review_ctx {
	struct agent *m;
	struct task *tasks;   /* REVIEW_NPARTS */
	cJSON **inputs;       /* each agent's input */
	int64_t timeout_s;
	const struct review_progress *p;
	cJSON *run;           /* the run kept (NULL: none) */
};

/* agents/review_master.c */
int review_task_send(struct review_ctx *x, struct task *t, char **err);
void review_attempt_failed(struct review_ctx *x, struct task *t, int status, const char *why,
			   bool retryable);
void review_progress_say(const struct review_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The HTTP status a worker's error_report (its content) gives in
 * context.status: 500 when it gives none; -1 with *err naming the field
 * when it is not a whole number from 100 to 599. */
int review_report_status(const cJSON *content, char **err);

/* The request's check, {"id", "params"?} (seed 001's input; the params'
 * fields, agents and checklist keys): the number of errors, added to *e. */
int review_request_check(const cJSON *input, struct msg_errors *e);
/* Applies params' include, exclude and since to scan's files (review_scan's
 * object, changed): 0, or 400 with *err. */
int review_scan_filter(cJSON *scan, const cJSON *params, char **err);
/* The input of part's agent (new): scan's root and files, params' checklist
 * of the part and max_findings. */
cJSON *review_worker_input(const cJSON *scan, const cJSON *params, enum review_part part);

/* agents/review_agents.c */
/* An agent's input checked ({"root", "files", "checklist"?,
 * "max_findings"?}): 0, or 400 with *err naming the field and the rule. */
int review_input_check(enum review_part part, const cJSON *input, char **err);

/* agents/review_control.c */
/* The run's tasks made to say what x's tasks are, then saved (a failure
 * logged). status (may be NULL) the run's new status. */
void review_ctx_sync(struct review_ctx *x, const char *status);
/* Whether msg is an operator control (a task_assignment of task_type
 * operator_control). */
bool review_is_control(const struct msg *msg);
/* old (the aggregate of a run whose task was retried after it ended)
 * with the parts tasks wanted (each agent's list or documentation, its
 * review.agents entry, its notes) taken from agg (new object). */
cJSON *review_aggregate_merge(const cJSON *old, const cJSON *agg, const struct task *tasks);
/* Applies the control msg to x's review (x NULL: no review runs now) and
 * answers its sender (wf_control_answer). */
void review_control(struct review_ctx *x, struct agent *m, const struct msg *msg);


/* ---- the review tools ---- */


/* Analyzer processes run at once across the agents of this process: at
 * most the CPU count (MADF_REVIEW_JOBS overrides). take blocks until a
 * slot is free; give returns it. */
int review_slots_max(void);
void review_slot_take(void);
void review_slot_give(void);

/* A raw finding {"tool","rule","level","file","line","message","cwe"}
 * (file without a leading "./", line at least 1, cwe null when NULL or
 * ""). New; caller owns it. */
cJSON *review_raw_new(const char *tool, const char *rule, int level, const char *file,
		      long line, const char *message, const char *cwe);

/* The Debian package of a program ("universal-ctags" for ctags). */
const char *review_package_of(const char *prog);

/* Registers review.gcc_analyzer and review.clang_analyzer (agents/
 * review_analyzers.c). */
int review_analyzers_register(struct tools *t, char **err);

/* ---- the critical agent's keep-policy (agents/review_critical.c) ---- */

/* A single tool's report is kept when its track record in the defect
 * class (hits / (hits + false alarms)) is at least this. */
#define REVIEW_KEEP_PRECISION 0.90

/* Groups raw findings (review_raw_new's, borrowed) by file, line and
 * defect class (e.g. CWE-415, the overflow family), and keeps a group when
 * two tools agree on it, or one tool whose track record in the class
 * reaches REVIEW_KEEP_PRECISION, or a secret matching a credential format.
 * Returns the kept ones (new), in file and line order, each {"file",
 * "line", "cwe", "severity", "message", "tools" (e.g. "gcc-analyzer
 * -Wanalyzer-double-free, clang-analyzer unix.Malloc"), "why"}; *dropped
 * counts the raw findings left out. root: the codebase (unused for now). */
cJSON *review_critical_keep(const cJSON *raw, const char *root, long *dropped);
/* The remediation advice for a CWE id (a general one when unknown). */
const char *review_critical_remedy(const char *cwe);

#endif
