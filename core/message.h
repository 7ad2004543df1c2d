/* Messages: the envelope of seed 002 (plus correlation_id from seed 003),
 * strict JSON parsing, validation of the envelope and of every content
 * schema, normalisation of seed 003's spelling, canonical output. */
#ifndef MADF_MESSAGE_H
#define MADF_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#define MSG_MAX_BYTES (10u * 1024 * 1024) /* 10 MB per message (seed 002) */
#define MSG_ID_MAX 128
#define MSG_AGENT_MAX 64
#define MSG_MAX_DEPTH 64 /* deepest JSON nesting accepted */

enum msg_type {
	MSG_TASK_ASSIGNMENT,
	MSG_TASK_ACCEPTANCE,
	MSG_TASK_PROGRESS,
	MSG_RESEARCH_RESULT,
	MSG_VALIDATION_REQUEST,
	MSG_VALIDATION_RESULT,
	MSG_ERROR_REPORT,
	MSG_HEARTBEAT,
	MSG_SYSTEM_STATUS,
	MSG_TYPE_COUNT
};

/* Ordered as delivered: urgent first. The digit is used in file names. */
enum msg_priority {
	PRIO_URGENT = 0,
	PRIO_HIGH = 1,
	PRIO_NORMAL = 2,
	PRIO_LOW = 3,
};

struct msg {
	char id[MSG_ID_MAX + 1];
	char from[MSG_AGENT_MAX + 1];
	char to[MSG_AGENT_MAX + 1]; /* an agent or "broadcast" */
	enum msg_type type;
	char *timestamp;       /* ISO 8601 with zone, as given */
	int64_t ts_ns;         /* timestamp as ns since the epoch, UTC */
	cJSON *content;        /* owned */
	enum msg_priority priority;
	char *reply_to;        /* NULL when absent */
	int64_t timeout_s;     /* -1 when absent */
	char *correlation_id;  /* NULL when absent */
	cJSON *notes;          /* owned array of notes, or NULL (see below) */
};

/* Notes: what madf assumed when it read a message, kept in the canonical
 * message as "notes" (an array of strings). The one madf writes is
 * "<path>_assumed_utc": the field at path was a time without a zone (as
 * seed 002's reference code writes datetime.utcnow()) and was read as UTC,
 * a Z appended. A note matches [A-Za-z0-9_.:-]{1,128}; a message carries
 * at most MSG_NOTES_MAX distinct ones. */
#define MSG_NOTES_MAX 16
bool msg_valid_note(const char *note);
/* Adds note to m unless it is there already. 0, or -1 (nothing changed)
 * when the note is not valid or m has MSG_NOTES_MAX notes. */
int msg_note_add(struct msg *m, const char *note);
/* True when m carries note. */
bool msg_has_note(const struct msg *m, const char *note);

/* Validation errors: each "field.path: rule", e.g.
 * "content.confidence_score: must be within 0..1". One line each, with
 * control characters in quoted keys escaped. Initialise with {0}; the
 * functions below append, msg_errors_release frees. */
struct msg_errors {
	char **items;
	size_t count;
};
void msg_errors_release(struct msg_errors *e);
/* All errors joined with "; " (caller frees). */
char *msg_errors_join(const struct msg_errors *e);
/* Appends one error, printf-style. After MSG_ERRORS_MAX errors a last line
 * says the rest were left out, and further ones are dropped. */
#define MSG_ERRORS_MAX 64
void msg_errors_add(struct msg_errors *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Strict JSON: valid UTF-8, no NUL bytes (raw or \u0000), nesting at most
 * MSG_MAX_DEPTH, no duplicate keys in any object, finite numbers.
 * Parses exactly len bytes (buf need not be NUL-terminated). Returns the
 * tree (caller cJSON_Deletes it) or NULL with a one-line *err (caller
 * frees), e.g. "invalid JSON at byte 17" (offsets count from 0). */
cJSON *json_parse_strict(const char *buf, size_t len, char **err);

/* A field path for error text: ("content", "x") gives "content.x"; a key
 * that is not a plain name is quoted, escaped and shortened:
 * content["a b"]. A NULL or empty prefix gives the key alone. Caller
 * frees. */
char *json_path_join(const char *prefix, const char *key);

/* Checks a tree built in code the way json_parse_strict checks text, so
 * that what a writer sends is what readers accept: no duplicate keys,
 * finite numbers, valid UTF-8 in keys and strings, and nesting at most
 * MSG_MAX_DEPTH counting `above` enclosing levels (1 for a message's
 * content). Paths in errors start at name (NULL: the top level). Returns
 * 0, or -1 with a one-line *err (caller frees). */
int json_check_tree(const cJSON *node, const char *name, int above,
		    char **err);

/* The exact call the bus uses on every file: strict parse, normalise the
 * seed-003 spelling and agent aliases, validate envelope and content.
 * Returns 0 and a new *out, or -1 with errors appended to *errs (at least
 * one; errs may be NULL) and *out set to NULL. Messages over MSG_MAX_BYTES
 * are refused. Seed 003 content fields are mapped onto the seed 002
 * schema when the message uses "payload" or "message_type" (see
 * content_maps in message.c). What seed 002's pydantic models write is
 * read too: from_agent/to_agent beside type/content, null for an absent
 * optional field (priority included), and times without a zone in the
 * timestamp and the content's time fields, read as UTC: a Z is appended
 * and a "<path>_assumed_utc" note added to (*out)->notes. */
int msg_parse(const char *buf, size_t len, struct msg **out,
	      struct msg_errors *errs);

/* Validates an already normalised struct msg (the content included).
 * Returns 0, or -1 with errors appended to *errs (may be NULL). */
int msg_validate(const struct msg *m, struct msg_errors *errs);

/* Validates the content object alone for a given type; prefix is used for
 * error paths ("content"). Returns the number of errors added. */
int msg_validate_content(enum msg_type type, const cJSON *content,
			 const char *prefix, struct msg_errors *errs);

/* Canonical JSON (seed 002 field names, priority as a word): message_id,
 * from, to, type, timestamp, content, priority, then reply_to, timeout and
 * correlation_id when set, then notes when there are any. Caller frees
 * (free(), or cJSON_Delete for the tree). NULL only when cJSON runs out of
 * memory. */
char *msg_to_json(const struct msg *m, bool pretty);
cJSON *msg_to_cjson(const struct msg *m);

/* A new message with a fresh id and the current time; content is taken
 * over (may be NULL for {}), even on failure. from must be a valid agent
 * name and to one or "broadcast" (seed 003 aliases are accepted); NULL
 * otherwise, or when content is not an object. */
struct msg *msg_new(const char *from, const char *to, enum msg_type type,
		    cJSON *content);
struct msg *msg_dup(const struct msg *m);
void msg_free(struct msg **m);

/* Ids: "<from>_<YYYYmmdd>_<HHMMSS>_<16 hex>", unique within and across
 * processes (a per-process random nonce and a counter). buf must hold
 * MSG_ID_MAX + 1 bytes. */
void msg_new_id(const char *from, char *buf);
/* [A-Za-z0-9_:-]{1,128}: safe in a file name. */
bool msg_valid_id(const char *id);

const char *msg_type_name(enum msg_type t);
int msg_type_from_name(const char *s); /* -1 if unknown */
const char *msg_priority_name(enum msg_priority p);
int msg_priority_from_name(const char *s); /* -1 if unknown */

/* Seed 003 aliases: "pm-agent" -> "product_manager", ...; returns the
 * canonical name or s itself. */
const char *msg_agent_canonical(const char *s);

/* ISO 8601 with a zone: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM),
 * a real calendar date, at most 9 fraction digits, years 1678..2261 (the
 * range of int64 ns). 0 and *ns (UTC), or -1. A time without a zone is -1
 * here; msg_parse alone reads it (as UTC, noted). */
int msg_parse_time(const char *s, int64_t *ns);

#endif
