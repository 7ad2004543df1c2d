/* The message bus. Callers (agents, console, command line) use only the
 * functions below; a transport (the file system one in bus_fs.c, a broker
 * later) implements struct bus_transport. See man/madf-messages.5 for the
 * on-disk format of the file-system transport. */
#ifndef MADF_BUS_H
#define MADF_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/message.h"

struct bus_config {
	char *data_dir;          /* messages live in <data_dir>/messages */
	char *url;               /* the transport: "file:" (the file bus under
				    data_dir) or nats://host:port[,...] */
	bool durable;            /* fsync file and directory on send (default) */
	int max_attempts;        /* MAX_RETRY_ATTEMPTS, default 3 */
	size_t inbox_limit;      /* waiting messages per inbox, default 1000 */
	size_t max_bytes;        /* per message, default 10 MB */
	int64_t retry_base_ms;   /* first backoff, default 1000 */
	int64_t retry_max_ms;    /* backoff cap, default 300000 */
	int64_t lease_s;         /* a claim not renewed for this long is
				    given back, default 300 (claims are
				    renewed while held: see bus_claim) */
	int64_t lease_max_s;     /* renewed only until its handler has held
				    a claim this long, default 1800 */
	double poll_interval_s;  /* MESSAGE_POLL_INTERVAL, default 1.0 */
	bool force_poll;         /* never use inotify (NFS) */
};

/* Defaults, then MAX_RETRY_ATTEMPTS, MESSAGE_POLL_INTERVAL,
 * MADF_INBOX_LIMIT, MADF_RETRY_BASE_MS, MADF_LEASE_S, MADF_LEASE_MAX_S,
 * MADF_NO_FSYNC,
 * MADF_FORCE_POLL, and the transport URL from MADF_BUS (else BUS_URL,
 * else "file:") from the environment. data_dir is copied. */
void bus_config_init(struct bus_config *cfg, const char *data_dir);
void bus_config_release(struct bus_config *cfg);

enum bus_queue {
	BUS_Q_INBOX,
	BUS_Q_PROCESSING,
	BUS_Q_RETRY,
	BUS_Q_DEAD,
	BUS_Q_PROCESSED,
	BUS_Q_COUNT
};
const char *bus_queue_name(enum bus_queue q);
int bus_queue_from_name(const char *s); /* -1 if unknown */

/* One stored message as listed; fields from the file name, and from the
 * file's content when listed with content. */
struct bus_entry {
	enum bus_queue queue;
	char *agent;        /* inbox/processing/retry owner; NULL otherwise */
	char *name;         /* file name */
	char *path;         /* full path */
	char *message_id;   /* from the name or the content */
	enum msg_priority priority;
	int64_t enqueued_ns;
	int attempts;
	int64_t due_ns;     /* retry: when it becomes due */
	char *owner;        /* processing: the consumer holding it */
	int64_t lease_ns;   /* processing: when its lease runs out unless
			       renewed again (realtime; 0: not known) */
	/* with content: */
	char *from, *to, *type;
	char *reason;       /* dead letter: the reason code */
	char *error;        /* dead letter: what went wrong */
	char *original_inbox;
	size_t size;
};
void bus_entry_release(struct bus_entry *e);
void bus_entries_free(struct bus_entry *v, size_t n);

struct bus_agent_stats {
	char agent[MSG_AGENT_MAX + 1];
	size_t depth;            /* waiting in the inbox */
	int64_t oldest_ns;       /* enqueue time of the oldest waiting; 0 if none */
	size_t processing;
	size_t retry;
};

struct bus_stats {
	struct bus_agent_stats *agents; /* sorted by name */
	size_t nagents;
	size_t processing, retry, dead_letter;
	uint64_t dead_gen;  /* changes whenever a dead letter comes or goes */
	/* Delivered: messages acked (moved to processed/) since the monitor
	 * opened, and per second over the last few seconds. Counted from
	 * inotify events; 0 when polling and for one-shot bus_stats. */
	uint64_t acked;
	double acked_per_s;
	/* Expired heartbeats and status messages dropped (not dead-lettered),
	 * as messages/dropped/expired.jsonl records them. */
	uint64_t expired_dropped;
};
void bus_stats_release(struct bus_stats *s);

/* A claimed message. */
struct bus_delivery {
	struct msg *msg;
	int attempts;        /* earlier failed attempts */
	char *name;          /* transport handle */
	char *canon;         /* transport handle */
	char *agent;
	struct bus_lease *lease; /* its renewal (core/bus_lease.c); NULL: none */
};

/* What a consumer or a sweep did with a message it could not deliver. */
typedef void (*bus_dead_fn)(void *ctx, const char *agent, const char *name,
			    const char *reason, const char *error);
/* A claim whose handler has held it lease_max_s: its renewal stopped (see
 * bus_claim). Called on the bus's lease thread, not the consumer's: it may
 * only do what is safe there (log_write is). held_ms: how long it was held. */
typedef void (*bus_lease_max_fn)(void *ctx, const char *agent, const char *message_id,
				 int64_t held_ms, int64_t max_s);

struct bus;
struct bus_consumer;
struct bus_monitor;
struct bus_keeper;
struct bus_lease;

/* The transport interface. */
struct bus_transport {
	const char *name;
	int (*send)(struct bus *b, const struct msg *m, const char *json,
		    size_t len, char **err);
	int (*consumer_open)(struct bus *b, const char *agent,
			     struct bus_consumer **out, char **err);
	void (*consumer_free)(struct bus_consumer *c);
	int (*consumer_fd)(struct bus_consumer *c);
	int (*consumer_wait)(struct bus_consumer *c, int timeout_ms);
	int (*consumer_timeout)(struct bus_consumer *c);
	int (*claim)(struct bus_consumer *c, struct bus_delivery **d,
		     char **err);
	int (*ack)(struct bus_consumer *c, struct bus_delivery *d, char **err);
	int (*nack)(struct bus_consumer *c, struct bus_delivery *d,
		    const char *error, bool permanent, char **err);
	int (*release)(struct bus_consumer *c, struct bus_delivery *d,
		       char **err);
	/* Extends d's lease to lease_s from now; may be called from another
	 * thread than the consumer's (never at the same time as an answer to
	 * d or the consumer's free). */
	int (*renew)(struct bus_consumer *c, const struct bus_delivery *d,
		     char **err);
	int (*list)(struct bus *b, enum bus_queue q, const char *agent,
		    bool content, struct bus_entry **out, size_t *n,
		    char **err);
	int (*each_dead)(struct bus *b,
			 void (*fn)(void *ctx, const struct bus_entry *e),
			 void *ctx, char **err);
	int (*find)(struct bus *b, const char *id, struct bus_entry *out,
		    char **err);
	int (*read)(struct bus *b, const struct bus_entry *e, char **json,
		    size_t *len, char **err);
	int (*retry)(struct bus *b, const char *id, const char *to,
		     char **note, char **err);
	int (*remove)(struct bus *b, const char *id, struct bus_entry *out,
		      char **err);
	int (*kill)(struct bus *b, const char *id, const char *why,
		    char **err);
	int (*requeue)(struct bus *b, const char *id, const char *json,
		       size_t len, char **err);
	int (*sweep)(struct bus *b, const char *agent, char **err);
	int (*gc)(struct bus *b, bool dry_run, int64_t now_ns,
		  void (*report)(void *ctx, const char *what, const char *path),
		  void *ctx, char **err);
	int (*monitor_open)(struct bus *b, struct bus_monitor **out,
			    char **err);
	void (*monitor_free)(struct bus_monitor *m);
	int (*monitor_fd)(struct bus_monitor *m);
	int (*monitor_process)(struct bus_monitor *m);
	void (*monitor_stats)(struct bus_monitor *m, struct bus_stats *out);
	/* Logs on the bus (NULL: the transport keeps none; logs stay in the
	 * local files). */
	int (*log_append)(struct bus *b, const char *agent, const char *category,
			  const char *line, size_t len);
	int (*log_each)(struct bus *b, const char *agent, uint64_t after,
			int (*fn)(void *ctx, const char *category, const char *line,
				  size_t len, uint64_t seq),
			void *ctx, uint64_t *last, char **err);
	int (*log_agents)(struct bus *b, char ***out, size_t *n, char **err);
	/* Conversation event logs (NULL: the local files are the record):
	 * one event line (seq >= 1) or the meta (seq 0) of session carried
	 * to the bus (without waiting unless sync); and the events after
	 * `after` read back in order, with the newest meta in *meta (caller
	 * frees; NULL: none). events_fetch returns 1 when the bus has no such
	 * session. */
	int (*events_publish)(struct bus *b, const char *session, long seq,
			      const char *data, size_t len, bool sync, char **err);
	int (*events_fetch)(struct bus *b, const char *session, long after,
			    int (*fn)(void *ctx, long seq, const char *line, size_t len),
			    void *ctx, char **meta, char **err);
	/* An agent that is gone for good (a conversation's): its empty
	 * inbox goes (NULL: nothing to do). */
	int (*forget)(struct bus *b, const char *agent, char **err);
	const char *(*owner)(struct bus *b);
	bool (*owner_gone)(struct bus *b, const char *owner);
	void (*close)(struct bus *b);
};

struct bus {
	const struct bus_transport *t;
	struct bus_config cfg;
	bus_dead_fn on_dead;
	void *on_dead_ctx;
	bus_lease_max_fn on_lease_max;
	void *on_lease_max_ctx;
	void *impl;
	struct bus_keeper *keeper; /* renews claims (core/bus_lease.c) */
};

/* Opens the bus cfg->url names (the configuration is copied): the
 * file-system bus under cfg->data_dir, creating the directories it needs,
 * or the NATS JetStream bus (core/bus_nats.h). Errors never show the
 * URL's user or password. */
int bus_open(const struct bus_config *cfg, struct bus **out, char **err);
void bus_free(struct bus **b);

/* Validates m and delivers it to m->to's inbox (to every agent for
 * "broadcast"). Refuses invalid messages, messages over the size limit
 * and sends to a full inbox (the error says so). */
int bus_send(struct bus *b, const struct msg *m, char **err);

/* Consuming one agent's inbox. claim returns 1 with *d, 0 when nothing is
 * deliverable now, -1 on error. Messages that can never be delivered
 * (invalid, too large, expired, not a regular file...) are moved to the
 * dead letters on the way, reported through bus->on_dead.
 * The lease: a claimed message is the consumer's for lease_s
 * (MADF_LEASE_S); a claim whose lease runs out is given back and delivered
 * again (one more attempt). While a delivery is held (from bus_claim until
 * bus_ack, bus_nack, bus_giveback or bus_delivery_free), a thread of the
 * bus's own renews its lease every third of lease_s, whatever the
 * consumer's thread does meanwhile (a handler may block it for a long time),
 * but only until the handler has held it lease_max_s (MADF_LEASE_MAX_S):
 * then the renewal stops (bus->on_lease_max is told), so that a hung
 * handler does not keep its message for ever: its lease runs out (at most
 * lease_s later) and it is delivered again as one more attempt, to the
 * dead letters after max_attempts. The handler has lost it: its bus_ack,
 * bus_nack or bus_giveback fails ("lost the claim"), answering nothing. A
 * consumer that dies (kill -9) or stops (SIGSTOP) renews nothing, so its
 * claims come back after the lease (on the file bus, a claim of this very
 * process's whose lease ran out too). */
int bus_consumer_open(struct bus *b, const char *agent,
		      struct bus_consumer **out, char **err);
void bus_consumer_free(struct bus_consumer **c);
int bus_consumer_fd(struct bus_consumer *c); /* -1 when polling */
/* Waits until a message may be claimable or timeout_ms passes (-1:
 * forever). Returns 1 if something changed, 0 on timeout, -1 on error. */
int bus_consumer_wait(struct bus_consumer *c, int timeout_ms);
/* For a reactor (core/loop.h) instead of bus_consumer_wait: milliseconds
 * until a claim may find something although the consumer's fd stayed
 * quiet (a retry's backoff ends, the poll interval passes; 0: now). When
 * the fd rings, or that time has passed, call bus_consumer_wait(c, 0) (it
 * drains the fd; a polling consumer rescans), then claim. */
int bus_consumer_timeout(struct bus_consumer *c);
int bus_claim(struct bus_consumer *c, struct bus_delivery **d, char **err);
/* Done: the message moves to processed/. Frees *d. Each answer fails,
 * answering nothing, when the handler held d past lease_max_s (above). */
int bus_ack(struct bus_consumer *c, struct bus_delivery **d, char **err);
/* Failed: retried with backoff, or dead-lettered after max_attempts (at
 * once when permanent). Frees *d. */
int bus_nack(struct bus_consumer *c, struct bus_delivery **d,
	     const char *error, bool permanent, char **err);
/* Gives the message back untouched (shutdown). Frees *d. */
int bus_giveback(struct bus_consumer *c, struct bus_delivery **d, char **err);
/* Extends the lease on a claimed message now (the bus renews held
 * deliveries by itself; this is for a caller that wants it done at once).
 * 0, or -1 with *err (the claim is gone: given back when its lease ran
 * out; or the broker did not answer). */
int bus_lease_renew(struct bus_consumer *c, const struct bus_delivery *d, char **err);
/* How many deliveries of b are being renewed now; *renewed and *failed
 * (may be NULL) count the renewals done and failed since b opened. */
size_t bus_lease_held(struct bus *b, uint64_t *renewed, uint64_t *failed);
/* How many deliveries of b had their renewal stopped since b opened, held
 * past lease_max_s. */
uint64_t bus_lease_capped(struct bus *b);
/* Stops b's lease keeping for good (bus_free does it too): its thread
 * joined, so no renewal and no on_lease_max call is under way once this
 * returns, nor any later (a claim made after is not renewed). Call it
 * before freeing what on_lease_max_ctx points to, or anything the callback
 * touches. Not from on_lease_max itself. */
void bus_lease_stop(struct bus *b);
/* Frees *d (and stops renewing it) without answering: the claim stays
 * until its lease runs out, as a dead consumer's would. */
void bus_delivery_free(struct bus_delivery **d);

/* Administration (command line, console). ids are message ids or file
 * names. */
int bus_list(struct bus *b, enum bus_queue q, const char *agent,
	     bool content, struct bus_entry **out, size_t *n, char **err);
/* Every dead letter, with its content, passed to fn in no particular order:
 * as bus_list(BUS_Q_DEAD, content) without holding them all. The entry and
 * its strings are borrowed for the call only. */
int bus_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
		  void *ctx, char **err);
int bus_find(struct bus *b, const char *id, struct bus_entry *out,
	     char **err);
int bus_read(struct bus *b, const struct bus_entry *e, char **json,
	     size_t *len, char **err);
/* A dead letter back to its original inbox, or to `to`. An expired one
 * (its timeout passed, or dead-lettered as expired) is refreshed: sent
 * again with a new timestamp, so that its timeout counts from now; *note
 * (may be NULL; caller frees, NULL when nothing to say) says so. */
int bus_retry(struct bus *b, const char *id, const char *to, char **err);
int bus_retry_note(struct bus *b, const char *id, const char *to, char **note,
		   char **err);
/* Deletes a waiting, retrying or dead message: into the trash, whence
 * bus_trash_restore puts it back, for BUS_TRASH_DAYS. bus_remove_entry
 * also fills *out (caller releases) with what was deleted: id, from, to,
 * type, the queue and agent it was in, a dead letter's reason. */
int bus_remove(struct bus *b, const char *id, char **err);
int bus_remove_entry(struct bus *b, const char *id, struct bus_entry *out, char **err);

/* The trash (messages/trash/): each deleted message's file as it was, and
 * a sidecar saying where it was (queue, agent, file name) and what it was.
 * Kept as long as dead letters are; `madf gc` purges older ones. */
#define BUS_TRASH_DAYS 30
struct bus_trash_entry {
	char *name;          /* file name in the trash */
	char *path;
	char *message_id, *from, *to, *type;
	enum bus_queue queue; /* where it was deleted from */
	char *agent;          /* its inbox or retry owner; NULL for a dead letter */
	char *file;           /* its name there */
	char *reason;         /* a dead letter's reason; NULL otherwise */
	int64_t deleted_ns;
};
void bus_trash_entries_free(struct bus_trash_entry *v, size_t n);
/* Whether b keeps deleted messages (the file bus); on NATS a delete is
 * permanent, and the trash functions fail saying so. */
bool bus_has_trash(const struct bus *b);
/* Every message in the trash, the last deleted first. */
int bus_trash_list(struct bus *b, struct bus_trash_entry **out, size_t *n, char **err);
/* Puts back every trash entry whose message id or trash file name is id,
 * where it was deleted from, unchanged. *where (may be NULL; caller frees)
 * says where to ("inbox of research_agent_1", "dead letters"). */
int bus_trash_restore(struct bus *b, const char *id, char **where, char **err);
/* Moves a waiting or retrying message to the dead letters. */
int bus_kill(struct bus *b, const char *id, const char *why, char **err);
/* Replaces a dead letter with edited JSON (validated first) and queues it
 * to the edited message's `to`. */
int bus_requeue(struct bus *b, const char *id, const char *json, size_t len,
		char **err);
/* Gives back claims whose consumer died or whose lease ran out, promotes
 * due retries (agent NULL: every agent). */
int bus_sweep(struct bus *b, const char *agent, char **err);
/* Retention: processed 7 days, dead letters and the trash 30 days,
 * outbox and broadcast copies 7 days, temporary files older than an hour;
 * messages waiting over 24 h: heartbeats and status messages dropped and
 * counted as expired ones are (reason "retention"), replies in the
 * operator's inbox marked read (processed), the rest to the dead letters
 * (reason "retention"). report's `what` for those three is one of the
 * BUS_GC_* strings, so that a caller can count them. */
#define BUS_GC_DROPPED "heartbeat or status message waiting over 24 hours, dropped"
#define BUS_GC_READ "reply to the operator waiting over 24 hours, marked read"
#define BUS_GC_DEAD "waiting over 24 hours, to the dead letters"
enum bus_gc_fate { BUS_GC_FATE_DROP, BUS_GC_FATE_READ, BUS_GC_FATE_DEAD };
/* What retention does with a message of type (its name; NULL if unknown)
 * waiting in agent's inbox over 24 hours. */
enum bus_gc_fate bus_gc_fate(const char *agent, const char *type);
int bus_gc(struct bus *b, bool dry_run, int64_t now_ns,
	   void (*report)(void *ctx, const char *what, const char *path),
	   void *ctx, char **err);

/* Counters kept incrementally from file-system events. */
int bus_monitor_open(struct bus *b, struct bus_monitor **out, char **err);
void bus_monitor_free(struct bus_monitor **m);
int bus_monitor_fd(struct bus_monitor *m);
/* Reads pending events; returns 1 if counters changed, 0 if not. */
int bus_monitor_process(struct bus_monitor *m);
void bus_monitor_stats(struct bus_monitor *m, struct bus_stats *out);

/* One scan, for one-shot commands. */
int bus_stats(struct bus *b, struct bus_stats *out, char **err);

/* This process as a consumer ("HOST-PID-START"), and whether the
 * consumer named by an owner string is gone for sure (same host, process
 * dead or its pid reused). Agents sharing a state file use them too. */
const char *bus_owner(struct bus *b);
bool bus_owner_gone(struct bus *b, const char *owner);

/* An agent gone for good (madf serve's conversation agents, at the
 * conversation's end): its inbox, claim and retry places go when they are
 * empty, so that it is no longer listed (madf status, the console); what
 * still waits there stays. 0, or -1 with *err. */
int bus_forget_agent(struct bus *b, const char *agent, char **err);

/* Backoff before attempt n (n >= 1) in ms, with jitter in [d/2, d]. */
int64_t bus_backoff_ms(const struct bus_config *cfg, int n);

/* For the transports. A stored message read back for an operator's
 * retry: parsed into *m, or -1 with *err saying it is invalid and how to
 * fix it (name: its stored name). */
int bus_parse_stored(const char *name, const char *buf, size_t len, struct msg **m,
		     char **err);
/* Why a parsed message cannot be delivered to agent's consumer, or NULL
 * when it can: "misrouted" or "expired", with *error (caller frees). */
const char *bus_undeliverable(const struct msg *m, const char *agent, char **error);

/* Logs on the bus. On NATS each agent's structured log lines also go to
 * a stream of its own (see man/madf-messages.5), so that the console and
 * the learning system see every agent's log wherever it ran; the file bus
 * keeps none (its logs are the local files under the log directory). */
bool bus_carries_logs(const struct bus *b);
/* Publishes one log line of agent (category: log_cat_name's), without
 * waiting; best effort, -1 when it could not be queued. */
int bus_log_append(struct bus *b, const char *agent, const char *category,
		   const char *line, size_t len);
/* A sink for agent_log_set_sink (core/log.h): ctx is the bus. */
void bus_log_sink(void *ctx, const char *agent, const char *category,
		  const char *line, size_t len);
/* Brings the local copy of the bus's logs under dir up to date: every
 * agent's lines as <dir>/agents/<agent>/<category>/<YYYY-MM-DD>.jsonl (the
 * line's date), the layout of a log directory, so that what reads a log
 * directory reads dir. Only the lines not copied yet are fetched (the last
 * sequence copied is kept per agent in <dir>/.seq/); concurrent calls on
 * one dir take turns. On a bus without logs, does nothing. Returns 0, or
 * -1 with *err. */
int bus_log_mirror(struct bus *b, const char *dir, char **err);
/* Where a process with data_dir reads every agent's log: <data_dir>/
 * bus-logs when the bus carries logs (brought up to date first; *err
 * says why it could not be, and the copy so far is read), else log_dir.
 * Caller frees. */
char *bus_log_root(struct bus *b, const char *data_dir, const char *log_dir, char **err);

/* ---- conversation event logs (madf serve) ----
 * Each conversation's Server-Sent Events in order, one JSON line each
 * (event seq N on line N, the line without "data: "), in
 * <data_dir>/BUS_EVENTS_DIR/SESSION.jsonl, and its meta (a JSON object:
 * user, agents, state, outcome, usage) in SESSION.json. The files are the
 * file bus's record of the conversation and, on a bus that spans hosts,
 * this host's copy that streams read: on NATS every line and every meta
 * also goes to the stream <P>_conv (subjects <P>.conv.SESSION.ev and
 * <P>.conv.SESSION.meta), and bus_events_fetch brings a host's copy up to
 * date from there, so that a serve on another host (or one whose disk was
 * lost) replays what was recorded. No fsync per event: the lines are
 * synced when the conversation ends. See man/madf-messages.5. */
#define BUS_EVENTS_DIR "serve-sessions"
struct bus_events;
/* Opens session's events for appending: created (create; it must not
 * exist), or an existing one (a line to add at recovery). *out is the
 * caller's (bus_events_close). 0, or -1 with *err. */
int bus_events_open(struct bus *b, const char *session, bool create, struct bus_events **out,
		    char **err);
/* Appends event seq's line (len bytes, ending in '\n') whole. 0, or -1 with
 * *err (errno set when the file failed). */
int bus_events_append(struct bus_events *e, long seq, const char *line, size_t len, char **err);
/* Closes the events (synced first when sync) and frees *e. */
void bus_events_close(struct bus_events **e, bool sync);
/* Writes session's meta (json, len bytes) atomically, and carries it to
 * the bus (waiting until it is stored when sync). 0, or -1 with *err. */
int bus_events_put_meta(struct bus *b, const char *session, const char *json, size_t len,
			bool sync, char **err);
/* Brings this host's copy of session up to date from the bus: the events
 * it lacks appended, the meta rewritten. 0 (up to date, or the bus keeps
 * no copy of its own: the file bus), 1 when neither the bus nor this host
 * has the session, -1 with *err. */
int bus_events_fetch(struct bus *b, const char *session, char **err);
/* What the bus carries of the conversations, read without writing this
 * host's copies (core/bus_nats_sessions.c; for a watcher on another host,
 * as the console): the sessions with a meta on the bus (*out an array of
 * names, each and the array the caller's; none on the file bus, whose
 * record is the local files), 0 or -1 with *err; one session's meta as
 * last written (*meta the caller's), 0, 1 when the bus has none, -1 with
 * *err; and its events after the bus's position *pos (0: from the first),
 * at most max, each line to fn, *pos moved past them: how many were read
 * (0: none yet, or the file bus), or -1 with *err. */
int bus_events_sessions(struct bus *b, char ***out, size_t *n, char **err);
int bus_events_meta(struct bus *b, const char *session, char **meta, char **err);
int bus_events_read(struct bus *b, const char *session, uint64_t *pos, size_t max,
		    void (*fn)(void *ctx, const char *line, size_t len), void *ctx, char **err);

/* The default agents whose inboxes always exist. */
extern const char *const bus_default_agents[];
extern const size_t bus_default_agent_count;

#endif
