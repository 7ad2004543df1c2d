/* Bus front end: configuration, validation and limits common to every
 * transport, then dispatch to the transport. */
#include "core/bus.h"
#include "core/bus_drop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/bus_fs.h"
#include "core/bus_lease.h"
#include "core/bus_nats.h"
#include "core/util.h"
#include "core/banned.h"

const char *const bus_default_agents[] = {
	"product_manager", "research_agent_1", "research_agent_2",
	"validator_agent", "report_writer",
};
const size_t bus_default_agent_count = ARRAY_SIZE(bus_default_agents);

static long env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return def;
	return v;
}

void bus_config_init(struct bus_config *cfg, const char *data_dir)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_dir = xstrdup(data_dir ? data_dir : "data");
	const char *url = getenv("MADF_BUS");
	if (!url || !*url)
		url = getenv("BUS_URL");
	cfg->url = xstrdup(url && *url ? url : "file:");
	cfg->durable = !getenv("MADF_NO_FSYNC") || !*getenv("MADF_NO_FSYNC") ||
		       !strcmp(getenv("MADF_NO_FSYNC"), "0");
	cfg->max_attempts = (int)env_long("MAX_RETRY_ATTEMPTS", 3, 1, 100);
	cfg->inbox_limit = (size_t)env_long("MADF_INBOX_LIMIT", 1000, 1, 100000000);
	cfg->max_bytes = MSG_MAX_BYTES;
	cfg->retry_base_ms = env_long("MADF_RETRY_BASE_MS", 1000, 0, 86400000);
	cfg->retry_max_ms = env_long("MADF_RETRY_MAX_MS", 300000, 0, 86400000);
	cfg->lease_s = env_long("MADF_LEASE_S", 300, 1, 86400 * 7);
	cfg->lease_max_s = env_long("MADF_LEASE_MAX_S", 7200, 1, 86400 * 7);
	cfg->poll_interval_s = 1.0;
	const char *pi = getenv("MESSAGE_POLL_INTERVAL");
	if (pi && *pi) {
		char *end;
		double v = strtod(pi, &end);
		if (!*end && v >= 0.01 && v <= 3600)
			cfg->poll_interval_s = v;
	}
	const char *fp = getenv("MADF_FORCE_POLL");
	cfg->force_poll = fp && *fp && strcmp(fp, "0");
}

void bus_config_release(struct bus_config *cfg)
{
	free(cfg->data_dir);
	cfg->data_dir = NULL;
	free(cfg->url);
	cfg->url = NULL;
}

static const char *const queue_names[BUS_Q_COUNT] = {
	[BUS_Q_INBOX] = "inbox",
	[BUS_Q_PROCESSING] = "processing",
	[BUS_Q_RETRY] = "retry",
	[BUS_Q_DEAD] = "dead-letter",
	[BUS_Q_PROCESSED] = "processed",
};

const char *bus_queue_name(enum bus_queue q)
{
	return (unsigned)q < BUS_Q_COUNT ? queue_names[q] : "?";
}

int bus_queue_from_name(const char *s)
{
	for (int i = 0; i < BUS_Q_COUNT; i++)
		if (!strcmp(s, queue_names[i]))
			return i;
	if (!strcmp(s, "dlq") || !strcmp(s, "dead"))
		return BUS_Q_DEAD;
	return -1;
}

void bus_entry_release(struct bus_entry *e)
{
	free(e->agent);
	free(e->name);
	free(e->path);
	free(e->message_id);
	free(e->owner);
	free(e->from);
	free(e->to);
	free(e->type);
	free(e->reason);
	free(e->error);
	free(e->original_inbox);
	memset(e, 0, sizeof(*e));
}

void bus_entries_free(struct bus_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bus_entry_release(&v[i]);
	free(v);
}

void bus_stats_release(struct bus_stats *s)
{
	free(s->agents);
	memset(s, 0, sizeof(*s));
}

int bus_open(const struct bus_config *cfg, struct bus **out, char **err)
{
	struct bus *b = xcalloc(1, sizeof(*b));
	b->cfg = *cfg;
	b->cfg.data_dir = xstrdup(cfg->data_dir);
	b->cfg.url = xstrdup(cfg->url ? cfg->url : "file:");
	const char *url = b->cfg.url;
	int r;
	if (!strcmp(url, "file:")) {
		b->t = &bus_fs_transport;
		r = bus_fs_open(b, err);
	} else if (bus_nats_url(url)) {
		b->t = &bus_nats_transport;
		r = bus_nats_open(b, err);
	} else {
		/* The scheme is named only when it is one: what precedes a
		 * colon may be a user name. */
		size_t sl = strspn(url, "abcdefghijklmnopqrstuvwxyz0123456789+.-");
		if (sl > 0 && sl <= 16 && !strncmp(url + sl, "://", 3))
			r = err_set(err, "unknown bus URL scheme \"%.*s\": use file: or "
				    "nats://host:port[,host:port...] (or tls://)",
				    (int)sl, url);
		else
			r = err_set(err, "invalid bus URL: use file: or "
				    "nats://host:port[,host:port...] (or tls://)");
	}
	if (r < 0) {
		bus_config_release(&b->cfg);
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}

void bus_free(struct bus **bp)
{
	struct bus *b = *bp;
	if (!b)
		return;
	bus_lease_close(b); /* renewals use the transport: stopped first */
	b->t->close(b);
	bus_config_release(&b->cfg);
	free(b);
	*bp = NULL;
}

int bus_send(struct bus *b, const struct msg *m, char **err)
{
	struct msg_errors errs = { 0 };
	if (msg_validate(m, &errs) < 0) {
		char *j = msg_errors_join(&errs);
		msg_errors_release(&errs);
		err_set(err, "message refused: %s", j);
		free(j);
		return -1;
	}
	char *json = msg_to_json(m, true);
	size_t len = strlen(json);
	if (len + 1 > b->cfg.max_bytes) {
		free(json);
		return err_set(err,
			       "message refused: %zu bytes is over the %zu-byte limit",
			       len + 1, b->cfg.max_bytes);
	}
	/* Files end with a newline, as text files do. */
	json = xrealloc(json, len + 2);
	json[len++] = '\n';
	json[len] = '\0';
	int r = b->t->send(b, m, json, len, err);
	free(json);
	return r;
}

int bus_consumer_open(struct bus *b, const char *agent,
		      struct bus_consumer **out, char **err)
{
	if (!util_valid_agent_name(agent))
		return err_set(err, "invalid agent name \"%s\": must match [a-z0-9][a-z0-9_-]{0,63}",
			       agent);
	return b->t->consumer_open(b, agent, out, err);
}

/* Every consumer starts with a pointer to its bus. */
struct bus_consumer_head {
	struct bus *bus;
};
#define CB(c) (((struct bus_consumer_head *)(void *)(c))->bus)

void bus_consumer_free(struct bus_consumer **c)
{
	if (!*c)
		return;
	bus_lease_forget_consumer(CB(*c), *c);
	CB(*c)->t->consumer_free(*c);
	*c = NULL;
}

int bus_consumer_fd(struct bus_consumer *c)
{
	return CB(c)->t->consumer_fd(c);
}

int bus_consumer_wait(struct bus_consumer *c, int timeout_ms)
{
	return CB(c)->t->consumer_wait(c, timeout_ms);
}

int bus_consumer_timeout(struct bus_consumer *c)
{
	return CB(c)->t->consumer_timeout(c);
}

int bus_claim(struct bus_consumer *c, struct bus_delivery **d, char **err)
{
	*d = NULL;
	int r = CB(c)->t->claim(c, d, err);
	if (r == 1)
		bus_lease_hold(CB(c), c, *d);
	return r;
}

void bus_delivery_free(struct bus_delivery **d)
{
	if (!*d)
		return;
	bus_lease_drop(*d);
	msg_free(&(*d)->msg);
	free((*d)->name);
	free((*d)->canon);
	free((*d)->agent);
	free(*d);
	*d = NULL;
}

/* Each answer stops the renewal first: none is under way when the
 * transport answers. A handler that held its delivery past the lease's
 * maximum lost it: its answer is refused, the transport never sees it (on
 * NATS a late ack would take the message from its next holder). */
int bus_ack(struct bus_consumer *c, struct bus_delivery **d, char **err)
{
	if (bus_lease_end(*d, err) < 0) {
		bus_delivery_free(d);
		return -1;
	}
	int r = CB(c)->t->ack(c, *d, err);
	bus_delivery_free(d);
	return r;
}

int bus_nack(struct bus_consumer *c, struct bus_delivery **d,
	     const char *error, bool permanent, char **err)
{
	if (bus_lease_end(*d, err) < 0) {
		bus_delivery_free(d);
		return -1;
	}
	int r = CB(c)->t->nack(c, *d, error, permanent, err);
	bus_delivery_free(d);
	return r;
}

int bus_giveback(struct bus_consumer *c, struct bus_delivery **d, char **err)
{
	if (bus_lease_end(*d, err) < 0) {
		bus_delivery_free(d);
		return -1;
	}
	int r = CB(c)->t->release(c, *d, err);
	bus_delivery_free(d);
	return r;
}

int bus_list(struct bus *b, enum bus_queue q, const char *agent,
	     bool content, struct bus_entry **out, size_t *n, char **err)
{
	if (agent && !util_valid_agent_name(agent))
		return err_set(err, "invalid agent name \"%s\"", agent);
	return b->t->list(b, q, agent, content, out, n, err);
}

int bus_each_dead(struct bus *b, void (*fn)(void *ctx, const struct bus_entry *e),
		  void *ctx, char **err)
{
	return b->t->each_dead(b, fn, ctx, err);
}

int bus_find(struct bus *b, const char *id, struct bus_entry *out, char **err)
{
	return b->t->find(b, id, out, err);
}

int bus_read(struct bus *b, const struct bus_entry *e, char **json,
	     size_t *len, char **err)
{
	return b->t->read(b, e, json, len, err);
}

int bus_retry_note(struct bus *b, const char *id, const char *to, char **note,
		   char **err)
{
	if (note)
		*note = NULL;
	if (to && !util_valid_agent_name(to))
		return err_set(err, "invalid agent name \"%s\": must match [a-z0-9][a-z0-9_-]{0,63}",
			       to);
	return b->t->retry(b, id, to, note, err);
}

int bus_retry(struct bus *b, const char *id, const char *to, char **err)
{
	return bus_retry_note(b, id, to, NULL, err);
}

int bus_remove(struct bus *b, const char *id, char **err)
{
	return b->t->remove(b, id, NULL, err);
}

int bus_remove_entry(struct bus *b, const char *id, struct bus_entry *out, char **err)
{
	memset(out, 0, sizeof(*out));
	return b->t->remove(b, id, out, err);
}

int bus_kill(struct bus *b, const char *id, const char *why, char **err)
{
	return b->t->kill(b, id, why, err);
}

int bus_requeue(struct bus *b, const char *id, const char *json, size_t len,
		char **err)
{
	return b->t->requeue(b, id, json, len, err);
}

int bus_sweep(struct bus *b, const char *agent, char **err)
{
	return b->t->sweep(b, agent, err);
}

int bus_gc(struct bus *b, bool dry_run, int64_t now_ns,
	   void (*report)(void *ctx, const char *what, const char *path),
	   void *ctx, char **err)
{
	return b->t->gc(b, dry_run, now_ns, report, ctx, err);
}

int bus_monitor_open(struct bus *b, struct bus_monitor **out, char **err)
{
	return b->t->monitor_open(b, out, err);
}

#define MB(m) (((struct bus_consumer_head *)(void *)(m))->bus)

void bus_monitor_free(struct bus_monitor **m)
{
	if (!*m)
		return;
	MB(*m)->t->monitor_free(*m);
	*m = NULL;
}

int bus_monitor_fd(struct bus_monitor *m)
{
	return MB(m)->t->monitor_fd(m);
}

int bus_monitor_process(struct bus_monitor *m)
{
	return MB(m)->t->monitor_process(m);
}

void bus_monitor_stats(struct bus_monitor *m, struct bus_stats *out)
{
	MB(m)->t->monitor_stats(m, out);
}

int bus_stats(struct bus *b, struct bus_stats *out, char **err)
{
	struct bus_monitor *m;
	if (bus_monitor_open(b, &m, err) < 0)
		return -1;
	bus_monitor_stats(m, out);
	bus_monitor_free(&m);
	return 0;
}

int bus_forget_agent(struct bus *b, const char *agent, char **err)
{
	if (!util_valid_agent_name(agent))
		return err_set(err, "\"%s\" is not an agent name", agent);
	return b->t->forget ? b->t->forget(b, agent, err) : 0;
}

const char *bus_owner(struct bus *b)
{
	return b->t->owner(b);
}

bool bus_owner_gone(struct bus *b, const char *owner)
{
	return b->t->owner_gone(b, owner);
}

enum bus_gc_fate bus_gc_fate(const char *agent, const char *type)
{
	int t = type ? msg_type_from_name(type) : -1;
	if (t >= 0 && bus_drop_type((enum msg_type)t))
		return BUS_GC_FATE_DROP;
	if (agent && !strcmp(agent, "operator"))
		return BUS_GC_FATE_READ;
	return BUS_GC_FATE_DEAD;
}

int64_t bus_backoff_ms(const struct bus_config *cfg, int n)
{
	int64_t d = cfg->retry_base_ms;
	for (int i = 1; i < n && d < cfg->retry_max_ms; i++)
		d *= 2;
	if (d > cfg->retry_max_ms)
		d = cfg->retry_max_ms;
	if (d <= 1)
		return d;
	uint32_t r;
	util_random(&r, sizeof(r));
	return d / 2 + (int64_t)(r % (uint32_t)(d / 2 + 1));
}

int bus_parse_stored(const char *name, const char *buf, size_t len, struct msg **m,
		     char **err)
{
	struct msg_errors errs = { 0 };
	int r = msg_parse(buf, len, m, &errs);
	if (r < 0) {
		char *j = msg_errors_join(&errs);
		err_set(err, "%s is invalid and would fail again (%s); fix it with "
			     "the console's edit action or `madf requeue`", name, j);
		free(j);
	}
	msg_errors_release(&errs);
	return r;
}

const char *bus_undeliverable(const struct msg *m, const char *agent, char **error)
{
	if (strcmp(m->to, agent) && strcmp(m->to, "broadcast")) {
		*error = xasprintf("addressed to %s, found in the inbox of %s", m->to, agent);
		return "misrouted";
	}
	if (m->timeout_s >= 0 && m->ts_ns + m->timeout_s * 1000000000LL < util_now_ns()) {
		*error = xasprintf("timeout of %lld s passed before delivery (sent %s)",
				   (long long)m->timeout_s, m->timestamp);
		return "expired";
	}
	return NULL;
}
