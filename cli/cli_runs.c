/* madf runs, madf tasks [RUN]: the runs of every registered workflow that
 * keeps runs (cli/workflows.h) and their tasks, read (only) from the data
 * directory, beside the console. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "cli/workflows.h"
#include "core/banned.h"

/* Text for the terminal: control and escape sequences stripped, then cut
 * to size. */
static void clean(const char *s, char *buf, size_t size)
{
	char *c = util_sanitize(s, strlen(s), false);
	util_strlcpy(buf, c, size);
	free(c);
}

/* A run and the workflow it belongs to. */
struct run_ref {
	const struct workflow_def *wf;
	const cJSON *run;
};

/* The runs of every workflow in the order they started, into *out (caller
 * frees it, then deletes *all); 0, or -1 (said; *code set) when a
 * workflow's runs are there but cannot be read. */
static int runs_load(struct cli *cli, const char *cmd, cJSON **all, struct run_ref **out,
		     size_t *n, int *code)
{
	*all = cJSON_CreateArray();
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < workflow_ndefs; i++) {
		const struct workflow_def *w = workflow_defs[i];
		if (!w->runs)
			continue;
		char *err = NULL;
		cJSON *runs = w->runs(cli->data_dir, &err);
		if (!runs) {
			*code = cli_fail(EXIT_FAIL, cmd, "%s", err ? err : "cannot read the runs");
			free(err);
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
		cJSON_AddItemToArray(*all, runs);
		const cJSON *r;
		cJSON_ArrayForEach(r, runs) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			size_t k = (*n)++;
			const char *s = jstr_or(r, "started_at", "");
			while (k && strcmp(jstr_or((*out)[k - 1].run, "started_at", ""), s) > 0) {
				(*out)[k] = (*out)[k - 1];
				k--;
			}
			(*out)[k] = (struct run_ref){ w, r };
		}
	}
	return 0;
}

/* The tasks with this status (all when NULL), stages left out. */
static int count(const struct workflow_task *t, size_t n, const char *status)
{
	int k = 0;
	for (size_t i = 0; i < n; i++)
		k += !t[i].stage && (!status || !strcmp(t[i].status, status));
	return k;
}

static int json_print(cJSON *j)
{
	char *s = json_pretty(j);
	printf("%s\n", s);
	free(s);
	cJSON_Delete(j);
	return EXIT_OK;
}

static int parse_json_flag(int argc, char **argv, const struct cli_cmd *entry, bool *json,
			   const char **arg)
{
	const char *cmd = entry->name;
	struct cli_opts o = { argc, argv, 1, cmd, entry, 0 };
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (name) {
			*json = true;
		} else if (arg && !*arg) {
			*arg = val;
		} else {
			return cli_fail(EXIT_USAGE, cmd, "unexpected argument %s", val);
		}
	}
	return r < 0 ? EXIT_USAGE : EXIT_OK;
}

static int cmd_runs(struct cli *cli, int argc, char **argv)
{
	bool json = false;
	int code = parse_json_flag(argc, argv, &cmd_runs_entry, &json, NULL);
	if (code != EXIT_OK)
		return code;
	cJSON *all;
	struct run_ref *v;
	size_t n;
	if (runs_load(cli, "runs", &all, &v, &n, &code) < 0) {
		cJSON_Delete(all);
		return code;
	}
	int64_t now = util_now_ns();
	cJSON *out = json ? cJSON_CreateArray() : NULL;
	if (!json && n)
		printf("%-34s %-12s %-8s %-22s %5s %6s %5s  %s\n", "RUN", "STATUS", "FOR", "STARTED",
		       "TASKS", "FAILED", "OPEN", "HEALTH");
	for (size_t i = 0; i < n; i++) {
		const cJSON *r = v[i].run;
		char health[256];
		bool stuck = v[i].wf->health(r, now, health, sizeof(health));
		size_t nt;
		struct workflow_task *tasks = workflow_tasks(v[i].wf, v[i].run, &nt);
		int total = count(tasks, nt, NULL), done = count(tasks, nt, "done");
		int failed = count(tasks, nt, "failed"), cancelled = count(tasks, nt, "cancelled");
		free(tasks);
		const char *status = jstr_or(r, "status", "starting");
		int64_t since = 0;
		const char *ss = jstr_or(r, "status_since", jstr_or(r, "started_at", ""));
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "run_id", jstr_or(r, "run_id", "?"));
			cJSON_AddStringToObject(o, "workflow", v[i].wf->name);
			cJSON_AddStringToObject(o, "status", status);
			cJSON_AddStringToObject(o, "started_at", jstr_or(r, "started_at", ""));
			cJSON_AddStringToObject(o, "status_since", ss);
			if (jstr(r, "finished_at"))
				cJSON_AddStringToObject(o, "finished_at", jstr(r, "finished_at"));
			cJSON_AddNumberToObject(o, "tasks", total);
			cJSON_AddNumberToObject(o, "done", done);
			cJSON_AddNumberToObject(o, "failed", failed);
			cJSON_AddNumberToObject(o, "cancelled", cancelled);
			cJSON_AddNumberToObject(o, "open", total - done - failed - cancelled);
			cJSON_AddBoolToObject(o, "stuck", stuck);
			cJSON_AddStringToObject(o, "health", health);
			const char *report = v[i].wf->report(r);
			if (report)
				cJSON_AddStringToObject(o, "report", report);
			cJSON_AddItemToArray(out, o);
			continue;
		}
		char id[64], stc[24], started[32], age[16] = "-";
		clean(jstr_or(r, "run_id", "?"), id, sizeof(id));
		clean(status, stc, sizeof(stc));
		clean(jstr_or(r, "started_at", "-"), started, sizeof(started));
		if (msg_parse_time(ss, &since) == 0) {
			int64_t s = (now - since) / 1000000000LL;
			snprintf(age, sizeof(age), s < 120 ? "%llds" : s < 7200 ? "%lldm" : "%lldh",
				 (long long)(s < 120 ? s : s < 7200 ? s / 60 : s / 3600));
		}
		printf("%-34s %-12s %-8s %-22s %5d %6d %5d  %s\n", id, stc, age, started, total,
		       failed, total - done - failed - cancelled,
		       stuck ? "STUCK" : !strcmp(status, "done") ? (failed ? "done, with failures" :
		       "done") : "ok");
	}
	if (!json && !n)
		fprintf(stderr, "madf: runs: no runs in %s\n", cli->data_dir);
	free(v);
	cJSON_Delete(all);
	return json ? json_print(out) : EXIT_OK;
}

static int cmd_tasks(struct cli *cli, int argc, char **argv)
{
	bool json = false;
	const char *want = NULL;
	int code = parse_json_flag(argc, argv, &cmd_tasks_entry, &json, &want);
	if (code != EXIT_OK)
		return code;
	cJSON *all;
	struct run_ref *v;
	size_t n;
	if (runs_load(cli, "tasks", &all, &v, &n, &code) < 0) {
		cJSON_Delete(all);
		return code;
	}
	struct run_ref run = { NULL, NULL };
	for (size_t i = 0; i < n; i++)
		if (!want || !strcmp(jstr_or(v[i].run, "run_id", ""), want))
			run = v[i]; /* the one asked for, or the last started */
	free(v);
	if (!run.run) {
		if (want)
			code = cli_fail(EXIT_FAIL, "tasks", "no run \"%s\" in %s (madf runs lists them)",
					want, cli->data_dir);
		else
			code = cli_fail(EXIT_FAIL, "tasks", "no runs in %s", cli->data_dir);
		cJSON_Delete(all);
		return code;
	}
	/* what a task is about: its column and JSON key */
	const char *subj = run.wf->subject ? run.wf->subject : "subject";
	char subj_col[16];
	size_t k = 0;
	for (; subj[k] && k + 1 < sizeof(subj_col); k++)
		subj_col[k] = (char)toupper((unsigned char)subj[k]);
	subj_col[k] = '\0';
	cJSON *out = NULL, *arr = NULL;
	if (json) {
		out = cJSON_CreateObject();
		cJSON_AddStringToObject(out, "run_id", jstr_or(run.run, "run_id", "?"));
		cJSON_AddStringToObject(out, "workflow", run.wf->name);
		cJSON_AddStringToObject(out, "status", jstr_or(run.run, "status", "starting"));
		arr = cJSON_AddArrayToObject(out, "tasks");
	} else {
		char id[64], stc[24];
		clean(jstr_or(run.run, "run_id", "?"), id, sizeof(id));
		clean(jstr_or(run.run, "status", "starting"), stc, sizeof(stc));
		printf("run %s: %s\n%-22s %-7s %-8s %-18s %-18s %-7s %5s\n", id, stc, "TASK", "KIND",
		       subj_col, "ASSIGNEE", "STATUS", "PRIO", "TRIES");
	}
	size_t nt;
	struct workflow_task *tasks = workflow_tasks(run.wf, run.run, &nt);
	for (size_t i = 0; i < nt; i++) {
		const struct workflow_task *t = &tasks[i];
		if (t->stage)
			continue; /* the console shows the stages; the tasks are the work */
		if (json) {
			cJSON *o = cJSON_CreateObject();
			const char *const keys[][2] = { { "task_id", t->id }, { "kind", t->kind },
							{ subj, t->subject }, { "assignee", t->assignee },
							{ "status", t->status } };
			for (size_t j = 0; j < ARRAY_SIZE(keys); j++)
				cJSON_AddStringToObject(o, keys[j][0], keys[j][1]);
			cJSON_AddStringToObject(o, "priority", t->priority);
			cJSON_AddNumberToObject(o, "attempts", t->attempts);
			cJSON_AddNumberToObject(o, "progress", t->progress);
			if (*t->done_by)
				cJSON_AddStringToObject(o, "done_by", t->done_by);
			cJSON_AddItemToArray(arr, o);
			continue;
		}
		char f[6][72];
		clean(*t->id ? t->id : "?", f[0], sizeof(f[0]));
		clean(*t->kind ? t->kind : "-", f[1], sizeof(f[1]));
		clean(*t->subject ? t->subject : "-", f[2], sizeof(f[2]));
		clean(*t->assignee ? t->assignee : "-", f[3], sizeof(f[3]));
		clean(*t->status ? t->status : "-", f[4], sizeof(f[4]));
		clean(t->priority, f[5], sizeof(f[5]));
		printf("%-22s %-7s %-8s %-18s %-18s %-7s %5d\n", f[0], f[1], f[2], f[3], f[4], f[5],
		       t->attempts);
	}
	free(tasks);
	cJSON_Delete(all);
	return json ? json_print(out) : EXIT_OK;
}

static const struct cli_opt runs_options[] = {
	{ .name = "--json", .help = "print an array of run objects" },
	{ 0 },
};

const struct cli_cmd cmd_runs_entry = {
	.name = "runs",
	.opts = runs_options,
	.summary = "list the runs (the product_manager's state): status, time in that phase, "
		   "tasks, health (STUCK: over MADF_RUN_STUCK_S, default 900 s, in one phase)",
	.run = cmd_runs,
};

static const struct cli_opt tasks_options[] = {
	{ .name = "--json", .help = "print the run and its tasks as JSON" },
	{ 0 },
};

const struct cli_cmd cmd_tasks_entry = {
	.name = "tasks",
	.args = "[RUN]",
	.opts = tasks_options,
	.summary = "a run's tasks (default: the last started) with assignee, status, priority, "
		   "attempts",
	.run = cmd_tasks,
};
