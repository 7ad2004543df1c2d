/* The file-system transport (private to core/bus*.c). */
#ifndef MADF_BUS_FS_H
#define MADF_BUS_FS_H

#include <stdatomic.h>

#include "core/bus.h"

extern const struct bus_transport bus_fs_transport;
int bus_fs_open(struct bus *b, char **err);

/* File names (see man/madf-messages.5):
 *   inbox, dead-letter, processed:  P.T.ID.A.json
 *   processing:                     OWNER@P.T.ID.A.json
 *   retry:                          DUE.P.T.ID.A.json
 * P priority digit (0 urgent .. 3 low), T enqueue time and DUE due time in
 * ns since the epoch (19 digits), ID the message id (broadcast copies:
 * ID+AGENT), A failed attempts so far. */
struct bus_fname {
	int prio;
	int64_t t_ns;
	char id[MSG_ID_MAX + MSG_AGENT_MAX + 2];
	int attempts;
};
/* Parses P.T.ID.A.json; returns 0 or -1 for a foreign name. */
int bus_fname_parse(const char *name, struct bus_fname *out);
/* Formats P.T.ID.A.json into buf. */
void bus_fname_format(const struct bus_fname *f, char *buf, size_t size);
/* True for names a reader takes: *.json, not hidden, not *.tmp. */
bool bus_fname_wanted(const char *name);

/* For the trash (bus_trash.c): <data_dir>/messages; a move of src into dir
 * as name (a suffix keeps both when the name is taken; *final may be NULL);
 * a dead letter's sidecar path (caller frees). */
const char *bus_fs_root(struct bus *b);
int bus_fs_move(const char *src, const char *dir, const char *name, char **final,
		char **err);
char *bus_fs_sidecar(const char *path);
/* Moves the message e (found by bus_find) into the trash; 0 or -1. */
int bus_trash_put(struct bus *b, const struct bus_entry *e, char **err);
/* Retention of the trash (from bus_gc). */
void bus_trash_gc(struct bus *b, bool dry_run, int64_t now_ns,
		  void (*report)(void *ctx, const char *what, const char *path), void *ctx);

/* For tests only: the directory sync of a durable send's commit group
 * (fsync of the directory by default; returns 0 or -1 with errno), and
 * the number of senders that have joined a commit group so far. */
extern int (*bus_fs_dir_sync)(const char *dir);
extern atomic_ulong bus_fs_commit_joined;

#endif
