/* Response cache with a time to live per source, one file per entry:
 * <data_dir>/cache/<source>/<YYYY-MM-DD>/<16 hex of FNV-1a 64 of key>.json
 * holding {"key", "stored_at" (ISO 8601 UTC), "stored_ns", "value"}.
 * A file whose stored key differs (a hash collision) is a miss. */
#ifndef MADF_CACHE_H
#define MADF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CACHE_TTL_DEFAULT 300            /* seconds, CACHE_TTL_SECONDS unset */
#define CACHE_ENTRY_MAX ((size_t)64 << 20) /* largest entry file read */
/* cache_gc keeps the entries of the live sources "ecb" and "rss" this
 * long whatever their TTL: they are what madf falls back on offline. */
#define CACHE_FALLBACK_KEEP_S (30 * 86400)

struct cache;

/* Opens the cache under <data_dir>/cache (created on first put). *out is
 * freed with cache_free. Returns 0, or -1 with *err (caller frees). */
int cache_open(const char *data_dir, struct cache **out, char **err);
/* Frees *c and sets it to NULL. NULL-safe. */
void cache_free(struct cache **c);

/* Seconds of life for a source: "yahoo-finance" 300, "google-news" 900,
 * "reuters" 600 (seed 003); "market" 300, "news" 900, "validation" 600;
 * "ecb" 14400, "rss" 600 (their callers pass their own TTL);
 * anything else CACHE_TTL_SECONDS from the environment (a non-negative
 * integer), else CACHE_TTL_DEFAULT. */
int cache_ttl_for(const char *source);

/* [a-z0-9][a-z0-9_-]{0,63}: a source name safe in a path. */
bool cache_valid_source(const char *source);

/* 1 with *val (malloc'd, caller frees, NUL-terminated, *len bytes without
 * the NUL; len may be NULL) when an entry for key is present and younger
 * than ttl_s seconds (ttl_s < 0: cache_ttl_for(source); 0: always stale);
 * 0 when absent, stale, unreadable or a collision; -1 when source is not a
 * valid name or key is NULL. Looks in today's and yesterday's date
 * directories. A value stored as JSON comes back as compact JSON text
 * (cJSON_PrintUnformatted); one stored as a string comes back as the
 * exact bytes given to cache_put. Counts a hit or a miss. Thread-safe. */
int cache_get(struct cache *c, const char *source, const char *key, int ttl_s,
	      char **val, size_t *len);
/* cache_get as if the time were now_ns. */
int cache_get_at(struct cache *c, const char *source, const char *key,
		 int ttl_s, int64_t now_ns, char **val, size_t *len);

/* The newest entry for key whatever its TTL (for falling back on data
 * gone stale when the source cannot be reached), looking back over the
 * date directories of the last max_age_s seconds (at most 400 days) and
 * keeping only an entry stored at most max_age_s before now_ns: 1 with
 * *val and *len as cache_get, and *stored_ns (may be NULL) the time it was
 * stored; 0 when there is none; -1 when source is not a valid name or key
 * is NULL. Counts neither a hit nor a miss. Thread-safe. */
int cache_get_stale_at(struct cache *c, const char *source, const char *key,
		       int64_t max_age_s, int64_t now_ns, char **val,
		       size_t *len, int64_t *stored_ns);

/* Stores len bytes of val for key (a UTF-8 string) under today's date,
 * atomically (temporary file and rename, not fsynced); replaces an entry
 * with the same hash. The value is kept as JSON when it is strict JSON
 * other than a string (object, array, number, true, false, null), else as
 * a JSON string; bytes that are not valid UTF-8 or hold a NUL are kept as
 * base64 in "value_base64" instead of "value". Returns 0, or -1 with *err
 * (caller frees). Thread-safe. */
int cache_put(struct cache *c, const char *source, const char *key,
	      const char *val, size_t len, char **err);
/* cache_put as if the time were now_ns (stored_ns and the date dir). */
int cache_put_at(struct cache *c, const char *source, const char *key,
		 const char *val, size_t len, int64_t now_ns, char **err);

/* The file an entry for key would have at time now_ns (caller frees);
 * NULL when source is invalid or key is NULL. */
char *cache_entry_path(const struct cache *c, const char *source,
		       const char *key, int64_t now_ns);
/* FNV-1a 64 of key. */
uint64_t cache_key_hash(const char *key);

size_t cache_hits(const struct cache *c);
size_t cache_misses(const struct cache *c);

/* Removes entries at least their source's TTL old (CACHE_FALLBACK_KEEP_S
 * for "ecb" and "rss") at now_ns (by stored_ns;
 * by the file's mtime when the file cannot be read), temporary files over
 * an hour old, and date directories left empty. report(ctx, what, path)
 * for each (may be NULL); nothing is removed when dry_run. A missing cache
 * directory is not an error. Returns 0, or -1 with *err (caller frees)
 * naming the first failure (the walk goes on). */
int cache_gc(struct cache *c, int64_t now_ns, bool dry_run,
	     void (*report)(void *ctx, const char *what, const char *path),
	     void *ctx, char **err);

#endif
