/* madf serve's admission trace (server/serve_trace.h): one line per
 * conversation, appended to MADF_SERVE_TRACE's file, with the time each
 * step of its start took. */
#include "server/serve_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "core/banned.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int trace_fd = -1;

static void trace_open(void)
{
	const char *p = getenv("MADF_SERVE_TRACE");
	if (!p || !*p)
		return;
	trace_fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (trace_fd < 0)
		fprintf(stderr, "madf: serve: warning: MADF_SERVE_TRACE: cannot open %s: %s\n", p,
			strerror(errno));
}

bool serve_trace_on(void)
{
	pthread_once(&once, trace_open);
	return trace_fd >= 0;
}

static const char *const names[TR_N] = {
	"accept", "headers", "body", "auth", "valid", "admit", "start", "queued", "emit",
	"sent", "files", "bus",
};

void serve_trace_write(const char *session, const int64_t t[TR_N])
{
	if (!serve_trace_on() || !t[TR_ACCEPT])
		return;
	/* Each mark as microseconds since the accept (-1: not reached). */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "%s at=%lld", session, (long long)(t[TR_ACCEPT] / 1000));
	for (int i = 0; i < TR_N; i++)
		sbuf_addf(&b, " %s=%lld", names[i],
			  t[i] ? (long long)((t[i] - t[TR_ACCEPT]) / 1000) : -1LL);
	sbuf_addch(&b, '\n');
	ssize_t w = write(trace_fd, b.data, b.len);
	(void)w; /* a trace line lost is a trace line lost */
	sbuf_release(&b);
}
