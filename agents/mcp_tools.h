/* MCP tools in the tool registry: every server of the MCP configuration
 * (.mcp.json) is started, its tools listed and registered as
 * "SERVER.TOOL" (kind "mcp"; the name lower-cased, any character outside
 * [a-z0-9_.-] and any '.' in SERVER replaced by '_'), beside the built-in ones and with the same
 * usage analytics. A call goes to the server's tools/call; a result with
 * isError is the tool's error (its text). */
#ifndef MADF_MCP_TOOLS_H
#define MADF_MCP_TOOLS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "core/tools.h"

struct mcp_tools;

struct mcp_tools_opts {
	const char *config_path;  /* --mcp-config; NULL: ./.mcp.json when there is one */
	const char *log_dir;      /* servers' logs under <log_dir>/mcp/ */
	const char *only_server;  /* start this server only; NULL: all */
	/* A server that cannot start, a tool that cannot be registered. */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};

/* Loads the configuration and registers the tools of every server that
 * starts. A malformed configuration (or a missing --mcp-config file) is an
 * error; a server that fails is a warning (warn and the server's log) and
 * adds no tools. *out is freed with mcp_tools_free (after the registry's
 * last call; before tools_free). Returns 0, or -1 with *err. */
int mcp_tools_open(struct tools *reg, const struct mcp_tools_opts *o,
		   struct mcp_tools **out, char **err);
/* Stops every server. NULL-safe; sets *mt to NULL. */
void mcp_tools_free(struct mcp_tools **mt);

/* Per-call timeout of later calls (0: MCP_DEFAULT_TIMEOUT_MS) and a flag
 * that cancels them (may be NULL). */
void mcp_tools_set_timeout(struct mcp_tools *mt, long timeout_ms);
void mcp_tools_set_cancel(struct mcp_tools *mt, volatile sig_atomic_t *cancel);

struct mcp_tool_info {
	const char *name;         /* in the registry */
	const char *server;       /* as configured */
	const char *tool;         /* as the server names it */
	const char *description;
	const cJSON *input_schema;
};
size_t mcp_tools_count(const struct mcp_tools *mt);
/* The i-th tool (borrowed, valid until mcp_tools_free); false when out of
 * range. */
bool mcp_tools_get(const struct mcp_tools *mt, size_t i, struct mcp_tool_info *out);
/* The registry name of server's tool (as the server names it), or NULL. */
const char *mcp_tools_lookup(const struct mcp_tools *mt, const char *server,
			     const char *tool);
/* Whether server is configured; *error (borrowed) is why it did not start,
 * NULL when it did. */
bool mcp_tools_server(const struct mcp_tools *mt, const char *server,
		      const char **error);
/* The configuration file read (borrowed), NULL when none. */
const char *mcp_tools_config_path(const struct mcp_tools *mt);

/* A registry name for SERVER.TOOL (caller frees). */
char *mcp_tools_name(const char *server, const char *tool);

#endif
