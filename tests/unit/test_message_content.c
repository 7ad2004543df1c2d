/* Messages: content validation of each type (required fields, types,
 * enums, ranges, every error collected, trees built in code) and seed 003
 * normalisation. JSON in these tests is written with single quotes (q() in
 * message_test.h turns them into double quotes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/message.h"
#include "core/util.h"
#include "tests/unit/message_test.h"

#include "core/banned.h"

/* ---- Content errors ---- */

static void test_content_required(void **state)
{
	(void)state;
	expect_content_error(MSG_TASK_ASSIGNMENT, "task_type", NULL,
			     "content.task_type: required");
	expect_content_error(MSG_TASK_ACCEPTANCE, "estimated_completion", NULL,
			     "content.estimated_completion: required");
	expect_content_error(MSG_RESEARCH_RESULT, "warnings", NULL,
			     "content.warnings: required");
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found", NULL,
			     "content.issues_found: required");
	expect_content_error(MSG_ERROR_REPORT, "context", NULL,
			     "content.context: required");
	expect_content_error(MSG_SYSTEM_STATUS, "performance_metrics", NULL,
			     "content.performance_metrics: required");
	expect_content_error(MSG_HEARTBEAT, "status", NULL, "content.status: required");
	expect_content_error(MSG_TASK_PROGRESS, "current_step", NULL,
			     "content.current_step: required");
	expect_content_error(MSG_VALIDATION_REQUEST, "deadline", NULL,
			     "content.deadline: required");
	/* Required and null is a wrong type. */
	expect_content_error(MSG_TASK_ASSIGNMENT, "focus_area", "null",
			     "content.focus_area: must be a string");
	/* Optional fields may be absent or null. */
	char *json = envelope(MSG_ERROR_REPORT,
			      "{'error_type':'x','error_message':'y','context':{},"
			      "'impact_level':'low','recovery_action':null}");
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
}

static void test_content_types(void **state)
{
	(void)state;
	expect_content_error(MSG_RESEARCH_RESULT, "data_points_collected", "1.5",
			     "content.data_points_collected: must be an integer");
	expect_content_error(MSG_RESEARCH_RESULT, "data_points_collected", "'12'",
			     "content.data_points_collected: must be an integer");
	expect_content_error(MSG_RESEARCH_RESULT, "confidence_score", "'0.9'",
			     "content.confidence_score: must be a number");
	expect_content_error(MSG_TASK_ACCEPTANCE, "agent_capacity", "true",
			     "content.agent_capacity: must be a number");
	expect_content_error(MSG_RESEARCH_RESULT, "raw_data", "[]",
			     "content.raw_data: must be an object");
	expect_content_error(MSG_RESEARCH_RESULT, "sources_accessed", "'newsapi'",
			     "content.sources_accessed: must be an array");
	expect_content_error(MSG_TASK_ASSIGNMENT, "target_pairs", "['USD/JPY',7,null]",
			     "content.target_pairs[1]: must be a string; "
			     "content.target_pairs[2]: must be a string");
	expect_content_error(MSG_TASK_ASSIGNMENT, "task_type", "''",
			     "content.task_type: must not be empty");
	expect_content_error(MSG_TASK_ASSIGNMENT, "special_instructions", "42",
			     "content.special_instructions: must be a string");
	expect_content_error(MSG_VALIDATION_REQUEST, "research_results_to_validate", "[]",
			     "content.research_results_to_validate: must not be empty");
	expect_content_error(MSG_SYSTEM_STATUS, "performance_metrics",
			     "{'a':1,'b':'x','c d':null}",
			     "content.performance_metrics.b: must be a number; "
			     "content.performance_metrics[\"c d\"]: must be a number");
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found", "[{},7]",
			     "content.issues_found[0].issue_type: required; "
			     "content.issues_found[0].severity: required; "
			     "content.issues_found[0].description: required; "
			     "content.issues_found[0].affected_data: required; "
			     "content.issues_found[0].recommendation: required; "
			     "content.issues_found[0].confidence: required; "
			     "content.issues_found[1]: must be an object");
	expect_errors_q("{'message_id':'m','from':'a','to':'b','type':'heartbeat',"
			"'timestamp':'2024-12-20T15:00:00Z','content':{'status':'idle',"
			"'uptime_seconds':0,'active_tasks':0.5,'sequence':-1}}",
			"content.active_tasks: must be an integer; "
			"content.sequence: must be >= 0");
}

static void test_content_enums(void **state)
{
	(void)state;
	expect_content_error(MSG_TASK_ACCEPTANCE, "status", "'maybe'",
			     "content.status: must be one of accepted, rejected, queued");
	expect_content_error(MSG_RESEARCH_RESULT, "status", "'done'",
			     "content.status: must be one of completed, partial, failed");
	expect_content_error(MSG_VALIDATION_REQUEST, "validation_type", "'vibes'",
			     "content.validation_type: must be one of cross_reference, "
			     "timing_check, fact_check");
	expect_content_error(MSG_ERROR_REPORT, "impact_level", "'HIGH'",
			     "content.impact_level: must be one of low, medium, high, critical");
	expect_content_error(MSG_HEARTBEAT, "status", "'sleeping'",
			     "content.status: must be one of idle, busy, waiting, stopping");
	expect_content_error(MSG_SYSTEM_STATUS, "agent_status", "'fine'",
			     "content.agent_status: must be one of healthy, degraded, "
			     "error, offline");
	const char *issue = "{'issue_type':'conflict','severity':'low','description':'d',"
			    "'affected_data':{},'recommendation':'r','confidence':0.5}";
	char *issues = xasprintf("[%s,%s,{'issue_type':'stale_data','severity':'severe',"
				 "'description':'d','affected_data':{},'recommendation':'r',"
				 "'confidence':0.5}]", issue, issue);
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found", issues,
			     "content.issues_found[2].severity: must be one of low, "
			     "medium, high, critical");
	free(issues);
	expect_content_error(MSG_VALIDATION_RESULT, "issues_found",
			     "[{'issue_type':'typo','severity':'low','description':'d',"
			     "'affected_data':[],'recommendation':'r','confidence':2}]",
			     "content.issues_found[0].issue_type: must be one of conflict, "
			     "timing_error, stale_data; "
			     "content.issues_found[0].affected_data: must be an object; "
			     "content.issues_found[0].confidence: must be within 0..1");
}

static void test_content_ranges(void **state)
{
	(void)state;
	expect_content_error(MSG_RESEARCH_RESULT, "confidence_score", "1.5",
			     "content.confidence_score: must be within 0..1");
	expect_content_error(MSG_RESEARCH_RESULT, "confidence_score", "-0.01",
			     "content.confidence_score: must be within 0..1");
	expect_content_error(MSG_TASK_ACCEPTANCE, "agent_capacity", "-0.1",
			     "content.agent_capacity: must be within 0..1");
	expect_content_error(MSG_TASK_ACCEPTANCE, "agent_capacity", "1.0001",
			     "content.agent_capacity: must be within 0..1");
	expect_content_error(MSG_VALIDATION_RESULT, "overall_confidence", "7",
			     "content.overall_confidence: must be within 0..1");
	expect_content_error(MSG_TASK_PROGRESS, "percent_complete", "100.5",
			     "content.percent_complete: must be within 0..100");
	expect_content_error(MSG_RESEARCH_RESULT, "execution_time_minutes", "-1",
			     "content.execution_time_minutes: must be >= 0");
	expect_content_error(MSG_RESEARCH_RESULT, "data_points_collected", "-3",
			     "content.data_points_collected: must be >= 0");
	expect_content_error(MSG_HEARTBEAT, "pid", "0", "content.pid: must be >= 1");
	expect_content_error(MSG_SYSTEM_STATUS, "cpu_usage_percent", "-5",
			     "content.cpu_usage_percent: must be >= 0");
	/* Bounds are inclusive; a float field takes an integer. */
	char *json = envelope(MSG_TASK_ACCEPTANCE,
			      "{'task_id':'t','status':'queued',"
			      "'estimated_completion':'2024-12-20T16:30:00Z','agent_capacity':1}");
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
}

static void test_content_rejected_needs_reason(void **state)
{
	(void)state;
	const char *head = "{'task_id':'t','status':'rejected',"
			   "'estimated_completion':'2024-12-20T16:30:00Z','agent_capacity':1";
	const char *tails[] = { "}", ",'rejection_reason':null}", ",'rejection_reason':''}" };
	for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
		char *c = xasprintf("%s%s", head, tails[i]);
		char *json = envelope(MSG_TASK_ACCEPTANCE, c);
		expect_errors(json, "content.rejection_reason: required when status is rejected");
		free(json);
		free(c);
	}
	char *c = xasprintf("%s,'rejection_reason':5}", head);
	char *json = envelope(MSG_TASK_ACCEPTANCE, c);
	expect_errors(json, "content.rejection_reason: must be a string");
	free(json);
	free(c);
	c = xasprintf("%s,'rejection_reason':'at capacity'}", head);
	json = envelope(MSG_TASK_ACCEPTANCE, c);
	struct msg *m = parse_ok(json);
	msg_free(&m);
	free(json);
	free(c);
}

static void test_all_errors_collected(void **state)
{
	(void)state;
	expect_errors_q("{'message_id':'a/b','from':'A','to':'x/y','type':'research_result',"
			"'timestamp':'2024-02-30T00:00:00Z','priority':9,'extra':1,"
			"'content':{'task_id':'t','status':'completed',"
			"'execution_time_minutes':1,'data_points_collected':1,"
			"'sources_accessed':[],'key_findings':[],'raw_data':{},"
			"'confidence_score':3,'data_freshness_hours':-1,'warnings':[]}}",
			"extra: unknown field; "
			"message_id: must match [A-Za-z0-9_:-]{1,128}; "
			"from: must be an agent name ([a-z0-9][a-z0-9_-]{0,63}); "
			"to: must be an agent name ([a-z0-9][a-z0-9_-]{0,63}) or broadcast; "
			"timestamp: must be ISO 8601 with a time zone; "
			"priority: must be within 1..5; "
			"content.confidence_score: must be within 0..1; "
			"content.data_freshness_hours: must be >= 0");
	/* A flood of errors is capped. */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "{'task_type':'x','focus_area':'a','timeframe':'t',"
		    "'data_sources':[],'deadline':'2024-12-20T17:00:00Z',"
		    "'output_format':'o','target_pairs':[");
	for (int i = 0; i < 500; i++)
		sbuf_addf(&b, "%s%d", i ? "," : "", i);
	sbuf_addstr(&b, "]}");
	char *json = envelope(MSG_TASK_ASSIGNMENT, b.data);
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_parse(json, strlen(json), &m, &errs), -1);
	assert_int_equal(errs.count, MSG_ERRORS_MAX + 1);
	assert_string_equal(errs.items[0], "content.target_pairs[0]: must be a string");
	assert_string_equal(errs.items[MSG_ERRORS_MAX],
			    "too many errors; the rest are left out");
	msg_errors_release(&errs);
	/* Errors are appended, and a NULL errs still fails. */
	assert_int_equal(msg_parse(json, strlen(json), &m, NULL), -1);
	assert_null(m);
	free(json);
	sbuf_release(&b);
}

/* ---- Seed 003 ---- */

static void expect_normalised(const char *in_q, const char *want_q)
{
	char *in = q(in_q), *want = q(want_q);
	struct msg *m = parse_ok(in);
	char *out = msg_to_json(m, false);
	assert_string_equal(out, want);
	struct msg *again = parse_ok(out);
	char *out2 = msg_to_json(again, false);
	assert_string_equal(out2, want);
	free(out2);
	free(out);
	msg_free(&again);
	msg_free(&m);
	free(want);
	free(in);
}

static void test_seed003_task_assignment(void **state)
{
	(void)state;
	expect_normalised(
		"{'message_id':'3f2a9c','timestamp':'2025-09-21T14:30:22Z',"
		"'from_agent':'pm-agent','to_agent':'research-agent-1',"
		"'message_type':'task_assignment','priority':2,'correlation_id':'task-1',"
		"'payload':{'task_id':'task-1','task_type':'research_fx',"
		"'target_market':'Asia','time_window':{'start':'2025-09-15','end':'2025-09-21'},"
		"'mcp_tools':['alpha_vantage','newsapi'],'deadline':'2025-09-21T18:00:00Z',"
		"'retry_count':0,'context':{'week':38}}}",
		"{'message_id':'3f2a9c','from':'product_manager','to':'research_agent_1',"
		"'type':'task_assignment','timestamp':'2025-09-21T14:30:22Z',"
		"'content':{'task_id':'task-1','task_type':'research_fx',"
		"'deadline':'2025-09-21T18:00:00Z','retry_count':0,'context':{'week':38},"
		"'target_pairs':[],'focus_area':'Asia','timeframe':'2025-09-15/2025-09-21',"
		"'data_sources':['alpha_vantage','newsapi'],'output_format':'structured_json'},"
		"'priority':'high','correlation_id':'task-1'}");
	expect_normalised(
		"{'message_id':'x1','timestamp':'2025-09-21T14:30:22Z',"
		"'from_agent':'pm-agent','to_agent':'research-agent-2',"
		"'message_type':'task_assignment','priority':5,"
		"'payload':{'task_type':'research_rates','target_market':'USD/JPY',"
		"'time_window':'this_week','mcp_tools':[],'deadline':'2025-09-21T18:00:00Z',"
		"'output_format':'summary_report'}}",
		"{'message_id':'x1','from':'product_manager','to':'research_agent_2',"
		"'type':'task_assignment','timestamp':'2025-09-21T14:30:22Z',"
		"'content':{'task_type':'research_rates','deadline':'2025-09-21T18:00:00Z',"
		"'output_format':'summary_report','target_pairs':['USD/JPY'],"
		"'focus_area':'USD/JPY','timeframe':'this_week','data_sources':[]},"
		"'priority':'low'}");
	/* A time_window that cannot be read is moved as it is and named. */
	expect_errors_q("{'message_id':'x1','timestamp':'2025-09-21T14:30:22Z',"
			"'from_agent':'pm-agent','to_agent':'validator-agent',"
			"'message_type':'task_assignment','priority':3,"
			"'payload':{'task_type':'validate','target_market':'G10',"
			"'time_window':{'from':'a'},'mcp_tools':['reuters'],"
			"'deadline':'2025-09-21T18:00:00Z'}}",
			"content.timeframe: must be a string");
}

static void test_seed003_result_and_error(void **state)
{
	(void)state;
	expect_normalised(
		"{'message_id':'r-1','timestamp':'2025-09-21T15:00:00Z',"
		"'from_agent':'research-agent-1','to_agent':'pm-agent',"
		"'message_type':'result','priority':3,'correlation_id':'task-1',"
		"'payload':{'result_id':'res-1','task_id':'task-1','agent_id':'research-agent-1',"
		"'market_data':[{'event_type':'fx_movement','currency_pair':'USD/JPY',"
		"'description':'Yen strengthens','impact':'high'},{'event_type':'rate_decision'}],"
		"'sources':[{'name':'alpha_vantage','query':'FX_DAILY'},'newsapi',{'tool':'reuters'}],"
		"'confidence_score':0.8,'processing_time':90,'errors_encountered':['rate limited']}}",
		"{'message_id':'r-1','from':'research_agent_1','to':'product_manager',"
		"'type':'research_result','timestamp':'2025-09-21T15:00:00Z',"
		"'content':{'result_id':'res-1','task_id':'task-1','agent_id':'research-agent-1',"
		"'confidence_score':0.8,'status':'completed','execution_time_minutes':1.5,"
		"'data_points_collected':2,'key_findings':['Yen strengthens'],"
		"'raw_data':{'market_data':[{'event_type':'fx_movement','currency_pair':'USD/JPY',"
		"'description':'Yen strengthens','impact':'high'},{'event_type':'rate_decision'}]},"
		"'sources_accessed':['alpha_vantage','newsapi','reuters'],"
		"'data_freshness_hours':0,'warnings':['rate limited']},"
		"'priority':'normal','correlation_id':'task-1'}");
	expect_normalised(
		"{'message_id':'e-1','timestamp':'2025-09-21T15:00:00+02:00',"
		"'from_agent':'validator-agent','to_agent':'pm-agent',"
		"'message_type':'error','priority':1,"
		"'payload':{'error_id':'err-1','agent_id':'validator-agent',"
		"'error_type':'api_failure','error_message':'HTTP 503','mcp_tool':'reuters',"
		"'recovery_action':'retry later','impact':'high','context':{'task_id':'t-9'}}}",
		"{'message_id':'e-1','from':'validator_agent','to':'product_manager',"
		"'type':'error_report','timestamp':'2025-09-21T15:00:00+02:00',"
		"'content':{'error_id':'err-1','agent_id':'validator-agent',"
		"'error_type':'api_failure','error_message':'HTTP 503',"
		"'recovery_action':'retry later','context':{'task_id':'t-9','mcp_tool':'reuters'},"
		"'impact_level':'high'},'priority':'urgent'}");
	/* No context: one is made for mcp_tool. */
	expect_normalised(
		"{'message_id':'e-2','timestamp':'2025-09-21T15:00:00Z',"
		"'from_agent':'learning-system','to_agent':'broadcast',"
		"'message_type':'error','priority':4,"
		"'payload':{'error_type':'timeout','error_message':'slow','mcp_tool':'newsapi',"
		"'impact':'low'}}",
		"{'message_id':'e-2','from':'learning_system','to':'broadcast',"
		"'type':'error_report','timestamp':'2025-09-21T15:00:00Z',"
		"'content':{'error_type':'timeout','error_message':'slow',"
		"'impact_level':'low','context':{'mcp_tool':'newsapi'}},'priority':'low'}");
	/* Validated after mapping, with seed 002 names. */
	expect_errors_q("{'message_id':'r-2','timestamp':'2025-09-21T15:00:00Z',"
			"'from_agent':'research-agent-2','to_agent':'pm-agent',"
			"'message_type':'result','priority':3,"
			"'payload':{'task_id':'t','market_data':[],'sources':[],"
			"'confidence_score':2,'processing_time':-60,'errors_encountered':[]}}",
			"content.execution_time_minutes: must be >= 0; "
			"content.confidence_score: must be within 0..1");
	/* Mapping cannot push the nesting past the limit. */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "{'message_id':'r-3','timestamp':'2025-09-21T15:00:00Z',"
		    "'from_agent':'research-agent-1','to_agent':'pm-agent',"
		    "'message_type':'result','payload':{'task_id':'t','sources':[],"
		    "'confidence_score':1,'processing_time':1,'errors_encountered':[],"
		    "'market_data':");
	for (int i = 0; i < 62; i++)
		sbuf_addch(&b, '[');
	for (int i = 0; i < 62; i++)
		sbuf_addch(&b, ']');
	sbuf_addstr(&b, "}}");
	expect_errors_q(b.data, "content: nesting deeper than 64 levels");
	sbuf_release(&b);
}

static void test_seed003_other_types(void **state)
{
	(void)state;
	/* status -> system_status; canonical names work in message_type too. */
	char *c = q(valid_content[MSG_SYSTEM_STATUS]);
	char *in = xasprintf("{\"message_id\":\"s-1\",\"timestamp\":\"2025-09-21T15:00:00Z\","
			     "\"from_agent\":\"report-writer\",\"to_agent\":\"pm-agent\","
			     "\"message_type\":\"status\",\"priority\":3,\"payload\":%s}", c);
	struct msg *m = parse_ok(in);
	assert_int_equal(m->type, MSG_SYSTEM_STATUS);
	assert_string_equal(m->from, "report_writer");
	assert_string_equal(m->to, "product_manager");
	msg_free(&m);
	free(in);
	free(c);
	c = q(valid_content[MSG_HEARTBEAT]);
	in = xasprintf("{\"message_id\":\"h-1\",\"timestamp\":\"2025-09-21T15:00:00Z\","
		       "\"from_agent\":\"research-agent-2\",\"to\":\"broadcast\","
		       "\"message_type\":\"heartbeat\",\"content\":%s}", c);
	m = parse_ok(in);
	assert_int_equal(m->type, MSG_HEARTBEAT);
	assert_string_equal(m->from, "research_agent_2");
	msg_free(&m);
	free(in);
	free(c);
	/* A seed 002 message never gets seed 003 defaults. */
	expect_content_error(MSG_RESEARCH_RESULT, "status", NULL, "content.status: required");
}

static void test_agent_aliases(void **state)
{
	(void)state;
	assert_string_equal(msg_agent_canonical("pm-agent"), "product_manager");
	assert_string_equal(msg_agent_canonical("research-agent-1"), "research_agent_1");
	assert_string_equal(msg_agent_canonical("research-agent-2"), "research_agent_2");
	assert_string_equal(msg_agent_canonical("validator-agent"), "validator_agent");
	assert_string_equal(msg_agent_canonical("report-writer"), "report_writer");
	assert_string_equal(msg_agent_canonical("learning-system"), "learning_system");
	assert_string_equal(msg_agent_canonical("other"), "other");
	assert_null(msg_agent_canonical(NULL));
	/* Aliases apply in the seed 002 spelling too. */
	expect_envelope_ok("to", "\"validator-agent\"");
}

static cJSON *nested_arrays(int levels)
{
	cJSON *top = cJSON_CreateArray(), *cur = top;
	for (int i = 1; i < levels; i++) {
		cJSON *a = cJSON_CreateArray();
		cJSON_AddItemToArray(cur, a);
		cur = a;
	}
	return top;
}

/* A heartbeat whose content got extra (built in code) must be refused by
 * msg_validate with exactly the error a reader would give. */
static void expect_tree_error(const char *key, cJSON *extra, const char *expected)
{
	cJSON *c = cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":3,"
			       "\"active_tasks\":0}");
	cJSON_AddItemToObject(c, key, extra);
	struct msg *m = msg_new("pm", "broadcast", MSG_HEARTBEAT, c);
	assert_non_null(m);
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_validate(m, &errs), expected ? -1 : 0);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, expected ? expected : "");
	free(j);
	msg_errors_release(&errs);
	msg_free(&m);
}

static void test_check_tree(void **state)
{
	(void)state;
	expect_tree_error("status", cJSON_CreateString("busy"),
			  "duplicate key \"status\" in object at content");
	expect_tree_error("x", cJSON_CreateNumber(1e308 * 10), "number out of range at content.x");
	expect_tree_error("note", cJSON_CreateString("ab\xff"), "invalid UTF-8 at content.note");
	expect_tree_error("k\xff", cJSON_CreateNull(),
			  "invalid UTF-8 in key at content[\"k\\xff\"]");
	expect_tree_error("d", nested_arrays(1000), "nesting deeper than 64 levels");
	expect_tree_error("d", nested_arrays(63), "nesting deeper than 64 levels");
	expect_tree_error("d", nested_arrays(62), NULL);
	expect_tree_error("ok", cJSON_CreateString("caf\xc3\xa9 \x01"), NULL);
	char *err = NULL;
	assert_int_equal(json_check_tree(NULL, NULL, 0, &err), 0);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "a", 1);
	cJSON_AddNumberToObject(root, "a", 2);
	assert_int_equal(json_check_tree(root, NULL, 0, &err), -1);
	assert_string_equal(err, "duplicate key \"a\" in object at top level");
	free(err);
	cJSON_Delete(root);
}

static void test_validate_content_prefix(void **state)
{
	(void)state;
	cJSON *c = cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":-1,\"active_tasks\":0}");
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_validate_content(MSG_HEARTBEAT, c, "payload", &errs), 1);
	assert_string_equal(errs.items[0], "payload.uptime_seconds: must be >= 0");
	assert_int_equal(msg_validate_content(MSG_HEARTBEAT, c, "", &errs), 1);
	assert_string_equal(errs.items[1], "uptime_seconds: must be >= 0");
	assert_int_equal(msg_validate_content(MSG_TYPE_COUNT, c, "content", &errs), 1);
	assert_int_equal(msg_validate_content(MSG_HEARTBEAT, NULL, "content", &errs), 1);
	assert_string_equal(errs.items[3], "content: must be an object");
	assert_int_equal(errs.count, 4);
	msg_errors_release(&errs);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, "");
	free(j);
	cJSON_Delete(c);
}

int main(void)
{
	const struct CMUnitTest content_tests[] = {
		cmocka_unit_test(test_content_required),
		cmocka_unit_test(test_content_types),
		cmocka_unit_test(test_content_enums),
		cmocka_unit_test(test_content_ranges),
		cmocka_unit_test(test_content_rejected_needs_reason),
		cmocka_unit_test(test_all_errors_collected),
		cmocka_unit_test(test_validate_content_prefix),
		cmocka_unit_test(test_check_tree),
	};
	const struct CMUnitTest seed003_tests[] = {
		cmocka_unit_test(test_seed003_task_assignment),
		cmocka_unit_test(test_seed003_result_and_error),
		cmocka_unit_test(test_seed003_other_types),
		cmocka_unit_test(test_agent_aliases),
	};
	int failed = 0;
	failed += cmocka_run_group_tests_name("content", content_tests, NULL, NULL);
	failed += cmocka_run_group_tests_name("seed003", seed003_tests, NULL, NULL);
	return failed ? 1 : 0;
}
