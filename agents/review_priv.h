/* The review master's own structures, shared by agents/review_master.c
 * (the review) and agents/review_control.c (its run kept in the data
 * directory and the operator's controls of its tasks). */
#ifndef MADF_REVIEW_PRIV_H
#define MADF_REVIEW_PRIV_H

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

#endif
