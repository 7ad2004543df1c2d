/* libFuzzer target: what an MCP client sends `madf mcp`, one JSON-RPC
 * message a line, cli_mcp_handle_line on each line of the input (exact
 * size, without its newline) as the server's reader cuts them, on one
 * session: initialize, ping, tools/list (pages of 3), notifications. A
 * tools/call after initialize is left out (it runs the tools: a weekly
 * run, a review, a task sent on the bus); before it, it is refused. Every
 * answer is one line of strict JSON, {"jsonrpc":"2.0","id",...} with a
 * result or an error {"code","message"}, the id null, a string or an
 * integer; at most one answer a line, and one to each request (an object
 * with a method and an id) that madf reads as one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/message.h"
#include "server/mcp_server_priv.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answers written: each one line of strict JSON; their number. */
static size_t check_answers(const char *buf, size_t len)
{
	size_t n = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		if (!nl)
			fuzz_fail("an answer without its newline", buf + at);
		size_t k = (size_t)(nl - (buf + at));
		char *perr = NULL;
		cJSON *m = json_parse_strict(buf + at, k, &perr);
		if (!cJSON_IsObject(m))
			fuzz_fail("an answer that is not a strict JSON object", perr);
		const cJSON *ver = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(m, "result");
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(m, "error");
		if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") || !id ||
		    (!cJSON_IsNull(id) && !cJSON_IsString(id) && !cJSON_IsNumber(id)))
			fuzz_fail("an answer without jsonrpc 2.0 or its id", NULL);
		if (!res == !err)
			fuzz_fail("an answer with both or neither of result and error", NULL);
		if (err && (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(err, "code")) ||
			    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message"))))
			fuzz_fail("an error without its code or message", NULL);
		cJSON_Delete(m);
		n++;
		at += k + 1;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "mcp_server";
	static struct cli cli;
	struct mcp s;
	memset(&s, 0, sizeof(s));
	s.cli = &cli;
	s.page_size = 3;
	char *out = NULL;
	size_t outlen = 0;
	s.out = open_memstream(&out, &outlen);
	if (!s.out)
		return 0;
	pthread_mutex_init(&s.out_lock, NULL);
	size_t lines = 0;
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t k = nl ? (size_t)(nl - (data + at)) : size - at;
		char *line = malloc(k ? k : 1);
		if (!line)
			abort();
		memcpy(line, data + at, k);
		/* what madf reads: a request (method and id), or tools/call */
		cJSON *j = json_parse_strict(line, k, NULL);
		const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "method"));
		bool call = method && !strcmp(method, "tools/call");
		if (!(call && s.initialized)) {
			fflush(s.out);
			size_t before = outlen;
			cli_mcp_handle_line(&s, line, k);
			fflush(s.out);
			lines++;
			const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
			if (cJSON_IsObject(j) && method && id && !cJSON_IsNull(id) &&
			    outlen == before)
				fuzz_fail("a request not answered", method);
		}
		cJSON_Delete(j);
		free(line);
		at += k + 1;
	}
	fclose(s.out);
	if (check_answers(out, outlen) > lines)
		fuzz_fail("more answers than lines", NULL);
	free(out);
	pthread_mutex_destroy(&s.out_lock);
	return 0;
}
