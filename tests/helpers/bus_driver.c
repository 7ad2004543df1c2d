/* A test driver for the bus API, on whichever transport MADF_BUS names
 * (tests/integration/test_bus_transports.sh runs the same cases on each):
 *   bus_driver send-many AGENT N    sends N heartbeats in one process;
 *                                   prints "sent K" and the first error
 *   bus_driver send-id AGENT ID     sends a heartbeat with message id ID
 *   bus_driver send-seq AGENT PFX N sends N heartbeats with the ids
 *                                   PFX_000000... and the content's
 *                                   "sequence" the id's number; prints
 *                                   "sent K" and the first error
 *   bus_driver claim AGENT WAIT_S [ack|nack ERROR|reject ERROR|hold]
 *                                   claims one message (waiting up to
 *                                   WAIT_S), prints "ID ATTEMPTS", then
 *                                   acks, nacks, nacks permanently or holds
 *                                   it (sleeping until killed)
 *   bus_driver wait-fd AGENT S      prints "ready", then "woken" when the
 *                                   consumer's fd becomes readable within
 *                                   S seconds, else "timeout"
 *   bus_driver raw AGENT FILE       puts FILE's bytes into AGENT's inbox
 *                                   unchecked, as a foreign writer would (a
 *                                   file in the inbox directory, or a raw
 *                                   JetStream publish)
 *   bus_driver gc - HOURS [dry]     bus_gc as if HOURS later; prints what
 *                                   it reports, one line each
 *   bus_driver reads-after AGENT FILE SHOW DEL
 *                                   the bus opened and read once, prints
 *                                   "ready", waits (up to 120 s) for FILE
 *                                   to exist, then prints one line each:
 *                                   "show QUEUE ID" (bus_find SHOW), "ls
 *                                   processing|inbox N IDS..." (AGENT's),
 *                                   "delete ID" (bus_remove DEL), "stats
 *                                   processing N" (AGENT's count), or
 *                                   "... error: WHY"
 * Exit status 0, 1 on a failure, 3 when nothing was claimed. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nats/nats.h>

#include "core/bus.h"
#include "core/config.h"
#include "core/util.h"
#include "core/banned.h"

static struct msg *heartbeat(const char *to)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "status", "idle");
	cJSON_AddNumberToObject(c, "uptime_seconds", 1);
	cJSON_AddNumberToObject(c, "active_tasks", 0);
	return msg_new("operator", to, MSG_HEARTBEAT, c);
}

static void gc_report(void *ctx, const char *what, const char *path)
{
	(void)ctx;
	printf("%s: %s\n", what, path);
}

/* "ls QUEUE N IDS..." of agent's queue q, or "ls QUEUE error: WHY". */
static void print_list(struct bus *b, enum bus_queue q, const char *agent)
{
	struct bus_entry *v = NULL;
	size_t n = 0;
	char *err = NULL;
	if (bus_list(b, q, agent, false, &v, &n, &err) < 0) {
		printf("ls %s error: %s\n", bus_queue_name(q), err ? err : "?");
		free(err);
		return;
	}
	printf("ls %s %zu", bus_queue_name(q), n);
	for (size_t i = 0; i < n; i++)
		printf(" %s", v[i].message_id ? v[i].message_id : "?");
	printf("\n");
	bus_entries_free(v, n);
}

/* The reads of reads-after (see above). */
static void reads(struct bus *b, const char *agent, const char *show, const char *del)
{
	struct bus_entry e;
	char *err = NULL;
	if (bus_find(b, show, &e, &err) < 0) {
		printf("show error: %s\n", err ? err : "?");
		free(err);
		err = NULL;
	} else {
		printf("show %s %s\n", bus_queue_name(e.queue), e.message_id ? e.message_id : "?");
		bus_entry_release(&e);
	}
	print_list(b, BUS_Q_PROCESSING, agent);
	print_list(b, BUS_Q_INBOX, agent);
	if (del) {
		if (bus_remove(b, del, &err) < 0)
			printf("delete error: %s\n", err ? err : "?");
		else
			printf("delete %s\n", del);
		free(err);
		err = NULL;
	}
	struct bus_stats st;
	if (bus_stats(b, &st, &err) < 0) {
		printf("stats error: %s\n", err ? err : "?");
		free(err);
		return;
	}
	size_t proc = 0;
	for (size_t i = 0; i < st.nagents; i++)
		if (!strcmp(st.agents[i].agent, agent))
			proc = st.agents[i].processing;
	printf("stats processing %zu\n", proc);
	bus_stats_release(&st);
}

static int fail(const char *what, char *err)
{
	fprintf(stderr, "bus_driver: %s: %s\n", what, err ? err : "?");
	free(err);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bus_driver send-many|send-id|claim AGENT ...\n");
		return 2;
	}
	const char *dd = getenv("MADF_DATA_DIR");
	struct bus_config cfg;
	bus_config_init(&cfg, dd && *dd ? dd : "data");
	struct bus *b = NULL;
	char *err = NULL;
	int rc = 0;
	if (bus_open(&cfg, &b, &err) < 0) {
		bus_config_release(&cfg);
		return fail("open", err);
	}
	const char *agent = argv[2];
	if (!strcmp(argv[1], "send-many") && argc == 4) {
		long n = atol(argv[3]), sent = 0;
		for (long i = 0; i < n; i++) {
			struct msg *m = heartbeat(agent);
			int r = bus_send(b, m, &err);
			msg_free(&m);
			if (r < 0) {
				rc = 1;
				break;
			}
			sent++;
		}
		printf("sent %ld\n", sent);
		if (err)
			printf("error %s\n", err);
		free(err);
	} else if (!strcmp(argv[1], "send-seq") && argc == 5) {
		long n = atol(argv[4]), sent = 0;
		for (long i = 0; i < n; i++) {
			struct msg *m = heartbeat(agent);
			snprintf(m->id, sizeof(m->id), "%s_%06ld", argv[3], i);
			cJSON_AddNumberToObject(m->content, "sequence", (double)i);
			int r = bus_send(b, m, &err);
			msg_free(&m);
			if (r < 0) {
				rc = 1;
				break;
			}
			sent++;
		}
		printf("sent %ld\n", sent);
		if (err)
			printf("error %s\n", err);
		free(err);
	} else if (!strcmp(argv[1], "send-id") && argc == 4) {
		struct msg *m = heartbeat(agent);
		util_strlcpy(m->id, argv[3], sizeof(m->id));
		if (bus_send(b, m, &err) < 0)
			rc = fail("send", err);
		else
			printf("%s\n", m->id);
		msg_free(&m);
	} else if (!strcmp(argv[1], "claim") && argc >= 4) {
		const char *what = argc > 4 ? argv[4] : "ack";
		const char *why = argc > 5 ? argv[5] : "failed in the test";
		struct bus_consumer *c = NULL;
		struct bus_delivery *d = NULL;
		int64_t end = util_mono_ns() + (int64_t)(atof(argv[3]) * 1e9);
		int k = 0;
		if (bus_consumer_open(b, agent, &c, &err) < 0) {
			rc = fail("consumer", err);
			goto out;
		}
		while ((k = bus_claim(c, &d, &err)) == 0 && util_mono_ns() < end) {
			int left = (int)((end - util_mono_ns()) / 1000000);
			bus_consumer_wait(c, left > 0 ? left : 0);
		}
		if (k < 0) {
			rc = fail("claim", err);
		} else if (k == 0) {
			rc = 3;
		} else {
			printf("%s %d\n", d->msg->id, d->attempts);
			fflush(stdout);
			if (!strcmp(what, "hold")) {
				for (;;)
					pause();
			}
			int r = !strcmp(what, "ack") ? bus_ack(c, &d, &err)
				: bus_nack(c, &d, why, !strcmp(what, "reject"), &err);
			if (r < 0)
				rc = fail(what, err);
		}
		bus_delivery_free(&d);
		bus_consumer_free(&c);
	} else if (!strcmp(argv[1], "wait-fd") && argc == 4) {
		struct bus_consumer *c = NULL;
		if (bus_consumer_open(b, agent, &c, &err) < 0) {
			rc = fail("consumer", err);
			goto out;
		}
		struct pollfd p = { .fd = bus_consumer_fd(c), .events = POLLIN };
		printf("ready\n");
		fflush(stdout);
		if (p.fd < 0)
			printf("no fd\n");
		else
			printf("%s\n", poll(&p, 1, (int)(atof(argv[3]) * 1000)) > 0 ? "woken" : "timeout");
		bus_consumer_free(&c);
	} else if (!strcmp(argv[1], "raw") && argc == 4) {
		char *buf = NULL;
		size_t len;
		struct bus_consumer *c = NULL;
		/* the consumer makes sure the inbox exists */
		if (bus_consumer_open(b, agent, &c, &err) < 0 ||
		    util_read_file(argv[3], 20u << 20, &buf, &len, &err) < 0) {
			bus_consumer_free(&c);
			rc = fail("raw", err);
			goto out;
		}
		bus_consumer_free(&c);
		if (strncmp(cfg.url, "nats://", 7)) {
			char *path = xasprintf("%s/messages/inbox/%s/raw.%ld.json", cfg.data_dir,
					       agent, (long)getpid());
			if (util_write_file_atomic(path, buf, len, false, &err) < 0)
				rc = fail("raw", err);
			free(path);
		} else {
			const char *pfx = getenv("MADF_NATS_PREFIX");
			char *subj = xasprintf("%s.inbox.%s.normal", pfx && *pfx ? pfx : "madf", agent);
			natsConnection *nc = NULL;
			jsCtx *js = NULL;
			natsStatus s = natsConnection_ConnectTo(&nc, cfg.url);
			if (s == NATS_OK)
				s = natsConnection_JetStream(&js, nc, NULL);
			if (s == NATS_OK)
				s = js_Publish(NULL, js, subj, buf, (int)len, NULL, NULL);
			if (s != NATS_OK)
				rc = fail("raw", xstrdup(natsStatus_GetText(s)));
			jsCtx_Destroy(js);
			natsConnection_Destroy(nc);
			free(subj);
		}
		free(buf);
	} else if (!strcmp(argv[1], "reads-after") && argc == 6) {
		reads(b, agent, argv[4], NULL); /* warm: the inboxes set up */
		printf("ready\n");
		fflush(stdout);
		int64_t end = util_mono_ns() + 120 * 1000000000LL;
		while (access(argv[3], F_OK) < 0 && util_mono_ns() < end)
			usleep(10 * 1000);
		reads(b, agent, argv[4], argv[5]);
	} else if (!strcmp(argv[1], "gc") && argc >= 4) {
		bool dry = argc > 4 && !strcmp(argv[4], "dry");
		int64_t at = util_now_ns() + (int64_t)(atof(argv[3]) * 3600e9);
		if (bus_gc(b, dry, at, gc_report, NULL, &err) < 0)
			rc = fail("gc", err);
	} else {
		fprintf(stderr, "bus_driver: unknown command %s\n", argv[1]);
		rc = 2;
	}
out:
	bus_free(&b);
	bus_config_release(&cfg);
	return rc;
}
