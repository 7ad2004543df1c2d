/* madf serve's admission trace: with MADF_SERVE_TRACE=FILE, each
 * conversation started by a POST appends one line to FILE once its first
 * event went out and its thread made its files:
 *   SESSION at=T accept=0 headers=US body=US ...
 * (T: the accept's CLOCK_MONOTONIC time in microseconds),
 * each mark the microseconds (CLOCK_MONOTONIC) since its connection was
 * accepted, -1 when the step was not reached. What
 * `madf bench serve` measures from the client's side, cut into the
 * server's steps. */
#ifndef MADF_SERVE_TRACE_H
#define MADF_SERVE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

enum serve_trace_mark {
	TR_ACCEPT,  /* the connection accepted */
	TR_HEADERS, /* its request's headers read (the handler's first call) */
	TR_BODY,    /* its body read (the handler's last call) */
	TR_AUTH,    /* the bearer token checked */
	TR_VALID,   /* the body validated */
	TR_ADMIT,   /* the limits reserved (journalled) */
	TR_START,   /* the conversation made (its first event journalled, its set-up queued) */
	TR_QUEUED,  /* the response queued */
	TR_EMIT,    /* conversation_start recorded (in memory) */
	TR_SENT,    /* its first bytes handed to the connection */
	TR_FILES,   /* its events file and meta made (by its thread, after TR_BUS) */
	TR_BUS,     /* its thread started (by the set-up) */
	TR_N
};

/* Whether MADF_SERVE_TRACE names a file (opened at the first call). */
bool serve_trace_on(void);
/* The line of session's marks (monotonic ns, 0: not reached). */
void serve_trace_write(const char *session, const int64_t t[TR_N]);

#endif
