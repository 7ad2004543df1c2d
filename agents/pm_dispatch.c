/* The product_manager's dispatch: capacity is backpressure, never failure.
 * Each researcher role has a window, the sum of the capacity its live
 * processes advertise (heartbeat "capacity", per "pid"); the tasks past it
 * wait with the product_manager as "queued", the most urgent first, and go
 * out as results free the window. A rejection for capacity (several
 * processes share one inbox, so one may get more than its share) puts the
 * task back in the queue without spending an attempt. */
#include "agents/pm_dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define NS 1000000000LL

static const char *const roles[] = { "research_agent_1", "research_agent_2" };
#define NROLES (sizeof(roles) / sizeof(roles[0]))

_Thread_local struct pm_control pm_ctl;

void pm_save(struct agent *a)
{
	char *err = NULL;
	if (agent_save_state(a, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "state_save_failed", NULL, "%s", err);
		if (pm_ctl.active && !pm_ctl.failed)
			pm_ctl.failed = xasprintf("the state could not be saved: %s", err);
		free(err);
	}
}

void pm_decision(struct agent *a, const char *event, const char *task, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON *f = cJSON_CreateObject();
	if (task)
		cJSON_AddStringToObject(f, "task_id", task);
	log_write(a->log, LOG_DECISIONS, LOG_INFO, event, f, "%s", s);
	cJSON_Delete(f);
	if (pm_ctl.active && !pm_ctl.text &&
	    (!strcmp(event, "control_refused") || !strcmp(event, pm_ctl.action))) {
		pm_ctl.refused = !strcmp(event, "control_refused");
		pm_ctl.text = s;
		return;
	}
	free(s);
}

void pm_index_add(struct agent *a, const char *msg_id, const char *run_id, const char *task)
{
	cJSON *ix = jobj(a->state, "index");
	cJSON_DeleteItemFromObjectCaseSensitive(ix, msg_id);
	cJSON *o = cJSON_AddObjectToObject(ix, msg_id);
	cJSON_AddStringToObject(o, "run", run_id);
	cJSON_AddStringToObject(o, "task", task);
}

static int role_index(const char *name)
{
	for (size_t i = 0; name && i < NROLES; i++)
		if (!strcmp(roles[i], name))
			return (int)i;
	return -1;
}

/* ---- the windows ------------------------------------------------------------ */

/* A process is live while its heartbeats keep coming: three missed ones
 * and a little slack. */
static int64_t stale_ns(const struct agent *a)
{
	return 3 * a->env->heartbeat_ms * 1000000 + 5 * NS;
}

static cJSON *processes_of(struct agent *a, const char *role)
{
	return jobj(jobj(jobj(a->state, "agents"), role), "processes");
}

void pm_note_agent(struct agent *a, const struct msg *m)
{
	if (role_index(m->from) < 0)
		return;
	cJSON *ag = jobj(jobj(a->state, "agents"), m->from);
	/* Something came from the role: its "full" mark (a capacity
	 * rejection) has served; the window says again what may go. */
	cJSON_DeleteItemFromObjectCaseSensitive(ag, "full_at");
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(m->content, "pid");
	if (m->type != MSG_HEARTBEAT || !cJSON_IsNumber(pid) || pid->valuedouble < 1)
		return;
	char key[24];
	snprintf(key, sizeof(key), "%.0f", pid->valuedouble);
	cJSON *procs = processes_of(a, m->from);
	cJSON_DeleteItemFromObjectCaseSensitive(procs, key);
	if (jstr_is(m->content, "status", "stopping"))
		return;
	int64_t at = 0;
	if (msg_parse_time(m->timestamp, &at) < 0)
		at = util_now_ns();
	cJSON *p = cJSON_AddObjectToObject(procs, key);
	const cJSON *cap = cJSON_GetObjectItemCaseSensitive(m->content, "capacity");
	cJSON_AddNumberToObject(p, "capacity", cJSON_IsNumber(cap) && cap->valuedouble >= 1 ?
				cap->valuedouble : (double)a->env->capacity);
	cJSON_AddNumberToObject(p, "at_ns", (double)at);
}

int pm_window(struct agent *a, const char *role, int *procs)
{
	int64_t now = util_now_ns();
	cJSON *ps = processes_of(a, role);
	double sum = 0;
	int n = 0;
	cJSON *p = ps ? ps->child : NULL;
	while (p) {
		cJSON *next = p->next;
		if (now - (int64_t)jnum(p, "at_ns", 0) > stale_ns(a)) {
			/* Gone without a word (killed): its share goes with it. */
			cJSON_Delete(cJSON_DetachItemViaPointer(ps, p));
		} else {
			sum += jnum(p, "capacity", a->env->capacity);
			n++;
		}
		p = next;
	}
	*procs = n;
	if (!n)
		return a->env->capacity;
	return sum > 1000000000 ? 1000000000 : (int)sum;
}

/* ---- queueing ------------------------------------------------------------------ */

void pm_task_enqueue(struct agent *a, cJSON *run, cJSON *t, const char *agent)
{
	(void)a;
	(void)run;
	jset_str(t, "assignee", agent);
	jset_str(t, "current", "");
	jset_str(t, "status", "queued");
	jset_num(t, "deadline_ns", 0);
	jset_num(t, "progress", 0);
}

/* Points t at a fresh assignment to its assignee: an attempt, a deadline. */
static void assign(struct agent *a, cJSON *run, cJSON *t)
{
	char id[MSG_ID_MAX + 1];
	msg_new_id(a->name, id);
	jset_str(t, "current", id);
	jset_str(t, "status", "assigned");
	jset_num(t, "attempts", jnum(t, "attempts", 0) + 1);
	jset_num(t, "deadline_ns", (double)(util_now_ns() + a->env->task_timeout_s * NS));
	jset_num(t, "progress", 0);
	cJSON_AddItemToArray(jarr(t, "assignments"), cJSON_CreateString(id));
	pm_index_add(a, id, jstr(run, "run_id"), jstr(t, "task_id"));
}

void pm_send_assignment(struct agent *a, cJSON *run, cJSON *t)
{
	const char *kind = jstr(t, "kind");
	bool market = kind && !strcmp(kind, "market");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_type", market ? WF_TASK_MARKET : WF_TASK_NEWS);
	cJSON_AddStringToObject(c, "focus_area", "Asia/G10");
	cJSON *tp = cJSON_AddArrayToObject(c, "target_pairs");
	cJSON_AddItemToArray(tp, cJSON_CreateString(jstr(t, "pair")));
	const cJSON *w = cJSON_GetObjectItem(run, "window");
	char *tf = xasprintf("%s/%s", jstr(w, "start"), jstr(w, "end"));
	cJSON_AddStringToObject(c, "timeframe", tf);
	free(tf);
	cJSON *ds = cJSON_AddArrayToObject(c, "data_sources");
	const cJSON *src = cJSON_GetObjectItem(run, "sources");
	cJSON_AddItemToArray(ds, cJSON_CreateString(jstr(src, market ? "market" : "news")));
	char dl[40];
	util_iso8601((int64_t)jnum(t, "deadline_ns", 0), dl, sizeof(dl));
	cJSON_AddStringToObject(c, "deadline", dl);
	cJSON_AddStringToObject(c, "output_format", "structured_json");
	cJSON_AddStringToObject(c, "special_instructions", market ?
				"Closes, change, range, volatility, z-score, trend, largest move" :
				"Central-bank and policy events, currency sentiment, price check");
	cJSON_AddItemToObject(c, "window", cJSON_Duplicate(w, 1));
	cJSON_AddStringToObject(c, "run_id", jstr(run, "run_id"));
	cJSON_AddStringToObject(c, "logical_task_id", jstr(t, "task_id"));
	cJSON_AddNumberToObject(c, "attempt", jnum(t, "attempts", 1));
	char *err = NULL;
	int prio = jstr(t, "priority") ? msg_priority_from_name(jstr(t, "priority")) : -1;
	if (agent_send(a, jstr(t, "assignee"), MSG_TASK_ASSIGNMENT, c, jstr(t, "current"), NULL,
		       jstr(t, "task_id"), prio < 0 ? PRIO_HIGH : (enum msg_priority)prio, NULL,
		       &err) < 0)
		free(err); /* logged by agent_send; the deadline will catch it */
}

/* Sent and not answered for good: what holds a place in the window. */
static bool in_flight(const cJSON *t)
{
	return jstr_is(t, "status", "assigned") || jstr_is(t, "status", "accepted") ||
	       jstr_is(t, "status", "in_progress");
}

static int prio_of(const cJSON *t)
{
	int p = jstr(t, "priority") ? msg_priority_from_name(jstr(t, "priority")) : -1;
	return p < 0 ? PRIO_HIGH : p;
}

struct pick {
	cJSON *run, *t;
};

int pm_dispatch(struct agent *a)
{
	struct {
		int window, procs, busy, queued, sent;
	} w[NROLES];
	memset(w, 0, sizeof(w));
	cJSON *run, *t;
	int nqueued = 0;
	cJSON_ArrayForEach(run, jobj(a->state, "runs")) {
		if (jstr_is(run, "status", "done"))
			continue;
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
			int r = role_index(jstr(t, "assignee"));
			if (r < 0)
				continue;
			if (in_flight(t))
				w[r].busy++;
			else if (jstr_is(t, "status", "queued"))
				w[r].queued++, nqueued++;
		}
	}
	cJSON *ds = jobj(a->state, "dispatch");
	if (!nqueued) {
		if (jnum(ds, "queued", 0) != 0)
			jset_num(ds, "queued", 0);
		return 0;
	}
	for (size_t r = 0; r < NROLES; r++) {
		w[r].window = pm_window(a, roles[r], &w[r].procs);
		/* A capacity rejection: nothing more to the role until one of
		 * its tasks ends (or it speaks again, pm_note_agent). */
		const cJSON *full = cJSON_GetObjectItem(jobj(jobj(a->state, "agents"), roles[r]),
							"full_at");
		if (cJSON_IsNumber(full)) {
			if (w[r].busy < full->valuedouble)
				cJSON_DeleteItemFromObjectCaseSensitive(
					jobj(jobj(a->state, "agents"), roles[r]), "full_at");
			else if (w[r].window > w[r].busy)
				w[r].window = w[r].busy;
		}
	}
	struct pick *picks = NULL;
	size_t np = 0, cap = 0;
	for (int prio = PRIO_URGENT; prio <= PRIO_LOW; prio++) {
		cJSON_ArrayForEach(run, jobj(a->state, "runs")) {
			if (jstr_is(run, "status", "done"))
				continue;
			cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
				int r = role_index(jstr(t, "assignee"));
				if (r < 0 || !jstr_is(t, "status", "queued") || prio_of(t) != prio ||
				    w[r].busy >= w[r].window)
					continue;
				if (np == cap) {
					cap = cap ? 2 * cap : 16;
					picks = xrealloc(picks, cap * sizeof(*picks));
				}
				picks[np++] = (struct pick){ run, t };
				assign(a, run, t);
				w[r].busy++;
				w[r].queued--;
				w[r].sent++;
				nqueued--;
			}
		}
	}
	if (!np && jnum(ds, "queued", -1) == nqueued) {
		free(picks);
		return 0; /* nothing new to say */
	}
	/* What the console shows: the windows and how many wait. */
	jset_num(ds, "queued", nqueued);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "sent", (double)np);
	cJSON_AddNumberToObject(f, "queued", nqueued);
	struct sbuf s;
	sbuf_init(&s);
	sbuf_addf(&s, "sent %zu, %d queued:", np, nqueued);
	for (size_t r = 0; r < NROLES; r++) {
		cJSON *o = jobj(ds, roles[r]);
		jset_num(o, "window", w[r].window);
		jset_num(o, "processes", w[r].procs);
		jset_num(o, "in_flight", w[r].busy);
		jset_num(o, "queued", w[r].queued);
		cJSON_AddItemToObject(f, roles[r], cJSON_Duplicate(o, 1));
		if (w[r].procs)
			sbuf_addf(&s, " %s %d sent, %d in flight of a window of %d (%d live "
				  "process%s), %d queued;", roles[r], w[r].sent, w[r].busy,
				  w[r].window, w[r].procs, w[r].procs == 1 ? "" : "es", w[r].queued);
		else
			sbuf_addf(&s, " %s %d sent, %d in flight of a window of %d (no heartbeat "
				  "yet: MADF_AGENT_CAPACITY), %d queued;", roles[r], w[r].sent,
				  w[r].busy, w[r].window, w[r].queued);
	}
	s.data[s.len - 1] = '\0';
	log_write(a->log, LOG_DECISIONS, LOG_INFO, "dispatch", f, "%s", s.data);
	cJSON_Delete(f);
	sbuf_release(&s);
	pm_save(a); /* before sending: a crash now resumes with the same ids */
	for (size_t i = 0; i < np; i++)
		pm_send_assignment(a, picks[i].run, picks[i].t);
	free(picks);
	return (int)np;
}

/* ---- rejections and errors ------------------------------------------------------- */

bool pm_rejected_for_capacity(const cJSON *acc)
{
	const char *why = jstr(acc, "rejection_reason");
	return jstr_is(acc, "status", "rejected") && why && !strncmp(why, "at capacity", 11);
}

void pm_task_requeue(struct agent *a, cJSON *run, cJSON *t, const char *from, const char *reason)
{
	(void)run;
	double att = jnum(t, "attempts", 1) - 1;
	pm_task_enqueue(a, run, t, from);
	jset_num(t, "attempts", att < 0 ? 0 : att);
	jset_num(t, "requeued", jnum(t, "requeued", 0) + 1);
	int busy = 0;
	cJSON *r, *x;
	cJSON_ArrayForEach(r, jobj(a->state, "runs"))
		if (!jstr_is(r, "status", "done"))
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(r, "tasks"))
				busy += in_flight(x) && jstr_is(x, "assignee", from);
	jset_num(jobj(jobj(a->state, "agents"), from), "full_at", busy);
	pm_decision(a, "requeued", jstr(t, "task_id"),
		    "%s back in the queue for %s, no attempt spent: %s", jstr(t, "task_id"), from,
		    reason);
	pm_save(a);
}

bool pm_error_permanent(const cJSON *content)
{
	const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(content, "context");
	return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ctx, "retryable")) ||
	       cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ctx, "recoverable"));
}
