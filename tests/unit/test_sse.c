/* The SSE parser: every split of a stream into two chunks, byte-at-a-time
 * feeding, multi-line data, CR, LF and CRLF line ends, comments, retry,
 * ids, a BOM, events without data, and lines or events over the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/sse.h"
#include "core/util.h"

#include "core/banned.h"

/* Events serialised as "type|id|data\n", data with its NULs and newlines
 * as they are, so two parses compare as strings. */
struct collect {
	struct sbuf out;
	int stop_after; /* callback fails on this event number (1-based); 0 never */
	int n;
};

static int collect_event(void *ctx, const struct sse_event *ev, char **err)
{
	struct collect *c = ctx;
	c->n++;
	if (c->stop_after && c->n == c->stop_after)
		return err_set(err, "stopped by the callback");
	assert_int_equal(strlen(ev->data), ev->data_len);
	sbuf_addf(&c->out, "%s|%s|", ev->event, ev->id);
	sbuf_add(&c->out, ev->data, ev->data_len);
	sbuf_addch(&c->out, '\n');
	return 0;
}

/* Parses s in the given chunks (sizes summing to strlen(s)); returns the
 * serialised events, or NULL after an error. Caller frees. */
static char *parse_chunks(const char *s, const size_t *sizes, size_t nsizes, size_t max)
{
	struct collect c = { 0 };
	sbuf_init(&c.out);
	sbuf_addstr(&c.out, "");
	struct sse_parser p;
	sse_init(&p, max, collect_event, &c);
	size_t off = 0;
	int rc = 0;
	for (size_t i = 0; i < nsizes && rc == 0; i++) {
		/* An exact-size copy, so ASan sees any read past the chunk. */
		char *chunk = xmalloc(sizes[i] ? sizes[i] : 1);
		memcpy(chunk, s + off, sizes[i]);
		char *err = NULL;
		rc = sse_feed(&p, chunk, sizes[i], &err);
		free(err);
		free(chunk);
		off += sizes[i];
	}
	if (rc == 0)
		rc = sse_finish(&p, NULL);
	sse_release(&p);
	if (rc < 0) {
		sbuf_release(&c.out);
		return NULL;
	}
	return sbuf_detach(&c.out);
}

static char *parse_whole(const char *s)
{
	size_t n = strlen(s);
	return parse_chunks(s, &n, 1, 0);
}

/* Every split point, and one byte at a time, give the same events. */
static void check_all_splits(const char *s, const char *expected)
{
	char *whole = parse_whole(s);
	assert_non_null(whole);
	assert_string_equal(whole, expected);
	size_t n = strlen(s);
	for (size_t cut = 0; cut <= n; cut++) {
		size_t sizes[2] = { cut, n - cut };
		char *got = parse_chunks(s, sizes, 2, 0);
		assert_non_null(got);
		if (strcmp(got, expected))
			fail_msg("split at byte %zu: got \"%s\"", cut, got);
		free(got);
	}
	size_t *ones = xmalloc((n ? n : 1) * sizeof(*ones));
	for (size_t i = 0; i < n; i++)
		ones[i] = 1;
	char *got = parse_chunks(s, ones, n, 0);
	assert_non_null(got);
	assert_string_equal(got, expected);
	free(got);
	free(ones);
	free(whole);
}

static const char anthropic_stream[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\"}\n\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi \\u00e9\"}}\n\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n\n";

static void test_anthropic_every_split(void **state)
{
	(void)state;
	check_all_splits(anthropic_stream,
			 "message_start||{\"type\":\"message_start\"}\n"
			 "ping||{\"type\": \"ping\"}\n"
			 "content_block_delta||{\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi \\u00e9\"}}\n"
			 "message_stop||{\"type\":\"message_stop\"}\n");
}

static void test_openai_every_split(void **state)
{
	(void)state;
	check_all_splits("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
			 "data: {\"error\":{\"message\":\"x\"}}\n\n"
			 "data: [DONE]\n\n",
			 "message||{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n"
			 "message||{\"error\":{\"message\":\"x\"}}\n"
			 "message||[DONE]\n");
}

static void test_multiline_data(void **state)
{
	(void)state;
	check_all_splits("data: one\ndata:two\ndata:  three\ndata\n\n",
			 "message||one\ntwo\n three\n\n");
}

static void test_crlf_and_cr(void **state)
{
	(void)state;
	check_all_splits("event: a\r\ndata: x\r\n\r\nevent: b\rdata: y\r\rdata: z\n\r\n",
			 "a||x\nb||y\nmessage||z\n");
}

static void test_comments_and_unknown_fields(void **state)
{
	(void)state;
	check_all_splits(": keep-alive\n\n:another\ndata: v\nfoo: bar\nnocolon\n: mid\n\n",
			 "message||v\n");
}

static void test_no_data_no_event(void **state)
{
	(void)state;
	/* An event name without data dispatches nothing and is forgotten. */
	check_all_splits("event: lonely\n\ndata: after\n\n", "message||after\n");
}

static void test_id_and_retry(void **state)
{
	(void)state;
	const char *s = "id: 7\nretry: 2500\ndata: a\n\nretry: x1\ndata: b\n\nid\ndata: c\n\n";
	check_all_splits(s, "message|7|a\nmessage|7|b\nmessage||c\n");
	struct collect c = { 0 };
	sbuf_init(&c.out);
	struct sse_parser p;
	sse_init(&p, 0, collect_event, &c);
	assert_int_equal(sse_feed(&p, s, strlen(s), NULL), 0);
	assert_int_equal(p.retry_ms, 2500);
	sse_release(&p);
	sbuf_release(&c.out);
}

static void test_bom_and_unterminated(void **state)
{
	(void)state;
	/* A BOM is dropped; an event without its blank line is discarded. */
	check_all_splits("\xEF\xBB\xBF" "data: a\n\ndata: never\n", "message||a\n");
	check_all_splits("data: partial", "");
}

static void test_space_after_colon(void **state)
{
	(void)state;
	/* Exactly one space after the colon is removed, others are data. */
	check_all_splits("data:x\n\ndata: x\n\ndata:  x\n\n",
			 "message||x\nmessage||x\nmessage|| x\n");
}

static void test_oversize_line(void **state)
{
	(void)state;
	char line[200];
	memset(line, 'a', sizeof(line));
	memcpy(line, "data: ", 6);
	line[sizeof(line) - 1] = '\0';
	struct collect c = { 0 };
	sbuf_init(&c.out);
	struct sse_parser p;
	sse_init(&p, 64, collect_event, &c);
	char *err = NULL;
	/* Arriving in small pieces still trips the bound. */
	int rc = 0;
	for (size_t i = 0; i < strlen(line) && rc == 0; i += 10)
		rc = sse_feed(&p, line + i, strlen(line) - i < 10 ? strlen(line) - i : 10, &err);
	assert_int_equal(rc, -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "SSE line longer than 64 bytes"));
	free(err);
	err = NULL;
	/* Once failed, the parser stays failed. */
	assert_int_equal(sse_feed(&p, "\n\n", 2, &err), -1);
	free(err);
	assert_int_equal(sse_finish(&p, NULL), -1);
	assert_int_equal(c.n, 0);
	sse_release(&p);
	sbuf_release(&c.out);
	/* A line of exactly the bound passes. */
	char ok[80];
	memset(ok, 'b', 64);
	memcpy(ok, "data: ", 6);
	memcpy(ok + 64, "\n\n", 3);
	size_t n = strlen(ok);
	char *got = parse_chunks(ok, &n, 1, 64);
	assert_non_null(got);
	free(got);
}

static void test_oversize_event(void **state)
{
	(void)state;
	/* Many short data lines may not add up past the bound either. */
	struct sbuf s;
	sbuf_init(&s);
	for (int i = 0; i < 20; i++)
		sbuf_addstr(&s, "data: 0123456789\n");
	sbuf_addstr(&s, "\n");
	char *got = parse_chunks(s.data, &s.len, 1, 100);
	assert_null(got);
	sbuf_release(&s);
}

static void test_callback_stops(void **state)
{
	(void)state;
	struct collect c = { .stop_after = 2 };
	sbuf_init(&c.out);
	struct sse_parser p;
	sse_init(&p, 0, collect_event, &c);
	const char *s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
	char *err = NULL;
	assert_int_equal(sse_feed(&p, s, strlen(s), &err), -1);
	assert_string_equal(err, "stopped by the callback");
	free(err);
	assert_int_equal(c.n, 2);
	sse_release(&p);
	sbuf_release(&c.out);
}

static void test_nul_in_data(void **state)
{
	(void)state;
	/* NUL bytes are data (the callback sees data_len); the id ignores them. */
	struct collect c = { 0 };
	sbuf_init(&c.out);
	struct sse_parser p;
	sse_init(&p, 0, NULL, &c);
	static const char s[] = "id: a\0b\ndata: x\0y\n\n";
	assert_int_equal(sse_feed(&p, s, sizeof(s) - 1, NULL), 0);
	assert_string_equal(p.id.data, "");
	sse_release(&p);
	sbuf_release(&c.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anthropic_every_split),
		cmocka_unit_test(test_openai_every_split),
		cmocka_unit_test(test_multiline_data),
		cmocka_unit_test(test_crlf_and_cr),
		cmocka_unit_test(test_comments_and_unknown_fields),
		cmocka_unit_test(test_no_data_no_event),
		cmocka_unit_test(test_id_and_retry),
		cmocka_unit_test(test_bom_and_unterminated),
		cmocka_unit_test(test_space_after_colon),
		cmocka_unit_test(test_oversize_line),
		cmocka_unit_test(test_oversize_event),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_nul_in_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
