/* Helpers of the event extractor's unit tests (test_events.c,
 * test_events_traps.c); include after cmocka.h. */
#ifndef MADF_TESTS_EVENTS_CHECK_H
#define MADF_TESTS_EVENTS_CHECK_H

#include <stdint.h>
#include <string.h>

#include "agents/events.h"
#include "agents/market.h"

static int32_t day_of(const char *s)
{
	int32_t d = 0;
	assert_int_equal(market_day_parse(s, strlen(s), &d), 0);
	return d;
}

/* The act of a kind for a bank, any mode, or NULL. */
static const struct ev_act *act_of(const struct ev_story *s, const char *bank, enum ev_kind k)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->acts[i].kind == k && !strcmp(s->acts[i].bank, bank))
			return &s->acts[i];
	return NULL;
}

/* Reads one body sentence and returns the mode of (bank, kind), or -1
 * when the extractor found no such act. */
static int mode_of(const char *body, const char *day, const char *bank, enum ev_kind k)
{
	struct ev_story s;
	events_extract(NULL, body, day_of(day), &s);
	const struct ev_act *a = act_of(&s, bank, k);
	return a ? (int)a->mode : -1;
}

/* The day of the act (bank, kind) the story reports as done, or -1. */
static inline int32_t fact_day(const struct ev_story *s, const char *bank, enum ev_kind k)
{
	const struct ev_act *a = events_find_fact(s, bank, k);
	return a ? a->day : -1;
}

/* Reads a title and body published on day and returns fact_day. */
static inline int32_t read_fact_day(const char *title, const char *body, const char *day,
			     const char *bank, enum ev_kind k)
{
	struct ev_story s;
	events_extract(title, body, day_of(day), &s);
	return fact_day(&s, bank, k);
}

#endif
