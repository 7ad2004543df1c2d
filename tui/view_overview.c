/* View 1, overview: bus meters and the agents table. */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

#define HEARTBEAT_S 5
#define STALLED_S (3 * HEARTBEAT_S) /* three beats missed (README, madf(1)) */
#define OFFLINE_S 60                /* a minute without a beat */
#define DATA_ALERT_BYTES (1024ULL * 1024 * 1024)

/* The data directory's size walks the whole tree (a stat per file:
 * 200,000 files take 0.2-0.5 s), so it runs on a thread of its own and
 * the UI thread only picks up its total: a keypress never waits for it,
 * nor does the first frame. It runs at most every 5 s and at most 1/200
 * of the time, so that the walk stays under 0.5 % of a core. */
struct du {
	pthread_t th;
	bool running;         /* started and not yet joined */
	atomic_bool done;     /* the walk has finished */
	atomic_bool stop;     /* the console is closing: give up */
	char *dir;
	uint64_t bytes;       /* the walk's total, read after the join */
	int64_t took_ns;
	int64_t every_ns;
};

/* Errors per minute: the lines of logs/agents/<agent>/errors/<today>.jsonl
 * whose ts is in the last ERR_WINDOW_S, read incrementally (each file from
 * where the last read stopped; a new day or a shorter file starts over). */
#define ERR_WINDOW_S 300
#define ERR_READ_MAX (1u << 20)

struct err_file {
	char agent[MSG_AGENT_MAX + 1];
	char date[16];
	off_t off;
};

struct errlog {
	struct err_file *f;
	size_t nf;
	int64_t *ts;   /* error times seen in the window */
	size_t nts, cap;
};

/* The overview's state (view->data). */
struct overview {
	struct du du;
	uint64_t data_bytes;     /* the data directory's size, at data_bytes_ns */
	int64_t data_bytes_ns;
	struct errlog errlog;
	double err_rate;         /* error-log lines per minute, last 5 minutes */
	/* tool calls per agent: by_agent of every tool in data/tools/usage.json,
	 * read again when the file changes */
	char usage_sig[64];
	cJSON *usage_calls;      /* {"agent": calls} */
	char table_header[512];
	uint64_t meters_sig;     /* what the meters showed last */
	char health[256];        /* the run-health line, read at most once a second */
	bool stuck;
	int64_t health_ns;
};

/* The walk of the thread running it (nftw passes no context). */
static _Thread_local struct du *du_walking;

static int du_add(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)f;
	if (flag == FTW_F)
		du_walking->bytes += (uint64_t)st->st_size;
	return atomic_load(&du_walking->stop) ? 1 : 0;
}

static void *du_worker(void *arg)
{
	struct du *du = arg;
	int64_t t0 = util_mono_ns();
	du->bytes = 0;
	du_walking = du;
	nftw(du->dir, du_add, 16, FTW_PHYS);
	du_walking = NULL;
	du->took_ns = util_mono_ns() - t0;
	atomic_store(&du->done, true);
	return NULL;
}

static void du_collect(struct overview *o, int64_t now)
{
	o->data_bytes = o->du.bytes;
	o->data_bytes_ns = now;
	o->du.every_ns = o->du.took_ns * 200;
	if (o->du.every_ns < 5000000000LL)
		o->du.every_ns = 5000000000LL;
}

/* Picks up a finished walk; starts the next one when it is due. */
static void du_poll(struct console *c, struct overview *o, int64_t now)
{
	struct du *du = &o->du;
	if (du->running) {
		if (!atomic_load(&du->done))
			return;
		pthread_join(du->th, NULL);
		du->running = false;
		du_collect(o, now);
		return;
	}
	if (o->data_bytes_ns && now - o->data_bytes_ns <= du->every_ns)
		return;
	free(du->dir);
	du->dir = xstrdup(c->cli->data_dir);
	atomic_store(&du->done, false);
	atomic_store(&du->stop, false);
	if (pthread_create(&du->th, NULL, du_worker, du) == 0) {
		du->running = true;
	} else {
		/* no thread: measure here */
		du_worker(du);
		du_collect(o, now);
	}
}


static void errlog_add(struct errlog *errlog, const char *line, size_t len, int64_t from)
{
	cJSON *j = cJSON_ParseWithLength(line, len);
	const cJSON *ts = cJSON_GetObjectItem(j, "ts");
	int64_t t = 0;
	if (cJSON_IsString(ts) && msg_parse_time(ts->valuestring, &t) == 0 && t >= from) {
		if (errlog->nts == errlog->cap) {
			errlog->cap = errlog->cap ? errlog->cap * 2 : 64;
			errlog->ts = xrealloc(errlog->ts, errlog->cap * sizeof(*errlog->ts));
		}
		errlog->ts[errlog->nts++] = t;
	}
	cJSON_Delete(j);
}

static void errlog_read(struct errlog *errlog, struct err_file *f, const char *path, int64_t from)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (st.st_size < f->off)
		f->off = 0;
	char *buf = xmalloc(ERR_READ_MAX);
	while (st.st_size > f->off) {
		ssize_t k = pread(fd, buf, ERR_READ_MAX, f->off);
		if (k <= 0)
			break;
		size_t used = 0;
		for (size_t i = 0; i < (size_t)k; i++)
			if (buf[i] == '\n') {
				errlog_add(errlog, buf + used, i - used, from);
				used = i + 1;
			}
		if (!used) {
			if ((size_t)k == ERR_READ_MAX)
				used = (size_t)k; /* a line over 1 MB: skipped */
			else
				break;    /* a line still being written */
		}
		f->off += (off_t)used;
	}
	free(buf);
	close(fd);
}

static void overview_errors(struct console *c, struct overview *o)
{
	struct errlog *errlog = &o->errlog;
	int64_t now = util_now_ns(), from = now - (int64_t)ERR_WINDOW_S * 1000000000LL;
	char today[16];
	util_date(now, today, sizeof(today));
	char *root = xasprintf("%s/agents", c->cli->log_dir);
	DIR *d = opendir(root);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !util_valid_agent_name(e->d_name))
			continue;
		struct err_file *f = NULL;
		for (size_t i = 0; i < errlog->nf && !f; i++)
			if (!strcmp(errlog->f[i].agent, e->d_name))
				f = &errlog->f[i];
		if (!f) {
			errlog->f = xrealloc(errlog->f, (errlog->nf + 1) * sizeof(*errlog->f));
			f = &errlog->f[errlog->nf++];
			memset(f, 0, sizeof(*f));
			util_strlcpy(f->agent, e->d_name, sizeof(f->agent));
		}
		if (strcmp(f->date, today)) {
			util_strlcpy(f->date, today, sizeof(f->date));
			f->off = 0;
		}
		char *path = xasprintf("%s/%s/errors/%s.jsonl", root, e->d_name, today);
		errlog_read(errlog, f, path, from);
		free(path);
	}
	if (d)
		closedir(d);
	free(root);
	size_t k = 0;
	for (size_t i = 0; i < errlog->nts; i++)
		if (errlog->ts[i] >= from)
			errlog->ts[k++] = errlog->ts[i];
	errlog->nts = k;
	o->err_rate = (double)k / (ERR_WINDOW_S / 60.0);
}


static void overview_usage(struct console *c, struct overview *o)
{
	char *path = xasprintf("%s/tools/usage.json", c->cli->data_dir);
	struct stat st;
	char sig[64] = "";
	if (stat(path, &st) == 0)
		snprintf(sig, sizeof(sig), "%lld:%lld.%ld", (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	if (strcmp(sig, o->usage_sig)) {
		util_strlcpy(o->usage_sig, sig, sizeof(o->usage_sig));
		cJSON_Delete(o->usage_calls);
		o->usage_calls = NULL;
		cJSON *j = sig[0] ? console_load_json(path) : NULL;
		const cJSON *tool;
		if (j)
			o->usage_calls = cJSON_CreateObject();
		cJSON_ArrayForEach(tool, cJSON_GetObjectItem(j, "tools")) {
			const cJSON *a;
			cJSON_ArrayForEach(a, cJSON_GetObjectItem(tool, "by_agent")) {
				if (!cJSON_IsNumber(a) || !a->string)
					continue;
				cJSON *have = cJSON_GetObjectItemCaseSensitive(o->usage_calls, a->string);
				if (have)
					cJSON_SetNumberValue(have, have->valuedouble + a->valuedouble);
				else
					cJSON_AddNumberToObject(o->usage_calls, a->string, a->valuedouble);
			}
		}
		cJSON_Delete(j);
	}
	free(path);
}

/* The heartbeat's process is gone for sure: its pid does not exist and its
 * host is this host (a heartbeat from elsewhere, or without a host, proves
 * nothing here). */
static bool process_gone(const cJSON *h)
{
	const cJSON *pid = cJSON_GetObjectItem(h, "pid"), *host = cJSON_GetObjectItem(h, "host");
	char me[256] = "";
	if (!cJSON_IsNumber(pid) || pid->valuedouble < 1 || pid->valuedouble > 4194304 ||
	    !cJSON_IsString(host) || gethostname(me, sizeof(me) - 1) < 0 || strcmp(me, host->valuestring))
		return false;
	return kill((pid_t)pid->valuedouble, 0) < 0 && errno == ESRCH;
}

struct agent_cells {
	char agent[MSG_AGENT_MAX + 1];
	char state[16], task[160], hb[16], oldest[16], tools[16];
	char inbox[24], proc[24], retry[24], done[24], errors[24];
};

/* busy / idle / waiting / stalled / offline from the agent's state file:
 * offline without a state file, when the agent said it was stopping, when
 * its process is gone, or when the heartbeat is older than OFFLINE_S;
 * stalled when older than STALLED_S. */
static void agent_state(struct console *c, struct agent_cells *a)
{
	char *path = xasprintf("%s/state/%s-state.json", c->cli->data_dir, a->agent);
	cJSON *j = console_load_json(path);
	free(path);
	snprintf(a->state, sizeof(a->state), "offline");
	snprintf(a->task, sizeof(a->task), "-");
	snprintf(a->hb, sizeof(a->hb), "-");
	long done = 0, errors = 0;
	const cJSON *h = cJSON_GetObjectItem(j, "heartbeat");
	const cJSON *st = cJSON_GetObjectItem(j, "status");
	const cJSON *at = cJSON_GetObjectItem(h, "at");
	const cJSON *hs = cJSON_GetObjectItem(h, "status");
	const cJSON *act = cJSON_GetObjectItem(h, "active_tasks");
	const cJSON *cur = cJSON_GetObjectItem(h, "current_task");
	const cJSON *cd = cJSON_GetObjectItem(st, "completed_tasks_today");
	const cJSON *ec = cJSON_GetObjectItem(st, "error_count_today");
	done = cJSON_IsNumber(cd) ? (long)cd->valuedouble : 0;
	errors = cJSON_IsNumber(ec) ? (long)ec->valuedouble : 0;
	snprintf(a->done, sizeof(a->done), "%ld", done);
	snprintf(a->errors, sizeof(a->errors), "%ld", errors);
	int64_t at_ns = 0;
	if (cJSON_IsString(at) && msg_parse_time(at->valuestring, &at_ns) == 0) {
		int64_t age = util_now_ns() - at_ns;
		console_age(age, a->hb, sizeof(a->hb));
		if (cJSON_IsString(hs) && !strcmp(hs->valuestring, "stopping"))
			snprintf(a->state, sizeof(a->state), "offline");
		else if (age > (int64_t)OFFLINE_S * 1000000000LL || process_gone(h))
			snprintf(a->state, sizeof(a->state), "offline");
		else if (age > (int64_t)STALLED_S * 1000000000LL)
			snprintf(a->state, sizeof(a->state), "stalled");
		else if (cJSON_IsString(hs) && !strcmp(hs->valuestring, "waiting"))
			snprintf(a->state, sizeof(a->state), "waiting");
		else
			snprintf(a->state, sizeof(a->state), "%s",
				 cJSON_IsNumber(act) && act->valuedouble > 0 ? "busy" : "idle");
	}
	if (cJSON_IsString(cur) && *cur->valuestring)
		snprintf(a->task, sizeof(a->task), "%s", cur->valuestring);
	/* The product_manager: the tasks waiting for a researcher's capacity. */
	const cJSON *q = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "dispatch"), "queued");
	if (cJSON_IsNumber(q) && q->valuedouble > 0)
		snprintf(a->task, sizeof(a->task), "%.0f task%s queued for capacity", q->valuedouble,
			 q->valuedouble == 1 ? "" : "s");
	cJSON_Delete(j);
}

static void agent_cells_fill(struct console *c, const struct overview *o, struct agent_cells *a,
			     const char *agent, const struct bus_agent_stats *s)
{
	memset(a, 0, sizeof(*a));
	util_strlcpy(a->agent, agent, sizeof(a->agent));
	agent_state(c, a);
	snprintf(a->oldest, sizeof(a->oldest), "-");
	if (s && s->oldest_ns)
		console_age(util_now_ns() - s->oldest_ns, a->oldest, sizeof(a->oldest));
	snprintf(a->tools, sizeof(a->tools), "-");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(o->usage_calls, agent);
	if (cJSON_IsNumber(calls))
		snprintf(a->tools, sizeof(a->tools), "%.0f", calls->valuedouble);
	snprintf(a->inbox, sizeof(a->inbox), "%zu", s ? s->depth : 0);
	snprintf(a->proc, sizeof(a->proc), "%zu", s ? s->processing : 0);
	snprintf(a->retry, sizeof(a->retry), "%zu", s ? s->retry : 0);
}

/* The agents table's columns, their widths chosen from the screen width
 * (every column shows from 80 columns on; long names and tasks are cut
 * with a '~'). The header is built with the rows. */
enum { COL_AGENT, COL_STATE, COL_INBOX, COL_OLDEST, COL_PROC, COL_RETRY, COL_DONE, COL_ERRORS,
       COL_TOOLS, COL_BEAT, COL_TASK, COL_COUNT };
static const char *const col_names[COL_COUNT] = { "AGENT", "STATE", "INBOX", "OLDEST", "PROC",
						  "RETRY", "DONE", "ERRORS", "TOOLS", "BEAT",
						  "CURRENT TASK" };
#define TASK_MIN_COLS 12
#define AGENT_MIN_COLS 8

static const char *cell_of(const struct agent_cells *a, int k)
{
	switch (k) {
	case COL_AGENT: return a->agent;
	case COL_STATE: return a->state;
	case COL_INBOX: return a->inbox;
	case COL_OLDEST: return a->oldest;
	case COL_PROC: return a->proc;
	case COL_RETRY: return a->retry;
	case COL_DONE: return a->done;
	case COL_ERRORS: return a->errors;
	case COL_TOOLS: return a->tools;
	case COL_BEAT: return a->hb;
	default: return a->task;
	}
}

/* s in exactly w columns: padded (left or right aligned), or cut with a
 * '~' (mid keeps the end too, so "research_agent_1" and "_2" differ). */
static void cell_put(struct sbuf *b, const char *s, size_t w, bool right, bool mid)
{
	size_t n = strlen(s);
	if (n > w) {
		if (mid && w >= 6) {
			size_t tail = (w - 1) / 2;
			sbuf_add(b, s, w - 1 - tail);
			sbuf_addch(b, '~');
			sbuf_add(b, s + n - tail, tail);
		} else {
			sbuf_add(b, s, w - 1);
			sbuf_addch(b, '~');
		}
		return;
	}
	if (right)
		for (size_t i = n; i < w; i++)
			sbuf_addch(b, ' ');
	sbuf_addstr(b, s);
	if (!right)
		for (size_t i = n; i < w; i++)
			sbuf_addch(b, ' ');
}

static void overview_table(struct view *v, const struct agent_cells *a,
			   size_t n)
{
	size_t w[COL_COUNT];
	for (int k = 0; k < COL_COUNT; k++) {
		w[k] = strlen(col_names[k]);
		for (size_t i = 0; i < n; i++)
			if (strlen(cell_of(&a[i], k)) > w[k])
				w[k] = strlen(cell_of(&a[i], k));
	}
	/* the text starts at column 1; one space between columns */
	size_t avail = COLS > 1 ? (size_t)COLS - 1 : 79, fixed = 0;
	for (int k = 0; k < COL_TASK; k++)
		fixed += w[k] + 1;
	size_t task_w = w[COL_TASK];
	if (fixed + TASK_MIN_COLS > avail) {
		size_t need = fixed + TASK_MIN_COLS - avail;
		size_t give = w[COL_AGENT] > AGENT_MIN_COLS ? w[COL_AGENT] - AGENT_MIN_COLS : 0;
		if (give > need)
			give = need;
		w[COL_AGENT] -= give;
		fixed -= give;
	}
	task_w = avail > fixed ? avail - fixed : 1;
	if (task_w > sizeof(((struct agent_cells *)0)->task))
		task_w = sizeof(((struct agent_cells *)0)->task);
	w[COL_TASK] = task_w;
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addch(&b, ' ');
	for (int k = 0; k < COL_COUNT; k++) {
		bool right = k >= COL_INBOX && k <= COL_BEAT;
		cell_put(&b, col_names[k], w[k], right, false);
		if (k + 1 < COL_COUNT)
			sbuf_addch(&b, ' ');
	}
	struct overview *o = v->data;
	util_strlcpy(o->table_header, b.data, sizeof(o->table_header));
	for (size_t i = 0; i < n; i++) {
		sbuf_release(&b);
		sbuf_init(&b);
		for (int k = 0; k < COL_COUNT; k++) {
			bool right = k >= COL_INBOX && k <= COL_BEAT;
			cell_put(&b, cell_of(&a[i], k), w[k], right, k == COL_AGENT);
			if (k + 1 < COL_COUNT)
				sbuf_addch(&b, ' ');
		}
		const char *state = a[i].state;
		enum theme_slot slot = !strcmp(state, "stalled") ? SLOT_ERROR : !strcmp(state, "offline") ?
				       SLOT_DIM : !strcmp(state, "busy") ? SLOT_OK : SLOT_NORMAL;
		console_rows_add(&v->rows, a[i].agent, slot, "%s", b.data);
	}
	sbuf_release(&b);
}

static unsigned overview_refresh(struct console *c, struct view *v, bool shown)
{
	struct overview *o = v->data;
	du_poll(c, o, util_mono_ns()); /* the meters: measured whatever is shown */
	overview_errors(c, o);
	if (!shown)
		return 0;
	overview_usage(c, o);
	struct console_rows *r = &v->rows;
	console_rows_clear(r);
	struct agent_cells *cells = xcalloc(bus_default_agent_count + c->stats.nagents, sizeof(*cells));
	size_t n = 0;
	for (size_t i = 0; i < bus_default_agent_count; i++) {
		const struct bus_agent_stats *s = NULL;
		for (size_t k = 0; k < c->stats.nagents; k++)
			if (!strcmp(c->stats.agents[k].agent, bus_default_agents[i]))
				s = &c->stats.agents[k];
		agent_cells_fill(c, o, &cells[n++], bus_default_agents[i], s);
	}
	for (size_t k = 0; k < c->stats.nagents; k++) {
		bool known = false;
		for (size_t i = 0; i < bus_default_agent_count; i++)
			known = known || !strcmp(c->stats.agents[k].agent, bus_default_agents[i]);
		if (!known)
			agent_cells_fill(c, o, &cells[n++], c->stats.agents[k].agent, &c->stats.agents[k]);
	}
	overview_table(v, cells, n);
	free(cells);
	unsigned f = console_rows_done(c, r);
	/* the meters change without the table changing */
	uint64_t sig = c->stats.dead_letter * 1000003u + c->stats.processing * 1009u +
		       c->stats.retry * 17u + (uint64_t)(c->stats.acked_per_s * 10) + o->data_bytes / 65536 +
		       (uint64_t)(o->err_rate * 10) * 7919u;
	if (sig != o->meters_sig) {
		o->meters_sig = sig;
		f |= CONSOLE_REDRAW;
	}
	return f;
}

static void overview_draw(struct console *c, struct view *v, int y0, int y1)
{
	struct overview *o = v->data;
	size_t waiting = 0;
	int64_t oldest = 0;
	for (size_t i = 0; i < c->stats.nagents; i++) {
		waiting += c->stats.agents[i].depth;
		if (c->stats.agents[i].oldest_ns && (!oldest || c->stats.agents[i].oldest_ns < oldest))
			oldest = c->stats.agents[i].oldest_ns;
	}
	char age[16] = "-", line[256];
	if (oldest)
		console_age(util_now_ns() - oldest, age, sizeof(age));
	/* narrower gaps on a narrow screen, so that all of it shows at 80 */
	const char *gap = COLS < 110 ? "  " : "   ";
	snprintf(line, sizeof(line), " waiting %zu (oldest %s)%sprocessing %zu%sretrying %zu%s"
		 "dead letters %zu%s%.1f msgs/s", waiting, age, gap, c->stats.processing, gap,
		 c->stats.retry, gap, c->stats.dead_letter, gap, c->stats.acked_per_s);
	console_put(c, y0, 0, COLS, c->stats.dead_letter ? SLOT_WARN : SLOT_METER, line, true);
	double mb = (double)o->data_bytes / (1024.0 * 1024.0);
	char size[32] = "(measuring)";
	if (o->data_bytes_ns) /* the first walk has ended */
		snprintf(size, sizeof(size), "%.1f MB", mb);
	int width = COLS < 110 ? 20 : 30, fill = (int)((double)o->data_bytes * width / (double)DATA_ALERT_BYTES);
	if (fill > width)
		fill = width;
	char bar[128];
	snprintf(bar, sizeof(bar), " data %s of 1 GB alert [%.*s%.*s]%serrors %.1f/min (5m)", size, fill,
		 "##############################", width - fill, "..............................", gap,
		 o->err_rate);
	console_put(c, y0 + 1, 0, COLS, o->data_bytes >= DATA_ALERT_BYTES ? SLOT_ERROR : SLOT_METER,
		    bar, true);
	/* the run's phase and how long it has been in it, read at most once
	 * a second: the overview draws often */
	int64_t now = util_mono_ns();
	if (!o->health_ns || now - o->health_ns >= 1000000000LL) {
		o->health_ns = now;
		o->stuck = view_tasks_health(c, o->health, sizeof(o->health));
	}
	console_put(c, y0 + 2, 0, COLS, o->stuck ? SLOT_ERROR : SLOT_METER, o->health, true);
	console_rows_draw(c, &v->rows, y0 + 3, y1, o->table_header);
}

unsigned view_overview_select(struct console *c, const char *agent)
{
	struct view *v = console_view_find(c, &view_overview_ops);
	console_show(c, v);
	free(v->rows.sel_id);
	v->rows.sel_id = NULL;
	overview_refresh(c, v, true);
	struct console_rows *r = &v->rows;
	for (size_t k = 0; k < r->nvis; k++)
		if (r->v[r->vis[k]].id && !strcmp(r->v[r->vis[k]].id, agent))
			r->sel = k;
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

/* Enter on an agent: its inbox. */
static unsigned overview_act(struct console *c, struct view *v, enum console_op op, int answer)
{
	(void)answer;
	struct console_row *cur = console_rows_current(&v->rows);
	if (op != OP_OPEN || !cur || !cur->id)
		return CONSOLE_PASS;
	char agent[MSG_AGENT_MAX + 1];
	util_strlcpy(agent, cur->id, sizeof(agent));
	return view_queues_show(c, QUEUE_INBOX, agent);
}

static const char *overview_enter_hint(const struct view *v)
{
	(void)v;
	return "Enter inbox";
}

static void *overview_init(struct console *c)
{
	(void)c;
	return xcalloc(1, sizeof(struct overview));
}

/* Stops the data size walk. */
static void overview_release(struct console *c, struct view *v)
{
	(void)c;
	struct overview *o = v->data;
	if (!o)
		return;
	if (o->du.running) {
		atomic_store(&o->du.stop, true);
		pthread_join(o->du.th, NULL);
		o->du.running = false;
	}
	free(o->du.dir);
	free(o->errlog.f);
	free(o->errlog.ts);
	cJSON_Delete(o->usage_calls);
	free(o);
}

const struct view_ops view_overview_ops = {
	.name = "overview",
	.title = "Overview",
	.help = "overview: meters and agents",
	.init = overview_init,
	.load = overview_refresh,
	.draw = overview_draw,
	.act = overview_act,
	.enter_hint = overview_enter_hint,
	.release = overview_release,
};
