/* Learning system: signatures, aggregation of synthetic agent logs into
 * error patterns and improvement metrics, recommendations, error rates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/learning.h"
#include "core/log.h"
#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

#define NS INT64_C(1000000000)

static void sig_is(const char *type, const char *msg, const char *want)
{
	char *s = learning_signature(type, msg);
	if (strcmp(s, want))
		fail_msg("signature of \"%s\": got \"%s\", want \"%s\"", msg, s, want);
	free(s);
}

static void test_signature(void **state)
{
	(void)state;
	sig_is("timeout", "timeout after 30 s on task pm_1",
	       "timeout: timeout after <n> s on task pm_<n>");
	sig_is("timeout", "timeout after 45 s on task pm_2",
	       "timeout: timeout after <n> s on task pm_<n>");
	sig_is("http", "request 550e8400-e29b-41d4-a716-446655440000 failed",
	       "http: request <hex> failed");
	sig_is("x", "id abc123def failed with code 0x1F after 1.5s",
	       "x: id <hex> failed with code <hex> after <n>s");
	sig_is("x", "can't parse \"USD/JPY\" row 12, see 'file one'",
	       "x: can't parse <str> row <n>, see <str>");
	sig_is("x", "msg pm_20260101_120000_0123456789abcdef lost",
	       "x: msg pm_<n>_<n>_<hex> lost");
	sig_is("x", "  spread   1,234.5 \t bp  ", "x: spread <n> bp");
	sig_is("x", "no digits in decade", "x: no digits in decade");
	sig_is(NULL, "", "unknown: ");
	/* long text is cut on a character boundary */
	struct sbuf b;
	sbuf_init(&b);
	for (int i = 0; i < 400; i++)
		sbuf_addstr(&b, "\xc3\xa9");
	char *s = learning_signature("x", b.data);
	assert_true(strlen(s) < 320);
	char *clean = util_sanitize(s, strlen(s), false);
	assert_string_equal(clean, s);
	free(clean);
	free(s);
	sbuf_release(&b);
}

static char *tmp_dir(void)
{
	char *d = xstrdup("/tmp/madf-test-learning-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void log_error(struct log_writer *l, const char *type, const char *tool,
		      const char *kind, const char *task, const char *msg)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "error_type", type);
	if (tool)
		cJSON_AddStringToObject(f, "tool", tool);
	if (kind)
		cJSON_AddStringToObject(f, "task_kind", kind);
	cJSON_AddStringToObject(f, "task_id", task);
	log_write(l, LOG_ERRORS, LOG_ERROR, "task_failed", f, "%s", msg);
	cJSON_Delete(f);
}

static void log_result(struct log_writer *l, const char *kind, const char *task,
		       double ms)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "task_kind", kind);
	cJSON_AddStringToObject(f, "task_id", task);
	cJSON_AddNumberToObject(f, "duration_ms", ms);
	log_write(l, LOG_RESULTS, LOG_INFO, "task_done", f, "task %s done", task);
	cJSON_Delete(f);
}

static struct log_writer *open_log(const char *dir, const char *agent)
{
	struct log_writer *l = NULL;
	char *err = NULL;
	if (log_writer_open(dir, agent, &l, &err) < 0)
		fail_msg("%s", err);
	return l;
}

static void write_raw(const char *dir, const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", dir, rel), *err = NULL;
	char *d = xstrdup(p);
	*strrchr(d, '/') = '\0';
	assert_int_equal(util_mkdirs(d, &err), 0);
	assert_int_equal(util_write_file_atomic(p, text, strlen(text), false, &err), 0);
	free(d);
	free(p);
}

static cJSON *load(const char *dir, const char *name)
{
	char *p = xasprintf("%s/learning/%s", dir, name), *buf = NULL, *err = NULL;
	size_t n;
	if (util_read_file(p, 1 << 24, &buf, &n, &err) < 0)
		fail_msg("%s", err);
	cJSON *j = json_parse_strict(buf, n, &err);
	if (!j)
		fail_msg("%s: %s", p, err);
	free(buf);
	free(p);
	return j;
}

static const cJSON *at(const cJSON *j, const char *path)
{
	char *p = xstrdup(path), *save = NULL;
	for (char *k = strtok_r(p, "/", &save); k && j; k = strtok_r(NULL, "/", &save))
		j = cJSON_GetObjectItemCaseSensitive(j, k);
	free(p);
	return j;
}

static double num(const cJSON *j, const char *path)
{
	const cJSON *v = at(j, path);
	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}

static const char *str(const cJSON *j, const char *path)
{
	const cJSON *v = at(j, path);
	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", path);
	return v->valuestring;
}

#define TIMEOUT_SIG "timeout: timeout after <n> s on task pm_<n>"

static void fill_logs(const char *dir)
{
	struct log_writer *r1 = open_log(dir, "research_agent_1");
	log_error(r1, "timeout", "market.rates", "market", "pm_1",
		  "timeout after 30 s on task pm_1");
	log_error(r1, "timeout", "market.rates", "market", "pm_2",
		  "timeout after 45 s on task pm_2");
	log_error(r1, "timeout", "market.rates", "market", "pm_3",
		  "timeout after 60 s on task pm_3");
	log_result(r1, "news", "n1", 100);
	log_result(r1, "news", "n2", 200);
	log_writer_free(&r1);

	struct log_writer *r2 = open_log(dir, "research_agent_2");
	log_error(r2, "http", "market.rates", "market", "m9",
		  "HTTP 503 from host 'api.example'");
	log_result(r2, "market", "m9", 50); /* retried, then done */
	log_result(r2, "market", "m10", 70);
	log_writer_free(&r2);

	/* the product_manager logs a failure of research_agent_2 */
	struct log_writer *pm = open_log(dir, "product_manager");
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "error_type", "task_failed");
	cJSON_AddStringToObject(f, "task_kind", "news");
	cJSON_AddStringToObject(f, "task_id", "n7");
	cJSON_AddStringToObject(f, "agent", "research_agent_2");
	log_write(pm, LOG_ERRORS, LOG_WARN, "task_failed", f,
		  "n7 on research_agent_2: deadline missed");
	cJSON_Delete(f);
	log_writer_free(&pm);

	struct log_writer *v = open_log(dir, "validator_agent");
	log_error(v, "conflict", NULL, NULL, "v1", "conflict on 0xdeadbeef");
	log_error(v, "conflict", NULL, NULL, "v2", "conflict on 0x1234abcd");
	log_writer_free(&v);

	/* three bad lines and a blank one, in another dated file */
	write_raw(dir, "agents/validator_agent/errors/2020-01-01.jsonl",
		  "not json\n{}\n\n[1]\n");
	/* ignored: not .jsonl, not an agent name, another category */
	write_raw(dir, "agents/validator_agent/errors/notes.txt", "junk\n");
	write_raw(dir, "agents/Bad Agent/errors/2020-01-01.jsonl", "junk\n");
	write_raw(dir, "agents/validator_agent/queries/2020-01-01.jsonl", "junk\n");
}

static void test_aggregate(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	fill_logs(dir);
	int64_t now = util_now_ns();
	if (learning_aggregate(dir, now, &err) < 0)
		fail_msg("%s", err);

	cJSON *p = load(dir, "error-patterns.json");
	int64_t gen;
	assert_int_equal(msg_parse_time(str(p, "generated_at"), &gen), 0);
	assert_int_equal(num(p, "skipped_lines"), 3);
	const cJSON *pats = at(p, "patterns");
	assert_int_equal(cJSON_GetArraySize(pats), 4);
	const cJSON *p0 = cJSON_GetArrayItem(pats, 0);
	assert_string_equal(str(p0, "signature"), TIMEOUT_SIG);
	assert_string_equal(str(p0, "error_type"), "timeout");
	assert_int_equal(num(p0, "count"), 3);
	assert_int_equal(num(p0, "agents/research_agent_1"), 3);
	assert_int_equal(cJSON_GetArraySize(at(p0, "agents")), 1);
	assert_int_equal(num(p0, "tools/market.rates"), 3);
	assert_int_equal(num(p0, "task_kinds/market"), 3);
	assert_string_equal(str(p0, "example"), "timeout after 30 s on task pm_1");
	int64_t first, last;
	assert_int_equal(msg_parse_time(str(p0, "first_seen"), &first), 0);
	assert_int_equal(msg_parse_time(str(p0, "last_seen"), &last), 0);
	assert_true(first <= last);
	const cJSON *p1 = cJSON_GetArrayItem(pats, 1);
	assert_string_equal(str(p1, "signature"), "conflict: conflict on <hex>");
	assert_int_equal(num(p1, "count"), 2);
	assert_int_equal(cJSON_GetArraySize(at(p1, "tools")), 0);
	assert_int_equal(cJSON_GetArraySize(at(p1, "task_kinds")), 0);
	const cJSON *p2 = cJSON_GetArrayItem(pats, 2);
	assert_string_equal(str(p2, "signature"), "http: HTTP <n> from host <str>");
	assert_int_equal(num(p2, "count"), 1);
	const cJSON *p3 = cJSON_GetArrayItem(pats, 3);
	assert_string_equal(str(p3, "signature"),
			    "task_failed: n<n> on research_agent_<n>: deadline missed");
	assert_int_equal(num(p3, "agents/research_agent_2"), 1);
	const cJSON *rec = at(p, "recurring");
	assert_int_equal(cJSON_GetArraySize(rec), 1);
	assert_string_equal(cJSON_GetArrayItem(rec, 0)->valuestring, TIMEOUT_SIG);
	cJSON_Delete(p);

	cJSON *m = load(dir, "improvement-metrics.json");
	assert_int_equal(num(m, "skipped_lines"), 3);
	assert_int_equal(cJSON_GetArraySize(at(m, "by_agent")), 3); /* no product_manager */
	assert_int_equal(num(m, "by_agent/research_agent_1/tasks"), 5);
	assert_int_equal(num(m, "by_agent/research_agent_1/errors"), 3);
	assert_int_equal(num(m, "by_agent/research_agent_1/failed_tasks"), 3);
	assert_true(fabs(num(m, "by_agent/research_agent_1/error_rate") - 0.6) < 1e-9);
	assert_int_equal(num(m, "by_agent/research_agent_1/by_kind/market/tasks"), 3);
	assert_int_equal(num(m, "by_agent/research_agent_1/by_kind/market/errors"), 3);
	assert_true(num(m, "by_agent/research_agent_1/by_kind/market/error_rate") == 1.0);
	assert_true(cJSON_IsNull(at(m, "by_agent/research_agent_1/by_kind/market/avg_duration_ms")));
	assert_int_equal(num(m, "by_agent/research_agent_1/by_kind/news/tasks"), 2);
	assert_int_equal(num(m, "by_agent/research_agent_1/by_kind/news/errors"), 0);
	assert_true(num(m, "by_agent/research_agent_1/by_kind/news/error_rate") == 0.0);
	assert_true(num(m, "by_agent/research_agent_1/by_kind/news/avg_duration_ms") == 150.0);
	assert_int_equal(num(m, "by_agent/research_agent_2/tasks"), 3);
	assert_int_equal(num(m, "by_agent/research_agent_2/errors"), 2);
	assert_true(num(m, "by_agent/research_agent_2/by_kind/news/error_rate") == 1.0);
	assert_true(num(m, "by_agent/research_agent_2/by_kind/market/error_rate") == 0.5);
	assert_true(num(m, "by_agent/research_agent_2/by_kind/market/avg_duration_ms") == 60.0);
	assert_int_equal(num(m, "by_agent/validator_agent/tasks"), 2);
	assert_int_equal(num(m, "by_agent/validator_agent/errors"), 2);
	assert_true(num(m, "by_agent/validator_agent/error_rate") == 1.0);
	assert_int_equal(cJSON_GetArraySize(at(m, "by_agent/validator_agent/by_kind")), 0);
	assert_int_equal(num(m, "by_error_type/timeout"), 3);
	assert_int_equal(num(m, "by_error_type/http"), 1);
	assert_int_equal(num(m, "by_error_type/conflict"), 2);
	assert_int_equal(num(m, "by_error_type/task_failed"), 1);
	assert_int_equal(num(m, "by_tool/market.rates/errors"), 4);
	assert_int_equal(cJSON_GetArraySize(at(m, "by_tool")), 1);

	const cJSON *recs = at(m, "recommendations");
	assert_int_equal(cJSON_GetArraySize(recs), 2);
	const cJSON *r0 = cJSON_GetArrayItem(recs, 0);
	assert_string_equal(str(r0, "agent"), "research_agent_1");
	assert_string_equal(str(r0, "task_kind"), "market");
	assert_true(num(r0, "error_rate") == 1.0);
	assert_string_equal(str(r0, "text"),
			    "research_agent_1 failed 3 of 3 market tasks (timeout): "
			    "assign market tasks to another agent");
	const cJSON *r1 = cJSON_GetArrayItem(recs, 1);
	assert_string_equal(str(r1, "signature"), TIMEOUT_SIG);
	assert_string_equal(str(r1, "agent"), "research_agent_1");
	assert_string_equal(str(r1, "task_kind"), "market");
	assert_true(cJSON_IsNull(at(r1, "error_rate")));
	assert_non_null(strstr(str(r1, "text"), "seen 3 times"));
	assert_non_null(strstr(str(r1, "text"), TIMEOUT_SIG));
	cJSON_Delete(m);

	/* error rates read back */
	assert_true(learning_error_rate(dir, "research_agent_1", "market") == 1.0);
	assert_true(learning_error_rate(dir, "research_agent_1", "news") == 0.0);
	assert_true(learning_error_rate(dir, "research_agent_2", "market") == 0.5);
	assert_true(fabs(learning_error_rate(dir, "research_agent_1", NULL) - 0.6) < 1e-9);
	assert_true(learning_error_rate(dir, "research_agent_1", "fx_options") == -1);
	assert_true(learning_error_rate(dir, "nobody", "market") == -1);
	assert_true(learning_error_rate(dir, "nobody", NULL) == -1);
	assert_true(learning_error_rate(dir, "validator_agent", "market") == -1);

	/* running again gives the same numbers (no double counting) */
	assert_int_equal(learning_aggregate(dir, now, &err), 0);
	assert_true(learning_error_rate(dir, "research_agent_1", "market") == 1.0);
	m = load(dir, "improvement-metrics.json");
	assert_int_equal(num(m, "by_agent/research_agent_1/tasks"), 5);
	cJSON_Delete(m);

	/* a corrupt metrics file: -1 */
	write_raw(dir, "learning/improvement-metrics.json", "{broken");
	assert_true(learning_error_rate(dir, "research_agent_1", "market") == -1);
	util_rm_tree(dir);
	free(dir);
}

static void test_empty(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	/* nothing learned yet */
	assert_true(learning_error_rate(dir, "research_agent_1", "market") == 0);
	assert_int_equal(learning_aggregate(dir, util_now_ns(), &err), 0);
	cJSON *p = load(dir, "error-patterns.json");
	assert_int_equal(cJSON_GetArraySize(at(p, "patterns")), 0);
	assert_int_equal(cJSON_GetArraySize(at(p, "recurring")), 0);
	cJSON_Delete(p);
	cJSON *m = load(dir, "improvement-metrics.json");
	assert_int_equal(cJSON_GetArraySize(at(m, "by_agent")), 0);
	assert_int_equal(cJSON_GetArraySize(at(m, "recommendations")), 0);
	cJSON_Delete(m);
	assert_true(learning_error_rate(dir, "research_agent_1", "market") == -1);
	assert_int_equal(learning_aggregate("", 0, &err), -1);
	free(err);
	util_rm_tree(dir);
	free(dir);
}

/* Two errors of the same task count one failed task; a rate of 2 of 3
 * recommends; one of 3 does not. */
static void test_thresholds(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *l = open_log(dir, "research_agent_2");
	log_error(l, "parse", "news.fetch", "news", "t1", "bad feed at line 3");
	log_error(l, "parse", "news.fetch", "news", "t1", "bad feed at line 9");
	log_result(l, "news", "t1", 10);
	log_error(l, "http", "news.fetch", "news", "t2", "HTTP 500");
	log_result(l, "news", "t3", 10);
	log_error(l, "http", "market.rates", "market", "t4", "HTTP 502");
	log_result(l, "market", "t5", 10);
	log_result(l, "market", "t6", 10);
	log_writer_free(&l);
	assert_int_equal(learning_aggregate(dir, util_now_ns(), &err), 0);
	cJSON *m = load(dir, "improvement-metrics.json");
	assert_int_equal(num(m, "by_agent/research_agent_2/by_kind/news/tasks"), 3);
	assert_int_equal(num(m, "by_agent/research_agent_2/by_kind/news/errors"), 3);
	assert_int_equal(num(m, "by_agent/research_agent_2/by_kind/news/failed_tasks"), 2);
	assert_true(fabs(num(m, "by_agent/research_agent_2/by_kind/news/error_rate") - 0.6667) < 1e-9);
	assert_int_equal(num(m, "by_agent/research_agent_2/by_kind/market/errors"), 1);
	const cJSON *recs = at(m, "recommendations");
	assert_int_equal(cJSON_GetArraySize(recs), 1);
	assert_string_equal(str(cJSON_GetArrayItem(recs, 0), "text"),
			    "research_agent_2 failed 2 of 3 news tasks (parse): "
			    "assign news tasks to another agent");
	cJSON_Delete(m);
	cJSON *p = load(dir, "error-patterns.json");
	assert_string_equal(str(cJSON_GetArrayItem(at(p, "patterns"), 0), "signature"),
			    "http: HTTP <n>");
	assert_int_equal(num(cJSON_GetArrayItem(at(p, "patterns"), 0), "count"), 2);
	assert_int_equal(cJSON_GetArraySize(at(p, "recurring")), 0);
	cJSON_Delete(p);
	util_rm_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_aggregate),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_thresholds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
