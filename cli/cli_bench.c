/* madf bench bus: a producer process and a consumer process on one bus,
 * beside a baseline of the raw file operations measured in the same run. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "agents/market.h"
#include "agents/workflow.h"
#include "core/bus_nats.h"
#include "core/message.h"
#include "core/util.h"
#include "cli/bench_bus.h"
#include "tui/bench_console.h"
#include "cli/bench_news.h"
#include "cli/bench_review.h"
#include "cli/cli.h"
#include "server/serve.h"
#include "core/banned.h"


static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static void pace(int64_t start, long i, double rate)
{
	if (rate <= 0)
		return;
	int64_t due = start + (int64_t)((double)i * 1e9 / rate);
	int64_t now = util_mono_ns();
	if (due > now) {
		struct timespec ts = { (time_t)((due - now) / 1000000000),
				       (long)((due - now) % 1000000000) };
		nanosleep(&ts, NULL);
	}
}

struct prod_thread {
	const struct bus_config *cfg;
	long first, n; /* sequence numbers first .. first+n-1 */
	double rate;   /* this thread's share of the offered rate */
	int64_t start;
	int failed;
	pthread_t th;
};

/* One producer thread: a bus handle of its own, as an agent thread has. */
static void *producer_thread(void *arg)
{
	struct prod_thread *t = arg;
	struct bus *b;
	char *err = NULL;
	if (bus_open(t->cfg, &b, &err) < 0) {
		fprintf(stderr, "madf: bench: %s\n", err);
		free(err);
		t->failed = 1;
		return NULL;
	}
	for (long i = 0; i < t->n && !t->failed; i++) {
		pace(t->start, i, t->rate);
		cJSON *content = cJSON_CreateObject();
		cJSON_AddStringToObject(content, "status", "busy");
		cJSON_AddNumberToObject(content, "uptime_seconds", 1);
		cJSON_AddNumberToObject(content, "active_tasks", 1);
		cJSON_AddNumberToObject(content, "sequence", (double)(t->first + i));
		struct msg *m = msg_new("bench_producer", "bench_consumer", MSG_HEARTBEAT,
					content);
		if (bus_send(b, m, &err) < 0) {
			fprintf(stderr, "madf: bench: send: %s\n", err);
			free(err);
			err = NULL;
			t->failed = 1;
		}
		msg_free(&m);
	}
	bus_free(&b);
	return NULL;
}

/* The producer process: nthreads threads sharing n messages and the rate. */
static _Noreturn void producer(const struct bus_config *cfg, long n, double rate,
			       long nthreads, int go_fd)
{
	char c;
	if (read_all(go_fd, &c, 1) < 0)
		_exit(1);
	struct prod_thread *t = xcalloc((size_t)nthreads, sizeof(*t));
	int64_t start = util_mono_ns();
	long first = 0;
	for (long k = 0; k < nthreads; k++) {
		t[k] = (struct prod_thread){ .cfg = cfg, .first = first,
					     .n = n / nthreads + (k < n % nthreads),
					     .rate = rate / (double)nthreads,
					     .start = start };
		first += t[k].n;
		if (pthread_create(&t[k].th, NULL, producer_thread, &t[k]) != 0)
			_exit(1);
	}
	int failed = 0;
	for (long k = 0; k < nthreads; k++) {
		pthread_join(t[k].th, NULL);
		failed |= t[k].failed;
	}
	_exit(failed);
}

/* Waits for the n messages (sequences 0..n-1), each once; after
 * BENCH_SILENCE_S without one it gives up. Writes the end time (-1 when
 * some never came), the count received, duplicates, then the latencies. */
#define BENCH_SILENCE_S 30
static _Noreturn void consumer(const struct bus_config *cfg, long n, int ready_fd,
			       int out_fd)
{
	struct bus *b;
	struct bus_consumer *c;
	char *err = NULL;
	if (bus_open(cfg, &b, &err) < 0 ||
	    bus_consumer_open(b, "bench_consumer", &c, &err) < 0) {
		fprintf(stderr, "madf: bench: %s\n", err ? err : "?");
		_exit(1);
	}
	double *lat = xcalloc((size_t)n, sizeof(*lat));
	unsigned char *seen = xcalloc((size_t)n, 1);
	write_all(ready_fd, "r", 1);
	int64_t first = 0, last = util_mono_ns();
	long got = 0, dup = 0;
	while (got < n) {
		struct bus_delivery *d;
		int k = bus_claim(c, &d, &err);
		if (k < 0)
			_exit(1);
		if (k == 0) {
			if (util_mono_ns() - last > BENCH_SILENCE_S * 1000000000LL)
				break;
			bus_consumer_wait(c, 100);
			continue;
		}
		last = util_mono_ns();
		const cJSON *sq = cJSON_GetObjectItem(d->msg->content, "sequence");
		long s = cJSON_IsNumber(sq) ? (long)sq->valuedouble : -1;
		if (s < 0 || s >= n || seen[s]) {
			dup++; /* a redelivery (at least once) or a stranger */
		} else {
			seen[s] = 1;
			/* Latency from the send's timestamp to the handler. */
			lat[got++] = (double)(util_now_ns() - d->msg->ts_ns) / 1e6;
		}
		if (!first)
			first = util_mono_ns();
		if (bus_ack(c, &d, &err) < 0)
			_exit(1);
	}
	int64_t end = got == n ? util_mono_ns() : -1;
	write_all(out_fd, &end, sizeof(end));
	write_all(out_fd, &got, sizeof(got));
	write_all(out_fd, &dup, sizeof(dup));
	write_all(out_fd, lat, (size_t)n * sizeof(*lat));
	_exit(0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *v, long n, double p)
{
	long i = (long)ceil(p * (double)n) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

int bench_bus_once(const struct bus_config *cfg, long n, double rate,
		   long nthreads, struct bench_run *out)
{
	int go[2], ready[2], res[2];
	if (pipe(go) < 0 || pipe(ready) < 0 || pipe(res) < 0)
		return -1;
	/* Each process keeps only its ends open: a child that dies is an end
	 * of file to the others, never a wait for ever. */
	pid_t pc = fork();
	if (pc == 0) {
		close(go[0]); close(go[1]); close(ready[0]); close(res[0]);
		consumer(cfg, n, ready[1], res[1]);
	}
	pid_t pp = fork();
	if (pp == 0) {
		close(go[1]); close(ready[0]); close(ready[1]); close(res[0]); close(res[1]);
		producer(cfg, n, rate, nthreads, go[0]);
	}
	close(go[0]); close(ready[1]); close(res[1]);
	char c;
	int r = read_all(ready[0], &c, 1);
	int64_t start = util_mono_ns();
	if (r == 0)
		r = write_all(go[1], "g", 1);
	close(go[1]); /* a producer not told to go ends */
	int64_t end = 0;
	double *lat = xcalloc((size_t)n, sizeof(*lat));
	long got = 0, dup = 0;
	if (r == 0)
		r = read_all(res[0], &end, sizeof(end));
	if (r == 0)
		r = read_all(res[0], &got, sizeof(got));
	if (r == 0)
		r = read_all(res[0], &dup, sizeof(dup));
	if (r == 0)
		r = read_all(res[0], lat, (size_t)n * sizeof(*lat));
	out->received = got;
	out->duplicates = dup;
	int st1, st2;
	waitpid(pp, &st1, 0);
	waitpid(pc, &st2, 0);
	close(ready[0]);
	close(res[0]);
	if (r < 0 || !WIFEXITED(st1) || WEXITSTATUS(st1) || !WIFEXITED(st2) ||
	    WEXITSTATUS(st2)) {
		free(lat);
		return -1;
	}
	if (end < 0) {
		/* a figure over lost messages is no figure */
		fprintf(stderr, "madf: bench: only %ld of %ld messages arrived (none for %d s)\n",
			got, n, BENCH_SILENCE_S);
		free(lat);
		return -1;
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp_double);
	out->seconds = (double)(end - start) / 1e9;
	out->rate = (double)n / out->seconds;
	out->p50_ms = pct(lat, n, 0.50);
	out->p99_ms = pct(lat, n, 0.99);
	free(lat);
	return 0;
}

/* The baseline: the file operations madf does for one message, back to
 * back with no JSON, no validation, no waiting: create and write a hidden
 * temporary file in the inbox, hard-link it into an outbox, rename it into
 * place, rename it into processing/, rename it into processed/; when
 * durable, fdatasync the file and fsync the inbox for every message, as
 * the bus did before group commit. Any gap between this and the bus is
 * madf's own cost (or, with threads, its gain). */
struct raw_thread {
	char **d;
	long k, n;
	bool durable;
	int failed;
	pthread_t th;
};

static void *raw_thread(void *arg)
{
	struct raw_thread *t = arg;
	char **d = t->d;
	static const char body[] =
		"{\"message_id\": \"x\", \"type\": \"heartbeat\", \"content\": {}}\n";
	char a[512], b[512], c[512];
	for (long i = 0; i < t->n; i++) {
		snprintf(a, sizeof(a), "%s/.%ld-%ld.tmp", d[0], t->k, i);
		int fd = open(a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, body, sizeof(body) - 1) < 0) {
			if (fd >= 0)
				close(fd);
			t->failed = 1;
			return NULL;
		}
		if (t->durable)
			fdatasync(fd);
		close(fd);
		snprintf(b, sizeof(b), "%s/%ld-%ld.json", d[1], t->k, i);
		link(a, b);
		snprintf(b, sizeof(b), "%s/%ld-%ld.json", d[0], t->k, i);
		rename(a, b);
		if (t->durable)
			util_fsync_dir(d[0]);
		snprintf(c, sizeof(c), "%s/%ld-%ld.json", d[2], t->k, i);
		rename(b, c);
		snprintf(a, sizeof(a), "%s/%ld-%ld.json", d[3], t->k, i);
		rename(c, a);
	}
	return NULL;
}

/* n messages shared by nthreads threads of one process. */
static int bench_raw_once(const char *dir, long n, bool durable, long nthreads,
			  double *rate)
{
	static const char *const sub[] = { "inbox", "outbox", "processing", "processed" };
	char *d[4];
	int r = 0;
	for (int k = 0; k < 4; k++) {
		d[k] = xasprintf("%s/%s", dir, sub[k]);
		if (util_mkdirs(d[k], NULL) < 0)
			r = -1;
	}
	struct raw_thread *t = xcalloc((size_t)nthreads, sizeof(*t));
	int64_t start = util_mono_ns();
	long started = 0;
	for (long k = 0; k < nthreads && r == 0; k++) {
		t[k] = (struct raw_thread){ .d = d, .k = k, .durable = durable,
					    .n = n / nthreads + (k < n % nthreads) };
		if (pthread_create(&t[k].th, NULL, raw_thread, &t[k]) != 0)
			r = -1;
		else
			started++;
	}
	for (long k = 0; k < started; k++) {
		pthread_join(t[k].th, NULL);
		if (t[k].failed)
			r = -1;
	}
	*rate = (double)n / ((double)(util_mono_ns() - start) / 1e9);
	for (int k = 0; k < 4; k++)
		free(d[k]);
	free(t);
	return r;
}

static int cmp_run(const void *a, const void *b)
{
	return cmp_double(&((const struct bench_run *)a)->rate,
			  &((const struct bench_run *)b)->rate);
}

/* A scratch directory PREFIX-XXXXXX inside the data directory (the same
 * disk as the bus); caller removes and frees it. NULL after an error. */
static char *bench_scratch(struct cli *cli, const char *prefix)
{
	char *err = NULL;
	if (util_mkdirs(cli->data_dir, &err) < 0) {
		cli_fail(EXIT_FAIL, "bench", "%s", err);
		free(err);
		return NULL;
	}
	char *dir = xasprintf("%s/%s-XXXXXX", cli->data_dir, prefix);
	if (!mkdtemp(dir)) {
		cli_fail(EXIT_FAIL, "bench", "cannot create %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

static const struct cli_cmd bench_bus_entry;

static int bench_bus(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "bench", &bench_bus_entry, 0 };
	long n = 10000, repeat = 3, nthreads = 1;
	double rate = 0;
	bool durable = false, json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "bench", "unexpected argument %s", val);
		if (!strcmp(name, "--durable"))
			durable = true;
		else if (!strcmp(name, "--json"))
			json = true;
		else if (!strcmp(name, "--rate") ?
			 cli_double("bench", name, val, 0.001, 1e7, &rate) < 0 :
			 !strcmp(name, "--threads") ?
			 cli_long("bench", name, val, 1, 256, &nthreads) < 0 :
			 cli_long("bench", name, val, 1, 10000000,
				  !strcmp(name, "--messages") ? &n : &repeat) < 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	if (nthreads > n)
		nthreads = n;
	char *dir = bench_scratch(cli, "bench");
	if (!dir)
		return EXIT_FAIL;
	struct bus_config cfg = cli->bcfg;
	cfg.data_dir = dir;
	cfg.durable = durable;
	cfg.inbox_limit = (size_t)n + 16;
	/* --bus nats://...: the file bus first, then NATS beside it */
	struct bus_config ncfg = cfg;
	bool nats = cfg.url && bus_nats_url(cfg.url);
	static char file_url[] = "file:";
	if (nats)
		cfg.url = file_url;
	struct bench_run *runs = xcalloc((size_t)repeat, sizeof(*runs));
	double *raw = xcalloc((size_t)repeat, sizeof(*raw));
	double *rawt = xcalloc((size_t)repeat, sizeof(*rawt));
	int rc = EXIT_OK;
	/* Every run in a directory of its own, all removed at the end: on
	 * ext4 without a journal, creating files right after deleting many is
	 * slow (the allocator skips recently freed inodes), and that would be
	 * the benchmark measuring its own clean-up. */
	for (long i = 0; i < repeat && rc == EXIT_OK; i++) {
		char *rdir = xasprintf("%s/raw-%ld", dir, i);
		char *tdir = xasprintf("%s/rawt-%ld", dir, i);
		char *bdir = xasprintf("%s/bus-%ld", dir, i);
		cfg.data_dir = bdir;
		if (bench_raw_once(rdir, n, durable, 1, &raw[i]) < 0 ||
		    (nthreads > 1 && bench_raw_once(tdir, n, durable, nthreads, &rawt[i]) < 0) ||
		    bench_bus_once(&cfg, n, rate, nthreads, &runs[i]) < 0)
			rc = cli_fail(EXIT_FAIL, "bench", "a benchmark process failed");
		free(rdir);
		free(tdir);
		free(bdir);
	}
	cfg.data_dir = dir;
	util_rm_tree(dir);
	if (rc == EXIT_OK) {
		qsort(runs, (size_t)repeat, sizeof(*runs), cmp_run);
		qsort(raw, (size_t)repeat, sizeof(*raw), cmp_double);
		qsort(rawt, (size_t)repeat, sizeof(*rawt), cmp_double);
		struct bench_run *med = &runs[repeat / 2];
		double base = raw[repeat / 2];
		double baset = nthreads > 1 ? rawt[repeat / 2] : base;
		if (json) {
			printf("{\"messages\": %ld, \"seconds\": %.3f, \"msgs_per_s\": %.0f, "
			       "\"latency_p50_ms\": %.3f, \"latency_p99_ms\": %.3f, "
			       "\"durable\": %s, \"rate_limit\": %.0f, \"runs\": %ld, "
			       "\"threads\": %ld, "
			       "\"baseline_raw_msgs_per_s\": %.0f, \"ratio_to_baseline\": %.3f, "
			       "\"baseline_raw_threads_msgs_per_s\": %.0f",
			       n, med->seconds, med->rate, med->p50_ms, med->p99_ms,
			       durable ? "true" : "false", rate, repeat, nthreads, base,
			       med->rate / base, baset);
			if (nats) {
				/* one document: the file bus's fields, then "nats" */
				printf(", ");
				if (bench_bus_nats(&ncfg, n, rate, nthreads, repeat, true) < 0) {
					printf("\"nats\": null"); /* no figure over failed work */
					rc = cli_fail(EXIT_FAIL, "bench", "the NATS benchmark failed");
				}
			}
			printf("}\n");
		} else {
			printf("bench bus: %ld messages, %s%s, %s, %ld producer thread%s, "
			       "median of %ld runs\n", n, nats ? "the file bus " : "",
			       durable ? "durable (fsync, group commit)" : "no fsync",
			       rate > 0 ? "paced" : "as fast as possible", nthreads,
			       nthreads > 1 ? "s" : "", repeat);
			if (rate > 0)
				printf("  offered rate         %10.0f msg/s\n", rate);
			printf("  madf bus             %10.0f msg/s  (%.3f s)\n", med->rate,
			       med->seconds);
			printf("  latency send->handler p50 %.3f ms, p99 %.3f ms\n", med->p50_ms,
			       med->p99_ms);
			printf("  baseline: madf's file operations alone, one process %9.0f msg/s\n",
			       base);
			if (nthreads > 1)
				printf("  baseline, %3ld threads, a sync per message each %9.0f msg/s\n",
				       nthreads, baset);
			printf("  madf / baseline      %10.2f\n", med->rate / base);
			fflush(stdout);
			if (nats && bench_bus_nats(&ncfg, n, rate, nthreads, repeat, false) < 0)
				rc = cli_fail(EXIT_FAIL, "bench", "the NATS benchmark failed");
		}
	}
	free(runs);
	free(raw);
	free(rawt);
	free(dir);
	return rc;
}

/* ---- bench workflow ---------------------------------------------------------- */

/* Fifty pairs quoted in 1987: USD legs from the FRED file and crosses the
 * market loader computes from two legs. */
static const char scale_pairs[] =
	"USD/JPY,GBP/USD,AUD/USD,NZD/USD,USD/CHF,USD/CAD,USD/CNY,USD/HKD,USD/SGD,USD/KRW,"
	"USD/INR,USD/THB,USD/MYR,USD/SEK,USD/NOK,USD/DKK,USD/ZAR,USD/LKR,USD/ATS,USD/BEF,"
	"USD/DEM,USD/ESP,USD/FIM,USD/FRF,USD/GRD,USD/IEP,USD/ITL,USD/NLG,USD/PTE,GBP/JPY,"
	"AUD/JPY,NZD/JPY,CHF/JPY,CAD/JPY,DEM/JPY,FRF/JPY,GBP/CHF,GBP/DEM,GBP/FRF,AUD/NZD,"
	"EUR/USD,DEM/CHF,FRF/DEM,NLG/DEM,ITL/DEM,SEK/NOK,DKK/SEK,GBP/AUD,GBP/CAD,AUD/CAD";

/* Runs `madf run weekly` as a user would, in its own process; the wall
 * time from start to exit, and the CPU time (user + system) it used. Exit
 * 1 (the run finished with failed tasks) is no failure here: the tally of
 * the state says which failed and why. */
static int run_once(const char *dir, const char *as_of, const char *pairs,
		    const char *fx, const char *news, double *secs, double *cpu)
{
	char *data = xasprintf("%s/data", dir), *logs = xasprintf("%s/logs", dir);
	char *rep = xasprintf("%s/reports", dir);
	char *mk = xasprintf("csv:%s", fx), *nw = xasprintf("jsonl:%s", news);
	const char *args[] = { "madf", "--data-dir", data, "--log-dir", logs, "run", "weekly",
			       "--as-of", as_of, "--pairs", pairs, "--market", mk,
			       "--news", nw, "--report-dir", rep };
	char *argv[ARRAY_SIZE(args) + 1];
	for (size_t i = 0; i < ARRAY_SIZE(args); i++)
		argv[i] = xstrdup(args[i]);
	argv[ARRAY_SIZE(args)] = NULL;
	int64_t t0 = util_mono_ns();
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	wait4(pid, &st, 0, &ru);
	*secs = (double)(util_mono_ns() - t0) / 1e9;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	for (size_t i = 0; i < ARRAY_SIZE(args); i++)
		free(argv[i]);
	free(data);
	free(logs);
	free(rep);
	free(mk);
	free(nw);
	return WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 1) ? 0 : -1;
}

/* What the runs of a data directory did with their tasks, from the
 * product_manager's state. A task failed for missing data is one the data
 * cannot price (its failure reads "no data for PAIR in ..."): the only
 * failure the benchmark accepts. */
struct wf_tally {
	long runs, tasks, done, failed, no_data, reassigned, requeued;
	long bad;                 /* failed for another reason, or not finished */
	char other[200];          /* the first of those, for the message */
};

static void tally_failed(struct wf_tally *w, const cJSON *run, const cJSON *t)
{
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(t, "task_id"));
	const char *reason = NULL;
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "failures")) {
		const char *fid = cJSON_GetStringValue(cJSON_GetObjectItem(f, "task_id"));
		const char *what = cJSON_GetStringValue(cJSON_GetObjectItem(f, "what"));
		if (fid && id && !strcmp(fid, id) && what && !strcmp(what, "failed"))
			reason = cJSON_GetStringValue(cJSON_GetObjectItem(f, "reason"));
	}
	if (reason && !strncmp(reason, "no data for ", 12)) {
		w->no_data++;
		return;
	}
	if (!w->bad++)
		snprintf(w->other, sizeof(w->other), "%s: %s", id ? id : "?",
			 reason ? reason : "no reason recorded");
}

/* Adds every run in DIR/data/state/product_manager-state.json; -1 when it
 * cannot be read or a run is not done. */
static int tally_dir(const char *dir, struct wf_tally *w)
{
	char *path = xasprintf("%s/data/state/product_manager-state.json", dir);
	char *buf = NULL;
	size_t len;
	int rc = util_read_file(path, 256 << 20, &buf, &len, NULL);
	free(path);
	cJSON *st = rc == 0 ? json_parse_strict(buf, len, NULL) : NULL;
	free(buf);
	const cJSON *run;
	rc = st ? 0 : -1;
	cJSON_ArrayForEach(run, cJSON_GetObjectItem(st, "runs")) {
		const char *rs = cJSON_GetStringValue(cJSON_GetObjectItem(run, "status"));
		if (!rs || strcmp(rs, "done"))
			rc = -1;
		w->runs++;
		const cJSON *t, *f;
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
			const char *ts = cJSON_GetStringValue(cJSON_GetObjectItem(t, "status"));
			w->tasks++;
			const cJSON *rq = cJSON_GetObjectItem(t, "requeued");
			w->requeued += cJSON_IsNumber(rq) ? (long)rq->valuedouble : 0;
			if (ts && !strcmp(ts, "done")) {
				w->done++;
			} else if (ts && !strcmp(ts, "failed")) {
				w->failed++;
				tally_failed(w, run, t);
			} else if (!w->bad++) {
				snprintf(w->other, sizeof(w->other), "%s ended %s",
					 cJSON_GetStringValue(cJSON_GetObjectItem(t, "task_id")),
					 ts ? ts : "without a status");
			}
		}
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "failures")) {
			const char *what = cJSON_GetStringValue(cJSON_GetObjectItem(f, "what"));
			w->reassigned += what && !strcmp(what, "reassigned");
		}
	}
	cJSON_Delete(st);
	return rc;
}

static void tally_print(const char *label, const struct wf_tally *w)
{
	printf("  %-34s %ld done, %ld failed (%ld for missing data), %ld reassigned, "
	       "%ld requeued for capacity\n", label, w->done, w->failed, w->no_data, w->reassigned,
	       w->requeued);
}

static void tally_json(const struct wf_tally *w)
{
	printf("\"done\": %ld, \"failed\": %ld, \"failed_no_data\": %ld, \"reassigned\": %ld, "
	       "\"requeued\": %ld", w->done, w->failed, w->no_data, w->reassigned, w->requeued);
}

struct week_run {
	double secs, cpu;
	long done;
};

static int cmp_week(const void *a, const void *b)
{
	const struct week_run *x = a, *y = b;
	return x->secs < y->secs ? -1 : x->secs > y->secs;
}

static const struct cli_cmd bench_workflow_entry;

static int bench_workflow(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "bench", &bench_workflow_entry, 0 };
	const char *fx = "../shared/data/fx/fred-daily-1971-2017.csv";
	const char *news = "../shared/data/news/reuters21578.jsonl";
	long runs = 3, weeks = 12;
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "bench", "unexpected argument %s", val);
		if (!strcmp(name, "--json"))
			json = true;
		else if (!strcmp(name, "--fx"))
			fx = val;
		else if (!strcmp(name, "--news"))
			news = val;
		else if (cli_long("bench", name, val, 1, 52,
				  !strcmp(name, "--runs") ? &runs : &weeks) < 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	if (access(fx, R_OK) < 0 || access(news, R_OK) < 0)
		return cli_fail(EXIT_FAIL, "bench", "the real data is needed: %s and %s (--fx, "
				"--news): %s", fx, news, strerror(errno));
	char *dir = bench_scratch(cli, "bench-wf");
	if (!dir)
		return EXIT_FAIL;
	/* The week: ten pairs (the default set), each run on a fresh data
	 * directory, so nothing is served from an earlier run. */
	char def[256] = "";
	for (size_t i = 0; i < wf_default_npairs; i++)
		snprintf(def + strlen(def), sizeof(def) - strlen(def), "%s%s", i ? "," : "",
			 wf_default_pairs[i]);
	struct week_run *t = xcalloc((size_t)runs, sizeof(*t));
	struct wf_tally w1 = { 0 }, wn = { 0 };
	int rc = EXIT_OK;
	for (long i = 0; i < runs && rc == EXIT_OK; i++) {
		char *d = xasprintf("%s/week-%ld", dir, i);
		long before = w1.done;
		if (run_once(d, "1987-03-27", def, fx, news, &t[i].secs, &t[i].cpu) < 0 ||
		    tally_dir(d, &w1) < 0)
			rc = cli_fail(EXIT_FAIL, "bench", "the real-data week failed (in %s)", d);
		t[i].done = w1.done - before;
		free(d);
	}
	/* Scale: 50 pairs x `weeks` consecutive weeks on one data directory,
	 * as an operator running the weekly job over a quarter would. */
	double total = 0, worst = 0, cpun = 0;
	char *sd = xasprintf("%s/scale", dir);
	for (long k = 0; k < weeks && rc == EXIT_OK; k++) {
		int32_t day = market_day_from_ymd(1987, 3, 27) - (int32_t)(7 * k);
		char as_of[16];
		market_day_format(day, as_of, sizeof(as_of));
		double s1, c1 = 0;
		if (run_once(sd, as_of, scale_pairs, fx, news, &s1, &c1) < 0)
			rc = cli_fail(EXIT_FAIL, "bench", "50 pairs, week of %s failed (in %s)", as_of, sd);
		total += s1;
		cpun += c1;
		if (s1 > worst)
			worst = s1;
	}
	if (rc == EXIT_OK && tally_dir(sd, &wn) < 0)
		rc = cli_fail(EXIT_FAIL, "bench", "the 50-pair runs did not all finish (in %s)", sd);
	free(sd);
	if (rc == EXIT_OK) {
		qsort(t, (size_t)runs, sizeof(*t), cmp_week);
		double week = t[runs / 2].secs;
		size_t tasks1 = wf_default_npairs * 2, tasksn = (size_t)(50 * 2 * weeks);
		/* Per task done: equal work on both sides (a task failed for
		 * missing data costs next to nothing). */
		long done1 = t[runs / 2].done > 0 ? t[runs / 2].done : 1;
		long donen = wn.done > 0 ? wn.done : 1;
		double per1 = week / (double)done1 * 1000, pern = total / (double)donen * 1000;
		/* CPU time per task done: what the work costs, less the waits
		 * of a machine shared with other work. */
		double cpu1 = t[runs / 2].cpu / (double)done1 * 1000;
		double cpupn = cpun / (double)donen * 1000;
		double cpu_ratio = cpu1 > 0 ? cpupn / cpu1 : 0;
		if (json) {
			printf("{\"week\": {\"as_of\": \"1987-03-27\", \"pairs\": %zu, \"tasks\": %zu, "
			       "\"runs\": %ld, \"seconds_median\": %.3f, \"seconds_min\": %.3f, "
			       "\"seconds_max\": %.3f, \"ms_per_task_done\": %.2f, "
			       "\"cpu_ms_per_task_done\": %.2f, ", wf_default_npairs,
			       tasks1, runs, week, t[0].secs, t[runs - 1].secs, per1, cpu1);
			tally_json(&w1);
			printf("}, \"scale\": {\"pairs\": 50, \"weeks\": %ld, \"tasks\": %zu, "
			       "\"seconds_total\": %.3f, \"seconds_per_week\": %.3f, "
			       "\"seconds_worst_week\": %.3f, \"ms_per_task_done\": %.2f, "
			       "\"per_task_vs_week\": %.3f, \"cpu_ms_per_task_done\": %.2f, "
			       "\"cpu_per_task_vs_week\": %.3f, ", weeks, tasksn, total,
			       total / (double)weeks, worst, pern, pern / per1, cpupn, cpu_ratio);
			tally_json(&wn);
			printf("}}\n");
		} else {
			printf("bench workflow: the real-data week ending 1987-03-27, end to end "
			       "(madf run weekly, embedded agents, fsync on)\n");
			printf("  one week, %zu pairs (%zu tasks)   median %.3f s of %ld runs "
			       "(min %.3f, max %.3f), %.1f ms per task done (CPU %.1f ms)\n",
			       wf_default_npairs, tasks1, week, runs, t[0].secs, t[runs - 1].secs, per1,
			       cpu1);
			char label[64];
			snprintf(label, sizeof(label), "tasks in the %ld runs:", runs);
			tally_print(label, &w1);
			printf("  50 pairs x %ld weeks (%zu tasks)  %.3f s in all, %.3f s per week "
			       "(worst %.3f), %.1f ms per task done (CPU %.1f ms)\n", weeks, tasksn,
			       total, total / (double)weeks, worst, pern, cpupn);
			tally_print("tasks:", &wn);
			printf("  per task done, scaled / one week %.2f (CPU %.2f)\n", pern / per1,
			       cpu_ratio);
		}
		const struct wf_tally *bad = w1.bad ? &w1 : wn.bad ? &wn : NULL;
		if (bad)
			rc = cli_fail(EXIT_FAIL, "bench", "%ld task%s of the %s failed for a reason "
				      "other than missing data or did not finish (first: %s)", bad->bad,
				      bad->bad == 1 ? "" : "s", bad == &w1 ? "week" : "50-pair weeks",
				      bad->other);
	}
	util_rm_tree(dir);
	free(dir);
	free(t);
	return rc;
}

static const struct cli_opt bench_bus_options[] = {
	{ .name = "--messages", .arg = "N", .help = "messages to send (default 10000)" },
	{ .name = "--rate", .arg = "R",
	  .help = "pace the producers at R messages per second (default: as fast as they "
		  "go)" },
	{ .name = "--durable", .help = "sync every send (group commit across threads)" },
	{ .name = "--threads", .arg = "T",
	  .help = "producer threads, each with its own bus handle (default 1)" },
	{ .name = "--repeat", .arg = "K", .help = "runs, the median reported (default 3)" },
	{ .name = "--json", .help = "print the figures as JSON" },
	{ 0 },
};

static const struct cli_cmd bench_bus_entry = {
	.name = "bus",
	.opts = bench_bus_options,
	.summary = "a producer and a consumer process on a scratch bus: messages per second "
		   "and p50/p99 latency, beside the raw file operations (with --bus nats://...: "
		   "NATS, memory and file storage, beside raw libnats and the file bus)",
	.run = bench_bus,
};

static const struct cli_opt bench_workflow_options[] = {
	{ .name = "--runs", .arg = "N",
	  .help = "runs of the 1987-03-27 week, the median reported (default 3)" },
	{ .name = "--weeks", .arg = "W",
	  .help = "consecutive weeks of 50 pairs on one data directory (default 12)" },
	{ .name = "--fx", .arg = "PATH",
	  .help = "the daily closes (default: ../shared/data/fx/fred-daily-1971-2017.csv)" },
	{ .name = "--news", .arg = "PATH",
	  .help = "the news archive (default: ../shared/data/news/reuters21578.jsonl)" },
	{ .name = "--json", .help = "print the figures as JSON" },
	{ 0 },
};

static const struct cli_cmd bench_workflow_entry = {
	.name = "workflow",
	.opts = bench_workflow_options,
	.summary = "time `madf run weekly` end to end on the real data, and the time and CPU "
		   "time per task done over many pairs and weeks",
	.run = bench_workflow,
};

static const struct cli_cmd *const bench_subs[] = {
	&bench_bus_entry, &bench_workflow_entry, &cmd_bench_console_entry, &cmd_bench_news_entry,
	&cmd_bench_review_entry, &cmd_bench_serve_entry, NULL,
};

const struct cli_cmd cmd_bench_entry = {
	.name = "bench",
	.summary = "benchmarks",
	.subs = bench_subs,
};
