/* The MCP client's insides, shared by core/mcp*.c only: the client's
 * state and what one part calls in another. No other file includes this. */
#ifndef MADF_MCP_PRIV_H
#define MADF_MCP_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/mcp.h"
#include "core/util.h"

#define MCP_MESSAGE_MAX ((size_t)16 << 20) /* longest message we accept */
#define MCP_NOTIFY_TIMEOUT_MS 5000L

struct mcp_client {
	struct mcp_server_config cfg;
	pthread_mutex_t mu;
	char *log_path;      /* NULL: no log */
	int log_fd;
	char **secrets;      /* values never shown */
	size_t nsecrets;
	bool ready;          /* initialized */
	char version[32];
	int64_t next_id;
	/* stdio */
	pid_t pid;
	int in_fd, out_fd, err_fd;
	struct sbuf rbuf, ebuf;
	/* http */
	struct http_multi *m;
	char *session;
	/* The GET stream for server messages outside requests: 0 not tried in
	 * this session, 1 offered, -1 not (HTTP 405 or another failure). */
	int get_stream;
	/* That stream: one a session, opened by its first request and kept
	 * open across calls until the session ends (NULL until then). */
	struct get_stream *get;
	char *last_event_id; /* of its last event: Last-Event-ID next time */
	/* Why that stream was given up (it failed or kept closing empty; not
	 * a 405, which offers none), for a call that then times out: its
	 * messages may be what the call waited for. NULL: not given up. */
	char *get_lost;
};

/* What an exchange ended in, besides 0 and -1. */
#define MCP_EXPIRED (-2)

/* mcp_config.c: a server's configuration released and copied. */
void mcp_server_config_release(struct mcp_server_config *s);
void mcp_server_config_copy(struct mcp_server_config *d, const struct mcp_server_config *s);

/* mcp.c: the log, cancellation, messages from the server. */
void mcp_log(struct mcp_client *c, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool mcp_cancelled(const struct mcp_call_opts *o);
int mcp_on_message(struct mcp_client *c, cJSON *msg, int64_t want_id,
		   const struct mcp_call_opts *o, cJSON **resp);
void mcp_send_cancel(struct mcp_client *c, int64_t id, const char *reason);

/* mcp_stdio.c: the child started, written to and stopped; a line of its
 * output handled; one exchange. */
char *mcp_stdio_stop(struct mcp_client *c, bool gently);
int mcp_stdio_spawn(struct mcp_client *c, char **err);
int mcp_stdio_write(struct mcp_client *c, const char *text, int64_t deadline);
int mcp_stdio_take_line(struct mcp_client *c, int64_t want_id,
			const struct mcp_call_opts *o, cJSON **resp);
int mcp_stdio_exchange(struct mcp_client *c, const char *method, const char *text,
		       int64_t id, long timeout_ms, const struct mcp_call_opts *o,
		       cJSON **resp, char **err);

/* mcp_http.c: a message sent without waiting (either transport), a
 * notification, the end of a session, the session's GET stream stopped;
 * one exchange. */
int mcp_send_message(struct mcp_client *c, const char *text);
int mcp_http_notify(struct mcp_client *c, const char *text, char **err);
void mcp_http_end_session(struct mcp_client *c);
void mcp_http_listen_stop(struct mcp_client *c);
int mcp_http_exchange(struct mcp_client *c, const char *method, const char *text,
		      int64_t id, long timeout_ms, const struct mcp_call_opts *o,
		      cJSON **resp, char **err);

#endif
