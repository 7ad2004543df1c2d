/* The review master's run and the operator's controls: each review started
 * as a run (review_progress.run_id) is kept in the data directory at every
 * change of its tasks (agents/review_run.c), and while it runs the master
 * answers an operator_control of one of its tasks: reassign (a fresh
 * attempt, on a fresh worker when the last one stopped), retry (a failed or
 * cancelled task runs again), cancel (the task ends cancelled, which the
 * aggregate says). Every control is answered with wf_control_answer, as
 * the weekly's product_manager answers its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/review_priv.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

static const char *task_status(const struct task *t)
{
	if (t->cancelled)
		return "cancelled";
	if (t->done)
		return "done";
	if (t->failed)
		return "failed";
	if (t->paused)
		return "awaiting_approval";
	if (t->retry_at_ns)
		return "retrying";
	if (t->accepted)
		return "running";
	return t->attempts ? "assigned" : "waiting";
}

void review_ctx_sync(struct review_ctx *x, const char *status)
{
	if (!x->run)
		return;
	for (int i = 0; x->tasks && i < REVIEW_NPARTS; i++) {
		const struct task *t = &x->tasks[i];
		cJSON *j = t->wanted ? review_run_task(x->run, review_part_name(t->part)) : NULL;
		if (!j)
			continue;
		const char *st = task_status(t);
		jset_str(j, "status", st);
		jset_num(j, "attempts", t->attempts);
		jset_num(j, "progress", t->done ? 100 : t->pct);
		jset_num(j, "deadline_ns", t->done || t->failed || t->paused ? 0 :
			 (double)(t->retry_at_ns ? t->retry_at_ns : t->deadline_ns));
		jset_str(j, "current", t->id);
		jset_str(j, "done_by", t->done ? review_part_agent(t->part) : "");
		int n = cJSON_GetArraySize(t->attempt_log);
		const cJSON *last = n ? cJSON_GetArrayItem(t->attempt_log, n - 1) : NULL;
		if ((t->failed || t->retry_at_ns) && last)
			jset_str(j, "error", jstr_or(last, "error", ""));
		else if (!t->failed && !t->retry_at_ns)
			cJSON_DeleteItemFromObjectCaseSensitive(j, "error");
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(t->result, "findings");
		if (t->done && f)
			jset_num(j, "findings", cJSON_GetArraySize(f));
	}
	if (status && strcmp(jstr_or(x->run, "status", ""), status)) {
		char now[40];
		util_iso8601(util_now_ns(), now, sizeof(now));
		jset_str(x->run, "status", status);
		jset_str(x->run, "phase_since", now);
	}
	char *err = NULL;
	if (review_run_save(x->m->env->data_dir, x->run, x->m->env->bcfg.durable, &err) < 0) {
		log_write(x->m->log, LOG_ERRORS, LOG_ERROR, "run_save_failed", NULL, "%s: %s",
			  jstr_or(x->run, "run_id", "?"), err ? err : "?");
		free(err);
	}
}

bool review_is_control(const struct msg *msg)
{
	return msg->type == MSG_TASK_ASSIGNMENT &&
	       !strcmp(jstr_or(msg->content, "task_type", ""), WF_TASK_CONTROL);
}

cJSON *review_aggregate_merge(const cJSON *old, const cJSON *agg, const struct task *tasks)
{
	cJSON *out = cJSON_Duplicate(old, true);
	cJSON *rv = jobj(out, "review"), *agents = jobj(rv, "agents"), *notes = jarr(rv, "notes");
	const cJSON *nrv = jget(agg, "review"), *n;
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		if (!tasks[i].wanted)
			continue;
		const char *part = review_part_name(tasks[i].part);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(agg, part);
		if (v)
			cJSON_ReplaceItemInObjectCaseSensitive(out, part, cJSON_Duplicate(v, true));
		v = cJSON_GetObjectItemCaseSensitive(jget(nrv, "agents"), part);
		cJSON_DeleteItemFromObjectCaseSensitive(agents, part);
		if (v)
			cJSON_AddItemToObject(agents, part, cJSON_Duplicate(v, true));
		/* its notes are the new run's */
		size_t len = strlen(part);
		for (cJSON *k = notes->child; k;) {
			cJSON *next = k->next;
			if (cJSON_IsString(k) && !strncmp(k->valuestring, part, len) &&
			    k->valuestring[len] == ':')
				cJSON_Delete(cJSON_DetachItemViaPointer(notes, k));
			k = next;
		}
		cJSON_ArrayForEach(n, jget(nrv, "notes"))
			if (cJSON_IsString(n) && !strncmp(n->valuestring, part, len) &&
			    n->valuestring[len] == ':')
				cJSON_AddItemToArray(notes, cJSON_Duplicate(n, false));
	}
	return out;
}

static void rerun_progress(void *ctx, const char *line)
{
	struct agent *a = ctx;
	log_write(a->log, LOG_EVENTS, LOG_INFO, "review_progress", NULL, "%s", line);
}

/* The task of an ended run that the operator retries: its part reviewed
 * again, with the crew hosted here, merged into the run. */
static void rerun(struct agent *m, const char *run_id, const char *part)
{
	cJSON *run = review_run_load(m->env->data_dir, run_id);
	cJSON *request = cJSON_Duplicate(jget(run, "request"), true);
	cJSON_Delete(run);
	if (!cJSON_IsObject(request)) {
		cJSON_Delete(request);
		return;
	}
	cJSON *params = jobj(request, "params");
	cJSON_DeleteItemFromObjectCaseSensitive(params, "agents");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(params, "agents"), cJSON_CreateString(part));
	struct review_crew_opts o = { .data_dir = m->env->data_dir, .log_dir = m->env->log_dir,
				      .durable = m->env->bcfg.durable,
				      .faults = (const char *const *)m->env->faults,
				      .nfaults = m->env->nfaults };
	struct review_progress p = { .fn = rerun_progress, .ctx = m, .run_id = run_id };
	cJSON *agg = NULL, *error = NULL;
	review_crew_run(m, &o, request, &p, &agg, &error);
	cJSON_Delete(agg);
	cJSON_Delete(error);
	cJSON_Delete(request);
}

/* Why the control cannot apply to the run it names, which is not the one
 * under way (new string), or NULL when it is a retry of a failed or
 * cancelled task of a run that ended: then *again is set. */
static char *not_running(struct agent *m, const char *run_id, const char *action,
			 const char *task_id, bool *again)
{
	cJSON *run = review_run_load(m->env->data_dir, run_id);
	const char *st = jstr_or(run, "status", "");
	const char *tst = jstr_or(review_run_task(run, task_id), "status", "");
	bool over = !strcmp(st, "done") || !strcmp(st, "failed");
	if (over && !strcmp(action, "retry") && (!strcmp(tst, "failed") || !strcmp(tst, "cancelled"))) {
		*again = true;
		cJSON_Delete(run);
		return NULL;
	}
	char *why = !run ? xasprintf("no review run %s", run_id) :
		    over && !strcmp(action, "retry") && *tst ?
		    xasprintf("the task is %s (a retry after the run ended takes a failed or "
			      "cancelled task)", tst) :
		    !strcmp(st, "done") || !strcmp(st, "failed") ?
		    xasprintf("run %s is %s: its tasks can no longer change", run_id, st) :
		    xasprintf("run %s is not under way here (it is %s; its master stopped)", run_id,
			      *st ? st : "starting");
	cJSON_Delete(run);
	return why;
}

/* Applies the control; returns the outcome, *detail what happened or why
 * not (new string). */
static const char *control_apply(struct review_ctx *x, struct agent *m, const struct msg *msg,
				 char **detail, bool *again)
{
	const cJSON *c = msg->content;
	const char *action = jstr_or(c, "action", "?"), *run_id = jstr_or(c, "run_id", "?");
	const char *task_id = jstr_or(c, "task_id", "?"), *to = jstr(c, "to");
	if (!x || !x->run || strcmp(run_id, jstr_or(x->run, "run_id", ""))) {
		if (x && !strcmp(action, "retry")) {
			/* a retry of another run waits for this one */
			*detail = xasprintf("run %s is under way: a retry of run %s waits until it "
					    "ends; send it again then", jstr_or(x->run, "run_id", "?"),
					    run_id);
			return "refused";
		}
		*detail = not_running(m, run_id, action, task_id, again);
		if (*again) {
			*detail = xasprintf("retry by %s: %s of the ended run %s runs again", msg->from,
					    task_id, run_id);
			return "applied";
		}
		return "refused";
	}
	int part = review_part_from_name(task_id);
	struct task *t = part >= 0 ? &x->tasks[part] : NULL;
	if (!t || !t->wanted) {
		*detail = xasprintf("no task %s in run %s", task_id, run_id);
		return "refused";
	}
	const char *agent = review_part_agent(t->part), *st = task_status(t);
	bool terminal = t->done || t->failed;
	if (strcmp(action, "reassign") && strcmp(action, "retry") && strcmp(action, "cancel")) {
		*detail = xasprintf("a review task takes reassign, retry and cancel, not %s", action);
		return "refused";
	}
	if (to && strcmp(to, agent)) {
		*detail = xasprintf("%s is not a %s worker (any process of %s takes the task)", to,
				    agent, agent);
		return "refused";
	}
	if ((!strcmp(action, "retry") && !t->failed) ||
	    (strcmp(action, "retry") && terminal)) {
		*detail = xasprintf("the task is %s%s", st, !strcmp(action, "retry") && !terminal ?
				    " (r reassigns a task under way)" : "");
		return "refused";
	}
	cJSON *a = cJSON_CreateObject();
	cJSON_AddNumberToObject(a, "attempt", t->attempts);
	char *note = xasprintf("%s by %s", !strcmp(action, "cancel") ? "cancelled" :
			       !strcmp(action, "retry") ? "retried" : "reassigned", msg->from);
	cJSON_AddStringToObject(a, "error", note);
	free(note);
	cJSON_AddItemToArray(t->attempt_log, a);
	if (!strcmp(action, "cancel")) {
		t->failed = t->cancelled = true;
		t->status = 499;
		t->deadline_ns = t->retry_at_ns = 0;
		t->paused = false;
		*detail = xasprintf("cancel by %s: %s cancelled after %d attempt%s", msg->from, task_id,
				    t->attempts, t->attempts == 1 ? "" : "s");
	} else {
		bool fresh = false;
		const struct review_progress *p = x->p;
		if (!strcmp(action, "reassign") && p && p->alive && p->reassign &&
		    !p->alive(p->crew, t->part))
			fresh = p->reassign(p->crew, t->part) == 1;
		t->failed = t->cancelled = t->done = false;
		t->accepted = false;
		t->pct = 0;
		char *err = NULL;
		if (review_task_send(x, t, &err) < 0) {
			*detail = xasprintf("%s of %s: the task could not be sent: %s", action, task_id,
					    err ? err : "?");
			free(err);
			review_attempt_failed(x, t, 500, *detail, true);
			review_ctx_sync(x, NULL);
			return "failed";
		}
		*detail = xasprintf("%s by %s: %s sent again to %s%s (attempt %d)", action, msg->from,
				    task_id, fresh ? "a fresh " : "", agent, t->attempts);
	}
	review_ctx_sync(x, NULL);
	return "applied";
}

void review_control(struct review_ctx *x, struct agent *m, const struct msg *msg)
{
	char *detail = NULL;
	bool again = false;
	const char *outcome = control_apply(x, m, msg, &detail, &again);
	const char *action = jstr_or(msg->content, "action", "?");
	const char *task_id = jstr_or(msg->content, "task_id", "?");
	log_write(m->log, LOG_DECISIONS, strcmp(outcome, "applied") ? LOG_WARN : LOG_INFO,
		  strcmp(outcome, "applied") ? "control_refused" : action, NULL, "%s of %s from %s %s: %s",
		  action, task_id, msg->from, outcome, detail);
	if (x)
		review_progress_say(x->p, "%s: %s %s: %s", task_id, action, outcome, detail);
	wf_control_answer(m, msg, outcome, detail);
	free(detail);
	if (again) /* answered first: the review takes a while */
		rerun(m, jstr_or(msg->content, "run_id", ""), jstr_or(msg->content, "task_id", ""));
}
