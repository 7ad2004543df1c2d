/* The report writer: keeps the Markdown draft of a run in
 * data/reports/drafts/ up to date as the product_manager sends snapshots
 * (the console streams it), and writes the final report and its JSON twin
 * when asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

static int write_text(struct agent *a, const char *dir, const char *name, const char *ext,
		      const char *text, char **path, char **err)
{
	if (util_mkdirs(dir, err) < 0)
		return -1;
	*path = xasprintf("%s/%s%s", dir, name, ext);
	return util_write_file_atomic(*path, text, strlen(text), a->env->bcfg.durable, err);
}

static int writer_handle(struct agent *a, const struct msg *m, char **err)
{
	if (m->type != MSG_TASK_ASSIGNMENT)
		return AGENT_DONE;
	const char *kind = jstr(m->content, "task_type");
	const cJSON *run = cJSON_GetObjectItem(m->content, "run");
	if (!kind || !cJSON_IsObject(run) || !jstr(run, "run_id")) {
		err_set(err, "report task without a run snapshot");
		return AGENT_REJECT;
	}
	bool final = !strcmp(kind, WF_TASK_REPORT_FINAL);
	if (!final && strcmp(kind, WF_TASK_REPORT_DRAFT)) {
		err_set(err, "unknown report task %s", kind);
		return AGENT_REJECT;
	}
	char base[96];
	report_basename(run, base, sizeof(base));
	char *md = report_markdown(run, final);
	char *ddir = xasprintf("%s/reports/drafts", a->env->data_dir);
	char *dpath = NULL, *mpath = NULL, *jpath = NULL, *jtext = NULL;
	int r = write_text(a, ddir, jstr(run, "run_id"), ".md", md, &dpath, err);
	if (r == 0 && final) {
		char *fdir = a->env->report_dir ? xstrdup(a->env->report_dir) :
						  xasprintf("%s/reports/weekly", a->env->data_dir);
		cJSON *j = report_json(run);
		char *js = json_pretty(j);
		cJSON_Delete(j);
		/* The JSON twin first: the Markdown's appearance means done. */
		r = write_text(a, fdir, base, ".json", js, &jpath, err);
		if (r == 0)
			r = write_text(a, fdir, base, ".md", md, &mpath, err);
		jtext = js;
		free(fdir);
	}
	if (r == 0 && final) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "task_id", m->id);
		cJSON_AddStringToObject(c, "status", "completed");
		cJSON_AddNumberToObject(c, "execution_time_minutes", 0);
		cJSON_AddNumberToObject(c, "data_points_collected", 1);
		cJSON_AddArrayToObject(c, "sources_accessed");
		cJSON *kf = cJSON_AddArrayToObject(c, "key_findings");
		cJSON_AddItemToArray(kf, cJSON_CreateString(mpath));
		cJSON *raw = cJSON_AddObjectToObject(c, "raw_data");
		cJSON_AddStringToObject(raw, "kind", "report");
		cJSON_AddStringToObject(raw, "report_md", mpath);
		cJSON_AddStringToObject(raw, "report_json", jpath);
		cJSON_AddStringToObject(raw, "draft", dpath);
		/* the report itself travels too: a run followed from another
		 * host writes it there (agents/pm_notify.h) */
		cJSON_AddStringToObject(raw, "md_text", md);
		cJSON_AddStringToObject(raw, "json_text", jtext);
		cJSON_AddNumberToObject(c, "confidence_score", 1);
		cJSON_AddNumberToObject(c, "data_freshness_hours", 0);
		cJSON_AddArrayToObject(c, "warnings");
		r = agent_send(a, m->from, MSG_RESEARCH_RESULT, c, NULL, m->id, m->correlation_id,
			       PRIO_HIGH, NULL, err);
		cJSON *lf = cJSON_CreateObject();
		cJSON_AddStringToObject(lf, "task_kind", "report");
		cJSON_AddStringToObject(lf, "task_id", m->id);
		cJSON_AddStringToObject(lf, "report", mpath);
		log_write(a->log, LOG_RESULTS, LOG_INFO, "report_final", lf, "wrote %s", mpath);
		cJSON_Delete(lf);
		a->completed_today++;
		a->last_success_ns = util_now_ns();
	} else if (r == 0) {
		log_write(a->log, LOG_EVENTS, LOG_DEBUG, "report_draft", NULL, "draft %s updated",
			  dpath);
	}
	free(md);
	free(jtext);
	free(ddir);
	free(dpath);
	free(mpath);
	free(jpath);
	return r == 0 ? AGENT_DONE : AGENT_RETRY;
}

const struct agent_role role_report_writer = {
	.name = "report_writer",
	.handle = writer_handle,
};
