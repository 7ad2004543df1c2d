/* The workflow's helpers the console and madf runs use: a run's health
 * line (its phase, how long, the tasks, STUCK past the threshold) and an
 * agent's liveness from the heartbeat in its state file; a done run's
 * archive (the state keeps a slim entry, the archive the whole run;
 * archiving twice loses nothing; wf_load_run gives the whole run). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/workflow.h"
#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

#define S 1000000000LL

static cJSON *run_json(const char *status, const char *since)
{
	char *text = xasprintf("{\"run_id\":\"weekly-x\",\"status\":\"%s\","
			       "\"started_at\":\"2026-01-01T00:00:00Z\",\"status_since\":\"%s\","
			       "\"tasks\":[{\"status\":\"done\"},{\"status\":\"failed\"},"
			       "{\"status\":\"assigned\"},{\"status\":\"held\"},{\"status\":\"cancelled\"}]}",
			       status, since);
	cJSON *j = cJSON_Parse(text);
	free(text);
	return j;
}

static void test_health(void **state)
{
	(void)state;
	int64_t since = 0;
	assert_int_equal(msg_parse_time("2026-01-01T00:10:00Z", &since), 0);
	cJSON *r = run_json("reporting", "2026-01-01T00:10:00Z");
	char buf[256];
	/* 5 minutes in, threshold 15: not stuck */
	assert_false(wf_run_health(r, since + 300 * S, 900, buf, sizeof(buf)));
	assert_string_equal(buf, "run weekly-x: reporting for 5m; tasks 1 done, 1 failed, 1 cancelled, 2 open of 5");
	/* 16 minutes in: stuck, and the line says so */
	assert_true(wf_run_health(r, since + 960 * S, 900, buf, sizeof(buf)));
	assert_string_equal(buf, "run weekly-x: reporting for 16m; tasks 1 done, 1 failed, 1 cancelled, "
			    "2 open of 5; STUCK: over 15m in one phase");
	cJSON_Delete(r);
	/* a run that is done is never stuck */
	r = run_json("done", "2026-01-01T00:10:00Z");
	assert_false(wf_run_health(r, since + 86400 * S, 900, buf, sizeof(buf)));
	cJSON_Delete(r);
}

static void write_state(const char *dir, const char *heartbeat)
{
	char *path = xasprintf("%s/state/product_manager-state.json", dir);
	char *text = xasprintf("{\"heartbeat\":%s}", heartbeat);
	char *sd = xasprintf("%s/state", dir);
	assert_int_equal(util_mkdirs(sd, NULL), 0);
	assert_int_equal(util_write_file_atomic(path, text, strlen(text), false, NULL), 0);
	free(sd);
	free(text);
	free(path);
}

static void test_liveness(void **state)
{
	(void)state;
	char dir[] = "/tmp/madf-wf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char why[96];
	int64_t at = 0;
	assert_int_equal(msg_parse_time("2026-01-01T00:00:00Z", &at), 0);
	assert_int_equal(wf_agent_liveness(dir, "product_manager", at, why, sizeof(why)),
			 WF_OFFLINE);
	assert_string_equal(why, "it has never run here");
	char *hb = xasprintf("{\"status\":\"idle\",\"pid\":%d,\"at\":\"2026-01-01T00:00:00Z\"}",
			     (int)getpid());
	write_state(dir, hb);
	free(hb);
	assert_int_equal(wf_agent_liveness(dir, "product_manager", at + 2 * S, why, sizeof(why)),
			 WF_ALIVE);
	assert_int_equal(wf_agent_liveness(dir, "product_manager", at + 40 * S, why, sizeof(why)),
			 WF_STALLED);
	assert_string_equal(why, "its last heartbeat is 40s old");
	write_state(dir, "{\"status\":\"stopping\",\"at\":\"2026-01-01T00:00:00Z\"}");
	assert_int_equal(wf_agent_liveness(dir, "product_manager", at + 2 * S, why, sizeof(why)),
			 WF_OFFLINE);
	assert_string_equal(why, "it has stopped");
	/* pid 4194304 is past Linux's pid_max: no such process */
	write_state(dir, "{\"status\":\"busy\",\"pid\":4194304,\"at\":\"2026-01-01T00:00:00Z\"}");
	assert_int_equal(wf_agent_liveness(dir, "product_manager", at + 2 * S, why, sizeof(why)),
			 WF_OFFLINE);
	assert_string_equal(why, "its process 4194304 is gone");
	char *cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static cJSON *read_json(const char *path)
{
	char *buf = NULL, *err = NULL;
	size_t len;
	if (util_read_file(path, 1 << 20, &buf, &len, &err) < 0)
		fail_msg("%s", err);
	cJSON *j = json_parse_strict(buf, len, &err);
	free(buf);
	if (!j)
		fail_msg("%s: %s", path, err);
	return j;
}

static void test_archive(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/madf-wf-XXXXXX";
	char *dir = mkdtemp(tmpl);
	assert_non_null(dir);
	cJSON *run = cJSON_Parse(
		"{\"run_id\":\"weekly-1987-w13-t\",\"status\":\"done\","
		"\"tasks\":[{\"task_id\":\"USDJPY-market\",\"status\":\"done\"}],"
		"\"failures\":[],\"report\":{\"md\":\"x.md\"},"
		"\"findings\":[{\"id\":\"USDJPY-M1\"}],\"messages\":{\"m1\":{}},"
		"\"market\":{\"USD/JPY\":{\"change_pct\":-2.6236}},\"events\":[],"
		"\"sentiment\":{},\"price_checks\":{},\"issues\":[]}");
	char *err = NULL;
	assert_int_equal(wf_archive_run(dir, run, false, &err), 0);
	/* The entry keeps tasks, failures and report, names its archive. */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "archived")),
			    "state/runs/weekly-1987-w13-t.json");
	static const char *const gone[] = { "findings", "messages", "market", "events",
					    "sentiment", "price_checks", "issues" };
	for (size_t i = 0; i < ARRAY_SIZE(gone); i++)
		if (cJSON_GetObjectItem(run, gone[i]))
			fail_msg("%s is still in the entry", gone[i]);
	assert_non_null(cJSON_GetObjectItem(run, "tasks"));
	assert_non_null(cJSON_GetObjectItem(run, "report"));
	/* Again (a second report for a done run): the archive keeps it all. */
	assert_int_equal(wf_archive_run(dir, run, false, &err), 0);
	char *path = xasprintf("%s/state/runs/weekly-1987-w13-t.json", dir);
	cJSON *whole = read_json(path);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(whole, "findings")), 1);
	assert_null(cJSON_GetObjectItem(whole, "archived"));
	cJSON_Delete(whole);
	/* wf_load_run: the whole run, from the archive the state names. */
	cJSON *st = cJSON_CreateObject();
	cJSON_AddItemToObject(cJSON_AddObjectToObject(st, "runs"), "weekly-1987-w13-t",
			      cJSON_Duplicate(run, 1));
	char *sp = xasprintf("%s/state/product_manager-state.json", dir);
	char *text = cJSON_Print(st);
	assert_int_equal(util_write_file_atomic(sp, text, strlen(text), false, &err), 0);
	free(text);
	cJSON *loaded = wf_load_run(dir, "weekly-1987-w13-t");
	assert_non_null(loaded);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(loaded, "findings"), 0), "id")), "USDJPY-M1");
	cJSON_Delete(loaded);
	/* Its archive gone, the entry is what is left. */
	assert_int_equal(remove(path), 0);
	loaded = wf_load_run(dir, "weekly-1987-w13-t");
	assert_non_null(loaded);
	assert_null(cJSON_GetObjectItem(loaded, "findings"));
	assert_non_null(cJSON_GetObjectItem(loaded, "tasks"));
	cJSON_Delete(loaded);
	assert_null(wf_load_run(dir, "weekly-other"));
	cJSON_Delete(st);
	cJSON_Delete(run);
	free(sp);
	free(path);
	util_rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_liveness),
		cmocka_unit_test(test_archive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
