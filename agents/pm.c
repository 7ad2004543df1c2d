/* The product_manager: orchestrates a weekly run. It splits the work per
 * pair and focus, assigns market tasks to research_agent_1 and news tasks to
 * research_agent_2 (through the dispatch windows of agents/pm_dispatch.c:
 * tasks past a researcher's capacity wait queued), tracks acceptance,
 * progress, results and deadlines, reassigns a task to the other researcher
 * on error, rejection or a missed deadline (a rejection for capacity
 * requeues it; a permanent error fails it at once), detects conflicts, asks
 * the validator, and has the report written. Its whole view of a run lives
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

static cJSON *runs(struct agent *a)
{
	return jobj(a->state, "runs");
}

/* assignment (or request) message id -> {"run", "task"} */
static cJSON *index_of(struct agent *a)
{
	return jobj(a->state, "index");
}

static cJSON *find_task(cJSON *run, const char *task_id)
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

static const char *other_researcher(const char *agent)
{
	return strcmp(agent, "research_agent_1") ? "research_agent_1" : "research_agent_2";
}

/* The researcher for a kind of task: the specialist unless the learning
 * system says it fails that kind of task and the other does better. */
static const char *choose(struct agent *a, const char *kind)
{
	const char *first = !strcmp(kind, "market") ? "research_agent_1" : "research_agent_2";
	const char *second = other_researcher(first);
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

static void add_failure(cJSON *run, const cJSON *t, const char *what, const char *from,
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

static void send_draft(struct agent *a, cJSON *run, bool final);
static void maybe_validate(struct agent *a, cJSON *run);

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
	agent_log(a->log, LOG_ERRORS, LOG_WARN, "task_failed", lf, "%s on %s: %s",
		  jstr(t, "task_id"), fromc, reason);
	cJSON_Delete(lf);
	if (jnum(t, "attempts", 1) >= MAX_ATTEMPTS) {
		jset_str(t, "status", "failed");
		add_failure(run, t, "failed", fromc, NULL, reason);
		decision(a, "task_failed", jstr(t, "task_id"), "%s failed for good after %d attempts: %s",
			 jstr(t, "task_id"), MAX_ATTEMPTS, reason);
		save(a);
		maybe_validate(a, run);
		return;
	}
	const char *to = other_researcher(fromc);
	add_failure(run, t, "reassigned", fromc, to, reason);
	pm_task_enqueue(a, run, t, to);
	decision(a, "reassign", jstr(t, "task_id"), "%s reassigned from %s to %s: %s",
		 jstr(t, "task_id"), fromc, to, reason);
	save(a);
	pm_dispatch(a);
	send_draft(a, run, false);
}

/* A permanent error (the data cannot price the pair): failed at once with
 * its reason, neither retried nor reassigned; the report names it. */
static void fail_now(struct agent *a, cJSON *run, cJSON *t, const char *from, const char *reason)
{
	jset_str(t, "status", "failed");
	jset_num(t, "deadline_ns", 0);
	add_failure(run, t, "failed", from, NULL, reason);
	decision(a, "task_failed", jstr(t, "task_id"), "%s failed at once (%s: permanent, not "
		 "retried): %s", jstr(t, "task_id"), from, reason);
	save(a);
	send_draft(a, run, false);
	maybe_validate(a, run);
}

static bool terminal(const char *status)
{
	return !strcmp(status, "done") || !strcmp(status, "failed") ||
	       !strcmp(status, "cancelled");
}

static bool all_terminal(const cJSON *run)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (!terminal(jstr(t, "status")))
			return false;
	return true;
}

#define DRAFT_EVERY_NS (300LL * 1000000)

/* The last draft sent (per process: drafts are a live view, not state). */
static _Thread_local int64_t last_draft_ns;
/* An advisory change (an acceptance) waits for the tick's save. */
static _Thread_local bool state_dirty;

static void send_draft(struct agent *a, cJSON *run, bool final)
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
	send_draft(n->a, n->run, false);
}

static bool status_is(const cJSON *o, const char *status)
{
	return jstr_is(o, "status", status);
}

/* Writes the narrative; false when it waits for the operator's approval
 * of more budget (its one model call would pass the task's cap: the call
 * is not made). Approved, the step starts again with the usage so far and
 * the extra budget; skipped, the report goes without it. */
static bool narrative(struct agent *a, cJSON *run)
{
	const struct llm_settings *s = a->env->llm;
	if (!s)
		return true; /* deterministic mode: no narrative section */
	cJSON *nv = jobj(run, "narrative");
	if (status_is(nv, "done") || status_is(nv, "skipped"))
		return true;
	if (status_is(nv, "awaiting_approval"))
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
	struct llm_task lt = { .task_id = tid, .label = "narrative",
			       .model = s->model_orchestrator, .system = system,
			       .prompt = p.data, .on_text = narr_text, .ctx = &n,
			       .estimate_input = true,
			       .extra_tokens = (long)jnum(nv, "extra_tokens", 0),
			       .extra_cost = jnum(nv, "extra_cost_usd", 0) };
	llm_usage_from_json(cJSON_GetObjectItem(nv, "usage"), &lt.used);
	decision(a, "narrative", NULL, "the orchestrator model %s writes the narrative of %s",
		 s->model_orchestrator, jstr(run, "run_id"));
	enum llm_outcome o = llm_task_run(a, &lt);
	bool paused = o == LLM_RUN_PAUSED && !s->continue_at_limit;
	jset_str(nv, "text", o == LLM_RUN_DONE && lt.text ? lt.text : n.text.data);
	jset_str(nv, "status", o == LLM_RUN_DONE ? "done" : paused ? "awaiting_approval" :
		 o == LLM_RUN_PAUSED ? "skipped_budget" : "failed");
	cJSON_DeleteItemFromObjectCaseSensitive(nv, "usage");
	cJSON_AddItemToObject(nv, "usage", llm_usage_json(&lt.used));
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
	llm_task_release(&lt);
	sbuf_release(&n.text);
	sbuf_release(&p);
	free(system);
	free(tid);
	save(a);
	return !paused;
}

/* The narrative (LLM mode), then the final report; a paused narrative
 * holds the report back (the draft says it waits). */
static void finish_report(struct agent *a, cJSON *run)
{
	if (narrative(a, run))
		send_draft(a, run, true);
	else
		send_draft(a, run, false);
}

static void compile(struct agent *a, cJSON *run)
{
	set_phase(run, "reporting");
	decision(a, "compile_report", NULL, "compiling the report of %s", jstr(run, "run_id"));
	save(a);
	finish_report(a, run);
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
		agent_log(a->log, LOG_CONFLICTS, LOG_WARN, "conflict", lf, "%s", text);
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
static int64_t validation_deadline(const struct agent *a)
{
	int64_t s = a->env->task_timeout_s > PM_VALIDATION_MIN_S ? a->env->task_timeout_s :
								     PM_VALIDATION_MIN_S;
	return util_now_ns() + s * NS;
}

static void maybe_validate(struct agent *a, cJSON *run)
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
	jset_num(v, "deadline_ns", (double)validation_deadline(a));
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
	send_draft(a, run, false);
}

static void validation_failed(struct agent *a, cJSON *run, const char *reason)
{
	cJSON *v = jobj(run, "validation");
	jset_str(v, "status", "failed");
	jset_str(v, "reason", reason);
	add_failure(run, v, "not_validated", "validator_agent", NULL, reason);
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
	cJSON *run = cJSON_AddObjectToObject(runs(a), run_id);
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
	cJSON_AddItemToObject(run, "llm", llm_settings_manifest(a->env->llm));
	cJSON *tasks = cJSON_AddArrayToObject(run, "tasks");
	static const char *const kinds[] = { "market", "news" };
	const char *who[2];
	for (int k = 0; k < 2; k++)
		who[k] = choose(a, kinds[k]);
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
	char *mode = llm_settings_describe(a->env->llm);
	decision(a, "mode", NULL, "run %s in %s", run_id, mode);
	free(mode);
	decision(a, "run_started", NULL, "run %s: %d pairs, %d tasks, window %s..%s", run_id,
		 cJSON_GetArraySize(cJSON_GetObjectItem(run, "pairs")), cJSON_GetArraySize(tasks),
		 jstr(cJSON_GetObjectItem(run, "window"), "start"),
		 jstr(cJSON_GetObjectItem(run, "window"), "end"));
	save(a);
	pm_dispatch(a); /* what the windows take now; the rest waits, queued */
	send_draft(a, run, false);
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
		send_draft(a, run, true);
	}
	decision(a, "run_resumed", NULL, "run %s resumed: %d assignments sent again",
		 jstr(run, "run_id"), resent);
	save(a);
	maybe_validate(a, run);
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
	if (terminal(jstr(t, "status")) || !strcmp(jstr(t, "status"), "held")) {
		decision(a, "duplicate_result", jstr(t, "task_id"),
			 "result %s from %s for %s ignored: the task is already %s", m->id, m->from,
			 jstr(t, "task_id"), jstr(t, "status"));
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
	send_draft(a, run, false);
	maybe_validate(a, run);
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
		agent_log(a->log, LOG_ERRORS, LOG_WARN, "archive_failed", NULL,
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
		agent_log(a->log, LOG_ERRORS, LOG_WARN, "learning_logs", NULL,
			  "the logs on the bus could not all be read: %s", err);
		free(err);
		err = NULL;
	}
	if (learning_aggregate_from(root, a->env->log_dir, util_now_ns(), &err) < 0) {
		agent_log(a->log, LOG_ERRORS, LOG_WARN, "learning_failed", NULL, "%s", err);
		free(err);
	}
	free(root);
}

/* ---- the operator's controls ------------------------------------------------ */

/* Tells the current assignee to drop the task (if it still has it queued). */
static void cancel_current(struct agent *a, cJSON *run, cJSON *t)
{
	const char *who = jstr(t, "assignee"), *cur = jstr(t, "current");
	if (!who || !cur || !*cur || terminal(jstr(t, "status")))
		return;
	cJSON *c = wf_control_content("cancel", jstr(run, "run_id"), jstr(t, "task_id"), NULL, NULL);
	cJSON_ReplaceItemInObject(c, "task_type", cJSON_CreateString(WF_TASK_CANCEL));
	cJSON_AddStringToObject(c, "cancel_id", cur);
	agent_send(a, who, MSG_TASK_ASSIGNMENT, c, NULL, cur, jstr(t, "task_id"), PRIO_URGENT,
		   NULL, NULL);
	/* Its answer, if it still comes, is about an assignment that is no
	 * longer current, and is ignored. */
}

static bool researcher_name(const char *s)
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
	else if (to && !researcher_name(to))
		why = xasprintf("%s is not a researcher", to);
	char code[16], tid[64];
	if (!why) {
		snprintf(code, sizeof(code), "%s%s", b, q);
		snprintf(tid, sizeof(tid), "%s-%s", code, kind);
		if (find_task(run, tid))
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
	pm_task_enqueue(a, run, t, to ? to : choose(a, kind));
	decision(a, "assign", tid, "assign by %s: new %s task for %s to %s", m->from, kind, canon,
		 jstr(t, "assignee"));
	save(a);
	pm_dispatch(a);
	send_draft(a, run, false);
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
	else if (!status_is(o, "awaiting_approval"))
		why = xasprintf("the %s is %s, not awaiting approval", stage,
				jstr(o, "status") ? jstr(o, "status") : "not started");
	if (why) {
		decision(a, "control_refused", stage, "%s from %s refused: %s", action, m->from, why);
		free(why);
		return;
	}
	bool approve = !strcmp(action, "approve_budget");
	const struct llm_settings *s = a->env->llm;
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
		jset_num(o, "deadline_ns", (double)validation_deadline(a));
		decision(a, action, stage, "%s by %s: the validator's LLM review %s", action, m->from,
			 approve ? "resumes with more budget" :
			 "is dropped; the deterministic verdicts go on");
		save(a);
		agent_send(a, "validator_agent", MSG_TASK_ASSIGNMENT, ac, NULL, vid,
			   jstr(run, "run_id"), PRIO_URGENT, NULL, NULL);
		send_draft(a, run, false);
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
		finish_report(a, run);
		return;
	}
	jset_str(o, "status", "skipped");
	char *w = xasprintf("the narrative is skipped: %s by %s at its budget", action, m->from);
	cJSON_AddItemToArray(jarr(run, "warnings"), cJSON_CreateString(w));
	free(w);
	decision(a, action, stage, "%s by %s: the report goes without the narrative", action,
		 m->from);
	save(a);
	send_draft(a, run, true);
}

static void on_control(struct agent *a, const struct msg *m)
{
	const cJSON *c = m->content;
	const char *action = jstr(c, "action"), *task_id = jstr(c, "task_id");
	const char *run_id = jstr(c, "run_id"), *to = jstr(c, "to");
	cJSON *run = run_id ? cJSON_GetObjectItem(runs(a), run_id) : NULL;
	if (action && !strcmp(action, "assign")) {
		control_assign(a, m, run);
		return;
	}
	if (action && task_id && (!strcmp(task_id, "validation") || !strcmp(task_id, "narrative"))) {
		control_stage(a, m, run, task_id);
		return;
	}
	cJSON *t = run && task_id ? find_task(run, task_id) : NULL;
	char *why = NULL;
	if (!action || !t)
		why = xasprintf("no task %s in run %s", task_id ? task_id : "?", run_id ? run_id : "?");
	else if (!strcmp(jstr(run, "status"), "done") || !strcmp(jstr(run, "status"), "reporting"))
		why = xasprintf("run %s is %s: its tasks can no longer change", run_id,
				jstr(run, "status"));
	else if (to && !researcher_name(to))
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
		    (!retry && !release && (terminal(st) || !strcmp(st, "held")))) {
			decision(a, "control_refused", task_id, "%s of %s refused: the task is %s", action,
				 task_id, st);
			free(reason);
			return;
		}
		/* A copy: assign() below replaces (frees) the task's "assignee",
		 * which who points into; dest must not borrow it. */
		char from[MSG_AGENT_MAX + 1];
		util_strlcpy(from, who ? who : "", sizeof(from));
		const char *dest = to ? to : release ? from : other_researcher(from);
		if (!retry && !release)
			cancel_current(a, run, t);
		add_failure(run, t, retry ? "retried" : release ? "released" : "reassigned", from, dest,
			    reason);
		pm_task_enqueue(a, run, t, dest);
		decision(a, action, task_id, "%s: %s from %s to %s", reason, task_id, from, dest);
		save(a);
		pm_dispatch(a);
	} else if (!strcmp(action, "cancel") || !strcmp(action, "hold")) {
		bool cancel = !strcmp(action, "cancel");
		if (terminal(st) || (!cancel && !strcmp(st, "held"))) {
			decision(a, "control_refused", task_id, "%s of %s refused: the task is %s", action,
				 task_id, st);
			free(reason);
			return;
		}
		cancel_current(a, run, t);
		jset_str(t, "status", cancel ? "cancelled" : "held");
		jset_num(t, "deadline_ns", 0);
		if (cancel)
			add_failure(run, t, "cancelled", who, NULL, reason);
		decision(a, action, task_id, "%s: %s", reason, task_id);
		save(a);
		if (cancel)
			maybe_validate(a, run);
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
	send_draft(a, run, false);
}

/* Handles an operator control and answers its sender: a task_acceptance
 * correlated to it (reply_to its id), "accepted" when applied, "rejected"
 * with the reason when refused or failed; "outcome" (applied, refused,
 * failed) and "detail" say what happened (man/madf-messages.5). */
static void control_answer(struct agent *a, const struct msg *m)
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
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", m->id);
	cJSON_AddStringToObject(c, "status", strcmp(outcome, "applied") ? "rejected" : "accepted");
	char now[40];
	iso(util_now_ns(), now, sizeof(now));
	cJSON_AddStringToObject(c, "estimated_completion", now);
	cJSON_AddNumberToObject(c, "agent_capacity", 1);
	if (strcmp(outcome, "applied"))
		cJSON_AddStringToObject(c, "rejection_reason", detail);
	cJSON_AddStringToObject(c, "control_action", pm_ctl.action);
	if (jstr(m->content, "task_id"))
		cJSON_AddStringToObject(c, "control_task_id", jstr(m->content, "task_id"));
	cJSON_AddStringToObject(c, "outcome", outcome);
	cJSON_AddStringToObject(c, "detail", detail);
	char *err = NULL;
	if (agent_send(a, m->from, MSG_TASK_ACCEPTANCE, c, NULL, m->id, m->correlation_id,
		       PRIO_URGENT, NULL, &err) < 0)
		free(err); /* logged by agent_send */
	free(pm_ctl.text);
	free(pm_ctl.failed);
	pm_ctl.text = pm_ctl.failed = NULL;
	pm_ctl.refused = false;
}

/* ---- dispatch ---------------------------------------------------------------- */

static bool lookup(struct agent *a, const char *msg_id, cJSON **run, cJSON **task,
		   const char **what)
{
	const cJSON *ix = cJSON_GetObjectItem(index_of(a), msg_id ? msg_id : "");
	if (!ix)
		return false;
	*run = cJSON_GetObjectItem(runs(a), jstr(ix, "run"));
	if (!*run)
		return false;
	*what = jstr(ix, "task");
	*task = find_task(*run, *what);
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
			control_answer(a, m);
			return AGENT_DONE;
		}
		if (!kind || strcmp(kind, WF_TASK_WEEKLY) || !run_id || !util_valid_agent_name(run_id)) {
			err_set(err, "product_manager takes task_type %s with a run_id", WF_TASK_WEEKLY);
			return AGENT_REJECT;
		}
		cJSON *r = cJSON_GetObjectItem(runs(a), run_id);
		if (!r)
			start_run(a, m, run_id);
		else if (strcmp(jstr(r, "status"), "done"))
			resume_run(a, r);
		else
			decision(a, "run_already_done", NULL, "run %s is done already", run_id);
		/* followed from another host: its progress and report go there */
		pm_notify_trigger(a, cJSON_GetObjectItem(runs(a), run_id), m);
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
			if (pm_rejected_for_capacity(m->content) && researcher_name(m->from))
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
			if (status_is(v, "requested") && status_is(m->content, "in_progress") &&
			    !strcmp(jstr(v, "request_id") ? jstr(v, "request_id") : "",
				    jstr(m->content, "task_id"))) {
				/* still checking: its deadline moves on */
				jset_num(v, "deadline_ns", (double)validation_deadline(a));
				state_dirty = true;
			}
			if (status_is(v, "requested") && status_is(m->content, "awaiting_approval") &&
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
				send_draft(a, run, false);
			}
			return AGENT_DONE;
		}
		if (lookup(a, jstr(m->content, "task_id"), &run, &t, &what) && t &&
		    !strcmp(jstr(t, "current"), jstr(m->content, "task_id")) &&
		    !terminal(jstr(t, "status")) && strcmp(jstr(t, "status"), "held") &&
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
			send_draft(a, run, false);
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
	pm_notify_tick(a, runs(a));
	cJSON *run;
	cJSON_ArrayForEach(run, runs(a)) {
		const char *st = jstr(run, "status");
		if (!st || !strcmp(st, "done"))
			continue;
		if (cJSON_IsTrue(cJSON_GetObjectItem(run, "draft_due")) &&
		    util_mono_ns() - last_draft_ns >= DRAFT_EVERY_NS)
			send_draft(a, run, false);
		cJSON *t;
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
			const char *s = jstr(t, "status");
			if (terminal(s) || !strcmp(s, "held") || !strcmp(s, "awaiting_approval"))
				continue;
			int64_t dl = (int64_t)jnum(t, "deadline_ns", 0);
			if (dl && now > dl) {
				char *why = xasprintf("%s missed the deadline (%lld s)",
						      jstr(t, "assignee"),
						      (long long)a->env->task_timeout_s);
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
			send_draft(a, run, true);
		}
	}
	return next;
}

const struct agent_role role_product_manager = {
	.name = "product_manager",
	.handle = pm_handle,
	.tick = pm_tick,
};
