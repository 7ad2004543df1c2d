/* The event extractor on the challenge sets: sentences (tests/data/
 * news-sentences.jsonl), short wire stories (news-stories.jsonl) and
 * long stories full of central-bank mentions that are not acts
 * (news-traps.jsonl) and plain wire stories of the held-out periods
 * (news-wires.jsonl), stories written one Rule at a time
 * (news-rules.jsonl), near-miss stories dense with central-bank words
 * (news-near.jsonl) and stories modelled on the dev range's own, each
 * reworded by a writer who saw the seed story and its labels
 * (news-modelled.jsonl): texts written for the purpose, not taken from the
 * archive, each labelled by the rules of tests/data/news-labels.md before
 * the extractor was run on it (how each set was made: news-labels.md,
 * "Challenge sentences", "Challenge stories", "Trap stories", "Wire
 * stories", "Rule stories", "Near-miss stories", "Modelled stories").
 * Every item is checked:
 * - each labelled fact is reported as done, on its day (background ones
 *   as background or as done);
 * - no (bank, action) of not_facts is reported as done, and no other
 *   hike, cut, hold or intervention is reported as done;
 * - each (bank, action) of denied is read as denied (the validator takes
 *   such a story as a denial), and no act outside denied and not_facts
 *   is (the sets' writers differ on whether "no need to raise" denies or
 *   only speculates: either is not done).
 * The items it is known to misread are listed, with why, in each set's
 * list (tests/data/news-sentences-misread.txt and the like): those must
 * still fail (one read right is taken off the list), every other must
 * pass. The failures are printed with the item's id, what it tests and
 * why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/events.h"
#include "agents/events_eval.h"
#include "agents/market.h"
#include "core/json_out.h"

#include "core/banned.h"

#define SENTENCES "tests/data/news-sentences.jsonl"
#define KNOWN "tests/data/news-sentences-misread.txt"

static enum ev_kind kind_of(const char *a)
{
	return !a ? EV_NONE : !strcmp(a, "hike") ? EV_HIKE : !strcmp(a, "cut") ? EV_CUT :
	       !strcmp(a, "hold") ? EV_HOLD : !strcmp(a, "intervention") ? EV_INTERVENTION :
	       EV_NONE;
}

static bool listed(const cJSON *arr, const char *bank, enum ev_kind k)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
		if (!strcmp(jstr(x, "bank") ? jstr(x, "bank") : "", bank) &&
		    kind_of(jstr(x, "action")) == k)
			return true;
	return false;
}

static int32_t day_of(const char *s)
{
	int32_t d = 0;
	return s && market_day_parse(s, strlen(s), &d) == 0 ? d : -1;
}

/* Checks one item; writes why it fails to why (empty when it passes). */
static void check_item(const cJSON *it, char *why, size_t wsz)
{
	why[0] = 0;
	struct ev_story s;
	const char *at = jstr(it, "published");
	char ymd[11] = "";
	snprintf(ymd, sizeof(ymd), "%s", at ? at : "");
	int32_t pub = day_of(ymd);
	/* A body that opens with its dateline ("TOKYO, March 24 - ") is read
	 * as the archive's stories are: the dateline apart, its day the
	 * story's "today"; a story with a "dateline" field and a published
	 * time is read as the archive's are. */
	const char *body = jstr(it, "body");
	char dateline[64] = "";
	const char *dash = body ? strstr(body, " - ") : NULL;
	if (jstr(it, "dateline")) {
		snprintf(dateline, sizeof(dateline), "%s", jstr(it, "dateline"));
	} else if (dash && dash - body < (long)sizeof(dateline) - 3 &&
		   memchr(body, ',', (size_t)(dash - body))) {
		snprintf(dateline, sizeof(dateline), "%.*s -", (int)(dash - body), body);
		body = dash + 3;
	}
	bool ok = false;
	int32_t local = at && strlen(at) > 10 ?
		events_local_day_iso(at, dateline[0] ? dateline : NULL, jstr(it, "title"), body, &ok) : 0;
	if (!ok)
		local = events_local_day(pub, 12 * 3600, dateline[0] ? dateline : NULL,
					 jstr(it, "title"), body);
	events_extract_story(jstr(it, "title"), body, dateline[0] ? dateline : NULL, local, &s);
	/* MADF_SENTENCE=s-0001 prints what the extractor read of that item. */
	const char *dbg = getenv("MADF_SENTENCE");
	for (size_t i = 0; dbg && !strcmp(dbg, jstr(it, "id") ? jstr(it, "id") : "") && i < s.n; i++) {
		char d[16];
		market_day_format(s.acts[i].day, d, sizeof(d));
		print_message("  %s %s %s %s cue '%s': %s\n", s.acts[i].bank,
			      events_kind_name(s.acts[i].kind), events_mode_name(s.acts[i].mode), d,
			      s.acts[i].cue, s.acts[i].evidence);
	}
	const cJSON *facts = cJSON_GetObjectItem(it, "facts");
	const cJSON *denied = cJSON_GetObjectItem(it, "denied");
	const cJSON *not_facts = cJSON_GetObjectItem(it, "not_facts");
	size_t used = 0;
#define WHY(...) (used < wsz ? (void)(used += (size_t)snprintf(why + used, wsz - used, __VA_ARGS__)) : (void)0)
	const cJSON *f;
	cJSON_ArrayForEach(f, facts) {
		const char *bank = jstr(f, "bank");
		enum ev_kind k = kind_of(jstr(f, "action"));
		bool bg = cJSON_IsTrue(cJSON_GetObjectItem(f, "background"));
		int32_t day = day_of(jstr(f, "date"));
		bool found = false, wrong_day = false;
		for (size_t i = 0; i < s.n; i++) {
			const struct ev_act *a = &s.acts[i];
			if (a->kind != k || strcmp(a->bank, bank))
				continue;
			if (a->mode == EV_MODE_FACT || (bg && a->mode == EV_MODE_BACKGROUND)) {
				if (bg || a->day == day)
					found = true;
				else
					wrong_day = true;
			}
		}
		if (!found)
			WHY("%s %s %s%s; ", wrong_day ? "misdated" : "missed", bank, jstr(f, "action"),
			    bg ? " (background)" : "");
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct ev_act *a = &s.acts[i];
		if (events_is_policy_fact(a) && eval_labelled_bank(a->bank) &&
		    !listed(facts, a->bank, a->kind))
			WHY("extra %s %s (cue '%s'); ", a->bank, events_kind_name(a->kind), a->cue);
		/* A denial beside a fact of the same (bank, action) ("bought
		 * this morning, was not seen this afternoon"): the labels keep
		 * the fact only. */
		/* Read as denied but only not done ("no need to raise", "no
		 * room to cut"): the two sets' writers put the line between a
		 * denial and a speculation apart; an act not done either way
		 * is no error. */
		if (a->mode == EV_MODE_DENIED && !listed(denied, a->bank, a->kind) &&
		    !listed(facts, a->bank, a->kind) && !listed(not_facts, a->bank, a->kind))
			WHY("%s %s read as denied (cue '%s'); ", a->bank, events_kind_name(a->kind),
			    a->cue);
	}
	cJSON_ArrayForEach(f, denied) {
		bool d = false;
		for (size_t i = 0; i < s.n; i++)
			d = d || (s.acts[i].mode == EV_MODE_DENIED && s.acts[i].kind ==
				  kind_of(jstr(f, "action")) && !strcmp(s.acts[i].bank, jstr(f, "bank")));
		if (!d)
			WHY("denial of %s %s not read; ", jstr(f, "bank"), jstr(f, "action"));
	}
#undef WHY
}

/* The ids of tests/data/news-sentences-misread.txt ("s-0016 why"), the
 * items the extractor is known to misread: each must still fail (a fixed
 * one is taken off the list), every other item must pass. */
static size_t load_known(const char *path, char ids[][16], size_t max)
{
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	char line[4096];
	size_t n = 0;
	while (fgets(line, sizeof(line), fp))
		if (line[0] != '#' && line[0] != '\n' && n < max)
			sscanf(line, "%15s", ids[n++]);
	fclose(fp);
	return n;
}

struct set {
	const char *data, *known;
	size_t min_items;
};

static void run_set(const struct set *set)
{
	static char known[256][16];
	size_t nknown = load_known(set->known, known, 256);
	FILE *fp = fopen(set->data, "r");
	assert_non_null(fp);
	char *line = NULL;
	size_t cap = 0, n = 0, bad = 0, unexpected = 0;
	while (getline(&line, &cap, fp) > 0) {
		cJSON *it = cJSON_Parse(line);
		if (!it)
			fail_msg("%s: line %zu is not JSON", set->data, n + 1);
		n++;
		char why[512];
		check_item(it, why, sizeof(why));
		bool listed_known = false;
		for (size_t k = 0; k < nknown; k++)
			listed_known = listed_known || !strcmp(known[k], jstr(it, "id"));
		if (why[0])
			bad++;
		if (why[0] && !listed_known) {
			unexpected++;
			print_message("misread: %s [%s] %s: %s\n", jstr(it, "id"), jstr(it, "cat"),
				      jstr(it, "note") ? jstr(it, "note") : "", why);
		} else if (!why[0] && listed_known) {
			unexpected++;
			print_message("now read as labelled, take it off %s: %s\n", set->known,
				      jstr(it, "id"));
		}
		cJSON_Delete(it);
	}
	free(line);
	fclose(fp);
	print_message("%s: %zu of %zu challenge items read as labelled (%zu known misreadings)\n",
		      set->data, n - bad, n, nknown);
	assert_true(n >= set->min_items);
	assert_int_equal(unexpected, 0);
}

static void test_sentences(void **state)
{
	(void)state;
	run_set(&(struct set){ SENTENCES, KNOWN, 400 });
}

static void test_stories(void **state)
{
	(void)state;
	run_set(&(struct set){ "tests/data/news-stories.jsonl", "tests/data/news-stories-misread.txt",
			       300 });
}

static void test_traps(void **state)
{
	(void)state;
	run_set(&(struct set){ "tests/data/news-traps.jsonl", "tests/data/news-traps-misread.txt",
			       540 });
}

static void test_wires(void **state)
{
	(void)state;
	run_set(&(struct set){ "tests/data/news-wires.jsonl", "tests/data/news-wires-misread.txt",
			       360 });
}

static void test_rules(void **state)
{
	(void)state;
	run_set(&(struct set){ "tests/data/news-rules.jsonl", "tests/data/news-rules-misread.txt",
			       315 });
}

static void test_near(void **state)
{
	(void)state;
	run_set(&(struct set){ "tests/data/news-near.jsonl", "tests/data/news-near-misread.txt",
			       180 });
}

static void test_modelled(void **state)
{
	(void)state;
	run_set(&(struct set){ "tests/data/news-modelled.jsonl",
			       "tests/data/news-modelled-misread.txt", 472 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sentences),
		cmocka_unit_test(test_stories),
		cmocka_unit_test(test_traps),
		cmocka_unit_test(test_wires),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_near),
		cmocka_unit_test(test_modelled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
