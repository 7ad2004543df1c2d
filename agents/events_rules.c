/* Readings of the event extractor that need more than one word test (see
 * events.h for the rules and events_text.h for each function). */
#include "agents/events_text.h"

#include <stdlib.h>

#include "agents/events_words.h"
#include "core/banned.h"
#include "core/util.h"

/* Adjectives of the countries whose central banks the extractor knows. */
static const struct {
	const char *w, *code;
} country_adj[] = {
	{ "danish", "DKNB" }, { "dutch", "DNB" }, { "swiss", "SNB" }, { "japanese", "BOJ" },
	{ "german", "Bundesbank" }, { "french", "BdF" }, { "italian", "BdI" },
	{ "spanish", "BdE" }, { "belgian", "BNB" }, { "canadian", "BoC" },
	{ "australian", "RBA" }, { "british", "BoE" }, { "norwegian", "Norges" },
	{ "swedish", "Riksbank" }, { "taiwanese", "CBC" },
};

const char *events_title_country(const char *title)
{
	if (!title || !*title)
		return NULL;
	struct clause *c = xcalloc(1, sizeof(*c));
	c->text = title;
	c->len = strlen(title);
	c->title = true;
	events_clause_words(c);
	const char *found = NULL;
	bool several = false;
	for (size_t i = 0; i < c->n; i++) {
		const char *code = NULL;
		for (size_t a = 0; a < events_nactors && !code; a++)
			if (events_actors[a].type == A_COUNTRY &&
			    events_match_phrase(c, i, events_actors[a].phrase))
				code = events_actors[a].code;
		for (size_t a = 0; a < ARRAY_SIZE(country_adj) && !code; a++)
			if (is(c, i, country_adj[a].w))
				code = country_adj[a].code;
		if (code && found && strcmp(code, found))
			several = true;
		if (code)
			found = code;
	}
	free(c);
	return several ? NULL : found;
}

size_t events_unchanged_policy(const struct clause *c, size_t v, size_t *neg)
{
	static const char *const verbs[] = { "changed", "change", "altered", "alter", NULL };
	static const char *const aux[] = { "has", "have", "had", "did", "does", "do", NULL };
	static const char *const negs[] = { "not", "n't", "never", NULL };
	static const char *const obj[] = { "policy", "policies", "stance", "course", "rates",
					   NULL };
	static const char *const mods[] = { "its", "their", "our", "monetary", "credit",
					    "interest", "rate", "policy", "basic", NULL };
	if (!is_any(c, v, verbs) || v < 2)
		return 0;
	size_t k = v - 1;
	if (!is_any(c, k, negs) && !(is_any(c, k, aux) && k > 0 && is_any(c, k - 1, negs)))
		return 0;
	if (!is_any(c, k, negs))
		k--;
	/* "has not changed", "did not change": the auxiliary before "not". */
	if (!(k > 0 && is_any(c, k - 1, aux)) && !is_any(c, v - 1, aux))
		return 0;
	for (size_t j = v + 1; j < c->n && j <= v + 4; j++) {
		if (is_any(c, j, obj)) {
			/* "its policy stance", "monetary policy course": the last noun. */
			while (is_any(c, j + 1, obj))
				j++;
			*neg = k;
			return j;
		}
		if (!is_any(c, j, mods))
			return 0;
	}
	return 0;
}

bool events_presupposed(const struct clause *c, size_t np, bool *now)
{
	static const char *const past[] = { "recent", "recently", NULL };
	static const char *const cur[] = { "current", "continuing", "continued", "ongoing",
					   "today", "yesterday", NULL };
	static const char *const deny[] = { "no", "not", "any", "without", "further", "more",
					     NULL };
	*now = false;
	for (size_t k = np; k-- > 0 && k + 3 > np;) {
		bool p = is_any(c, k, past), n = is_any(c, k, cur);
		/* "this week's", "last week's" intervention. */
		bool wk = is(c, k, "week") && k > 0 && (is(c, k - 1, "this") || is(c, k - 1, "last"));
		if (!p && !n && !wk)
			continue;
		size_t start = wk ? k - 1 : k;
		if (start > 0 && is_any(c, start - 1, deny))
			return false;
		*now = n || (wk && is(c, k - 1, "this"));
		return true;
	}
	return false;
}

bool events_done_by(const struct clause *c, size_t e)
{
	static const char *const aux[] = { "has", "had", "have", NULL };
	static const char *const done[] = { "carried", "made", "conducted", "undertaken", "done",
					    "mounted", NULL };
	if (is_any(c, e, aux))
		e++;
	return is_any(c, e, done);
}
