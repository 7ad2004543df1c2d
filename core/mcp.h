/* A Model Context Protocol client (JSON-RPC 2.0): servers over stdio
 * (spawned, newline-delimited messages, their stderr into the log) or
 * Streamable HTTP (POST, JSON or SSE answers, Mcp-Session-Id,
 * MCP-Protocol-Version; the server's own GET event stream, one a
 * session: opened by its first request, kept between calls and read while
 * they run (calls block), opened again with Last-Event-ID after the
 * server's retry time when the server closes it, not tried again in a
 * session after a 405; the session ended by DELETE),
 * version negotiation, tools/list with pagination,
 * tools/call, notifications at any time, server requests answered,
 * per-call timeouts and cancellation, restart of a crashed server. No UI.
 *
 * The configuration is the standard .mcp.json:
 *   {"mcpServers": {"NAME": {"command": "...", "args": [...], "env": {...}}
 *                   | {"type": "http", "url": "...", "headers": {...}}}}
 * with ${VAR} and ${VAR:-default} expanded from the environment in
 * command, args, env, url and headers. */
#ifndef MADF_MCP_H
#define MADF_MCP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#define MCP_PROTOCOL_VERSION "2025-11-25" /* the version offered */
#define MCP_DEFAULT_TIMEOUT_MS 60000L
#define MCP_INIT_TIMEOUT_MS 30000L
/* Set (to 1) in the environment of every stdio server madf starts: a madf
 * that finds it set starts no MCP servers of its own, so a configuration
 * naming madf cannot make madf start itself without end. */
#define MCP_CHILD_ENV "MADF_MCP_CHILD"

enum mcp_transport { MCP_STDIO, MCP_HTTP };

struct mcp_server_config {
	char *name;
	enum mcp_transport transport;
	char *command;               /* stdio */
	char **args;
	size_t nargs;
	char **env;                  /* "NAME=value", added to the environment */
	size_t nenv;
	char *url;                   /* http */
	char **headers;              /* "Name: value" */
	size_t nheaders;
};

struct mcp_config {
	char *path;                  /* the file read; NULL when none */
	struct mcp_server_config *servers;
	size_t n;
};

/* Parses .mcp.json text (origin names it in errors). Returns 0, or -1 with
 * *err naming the server and the field; values never appear in errors. */
int mcp_config_parse(const char *text, size_t len, const char *origin,
		     struct mcp_config *out, char **err);
/* Reads path; NULL reads ./.mcp.json when there is one (no servers when
 * there is none). A named file that is missing is an error. */
int mcp_config_load(const char *path, struct mcp_config *out, char **err);
void mcp_config_release(struct mcp_config *c);
const struct mcp_server_config *mcp_config_find(const struct mcp_config *c,
						const char *name);

/* Expands ${VAR} and ${VAR:-default} in s from the environment. Returns a
 * new string, or NULL with *err naming the variable when it is unset and
 * has no default. */
char *mcp_expand(const char *s, char **err);

/* Called for notifications/progress of a call (on the calling thread). */
typedef void (*mcp_progress_fn)(void *ctx, double progress, double total,
				const char *message);

struct mcp_call_opts {
	long timeout_ms;                 /* 0: MCP_DEFAULT_TIMEOUT_MS */
	volatile sig_atomic_t *cancel;   /* nonzero cancels; may be NULL */
	mcp_progress_fn on_progress;     /* may be NULL */
	void *ctx;
};

struct mcp_client;

/* A client for one server (cfg is copied). Nothing starts until the first
 * request. The server's log is <log_dir>/mcp/<name>.log: its stderr (stdio)
 * and its notifications/message, redacted. */
struct mcp_client *mcp_client_new(const struct mcp_server_config *cfg,
				  const char *log_dir);
/* Stops the server (stdio: closes its stdin, then SIGTERM, SIGKILL) and
 * reaps it; over HTTP, ends the session with a DELETE (at most 2 s; a 405
 * answer is fine). NULL-safe; sets *c to NULL. */
void mcp_client_free(struct mcp_client **c);
const char *mcp_client_name(const struct mcp_client *c);
/* s with the environment's secrets and this server's header and secret
 * env values replaced by "[redacted]" (caller frees). */
char *mcp_client_redact(const struct mcp_client *c, const char *s);
/* The server's log file (borrowed). */
const char *mcp_client_log_path(const struct mcp_client *c);

/* Starts the server and initializes the session unless it is running.
 * Returns 0, or -1 with *err. */
int mcp_client_start(struct mcp_client *c, const struct mcp_call_opts *o,
		     char **err);
/* The negotiated protocol version into buf ("" before initialize). */
void mcp_client_version(struct mcp_client *c, char *buf, size_t size);

/* One request: params are taken over (may be NULL). A server that is not
 * running is started (once per call). On success *result is the "result"
 * member (caller deletes). On a JSON-RPC error, a timeout (after which
 * notifications/cancelled is sent), cancellation, or the server's exit,
 * -1 with *err. Thread-safe: requests to one server are serialised. */
int mcp_request(struct mcp_client *c, const char *method, cJSON *params,
		const struct mcp_call_opts *o, cJSON **result, char **err);
/* Every tool, following nextCursor: a new array of tool objects. */
int mcp_list_tools(struct mcp_client *c, const struct mcp_call_opts *o,
		   cJSON **tools, char **err);
/* tools/call: *result is the call's result {"content": [...],
 * "structuredContent"?, "isError"?} (isError is not an error here). */
int mcp_call_tool(struct mcp_client *c, const char *tool, const cJSON *args,
		  const struct mcp_call_opts *o, cJSON **result, char **err);

/* What the client does with bytes a server sent, outside a call (for the
 * fuzzer: the exact paths of a call). The n chunks (lens[i] bytes each)
 * arrive as read() or curl hands them over: MCP_WIRE_STDIO to what a stdio
 * server wrote, each complete line a message; MCP_WIRE_JSON to a POST's
 * 200 application/json answer, read at the end (one message or a batch);
 * MCP_WIRE_SSE to a POST's text/event-stream answer; MCP_WIRE_LISTEN to
 * the GET stream. Other messages are handled as in a call: notifications
 * logged, server requests answered (to a server that is not running: not
 * at all). Returns 1 with *resp (caller deletes) when the response to
 * want_id came, 0 when not, or -1 with *err when the call would fail
 * (too long, not JSON, a broken event stream). */
enum mcp_wire { MCP_WIRE_STDIO, MCP_WIRE_JSON, MCP_WIRE_SSE, MCP_WIRE_LISTEN };
int mcp_client_read(struct mcp_client *c, enum mcp_wire kind, const char *const *chunks,
		    const size_t *lens, size_t n, int64_t want_id, cJSON **resp, char **err);

/* The text of a result's content blocks, one a line; other blocks are
 * described ("[image image/png, 1234 bytes]"). Caller frees. */
char *mcp_content_text(const cJSON *result);

#endif
