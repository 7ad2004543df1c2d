/* madf runs, madf tasks [RUN]: the product_manager's runs and their tasks,
 * read (only) from its state file under the data directory, beside the
 * console. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

static const char *str_or(const cJSON *o, const char *k, const char *def)
{
	return jstr(o, k) ? jstr(o, k) : def;
}

/* Text for the terminal: control and escape sequences stripped, then cut
 * to size. */
static void clean(const char *s, char *buf, size_t size)
{
	char *c = util_sanitize(s, strlen(s), false);
	util_strlcpy(buf, c, size);
	free(c);
}

/* The state and its runs: 0, or -1 (said; *code set) when the state file
 * is there but cannot be read. A data directory without one has no runs. */
static int runs_load(struct cli *cli, const char *cmd, cJSON **st, int *code)
{
	char *err = NULL;
	char *path = xasprintf("%s/state/product_manager-state.json", cli->data_dir);
	struct stat sb;
	bool there = stat(path, &sb) == 0;
	free(path);
	*st = wf_load_state(cli->data_dir, &err);
	if (!*st && there) {
		*code = cli_fail(EXIT_FAIL, cmd, "%s", err ? err : "cannot read the state");
		free(err);
		return -1;
	}
	free(err);
	if (!*st)
		*st = cJSON_CreateObject();
	return 0;
}

/* The runs in the order they started. */
static size_t runs_sorted(const cJSON *st, const cJSON ***out)
{
	const cJSON *runs = cJSON_GetObjectItem(st, "runs"), *r;
	size_t n = 0;
	const cJSON **v = xcalloc((size_t)cJSON_GetArraySize(runs) + 1, sizeof(*v));
	cJSON_ArrayForEach(r, runs) {
		if (!cJSON_IsObject(r))
			continue;
		size_t k = n++;
		const char *s = str_or(r, "started_at", "");
		while (k && strcmp(str_or(v[k - 1], "started_at", ""), s) > 0) {
			v[k] = v[k - 1];
			k--;
		}
		v[k] = r;
	}
	*out = v;
	return n;
}

static int count(const cJSON *run, const char *status)
{
	int n = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		n += !status || !strcmp(str_or(t, "status", ""), status);
	return n;
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
	cJSON *st;
	if (runs_load(cli, "runs", &st, &code) < 0)
		return code;
	const cJSON **v;
	size_t n = runs_sorted(st, &v);
	int64_t now = util_now_ns(), stuck_s = wf_stuck_after_s();
	cJSON *out = json ? cJSON_CreateArray() : NULL;
	if (!json && n)
		printf("%-34s %-12s %-8s %-22s %5s %6s %5s  %s\n", "RUN", "STATUS", "FOR", "STARTED",
		       "TASKS", "FAILED", "OPEN", "HEALTH");
	for (size_t i = 0; i < n; i++) {
		const cJSON *r = v[i];
		char health[256];
		bool stuck = wf_run_health(r, now, stuck_s, health, sizeof(health));
		int total = count(r, NULL), done = count(r, "done"), failed = count(r, "failed");
		int cancelled = count(r, "cancelled");
		const char *status = str_or(r, "status", "starting");
		int64_t since = 0;
		const char *ss = str_or(r, "status_since", str_or(r, "started_at", ""));
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "run_id", str_or(r, "run_id", "?"));
			cJSON_AddStringToObject(o, "status", status);
			cJSON_AddStringToObject(o, "started_at", str_or(r, "started_at", ""));
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
			const cJSON *rp = cJSON_GetObjectItem(r, "report");
			if (jstr(rp, "md"))
				cJSON_AddStringToObject(o, "report", jstr(rp, "md"));
			cJSON_AddItemToArray(out, o);
			continue;
		}
		char id[64], stc[24], started[32], age[16] = "-";
		clean(str_or(r, "run_id", "?"), id, sizeof(id));
		clean(status, stc, sizeof(stc));
		clean(str_or(r, "started_at", "-"), started, sizeof(started));
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
	cJSON_Delete(st);
	return json ? json_print(out) : EXIT_OK;
}

static int cmd_tasks(struct cli *cli, int argc, char **argv)
{
	bool json = false;
	const char *want = NULL;
	int code = parse_json_flag(argc, argv, &cmd_tasks_entry, &json, &want);
	if (code != EXIT_OK)
		return code;
	cJSON *st;
	if (runs_load(cli, "tasks", &st, &code) < 0)
		return code;
	const cJSON **v;
	size_t n = runs_sorted(st, &v);
	const cJSON *run = NULL;
	for (size_t i = 0; i < n; i++)
		if (!want || !strcmp(str_or(v[i], "run_id", ""), want))
			run = v[i]; /* the one asked for, or the last started */
	free(v);
	if (!run) {
		if (want)
			code = cli_fail(EXIT_FAIL, "tasks", "no run \"%s\" in %s (madf runs lists them)",
					want, cli->data_dir);
		else
			code = cli_fail(EXIT_FAIL, "tasks", "no runs in %s", cli->data_dir);
		cJSON_Delete(st);
		return code;
	}
	cJSON *out = NULL, *arr = NULL;
	if (json) {
		out = cJSON_CreateObject();
		cJSON_AddStringToObject(out, "run_id", str_or(run, "run_id", "?"));
		cJSON_AddStringToObject(out, "status", str_or(run, "status", "starting"));
		arr = cJSON_AddArrayToObject(out, "tasks");
	} else {
		char id[64], stc[24];
		clean(str_or(run, "run_id", "?"), id, sizeof(id));
		clean(str_or(run, "status", "starting"), stc, sizeof(stc));
		printf("run %s: %s\n%-22s %-7s %-8s %-18s %-18s %-7s %5s\n", id, stc, "TASK", "KIND",
		       "PAIR", "ASSIGNEE", "STATUS", "PRIO", "TRIES");
	}
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		/* unset: high, as the product_manager sends it */
		const char *prio = str_or(t, "priority", "high");
		int tries = (int)jnum(t, "attempts", 0);
		if (json) {
			cJSON *o = cJSON_CreateObject();
			static const char *const keys[] = { "task_id", "kind", "pair", "assignee",
							    "status" };
			for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
				cJSON_AddStringToObject(o, keys[i], str_or(t, keys[i], ""));
			cJSON_AddStringToObject(o, "priority", prio);
			cJSON_AddNumberToObject(o, "attempts", tries);
			cJSON_AddNumberToObject(o, "progress", jnum(t, "progress", 0));
			if (jstr(t, "done_by"))
				cJSON_AddStringToObject(o, "done_by", jstr(t, "done_by"));
			cJSON_AddItemToArray(arr, o);
			continue;
		}
		char f[6][72];
		clean(str_or(t, "task_id", "?"), f[0], sizeof(f[0]));
		clean(str_or(t, "kind", "-"), f[1], sizeof(f[1]));
		clean(str_or(t, "pair", "-"), f[2], sizeof(f[2]));
		clean(str_or(t, "assignee", "-"), f[3], sizeof(f[3]));
		clean(str_or(t, "status", "-"), f[4], sizeof(f[4]));
		clean(prio, f[5], sizeof(f[5]));
		printf("%-22s %-7s %-8s %-18s %-18s %-7s %5d\n", f[0], f[1], f[2], f[3], f[4], f[5],
		       tries);
	}
	cJSON_Delete(st);
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
