/* A done run's archive: the state keeps a slim entry, the archive the whole
 * run; archiving twice loses nothing; wf_load_run gives the whole run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "agents/workflow.h"
#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

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
		cmocka_unit_test(test_archive),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
