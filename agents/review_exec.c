/* Running an analyzer: fork/exec with both outputs captured, a time limit
 * and a size cap. */
#include "agents/review.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

bool review_have(const char *prog)
{
	const char *path = getenv("PATH");
	if (!prog || !*prog)
		return false;
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	if (!path)
		path = "/usr/bin:/bin";
	const char *p = path;
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *cand = xasprintf("%.*s/%s", (int)n, n ? p : ".", prog);
		struct stat st;
		bool ok = stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0;
		free(cand);
		if (ok)
			return true;
		p = e ? e + 1 : p + n;
	}
	return false;
}

static void drain(int fd, struct sbuf *b, size_t max, bool *open_)
{
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n > 0) {
		if (b->len < max)
			sbuf_add(b, buf, (size_t)n < max - b->len ? (size_t)n : max - b->len);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		*open_ = false;
	}
}

int review_exec(const char *const *argv, const char *dir, int64_t timeout_ms,
		size_t max, char **out, char **errout, int *status, char **err)
{
	if (!review_have(argv[0]))
		return err_set(err, "%s is not installed", argv[0]);
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0)
		return err_set(err, "pipe: %s", strerror(errno));
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return err_set(err, "pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		return err_set(err, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (dir && chdir(dir) < 0)
			_exit(126);
		setpgid(0, 0);
		execvp(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	struct sbuf bo, be;
	sbuf_init(&bo);
	sbuf_init(&be);
	bool oo = true, eo = true, timed_out = false;
	int64_t end = util_mono_ns() + timeout_ms * 1000000;
	while (oo || eo) {
		int64_t left = (end - util_mono_ns()) / 1000000;
		if (left <= 0) {
			timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		struct pollfd fds[2] = { { oo ? po[0] : -1, POLLIN, 0 }, { eo ? pe[0] : -1, POLLIN, 0 } };
		int k = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		if (fds[0].revents)
			drain(po[0], &bo, max, &oo);
		if (fds[1].revents)
			drain(pe[0], &be, max, &eo);
	}
	close(po[0]);
	close(pe[0]);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		*status = 124;
	else if (WIFEXITED(ws))
		*status = WEXITSTATUS(ws);
	else
		*status = 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
	if (out)
		*out = sbuf_detach(&bo);
	else
		sbuf_release(&bo);
	if (errout)
		*errout = sbuf_detach(&be);
	else
		sbuf_release(&be);
	return 0;
}
