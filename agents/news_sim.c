/* The news agent's simulated feed (see news_sim in news.h). */
#include "agents/news.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/market.h"
#include "agents/news_collect.h"
#include "core/util.h"
#include "core/banned.h"

/* The simulated feed. */

struct sim_bank {
	const char *name;     /* in a sentence */
	const char *caps;     /* in a headline */
	const char *ccy;      /* the currency, in a sentence */
	const char *rate;     /* the policy rate */
	double level;         /* its level, pct */
	const char *city;
	const char *place;
	bool intervenes;      /* plausible for it to intervene */
};

static const struct sim_bank sim_banks[] = {
	{ "Federal Reserve", "FED", "dollar", "federal funds rate", 5.25,
	  "WASHINGTON", "usa", false },
	{ "Bank of Japan", "BANK OF JAPAN", "yen", "short-term policy rate",
	  0.25, "TOKYO", "japan", true },
	{ "European Central Bank", "ECB", "euro", "deposit rate", 3.75,
	  "FRANKFURT", "euro-zone", false },
	{ "Bank of England", "BANK OF ENGLAND", "sterling", "Bank Rate", 5.00,
	  "LONDON", "uk", false },
	{ "Reserve Bank of Australia", "RBA", "Australian dollar",
	  "cash rate", 4.35, "SYDNEY", "australia", false },
	{ "Reserve Bank of New Zealand", "RBNZ", "New Zealand dollar",
	  "official cash rate", 5.50, "WELLINGTON", "new-zealand", false },
	{ "Swiss National Bank", "SNB", "Swiss franc", "policy rate", 1.50,
	  "ZURICH", "switzerland", true },
	{ "Bank of Canada", "BANK OF CANADA", "Canadian dollar",
	  "overnight rate", 4.75, "OTTAWA", "canada", false },
	{ "People's Bank of China", "PBOC", "yuan",
	  "one-year loan prime rate", 3.45, "BEIJING", "china", true },
};

static const char *const sim_cross[][3] = {
	/* currency in a sentence, in a headline, city */
	{ "yen", "YEN", "TOKYO" },
	{ "euro", "EURO", "FRANKFURT" },
	{ "sterling", "STERLING", "LONDON" },
	{ "Swiss franc", "SWISS FRANC", "ZURICH" },
	{ "Australian dollar", "AUSTRALIAN DOLLAR", "SYDNEY" },
	{ "yuan", "YUAN", "SHANGHAI" },
};

static uint64_t sim_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static size_t sim_pick(uint64_t *state, size_t n)
{
	return (size_t)(sim_next(state) % n);
}

static char *sim_upper(const char *s)
{
	char *u = xstrdup(s);
	for (char *c = u; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return u;
}

/* Writes one story of the given kind into it. */
static void sim_story(uint64_t *st, int32_t day, struct news_item *it)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	const struct sim_bank *b = &sim_banks[sim_pick(st, ARRAY_SIZE(sim_banks))];
	unsigned roll = (unsigned)sim_pick(st, 100);
	const char *city = b->city, *topic = "money-fx", *place = b->place;
	char *rate_caps = sim_upper(b->rate);
	double step = 0.25;
	if (roll < 12) {
		it->title = xasprintf("%s LEAVES %s UNCHANGED AT %.2f PCT",
				      b->caps, rate_caps, b->level);
		it->body = xasprintf(
			"The %s left its %s unchanged at %.2f pct, in line with "
			"market expectations, and said it would watch incoming "
			"data closely.\n    The %s was little changed after the "
			"decision, dealers said.",
			b->name, b->rate, b->level, b->ccy);
		topic = "interest";
	} else if (roll < 24) {
		bool hike = roll < 18;
		double r = b->level + (hike ? step : -step);
		const char *other = strcmp(b->ccy, "dollar") ? "dollar" : "yen";
		it->title = xasprintf("%s %s %s TO %.2f PCT", b->caps,
				      hike ? "RAISES" : "CUTS", rate_caps, r);
		it->body = xasprintf(
			"The %s %s its %s by 25 basis points to %.2f pct, %s."
			"\n    The %s %s against the %s after the announcement, "
			"dealers said.",
			b->name, hike ? "raised" : "cut", b->rate, r,
			hike ? "citing persistent inflation" :
			       "saying that growth had slowed",
			b->ccy, hike ? "firmed" : "weakened", other);
		topic = "interest";
	} else if (roll < 30 && b->intervenes) {
		char *ccy_caps = sim_upper(b->ccy);
		it->title = xasprintf("%s INTERVENES TO SUPPORT %s, DEALERS SAY",
				      b->caps, ccy_caps);
		it->body = xasprintf(
			"The %s intervened in the foreign exchange market to "
			"support the %s, buying %s and selling dollars, dealers "
			"said.\n    The %s recovered after the intervention but "
			"dealers said underlying sentiment remained cautious.",
			b->name, b->ccy, b->ccy, b->ccy);
		free(ccy_caps);
	} else if (roll < 55) {
		it->title = xasprintf("%s GOVERNOR SAYS INFLATION RISKS BALANCED",
				      b->caps);
		it->body = xasprintf(
			"The governor of the %s said in a speech that risks to "
			"the inflation outlook were broadly balanced and that "
			"policy was well placed.\n    The %s was steady in "
			"quiet trading.",
			b->name, b->ccy);
		topic = "interest";
	} else if (roll < 60) {
		it->title = xstrdup("G7 FINANCE MINISTERS REAFFIRM EXCHANGE RATE COMMITMENTS");
		it->body = xstrdup(
			"Group of Seven finance ministers said excessive "
			"volatility and disorderly movements in exchange rates "
			"were undesirable and that they would consult closely "
			"on currency markets.");
		city = "WASHINGTON";
		place = "usa";
	} else {
		const char *const *x = sim_cross[sim_pick(st, ARRAY_SIZE(sim_cross))];
		bool up = sim_pick(st, 2);
		it->title = xasprintf("DOLLAR %s AGAINST %s IN %s",
				      up ? "FIRMER" : "WEAKER", x[1], x[2]);
		it->body = xasprintf(
			"The dollar %s against the %s in %s trading as "
			"investors reassessed the interest rate outlook, "
			"dealers said.",
			up ? "rose" : "fell", x[0],
			up ? "active" : "nervous");
		city = x[2];
		place = "usa";
	}
	free(rate_caps);
	int y, m, d;
	market_day_to_ymd(day, &y, &m, &d);
	it->dateline = xasprintf("%s, %.3s %d -", city, months + 3 * (m - 1), d);
	it->source = xstrdup("simulated");
	it->url = xstrdup("");
	news_strv_add(&it->topics, &it->ntopics, topic);
	news_strv_add(&it->places, &it->nplaces, place);
}

int news_sim(int64_t start_ns, int64_t end_ns, uint64_t seed,
	     struct news_list *out, char **err)
{
	struct news_collect c;
	news_collect_init(&c, out, start_ns, end_ns);
	if (start_ns > end_ns)
		return err_set(err, "simulated news: start after end");
	if (end_ns - start_ns > INT64_C(3660) * 86400 * NS_PER_S)
		return err_set(err, "simulated news: over ten years asked for");
	if (start_ns == end_ns) {
		news_collect_finish(&c);
		return 0;
	}
	int32_t first = market_day_from_ns(start_ns);
	int32_t last = market_day_from_ns(end_ns - 1);
	for (int32_t day = first; day <= last; day++) {
		if (market_weekday(day) > 5)
			continue;
		uint64_t st = seed ^ ((uint64_t)(uint32_t)day *
				      UINT64_C(0xD1B54A32D192ED03));
		size_t n = 3 + sim_pick(&st, 4);
		for (size_t k = 0; k < n; k++) {
			struct news_item it;
			memset(&it, 0, sizeof(it));
			int64_t minute = (int64_t)sim_pick(&st, 22 * 60);
			it.published_ns = ((int64_t)day * 86400 + minute * 60) *
					  NS_PER_S;
			it.id = xasprintf("sim-%016llx-%d-%zu",
					  (unsigned long long)seed, (int)day, k);
			sim_story(&st, day, &it);
			news_collect_item(&c, &it);
		}
	}
	news_collect_finish(&c);
	return 0;
}
