/* Scoring event extraction against the labelled set (see events_eval.h). */
#include "agents/events_eval.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/market.h"
#include "core/banned.h"
#include "core/util.h"

int eval_action_index(enum ev_kind k)
{
	switch (k) {
	case EV_HIKE: return 0;
	case EV_CUT: return 1;
	case EV_HOLD: return 2;
	case EV_INTERVENTION: return 3;
	case EV_NONE:
	case EV_MMOP:
	case EV_STATEMENT:
	case EV_DATA:
		break;
	}
	return -1;
}

double eval_precision(const struct eval_counts *c)
{
	return c->tp + c->fp ? (double)c->tp / (c->tp + c->fp) : NAN;
}

double eval_recall(const struct eval_counts *c)
{
	return c->tp + c->fn ? (double)c->tp / (c->tp + c->fn) : NAN;
}

void eval_set_release(struct eval_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->s[i].id);
		free(set->s[i].facts);
		free(set->s[i].spec);
	}
	free(set->s);
	memset(set, 0, sizeof(*set));
}

static int parse_facts(const cJSON *arr, bool spec, struct eval_fact **out, size_t *n,
		       char **why)
{
	*out = NULL;
	*n = 0;
	if (!cJSON_IsArray(arr))
		return err_set(why, "\"%s\" is not an array", spec ? "speculated" : "facts");
	size_t cnt = (size_t)cJSON_GetArraySize(arr);
	*out = xcalloc(cnt ? cnt : 1, sizeof(**out));
	const cJSON *f;
	cJSON_ArrayForEach(f, arr) {
		const cJSON *b = cJSON_GetObjectItem(f, "bank");
		const cJSON *a = cJSON_GetObjectItem(f, "action");
		const cJSON *d = cJSON_GetObjectItem(f, "date");
		if (!cJSON_IsString(b) || !cJSON_IsString(a))
			return err_set(why, "a label without bank or action");
		struct eval_fact *e = &(*out)[(*n)++];
		snprintf(e->bank, sizeof(e->bank), "%s", b->valuestring);
		e->kind = events_kind_parse(a->valuestring);
		if (eval_action_index(e->kind) < 0)
			return err_set(why, "unknown action \"%s\"", a->valuestring);
		if (!spec) {
			if (!cJSON_IsString(d) ||
			    market_day_parse(d->valuestring, strlen(d->valuestring), &e->day) < 0)
				return err_set(why, "a fact without a date YYYY-MM-DD");
			e->background = cJSON_IsTrue(cJSON_GetObjectItem(f, "background"));
		}
	}
	return 0;
}

int eval_set_load(const char *path, struct eval_set *set, char **err)
{
	memset(set, 0, sizeof(*set));
	char *data = NULL;
	size_t len = 0;
	if (util_read_file(path, (size_t)64 << 20, &data, &len, err) < 0)
		return err_prefix(err, "%s", path);
	size_t cap = 0;
	long line = 0;
	int rc = 0;
	for (char *p = data, *nl; p && *p && rc == 0; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		line++;
		if (!*p)
			continue;
		cJSON *j = cJSON_Parse(p);
		char *why = NULL;
		const cJSON *id = cJSON_GetObjectItem(j, "id");
		const cJSON *pub = cJSON_GetObjectItem(j, "published");
		const cJSON *split = cJSON_GetObjectItem(j, "split");
		struct eval_story st = { 0 };
		if (!j)
			why = xstrdup("not valid JSON");
		else if (!cJSON_IsString(id) || !cJSON_IsString(pub) || !cJSON_IsString(split))
			why = xstrdup("id, published and split are required strings");
		else if (market_day_parse(pub->valuestring, strlen(pub->valuestring), &st.pub) < 0)
			why = xasprintf("published \"%s\" is not YYYY-MM-DD", pub->valuestring);
		else if (parse_facts(cJSON_GetObjectItem(j, "facts"), false, &st.facts, &st.nfacts,
				     &why) == 0 &&
			 parse_facts(cJSON_GetObjectItem(j, "speculated"), true, &st.spec, &st.nspec,
				     &why) == 0) {
			st.id = xstrdup(id->valuestring);
			snprintf(st.split, sizeof(st.split), "%s", split->valuestring);
			if (set->n == cap) {
				cap = cap ? cap * 2 : 256;
				set->s = xrealloc(set->s, cap * sizeof(*set->s));
			}
			set->s[set->n++] = st;
		}
		if (why) {
			free(st.facts);
			free(st.spec);
			rc = err_set(err, "%s:%ld: %s", path, line, why);
			free(why);
		}
		cJSON_Delete(j);
	}
	free(data);
	if (rc < 0)
		eval_set_release(set);
	return rc;
}

bool eval_labelled_bank(const char *code)
{
	static const char *const codes[] = { "Fed", "BOJ", "Bundesbank", "BoE", "BdF", "BdI", "BdE",
		"BNB", "DNB", "DKNB", "SNB", "BoC", "RBA", "RBNZ", "CBC", "Norges", NULL };
	for (size_t i = 0; code && codes[i]; i++)
		if (!strcmp(codes[i], code))
			return true;
	return false;
}

int32_t eval_item_local_day(const struct news_item *it, int32_t pub)
{
	const int64_t day_ns = 86400LL * 1000000000LL;
	int64_t ns = it->published_ns;
	int64_t in_day = ((ns % day_ns) + day_ns) % day_ns;
	int32_t utc = (int32_t)((ns - in_day) / day_ns);
	/* The labels' day is the UTC day; a record without a time keeps it. */
	if (!ns || utc != pub)
		return pub;
	return events_local_day(utc, (int)(in_day / 1000000000LL), it->dateline, it->title,
				it->body);
}

size_t eval_story_acts(const struct news_item *it, int32_t pub, enum eval_rules rules,
		       struct eval_fact *out, size_t max)
{
	size_t n = 0;
	if (rules == EVAL_RULES_OLD) {
		struct cb_event ev;
		static const enum ev_kind map[] = {
			[CB_ACTION_NONE] = EV_NONE, [CB_ACTION_HIKE] = EV_HIKE,
			[CB_ACTION_CUT] = EV_CUT, [CB_ACTION_HOLD] = EV_HOLD,
			[CB_ACTION_INTERVENTION] = EV_INTERVENTION,
			[CB_ACTION_STATEMENT] = EV_STATEMENT,
		};
		if (analytics_classify_text(it->title, it->body, &ev) && ev.bank &&
		    eval_labelled_bank(ev.bank) && eval_action_index(map[ev.action]) >= 0 && max > 0) {
			snprintf(out[0].bank, sizeof(out[0].bank), "%s", ev.bank);
			out[0].kind = map[ev.action];
			out[0].day = pub;
			out[0].background = false;
			n = 1;
		}
		return n;
	}
	struct ev_story s;
	events_extract_story(it->title, it->body, it->dateline, eval_item_local_day(it, pub), &s);
	for (size_t i = 0; i < s.n && n < max; i++) {
		if (!events_is_policy_fact(&s.acts[i]) || !eval_labelled_bank(s.acts[i].bank))
			continue;
		snprintf(out[n].bank, sizeof(out[n].bank), "%s", s.acts[i].bank);
		out[n].kind = s.acts[i].kind;
		out[n].day = s.acts[i].day;
		out[n].background = false;
		n++;
	}
	return n;
}

static int cmp_item_id(const void *a, const void *b)
{
	return strcmp((*(const struct news_item *const *)a)->id,
		      (*(const struct news_item *const *)b)->id);
}

struct ev_key {
	char bank[16];
	enum ev_kind kind;
	int32_t day;
	bool background;
};

static void key_add(struct ev_key **v, size_t *n, size_t *cap, const struct eval_fact *f)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].bank, f->bank) && (*v)[i].kind == f->kind &&
		    (*v)[i].day == f->day) {
			(*v)[i].background = (*v)[i].background && f->background;
			return;
		}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	struct ev_key *k = &(*v)[(*n)++];
	snprintf(k->bank, sizeof(k->bank), "%s", f->bank);
	k->kind = f->kind;
	k->day = f->day;
	k->background = f->background;
}

static bool key_match(const struct ev_key *a, const struct ev_key *b)
{
	return !strcmp(a->bank, b->bank) && a->kind == b->kind && abs(a->day - b->day) <= 1;
}

void eval_run(const struct eval_set *set, const struct news_list *archive, const char *split,
	      enum eval_rules rules, struct eval_result *out, size_t *missing)
{
	memset(out, 0, sizeof(*out));
	*missing = 0;
	const struct news_item **idx = xcalloc(archive->n ? archive->n : 1, sizeof(*idx));
	for (size_t i = 0; i < archive->n; i++)
		idx[i] = &archive->items[i];
	qsort(idx, archive->n, sizeof(*idx), cmp_item_id);
	struct ev_key *pred = NULL, *gold = NULL;
	size_t np = 0, cp = 0, ng = 0, cg = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct eval_story *st = &set->s[i];
		if (split && strcmp(st->split, split))
			continue;
		struct news_item key = { .id = st->id };
		const struct news_item *kp = &key;
		const struct news_item **hit = bsearch(&kp, idx, archive->n, sizeof(*idx), cmp_item_id);
		if (!hit) {
			(*missing)++;
			continue;
		}
		out->stories++;
		struct eval_fact got[EVENTS_MAX];
		size_t ngot = eval_story_acts(*hit, st->pub, rules, got, EVENTS_MAX);
		/* By citation. */
		for (size_t g = 0; g < ngot; g++) {
			int a = eval_action_index(got[g].kind);
			bool week = false, bg = false;
			for (size_t f = 0; f < st->nfacts; f++)
				if (!strcmp(st->facts[f].bank, got[g].bank) &&
				    st->facts[f].kind == got[g].kind) {
					week = week || !st->facts[f].background;
					bg = bg || st->facts[f].background;
				}
			if (week) {
				out->cite[a].tp++;
				out->cite[EVAL_ACTIONS].tp++;
			} else if (!bg) {
				out->cite[a].fp++;
				out->cite[EVAL_ACTIONS].fp++;
			}
			key_add(&pred, &np, &cp, &got[g]);
		}
		for (size_t f = 0; f < st->nfacts; f++) {
			key_add(&gold, &ng, &cg, &st->facts[f]);
			if (st->facts[f].background)
				continue;
			bool dup = false;
			for (size_t e = 0; e < f; e++)
				dup = dup || (!st->facts[e].background &&
					      !strcmp(st->facts[e].bank, st->facts[f].bank) &&
					      st->facts[e].kind == st->facts[f].kind);
			if (dup)
				continue;
			out->facts++;
			bool found = false;
			for (size_t g = 0; g < ngot; g++)
				found = found || (!strcmp(got[g].bank, st->facts[f].bank) &&
						  got[g].kind == st->facts[f].kind);
			if (!found) {
				out->cite[eval_action_index(st->facts[f].kind)].fn++;
				out->cite[EVAL_ACTIONS].fn++;
			}
		}
	}
	/* By event. */
	for (size_t p = 0; p < np; p++) {
		bool week = false, bg = false;
		for (size_t g = 0; g < ng; g++)
			if (key_match(&pred[p], &gold[g])) {
				week = week || !gold[g].background;
				bg = bg || gold[g].background;
			}
		int a = eval_action_index(pred[p].kind);
		if (week) {
			out->event[a].tp++;
			out->event[EVAL_ACTIONS].tp++;
		} else if (!bg) {
			out->event[a].fp++;
			out->event[EVAL_ACTIONS].fp++;
		}
	}
	for (size_t g = 0; g < ng; g++) {
		if (gold[g].background)
			continue;
		bool found = false;
		for (size_t p = 0; p < np; p++)
			found = found || key_match(&pred[p], &gold[g]);
		if (!found) {
			out->event[eval_action_index(gold[g].kind)].fn++;
			out->event[EVAL_ACTIONS].fn++;
		}
	}
	free(pred);
	free(gold);
	free(idx);
}
