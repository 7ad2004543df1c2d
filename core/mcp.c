/* The MCP client: see core/mcp.h. This file: the client, messages from
 * the server, one exchange and the calls; the configuration, the stdio
 * and the HTTP transports are in mcp_config.c, mcp_stdio.c and
 * mcp_http.c, behind core/mcp_priv.h. */
#include "core/mcp_priv.h"

#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/http.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define MCP_MAX_PAGES 1000

static const char *const mcp_versions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };

/* ---- the client ------------------------------------------------------- */

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

void mcp_log(struct mcp_client *c, const char *what, const char *fmt, ...)
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
	mcp_server_config_copy(&c->cfg, cfg);
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

bool mcp_cancelled(const struct mcp_call_opts *o)
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

/* ---- messages from the server ----------------------------------------- */

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
int mcp_on_message(struct mcp_client *c, cJSON *msg, int64_t want_id,
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
			mcp_send_message(c, text);
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

void mcp_send_cancel(struct mcp_client *c, int64_t id, const char *reason)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "requestId", (double)id);
	cJSON_AddStringToObject(p, "reason", reason);
	char *text = message_text(-1, "notifications/cancelled", p);
	cJSON_Delete(p);
	if (c->cfg.transport == MCP_STDIO) {
		mcp_send_message(c, text);
	} else {
		char *e = NULL;
		if (mcp_http_notify(c, text, &e) < 0)
			mcp_log(c, "warn", "notifications/cancelled: %s", e);
		free(e);
	}
	mcp_log(c, "info", "cancelled request %lld: %s", (long long)id, reason);
	free(text);
}

/* ---- one exchange ----------------------------------------------------- */

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
		r = mcp_stdio_exchange(c, method, text, id, timeout_ms, o, &resp, err);
	else if (id < 0)
		r = mcp_http_notify(c, text, err) < 0
			    ? err_prefix(err, "server \"%s\": %s", c->cfg.name, method)
			    : 0;
	else
		r = mcp_http_exchange(c, method, text, id, timeout_ms, o, &resp, err);
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
			char *how = mcp_stdio_stop(c, true);
			free(how);
		}
		if (mcp_stdio_spawn(c, err) < 0)
			return -1;
	} else {
		mcp_http_listen_stop(c); /* the old session's */
		free(c->session);
		c->session = NULL;
		c->get_stream = 0;
		free(c->last_event_id);
		c->last_event_id = NULL;
		free(c->get_lost);
		c->get_lost = NULL;
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
			free(mcp_stdio_stop(c, false));
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
		char *how = mcp_stdio_stop(c, true);
		if (how)
			mcp_log(c, "info", "stopped: %s", how);
		free(how);
	}
	mcp_http_end_session(c);
	mcp_http_listen_stop(c);
	http_multi_free(&c->m);
	free(c->session);
	free(c->last_event_id);
	free(c->get_lost);
	sbuf_release(&c->rbuf);
	sbuf_release(&c->ebuf);
	for (size_t i = 0; i < c->nsecrets; i++)
		free(c->secrets[i]);
	free(c->secrets);
	if (c->log_fd >= 0)
		close(c->log_fd);
	free(c->log_path);
	pthread_mutex_destroy(&c->mu);
	mcp_server_config_release(&c->cfg);
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
