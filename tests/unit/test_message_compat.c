/* Messages as seed 002's reference code writes them (pydantic 1.10's
 * message.json() of BaseMessage, stamped by MessageFactory with
 * datetime.utcnow()): read and normalised, with the seed's strictness
 * kept. JSON in these tests is written with single quotes (q() turns them
 * into double quotes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

static char *q(const char *s)
{
	char *d = xstrdup(s);
	for (char *p = d; *p; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

/* What the seed's factory and message.json(indent=2) write for a
 * task_assignment whose content is a TaskAssignmentContent's .dict() (its
 * deadline a naive datetime too), byte for byte as pydantic 1.10.4 wrote
 * it. */
static const char seed_json[] =
	"{\n"
	"  \"message_id\": \"product_manager_20261124_092203_3f9a1c\",\n"
	"  \"from_agent\": \"product_manager\",\n"
	"  \"to_agent\": \"research_agent_1\",\n"
	"  \"type\": \"task_assignment\",\n"
	"  \"timestamp\": \"2026-11-24T09:22:03.439222\",\n"
	"  \"content\": {\n"
	"    \"task_type\": \"forex_research\",\n"
	"    \"focus_area\": \"Asia/G10\",\n"
	"    \"target_pairs\": [\n"
	"      \"USD/JPY\"\n"
	"    ],\n"
	"    \"timeframe\": \"this_week\",\n"
	"    \"data_sources\": [\n"
	"      \"alpha_vantage\"\n"
	"    ],\n"
	"    \"deadline\": \"2026-11-24T11:22:03.439222\",\n"
	"    \"output_format\": \"structured_json\",\n"
	"    \"special_instructions\": null\n"
	"  },\n"
	"  \"priority\": \"normal\",\n"
	"  \"reply_to\": null,\n"
	"  \"timeout\": null\n"
	"}";

static struct msg *parse_ok(const char *json)
{
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	int r = msg_parse(json, strlen(json), &m, &errs);
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

static void expect_errors(const char *json, const char *expected)
{
	struct msg *m = (struct msg *)1;
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_parse(json, strlen(json), &m, &errs), -1);
	assert_null(m);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, expected);
	free(j);
	msg_errors_release(&errs);
}

/* seed_json with one content field set to value (raw JSON; NULL deletes
 * it), or, when in_content is false, one envelope field. Caller frees. */
static char *seed_with(bool in_content, const char *field, const char *value)
{
	cJSON *root = cJSON_Parse(seed_json);
	assert_non_null(root);
	cJSON *obj = in_content ? cJSON_GetObjectItemCaseSensitive(root, "content") : root;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
	if (value) {
		cJSON *item = cJSON_Parse(value);
		assert_non_null(item);
		cJSON_AddItemToObject(obj, field, item);
	}
	char *s = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return s;
}

static const char *note_at(const struct msg *m, int i)
{
	const cJSON *n = cJSON_GetArrayItem(m->notes, i);
	assert_true(cJSON_IsString(n));
	return n->valuestring;
}

/* The seed's own output: from_agent/to_agent beside type/content, nulls,
 * and times without a zone, normalised; the canonical form exact. */
static void test_seed002_factory_output(void **state)
{
	(void)state;
	struct msg *m = parse_ok(seed_json);
	assert_string_equal(m->from, "product_manager");
	assert_string_equal(m->to, "research_agent_1");
	assert_int_equal(m->type, MSG_TASK_ASSIGNMENT);
	assert_string_equal(m->timestamp, "2026-11-24T09:22:03.439222Z");
	/* 2026-11-24T09:22:03Z is 1795512123 s since the epoch: UTC read. */
	assert_true(m->ts_ns == 1795512123LL * 1000000000 + 439222000);
	assert_int_equal(m->priority, PRIO_NORMAL);
	assert_null(m->reply_to);
	assert_true(m->timeout_s == -1);
	assert_int_equal(cJSON_GetArraySize(m->notes), 2);
	assert_string_equal(note_at(m, 0), "timestamp_assumed_utc");
	assert_string_equal(note_at(m, 1), "content.deadline_assumed_utc");
	assert_true(msg_has_note(m, "content.deadline_assumed_utc"));
	assert_false(msg_has_note(m, "content.deadline"));
	char *out = msg_to_json(m, false);
	assert_string_equal(out,
		"{\"message_id\":\"product_manager_20261124_092203_3f9a1c\","
		"\"from\":\"product_manager\",\"to\":\"research_agent_1\","
		"\"type\":\"task_assignment\",\"timestamp\":\"2026-11-24T09:22:03.439222Z\","
		"\"content\":{\"task_type\":\"forex_research\",\"focus_area\":\"Asia/G10\","
		"\"target_pairs\":[\"USD/JPY\"],\"timeframe\":\"this_week\","
		"\"data_sources\":[\"alpha_vantage\"],"
		"\"deadline\":\"2026-11-24T11:22:03.439222Z\","
		"\"output_format\":\"structured_json\",\"special_instructions\":null},"
		"\"priority\":\"normal\","
		"\"notes\":[\"timestamp_assumed_utc\",\"content.deadline_assumed_utc\"]}");
	/* The canonical form reads back as it is: the notes kept, no more. */
	struct msg *again = parse_ok(out);
	assert_string_equal(again->timestamp, m->timestamp);
	assert_int_equal(cJSON_GetArraySize(again->notes), 2);
	assert_string_equal(note_at(again, 1), "content.deadline_assumed_utc");
	assert_int_equal(msg_validate(again, NULL), 0);
	struct msg *d = msg_dup(again);
	assert_int_equal(cJSON_GetArraySize(d->notes), 2);
	assert_true(d->notes != again->notes);
	msg_free(&d);
	msg_free(&again);
	free(out);
	msg_free(&m);
}

/* A zone given is kept as given, and nothing is noted. */
static void test_zoned_not_noted(void **state)
{
	(void)state;
	char *s = seed_with(false, "timestamp", "\"2026-11-24T09:22:03.439222+00:00\"");
	char *t = seed_with(true, "deadline", "\"2026-11-24T11:22:03+09:00\"");
	cJSON *root = cJSON_Parse(t);
	cJSON_ReplaceItemInObjectCaseSensitive(root, "timestamp",
		cJSON_CreateString("2026-11-24T09:22:03.439222+00:00"));
	char *both = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	struct msg *m = parse_ok(s);
	assert_string_equal(m->timestamp, "2026-11-24T09:22:03.439222+00:00");
	assert_int_equal(cJSON_GetArraySize(m->notes), 1);
	assert_string_equal(note_at(m, 0), "content.deadline_assumed_utc");
	msg_free(&m);
	m = parse_ok(both);
	assert_null(m->notes);
	char *out = msg_to_json(m, false);
	assert_null(strstr(out, "notes"));
	assert_non_null(strstr(out, "\"deadline\":\"2026-11-24T11:22:03+09:00\""));
	free(out);
	msg_free(&m);
	free(both);
	free(t);
	free(s);
}

/* Every content time field of every schema, without a zone: read as UTC,
 * a Z appended, noted by path. */
static void test_content_times(void **state)
{
	(void)state;
	static const struct {
		const char *type, *field, *content;
	} cases[] = {
		{ "task_acceptance", "estimated_completion",
		  "{'task_id':'t1','status':'accepted','estimated_completion':"
		  "'2024-12-20T16:30:00','agent_capacity':0.4,'rejection_reason':null}" },
		{ "task_progress", "estimated_completion",
		  "{'task_id':'t1','percent_complete':10,'current_step':'x',"
		  "'estimated_completion':'2024-12-20T16:30:00','items_done':null,"
		  "'items_total':null}" },
		{ "validation_request", "deadline",
		  "{'research_results_to_validate':['r1'],'validation_type':'fact_check',"
		  "'validation_sources':[],'priority_areas':[],'deadline':'2024-12-20T16:30:00'}" },
		{ "system_status", "last_successful_operation",
		  "{'agent_status':'healthy','cpu_usage_percent':1,'memory_usage_mb':2,"
		  "'active_tasks':0,'completed_tasks_today':0,'error_count_today':0,"
		  "'last_successful_operation':'2024-12-20T16:30:00','performance_metrics':{}}" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *c = q(cases[i].content);
		char *json = xasprintf("{\"message_id\":\"m1\",\"from_agent\":\"research_agent_1\","
				       "\"to_agent\":\"product_manager\",\"type\":\"%s\","
				       "\"timestamp\":\"2024-12-20T15:00:00Z\",\"content\":%s}",
				       cases[i].type, c);
		struct msg *m = parse_ok(json);
		char *note = xasprintf("content.%s_assumed_utc", cases[i].field);
		assert_int_equal(cJSON_GetArraySize(m->notes), 1);
		assert_string_equal(note_at(m, 0), note);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->content, cases[i].field);
		assert_string_equal(v->valuestring, "2024-12-20T16:30:00Z");
		free(note);
		msg_free(&m);
		free(json);
		free(c);
	}
}

/* null for every optional field, envelope and content, as the seed's
 * Optional[...] = None writes it. */
static void test_optional_nulls_everywhere(void **state)
{
	(void)state;
	char *json = q("{'message_id':'m1','from_agent':'research_agent_1',"
		       "'to_agent':'product_manager','type':'error_report',"
		       "'timestamp':'2024-12-20T15:00:00','content':{'error_type':'timeout',"
		       "'error_message':'slow','context':{},'stack_trace':null,"
		       "'recovery_action':null,'impact_level':'low','related_task_id':null},"
		       "'priority':null,'reply_to':null,'timeout':null,"
		       "'correlation_id':null,'notes':null}");
	struct msg *m = parse_ok(json);
	assert_int_equal(m->priority, PRIO_NORMAL);
	assert_null(m->reply_to);
	assert_null(m->correlation_id);
	assert_true(m->timeout_s == -1);
	assert_int_equal(cJSON_GetArraySize(m->notes), 1);
	assert_string_equal(note_at(m, 0), "timestamp_assumed_utc");
	msg_free(&m);
	free(json);
	/* task_acceptance: rejection_reason null is fine unless rejected. */
	json = q("{'message_id':'m2','from_agent':'research_agent_1','to_agent':"
		 "'product_manager','type':'task_acceptance','timestamp':"
		 "'2024-12-20T15:00:00','content':{'task_id':'t1','status':'rejected',"
		 "'estimated_completion':'2024-12-20T15:00:00','agent_capacity':1.0,"
		 "'rejection_reason':null},'priority':'normal','reply_to':null,'timeout':null}");
	expect_errors(json, "content.rejection_reason: required when status is rejected");
	free(json);
}

/* Strictness kept in the seed's own form: a missing required field, a
 * wrong type, an unknown enum value, an out-of-range number, each with
 * its field path and rule. */
static void test_strictness_kept(void **state)
{
	(void)state;
	static const struct {
		bool in_content;
		const char *field, *value, *want;
	} cases[] = {
		{ true, "task_type", NULL, "content.task_type: required" },
		{ true, "deadline", NULL, "content.deadline: required" },
		{ true, "task_type", "null", "content.task_type: must be a string" },
		{ true, "target_pairs", "\"USD/JPY\"", "content.target_pairs: must be an array" },
		{ true, "deadline", "\"2026-02-30T11:22:03\"",
		  "content.deadline: must be ISO 8601 with a time zone" },
		{ true, "special_instructions", "5",
		  "content.special_instructions: must be a string" },
		{ false, "message_id", NULL, "message_id: required" },
		{ false, "from_agent", NULL, "from: required" },
		{ false, "to_agent", "null", "to_agent: must be a string" },
		{ false, "type", "\"task_done\"",
		  "type: must be one of task_assignment, task_acceptance, task_progress, "
		  "research_result, validation_request, validation_result, error_report, "
		  "heartbeat, system_status" },
		{ false, "priority", "\"critical\"",
		  "priority: must be one of low, normal, high, urgent" },
		{ false, "timestamp", "\"2026-11-24T25:22:03\"",
		  "timestamp: must be ISO 8601 with a time zone" },
		{ false, "timestamp", "null", "timestamp: must be a string" },
		{ false, "timeout", "0", "timeout: must be within 1..2147483647" },
		{ false, "timeout", "1.5", "timeout: must be an integer" },
		{ false, "reply_to", "\"a b\"", "reply_to: must match [A-Za-z0-9_:-]{1,128}" },
		{ false, "from", "\"product_manager\"",
		  "from_agent: not allowed together with from" },
		{ false, "extra", "1", "extra: unknown field" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *s = seed_with(cases[i].in_content, cases[i].field, cases[i].value);
		expect_errors(s, cases[i].want);
		free(s);
	}
	/* Forms pydantic parses but message.json() never writes stay refused
	 * (madf-messages(5) says so): a space for the T, epoch seconds. */
	char *s = seed_with(false, "timestamp", "\"2026-11-24 09:22:03.439222\"");
	expect_errors(s, "timestamp: must be ISO 8601 with a time zone");
	free(s);
	s = seed_with(true, "deadline", "1795512123");
	expect_errors(s, "content.deadline: must be a string");
	free(s);
	/* An unknown enum value and an out-of-range number in other types. */
	char *json = q("{'message_id':'m1','from_agent':'research_agent_1','to_agent':"
		       "'product_manager','type':'task_acceptance','timestamp':"
		       "'2024-12-20T15:00:00','content':{'task_id':'t1','status':'maybe',"
		       "'estimated_completion':'2024-12-20T15:00:00','agent_capacity':1.5,"
		       "'rejection_reason':null},'priority':'normal','reply_to':null,"
		       "'timeout':null}");
	expect_errors(json, "content.status: must be one of accepted, rejected, queued; "
			    "content.agent_capacity: must be within 0..1");
	free(json);
	json = q("{'message_id':'m1','from_agent':'validator_agent','to_agent':"
		 "'product_manager','type':'validation_result','timestamp':"
		 "'2024-12-20T15:00:00','content':{'validation_id':'v1',"
		 "'research_results_validated':[],'overall_confidence':0.5,"
		 "'issues_found':[{'issue_type':'conflict','severity':'extreme',"
		 "'description':'d','affected_data':{},'recommendation':'r',"
		 "'confidence':-0.1}],'validated_findings':[],"
		 "'execution_time_minutes':1,'sources_consulted':[]}}");
	expect_errors(json, "content.issues_found[0].severity: must be one of low, medium, "
			    "high, critical; content.issues_found[0].confidence: must be "
			    "within 0..1");
	free(json);
}

/* "notes" as read: an array of valid notes (or null), at most
 * MSG_NOTES_MAX, a naive time's note counting towards them. */
static void test_notes_read(void **state)
{
	(void)state;
	char *s = seed_with(false, "notes", "\"x\"");
	expect_errors(s, "notes: must be an array of strings");
	free(s);
	s = seed_with(false, "notes", "[\"ok_note\",\"bad note\",3]");
	expect_errors(s, "notes[1]: must match [A-Za-z0-9_.:-]{1,128}; "
			 "notes[2]: must match [A-Za-z0-9_.:-]{1,128}");
	free(s);
	/* Notes given are kept, duplicates once, madf's own appended. */
	s = seed_with(false, "notes", "[\"relayed:x\",\"timestamp_assumed_utc\",\"relayed:x\"]");
	struct msg *m = parse_ok(s);
	assert_int_equal(cJSON_GetArraySize(m->notes), 3);
	assert_string_equal(note_at(m, 0), "relayed:x");
	assert_string_equal(note_at(m, 1), "timestamp_assumed_utc");
	assert_string_equal(note_at(m, 2), "content.deadline_assumed_utc");
	msg_free(&m);
	free(s);
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addch(&b, '[');
	for (int i = 0; i < MSG_NOTES_MAX; i++)
		sbuf_addf(&b, "%s\"n%d\"", i ? "," : "", i);
	sbuf_addch(&b, ']');
	s = seed_with(false, "notes", b.data);
	expect_errors(s, "notes: at most 16 notes, no room for timestamp_assumed_utc; "
			 "notes: at most 16 notes, no room for content.deadline_assumed_utc; "
			 "content.deadline: must be ISO 8601 with a time zone");
	free(s);
	sbuf_release(&b);
}

static void test_notes_api(void **state)
{
	(void)state;
	struct msg *m = msg_new("product_manager", "research_agent_1", MSG_HEARTBEAT,
				cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":1,"
					    "\"active_tasks\":0}"));
	assert_non_null(m);
	assert_null(m->notes);
	assert_int_equal(msg_note_add(m, "a.b_c:d-e"), 0);
	assert_int_equal(msg_note_add(m, "a.b_c:d-e"), 0);
	assert_int_equal(cJSON_GetArraySize(m->notes), 1);
	assert_int_equal(msg_note_add(m, ""), -1);
	assert_int_equal(msg_note_add(m, "with space"), -1);
	assert_int_equal(msg_note_add(m, NULL), -1);
	assert_int_equal(msg_validate(m, NULL), 0);
	for (int i = 1; i < MSG_NOTES_MAX; i++) {
		char n[16];
		snprintf(n, sizeof(n), "n%d", i);
		assert_int_equal(msg_note_add(m, n), 0);
	}
	assert_int_equal(msg_note_add(m, "one_more"), -1);
	assert_int_equal(cJSON_GetArraySize(m->notes), MSG_NOTES_MAX);
	/* msg_validate checks notes built in code as a reader would. */
	cJSON_AddItemToArray(m->notes, cJSON_CreateString("bad note"));
	struct msg_errors errs = { 0 };
	assert_int_equal(msg_validate(m, &errs), -1);
	char *j = msg_errors_join(&errs);
	assert_string_equal(j, "notes: at most 16 notes");
	free(j);
	msg_errors_release(&errs);
	cJSON_DeleteItemFromArray(m->notes, 0);
	assert_int_equal(msg_validate(m, &errs), -1);
	j = msg_errors_join(&errs);
	assert_string_equal(j, "notes[15]: must match [A-Za-z0-9_.:-]{1,128}");
	free(j);
	msg_errors_release(&errs);
	msg_free(&m);
	/* msg_validate stays strict on a time without a zone built in code. */
	m = msg_new("product_manager", "research_agent_1", MSG_HEARTBEAT,
		    cJSON_Parse("{\"status\":\"idle\",\"uptime_seconds\":1,"
				"\"active_tasks\":0}"));
	free(m->timestamp);
	m->timestamp = xstrdup("2024-12-20T15:00:00");
	assert_int_equal(msg_validate(m, &errs), -1);
	assert_string_equal(errs.items[0], "timestamp: must be ISO 8601 with a time zone");
	msg_errors_release(&errs);
	msg_free(&m);
	int64_t ns;
	assert_int_equal(msg_parse_time("2024-12-20T15:00:00", &ns), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed002_factory_output),
		cmocka_unit_test(test_zoned_not_noted),
		cmocka_unit_test(test_content_times),
		cmocka_unit_test(test_optional_nulls_everywhere),
		cmocka_unit_test(test_strictness_kept),
		cmocka_unit_test(test_notes_read),
		cmocka_unit_test(test_notes_api),
	};
	return cmocka_run_group_tests_name("seed002", tests, NULL, NULL);
}
