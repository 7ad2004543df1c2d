/* madf bench console: the console headless (the scripted mode's 120x40
 * virtual screen, --attach) on a scratch bus holding 4 inboxes x 1,000
 * messages and 100,000 dead letters, driven in-process key by key through
 * the hooks in tui/console.h. Measures, and prints as figures:
 *   - keypress to end of frame (the key handled as the interactive loop
 *     handles it, then the frame it calls for, output to /dev/null), per
 *     key class and overall;
 *   - the periodic refresh (the 500 ms tick) in the overview and in the
 *     dead-letter view: a key pressed meanwhile waits for it;
 *   - peak RSS (VmHWM) of the process that ran the console;
 *   - CPU used while idle (no keys, no bus changes) over --idle S seconds,
 *     in the dead-letter view and in the overview, as % of one core;
 * beside the same run on an empty bus. Each console runs in a child
 * process of its own, so its RSS and CPU are its own. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "core/util.h"
#include "core/bus_dlx.h"
#include "tui/bench_console.h"
#include "tui/console.h"
#include "core/banned.h"

#define BC_INBOXES 4
#define BC_PER_INBOX 1000
#define BC_DEAD 100000
#define BC_MAX_KEYS 512
#define BC_REFRESHES 3

enum bc_class { BC_VIEW, BC_TYPE, BC_APPLY, BC_SCROLL, BC_PAGE, BC_TAB, BC_NCLASS };

static const char *const bc_class_name[BC_NCLASS] = {
	"view", "typing", "apply", "scroll", "page", "tab",
};
static const char *const bc_class_help[BC_NCLASS] = {
	"1-6 switch view", "typing on : or / line", "Enter/Esc: :dlq, filter on/off",
	"j/k", "PgDn", "Tab next view",
};

struct bc_key {
	int key;
	enum bc_class cls;
};

/* What a child reports through the pipe. */
struct bc_result {
	double open_ms;
	double list_ms;      /* :dlq Enter until the listing's rows are shown */
	int nk;
	double ms[BC_MAX_KEYS];
	unsigned char cls[BC_MAX_KEYS];
	double refresh_dead_ms, refresh_overview_ms; /* medians */
	unsigned long frames;
	double hwm_mb;
	double idle_dead_pct, idle_overview_pct;
	size_t dead_rows;    /* rows of the dead-letter view after :dlq */
	size_t dead_counted; /* dead letters the console's meters show */
};

struct bc_stats {
	long n;
	double median, p95, max;
};

/* ---- the key sequence ---- */

static size_t bc_sequence(struct bc_key *v, size_t cap)
{
	size_t n = 0;
#define ADD(k, c) do { if (n < cap) v[n++] = (struct bc_key){ (k), (c) }; } while (0)
	for (int round = 0; round < 2; round++)
		for (char k = '1'; k <= '6'; k++)
			ADD(k, BC_VIEW);
	for (const char *p = ":dlq"; *p; p++)
		ADD(*p, BC_TYPE);
	ADD('\n', BC_APPLY);
	for (int i = 0; i < 60; i++)
		ADD('j', BC_SCROLL);
	for (int i = 0; i < 30; i++)
		ADD('k', BC_SCROLL);
	for (int i = 0; i < 20; i++)
		ADD(KEY_NPAGE, BC_PAGE);
	for (const char *p = "/research_agent_2"; *p; p++)
		ADD(*p, BC_TYPE);
	ADD('\n', BC_APPLY);
	for (int i = 0; i < 20; i++)
		ADD('j', BC_SCROLL);
	for (int i = 0; i < 5; i++)
		ADD(KEY_NPAGE, BC_PAGE);
	ADD(27, BC_APPLY); /* Esc clears the filter */
	for (int i = 0; i < 6; i++)
		ADD('\t', BC_TAB); /* around the six views, back to the dead letters */
#undef ADD
	return n;
}

/* ---- figures ---- */

static int bc_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double bc_pct(const double *v, long n, double p)
{
	if (n <= 0)
		return 0;
	long i = (long)ceil(p * (double)n) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

/* cls < 0: every key. */
static struct bc_stats bc_stats_of(const struct bc_result *r, int cls)
{
	double v[BC_MAX_KEYS];
	long n = 0;
	for (int i = 0; i < r->nk; i++)
		if (cls < 0 || r->cls[i] == cls)
			v[n++] = r->ms[i];
	qsort(v, (size_t)n, sizeof(*v), bc_cmp);
	return (struct bc_stats){ n, bc_pct(v, n, 0.5), bc_pct(v, n, 0.95), n ? v[n - 1] : 0 };
}

static double bc_median3(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bc_cmp);
	return v[n / 2];
}

static double bc_hwm_mb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	if (kb < 0) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		kb = ru.ru_maxrss;
	}
	return (double)kb / 1024.0;
}

/* ---- the data ---- */

static int bc_write(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t w = write(fd, s, len);
	close(fd);
	return w == (ssize_t)len ? 0 : -1;
}

/* A stored name, P.T.ID.A.json (the grammar of core/bus_fs.h and
 * man/madf-messages.5: priority digit, enqueue time in ns on 19 digits,
 * message id, attempts). */
static void bc_name(char *buf, size_t size, int prio, int64_t t_ns, const char *id, int attempts)
{
	snprintf(buf, size, "%d.%019lld.%s.%d.json", prio, (long long)t_ns, id, attempts);
}

/* One valid message file per inbox (a heartbeat to it), hard-linked under
 * valid names P.T.ID.A.json into the inbox and the dead letters; every
 * dead letter with its own .reason.json sidecar. */
static int bc_populate(const char *top, const char *data, long per_inbox, long ndead, char **why)
{
	struct bus_config cfg;
	struct bus *b = NULL;
	char *err = NULL;
	bus_config_init(&cfg, data);
	cfg.durable = false;
	int rc = bus_open(&cfg, &b, &err);
	bus_free(&b);
	bus_config_release(&cfg);
	if (rc < 0) {
		*why = err;
		return -1;
	}
	char *tpl[BC_INBOXES];
	for (int k = 0; k < BC_INBOXES; k++) {
		cJSON *content = cJSON_CreateObject();
		cJSON_AddStringToObject(content, "status", "idle");
		cJSON_AddNumberToObject(content, "uptime_seconds", 3);
		cJSON_AddNumberToObject(content, "active_tasks", 0);
		struct msg *m = msg_new("operator", bus_default_agents[k], MSG_HEARTBEAT, content);
		char *json = m ? msg_to_json(m, true) : NULL;
		tpl[k] = xasprintf("%s/template-%d.json", top, k);
		if (!json || bc_write(tpl[k], json, strlen(json)) < 0)
			rc = -1;
		free(json);
		msg_free(&m);
	}
	static const struct {
		const char *reason, *error;
		int attempts;
	} why_dead[] = {
		{ "max_attempts", "handler failed: source timed out after 30s", 3 },
		{ "invalid", "content.status: must be one of idle, busy, waiting, stopping", 0 },
		{ "expired", "expires_at 2026-01-01T00:00:00Z has passed", 0 },
		{ "killed", "killed by the operator", 0 },
	};
	int64_t now = util_now_ns();
	char id[MSG_ID_MAX + 1], name[512], path[1024], ts[64];
	for (int k = 0; k < BC_INBOXES && rc == 0; k++) {
		for (long i = 0; i < per_inbox && rc == 0; i++) {
			msg_new_id("operator", id);
			bc_name(name, sizeof(name), i % 10 ? 2 : 1,
				now - (per_inbox - i) * 1000000000LL, id, 0);
			snprintf(path, sizeof(path), "%s/messages/inbox/%s/%s", data,
				 bus_default_agents[k], name);
			if (link(tpl[k], path) < 0)
				rc = -1;
		}
	}
	/* the index lines the bus appends when it dead-letters, in one write */
	struct dlx_rec *recs = xcalloc(ndead > 0 ? (size_t)ndead : 1, sizeof(*recs));
	char **names = xcalloc(ndead > 0 ? (size_t)ndead * 2 : 1, sizeof(*names));
	for (long i = 0; i < ndead && rc == 0; i++) {
		int k = (int)(i % BC_INBOXES);
		long r = i % 20;
		int w = r < 14 ? 0 : r < 17 ? 1 : r < 19 ? 2 : 3;
		int64_t t_ns = now - (ndead - i) * 1000000000LL;
		msg_new_id("operator", id);
		bc_name(name, sizeof(name), 2, t_ns, id, why_dead[w].attempts);
		snprintf(path, sizeof(path), "%s/messages/dead-letter/%s", data, name);
		if (link(tpl[k], path) < 0) {
			rc = -1;
			break;
		}
		util_iso8601(t_ns, ts, sizeof(ts));
		size_t base = strlen(name) - 5;
		char *side = xasprintf("{\n  \"reason\": \"%s\",\n  \"error\": \"%s\",\n"
				       "  \"attempts\": %d,\n  \"first_failure\": \"%s\",\n"
				       "  \"last_failure\": \"%s\",\n  \"original_inbox\": \"%s\",\n"
				       "  \"dead_lettered_at\": \"%s\",\n  \"message_id\": \"%s\",\n"
				       "  \"from\": \"operator\",\n  \"to\": \"%s\",\n"
				       "  \"type\": \"heartbeat\",\n"
				       "  \"file\": \"%s\"\n}\n", why_dead[w].reason, why_dead[w].error,
				       why_dead[w].attempts, ts, ts, bus_default_agents[k], ts, id,
				       bus_default_agents[k], name);
		snprintf(path, sizeof(path), "%s/messages/dead-letter/%.*s.reason.json", data,
			 (int)base, name);
		if (bc_write(path, side, strlen(side)) < 0)
			rc = -1;
		free(side);
		struct stat st;
		snprintf(path, sizeof(path), "%s/messages/dead-letter/%s", data, name);
		if (rc == 0 && lstat(path, &st) == 0) {
			names[2 * i] = xstrdup(name);
			names[2 * i + 1] = xstrdup(id);
			recs[i] = (struct dlx_rec){
				.ino = st.st_ino, .size = (size_t)st.st_size,
				.attempts = why_dead[w].attempts, .name = names[2 * i],
				.message_id = names[2 * i + 1], .reason = why_dead[w].reason,
				.original_inbox = bus_default_agents[k], .from = "operator",
				.to = bus_default_agents[k], .type = "heartbeat",
				.error = why_dead[w].error,
			};
		}
	}
	if (rc == 0 && ndead > 0) {
		snprintf(path, sizeof(path), "%s/messages/dead-letter", data);
		dlx_append(path, recs, (size_t)ndead);
	}
	for (long i = 0; i < 2 * ndead; i++)
		free(names[i]);
	free(names);
	free(recs);
	if (rc < 0 && !*why)
		*why = xasprintf("cannot write the scratch bus in %s: %s", data, strerror(errno));
	for (int k = 0; k < BC_INBOXES; k++) {
		unlink(tpl[k]);
		free(tpl[k]);
	}
	return rc;
}

/* ---- one console, in a child ---- */

static double bc_ms_since(int64_t t0)
{
	return (double)(util_mono_ns() - t0) / 1e6;
}

static double bc_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The loop with no keys for secs seconds; CPU as % of one core. */
static double bc_idle(struct console *c, double secs)
{
	double cpu0 = bc_cpu_s();
	int64_t t0 = util_mono_ns(), end = t0 + (int64_t)(secs * 1e9), now;
	while ((now = util_mono_ns()) < end)
		console_bench_turn(c, (int)((end - now) / 1000000) + 1);
	double wall = (double)(util_mono_ns() - t0) / 1e9;
	return (bc_cpu_s() - cpu0) / wall * 100.0;
}

/* The periodic refresh, as the timer calls it: median of a few. */
static double bc_refresh(struct console *c)
{
	double v[BC_REFRESHES];
	for (int i = 0; i < BC_REFRESHES; i++) {
		c->next_tick_ns = 0;
		int64_t t0 = util_mono_ns();
		console_bench_turn(c, 0);
		v[i] = bc_ms_since(t0);
	}
	return bc_median3(v, BC_REFRESHES);
}

static _Noreturn void bc_child(const char *data, double idle_s, int out_fd)
{
	struct bc_result *r = xcalloc(1, sizeof(*r));
	struct cli cli = { 0 };
	cli.data_dir = xstrdup(data);
	cli.log_dir = xasprintf("%s/logs", data);
	bus_config_init(&cli.bcfg, data);
	int64_t t0 = util_mono_ns();
	struct console *c = console_bench_open(&cli);
	if (!c)
		_exit(1);
	r->open_ms = bc_ms_since(t0);
	struct bc_key seq[BC_MAX_KEYS];
	size_t n = bc_sequence(seq, ARRAY_SIZE(seq));
	for (size_t i = 0; i < n; i++) {
		t0 = util_mono_ns();
		console_bench_key(c, seq[i].key);
		r->ms[r->nk] = bc_ms_since(t0);
		r->cls[r->nk++] = (unsigned char)seq[i].cls;
		if (seq[i].key == '\n' && view_queues_shows_dead(c) && !r->dead_rows) {
			/* the keypress is answered at once; the listing goes on in
			 * the background until its rows are swapped in */
			struct view *q = console_view(c);
			while (q->ops->fd(q) >= 0)
				console_bench_turn(c, 50);
			r->list_ms = bc_ms_since(t0);
			r->dead_rows = q->rows.n;
		}
	}
	/* the sequence ends in the dead-letter view */
	r->refresh_dead_ms = bc_refresh(c);
	r->idle_dead_pct = bc_idle(c, idle_s);
	console_bench_key(c, '1');
	r->refresh_overview_ms = bc_refresh(c);
	r->idle_overview_pct = bc_idle(c, idle_s);
	r->frames = c->frames;
	r->dead_counted = c->stats.dead_letter;
	console_bench_close(c);
	r->hwm_mb = bc_hwm_mb();
	const char *p = (const char *)r;
	size_t left = sizeof(*r);
	while (left) {
		ssize_t w = write(out_fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(1);
		p += w;
		left -= (size_t)w;
	}
	_exit(0);
}

static int bc_run(const char *data, double idle_s, struct bc_result *out)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		bc_child(data, idle_s, fd[1]);
	}
	close(fd[1]);
	char *p = (char *)out;
	size_t got = 0;
	while (got < sizeof(*out)) {
		ssize_t k = read(fd[0], p + got, sizeof(*out) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return got == sizeof(*out) && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ---- output ---- */

static void bc_json_stats(const char *name, struct bc_stats s, bool comma)
{
	printf("\"%s\": {\"n\": %ld, \"median_ms\": %.3f, \"p95_ms\": %.3f, \"max_ms\": %.3f}%s",
	       name, s.n, s.median, s.p95, s.max, comma ? ", " : "");
}

static void bc_json_result(const struct bc_result *r)
{
	printf("\"keys\": {");
	for (int k = 0; k < BC_NCLASS; k++)
		bc_json_stats(bc_class_name[k], bc_stats_of(r, k), true);
	bc_json_stats("all", bc_stats_of(r, -1), false);
	printf("}, \"frames\": %lu, \"open_ms\": %.3f, \"dead_letter_listing_ms\": %.3f, "
	       "\"refresh_ms\": {\"overview\": %.3f, \"dead_letters\": %.3f}, "
	       "\"peak_rss_mb\": %.1f, "
	       "\"idle_cpu_pct\": {\"overview\": %.2f, \"dead_letters\": %.2f}, "
	       "\"dead_letter_rows\": %zu, \"dead_letters_counted\": %zu",
	       r->frames, r->open_ms, r->list_ms, r->refresh_overview_ms, r->refresh_dead_ms, r->hwm_mb,
	       r->idle_overview_pct, r->idle_dead_pct, r->dead_rows, r->dead_counted);
}

static long bc_within(const struct bc_result *r, double ms)
{
	long w = 0;
	for (int i = 0; i < r->nk; i++)
		w += r->ms[i] <= ms;
	return w;
}

static double bc_ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void bc_print(const struct bc_result *r, const struct bc_result *e, long per_inbox,
		     long ndead, double setup_s, double idle_s, bool json)
{
	struct bc_stats all = bc_stats_of(r, -1), eall = bc_stats_of(e, -1);
	if (json) {
		printf("{\"inboxes\": %d, \"messages_per_inbox\": %ld, \"dead_letters\": %ld, "
		       "\"setup_s\": %.3f, \"idle_seconds\": %.1f, \"screen\": \"120x40\", ",
		       BC_INBOXES, per_inbox, ndead, setup_s, idle_s);
		bc_json_result(r);
		printf(", \"baseline_empty\": {");
		bc_json_result(e);
		printf("}, \"ratio_to_empty\": {\"median\": %.2f, \"p95\": %.2f, \"max\": %.2f}, "
		       "\"aims\": {\"keypress_ms\": 16, \"peak_rss_mb\": 64, \"idle_cpu_pct\": 1}}\n",
		       bc_ratio(all.median, eall.median), bc_ratio(all.p95, eall.p95),
		       bc_ratio(all.max, eall.max));
		return;
	}
	printf("bench console: headless (--attach, 120x40 virtual screen), %d inboxes x %ld "
	       "messages, %ld dead letters\n", BC_INBOXES, per_inbox, ndead);
	printf("  scratch bus written in %.2f s; the console saw %zu dead letters (%zu rows in :dlq)\n",
	       setup_s, r->dead_counted, r->dead_rows);
	printf("  keypress to end of frame, ms    n   median      p95      max  | empty bus: "
	       "median      p95      max\n");
	for (int k = 0; k <= BC_NCLASS; k++) {
		struct bc_stats s = bc_stats_of(r, k < BC_NCLASS ? k : -1);
		struct bc_stats es = bc_stats_of(e, k < BC_NCLASS ? k : -1);
		printf("  %-30s %3ld %8.2f %8.2f %8.2f  |            %8.2f %8.2f %8.2f\n",
		       k < BC_NCLASS ? bc_class_help[k] : "all keys", s.n, s.median, s.p95, s.max,
		       es.median, es.p95, es.max);
	}
	printf("  loaded / empty                     %8.1f %8.1f %8.1f\n",
	       bc_ratio(all.median, eall.median), bc_ratio(all.p95, eall.p95),
	       bc_ratio(all.max, eall.max));
	printf("  keys within 16 ms (aim: all)   %ld of %ld (empty bus: %ld of %ld)\n",
	       bc_within(r, 16.0), all.n, bc_within(e, 16.0), eall.n);
	printf("  frames drawn                   %lu (empty bus: %lu)\n", r->frames, e->frames);
	printf("  first frame (open)             %.2f ms (empty bus: %.2f ms)\n", r->open_ms,
	       e->open_ms);
	printf("  :dlq listing shown (background) %.2f ms after Enter (empty bus: %.2f ms)\n",
	       r->list_ms, e->list_ms);
	printf("  periodic refresh (500 ms tick) overview %.2f ms, dead letters %.2f ms "
	       "(empty bus: %.2f, %.2f)\n", r->refresh_overview_ms, r->refresh_dead_ms,
	       e->refresh_overview_ms, e->refresh_dead_ms);
	printf("  peak RSS                       %.1f MB (empty bus: %.1f MB; aim under 64 MB)\n",
	       r->hwm_mb, e->hwm_mb);
	printf("  idle CPU over %.0f s, %% of a core overview %.2f %%, dead letters %.2f %% "
	       "(empty bus: %.2f, %.2f; aim under 1 %%)\n", idle_s, r->idle_overview_pct,
	       r->idle_dead_pct, e->idle_overview_pct, e->idle_dead_pct);
}

static int bench_console(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "bench", &cmd_bench_console_entry, 0 };
	double idle_s = 5;
	long ndead = BC_DEAD;
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "bench", "unexpected argument %s", val);
		if (!strcmp(name, "--json"))
			json = true;
		else if (!strcmp(name, "--idle") ?
			 cli_double("bench", name, val, 0.01, 600, &idle_s) < 0 :
			 cli_long("bench", name, val, 0, 10000000, &ndead) < 0)
			return EXIT_USAGE;
	}
	if (r < 0)
		return EXIT_USAGE;
	char *err = NULL;
	if (util_mkdirs(cli->data_dir, &err) < 0) {
		cli_fail(EXIT_FAIL, "bench", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	char *dir = xasprintf("%s/bench-console-XXXXXX", cli->data_dir);
	if (!mkdtemp(dir)) {
		cli_fail(EXIT_FAIL, "bench", "cannot create %s: %s", dir, strerror(errno));
		free(dir);
		return EXIT_FAIL;
	}
	char *loaded = xasprintf("%s/loaded", dir), *empty = xasprintf("%s/empty", dir);
	int rc = EXIT_OK;
	struct bc_result *res = xcalloc(2, sizeof(*res));
	int64_t t0 = util_mono_ns();
	/* Written by a child of its own: the memory it takes is not inherited
	 * by the consoles measured next (their peak RSS is their own). */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char *why = NULL;
		if (bc_populate(dir, loaded, BC_PER_INBOX, ndead, &why) < 0) {
			fprintf(stderr, "madf: bench: %s\n", why ? why : "cannot write the scratch bus");
			_exit(1);
		}
		_exit(0);
	}
	int wst = 0;
	if (pid < 0 || waitpid(pid, &wst, 0) != pid || !WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
		rc = cli_fail(EXIT_FAIL, "bench", "cannot write the scratch bus in %s", loaded);
	double setup_s = (double)(util_mono_ns() - t0) / 1e9;
	if (rc == EXIT_OK && util_mkdirs(empty, NULL) < 0)
		rc = cli_fail(EXIT_FAIL, "bench", "cannot create %s", empty);
	if (rc == EXIT_OK && bc_run(empty, idle_s, &res[1]) < 0)
		rc = cli_fail(EXIT_FAIL, "bench", "the console on the empty bus failed");
	if (rc == EXIT_OK && bc_run(loaded, idle_s, &res[0]) < 0)
		rc = cli_fail(EXIT_FAIL, "bench", "the console on the loaded bus failed");
	util_rm_tree(dir);
	if (rc == EXIT_OK)
		bc_print(&res[0], &res[1], BC_PER_INBOX, ndead, setup_s, idle_s, json);
	free(res);
	free(loaded);
	free(empty);
	free(dir);
	return rc;
}

static const struct cli_opt bench_console_options[] = {
	{ .name = "--idle", .arg = "S",
	  .help = "seconds of idle CPU measured (default 5)" },
	{ .name = "--scale", .arg = "N",
	  .help = "dead letters on the loaded bus (default 100000)" },
	{ .name = "--json", .help = "print the figures as JSON" },
	{ 0 },
};

const struct cli_cmd cmd_bench_console_entry = {
	.name = "console",
	.opts = bench_console_options,
	.summary = "the console headless on a loaded scratch bus and an empty one: keypress to "
		   "frame, the :dlq listing, refresh, peak RSS, idle CPU",
	.run = bench_console,
};
