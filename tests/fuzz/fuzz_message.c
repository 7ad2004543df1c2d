/* libFuzzer target: the exact call the bus makes on every message file,
 * msg_parse on an exact-size buffer. A message it accepts must serialise
 * to canonical JSON that parses again and serialises to the same text;
 * a message it refuses must come with one-line errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/message.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_message: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void fuzz_check_errors(const struct msg_errors *errs)
{
	if (errs->count == 0 || errs->count > MSG_ERRORS_MAX + 1)
		fuzz_fail("refused without errors, or too many", NULL);
	for (size_t i = 0; i < errs->count; i++) {
		const unsigned char *p = (const unsigned char *)errs->items[i];
		if (!*p)
			fuzz_fail("empty error", NULL);
		for (; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				fuzz_fail("control character in error", errs->items[i]);
	}
}

/* Canonical output parses again, validates, and is a fixed point. */
static void fuzz_check_roundtrip(const struct msg *m)
{
	if (msg_validate(m, NULL) != 0)
		fuzz_fail("parsed message does not validate", NULL);
	char *json = msg_to_json(m, false);
	if (!json)
		fuzz_fail("msg_to_json failed", NULL);
	struct msg *again = NULL;
	struct msg_errors errs = { 0 };
	if (msg_parse(json, strlen(json), &again, &errs) != 0) {
		char *why = msg_errors_join(&errs);
		fprintf(stderr, "output: %s\n", json);
		fuzz_fail("canonical output refused", why);
	}
	char *json2 = msg_to_json(again, false);
	if (!json2 || strcmp(json, json2))
		fuzz_fail("canonical output is not a fixed point", json2);
	struct msg *copy = msg_dup(again);
	char *json3 = msg_to_json(copy, true);
	struct msg *pretty = NULL;
	if (!json3 || msg_parse(json3, strlen(json3), &pretty, NULL) != 0)
		fuzz_fail("pretty output refused", json3);
	msg_free(&pretty);
	msg_free(&copy);
	msg_free(&again);
	if (again || copy)
		fuzz_fail("msg_free left a pointer", NULL);
	free(json3);
	free(json2);
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly size bytes, so ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct msg *m = NULL;
	struct msg_errors errs = { 0 };
	if (msg_parse(buf, size, &m, &errs) == 0) {
		if (!m || errs.count)
			fuzz_fail("accepted without a message, or with errors", NULL);
		fuzz_check_roundtrip(m);
		msg_free(&m);
	} else {
		if (m)
			fuzz_fail("refused but returned a message", NULL);
		fuzz_check_errors(&errs);
		char *all = msg_errors_join(&errs);
		free(all);
	}
	msg_errors_release(&errs);
	free(buf);
	return 0;
}
