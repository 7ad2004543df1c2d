/* libFuzzer target: the JSON-RPC frames the MCP client reads from a
 * server, mcp_client_read on exact-size chunks as read() or curl hands
 * them over: stdio lines, an HTTP JSON body, an HTTP event stream, the GET
 * stream. Byte 0 picks the transport, byte 1 the chunk size, byte 2 the
 * id of the request waited for. The same bytes fed whole must give the
 * same outcome and the same response, and a response must carry that id.
 * The server's log (notifications, warnings) is written to /dev/null
 * through a symlink, so the logging and redaction run too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mcp.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_mcp_wire: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static char fuzz_log_dir[64];

/* The log directory goes when the fuzzer exits. */
static void fuzz_cleanup(void)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/mcp/fuzz.log", fuzz_log_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/mcp", fuzz_log_dir);
	rmdir(path);
	rmdir(fuzz_log_dir);
}

static void fuzz_setup(void)
{
	snprintf(fuzz_log_dir, sizeof(fuzz_log_dir), "/tmp/madf-fuzz-mcp.XXXXXX");
	if (!mkdtemp(fuzz_log_dir))
		fuzz_fail("mkdtemp", NULL);
	char path[128];
	snprintf(path, sizeof(path), "%s/mcp", fuzz_log_dir);
	if (mkdir(path, 0700) < 0)
		fuzz_fail("mkdir", path);
	snprintf(path, sizeof(path), "%s/mcp/fuzz.log", fuzz_log_dir);
	if (symlink("/dev/null", path) < 0)
		fuzz_fail("symlink", path);
	setenv("FUZZ_API_KEY", "sk-fuzz-secret", 1); /* redacted from the log */
	atexit(fuzz_cleanup);
}

/* Feeds s in chunks of at most step bytes (each its own exact-size
 * buffer); returns the outcome and the response's text into *out. */
static int fuzz_read(enum mcp_wire kind, const uint8_t *s, size_t n, size_t step,
		     int64_t want_id, char **out)
{
	static char name[] = "fuzz", command[] = "false";
	static char *args[] = { NULL };
	struct mcp_server_config cfg = { .name = name, .transport = MCP_STDIO,
					 .command = command, .args = args };
	struct mcp_client *c = mcp_client_new(&cfg, fuzz_log_dir);
	size_t nchunks = n / step + 1;
	char **chunks = calloc(nchunks, sizeof(char *));
	size_t *lens = calloc(nchunks, sizeof(size_t));
	if (!chunks || !lens)
		abort();
	size_t k = 0;
	for (size_t off = 0; off < n; off += step, k++) {
		lens[k] = n - off < step ? n - off : step;
		chunks[k] = malloc(lens[k]);
		if (!chunks[k])
			abort();
		memcpy(chunks[k], s + off, lens[k]);
	}
	cJSON *resp = NULL;
	char *err = NULL;
	int r = mcp_client_read(c, kind, (const char *const *)chunks, lens, k, want_id, &resp,
				&err);
	*out = NULL;
	if (r == 1) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(resp, "id");
		if (!resp || !cJSON_IsNumber(id) || id->valuedouble != (double)want_id)
			fuzz_fail("a response without the id waited for", NULL);
		*out = cJSON_PrintUnformatted(resp);
	} else if (resp) {
		fuzz_fail("a response with outcome", r ? "-1" : "0");
	}
	if (r < 0) {
		if (!err || !*err)
			fuzz_fail("failed without an error", NULL);
	} else if (err) {
		fuzz_fail("an error with outcome", err);
	}
	free(err);
	cJSON_Delete(resp);
	for (size_t i = 0; i < k; i++)
		free(chunks[i]);
	free(chunks);
	free(lens);
	mcp_client_free(&c);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_log_dir[0])
		fuzz_setup();
	if (size < 3)
		return 0;
	enum mcp_wire kind = (enum mcp_wire)(data[0] % 4);
	size_t step = (size_t)data[1] % 64 + 1;
	int64_t want_id = data[2] % 3;
	char *a = NULL, *b = NULL;
	int ra = fuzz_read(kind, data + 3, size - 3, step, want_id, &a);
	int rb = fuzz_read(kind, data + 3, size - 3, size, want_id, &b);
	if (ra != rb || (a || b) != (a && b) || (a && strcmp(a, b))) {
		fprintf(stderr, "fuzz_mcp_wire: kind %d: chunks of %zu: %d, whole: %d\n",
			(int)kind, step, ra, rb);
		abort();
	}
	cJSON_free(a);
	cJSON_free(b);
	return 0;
}
