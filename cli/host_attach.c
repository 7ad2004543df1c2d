/* `madf run weekly --attach`: a run whose agents are `madf agent NAME`
 * processes elsewhere (on a NATS bus, on other hosts), followed from here
 * through the inbox its trigger names; the final report, which travels in
 * the product_manager's last message, is written here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/pm_notify.h"
#include "core/util.h"
#include "cli/host.h"
#include "core/banned.h"

static const char *sget(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The last component of path when it is a plain file name, else NULL. */
static const char *plain_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	s = s ? s + 1 : path;
	if (!s || !*s || *s == '.' || strlen(s) > 200)
		return NULL;
	return s;
}

/* The report of m (raw_data md_text, json_text) written under env's report
 * directory as the report writer named it: the JSON twin first, the
 * Markdown's appearance means done. Its local path in *md_path. */
static int write_report(struct agent_env *env, const cJSON *raw, char **md_path, char **err)
{
	const char *mb = plain_base(sget(raw, "report_md"));
	const char *jb = plain_base(sget(raw, "report_json"));
	const char *md = sget(raw, "md_text"), *js = sget(raw, "json_text");
	if (!mb || !jb || !md || !js)
		return err_set(err, "the product_manager's report message carries no report "
			       "(names %s, %s)", sget(raw, "report_md") ? sget(raw, "report_md") : "none",
			       sget(raw, "report_json") ? sget(raw, "report_json") : "none");
	char *dir = env->report_dir ? xstrdup(env->report_dir)
				    : xasprintf("%s/reports/weekly", env->data_dir);
	char *jp = xasprintf("%s/%s", dir, jb), *mp = xasprintf("%s/%s", dir, mb);
	int r = util_mkdirs(dir, err);
	if (r == 0)
		r = util_write_file_atomic(jp, js, strlen(js), env->bcfg.durable, err);
	if (r == 0)
		r = util_write_file_atomic(mp, md, strlen(md), env->bcfg.durable, err);
	free(dir);
	free(jp);
	if (r == 0)
		*md_path = mp;
	else
		free(mp);
	return r;
}

/* The run as much of it as this host knows, for the caller's summary:
 * status, the report's local path, and tasks (done, failed by id). */
static cJSON *run_summary(const char *status, const char *md, const cJSON *last)
{
	cJSON *run = cJSON_CreateObject();
	cJSON_AddStringToObject(run, "status", status);
	cJSON *rp = cJSON_AddObjectToObject(run, "report");
	cJSON_AddStringToObject(rp, "md", md ? md : "");
	cJSON *tasks = cJSON_AddArrayToObject(run, "tasks");
	const cJSON *f, *failed = cJSON_GetObjectItem(last, "failed_tasks");
	int total = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(last, "items_total"));
	int nf = 0;
	cJSON_ArrayForEach(f, failed) {
		if (!cJSON_IsString(f))
			continue;
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "task_id", f->valuestring);
		cJSON_AddStringToObject(t, "status", "failed");
		cJSON_AddItemToArray(tasks, t);
		nf++;
	}
	for (int i = nf; i < total; i++) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "status", "done");
		cJSON_AddItemToArray(tasks, t);
	}
	return run;
}

int host_attach_weekly(struct agent_env *env, struct bus *b, struct wf_request *req,
		       char *run_id, size_t size,
		       void (*progress)(void *ctx, const cJSON *run), void *ctx,
		       cJSON **run_out, char **err)
{
	*run_out = NULL;
	req->market_source = env->market_source;
	req->news_source = env->news_source;
	wf_run_id(req, run_id, size);
	if (req->fresh) {
		size_t n = strlen(run_id);
		snprintf(run_id + n, size - n, "-%llx",
			 (unsigned long long)(util_now_ns() / 1000000) & 0xffffffffULL);
	}
	char inbox[MSG_AGENT_MAX + 1];
	wf_notify_inbox(run_id, inbox, sizeof(inbox));
	struct bus_consumer *c = NULL;
	if (bus_consumer_open(b, inbox, &c, err) < 0)
		return HOST_RUN_FAILED;
	req->notify = inbox;
	struct msg *m = msg_new("operator", "product_manager", MSG_TASK_ASSIGNMENT,
				wf_trigger_content(req, run_id));
	req->notify = NULL;
	m->priority = PRIO_HIGH;
	m->correlation_id = xstrdup(run_id);
	int sent = bus_send(b, m, err);
	msg_free(&m);
	if (sent < 0) {
		bus_consumer_free(&c);
		return HOST_RUN_FAILED;
	}
	fprintf(stderr, "madf: run %s sent to the product_manager; following it in inbox %s\n",
		run_id, inbox);
	/* A live product_manager answers a trigger at once; later, a run's
	 * phases may each take a while. */
	int64_t span = (env->task_timeout_s * 12 + 60) * 1000000000LL;
	int64_t first = (env->task_timeout_s * 2 + 10) * 1000000000LL;
	int64_t limit = util_mono_ns() + first;
	bool heard = false;
	int rc = -1;
	cJSON *last = cJSON_CreateObject();
	while (rc < 0 && !atomic_load(&env->stop)) {
		struct bus_delivery *d = NULL;
		int k = bus_claim(c, &d, err);
		if (k < 0) {
			rc = HOST_RUN_FAILED;
			break;
		}
		if (k == 0) {
			if (util_mono_ns() > limit) {
				err_set(err, "run %s: no word from the product_manager for %lld s "
					"(are the agents running on this bus?); run the same request "
					"again to resume", run_id,
					(long long)((heard ? span : first) / 1000000000LL));
				rc = HOST_RUN_FAILED;
				break;
			}
			bus_consumer_wait(c, 500);
			continue;
		}
		const struct msg *dm = d->msg;
		const cJSON *raw = cJSON_GetObjectItem(dm->content, "raw_data");
		bool ours = sget(dm->content, "task_id") && !strcmp(sget(dm->content, "task_id"), run_id);
		if (ours && dm->type == MSG_TASK_PROGRESS) {
			heard = true;
			limit = util_mono_ns() + span;
			cJSON_Delete(last);
			last = cJSON_Duplicate(dm->content, true);
			cJSON *shown = cJSON_CreateObject();
			cJSON_AddStringToObject(shown, "status", sget(last, "run_status") ?
					       sget(last, "run_status") : "starting");
			cJSON_AddStringToObject(shown, "progress_line", sget(last, "current_step") ?
					       sget(last, "current_step") : "");
			cJSON_AddNumberToObject(shown, "items_done",
						cJSON_GetNumberValue(cJSON_GetObjectItem(last, "items_done")));
			cJSON_AddNumberToObject(shown, "items_total",
						cJSON_GetNumberValue(cJSON_GetObjectItem(last, "items_total")));
			if (progress)
				progress(ctx, shown);
			cJSON_Delete(shown);
		} else if (ours && dm->type == MSG_RESEARCH_RESULT &&
			   sget(raw, "kind") && !strcmp(sget(raw, "kind"), "report")) {
			char *md = NULL;
			if (cJSON_IsTrue(cJSON_GetObjectItem(raw, "done_before"))) {
				fprintf(stderr, "madf: run %s was done before; its report is on the "
					"report writer's host\n", run_id);
				*run_out = run_summary("done", sget(raw, "report_md"), last);
				rc = HOST_RUN_WAS_DONE;
			} else if (write_report(env, raw, &md, err) == 0) {
				*run_out = run_summary("done", md, last);
				rc = HOST_RUN_DONE;
			} else {
				rc = HOST_RUN_FAILED;
			}
			free(md);
		}
		/* anything else in this inbox is not ours to keep */
		char *e2 = NULL;
		if (bus_ack(c, &d, &e2) < 0 && rc < 0) {
			err_set(err, "%s", e2);
			rc = HOST_RUN_FAILED;
		}
		free(e2);
	}
	if (rc < 0)
		rc = HOST_RUN_STOPPED;
	cJSON_Delete(last);
	bus_consumer_free(&c);
	return rc;
}
