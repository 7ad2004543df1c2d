/* libFuzzer target: madf serve's token file, <data_dir>/serve-tokens
 * (mode 0600), read by serve_tokens_load at every request (the input is
 * the file). Each entry read has a valid user and the created text;
 * there are no more entries than lines; a refusal is one line naming the
 * file and the line. The input itself offered as a bearer token
 * (serve_tokens_check) matches only an entry holding its SHA-256. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/serve.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "serve_tokens";
	const char *dir = fuzz_tmpdir();
	char path[160];
	snprintf(path, sizeof(path), "%s/serve-tokens", dir);
	fuzz_write(path, data, size, 0600);
	size_t lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	struct serve_tokens t;
	char *err = NULL;
	if (serve_tokens_load(path, &t, &err) == 0) {
		if (err)
			fuzz_fail("loaded with an error", err);
		if (t.n > lines)
			fuzz_fail("more tokens than lines", NULL);
		for (size_t i = 0; i < t.n; i++) {
			if (!serve_user_ok(t.v[i].user))
				fuzz_fail("a token of a bad user", t.v[i].user);
			if (!memchr(t.v[i].created, '\0', sizeof(t.v[i].created)) || !t.v[i].created[0])
				fuzz_fail("a token without its created text", t.v[i].user);
		}
		const char *user = serve_tokens_check(&t, (const char *)data, size);
		unsigned char h[32];
		serve_sha256(data, size, h);
		bool held = false;
		for (size_t i = 0; i < t.n; i++)
			if (!memcmp(t.v[i].hash, h, sizeof(h)))
				held = true;
		if (!!user != held)
			fuzz_fail("the token check disagrees with the hashes", user);
		serve_tokens_free(&t);
	} else {
		fuzz_check_text("the refusal", err);
		char want[200];
		snprintf(want, sizeof(want), "%s:", path);
		if (strncmp(err, want, strlen(want)))
			fuzz_fail("a refusal that does not name the file and line", err);
		if (t.v || t.n)
			fuzz_fail("refused, keeping tokens", NULL);
	}
	free(err);
	return 0;
}
