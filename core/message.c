/* Messages: the seed 002 envelope plus correlation_id, seed 003 spelling
 * normalised on read, table-driven validation of the envelope and of the
 * nine content schemas, canonical output, ids. This file: names, errors,
 * field rules, the envelope, output, lifecycle and ids; the content
 * schemas and seed 003 content are in message_schema.c, behind
 * core/message_priv.h. */
#include "core/message_priv.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/message_compat.h"
#include "core/util.h"
#include "core/banned.h"

#define JSON_INT_MAX 9007199254740992.0 /* 2^53: exact in a double */
#define TIMEOUT_MAX 2147483647

static const char RULE_ID[] = "must match [A-Za-z0-9_:-]{1,128}";
static const char RULE_AGENT[] =
	"must be an agent name ([a-z0-9][a-z0-9_-]{0,63})";
static const char RULE_TARGET[] =
	"must be an agent name ([a-z0-9][a-z0-9_-]{0,63}) or broadcast";
static const char RULE_PRIORITY[] = "must be one of low, normal, high, urgent";

/* ---- Names ---- */

static const char *const type_names[MSG_TYPE_COUNT] = {
	[MSG_TASK_ASSIGNMENT] = "task_assignment",
	[MSG_TASK_ACCEPTANCE] = "task_acceptance",
	[MSG_TASK_PROGRESS] = "task_progress",
	[MSG_RESEARCH_RESULT] = "research_result",
	[MSG_VALIDATION_REQUEST] = "validation_request",
	[MSG_VALIDATION_RESULT] = "validation_result",
	[MSG_ERROR_REPORT] = "error_report",
	[MSG_HEARTBEAT] = "heartbeat",
	[MSG_SYSTEM_STATUS] = "system_status",
};

static const char *const priority_names[] = {
	[PRIO_URGENT] = "urgent",
	[PRIO_HIGH] = "high",
	[PRIO_NORMAL] = "normal",
	[PRIO_LOW] = "low",
};

/* Seed 003's message_type words besides the canonical names. */
static const struct {
	const char *name;
	enum msg_type type;
} type_aliases[] = {
	{ "result", MSG_RESEARCH_RESULT },
	{ "error", MSG_ERROR_REPORT },
	{ "status", MSG_SYSTEM_STATUS },
};

static const struct {
	const char *alias, *name;
} agent_aliases[] = {
	{ "pm-agent", "product_manager" },
	{ "research-agent-1", "research_agent_1" },
	{ "research-agent-2", "research_agent_2" },
	{ "validator-agent", "validator_agent" },
	{ "report-writer", "report_writer" },
	{ "learning-system", "learning_system" },
};

const char *msg_type_name(enum msg_type t)
{
	return (unsigned)t < MSG_TYPE_COUNT ? type_names[t] : "unknown";
}

int msg_type_from_name(const char *s)
{
	for (int i = 0; s && i < MSG_TYPE_COUNT; i++)
		if (!strcmp(s, type_names[i]))
			return i;
	return -1;
}

const char *msg_priority_name(enum msg_priority p)
{
	return (unsigned)p <= PRIO_LOW ? priority_names[p] : "unknown";
}

int msg_priority_from_name(const char *s)
{
	for (int i = 0; s && i <= PRIO_LOW; i++)
		if (!strcmp(s, priority_names[i]))
			return i;
	return -1;
}

const char *msg_agent_canonical(const char *s)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(agent_aliases); i++)
		if (!strcmp(s, agent_aliases[i].alias))
			return agent_aliases[i].name;
	return s;
}

static int type_from_alias(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(type_aliases); i++)
		if (!strcmp(s, type_aliases[i].name))
			return (int)type_aliases[i].type;
	return msg_type_from_name(s);
}

/* "a, b, c" from a NULL-terminated list. Caller frees. */
char *msg_choices_join(const char *const *list)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; list[i]; i++)
		sbuf_addf(&b, "%s%s", i ? ", " : "", list[i]);
	return sbuf_detach(&b);
}

char *msg_type_choices(bool with_aliases)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; with_aliases && i < ARRAY_SIZE(type_aliases); i++)
		sbuf_addf(&b, "%s, ", type_aliases[i].name);
	for (int i = 0; i < MSG_TYPE_COUNT; i++)
		sbuf_addf(&b, "%s%s", i ? ", " : "", type_names[i]);
	return sbuf_detach(&b);
}

/* ---- Errors ---- */

void msg_errors_add(struct msg_errors *e, const char *fmt, ...)
{
	if (!e || e->count > MSG_ERRORS_MAX)
		return;
	char *s;
	if (e->count == MSG_ERRORS_MAX) {
		s = xstrdup("too many errors; the rest are left out");
	} else {
		va_list ap;
		va_start(ap, fmt);
		s = xvasprintf(fmt, ap);
		va_end(ap);
	}
	e->items = xrealloc(e->items, (e->count + 1) * sizeof(*e->items));
	e->items[e->count++] = s;
}

void msg_errors_release(struct msg_errors *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->count; i++)
		free(e->items[i]);
	free(e->items);
	e->items = NULL;
	e->count = 0;
}

char *msg_errors_join(const struct msg_errors *e)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; e && i < e->count; i++)
		sbuf_addf(&b, "%s%s", i ? "; " : "", e->items[i]);
	return sbuf_detach(&b);
}

void msg_verr(struct vctx *v, const char *path, const char *fmt, ...)
{
	v->n++;
	if (!v->errs || v->errs->count > MSG_ERRORS_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *rule = xvasprintf(fmt, ap);
	va_end(ap);
	msg_errors_add(v->errs, "%s: %s", path, rule);
	free(rule);
}

static void verr_line(struct vctx *v, const char *line)
{
	v->n++;
	msg_errors_add(v->errs, "%s", line);
}

/* ---- Field rules shared by parsing and msg_validate ---- */

bool msg_valid_id(const char *id)
{
	if (!id)
		return false;
	size_t n = 0;
	for (const char *p = id; *p; p++, n++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == ':' ||
			  c == '-';
		if (!ok || n >= MSG_ID_MAX)
			return false;
	}
	return n > 0;
}

static bool valid_target(const char *s)
{
	return s && (util_valid_agent_name(s) || !strcmp(s, "broadcast"));
}

bool msg_json_is_integer(double d)
{
	return d == floor(d) && fabs(d) <= JSON_INT_MAX;
}

static bool check_id(struct vctx *v, const char *label, const char *s)
{
	if (msg_valid_id(s))
		return true;
	msg_verr(v, label, "%s", RULE_ID);
	return false;
}

static bool check_agent(struct vctx *v, const char *label, const char *s,
			bool target)
{
	if (target ? valid_target(s) : util_valid_agent_name(s))
		return true;
	msg_verr(v, label, "%s", target ? RULE_TARGET : RULE_AGENT);
	return false;
}

static bool check_timestamp(struct vctx *v, const char *label, const char *s,
			    int64_t *ns)
{
	enum msg_time_form f = msg_time_read(s, ns);
	if (f == MSG_TIME_ZONED)
		return true;
	if (f == MSG_TIME_RANGE)
		msg_verr(v, label, "must be within years 1678..2261");
	else
		msg_verr(v, label, "%s", RULE_TIME);
	return false;
}

/* Nesting of a tree (a scalar is 0); bounded by the strict parse. */
static int json_depth(const cJSON *node)
{
	if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
		return 0;
	int max = 0;
	for (const cJSON *c = node->child; c; c = c->next) {
		int d = json_depth(c);
		if (d > max)
			max = d;
	}
	return max + 1;
}

/* ---- The envelope ---- */

enum env_slot {
	ENV_ID,
	ENV_FROM,
	ENV_TO,
	ENV_TYPE,
	ENV_TIME,
	ENV_CONTENT,
	ENV_PRIORITY,
	ENV_REPLY_TO,
	ENV_TIMEOUT,
	ENV_CORRELATION,
	ENV_NOTES,
};

struct env_field {
	const char *name;  /* seed 002 */
	const char *alias; /* seed 003, or NULL */
	enum env_slot slot;
	bool required;
};

static const struct env_field env_fields[] = {
	{ "message_id", NULL, ENV_ID, true },
	{ "from", "from_agent", ENV_FROM, true },
	{ "to", "to_agent", ENV_TO, true },
	{ "type", "message_type", ENV_TYPE, true },
	{ "timestamp", NULL, ENV_TIME, true },
	{ "content", "payload", ENV_CONTENT, true },
	{ "priority", NULL, ENV_PRIORITY, false },
	{ "reply_to", NULL, ENV_REPLY_TO, false },
	{ "timeout", NULL, ENV_TIMEOUT, false },
	{ "correlation_id", NULL, ENV_CORRELATION, false },
	{ "notes", NULL, ENV_NOTES, false },
};

struct env_read {
	struct msg *m;
	struct vctx *v;
	cJSON *content; /* still in the tree */
	bool type_ok;
	bool seed003;   /* "payload" or "message_type" was used */
	bool ts_naive;  /* the timestamp had no zone */
};

static bool env_known(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_fields); i++) {
		const struct env_field *f = &env_fields[i];
		if (!strcmp(key, f->name) || (f->alias && !strcmp(key, f->alias)))
			return true;
	}
	return false;
}

static void env_check_unknown(const cJSON *root, struct vctx *v)
{
	for (const cJSON *c = root->child; c; c = c->next) {
		const char *key = c->string ? c->string : "";
		if (env_known(key))
			continue;
		char *path = json_path_join(NULL, key);
		msg_verr(v, path, "unknown field");
		free(path);
	}
}

static const char *env_string(struct env_read *r, const char *label,
			      const cJSON *item)
{
	if (cJSON_IsString(item))
		return item->valuestring;
	msg_verr(r->v, label, "must be a string");
	return NULL;
}

static char *env_optional_id(struct env_read *r, const char *label,
			     const cJSON *item)
{
	if (cJSON_IsNull(item))
		return NULL;
	const char *s = env_string(r, label, item);
	return s && check_id(r->v, label, s) ? xstrdup(s) : NULL;
}

static void env_read_agent(struct env_read *r, const char *label,
			   const cJSON *item, bool target)
{
	const char *s = env_string(r, label, item);
	if (!s)
		return;
	s = msg_agent_canonical(s);
	if (check_agent(r->v, label, s, target))
		util_strlcpy(target ? r->m->to : r->m->from, s, MSG_AGENT_MAX + 1);
}

static void env_read_type(struct env_read *r, const char *label,
			  const cJSON *item)
{
	const char *s = env_string(r, label, item);
	if (!s)
		return;
	bool alias = strcmp(label, "type") != 0;
	int t = alias ? type_from_alias(s) : msg_type_from_name(s);
	if (t < 0) {
		char *list = msg_type_choices(alias);
		msg_verr(r->v, label, "must be one of %s", list);
		free(list);
		return;
	}
	r->m->type = (enum msg_type)t;
	r->type_ok = true;
}

/* A word, or seed 003's integer 1..5: 1 urgent, 2 high, 3 normal, 4-5 low;
 * null is the default, normal. */
static void env_read_priority(struct env_read *r, const char *label,
			      const cJSON *item)
{
	static const enum msg_priority by_number[] = {
		PRIO_URGENT, PRIO_HIGH, PRIO_NORMAL, PRIO_LOW, PRIO_LOW,
	};
	if (cJSON_IsNull(item))
		return;
	if (cJSON_IsString(item)) {
		int p = msg_priority_from_name(item->valuestring);
		if (p < 0)
			msg_verr(r->v, label, "%s", RULE_PRIORITY);
		else
			r->m->priority = (enum msg_priority)p;
		return;
	}
	if (!cJSON_IsNumber(item)) {
		msg_verr(r->v, label, "must be a string or an integer");
		return;
	}
	double d = item->valuedouble;
	if (!msg_json_is_integer(d))
		msg_verr(r->v, label, "must be an integer");
	else if (d < 1 || d > 5)
		msg_verr(r->v, label, "must be within 1..5");
	else
		r->m->priority = by_number[(int)d - 1];
}

static void env_read_timeout(struct env_read *r, const char *label,
			     const cJSON *item)
{
	if (cJSON_IsNull(item))
		return;
	if (!cJSON_IsNumber(item) || !msg_json_is_integer(item->valuedouble)) {
		msg_verr(r->v, label, "must be an integer");
		return;
	}
	double d = item->valuedouble;
	if (d < 1 || d > TIMEOUT_MAX)
		msg_verr(r->v, label, "must be within 1..%d", TIMEOUT_MAX);
	else
		r->m->timeout_s = (int64_t)d;
}

static void env_read_field(struct env_read *r, enum env_slot slot,
			   const char *label, cJSON *item)
{
	struct msg *m = r->m;
	const char *s;
	switch (slot) {
	case ENV_ID:
		s = env_string(r, label, item);
		if (s && check_id(r->v, label, s))
			util_strlcpy(m->id, s, sizeof(m->id));
		break;
	case ENV_FROM:
	case ENV_TO:
		env_read_agent(r, label, item, slot == ENV_TO);
		break;
	case ENV_TYPE:
		env_read_type(r, label, item);
		break;
	case ENV_TIME:
		s = env_string(r, label, item);
		if (s && msg_time_read(s, &m->ts_ns) == MSG_TIME_NAIVE) {
			/* Seed 002's datetime.utcnow(): UTC, noted. */
			m->timestamp = xasprintf("%sZ", s);
			r->ts_naive = true;
		} else if (s && check_timestamp(r->v, label, s, &m->ts_ns)) {
			m->timestamp = xstrdup(s);
		}
		break;
	case ENV_CONTENT:
		if (cJSON_IsObject(item))
			r->content = item;
		else
			msg_verr(r->v, label, "must be an object");
		break;
	case ENV_PRIORITY:
		env_read_priority(r, label, item);
		break;
	case ENV_REPLY_TO:
		m->reply_to = env_optional_id(r, label, item);
		break;
	case ENV_TIMEOUT:
		env_read_timeout(r, label, item);
		break;
	case ENV_CORRELATION:
		m->correlation_id = env_optional_id(r, label, item);
		break;
	case ENV_NOTES:
		r->v->n += msg_notes_read(m, item, label, r->v->errs);
		break;
	}
}

static void env_read_all(cJSON *root, struct env_read *r)
{
	env_check_unknown(root, r->v);
	for (size_t i = 0; i < ARRAY_SIZE(env_fields); i++) {
		const struct env_field *f = &env_fields[i];
		cJSON *a = cJSON_GetObjectItemCaseSensitive(root, f->name);
		cJSON *b = f->alias ?
			   cJSON_GetObjectItemCaseSensitive(root, f->alias) : NULL;
		if (a && b) {
			msg_verr(r->v, f->alias, "not allowed together with %s", f->name);
			continue;
		}
		if (!a && !b) {
			if (f->required)
				msg_verr(r->v, f->name, "required");
			continue;
		}
		if (b && (f->slot == ENV_TYPE || f->slot == ENV_CONTENT))
			r->seed003 = true;
		env_read_field(r, f->slot, a ? f->name : f->alias, a ? a : b);
	}
	/* After the notes read in: they count towards MSG_NOTES_MAX. */
	if (r->ts_naive &&
	    msg_note_add(r->m, "timestamp" MSG_NOTE_ASSUMED_UTC) < 0)
		msg_verr(r->v, "notes", "at most %d notes, no room for %s",
			 MSG_NOTES_MAX, "timestamp" MSG_NOTE_ASSUMED_UTC);
}

/* Times without a zone in the content's time fields, read as UTC and
 * noted. Top level only: no nested schema has a time field. */
static void content_assume_utc(struct env_read *r)
{
	const struct schema *sc = &msg_schemas[r->m->type];
	for (size_t i = 0; i < sc->count; i++) {
		const struct field_spec *f = &sc->fields[i];
		if (f->kind != FK_TIME)
			continue;
		cJSON *item = cJSON_GetObjectItemCaseSensitive(r->m->content, f->name);
		char *path = json_path_join("content", f->name);
		if (msg_time_assume_utc(r->m, item, path) < 0)
			msg_verr(r->v, "notes", "at most %d notes, no room for %s%s",
				 MSG_NOTES_MAX, path, MSG_NOTE_ASSUMED_UTC);
		free(path);
	}
}

/* Normalises (seed 003 only) and validates the content, now m's. */
static void env_check_content(struct env_read *r)
{
	struct msg *m = r->m;
	if (!r->type_ok)
		return;
	if (r->seed003) {
		msg_content_map_apply(m->type, m->content);
		if (1 + json_depth(m->content) > MSG_MAX_DEPTH) {
			msg_verr(r->v, "content", "nesting deeper than %d levels",
				 MSG_MAX_DEPTH);
			return;
		}
	}
	content_assume_utc(r);
	msg_content_validate(m->type, m->content, "content", r->v);
}

int msg_parse(const char *buf, size_t len, struct msg **out,
	      struct msg_errors *errs)
{
	struct vctx v = { .errs = errs, .n = 0 };
	*out = NULL;
	if (len > MSG_MAX_BYTES) {
		msg_verr(&v, "message", "is %zu bytes, over the %u-byte limit", len,
			 MSG_MAX_BYTES);
		return -1;
	}
	char *err = NULL;
	cJSON *root = json_parse_strict(buf, len, &err);
	if (!root) {
		verr_line(&v, err);
		free(err);
		return -1;
	}
	if (!cJSON_IsObject(root)) {
		msg_verr(&v, "message", "must be a JSON object");
		cJSON_Delete(root);
		return -1;
	}
	struct msg *m = xcalloc(1, sizeof(*m));
	m->priority = PRIO_NORMAL;
	m->timeout_s = -1;
	struct env_read r = { .m = m, .v = &v };
	env_read_all(root, &r);
	if (r.content) {
		m->content = cJSON_DetachItemViaPointer(root, r.content);
		env_check_content(&r);
	}
	cJSON_Delete(root);
	if (v.n) {
		msg_free(&m);
		return -1;
	}
	*out = m;
	return 0;
}

/* What json_parse_strict would refuse once the content is written out. */
static void msg_check_tree(const cJSON *content, struct vctx *v)
{
	char *err = NULL;
	if (json_check_tree(content, "content", 1, &err) < 0) {
		verr_line(v, err);
		free(err);
	}
}

int msg_validate(const struct msg *m, struct msg_errors *errs)
{
	struct vctx v = { .errs = errs, .n = 0 };
	int64_t ns;
	check_id(&v, "message_id", m->id);
	check_agent(&v, "from", m->from, false);
	check_agent(&v, "to", m->to, true);
	if (!m->timestamp)
		msg_verr(&v, "timestamp", "required");
	else
		check_timestamp(&v, "timestamp", m->timestamp, &ns);
	if (!m->content && (unsigned)m->type < MSG_TYPE_COUNT)
		msg_verr(&v, "content", "required");
	else
		msg_content_validate(m->type, m->content, "content", &v);
	msg_check_tree(m->content, &v);
	if ((unsigned)m->priority > PRIO_LOW)
		msg_verr(&v, "priority", "%s", RULE_PRIORITY);
	if (m->reply_to)
		check_id(&v, "reply_to", m->reply_to);
	if (m->timeout_s != -1 && (m->timeout_s < 1 || m->timeout_s > TIMEOUT_MAX))
		msg_verr(&v, "timeout", "must be within 1..%d", TIMEOUT_MAX);
	if (m->correlation_id)
		check_id(&v, "correlation_id", m->correlation_id);
	v.n += msg_notes_check(m, errs);
	return v.n ? -1 : 0;
}

/* ---- Output ---- */

cJSON *msg_to_cjson(const struct msg *m)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "message_id", m->id);
	cJSON_AddStringToObject(o, "from", m->from);
	cJSON_AddStringToObject(o, "to", m->to);
	cJSON_AddStringToObject(o, "type", msg_type_name(m->type));
	cJSON_AddStringToObject(o, "timestamp", m->timestamp ? m->timestamp : "");
	cJSON_AddItemToObject(o, "content", m->content ?
			      cJSON_Duplicate(m->content, 1) :
			      cJSON_CreateObject());
	cJSON_AddStringToObject(o, "priority", msg_priority_name(m->priority));
	if (m->reply_to)
		cJSON_AddStringToObject(o, "reply_to", m->reply_to);
	if (m->timeout_s >= 0)
		cJSON_AddNumberToObject(o, "timeout", (double)m->timeout_s);
	if (m->correlation_id)
		cJSON_AddStringToObject(o, "correlation_id", m->correlation_id);
	if (cJSON_GetArraySize(m->notes) > 0)
		cJSON_AddItemToObject(o, "notes", cJSON_Duplicate(m->notes, 1));
	return o;
}

char *msg_to_json(const struct msg *m, bool pretty)
{
	cJSON *o = msg_to_cjson(m);
	if (!o)
		return NULL;
	/* Both are malloc'd (cJSON uses the default allocator here). */
	char *s = pretty ? json_pretty(o) : cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* ---- Lifecycle and ids ---- */

/* The per-process nonce, with the pid it was drawn in: pid << 32 | nonce.
 * A forked child sees another pid and draws its own. */
static _Atomic uint64_t id_seed;
static atomic_uint id_counter;

static uint32_t id_nonce(void)
{
	uint64_t pid = (uint32_t)getpid();
	uint64_t cur = atomic_load(&id_seed);
	while (cur >> 32 != pid) {
		uint32_t n;
		util_random(&n, sizeof(n));
		uint64_t want = pid << 32 | n;
		if (atomic_compare_exchange_strong(&id_seed, &cur, want))
			return n;
	}
	return (uint32_t)cur;
}

/* from, cut to an agent name's length, with characters outside the id
 * alphabet replaced: the id stays valid whatever the caller passed. */
static void id_name_part(const char *from, char *out, size_t size)
{
	size_t n = 0;
	for (const char *p = from ? from : ""; *p && n + 1 < size; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-';
		out[n++] = ok ? c : '-';
	}
	out[n] = '\0';
	if (n == 0)
		util_strlcpy(out, "msg", size);
}

static void id_format(const char *from, int64_t now_ns, char *buf)
{
	char name[MSG_AGENT_MAX + 1], stamp[32];
	id_name_part(from, name, sizeof(name));
	time_t s = (time_t)(now_ns / 1000000000);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
	uint32_t nonce = id_nonce();
	unsigned count = atomic_fetch_add(&id_counter, 1u);
	snprintf(buf, MSG_ID_MAX + 1, "%s_%s_%08" PRIx32 "%08x", name, stamp,
		 nonce, count);
}

void msg_new_id(const char *from, char *buf)
{
	id_format(from, util_now_ns(), buf);
}

struct msg *msg_new(const char *from, const char *to, enum msg_type type,
		    cJSON *content)
{
	from = msg_agent_canonical(from);
	to = msg_agent_canonical(to);
	if (!util_valid_agent_name(from) || !valid_target(to) ||
	    (unsigned)type >= MSG_TYPE_COUNT ||
	    (content && !cJSON_IsObject(content))) {
		cJSON_Delete(content);
		return NULL;
	}
	struct msg *m = xcalloc(1, sizeof(*m));
	int64_t now = util_now_ns();
	now -= now % 1000; /* the timestamp keeps microseconds */
	char ts[64];
	util_iso8601(now, ts, sizeof(ts));
	id_format(from, now, m->id);
	util_strlcpy(m->from, from, sizeof(m->from));
	util_strlcpy(m->to, to, sizeof(m->to));
	m->type = type;
	m->timestamp = xstrdup(ts);
	m->ts_ns = now;
	m->content = content ? content : cJSON_CreateObject();
	m->priority = PRIO_NORMAL;
	m->timeout_s = -1;
	return m;
}

struct msg *msg_dup(const struct msg *m)
{
	struct msg *d = xmalloc(sizeof(*d));
	*d = *m;
	d->timestamp = m->timestamp ? xstrdup(m->timestamp) : NULL;
	d->content = m->content ? cJSON_Duplicate(m->content, 1) : NULL;
	d->reply_to = m->reply_to ? xstrdup(m->reply_to) : NULL;
	d->correlation_id = m->correlation_id ? xstrdup(m->correlation_id) : NULL;
	d->notes = m->notes ? cJSON_Duplicate(m->notes, 1) : NULL;
	return d;
}

void msg_free(struct msg **mp)
{
	struct msg *m = mp ? *mp : NULL;
	if (!m)
		return;
	free(m->timestamp);
	cJSON_Delete(m->content);
	free(m->reply_to);
	free(m->correlation_id);
	cJSON_Delete(m->notes);
	free(m);
	*mp = NULL;
}
