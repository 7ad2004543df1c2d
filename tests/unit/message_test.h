/* What the message unit tests share (test_message*.c): q() turns the
 * single-quoted JSON the tests are written in into JSON, a valid content
 * of each type, envelopes around it, and parse/expect helpers that assert.
 * Header-only (static inline): each test program includes it. */
#ifndef MADF_TEST_MESSAGE_TEST_H
#define MADF_TEST_MESSAGE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/message.h"
#include "core/util.h"

static inline char *q(const char *s)
{
	char *d = xstrdup(s);
	for (char *p = d; *p; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

static const char *const valid_content[MSG_TYPE_COUNT] = {
	[MSG_TASK_ASSIGNMENT] =
		"{'task_type':'forex_research','focus_area':'Asia/G10',"
		"'target_pairs':['USD/JPY','EUR/USD'],'timeframe':'this_week',"
		"'data_sources':['alpha_vantage','newsapi'],"
		"'deadline':'2024-12-20T17:00:00Z','output_format':'structured_json',"
		"'special_instructions':'Focus on central bank policy impacts'}",
	[MSG_TASK_ACCEPTANCE] =
		"{'task_id':'pm_20241220_150000_001','status':'accepted',"
		"'estimated_completion':'2024-12-20T16:30:00Z','agent_capacity':0.4,"
		"'rejection_reason':null}",
	[MSG_TASK_PROGRESS] =
		"{'task_id':'t1','percent_complete':42.5,'current_step':'fetching rates',"
		"'estimated_completion':'2024-12-20T16:30:00+09:00','items_done':17,"
		"'items_total':40}",
	[MSG_RESEARCH_RESULT] =
		"{'task_id':'pm_20241220_150000_001','status':'completed',"
		"'execution_time_minutes':45.2,'data_points_collected':127,"
		"'sources_accessed':['alpha_vantage','newsapi'],"
		"'key_findings':['USD/JPY showing strength','EUR/USD under pressure'],"
		"'raw_data':{'forex_rates':{},'news_articles':{}},"
		"'confidence_score':0.87,'data_freshness_hours':2.3,"
		"'warnings':['Alpha Vantage rate limit reached']}",
	[MSG_VALIDATION_REQUEST] =
		"{'research_results_to_validate':['ra1_1','ra2_1'],"
		"'validation_type':'cross_reference','validation_sources':['reuters'],"
		"'priority_areas':['USD/JPY'],'deadline':'2024-12-20T18:00:00Z'}",
	[MSG_VALIDATION_RESULT] =
		"{'validation_id':'v1','research_results_validated':['ra1_1'],"
		"'overall_confidence':0.9,'issues_found':[{'issue_type':'conflict',"
		"'severity':'medium','description':'rates differ',"
		"'affected_data':{'pair':'USD/JPY'},'recommendation':'prefer reuters',"
		"'confidence':0.7}],'validated_findings':['USD/JPY up'],"
		"'execution_time_minutes':3.5,'sources_consulted':['reuters']}",
	[MSG_ERROR_REPORT] =
		"{'error_type':'api_failure','error_message':'HTTP 429',"
		"'context':{'tool':'alpha_vantage'},'stack_trace':null,"
		"'recovery_action':'used cache','impact_level':'medium',"
		"'related_task_id':'t1'}",
	[MSG_HEARTBEAT] =
		"{'status':'busy','uptime_seconds':12.5,'active_tasks':1,"
		"'current_task':'t1','pid':4242,'sequence':7}",
	[MSG_SYSTEM_STATUS] =
		"{'agent_status':'healthy','cpu_usage_percent':12.5,"
		"'memory_usage_mb':256,'active_tasks':1,'completed_tasks_today':5,"
		"'error_count_today':0,'last_successful_operation':'2024-12-20T15:00:00Z',"
		"'performance_metrics':{'avg_latency_ms':120.5,'success_rate':0.98}}",
};

/* A full message of the given type around content (single-quoted JSON). */
static inline char *envelope(enum msg_type t, const char *content)
{
	char *c = q(content);
	char *s = xasprintf("{\"message_id\":\"pm_20241220_150000_001\","
			    "\"from\":\"product_manager\",\"to\":\"research_agent_1\","
			    "\"type\":\"%s\",\"timestamp\":\"2024-12-20T15:00:00Z\","
			    "\"content\":%s}", msg_type_name(t), c);
	free(c);
	return s;
}

static inline struct msg *parse_ok_n(const char *buf, size_t len)
{
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	int r = msg_parse(buf, len, &m, &errs);
	if (r != 0) {
		char *j = msg_errors_join(&errs);
		print_error("unexpected errors: %s\n", j);
		free(j);
	}
	assert_int_equal(r, 0);
	assert_int_equal(errs.count, 0);
	assert_non_null(m);
	return m;
}

static inline struct msg *parse_ok(const char *json)
{
	return parse_ok_n(json, strlen(json));
}

static inline void expect_errors_n(const char *buf, size_t len, const char *expected)
{
	struct msg *m = (struct msg *)1;
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_parse(buf, len, &m, &errs), -1);
	assert_null(m);
	assert_true(errs.count >= 1);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, expected);
	free(j);
	msg_errors_release(&errs);
	assert_int_equal(errs.count, 0);
}

static inline void expect_errors(const char *json, const char *expected)
{
	expect_errors_n(json, strlen(json), expected);
}

/* Single-quoted json; expected errors. */
static inline void expect_errors_q(const char *json, const char *expected)
{
	char *s = q(json);
	expect_errors(s, expected);
	free(s);
}

/* The valid content of type t with field set to value (single-quoted JSON,
 * NULL deletes it), wrapped in an envelope, must fail with expected. */
static inline void expect_content_error(enum msg_type t, const char *field,
				 const char *value, const char *expected)
{
	char *c = q(valid_content[t]);
	cJSON *obj = cJSON_Parse(c);
	assert_non_null(obj);
	cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
	if (value) {
		char *v = q(value);
		cJSON *item = cJSON_Parse(v);
		assert_non_null(item);
		cJSON_AddItemToObject(obj, field, item);
		free(v);
	}
	char *text = cJSON_PrintUnformatted(obj);
	char *json = envelope(t, text);
	expect_errors(json, expected);
	free(json);
	free(text);
	cJSON_Delete(obj);
	free(c);
}

/* The valid envelope with field set to value (raw JSON, NULL deletes it). */
static inline char *envelope_with(const char *field, const char *value)
{
	char *base = envelope(MSG_HEARTBEAT, valid_content[MSG_HEARTBEAT]);
	cJSON *obj = cJSON_Parse(base);
	assert_non_null(obj);
	cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
	if (value) {
		cJSON *item = cJSON_Parse(value);
		assert_non_null(item);
		cJSON_AddItemToObject(obj, field, item);
	}
	char *text = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	free(base);
	return text;
}

static inline void expect_envelope_error(const char *field, const char *value,
				  const char *expected)
{
	char *json = envelope_with(field, value);
	expect_errors(json, expected);
	free(json);
}

static inline void expect_envelope_ok(const char *field, const char *value)
{
	char *json = envelope_with(field, value);
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
}

static inline char *json_err(const char *buf, size_t len)
{
	char *err = NULL;
	cJSON *j = json_parse_strict(buf, len, &err);
	assert_null(j);
	assert_non_null(err);
	return err;
}

static inline void expect_json_error_n(const char *buf, size_t len, const char *expected)
{
	char *err = json_err(buf, len);
	assert_string_equal(err, expected);
	free(err);
}

static inline void expect_json_error(const char *buf, const char *expected)
{
	expect_json_error_n(buf, strlen(buf), expected);
}

#endif
