/* View 1, overview: bus meters and the agents table. */
#include <curses.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

#define HEARTBEAT_S 5
#define STALLED_S (3 * HEARTBEAT_S)
#define DATA_ALERT_BYTES (1024ULL * 1024 * 1024)

static uint64_t walk_bytes;

static int walk_add(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)f;
	if (flag == FTW_F)
		walk_bytes += (uint64_t)st->st_size;
	return 0;
}

static void overview_stats(struct console *c)
{
	bus_stats_release(&c->stats);
	memset(&c->stats, 0, sizeof(c->stats));
	if (c->mon) {
		bus_monitor_stats(c->mon, &c->stats);
	} else {
		char *err = NULL;
		if (bus_stats(c->bus, &c->stats, &err) < 0) {
			console_status(c, true, "bus: %s", err);
			free(err);
		}
	}
	size_t total = c->stats.dead_letter;
	for (size_t i = 0; i < c->stats.nagents; i++)
		total += c->stats.agents[i].depth + c->stats.agents[i].processing;
	int64_t now = util_mono_ns();
	if (!c->prev_rate_ns) {
		c->prev_rate_ns = now;
		c->prev_total = total;
	} else if (now - c->prev_rate_ns >= 1000000000LL) {
		double dt = (double)(now - c->prev_rate_ns) / 1e9;
		double d = total > c->prev_total ? (double)(total - c->prev_total) : 0;
		c->rate = d / dt;
		c->prev_total = total;
		c->prev_rate_ns = now;
	}
	/* The data size walks the whole data directory (a stat per file:
	 * 200,000 files take ~0.1-0.2 s), at most every 5 s and at most
	 * 1/200 of the time, so that the walk alone stays under 0.5 % CPU. */
	static int64_t walk_every_ns = 5000000000LL;
	if (!c->data_bytes_ns || now - c->data_bytes_ns > walk_every_ns) {
		walk_bytes = 0;
		nftw(c->cli->data_dir, walk_add, 16, FTW_PHYS);
		c->data_bytes = walk_bytes;
		c->data_bytes_ns = util_mono_ns();
		walk_every_ns = (c->data_bytes_ns - now) * 200;
		if (walk_every_ns < 5000000000LL)
			walk_every_ns = 5000000000LL;
	}
}

/* busy / idle / stalled / offline from the agent's state file. */
static void agent_state(struct console *c, const char *agent, char *state, size_t ssize,
			char *task, size_t tsize, long *done, long *errors, char *hb, size_t hsize)
{
	char *path = xasprintf("%s/state/%s-state.json", c->cli->data_dir, agent);
	cJSON *j = console_load_json(path);
	free(path);
	snprintf(state, ssize, "offline");
	snprintf(task, tsize, "-");
	snprintf(hb, hsize, "-");
	*done = *errors = 0;
	if (!j)
		return;
	const cJSON *h = cJSON_GetObjectItem(j, "heartbeat");
	const cJSON *st = cJSON_GetObjectItem(j, "status");
	const cJSON *at = cJSON_GetObjectItem(h, "at");
	const cJSON *hs = cJSON_GetObjectItem(h, "status");
	const cJSON *act = cJSON_GetObjectItem(h, "active_tasks");
	const cJSON *cur = cJSON_GetObjectItem(h, "current_task");
	const cJSON *cd = cJSON_GetObjectItem(st, "completed_tasks_today");
	const cJSON *ec = cJSON_GetObjectItem(st, "error_count_today");
	*done = cJSON_IsNumber(cd) ? (long)cd->valuedouble : 0;
	*errors = cJSON_IsNumber(ec) ? (long)ec->valuedouble : 0;
	int64_t at_ns = 0;
	if (cJSON_IsString(at) && msg_parse_time(at->valuestring, &at_ns) == 0) {
		int64_t age = util_now_ns() - at_ns;
		console_age(age, hb, hsize);
		if (cJSON_IsString(hs) && !strcmp(hs->valuestring, "stopping"))
			snprintf(state, ssize, "offline");
		else if (age > (int64_t)STALLED_S * 1000000000LL)
			snprintf(state, ssize, "stalled");
		else
			snprintf(state, ssize, "%s", cJSON_IsNumber(act) && act->valuedouble > 0 ? "busy" : "idle");
	}
	if (cJSON_IsString(cur) && *cur->valuestring)
		snprintf(task, tsize, "%s", cur->valuestring);
	cJSON_Delete(j);
}

static void overview_agent_row(struct console *c, const char *agent, const struct bus_agent_stats *s)
{
	char state[16], task[160], hb[16], oldest[16] = "-";
	long done, errors;
	agent_state(c, agent, state, sizeof(state), task, sizeof(task), &done, &errors, hb, sizeof(hb));
	if (s && s->oldest_ns)
		console_age(util_now_ns() - s->oldest_ns, oldest, sizeof(oldest));
	enum theme_slot slot = !strcmp(state, "stalled") ? SLOT_ERROR : !strcmp(state, "offline") ?
			       SLOT_DIM : !strcmp(state, "busy") ? SLOT_OK : SLOT_NORMAL;
	console_rows_add(&c->rows[VIEW_OVERVIEW], agent, slot,
			 "%-18.18s %-8s %6zu %7s %6zu %6zu %6ld %6ld %6s  %.60s", agent, state,
			 s ? s->depth : 0, oldest, s ? s->processing : 0, s ? s->retry : 0, done, errors,
			 hb, task);
}

unsigned view_overview_refresh(struct console *c)
{
	overview_stats(c);
	if (c->view != VIEW_OVERVIEW)
		return 0;
	struct console_rows *r = &c->rows[VIEW_OVERVIEW];
	console_rows_clear(r);
	for (size_t i = 0; i < bus_default_agent_count; i++) {
		const struct bus_agent_stats *s = NULL;
		for (size_t k = 0; k < c->stats.nagents; k++)
			if (!strcmp(c->stats.agents[k].agent, bus_default_agents[i]))
				s = &c->stats.agents[k];
		overview_agent_row(c, bus_default_agents[i], s);
	}
	for (size_t k = 0; k < c->stats.nagents; k++) {
		bool known = false;
		for (size_t i = 0; i < bus_default_agent_count; i++)
			known = known || !strcmp(c->stats.agents[k].agent, bus_default_agents[i]);
		if (!known)
			overview_agent_row(c, c->stats.agents[k].agent, &c->stats.agents[k]);
	}
	unsigned f = console_rows_done(c, r);
	/* the meters change without the table changing */
	static uint64_t last;
	uint64_t sig = c->stats.dead_letter * 1000003u + c->stats.processing * 1009u +
		       c->stats.retry * 17u + (uint64_t)(c->rate * 10) + c->data_bytes / 65536;
	if (sig != last) {
		last = sig;
		f |= CONSOLE_REDRAW;
	}
	return f;
}

void view_overview_draw(struct console *c, int y0, int y1)
{
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
	snprintf(line, sizeof(line), " waiting %zu (oldest %s)   processing %zu   retrying %zu   "
		 "dead letters %zu   %.1f msgs/s", waiting, age, c->stats.processing, c->stats.retry,
		 c->stats.dead_letter, c->rate);
	console_put(c, y0, 0, COLS, c->stats.dead_letter ? SLOT_WARN : SLOT_METER, line, true);
	double mb = (double)c->data_bytes / (1024.0 * 1024.0);
	int width = 30, fill = (int)((double)c->data_bytes * width / (double)DATA_ALERT_BYTES);
	if (fill > width)
		fill = width;
	char bar[128];
	snprintf(bar, sizeof(bar), " data %.1f MB of 1 GB alert [%.*s%.*s]", mb, fill,
		 "##############################", width - fill, "..............................");
	console_put(c, y0 + 1, 0, COLS, c->data_bytes >= DATA_ALERT_BYTES ? SLOT_ERROR : SLOT_METER,
		    bar, true);
	console_rows_draw(c, &c->rows[VIEW_OVERVIEW], y0 + 3, y1,
			  " AGENT              STATE     INBOX  OLDEST   PROC  RETRY   DONE ERRORS  BEAT   CURRENT TASK");
}
