/* The workflow's helpers the console and madf runs use: a run's health
 * line (its phase, how long, the tasks, STUCK past the threshold) and an
 * agent's liveness from the heartbeat in its state file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/workflow.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_liveness),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
