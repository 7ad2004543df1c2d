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

/* For tests only: the directory sync of a durable send's commit group
 * (fsync of the directory by default; returns 0 or -1 with errno), and
 * the number of senders that have joined a commit group so far. */
extern int (*bus_fs_dir_sync)(const char *dir);
extern atomic_ulong bus_fs_commit_joined;

#endif
