/* The answers to the console's task controls. Every operator_control the
 * tasks view sends is remembered here until the run's workflow's
 * controller (cli/workflows.h; the weekly's product_manager) answers it: a task_acceptance to "operator" whose reply_to is the control's id
 * (agents/pm.c, control_answer). The answer is shown on the status line
 * and journalled; the console says at once when the controller is
 * offline (the control waits in its inbox), and after CONTROL_WAIT_S
 * seconds without an answer that none came. Only the answers to this
 * console's controls are taken from the operator inbox; nothing else in
 * it is touched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

#define CONTROL_WAIT_S 5

static void pending_drop(struct task_replies *tr, size_t i)
{
	memmove(&tr->v[i], &tr->v[i + 1], (tr->n - i - 1) * sizeof(tr->v[0]));
	tr->n--;
}

int task_replies_sent(struct task_replies *tr, struct console *c, const char *controller,
		      const char *id, const char *action, const char *task, const char *label,
		      char *why, size_t size)
{
	enum wf_liveness l = wf_agent_liveness(c->cli->data_dir, controller, util_now_ns(), why,
					       size);
	if (tr->n == TASK_REPLIES_MAX)
		pending_drop(tr, 0); /* the oldest stops being waited for */
	struct task_reply_wait *p = &tr->v[tr->n++];
	memset(p, 0, sizeof(*p));
	util_strlcpy(p->id, id, sizeof(p->id));
	util_strlcpy(p->action, action, sizeof(p->action));
	util_strlcpy(p->task, task ? task : "", sizeof(p->task));
	util_strlcpy(p->label, label, sizeof(p->label));
	util_strlcpy(p->controller, controller, sizeof(p->controller));
	p->sent_ns = util_mono_ns();
	p->said = l != WF_ALIVE; /* the offline notice is the one said */
	return l;
}

static void tasks_journal(struct console *c, const struct task_reply_wait *p, const char *reply_id,
			  const char *result)
{
	cJSON *ids = cJSON_CreateArray();
	if (p->task[0])
		cJSON_AddItemToArray(ids, cJSON_CreateString(p->task));
	cJSON_AddItemToArray(ids, cJSON_CreateString(p->id));
	if (reply_id)
		cJSON_AddItemToArray(ids, cJSON_CreateString(reply_id));
	console_journal(c, p->action, ids, result);
	cJSON_Delete(ids);
}

/* Whether message_id is one a pending control's controller sent (its
 * ids start with its name and "_"). */
static bool replies_from_controller(const struct task_replies *tr, const char *message_id)
{
	for (size_t i = 0; message_id && i < tr->n; i++) {
		size_t n = strlen(tr->v[i].controller);
		if (n && !strncmp(message_id, tr->v[i].controller, n) && message_id[n] == '_')
			return true;
	}
	return false;
}

/* The answer m to pending control i: shown, journalled, taken. */
static void tasks_answer(struct task_replies *tr, struct console *c, size_t i,
			 const struct msg *m)
{
	const struct task_reply_wait *p = &tr->v[i];
	const char *outcome = jstr(m->content, "outcome");
	const char *detail = jstr(m->content, "detail");
	const char *st = jstr(m->content, "status");
	if (!outcome)
		outcome = st && !strcmp(st, "accepted") ? "applied" : "refused";
	if (!detail)
		detail = jstr(m->content, "rejection_reason") ? jstr(m->content, "rejection_reason") : "";
	char *result = xasprintf("%s: %s", outcome, detail);
	tasks_journal(c, p, m->id, result);
	console_status(c, strcmp(outcome, "applied") != 0, "%s: %s", p->label, result);
	free(result);
	pending_drop(tr, i);
}

unsigned task_replies_poll(struct task_replies *tr, struct console *c)
{
	/* at most every 100 ms, and only while an answer is awaited */
	int64_t now = util_mono_ns();
	if (!tr->n || now - tr->polled_ns < 100 * 1000000LL)
		return 0;
	tr->polled_ns = now;
	unsigned f = 0;
	struct bus_entry *v = NULL;
	size_t n = 0;
	char *err = NULL;
	if (bus_list(c->bus, BUS_Q_INBOX, "operator", false, &v, &n, &err) < 0) {
		free(err);
		n = 0;
	}
	for (size_t k = 0; k < n && tr->n; k++) {
		const struct bus_entry *e = &v[k];
		/* the controllers' messages, by their ids' prefix; read to
		 * find the answers among them */
		if (!replies_from_controller(tr, e->message_id))
			continue;
		char *json = NULL;
		size_t len = 0;
		struct msg *m = NULL;
		if (bus_read(c->bus, e, &json, &len, &err) < 0 || msg_parse(json, len, &m, NULL) < 0 ||
		    m->type != MSG_TASK_ACCEPTANCE) {
			msg_free(&m);
			free(err);
			err = NULL;
			free(json);
			continue;
		}
		free(json);
		for (size_t i = 0; i < tr->n; i++) {
			if (!m->reply_to || strcmp(m->reply_to, tr->v[i].id) ||
			    strcmp(m->from, tr->v[i].controller))
				continue;
			tasks_answer(tr, c, i, m);
			if (bus_remove(c->bus, m->id, &err) < 0) {
				free(err); /* shown already; another console took it */
				err = NULL;
			}
			f |= CONSOLE_RELOAD | CONSOLE_REDRAW;
			break;
		}
		msg_free(&m);
	}
	bus_entries_free(v, n);
	for (size_t i = 0; i < tr->n; i++) {
		struct task_reply_wait *p = &tr->v[i];
		if (p->said || now - p->sent_ns < CONTROL_WAIT_S * 1000000000LL)
			continue;
		p->said = true; /* still waited for: a late answer is shown */
		char result[128];
		snprintf(result, sizeof(result), "no answer from %s after %d s", p->controller,
			 CONTROL_WAIT_S);
		tasks_journal(c, p, NULL, result);
		console_status(c, true, "%s: %s", p->label, result);
		f |= CONSOLE_REDRAW;
	}
	return f;
}
