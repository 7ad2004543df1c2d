/* View 2, tasks: the tasks of the current run from the product_manager's
 * state; r, t, o, u, p and C ask the product_manager to reassign, retry,
 * hold, release, reprioritise (p prompts for the priority) or cancel a
 * task (an operator_control message, answered: tui/task_replies.c), B
 * and S to approve more LLM budget for a task paused on its budget or to
 * skip its LLM part. In LLM mode the validation's review and
 * the narrative are rows too (their LLM parts: B, C and S). */
#include <ctype.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/market.h"
#include "agents/workflow.h"
#include "cli/workflows.h"
#include "core/json_out.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

/* The tasks view's state (view->data): the controls sent, until answered. */
struct tasks {
	struct task_replies replies;
};

/* The runs of every workflow (cli/workflows.h) and the current one in them
 * (borrowed), the console's own run if it is there, else the one started
 * last; *wf (may be NULL) the workflow it belongs to. */
static cJSON *tasks_load_wf(struct console *c, cJSON **run, const struct workflow_def **wf)
{
	cJSON *all = cJSON_CreateArray();
	*run = NULL;
	for (size_t i = 0; i < workflow_ndefs; i++) {
		const struct workflow_def *w = workflow_defs[i];
		char *err = NULL;
		cJSON *runs = w->runs ? w->runs(c->cli->data_dir, &err) : NULL;
		free(err);
		if (!runs)
			continue;
		cJSON_AddItemToArray(all, runs);
		cJSON *r;
		cJSON_ArrayForEach(r, runs) {
			bool mine = c->run_id[0] && !strcmp(jstr_or(r, "run_id", ""), c->run_id);
			if (*run && c->run_id[0] && !strcmp(jstr_or(*run, "run_id", ""), c->run_id))
				continue; /* the console's own run is found */
			if (mine || !*run || strcmp(jstr_or(r, "started_at", ""), jstr_or(*run, "started_at", "")) > 0) {
				*run = r;
				if (wf)
					*wf = w;
			}
		}
	}
	return all;
}

static cJSON *tasks_load(struct console *c, cJSON **run)
{
	return tasks_load_wf(c, run, NULL);
}

/* Whether name is in list (NULL-terminated; may be NULL). */
static bool tasks_listed(const char *const *list, const char *name)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

/* list joined by sep ("market, news"; "" for NULL): a new string, caller
 * frees. */
static char *tasks_join(const char *const *list, const char *sep)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; list && list[i]; i++)
		sbuf_addf(&b, "%s%s", i ? sep : "", list[i]);
	return sbuf_detach(&b);
}

/* The run's LLM stages shown as tasks: "validation" (validator_agent's
 * review) and "narrative" (product_manager's), in LLM mode. */
static const char *const stages[] = { "validation", "narrative" };

static bool llm_mode(const cJSON *run)
{
	return !strcmp(jstr_or(cJSON_GetObjectItem(run, "llm"), "mode", ""), "llm");
}

/* The task (a research task, or a stage's object) with this id. */
static const cJSON *task_find(const cJSON *run, const char *id)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (!strcmp(jstr_or(t, "task_id", ""), id))
			return t;
	for (size_t i = 0; i < ARRAY_SIZE(stages); i++)
		if (llm_mode(run) && !strcmp(id, stages[i]))
			return cJSON_GetObjectItem(run, stages[i]);
	return NULL;
}

/* A task's priority as the product_manager sends it: unset is high. */
static const char *task_prio(const cJSON *t)
{
	return *jstr_or(t, "priority", "") ? jstr_or(t, "priority", "") : "high";
}

static void task_row(struct console_rows *r, const char *id, const char *kind,
		     const char *pair, const char *assignee, const char *status, const char *prio,
		     int attempts, double progress, int64_t d, int64_t now, int64_t started)
{
	char dl[16] = "-", age[16] = "-";
	bool open_task = strcmp(status, "done") && strcmp(status, "failed");
	if (d && open_task) {
		if (d >= now)
			console_age(d - now, dl, sizeof(dl));
		else {
			char a[14];
			console_age(now - d, a, sizeof(a));
			snprintf(dl, sizeof(dl), "-%s", a);
		}
	}
	if (started)
		console_age(now - started, age, sizeof(age));
	enum theme_slot s = !strcmp(status, "failed") ? SLOT_ERROR : !strcmp(status, "done") ?
			    SLOT_OK : !strcmp(status, "awaiting_approval") ? SLOT_WARN :
			    (d && d < now && open_task) ? SLOT_WARN : SLOT_NORMAL;
	if (!strcmp(status, "awaiting_approval"))
		status = "await-budget"; /* B approves */
	console_rows_add(r, id, s, "%-20.20s %-7.7s %-8.8s %-18.18s %-12.12s %-6.6s %4d %4.0f%% %8s %6s",
			 id, kind, pair, assignee, status, prio, attempts, progress, dl, age);
}

static unsigned tasks_refresh(struct console *c, struct view *view, bool shown)
{
	if (!shown)
		return 0;
	struct console_rows *r = &view->rows;
	console_rows_clear(r);
	cJSON *run;
	const struct workflow_def *wf = NULL;
	cJSON *st = tasks_load_wf(c, &run, &wf);
	int64_t now = util_now_ns(), started = 0;
	msg_parse_time(jstr_or(run, "started_at", ""), &started);
	size_t n;
	struct workflow_task *tasks = workflow_tasks(wf, run, &n);
	for (size_t i = 0; i < n; i++) {
		const struct workflow_task *t = &tasks[i];
		task_row(r, t->id, t->kind, t->subject, t->assignee, t->status, t->priority,
			 t->attempts, t->progress, t->deadline_ns, now, started);
	}
	free(tasks);
	cJSON_Delete(st);
	return console_rows_done(c, r);
}

static void tasks_draw(struct console *c, struct view *v, int y0, int y1)
{
	cJSON *run;
	const struct workflow_def *wf = NULL;
	cJSON *st = tasks_load_wf(c, &run, &wf);
	char line[256];
	/* the subject's column is named by the workflow ("PAIR") */
	char subj[9];
	util_strlcpy(subj, wf && wf->subject ? wf->subject : "subject", sizeof(subj));
	for (char *p = subj; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	char head[160];
	snprintf(head, sizeof(head), " TASK                 KIND    %-8s ASSIGNEE           STATUS  "
		 "     PRIO   TRIES PROG DEADLINE    AGE", subj);
	if (run) { /* the keys are on the hint line below the list */
		size_t n;
		struct workflow_task *tasks = workflow_tasks(wf, run, &n);
		int queued = 0, ntasks = 0;
		for (size_t i = 0; i < n; i++) {
			queued += !strcmp(tasks[i].status, "queued");
			ntasks += !tasks[i].stage;
		}
		free(tasks);
		char q[48] = "";
		if (queued)
			snprintf(q, sizeof(q), "   %d queued for capacity", queued);
		snprintf(line, sizeof(line), " run %s   status %s   %d tasks%s",
			 jstr_or(run, "run_id", ""), *jstr_or(run, "status", "") ? jstr_or(run, "status", "") : "starting",
			 ntasks, q);
	}
	else
		snprintf(line, sizeof(line), " no run in %s yet", c->cli->data_dir);
	cJSON_Delete(st);
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	console_rows_draw(c, &v->rows, y0 + 1, y1, head);
}

/* Sends an operator_control request (content, taken over) to the
 * controller of wf (the run's workflow; the weekly's product_manager),
 * journals it and says so on the status line, at once when the
 * controller is offline; its answer comes later
 * (view_tasks_poll). task may be NULL (assign). */
static unsigned tasks_request(struct console *c, struct view *v, const struct workflow_def *wf,
			      const char *action, const char *task, cJSON *content,
			      const char *run_id, const char *detail)
{
	struct tasks *tv = v->data;
	if (!wf || !wf->controller) {
		cJSON_Delete(content);
		console_status(c, true, "%s: the %s workflow takes no controls", action,
			       wf ? wf->name : "run's");
		return CONSOLE_REDRAW;
	}
	const char *pm = wf->controller;
	struct msg *m = msg_new("operator", pm, MSG_TASK_ASSIGNMENT, content);
	char *err = NULL, result[512];
	bool warn = false;
	cJSON *ids = cJSON_CreateArray();
	if (task)
		cJSON_AddItemToArray(ids, cJSON_CreateString(task));
	if (!m) {
		snprintf(result, sizeof(result), "failed: cannot build the message");
	} else {
		m->priority = PRIO_URGENT;
		m->correlation_id = xstrdup(run_id);
		cJSON_AddItemToArray(ids, cJSON_CreateString(m->id));
		if (bus_send(c->bus, m, &err) < 0) {
			snprintf(result, sizeof(result), "failed: %s", err);
		} else {
			char label[160], why[96];
			snprintf(label, sizeof(label), "%s%s%s", action, task ? " " : "", task ? task : "");
			int l = task_replies_sent(&tv->replies, c, pm, m->id, action, task, label,
						  why, sizeof(why));
			if (l == WF_ALIVE)
				snprintf(result, sizeof(result), "asked %s (%s)%s; waiting "
					 "for its answer", pm, m->id, detail);
			else
				snprintf(result, sizeof(result), "%s is %s (%s): the "
					 "control%s waits in its inbox", pm, l == WF_OFFLINE ? "offline" :
					 "not answering", why, detail);
			warn = l != WF_ALIVE;
		}
	}
	console_journal(c, action, ids, result);
	console_status(c, err != NULL || !m || warn, "%s%s%s: %s", action, task ? " " : "",
		       task ? task : "", result);
	free(err);
	cJSON_Delete(ids);
	msg_free(&m);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

/* The selected task of the run shown (NULL when none, said on the status
 * line); *st is the product_manager's state it points into (caller
 * deletes), *id the selected row's task id. */
static const cJSON *tasks_selected(struct console *c, struct view *v, cJSON **st, cJSON **run,
				   const char **id, const struct workflow_def **wf)
{
	*st = *run = NULL;
	struct console_row *cur = console_rows_current(&v->rows);
	if (!cur || !cur->id) {
		console_status(c, true, "no task selected");
		return NULL;
	}
	*id = cur->id;
	*st = tasks_load_wf(c, run, wf);
	return task_find(*run, cur->id);
}

/* Whether the selected task is awaiting budget approval; says why not. */
static bool tasks_awaits_approval(struct console *c, struct view *v)
{
	cJSON *st, *run;
	const char *id = NULL;
	const cJSON *task = tasks_selected(c, v, &st, &run, &id, NULL);
	bool ok = task && !strcmp(jstr_or(task, "status", ""), "awaiting_approval");
	if (!ok && id)
		console_status(c, true, "%s is %s, not awaiting budget approval", id,
			       *jstr_or(task, "status", "") ? jstr_or(task, "status", "") :
			       strcmp(id, "validation") && strcmp(id, "narrative") ? "gone" :
			       "waiting");
	cJSON_Delete(st);
	return ok;
}

/* Every task action is a request to the product_manager, which owns the
 * run: it cancels the task on its agent before giving it to another,
 * tracks the new assignment and names the change in the report. */
static unsigned tasks_send(struct console *c, struct view *v, enum console_op op,
			   const char *chosen_prio)
{
	cJSON *st, *run;
	const char *cur_id = NULL;
	const struct workflow_def *wf = NULL;
	const cJSON *task = tasks_selected(c, v, &st, &run, &cur_id, &wf);
	if (!cur_id)
		return CONSOLE_REDRAW;
	const char *kind = jstr_or(task, "kind", "");
	bool stage = !strcmp(cur_id, "validation") || !strcmp(cur_id, "narrative");
	if ((!task && !stage) || (!stage && !tasks_listed(wf ? wf->task_kinds : NULL, kind))) {
		char *kinds = tasks_join(wf ? wf->task_kinds : NULL, ", ");
		console_status(c, true, "only %s tasks (%s) can be changed",
			       wf && wf != workflow_defs[0] ? wf->name : "research",
			       kinds);
		free(kinds);
		cJSON_Delete(st);
		return CONSOLE_REDRAW;
	}
	if (stage && op != OP_TASK_APPROVE && op != OP_TASK_CANCEL && op != OP_TASK_SKIP_LLM) {
		console_status(c, true, "the %s takes B, C and S only (its LLM part paused on "
			       "its budget)", cur_id);
		cJSON_Delete(st);
		return CONSOLE_REDRAW;
	}
	const char *action = op == OP_REASSIGN ? "reassign" : op == OP_TASK_RETRY ? "retry" :
			     op == OP_TASK_CANCEL ? "cancel" : op == OP_TASK_HOLD ? "hold" :
			     op == OP_TASK_RELEASE ? "release" : op == OP_TASK_APPROVE ? "approve_budget" :
			     op == OP_TASK_SKIP_LLM ? "skip_llm" : "priority";
	if ((op == OP_TASK_APPROVE || op == OP_TASK_SKIP_LLM || (stage && op == OP_TASK_CANCEL)) &&
	    strcmp(jstr_or(task, "status", ""), "awaiting_approval")) {
		console_status(c, true, "%s is %s, not awaiting budget approval", cur_id,
			       *jstr_or(task, "status", "") ? jstr_or(task, "status", "") : "waiting");
		cJSON_Delete(st);
		return CONSOLE_REDRAW;
	}
	if (op == OP_TASK_PRIORITY && !chosen_prio) {
		char *raw = xasprintf("priority of %s (now %s): u)rgent h)igh n)ormal l)ow, Esc "
				      "cancels", cur_id, task_prio(task));
		console_confirm(c, v, OP_TASK_PRIORITY, true, "%s", raw); /* sanitised there */
		free(raw);
		cJSON_Delete(st);
		return CONSOLE_REDRAW;
	}
	const char *prio = op == OP_TASK_PRIORITY ? chosen_prio : NULL;
	char detail[64] = "";
	if (prio)
		snprintf(detail, sizeof(detail), ": priority %s", prio);
	unsigned r = tasks_request(c, v, wf, action, cur_id,
				   wf_control_content(action, jstr_or(run, "run_id", ""), cur_id, NULL, prio),
				   jstr_or(run, "run_id", ""), detail);
	cJSON_Delete(st);
	return r;
}

/* The key that answers the priority prompt (u, h, n, l; others cancel). */
static unsigned tasks_priority(struct console *c, struct view *v, int key)
{
	static const char *const prios[] = { "urgent", "high", "normal", "low" };
	const char *p = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(prios); i++)
		if (key == prios[i][0] || key == prios[i][0] - 'a' + 'A')
			p = prios[i];
	if (!p) {
		console_status(c, false, "priority: cancelled");
		return CONSOLE_REDRAW;
	}
	return tasks_send(c, v, OP_TASK_PRIORITY, p);
}

/* Refuses (on the status line, journalled, nothing sent) an :assign the
 * product_manager could not do: kind, pair and agent checked here. */
static bool assign_valid(struct console *c, const struct workflow_def *wf, const char *kind,
			 const char *pair, const char *agent)
{
	char b[4], q[4], *err = NULL, *why = NULL;
	if (!tasks_listed(wf->task_kinds, kind)) {
		char *or = tasks_join(wf->task_kinds, " or "), *bar = tasks_join(wf->task_kinds, "|");
		why = xasprintf("kind \"%s\" is not %s (usage :assign %s PAIR [AGENT])", kind, or,
				bar);
		free(or);
		free(bar);
	} else if (market_pair_parse(pair, b, q, &err) < 0)
		why = xasprintf("%s", err);
	else if (!market_currency_known(b) || !market_currency_known(q))
		why = xasprintf("pair %s: unknown currency %s (no data has it)", pair,
				market_currency_known(b) ? q : b);
	else if (*agent && !tasks_listed(wf->workers, agent)) {
		char *workers = tasks_join(wf->workers, ", ");
		why = xasprintf("%s is not a researcher (%s)", agent, workers);
		free(workers);
	}
	free(err);
	if (!why)
		return true;
	char *result = xasprintf("refused: %s", why);
	console_journal(c, "assign", NULL, result);
	console_status(c, true, "assign: %s", result);
	free(result);
	free(why);
	return false;
}

unsigned view_tasks_assign(struct console *c, const char *kind, const char *pair,
			   const char *agent)
{
	cJSON *run;
	const struct workflow_def *wf = NULL;
	cJSON *st = tasks_load_wf(c, &run, &wf);
	if (!assign_valid(c, wf ? wf : workflow_defs[0], kind, pair, agent)) {
		cJSON_Delete(st);
		return CONSOLE_REDRAW;
	}
	if (!run) {
		console_status(c, true, "assign: no run to add a task to");
		cJSON_Delete(st);
		return CONSOLE_REDRAW;
	}
	cJSON *content = wf_control_content("assign", jstr_or(run, "run_id", ""), "", *agent ? agent : NULL,
					    NULL);
	cJSON_AddStringToObject(content, "kind", kind);
	cJSON_AddStringToObject(content, "pair", pair);
	char detail[64];
	snprintf(detail, sizeof(detail), " for a %s task on %s", kind, pair);
	unsigned r = tasks_request(c, console_view_find(c, &view_tasks_ops), wf, "assign", NULL,
				   content, jstr_or(run, "run_id", ""), detail);
	cJSON_Delete(st);
	return r;
}

unsigned view_tasks_run(struct console *c, const char *workflow, const char *args)
{
	const struct workflow_def *w = workflow_find(workflow);
	char *names = workflow_names();
	char *why = NULL;
	if (!*workflow)
		why = xasprintf("which workflow? :run NAME ARGS (%s)", names);
	else if (!w)
		why = xasprintf("no workflow \"%s\" (%s)", workflow, names);
	else if (w == workflow_defs[0])
		why = xasprintf("the %s run starts with the console (madf console --as-of, --pairs, "
				"--fresh choose it)", w->name);
	else if (!w->trigger)
		why = xasprintf("the %s workflow has no run the console starts", w->name);
	free(names);
	char said[1024] = "", run_id[128] = "", *msg_id = NULL, *err = NULL;
	int r = -1;
	if (!why) {
		struct wf_request req = { .as_of_ns = util_now_ns(), .codebase = args };
		r = w->trigger(c->cli->data_dir, c->bus, &req, run_id, sizeof(run_id), said,
			       sizeof(said), &msg_id, &err);
		if (r < 0)
			why = xasprintf("%s", err ? err : "failed");
		free(err);
	}
	char *result = why ? xasprintf("refused: %s", why) : xstrdup(said);
	cJSON *ids = cJSON_CreateArray();
	if (msg_id)
		cJSON_AddItemToArray(ids, cJSON_CreateString(msg_id));
	console_journal(c, "start-run", ids, result);
	cJSON_Delete(ids);
	console_status(c, why != NULL, "run %s: %s", *workflow ? workflow : "?", result);
	if (r > 0) {
		util_strlcpy(c->run_id, run_id, sizeof(c->run_id));
		console_show(c, console_view_find(c, &view_tasks_ops));
	}
	free(result);
	free(why);
	free(msg_id);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

bool view_tasks_health(struct console *c, char *buf, size_t size)
{
	cJSON *run;
	const struct workflow_def *wf = NULL;
	cJSON *st = tasks_load_wf(c, &run, &wf);
	bool stuck = false;
	if (size < 2) {
		cJSON_Delete(st);
		return false;
	}
	if (run && wf && wf->health)
		stuck = wf->health(run, util_now_ns(), buf + 1, size - 1);
	else
		util_strlcpy(buf + 1, "no run yet", size - 1);
	buf[0] = ' ';
	cJSON_Delete(st);
	return stuck;
}

/* The task's record in the product_manager's state (the console's run, or
 * the one started last), pretty-printed, or NULL (caller frees). */
static char *task_record(struct console *c, const char *id)
{
	cJSON *run;
	cJSON *st = tasks_load(c, &run);
	const cJSON *found = NULL, *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (!strcmp(jstr_or(t, "task_id", ""), id))
			found = t;
	if (!found && run && (!strcmp(id, "validation") || !strcmp(id, "narrative")))
		found = cJSON_GetObjectItem(run, id);
	char *out = found ? cJSON_Print(found) : NULL;
	cJSON_Delete(st);
	return out;
}

static unsigned tasks_act(struct console *c, struct view *v, enum console_op op, int answer)
{
	switch (op) {
	case OP_OPEN: { /* the row, with the task's record */
		struct console_row *cur = console_rows_current(&v->rows);
		char *rec = cur && cur->id ? task_record(c, cur->id) : NULL;
		unsigned f = console_read_row(c, rec);
		free(rec);
		return f;
	}
	case OP_TASK_CANCEL:
	case OP_TASK_APPROVE:
	case OP_TASK_SKIP_LLM:
		if (answer)
			return tasks_send(c, v, op, NULL);
		if (!console_rows_current(&v->rows)) {
			console_status(c, true, "no task selected");
			return CONSOLE_REDRAW;
		}
		if ((op == OP_TASK_APPROVE || op == OP_TASK_SKIP_LLM) && !tasks_awaits_approval(c, v))
			return CONSOLE_REDRAW;
		return console_confirm(c, v, op, false, "%s", op == OP_TASK_CANCEL ?
				       "Cancel 1 task? y/n" : op == OP_TASK_APPROVE ?
				       "Approve another LLM budget for 1 task? y/n" :
				       "Skip the LLM part of 1 task? y/n");
	case OP_TASK_ASSIGN:
	{
		char *kinds = tasks_join(workflow_defs[0]->task_kinds, "|");
		char *hint = xasprintf("assign %s PAIR [AGENT]", kinds);
		unsigned f = console_command_open(c, "assign ", hint);
		free(hint);
		free(kinds);
		return f;
	}
	case OP_TASK_PRIORITY:
		return answer ? tasks_priority(c, v, answer) : tasks_send(c, v, op, NULL);
	case OP_REASSIGN:
	case OP_TASK_RETRY:
	case OP_TASK_HOLD:
	case OP_TASK_RELEASE:
		return tasks_send(c, v, op, NULL);
	default:
		return CONSOLE_PASS;
	}
}

static unsigned tasks_frame(struct console *c, struct view *v)
{
	struct tasks *tv = v->data;
	return task_replies_poll(&tv->replies, c);
}

static const char *tasks_enter_hint(const struct view *v)
{
	(void)v;
	return "Enter read";
}

static void *tasks_init(struct console *c)
{
	(void)c;
	return xcalloc(1, sizeof(struct tasks));
}

static void tasks_release(struct console *c, struct view *v)
{
	(void)c;
	free(v->data);
}

static const struct key_binding tasks_keys[] = {
	{ 'r', OP_REASSIGN, "reassign the task: to the other researcher (cancelled on the first); a review's to a fresh attempt of its agent", false, true, "reassign" },
	{ 't', OP_TASK_RETRY, "retry a failed or cancelled task (on the other researcher; a review's on its agent)", false, true, "retry" },
	{ 'o', OP_TASK_HOLD, "hold the task (taken back from its agent)", false, true, "hold" },
	{ 'u', OP_TASK_RELEASE, "release a held task to its agent", false, true, "release" },
	{ 'p', OP_TASK_PRIORITY, "set the task's priority: u)rgent h)igh n)ormal l)ow", false, true, "priority" },
	{ 'C', OP_TASK_CANCEL, "cancel the task (named in the report)", true, true, "cancel" },
	{ 'B', OP_TASK_APPROVE, "approve another LLM budget for a task awaiting approval", true, true, "budget" },
	{ 'S', OP_TASK_SKIP_LLM, "skip the LLM part of a task awaiting approval (deterministic result)", true, true, "skip-LLM" },
	{ 'a', OP_TASK_ASSIGN, "assign a new task: :assign market|news PAIR [AGENT]", false, true, "assign" },
};

const struct view_ops view_tasks_ops = {
	.name = "tasks",
	.title = "Tasks",
	.help = "tasks of the current run",
	.keys = tasks_keys,
	.nkeys = ARRAY_SIZE(tasks_keys),
	.init = tasks_init,
	.load = tasks_refresh,
	.draw = tasks_draw,
	.act = tasks_act,
	.enter_hint = tasks_enter_hint,
	.frame = tasks_frame,
	.release = tasks_release,
};
