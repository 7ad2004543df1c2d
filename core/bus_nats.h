/* The NATS JetStream transport (private to core/bus*.c). The mapping is
 * described in man/madf-messages.5 ("NATS transport"):
 *   inbox of A      stream <P>_in_<A>, subjects <P>.inbox.<A>.<prio>,
 *                   WorkQueue retention, MaxMsgs = the inbox limit,
 *                   Discard=New ("inbox full"), file storage
 *   claim / lease   one delivery of the pull consumer <A>_<prio>
 *                   (AckWait = the lease, MaxDeliver = attempts + 1)
 *   dead letters    stream <P>_dlq, subjects <P>.dlq.<A>, reason headers
 *   dropped         stream <P>_drop, subjects <P>.dropped.<A>: expired
 *                   heartbeats and system_status, counted, not dead
 *   failures        stream <P>_att, subjects <P>.att.<A>.<seq>: one
 *                   record per failed attempt (first and last failure)
 *   logs            stream <P>_log_<A>, subjects <P>.log.<A>.<category>:
 *                   the agent's structured log lines, limits retention
 *   leases          stream <P>_lease, subjects <P>.lease.<A>.<seq>: when
 *                   each renewed claim's lease runs out, for listings
 *   conversations   stream <P>_conv, subjects <P>.conv.<S>.ev (madf serve's
 *                   events of session S, in order) and <P>.conv.<S>.meta
 * P is MADF_NATS_PREFIX (default "madf"). */
#ifndef MADF_BUS_NATS_H
#define MADF_BUS_NATS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nats/nats.h>

#include "core/bus.h"

extern const struct bus_transport bus_nats_transport;

/* True when url names the NATS transport (nats:// or tls://). */
bool bus_nats_url(const char *url);
/* Connects b (b->cfg.url) and prepares the dead-letter streams. */
int bus_nats_open(struct bus *b, char **err);

#define NATS_PREFIX_MAX 32
#define NATS_NAME_MAX 160

struct natsbus {
	natsOptions *opts;
	natsConnection *nc;
	jsCtx *js;
	char prefix[NATS_PREFIX_MAX + 1];
	char *where;          /* the servers, without user or password */
	char *secret;         /* the URL's password (redacted from errors) */
	char *user;           /* the URL's user (redacted too) */
	pthread_mutex_t lock; /* guards ensured (a console's workers share b) */
	char **ensured;       /* agents whose streams this bus set up */
	size_t nensured;
	char owner[96];
	struct nats_bell *bells; /* kept until close: a callback may be running */
	char **logs;          /* agents whose log stream this bus set up (lock) */
	size_t nlogs;
	atomic_bool log_sent; /* a log line was published asynchronously */
	atomic_bool conv_ready; /* the conversations' stream is set up */
	atomic_bool lease_ready; /* the lease records' stream is set up */
	int64_t election_ns;  /* MADF_NATS_ELECTION_S: how long a call is retried */
};

/* A consumer's doorbell: the inbox stream republishes the headers of each
 * new message on <P>.bell.<A>.<prio>; a subscription to them writes efd. */
struct nats_bell {
	struct nats_bell *next;
	natsSubscription *sub;
	int efd;
};
#define NB(b) ((struct natsbus *)(b)->impl)

/* In bus_nats_retry.c: riding through a JetStream leader election (a
 * stream's, a consumer's or the meta group's, some 5 s after a node dies
 * or stops) or a reconnect. A call that times out, finds no responders
 * (503) or is told "JetStream system temporarily unavailable" (10008) is
 * asked again with backoff (100 ms doubling to 1 s, jittered) until
 * nb->election_ns after its first attempt, then fails. Only calls that are
 * safe to repeat are retried: a publish with its Nats-Msg-Id (stored once),
 * a no-wait pull (at worst a claim held until its lease ends, as a lost
 * reply would), an ack, nak or in-progress, stream and consumer set-up,
 * and the reads below (direct gets, stream and consumer information).
 * nats_election_setup reads MADF_NATS_ELECTION_S (seconds, 0 to 3600,
 * default 20): 0, or -1 with *err naming the variable. */
int nats_election_setup(struct natsbus *nb, char **err);
bool nats_transient(natsStatus s, jsErrCode jerr);
/* The deadline of a call starting now (monotonic ns). */
int64_t nats_retry_until(const struct natsbus *nb);
/* Sleeps the backoff before attempt+1 (never past until): false, without
 * sleeping, when until has passed. */
bool nats_retry_wait(int64_t until, int attempt);
/* nats_transient(s, jerr) && nats_retry_wait(until, attempt): the loop's
 * test after each attempt. */
bool nats_retry_again(natsStatus s, jsErrCode jerr, int64_t until, int attempt);
/* The reads of listings, show, retry, delete, trash restore and the
 * console's counts, asked again through an election likewise. Each
 * returns NATS_OK with its result (caller destroys it), NATS_NOT_FOUND
 * when the server answered that there is no such stream, consumer or
 * message (an answer: never asked again), or the status of the last
 * attempt (*jerr set) when it failed, a transient failure only once
 * nb->election_ns has passed: never "not found" for a failure. */
natsStatus nats_stream_info(struct natsbus *nb, const char *stream, jsOptions *o,
			    jsStreamInfo **si, jsErrCode *jerr);
natsStatus nats_consumer_info(struct natsbus *nb, const char *stream, const char *durable,
			      jsConsumerInfo **ci, jsErrCode *jerr);
natsStatus nats_consumers(struct natsbus *nb, const char *stream, jsConsumerInfoList **cl,
			  jsErrCode *jerr);
/* A direct get (d: by sequence, next or last by subject): a stream that
 * does not exist (the get times out; its information says so) is
 * NATS_NOT_FOUND too. */
natsStatus nats_direct_get(struct natsbus *nb, const char *stream, jsDirectGetMsgOptions *d,
			   natsMsg **m);

/* Names: stream of agent's inbox, its subjects, dead letters. */
void nats_stream_name(const struct natsbus *nb, const char *agent, char *buf,
		      size_t size);
void nats_dlq_stream(const struct natsbus *nb, char *buf, size_t size);
/* Expired heartbeats and system_status dropped on receipt: stream <P>_drop,
 * subjects <P>.dropped.<A>, one JSON record each (as bus_drop_note's line),
 * the newest DROP_KEEP kept; the count is the stream's last sequence. */
void nats_drop_stream(const struct natsbus *nb, char *buf, size_t size);
/* Records m, dropped from agent's inbox (reason "expired" or "retention"),
 * in the drop stream; dedup makes a repeated drop count once. */
int nats_publish_drop(struct bus *b, const struct msg *m, const char *agent,
		      const char *reason, const char *dedup, char **err);
#define DROP_KEEP 100000

/* A one-line error from a NATS status (and JetStream code), the user and
 * password of the URL redacted. Returns -1. */
int nats_fail(struct natsbus *nb, char **err, natsStatus s, jsErrCode jerr,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Creates (or updates) agent's inbox stream and its four consumers. */
int nats_ensure_inbox(struct bus *b, const char *agent, char **err);
/* The agents with an inbox stream, the default ones included (sorted,
 * caller frees each and the array). */
int nats_agents(struct bus *b, char ***out, size_t *n, char **err);
/* Publishes payload to agent's inbox with a fresh dedup id made of id and
 * tag (NULL: the id itself). */
int nats_publish_inbox(struct bus *b, const struct msg *m, const char *agent,
		       const char *json, size_t len, const char *dedup,
		       char **err);
/* Publishes a dead letter for agent (see the header names in
 * man/madf-messages.5), deduplicated by dedup. */
struct nats_dead {
	const char *agent, *reason, *error, *message_id;
	const char *from, *to, *type, *first_failure;
	int attempts;
};
int nats_publish_dead(struct bus *b, const struct nats_dead *dl,
		      const char *json, size_t len, const char *dedup,
		      char **err);
/* The stored message at seq of stream by direct get (nats_direct_get):
 * NATS_OK with *m, NATS_NOT_FOUND when it is gone, or the failure. */
natsStatus nats_get(struct natsbus *nb, const char *stream, uint64_t seq, natsMsg **m);
const char *nats_hdr(natsMsg *m, const char *key); /* borrowed, or NULL */
int64_t nats_parse_time(const char *s);             /* RFC 3339, ns */
/* Splits url, "scheme://[user[:pass]@]host:port[,host:port...]" (a
 * bus_nats_url), into full server URLs (*servers, each with the scheme and
 * user; caller frees), nb->where (the shown form, without user or
 * password), nb->user and nb->secret. 0, or -1 with *err. */
int nats_url_split(struct natsbus *nb, const char *url, char ***servers, int *n, char **err);
/* The seq of an event line read back from the conversations' stream (the
 * number after its last "seq":), 0 when it has none. */
long nats_line_seq(const char *p, size_t len);
/* The transport's send (bus_nats_publish.c): m (its JSON text json) to
 * its inbox, deduplicated by its id. */
int nats_send(struct bus *b, const struct msg *m, const char *json, size_t len,
	      char **err);
/* "urgent", "high", "normal", "low": the priorities in names. */
extern const char *const nats_prio_tok[4];

/* MADF_NATS_REPLICAS (1 to 5, default 1), and a stream created, or
 * updated when it exists with another configuration. */
int64_t nats_replicas(void);
int nats_add_stream(struct natsbus *nb, jsStreamConfig *sc, char **err);
/* Adds a limits-retention record stream name on the one subject subj, in
 * file storage with direct gets: kept max_age_days, at most max_msgs
 * messages (0: no limit) of max_size bytes each. 0, or -1 with *err. */
int nats_add_record_stream(struct natsbus *nb, const char *name, const char *subj,
			   int max_age_days, int64_t max_msgs, int32_t max_size, char **err);

/* In bus_nats_log.c: each agent's log lines, stream <P>_log_<A>, subjects
 * <P>.log.<A>.<category>, limits retention. */
int nats_log_append(struct bus *b, const char *agent, const char *category,
		    const char *line, size_t len);
int nats_log_each(struct bus *b, const char *agent, uint64_t after,
		  int (*fn)(void *ctx, const char *category, const char *line,
			    size_t len, uint64_t seq),
		  void *ctx, uint64_t *last, char **err);
int nats_log_agents(struct bus *b, char ***out, size_t *n, char **err);

/* In bus_nats_events.c: madf serve's conversation event logs. */
int nats_events_publish(struct bus *b, const char *session, long seq, const char *data,
			size_t len, bool sync, char **err);
/* The last meta record of session (*meta, new string): 0, 1 when the
 * stream or the session is not there, -1 with *err on the bus's failure. */
int nats_conv_meta(struct natsbus *nb, const char *session, char **meta, char **err);
int nats_events_fetch(struct bus *b, const char *session, long after,
		      int (*fn)(void *ctx, long seq, const char *line, size_t len), void *ctx,
		      char **meta, char **err);
/* In bus_nats_lease.c: a renewed claim's lease recorded (agent's inbox
 * message seq; runs out lease_s from now), and read back into a listed
 * processing entry (lease_ns and owner; left 0 when not known). */
int nats_lease_note(struct bus *b, const char *agent, uint64_t seq, char **err);
void nats_lease_fill(struct natsbus *nb, const char *agent, uint64_t seq, struct bus_entry *e);

/* In bus_nats_admin.c. */
int nats_list(struct bus *b, enum bus_queue q, const char *agent, bool content,
	      struct bus_entry **out, size_t *n, char **err);
int nats_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
		   void *ctx, char **err);
int nats_find(struct bus *b, const char *id, struct bus_entry *out, char **err);
int nats_read(struct bus *b, const struct bus_entry *e, char **json, size_t *len,
	      char **err);
int nats_retry(struct bus *b, const char *id, const char *to, char **note, char **err);
int nats_remove(struct bus *b, const char *id, struct bus_entry *out, char **err);
int nats_kill(struct bus *b, const char *id, const char *why, char **err);
int nats_requeue(struct bus *b, const char *id, const char *json, size_t len,
		 char **err);
int nats_sweep(struct bus *b, const char *agent, char **err);
int nats_gc(struct bus *b, bool dry_run, int64_t now_ns,
	    void (*report)(void *ctx, const char *what, const char *path),
	    void *ctx, char **err);
int nats_monitor_open(struct bus *b, struct bus_monitor **out, char **err);
void nats_monitor_free(struct bus_monitor *m);
int nats_monitor_fd(struct bus_monitor *m);
int nats_monitor_process(struct bus_monitor *m);
void nats_monitor_stats(struct bus_monitor *m, struct bus_stats *out);


#define NATS_UNSUPPORTED "not supported on the nats transport: "

#endif
