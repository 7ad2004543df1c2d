#include "agents/data_tools.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/live_data.h"
#include "core/util.h"
#include "core/banned.h"

struct series_entry {
	char pair[MARKET_PAIR_MAX];
	struct fx_series s;
	bool loaded;
	char *error;
};

struct data_store {
	pthread_mutex_t lock;
	struct agent_env *env;
	struct series_entry *series;
	size_t nseries;
	struct news_list news;   /* the whole archive (file sources) */
	bool news_loaded;
	char *news_error;
	int64_t sim_from, sim_to; /* simulated news: the span generated */
	struct live *live;        /* ecb and rss:URL sources */
	int64_t news_loaded_mono; /* live feeds: when they were loaded */
	cJSON *news_warnings;     /* live feeds: stale data used at that load */
	pthread_mutex_t warn_lock;
	char **warned;            /* warnings shown on stderr once */
	size_t nwarned;
};

static const char *spec_path(const char *spec)
{
	const char *c = strchr(spec, ':');
	return c ? c + 1 : spec;
}

bool data_source_is_live(const char *spec)
{
	return live_is_market_spec(spec) || live_is_news_spec(spec);
}

int data_source_check(const char *spec, bool market, char **err)
{
	if (!strcmp(spec, "sim"))
		return 0;
	if (market ? live_is_market_spec(spec) : live_is_news_spec(spec))
		return live_check_spec(spec, market, err);
	static const char *const mk[] = { "csv:" }, *const nw[] = { "jsonl:", "rss:" };
	const char *const *ok = market ? mk : nw;
	size_t n = market ? 1 : 2;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(spec, ok[i], strlen(ok[i])) && spec[strlen(ok[i])])
			return 0;
	return err_set(err, "invalid %s source \"%s\": use %s or sim", market ? "market" : "news",
		       spec, market ? "csv:PATH, ecb, ecb:BASE_URL"
				    : "jsonl:PATH, rss:PATH, rss:URL[,URL...]");
}

void data_pair_ccys(const char *pair, char base[4], char quote[4])
{
	base[0] = quote[0] = '\0';
	if (strlen(pair) == 7 && pair[3] == '/') {
		memcpy(base, pair, 3);
		base[3] = '\0';
		memcpy(quote, pair + 4, 3);
		quote[3] = '\0';
	}
}

static int day_arg(const cJSON *args, const char *k, int32_t *day, char **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, k);
	if (!cJSON_IsString(v) || market_day_parse(v->valuestring, strlen(v->valuestring), day) < 0)
		return err_set(err, "%s: must be a date YYYY-MM-DD", k);
	return 0;
}

/* Loads (once) the whole series of pair from the market source. Called
 * with the lock held. */
static struct series_entry *series_get(struct data_store *d, const char *pair)
{
	for (size_t i = 0; i < d->nseries; i++)
		if (!strcmp(d->series[i].pair, pair))
			return &d->series[i];
	d->series = xrealloc(d->series, (d->nseries + 1) * sizeof(*d->series));
	struct series_entry *e = &d->series[d->nseries++];
	memset(e, 0, sizeof(*e));
	util_strlcpy(e->pair, pair, sizeof(e->pair));
	const char *pairs[1] = { pair };
	const char *spec = d->env->market_source;
	if (!strcmp(spec, "sim")) {
		/* The simulation starts at today's levels on 2024-01-01 (so it
		 * has not wandered far by the windows people ask about) and runs
		 * to 2040, one seed: the same figures every time. */
		if (market_sim(pairs, 1, market_day_from_ymd(2024, 1, 1),
			       market_day_from_ymd(2040, 12, 31), 20261122, &e->s, &e->error) == 0)
			e->loaded = true;
	} else if (market_load_csv(spec_path(spec), pairs, 1, &e->s, &e->error) == 0) {
		e->loaded = true;
	}
	return e;
}

static cJSON *series_json(const struct fx_series *s, int32_t start, int32_t end)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "pair", s->pair);
	cJSON_AddStringToObject(o, "source", s->source);
	cJSON_AddBoolToObject(o, "simulated", s->simulated);
	cJSON *pts = cJSON_AddArrayToObject(o, "points");
	for (size_t i = market_series_lower_bound(s, start); i < s->n && s->days[i] <= end; i++) {
		char day[16];
		market_day_format(s->days[i], day, sizeof(day));
		cJSON *pt = cJSON_CreateArray();
		cJSON_AddItemToArray(pt, cJSON_CreateString(day));
		cJSON_AddItemToArray(pt, cJSON_CreateNumber(s->close[i]));
		cJSON_AddItemToArray(pts, pt);
	}
	/* The whole series' first and last days: a window without points
	 * can say why (EUR/USD before 1999). */
	if (s->n) {
		char day[16];
		market_day_format(s->days[0], day, sizeof(day));
		cJSON_AddStringToObject(o, "first", day);
		market_day_format(s->days[s->n - 1], day, sizeof(day));
		cJSON_AddStringToObject(o, "last", day);
	}
	return o;
}

/* The ECB over HTTP: the live layer has its own lock and cache, so other
 * tools go on while a request waits. */
static int live_fx_rates(struct data_store *d, const char *pair, int32_t start, int32_t end,
			 cJSON **result, char **err)
{
	struct fx_series s;
	cJSON *warnings = cJSON_CreateArray();
	if (live_ecb_series(d->live, d->env->market_source, pair, start, end, &s, warnings,
			    err) < 0) {
		cJSON_Delete(warnings);
		return -1;
	}
	cJSON *o = series_json(&s, start, end);
	market_series_release(&s);
	if (cJSON_GetArraySize(warnings))
		cJSON_AddItemToObject(o, "warnings", warnings);
	else
		cJSON_Delete(warnings);
	*result = o;
	return 0;
}

static int tool_fx_rates(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	struct data_store *d = ctx;
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(args, "pair");
	int32_t start, end;
	if (!cJSON_IsString(p))
		return err_set(err, "pair: required, like \"USD/JPY\"");
	char base[4], quote[4];
	if (market_pair_parse(p->valuestring, base, quote, err) < 0)
		return -1;
	if (day_arg(args, "start", &start, err) < 0 || day_arg(args, "end", &end, err) < 0)
		return -1;
	if (live_is_market_spec(d->env->market_source))
		return live_fx_rates(d, p->valuestring, start, end, result, err);
	pthread_mutex_lock(&d->lock);
	struct series_entry *e = series_get(d, p->valuestring);
	int r = 0;
	if (!e->loaded) {
		r = err_set(err, "%s: %s", p->valuestring, e->error ? e->error : "no data");
	} else {
		*result = series_json(&e->s, start, end);
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}

int data_fx_rates(struct agent *a, const char *pair, const char *start, const char *end,
		  cJSON **res, char **err)
{
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "pair", pair);
	cJSON_AddStringToObject(args, "start", start);
	cJSON_AddStringToObject(args, "end", end);
	return data_call(a, "fx_rates", args, res, err);
}

int data_points_to_series(const cJSON *res, struct fx_series *out, char **err)
{
	memset(out, 0, sizeof(*out));
	const cJSON *pair = cJSON_GetObjectItemCaseSensitive(res, "pair");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(res, "source");
	const cJSON *pts = cJSON_GetObjectItemCaseSensitive(res, "points");
	if (!cJSON_IsString(pair) || !cJSON_IsArray(pts))
		return err_set(err, "fx_rates returned no points");
	util_strlcpy(out->pair, pair->valuestring, sizeof(out->pair));
	if (cJSON_IsString(src))
		util_strlcpy(out->source, src->valuestring, sizeof(out->source));
	out->simulated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "simulated"));
	size_t n = (size_t)cJSON_GetArraySize(pts);
	out->days = xcalloc(n, sizeof(*out->days));
	out->close = xcalloc(n, sizeof(*out->close));
	const cJSON *pt;
	cJSON_ArrayForEach(pt, pts) {
		const cJSON *dd = cJSON_GetArrayItem(pt, 0), *cc = cJSON_GetArrayItem(pt, 1);
		int32_t day;
		if (!cJSON_IsString(dd) || !cJSON_IsNumber(cc) ||
		    market_day_parse(dd->valuestring, strlen(dd->valuestring), &day) < 0)
			continue;
		out->days[out->n] = day;
		out->close[out->n++] = cc->valuedouble;
	}
	return 0;
}

/* Loads the news archive once (file sources), or generates the simulated
 * feed for a span covering [from, to]. Called with the lock held. */
static int news_ensure(struct data_store *d, int64_t from, int64_t to, char **err)
{
	const char *spec = d->env->news_source;
	if (!strcmp(spec, "sim")) {
		if (d->news_loaded && from >= d->sim_from && to <= d->sim_to)
			return 0;
		news_list_release(&d->news);
		memset(&d->news, 0, sizeof(d->news));
		/* Generate generously around the request so later calls hit. */
		int64_t day = 86400LL * 1000000000;
		d->sim_from = from - 120 * day;
		d->sim_to = to + 30 * day;
		if (news_sim(d->sim_from, d->sim_to, 20261122, &d->news, err) < 0)
			return -1;
		d->news_loaded = true;
		return 0;
	}
	if (live_is_news_spec(spec)) {
		/* Feeds are read again once their TTL is over (a long-running
		 * console); a failure is not remembered, the next call tries
		 * again (and falls back on the cache). */
		int64_t age = util_mono_ns() - d->news_loaded_mono;
		if (d->news_loaded && age < (int64_t)live_ttl_s(false) * 1000000000)
			return 0;
		struct news_list nl;
		cJSON *w = cJSON_CreateArray();
		if (live_rss_load(d->live, spec, &nl, w, err) < 0) {
			cJSON_Delete(w);
			if (!d->news_loaded)
				return -1;
			/* keep what was loaded before */
			free(*err);
			*err = NULL;
			return 0;
		}
		news_list_release(&d->news);
		d->news = nl;
		cJSON_Delete(d->news_warnings);
		d->news_warnings = w;
		d->news_loaded = true;
		d->news_loaded_mono = util_mono_ns();
		return 0;
	}
	if (d->news_loaded)
		return 0;
	if (d->news_error)
		return err_set(err, "%s", d->news_error);
	int r = !strncmp(spec, "jsonl:", 6) ?
		news_load_jsonl(spec_path(spec), INT64_MIN, INT64_MAX, &d->news, err) :
		news_load_rss(spec_path(spec), INT64_MIN, INT64_MAX, &d->news, err);
	if (r < 0) {
		d->news_error = xstrdup(err && *err ? *err : "cannot load news");
		return -1;
	}
	d->news_loaded = true;
	return 0;
}

static cJSON *story_json(const struct news_item *it, bool body)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", it->id ? it->id : "");
	cJSON_AddStringToObject(o, "source", it->source ? it->source : "");
	cJSON_AddStringToObject(o, "title", it->title ? it->title : "");
	if (it->dateline)
		cJSON_AddStringToObject(o, "dateline", it->dateline);
	char ts[40];
	util_iso8601(it->published_ns, ts, sizeof(ts));
	cJSON_AddStringToObject(o, "published_at", ts);
	cJSON *t = cJSON_AddArrayToObject(o, "topics");
	for (size_t i = 0; i < it->ntopics; i++)
		cJSON_AddItemToArray(t, cJSON_CreateString(it->topics[i]));
	if (body)
		cJSON_AddStringToObject(o, "body", it->body ? it->body : "");
	return o;
}

static bool topic_wanted(const struct news_item *it, const cJSON *topics)
{
	if (!cJSON_IsArray(topics) || cJSON_GetArraySize(topics) == 0)
		return true;
	const cJSON *t;
	cJSON_ArrayForEach(t, topics)
		if (cJSON_IsString(t) && news_item_has_topic(it, t->valuestring))
			return true;
	return false;
}

static int tool_news_search(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	struct data_store *d = ctx;
	int32_t start, end;
	if (day_arg(args, "start", &start, err) < 0 || day_arg(args, "end", &end, err) < 0)
		return -1;
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(args, "limit");
	int limit = cJSON_IsNumber(lim) && lim->valueint > 0 ? lim->valueint : 1000;
	int64_t day = 86400LL * 1000000000;
	int64_t from = (int64_t)start * day, to = ((int64_t)end + 1) * day;
	const cJSON *topics = cJSON_GetObjectItemCaseSensitive(args, "topics");
	pthread_mutex_lock(&d->lock);
	int r = news_ensure(d, from, to, err);
	if (r == 0) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "source", d->env->news_source);
		cJSON_AddBoolToObject(o, "simulated", !strcmp(d->env->news_source, "sim"));
		cJSON *arr = cJSON_AddArrayToObject(o, "stories");
		int total = 0;
		for (size_t i = 0; i < d->news.n; i++) {
			const struct news_item *it = &d->news.items[i];
			if (it->published_ns < from || it->published_ns >= to || !topic_wanted(it, topics))
				continue;
			if (total++ < limit)
				cJSON_AddItemToArray(arr, story_json(it, true));
		}
		cJSON_AddNumberToObject(o, "total", total);
		if (d->news_warnings && cJSON_GetArraySize(d->news_warnings))
			cJSON_AddItemToObject(o, "warnings",
					      cJSON_Duplicate(d->news_warnings, true));
		*result = o;
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}

static int tool_news_get(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	struct data_store *d = ctx;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(args, "id");
	if (!cJSON_IsString(id))
		return err_set(err, "id: required");
	pthread_mutex_lock(&d->lock);
	int r = 0;
	if (strcmp(d->env->news_source, "sim") && news_ensure(d, 0, 0, err) < 0) {
		r = -1;
	} else {
		r = err_set(err, "no story %s in %s", id->valuestring, d->env->news_source);
		for (size_t i = 0; i < d->news.n; i++) {
			if (d->news.items[i].id && !strcmp(d->news.items[i].id, id->valuestring)) {
				*result = story_json(&d->news.items[i], true);
				if (d->news_warnings && cJSON_GetArraySize(d->news_warnings))
					cJSON_AddItemToObject(*result, "warnings",
							      cJSON_Duplicate(d->news_warnings, true));
				r = 0;
				break;
			}
		}
		if (r == 0 && err) {
			free(*err);
			*err = NULL;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}

static const struct tool_def data_tools[] = {
	{ "fx_rates", "Daily FX closes of one currency pair between two dates",
	  "{\"type\":\"object\",\"properties\":{\"pair\":{\"type\":\"string\"},"
	  "\"start\":{\"type\":\"string\",\"format\":\"date\"},"
	  "\"end\":{\"type\":\"string\",\"format\":\"date\"}},"
	  "\"required\":[\"pair\",\"start\",\"end\"]}",
	  "market", "builtin", tool_fx_rates },
	{ "news_search", "News stories published between two dates, optionally by topic",
	  "{\"type\":\"object\",\"properties\":{\"start\":{\"type\":\"string\"},"
	  "\"end\":{\"type\":\"string\"},\"topics\":{\"type\":\"array\","
	  "\"items\":{\"type\":\"string\"}},\"limit\":{\"type\":\"integer\"}},"
	  "\"required\":[\"start\",\"end\"]}",
	  "news", "builtin", tool_news_search },
	{ "news_get", "One news story by id from the authoritative archive",
	  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}},"
	  "\"required\":[\"id\"]}",
	  "validation", "builtin", tool_news_get },
};

int data_tools_register(struct agent_env *env, char **err)
{
	if (data_source_check(env->market_source, true, err) < 0 ||
	    data_source_check(env->news_source, false, err) < 0)
		return -1;
	struct data_store *d = xcalloc(1, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->warn_lock, NULL);
	d->env = env;
	d->live = live_new(env->cache);
	env->data = d;
	for (size_t i = 0; i < ARRAY_SIZE(data_tools); i++)
		if (tools_register(env->tools, &data_tools[i], d, err) < 0)
			return -1;
	return 0;
}

void data_tools_release(struct agent_env *env)
{
	struct data_store *d = env->data;
	if (!d)
		return;
	for (size_t i = 0; i < d->nseries; i++) {
		if (d->series[i].loaded)
			market_series_release(&d->series[i].s);
		free(d->series[i].error);
	}
	free(d->series);
	news_list_release(&d->news);
	free(d->news_error);
	cJSON_Delete(d->news_warnings);
	live_free(&d->live);
	for (size_t i = 0; i < d->nwarned; i++)
		free(d->warned[i]);
	free(d->warned);
	pthread_mutex_destroy(&d->warn_lock);
	pthread_mutex_destroy(&d->lock);
	free(d);
	env->data = NULL;
}

/* Shows text on stderr unless it (its first klen bytes) was shown
 * already by this process. */
static void stderr_once(struct data_store *d, const char *label, const char *text, size_t klen)
{
	char *key = xstrndup(text, klen);
	pthread_mutex_lock(&d->warn_lock);
	bool seen = false;
	for (size_t i = 0; i < d->nwarned && !seen; i++)
		seen = !strcmp(d->warned[i], key);
	if (seen) {
		free(key);
	} else {
		d->warned = xrealloc(d->warned, (d->nwarned + 1) * sizeof(*d->warned));
		d->warned[d->nwarned++] = key;
		char *clean = util_sanitize(text, strlen(text), false);
		fprintf(stderr, "madf: %s: %s\n", label, clean);
		fflush(stderr);
		free(clean);
	}
	pthread_mutex_unlock(&d->warn_lock);
}

/* Warnings of a live source (stale data used): in the agent's log each
 * time, on stderr once per process. */
static void report_warnings(struct agent *a, const char *tool, const cJSON *res)
{
	const cJSON *w;
	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(res, "warnings")) {
		if (!cJSON_IsString(w))
			continue;
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "tool", tool);
		log_write(a->log, LOG_EVENTS, LOG_WARN, "data_source_degraded", f, "%s",
			  w->valuestring);
		cJSON_Delete(f);
		struct data_store *d = a->env->data;
		if (!d)
			continue;
		/* Once per process and source and reason: what follows
		 * "; using cached" (the time and age of each leg's data) does not
		 * make it another warning. */
		const char *cut = strstr(w->valuestring, "; using cached");
		size_t klen = cut ? (size_t)(cut - w->valuestring) : strlen(w->valuestring);
		stderr_once(d, "warning", w->valuestring, klen);
	}
}

int data_call(struct agent *a, const char *tool, cJSON *args, cJSON **res,
	      char **err)
{
	const char *spec = strcmp(tool, "fx_rates") ? a->env->news_source : a->env->market_source;
	cJSON_AddStringToObject(args, "source", spec);
	struct stat st;
	if (data_source_is_live(spec)) {
		/* The tool cache must not keep an answer longer than the live
		 * source's TTL: the version changes every TTL. */
		int ttl = live_ttl_s(live_is_market_spec(spec));
		int64_t now = util_now_ns();
		char v[64];
		snprintf(v, sizeof(v), "live-%lld",
			 ttl > 0 ? (long long)(now / 1000000000 / ttl) : (long long)now);
		cJSON_AddStringToObject(args, "source_version", v);
	} else if (strcmp(spec, "sim") && stat(spec_path(spec), &st) == 0) {
		char v[64];
		snprintf(v, sizeof(v), "%lld-%lld", (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec);
		cJSON_AddStringToObject(args, "source_version", v);
	}
	*res = NULL;
	int r = tools_call(a->env->tools, a->name, tool, args, res, err);
	cJSON_Delete(args);
	if (r == 0)
		report_warnings(a, tool, *res);
	else if (data_source_is_live(spec) && a->env->data && err && *err)
		/* the task fails the normal way; the operator also sees why */
		stderr_once(a->env->data, "error", *err, strlen(*err));
	return r;
}
