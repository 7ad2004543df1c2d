/* Live data over HTTP: the ECB's euro reference rates and RSS/Atom feeds,
 * through the cache, rate limited, falling back on stale cached answers
 * with a warning. See agents/live_data.h. */
#include "agents/live_data.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "agents/analytics.h"
#include "core/http.h"
#include "core/util.h"
#include "core/banned.h"

#define NS INT64_C(1000000000)
#define MEMO_MAX 64
#define RETRIES_MAX 2
/* A leg is fetched from at least this many days before the end asked for:
 * the researchers' history (the 8-day window and the 140 days before it
 * for the z-score, agents/researcher.c), so that every call for one week
 * (market, news, validator; whatever their order) shares one URL. */
#define ECB_HISTORY_DAYS (ANALYTICS_WINDOW_DAYS - 1 + 140)

/* One currency's rates fetched over a window, kept for the TTL so that
 * the pairs of one run share their legs. */
struct memo {
	char *base_url;
	char ccy[4];
	int32_t start, end;
	struct fx_series s;
	int64_t at_mono;      /* when it was fetched (or read from the cache) */
	int64_t stale_ns;     /* stored_ns of the stale entry used, else 0 */
	char *warning;        /* repeated to every user of a stale leg */
};

struct live {
	struct cache *cache;
	pthread_mutex_t mu;
	struct memo memo[MEMO_MAX];
	size_t nmemo;
};

/* ---- configuration ---------------------------------------------------- */

static int64_t env_int(const char *name, int64_t def, int64_t min, int64_t max)
{
	const char *e = getenv(name);
	if (!e || !*e)
		return def;
	char *end;
	errno = 0;
	long long v = strtoll(e, &end, 10);
	if (errno || *end || v < min || v > max)
		return def;
	return v;
}

int live_ttl_s(bool market)
{
	return market ? (int)env_int("MADF_ECB_TTL_S", LIVE_ECB_TTL_DEFAULT, 0, INT32_MAX)
		      : (int)env_int("MADF_RSS_TTL_S", LIVE_RSS_TTL_DEFAULT, 0, INT32_MAX);
}

struct live *live_new(struct cache *cache)
{
	struct live *l = xcalloc(1, sizeof(*l));
	l->cache = cache;
	pthread_mutex_init(&l->mu, NULL);
	return l;
}

static void memo_release(struct memo *m)
{
	free(m->base_url);
	market_series_release(&m->s);
	free(m->warning);
	memset(m, 0, sizeof(*m));
}

void live_free(struct live **lp)
{
	struct live *l = lp ? *lp : NULL;
	if (!l)
		return;
	for (size_t i = 0; i < l->nmemo; i++)
		memo_release(&l->memo[i]);
	pthread_mutex_destroy(&l->mu);
	free(l);
	*lp = NULL;
}

/* ---- specs and URLs ----------------------------------------------------- */

bool live_is_market_spec(const char *spec)
{
	return spec && (!strcmp(spec, "ecb") || !strncmp(spec, "ecb:", 4));
}

static bool is_http_url(const char *s)
{
	return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

bool live_is_news_spec(const char *spec)
{
	return spec && !strncmp(spec, "rss:", 4) && is_http_url(spec + 4);
}

void live_url_host(const char *url, char *buf, size_t size)
{
	const char *p = strstr(url, "://");
	if (!p) {
		util_strlcpy(buf, "?", size);
		return;
	}
	p += 3;
	size_t n = strcspn(p, "/?#");
	const char *at = memchr(p, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	if (!n) {
		util_strlcpy(buf, "?", size);
		return;
	}
	snprintf(buf, size, "%.*s", (int)n, p);
}

static int check_url(const char *url, size_t len, char **err)
{
	char *u = xstrndup(url, len);
	int r = 0;
	char host[256];
	live_url_host(u, host, sizeof(host));
	if (!is_http_url(u))
		r = err_set(err, "\"%s\": not an http:// or https:// URL", u);
	else if (!strcmp(host, "?"))
		r = err_set(err, "\"%s\": no host", u);
	for (const unsigned char *c = (const unsigned char *)u; !r && *c; c++)
		if (*c <= ' ' || *c == 0x7f)
			r = err_set(err, "\"%s\": a space or control character in the URL", u);
	free(u);
	return r;
}

/* The next URL of a comma-separated list: a comma starts a new URL only
 * when one follows it ("...,https://..."), so commas inside a URL stay. */
static const char *next_url(const char *p, size_t *len)
{
	const char *q = p;
	for (;;) {
		const char *c = strchr(q, ',');
		if (!c) {
			*len = strlen(p);
			return p;
		}
		if (is_http_url(c + 1)) {
			*len = (size_t)(c - p);
			return p;
		}
		q = c + 1;
	}
}

int live_check_spec(const char *spec, bool market, char **err)
{
	if (market) {
		if (!strcmp(spec, "ecb"))
			return 0;
		if (strncmp(spec, "ecb:", 4))
			return err_set(err, "invalid market source \"%s\"", spec);
		return check_url(spec + 4, strlen(spec + 4), err) < 0
			       ? err_prefix(err, "market source ecb:BASE_URL") : 0;
	}
	if (!live_is_news_spec(spec))
		return err_set(err, "invalid news source \"%s\"", spec);
	const char *p = spec + 4;
	while (*p) {
		size_t n;
		next_url(p, &n);
		if (check_url(p, n, err) < 0)
			return err_prefix(err, "news source rss:URL[,URL...]");
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* ---- rate limit, per host, per process ------------------------------------ */

struct host_slot {
	char host[256];
	int64_t next_ns; /* util_mono_ns() time the next request may start */
};

static pthread_mutex_t rl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_slot *rl_slots;
static size_t rl_n;

static struct host_slot *rl_slot(const char *host)
{
	for (size_t i = 0; i < rl_n; i++)
		if (!strcmp(rl_slots[i].host, host))
			return &rl_slots[i];
	rl_slots = xrealloc(rl_slots, (rl_n + 1) * sizeof(*rl_slots));
	struct host_slot *s = &rl_slots[rl_n++];
	util_strlcpy(s->host, host, sizeof(s->host));
	s->next_ns = 0;
	return s;
}

/* Reserves the next slot for host: the time the request may start. */
static int64_t rl_reserve(const char *host)
{
	int64_t gap = env_int("MADF_HTTP_MIN_INTERVAL_MS", LIVE_MIN_INTERVAL_MS_DEFAULT, 0,
			      3600 * 1000) * 1000000;
	pthread_mutex_lock(&rl_lock);
	struct host_slot *s = rl_slot(host);
	int64_t now = util_mono_ns(), at = s->next_ns > now ? s->next_ns : now;
	s->next_ns = at + gap;
	pthread_mutex_unlock(&rl_lock);
	return at;
}

/* Nothing starts for host before not_before (a Retry-After). */
static void rl_hold(const char *host, int64_t not_before)
{
	pthread_mutex_lock(&rl_lock);
	struct host_slot *s = rl_slot(host);
	if (s->next_ns < not_before)
		s->next_ns = not_before;
	pthread_mutex_unlock(&rl_lock);
}

int live_parse_retry_after(const char *v, int64_t now_ns, int64_t *seconds)
{
	while (*v == ' ')
		v++;
	if (*v >= '0' && *v <= '9') {
		char *end;
		errno = 0;
		long long s = strtoll(v, &end, 10);
		while (*end == ' ')
			end++;
		if (errno || *end || s < 0)
			return -1;
		*seconds = s;
		return 0;
	}
	int64_t t;
	if (!*v || news_parse_rfc822(v, &t) < 0)
		return -1;
	int64_t d = (t - now_ns + NS - 1) / NS;
	*seconds = d > 0 ? d : 0;
	return 0;
}

/* ---- one HTTP GET --------------------------------------------------------- */

struct get_state {
	struct sbuf body;
	bool too_big;
	char retry_after[64];
	enum http_outcome outcome;
	long status;
	bool timed_out;
	char error[256];
};

static int get_on_header(void *ctx, const char *name, size_t nlen, const char *value,
			 size_t vlen)
{
	struct get_state *g = ctx;
	if (nlen == 11 && !strncasecmp(name, "Retry-After", 11))
		snprintf(g->retry_after, sizeof(g->retry_after), "%.*s", (int)vlen, value);
	return 0;
}

static int get_on_data(void *ctx, long status, const char *buf, size_t len)
{
	(void)status;
	struct get_state *g = ctx;
	if (g->body.len + len > LIVE_BODY_MAX) {
		g->too_big = true;
		return -1;
	}
	sbuf_add(&g->body, buf, len);
	return 0;
}

static void get_on_done(void *ctx, const struct http_result *res)
{
	struct get_state *g = ctx;
	g->outcome = res->outcome;
	g->status = res->status;
	g->timed_out = res->timed_out;
	util_strlcpy(g->error, res->error ? res->error : "", sizeof(g->error));
	/* curl's " after 12 ms" would make each warning a new one */
	char *a = strstr(g->error, " after ");
	if (a) {
		char *p = a + 7;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p > a + 7 && !strncmp(p, " ms", 3))
			memmove(a, p + 3, strlen(p + 3) + 1);
	}
}

static int http_get(const char *url, const char *accept, int64_t start_at, long timeout_ms,
		    struct get_state *g, char **err)
{
	struct http_multi *m;
	if (http_multi_new(&m, err) < 0)
		return -1;
	char *acc = xasprintf("Accept: %s", accept);
	const char *headers[] = { acc, "User-Agent: madf/" MADF_VERSION " (live data)", NULL };
	struct http_request_opts o = {
		.url = url,
		.headers = headers,
		.timeout_ms = timeout_ms,
		.connect_timeout_ms = timeout_ms / 3 > 0 ? timeout_ms / 3 : 1,
		.start_at_ns = start_at,
		.on_header = get_on_header,
		.on_data = get_on_data,
		.on_done = get_on_done,
		.ctx = g,
	};
	g->outcome = HTTP_FAILED;
	int r = http_multi_start(m, &o, err);
	if (r == 0)
		r = http_multi_run(m, err);
	http_multi_free(&m);
	free(acc);
	return r;
}

/* ---- fetching through the cache -------------------------------------------- */

struct fetch {
	const char *label;        /* "ecb", "rss": the source in messages */
	const char *source;       /* cache source */
	const char *url;
	const char *accept;
	const char *what;         /* "rates", "feed" */
	int ttl_s;
	bool empty_on_404;        /* the ECB's "No results found." */
	/* 0 when a body can be used, else -1 with *why. */
	int (*usable)(const char *body, size_t len, void *ctx, char **why);
	void *uctx;
};

static void format_age(int64_t secs, char *buf, size_t size)
{
	if (secs < 0)
		secs = 0;
	if (secs < 120)
		snprintf(buf, size, "%lld s", (long long)secs);
	else if (secs < 7200)
		snprintf(buf, size, "%lld min", (long long)(secs / 60));
	else if (secs < 2 * 86400)
		snprintf(buf, size, "%lld h %lld min", (long long)(secs / 3600),
			 (long long)(secs % 3600 / 60));
	else
		snprintf(buf, size, "%lld days", (long long)(secs / 86400));
}

static void format_time(int64_t t_ns, char *buf, size_t size)
{
	time_t s = (time_t)(t_ns / NS);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Over the network: 0 with *body, or -1 with *reason. */
static int fetch_net(const struct fetch *f, char **body, size_t *len, char **reason)
{
	char host[256];
	live_url_host(f->url, host, sizeof(host));
	long timeout_ms = (long)env_int("MADF_HTTP_TIMEOUT_MS", LIVE_TIMEOUT_MS_DEFAULT, 1,
					 3600 * 1000);
	int64_t retry_max = env_int("MADF_HTTP_RETRY_MAX_S", LIVE_RETRY_MAX_S_DEFAULT, 0, 86400);
	for (int attempt = 0;; attempt++) {
		struct get_state g;
		memset(&g, 0, sizeof(g));
		sbuf_init(&g.body);
		char *e = NULL;
		if (http_get(f->url, f->accept, rl_reserve(host), timeout_ms, &g, &e) < 0) {
			*reason = xasprintf("cannot ask %s (%s)", host, e);
			free(e);
			sbuf_release(&g.body);
			return -1;
		}
		int rc = -1;
		if (g.outcome == HTTP_FAILED && g.timed_out) {
			*reason = xasprintf("no answer from %s within %ld ms (%s)", host, timeout_ms,
					    g.error);
		} else if (g.outcome == HTTP_FAILED) {
			*reason = xasprintf("cannot reach %s (%s)", host, g.error);
		} else if (g.outcome != HTTP_DONE) {
			*reason = g.too_big ? xasprintf("the answer from %s is over %zu bytes", host,
							(size_t)LIVE_BODY_MAX)
					    : xasprintf("the request to %s was cancelled", host);
		} else if (g.status == 200 ||
			   (g.status == 404 && f->empty_on_404 && g.body.data &&
			    strstr(g.body.data, "No results found"))) {
			if (g.status == 404)
				g.body.len = 0;
			char *why = NULL;
			sbuf_add(&g.body, "", 0);
			g.body.data[g.body.len] = '\0';
			if (f->usable && f->usable(g.body.data, g.body.len, f->uctx, &why) < 0) {
				*reason = xasprintf("unusable answer from %s (%s)", host,
						    why ? why : "unparsable");
				free(why);
			} else {
				*len = g.body.len;
				*body = sbuf_detach(&g.body);
				return 0;
			}
		} else if (g.status == 429 || g.status == 503) {
			int64_t secs;
			bool has = g.retry_after[0] &&
				   live_parse_retry_after(g.retry_after, util_now_ns(), &secs) == 0;
			if (has && secs <= retry_max && attempt < RETRIES_MAX) {
				rl_hold(host, util_mono_ns() + secs * NS);
				sbuf_release(&g.body);
				continue;
			}
			if (!has)
				*reason = xasprintf("%s answered HTTP %ld", host, g.status);
			else if (secs > retry_max)
				*reason = xasprintf("%s answered HTTP %ld with Retry-After %lld s, "
						    "more than the %lld s madf waits", host, g.status,
						    (long long)secs, (long long)retry_max);
			else
				*reason = xasprintf("%s answered HTTP %ld again after %d retries", host,
						    g.status, RETRIES_MAX);
		} else {
			*reason = xasprintf("%s answered HTTP %ld", host, g.status);
		}
		sbuf_release(&g.body);
		return rc;
	}
}

/* The body for f: fresh from the cache, else from the network (then
 * cached), else the newest cached one with a warning. 0 with *body (and
 * *stale_ns the time a stale answer was stored, else 0), or -1. */
static int live_get(struct live *l, const struct fetch *f, char **body, size_t *len,
		    int64_t *stale_ns, char **warning, char **err)
{
	*body = NULL;
	*len = 0;
	*stale_ns = 0;
	*warning = NULL;
	char *key = xasprintf("GET %s", f->url);
	if (l->cache && cache_get(l->cache, f->source, key, f->ttl_s, body, len) == 1) {
		char *why = NULL;
		if (!f->usable || f->usable(*body, *len, f->uctx, &why) == 0) {
			free(key);
			return 0;
		}
		free(why);
		free(*body);
		*body = NULL;
	}
	char *reason = NULL;
	if (fetch_net(f, body, len, &reason) == 0) {
		char *e = NULL;
		if (l->cache && cache_put(l->cache, f->source, key, *body, *len, &e) < 0)
			free(e); /* not fatal: the answer is still good */
		free(key);
		return 0;
	}
	int64_t now = util_now_ns(), stored;
	int64_t max_age = env_int("MADF_LIVE_STALE_MAX_S", LIVE_STALE_MAX_S_DEFAULT, 0,
				  400LL * 86400);
	if (l->cache && cache_get_stale_at(l->cache, f->source, key, max_age, now, body, len,
					   &stored) == 1) {
		char *why = NULL;
		if (!f->usable || f->usable(*body, *len, f->uctx, &why) == 0) {
			char ts[40], age[48];
			format_time(stored, ts, sizeof(ts));
			format_age((now - stored) / NS, age, sizeof(age));
			*warning = xasprintf("%s: %s; using cached %s from %s (%s old)", f->label,
					     reason, f->what, ts, age);
			*stale_ns = stored;
			free(reason);
			free(key);
			return 0;
		}
		free(why);
		free(*body);
		*body = NULL;
		*len = 0;
	}
	err_set(err, "%s: %s, and no cached %s to fall back on (%s)", f->label, reason, f->what,
		f->url);
	free(reason);
	free(key);
	return -1;
}

/* ---- the ECB ---------------------------------------------------------------- */

/* The euro reference rates the ECB publishes, and those it used to
 * (currencies that joined the euro, or suspended: RUB). */
static const char *const ecb_ccys[] = {
	"AUD", "BGN", "BRL", "CAD", "CHF", "CNY", "CYP", "CZK", "DKK", "EEK", "GBP",
	"HKD", "HRK", "HUF", "IDR", "ILS", "INR", "ISK", "JPY", "KRW", "LTL", "LVL",
	"MTL", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "ROL", "RON", "RUB", "SEK",
	"SGD", "SIT", "SKK", "THB", "TRL", "TRY", "USD", "ZAR",
};

bool live_ecb_currency(const char *code)
{
	if (!strcmp(code, "EUR"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(ecb_ccys); i++)
		if (!strcmp(code, ecb_ccys[i]))
			return true;
	return false;
}

struct csv_rec {
	char **f;
	size_t n, cap;
};

static void rec_clear(struct csv_rec *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i]);
	r->n = 0;
}

static void rec_push(struct csv_rec *r, struct sbuf *b)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->f = xrealloc(r->f, r->cap * sizeof(*r->f));
	}
	sbuf_add(b, "", 0);
	r->f[r->n++] = b->data ? sbuf_detach(b) : xstrdup("");
	sbuf_init(b);
}

/* One RFC 4180 record from *pp: 1 with r, 0 at the end, -1 malformed
 * (*why static). *line counts the newlines passed. Blank lines are
 * skipped. */
static int csv_next(const char **pp, const char *end, struct csv_rec *r, size_t *line,
		    const char **why)
{
	const char *p = *pp;
	rec_clear(r);
	while (p < end && (*p == '\n' || *p == '\r')) {
		if (*p == '\n')
			(*line)++;
		p++;
	}
	if (p >= end) {
		*pp = p;
		return 0;
	}
	struct sbuf b;
	sbuf_init(&b);
	for (;;) {
		if (p < end && *p == '"') {
			p++;
			for (;;) {
				if (p >= end) {
					sbuf_release(&b);
					*why = "a quoted field is not closed";
					return -1;
				}
				if (*p == '"') {
					if (p + 1 < end && p[1] == '"') {
						sbuf_addch(&b, '"');
						p += 2;
						continue;
					}
					p++;
					break;
				}
				if (*p == '\n')
					(*line)++;
				sbuf_addch(&b, *p++);
			}
			if (p < end && *p != ',' && *p != '\n' && *p != '\r') {
				sbuf_release(&b);
				*why = "text after a closing quote";
				return -1;
			}
		} else {
			while (p < end && *p != ',' && *p != '\n' && *p != '\r') {
				if (*p == '"') {
					sbuf_release(&b);
					*why = "a quote inside an unquoted field";
					return -1;
				}
				sbuf_addch(&b, *p++);
			}
		}
		rec_push(r, &b);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '\r')
			p++;
		if (p < end && *p == '\n') {
			p++;
			(*line)++;
		}
		break;
	}
	sbuf_release(&b);
	*pp = p;
	return 1;
}

static ssize_t col_index(const struct csv_rec *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->f[i], name))
			return (ssize_t)i;
	return -1;
}

struct obs {
	int32_t day;
	double v;
};

static int obs_cmp(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	return (x->day > y->day) - (x->day < y->day);
}

int live_ecb_parse_csv(const char *data, size_t len, const char *name, const char *ccy,
		       struct fx_series *out, char **err)
{
	memset(out, 0, sizeof(*out));
	const char *p = data, *end = data + len;
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	const char *q = p;
	while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
		q++;
	if (q == end)
		return 0; /* no observations */
	if (memchr(data, '\0', len))
		return err_set(err, "%s: a NUL byte in the answer", name);
	struct csv_rec r = { 0 };
	size_t line = 1, hline;
	const char *why = NULL;
	int rc = 0;
	struct obs *o = NULL;
	size_t n = 0, cap = 0;
	if (csv_next(&p, end, &r, &line, &why) != 1) {
		rc = err_set(err, "%s: no header", name);
		goto out;
	}
	hline = line;
	ssize_t ic = col_index(&r, "CURRENCY"), id = col_index(&r, "CURRENCY_DENOM");
	ssize_t it = col_index(&r, "TIME_PERIOD"), iv = col_index(&r, "OBS_VALUE");
	ssize_t ifr = col_index(&r, "FREQ");
	if (ic < 0 || id < 0 || it < 0 || iv < 0) {
		rc = err_set(err, "%s:%zu: not ECB csvdata (no CURRENCY, CURRENCY_DENOM, "
			     "TIME_PERIOD and OBS_VALUE columns)", name, hline > 1 ? hline - 1 : 1);
		goto out;
	}
	size_t ncols = r.n;
	for (;;) {
		size_t at = line;
		int k = csv_next(&p, end, &r, &line, &why);
		if (k == 0)
			break;
		if (k < 0) {
			rc = err_set(err, "%s:%zu: %s", name, at, why);
			goto out;
		}
		if (r.n != ncols) {
			rc = err_set(err, "%s:%zu: %zu fields, the header has %zu", name, at, r.n,
				     ncols);
			goto out;
		}
		if (strcmp(r.f[ic], ccy) || strcmp(r.f[id], "EUR") ||
		    (ifr >= 0 && strcmp(r.f[ifr], "D")))
			continue;
		const char *ds = r.f[it], *vs = r.f[iv];
		int32_t day;
		if (market_day_parse(ds, strlen(ds), &day) < 0) {
			rc = err_set(err, "%s:%zu: TIME_PERIOD \"%.20s\" is not a date YYYY-MM-DD", name,
				     at, ds);
			goto out;
		}
		if (!*vs || !strcasecmp(vs, "NaN"))
			continue; /* no rate that day */
		char *e;
		errno = 0;
		double v = strtod(vs, &e);
		if (errno || *e || !isfinite(v) || v < MARKET_RATE_MIN || v > MARKET_RATE_MAX) {
			rc = err_set(err, "%s:%zu: OBS_VALUE \"%.20s\" is not a rate", name, at, vs);
			goto out;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			o = xrealloc(o, cap * sizeof(*o));
		}
		o[n++] = (struct obs){ day, v };
	}
	if (n) /* o is NULL without rows: qsort may not be given NULL */
		qsort(o, n, sizeof(*o), obs_cmp);
	for (size_t i = 1; i < n; i++)
		if (o[i].day == o[i - 1].day) {
			char d[16];
			market_day_format(o[i].day, d, sizeof(d));
			rc = err_set(err, "%s: two rates for %s on %s", name, ccy, d);
			goto out;
		}
	out->days = xcalloc(n ? n : 1, sizeof(*out->days));
	out->close = xcalloc(n ? n : 1, sizeof(*out->close));
	for (size_t i = 0; i < n; i++) {
		out->days[i] = o[i].day;
		out->close[i] = o[i].v;
	}
	out->n = n;
out:
	rec_clear(&r);
	free(r.f);
	free(o);
	return rc;
}

void live_cross(const struct fx_series *b, const struct fx_series *q, struct fx_series *out)
{
	size_t cap = b ? b->n : q->n;
	out->days = xcalloc(cap ? cap : 1, sizeof(*out->days));
	out->close = xcalloc(cap ? cap : 1, sizeof(*out->close));
	out->n = 0;
	if (!b || !q) {
		const struct fx_series *s = b ? b : q;
		for (size_t i = 0; i < s->n; i++) {
			out->days[out->n] = s->days[i];
			out->close[out->n++] = b ? 1.0 / s->close[i] : s->close[i];
		}
		return;
	}
	size_t i = 0, j = 0;
	while (i < b->n && j < q->n) {
		if (b->days[i] < q->days[j]) {
			i++;
		} else if (b->days[i] > q->days[j]) {
			j++;
		} else {
			out->days[out->n] = b->days[i];
			out->close[out->n++] = q->close[j] / b->close[i];
			i++;
			j++;
		}
	}
}

struct ecb_check {
	const char *ccy;
	const char *name;
};

static int ecb_usable(const char *body, size_t len, void *ctx, char **why)
{
	const struct ecb_check *c = ctx;
	struct fx_series s;
	if (live_ecb_parse_csv(body, len, c->name, c->ccy, &s, why) < 0)
		return -1;
	market_series_release(&s);
	return 0;
}

static const char *ecb_base(const char *spec)
{
	return !strncmp(spec, "ecb:", 4) ? spec + 4 : LIVE_ECB_DEFAULT_BASE;
}

/* The leg of ccy (units per euro) covering [start, end]: from the memo,
 * else fetched. Called with l->mu held. */
static struct memo *ecb_leg(struct live *l, const char *spec, const char *ccy, int32_t start,
			    int32_t end, char **err)
{
	const char *base = ecb_base(spec);
	size_t blen = strlen(base);
	while (blen && base[blen - 1] == '/')
		blen--;
	int ttl = live_ttl_s(true);
	int64_t now = util_mono_ns();
	for (size_t i = 0; i < l->nmemo; i++) {
		struct memo *m = &l->memo[i];
		if (!strncmp(m->base_url, base, blen) && !m->base_url[blen] && !strcmp(m->ccy, ccy) &&
		    m->start <= start && m->end >= end && now - m->at_mono < (int64_t)ttl * NS)
			return m;
	}
	if (start > end - ECB_HISTORY_DAYS)
		start = end - ECB_HISTORY_DAYS;
	char d0[16], d1[16];
	market_day_format(start, d0, sizeof(d0));
	market_day_format(end, d1, sizeof(d1));
	char *url = xasprintf("%.*s/D.%s.EUR.SP00.A?startPeriod=%s&endPeriod=%s&format=csvdata",
			      (int)blen, base, ccy, d0, d1);
	char *name = xasprintf("ECB D.%s.EUR.SP00.A", ccy);
	struct ecb_check chk = { ccy, name };
	struct fetch f = {
		.label = "ecb", .source = "ecb", .url = url,
		.accept = "text/csv, application/vnd.sdmx.data+csv;version=1.0.0;q=0.9",
		.what = "rates", .ttl_s = ttl, .empty_on_404 = true,
		.usable = ecb_usable, .uctx = &chk,
	};
	char *body = NULL, *warning = NULL;
	size_t len;
	int64_t stale;
	struct memo *m = NULL;
	if (live_get(l, &f, &body, &len, &stale, &warning, err) == 0) {
		struct fx_series s;
		if (live_ecb_parse_csv(body, len, name, ccy, &s, err) == 0) {
			if (l->nmemo == MEMO_MAX) {
				/* the oldest goes */
				size_t old = 0;
				for (size_t i = 1; i < l->nmemo; i++)
					if (l->memo[i].at_mono < l->memo[old].at_mono)
						old = i;
				memo_release(&l->memo[old]);
				l->memo[old] = l->memo[--l->nmemo];
			}
			m = &l->memo[l->nmemo++];
			memset(m, 0, sizeof(*m));
			m->base_url = xstrndup(base, blen);
			util_strlcpy(m->ccy, ccy, sizeof(m->ccy));
			m->start = start;
			m->end = end;
			m->s = s;
			m->at_mono = util_mono_ns();
			m->stale_ns = stale;
			m->warning = warning;
			warning = NULL;
		}
	}
	free(warning);
	free(body);
	free(name);
	free(url);
	return m;
}

int live_ecb_series(struct live *l, const char *spec, const char *pair, int32_t start_day,
		    int32_t end_day, struct fx_series *out, cJSON *warnings, char **err)
{
	memset(out, 0, sizeof(*out));
	char b[4], q[4];
	if (market_pair_parse(pair, b, q, err) < 0)
		return -1;
	const char *ccys[2] = { b, q };
	for (int i = 0; i < 2; i++)
		if (!live_ecb_currency(ccys[i]))
			return err_set(err, "ecb: the ECB publishes no euro reference rate for %s, "
				       "so it has no %s", ccys[i], pair);
	if (start_day > end_day)
		return err_set(err, "ecb: the window starts after it ends");
	pthread_mutex_lock(&l->mu);
	struct memo *legs[2] = { NULL, NULL };
	int64_t stale = 0;
	int rc = 0;
	for (int i = 0; i < 2 && rc == 0; i++) {
		if (!strcmp(ccys[i], "EUR"))
			continue;
		legs[i] = ecb_leg(l, spec, ccys[i], start_day, end_day, err);
		if (!legs[i]) {
			rc = -1;
			break;
		}
		if (legs[i]->warning && warnings)
			cJSON_AddItemToArray(warnings, cJSON_CreateString(legs[i]->warning));
		if (legs[i]->stale_ns && (!stale || legs[i]->stale_ns < stale))
			stale = legs[i]->stale_ns;
	}
	if (rc == 0) {
		struct fx_series full;
		memset(&full, 0, sizeof(full));
		live_cross(legs[0] ? &legs[0]->s : NULL, legs[1] ? &legs[1]->s : NULL, &full);
		/* only the days asked for */
		size_t lo = market_series_lower_bound(&full, start_day), k = 0;
		out->days = xcalloc(full.n ? full.n : 1, sizeof(*out->days));
		out->close = xcalloc(full.n ? full.n : 1, sizeof(*out->close));
		for (size_t i = lo; i < full.n && full.days[i] <= end_day; i++) {
			out->days[k] = full.days[i];
			out->close[k++] = full.close[i];
		}
		out->n = k;
		market_series_release(&full);
		util_strlcpy(out->pair, pair, sizeof(out->pair));
		char host[200];
		live_url_host(ecb_base(spec), host, sizeof(host));
		if (stale) {
			char ts[40];
			format_time(stale, ts, sizeof(ts));
			snprintf(out->source, sizeof(out->source), "ecb (%.80s; cached %.24s)", host, ts);
		} else {
			snprintf(out->source, sizeof(out->source), "ecb (%.100s)", host);
		}
		out->simulated = false;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* ---- RSS / Atom --------------------------------------------------------------- */

struct feed_check {
	const char *name;
};

static int feed_usable(const char *body, size_t len, void *ctx, char **why)
{
	const struct feed_check *c = ctx;
	struct news_list nl;
	if (news_parse_feed(body, len, c->name, NEWS_TIME_ALL_FROM, NEWS_TIME_ALL_TO, &nl, why) < 0)
		return -1;
	news_list_release(&nl);
	return 0;
}

static bool has_id(const struct news_item *v, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].id, id))
			return true;
	return false;
}

int live_rss_load(struct live *l, const char *spec, struct news_list *out, cJSON *warnings,
		  char **err)
{
	memset(out, 0, sizeof(*out));
	if (!live_is_news_spec(spec))
		return err_set(err, "not a live news source: %s", spec);
	struct news_list *lists = NULL;
	size_t nl = 0;
	char *first_err = NULL;
	const char *p = spec + 4;
	int ttl = live_ttl_s(false);
	while (*p) {
		size_t n;
		next_url(p, &n);
		char *url = xstrndup(p, n);
		p += n;
		if (*p == ',')
			p++;
		struct feed_check chk = { url };
		struct fetch f = {
			.label = "rss", .source = "rss", .url = url,
			.accept = "application/rss+xml, application/atom+xml, application/xml;q=0.9, "
				  "text/xml;q=0.9, */*;q=0.5",
			.what = "feed", .ttl_s = ttl, .usable = feed_usable, .uctx = &chk,
		};
		char *body = NULL, *warning = NULL, *e = NULL;
		size_t len;
		int64_t stale;
		if (live_get(l, &f, &body, &len, &stale, &warning, &e) == 0) {
			lists = xrealloc(lists, (nl + 1) * sizeof(*lists));
			if (news_parse_feed(body, len, url, NEWS_TIME_ALL_FROM, NEWS_TIME_ALL_TO,
					    &lists[nl], &e) == 0)
				nl++;
			if (warning && warnings)
				cJSON_AddItemToArray(warnings, cJSON_CreateString(warning));
		}
		if (e) {
			if (!first_err)
				first_err = xstrdup(e);
			else if (warnings)
				cJSON_AddItemToArray(warnings, cJSON_CreateString(e));
		}
		free(e);
		free(warning);
		free(body);
		free(url);
	}
	if (!nl) {
		free(lists);
		err_set(err, "%s", first_err ? first_err : "rss: no feed");
		free(first_err);
		return -1;
	}
	if (first_err && warnings) {
		char *w = xasprintf("%s; skipping that feed", first_err);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
		free(w);
	}
	free(first_err);
	/* A stable k-way merge by time; a story already taken (same id in
	 * another feed) is dropped. */
	size_t total = 0;
	for (size_t i = 0; i < nl; i++)
		total += lists[i].n;
	out->items = xcalloc(total ? total : 1, sizeof(*out->items));
	size_t *pos = xcalloc(nl, sizeof(*pos));
	for (;;) {
		size_t best = nl;
		for (size_t i = 0; i < nl; i++)
			if (pos[i] < lists[i].n &&
			    (best == nl || lists[i].items[pos[i]].published_ns <
						   lists[best].items[pos[best]].published_ns))
				best = i;
		if (best == nl)
			break;
		struct news_item *it = &lists[best].items[pos[best]++];
		if (nl > 1 && has_id(out->items, out->n, it->id))
			news_item_release(it);
		else
			out->items[out->n++] = *it;
		memset(it, 0, sizeof(*it));
	}
	for (size_t i = 0; i < nl; i++) {
		out->nbad += lists[i].nbad;
		lists[i].n = 0;
		news_list_release(&lists[i]);
	}
	free(pos);
	free(lists);
	return 0;
}
