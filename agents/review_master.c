/* The review crew's roles: the workers answer review tasks over the bus;
 * the master (driven by `madf review`) checks the request, scans the
 * codebase, assigns one task per agent, tracks acceptance, results,
 * deadlines and errors, retries a failed invocation up to 3 times with
 * exponential backoff, and aggregates. */
#include "agents/review_priv.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/llm_agent.h"
#include "agents/workflow.h"
#include "core/finding.h"
#include "core/message.h"
#include "core/schema.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define MASTER_TRIES 3

static void iso_in(int64_t s, char *buf, size_t n)
{
	util_iso8601(util_now_ns() + s * 1000000000LL, buf, n);
}

/* ---- the workers ---- */

/* An error_report for task; retryable tells the master whether another
 * attempt could go differently (a transient failure). */
static void send_error(struct agent *a, const char *to, const char *task, const char *corr,
		       int status, bool retryable, const char *what)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "error_type", status == 400 ? "invalid_input" :
				status == 422 ? "data_format" : "internal_error");
	cJSON_AddStringToObject(c, "error_message", what);
	cJSON *ctx = cJSON_AddObjectToObject(c, "context");
	cJSON_AddNumberToObject(ctx, "status", status);
	cJSON_AddBoolToObject(ctx, "retryable", retryable);
	cJSON_AddStringToObject(ctx, "agent", a->name);
	cJSON_AddStringToObject(c, "impact_level", status == 400 ? "medium" : "high");
	cJSON_AddStringToObject(c, "related_task_id", task);
	char *err = NULL;
	if (agent_send(a, to, MSG_ERROR_REPORT, c, NULL, task, corr, PRIO_HIGH, NULL, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "send_failed", NULL, "%s", err ? err : "?");
		free(err);
	}
	log_write(a->log, LOG_ERRORS, LOG_WARN, "review_error", NULL, "task %s: %d %s", task,
		  status, what);
}

/* task_progress to the master while a worker works. */
struct wprog {
	struct agent *a;
	const char *to, *task, *corr;
	int pct;
};

static void wprog_send(struct wprog *w, const char *line, const char *status, const cJSON *usage)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", w->task);
	cJSON_AddNumberToObject(c, "percent_complete", w->pct);
	char *clean = util_sanitize(line, strlen(line), false);
	cJSON_AddStringToObject(c, "current_step", clean);
	free(clean);
	if (status)
		cJSON_AddStringToObject(c, "status", status);
	if (usage)
		cJSON_AddItemToObject(c, "llm_usage", cJSON_Duplicate(usage, true));
	agent_send(w->a, w->to, MSG_TASK_PROGRESS, c, NULL, w->task, w->corr,
		   status ? PRIO_HIGH : PRIO_NORMAL, NULL, NULL);
}

static void wprog_step(void *ctx, const char *line)
{
	struct wprog *w = ctx;
	w->pct = w->pct ? (w->pct + 90) / 2 : 10;
	wprog_send(w, line, NULL, NULL);
}

static void send_result(struct agent *a, const char *to, const char *task, const char *corr,
			cJSON *res, int64_t t0)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", task);
	cJSON_AddStringToObject(c, "status", "completed");
	cJSON_AddNumberToObject(c, "execution_time_minutes",
				(double)(util_mono_ns() - t0) / 60e9);
	const cJSON *findings = cJSON_GetObjectItemCaseSensitive(res, "findings");
	cJSON_AddNumberToObject(c, "data_points_collected",
				findings ? cJSON_GetArraySize(findings)
					 : cJSON_GetArraySize(cJSON_GetObjectItem(res, "documentation")));
	cJSON *src = cJSON_AddArrayToObject(c, "sources_accessed");
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(res, "tools"))
		cJSON_AddItemToArray(src, cJSON_CreateString(t->string));
	if (cJSON_GetObjectItem(res, "llm"))
		cJSON_AddItemToArray(src, cJSON_CreateString("llm"));
	cJSON *kf = cJSON_AddArrayToObject(c, "key_findings");
	cJSON_ArrayForEach(t, findings)
		if (cJSON_GetArraySize(kf) < 20)
			cJSON_AddItemToArray(kf, cJSON_CreateString(jstr_or(t, "description", "")));
	cJSON_AddItemToObject(c, "raw_data", res);
	cJSON_AddNumberToObject(c, "confidence_score", 1);
	cJSON_AddNumberToObject(c, "data_freshness_hours", 0);
	cJSON *warn = cJSON_AddArrayToObject(c, "warnings");
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(res, "notes"))
		cJSON_AddItemToArray(warn, cJSON_Duplicate(t, false));
	char *e2 = NULL;
	if (agent_send(a, to, MSG_RESEARCH_RESULT, c, NULL, task, corr, PRIO_NORMAL, NULL, &e2) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "send_failed", NULL, "%s", e2 ? e2 : "?");
		free(e2);
	}
	a->completed_today++;
}

/* Works task to its answer: a result, an error, or (LLM mode, at the
 * task's budget) a pause kept in the agent's state until the operator
 * approves more budget or skips the LLM part. st: the LLM part's state
 * (taken over; NULL: a new task); skipped: why the LLM part is skipped
 * (the analyzers answer instead), or NULL. */
static void worker_work(struct agent *a, const char *task, const char *to, const char *corr,
			enum review_part part, const cJSON *input, cJSON *st, const char *skipped)
{
	struct wprog wp = { a, to, task, corr, 0 };
	struct review_progress prog = { .fn = wprog_step, .ctx = &wp };
	cJSON *res = NULL;
	char *why = NULL, *skip = skipped ? xstrdup(skipped) : NULL;
	int64_t t0 = util_mono_ns();
	int status;
	if (!st)
		st = cJSON_CreateObject();
	if (a->env->llm && !skip && part != REVIEW_DOCUMENTATION) {
		status = review_llm_run(a, part, task, input, st, &prog, &res, &why);
		if (status == REVIEW_LLM_PAUSED && a->env->llm->continue_at_limit) {
			skip = xasprintf("%s; MADF_LLM_CONTINUE_AT_LIMIT", why);
			free(why);
			why = NULL;
		} else if (status == REVIEW_LLM_PAUSED) {
			cJSON *paused = cJSON_GetObjectItem(a->state, "review_paused");
			if (!cJSON_IsObject(paused)) {
				cJSON_DeleteItemFromObject(a->state, "review_paused");
				paused = cJSON_AddObjectToObject(a->state, "review_paused");
			}
			cJSON *e = cJSON_CreateObject();
			cJSON_AddItemToObject(e, "input", cJSON_Duplicate(input, true));
			cJSON_AddStringToObject(e, "from", to);
			if (corr)
				cJSON_AddStringToObject(e, "correlation_id", corr);
			cJSON_AddItemToObject(e, "llm", st);
			cJSON_DeleteItemFromObject(paused, task);
			cJSON_AddItemToObject(paused, task, e);
			agent_save_state(a, NULL);
			char *line = xasprintf("awaiting the operator's approval: %s", why);
			wprog_send(&wp, line, "awaiting_approval", cJSON_GetObjectItem(st, "usage"));
			log_write(a->log, LOG_DECISIONS, LOG_WARN, "llm_agent_budget_reached", NULL,
				  "%s paused: %s; a budget_approval or llm_skip for it resumes it", task, why);
			free(line);
			free(why);
			return;
		}
	}
	if (!a->env->llm || skip || part == REVIEW_DOCUMENTATION) {
		wprog_step(&wp, "running the analyzers");
		status = review_part_run(part, a->env->tools, a->name, input, &prog, &res, &why);
		if (!status && a->env->llm && !skip && part == REVIEW_DOCUMENTATION)
			review_llm_docs(a, task, input, res, &prog);
		if (!status && skip)
			review_note(cJSON_GetObjectItem(res, "notes"), "%s: the LLM part was skipped (%s): "
				    "the analyzers' findings instead", review_part_name(part), skip);
	}
	cJSON_Delete(st);
	if (status)
		send_error(a, to, task, corr, status, status == 500 || status == 503,
			   why ? why : "failed");
	else
		send_result(a, to, task, corr, res, t0);
	free(why);
	free(skip);
}

/* The operator's budget_approval or llm_skip of a paused task. */
static void worker_resume(struct agent *a, const struct msg *m, bool skip)
{
	const char *id = jstr_or(m->content, "approve_id", "");
	cJSON *e = cJSON_DetachItemFromObject(cJSON_GetObjectItem(a->state, "review_paused"), id);
	if (!e) {
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "not_paused", NULL,
			  "%s from %s: no paused task %s", skip ? LLM_TASK_SKIP : LLM_TASK_APPROVE,
			  m->from, id);
		return;
	}
	agent_save_state(a, NULL);
	cJSON *st = cJSON_DetachItemFromObject(e, "llm");
	const struct llm_agent_settings *s = a->env->llm;
	char *skipped = NULL;
	if (skip) {
		skipped = xasprintf("skipped by %s at its budget", m->from);
	} else if (s) {
		double xt = jnum(m->content, "extra_tokens", s->token_budget > 0 ? (double)s->token_budget : 0);
		double xc = jnum(m->content, "extra_cost_usd", s->cost_budget > 0 ? s->cost_budget : 0);
		double et = jnum(st, "extra_tokens", 0) + xt, ec = jnum(st, "extra_cost_usd", 0) + xc;
		cJSON_DeleteItemFromObject(st, "extra_tokens");
		cJSON_DeleteItemFromObject(st, "extra_cost_usd");
		cJSON_AddNumberToObject(st, "extra_tokens", et);
		cJSON_AddNumberToObject(st, "extra_cost_usd", ec);
	}
	log_write(a->log, LOG_DECISIONS, LOG_INFO, skip ? "llm_skipped" : "budget_approved", NULL,
		  "%s resumes: %s by %s", id, skip ? "LLM part skipped" : "more budget approved", m->from);
	worker_work(a, id, jstr_or(e, "from", ""), jstr(e, "correlation_id"),
		    (enum review_part)review_part_from_name(a->role->name),
		    cJSON_GetObjectItem(e, "input"), st, skipped);
	free(skipped);
	cJSON_Delete(e);
}

static int worker_handle(struct agent *a, const struct msg *m, char **err)
{
	(void)err;
	if (m->type != MSG_TASK_ASSIGNMENT)
		return AGENT_DONE;
	const char *kind = jstr_or(m->content, "task_type", "");
	if (!strcmp(kind, LLM_TASK_APPROVE) || !strcmp(kind, LLM_TASK_SKIP)) {
		worker_resume(a, m, !strcmp(kind, LLM_TASK_SKIP));
		return AGENT_DONE;
	}
	int part = review_part_from_name(a->role->name);
	const cJSON *si = cJSON_GetObjectItemCaseSensitive(m->content, "special_instructions");
	cJSON *input = cJSON_IsString(si) ? cJSON_Parse(si->valuestring) : NULL;
	char ts[64];
	iso_in(60, ts, sizeof(ts));
	cJSON *acc = cJSON_CreateObject();
	cJSON_AddStringToObject(acc, "task_id", m->id);
	cJSON_AddStringToObject(acc, "status", "accepted");
	cJSON_AddStringToObject(acc, "estimated_completion", ts);
	cJSON_AddNumberToObject(acc, "agent_capacity", 1);
	agent_send(a, m->from, MSG_TASK_ACCEPTANCE, acc, NULL, m->id, m->correlation_id,
		   PRIO_NORMAL, NULL, NULL);
	if (a->fault == FAULT_ERROR) {
		send_error(a, m->from, m->id, m->correlation_id, 500, true, "injected fault: error");
		cJSON_Delete(input);
		return AGENT_DONE;
	}
	if (a->fault == FAULT_CRASH) {
		a->crashed = true;
		cJSON_Delete(input);
		return AGENT_DONE;
	}
	if (a->fault == FAULT_SLOW) {
		cJSON_Delete(input);
		return AGENT_DONE; /* never answers: the master's deadline passes */
	}
	if (!input) {
		send_error(a, m->from, m->id, m->correlation_id, 400, false,
			   "special_instructions: must be the agent's input as JSON text");
		return AGENT_DONE;
	}
	if (a->fault == FAULT_MALFORMED) {
		/* the analysis with a finding without its fields: fails the
		 * finding schema */
		cJSON *res = NULL;
		char *why = NULL;
		int64_t t0 = util_mono_ns();
		int st = review_part_run((enum review_part)part, a->env->tools, a->name, input, NULL, &res,
					 &why);
		if (st) {
			send_error(a, m->from, m->id, m->correlation_id, st, st == 500, why ? why : "failed");
		} else {
			cJSON *bad = cJSON_CreateObject();
			cJSON_AddStringToObject(bad, "type", part == REVIEW_CRITICAL ? "critical" : "debt");
			cJSON_DeleteItemFromObject(res, "findings");
			cJSON_AddItemToArray(cJSON_AddArrayToObject(res, "findings"), bad);
			send_result(a, m->from, m->id, m->correlation_id, res, t0);
		}
		free(why);
		cJSON_Delete(input);
		return AGENT_DONE;
	}
	worker_work(a, m->id, m->from, m->correlation_id, (enum review_part)part, input, NULL, NULL);
	cJSON_Delete(input);
	return AGENT_DONE;
}

static void master_progress(void *ctx, const char *line)
{
	struct agent *a = ctx;
	log_write(a->log, LOG_EVENTS, LOG_INFO, "review_progress", NULL, "%s", line);
}

/* A review run's trigger (REVIEW_TASK_RUN): the crew hosted here on the
 * request, kept as the run it names. */
static void master_run(struct agent *a, const struct msg *m)
{
	const char *run_id = jstr(m->content, "run_id");
	const char *si = jstr(m->content, "special_instructions");
	cJSON *request = si ? json_parse_strict(si, strlen(si), NULL) : NULL;
	if (!review_run_id_valid(run_id) || !cJSON_IsObject(request)) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "review_rejected", NULL,
			  "trigger %s from %s: needs a run_id review-... and the request as JSON text "
			  "in special_instructions", m->id, m->from);
		cJSON_Delete(request);
		return;
	}
	cJSON *prev = review_run_load(a->env->data_dir, run_id);
	const char *st = jstr_or(prev, "status", "");
	bool over = !strcmp(st, "done") || !strcmp(st, "failed");
	cJSON_Delete(prev);
	if (over) { /* a trigger delivered again after its run ended */
		log_write(a->log, LOG_EVENTS, LOG_INFO, "ignored", NULL, "run %s is %s already",
			  run_id, st);
		cJSON_Delete(request);
		return;
	}
	log_write(a->log, LOG_EVENTS, LOG_INFO, "review_started", NULL, "run %s of %s for %s",
		  run_id, jstr_or(request, "id", "?"), m->from);
	struct review_crew_opts o = { .data_dir = a->env->data_dir, .log_dir = a->env->log_dir,
				      .durable = a->env->bcfg.durable,
				      .faults = (const char *const *)a->env->faults,
				      .nfaults = a->env->nfaults };
	struct review_progress p = { .fn = master_progress, .ctx = a, .run_id = run_id };
	cJSON *agg = NULL, *error = NULL;
	review_crew_run(a, &o, request, &p, &agg, &error);
	cJSON_Delete(agg);
	cJSON_Delete(error);
	cJSON_Delete(request);
	a->completed_today++;
}

/* Running (`madf agent review_master`, or hosted by the console) the
 * master starts the review runs it is sent and answers the controls of
 * runs no longer under way; the rest is drained. */
static int master_handle(struct agent *a, const struct msg *m, char **err)
{
	(void)err;
	if (review_is_control(m)) {
		review_control(NULL, a, m);
		return AGENT_DONE;
	}
	if (m->type == MSG_TASK_ASSIGNMENT &&
	    !strcmp(jstr_or(m->content, "task_type", ""), REVIEW_TASK_RUN)) {
		master_run(a, m);
		return AGENT_DONE;
	}
	log_write(a->log, LOG_EVENTS, LOG_INFO, "ignored", NULL, "%s from %s outside a review",
		  msg_type_name(m->type), m->from);
	return AGENT_DONE;
}

const struct agent_role role_review_master = { .name = "review_master", .handle = master_handle };
const struct agent_role role_review_documentation = { .name = "review_documentation",
						      .handle = worker_handle };
const struct agent_role role_review_debt = { .name = "review_debt", .handle = worker_handle };
const struct agent_role role_review_improvement = { .name = "review_improvement",
						    .handle = worker_handle };
const struct agent_role role_review_critical = { .name = "review_critical", .handle = worker_handle };

const struct agent_role *const review_roles[] = {
	&role_review_master, &role_review_documentation, &role_review_debt,
	&role_review_improvement, &role_review_critical,
};
const size_t review_nroles = ARRAY_SIZE(review_roles);

const struct agent_role *review_role_find(const char *name)
{
	for (size_t i = 0; name && i < review_nroles; i++)
		if (!strcmp(review_roles[i]->name, name))
			return review_roles[i];
	return NULL;
}

/* ---- the master ---- */

static const struct field_spec params_fields[] = {
	{ "agents",         FK_STR_LIST, OPT | F_NONEMPTY, 0, 0, NULL, NULL },
	{ "checklist",      FK_OBJ,      OPT,              0, 0, NULL, NULL },
	{ "max_findings",   FK_INT,      OPT | F_MIN,      1, 0, NULL, NULL },
	{ "max_files",      FK_INT,      OPT | F_MIN,      1, 0, NULL, NULL },
	{ "max_bytes",      FK_INT,      OPT | F_MIN,      1, 0, NULL, NULL },
	{ "max_file_bytes", FK_INT,      OPT | F_MIN,      1, 0, NULL, NULL },
	{ "timeout_s",      FK_INT,      OPT | RANGE,      1, 86400, NULL, NULL },
	{ "include",        FK_STR_LIST, OPT,              0, 0, NULL, NULL },
	{ "exclude",        FK_STR_LIST, OPT,              0, 0, NULL, NULL },
	{ "since",          FK_STR,      OPT | F_NONEMPTY, 0, 0, NULL, NULL },
};
static const struct schema params_schema = SCHEMA_CLOSED(params_fields, NULL);

static void request_check(const cJSON *obj, const char *prefix, struct vctx *v)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "params");
	if (!cJSON_IsObject(p))
		return;
	char *pp = json_path_join(prefix, "params");
	struct msg_errors e = { 0 };
	schema_validate(&params_schema, p, pp, &e);
	for (size_t i = 0; i < e.count; i++) {
		char *colon = strstr(e.items[i], ": ");
		if (colon) {
			*colon = 0;
			schema_error(v, e.items[i], "%s", colon + 2);
		}
	}
	msg_errors_release(&e);
	const cJSON *ag = cJSON_GetObjectItemCaseSensitive(p, "agents"), *c;
	size_t i = 0;
	if (cJSON_IsArray(ag))
		cJSON_ArrayForEach(c, ag) {
			if (cJSON_IsString(c) && review_part_from_name(c->valuestring) < 0) {
				char *path = xasprintf("%s.agents[%zu]", pp, i);
				schema_error(v, path, "must be one of documentation, debt, improvement, critical");
				free(path);
			}
			i++;
		}
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(p, "checklist");
	char *clp = json_path_join(pp, "checklist");
	if (cJSON_IsObject(cl))
		cJSON_ArrayForEach(c, cl) {
			/* the key quoted and escaped when it is not plain */
			char *path = json_path_join(clp, c->string);
			if (review_part_from_name(c->string) < 0)
				schema_error(v, path, "not allowed (the keys are the agents: documentation, debt, improvement, critical)");
			else if (!cJSON_IsArray(c))
				schema_error(v, path, "must be an array");
			free(path);
		}
	free(clp);
	free(pp);
}

static const struct field_spec request_fields[] = {
	{ "id",     FK_STR, REQ | F_NONEMPTY, 0, 0, NULL, NULL },
	{ "params", FK_OBJ, OPT,              0, 0, NULL, NULL },
};
static const struct schema request_schema = SCHEMA_CLOSED(request_fields, request_check);

int review_request_check(const cJSON *input, struct msg_errors *e)
{
	return schema_validate(&request_schema, input, "", e);
}

static cJSON *error_new(int status, const char *text)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddNumberToObject(e, "status", status);
	char *clean = util_sanitize(text, strlen(text), false);
	cJSON_AddStringToObject(e, "error", clean);
	/* "field: rule" -> field, rule */
	char *colon = status == 400 ? strstr(clean, ": ") : NULL;
	if (colon) {
		char *semi = strstr(colon, "; ");
		char *field = xstrndup(clean, (size_t)(colon - clean));
		char *rule = semi ? xstrndup(colon + 2, (size_t)(semi - colon - 2)) : xstrdup(colon + 2);
		cJSON_AddStringToObject(e, "field", field);
		cJSON_AddStringToObject(e, "rule", rule);
		free(field);
		free(rule);
	}
	free(clean);
	return e;
}


void review_progress_say(const struct review_progress *p, const char *fmt, ...)
{
	if (!p || !p->fn)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	p->fn(p->ctx, s);
	free(s);
}

static int send_task(struct agent *m, struct task *t, const cJSON *winput, int64_t timeout_s,
		     char **err)
{
	char ts[64];
	iso_in(timeout_s, ts, sizeof(ts));
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_type", "code_review");
	cJSON_AddStringToObject(c, "focus_area", review_part_name(t->part));
	cJSON_AddArrayToObject(c, "target_pairs");
	cJSON_AddStringToObject(c, "timeframe", "current");
	cJSON *ds = cJSON_AddArrayToObject(c, "data_sources");
	cJSON_AddItemToArray(ds, cJSON_CreateString(jstr_or(winput, "root", "")));
	cJSON_AddStringToObject(c, "deadline", ts);
	cJSON_AddStringToObject(c, "output_format", t->part == REVIEW_DOCUMENTATION ?
				"documentation_json" : "findings_json");
	char *si = cJSON_PrintUnformatted(winput);
	cJSON_AddStringToObject(c, "special_instructions", si);
	free(si);
	t->attempts++;
	t->timeout_s = timeout_s;
	t->paused = false;
	t->deadline_ns = util_now_ns() + timeout_s * 1000000000LL;
	t->retry_at_ns = 0;
	return agent_send(m, review_part_agent(t->part), MSG_TASK_ASSIGNMENT, c, NULL, NULL,
			  NULL, PRIO_NORMAL, t->id, err);
}

static int64_t backoff_ms(int attempts)
{
	long base = 1000;
	const char *s = getenv("MADF_REVIEW_BACKOFF_MS");
	if (s && *s) {
		char *end;
		errno = 0;
		long v = strtol(s, &end, 10);
		if (!errno && !*end && v >= 0 && v <= 600000)
			base = v;
	}
	return (int64_t)base << (attempts - 1);
}

/* A failed attempt: retried (transient) or final. */
static void attempt_failed(struct agent *m, struct task *t, int status, const char *why,
			   bool retryable, const struct review_progress *p)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddNumberToObject(a, "attempt", t->attempts);
	char *clean = util_sanitize(why, strlen(why), false);
	cJSON_AddStringToObject(a, "error", clean);
	cJSON_AddItemToArray(t->attempt_log, a);
	log_write(m->log, LOG_ERRORS, LOG_WARN, "review_attempt_failed", a,
		  "%s attempt %d: %d %s", review_part_agent(t->part), t->attempts, status, clean);
	if (retryable && t->attempts < MASTER_TRIES) {
		int64_t ms = backoff_ms(t->attempts);
		t->retry_at_ns = util_now_ns() + ms * 1000000;
		t->deadline_ns = 0;
		review_progress_say(p, "%s: attempt %d failed (%s); retrying in %lld ms",
			 review_part_agent(t->part), t->attempts, clean, (long long)ms);
	} else {
		t->failed = true;
		t->status = status;
		review_progress_say(p, "%s: failed after %d attempt%s: %s", review_part_agent(t->part),
			 t->attempts, t->attempts == 1 ? "" : "s", clean);
	}
	free(clean);
}

int review_task_send(struct review_ctx *x, struct task *t, char **err)
{
	t->accepted = false;
	return send_task(x->m, t, x->inputs[t->part], x->timeout_s, err);
}

void review_attempt_failed(struct review_ctx *x, struct task *t, int status, const char *why,
			   bool retryable)
{
	attempt_failed(x->m, t, status, why, retryable, x->p);
}

static struct task *task_of(struct task *tasks, const struct msg *msg)
{
	const char *ref = msg->reply_to;
	const cJSON *tid = cJSON_GetObjectItemCaseSensitive(msg->content, "task_id");
	const cJSON *rel = cJSON_GetObjectItemCaseSensitive(msg->content, "related_task_id");
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		struct task *t = &tasks[i];
		if (!t->wanted || t->done || t->failed || !t->id[0])
			continue;
		if ((ref && !strcmp(ref, t->id)) || (cJSON_IsString(tid) && !strcmp(tid->valuestring, t->id)) ||
		    (cJSON_IsString(rel) && !strcmp(rel->valuestring, t->id)))
			return t;
	}
	return NULL;
}

int review_report_status(const cJSON *content, char **err)
{
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(content, "context");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(ctx, "status");
	if (!st)
		return 500;
	long v = 0;
	/* not cast as it comes: a number out of int's range is no int */
	if (jint(ctx, "status", 100, 599, &v) && (double)v == st->valuedouble)
		return (int)v;
	char *text = cJSON_PrintUnformatted(st);
	size_t n = text ? strlen(text) : 0;
	/* cut first: what is shown is whole characters, without escapes */
	char *clean = util_sanitize(text ? text : "", n > 40 ? 40 : n, false);
	err_set(err, "context.status: must be a whole number from 100 to 599 (an HTTP status), "
		"not %s%s", clean, n > 40 ? "..." : "");
	free(clean);
	free(text);
	return -1;
}

static void on_message(struct agent *m, struct task *tasks, const struct msg *msg,
		       const struct review_progress *p)
{
	struct task *t = task_of(tasks, msg);
	if (!t)
		return; /* a stale answer to an earlier attempt, a heartbeat */
	const char *who = review_part_agent(t->part);
	if (msg->type == MSG_TASK_ACCEPTANCE) {
		t->accepted = true;
		review_progress_say(p, "%s: accepted (attempt %d)", who, t->attempts);
	} else if (msg->type == MSG_TASK_PROGRESS) {
		/* a worker at work keeps its deadline ahead; one awaiting the
		 * operator's approval has none until it resumes */
		t->paused = !strcmp(jstr_or(msg->content, "status", ""), "awaiting_approval");
		t->accepted = true;
		long pct;
		if (jint(msg->content, "percent_complete", 0, 100, &pct))
			t->pct = (int)pct;
		t->deadline_ns = t->paused ? 0 : util_now_ns() + t->timeout_s * 1000000000LL;
		if (t->paused)
			review_progress_say(p, "%s: paused, %s (task %s: a task_assignment of task_type %s or %s "
				 "with approve_id %s to %s resumes it)", who,
				 jstr_or(msg->content, "current_step", ""), t->id, LLM_TASK_APPROVE,
				 LLM_TASK_SKIP, t->id, who);
		else
			review_progress_say(p, "%s: %s", who, jstr_or(msg->content, "current_step", ""));
	} else if (msg->type == MSG_RESEARCH_RESULT) {
		const cJSON *raw = cJSON_GetObjectItemCaseSensitive(msg->content, "raw_data");
		struct msg_errors e = { 0 };
		if (t->part == REVIEW_DOCUMENTATION) {
			if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(raw, "documentation")))
				msg_errors_add(&e, "documentation: must be an object");
		} else {
			finding_list_validate(cJSON_GetObjectItemCaseSensitive(raw, "findings"),
					      (int)(t->part - REVIEW_DEBT), review_part_name(t->part), &e);
		}
		if (e.count) {
			char *why = msg_errors_join(&e);
			char *full = xasprintf("output failed the schema (not retried): %s", why);
			attempt_failed(m, t, 500, full, false, p);
			free(full);
			free(why);
		} else {
			t->done = true;
			t->result = cJSON_Duplicate(raw, true);
			const cJSON *f = cJSON_GetObjectItemCaseSensitive(raw, "findings");
			if (f)
				review_progress_say(p, "%s: done, %d finding%s", who, cJSON_GetArraySize(f),
					 cJSON_GetArraySize(f) == 1 ? "" : "s");
			else
				review_progress_say(p, "%s: done", who);
		}
		msg_errors_release(&e);
	} else if (msg->type == MSG_ERROR_REPORT) {
		char *serr = NULL;
		int status = review_report_status(msg->content, &serr);
		const char *text = jstr_or(msg->content, "error_message", "");
		char *why = NULL;
		if (status < 0) {
			/* a report no worker of ours sends: the attempt failed
			 * all the same, as an internal error */
			why = xasprintf("%s's error_report: %s; its error_message: %s", who,
					serr ? serr : "?", text);
			status = 500;
		}
		free(serr);
		const cJSON *rt = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(msg->content, "context"), "retryable");
		bool retry = cJSON_IsBool(rt) ? cJSON_IsTrue(rt) :
			     status != 400 && (status >= 500 || status == 429 || status == 408);
		attempt_failed(m, t, status == 400 ? 400 : 500, why ? why : text,
			       retry && status != 400, p);
		free(why);
	}
}

cJSON *review_worker_input(const cJSON *scan, const cJSON *params, enum review_part part)
{
	cJSON *in = cJSON_CreateObject();
	cJSON_AddStringToObject(in, "root", jstr_or(scan, "root", ""));
	cJSON *files = cJSON_AddArrayToObject(in, "files");
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(scan, "files"))
		cJSON_AddItemToArray(files, cJSON_CreateString(jstr_or(f, "path", "")));
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(params, "checklist"), review_part_name(part));
	if (cl)
		cJSON_AddItemToObject(in, "checklist", cJSON_Duplicate(cl, true));
	const cJSON *mf = cJSON_GetObjectItemCaseSensitive(params, "max_findings");
	if (cJSON_IsNumber(mf) && part != REVIEW_DOCUMENTATION)
		cJSON_AddNumberToObject(in, "max_findings", mf->valuedouble);
	return in;
}

static long param_long(const cJSON *params, const char *k, long def)
{
	return (long)jnum(params, k, (double)def);
}

/* Claims and answers the master's messages until every task is done or
 * failed. */
static void collect(struct review_ctx *x)
{
	struct agent *m = x->m;
	struct task *tasks = x->tasks;
	cJSON *const *inputs = x->inputs;
	int64_t timeout_s = x->timeout_s;
	const struct review_progress *p = x->p;
	/* triggers of other runs that come meanwhile: given back at the end */
	struct bus_delivery *held[16];
	size_t nheld = 0;
	/* what the run last said of each task: saved again when it changes */
	char said[REVIEW_NPARTS][48] = { { 0 } };
	for (;;) {
		if (x->run)
			agent_heartbeat_busy(m);
		bool open = false;
		int64_t now = util_now_ns();
		for (int i = 0; i < REVIEW_NPARTS; i++) {
			struct task *t = &tasks[i];
			if (!t->wanted || t->done || t->failed)
				continue;
			open = true;
			if (t->retry_at_ns && now >= t->retry_at_ns) {
				char *err = NULL;
				if (p && p->alive && p->reassign && !p->alive(p->crew, t->part) &&
				    p->reassign(p->crew, t->part) == 1) {
					review_progress_say(p, "%s: reassigned to a fresh %s (the last one stopped)",
						 review_part_agent(t->part), review_part_agent(t->part));
					log_write(m->log, LOG_DECISIONS, LOG_WARN, "review_reassigned", NULL,
						  "%s stopped: a fresh one takes attempt %d",
						  review_part_agent(t->part), t->attempts + 1);
				}
				review_progress_say(p, "%s: attempt %d", review_part_agent(t->part), t->attempts + 1);
				if (send_task(m, t, inputs[i], timeout_s, &err) < 0) {
					attempt_failed(m, t, 500, err ? err : "send failed", true, p);
					free(err);
				}
			} else if (t->deadline_ns && now > t->deadline_ns) {
				char *why = xasprintf("no answer within %lld s (transient)", (long long)timeout_s);
				attempt_failed(m, t, 500, why, true, p);
				free(why);
			} else if (t->deadline_ns && p && p->alive && !p->alive(p->crew, t->part)) {
				char *why = xasprintf("%s stopped without answering (transient)",
						      review_part_agent(t->part));
				attempt_failed(m, t, 500, why, true, p);
				free(why);
			}
		}
		bool changed = false;
		for (int i = 0; i < REVIEW_NPARTS; i++) {
			char now_s[48];
			snprintf(now_s, sizeof(now_s), "%d %d %d %d %d %d %d", tasks[i].done, tasks[i].failed,
				 tasks[i].attempts, tasks[i].retry_at_ns != 0, tasks[i].accepted,
				 tasks[i].pct, tasks[i].paused);
			if (strcmp(now_s, said[i])) {
				changed = true;
				util_strlcpy(said[i], now_s, sizeof(said[i]));
			}
		}
		if (changed)
			review_ctx_sync(x, NULL);
		if (!open || atomic_load(&m->env->stop) || (p && p->cancel && atomic_load(p->cancel))) {
			for (size_t i = 0; i < nheld; i++)
				if (bus_giveback(m->cons, &held[i], NULL) < 0)
					bus_delivery_free(&held[i]);
			return;
		}
		struct bus_delivery *d = NULL;
		char *err = NULL;
		int k = bus_claim(m->cons, &d, &err);
		if (k < 0) {
			log_write(m->log, LOG_ERRORS, LOG_ERROR, "bus_error", NULL, "%s", err ? err : "?");
			free(err);
			bus_consumer_wait(m->cons, 200);
			continue;
		}
		if (k == 0) {
			bus_consumer_wait(m->cons, 100);
			continue;
		}
		if (review_is_control(d->msg)) {
			review_control(x, m, d->msg);
		} else if (d->msg->type == MSG_TASK_ASSIGNMENT && nheld < ARRAY_SIZE(held) &&
			   !strcmp(jstr_or(d->msg->content, "task_type", ""), REVIEW_TASK_RUN)) {
			log_write(m->log, LOG_EVENTS, LOG_INFO, "review_queued", NULL,
				  "run %s waits: run %s is under way",
				  jstr_or(d->msg->content, "run_id", "?"), jstr_or(x->run, "run_id", "?"));
			held[nheld++] = d;
			continue;
		} else {
			on_message(m, tasks, d->msg, p);
		}
		if (bus_ack(m->cons, &d, &err) < 0) {
			log_write(m->log, LOG_ERRORS, LOG_ERROR, "ack_failed", NULL, "%s", err ? err : "?");
			free(err);
			bus_delivery_free(&d);
		}
	}
}

static bool glob_any(const cJSON *globs, const char *path)
{
	const cJSON *g;
	cJSON_ArrayForEach(g, globs)
		if (cJSON_IsString(g) && fnmatch(g->valuestring, path, 0) == 0)
			return true;
	return false;
}

/* The files git says changed since rev under root (tracked changes and
 * untracked files), as an object used as a set; NULL with *err (400). */
static cJSON *changed_since(const char *root, const char *rev, char **err)
{
	if (rev[0] == '-')
		return err_set(err, "params.since: must be a revision, not an option"), NULL;
	const char *diff[] = { "git", "diff", "--name-only", "--relative", "--no-renames", rev, "--", NULL };
	const char *others[] = { "git", "ls-files", "--others", "--exclude-standard", NULL };
	cJSON *set = cJSON_CreateObject();
	for (int k = 0; k < 2; k++) {
		char *out = NULL, *eo = NULL, *e2 = NULL;
		int st = 0;
		if (review_exec(k ? others : diff, root, 60000, 16u << 20, &out, &eo, &st, &e2) < 0 || st) {
			char *first = eo ? util_sanitize(eo, strlen(eo) > 160 ? 160 : strlen(eo), false)
					 : xstrdup(e2 ? e2 : "?");
			err_set(err, "params.since: not a revision of a git work tree at the codebase (git: %s)",
				first);
			free(first);
			free(out);
			free(eo);
			free(e2);
			cJSON_Delete(set);
			return NULL;
		}
		char *save = NULL;
		for (char *ln = strtok_r(out, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save))
			if (!cJSON_GetObjectItemCaseSensitive(set, ln))
				cJSON_AddTrueToObject(set, ln);
		free(out);
		free(eo);
	}
	return set;
}

/* Applies include, exclude and since to scan's files; 0, or 400 (*err). */
int review_scan_filter(cJSON *scan, const cJSON *params, char **err)
{
	const cJSON *inc = cJSON_GetObjectItemCaseSensitive(params, "include");
	const cJSON *exc = cJSON_GetObjectItemCaseSensitive(params, "exclude");
	const cJSON *since = cJSON_GetObjectItemCaseSensitive(params, "since");
	if (!inc && !exc && !since)
		return 0;
	cJSON *set = NULL;
	if (cJSON_IsString(since) && !(set = changed_since(jstr_or(scan, "root", ""), since->valuestring, err)))
		return 400;
	cJSON *files = cJSON_GetObjectItemCaseSensitive(scan, "files");
	int before = cJSON_GetArraySize(files);
	double bytes = 0;
	for (cJSON *f = files->child; f;) {
		cJSON *next = f->next;
		const char *p = jstr_or(f, "path", "");
		if ((inc && !glob_any(inc, p)) || (exc && glob_any(exc, p)) ||
		    (set && !cJSON_GetObjectItemCaseSensitive(set, p)))
			cJSON_Delete(cJSON_DetachItemViaPointer(files, f));
		else
			bytes += cJSON_GetNumberValue(cJSON_GetObjectItem(f, "bytes"));
		f = next;
	}
	cJSON_SetNumberValue(cJSON_GetObjectItem(scan, "bytes"), bytes);
	char *n = xasprintf("%d of %d files selected by%s%s%s%s", cJSON_GetArraySize(files), before,
			    inc ? " include" : "", exc ? " exclude" : "", set ? " since " : "",
			    set ? since->valuestring : "");
	char *clean = util_sanitize(n, strlen(n), false);
	cJSON_AddItemToArray(cJSON_GetObjectItem(scan, "notes"), cJSON_CreateString(clean));
	free(clean);
	free(n);
	cJSON_Delete(set);
	return 0;
}

static bool same_place(const cJSON *a, const cJSON *b)
{
	return !strcmp(jstr_or(a, "file", ""), jstr_or(b, "file", "")) &&
	       cJSON_GetObjectItem(a, "line")->valuedouble == cJSON_GetObjectItem(b, "line")->valuedouble;
}

/* The run of x ends: the aggregate and the error (either may be NULL)
 * kept with it, done or failed. */
static void run_end(struct review_ctx *x, const cJSON *agg, const cJSON *error)
{
	if (!x->run)
		return;
	char now[40];
	util_iso8601(util_now_ns(), now, sizeof(now));
	jset_str(x->run, "finished_at", now);
	/* a task retried after the run ended: its part merged into the rest */
	cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(x->run, "aggregate");
	cJSON_DeleteItemFromObjectCaseSensitive(x->run, "error");
	if (agg)
		cJSON_AddItemToObject(x->run, "aggregate", old && x->tasks ?
				      review_aggregate_merge(old, agg, x->tasks) : cJSON_Duplicate(agg, true));
	cJSON_Delete(old);
	if (error)
		cJSON_AddItemToObject(x->run, "error", cJSON_Duplicate(error, true));
	cJSON *t;
	if (!x->tasks)
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(x->run, "tasks")) {
			/* refused before its tasks were sent: none of them ran */
			jset_str(t, "status", "failed");
			jset_str(t, "error", jstr_or(error, "error", "the review did not start"));
		}
	review_ctx_sync(x, error ? "failed" : "done");
	cJSON_Delete(x->run);
	x->run = NULL;
}

int review_master_run(struct agent *m, const cJSON *input, const struct review_progress *p,
		      cJSON **aggregate, cJSON **error)
{
	*aggregate = NULL;
	*error = NULL;
	struct review_ctx x = { .m = m, .p = p };
	if (p && p->run_id) {
		/* a trigger wrote it already (starting): a refusal below is its
		 * end; else the run is made once the request is accepted */
		x.run = review_run_load(m->env->data_dir, p->run_id);
		if (x.run)
			review_ctx_sync(&x, "reviewing");
	}
	struct msg_errors e = { 0 };
	if (review_request_check(input, &e)) {
		char *why = msg_errors_join(&e);
		msg_errors_release(&e);
		*error = error_new(400, why);
		log_write(m->log, LOG_ERRORS, LOG_WARN, "review_rejected", *error, "400 %s", why);
		free(why);
		run_end(&x, NULL, *error);
		return 400;
	}
	const char *id = jstr_or(input, "id", "");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(input, "params");
	char *root = review_resolve(m->env->data_dir, id);
	if (!root) {
		char *why = xasprintf("unknown codebase \"%s\": neither a registered name (madf review "
				      "add NAME PATH) nor a directory", id);
		*error = error_new(404, why);
		log_write(m->log, LOG_ERRORS, LOG_WARN, "review_rejected", *error, "404 %s", why);
		free(why);
		run_end(&x, NULL, *error);
		return 404;
	}
	struct review_limits lim;
	review_limits_default(&lim);
	lim.max_files = param_long(params, "max_files", lim.max_files);
	lim.max_bytes = param_long(params, "max_bytes", lim.max_bytes);
	lim.max_file_bytes = param_long(params, "max_file_bytes", lim.max_file_bytes);
	review_progress_say(p, "scanning %s", root);
	cJSON *scan = NULL;
	char *err = NULL;
	int st = review_scan(root, &lim, &scan, &err);
	free(root);
	if (st) {
		*error = error_new(st, err ? err : "?");
		log_write(m->log, LOG_ERRORS, LOG_WARN, "review_rejected", *error, "%d %s", st,
			  err ? err : "?");
		free(err);
		run_end(&x, NULL, *error);
		return st;
	}
	if ((st = review_scan_filter(scan, params, &err)) != 0) {
		*error = error_new(st, err ? err : "?");
		log_write(m->log, LOG_ERRORS, LOG_WARN, "review_rejected", *error, "%d %s", st,
			  err ? err : "?");
		free(err);
		cJSON_Delete(scan);
		run_end(&x, NULL, *error);
		return st;
	}
	int64_t timeout_s = param_long(params, "timeout_s", 600);
	struct task tasks[REVIEW_NPARTS];
	cJSON *inputs[REVIEW_NPARTS] = { 0 };
	memset(tasks, 0, sizeof(tasks));
	const cJSON *ag = cJSON_GetObjectItemCaseSensitive(params, "agents"), *c;
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		tasks[i].part = (enum review_part)i;
		tasks[i].wanted = !ag;
		tasks[i].attempt_log = cJSON_CreateArray();
	}
	cJSON_ArrayForEach(c, ag)
		tasks[review_part_from_name(c->valuestring)].wanted = true;
	/* a run that had attempts (a task retried after it ended) counts on */
	for (int i = 0; x.run && i < REVIEW_NPARTS; i++) {
		long at; /* the run's file may have been edited: no cast of any number */
		if (jint(review_run_task(x.run, review_part_name(tasks[i].part)), "attempts", 0,
			 INT_MAX / 2, &at))
			tasks[i].attempts = (int)at;
	}
	review_progress_say(p, "%d files, %.0f bytes", cJSON_GetArraySize(cJSON_GetObjectItem(scan, "files")),
		 cJSON_GetObjectItem(scan, "bytes")->valuedouble);
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		if (!tasks[i].wanted)
			continue;
		inputs[i] = review_worker_input(scan, params, (enum review_part)i);
		if (send_task(m, &tasks[i], inputs[i], timeout_s, &err) < 0) {
			attempt_failed(m, &tasks[i], 500, err ? err : "send failed", true, p);
			free(err);
			err = NULL;
		} else {
			review_progress_say(p, "%s: assigned", review_part_agent(tasks[i].part));
		}
	}
	x.tasks = tasks;
	x.inputs = inputs;
	x.timeout_s = timeout_s;
	if (!x.run && p && p->run_id) {
		x.run = review_run_new(p->run_id, input);
		review_progress_say(p, "run %s (madf tasks %s lists its tasks)", p->run_id, p->run_id);
		jset_str(x.run, "status", "reviewing");
	}
	if (x.run) {
		jset_str(x.run, "root", jstr_or(scan, "root", ""));
		review_ctx_sync(&x, NULL);
	}
	collect(&x);
	if (p && p->cancel && atomic_load(p->cancel)) {
		for (int i = 0; i < REVIEW_NPARTS; i++) {
			cJSON_Delete(tasks[i].result);
			cJSON_Delete(tasks[i].attempt_log);
			cJSON_Delete(inputs[i]);
			tasks[i].result = tasks[i].attempt_log = inputs[i] = NULL;
		}
		cJSON_Delete(scan);
		*error = error_new(499, "cancelled");
		log_write(m->log, LOG_ERRORS, LOG_WARN, "review_cancelled", NULL, "%s: cancelled", id);
		run_end(&x, NULL, *error);
		return 499;
	}

	/* aggregate */
	cJSON *agg = cJSON_CreateObject();
	cJSON *docs = cJSON_AddObjectToObject(agg, "documentation");
	cJSON *lists[REVIEW_NPARTS] = { NULL };
	for (int i = REVIEW_DEBT; i < REVIEW_NPARTS; i++)
		lists[i] = cJSON_AddArrayToObject(agg, review_part_name((enum review_part)i));
	cJSON *rv = cJSON_AddObjectToObject(agg, "review");
	cJSON_AddStringToObject(rv, "codebase", id);
	cJSON_AddStringToObject(rv, "root", jstr_or(scan, "root", ""));
	cJSON_AddNumberToObject(rv, "files", cJSON_GetArraySize(cJSON_GetObjectItem(scan, "files")));
	cJSON_AddNumberToObject(rv, "bytes", cJSON_GetObjectItem(scan, "bytes")->valuedouble);
	cJSON *notes = cJSON_Duplicate(cJSON_GetObjectItem(scan, "notes"), true);
	cJSON_AddItemToObject(rv, "notes", notes);
	cJSON *tools = cJSON_AddObjectToObject(rv, "tools");
	cJSON *agents = cJSON_AddObjectToObject(rv, "agents");
	int worst = 0;
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		struct task *t = &tasks[i];
		if (!t->wanted)
			continue;
		cJSON *a = cJSON_AddObjectToObject(agents, review_part_name(t->part));
		cJSON_AddStringToObject(a, "status", t->done ? "completed" : t->cancelled ? "cancelled" :
					"failed");
		cJSON_AddNumberToObject(a, "attempts", t->attempts);
		cJSON_AddItemToObject(a, "errors", t->attempt_log);
		t->attempt_log = NULL;
		if (t->cancelled) {
			review_note(notes, "%s: cancelled by the operator after %d attempt%s: its "
				    "findings are not in this review", review_part_name(t->part),
				    t->attempts, t->attempts == 1 ? "" : "s");
			continue;
		}
		if (!t->done) {
			if (t->status == 400 || (worst != 400 && t->status > worst))
				worst = t->status ? t->status : 500;
			continue;
		}
		const cJSON *n2;
		cJSON_ArrayForEach(n2, cJSON_GetObjectItem(t->result, "notes"))
			cJSON_AddItemToArray(notes, cJSON_Duplicate(n2, false));
		cJSON_ArrayForEach(n2, cJSON_GetObjectItem(t->result, "tools"))
			if (!cJSON_GetObjectItemCaseSensitive(tools, n2->string) ||
			    strcmp(n2->valuestring, "ok"))
				cJSON_DeleteItemFromObjectCaseSensitive(tools, n2->string),
				cJSON_AddItemToObject(tools, n2->string, cJSON_Duplicate(n2, false));
		if (cJSON_IsObject(cJSON_GetObjectItem(t->result, "llm")))
			cJSON_AddItemToObject(a, "llm", cJSON_DetachItemFromObject(t->result, "llm"));
		if (t->part == REVIEW_DOCUMENTATION) {
			cJSON *d = cJSON_DetachItemFromObjectCaseSensitive(t->result, "documentation");
			cJSON_ReplaceItemInObjectCaseSensitive(agg, "documentation", d);
			docs = d;
		} else {
			cJSON *f = cJSON_DetachItemFromObjectCaseSensitive(t->result, "findings");
			cJSON_ReplaceItemInObjectCaseSensitive(agg, review_part_name(t->part), f);
			lists[i] = f;
		}
	}
	(void)docs;
	/* an improvement on a line the critical agent reports is that finding */
	if (lists[REVIEW_IMPROVEMENT] && lists[REVIEW_CRITICAL]) {
		for (cJSON *f = lists[REVIEW_IMPROVEMENT]->child; f;) {
			cJSON *next = f->next;
			const cJSON *k;
			cJSON_ArrayForEach(k, lists[REVIEW_CRITICAL])
				if (same_place(f, k)) {
					cJSON_Delete(cJSON_DetachItemViaPointer(lists[REVIEW_IMPROVEMENT], f));
					break;
				}
			f = next;
		}
	}
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		cJSON_Delete(tasks[i].result);
		cJSON_Delete(tasks[i].attempt_log);
		cJSON_Delete(inputs[i]);
		tasks[i].result = tasks[i].attempt_log = inputs[i] = NULL;
	}
	cJSON_Delete(scan);
	*aggregate = agg;
	if (worst) {
		struct sbuf b;
		sbuf_init(&b);
		for (int i = 0; i < REVIEW_NPARTS; i++)
			if (tasks[i].wanted && !tasks[i].done && !tasks[i].cancelled)
				sbuf_addf(&b, "%s%s", b.len ? ", " : "", review_part_agent(tasks[i].part));
		char *why = xasprintf("%s: %s", worst == 400 ? "invalid input for" : "failed", b.data);
		/* a worker's 400 names its field: pass it on */
		for (int i = 0; worst == 400 && i < REVIEW_NPARTS; i++) {
			const cJSON *ag2 = cJSON_GetObjectItem(cJSON_GetObjectItem(agents,
						review_part_name(tasks[i].part)), "errors");
			const cJSON *last = ag2 ? cJSON_GetArrayItem(ag2, cJSON_GetArraySize(ag2) - 1) : NULL;
			if (tasks[i].wanted && !tasks[i].done && tasks[i].status == 400 && last) {
				free(why);
				why = xasprintf("params.checklist.%s%s%s", review_part_name(tasks[i].part),
						strncmp(jstr_or(last, "error", ""), "checklist", 9) ? ": " : "",
						strncmp(jstr_or(last, "error", ""), "checklist", 9) ? jstr_or(last, "error", "")
						: jstr_or(last, "error", "") + 9);
				break;
			}
		}
		sbuf_release(&b);
		*error = error_new(worst, why);
		log_write(m->log, LOG_ERRORS, LOG_ERROR, "review_failed", *error, "%d %s", worst, why);
		free(why);
		run_end(&x, agg, *error);
		return worst;
	}
	log_write(m->log, LOG_EVENTS, LOG_INFO, "review_done", NULL, "%s reviewed", id);
	run_end(&x, agg, NULL);
	return 0;
}
