/* A rival consumer for the lease tests (tests/unit/test_bus_lease.c,
 * test_runtime.c): a forked process (so another owner than the test's,
 * as another host or process would be) that, once told to go, sweeps and
 * claims one agent's inbox on the file bus for a while, acks what it
 * claims and reports each claim ("ID ATTEMPTS" lines). A claim the test
 * holds reaches the rival only when its lease ran out. Forked before the
 * test claims anything (no thread of the test's is running then). */
#ifndef MADF_TEST_LEASE_RIVAL_H
#define MADF_TEST_LEASE_RIVAL_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/util.h"

struct rival {
	pid_t pid;
	int go;   /* write end: one byte starts it */
	int out;  /* read end: its reports */
};

/* The rival's process: claims for secs seconds after the go (after the
 * first claim when once). */
static inline void rival_main(const struct bus_config *cfg0, const char *agent, double secs,
			      bool once, int go, int out)
{
	char c;
	if (read(go, &c, 1) != 1)
		_exit(0);
	struct bus_config cfg = *cfg0;
	cfg.data_dir = xstrdup(cfg0->data_dir);
	cfg.url = xstrdup(cfg0->url);
	struct bus *b = NULL;
	struct bus_consumer *cons = NULL;
	char *err = NULL;
	if (bus_open(&cfg, &b, &err) < 0 || bus_consumer_open(b, agent, &cons, &err) < 0) {
		dprintf(out, "error %s\n", err ? err : "?");
		_exit(1);
	}
	int64_t end = util_mono_ns() + (int64_t)(secs * 1e9);
	while (util_mono_ns() < end) {
		bus_sweep(b, agent, NULL);
		struct bus_delivery *d = NULL;
		int k = bus_claim(cons, &d, &err);
		if (k == 1) {
			dprintf(out, "%s %d\n", d->msg->id, d->attempts);
			bus_ack(cons, &d, NULL);
			if (once)
				break;
			continue;
		}
		usleep(50 * 1000);
	}
	bus_consumer_free(&cons);
	bus_free(&b);
	bus_config_release(&cfg);
	_exit(0);
}

static inline void rival_start(struct rival *r, const struct bus_config *cfg, const char *agent,
			       double secs, bool once)
{
	int go[2], out[2];
	if (pipe(go) < 0 || pipe(out) < 0)
		fail_msg("pipe");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		fail_msg("fork");
	if (pid == 0) {
		close(go[1]);
		close(out[0]);
		rival_main(cfg, agent, secs, once, go[0], out[1]);
	}
	close(go[0]);
	close(out[1]);
	r->pid = pid;
	r->go = go[1];
	r->out = out[0];
}

static inline void rival_go(struct rival *r)
{
	if (write(r->go, "g", 1) != 1)
		fail_msg("cannot start the rival");
}

/* Waits for the rival to end; its reports (caller frees; "" if none). */
static inline char *rival_finish(struct rival *r)
{
	close(r->go);
	struct sbuf s;
	sbuf_init(&s);
	char buf[256];
	ssize_t n;
	while ((n = read(r->out, buf, sizeof(buf))) > 0)
		sbuf_add(&s, buf, (size_t)n);
	close(r->out);
	int st = 0;
	waitpid(r->pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("the rival failed (status %d): %s", st, s.len ? s.data : "");
	return sbuf_detach(&s);
}

#endif
