/* Workflows: the agent systems madf runs, each one definition registered
 * in workflow_defs[] (cli/workflows.c), as struct agent_role makes agents
 * pluggable. A definition says the workflow's name, its agent roles, how a
 * run is started (`madf run NAME`: its options and a start function), what
 * its tasks look like and where its report is. `madf run`, `madf runs`,
 * `madf tasks` and the console's Tasks and Reports views read every
 * workflow through it, so a registered workflow shows there with no
 * change to them; the console starts its run, sends task controls and
 * checks an :assign through it too (trigger, controller, task_kinds,
 * workers).
 *
 * It lives with the front ends (cli/, which the console and the servers
 * include) because starting a run is a front end's work: parsing options,
 * hosting the agents, printing; agents/ holds what the start and the hooks
 * call (agents/workflow.h for the weekly workflow, agents/review.h for the
 * code review crew). */
#ifndef MADF_WORKFLOWS_H
#define MADF_WORKFLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "cli/cli.h"

struct bus;
struct wf_request;

/* One task of a run as every front end lists it. Strings are borrowed
 * from the run they were read from (valid while it lives); none is NULL. */
struct workflow_task {
	const char *id, *kind;
	const char *subject;   /* what it is about (the definition's subject: a pair) or "" */
	const char *assignee, *status;
	const char *priority;  /* as the workflow sends it */
	int attempts;
	double progress;       /* percent */
	int64_t deadline_ns;   /* 0: none running */
	const char *done_by;   /* "" until done */
	bool stage;            /* a stage of the run shown as a task (an LLM part) */
};

struct workflow_def {
	const char *name;      /* madf run NAME */
	const char *summary;   /* one line */
	/* Its agent roles (names of agents/runtime.c's agent_roles[] or
	 * agents/review.h's review_roles[]), NULL-terminated. */
	const char *const *roles;
	/* The role that owns the runs and answers the operator's controls
	 * (operator_control), or NULL when there is none. */
	const char *controller;
	/* What a task is about, its column ("pair"), or NULL. */
	const char *subject;
	/* The kinds of task an operator may assign (the console's :assign
	 * KIND) and change, NULL-terminated, or NULL when there are none. */
	const char *const *task_kinds;
	/* The roles that do those tasks (one of them may be named by an
	 * :assign), NULL-terminated, each one of roles; NULL when none. */
	const char *const *workers;
	/* `madf run NAME`: its options, usage, help and the function that
	 * starts a run (cli/cli.h; it gets argv[0] "run", argv[1] NAME, then
	 * the options) and prints what the run gives. Listed also in
	 * workflow_run_subs[] (test_workflows checks the two agree). */
	const struct cli_cmd *entry;
	/* The rest is NULL for a workflow that keeps no runs (its report is
	 * what start prints or writes). */

	/* Its runs in data_dir in the order they started: a new array of run
	 * objects (caller deletes), empty when there are none yet; NULL with
	 * *err (caller frees) when they are there but cannot be read. */
	cJSON *(*runs)(const char *data_dir, char **err);
	/* One run, whole, or NULL (new object; caller deletes). */
	cJSON *(*run_load)(const char *data_dir, const char *run_id);
	/* The tasks of run into out (at most max); returns how many the run
	 * has (more than max when out was too small). */
	size_t (*tasks)(const cJSON *run, struct workflow_task *out, size_t max);
	/* One line on the run's health into buf; true when it is stuck. */
	bool (*health)(const cJSON *run, int64_t now_ns, char *buf, size_t size);
	/* The run's finished report (a path; borrowed from run), or NULL. */
	const char *(*report)(const cJSON *run);
	/* Under the data directory: where the live drafts (one RUN_ID.md per
	 * run) and the finished reports are. */
	const char *drafts_dir, *reports_dir;
	/* The report of run as Markdown (final or draft; new string, caller
	 * frees), its JSON twin (new object, caller deletes) and its file's
	 * base name (buf of size >= 64). */
	char *(*render)(const cJSON *run, bool final);
	cJSON *(*render_json)(const cJSON *run);
	/* Its findings as a SARIF 2.1.0 log (new object, caller deletes; NULL
	 * when the run has none yet), or NULL for a workflow without
	 * findings; the console's export writes BASENAME.sarif from it. */
	cJSON *(*render_sarif)(const cJSON *run);
	void (*basename)(const cJSON *run, char *buf, size_t size);
	/* The console's run (NULL when the workflow has none): sends the
	 * operator's trigger of the run of req (the options of `madf run
	 * NAME` the console shares) to the controller over b, its runs in
	 * data_dir. Sets run_id
	 * (size >= 64) and writes into msg what happened, to be shown as
	 * is ("started the weekly run ..."). Returns 1 when sent (*msg_id the
	 * trigger's id, caller frees), 0 when nothing needed sending (msg says
	 * why: the run is done already), -1 with *err (caller frees). */
	int (*trigger)(const char *data_dir, struct bus *b, const struct wf_request *req,
		       char *run_id, size_t id_size, char *msg, size_t msg_size, char **msg_id,
		       char **err);
};

/* The registered workflows, the weekly FX workflow first. */
extern const struct workflow_def *const workflow_defs[];
extern const size_t workflow_ndefs;
/* Their entries, in the same order, NULL-terminated: the subcommands of
 * `madf run` (cmd_run_entry). */
extern const struct cli_cmd *const workflow_run_subs[];

/* The workflow called name, or NULL. */
const struct workflow_def *workflow_find(const char *name);
/* The workflow whose runs include run_id, or NULL (reads each one's runs). */
const struct workflow_def *workflow_of_run(const char *data_dir, const char *run_id);
/* The tasks of run as w lists them: a new array of *n (caller frees; NULL
 * with *n 0 when w or run is NULL or w keeps no runs). */
struct workflow_task *workflow_tasks(const struct workflow_def *w, const cJSON *run, size_t *n);
/* "weekly, review": the registered names (new string, caller frees). */
char *workflow_names(void);

/* The definitions (each in the file that starts it). */
extern const struct workflow_def workflow_weekly;  /* cli/run_weekly.c */
extern const struct workflow_def workflow_review;  /* cli/run_review.c */
extern const struct cli_cmd run_weekly_entry, run_review_entry;

#endif
