/* madf serve's HTTP side (server/http.c) and the conversations it streams
 * (server/conv.c). */
#ifndef MADF_SERVE_HTTP_H
#define MADF_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/serve.h"

struct llm_settings;
struct tools;

struct serve_options {
	const char *listen;     /* ADDR:PORT; port 0: any free one */
	const char *data_dir;
	const char *log_dir;
	const char *mcp_config; /* NULL: ./.mcp.json when there is one */
	bool behind_tls_proxy;  /* a non-loopback address is allowed */
	const char *tls_cert;   /* PEM files: HTTPS (GnuTLS); both or neither */
	const char *tls_key;
	int verbose;
};

/* Runs the server until SIGTERM or SIGINT, then drains: every open stream
 * gets a final recoverable `error` event and closes. The port is printed
 * on stdout's first line. Returns an exit code (EXIT_OK, or with *err). */
int serve_run(const struct serve_options *o, char **err);

/* ---- conversations (server/conv.c) ---------------------------------------
 * A conversation runs on its own thread and queues its events; the
 * connection's thread reads them (conv_read). Both hold a reference. */
struct conv;

/* Starts a conversation of req (taken over; *req is emptied) for user with
 * the models of llm and the tool registry reg (both must outlive it; the
 * server waits for conv_alive() to reach 0). When its thread ends, the
 * reservation resv of lim (outliving it too) ends with the rounds it
 * started (the rest refunded). Never fails. */
struct conv *conv_start(struct serve_request *req, const struct llm_settings *llm,
			struct tools *reg, const char *user, int verbose,
			struct serve_limits *lim, long resv);
/* The content reader of the stream (libmicrohttpd's semantics): the next
 * whole event, a ": ping" comment after the keep-alive interval, -1 at the
 * end of the stream. Blocks. */
ssize_t conv_read(void *cls, uint64_t pos, char *buf, size_t max);
/* The response's free callback: the client is gone (or done); the
 * conversation is cancelled if still running. */
void conv_detach(void *cls);
/* SIGTERM: every conversation ends with a recoverable `error` event. */
void conv_shutdown_all(void);
/* POST .../{session}/cancel: the running conversation session of user
 * ends its stream with one non-recoverable error CANCELLED and stops. 0, or
 * -1 when user has no such conversation running (unknown, another user's,
 * or ended). */
int conv_cancel(const char *session, const char *user);
/* Conversations still alive (threads or streams). */
size_t conv_alive(void);

#endif
