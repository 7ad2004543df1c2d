/* libFuzzer target: the SSE parser as the LLM clients call it, sse_feed on
 * exact-size chunks as libcurl hands them over. The first byte picks the
 * chunk size; the same stream fed whole must give the same events and the
 * same outcome, and every event's data_len must match its text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sse.h"
#include "core/util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX 512

static int fuzz_event(void *ctx, const struct sse_event *ev, char **err)
{
	(void)err;
	struct sbuf *out = ctx;
	if (!ev->event || !ev->data || !ev->id || ev->data[ev->data_len] != '\0')
		abort();
	if (ev->data_len > FUZZ_MAX)
		abort();
	sbuf_addf(out, "%zu:%s|%zu:%s|%zu:", strlen(ev->event), ev->event, strlen(ev->id),
		  ev->id, ev->data_len);
	sbuf_add(out, ev->data, ev->data_len);
	return 0;
}

/* Parses stream in chunks of at most step bytes; returns the outcome. */
static int fuzz_parse(const uint8_t *s, size_t n, size_t step, struct sbuf *out)
{
	struct sse_parser p;
	sse_init(&p, FUZZ_MAX, fuzz_event, out);
	int rc = 0;
	for (size_t off = 0; off < n && rc == 0; off += step) {
		size_t len = n - off < step ? n - off : step;
		char *chunk = malloc(len);
		if (!chunk)
			abort();
		memcpy(chunk, s + off, len);
		char *err = NULL;
		rc = sse_feed(&p, chunk, len, &err);
		if (rc < 0 && (!err || !*err))
			abort();
		free(err);
		free(chunk);
	}
	if (rc == 0)
		rc = sse_finish(&p, NULL);
	sse_release(&p);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = (size_t)data[0] % 17 + 1;
	struct sbuf a, b;
	sbuf_init(&a);
	sbuf_init(&b);
	sbuf_addstr(&a, "");
	sbuf_addstr(&b, "");
	int ra = fuzz_parse(data + 1, size - 1, step, &a);
	int rb = fuzz_parse(data + 1, size - 1, size, &b);
	if (ra != rb || a.len != b.len || memcmp(a.data, b.data, a.len)) {
		fprintf(stderr, "fuzz_sse: chunks of %zu differ from the whole stream\n", step);
		abort();
	}
	sbuf_release(&a);
	sbuf_release(&b);
	return 0;
}
