/* A conversation's events brought up to date from a bus that carries them
 * (core/bus_events.c, bus_events_fetch), with a transport whose
 * events_fetch hands over the records given here: each record is one line
 * of the copy, and a record with a raw newline or carriage return of its
 * own (no event madf writes has one) is refused whole with an error naming
 * the session, the event and the byte; it was cut into two lines, every
 * event after it one line off. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/util.h"
#include "tests/unit/bus_test.h"

#include "core/banned.h"

#define SESSION "0123456789abcdef01234567"

/* What the fake bus carries: its records in order, and the meta. */
static const char *const *records;
static size_t nrecords;

static int fake_fetch(struct bus *b, const char *session, long after,
		      int (*fn)(void *ctx, long seq, const char *line, size_t len), void *ctx,
		      char **meta, char **err)
{
	(void)b;
	(void)err;
	if (strcmp(session, SESSION))
		return 1;
	*meta = xstrdup("{\"user\":\"alice\",\"state\":\"ended\"}");
	for (size_t i = 0; i < nrecords; i++)
		if ((long)i + 1 > after && fn(ctx, (long)i + 1, records[i], strlen(records[i])))
			break;
	return 0;
}

/* The copy's events file as it is (caller frees), "" when there is none. */
static char *copy_of(struct fx *f, const char *ext)
{
	char *p = xasprintf("%s/%s/%s.%s", f->dir, BUS_EVENTS_DIR, SESSION, ext), *buf = NULL;
	size_t len = 0;
	if (util_read_file(p, 1 << 20, &buf, &len, NULL) < 0)
		buf = xstrdup("");
	free(p);
	return buf;
}

static int fetch_with(struct fx *f, const char *const *recs, size_t n, char **err)
{
	struct bus_transport t = *f->bus->t;
	const struct bus_transport *was = f->bus->t;
	t.events_fetch = fake_fetch;
	records = recs;
	nrecords = n;
	f->bus->t = &t;
	int r = bus_events_fetch(f->bus, SESSION, err);
	f->bus->t = was;
	return r;
}

#define EV(n) "{\"type\":\"agent_message\",\"data\":{\"text\":\"line one\\nline two\",\"seq\":" #n "}}"

static void test_fetch_whole_lines(void **state)
{
	struct fx *f = *state;
	static const char *const recs[] = { EV(1), EV(2), EV(3) };
	char *err = NULL;
	assert_int_equal(fetch_with(f, recs, 3, &err), 0);
	assert_null(err);
	char *copy = copy_of(f, "jsonl");
	assert_string_equal(copy, EV(1) "\n" EV(2) "\n" EV(3) "\n");
	free(copy);
	char *meta = copy_of(f, "json");
	assert_string_equal(meta, "{\"user\":\"alice\",\"state\":\"ended\"}");
	free(meta);
}

static void test_fetch_refuses_raw_newline(void **state)
{
	struct fx *f = *state;
	/* event 2 from another publisher: pretty-printed, raw newlines */
	static const char *const recs[] = {
		EV(1), "{\"type\":\"agent_message\",\n \"data\":{\"seq\":2}}", EV(3),
	};
	char *err = NULL;
	assert_int_equal(fetch_with(f, recs, 3, &err), -1);
	assert_non_null(err);
	assert_string_equal(err, "session " SESSION ": event 2 on the bus is not one line (a raw "
			    "newline at byte 25 of 43): not copied, nor any after it (this host's "
			    "copy keeps the 1 before it)");
	free(err);
	/* the copy: event 1 alone, on line 1; no half of event 2 */
	char *copy = copy_of(f, "jsonl");
	assert_string_equal(copy, EV(1) "\n");
	free(copy);
	/* the meta is not written for a copy that stopped short */
	char *meta = copy_of(f, "json");
	assert_string_equal(meta, "");
	free(meta);
	/* asked again, the same: nothing lost, nothing split */
	err = NULL;
	assert_int_equal(fetch_with(f, recs, 3, &err), -1);
	assert_non_null(strstr(err, "event 2 on the bus is not one line"));
	free(err);
	copy = copy_of(f, "jsonl");
	assert_string_equal(copy, EV(1) "\n");
	free(copy);
}

static void test_fetch_refuses_carriage_return(void **state)
{
	struct fx *f = *state;
	/* a carriage return ends a line on a stream's wire (data: LINE) */
	static const char *const recs[] = { "{\"type\":\"x\",\"data\":{\"seq\":1}}\r" };
	char *err = NULL;
	assert_int_equal(fetch_with(f, recs, 1, &err), -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "event 1 on the bus is not one line (a raw carriage return "
				    "at byte 30 of 30)"));
	assert_non_null(strstr(err, "keeps the 0 before it"));
	free(err);
	char *copy = copy_of(f, "jsonl");
	assert_string_equal(copy, "");
	free(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fetch_whole_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_refuses_raw_newline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fetch_refuses_carriage_return, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
