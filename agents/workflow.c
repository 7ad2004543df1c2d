#include "agents/workflow.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/market.h"
#include "core/message.h"
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
	return c;
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
	char *path = xasprintf("%s/state/product_manager-state.json", data_dir);
	cJSON *st = load_json(path);
	free(path);
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
