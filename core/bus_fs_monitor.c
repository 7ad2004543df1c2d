/* The file-system transport: the monitor, counters kept from inotify
 * events. */
#include "core/bus_fs_priv.h"
#include "core/bus_drop.h"
#include "core/bus_rate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

/* ---- monitor: counters kept from inotify events -------------------------- */

/* A set of names with a time each (open addressing, linear probing). Each
 * slot keeps its name's hash: a probe compares hashes before names, and
 * growing moves the names without hashing or copying them again. */
struct nset {
	char **keys;
	int64_t *vals;
	uint32_t *hashes;    /* each name's hash */
	size_t cap, n, used; /* used counts tombstones too */
};

static char nset_tomb[1];

static uint32_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (uint32_t)(h ^ (h >> 32));
}

static size_t nset_slot(const struct nset *s, uint32_t h)
{
	return (size_t)(((uint64_t)h * 0x9e3779b97f4a7c15ULL) >> 32) & (s->cap - 1);
}

static void nset_free(struct nset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->keys[i] && s->keys[i] != nset_tomb)
			free(s->keys[i]);
	free(s->keys);
	free(s->vals);
	free(s->hashes);
	memset(s, 0, sizeof(*s));
}

static void nset_grow(struct nset *s)
{
	struct nset old = *s;
	s->cap = old.cap ? old.cap * 2 : 64;
	while (s->cap < old.n * 3)
		s->cap *= 2;
	s->keys = xcalloc(s->cap, sizeof(*s->keys));
	s->vals = xcalloc(s->cap, sizeof(*s->vals));
	s->hashes = xcalloc(s->cap, sizeof(*s->hashes));
	s->used = s->n;
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.keys[i] || old.keys[i] == nset_tomb)
			continue;
		size_t j = nset_slot(s, old.hashes[i]);
		while (s->keys[j])
			j = (j + 1) & (s->cap - 1);
		s->keys[j] = old.keys[i];
		s->vals[j] = old.vals[i];
		s->hashes[j] = old.hashes[i];
	}
	free(old.keys);
	free(old.vals);
	free(old.hashes);
}

static void nset_put(struct nset *s, const char *k, int64_t v)
{
	if ((s->used + 1) * 2 > s->cap)
		nset_grow(s);
	uint32_t h = hash_str(k);
	size_t i = nset_slot(s, h), tomb = SIZE_MAX;
	while (s->keys[i]) {
		if (s->keys[i] == nset_tomb) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (s->hashes[i] == h && !strcmp(s->keys[i], k)) {
			s->vals[i] = v;
			return;
		}
		i = (i + 1) & (s->cap - 1);
	}
	if (tomb != SIZE_MAX)
		i = tomb;
	else
		s->used++;
	s->keys[i] = xstrdup(k);
	s->vals[i] = v;
	s->hashes[i] = h;
	s->n++;
}

/* Removes k; returns its value, or -1 if absent. */
static int64_t nset_del(struct nset *s, const char *k)
{
	if (!s->cap)
		return -1;
	uint32_t h = hash_str(k);
	size_t i = nset_slot(s, h);
	while (s->keys[i]) {
		if (s->keys[i] != nset_tomb && s->hashes[i] == h && !strcmp(s->keys[i], k)) {
			free(s->keys[i]);
			s->keys[i] = nset_tomb;
			s->n--;
			return s->vals[i];
		}
		i = (i + 1) & (s->cap - 1);
	}
	return -1;
}

struct mon_agent {
	char name[MSG_AGENT_MAX + 1];
	struct nset q[3]; /* inbox, processing, retry */
	int64_t oldest;
	bool oldest_dirty;
	bool gone;        /* its inbox directory went (bus_forget_agent): not listed */
};

struct mon_watch {
	int wd;
	int kind;   /* 0..2 per-agent queue, 3 dead, 4..6 a queue root,
		       7 processed/, 8 one of its date directories */
	size_t agent;
};

#define MON_PROCESSED_ROOT 7
#define MON_PROCESSED_DAY 8

struct bus_monitor {
	struct bus *bus; /* first: see bus.c */
	int ifd;
	struct mon_agent *agents;
	size_t nagents;
	struct nset dead;
	uint64_t dead_gen;       /* bumped by every dead letter come or gone */
	struct mon_watch *watches;
	size_t nwatches;
	int64_t last_scan_ns;
	/* acks: moves into processed/<date>/, counted from events (a rescan
	 * keeps them) */
	struct bus_rate acks;
	struct bus_drop_counter drops;
};

static const char *const mon_qdirs[3] = { "inbox", "processing", "retry" };

static int64_t mon_key_time(int kind, const char *name)
{
	struct bus_fname f;
	const char *base = name;
	if (kind == 1) {
		const char *at = strchr(name, '@');
		base = at ? at + 1 : name;
	} else if (kind == 2) {
		base = strlen(name) > 20 ? name + 20 : name;
	}
	return bus_fname_parse(base, &f) == 0 ? f.t_ns : 0;
}

static bool mon_counts(int kind, const char *name)
{
	if (name[0] == '.')
		return false;
	if (kind == 0)
		return bus_fname_wanted(name);
	if (kind == 1)
		return strchr(name, '@') != NULL;
	if (kind == 2)
		return strlen(name) > 20 && name[19] == '.';
	/* dead letters: messages, not sidecars or temporary files */
	size_t len = strlen(name);
	return !fsbus_is_sidecar(name) && !(len > 4 && !strcmp(name + len - 4, ".tmp"));
}

static void mon_add_watch(struct bus_monitor *m, const char *path, int kind,
			  size_t agent)
{
	if (m->ifd < 0)
		return;
	int wd = inotify_add_watch(m->ifd, path,
				   IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
				   IN_DELETE | IN_ONLYDIR);
	if (wd < 0)
		return;
	m->watches = xrealloc(m->watches, (m->nwatches + 1) * sizeof(*m->watches));
	m->watches[m->nwatches++] = (struct mon_watch){ wd, kind, agent };
}

static void mon_note(struct bus_monitor *m, int kind, size_t ai,
		     const char *name, bool add);

static void mon_scan_dir(struct bus_monitor *m, int kind, size_t ai,
			 const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		mon_note(m, kind, ai, de->d_name, true);
	if (d)
		closedir(d);
}

static size_t mon_agent(struct bus_monitor *m, const char *name)
{
	size_t ai = m->nagents;
	for (size_t i = 0; i < m->nagents; i++)
		if (!strcmp(m->agents[i].name, name)) {
			if (!m->agents[i].gone)
				return i;
			ai = i; /* back: watched and scanned again */
			break;
		}
	if (ai == m->nagents) {
		m->agents = xrealloc(m->agents, (m->nagents + 1) * sizeof(*m->agents));
		struct mon_agent *a = &m->agents[m->nagents];
		memset(a, 0, sizeof(*a));
		util_strlcpy(a->name, name, sizeof(a->name));
		m->nagents++;
	}
	m->agents[ai].gone = false;
	for (int k = 0; k < 3; k++) {
		char *dir = fsbus_qpath(m->bus, mon_qdirs[k], name);
		fsbus_ensure_dir(dir, NULL);
		mon_add_watch(m, dir, k, ai);
		mon_scan_dir(m, k, ai, dir);
		free(dir);
	}
	return ai;
}

static void mon_note(struct bus_monitor *m, int kind, size_t ai,
		     const char *name, bool add)
{
	if (kind == MON_PROCESSED_ROOT) {
		/* a new day's directory */
		if (add && strlen(name) == 10 && name[4] == '-') {
			char *dir = xasprintf("%s/processed/%s", FS(m->bus)->root, name);
			mon_add_watch(m, dir, MON_PROCESSED_DAY, 0);
			free(dir);
		}
		return;
	}
	if (kind == MON_PROCESSED_DAY) {
		if (add && name[0] != '.')
			bus_rate_add(&m->acks);
		return;
	}
	if (kind >= 4) {
		/* A new agent directory under a queue root (an agent is one
		 * with an inbox: a late event of a directory already removed
		 * makes none); an inbox directory removed (bus_forget_agent):
		 * the agent is no longer listed. */
		if (!util_valid_agent_name(name))
			return;
		char *inbox = fsbus_qpath(m->bus, mon_qdirs[0], name);
		bool there = access(inbox, F_OK) == 0;
		free(inbox);
		if (add && there) {
			mon_agent(m, name);
		} else if (!add && kind == 4 && !there) {
			for (size_t i = 0; i < m->nagents; i++)
				if (!strcmp(m->agents[i].name, name) && !m->agents[i].gone) {
					for (int k = 0; k < 3; k++)
						nset_free(&m->agents[i].q[k]);
					m->agents[i].gone = true;
				}
		}
		return;
	}
	if (!mon_counts(kind, name))
		return;
	if (kind == 3) {
		if (add)
			nset_put(&m->dead, name, 0);
		else
			nset_del(&m->dead, name);
		m->dead_gen++;
		return;
	}
	struct mon_agent *a = &m->agents[ai];
	int64_t t = mon_key_time(kind, name);
	if (add && t == 0) {
		/* a name without a time (not written by madf): its mtime */
		char *p = xasprintf("%s/%s/%s/%s", FS(m->bus)->root, mon_qdirs[kind], a->name,
				    name);
		struct stat st;
		if (lstat(p, &st) == 0)
			t = (int64_t)st.st_mtim.tv_sec * NS_PER_S + st.st_mtim.tv_nsec;
		free(p);
	}
	if (add) {
		nset_put(&a->q[kind], name, t);
		if (kind == 0 && !a->oldest_dirty && (a->oldest == 0 || t < a->oldest))
			a->oldest = t;
	} else {
		int64_t old = nset_del(&a->q[kind], name);
		if (kind == 0 && old >= 0 && old <= a->oldest)
			a->oldest_dirty = true;
	}
}

static void mon_reset(struct bus_monitor *m)
{
	for (size_t i = 0; i < m->nagents; i++)
		for (int k = 0; k < 3; k++)
			nset_free(&m->agents[i].q[k]);
	free(m->agents);
	m->agents = NULL;
	m->nagents = 0;
	nset_free(&m->dead);
	free(m->watches);
	m->watches = NULL;
	m->nwatches = 0;
	if (m->ifd >= 0)
		close(m->ifd);
	m->ifd = -1;
}

static void mon_scan_all(struct bus_monitor *m)
{
	mon_reset(m);
	if (!m->bus->cfg.force_poll)
		m->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* Watches first, then scans: an event in between only repeats what
	 * the scan sees, and the sets make repeats harmless. */
	for (int k = 0; k < 3; k++) {
		char *root = fsbus_qpath(m->bus, mon_qdirs[k], NULL);
		mon_add_watch(m, root, 4 + k, 0);
		free(root);
	}
	for (size_t i = 0; i < bus_default_agent_count; i++)
		mon_agent(m, bus_default_agents[i]);
	for (int k = 0; k < 3; k++) {
		char *root = fsbus_qpath(m->bus, mon_qdirs[k], NULL);
		mon_scan_dir(m, 4 + k, 0, root);
		free(root);
	}
	char *dd = fsbus_qpath(m->bus, "dead-letter", NULL);
	mon_add_watch(m, dd, 3, 0);
	mon_scan_dir(m, 3, 0, dd);
	free(dd);
	/* acks from now on: today's directory (made now, so that no ack
	 * creates it unseen) and each new day's */
	if (m->ifd >= 0) {
		char *pr = fsbus_qpath(m->bus, "processed", NULL);
		mon_add_watch(m, pr, MON_PROCESSED_ROOT, 0);
		char date[16];
		util_date(util_now_ns(), date, sizeof(date));
		char *day = xasprintf("%s/%s", pr, date);
		fsbus_ensure_dir(day, NULL);
		mon_add_watch(m, day, MON_PROCESSED_DAY, 0);
		free(day);
		free(pr);
	}
	m->last_scan_ns = util_mono_ns();
}

int fsbus_monitor_open(struct bus *b, struct bus_monitor **out, char **err)
{
	(void)err;
	struct bus_monitor *m = xcalloc(1, sizeof(*m));
	m->bus = b;
	m->ifd = -1;
	bus_rate_open(&m->acks);
	mon_scan_all(m);
	*out = m;
	return 0;
}

void fsbus_monitor_free(struct bus_monitor *m)
{
	mon_reset(m);
	free(m);
}

int fsbus_monitor_fd(struct bus_monitor *m)
{
	return m->ifd;
}

int fsbus_monitor_process(struct bus_monitor *m)
{
	if (m->ifd < 0) {
		/* Polling: rescan at the poll interval. */
		if (util_mono_ns() - m->last_scan_ns <
		    (int64_t)(m->bus->cfg.poll_interval_s * NS_PER_S))
			return 0;
		mon_scan_all(m);
		return 1;
	}
	char buf[INOTIFY_BUF] __attribute__((aligned(__alignof__(struct inotify_event))));
	int changed = 0;
	bool overflow = false;
	for (;;) {
		ssize_t n = read(m->ifd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)(void *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				overflow = true;
				continue;
			}
			if (ev->mask & IN_IGNORED) {
				/* its directory went: the number may be given
				 * to a new watch */
				for (size_t i = 0; i < m->nwatches; i++)
					if (m->watches[i].wd == ev->wd) {
						m->watches[i] = m->watches[--m->nwatches];
						break;
					}
				continue;
			}
			if (!ev->len)
				continue;
			for (size_t i = 0; i < m->nwatches; i++) {
				if (m->watches[i].wd != ev->wd)
					continue;
				bool add = ev->mask & (IN_MOVED_TO | IN_CREATE);
				mon_note(m, m->watches[i].kind, m->watches[i].agent,
					 ev->name, add);
				changed = 1;
				break;
			}
		}
	}
	if (overflow) {
		mon_scan_all(m);
		changed = 1;
	}
	return changed;
}

static int agent_stats_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bus_agent_stats *)a)->agent,
		      ((const struct bus_agent_stats *)b)->agent);
}

void fsbus_monitor_stats(struct bus_monitor *m, struct bus_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->agents = xcalloc(m->nagents ? m->nagents : 1, sizeof(*out->agents));
	size_t n = 0;
	for (size_t i = 0; i < m->nagents; i++) {
		struct mon_agent *a = &m->agents[i];
		if (a->gone)
			continue;
		if (a->oldest_dirty) {
			a->oldest = 0;
			for (size_t k = 0; k < a->q[0].cap; k++) {
				const char *key = a->q[0].keys[k];
				if (key && key != nset_tomb &&
				    (a->oldest == 0 || a->q[0].vals[k] < a->oldest))
					a->oldest = a->q[0].vals[k];
			}
			a->oldest_dirty = false;
		}
		struct bus_agent_stats *s = &out->agents[n++];
		util_strlcpy(s->agent, a->name, sizeof(s->agent));
		s->depth = a->q[0].n;
		s->oldest_ns = a->q[0].n ? a->oldest : 0;
		s->processing = a->q[1].n;
		s->retry = a->q[2].n;
		out->processing += s->processing;
		out->retry += s->retry;
	}
	out->nagents = n;
	out->dead_letter = m->dead.n;
	out->dead_gen = m->dead_gen;
	out->acked = m->acks.total;
	out->acked_per_s = bus_rate_per_s(&m->acks);
	out->expired_dropped = bus_drop_count(FS(m->bus)->root, &m->drops);
	qsort(out->agents, out->nagents, sizeof(*out->agents), agent_stats_cmp);
}
