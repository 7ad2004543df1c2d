/* libFuzzer target: the review crew's request (seed 001's input, as
 * `madf review --request`, the MCP tool review_codebase's arguments and a
 * bus trigger give it), and the checklist file of `madf review
 * --checklist FILE`. Byte 0 picks: even, the rest is the request's text;
 * odd, the rest is a checklist file put in {"id", "params": {"checklist":
 * FILE}} as cli_review does. Each is parsed by json_parse_strict and
 * checked by review_request_check as review_master_run does; refused,
 * the errors are one line; accepted, every agent named is a part, and
 * each part's input (review_scan_filter over a scan of six files, since
 * left out: it runs git; review_worker_input) passes its agent's own
 * check (review_input_check) or is refused by it in one line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "agents/review_priv.h"
#include "core/message.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cJSON *fake_scan(void)
{
	static const char *const files[] = { "core/util.c", "core/util.h", "tests/run.sh",
					     "README.md", "docs/a b.md", "-rf" };
	cJSON *scan = cJSON_CreateObject();
	cJSON_AddStringToObject(scan, "root", "/nonexistent/madf-fuzz-review");
	cJSON *fs = cJSON_AddArrayToObject(scan, "files");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "path", files[i]);
		cJSON_AddNumberToObject(f, "bytes", 100.0 * (double)(i + 1));
		cJSON_AddItemToArray(fs, f);
	}
	cJSON_AddArrayToObject(scan, "notes");
	cJSON_AddNumberToObject(scan, "bytes", 2100);
	return scan;
}

static void check_accepted(const cJSON *input)
{
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(input, "params");
	const cJSON *ag = cJSON_GetObjectItemCaseSensitive(params, "agents"), *c;
	bool wanted[REVIEW_NPARTS] = { !ag, !ag, !ag, !ag };
	cJSON_ArrayForEach(c, ag) {
		int p = cJSON_IsString(c) ? review_part_from_name(c->valuestring) : -1;
		if (p < 0)
			fuzz_fail("accepted an agent that is not a part", c->valuestring);
		wanted[p] = true;
	}
	cJSON *scan = fake_scan();
	cJSON *pf = cJSON_Duplicate(params, true);
	cJSON_DeleteItemFromObjectCaseSensitive(pf, "since");
	char *err = NULL;
	int st = review_scan_filter(scan, pf, &err);
	if (st != 0)
		fuzz_fail("the accepted filters were refused", err);
	double bytes = 0;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(scan, "files"))
		bytes += cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "bytes"));
	if (bytes != cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(scan, "bytes")))
		fuzz_fail("the filtered scan's bytes are not its files'", NULL);
	const cJSON *note;
	cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(scan, "notes"))
		fuzz_check_text("a scan note", cJSON_GetStringValue(note));
	for (int p = 0; p < REVIEW_NPARTS; p++) {
		if (!wanted[p])
			continue;
		cJSON *in = review_worker_input(scan, params, (enum review_part)p);
		st = review_input_check((enum review_part)p, in, &err);
		if (st == 400) {
			fuzz_check_text("an agent's refusal", err);
			free(err);
			err = NULL;
		} else if (st != 0) {
			fuzz_fail("an agent's check other than 0 or 400", NULL);
		}
		cJSON_Delete(in);
	}
	cJSON_Delete(pf);
	cJSON_Delete(scan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "review_request";
	if (size < 1)
		return 0;
	char *buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	cJSON *input = NULL;
	if (data[0] & 1) {
		cJSON *cl = json_parse_strict(buf, size - 1, NULL);
		if (cl) {
			input = cJSON_CreateObject();
			cJSON_AddStringToObject(input, "id", "madf");
			cJSON_AddItemToObject(cJSON_AddObjectToObject(input, "params"), "checklist", cl);
		}
	} else {
		input = json_parse_strict(buf, size - 1, NULL);
	}
	free(buf);
	if (!input)
		return 0;
	struct msg_errors e = { 0 };
	int n = review_request_check(input, &e);
	if (n) {
		if (!e.count)
			fuzz_fail("refused without an error", NULL);
		char *why = msg_errors_join(&e);
		fuzz_check_text("the refusal", why);
		free(why);
	} else {
		if (e.count)
			fuzz_fail("accepted with errors", e.items[0]);
		check_accepted(input);
	}
	msg_errors_release(&e);
	cJSON_Delete(input);
	return 0;
}
