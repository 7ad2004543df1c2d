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

static const struct cli_cmd token_add_entry, token_list_entry, token_revoke_entry;

static int token_add(struct cli *cli, int argc, char **argv)
{
	if (argc != 4)
		return cli_usage_fail(&token_add_entry, "serve", "serve token add");
	char *path = serve_tokens_path(cli->data_dir);
	char *err = NULL, *tok = NULL;
	int rc = EXIT_OK;
	if (util_mkdirs(cli->data_dir, &err) < 0 ||
	    serve_token_add(path, argv[3], &tok, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "serve token add", "%s", err);
	} else {
		printf("%s\n", tok);
		fprintf(stderr, "madf: serve: a new token for %s (shown once; stored as its "
				"SHA-256 in %s)\n", argv[3], path);
		free(tok);
	}
	free(err);
	free(path);
	return rc;
}

static int token_list(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 3, "serve", &token_list_entry, 0 };
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "serve", "unexpected argument \"%s\"", val);
		json = true;
	}
	if (r < 0)
		return EXIT_USAGE;
	char *path = serve_tokens_path(cli->data_dir);
	char *err = NULL;
	int rc = EXIT_OK;
	struct serve_tokens t;
	if (serve_tokens_load(path, &t, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "serve token list", "%s", err);
	} else if (json) {
		cJSON *a = cJSON_CreateArray();
		for (size_t i = 0; i < t.n; i++) {
			cJSON *o2 = cJSON_CreateObject();
			char id[17];
			for (int k = 0; k < 8; k++)
				snprintf(id + 2 * k, 3, "%02x", t.v[i].hash[k]);
			cJSON_AddStringToObject(o2, "user", t.v[i].user);
			cJSON_AddStringToObject(o2, "hash_prefix", id);
			cJSON_AddStringToObject(o2, "created", t.v[i].created);
			cJSON_AddItemToArray(a, o2);
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
	free(err);
	free(path);
	return rc;
}

static int token_revoke(struct cli *cli, int argc, char **argv)
{
	if (argc != 4)
		return cli_usage_fail(&token_revoke_entry, "serve", "serve token revoke");
	char *path = serve_tokens_path(cli->data_dir);
	char *err = NULL;
	size_t n = 0;
	int rc = EXIT_OK;
	if (serve_token_revoke(path, argv[3], &n, &err) < 0)
		rc = cli_fail(EXIT_FAIL, "serve token revoke", "%s", err);
	else
		printf("revoked %zu token%s of %s\n", n, n == 1 ? "" : "s", argv[3]);
	free(err);
	free(path);
	return rc;
}

static int cmd_serve(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "serve", &cmd_serve_entry, 0 };
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

static const struct cli_cmd token_add_entry = {
	.name = "add",
	.args = "USER",
	.summary = "print a new random token for USER once; only its SHA-256 is stored "
		   "(data/serve-tokens)",
	.run = token_add,
};

static const struct cli_opt token_list_options[] = {
	{ .name = "--json", .help = "print [{user, hash_prefix, created}]" },
	{ 0 },
};

static const struct cli_cmd token_list_entry = {
	.name = "list",
	.opts = token_list_options,
	.summary = "each user, the first 16 hex digits of its token's hash, when it was made",
	.run = token_list,
};

static const struct cli_cmd token_revoke_entry = {
	.name = "revoke",
	.args = "USER",
	.summary = "remove every token of USER (exit 1 when it has none)",
	.run = token_revoke,
};

static const struct cli_cmd *const token_subs[] = { &token_add_entry, &token_list_entry,
						    &token_revoke_entry, NULL };

static const struct cli_cmd token_entry = {
	.name = "token",
	.summary = "the bearer tokens of the conversation API",
	.subs = token_subs,
};

static const struct cli_opt serve_options[] = {
	{ .name = "--listen", .arg = "ADDR:PORT",
	  .help = "where to listen (default 127.0.0.1:8765; port 0 picks a free one)" },
	{ .name = "--tls-cert", .arg = "FILE",
	  .help = "serve HTTPS with this PEM certificate (with --tls-key)" },
	{ .name = "--tls-key", .arg = "FILE",
	  .help = "the PEM private key (with --tls-cert; refused when others can read it)" },
	{ .name = "--behind-tls-proxy",
	  .help = "allow an address beyond loopback without TLS: a TLS proxy fronts madf" },
	{ 0 },
};

static const struct cli_cmd *const serve_subs[] = { &token_entry, NULL };

const struct cli_cmd cmd_serve_entry = {
	.name = "serve",
	.opts = serve_options,
	.summary = "the multi-agent conversation API (POST /api/chat/multi answering Server-Sent "
		   "Events; default 127.0.0.1:8765) for the bearer tokens `serve token add` makes",
	.run = cmd_serve,
	.subs = serve_subs,
};
