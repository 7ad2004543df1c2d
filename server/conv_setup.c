/* The set-up of madf serve's conversations, off the request path: the
 * handler admits a conversation (its token, its body, its limits), records
 * its conversation_start in memory and in the admissions' journal, and
 * answers with it at once; these threads (SETUP_THREADS) then make the
 * conversation's files (its events file with that first event, its meta)
 * and start its thread, in the order admitted.
 *
 * Why: with the files and the thread made by the handler, a thousand
 * clients starting at once waited on each other's file creations (one
 * directory, whose lock every creation takes; ext4 seeking a free inode
 * took most of the server's CPU) in the few threads that also read every
 * other client's request, and on the conversation's thread being
 * scheduled before its first event was recorded. */
#include "server/conv_priv.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/util.h"
#include "core/banned.h"

/* One thread fell behind a burst (1,000 admissions' files took it about
 * 4 s on a busy 2-core machine, its share of the CPU shrinking as the
 * conversations it started ran); the files of one directory are made one
 * at a time anyway (its lock), so more than 2 mostly wait, and compete
 * with the threads that answer requests. */
#define SETUP_THREADS 2

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static pthread_once_t q_once = PTHREAD_ONCE_INIT;
static struct conv *q_head, **q_tail = &q_head;
static size_t q_pending; /* queued or being set up */

static void *setup_main(void *arg)
{
	pthread_setname_np(pthread_self(), "serve-setup"); /* top -H, /proc/PID/task/TID/comm */
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&q_mu);
		while (!q_head)
			pthread_cond_wait(&q_cv, &q_mu);
		struct conv *c = q_head;
		q_head = c->next_setup;
		if (!q_head)
			q_tail = &q_head;
		c->next_setup = NULL;
		pthread_mutex_unlock(&q_mu);
		char *err = NULL;
		int r = convlog_create(c, &err);
		convlog_journal_done();
		conv_run(c, r == 0, err);
		free(err);
		pthread_mutex_lock(&q_mu);
		q_pending--;
		pthread_mutex_unlock(&q_mu);
	}
	return NULL;
}

static void setup_once(void)
{
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < SETUP_THREADS; i++)
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
	q_pending++;
	pthread_cond_signal(&q_cv);
	pthread_mutex_unlock(&q_mu);
}

size_t conv_setup_pending(void)
{
	pthread_mutex_lock(&q_mu);
	size_t n = q_pending;
	pthread_mutex_unlock(&q_mu);
	return n;
}
