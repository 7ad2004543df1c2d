/* Runs followed from another host: progress and the final report sent to
 * the inbox the trigger named (see pm_notify.h). */
#include "agents/pm_notify.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/workflow.h"
#include "core/util.h"
#include "core/banned.h"

static const char *sget(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int wf_count_tasks(const cJSON *run, const char *status)
{
	int n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const char *s = sget(t, "status");
		if (!status || (s && !strcmp(s, status)))
			n++;
	}
	return n;
}

void wf_progress_line(const cJSON *run, char *buf, size_t size)
{
	int total = wf_count_tasks(run, NULL), done = wf_count_tasks(run, "done");
	int failed = wf_count_tasks(run, "failed"), queued = wf_count_tasks(run, "queued");
	int reassigned = cJSON_GetArraySize(cJSON_GetObjectItem(run, "failures"));
	const char *st = sget(run, "status") ? sget(run, "status") : "starting";
	char ids[160];
	int paused = wf_awaiting_approval(run, ids, sizeof(ids));
	/* Which tasks wait for the operator (their LLM budget is spent). */
	snprintf(buf, size, "%s: %d/%d tasks done, %d failed, %d queued, "
		 "%d reassignments/failures%s%s", st, done, total, failed, queued, reassigned,
		 paused ? ", awaiting approval: " : "", paused ? ids : "");
}

void wf_notify_inbox(const char *run_id, char *buf, size_t size)
{
	size_t k = 0;
	const char *pfx = "run-";
	for (; *pfx && k + 1 < size; pfx++)
		buf[k++] = *pfx;
	for (const char *p = run_id; *p && k + 1 < size && k < MSG_AGENT_MAX; p++) {
		unsigned char c = (unsigned char)*p;
		buf[k++] = isalnum(c) ? (char)tolower(c) : (c == '_' ? '_' : '-');
	}
	buf[k] = '\0';
}

/* The last progress line sent per run (this process's product_manager). */
#define NOTIFY_RUNS 16
static struct {
	char run_id[96];
	char line[256];
} sent[NOTIFY_RUNS];

static char *last_line(const char *run_id)
{
	for (size_t i = 0; i < NOTIFY_RUNS; i++)
		if (!strcmp(sent[i].run_id, run_id))
			return sent[i].line;
	for (size_t i = 0; i < NOTIFY_RUNS; i++)
		if (!sent[i].run_id[0]) {
			util_strlcpy(sent[i].run_id, run_id, sizeof(sent[i].run_id));
			return sent[i].line;
		}
	/* full: the first slot is reused */
	util_strlcpy(sent[0].run_id, run_id, sizeof(sent[0].run_id));
	sent[0].line[0] = '\0';
	return sent[0].line;
}

static void send_or_log(struct agent *a, const char *to, enum msg_type type, cJSON *c,
			const char *run_id)
{
	char *err = NULL;
	if (agent_send(a, to, type, c, NULL, NULL, run_id, PRIO_NORMAL, NULL, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "notify_failed", NULL,
			  "cannot tell %s about run %s: %s", to, run_id, err ? err : "?");
		free(err);
	}
}

static void send_progress(struct agent *a, const cJSON *run, const char *to, bool force)
{
	const char *run_id = sget(run, "run_id");
	if (!run_id)
		return;
	char line[256];
	wf_progress_line(run, line, sizeof(line));
	char *last = last_line(run_id);
	if (!force && !strcmp(last, line))
		return;
	util_strlcpy(last, line, sizeof(sent[0].line));
	int total = wf_count_tasks(run, NULL);
	int finished = wf_count_tasks(run, "done") + wf_count_tasks(run, "failed");
	const char *st = sget(run, "status");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", run_id);
	cJSON_AddNumberToObject(c, "percent_complete",
				st && !strcmp(st, "done") ? 100 : total ? finished * 100 / total : 0);
	cJSON_AddStringToObject(c, "current_step", line);
	cJSON_AddNumberToObject(c, "items_done", finished);
	cJSON_AddNumberToObject(c, "items_total", total);
	cJSON_AddStringToObject(c, "run_status", st ? st : "starting");
	cJSON *fl = cJSON_AddArrayToObject(c, "failed_tasks");
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (sget(t, "status") && !strcmp(sget(t, "status"), "failed") && sget(t, "task_id"))
			cJSON_AddItemToArray(fl, cJSON_CreateString(sget(t, "task_id")));
	send_or_log(a, to, MSG_TASK_PROGRESS, c, run_id);
}

void pm_notify_trigger(struct agent *a, cJSON *run, const struct msg *m)
{
	const char *to = sget(m->content, "notify");
	if (!run || !to || !util_valid_agent_name(to))
		return;
	cJSON_DeleteItemFromObject(run, "notify");
	cJSON_AddStringToObject(run, "notify", to);
	const char *st = sget(run, "status");
	if (!st || strcmp(st, "done")) {
		send_progress(a, run, to, true);
		return;
	}
	/* done before: where its report is (on the report writer's host) */
	const cJSON *rp = cJSON_GetObjectItem(run, "report");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", sget(run, "run_id"));
	cJSON_AddStringToObject(c, "status", "completed");
	cJSON_AddNumberToObject(c, "execution_time_minutes", 0);
	cJSON_AddNumberToObject(c, "data_points_collected", 0);
	cJSON_AddArrayToObject(c, "sources_accessed");
	cJSON_AddArrayToObject(c, "key_findings");
	cJSON *raw = cJSON_AddObjectToObject(c, "raw_data");
	cJSON_AddStringToObject(raw, "kind", "report");
	cJSON_AddStringToObject(raw, "run_id", sget(run, "run_id"));
	cJSON_AddBoolToObject(raw, "done_before", true);
	cJSON_AddStringToObject(raw, "report_md", sget(rp, "md") ? sget(rp, "md") : "");
	cJSON_AddStringToObject(raw, "report_json", sget(rp, "json") ? sget(rp, "json") : "");
	cJSON_AddNumberToObject(c, "confidence_score", 1);
	cJSON_AddNumberToObject(c, "data_freshness_hours", 0);
	cJSON_AddArrayToObject(c, "warnings");
	send_or_log(a, to, MSG_RESEARCH_RESULT, c, sget(run, "run_id"));
}

void pm_notify_tick(struct agent *a, cJSON *runs)
{
	cJSON *run;
	cJSON_ArrayForEach(run, runs) {
		const char *to = sget(run, "notify"), *st = sget(run, "status");
		if (to && (!st || strcmp(st, "done")))
			send_progress(a, run, to, false);
	}
}

void pm_notify_report(struct agent *a, cJSON *run, const struct msg *m)
{
	const char *to = sget(run, "notify");
	if (!to)
		return;
	send_progress(a, run, to, false); /* the last line: done */
	const cJSON *in = cJSON_GetObjectItem(m->content, "raw_data");
	cJSON *c = cJSON_Duplicate(m->content, true);
	cJSON_DeleteItemFromObject(c, "task_id");
	cJSON_AddStringToObject(c, "task_id", sget(run, "run_id"));
	cJSON *raw = cJSON_GetObjectItem(c, "raw_data");
	if (!cJSON_IsObject(raw) || !sget(in, "md_text") || !sget(in, "json_text")) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "notify_failed", NULL,
			  "the report of run %s came without its text; %s is told where it is",
			  sget(run, "run_id"), to);
		if (!cJSON_IsObject(raw))
			raw = cJSON_AddObjectToObject(c, "raw_data");
	}
	cJSON_DeleteItemFromObject(raw, "run_id");
	cJSON_AddStringToObject(raw, "run_id", sget(run, "run_id"));
	send_or_log(a, to, MSG_RESEARCH_RESULT, c, sget(run, "run_id"));
}
