/* libFuzzer target: key specs, keys_parse on a line of a console script
 * (NUL-terminated, exact size) as the scripted console calls it. A key it
 * knows has a name (keys_name) that parses back to the same key. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/keys.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	int key = keys_parse(buf);
	if (key >= 0) {
		char name[16], token[24];
		keys_name(key, name, sizeof(name));
		if (name[0] != '#' || !name[1]) {
			snprintf(token, sizeof(token), name[1] ? "<%s>" : "%s", name);
			if (keys_parse(token) != key) {
				fprintf(stderr, "fuzz_keys: key %d is named %s, which parses to %d\n",
					key, token, keys_parse(token));
				abort();
			}
		}
		const struct key_binding *b = keys_lookup(NULL, 0, key);
		if (b && (b->op <= OP_NONE || b->op >= OP_COUNT || !keys_op_name(b->op)))
			abort();
	} else if (key != -1) {
		abort();
	}
	free(buf);
	return 0;
}
