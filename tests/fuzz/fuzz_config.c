/* libFuzzer target: the config file and .env reader, config_parse_env on
 * an exact-size buffer as config_load_env_file calls it. Every variable
 * passed on must have a valid name and a value without a newline; a
 * refusal must come with a one-line error naming the origin and line. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_config: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static int fuzz_var(void *ctx, const char *key, const char *value, char **err)
{
	(void)err;
	size_t *count = ctx;
	if (!*key || !(isalpha((unsigned char)*key) || *key == '_'))
		fuzz_fail("bad variable name", key);
	for (const char *k = key; *k; k++)
		if (!(isalnum((unsigned char)*k) || *k == '_'))
			fuzz_fail("bad variable name", key);
	if (strchr(value, '\n'))
		fuzz_fail("newline in a value", NULL);
	(*count)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly size bytes, so ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	size_t count = 0, lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	char *err = NULL;
	if (config_parse_env(buf, size, "fuzz.env", fuzz_var, &count, &err) == 0) {
		if (err)
			fuzz_fail("accepted with an error", err);
		if (count > lines)
			fuzz_fail("more variables than lines", NULL);
	} else {
		if (!err || strncmp(err, "fuzz.env:", 9))
			fuzz_fail("refused without an error naming the origin", err);
		for (const unsigned char *p = (const unsigned char *)err; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				fuzz_fail("control character in the error", err);
	}
	free(err);
	free(buf);
	return 0;
}
