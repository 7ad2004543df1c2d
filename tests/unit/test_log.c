/* Structured logs: line shape, paths, redaction of secrets, concurrent
 * appends, field renaming, retention. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/config.h"
#include "core/log.h"
#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

#define NS INT64_C(1000000000)
#define DAY (86400 * NS)

static char *tmp_dir(void)
{
	char *d = xstrdup("/tmp/madf-test-log-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static char *today_path(const char *dir, const char *agent, const char *cat)
{
	char date[16];
	util_date(util_now_ns(), date, sizeof(date));
	return xasprintf("%s/agents/%s/%s/%s.jsonl", dir, agent, cat, date);
}

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL, *err = NULL;
	if (util_read_file(path, (size_t)64 << 20, &buf, len, &err) < 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		return NULL;
	}
	return buf;
}

/* Splits text into lines, parses each strictly; returns the count. */
static size_t each_line(const char *text, void (*fn)(cJSON *j, void *ctx),
			void *ctx)
{
	size_t n = 0;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		char *err = NULL;
		cJSON *j = json_parse_strict(p, (size_t)(nl - p), &err);
		if (!j)
			fail_msg("bad line %zu: %s", n, err);
		if (fn)
			fn(j, ctx);
		cJSON_Delete(j);
		n++;
		p = nl + 1;
	}
	return n;
}

static const char *str(const cJSON *j, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(log_cat_name(LOG_ERRORS), "errors");
	assert_string_equal(log_cat_name(LOG_QUERIES), "queries");
	assert_string_equal(log_cat_name(LOG_RESULTS), "results");
	assert_string_equal(log_cat_name(LOG_DECISIONS), "decisions");
	assert_string_equal(log_cat_name(LOG_CONFLICTS), "conflicts");
	assert_string_equal(log_cat_name(LOG_RESOLUTIONS), "resolutions");
	assert_string_equal(log_cat_name(LOG_EVENTS), "events");
	assert_string_equal(log_cat_name(LOG_CAT_COUNT), "unknown");
	assert_string_equal(log_level_name(LOG_DEBUG), "debug");
	assert_string_equal(log_level_name(LOG_INFO), "info");
	assert_string_equal(log_level_name(LOG_WARN), "warn");
	assert_string_equal(log_level_name(LOG_ERROR), "error");
	assert_int_equal(log_cat_from_name("results"), LOG_RESULTS);
	assert_int_equal(log_cat_from_name("nope"), -1);
	assert_int_equal(log_retention_days(LOG_ERRORS), 90);
	assert_int_equal(log_retention_days(LOG_QUERIES), 7);
	assert_int_equal(log_retention_days(LOG_RESULTS), 30);
	assert_int_equal(log_retention_days(LOG_EVENTS), 30);
}

static void test_open_refuses(void **state)
{
	(void)state;
	struct log_writer *l = NULL;
	char *err = NULL;
	assert_int_equal(log_writer_open("/tmp", "../etc", &l, &err), -1);
	assert_null(l);
	assert_non_null(err);
	free(err);
	err = NULL;
	assert_int_equal(log_writer_open("", "a", &l, &err), -1);
	free(err);
	log_write(NULL, LOG_EVENTS, LOG_INFO, "x", NULL, "nothing happens");
	log_writer_free(&l);
}

static void check_line(cJSON *j, void *ctx)
{
	int *n = ctx;
	assert_non_null(str(j, "ts"));
	int64_t ns;
	assert_int_equal(msg_parse_time(str(j, "ts"), &ns), 0);
	assert_int_equal(strlen(str(j, "ts")), strlen("2026-01-01T00:00:00.000000Z"));
	assert_string_equal(str(j, "agent"), "research_agent_1");
	if (*n == 0) {
		assert_string_equal(str(j, "level"), "info");
		assert_string_equal(str(j, "category"), "queries");
		assert_string_equal(str(j, "event"), "query");
		assert_string_equal(str(j, "message"), "fetch USD/JPY 42 rows");
		assert_string_equal(str(j, "pair"), "USDJPY");
		const cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
		assert_true(cJSON_IsNumber(rows));
		assert_int_equal(rows->valueint, 42);
		const cJSON *nest = cJSON_GetObjectItemCaseSensitive(j, "nested");
		assert_true(cJSON_IsArray(nest));
		assert_int_equal(cJSON_GetArraySize(nest), 2);
		/* a field named like a header key is renamed */
		assert_string_equal(str(j, "field_agent"), "Not An Agent");
		assert_null(str(j, "logged_by"));
		assert_string_equal(str(j, "field_ts"), "x");
	} else {
		assert_string_equal(str(j, "level"), "debug");
		assert_string_equal(str(j, "event"), "log");
		assert_string_equal(str(j, "message"), "");
	}
	(*n)++;
}

static void test_line_shape_and_path(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *l = NULL;
	assert_int_equal(log_writer_open(dir, "research_agent_1", &l, &err), 0);
	assert_string_equal(log_writer_owner(l), "research_agent_1");
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "pair", "USDJPY");
	cJSON_AddNumberToObject(f, "rows", 42);
	cJSON *arr = cJSON_AddArrayToObject(f, "nested");
	cJSON_AddItemToArray(arr, cJSON_CreateString("a"));
	cJSON_AddItemToArray(arr, cJSON_CreateObject());
	cJSON_AddStringToObject(f, "agent", "Not An Agent");
	cJSON_AddStringToObject(f, "ts", "x");
	log_write(l, LOG_QUERIES, LOG_INFO, "query", f, "fetch %s %d rows",
		  "USD/JPY", 42);
	log_write(l, LOG_QUERIES, LOG_DEBUG, NULL, NULL, NULL);
	/* fields still belong to the caller */
	assert_string_equal(cJSON_GetObjectItem(f, "pair")->valuestring, "USDJPY");
	cJSON_Delete(f);
	log_write(l, LOG_ERRORS, LOG_ERROR, "bad\x01utf8", NULL, "bytes \xff\xfe here\n");
	assert_int_equal(log_writer_dropped(l), 0);

	char *p = today_path(dir, "research_agent_1", "queries");
	size_t len;
	char *text = slurp(p, &len);
	assert_non_null(text);
	int n = 0;
	assert_int_equal(each_line(text, check_line, &n), 2);
	free(text);
	free(p);

	p = today_path(dir, "research_agent_1", "errors");
	text = slurp(p, &len);
	assert_non_null(text);
	assert_int_equal(each_line(text, NULL, NULL), 1);
	assert_non_null(strstr(text, "\"level\":\"error\""));
	assert_non_null(strstr(text, "\xef\xbf\xbd"));
	free(text);
	free(p);

	log_writer_free(&l);
	assert_null(l);
	util_rm_tree(dir);
	free(dir);
}

/* A field "agent" naming another agent makes it the subject. */
static void test_subject(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *l = NULL;
	assert_int_equal(log_writer_open(dir, "product_manager", &l, &err), 0);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "agent", "research_agent_1");
	cJSON_AddStringToObject(f, "logged_by", "someone");
	cJSON_AddStringToObject(f, "task_id", "pm_1");
	log_write(l, LOG_ERRORS, LOG_WARN, "task_failed", f, "timeout");
	cJSON_ReplaceItemInObject(f, "agent", cJSON_CreateString("product_manager"));
	log_write(l, LOG_ERRORS, LOG_WARN, "own", f, "own");
	cJSON_Delete(f);
	log_writer_free(&l);
	char *p = today_path(dir, "product_manager", "errors");
	size_t len;
	char *text = slurp(p, &len);
	assert_non_null(text);
	char *nl = strchr(text, '\n');
	cJSON *j = json_parse_strict(text, (size_t)(nl - text), &err);
	assert_non_null(j);
	assert_string_equal(str(j, "agent"), "research_agent_1");
	assert_string_equal(str(j, "logged_by"), "product_manager");
	assert_string_equal(str(j, "field_logged_by"), "someone");
	assert_string_equal(str(j, "task_id"), "pm_1");
	cJSON_Delete(j);
	j = json_parse_strict(nl + 1, strlen(nl + 1) - 1, &err);
	assert_non_null(j);
	assert_string_equal(str(j, "agent"), "product_manager");
	assert_null(str(j, "logged_by"));
	assert_null(str(j, "field_agent"));
	assert_string_equal(str(j, "field_logged_by"), "someone");
	cJSON_Delete(j);
	free(text);
	free(p);
	util_rm_tree(dir);
	free(dir);
}

static void test_redaction(void **state)
{
	(void)state;
	setenv("TEST_API_KEY", "sk-test-1234567890", 1);
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *l = NULL;
	assert_int_equal(log_writer_open(dir, "validator_agent", &l, &err), 0);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "header", "Bearer sk-test-1234567890");
	cJSON *in = cJSON_AddObjectToObject(f, "inner");
	cJSON_AddStringToObject(in, "k", "x sk-test-1234567890 y");
	cJSON_AddStringToObject(f, "sk-test-1234567890", "as a key");
	log_write(l, LOG_ERRORS, LOG_ERROR, "auth", f,
		  "request failed with key %s", "sk-test-1234567890");
	cJSON_Delete(f);
	char *p = today_path(dir, "validator_agent", "errors");
	size_t len;
	char *text = slurp(p, &len);
	assert_non_null(text);
	assert_null(strstr(text, "sk-test-1234567890"));
	assert_null(strstr(text, "1234567890"));
	assert_non_null(strstr(text, "request failed with key [redacted]"));
	assert_non_null(strstr(text, "Bearer [redacted]"));
	assert_int_equal(each_line(text, NULL, NULL), 1);
	free(text);
	free(p);
	log_writer_free(&l);
	unsetenv("TEST_API_KEY");
	util_rm_tree(dir);
	free(dir);
}

/* A secret with characters JSON escapes is redacted before encoding; one
 * that straddles JSON syntax withholds the line or drops it, never leaves
 * a broken line. */
static void test_redaction_awkward(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *l = NULL;
	assert_int_equal(log_writer_open(dir, "validator_agent", &l, &err), 0);
	setenv("TEST_SECRET", "pa\"ss\"wo/rd", 1);
	log_write(l, LOG_EVENTS, LOG_INFO, "e", NULL, "pw=%s", "pa\"ss\"wo/rd");
	unsetenv("TEST_SECRET");
	setenv("TEST_PASSWORD", "\":\"debug", 1);
	log_write(l, LOG_EVENTS, LOG_DEBUG, "e", NULL, "plain");
	log_write(l, LOG_EVENTS, LOG_INFO, "e", NULL, "plain info");
	unsetenv("TEST_PASSWORD");
	char *p = today_path(dir, "validator_agent", "events");
	size_t len;
	char *text = slurp(p, &len);
	assert_non_null(text);
	assert_null(strstr(text, "ss\\\"wo"));
	assert_non_null(strstr(text, "pw=[redacted]"));
	/* the debug line could not be written without the secret */
	assert_int_equal(each_line(text, NULL, NULL), 2);
	assert_int_equal(log_writer_dropped(l), 1);
	free(text);
	free(p);
	log_writer_free(&l);
	util_rm_tree(dir);
	free(dir);
}

#define THREADS 4
#define PER_THREAD 1000

struct worker {
	struct log_writer *l;
	int id;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "thread", w->id);
		cJSON_AddNumberToObject(f, "i", i);
		log_write(w->l, LOG_EVENTS, LOG_INFO, "tick", f,
			  "thread %d line %d with some padding to make lines "
			  "longer than a few bytes ..............................",
			  w->id, i);
		cJSON_Delete(f);
	}
	return NULL;
}

static void count_thread(cJSON *j, void *ctx)
{
	int *seen = ctx;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "thread");
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(j, "i");
	assert_true(cJSON_IsNumber(t) && cJSON_IsNumber(i));
	assert_true(t->valueint >= 0 && t->valueint < THREADS);
	assert_true(i->valueint >= 0 && i->valueint < PER_THREAD);
	seen[t->valueint * PER_THREAD + i->valueint]++;
}

static void test_concurrent(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *l = NULL;
	assert_int_equal(log_writer_open(dir, "product_manager", &l, &err), 0);
	pthread_t th[THREADS];
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i].l = l;
		w[i].id = i;
		assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(log_writer_dropped(l), 0);
	log_writer_free(&l);

	char *p = today_path(dir, "product_manager", "events");
	size_t len;
	char *text = slurp(p, &len);
	assert_non_null(text);
	int *seen = xcalloc(THREADS * PER_THREAD, sizeof(int));
	assert_int_equal(each_line(text, count_thread, seen), THREADS * PER_THREAD);
	for (int i = 0; i < THREADS * PER_THREAD; i++)
		assert_int_equal(seen[i], 1);
	free(seen);
	free(text);
	free(p);
	util_rm_tree(dir);
	free(dir);
}

static void test_two_handles_one_file(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	struct log_writer *a = NULL, *b = NULL;
	assert_int_equal(log_writer_open(dir, "news", &a, &err), 0);
	assert_int_equal(log_writer_open(dir, "news", &b, &err), 0);
	for (int i = 0; i < 50; i++) {
		log_write(a, LOG_RESULTS, LOG_INFO, "r", NULL, "a %d", i);
		log_write(b, LOG_RESULTS, LOG_INFO, "r", NULL, "b %d", i);
	}
	/* the file removed under an open handle is recreated */
	char *p = today_path(dir, "news", "results");
	assert_int_equal(unlink(p), 0);
	log_write(a, LOG_RESULTS, LOG_INFO, "r", NULL, "after unlink");
	size_t len;
	char *text = slurp(p, &len);
	assert_non_null(text);
	assert_int_equal(each_line(text, NULL, NULL), 1);
	assert_non_null(strstr(text, "after unlink"));
	free(text);
	free(p);
	log_writer_free(&a);
	log_writer_free(&b);
	util_rm_tree(dir);
	free(dir);
}

static void touch(const char *path)
{
	char *err = NULL;
	char *d = xstrdup(path);
	*strrchr(d, '/') = '\0';
	assert_int_equal(util_mkdirs(d, &err), 0);
	free(d);
	assert_int_equal(util_write_file_atomic(path, "{}\n", 3, false, &err), 0);
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

struct seen {
	int n;
	char what[256];
};

static void on_report(void *ctx, const char *what, const char *path)
{
	struct seen *s = ctx;
	assert_non_null(path);
	s->n++;
	util_strlcpy(s->what, what, sizeof(s->what));
}

static void test_gc(void **state)
{
	(void)state;
	char *dir = tmp_dir(), *err = NULL;
	/* now: 2026-03-31 12:00 UTC */
	int64_t now = INT64_C(1774958400) * NS;
	char today[16];
	util_date(now, today, sizeof(today));
	assert_string_equal(today, "2026-03-31");
	const char *files[] = {
		"agents/a/errors/2025-12-30.jsonl",   /* 91 days: removed */
		"agents/a/errors/2025-12-31.jsonl",   /* 90 days: kept */
		"agents/a/queries/2026-03-23.jsonl",  /* 8 days: removed */
		"agents/a/queries/2026-03-24.jsonl",  /* 7 days: kept */
		"agents/b/results/2026-02-28.jsonl",  /* 31 days: removed */
		"agents/b/results/2026-03-31.jsonl",  /* today: kept */
		"agents/b/events/2020-01-01.jsonl",   /* removed */
		"agents/b/decisions/2026-03-01.jsonl", /* 30 days: kept */
		"agents/b/events/notes.txt",          /* not dated: kept */
		"agents/b/events/2020-02-30.jsonl",   /* not a date: kept */
		"agents/b/other/2020-01-01.jsonl",    /* unknown category: kept */
	};
	const bool removed[] = { true,  false, true,  false, true, false,
				 true,	false, false, false, false };
	char *paths[ARRAY_SIZE(files)];
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		paths[i] = xasprintf("%s/%s", dir, files[i]);
		touch(paths[i]);
	}
	struct seen s = { 0 };
	assert_int_equal(log_gc(dir, now, true, on_report, &s, &err), 0);
	assert_int_equal(s.n, 4);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		assert_true(exists(paths[i]));

	memset(&s, 0, sizeof(s));
	assert_int_equal(log_gc(dir, now, false, on_report, &s, &err), 0);
	assert_int_equal(s.n, 4);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		if (exists(paths[i]) == removed[i])
			fail_msg("%s: expected %s", files[i],
				 removed[i] ? "removed" : "kept");
		free(paths[i]);
	}
	assert_int_equal(log_gc(dir, now, false, NULL, NULL, &err), 0);
	/* no agents directory at all */
	char *none = xasprintf("%s/none", dir);
	assert_int_equal(log_gc(none, now, false, NULL, NULL, &err), 0);
	free(none);
	util_rm_tree(dir);
	free(dir);
}

/* The log directory follows the data directory when neither --log-dir
 * nor LOG_DIR names one: the logs/ beside it (DESIGN.md's layout). */
static void test_log_dir_follows_data_dir(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "data", "logs" },
		{ "data/", "logs" },
		{ "/srv/bus-a/data", "/srv/bus-a/logs" },
		{ "/srv/bus-a/mydata//", "/srv/bus-a/logs" },
		{ "../other/data", "../other/logs" },
		{ "/data", "/logs" },
		{ ".", "./logs" },
		{ "x/..", "x/../logs" },
		{ "/", "/logs" },
	};
	char *saved = getenv("LOG_DIR") ? xstrdup(getenv("LOG_DIR")) : NULL;
	unsetenv("LOG_DIR");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = config_log_dir(NULL, cases[i][0]);
		if (strcmp(got, cases[i][1]))
			fail_msg("data dir \"%s\": log dir \"%s\", expected \"%s\"", cases[i][0], got,
				 cases[i][1]);
		free(got);
	}
	char *got = config_log_dir("", NULL);
	assert_string_equal(got, "logs");
	free(got);
	/* LOG_DIR, then --log-dir, win over the data directory */
	setenv("LOG_DIR", "/var/log/madf", 1);
	got = config_log_dir(NULL, "/srv/bus-a/data");
	assert_string_equal(got, "/var/log/madf");
	free(got);
	got = config_log_dir("here", "/srv/bus-a/data");
	assert_string_equal(got, "here");
	free(got);
	if (saved)
		setenv("LOG_DIR", saved, 1);
	else
		unsetenv("LOG_DIR");
	free(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_open_refuses),
		cmocka_unit_test(test_line_shape_and_path),
		cmocka_unit_test(test_subject),
		cmocka_unit_test(test_redaction),
		cmocka_unit_test(test_redaction_awkward),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_two_handles_one_file),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_log_dir_follows_data_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
