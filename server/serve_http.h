/* madf serve's HTTP side (server/http.c) and the conversations it streams
 * (server/conv.c). */
#ifndef MADF_SERVE_HTTP_H
#define MADF_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/serve.h"

struct llm_agent_settings;
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

/* The request's fields as server/http.c reads them (exposed for
 * tests/fuzz/fuzz_serve_headers.c):
 * serve_in_list: whether the comma-separated list (MADF_SERVE_HOSTS,
 *   MADF_SERVE_ORIGINS; NULL: empty) has item's n bytes (case-insensitive,
 *   blanks before an element ignored);
 * serve_json_type: whether a Content-Type is application/json;
 * serve_session_of: the session of /api/chat/multi/{sessionId}/WHAT (24
 *   hex digits; a pointer to a copy per thread) with *what "cancel" or
 *   "events", or NULL;
 * serve_last_event_id: a Last-Event-ID value (NULL: absent): 0 when absent
 *   or blank, the id, or -1 when it is not a number of this server's
 *   (digits, at most 18, blanks around). */
bool serve_in_list(const char *list, const char *item, size_t n);
bool serve_json_type(const char *ct);
const char *serve_session_of(const char *url, const char **what);
long serve_last_event_id(const char *v);

/* Runs the server until SIGTERM or SIGINT, then drains: every open stream
 * gets a final recoverable `error` event and closes. The port is printed
 * on stdout's first line. Returns an exit code (EXIT_OK, or with *err). */
int serve_run(const struct serve_options *o, char **err);

/* ---- conversations (server/conv.c, server/stream.c) ----------------------
 * A conversation runs on its own thread and records its events, one JSON
 * line each (its first, conversation_start, kept in memory until the file
 * is made), in <data_dir>/serve-sessions/SESSION.jsonl (SESSION.json is
 * its meta: user, agents, rounds, how it ended, what it used). Streams
 * read that file: any number of them, each at its own place, so a client
 * that reads slowly costs the server no memory and a client that comes
 * back (GET .../events, Last-Event-ID) gets what it missed. A client that
 * goes away does not cancel: with no stream left, the conversation runs
 * on for the grace period (MADF_SERVE_GRACE_S, 60) and is cancelled only
 * if nobody comes back by then. */
struct conv;
struct conv_stream;

struct conv_env {
	const struct llm_agent_settings *llm;
	struct tools *reg;
	struct serve_limits *lim;
	const char *dir;   /* the sessions' directory */
	const struct serve_agent *initiator; /* the agents file's, or NULL */
	int verbose;
	const int64_t *trace; /* the request's marks so far (MADF_SERVE_TRACE), or NULL */
};

/* Starts a conversation of req (taken over; *req is emptied) for user
 * with env's models, tool registry and limits (all must outlive it; the
 * server waits for conv_alive() to reach 0), and returns its first stream
 * (ids: with `id:` lines), its conversation_start recorded already (in
 * memory and in the admissions' journal: the stream sends it at once);
 * its files and its thread are made after, off the request path
 * (server/conv_setup.c). When it ends, the reservation resv ends with the
 * rounds it started (the rest refunded). NULL with *err when its first
 * event cannot be journalled (the reservation is ended then). */
struct conv_stream *conv_start(struct serve_request *req, const struct conv_env *env,
			       const char *user, long resv, bool ids, char **err);
/* GET .../{session}/events: a stream of user's conversation session (a
 * running one, else a recorded one in dir) from the event after last_id
 * (0: from the start), with `id:` lines and a `retry:` first. 0 with
 * *out; 1 when user has no such session (unknown or another user's); 2
 * when it has ended and last_id is its last event (nothing to send: 204);
 * -1 with *err. */
int conv_resume(const char *dir, const char *session, const char *user, long last_id,
		struct conv_stream **out, char **err);
/* Marks step m of the trace of s's conversation (when it has one). */
void conv_stream_mark(struct conv_stream *s, int m);
/* The content reader of a stream (libmicrohttpd's semantics): the next
 * whole events, a ": ping" comment after the keep-alive interval, -1 at
 * the end of the stream, -2 when its file cannot be read (or the server
 * stops while it waits). Never blocks: with nothing to send it suspends
 * its connection and returns 0 (conv_stream_attach). */
ssize_t conv_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
/* The response's free callback: the client is gone (or done). The last
 * stream of a running conversation starts its grace period. */
void conv_stream_free(void *cls);
struct MHD_Connection;
/* The stream's response is queued on conn (a daemon with
 * MHD_ALLOW_SUSPEND_RESUME): from now on its reader never blocks; with
 * nothing to send it suspends conn until an event or its keep-alive. */
void conv_stream_attach(struct conv_stream *s, struct MHD_Connection *conn);
/* The server stops: every suspended stream is resumed and none suspends
 * again (one with nothing to send then ends; its client can resume it).
 * Before MHD_stop_daemon, which refuses suspended connections. */
void conv_streams_stop(void);
/* SIGTERM: every conversation ends with a recoverable `error` event. */
void conv_shutdown_all(void);
/* POST .../{session}/cancel: the running conversation session of user
 * ends with one non-recoverable error CANCELLED and stops. 0, or -1 when
 * user has no such conversation running (unknown, another user's, or
 * ended). */
int conv_cancel(const char *session, const char *user);
/* Conversations still alive (threads or streams). */
size_t conv_alive(void);

/* GET /api/metrics (server/metrics.c): the seed's metrics over the
 * conversations recorded in dir (caller frees): JSON, or the Prometheus
 * text format. The conversations listed one by one are user's only. */
char *serve_metrics(const char *dir, bool prometheus, const char *user);

#endif
