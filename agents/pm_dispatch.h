/* The product_manager's dispatch (private to agents/pm*.c): a work queue
 * per researcher role. A task waits with the product_manager ("queued": no
 * message sent, no attempt spent, no deadline running) until the role's
 * window has room; the window is the sum of the capacities its live
 * processes advertise in their heartbeats. A rejection for capacity puts
 * the task back in the queue. Everything lives in the product_manager's
 * state (a->state). */
#ifndef MADF_PM_DISPATCH_H
#define MADF_PM_DISPATCH_H

#include <stdbool.h>

#include "agents/runtime.h"

/* The operator control being handled (agents/pm_control.c's
 * pm_control_answer): its outcome is the first decision about it (event
 * "control_refused" or the action's name), or a state that could not be
 * saved; sent back to its sender. */
struct pm_control {
	bool active, refused;
	char action[32];
	char *text, *failed;
};
extern _Thread_local struct pm_control pm_ctl;

/* Saves the state; a failure is logged (and, while a control is handled,
 * becomes its outcome). */
void pm_save(struct agent *a);
/* One line in the decisions log, about task (or NULL); while a control is
 * handled, its first decision is kept as its outcome. */
void pm_decision(struct agent *a, const char *event, const char *task, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Remembers that message msg_id (an assignment or a request) is about task
 * of run run_id. */
void pm_index_add(struct agent *a, const char *msg_id, const char *run_id, const char *task);

/* Puts task t of run in agent's queue: status "queued", agent its intended
 * assignee, no current assignment, no deadline. Nothing is sent: pm_dispatch
 * sends it when agent's window has room. */
void pm_task_enqueue(struct agent *a, cJSON *run, cJSON *t, const char *agent);
/* Sends queued tasks of every open run, the most urgent first (then in
 * the run's order), while their researcher's window has room; each gets a
 * fresh assignment id, an attempt and a deadline, saved before anything
 * is sent. Logs what it sent and what still waits. Returns how many it
 * sent. */
int pm_dispatch(struct agent *a);
/* Sends t's current assignment (again, same id): a resumed run. */
void pm_send_assignment(struct agent *a, cJSON *run, cJSON *t);

/* A heartbeat or system_status from an agent: the capacity of its process
 * (heartbeat "pid" and "capacity"); "stopping" takes the process out. */
void pm_note_agent(struct agent *a, const struct msg *m);
/* The window of role: the sum of the capacity of its live processes (their
 * number in *procs), or the product_manager's own MADF_AGENT_CAPACITY when
 * none is known (*procs 0). */
int pm_window(struct agent *a, const char *role, int *procs);

/* True when a task_acceptance rejects for capacity (the agent's queue is
 * full): backpressure, not a failure. */
bool pm_rejected_for_capacity(const cJSON *acceptance);
/* Capacity rejection: t goes back to the queue, its attempt given back;
 * the role gets nothing more until one of its tasks ends or it sends a
 * heartbeat. */
void pm_task_requeue(struct agent *a, cJSON *run, cJSON *t, const char *from,
		     const char *reason);
/* True for an error_report that retrying cannot help: context.retryable
 * (or context.recoverable) false. */
bool pm_error_permanent(const cJSON *content);

#endif
