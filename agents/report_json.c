/* The report's JSON twin, its file name and the sparkline of closes. */
#include "agents/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report_priv.h"
#include "core/util.h"
#include "core/banned.h"

#define REPORT_SUFFIX "-asia-g10-fx"

/* JSON twin. */

static void add_copy(cJSON *o, const char *k, const cJSON *src)
{
	cJSON_AddItemToObject(o, k, src ? cJSON_Duplicate(src, true) : cJSON_CreateNull());
}

static cJSON *json_pair(const cJSON *run, const char *pair)
{
	static const char *const keys[] = { "start", "end", "change_pct", "high", "low",
					    "volatility_annualised_pct", "zscore", "trend",
					    "largest_move", "simulated" };
	static const char *const prov[] = { "message_id", "agent", "source" };
	const cJSON *f = report_pair_figures(run, pair);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "pair", pair);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		add_copy(p, keys[i], jget(f, keys[i]));
	if (!f) {
		cJSON_AddNullToObject(p, "provenance");
		return p;
	}
	cJSON *pv = cJSON_AddObjectToObject(p, "provenance");
	for (size_t i = 0; i < ARRAY_SIZE(prov); i++)
		add_copy(pv, prov[i], jget(f, prov[i]));
	return p;
}

static cJSON *json_findings(const cJSON *findings)
{
	static const char *const keys[] = { "id", "agent", "text", "sources", "verdict",
					    "message_id" };
	const cJSON *f;
	if (!cJSON_IsArray(findings))
		return cJSON_CreateNull();
	cJSON *out = cJSON_CreateArray();
	cJSON_ArrayForEach(f, findings) {
		if (!cJSON_IsObject(f))
			continue;
		cJSON *o = cJSON_CreateObject();
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			add_copy(o, keys[i], jget(f, keys[i]));
		cJSON_AddItemToArray(out, o);
	}
	return out;
}

/* The events as the snapshot has them, each with its standing with the
 * validator ("verdict", null while pending) and the ids of the acts told
 * with it on its Key events line ("told_with", empty when alone). */
static cJSON *json_events(const cJSON *run)
{
	const cJSON *events = jget(run, "events"), *e;
	if (!cJSON_IsArray(events))
		return cJSON_CreateNull();
	size_t n;
	struct ev_ref *r = report_events_sorted(events, &n, report_ev_cmp_date);
	size_t *line = xcalloc(n ? n : 1, sizeof(*line));
	report_events_group(r, n, line);
	cJSON *out = cJSON_CreateArray();
	cJSON_ArrayForEach(e, events) {
		if (!cJSON_IsObject(e))
			continue;
		cJSON *o = cJSON_Duplicate(e, true);
		const char *v = report_event_verdict(run, e, true);
		cJSON_AddItemToObject(o, "verdict", v ? cJSON_CreateString(v) : cJSON_CreateNull());
		cJSON *with = cJSON_AddArrayToObject(o, "told_with");
		size_t me = n;
		for (size_t i = 0; i < n; i++)
			if (r[i].e == e)
				me = i;
		for (size_t i = 0; me < n && i < n; i++)
			if (i != me && line[i] == line[me] && jstr(r[i].e, "id"))
				cJSON_AddItemToArray(with, cJSON_CreateString(jstr(r[i].e, "id")));
		cJSON_AddItemToArray(out, o);
	}
	free(line);
	free(r);
	return out;
}

static bool run_complete(const cJSON *run)
{
	const cJSON *pairs = jget(run, "pairs"), *p;
	if (!cJSON_IsArray(pairs) || !report_validation_finished(run))
		return false;
	cJSON_ArrayForEach(p, pairs)
		if (!cJSON_IsString(p) || !report_pair_figures(run, p->valuestring))
			return false;
	return true;
}

cJSON *report_json(const cJSON *run)
{
	const cJSON *w = jget(run, "window"), *p;
	char now[40];
	cJSON *o = cJSON_CreateObject();
	util_iso8601(util_now_ns(), now, sizeof(now));
	add_copy(o, "run_id", jget(run, "run_id"));
	add_copy(o, "iso_week", jget(run, "iso_week"));
	cJSON_AddStringToObject(o, "title", jstr(run, "title") ? jstr(run, "title") : REPORT_TITLE);
	cJSON_AddStringToObject(o, "generated_at", now);
	cJSON *win = cJSON_AddObjectToObject(o, "window");
	add_copy(win, "start", jget(w, "start"));
	add_copy(win, "end", jget(w, "end"));
	cJSON *pairs = cJSON_AddArrayToObject(o, "pairs");
	cJSON_ArrayForEach(p, jget(run, "pairs"))
		if (cJSON_IsString(p))
			cJSON_AddItemToArray(pairs, json_pair(run, p->valuestring));
	cJSON_AddItemToObject(o, "events", json_events(run));
	add_copy(o, "sentiment", jget(run, "sentiment"));
	cJSON_AddItemToObject(o, "findings", json_findings(jget(run, "findings")));
	add_copy(o, "issues", jget(run, "issues"));
	add_copy(o, "failures", jget(run, "failures"));
	cJSON_AddItemToObject(o, "warnings", report_all_warnings(run, true));
	add_copy(o, "validation", jget(run, "validation"));
	add_copy(o, "sources", jget(run, "sources"));
	if (jget(run, "narrative")) {
		const cJSON *n = jget(run, "narrative");
		cJSON *no = cJSON_AddObjectToObject(o, "narrative");
		static const char *const nk[] = { "text", "status", "provider", "model", "usage" };
		for (size_t i = 0; i < ARRAY_SIZE(nk); i++)
			add_copy(no, nk[i], jget(n, nk[i]));
	}
	if (jget(run, "llm")) {
		/* What produced the report: the mode and the models, no key. */
		cJSON *mf = cJSON_AddObjectToObject(o, "manifest");
		const cJSON *l = jget(run, "llm");
		static const char *const mk[] = { "mode", "provider", "models", "continue_at_limit" };
		for (size_t i = 0; i < ARRAY_SIZE(mk); i++)
			if (jget(l, mk[i]))
				add_copy(mf, mk[i], jget(l, mk[i]));
		const cJSON *t;
		cJSON *tu = cJSON_CreateObject();
		cJSON_ArrayForEach(t, jget(run, "tasks"))
			if (jget(t, "llm_usage") && jstr(t, "task_id"))
				add_copy(tu, jstr(t, "task_id"), jget(t, "llm_usage"));
		if (tu->child)
			cJSON_AddItemToObject(mf, "task_usage", tu);
		else
			cJSON_Delete(tu);
	}
	cJSON_AddBoolToObject(o, "complete", run_complete(run));
	return o;
}

/* File name and sparkline. */

static bool name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* Copies the allowed characters of s (no leading dot) into at most room
 * bytes of out; returns how many. */
static size_t name_filter(const char *s, char *out, size_t room)
{
	size_t n = 0;
	for (; s && *s && n < room; s++)
		if (name_char(*s) && !(n == 0 && *s == '.'))
			out[n++] = *s;
	return n;
}

void report_basename(const cJSON *run, char *buf, size_t size)
{
	size_t suffix = strlen(REPORT_SUFFIX);
	if (size == 0)
		return;
	if (size <= suffix + 1) {
		buf[name_filter(jstr(run, "iso_week"), buf, size - 1)] = '\0';
		return;
	}
	size_t room = size - suffix - 1;
	size_t n = name_filter(jstr(run, "iso_week"), buf, room);
	if (!n)
		n = name_filter(jstr(run, "run_id"), buf, room);
	if (!n)
		n = name_filter("run", buf, room);
	memcpy(buf + n, REPORT_SUFFIX, suffix + 1);
}

char *report_sparkline(const double *v, size_t n)
{
	static const char *const bars[] = { "\u2581", "\u2582", "\u2583", "\u2584",
					    "\u2585", "\u2586", "\u2587", "\u2588" };
	double lo = INFINITY, hi = -INFINITY;
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; v && i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (size_t i = 0; v && i < n; i++) {
		if (!isfinite(v[i])) {
			sbuf_addch(&b, ' ');
			continue;
		}
		double x = hi > lo ? (v[i] / 2 - lo / 2) / (hi / 2 - lo / 2) : 0.5;
		long k = hi > lo ? lround(x * 7) : 3;
		sbuf_addstr(&b, bars[k < 0 ? 0 : k > 7 ? 7 : k]);
	}
	return sbuf_detach(&b);
}
