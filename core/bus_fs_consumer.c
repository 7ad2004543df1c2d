/* The file-system transport: the consumer (claim, ack, nack, release,
 * renew; retries promoted, stale claims recovered). */
#include "core/bus_fs_priv.h"
#include "core/bus_drop.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

/* ---- consumer ---------------------------------------------------------- */

struct cand {
	int prio;
	int64_t t_ns;
	char *name;
};

struct bus_consumer {
	struct bus *bus; /* first: see bus.c */
	char *agent;
	char *inbox, *processing, *retry, *processed_root;
	int ifd, wd_inbox, wd_retry;
	struct cand *heap;
	size_t nheap, capheap;
	bool rescan;
	int64_t last_scan_ns;   /* monotonic */
	int64_t next_due_ns;    /* earliest retry due (realtime), 0 none */
	bool retry_dirty;
	int64_t last_sweep_ns;  /* monotonic */
	char date[16];
};

static bool cand_less(const struct cand *a, const struct cand *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->t_ns != b->t_ns)
		return a->t_ns < b->t_ns;
	return strcmp(a->name, b->name) < 0;
}

static void heap_push(struct bus_consumer *c, struct cand x)
{
	if (c->nheap == c->capheap) {
		c->capheap = c->capheap ? c->capheap * 2 : 64;
		c->heap = xrealloc(c->heap, c->capheap * sizeof(*c->heap));
	}
	size_t i = c->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!cand_less(&x, &c->heap[p]))
			break;
		c->heap[i] = c->heap[p];
		i = p;
	}
	c->heap[i] = x;
}

static struct cand heap_pop(struct bus_consumer *c)
{
	struct cand top = c->heap[0];
	struct cand x = c->heap[--c->nheap];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct cand *best = &x;
		if (l < c->nheap && cand_less(&c->heap[l], best)) {
			m = l;
			best = &c->heap[l];
		}
		if (r < c->nheap && cand_less(&c->heap[r], best))
			m = r;
		if (m == i)
			break;
		c->heap[i] = c->heap[m];
		i = m;
	}
	if (c->nheap)
		c->heap[i] = x;
	return top;
}

static void heap_clear(struct bus_consumer *c)
{
	for (size_t i = 0; i < c->nheap; i++)
		free(c->heap[i].name);
	c->nheap = 0;
}

/* Priority and age of a file whose name is not ours: from its content when
 * it can be read cheaply, else normal priority and its mtime. */
static void foreign_key(const char *dir, const char *name, struct cand *x)
{
	x->prio = PRIO_NORMAL;
	x->t_ns = 0;
	char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	if (lstat(path, &st) == 0)
		x->t_ns = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
	if (S_ISREG(st.st_mode) && st.st_size < 1 << 20) {
		char *buf = NULL;
		size_t len;
		if (util_read_file(path, 1 << 20, &buf, &len, NULL) == 0) {
			struct msg *m = NULL;
			struct msg_errors errs = { 0 };
			if (msg_parse(buf, len, &m, &errs) == 0) {
				x->prio = m->priority;
				x->t_ns = m->ts_ns;
			}
			msg_free(&m);
			msg_errors_release(&errs);
		}
		free(buf);
	}
	free(path);
}

static void consumer_add(struct bus_consumer *c, const char *name)
{
	if (!bus_fname_wanted(name))
		return;
	struct bus_fname f;
	struct cand x = { .name = xstrdup(name) };
	if (bus_fname_parse(name, &f) == 0) {
		x.prio = f.prio;
		x.t_ns = f.t_ns;
	} else {
		foreign_key(c->inbox, name, &x);
	}
	heap_push(c, x);
}

static void consumer_scan(struct bus_consumer *c)
{
	heap_clear(c);
	DIR *d = opendir(c->inbox);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			consumer_add(c, de->d_name);
		closedir(d);
	}
	c->rescan = false;
	c->retry_dirty = true;
	c->last_scan_ns = util_mono_ns();
}

/* Reads pending inotify events into the heap. Returns 1 if any. */
static int consumer_drain(struct bus_consumer *c)
{
	if (c->ifd < 0)
		return 0;
	char buf[INOTIFY_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
	int any = 0;
	for (;;) {
		ssize_t n = read(c->ifd, buf, sizeof(buf));
		if (n <= 0)
			break;
		any = 1;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)(void *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW)
				c->rescan = true;
			else if (ev->len && ev->wd == c->wd_inbox)
				consumer_add(c, ev->name);
			else if (ev->wd == c->wd_retry)
				c->retry_dirty = true;
		}
	}
	return any;
}

/* Moves due retries of one agent back to its inbox; returns the earliest
 * due time still waiting (0 if none). */
int64_t fsbus_promote_retries(struct bus *b, const char *agent)
{
	char *rdir = fsbus_qpath(b, "retry", agent);
	char *idir = fsbus_qpath(b, "inbox", agent);
	int64_t now = util_now_ns(), next = 0;
	DIR *d = opendir(rdir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		if (strlen(n) < 21 || n[19] != '.' || !fsbus_all_digits(n, 19))
			continue;
		int64_t due = fsbus_parse_digits(n, 19);
		if (due > now) {
			if (!next || due < next)
				next = due;
			continue;
		}
		char *src = xasprintf("%s/%s", rdir, n);
		fsbus_move_into(src, idir, n + 20, NULL, NULL);
		free(src);
	}
	if (d)
		closedir(d);
	free(rdir);
	free(idir);
	return next;
}

/* Gives back one agent's claims held by dead consumers or expired leases:
 * to the inbox with one more attempt, or to the dead letters. */
void fsbus_recover_claims(struct bus *b, const char *agent)
{
	struct fsbus *fs = FS(b);
	char *pdir = fsbus_qpath(b, "processing", agent);
	char *idir = fsbus_qpath(b, "inbox", agent);
	DIR *d = opendir(pdir);
	struct dirent *de;
	int64_t now = util_now_ns();
	while (d && (de = readdir(d))) {
		const char *at = strchr(de->d_name, '@');
		if (!at || de->d_name[0] == '.')
			continue;
		char owner[64];
		snprintf(owner, sizeof(owner), "%.*s", (int)(at - de->d_name), de->d_name);
		/* This process's own claims too, when their lease ran out:
		 * its lease thread renews every claim held, so one not renewed
		 * is one given up (held past MADF_LEASE_MAX_S, or freed
		 * unanswered), which nobody else may be there to recover. */
		bool mine = !strcmp(owner, fs->owner);
		char *src = xasprintf("%s/%s", pdir, de->d_name);
		struct stat st;
		char *why = NULL;
		if (!mine && fsbus_owner_dead(fs, owner))
			why = xasprintf("consumer %s died while handling it", owner);
		else if (lstat(src, &st) == 0 &&
			 now - ((int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec) >
				 b->cfg.lease_s * NS_PER_S)
			why = mine ? xasprintf("lease of consumer %s (this process) expired after "
					       "%lld s: renewed no more, its handler held it past "
					       "the lease maximum (%lld s) or left it unanswered",
					       owner, (long long)b->cfg.lease_s,
					       (long long)b->cfg.lease_max_s) :
				     xasprintf("lease of consumer %s expired after %lld s",
					       owner, (long long)b->cfg.lease_s);
		if (!why) {
			free(src);
			continue;
		}
		const char *name = at + 1;
		struct bus_fname f;
		if (bus_fname_parse(name, &f) == 0) {
			f.attempts++;
			cJSON *rec = fsbus_attempts_load(b, agent, f.id);
			fsbus_attempts_note(rec, f.attempts, why, agent);
			char *mid = fsbus_name_message_id(name);
			if (f.attempts >= b->cfg.max_attempts) {
				fsbus_dead_letter(b, src, name, agent, "max_attempts", why,
						  rec, mid, NULL, NULL);
				fsbus_attempts_drop(b, agent, f.id);
			} else if (fsbus_attempts_save(b, agent, f.id, rec, NULL) == 0) {
				char nn[300];
				bus_fname_format(&f, nn, sizeof(nn));
				fsbus_move_into(src, idir, nn, NULL, NULL);
			}
			free(mid);
			cJSON_Delete(rec);
		} else {
			fsbus_move_into(src, idir, name, NULL, NULL);
		}
		free(why);
		free(src);
	}
	if (d)
		closedir(d);
	free(pdir);
	free(idir);
}

/* Removes temporary files older than an hour from tmp/ and one inbox. */
void fsbus_clean_stale_tmp(const char *dir, int64_t now, bool dry_run,
			   void (*report)(void *, const char *, const char *),
			   void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		bool tmp = len > 4 && !strcmp(de->d_name + len - 4, ".tmp");
		if (!tmp || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
		    now - (int64_t)st.st_mtim.tv_sec * NS_PER_S > STALE_TMP_NS) {
			if (report)
				report(ctx, "stale temporary file", p);
			if (!dry_run)
				unlink(p);
		}
		free(p);
	}
	if (d)
		closedir(d);
}

static void consumer_sweep(struct bus_consumer *c, bool force)
{
	int64_t mono = util_mono_ns();
	int64_t every = (int64_t)(c->bus->cfg.poll_interval_s * 5 * NS_PER_S);
	if (!force && mono - c->last_sweep_ns < every)
		return;
	c->last_sweep_ns = mono;
	fsbus_recover_claims(c->bus, c->agent);
	c->retry_dirty = true;
}

void fsbus_consumer_free(struct bus_consumer *c)
{
	heap_clear(c);
	free(c->heap);
	if (c->ifd >= 0)
		close(c->ifd);
	free(c->agent);
	free(c->inbox);
	free(c->processing);
	free(c->retry);
	free(c->processed_root);
	free(c);
}

int fsbus_consumer_open(struct bus *b, const char *agent,
			struct bus_consumer **out, char **err)
{
	struct bus_consumer *c = xcalloc(1, sizeof(*c));
	c->bus = b;
	c->agent = xstrdup(agent);
	c->inbox = fsbus_qpath(b, "inbox", agent);
	c->processing = fsbus_qpath(b, "processing", agent);
	c->retry = fsbus_qpath(b, "retry", agent);
	c->processed_root = fsbus_qpath(b, "processed", NULL);
	c->ifd = c->wd_inbox = c->wd_retry = -1;
	fsbus_owner_refresh(FS(b));
	if (fsbus_ensure_dir(c->inbox, err) < 0 || fsbus_ensure_dir(c->processing, err) < 0 ||
	    fsbus_ensure_dir(c->retry, err) < 0) {
		fsbus_consumer_free(c);
		return -1;
	}
	if (!b->cfg.force_poll) {
		c->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (c->ifd >= 0) {
			c->wd_inbox = inotify_add_watch(c->ifd, c->inbox,
							IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
			c->wd_retry = inotify_add_watch(c->ifd, c->retry,
							IN_MOVED_TO | IN_ONLYDIR);
			if (c->wd_inbox < 0 || c->wd_retry < 0) {
				close(c->ifd);
				c->ifd = -1; /* e.g. NFS: poll instead */
			}
		}
	}
	consumer_sweep(c, true);
	fsbus_clean_stale_tmp(FS(b)->tmpdir, util_now_ns(), false, NULL, NULL);
	fsbus_clean_stale_tmp(c->inbox, util_now_ns(), false, NULL, NULL);
	consumer_scan(c);
	*out = c;
	return 0;
}

int fsbus_consumer_fd(struct bus_consumer *c)
{
	return c->ifd;
}

static int64_t consumer_next_deadline_ms(struct bus_consumer *c)
{
	int64_t ms = (int64_t)(c->bus->cfg.poll_interval_s * 1000);
	if (c->next_due_ns) {
		int64_t d = (c->next_due_ns - util_now_ns()) / 1000000 + 1;
		if (d < ms)
			ms = d < 0 ? 0 : d;
	}
	return ms;
}

int fsbus_consumer_wait(struct bus_consumer *c, int timeout_ms)
{
	if (c->nheap || c->rescan)
		return 1;
	if (c->retry_dirty || (c->next_due_ns && c->next_due_ns <= util_now_ns()))
		return 1;
	int64_t limit = consumer_next_deadline_ms(c);
	int t = timeout_ms < 0 || timeout_ms > limit ? (int)limit : timeout_ms;
	if (c->ifd < 0) {
		struct timespec ts = { t / 1000, (long)(t % 1000) * 1000000L };
		nanosleep(&ts, NULL);
		c->rescan = true;
		return 1;
	}
	struct pollfd p = { .fd = c->ifd, .events = POLLIN };
	int r = poll(&p, 1, t);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (r == 0)
		return c->next_due_ns && c->next_due_ns <= util_now_ns();
	return consumer_drain(c);
}

int fsbus_consumer_timeout(struct bus_consumer *c)
{
	if (c->nheap || c->rescan || c->retry_dirty)
		return 0;
	if (c->next_due_ns && c->next_due_ns <= util_now_ns())
		return 0;
	int64_t ms = consumer_next_deadline_ms(c);
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static const char *mode_name(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	return "not a regular file";
}

/* Checks and parses a claimed file. Returns the message, or NULL after
 * dead-lettering it (reason filled). */
static struct msg *claim_check(struct bus_consumer *c, const char *ppath,
			       const char *name)
{
	struct bus *b = c->bus;
	struct stat st;
	char *error = NULL;
	const char *reason = NULL;
	struct msg *m = NULL;
	char *buf = NULL;
	size_t len = 0;
	struct msg_errors errs = { 0 };
	if (lstat(ppath, &st) < 0) {
		reason = "unreadable";
		error = xasprintf("cannot stat: %s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		reason = "not_regular";
		error = xasprintf("%s is %s; only regular files are read", name,
				  mode_name(st.st_mode));
	} else if ((uint64_t)st.st_size > b->cfg.max_bytes) {
		reason = "too_large";
		error = xasprintf("%lld bytes is over the %zu-byte limit",
				  (long long)st.st_size, b->cfg.max_bytes);
	} else if (util_read_file(ppath, b->cfg.max_bytes, &buf, &len, &error) < 0) {
		reason = "unreadable";
	} else if (msg_parse(buf, len, &m, &errs) < 0) {
		reason = "invalid";
		error = msg_errors_join(&errs);
	} else {
		reason = bus_undeliverable(m, c->agent, &error);
	}
	free(buf);
	if (reason && !strcmp(reason, "expired") && bus_drop_type(m->type) &&
	    unlink(ppath) == 0) {
		/* nobody needs a stale heartbeat: dropped and counted */
		bus_drop_note(FS(b)->root, m, c->agent, "expired");
		struct bus_fname f;
		if (bus_fname_parse(name, &f) == 0 && f.attempts > 0)
			fsbus_attempts_drop(b, c->agent, f.id);
		msg_free(&m);
		reason = NULL;
	}
	if (reason) {
		char *mid = m ? xstrdup(m->id) : fsbus_name_message_id(name);
		cJSON *rec = NULL;
		struct bus_fname f;
		if (bus_fname_parse(name, &f) == 0 && f.attempts > 0)
			rec = fsbus_attempts_load(b, c->agent, f.id);
		if (errs.count) {
			if (!rec)
				rec = cJSON_CreateObject();
			cJSON *arr = cJSON_AddArrayToObject(rec, "validation_errors");
			for (size_t i = 0; i < errs.count; i++)
				cJSON_AddItemToArray(arr, cJSON_CreateString(errs.items[i]));
		}
		struct dl_about ab = { m ? m->from : NULL, m ? m->to : NULL,
				       m ? msg_type_name(m->type) : NULL };
		fsbus_dead_letter(b, ppath, name, c->agent, reason, error, rec, mid, &ab, NULL);
		if (rec && bus_fname_parse(name, &f) == 0)
			fsbus_attempts_drop(b, c->agent, f.id);
		cJSON_Delete(rec);
		free(mid);
		msg_free(&m);
	}
	msg_errors_release(&errs);
	free(error);
	return m;
}

int fsbus_claim(struct bus_consumer *c, struct bus_delivery **d, char **err)
{
	struct bus *b = c->bus;
	struct fsbus *fs = FS(b);
	fsbus_owner_refresh(fs);
	consumer_drain(c);
	consumer_sweep(c, false);
	if (c->retry_dirty || (c->next_due_ns && c->next_due_ns <= util_now_ns())) {
		c->retry_dirty = false;
		c->next_due_ns = fsbus_promote_retries(b, c->agent);
		consumer_drain(c);
	}
	for (;;) {
		if (c->rescan ||
		    (c->nheap == 0 && c->ifd < 0 &&
		     util_mono_ns() - c->last_scan_ns >=
			     (int64_t)(b->cfg.poll_interval_s * NS_PER_S)))
			consumer_scan(c);
		if (c->nheap == 0)
			return 0;
		struct cand x = heap_pop(c);
		char *src = xasprintf("%s/%s", c->inbox, x.name);
		char *pname = xasprintf("%s@%s", fs->owner, x.name);
		char *ppath = xasprintf("%s/%s", c->processing, pname);
		/* The lease runs from the claimed file's mtime, which a rename
		 * keeps: set to now first, or a message that waited longer than
		 * the lease would reach processing/ with its lease already out
		 * (and another consumer's sweep would give it back at once). */
		int rc = utimensat(AT_FDCWD, src, NULL, AT_SYMLINK_NOFOLLOW);
		if (rc == 0 || errno != ENOENT)
			rc = rename(src, ppath);
		int e = errno;
		free(src);
		if (rc < 0) {
			free(pname);
			free(ppath);
			free(x.name);
			if (e == ENOENT)
				continue; /* another consumer took it */
			return err_set(err, "cannot claim from %s: %s", c->inbox,
				       strerror(e));
		}
		struct msg *m = claim_check(c, ppath, x.name);
		if (!m) {
			free(pname);
			free(ppath);
			free(x.name);
			continue;
		}
		struct bus_fname f;
		char *canon;
		if (bus_fname_parse(x.name, &f) == 0) {
			canon = x.name;
		} else {
			/* A foreign name: store it under ours from now on. */
			f.prio = m->priority;
			f.t_ns = x.t_ns ? x.t_ns : m->ts_ns;
			util_strlcpy(f.id, m->id, sizeof(f.id));
			f.attempts = 0;
			char nn[300];
			bus_fname_format(&f, nn, sizeof(nn));
			char *pn2 = xasprintf("%s@%s", fs->owner, nn);
			char *pp2 = xasprintf("%s/%s", c->processing, pn2);
			if (fsbus_rename_noreplace(ppath, pp2) == 0) {
				free(pname);
				pname = pn2;
			} else {
				free(pn2);
			}
			free(pp2);
			free(x.name);
			canon = xstrdup(strchr(pname, '@') + 1);
		}
		free(ppath);
		struct bus_delivery *dv = xcalloc(1, sizeof(*dv));
		dv->msg = m;
		dv->attempts = f.attempts;
		dv->name = pname;
		dv->canon = canon;
		dv->agent = xstrdup(c->agent);
		*d = dv;
		return 1;
	}
}

int fsbus_ack(struct bus_consumer *c, struct bus_delivery *d, char **err)
{
	char date[16];
	util_date(util_now_ns(), date, sizeof(date));
	char *src = xasprintf("%s/%s", c->processing, d->name);
	char *dir = xasprintf("%s/%s", c->processed_root, date);
	int r = fsbus_move_into(src, dir, d->canon, NULL, err);
	if (r < 0 && errno == ENOENT)
		err_set(err, "lost the claim on %s: it was given back to the inbox "
			     "(lease expired) and will be delivered again",
			d->msg->id);
	if (r == 0 && d->attempts > 0) {
		struct bus_fname f;
		if (bus_fname_parse(d->canon, &f) == 0)
			fsbus_attempts_drop(c->bus, c->agent, f.id);
	}
	free(src);
	free(dir);
	return r;
}

int fsbus_nack(struct bus_consumer *c, struct bus_delivery *d,
	       const char *error, bool permanent, char **err)
{
	struct bus *b = c->bus;
	struct bus_fname f;
	if (bus_fname_parse(d->canon, &f) < 0)
		return err_set(err, "bad handle %s", d->canon);
	f.attempts++;
	char *src = xasprintf("%s/%s", c->processing, d->name);
	cJSON *rec = fsbus_attempts_load(b, c->agent, f.id);
	fsbus_attempts_note(rec, f.attempts, error, c->agent);
	int r;
	if (permanent || f.attempts >= b->cfg.max_attempts) {
		struct dl_about ab = { d->msg->from, d->msg->to, msg_type_name(d->msg->type) };
		r = fsbus_dead_letter(b, src, d->canon, c->agent,
				      permanent ? "rejected" : "max_attempts", error, rec,
				      d->msg->id, &ab, err);
		if (r == 0)
			fsbus_attempts_drop(b, c->agent, f.id);
	} else if ((r = fsbus_attempts_save(b, c->agent, f.id, rec, err)) == 0) {
		int64_t due = util_now_ns() + bus_backoff_ms(&b->cfg, f.attempts) * 1000000;
		char nn[300], rn[340];
		bus_fname_format(&f, nn, sizeof(nn));
		snprintf(rn, sizeof(rn), "%019lld.%s", (long long)due, nn);
		r = fsbus_move_into(src, c->retry, rn, NULL, err);
		if (r == 0 && (!c->next_due_ns || due < c->next_due_ns))
			c->next_due_ns = due;
	}
	cJSON_Delete(rec);
	free(src);
	return r;
}

int fsbus_release(struct bus_consumer *c, struct bus_delivery *d, char **err)
{
	char *src = xasprintf("%s/%s", c->processing, d->name);
	int r = fsbus_move_into(src, c->inbox, d->canon, NULL, err);
	free(src);
	return r;
}

/* The claimed file's mtime is its lease's start (fsbus_recover_claims). */
int fsbus_renew(struct bus_consumer *c, const struct bus_delivery *d, char **err)
{
	char *p = xasprintf("%s/%s", c->processing, d->name);
	int r = utimensat(AT_FDCWD, p, NULL, AT_SYMLINK_NOFOLLOW);
	if (r < 0 && errno == ENOENT)
		err_set(err, "cannot renew the lease on %s: the claim is gone (given back "
			     "when its lease ran out)", d->msg ? d->msg->id : d->canon);
	else if (r < 0)
		err_set(err, "cannot renew the lease on %s: %s", p, strerror(errno));
	free(p);
	return r < 0 ? -1 : 0;
}
