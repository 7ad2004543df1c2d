/* Response cache: round trips of JSON, text and bytes, TTLs, source
 * names, collisions, yesterday's directory, garbage collection,
 * concurrent use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/cache.h"
#include "core/message.h"
#include "core/util.h"

#include "core/banned.h"

#define NS INT64_C(1000000000)
#define DAY (86400 * NS)

struct fixture {
	char *dir;
	struct cache *c;
};

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	f->dir = xstrdup("/tmp/madf-test-cache-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	char *err = NULL;
	if (cache_open(f->dir, &f->c, &err) < 0)
		return -1;
	unsetenv("CACHE_TTL_SECONDS");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	cache_free(&f->c);
	util_rm_tree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void put(struct cache *c, const char *src, const char *key,
		const char *val, int64_t at)
{
	char *err = NULL;
	if (cache_put_at(c, src, key, val, strlen(val), at, &err) < 0)
		fail_msg("put: %s", err);
}

static void test_ttl(void **state)
{
	(void)state;
	assert_int_equal(cache_ttl_for("yahoo-finance"), 300);
	assert_int_equal(cache_ttl_for("google-news"), 900);
	assert_int_equal(cache_ttl_for("reuters"), 600);
	assert_int_equal(cache_ttl_for("market"), 300);
	assert_int_equal(cache_ttl_for("news"), 900);
	assert_int_equal(cache_ttl_for("validation"), 600);
	assert_int_equal(cache_ttl_for("other"), 300);
	setenv("CACHE_TTL_SECONDS", "42", 1);
	assert_int_equal(cache_ttl_for("other"), 42);
	assert_int_equal(cache_ttl_for("news"), 900);
	setenv("CACHE_TTL_SECONDS", "-5", 1);
	assert_int_equal(cache_ttl_for("other"), 300);
	setenv("CACHE_TTL_SECONDS", "12x", 1);
	assert_int_equal(cache_ttl_for("other"), 300);
	unsetenv("CACHE_TTL_SECONDS");
}

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	char *err = NULL, *val = NULL;
	size_t len = 99;
	const char *json = "{\"pair\":\"USDJPY\",\"rates\":[151.2,150.8]}";
	assert_int_equal(cache_put(f->c, "market", "rates USDJPY", json,
				   strlen(json), &err), 0);
	assert_int_equal(cache_get(f->c, "market", "rates USDJPY", -1, &val, &len), 1);
	assert_string_equal(val, json);
	assert_int_equal(len, strlen(json));
	free(val);

	/* the file has the documented shape, value kept as JSON */
	char *p = cache_entry_path(f->c, "market", "rates USDJPY", util_now_ns());
	char *buf = NULL;
	size_t n;
	assert_int_equal(util_read_file(p, 1 << 20, &buf, &n, &err), 0);
	cJSON *doc = json_parse_strict(buf, n, &err);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(doc, "key")->valuestring, "rates USDJPY");
	int64_t at;
	assert_int_equal(msg_parse_time(cJSON_GetObjectItem(doc, "stored_at")->valuestring, &at), 0);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(doc, "stored_ns")));
	assert_true(cJSON_IsObject(cJSON_GetObjectItem(doc, "value")));
	assert_non_null(strstr(p, "/cache/market/"));
	char hex[32];
	snprintf(hex, sizeof(hex), "/%016llx.json",
		 (unsigned long long)cache_key_hash("rates USDJPY"));
	assert_non_null(strstr(p, hex));
	cJSON_Delete(doc);
	free(buf);
	free(p);

	/* text that is not JSON, and a JSON string literal, come back as given */
	const char *texts[] = { "plain text, not JSON", "\"quoted\"", "",
				"{\"a\":1, \"a\":2}", "  [1, 2]" };
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		char key[16];
		snprintf(key, sizeof(key), "t%zu", i);
		put(f->c, "news", key, texts[i], util_now_ns());
		assert_int_equal(cache_get(f->c, "news", key, -1, &val, &len), 1);
		if (i == 4)
			assert_string_equal(val, "[1,2]"); /* compact JSON */
		else
			assert_string_equal(val, texts[i]);
		free(val);
	}

	/* bytes with a NUL and invalid UTF-8 */
	const char bytes[] = { 'a', 0, '\xff', 'b', '\xc3' };
	assert_int_equal(cache_put(f->c, "news", "bin", bytes, sizeof(bytes), &err), 0);
	assert_int_equal(cache_get(f->c, "news", "bin", -1, &val, &len), 1);
	assert_int_equal(len, sizeof(bytes));
	assert_memory_equal(val, bytes, sizeof(bytes));
	assert_int_equal(val[len], '\0');
	free(val);

	/* absent */
	assert_int_equal(cache_get(f->c, "news", "nothing", -1, &val, &len), 0);
	assert_null(val);
	assert_int_equal(cache_hits(f->c), 7);
	assert_int_equal(cache_misses(f->c), 1);

	/* replace */
	put(f->c, "news", "t0", "second", util_now_ns());
	assert_int_equal(cache_get(f->c, "news", "t0", -1, &val, NULL), 1);
	assert_string_equal(val, "second");
	free(val);
}

static void test_stale(void **state)
{
	struct fixture *f = *state;
	char *val = NULL;
	size_t len;
	int64_t now = util_now_ns();
	put(f->c, "market", "k", "1", now - 299 * NS);
	assert_int_equal(cache_get_at(f->c, "market", "k", -1, now, &val, &len), 1);
	free(val);
	/* ttl_s 0: always stale */
	assert_int_equal(cache_get_at(f->c, "market", "k", 0, now, &val, &len), 0);
	assert_int_equal(cache_get_at(f->c, "market", "k", -1, now + 2 * NS, &val, &len), 0);
	assert_null(val);
	assert_int_equal(cache_get_at(f->c, "market", "k", 1000, now + 2 * NS, &val, &len), 1);
	free(val);

	/* written in the past: news lives 900 s */
	put(f->c, "news", "old", "x", now - 901 * NS);
	assert_int_equal(cache_get(f->c, "news", "old", -1, &val, &len), 0);
	put(f->c, "news", "old", "x", now - 899 * NS);
	assert_int_equal(cache_get(f->c, "news", "old", -1, &val, &len), 1);
	free(val);

	/* an entry written just before midnight is found just after it */
	int64_t midnight = (now / DAY) * DAY;
	put(f->c, "reuters", "late", "y", midnight - 10 * NS);
	assert_int_equal(cache_get_at(f->c, "reuters", "late", -1, midnight + 10 * NS,
				      &val, &len), 1);
	assert_string_equal(val, "y");
	free(val);
	assert_int_equal(cache_get_at(f->c, "reuters", "late", 100000,
				      midnight + DAY + 10 * NS, &val, &len), 0);
}

/* Falling back on stale data: the newest entry whatever its TTL, with the
 * time it was stored, within the age asked for, from older date dirs. */
static void test_stale_fallback(void **state)
{
	struct fixture *f = *state;
	char *val = NULL;
	size_t len;
	int64_t now = util_now_ns(), stored = 0;
	assert_int_equal(cache_get_stale_at(f->c, "ecb", "u", 86400, now, &val, &len,
					    &stored), 0);
	assert_null(val);
	put(f->c, "ecb", "u", "old", now - 3 * DAY);
	put(f->c, "ecb", "u", "newer", now - 2 * DAY - 5 * NS);
	/* long stale for its TTL */
	assert_int_equal(cache_get_at(f->c, "ecb", "u", 60, now, &val, &len), 0);
	size_t hits = cache_hits(f->c), misses = cache_misses(f->c);
	assert_int_equal(cache_get_stale_at(f->c, "ecb", "u", 7 * 86400, now, &val, &len,
					    &stored), 1);
	assert_string_equal(val, "newer");
	assert_int_equal(len, 5);
	free(val);
	/* stored_ns goes through a JSON number: exact to well under 1 ms */
	int64_t d = stored - (now - 2 * DAY - 5 * NS);
	assert_true(d > -1000000 && d < 1000000);
	assert_int_equal(cache_hits(f->c), hits);
	assert_int_equal(cache_misses(f->c), misses);
	/* too old for the age allowed */
	assert_int_equal(cache_get_stale_at(f->c, "ecb", "u", 86400, now, &val, &len,
					    &stored), 0);
	assert_null(val);
	/* another key, a bad source */
	assert_int_equal(cache_get_stale_at(f->c, "ecb", "v", 7 * 86400, now, &val, &len,
					    NULL), 0);
	assert_int_equal(cache_get_stale_at(f->c, "../x", "u", 7 * 86400, now, &val, &len,
					    NULL), -1);
	assert_int_equal(cache_get_stale_at(f->c, "ecb", NULL, 7 * 86400, now, &val, &len,
					    NULL), -1);
}

static void test_source_names(void **state)
{
	struct fixture *f = *state;
	char *err = NULL, *val = NULL;
	size_t len;
	const char *bad[] = { "", "../x", "Market", "-x", "a/b", ".", "a b",
			      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_false(cache_valid_source(bad[i]));
		assert_int_equal(cache_put(f->c, bad[i], "k", "v", 1, &err), -1);
		assert_non_null(err);
		free(err);
		err = NULL;
		assert_int_equal(cache_get(f->c, bad[i], "k", -1, &val, &len), -1);
		assert_null(cache_entry_path(f->c, bad[i], "k", 0));
	}
	assert_false(cache_valid_source(NULL));
	assert_true(cache_valid_source("yahoo-finance"));
	assert_true(cache_valid_source("a_b-9"));
	assert_int_equal(cache_get(f->c, "news", NULL, -1, &val, &len), -1);
	assert_int_equal(cache_put(f->c, "news", "bad \xff key", "v", 1, &err), -1);
	free(err);
	assert_int_equal(cache_hits(f->c) + cache_misses(f->c), 0);
}

static void test_collision(void **state)
{
	struct fixture *f = *state;
	char *err = NULL, *val = NULL;
	size_t len;
	int64_t now = util_now_ns();
	put(f->c, "market", "key A", "\"a\"", now);
	/* move A's file to where key B lives: same hash file, another key */
	char *pa = cache_entry_path(f->c, "market", "key A", now);
	char *pb = cache_entry_path(f->c, "market", "key B", now);
	assert_int_equal(rename(pa, pb), 0);
	assert_int_equal(cache_get(f->c, "market", "key B", -1, &val, &len), 0);
	assert_null(val);
	/* a put for B replaces the colliding entry */
	assert_int_equal(cache_put(f->c, "market", "key B", "b", 1, &err), 0);
	assert_int_equal(cache_get(f->c, "market", "key B", -1, &val, &len), 1);
	assert_string_equal(val, "b");
	free(val);
	/* a corrupt file is a miss, not an error */
	assert_int_equal(util_write_file_atomic(pa, "{not json", 9, false, &err), 0);
	assert_int_equal(cache_get(f->c, "market", "key A", -1, &val, &len), 0);
	free(pa);
	free(pb);
	assert_int_equal(cache_key_hash(""), UINT64_C(0xcbf29ce484222325));
	assert_int_equal(cache_key_hash("a"), UINT64_C(0xaf63dc4c8601ec8c));
}

struct seen {
	int entries, dirs, tmps;
};

static void on_report(void *ctx, const char *what, const char *path)
{
	struct seen *s = ctx;
	assert_non_null(path);
	if (strstr(what, "TTL"))
		s->entries++;
	else if (strstr(what, "directory"))
		s->dirs++;
	else if (strstr(what, "temporary"))
		s->tmps++;
	else
		fail_msg("unexpected report %s", what);
}

static void test_gc(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	/* noon, so that no entry below falls into another date directory */
	int64_t now = (util_now_ns() / DAY) * DAY + DAY / 2;
	struct seen s = { 0 };
	/* nothing there yet */
	assert_int_equal(cache_gc(f->c, now, false, on_report, &s, &err), 0);

	put(f->c, "market", "fresh", "1", now - 10 * NS);
	put(f->c, "market", "stale", "2", now - 400 * NS);
	put(f->c, "news", "fresh", "3", now - 800 * NS); /* news: 900 s */
	put(f->c, "news", "old", "4", now - 3 * DAY);    /* its own date dir */
	/* the live sources' entries stay for the offline fallback */
	put(f->c, "ecb", "kept", "5", now - 3 * DAY);
	put(f->c, "rss", "gone", "6", now - 31 * DAY);
	char *kept = cache_entry_path(f->c, "ecb", "kept", now - 3 * DAY);
	char *gone = cache_entry_path(f->c, "rss", "gone", now - 31 * DAY);
	char *fresh = cache_entry_path(f->c, "market", "fresh", now - 10 * NS);
	char *stale = cache_entry_path(f->c, "market", "stale", now - 400 * NS);
	char *nfresh = cache_entry_path(f->c, "news", "fresh", now - 800 * NS);
	char *old = cache_entry_path(f->c, "news", "old", now - 3 * DAY);
	char *olddir = xstrdup(old);
	*strrchr(olddir, '/') = '\0';
	char *tmp = xasprintf("%s/x.json.1234.tmp", olddir);
	assert_int_equal(util_write_file_atomic(tmp, "x", 1, false, &err), 0);
	/* mtime two hours ago */
	struct timespec ts[2] = { { (time_t)(now / NS - 7200), 0 },
				  { (time_t)(now / NS - 7200), 0 } };
	assert_int_equal(utimensat(AT_FDCWD, tmp, ts, 0), 0);

	assert_int_equal(cache_gc(f->c, now, true, on_report, &s, &err), 0);
	assert_int_equal(s.entries, 3);
	assert_int_equal(s.tmps, 1);
	assert_int_equal(s.dirs, 2);
	assert_true(exists(stale) && exists(old) && exists(tmp));

	memset(&s, 0, sizeof(s));
	assert_int_equal(cache_gc(f->c, now, false, on_report, &s, &err), 0);
	assert_int_equal(s.entries, 3);
	assert_int_equal(s.dirs, 2);
	assert_true(exists(kept));
	assert_false(exists(gone));
	assert_true(exists(fresh));
	assert_true(exists(nfresh));
	assert_false(exists(stale));
	assert_false(exists(old));
	assert_false(exists(tmp));
	assert_false(exists(olddir));
	/* the put after gc still works */
	put(f->c, "news", "old", "5", now - 3 * DAY);
	assert_true(exists(old));
	free(fresh);
	free(stale);
	free(nfresh);
	free(old);
	free(olddir);
	free(tmp);
	free(kept);
	free(gone);
}

#define THREADS 4
#define ROUNDS 200

static void *hammer(void *arg)
{
	struct cache *c = arg;
	for (int i = 0; i < ROUNDS; i++) {
		char key[32], v[32], *val = NULL, *err = NULL;
		snprintf(key, sizeof(key), "k%d", i % 10);
		snprintf(v, sizeof(v), "[%d]", i % 10);
		if (cache_put(c, "market", key, v, strlen(v), &err) < 0)
			fail_msg("put: %s", err);
		size_t len;
		if (cache_get(c, "market", key, -1, &val, &len) == 1) {
			if (strcmp(val, v))
				fail_msg("got %s for %s", val, key);
			free(val);
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct fixture *f = *state;
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, f->c), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(cache_hits(f->c), THREADS * ROUNDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttl),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
