/* MCP tools in the tool registry: see agents/mcp_tools.h. */
#include "agents/mcp_tools.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/mcp.h"
#include "core/util.h"
#include "core/banned.h"

struct mcp_entry {
	struct mcp_tools *mt;
	struct mcp_client *client;
	char *name, *server, *tool, *description;
	cJSON *input_schema;
};

static void mcp_entry_free(struct mcp_entry *e)
{
	free(e->name);
	free(e->server);
	free(e->tool);
	free(e->description);
	cJSON_Delete(e->input_schema);
	free(e);
}

struct mcp_srv {
	char *name;
	struct mcp_client *client; /* NULL when not started (filtered out) */
	char *error;               /* why it did not start */
};

struct mcp_tools {
	struct mcp_config cfg;
	struct mcp_srv *servers;
	size_t nservers;
	struct mcp_entry **tools;
	size_t ntools;
	atomic_long timeout_ms;
	volatile sig_atomic_t *_Atomic cancel;
};

char *mcp_tools_name(const char *server, const char *tool)
{
	char *s = xasprintf("%s.%s", server, tool);
	size_t dot = strlen(server);
	for (size_t i = 0; s[i]; i++) {
		char ch = (char)tolower((unsigned char)s[i]);
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
		      ch == '-' || (ch == '.' && i > dot)))
			ch = i == dot ? '.' : '_';
		s[i] = ch;
	}
	return s;
}

static int mcp_tool_fn(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	struct mcp_entry *e = ctx;
	struct mcp_call_opts o = { .timeout_ms = atomic_load(&e->mt->timeout_ms),
				   .cancel = atomic_load(&e->mt->cancel) };
	cJSON *res = NULL;
	if (mcp_call_tool(e->client, e->tool, args, &o, &res, err) < 0)
		return -1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError"))) {
		char *text = mcp_content_text(res);
		char *red = mcp_client_redact(e->client, text);
		err_set(err, "%s", *red ? red : "the tool reported an error (no text)");
		free(red);
		free(text);
		cJSON_Delete(res);
		return -1;
	}
	*result = res;
	return 0;
}

static void warnf(const struct mcp_tools_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(const struct mcp_tools_opts *o, const char *fmt, ...)
{
	if (!o->warn)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	o->warn(o->ctx, m);
	free(m);
}

static void add_tools(struct mcp_tools *mt, struct tools *reg, struct mcp_srv *s,
		      const cJSON *list, const struct mcp_tools_opts *o)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, list) {
		const char *tool = jstr(t, "name");
		if (!tool || !*tool) {
			warnf(o, "MCP server \"%s\": a tool without a name was skipped", s->name);
			continue;
		}
		char *name = mcp_tools_name(s->name, tool);
		bool dup = false;
		for (size_t i = 0; i < mt->ntools && !dup; i++)
			dup = !strcmp(mt->tools[i]->name, name);
		if (dup || strlen(name) > 64) {
			warnf(o, "MCP server \"%s\": tool \"%s\" skipped: %s", s->name, tool,
			      dup ? "its name clashes with another tool's" : "its name is too long");
			free(name);
			continue;
		}
		const cJSON *schema = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
		const char *desc = jstr(t, "description");
		if (!desc)
			desc = jstr(t, "title");
		struct mcp_entry *e = xcalloc(1, sizeof(*e));
		e->mt = mt;
		e->client = s->client;
		e->name = name;
		e->server = xstrdup(s->name);
		e->tool = xstrdup(tool);
		e->description = xstrdup(desc ? desc : "");
		e->input_schema = cJSON_IsObject(schema) ? cJSON_Duplicate(schema, true)
							 : cJSON_CreateObject();
		if (!cJSON_IsObject(schema))
			cJSON_AddStringToObject(e->input_schema, "type", "object");
		char *stext = cJSON_PrintUnformatted(e->input_schema);
		struct tool_def def = { .name = name, .description = e->description,
					.input_schema = stext, .kind = "mcp", .fn = mcp_tool_fn };
		char *rerr = NULL;
		int r = tools_register(reg, &def, e, &rerr);
		cJSON_free(stext);
		if (r < 0) {
			warnf(o, "MCP server \"%s\": tool \"%s\" skipped: %s", s->name, tool, rerr);
			free(rerr);
			mcp_entry_free(e);
			continue;
		}
		mt->tools = xrealloc(mt->tools, (mt->ntools + 1) * sizeof(*mt->tools));
		mt->tools[mt->ntools++] = e;
	}
}

int mcp_tools_open(struct tools *reg, const struct mcp_tools_opts *o,
		   struct mcp_tools **out, char **err)
{
	*out = NULL;
	struct mcp_tools *mt = xcalloc(1, sizeof(*mt));
	atomic_init(&mt->timeout_ms, 0);
	atomic_init(&mt->cancel, NULL);
	if (mcp_config_load(o->config_path, &mt->cfg, err) < 0) {
		free(mt);
		return -1;
	}
	if (mt->cfg.n && getenv(MCP_CHILD_ENV)) {
		warnf(o, "starting none of the %zu MCP servers of %s: this madf is itself an MCP "
		      "server started by madf (%s is set)", mt->cfg.n,
		      o->config_path ? o->config_path : ".mcp.json", MCP_CHILD_ENV);
		mcp_config_release(&mt->cfg);
		mt->cfg.n = 0;
	}
	mt->servers = xcalloc(mt->cfg.n + 1, sizeof(*mt->servers));
	mt->nservers = mt->cfg.n;
	for (size_t i = 0; i < mt->cfg.n; i++) {
		const struct mcp_server_config *sc = &mt->cfg.servers[i];
		struct mcp_srv *s = &mt->servers[i];
		s->name = xstrdup(sc->name);
		if (o->only_server && strcmp(o->only_server, sc->name))
			continue;
		s->client = mcp_client_new(sc, o->log_dir);
		struct mcp_call_opts co = { .timeout_ms = MCP_INIT_TIMEOUT_MS };
		cJSON *list = NULL;
		char *e = NULL;
		if (mcp_client_start(s->client, &co, &e) < 0 ||
		    mcp_list_tools(s->client, &co, &list, &e) < 0) {
			s->error = e;
			const char *lp = mcp_client_log_path(s->client);
			warnf(o, "MCP server \"%s\" is not available: %s%s%s%s", sc->name, e,
			      lp ? " (see " : "", lp ? lp : "", lp ? ")" : "");
			continue;
		}
		add_tools(mt, reg, s, list, o);
		cJSON_Delete(list);
	}
	*out = mt;
	return 0;
}

void mcp_tools_free(struct mcp_tools **mtp)
{
	struct mcp_tools *mt = mtp ? *mtp : NULL;
	if (!mt)
		return;
	for (size_t i = 0; i < mt->ntools; i++) {
		mcp_entry_free(mt->tools[i]);
	}
	free(mt->tools);
	for (size_t i = 0; i < mt->nservers; i++) {
		mcp_client_free(&mt->servers[i].client);
		free(mt->servers[i].name);
		free(mt->servers[i].error);
	}
	free(mt->servers);
	mcp_config_release(&mt->cfg);
	free(mt);
	*mtp = NULL;
}

void mcp_tools_set_timeout(struct mcp_tools *mt, long timeout_ms)
{
	atomic_store(&mt->timeout_ms, timeout_ms);
}

void mcp_tools_set_cancel(struct mcp_tools *mt, volatile sig_atomic_t *cancel)
{
	atomic_store(&mt->cancel, cancel);
}

size_t mcp_tools_count(const struct mcp_tools *mt)
{
	return mt ? mt->ntools : 0;
}

bool mcp_tools_get(const struct mcp_tools *mt, size_t i, struct mcp_tool_info *out)
{
	if (!mt || i >= mt->ntools)
		return false;
	const struct mcp_entry *e = mt->tools[i];
	*out = (struct mcp_tool_info){ e->name, e->server, e->tool, e->description,
				       e->input_schema };
	return true;
}

const char *mcp_tools_lookup(const struct mcp_tools *mt, const char *server,
			     const char *tool)
{
	for (size_t i = 0; mt && i < mt->ntools; i++)
		if (!strcmp(mt->tools[i]->server, server) && !strcmp(mt->tools[i]->tool, tool))
			return mt->tools[i]->name;
	return NULL;
}

bool mcp_tools_server(const struct mcp_tools *mt, const char *server, const char **error)
{
	for (size_t i = 0; mt && i < mt->nservers; i++)
		if (!strcmp(mt->servers[i].name, server)) {
			if (error)
				*error = mt->servers[i].error;
			return true;
		}
	return false;
}

const char *mcp_tools_config_path(const struct mcp_tools *mt)
{
	return mt ? mt->cfg.path : NULL;
}
