/* The agent loop: claim, handle, ack; tick; heartbeat; save state. */
#include "agents/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agents/llm_agent.h"
#include "agents/review.h"
#include "core/json_out.h"
#include "core/loop.h"
#include "core/util.h"
#include "core/banned.h"

#define STATUS_EVERY_NS (30LL * 1000000000)

static const char *const fault_names[] = {
	[FAULT_NONE] = "none", [FAULT_ERROR] = "error", [FAULT_MALFORMED] = "malformed",
	[FAULT_SLOW] = "slow", [FAULT_CRASH] = "crash",
};

int agent_fault_from_name(const char *s)
{
	for (size_t i = 1; i < ARRAY_SIZE(fault_names); i++)
		if (!strcmp(s, fault_names[i]))
			return (int)i;
	return -1;
}

void agent_env_init(struct agent_env *e, const char *data_dir, const char *log_dir)
{
	memset(e, 0, sizeof(*e));
	bus_config_init(&e->bcfg, data_dir);
	e->data_dir = xstrdup(data_dir);
	e->log_dir = xstrdup(log_dir);
	e->market_source = xstrdup("sim");
	e->news_source = xstrdup("sim");
	e->task_timeout_s = 30;
	const char *t = getenv("MADF_TASK_TIMEOUT_S");
	if (t && atoi(t) > 0)
		e->task_timeout_s = atoi(t);
	/* MADF_AGENT_CAPACITY: how many tasks an agent process holds queued
	 * before it rejects new ones (task_acceptance "rejected", the capacity
	 * named in rejection_reason); its heartbeats advertise it. Default 16;
	 * a value that is not an integer from 1 to 1000000 is ignored, as for
	 * the bus's variables. */
	e->capacity = 16;
	const char *c = getenv("MADF_AGENT_CAPACITY");
	if (c && *c) {
		char *end;
		errno = 0;
		long v = strtol(c, &end, 10);
		if (!errno && !*end && v >= 1 && v <= 1000000)
			e->capacity = (int)v;
	}
	e->heartbeat_ms = 5000;
	atomic_init(&e->stop, 0);
}

void agent_env_release(struct agent_env *e)
{
	bus_config_release(&e->bcfg);
	free(e->data_dir);
	free(e->log_dir);
	free(e->market_source);
	free(e->news_source);
	free(e->report_dir);
	for (size_t i = 0; i < e->nfaults; i++)
		free(e->faults[i]);
	llm_agent_settings_free(&e->llm);
	memset(e, 0, sizeof(*e));
}

enum agent_fault agent_env_fault(const struct agent_env *e, const char *agent)
{
	size_t n = strlen(agent);
	for (size_t i = 0; i < e->nfaults; i++) {
		const char *f = e->faults[i];
		if (!strncmp(f, agent, n) && f[n] == ':') {
			int k = agent_fault_from_name(f + n + 1);
			if (k > 0)
				return (enum agent_fault)k;
		}
	}
	return FAULT_NONE;
}

const struct agent_role *const agent_roles[] = {
	&role_product_manager, &role_research_agent_1, &role_research_agent_2,
	&role_validator, &role_report_writer,
};
const size_t agent_nroles = ARRAY_SIZE(agent_roles);

const struct agent_role *agent_role_find(const char *name)
{
	const char *c = msg_agent_canonical(name);
	for (size_t i = 0; i < agent_nroles; i++)
		if (!strcmp(agent_roles[i]->name, c))
			return agent_roles[i];
	/* the code review crew: not part of the weekly run */
	return review_role_find(c);
}

/* ---- state ---------------------------------------------------------------- */

static void state_load(struct agent *a)
{
	char *buf = NULL, *err = NULL;
	size_t len;
	a->state = NULL;
	if (util_read_file(a->state_path, 64 << 20, &buf, &len, &err) == 0) {
		a->state = json_parse_strict(buf, len, &err);
		if (!cJSON_IsObject(a->state)) {
			/* Keep the damaged file for the operator; start afresh. */
			char *aside = xasprintf("%s.damaged-%lld", a->state_path,
						(long long)(util_now_ns() / 1000000000));
			rename(a->state_path, aside);
			log_write(a->log, LOG_ERRORS, LOG_ERROR, "state_damaged", NULL,
				  "state file %s unreadable (%s); kept as %s",
				  a->state_path, err ? err : "not an object", aside);
			free(aside);
			cJSON_Delete(a->state);
			a->state = NULL;
		}
	}
	free(buf);
	free(err);
	if (!a->state)
		a->state = cJSON_CreateObject();
}

/* Merges map k of theirs into ours: entries we lack are taken, and of two
 * versions the newer (updated_ns) wins. */
static void merge_map(cJSON *ours, const cJSON *theirs, const char *k)
{
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(theirs, k);
	if (!cJSON_IsObject(tm))
		return;
	cJSON *om = cJSON_GetObjectItemCaseSensitive(ours, k);
	if (!cJSON_IsObject(om)) {
		cJSON_DeleteItemFromObjectCaseSensitive(ours, k);
		om = cJSON_AddObjectToObject(ours, k);
	}
	const cJSON *e;
	cJSON_ArrayForEach(e, tm) {
		cJSON *mine = cJSON_GetObjectItemCaseSensitive(om, e->string);
		if (!mine)
			cJSON_AddItemToObject(om, e->string, cJSON_Duplicate(e, 1));
		else if (jnum(e, "updated_ns", 0) > jnum(mine, "updated_ns", 0))
			cJSON_ReplaceItemInObjectCaseSensitive(om, e->string, cJSON_Duplicate(e, 1));
	}
}

static void merge_from_disk(struct agent *a)
{
	char *buf = NULL;
	size_t len;
	if (util_read_file(a->state_path, 64 << 20, &buf, &len, NULL) < 0)
		return;
	cJSON *theirs = json_parse_strict(buf, len, NULL);
	free(buf);
	if (cJSON_IsObject(theirs)) {
		merge_map(a->state, theirs, "tasks");
		merge_map(a->state, theirs, "validated");
	}
	cJSON_Delete(theirs);
}

int agent_state_locked(struct agent *a, void (*fn)(struct agent *a, void *ctx),
		       void *ctx, char **err)
{
	int lock = -1;
	if (a->role->shared_state) {
		char *lp = xasprintf("%s.lock", a->state_path);
		lock = util_lock_file(lp, true, NULL);
		free(lp);
		merge_from_disk(a);
	}
	if (fn)
		fn(a, ctx);
	cJSON_DeleteItemFromObject(a->state, "agent");
	cJSON_AddStringToObject(a->state, "agent", a->name);
	char *s = json_pretty(a->state);
	int r = util_write_file_atomic(a->state_path, s, strlen(s), a->env->bcfg.durable, err);
	free(s);
	if (lock >= 0)
		close(lock); /* releases the lock */
	return r;
}

int agent_save_state(struct agent *a, char **err)
{
	return agent_state_locked(a, NULL, NULL, err);
}

/* ---- lifecycle ------------------------------------------------------------ */

static void on_dead(void *ctx, const char *agent, const char *name,
		    const char *reason, const char *error)
{
	struct agent *a = ctx;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "error_type", "dead_letter");
	cJSON_AddStringToObject(f, "reason", reason);
	cJSON_AddStringToObject(f, "file", name ? name : "");
	log_write(a->log, LOG_ERRORS, LOG_WARN, "dead_letter", f,
		  "message %s from the inbox of %s dead-lettered (%s): %s",
		  name ? name : "?", agent ? agent : "?", reason, error);
	cJSON_Delete(f);
	a->errors_today++;
}

/* On the bus's lease thread (core/bus_lease.c): log_write only, which is
 * thread-safe; the agent's counters are its own thread's. agent_free stops
 * that thread (bus_lease_stop) before it frees anything. */
static void on_lease_max(void *ctx, const char *agent, const char *message_id,
			 int64_t held_ms, int64_t max_s)
{
	struct agent *a = ctx;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "error_type", "lease_max");
	cJSON_AddStringToObject(f, "message_id", message_id);
	cJSON_AddNumberToObject(f, "held_s", (double)(held_ms / 1000));
	cJSON_AddNumberToObject(f, "lease_max_s", (double)max_s);
	log_write(a->log, LOG_ERRORS, LOG_WARN, "lease_max", f,
		  "%s held message %s for %lld.%03lld s, over the lease maximum of %lld s "
		  "(MADF_LEASE_MAX_S): its handler seems stuck; the lease is renewed no more, "
		  "the message will be delivered again once it runs out, and this "
		  "handler's answer will be refused", agent, message_id, (long long)(held_ms / 1000),
		  (long long)(held_ms % 1000), (long long)max_s);
	cJSON_Delete(f);
}

int agent_open(const struct agent_role *role, struct agent_env *env,
	       struct agent **out, char **err)
{
	struct agent *a = xcalloc(1, sizeof(*a));
	a->role = role;
	a->env = env;
	util_strlcpy(a->name, role->name, sizeof(a->name));
	a->started_ns = util_now_ns();
	a->fault = agent_env_fault(env, a->name);
	if (log_writer_open(env->log_dir, a->name, &a->log, err) < 0)
		goto fail;
	if (bus_open(&env->bcfg, &a->bus, err) < 0)
		goto fail;
	a->bus->on_dead = on_dead;
	a->bus->on_dead_ctx = a;
	a->bus->on_lease_max = on_lease_max;
	a->bus->on_lease_max_ctx = a;
	if (bus_carries_logs(a->bus))
		agent_log_set_sink(a->log, bus_log_sink, a->bus); /* logs travel too */
	if (bus_consumer_open(a->bus, a->name, &a->cons, err) < 0)
		goto fail;
	char *sdir = xasprintf("%s/state", env->data_dir);
	int r = util_mkdirs(sdir, err);
	free(sdir);
	if (r < 0)
		goto fail;
	a->state_path = xasprintf("%s/state/%s-state.json", env->data_dir, a->name);
	state_load(a);
	if (role->init && role->init(a, err) < 0)
		goto fail;
	*out = a;
	return 0;
fail:
	agent_free(&a);
	return -1;
}

void agent_free(struct agent **ap)
{
	struct agent *a = *ap;
	if (!a)
		return;
	/* The bus's lease keeper first (joined): its on_lease_max logs on
	 * a->log, and the log's sink is this bus; a claim capped while the
	 * agent is taken apart would otherwise be reported on an agent half
	 * gone (the sink reset under the thread's feet, the log freed). */
	if (a->bus)
		bus_lease_stop(a->bus);
	if (a->role && a->role->fini && a->impl)
		a->role->fini(a);
	bus_consumer_free(&a->cons);
	agent_log_set_sink(a->log, NULL, NULL);
	bus_free(&a->bus);
	log_writer_free(&a->log);
	cJSON_Delete(a->state);
	free(a->state_path);
	free(a);
	*ap = NULL;
}

/* ---- sending ---------------------------------------------------------------- */

static struct msg *build(struct agent *a, const char *to, enum msg_type type,
			 cJSON *content, const char *id, const char *reply_to,
			 const char *corr, enum msg_priority prio)
{
	struct msg *m = msg_new(a->name, to, type, content);
	if (!m)
		return NULL;
	if (id)
		util_strlcpy(m->id, id, sizeof(m->id));
	m->priority = prio;
	if (reply_to)
		m->reply_to = xstrdup(reply_to);
	if (corr)
		m->correlation_id = xstrdup(corr);
	return m;
}

int agent_send(struct agent *a, const char *to, enum msg_type type,
	       cJSON *content, const char *id, const char *reply_to,
	       const char *correlation_id, enum msg_priority prio,
	       char *id_out, char **err)
{
	struct msg *m = build(a, to, type, content, id, reply_to, correlation_id, prio);
	if (!m)
		return err_set(err, "cannot build a %s message to %s", msg_type_name(type), to);
	int r = bus_send(a->bus, m, err);
	if (r == 0 && id_out)
		util_strlcpy(id_out, m->id, MSG_ID_MAX + 1);
	if (r < 0) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "error_type", "send_failed");
		cJSON_AddStringToObject(f, "to", to);
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "send_failed", f,
			  "cannot send %s to %s: %s", msg_type_name(type), to,
			  err && *err ? *err : "?");
		cJSON_Delete(f);
		a->errors_today++;
	}
	msg_free(&m);
	return r;
}

int agent_send_malformed(struct agent *a, const char *to, enum msg_type type,
			 cJSON *content, const char *reply_to,
			 const char *correlation_id)
{
	struct msg *m = build(a, to, type, content, NULL, reply_to, correlation_id,
			      PRIO_NORMAL);
	if (!m)
		return -1;
	char *json = msg_to_json(m, true);
	char *err = NULL;
	int r = a->bus->t->send(a->bus, m, json, strlen(json), &err);
	log_write(a->log, LOG_EVENTS, LOG_WARN, "fault_malformed", NULL,
		  "injected fault: sent an invalid %s to %s", msg_type_name(type), to);
	free(err);
	free(json);
	msg_free(&m);
	return r;
}

/* ---- heartbeat and status ----------------------------------------------------- */

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rss_mb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (double)rss * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static void send_heartbeat(struct agent *a, const char *status)
{
	int64_t now = util_now_ns();
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddNumberToObject(c, "uptime_seconds",
				(double)((now - a->started_ns) / 1000000) / 1000.0);
	cJSON_AddNumberToObject(c, "active_tasks", a->active_tasks);
	if (a->current_task[0])
		cJSON_AddStringToObject(c, "current_task", a->current_task);
	else
		cJSON_AddNullToObject(c, "current_task");
	cJSON_AddNumberToObject(c, "pid", (double)getpid());
	if (a->role->has_capacity)
		cJSON_AddNumberToObject(c, "capacity", a->env->capacity);
	cJSON_AddNumberToObject(c, "sequence", (double)a->heartbeat_seq++);
	/* The state file always carries the latest heartbeat (the console
	 * reads it); the product_manager also gets it as a message. */
	cJSON_DeleteItemFromObject(a->state, "heartbeat");
	cJSON *h = cJSON_Duplicate(c, 1);
	char ts[40];
	util_iso8601(now, ts, sizeof(ts));
	cJSON_AddStringToObject(h, "at", ts);
	/* with the pid, so that a console on this host sees a process that
	 * is gone as offline at once (the message keeps its schema) */
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) == 0 && host[0])
		cJSON_AddStringToObject(h, "host", host);
	cJSON_AddItemToObject(a->state, "heartbeat", h);
	/* The counters of the last system_status, kept current between two
	 * (the console reads them from the state file). */
	cJSON *st = cJSON_GetObjectItem(a->state, "status");
	if (cJSON_IsObject(st)) {
		cJSON_ReplaceItemInObject(st, "active_tasks", cJSON_CreateNumber(a->active_tasks));
		cJSON_ReplaceItemInObject(st, "completed_tasks_today",
					  cJSON_CreateNumber(a->completed_today));
		cJSON_ReplaceItemInObject(st, "error_count_today", cJSON_CreateNumber(a->errors_today));
	}
	agent_save_state(a, NULL);
	if (strcmp(a->name, "product_manager")) {
		struct msg *m = build(a, "product_manager", MSG_HEARTBEAT, c, NULL, NULL,
				      NULL, PRIO_LOW);
		if (m) {
			m->timeout_s = a->env->heartbeat_ms / 1000 * 6 + 30;
			bus_send(a->bus, m, NULL);
			msg_free(&m);
		}
	} else {
		cJSON_Delete(c);
	}
}

static void send_status(struct agent *a)
{
	static __thread double last_cpu;
	static __thread int64_t last_ns;
	int64_t now = util_now_ns();
	double cpu = thread_cpu_s();
	double pct = last_ns ? (cpu - last_cpu) / ((double)(now - last_ns) / 1e9) * 100 : 0;
	last_cpu = cpu;
	last_ns = now;
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "agent_status",
				a->crashed ? "offline" :
				a->errors_today > a->completed_today && a->errors_today > 2 ?
				"degraded" : "healthy");
	cJSON_AddNumberToObject(c, "cpu_usage_percent", pct < 0 ? 0 : (double)(int)(pct * 10) / 10);
	cJSON_AddNumberToObject(c, "memory_usage_mb", (double)(int)(rss_mb() * 10) / 10);
	cJSON_AddNumberToObject(c, "active_tasks", a->active_tasks);
	cJSON_AddNumberToObject(c, "completed_tasks_today", a->completed_today);
	cJSON_AddNumberToObject(c, "error_count_today", a->errors_today);
	char ts[40];
	util_iso8601(a->last_success_ns ? a->last_success_ns : a->started_ns, ts, sizeof(ts));
	cJSON_AddStringToObject(c, "last_successful_operation", ts);
	cJSON *pm = cJSON_AddObjectToObject(c, "performance_metrics");
	cJSON_AddNumberToObject(pm, "uptime_seconds", (double)((now - a->started_ns) / 1000000000));
	cJSON_AddNumberToObject(pm, "heartbeats_sent", (double)a->heartbeat_seq);
	cJSON_DeleteItemFromObject(a->state, "status");
	cJSON_AddItemToObject(a->state, "status", cJSON_Duplicate(c, 1));
	if (strcmp(a->name, "product_manager")) {
		struct msg *m = build(a, "product_manager", MSG_SYSTEM_STATUS, c, NULL, NULL,
				      NULL, PRIO_LOW);
		if (m) {
			m->timeout_s = 300;
			bus_send(a->bus, m, NULL);
			msg_free(&m);
		}
	} else {
		cJSON_Delete(c);
	}
}

void agent_heartbeat_now(struct agent *a)
{
	a->next_heartbeat_ns = 0;
}

void agent_heartbeat_busy(struct agent *a)
{
	int64_t now = util_now_ns();
	if (now < a->next_heartbeat_ns)
		return;
	send_heartbeat(a, "busy");
	a->next_heartbeat_ns = now + a->env->heartbeat_ms * 1000000;
}

/* ---- the loop ---------------------------------------------------------------------- */

static void handle_one(struct agent *a, struct bus_delivery **d)
{
	const struct msg *m = (*d)->msg;
	char *err = NULL;
	util_strlcpy(a->current_task, m->id, sizeof(a->current_task));
	int done = a->completed_today, errs = a->errors_today;
	/* However long this blocks the thread (and its reactor), the bus's
	 * keeper renews the claim's lease until bus_ack, bus_nack or
	 * bus_delivery_free below. */
	int r = a->role->handle(a, m, &err);
	a->current_task[0] = '\0';
	if (a->completed_today != done || a->errors_today != errs)
		agent_heartbeat_now(a); /* counters changed: show it now */
	if (a->crashed) {
		/* An injected crash: the claim stays where a dead consumer
		 * would leave it. */
		bus_delivery_free(d);
		free(err);
		return;
	}
	char *e2 = NULL;
	int rc;
	if (r == AGENT_DONE) {
		rc = bus_ack(a->cons, d, &e2);
	} else {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "error_type", r == AGENT_REJECT ? "rejected" : "handler_failed");
		cJSON_AddStringToObject(f, "message_id", m->id);
		cJSON_AddStringToObject(f, "message_type", msg_type_name(m->type));
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "handler_failed", f,
			  "handling %s %s failed: %s", msg_type_name(m->type), m->id,
			  err ? err : "?");
		cJSON_Delete(f);
		a->errors_today++;
		rc = bus_nack(a->cons, d, err ? err : "handler failed", r == AGENT_REJECT, &e2);
	}
	if (rc < 0) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "bus_error", NULL, "%s", e2 ? e2 : "?");
		bus_delivery_free(d);
	}
	free(e2);
	free(err);
}

/* The agent's reactor (core/loop.h): the consumer's fd, and one timer for
 * the step (claims, tick, heartbeat, status) that returns its next delay. */
struct run {
	struct agent *a;
	struct loop *l;
	int64_t timer;      /* the step's timer */
	bool slept;         /* the last step waited: the consumer may have news */
};

#define STEP_MAX_MS 250 /* env->stop is noticed within this */

/* One step: what is claimable now (64 at most), the role's tick, the
 * heartbeat and the status when due. Returns the ms until the next step
 * (the consumer's fd may call one sooner), or LOOP_NOMORE once stopped. */
static int64_t run_step(struct run *r, bool woken)
{
	struct agent *a = r->a;
	if (woken || r->slept)
		bus_consumer_wait(a->cons, 0); /* drains the fd; a polling consumer rescans */
	for (int i = 0; i < 64 && !atomic_load(&a->env->stop) && !a->crashed; i++) {
		struct bus_delivery *d;
		char *err = NULL;
		int k = bus_claim(a->cons, &d, &err);
		if (k < 0) {
			log_write(a->log, LOG_ERRORS, LOG_ERROR, "bus_error", NULL,
				  "%s", err ? err : "?");
			free(err);
			break;
		}
		if (k == 0)
			break;
		handle_one(a, &d);
	}
	if (atomic_load(&a->env->stop) || a->crashed) {
		loop_stop(r->l);
		return LOOP_NOMORE;
	}
	int64_t wait_ms = STEP_MAX_MS;
	if (a->role->tick) {
		int done = a->completed_today, active = a->active_tasks;
		bool waiting = a->waiting;
		int64_t t = a->role->tick(a);
		if (a->completed_today != done || a->active_tasks != active ||
		    a->waiting != waiting)
			agent_heartbeat_now(a); /* what it does changed: say so */
		if (t >= 0 && t < wait_ms)
			wait_ms = t;
	}
	int64_t now = util_now_ns();
	if (now >= a->next_heartbeat_ns) {
		send_heartbeat(a, a->waiting ? "waiting" : a->active_tasks ? "busy" : "idle");
		a->next_heartbeat_ns = now + a->env->heartbeat_ms * 1000000;
		/* Tool usage reaches usage.json while the agents run, for
		 * the console's tools view and overview, not only at exit. */
		if (tools_unsaved(a->env->tools))
			tools_save_usage(a->env->tools, NULL);
	}
	if (now >= a->next_status_ns) {
		send_status(a);
		a->next_status_ns = now + STATUS_EVERY_NS;
	}
	int c = bus_consumer_timeout(a->cons);
	if (c >= 0 && c < wait_ms)
		wait_ms = c;
	r->slept = wait_ms > 0;
	return wait_ms;
}

static int64_t on_step_timer(struct loop *l, int64_t id, void *ctx)
{
	(void)l;
	(void)id;
	return run_step(ctx, false);
}

/* The consumer's fd rang: a step now, and the timer re-armed from it. */
static void on_consumer_fd(struct loop *l, int fd, int mask, void *ctx)
{
	struct run *r = ctx;
	if (mask & LOOP_ERROR) {
		/* The step's timer goes on claiming at its pace. */
		log_write(r->a->log, LOG_ERRORS, LOG_ERROR, "bus_error", NULL,
			  "the bus consumer's descriptor failed: claiming every %d ms",
			  STEP_MAX_MS);
		loop_del_fd(l, fd, LOOP_READ);
	}
	int64_t next = run_step(r, true);
	loop_del_timer(l, r->timer);
	r->timer = next == LOOP_NOMORE ? 0 : loop_add_timer(l, next, on_step_timer, r, NULL);
}

int agent_run(struct agent *a)
{
	char *err = NULL;
	struct run r = { .a = a, .l = loop_new(&err) };
	if (!r.l) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "start_failed", NULL,
			  "%s cannot start: %s", a->name, err);
		free(err);
		return -1;
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", (double)getpid());
	if (a->fault != FAULT_NONE)
		cJSON_AddStringToObject(f, "injected_fault", fault_names[a->fault]);
	log_write(a->log, LOG_EVENTS, LOG_INFO, "start", f, "%s started", a->name);
	cJSON_Delete(f);
	send_status(a);
	a->next_status_ns = util_now_ns() + STATUS_EVERY_NS;
	int fd = bus_consumer_fd(a->cons);
	if (fd >= 0 && loop_add_fd(r.l, fd, LOOP_READ, on_consumer_fd, &r, &err) < 0)
		BUG("the consumer's fd cannot be watched");
	r.timer = loop_add_timer(r.l, 0, on_step_timer, &r, NULL);
	if (loop_run(r.l, &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_ERROR, "loop_failed", NULL, "%s", err);
		free(err);
	}
	loop_free(&r.l);
	if (a->crashed) {
		log_write(a->log, LOG_EVENTS, LOG_ERROR, "crash", NULL,
			  "injected fault: %s crashed", a->name);
		return 0;
	}
	send_heartbeat(a, "stopping");
	agent_save_state(a, NULL);
	log_write(a->log, LOG_EVENTS, LOG_INFO, "stop", NULL, "%s stopped", a->name);
	return 0;
}

static void *thread_main(void *p)
{
	agent_run(p);
	return NULL;
}

int agent_start_thread(struct agent *a, char **err)
{
	int r = pthread_create(&a->thread, NULL, thread_main, a);
	if (r)
		return err_set(err, "cannot start the thread of %s: %s", a->name, strerror(r));
	return 0;
}

void agent_join(struct agent *a)
{
	pthread_join(a->thread, NULL);
}
