/* The MCP client's configuration (.mcp.json): see core/mcp.h. */
#include "core/mcp_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define MCP_CONFIG_MAX ((size_t)1 << 20)

/* ---- configuration ---------------------------------------------------- */

static bool var_start(char ch)
{
	return isalpha((unsigned char)ch) || ch == '_';
}

static bool var_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

char *mcp_expand(const char *s, char **err)
{
	struct sbuf b;
	sbuf_init(&b);
	while (*s) {
		const char *p = strstr(s, "${");
		if (!p) {
			sbuf_addstr(&b, s);
			break;
		}
		sbuf_add(&b, s, (size_t)(p - s));
		const char *name = p + 2, *q = name;
		if (!var_start(*q)) {
			sbuf_release(&b);
			err_set(err, "\"${\" not followed by a variable name");
			return NULL;
		}
		while (var_char(*q))
			q++;
		size_t nlen = (size_t)(q - name);
		const char *def = NULL, *end;
		if (q[0] == ':' && q[1] == '-') {
			def = q + 2;
			end = strchr(def, '}');
		} else {
			end = *q == '}' ? q : NULL;
		}
		if (!end) {
			sbuf_release(&b);
			err_set(err, "unterminated ${%.*s", (int)nlen, name);
			return NULL;
		}
		char *var = xstrndup(name, nlen);
		const char *val = getenv(var);
		if (val && (*val || !def)) {
			sbuf_addstr(&b, val);
		} else if (def) {
			sbuf_add(&b, def, (size_t)(end - def));
		} else {
			err_set(err, "${%s} is not set (and has no default)", var);
			free(var);
			sbuf_release(&b);
			return NULL;
		}
		free(var);
		s = end + 1;
	}
	return sbuf_detach(&b);
}

void mcp_server_config_release(struct mcp_server_config *s)
{
	free(s->name);
	free(s->command);
	for (size_t i = 0; i < s->nargs; i++)
		free(s->args[i]);
	free(s->args);
	for (size_t i = 0; i < s->nenv; i++)
		free(s->env[i]);
	free(s->env);
	free(s->url);
	for (size_t i = 0; i < s->nheaders; i++)
		free(s->headers[i]);
	free(s->headers);
	memset(s, 0, sizeof(*s));
}

void mcp_server_config_copy(struct mcp_server_config *d, const struct mcp_server_config *s)
{
	memset(d, 0, sizeof(*d));
	d->name = xstrdup(s->name);
	d->transport = s->transport;
	d->command = s->command ? xstrdup(s->command) : NULL;
	d->url = s->url ? xstrdup(s->url) : NULL;
	d->nargs = s->nargs;
	d->args = xcalloc(s->nargs + 1, sizeof(char *));
	for (size_t i = 0; i < s->nargs; i++)
		d->args[i] = xstrdup(s->args[i]);
	d->nenv = s->nenv;
	d->env = xcalloc(s->nenv + 1, sizeof(char *));
	for (size_t i = 0; i < s->nenv; i++)
		d->env[i] = xstrdup(s->env[i]);
	d->nheaders = s->nheaders;
	d->headers = xcalloc(s->nheaders + 1, sizeof(char *));
	for (size_t i = 0; i < s->nheaders; i++)
		d->headers[i] = xstrdup(s->headers[i]);
}

void mcp_config_release(struct mcp_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		mcp_server_config_release(&c->servers[i]);
	free(c->servers);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

const struct mcp_server_config *mcp_config_find(const struct mcp_config *c,
						const char *name)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (!strcmp(c->servers[i].name, name))
			return &c->servers[i];
	return NULL;
}

/* A string field, expanded; *out NULL when absent. */
static int cfg_string(const cJSON *o, const char *key, const char *where, char **out,
		      char **err)
{
	*out = NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return 0;
	if (!cJSON_IsString(v))
		return err_set(err, "%s: \"%s\" must be a string", where, key);
	char *e = NULL;
	*out = mcp_expand(v->valuestring, &e);
	if (!*out) {
		err_set(err, "%s: \"%s\": %s", where, key, e);
		free(e);
		return -1;
	}
	return 0;
}

static bool header_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

/* An object of strings: "NAME=value" (env) or "Name: value" (headers). */
static int cfg_map(const cJSON *o, const char *key, const char *where, bool headers,
		   char ***out, size_t *n, char **err)
{
	*out = xcalloc(1, sizeof(char *));
	*n = 0;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!m)
		return 0;
	if (!cJSON_IsObject(m))
		return err_set(err, "%s: \"%s\" must be an object of strings", where, key);
	size_t cnt = 0;
	for (const cJSON *it = m->child; it; it = it->next)
		cnt++;
	*out = xrealloc(*out, (cnt + 1) * sizeof(char *));
	for (const cJSON *it = m->child; it; it = it->next) {
		const char *k = it->string;
		if (!cJSON_IsString(it))
			return err_set(err, "%s: \"%s.%s\" must be a string", where, key, k);
		if (headers ? !header_name_ok(k)
			    : (!*k || strchr(k, '=') || !var_start(*k)))
			return err_set(err, "%s: \"%s\": invalid %s name \"%s\"", where, key,
				       headers ? "header" : "variable", k);
		char *e = NULL;
		char *v = mcp_expand(it->valuestring, &e);
		if (!v) {
			err_set(err, "%s: \"%s.%s\": %s", where, key, k, e);
			free(e);
			return -1;
		}
		if (headers && strpbrk(v, "\r\n")) {
			free(v);
			return err_set(err, "%s: \"%s.%s\": a header value may not hold a line "
				       "break", where, key, k);
		}
		(*out)[(*n)++] = headers ? xasprintf("%s: %s", k, v) : xasprintf("%s=%s", k, v);
		(*out)[*n] = NULL;
		free(v);
	}
	return 0;
}

static int parse_server(const cJSON *j, const char *origin, struct mcp_server_config *s,
			char **err)
{
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(j->string);
	s->args = xcalloc(1, sizeof(char *));
	s->env = xcalloc(1, sizeof(char *));
	s->headers = xcalloc(1, sizeof(char *));
	char *where = xasprintf("%s: server \"%s\"", origin, j->string);
	int r = -1;
	char *type = NULL;
	if (!*j->string || strlen(j->string) > 64) {
		err_set(err, "%s: a server name is 1 to 64 characters", origin);
		goto out;
	}
	for (const char *p = j->string; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '/') {
			err_set(err, "%s: invalid server name (control character or '/')",
				origin);
			goto out;
		}
	if (!cJSON_IsObject(j)) {
		err_set(err, "%s: must be an object", where);
		goto out;
	}
	if (cfg_string(j, "type", where, &type, err) < 0)
		goto out;
	bool has_url = cJSON_GetObjectItemCaseSensitive(j, "url") != NULL;
	if (type && !strcmp(type, "stdio")) {
		s->transport = MCP_STDIO;
	} else if (type && (!strcmp(type, "http") || !strcmp(type, "streamable-http"))) {
		s->transport = MCP_HTTP;
	} else if (type && !strcmp(type, "sse")) {
		err_set(err, "%s: \"type\": the legacy SSE transport is not supported "
			"(use \"http\", Streamable HTTP)", where);
		goto out;
	} else if (type) {
		err_set(err, "%s: \"type\" must be \"stdio\", \"http\" or \"streamable-http\"",
			where);
		goto out;
	} else {
		s->transport = has_url ? MCP_HTTP : MCP_STDIO;
	}
	if (s->transport == MCP_STDIO) {
		if (cfg_string(j, "command", where, &s->command, err) < 0)
			goto out;
		if (!s->command || !*s->command) {
			err_set(err, "%s: \"command\" is missing (a stdio server needs the "
				"program to run)", where);
			goto out;
		}
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(j, "args");
		if (args && !cJSON_IsArray(args)) {
			err_set(err, "%s: \"args\" must be an array of strings", where);
			goto out;
		}
		size_t na = (size_t)cJSON_GetArraySize(args);
		s->args = xrealloc(s->args, (na + 1) * sizeof(char *));
		s->args[0] = NULL;
		size_t i = 0;
		for (const cJSON *a = args ? args->child : NULL; a; a = a->next, i++) {
			if (!cJSON_IsString(a)) {
				err_set(err, "%s: \"args[%zu]\" must be a string", where, i);
				goto out;
			}
			char *e = NULL;
			char *v = mcp_expand(a->valuestring, &e);
			if (!v) {
				err_set(err, "%s: \"args[%zu]\": %s", where, i, e);
				free(e);
				goto out;
			}
			s->args[s->nargs++] = v;
			s->args[s->nargs] = NULL;
		}
		free(s->env);
		if (cfg_map(j, "env", where, false, &s->env, &s->nenv, err) < 0)
			goto out;
	} else {
		if (cfg_string(j, "url", where, &s->url, err) < 0)
			goto out;
		if (!s->url || (strncmp(s->url, "http://", 7) && strncmp(s->url, "https://", 8))) {
			err_set(err, "%s: \"url\" is missing or not an http:// or https:// URL",
				where);
			goto out;
		}
		free(s->headers);
		if (cfg_map(j, "headers", where, true, &s->headers, &s->nheaders, err) < 0)
			goto out;
	}
	r = 0;
out:
	free(type);
	free(where);
	return r;
}

int mcp_config_parse(const char *text, size_t len, const char *origin,
		     struct mcp_config *out, char **err)
{
	memset(out, 0, sizeof(*out));
	char *perr = NULL;
	cJSON *root = json_parse_strict(text, len, &perr);
	if (!root) {
		err_set(err, "%s: not valid JSON: %s", origin, perr);
		free(perr);
		return -1;
	}
	const cJSON *servers = cJSON_GetObjectItemCaseSensitive(root, "mcpServers");
	int r = 0;
	if (!cJSON_IsObject(root)) {
		r = err_set(err, "%s: not a JSON object", origin);
	} else if (!cJSON_IsObject(servers)) {
		r = err_set(err, "%s: \"mcpServers\" is missing or not an object", origin);
	} else {
		size_t n = 0;
		for (const cJSON *s = servers->child; s; s = s->next)
			n++;
		out->servers = xcalloc(n + 1, sizeof(*out->servers));
		for (const cJSON *s = servers->child; s && r == 0; s = s->next) {
			r = parse_server(s, origin, &out->servers[out->n], err);
			out->n++;
		}
	}
	cJSON_Delete(root);
	if (r < 0)
		mcp_config_release(out);
	return r;
}

int mcp_config_load(const char *path, struct mcp_config *out, char **err)
{
	memset(out, 0, sizeof(*out));
	const char *p = path ? path : ".mcp.json";
	struct stat st;
	if (!path && stat(p, &st) < 0 && errno == ENOENT)
		return 0;
	char *text = NULL, *e = NULL;
	size_t len = 0;
	if (util_read_file(p, MCP_CONFIG_MAX, &text, &len, &e) < 0) {
		err_set(err, "MCP configuration: %s", e);
		free(e);
		return -1;
	}
	int r = mcp_config_parse(text, len, p, out, err);
	free(text);
	if (r == 0)
		out->path = xstrdup(p);
	return r;
}
