#include "core/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/json_out.h"
#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define CANON_MAX_DEPTH 256
#define USAGE_FILE_MAX ((size_t)64 << 20)

struct agent_count {
	char *agent;
	size_t calls, saved;
};

struct tool {
	/* Definition; name never changes once registered. */
	char *name, *description, *input_schema, *cache_source, *kind;
	tool_fn fn;
	void *ctx;
	/* Counters, and how much of them tools_save_usage already wrote. */
	size_t calls, errors, hits;
	size_t saved_calls, saved_errors, saved_hits, saved_nlat;
	double *lat; /* every latency sample in ms */
	size_t nlat, caplat;
	struct agent_count *agents;
	size_t nagents;
};

struct tools {
	char *dir;     /* <data_dir>/tools */
	char *log_dir; /* <log_dir>/tools, NULL: no usage lines */
	struct cache *cache;
	pthread_mutex_t *mu; /* guards v, n and every struct tool */
	struct tool **v;
	size_t n, cap;
};

static bool valid_tool_name(const char *s)
{
	if (!s)
		return false;
	size_t n = 0;
	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-') ||
		    n >= 64)
			return false;
	}
	return n > 0;
}

int tools_open(const char *data_dir, const char *log_dir, struct cache *cache,
	       struct tools **out, char **err)
{
	*out = NULL;
	if (!data_dir || !*data_dir)
		return err_set(err, "tools: no data directory");
	struct tools *t = xcalloc(1, sizeof(*t));
	t->dir = xasprintf("%s/tools", data_dir);
	t->log_dir = log_dir && *log_dir ? xasprintf("%s/tools", log_dir) : NULL;
	t->cache = cache;
	t->mu = xmalloc(sizeof(*t->mu));
	pthread_mutex_init(t->mu, NULL);
	*out = t;
	return 0;
}

static void tool_free_def(struct tool *tl)
{
	free(tl->description);
	free(tl->input_schema);
	free(tl->cache_source);
	free(tl->kind);
}

void tools_free(struct tools **tp)
{
	if (!tp || !*tp)
		return;
	struct tools *t = *tp;
	for (size_t i = 0; i < t->n; i++) {
		struct tool *tl = t->v[i];
		tool_free_def(tl);
		free(tl->name);
		free(tl->lat);
		for (size_t k = 0; k < tl->nagents; k++)
			free(tl->agents[k].agent);
		free(tl->agents);
		free(tl);
	}
	free(t->v);
	pthread_mutex_destroy(t->mu);
	free(t->mu);
	free(t->dir);
	free(t->log_dir);
	free(t);
	*tp = NULL;
}

/* Index of name, or -1. Called with t->mu held. */
static ssize_t find_tool(const struct tools *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i]->name, name))
			return (ssize_t)i;
	return -1;
}

int tools_register(struct tools *t, const struct tool_def *def, void *ctx,
		   char **err)
{
	if (!t || !def)
		return err_set(err, "tools: nothing to register");
	if (!valid_tool_name(def->name))
		return err_set(err, "tools: invalid tool name (want [a-z0-9_.-]{1,64})");
	if (!def->fn)
		return err_set(err, "tools: %s has no function", def->name);
	if (def->cache_source && !cache_valid_source(def->cache_source))
		return err_set(err, "tools: %s: invalid cache source", def->name);
	const char *schema = def->input_schema ? def->input_schema
					       : "{\"type\":\"object\"}";
	char *perr = NULL;
	cJSON *sj = json_parse_strict(schema, strlen(schema), &perr);
	if (!cJSON_IsObject(sj)) {
		int r = err_set(err, "tools: %s: input schema: %s", def->name,
				perr ? perr : "not an object");
		free(perr);
		cJSON_Delete(sj);
		return r;
	}
	char *compact = cJSON_PrintUnformatted(sj);
	cJSON_Delete(sj);
	if (!compact)
		return err_set(err, "tools: out of memory");
	char *schema_text = xstrdup(compact);
	cJSON_free(compact);

	pthread_mutex_lock(t->mu);
	ssize_t i = find_tool(t, def->name);
	struct tool *tl;
	if (i >= 0) {
		tl = t->v[i];
		tool_free_def(tl);
	} else {
		tl = xcalloc(1, sizeof(*tl));
		tl->name = xstrdup(def->name);
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 16;
			t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
		}
		t->v[t->n++] = tl;
	}
	tl->description = xstrdup(def->description ? def->description : "");
	tl->input_schema = schema_text;
	tl->cache_source = def->cache_source ? xstrdup(def->cache_source) : NULL;
	tl->kind = xstrdup(def->kind ? def->kind : "builtin");
	tl->fn = def->fn;
	tl->ctx = ctx;
	pthread_mutex_unlock(t->mu);
	return 0;
}

size_t tools_count(const struct tools *t)
{
	pthread_mutex_lock(t->mu);
	size_t n = t->n;
	pthread_mutex_unlock(t->mu);
	return n;
}

const char *tools_name(const struct tools *t, size_t i)
{
	pthread_mutex_lock(t->mu);
	const char *s = i < t->n ? t->v[i]->name : NULL;
	pthread_mutex_unlock(t->mu);
	return s;
}

int tools_describe(struct tools *t, const char *name, char **description,
		   char **input_schema, char **err)
{
	pthread_mutex_lock(t->mu);
	for (size_t i = 0; i < t->n; i++) {
		const struct tool *tl = t->v[i];
		if (strcmp(tl->name, name))
			continue;
		*description = xstrdup(tl->description ? tl->description : "");
		*input_schema = xstrdup(tl->input_schema ? tl->input_schema : "{\"type\":\"object\"}");
		pthread_mutex_unlock(t->mu);
		return 0;
	}
	pthread_mutex_unlock(t->mu);
	return err_set(err, "unknown tool %s", name ? name : "");
}

static int key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int c = strcmp(x->string ? x->string : "", y->string ? y->string : "");
	/* Stable for repeated keys: keep the source order. */
	return c ? c : (x < y ? -1 : x > y);
}

static cJSON *canonical_copy(const cJSON *j, int depth)
{
	if (depth > CANON_MAX_DEPTH)
		return NULL;
	if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
		bool obj = cJSON_IsObject(j);
		size_t n = 0;
		for (const cJSON *c = j->child; c; c = c->next)
			n++;
		const cJSON **kids = xcalloc(n, sizeof(*kids));
		n = 0;
		for (const cJSON *c = j->child; c; c = c->next)
			kids[n++] = c;
		if (obj)
			qsort(kids, n, sizeof(*kids), key_cmp);
		cJSON *out = obj ? cJSON_CreateObject() : cJSON_CreateArray();
		for (size_t i = 0; i < n && out; i++) {
			cJSON *k = canonical_copy(kids[i], depth + 1);
			if (!k) {
				cJSON_Delete(out);
				out = NULL;
			} else if (obj) {
				cJSON_AddItemToObject(out, kids[i]->string ? kids[i]->string : "", k);
			} else {
				cJSON_AddItemToArray(out, k);
			}
		}
		free(kids);
		return out;
	}
	return cJSON_Duplicate(j, false);
}

char *tools_canonical_json(const cJSON *j)
{
	cJSON *c = canonical_copy(j, 0);
	if (!c)
		return NULL;
	char *p = cJSON_PrintUnformatted(c);
	cJSON_Delete(c);
	if (!p)
		return NULL;
	char *s = xstrdup(p);
	cJSON_free(p);
	return s;
}

static double round_ms(double ms)
{
	return round(ms * 1000.0) / 1000.0;
}

/* Appends one usage line; failures are silent (the call already has its
 * answer). */
static void usage_line(struct tools *t, const char *agent, const char *name,
		       double latency_ms, bool hit, bool ok, const char *error)
{
	if (!t->log_dir)
		return;
	int64_t now = util_now_ns();
	char ts[64], date[16];
	util_iso8601(now, ts, sizeof(ts));
	util_date(now, date, sizeof(date));
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "ts", ts);
	cJSON_AddStringToObject(o, "agent", agent);
	char *clean = util_sanitize(name, strlen(name), false);
	cJSON_AddStringToObject(o, "tool", *name ? clean : "");
	free(clean);
	cJSON_AddNumberToObject(o, "latency_ms", round_ms(latency_ms));
	cJSON_AddBoolToObject(o, "cache_hit", hit);
	cJSON_AddBoolToObject(o, "ok", ok);
	if (error)
		cJSON_AddStringToObject(o, "error", error);
	else
		cJSON_AddNullToObject(o, "error");
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return;
	char *red = config_redact(text);
	cJSON_free(text);
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, red);
	sbuf_addch(&b, '\n');
	free(red);
	char *path = xasprintf("%s/usage-%s.jsonl", t->log_dir, date);
	int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	int fd = open(path, flags, 0644);
	if (fd < 0 && errno == ENOENT && util_mkdirs(t->log_dir, NULL) == 0)
		fd = open(path, flags, 0644);
	if (fd >= 0) {
		ssize_t w;
		do
			w = write(fd, b.data, b.len);
		while (w < 0 && errno == EINTR);
		close(fd);
	}
	free(path);
	sbuf_release(&b);
}

/* A one-line, redacted copy of an error text. */
static char *clean_error(const char *s)
{
	char *red = config_redact(s);
	char *out = *red ? util_sanitize(red, strlen(red), false) : xstrdup("");
	free(red);
	return out;
}

static void count_call(struct tools *t, size_t idx, const char *agent,
		       double ms, bool hit, bool ok)
{
	pthread_mutex_lock(t->mu);
	struct tool *tl = t->v[idx];
	tl->calls++;
	tl->errors += !ok;
	tl->hits += hit;
	if (tl->nlat == tl->caplat) {
		tl->caplat = tl->caplat ? 2 * tl->caplat : 64;
		tl->lat = xrealloc(tl->lat, tl->caplat * sizeof(*tl->lat));
	}
	tl->lat[tl->nlat++] = ms;
	size_t k;
	for (k = 0; k < tl->nagents; k++)
		if (!strcmp(tl->agents[k].agent, agent))
			break;
	if (k == tl->nagents) {
		tl->agents = xrealloc(tl->agents, (k + 1) * sizeof(*tl->agents));
		tl->agents[k] = (struct agent_count){ xstrdup(agent), 0, 0 };
		tl->nagents++;
	}
	tl->agents[k].calls++;
	pthread_mutex_unlock(t->mu);
}

/* A cached result for key: 1 and *result, else 0. */
static int cached_result(struct tools *t, const char *source, const char *key,
			 cJSON **result)
{
	char *val = NULL;
	size_t len = 0;
	if (cache_get(t->cache, source, key, -1, &val, &len) != 1)
		return 0;
	char *perr = NULL;
	*result = json_parse_strict(val, len, &perr);
	free(perr);
	free(val);
	return *result != NULL;
}

int tools_call(struct tools *t, const char *agent, const char *name,
	       const cJSON *args, cJSON **result, char **err)
{
	*result = NULL;
	if (!t)
		return err_set(err, "tools: not open");
	if (!util_valid_agent_name(agent))
		return err_set(err, "tools: invalid agent name");
	if (!name)
		name = "";
	int64_t t0 = util_mono_ns();

	pthread_mutex_lock(t->mu);
	ssize_t idx = find_tool(t, name);
	tool_fn fn = NULL;
	void *ctx = NULL;
	char *source = NULL;
	if (idx >= 0) {
		fn = t->v[idx]->fn;
		ctx = t->v[idx]->ctx;
		source = t->v[idx]->cache_source && t->cache
				 ? xstrdup(t->v[idx]->cache_source)
				 : NULL;
	}
	pthread_mutex_unlock(t->mu);
	if (idx < 0) {
		char *e = clean_error(name);
		char *msg = xasprintf("unknown tool %s", e);
		usage_line(t, agent, name, 0, false, false, msg);
		err_set(err, "%s", msg);
		free(msg);
		free(e);
		return -1;
	}

	cJSON *empty = NULL;
	if (!args)
		args = empty = cJSON_CreateObject();
	char *key = NULL;
	bool hit = false;
	if (source) {
		char *canon = tools_canonical_json(args);
		if (canon)
			key = xasprintf("%s %s", name, canon);
		free(canon);
		hit = key && cached_result(t, source, key, result);
	}
	char *ferr = NULL;
	bool ok = true;
	if (!hit) {
		int r = fn(ctx, args, result, &ferr);
		if (r != 0 || !*result) {
			ok = false;
			cJSON_Delete(*result);
			*result = NULL;
			if (!ferr)
				ferr = xstrdup(r != 0 ? "failed" : "returned no result");
		} else if (key) {
			char *text = cJSON_PrintUnformatted(*result);
			char *perr = NULL;
			if (text)
				cache_put(t->cache, source, key, text,
					  strlen(text), &perr);
			free(perr);
			cJSON_free(text);
		}
	}
	double ms = (double)(util_mono_ns() - t0) / 1e6;
	cJSON_Delete(empty);
	free(key);
	free(source);

	count_call(t, (size_t)idx, agent, ms, hit, ok);
	char *etext = ok ? NULL : clean_error(ferr);
	free(ferr);
	usage_line(t, agent, name, ms, hit, ok, etext);
	if (!ok)
		err_set(err, "%s: %s", name, etext);
	free(etext);
	return ok ? 0 : -1;
}

static int write_json(const char *path, const cJSON *j, char **err)
{
	char *text = json_pretty(j);
	if (!text)
		return err_set(err, "out of memory writing %s", path);
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, text);
	sbuf_addch(&b, '\n');
	free(text);
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	int r = util_mkdirs(dir, err);
	if (r == 0)
		r = util_write_file_atomic(path, b.data, b.len, true, err);
	free(dir);
	sbuf_release(&b);
	return r;
}

static void add_now(cJSON *o, const char *key)
{
	char ts[64];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	cJSON_AddStringToObject(o, key, ts);
}

static int tool_ptr_cmp(const void *a, const void *b)
{
	const struct tool *x = *(const struct tool *const *)a;
	const struct tool *y = *(const struct tool *const *)b;
	return strcmp(x->name, y->name);
}

int tools_write_registry(struct tools *t, char **err)
{
	if (!t)
		return err_set(err, "tools: not open");
	cJSON *root = cJSON_CreateObject();
	add_now(root, "generated_at");
	cJSON *arr = cJSON_AddArrayToObject(root, "tools");
	pthread_mutex_lock(t->mu);
	struct tool **v = xcalloc(t->n, sizeof(*v));
	size_t n = t->n;
	if (n) {
		memcpy(v, t->v, n * sizeof(*v));
		qsort(v, n, sizeof(*v), tool_ptr_cmp);
	}
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", v[i]->name);
		cJSON_AddStringToObject(o, "description", v[i]->description);
		cJSON_AddStringToObject(o, "kind", v[i]->kind);
		cJSON *schema = cJSON_Parse(v[i]->input_schema);
		cJSON_AddItemToObject(o, "input_schema",
				      schema ? schema : cJSON_CreateObject());
		if (v[i]->cache_source)
			cJSON_AddStringToObject(o, "cache_source", v[i]->cache_source);
		else
			cJSON_AddNullToObject(o, "cache_source");
		cJSON_AddItemToArray(arr, o);
	}
	pthread_mutex_unlock(t->mu);
	free(v);
	char *path = xasprintf("%s/tool-registry.json", t->dir);
	int r = write_json(path, root, err);
	free(path);
	cJSON_Delete(root);
	return r;
}

int tools_set_essential(struct tools *t, const char *agent,
			const char *const *names, size_t n, char **err)
{
	if (!t)
		return err_set(err, "tools: not open");
	if (!util_valid_agent_name(agent))
		return err_set(err, "tools: invalid agent name");
	if (n && !names)
		return err_set(err, "tools: no names");
	for (size_t i = 0; i < n; i++)
		if (!valid_tool_name(names[i]))
			return err_set(err, "tools: essential tool %zu: invalid name", i);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "agent", agent);
	add_now(root, "updated_at");
	cJSON *arr = cJSON_AddArrayToObject(root, "tools");
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < i && !dup; k++)
			dup = !strcmp(names[k], names[i]);
		if (!dup)
			cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]));
	}
	char *path = xasprintf("%s/%s/essential-tools.json", t->dir, agent);
	int r = write_json(path, root, err);
	free(path);
	cJSON_Delete(root);
	return r;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile p (0..100) of n samples; 0 when n is 0. */
static double percentile(const double *v, size_t n, double p)
{
	if (!n)
		return 0;
	double *s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), dbl_cmp);
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);
	double r = s[rank ? rank - 1 : 0];
	free(s);
	return round_ms(r);
}

cJSON *tools_usage(struct tools *t)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *tools = cJSON_AddObjectToObject(root, "tools");
	if (!t)
		return root;
	pthread_mutex_lock(t->mu);
	for (size_t i = 0; i < t->n; i++) {
		const struct tool *tl = t->v[i];
		cJSON *o = cJSON_AddObjectToObject(tools, tl->name);
		cJSON_AddNumberToObject(o, "calls", (double)tl->calls);
		cJSON_AddNumberToObject(o, "errors", (double)tl->errors);
		cJSON_AddNumberToObject(o, "cache_hits", (double)tl->hits);
		cJSON_AddNumberToObject(o, "latency_p50_ms", percentile(tl->lat, tl->nlat, 50));
		cJSON_AddNumberToObject(o, "latency_p95_ms", percentile(tl->lat, tl->nlat, 95));
		cJSON *ba = cJSON_AddObjectToObject(o, "by_agent");
		for (size_t k = 0; k < tl->nagents; k++)
			cJSON_AddNumberToObject(ba, tl->agents[k].agent,
						(double)tl->agents[k].calls);
	}
	pthread_mutex_unlock(t->mu);
	return root;
}

/* What one tool gained since the last save. */
struct delta {
	char *name;
	size_t calls, errors, hits;
	size_t at_calls, at_errors, at_hits, at_nlat; /* absolute, to mark saved */
	double *lat;
	size_t nlat;
	struct agent_count *agents; /* calls: the gain; saved: the absolute */
	size_t nagents;
};

bool tools_unsaved(struct tools *t)
{
	if (!t)
		return false;
	bool any = false;
	pthread_mutex_lock(t->mu);
	for (size_t i = 0; i < t->n && !any; i++)
		any = t->v[i]->calls != t->v[i]->saved_calls;
	pthread_mutex_unlock(t->mu);
	return any;
}

static struct delta *snapshot(struct tools *t, size_t *n)
{
	pthread_mutex_lock(t->mu);
	struct delta *d = xcalloc(t->n, sizeof(*d));
	*n = t->n;
	for (size_t i = 0; i < t->n; i++) {
		const struct tool *tl = t->v[i];
		d[i].name = xstrdup(tl->name);
		d[i].calls = tl->calls - tl->saved_calls;
		d[i].errors = tl->errors - tl->saved_errors;
		d[i].hits = tl->hits - tl->saved_hits;
		d[i].at_calls = tl->calls;
		d[i].at_errors = tl->errors;
		d[i].at_hits = tl->hits;
		d[i].at_nlat = tl->nlat;
		d[i].nlat = tl->nlat - tl->saved_nlat;
		d[i].lat = xcalloc(d[i].nlat, sizeof(double));
		if (d[i].nlat)
			memcpy(d[i].lat, tl->lat + tl->saved_nlat,
			       d[i].nlat * sizeof(double));
		d[i].nagents = tl->nagents;
		d[i].agents = xcalloc(tl->nagents, sizeof(*d[i].agents));
		for (size_t k = 0; k < tl->nagents; k++)
			d[i].agents[k] = (struct agent_count){
				xstrdup(tl->agents[k].agent),
				tl->agents[k].calls - tl->agents[k].saved,
				tl->agents[k].calls,
			};
	}
	pthread_mutex_unlock(t->mu);
	return d;
}

static void mark_saved(struct tools *t, const struct delta *d, size_t n)
{
	pthread_mutex_lock(t->mu);
	for (size_t i = 0; i < n; i++) {
		ssize_t idx = find_tool(t, d[i].name);
		if (idx < 0)
			continue;
		struct tool *tl = t->v[idx];
		tl->saved_calls = d[i].at_calls;
		tl->saved_errors = d[i].at_errors;
		tl->saved_hits = d[i].at_hits;
		tl->saved_nlat = d[i].at_nlat;
		for (size_t k = 0; k < d[i].nagents; k++)
			for (size_t m = 0; m < tl->nagents; m++)
				if (!strcmp(tl->agents[m].agent, d[i].agents[k].agent))
					tl->agents[m].saved = d[i].agents[k].saved;
	}
	pthread_mutex_unlock(t->mu);
}

static void free_deltas(struct delta *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].name);
		free(d[i].lat);
		for (size_t k = 0; k < d[i].nagents; k++)
			free(d[i].agents[k].agent);
		free(d[i].agents);
	}
	free(d);
}

static double num_or_zero(const cJSON *o, const char *k)
{
	double v = jnum(o, k, 0);
	return v >= 0 ? v : 0;
}

static cJSON *obj_child(cJSON *parent, const char *k)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, k);
	if (cJSON_IsObject(o))
		return o;
	if (o)
		cJSON_DeleteItemFromObjectCaseSensitive(parent, k);
	return cJSON_AddObjectToObject(parent, k);
}

static void set_num(cJSON *o, const char *k, double v)
{
	cJSON *old = cJSON_GetObjectItemCaseSensitive(o, k);
	if (old)
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, cJSON_CreateNumber(v));
	else
		cJSON_AddNumberToObject(o, k, v);
}

static void merge_tool(cJSON *tools, const struct delta *d)
{
	cJSON *o = obj_child(tools, d->name);
	set_num(o, "calls", num_or_zero(o, "calls") + (double)d->calls);
	set_num(o, "errors", num_or_zero(o, "errors") + (double)d->errors);
	set_num(o, "cache_hits", num_or_zero(o, "cache_hits") + (double)d->hits);
	cJSON *ba = obj_child(o, "by_agent");
	for (size_t k = 0; k < d->nagents; k++)
		if (d->agents[k].calls)
			set_num(ba, d->agents[k].agent,
				num_or_zero(ba, d->agents[k].agent) +
					(double)d->agents[k].calls);
	/* The reservoir: old samples then new ones, the last TOOLS_RESERVOIR. */
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(o, "samples");
	const cJSON *oa = cJSON_IsArray(old) ? old : NULL;
	size_t nold = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, oa)
		nold += cJSON_IsNumber(s);
	size_t total = nold + d->nlat;
	double *all = xcalloc(total, sizeof(double));
	size_t m = 0;
	cJSON_ArrayForEach(s, oa)
		if (cJSON_IsNumber(s))
			all[m++] = s->valuedouble;
	for (size_t i = 0; i < d->nlat; i++)
		all[m++] = round_ms(d->lat[i]);
	size_t from = total > TOOLS_RESERVOIR ? total - TOOLS_RESERVOIR : 0;
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = from; i < total; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(all[i]));
	set_num(o, "latency_p50_ms", percentile(all + from, total - from, 50));
	set_num(o, "latency_p95_ms", percentile(all + from, total - from, 95));
	if (old)
		cJSON_ReplaceItemInObjectCaseSensitive(o, "samples", arr);
	else
		cJSON_AddItemToObject(o, "samples", arr);
	free(all);
}

static bool missing(const char *path)
{
	struct stat st;
	return lstat(path, &st) < 0 && errno == ENOENT;
}

int tools_save_usage(struct tools *t, char **err)
{
	if (!t)
		return err_set(err, "tools: not open");
	if (util_mkdirs(t->dir, err) < 0)
		return -1;
	char *lock_path = xasprintf("%s/usage.json.lock", t->dir);
	char *path = xasprintf("%s/usage.json", t->dir);
	int lfd = util_lock_file(lock_path, true, err);
	int r = -1;
	if (lfd < 0)
		goto out;
	size_t n;
	struct delta *d = snapshot(t, &n);
	cJSON *root = NULL;
	char *buf = NULL;
	size_t len;
	char *rerr = NULL;
	if (util_read_file(path, USAGE_FILE_MAX, &buf, &len, &rerr) == 0) {
		root = json_parse_strict(buf, len, &rerr);
		free(buf);
		if (!cJSON_IsObject(root) ||
		    (cJSON_GetObjectItemCaseSensitive(root, "tools") &&
		     !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "tools")))) {
			err_set(err, "%s is corrupt: %s", path,
				rerr ? rerr : "not a usage object");
			free(rerr);
			cJSON_Delete(root);
			free_deltas(d, n);
			goto out;
		}
	} else if (missing(path)) {
		root = cJSON_CreateObject();
	} else {
		err_set(err, "%s", rerr);
		free(rerr);
		free_deltas(d, n);
		goto out;
	}
	free(rerr);
	cJSON *tools = obj_child(root, "tools");
	for (size_t i = 0; i < n; i++)
		merge_tool(tools, &d[i]);
	cJSON_DeleteItemFromObjectCaseSensitive(root, "updated_at");
	add_now(root, "updated_at");
	r = write_json(path, root, err);
	cJSON_Delete(root);
	if (r == 0)
		mark_saved(t, d, n);
	free_deltas(d, n);
out:
	if (lfd >= 0)
		close(lfd);
	free(lock_path);
	free(path);
	return r;
}
