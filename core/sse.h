/* An incremental Server-Sent Events parser (the WHATWG event-stream
 * format): bytes go in as they arrive, in chunks of any size, and each
 * complete event comes out through a callback. */
#ifndef MADF_SSE_H
#define MADF_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

/* One event, valid during the callback only. data is the "data:" lines
 * joined with "\n" and NUL-terminated; event is "message" when the stream
 * named none; id is the last event id seen ("" when none). */
struct sse_event {
	const char *event;
	const char *data;
	size_t data_len;
	const char *id;
};

/* Returns 0 to go on, or -1 with *err (which sse_feed hands back) to stop. */
typedef int (*sse_event_fn)(void *ctx, const struct sse_event *ev, char **err);

struct sse_parser {
	sse_event_fn fn;
	void *ctx;
	size_t max;         /* longest line, and longest event data, in bytes */
	struct sbuf line;   /* the line being read */
	struct sbuf event;  /* event type of the pending event */
	struct sbuf data;   /* data of the pending event, each line + "\n" */
	struct sbuf id;     /* last event id */
	bool has_data;
	bool after_cr;      /* last byte was CR: a following LF ends nothing */
	bool first_line;    /* a UTF-8 BOM may start the stream */
	bool failed;
	long retry_ms;      /* last valid "retry:" field, -1 when none */
};

#define SSE_MAX_DEFAULT (1024 * 1024)

void sse_init(struct sse_parser *p, size_t max, sse_event_fn fn, void *ctx);
void sse_release(struct sse_parser *p);
/* Parses len bytes. Returns 0, or -1 with *err after an oversize line or
 * event, or when the callback stopped; after -1 every call fails. */
int sse_feed(struct sse_parser *p, const char *buf, size_t len, char **err);
/* The stream ended: an event without its blank line is discarded, as the
 * format says. Returns 0, or -1 when the parser had failed. */
int sse_finish(struct sse_parser *p, char **err);

#endif
