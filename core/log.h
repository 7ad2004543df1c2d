/* Structured logs: one JSON object a line, per agent and category, under
 * <log_dir>/agents/<agent>/<category>/<YYYY-MM-DD>.jsonl (UTC date), and
 * their retention (seed 003 section 9). */
#ifndef MADF_LOG_H
#define MADF_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

enum log_cat {
	LOG_ERRORS,
	LOG_QUERIES,
	LOG_RESULTS,
	LOG_DECISIONS,
	LOG_CONFLICTS,
	LOG_RESOLUTIONS,
	LOG_EVENTS,
	LOG_CAT_COUNT
};

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* "errors", "queries", "results", "decisions", "conflicts", "resolutions",
 * "events"; "unknown" out of range. Static strings. */
const char *log_cat_name(enum log_cat c);
/* "debug", "info", "warn", "error"; "unknown" out of range. */
const char *log_level_name(enum log_level l);
/* The category named s, or -1. */
int log_cat_from_name(const char *s);
/* Days a dated file of category c is kept: errors 90, queries 7, the
 * others 30. */
int log_retention_days(enum log_cat c);

struct log_writer;

/* Opens the logs of agent (a valid agent name) under log_dir; directories
 * are created on first write. *out is freed with log_writer_free. Returns 0,
 * or -1 with *err (caller frees). */
int log_writer_open(const char *log_dir, const char *agent,
		   struct log_writer **out, char **err);
/* Closes the files and frees *l; sets *l to NULL. NULL-safe. */
void log_writer_free(struct log_writer **l);

/* Appends one line to <log_dir>/agents/<agent>/<category>/<date>.jsonl:
 * {"ts":"<ISO 8601 UTC, microseconds>","level","agent","category",
 *  "event","message", ...every item of fields at top level}. The file is
 * always the owner's (the agent given to log_writer_open).
 * event NULL gives "log"; fmt NULL gives an empty message. fields may be
 * NULL and is borrowed (not freed). A field "agent" holding a valid agent
 * name other than the log's owner makes that agent the line's "agent" (the
 * subject: the product_manager logging a researcher's failure) and adds
 * "logged_by": <owner>; the learning system counts the line for the
 * subject. Any other field whose key is already on the line (ts, level,
 * category, event, message, or an "agent" that is not a valid name), and
 * "logged_by", is written as "field_<key>"; a key repeated in fields is
 * written once.
 * The message and the string fields are made valid UTF-8 (invalid bytes
 * become U+FFFD), and the whole line goes through config_redact(), so no
 * secret value from the environment reaches a file. Thread-safe; every
 * line is one write() on an O_APPEND descriptor, so several processes can
 * append to one file. Never fails loudly: a line that cannot be written is
 * counted in log_writer_dropped(). l NULL: nothing happens. */
void log_write(struct log_writer *l, enum log_cat cat, enum log_level lvl,
	       const char *event, const cJSON *fields, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* The same with a va_list. */
void log_vwrite(struct log_writer *l, enum log_cat cat, enum log_level lvl,
		const char *event, const cJSON *fields, const char *fmt,
		va_list ap) __attribute__((format(printf, 6, 0)));
/* Also hands every line written (without its newline) to sink(ctx, agent,
 * category name, line, len), after the local write: the bus carries them
 * to other hosts (bus_log_sink, core/bus.h). sink NULL: only the files.
 * Set it before the log is shared between threads; the sink must not log. */
void agent_log_set_sink(struct log_writer *l,
			void (*sink)(void *ctx, const char *agent, const char *category,
				     const char *line, size_t len),
			void *ctx);
/* Lines that could not be written so far. */
size_t log_writer_dropped(const struct log_writer *l);
/* The agent name (borrowed, lives as long as l). */
const char *log_writer_owner(const struct log_writer *l);

/* Retention: removes every <log_dir>/agents/<agent>/<category>/
 * <YYYY-MM-DD>.jsonl whose date is more than log_retention_days(category)
 * days before the UTC date of now_ns. Other files and unknown categories
 * are left alone. report(ctx, what, path) is called for each file removed
 * (or that would be, when dry_run; then nothing is removed); report may be
 * NULL. A missing <log_dir>/agents is not an error. Returns 0, or -1 with
 * *err (caller frees) naming the first file that could not be removed
 * (the walk goes on). */
int log_gc(const char *log_dir, int64_t now_ns, bool dry_run,
	   void (*report)(void *ctx, const char *what, const char *path),
	   void *ctx, char **err);

#endif
