/* madf tools: the tool registry from the command line, built-in and MCP
 * tools alike.
 *   madf tools list [--json]
 *   madf tools call SERVER TOOL [--args JSON] [--timeout S] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/data_tools.h"
#include "agents/mcp_tools.h"
#include "agents/runtime.h"
#include "core/json_out.h"
#include "core/mcp.h"
#include "core/message.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

static volatile sig_atomic_t tools_cancel;

static void tools_on_signal(int sig)
{
	(void)sig;
	tools_cancel = 1;
}

static void tools_warn(void *ctx, const char *msg)
{
	(void)ctx;
	cli_fail(0, "tools", "warning: %s", msg);
}

struct tools_host {
	struct agent_env env;
	struct mcp_tools *mcp;
};

static int tools_setup(struct cli *cli, struct tools_host *h, const char *only_server,
		       bool warn)
{
	char *err = NULL;
	agent_env_init(&h->env, cli->data_dir, cli->log_dir);
	h->mcp = NULL;
	struct mcp_tools_opts mo = { .config_path = cli->mcp_config, .log_dir = cli->log_dir,
				     .only_server = only_server,
				     .warn = warn ? tools_warn : NULL };
	if (cache_open(h->env.data_dir, &h->env.cache, &err) < 0 ||
	    tools_open(h->env.data_dir, h->env.log_dir, h->env.cache, &h->env.tools, &err) < 0 ||
	    data_tools_register(&h->env, &err) < 0 ||
	    mcp_tools_open(h->env.tools, &mo, &h->mcp, &err) < 0) {
		cli_fail(EXIT_FAIL, "tools", "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

static void tools_teardown(struct tools_host *h)
{
	if (h->env.tools)
		tools_save_usage(h->env.tools, NULL);
	mcp_tools_free(&h->mcp);
	data_tools_release(&h->env);
	tools_free(&h->env.tools);
	cache_free(&h->env.cache);
	agent_env_release(&h->env);
}

static const struct mcp_tool_info *find_mcp(const struct mcp_tools *mt, const char *name,
					     struct mcp_tool_info *info)
{
	for (size_t i = 0; mcp_tools_get(mt, i, info); i++)
		if (!strcmp(info->name, name))
			return info;
	return NULL;
}

/* The registry as tool-registry.json has it (sorted by name). */
static int tools_list(struct tools_host *h, struct cli *cli, bool json)
{
	char *err = NULL, *text = NULL;
	size_t len = 0;
	char *path = xasprintf("%s/tools/tool-registry.json", cli->data_dir);
	cJSON *reg = NULL;
	if (tools_write_registry(h->env.tools, &err) < 0 ||
	    util_read_file(path, (size_t)64 << 20, &text, &len, &err) < 0 ||
	    !(reg = json_parse_strict(text, len, &err))) {
		free(path);
		free(text);
		int r = cli_fail(EXIT_FAIL, "tools", "%s", err);
		free(err);
		return r;
	}
	free(path);
	free(text);
	cJSON *out = cJSON_CreateArray();
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(reg, "tools")) {
		const char *name = jstr(t, "name"), *kind = jstr(t, "kind");
		const char *desc = jstr(t, "description");
		struct mcp_tool_info info;
		const struct mcp_tool_info *mi = name ? find_mcp(h->mcp, name, &info) : NULL;
		if (!name)
			continue;
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", name);
			cJSON_AddStringToObject(o, "kind", kind ? kind : "builtin");
			cJSON_AddStringToObject(o, "server", mi ? mi->server : "madf");
			cJSON_AddStringToObject(o, "tool", mi ? mi->tool : name);
			cJSON_AddStringToObject(o, "description", desc ? desc : "");
			const cJSON *schema = cJSON_GetObjectItemCaseSensitive(t, "input_schema");
			cJSON_AddItemToObject(o, "input_schema",
					      schema ? cJSON_Duplicate(schema, true)
						     : cJSON_CreateObject());
			cJSON_AddItemToArray(out, o);
			continue;
		}
		const char *d = desc ? desc : "";
		const char *nl = strchr(d, '\n');
		char *clean_desc = util_sanitize(d, nl ? (size_t)(nl - d) : strlen(d), false);
		char *clean_srv = util_sanitize(mi ? mi->server : "madf",
						strlen(mi ? mi->server : "madf"), false);
		printf("%-32s %-7s %-12s %s\n", name, kind ? kind : "builtin", clean_srv,
		       clean_desc);
		free(clean_desc);
		free(clean_srv);
	}
	if (json) {
		char *s = json_pretty(out);
		printf("%s\n", s ? s : "[]");
		free(s);
	}
	cJSON_Delete(out);
	cJSON_Delete(reg);
	return EXIT_OK;
}

static void print_text(const char *s)
{
	char *clean = util_sanitize(s, strlen(s), true);
	size_t n = strlen(clean);
	fputs(clean, stdout);
	if (n && clean[n - 1] != '\n')
		putchar('\n');
	free(clean);
}

static int tools_call_one(struct tools_host *h, const char *server, const char *tool,
			  const cJSON *args)
{
	bool builtin = !strcmp(server, "madf") || !strcmp(server, "builtin");
	const char *name = NULL;
	if (builtin) {
		struct mcp_tool_info info;
		for (size_t i = 0; i < tools_count(h->env.tools); i++) {
			const char *n = tools_name(h->env.tools, i);
			if (!strcmp(n, tool) && !find_mcp(h->mcp, n, &info))
				name = n;
		}
		if (!name)
			return cli_fail(EXIT_FAIL, "tools", "unknown built-in tool \"%s\" (see madf "
					"tools list)", tool);
	} else {
		const char *serr = NULL;
		if (!mcp_tools_server(h->mcp, server, &serr)) {
			const char *cp = mcp_tools_config_path(h->mcp);
			return cli_fail(EXIT_FAIL, "tools", "unknown server \"%s\" (%s%s)", server,
					cp ? "not in " : "no MCP configuration: no ./.mcp.json and no "
						  "--mcp-config", cp ? cp : "");
		}
		if (serr)
			return cli_fail(EXIT_FAIL, "tools", "%s", serr);
		name = mcp_tools_lookup(h->mcp, server, tool);
		if (!name)
			return cli_fail(EXIT_FAIL, "tools", "server \"%s\" has no tool \"%s\" (see "
					"madf tools list)", server, tool);
	}
	cJSON *res = NULL;
	char *err = NULL;
	if (tools_call(h->env.tools, "operator", name, args, &res, &err) < 0) {
		int r = cli_fail(EXIT_FAIL, "tools", "%s", err ? err : "failed");
		free(err);
		return r;
	}
	if (builtin) {
		char *s = json_pretty(res);
		print_text(s ? s : "null");
		free(s);
	} else {
		char *text = mcp_content_text(res);
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
		if (*text || !sc) {
			print_text(text);
		} else {
			char *s = json_pretty(sc);
			print_text(s ? s : "null");
			free(s);
		}
		free(text);
	}
	cJSON_Delete(res);
	return EXIT_OK;
}

static const struct cli_cmd tools_call_entry, tools_list_entry;

static int tools_call_cmd(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "tools", &tools_call_entry, 0 };
	const char *pos[2] = { NULL, NULL }, *args_text = "{}", *name, *val;
	size_t npos = 0;
	double timeout_s = 0;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (npos >= 2)
				return cli_fail(EXIT_USAGE, "tools", "call takes SERVER TOOL only "
						"(arguments go in --args JSON)");
			pos[npos++] = val;
		} else if (!strcmp(name, "--args")) {
			args_text = val;
		} else if (cli_double("tools", name, val, 0.001, 86400, &timeout_s) < 0) {
			return EXIT_USAGE;
		}
	}
	if (r < 0)
		return EXIT_USAGE;
	if (npos < 2)
		return cli_usage_fail(&tools_call_entry, "tools", "tools call");
	char *perr = NULL;
	cJSON *args = json_parse_strict(args_text, strlen(args_text), &perr);
	if (!cJSON_IsObject(args)) {
		r = cli_fail(EXIT_USAGE, "tools", "--args: %s", perr ? perr : "not a JSON object");
		free(perr);
		cJSON_Delete(args);
		return r;
	}
	bool builtin = !strcmp(pos[0], "madf") || !strcmp(pos[0], "builtin");
	struct tools_host h;
	memset(&h, 0, sizeof(h));
	struct sigaction sa = { 0 }, old_int, old_term;
	sa.sa_handler = tools_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (tools_setup(cli, &h, builtin ? "" : pos[0], false) < 0) {
		r = EXIT_FAIL;
	} else {
		mcp_tools_set_timeout(h.mcp, (long)(timeout_s * 1000 + 0.5));
		mcp_tools_set_cancel(h.mcp, &tools_cancel);
		r = tools_call_one(&h, pos[0], pos[1], args);
	}
	tools_teardown(&h);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	cJSON_Delete(args);
	return r;
}

static int tools_list_cmd(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "tools", &tools_list_entry, 0 };
	const char *name, *val;
	bool json = false;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "tools", "list takes no arguments");
		json = true;
	}
	if (r < 0)
		return EXIT_USAGE;
	struct tools_host h;
	memset(&h, 0, sizeof(h));
	r = tools_setup(cli, &h, NULL, true) < 0 ? EXIT_FAIL : tools_list(&h, cli, json);
	tools_teardown(&h);
	return r;
}

static const struct cli_opt tools_list_options[] = {
	{ .name = "--json",
	  .help = "print an array of {name, kind, server, tool, description, "
		  "input_schema}" },
	{ 0 },
};

static const struct cli_cmd tools_list_entry = {
	.name = "list",
	.opts = tools_list_options,
	.summary = "every tool of the registry, built-in and MCP (writes "
		   "data/tools/tool-registry.json)",
	.run = tools_list_cmd,
};

static const struct cli_opt tools_call_options[] = {
	{ .name = "--args", .arg = "JSON", .help = "the arguments object (default: {})" },
	{ .name = "--timeout", .arg = "S",
	  .help = "seconds to wait for the answer (default 60)" },
	{ 0 },
};

static const struct cli_cmd tools_call_entry = {
	.name = "call",
	.args = "SERVER TOOL",
	.opts = tools_call_options,
	.summary = "call one tool (SERVER madf or builtin: a built-in one) and print its "
		   "result",
	.run = tools_call_cmd,
};

static const struct cli_cmd *const tools_subs[] = { &tools_list_entry, &tools_call_entry, NULL };

const struct cli_cmd cmd_tools_entry = {
	.name = "tools",
	.summary = "list the tools (built-in and MCP servers' from .mcp.json) or call one",
	.subs = tools_subs,
};
