/* The MCP client's stdio transport: the server as a child process. */
#include "core/mcp_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

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
char *mcp_stdio_stop(struct mcp_client *c, bool gently)
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
		free(mcp_stdio_stop(c, false));
	} else {
		free(mcp_stdio_stop(c, false));
		how = xstrdup("stopped talking (closed its input or output)");
	}
	mcp_log(c, "error", "server %s during %s", how, method);
	err_set(err, "server \"%s\" %s during %s", c->cfg.name, how, method);
	free(how);
	return -1;
}

int mcp_stdio_spawn(struct mcp_client *c, char **err)
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
int mcp_stdio_write(struct mcp_client *c, const char *text, int64_t deadline)
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

/* Takes the first complete line out of c->rbuf (what a stdio server wrote)
 * and handles its message. Returns 1 when it was the response to want_id
 * (*resp takes it over), 0 when it was something else, -1 when no line is
 * complete. */
int mcp_stdio_take_line(struct mcp_client *c, int64_t want_id,
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
	if (msg && mcp_on_message(c, msg, want_id, o, resp) == 1)
		return 1;
	cJSON_Delete(msg);
	return 0;
}

int mcp_stdio_exchange(struct mcp_client *c, const char *method, const char *text,
		       int64_t id, long timeout_ms, const struct mcp_call_opts *o,
		       cJSON **resp, char **err)
{
	int64_t deadline = util_mono_ns() + (int64_t)timeout_ms * 1000000;
	if (mcp_stdio_write(c, text, deadline) < 0) {
		if (errno == ETIMEDOUT) {
			free(mcp_stdio_stop(c, false));
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
		while ((t = mcp_stdio_take_line(c, id, o, resp)) >= 0) {
			if (t == 1)
				return 0;
			if (c->in_fd < 0) /* a reply failed: the server is gone */
				return stdio_gone(c, method, err);
		}
		if (mcp_cancelled(o)) {
			mcp_send_cancel(c, id, "cancelled by the client");
			return err_set(err, "server \"%s\": %s cancelled", c->cfg.name, method);
		}
		int64_t left = (deadline - util_mono_ns()) / 1000000;
		if (left <= 0) {
			char *reason = xasprintf("timed out after %ld ms", timeout_ms);
			mcp_send_cancel(c, id, reason);
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
					free(mcp_stdio_stop(c, false));
					return err_set(err, "server \"%s\": a message over %zu bytes; "
						       "the server was stopped", c->cfg.name,
						       MCP_MESSAGE_MAX);
				}
				sbuf_add(&c->rbuf, buf, (size_t)n);
			}
		}
	}
}
