/* The file-system transport: one directory per queue, one file per
 * message, renames for every state change (atomic on one file system).
 * This file: names, paths and moves, attempt records and dead letters,
 * owners, open/close and the transport table; the rest is in
 * bus_fs_{send,consumer,admin,gc,monitor}.c behind core/bus_fs_priv.h. */
#include "core/bus_fs_priv.h"
#include "core/bus_dlx.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- names ---------------------------------------------------------- */

bool fsbus_all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int64_t fsbus_parse_digits(const char *s, size_t n)
{
	int64_t v = 0;
	for (size_t i = 0; i < n && v < INT64_MAX / 10 - 10; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static bool id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '-' ||
	       c == '+';
}

int bus_fname_parse(const char *name, struct bus_fname *out)
{
	size_t len = strlen(name);
	if (len < 5 || strcmp(name + len - 5, ".json"))
		return -1;
	const char *p = name, *end = name + len - 5;
	const char *d1 = memchr(p, '.', (size_t)(end - p));
	if (!d1 || d1 - p != 1 || *p < '0' || *p > '3')
		return -1;
	const char *t = d1 + 1;
	const char *d2 = memchr(t, '.', (size_t)(end - t));
	if (!d2 || d2 - t != 19 || !fsbus_all_digits(t, 19))
		return -1;
	const char *id = d2 + 1;
	const char *d3 = memchr(id, '.', (size_t)(end - id));
	if (!d3 || d3 == id || (size_t)(d3 - id) >= sizeof(out->id))
		return -1;
	for (const char *c = id; c < d3; c++)
		if (!id_char(*c))
			return -1;
	const char *a = d3 + 1;
	if (end - a > 6 || !fsbus_all_digits(a, (size_t)(end - a)))
		return -1;
	out->prio = *p - '0';
	out->t_ns = fsbus_parse_digits(t, 19);
	memcpy(out->id, id, (size_t)(d3 - id));
	out->id[d3 - id] = '\0';
	out->attempts = (int)fsbus_parse_digits(a, (size_t)(end - a));
	return 0;
}

void bus_fname_format(const struct bus_fname *f, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%019lld.%s.%d.json", f->prio,
		 (long long)f->t_ns, f->id, f->attempts);
}

bool bus_fname_wanted(const char *name)
{
	size_t len = strlen(name);
	if (name[0] == '.' || len < 6)
		return false;
	if (strcmp(name + len - 5, ".json"))
		return false;
	return true;
}

/* Dead-letter sidecars: <base>.reason.json beside <base>.json. */
bool fsbus_is_sidecar(const char *name)
{
	size_t len = strlen(name);
	return len > 12 && !strcmp(name + len - 12, ".reason.json");
}

char *fsbus_sidecar_name(const char *name)
{
	size_t len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".json"))
		len -= 5;
	return xasprintf("%.*s.reason.json", (int)len, name);
}

/* The message id a stored name stands for (broadcast copies: before '+'). */
char *fsbus_name_message_id(const char *name)
{
	struct bus_fname f;
	if (bus_fname_parse(name, &f) < 0)
		return NULL;
	char *plus = strchr(f.id, '+');
	if (plus)
		*plus = '\0';
	return xstrdup(f.id);
}

/* ---- paths and moves -------------------------------------------------- */

char *fsbus_qpath(struct bus *b, const char *q, const char *agent)
{
	if (agent)
		return xasprintf("%s/%s/%s", FS(b)->root, q, agent);
	return xasprintf("%s/%s", FS(b)->root, q);
}

int fsbus_ensure_dir(const char *path, char **err)
{
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	if (errno == ENOENT)
		return util_mkdirs(path, err);
	return err_set(err, "cannot create directory %s: %s", path,
		       strerror(errno));
}

/* rename without replacing; EEXIST and others returned as -1/errno. */
int fsbus_rename_noreplace(const char *src, const char *dst)
{
	if (renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* File systems without RENAME_NOREPLACE: link + unlink. */
	if (link(src, dst) < 0)
		return -1;
	unlink(src);
	return 0;
}

/* Moves src into dir under name, creating dir when missing; when the name
 * is taken, a suffix keeps both. *final gets the name used (may be NULL). */
int fsbus_move_into(const char *src, const char *dir, const char *name,
		    char **final, char **err)
{
	char *dst = xasprintf("%s/%s", dir, name);
	for (int tries = 0; tries < 8; tries++) {
		if (fsbus_rename_noreplace(src, dst) == 0) {
			if (final)
				*final = xstrdup(strrchr(dst, '/') + 1);
			free(dst);
			return 0;
		}
		if (errno == ENOENT) {
			struct stat st;
			if (lstat(src, &st) < 0) {
				err_set(err, "%s vanished", src);
				free(dst);
				errno = ENOENT;
				return -1;
			}
			if (fsbus_ensure_dir(dir, err) < 0) {
				free(dst);
				return -1;
			}
			continue;
		}
		if (errno != EEXIST && errno != ENOTEMPTY)
			break;
		uint32_t r;
		util_random(&r, sizeof(r));
		size_t len = strlen(name);
		size_t base = len > 5 && !strcmp(name + len - 5, ".json") ? len - 5 : len;
		free(dst);
		dst = xasprintf("%s/%.*s.dup%08x.json", dir, (int)base, name, r);
	}
	int e = errno;
	err_set(err, "cannot move %s to %s: %s", src, dst, strerror(e));
	free(dst);
	errno = e;
	return -1;
}

static void iso_now(char *buf, size_t size)
{
	util_iso8601(util_now_ns(), buf, size);
}

/* ---- attempt records and dead letters ------------------------------------ */

/* messages/attempts/<agent>.<id>.json: failures so far of one message. */
static char *attempts_path(struct bus *b, const char *agent, const char *id)
{
	return xasprintf("%s/attempts/%s.%s.json", FS(b)->root, agent, id);
}

cJSON *fsbus_attempts_load(struct bus *b, const char *agent, const char *id)
{
	char *path = attempts_path(b, agent, id);
	char *buf = NULL;
	size_t len;
	cJSON *j = NULL;
	if (util_read_file(path, 1 << 20, &buf, &len, NULL) == 0)
		j = cJSON_ParseWithLength(buf, len);
	free(buf);
	free(path);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = cJSON_CreateObject();
	}
	return j;
}

void fsbus_attempts_drop(struct bus *b, const char *agent, const char *id)
{
	char *path = attempts_path(b, agent, id);
	unlink(path);
	free(path);
}

/* Records one more failure in rec (first/last failure, error history). */
void fsbus_attempts_note(cJSON *rec, int attempts, const char *error,
			 const char *agent)
{
	char now[40];
	iso_now(now, sizeof(now));
	if (!cJSON_GetObjectItem(rec, "first_failure"))
		cJSON_AddStringToObject(rec, "first_failure", now);
	cJSON_DeleteItemFromObject(rec, "last_failure");
	cJSON_AddStringToObject(rec, "last_failure", now);
	cJSON_DeleteItemFromObject(rec, "attempts");
	cJSON_AddNumberToObject(rec, "attempts", attempts);
	cJSON_DeleteItemFromObject(rec, "error");
	cJSON_AddStringToObject(rec, "error", error);
	if (!cJSON_GetObjectItem(rec, "original_inbox"))
		cJSON_AddStringToObject(rec, "original_inbox", agent);
	cJSON *hist = cJSON_GetObjectItem(rec, "errors");
	if (!cJSON_IsArray(hist)) {
		cJSON_DeleteItemFromObject(rec, "errors");
		hist = cJSON_AddArrayToObject(rec, "errors");
	}
	cJSON *h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "at", now);
	cJSON_AddStringToObject(h, "error", error);
	cJSON_AddItemToArray(hist, h);
	while (cJSON_GetArraySize(hist) > 10)
		cJSON_DeleteItemFromArray(hist, 0);
}

int fsbus_attempts_save(struct bus *b, const char *agent, const char *id,
			const cJSON *rec, char **err)
{
	char *dir = xasprintf("%s/attempts", FS(b)->root);
	int r = fsbus_ensure_dir(dir, err);
	free(dir);
	if (r < 0)
		return -1;
	char *path = attempts_path(b, agent, id);
	char *s = cJSON_PrintUnformatted(rec);
	r = util_write_file_atomic(path, s, strlen(s), b->cfg.durable, err);
	cJSON_free(s);
	free(path);
	return r;
}

/* Moves src to the dead letters as name, with a sidecar saying why. rec
 * (may be NULL) carries the attempt history; it is not freed. about may be
 * NULL. */
int fsbus_dead_letter(struct bus *b, const char *src, const char *name,
		      const char *agent, const char *reason,
		      const char *error, const cJSON *rec,
		      const char *message_id, const struct dl_about *about,
		      char **err)
{
	char *dir = fsbus_qpath(b, "dead-letter", NULL);
	char *final = NULL;
	/* Choose the name first so the sidecar can match it. */
	char *dst = xasprintf("%s/%s", dir, name);
	char *use = xstrdup(name);
	if (access(dst, F_OK) == 0) {
		uint32_t r;
		util_random(&r, sizeof(r));
		size_t len = strlen(name);
		size_t base = len > 5 && !strcmp(name + len - 5, ".json") ? len - 5 : len;
		free(use);
		use = xasprintf("%.*s.dup%08x.json", (int)base, name, r);
	}
	free(dst);

	cJSON *side = rec ? cJSON_Duplicate(rec, 1) : cJSON_CreateObject();
	char now[40];
	iso_now(now, sizeof(now));
	cJSON_DeleteItemFromObject(side, "reason");
	cJSON_AddStringToObject(side, "reason", reason);
	cJSON_DeleteItemFromObject(side, "error");
	cJSON_AddStringToObject(side, "error", error);
	if (!cJSON_GetObjectItem(side, "attempts"))
		cJSON_AddNumberToObject(side, "attempts", 0);
	if (!cJSON_GetObjectItem(side, "first_failure"))
		cJSON_AddStringToObject(side, "first_failure", now);
	if (!cJSON_GetObjectItem(side, "last_failure"))
		cJSON_AddStringToObject(side, "last_failure", now);
	cJSON_DeleteItemFromObject(side, "original_inbox");
	cJSON_AddStringToObject(side, "original_inbox", agent ? agent : "");
	cJSON_AddStringToObject(side, "dead_lettered_at", now);
	if (message_id)
		cJSON_AddStringToObject(side, "message_id", message_id);
	static const char *const keys[] = { "from", "to", "type" };
	const char *vals[] = { about ? about->from : NULL, about ? about->to : NULL,
			       about ? about->type : NULL };
	for (int k = 0; k < 3; k++) {
		cJSON_DeleteItemFromObjectCaseSensitive(side, keys[k]);
		if (vals[k])
			cJSON_AddStringToObject(side, keys[k], vals[k]);
	}
	cJSON_AddStringToObject(side, "file", use);
	char *js = json_pretty(side);
	cJSON_Delete(side);
	char *sc = fsbus_sidecar_name(use);
	char *scpath = xasprintf("%s/%s", dir, sc);
	int r = util_write_file_atomic(scpath, js, strlen(js), b->cfg.durable, err);
	free(js);
	if (r == 0) {
		r = fsbus_move_into(src, dir, use, &final, err);
		if (r < 0)
			unlink(scpath);
		else if (strcmp(final, use)) {
			/* Lost a race for the name: rename the sidecar too. */
			char *sc2 = fsbus_sidecar_name(final);
			char *sc2path = xasprintf("%s/%s", dir, sc2);
			rename(scpath, sc2path);
			free(sc2);
			free(sc2path);
		}
	}
	if (r == 0) {
		/* What the sidecar says, in the index the listing reads. */
		char *fpath = xasprintf("%s/%s", dir, final);
		struct stat st;
		if (lstat(fpath, &st) == 0) {
			const cJSON *a = rec ? cJSON_GetObjectItem(rec, "attempts") : NULL;
			struct dlx_rec x = {
				.ino = st.st_ino, .size = (size_t)st.st_size,
				.attempts = cJSON_IsNumber(a) ? a->valueint : 0,
				.name = final, .message_id = message_id, .reason = reason,
				.original_inbox = agent ? agent : "", .error = error,
				.from = about ? about->from : NULL, .to = about ? about->to : NULL,
				.type = about ? about->type : NULL,
			};
			dlx_append(dir, &x, 1);
		}
		free(fpath);
	}
	if (r == 0 && b->on_dead)
		b->on_dead(b->on_dead_ctx, agent, final, reason, error);
	free(final);
	free(sc);
	free(scpath);
	free(use);
	free(dir);
	return r;
}

/* ---- owners and liveness ------------------------------------------------ */

/* Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat),
 * or 0 when the process does not exist. */
static unsigned long long proc_start(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ")": state is field 3; starttime is field 22. */
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

static void host_id(char *buf, size_t size)
{
	char id[64] = "";
	int fd = open("/etc/machine-id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, id, sizeof(id) - 1);
		close(fd);
		id[n > 0 ? n : 0] = '\0';
	}
	if (strlen(id) >= 8)
		snprintf(buf, size, "%.8s", id);
	else
		snprintf(buf, size, "%08lx", (unsigned long)gethostid() & 0xffffffffUL);
}

void fsbus_owner_refresh(struct fsbus *fs)
{
	pid_t pid = getpid();
	if (fs->owner_pid == pid)
		return;
	fs->owner_pid = pid;
	snprintf(fs->owner, sizeof(fs->owner), "%s-%d-%llu", fs->host, (int)pid,
		 proc_start(pid));
}

/* Is the consumer named by owner (HOST-PID-START) gone for sure? */
bool fsbus_owner_dead(struct fsbus *fs, const char *owner)
{
	char host[16];
	int pid;
	unsigned long long start;
	if (sscanf(owner, "%15[0-9a-f]-%d-%llu", host, &pid, &start) != 3)
		return false;
	if (strcmp(host, fs->host) || pid <= 0)
		return false; /* another machine: only its lease tells */
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	unsigned long long now = proc_start(pid);
	return now == 0 || (start != 0 && now != start);
}

static const char *fs_owner(struct bus *b)
{
	fsbus_owner_refresh(FS(b));
	return FS(b)->owner;
}

static bool fs_owner_gone(struct bus *b, const char *owner)
{
	return fsbus_owner_dead(FS(b), owner);
}

/* The agent's inbox, claim and retry directories go when empty (a
 * message still there keeps its directory). */
static int fs_forget(struct bus *b, const char *agent, char **err)
{
	static const char *const qs[] = { "retry", "processing", "inbox" };
	struct fsbus *fs = FS(b);
	/* its inbox count too: a long-running sender forgets many agents */
	pthread_mutex_lock(&fs->lock);
	for (size_t i = 0; i < fs->ncounts; i++)
		if (!strcmp(fs->counts[i].agent, agent)) {
			fs->counts[i] = fs->counts[--fs->ncounts];
			break;
		}
	pthread_mutex_unlock(&fs->lock);
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++) {
		char *p = fsbus_qpath(b, qs[i], agent);
		int r = rmdir(p);
		if (r < 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST) {
			err_set(err, "cannot remove %s: %s", p, strerror(errno));
			free(p);
			return -1;
		}
		free(p);
	}
	return 0;
}

/* ---- open/close --------------------------------------------------------- */

static void fs_close(struct bus *b)
{
	struct fsbus *fs = FS(b);
	pthread_mutex_destroy(&fs->lock);
	free(fs->counts);
	free(fs->root);
	free(fs->tmpdir);
	free(fs);
	b->impl = NULL;
}

int bus_fs_open(struct bus *b, char **err)
{
	struct fsbus *fs = xcalloc(1, sizeof(*fs));
	fs->root = xasprintf("%s/messages", b->cfg.data_dir);
	fs->tmpdir = xasprintf("%s/tmp", fs->root);
	pthread_mutex_init(&fs->lock, NULL);
	host_id(fs->host, sizeof(fs->host));
	b->impl = fs;
	fsbus_owner_refresh(fs);
	static const char *const dirs[] = { "inbox", "processing", "retry",
					    "outbox", "processed", "dead-letter",
					    "broadcast", "tmp", "attempts", "trash" };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *p = fsbus_qpath(b, dirs[i], NULL);
		int r = util_mkdirs(p, err);
		free(p);
		if (r < 0) {
			fs_close(b);
			return -1;
		}
	}
	for (size_t i = 0; i < bus_default_agent_count; i++) {
		char *p = fsbus_qpath(b, "inbox", bus_default_agents[i]);
		int r = fsbus_ensure_dir(p, err);
		free(p);
		if (r < 0) {
			fs_close(b);
			return -1;
		}
	}
	return 0;
}

const struct bus_transport bus_fs_transport = {
	.name = "fs",
	.send = fsbus_send,
	.consumer_open = fsbus_consumer_open,
	.consumer_free = fsbus_consumer_free,
	.consumer_fd = fsbus_consumer_fd,
	.consumer_wait = fsbus_consumer_wait,
	.consumer_timeout = fsbus_consumer_timeout,
	.claim = fsbus_claim,
	.ack = fsbus_ack,
	.nack = fsbus_nack,
	.release = fsbus_release,
	.renew = fsbus_renew,
	.list = fsbus_list,
	.each_dead = fsbus_each_dead,
	.find = fsbus_find,
	.read = fsbus_read,
	.retry = fsbus_retry,
	.remove = fsbus_remove,
	.kill = fsbus_kill,
	.requeue = fsbus_requeue,
	.sweep = fsbus_sweep,
	.gc = fsbus_gc,
	.monitor_open = fsbus_monitor_open,
	.monitor_free = fsbus_monitor_free,
	.monitor_fd = fsbus_monitor_fd,
	.monitor_process = fsbus_monitor_process,
	.monitor_stats = fsbus_monitor_stats,
	.forget = fs_forget,
	.owner = fs_owner,
	.owner_gone = fs_owner_gone,
	.close = fs_close,
};
