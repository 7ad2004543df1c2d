/* The week's main story (see report_lead.h). */
#include "agents/report_lead.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/events.h"
#include "agents/validator_evidence.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

static bool policy(const char *a)
{
	return a && (!strcmp(a, "hike") || !strcmp(a, "cut") || !strcmp(a, "hold") ||
		     !strcmp(a, "intervention"));
}

/* The pair's change over the window, or NAN without figures. */
static double pair_change(const cJSON *run, const char *pair)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(run, "market"), pair);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(f, "change_pct");
	return cJSON_IsNumber(c) && isfinite(c->valuedouble) ? c->valuedouble : NAN;
}

static bool pair_has_ccy(const char *pair, const char *ccy)
{
	if (!pair || !ccy || strlen(ccy) != 3)
		return false;
	const char *x = strstr(pair, ccy);
	if (!x && !strcmp(ccy, "DEM"))
		x = strstr(pair, "EUR");
	return x != NULL;
}

static bool in_list(const char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Scores one theme (bank, action) into *t. */
static void theme_score(const cJSON *run, const char *bank, const char *action,
			struct report_lead *t)
{
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(run, "events"), *e, *x;
	size_t cap = 0;
	cJSON_ArrayForEach(e, events)
		cap += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "sources")) + 1;
	const char **stories = xcalloc(cap + 1, sizeof(*stories));
	const char **days = xcalloc(cap + 1, sizeof(*days));
	size_t ns = 0, nd = 0;
	int votes_usd = 0;
	memset(t, 0, sizeof(*t));
	snprintf(t->bank, sizeof(t->bank), "%s", bank);
	snprintf(t->action, sizeof(t->action), "%s", action);
	double best = NAN;
	cJSON_ArrayForEach(e, events) {
		const char *b = jstr(e, "bank"), *a = jstr(e, "action"), *d = jstr(e, "date");
		if (!b || !a || strcmp(b, bank) || strcmp(a, action))
			continue;
		if (d && strlen(d) == 10 && !in_list(days, nd, d)) {
			days[nd++] = d;
			if (!t->first[0] || strcmp(d, t->first) < 0)
				snprintf(t->first, sizeof(t->first), "%s", d);
			if (strcmp(d, t->last) > 0)
				snprintf(t->last, sizeof(t->last), "%s", d);
		}
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(e, "sources"))
			if (cJSON_IsString(x) && !in_list(stories, ns, x->valuestring))
				stories[ns++] = x->valuestring;
		/* Its pairs: named, else the run's pairs of its currencies. */
		const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(e, "pairs");
		const cJSON *p, *plist = cJSON_GetArraySize(pairs) ? pairs :
			cJSON_GetObjectItemCaseSensitive(run, "pairs");
		cJSON_ArrayForEach(p, plist) {
			if (!cJSON_IsString(p))
				continue;
			bool concerns = cJSON_GetArraySize(pairs) > 0;
			if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "currencies")))
				concerns = concerns ||
					   pair_has_ccy(p->valuestring, events_bank_ccy(bank));
			cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(e, "currencies"))
				concerns = concerns || (cJSON_IsString(x) &&
							pair_has_ccy(p->valuestring, x->valuestring));
			double c = pair_change(run, p->valuestring);
			if (concerns && !isnan(c) && (isnan(best) || fabs(c) > fabs(best))) {
				best = c;
				snprintf(t->pair, sizeof(t->pair), "%s", p->valuestring);
			}
		}
		/* An intervention's side, by the majority of its events. */
		char fi[4] = "", we[4] = "";
		const char *txt[] = { jstr(e, "title"), NULL };
		const cJSON *ev0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "evidence"), 0);
		txt[1] = cJSON_IsString(ev0) ? ev0->valuestring : NULL;
		for (size_t i = 0; i < 2 && !fi[0] && !we[0]; i++)
			if (txt[i])
				(void)vev_direction(txt[i], fi, we);
		if (!strcmp(action, "intervention") && (fi[0] || we[0])) {
			votes_usd += !strcmp(fi, "USD") ? 1 : !strcmp(we, "USD") ? -1 : 0;
			if (!t->bought[0] && !t->sold[0]) {
				memcpy(t->bought, fi, 4);
				memcpy(t->sold, we, 4);
			}
		}
	}
	/* Buying dollars on most days is the story, whatever one title says. */
	if (votes_usd > 0 && strcmp(t->bought, "USD")) {
		snprintf(t->bought, sizeof(t->bought), "USD");
		t->sold[0] = 0;
	} else if (votes_usd < 0 && strcmp(t->sold, "USD")) {
		snprintf(t->sold, sizeof(t->sold), "USD");
		t->bought[0] = 0;
	}
	t->ndays = nd;
	t->nstories = ns;
	t->change = isnan(best) ? 0 : best;
	t->score = (double)ns * (1 + fabs(t->change));
	free((void *)stories);
	free((void *)days);
}

bool report_lead_find(const cJSON *run, struct report_lead *out)
{
	const cJSON *e;
	bool any = false;
	struct report_lead t;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(run, "events")) {
		const char *b = jstr(e, "bank"), *a = jstr(e, "action");
		if (!b || !policy(a))
			continue;
		theme_score(run, b, a, &t);
		int c = !any ? 1 : t.score > out->score ? 1 : t.score < out->score ? -1 :
			fabs(t.change) > fabs(out->change) ? 1 :
			fabs(t.change) < fabs(out->change) ? -1 :
			strcmp(out->bank, t.bank) ? strcmp(out->bank, t.bank) :
			strcmp(out->action, t.action);
		if (c > 0) {
			*out = t;
			any = true;
		}
	}
	return any;
}
