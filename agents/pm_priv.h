/* The product_manager's own parts (private to agents/pm*.c): the run flow
 * (agents/pm.c) shared with the operator's controls (agents/pm_control.c).
 * The dispatch's part is agents/pm_dispatch.h. Everything works on the
 * product_manager's state (a->state): a run is its entry under "runs", the
 * run snapshot of agents/report.h. */
#ifndef MADF_PM_PRIV_H
#define MADF_PM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "agents/pm_dispatch.h"
#include "agents/runtime.h"

/* The state's "runs" object, run id -> run (created when absent). */
cJSON *pm_runs(struct agent *a);
/* The task of run with that task id (borrowed), or NULL. */
cJSON *pm_find_task(cJSON *run, const char *task_id);
/* The researcher that is not agent. */
const char *pm_other_researcher(const char *agent);
/* The researcher for a kind of task ("market", "news"): the specialist,
 * unless the learning system says the other does that kind better. */
const char *pm_choose(struct agent *a, const char *kind);
/* True for research_agent_1 and research_agent_2. */
bool pm_researcher_name(const char *s);
/* Tells the task's current assignee to drop it (queued or paused for
 * approval there); its answer, if it comes, is no longer current. */
void pm_cancel_current(struct agent *a, cJSON *run, cJSON *t);
/* Adds an entry to the run's "failures" (the report's failures and
 * reassignments): what happened to task t (or the validation), from and
 * to whom (may be NULL), why. */
void pm_add_failure(cJSON *run, const cJSON *t, const char *what, const char *from,
		    const char *to, const char *reason);
/* True for a task status that no longer changes: done, failed, cancelled. */
bool pm_terminal(const char *status);
/* True when o's "status" is status. */
bool pm_status_is(const cJSON *o, const char *status);

/* Sends the run to the report_writer: a draft (at most one every 300 ms;
 * one held back is sent by the tick) or the final report (its request
 * remembered in the run's "report", so that a resumed run asks again). */
void pm_send_draft(struct agent *a, cJSON *run, bool final);
/* The narrative (LLM mode), then the final report; a narrative paused at
 * its budget holds the report back. */
void pm_finish_report(struct agent *a, cJSON *run);
/* When every task of the run has ended and validation has not started:
 * conflicts detected, then the validator asked (or, with no finding, the
 * report compiled). */
void pm_maybe_validate(struct agent *a, cJSON *run);
/* The validation's deadline from now (ns since the epoch). */
int64_t pm_validation_deadline(const struct agent *a);

/* Applies an operator_control task_assignment (agents/pm_control.c) and
 * answers its sender with a task_acceptance saying the outcome. */
void pm_control_answer(struct agent *a, const struct msg *m);

#endif
