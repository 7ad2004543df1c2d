/* HTTP over libcurl's multi interface, driven by the caller's poll loop:
 * http_multi_fds() and http_multi_timeout() say what to wait for,
 * http_multi_dispatch() does the work after poll() returns. No threads.
 * http_multi_run() is the same loop, blocking, for the command line. */
#ifndef MADF_HTTP_H
#define MADF_HTTP_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct http_multi;

/* How a request ended. */
enum http_outcome {
	HTTP_DONE,      /* a response was received completely (any status) */
	HTTP_FAILED,    /* transport error: connect, TLS, reset, timeout */
	HTTP_ABORTED,   /* a callback returned -1 */
	HTTP_CANCELLED, /* the cancel flag was set */
};

struct http_result {
	enum http_outcome outcome;
	long status;        /* HTTP status, 0 when none arrived */
	bool timed_out;     /* HTTP_FAILED by the request's timeout */
	const char *error;  /* curl's reason for HTTP_FAILED, else "" */
};

/* Callbacks, all on the thread that calls http_multi_dispatch(). The
 * header callback sees each "Name: value" header of the final response
 * (name and value trimmed, not NUL-terminated); returning -1 from it or
 * from the data callback aborts the request. */
struct http_request_opts {
	const char *url;
	const char *const *headers; /* "Name: value", NULL-terminated; copied */
	const char *body;           /* POST body (copied); NULL for GET */
	size_t body_len;
	/* The method (copied): NULL for GET without a body and POST with one;
	 * "HEAD" asks for no body; any other ("DELETE", "PUT") is sent as is,
	 * with the body when there is one. */
	const char *method;
	long timeout_ms;            /* the whole transfer; 0 for none */
	long connect_timeout_ms;    /* 0 for curl's default */
	int64_t start_at_ns;        /* util_mono_ns() time to start; 0 = now */
	volatile sig_atomic_t *cancel; /* nonzero cancels; may be NULL */
	int (*on_header)(void *ctx, const char *name, size_t nlen,
			 const char *value, size_t vlen);
	int (*on_data)(void *ctx, long status, const char *buf, size_t len);
	/* Called exactly once, after which the request is gone. */
	void (*on_done)(void *ctx, const struct http_result *res);
	void *ctx;
};

int http_multi_new(struct http_multi **out, char **err);
/* Ends every request still running (their on_done sees HTTP_CANCELLED). */
void http_multi_free(struct http_multi **m);

/* Queues a request (it starts at start_at_ns). Returns 0, or -1 with *err,
 * in which case on_done is never called. */
int http_multi_start(struct http_multi *m, const struct http_request_opts *o,
		     char **err);

/* The sockets to poll: fills up to max entries and returns how many there
 * are (call again with more room when that is more than max). */
size_t http_multi_fds(struct http_multi *m, struct pollfd *fds, size_t max);
/* Milliseconds until http_multi_dispatch() has timed work to do; -1 when
 * nothing is running. */
int http_multi_timeout(struct http_multi *m);
/* Handles the ready sockets in fds (as filled by http_multi_fds and set by
 * poll), timers, queued starts, cancellations and finished requests. */
void http_multi_dispatch(struct http_multi *m, const struct pollfd *fds, size_t n);
/* Requests started or queued and not yet done. */
size_t http_multi_pending(const struct http_multi *m);
/* poll() and dispatch until no request is left. Returns 0, or -1 with
 * *err when poll() fails for another reason than EINTR. */
int http_multi_run(struct http_multi *m, char **err);

#endif
