/* madf serve's pieces without a socket: SHA-256, tokens (stored hashed,
 * 0600, refused when others can read them, checked, revoked), the agent
 * definitions file, and the request's validation with the seed's codes
 * and fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/util.h"
#include "server/serve.h"

#include "core/banned.h"

static char *tmpdir(void)
{
	char *d = xstrdup("/tmp/madf-test-serve-XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static void hex(const unsigned char *h, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

static void test_sha256(void **state)
{
	(void)state;
	unsigned char h[32];
	char x[65];
	serve_sha256("abc", 3, h);
	hex(h, x);
	assert_string_equal(x, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	serve_sha256("", 0, h);
	hex(h, x);
	assert_string_equal(x, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_tokens(void **state)
{
	(void)state;
	char *dir = tmpdir();
	char *path = serve_tokens_path(dir);
	char *err = NULL, *t1 = NULL, *t2 = NULL, *t3 = NULL;
	assert_int_equal(serve_token_add(path, "alice", &t1, &err), 0);
	assert_int_equal(serve_token_add(path, "bob", &t2, &err), 0);
	assert_int_equal(serve_token_add(path, "alice", &t3, &err), 0);
	assert_string_not_equal(t1, t3);
	assert_true(strlen(t1) > 40);

	/* Mode 0600, and the token itself is nowhere in the file. */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(util_read_file(path, 1 << 20, &buf, &len, &err), 0);
	assert_null(strstr(buf, t1));
	assert_null(strstr(buf, t1 + 5));
	unsigned char h[32];
	char x[65];
	serve_sha256(t2, strlen(t2), h);
	hex(h, x);
	assert_non_null(strstr(buf, x)); /* its hash is */
	free(buf);

	struct serve_tokens t;
	assert_int_equal(serve_tokens_load(path, &t, &err), 0);
	assert_int_equal(t.n, 3);
	const char *u = serve_tokens_check(&t, t1, strlen(t1));
	assert_non_null(u);
	assert_string_equal(u, "alice");
	u = serve_tokens_check(&t, t2, strlen(t2));
	assert_non_null(u);
	assert_string_equal(u, "bob");
	assert_null(serve_tokens_check(&t, t2, strlen(t2) - 1));
	assert_null(serve_tokens_check(&t, "madf_nope", 9));
	assert_null(serve_tokens_check(&t, "", 0));
	serve_tokens_free(&t);

	/* Revoke removes both of alice's tokens and leaves bob's. */
	size_t n = 0;
	assert_int_equal(serve_token_revoke(path, "alice", &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(serve_token_revoke(path, "alice", &n, &err), -1);
	assert_non_null(strstr(err, "no token"));
	free(err);
	err = NULL;
	assert_int_equal(serve_tokens_load(path, &t, &err), 0);
	assert_int_equal(t.n, 1);
	assert_null(serve_tokens_check(&t, t1, strlen(t1)));
	assert_non_null(serve_tokens_check(&t, t2, strlen(t2)));
	serve_tokens_free(&t);

	/* Group- or world-readable: refused, naming the file and the mode. */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(serve_tokens_load(path, &t, &err), -1);
	assert_non_null(strstr(err, "0640"));
	assert_non_null(strstr(err, path));
	free(err);
	err = NULL;
	char *t4 = NULL;
	assert_int_equal(serve_token_add(path, "carol", &t4, &err), -1);
	assert_null(t4);
	free(err);
	err = NULL;
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(serve_tokens_load(path, &t, &err), -1);
	free(err);
	err = NULL;
	assert_int_equal(chmod(path, 0600), 0);

	/* Bad user names and a malformed line. */
	char *tok = NULL;
	assert_int_equal(serve_token_add(path, "a b", &tok, &err), -1);
	assert_null(tok);
	free(err);
	err = NULL;
	assert_false(serve_user_ok(""));
	assert_false(serve_user_ok("x\ny"));
	assert_true(serve_user_ok("ops@example.com"));
	FILE *f = fopen(path, "a");
	assert_non_null(f);
	fputs("dave not-a-hash\n", f);
	fclose(f);
	assert_int_equal(serve_tokens_load(path, &t, &err), -1);
	assert_non_null(strstr(err, ":3:"));
	free(err);

	/* No file: no tokens, no error. */
	char *none = xasprintf("%s/none", dir);
	err = NULL;
	assert_int_equal(serve_tokens_load(none, &t, &err), 0);
	assert_int_equal(t.n, 0);
	free(none);
	free(t1);
	free(t2);
	free(t3);
	free(path);
	util_rm_tree(dir);
	free(dir);
}

static void test_agents_file(void **state)
{
	(void)state;
	char *dir = tmpdir();
	char *err = NULL;
	struct serve_agents a;
	/* First use writes the seed's three into the file the operator edits. */
	assert_int_equal(serve_agents_load(dir, &a, &err), 0);
	assert_int_equal(a.n, 5);
	const struct serve_agent *fx = serve_agents_find(&a, "fx-researcher");
	assert_non_null(fx);
	assert_int_equal(fx->ntools, 1);
	assert_string_equal(fx->tools[0], "fx_rates");
	assert_int_equal(serve_agents_find(&a, "news-researcher")->ntools, 2);
	assert_non_null(serve_agents_find(&a, "data-steward"));
	assert_non_null(serve_agents_find(&a, "prospect-finder"));
	assert_non_null(serve_agents_find(&a, "contract-reader"));
	assert_int_equal(serve_agents_find(&a, "data-steward")->max_steps, SERVE_STEPS_DEFAULT);
	assert_string_equal(serve_agents_find(&a, "data-steward")->on_error, "skip");
	assert_int_equal(serve_agents_find(&a, "data-steward")->ntools, 0);
	char *path = xasprintf("%s/serve-agents.json", dir);
	assert_string_equal(a.path, path);
	serve_agents_free(&a);

	/* The operator's edit is what loads. */
	const char *mine = "{\"agents\":[{\"name\":\"fx-analyst\",\"system\":\"You analyse FX.\","
			   "\"role\":\"orchestrator\",\"maxSteps\":7,\"tools\":[\"fx_rates\","
			   "\"news_search\"],\"onError\":\"abort\"}]}";
	assert_int_equal(util_write_file_atomic(path, mine, strlen(mine), false, &err), 0);
	assert_int_equal(serve_agents_load(dir, &a, &err), 0);
	assert_int_equal(a.n, 1);
	assert_string_equal(a.v[0].role, "orchestrator");
	assert_int_equal(a.v[0].max_steps, 7);
	assert_int_equal(a.v[0].ntools, 2);
	assert_string_equal(a.v[0].tools[1], "news_search");
	assert_string_equal(a.v[0].on_error, "abort");
	assert_null(serve_agents_find(&a, "data-steward"));
	serve_agents_free(&a);

	static const char *const bad[][2] = {
		{ "{\"agents\":[{\"name\":\"x\",\"system\":\"s\",\"maxSteps\":11}]}", "maxSteps" },
		{ "{\"agents\":[{\"name\":\"Bad Name\",\"system\":\"s\"}]}", "name" },
		{ "{\"agents\":[{\"name\":\"x\"}]}", "system" },
		{ "{\"agents\":[{\"name\":\"x\",\"system\":\"s\"},{\"name\":\"x\",\"system\":\"s\"}]}",
		  "twice" },
		{ "{\"agents\":[{\"name\":\"x\",\"system\":\"s\",\"role\":\"boss\"}]}", "role" },
		{ "{\"agents\":[]}", "non-empty" },
		{ "{\"agents\":[{\"name\":\"x\",\"system\":\"s\",\"onError\":\"panic\"}]}", "onError" },
		{ "{\"agents\":[{\"name\":\"x\",\"system\":\"s\",\"tools\":\"fx_rates\"}]}", "tools" },
		{ "{\"agents\":[{\"name\":\"x\",\"system\":\"s\",\"tools\":[1]}]}", "tools" },
		{ "{\"agents\":[{\"name\":\"x\",\"name\":\"y\",\"system\":\"s\"}]}", "uplicate" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(util_write_file_atomic(path, bad[i][0], strlen(bad[i][0]), false,
							&err), 0);
		assert_int_equal(serve_agents_load(dir, &a, &err), -1);
		if (!strstr(err, bad[i][1]))
			fail_msg("case %zu: \"%s\" does not say %s", i, err, bad[i][1]);
		assert_non_null(strstr(err, path));
		free(err);
		err = NULL;
	}
	free(path);
	util_rm_tree(dir);
	free(dir);
}

/* Validates body; returns the error's code and field ("OK" when valid). */
static void expect(const struct serve_agents *ag, const char *body, const char *code,
		   const char *field)
{
	struct serve_request r;
	struct serve_error e;
	int rc = serve_request_parse(body, strlen(body), ag, &r, &e);
	if (!strcmp(code, "OK")) {
		if (rc != 0)
			fail_msg("%s: refused: %s %s %s", body, e.code, e.field, e.message);
		serve_request_release(&r);
		return;
	}
	if (rc != -1)
		fail_msg("%s: accepted", body);
	assert_int_equal(e.status, 400);
	if (strcmp(e.code, code) || strcmp(e.field, field))
		fail_msg("%s: %s/%s (%s), expected %s/%s", body, e.code, e.field, e.message, code,
			 field);
	assert_true(e.message && *e.message);
	/* The seed's body. */
	char *s = serve_error_body(&e);
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "code")), code);
	cJSON *d = cJSON_GetObjectItem(j, "details");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(d, "field")), field);
	assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(j, "error")));
	assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(j, "timestamp")));
	cJSON_Delete(j);
	free(s);
	serve_error_release(&e);
}

static void test_validation(void **state)
{
	(void)state;
	char *dir = tmpdir();
	char *err = NULL;
	struct serve_agents ag;
	assert_int_equal(serve_agents_load(dir, &ag, &err), 0);
#define M "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1," M "}", "OK", NULL);
	expect(&ag, "{\"agents\":[\"data-steward\",\"prospect-finder\",\"contract-reader\"],"
		    "\"rounds\":10,\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
		    "{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":\"t\",\"toolCalls\":[]},"
		    "{\"role\":\"assistant\",\"content\":\"\"}]}", "OK", NULL);
	/* agents */
	expect(&ag, "{\"rounds\":1," M "}", "VALIDATION_ERROR", "agents");
	expect(&ag, "{\"agents\":[],\"rounds\":1," M "}", "VALIDATION_ERROR", "agents");
	expect(&ag, "{\"agents\":\"data-steward\",\"rounds\":1," M "}", "VALIDATION_ERROR", "agents");
	expect(&ag, "{\"agents\":[1],\"rounds\":1," M "}", "VALIDATION_ERROR", "agents");
	expect(&ag, "{\"agents\":[\"data-steward\",\"data-steward\"],\"rounds\":1," M "}",
	       "VALIDATION_ERROR", "agents");
	expect(&ag, "{\"agents\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"],\"rounds\":1," M "}",
	       "VALIDATION_ERROR", "agents");
	expect(&ag, "{\"agents\":[\"nobody\"],\"rounds\":1," M "}", "AGENT_NOT_FOUND", "agents");
	/* rounds */
	expect(&ag, "{\"agents\":[\"data-steward\"]," M "}", "VALIDATION_ERROR", "rounds");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":0," M "}", "VALIDATION_ERROR", "rounds");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":-3," M "}", "VALIDATION_ERROR", "rounds");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":2.5," M "}", "VALIDATION_ERROR", "rounds");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":\"3\"," M "}", "VALIDATION_ERROR", "rounds");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":11," M "}", "MAX_ROUNDS_EXCEEDED", "rounds");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1e300," M "}", "MAX_ROUNDS_EXCEEDED", "rounds");
	/* messages */
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1}", "VALIDATION_ERROR", "messages");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1,\"messages\":[]}", "VALIDATION_ERROR",
	       "messages");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1,\"messages\":[{\"role\":\"assistant\","
		    "\"content\":\"x\"}]}", "VALIDATION_ERROR", "messages");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1,\"messages\":[{\"role\":\"tool\","
		    "\"content\":\"x\"}]}", "VALIDATION_ERROR", "messages");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1,\"messages\":[{\"role\":\"user\","
		    "\"content\":5}]}", "VALIDATION_ERROR", "messages");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1,\"messages\":[\"hi\"]}",
	       "VALIDATION_ERROR", "messages");
	/* the body */
	expect(&ag, "{\"agents\":[\"data-steward\"],", "VALIDATION_ERROR", "body");
	expect(&ag, "[1]", "VALIDATION_ERROR", "body");
	expect(&ag, "", "VALIDATION_ERROR", "body");
	expect(&ag, "{\"agents\":[\"data-steward\"],\"rounds\":1,\"rounds\":2," M "}",
	       "VALIDATION_ERROR", "body");
#undef M
	serve_agents_free(&ag);
	util_rm_tree(dir);
	free(dir);
}

/* The limits: the sliding windows at given times, the refund, the
 * Retry-After of each limit, the file kept across a reopen, a malformed
 * file refused and left alone. */
static void test_limits(void **state)
{
	(void)state;
	char *dir = tmpdir();
	struct serve_limits_policy p = { .conv_per_hour = 3, .concurrent = 2, .rounds_per_day = 10 };
	struct serve_limits *l = NULL;
	char *err = NULL;
	assert_int_equal(serve_limits_open(dir, &p, &l, &err), 0);
	long r1 = 0, r2 = 0, r3 = 0, ra = 0;
	const char *which = NULL;
	int64_t t0 = 1700000000;
	assert_int_equal(serve_limits_admit(l, "u", 4, t0, &r1, &which, &ra, NULL, &err), 0);
	assert_int_equal(serve_limits_admit(l, "u", 4, t0 + 10, &r2, &which, &ra, NULL, &err), 0);
	/* 2 running: the 3rd at once is refused */
	assert_int_equal(serve_limits_admit(l, "u", 1, t0 + 20, &r3, &which, &ra, NULL, &err), 1);
	assert_string_equal(which, "concurrent");
	assert_int_equal(ra, 30);
	char *h = serve_limits_header(l, "u", t0 + 20);
	assert_string_equal(h, "\"conv-hour\";r=1;t=3580, \"concurrent\";r=0, \"rounds-day\";r=2;t=86380");
	free(h);
	/* r1 ends having started 1 of its 4 rounds: 3 come back */
	serve_limits_end(l, "u", r1, 1, t0 + 30);
	h = serve_limits_header(l, "u", t0 + 30);
	assert_string_equal(h, "\"conv-hour\";r=1;t=3570, \"concurrent\";r=1, \"rounds-day\";r=5;t=86370");
	free(h);
	/* 6 rounds do not fit in 5: 1 more is free when r1's 1 round leaves */
	assert_int_equal(serve_limits_admit(l, "u", 6, t0 + 40, &r3, &which, &ra, NULL, &err), 1);
	assert_string_equal(which, "rounds-day");
	assert_int_equal(ra, 86400 - 40);
	/* 9 rounds: r1's and r2's have to leave */
	assert_int_equal(serve_limits_admit(l, "u", 9, t0 + 40, &r3, &which, &ra, NULL, &err), 1);
	assert_int_equal(ra, 86400 + 10 - 40);
	assert_int_equal(serve_limits_admit(l, "u", 5, t0 + 50, &r3, &which, &ra, NULL, &err), 0);
	serve_limits_end(l, "u", r2, 4, t0 + 60);
	serve_limits_end(l, "u", r3, 5, t0 + 60);
	/* the hour's 3 are used: free again when the first leaves the hour */
	assert_int_equal(serve_limits_admit(l, "u", 1, t0 + 100, &r3, &which, &ra, NULL, &err), 1);
	assert_string_equal(which, "conv-hour");
	assert_int_equal(ra, 3500);
	/* another user has their own; what an admission left is taken with
	 * it: its conversation ending (refunded) before the answer goes out,
	 * or another's admission, does not change it */
	char *at = NULL;
	assert_int_equal(serve_limits_admit(l, "v", 1, t0 + 100, &r3, &which, &ra, &at, &err), 0);
	assert_non_null(at);
	serve_limits_end(l, "v", r3, 0, t0 + 100);
	long r4 = 0;
	char *at2 = NULL;
	assert_int_equal(serve_limits_admit(l, "v", 2, t0 + 101, &r4, &which, &ra, &at2, &err), 0);
	assert_string_equal(at, "\"conv-hour\";r=2;t=3600, \"concurrent\";r=1, \"rounds-day\";r=9;t=86400");
	assert_string_equal(at2, "\"conv-hour\";r=1;t=3599, \"concurrent\";r=1, \"rounds-day\";r=8;t=86400");
	free(at);
	free(at2);
	h = serve_limits_header(l, "v", t0 + 101);
	assert_string_equal(h, "\"conv-hour\";r=1;t=3599, \"concurrent\";r=1, \"rounds-day\";r=8;t=86400");
	free(h);
	serve_limits_end(l, "v", r4, 2, t0 + 102);
	/* refused: no value */
	char not_set[] = "x";
	at = not_set;
	assert_int_equal(serve_limits_admit(l, "u", 1, t0 + 102, &r4, &which, &ra, &at, &err), 1);
	assert_null(at);
	serve_limits_free(&l);
	assert_null(l);
	/* reopened: the counts are kept (running ones are not) */
	assert_int_equal(serve_limits_open(dir, &p, &l, &err), 0);
	h = serve_limits_header(l, "u", t0 + 100);
	assert_string_equal(h, "\"conv-hour\";r=0;t=3500, \"concurrent\";r=2, \"rounds-day\";r=0;t=86300");
	free(h);
	/* an hour later the conversations are free, a day later the rounds */
	h = serve_limits_header(l, "u", t0 + 3600 + 50);
	assert_string_equal(h, "\"conv-hour\";r=3;t=3600, \"concurrent\";r=2, \"rounds-day\";r=0;t=82750");
	free(h);
	assert_int_equal(serve_limits_admit(l, "u", 1, t0 + 86400 + 50, &r3, &which, &ra, NULL, &err), 0);
	h = serve_limits_policy_header(l);
	assert_string_equal(h, "\"conv-hour\";q=3;w=3600, \"concurrent\";q=2;qu=\"concurrent-requests\", "
			       "\"rounds-day\";q=10;w=86400;madf-unit=\"rounds\"");
	free(h);
	serve_limits_free(&l);
	/* a malformed file stops the server and is left as it is */
	char *path = xasprintf("%s/%s", dir, SERVE_LIMITS_FILE);
	const char bad[] = "{\"users\":{\"u\":{\"conversations\":\"x\",\"rounds\":[]}}}";
	assert_int_equal(util_write_file_atomic(path, bad, strlen(bad), false, &err), 0);
	assert_int_equal(serve_limits_open(dir, &p, &l, &err), -1);
	assert_non_null(strstr(err, "serve-limits.json: user \"u\""));
	free(err);
	char *back = NULL;
	size_t n = 0;
	assert_int_equal(util_read_file(path, 4096, &back, &n, NULL), 0);
	assert_string_equal(back, bad);
	free(back);
	free(path);
	util_rm_tree(dir);
	free(dir);
}

static void copy_file(const char *from, const char *to)
{
	char *b = NULL;
	size_t n = 0;
	assert_int_equal(util_read_file(from, 1 << 20, &b, &n, NULL), 0);
	assert_int_equal(util_write_file_atomic(to, b, n, false, NULL), 0);
	free(b);
}

static char *read_all(const char *path)
{
	char *b = NULL;
	size_t n = 0;
	assert_int_equal(util_read_file(path, 1 << 20, &b, &n, NULL), 0);
	return b;
}

/* The limits' journal: every change is in it at once (a copy of the
 * files taken before any snapshot, as a killed server leaves them, keeps
 * the counts); a flush writes serve-limits.json and empties it; a journal
 * replayed over a snapshot that already has it counts nothing twice; a
 * torn line is skipped. */
static void test_limits_journal(void **state)
{
	(void)state;
	char *a = tmpdir(), *b = tmpdir();
	struct serve_limits_policy p = { .conv_per_hour = 3, .concurrent = 2, .rounds_per_day = 10 };
	struct serve_limits *l = NULL, *l2 = NULL;
	char *err = NULL;
	assert_int_equal(serve_limits_open(a, &p, &l, &err), 0);
	long r1 = 0, r2 = 0, ra = 0;
	const char *which = NULL;
	int64_t t0 = 1700000000;
	assert_int_equal(serve_limits_admit(l, "u", 4, t0, &r1, &which, &ra, NULL, &err), 0);
	assert_int_equal(serve_limits_admit(l, "u", 3, t0 + 1, &r2, &which, &ra, NULL, &err), 0);
	serve_limits_end(l, "u", r1, 1, t0 + 2);
	const char *want = "\"conv-hour\";r=1;t=3590, \"concurrent\";r=2, \"rounds-day\";r=6;t=86390";
	/* killed now: serve-limits.json is the open's (no users), the journal
	 * has the three changes */
	char *ja = xasprintf("%s/%s", a, SERVE_LIMITS_JOURNAL), *sa = xasprintf("%s/%s", a, SERVE_LIMITS_FILE);
	char *jb = xasprintf("%s/%s", b, SERVE_LIMITS_JOURNAL), *sb = xasprintf("%s/%s", b, SERVE_LIMITS_FILE);
	char *snap = read_all(sa);
	assert_null(strstr(snap, "\"u\""));
	free(snap);
	char *journal = read_all(ja);
	copy_file(sa, sb);
	copy_file(ja, jb);
	assert_int_equal(serve_limits_open(b, &p, &l2, &err), 0);
	char *h = serve_limits_header(l2, "u", t0 + 10);
	assert_string_equal(h, want);
	free(h);
	/* the open put the journal into the snapshot and emptied it */
	char *jt = read_all(jb);
	assert_string_equal(jt, "");
	free(jt);
	snap = read_all(sb);
	assert_non_null(strstr(snap, "\"nextId\":3"));
	free(snap);
	serve_limits_free(&l2);
	/* a flush: the snapshot has it all, the journal is empty */
	assert_int_equal(serve_limits_flush(l, &err), 0);
	jt = read_all(ja);
	assert_string_equal(jt, "");
	free(jt);
	snap = read_all(sa);
	assert_non_null(strstr(snap, "\"u\":{\"conversations\":[1700000000,1700000001]"));
	free(snap);
	serve_limits_free(&l);
	/* stopped between the snapshot's rename and the journal's truncation:
	 * the journal again over the snapshot that has it, and a torn line */
	struct sbuf jj;
	sbuf_init(&jj);
	sbuf_add(&jj, journal, strlen(journal));
	const char torn[] = "{\"admit\":9,\"us\n{\"end\":1,\"user\":\"u\",\"n\":0}\n{\"admit\":10,";
	sbuf_add(&jj, torn, strlen(torn));
	assert_int_equal(util_write_file_atomic(ja, jj.data, jj.len, false, &err), 0);
	sbuf_release(&jj);
	assert_int_equal(serve_limits_open(a, &p, &l, &err), 0);
	h = serve_limits_header(l, "u", t0 + 10);
	/* r1's end to 0 rounds (a whole line after the torn one) applies */
	assert_string_equal(h, "\"conv-hour\";r=1;t=3590, \"concurrent\";r=2, \"rounds-day\";r=7;t=86391");
	free(h);
	/* the journal cannot be written (a file size limit: a short write):
	 * the admission fails and nothing is counted */
	struct rlimit fs, small;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &fs), 0);
	small = fs;
	small.rlim_cur = 10;
	void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	char not_set[] = "x";
	char *at = not_set;
	int r = serve_limits_admit(l, "w", 2, t0 + 10, &r1, &which, &ra, &at, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &fs), 0);
	signal(SIGXFSZ, old);
	assert_int_equal(r, -1);
	assert_null(at);
	assert_non_null(strstr(err, "serve-limits.journal"));
	free(err);
	err = NULL;
	h = serve_limits_header(l, "w", t0 + 10);
	assert_string_equal(h, "\"conv-hour\";r=3;t=3600, \"concurrent\";r=2, \"rounds-day\";r=10;t=86400");
	free(h);
	/* the next one is recorded (a crash now: the torn piece is skipped,
	 * the next line read whole) */
	assert_int_equal(serve_limits_admit(l, "w", 2, t0 + 11, &r1, &which, &ra, NULL, &err), 0);
	copy_file(sa, sb);
	copy_file(ja, jb);
	assert_int_equal(serve_limits_open(b, &p, &l2, &err), 0);
	h = serve_limits_header(l2, "w", t0 + 11);
	assert_string_equal(h, "\"conv-hour\";r=2;t=3600, \"concurrent\";r=2, \"rounds-day\";r=8;t=86400");
	free(h);
	serve_limits_free(&l2);
	serve_limits_free(&l);
	assert_int_equal(serve_limits_open(a, &p, &l, &err), 0);
	h = serve_limits_header(l, "w", t0 + 11);
	assert_string_equal(h, "\"conv-hour\";r=2;t=3600, \"concurrent\";r=2, \"rounds-day\";r=8;t=86400");
	free(h);
	serve_limits_free(&l);
	free(journal);
	free(ja);
	free(sa);
	free(jb);
	free(sb);
	util_rm_tree(a);
	util_rm_tree(b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_agents_file),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_limits_journal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
