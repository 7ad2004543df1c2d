/* View 3, queues: one inbox, the claimed messages, or the dead letters
 * grouped by reason; a detail pane; retry, delete, kill on the marked set. */
#include <curses.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

static int entry_cmp_reason(const void *a, const void *b)
{
	const struct bus_entry *x = a, *y = b;
	int r = strcmp(x->reason ? x->reason : "", y->reason ? y->reason : "");
	if (r)
		return r;
	return x->enqueued_ns < y->enqueued_ns ? -1 : x->enqueued_ns > y->enqueued_ns;
}

static void queue_title(const struct console *c, char *buf, size_t size)
{
	if (c->qkind == QUEUE_DEAD)
		snprintf(buf, size, "dead letters");
	else if (c->qkind == QUEUE_PROCESSING)
		snprintf(buf, size, "processing%s%s", c->qagent[0] ? " of " : "", c->qagent);
	else
		snprintf(buf, size, "inbox of %s", c->qagent);
}

unsigned view_queues_refresh(struct console *c)
{
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	if (c->qkind == QUEUE_INBOX && !c->qagent[0])
		util_strlcpy(c->qagent, "product_manager", sizeof(c->qagent));
	enum bus_queue q = c->qkind == QUEUE_DEAD ? BUS_Q_DEAD : c->qkind == QUEUE_PROCESSING ?
			   BUS_Q_PROCESSING : BUS_Q_INBOX;
	struct bus_entry *v = NULL;
	size_t n = 0;
	char *err = NULL;
	console_rows_clear(r);
	if (bus_list(c->bus, q, c->qagent[0] && q != BUS_Q_DEAD ? c->qagent : NULL, true, &v, &n,
		     &err) < 0) {
		console_status(c, true, "bus: %s", err);
		free(err);
		return console_rows_done(c, r);
	}
	if (q == BUS_Q_DEAD && n)
		qsort(v, n, sizeof(*v), entry_cmp_reason);
	const char *group = NULL;
	size_t gstart = 0;
	for (size_t i = 0; i < n; i++) {
		const struct bus_entry *e = &v[i];
		if (q == BUS_Q_DEAD && (!group || strcmp(group, e->reason ? e->reason : "?"))) {
			group = e->reason ? e->reason : "?";
			size_t k = i;
			while (k < n && !strcmp(v[k].reason ? v[k].reason : "?", group))
				k++;
			console_rows_add(r, NULL, SLOT_HEADING, "%s (%zu)", group, k - i);
			gstart = i;
		}
		(void)gstart;
		char age[16] = "-";
		if (e->enqueued_ns)
			console_age(util_now_ns() - e->enqueued_ns, age, sizeof(age));
		const char *id = e->message_id ? e->message_id : e->name;
		if (q == BUS_Q_DEAD)
			console_rows_add(r, id, SLOT_NORMAL, "  %-56.56s %-18.18s %-18.18s %-16.16s %s",
					 id, e->type ? e->type : "?", e->original_inbox ? e->original_inbox : "?",
					 e->from ? e->from : "?", age);
		else
			console_rows_add(r, id, SLOT_NORMAL, "%-56.56s %-18.18s %-16.16s %-6s %d %s",
					 id, e->type ? e->type : "?", e->from ? e->from : "?",
					 msg_priority_name(e->priority), e->attempts, age);
	}
	bus_entries_free(v, n);
	return console_rows_done(c, r);
}

/* The detail of the current message: pretty JSON, the dead-letter reason. */
static void queues_detail(struct console *c, const char *id)
{
	if (id && !strcmp(id, c->detail_id) && c->detail)
		return;
	free(c->detail);
	c->detail = NULL;
	util_strlcpy(c->detail_id, id ? id : "", sizeof(c->detail_id));
	if (!id)
		return;
	struct bus_entry e;
	char *err = NULL, *json = NULL;
	size_t len = 0;
	memset(&e, 0, sizeof(e));
	struct sbuf b;
	sbuf_init(&b);
	if (bus_find(c->bus, id, &e, &err) < 0 || bus_read(c->bus, &e, &json, &len, &err) < 0) {
		sbuf_addf(&b, "(%s)", err ? err : "gone");
		free(err);
	} else {
		sbuf_addf(&b, "queue: %s%s%s   file: %s\n", bus_queue_name(e.queue), e.agent ? "/" : "",
			  e.agent ? e.agent : "", e.name);
		if (e.reason || e.error)
			sbuf_addf(&b, "dead-letter reason: %s\nerror: %s\noriginal inbox: %s\n",
				  e.reason ? e.reason : "?", e.error ? e.error : "?",
				  e.original_inbox ? e.original_inbox : "?");
		cJSON *j = cJSON_ParseWithLength(json, len);
		char *pretty = j ? json_pretty(j) : NULL;
		sbuf_addstr(&b, pretty ? pretty : json);
		free(pretty);
		cJSON_Delete(j);
	}
	free(json);
	bus_entry_release(&e);
	c->detail = util_sanitize(b.data, b.len, true);
	sbuf_release(&b);
}

void view_queues_draw(struct console *c, int y0, int y1)
{
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	char title[128], line[256];
	queue_title(c, title, sizeof(title));
	size_t marked = 0, msgs = 0;
	for (size_t i = 0; i < r->n; i++) {
		marked += r->v[i].marked;
		msgs += r->v[i].id != NULL;
	}
	snprintf(line, sizeof(line), " %s: %zu message%s, %zu marked   (:inbox NAME, :processing, :dlq)",
		 title, msgs, msgs == 1 ? "" : "s", marked);
	console_put(c, y0, 0, COLS, SLOT_HEADING, line, true);
	int mid = y0 + 1 + (y1 - y0 - 1) / 2;
	console_rows_draw(c, r, y0 + 1, mid, c->qkind == QUEUE_DEAD ?
			  "   MESSAGE ID                                               TYPE               "
			  "ORIGINAL INBOX     FROM             AGE" :
			  " MESSAGE ID                                               TYPE               "
			  "FROM             PRIO   TRIES AGE");
	struct console_row *cur = console_rows_current(r);
	queues_detail(c, cur ? cur->id : NULL);
	/* A plain U+2500 under UTF-8 (no alternate character set, which
	 * some multiplexers pass on as "q"), '-' otherwise. */
	const char *cs = nl_langinfo(CODESET);
	const char *rule = cs && !strcmp(cs, "UTF-8") ? "\xe2\x94\x80" : "-";
	move(mid, 0);
	for (int x = 0; x < COLS; x++)
		addstr(rule);
	int y = mid + 1;
	const char *p = c->detail ? c->detail : "";
	while (y < y1 && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *one = xstrndup(p, n);
		console_put(c, y++, 1, COLS - 1, SLOT_NORMAL, one, false);
		free(one);
		p += n + (nl ? 1 : 0);
	}
}

/* The ids an action applies to: the marked rows, else the current one. */
static char **queues_targets(struct console *c, size_t *n)
{
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	char **v = NULL;
	*n = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].marked && r->v[i].id) {
			v = xrealloc(v, (*n + 1) * sizeof(*v));
			v[(*n)++] = r->v[i].id;
		}
	if (!*n) {
		struct console_row *cur = console_rows_current(r);
		if (cur && cur->id) {
			v = xrealloc(v, sizeof(*v));
			v[(*n)++] = cur->id;
		}
	}
	return v;
}

size_t view_queues_count(struct console *c)
{
	size_t n;
	free(queues_targets(c, &n));
	return n;
}

unsigned view_queues_act(struct console *c, enum console_op op)
{
	size_t n, ok = 0;
	char **ids = queues_targets(c, &n);
	cJSON *jids = cJSON_CreateArray();
	char *first_err = NULL;
	for (size_t i = 0; i < n; i++) {
		char *err = NULL;
		int rc = op == OP_RETRY ? bus_retry(c->bus, ids[i], NULL, &err) :
			 op == OP_DELETE ? bus_remove(c->bus, ids[i], &err) :
			 bus_kill(c->bus, ids[i], "killed by the operator", &err);
		cJSON_AddItemToArray(jids, cJSON_CreateString(ids[i]));
		if (rc == 0)
			ok++;
		else if (!first_err)
			first_err = err;
		else
			free(err);
	}
	char result[600];
	snprintf(result, sizeof(result), "%zu of %zu done%s%s", ok, n, first_err ? "; " : "",
		 first_err ? first_err : "");
	console_journal(c, keys_op_name(op), jids, result);
	console_status(c, ok < n, "%s: %s", keys_op_name(op), result);
	cJSON_Delete(jids);
	free(first_err);
	free(ids);
	struct console_rows *r = &c->rows[VIEW_QUEUES];
	for (size_t i = 0; i < r->n; i++)
		r->v[i].marked = false;
	for (size_t i = 0; i < r->nkeep; i++)
		free(r->keep[i]);
	r->nkeep = 0;
	free(c->detail);
	c->detail = NULL;
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}
