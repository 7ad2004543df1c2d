#include "core/cache.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define NS INT64_C(1000000000)
#define DAY_NS (86400 * NS)
#define TMP_MAX_AGE_NS (3600 * NS)

struct cache {
	char *root; /* <data_dir>/cache */
	atomic_size_t hits, misses;
};

static const struct {
	const char *source;
	int ttl;
} ttls[] = {
	{ "yahoo-finance", 300 }, { "google-news", 900 }, { "reuters", 600 },
	{ "market", 300 },	  { "news", 900 },	  { "validation", 600 },
	{ "ecb", 14400 },	  { "rss", 600 },
};

/* How long cache_gc keeps a source's entries. */
static int gc_keep_s(const char *source)
{
	if (!strcmp(source, "ecb") || !strcmp(source, "rss"))
		return CACHE_FALLBACK_KEEP_S;
	return cache_ttl_for(source);
}

int cache_open(const char *data_dir, struct cache **out, char **err)
{
	*out = NULL;
	if (!data_dir || !*data_dir)
		return err_set(err, "cache: no data directory");
	struct cache *c = xcalloc(1, sizeof(*c));
	c->root = xasprintf("%s/cache", data_dir);
	atomic_init(&c->hits, 0);
	atomic_init(&c->misses, 0);
	*out = c;
	return 0;
}

void cache_free(struct cache **cp)
{
	if (!cp || !*cp)
		return;
	free((*cp)->root);
	free(*cp);
	*cp = NULL;
}

int cache_ttl_for(const char *source)
{
	for (size_t i = 0; source && i < ARRAY_SIZE(ttls); i++)
		if (!strcmp(source, ttls[i].source))
			return ttls[i].ttl;
	const char *e = getenv("CACHE_TTL_SECONDS");
	if (e && *e) {
		char *end;
		errno = 0;
		long v = strtol(e, &end, 10);
		if (!errno && !*end && v >= 0 && v <= INT32_MAX)
			return (int)v;
	}
	return CACHE_TTL_DEFAULT;
}

bool cache_valid_source(const char *source)
{
	return util_valid_agent_name(source);
}

uint64_t cache_key_hash(const char *key)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

char *cache_entry_path(const struct cache *c, const char *source,
		       const char *key, int64_t now_ns)
{
	if (!c || !key || !cache_valid_source(source))
		return NULL;
	char date[16];
	util_date(now_ns, date, sizeof(date));
	return xasprintf("%s/%s/%s/%016llx.json", c->root, source, date,
			 (unsigned long long)cache_key_hash(key));
}

size_t cache_hits(const struct cache *c)
{
	return c ? atomic_load(&c->hits) : 0;
}

size_t cache_misses(const struct cache *c)
{
	return c ? atomic_load(&c->misses) : 0;
}

/* Well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF)
 * without NUL bytes. */
static bool utf8_text(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		unsigned c = p[i];
		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t n;
		unsigned lo = 0x80, hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
		} else
			return false;
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			unsigned d = p[i + k];
			if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf))
				return false;
		}
		i += n + 1;
	}
	return true;
}

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *base64_encode(const unsigned char *p, size_t len)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		sbuf_addch(&b, b64_alphabet[(v >> 18) & 63]);
		sbuf_addch(&b, b64_alphabet[(v >> 12) & 63]);
		sbuf_addch(&b, i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=');
		sbuf_addch(&b, i + 2 < len ? b64_alphabet[v & 63] : '=');
	}
	return sbuf_detach(&b);
}

static int b64_value(char ch)
{
	const char *q = ch ? strchr(b64_alphabet, ch) : NULL;
	return q ? (int)(q - b64_alphabet) : -1;
}

/* Strict decoding (length a multiple of 4, padding only at the end); 0 or
 * -1. *out is NUL-terminated. */
static int base64_decode(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s);
	if (n % 4)
		return -1;
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			v[k] = pad ? -1 : b64_value(s[i + k]);
			if (v[k] < 0) {
				sbuf_release(&b);
				return -1;
			}
		}
		uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
			     (uint32_t)v[2] << 6 | (uint32_t)v[3];
		unsigned char bytes[3] = { (unsigned char)(x >> 16),
					   (unsigned char)(x >> 8),
					   (unsigned char)x };
		sbuf_add(&b, bytes, (size_t)(3 - pad));
	}
	*len = b.len;
	*out = sbuf_detach(&b);
	return 0;
}

/* The entry in file path: 1 and *doc when it parses and holds key; 0
 * otherwise (absent, unreadable, corrupt, another key). */
static int read_entry(const char *path, const char *key, cJSON **doc)
{
	char *buf = NULL, *err = NULL;
	size_t n;
	if (util_read_file(path, CACHE_ENTRY_MAX, &buf, &n, &err) < 0) {
		free(err);
		return 0;
	}
	cJSON *j = json_parse_strict(buf, n, &err);
	free(buf);
	free(err);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "key");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "stored_ns");
	if (!cJSON_IsObject(j) || !cJSON_IsNumber(t) ||
	    (key && !(cJSON_IsString(k) && !strcmp(k->valuestring, key)))) {
		cJSON_Delete(j);
		return 0;
	}
	*doc = j;
	return 1;
}

static int entry_value(const cJSON *doc, char **val, size_t *len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "value");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(doc, "value_base64");
	size_t n;
	if (cJSON_IsString(b))
		return base64_decode(b->valuestring, val, len ? len : &n);
	if (!v)
		return -1;
	char *s;
	if (cJSON_IsString(v)) {
		s = xstrdup(v->valuestring);
	} else {
		char *p = cJSON_PrintUnformatted(v);
		if (!p)
			return -1;
		s = xstrdup(p);
		cJSON_free(p);
	}
	if (len)
		*len = strlen(s);
	*val = s;
	return 0;
}

/* The entry of key in the date directory of day_ns: -1 when there is none,
 * 1 (with *val) when it was stored at most max_age_ns before now_ns, else 0.
 * *stored_out gets when it was stored. */
static int lookup_day(struct cache *c, const char *source, const char *key, int64_t day_ns,
		      int64_t now_ns, int64_t max_age_ns, char **val, size_t *len,
		      int64_t *stored_out)
{
	char *path = cache_entry_path(c, source, key, day_ns);
	cJSON *doc = NULL;
	int found = read_entry(path, key, &doc);
	free(path);
	if (!found)
		return -1;
	int64_t stored = (int64_t)cJSON_GetObjectItemCaseSensitive(doc, "stored_ns")->valuedouble;
	int r = now_ns - stored <= max_age_ns ? entry_value(doc, val, len) : -1;
	cJSON_Delete(doc);
	if (stored_out)
		*stored_out = stored;
	return r == 0;
}

int cache_get_at(struct cache *c, const char *source, const char *key,
		 int ttl_s, int64_t now_ns, char **val, size_t *len)
{
	*val = NULL;
	if (len)
		*len = 0;
	if (!c || !key || !cache_valid_source(source))
		return -1;
	if (ttl_s < 0)
		ttl_s = cache_ttl_for(source);
	for (int back = 0; back < 2 && ttl_s > 0; back++) {
		if (lookup_day(c, source, key, now_ns - back * DAY_NS, now_ns,
			       (int64_t)ttl_s * NS - 1, val, len, NULL) == 1) {
			atomic_fetch_add(&c->hits, 1);
			return 1;
		}
	}
	atomic_fetch_add(&c->misses, 1);
	return 0;
}

int cache_get_stale_at(struct cache *c, const char *source, const char *key,
		       int64_t max_age_s, int64_t now_ns, char **val,
		       size_t *len, int64_t *stored_ns)
{
	*val = NULL;
	if (len)
		*len = 0;
	if (stored_ns)
		*stored_ns = 0;
	if (!c || !key || !cache_valid_source(source))
		return -1;
	if (max_age_s < 0)
		return 0;
	int64_t days = max_age_s / 86400 + 1;
	if (days > 400)
		days = 400;
	/* A put replaces the entry of its own date only, so the first date
	 * directory holding one (newest first) holds the newest entry. */
	for (int64_t back = 0; back <= days; back++) {
		int64_t stored = 0;
		int r = lookup_day(c, source, key, now_ns - back * DAY_NS, now_ns,
				   max_age_s * NS, val, len, &stored);
		if (r < 0)
			continue;
		if (r == 1 && stored_ns)
			*stored_ns = stored;
		return r;
	}
	return 0;
}

int cache_get(struct cache *c, const char *source, const char *key, int ttl_s,
	      char **val, size_t *len)
{
	return cache_get_at(c, source, key, ttl_s, util_now_ns(), val, len);
}

static cJSON *value_item(const char *val, size_t len, bool *b64_out)
{
	*b64_out = false;
	if (!utf8_text(val, len)) {
		*b64_out = true;
		char *enc = base64_encode((const unsigned char *)val, len);
		cJSON *s = cJSON_CreateString(enc);
		free(enc);
		return s;
	}
	char *err = NULL;
	cJSON *j = len ? json_parse_strict(val, len, &err) : NULL;
	free(err);
	if (j && !cJSON_IsString(j))
		return j;
	cJSON_Delete(j);
	char *s = xstrndup(val, len);
	cJSON *r = cJSON_CreateString(s);
	free(s);
	return r;
}

int cache_put_at(struct cache *c, const char *source, const char *key,
		 const char *val, size_t len, int64_t now_ns, char **err)
{
	if (!c)
		return err_set(err, "cache: not open");
	if (!cache_valid_source(source))
		return err_set(err, "cache: invalid source name");
	if (!key || !utf8_text(key, strlen(key)))
		return err_set(err, "cache: the key must be UTF-8 text");
	if (!val && len)
		return err_set(err, "cache: no value");
	char *path = cache_entry_path(c, source, key, now_ns);
	char stamp[64], nsbuf[32];
	util_iso8601(now_ns, stamp, sizeof(stamp));
	snprintf(nsbuf, sizeof(nsbuf), "%lld", (long long)now_ns);
	bool b64;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "key", key);
	cJSON_AddStringToObject(doc, "stored_at", stamp);
	cJSON_AddRawToObject(doc, "stored_ns", nsbuf);
	cJSON *v = value_item(val ? val : "", len, &b64);
	cJSON_AddItemToObject(doc, b64 ? "value_base64" : "value", v);
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!text) {
		free(path);
		return err_set(err, "cache: out of memory");
	}
	char *dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	int r = -1;
	char *e = NULL;
	/* Twice: cache_gc may remove an empty date directory in between. */
	for (int attempt = 0; attempt < 2 && r < 0; attempt++) {
		free(e);
		e = NULL;
		if (util_mkdirs(dir, &e) < 0)
			break;
		r = util_write_file_atomic(path, text, strlen(text), false, &e);
	}
	if (r < 0)
		err_set(err, "cache: %s", e ? e : "cannot write");
	free(e);
	cJSON_free(text);
	free(dir);
	free(path);
	return r;
}

int cache_put(struct cache *c, const char *source, const char *key,
	      const char *val, size_t len, char **err)
{
	return cache_put_at(c, source, key, val, len, util_now_ns(), err);
}

struct gc_walk {
	int64_t now;
	bool dry_run;
	void (*report)(void *ctx, const char *what, const char *path);
	void *ctx;
	char **err;
	int r;
};

static void gc_remove(struct gc_walk *g, const char *what, const char *path,
		      bool dir)
{
	if (g->report)
		g->report(g->ctx, what, path);
	if (g->dry_run)
		return;
	if ((dir ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT &&
	    errno != ENOTEMPTY && errno != EEXIST && g->r == 0)
		g->r = err_set(g->err, "cannot remove %s: %s", path,
			       strerror(errno));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static void gc_date_dir(struct gc_walk *g, const char *dir, int ttl)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t left = 0;
	char what[80];
	snprintf(what, sizeof(what), "cache entry over its TTL (%d s)", ttl);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
			left++;
			free(p);
			continue;
		}
		int64_t mtime = (int64_t)st.st_mtim.tv_sec * NS + st.st_mtim.tv_nsec;
		if (has_suffix(de->d_name, ".tmp")) {
			if (g->now - mtime > TMP_MAX_AGE_NS)
				gc_remove(g, "stale temporary file", p, false);
			else
				left++;
		} else if (has_suffix(de->d_name, ".json")) {
			cJSON *doc = NULL;
			int64_t stored = mtime;
			if (read_entry(p, NULL, &doc))
				stored = (int64_t)cJSON_GetObjectItemCaseSensitive(
						 doc, "stored_ns")->valuedouble;
			cJSON_Delete(doc);
			if (g->now - stored >= (int64_t)ttl * NS)
				gc_remove(g, what, p, false);
			else
				left++;
		} else {
			left++;
		}
		free(p);
	}
	closedir(d);
	if (!left)
		gc_remove(g, "empty cache date directory", dir, true);
}

int cache_gc(struct cache *c, int64_t now_ns, bool dry_run,
	     void (*report)(void *ctx, const char *what, const char *path),
	     void *ctx, char **err)
{
	if (!c)
		return err_set(err, "cache: not open");
	struct gc_walk g = { now_ns, dry_run, report, ctx, err, 0 };
	DIR *d = opendir(c->root);
	if (!d)
		return errno == ENOENT ? 0
				       : err_set(err, "cannot open %s: %s",
						 c->root, strerror(errno));
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!cache_valid_source(de->d_name))
			continue;
		int ttl = gc_keep_s(de->d_name);
		char *sdir = xasprintf("%s/%s", c->root, de->d_name);
		DIR *sd = opendir(sdir);
		struct dirent *dd;
		while (sd && (dd = readdir(sd))) {
			if (dd->d_name[0] == '.')
				continue;
			char *ddir = xasprintf("%s/%s", sdir, dd->d_name);
			struct stat st;
			if (lstat(ddir, &st) == 0 && S_ISDIR(st.st_mode))
				gc_date_dir(&g, ddir, ttl);
			free(ddir);
		}
		if (sd)
			closedir(sd);
		free(sdir);
	}
	closedir(d);
	return g.r;
}
