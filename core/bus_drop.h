/* Expiry. Expired heartbeats and status messages: dropped, not dead-lettered (a
 * dead letter means something failed; a heartbeat nobody read in time
 * means nothing), and counted; so are those bus_gc finds waiting past
 * retention (reason "retention"). Each drop appends one JSON line to
 * messages/dropped/expired.jsonl; the count is that file's lines, read
 * incrementally. Internal to the bus. */
#ifndef MADF_BUS_DROP_H
#define MADF_BUS_DROP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/message.h"

/* True for the message types an expiry drops instead of dead-lettering. */
bool bus_drop_type(enum msg_type t);

/* m's record as one JSON line, newline included (caller frees): id, type,
 * from, to, inbox (agent), sent, timeout_s, dropped_at (now), reason
 * ("expired" on receipt, "retention" by bus_gc; NULL: "expired"). */
char *bus_drop_line(const struct msg *m, const char *agent, const char *reason);

/* Appends m's line (as bus_drop_line's) under root (<data_dir>/messages).
 * Best effort: the drop itself is done. */
void bus_drop_note(const char *root, const struct msg *m, const char *agent,
		   const char *reason);

/* Lines counted so far and where the count stopped. Zero it to start. */
struct bus_drop_counter {
	uint64_t ino;
	off_t off;
	uint64_t n;
};
/* Updates c from the file (only what was appended since) and returns the
 * number of drops recorded. */
uint64_t bus_drop_count(const char *root, struct bus_drop_counter *c);

/* An expired message (its timeout passed, or dead-lettered as "expired",
 * the reason given) retried as it is would expire again on its next
 * receive: m gets a new timestamp, so that its timeout counts from now.
 * Returns what to tell the operator (caller frees), or NULL when m had not
 * expired (then m is unchanged). */
char *bus_expired_refresh(struct msg *m, const char *reason);

#endif
