/* The built-in data tools, registered in the tool registry: every data
 * access of the agents goes through them.
 *   fx_rates     {"pair", "start", "end"} -> {"pair", "source", "simulated",
 *                "points": [["YYYY-MM-DD", close], ...], "first"?, "last"?
 *                (the whole series' first and last days, when it has any)}
 *   news_search  {"start", "end", "topics": [...]?, "limit"?} -> {"source",
 *                "simulated", "total", "stories": [{"id", "title",
 *                "published_at", "topics", "body"}]}
 *   news_get     {"id"} -> one story, from the whole archive (the
 *                validator's authoritative lookup)
 * Sources are env->market_source ("csv:PATH", "ecb", "ecb:BASE_URL" or
 * "sim") and env->news_source ("jsonl:PATH", "rss:PATH", "rss:URL[,URL...]"
 * or "sim"); files are read once per process and shared by every agent
 * thread; live sources go through agents/live_data.h (cache, rate limit,
 * stale fallback) and their results may carry "warnings": [text], which
 * data_call writes to the calling agent's log and, once per process, to
 * stderr. */
#ifndef MADF_DATA_TOOLS_H
#define MADF_DATA_TOOLS_H

#include <cJSON.h>

#include "agents/market.h"
#include "agents/news.h"
#include "agents/runtime.h"

/* Creates env->data and registers the tools in env->tools. */
int data_tools_register(struct agent_env *env, char **err);
void data_tools_release(struct agent_env *env);

/* Checks a source spec: "sim", "csv:PATH", "ecb", "ecb:BASE_URL",
 * "jsonl:PATH", "rss:PATH", "rss:URL[,URL...]" (see agents/live_data.h). */
int data_source_check(const char *spec, bool market, char **err);
/* True for a source read over HTTP (ecb, ecb:URL, rss:http(s)://...). */
bool data_source_is_live(const char *spec);

/* Calls a data tool for agent a (args taken over). The source spec and,
 * for files, their size and mtime are added to args, so that the cache
 * never answers for another source or an older file. */
int data_call(struct agent *a, const char *tool, cJSON *args, cJSON **res,
	      char **err);

/* data_call of fx_rates for pair from start to end (YYYY-MM-DD). */
int data_fx_rates(struct agent *a, const char *pair, const char *start, const char *end,
		  cJSON **res, char **err);

/* A tool result's points back into a series (caller releases). */
int data_points_to_series(const cJSON *res, struct fx_series *out, char **err);

/* The currency codes a pair names ("USD/JPY" -> "USD", "JPY"). */
void data_pair_ccys(const char *pair, char base[4], char quote[4]);

#endif
