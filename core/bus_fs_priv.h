/* The file-system transport's insides, shared by core/bus_fs*.c only:
 * the transport's state and the helpers one part calls in another. No
 * other file includes this. */
#ifndef MADF_BUS_FS_PRIV_H
#define MADF_BUS_FS_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/bus_fs.h"

#define NS_PER_S 1000000000LL
#define STALE_TMP_NS (3600LL * NS_PER_S)
#define SEND_CACHE_NS (1000LL * 1000 * 1000) /* recount an inbox each second */
#define INOTIFY_BUF (64 * 1024)

struct send_count {
	char agent[MSG_AGENT_MAX + 1];
	size_t count;
	int64_t scanned_ns;
};

struct fsbus {
	char *root;      /* <data_dir>/messages */
	char *tmpdir;    /* <root>/tmp */
	char owner[64];  /* this process: HOST-PID-START */
	char host[16];
	pid_t owner_pid;
	pthread_mutex_t lock;
	struct send_count *counts;
	size_t ncounts;
};

#define FS(b) ((struct fsbus *)(b)->impl)

/* What a sidecar says of the message itself, when known: listing the dead
 * letters then reads the sidecars alone. */
struct dl_about {
	const char *from, *to, *type;
};

/* bus_fs.c: names, paths and moves, attempt records and dead letters,
 * owners. */
bool fsbus_all_digits(const char *s, size_t n);
int64_t fsbus_parse_digits(const char *s, size_t n);
bool fsbus_is_sidecar(const char *name);
char *fsbus_sidecar_name(const char *name);
char *fsbus_name_message_id(const char *name);
char *fsbus_qpath(struct bus *b, const char *q, const char *agent);
int fsbus_ensure_dir(const char *path, char **err);
int fsbus_rename_noreplace(const char *src, const char *dst);
int fsbus_move_into(const char *src, const char *dir, const char *name,
		    char **final, char **err);
cJSON *fsbus_attempts_load(struct bus *b, const char *agent, const char *id);
void fsbus_attempts_drop(struct bus *b, const char *agent, const char *id);
void fsbus_attempts_note(cJSON *rec, int attempts, const char *error,
			 const char *agent);
int fsbus_attempts_save(struct bus *b, const char *agent, const char *id,
			const cJSON *rec, char **err);
int fsbus_dead_letter(struct bus *b, const char *src, const char *name,
		      const char *agent, const char *reason,
		      const char *error, const cJSON *rec,
		      const char *message_id, const struct dl_about *about,
		      char **err);
void fsbus_owner_refresh(struct fsbus *fs);
bool fsbus_owner_dead(struct fsbus *fs, const char *owner);

/* bus_fs_send.c: the helpers requeue uses, and the send operation. */
int fsbus_inbox_reserve(struct bus *b, const char *agent, char **err);
int fsbus_write_tmp(struct bus *b, const char *dir, const char *json,
		    size_t len, char **tmp, char **err);
int fsbus_deliver_one(struct bus *b, const char *tmp, const char *agent,
		      const struct bus_fname *f0, bool move, char **err);
int fsbus_send(struct bus *b, const struct msg *m, const char *json,
	       size_t len, char **err);

/* bus_fs_consumer.c: what sweep and gc use, and the consumer operations. */
int64_t fsbus_promote_retries(struct bus *b, const char *agent);
void fsbus_recover_claims(struct bus *b, const char *agent);
void fsbus_clean_stale_tmp(const char *dir, int64_t now, bool dry_run,
			   void (*report)(void *, const char *, const char *),
			   void *ctx);
void fsbus_consumer_free(struct bus_consumer *c);
int fsbus_consumer_open(struct bus *b, const char *agent,
			struct bus_consumer **out, char **err);
int fsbus_consumer_fd(struct bus_consumer *c);
int fsbus_consumer_wait(struct bus_consumer *c, int timeout_ms);
int fsbus_consumer_timeout(struct bus_consumer *c);
int fsbus_claim(struct bus_consumer *c, struct bus_delivery **d, char **err);
int fsbus_ack(struct bus_consumer *c, struct bus_delivery *d, char **err);
int fsbus_nack(struct bus_consumer *c, struct bus_delivery *d,
	       const char *error, bool permanent, char **err);
int fsbus_release(struct bus_consumer *c, struct bus_delivery *d, char **err);
int fsbus_renew(struct bus_consumer *c, const struct bus_delivery *d, char **err);

/* bus_fs_admin.c: listing and administration (and drop_dead for gc). */
int fsbus_list(struct bus *b, enum bus_queue q, const char *agent,
	       bool content, struct bus_entry **out, size_t *n, char **err);
int fsbus_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
		    void *ctx, char **err);
int fsbus_find(struct bus *b, const char *id, struct bus_entry *out,
	       char **err);
int fsbus_read(struct bus *b, const struct bus_entry *e, char **json,
	       size_t *len, char **err);
void fsbus_drop_dead(const struct bus_entry *e);
int fsbus_retry(struct bus *b, const char *id, const char *to, char **note,
		char **err);
int fsbus_remove(struct bus *b, const char *id, struct bus_entry *out, char **err);
int fsbus_kill(struct bus *b, const char *id, const char *why, char **err);
int fsbus_requeue(struct bus *b, const char *id, const char *json,
		  size_t len, char **err);
int fsbus_sweep(struct bus *b, const char *agent, char **err);

/* bus_fs_gc.c: retention. */
int fsbus_gc(struct bus *b, bool dry_run, int64_t now_ns,
	     void (*report)(void *ctx, const char *what, const char *path),
	     void *ctx, char **err);

/* bus_fs_monitor.c: the monitor operations. */
int fsbus_monitor_open(struct bus *b, struct bus_monitor **out, char **err);
void fsbus_monitor_free(struct bus_monitor *m);
int fsbus_monitor_fd(struct bus_monitor *m);
int fsbus_monitor_process(struct bus_monitor *m);
void fsbus_monitor_stats(struct bus_monitor *m, struct bus_stats *out);

#endif
