/* The product_manager's operator controls: an operator_control
 * task_assignment (reassign, retry, release, cancel, hold, priority,
 * approve_budget, skip_llm of a task; approve_budget, cancel, skip_llm of
 * the validation's LLM review or the narrative; assign of a new task) is
 * applied to the run it names, or refused with the reason, and answered to
 * its sender with a task_acceptance saying the outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/llm_agent.h"
#include "agents/market.h"
#include "agents/pm_priv.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define NS 1000000000LL

/* Shared with the rest of the product_manager (agents/pm_priv.h). */
#define save(a) pm_save(a)
#define decision(...) pm_decision(__VA_ARGS__)

/* Tells the current assignee to drop the task (if it still has it queued
 * or paused for approval), logged as the decision cancel_sent. */
void pm_cancel_current(struct agent *a, cJSON *run, cJSON *t)
{
	const char *who = jstr(t, "assignee"), *cur = jstr(t, "current");
	if (!who || !cur || !*cur || pm_terminal(jstr(t, "status")))
		return;
	cJSON *c = wf_control_content("cancel", jstr(run, "run_id"), jstr(t, "task_id"), NULL, NULL);
	cJSON_ReplaceItemInObject(c, "task_type", cJSON_CreateString(WF_TASK_CANCEL));
	cJSON_AddStringToObject(c, "cancel_id", cur);
	char cid[MSG_ID_MAX + 1];
	agent_send(a, who, MSG_TASK_ASSIGNMENT, c, wf_cancel_id(cur, cid, sizeof(cid)), cur,
		   jstr(t, "task_id"), PRIO_URGENT, NULL, NULL);
	decision(a, "cancel_sent", jstr(t, "task_id"), "%s: %s told to drop %s", jstr(t, "task_id"),
		 who, cur);
	/* Its answer, if it still comes, is about an assignment that is no
	 * longer current, and is ignored. */
}

bool pm_researcher_name(const char *s)
{
	return s && (!strcmp(s, "research_agent_1") || !strcmp(s, "research_agent_2"));
}

/* A task the operator adds to a run still researching: "kind" market or
 * news, "pair", and "to" (default: the specialist, as at the start). */
static void control_assign(struct agent *a, const struct msg *m, cJSON *run)
{
	const cJSON *c = m->content;
	const char *kind = jstr(c, "kind"), *pair = jstr(c, "pair"), *to = jstr(c, "to");
	char b[4], q[4], *why = NULL;
	if (!run)
		why = xasprintf("no run %s", jstr(c, "run_id") ? jstr(c, "run_id") : "?");
	else if (strcmp(jstr(run, "status"), "researching"))
		why = xasprintf("run %s is %s: tasks can be added while it researches",
				jstr(run, "run_id"), jstr(run, "status"));
	else if (!kind || (strcmp(kind, "market") && strcmp(kind, "news")))
		why = xstrdup("kind must be market or news");
	else if (market_pair_parse(pair, b, q, &why) < 0)
		;
	else if (!market_currency_known(b) || !market_currency_known(q))
		why = xasprintf("pair %s: unknown currency %s", pair, market_currency_known(b) ? q : b);
	else if (to && !pm_researcher_name(to))
		why = xasprintf("%s is not a researcher", to);
	char code[16], tid[64];
	if (!why) {
		snprintf(code, sizeof(code), "%s%s", b, q);
		snprintf(tid, sizeof(tid), "%s-%s", code, kind);
		if (pm_find_task(run, tid))
			why = xasprintf("the run has a task %s already", tid);
	}
	if (why) {
		decision(a, "control_refused", NULL, "assign from %s refused: %s", m->from, why);
		free(why);
		return;
	}
	char canon[8];
	snprintf(canon, sizeof(canon), "%s/%s", b, q);
	bool listed = false;
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "pairs"))
		listed = listed || !strcmp(p->valuestring, canon);
	if (!listed)
		cJSON_AddItemToArray(jarr(run, "pairs"), cJSON_CreateString(canon));
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "task_id", tid);
	cJSON_AddStringToObject(t, "kind", kind);
	cJSON_AddStringToObject(t, "pair", canon);
	cJSON_AddStringToObject(t, "added_by", m->from);
	cJSON_AddItemToArray(jarr(run, "tasks"), t);
	pm_task_enqueue(a, run, t, to ? to : pm_choose(a, kind));
	decision(a, "assign", tid, "assign by %s: new %s task for %s to %s", m->from, kind, canon,
		 jstr(t, "assignee"));
	save(a);
	pm_dispatch(a);
	pm_send_draft(a, run, false);
}

/* approve_budget, cancel or skip_llm of the validation's LLM review or of
 * the narrative ("stage"), paused at their budget. Cancel drops only the
 * LLM part, as skip_llm does: the run goes on with the deterministic
 * result. */
static void control_stage(struct agent *a, const struct msg *m, cJSON *run, const char *stage)
{
	const cJSON *c = m->content;
	const char *action = jstr(c, "action");
	bool validation = !strcmp(stage, "validation");
	cJSON *o = run ? cJSON_GetObjectItem(run, stage) : NULL;
	char *why = NULL;
	if (!run)
		why = xasprintf("no run %s", jstr(c, "run_id") ? jstr(c, "run_id") : "?");
	else if (strcmp(action, "approve_budget") && strcmp(action, "cancel") &&
		 strcmp(action, "skip_llm"))
		why = xasprintf("only approve_budget, cancel and skip_llm apply to the %s", stage);
	else if (!pm_status_is(o, "awaiting_approval"))
		why = xasprintf("the %s is %s, not awaiting approval", stage,
				jstr(o, "status") ? jstr(o, "status") : "not started");
	if (why) {
		decision(a, "control_refused", stage, "%s from %s refused: %s", action, m->from, why);
		free(why);
		return;
	}
	bool approve = !strcmp(action, "approve_budget");
	const struct llm_agent_settings *s = a->env->llm;
	const cJSON *xt = cJSON_GetObjectItem(c, "extra_tokens");
	const cJSON *xc = cJSON_GetObjectItem(c, "extra_cost_usd");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "paused_because");
	if (validation) {
		const char *vid = jstr(o, "request_id");
		cJSON *ac = wf_control_content(action, jstr(run, "run_id"), stage, NULL, NULL);
		cJSON_ReplaceItemInObject(ac, "task_type",
					  cJSON_CreateString(approve ? LLM_TASK_APPROVE : LLM_TASK_SKIP));
		cJSON_AddStringToObject(ac, "approve_id", vid);
		if (approve && cJSON_IsNumber(xt) && xt->valuedouble >= 0)
			cJSON_AddNumberToObject(ac, "extra_tokens", xt->valuedouble);
		if (approve && cJSON_IsNumber(xc) && xc->valuedouble >= 0)
			cJSON_AddNumberToObject(ac, "extra_cost_usd", xc->valuedouble);
		jset_str(o, "status", "requested");
		jset_num(o, "deadline_ns", (double)pm_validation_deadline(a));
		decision(a, action, stage, "%s by %s: the validator's LLM review %s", action, m->from,
			 approve ? "resumes with more budget" :
			 "is dropped; the deterministic verdicts go on");
		save(a);
		agent_send(a, "validator_agent", MSG_TASK_ASSIGNMENT, ac, NULL, vid,
			   jstr(run, "run_id"), PRIO_URGENT, NULL, NULL);
		pm_send_draft(a, run, false);
		return;
	}
	if (approve) {
		double et = cJSON_IsNumber(xt) && xt->valuedouble >= 0 ? xt->valuedouble :
			    s && s->token_budget > 0 ? (double)s->token_budget : 0;
		double ec = cJSON_IsNumber(xc) && xc->valuedouble >= 0 ? xc->valuedouble :
			    s && s->cost_budget > 0 ? s->cost_budget : 0;
		jset_num(o, "extra_tokens", jnum(o, "extra_tokens", 0) + et);
		jset_num(o, "extra_cost_usd", jnum(o, "extra_cost_usd", 0) + ec);
		jset_str(o, "status", "approved");
		decision(a, action, stage, "%s by %s: the narrative starts again with %.0f more "
			 "tokens and $%.4f", action, m->from, et, ec);
		save(a);
		pm_finish_report(a, run);
		return;
	}
	jset_str(o, "status", "skipped");
	char *w = xasprintf("the narrative is skipped: %s by %s at its budget", action, m->from);
	cJSON_AddItemToArray(jarr(run, "warnings"), cJSON_CreateString(w));
	free(w);
	decision(a, action, stage, "%s by %s: the report goes without the narrative", action,
		 m->from);
	save(a);
	pm_send_draft(a, run, true);
}

static void on_control(struct agent *a, const struct msg *m)
{
	const cJSON *c = m->content;
	const char *action = jstr(c, "action"), *task_id = jstr(c, "task_id");
	const char *run_id = jstr(c, "run_id"), *to = jstr(c, "to");
	cJSON *run = run_id ? cJSON_GetObjectItem(pm_runs(a), run_id) : NULL;
	if (action && !strcmp(action, "assign")) {
		control_assign(a, m, run);
		return;
	}
	if (action && task_id && (!strcmp(task_id, "validation") || !strcmp(task_id, "narrative"))) {
		control_stage(a, m, run, task_id);
		return;
	}
	cJSON *t = run && task_id ? pm_find_task(run, task_id) : NULL;
	char *why = NULL;
	if (!action || !t)
		why = xasprintf("no task %s in run %s", task_id ? task_id : "?", run_id ? run_id : "?");
	else if (!strcmp(jstr(run, "status"), "done") || !strcmp(jstr(run, "status"), "reporting"))
		why = xasprintf("run %s is %s: its tasks can no longer change", run_id,
				jstr(run, "status"));
	else if (to && !pm_researcher_name(to))
		why = xasprintf("%s is not a researcher", to);
	if (why) {
		decision(a, "control_refused", task_id, "%s from %s refused: %s", action ? action : "?",
			 m->from, why);
		free(why);
		return;
	}
	const char *st = jstr(t, "status"), *who = jstr(t, "assignee");
	char *reason = xasprintf("%s by %s", action, m->from);
	if (!strcmp(action, "reassign") || !strcmp(action, "retry") || !strcmp(action, "release")) {
		bool retry = !strcmp(action, "retry"), release = !strcmp(action, "release");
		if ((retry && strcmp(st, "failed") && strcmp(st, "cancelled")) ||
		    (release && strcmp(st, "held")) ||
		    (!retry && !release && (pm_terminal(st) || !strcmp(st, "held")))) {
			decision(a, "control_refused", task_id, "%s of %s refused: the task is %s", action,
				 task_id, st);
			free(reason);
			return;
		}
		/* A copy: assign() below replaces (frees) the task's "assignee",
		 * which who points into; dest must not borrow it. */
		char from[MSG_AGENT_MAX + 1];
		util_strlcpy(from, who ? who : "", sizeof(from));
		const char *dest = to ? to : release ? from : pm_other_researcher(from);
		if (!retry && !release)
			pm_cancel_current(a, run, t);
		pm_add_failure(run, t, retry ? "retried" : release ? "released" : "reassigned", from, dest,
			    reason);
		pm_task_enqueue(a, run, t, dest);
		decision(a, action, task_id, "%s: %s from %s to %s", reason, task_id, from, dest);
		save(a);
		pm_dispatch(a);
	} else if (!strcmp(action, "cancel") || !strcmp(action, "hold")) {
		bool cancel = !strcmp(action, "cancel");
		if (pm_terminal(st) || (!cancel && !strcmp(st, "held"))) {
			decision(a, "control_refused", task_id, "%s of %s refused: the task is %s", action,
				 task_id, st);
			free(reason);
			return;
		}
		pm_cancel_current(a, run, t);
		jset_str(t, "status", cancel ? "cancelled" : "held");
		jset_num(t, "deadline_ns", 0);
		if (cancel)
			pm_add_failure(run, t, "cancelled", who, NULL, reason);
		decision(a, action, task_id, "%s: %s", reason, task_id);
		save(a);
		if (cancel)
			pm_maybe_validate(a, run);
	} else if (!strcmp(action, "approve_budget") || !strcmp(action, "skip_llm")) {
		bool skip = !strcmp(action, "skip_llm");
		if (strcmp(st, "awaiting_approval")) {
			decision(a, "control_refused", task_id, "%s of %s refused: the task "
				 "is %s, not awaiting approval", action, task_id, st);
			free(reason);
			return;
		}
		cJSON *ac = wf_control_content(action, jstr(run, "run_id"), task_id, NULL, NULL);
		cJSON_ReplaceItemInObject(ac, "task_type",
					  cJSON_CreateString(skip ? LLM_TASK_SKIP : LLM_TASK_APPROVE));
		cJSON_AddStringToObject(ac, "approve_id", jstr(t, "current"));
		const cJSON *xt = cJSON_GetObjectItem(c, "extra_tokens");
		const cJSON *xc = cJSON_GetObjectItem(c, "extra_cost_usd");
		if (cJSON_IsNumber(xt) && xt->valuedouble >= 0)
			cJSON_AddNumberToObject(ac, "extra_tokens", xt->valuedouble);
		if (cJSON_IsNumber(xc) && xc->valuedouble >= 0)
			cJSON_AddNumberToObject(ac, "extra_cost_usd", xc->valuedouble);
		jset_str(t, "status", "accepted");
		jset_num(t, "deadline_ns", (double)(util_now_ns() + a->env->task_timeout_s * NS));
		cJSON_DeleteItemFromObjectCaseSensitive(t, "paused_because");
		if (skip) {
			cJSON_DeleteItemFromObjectCaseSensitive(ac, "extra_tokens");
			cJSON_DeleteItemFromObjectCaseSensitive(ac, "extra_cost_usd");
		}
		decision(a, action, task_id, "%s: %s %s on %s%s", reason, task_id,
			 skip ? "goes on without the model's analysis" : "resumes", who ? who : "?",
			 !skip && cJSON_IsNumber(xt) ? " with extra tokens" : "");
		save(a);
		agent_send(a, who, MSG_TASK_ASSIGNMENT, ac, NULL, jstr(t, "current"), task_id,
			   PRIO_URGENT, NULL, NULL);
	} else if (!strcmp(action, "priority")) {
		const char *p = jstr(c, "priority");
		if (!p || msg_priority_from_name(p) < 0) {
			decision(a, "control_refused", task_id, "priority %s refused: not one of urgent, high, "
				 "normal, low", p ? p : "?");
		} else {
			jset_str(t, "priority", p);
			decision(a, "priority", task_id, "%s: %s now %s", reason, task_id, p);
			save(a);
		}
	} else {
		decision(a, "control_refused", task_id, "unknown action %s from %s", action, m->from);
	}
	free(reason);
	pm_send_draft(a, run, false);
}

/* Handles an operator control and answers its sender: a task_acceptance
 * correlated to it (reply_to its id), "accepted" when applied, "rejected"
 * with the reason when refused or failed; "outcome" (applied, refused,
 * failed) and "detail" say what happened (man/madf-messages.5). */
void pm_control_answer(struct agent *a, const struct msg *m)
{
	const char *action = jstr(m->content, "action");
	pm_ctl.active = true;
	util_strlcpy(pm_ctl.action, action ? action : "?", sizeof(pm_ctl.action));
	on_control(a, m);
	pm_ctl.active = false;
	const char *outcome = pm_ctl.failed ? "failed" : !pm_ctl.text || pm_ctl.refused ? "refused" :
			      "applied";
	const char *detail = pm_ctl.failed ? pm_ctl.failed : pm_ctl.text ? pm_ctl.text : "no outcome recorded";
	const char *why = strstr(detail, " refused: ");
	if (pm_ctl.refused && why)
		detail = why + 10;
	wf_control_answer(a, m, outcome, detail);
	free(pm_ctl.text);
	free(pm_ctl.failed);
	pm_ctl.text = pm_ctl.failed = NULL;
	pm_ctl.refused = false;
}
