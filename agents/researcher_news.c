/* The research agents' news part (agents/researcher.c has the rest):
 * the week's stories read once per process (classification, events,
 * sentiment), a news task's findings (acts, tone) and its raw output. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/events.h"
#include "agents/data_tools.h"
#include "agents/researcher_priv.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* The most acts one news task reports as findings (see below). */
#define NEWS_ACT_FINDINGS 40

/* A story's classification and sentiment, computed once per process: the
 * news tasks of every pair read the same stories of the week. Keyed by the
 * story id and a hash of its text (two sources may reuse an id). */
struct story_memo {
	uint64_t key;
	struct ev_story ev;
	struct fx_sentiment sent;
};

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct story_memo *memo;
static size_t memo_n, memo_cap;

static uint64_t fnv_add(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

static void memo_insert(const struct story_memo *m)
{
	size_t i = m->key & (memo_cap - 1);
	while (memo[i].key)
		i = (i + 1) & (memo_cap - 1);
	memo[i] = *m;
	memo_n++;
}

static void story_analyse(const char *id, const char *title, const char *body,
			  const char *dateline, int32_t pub_day, struct story_memo *out)
{
	char dbuf[16];
	snprintf(dbuf, sizeof(dbuf), "%d", (int)pub_day);
	uint64_t key = fnv_add(fnv_add(fnv_add(fnv_add(fnv_add(1469598103934665603ULL, id), title),
					       body), dateline), dbuf);
	key |= 1; /* 0 marks an empty slot */
	pthread_mutex_lock(&memo_lock);
	for (size_t i = memo_cap ? key & (memo_cap - 1) : 0; memo_cap && memo[i].key;
	     i = (i + 1) & (memo_cap - 1)) {
		if (memo[i].key == key) {
			*out = memo[i];
			pthread_mutex_unlock(&memo_lock);
			return;
		}
	}
	pthread_mutex_unlock(&memo_lock);
	struct story_memo m = { .key = key };
	events_extract_story(title, body, dateline, pub_day, &m.ev);
	/* One story, counted once for each currency it discusses (title and
	 * body together), so a currency's "stories" are the stories about it. */
	analytics_sentiment_init(&m.sent);
	analytics_sentiment_add_story(&m.sent, title, body);
	pthread_mutex_lock(&memo_lock);
	if ((memo_n + 1) * 2 > memo_cap) {
		struct story_memo *old = memo;
		size_t oldcap = memo_cap;
		memo_cap = memo_cap ? memo_cap * 2 : 1024;
		memo = xcalloc(memo_cap, sizeof(*memo));
		memo_n = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].key)
				memo_insert(&old[i]);
		free(old);
	}
	bool have = false;
	for (size_t i = m.key & (memo_cap - 1); memo[i].key; i = (i + 1) & (memo_cap - 1))
		have = have || memo[i].key == m.key;
	if (!have)
		memo_insert(&m);
	pthread_mutex_unlock(&memo_lock);
	*out = m;
}

/* Adds one story's counts to a running sentiment. */
static void sentiment_merge(struct fx_sentiment *into, const struct fx_sentiment *one)
{
	for (size_t i = 0; i < ANALYTICS_NCCY; i++) {
		struct ccy_sentiment *c = &into->c[i];
		c->pos += one->c[i].pos;
		c->neg += one->c[i].neg;
		c->stories += one->c[i].stories;
		unsigned n = c->pos + c->neg;
		c->score = n ? ((double)c->pos - (double)c->neg) / n : 0;
	}
	into->ntexts += one->ntexts;
}

/* Stories cited for each side of a tone finding. */
#define SENTIMENT_CITED 6
/* Under this move (in %) the pair is flat: it neither bears out nor
 * contradicts a tone. */
#define TONE_FLAT_PCT 0.10

/* The pair's tone against its move over the window: raw's "price_check"
 * and, when stories discuss both currencies, the finding "<code>-S1". A
 * tone resting on one side only (no story about the other currency: the
 * Australian dollar in a week of dollar-yen news) is no reading of the
 * pair: the price check says which side it rests on, and there is no
 * finding for the validator to confirm. Takes nothing; side_ids are the
 * ids of the stories discussing each side (copied). */
static void tone_check(const char *pair, const char *code, const char *d0, const char *d1,
		       const struct ccy_sentiment *sb, const struct ccy_sentiment *sq,
		       double change, cJSON *const side_ids[2], cJSON *raw, cJSON *findings)
{
	cJSON *pc = cJSON_AddObjectToObject(raw, "price_check");
	cJSON_AddNumberToObject(pc, "change_pct", round(change * 10000) / 10000);
	if (!sb->stories || !sq->stories) {
		const char *only = sb->stories ? sb->ccy : sq->stories ? sq->ccy : NULL;
		if (only)
			cJSON_AddStringToObject(pc, "tone_rests_on", only);
		else
			cJSON_AddNullToObject(pc, "tone_rests_on");
		return;
	}
	/* The pair rises when the base firms against the quote. */
	double tone = sb->score - sq->score;
	bool flat = fabs(change) < TONE_FLAT_PCT, neutral = fabs(tone) < 0.1;
	bool agrees = flat || neutral || (tone > 0) == (change > 0);
	cJSON_AddNumberToObject(pc, "tone", round(tone * 100) / 100);
	cJSON_AddBoolToObject(pc, "consistent", agrees);
	char id[64];
	snprintf(id, sizeof(id), "%s-S1", code);
	const char *how = flat ? "too small a move to bear out or contradict the tone" :
			  neutral ? "which a neutral tone neither bears out nor contradicts" :
			  agrees ? "consistent with the tone" : "against the tone";
	char *text = xasprintf("News tone: %s %+.2f over %u %s, %s %+.2f over %u %s; %s moved "
			       "%+.2f%%, %s.", sb->ccy, sb->score, sb->stories,
			       sb->stories == 1 ? "story" : "stories", sq->ccy, sq->score,
			       sq->stories, sq->stories == 1 ? "story" : "stories", pair, change,
			       how);
	cJSON *data = cJSON_CreateObject();
	cJSON_AddNumberToObject(data, "change_pct", change);
	cJSON_AddNumberToObject(data, "tone", tone);
	cJSON_AddBoolToObject(data, "consistent", agrees);
	cJSON_AddNumberToObject(data, "base_stories", sb->stories);
	cJSON_AddNumberToObject(data, "quote_stories", sq->stories);
	cJSON_AddStringToObject(data, "window_start", d0);
	cJSON_AddStringToObject(data, "window_end", d1);
	cJSON *ids = cJSON_CreateArray();
	const cJSON *x, *y;
	for (int i = 0; i < 2; i++)
		cJSON_ArrayForEach(x, side_ids[i]) {
			bool have = false;
			cJSON_ArrayForEach(y, ids)
				have = have || !strcmp(x->valuestring, y->valuestring);
			if (!have)
				cJSON_AddItemToArray(ids, cJSON_CreateString(x->valuestring));
		}
	researcher_add_finding(findings, id, "sentiment", pair, text, ids, data);
	free(text);
}

/* News: central-bank and policy events touching the pair's currencies,
 * sentiment per currency, and a price check from the market data. */
int researcher_work_news(struct agent *a, const char *pair, int32_t ws, int32_t we,
		     cJSON *raw, cJSON *findings, cJSON *sources, cJSON *warnings,
		     int *points, double *confidence, char **err)
{
	char d0[16], d1[16], code[16], b[4], q[4];
	market_day_format(ws, d0, sizeof(d0));
	market_day_format(we, d1, sizeof(d1));
	researcher_pair_code(pair, code, sizeof(code));
	data_pair_ccys(pair, b, q);
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "start", d0);
	cJSON_AddStringToObject(args, "end", d1);
	if (!strncmp(a->env->news_source, "jsonl:", 6)) {
		cJSON *t = cJSON_AddArrayToObject(args, "topics");
		cJSON_AddItemToArray(t, cJSON_CreateString("money-fx"));
		cJSON_AddItemToArray(t, cJSON_CreateString("interest"));
	}
	cJSON *res;
	if (data_call(a, "news_search", args, &res, err) < 0)
		return -1;
	cJSON_AddItemToArray(sources, cJSON_CreateString(a->env->news_source));
	struct fx_sentiment sent;
	analytics_sentiment_init(&sent);
	cJSON *events = cJSON_AddArrayToObject(raw, "events");
	/* The stories that discuss each side, cited by the tone finding. */
	cJSON *side_ids[2] = { cJSON_CreateArray(), cJSON_CreateArray() };
	int nstories = 0;
	const cJSON *story;
	cJSON_ArrayForEach(story, cJSON_GetObjectItem(res, "stories")) {
		nstories++;
		const char *title = jstr(story, "title"), *body = jstr(story, "body");
		const char *sid = jstr(story, "id"), *at = jstr(story, "published_at");
		/* The day the story's "today" means: its dateline's, or a
		 * Tokyo flash's of the UTC evening before. */
		bool dated;
		int32_t pub_day = events_local_day_iso(at, jstr(story, "dateline"), title, body, &dated);
		struct story_memo sm;
		story_analyse(sid, title, body, jstr(story, "dateline"), pub_day, &sm);
		const struct ccy_sentiment *side[2] = { analytics_sentiment_get(&sm.sent, b),
							 analytics_sentiment_get(&sm.sent, q) };
		if ((side[0] && side[0]->stories) || (side[1] && side[1]->stories))
			sentiment_merge(&sent, &sm.sent);
		for (int i = 0; i < 2; i++)
			if (side[i] && side[i]->stories && sid &&
			    cJSON_GetArraySize(side_ids[i]) < SENTIMENT_CITED)
				cJSON_AddItemToArray(side_ids[i], cJSON_CreateString(sid));
		if (!sid)
			continue;
		/* Events: central-bank acts the story reports as done, in the
		 * week, concerning one of the pair's currencies; one event per
		 * bank, action and day, citing all its stories. */
		for (size_t k = 0; k < sm.ev.n; k++) {
			const struct ev_act *ev = &sm.ev.acts[k];
			/* In the window: a story's day is its local day, so a
			 * day's slack before it is no longer needed (an act a
			 * week before a story of the window's end, "recent", is
			 * the week before's). */
			if (!events_is_policy_fact(ev) || ev->day < ws || ev->day > we ||
			    !events_act_touches(ev, b, q))
				continue;
			char day[16];
			market_day_format(ev->day, day, sizeof(day));
			const char *act = events_kind_name(ev->kind);
			cJSON *e = NULL, *it;
			cJSON_ArrayForEach(it, events)
				if (!strcmp(jstr(it, "bank"), ev->bank) && !strcmp(jstr(it, "action"), act) &&
				    !strcmp(jstr(it, "date"), day))
					e = it;
			if (!e) {
				char *t = events_decode_entities(title);
				e = cJSON_CreateObject();
				cJSON_AddStringToObject(e, "bank", ev->bank);
				cJSON_AddStringToObject(e, "action", act);
				cJSON_AddStringToObject(e, "date", day);
				cJSON_AddStringToObject(e, "title", t);
				cJSON_AddArrayToObject(e, "sources");
				cJSON *evd = cJSON_AddArrayToObject(e, "evidence");
				cJSON_AddItemToArray(evd, cJSON_CreateString(ev->evidence));
				cJSON *cc = cJSON_AddArrayToObject(e, "currencies");
				for (size_t c = 0; c < ev->nccy; c++)
					cJSON_AddItemToArray(cc, cJSON_CreateString(ev->ccys[c]));
				cJSON_AddItemToArray(events, e);
				free(t);
			}
			cJSON *src = cJSON_GetObjectItem(e, "sources");
			bool have = false;
			const cJSON *x;
			cJSON_ArrayForEach(x, src)
				have = have || (cJSON_IsString(x) && !strcmp(x->valuestring, sid));
			if (!have)
				cJSON_AddItemToArray(src, cJSON_CreateString(sid));
		}
	}
	*points = nstories;
	/* Findings: one per act, up to NEWS_ACT_FINDINGS (a busy week reports
	 * ten to twenty acts a pair; each must be validated, not only the
	 * first days': at 8 the named week's last day went unvalidated). */
	int k = 0;
	cJSON *e;
	cJSON_ArrayForEach(e, events) {
		const char *act = jstr(e, "action");
		int n = cJSON_GetArraySize(cJSON_GetObjectItem(e, "sources"));
		char id[64];
		snprintf(id, sizeof(id), "%s-N%d", code, ++k);
		/* The words that report the act, then the headline they are
		 * under, unless the headline is those words: "BUNDESBANK BUYS
		 * DOLLARS" alone does not show the Bank of England's act. */
		const cJSON *ev0 = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "evidence"), 0);
		const char *said = cJSON_IsString(ev0) ? ev0->valuestring : NULL;
		const char *title = jstr(e, "title") ? jstr(e, "title") : "";
		char *text = said && strcasecmp(said, title) ?
			xasprintf("%s %s on %s: \"%s\" (%s; %d stor%s).", jstr(e, "bank"), act,
				  jstr(e, "date"), said, title, n, n == 1 ? "y" : "ies") :
			xasprintf("%s %s on %s: \"%s\" (%d stor%s).", jstr(e, "bank"), act,
				  jstr(e, "date"), title, n, n == 1 ? "y" : "ies");
		cJSON *data = cJSON_CreateObject();
		cJSON_AddStringToObject(data, "bank", jstr(e, "bank"));
		cJSON_AddStringToObject(data, "action", act);
		cJSON_AddStringToObject(data, "date", jstr(e, "date"));
		cJSON_AddStringToObject(data, "title", jstr(e, "title"));
		cJSON_AddItemToObject(data, "currencies",
				      cJSON_Duplicate(cJSON_GetObjectItem(e, "currencies"), 1));
		cJSON_AddStringToObject(data, "window_start", d0);
		cJSON_AddStringToObject(data, "window_end", d1);
		researcher_add_finding(findings, id, "news", pair, text,
			    cJSON_Duplicate(cJSON_GetObjectItem(e, "sources"), 1), data);
		free(text);
		if (k >= NEWS_ACT_FINDINGS)
			break;
	}
	cJSON *so = cJSON_AddObjectToObject(raw, "sentiment");
	const char *ccys[2] = { b, q };
	for (int i = 0; i < 2; i++) {
		const struct ccy_sentiment *cs = analytics_sentiment_get(&sent, ccys[i]);
		if (!cs)
			continue;
		cJSON *o = cJSON_AddObjectToObject(so, ccys[i]);
		cJSON_AddNumberToObject(o, "score", round(cs->score * 100) / 100);
		cJSON_AddNumberToObject(o, "up", cs->pos);
		cJSON_AddNumberToObject(o, "down", cs->neg);
		cJSON_AddNumberToObject(o, "stories", cs->stories);
	}
	/* Price check: does the tone agree with the move? */
	double change = NAN;
	cJSON *pres = NULL;
	char *perr = NULL;
	if (data_fx_rates(a, pair, d0, d1, &pres, &perr) == 0) {
		const cJSON *pts = cJSON_GetObjectItem(pres, "points");
		int n = cJSON_GetArraySize(pts);
		if (n >= 2) {
			double c0 = cJSON_GetArrayItem(cJSON_GetArrayItem(pts, 0), 1)->valuedouble;
			double c1 = cJSON_GetArrayItem(cJSON_GetArrayItem(pts, n - 1), 1)->valuedouble;
			change = (c1 / c0 - 1) * 100;
		}
	} else {
		cJSON_AddItemToArray(warnings, cJSON_CreateString(perr ? perr : "no price data"));
	}
	free(perr);
	cJSON_Delete(pres);
	const struct ccy_sentiment *sb = analytics_sentiment_get(&sent, b);
	const struct ccy_sentiment *sq = analytics_sentiment_get(&sent, q);
	if (sb && sq && isfinite(change))
		tone_check(pair, code, d0, d1, sb, sq, change, side_ids, raw, findings);
	cJSON_Delete(side_ids[0]);
	cJSON_Delete(side_ids[1]);
	if (nstories == 0)
		cJSON_AddItemToArray(warnings, cJSON_CreateString("no stories in the window"));
	*confidence = nstories >= 10 ? 0.85 : nstories > 0 ? 0.6 : 0.3;
	cJSON_Delete(res);
	return 0;
}
