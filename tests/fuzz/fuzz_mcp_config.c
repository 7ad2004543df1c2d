/* libFuzzer target: the .mcp.json reader, mcp_config_parse on an
 * exact-size buffer as mcp_config_load calls it, then a client made from
 * each server (never started) as the MCP tools make them. A configuration
 * it accepts has a name and a command (stdio) or an http(s) URL (http)
 * for every server; a refusal has an error naming the origin (errors are
 * sanitised where they are shown). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mcp.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_mcp_config: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static void fuzz_check_server(const struct mcp_config *c, const struct mcp_server_config *s)
{
	if (!s->name || !*s->name || strlen(s->name) > 64 || strchr(s->name, '/'))
		fuzz_fail("accepted a bad server name", s->name);
	if (s->transport == MCP_STDIO) {
		if (!s->command || !*s->command || !s->args || s->args[s->nargs])
			fuzz_fail("stdio server without a command or a NULL-ended args", s->name);
	} else if (!s->url ||
		   (strncmp(s->url, "http://", 7) && strncmp(s->url, "https://", 8))) {
		fuzz_fail("http server without an http(s) URL", s->name);
	}
	for (size_t i = 0; i < s->nheaders; i++)
		if (strpbrk(s->headers[i], "\r\n") || !strchr(s->headers[i], ':'))
			fuzz_fail("a header with a line break or no ':'", s->headers[i]);
	for (size_t i = 0; i < s->nenv; i++)
		if (!strchr(s->env[i], '='))
			fuzz_fail("an env entry without '='", s->env[i]);
	const struct mcp_server_config *f = mcp_config_find(c, s->name);
	if (!f || strcmp(f->name, s->name))
		fuzz_fail("mcp_config_find does not find a server", s->name);
	struct mcp_client *cl = mcp_client_new(s, NULL);
	if (strcmp(mcp_client_name(cl), s->name))
		fuzz_fail("the client has another name", s->name);
	mcp_client_free(&cl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;
	if (!once) {
		/* ${FUZZ_SET} and ${FUZZ_EMPTY} expand; ${OTHER} is unset. */
		setenv("FUZZ_SET", "value", 1);
		setenv("FUZZ_EMPTY", "", 1);
		once = 1;
	}
	/* Exactly size bytes, so ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct mcp_config c;
	char *err = NULL;
	if (mcp_config_parse(buf, size, "fuzz.json", &c, &err) == 0) {
		if (err)
			fuzz_fail("accepted with an error", err);
		for (size_t i = 0; i < c.n; i++)
			fuzz_check_server(&c, &c.servers[i]);
		mcp_config_release(&c);
	} else {
		if (!err || strncmp(err, "fuzz.json:", 10))
			fuzz_fail("refused without an error naming the origin", err);
		if (c.n || c.servers)
			fuzz_fail("refused but kept servers", NULL);
	}
	free(err);
	free(buf);
	return 0;
}
