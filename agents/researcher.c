/* The research agents. research_agent_1 is the market-data specialist,
 * research_agent_2 the news specialist; each can do the other's tasks, so
 * the product_manager can reassign work between them (seed 002, sequence
 * 2). A task is accepted into a queue (state), then worked from tick():
 * task_progress, the analysis through the tool registry, research_result. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/events.h"
#include "agents/data_tools.h"
#include "agents/llm_agent.h"
#include "agents/researcher_priv.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define NS 1000000000LL

static cJSON *tasks_of(struct agent *a)
{
	cJSON *t = cJSON_GetObjectItem(a->state, "tasks");
	if (!cJSON_IsObject(t)) {
		cJSON_DeleteItemFromObject(a->state, "tasks");
		t = cJSON_AddObjectToObject(a->state, "tasks");
	}
	return t;
}

/* Marks a task as changed by this process (see agent_save_state). */
static void task_touch(struct agent *a, cJSON *t)
{
	cJSON_DeleteItemFromObjectCaseSensitive(t, "updated_ns");
	cJSON_AddNumberToObject(t, "updated_ns", (double)util_now_ns());
	cJSON_DeleteItemFromObjectCaseSensitive(t, "owner");
	cJSON_AddStringToObject(t, "owner", bus_owner(a->bus));
}

static int queued_count(cJSON *tasks)
{
	int n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, tasks) {
		const char *s = jstr(t, "status");
		if (s && !strcmp(s, "queued"))
			n++;
	}
	return n;
}

/* The tasks this process holds queued: what its capacity bounds. Several
 * processes of one role share the state file (and so see each other's
 * tasks); each works, and counts, only its own. */
static int own_queued_count(struct agent *a, cJSON *tasks)
{
	int n = 0;
	const char *me = bus_owner(a->bus);
	const cJSON *t;
	cJSON_ArrayForEach(t, tasks) {
		const char *s = jstr(t, "status"), *owner = jstr(t, "owner");
		if (s && !strcmp(s, "queued") && (!owner || !strcmp(owner, me)))
			n++;
	}
	return n;
}

static void send_acceptance(struct agent *a, const struct msg *m, const char *status,
			    const char *reason, int64_t eta_ns, int queued)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", m->id);
	cJSON_AddStringToObject(c, "status", status);
	char ts[40];
	util_iso8601(eta_ns, ts, sizeof(ts));
	cJSON_AddStringToObject(c, "estimated_completion", ts);
	double cap = (double)queued / (double)(a->env->capacity > 0 ? a->env->capacity : 1);
	cJSON_AddNumberToObject(c, "agent_capacity", cap > 1 ? 1 : cap);
	if (reason)
		cJSON_AddStringToObject(c, "rejection_reason", reason);
	agent_send(a, m->from, MSG_TASK_ACCEPTANCE, c, NULL, m->id, m->correlation_id,
		   PRIO_HIGH, NULL, NULL);
}

/* An error_report about task_msg. A permanent error (the data has nothing
 * for the pair and window: retrying or another agent cannot help) says so
 * with context.retryable false, and is not the agent's failure: it goes to
 * the decisions log, not to the errors the learning system counts. */
static void send_error(struct agent *a, const char *to, const char *task_msg,
		       const char *corr, const char *type, const char *text,
		       const char *kind, const char *pair, bool permanent)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "error_type", type);
	cJSON_AddStringToObject(c, "error_message", text);
	cJSON *ctx = cJSON_AddObjectToObject(c, "context");
	if (kind)
		cJSON_AddStringToObject(ctx, "task_kind", kind);
	if (pair)
		cJSON_AddStringToObject(ctx, "pair", pair);
	cJSON_AddBoolToObject(ctx, "retryable", !permanent);
	cJSON_AddStringToObject(c, "recovery_action", permanent ?
				"none: the data has no quote for the pair in the window" :
				"reassign the task to another agent");
	cJSON_AddStringToObject(c, "impact_level", permanent ? "medium" : "high");
	cJSON_AddStringToObject(c, "related_task_id", task_msg);
	agent_send(a, to, MSG_ERROR_REPORT, c, NULL, task_msg, corr, PRIO_HIGH, NULL, NULL);
	if (permanent) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "error_type", type);
		cJSON_AddStringToObject(f, "task_id", task_msg);
		if (pair)
			cJSON_AddStringToObject(f, "pair", pair);
		log_write(a->log, LOG_DECISIONS, LOG_WARN, "task_no_data", f, "%s", text);
		cJSON_Delete(f);
		return;
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "error_type", type);
	/* The learning system counts by "market" and "news". */
	cJSON_AddStringToObject(f, "task_kind", !kind ? "" : !strcmp(kind, WF_TASK_MARKET) ?
				"market" : !strcmp(kind, WF_TASK_NEWS) ? "news" : kind);
	cJSON_AddStringToObject(f, "task_id", task_msg);
	if (pair)
		cJSON_AddStringToObject(f, "pair", pair);
	log_write(a->log, LOG_ERRORS, LOG_ERROR, "task_failed", f, "%s", text);
	cJSON_Delete(f);
	a->errors_today++;
}

/* The operator approved more budget for a paused task: it is queued
 * again and resumes its conversation with the model. Or (skip) the
 * operator dropped the model's analysis: queued again, it finishes with
 * the figures and findings computed from the data. */
static void approve(struct agent *a, const struct msg *m, bool skip)
{
	const char *id = jstr(m->content, "approve_id");
	cJSON *t = id ? cJSON_GetObjectItem(tasks_of(a), id) : NULL;
	const char *st = t ? jstr(t, "status") : NULL;
	if (!st || strcmp(st, "awaiting_approval")) {
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "approval_ignored", NULL,
			  "%s for %s ignored: the task is %s", skip ? "skip" : "budget approval",
			  id ? id : "?", st ? st : "unknown to this agent");
		return;
	}
	if (skip) {
		cJSON *l = cJSON_GetObjectItem(t, "llm");
		if (!cJSON_IsObject(l)) {
			cJSON_DeleteItemFromObject(t, "llm");
			l = cJSON_AddObjectToObject(t, "llm");
		}
		cJSON_DeleteItemFromObject(l, "skipped_by");
		cJSON_AddStringToObject(l, "skipped_by", m->from);
		cJSON_ReplaceItemInObject(t, "status", cJSON_CreateString("queued"));
		task_touch(a, t);
		agent_save_state(a, NULL);
		a->active_tasks = queued_count(tasks_of(a));
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "analysis_skipped", NULL,
			  "%s goes on without the model's analysis: skipped by %s", id, m->from);
		return;
	}
	const struct llm_agent_settings *s = a->env->llm;
	double xt = jnum(m->content, "extra_tokens", -1), xc = jnum(m->content, "extra_cost_usd", -1);
	if (xt < 0)
		xt = s && s->token_budget > 0 ? (double)s->token_budget : 0;
	if (xc < 0)
		xc = s && s->cost_budget > 0 ? s->cost_budget : 0;
	cJSON *l = cJSON_GetObjectItem(t, "llm");
	if (!cJSON_IsObject(l)) {
		cJSON_DeleteItemFromObject(t, "llm");
		l = cJSON_AddObjectToObject(t, "llm");
	}
	double et = jnum(l, "extra_tokens", 0) + xt, ec = jnum(l, "extra_cost_usd", 0) + xc;
	cJSON_DeleteItemFromObject(l, "extra_tokens");
	cJSON_DeleteItemFromObject(l, "extra_cost_usd");
	cJSON_AddNumberToObject(l, "extra_tokens", et);
	cJSON_AddNumberToObject(l, "extra_cost_usd", ec);
	cJSON_ReplaceItemInObject(t, "status", cJSON_CreateString("queued"));
	task_touch(a, t);
	agent_save_state(a, NULL);
	a->active_tasks = queued_count(tasks_of(a));
	log_write(a->log, LOG_DECISIONS, LOG_INFO, "budget_approved", NULL,
		  "%s resumes: %s approved %.0f more tokens and $%.4f", id, m->from, xt, xc);
}

static void task_compact(cJSON *t);

static int researcher_handle(struct agent *a, const struct msg *m, char **err)
{
	(void)err;
	if (m->type != MSG_TASK_ASSIGNMENT)
		return AGENT_DONE; /* broadcasts and the like: nothing to do */
	cJSON *tasks = tasks_of(a);
	const cJSON *c = m->content;
	const char *kind = jstr(c, "task_type");
	const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(c, "target_pairs");
	const cJSON *p0 = cJSON_GetArrayItem(pairs, 0);
	const char *pair = cJSON_IsString(p0) ? p0->valuestring : NULL;
	bool market = kind && !strcmp(kind, WF_TASK_MARKET);
	bool news = kind && !strcmp(kind, WF_TASK_NEWS);
	if (kind && !strcmp(kind, WF_TASK_CANCEL)) {
		/* The product_manager took the task back (it missed its deadline,
		 * or the operator reassigned, held or cancelled it): drop it if
		 * it is still waiting (queued, or paused for approval). */
		const char *id = jstr(c, "cancel_id");
		cJSON *t = id ? cJSON_GetObjectItem(tasks, id) : NULL;
		const char *st = t ? jstr(t, "status") : NULL;
		char was[32];
		snprintf(was, sizeof(was), "%s", st ? st : "unknown to this agent");
		if (st && (!strcmp(st, "queued") || !strcmp(st, "awaiting_approval"))) {
			/* replaces (frees) st */
			cJSON_ReplaceItemInObject(t, "status", cJSON_CreateString("cancelled"));
			task_touch(a, t);
			agent_save_state(a, NULL);
		} else if (!t && id && msg_valid_id(id)) {
			/* The cancel (urgent) overtook its assignment, still in the
			 * inbox behind the work of this agent: the assignment, when
			 * it comes, is seen as done with and not worked. */
			t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "status", "cancelled");
			task_touch(a, t);
			cJSON_AddItemToObject(tasks, id, t);
			agent_save_state(a, NULL);
		}
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "task_cancelled", NULL,
			  "%s cancelled by %s (was %s)", id ? id : "?", m->from, was);
		a->active_tasks = queued_count(tasks);
		return AGENT_DONE;
	}
	if (kind && (!strcmp(kind, LLM_TASK_APPROVE) || !strcmp(kind, LLM_TASK_SKIP))) {
		approve(a, m, !strcmp(kind, LLM_TASK_SKIP));
		return AGENT_DONE;
	}
	const cJSON *seen = cJSON_GetObjectItem(tasks, m->id);
	if (seen && jstr_is(seen, "status", "cancelled") && !jstr(seen, "kind")) {
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "task_cancelled", NULL,
			  "%s dropped: it arrived after its cancel", m->id);
		return AGENT_DONE;
	}
	if (seen) {
		/* Delivered again (at least once): answered already. */
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "duplicate_task", NULL,
			  "task %s seen before; not done twice", m->id);
		return AGENT_DONE;
	}
	if ((!market && !news) || !pair) {
		send_error(a, m->from, m->id, m->correlation_id, "data_format",
			   "unknown task: task_type must be market_data or news_analysis "
			   "with one target pair", kind, pair, false);
		return AGENT_DONE;
	}
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "kind", kind);
	cJSON_AddStringToObject(t, "pair", pair);
	cJSON_AddStringToObject(t, "from", m->from);
	if (m->correlation_id)
		cJSON_AddStringToObject(t, "correlation_id", m->correlation_id);
	if (jstr(c, "logical_task_id"))
		cJSON_AddStringToObject(t, "logical_task_id", jstr(c, "logical_task_id"));
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(c, "window");
	cJSON_AddItemToObject(t, "window", w ? cJSON_Duplicate(w, 1) : cJSON_CreateObject());
	const char *deadline = jstr(c, "deadline");
	int64_t dl = 0;
	if (deadline)
		msg_parse_time(deadline, &dl);
	cJSON_AddNumberToObject(t, "deadline_ns", (double)dl);
	cJSON_AddNumberToObject(t, "accepted_ns", (double)util_now_ns());
	task_touch(a, t);
	if (a->fault == FAULT_ERROR) {
		cJSON_AddStringToObject(t, "status", "failed");
		cJSON_AddItemToObject(tasks, m->id, t);
		agent_save_state(a, NULL);
		send_error(a, m->from, m->id, m->correlation_id, "api_failure",
			   "injected fault: the data source failed", kind, pair, false);
		return AGENT_DONE;
	}
	int q = own_queued_count(a, tasks);
	if (q >= a->env->capacity) {
		cJSON_AddStringToObject(t, "status", "rejected");
		task_compact(t);
		cJSON_AddItemToObject(tasks, m->id, t);
		agent_save_state(a, NULL);
		char reason[128];
		snprintf(reason, sizeof(reason), "at capacity: %d tasks queued (capacity %d)",
			 q, a->env->capacity);
		send_acceptance(a, m, "rejected", reason, util_now_ns(), q);
		log_write(a->log, LOG_DECISIONS, LOG_WARN, "task_rejected", NULL, "%s: %s",
			  m->id, reason);
		return AGENT_DONE;
	}
	cJSON_AddStringToObject(t, "status", "queued");
	/* The slow fault answers a second after the deadline. */
	int64_t not_before = a->fault == FAULT_SLOW && dl ? dl + NS : 0;
	cJSON_AddNumberToObject(t, "not_before_ns", (double)not_before);
	cJSON_AddItemToObject(tasks, m->id, t);
	agent_save_state(a, NULL);
	send_acceptance(a, m, "queued", NULL, util_now_ns() + (q + 1) * NS, q + 1);
	a->active_tasks = queued_count(tasks);
	log_write(a->log, LOG_DECISIONS, LOG_INFO, "task_accepted", NULL,
		  "accepted %s task %s for %s", kind, m->id, pair);
	if (a->fault == FAULT_CRASH && !cJSON_GetObjectItem(a->state, "crashed_once")) {
		cJSON_AddTrueToObject(a->state, "crashed_once");
		agent_save_state(a, NULL);
		a->crashed = true;
	}
	return AGENT_DONE;
}

void researcher_progress(struct agent *a, const char *task, const char *to, const char *corr,
		     double pct, const char *step)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", task);
	cJSON_AddNumberToObject(c, "percent_complete", pct);
	cJSON_AddStringToObject(c, "current_step", step);
	agent_send(a, to, MSG_TASK_PROGRESS, c, NULL, task, corr, PRIO_NORMAL, NULL, NULL);
}

void researcher_add_finding(cJSON *arr, const char *id, const char *kind, const char *pair,
			const char *text, cJSON *sources, cJSON *data)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "id", id);
	cJSON_AddStringToObject(f, "kind", kind);
	cJSON_AddStringToObject(f, "pair", pair);
	cJSON_AddStringToObject(f, "text", text);
	cJSON_AddItemToObject(f, "sources", sources ? sources : cJSON_CreateArray());
	if (data)
		cJSON_AddItemToObject(f, "data", data);
	cJSON_AddItemToArray(arr, f);
}

void researcher_pair_code(const char *pair, char *buf, size_t size)
{
	size_t k = 0;
	for (const char *p = pair; *p && k + 1 < size; p++)
		if (*p != '/')
			buf[k++] = *p;
	buf[k] = '\0';
}

static cJSON *num_or_null(double v, bool ok)
{
	return ok && isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* A market finding's data beyond the first: the window it was computed
 * over, for the validator to compute it again. */
static cJSON *stats_data(int32_t ws, int32_t we)
{
	char a[16], b[16];
	market_day_format(ws, a, sizeof(a));
	market_day_format(we, b, sizeof(b));
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "window_start", a);
	cJSON_AddStringToObject(d, "window_end", b);
	return d;
}

/* Market figures of one pair over the window: 0, -1 with *err, or -2 with
 * *err when the data has no quote for the pair in the window (a permanent
 * error: "no data for PAIR in SOURCE between START and END"). */
static int work_market(struct agent *a, const char *pair, int32_t ws, int32_t we,
		       cJSON *raw, cJSON *findings, cJSON *sources, cJSON *warnings,
		       int *points, double *freshness_h, double *confidence, char **err)
{
	char d0[16], d1[16], code[16];
	market_day_format(ws - ANALYTICS_HISTORY_DAYS, d0, sizeof(d0));
	market_day_format(we, d1, sizeof(d1));
	researcher_pair_code(pair, code, sizeof(code));
	cJSON *res;
	if (data_fx_rates(a, pair, d0, d1, &res, err) < 0)
		return -1;
	struct fx_series s;
	if (data_points_to_series(res, &s, err) < 0) {
		cJSON_Delete(res);
		return -1;
	}
	cJSON_AddItemToArray(sources, cJSON_CreateString(s.source));
	if (market_window_check(&s, ws, we, err) < 0) {
		/* The tool sends the window's points only; it names the
		 * series' first and last days. */
		const char *first = jstr(res, "first"), *last = jstr(res, "last");
		char wend[16], wstart[16];
		market_day_format(we, wend, sizeof(wend));
		market_day_format(ws, wstart, sizeof(wstart));
		char *more = NULL;
		if (!s.n && first && strlen(first) == 10 && strcmp(first, wend) > 0)
			more = xasprintf("%s (its first quote is on %s)", *err, first);
		else if (!s.n && last && strlen(last) == 10 && strcmp(last, wstart) < 0)
			more = xasprintf("%s (its last quote is on %s)", *err, last);
		if (more) {
			free(*err);
			*err = more;
		}
		cJSON_Delete(res);
		market_series_release(&s);
		return -2; /* no quote in the window: permanent */
	}
	cJSON_Delete(res);
	struct fx_stats st;
	char *serr = NULL;
	if (analytics_fx_stats(&s, ws, we, &st, &serr) < 0) {
		char *w = xasprintf("no quotes for %s in the window (%s)", pair, serr);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
		free(w);
		free(serr);
		cJSON_AddNullToObject(raw, "stats");
		*confidence = 0;
		market_series_release(&s);
		return 0;
	}
	*points = (int)st.nobs;
	*freshness_h = st.freshness_days * 24.0;
	char sd[16], ed[16], hd[16], ld[16], md[16];
	market_day_format(st.start_day, sd, sizeof(sd));
	market_day_format(st.end_day, ed, sizeof(ed));
	market_day_format(st.high_day, hd, sizeof(hd));
	market_day_format(st.low_day, ld, sizeof(ld));
	market_day_format(st.max_move_day, md, sizeof(md));
	cJSON *o = cJSON_AddObjectToObject(raw, "stats");
	cJSON_AddStringToObject(o, "pair", pair);
	cJSON_AddBoolToObject(o, "simulated", s.simulated);
	cJSON *j = cJSON_AddObjectToObject(o, "start");
	cJSON_AddStringToObject(j, "date", sd);
	cJSON_AddNumberToObject(j, "close", st.start_close);
	j = cJSON_AddObjectToObject(o, "end");
	cJSON_AddStringToObject(j, "date", ed);
	cJSON_AddNumberToObject(j, "close", st.end_close);
	cJSON_AddNumberToObject(o, "change_pct", round(st.change_pct * 10000) / 10000);
	cJSON_AddNumberToObject(o, "high", st.high);
	cJSON_AddNumberToObject(o, "low", st.low);
	cJSON_AddItemToObject(o, "volatility_annualised_pct",
			      num_or_null(round(st.vol_pct * 100) / 100, st.vol_ok));
	cJSON_AddItemToObject(o, "zscore", num_or_null(round(st.zscore * 100) / 100, st.z_ok));
	cJSON_AddItemToObject(o, "trend", st.trend == FX_TREND_NONE ? cJSON_CreateNull() :
			      cJSON_CreateString(analytics_trend_name(st.trend)));
	cJSON_AddItemToObject(o, "ma_short", num_or_null(st.ma_short, st.trend != FX_TREND_NONE));
	cJSON_AddItemToObject(o, "ma_long", num_or_null(st.ma_long, st.trend != FX_TREND_NONE));
	if (st.max_move_ok) {
		j = cJSON_AddObjectToObject(o, "largest_move");
		cJSON_AddStringToObject(j, "date", md);
		cJSON_AddNumberToObject(j, "pct", round(st.max_move_pct * 100) / 100);
	}
	cJSON_AddNumberToObject(o, "observations", (double)st.nobs);
	cJSON_AddNumberToObject(o, "freshness_days", st.freshness_days);
	char *src = xasprintf("%s rows %s..%s", s.source, sd, ed);
	cJSON_AddStringToObject(o, "source", src);
	cJSON *closes = cJSON_AddArrayToObject(o, "closes");
	for (size_t i = market_series_lower_bound(&s, ws); i < s.n && s.days[i] <= we; i++) {
		char dd[16];
		market_day_format(s.days[i], dd, sizeof(dd));
		cJSON *pt = cJSON_CreateObject();
		cJSON_AddStringToObject(pt, "date", dd);
		cJSON_AddNumberToObject(pt, "close", s.close[i]);
		cJSON_AddItemToArray(closes, pt);
	}
	/* Findings, each with the numbers it states (the validator checks
	 * them) and the source records. */
	const char *dir = st.change_pct < 0 ? "fell" : st.change_pct > 0 ? "rose" : "was unchanged";
	char id[64], *text;
	cJSON *data, *srcs;
	snprintf(id, sizeof(id), "%s-M1", code);
	text = xasprintf("%s %s %.2f%% over the window, from %.4g on %s to %.4g on %s%s.",
			 pair, dir, fabs(st.change_pct), st.start_close, sd, st.end_close, ed,
			 s.simulated ? " (simulated data)" : "");
	data = cJSON_CreateObject();
	cJSON_AddNumberToObject(data, "start_close", st.start_close);
	cJSON_AddNumberToObject(data, "end_close", st.end_close);
	cJSON_AddStringToObject(data, "start_date", sd);
	cJSON_AddStringToObject(data, "end_date", ed);
	cJSON_AddNumberToObject(data, "change_pct", st.change_pct);
	srcs = cJSON_CreateArray();
	cJSON_AddItemToArray(srcs, cJSON_CreateString(src));
	researcher_add_finding(findings, id, "market", pair, text, srcs, data);
	free(text);
	snprintf(id, sizeof(id), "%s-M2", code);
	if (st.vol_ok)
		text = xasprintf("%s traded between %.4g (%s) and %.4g (%s); realised volatility "
				 "%.1f%% annualised.", pair, st.low, ld, st.high, hd, st.vol_pct);
	else
		text = xasprintf("%s traded between %.4g (%s) and %.4g (%s).", pair, st.low, ld,
				 st.high, hd);
	data = stats_data(ws, we);
	cJSON_AddNumberToObject(data, "high", st.high);
	cJSON_AddStringToObject(data, "high_date", hd);
	cJSON_AddNumberToObject(data, "low", st.low);
	cJSON_AddStringToObject(data, "low_date", ld);
	if (st.vol_ok)
		cJSON_AddNumberToObject(data, "vol_pct", st.vol_pct);
	srcs = cJSON_CreateArray();
	cJSON_AddItemToArray(srcs, cJSON_CreateString(src));
	researcher_add_finding(findings, id, "market", pair, text, srcs, data);
	free(text);
	if (st.z_ok) {
		snprintf(id, sizeof(id), "%s-M3", code);
		text = xasprintf("The week's move is a z-score of %.2f against the %zu weekly "
				 "moves of the previous three months%s.", st.zscore, st.z_samples,
				 fabs(st.zscore) >= 2 ? ": unusually large" : "");
		data = stats_data(ws, we);
		cJSON_AddNumberToObject(data, "zscore", st.zscore);
		srcs = cJSON_CreateArray();
		cJSON_AddItemToArray(srcs, cJSON_CreateString(src));
		researcher_add_finding(findings, id, "market", pair, text, srcs, data);
		free(text);
	}
	if (st.trend != FX_TREND_NONE) {
		snprintf(id, sizeof(id), "%s-M4", code);
		/* said as the report's MA5 vs MA20 column says it: a drift
		 * over four weeks, which the week's move may go against */
		text = xasprintf("MA5 vs MA20: the 5-day average %.4g is %s the 20-day average %.4g "
				 "(the drift over four weeks, not the week's move).", st.ma_short,
				 st.trend == FX_TREND_UP ? "above" : st.trend == FX_TREND_DOWN ? "below" :
				 "level with", st.ma_long);
		data = stats_data(ws, we);
		cJSON_AddNumberToObject(data, "ma_short", st.ma_short);
		cJSON_AddNumberToObject(data, "ma_long", st.ma_long);
		srcs = cJSON_CreateArray();
		cJSON_AddItemToArray(srcs, cJSON_CreateString(src));
		researcher_add_finding(findings, id, "market", pair, text, srcs, data);
		free(text);
	}
	if (st.max_move_ok) {
		snprintf(id, sizeof(id), "%s-M5", code);
		text = xasprintf("Largest daily move: %+.2f%% on %s.", st.max_move_pct, md);
		data = stats_data(ws, we);
		cJSON_AddNumberToObject(data, "max_move_pct", st.max_move_pct);
		cJSON_AddStringToObject(data, "max_move_date", md);
		srcs = cJSON_CreateArray();
		cJSON_AddItemToArray(srcs, cJSON_CreateString(src));
		researcher_add_finding(findings, id, "market", pair, text, srcs, data);
		free(text);
	}
	if (st.freshness_days > 3) {
		char *w = xasprintf("%s: last quote %d days before the window's end", pair,
				    st.freshness_days);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
		free(w);
	}
	*confidence = st.nobs >= 4 ? 0.95 : 0.6;
	free(src);
	market_series_release(&s);
	return 0;
}

struct cancel_watch {
	struct agent *a;
	const char *task_msg;
};

/* Whether the product_manager's cancel of the assignment is on the bus
 * (wf_cancel_id): asked before each model call of a task being worked, as
 * the cancel itself is claimed only once the work returns. */
static bool cancel_sent(void *ctx)
{
	const struct cancel_watch *w = ctx;
	char id[MSG_ID_MAX + 1];
	struct bus_entry e;
	if (!wf_cancel_id(w->task_msg, id, sizeof(id)) || bus_find(w->a->bus, id, &e, NULL) < 0)
		return false;
	bus_entry_release(&e);
	return true;
}

/* LLM mode: the execution model looks at the data through the tools and
 * writes a short analysis; the figures and findings stay those computed
 * from the data. Returns the outcome; *extra gets the result's fields
 * ("analysis", "llm") when the task goes on. The conversation, the
 * task's usage and approved extras live in t's "llm" (the state). */
static enum llm_agent_outcome llm_analysis(struct agent *a, const char *task_msg, cJSON *t,
				     const char *kind, const char *pair, const char *s0,
				     const char *s1, const cJSON *findings, cJSON *warnings,
				     cJSON **extra)
{
	const struct llm_agent_settings *s = a->env->llm;
	bool market = !strcmp(kind, WF_TASK_MARKET);
	cJSON *l = cJSON_GetObjectItem(t, "llm");
	if (!cJSON_IsObject(l)) {
		cJSON_DeleteItemFromObject(t, "llm");
		l = cJSON_AddObjectToObject(t, "llm");
	}
	char *system = xasprintf(
		"You are %s, a %s research agent of madf, the weekly Asia/G10 FX report. "
		"Use the tools to look at the data yourself, then answer with a short analysis "
		"(at most 120 words) of %s over the window. Quote only figures that the tools "
		"returned or the findings state; never invent a number.", a->name,
		market ? "market-data" : "news", pair);
	struct sbuf p;
	sbuf_init(&p);
	sbuf_addf(&p, "Task %s: %s for pair %s, window %s to %s.\n", task_msg, kind, pair, s0, s1);
	sbuf_addf(&p, "Suggested tool calls: fx_rates with {\"pair\": \"%s\", \"start\": \"%s\", "
		  "\"end\": \"%s\"}%s.\n", pair, s0, s1,
		  market ? "" : "; news_search with the same start and end");
	sbuf_addstr(&p, "Findings computed from the data:\n");
	const cJSON *f;
	cJSON_ArrayForEach(f, findings)
		sbuf_addf(&p, "- [%s] %s\n", jstr(f, "id") ? jstr(f, "id") : "?",
			  jstr(f, "text") ? jstr(f, "text") : "");
	struct cancel_watch cw = { a, task_msg };
	struct llm_agent_task lt = {
		.task_id = task_msg, .label = jstr(t, "logical_task_id"), .system = system,
		.prompt = p.data, .all_tools = true, .cancelled = cancel_sent, .cancel_ctx = &cw,
		.extra_tokens = (long)jnum(l, "extra_tokens", 0),
		.extra_cost = jnum(l, "extra_cost_usd", 0),
	};
	llm_agent_usage_from_json(cJSON_GetObjectItem(l, "usage"), &lt.used);
	cJSON *conv = cJSON_DetachItemFromObject(l, "conversation");
	lt.conversation = cJSON_IsArray(conv) ? conv : NULL;
	if (!lt.conversation)
		cJSON_Delete(conv);
	enum llm_agent_outcome o;
	const char *skipped_by = jstr(l, "skipped_by");
	if (skipped_by) {
		/* The operator dropped the analysis when it paused at its budget. */
		o = LLM_RUN_PAUSED;
		lt.error = xasprintf("skipped by %s at its budget (%s)", skipped_by,
				     jstr(l, "paused_because") ? jstr(l, "paused_because") :
				     "budget reached");
		lt.steps = 0;
		const cJSON *m;
		cJSON_ArrayForEach(m, lt.conversation)
			lt.steps += jstr(m, "role") && !strcmp(jstr(m, "role"), "assistant");
	} else {
		o = llm_agent_task_run(a, &lt);
	}
	cJSON_DeleteItemFromObject(l, "usage");
	cJSON_AddItemToObject(l, "usage", llm_agent_usage_json(&lt.used));
	if (o == LLM_RUN_CANCELLED) {
		/* Nobody waits for it any more: no result. */
	} else if (o == LLM_RUN_PAUSED && !skipped_by && !s->continue_at_limit) {
		/* Kept for the resume. */
		cJSON_AddItemToObject(l, "conversation", lt.conversation);
		lt.conversation = NULL;
		cJSON_DeleteItemFromObject(l, "paused_because");
		cJSON_AddStringToObject(l, "paused_because", lt.error ? lt.error : "budget reached");
	} else {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "analysis", lt.text ? lt.text : "");
		cJSON *info = cJSON_AddObjectToObject(x, "llm");
		cJSON_AddStringToObject(info, "provider", s->provider_name);
		cJSON_AddStringToObject(info, "model", s->model_execution);
		cJSON_AddStringToObject(info, "outcome", skipped_by ? "skipped_by_operator" :
					o == LLM_RUN_PAUSED ? "skipped_budget" : llm_agent_outcome_name(o));
		cJSON_AddNumberToObject(info, "steps", lt.steps);
		cJSON_AddItemToObject(info, "usage", llm_agent_usage_json(&lt.used));
		if (o != LLM_RUN_DONE) {
			char *w = xasprintf("%s: the model's analysis is %s: %s", pair,
					    o == LLM_RUN_STEP_LIMIT ? "incomplete" :
					    o == LLM_RUN_PAUSED ? "skipped" : "unavailable",
					    lt.error ? lt.error : "no answer");
			cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
			cJSON_AddStringToObject(info, "error", lt.error ? lt.error : "");
			free(w);
		}
		*extra = x;
	}
	llm_agent_task_release(&lt);
	sbuf_release(&p);
	free(system);
	return o;
}

/* Works one queued task to its research_result. */
static void work(struct agent *a, const char *task_msg, cJSON *t)
{
	const char *kind = jstr(t, "kind"), *pair = jstr(t, "pair"), *to = jstr(t, "from");
	const char *corr = jstr(t, "correlation_id");
	const cJSON *w = cJSON_GetObjectItem(t, "window");
	int32_t ws = 0, we = 0;
	const char *s0 = jstr(w, "start"), *s1 = jstr(w, "end");
	int64_t started = util_mono_ns();
	char *err = NULL;
	researcher_progress(a, task_msg, to, corr, 10, "loading data");
	cJSON *raw = cJSON_CreateObject(), *findings = cJSON_CreateArray();
	cJSON *sources = cJSON_CreateArray(), *warnings = cJSON_CreateArray();
	int points = 0;
	double fresh = 0, conf = 0;
	int r = -1;
	if (!s0 || !s1 || market_day_parse(s0, strlen(s0), &ws) < 0 ||
	    market_day_parse(s1, strlen(s1), &we) < 0) {
		err = xstrdup("the task has no valid window {start, end}");
	} else {
		cJSON_AddStringToObject(raw, "kind", kind);
		cJSON_AddStringToObject(raw, "pair", pair);
		r = !strcmp(kind, WF_TASK_MARKET) ?
			work_market(a, pair, ws, we, raw, findings, sources, warnings, &points,
				    &fresh, &conf, &err) :
			researcher_work_news(a, pair, ws, we, raw, findings, sources, warnings, &points,
				  &conf, &err);
	}
	cJSON *extra = NULL;
	enum llm_agent_outcome lo = LLM_RUN_DONE;
	if (r == 0 && a->env->llm) {
		researcher_progress(a, task_msg, to, corr, 50, "the model's analysis");
		lo = llm_analysis(a, task_msg, t, kind, pair, s0, s1, findings, warnings, &extra);
		if (lo == LLM_RUN_CANCELLED) {
			/* The product_manager took it back (a missed deadline,
			 * the operator's reassign, hold or cancel): stopped
			 * before the next model call, no result. */
			cJSON_ReplaceItemInObject(t, "status", cJSON_CreateString("cancelled"));
			task_touch(a, t);
			log_write(a->log, LOG_DECISIONS, LOG_INFO, "task_cancelled", NULL,
				  "%s cancelled by %s while in progress: stopped before its next "
				  "model call", task_msg, to ? to : "?");
			cJSON_Delete(raw);
			cJSON_Delete(findings);
			cJSON_Delete(sources);
			cJSON_Delete(warnings);
			return;
		}
		if (lo == LLM_RUN_PAUSED && !extra) {
			cJSON_ReplaceItemInObject(t, "status", cJSON_CreateString("awaiting_approval"));
			task_touch(a, t);
			const cJSON *l = cJSON_GetObjectItem(t, "llm");
			cJSON *c = cJSON_CreateObject();
			cJSON_AddStringToObject(c, "task_id", task_msg);
			cJSON_AddNumberToObject(c, "percent_complete", 50);
			char *step = xasprintf("awaiting the operator's approval: %s",
					       jstr(l, "paused_because"));
			cJSON_AddStringToObject(c, "current_step", step);
			free(step);
			cJSON_AddStringToObject(c, "status", "awaiting_approval");
			cJSON_AddItemToObject(c, "llm_usage",
					      cJSON_Duplicate(cJSON_GetObjectItem(l, "usage"), 1));
			agent_send(a, to, MSG_TASK_PROGRESS, c, NULL, task_msg, corr, PRIO_HIGH, NULL,
				   NULL);
			cJSON_Delete(raw);
			cJSON_Delete(findings);
			cJSON_Delete(sources);
			cJSON_Delete(warnings);
			return;
		}
	}
	cJSON_DeleteItemFromObject(t, "status");
	task_touch(a, t);
	if (r < 0) {
		cJSON_AddStringToObject(t, "status", "failed");
		send_error(a, to, task_msg, corr, r == -2 ? "no_data" : "api_failure",
			   err ? err : "failed", kind, pair, r == -2);
		cJSON_Delete(raw);
		cJSON_Delete(findings);
		cJSON_Delete(sources);
		cJSON_Delete(warnings);
		free(err);
		return;
	}
	researcher_progress(a, task_msg, to, corr, 90, "writing the result");
	int nfindings = cJSON_GetArraySize(findings);
	cJSON_AddItemToObject(raw, "findings", findings); /* the message owns them now */
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", task_msg);
	cJSON_AddStringToObject(c, "status", "completed");
	double mins = (double)(util_mono_ns() - started) / 60e9;
	cJSON_AddNumberToObject(c, "execution_time_minutes", round(mins * 1e6) / 1e6);
	cJSON_AddNumberToObject(c, "data_points_collected", points);
	cJSON_AddItemToObject(c, "sources_accessed", sources);
	cJSON *kf = cJSON_AddArrayToObject(c, "key_findings");
	const cJSON *f;
	cJSON_ArrayForEach(f, findings)
		cJSON_AddItemToArray(kf, cJSON_CreateString(jstr(f, "text")));
	cJSON_AddItemToObject(c, "raw_data", raw);
	cJSON_AddNumberToObject(c, "confidence_score", conf);
	cJSON_AddNumberToObject(c, "data_freshness_hours", fresh < 0 ? 0 : fresh);
	cJSON_AddItemToObject(c, "warnings", warnings);
	if (extra) {
		/* LLM mode: the analysis and the usage, beside the schema's fields. */
		while (extra->child) {
			cJSON *x = cJSON_DetachItemViaPointer(extra, extra->child);
			cJSON_AddItemToObject(c, x->string, x);
		}
		cJSON_Delete(extra);
	}
	char id[MSG_ID_MAX + 1] = "";
	if (a->fault == FAULT_MALFORMED) {
		/* An out-of-range confidence: the receiver's validation fails. */
		cJSON_DeleteItemFromObject(c, "confidence_score");
		cJSON_AddNumberToObject(c, "confidence_score", 7.5);
		agent_send_malformed(a, to, MSG_RESEARCH_RESULT, c, task_msg, corr);
	} else {
		agent_send(a, to, MSG_RESEARCH_RESULT, c, NULL, task_msg, corr, PRIO_HIGH, id, NULL);
	}
	cJSON_AddStringToObject(t, "status", "done");
	if (id[0])
		cJSON_AddStringToObject(t, "result", id);
	a->completed_today++;
	a->last_success_ns = util_now_ns();
	cJSON *lf = cJSON_CreateObject();
	cJSON_AddStringToObject(lf, "task_kind", !strcmp(kind, WF_TASK_MARKET) ? "market" : "news");
	cJSON_AddStringToObject(lf, "task_id", task_msg);
	cJSON_AddStringToObject(lf, "pair", pair);
	cJSON_AddNumberToObject(lf, "duration_ms", mins * 60000);
	cJSON_AddNumberToObject(lf, "findings", nfindings);
	log_write(a->log, LOG_RESULTS, LOG_INFO, "task_done", lf, "%s %s: %d findings",
		  kind, pair, nfindings);
	cJSON_Delete(lf);
}

/* A task worked to its end (or rejected) keeps only what a redelivery and
 * the other processes' merges need (status, result, updated_ns, owner): the
 * state file, saved at every step, stays small however many tasks are done. */
static void task_compact(cJSON *t)
{
	static const char *const bulky[] = { "kind", "pair", "from", "correlation_id", "window",
					     "deadline_ns", "accepted_ns", "not_before_ns" };
	const char *s = jstr(t, "status");
	if (!s || (strcmp(s, "done") && strcmp(s, "failed") && strcmp(s, "rejected")))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(bulky); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(t, bulky[i]);
}

struct adopt {
	const char *task;
	bool adopted;
};

/* Under the state lock, on the merged state: takes a queued task whose
 * owner process is gone. */
static void adopt_task(struct agent *a, void *ctx)
{
	struct adopt *ad = ctx;
	cJSON *t = cJSON_GetObjectItem(tasks_of(a), ad->task);
	const char *s = jstr(t, "status"), *owner = jstr(t, "owner");
	if (!s || strcmp(s, "queued") || (owner && !bus_owner_gone(a->bus, owner) &&
					  strcmp(owner, bus_owner(a->bus))))
		return;
	char *was = xstrdup(owner ? owner : "an earlier run");
	task_touch(a, t); /* replaces the owner string */
	ad->adopted = true;
	log_write(a->log, LOG_DECISIONS, LOG_INFO, "task_adopted", NULL,
		  "task %s of %s taken over: its process is gone", ad->task, was);
	free(was);
}

static int64_t researcher_tick(struct agent *a)
{
	cJSON *tasks = tasks_of(a);
	int64_t now = util_now_ns(), next = -1;
	const char *me = bus_owner(a->bus);
	cJSON *t;
	cJSON_ArrayForEach(t, tasks) {
		const char *s = jstr(t, "status"), *owner = jstr(t, "owner");
		if (!s || strcmp(s, "queued"))
			continue;
		int64_t nb = (int64_t)jnum(t, "not_before_ns", 0);
		if (nb > now) {
			int64_t ms = (nb - now) / 1000000 + 1;
			if (next < 0 || ms < next)
				next = ms;
			continue;
		}
		if (!owner || strcmp(owner, me)) {
			/* Another process's: leave it while that process lives. */
			if (owner && !bus_owner_gone(a->bus, owner))
				continue;
			struct adopt ad = { t->string, false };
			char *task = xstrdup(t->string);
			ad.task = task;
			agent_state_locked(a, adopt_task, &ad, NULL);
			t = cJSON_GetObjectItem(tasks_of(a), task);
			free(task);
			if (!ad.adopted || !t)
				return 0; /* the state changed under us: look again */
		}
		a->waiting = false;
		work(a, t->string, t);
		task_compact(t);
		agent_save_state(a, NULL);
		a->active_tasks = queued_count(tasks_of(a));
		return 0; /* one task per turn: messages stay responsive */
	}
	a->active_tasks = queued_count(tasks);
	/* Work queued, none of it doable now (deferred, or another live
	 * process's): the agent is waiting, not busy. */
	a->waiting = a->active_tasks > 0;
	return next;
}

const struct agent_role role_research_agent_1 = {
	.name = "research_agent_1",
	.handle = researcher_handle,
	.tick = researcher_tick,
	.shared_state = true,
	.has_capacity = true,
};

const struct agent_role role_research_agent_2 = {
	.name = "research_agent_2",
	.handle = researcher_handle,
	.tick = researcher_tick,
	.shared_state = true,
	.has_capacity = true,
};
