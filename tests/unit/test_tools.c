/* Tool registry: registration, calls and their counters, the cache,
 * unknown tools, errors (redacted), usage lines, registry, essential
 * tools, usage totals across saves, concurrency. */
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
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/cache.h"
#include "core/message.h"
#include "core/tools.h"
#include "core/util.h"

#include "core/banned.h"

struct fixture {
	char *dir, *data, *logs;
	struct cache *cache;
	struct tools *t;
};

struct counter {
	pthread_mutex_t mu;
	int n;
	int sleep_ms;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	f->dir = xstrdup("/tmp/madf-test-tools-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->data = xasprintf("%s/data", f->dir);
	f->logs = xasprintf("%s/logs", f->dir);
	char *err = NULL;
	if (cache_open(f->data, &f->cache, &err) < 0 ||
	    tools_open(f->data, f->logs, f->cache, &f->t, &err) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tools_free(&f->t);
	cache_free(&f->cache);
	util_rm_tree(f->dir);
	free(f->dir);
	free(f->data);
	free(f->logs);
	free(f);
	return 0;
}

static int echo_fn(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)err;
	struct counter *c = ctx;
	if (c) {
		pthread_mutex_lock(&c->mu);
		c->n++;
		pthread_mutex_unlock(&c->mu);
		if (c->sleep_ms) {
			struct timespec ts = { 0, (long)c->sleep_ms * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "args", cJSON_Duplicate(args, true));
	return 0;
}

static int fail_fn(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	(void)args;
	(void)result;
	return err_set(err, "upstream refused key %s", getenv("TEST_API_KEY"));
}

static int nothing_fn(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	(void)args;
	(void)result;
	(void)err;
	return 0;
}

static int other_fn(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	(void)args;
	(void)err;
	*result = cJSON_CreateString("other");
	return 0;
}

static void reg(struct tools *t, const char *name, const char *source,
		tool_fn fn, void *ctx)
{
	struct tool_def d = {
		.name = name,
		.description = "a test tool",
		.input_schema = "{\"type\":\"object\",\"properties\":{\"pair\":{\"type\":\"string\"}}}",
		.cache_source = source,
		.kind = "builtin",
		.fn = fn,
	};
	char *err = NULL;
	if (tools_register(t, &d, ctx, &err) < 0)
		fail_msg("register %s: %s", name, err);
}

static cJSON *load(const char *path)
{
	char *buf = NULL, *err = NULL;
	size_t n;
	if (util_read_file(path, 1 << 24, &buf, &n, &err) < 0)
		fail_msg("%s", err);
	cJSON *j = json_parse_strict(buf, n, &err);
	if (!j)
		fail_msg("%s: %s", path, err);
	free(buf);
	return j;
}

static const cJSON *get(const cJSON *j, const char *path)
{
	char *p = xstrdup(path), *save = NULL;
	for (char *k = strtok_r(p, "/", &save); k && j; k = strtok_r(NULL, "/", &save))
		j = cJSON_GetObjectItemCaseSensitive(j, k);
	free(p);
	return j;
}

static double num(const cJSON *j, const char *path)
{
	const cJSON *v = get(j, path);
	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}

static void test_register(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	struct tool_def d = { .name = "Bad Name", .fn = echo_fn };
	assert_int_equal(tools_register(f->t, &d, NULL, &err), -1);
	free(err);
	err = NULL;
	d.name = "";
	assert_int_equal(tools_register(f->t, &d, NULL, &err), -1);
	free(err);
	err = NULL;
	d.name = "ok.name-1_x";
	d.fn = NULL;
	assert_int_equal(tools_register(f->t, &d, NULL, &err), -1);
	free(err);
	err = NULL;
	d.fn = echo_fn;
	d.input_schema = "[1]";
	assert_int_equal(tools_register(f->t, &d, NULL, &err), -1);
	free(err);
	err = NULL;
	d.input_schema = "{\"a\":1,\"a\":2}";
	assert_int_equal(tools_register(f->t, &d, NULL, &err), -1);
	free(err);
	err = NULL;
	d.input_schema = NULL;
	d.cache_source = "../x";
	assert_int_equal(tools_register(f->t, &d, NULL, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(tools_count(f->t), 0);
	d.cache_source = NULL;
	assert_int_equal(tools_register(f->t, &d, NULL, &err), 0);
	reg(f->t, "second", NULL, echo_fn, NULL);
	assert_int_equal(tools_count(f->t), 2);
	assert_string_equal(tools_name(f->t, 0), "ok.name-1_x");
	assert_string_equal(tools_name(f->t, 1), "second");
	assert_null(tools_name(f->t, 2));
	/* replacing keeps the slot */
	reg(f->t, "ok.name-1_x", NULL, other_fn, NULL);
	assert_int_equal(tools_count(f->t), 2);
	cJSON *res = NULL;
	assert_int_equal(tools_call(f->t, "tester", "ok.name-1_x", NULL, &res, &err), 0);
	assert_string_equal(res->valuestring, "other");
	cJSON_Delete(res);
}

static void test_calls_and_counters(void **state)
{
	struct fixture *f = *state;
	setenv("TEST_API_KEY", "sk-test-1234567890", 1);
	struct counter c = { PTHREAD_MUTEX_INITIALIZER, 0, 2 };
	reg(f->t, "market.rates", NULL, echo_fn, &c);
	reg(f->t, "market.fail", NULL, fail_fn, NULL);
	reg(f->t, "market.nothing", NULL, nothing_fn, NULL);
	char *err = NULL;
	cJSON *res = NULL;
	cJSON *args = cJSON_Parse("{\"pair\":\"USDJPY\"}");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tools_call(f->t, "research_agent_1", "market.rates",
					    args, &res, &err), 0);
		assert_string_equal(get(res, "args/pair")->valuestring, "USDJPY");
		cJSON_Delete(res);
	}
	assert_int_equal(tools_call(f->t, "research_agent_2", "market.rates", NULL,
				    &res, &err), 0);
	assert_true(cJSON_IsObject(get(res, "args")));
	cJSON_Delete(res);
	assert_int_equal(c.n, 4);

	assert_int_equal(tools_call(f->t, "research_agent_1", "market.fail", args,
				    &res, &err), -1);
	assert_null(res);
	assert_string_equal(err, "market.fail: upstream refused key [redacted]");
	free(err);
	err = NULL;
	assert_int_equal(tools_call(f->t, "research_agent_1", "market.nothing", args,
				    &res, &err), -1);
	assert_string_equal(err, "market.nothing: returned no result");
	free(err);
	err = NULL;
	assert_int_equal(tools_call(f->t, "research_agent_1", "nope", args, &res, &err), -1);
	assert_string_equal(err, "unknown tool nope");
	free(err);
	err = NULL;
	assert_int_equal(tools_call(f->t, "Bad Agent", "market.rates", args, &res, &err), -1);
	free(err);
	err = NULL;
	cJSON_Delete(args);

	unsetenv("TEST_API_KEY");

	cJSON *u = tools_usage(f->t);
	assert_int_equal(num(u, "tools/market.rates/calls"), 4);
	assert_int_equal(num(u, "tools/market.rates/errors"), 0);
	assert_int_equal(num(u, "tools/market.rates/cache_hits"), 0);
	assert_int_equal(num(u, "tools/market.rates/by_agent/research_agent_1"), 3);
	assert_int_equal(num(u, "tools/market.rates/by_agent/research_agent_2"), 1);
	double p50 = num(u, "tools/market.rates/latency_p50_ms");
	double p95 = num(u, "tools/market.rates/latency_p95_ms");
	assert_true(p50 >= 2.0);
	assert_true(p95 >= p50);
	assert_int_equal(num(u, "tools/market.fail/calls"), 1);
	assert_int_equal(num(u, "tools/market.fail/errors"), 1);
	assert_int_equal(num(u, "tools/market.nothing/errors"), 1);
	assert_null(get(u, "tools/nope"));
	cJSON_Delete(u);

	/* usage lines: 7 calls (the bad agent name is refused before) */
	char date[16];
	util_date(util_now_ns(), date, sizeof(date));
	char *path = xasprintf("%s/tools/usage-%s.jsonl", f->logs, date);
	char *text = NULL;
	size_t len;
	assert_int_equal(util_read_file(path, 1 << 20, &text, &len, &err), 0);
	assert_null(strstr(text, "1234567890"));
	int lines = 0, oks = 0;
	for (char *p = text, *nl; (nl = strchr(p, '\n')); p = nl + 1, lines++) {
		cJSON *j = json_parse_strict(p, (size_t)(nl - p), &err);
		assert_non_null(j);
		const char *keys[] = { "ts", "agent", "tool", "latency_ms",
				       "cache_hit", "ok", "error" };
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
			assert_non_null(cJSON_GetObjectItemCaseSensitive(j, keys[k]));
		assert_int_equal(cJSON_GetArraySize(j), 7);
		bool ok = cJSON_IsTrue(get(j, "ok"));
		oks += ok;
		assert_true(ok ? cJSON_IsNull(get(j, "error"))
			       : cJSON_IsString(get(j, "error")));
		if (!strcmp(get(j, "tool")->valuestring, "nope"))
			assert_string_equal(get(j, "error")->valuestring, "unknown tool nope");
		if (!strcmp(get(j, "tool")->valuestring, "market.fail"))
			assert_string_equal(get(j, "error")->valuestring,
					    "upstream refused key [redacted]");
		cJSON_Delete(j);
	}
	assert_int_equal(lines, 7);
	assert_int_equal(oks, 4);
	free(text);
	free(path);
}

static void test_cache_hit(void **state)
{
	struct fixture *f = *state;
	struct counter c = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };
	reg(f->t, "news.search", "news", echo_fn, &c);
	char *err = NULL;
	cJSON *a1 = cJSON_Parse("{\"q\":\"yen\",\"opts\":{\"b\":2,\"a\":1},\"n\":5}");
	cJSON *a2 = cJSON_Parse("{\"n\":5,\"opts\":{\"a\":1,\"b\":2},\"q\":\"yen\"}");
	cJSON *r1 = NULL, *r2 = NULL, *r3 = NULL;
	assert_int_equal(tools_call(f->t, "research_agent_2", "news.search", a1, &r1, &err), 0);
	assert_int_equal(tools_call(f->t, "research_agent_2", "news.search", a2, &r2, &err), 0);
	assert_int_equal(c.n, 1);
	assert_true(cJSON_Compare(r1, r2, true));
	assert_true(r1 != r2);
	cJSON_Delete(r1);
	cJSON_Delete(r2);
	/* other arguments: another entry */
	cJSON_ReplaceItemInObject(a2, "n", cJSON_CreateNumber(6));
	assert_int_equal(tools_call(f->t, "research_agent_2", "news.search", a2, &r3, &err), 0);
	assert_int_equal(c.n, 2);
	cJSON_Delete(r3);
	cJSON *u = tools_usage(f->t);
	assert_int_equal(num(u, "tools/news.search/calls"), 3);
	assert_int_equal(num(u, "tools/news.search/cache_hits"), 1);
	cJSON_Delete(u);
	assert_int_equal(cache_hits(f->cache), 1);

	/* without a cache nothing is cached */
	struct tools *t2 = NULL;
	assert_int_equal(tools_open(f->data, NULL, NULL, &t2, &err), 0);
	reg(t2, "news.search", "news", echo_fn, &c);
	assert_int_equal(tools_call(t2, "a", "news.search", a1, &r1, &err), 0);
	assert_int_equal(tools_call(t2, "a", "news.search", a1, &r2, &err), 0);
	assert_int_equal(c.n, 4);
	cJSON_Delete(r1);
	cJSON_Delete(r2);
	tools_free(&t2);
	assert_null(t2);
	cJSON_Delete(a1);
	cJSON_Delete(a2);
}

static void test_canonical(void **state)
{
	(void)state;
	cJSON *j = cJSON_Parse("{\"b\":[{\"z\":1,\"y\":null}],\"a\":\"x\\u00e9\",\"c\":true}");
	char *s = tools_canonical_json(j);
	assert_string_equal(s, "{\"a\":\"x\xc3\xa9\",\"b\":[{\"y\":null,\"z\":1}],\"c\":true}");
	free(s);
	cJSON_Delete(j);
	j = cJSON_CreateNumber(1.5);
	s = tools_canonical_json(j);
	assert_string_equal(s, "1.5");
	free(s);
	cJSON_Delete(j);
}

static void test_files(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	reg(f->t, "market.rates", "market", echo_fn, NULL);
	reg(f->t, "analytics.corr", NULL, echo_fn, NULL);
	assert_int_equal(tools_write_registry(f->t, &err), 0);
	char *p = xasprintf("%s/tools/tool-registry.json", f->data);
	cJSON *j = load(p);
	free(p);
	const cJSON *arr = get(j, "tools");
	assert_true(cJSON_IsArray(arr));
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	const cJSON *first = cJSON_GetArrayItem(arr, 0);
	assert_string_equal(get(first, "name")->valuestring, "analytics.corr");
	assert_true(cJSON_IsNull(get(first, "cache_source")));
	const cJSON *second = cJSON_GetArrayItem(arr, 1);
	assert_string_equal(get(second, "cache_source")->valuestring, "market");
	assert_string_equal(get(second, "kind")->valuestring, "builtin");
	assert_string_equal(get(second, "description")->valuestring, "a test tool");
	assert_string_equal(get(second, "input_schema/type")->valuestring, "object");
	assert_true(cJSON_IsObject(get(second, "input_schema/properties/pair")));
	cJSON_Delete(j);

	const char *names[] = { "market.rates", "analytics.corr", "market.rates" };
	assert_int_equal(tools_set_essential(f->t, "research_agent_1", names, 3, &err), 0);
	p = xasprintf("%s/tools/research_agent_1/essential-tools.json", f->data);
	j = load(p);
	free(p);
	assert_string_equal(get(j, "agent")->valuestring, "research_agent_1");
	arr = get(j, "tools");
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	assert_string_equal(cJSON_GetArrayItem(arr, 0)->valuestring, "market.rates");
	assert_string_equal(cJSON_GetArrayItem(arr, 1)->valuestring, "analytics.corr");
	cJSON_Delete(j);
	assert_int_equal(tools_set_essential(f->t, "../x", names, 3, &err), -1);
	free(err);
	err = NULL;
	const char *bad[] = { "BAD" };
	assert_int_equal(tools_set_essential(f->t, "a", bad, 1, &err), -1);
	free(err);
	err = NULL;

	/* usage totals across saves and across registries (runs) */
	cJSON *res = NULL;
	cJSON *args = cJSON_CreateObject();
	for (int i = 0; i < 3; i++) {
		cJSON_AddItemToObject(args, i == 0 ? "a" : i == 1 ? "b" : "c",
				      cJSON_CreateNumber(i));
		assert_int_equal(tools_call(f->t, "pm", "market.rates", args, &res, &err), 0);
		cJSON_Delete(res);
	}
	assert_int_equal(tools_call(f->t, "pm", "market.rates", args, &res, &err), 0);
	cJSON_Delete(res);
	assert_int_equal(tools_save_usage(f->t, &err), 0);
	assert_int_equal(tools_save_usage(f->t, &err), 0); /* nothing new */
	assert_int_equal(tools_call(f->t, "validator", "analytics.corr", args, &res, &err), 0);
	cJSON_Delete(res);
	assert_int_equal(tools_save_usage(f->t, &err), 0);

	struct tools *t2 = NULL;
	assert_int_equal(tools_open(f->data, f->logs, f->cache, &t2, &err), 0);
	reg(t2, "market.rates", "market", echo_fn, NULL);
	assert_int_equal(tools_call(t2, "pm", "market.rates", args, &res, &err), 0);
	cJSON_Delete(res);
	assert_int_equal(tools_save_usage(t2, &err), 0);
	tools_free(&t2);
	cJSON_Delete(args);

	p = xasprintf("%s/tools/usage.json", f->data);
	j = load(p);
	assert_true(cJSON_IsString(get(j, "updated_at")));
	assert_int_equal(num(j, "tools/market.rates/calls"), 5);
	assert_int_equal(num(j, "tools/market.rates/cache_hits"), 2);
	assert_int_equal(num(j, "tools/market.rates/errors"), 0);
	assert_int_equal(num(j, "tools/market.rates/by_agent/pm"), 5);
	assert_int_equal(cJSON_GetArraySize(get(j, "tools/market.rates/samples")), 5);
	assert_true(num(j, "tools/market.rates/latency_p95_ms") >=
		    num(j, "tools/market.rates/latency_p50_ms"));
	assert_int_equal(num(j, "tools/analytics.corr/calls"), 1);
	assert_int_equal(num(j, "tools/analytics.corr/by_agent/validator"), 1);
	cJSON_Delete(j);

	/* a corrupt file is reported and left alone */
	assert_int_equal(util_write_file_atomic(p, "{oops", 5, false, &err), 0);
	assert_int_equal(tools_save_usage(f->t, &err), -1);
	assert_non_null(strstr(err, "corrupt"));
	free(err);
	free(p);
}

static void test_reservoir(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	reg(f->t, "fast", NULL, echo_fn, NULL);
	cJSON *res = NULL;
	for (int i = 0; i < 700; i++) {
		assert_int_equal(tools_call(f->t, "a", "fast", NULL, &res, &err), 0);
		cJSON_Delete(res);
	}
	assert_int_equal(tools_save_usage(f->t, &err), 0);
	for (int i = 0; i < 700; i++) {
		assert_int_equal(tools_call(f->t, "b", "fast", NULL, &res, &err), 0);
		cJSON_Delete(res);
	}
	assert_int_equal(tools_save_usage(f->t, &err), 0);
	char *p = xasprintf("%s/tools/usage.json", f->data);
	cJSON *j = load(p);
	free(p);
	assert_int_equal(num(j, "tools/fast/calls"), 1400);
	assert_int_equal(cJSON_GetArraySize(get(j, "tools/fast/samples")), TOOLS_RESERVOIR);
	assert_int_equal(num(j, "tools/fast/by_agent/a"), 700);
	assert_int_equal(num(j, "tools/fast/by_agent/b"), 700);
	cJSON_Delete(j);
}

#define THREADS 4
#define CALLS 100

struct worker {
	struct tools *t;
	int id;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	char agent[16];
	snprintf(agent, sizeof(agent), "agent%d", w->id);
	for (int i = 0; i < CALLS; i++) {
		cJSON *args = cJSON_CreateObject();
		cJSON_AddNumberToObject(args, "i", i % 7);
		cJSON *res = NULL;
		char *err = NULL;
		if (tools_call(w->t, agent, i % 2 ? "cached" : "plain", args, &res, &err) < 0)
			fail_msg("call: %s", err);
		cJSON_Delete(res);
		cJSON_Delete(args);
		if (i % 25 == 0 && tools_save_usage(w->t, &err) < 0)
			fail_msg("save: %s", err);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct fixture *f = *state;
	struct counter c = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };
	reg(f->t, "plain", NULL, echo_fn, &c);
	reg(f->t, "cached", "validation", echo_fn, &c);
	pthread_t th[THREADS];
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ f->t, i };
		assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	char *err = NULL;
	assert_int_equal(tools_save_usage(f->t, &err), 0);
	cJSON *u = tools_usage(f->t);
	assert_int_equal(num(u, "tools/plain/calls"), THREADS * CALLS / 2);
	assert_int_equal(num(u, "tools/cached/calls"), THREADS * CALLS / 2);
	double hits = num(u, "tools/cached/cache_hits");
	/* 7 distinct argument sets; a few threads may miss at once */
	assert_true(hits >= THREADS * CALLS / 2 - 7 * THREADS);
	assert_int_equal(c.n, THREADS * CALLS / 2 + (THREADS * CALLS / 2 - (int)hits));
	cJSON_Delete(u);
	char *p = xasprintf("%s/tools/usage.json", f->data);
	cJSON *j = load(p);
	free(p);
	assert_int_equal(num(j, "tools/plain/calls"), THREADS * CALLS / 2);
	assert_int_equal(num(j, "tools/cached/calls"), THREADS * CALLS / 2);
	assert_int_equal(num(j, "tools/cached/cache_hits"), hits);
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_register, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls_and_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_hit, setup, teardown),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test_setup_teardown(test_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reservoir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
