/* libFuzzer target: the conversation agents file the operator edits,
 * <data_dir>/serve-agents.json, read by serve_agents_load (the input is
 * the file). Loaded agents have valid, distinct names, a role, a prompt,
 * 1 to 10 steps, an onError of skip, retry or abort and non-empty tool
 * names; a refusal is one line naming the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/serve.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_agent(const struct serve_agent *a, bool initiator)
{
	if (!a->name || !a->description || !a->role || !a->system || !a->on_error)
		fuzz_fail("an agent without a field", a->name);
	if (!initiator && (!util_valid_agent_name(a->name) || !*a->system))
		fuzz_fail("an agent with a bad name or no prompt", a->name);
	if (strcmp(a->role, "orchestrator") && strcmp(a->role, "execution"))
		fuzz_fail("a bad role", a->role);
	if (strcmp(a->on_error, "skip") && strcmp(a->on_error, "retry") &&
	    strcmp(a->on_error, "abort"))
		fuzz_fail("a bad onError", a->on_error);
	if (a->max_steps < 1 || a->max_steps > SERVE_STEPS_CAP)
		fuzz_fail("maxSteps out of 1..10", a->name);
	for (size_t i = 0; i < a->ntools; i++)
		if (!a->tools[i] || !*a->tools[i])
			fuzz_fail("an empty tool name", a->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "serve_agents";
	const char *dir = fuzz_tmpdir();
	char path[160];
	snprintf(path, sizeof(path), "%s/serve-agents.json", dir);
	fuzz_write(path, data, size, 0600);
	struct serve_agents a;
	char *err = NULL;
	if (serve_agents_load(dir, &a, &err) == 0) {
		if (err)
			fuzz_fail("loaded with an error", err);
		if (a.n < 1 || !a.path || strcmp(a.path, path))
			fuzz_fail("loaded no agents, or from elsewhere", a.path);
		for (size_t i = 0; i < a.n; i++) {
			check_agent(&a.v[i], false);
			if (serve_agents_find(&a, a.v[i].name) != &a.v[i])
				fuzz_fail("an agent defined twice", a.v[i].name);
		}
		if (a.initiator)
			check_agent(a.initiator, true);
		serve_agents_free(&a);
	} else {
		fuzz_check_text("the refusal", err);
		if (strncmp(err, path, strlen(path)))
			fuzz_fail("a refusal that does not name the file", err);
		if (a.v || a.n || a.initiator)
			fuzz_fail("refused, keeping agents", NULL);
	}
	free(err);
	return 0;
}
