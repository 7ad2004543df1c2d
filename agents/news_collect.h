/* Internal to the news module (agents/news.c, news_feed.c, news_sim.c):
 * the helpers the three readers share to build a news_list. Not for other
 * modules; the public API is agents/news.h. */
#ifndef MADF_NEWS_COLLECT_H
#define MADF_NEWS_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/news.h"
#include "core/util.h"

#define NS_PER_S INT64_C(1000000000)

/* Collecting a list: items, counts and the first warnings. */
struct news_collect {
	struct news_list *out;
	size_t cap;
	struct sbuf warn;
	int64_t from, to;
};

/* Starts an empty *out that keeps items published in [from, to). */
void news_collect_init(struct news_collect *c, struct news_list *out, int64_t from, int64_t to);
/* Counts a bad item and keeps the first NEWS_WARN_MAX reasons. */
void news_collect_warn(struct news_collect *c, const char *name, long line, const char *why);
/* Takes over *it (in range) or releases it and counts it (out of range). */
void news_collect_item(struct news_collect *c, struct news_item *it);
/* Sorts by time, stable, and hands the warnings over to the list. */
void news_collect_finish(struct news_collect *c);
/* Releases the list and the warnings (on an error). */
void news_collect_abort(struct news_collect *c);

/* Fills NULL strings with "" so every string of an item is allocated. */
void news_item_fill(struct news_item *it, const char *default_source);
void news_strv_add(char ***v, size_t *n, const char *s);
void news_strv_free(char **v, size_t n);
/* A printable copy of outside text for a message (caller frees). */
char *news_printable(const char *s);
/* The last component of a path (points into path). */
const char *news_path_base(const char *path);

#endif
