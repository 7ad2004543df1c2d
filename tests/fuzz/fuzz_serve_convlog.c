/* libFuzzer target: a recorded conversation of madf serve as read back,
 * <data_dir>/serve-sessions/SESSION.json (its meta: the input up to its
 * first NUL byte; none when that part is empty) and SESSION.jsonl (its
 * events, one a line: the rest; none without a NUL). The same files are
 * what a serve on another host fetches from the NATS stream <P>_conv.
 * convlog_open (Last-Event-ID's resume) indexes one event per complete
 * line, or refuses with one line; convlog_recover (at start) gives a
 * session that stopped without a final event its SERVER_SHUTDOWN error
 * as the next line and a meta saying it ended. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "core/message.h"
#include "server/conv_priv.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SESSION "0123456789abcdef01234567"
#define USER "alice"

static char *read_back(const char *path, size_t *n)
{
	char *b = NULL;
	*n = 0;
	if (util_read_file(path, (size_t)64 << 20, &b, n, NULL) < 0)
		return NULL;
	return b;
}

/* The last complete line of text (its length in *len), or NULL. */
static const char *last_line(const char *text, size_t n, size_t *len)
{
	while (n && text[n - 1] != '\n')
		n--; /* a line cut short */
	if (!n)
		return NULL;
	size_t a = n - 1;
	while (a && text[a - 1] != '\n')
		a--;
	*len = n - 1 - a;
	return text + a;
}

/* Whether the line could name a final event in any way. */
static bool maybe_final(const char *line, size_t n)
{
	return memmem(line, n, "\"error\"", 7) || memmem(line, n, "conversation_complete", 21);
}

/* The type of the last complete line of text (caller frees), or NULL. */
static char *last_type(const char *text, size_t n)
{
	size_t len = 0;
	const char *ln = last_line(text, n, &len);
	if (!ln)
		return NULL;
	cJSON *j = json_parse_strict(ln, len, NULL);
	const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "type"));
	char *r = t ? xstrdup(t) : NULL;
	cJSON_Delete(j);
	return r;
}

static long complete_lines(const char *text, size_t n)
{
	long k = 0;
	for (size_t i = 0; i < n; i++)
		k += text[i] == '\n';
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "serve_convlog";
	char dir[160], mp[200], ep[200];
	snprintf(dir, sizeof(dir), "%s/serve-sessions", fuzz_tmpdir());
	mkdir(dir, 0700);
	snprintf(mp, sizeof(mp), "%s/" SESSION ".json", dir);
	snprintf(ep, sizeof(ep), "%s/" SESSION ".jsonl", dir);
	size_t nm = fuzz_write_split(data, size, mp, ep);
	const uint8_t *nul = nm < size ? data + nm : NULL, *ev = nul ? nul + 1 : NULL;
	size_t ne = nul ? size - nm - 1 : 0;
	/* What the meta says, as madf reads it. */
	cJSON *meta = json_parse_strict((const char *)data, nm, NULL);
	const char *owner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "user"));
	const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "state"));
	bool mine = cJSON_IsObject(meta) && owner && !strcmp(owner, USER);
	bool ended = state && !strcmp(state, "ended");
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	const char *mh = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "host"));
	bool other_host = mh && strcmp(mh, host);

	struct conv *c = NULL;
	char *err = NULL;
	int r = convlog_open(dir, SESSION, USER, &c, &err);
	if (r == 0) {
		if (!mine || !nul)
			fuzz_fail("opened a session that is not the user's, or has no events", NULL);
		if (c->seq != complete_lines((const char *)ev, ne))
			fuzz_fail("not one event per complete line", NULL);
		for (long i = 0; i < c->seq; i++) {
			int64_t a = i ? c->ends[i - 1] : 0, b = c->ends[i];
			if (b <= a || b > (int64_t)ne || ev[b - 1] != '\n' ||
			    memchr(ev + a, '\n', (size_t)(b - a - 1)))
				fuzz_fail("an event's offsets are not its line", NULL);
		}
		conv_unref(c);
	} else if (r == 1) {
		if (mine && nul)
			fuzz_fail("the user's session with its events was not found", NULL);
	} else if (r == -1) {
		fuzz_check_text("the refusal", err);
	} else {
		fuzz_fail("an outcome other than 0, 1 or -1", NULL);
	}
	free(err);

	/* The start's recovery. */
	size_t n0 = 0;
	char *before = nul ? read_back(ep, &n0) : NULL;
	size_t l0 = 0;
	const char *ln0 = before ? last_line(before, n0, &l0) : NULL;
	bool stopped = cJSON_IsObject(meta) && !ended && !other_host && nul &&
		       (!ln0 || !maybe_final(ln0, l0));
	convlog_recover(dir, 3650, NULL);
	if (stopped) {
		size_t n1 = 0, n2 = 0;
		char *after = read_back(ep, &n1);
		char *t1 = after ? last_type(after, n1) : NULL;
		if (!t1 || strcmp(t1, "error"))
			fuzz_fail("a stopped session got no final error event", after);
		char *mt = read_back(mp, &n2);
		cJSON *m2 = mt ? json_parse_strict(mt, n2, NULL) : NULL;
		const char *s2 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m2, "state"));
		const cJSON *evs = cJSON_GetObjectItemCaseSensitive(m2, "events");
		if (!s2 || strcmp(s2, "ended") || !cJSON_IsNumber(evs) ||
		    evs->valuedouble != (double)complete_lines(after, n1))
			fuzz_fail("a recovered session's meta does not say it ended, with its events",
				  mt);
		cJSON_Delete(m2);
		free(mt);
		free(t1);
		free(after);
	}
	free(before);
	cJSON_Delete(meta);
	return 0;
}
