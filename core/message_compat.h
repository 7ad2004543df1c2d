/* Internal to core/message*.c: time stamps, and what madf reads beyond its
 * canonical form from writers that follow seed 002's reference code
 * (pydantic models serialised with message.json()): a time without a zone,
 * which is read as UTC and noted in the message's notes. */
#ifndef MADF_MESSAGE_COMPAT_H
#define MADF_MESSAGE_COMPAT_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "core/message.h"

/* What msg_time_read found. */
enum msg_time_form {
	MSG_TIME_RANGE = -2, /* well formed, outside years 1678..2261 */
	MSG_TIME_BAD = -1,   /* not ISO 8601 */
	MSG_TIME_ZONED = 0,  /* with Z or +HH:MM/-HH:MM */
	MSG_TIME_NAIVE = 1,  /* without a zone: *ns read as UTC */
};

/* YYYY-MM-DDTHH:MM:SS[.frac][Z|+HH:MM|-HH:MM], a real calendar date, at
 * most 9 fraction digits. *ns (UTC) is set for MSG_TIME_ZONED and
 * MSG_TIME_NAIVE only. */
enum msg_time_form msg_time_read(const char *s, int64_t *ns);

/* The suffix of a note saying a time without a zone was read as UTC: the
 * note is the field's path followed by it ("timestamp_assumed_utc",
 * "content.deadline_assumed_utc"). */
#define MSG_NOTE_ASSUMED_UTC "_assumed_utc"

/* If item (a string) is a time without a zone, rewrites it in place with
 * a Z appended and adds the note "<path>_assumed_utc" to m: 1. 0 when item
 * is anything else (left as it is), -1 when m's notes are full (nothing
 * changed). */
int msg_time_assume_utc(struct msg *m, cJSON *item, const char *path);

/* Reads the envelope's "notes" (an array of notes, or null) into m; errors
 * under label. Returns the number of errors added to errs (may be NULL). */
int msg_notes_read(struct msg *m, const cJSON *item, const char *label,
		   struct msg_errors *errs);

/* Checks m's notes as msg_validate does; returns the number of errors. */
int msg_notes_check(const struct msg *m, struct msg_errors *errs);

#endif
