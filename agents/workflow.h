/* The weekly Asia/G10 FX research workflow: names shared by its roles and
 * the command line that starts it. */
#ifndef MADF_WORKFLOW_H
#define MADF_WORKFLOW_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "agents/runtime.h"

/* task_type values of task_assignment. */
#define WF_TASK_WEEKLY "weekly_report"       /* operator -> product_manager */
#define WF_TASK_MARKET "market_data"         /* product_manager -> researcher */
#define WF_TASK_NEWS "news_analysis"         /* product_manager -> researcher */
#define WF_TASK_REPORT_DRAFT "report_draft"  /* product_manager -> report_writer */
#define WF_TASK_REPORT_FINAL "report_final"  /* product_manager -> report_writer */
/* operator (console) -> product_manager: content "action" is one of
 * reassign, retry, cancel, hold, release, priority, with "run_id",
 * "task_id", and "to" (reassign, retry, release: the agent; default the
 * other researcher) or "priority" (urgent, high, normal, low); or assign,
 * with "run_id", "kind" (market, news), "pair" and optionally "to": a new
 * task, while the run is researching. Each is answered to its sender with
 * a task_acceptance replying to it (outcome applied, refused or failed;
 * see man/madf-messages.5). */
#define WF_TASK_CONTROL "operator_control"
/* product_manager -> researcher: drop the task "cancel_id" (the
 * assignment's message id) if queued or paused for approval, or stop it
 * before its next model call if being worked. */
#define WF_TASK_CANCEL "cancel_task"
/* The message id of the cancel of an assignment: the assignment's id and
 * "-cancel", in buf (MSG_ID_MAX + 1 bytes), so that a researcher working
 * it can see the cancel on the bus before it claims it (bus_find); NULL
 * when that would be too long (the cancel then has a fresh id). */
const char *wf_cancel_id(const char *assignment, char *buf, size_t size);

/* The content of an operator_control task_assignment (new object). */
cJSON *wf_control_content(const char *action, const char *run_id, const char *task_id,
			  const char *to, const char *priority);

/* Answers the operator_control m that agent a received: a task_acceptance
 * to its sender replying to it (correlated as it was), "accepted" when
 * outcome is "applied", else "rejected" with detail as rejection_reason;
 * control_action, control_task_id, outcome (applied, refused, failed) and
 * detail say what happened (man/madf-messages.5). Every workflow's
 * controller answers with it. */
void wf_control_answer(struct agent *a, const struct msg *m, const char *outcome,
		       const char *detail);
/* The same with control_task_id task_id (may be NULL: none), for a
 * controller whose controls name what they act on otherwise (a
 * conversation's session id). */
void wf_control_reply(struct agent *a, const struct msg *m, const char *task_id,
		      const char *outcome, const char *detail);

/* The tasks of run (the product_manager's run snapshot) that wait for the
 * operator's approval of more LLM budget: research tasks by task id, then
 * "validation" and "narrative" (their LLM parts). Writes their ids,
 * space-separated, to buf (may be NULL) and returns how many. */
int wf_awaiting_approval(const cJSON *run, char *buf, size_t size);

/* The seed's Asia/G10 set. */
extern const char *const wf_default_pairs[];
extern const size_t wf_default_npairs;

struct wf_request {
	int64_t as_of_ns;
	char **pairs;
	size_t npairs;
	const char *market_source, *news_source, *report_dir;
	int64_t task_timeout_s;
	bool fresh;            /* a new run even if this one exists */
	const char *notify;    /* NULL, or the inbox that follows the run from
				  another host (agents/pm_notify.h) */
	const char *codebase;  /* the code review's PATH|NAME (the console's
				  :run review), or NULL */
};

/* A run id stable for one request: "weekly-<iso week>-<hash of window,
 * pairs and sources>", so that running the same request again resumes. */
void wf_run_id(const struct wf_request *r, char *buf, size_t size);

/* The task_assignment that starts (or resumes) a run (content). */
cJSON *wf_trigger_content(const struct wf_request *r, const char *run_id);

/* The run's entry in the product_manager's state file, whole (for a done
 * run, from its archive), or NULL (new object, caller deletes). */
cJSON *wf_load_run(const char *data_dir, const char *run_id);

/* The product_manager's whole state file (read only; new tree, caller
 * deletes), or NULL with *err (caller frees; may be NULL): missing,
 * unreadable or not JSON. */
cJSON *wf_load_state(const char *data_dir, char **err);

/* Whether an agent answers, from the heartbeat its state file carries:
 * WF_ALIVE; WF_STALLED when the heartbeat is older than WF_STALLED_S (its
 * process may be busy or hung); WF_OFFLINE when there is no state or
 * heartbeat, it said it was stopping, or its process is gone. why (may be
 * NULL) gets a phrase for the operator, e.g. "its last heartbeat is 40s
 * old". */
enum wf_liveness { WF_OFFLINE = -1, WF_STALLED = 0, WF_ALIVE = 1 };
#define WF_STALLED_S 15
enum wf_liveness wf_agent_liveness(const char *data_dir, const char *agent, int64_t now_ns,
				   char *why, size_t size);

/* A run (product_manager snapshot) stuck in one phase this long is
 * flagged: WF_STUCK_S, or $MADF_RUN_STUCK_S seconds. */
#define WF_STUCK_S 900
int64_t wf_stuck_after_s(void);

/* One line on run's health at now_ns: its phase and how long it has been
 * in it, tasks done, failed, cancelled (when any) and open; true when it is stuck (not done and
 * in one phase longer than stuck_s), which the line then says. */
bool wf_run_health(const cJSON *run, int64_t now_ns, int64_t stuck_s, char *buf, size_t size);

/* A done run leaves the product_manager's state file, which is written at
 * every step: the whole run goes to DATA_DIR/state/runs/RUN_ID.json, and run
 * (its entry in the state) keeps all but the bulky "findings", "messages",
 * "events", "market", "sentiment", "price_checks" and "issues", with
 * "archived" naming the file; so the state's size, and the cost of a step,
 * does not grow with the runs done. A run archived already is left as it
 * is. Returns 0, or -1 with *err (run unchanged). */
int wf_archive_run(const char *data_dir, cJSON *run, bool durable, char **err);

/* Report retention (seed 003 section 9): drafts 7 days, finished weekly
 * reports one year, by modification time. */
int wf_reports_gc(const char *data_dir, int64_t now_ns, bool dry_run,
		  void (*report)(void *ctx, const char *what, const char *path),
		  void *ctx, char **err);

#endif
