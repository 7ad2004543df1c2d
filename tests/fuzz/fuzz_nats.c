/* libFuzzer target: what the NATS transport parses. Byte 0 picks:
 *  0: the bus URL (MADF_BUS_URL or --bus), nats_url_split as bus_open
 *     calls it on a nats:// or tls:// URL: each server keeps the scheme,
 *     the shown form has no user or password, and a refusal is one line
 *     without the password (the servers split before it are the
 *     caller's to free, as bus_open does);
 *  1: the Nats-Time-Stamp of a stored message, nats_parse_time: a time
 *     of the years 1970 to 2262 is the nanoseconds timegm gives;
 *  2: an event line read back from the conversations' stream,
 *     nats_line_seq: the number after its last "seq":. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/bus_nats.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_url(const char *url)
{
	if (!bus_nats_url(url))
		return; /* bus_open sends it elsewhere */
	struct natsbus nb;
	memset(&nb, 0, sizeof(nb));
	char **servers = NULL, *err = NULL;
	int n = 0;
	size_t sl = (size_t)(strstr(url, "://") - url) + 3;
	int r = nats_url_split(&nb, url, &servers, &n, &err);
	if (r == 0) {
		if (err || n < 1 || !nb.where)
			fuzz_fail("split with an error, or into nothing", err);
		for (int i = 0; i < n; i++)
			if (strncmp(servers[i], url, sl))
				fuzz_fail("a server without the URL's scheme", servers[i]);
		if (strchr(nb.where, '@'))
			fuzz_fail("the shown form has a user", nb.where);
	} else {
		fuzz_check_text("the refusal", err);
		/* The password, when it is only in the user part, is not shown. */
		const char *at = strchr(url + sl, '@');
		if (nb.secret && strlen(nb.secret) >= 4 && at && !strstr(at, nb.secret) &&
		    strstr(err, nb.secret))
			fuzz_fail("the refusal shows the password", err);
	}
	for (int i = 0; i < n; i++)
		free(servers[i]);
	free(servers);
	free(err);
	free(nb.where);
	free(nb.user);
	free(nb.secret);
}

static void fuzz_time(const char *s)
{
	int64_t ns = nats_parse_time(s);
	int y, mo, d, h, mi, sec, used = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 ||
	    y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || d > 28 || h > 23 || mi > 59 ||
	    sec > 59 || h < 0 || mi < 0 || sec < 0)
		return;
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
			 .tm_min = mi, .tm_sec = sec };
	int64_t want = (int64_t)timegm(&tm) * 1000000000;
	if (ns < want || ns >= want + 1000000000)
		fuzz_fail("a time not within its second", s);
}

static void fuzz_seq(const char *p, size_t n)
{
	long v = nats_line_seq(p, n);
	if (v < 0)
		fuzz_fail("a negative seq", NULL);
	const char *last = NULL;
	for (size_t i = 0; i + 6 <= n; i++)
		if (!memcmp(p + i, "\"seq\":", 6))
			last = p + i + 6;
	size_t k = 0;
	while (last && last + k < p + n && k < 18 && last[k] >= '0' && last[k] <= '9')
		k++;
	if (last && k < 18 && (last + k == p + n || last[k] < '0' || last[k] > '9')) {
		long want = 0;
		for (size_t i = 0; i < k; i++)
			want = want * 10 + (last[i] - '0');
		if (v != want)
			fuzz_fail("not the number after the last \"seq\":", NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "nats";
	if (size < 1)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		if (!memchr(data + 1, '\0', size - 1))
			fuzz_url(s);
		break;
	case 1:
		fuzz_time(s);
		break;
	default: {
		/* exact size, not terminated: as the stream's data */
		char *b = malloc(size - 1 ? size - 1 : 1);
		if (b) {
			memcpy(b, data + 1, size - 1);
			fuzz_seq(b, size - 1);
			free(b);
		}
		break;
	}
	}
	free(s);
	return 0;
}
