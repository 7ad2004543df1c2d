/* The tool registry (seed 003 section 6, "MCP Tool Registry"): the one
 * place every data access goes through. Built-in tools now, LLM and MCP
 * tools later. It caches results, measures latency, counts calls, errors
 * and cache hits per tool and per agent, writes usage lines, the registry
 * and the per-agent essential tool lists. */
#ifndef MADF_TOOLS_H
#define MADF_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "core/cache.h"

#define TOOLS_RESERVOIR 1000 /* latency samples kept in usage.json */

/* A tool: on success returns 0 and a new *result (owned by the caller of
 * tools_call); on failure -1 and *err (a new string) or nothing. args is
 * borrowed and never NULL (an empty object when the caller gave none). */
typedef int (*tool_fn)(void *ctx, const cJSON *args, cJSON **result,
		       char **err);

struct tool_def {
	const char *name;         /* [a-z0-9_.-]{1,64} */
	const char *description;  /* NULL: "" */
	const char *input_schema; /* JSON Schema text (an object), as MCP's
				     inputSchema; NULL: {"type":"object"} */
	const char *cache_source; /* cache source name, NULL = never cached */
	const char *kind;         /* "builtin" now; "mcp", "llm" later; NULL:
				     "builtin" */
	tool_fn fn;
};

struct tools;

/* Opens a registry whose files live in <data_dir>/tools/ (tool-registry.
 * json, <agent>/essential-tools.json, usage.json) and whose usage lines go
 * to <log_dir>/tools/usage-<YYYY-MM-DD>.jsonl. cache is borrowed (must
 * outlive the registry) and may be NULL (nothing cached). *out is freed
 * with tools_free. Returns 0, or -1 with *err (caller frees). */
int tools_open(const char *data_dir, const char *log_dir, struct cache *cache,
	       struct tools **out, char **err);
/* Frees *t (not the cache) and sets it to NULL. NULL-safe. */
void tools_free(struct tools **t);

/* Registers a tool: def's strings are copied, ctx is borrowed and passed
 * to fn on every call. Registering an existing name replaces its
 * definition and ctx and keeps its counters. Refuses a bad name, a NULL
 * fn, a schema that is not a strict JSON object, a bad cache source.
 * Returns 0, or -1 with *err (caller frees). Thread-safe. */
int tools_register(struct tools *t, const struct tool_def *def, void *ctx,
		   char **err);

/* Calls tool name on behalf of agent (a valid agent name) with args
 * (borrowed; NULL: {}). With a cache source (and a cache), looks up the
 * key "<name> <canonical args>" (object keys sorted at every level,
 * unformatted) first and returns a copy on a hit; on a miss calls fn and
 * stores the result. Latency is measured on the monotonic clock; calls,
 * errors and cache hits are counted per tool and per agent; one usage
 * line {"ts","agent","tool","latency_ms","cache_hit","ok","error"} is
 * appended (the error text redacted). Returns 0 and a new *result (caller
 * cJSON_Deletes), or -1 with *err (caller frees; redacted): "unknown tool
 * NAME", "NAME: <the tool's error>", "NAME: returned no result".
 * Thread-safe; fn is called without the registry lock held. */
int tools_call(struct tools *t, const char *agent, const char *name,
	       const cJSON *args, cJSON **result, char **err);

/* Writes <data_dir>/tools/tool-registry.json:
 * {"generated_at","tools":[{"name","description","kind","input_schema":
 * {...},"cache_source" (null when never cached)}]} sorted by name. */
int tools_write_registry(struct tools *t, char **err);

/* Writes <data_dir>/tools/<agent>/essential-tools.json {"agent","tools":
 * [...]} (names in the given order, repeats dropped). Names are checked
 * for syntax only, so a list may name a tool registered later. */
int tools_set_essential(struct tools *t, const char *agent,
			const char *const *names, size_t n, char **err);

/* Usage so far in this process: {"tools":{"<name>":{"calls","errors",
 * "cache_hits","latency_p50_ms","latency_p95_ms","by_agent":{"<agent>":
 * calls}}}} (percentiles by nearest rank over every sample; 0 before the
 * first call). A new object; the caller cJSON_Deletes it. */
cJSON *tools_usage(struct tools *t);

/* Adds this process's usage since the last save to <data_dir>/tools/
 * usage.json: {"updated_at","tools":{"<name>":{"calls","errors",
 * "cache_hits","latency_p50_ms","latency_p95_ms","by_agent":{...},
 * "samples":[the last TOOLS_RESERVOIR latencies in ms]}}}, totals across
 * runs, percentiles recomputed from the samples. Read-merge-write is held
 * under an flock on usage.json.lock, so processes may save concurrently;
 * the file is replaced atomically. A corrupt usage.json is an error (it is
 * left alone). Returns 0, or -1 with *err (caller frees). */
int tools_save_usage(struct tools *t, char **err);
/* Whether calls were made since the last tools_save_usage. Thread-safe. */
bool tools_unsaved(struct tools *t);

/* Number of registered tools and the name of the i-th in registration
 * order (borrowed; valid until tools_free; NULL when i is out of range). */
size_t tools_count(const struct tools *t);
const char *tools_name(const struct tools *t, size_t i);

/* The description and input schema (JSON text) of tool name, as new
 * strings (caller frees; the defaults "" and {"type":"object"} when the
 * tool gave none), for building a model's tool list. Returns 0, or -1
 * with *err for an unknown tool. Thread-safe. */
int tools_describe(struct tools *t, const char *name, char **description,
		   char **input_schema, char **err);

/* Canonical text of a JSON value: object keys sorted (byte order) at
 * every level, no whitespace. Caller frees; NULL when out of memory. */
char *tools_canonical_json(const cJSON *j);

#endif
