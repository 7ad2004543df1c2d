/* madf serve: the multi-agent conversation API of seed 004 over HTTP
 * (POST /api/chat/multi answering Server-Sent Events), its bearer tokens,
 * the request's validation and the conversations' runner. Headless: no
 * curses here. */
#ifndef MADF_SERVE_H
#define MADF_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/* ---- tokens (server/token.c) ---------------------------------------------
 * <data_dir>/serve-tokens, mode 0600, one token a line:
 *   USER SHA256-HEX CREATED
 * The token itself is never stored: it is printed once by token add. */

#define SERVE_USER_MAX 64

struct serve_token {
	char user[SERVE_USER_MAX + 1];
	unsigned char hash[32];
	char created[32];
};

struct serve_tokens {
	struct serve_token *v;
	size_t n;
};

/* The token file's path in data_dir (caller frees). */
char *serve_tokens_path(const char *data_dir);
/* Users: [A-Za-z0-9._@-]{1,64}. */
bool serve_user_ok(const char *user);
/* Loads path into *out (a missing file: no tokens). -1 with *err when the
 * file is group- or world-accessible, not a regular file, or malformed. */
int serve_tokens_load(const char *path, struct serve_tokens *out, char **err);
void serve_tokens_free(struct serve_tokens *t);
/* Adds a new random token for user, stored as its hash; *token (caller
 * frees) is the only copy of the token. 0 or -1 with *err. */
int serve_token_add(const char *path, const char *user, char **token, char **err);
/* Removes every token of user; *removed says how many. 0 or -1 with *err
 * (user has none is an error). */
int serve_token_revoke(const char *path, const char *user, size_t *removed, char **err);
/* The user whose token this is (a pointer into t), or NULL. Compares the
 * token's SHA-256 with every entry in constant time. */
const char *serve_tokens_check(const struct serve_tokens *t, const char *token, size_t len);
/* SHA-256 of data (GnuTLS). */
void serve_sha256(const void *data, size_t len, unsigned char out[32]);

/* ---- conversation agents (server/agents.c) ------------------------------- */

#define SERVE_MAX_AGENTS 5
#define SERVE_MAX_ROUNDS 10
#define SERVE_STEPS_DEFAULT 4
#define SERVE_STEPS_CAP 10

struct serve_agent {
	char *name;
	char *description;
	char *role;     /* "orchestrator" or "execution" */
	char *system;
	int max_steps;  /* model calls per turn */
	char **tools;   /* tool registry names the agent may call */
	size_t ntools;
	char *on_error; /* "skip", "retry" (once, then skip) or "abort" */
};

struct serve_agents {
	struct serve_agent *v;
	size_t n;
	char *path;    /* where they came from, or "(built-in)" */
	/* The file's optional "initiator": {"system"? (put before madf's own
	 * instructions), "tools"?, "maxSteps"?}; NULL: none (no tools). */
	struct serve_agent *initiator;
};

/* Loads the agent definitions of <data_dir>/serve-agents.json, writing
 * the built-in ones there first when it does not exist (the seed's
 * data-steward, prospect-finder, contract-reader, and madf's
 * fx-researcher and news-researcher with the registry's data tools). Each is {"name",
 * "description"?, "role"? ("execution"), "system", "maxSteps"? (4, at most
 * 10), "tools"? ([]), "onError"? ("skip")}. 0 or -1 with *err naming the
 * file, the agent and what is wrong. */
int serve_agents_load(const char *data_dir, struct serve_agents *out, char **err);
void serve_agents_free(struct serve_agents *a);
const struct serve_agent *serve_agents_find(const struct serve_agents *a, const char *name);
/* The built-in definitions as the file's JSON (new object). */
cJSON *serve_agents_builtin_json(void);

/* ---- validation (server/validate.c) -------------------------------------- */

#define SERVE_BODY_MAX ((size_t)1 << 20)

struct serve_message {
	char *role;
	char *content;
};

struct serve_request {
	const struct serve_agent *agents[SERVE_MAX_AGENTS];
	size_t nagents;
	int rounds;
	struct serve_message *messages;
	size_t nmessages;
};

/* Why a request is refused: the HTTP status and the seed's error body. */
struct serve_error {
	int status;          /* 400, 401, 413, 415, 429, 503, ... */
	const char *code;    /* VALIDATION_ERROR, AGENT_NOT_FOUND, ... */
	const char *error;   /* the short "error" text */
	const char *field;   /* details.field, NULL: no details */
	char *message;       /* details.message (owned) */
};

void serve_error_release(struct serve_error *e);
/* {"error","code","details":{"field","message"},"timestamp"} as text
 * (caller frees). */
char *serve_error_body(const struct serve_error *e);
/* Parses and validates a request body. 0 with *out, or -1 with *e. */
int serve_request_parse(const char *body, size_t len, const struct serve_agents *agents,
			struct serve_request *out, struct serve_error *e);
void serve_request_release(struct serve_request *r);

/* ---- limits per user (server/limits.c) -------------------------------------
 * The seed's rate limits, per token's user: conversations started in the
 * last hour, conversations running at once, rounds reserved in the last 24
 * hours (the request's rounds, at admission; the rounds a conversation did
 * not start are refunded when it ends). Persisted so a restart (or a
 * crash) keeps the hour's and the day's counts: every change is a line
 * appended to <data_dir>/serve-limits.journal at once, and the whole state
 * is written to <data_dir>/serve-limits.json (atomically) by
 * serve_limits_flush, at open and at serve_limits_free, the journal then
 * emptied. Running conversations are not persisted (a restart ends them).
 * Thread-safe. */

#define SERVE_LIMITS_FILE "serve-limits.json"
#define SERVE_LIMITS_JOURNAL "serve-limits.journal"

struct serve_limits_policy {
	long conv_per_hour; /* MADF_SERVE_CONV_PER_HOUR, 5 */
	long concurrent;    /* MADF_SERVE_CONCURRENT, 2 */
	long rounds_per_day; /* MADF_SERVE_ROUNDS_PER_DAY, 100 */
};

struct serve_limits;

/* Opens the limits of data_dir with policy p (NULL: the defaults, then the
 * environment's MADF_SERVE_*). -1 with *err when the file is malformed (it
 * is left as it is). *out is freed by serve_limits_free. */
int serve_limits_open(const char *data_dir, const struct serve_limits_policy *p,
		      struct serve_limits **out, char **err);
/* Writes serve-limits.json when the journal has changes it lacks, and
 * empties the journal (madf serve calls it about every second). 0, or -1
 * with *err (the journal still has them). */
int serve_limits_flush(struct serve_limits *l, char **err);
/* Flushes (a failure is a warning: the journal keeps the changes) and
 * frees. */
void serve_limits_free(struct serve_limits **l);
/* The policy from the environment (defaults for unset or bad values). */
void serve_limits_policy_env(struct serve_limits_policy *p);
/* Admits a conversation of rounds for user at now: 0 with *resv (its
 * reservation) and, when header is not NULL, *header the RateLimit value
 * this admission left, taken in the same step (its reservation counted,
 * whatever ends or admissions follow; caller frees), or 1 when a limit is
 * reached, with *which ("conv-hour", "concurrent" or "rounds-day") and
 * *retry_after (seconds, >= 1). -1 with *err when the journal cannot be
 * written (nothing is counted then). *header is NULL unless 0. */
int serve_limits_admit(struct serve_limits *l, const char *user, int rounds, int64_t now,
		       long *resv, const char **which, long *retry_after, char **header,
		       char **err);
/* The conversation of resv ended at now having started rounds_used rounds:
 * the rest is refunded, and it no longer runs. */
void serve_limits_end(struct serve_limits *l, const char *user, long resv, int rounds_used,
		      int64_t now);
const struct serve_limits_policy *serve_limits_policy_of(const struct serve_limits *l);
/* The RateLimit-Policy value (caller frees). */
char *serve_limits_policy_header(const struct serve_limits *l);
/* The RateLimit value for user at now (caller frees). */
char *serve_limits_header(struct serve_limits *l, const char *user, int64_t now);

/* ---- the command (server/cmd_serve.c) ------------------------------------ */

/* The command, `madf serve`, is cmd_serve_entry (server/cmd_serve.c, cli/cli.h). */
struct cli;
/* madf bench serve (server/bench_serve.c). */
extern const struct cli_cmd cmd_bench_serve_entry;

#endif
