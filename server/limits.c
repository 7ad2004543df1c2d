/* madf serve's limits per user (seed 004: 5 conversations an hour, 2 at
 * once, 100 rounds a day), kept as sliding logs in
 * <data_dir>/serve-limits.json and told to clients in the IETF
 * RateLimit-Policy and RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-11).
 *
 * Persistence: each change is one line appended to
 * <data_dir>/serve-limits.journal (one write, under the lock); the whole
 * state goes to serve-limits.json (atomically) at most about once a
 * second (serve_limits_flush, the server's tick), at open and at the end,
 * and the journal is then emptied. Rewriting the whole file at every
 * admission cost O(users' entries) each under the lock: with 1,000
 * conversations opening at once, seconds. Replay is idempotent (an
 * admission whose id the snapshot's nextId already covers is skipped; an
 * end only lowers a reservation), so a stop between the snapshot's rename
 * and the journal's truncation counts nothing twice. */
#include "server/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define HOUR 3600
#define DAY 86400

struct rounds_entry {
	int64_t t;
	long id;
	int n;
};

struct user_limits {
	char *user;
	int64_t *starts;          /* conversations started (epoch seconds) */
	size_t nstarts;
	struct rounds_entry *rounds; /* rounds reserved */
	size_t nrounds;
	long active;              /* running now (not persisted) */
};

struct serve_limits {
	pthread_mutex_t mu;
	char *path;
	char *jpath;              /* the journal */
	int jfd;                  /* appending to it (-1: not open) */
	bool dirty;               /* the journal has lines the snapshot lacks */
	struct serve_limits_policy p;
	struct user_limits *u;
	size_t nu;
	long next_id;
	long snap_next_id;        /* the snapshot's nextId: older admits are in it */
};

static long env_limit(const char *name, long def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	return errno || *end || x < 1 || x > 1000000000L ? def : x;
}

void serve_limits_policy_env(struct serve_limits_policy *p)
{
	p->conv_per_hour = env_limit("MADF_SERVE_CONV_PER_HOUR", 5);
	p->concurrent = env_limit("MADF_SERVE_CONCURRENT", 2);
	p->rounds_per_day = env_limit("MADF_SERVE_ROUNDS_PER_DAY", 100);
}

static struct user_limits *user_get(struct serve_limits *l, const char *user, bool add)
{
	for (size_t i = 0; i < l->nu; i++)
		if (!strcmp(l->u[i].user, user))
			return &l->u[i];
	if (!add)
		return NULL;
	l->u = xrealloc(l->u, (l->nu + 1) * sizeof(*l->u));
	struct user_limits *u = &l->u[l->nu++];
	memset(u, 0, sizeof(*u));
	u->user = xstrdup(user);
	return u;
}

/* Drops what is out of its window at now. */
static void user_prune(struct user_limits *u, int64_t now)
{
	size_t k = 0;
	for (size_t i = 0; i < u->nstarts; i++)
		if (u->starts[i] > now - HOUR)
			u->starts[k++] = u->starts[i];
	u->nstarts = k;
	k = 0;
	for (size_t i = 0; i < u->nrounds; i++)
		if (u->rounds[i].t > now - DAY && u->rounds[i].n > 0)
			u->rounds[k++] = u->rounds[i];
	u->nrounds = k;
}

static long rounds_used(const struct user_limits *u)
{
	long n = 0;
	for (size_t i = 0; i < u->nrounds; i++)
		n += u->rounds[i].n;
	return n;
}

static int limits_save(struct serve_limits *l, char **err)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddNumberToObject(root, "version", 1);
	cJSON_AddNumberToObject(root, "nextId", (double)l->next_id);
	cJSON *users = cJSON_AddObjectToObject(root, "users");
	for (size_t i = 0; i < l->nu; i++) {
		const struct user_limits *u = &l->u[i];
		if (!u->nstarts && !u->nrounds)
			continue;
		cJSON *o = cJSON_AddObjectToObject(users, u->user);
		cJSON *s = cJSON_AddArrayToObject(o, "conversations");
		for (size_t k = 0; k < u->nstarts; k++)
			cJSON_AddItemToArray(s, cJSON_CreateNumber((double)u->starts[k]));
		cJSON *r = cJSON_AddArrayToObject(o, "rounds");
		for (size_t k = 0; k < u->nrounds; k++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "t", (double)u->rounds[k].t);
			cJSON_AddNumberToObject(e, "n", u->rounds[k].n);
			cJSON_AddNumberToObject(e, "id", (double)u->rounds[k].id);
			cJSON_AddItemToArray(r, e);
		}
	}
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	int rc = util_write_file_atomic(l->path, text, strlen(text), false, err);
	free(text);
	if (rc == 0 && l->jfd >= 0 && ftruncate(l->jfd, 0) < 0)
		rc = err_set(err, "cannot empty %s: %s", l->jpath, strerror(errno));
	if (rc == 0)
		l->dirty = false;
	return rc;
}

/* Appends one journal line (text starts and ends with '\n'): 0 or -1 with *err. Not
 * under the lock: a write that blocks (the file system) or a thread
 * preempted in it would stall every admission behind the lock (with a
 * thousand threads, for hundreds of ms); lines may land out of order,
 * which replay allows. */
static int journal_add(struct serve_limits *l, const char *text, char **err)
{
	size_t n = strlen(text);
	ssize_t w;
	do
		w = write(l->jfd, text, n);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)n) {
		/* A short write leaves a piece of a line: every line starts
		 * with a newline, so the next one starts afresh and replay
		 * skips the piece. */
		return err_set(err, "cannot write %s: %s", l->jpath,
			       w < 0 ? strerror(errno) : "short write (disk full?)");
	}
	return 0;
}

static bool num_ok(const cJSON *j)
{
	return cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble < 1e15;
}

static int limits_load(struct serve_limits *l, char **err)
{
	if (access(l->path, F_OK) < 0)
		return 0;
	char *buf = NULL, *perr = NULL;
	size_t len = 0;
	if (util_read_file(l->path, (size_t)16 << 20, &buf, &len, err) < 0)
		return -1;
	cJSON *root = json_parse_strict(buf, len, &perr);
	free(buf);
	const cJSON *users = cJSON_GetObjectItemCaseSensitive(root, "users");
	const cJSON *nid = cJSON_GetObjectItemCaseSensitive(root, "nextId");
	if (num_ok(nid) && (long)nid->valuedouble > l->next_id)
		l->next_id = (long)nid->valuedouble;
	if (!cJSON_IsObject(users)) {
		err_set(err, "%s: %s (fix or remove it)", l->path,
			perr ? perr : "no \"users\" object");
		free(perr);
		cJSON_Delete(root);
		return -1;
	}
	const cJSON *o;
	cJSON_ArrayForEach(o, users) {
		if (!serve_user_ok(o->string))
			goto bad;
		struct user_limits *u = user_get(l, o->string, true);
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "conversations");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rounds");
		if (!cJSON_IsArray(s) || !cJSON_IsArray(r))
			goto bad;
		const cJSON *e;
		cJSON_ArrayForEach(e, s) {
			if (!num_ok(e))
				goto bad;
			u->starts = xrealloc(u->starts, (u->nstarts + 1) * sizeof(*u->starts));
			u->starts[u->nstarts++] = (int64_t)e->valuedouble;
		}
		cJSON_ArrayForEach(e, r) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "t");
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "n");
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
			if (!num_ok(t) || !num_ok(n) || !num_ok(id) || n->valuedouble > 1000)
				goto bad;
			u->rounds = xrealloc(u->rounds, (u->nrounds + 1) * sizeof(*u->rounds));
			u->rounds[u->nrounds++] = (struct rounds_entry){
				(int64_t)t->valuedouble, (long)id->valuedouble, (int)n->valuedouble };
			if ((long)id->valuedouble >= l->next_id)
				l->next_id = (long)id->valuedouble + 1;
		}
	}
	cJSON_Delete(root);
	return 0;
bad:
	err_set(err, "%s: user \"%s\": not {\"conversations\": [seconds], \"rounds\": "
		"[{\"t\", \"n\", \"id\"}]} (fix or remove it)", l->path,
		serve_user_ok(o->string) ? o->string : "(a bad user name)");
	cJSON_Delete(root);
	return -1;
}

/* One journal line: {"admit": ID, "user", "t", "n"} or {"end": ID,
 * "user", "n"} (the rounds the conversation used). 0, or -1 when it is
 * not one. */
static int replay_line(struct serve_limits *l, const char *line, size_t len)
{
	cJSON *j = json_parse_strict(line, len, NULL);
	const cJSON *admit = cJSON_GetObjectItemCaseSensitive(j, "admit");
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(j, "end");
	const char *user = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "user"));
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "t");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "n");
	int rc = -1;
	if (!user || !serve_user_ok(user) || !num_ok(n) || n->valuedouble > 1000)
		goto out;
	if (num_ok(admit) && num_ok(t)) {
		long id = (long)admit->valuedouble;
		rc = 0;
		if (id < l->snap_next_id)
			goto out; /* the snapshot has it */
		struct user_limits *u = user_get(l, user, true);
		u->starts = xrealloc(u->starts, (u->nstarts + 1) * sizeof(*u->starts));
		u->starts[u->nstarts++] = (int64_t)t->valuedouble;
		u->rounds = xrealloc(u->rounds, (u->nrounds + 1) * sizeof(*u->rounds));
		u->rounds[u->nrounds++] = (struct rounds_entry){ (int64_t)t->valuedouble, id,
								 (int)n->valuedouble };
		if (id >= l->next_id)
			l->next_id = id + 1;
	} else if (num_ok(end)) {
		struct user_limits *u = user_get(l, user, false);
		for (size_t i = 0; u && i < u->nrounds; i++)
			if (u->rounds[i].id == (long)end->valuedouble && n->valuedouble < u->rounds[i].n)
				u->rounds[i].n = (int)n->valuedouble;
		rc = 0;
	}
out:
	cJSON_Delete(j);
	return rc;
}

/* The journal's lines over the snapshot's state. A line that is not a
 * record is a write cut short (disk full): that admission was refused
 * when it failed (nothing counted), that end's refund is lost; it is
 * skipped with a warning. So is a last line without its newline. */
static int journal_load(struct serve_limits *l, char **err)
{
	if (access(l->jpath, F_OK) < 0)
		return 0;
	char *buf = NULL;
	size_t len = 0;
	if (util_read_file(l->jpath, (size_t)256 << 20, &buf, &len, err) < 0)
		return -1;
	size_t at = 0;
	long lineno = 0;
	while (at < len) {
		char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;
		lineno++;
		if (n && (!nl || replay_line(l, buf + at, n) < 0))
			fprintf(stderr, "madf: serve: warning: %s: line %ld is not a whole limits "
				"record (a write cut short): skipped\n", l->jpath, lineno);
		at += n + 1;
	}
	free(buf);
	return 0;
}

int serve_limits_open(const char *data_dir, const struct serve_limits_policy *p,
		      struct serve_limits **out, char **err)
{
	struct serve_limits *l = xcalloc(1, sizeof(*l));
	pthread_mutex_init(&l->mu, NULL);
	l->path = xasprintf("%s/%s", data_dir, SERVE_LIMITS_FILE);
	l->jpath = xasprintf("%s/%s", data_dir, SERVE_LIMITS_JOURNAL);
	l->jfd = -1;
	l->next_id = 1;
	if (p)
		l->p = *p;
	else
		serve_limits_policy_env(&l->p);
	if (limits_load(l, err) < 0 || ((l->snap_next_id = l->next_id), journal_load(l, err) < 0)) {
		serve_limits_free(&l);
		return -1;
	}
	l->jfd = open(l->jpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (l->jfd < 0) {
		err_set(err, "cannot open %s: %s", l->jpath, strerror(errno));
		serve_limits_free(&l);
		return -1;
	}
	/* What the journal held goes into the snapshot now. */
	if (limits_save(l, err) < 0) {
		serve_limits_free(&l);
		return -1;
	}
	*out = l;
	return 0;
}

int serve_limits_flush(struct serve_limits *l, char **err)
{
	pthread_mutex_lock(&l->mu);
	int rc = l->dirty ? limits_save(l, err) : 0;
	pthread_mutex_unlock(&l->mu);
	return rc;
}

void serve_limits_free(struct serve_limits **lp)
{
	struct serve_limits *l = *lp;
	if (!l)
		return;
	char *err = NULL;
	if (l->dirty && limits_save(l, &err) < 0) {
		/* The journal keeps it: the next open replays it. */
		fprintf(stderr, "madf: serve: warning: %s\n", err);
		free(err);
	}
	if (l->jfd >= 0)
		close(l->jfd);
	free(l->jpath);
	for (size_t i = 0; i < l->nu; i++) {
		free(l->u[i].user);
		free(l->u[i].starts);
		free(l->u[i].rounds);
	}
	free(l->u);
	free(l->path);
	pthread_mutex_destroy(&l->mu);
	free(l);
	*lp = NULL;
}

/* The RateLimit value of u at now (caller frees). Under l->mu. */
static char *header_locked(const struct serve_limits *l, struct user_limits *u, int64_t now)
{
	user_prune(u, now);
	/* t: seconds until the window's oldest entry leaves it (the whole
	 * window when it is empty). */
	int64_t th = HOUR, td = DAY;
	for (size_t i = 0; i < u->nstarts; i++)
		if (u->starts[i] + HOUR - now < th)
			th = u->starts[i] + HOUR - now;
	for (size_t i = 0; i < u->nrounds; i++)
		if (u->rounds[i].t + DAY - now < td)
			td = u->rounds[i].t + DAY - now;
	long rh = l->p.conv_per_hour - (long)u->nstarts;
	long rc = l->p.concurrent - u->active;
	long rd = l->p.rounds_per_day - rounds_used(u);
	return xasprintf("\"conv-hour\";r=%ld;t=%lld, \"concurrent\";r=%ld, "
			 "\"rounds-day\";r=%ld;t=%lld",
			 rh < 0 ? 0 : rh, (long long)th, rc < 0 ? 0 : rc, rd < 0 ? 0 : rd,
			 (long long)td);
}

int serve_limits_admit(struct serve_limits *l, const char *user, int rounds, int64_t now,
		       long *resv, const char **which, long *retry_after, char **header,
		       char **err)
{
	if (header)
		*header = NULL;
	pthread_mutex_lock(&l->mu);
	struct user_limits *u = user_get(l, user, true);
	user_prune(u, now);
	int rc = 1;
	if ((long)u->nstarts >= l->p.conv_per_hour) {
		/* The oldest start leaves the hour's window first. */
		int64_t oldest = u->starts[0];
		for (size_t i = 1; i < u->nstarts; i++)
			if (u->starts[i] < oldest)
				oldest = u->starts[i];
		*which = "conv-hour";
		*retry_after = (long)(oldest + HOUR - now);
	} else if (u->active >= l->p.concurrent) {
		*which = "concurrent";
		*retry_after = 30; /* no clock frees it: a conversation has to end */
	} else if (rounds_used(u) + rounds > l->p.rounds_per_day) {
		/* When enough of the day's reservations leave the window: the
		 * reservations in the order they expire. */
		long need = rounds_used(u) + rounds - l->p.rounds_per_day, freed = 0;
		int64_t at = now + DAY, last = INT64_MIN;
		while (freed < need) {
			int64_t next = INT64_MAX;
			for (size_t i = 0; i < u->nrounds; i++)
				if (u->rounds[i].t > last && u->rounds[i].t < next)
					next = u->rounds[i].t;
			if (next == INT64_MAX)
				break; /* more than the whole quota: a day */
			for (size_t i = 0; i < u->nrounds; i++)
				if (u->rounds[i].t == next)
					freed += u->rounds[i].n;
			last = next;
			if (freed >= need)
				at = next + DAY;
		}
		*which = "rounds-day";
		*retry_after = (long)(at - now);
	} else {
		u->starts = xrealloc(u->starts, (u->nstarts + 1) * sizeof(*u->starts));
		u->starts[u->nstarts++] = now;
		u->rounds = xrealloc(u->rounds, (u->nrounds + 1) * sizeof(*u->rounds));
		u->rounds[u->nrounds++] = (struct rounds_entry){ now, l->next_id, rounds };
		*resv = l->next_id++;
		u->active++;
		l->dirty = true;
		rc = 0;
		/* What this admission left, in the same step: by the time the
		 * caller answers, the conversation may have ended (its set-up
		 * failed at once) and been refunded, or another of the user's
		 * been admitted or ended, and a value read then would not say
		 * what this admission took. */
		if (header)
			*header = header_locked(l, u, now);
	}
	if (rc == 1 && *retry_after < 1)
		*retry_after = 1;
	pthread_mutex_unlock(&l->mu);
	if (rc != 0)
		return rc;
	char *line = xasprintf("\n{\"admit\":%ld,\"user\":\"%s\",\"t\":%lld,\"n\":%d}\n",
			       *resv, user, (long long)now, rounds);
	int jr = journal_add(l, line, err);
	free(line);
	if (jr == 0)
		return 0;
	/* Not recorded: not counted. */
	if (header) {
		free(*header);
		*header = NULL;
	}
	pthread_mutex_lock(&l->mu);
	u = user_get(l, user, false);
	for (size_t i = 0; u && i < u->nrounds; i++)
		if (u->rounds[i].id == *resv) {
			u->rounds[i] = u->rounds[--u->nrounds];
			break;
		}
	for (size_t i = 0; u && i < u->nstarts; i++)
		if (u->starts[i] == now) {
			u->starts[i] = u->starts[--u->nstarts];
			break;
		}
	if (u && u->active > 0)
		u->active--;
	l->dirty = true; /* a snapshot may have taken it meanwhile */
	pthread_mutex_unlock(&l->mu);
	return -1;
}

void serve_limits_end(struct serve_limits *l, const char *user, long resv, int used,
		      int64_t now)
{
	bool record = false;
	pthread_mutex_lock(&l->mu);
	struct user_limits *u = user_get(l, user, false);
	if (u) {
		if (u->active > 0)
			u->active--;
		bool refund = false;
		for (size_t i = 0; i < u->nrounds; i++)
			if (u->rounds[i].id == resv && used < u->rounds[i].n) {
				u->rounds[i].n = used < 0 ? 0 : used;
				refund = true;
			}
		user_prune(u, now);
		/* Nothing to record when every reserved round was used. */
		if (refund) {
			l->dirty = true;
			record = true;
		}
	}
	pthread_mutex_unlock(&l->mu);
	if (!record)
		return;
	char *err = NULL;
	char *line = xasprintf("\n{\"end\":%ld,\"user\":\"%s\",\"n\":%d}\n", resv, user,
			       used < 0 ? 0 : used);
	if (journal_add(l, line, &err) < 0) {
		fprintf(stderr, "madf: serve: warning: %s (the refund is in serve-limits.json "
			"at the next snapshot)\n", err);
		free(err);
	}
	free(line);
}

const struct serve_limits_policy *serve_limits_policy_of(const struct serve_limits *l)
{
	return &l->p;
}

char *serve_limits_policy_header(const struct serve_limits *l)
{
	return xasprintf("\"conv-hour\";q=%ld;w=%d, \"concurrent\";q=%ld;qu=\"concurrent-requests\", "
			 "\"rounds-day\";q=%ld;w=%d;madf-unit=\"rounds\"",
			 l->p.conv_per_hour, HOUR, l->p.concurrent, l->p.rounds_per_day, DAY);
}

char *serve_limits_header(struct serve_limits *l, const char *user, int64_t now)
{
	pthread_mutex_lock(&l->mu);
	char *s = header_locked(l, user_get(l, user, true), now);
	pthread_mutex_unlock(&l->mu);
	return s;
}
