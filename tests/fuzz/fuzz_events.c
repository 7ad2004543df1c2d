/* libFuzzer target: central-bank events read from news text (RSS/Atom
 * items, the news archive), events_extract as the researcher and the
 * validator call it on a story's title and body. The input is the title,
 * a newline, the body (no newline: a title alone); its first byte moves
 * the publication day. A story keeps at most EVENTS_MAX acts, each with a
 * known bank, kind and mode, terminated fields, at most EVENTS_CCY_MAX
 * three-letter currencies, and evidence that is valid UTF-8 when the
 * story is (it goes into the researcher's JSON messages). The entities
 * decoder (events_decode_entities) never lengthens the text and yields
 * only printable ASCII for what it decodes. The title is also read as a
 * dateline (events_extract_story) and as a published time: a story's
 * local day (events_local_day, events_local_day_iso) is never more than a
 * day from its UTC day. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "agents/events.h"
#include "agents/market.h"
#include "core/message.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether s is valid UTF-8 (as json_check_tree checks a message). */
static bool utf8_ok(const char *s)
{
	cJSON *j = cJSON_CreateString(s);
	char *err = NULL;
	bool ok = j && json_check_tree(j, "s", 0, &err) == 0;
	free(err);
	cJSON_Delete(j);
	return ok;
}

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "events";
	if (size < 1 || memchr(data, '\0', size))
		return 0; /* titles and bodies are C strings */
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	char *nl = strchr(text, '\n');
	const char *body = NULL;
	if (nl) {
		*nl = '\0';
		body = nl + 1;
	}
	int32_t pub_day = 6264 + data[0]; /* 1987-02-26 and on */
	bool valid = utf8_ok(text) && (!body || utf8_ok(body));
	int32_t local = events_local_day(pub_day, data[0] * 339, text, text, body);
	if (local < pub_day - 1 || local > pub_day + 1)
		fuzz_fail("a local day more than a day from the UTC day", text);
	bool ok;
	int32_t iso = events_local_day_iso(text, body, text, body, &ok);
	int32_t utc = 0;
	if (ok && (strlen(text) < 10 || market_day_parse(text, 10, &utc) != 0))
		fuzz_fail("a published time read from text that is none", text);
	if (ok && (iso < utc - 1 || iso > utc + 1))
		fuzz_fail("an ISO time's local day more than a day off", text);
	struct ev_story st;
	memset(&st, 0xa5, sizeof(st));
	events_extract_story(text, body, text, pub_day, &st);
	if (st.n > EVENTS_MAX)
		fuzz_fail("more acts than EVENTS_MAX", NULL);
	for (size_t i = 0; i < st.n; i++) {
		const struct ev_act *a = &st.acts[i];
		if (!a->bank || !a->bank_name || !*a->bank)
			fuzz_fail("an act without its bank", NULL);
		if (a->kind <= EV_NONE || a->kind > EV_DATA || a->mode < EV_MODE_FACT ||
		    a->mode > EV_MODE_RUMOURED)
			fuzz_fail("an act of no kind or mode", a->bank);
		if (!terminated(a->cue, sizeof(a->cue)) ||
		    !terminated(a->evidence, sizeof(a->evidence)))
			fuzz_fail("an unterminated cue or evidence", a->bank);
		if (a->nccy > EVENTS_CCY_MAX)
			fuzz_fail("more currencies than EVENTS_CCY_MAX", a->bank);
		for (size_t k = 0; k < a->nccy; k++)
			if (strlen(a->ccys[k]) != 3)
				fuzz_fail("a currency that is not three letters", a->bank);
		if (valid && !utf8_ok(a->evidence))
			fuzz_fail("evidence that is not UTF-8 from a story that is", a->evidence);
		if (events_find_fact(&st, a->bank, a->kind) && a->mode == EV_MODE_FACT &&
		    events_find_fact(&st, a->bank, a->kind)->mode != EV_MODE_FACT)
			fuzz_fail("a fact found that is not one", a->bank);
	}
	char *dec = events_decode_entities(body ? body : text);
	const char *src = body ? body : text;
	if (strlen(dec) > strlen(src))
		fuzz_fail("decoding lengthened the text", NULL);
	if (valid && !utf8_ok(dec))
		fuzz_fail("decoding made the text invalid UTF-8", NULL);
	free(dec);
	free(text);
	return 0;
}
