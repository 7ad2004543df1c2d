/* madf bench bus --bus nats://...: madf's bus on NATS JetStream beside a
 * raw libnats publish-then-fetch of the same message size, with memory
 * and file storage, on one node and (several URLs) on a cluster. Every
 * figure is over runs where every message arrived. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/bus_nats.h"
#include "core/message.h"
#include "core/util.h"
#include "cli/bench_bus.h"
#include "core/banned.h"

#define RAW_SILENCE_S 30

/* The size of the heartbeats bench_bus_once sends (the same content). */
static size_t madf_message_size(long n)
{
	cJSON *content = cJSON_CreateObject();
	cJSON_AddStringToObject(content, "status", "busy");
	cJSON_AddNumberToObject(content, "uptime_seconds", 1);
	cJSON_AddNumberToObject(content, "active_tasks", 1);
	cJSON_AddNumberToObject(content, "sequence", (double)(n - 1));
	struct msg *m = msg_new("bench_producer", "bench_consumer", MSG_HEARTBEAT, content);
	char *js = msg_to_json(m, true);
	size_t len = strlen(js) + 1;
	free(js);
	msg_free(&m);
	return len;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pctl(const double *v, long n, double p)
{
	long i = (long)ceil(p * (double)n) - 1;
	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* ---- the raw baseline ---------------------------------------------------- */

struct raw_fetch {
	natsSubscription *sub;
	long n, got, dup;
	double *lat;
	unsigned char *seen;
	int64_t end;
	int failed;
};

/* Fetches one message at a time and acknowledges it synchronously, as
 * madf's consumer does; the payload starts with the sequence and the
 * send time. */
static void *raw_fetcher(void *arg)
{
	struct raw_fetch *f = arg;
	int64_t last = util_mono_ns();
	while (f->got < f->n) {
		natsMsgList list = { 0 };
		jsErrCode jerr = 0;
		natsStatus s = natsSubscription_Fetch(&list, f->sub, 1, 1000, &jerr);
		if (s != NATS_OK && s != NATS_TIMEOUT) {
			f->failed = 1;
			break;
		}
		if (list.Count == 0 && util_mono_ns() - last > RAW_SILENCE_S * 1000000000LL)
			break;
		for (int i = 0; i < list.Count; i++) {
			natsMsg *m = list.Msgs[i];
			int64_t hdr[2] = { -1, 0 };
			if (natsMsg_GetDataLength(m) >= (int)sizeof(hdr))
				memcpy(hdr, natsMsg_GetData(m), sizeof(hdr));
			if (hdr[0] < 0 || hdr[0] >= f->n || f->seen[hdr[0]]) {
				f->dup++;
			} else {
				f->seen[hdr[0]] = 1;
				f->lat[f->got++] = (double)(util_now_ns() - hdr[1]) / 1e6;
			}
			if (natsMsg_AckSync(m, NULL, &jerr) != NATS_OK)
				f->failed = 1;
			last = util_mono_ns();
		}
		natsMsgList_Destroy(&list);
		if (f->failed)
			break;
	}
	f->end = util_mono_ns();
	return NULL;
}

static void pace_to(int64_t start, long i, double rate)
{
	if (rate <= 0)
		return;
	int64_t due = start + (int64_t)((double)i * 1e9 / rate), now = util_mono_ns();
	if (due > now) {
		struct timespec ts = { (time_t)((due - now) / 1000000000),
				       (long)((due - now) % 1000000000) };
		nanosleep(&ts, NULL);
	}
}

/* One raw run: a WorkQueue stream <prefix>_raw of the storage and replicas
 * the environment says, a durable pull consumer; a publisher (one
 * synchronous js_Publish a message, as madf's send) and a fetcher thread
 * on connections of their own. */
static int raw_once(const struct bus_config *cfg, long n, double rate, size_t size,
		    struct bench_run *out)
{
	struct bus *bp = NULL, *bc = NULL;
	char *err = NULL;
	if (bus_open(cfg, &bp, &err) < 0 || bus_open(cfg, &bc, &err) < 0) {
		fprintf(stderr, "madf: bench: %s\n", err ? err : "?");
		free(err);
		bus_free(&bp);
		return -1;
	}
	struct natsbus *np = NB(bp), *nc = NB(bc);
	char name[NATS_NAME_MAX], subj[NATS_NAME_MAX];
	snprintf(name, sizeof(name), "%s_raw", np->prefix);
	snprintf(subj, sizeof(subj), "%s.raw", np->prefix);
	const char *subs[] = { subj };
	const char *stg = getenv("MADF_NATS_STORAGE");
	jsStreamConfig sc;
	jsStreamConfig_Init(&sc);
	sc.Name = name;
	sc.Subjects = subs;
	sc.SubjectsLen = 1;
	sc.Retention = js_WorkQueuePolicy;
	sc.Storage = stg && !strcmp(stg, "memory") ? js_MemoryStorage : js_FileStorage;
	sc.Replicas = nats_replicas();
	int r = nats_add_stream(np, &sc, &err);
	jsConsumerConfig cc;
	jsConsumerConfig_Init(&cc);
	cc.Durable = "raw";
	cc.AckPolicy = js_AckExplicit;
	cc.AckWait = 300LL * 1000000000LL;
	cc.MaxAckPending = n + 1000;
	jsConsumerInfo *ci = NULL;
	jsErrCode jerr = 0;
	natsStatus s = NATS_OK;
	if (r == 0 && (s = js_AddConsumer(&ci, np->js, name, &cc, NULL, &jerr)) != NATS_OK)
		r = nats_fail(np, &err, s, jerr, "cannot set up the raw consumer");
	jsConsumerInfo_Destroy(ci);
	struct raw_fetch f = { .n = n, .lat = xcalloc((size_t)n, sizeof(double)),
			       .seen = xcalloc((size_t)n, 1) };
	jsSubOptions so;
	jsSubOptions_Init(&so);
	so.Stream = name;
	so.Consumer = "raw";
	if (r == 0 && (s = js_PullSubscribe(&f.sub, nc->js, subj, "raw", NULL, &so, &jerr)) != NATS_OK)
		r = nats_fail(nc, &err, s, jerr, "cannot subscribe to the raw stream");
	pthread_t th;
	int64_t start = util_mono_ns();
	bool started = r == 0 && pthread_create(&th, NULL, raw_fetcher, &f) == 0;
	char *buf = xcalloc(size, 1);
	memset(buf + 16, 'x', size > 16 ? size - 16 : 0);
	for (long i = 0; started && i < n && r == 0; i++) {
		pace_to(start, i, rate);
		int64_t hdr[2] = { i, util_now_ns() };
		memcpy(buf, hdr, sizeof(hdr));
		jsErrCode je = 0;
		if ((s = js_Publish(NULL, np->js, subj, buf, (int)size, NULL, &je)) != NATS_OK)
			r = nats_fail(np, &err, s, je, "raw publish failed");
	}
	free(buf);
	if (started)
		pthread_join(th, NULL);
	if (r == 0 && (f.failed || f.got < n))
		r = err_set(&err, "raw libnats: only %ld of %ld messages arrived", f.got, n);
	if (r == 0) {
		qsort(f.lat, (size_t)n, sizeof(double), cmp_d);
		out->seconds = (double)(f.end - start) / 1e9;
		out->rate = (double)n / out->seconds;
		out->p50_ms = pctl(f.lat, n, 0.50);
		out->p99_ms = pctl(f.lat, n, 0.99);
	}
	out->received = f.got;
	out->duplicates = f.dup;
	if (r < 0)
		fprintf(stderr, "madf: bench: %s\n", err ? err : "?");
	free(err);
	natsSubscription_Destroy(f.sub);
	js_DeleteStream(np->js, name, NULL, NULL);
	free(f.lat);
	free(f.seen);
	bus_free(&bc);
	bus_free(&bp);
	return r;
}

/* Removes every stream of the bus's prefix (the benchmark's own). */
static void drop_streams(const struct bus_config *cfg)
{
	struct bus *b = NULL;
	char *err = NULL;
	if (bus_open(cfg, &b, &err) < 0) {
		free(err);
		return;
	}
	struct natsbus *nb = NB(b);
	jsStreamNamesList *list = NULL;
	char pfx[NATS_NAME_MAX];
	int pl = snprintf(pfx, sizeof(pfx), "%s_", nb->prefix);
	if (js_StreamNames(&list, nb->js, NULL, NULL) == NATS_OK)
		for (int i = 0; list && i < list->Count; i++)
			if (!strncmp(list->List[i], pfx, (size_t)pl))
				js_DeleteStream(nb->js, list->List[i], NULL, NULL);
	jsStreamNamesList_Destroy(list);
	bus_free(&b);
}

/* ---- the matrix ------------------------------------------------------------ */

struct cell {
	struct bench_run madf, raw;
};

static int cmp_rate(const void *a, const void *b)
{
	return cmp_d(&((const struct bench_run *)a)->rate, &((const struct bench_run *)b)->rate);
}

/* repeat runs of each on cfg (the environment set), the medians in *c. */
static int measure(const struct bus_config *cfg, long n, double rate, long nthreads,
		   long repeat, size_t size, struct cell *c)
{
	struct bench_run *m = xcalloc((size_t)repeat, sizeof(*m));
	struct bench_run *w = xcalloc((size_t)repeat, sizeof(*w));
	int r = 0;
	for (long i = 0; i < repeat && r == 0; i++)
		if (bench_bus_once(cfg, n, rate, nthreads, &m[i]) < 0 ||
		    raw_once(cfg, n, rate, size, &w[i]) < 0)
			r = -1;
	drop_streams(cfg);
	if (r == 0) {
		qsort(m, (size_t)repeat, sizeof(*m), cmp_rate);
		qsort(w, (size_t)repeat, sizeof(*w), cmp_rate);
		c->madf = m[repeat / 2];
		c->raw = w[repeat / 2];
	}
	free(m);
	free(w);
	return r;
}

/* "nats://[userinfo@]h1:p1,h2:p2" -> the first server, with the scheme and
 * the userinfo (caller frees); *count the servers. */
static char *first_server(const char *url, int *count)
{
	const char *comma = strchr(url, ',');
	*count = 1;
	for (const char *p = url; (p = strchr(p, ',')); p++)
		(*count)++;
	return xstrndup(url, comma ? (size_t)(comma - url) : strlen(url));
}

static const char *const storage_name[2] = { "memory", "file" };

int bench_bus_nats(const struct bus_config *base, long n, double rate, long nthreads,
		   long repeat, bool json)
{
	int nservers;
	char *single = first_server(base->url, &nservers);
	int ntopo = nservers > 1 ? 2 : 1;
	struct cell cells[2][2];
	size_t size = madf_message_size(n);
	int r = 0;
	char *old_pfx = getenv("MADF_NATS_PREFIX") ? xstrdup(getenv("MADF_NATS_PREFIX")) : NULL;
	for (int t = 0; t < ntopo && r == 0; t++) {
		struct bus_config cfg = *base;
		cfg.url = t == 0 ? single : base->url;
		char reps[16];
		snprintf(reps, sizeof(reps), "%d", t == 0 ? 1 : nservers < 3 ? nservers : 3);
		setenv("MADF_NATS_REPLICAS", reps, 1);
		for (int st = 0; st < 2 && r == 0; st++) {
			char pfx[32];
			snprintf(pfx, sizeof(pfx), "bench%ld%c%c", (long)getpid(), "sc"[t], "mf"[st]);
			setenv("MADF_NATS_PREFIX", pfx, 1);
			setenv("MADF_NATS_STORAGE", storage_name[st], 1);
			r = measure(&cfg, n, rate, nthreads, repeat, size, &cells[t][st]);
		}
	}
	unsetenv("MADF_NATS_STORAGE");
	if (old_pfx)
		setenv("MADF_NATS_PREFIX", old_pfx, 1);
	else
		unsetenv("MADF_NATS_PREFIX");
	free(old_pfx);
	if (r < 0) {
		free(single);
		return -1;
	}
	static const char *const topo_name[2] = { "one node", "cluster" };
	if (json) {
		printf("\"nats\": {\"message_bytes\": %zu, \"servers\": %d", size, nservers);
		for (int t = 0; t < ntopo; t++) {
			printf(", \"%s\": {", t ? "cluster" : "single");
			for (int st = 0; st < 2; st++) {
				const struct cell *c = &cells[t][st];
				printf("%s\"%s\": {\"madf_msgs_per_s\": %.0f, \"madf_p50_ms\": %.3f, "
				       "\"madf_p99_ms\": %.3f, \"raw_msgs_per_s\": %.0f, "
				       "\"raw_p50_ms\": %.3f, \"raw_p99_ms\": %.3f, "
				       "\"ratio_to_raw\": %.3f, \"received\": %ld, "
				       "\"duplicates\": %ld}", st ? ", " : "", storage_name[st],
				       c->madf.rate, c->madf.p50_ms, c->madf.p99_ms, c->raw.rate,
				       c->raw.p50_ms, c->raw.p99_ms, c->madf.rate / c->raw.rate,
				       c->madf.received, c->madf.duplicates + c->raw.duplicates);
			}
			printf("}");
		}
		printf("}");
	} else {
		printf("  NATS JetStream, %d-byte messages (the same for madf and raw libnats):\n",
		       (int)size);
		printf("  %-34s %10s %9s %9s %9s\n", "", "msg/s", "p50 ms", "p99 ms", "madf/raw");
		for (int t = 0; t < ntopo; t++) {
			char where[96];
			snprintf(where, sizeof(where), "%s%s", topo_name[t],
				 t ? (nservers >= 3 ? " (3 replicas)" : " (2 replicas)") : " (1 replica)");
			printf("  %s\n", where);
			for (int st = 0; st < 2; st++) {
				const struct cell *c = &cells[t][st];
				char l1[64], l2[64];
				snprintf(l1, sizeof(l1), "%s storage, madf", storage_name[st]);
				snprintf(l2, sizeof(l2), "%s storage, raw libnats", storage_name[st]);
				printf("    %-32s %10.0f %9.3f %9.3f %9.2f\n", l1, c->madf.rate,
				       c->madf.p50_ms, c->madf.p99_ms, c->madf.rate / c->raw.rate);
				printf("    %-32s %10.0f %9.3f %9.3f\n", l2, c->raw.rate, c->raw.p50_ms,
				       c->raw.p99_ms);
			}
		}
		long dup = 0;
		for (int t = 0; t < ntopo; t++)
			for (int st = 0; st < 2; st++)
				dup += cells[t][st].madf.duplicates + cells[t][st].raw.duplicates;
		printf("  every message arrived in every run (%ld of %ld); redelivered again: %ld\n",
		       n, n, dup);
		printf("  durable = file storage: a publish is acknowledged once written to the "
		       "server's files\n  (an fsync every 2 minutes on nats-server 2.9, sync_interval "
		       "from 2.10): a server crash\n  loses nothing, a power loss up to that "
		       "interval on one node; 3 replicas cover it\n");
	}
	free(single);
	return 0;
}
