#include "core/sse.h"

#include <stdlib.h>
#include <string.h>

#include "core/banned.h"

void sse_init(struct sse_parser *p, size_t max, sse_event_fn fn, void *ctx)
{
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->ctx = ctx;
	p->max = max ? max : SSE_MAX_DEFAULT;
	sbuf_init(&p->line);
	sbuf_init(&p->event);
	sbuf_init(&p->data);
	sbuf_init(&p->id);
	/* Allocated from the start, so each is a valid empty string. */
	sbuf_add(&p->line, "", 0);
	sbuf_add(&p->event, "", 0);
	sbuf_add(&p->data, "", 0);
	sbuf_add(&p->id, "", 0);
	p->first_line = true;
	p->retry_ms = -1;
}

void sse_release(struct sse_parser *p)
{
	sbuf_release(&p->line);
	sbuf_release(&p->event);
	sbuf_release(&p->data);
	sbuf_release(&p->id);
}

static void sse_reset_event(struct sse_parser *p)
{
	p->data.len = 0;
	p->data.data[0] = '\0';
	p->event.len = 0;
	p->event.data[0] = '\0';
	p->has_data = false;
}

static int sse_dispatch(struct sse_parser *p, char **err)
{
	if (!p->has_data) {
		sse_reset_event(p);
		return 0;
	}
	/* The data buffer ends with the "\n" of its last line: drop it. */
	size_t n = p->data.len;
	if (n && p->data.data[n - 1] == '\n')
		p->data.data[--n] = '\0';
	struct sse_event ev = {
		.event = p->event.len ? p->event.data : "message",
		.data = p->data.data,
		.data_len = n,
		.id = p->id.data,
	};
	int r = p->fn ? p->fn(p->ctx, &ev, err) : 0;
	sse_reset_event(p);
	return r;
}

static bool sse_all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int sse_line(struct sse_parser *p, char **err)
{
	const char *s = p->line.data;
	size_t n = p->line.len;
	if (p->first_line) {
		p->first_line = false;
		if (n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3))
			s += 3, n -= 3;
	}
	if (!n)
		return sse_dispatch(p, err);
	if (s[0] == ':')
		return 0;
	const char *colon = memchr(s, ':', n);
	size_t flen = colon ? (size_t)(colon - s) : n;
	const char *val = colon ? colon + 1 : s + n;
	size_t vlen = (size_t)(s + n - val);
	if (vlen && val[0] == ' ')
		val++, vlen--;
	if (flen == 5 && !memcmp(s, "event", 5)) {
		p->event.len = 0;
		sbuf_add(&p->event, val, vlen);
	} else if (flen == 4 && !memcmp(s, "data", 4)) {
		if (p->data.len + vlen + 1 > p->max) {
			p->failed = true;
			return err_set(err, "SSE event data longer than %zu bytes", p->max);
		}
		sbuf_add(&p->data, val, vlen);
		sbuf_addch(&p->data, '\n');
		p->has_data = true;
	} else if (flen == 2 && !memcmp(s, "id", 2)) {
		if (!memchr(val, '\0', vlen)) {
			p->id.len = 0;
			sbuf_add(&p->id, val, vlen);
		}
	} else if (flen == 5 && !memcmp(s, "retry", 5)) {
		if (sse_all_digits(val, vlen) && vlen <= 9)
			p->retry_ms = strtol(val, NULL, 10);
	}
	/* Other fields are ignored. */
	return 0;
}

int sse_feed(struct sse_parser *p, const char *buf, size_t len, char **err)
{
	if (p->failed)
		return err_set(err, "SSE parser already failed");
	size_t i = 0;
	while (i < len) {
		if (p->after_cr) {
			p->after_cr = false;
			if (buf[i] == '\n') {
				i++;
				continue;
			}
		}
		/* Take bytes up to the next CR or LF in one go. */
		size_t j = i;
		while (j < len && buf[j] != '\n' && buf[j] != '\r')
			j++;
		if (p->line.len + (j - i) > p->max) {
			p->failed = true;
			return err_set(err, "SSE line longer than %zu bytes", p->max);
		}
		sbuf_add(&p->line, buf + i, j - i);
		if (j == len)
			break;
		p->after_cr = buf[j] == '\r';
		i = j + 1;
		int r = sse_line(p, err);
		p->line.len = 0;
		p->line.data[0] = '\0';
		if (r < 0) {
			p->failed = true;
			return -1;
		}
	}
	return 0;
}

int sse_finish(struct sse_parser *p, char **err)
{
	if (p->failed)
		return err_set(err, "SSE parser already failed");
	sse_reset_event(p);
	p->line.len = 0;
	p->line.data[0] = '\0';
	return 0;
}
