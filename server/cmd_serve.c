/* madf serve: the command line of the conversation API (the server and
 * its tokens). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/util.h"
#include "server/serve.h"
#include "server/serve_http.h"
#include "cli/cli.h"
#include "core/banned.h"

static int token_cmd(struct cli *cli, int argc, char **argv)
{
	const char *sub = argc > 2 ? argv[2] : NULL;
	char *path = serve_tokens_path(cli->data_dir);
	char *err = NULL;
	int rc = EXIT_OK;
	if (sub && !strcmp(sub, "add") && argc == 4) {
		char *tok = NULL;
		if (util_mkdirs(cli->data_dir, &err) < 0 ||
		    serve_token_add(path, argv[3], &tok, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "serve token add", "%s", err);
		} else {
			printf("%s\n", tok);
			fprintf(stderr, "madf: serve: a new token for %s (shown once; stored as its "
					"SHA-256 in %s)\n", argv[3], path);
			free(tok);
		}
	} else if (sub && !strcmp(sub, "list") &&
		   (argc == 3 || (argc == 4 && !strcmp(argv[3], "--json")))) {
		struct serve_tokens t;
		if (serve_tokens_load(path, &t, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "serve token list", "%s", err);
		} else if (argc == 4) {
			cJSON *a = cJSON_CreateArray();
			for (size_t i = 0; i < t.n; i++) {
				cJSON *o = cJSON_CreateObject();
				char id[17];
				for (int k = 0; k < 8; k++)
					snprintf(id + 2 * k, 3, "%02x", t.v[i].hash[k]);
				cJSON_AddStringToObject(o, "user", t.v[i].user);
				cJSON_AddStringToObject(o, "hash_prefix", id);
				cJSON_AddStringToObject(o, "created", t.v[i].created);
				cJSON_AddItemToArray(a, o);
			}
			char *s = cJSON_PrintUnformatted(a);
			printf("%s\n", s);
			free(s);
			cJSON_Delete(a);
		} else {
			printf("%-24s %-16s %s\n", "USER", "HASH", "CREATED");
			for (size_t i = 0; i < t.n; i++) {
				printf("%-24s ", t.v[i].user);
				for (int k = 0; k < 8; k++)
					printf("%02x", t.v[i].hash[k]);
				printf(" %s\n", t.v[i].created);
			}
		}
		serve_tokens_free(&t);
	} else if (sub && !strcmp(sub, "revoke") && argc == 4) {
		size_t n = 0;
		if (serve_token_revoke(path, argv[3], &n, &err) < 0)
			rc = cli_fail(EXIT_FAIL, "serve token revoke", "%s", err);
		else
			printf("revoked %zu token%s of %s\n", n, n == 1 ? "" : "s", argv[3]);
	} else {
		rc = cli_fail(EXIT_USAGE, "serve", "usage: madf serve token add USER | "
			      "token list [--json] | token revoke USER");
	}
	free(err);
	free(path);
	return rc;
}

int cmd_serve(struct cli *cli, int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "token"))
		return token_cmd(cli, argc, argv);
	static const char *const wv[] = { "--listen", "--tls-cert", "--tls-key", NULL };
	static const char *const fl[] = { "--behind-tls-proxy", NULL };
	struct cli_opts o = { argc, argv, 1, "serve", wv, fl, 0 };
	struct serve_options opt = { .listen = "127.0.0.1:8765", .data_dir = cli->data_dir,
				     .log_dir = cli->log_dir, .mcp_config = cli->mcp_config,
				     .verbose = cli->verbose };
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "serve", "unexpected argument \"%s\"", val);
		if (!strcmp(name, "--behind-tls-proxy"))
			opt.behind_tls_proxy = true;
		else if (!strcmp(name, "--tls-cert"))
			opt.tls_cert = val;
		else if (!strcmp(name, "--tls-key"))
			opt.tls_key = val;
		else
			opt.listen = val;
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!opt.tls_cert != !opt.tls_key)
		return cli_fail(EXIT_USAGE, "serve", "--tls-cert and --tls-key go together");
	char *err = NULL;
	int rc = serve_run(&opt, &err);
	if (rc != EXIT_OK) {
		cli_fail(rc, "serve", "%s", err ? err : "failed");
		free(err);
	}
	return rc;
}
