#include "agents/workflow.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/market.h"
#include "core/message.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

const char *const wf_default_pairs[] = {
	"USD/JPY", "EUR/USD", "GBP/USD", "AUD/USD", "NZD/USD",
	"USD/CHF", "USD/CAD", "USD/CNY", "USD/HKD", "USD/SGD",
};
const size_t wf_default_npairs = ARRAY_SIZE(wf_default_pairs);

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

void wf_run_id(const struct wf_request *r, char *buf, size_t size)
{
	int32_t ws, we;
	analytics_window(r->as_of_ns, &ws, &we);
	char wk[16], d0[16], d1[16];
	analytics_iso_week_format(we, wk, sizeof(wk));
	market_day_format(ws, d0, sizeof(d0));
	market_day_format(we, d1, sizeof(d1));
	uint64_t h = 1469598103934665603ULL;
	h = fnv(h, d0);
	h = fnv(h, d1);
	for (size_t i = 0; i < r->npairs; i++)
		h = fnv(h, r->pairs[i]);
	h = fnv(h, r->market_source);
	h = fnv(h, r->news_source);
	for (char *p = wk; *p; p++)
		if (*p == 'W')
			*p = 'w';
	snprintf(buf, size, "weekly-%s-%08llx", wk, (unsigned long long)(h & 0xffffffffULL));
}

cJSON *wf_trigger_content(const struct wf_request *r, const char *run_id)
{
	int32_t ws, we;
	analytics_window(r->as_of_ns, &ws, &we);
	char d0[16], d1[16], wk[16], ts[40];
	market_day_format(ws, d0, sizeof(d0));
	market_day_format(we, d1, sizeof(d1));
	analytics_iso_week_format(we, wk, sizeof(wk));
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_type", WF_TASK_WEEKLY);
	cJSON_AddStringToObject(c, "focus_area", "Asia/G10");
	cJSON *tp = cJSON_AddArrayToObject(c, "target_pairs");
	for (size_t i = 0; i < r->npairs; i++)
		cJSON_AddItemToArray(tp, cJSON_CreateString(r->pairs[i]));
	char *tf = xasprintf("%s/%s", d0, d1);
	cJSON_AddStringToObject(c, "timeframe", tf);
	free(tf);
	cJSON *ds = cJSON_AddArrayToObject(c, "data_sources");
	cJSON_AddItemToArray(ds, cJSON_CreateString(r->market_source));
	cJSON_AddItemToArray(ds, cJSON_CreateString(r->news_source));
	util_iso8601(util_now_ns() + 3600LL * 1000000000, ts, sizeof(ts));
	cJSON_AddStringToObject(c, "deadline", ts);
	cJSON_AddStringToObject(c, "output_format", "markdown");
	cJSON_AddStringToObject(c, "run_id", run_id);
	cJSON_AddStringToObject(c, "iso_week", wk);
	cJSON *w = cJSON_AddObjectToObject(c, "window");
	cJSON_AddStringToObject(w, "start", d0);
	cJSON_AddStringToObject(w, "end", d1);
	util_iso8601(r->as_of_ns, ts, sizeof(ts));
	cJSON_AddStringToObject(c, "as_of", ts);
	if (r->notify)
		cJSON_AddStringToObject(c, "notify", r->notify);
	return c;
}

cJSON *wf_load_state(const char *data_dir, char **err)
{
	char *path = xasprintf("%s/state/product_manager-state.json", data_dir);
	char *buf = NULL, *e = NULL;
	size_t len;
	cJSON *st = NULL;
	if (util_read_file(path, 256u << 20, &buf, &len, &e) == 0) {
		st = json_parse_strict(buf, len, &e);
		if (!st)
			err_prefix(&e, "%s", path);
	}
	if (!st && err)
		*err = e;
	else
		free(e);
	free(buf);
	free(path);
	return st;
}

static cJSON *load_json(const char *path)
{
	char *buf = NULL;
	size_t len;
	cJSON *j = NULL;
	if (util_read_file(path, 256u << 20, &buf, &len, NULL) == 0)
		j = json_parse_strict(buf, len, NULL);
	free(buf);
	return j;
}

static char *archive_path(const char *data_dir, const char *run_id)
{
	return xasprintf("%s/state/runs/%s.json", data_dir, run_id);
}

cJSON *wf_load_run(const char *data_dir, const char *run_id)
{
	cJSON *st = wf_load_state(data_dir, NULL);
	char *path;
	cJSON *r = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(st, "runs"), run_id);
	cJSON *run = r ? cJSON_Duplicate(r, 1) : NULL;
	cJSON_Delete(st);
	if (run && cJSON_IsString(cJSON_GetObjectItem(run, "archived")) &&
	    util_valid_agent_name(run_id)) {
		path = archive_path(data_dir, run_id);
		cJSON *whole = load_json(path);
		free(path);
		if (cJSON_IsObject(whole)) {
			cJSON_Delete(run);
			run = whole;
		} else {
			cJSON_Delete(whole); /* the entry is what is left */
		}
	}
	return run;
}

int wf_archive_run(const char *data_dir, cJSON *run, bool durable, char **err)
{
	static const char *const bulky[] = { "findings", "messages", "events", "market",
					     "sentiment", "price_checks", "issues" };
	const cJSON *id = cJSON_GetObjectItem(run, "run_id");
	if (!cJSON_IsString(id) || !util_valid_agent_name(id->valuestring))
		return err_set(err, "the run has no valid run_id");
	if (cJSON_GetObjectItem(run, "archived"))
		return 0; /* done already: the archive has it whole */
	char *dir = xasprintf("%s/state/runs", data_dir);
	int r = util_mkdirs(dir, err);
	free(dir);
	if (r < 0)
		return -1;
	char *path = archive_path(data_dir, id->valuestring);
	char *s = cJSON_PrintUnformatted(run);
	r = util_write_file_atomic(path, s, strlen(s), durable, err);
	free(s);
	if (r == 0) {
		for (size_t i = 0; i < ARRAY_SIZE(bulky); i++)
			cJSON_DeleteItemFromObjectCaseSensitive(run, bulky[i]);
		cJSON_DeleteItemFromObjectCaseSensitive(run, "archived");
		char *rel = xasprintf("state/runs/%s.json", id->valuestring);
		cJSON_AddStringToObject(run, "archived", rel);
		free(rel);
	}
	free(path);
	return r;
}


enum wf_liveness wf_agent_liveness(const char *data_dir, const char *agent, int64_t now_ns,
				   char *why, size_t size)
{
	char dummy[8];
	if (!why) {
		why = dummy;
		size = sizeof(dummy);
	}
	char *path = xasprintf("%s/state/%s-state.json", data_dir, agent);
	char *buf = NULL;
	size_t len;
	cJSON *st = NULL;
	if (util_read_file(path, 256u << 20, &buf, &len, NULL) == 0)
		st = json_parse_strict(buf, len, NULL);
	free(buf);
	free(path);
	const cJSON *h = cJSON_GetObjectItem(st, "heartbeat");
	const cJSON *pid = cJSON_GetObjectItem(h, "pid");
	const char *at = jstr(h, "at"), *hs = jstr(h, "status");
	int64_t at_ns = 0;
	enum wf_liveness r = WF_ALIVE;
	if (!st || !at || msg_parse_time(at, &at_ns) < 0) {
		snprintf(why, size, "it has never run here");
		r = WF_OFFLINE;
	} else if (hs && !strcmp(hs, "stopping")) {
		snprintf(why, size, "it has stopped");
		r = WF_OFFLINE;
	} else if (cJSON_IsNumber(pid) && pid->valuedouble >= 1 && pid->valuedouble < 4194305 &&
		   kill((pid_t)pid->valuedouble, 0) < 0 && errno == ESRCH) {
		snprintf(why, size, "its process %.0f is gone", pid->valuedouble);
		r = WF_OFFLINE;
	} else if (now_ns - at_ns > (int64_t)WF_STALLED_S * 1000000000LL) {
		snprintf(why, size, "its last heartbeat is %llds old",
			 (long long)((now_ns - at_ns) / 1000000000LL));
		r = WF_STALLED;
	} else {
		snprintf(why, size, "alive");
	}
	cJSON_Delete(st);
	return r;
}

int64_t wf_stuck_after_s(void)
{
	const char *e = getenv("MADF_RUN_STUCK_S");
	char *end = NULL;
	long long v = e && *e ? strtoll(e, &end, 10) : 0;
	return e && *e && end && !*end && v > 0 ? (int64_t)v : WF_STUCK_S;
}

static void wf_span(int64_t ns, char *buf, size_t size)
{
	int64_t s = ns > 0 ? ns / 1000000000LL : 0;
	if (s < 120)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, size, "%lldm", (long long)(s / 60));
	else
		snprintf(buf, size, "%lldh", (long long)(s / 3600));
}

bool wf_run_health(const cJSON *run, int64_t now_ns, int64_t stuck_s, char *buf, size_t size)
{
	const char *status = jstr(run, "status") ? jstr(run, "status") : "starting";
	const char *since = jstr(run, "status_since") ? jstr(run, "status_since") :
			    jstr(run, "started_at");
	int64_t since_ns = 0;
	bool known = since && msg_parse_time(since, &since_ns) == 0;
	int done = 0, failed = 0, cancelled = 0, total = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const char *s = jstr(t, "status");
		total++;
		done += s && !strcmp(s, "done");
		failed += s && !strcmp(s, "failed");
		cancelled += s && !strcmp(s, "cancelled");
	}
	char cn[32] = "";
	if (cancelled)
		snprintf(cn, sizeof(cn), ", %d cancelled", cancelled);
	char span[16] = "?";
	if (known)
		wf_span(now_ns - since_ns, span, sizeof(span));
	bool stuck = known && strcmp(status, "done") && now_ns - since_ns > stuck_s * 1000000000LL;
	char lim[16];
	wf_span(stuck_s * 1000000000LL, lim, sizeof(lim));
	snprintf(buf, size, "run %s: %s for %s; tasks %d done, %d failed%s, %d open of %d%s%s%s",
		 jstr(run, "run_id") ? jstr(run, "run_id") : "?", status, span, done, failed,
		 cn, total - done - failed - cancelled, total, stuck ? "; STUCK: over " : "",
		 stuck ? lim : "", stuck ? " in one phase" : "");
	return stuck;
}

static void gc_dir(const char *dir, int64_t older_than_ns, int64_t now_ns, bool dry_run,
		   const char *what, void (*report)(void *, const char *, const char *),
		   void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
		    now_ns - (int64_t)st.st_mtim.tv_sec * 1000000000LL > older_than_ns) {
			if (report)
				report(ctx, what, p);
			if (!dry_run)
				unlink(p);
		}
		free(p);
	}
	if (d)
		closedir(d);
}

int wf_reports_gc(const char *data_dir, int64_t now_ns, bool dry_run,
		  void (*report)(void *ctx, const char *what, const char *path),
		  void *ctx, char **err)
{
	(void)err;
	int64_t day = 86400LL * 1000000000;
	char *drafts = xasprintf("%s/reports/drafts", data_dir);
	char *weekly = xasprintf("%s/reports/weekly", data_dir);
	gc_dir(drafts, 7 * day, now_ns, dry_run, "report draft over 7 days", report, ctx);
	gc_dir(weekly, 365 * day, now_ns, dry_run, "weekly report over a year", report, ctx);
	free(drafts);
	free(weekly);
	return 0;
}

static void wf_required(cJSON *c, const char *type)
{
	char dl[40];
	cJSON_AddStringToObject(c, "task_type", type);
	cJSON_AddStringToObject(c, "focus_area", "Asia/G10");
	cJSON_AddArrayToObject(c, "target_pairs");
	cJSON_AddStringToObject(c, "timeframe", "");
	cJSON_AddArrayToObject(c, "data_sources");
	util_iso8601(util_now_ns() + 3600LL * 1000000000, dl, sizeof(dl));
	cJSON_AddStringToObject(c, "deadline", dl);
	cJSON_AddStringToObject(c, "output_format", "none");
}

const char *wf_cancel_id(const char *assignment, char *buf, size_t size)
{
	if (!assignment || !*assignment || size < MSG_ID_MAX + 1 ||
	    strlen(assignment) + strlen("-cancel") > MSG_ID_MAX)
		return NULL;
	snprintf(buf, size, "%s-cancel", assignment);
	return msg_valid_id(buf) ? buf : NULL;
}

cJSON *wf_control_content(const char *action, const char *run_id, const char *task_id,
			  const char *to, const char *priority)
{
	cJSON *c = cJSON_CreateObject();
	wf_required(c, WF_TASK_CONTROL);
	cJSON_AddStringToObject(c, "action", action);
	if (run_id)
		cJSON_AddStringToObject(c, "run_id", run_id);
	cJSON_AddStringToObject(c, "task_id", task_id);
	if (to)
		cJSON_AddStringToObject(c, "to", to);
	if (priority)
		cJSON_AddStringToObject(c, "priority", priority);
	return c;
}

void wf_control_answer(struct agent *a, const struct msg *m, const char *outcome,
		       const char *detail)
{
	wf_control_reply(a, m, jstr(m->content, "task_id"), outcome, detail);
}

void wf_control_reply(struct agent *a, const struct msg *m, const char *task_id,
		      const char *outcome, const char *detail)
{
	const char *action = jstr(m->content, "action");
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "task_id", m->id);
	cJSON_AddStringToObject(c, "status", strcmp(outcome, "applied") ? "rejected" : "accepted");
	char now[40];
	util_iso8601(util_now_ns(), now, sizeof(now));
	cJSON_AddStringToObject(c, "estimated_completion", now);
	cJSON_AddNumberToObject(c, "agent_capacity", 1);
	if (strcmp(outcome, "applied"))
		cJSON_AddStringToObject(c, "rejection_reason", detail);
	cJSON_AddStringToObject(c, "control_action", action ? action : "?");
	if (task_id)
		cJSON_AddStringToObject(c, "control_task_id", task_id);
	cJSON_AddStringToObject(c, "outcome", outcome);
	cJSON_AddStringToObject(c, "detail", detail);
	char *err = NULL;
	if (agent_send(a, m->from, MSG_TASK_ACCEPTANCE, c, NULL, m->id, m->correlation_id,
		       PRIO_URGENT, NULL, &err) < 0)
		free(err); /* logged by agent_send */
}

static bool wf_awaits(const cJSON *o)
{
	const cJSON *st = cJSON_GetObjectItem(o, "status");
	return cJSON_IsString(st) && !strcmp(st->valuestring, "awaiting_approval");
}

static void wf_add_id(char *buf, size_t size, const char *id)
{
	if (!buf || !size)
		return;
	size_t n = strlen(buf);
	if (n + 1 < size)
		snprintf(buf + n, size - n, "%s%s", n ? " " : "", id);
}

int wf_awaiting_approval(const cJSON *run, char *buf, size_t size)
{
	int n = 0;
	if (buf && size)
		buf[0] = '\0';
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const cJSON *id = cJSON_GetObjectItem(t, "task_id");
		if (!wf_awaits(t) || !cJSON_IsString(id))
			continue;
		wf_add_id(buf, size, id->valuestring);
		n++;
	}
	static const char *const stages[] = { "validation", "narrative" };
	for (size_t i = 0; i < ARRAY_SIZE(stages); i++)
		if (wf_awaits(cJSON_GetObjectItem(run, stages[i]))) {
			wf_add_id(buf, size, stages[i]);
			n++;
		}
	return n;
}
