/* madf serve's HTTP server: libmicrohttpd polling every connection with
 * epoll from a few threads (a stream with nothing to send is
 * suspended until its conversation records an event: server/stream.c), POST
 * /api/chat/multi with bearer tokens, Host and Origin allow-lists, the
 * seed's error bodies, and a draining shutdown on SIGTERM. */
#include "server/conv_priv.h"
#include "server/serve_bus.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "agents/data_tools.h"
#include "agents/llm_agent.h"
#include "agents/mcp_tools.h"
#include "agents/runtime.h"
#include "core/cache.h"
#include "core/tools.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

#define API_PATH "/api/chat/multi"
#define METRICS_PATH "/api/metrics"
#define MAX_CONNECTIONS 256 /* MADF_SERVE_MAX_CONNECTIONS */
/* A stream response's own buffer (libmicrohttpd callocs it with the
 * response, and uses it only for an HTTP/1.0 client: HTTP/1.1's chunks are
 * read into the connection's pool). Events are a few hundred bytes, and
 * one larger goes out in pieces: 32 KB here cost about 15 KB of resident
 * memory per open stream (madf bench serve). */
#define STREAM_BLOCK 2048

struct server {
	const struct serve_options *opt;
	char *tokens_path;
	struct serve_agents agents;
	struct llm_agent_settings *llm;  /* NULL: no model (503) */
	char *hosts[4];            /* allowed Host values */
	char *extra_hosts;         /* MADF_SERVE_HOSTS, comma-separated */
	unsigned port;
	bool tls;
	size_t nhosts;
	char *origins;             /* MADF_SERVE_ORIGINS, comma-separated */
	struct agent_env env;      /* the tool registry and its data sources */
	bool env_open;
	struct mcp_tools *mcp;
	struct serve_limits *limits;
	char *sessions_dir;        /* the conversations' events */
	volatile int draining;
};

struct req {
	struct server *s;
	struct sbuf body;
	bool too_big;
	char user[SERVE_USER_MAX + 1]; /* once authenticated */
	long retry_after;              /* a 429's Retry-After */
	char *admitted;                /* the RateLimit its admission left (owned) */
	const char *allow;             /* a 405's Allow */
	int64_t trace[TR_N];           /* MADF_SERVE_TRACE's marks (0: none) */
};

/* A mark of q's trace (when MADF_SERVE_TRACE is set). */
static void mark(struct req *q, int m)
{
	if (serve_trace_on())
		q->trace[m] = util_mono_ns();
}

/* MADF_SERVE_TRACE: when each connection was accepted (its socket
 * context, a time of its own). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED && serve_trace_on()) {
		int64_t *t = xcalloc(1, sizeof(*t));
		*t = util_mono_ns();
		*socket_context = t;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		free(*socket_context);
		*socket_context = NULL;
	}
}

static void slog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void slog(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *safe = util_sanitize(m, strlen(m), false);
	fprintf(stderr, "madf: serve: %s\n", safe);
	free(safe);
	free(m);
}

/* The rate-limit fields every response carries: the policy always, the
 * user's remaining quota once the request is authenticated; for an
 * admitted conversation, what its admission left (q->admitted): its set-up
 * runs meanwhile, and a set-up that failed at once has refunded it
 * already. */
static void add_limit_headers(const struct req *q, struct MHD_Response *r)
{
	char *v = serve_limits_policy_header(q->s->limits);
	MHD_add_response_header(r, "RateLimit-Policy", v);
	free(v);
	if (q->admitted) {
		MHD_add_response_header(r, "RateLimit", q->admitted);
	} else if (q->user[0]) {
		v = serve_limits_header(q->s->limits, q->user, util_now_ns() / 1000000000LL);
		MHD_add_response_header(r, "RateLimit", v);
		free(v);
	}
}

static enum MHD_Result send_json(struct req *q, struct MHD_Connection *conn, int status,
				 char *body, const char *www_auth)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	add_limit_headers(q, r);
	if (status == 429) {
		char ra[24];
		snprintf(ra, sizeof(ra), "%ld", q->retry_after);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (www_auth)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, www_auth);
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, q->allow ? q->allow : "POST");
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_error(struct req *q, struct MHD_Connection *conn,
				  struct serve_error *e, const char *www_auth)
{
	char *body = serve_error_body(e);
	enum MHD_Result r = send_json(q, conn, e->status, body, www_auth);
	serve_error_release(e);
	return r;
}

static enum MHD_Result refuse(struct req *q, struct MHD_Connection *conn, int status,
			      const char *code,
			      const char *error, const char *field, const char *message)
{
	struct serve_error e = { .status = status, .code = code, .error = error, .field = field,
				 .message = message ? xstrdup(message) : NULL };
	return send_error(q, conn, &e, NULL);
}

/* Whether the comma-separated list has item (case-insensitive). */
bool serve_in_list(const char *list, const char *item, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		while (k && *p == ' ')
			p++, k--;
		if (k == n && !strncasecmp(p, item, n))
			return true;
		p += k + (e ? 1 : 0);
	}
	return false;
}

/* host: the Host header's value, or an Origin's after the scheme. The
 * server's own names with its port, or MADF_SERVE_HOSTS's names (with or
 * without the port). */
static bool host_ok(const struct server *s, const char *host)
{
	if (!host)
		return false;
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcasecmp(host, s->hosts[i]))
			return true;
	if (serve_in_list(s->extra_hosts, host, strlen(host)))
		return true;
	char suffix[16];
	snprintf(suffix, sizeof(suffix), ":%u", s->port);
	size_t n = strlen(host), k = strlen(suffix);
	return n > k && !strcasecmp(host + n - k, suffix) && serve_in_list(s->extra_hosts, host, n - k);
}

static bool origin_ok(const struct server *s, const char *origin)
{
	if (!origin)
		return true; /* not a browser */
	const char *scheme = s->tls ? "https://" : "http://";
	size_t sl = strlen(scheme);
	if (!strncasecmp(origin, scheme, sl) && host_ok(s, origin + sl))
		return true;
	return serve_in_list(s->origins, origin, strlen(origin));
}

/* The token file as last read: reread only when its lstat changes (a
 * token added or revoked rewrites it; a chmod changes its ctime), so that
 * a request costs one lstat, not the file opened, read and parsed. */
static struct {
	pthread_rwlock_t lk;
	bool have;
	bool absent;  /* no file: no tokens */
	struct stat st;
	struct serve_tokens t;
} tokc = { .lk = PTHREAD_RWLOCK_INITIALIZER };

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mode == b->st_mode &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Whether tok (len bytes) is a token of the file at path, its user copied
 * to user; -1 with *err when the file cannot be read (or is open to
 * others). */
static int tokens_check(const char *path, const char *tok, size_t len,
			char user[SERVE_USER_MAX + 1], char **err)
{
	struct stat st;
	int sr = lstat(path, &st);
	bool absent = sr < 0 && errno == ENOENT;
	pthread_rwlock_rdlock(&tokc.lk);
	bool fresh = tokc.have && (absent ? tokc.absent : sr == 0 && !tokc.absent &&
				   same_stat(&st, &tokc.st));
	if (!fresh) {
		pthread_rwlock_unlock(&tokc.lk);
		/* read with the stat taken before it: a change meanwhile is
		 * seen at the next request */
		struct serve_tokens t;
		if (serve_tokens_load(path, &t, err) < 0) {
			pthread_rwlock_wrlock(&tokc.lk);
			tokc.have = false;
			pthread_rwlock_unlock(&tokc.lk);
			return -1;
		}
		pthread_rwlock_wrlock(&tokc.lk);
		serve_tokens_free(&tokc.t);
		tokc.t = t;
		tokc.absent = absent;
		if (sr == 0)
			tokc.st = st;
		tokc.have = sr == 0 || absent;
	}
	const char *u = serve_tokens_check(&tokc.t, tok, len);
	if (u)
		util_strlcpy(user, u, SERVE_USER_MAX + 1);
	pthread_rwlock_unlock(&tokc.lk);
	return u ? 1 : 0;
}

/* Authenticates q by its bearer token (q->user set): true, or false after
 * answering 401 (or 500: the token file cannot be read). */
static bool authenticate(struct server *s, struct req *q, struct MHD_Connection *conn,
			 enum MHD_Result *ret)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	char *err = NULL;
	bool bearer = h && !strncasecmp(h, "Bearer ", 7);
	const char *tok = bearer ? h + 7 : "";
	while (*tok == ' ')
		tok++;
	int r = tokens_check(s->tokens_path, tok, strlen(tok), q->user, &err);
	if (r < 0) {
		slog("%s", err);
		free(err);
		*ret = refuse(q, conn, 500, "INTERNAL_ERROR", "Internal server error", NULL,
			      "the server's token file cannot be read (see its log)");
		return false;
	}
	if (r == 0 || !bearer) {
		q->user[0] = '\0';
		struct serve_error e = {
			.status = 401, .code = "UNAUTHORIZED", .error = "Authentication required",
			.field = "Authorization",
			.message = xstrdup(bearer ? "the bearer token is not valid" :
					   "an Authorization: Bearer token is required"),
		};
		*ret = send_error(q, conn, &e, bearer ? "Bearer realm=\"madf\", error=\"invalid_token\"" :
					       "Bearer realm=\"madf\"");
		return false;
	}
	return true;
}

bool serve_json_type(const char *ct)
{
	if (!ct)
		return false;
	size_t n = strlen("application/json");
	if (strncasecmp(ct, "application/json", n))
		return false;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

/* The session of API_PATH/{sessionId}/WHAT (24 hex digits, as conv_start
 * makes them; a pointer into a static copy per thread) with *what
 * "cancel" or "events", or NULL. */
const char *serve_session_of(const char *url, const char **what)
{
	static _Thread_local char id[25];
	size_t n = strlen(API_PATH);
	if (strncmp(url, API_PATH "/", n + 1))
		return NULL;
	const char *p = url + n + 1;
	if (strlen(p) < 25 || p[24] != '/')
		return NULL;
	if (!strcmp(p + 25, "cancel"))
		*what = "cancel";
	else if (!strcmp(p + 25, "events"))
		*what = "events";
	else
		return NULL;
	memcpy(id, p, 24);
	id[24] = '\0';
	return convlog_session_ok(id) ? id : NULL;
}

/* Last-Event-ID: 0 when absent, the id, or -1 when it is not a number
 * of this server's (digits, at most 18). */
long serve_last_event_id(const char *v)
{
	if (!v)
		return 0;
	while (*v == ' ')
		v++;
	if (!*v)
		return 0;
	long x = 0;
	size_t k = 0;
	for (; v[k] >= '0' && v[k] <= '9'; k++) {
		if (k >= 18)
			return -1;
		x = x * 10 + (v[k] - '0');
	}
	while (v[k] == ' ')
		v++;
	return v[k] ? -1 : x;
}

/* An SSE response reading stream st. */
static enum MHD_Result send_stream(struct req *q, struct MHD_Connection *conn,
				   struct conv_stream *st)
{
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
								   conv_stream_read, st,
								   conv_stream_free);
	if (!r) {
		conv_stream_free(st);
		return MHD_NO;
	}
	conv_stream_attach(st, conn);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	add_limit_headers(q, r);
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	conv_stream_mark(st, TR_QUEUED);
	return ret;
}

/* GET API_PATH/{session}/events for q->user. */
static enum MHD_Result resume(struct server *s, struct req *q, struct MHD_Connection *conn,
			      const char *session)
{
	long last = serve_last_event_id(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Last-Event-ID"));
	if (last < 0)
		return refuse(q, conn, 400, "VALIDATION_ERROR", "Invalid request format",
			      "Last-Event-ID", "Last-Event-ID must be an event's id (its seq)");
	struct conv_stream *st = NULL;
	char *err = NULL;
	int r = conv_resume(s->sessions_dir, session, q->user, last, &st, &err);
	if (r < 0) {
		slog("%s", err);
		free(err);
		return refuse(q, conn, 500, "INTERNAL_ERROR", "Internal server error", NULL,
			      "the conversation's events cannot be read (see the server's log)");
	}
	if (r == 1)
		return refuse(q, conn, 404, "NOT_FOUND", "Not found", "sessionId",
			      "you have no conversation with this sessionId");
	if (r == 2) {
		/* Ended, and the client has it all: 204 tells EventSource to stop. */
		struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL,
									    MHD_RESPMEM_PERSISTENT);
		add_limit_headers(q, resp);
		enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_NO_CONTENT, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	return send_stream(q, conn, st);
}

/* GET /api/metrics: JSON, or the Prometheus text format for ?format=prometheus
 * or an Accept naming text/plain (a scraper's) without ?format=json. */
static enum MHD_Result send_metrics(struct server *s, struct req *q, struct MHD_Connection *conn)
{
	const char *f = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "format");
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	if (f && strcmp(f, "json") && strcmp(f, "prometheus"))
		return refuse(q, conn, 400, "VALIDATION_ERROR", "Invalid request format", "format",
			      "format must be json or prometheus");
	bool prom = f ? !strcmp(f, "prometheus") : a && strcasestr(a, "text/plain");
	char *body = serve_metrics(s->sessions_dir, prom, q->user);
	if (!prom)
		return send_json(q, conn, 200, body, NULL);
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	add_limit_headers(q, r);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Whether the client asked for text/event-stream (an SSE client: its
 * stream gets `id:` lines; the seed's fetch client sends no such Accept). */
static bool wants_sse(struct MHD_Connection *conn)
{
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	return a && strcasestr(a, "text/event-stream");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **con_cls)
{
	(void)version;
	struct server *s = cls;
	struct req *q = *con_cls;
	if (!q) {
		q = xcalloc(1, sizeof(*q));
		q->s = s;
		sbuf_init(&q->body);
		*con_cls = q;
		if (serve_trace_on()) {
			const union MHD_ConnectionInfo *ci =
				MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
			const int64_t *at = ci ? ci->socket_context : NULL;
			q->trace[TR_ACCEPT] = at ? *at : 0;
			mark(q, TR_HEADERS);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (q->body.len + *upload_size > SERVE_BODY_MAX)
			q->too_big = true;
		else
			sbuf_add(&q->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	mark(q, TR_BODY);
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!host_ok(s, host))
		return refuse(q, conn, 403, "FORBIDDEN", "Host not allowed", "Host",
			      "the Host header is not one this server answers to");
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (!origin_ok(s, origin))
		return refuse(q, conn, 403, "FORBIDDEN", "Origin not allowed", "Origin",
			      "this Origin is not allowed (MADF_SERVE_ORIGINS lists more)");
	const char *what = NULL;
	const char *session = serve_session_of(url, &what);
	bool events = session && !strcmp(what, "events");
	bool metrics = !strcmp(url, METRICS_PATH);
	if (strcmp(url, API_PATH) && !session && !metrics)
		return refuse(q, conn, 404, "NOT_FOUND", "Not found", NULL, NULL);
	if (strcmp(method, events || metrics ? "GET" : "POST")) {
		q->allow = events || metrics ? "GET" : "POST";
		return refuse(q, conn, 405, "METHOD_NOT_ALLOWED", "Method not allowed", NULL,
			      events ? "use GET" : "use POST");
	}
	if (s->draining)
		return refuse(q, conn, 503, "SERVER_SHUTDOWN", "The server is shutting down", NULL,
			      NULL);
	enum MHD_Result ret = MHD_NO;
	if (!authenticate(s, q, conn, &ret))
		return ret;
	mark(q, TR_AUTH);
	if (metrics)
		return send_metrics(s, q, conn);
	if (events)
		return resume(s, q, conn, session);
	if (session) {
		if (conv_cancel(session, q->user) < 0)
			return refuse(q, conn, 404, "NOT_FOUND", "Not found", "sessionId",
				      "you have no running conversation with this sessionId");
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "sessionId", session);
		cJSON_AddBoolToObject(o, "cancelled", true);
		char *body = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
		return send_json(q, conn, 200, body, NULL);
	}
	const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!serve_json_type(ct))
		return refuse(q, conn, 400, "VALIDATION_ERROR", "Invalid request format",
			      "Content-Type", "the body must be application/json");
	if (q->too_big) {
		char *m = xasprintf("the body is over %zu bytes", SERVE_BODY_MAX);
		ret = refuse(q, conn, 400, "VALIDATION_ERROR", "Invalid request format", "body", m);
		free(m);
		return ret;
	}
	struct serve_request rq;
	struct serve_error e;
	if (serve_request_parse(q->body.data ? q->body.data : "", q->body.len, &s->agents, &rq,
				&e) < 0)
		return send_error(q, conn, &e, NULL);
	mark(q, TR_VALID);
	if (!s->llm) {
		serve_request_release(&rq);
		return refuse(q, conn, 503, "MODEL_NOT_CONFIGURED", "No model configured", NULL,
			      "set ANTHROPIC_API_KEY and CLAUDE_MODEL_EXECUTION (or OPENAI_API_KEY "
			      "and OPENAI_MODEL) for madf serve");
	}
	long resv = 0;
	const char *which = NULL;
	char *err = NULL;
	int a = serve_limits_admit(s->limits, q->user, rq.rounds, util_now_ns() / 1000000000LL,
				   &resv, &which, &q->retry_after, &q->admitted, &err);
	if (a != 0) {
		serve_request_release(&rq);
		if (a < 0) {
			slog("%s", err);
			free(err);
			return refuse(q, conn, 500, "INTERNAL_ERROR", "Internal server error", NULL,
				      "the server cannot record the rate limits (see its log)");
		}
		const struct serve_limits_policy *p = serve_limits_policy_of(s->limits);
		char *m = !strcmp(which, "conv-hour") ?
			  xasprintf("%ld conversations an hour: try again in %ld s",
				    p->conv_per_hour, q->retry_after) :
			  !strcmp(which, "concurrent") ?
			  xasprintf("%ld conversations at once: wait for one to end", p->concurrent) :
			  xasprintf("%ld rounds a day: %d more do not fit; try again in %ld s",
				    p->rounds_per_day, rq.rounds, q->retry_after);
		ret = refuse(q, conn, 429, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded", which, m);
		free(m);
		return ret;
	}
	mark(q, TR_ADMIT);
	struct conv_env env = { .llm = s->llm, .reg = s->env.tools, .lim = s->limits,
				.dir = s->sessions_dir, .initiator = s->agents.initiator,
				.verbose = s->opt->verbose,
				.trace = serve_trace_on() ? q->trace : NULL };
	struct conv_stream *st = conv_start(&rq, &env, q->user, resv, wants_sse(conn), &err);
	if (!st) {
		slog("%s", err);
		free(err);
		/* refunded: the refusal says what is left now */
		free(q->admitted);
		q->admitted = NULL;
		return refuse(q, conn, 500, "INTERNAL_ERROR", "Internal server error", NULL,
			      "the conversation cannot be recorded (see the server's log)");
	}
	conv_stream_mark(st, TR_START);
	return send_stream(q, conn, st);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	struct req *q = *con_cls;
	if (q) {
		sbuf_release(&q->body);
		free(q->admitted);
		free(q);
		*con_cls = NULL;
	}
}

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return false;
}

/* Opens the listening socket of ADDR:PORT; its fd and port, or -1. */
static int open_listener(const struct serve_options *o, unsigned *port, char **host_out,
			 char **err)
{
	const char *colon = strrchr(o->listen, ':');
	if (!colon || colon == o->listen || !colon[1])
		return err_set(err, "--listen: \"%s\" is not ADDR:PORT", o->listen);
	char *host = xstrndup(o->listen, (size_t)(colon - o->listen));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host) - 2);
		host[strlen(host) - 2] = '\0';
	}
	char *end;
	errno = 0;
	long p = strtol(colon + 1, &end, 10);
	if (errno || *end || p < 0 || p > 65535) {
		free(host);
		return err_set(err, "--listen: \"%s\" is not a port (0 to 65535)", colon + 1);
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(host, colon + 1, &hints, &ai);
	if (g != 0) {
		err_set(err, "--listen: %s: %s", host, gai_strerror(g));
		free(host);
		return -1;
	}
	int fd = -1;
	if (!loopback(ai->ai_addr) && !o->behind_tls_proxy && !o->tls_cert) {
		err_set(err, "--listen %s is beyond loopback: bearer tokens need TLS there. "
			"Give --tls-cert and --tls-key, or --behind-tls-proxy when a TLS proxy "
			"fronts madf", o->listen);
		goto out;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* A backlog for many clients connecting at once (the kernel caps it
	 * at net.core.somaxconn): a full one drops SYNs, retried after 1 s. */
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 4096) < 0) {
		err_set(err, "cannot listen on %s: %s", o->listen, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
		goto out;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
						((struct sockaddr_in6 *)&ss)->sin6_port);
	*host_out = host;
	host = NULL;
out:
	freeaddrinfo(ai);
	free(host);
	return fd;
}

static void tools_warn(void *ctx, const char *msg)
{
	(void)ctx;
	slog("warning: %s", msg);
}

/* The tool registry the agents call (the built-in data tools on the
 * simulated sources, and the tools of the MCP servers of .mcp.json), and
 * every agent's tools checked against it. */
static int tools_setup(struct server *s, char **err)
{
	const struct serve_options *o = s->opt;
	agent_env_init(&s->env, o->data_dir, o->log_dir);
	s->env_open = true;
	struct mcp_tools_opts mo = { .config_path = o->mcp_config, .log_dir = o->log_dir,
				     .warn = tools_warn };
	if (cache_open(s->env.data_dir, &s->env.cache, err) < 0 ||
	    tools_open(s->env.data_dir, s->env.log_dir, s->env.cache, &s->env.tools, err) < 0 ||
	    data_tools_register(&s->env, err) < 0 ||
	    mcp_tools_open(s->env.tools, &mo, &s->mcp, err) < 0)
		return -1;
	for (size_t i = 0; i <= s->agents.n; i++) {
		const struct serve_agent *a = i < s->agents.n ? &s->agents.v[i] : s->agents.initiator;
		if (!a)
			continue;
		for (size_t k = 0; k < a->ntools; k++) {
			char *d = NULL, *sc = NULL, *e2 = NULL;
			if (tools_describe(s->env.tools, a->tools[k], &d, &sc, &e2) < 0) {
				free(e2);
				return err_set(err, "%s: agent \"%s\": no tool \"%s\" in the registry "
					       "(see madf tools list)", s->agents.path, a->name,
					       a->tools[k]);
			}
			free(d);
			free(sc);
		}
	}
	return 0;
}

/* Reads a PEM file for TLS; a key must be readable by its owner only. */
static char *read_pem(const char *path, bool key, char **err)
{
	char *buf = NULL;
	size_t len = 0;
	struct stat st;
	if (stat(path, &st) < 0) {
		err_set(err, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (key && (st.st_mode & 077)) {
		err_set(err, "%s is accessible by group or others (mode %04o): run chmod 600 %s",
			path, (unsigned)(st.st_mode & 07777), path);
		return NULL;
	}
	if (util_read_file(path, (size_t)1 << 20, &buf, &len, err) < 0)
		return NULL;
	if (!strstr(buf, "-----BEGIN ")) {
		err_set(err, "%s is not a PEM file", path);
		free(buf);
		return NULL;
	}
	return buf;
}

/* An integer setting from the environment, def when unset or out of range. */
static long env_long(const char *name, long def, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long x = v && *v ? strtol(v, &end, 10) : def;
	return v && *v && (*end || x < lo || x > hi) ? def : x;
}

static void limits_flush(struct server *s)
{
	char *err = NULL;
	if (serve_limits_flush(s->limits, &err) < 0) {
		slog("warning: %s (the journal keeps the changes)", err);
		free(err);
	}
}

static void server_release(struct server *s)
{
	convlog_journal_close();
	pthread_rwlock_wrlock(&tokc.lk);
	serve_tokens_free(&tokc.t);
	tokc.have = false;
	pthread_rwlock_unlock(&tokc.lk);
	if (s->env_open) {
		if (s->env.tools)
			tools_save_usage(s->env.tools, NULL);
		mcp_tools_free(&s->mcp);
		data_tools_release(&s->env);
		tools_free(&s->env.tools);
		cache_free(&s->env.cache);
		agent_env_release(&s->env);
	}
	free(s->tokens_path);
	free(s->sessions_dir);
	serve_limits_free(&s->limits);
	serve_agents_free(&s->agents);
	llm_agent_settings_free(&s->llm);
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
}

int serve_run(const struct serve_options *o, char **err)
{
	struct server s = { .opt = o };
	s.tokens_path = serve_tokens_path(o->data_dir);
	s.sessions_dir = convlog_dir(o->data_dir);
	struct serve_tokens t;
	/* A token file others can read stops the server here, not per request. */
	if (serve_tokens_load(s.tokens_path, &t, err) < 0) {
		server_release(&s);
		return EXIT_FAIL;
	}
	if (!t.n)
		slog("no tokens yet: make one with `madf serve token add USER`");
	serve_tokens_free(&t);
	if (serve_agents_load(o->data_dir, &s.agents, err) < 0 ||
	    serve_limits_open(o->data_dir, NULL, &s.limits, err) < 0 ||
	    llm_agent_settings_from_env(&s.llm, err) < 0 || tools_setup(&s, err) < 0) {
		server_release(&s);
		return EXIT_FAIL;
	}
	/* Sessions the last server left without a final event get one; old
	 * ones go. */
	convlog_recover(s.sessions_dir, env_long("MADF_SERVE_KEEP_DAYS", 7, 1, 3650), s.limits);
	if (convlog_journal_open(s.sessions_dir, err) < 0) {
		server_release(&s);
		return EXIT_FAIL;
	}
	unsigned port = 0;
	char *host = NULL;
	int fd = open_listener(o, &port, &host, err);
	if (fd < 0) {
		server_release(&s);
		return EXIT_FAIL;
	}
	bool v6 = strchr(host, ':') != NULL;
	s.hosts[s.nhosts++] = xasprintf(v6 ? "[%s]:%u" : "%s:%u", host, port);
	s.hosts[s.nhosts++] = xasprintf("localhost:%u", port);
	if (strcmp(host, "127.0.0.1"))
		s.hosts[s.nhosts++] = xasprintf("127.0.0.1:%u", port);
	if (strcmp(host, "::1"))
		s.hosts[s.nhosts++] = xasprintf("[::1]:%u", port);
	free(host);
	s.origins = getenv("MADF_SERVE_ORIGINS");
	s.extra_hosts = getenv("MADF_SERVE_HOSTS");
	s.port = port;
	char *cert = NULL, *key = NULL;
	if (o->tls_cert) {
		if (!(cert = read_pem(o->tls_cert, false, err)) ||
		    !(key = read_pem(o->tls_key, true, err))) {
			free(cert);
			close(fd);
			server_release(&s);
			return EXIT_FAIL;
		}
		s.tls = true;
	}

	/* The signals are taken by sigwait here; every thread inherits the mask. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	/* Each stream holds a socket and its events file; its conversation a
	 * model connection and the file: the soft limit of descriptors goes to
	 * the hard one. */
	/* Many threads (a conversation each): few malloc
	 * arenas keep the memory per stream down. */
	mallopt(M_ARENA_MAX, 2);
	unsigned max_conn = (unsigned)env_long("MADF_SERVE_MAX_CONNECTIONS", MAX_CONNECTIONS, 1, 100000);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* On the bus before the first request: the controller and the
	 * conversations' agents and events (server/serve_bus.c). */
	char *berr = NULL;
	if (serve_bus_open(&s.env, &berr) < 0) {
		err_set(err, "cannot open the bus: %s", berr);
		free(berr);
		if (key)
			memset(key, 0, strlen(key));
		free(cert);
		free(key);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close(fd);
		server_release(&s);
		return EXIT_FAIL;
	}
	/* epoll from 4 threads a core (at most 16): a stream never blocks a
	 * thread (server/stream.c), but the handler's work does (a
	 * conversation's files, a resume's replay, /api/metrics reading the
	 * sessions): with 1 a core, 1,000 conversations opening at once on a
	 * busy machine waited on each other's files. */
	conv_setup_start(); /* the conversations' set-up (server/conv_setup.c) */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned pool = ncpu < 1 ? 8 : ncpu > 4 ? 16 : 4 * (unsigned)ncpu;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			 MHD_USE_ERROR_LOG;
	struct MHD_Daemon *d;
	if (s.tls)
		d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_request, &s,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, max_conn,
				     MHD_OPTION_THREAD_POOL_SIZE, pool,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, &s,
				     MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
				     MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &s,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, max_conn,
				     MHD_OPTION_THREAD_POOL_SIZE, pool,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s,
				     MHD_OPTION_NOTIFY_CONNECTION, on_connection, &s, MHD_OPTION_END);
	if (!d) {
		serve_bus_close();
		if (key)
			memset(key, 0, strlen(key));
		free(cert);
		free(key);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close(fd);
		server_release(&s);
		err_set(err, "cannot start the HTTP server on %s%s", o->listen,
			s.tls ? " (TLS: are the certificate and the key a pair of PEM files?)" : "");
		return EXIT_FAIL;
	}
	printf("%u\n", port);
	fflush(stdout);
	char *model = s.llm ? xasprintf("%s, orchestrator %s, execution %s", s.llm->provider_name,
					s.llm->model_orchestrator, s.llm->model_execution) :
		      xstrdup("no model configured: conversations are refused with 503");
	slog("listening on %s://%s%s (agents from %s; %s)", s.tls ? "https" : "http", s.hosts[0],
	     API_PATH,
	     s.agents.path, model);
	free(model);
	/* The signals, and about every second the limits' snapshot (their
	 * journal has every change already); the operator's cancels come over
	 * the bus, to the controller (server/serve_bus.c). */
	int sig = 0;
	for (;;) {
		struct timespec tick = { 1, 0 };
		sig = sigtimedwait(&set, NULL, &tick);
		if (sig > 0)
			break;
		limits_flush(&s);
		convlog_journal_compact();
	}
	slog("%s: draining the open streams", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	s.draining = 1;
	serve_bus_drain(); /* before the cancels: the turns they end are not replayed */
	conv_shutdown_all();
	/* The streams read their final event and close; the conversations'
	 * threads see the cancel. Bounded: a stuck client does not hold us. */
	for (int i = 0; i < 200 && conv_alive(); i++) {
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
	/* libmicrohttpd refuses to stop with suspended connections: the
	 * streams still waiting end (their clients can resume them). */
	conv_streams_stop();
	struct timespec settle = { 0, 100 * 1000000L };
	nanosleep(&settle, NULL);
	MHD_stop_daemon(d);
	for (int i = 0; i < 200 && conv_alive(); i++) {
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (key)
		memset(key, 0, strlen(key));
	free(cert);
	free(key);
	limits_flush(&s);
	convlog_journal_compact(); /* every admission set up: nothing to recover */
	size_t left = conv_alive();
	if (left) {
		/* A conversation stuck in a tool call still uses the registry,
		 * the settings and the bus: they are left to the process's exit,
		 * not freed. */
		slog("stopped; %zu conversation%s still finishing a call at exit", left,
		     left == 1 ? "" : "s");
		return EXIT_OK;
	}
	serve_bus_close();
	server_release(&s);
	slog("stopped");
	return EXIT_OK;
}
