/* The validator: cross-references each finding against the authoritative
 * sources (the news archive through news_get, the market data through
 * fx_rates) and answers with claim-level verdicts and typed issues. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/data_tools.h"
#include "agents/llm_agent.h"
#include "agents/runtime.h"
#include "agents/validator_evidence.h"
#include "agents/validator_market.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

static void add_issue(cJSON *issues, const char *type, const char *sev, const char *desc,
		      cJSON *affected, const char *rec, double conf)
{
	cJSON *i = cJSON_CreateObject();
	cJSON_AddStringToObject(i, "issue_type", type);
	cJSON_AddStringToObject(i, "severity", sev);
	cJSON_AddStringToObject(i, "description", desc);
	cJSON_AddItemToObject(i, "affected_data", affected ? affected : cJSON_CreateObject());
	cJSON_AddStringToObject(i, "recommendation", rec);
	cJSON_AddNumberToObject(i, "confidence", conf);
	cJSON_AddItemToArray(issues, i);
}

static cJSON *affected(const cJSON *f, const char *extra_k, const char *extra_v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "finding_id", jstr(f, "id") ? jstr(f, "id") : "");
	if (jstr(f, "pair"))
		cJSON_AddStringToObject(o, "pair", jstr(f, "pair"));
	if (jstr(f, "message_id"))
		cJSON_AddStringToObject(o, "message_id", jstr(f, "message_id"));
	if (extra_k)
		cJSON_AddStringToObject(o, extra_k, extra_v);
	return o;
}

static bool close_enough(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}

/* Market claims: the figures again from the price data. */
static const char *check_market(struct agent *a, const cJSON *f, cJSON *issues, char **why)
{
	const cJSON *d = cJSON_GetObjectItem(f, "data");
	const char *pair = jstr(f, "pair");
	if (d && pair && jstr(d, "window_start") && !jstr(d, "start_date")) {
		int r = validator_market_recheck(a, pair, d, why);
		if (r == 0)
			add_issue(issues, "conflict", "high", *why, affected(f, NULL, NULL),
				  "use the recomputed figures", 0.95);
		return r > 0 ? "confirmed" : r == 0 ? "disputed" : "unverified";
	}
	if (!d || !pair || !jstr(d, "start_date") || !jstr(d, "end_date")) {
		*why = xstrdup("no figures to check against the price data");
		return "unverified";
	}
	cJSON *res = NULL;
	char *err = NULL;
	if (data_fx_rates(a, pair, jstr(d, "start_date"), jstr(d, "end_date"), &res, &err) < 0) {
		*why = xasprintf("price data unavailable: %s", err);
		free(err);
		return "unverified";
	}
	const cJSON *pts = cJSON_GetObjectItem(res, "points");
	int n = cJSON_GetArraySize(pts);
	const char *v = "unverified";
	if (n >= 1) {
		const cJSON *p0 = cJSON_GetArrayItem(pts, 0), *p1 = cJSON_GetArrayItem(pts, n - 1);
		double c0 = cJSON_GetArrayItem(p0, 1)->valuedouble;
		double c1 = cJSON_GetArrayItem(p1, 1)->valuedouble;
		const char *d0 = cJSON_GetArrayItem(p0, 0)->valuestring;
		const char *d1 = cJSON_GetArrayItem(p1, 0)->valuestring;
		double sc = jnum(d, "start_close", NAN), ec = jnum(d, "end_close", NAN);
		if (close_enough(c0, sc) && close_enough(c1, ec) && !strcmp(d0, jstr(d, "start_date")) &&
		    !strcmp(d1, jstr(d, "end_date"))) {
			v = "confirmed";
			*why = xasprintf("closes %.6g (%s) and %.6g (%s) match the price data", c0,
					 d0, c1, d1);
		} else {
			v = "disputed";
			*why = xasprintf("the price data says %.6g (%s) and %.6g (%s)", c0, d0, c1, d1);
			add_issue(issues, "conflict", "high", *why, affected(f, NULL, NULL),
				  "use the recomputed figures", 0.95);
		}
		char last[16];
		int32_t dl, we;
		const char *wend = jstr(d, "end_date");
		snprintf(last, sizeof(last), "%s", d1);
		if (market_day_parse(last, strlen(last), &dl) == 0 && wend &&
		    market_day_parse(wend, strlen(wend), &we) == 0 && we - dl > 3) {
			char *desc = xasprintf("%s: the last quote is %d days old", pair, we - dl);
			add_issue(issues, "stale_data", "medium", desc, affected(f, NULL, NULL),
				  "say how old the figure is", 0.9);
			free(desc);
		}
	}
	cJSON_Delete(res);
	return v;
}

/* The stories around the acts under check, read once per validation
 * request: the news of [start, end] and their acts. */
struct act_news {
	int32_t start, end;
	cJSON *res;
	struct vev_story *st;
	struct ev_story *ev;
	size_t n;
	/* the request being validated, for progress while the work is long */
	const struct msg *req;
	int done, total;
	int64_t said;  /* monotonic time of the last progress sent */
	char what[64]; /* the step under way ("" for none), said in the progress */
};

static void validation_progress(struct agent *a, const struct msg *m, int done, int total,
				const char *what);

/* The validation's deadline is at least 20 s (agents/pm.c): a progress
 * every 5 s while the work goes on keeps it well ahead, without a message
 * a second on the bus. */
#define VALIDATION_PROGRESS_NS (5 * 1000000000LL)

/* A progress when a long step begins (now), else at most one every
 * VALIDATION_PROGRESS_NS while it goes on: each moves the
 * product_manager's deadline on. */
static void act_progress(struct agent *a, struct act_news *an, bool now)
{
	if (an->req && (now || util_mono_ns() - an->said > VALIDATION_PROGRESS_NS)) {
		validation_progress(a, an->req, an->done, an->total, an->what);
		an->said = util_mono_ns();
	}
}

/* Drops the news only: the request and its progress clock stay, so that
 * reading the news of another window still says the validation works on
 * (clearing them silenced every progress after the first act checked). */
static void act_news_release(struct act_news *an)
{
	cJSON_Delete(an->res);
	free(an->st);
	free(an->ev);
	an->res = NULL;
	an->st = NULL;
	an->ev = NULL;
	an->n = 0;
	an->start = an->end = 0;
}

static bool story_view(const cJSON *s, struct vev_story *v)
{
	const char *id = jstr(s, "id"), *at = jstr(s, "published_at");
	int32_t day;
	bool ok;
	if (!id || !at || strlen(at) < 10 || market_day_parse(at, 10, &day) < 0)
		return false;
	*v = (struct vev_story){ .id = id, .title = jstr(s, "title"), .body = jstr(s, "body"),
				 .dateline = jstr(s, "dateline"), .pub_day = day };
	v->local_day = events_local_day_iso(at, v->dateline, v->title, v->body, &ok);
	if (!ok)
		v->local_day = day;
	return true;
}

/* Makes "an" hold the news of [from, to] (widened to the finding's window,
 * so that the next findings reuse it). */
static void act_news_cover(struct agent *a, struct act_news *an, int32_t from, int32_t to,
			   const cJSON *d)
{
	int32_t w;
	const char *ws = jstr(d, "window_start"), *we = jstr(d, "window_end");
	/* Up to the window's end, never past it: a report as of that day
	 * cannot have read the stories of the days after it (no look-ahead),
	 * and every act of the window is then checked on one reading. Set
	 * before the reuse test, or an act near the end never finds the news
	 * already read and reads the whole window again. */
	if (we && market_day_parse(we, strlen(we), &w) == 0)
		to = w;
	if (an->res && an->start <= from && an->end >= to)
		return;
	if (ws && market_day_parse(ws, strlen(ws), &w) == 0 && w - VEV_PLAUSIBLE_DAYS - 1 < from)
		from = w - VEV_PLAUSIBLE_DAYS - 1;
	/* Read again: keep what was read too, so that acts on either side
	 * (one dated before the window) do not make it read by turns. */
	if (an->res && an->start < from)
		from = an->start;
	if (an->res && an->end > to)
		to = an->end;
	act_news_release(an);
	char s0[16], s1[16];
	market_day_format(from, s0, sizeof(s0));
	market_day_format(to, s1, sizeof(s1));
	/* The longest step (a scan of every story of the window): it says so
	 * as it begins, then while it lasts. */
	snprintf(an->what, sizeof(an->what), "reading the news of %s..%s", s0, s1);
	act_progress(a, an, true);
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "start", s0);
	cJSON_AddStringToObject(args, "end", s1);
	cJSON_AddNumberToObject(args, "limit", 20000);
	char *err = NULL;
	an->start = from;
	an->end = to;
	if (data_call(a, "news_search", args, &an->res, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "evidence_unavailable", NULL,
			  "news of %s..%s: %s", s0, s1, err);
		free(err);
		an->res = cJSON_CreateObject();
	}
	const cJSON *arr = cJSON_GetObjectItem(an->res, "stories"), *s;
	size_t cap = (size_t)cJSON_GetArraySize(arr) + 1;
	an->st = xcalloc(cap, sizeof(*an->st));
	an->ev = xcalloc(cap, sizeof(*an->ev));
	cJSON_ArrayForEach(s, arr) {
		struct vev_story *v = &an->st[an->n];
		act_progress(a, an, false);
		if (!story_view(s, v))
			continue;
		events_extract_story(v->title, v->body, v->dateline, v->local_day, &an->ev[an->n]);
		v->ev = &an->ev[an->n];
		an->n++;
	}
	an->what[0] = '\0';
}

/* The closes of pair from ten days before day to the run's window end
 * (wend, "YYYY-MM-DD"; three days after day when NULL), into *out (caller
 * frees); how many. Ending where the researcher's request ended, the
 * request is the one the tool cache holds (a live source asks by end
 * date). */
static size_t prices_around(struct agent *a, const char *pair, int32_t day, const char *wend,
			    struct vev_point **out)
{
	size_t n = 0;
	*out = NULL;
	if (!pair)
		return 0;
	char from[16], to[16];
	char *err = NULL;
	int32_t end;
	if (!wend || market_day_parse(wend, strlen(wend), &end) < 0 || end < day)
		end = day + 3;
	market_day_format(day - 10, from, sizeof(from));
	market_day_format(end, to, sizeof(to));
	cJSON *px = NULL;
	if (data_fx_rates(a, pair, from, to, &px, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "evidence_unavailable", NULL,
			  "%s around %s: %s", pair, from, err);
		free(err);
	}
	const cJSON *p;
	int np = cJSON_GetArraySize(cJSON_GetObjectItem(px, "points"));
	*out = xcalloc(np > 0 ? (size_t)np : 1, sizeof(**out));
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(px, "points")) {
		const cJSON *pd = cJSON_GetArrayItem(p, 0), *pc = cJSON_GetArrayItem(p, 1);
		int32_t pday;
		if (cJSON_IsString(pd) && cJSON_IsNumber(pc) &&
		    market_day_parse(pd->valuestring, strlen(pd->valuestring), &pday) == 0)
			(*out)[n++] = (struct vev_point){ pday, pc->valuedouble };
	}
	cJSON_Delete(px);
	return n;
}

/* The prices vev_check asks for, through the data tools. */
struct prices_ctx {
	struct agent *a;
	const char *wend;
};

static size_t prices_fetch(void *ctx, const char *pair, int32_t day, struct vev_point **out)
{
	const struct prices_ctx *pc = ctx;
	return prices_around(pc->a, pair, day, pc->wend, out);
}

/* A policy act (hike, cut, hold, intervention) checked against evidence
 * the researcher's reading of its cited stories did not give: every
 * report of the act around its day by dateline and day, denials, the
 * pair's move that day and the bank's earlier acts (validator_evidence.h).
 * cited: the stories fetched by id (JSON array). */
static const char *check_act(struct agent *a, struct act_news *an, const cJSON *f,
			     const cJSON *cited, const char *wend, cJSON *issues, char **why)
{
	const cJSON *d = cJSON_GetObjectItem(f, "data");
	const char *bank = jstr(d, "bank"), *date = jstr(d, "date"), *pair = jstr(f, "pair");
	enum ev_kind kind = events_kind_parse(jstr(d, "action"));
	int32_t day;
	if (!date || market_day_parse(date, strlen(date), &day) < 0) {
		*why = xstrdup("the finding has no date for the act");
		return "unverified";
	}
	act_news_cover(a, an, day - VEV_PLAUSIBLE_DAYS - 1, day + 2, d);
	/* The archive's stories, then cited ones it lacks (another source). */
	size_t n = an->n;
	struct vev_story *st = xcalloc(n + (size_t)cJSON_GetArraySize(cited) + 1, sizeof(*st));
	memcpy(st, an->st, n * sizeof(*st));
	const cJSON *s;
	cJSON_ArrayForEach(s, cited) {
		struct vev_story v;
		bool dup = false;
		if (!story_view(s, &v))
			continue;
		for (size_t i = 0; i < an->n && !dup; i++)
			dup = !strcmp(an->st[i].id, v.id);
		if (!dup)
			st[n++] = v;
	}
	size_t nc = 0;
	const char **ids = xcalloc((size_t)cJSON_GetArraySize(cJSON_GetObjectItem(f, "sources")) + 1,
				   sizeof(*ids));
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(f, "sources"))
		if (cJSON_IsString(s))
			ids[nc++] = s->valuestring;
	struct vev_claim c = { .bank = bank, .kind = kind, .day = day, .pair = pair,
			       .cited = ids, .ncited = nc };
	struct vev_result *r = xmalloc(sizeof(*r));
	struct prices_ctx pc = { a, wend };
	char own[8];
	vev_check(&c, st, n, prices_fetch, &pc, own, r);
	char *reason = vev_reason(&c, r);
	const char *v = vev_verdict_name(r->verdict);
	*why = xasprintf("%s: %s", v, reason);
	if (r->verdict == VEV_DISPUTED)
		add_issue(issues, "conflict", r->severity, *why, affected(f, NULL, NULL),
			  "report the act as unconfirmed or drop it", 0.8);
	free(reason);
	free(r);
	free(ids);
	free(st);
	return v;
}

/* News claims: every cited story exists in the archive and lies inside
 * the window; a policy act is then judged on independent evidence
 * (check_act). */
static const char *check_news(struct agent *a, struct act_news *an, const cJSON *f, cJSON *issues,
			      char **why)
{
	const cJSON *d = cJSON_GetObjectItem(f, "data");
	const char *ws = d ? jstr(d, "window_start") : NULL, *we = d ? jstr(d, "window_end") : NULL;
	const char *bank = d ? jstr(d, "bank") : NULL, *action = d ? jstr(d, "action") : NULL;
	enum ev_kind kind = events_kind_parse(action);
	bool policy = bank && (kind == EV_HIKE || kind == EV_CUT || kind == EV_HOLD ||
			       kind == EV_INTERVENTION);
	int total = 0, found = 0, outside = 0;
	struct sbuf missing;
	sbuf_init(&missing);
	cJSON *cited = cJSON_CreateArray();
	const cJSON *s;
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(f, "sources")) {
		if (!cJSON_IsString(s))
			continue;
		total++;
		cJSON *args = cJSON_CreateObject();
		cJSON_AddStringToObject(args, "id", s->valuestring);
		cJSON *res = NULL;
		char *err = NULL;
		if (data_call(a, "news_get", args, &res, &err) < 0) {
			sbuf_addf(&missing, "%s%s", missing.len ? ", " : "", s->valuestring);
			free(err);
			continue;
		}
		found++;
		const char *at = jstr(res, "published_at");
		char day[11] = "";
		if (at)
			snprintf(day, sizeof(day), "%.10s", at);
		if (ws && we && (strcmp(day, ws) < 0 || strcmp(day, we) > 0)) {
			outside++;
			char *desc = xasprintf("story %s is dated %s, outside the window %s..%s",
					       s->valuestring, day, ws, we);
			add_issue(issues, "timing_error", "medium", desc,
				  affected(f, "story_id", s->valuestring),
				  "drop the story or widen the window", 0.95);
			free(desc);
		}
		cJSON_AddItemToArray(cited, res);
	}
	const char *v;
	if (total == 0) {
		v = "unverified";
		*why = xstrdup("cites no story");
	} else if (found < total) {
		v = "disputed";
		*why = xasprintf("%d of %d cited stories are not in the archive (%s)", total - found,
				 total, missing.data);
		cJSON *aff = affected(f, "missing", missing.data);
		add_issue(issues, "conflict", "high", *why, aff, "remove the finding", 0.9);
	} else if (outside) {
		v = "disputed";
		*why = xasprintf("%d of %d cited stories lie outside the window", outside, total);
	} else if (policy) {
		v = check_act(a, an, f, cited, we, issues, why);
	} else {
		v = "confirmed";
		*why = xasprintf("all %d cited stories are in the archive, inside the window", total);
	}
	cJSON_Delete(cited);
	sbuf_release(&missing);
	return v;
}

/* LLM mode: after the deterministic checks, the execution model reviews
 * the claims with the tools; its notes join the result as "llm_review".
 * The prompt, from the request and the verdicts. */
static char *review_prompt(const struct msg *m, const cJSON *verdicts)
{
	struct sbuf p;
	sbuf_init(&p);
	sbuf_addf(&p, "Validation %s. The findings below were checked against the sources; "
		  "review the claims, use the tools to look again where a verdict seems weak, and "
		  "answer with short notes (at most 120 words).\n", m->id);
	const cJSON *f, *vd;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(m->content, "findings")) {
		const char *id = jstr(f, "id");
		const char *v = "unchecked", *why = "";
		cJSON_ArrayForEach(vd, verdicts)
			if (id && jstr(vd, "finding_id") && !strcmp(jstr(vd, "finding_id"), id)) {
				v = jstr(vd, "verdict");
				why = jstr(vd, "reason");
			}
		const cJSON *d = cJSON_GetObjectItem(f, "data");
		sbuf_addf(&p, "- [%s] %s (pair %s, window %s to %s) verdict: %s, %s\n", id ? id : "?",
			  jstr(f, "text") ? jstr(f, "text") : "", jstr(f, "pair") ? jstr(f, "pair") : "?",
			  jstr(d, "start_date") ? jstr(d, "start_date") :
			  jstr(d, "window_start") ? jstr(d, "window_start") : "?",
			  jstr(d, "end_date") ? jstr(d, "end_date") :
			  jstr(d, "window_end") ? jstr(d, "window_end") : "?", v, why);
	}
	return sbuf_detach(&p);
}

/* The "llm_review" of a result: outcome, notes, usage (l: the review's
 * state, {"usage", "paused_because"}). */
static cJSON *review_json(const struct llm_agent_settings *s, const char *outcome, const char *notes,
			  int steps, const cJSON *l, const char *error)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "notes", notes ? notes : "");
	cJSON_AddStringToObject(r, "provider", s->provider_name);
	cJSON_AddStringToObject(r, "model", s->model_execution);
	cJSON_AddStringToObject(r, "outcome", outcome);
	cJSON_AddNumberToObject(r, "steps", steps);
	const cJSON *u = cJSON_GetObjectItem(l, "usage");
	cJSON_AddItemToObject(r, "usage", u ? cJSON_Duplicate(u, 1) : cJSON_CreateObject());
	if (error)
		cJSON_AddStringToObject(r, "error", error);
	return r;
}

/* Runs (or resumes) the review. l keeps its state: "usage", the approved
 * "extra_tokens" and "extra_cost_usd", and while it is paused the
 * "conversation" and "paused_because". Returns the review, or NULL when it
 * is paused for the operator's approval. prompt may be NULL on a resume. */
/* The review's progress (req: the validation request; NULL on a resume,
 * when the validation waits for no deadline). */
struct review_progress {
	struct agent *a;
	struct act_news an;
};

/* Before each model call: the review says it works on, as the news read
 * does, so that a slow model does not miss the validation's deadline. */
static void review_on_call(void *ctx, int step)
{
	struct review_progress *rp = ctx;
	snprintf(rp->an.what, sizeof(rp->an.what), "reviewing the verdicts with the model "
		 "(call %d)", step);
	act_progress(rp->a, &rp->an, true);
}

/* While a call waits for the model (or its answer streams): at most one
 * progress every VALIDATION_PROGRESS_NS. */
static void review_on_wait(void *ctx)
{
	struct review_progress *rp = ctx;
	act_progress(rp->a, &rp->an, false);
}

static cJSON *llm_review(struct agent *a, const struct msg *req, int nfindings, const char *vid,
			 const char *prompt, cJSON *l)
{
	const struct llm_agent_settings *s = a->env->llm;
	char *system = xasprintf("You are %s, the validator of madf's weekly Asia/G10 FX report. "
				 "You check claims against the authoritative sources through the "
				 "tools. Never invent a figure.", a->name);
	struct llm_agent_task lt = { .task_id = vid, .label = "validation", .system = system,
			       .prompt = prompt, .all_tools = true,
			       .extra_tokens = (long)jnum(l, "extra_tokens", 0),
			       .extra_cost = jnum(l, "extra_cost_usd", 0) };
	struct review_progress rp = { .a = a, .an = { .req = req, .done = nfindings,
						      .total = nfindings, .said = util_mono_ns() } };
	if (req) {
		lt.on_call = review_on_call;
		lt.on_wait = review_on_wait;
		lt.ctx = &rp;
	}
	llm_agent_usage_from_json(cJSON_GetObjectItem(l, "usage"), &lt.used);
	cJSON *conv = cJSON_DetachItemFromObject(l, "conversation");
	lt.conversation = cJSON_IsArray(conv) ? conv : NULL;
	if (!lt.conversation)
		cJSON_Delete(conv);
	enum llm_agent_outcome o = llm_agent_task_run(a, &lt);
	cJSON_DeleteItemFromObject(l, "usage");
	cJSON_AddItemToObject(l, "usage", llm_agent_usage_json(&lt.used));
	cJSON_DeleteItemFromObject(l, "paused_because");
	cJSON *r = NULL;
	if (o == LLM_RUN_PAUSED && !s->continue_at_limit) {
		/* Kept for the resume. */
		cJSON_AddItemToObject(l, "conversation", lt.conversation);
		lt.conversation = NULL;
		cJSON_AddStringToObject(l, "paused_because", lt.error ? lt.error : "budget reached");
	} else {
		r = review_json(s, o == LLM_RUN_PAUSED ? "skipped_budget" : llm_agent_outcome_name(o),
				lt.text, lt.steps, l,
				o != LLM_RUN_DONE ? (lt.error ? lt.error : "") : NULL);
	}
	llm_agent_task_release(&lt);
	free(system);
	return r;
}

/* Sends the validation result c (taken) for validation vid, and notes it
 * answered. */
static void validation_send(struct agent *a, cJSON *seen, const char *vid, const char *to,
			    const char *corr, cJSON *c)
{
	if (a->fault == FAULT_MALFORMED) {
		cJSON_DeleteItemFromObject(c, "overall_confidence");
		cJSON_AddNumberToObject(c, "overall_confidence", -3);
		agent_send_malformed(a, to, MSG_VALIDATION_RESULT, c, vid, corr);
	} else {
		agent_send(a, to, MSG_VALIDATION_RESULT, c, NULL, vid, corr, PRIO_HIGH, NULL, NULL);
	}
	/* An object with updated_ns: it wins over a paused entry of another
	 * process when the shared state is merged. */
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "status", "done");
	cJSON_AddNumberToObject(e, "updated_ns", (double)util_now_ns());
	cJSON_DeleteItemFromObjectCaseSensitive(seen, vid);
	cJSON_AddItemToObject(seen, vid, e);
	agent_save_state(a, NULL);
	a->completed_today++;
	a->last_success_ns = util_now_ns();
}

/* The review reached its budget: the deterministic result waits in the
 * state (seen[vid]) with the review's conversation, and the requester
 * hears the validation awaits the operator's approval. */
static void validation_pause(struct agent *a, cJSON *seen, const char *vid, const char *to,
			     const char *corr, cJSON *c, cJSON *l)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "status", "awaiting_approval");
	cJSON_AddNumberToObject(e, "updated_ns", (double)util_now_ns());
	cJSON_AddStringToObject(e, "from", to);
	if (corr)
		cJSON_AddStringToObject(e, "correlation_id", corr);
	cJSON_AddItemToObject(e, "result", c);
	cJSON_AddItemToObject(e, "llm", l);
	cJSON_DeleteItemFromObjectCaseSensitive(seen, vid);
	cJSON_AddItemToObject(seen, vid, e);
	agent_save_state(a, NULL);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "task_id", vid);
	cJSON_AddNumberToObject(p, "percent_complete", 90);
	char *step = xasprintf("awaiting the operator's approval: %s", jstr(l, "paused_because"));
	cJSON_AddStringToObject(p, "current_step", step);
	cJSON_AddStringToObject(p, "status", "awaiting_approval");
	cJSON_AddItemToObject(p, "llm_usage", cJSON_Duplicate(cJSON_GetObjectItem(l, "usage"), 1));
	agent_send(a, to, MSG_TASK_PROGRESS, p, NULL, vid, corr, PRIO_HIGH, NULL, NULL);
	log_write(a->log, LOG_DECISIONS, LOG_WARN, "awaiting_approval", NULL,
		  "validation %s paused: %s", vid, step);
	free(step);
}

/* The operator approved more budget for a paused review (the review
 * resumes its conversation), or skipped it (the result goes as it is, the
 * review marked skipped). */
static void validation_resume(struct agent *a, const struct msg *m, bool skip)
{
	cJSON *seen = cJSON_GetObjectItem(a->state, "validated");
	const char *vid = jstr(m->content, "approve_id");
	cJSON *e = vid ? cJSON_GetObjectItem(seen, vid) : NULL;
	const char *st = cJSON_IsObject(e) ? jstr(e, "status") : NULL;
	if (!st || strcmp(st, "awaiting_approval") || !a->env->llm) {
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "approval_ignored", NULL,
			  "%s for validation %s ignored: it is %s", skip ? "skip" : "budget approval",
			  vid ? vid : "?", st ? st : cJSON_IsString(e) ? e->valuestring :
			  "unknown to this agent");
		return;
	}
	const struct llm_agent_settings *s = a->env->llm;
	cJSON *l = cJSON_DetachItemFromObject(e, "llm"), *c = cJSON_DetachItemFromObject(e, "result");
	char *to = xstrdup(jstr(e, "from") ? jstr(e, "from") : m->from);
	char *corr = jstr(e, "correlation_id") ? xstrdup(jstr(e, "correlation_id")) : NULL;
	if (!cJSON_IsObject(c)) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "state_corrupt", NULL,
			  "validation %s has no result in the state", vid);
		cJSON_Delete(c);
		cJSON_Delete(l);
		return;
	}
	if (!cJSON_IsObject(l)) {
		cJSON_Delete(l);
		l = cJSON_CreateObject();
	}
	cJSON *r;
	if (skip) {
		char *why = xasprintf("skipped by %s at its budget (%s)", m->from,
				      jstr(l, "paused_because") ? jstr(l, "paused_because") :
				      "budget reached");
		r = review_json(s, "skipped_by_operator", "", 0, l, why);
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "review_skipped", NULL,
			  "validation %s: the review is %s", vid, why);
		free(why);
	} else {
		double xt = jnum(m->content, "extra_tokens", -1);
		double xc = jnum(m->content, "extra_cost_usd", -1);
		if (xt < 0)
			xt = s->token_budget > 0 ? (double)s->token_budget : 0;
		if (xc < 0)
			xc = s->cost_budget > 0 ? s->cost_budget : 0;
		double et = jnum(l, "extra_tokens", 0) + xt, ec = jnum(l, "extra_cost_usd", 0) + xc;
		cJSON_DeleteItemFromObject(l, "extra_tokens");
		cJSON_DeleteItemFromObject(l, "extra_cost_usd");
		cJSON_AddNumberToObject(l, "extra_tokens", et);
		cJSON_AddNumberToObject(l, "extra_cost_usd", ec);
		log_write(a->log, LOG_DECISIONS, LOG_INFO, "budget_approved", NULL,
			  "validation %s resumes its review: %s approved %.0f more tokens and $%.4f",
			  vid, m->from, xt, xc);
		r = llm_review(a, NULL, 0, vid, NULL, l);
	}
	if (!r) {
		validation_pause(a, seen, vid, to, corr, c, l);
	} else {
		cJSON_Delete(l);
		cJSON_AddItemToObject(c, "llm_review", r);
		validation_send(a, seen, vid, to, corr, c);
	}
	free(to);
	free(corr);
}

/* Progress of validation request m: done of total findings checked. The
 * product_manager takes it as a sign of life and moves the validation's
 * deadline on, so that checking many findings against independent
 * evidence does not look like a validator that died. */
static void validation_progress(struct agent *a, const struct msg *m, int done, int total,
				const char *what)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "task_id", m->id);
	cJSON_AddNumberToObject(p, "percent_complete", total > 0 ? 100.0 * done / total : 0);
	char *step = xasprintf("checked %d of %d findings%s%s", done, total,
			       what && *what ? "; " : "", what ? what : "");
	cJSON_AddStringToObject(p, "current_step", step);
	free(step);
	cJSON_AddStringToObject(p, "status", "in_progress");
	cJSON_AddNumberToObject(p, "items_done", done);
	cJSON_AddNumberToObject(p, "items_total", total);
	agent_send(a, m->from, MSG_TASK_PROGRESS, p, NULL, m->id, m->correlation_id, PRIO_HIGH,
		   NULL, NULL);
}

static int validator_handle(struct agent *a, const struct msg *m, char **err)
{
	(void)err;
	cJSON *seen = cJSON_GetObjectItem(a->state, "validated");
	if (!seen)
		seen = cJSON_AddObjectToObject(a->state, "validated");
	const char *tt = m->type == MSG_TASK_ASSIGNMENT ? jstr(m->content, "task_type") : NULL;
	if (tt && (!strcmp(tt, LLM_TASK_APPROVE) || !strcmp(tt, LLM_TASK_SKIP))) {
		validation_resume(a, m, !strcmp(tt, LLM_TASK_SKIP));
		return AGENT_DONE;
	}
	if (m->type != MSG_VALIDATION_REQUEST)
		return AGENT_DONE;
	if (cJSON_GetObjectItem(seen, m->id))
		return AGENT_DONE; /* answered already (delivered twice) */
	cJSON *acc = cJSON_CreateObject();
	cJSON_AddStringToObject(acc, "task_id", m->id);
	cJSON_AddStringToObject(acc, "status", "accepted");
	char ts[40];
	util_iso8601(util_now_ns() + 2000000000LL, ts, sizeof(ts));
	cJSON_AddStringToObject(acc, "estimated_completion", ts);
	cJSON_AddNumberToObject(acc, "agent_capacity", 0.1);
	agent_send(a, m->from, MSG_TASK_ACCEPTANCE, acc, NULL, m->id, m->correlation_id,
		   PRIO_HIGH, NULL, NULL);
	if (a->fault == FAULT_CRASH) {
		a->crashed = true;
		return AGENT_DONE;
	}
	if (a->fault == FAULT_ERROR) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "error_type", "api_failure");
		cJSON_AddStringToObject(c, "error_message", "injected fault: the authoritative source failed");
		cJSON_AddObjectToObject(c, "context");
		cJSON_AddStringToObject(c, "impact_level", "high");
		cJSON_AddStringToObject(c, "related_task_id", m->id);
		agent_send(a, m->from, MSG_ERROR_REPORT, c, NULL, m->id, m->correlation_id,
			   PRIO_HIGH, NULL, NULL);
		cJSON *lf = cJSON_CreateObject();
		cJSON_AddStringToObject(lf, "error_type", "api_failure");
		cJSON_AddStringToObject(lf, "task_kind", "validation");
		cJSON_AddStringToObject(lf, "task_id", m->id);
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "validation_failed", lf,
			  "injected fault: validation of %s failed", m->id);
		cJSON_Delete(lf);
		cJSON_AddStringToObject(seen, m->id, "failed");
		agent_save_state(a, NULL);
		return AGENT_DONE;
	}
	if (a->fault == FAULT_SLOW) {
		const char *dl = jstr(m->content, "deadline");
		int64_t t;
		if (dl && msg_parse_time(dl, &t) == 0)
			while (util_now_ns() < t + 1000000000LL && !atomic_load(&a->env->stop)) {
				struct timespec ts2 = { 0, 50000000 };
				nanosleep(&ts2, NULL);
			}
	}
	int64_t started = util_mono_ns();
	cJSON *issues = cJSON_CreateArray(), *validated = cJSON_CreateArray();
	cJSON *verdicts = cJSON_CreateArray();
	int n = 0, confirmed = 0;
	struct act_news an = { .req = m, .said = started,
			       .total = cJSON_GetArraySize(cJSON_GetObjectItem(m->content, "findings")) };
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(m->content, "findings")) {
		const char *kind = jstr(f, "kind"), *id = jstr(f, "id");
		if (!id)
			continue;
		an.done = n;
		act_progress(a, &an, false); /* a long validation says it works on */
		char *why = NULL;
		const char *v;
		if (kind && !strcmp(kind, "market"))
			v = check_market(a, f, issues, &why);
		else if (kind && (!strcmp(kind, "news") || !strcmp(kind, "sentiment")))
			v = check_news(a, &an, f, issues, &why);
		else if (kind && !strcmp(kind, "conflict")) {
			v = "disputed";
			why = xstrdup(jstr(f, "text") ? jstr(f, "text") : "conflicting results");
			add_issue(issues, "conflict", "medium", why, affected(f, NULL, NULL),
				  "report both readings and say which the prices support", 0.8);
		} else {
			v = "unverified";
			why = xstrdup("no check for this kind of finding");
		}
		cJSON *vd = cJSON_CreateObject();
		cJSON_AddStringToObject(vd, "finding_id", id);
		cJSON_AddStringToObject(vd, "verdict", v);
		cJSON_AddStringToObject(vd, "reason", why);
		cJSON_AddItemToArray(verdicts, vd);
		if (!strcmp(v, "confirmed")) {
			confirmed++;
			cJSON_AddItemToArray(validated, cJSON_CreateString(id));
		}
		n++;
		cJSON *lf = cJSON_CreateObject();
		cJSON_AddStringToObject(lf, "finding_id", id);
		cJSON_AddStringToObject(lf, "verdict", v);
		log_write(a->log, !strcmp(v, "disputed") ? LOG_CONFLICTS : LOG_RESOLUTIONS,
			  LOG_INFO, "verdict", lf, "%s: %s (%s)", id, v, why);
		cJSON_Delete(lf);
		free(why);
	}
	act_news_release(&an);
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "validation_id", m->id);
	cJSON_AddItemToObject(c, "research_results_validated",
			      cJSON_Duplicate(cJSON_GetObjectItem(m->content,
								  "research_results_to_validate"), 1));
	cJSON_AddNumberToObject(c, "overall_confidence",
				n ? round((double)confirmed / n * 1000) / 1000 : 0);
	cJSON_AddItemToObject(c, "issues_found", issues);
	cJSON_AddItemToObject(c, "validated_findings", validated);
	cJSON_AddNumberToObject(c, "execution_time_minutes",
				round((double)(util_mono_ns() - started) / 60e9 * 1e6) / 1e6);
	cJSON *sc = cJSON_AddArrayToObject(c, "sources_consulted");
	cJSON_AddItemToArray(sc, cJSON_CreateString(a->env->news_source));
	cJSON_AddItemToArray(sc, cJSON_CreateString(a->env->market_source));
	cJSON_AddItemToObject(c, "verdicts", verdicts);
	bool paused = false;
	if (a->env->llm) {
		char *prompt = review_prompt(m, verdicts);
		cJSON *l = cJSON_CreateObject();
		cJSON *r = llm_review(a, m, n, m->id, prompt, l);
		free(prompt);
		if (r) {
			cJSON_Delete(l);
			cJSON_AddItemToObject(c, "llm_review", r);
		} else {
			validation_pause(a, seen, m->id, m->from, m->correlation_id, c, l);
			paused = true;
		}
	}
	if (!paused)
		validation_send(a, seen, m->id, m->from, m->correlation_id, c);
	cJSON *lf = cJSON_CreateObject();
	cJSON_AddStringToObject(lf, "task_kind", "validation");
	cJSON_AddStringToObject(lf, "task_id", m->id);
	cJSON_AddNumberToObject(lf, "duration_ms", (double)(util_mono_ns() - started) / 1e6);
	log_write(a->log, LOG_RESULTS, LOG_INFO, "validated", lf,
		  "%d findings checked: %d confirmed", n, confirmed);
	cJSON_Delete(lf);
	return AGENT_DONE;
}

const struct agent_role role_validator = {
	.name = "validator_agent",
	.handle = validator_handle,
	.shared_state = true,
};
