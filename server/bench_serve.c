/* madf bench serve: N conversations at once against `madf serve`, whose
 * model is the project's replay server (tests/integration/llm_replay.py:
 * its scripted agent streams a narrative in chunks 0.3 s apart, so each
 * conversation stays open for some seconds). Everything runs in a
 * scratch directory: the replay server and the server are child
 * processes, the clients are one libcurl multi in this process, driven by
 * epoll (curl_multi_socket_action: each wake costs the sockets that are
 * ready, not all N; with curl_multi_poll over 1,000 sockets the client
 * took a quarter of the 2 cores the server needs). Measures
 * and prints:
 *   - time to the first event of each stream of the burst (from the moment
 *     the bench starts all the requests, so it includes the server
 *     accepting them and each waiting behind the others' admissions):
 *     median, 95th percentile, max;
 *   - time to the first event of P more streams (--probes, 50) opened one
 *     at a time once every stream of the burst has its first event, while
 *     they stream (the aim's "first event with 1,000 streams open"), from
 *     each request's own start: median, 95th percentile, max, and how many
 *     of the burst's streams were open at the least when one started;
 *   - events per second, all streams together, first request to last end;
 *   - the server's memory: resident before, when the most streams were
 *     open at once (and how many), per open stream, and its peak;
 *   - the server's stop: from SIGTERM, once every stream has ended, to
 *     its exit;
 * and checks that every stream answered 200, ended with
 * conversation_complete and carried every event its session recorded
 * (data/serve-sessions/SESSION.jsonl), and that those without an
 * agent_error (a model call the replay server failed) had the same number,
 * and that the server then stopped whole (exit 0, no conversation left
 * finishing its work). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>
#include <curl/curl.h>

#include "core/util.h"
#include "server/serve.h"
#include "cli/cli.h"
#include "core/banned.h"

#define BS_KEY "sk-madf-bench-serve-0123456789"

/* What the streams are doing, for the loop. */
struct bs_counts {
	long open;          /* streams open now (first event come, not ended) */
	long open_burst;    /* of them, the burst's */
	long settled_burst; /* the burst's with their first event, or ended without */
};

struct bs_stream {
	struct sbuf carry;  /* the bytes after the last whole event */
	int64_t start_ns;   /* its request started */
	int64_t first_ns;   /* when the first event came (0: not yet) */
	bool probe;         /* one of the streams opened one at a time */
	char session[25];   /* its sessionId (from the first event) */
	long events;
	long agent_errors;  /* agent_error events (the model failed a turn) */
	bool complete;      /* the last event was conversation_complete */
	bool done;
	long status;
	CURL *h;
	struct bs_counts *k;
};

/* The epoll set libcurl's sockets are in, and its timer. */
struct bs_loop {
	int ep;
	int64_t due_ns;     /* libcurl's timer: when it is due (monotonic; -1: none) */
};

static int bs_socket(CURL *h, curl_socket_t fd, int what, void *ctx, void *sctx)
{
	(void)h;
	(void)sctx;
	struct bs_loop *lp = ctx;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(lp->ep, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	struct epoll_event ev = { .events = (what & CURL_POLL_IN ? EPOLLIN : 0u) |
					    (what & CURL_POLL_OUT ? EPOLLOUT : 0u),
				  .data.fd = fd };
	if (epoll_ctl(lp->ep, EPOLL_CTL_MOD, fd, &ev) < 0 && errno == ENOENT)
		epoll_ctl(lp->ep, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

static int bs_timer(CURLM *m, long ms, void *ctx)
{
	(void)m;
	((struct bs_loop *)ctx)->due_ns = ms < 0 ? -1 : util_mono_ns() + (int64_t)ms * 1000000;
	return 0;
}

/* Counts the whole events in what came; remembers the last one's type. */
static size_t bs_write(char *p, size_t size, size_t n, void *ctx)
{
	struct bs_stream *s = ctx;
	size_t len = size * n;
	sbuf_add(&s->carry, p, len);
	char *b = s->carry.data;
	size_t used = 0;
	for (;;) {
		char *e = memmem(b + used, s->carry.len - used, "\n\n", 2);
		if (!e)
			break;
		*e = '\0';
		if (!strncmp(b + used, "data: ", 6)) {
			if (!s->first_ns) {
				s->first_ns = util_mono_ns();
				s->k->open++;
				if (!s->probe) {
					s->k->open_burst++;
					s->k->settled_burst++;
				}
				const char *sid = strstr(b + used, "\"sessionId\":\"");
				if (sid && strlen(sid + 13) >= 24)
					memcpy(s->session, sid + 13, 24);
			}
			s->events++;
			if (!strncmp(b + used, "data: {\"type\":\"agent_error\"", 29))
				s->agent_errors++;
			s->complete = strstr(b + used, "{\"type\":\"conversation_complete\"") != NULL;
		}
		used = (size_t)(e - b) + 2;
	}
	memmove(b, b + used, s->carry.len - used);
	s->carry.len -= used;
	return len;
}

/* SIGTERM to the server once every stream has ended: how long it took to
 * exit (ms), and whether it stopped whole (exit 0, its log's last word
 * "stopped", not "stopped; N conversations still finishing a call"). */
static double bs_stop(pid_t pid, const char *errpath, bool *clean)
{
	int64_t t0 = util_mono_ns();
	int status = 0;
	kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	double ms = (double)(util_mono_ns() - t0) / 1e6;
	char *log = NULL;
	size_t len = 0;
	*clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		 util_read_file(errpath, 64 << 20, &log, &len, NULL) == 0 &&
		 len >= 21 && !memcmp(log + len - 21, "madf: serve: stopped\n", 21);
	free(log);
	return ms;
}

static long rss_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long v = -1;
	size_t fl = strlen(field);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl) && line[fl] == ':')
			v = strtol(line + fl + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* Starts argv (environment: the current one plus env, NULL-ended
 * "NAME=VALUE"s) with stdout on a pipe and stderr on errpath; reads the
 * port from its first line. 0 with *pid and *port, or -1 with *err. */
static int bs_spawn(const char *const argv[], const char *const env[], const char *errpath,
		    pid_t *pid, unsigned *port, char **err)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return err_set(err, "pipe: %s", strerror(errno));
	pid_t p = fork();
	if (p < 0)
		return err_set(err, "fork: %s", strerror(errno));
	if (p == 0) {
		dup2(pfd[1], 1);
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (e >= 0)
			dup2(e, 2);
		close(pfd[0]);
		for (size_t i = 0; env && env[i]; i++) {
			const char *eq = strchr(env[i], '=');
			char *k = xstrndup(env[i], (size_t)(eq - env[i]));
			setenv(k, eq + 1, 1);
		}
		size_t n = 0;
		while (argv[n])
			n++;
		char **av = xcalloc(n + 1, sizeof(*av));
		for (size_t i = 0; i < n; i++)
			av[i] = xstrdup(argv[i]);
		execvp(av[0], av);
		_exit(127);
	}
	close(pfd[1]);
	char buf[32];
	size_t k = 0;
	while (k < sizeof(buf) - 1) {
		ssize_t r = read(pfd[0], buf + k, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || buf[k] == '\n')
			break;
		k++;
	}
	buf[k] = '\0';
	close(pfd[0]);
	char *end;
	long v = strtol(buf, &end, 10);
	if (!k || *end || v <= 0 || v > 65535) {
		kill(p, SIGTERM);
		waitpid(p, NULL, 0);
		return err_set(err, "%s did not start (see %s)", argv[0], errpath);
	}
	*pid = p;
	*port = (unsigned)v;
	return 0;
}

/* The machine's 1-minute load average (-1: unknown), for the figures'
 * context. */
static double load_avg(void)
{
	double load = -1;
	FILE *lf = fopen("/proc/loadavg", "r");
	if (lf) {
		if (fscanf(lf, "%lf", &load) != 1)
			load = -1;
		fclose(lf);
	}
	return load;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static long bs_opt(const char *name, const char *val, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long x = strtol(val, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return cli_fail(EXIT_USAGE, "bench serve", "%s must be an integer from %ld to %ld",
				name, lo, hi);
	*out = x;
	return 0;
}

/* Starts stream s's request (a POST of body) on m. */
static void bs_add(CURLM *m, struct bs_stream *s, struct bs_counts *k, bool probe,
		   const char *url, struct curl_slist *hdrs, const char *body)
{
	CURL *h = curl_easy_init();
	sbuf_init(&s->carry);
	s->h = h;
	s->k = k;
	s->probe = probe;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, bs_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(h, CURLOPT_PRIVATE, s);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 600L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	s->start_ns = util_mono_ns();
	curl_multi_add_handle(m, h);
}

/* The times to the first event of the n streams of v that had one:
 * median, p95 and max in ms (0 when none), and how many had one. */
static long bs_ttfe(const struct bs_stream *v, long n, double *med, double *p95, double *mx)
{
	int64_t *t = xcalloc((size_t)n + 1, sizeof(*t));
	long k = 0;
	for (long i = 0; i < n; i++)
		if (v[i].first_ns)
			t[k++] = v[i].first_ns - v[i].start_ns;
	qsort(t, (size_t)k, sizeof(*t), cmp_i64);
	*med = k ? (double)t[k / 2] / 1e6 : 0;
	*p95 = k ? (double)t[(k * 95) / 100 < k ? (k * 95) / 100 : k - 1] / 1e6 : 0;
	*mx = k ? (double)t[k - 1] / 1e6 : 0;
	free(t);
	return k;
}

/* Whether stream s is whole: 200, conversation_complete, and every event
 * its session recorded in data (one line each). */
static bool bs_whole(const struct bs_stream *s, const char *data)
{
	long lines = -1;
	if (s->session[0]) {
		char *ep = xasprintf("%s/serve-sessions/%s.jsonl", data, s->session);
		FILE *f = fopen(ep, "r");
		int ch;
		lines = 0;
		while (f && (ch = getc(f)) != EOF)
			lines += ch == '\n';
		if (f)
			fclose(f);
		free(ep);
	}
	return s->status == 200 && s->complete && lines == s->events;
}

static int bench_serve(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "bench serve", &cmd_bench_serve_entry, 0 };
	long nstreams = 1000, rounds = 3, nprobes = 50;
	const char *replay = "tests/integration/llm_replay.py";
	bool json = false, fsync = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "bench serve", "unexpected argument \"%s\"", val);
		if (!strcmp(name, "--json"))
			json = true;
		else if (!strcmp(name, "--fsync"))
			fsync = true;
		else if (!strcmp(name, "--replay"))
			replay = val;
		else if ((!strcmp(name, "--streams") ? bs_opt(name, val, 1, 10000, &nstreams) :
			  !strcmp(name, "--probes") ? bs_opt(name, val, 0, 1000, &nprobes) :
			  bs_opt(name, val, 1, 10, &rounds)) != 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	(void)cli;
	if (access(replay, R_OK) < 0)
		return cli_fail(EXIT_USAGE, "bench serve", "the replay server %s: %s (run from "
				"madf's source tree, or give --replay PATH)", replay, strerror(errno));
	/* Before the run: at the end the bench's own threads (two a stream in
	 * the server) are in it. */
	double load = load_avg();
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/madf-bench-serve.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		int e = errno;
		free(dir);
		return cli_fail(EXIT_FAIL, "bench serve", "mkdtemp: %s", strerror(e));
	}
	/* Each stream is a socket here and several descriptors in the server. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	char *data = xasprintf("%s/data", dir), *logs = xasprintf("%s/logs", dir);
	char *rlog = xasprintf("%s/replay.jsonl", dir), *rerr = xasprintf("%s/replay.err", dir);
	char *serr = xasprintf("%s/serve.err", dir), *agents = xasprintf("%s/serve-agents.json", data);
	char *tokpath = serve_tokens_path(data);
	char *err = NULL, *token = NULL;
	pid_t rpid = 0, spid = 0;
	unsigned rport = 0, sport = 0;
	int rc = EXIT_FAIL;
	long nall = nstreams + nprobes;
	struct bs_stream *st = xcalloc((size_t)nall, sizeof(*st));
	CURLM *m = NULL;
	struct curl_slist *hdrs = NULL;
	char *body = NULL;
	static const char agents_json[] =
		"{\"agents\": [{\"name\": \"bench-narrator\", \"system\": \"You are the narrator "
		"of madf.\", \"maxSteps\": 1}]}\n";
	if (util_mkdirs(data, &err) < 0 ||
	    util_write_file_atomic(agents, agents_json, strlen(agents_json), false, &err) < 0 ||
	    serve_token_add(tokpath, "bench", &token, &err) < 0)
		goto out;
	const char *rargv[] = { "python3", replay, "--key", BS_KEY, "--log", rlog, NULL };
	if (bs_spawn(rargv, NULL, rerr, &rpid, &rport, &err) < 0)
		goto out;
	char e_url[64], e_conc[48], e_hour[48], e_conn[48];
	snprintf(e_url, sizeof(e_url), "ANTHROPIC_BASE_URL=http://127.0.0.1:%u", rport);
	snprintf(e_conc, sizeof(e_conc), "MADF_SERVE_CONCURRENT=%ld", nall);
	snprintf(e_hour, sizeof(e_hour), "MADF_SERVE_CONV_PER_HOUR=%ld", nall);
	snprintf(e_conn, sizeof(e_conn), "MADF_SERVE_MAX_CONNECTIONS=%ld", nall + 16);
	const char *senv[] = { "ANTHROPIC_API_KEY=" BS_KEY, e_url, "CLAUDE_MODEL_EXECUTION=claude-bench",
			 e_conc, e_hour, "MADF_SERVE_ROUNDS_PER_DAY=1000000000", e_conn,
			 fsync ? "MADF_NO_FSYNC=0" : "MADF_NO_FSYNC=1", NULL };
	const char *sargv[] = { "/proc/self/exe", "--data-dir", data, "--log-dir", logs, "serve",
			  "--listen", "127.0.0.1:0", NULL };
	if (bs_spawn(sargv, senv, serr, &spid, &sport, &err) < 0)
		goto out;
	long rss0 = rss_kb(spid, "VmRSS");

	char url[96], auth[160];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/api/chat/multi", sport);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	body = xasprintf("{\"agents\":[\"bench-narrator\"],\"rounds\":%ld,\"messages\":"
			 "[{\"role\":\"user\",\"content\":\"narrate the week\"}]}", rounds);
	hdrs = curl_slist_append(hdrs, auth);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	m = curl_multi_init();
	struct bs_loop lp = { .ep = epoll_create1(EPOLL_CLOEXEC), .due_ns = -1 };
	if (lp.ep < 0) {
		err_set(&err, "epoll_create1: %s", strerror(errno));
		goto out;
	}
	curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, nall);
	curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, bs_socket);
	curl_multi_setopt(m, CURLMOPT_SOCKETDATA, &lp);
	curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, bs_timer);
	curl_multi_setopt(m, CURLMOPT_TIMERDATA, &lp);
	struct bs_counts k = { 0 };
	long open_max = 0, rss_at_max = -1;
	long probes_started = 0, probe_open_min = -1;
	struct bs_stream *probe = NULL; /* the one waiting for its first event */
	int64_t t0 = util_mono_ns();
	if (getenv("MADF_SERVE_TRACE")) {
		FILE *tf = fopen(getenv("MADF_SERVE_TRACE"), "a");
		if (tf) {
			fprintf(tf, "#bench t0=%lld\n", (long long)(t0 / 1000));
			fclose(tf);
		}
	}
	for (long i = 0; i < nstreams; i++) {
		bs_add(m, &st[i], &k, false, url, hdrs, body);
		st[i].start_ns = t0; /* the burst's times count from its start */
	}
	int running = 1;
	int64_t sampled = 0, t_end = t0;
	struct epoll_event evs[256];
	curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, &running);
	while (running) {
		int64_t wait = lp.due_ns < 0 ? 100 : (lp.due_ns - util_mono_ns()) / 1000000;
		int n = epoll_wait(lp.ep, evs, 256, wait < 0 ? 0 : wait > 100 ? 100 : (int)wait);
		if (n < 0 && errno != EINTR) {
			err_set(&err, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			uint32_t e = evs[i].events;
			int flags = (e & EPOLLIN ? CURL_CSELECT_IN : 0) |
				    (e & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				    (e & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
			curl_multi_socket_action(m, evs[i].data.fd, flags, &running);
		}
		/* Its timer when due, even when sockets keep the loop busy (a new
		 * request's connection starts there). */
		if (n <= 0 || (lp.due_ns >= 0 && util_mono_ns() >= lp.due_ns)) {
			lp.due_ns = -1;
			curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, &running);
		}
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct bs_stream *s = NULL;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
			curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &s->status);
			s->done = true;
			k.open -= s->first_ns != 0;
			if (!s->probe) {
				k.open_burst -= s->first_ns != 0;
				k.settled_burst += !s->first_ns;
			}
			t_end = util_mono_ns();
		}
		/* The probes, one at a time once the whole burst has its first
		 * event: each starts when the one before has its own (or ended
		 * without). */
		if (probe && (probe->first_ns || probe->done))
			probe = NULL;
		if (!probe && probes_started < nprobes && k.settled_burst == nstreams) {
			probe = &st[nstreams + probes_started++];
			if (probe_open_min < 0 || k.open_burst < probe_open_min)
				probe_open_min = k.open_burst;
			bs_add(m, probe, &k, true, url, hdrs, body);
			running = 1;
		}
		/* The server's memory when the most streams are open (their first
		 * event come, their end not yet), and every 200 ms at that many. */
		int64_t now = util_mono_ns();
		if (k.open > open_max || (k.open == open_max && now - sampled > 200000000LL)) {
			long v = rss_kb(spid, "VmRSS");
			if (k.open > open_max || v > rss_at_max)
				rss_at_max = v;
			open_max = k.open;
			sampled = now;
		}
	}
	close(lp.ep);
	long hwm = rss_kb(spid, "VmHWM");
	bool stop_clean = false;
	double stop_ms = bs_stop(spid, serr, &stop_clean);
	spid = 0;
	long n_ok = 0, ev0 = -1, agent_errors = 0, n_agerr = 0, probes_ok = 0;
	bool same = true;
	double total_ev = 0;
	for (long i = 0; i < nall; i++) {
		bool whole = bs_whole(&st[i], data);
		if (i < nstreams)
			n_ok += whole;
		else
			probes_ok += whole;
		agent_errors += st[i].agent_errors;
		n_agerr += st[i].agent_errors > 0;
		if (!st[i].agent_errors) {
			if (ev0 < 0)
				ev0 = st[i].events;
			same = same && st[i].events == ev0;
		}
		total_ev += (double)st[i].events;
	}
	double med, p95, mx, pmed, pp95, pmx;
	long n_first = bs_ttfe(st, nstreams, &med, &p95, &mx);
	long p_first = bs_ttfe(st + nstreams, probes_started, &pmed, &pp95, &pmx);
	double secs = (double)(t_end - t0) / 1e9;
	double per = open_max > 0 && rss_at_max > rss0 ? (double)(rss_at_max - rss0) / open_max : 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double load_end = load_avg();
	if (json) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "streams", (double)nstreams);
		cJSON_AddNumberToObject(j, "rounds", (double)rounds);
		cJSON_AddNumberToObject(j, "cores", (double)cores);
		cJSON_AddNumberToObject(j, "loadAverage", load);
		cJSON_AddNumberToObject(j, "loadAverageAtEnd", load_end);
		cJSON_AddBoolToObject(j, "fsync", fsync);
		cJSON_AddNumberToObject(j, "completed", (double)n_ok);
		cJSON_AddNumberToObject(j, "eventsPerStream", (double)ev0);
		cJSON_AddBoolToObject(j, "sameEventCount", same);
		cJSON_AddNumberToObject(j, "agentErrors", (double)agent_errors);
		/* the burst: every stream at once */
		cJSON_AddNumberToObject(j, "firstEventCount", (double)n_first);
		cJSON_AddNumberToObject(j, "firstEventMsMedian", med);
		cJSON_AddNumberToObject(j, "firstEventMsP95", p95);
		cJSON_AddNumberToObject(j, "firstEventMsMax", mx);
		/* one at a time with the burst open */
		cJSON_AddNumberToObject(j, "probes", (double)nprobes);
		cJSON_AddNumberToObject(j, "probesStarted", (double)probes_started);
		cJSON_AddNumberToObject(j, "probesAnswered", (double)p_first);
		cJSON_AddNumberToObject(j, "probesFailed", (double)(nprobes - p_first));
		cJSON_AddNumberToObject(j, "probesCompleted", (double)probes_ok);
		cJSON_AddNumberToObject(j, "probeOpenMin", (double)probe_open_min);
		cJSON_AddNumberToObject(j, "probeFirstEventMsMedian", pmed);
		cJSON_AddNumberToObject(j, "probeFirstEventMsP95", pp95);
		cJSON_AddNumberToObject(j, "probeFirstEventMsMax", pmx);
		cJSON_AddNumberToObject(j, "eventsPerSecond", secs > 0 ? total_ev / secs : 0);
		cJSON_AddNumberToObject(j, "seconds", secs);
		cJSON_AddNumberToObject(j, "openAtOnceMax", (double)open_max);
		cJSON_AddNumberToObject(j, "serverRssIdleKb", (double)rss0);
		cJSON_AddNumberToObject(j, "serverRssOpenKb", (double)rss_at_max);
		cJSON_AddNumberToObject(j, "kbPerOpenStream", per);
		cJSON_AddNumberToObject(j, "serverPeakKb", (double)hwm);
		cJSON_AddNumberToObject(j, "stopMs", stop_ms);
		cJSON_AddBoolToObject(j, "stopClean", stop_clean);
		char *s = cJSON_PrintUnformatted(j);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(j);
	} else {
		printf("madf bench serve: %ld streams at once, %ld round%s each, %ld core%s "
		       "(load average %.2f before, %.2f at the end with the bench's own threads)\n",
		       nstreams, rounds, rounds == 1 ? "" : "s", cores, cores == 1 ? "" : "s", load,
		       load_end);
		printf("  sessions' files    %s\n", fsync ? "synced as madf serve does by default" :
		       "not synced (MADF_NO_FSYNC=1; --fsync measures with the syncs)");
		printf("  completed          %ld of %ld (conversation_complete, every recorded event; "
		       "%ld events each%s)\n", n_ok, nstreams, ev0,
		       same ? "" : ", NOT all the same");
		if (agent_errors)
			printf("  model failures     %ld agent_error events in %ld streams (the replay "
			       "server's; those streams are left out of the count above)\n",
			       agent_errors, n_agerr);
		printf("  first event, burst median %.1f ms, p95 %.1f ms, max %.1f ms (all %ld requests "
		       "sent at once, each counted from then: it waits behind the others' "
		       "admissions; %ld of %ld had one)\n", med, p95, mx, nstreams, n_first, nstreams);
		if (nprobes)
			printf("  first event, one   median %.1f ms, p95 %.1f ms, max %.1f ms (%ld more "
			       "streams opened one at a time with at least %ld of the burst's open and "
			       "streaming; %ld of %ld had one, %ld completed)\n", pmed, pp95, pmx,
			       nprobes, probe_open_min < 0 ? 0 : probe_open_min, p_first, nprobes,
			       probes_ok);
		printf("  events per second  %.0f (%.0f events in %.2f s)\n",
		       secs > 0 ? total_ev / secs : 0, total_ev, secs);
		printf("  server memory      %.1f MB idle, %.1f MB with %ld streams open, "
		       "%.1f KB per open stream, peak %.1f MB\n", (double)rss0 / 1024,
		       (double)rss_at_max / 1024, open_max, per, (double)hwm / 1024);
		printf("  server stop        %.0f ms from SIGTERM to its exit once every stream had "
		       "ended (%s)\n", stop_ms, stop_clean ? "stopped whole" :
		       "NOT whole: conversations still finishing, or an exit status not 0");
	}
	rc = n_ok == nstreams && probes_ok == nprobes && same && stop_clean ? EXIT_OK : EXIT_FAIL;
	if (n_ok != nstreams || probes_ok != nprobes || !same)
		fprintf(stderr, "madf: bench serve: %ld of %ld streams and %ld of %ld probes did not "
			"complete (see %s)\n", nstreams - n_ok, nstreams, nprobes - probes_ok, nprobes,
			serr);
	if (!stop_clean)
		fprintf(stderr, "madf: bench serve: the server did not stop whole on SIGTERM (see "
			"%s)\n", serr);
out:
	if (m) {
		for (long i = 0; i < nall; i++)
			if (st[i].h) {
				curl_multi_remove_handle(m, st[i].h);
				curl_easy_cleanup(st[i].h);
			}
		curl_multi_cleanup(m);
	}
	for (long i = 0; i < nall; i++)
		sbuf_release(&st[i].carry);
	curl_slist_free_all(hdrs);
	if (spid > 0) {
		kill(spid, SIGTERM);
		waitpid(spid, NULL, 0);
	}
	if (rpid > 0) {
		kill(rpid, SIGTERM);
		waitpid(rpid, NULL, 0);
	}
	if (err)
		rc = cli_fail(EXIT_FAIL, "bench serve", "%s", err);
	if (rc == EXIT_OK)
		util_rm_tree(dir);
	free(err);
	free(token);
	free(body);
	free(st);
	free(dir);
	free(data);
	free(logs);
	free(rlog);
	free(rerr);
	free(serr);
	free(agents);
	free(tokpath);
	return rc;
}

static const struct cli_opt bench_serve_options[] = {
	{ .name = "--streams", .arg = "N", .help = "conversations at once (default 1000)" },
	{ .name = "--rounds", .arg = "R", .help = "rounds of each (default 3)" },
	{ .name = "--probes", .arg = "P",
	  .help = "streams opened one at a time once the N are open, for the time to the first "
		  "event with N open (default 50; 0: none)" },
	{ .name = "--replay", .arg = "PATH",
	  .help = "the replay model server (default: tests/integration/llm_replay.py)" },
	{ .name = "--fsync",
	  .help = "sync the sessions' files as madf serve does by default (without it the "
		  "bench sets MADF_NO_FSYNC=1)" },
	{ .name = "--json", .help = "print the figures as JSON" },
	{ 0 },
};

const struct cli_cmd cmd_bench_serve_entry = {
	.name = "serve",
	.opts = bench_serve_options,
	.summary = "N conversations at once against a madf serve of its own on the replay "
		   "server, then P more one at a time: time to first event (of the burst, and "
		   "of one more with N open), events per second, memory per open stream",
	.run = bench_serve,
};
