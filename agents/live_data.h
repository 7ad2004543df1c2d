/* Live data over HTTP (libcurl): the ECB's euro reference rates and
 * RSS/Atom feeds, fetched through the response cache with a TTL per
 * source, at most one request per host every MADF_HTTP_MIN_INTERVAL_MS,
 * honouring 429/503 Retry-After; when a source cannot be reached (or
 * answers an error or something unparsable) the newest cached answer is
 * used, however old, with a warning that names the source, the reason and
 * the age of the data.
 *
 * Sources:
 *   market "ecb"            https://data-api.ecb.europa.eu/service/data/EXR
 *   market "ecb:BASE_URL"   another base URL (a mirror, a test server)
 *   news   "rss:URL[,URL]"  one or more http(s) RSS 2.0 / Atom 1.0 feeds
 *
 * Environment (all optional):
 *   MADF_ECB_TTL_S            seconds an ECB answer is fresh (14400)
 *   MADF_RSS_TTL_S            seconds a feed is fresh (600)
 *   MADF_HTTP_MIN_INTERVAL_MS least time between two requests to one host
 *                             within a process (1000)
 *   MADF_HTTP_TIMEOUT_MS      whole request (20000); connect: a third
 *   MADF_HTTP_RETRY_MAX_S     longest Retry-After waited for (30); a
 *                             longer one gives up and falls back
 *   MADF_LIVE_STALE_MAX_S     oldest cached answer used offline (30 days)
 */
#ifndef MADF_LIVE_DATA_H
#define MADF_LIVE_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "agents/market.h"
#include "agents/news.h"
#include "core/cache.h"

#define LIVE_ECB_DEFAULT_BASE "https://data-api.ecb.europa.eu/service/data/EXR"
#define LIVE_BODY_MAX ((size_t)64 << 20)  /* largest answer accepted */
#define LIVE_ECB_TTL_DEFAULT 14400
#define LIVE_RSS_TTL_DEFAULT 600
#define LIVE_MIN_INTERVAL_MS_DEFAULT 1000
#define LIVE_TIMEOUT_MS_DEFAULT 20000
#define LIVE_RETRY_MAX_S_DEFAULT 30
#define LIVE_STALE_MAX_S_DEFAULT (30 * 86400)

struct live;

/* cache is borrowed (may be NULL: nothing is cached, nothing to fall back
 * on). Never fails. */
struct live *live_new(struct cache *cache);
void live_free(struct live **l);

/* "ecb" or "ecb:..." */
bool live_is_market_spec(const char *spec);
/* "rss:http://..." or "rss:https://..." */
bool live_is_news_spec(const char *spec);
/* Checks a live spec (URLs http or https, a host, no spaces or control
 * characters). Returns 0 or -1 with *err. */
int live_check_spec(const char *spec, bool market, char **err);
/* Seconds a live source's answers stay fresh (from the environment). */
int live_ttl_s(bool market);

/* "host[:port]" of an http(s) URL into buf; "?" when there is none. */
void live_url_host(const char *url, char *buf, size_t size);

/* True for a currency the ECB publishes (or published) a euro reference
 * rate for, and EUR itself. */
bool live_ecb_currency(const char *code);

/* The EUR reference rates of ccy (units of ccy per euro) from an ECB
 * "csvdata" answer (header KEY,FREQ,CURRENCY,CURRENCY_DENOM,EXR_TYPE,
 * EXR_SUFFIX,TIME_PERIOD,OBS_VALUE,...; RFC 4180 quoting). Rows of other
 * series are ignored, as are empty or NaN values. An empty answer is no
 * rows. name is used in messages. Returns 0 with out->days/close (sorted,
 * caller releases with market_series_release), or -1 with *err naming the
 * line. */
int live_ecb_parse_csv(const char *data, size_t len, const char *name,
		       const char *ccy, struct fx_series *out, char **err);

/* pair's closes from two legs in units per euro (NULL leg: EUR itself, 1
 * every day): close = quote per euro / base per euro, on the days both
 * legs have. */
void live_cross(const struct fx_series *base_leg, const struct fx_series *quote_leg,
		struct fx_series *out);

/* The series of pair over [start_day, end_day] from the ECB source spec.
 * Warnings (stale data used) are appended to warnings as strings (may be
 * NULL). Returns 0 with *out (caller releases), or -1 with *err: a
 * currency the ECB does not publish, or no answer and nothing cached.
 * Thread-safe. */
int live_ecb_series(struct live *l, const char *spec, const char *pair,
		    int32_t start_day, int32_t end_day, struct fx_series *out,
		    cJSON *warnings, char **err);

/* Every story of the feeds of an "rss:URL[,URL...]" spec, merged and
 * sorted by time. A feed that fails with nothing cached is skipped with a
 * warning when another one gave stories; when none did, -1 with *err.
 * Thread-safe. */
int live_rss_load(struct live *l, const char *spec, struct news_list *out,
		  cJSON *warnings, char **err);

/* Parses a Retry-After value (delta seconds or an HTTP date) relative to
 * now_ns: 0 with *seconds (>= 0), or -1. */
int live_parse_retry_after(const char *v, int64_t now_ns, int64_t *seconds);

#endif
