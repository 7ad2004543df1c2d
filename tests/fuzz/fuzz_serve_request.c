/* libFuzzer target: the body of POST /api/chat/multi, serve_request_parse
 * on an exact-size buffer as madf serve calls it, against the built-in
 * agents (serve_agents_load writes and reads them once). An accepted
 * request has 1 to 5 distinct known agents, 1 to 10 rounds and a user
 * message among valid roles; a refused one has a 400, one of the seed's
 * codes, a field and a one-line message, and its body (serve_error_body)
 * is JSON carrying that code and field. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "server/serve.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct serve_agents agents;
static bool loaded;

static void check_accepted(const struct serve_request *r)
{
	if (r->nagents < 1 || r->nagents > SERVE_MAX_AGENTS)
		fuzz_fail("accepted with a bad number of agents", NULL);
	for (size_t i = 0; i < r->nagents; i++) {
		if (serve_agents_find(&agents, r->agents[i]->name) != r->agents[i])
			fuzz_fail("accepted an agent that is not known", r->agents[i]->name);
		for (size_t k = 0; k < i; k++)
			if (r->agents[k] == r->agents[i])
				fuzz_fail("accepted an agent twice", r->agents[i]->name);
	}
	if (r->rounds < 1 || r->rounds > SERVE_MAX_ROUNDS)
		fuzz_fail("accepted rounds out of 1..10", NULL);
	bool user = false;
	if (r->nmessages < 1)
		fuzz_fail("accepted without messages", NULL);
	for (size_t i = 0; i < r->nmessages; i++) {
		const char *role = r->messages[i].role;
		if (!role || !r->messages[i].content)
			fuzz_fail("a message without its role or content", NULL);
		if (strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "system"))
			fuzz_fail("accepted a bad role", role);
		user |= !strcmp(role, "user");
	}
	if (!user)
		fuzz_fail("accepted without a user message", NULL);
}

static void check_refused(const struct serve_error *e)
{
	if (e->status != 400)
		fuzz_fail("refused without a 400", NULL);
	if (!e->code || (strcmp(e->code, "VALIDATION_ERROR") && strcmp(e->code, "AGENT_NOT_FOUND") &&
			 strcmp(e->code, "MAX_ROUNDS_EXCEEDED")))
		fuzz_fail("refused with an unknown code", e->code);
	if (!e->field || !*e->field)
		fuzz_fail("refused without a field", NULL);
	fuzz_check_text("the refusal's message", e->message);
	char *body = serve_error_body(e);
	cJSON *j = body ? cJSON_Parse(body) : NULL;
	const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "code"));
	const char *field = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j, "details"), "field"));
	if (!code || strcmp(code, e->code) || !field || strcmp(field, e->field))
		fuzz_fail("the error body does not carry the code and field", body);
	cJSON_Delete(j);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "serve_request";
	if (!loaded) {
		char *err = NULL;
		if (serve_agents_load(fuzz_tmpdir(), &agents, &err) < 0)
			fuzz_fail("the built-in agents do not load", err);
		loaded = true;
	}
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct serve_request r;
	struct serve_error e;
	int rc = serve_request_parse(buf, size, &agents, &r, &e);
	if (rc == 0) {
		if (e.code || e.message)
			fuzz_fail("accepted with an error", e.message);
		check_accepted(&r);
		serve_request_release(&r);
	} else if (rc == -1) {
		check_refused(&e);
		if (r.messages || r.nagents)
			fuzz_fail("refused, keeping a half-made request", NULL);
	} else {
		fuzz_fail("an outcome other than 0 or -1", NULL);
	}
	serve_error_release(&e);
	free(buf);
	return 0;
}
