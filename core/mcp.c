/* The MCP client: see core/mcp.h. */
#include "core/mcp.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/http.h"
#include "core/json_out.h"
#include "core/message.h"
#include "core/sse.h"
#include "core/util.h"
#include "core/banned.h"

#define MCP_CONFIG_MAX ((size_t)1 << 20)
#define MCP_MESSAGE_MAX ((size_t)16 << 20) /* longest message we accept */
#define MCP_NOTIFY_TIMEOUT_MS 5000L
#define MCP_DELETE_TIMEOUT_MS 2000L /* ending a session at exit */
#define MCP_EVENT_ID_MAX 256        /* longest Last-Event-ID we send back */
#define MCP_MAX_PAGES 1000

static const char *const mcp_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };

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

static void server_config_release(struct mcp_server_config *s)
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

static void server_config_copy(struct mcp_server_config *d, const struct mcp_server_config *s)
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
		server_config_release(&c->servers[i]);
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

/* ---- the client ------------------------------------------------------- */

struct mcp_client {
	struct mcp_server_config cfg;
	pthread_mutex_t mu;
	char *log_path;      /* NULL: no log */
	int log_fd;
	char **secrets;      /* values never shown */
	size_t nsecrets;
	bool ready;          /* initialized */
	char version[32];
	int64_t next_id;
	/* stdio */
	pid_t pid;
	int in_fd, out_fd, err_fd;
	struct sbuf rbuf, ebuf;
	/* http */
	struct http_multi *m;
	char *session;
	/* The GET stream for server messages outside requests: 0 not tried in
	 * this session, 1 offered, -1 not (HTTP 405 or another failure). */
	int get_stream;
	char *last_event_id; /* of its last event: Last-Event-ID next time */
};

/* What an exchange ended in, besides 0 and -1. */
#define MCP_EXPIRED (-2)

static char *redact(const struct mcp_client *c, const char *s)
{
	char *out = config_redact(s);
	for (size_t i = 0; i < c->nsecrets; i++) {
		const char *v = c->secrets[i];
		char *hit;
		while ((hit = strstr(out, v))) {
			struct sbuf b;
			sbuf_init(&b);
			sbuf_add(&b, out, (size_t)(hit - out));
			sbuf_addstr(&b, "[redacted]");
			sbuf_addstr(&b, hit + strlen(v));
			free(out);
			out = sbuf_detach(&b);
		}
	}
	return out;
}

char *mcp_client_redact(const struct mcp_client *c, const char *s)
{
	return redact(c, s);
}

static void redact_err(const struct mcp_client *c, char **err)
{
	if (!err || !*err)
		return;
	char *r = redact(c, *err);
	free(*err);
	*err = r;
}

static void mcp_log(struct mcp_client *c, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void mcp_log(struct mcp_client *c, const char *what, const char *fmt, ...)
{
	if (!c->log_path)
		return;
	if (c->log_fd < 0) {
		char *dir = xstrdup(c->log_path);
		*strrchr(dir, '/') = '\0';
		if (util_mkdirs(dir, NULL) == 0)
			c->log_fd = open(c->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
					 0644);
		free(dir);
		if (c->log_fd < 0)
			return;
	}
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	char *red = redact(c, text);
	char *clean = util_sanitize(red, strlen(red), false);
	char ts[64];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	char *line = xasprintf("%s %s %s\n", ts, what, clean);
	ssize_t n = write(c->log_fd, line, strlen(line));
	(void)n;
	free(line);
	free(clean);
	free(red);
	free(text);
}

struct mcp_client *mcp_client_new(const struct mcp_server_config *cfg, const char *log_dir)
{
	struct mcp_client *c = xcalloc(1, sizeof(*c));
	server_config_copy(&c->cfg, cfg);
	pthread_mutex_init(&c->mu, NULL);
	c->log_fd = -1;
	if (log_dir && *log_dir) {
		char *fname = xstrdup(cfg->name);
		for (char *p = fname; *p; p++)
			if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
				*p = '_';
		if (fname[0] == '.')
			fname[0] = '_';
		c->log_path = xasprintf("%s/mcp/%s.log", log_dir, fname);
		free(fname);
	}
	c->secrets = xcalloc(cfg->nheaders + cfg->nenv + 1, sizeof(char *));
	for (size_t i = 0; i < cfg->nheaders; i++) {
		const char *v = strchr(cfg->headers[i], ':');
		v = v ? v + 1 : "";
		while (*v == ' ')
			v++;
		if (strlen(v) >= 4)
			c->secrets[c->nsecrets++] = xstrdup(v);
	}
	for (size_t i = 0; i < cfg->nenv; i++) {
		const char *eq = strchr(cfg->env[i], '=');
		char *name = xstrndup(cfg->env[i], eq ? (size_t)(eq - cfg->env[i]) : 0);
		for (char *p = name; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		if (eq && config_is_secret(name) && strlen(eq + 1) >= 4)
			c->secrets[c->nsecrets++] = xstrdup(eq + 1);
		free(name);
	}
	c->next_id = 1;
	c->pid = -1;
	c->in_fd = c->out_fd = c->err_fd = -1;
	sbuf_init(&c->rbuf);
	sbuf_init(&c->ebuf);
	return c;
}

const char *mcp_client_name(const struct mcp_client *c)
{
	return c->cfg.name;
}

const char *mcp_client_log_path(const struct mcp_client *c)
{
	return c->log_path;
}

void mcp_client_version(struct mcp_client *c, char *buf, size_t size)
{
	pthread_mutex_lock(&c->mu);
	util_strlcpy(buf, c->ready ? c->version : "", size);
	pthread_mutex_unlock(&c->mu);
}

static long timeout_of(const struct mcp_call_opts *o)
{
	return o && o->timeout_ms > 0 ? o->timeout_ms : MCP_DEFAULT_TIMEOUT_MS;
}

static bool cancelled(const struct mcp_call_opts *o)
{
	return o && o->cancel && *o->cancel;
}

static char *message_text(int64_t id, const char *method, const cJSON *params)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	if (id >= 0)
		cJSON_AddNumberToObject(m, "id", (double)id);
	cJSON_AddStringToObject(m, "method", method);
	if (params)
		cJSON_AddItemToObject(m, "params", cJSON_Duplicate(params, true));
	char *s = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	char *out = xstrdup(s ? s : "{}");
	cJSON_free(s);
	return out;
}

/* ---- stdio transport -------------------------------------------------- */

/* Writes the stderr lines gathered so far to the log; all of it at EOF. */
static void stderr_lines(struct mcp_client *c, bool all)
{
	char *start = c->ebuf.data, *nl;
	size_t used = 0;
	while (c->ebuf.len > used && (nl = memchr(start, '\n', c->ebuf.len - used))) {
		*nl = '\0';
		mcp_log(c, "stderr", "%s", start);
		used += (size_t)(nl - start) + 1;
		start = nl + 1;
	}
	if (all && c->ebuf.len > used) {
		mcp_log(c, "stderr", "%s", start);
		used = c->ebuf.len;
	}
	if (used) {
		memmove(c->ebuf.data, c->ebuf.data + used, c->ebuf.len - used);
		c->ebuf.len -= used;
		c->ebuf.data[c->ebuf.len] = '\0';
	}
	if (c->ebuf.len > 65536) /* a very long line: log it in pieces */
		stderr_lines(c, true);
}

/* Reads what the server wrote to stderr; closes it at EOF. */
static void stderr_read(struct mcp_client *c)
{
	if (c->err_fd < 0)
		return;
	char buf[8192];
	ssize_t n = read(c->err_fd, buf, sizeof(buf));
	if (n > 0) {
		sbuf_add(&c->ebuf, buf, (size_t)n);
		stderr_lines(c, false);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		stderr_lines(c, true);
		close(c->err_fd);
		c->err_fd = -1;
	}
}

/* Waits up to ms for the child to end, reading its stderr meanwhile. */
static bool child_wait(struct mcp_client *c, long ms, int *status)
{
	int64_t end = util_mono_ns() + (int64_t)ms * 1000000;
	for (;;) {
		pid_t p = waitpid(c->pid, status, WNOHANG);
		if (p == c->pid || (p < 0 && errno == ECHILD)) {
			if (p < 0)
				*status = -1; /* reaped by someone else */
			return true;
		}
		int64_t left = (end - util_mono_ns()) / 1000000;
		if (left <= 0)
			return false;
		if (c->err_fd >= 0) {
			struct pollfd pf = { c->err_fd, POLLIN, 0 };
			if (poll(&pf, 1, left < 20 ? (int)left : 20) > 0)
				stderr_read(c);
		} else {
			struct timespec ts = { 0, 10 * 1000000 };
			nanosleep(&ts, NULL);
		}
	}
}

static char *status_text(int st)
{
	if (st == -1)
		return xstrdup("exited");
	if (WIFEXITED(st))
		return xasprintf("exited with status %d", WEXITSTATUS(st));
	if (WIFSIGNALED(st))
		return xasprintf("was killed by signal %d (%s)", WTERMSIG(st),
				 strsignal(WTERMSIG(st)));
	return xasprintf("ended (wait status %d)", st);
}

/* Ends the child: closes its stdin so that it exits by itself, then
 * SIGTERM, SIGKILL. Returns how it ended (caller frees), or NULL when
 * there was none. */
static char *stdio_stop(struct mcp_client *c, bool gently)
{
	char *how = NULL;
	if (c->in_fd >= 0) {
		close(c->in_fd);
		c->in_fd = -1;
	}
	if (c->pid > 0) {
		int st = -1;
		if (!child_wait(c, gently ? 1000 : 0, &st)) {
			kill(c->pid, SIGTERM);
			if (!child_wait(c, 1000, &st)) {
				kill(c->pid, SIGKILL);
				while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
					;
			}
		}
		how = status_text(st);
		c->pid = -1;
	}
	/* What is left on stderr (a grandchild may keep it open: no waiting). */
	while (c->err_fd >= 0) {
		struct pollfd pf = { c->err_fd, POLLIN, 0 };
		if (poll(&pf, 1, 0) <= 0) {
			stderr_lines(c, true);
			close(c->err_fd);
			c->err_fd = -1;
			break;
		}
		stderr_read(c);
	}
	if (c->out_fd >= 0) {
		close(c->out_fd);
		c->out_fd = -1;
	}
	c->rbuf.len = 0;
	if (c->rbuf.data)
		c->rbuf.data[0] = '\0';
	c->ready = false;
	return how;
}

/* The server closed its stdout: it has exited, or will. */
static int stdio_gone(struct mcp_client *c, const char *method, char **err)
{
	if (c->in_fd >= 0) {
		close(c->in_fd);
		c->in_fd = -1;
	}
	int st = -1;
	bool ended = c->pid > 0 && child_wait(c, 2000, &st);
	char *how;
	if (ended) {
		how = status_text(st);
		c->pid = -1;
		free(stdio_stop(c, false));
	} else {
		free(stdio_stop(c, false));
		how = xstrdup("stopped talking (closed its input or output)");
	}
	mcp_log(c, "error", "server %s during %s", how, method);
	err_set(err, "server \"%s\" %s during %s", c->cfg.name, how, method);
	free(how);
	return -1;
}

static int stdio_spawn(struct mcp_client *c, char **err)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		int e = errno;
		for (int i = 0; i < 2; i++) {
			if (in[i] >= 0)
				close(in[i]);
			if (out[i] >= 0)
				close(out[i]);
			if (er[i] >= 0)
				close(er[i]);
		}
		return err_set(err, "server \"%s\": cannot make pipes: %s", c->cfg.name,
			       strerror(e));
	}
	/* argv and the environment: ours, with the configured variables. */
	char **argv = xcalloc(c->cfg.nargs + 2, sizeof(char *));
	argv[0] = c->cfg.command;
	for (size_t i = 0; i < c->cfg.nargs; i++)
		argv[i + 1] = c->cfg.args[i];
	size_t ne = 0;
	for (char **e = environ; e && *e; e++)
		ne++;
	char **envp = xcalloc(ne + c->cfg.nenv + 2, sizeof(char *));
	size_t k = 0;
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t nl = eq ? (size_t)(eq - *e) : strlen(*e);
		bool over = nl == strlen(MCP_CHILD_ENV) && !strncmp(*e, MCP_CHILD_ENV, nl);
		for (size_t i = 0; i < c->cfg.nenv && !over; i++)
			over = !strncmp(c->cfg.env[i], *e, nl) && c->cfg.env[i][nl] == '=';
		if (!over)
			envp[k++] = *e;
	}
	for (size_t i = 0; i < c->cfg.nenv; i++)
		envp[k++] = c->cfg.env[i];
	/* Tells a madf started as a server that it is one (see MCP_CHILD_ENV). */
	envp[k++] = (char *)(uintptr_t)MCP_CHILD_ENV "=1";
	envp[k] = NULL;

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, er[1], 2);
	posix_spawnattr_init(&at);
	sigset_t def, none;
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETPGROUP);
	pid_t pid;
	int rc = posix_spawnp(&pid, c->cfg.command, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(argv);
	free(envp);
	close(in[0]);
	close(out[1]);
	close(er[1]);
	if (rc != 0) {
		close(in[1]);
		close(out[0]);
		close(er[0]);
		mcp_log(c, "error", "cannot start %s: %s", c->cfg.command, strerror(rc));
		return err_set(err, "server \"%s\": cannot start \"%s\": %s", c->cfg.name,
			       c->cfg.command, strerror(rc));
	}
	fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
	c->pid = pid;
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->err_fd = er[0];
	c->rbuf.len = 0;
	mcp_log(c, "info", "started %s (pid %ld)", c->cfg.command, (long)pid);
	return 0;
}

/* Writes one message line; SIGPIPE is blocked on this thread meanwhile so
 * that a dead server cannot kill us. Returns 0, -1 (EPIPE: gone) with
 * errno set. */
static int stdio_write(struct mcp_client *c, const char *text, int64_t deadline)
{
	if (c->in_fd < 0) {
		errno = EPIPE;
		return -1;
	}
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, text);
	sbuf_addch(&b, '\n');
	sigset_t pipe_set, old, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	bool was_pending = sigismember(&pending, SIGPIPE);
	size_t off = 0;
	int r = 0;
	while (off < b.len) {
		ssize_t n = write(c->in_fd, b.data + off, b.len - off);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			int64_t left = (deadline - util_mono_ns()) / 1000000;
			if (left <= 0) {
				errno = ETIMEDOUT;
				r = -1;
				break;
			}
			struct pollfd pf = { c->in_fd, POLLOUT, 0 };
			poll(&pf, 1, left > 1000 ? 1000 : (int)left);
			continue;
		}
		r = -1;
		break;
	}
	int e = errno;
	if (r < 0 && e == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	sbuf_release(&b);
	errno = e;
	return r;
}

/* ---- messages from the server ----------------------------------------- */

static int send_message(struct mcp_client *c, const char *text);

static void on_notification(struct mcp_client *c, const char *method, const cJSON *params,
			    const struct mcp_call_opts *o)
{
	if (!strcmp(method, "notifications/message")) {
		const char *level = jstr(params, "level");
		const char *logger = jstr(params, "logger");
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(params, "data");
		char *d = cJSON_IsString(data) ? xstrdup(data->valuestring) : NULL;
		if (!d && data) {
			char *p = cJSON_PrintUnformatted(data);
			d = xstrdup(p ? p : "");
			cJSON_free(p);
		}
		mcp_log(c, "message", "[%s]%s%s%s %s", level ? level : "info",
			logger ? " " : "", logger ? logger : "", logger ? ":" : "", d ? d : "");
		free(d);
	} else if (!strcmp(method, "notifications/progress")) {
		double progress = jnum(params, "progress", 0), total = jnum(params, "total", 0);
		const char *msg = jstr(params, "message");
		if (total > 0)
			mcp_log(c, "progress", "%g/%g %s", progress, total, msg ? msg : "");
		else
			mcp_log(c, "progress", "%g %s", progress, msg ? msg : "");
		if (o && o->on_progress)
			o->on_progress(o->ctx, progress, total, msg);
	} else {
		mcp_log(c, "notice", "%s", method);
	}
}

/* One message from the server. Returns 1 when it is the response to
 * want_id (then *resp takes it over), else 0 (msg stays the caller's). */
static int on_message(struct mcp_client *c, cJSON *msg, int64_t want_id,
		      const struct mcp_call_opts *o, cJSON **resp)
{
	if (!cJSON_IsObject(msg)) {
		mcp_log(c, "warn", "a message that is not a JSON object was ignored");
		return 0;
	}
	const char *method = jstr(msg, "method");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	if (method && id) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "jsonrpc", "2.0");
		cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, true));
		if (!strcmp(method, "ping")) {
			cJSON_AddItemToObject(r, "result", cJSON_CreateObject());
		} else {
			cJSON *e = cJSON_AddObjectToObject(r, "error");
			cJSON_AddNumberToObject(e, "code", -32601);
			cJSON_AddStringToObject(e, "message", "Method not found");
			mcp_log(c, "warn", "request %s from the server: not supported", method);
		}
		char *text = cJSON_PrintUnformatted(r);
		if (text)
			send_message(c, text);
		cJSON_free(text);
		cJSON_Delete(r);
		return 0;
	}
	if (method) {
		on_notification(c, method, params, o);
		return 0;
	}
	if (cJSON_IsNumber(id) && want_id >= 0 && id->valuedouble == (double)want_id) {
		*resp = msg;
		return 1;
	}
	mcp_log(c, "notice", "a response to no pending request was ignored");
	return 0;
}

/* ---- http transport --------------------------------------------------- */

struct http_xfer {
	struct mcp_client *c;
	int64_t want_id;
	const struct mcp_call_opts *o;
	bool sse;
	struct sse_parser sp;
	struct sbuf body;
	char *session;
	cJSON *resp;
	bool done, timed_out, overflow;
	enum http_outcome outcome;
	long status;
	char *error;
};

static int xfer_header(void *ctx, const char *name, size_t nlen, const char *value,
		       size_t vlen)
{
	struct http_xfer *x = ctx;
	if (nlen == 12 && !strncasecmp(name, "content-type", 12))
		x->sse = vlen >= 17 && !strncasecmp(value, "text/event-stream", 17);
	else if (nlen == 14 && !strncasecmp(name, "mcp-session-id", 14)) {
		free(x->session);
		x->session = xstrndup(value, vlen);
	}
	return 0;
}

static int xfer_event(void *ctx, const struct sse_event *ev, char **err)
{
	(void)err;
	struct http_xfer *x = ctx;
	if (!ev->data_len || x->resp)
		return 0;
	cJSON *msg = cJSON_ParseWithLength(ev->data, ev->data_len);
	if (!msg) {
		mcp_log(x->c, "warn", "an event that is not JSON was ignored");
		return 0;
	}
	if (on_message(x->c, msg, x->want_id, x->o, &x->resp) == 0)
		cJSON_Delete(msg);
	return 0;
}

static int xfer_data(void *ctx, long status, const char *buf, size_t len)
{
	struct http_xfer *x = ctx;
	x->status = status;
	if (x->sse && status >= 200 && status < 300) {
		char *e = NULL;
		if (sse_feed(&x->sp, buf, len, &e) < 0) {
			free(x->error);
			x->error = e;
			return -1;
		}
		return x->resp ? -1 : 0; /* the answer is in: no need for the rest */
	}
	if (x->body.len + len > MCP_MESSAGE_MAX) {
		x->overflow = true;
		return -1;
	}
	sbuf_add(&x->body, buf, len);
	return 0;
}

static void xfer_done(void *ctx, const struct http_result *res)
{
	struct http_xfer *x = ctx;
	x->done = true;
	x->outcome = res->outcome;
	if (res->status)
		x->status = res->status;
	x->timed_out = res->timed_out;
	if (res->error && *res->error && !x->error)
		x->error = xstrdup(res->error);
}

/* Replies to server requests made on a stream: fire and forget. */
static void reply_done(void *ctx, const struct http_result *res)
{
	(void)res;
	free(ctx);
}

static int reply_data(void *ctx, long status, const char *buf, size_t len)
{
	(void)ctx, (void)status, (void)buf, (void)len;
	return 0;
}

/* What an HTTP request to the endpoint is for. */
enum http_kind {
	HTTP_POST,   /* a message */
	HTTP_LISTEN, /* GET: the stream of server messages outside requests */
	HTTP_END,    /* DELETE: the end of the session */
};

/* The request's headers; own[] (3 entries) gets those to free. */
static const char **http_headers(struct mcp_client *c, enum http_kind kind, char **own,
				 size_t *nown)
{
	const char **h = xcalloc(c->cfg.nheaders + 6, sizeof(char *));
	size_t k = 0;
	*nown = 0;
	if (kind == HTTP_POST) {
		h[k++] = "Content-Type: application/json";
		h[k++] = "Accept: application/json, text/event-stream";
	} else if (kind == HTTP_LISTEN) {
		h[k++] = "Accept: text/event-stream";
		if (c->last_event_id)
			h[k++] = own[(*nown)++] = xasprintf("Last-Event-ID: %s",
							    c->last_event_id);
	}
	if (c->session)
		h[k++] = own[(*nown)++] = xasprintf("Mcp-Session-Id: %s", c->session);
	if (c->ready || c->version[0])
		h[k++] = own[(*nown)++] = xasprintf("MCP-Protocol-Version: %s", c->version);
	for (size_t i = 0; i < c->cfg.nheaders; i++)
		h[k++] = c->cfg.headers[i];
	h[k] = NULL;
	return h;
}

static int http_start(struct mcp_client *c, const char *text, long timeout_ms,
		      const struct mcp_call_opts *o, struct http_xfer *x, char **err)
{
	if (!c->m && http_multi_new(&c->m, err) < 0)
		return -1;
	char *own[3];
	size_t nown;
	const char **h = http_headers(c, HTTP_POST, own, &nown);
	struct http_request_opts ro = {
		.url = c->cfg.url,
		.headers = h,
		.body = text,
		.body_len = strlen(text),
		.timeout_ms = timeout_ms,
		.connect_timeout_ms = timeout_ms < 10000 ? timeout_ms : 10000,
		.cancel = o ? o->cancel : NULL,
		.ctx = x,
	};
	if (x) {
		ro.on_header = xfer_header;
		ro.on_data = xfer_data;
		ro.on_done = xfer_done;
	} else {
		ro.on_data = reply_data;
		ro.on_done = reply_done;
		ro.ctx = xcalloc(1, 1);
	}
	int r = http_multi_start(c->m, &ro, err);
	if (r < 0 && !x)
		free(ro.ctx);
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	free(h);
	return r;
}

/* Sends a message whose answer nobody waits for (a reply, a notification
 * sent from inside a stream). */
static int send_message(struct mcp_client *c, const char *text)
{
	if (c->cfg.transport == MCP_STDIO)
		return stdio_write(c, text, util_mono_ns() + MCP_NOTIFY_TIMEOUT_MS * 1000000);
	char *e = NULL;
	int r = http_start(c, text, MCP_NOTIFY_TIMEOUT_MS, NULL, NULL, &e);
	if (r < 0)
		mcp_log(c, "warn", "cannot send: %s", e);
	free(e);
	return r;
}

static void xfer_release(struct http_xfer *x)
{
	sse_release(&x->sp);
	sbuf_release(&x->body);
	free(x->session);
	free(x->error);
	cJSON_Delete(x->resp);
}

static char *body_snippet(const struct sbuf *b)
{
	size_t n = b->len > 200 ? 200 : b->len;
	char *s = util_sanitize(b->data ? b->data : "", n, false);
	return s;
}

/* A notification over HTTP, waited for (202 expected). */
static int http_notify(struct mcp_client *c, const char *text, char **err)
{
	struct http_xfer x = { .c = c, .want_id = -1 };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	int r = http_start(c, text, MCP_NOTIFY_TIMEOUT_MS, NULL, &x, err);
	if (r == 0)
		r = http_multi_run(c->m, err);
	if (r == 0 && (x.outcome != HTTP_DONE || x.status < 200 || x.status >= 300)) {
		if (x.outcome == HTTP_DONE)
			r = err_set(err, "HTTP %ld", x.status);
		else
			r = err_set(err, "%s", x.error ? x.error : "no answer");
	}
	xfer_release(&x);
	return r;
}

/* ---- the GET stream and the end of a session -------------------------- */

/* The GET stream of one call: server notifications and requests outside
 * the call's own answer. It runs beside the call's POST on the same multi
 * and is stopped when the call ends; the next call opens it again with
 * Last-Event-ID, so that a server keeping its events can send what the
 * client had not received. */
struct get_stream {
	struct mcp_client *c;
	const struct mcp_call_opts *o;
	struct sse_parser sp;
	volatile sig_atomic_t stop;
	bool running, sse, opened;
	long status;
};

static int get_header(void *ctx, const char *name, size_t nlen, const char *value,
		      size_t vlen)
{
	struct get_stream *g = ctx;
	if (nlen == 12 && !strncasecmp(name, "content-type", 12))
		g->sse = vlen >= 17 && !strncasecmp(value, "text/event-stream", 17);
	return 0;
}

static int get_event(void *ctx, const struct sse_event *ev, char **err)
{
	(void)err;
	struct get_stream *g = ctx;
	struct mcp_client *c = g->c;
	size_t idlen = ev->id ? strlen(ev->id) : 0;
	if (idlen && (!c->last_event_id || strcmp(c->last_event_id, ev->id))) {
		/* Sent back as a header: printable ASCII, bounded, or not at all. */
		bool ok = idlen <= MCP_EVENT_ID_MAX;
		for (size_t i = 0; ok && i < idlen; i++)
			ok = ev->id[i] >= 0x20 && ev->id[i] < 0x7f;
		free(c->last_event_id);
		c->last_event_id = ok ? xstrdup(ev->id) : NULL;
	}
	if (!ev->data_len)
		return 0;
	cJSON *msg = cJSON_ParseWithLength(ev->data, ev->data_len);
	if (!msg) {
		mcp_log(c, "warn", "an event that is not JSON was ignored (GET stream)");
		return 0;
	}
	cJSON *none = NULL;
	on_message(c, msg, -1, g->o, &none);
	cJSON_Delete(msg);
	return 0;
}

static int get_data(void *ctx, long status, const char *buf, size_t len)
{
	struct get_stream *g = ctx;
	g->status = status;
	if (status < 200 || status >= 300)
		return 0; /* the body of a refusal: not needed */
	if (!g->sse)
		return -1; /* not an event stream */
	if (!g->opened) {
		g->opened = true;
		if (g->c->get_stream == 0)
			mcp_log(g->c, "info", "listening for server messages on a GET stream");
		g->c->get_stream = 1;
	}
	char *e = NULL;
	if (sse_feed(&g->sp, buf, len, &e) < 0) {
		mcp_log(g->c, "warn", "GET stream: %s", e);
		free(e);
		return -1;
	}
	return 0;
}

static void get_done(void *ctx, const struct http_result *res)
{
	struct get_stream *g = ctx;
	struct mcp_client *c = g->c;
	g->running = false;
	long st = res->status ? res->status : g->status;
	if (res->outcome == HTTP_CANCELLED && st != 405)
		return; /* stopped by us at the end of the call */
	if (st == 405) {
		mcp_log(c, "info", "the server offers no stream of its own (GET: HTTP 405)");
		c->get_stream = -1;
	} else if (st == 404) { /* an expired session: the call's POST sees it too */
		mcp_log(c, "info", "GET stream: HTTP 404; not tried again in this session");
		c->get_stream = -1;
	} else if (st >= 200 && st < 300 && g->sse && res->outcome != HTTP_FAILED &&
		   res->outcome != HTTP_ABORTED) {
		c->get_stream = 1; /* the server closed it: the next call opens it again */
	} else {
		if (res->outcome == HTTP_FAILED)
			mcp_log(c, "warn", "GET stream: %s; not tried again in this session",
				res->error && *res->error ? res->error : "failed");
		else if (st < 200 || st >= 300)
			mcp_log(c, "warn", "GET stream: HTTP %ld; not tried again in this session",
				st);
		else if (!g->sse)
			mcp_log(c, "warn", "GET stream: the answer is not an event stream; not "
				"tried again in this session");
		c->get_stream = -1;
	}
}

/* Opens the GET stream g for a call when the server may offer one. It has
 * no timeout of its own: it ends with the call. */
static void get_open(struct mcp_client *c, struct get_stream *g, long timeout_ms,
		     const struct mcp_call_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->c = c;
	g->o = o;
	sse_init(&g->sp, MCP_MESSAGE_MAX, get_event, g);
	if (c->get_stream < 0 || !c->ready)
		return;
	char *own[3];
	size_t nown;
	const char **h = http_headers(c, HTTP_LISTEN, own, &nown);
	struct http_request_opts ro = {
		.url = c->cfg.url,
		.headers = h,
		.connect_timeout_ms = timeout_ms < 10000 ? timeout_ms : 10000,
		.cancel = &g->stop,
		.on_header = get_header,
		.on_data = get_data,
		.on_done = get_done,
		.ctx = g,
	};
	char *e = NULL;
	if (http_multi_start(c->m, &ro, &e) < 0) {
		mcp_log(c, "warn", "GET stream: %s", e);
		free(e);
		c->get_stream = -1;
	} else {
		g->running = true;
	}
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	free(h);
}

/* Runs c's requests until *done (the call's POST ended) and every other
 * request is over: the GET stream g (may be NULL) is stopped once *done,
 * replies sent meanwhile are let finish. Returns 0, or -1 with *err when
 * poll() fails. */
static int http_run(struct mcp_client *c, const bool *done, struct get_stream *g,
		    char **err)
{
	struct pollfd *fds = NULL;
	size_t cap = 0;
	int rc = 0;
	while (http_multi_pending(c->m) > 0) {
		if (*done && g && g->running)
			g->stop = 1;
		size_t n = http_multi_fds(c->m, fds, cap);
		if (n > cap) {
			cap = n;
			fds = xrealloc(fds, cap * sizeof(*fds));
			n = http_multi_fds(c->m, fds, cap);
		}
		int t = http_multi_timeout(c->m);
		if (t < 0 || t > 1000) /* a cancel flag is noticed within a second */
			t = 1000;
		int r = poll(fds, n, t);
		if (r < 0 && errno != EINTR) {
			rc = err_set(err, "poll: %s", strerror(errno));
			break;
		}
		http_multi_dispatch(c->m, fds, r > 0 ? n : 0);
	}
	free(fds);
	if (rc < 0 && g && g->running) { /* g lives on our caller's stack */
		g->stop = 1;
		while (g->running && http_multi_pending(c->m) > 0)
			http_multi_dispatch(c->m, NULL, 0);
	}
	return rc;
}

/* Ends the HTTP session (DELETE with its id), waiting at most
 * MCP_DELETE_TIMEOUT_MS; a server that does not allow it answers 405. */
static void http_end_session(struct mcp_client *c)
{
	if (c->cfg.transport != MCP_HTTP || !c->session)
		return;
	char *e = NULL;
	if (!c->m && http_multi_new(&c->m, &e) < 0) {
		mcp_log(c, "warn", "cannot end the session: %s", e);
		free(e);
		return;
	}
	struct http_xfer x = { .c = c, .want_id = -1 };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	char *own[3];
	size_t nown;
	const char **h = http_headers(c, HTTP_END, own, &nown);
	struct http_request_opts ro = {
		.url = c->cfg.url,
		.headers = h,
		.method = "DELETE",
		.timeout_ms = MCP_DELETE_TIMEOUT_MS,
		.connect_timeout_ms = MCP_DELETE_TIMEOUT_MS,
		.on_data = xfer_data,
		.on_done = xfer_done,
		.ctx = &x,
	};
	int r = http_multi_start(c->m, &ro, &e);
	for (size_t i = 0; i < nown; i++)
		free(own[i]);
	free(h);
	if (r == 0)
		r = http_multi_run(c->m, &e);
	if (r < 0)
		mcp_log(c, "warn", "cannot end the session: %s", e);
	else if (x.outcome == HTTP_DONE && x.status >= 200 && x.status < 300)
		mcp_log(c, "info", "session ended (DELETE: HTTP %ld)", x.status);
	else if (x.outcome == HTTP_DONE && x.status == 405)
		mcp_log(c, "info", "the server does not let clients end sessions (DELETE: "
			"HTTP 405)");
	else if (x.outcome == HTTP_DONE)
		mcp_log(c, "warn", "ending the session: DELETE: HTTP %ld", x.status);
	else
		mcp_log(c, "warn", "ending the session: DELETE: %s",
			x.error ? x.error : "no answer");
	free(e);
	xfer_release(&x);
	free(c->session);
	c->session = NULL;
}

static void send_cancel(struct mcp_client *c, int64_t id, const char *reason)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "requestId", (double)id);
	cJSON_AddStringToObject(p, "reason", reason);
	char *text = message_text(-1, "notifications/cancelled", p);
	cJSON_Delete(p);
	if (c->cfg.transport == MCP_STDIO) {
		send_message(c, text);
	} else {
		char *e = NULL;
		if (http_notify(c, text, &e) < 0)
			mcp_log(c, "warn", "notifications/cancelled: %s", e);
		free(e);
	}
	mcp_log(c, "info", "cancelled request %lld: %s", (long long)id, reason);
	free(text);
}

/* ---- one exchange ----------------------------------------------------- */

/* Takes the first complete line out of c->rbuf (what a stdio server wrote)
 * and handles its message. Returns 1 when it was the response to want_id
 * (*resp takes it over), 0 when it was something else, -1 when no line is
 * complete. */
static int stdio_take_line(struct mcp_client *c, int64_t want_id,
			   const struct mcp_call_opts *o, cJSON **resp)
{
	char *nl = memchr(c->rbuf.data ? c->rbuf.data : "", '\n', c->rbuf.len);
	if (!nl)
		return -1;
	size_t n = (size_t)(nl - c->rbuf.data);
	cJSON *msg = n ? cJSON_ParseWithLength(c->rbuf.data, n) : NULL;
	if (!msg && n > 0 && !(n == 1 && c->rbuf.data[0] == '\r')) {
		char *line = xstrndup(c->rbuf.data, n > 200 ? 200 : n);
		mcp_log(c, "warn", "stdout line that is not JSON: %s", line);
		free(line);
	}
	memmove(c->rbuf.data, nl + 1, c->rbuf.len - n - 1);
	c->rbuf.len -= n + 1;
	c->rbuf.data[c->rbuf.len] = '\0';
	if (msg && on_message(c, msg, want_id, o, resp) == 1)
		return 1;
	cJSON_Delete(msg);
	return 0;
}

/* The messages of an HTTP answer's JSON body: one, or a batch. Returns 0
 * (with *resp when the response to want_id was among them), or -1 when
 * the body is not JSON. */
static int http_body_read(struct mcp_client *c, const struct sbuf *b, int64_t want_id,
			  const struct mcp_call_opts *o, cJSON **resp)
{
	cJSON *body = cJSON_ParseWithLength(b->data ? b->data : "", b->len);
	if (!body)
		return -1;
	if (cJSON_IsArray(body)) { /* a batch */
		cJSON *it;
		while ((it = cJSON_DetachItemFromArray(body, 0))) {
			if (!*resp && on_message(c, it, want_id, o, resp) == 1)
				continue;
			cJSON_Delete(it);
		}
		cJSON_Delete(body);
	} else if (on_message(c, body, want_id, o, resp) == 0) {
		cJSON_Delete(body);
	}
	return 0;
}

static int stdio_exchange(struct mcp_client *c, const char *method, const char *text,
			  int64_t id, long timeout_ms, const struct mcp_call_opts *o,
			  cJSON **resp, char **err)
{
	int64_t deadline = util_mono_ns() + (int64_t)timeout_ms * 1000000;
	if (stdio_write(c, text, deadline) < 0) {
		if (errno == ETIMEDOUT) {
			free(stdio_stop(c, false));
			return err_set(err, "server \"%s\": %s timed out after %ld ms (the "
				       "server does not read its input)", c->cfg.name, method,
				       timeout_ms);
		}
		return stdio_gone(c, method, err);
	}
	if (id < 0)
		return 0;
	for (;;) {
		int t;
		while ((t = stdio_take_line(c, id, o, resp)) >= 0) {
			if (t == 1)
				return 0;
			if (c->in_fd < 0) /* a reply failed: the server is gone */
				return stdio_gone(c, method, err);
		}
		if (cancelled(o)) {
			send_cancel(c, id, "cancelled by the client");
			return err_set(err, "server \"%s\": %s cancelled", c->cfg.name, method);
		}
		int64_t left = (deadline - util_mono_ns()) / 1000000;
		if (left <= 0) {
			char *reason = xasprintf("timed out after %ld ms", timeout_ms);
			send_cancel(c, id, reason);
			free(reason);
			return err_set(err, "server \"%s\": %s timed out after %ld ms",
				       c->cfg.name, method, timeout_ms);
		}
		if (o && o->cancel && left > 200)
			left = 200;
		struct pollfd pf[2] = { { c->out_fd, POLLIN, 0 }, { c->err_fd, POLLIN, 0 } };
		int np = c->err_fd >= 0 ? 2 : 1;
		int pr = poll(pf, (nfds_t)np, (int)left);
		if (pr < 0 && errno != EINTR)
			return err_set(err, "server \"%s\": poll: %s", c->cfg.name, strerror(errno));
		if (pr <= 0)
			continue;
		if (np == 2 && pf[1].revents)
			stderr_read(c);
		if (pf[0].revents) {
			char buf[65536];
			ssize_t n = read(c->out_fd, buf, sizeof(buf));
			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				return stdio_gone(c, method, err);
			if (n > 0) {
				if (c->rbuf.len + (size_t)n > MCP_MESSAGE_MAX) {
					free(stdio_stop(c, false));
					return err_set(err, "server \"%s\": a message over %zu bytes; "
						       "the server was stopped", c->cfg.name,
						       MCP_MESSAGE_MAX);
				}
				sbuf_add(&c->rbuf, buf, (size_t)n);
			}
		}
	}
}

static int http_exchange(struct mcp_client *c, const char *method, const char *text,
			 int64_t id, long timeout_ms, const struct mcp_call_opts *o,
			 cJSON **resp, char **err)
{
	struct http_xfer x = { .c = c, .want_id = id, .o = o };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	bool had_session = c->session != NULL;
	struct get_stream g = { 0 };
	int r = http_start(c, text, timeout_ms, o, &x, err);
	if (r == 0) {
		if (id >= 0)
			get_open(c, &g, timeout_ms, o);
		r = http_run(c, &x.done, id >= 0 ? &g : NULL, err);
	}
	if (r < 0)
		goto out;
	if (x.session && !strcmp(method, "initialize")) {
		free(c->session);
		c->session = xstrdup(x.session);
	}
	if (x.resp) {
		*resp = x.resp;
		x.resp = NULL;
		goto out;
	}
	if (x.outcome == HTTP_CANCELLED || (x.outcome == HTTP_FAILED && x.timed_out)) {
		bool to = x.outcome == HTTP_FAILED;
		char *reason = to ? xasprintf("timed out after %ld ms", timeout_ms)
				  : xstrdup("cancelled by the client");
		send_cancel(c, id, reason);
		free(reason);
		r = to ? err_set(err, "server \"%s\": %s timed out after %ld ms", c->cfg.name,
				 method, timeout_ms)
		       : err_set(err, "server \"%s\": %s cancelled", c->cfg.name, method);
		goto out;
	}
	if (x.overflow) {
		r = err_set(err, "server \"%s\": %s: an answer over %zu bytes", c->cfg.name,
			    method, MCP_MESSAGE_MAX);
		goto out;
	}
	if (x.outcome != HTTP_DONE && x.outcome != HTTP_ABORTED) {
		r = err_set(err, "server \"%s\": %s: %s", c->cfg.name, method,
			    x.error ? x.error : "no answer");
		goto out;
	}
	if (x.status == 404 && had_session) {
		r = MCP_EXPIRED;
		goto out;
	}
	if (x.status < 200 || x.status >= 300) {
		char *snip = body_snippet(&x.body);
		r = err_set(err, "server \"%s\": %s: HTTP %ld%s%s", c->cfg.name, method,
			    x.status, *snip ? ": " : "", snip);
		free(snip);
		goto out;
	}
	if (id < 0)
		goto out;
	if (x.sse) {
		r = err_set(err, "server \"%s\": %s: the event stream ended without an answer",
			    c->cfg.name, method);
		goto out;
	}
	if (http_body_read(c, &x.body, id, o, resp) < 0) {
		char *snip = body_snippet(&x.body);
		r = err_set(err, "server \"%s\": %s: the answer is not JSON: %s", c->cfg.name,
			    method, snip);
		free(snip);
		goto out;
	}
	if (!*resp)
		r = err_set(err, "server \"%s\": %s: no answer to request %lld", c->cfg.name,
			    method, (long long)id);
out:
	sse_release(&g.sp);
	xfer_release(&x);
	return r;
}

/* ---- the frames a server sends, outside a call (the fuzzer's) -------- */

int mcp_client_read(struct mcp_client *c, enum mcp_wire kind, const char *const *chunks,
		    const size_t *lens, size_t n, int64_t want_id, cJSON **resp, char **err)
{
	*resp = NULL;
	int r = 0;
	if (kind == MCP_WIRE_STDIO) {
		for (size_t i = 0; i < n && r == 0; i++) {
			if (c->rbuf.len + lens[i] > MCP_MESSAGE_MAX)
				return err_set(err, "server \"%s\": a message over %zu bytes",
					       c->cfg.name, MCP_MESSAGE_MAX);
			sbuf_add(&c->rbuf, chunks[i], lens[i]);
			int t;
			while (r == 0 && (t = stdio_take_line(c, want_id, NULL, resp)) >= 0)
				r = t;
		}
		return r;
	}
	static const char sse_type[] = "text/event-stream", json_type[] = "application/json";
	const char *type = kind == MCP_WIRE_JSON ? json_type : sse_type;
	if (kind == MCP_WIRE_LISTEN) {
		struct get_stream g = { .c = c };
		sse_init(&g.sp, MCP_MESSAGE_MAX, get_event, &g);
		get_header(&g, "Content-Type", 12, type, strlen(type));
		for (size_t i = 0; i < n && r == 0; i++)
			r = get_data(&g, 200, chunks[i], lens[i]);
		sse_release(&g.sp);
		return r < 0 ? err_set(err, "server \"%s\": the GET stream was dropped",
				       c->cfg.name) : 0;
	}
	struct http_xfer x = { .c = c, .want_id = want_id };
	sse_init(&x.sp, MCP_MESSAGE_MAX, xfer_event, &x);
	sbuf_init(&x.body);
	xfer_header(&x, "Content-Type", 12, type, strlen(type));
	for (size_t i = 0; i < n && r == 0; i++)
		r = xfer_data(&x, 200, chunks[i], lens[i]);
	if (x.resp) {
		*resp = x.resp;
		x.resp = NULL;
		r = 1;
	} else if (x.overflow) {
		r = err_set(err, "server \"%s\": an answer over %zu bytes", c->cfg.name,
			    MCP_MESSAGE_MAX);
	} else if (x.error) {
		r = err_set(err, "server \"%s\": %s", c->cfg.name, x.error);
	} else if (!x.sse && http_body_read(c, &x.body, want_id, NULL, resp) < 0) {
		char *snip = body_snippet(&x.body);
		r = err_set(err, "server \"%s\": the answer is not JSON: %s", c->cfg.name, snip);
		free(snip);
	} else {
		r = *resp ? 1 : 0;
	}
	xfer_release(&x);
	return r;
}

/* Sends method and waits for the answer (id < 0: a notification). Returns
 * 0 with *result (for requests), -1 with *err, or MCP_EXPIRED. */
static int exchange(struct mcp_client *c, const char *method, const cJSON *params,
		    long timeout_ms, const struct mcp_call_opts *o, cJSON **result,
		    char **err)
{
	int64_t id = result ? c->next_id++ : -1;
	cJSON *p = params ? cJSON_Duplicate(params, true) : NULL;
	if (id >= 0 && o && o->on_progress) {
		if (!p)
			p = cJSON_CreateObject();
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(p, "_meta");
		if (!meta)
			meta = cJSON_AddObjectToObject(p, "_meta");
		if (cJSON_IsObject(meta) && !cJSON_GetObjectItemCaseSensitive(meta, "progressToken"))
			cJSON_AddNumberToObject(meta, "progressToken", (double)id);
	}
	char *text = message_text(id, method, p);
	cJSON_Delete(p);
	cJSON *resp = NULL;
	int r;
	if (c->cfg.transport == MCP_STDIO)
		r = stdio_exchange(c, method, text, id, timeout_ms, o, &resp, err);
	else if (id < 0)
		r = http_notify(c, text, err) < 0
			    ? err_prefix(err, "server \"%s\": %s", c->cfg.name, method)
			    : 0;
	else
		r = http_exchange(c, method, text, id, timeout_ms, o, &resp, err);
	free(text);
	if (r != 0 || id < 0)
		return r;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(resp, "error");
	cJSON *res = cJSON_DetachItemFromObjectCaseSensitive(resp, "result");
	if (e) {
		const char *m = jstr(e, "message");
		r = err_set(err, "server \"%s\": %s: error %.0f: %s", c->cfg.name, method,
			    jnum(e, "code", 0), m ? m : "(no message)");
		cJSON_Delete(res);
	} else if (!res) {
		r = err_set(err, "server \"%s\": %s: an answer with neither result nor error",
			    c->cfg.name, method);
	} else {
		*result = res;
	}
	cJSON_Delete(resp);
	return r;
}

/* Starts the server (stdio) and initializes a session. */
static int start_locked(struct mcp_client *c, const struct mcp_call_opts *o, char **err)
{
	c->ready = false;
	c->version[0] = '\0';
	if (c->cfg.transport == MCP_STDIO) {
		if (c->pid > 0 || c->out_fd >= 0) {
			char *how = stdio_stop(c, true);
			free(how);
		}
		if (stdio_spawn(c, err) < 0)
			return -1;
	} else {
		free(c->session);
		c->session = NULL;
		c->get_stream = 0;
		free(c->last_event_id);
		c->last_event_id = NULL;
	}
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "protocolVersion", MCP_PROTOCOL_VERSION);
	cJSON_AddObjectToObject(p, "capabilities");
	cJSON *info = cJSON_AddObjectToObject(p, "clientInfo");
	cJSON_AddStringToObject(info, "name", "madf");
	cJSON_AddStringToObject(info, "version", MADF_VERSION);
	struct mcp_call_opts io = { .timeout_ms = MCP_INIT_TIMEOUT_MS,
				    .cancel = o ? o->cancel : NULL };
	cJSON *res = NULL;
	int r = exchange(c, "initialize", p, io.timeout_ms, &io, &res, err);
	cJSON_Delete(p);
	if (r == MCP_EXPIRED)
		r = err_set(err, "server \"%s\": initialize: HTTP 404", c->cfg.name);
	const char *v = r == 0 ? jstr(res, "protocolVersion") : NULL;
	if (r == 0) {
		bool ok = false;
		for (size_t i = 0; v && i < ARRAY_SIZE(mcp_versions); i++)
			ok = ok || !strcmp(v, mcp_versions[i]);
		if (!ok)
			r = err_set(err, "server \"%s\" answered protocol version \"%.40s\"; "
				    "madf offers %s and also accepts %s and %s", c->cfg.name,
				    v ? v : "(none)", mcp_versions[0], mcp_versions[1],
				    mcp_versions[2]);
	}
	if (r == 0) {
		util_strlcpy(c->version, v, sizeof(c->version));
		const cJSON *si = cJSON_GetObjectItemCaseSensitive(res, "serverInfo");
		const char *sn = jstr(si, "name"), *sv = jstr(si, "version");
		mcp_log(c, "info", "initialized: protocol %s, server %s %s", c->version,
			sn ? sn : "?", sv ? sv : "?");
		r = exchange(c, "notifications/initialized", NULL, MCP_NOTIFY_TIMEOUT_MS, o,
			     NULL, err);
		if (r == MCP_EXPIRED)
			r = err_set(err, "server \"%s\": notifications/initialized: HTTP 404",
				    c->cfg.name);
	}
	cJSON_Delete(res);
	if (r < 0) {
		c->version[0] = '\0';
		if (c->cfg.transport == MCP_STDIO)
			free(stdio_stop(c, false));
		mcp_log(c, "error", "%s", err && *err ? *err : "initialize failed");
		return -1;
	}
	c->ready = true;
	return 0;
}

int mcp_client_start(struct mcp_client *c, const struct mcp_call_opts *o, char **err)
{
	pthread_mutex_lock(&c->mu);
	int r = c->ready ? 0 : start_locked(c, o, err);
	pthread_mutex_unlock(&c->mu);
	if (r < 0)
		redact_err(c, err);
	return r;
}

int mcp_request(struct mcp_client *c, const char *method, cJSON *params,
		const struct mcp_call_opts *o, cJSON **result, char **err)
{
	*result = NULL;
	long timeout_ms = timeout_of(o);
	pthread_mutex_lock(&c->mu);
	int r = 0;
	bool started = false;
	if (!c->ready) {
		r = start_locked(c, o, err);
		started = true;
	}
	if (r == 0) {
		r = exchange(c, method, params, timeout_ms, o, result, err);
		if (r == MCP_EXPIRED && !started) {
			mcp_log(c, "info", "session expired (HTTP 404): initializing again");
			r = start_locked(c, o, err);
			if (r == 0)
				r = exchange(c, method, params, timeout_ms, o, result, err);
		}
		if (r == MCP_EXPIRED)
			r = err_set(err, "server \"%s\": %s: HTTP 404 (session expired)",
				    c->cfg.name, method);
	}
	pthread_mutex_unlock(&c->mu);
	cJSON_Delete(params);
	if (r < 0)
		redact_err(c, err);
	return r < 0 ? -1 : 0;
}

int mcp_list_tools(struct mcp_client *c, const struct mcp_call_opts *o, cJSON **tools,
		   char **err)
{
	*tools = cJSON_CreateArray();
	char *cursor = NULL;
	for (int page = 0;; page++) {
		if (page >= MCP_MAX_PAGES) {
			free(cursor);
			cJSON_Delete(*tools);
			*tools = NULL;
			return err_set(err, "server \"%s\": tools/list: more than %d pages",
				       c->cfg.name, MCP_MAX_PAGES);
		}
		cJSON *p = NULL;
		if (cursor) {
			p = cJSON_CreateObject();
			cJSON_AddStringToObject(p, "cursor", cursor);
		}
		cJSON *res = NULL;
		if (mcp_request(c, "tools/list", p, o, &res, err) < 0) {
			free(cursor);
			cJSON_Delete(*tools);
			*tools = NULL;
			return -1;
		}
		cJSON *arr = cJSON_GetObjectItemCaseSensitive(res, "tools");
		if (!cJSON_IsArray(arr)) {
			cJSON_Delete(res);
			free(cursor);
			cJSON_Delete(*tools);
			*tools = NULL;
			return err_set(err, "server \"%s\": tools/list: no \"tools\" array",
				       c->cfg.name);
		}
		cJSON *t;
		while ((t = cJSON_DetachItemFromArray(arr, 0)))
			cJSON_AddItemToArray(*tools, t);
		const char *next = jstr(res, "nextCursor");
		bool same = next && cursor && !strcmp(next, cursor);
		free(cursor);
		cursor = next && *next && !same ? xstrdup(next) : NULL;
		cJSON_Delete(res);
		if (same)
			return err_set(err, "server \"%s\": tools/list: the same cursor twice",
				       c->cfg.name);
		if (!cursor)
			return 0;
	}
}

int mcp_call_tool(struct mcp_client *c, const char *tool, const cJSON *args,
		  const struct mcp_call_opts *o, cJSON **result, char **err)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", tool);
	cJSON_AddItemToObject(p, "arguments",
			      args ? cJSON_Duplicate(args, true) : cJSON_CreateObject());
	if (mcp_request(c, "tools/call", p, o, result, err) < 0)
		return -1;
	if (!cJSON_IsObject(*result)) {
		cJSON_Delete(*result);
		*result = NULL;
		return err_set(err, "server \"%s\": tools/call: the result is not an object",
			       c->cfg.name);
	}
	return 0;
}

void mcp_client_free(struct mcp_client **cp)
{
	struct mcp_client *c = cp ? *cp : NULL;
	if (!c)
		return;
	if (c->cfg.transport == MCP_STDIO) {
		char *how = stdio_stop(c, true);
		if (how)
			mcp_log(c, "info", "stopped: %s", how);
		free(how);
	}
	http_end_session(c);
	http_multi_free(&c->m);
	free(c->session);
	free(c->last_event_id);
	sbuf_release(&c->rbuf);
	sbuf_release(&c->ebuf);
	for (size_t i = 0; i < c->nsecrets; i++)
		free(c->secrets[i]);
	free(c->secrets);
	if (c->log_fd >= 0)
		close(c->log_fd);
	free(c->log_path);
	pthread_mutex_destroy(&c->mu);
	server_config_release(&c->cfg);
	free(c);
	*cp = NULL;
}

char *mcp_content_text(const cJSON *result)
{
	struct sbuf b;
	sbuf_init(&b);
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(result, "content");
	const cJSON *blk;
	cJSON_ArrayForEach(blk, content) {
		const char *type = jstr(blk, "type");
		if (b.len)
			sbuf_addch(&b, '\n');
		if (!type) {
			sbuf_addstr(&b, "[a content block without a type]");
		} else if (!strcmp(type, "text")) {
			const char *t = jstr(blk, "text");
			sbuf_addstr(&b, t ? t : "");
		} else if (!strcmp(type, "image") || !strcmp(type, "audio")) {
			const char *mime = jstr(blk, "mimeType"), *data = jstr(blk, "data");
			sbuf_addf(&b, "[%s %s, %zu bytes]", type, mime ? mime : "?",
				  data ? strlen(data) / 4 * 3 : 0);
		} else if (!strcmp(type, "resource_link")) {
			const char *name = jstr(blk, "name"), *uri = jstr(blk, "uri");
			sbuf_addf(&b, "[resource %s%s%s]", name ? name : "", name ? " " : "",
				  uri ? uri : "");
		} else if (!strcmp(type, "resource")) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(blk, "resource");
			const char *t = jstr(r, "text"), *uri = jstr(r, "uri");
			if (t)
				sbuf_addstr(&b, t);
			else
				sbuf_addf(&b, "[resource %s]", uri ? uri : "");
		} else {
			sbuf_addf(&b, "[%s content]", type);
		}
	}
	return sbuf_detach(&b);
}
