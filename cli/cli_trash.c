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

int cmd_trash(struct cli *cli, int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "ls";
	bool ls = !strcmp(sub, "ls"), restore = !strcmp(sub, "restore");
	if (!ls && !restore)
		return cli_fail(EXIT_USAGE, "trash", "unknown subcommand \"%s\": ls [--json] or "
				"restore ID...", sub);
	bool json = false;
	int nids = 0;
	for (int i = 2; i < argc; i++) {
		if (ls && !strcmp(argv[i], "--json"))
			json = true;
		else if (ls || argv[i][0] == '-')
			return cli_fail(EXIT_USAGE, "trash", "unexpected argument %s", argv[i]);
		else
			nids++;
	}
	if (restore && !nids)
		return cli_fail(EXIT_USAGE, "trash", "restore needs at least one ID");
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	if (ls)
		return trash_ls(b, json);
	int rc = EXIT_OK;
	for (int i = 2; i < argc; i++) {
		char *err = NULL, *where = NULL;
		if (bus_trash_restore(b, argv[i], &where, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "trash", "%s", err);
			free(err);
		} else {
			printf("restored ");
			put_safe(argv[i]);
			printf(" to ");
			put_safe(where);
			putchar('\n');
		}
		free(where);
	}
	return rc;
}
