/* libFuzzer target: madf serve's limits as read back at start,
 * serve_limits_open over <data_dir>/serve-limits.json (the snapshot, the
 * input up to its first NUL byte; none when that part is empty) and
 * serve-limits.journal (the rest, after the NUL; none without one). A
 * refusal is one line naming the snapshot, which is left as it was; an
 * open puts the journal into the snapshot and empties the journal, and a
 * second open of that snapshot reads it (and writes it again) unchanged;
 * the RateLimit header of each user in it stays within the policy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "server/serve.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *read_back(const char *path, size_t *n)
{
	char *b = NULL;
	*n = 0;
	if (util_read_file(path, (size_t)64 << 20, &b, n, NULL) < 0)
		fuzz_fail("cannot read back", path);
	return b;
}

static void check_header(struct serve_limits *l, const char *user)
{
	static const struct serve_limits_policy p = { 5, 2, 100 };
	char *h = serve_limits_header(l, user, 1700000000);
	long rh, rc, rd;
	long long th, td;
	if (sscanf(h, "\"conv-hour\";r=%ld;t=%lld, \"concurrent\";r=%ld, \"rounds-day\";r=%ld;t=%lld",
		   &rh, &th, &rc, &rd, &td) != 5)
		fuzz_fail("a RateLimit header out of form", h);
	if (rh < 0 || rh > p.conv_per_hour || rc < 0 || rc > p.concurrent || rd < 0 ||
	    rd > p.rounds_per_day || th < 1 || th > 3600 || td < 1 || td > 86400)
		fuzz_fail("a RateLimit header out of the policy", h);
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "serve_limits";
	static const struct serve_limits_policy p = { 5, 2, 100 };
	const char *dir = fuzz_tmpdir();
	char sp[160], jp[160];
	snprintf(sp, sizeof(sp), "%s/%s", dir, SERVE_LIMITS_FILE);
	snprintf(jp, sizeof(jp), "%s/%s", dir, SERVE_LIMITS_JOURNAL);
	size_t ns = fuzz_write_split(data, size, sp, jp);
	struct serve_limits *l = NULL;
	char *err = NULL;
	if (serve_limits_open(dir, &p, &l, &err) < 0) {
		fuzz_check_text("the refusal", err);
		if (strncmp(err, sp, strlen(sp)))
			fuzz_fail("a refusal that does not name the snapshot", err);
		size_t n = 0;
		char *back = read_back(sp, &n);
		if (n != ns || memcmp(back, data, ns))
			fuzz_fail("a refused snapshot was changed", NULL);
		free(back);
		free(err);
		return 0;
	}
	if (err || !l)
		fuzz_fail("opened with an error", err);
	size_t n1 = 0, n2 = 0, nj2 = 0;
	char *s1 = read_back(sp, &n1);
	free(read_back(jp, &nj2));
	if (nj2)
		fuzz_fail("the journal is not emptied at open", NULL);
	serve_limits_free(&l);
	if (serve_limits_open(dir, &p, &l, &err) < 0)
		fuzz_fail("the snapshot madf wrote does not open", err);
	char *s2 = read_back(sp, &n2);
	if (n1 != n2 || memcmp(s1, s2, n1))
		fuzz_fail("a snapshot read and written again changed", s2);
	cJSON *root = cJSON_ParseWithLength(s1, n1);
	const cJSON *u;
	int k = 0;
	cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(root, "users")) {
		if (k++ == 4)
			break;
		check_header(l, u->string);
	}
	cJSON_Delete(root);
	serve_limits_free(&l);
	free(s1);
	free(s2);
	return 0;
}
