/* The start of madf serve's conversations, off the request path: the
 * handler admits a conversation (its token, its body, its limits), records
 * its conversation_start in memory and in the admissions' journal, and
 * answers with it at once; this thread then starts each conversation's
 * thread, in the order admitted, which makes its files (its
 * events file with that first event, its meta) before it runs.
 *
 * Why: with the files and the thread made by the handler, a thousand
 * clients starting at once waited on each other's file creations (one
 * directory, whose lock every creation takes; ext4 seeking a free inode
 * took most of the server's CPU) in the few threads that also read every
 * other client's request, and on the conversation's thread being
 * scheduled before its first event was recorded.
 *
 * Why the files are the conversation's thread's, not this thread's: made
 * here (by 2 set-up threads), the 1,000 of a burst waited on threads whose
 * share of the CPU shrank as the conversations they started ran (2 of
 * some hundreds runnable), so the last conversations started 7 s after
 * the burst (3.7 s when the handler made the files; the trace's files=
 * and bus=), their events came that much later, and bench serve's events
 * per second fell. A thread's start costs tens of microseconds; its files,
 * made by the conversation itself, take their share beside the others'. */
#include "server/conv_priv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "core/util.h"
#include "core/banned.h"

/* The starts wait while admissions keep coming (a burst): a conversation's
 * thread, once started, takes its share of the CPU at once (its files, its
 * agents on the bus, its first model call), and a thousand of them took it
 * from the threads still admitting the burst's last requests and sending
 * their first events. They start when no admission came for QUIET_MS, or
 * when the oldest has waited MAX_WAIT_MS (so a steady flow of requests
 * starts them too); one conversation alone waits QUIET_MS. */
#define QUIET_MS 10
#define MAX_WAIT_MS 500

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv; /* CLOCK_MONOTONIC (setup_once) */
static pthread_once_t q_once = PTHREAD_ONCE_INIT;
static struct conv *q_head, **q_tail = &q_head;
static int64_t q_last_ns; /* the last admission queued (monotonic) */

static void *setup_main(void *arg)
{
	pthread_setname_np(pthread_self(), "serve-setup"); /* top -H, /proc/PID/task/TID/comm */
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&q_mu);
		for (;;) {
			while (!q_head)
				pthread_cond_wait(&q_cv, &q_mu);
			int64_t now = util_mono_ns();
			int64_t quiet = q_last_ns + QUIET_MS * 1000000LL;
			int64_t oldest = q_head->start_ns + MAX_WAIT_MS * 1000000LL;
			int64_t due = quiet < oldest ? quiet : oldest;
			if (now >= due)
				break;
			struct timespec ts = { (time_t)(due / 1000000000LL),
					       (long)(due % 1000000000LL) };
			pthread_cond_timedwait(&q_cv, &q_mu, &ts);
		}
		/* every one waiting, in the order admitted */
		struct conv *c = q_head;
		q_head = NULL;
		q_tail = &q_head;
		pthread_mutex_unlock(&q_mu);
		while (c) {
			struct conv *next = c->next_setup;
			c->next_setup = NULL;
			conv_run(c); /* c may be gone once it returns */
			c = next;
		}
	}
	return NULL;
}

static void setup_once(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, setup_main, NULL) != 0)
		abort(); /* no conversation could run: not a server */
	pthread_attr_destroy(&at);
}

void conv_setup_start(void)
{
	pthread_once(&q_once, setup_once);
}

void conv_setup_queue(struct conv *c)
{
	conv_setup_start();
	pthread_mutex_lock(&q_mu);
	c->next_setup = NULL;
	*q_tail = c;
	q_tail = &c->next_setup;
	q_last_ns = util_mono_ns();
	if (q_head == c) /* else the thread waits for a time it will see again */
		pthread_cond_signal(&q_cv);
	pthread_mutex_unlock(&q_mu);
}

