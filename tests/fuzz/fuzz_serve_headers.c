/* libFuzzer target: the request fields madf serve reads itself (the rest
 * is libmicrohttpd's). Byte 0 picks:
 *  0: Last-Event-ID, serve_last_event_id: -1, 0 or the id, as its
 *     contract says (at most 18 digits, blanks around);
 *  1: a Host or Origin against MADF_SERVE_HOSTS / MADF_SERVE_ORIGINS,
 *     serve_in_list (the list, a newline, the value): true only when an
 *     element, blanks before it dropped, is the value (any case);
 *  2: the URL of GET .../{sessionId}/events or POST .../cancel,
 *     serve_session_of: a session is 24 hex digits and the URL is exactly
 *     /api/chat/multi/SESSION/WHAT;
 *  3: Content-Type, serve_json_type: application/json, alone or followed
 *     by ';' or a blank. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/serve_http.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_last_id(const char *v)
{
	long got = serve_last_event_id(v);
	const char *p = v;
	while (*p == ' ')
		p++;
	size_t k = strspn(p, "0123456789");
	const char *q = p + k;
	while (*q == ' ')
		q++;
	long want;
	if (!*p)
		want = 0;
	else if (*q || k > 18 || !k)
		want = -1;
	else
		want = strtol(p, NULL, 10);
	if (got != want) {
		char m[64];
		snprintf(m, sizeof(m), "%ld, not %ld", got, want);
		fuzz_fail("Last-Event-ID", m);
	}
}

static void fuzz_list(const char *s)
{
	const char *nl = strchr(s, '\n');
	if (!nl)
		return;
	char *list = xstrndup(s, (size_t)(nl - s));
	const char *item = nl + 1;
	size_t n = strlen(item);
	bool got = serve_in_list(list, item, n);
	bool want = false;
	char *save = NULL, *copy = xstrdup(list);
	/* strtok_r drops empty elements: an empty item is checked apart */
	for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		while (*e == ' ')
			e++;
		if (strlen(e) == n && !strncasecmp(e, item, n))
			want = true;
	}
	free(copy);
	if (n && got != want)
		fuzz_fail(got ? "a value the list does not have was allowed" :
			  "a value the list has was refused", item);
	free(list);
}

static void fuzz_session(const char *url)
{
	const char *what = NULL;
	const char *id = serve_session_of(url, &what);
	if (!id)
		return;
	if (strlen(id) != 24 || strspn(id, "0123456789abcdef") != 24)
		fuzz_fail("a session that is not 24 hex digits", id);
	if (!what || (strcmp(what, "events") && strcmp(what, "cancel")))
		fuzz_fail("a session without events or cancel", what);
	char want[128];
	snprintf(want, sizeof(want), "/api/chat/multi/%s/%s", id, what);
	if (strcmp(url, want))
		fuzz_fail("a session from another URL", url);
}

static void fuzz_type(const char *ct)
{
	bool got = serve_json_type(ct);
	bool want = !strncasecmp(ct, "application/json", 16) &&
		    (!ct[16] || ct[16] == ';' || ct[16] == ' ');
	if (got != want)
		fuzz_fail("Content-Type", ct);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "serve_headers";
	if (size < 1 || memchr(data + 1, '\0', size - 1))
		return 0; /* a header or URL is a C string to madf */
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 4) {
	case 0:
		fuzz_last_id(s);
		break;
	case 1:
		fuzz_list(s);
		break;
	case 2:
		fuzz_session(s);
		break;
	default:
		fuzz_type(s);
		break;
	}
	free(s);
	return 0;
}
