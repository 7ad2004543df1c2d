/* The agent runtime: an agent is a role (a name and a handler per message
 * type) with an inbox, tools, a logger and persisted state. The same code
 * runs embedded (one thread per agent inside `madf run` or the console) or
 * alone (`madf agent NAME`), against the same bus. */
#ifndef MADF_RUNTIME_H
#define MADF_RUNTIME_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/cache.h"
#include "core/log.h"
#include "core/tools.h"

/* What a handler says happened to a message. */
enum agent_outcome {
	AGENT_DONE,      /* ack */
	AGENT_RETRY,     /* nack: retried with backoff, dead-lettered at the end */
	AGENT_REJECT,    /* nack, permanent: straight to the dead letters */
};

/* Faults injected for recovery tests (--inject-fault AGENT:KIND). */
enum agent_fault {
	FAULT_NONE,
	FAULT_ERROR,     /* answers every task with error_report */
	FAULT_MALFORMED, /* sends a result that fails validation */
	FAULT_SLOW,      /* misses its deadlines */
	FAULT_CRASH,     /* dies after accepting its first task */
};
int agent_fault_from_name(const char *s); /* -1 if unknown */

struct llm_agent_settings;

/* Shared by every agent of one process. */
struct agent_env {
	struct bus_config bcfg;     /* copied per agent */
	char *data_dir, *log_dir;
	struct cache *cache;
	struct tools *tools;
	atomic_int stop;            /* set to ask every agent to stop */
	char *market_source;        /* "csv:PATH" or "sim" */
	char *news_source;          /* "jsonl:PATH", "rss:PATH" or "sim" */
	char *report_dir;           /* final reports; NULL: data/reports/weekly */
	int64_t task_timeout_s;     /* deadline of a task after assignment */
	int capacity;               /* queued tasks an agent accepts */
	int64_t heartbeat_ms;
	char *faults[16];           /* "agent:kind" */
	size_t nfaults;
	struct data_store *data;    /* see agents/data_tools.h */
	struct llm_agent_settings *llm;   /* LLM mode (agents/llm_agent.h); NULL:
				       the deterministic agents */
};
void agent_env_init(struct agent_env *e, const char *data_dir, const char *log_dir);
void agent_env_release(struct agent_env *e);
enum agent_fault agent_env_fault(const struct agent_env *e, const char *agent);

struct agent;
struct data_store;
struct llm_agent_settings;

struct agent_role {
	const char *name;
	/* Sets up a->impl; may read a->state. */
	int (*init)(struct agent *a, char **err);
	/* One message; returns an agent_outcome, *err set for RETRY/REJECT. */
	int (*handle)(struct agent *a, const struct msg *m, char **err);
	/* Background work between messages; returns ms until it wants to run
	 * again (-1: only after a message). */
	int64_t (*tick)(struct agent *a);
	void (*fini)(struct agent *a);
	/* Several processes of this role may share its state file: saves
	 * merge what the others wrote (see agent_save_state). */
	bool shared_state;
	/* It queues up to env->capacity tasks per process and rejects more:
	 * its heartbeats say so ("capacity"), the product_manager's dispatch
	 * window is the sum over its live processes. */
	bool has_capacity;
};

struct agent {
	const struct agent_role *role;
	char name[MSG_AGENT_MAX + 1];
	struct agent_env *env;
	struct bus *bus;
	struct bus_consumer *cons;
	struct log_writer *log;
	cJSON *state;           /* persisted in data/state/<name>-state.json */
	char *state_path;
	enum agent_fault fault;
	bool crashed;           /* an injected crash happened */
	void *impl;
	/* for heartbeat and system_status */
	int64_t started_ns, last_success_ns, next_heartbeat_ns, next_status_ns;
	int active_tasks, completed_today, errors_today;
	bool waiting;           /* has queued work, none of it doable yet */
	uint64_t heartbeat_seq;
	char current_task[MSG_ID_MAX + 1];
	pthread_t thread;
};

/* Creates an agent of role for env: its bus, consumer, log and state. */
int agent_open(const struct agent_role *role, struct agent_env *env,
	       struct agent **out, char **err);
void agent_free(struct agent **a);
/* Runs until env->stop is set (or an injected crash): claims, handles,
 * acks; ticks; heartbeats; saves state. A handler may block the thread as
 * long as it needs: the bus renews the claim's lease meanwhile (see
 * bus_claim), until the answer; an injected crash leaves the claim
 * unanswered and renewed no more, as a dead process's. On stop, gives back what it holds
 * and saves state. The thread's reactor (core/loop.h) watches the
 * consumer's fd; env->stop is noticed within 250 ms. Returns 0, or -1 when
 * the reactor cannot be made (logged). */
int agent_run(struct agent *a);
/* Starts agent_run on a thread of its own. */
int agent_start_thread(struct agent *a, char **err);
void agent_join(struct agent *a);

/* Sends a message from this agent (content is taken over). id may be NULL
 * for a fresh id, or a preset id (idempotent resends); the id used is
 * copied to id_out (MSG_ID_MAX + 1 bytes) when not NULL. */
int agent_send(struct agent *a, const char *to, enum msg_type type,
	       cJSON *content, const char *id, const char *reply_to,
	       const char *correlation_id, enum msg_priority prio,
	       char *id_out, char **err);
/* Sends an invalid message on purpose (FAULT_MALFORMED): bypasses the
 * sender's validation so that the receiver's validation catches it. */
int agent_send_malformed(struct agent *a, const char *to, enum msg_type type,
			 cJSON *content, const char *reply_to,
			 const char *correlation_id);

/* Saves a->state atomically. For a shared_state role, under an flock on
 * the state file's .lock, the entries of its "tasks" and "validated" maps
 * that other processes wrote are merged in first (of two versions of one
 * entry the one with the larger "updated_ns" wins). */
int agent_save_state(struct agent *a, char **err);
/* As agent_save_state, with fn(a, ctx) called after the merge and before
 * the write, while the lock is held: a change decided on the merged state
 * (adopting a dead process's task) cannot race another process's. */
int agent_state_locked(struct agent *a, void (*fn)(struct agent *a, void *ctx),
		       void *ctx, char **err);
void agent_heartbeat_now(struct agent *a);
/* From inside a long handle (the review master's review): a "busy"
 * heartbeat when one is due, so that the agent is not taken for hung. */
void agent_heartbeat_busy(struct agent *a);

/* The roles. */
extern const struct agent_role role_product_manager;
extern const struct agent_role role_research_agent_1;
extern const struct agent_role role_research_agent_2;
extern const struct agent_role role_validator;
extern const struct agent_role role_report_writer;
const struct agent_role *agent_role_find(const char *name);
extern const struct agent_role *const agent_roles[];
extern const size_t agent_nroles;

#endif
