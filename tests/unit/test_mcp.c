/* The MCP client: ${VAR} expansion, .mcp.json errors, registry names,
 * content text; and against the project's MCP test server over stdio, in
 * one process: a crash fails the call and the next call restarts the
 * server, concurrent calls on one server, a timeout leaves the server
 * usable, a cancel flag, a server that closes its input cannot kill us
 * with SIGPIPE, and no child is left behind; over Streamable HTTP, the
 * server's GET stream resumed with Last-Event-ID and the session's DELETE;
 * a server's bytes read as in a call (mcp_client_read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/mcp_tools.h"
#include "core/mcp.h"
#include "core/util.h"

#include "core/banned.h"

#define SERVER "tests/integration/mcp_test_server.py"

static void test_expand(void **state)
{
	(void)state;
	setenv("MCP_T_A", "alpha", 1);
	setenv("MCP_T_EMPTY", "", 1);
	unsetenv("MCP_T_NONE");
	char *err = NULL, *s;
	s = mcp_expand("x${MCP_T_A}y", &err);
	assert_string_equal(s, "xalphay");
	free(s);
	s = mcp_expand("${MCP_T_NONE:-dflt}/${MCP_T_A:-no}", &err);
	assert_string_equal(s, "dflt/alpha");
	free(s);
	s = mcp_expand("${MCP_T_EMPTY:-used}|${MCP_T_EMPTY}|", &err);
	assert_string_equal(s, "used||");
	free(s);
	s = mcp_expand("$HOME and $ alone", &err);
	assert_string_equal(s, "$HOME and $ alone");
	free(s);
	assert_null(mcp_expand("a ${MCP_T_NONE} b", &err));
	assert_string_equal(err, "${MCP_T_NONE} is not set (and has no default)");
	free(err);
	err = NULL;
	assert_null(mcp_expand("${MCP_T_A", &err));
	assert_non_null(strstr(err, "unterminated"));
	free(err);
	err = NULL;
	assert_null(mcp_expand("${1x}", &err));
	free(err);
}

static void config_fails(const char *json, const char *want)
{
	struct mcp_config c;
	char *err = NULL;
	assert_int_equal(mcp_config_parse(json, strlen(json), "cfg", &c, &err), -1);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_null(strstr(err, "TOPSECRET"));
	free(err);
}

static void test_config(void **state)
{
	(void)state;
	setenv("MCP_T_A", "alpha", 1);
	static const char good[] =
		"{\"mcpServers\":{\"s\":{\"command\":\"c-${MCP_T_A}\",\"args\":[\"1\","
		"\"${MCP_T_A}\"],\"env\":{\"K\":\"v\"}},\"h\":{\"type\":\"streamable-http\","
		"\"url\":\"https://x/${MCP_T_A}\",\"headers\":{\"X-Key\":\"k ${MCP_T_A}\"}},"
		"\"u\":{\"url\":\"http://y\"}}}";
	struct mcp_config c;
	char *err = NULL;
	assert_int_equal(mcp_config_parse(good, strlen(good), "cfg", &c, &err), 0);
	assert_int_equal(c.n, 3);
	const struct mcp_server_config *s = mcp_config_find(&c, "s");
	assert_int_equal(s->transport, MCP_STDIO);
	assert_string_equal(s->command, "c-alpha");
	assert_int_equal(s->nargs, 2);
	assert_string_equal(s->args[1], "alpha");
	assert_string_equal(s->env[0], "K=v");
	const struct mcp_server_config *h = mcp_config_find(&c, "h");
	assert_int_equal(h->transport, MCP_HTTP);
	assert_string_equal(h->url, "https://x/alpha");
	assert_string_equal(h->headers[0], "X-Key: k alpha");
	assert_int_equal(mcp_config_find(&c, "u")->transport, MCP_HTTP);
	assert_null(mcp_config_find(&c, "nope"));
	mcp_config_release(&c);

	config_fails("[1]", "cfg: not a JSON object");
	config_fails("{\"mcpServers\":{\"a\":1}}", "server \"a\": must be an object");
	config_fails("{\"mcpServers\":{\"a\":{\"command\":7}}}", "server \"a\": \"command\" must be a string");
	config_fails("{\"mcpServers\":{\"a\":{\"command\":\"x\",\"env\":{\"K\":1}}}}",
		     "server \"a\": \"env.K\" must be a string");
	config_fails("{\"mcpServers\":{\"a\":{\"command\":\"x\",\"args\":[\"ok\",2]}}}",
		     "server \"a\": \"args[1]\" must be a string");
	config_fails("{\"mcpServers\":{\"a\":{\"type\":\"sse\",\"url\":\"http://x\"}}}",
		     "legacy SSE transport is not supported");
	config_fails("{\"mcpServers\":{\"a\":{\"url\":\"ftp://x\"}}}",
		     "server \"a\": \"url\" is missing or not an http");
	config_fails("{\"mcpServers\":{\"a\":{\"url\":\"http://x\",\"headers\":"
		     "{\"Bad Name\":\"TOPSECRET\"}}}}", "invalid header name \"Bad Name\"");
	config_fails("{\"mcpServers\":{\"a\":{\"url\":\"http://x\",\"headers\":"
		     "{\"X\":\"TOPSECRET\\r\\nY: z\"}}}}", "\"headers.X\": a header value may not");
	config_fails("{\"mcpServers\":{\"\":{\"command\":\"x\"}}}", "a server name is 1 to 64");
	config_fails("{\"mcpServers\":{\"a\":{\"command\":\"x\"},\"a\":{\"command\":\"y\"}}}",
		     "not valid JSON");
}

static void test_names_and_text(void **state)
{
	(void)state;
	char *n = mcp_tools_name("My.Server", "Get Data.v2!");
	assert_string_equal(n, "my_server.get_data.v2_");
	free(n);
	cJSON *r = cJSON_Parse("{\"content\":[{\"type\":\"text\",\"text\":\"one\"},"
			       "{\"type\":\"image\",\"mimeType\":\"image/png\",\"data\":\"AAAA\"},"
			       "{\"type\":\"resource\",\"resource\":{\"uri\":\"f://a\",\"text\":\"res\"}},"
			       "{\"type\":\"resource_link\",\"name\":\"doc\",\"uri\":\"f://b\"}]}");
	char *t = mcp_content_text(r);
	assert_string_equal(t, "one\n[image image/png, 3 bytes]\nres\n[resource doc f://b]");
	free(t);
	cJSON_Delete(r);
}

struct fixture {
	char *dir;
	struct mcp_client *c;
};

static struct mcp_server_config stdio_cfg(char **args, size_t nargs)
{
	static char name[] = "unit", cmd[] = "python3";
	static char *noenv[] = { NULL };
	struct mcp_server_config cfg = { .name = name, .transport = MCP_STDIO,
					 .command = cmd, .args = args, .nargs = nargs,
					 .env = noenv };
	return cfg;
}

static int setup(void **state)
{
	struct fixture *f = xcalloc(1, sizeof(*f));
	char tmpl[] = "/tmp/madf-mcp-unit.XXXXXX";
	f->dir = xstrdup(mkdtemp(tmpl));
	static char a0[] = SERVER, a1[] = "--stdio";
	static char *args[] = { a0, a1, NULL };
	struct mcp_server_config cfg = stdio_cfg(args, 2);
	f->c = mcp_client_new(&cfg, f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	mcp_client_free(&f->c);
	util_rm_tree(f->dir);
	free(f->dir);
	free(f);
	/* every server was reaped: no child, no zombie */
	int st;
	assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	return 0;
}

/* Calls tool with {"text": text}; returns the text (caller frees) or NULL
 * with *err. */
static char *call(struct mcp_client *c, const char *tool, const char *text,
		  const struct mcp_call_opts *o, char **err)
{
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "text", text);
	cJSON *res = NULL;
	int r = mcp_call_tool(c, tool, args, o, &res, err);
	cJSON_Delete(args);
	if (r < 0)
		return NULL;
	char *t = mcp_content_text(res);
	cJSON_Delete(res);
	return t;
}

static void test_crash_and_restart(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	char *t = call(f->c, "echo", "first", NULL, &err);
	assert_string_equal(t, "first");
	free(t);
	char v[32];
	mcp_client_version(f->c, v, sizeof(v));
	assert_string_equal(v, "2025-11-25");
	assert_null(call(f->c, "crash", "", NULL, &err));
	if (!strstr(err, "server \"unit\" exited with status 3 during tools/call"))
		fail_msg("unexpected error: %s", err);
	free(err);
	err = NULL;
	mcp_client_version(f->c, v, sizeof(v));
	assert_string_equal(v, "");
	t = call(f->c, "echo", "after the crash", NULL, &err);
	assert_non_null(t);
	assert_string_equal(t, "after the crash");
	free(t);
	/* the crash is in the server's log, with its last words on stderr */
	char *log = NULL;
	size_t len;
	assert_int_equal(util_read_file(mcp_client_log_path(f->c), 1 << 20, &log, &len, NULL), 0);
	assert_non_null(strstr(log, "stderr mcp_test_server: crashing as asked"));
	assert_non_null(strstr(log, "error server exited with status 3 during tools/call"));
	free(log);
}

struct worker {
	struct mcp_client *c;
	int n, ok;
};

static void *worker_run(void *p)
{
	struct worker *w = p;
	for (int i = 0; i < 10; i++) {
		char want[64], *err = NULL;
		snprintf(want, sizeof(want), "worker %d call %d", w->n, i);
		char *t = call(w->c, "echo", want, NULL, &err);
		if (t && !strcmp(t, want))
			w->ok++;
		free(t);
		free(err);
	}
	return NULL;
}

static void test_concurrent_calls(void **state)
{
	struct fixture *f = *state;
	pthread_t th[4];
	struct worker w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ f->c, i, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].ok, 10);
	}
}

static void test_timeout_then_usable(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	struct mcp_call_opts o = { .timeout_ms = 300 };
	assert_null(call(f->c, "slow", "", &o, &err));
	assert_string_equal(err, "server \"unit\": tools/call timed out after 300 ms");
	free(err);
	err = NULL;
	char *t = call(f->c, "echo", "still here", NULL, &err);
	assert_string_equal(t, "still here");
	free(t);
}

static volatile sig_atomic_t cancel_flag;

static void *cancel_later(void *p)
{
	(void)p;
	struct timespec ts = { 0, 200 * 1000000 };
	nanosleep(&ts, NULL);
	cancel_flag = 1;
	return NULL;
}

static void test_cancel_flag(void **state)
{
	struct fixture *f = *state;
	char *err = NULL;
	cancel_flag = 0;
	assert_int_equal(mcp_client_start(f->c, NULL, &err), 0);
	struct mcp_call_opts o = { .timeout_ms = 30000, .cancel = &cancel_flag };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, NULL), 0);
	assert_null(call(f->c, "slow", "", &o, &err));
	pthread_join(th, NULL);
	assert_string_equal(err, "server \"unit\": tools/call cancelled");
	free(err);
	err = NULL;
	char *t = call(f->c, "echo", "after cancel", NULL, &err);
	assert_string_equal(t, "after cancel");
	free(t);
}

static void test_progress_and_ping(void **state)
{
	struct fixture *f = *state;
	(void)f;
	char *err = NULL;
	char *t = call(f->c, "notify", "", NULL, &err);
	assert_string_equal(t, "notified; pong received");
	free(t);
}

/* A server that closes its stdin before it answers initialize, and
 * lingers: the next write (notifications/initialized) fails with EPIPE,
 * which must be an error and not a SIGPIPE (default disposition here); the
 * server is stopped. */
static void test_no_sigpipe(void **state)
{
	struct fixture *f = *state;
	assert_true(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
	static char a0[] = SERVER, a1[] = "--stdio", a2[] = "--deaf";
	static char *args[] = { a0, a1, a2, NULL };
	struct mcp_server_config cfg = stdio_cfg(args, 3);
	struct mcp_client *c = mcp_client_new(&cfg, f->dir);
	char *err = NULL;
	assert_int_equal(mcp_client_start(c, NULL, &err), -1);
	if (!strstr(err, "server \"unit\" stopped talking (closed its input or output) "
			 "during notifications/initialized"))
		fail_msg("unexpected error: %s", err);
	free(err);
	mcp_client_free(&c);
	signal(SIGPIPE, SIG_IGN);
}

static void test_spawn_failure(void **state)
{
	struct fixture *f = *state;
	static char name[] = "missing", cmd[] = "/nonexistent/mcp-server";
	static char *noargs[] = { NULL };
	struct mcp_server_config cfg = { .name = name, .transport = MCP_STDIO,
					 .command = cmd, .args = noargs, .env = noargs };
	struct mcp_client *c = mcp_client_new(&cfg, f->dir);
	char *err = NULL;
	assert_int_equal(mcp_client_start(c, NULL, &err), -1);
	if (!strstr(err, "server \"missing\": cannot start \"/nonexistent/mcp-server\""))
		fail_msg("unexpected error: %s", err);
	free(err);
	mcp_client_free(&c);
}

/* Starts the HTTP test server (extra: one more option or NULL), logging
 * to log; returns its pid and its port in *port. */
static pid_t http_server(const char *log, const char *extra, int *port)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execlp("python3", "python3", SERVER, "--http", "--log", log, extra, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char buf[32] = "";
	size_t n = 0;
	while (n + 1 < sizeof(buf) && !memchr(buf, '\n', n)) {
		ssize_t r = read(p[0], buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		buf[n] = '\0';
	}
	close(p[0]);
	*port = atoi(buf);
	assert_true(*port > 0);
	return pid;
}

static void http_server_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* The GET stream over HTTP, in one process: one stream for the session,
 * opened by its first request and kept across calls (the server's
 * notification and ping on it during a call); when the server closes it
 * during a call (background with drop: after event 3, before the ping) it
 * is opened again with Last-Event-ID 3 and the ping is replayed on it;
 * the session ended with a DELETE at mcp_client_free. */
static void test_http_get_stream_and_delete(void **state)
{
	struct fixture *f = *state;
	char *log = xasprintf("%s/http.jsonl", f->dir);
	int port;
	pid_t pid = http_server(log, NULL, &port);
	static char name[] = "unit-http";
	static char *none[] = { NULL };
	char *url = xasprintf("http://127.0.0.1:%d/mcp", port);
	struct mcp_server_config cfg = { .name = name, .transport = MCP_HTTP, .url = url,
					 .args = none, .env = none, .headers = none };
	struct mcp_client *c = mcp_client_new(&cfg, f->dir);
	char *err = NULL;
	char *t = call(c, "background", "", NULL, &err);
	assert_non_null(t);
	assert_string_equal(t, "background; pong received");
	free(t);
	t = call(c, "echo", "next", NULL, &err);
	assert_string_equal(t, "next");
	free(t);
	cJSON *args = cJSON_CreateObject(), *res = NULL;
	cJSON_AddBoolToObject(args, "drop", true);
	if (mcp_call_tool(c, "background", args, NULL, &res, &err) < 0)
		fail_msg("background with drop: %s", err);
	cJSON_Delete(args);
	t = mcp_content_text(res);
	cJSON_Delete(res);
	assert_string_equal(t, "background; pong received");
	free(t);
	char *mlog = xstrdup(mcp_client_log_path(c));
	mcp_client_free(&c);
	char *text = NULL;
	size_t len;
	assert_int_equal(util_read_file(log, 1 << 20, &text, &len, NULL), 0);
	/* two GETs: the session's (without Last-Event-ID), kept through the
	 * first two calls, and the one opened again after event 3 */
	char *g1 = strstr(text, "\"http\": \"GET\"");
	assert_non_null(g1);
	char *nl = strchr(g1, '\n');
	assert_non_null(nl);
	assert_true(strstr(g1, "\"last_event_id\": null") < nl);
	char *g2 = strstr(nl, "\"http\": \"GET\"");
	assert_non_null(g2);
	if (!strstr(g2, "\"last_event_id\": \"3\"}"))
		fail_msg("the second GET did not resume after event 3: %s", g2);
	assert_null(strstr(g2 + 1, "\"http\": \"GET\""));
	/* the last line is the DELETE of the session made */
	char *sess = strstr(text, "{\"http\": \"session\", \"session\": \"");
	assert_non_null(sess);
	char sid[33];
	memcpy(sid, sess + strlen("{\"http\": \"session\", \"session\": \""), 32);
	sid[32] = '\0';
	char *want = xasprintf("{\"http\": \"DELETE\", \"session\": \"%s\"}\n", sid);
	assert_true(len >= strlen(want));
	assert_string_equal(text + len - strlen(want), want);
	free(want);
	free(text);
	assert_int_equal(util_read_file(mlog, 1 << 20, &text, &len, NULL), 0);
	assert_non_null(strstr(text, "message [info] test: background work started"));
	assert_non_null(strstr(text, "info GET stream closed by the server: opening it again "
				     "in 100 ms (Last-Event-ID)"));
	assert_non_null(strstr(text, "info session ended (DELETE: HTTP 200)"));
	assert_null(strstr(text, " warn "));
	free(text);
	free(mlog);
	free(url);
	free(log);
	http_server_stop(pid);
}

/* A server's bytes through the paths of a call (mcp_client_read, what
 * the fuzzer drives): a stdio line split across reads, notifications and
 * noise before the response; a JSON batch; an event stream; a body that
 * is not JSON; a response to another request. */
static struct mcp_client *wire_client(void)
{
	static char name[] = "wire", command[] = "false";
	static char *args[] = { NULL };
	struct mcp_server_config cfg = { .name = name, .transport = MCP_STDIO,
					 .command = command, .args = args };
	return mcp_client_new(&cfg, NULL);
}

static int wire_read(enum mcp_wire kind, const char *a, const char *b, int64_t id,
		     cJSON **resp, char **err)
{
	struct mcp_client *c = wire_client();
	const char *chunks[2] = { a, b };
	size_t lens[2] = { strlen(a), b ? strlen(b) : 0 };
	int r = mcp_client_read(c, kind, chunks, lens, b ? 2 : 1, id, resp, err);
	mcp_client_free(&c);
	return r;
}

static void test_wire(void **state)
{
	(void)state;
	cJSON *resp = NULL;
	char *err = NULL;
	assert_int_equal(wire_read(MCP_WIRE_STDIO,
				   "booting\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
				   "progress\",\"params\":{\"progress\":1}}\n{\"jsonrpc\":\"2.0\","
				   "\"id\":\"s1\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,",
				   "\"result\":{\"n\":42}}\n", 3, &resp, &err), 1);
	assert_null(err);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(resp, "result"), "n")->valueint,
			 42);
	cJSON_Delete(resp);
	/* the line is not complete: no response yet */
	assert_int_equal(wire_read(MCP_WIRE_STDIO, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
				   NULL, 3, &resp, &err), 0);
	assert_null(resp);
	assert_int_equal(wire_read(MCP_WIRE_JSON, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},",
				   "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"k\":\"v\"}}]", 2,
				   &resp, &err), 1);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(resp, "result"), "k")
				    ->valuestring, "v");
	cJSON_Delete(resp);
	assert_int_equal(wire_read(MCP_WIRE_SSE, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\n",
				   "data: \"id\":5,\"result\":{}}\n\n", 5, &resp, &err), 1);
	assert_int_equal(cJSON_GetObjectItem(resp, "id")->valueint, 5);
	cJSON_Delete(resp);
	assert_int_equal(wire_read(MCP_WIRE_JSON, "<html>502", NULL, 1, &resp, &err), -1);
	assert_null(resp);
	assert_string_equal(err, "server \"wire\": the answer is not JSON: <html>502");
	free(err);
	err = NULL;
	assert_int_equal(wire_read(MCP_WIRE_LISTEN, "data: {\"jsonrpc\":\"2.0\",\"id\":1,"
				   "\"result\":{}}\n\n", NULL, 1, &resp, &err), 0);
	assert_null(resp);
	assert_null(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_names_and_text),
		cmocka_unit_test(test_wire),
		cmocka_unit_test_setup_teardown(test_crash_and_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_then_usable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_and_ping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_sigpipe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spawn_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_get_stream_and_delete, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
