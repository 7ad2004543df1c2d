/* The MCP client's HTTP transport (Streamable HTTP): POSTs, the GET
 * stream and the end of a session; and mcp_client_read, the frames a
 * server sends read outside a call. */
#include "core/mcp_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/http.h"
#include "core/sse.h"
#include "core/util.h"
#include "core/banned.h"

#define MCP_DELETE_TIMEOUT_MS 2000L /* ending a session at exit */
#define MCP_GET_SETTLE_MS 1000 /* the GET stream's first answer awaited at the end */
#define MCP_GET_CONNECT_TIMEOUT_MS 10000L
#define MCP_GET_RETRY_MS 1000L      /* before opening it again, without "retry:" */
#define MCP_GET_RETRY_MAX_MS 60000L /* the longest "retry:" we wait */
#define MCP_GET_CLOSES_MAX 5        /* ended in a row with nothing sent: given up */
#define MCP_EVENT_ID_MAX 256        /* longest Last-Event-ID we send back */

/* ---- http transport --------------------------------------------------- */

struct http_xfer {
	struct mcp_client *c;
	int64_t want_id;
	const struct mcp_call_opts *o;
	bool sse;
	struct sse_parser sp;
	struct sbuf body;
	char *session;
	cJSON *resp;
	bool done, timed_out, overflow;
	enum http_outcome outcome;
	long status;
	char *error;
};

static int xfer_header(void *ctx, const char *name, size_t nlen, const char *value,
		       size_t vlen)
{
	struct http_xfer *x = ctx;
	if (nlen == 12 && !strncasecmp(name, "content-type", 12))
		x->sse = vlen >= 17 && !strncasecmp(value, "text/event-stream", 17);
	else if (nlen == 14 && !strncasecmp(name, "mcp-session-id", 14)) {
		free(x->session);
		x->session = xstrndup(value, vlen);
	}
	return 0;
}

static int xfer_event(void *ctx, const struct sse_event *ev, char **err)
{
	(void)err;
	struct http_xfer *x = ctx;
	if (!ev->data_len || x->resp)
		return 0;
	cJSON *msg = cJSON_ParseWithLength(ev->data, ev->data_len);
	if (!msg) {
		mcp_log(x->c, "warn", "an event that is not JSON was ignored");
		return 0;
	}
	if (mcp_on_message(x->c, msg, x->want_id, x->o, &x->resp) == 0)
		cJSON_Delete(msg);
	return 0;
}

static int xfer_data(void *ctx, long status, const char *buf, size_t len)
{
	struct http_xfer *x = ctx;
	x->status = status;
	if (x->sse && status >= 200 && status < 300) {
		char *e = NULL;
		if (sse_feed(&x->sp, buf, len, &e) < 0) {
			free(x->error);
			x->error = e;
			return -1;
		}
		return x->resp ? -1 : 0; /* the answer is in: no need for the rest */
	}
	if (x->body.len + len > MCP_MESSAGE_MAX) {
		x->overflow = true;
		return -1;
	}
	sbuf_add(&x->body, buf, len);
	return 0;
}

static void xfer_done(void *ctx, const struct http_result *res)
{
	struct http_xfer *x = ctx;
	x->done = true;
	x->outcome = res->outcome;
	if (res->status)
		x->status = res->status;
	x->timed_out = res->timed_out;
	if (res->error && *res->error && !x->error)
		x->error = xstrdup(res->error);
}

/* Replies to server requests made on a stream: fire and forget. */
static void reply_done(void *ctx, const struct http_result *res)
{
	(void)res;
	free(ctx);
}

static int reply_data(void *ctx, long status, const char *buf, size_t len)
{
	(void)ctx, (void)status, (void)buf, (void)len;
	return 0;
}

/* What an HTTP request to the endpoint is for. */
enum http_kind {
	HTTP_POST,   /* a message */
	HTTP_LISTEN, /* GET: the stream of server messages outside requests */
	HTTP_END,    /* DELETE: the end of the session */
};

/* The request's headers; own[] (3 entries) gets those to free. */
static const char **http_headers(struct mcp_client *c, enum http_kind kind, char **own,
				 size_t *nown)
{
	const char **h = xcalloc(c->cfg.nheaders + 6, sizeof(char *));
	size_t k = 0;
	*nown = 0;
	if (kind == HTTP_POST) {
		h[k++] = "Content-Type: application/json";
		h[k++] = "Accept: application/json, text/event-stream";
	} else if (kind == HTTP_LISTEN) {
		h[k++] = "Accept: text/event-stream";
		if (c->last_event_id)
			h[k++] = own[(*nown)++] = xasprintf("Last-Event-ID: %s",
							    c->last_event_id);
	}
	if (c->session)
		h[k++] = own[(*nown)++] = xasprintf("Mcp-Session-Id: %s", c->session);
	if (c->ready || c->version[0])
		h[k++] = own[(*nown)++] = xasprintf("MCP-Protocol-Version: %s", c->version);
	for (size_t i = 0; i < c->cfg.nheaders; i++)
		h[k++] = c->cfg.headers[i];
	h[k] = NULL;
	return h;
}

static int http_start(struct mcp_client *c, const char *text, long timeout_ms,
		      const struct mcp_call_opts *o, struct http_xfer *x, char **err)
{
	if (!c->m && http_multi_new(&c->m, err) < 0)
		return -1;
	char *own[3];
	size_t nown;
	const char **h = http_headers(c, HTTP_POST, own, &nown);
	struct http_request_opts ro = {
		.url = c->cfg.url,
		.headers = h,
		.body = text,
		.body_len = strlen(text),
		.timeout_ms = timeout_ms,
		.connect_timeout_ms = timeout_ms < 10000 ? timeout_ms : 10000,
		.cancel = o ? o->cancel : NULL,
		.ctx = x,
	};
	if (x) {
		ro.on_header = xfer_header;
		ro.on_data = xfer_data;
		ro.on_done = xfer_done;
	} else {
		ro.on_data = reply_data;
		ro.on_done = reply_done;
		ro.ctx = xcalloc(1, 1);
	}
	int r = http_multi_start(c->m, &ro, err);
	if (r < 0 && !x)
		free(ro.ctx);
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	free(h);
	return r;
}

/* Sends a message whose answer nobody waits for (a reply, a notification
 * sent from inside a stream). */
int mcp_send_message(struct mcp_client *c, const char *text)
{
	if (c->cfg.transport == MCP_STDIO)
		return mcp_stdio_write(c, text, util_mono_ns() + MCP_NOTIFY_TIMEOUT_MS * 1000000);
	char *e = NULL;
	int r = http_start(c, text, MCP_NOTIFY_TIMEOUT_MS, NULL, NULL, &e);
	if (r < 0)
		mcp_log(c, "warn", "cannot send: %s", e);
	free(e);
	return r;
}

static void xfer_release(struct http_xfer *x)
{
	sse_release(&x->sp);
	sbuf_release(&x->body);
	free(x->session);
	free(x->error);
	cJSON_Delete(x->resp);
}

static char *body_snippet(const struct sbuf *b)
{
	size_t n = b->len > 200 ? 200 : b->len;
	char *s = util_sanitize(b->data ? b->data : "", n, false);
	return s;
}

static int http_run(struct mcp_client *c, const bool *done, bool settle, char **err);

/* A notification over HTTP, waited for (202 expected). */
int mcp_http_notify(struct mcp_client *c, const char *text, char **err)
{
	struct http_xfer x = { .c = c, .want_id = -1 };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	int r = http_start(c, text, MCP_NOTIFY_TIMEOUT_MS, NULL, &x, err);
	if (r == 0)
		r = http_run(c, &x.done, false, err);
	if (r == 0 && (x.outcome != HTTP_DONE || x.status < 200 || x.status >= 300)) {
		if (x.outcome == HTTP_DONE)
			r = err_set(err, "HTTP %ld", x.status);
		else
			r = err_set(err, "%s", x.error ? x.error : "no answer");
	}
	xfer_release(&x);
	return r;
}

/* ---- the GET stream and the end of a session -------------------------- */

/* The session's GET stream: server notifications and requests outside a
 * call's own answer. There is one a session (the spec lets a server send
 * each message on one stream only, and a server may close, or keep only
 * the newest of, streams a client opens again and again): the first
 * request after initialization opens it, it stays on the client's multi
 * between calls (read whenever a request of the session runs) and ends
 * with the session. When the server closes it, it is opened again with
 * Last-Event-ID after the server's "retry:" time (MCP_GET_RETRY_MS when
 * it gave none), so that a server keeping its events sends what the
 * client had not received. */
struct get_stream {
	struct mcp_client *c;
	const struct mcp_call_opts *o; /* the running call's; NULL between calls */
	struct sse_parser sp;
	volatile sig_atomic_t stop;
	bool running;  /* queued or under way on c->m */
	bool ending;   /* being stopped: not opened again */
	bool sse, opened;
	bool answered; /* some connection's status line and a header arrived */
	bool heard;    /* an event arrived on this connection */
	int closes;    /* connections ended in a row without an event */
	long retry_ms; /* the server's last "retry:", -1 when none */
	long status;
};

static int get_header(void *ctx, const char *name, size_t nlen, const char *value,
		      size_t vlen)
{
	struct get_stream *g = ctx;
	g->answered = true;
	if (nlen == 12 && !strncasecmp(name, "content-type", 12))
		g->sse = vlen >= 17 && !strncasecmp(value, "text/event-stream", 17);
	return 0;
}

static int get_event(void *ctx, const struct sse_event *ev, char **err)
{
	(void)err;
	struct get_stream *g = ctx;
	struct mcp_client *c = g->c;
	size_t idlen = ev->id ? strlen(ev->id) : 0;
	g->heard = true;
	if (idlen && (!c->last_event_id || strcmp(c->last_event_id, ev->id))) {
		/* Sent back as a header: printable ASCII, bounded, or not at all. */
		bool ok = idlen <= MCP_EVENT_ID_MAX;
		for (size_t i = 0; ok && i < idlen; i++)
			ok = ev->id[i] >= 0x20 && ev->id[i] < 0x7f;
		free(c->last_event_id);
		c->last_event_id = ok ? xstrdup(ev->id) : NULL;
	}
	if (!ev->data_len)
		return 0;
	cJSON *msg = cJSON_ParseWithLength(ev->data, ev->data_len);
	if (!msg) {
		mcp_log(c, "warn", "an event that is not JSON was ignored (GET stream)");
		return 0;
	}
	cJSON *none = NULL;
	mcp_on_message(c, msg, -1, g->o, &none);
	cJSON_Delete(msg);
	return 0;
}

static int get_data(void *ctx, long status, const char *buf, size_t len)
{
	struct get_stream *g = ctx;
	g->status = status;
	if (status < 200 || status >= 300)
		return 0; /* the body of a refusal: not needed */
	if (!g->sse)
		return -1; /* not an event stream */
	if (!g->opened) {
		g->opened = true;
		if (g->c->get_stream == 0)
			mcp_log(g->c, "info", "listening for server messages on a GET stream");
		g->c->get_stream = 1;
	}
	char *e = NULL;
	if (sse_feed(&g->sp, buf, len, &e) < 0) {
		mcp_log(g->c, "warn", "GET stream: %s", e);
		free(e);
		return -1;
	}
	return 0;
}

static void get_done(void *ctx, const struct http_result *res);

/* The session's GET stream is given up: not opened again in this session;
 * why (printf-style) is logged as a warning and kept for a call that times
 * out (c->get_lost). */
static void get_give_up(struct mcp_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void get_give_up(struct mcp_client *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *why = xvasprintf(fmt, ap);
	va_end(ap);
	mcp_log(c, "warn", "GET stream: %s; not tried again in this session", why);
	free(c->get_lost);
	c->get_lost = why;
	c->get_stream = -1;
}

/* Starts a connection of g at start_at_ns (0: now), with Last-Event-ID
 * when an event had an id. Returns 0, or -1 (logged; the session's stream
 * is given up). */
static int get_start(struct get_stream *g, int64_t start_at_ns)
{
	struct mcp_client *c = g->c;
	sse_release(&g->sp);
	sse_init(&g->sp, MCP_MESSAGE_MAX, get_event, g);
	g->stop = 0;
	g->sse = g->opened = g->heard = false;
	g->status = 0;
	char *own[3];
	size_t nown;
	const char **h = http_headers(c, HTTP_LISTEN, own, &nown);
	struct http_request_opts ro = {
		.url = c->cfg.url,
		.headers = h,
		.connect_timeout_ms = MCP_GET_CONNECT_TIMEOUT_MS,
		.start_at_ns = start_at_ns,
		.cancel = &g->stop,
		.on_header = get_header,
		.on_data = get_data,
		.on_done = get_done,
		.ctx = g,
	};
	char *e = NULL;
	int r = http_multi_start(c->m, &ro, &e);
	if (r < 0) {
		get_give_up(c, "%s", e);
		free(e);
	} else {
		g->running = true;
	}
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	free(h);
	return r;
}

/* The server closed the stream (or its connection broke: why names the
 * error): it is opened again after the server's retry time, unless it
 * keeps closing it with nothing sent. */
static void get_reopen(struct get_stream *g, const char *why)
{
	struct mcp_client *c = g->c;
	if (g->sp.retry_ms >= 0)
		g->retry_ms = g->sp.retry_ms > MCP_GET_RETRY_MAX_MS ? MCP_GET_RETRY_MAX_MS
								    : g->sp.retry_ms;
	g->closes = g->heard ? 0 : g->closes + 1;
	if (g->closes >= MCP_GET_CLOSES_MAX) {
		get_give_up(c, "the server ended it %d times in a row without an event",
			    g->closes);
		return;
	}
	long ms = g->retry_ms >= 0 ? g->retry_ms : MCP_GET_RETRY_MS;
	const char *resume = c->last_event_id ? " (Last-Event-ID)" : "";
	if (why)
		mcp_log(c, "warn", "GET stream: %s: opening it again in %ld ms%s", why, ms,
			resume);
	else
		mcp_log(c, "info", "GET stream closed by the server: opening it again in "
			"%ld ms%s", ms, resume);
	get_start(g, util_mono_ns() + (int64_t)ms * 1000000);
}

static void get_done(void *ctx, const struct http_result *res)
{
	struct get_stream *g = ctx;
	struct mcp_client *c = g->c;
	g->running = false;
	long st = res->status ? res->status : g->status;
	if (g->ending || (res->outcome == HTTP_CANCELLED && st != 405))
		return; /* stopped by us: the session ends */
	if (st == 405) {
		mcp_log(c, "info", "the server offers no stream of its own (GET: HTTP 405)");
		c->get_stream = -1;
	} else if (st == 404) { /* an expired session: its POSTs see it too */
		mcp_log(c, "info", "GET stream: HTTP 404; not tried again in this session");
		c->get_stream = -1;
	} else if (st >= 200 && st < 300 && g->sse &&
		   (res->outcome == HTTP_DONE || (res->outcome == HTTP_FAILED && g->opened))) {
		get_reopen(g, res->outcome == HTTP_DONE ? NULL
			   : res->error && *res->error ? res->error : "failed");
	} else if (res->outcome == HTTP_FAILED) {
		get_give_up(c, "%s", res->error && *res->error ? res->error : "failed");
	} else if (st < 200 || st >= 300) {
		get_give_up(c, "HTTP %ld", st);
	} else {
		get_give_up(c, "the answer is not an event stream");
	}
}

/* Opens the session's GET stream, unless it is open (or queued to open
 * again) already, or the server offers none. */
static void get_open(struct mcp_client *c)
{
	if (c->get_stream < 0 || !c->ready || (c->get && c->get->running))
		return;
	if (!c->get) {
		c->get = xcalloc(1, sizeof(*c->get));
		c->get->c = c;
		c->get->retry_ms = -1;
		sse_init(&c->get->sp, MCP_MESSAGE_MAX, get_event, c->get);
	}
	get_start(c->get, 0);
}

/* Stops the session's GET stream and frees it (the session ends). */
void mcp_http_listen_stop(struct mcp_client *c)
{
	struct get_stream *g = c->get;
	if (!g)
		return;
	g->ending = true;
	if (g->running) {
		g->stop = 1;
		while (g->running && c->m && http_multi_pending(c->m) > 0)
			http_multi_dispatch(c->m, NULL, 0);
	}
	sse_release(&g->sp);
	free(g);
	c->get = NULL;
}

/* Runs c's requests until *done (the request waited for ended) and no
 * reply sent meanwhile is left; the session's GET stream runs on beside
 * them and stays. With settle, also until that stream's first answer has
 * begun (at most MCP_GET_SETTLE_MS), so that the session learns (and
 * logs) a 405 however fast its calls were. Returns 0, or -1 with *err
 * when poll() fails. */
static int http_run(struct mcp_client *c, const bool *done, bool settle, char **err)
{
	struct pollfd *fds = NULL;
	size_t cap = 0;
	int rc = 0;
	int64_t until = settle ? util_mono_ns() / 1000000 + MCP_GET_SETTLE_MS : -1;
	for (;;) {
		struct get_stream *g = c->get;
		size_t others = http_multi_pending(c->m) - (g && g->running ? 1 : 0);
		bool settling = until >= 0 && g && g->running && !g->answered &&
				util_mono_ns() / 1000000 < until;
		if (*done && !others && !settling)
			break;
		size_t n = http_multi_fds(c->m, fds, cap);
		if (n > cap) {
			cap = n;
			fds = xrealloc(fds, cap * sizeof(*fds));
			n = http_multi_fds(c->m, fds, cap);
		}
		int t = http_multi_timeout(c->m);
		if (t < 0 || t > 1000) /* a cancel flag is noticed within a second */
			t = 1000;
		if (settling && t > 50)
			t = 50; /* the GET's answer is looked for often meanwhile */
		int r = poll(fds, n, t);
		if (r < 0 && errno != EINTR) {
			rc = err_set(err, "poll: %s", strerror(errno));
			break;
		}
		http_multi_dispatch(c->m, fds, r > 0 ? n : 0);
	}
	free(fds);
	return rc;
}

/* Ends the HTTP session (DELETE with its id), waiting at most
 * MCP_DELETE_TIMEOUT_MS; a server that does not allow it answers 405.
 * The session's GET stream is stopped first (after its first answer, if
 * it had none yet). */
void mcp_http_end_session(struct mcp_client *c)
{
	if (c->cfg.transport != MCP_HTTP || !c->session)
		return;
	char *e = NULL;
	if (!c->m && http_multi_new(&c->m, &e) < 0) {
		mcp_log(c, "warn", "cannot end the session: %s", e);
		free(e);
		return;
	}
	bool now = true;
	if (c->get && http_run(c, &now, true, &e) < 0) {
		mcp_log(c, "warn", "GET stream: %s", e);
		free(e);
		e = NULL;
	}
	mcp_http_listen_stop(c);
	struct http_xfer x = { .c = c, .want_id = -1 };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	char *own[3];
	size_t nown;
	const char **h = http_headers(c, HTTP_END, own, &nown);
	struct http_request_opts ro = {
		.url = c->cfg.url,
		.headers = h,
		.method = "DELETE",
		.timeout_ms = MCP_DELETE_TIMEOUT_MS,
		.connect_timeout_ms = MCP_DELETE_TIMEOUT_MS,
		.on_data = xfer_data,
		.on_done = xfer_done,
		.ctx = &x,
	};
	int r = http_multi_start(c->m, &ro, &e);
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	free(h);
	if (r == 0)
		r = http_run(c, &x.done, false, &e);
	if (r < 0)
		mcp_log(c, "warn", "cannot end the session: %s", e);
	else if (x.outcome == HTTP_DONE && x.status >= 200 && x.status < 300)
		mcp_log(c, "info", "session ended (DELETE: HTTP %ld)", x.status);
	else if (x.outcome == HTTP_DONE && x.status == 405)
		mcp_log(c, "info", "the server does not let clients end sessions (DELETE: "
			"HTTP 405)");
	else if (x.outcome == HTTP_DONE)
		mcp_log(c, "warn", "ending the session: DELETE: HTTP %ld", x.status);
	else
		mcp_log(c, "warn", "ending the session: DELETE: %s",
			x.error ? x.error : "no answer");
	free(e);
	xfer_release(&x);
	free(c->session);
	c->session = NULL;
}

/* The messages of an HTTP answer's JSON body: one, or a batch. Returns 0
 * (with *resp when the response to want_id was among them), or -1 when
 * the body is not JSON. */
static int http_body_read(struct mcp_client *c, const struct sbuf *b, int64_t want_id,
			  const struct mcp_call_opts *o, cJSON **resp)
{
	cJSON *body = cJSON_ParseWithLength(b->data ? b->data : "", b->len);
	if (!body)
		return -1;
	if (cJSON_IsArray(body)) { /* a batch */
		cJSON *it;
		while ((it = cJSON_DetachItemFromArray(body, 0))) {
			if (!*resp && mcp_on_message(c, it, want_id, o, resp) == 1)
				continue;
			cJSON_Delete(it);
		}
		cJSON_Delete(body);
	} else if (mcp_on_message(c, body, want_id, o, resp) == 0) {
		cJSON_Delete(body);
	}
	return 0;
}

int mcp_http_exchange(struct mcp_client *c, const char *method, const char *text,
		      int64_t id, long timeout_ms, const struct mcp_call_opts *o,
		      cJSON **resp, char **err)
{
	struct http_xfer x = { .c = c, .want_id = id, .o = o };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	bool had_session = c->session != NULL;
	int r = http_start(c, text, timeout_ms, o, &x, err);
	if (r == 0) {
		if (id >= 0)
			get_open(c);
		if (c->get)
			c->get->o = o;
		r = http_run(c, &x.done, false, err);
		if (c->get)
			c->get->o = NULL;
	}
	if (r < 0)
		goto out;
	if (x.session && !strcmp(method, "initialize")) {
		free(c->session);
		c->session = xstrdup(x.session);
	}
	if (x.resp) {
		*resp = x.resp;
		x.resp = NULL;
		goto out;
	}
	if (x.outcome == HTTP_CANCELLED || (x.outcome == HTTP_FAILED && x.timed_out)) {
		bool to = x.outcome == HTTP_FAILED;
		char *reason = to ? xasprintf("timed out after %ld ms", timeout_ms)
				  : xstrdup("cancelled by the client");
		mcp_send_cancel(c, id, reason);
		free(reason);
		if (to && c->get_lost)
			r = err_set(err, "server \"%s\": %s timed out after %ld ms; its GET stream "
				    "was given up (%s), so what the server sent outside the "
				    "call's answer did not arrive", c->cfg.name, method,
				    timeout_ms, c->get_lost);
		else if (to)
			r = err_set(err, "server \"%s\": %s timed out after %ld ms", c->cfg.name,
				    method, timeout_ms);
		else
			r = err_set(err, "server \"%s\": %s cancelled", c->cfg.name, method);
		goto out;
	}
	if (x.overflow) {
		r = err_set(err, "server \"%s\": %s: an answer over %zu bytes", c->cfg.name,
			    method, MCP_MESSAGE_MAX);
		goto out;
	}
	if (x.outcome != HTTP_DONE && x.outcome != HTTP_ABORTED) {
		r = err_set(err, "server \"%s\": %s: %s", c->cfg.name, method,
			    x.error ? x.error : "no answer");
		goto out;
	}
	if (x.status == 404 && had_session) {
		r = MCP_EXPIRED;
		goto out;
	}
	if (x.status < 200 || x.status >= 300) {
		char *snip = body_snippet(&x.body);
		r = err_set(err, "server \"%s\": %s: HTTP %ld%s%s", c->cfg.name, method,
			    x.status, *snip ? ": " : "", snip);
		free(snip);
		goto out;
	}
	if (id < 0)
		goto out;
	if (x.sse) {
		r = err_set(err, "server \"%s\": %s: the event stream ended without an answer",
			    c->cfg.name, method);
		goto out;
	}
	if (http_body_read(c, &x.body, id, o, resp) < 0) {
		char *snip = body_snippet(&x.body);
		r = err_set(err, "server \"%s\": %s: the answer is not JSON: %s", c->cfg.name,
			    method, snip);
		free(snip);
		goto out;
	}
	if (!*resp)
		r = err_set(err, "server \"%s\": %s: no answer to request %lld", c->cfg.name,
			    method, (long long)id);
out:
	xfer_release(&x);
	return r;
}

/* ---- the frames a server sends, outside a call (the fuzzer's) -------- */

int mcp_client_read(struct mcp_client *c, enum mcp_wire kind, const char *const *chunks,
		    const size_t *lens, size_t n, int64_t want_id, cJSON **resp, char **err)
{
	*resp = NULL;
	int r = 0;
	if (kind == MCP_WIRE_STDIO) {
		for (size_t i = 0; i < n && r == 0; i++) {
			if (c->rbuf.len + lens[i] > MCP_MESSAGE_MAX)
				return err_set(err, "server \"%s\": a message over %zu bytes",
					       c->cfg.name, MCP_MESSAGE_MAX);
			sbuf_add(&c->rbuf, chunks[i], lens[i]);
			int t;
			while (r == 0 && (t = mcp_stdio_take_line(c, want_id, NULL, resp)) >= 0)
				r = t;
		}
		return r;
	}
	static const char sse_type[] = "text/event-stream", json_type[] = "application/json";
	const char *type = kind == MCP_WIRE_JSON ? json_type : sse_type;
	if (kind == MCP_WIRE_LISTEN) {
		struct get_stream g = { .c = c };
		sse_init(&g.sp, MCP_MESSAGE_MAX, get_event, &g);
		get_header(&g, "Content-Type", 12, type, strlen(type));
		for (size_t i = 0; i < n && r == 0; i++)
			r = get_data(&g, 200, chunks[i], lens[i]);
		sse_release(&g.sp);
		return r < 0 ? err_set(err, "server \"%s\": the GET stream was dropped",
				       c->cfg.name) : 0;
	}
	struct http_xfer x = { .c = c, .want_id = want_id };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	xfer_header(&x, "Content-Type", 12, type, strlen(type));
	for (size_t i = 0; i < n && r == 0; i++)
		r = xfer_data(&x, 200, chunks[i], lens[i]);
	if (x.resp) {
		*resp = x.resp;
		x.resp = NULL;
		r = 1;
	} else if (x.overflow) {
		r = err_set(err, "server \"%s\": an answer over %zu bytes", c->cfg.name,
			    MCP_MESSAGE_MAX);
	} else if (x.error) {
		r = err_set(err, "server \"%s\": %s", c->cfg.name, x.error);
	} else if (!x.sse && http_body_read(c, &x.body, want_id, NULL, resp) < 0) {
		char *snip = body_snippet(&x.body);
		r = err_set(err, "server \"%s\": the answer is not JSON: %s", c->cfg.name, snip);
		free(snip);
	} else {
		r = *resp ? 1 : 0;
	}
	xfer_release(&x);
	return r;
}
