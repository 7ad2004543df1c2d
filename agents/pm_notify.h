/* Runs followed from another host (`madf run weekly --attach`): the
 * trigger names an inbox ("notify") where the product_manager sends the
 * run's progress (task_progress, task_id the run id, current_step the
 * progress line) and, when the report writer finishes, the report itself
 * (a research_result whose raw_data carries the Markdown and its JSON
 * twin), so that the requester writes the report where it runs. See
 * man/madf-messages.5, RUNS ACROSS HOSTS. */
#ifndef MADF_PM_NOTIFY_H
#define MADF_PM_NOTIFY_H

#include <stddef.h>

#include <cJSON.h>

#include "agents/runtime.h"

/* The progress line of a run snapshot ("researching: 3/20 tasks done, 0
 * failed, ..."), as `madf run weekly` prints it. */
void wf_progress_line(const cJSON *run, char *buf, size_t size);
/* Tasks of run in status (NULL: every task). */
int wf_count_tasks(const cJSON *run, const char *status);

/* The inbox that follows run_id from another host: "run-" and the run
 * id, lower case (a valid agent name). */
void wf_notify_inbox(const char *run_id, char *buf, size_t size);

/* product_manager: a trigger (m) for run (NULL when it was refused). A
 * "notify" inbox in its content is kept in the run; for a run done already
 * the inbox is told so at once (the report's paths, no text). */
void pm_notify_trigger(struct agent *a, cJSON *run, const struct msg *m);
/* product_manager, each tick: the progress of every run followed, sent
 * when its line changed. */
void pm_notify_tick(struct agent *a, cJSON *runs);
/* product_manager: the report writer's final report (m) for run, sent on
 * to the run's notify inbox with its text. */
void pm_notify_report(struct agent *a, cJSON *run, const struct msg *m);

#endif
