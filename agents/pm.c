/* The product_manager: orchestrates a weekly run. It splits the work per
 * pair and focus, assigns market tasks to research_agent_1 and news tasks to
 * research_agent_2 (through the dispatch windows of agents/pm_dispatch.c:
 * tasks past a researcher's capacity wait queued), tracks acceptance,
 * progress, results and deadlines, reassigns a task to the other researcher
 * on error, rejection or a missed deadline (a rejection for capacity
 * requeues it; a permanent error fails it at once), detects conflicts, asks
 * the validator, and has the report written (the operator's controls are
 * agents/pm_control.c). Its whole view of a run lives
 * in its state file (the run snapshot of agents/report.h), saved before
 * anything it sends, so a run resumes from the state file and the bus. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/learning.h"
#include "agents/llm_agent.h"
#include "agents/market.h"
#include "agents/pm_dispatch.h"
#include "agents/pm_notify.h"
#include "agents/pm_priv.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define NS 1000000000LL
#define MAX_ATTEMPTS 3

static void iso(int64_t ns, char *buf, size_t size)
{
	util_iso8601(ns, buf, size);
}

/* Shared with the dispatch (agents/pm_dispatch.c). */
#define save(a) pm_save(a)
#define decision(...) pm_decision(__VA_ARGS__)
#define index_add(...) pm_index_add(__VA_ARGS__)

/* The run's phase (its "status") and since when ("status_since", for the
 * run-health line of the console and madf runs). */
static void set_phase(cJSON *run, const char *status)
{
	char now[40];
	iso(util_now_ns(), now, sizeof(now));
	jset_str(run, "status", status);
	jset_str(run, "status_since", now);
}

cJSON *pm_runs(struct agent *a)
{
	return jobj(a->state, "runs");
}

/* assignment (or request) message id -> {"run", "task"} */
static cJSON *index_of(struct agent *a)
{
	return jobj(a->state, "index");
}

cJSON *pm_find_task(cJSON *run, const char *task_id)
{
	cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (!strcmp(jstr(t, "task_id"), task_id))
			return t;
	return NULL;
}

static void note_message(cJSON *run, const struct msg *m)
{
	cJSON *ms = jobj(run, "messages");
	if (cJSON_GetObjectItem(ms, m->id))
		return;
	cJSON *o = cJSON_AddObjectToObject(ms, m->id);
	cJSON_AddStringToObject(o, "from", m->from);
	cJSON_AddStringToObject(o, "type", msg_type_name(m->type));
	cJSON_AddStringToObject(o, "timestamp", m->timestamp);
}

const char *pm_other_researcher(const char *agent)
{
	return strcmp(agent, "research_agent_1") ? "research_agent_1" : "research_agent_2";
}

/* The researcher for a kind of task: the specialist unless the learning
 * system says it fails that kind of task and the other does better. */
const char *pm_choose(struct agent *a, const char *kind)
{
	const char *first = !strcmp(kind, "market") ? "research_agent_1" : "research_agent_2";
	const char *second = pm_other_researcher(first);
	double r1 = learning_error_rate(a->env->log_dir, first, kind);
	double r2 = learning_error_rate(a->env->log_dir, second, kind);
	if (r1 >= 0.5 && (r2 < 0 || r2 < r1)) {
		decision(a, "route_by_learning", NULL,
			 "%s tasks to %s: the learning system reports %s fails %.0f%% of them",
			 kind, second, first, r1 * 100);
		return second;
	}
	return first;
}

void pm_add_failure(cJSON *run, const cJSON *t, const char *what, const char *from,
		    const char *to, const char *reason)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "task_id", jstr(t, "task_id") ? jstr(t, "task_id") : "validation");
	cJSON_AddStringToObject(f, "kind", jstr(t, "kind") ? jstr(t, "kind") : "validation");
	if (jstr(t, "pair"))
		cJSON_AddStringToObject(f, "pair", jstr(t, "pair"));
	cJSON_AddStringToObject(f, "what", what);
	if (from)
		cJSON_AddStringToObject(f, "from", from);
	if (to)
		cJSON_AddStringToObject(f, "to", to);
	cJSON_AddStringToObject(f, "reason", reason);
	char at[40];
	iso(util_now_ns(), at, sizeof(at));
	cJSON_AddStringToObject(f, "at", at);
	cJSON_AddItemToArray(jarr(run, "failures"), f);
}

/* Error, rejection or missed deadline: to the other researcher, or failed
 * after MAX_ATTEMPTS. */
static void reassign(struct agent *a, cJSON *run, cJSON *t, const char *reason)
{
	const char *from = jstr(t, "assignee");
	char fromc[MSG_AGENT_MAX + 1];
	util_strlcpy(fromc, from ? from : "", sizeof(fromc));
	cJSON *lf = cJSON_CreateObject();
	cJSON_AddStringToObject(lf, "error_type", "task_failed");
	cJSON_AddStringToObject(lf, "task_kind", jstr(t, "kind"));
	/* The assignment's id, as the researcher logs it: one failure is
	 * counted once by the learning system. */
	cJSON_AddStringToObject(lf, "task_id", jstr(t, "current") ? jstr(t, "current") : "");
	cJSON_AddStringToObject(lf, "logical_task_id", jstr(t, "task_id"));
	cJSON_AddStringToObject(lf, "agent", fromc);
	log_write(a->log, LOG_ERRORS, LOG_WARN, "task_failed", lf, "%s on %s: %s",
		  jstr(t, "task_id"), fromc, reason);
	cJSON_Delete(lf);
	if (jnum(t, "attempts", 1) >= MAX_ATTEMPTS) {
		jset_str(t, "status", "failed");
		pm_add_failure(run, t, "failed", fromc, NULL, reason);
		decision(a, "task_failed", jstr(t, "task_id"), "%s failed for good after %d attempts: %s",
			 jstr(t, "task_id"), MAX_ATTEMPTS, reason);
		save(a);
		pm_maybe_validate(a, run);
		return;
	}
	const char *to = pm_other_researcher(fromc);
	pm_add_failure(run, t, "reassigned", fromc, to, reason);
	pm_task_enqueue(a, run, t, to);
	decision(a, "reassign", jstr(t, "task_id"), "%s reassigned from %s to %s: %s",
		 jstr(t, "task_id"), fromc, to, reason);
	save(a);
	pm_dispatch(a);
	pm_send_draft(a, run, false);
}

/* A permanent error (the data cannot price the pair): failed at once with
 * its reason, neither retried nor reassigned; the report names it. */
static void fail_now(struct agent *a, cJSON *run, cJSON *t, const char *from, const char *reason)
{
	jset_str(t, "status", "failed");
	jset_num(t, "deadline_ns", 0);
	pm_add_failure(run, t, "failed", from, NULL, reason);
	decision(a, "task_failed", jstr(t, "task_id"), "%s failed at once (%s: permanent, not "
		 "retried): %s", jstr(t, "task_id"), from, reason);
	save(a);
	pm_send_draft(a, run, false);
	pm_maybe_validate(a, run);
}

bool pm_terminal(const char *status)
{
	return !strcmp(status, "done") || !strcmp(status, "failed") ||
	       !strcmp(status, "cancelled");
}

static bool all_terminal(const cJSON *run)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (!pm_terminal(jstr(t, "status")))
			return false;
	return true;
}

#define DRAFT_EVERY_NS (300LL * 1000000)

/* The last draft sent (per process: drafts are a live view, not state). */
static _Thread_local int64_t last_draft_ns;
/* An advisory change (an acceptance) waits for the tick's save. */
static _Thread_local bool state_dirty;

void pm_send_draft(struct agent *a, cJSON *run, bool final)
{
	if (!final) {
		/* At most one draft every 300 ms; the tick sends one left due. */
		int64_t now = util_mono_ns();
		if (now - last_draft_ns < DRAFT_EVERY_NS) {
			cJSON_DeleteItemFromObjectCaseSensitive(run, "draft_due");
			cJSON_AddTrueToObject(run, "draft_due");
			return;
		}
		last_draft_ns = now;
		cJSON_DeleteItemFromObjectCaseSensitive(run, "draft_due");
	}
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_type", final ? WF_TASK_REPORT_FINAL : WF_TASK_REPORT_DRAFT);
	cJSON_AddStringToObject(c, "focus_area", "Asia/G10");
	cJSON_AddItemToObject(c, "target_pairs", cJSON_Duplicate(cJSON_GetObjectItem(run, "pairs"), 1));
	const cJSON *w = cJSON_GetObjectItem(run, "window");
	char *tf = xasprintf("%s/%s", jstr(w, "start"), jstr(w, "end"));
	cJSON_AddStringToObject(c, "timeframe", tf);
	free(tf);
	cJSON_AddArrayToObject(c, "data_sources");
	char dl[40];
	iso(util_now_ns() + a->env->task_timeout_s * NS, dl, sizeof(dl));
	cJSON_AddStringToObject(c, "deadline", dl);
	cJSON_AddStringToObject(c, "output_format", "markdown");
	cJSON *snap = cJSON_Duplicate(run, 1);
	if (final)
		jset_str(snap, "status", "final");
	cJSON_AddItemToObject(c, "run", snap);
	char id[MSG_ID_MAX + 1] = "";
	if (final) {
		cJSON *rp = jobj(run, "report");
		if (!jstr(rp, "request_id")) {
			msg_new_id(a->name, id);
			jset_str(rp, "request_id", id);
			jset_str(rp, "status", "requested");
			jset_num(rp, "deadline_ns", (double)(util_now_ns() + a->env->task_timeout_s * NS));
			index_add(a, id, jstr(run, "run_id"), "report");
			save(a);
		}
		util_strlcpy(id, jstr(rp, "request_id"), sizeof(id));
	}
	agent_send(a, "report_writer", MSG_TASK_ASSIGNMENT, c, final ? id : NULL, NULL,
		   jstr(run, "run_id"), final ? PRIO_HIGH : PRIO_LOW, NULL, NULL);
}

/* LLM mode: the orchestrator model writes the narrative (an executive
 * summary from the compiled findings), streamed into the draft. */
struct narr {
	struct agent *a;
	cJSON *run;
	struct sbuf text;
	int64_t last_ns;
};

#define NARRATIVE_DRAFT_NS (500LL * 1000000)

static void narr_text(void *ctx, const char *text, size_t len)
{
	struct narr *n = ctx;
	sbuf_add(&n->text, text, len);
	int64_t now = util_mono_ns();
	if (now - n->last_ns < NARRATIVE_DRAFT_NS)
		return;
	n->last_ns = now;
	jset_str(jobj(n->run, "narrative"), "text", n->text.data);
	pm_send_draft(n->a, n->run, false);
}

bool pm_status_is(const cJSON *o, const char *status)
{
	return jstr_is(o, "status", status);
}

/* Writes the narrative; false when it waits for the operator's approval
 * of more budget (its one model call would pass the task's cap: the call
 * is not made). Approved, the step starts again with the usage so far and
 * the extra budget; skipped, the report goes without it. */
static bool narrative(struct agent *a, cJSON *run)
{
	const struct llm_agent_settings *s = a->env->llm;
	if (!s)
		return true; /* deterministic mode: no narrative section */
	cJSON *nv = jobj(run, "narrative");
	if (pm_status_is(nv, "done") || pm_status_is(nv, "skipped"))
		return true;
	if (pm_status_is(nv, "awaiting_approval"))
		return false;
	struct sbuf p;
	sbuf_init(&p);
	const cJSON *w = cJSON_GetObjectItem(run, "window");
	sbuf_addf(&p, "Write the executive summary (two short paragraphs, at most 150 words) of "
		  "the weekly Asia/G10 FX report %s for the window %s to %s, from these compiled "
		  "findings only. Quote figures exactly as given; never invent one.\n",
		  jstr(run, "run_id"), jstr(w, "start"), jstr(w, "end"));
	const cJSON *mk;
	cJSON_ArrayForEach(mk, cJSON_GetObjectItem(run, "market"))
		sbuf_addf(&p, "- %s: %.6g on %s to %.6g on %s, %+.2f%%\n", mk->string,
			  jnum(cJSON_GetObjectItem(mk, "start"), "close", NAN),
			  jstr(cJSON_GetObjectItem(mk, "start"), "date"),
			  jnum(cJSON_GetObjectItem(mk, "end"), "close", NAN),
			  jstr(cJSON_GetObjectItem(mk, "end"), "date"), jnum(mk, "change_pct", NAN));
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "findings"))
		sbuf_addf(&p, "- [%s, %s] %s\n", jstr(f, "id"), jstr(f, "verdict"), jstr(f, "text"));
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (jstr(t, "analysis") && *jstr(t, "analysis"))
			sbuf_addf(&p, "- analysis of %s by %s: %s\n", jstr(t, "task_id"),
				  jstr(t, "done_by") ? jstr(t, "done_by") : "?", jstr(t, "analysis"));
	char *system = xasprintf("You are %s, the orchestrator of madf's weekly Asia/G10 FX "
				 "report. You write for portfolio managers: plain, exact, brief.",
				 a->name);
	char *tid = xasprintf("%s-narrative", jstr(run, "run_id"));
	jset_str(nv, "status", "streaming");
	jset_str(nv, "task_id", tid);
	jset_str(nv, "provider", s->provider_name);
	jset_str(nv, "model", s->model_orchestrator);
	jset_str(nv, "text", "");
	cJSON_DeleteItemFromObjectCaseSensitive(nv, "paused_because");
	struct narr n = { .a = a, .run = run, .last_ns = util_mono_ns() };
	sbuf_init(&n.text);
	sbuf_addstr(&n.text, "");
	struct llm_agent_task lt = { .task_id = tid, .label = "narrative",
			       .model = s->model_orchestrator, .system = system,
			       .prompt = p.data, .on_text = narr_text, .ctx = &n,
			       .estimate_input = true,
			       .extra_tokens = (long)jnum(nv, "extra_tokens", 0),
			       .extra_cost = jnum(nv, "extra_cost_usd", 0) };
	llm_agent_usage_from_json(cJSON_GetObjectItem(nv, "usage"), &lt.used);
	decision(a, "narrative", NULL, "the orchestrator model %s writes the narrative of %s",
		 s->model_orchestrator, jstr(run, "run_id"));
	enum llm_agent_outcome o = llm_agent_task_run(a, &lt);
	bool paused = o == LLM_RUN_PAUSED && !s->continue_at_limit;
	jset_str(nv, "text", o == LLM_RUN_DONE && lt.text ? lt.text : n.text.data);
	jset_str(nv, "status", o == LLM_RUN_DONE ? "done" : paused ? "awaiting_approval" :
		 o == LLM_RUN_PAUSED ? "skipped_budget" : "failed");
	cJSON_DeleteItemFromObjectCaseSensitive(nv, "usage");
	cJSON_AddItemToObject(nv, "usage", llm_agent_usage_json(&lt.used));
	if (paused) {
		jset_str(nv, "paused_because", lt.error ? lt.error : "budget reached");
		decision(a, "awaiting_approval", "narrative",
			 "the narrative of %s paused: %s; approve_budget starts it again with more "
			 "budget, cancel or skip_llm finishes the report without it",
			 jstr(run, "run_id"), lt.error ? lt.error : "budget reached");
	} else if (o != LLM_RUN_DONE) {
		char *warn = xasprintf("the narrative is %s: %s",
				       o == LLM_RUN_PAUSED ? "skipped" : "incomplete",
				       lt.error ? lt.error : "no answer");
		cJSON_AddItemToArray(jarr(run, "warnings"), cJSON_CreateString(warn));
		free(warn);
	}
	llm_agent_task_release(&lt);
	sbuf_release(&n.text);
	sbuf_release(&p);
	free(system);
	free(tid);
	save(a);
	return !paused;
}

/* The narrative (LLM mode), then the final report; a paused narrative
 * holds the report back (the draft says it waits). */
void pm_finish_report(struct agent *a, cJSON *run)
{
	if (narrative(a, run))
		pm_send_draft(a, run, true);
	else
		pm_send_draft(a, run, false);
}

static void compile(struct agent *a, cJSON *run)
{
	set_phase(run, "reporting");
	decision(a, "compile_report", NULL, "compiling the report of %s", jstr(run, "run_id"));
	save(a);
	pm_finish_report(a, run);
}

static void pair_code(const char *pair, char *buf, size_t size)
{
	size_t k = 0;
	for (const char *p = pair; *p && k + 1 < size; p++)
		if (*p != '/')
			buf[k++] = *p;
	buf[k] = '\0';
}

/* Conflicts between the two researchers' results of one pair: the price
 * change the news agent checked against the market agent's figure, and the
 * news tone against the direction of the move. */
static void detect_conflicts(struct agent *a, cJSON *run)
{
	cJSON *findings = jarr(run, "findings");
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "pairs")) {
		const char *pair = p->valuestring;
		const cJSON *mk = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "market"), pair);
		const cJSON *pc = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "price_checks"), pair);
		if (!mk || !pc)
			continue;
		double m = jnum(mk, "change_pct", NAN), n = jnum(pc, "change_pct", NAN);
		char code[16], id[48];
		pair_code(pair, code, sizeof(code));
		char *text = NULL;
		if (isfinite(m) && isfinite(n) && fabs(m - n) > 0.01) {
			text = xasprintf("%s: the market agent measured %+.2f%%, the news agent's price "
					 "check %+.2f%%", pair, m, n);
			snprintf(id, sizeof(id), "%s-C1", code);
		} else if (cJSON_IsFalse(cJSON_GetObjectItem(pc, "consistent"))) {
			text = xasprintf("%s: the news tone (%+.2f) points against the price move "
					 "(%+.2f%%)", pair, jnum(pc, "tone", 0), m);
			snprintf(id, sizeof(id), "%s-C2", code);
		}
		if (!text)
			continue;
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "id", id);
		cJSON_AddStringToObject(f, "agent", a->name);
		cJSON_AddStringToObject(f, "kind", "conflict");
		cJSON_AddStringToObject(f, "pair", pair);
		cJSON_AddStringToObject(f, "text", text);
		cJSON *s = cJSON_AddArrayToObject(f, "sources");
		if (jstr(mk, "message_id"))
			cJSON_AddItemToArray(s, cJSON_CreateString(jstr(mk, "message_id")));
		if (jstr(pc, "message_id"))
			cJSON_AddItemToArray(s, cJSON_CreateString(jstr(pc, "message_id")));
		cJSON_AddStringToObject(f, "verdict", "pending");
		cJSON_AddItemToArray(findings, f);
		cJSON *lf = cJSON_CreateObject();
		cJSON_AddStringToObject(lf, "pair", pair);
		log_write(a->log, LOG_CONFLICTS, LOG_WARN, "conflict", lf, "%s", text);
		cJSON_Delete(lf);
		free(text);
	}
}

/* The validation checks every finding of the run against independent
 * evidence (a scan of the news around each act), more than one research
 * task does: its deadline is the task timeout, at least
 * PM_VALIDATION_MIN_S, and it moves on while the validator says it is
 * still checking (task_progress "in_progress"). */
#define PM_VALIDATION_MIN_S 20
int64_t pm_validation_deadline(const struct agent *a)
{
	int64_t s = a->env->task_timeout_s > PM_VALIDATION_MIN_S ? a->env->task_timeout_s :
								     PM_VALIDATION_MIN_S;
	return util_now_ns() + s * NS;
}

void pm_maybe_validate(struct agent *a, cJSON *run)
{
	cJSON *v = jobj(run, "validation");
	if (!all_terminal(run) || jstr(v, "status"))
		return;
	detect_conflicts(a, run);
	cJSON *findings = cJSON_GetObjectItem(run, "findings");
	if (cJSON_GetArraySize(findings) == 0) {
		jset_str(v, "status", "failed");
		jset_str(v, "reason", "nothing to validate: every research task failed");
		compile(a, run);
		return;
	}
	char id[MSG_ID_MAX + 1];
	msg_new_id(a->name, id);
	jset_str(v, "status", "requested");
	jset_str(v, "request_id", id);
	jset_num(v, "deadline_ns", (double)pm_validation_deadline(a));
	index_add(a, id, jstr(run, "run_id"), "validation");
	set_phase(run, "validating");
	save(a);
	cJSON *c = cJSON_CreateObject();
	cJSON *rr = cJSON_AddArrayToObject(c, "research_results_to_validate");
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (jstr(t, "result_message_id"))
			cJSON_AddItemToArray(rr, cJSON_CreateString(jstr(t, "result_message_id")));
	if (cJSON_GetArraySize(rr) == 0)
		cJSON_AddItemToArray(rr, cJSON_CreateString(id));
	cJSON_AddStringToObject(c, "validation_type", "cross_reference");
	cJSON *vs = cJSON_AddArrayToObject(c, "validation_sources");
	const cJSON *src = cJSON_GetObjectItem(run, "sources");
	cJSON_AddItemToArray(vs, cJSON_CreateString(jstr(src, "news")));
	cJSON_AddItemToArray(vs, cJSON_CreateString(jstr(src, "market")));
	cJSON_AddItemToObject(c, "priority_areas", cJSON_Duplicate(cJSON_GetObjectItem(run, "pairs"), 1));
	char dl[40];
	iso((int64_t)jnum(v, "deadline_ns", 0), dl, sizeof(dl));
	cJSON_AddStringToObject(c, "deadline", dl);
	cJSON_AddItemToObject(c, "findings", cJSON_Duplicate(findings, 1));
	cJSON_AddStringToObject(c, "run_id", jstr(run, "run_id"));
	decision(a, "validation_request", NULL, "asking validator_agent to check %d findings",
		 cJSON_GetArraySize(findings));
	agent_send(a, "validator_agent", MSG_VALIDATION_REQUEST, c, id, NULL, jstr(run, "run_id"),
		   PRIO_HIGH, NULL, NULL);
	pm_send_draft(a, run, false);
}

static void validation_failed(struct agent *a, cJSON *run, const char *reason)
{
	cJSON *v = jobj(run, "validation");
	jset_str(v, "status", "failed");
	jset_str(v, "reason", reason);
	pm_add_failure(run, v, "not_validated", "validator_agent", NULL, reason);
	cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "findings")) {
		jset_str(f, "verdict", "unverified");
		jset_str(f, "verdict_reason", "not validated");
	}
	cJSON_AddItemToArray(jarr(run, "warnings"),
			     cJSON_CreateString("the findings could not be validated"));
	decision(a, "validation_failed", NULL, "validation failed: %s", reason);
	compile(a, run);
}

/* ---- a new run, or the same one again ---------------------------------- */

static void start_run(struct agent *a, const struct msg *m, const char *run_id)
{
	const cJSON *c = m->content;
	cJSON *run = cJSON_AddObjectToObject(pm_runs(a), run_id);
	cJSON_AddStringToObject(run, "run_id", run_id);
	cJSON_AddStringToObject(run, "iso_week", jstr(c, "iso_week") ? jstr(c, "iso_week") : "");
	cJSON_AddStringToObject(run, "title", "Weekly Asia/G10 FX report");
	cJSON_AddStringToObject(run, "status", "researching");
	cJSON_AddStringToObject(run, "as_of", jstr(c, "as_of") ? jstr(c, "as_of") : m->timestamp);
	cJSON_AddStringToObject(run, "trigger", m->id);
	cJSON_AddStringToObject(run, "requested_by", m->from);
	char now[40];
	iso(util_now_ns(), now, sizeof(now));
	cJSON_AddStringToObject(run, "started_at", now);
	cJSON_AddStringToObject(run, "status_since", now);
	cJSON_AddItemToObject(run, "window", cJSON_Duplicate(cJSON_GetObjectItem(c, "window"), 1));
	cJSON_AddItemToObject(run, "pairs", cJSON_Duplicate(cJSON_GetObjectItem(c, "target_pairs"), 1));
	cJSON *src = cJSON_AddObjectToObject(run, "sources");
	cJSON_AddStringToObject(src, "market", a->env->market_source);
	cJSON_AddStringToObject(src, "news", a->env->news_source);
	cJSON_AddBoolToObject(src, "market_simulated", !strcmp(a->env->market_source, "sim"));
	cJSON_AddBoolToObject(src, "news_simulated", !strcmp(a->env->news_source, "sim"));
	cJSON_AddObjectToObject(run, "market");
	cJSON_AddArrayToObject(run, "events");
	cJSON_AddObjectToObject(run, "sentiment");
	cJSON_AddArrayToObject(run, "findings");
	cJSON_AddArrayToObject(run, "issues");
	cJSON_AddArrayToObject(run, "failures");
	cJSON_AddArrayToObject(run, "warnings");
	cJSON_AddObjectToObject(run, "messages");
	cJSON_AddObjectToObject(run, "validation");
	cJSON_AddItemToObject(run, "llm", llm_agent_settings_manifest(a->env->llm));
	cJSON *tasks = cJSON_AddArrayToObject(run, "tasks");
	static const char *const kinds[] = { "market", "news" };
	const char *who[2];
	for (int k = 0; k < 2; k++)
		who[k] = pm_choose(a, kinds[k]);
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(run, "pairs")) {
		for (int k = 0; k < 2; k++) {
			char code[16], tid[64];
			pair_code(p->valuestring, code, sizeof(code));
			snprintf(tid, sizeof(tid), "%s-%s", code, kinds[k]);
			cJSON *t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "task_id", tid);
			cJSON_AddStringToObject(t, "kind", kinds[k]);
			cJSON_AddStringToObject(t, "pair", p->valuestring);
			cJSON_AddItemToArray(tasks, t);
			pm_task_enqueue(a, run, t, who[k]);
		}
	}
	note_message(run, m);
	char *mode = llm_agent_settings_describe(a->env->llm);
	decision(a, "mode", NULL, "run %s in %s", run_id, mode);
	free(mode);
	decision(a, "run_started", NULL, "run %s: %d pairs, %d tasks, window %s..%s", run_id,
		 cJSON_GetArraySize(cJSON_GetObjectItem(run, "pairs")), cJSON_GetArraySize(tasks),
		 jstr(cJSON_GetObjectItem(run, "window"), "start"),
		 jstr(cJSON_GetObjectItem(run, "window"), "end"));
	save(a);
	pm_dispatch(a); /* what the windows take now; the rest waits, queued */
	pm_send_draft(a, run, false);
}

/* The run exists and is not done: the work in flight gets a fresh
 * deadline, assignments that never reached the bus are sent again. */
static void resume_run(struct agent *a, cJSON *run)
{
	int64_t dl = util_now_ns() + a->env->task_timeout_s * NS;
	int resent = 0;
	cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const char *s = jstr(t, "status");
		if (!strcmp(s, "done") || !strcmp(s, "failed") || !strcmp(s, "queued") ||
		    !jstr(t, "current") || !*jstr(t, "current"))
			continue; /* queued: pm_dispatch sends it */
		jset_num(t, "deadline_ns", (double)dl);
		struct bus_entry e;
		if (bus_find(a->bus, jstr(t, "current"), &e, NULL) == 0) {
			bus_entry_release(&e);
		} else {
			pm_send_assignment(a, run, t);
			resent++;
		}
	}
	cJSON *v = cJSON_GetObjectItem(run, "validation");
	if (jstr(v, "request_id") && !strcmp(jstr(v, "status"), "requested"))
		jset_num(v, "deadline_ns", (double)dl);
	cJSON *rp = cJSON_GetObjectItem(run, "report");
	if (rp && jstr(rp, "status") && !strcmp(jstr(rp, "status"), "requested")) {
		jset_num(rp, "deadline_ns", (double)dl);
		pm_send_draft(a, run, true);
	}
	decision(a, "run_resumed", NULL, "run %s resumed: %d assignments sent again",
		 jstr(run, "run_id"), resent);
	save(a);
	pm_maybe_validate(a, run);
}

/* ---- results -------------------------------------------------------------------- */

static void take_market(cJSON *run, const struct msg *m, const cJSON *raw, const char *pair)
{
	const cJSON *st = cJSON_GetObjectItem(raw, "stats");
	if (!cJSON_IsObject(st)) {
		char *w = xasprintf("%s: no market data in the window (%s)", pair, m->from);
		cJSON_AddItemToArray(jarr(run, "warnings"), cJSON_CreateString(w));
		free(w);
		return;
	}
	cJSON *mk = jobj(run, "market");
	cJSON_DeleteItemFromObjectCaseSensitive(mk, pair);
	cJSON *o = cJSON_Duplicate(st, 1);
	cJSON_AddStringToObject(o, "agent", m->from);
	cJSON_AddStringToObject(o, "message_id", m->id);
	cJSON_AddItemToObject(mk, pair, o);
}

/* Adds a result's events to the run's, one per bank, action and day across
 * all pairs: the news tasks of two pairs often report the same story. */
static void take_news(cJSON *run, const struct msg *m, const cJSON *raw, const char *pair)
{
	cJSON *events = jarr(run, "events");
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(raw, "events")) {
		cJSON *same = NULL, *x;
		cJSON_ArrayForEach(x, events)
			if (!strcmp(jstr(x, "bank"), jstr(e, "bank") ? jstr(e, "bank") : "") &&
			    !strcmp(jstr(x, "action"), jstr(e, "action") ? jstr(e, "action") : "") &&
			    !strcmp(jstr(x, "date"), jstr(e, "date") ? jstr(e, "date") : ""))
				same = x;
		if (!same) {
			same = cJSON_Duplicate(e, 1);
			char id[32];
			snprintf(id, sizeof(id), "E%d", cJSON_GetArraySize(events) + 1);
			cJSON_AddStringToObject(same, "id", id);
			cJSON_AddStringToObject(same, "agent", m->from);
			cJSON_AddStringToObject(same, "message_id", m->id);
			cJSON_AddArrayToObject(same, "pairs");
			cJSON_AddItemToArray(events, same);
		}
		cJSON *srcs = jarr(same, "sources");
		const cJSON *s;
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(e, "sources")) {
			bool have = false;
			const cJSON *y;
			cJSON_ArrayForEach(y, srcs)
				have = have || !strcmp(y->valuestring, s->valuestring);
			if (!have)
				cJSON_AddItemToArray(srcs, cJSON_CreateString(s->valuestring));
		}
		cJSON_AddItemToArray(jarr(same, "pairs"), cJSON_CreateString(pair));
	}
	cJSON *sent = jobj(run, "sentiment");
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(raw, "sentiment")) {
		if (cJSON_GetObjectItem(sent, s->string))
			continue; /* the first pair's reading of a currency stands */
		cJSON *o = cJSON_Duplicate(s, 1);
		cJSON_AddStringToObject(o, "agent", m->from);
		cJSON_AddStringToObject(o, "message_id", m->id);
		cJSON_AddItemToObject(sent, s->string, o);
	}
	const cJSON *pc = cJSON_GetObjectItem(raw, "price_check");
	if (pc) {
		cJSON *pcs = jobj(run, "price_checks");
		cJSON *o = cJSON_Duplicate(pc, 1);
		cJSON_AddStringToObject(o, "message_id", m->id);
		cJSON_DeleteItemFromObjectCaseSensitive(pcs, pair);
		cJSON_AddItemToObject(pcs, pair, o);
	}
}

static void on_result(struct agent *a, const struct msg *m, cJSON *run, cJSON *t)
{
	const cJSON *c = m->content;
	if (pm_terminal(jstr(t, "status")) || !strcmp(jstr(t, "status"), "held")) {
		decision(a, "duplicate_result", jstr(t, "task_id"),
			 "result %s from %s for %s ignored: the task is already %s", m->id, m->from,
			 jstr(t, "task_id"), jstr(t, "status"));
		return;
	}
	if (strcmp(jstr(t, "current") ? jstr(t, "current") : "", jstr(c, "task_id"))) {
		/* An earlier assignment's answer (a late researcher's, after
		 * the task went to another): the task is no longer its. */
		decision(a, "late_result", jstr(t, "task_id"),
			 "result %s from %s for %s ignored: it answers %s, no longer the task's "
			 "assignment (now %s, %s)", m->id, m->from, jstr(t, "task_id"),
			 jstr(c, "task_id"), jstr(t, "assignee") ? jstr(t, "assignee") : "?",
			 jstr(t, "status"));
		return;
	}
	const char *status = jstr(c, "status");
	if (status && !strcmp(status, "failed")) {
		reassign(a, run, t, "the researcher reported the task failed");
		return;
	}
	const cJSON *raw = cJSON_GetObjectItem(c, "raw_data");
	const char *pair = jstr(t, "pair");
	if (!strcmp(jstr(t, "kind"), "market"))
		take_market(run, m, raw, pair);
	else
		take_news(run, m, raw, pair);
	cJSON *findings = jarr(run, "findings");
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(raw, "findings")) {
		cJSON *o = cJSON_Duplicate(f, 1);
		cJSON_AddStringToObject(o, "agent", m->from);
		cJSON_AddStringToObject(o, "message_id", m->id);
		cJSON_AddStringToObject(o, "verdict", "pending");
		cJSON_AddItemToArray(findings, o);
	}
	const cJSON *w;
	cJSON_ArrayForEach(w, cJSON_GetObjectItem(c, "warnings"))
		if (cJSON_IsString(w))
			cJSON_AddItemToArray(jarr(run, "warnings"), cJSON_CreateString(w->valuestring));
	if (jstr(c, "analysis"))
		jset_str(t, "analysis", jstr(c, "analysis"));
	const cJSON *lu = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "llm"), "usage");
	if (lu) {
		cJSON_DeleteItemFromObjectCaseSensitive(t, "llm_usage");
		cJSON_AddItemToObject(t, "llm_usage", cJSON_Duplicate(lu, 1));
	}
	jset_str(t, "status", "done");
	jset_str(t, "result_message_id", m->id);
	jset_str(t, "done_by", m->from);
	jset_num(t, "progress", 100);
	note_message(run, m);
	decision(a, "task_done", jstr(t, "task_id"), "%s done by %s (%s)", jstr(t, "task_id"),
		 m->from, m->id);
	save(a);
	pm_send_draft(a, run, false);
	pm_maybe_validate(a, run);
}

static void on_validation(struct agent *a, const struct msg *m, cJSON *run)
{
	cJSON *v = jobj(run, "validation");
	if (strcmp(jstr(v, "status") ? jstr(v, "status") : "", "requested")) {
		decision(a, "late_validation", NULL, "validation %s ignored: validation is %s", m->id,
			 jstr(v, "status") ? jstr(v, "status") : "not requested");
		return;
	}
	const cJSON *vd;
	cJSON_ArrayForEach(vd, cJSON_GetObjectItem(m->content, "verdicts")) {
		cJSON *f;
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "findings")) {
			if (strcmp(jstr(f, "id"), jstr(vd, "finding_id") ? jstr(vd, "finding_id") : ""))
				continue;
			jset_str(f, "verdict", jstr(vd, "verdict"));
			jset_str(f, "verdict_reason", jstr(vd, "reason"));
		}
	}
	cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "findings"))
		if (!strcmp(jstr(f, "verdict"), "pending")) {
			jset_str(f, "verdict", "unverified");
			jset_str(f, "verdict_reason", "the validator gave no verdict");
		}
	cJSON_DeleteItemFromObjectCaseSensitive(run, "issues");
	cJSON_AddItemToObject(run, "issues",
			      cJSON_Duplicate(cJSON_GetObjectItem(m->content, "issues_found"), 1));
	const cJSON *rv = cJSON_GetObjectItem(m->content, "llm_review");
	if (cJSON_IsObject(rv)) {
		cJSON_DeleteItemFromObjectCaseSensitive(v, "llm_review");
		cJSON_AddItemToObject(v, "llm_review", cJSON_Duplicate(rv, 1));
		const char *o = jstr(rv, "outcome");
		if (o && !strncmp(o, "skipped", 7)) {
			char *w = xasprintf("the validator's LLM review is skipped (%s): the verdicts "
					    "are the deterministic checks' alone", jstr(rv, "error") ?
					    jstr(rv, "error") : "budget reached");
			cJSON_AddItemToArray(jarr(run, "warnings"), cJSON_CreateString(w));
			free(w);
		}
	}
	jset_str(v, "status", "done");
	jset_str(v, "message_id", m->id);
	jset_num(v, "overall_confidence", jnum(m->content, "overall_confidence", 0));
	note_message(run, m);
	decision(a, "validated", NULL, "validation %s: confidence %.2f, %d issues", m->id,
		 jnum(m->content, "overall_confidence", 0),
		 cJSON_GetArraySize(cJSON_GetObjectItem(m->content, "issues_found")));
	compile(a, run);
}

/* A done run: its bulk goes to its archive (wf_archive_run), its message
 * ids out of the index, so that every later save stays as small. */
static void archive(struct agent *a, cJSON *run)
{
	char *err = NULL;
	if (wf_archive_run(a->env->data_dir, run, a->env->bcfg.durable, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "archive_failed", NULL,
			  "run %s stays whole in the state: %s", jstr(run, "run_id"), err);
		free(err);
		return;
	}
	cJSON *ix = index_of(a), *e = ix->child;
	while (e) {
		cJSON *next = e->next;
		if (!strcmp(jstr(e, "run") ? jstr(e, "run") : "", jstr(run, "run_id")))
			cJSON_Delete(cJSON_DetachItemViaPointer(ix, e));
		e = next;
	}
}

static void on_report(struct agent *a, const struct msg *m, cJSON *run)
{
	cJSON *rp = jobj(run, "report");
	const cJSON *raw = cJSON_GetObjectItem(m->content, "raw_data");
	jset_str(rp, "status", "done");
	jset_str(rp, "md", jstr(raw, "report_md"));
	jset_str(rp, "json", jstr(raw, "report_json"));
	set_phase(run, "done");
	char now[40];
	iso(util_now_ns(), now, sizeof(now));
	jset_str(run, "finished_at", now);
	note_message(run, m);
	decision(a, "run_done", NULL, "run %s done: %s", jstr(run, "run_id"), jstr(raw, "report_md"));
	pm_notify_report(a, run, m);
	archive(a, run);
	save(a);
	char *err = NULL;
	/* every agent's log, wherever it ran: on NATS, copied from the bus */
	char *root = bus_log_root(a->bus, a->env->data_dir, a->env->log_dir, &err);
	if (err) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "learning_logs", NULL,
			  "the logs on the bus could not all be read: %s", err);
		free(err);
		err = NULL;
	}
	if (learning_aggregate_from(root, a->env->log_dir, util_now_ns(), &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "learning_failed", NULL, "%s", err);
		free(err);
	}
	free(root);
}

/* ---- dispatch ---------------------------------------------------------------- */

static bool lookup(struct agent *a, const char *msg_id, cJSON **run, cJSON **task,
		   const char **what)
{
	const cJSON *ix = cJSON_GetObjectItem(index_of(a), msg_id ? msg_id : "");
	if (!ix)
		return false;
	*run = cJSON_GetObjectItem(pm_runs(a), jstr(ix, "run"));
	if (!*run)
		return false;
	*what = jstr(ix, "task");
	*task = pm_find_task(*run, *what);
	return true;
}

static void on_agent_status(struct agent *a, const struct msg *m)
{
	cJSON *ag = jobj(jobj(a->state, "agents"), m->from);
	cJSON *h = cJSON_Duplicate(m->content, 1);
	cJSON_AddStringToObject(h, "at", m->timestamp);
	cJSON_DeleteItemFromObjectCaseSensitive(ag, m->type == MSG_HEARTBEAT ? "heartbeat" : "status");
	cJSON_AddItemToObject(ag, m->type == MSG_HEARTBEAT ? "heartbeat" : "status", h);
	pm_note_agent(a, m);
}

/* A task (or the validation) at its LLM budget, as its task_progress says:
 * it waits for the operator with no deadline; its usage so far kept. */
static void mark_paused(cJSON *run, cJSON *t, const struct msg *m)
{
	jset_str(t, "status", "awaiting_approval");
	jset_num(t, "deadline_ns", 0);
	jset_str(t, "paused_because", jstr(m->content, "current_step"));
	const cJSON *lu = cJSON_GetObjectItem(m->content, "llm_usage");
	if (lu) {
		cJSON_DeleteItemFromObjectCaseSensitive(t, "llm_usage");
		cJSON_AddItemToObject(t, "llm_usage", cJSON_Duplicate(lu, 1));
	}
	note_message(run, m);
}

static int pm_handle(struct agent *a, const struct msg *m, char **err)
{
	cJSON *run = NULL, *t = NULL;
	const char *what = NULL;
	switch (m->type) {
	case MSG_HEARTBEAT:
	case MSG_SYSTEM_STATUS:
		on_agent_status(a, m);
		return AGENT_DONE;
	case MSG_TASK_ASSIGNMENT: {
		const char *kind = jstr(m->content, "task_type");
		const char *run_id = jstr(m->content, "run_id");
		if (kind && !strcmp(kind, WF_TASK_CONTROL)) {
			pm_control_answer(a, m);
			return AGENT_DONE;
		}
		if (!kind || strcmp(kind, WF_TASK_WEEKLY) || !run_id || !util_valid_agent_name(run_id)) {
			err_set(err, "product_manager takes task_type %s with a run_id", WF_TASK_WEEKLY);
			return AGENT_REJECT;
		}
		cJSON *r = cJSON_GetObjectItem(pm_runs(a), run_id);
		if (!r)
			start_run(a, m, run_id);
		else if (strcmp(jstr(r, "status"), "done"))
			resume_run(a, r);
		else
			decision(a, "run_already_done", NULL, "run %s is done already", run_id);
		/* followed from another host: its progress and report go there */
		pm_notify_trigger(a, cJSON_GetObjectItem(pm_runs(a), run_id), m);
		state_dirty = true;
		return AGENT_DONE;
	}
	case MSG_TASK_ACCEPTANCE:
		if (!lookup(a, jstr(m->content, "task_id"), &run, &t, &what))
			return AGENT_DONE;
		note_message(run, m);
		if (!t) {
			save(a);
			return AGENT_DONE; /* the validator or the writer: nothing to track */
		}
		if (strcmp(jstr(t, "current"), jstr(m->content, "task_id")))
			return AGENT_DONE; /* about an earlier assignment */
		if (!strcmp(jstr(m->content, "status"), "rejected")) {
			char *why = xasprintf("rejected by %s: %s", m->from,
					      jstr(m->content, "rejection_reason"));
			if (pm_rejected_for_capacity(m->content) && pm_researcher_name(m->from))
				pm_task_requeue(a, run, t, m->from, why); /* backpressure */
			else
				reassign(a, run, t, why);
			free(why);
		} else if (!strcmp(jstr(t, "status"), "assigned")) {
			/* Advisory, as progress is: saved once for all the
			 * acceptances of a batch, at the next tick. */
			jset_str(t, "status", "accepted");
			state_dirty = true;
		}
		return AGENT_DONE;
	case MSG_TASK_PROGRESS:
		if (lookup(a, jstr(m->content, "task_id"), &run, &t, &what) && !t && what &&
		    !strcmp(what, "validation")) {
			cJSON *v = jobj(run, "validation");
			if (pm_status_is(v, "requested") && pm_status_is(m->content, "in_progress") &&
			    !strcmp(jstr(v, "request_id") ? jstr(v, "request_id") : "",
				    jstr(m->content, "task_id"))) {
				/* still checking: its deadline moves on */
				jset_num(v, "deadline_ns", (double)pm_validation_deadline(a));
				state_dirty = true;
			}
			if (pm_status_is(v, "requested") && pm_status_is(m->content, "awaiting_approval") &&
			    !strcmp(jstr(v, "request_id") ? jstr(v, "request_id") : "",
				    jstr(m->content, "task_id"))) {
				/* The validator's LLM review is at its budget: the
				 * validation waits for the operator, with no deadline. */
				mark_paused(run, v, m);
				decision(a, "awaiting_approval", "validation",
					 "the validation of %s paused by %s: %s; approve_budget resumes "
					 "its review, cancel or skip_llm sends the deterministic verdicts",
					 jstr(run, "run_id"), m->from, jstr(m->content, "current_step"));
				save(a);
				pm_send_draft(a, run, false);
			}
			return AGENT_DONE;
		}
		if (lookup(a, jstr(m->content, "task_id"), &run, &t, &what) && t &&
		    !strcmp(jstr(t, "current"), jstr(m->content, "task_id")) &&
		    !pm_terminal(jstr(t, "status")) && strcmp(jstr(t, "status"), "held") &&
		    jstr(m->content, "status") &&
		    !strcmp(jstr(m->content, "status"), "awaiting_approval")) {
			/* The task's LLM budget is spent: it waits for the operator,
			 * with no deadline, neither reassigned nor failed. */
			mark_paused(run, t, m);
			jset_num(t, "progress", jnum(m->content, "percent_complete", 0));
			decision(a, "awaiting_approval", jstr(t, "task_id"),
				 "%s paused by %s: %s; approve_budget resumes it, cancel drops it",
				 jstr(t, "task_id"), m->from, jstr(m->content, "current_step"));
			save(a);
			pm_send_draft(a, run, false);
		} else if (lookup(a, jstr(m->content, "task_id"), &run, &t, &what) && t &&
		    !strcmp(jstr(t, "current"), jstr(m->content, "task_id")) &&
		    strcmp(jstr(t, "status"), "done") && strcmp(jstr(t, "status"), "failed") &&
		    strcmp(jstr(t, "status"), "awaiting_approval")) {
			/* Advisory: not worth a state write; the next save
			 * carries it, and the result settles it anyway. */
			jset_str(t, "status", "in_progress");
			jset_num(t, "progress", jnum(m->content, "percent_complete", 0));
		}
		return AGENT_DONE;
	case MSG_RESEARCH_RESULT:
		if (!lookup(a, jstr(m->content, "task_id"), &run, &t, &what)) {
			decision(a, "unknown_result", NULL, "result %s for an unknown task", m->id);
			return AGENT_DONE;
		}
		if (what && !strcmp(what, "report"))
			on_report(a, m, run);
		else if (t)
			on_result(a, m, run, t);
		return AGENT_DONE;
	case MSG_VALIDATION_RESULT:
		if (lookup(a, jstr(m->content, "validation_id"), &run, &t, &what))
			on_validation(a, m, run);
		return AGENT_DONE;
	case MSG_ERROR_REPORT:
		if (!lookup(a, jstr(m->content, "related_task_id"), &run, &t, &what))
			return AGENT_DONE;
		note_message(run, m);
		if (t && !strcmp(jstr(t, "current"), jstr(m->content, "related_task_id")) &&
		    strcmp(jstr(t, "status"), "done") && strcmp(jstr(t, "status"), "failed")) {
			char *why = xasprintf("%s reported %s: %s", m->from,
					      jstr(m->content, "error_type"),
					      jstr(m->content, "error_message"));
			if (pm_error_permanent(m->content))
				fail_now(a, run, t, m->from, jstr(m->content, "error_message"));
			else
				reassign(a, run, t, why);
			free(why);
		} else if (what && !strcmp(what, "validation") &&
			   !strcmp(jstr(jobj(run, "validation"), "status"), "requested")) {
			char *why = xasprintf("validator_agent reported %s: %s",
					      jstr(m->content, "error_type"),
					      jstr(m->content, "error_message"));
			validation_failed(a, run, why);
			free(why);
		}
		return AGENT_DONE;
	case MSG_VALIDATION_REQUEST:
	case MSG_TYPE_COUNT:
		break;
	}
	err_set(err, "product_manager does not take %s", msg_type_name(m->type));
	return AGENT_REJECT;
}

/* Dispatch; deadlines: tasks, validation, report. */
static int64_t pm_tick(struct agent *a)
{
	int64_t now = util_now_ns(), next = 250;
	if (state_dirty) {
		state_dirty = false;
		save(a);
	}
	pm_dispatch(a); /* the windows freed by what was handled since */
	pm_notify_tick(a, pm_runs(a));
	cJSON *run;
	cJSON_ArrayForEach(run, pm_runs(a)) {
		const char *st = jstr(run, "status");
		if (!st || !strcmp(st, "done"))
			continue;
		if (cJSON_IsTrue(cJSON_GetObjectItem(run, "draft_due")) &&
		    util_mono_ns() - last_draft_ns >= DRAFT_EVERY_NS)
			pm_send_draft(a, run, false);
		cJSON *t;
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
			const char *s = jstr(t, "status");
			if (pm_terminal(s) || !strcmp(s, "held") || !strcmp(s, "awaiting_approval"))
				continue;
			int64_t dl = (int64_t)jnum(t, "deadline_ns", 0);
			if (dl && now > dl) {
				char *why = xasprintf("%s missed the deadline (%lld s)",
						      jstr(t, "assignee"),
						      (long long)a->env->task_timeout_s);
				/* The late researcher drops it if it has not begun
				 * it or paused it for approval, and stops it before
				 * its next model call if it is working it: no model
				 * calls spent on an attempt nobody waits for. */
				pm_cancel_current(a, run, t);
				reassign(a, run, t, why);
				free(why);
				return 0;
			}
		}
		cJSON *v = cJSON_GetObjectItem(run, "validation");
		if (jstr(v, "status") && !strcmp(jstr(v, "status"), "requested") &&
		    now > (int64_t)jnum(v, "deadline_ns", (double)INT64_MAX)) {
			validation_failed(a, run, "validator_agent missed the deadline");
			return 0;
		}
		cJSON *rp = cJSON_GetObjectItem(run, "report");
		if (rp && jstr(rp, "status") && !strcmp(jstr(rp, "status"), "requested") &&
		    now > (int64_t)jnum(rp, "deadline_ns", (double)INT64_MAX)) {
			jset_num(rp, "deadline_ns", (double)(now + a->env->task_timeout_s * NS));
			decision(a, "report_retry", NULL, "report_writer missed the deadline; asking again");
			save(a);
			pm_send_draft(a, run, true);
		}
	}
	return next;
}

const struct agent_role role_product_manager = {
	.name = "product_manager",
	.handle = pm_handle,
	.tick = pm_tick,
};
