/* The dead-letter index: messages/dead-letter/.index, one line per dead
 * letter appended when it is dead-lettered, saying what its sidecar says
 * (reason, error, original inbox, from, to, type, attempts). Listing the
 * dead letters reads this one file instead of a sidecar per message.
 *
 * The index is a cache, never the truth: the directory is. A line counts
 * only for the file whose name and inode it names, so a retried, deleted
 * or replaced dead letter leaves a line that no longer matches anything;
 * a dead letter without a matching line (written by an older madf, or by
 * a process that died between the move and the append) is read from its
 * sidecar, and the next listing rewrites the index from what it found.
 * Appends hold a shared flock on .index.lock, the rewrite an exclusive
 * one, so no append is lost to a rewrite. Internal to the bus. */
#ifndef MADF_BUS_DLX_H
#define MADF_BUS_DLX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct dlx_rec {
	ino_t ino;
	size_t size;
	int attempts;
	const char *name, *message_id, *reason, *original_inbox;
	const char *from, *to, *type, *error;
};

struct dlx;

/* Appends the lines of r[0..n) to dir's index in one write. Best effort:
 * a failure costs the next listing a sidecar read, so it is not reported. */
void dlx_append(const char *dir, const struct dlx_rec *r, size_t n);

/* Loads dir's index (an empty one when there is none). Never fails. */
struct dlx *dlx_load(const char *dir);
void dlx_free(struct dlx **x);
/* The record for name when it names inode ino, else NULL. Borrowed, and
 * valid until the next dlx_get on x (x is not for several threads). */
const struct dlx_rec *dlx_get(struct dlx *x, const char *name, ino_t ino);
/* Lines read, including the ones that no longer match anything. */
size_t dlx_lines(const struct dlx *x);

/* Replaces dir's index by the records live[0..n) plus whatever was
 * appended since x was loaded. Best effort. */
void dlx_rewrite(const char *dir, const struct dlx *x, const struct dlx_rec *live,
		 size_t n);

#endif
