/* The bus commands: send, recv, ls, show, retry, delete, kill, requeue,
 * validate, gc, status. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/workflow.h"
#include "core/cache.h"
#include "core/config.h"
#include "core/log.h"
#include "core/json_out.h"
#include "core/util.h"
#include "cli/cli.h"
#include "agents/known_agents.h"
#include "core/banned.h"

/* Text from messages printed to a terminal: no control sequences. */
static void put_safe(FILE *f, const char *s)
{
	if (!s)
		s = "-";
	char *t = util_sanitize(s, strlen(s), false);
	fputs(t, f);
	free(t);
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int read_content(const char *arg, char **out, size_t *len, char **err)
{
	if (arg[0] != '@') {
		*out = xstrdup(arg);
		*len = strlen(arg);
		return 0;
	}
	if (!strcmp(arg, "@-")) {
		struct sbuf b;
		sbuf_init(&b);
		char buf[65536];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
			sbuf_add(&b, buf, n);
			if (b.len > MSG_MAX_BYTES) {
				sbuf_release(&b);
				return err_set(err, "standard input is over the %u-byte limit",
					       MSG_MAX_BYTES);
			}
		}
		*len = b.len;
		*out = sbuf_detach(&b);
		return 0;
	}
	return util_read_file(arg + 1, MSG_MAX_BYTES, out, len, err);
}

/* Whether the bus itself has a queue for name (any transport: on NATS the
 * data directory does not show the inboxes). */
static bool bus_has_agent(struct cli *cli, const char *name)
{
	struct bus *b;
	struct bus_stats st;
	if (cli_bus(cli, &b) < 0 || bus_stats(b, &st, NULL) < 0)
		return false;
	bool found = false;
	for (size_t i = 0; i < st.nagents && !found; i++)
		found = !strcmp(st.agents[i].agent, name);
	bus_stats_release(&st);
	return found;
}

/* Refuses (prints why, returns true) an agent name that is neither
 * configured nor ever seen on the bus: a typo would make an inbox no agent
 * reads. --new-agent says it is new. */
static bool unknown_agent(struct cli *cli, const char *cmd, const char *name,
			  bool broadcast_ok)
{
	char *known = NULL;
	if (known_agent(cli->data_dir, name, broadcast_ok, &known) || bus_has_agent(cli, name)) {
		free(known);
		return false;
	}
	cli_fail(EXIT_USAGE, cmd, "no agent \"%s\" is configured or was ever seen on the bus "
		 "(known: %s); --new-agent if it is a new one", name, known ? known : "none");
	free(known);
	return true;
}

static int cmd_send(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "send", &cmd_send_entry, 0 };
	const char *to = NULL, *type = NULL, *from = "operator", *content = "{}";
	const char *prio = NULL, *timeout = NULL, *reply = NULL, *corr = NULL;
	const char *name, *val;
	bool new_agent = false;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "send", "unexpected argument %s", val);
		if (!strcmp(name, "--new-agent")) new_agent = true;
		else if (!strcmp(name, "--to")) to = val;
		else if (!strcmp(name, "--type")) type = val;
		else if (!strcmp(name, "--from")) from = val;
		else if (!strcmp(name, "--content")) content = val;
		else if (!strcmp(name, "--priority")) prio = val;
		else if (!strcmp(name, "--timeout")) timeout = val;
		else if (!strcmp(name, "--reply-to")) reply = val;
		else if (!strcmp(name, "--correlation-id")) corr = val;
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!to || !type)
		return cli_fail(EXIT_USAGE, "send", "--to and --type are required");
	const char *to_c = msg_agent_canonical(to), *from_c = msg_agent_canonical(from);
	if (strcmp(to_c, "broadcast") && !util_valid_agent_name(to_c))
		return cli_fail(EXIT_USAGE, "send", "invalid agent name \"%s\" for --to: "
				"must match [a-z0-9][a-z0-9_-]{0,63} or be broadcast", to);
	if (!util_valid_agent_name(from_c))
		return cli_fail(EXIT_USAGE, "send", "invalid agent name \"%s\" for --from: "
				"must match [a-z0-9][a-z0-9_-]{0,63}", from);
	int t = msg_type_from_name(type);
	if (t < 0)
		return cli_fail(EXIT_USAGE, "send", "unknown message type \"%s\" (one of "
				"task_assignment, task_acceptance, task_progress, research_result, "
				"validation_request, validation_result, error_report, heartbeat, "
				"system_status)", type);
	int p = PRIO_NORMAL;
	if (prio) {
		long n;
		if (parse_long(prio, 1, 5, &n) == 0)
			p = n == 1 ? PRIO_URGENT : n == 2 ? PRIO_HIGH : n == 3 ? PRIO_NORMAL : PRIO_LOW;
		else if ((p = msg_priority_from_name(prio)) < 0)
			return cli_fail(EXIT_USAGE, "send", "invalid priority \"%s\": one of "
					"urgent, high, normal, low, or 1..5", prio);
	}
	long tmo = -1;
	if (timeout && parse_long(timeout, 1, 365L * 86400, &tmo) < 0)
		return cli_fail(EXIT_USAGE, "send", "invalid --timeout \"%s\": whole seconds, "
				"at least 1", timeout);
	if (!new_agent && unknown_agent(cli, "send", to_c, true))
		return EXIT_USAGE;
	char *err = NULL, *buf = NULL;
	size_t len;
	if (read_content(content, &buf, &len, &err) < 0) {
		cli_fail(EXIT_FAIL, "send", "--content: %s", err);
		free(err);
		return EXIT_FAIL;
	}
	cJSON *c = json_parse_strict(buf, len, &err);
	free(buf);
	if (!c) {
		cli_fail(EXIT_FAIL, "send", "--content is not valid JSON: %s", err);
		free(err);
		return EXIT_FAIL;
	}
	struct msg *m = msg_new(from_c, to_c, (enum msg_type)t, c);
	m->priority = (enum msg_priority)p;
	m->timeout_s = tmo;
	if (reply)
		m->reply_to = xstrdup(reply);
	if (corr)
		m->correlation_id = xstrdup(corr);
	struct bus *b;
	int rc = EXIT_OK;
	if (cli_bus(cli, &b) < 0) {
		rc = EXIT_FAIL;
	} else if (bus_send(b, m, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "send", "%s", err);
		free(err);
	} else {
		printf("%s\n", m->id);
	}
	msg_free(&m);
	return rc;
}

static const struct cli_opt send_options[] = {
	{ .name = "--to", .arg = "AGENT", .required = true,
	  .help = "the recipient: an agent, broadcast (every agent but the sender) or a "
		  "seed-003 alias" },
	{ .name = "--type", .arg = "TYPE", .required = true,
	  .help = "the message type (madf-messages(5))" },
	{ .name = "--from", .arg = "AGENT", .help = "the sender (default: operator)" },
	{ .name = "--content", .arg = "JSON|@FILE|@-",
	  .help = "the content object, from the argument, a file or standard input "
		  "(default: {})" },
	{ .name = "--priority", .arg = "P", .help = "urgent, high, normal, low or 1..5" },
	{ .name = "--timeout", .arg = "S", .help = "seconds the message stays valid" },
	{ .name = "--reply-to", .arg = "ID", .help = "the message this answers" },
	{ .name = "--correlation-id", .arg = "ID",
	  .help = "the conversation it belongs to" },
	{ .name = "--new-agent",
	  .help = "send to an agent neither configured nor ever seen on the bus" },
	{ 0 },
};

const struct cli_cmd cmd_send_entry = {
	.name = "send",
	.opts = send_options,
	.summary = "send one message; prints its message_id",
	.run = cmd_send,
};

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void verbose_dead(void *ctx, const char *agent, const char *name,
			 const char *reason, const char *error)
{
	if (!*(int *)ctx)
		return;
	char *m = xasprintf("dead-lettered %s from %s (%s): %s", name,
			    agent ? agent : "-", reason, error);
	cli_fail(0, "recv", "%s", m);
	free(m);
}

static int cmd_recv(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "recv", &cmd_recv_entry, 0 };
	const char *agent = NULL, *name, *val;
	double wait_s = 0;
	long max = -1;
	bool new_agent = false;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (agent)
				return cli_fail(EXIT_USAGE, "recv", "one AGENT only");
			agent = val;
		} else if (!strcmp(name, "--new-agent")) {
			new_agent = true;
		} else if (!strcmp(name, "--wait")) {
			if (cli_double("recv", name, val, 0, 1e7, &wait_s) < 0)
				return EXIT_USAGE;
		} else if (cli_long("recv", name, val, 1, 1L << 40, &max) < 0) {
			return EXIT_USAGE;
		}
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!agent)
		return cli_fail(EXIT_USAGE, "recv", "AGENT is required");
	agent = msg_agent_canonical(agent);
	if (!util_valid_agent_name(agent))
		return cli_fail(EXIT_USAGE, "recv", "invalid agent name \"%s\": must match "
				"[a-z0-9][a-z0-9_-]{0,63}", agent);
	if (!new_agent && unknown_agent(cli, "recv", agent, false))
		return EXIT_USAGE;
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	b->on_dead = verbose_dead;
	b->on_dead_ctx = &cli->verbose;
	struct bus_consumer *c;
	char *err = NULL;
	if (bus_consumer_open(b, agent, &c, &err) < 0) {
		cli_fail(EXIT_FAIL, "recv", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	long got = 0;
	int rc = EXIT_OK;
	int64_t idle_since = util_mono_ns();
	while (!stop_flag && (max < 0 || got < max)) {
		struct bus_delivery *d;
		int k = bus_claim(c, &d, &err);
		if (k < 0) {
			rc = cli_fail(EXIT_FAIL, "recv", "%s", err);
			free(err);
			err = NULL;
			break;
		}
		if (k == 0) {
			int64_t left = (int64_t)(wait_s * 1000) -
				       (util_mono_ns() - idle_since) / 1000000;
			if (left <= 0)
				break;
			if (bus_consumer_wait(c, (int)left) < 0 && errno != EINTR)
				break;
			continue;
		}
		char *line = msg_to_json(d->msg, false);
		/* Printed and flushed before the ack: at least once. */
		bool ok = printf("%s\n", line) >= 0 && fflush(stdout) == 0;
		free(line);
		if (!ok) {
			rc = cli_fail(EXIT_FAIL, "recv", "cannot write output (%s); "
				      "message %s given back", strerror(errno), d->msg->id);
			bus_giveback(c, &d, NULL);
			break;
		}
		if (bus_ack(c, &d, &err) < 0) {
			cli_fail(0, "recv", "%s", err);
			free(err);
			err = NULL;
		}
		got++;
		idle_since = util_mono_ns();
	}
	bus_consumer_free(&c);
	return rc;
}

static const struct cli_opt recv_options[] = {
	{ .name = "--wait", .arg = "S",
	  .help = "wait until S seconds pass without a message (default: stop when the "
		  "inbox is empty)" },
	{ .name = "--max", .arg = "N", .help = "claim at most N messages" },
	{ .name = "--new-agent",
	  .help = "read the inbox of an agent neither configured nor ever seen" },
	{ 0 },
};

const struct cli_cmd cmd_recv_entry = {
	.name = "recv",
	.args = "AGENT",
	.opts = recv_options,
	.summary = "claim waiting messages, print each as a JSON line, then ack it",
	.run = cmd_recv,
};

static void print_age(int64_t ns)
{
	double s = ns > 0 ? (double)(util_now_ns() - ns) / 1e9 : 0;
	if (s < 0)
		s = 0;
	if (s < 120)
		printf("%6.1fs", s);
	else if (s < 7200)
		printf("%6.1fm", s / 60);
	else if (s < 172800)
		printf("%6.1fh", s / 3600);
	else
		printf("%6.1fd", s / 86400);
}

/* LEASE: the time left before a claim is given back unless renewed
 * again; "-" when the transport does not say (NATS keeps it itself). */
static void print_lease(int64_t lease_ns)
{
	if (!lease_ns) {
		printf(" %7s", "-");
		return;
	}
	double s = (double)(lease_ns - util_now_ns()) / 1e9;
	if (s <= 0)
		printf(" %7s", "over");
	else if (s < 120)
		printf(" %6.1fs", s);
	else if (s < 7200)
		printf(" %6.1fm", s / 60);
	else
		printf(" %6.1fh", s / 3600);
}

static cJSON *entry_json(const struct bus_entry *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "message_id", e->message_id ? e->message_id : "");
	cJSON_AddItemToObject(o, "from", e->from ? cJSON_CreateString(e->from) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "to", e->to ? cJSON_CreateString(e->to) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "type", e->type ? cJSON_CreateString(e->type) : cJSON_CreateNull());
	cJSON_AddStringToObject(o, "priority", msg_priority_name(e->priority));
	double age = e->enqueued_ns ? (double)(util_now_ns() - e->enqueued_ns) / 1e9 : 0;
	cJSON_AddNumberToObject(o, "age_s", age < 0 ? 0 : (double)(int64_t)(age * 1000) / 1000);
	cJSON_AddStringToObject(o, "queue", bus_queue_name(e->queue));
	if (e->agent)
		cJSON_AddStringToObject(o, "agent", e->agent);
	cJSON_AddNumberToObject(o, "attempts", e->attempts);
	cJSON_AddStringToObject(o, "file", e->name);
	cJSON_AddNumberToObject(o, "size", (double)e->size);
	if (e->queue == BUS_Q_RETRY) {
		char due[40];
		util_iso8601(e->due_ns, due, sizeof(due));
		cJSON_AddStringToObject(o, "due", due);
	}
	if (e->owner)
		cJSON_AddStringToObject(o, "owner", e->owner);
	if (e->queue == BUS_Q_PROCESSING && e->lease_ns) {
		/* when the claim is given back unless renewed again (the bus
		 * renews it while its consumer holds it) */
		char at[40];
		util_iso8601(e->lease_ns, at, sizeof(at));
		cJSON_AddStringToObject(o, "lease_expires", at);
		double left = (double)(e->lease_ns - util_now_ns()) / 1e9;
		cJSON_AddNumberToObject(o, "lease_left_s",
					left < 0 ? 0 : (double)(int64_t)(left * 1000) / 1000);
	}
	if (e->queue == BUS_Q_DEAD) {
		cJSON_AddStringToObject(o, "reason", e->reason ? e->reason : "unknown");
		cJSON_AddStringToObject(o, "error", e->error ? e->error : "");
		cJSON_AddStringToObject(o, "original_inbox",
					e->original_inbox ? e->original_inbox : "");
	}
	return o;
}

static int cmd_ls(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "ls", &cmd_ls_entry, 0 };
	const char *pos[3] = { 0 };
	int npos = 0;
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (name)
			json = true;
		else if (npos < 2)
			pos[npos++] = val;
		else
			return cli_fail(EXIT_USAGE, "ls", "unexpected argument %s", val);
	}
	if (r < 0)
		return EXIT_USAGE;
	int q = npos ? bus_queue_from_name(pos[0]) : BUS_Q_INBOX;
	if (q < 0)
		return cli_fail(EXIT_USAGE, "ls", "unknown queue \"%s\": inbox, processing, "
				"retry, dead-letter or processed", pos[0]);
	const char *agent = npos > 1 ? msg_agent_canonical(pos[1]) : NULL;
	if (agent && (q == BUS_Q_DEAD || q == BUS_Q_PROCESSED))
		return cli_fail(EXIT_USAGE, "ls", "%s takes no AGENT", pos[0]);
	if (agent && !util_valid_agent_name(agent))
		return cli_fail(EXIT_USAGE, "ls", "invalid agent name \"%s\"", pos[1]);
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	struct bus_entry *v;
	size_t n;
	char *err = NULL;
	if (bus_list(b, (enum bus_queue)q, agent, true, &v, &n, &err) < 0) {
		cli_fail(EXIT_FAIL, "ls", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (json) {
		cJSON *arr = cJSON_CreateArray();
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(arr, entry_json(&v[i]));
		char *s = json_pretty(arr);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(arr);
	} else {
		bool dead = q == BUS_Q_DEAD, proc = q == BUS_Q_PROCESSING;
		printf("%-44s %-18s %-18s %-18s %-6s %7s %s%s\n", "MESSAGE_ID", "FROM",
		       "TO", "TYPE", "PRIO", "AGE", proc ? "  LEASE " : "",
		       dead ? "REASON" : "ATTEMPTS");
		for (size_t i = 0; i < n; i++) {
			const struct bus_entry *e = &v[i];
			char *id = util_sanitize(e->message_id ? e->message_id : e->name,
						 strlen(e->message_id ? e->message_id : e->name), false);
			printf("%-44s ", id);
			free(id);
			char col[19];
			const char *cols[3] = { e->from, e->to, e->type };
			for (int k = 0; k < 3; k++) {
				char *s = util_sanitize(cols[k] ? cols[k] : "-",
							strlen(cols[k] ? cols[k] : "-"), false);
				snprintf(col, sizeof(col), "%s", s);
				printf("%-18s ", col);
				free(s);
			}
			printf("%-6s ", msg_priority_name(e->priority));
			print_age(e->enqueued_ns);
			if (proc)
				print_lease(e->lease_ns);
			if (dead) {
				printf(" %s: ", e->reason ? e->reason : "unknown");
				put_safe(stdout, e->error);
				putchar('\n');
			} else {
				printf(" %d\n", e->attempts);
			}
		}
	}
	bus_entries_free(v, n);
	return EXIT_OK;
}

static const struct cli_opt ls_options[] = {
	{ .name = "--json", .help = "print JSON" },
	{ 0 },
};

const struct cli_cmd cmd_ls_entry = {
	.name = "ls",
	.args = "[inbox [AGENT] | processing [AGENT] | retry [AGENT] | dead-letter | processed]",
	.opts = ls_options,
	.summary = "list stored messages",
	.run = cmd_ls,
};

static int cmd_show(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "show", &cmd_show_entry, 0 };
	const char *id = NULL, *name, *val;
	bool json = false;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (name)
			json = true;
		else if (!id)
			id = val;
		else
			return cli_fail(EXIT_USAGE, "show", "one ID only");
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!id)
		return cli_fail(EXIT_USAGE, "show", "ID is required");
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	struct bus_entry e;
	char *err = NULL, *buf = NULL;
	size_t len;
	if (bus_find(b, id, &e, &err) < 0) {
		cli_fail(EXIT_FAIL, "show", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	int rc = EXIT_OK;
	if (bus_read(b, &e, &buf, &len, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "show", "%s", err);
		free(err);
		bus_entry_release(&e);
		return rc;
	}
	cJSON *msgj = cJSON_ParseWithLength(buf, len);
	if (json) {
		cJSON *o2 = entry_json(&e);
		cJSON_AddItemToObject(o2, "message", msgj ? msgj : cJSON_CreateString(buf));
		msgj = NULL;
		char *s = json_pretty(o2);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(o2);
	} else {
		printf("queue:    %s%s%s\nfile:     ", bus_queue_name(e.queue),
		       e.agent ? " of " : "", e.agent ? e.agent : "");
		put_safe(stdout, e.path);
		printf("\nattempts: %d\n", e.attempts);
		if (e.queue == BUS_Q_PROCESSING && e.lease_ns) {
			char at[40];
			util_iso8601(e.lease_ns, at, sizeof(at));
			printf("lease:    until %s (renewed while its handler runs, for MADF_LEASE_MAX_S at most)\n", at);
		}
		if (e.queue == BUS_Q_DEAD) {
			printf("reason:   %s\nerror:    ", e.reason ? e.reason : "unknown");
			put_safe(stdout, e.error);
			printf("\ninbox:    ");
			put_safe(stdout, e.original_inbox);
			putchar('\n');
		}
		putchar('\n');
		char *pretty = msgj ? json_pretty(msgj) : NULL;
		const char *text = pretty ? pretty : buf;
		char *safe = util_sanitize(text, strlen(text), true);
		printf("%s\n", safe);
		free(safe);
		free(pretty);
	}
	cJSON_Delete(msgj);
	free(buf);
	bus_entry_release(&e);
	return rc;
}

static const struct cli_opt show_options[] = {
	{ .name = "--json", .help = "print JSON" },
	{ 0 },
};

const struct cli_cmd cmd_show_entry = {
	.name = "show",
	.args = "ID",
	.opts = show_options,
	.summary = "print one message and where it is",
	.run = cmd_show,
};

/* Runs fn over every ID argument; fails (1) if any failed. The entry has
 * at most one option with a value (into *opt_val) and one flag (sets
 * *flag); check, when given, may refuse them (nonzero: the exit status)
 * before anything is done. */
static int each_id(struct cli *cli, int argc, char **argv, const struct cli_cmd *entry,
		   const char **opt_val, bool *flag,
		   int (*check)(struct cli *, const char *opt_val, bool flag),
		   int (*fn)(struct bus *, const char *, const char *, char **),
		   const char *done)
{
	const char *cmd = entry->name;
	struct cli_opts o = { argc, argv, 1, cmd, entry, 0 };
	const char **ids = xcalloc((size_t)argc, sizeof(*ids));
	int nids = 0, r;
	const char *name, *val;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			ids[nids++] = val;
		else if (val)
			*opt_val = val;
		else if (flag)
			*flag = true;
	}
	if (r < 0 || nids == 0) {
		free(ids);
		return r < 0 ? EXIT_USAGE : cli_fail(EXIT_USAGE, cmd, "at least one ID is required");
	}
	if (check && (r = check(cli, *opt_val, flag && *flag)) != 0) {
		free(ids);
		return r;
	}
	struct bus *b;
	if (cli_bus(cli, &b) < 0) {
		free(ids);
		return EXIT_FAIL;
	}
	int rc = EXIT_OK;
	for (int i = 0; i < nids; i++) {
		char *err = NULL;
		if (fn(b, ids[i], *opt_val, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, cmd, "%s", err);
			free(err);
		} else {
			printf("%s ", done);
			put_safe(stdout, ids[i]);
			putchar('\n');
		}
	}
	free(ids);
	return rc;
}

static int do_retry(struct bus *b, const char *id, const char *to, char **err)
{
	char *note = NULL;
	int r = bus_retry_note(b, id, to ? msg_agent_canonical(to) : NULL, &note, err);
	if (note) {
		put_safe(stdout, note);
		putchar('\n');
		free(note);
	}
	return r;
}

/* --to an agent neither configured nor seen is refused, as by send,
 * unless --new-agent. */
static int retry_check(struct cli *cli, const char *to, bool new_agent)
{
	if (to && util_valid_agent_name(msg_agent_canonical(to)) && !new_agent &&
	    unknown_agent(cli, "retry", msg_agent_canonical(to), false))
		return EXIT_USAGE;
	return 0;
}

static int cmd_retry(struct cli *cli, int argc, char **argv)
{
	const char *to = NULL;
	bool new_agent = false;
	return each_id(cli, argc, argv, &cmd_retry_entry, &to, &new_agent, retry_check, do_retry,
		       "retried");
}

static const struct cli_opt retry_options[] = {
	{ .name = "--to", .arg = "AGENT",
	  .help = "send them to AGENT instead (their to is rewritten)" },
	{ .name = "--new-agent",
	  .help = "with --to: an agent neither configured nor ever seen" },
	{ 0 },
};

const struct cli_cmd cmd_retry_entry = {
	.name = "retry",
	.args = "ID...",
	.opts = retry_options,
	.summary = "send dead letters back to their inbox (or another)",
	.run = cmd_retry,
};

static int do_delete(struct bus *b, const char *id, const char *unused, char **err)
{
	(void)unused;
	return bus_remove(b, id, err);
}

static int cmd_delete(struct cli *cli, int argc, char **argv)
{
	const char *none = NULL;
	int rc = each_id(cli, argc, argv, &cmd_delete_entry, &none, NULL, NULL, do_delete,
			 "deleted");
	/* not into a trash there: said, not left to be discovered */
	if (cli->bus && !bus_has_trash(cli->bus))
		cli_fail(0, "delete", "on the %s transport a delete is permanent (it has no "
			 "trash; madf trash restore cannot bring it back)", cli->bus->t->name);
	return rc;
}

const struct cli_cmd cmd_delete_entry = {
	.name = "delete",
	.args = "ID...",
	.summary = "delete waiting, retrying or dead messages (into the trash, kept 30 days; on NATS "
		   "for good)",
	.run = cmd_delete,
};

static int do_kill(struct bus *b, const char *id, const char *why, char **err)
{
	return bus_kill(b, id, why, err);
}

static int cmd_kill(struct cli *cli, int argc, char **argv)
{
	const char *why = NULL;
	return each_id(cli, argc, argv, &cmd_kill_entry, &why, NULL, NULL, do_kill, "killed");
}

static const struct cli_opt kill_options[] = {
	{ .name = "--reason", .arg = "TEXT", .help = "why, kept with the dead letter" },
	{ 0 },
};

const struct cli_cmd cmd_kill_entry = {
	.name = "kill",
	.args = "ID...",
	.opts = kill_options,
	.summary = "move waiting or retrying messages to the dead letters",
	.run = cmd_kill,
};

static int cmd_requeue(struct cli *cli, int argc, char **argv)
{
	if (argc != 3)
		return cli_usage_fail(&cmd_requeue_entry, "requeue", "requeue");
	char *buf = NULL, *err = NULL;
	size_t len;
	char *arg = xasprintf("@%s", argv[2]);
	int r = read_content(arg, &buf, &len, &err);
	free(arg);
	struct bus *b;
	if (r == 0 && cli_bus(cli, &b) == 0)
		r = bus_requeue(b, argv[1], buf, len, &err);
	else if (r == 0)
		r = -1;
	free(buf);
	if (r < 0) {
		if (err)
			cli_fail(EXIT_FAIL, "requeue", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	printf("requeued ");
	put_safe(stdout, argv[1]);
	putchar('\n');
	return EXIT_OK;
}

const struct cli_cmd cmd_requeue_entry = {
	.name = "requeue",
	.args = "ID FILE|-",
	.summary = "replace a dead letter with an edited message (validated) and queue it",
	.run = cmd_requeue,
};

static int cmd_validate(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	if (argc < 2)
		return cli_fail(EXIT_USAGE, "validate", "at least one FILE is required");
	int rc = EXIT_OK;
	for (int i = 1; i < argc; i++) {
		char *buf = NULL, *err = NULL;
		size_t len;
		if (util_read_file(argv[i], MSG_MAX_BYTES, &buf, &len, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "validate", "%s", err);
			free(err);
			continue;
		}
		struct msg *m = NULL;
		struct msg_errors errs = { 0 };
		if (msg_parse(buf, len, &m, &errs) == 0) {
			put_safe(stdout, argv[i]);
			printf(": ok (%s from %s to %s)\n", msg_type_name(m->type), m->from, m->to);
		} else {
			rc = EXIT_FAIL;
			put_safe(stdout, argv[i]);
			printf(": invalid\n");
			for (size_t k = 0; k < errs.count; k++) {
				printf("  ");
				put_safe(stdout, errs.items[k]);
				putchar('\n');
			}
		}
		msg_free(&m);
		msg_errors_release(&errs);
		free(buf);
	}
	return rc;
}

const struct cli_cmd cmd_validate_entry = {
	.name = "validate",
	.args = "FILE...",
	.summary = "check message files against the schemas",
	.run = cmd_validate,
};

struct gc_tally {
	bool dry;
	size_t dropped, read, dead;
};

static void gc_report(void *ctx, const char *what, const char *path)
{
	struct gc_tally *t = ctx;
	if (!strcmp(what, BUS_GC_DROPPED))
		t->dropped++;
	else if (!strcmp(what, BUS_GC_READ))
		t->read++;
	else if (!strcmp(what, BUS_GC_DEAD))
		t->dead++;
	printf("%s ", t->dry ? "would remove" : "removed");
	put_safe(stdout, path);
	printf(" (%s)\n", what);
}

static int cmd_gc(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "gc", &cmd_gc_entry, 0 };
	struct gc_tally t = { 0 };
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "gc", "unexpected argument %s", val);
		t.dry = true;
	}
	if (r < 0)
		return EXIT_USAGE;
	bool dry = t.dry;
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	/* Seed 003's retention: messages, logs, cache, reports. */
	char *err = NULL;
	int64_t now = util_now_ns();
	struct cache *c = NULL;
	int r2 = bus_gc(b, dry, now, gc_report, &t, &err);
	if (r2 == 0)
		r2 = log_gc(cli->log_dir, now, dry, gc_report, &t, &err);
	if (r2 == 0 && (r2 = cache_open(cli->data_dir, &c, &err)) == 0)
		r2 = cache_gc(c, now, dry, gc_report, &t, &err);
	cache_free(&c);
	if (r2 == 0)
		r2 = wf_reports_gc(cli->data_dir, now, dry, gc_report, &t, &err);
	if (r2 < 0) {
		cli_fail(EXIT_FAIL, "gc", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	/* what happened to the messages waiting over 24 hours, counted */
	printf("%s over 24 hours: %zu heartbeats and status messages dropped, %zu "
	       "replies to the operator marked read, %zu to the dead letters\n",
	       dry ? "would do with messages waiting" : "messages waiting", t.dropped,
	       t.read, t.dead);
	return EXIT_OK;
}

static const struct cli_opt gc_options[] = {
	{ .name = "--dry-run", .help = "only say what would be removed" },
	{ 0 },
};

const struct cli_cmd cmd_gc_entry = {
	.name = "gc",
	.opts = gc_options,
	.summary = "apply the retention rules",
	.run = cmd_gc,
};

cJSON *cli_status_json(const struct bus_stats *s, int64_t now)
{
	cJSON *o2 = cJSON_CreateObject();
	cJSON *ib = cJSON_AddObjectToObject(o2, "inboxes");
	for (size_t i = 0; i < s->nagents; i++) {
		cJSON *a = cJSON_AddObjectToObject(ib, s->agents[i].agent);
		cJSON_AddNumberToObject(a, "depth", (double)s->agents[i].depth);
		double age = s->agents[i].oldest_ns ?
			(double)(now - s->agents[i].oldest_ns) / 1e9 : 0;
		cJSON_AddNumberToObject(a, "oldest_age_s",
					age < 0 ? 0 : (double)(int64_t)(age * 1000) / 1000);
		cJSON_AddNumberToObject(a, "processing", (double)s->agents[i].processing);
		cJSON_AddNumberToObject(a, "retry", (double)s->agents[i].retry);
	}
	cJSON_AddNumberToObject(o2, "processing", (double)s->processing);
	cJSON_AddNumberToObject(o2, "retry", (double)s->retry);
	cJSON_AddNumberToObject(o2, "dead_letter", (double)s->dead_letter);
	cJSON_AddNumberToObject(o2, "expired_dropped", (double)s->expired_dropped);
	return o2;
}

static int cmd_status(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "status", &cmd_status_entry, 0 };
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "status", "unexpected argument %s", val);
		json = true;
	}
	if (r < 0)
		return EXIT_USAGE;
	struct bus *b;
	if (cli_bus(cli, &b) < 0)
		return EXIT_FAIL;
	struct bus_stats s;
	char *err = NULL;
	if (bus_stats(b, &s, &err) < 0) {
		cli_fail(EXIT_FAIL, "status", "%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (json) {
		cJSON *o2 = cli_status_json(&s, util_now_ns());
		char *str = json_pretty(o2);
		printf("%s\n", str);
		free(str);
		cJSON_Delete(o2);
	} else {
		printf("%-24s %7s %10s %10s %7s\n", "INBOX", "DEPTH", "OLDEST", "PROCESSING",
		       "RETRY");
		for (size_t i = 0; i < s.nagents; i++) {
			printf("%-24s %7zu    ", s.agents[i].agent, s.agents[i].depth);
			if (s.agents[i].oldest_ns)
				print_age(s.agents[i].oldest_ns);
			else
				printf("%7s", "-");
			printf(" %10zu %7zu\n", s.agents[i].processing, s.agents[i].retry);
		}
		printf("\nprocessing %zu, retrying %zu, dead letters %zu, expired heartbeats "
		       "and status messages dropped %llu\n", s.processing, s.retry, s.dead_letter,
		       (unsigned long long)s.expired_dropped);
	}
	bus_stats_release(&s);
	return EXIT_OK;
}

static const struct cli_opt status_options[] = {
	{ .name = "--json", .help = "print JSON" },
	{ 0 },
};

const struct cli_cmd cmd_status_entry = {
	.name = "status",
	.opts = status_options,
	.summary = "depth and oldest age per inbox, processing, retries, dead letters",
	.run = cmd_status,
};
