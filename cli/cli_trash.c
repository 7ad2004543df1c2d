/* madf trash: the deleted messages (kept BUS_TRASH_DAYS days), listed or
 * restored to where they were deleted from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

static void put_safe(const char *s)
{
	if (!s)
		s = "-";
	char *t = util_sanitize(s, strlen(s), false);
	fputs(t, stdout);
	free(t);
}

static int trash_ls(struct bus *b, bool json)
{
	struct bus_trash_entry *v;
	size_t n;
	char *err = NULL;
	if (bus_trash_list(b, &v, &n, &err) < 0) {
		cli_fail(EXIT_FAIL, "trash", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		for (size_t i = 0; i < n; i++) {
			cJSON *o = cJSON_CreateObject();
			const struct bus_trash_entry *e = &v[i];
			cJSON_AddStringToObject(o, "message_id", e->message_id ? e->message_id : "");
			cJSON_AddItemToObject(o, "from", e->from ? cJSON_CreateString(e->from) : cJSON_CreateNull());
			cJSON_AddItemToObject(o, "to", e->to ? cJSON_CreateString(e->to) : cJSON_CreateNull());
			cJSON_AddItemToObject(o, "type", e->type ? cJSON_CreateString(e->type) : cJSON_CreateNull());
			cJSON_AddStringToObject(o, "queue", bus_queue_name(e->queue));
			if (e->agent)
				cJSON_AddStringToObject(o, "agent", e->agent);
			if (e->reason)
				cJSON_AddStringToObject(o, "reason", e->reason);
			char ts[40];
			util_iso8601(e->deleted_ns, ts, sizeof(ts));
			cJSON_AddStringToObject(o, "deleted_at", ts);
			cJSON_AddStringToObject(o, "file", e->name);
			cJSON_AddItemToArray(arr, o);
		}
		char *s = json_pretty(arr);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(arr);
	} else {
		printf("%-44s %-18s %-18s %-30s %s\n", "MESSAGE_ID", "TYPE", "FROM", "DELETED FROM",
		       "DELETED AT");
		for (size_t i = 0; i < n; i++) {
			const struct bus_trash_entry *e = &v[i];
			char where[128], ts[40];
			if (e->agent)
				snprintf(where, sizeof(where), "%s of %s", bus_queue_name(e->queue), e->agent);
			else
				snprintf(where, sizeof(where), "%s%s%s", bus_queue_name(e->queue),
					 e->reason ? ": " : "", e->reason ? e->reason : "");
			util_iso8601(e->deleted_ns, ts, sizeof(ts));
			const char *cols[] = { e->message_id ? e->message_id : e->name, e->type, e->from,
					       where };
			const int w[] = { 44, 18, 18, 30 };
			for (int k = 0; k < 4; k++) {
				char *s = util_sanitize(cols[k] ? cols[k] : "-", strlen(cols[k] ? cols[k] : "-"),
							false);
				printf("%-*s ", w[k], s);
				free(s);
			}
			printf("%s\n", ts);
		}
		printf("\n%zu message%s in the trash, kept %d days after deletion (madf gc purges "
		       "older ones)\n", n, n == 1 ? "" : "s", BUS_TRASH_DAYS);
	}
	bus_trash_entries_free(v, n);
	return EXIT_OK;
}

static const struct cli_cmd trash_ls_entry, trash_restore_entry;

static int trash_ls_cmd(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, argc > 1 ? 2 : 1, "trash", &trash_ls_entry, 0 };
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "trash", "unexpected argument %s", val);
		json = true;
	}
	if (r < 0)
		return EXIT_USAGE;
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	return trash_ls(b, json);
}

static int trash_restore_cmd(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "trash", &trash_restore_entry, 0 };
	const char **ids = xcalloc((size_t)argc, sizeof(*ids));
	int nids = 0, r;
	const char *name, *val;
	while ((r = cli_next(&o, &name, &val)) > 0)
		ids[nids++] = val; /* no options: positional arguments only */
	if (r < 0 || !nids) {
		free(ids);
		return r < 0 ? EXIT_USAGE : cli_fail(EXIT_USAGE, "trash", "restore needs at least "
						   "one ID");
	}
	struct bus *b;
	if (cli_bus(cli, &b) < 0) {
		free(ids);
		return EXIT_FAIL;
	}
	int rc = EXIT_OK;
	for (int i = 0; i < nids; i++) {
		char *err = NULL, *where = NULL;
		if (bus_trash_restore(b, ids[i], &where, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "trash", "%s", err);
			free(err);
		} else {
			printf("restored ");
			put_safe(ids[i]);
			printf(" to ");
			put_safe(where);
			putchar('\n');
		}
		free(where);
	}
	free(ids);
	return rc;
}

/* madf trash alone lists. */
static int cmd_trash(struct cli *cli, int argc, char **argv)
{
	if (argc > 1)
		return cli_fail(EXIT_USAGE, "trash", "unknown subcommand \"%s\": ls or restore (see "
				"madf trash --help)", argv[1]);
	return trash_ls_cmd(cli, argc, argv);
}

static const struct cli_opt trash_ls_options[] = {
	{ .name = "--json",
	  .help = "print an array of {message_id, from, to, type, queue, agent, reason, "
		  "deleted_at, file}" },
	{ 0 },
};

static const struct cli_cmd trash_ls_entry = {
	.name = "ls",
	.opts = trash_ls_options,
	.summary = "list the deleted messages, the last deleted first, with where each was "
		   "deleted from",
	.run = trash_ls_cmd,
};

static const struct cli_cmd trash_restore_entry = {
	.name = "restore",
	.args = "ID...",
	.summary = "put the messages back where they were deleted from, byte for byte",
	.run = trash_restore_cmd,
};

static const struct cli_cmd *const trash_subs[] = { &trash_ls_entry, &trash_restore_entry,
						    NULL };

const struct cli_cmd cmd_trash_entry = {
	.name = "trash",
	.summary = "list the deleted messages (also with no subcommand), or put them back where "
		   "they were deleted from",
	.run = cmd_trash,
	.subs = trash_subs,
};
