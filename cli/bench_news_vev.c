/* madf bench news: the validator's verdicts on the extractor's acts (see
 * bench_news_vev.h). */
#include "cli/bench_news_vev.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/events_eval.h"
#include "agents/market.h"
#include "agents/validator_evidence.h"
#include "agents/workflow.h"
#include "core/banned.h"
#include "core/util.h"

#define BNV_MAX_PAIRS 32
#define BNV_DAY_NS 86400000000000LL
#define BNV_THREADS 4   /* readers of the stories at most */

/* The FRED file, read once; each pair parsed from it when first asked. */
struct bnv_market {
	char *data;
	size_t len;
	const char *name;
	struct fx_series s[BNV_MAX_PAIRS];
	size_t n;
};

static const struct fx_series *market_pair(struct bnv_market *m, const char *pair)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->s[i].pair, pair))
			return &m->s[i];
	if (m->n == BNV_MAX_PAIRS)
		return NULL;
	char *err = NULL;
	struct fx_series *s = &m->s[m->n];
	if (market_parse_csv(m->data, m->len, m->name, &pair, 1, s, &err) < 0) {
		/* A currency the file lacks: no prices, as the validator gets. */
		free(err);
		memset(s, 0, sizeof(*s));
	}
	snprintf(s->pair, sizeof(s->pair), "%s", pair);
	m->n++;
	return s;
}

/* vev_prices_fn: the closes of pair from ten days before day to three
 * after (the validator's check reads no further). */
static size_t market_prices(void *ctx, const char *pair, int32_t day, struct vev_point **out)
{
	const struct fx_series *s = market_pair(ctx, pair);
	*out = NULL;
	if (!s || !s->n)
		return 0;
	size_t i = market_series_lower_bound(s, day - 10), n = 0;
	*out = xcalloc(s->n - i + 1, sizeof(**out));
	for (; i < s->n && s->days[i] <= day + 3; i++)
		(*out)[n++] = (struct vev_point){ s->days[i], s->close[i] };
	return n;
}

/* One act of a split and the split's stories that report it. */
struct bnv_act {
	const char *split;
	char bank[16];
	enum ev_kind kind;
	int32_t day;
	char pair[8];
	const char **cited;
	size_t *at;            /* the cited stories' places in the archive */
	size_t ncited;
	int cls; /* 1 right, 0 wrong, -1 background only */
};

static int32_t item_day(const struct news_item *it)
{
	int64_t ns = it->published_ns;
	return (int32_t)(ns >= 0 ? ns / BNV_DAY_NS : -((-ns + BNV_DAY_NS - 1) / BNV_DAY_NS));
}

static int cmp_item_id(const void *a, const void *b)
{
	return strcmp((*(const struct news_item *const *)a)->id,
		      (*(const struct news_item *const *)b)->id);
}

static int cmp_act_day(const void *a, const void *b)
{
	const struct bnv_act *x = a, *y = b;
	return x->day < y->day ? -1 : x->day > y->day;
}

/* The pair the weekly workflow's research would report the act under: the
 * first of its pairs the act concerns; else the bank's currency against
 * the dollar, in market convention. */
static void act_pair(const struct ev_act *ev, char pair[8])
{
	for (size_t i = 0; i < wf_default_npairs; i++) {
		char b[4], q[4];
		snprintf(b, sizeof(b), "%.3s", wf_default_pairs[i]);
		snprintf(q, sizeof(q), "%.3s", wf_default_pairs[i] + 4);
		if (events_act_touches(ev, b, q)) {
			snprintf(pair, 8, "%s", wf_default_pairs[i]);
			return;
		}
	}
	const char *h = events_bank_ccy(ev->bank);
	if (!h || !strcmp(h, "USD"))
		h = "JPY";
	bool base = !strcmp(h, "GBP") || !strcmp(h, "AUD") || !strcmp(h, "NZD") ||
		    !strcmp(h, "EUR") || !strcmp(h, "IEP");
	snprintf(pair, 8, base ? "%s/USD" : "USD/%s", h);
}

static struct bnv_act *act_get(struct bnv_act **v, size_t *n, size_t *cap, const char *split,
			       const struct ev_act *ev)
{
	for (size_t i = 0; i < *n; i++) {
		struct bnv_act *a = &(*v)[i];
		if (a->split == split && !strcmp(a->bank, ev->bank) && a->kind == ev->kind &&
		    a->day == ev->day)
			return a;
	}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 128;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	struct bnv_act *a = &(*v)[(*n)++];
	memset(a, 0, sizeof(*a));
	a->split = split;
	snprintf(a->bank, sizeof(a->bank), "%s", ev->bank);
	a->kind = ev->kind;
	a->day = ev->day;
	act_pair(ev, a->pair);
	return a;
}

/* Right, wrong or background-only against the split's labelled facts (as
 * the bench's "by event" measure: bank and action equal, one day off at
 * most). */
static int act_class(const struct eval_set *set, const struct bnv_act *a)
{
	bool week = false, bg = false;
	for (size_t i = 0; i < set->n; i++) {
		const struct eval_story *st = &set->s[i];
		if (strcmp(st->split, a->split))
			continue;
		for (size_t f = 0; f < st->nfacts; f++) {
			const struct eval_fact *x = &st->facts[f];
			if (!strcmp(x->bank, a->bank) && x->kind == a->kind &&
			    abs(x->day - a->day) <= 1) {
				week = week || !x->background;
				bg = bg || x->background;
			}
		}
	}
	return week ? 1 : bg ? -1 : 0;
}

/* The acts of the labelled stories of the splits, sorted by day. */
static size_t acts_collect(const struct eval_set *set, const struct news_list *arch,
			   const char *const *splits, size_t nsplits, struct bnv_act **out)
{
	const struct news_item **idx = xcalloc(arch->n ? arch->n : 1, sizeof(*idx));
	for (size_t i = 0; i < arch->n; i++)
		idx[i] = &arch->items[i];
	qsort(idx, arch->n, sizeof(*idx), cmp_item_id);
	struct ev_story *ev = xmalloc(sizeof(*ev));
	struct bnv_act *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct eval_story *st = &set->s[i];
		const char *split = NULL;
		for (size_t k = 0; k < nsplits && !split; k++)
			if (!strcmp(st->split, splits[k]))
				split = splits[k];
		struct news_item key = { .id = st->id };
		const struct news_item *kp = &key;
		const struct news_item **hit = split ? bsearch(&kp, idx, arch->n, sizeof(*idx),
							       cmp_item_id) : NULL;
		if (!hit)
			continue;
		events_extract_story((*hit)->title, (*hit)->body, (*hit)->dateline,
				     eval_item_local_day(*hit, st->pub), ev);
		for (size_t k = 0; k < ev->n; k++) {
			if (!events_is_policy_fact(&ev->acts[k]) || !eval_labelled_bank(ev->acts[k].bank))
				continue;
			struct bnv_act *a = act_get(&v, &n, &cap, split, &ev->acts[k]);
			a->cited = xrealloc(a->cited, (a->ncited + 1) * sizeof(*a->cited));
			a->at = xrealloc(a->at, (a->ncited + 1) * sizeof(*a->at));
			a->at[a->ncited] = (size_t)(*hit - arch->items);
			a->cited[a->ncited++] = (*hit)->id;
		}
	}
	free(ev);
	free(idx);
	for (size_t i = 0; i < n; i++)
		v[i].cls = act_class(set, &v[i]);
	if (n)
		qsort(v, n, sizeof(*v), cmp_act_day);
	*out = v;
	return n;
}

/* The acts of the archive's stories the validator's check reads, read in
 * parallel: most stories hold none (they share one empty reading), so
 * the readings kept are few. */
struct bnv_read {
	const struct news_list *arch;
	const int32_t *days;
	const bool *need;
	struct ev_story **evs;
	struct ev_story *empty;
	atomic_size_t next;
};

static void *read_worker(void *arg)
{
	struct bnv_read *r = arg;
	struct ev_story *e = xmalloc(sizeof(*e));
	for (size_t k; (k = atomic_fetch_add(&r->next, 1)) < r->arch->n;) {
		if (!r->need[k])
			continue;
		const struct news_item *it = &r->arch->items[k];
		events_extract_story(it->title, it->body, it->dateline,
				     eval_item_local_day(it, r->days[k]), e);
		if (e->n) {
			r->evs[k] = e;
			e = xmalloc(sizeof(*e));
		} else {
			r->evs[k] = r->empty;
		}
	}
	free(e);
	return NULL;
}

/* The first story published on or after day (days ascending). */
static size_t story_at(const int32_t *days, size_t n, int32_t day)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (days[mid] < day)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct vev_story story_of(const struct news_list *arch, const int32_t *days,
				 struct ev_story *const *evs, size_t k)
{
	const struct news_item *it = &arch->items[k];
	return (struct vev_story){ .id = it->id, .title = it->title, .body = it->body,
				   .dateline = it->dateline, .pub_day = days[k],
				   .local_day = eval_item_local_day(it, days[k]), .ev = evs[k] };
}

int bench_news_vev_run(const struct eval_set *set, const struct news_list *arch,
		       const char *market_path, const char *const *splits, size_t nsplits,
		       const char *list, struct bnv_table *out, char **err)
{
	memset(out, 0, nsplits * sizeof(*out));
	struct bnv_market m = { .name = market_path };
	if (util_read_file(market_path, MARKET_FILE_MAX, &m.data, &m.len, err) < 0)
		return err_prefix(err, "the market data %s (--market)", market_path);
	/* A malformed file is an error, not a validator without prices. */
	const char *probe = "USD/JPY";
	struct fx_series ps;
	if (market_parse_csv(m.data, m.len, market_path, &probe, 1, &ps, err) < 0) {
		free(m.data);
		return -1;
	}
	market_series_release(&ps);
	struct bnv_act *acts = NULL;
	size_t nacts = acts_collect(set, arch, splits, nsplits, &acts);
	/* The archive's stories around each act, each read once. */
	int32_t *days = xcalloc(arch->n + 1, sizeof(*days));
	for (size_t i = 0; i < arch->n; i++)
		days[i] = item_day(&arch->items[i]);
	/* The stories of the days the acts are judged on: a hike or cut on
	 * those of the days before too (an earlier opposite act), the others
	 * on those of the day before to the day after next. */
	bool *need = xcalloc(arch->n + 1, sizeof(*need));
	for (size_t i = 0; i < nacts; i++) {
		bool rate = acts[i].kind == EV_HIKE || acts[i].kind == EV_CUT;
		int32_t from = acts[i].day - (rate ? VEV_PLAUSIBLE_DAYS + 1 : 1);
		for (size_t k = story_at(days, arch->n, from);
		     k < arch->n && days[k] <= acts[i].day + 2; k++)
			need[k] = true;
		for (size_t k = 0; k < acts[i].ncited; k++)
			need[acts[i].at[k]] = true;
	}
	struct ev_story *empty = xcalloc(1, sizeof(*empty));
	struct ev_story **evs = xcalloc(arch->n + 1, sizeof(*evs));
	struct bnv_read rd = { .arch = arch, .days = days, .need = need, .evs = evs,
			       .empty = empty };
	atomic_init(&rd.next, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[BNV_THREADS];
	size_t nth = 0;
	for (; nth + 1 < (size_t)(ncpu > BNV_THREADS ? BNV_THREADS : ncpu > 1 ? ncpu : 1); nth++)
		if (pthread_create(&th[nth], NULL, read_worker, &rd) != 0)
			break;
	read_worker(&rd);
	for (size_t t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	struct vev_story *st = xcalloc(arch->n + 1, sizeof(*st));
	for (size_t i = 0; i < nacts; i++) {
		struct bnv_act *a = &acts[i];
		bool rate = a->kind == EV_HIKE || a->kind == EV_CUT;
		int32_t from = a->day - (rate ? VEV_PLAUSIBLE_DAYS + 1 : 1), to = a->day + 2;
		/* Those of the window, then the cited ones outside it (as the
		 * validator adds the stories it fetched by id). */
		size_t n = 0, lo = story_at(days, arch->n, from), hi = lo;
		for (; hi < arch->n && days[hi] <= to; hi++)
			st[n++] = story_of(arch, days, evs, hi);
		for (size_t k = 0; k < a->ncited; k++)
			if (a->at[k] < lo || a->at[k] >= hi)
				st[n++] = story_of(arch, days, evs, a->at[k]);
		struct vev_claim c = { .bank = a->bank, .kind = a->kind, .day = a->day,
				       .pair = a->pair, .cited = a->cited, .ncited = a->ncited };
		struct vev_result r;
		char own[8];
		vev_check(&c, st, n, market_prices, &m, own, &r);
		size_t s = 0;
		while (s < nsplits && splits[s] != a->split)
			s++;
		if (a->cls < 0)
			out[s].background++;
		else if (a->cls)
			out[s].right[r.verdict]++;
		else
			out[s].wrong[r.verdict]++;
		if (list && !strcmp(list, a->split)) {
			char day[16];
			market_day_format(a->day, day, sizeof(day));
			char *why = vev_reason(&c, &r);
			char *t = util_sanitize(why, strlen(why), false);
			printf("  %s %s %s %s %s: %s: %s\n",
			       a->cls < 0 ? "background" : a->cls ? "right" : "wrong", a->bank,
			       events_kind_name(a->kind), day, c.pair, vev_verdict_name(r.verdict), t);
			free(t);
			free(why);
		}
	}
	for (size_t k = 0; k < arch->n; k++)
		if (evs[k] != empty)
			free(evs[k]);
	free(evs);
	free(empty);
	free(need);
	free(st);
	free(days);
	for (size_t i = 0; i < nacts; i++) {
		free(acts[i].cited);
		free(acts[i].at);
	}
	free(acts);
	market_series_release_all(m.s, m.n);
	free(m.data);
	return 0;
}
