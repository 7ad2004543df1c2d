/* The code review crew's definition (cli/workflows.h): `madf run review
 * PATH|NAME [OPTIONS]` is `madf review` (cli/cli_review.c), which stays as
 * its friendly name. Each review is a run the review master keeps in the
 * data directory (agents/review_run.c): its tasks per agent, then the
 * aggregate; `madf runs`, `madf tasks` and the console's Tasks and Reports
 * views read it through the hooks below, the console starts one with
 * :run review PATH|NAME (review_trigger) and steers its tasks through the
 * master (reassign, retry, cancel). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/review.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/message.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/workflows.h"
#include "core/banned.h"

/* argv[0] "run", argv[1] "review": `madf review` from argv[1], the same
 * command, the same output and errors. */
static int review_start(struct cli *cli, int argc, char **argv)
{
	return cmd_review_entry.run(cli, argc - 1, argv + 1);
}

const struct cli_cmd run_review_entry = {
	.name = "review",
	.args = "PATH|NAME",
	.opts = review_options,
	.summary = "the code review crew on a codebase (as madf review, which takes the same "
		   "arguments)",
	.run = review_start,
};

static const char *const crew_roles[] = {
	"review_master", "review_documentation", "review_debt", "review_improvement",
	"review_critical", NULL
};
static const char *const crew_kinds[] = {
	"documentation", "debt", "improvement", "critical", NULL
};
static const char *const crew_workers[] = {
	"review_documentation", "review_debt", "review_improvement", "review_critical", NULL
};

static const char *str_or(const cJSON *o, const char *k, const char *def)
{
	return jstr(o, k) ? jstr(o, k) : def;
}

static cJSON *crew_run_load(const char *data_dir, const char *run_id)
{
	return review_run_load(data_dir, run_id);
}

static size_t crew_tasks(const cJSON *run, struct workflow_task *out, size_t max)
{
	size_t n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		if (n < max)
			out[n] = (struct workflow_task){
				.id = str_or(t, "task_id", ""), .kind = str_or(t, "kind", ""),
				.subject = str_or(run, "codebase", ""),
				.assignee = str_or(t, "assignee", ""), .status = str_or(t, "status", ""),
				.priority = str_or(t, "priority", "normal"),
				.attempts = (int)jnum(t, "attempts", 0), .progress = jnum(t, "progress", 0),
				.deadline_ns = (int64_t)jnum(t, "deadline_ns", 0),
				.done_by = str_or(t, "done_by", "") };
		n++;
	}
	return n;
}

/* "reviewing for 2m, 2 of 4 tasks done, 1 cancelled, 1 open" */
static bool crew_health(const cJSON *run, int64_t now_ns, char *buf, size_t size)
{
	int done = 0, failed = 0, cancelled = 0, open = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const char *s = str_or(t, "status", "");
		if (!strcmp(s, "done"))
			done++;
		else if (!strcmp(s, "failed"))
			failed++;
		else if (!strcmp(s, "cancelled"))
			cancelled++;
		else
			open++;
	}
	const char *st = str_or(run, "status", "starting");
	int64_t since = 0;
	msg_parse_time(str_or(run, "phase_since", str_or(run, "started_at", "")), &since);
	int64_t age_s = since ? (now_ns - since) / 1000000000LL : 0;
	bool over = !strcmp(st, "done") || !strcmp(st, "failed");
	bool stuck = !over && age_s > wf_stuck_after_s();
	snprintf(buf, size, "%s for %llds, %d of %d tasks done%s%.0d%s%s%.0d%s, %d open%s", st,
		 (long long)(age_s > 0 ? age_s : 0), done, done + failed + cancelled + open,
		 failed ? ", " : "", failed, failed ? " failed" : "", cancelled ? ", " : "",
		 cancelled, cancelled ? " cancelled" : "", open,
		 stuck ? " (stuck: no change for longer than the stuck limit)" : "");
	return stuck;
}

static const char *crew_report(const cJSON *run)
{
	return jstr(cJSON_GetObjectItem(run, "report"), "md");
}

static cJSON *crew_sarif(const cJSON *run)
{
	const cJSON *agg = cJSON_GetObjectItem(run, "aggregate");
	return agg ? review_sarif(agg) : NULL;
}

/* The console's run of a review (workflow_def.trigger): req->codebase a
 * directory or a registered name (refused here, with why, when it is
 * neither); a new run written as starting, then its trigger to the
 * review master, which hosts the crew. */
static int crew_trigger(const char *data_dir, struct bus *b, const struct wf_request *req,
			char *run_id, size_t id_size, char *msg, size_t msg_size, char **msg_id,
			char **err)
{
	*msg_id = NULL;
	const char *id = req->codebase;
	if (!id || !*id)
		return err_set(err, "which codebase? :run review PATH|NAME (a directory, or a name "
			       "registered with madf review add NAME PATH)");
	char *root = review_resolve(data_dir, id);
	struct stat st;
	if (!root || stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char *clean = util_sanitize(id, strlen(id), false);
		if (root && strcmp(root, id))
			err_set(err, "codebase \"%s\" is registered at %s, which is not a directory "
				"(madf review add NAME PATH registers it again)", clean, root);
		else
			err_set(err, "unknown codebase \"%s\": neither a registered name (madf review add "
				"NAME PATH) nor a directory", clean);
		free(clean);
		free(root);
		return -1;
	}
	char rid[64];
	review_run_id(rid, sizeof(rid));
	cJSON *request = cJSON_CreateObject();
	cJSON_AddStringToObject(request, "id", id);
	cJSON_AddItemToObject(request, "params", cJSON_CreateObject());
	cJSON *run = review_run_new(rid, request);
	jset_str(run, "root", root);
	int rc = -1;
	struct msg *m = NULL;
	if (review_run_save(data_dir, run, true, err) < 0)
		goto out;
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_type", REVIEW_TASK_RUN);
	cJSON_AddStringToObject(c, "focus_area", "code_review");
	cJSON_AddArrayToObject(c, "target_pairs");
	cJSON_AddStringToObject(c, "timeframe", "current");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "data_sources"), cJSON_CreateString(root));
	char ts[40];
	util_iso8601(util_now_ns() + 3600LL * 1000000000, ts, sizeof(ts));
	cJSON_AddStringToObject(c, "deadline", ts);
	cJSON_AddStringToObject(c, "output_format", "review_json");
	char *si = cJSON_PrintUnformatted(request);
	cJSON_AddStringToObject(c, "special_instructions", si);
	free(si);
	cJSON_AddStringToObject(c, "run_id", rid);
	m = msg_new("operator", "review_master", MSG_TASK_ASSIGNMENT, c);
	if (!m) {
		err_set(err, "the trigger of run %s could not be made", rid);
		goto out;
	}
	m->priority = PRIO_HIGH;
	m->correlation_id = xstrdup(rid);
	if (bus_send(b, m, err) < 0)
		goto out;
	util_strlcpy(run_id, rid, id_size);
	char *clean = util_sanitize(root, strlen(root), false);
	snprintf(msg, msg_size, "started the review run %s of %s (4 agents; 2 shows its tasks, 5 "
		 "its report)", rid, clean);
	free(clean);
	*msg_id = xstrdup(m->id);
	rc = 1;
out:
	msg_free(&m);
	cJSON_Delete(run);
	cJSON_Delete(request);
	free(root);
	return rc;
}

const struct workflow_def workflow_review = {
	.name = "review",
	.summary = "the code review crew on a codebase (documentation, debt, improvement, "
		   "critical; deterministic analyzers)",
	.roles = crew_roles,
	.controller = "review_master",
	.subject = "codebase",
	.entry = &run_review_entry,
	.runs = review_runs,
	.run_load = crew_run_load,
	.tasks = crew_tasks,
	.health = crew_health,
	.report = crew_report,
	.drafts_dir = REVIEW_DRAFTS_DIR,
	.reports_dir = REVIEW_REPORTS_DIR,
	.render = review_run_markdown,
	.render_json = review_run_json,
	.render_sarif = crew_sarif,
	.basename = review_run_basename,
	.task_kinds = crew_kinds,
	.workers = crew_workers,
	.trigger = crew_trigger,
};
