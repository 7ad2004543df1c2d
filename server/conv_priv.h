/* Inside madf serve's conversations: struct conv, shared by the runner
 * (server/conv.c), the streams that read it (server/stream.c) and the
 * recorded sessions (server/convlog.c). Not an API. */
#ifndef MADF_SERVE_CONV_PRIV_H
#define MADF_SERVE_CONV_PRIV_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "server/serve_http.h"
#include "server/serve_trace.h"

/* What a conversation used, for /api/metrics (kept in its meta file when
 * it ends). */
struct conv_agent_use {
	char name[65];
	long turns;       /* agent_complete or agent_error ending a turn */
	int64_t turn_ns;  /* their wall time */
};

struct conv_usage {
	long tokens_in, tokens_out;
	long model_calls;
	long tool_calls, tool_errors;
	long agent_errors;
	struct conv_agent_use agents[SERVE_MAX_AGENTS];
	size_t nagents;
};

/* Events recorded before a conversation's files exist: conversation_start
 * at its admission, and a terminal error when it ends before its set-up. */
#define CONV_MEM_LINES 4

/* A conversation: running (listed in the alive list; its thread, started
 * by the set-up, makes its files first), or a recorded one opened to be
 * replayed (no thread, not listed). Its events are lines of
 * <data_dir>/serve-sessions/SESSION.jsonl, event seq N on line N;
 * ends[N-1] is the byte offset just past line N.
 * Until its thread has made that file (server/conv_setup.c), its events
 * are kept in mem (seq 1..nmem, the file's first lines when it is made; a
 * line, once there, never changes or moves). Readers wait on cv. */
struct conv {
	struct conv *next_alive;
	bool listed;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	int attached;        /* streams reading it */
	struct conv_stream *streams; /* those streams (server/stream.c's list) */
	unsigned detach_gen; /* bumped when the last stream goes */
	bool finished;       /* the terminal event is recorded */
	bool broken;         /* the events file cannot be written */
	volatile sig_atomic_t cancel;
	long seq;            /* events recorded */
	int64_t *ends;
	size_t ends_cap;
	char *mem[CONV_MEM_LINES]; /* the events recorded before its file was made */
	long nmem;
	bool setup;          /* its files are made: its events go to the file (c->ev) */
	struct conv *next_setup; /* in the set-up queue (server/conv_setup.c) */
	struct bus_events *ev; /* its events on the bus, appending (NULL: none) */
	char *events_path;
	char *meta_path;
	char session[40];
	char *user;
	char *outcome;       /* "complete" or the terminal error's code */
	int verbose;
	struct serve_request req;
	const struct serve_agent *initiator; /* the file's initiator, or NULL */
	char *initiator_system;
	const struct llm_agent_settings *llm;
	struct tools *reg;
	int64_t start_ns, deadline_ns, created_ns;
	long ping_ms;
	long grace_s;
	struct serve_limits *lim;
	long resv;
	int rounds_started;
	struct conv_usage use;
	struct conv_bus *bus; /* its agents on madf's bus (server/serve_bus.c), or NULL */
	int64_t *trace;       /* its admission's marks (TR_N; MADF_SERVE_TRACE), or NULL */
};

/* The environment variable name as a number in [lo, hi], or def (unset,
 * not a number, or out of range). */
long conv_env_long(const char *name, long def, long lo, long hi);
/* The reference count's end: unlisted and freed at the last. */
void conv_unref(struct conv *c);
void conv_log(const struct conv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A new stream of c (a reference taken, attached) from the event after
 * last_id; ids: `id:` lines; hello: a `retry:` field first. */
struct conv_stream *conv_stream_new(struct conv *c, long last_id, bool ids, bool hello);
/* Every stream of c waiting for an event is resumed (server/stream.c;
 * under c->mu, after an event is recorded or the events end). */
void conv_streams_wake(struct conv *c);
/* The last stream of running c went (gen: c->detach_gen then, with a
 * reference for the timer): its grace period starts. */
void conv_last_detached(struct conv *c, unsigned gen);
/* The running conversation session of user with a reference taken, or
 * NULL. */
struct conv *conv_find_running(const char *session, const char *user);

/* The operator's cancel (the controller's operator_control, server/
 * serve_bus.c): the running conversation session of any user ends with an
 * error CANCELLED. 0 with *detail (caller frees) saying so, or 1 with
 * *detail saying why not (not running here, or ending already). */
int conv_cancel_by(const char *session, const char *who, char **detail);
/* Every running conversation's agents' heartbeats refreshed when older
 * than refresh_ms (the controller's thread). */
void conv_refresh_all(long refresh_ms);

/* Mark m of c's trace (MADF_SERVE_TRACE; each set once), its line written
 * when both its first event is sent and its files are made. */
void conv_trace_mark(struct conv *c, int m);

/* ---- the set-up off the request path (server/conv_setup.c) ---- */

/* Queues running conversation c (a reference taken over) for its start
 * (conv_run), by the set-up's thread, in the order admitted. */
void conv_setup_queue(struct conv *c);
/* Its threads started (before the first request; else at the first
 * conv_setup_queue). */
void conv_setup_start(void);
/* Starts admitted conversation c's thread, which makes its files
 * (convlog_create; when it cannot, it ends with an error) and runs it
 * unless it ended already (a terminal event recorded); without a thread,
 * its files are made here and it ends with an error. Takes over the
 * queue's reference. (server/conv.c) */
void conv_run(struct conv *c);

/* ---- recorded sessions (server/convlog.c) ---- */

/* <data_dir>/serve-sessions (caller frees). */
char *convlog_dir(const char *data_dir);
/* Whether s is a session id (24 lower-case hex digits). */
bool convlog_session_ok(const char *s);
/* c's files' paths in dir (no file is made). */
void convlog_paths(struct conv *c, const char *dir);
/* Opens c's events on the bus (core/bus.h, bus_events_open: the file bus's
 * SESSION.jsonl, which NATS also carries to its stream), writes its meta
 * (running), then the events kept in memory so far, and from then on
 * c's events go there. 0 or -1 with *err (also when the bus is not
 * open). */
int convlog_create(struct conv *c, char **err);
/* Appends one event line (text ends in '\n') under c->mu: to the file, or
 * before c's set-up to memory; the offsets grow. 0, or -1 (c->broken,
 * logged once). */
int convlog_append(struct conv *c, const char *text, size_t len);
/* The admissions' journal, <dir>/admissions.journal: the line of each
 * conversation admitted (its meta and its conversation_start) is appended
 * there before the client gets that event, so that a server stopped (or
 * killed) before the conversation's files were made still has it: at the
 * next start convlog_recover makes them (and records SERVER_SHUTDOWN).
 * Emptied (convlog_journal_compact) when no conversation waits for its
 * set-up. Open: 0 or -1 with *err. */
int convlog_journal_open(const char *dir, char **err);
/* c's line, after its conversation_start is recorded (mem[0]): one more
 * conversation waits for its set-up. 0, or -1 with *err (the admission is
 * refused then; nothing waits). */
int convlog_journal_add(struct conv *c, char **err);
/* A conversation journalled was set up (or failed to be). */
void convlog_journal_done(void);
/* The journal emptied when no conversation waits for its set-up (madf
 * serve's tick, about every second). */
void convlog_journal_compact(void);
void convlog_journal_close(void);
/* The conversation ended: the file is synced and closed, the meta file
 * says how it ended and what it used. */
void convlog_finish(struct conv *c);
/* Opens the recorded session of dir for user, to be replayed: a finished
 * conv with one reference; this host's copy is brought up to date from the
 * bus first (bus_events_fetch: on NATS, a session another serve recorded).
 * 0, 1 when there is none for user (unknown, or another user's), -1 with
 * *err. */
int convlog_open(const char *dir, const char *session, const char *user, struct conv **out,
		 char **err);
/* At the server's start: every session with no terminal event (the server
 * stopped under it) gets one, a recoverable error SERVER_SHUTDOWN, on the
 * bus too, and the rounds its reservation in lim (NULL: none) holds beyond
 * those it started go back to its user; the local copies older than
 * keep_days are removed. Problems are logged. */
void convlog_recover(const char *dir, long keep_days, struct serve_limits *lim);
/* Whether an event line of this type ends a stream. */
bool convlog_terminal(const char *type);
/* Each recorded session's meta (a JSON object, borrowed during fn). */
void convlog_each_meta(const char *dir, void (*fn)(void *ctx, const cJSON *meta), void *ctx);
/* The usage as JSON (new object). */
cJSON *convlog_usage_json(const struct conv_usage *u, int64_t wall_ns, int rounds);

#endif
