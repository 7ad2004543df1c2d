/* Messages: the nine content schemas (tables and their validation), and
 * seed 003 content mapped onto them. See core/message.c. */
#include "core/message_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/message_compat.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- Content schemas ---- */

static const char *const accept_status[] = { "accepted", "rejected", "queued", NULL };
static const char *const result_status[] = { "completed", "partial", "failed", NULL };
static const char *const validation_types[] = { "cross_reference", "timing_check",
						"fact_check", NULL };
static const char *const issue_types[] = { "conflict", "timing_error", "stale_data", NULL };
static const char *const levels[] = { "low", "medium", "high", "critical", NULL };
static const char *const heartbeat_status[] = { "idle", "busy", "waiting", "stopping", NULL };
static const char *const agent_status[] = { "healthy", "degraded", "error", "offline", NULL };

static const struct field_spec task_assignment_fields[] = {
	/* name                  kind         flags             min max choices items */
	{ "task_type",           FK_STR,      REQ | F_NONEMPTY, 0, 0, NULL, NULL },
	{ "focus_area",          FK_STR,      REQ,              0, 0, NULL, NULL },
	{ "target_pairs",        FK_STR_LIST, REQ,              0, 0, NULL, NULL },
	{ "timeframe",           FK_STR,      REQ,              0, 0, NULL, NULL },
	{ "data_sources",        FK_STR_LIST, REQ,              0, 0, NULL, NULL },
	{ "deadline",            FK_TIME,     REQ,              0, 0, NULL, NULL },
	{ "output_format",       FK_STR,      REQ,              0, 0, NULL, NULL },
	{ "special_instructions", FK_STR,     OPT,              0, 0, NULL, NULL },
};

static const struct field_spec task_acceptance_fields[] = {
	{ "task_id",              FK_STR,  REQ,         0, 0, NULL, NULL },
	{ "status",               FK_ENUM, REQ,         0, 0, accept_status, NULL },
	{ "estimated_completion", FK_TIME, REQ,         0, 0, NULL, NULL },
	{ "agent_capacity",       FK_NUM,  REQ | RANGE, 0, 1, NULL, NULL },
	{ "rejection_reason",     FK_STR,  OPT,         0, 0, NULL, NULL },
};

static const struct field_spec task_progress_fields[] = {
	{ "task_id",              FK_STR,  REQ,         0, 0,   NULL, NULL },
	{ "percent_complete",     FK_NUM,  REQ | RANGE, 0, 100, NULL, NULL },
	{ "current_step",         FK_STR,  REQ,         0, 0,   NULL, NULL },
	{ "estimated_completion", FK_TIME, OPT,         0, 0,   NULL, NULL },
	{ "items_done",           FK_INT,  OPT | F_MIN, 0, 0,   NULL, NULL },
	{ "items_total",          FK_INT,  OPT | F_MIN, 0, 0,   NULL, NULL },
};

static const struct field_spec research_result_fields[] = {
	{ "task_id",                FK_STR,      REQ,         0, 0, NULL, NULL },
	{ "status",                 FK_ENUM,     REQ,         0, 0, result_status, NULL },
	{ "execution_time_minutes", FK_NUM,      REQ | F_MIN, 0, 0, NULL, NULL },
	{ "data_points_collected",  FK_INT,      REQ | F_MIN, 0, 0, NULL, NULL },
	{ "sources_accessed",       FK_STR_LIST, REQ,         0, 0, NULL, NULL },
	{ "key_findings",           FK_STR_LIST, REQ,         0, 0, NULL, NULL },
	{ "raw_data",               FK_OBJ,      REQ,         0, 0, NULL, NULL },
	{ "confidence_score",       FK_NUM,      REQ | RANGE, 0, 1, NULL, NULL },
	{ "data_freshness_hours",   FK_NUM,      REQ | F_MIN, 0, 0, NULL, NULL },
	{ "warnings",               FK_STR_LIST, REQ,         0, 0, NULL, NULL },
};

static const struct field_spec validation_request_fields[] = {
	{ "research_results_to_validate", FK_STR_LIST, REQ | F_NONEMPTY, 0, 0, NULL, NULL },
	{ "validation_type",    FK_ENUM,     REQ, 0, 0, validation_types, NULL },
	{ "validation_sources", FK_STR_LIST, REQ, 0, 0, NULL, NULL },
	{ "priority_areas",     FK_STR_LIST, REQ, 0, 0, NULL, NULL },
	{ "deadline",           FK_TIME,     REQ, 0, 0, NULL, NULL },
};

static const struct field_spec validation_issue_fields[] = {
	{ "issue_type",     FK_ENUM, REQ,         0, 0, issue_types, NULL },
	{ "severity",       FK_ENUM, REQ,         0, 0, levels, NULL },
	{ "description",    FK_STR,  REQ,         0, 0, NULL, NULL },
	{ "affected_data",  FK_OBJ,  REQ,         0, 0, NULL, NULL },
	{ "recommendation", FK_STR,  REQ,         0, 0, NULL, NULL },
	{ "confidence",     FK_NUM,  REQ | RANGE, 0, 1, NULL, NULL },
};

static const struct schema validation_issue = SCHEMA(validation_issue_fields, NULL);

static const struct field_spec validation_result_fields[] = {
	{ "validation_id",              FK_STR,      REQ,         0, 0, NULL, NULL },
	{ "research_results_validated", FK_STR_LIST, REQ,         0, 0, NULL, NULL },
	{ "overall_confidence",         FK_NUM,      REQ | RANGE, 0, 1, NULL, NULL },
	{ "issues_found",               FK_OBJ_LIST, REQ,         0, 0, NULL, &validation_issue },
	{ "validated_findings",         FK_STR_LIST, REQ,         0, 0, NULL, NULL },
	{ "execution_time_minutes",     FK_NUM,      REQ | F_MIN, 0, 0, NULL, NULL },
	{ "sources_consulted",          FK_STR_LIST, REQ,         0, 0, NULL, NULL },
};

static const struct field_spec error_report_fields[] = {
	{ "error_type",      FK_STR,  REQ, 0, 0, NULL, NULL },
	{ "error_message",   FK_STR,  REQ, 0, 0, NULL, NULL },
	{ "context",         FK_OBJ,  REQ, 0, 0, NULL, NULL },
	{ "stack_trace",     FK_STR,  OPT, 0, 0, NULL, NULL },
	{ "recovery_action", FK_STR,  OPT, 0, 0, NULL, NULL },
	{ "impact_level",    FK_ENUM, REQ, 0, 0, levels, NULL },
	{ "related_task_id", FK_STR,  OPT, 0, 0, NULL, NULL },
};

static const struct field_spec heartbeat_fields[] = {
	{ "status",         FK_ENUM, REQ,         0, 0, heartbeat_status, NULL },
	{ "uptime_seconds", FK_NUM,  REQ | F_MIN, 0, 0, NULL, NULL },
	{ "active_tasks",   FK_INT,  REQ | F_MIN, 0, 0, NULL, NULL },
	{ "current_task",   FK_STR,  OPT,         0, 0, NULL, NULL },
	{ "pid",            FK_INT,  OPT | F_MIN, 1, 0, NULL, NULL },
	{ "capacity",       FK_INT,  OPT | F_MIN, 1, 0, NULL, NULL },
	{ "sequence",       FK_INT,  OPT | F_MIN, 0, 0, NULL, NULL },
};

static const struct field_spec system_status_fields[] = {
	{ "agent_status",              FK_ENUM,    REQ,         0, 0, agent_status, NULL },
	{ "cpu_usage_percent",         FK_NUM,     REQ | F_MIN, 0, 0, NULL, NULL },
	{ "memory_usage_mb",           FK_NUM,     REQ | F_MIN, 0, 0, NULL, NULL },
	{ "active_tasks",              FK_INT,     REQ | F_MIN, 0, 0, NULL, NULL },
	{ "completed_tasks_today",     FK_INT,     REQ | F_MIN, 0, 0, NULL, NULL },
	{ "error_count_today",         FK_INT,     REQ | F_MIN, 0, 0, NULL, NULL },
	{ "last_successful_operation", FK_TIME,    REQ,         0, 0, NULL, NULL },
	{ "performance_metrics",       FK_NUM_MAP, REQ,         0, 0, NULL, NULL },
};

static void acceptance_check(const cJSON *obj, const char *prefix,
			     struct vctx *v);

const struct schema msg_schemas[MSG_TYPE_COUNT] = {
	[MSG_TASK_ASSIGNMENT] = SCHEMA(task_assignment_fields, NULL),
	[MSG_TASK_ACCEPTANCE] = SCHEMA(task_acceptance_fields, acceptance_check),
	[MSG_TASK_PROGRESS] = SCHEMA(task_progress_fields, NULL),
	[MSG_RESEARCH_RESULT] = SCHEMA(research_result_fields, NULL),
	[MSG_VALIDATION_REQUEST] = SCHEMA(validation_request_fields, NULL),
	[MSG_VALIDATION_RESULT] = SCHEMA(validation_result_fields, NULL),
	[MSG_ERROR_REPORT] = SCHEMA(error_report_fields, NULL),
	[MSG_HEARTBEAT] = SCHEMA(heartbeat_fields, NULL),
	[MSG_SYSTEM_STATUS] = SCHEMA(system_status_fields, NULL),
};

static const cJSON *get(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* rejection_reason is required, and not empty, when status is rejected. */
static void acceptance_check(const cJSON *obj, const char *prefix,
			     struct vctx *v)
{
	const cJSON *st = get(obj, "status"), *why = get(obj, "rejection_reason");
	if (!cJSON_IsString(st) || strcmp(st->valuestring, "rejected"))
		return;
	if (why && !cJSON_IsNull(why) &&
	    (!cJSON_IsString(why) || why->valuestring[0]))
		return;
	char *path = json_path_join(prefix, "rejection_reason");
	msg_verr(v, path, "required when status is rejected");
	free(path);
}

static void check_schema(const struct schema *sc, const cJSON *obj,
			 const char *prefix, struct vctx *v);

static bool kind_accepts(enum field_kind k, const cJSON *val)
{
	switch (k) {
	case FK_STR:
	case FK_ENUM:
	case FK_TIME:
		return cJSON_IsString(val);
	case FK_INT:
		return cJSON_IsNumber(val) && msg_json_is_integer(val->valuedouble);
	case FK_NUM:
		return cJSON_IsNumber(val);
	case FK_OBJ:
	case FK_NUM_MAP:
		return cJSON_IsObject(val);
	case FK_STR_LIST:
	case FK_OBJ_LIST:
		return cJSON_IsArray(val);
	}
	return false;
}

static const char *kind_rule(enum field_kind k)
{
	switch (k) {
	case FK_STR:
	case FK_ENUM:
	case FK_TIME:
		return "must be a string";
	case FK_INT:
		return "must be an integer";
	case FK_NUM:
		return "must be a number";
	case FK_OBJ:
	case FK_NUM_MAP:
		return "must be an object";
	case FK_STR_LIST:
	case FK_OBJ_LIST:
		return "must be an array";
	}
	return "has the wrong type";
}

static void check_range(const struct field_spec *f, double d,
			const char *path, struct vctx *v)
{
	bool low = (f->flags & F_MIN) && d < f->min;
	bool high = (f->flags & F_MAX) && d > f->max;
	if (!low && !high)
		return;
	if ((f->flags & RANGE) == RANGE)
		msg_verr(v, path, "must be within %g..%g", f->min, f->max);
	else if (low)
		msg_verr(v, path, "must be >= %g", f->min);
	else
		msg_verr(v, path, "must be <= %g", f->max);
}

static void check_enum(const struct field_spec *f, const char *s,
		       const char *path, struct vctx *v)
{
	for (size_t i = 0; f->choices[i]; i++)
		if (!strcmp(s, f->choices[i]))
			return;
	char *list = msg_choices_join(f->choices);
	msg_verr(v, path, "must be one of %s", list);
	free(list);
}

static void check_num_map(const cJSON *obj, const char *path, struct vctx *v)
{
	for (const cJSON *c = obj->child; c; c = c->next) {
		if (cJSON_IsNumber(c))
			continue;
		char *p = json_path_join(path, c->string);
		msg_verr(v, p, "must be a number");
		free(p);
	}
}

static void check_list(const struct field_spec *f, const cJSON *arr,
		       const char *path, struct vctx *v)
{
	if ((f->flags & F_NONEMPTY) && !arr->child) {
		msg_verr(v, path, "must not be empty");
		return;
	}
	bool strings = f->kind == FK_STR_LIST;
	size_t i = 0;
	for (const cJSON *c = arr->child; c; c = c->next, i++) {
		bool ok = strings ? cJSON_IsString(c) : cJSON_IsObject(c);
		if (ok && strings)
			continue;
		char *p = xasprintf("%s[%zu]", path, i);
		if (!ok)
			msg_verr(v, p, strings ? "must be a string" : "must be an object");
		else
			check_schema(f->items, c, p, v);
		free(p);
	}
}

static void check_field(const struct field_spec *f, const cJSON *val,
			const char *path, struct vctx *v)
{
	enum msg_time_form t;
	int64_t ns;
	if (!val || (cJSON_IsNull(val) && !(f->flags & F_REQ))) {
		if (!val && (f->flags & F_REQ))
			msg_verr(v, path, "required");
		return;
	}
	if (!kind_accepts(f->kind, val)) {
		msg_verr(v, path, "%s", kind_rule(f->kind));
		return;
	}
	switch (f->kind) {
	case FK_STR:
		if ((f->flags & F_NONEMPTY) && !val->valuestring[0])
			msg_verr(v, path, "must not be empty");
		break;
	case FK_ENUM:
		check_enum(f, val->valuestring, path, v);
		break;
	case FK_TIME:
		t = msg_time_read(val->valuestring, &ns);
		if (t != MSG_TIME_ZONED && t != MSG_TIME_RANGE)
			msg_verr(v, path, "%s", RULE_TIME);
		break;
	case FK_INT:
	case FK_NUM:
		check_range(f, val->valuedouble, path, v);
		break;
	case FK_NUM_MAP:
		check_num_map(val, path, v);
		break;
	case FK_STR_LIST:
	case FK_OBJ_LIST:
		check_list(f, val, path, v);
		break;
	case FK_OBJ:
		break;
	}
}

static void check_schema(const struct schema *sc, const cJSON *obj,
			 const char *prefix, struct vctx *v)
{
	for (size_t i = 0; i < sc->count; i++) {
		const struct field_spec *f = &sc->fields[i];
		char *path = json_path_join(prefix, f->name);
		check_field(f, get(obj, f->name), path, v);
		free(path);
	}
	for (const cJSON *c = obj->child; sc->closed && c; c = c->next) {
		size_t i = 0;
		while (i < sc->count && strcmp(sc->fields[i].name, c->string))
			i++;
		if (i < sc->count)
			continue;
		char *path = json_path_join(prefix, c->string);
		msg_verr(v, path, "not allowed");
		free(path);
	}
	if (sc->check)
		sc->check(obj, prefix, v);
}

int schema_validate(const struct schema *sc, const cJSON *obj,
		    const char *prefix, struct msg_errors *errs)
{
	struct vctx v = { .errs = errs, .n = 0 };
	if (!cJSON_IsObject(obj))
		msg_verr(&v, prefix && prefix[0] ? prefix : "(top level)", "must be an object");
	else
		check_schema(sc, obj, prefix ? prefix : "", &v);
	return v.n;
}

void schema_error(struct vctx *v, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *rule = xvasprintf(fmt, ap);
	va_end(ap);
	msg_verr(v, path, "%s", rule);
	free(rule);
}

void msg_content_validate(enum msg_type type, const cJSON *content,
			  const char *prefix, struct vctx *v)
{
	if ((unsigned)type >= MSG_TYPE_COUNT) {
		char *list = msg_type_choices(false);
		msg_verr(v, "type", "must be one of %s", list);
		free(list);
	} else if (!cJSON_IsObject(content)) {
		msg_verr(v, prefix[0] ? prefix : "content", "must be an object");
	} else {
		check_schema(&msg_schemas[type], content, prefix, v);
	}
}

int msg_validate_content(enum msg_type type, const cJSON *content,
			 const char *prefix, struct msg_errors *errs)
{
	struct vctx v = { .errs = errs, .n = 0 };
	msg_content_validate(type, content, prefix ? prefix : "content", &v);
	return v.n;
}

/* ---- Seed 003 content onto the seed 002 schemas ----
 *
 * Applied only to messages that use seed 003's "payload" or
 * "message_type". A row applies when its 002 field (dst) is absent and its
 * 003 field (src) present; a consuming row then removes src. A field that
 * cannot be converted is moved as it is, so validation names what is wrong.
 *
 * task_assignment (003 TaskAssignment)
 *   target_market      -> target_pairs    ["AAA/BBB"] if it looks like a pair, else []
 *   target_market      -> focus_area
 *   time_window        -> timeframe       a string, or "START/END" from {start, end}
 *   mcp_tools          -> data_sources
 *   output_format defaults to "structured_json"; deadline, task_id,
 *   retry_count and context stay as they are.
 * research_result (003 ResearchResult)
 *   status defaults to "completed"
 *   processing_time    -> execution_time_minutes   seconds / 60
 *   market_data        -> data_points_collected    its length
 *   market_data        -> key_findings             each event's description
 *   market_data        -> raw_data                 {"market_data": [...]}
 *   sources            -> sources_accessed         strings, or "name"/"tool" of objects
 *   data_freshness_hours defaults to 0
 *   errors_encountered -> warnings
 *   confidence_score and task_id stay as they are.
 * error_report (003 AgentError)
 *   impact             -> impact_level
 *   mcp_tool           -> context.mcp_tool         (context created if absent)
 *   error_type, error_message and recovery_action stay as they are.
 */
enum map_op {
	MAP_MOVE,
	MAP_PAIR,
	MAP_WINDOW,
	MAP_MINUTES,
	MAP_COUNT,
	MAP_FINDINGS,
	MAP_WRAP,
	MAP_NAMES,
	MAP_INTO,    /* src into the object dst */
	MAP_DEFAULT, /* src is the default value, as JSON */
};

struct content_map {
	enum msg_type type;
	enum map_op op;
	const char *src;
	const char *dst;
	bool consume;
};

static const struct content_map content_maps[] = {
	{ MSG_TASK_ASSIGNMENT, MAP_PAIR, "target_market", "target_pairs", false },
	{ MSG_TASK_ASSIGNMENT, MAP_MOVE, "target_market", "focus_area", true },
	{ MSG_TASK_ASSIGNMENT, MAP_WINDOW, "time_window", "timeframe", true },
	{ MSG_TASK_ASSIGNMENT, MAP_MOVE, "mcp_tools", "data_sources", true },
	{ MSG_TASK_ASSIGNMENT, MAP_DEFAULT, "\"structured_json\"", "output_format", false },
	{ MSG_RESEARCH_RESULT, MAP_DEFAULT, "\"completed\"", "status", false },
	{ MSG_RESEARCH_RESULT, MAP_MINUTES, "processing_time", "execution_time_minutes", true },
	{ MSG_RESEARCH_RESULT, MAP_COUNT, "market_data", "data_points_collected", false },
	{ MSG_RESEARCH_RESULT, MAP_FINDINGS, "market_data", "key_findings", false },
	{ MSG_RESEARCH_RESULT, MAP_WRAP, "market_data", "raw_data", true },
	{ MSG_RESEARCH_RESULT, MAP_NAMES, "sources", "sources_accessed", true },
	{ MSG_RESEARCH_RESULT, MAP_DEFAULT, "0", "data_freshness_hours", false },
	{ MSG_RESEARCH_RESULT, MAP_MOVE, "errors_encountered", "warnings", true },
	{ MSG_ERROR_REPORT, MAP_MOVE, "impact", "impact_level", true },
	{ MSG_ERROR_REPORT, MAP_INTO, "mcp_tool", "context", true },
};

static bool looks_like_pair(const char *s)
{
	for (int i = 0; i < 7; i++) {
		bool ok = i == 3 ? s[i] == '/' : (s[i] >= 'A' && s[i] <= 'Z');
		if (!ok)
			return false;
	}
	return s[7] == '\0';
}

static cJSON *map_pair(const cJSON *src)
{
	if (!cJSON_IsString(src))
		return NULL;
	cJSON *a = cJSON_CreateArray();
	if (looks_like_pair(src->valuestring))
		cJSON_AddItemToArray(a, cJSON_CreateString(src->valuestring));
	return a;
}

static cJSON *map_window(const cJSON *src)
{
	const cJSON *start = get(src, "start"), *end = get(src, "end");
	if (!cJSON_IsObject(src) || !cJSON_IsString(start) ||
	    !cJSON_IsString(end))
		return cJSON_Duplicate(src, 1);
	char *s = xasprintf("%s/%s", start->valuestring, end->valuestring);
	cJSON *v = cJSON_CreateString(s);
	free(s);
	return v;
}

static cJSON *map_findings(const cJSON *src)
{
	if (!cJSON_IsArray(src))
		return NULL;
	cJSON *a = cJSON_CreateArray();
	for (const cJSON *e = src->child; e; e = e->next) {
		const cJSON *d = cJSON_IsObject(e) ? get(e, "description") : NULL;
		if (cJSON_IsString(d))
			cJSON_AddItemToArray(a, cJSON_CreateString(d->valuestring));
	}
	return a;
}

static cJSON *map_names(const cJSON *src)
{
	if (!cJSON_IsArray(src))
		return cJSON_Duplicate(src, 1);
	cJSON *a = cJSON_CreateArray();
	for (const cJSON *e = src->child; e; e = e->next) {
		const cJSON *n = NULL;
		if (cJSON_IsObject(e)) {
			n = get(e, "name");
			if (!cJSON_IsString(n))
				n = get(e, "tool");
		}
		cJSON_AddItemToArray(a, cJSON_IsString(n) ?
				     cJSON_CreateString(n->valuestring) :
				     cJSON_Duplicate(e, 1));
	}
	return a;
}

static cJSON *map_value(const struct content_map *r, const cJSON *src)
{
	cJSON *o;
	switch (r->op) {
	case MAP_MOVE:
		return cJSON_Duplicate(src, 1);
	case MAP_PAIR:
		return map_pair(src);
	case MAP_WINDOW:
		return map_window(src);
	case MAP_MINUTES:
		if (!cJSON_IsNumber(src))
			return cJSON_Duplicate(src, 1);
		return cJSON_CreateNumber(src->valuedouble / 60);
	case MAP_COUNT:
		if (!cJSON_IsArray(src))
			return NULL;
		return cJSON_CreateNumber(cJSON_GetArraySize(src));
	case MAP_FINDINGS:
		return map_findings(src);
	case MAP_WRAP:
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, r->src, cJSON_Duplicate(src, 1));
		return o;
	case MAP_NAMES:
		return map_names(src);
	case MAP_INTO:
	case MAP_DEFAULT:
		break;
	}
	return NULL;
}

static void map_into(const struct content_map *r, cJSON *content)
{
	cJSON *src = cJSON_GetObjectItemCaseSensitive(content, r->src);
	if (!src)
		return;
	cJSON *dst = cJSON_GetObjectItemCaseSensitive(content, r->dst);
	if (!dst) {
		dst = cJSON_CreateObject();
		cJSON_AddItemToObject(content, r->dst, dst);
	}
	if (!cJSON_IsObject(dst) || get(dst, r->src))
		return;
	cJSON_AddItemToObject(dst, r->src, cJSON_DetachItemViaPointer(content, src));
}

static void map_row(const struct content_map *r, cJSON *content)
{
	if (r->op == MAP_INTO) {
		map_into(r, content);
		return;
	}
	if (get(content, r->dst))
		return;
	if (r->op == MAP_DEFAULT) {
		cJSON_AddItemToObject(content, r->dst, cJSON_Parse(r->src));
		return;
	}
	const cJSON *src = get(content, r->src);
	cJSON *val = src ? map_value(r, src) : NULL;
	if (!val)
		return;
	if (r->consume)
		cJSON_DeleteItemFromObjectCaseSensitive(content, r->src);
	cJSON_AddItemToObject(content, r->dst, val);
}

void msg_content_map_apply(enum msg_type type, cJSON *content)
{
	for (size_t i = 0; i < ARRAY_SIZE(content_maps); i++)
		if (content_maps[i].type == type)
			map_row(&content_maps[i], content);
}
