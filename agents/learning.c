#include "agents/learning.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "core/json_out.h"
#include "core/log.h"
#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define MESSAGE_NORM_MAX 300 /* bytes of normalised message in a signature */
#define METRICS_FILE_MAX ((size_t)64 << 20)

/* String -> index, open addressing with FNV-1a. */
struct strmap {
	char **keys;
	size_t *vals;
	size_t cap, n;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static size_t strmap_slot(const struct strmap *m, const char *k)
{
	size_t i = (size_t)fnv(k) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], k))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static bool strmap_get(const struct strmap *m, const char *k, size_t *val)
{
	if (!m->cap)
		return false;
	size_t i = strmap_slot(m, k);
	if (!m->keys[i])
		return false;
	*val = m->vals[i];
	return true;
}

static void strmap_put(struct strmap *m, const char *k, size_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct strmap old = *m;
		m->cap = old.cap ? 2 * old.cap : 64;
		m->keys = xcalloc(m->cap, sizeof(*m->keys));
		m->vals = xcalloc(m->cap, sizeof(*m->vals));
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i]) {
				size_t s = strmap_slot(m, old.keys[i]);
				m->keys[s] = old.keys[i];
				m->vals[s] = old.vals[i];
				m->n++;
			}
		free(old.keys);
		free(old.vals);
	}
	size_t i = strmap_slot(m, k);
	if (!m->keys[i]) {
		m->keys[i] = xstrdup(k);
		m->n++;
	}
	m->vals[i] = val;
}

static void strmap_release(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

struct pattern {
	char *signature, *error_type, *example;
	cJSON *agents, *tools, *kinds; /* name -> count */
	size_t count;
	int64_t first_ns, last_ns;
};

struct task {
	char *agent;
	char *kind; /* NULL until a line gives one */
	size_t errors;
	double dur_sum;
	size_t dur_n;
};

/* One error line: its task and its error type. */
struct error_rec {
	size_t task;
	char *error_type;
};

struct agg {
	struct pattern *pat;
	size_t npat, cappat;
	struct strmap pat_index;
	struct task *tasks;
	size_t ntasks, captasks;
	struct strmap task_index; /* "agent\x1ftask_id" */
	struct error_rec *errs;
	size_t nerrs, caperrs;
	cJSON *by_type;  /* error_type -> count */
	cJSON *by_tool;  /* tool -> {"errors"} */
	size_t skipped;
};

static void agg_release(struct agg *a)
{
	for (size_t i = 0; i < a->npat; i++) {
		struct pattern *p = &a->pat[i];
		free(p->signature);
		free(p->error_type);
		free(p->example);
		cJSON_Delete(p->agents);
		cJSON_Delete(p->tools);
		cJSON_Delete(p->kinds);
	}
	free(a->pat);
	strmap_release(&a->pat_index);
	for (size_t i = 0; i < a->ntasks; i++) {
		free(a->tasks[i].agent);
		free(a->tasks[i].kind);
	}
	free(a->tasks);
	strmap_release(&a->task_index);
	for (size_t i = 0; i < a->nerrs; i++)
		free(a->errs[i].error_type);
	free(a->errs);
	cJSON_Delete(a->by_type);
	cJSON_Delete(a->by_tool);
}

static void bump(cJSON *counts, const char *key, double by)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(counts, key);
	if (cJSON_IsNumber(v))
		cJSON_SetNumberValue(v, v->valuedouble + by);
	else
		cJSON_AddNumberToObject(counts, key, by);
}

static bool is_alnum(char c)
{
	return isalnum((unsigned char)c) != 0;
}

static bool is_hex(char c)
{
	return isxdigit((unsigned char)c) != 0;
}

/* [p, q) looks like an id: 0x..., a UUID, or six or more hex digits
 * mixing digits and letters. */
static bool hex_id(const char *p, const char *q)
{
	size_t n = (size_t)(q - p);
	if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		for (const char *s = p + 2; s < q; s++)
			if (!is_hex(*s))
				return false;
		return true;
	}
	bool digit = false, letter = false;
	for (const char *s = p; s < q; s++) {
		if (!is_hex(*s))
			return false;
		digit |= isdigit((unsigned char)*s) != 0;
		letter |= isalpha((unsigned char)*s) != 0;
	}
	return n >= 6 && digit && letter;
}

/* Length of a UUID (8-4-4-4-12 hex) at p, else 0. */
static size_t uuid_at(const char *p)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	size_t n = 0;
	for (size_t g = 0; g < ARRAY_SIZE(groups); g++) {
		for (int k = 0; k < groups[g]; k++, n++)
			if (!is_hex(p[n]))
				return 0;
		if (g < 4 && p[n++] != '-')
			return 0;
	}
	return is_alnum(p[n]) ? 0 : n;
}

/* The message with numbers, hex ids and quoted strings replaced by
 * markers and white space collapsed. Caller frees. */
static char *normalise(const char *msg)
{
	struct sbuf b;
	sbuf_init(&b);
	const char *p = msg;
	while (*p && b.len < MESSAGE_NORM_MAX) {
		char c = *p;
		bool word_start = p == msg || !is_alnum(p[-1]);
		if ((c == '"' || (c == '\'' && word_start))) {
			const char *close = strchr(p + 1, c);
			while (close && c == '\'' && is_alnum(close[1]))
				close = strchr(close + 1, c);
			if (close) {
				sbuf_addstr(&b, "<str>");
				p = close + 1;
				continue;
			}
		}
		if (word_start && is_alnum(c)) {
			size_t u = uuid_at(p);
			const char *q = p;
			while (is_alnum(*q))
				q++;
			if (u || hex_id(p, q)) {
				sbuf_addstr(&b, "<hex>");
				p = u ? p + u : q;
				continue;
			}
		}
		if (isdigit((unsigned char)c)) {
			while (isdigit((unsigned char)*p))
				p++;
			while ((*p == '.' || *p == ',') && isdigit((unsigned char)p[1]))
				for (p++; isdigit((unsigned char)*p); p++)
					;
			sbuf_addstr(&b, "<n>");
			continue;
		}
		if (isspace((unsigned char)c)) {
			while (isspace((unsigned char)*p))
				p++;
			if (b.len && *p)
				sbuf_addch(&b, ' ');
			continue;
		}
		sbuf_addch(&b, c);
		p++;
	}
	/* Cut short: never end inside a UTF-8 sequence. */
	size_t n = b.len;
	if (*p && n) {
		size_t i = n - 1;
		while (i > 0 && ((unsigned char)b.data[i] & 0xc0) == 0x80)
			i--;
		unsigned lead = (unsigned char)b.data[i];
		size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
		if (i + want > n)
			n = i;
	}
	char *out = xstrndup(b.data ? b.data : "", n);
	sbuf_release(&b);
	return out;
}

char *learning_signature(const char *error_type, const char *message)
{
	char *norm = normalise(message ? message : "");
	char *sig = xasprintf("%s: %s", error_type ? error_type : "unknown", norm);
	free(norm);
	return sig;
}

static const char *str_field(const cJSON *j, const char *k)
{
	const char *s = jstr(j, k);
	return s && *s ? s : NULL;
}

/* The task of agent for a line (task_id may be NULL: a task of its own);
 * sets its kind when it has none. */
static size_t task_for(struct agg *a, const char *agent, const cJSON *line)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(line, "task_id");
	char idbuf[64];
	const char *tid = NULL;
	if (cJSON_IsString(id) && *id->valuestring)
		tid = id->valuestring;
	else if (cJSON_IsNumber(id)) {
		snprintf(idbuf, sizeof(idbuf), "%.17g", id->valuedouble);
		tid = idbuf;
	}
	size_t idx;
	char *key = tid ? xasprintf("%s\x1f%s", agent, tid) : NULL;
	if (!key || !strmap_get(&a->task_index, key, &idx)) {
		if (a->ntasks == a->captasks) {
			a->captasks = a->captasks ? 2 * a->captasks : 64;
			a->tasks = xrealloc(a->tasks, a->captasks * sizeof(*a->tasks));
		}
		idx = a->ntasks++;
		a->tasks[idx] = (struct task){ .agent = xstrdup(agent) };
		if (key)
			strmap_put(&a->task_index, key, idx);
	}
	free(key);
	const char *kind = str_field(line, "task_kind");
	if (kind && !a->tasks[idx].kind)
		a->tasks[idx].kind = xstrdup(kind);
	return idx;
}

static void add_error(struct agg *a, const char *agent, const cJSON *line,
		      const char *message, int64_t ts)
{
	const char *type = str_field(line, "error_type");
	if (!type)
		type = str_field(line, "event");
	if (!type)
		type = "unknown";
	const char *tool = str_field(line, "tool");
	const char *kind = str_field(line, "task_kind");
	size_t t = task_for(a, agent, line);
	a->tasks[t].errors++;
	if (a->nerrs == a->caperrs) {
		a->caperrs = a->caperrs ? 2 * a->caperrs : 64;
		a->errs = xrealloc(a->errs, a->caperrs * sizeof(*a->errs));
	}
	a->errs[a->nerrs++] = (struct error_rec){ t, xstrdup(type) };
	bump(a->by_type, type, 1);
	if (tool) {
		cJSON *o = cJSON_GetObjectItemCaseSensitive(a->by_tool, tool);
		if (!o)
			o = cJSON_AddObjectToObject(a->by_tool, tool);
		bump(o, "errors", 1);
	}

	char *sig = learning_signature(type, message);
	size_t pi;
	if (!strmap_get(&a->pat_index, sig, &pi)) {
		if (a->npat == a->cappat) {
			a->cappat = a->cappat ? 2 * a->cappat : 32;
			a->pat = xrealloc(a->pat, a->cappat * sizeof(*a->pat));
		}
		pi = a->npat++;
		a->pat[pi] = (struct pattern){
			.signature = xstrdup(sig),
			.error_type = xstrdup(type),
			.example = xstrdup(message),
			.agents = cJSON_CreateObject(),
			.tools = cJSON_CreateObject(),
			.kinds = cJSON_CreateObject(),
			.first_ns = ts,
			.last_ns = ts,
		};
		strmap_put(&a->pat_index, sig, pi);
	}
	free(sig);
	struct pattern *p = &a->pat[pi];
	p->count++;
	if (ts < p->first_ns) {
		p->first_ns = ts;
		free(p->example);
		p->example = xstrdup(message);
	}
	if (ts > p->last_ns)
		p->last_ns = ts;
	bump(p->agents, agent, 1);
	if (tool)
		bump(p->tools, tool, 1);
	if (kind)
		bump(p->kinds, kind, 1);
}

static void add_result(struct agg *a, const char *agent, const cJSON *line)
{
	size_t t = task_for(a, agent, line);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(line, "duration_ms");
	if (cJSON_IsNumber(d) && d->valuedouble >= 0) {
		a->tasks[t].dur_sum += d->valuedouble;
		a->tasks[t].dur_n++;
	}
}

static void add_line(struct agg *a, const char *agent, bool errors,
		     const char *buf, size_t len)
{
	char *perr = NULL;
	cJSON *j = json_parse_strict(buf, len, &perr);
	free(perr);
	const char *msg = cJSON_IsObject(j) ? str_field(j, "message") : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "ts");
	int64_t ns;
	if (!cJSON_IsObject(j) || !cJSON_IsString(m) || !cJSON_IsString(ts) ||
	    msg_parse_time(ts->valuestring, &ns) < 0) {
		a->skipped++;
		cJSON_Delete(j);
		return;
	}
	/* The line's subject: log_write writes another agent there when the
	 * owner logged that agent's failure. */
	const cJSON *subj = cJSON_GetObjectItemCaseSensitive(j, "agent");
	if (cJSON_IsString(subj) && util_valid_agent_name(subj->valuestring))
		agent = subj->valuestring;
	if (errors)
		add_error(a, agent, j, msg ? msg : "", ns);
	else
		add_result(a, agent, j);
	cJSON_Delete(j);
}

static int read_log(struct agg *a, const char *agent, bool errors,
		    const char *path, char **err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0
				       : err_set(err, "cannot open %s: %s", path,
						 strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) >= 0) {
		size_t len = (size_t)n;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		if (len > LEARNING_LINE_MAX) {
			a->skipped++;
			continue;
		}
		add_line(a, agent, errors, line, len);
	}
	int r = ferror(f) ? err_set(err, "cannot read %s", path) : 0;
	free(line);
	fclose(f);
	return r;
}

static int jsonl_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);
	return de->d_name[0] != '.' && n > 6 && !strcmp(de->d_name + n - 6, ".jsonl");
}

static int read_category(struct agg *a, const char *agent_dir,
			 const char *agent, enum log_cat cat, char **err)
{
	char *dir = xasprintf("%s/%s", agent_dir, log_cat_name(cat));
	struct dirent **list = NULL;
	int n = scandir(dir, &list, jsonl_filter, alphasort);
	int r = 0;
	if (n < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			r = err_set(err, "cannot read %s: %s", dir, strerror(errno));
		free(dir);
		return r;
	}
	for (int i = 0; i < n; i++) {
		char *p = xasprintf("%s/%s", dir, list[i]->d_name);
		struct stat st;
		if (r == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode))
			r = read_log(a, agent, cat == LOG_ERRORS, p, err);
		free(p);
		free(list[i]);
	}
	free(list);
	free(dir);
	return r;
}

static double rate(size_t failed, size_t tasks)
{
	return tasks ? round((double)failed / (double)tasks * 10000.0) / 10000.0 : 0;
}

struct kind_stats {
	char *kind;
	size_t tasks, failed, errors, dur_n;
	double dur_sum;
	cJSON *types;
};

struct agent_stats {
	char *agent;
	size_t tasks, failed, errors;
	struct kind_stats *kinds;
	size_t nkinds;
};

static struct agent_stats *agent_of(struct agent_stats **v, size_t *n,
				    const char *agent)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].agent, agent))
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n] = (struct agent_stats){ .agent = xstrdup(agent) };
	return &(*v)[(*n)++];
}

static struct kind_stats *kind_of(struct agent_stats *s, const char *kind)
{
	for (size_t i = 0; i < s->nkinds; i++)
		if (!strcmp(s->kinds[i].kind, kind))
			return &s->kinds[i];
	s->kinds = xrealloc(s->kinds, (s->nkinds + 1) * sizeof(*s->kinds));
	s->kinds[s->nkinds] = (struct kind_stats){ .kind = xstrdup(kind),
						   .types = cJSON_CreateObject() };
	return &s->kinds[s->nkinds++];
}

static int agent_cmp(const void *x, const void *y)
{
	return strcmp(((const struct agent_stats *)x)->agent,
		      ((const struct agent_stats *)y)->agent);
}

static int kind_cmp(const void *x, const void *y)
{
	return strcmp(((const struct kind_stats *)x)->kind,
		      ((const struct kind_stats *)y)->kind);
}

/* The key with the highest count (ties: the first in byte order). */
static const char *top_key(const cJSON *counts)
{
	const cJSON *best = NULL, *c;
	cJSON_ArrayForEach(c, counts)
		if (!best || c->valuedouble > best->valuedouble ||
		    (c->valuedouble == best->valuedouble &&
		     strcmp(c->string, best->string) < 0))
			best = c;
	return best ? best->string : NULL;
}

static int pattern_cmp(const void *x, const void *y)
{
	const struct pattern *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->signature, b->signature);
}

struct rec {
	const char *agent, *kind;
	double rate;
	char *text;
};

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->rate != b->rate)
		return a->rate > b->rate ? -1 : 1;
	int c = strcmp(a->agent, b->agent);
	return c ? c : strcmp(a->kind, b->kind);
}

static void add_iso(cJSON *o, const char *key, int64_t ns)
{
	char ts[64];
	util_iso8601(ns, ts, sizeof(ts));
	cJSON_AddStringToObject(o, key, ts);
}

static cJSON *patterns_json(struct agg *a, int64_t now_ns)
{
	if (a->npat)
		qsort(a->pat, a->npat, sizeof(*a->pat), pattern_cmp);
	cJSON *root = cJSON_CreateObject();
	add_iso(root, "generated_at", now_ns);
	cJSON_AddNumberToObject(root, "skipped_lines", (double)a->skipped);
	cJSON *arr = cJSON_AddArrayToObject(root, "patterns");
	cJSON *rec = cJSON_CreateArray();
	for (size_t i = 0; i < a->npat; i++) {
		struct pattern *p = &a->pat[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "signature", p->signature);
		cJSON_AddStringToObject(o, "error_type", p->error_type);
		cJSON_AddItemToObject(o, "agents", cJSON_Duplicate(p->agents, true));
		cJSON_AddItemToObject(o, "tools", cJSON_Duplicate(p->tools, true));
		cJSON_AddItemToObject(o, "task_kinds", cJSON_Duplicate(p->kinds, true));
		cJSON_AddNumberToObject(o, "count", (double)p->count);
		add_iso(o, "first_seen", p->first_ns);
		add_iso(o, "last_seen", p->last_ns);
		cJSON_AddStringToObject(o, "example", p->example);
		cJSON_AddItemToArray(arr, o);
		if (p->count >= LEARNING_RECURRING)
			cJSON_AddItemToArray(rec, cJSON_CreateString(p->signature));
	}
	cJSON_AddItemToObject(root, "recurring", rec);
	return root;
}

static cJSON *metrics_json(struct agg *a, int64_t now_ns)
{
	struct agent_stats *st = NULL;
	size_t nst = 0;
	for (size_t i = 0; i < a->ntasks; i++) {
		const struct task *t = &a->tasks[i];
		struct agent_stats *s = agent_of(&st, &nst, t->agent);
		s->tasks++;
		s->failed += t->errors > 0;
		s->errors += t->errors;
		if (!t->kind)
			continue;
		struct kind_stats *k = kind_of(s, t->kind);
		k->tasks++;
		k->failed += t->errors > 0;
		k->errors += t->errors;
		k->dur_sum += t->dur_sum;
		k->dur_n += t->dur_n;
	}
	for (size_t i = 0; i < a->nerrs; i++) {
		const struct task *t = &a->tasks[a->errs[i].task];
		if (t->kind)
			bump(kind_of(agent_of(&st, &nst, t->agent), t->kind)->types,
			     a->errs[i].error_type, 1);
	}
	if (nst)
		qsort(st, nst, sizeof(*st), agent_cmp);

	cJSON *root = cJSON_CreateObject();
	add_iso(root, "generated_at", now_ns);
	cJSON_AddNumberToObject(root, "skipped_lines", (double)a->skipped);
	cJSON *by_agent = cJSON_AddObjectToObject(root, "by_agent");
	struct rec *recs = NULL;
	size_t nrecs = 0;
	for (size_t i = 0; i < nst; i++) {
		struct agent_stats *s = &st[i];
		cJSON *o = cJSON_AddObjectToObject(by_agent, s->agent);
		cJSON_AddNumberToObject(o, "tasks", (double)s->tasks);
		cJSON_AddNumberToObject(o, "errors", (double)s->errors);
		cJSON_AddNumberToObject(o, "failed_tasks", (double)s->failed);
		cJSON_AddNumberToObject(o, "error_rate", rate(s->failed, s->tasks));
		cJSON *bk = cJSON_AddObjectToObject(o, "by_kind");
		if (s->nkinds)
			qsort(s->kinds, s->nkinds, sizeof(*s->kinds), kind_cmp);
		for (size_t k = 0; k < s->nkinds; k++) {
			struct kind_stats *ks = &s->kinds[k];
			double r = rate(ks->failed, ks->tasks);
			cJSON *ko = cJSON_AddObjectToObject(bk, ks->kind);
			cJSON_AddNumberToObject(ko, "tasks", (double)ks->tasks);
			cJSON_AddNumberToObject(ko, "errors", (double)ks->errors);
			cJSON_AddNumberToObject(ko, "failed_tasks", (double)ks->failed);
			cJSON_AddNumberToObject(ko, "error_rate", r);
			if (ks->dur_n)
				cJSON_AddNumberToObject(ko, "avg_duration_ms",
							round(ks->dur_sum / (double)ks->dur_n * 1000.0) / 1000.0);
			else
				cJSON_AddNullToObject(ko, "avg_duration_ms");
			if (ks->errors >= LEARNING_MIN_ERRORS && r >= LEARNING_MIN_RATE) {
				recs = xrealloc(recs, (nrecs + 1) * sizeof(*recs));
				recs[nrecs++] = (struct rec){
					s->agent, ks->kind, r,
					xasprintf("%s failed %zu of %zu %s tasks (%s): "
						  "assign %s tasks to another agent",
						  s->agent, ks->failed, ks->tasks,
						  ks->kind, top_key(ks->types),
						  ks->kind),
				};
			}
		}
	}
	cJSON_AddItemToObject(root, "by_error_type", cJSON_Duplicate(a->by_type, true));
	cJSON_AddItemToObject(root, "by_tool", cJSON_Duplicate(a->by_tool, true));
	cJSON *arr = cJSON_AddArrayToObject(root, "recommendations");
	if (nrecs)
		qsort(recs, nrecs, sizeof(*recs), rec_cmp);
	for (size_t i = 0; i < nrecs; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "agent", recs[i].agent);
		cJSON_AddStringToObject(o, "task_kind", recs[i].kind);
		cJSON_AddStringToObject(o, "text", recs[i].text);
		cJSON_AddNumberToObject(o, "error_rate", recs[i].rate);
		cJSON_AddItemToArray(arr, o);
		free(recs[i].text);
	}
	free(recs);
	/* a->pat is sorted by patterns_json, which runs first. */
	for (size_t i = 0; i < a->npat; i++) {
		const struct pattern *p = &a->pat[i];
		if (p->count < LEARNING_RECURRING)
			continue;
		const char *agent = top_key(p->agents);
		const char *kind = top_key(p->kinds);
		const char *tool = top_key(p->tools);
		struct sbuf t;
		sbuf_init(&t);
		sbuf_addf(&t, "recurring error seen %zu times (%d agent%s, most often %s",
			  p->count, cJSON_GetArraySize(p->agents),
			  cJSON_GetArraySize(p->agents) == 1 ? "" : "s", agent);
		if (tool)
			sbuf_addf(&t, ", tool %s", tool);
		if (kind)
			sbuf_addf(&t, ", %s tasks", kind);
		sbuf_addf(&t, "): %s: fix the cause before assigning more such tasks",
			  p->signature);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "agent", agent);
		if (kind)
			cJSON_AddStringToObject(o, "task_kind", kind);
		else
			cJSON_AddNullToObject(o, "task_kind");
		cJSON_AddStringToObject(o, "text", t.data);
		cJSON_AddNullToObject(o, "error_rate");
		cJSON_AddStringToObject(o, "signature", p->signature);
		cJSON_AddItemToArray(arr, o);
		sbuf_release(&t);
	}
	for (size_t i = 0; i < nst; i++) {
		for (size_t k = 0; k < st[i].nkinds; k++) {
			free(st[i].kinds[k].kind);
			cJSON_Delete(st[i].kinds[k].types);
		}
		free(st[i].kinds);
		free(st[i].agent);
	}
	free(st);
	return root;
}

static int write_report(const char *dir, const char *name, const cJSON *j,
			char **err)
{
	char *text = json_pretty(j);
	if (!text)
		return err_set(err, "out of memory writing %s", name);
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, text);
	sbuf_addch(&b, '\n');
	free(text);
	char *path = xasprintf("%s/%s", dir, name);
	int r = util_write_file_atomic(path, b.data, b.len, true, err);
	free(path);
	sbuf_release(&b);
	return r;
}

static int read_agents(struct agg *a, const char *read_dir, char **err)
{
	char *root = xasprintf("%s/agents", read_dir);
	struct dirent **list = NULL;
	int n = scandir(root, &list, NULL, alphasort);
	int r = 0;
	if (n < 0) {
		if (errno != ENOENT)
			r = err_set(err, "cannot read %s: %s", root, strerror(errno));
		free(root);
		return r;
	}
	for (int i = 0; i < n; i++) {
		const char *agent = list[i]->d_name;
		char *adir = xasprintf("%s/%s", root, agent);
		struct stat st;
		if (r == 0 && util_valid_agent_name(agent) &&
		    lstat(adir, &st) == 0 && S_ISDIR(st.st_mode)) {
			r = read_category(a, adir, agent, LOG_ERRORS, err);
			if (r == 0)
				r = read_category(a, adir, agent, LOG_RESULTS, err);
		}
		free(adir);
		free(list[i]);
	}
	free(list);
	free(root);
	return r;
}

int learning_aggregate(const char *log_dir, int64_t now_ns, char **err)
{
	return learning_aggregate_from(log_dir, log_dir, now_ns, err);
}

int learning_aggregate_from(const char *read_dir, const char *log_dir, int64_t now_ns,
			    char **err)
{
	if (!log_dir || !*log_dir || !read_dir || !*read_dir)
		return err_set(err, "learning: no log directory");
	struct agg a = { 0 };
	a.by_type = cJSON_CreateObject();
	a.by_tool = cJSON_CreateObject();
	int r = read_agents(&a, read_dir, err);
	if (r == 0) {
		char *dir = xasprintf("%s/learning", log_dir);
		cJSON *pat = patterns_json(&a, now_ns);
		cJSON *met = metrics_json(&a, now_ns);
		r = util_mkdirs(dir, err);
		if (r == 0)
			r = write_report(dir, "error-patterns.json", pat, err);
		if (r == 0)
			r = write_report(dir, "improvement-metrics.json", met, err);
		cJSON_Delete(pat);
		cJSON_Delete(met);
		free(dir);
	}
	agg_release(&a);
	return r;
}

double learning_error_rate(const char *log_dir, const char *agent,
			   const char *task_kind)
{
	if (!log_dir || !agent)
		return -1;
	char *path = xasprintf("%s/learning/improvement-metrics.json", log_dir);
	struct stat st;
	if (lstat(path, &st) < 0 && errno == ENOENT) {
		free(path);
		return 0;
	}
	char *buf = NULL, *err = NULL;
	size_t len;
	int rr = util_read_file(path, METRICS_FILE_MAX, &buf, &len, &err);
	free(path);
	free(err);
	if (rr < 0)
		return -1;
	cJSON *j = json_parse_strict(buf, len, &err);
	free(buf);
	free(err);
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "by_agent"), agent);
	if (task_kind)
		o = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o, "by_kind"), task_kind);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "error_rate");
	double r = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1
			   ? v->valuedouble
			   : -1;
	cJSON_Delete(j);
	return r;
}
