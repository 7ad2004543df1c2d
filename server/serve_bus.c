/* madf serve on madf's bus: the controller agent and the conversations'
 * agents (server/serve_bus.h). */
#include "server/serve_bus.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/bus.h"
#include "core/json_out.h"
#include "core/log.h"
#include "core/util.h"
#include "server/conv_priv.h"
#include "core/banned.h"

#define REFRESH_MS 10000L  /* a member's heartbeat rewritten at least this often */
#define CLAIM_WAIT_MS 2000 /* for its assignment to reach the member's inbox */
#define JOBS_EVERY_MS 50   /* the conversations' bus work is looked for this often */

static struct {
	struct agent_env *env;
	struct bus *bus;     /* the conversations' (sends, their members' consumers) */
	struct agent *ctl;
	bool running;
	long turn_delay_ms;  /* MADF_SERVE_BUS_DELAY_MS (tests: a slow bus) */
} sb;

/* The server stops (serve_bus_drain): a turn of a conversation that has
 * ended is not put on the bus. */
static atomic_bool draining;

struct bus *serve_bus(void)
{
	return sb.bus;
}

/* ---- the controller ---------------------------------------------------------- */

/* An operator_control: cancel of a conversation ("run_id" or "task_id":
 * its session id), answered to its sender with a task_acceptance saying
 * the outcome (applied, refused, failed) and why. */
static void ctl_control(struct agent *a, const struct msg *m)
{
	const char *action = jstr(m->content, "action");
	const char *session = jstr(m->content, "run_id");
	if (!session)
		session = jstr(m->content, "task_id");
	char *detail = NULL;
	const char *outcome = "refused";
	if (!action || strcmp(action, "cancel"))
		detail = xasprintf("%s: only cancel applies to a conversation",
				   action ? action : "no action");
	else if (!session || !convlog_session_ok(session))
		detail = xasprintf("\"%s\" is not a conversation's session id",
				   session ? session : "");
	else if (conv_cancel_by(session, m->from, &detail) == 0)
		outcome = "applied";
	char *safe = util_sanitize(detail, strlen(detail), false);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "control_action", action ? action : "?");
	cJSON_AddStringToObject(f, "message_id", m->id);
	cJSON_AddStringToObject(f, "outcome", outcome);
	if (session)
		cJSON_AddStringToObject(f, "session", session);
	log_write(a->log, LOG_DECISIONS, strcmp(outcome, "applied") ? LOG_WARN : LOG_INFO,
		  "operator_control", f, "%s from %s: %s: %s", action ? action : "?", m->from,
		  outcome, safe);
	cJSON_Delete(f);
	wf_control_reply(a, m, session, outcome, safe);
	free(safe);
	free(detail);
}

static int ctl_handle(struct agent *a, const struct msg *m, char **err)
{
	switch (m->type) {
	case MSG_TASK_ASSIGNMENT:
		if (!jstr_is(m->content, "task_type", WF_TASK_CONTROL)) {
			err_set(err, "%s takes task_type %s (action cancel, run_id: a session)",
				SERVE_CONTROLLER, WF_TASK_CONTROL);
			return AGENT_REJECT;
		}
		ctl_control(a, m);
		a->completed_today++;
		return AGENT_DONE;
	case MSG_TASK_ACCEPTANCE:
	case MSG_TASK_PROGRESS:
	case MSG_ERROR_REPORT:
	case MSG_HEARTBEAT:
	case MSG_SYSTEM_STATUS:
		/* the conversations' agents reporting: their turns are in the
		 * conversation's events, their heartbeats in their state files */
		return AGENT_DONE;
	default:
		err_set(err, "%s does not take %s", SERVE_CONTROLLER, msg_type_name(m->type));
		return AGENT_REJECT;
	}
}

static bool jobs_run(void);

static int64_t ctl_tick(struct agent *a)
{
	(void)a;
	bool any = jobs_run();
	conv_refresh_all(REFRESH_MS);
	return any ? 0 : JOBS_EVERY_MS;
}

static const struct agent_role role_serve_controller = {
	.name = SERVE_CONTROLLER,
	.handle = ctl_handle,
	.tick = ctl_tick,
};

int serve_bus_open(struct agent_env *env, char **err)
{
	struct bus_config cfg = env->bcfg; /* copied by bus_open */
	cfg.force_poll = true; /* no inotify instance per member: they claim right after a send */
	/* The members' tasks, answers and heartbeats are what the console
	 * watches of a conversation whose record is its event log: no fsync
	 * each (the controller's own answers to the operator are durable). */
	cfg.durable = false;
	if (bus_open(&cfg, &sb.bus, err) < 0)
		return -1;
	if (agent_open(&role_serve_controller, env, &sb.ctl, err) < 0 ||
	    agent_start_thread(sb.ctl, err) < 0) {
		agent_free(&sb.ctl);
		bus_free(&sb.bus);
		return -1;
	}
	sb.env = env;
	sb.running = true;
	sb.turn_delay_ms = conv_env_long("MADF_SERVE_BUS_DELAY_MS", 0, 0, 60000);
	atomic_store(&draining, false);
	return 0;
}

void serve_bus_drain(void)
{
	atomic_store(&draining, true);
}

void serve_bus_close(void)
{
	if (!sb.running)
		return;
	atomic_store(&sb.env->stop, 1);
	agent_join(sb.ctl);
	jobs_run(); /* the last ones, the conversations ended */
	agent_free(&sb.ctl);
	bus_free(&sb.bus);
	sb.running = false;
}

/* ---- a conversation's members ------------------------------------------------- */

struct conv_member {
	char name[MSG_AGENT_MAX + 1];
	const char *role;      /* "initiator", "summarizer" or the agent's name (c's) */
	bool opened;           /* its consumer, state file, start line */
	struct bus_consumer *cons;
	struct bus_delivery *d; /* the claimed assignment of its turn */
	char task[MSG_ID_MAX + 1]; /* the assignment's id ("" between turns) */
	char current[96];      /* "SESSION round N" */
	int round;
	const char *status;    /* idle, busy, stopping */
	int64_t started_ns, written_ns;
	long done, errors;
	uint64_t seq;
};

struct conv_bus {
	pthread_mutex_t mu;    /* the members' heartbeat fields: the controller refreshes them */
	struct conv_member m[SERVE_MAX_AGENTS + 2];
	size_t n;
	char *state_dir;
	char *log_dir;
};

/* One log line of member mb through the structured log writer (opened for
 * the line: a conversation holds no descriptor for its logs). */
static void member_log(struct conv *c, const struct conv_member *mb, enum log_level lvl,
		       const char *event, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void member_log(struct conv *c, const struct conv_member *mb, enum log_level lvl,
		       const char *event, const char *fmt, ...)
{
	struct log_writer *lw = NULL;
	if (log_writer_open(c->bus->log_dir, mb->name, &lw, NULL) < 0)
		return;
	if (bus_carries_logs(sb.bus))
		agent_log_set_sink(lw, bus_log_sink, sb.bus);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "session", c->session);
	cJSON_AddStringToObject(f, "role", mb->role);
	if (mb->round > 0)
		cJSON_AddNumberToObject(f, "round", mb->round);
	if (mb->task[0])
		cJSON_AddStringToObject(f, "task_id", mb->task);
	va_list ap;
	va_start(ap, fmt);
	log_vwrite(lw, LOG_EVENTS, lvl, event, f, fmt, ap);
	va_end(ap);
	cJSON_Delete(f);
	agent_log_set_sink(lw, NULL, NULL);
	log_writer_free(&lw);
}

/* The member's heartbeat: its state file (what the console's Agents view
 * reads; at every change), and with msg a heartbeat message to the
 * controller (when it comes on the bus and when it stops: its turns'
 * messages say the rest). Under c->bus->mu. */
static void member_heartbeat(struct conv *c, struct conv_member *mb, bool msg)
{
	int64_t now = util_now_ns();
	cJSON *h = cJSON_CreateObject();
	cJSON_AddStringToObject(h, "status", mb->status);
	cJSON_AddNumberToObject(h, "uptime_seconds",
				(double)((now - mb->started_ns) / 1000000) / 1000.0);
	cJSON_AddNumberToObject(h, "active_tasks", mb->task[0] ? 1 : 0);
	if (mb->current[0])
		cJSON_AddStringToObject(h, "current_task", mb->current);
	else
		cJSON_AddNullToObject(h, "current_task");
	cJSON_AddNumberToObject(h, "pid", (double)getpid());
	cJSON_AddNumberToObject(h, "sequence", (double)mb->seq++);
	cJSON *st = cJSON_CreateObject();
	cJSON_AddStringToObject(st, "agent", mb->name);
	cJSON *hb = cJSON_Duplicate(h, true);
	cJSON_AddItemToObject(st, "heartbeat", hb);
	char ts[40];
	util_iso8601(now, ts, sizeof(ts));
	cJSON_AddStringToObject(hb, "at", ts);
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) == 0 && host[0])
		cJSON_AddStringToObject(hb, "host", host);
	cJSON *s = cJSON_AddObjectToObject(st, "status");
	cJSON_AddNumberToObject(s, "active_tasks", mb->task[0] ? 1 : 0);
	cJSON_AddNumberToObject(s, "completed_tasks_today", (double)mb->done);
	cJSON_AddNumberToObject(s, "error_count_today", (double)mb->errors);
	cJSON *cv = cJSON_AddObjectToObject(st, "conversation");
	cJSON_AddStringToObject(cv, "session", c->session);
	cJSON_AddStringToObject(cv, "role", mb->role);
	cJSON_AddNumberToObject(cv, "round", mb->round);
	cJSON_AddStringToObject(cv, "controller", SERVE_CONTROLLER);
	char *text = cJSON_PrintUnformatted(st);
	cJSON_Delete(st);
	char *path = xasprintf("%s/%s-state.json", c->bus->state_dir, mb->name);
	char *err = NULL;
	/* no fsync: a heartbeat is rewritten within seconds */
	if (util_write_file_atomic(path, text, strlen(text), false, &err) < 0) {
		conv_log(c, "warning: %s", err);
		free(err);
	}
	free(path);
	free(text);
	mb->written_ns = util_mono_ns();
	if (!msg) {
		cJSON_Delete(h);
		return;
	}
	struct msg *m = msg_new(mb->name, SERVE_CONTROLLER, MSG_HEARTBEAT, h);
	if (m) {
		m->priority = PRIO_LOW;
		m->timeout_s = 60;
		if (bus_send(sb.bus, m, &err) < 0) {
			conv_log(c, "warning: %s's heartbeat: %s", mb->name, err);
			free(err);
		}
		msg_free(&m);
	}
}

/* name: CONV_AGENT_PREFIX SESSION "-" ROLE, or with an index when the
 * role's name is too long for an agent's name. */
static void member_name(char *out, size_t size, const char *session, const char *role, size_t i)
{
	char *n = strlen(CONV_AGENT_PREFIX) + strlen(session) + 1 + strlen(role) < MSG_AGENT_MAX ?
		  xasprintf("%s%s-%s", CONV_AGENT_PREFIX, session, role) :
		  xasprintf("%s%s-a%zu-%.20s", CONV_AGENT_PREFIX, session, i, role);
	util_strlcpy(out, n, size);
	free(n);
}

void convbus_begin(struct conv *c)
{
	if (!sb.bus)
		return;
	struct conv_bus *b = xcalloc(1, sizeof(*b));
	pthread_mutex_init(&b->mu, NULL);
	b->state_dir = xasprintf("%s/state", sb.env->data_dir);
	b->log_dir = xstrdup(sb.env->log_dir);
	char *err = NULL;
	if (util_mkdirs(b->state_dir, &err) < 0) {
		conv_log(c, "warning: its agents stay off the bus: %s", err);
		free(err);
		free(b->state_dir);
		free(b->log_dir);
		pthread_mutex_destroy(&b->mu);
		free(b);
		return;
	}
	b->n = c->req.nagents + 2;
	for (size_t i = 0; i < b->n; i++) {
		struct conv_member *mb = &b->m[i];
		mb->role = i == 0 ? "initiator" : i == b->n - 1 ? "summarizer" :
			   c->req.agents[i - 1]->name;
		member_name(mb->name, sizeof(mb->name), c->session, mb->role, i);
		mb->status = "idle";
	}
	pthread_mutex_lock(&c->mu);
	c->bus = b;
	pthread_mutex_unlock(&c->mu);
}

/* The member comes on the bus: its inbox (a consumer of it), its state
 * file, its start line. */
static void member_open(struct conv *c, struct conv_member *mb)
{
	char *err = NULL;
	if (bus_consumer_open(sb.bus, mb->name, &mb->cons, &err) < 0) {
		conv_log(c, "warning: %s is off the bus: %s", mb->name, err);
		free(err);
		mb->cons = NULL;
	}
	pthread_mutex_lock(&c->bus->mu);
	mb->started_ns = util_now_ns();
	mb->opened = true;
	member_heartbeat(c, mb, true);
	pthread_mutex_unlock(&c->bus->mu);
	member_log(c, mb, LOG_INFO, "start", "%s started: %s of conversation %s", mb->name,
		   mb->role, c->session);
}

/* The assignment mb's turn: the controller's task_assignment to its inbox. */
static int send_assignment(struct conv *c, struct conv_member *mb, int round, char *id,
			   char **err)
{
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "task_type", CONV_TASK_TURN);
	char *focus = xasprintf("conversation %s", c->session);
	cJSON_AddStringToObject(t, "focus_area", focus);
	free(focus);
	cJSON_AddArrayToObject(t, "target_pairs");
	char *tf = round > 0 ? xasprintf("round %d of %d", round, c->req.rounds) :
		   xstrdup(mb == &c->bus->m[0] ? "the plan" : "the summary");
	cJSON_AddStringToObject(t, "timeframe", tf);
	free(tf);
	cJSON *ds = cJSON_AddArrayToObject(t, "data_sources");
	if (mb != &c->bus->m[0] && mb != &c->bus->m[c->bus->n - 1]) {
		const struct serve_agent *ag = c->req.agents[mb - &c->bus->m[1]];
		for (size_t i = 0; i < ag->ntools; i++)
			cJSON_AddItemToArray(ds, cJSON_CreateString(ag->tools[i]));
	}
	char dl[40];
	util_iso8601(util_now_ns() + (c->deadline_ns - util_mono_ns()), dl, sizeof(dl));
	cJSON_AddStringToObject(t, "deadline", dl);
	cJSON_AddStringToObject(t, "output_format", "sse");
	cJSON_AddStringToObject(t, "session_id", c->session);
	cJSON_AddStringToObject(t, "role", mb->role);
	cJSON_AddNumberToObject(t, "round", round);
	struct msg *m = msg_new(SERVE_CONTROLLER, mb->name, MSG_TASK_ASSIGNMENT, t);
	if (!m)
		return err_set(err, "cannot build the assignment of %s", mb->name);
	m->correlation_id = xstrdup(c->session);
	int r = bus_send(sb.bus, m, err);
	if (r == 0)
		util_strlcpy(id, m->id, MSG_ID_MAX + 1);
	msg_free(&m);
	return r;
}

/* A message from member mb to the controller (content taken). */
static void member_send(struct conv *c, struct conv_member *mb, enum msg_type type,
			cJSON *content)
{
	struct msg *m = msg_new(mb->name, SERVE_CONTROLLER, type, content);
	if (!m)
		return;
	m->reply_to = xstrdup(mb->task);
	m->correlation_id = xstrdup(c->session);
	char *err = NULL;
	if (bus_send(sb.bus, m, &err) < 0) {
		member_log(c, mb, LOG_ERROR, "send_failed", "cannot send %s to %s: %s",
			   msg_type_name(type), SERVE_CONTROLLER, err);
		free(err);
	}
	msg_free(&m);
}

static void do_turn(struct conv *c, size_t idx, int round)
{
	struct conv_bus *b = c->bus;
	if (!b || idx >= b->n)
		return;
	if (sb.turn_delay_ms > 0) {
		struct timespec ts = { sb.turn_delay_ms / 1000, (sb.turn_delay_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	struct conv_member *mb = &b->m[idx];
	if (!mb->opened)
		member_open(c, mb);
	char id[MSG_ID_MAX + 1] = "", *err = NULL;
	if (send_assignment(c, mb, round, id, &err) < 0) {
		conv_log(c, "warning: the assignment of %s: %s", mb->name, err);
		free(err);
		return;
	}
	/* The member takes it from its inbox (a send is visible at once on
	 * the file bus; on NATS within moments). */
	for (int64_t end = util_mono_ns() + CLAIM_WAIT_MS * 1000000LL;
	     mb->cons && !mb->d && util_mono_ns() < end;) {
		bus_consumer_wait(mb->cons, 0);
		int k = bus_claim(mb->cons, &mb->d, &err);
		if (k < 0) {
			conv_log(c, "warning: %s cannot claim its assignment: %s", mb->name, err);
			free(err);
			err = NULL;
			break;
		}
		if (k == 1 && strcmp(mb->d->msg->id, id)) {
			/* something else in its inbox: not its turn's; refused */
			bus_nack(mb->cons, &mb->d, "not this conversation's current turn", true, NULL);
			continue;
		}
		if (k == 0)
			bus_consumer_wait(mb->cons, 20);
	}
	pthread_mutex_lock(&b->mu);
	util_strlcpy(mb->task, id, sizeof(mb->task));
	mb->round = round;
	if (round > 0)
		snprintf(mb->current, sizeof(mb->current), "%s round %d", c->session, round);
	else
		snprintf(mb->current, sizeof(mb->current), "%s %s", c->session,
			 idx == 0 ? "plan" : "summary");
	mb->status = "busy";
	pthread_mutex_unlock(&b->mu);
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "task_id", id);
	cJSON_AddStringToObject(a, "status", "accepted");
	char dl[40];
	util_iso8601(util_now_ns() + (c->deadline_ns - util_mono_ns()), dl, sizeof(dl));
	cJSON_AddStringToObject(a, "estimated_completion", dl);
	cJSON_AddNumberToObject(a, "agent_capacity", 0);
	member_send(c, mb, MSG_TASK_ACCEPTANCE, a);
	pthread_mutex_lock(&b->mu);
	member_heartbeat(c, mb, false);
	pthread_mutex_unlock(&b->mu);
	member_log(c, mb, LOG_INFO, "task_start", "%s: %s", mb->current,
		   mb->d ? "assignment claimed" : "assignment sent, not claimed");
}

static void do_done(struct conv *c, size_t idx, bool ok, const char *detail)
{
	struct conv_bus *b = c->bus;
	if (!b || idx >= b->n || !b->m[idx].task[0])
		return;
	struct conv_member *mb = &b->m[idx];
	cJSON *r = cJSON_CreateObject();
	if (ok) {
		cJSON_AddStringToObject(r, "task_id", mb->task);
		cJSON_AddNumberToObject(r, "percent_complete", 100);
		cJSON_AddStringToObject(r, "current_step", "complete");
		member_send(c, mb, MSG_TASK_PROGRESS, r);
	} else {
		char *safe = util_sanitize(detail ? detail : "failed", strlen(detail ? detail : "failed"),
					   false);
		cJSON_AddStringToObject(r, "error_type", "conversation_turn_failed");
		cJSON_AddStringToObject(r, "error_message", safe);
		cJSON *ctx = cJSON_AddObjectToObject(r, "context");
		cJSON_AddStringToObject(ctx, "session", c->session);
		cJSON_AddNumberToObject(ctx, "round", mb->round);
		cJSON_AddStringToObject(r, "impact_level", "medium");
		cJSON_AddStringToObject(r, "related_task_id", mb->task);
		member_send(c, mb, MSG_ERROR_REPORT, r);
		member_log(c, mb, LOG_WARN, "task_failed", "%s: %s", mb->current, safe);
		free(safe);
	}
	char *err = NULL;
	if (mb->d && bus_ack(mb->cons, &mb->d, &err) < 0) {
		conv_log(c, "warning: %s: %s", mb->name, err);
		free(err);
		bus_delivery_free(&mb->d);
	}
	if (ok)
		member_log(c, mb, LOG_INFO, "task_done", "%s: complete", mb->current);
	pthread_mutex_lock(&b->mu);
	if (ok)
		mb->done++;
	else
		mb->errors++;
	mb->task[0] = '\0';
	mb->current[0] = '\0';
	mb->status = "idle";
	member_heartbeat(c, mb, false);
	pthread_mutex_unlock(&b->mu);
}

static void do_end(struct conv *c, const char *outcome)
{
	struct conv_bus *b = c->bus;
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		struct conv_member *mb = &b->m[i];
		if (!mb->opened)
			continue;
		if (mb->task[0])
			do_done(c, i, false, outcome);
		pthread_mutex_lock(&b->mu);
		mb->status = "stopping";
		mb->current[0] = '\0';
		member_heartbeat(c, mb, true);
		pthread_mutex_unlock(&b->mu);
		member_log(c, mb, LOG_INFO, "stop", "%s stopped: the conversation ended (%s)",
			   mb->name, outcome);
		bus_consumer_free(&mb->cons);
		/* Gone with its conversation: its empty inbox and its state file
		 * (the conversation's record is its events). */
		char *err = NULL;
		if (bus_forget_agent(sb.bus, mb->name, &err) < 0) {
			conv_log(c, "warning: %s", err);
			free(err);
		}
		char *path = xasprintf("%s/%s-state.json", b->state_dir, mb->name);
		unlink(path);
		free(path);
		pthread_mutex_lock(&b->mu);
		mb->opened = false;
		pthread_mutex_unlock(&b->mu);
	}
}

/* ---- the jobs: a conversation's thread asks, the controller's does ---------
 * The bus work of the conversations' agents (sends, claims, acks, state
 * files, log lines) runs on the controller's thread, in the order asked:
 * a conversation's thread only queues it, so that its events never wait on
 * the bus and its stack stays small. */

enum job_kind { JOB_TURN, JOB_DONE, JOB_END };

struct bus_job {
	struct bus_job *next;
	struct conv *c;   /* a reference */
	enum job_kind kind;
	size_t idx;
	int round;
	bool ok;
	char *text;       /* the failure's detail, or the outcome */
};

static pthread_mutex_t jobs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct bus_job *jobs_head, **jobs_tail = &jobs_head;

static void job_add(struct conv *c, enum job_kind kind, size_t idx, int round, bool ok,
		    const char *text)
{
	if (!c->bus)
		return;
	struct bus_job *j = xcalloc(1, sizeof(*j));
	pthread_mutex_lock(&c->mu);
	c->refs++;
	pthread_mutex_unlock(&c->mu);
	j->c = c;
	j->kind = kind;
	j->idx = idx;
	j->round = round;
	j->ok = ok;
	j->text = text ? xstrdup(text) : NULL;
	pthread_mutex_lock(&jobs_mu);
	*jobs_tail = j;
	jobs_tail = &j->next;
	pthread_mutex_unlock(&jobs_mu);
}

/* A turn asked for a conversation that has ended by the time the server
 * stops: its member is not put on the bus (a member that never came on
 * has nothing for the conversation's end to undo, and its done finds no
 * turn open). With many conversations the controller's turns lag behind
 * them; at a stop those already over are not replayed. */
static bool turn_moot(struct conv *c)
{
	if (!atomic_load(&draining))
		return false;
	pthread_mutex_lock(&c->mu);
	bool over = c->finished;
	pthread_mutex_unlock(&c->mu);
	return over;
}

/* Runs the jobs queued so far; whether there were any. */
static bool jobs_run(void)
{
	pthread_mutex_lock(&jobs_mu);
	struct bus_job *j = jobs_head;
	jobs_head = NULL;
	jobs_tail = &jobs_head;
	pthread_mutex_unlock(&jobs_mu);
	bool any = j != NULL;
	while (j) {
		struct bus_job *next = j->next;
		if (j->kind == JOB_TURN) {
			if (!turn_moot(j->c))
				do_turn(j->c, j->idx, j->round);
		} else if (j->kind == JOB_DONE) {
			do_done(j->c, j->idx, j->ok, j->text);
		} else {
			do_end(j->c, j->text ? j->text : "unknown");
		}
		conv_unref(j->c);
		free(j->text);
		free(j);
		j = next;
	}
	return any;
}

void convbus_turn(struct conv *c, size_t idx, int round)
{
	job_add(c, JOB_TURN, idx, round, true, NULL);
}

void convbus_turn_done(struct conv *c, size_t idx, bool ok, const char *detail)
{
	job_add(c, JOB_DONE, idx, 0, ok, detail);
}

void convbus_end(struct conv *c, const char *outcome)
{
	job_add(c, JOB_END, 0, 0, false, outcome);
}

void convbus_refresh(struct conv *c, long refresh_ms)
{
	struct conv_bus *b = c->bus;
	if (!b)
		return;
	int64_t now = util_mono_ns();
	pthread_mutex_lock(&b->mu);
	for (size_t i = 0; i < b->n; i++) {
		struct conv_member *mb = &b->m[i];
		if (mb->opened && strcmp(mb->status, "stopping") &&
		    now - mb->written_ns >= refresh_ms * 1000000LL)
			member_heartbeat(c, mb, false);
	}
	pthread_mutex_unlock(&b->mu);
}

void convbus_free(struct conv *c)
{
	struct conv_bus *b = c->bus;
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		bus_delivery_free(&b->m[i].d);
		bus_consumer_free(&b->m[i].cons);
	}
	free(b->state_dir);
	free(b->log_dir);
	pthread_mutex_destroy(&b->mu);
	free(b);
	c->bus = NULL;
}
