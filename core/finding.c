/* Review findings: the schema table and its cross-field rule. */
#include "core/finding.h"
#include "core/message.h"
#include "core/schema.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

#include "core/banned.h"

static const char *const type_names[] = { "debt", "improvement", "critical", NULL };
static const char *const severities[] = { "low", "medium", "high", "critical", NULL };

static void finding_check(const cJSON *obj, const char *prefix, struct vctx *v);

static const struct field_spec finding_fields[] = {
	/* name          kind     flags                    min max choices      items */
	{ "type",        FK_ENUM, REQ,                     0, 0, type_names, NULL },
	{ "severity",    FK_ENUM, REQ,                     0, 0, severities, NULL },
	{ "description", FK_STR,  REQ | F_NONEMPTY,        0, 0, NULL,       NULL },
	{ "file",        FK_STR,  REQ | F_NONEMPTY,        0, 0, NULL,       NULL },
	{ "line",        FK_INT,  REQ | F_MIN,             1, 0, NULL,       NULL },
	{ "suggestion",  FK_STR,  OPT | F_NONEMPTY,        0, 0, NULL,       NULL },
	{ "remediation", FK_STR,  OPT | F_NONEMPTY,        0, 0, NULL,       NULL },
	{ "reference",   FK_STR,  REQ | F_NONEMPTY,        0, 0, NULL,       NULL },
};

static const struct schema finding_schema = SCHEMA_CLOSED(finding_fields, finding_check);

const char *finding_type_name(enum finding_type t)
{
	return (unsigned)t <= FINDING_CRITICAL ? type_names[t] : "unknown";
}

int finding_type_from_name(const char *s)
{
	for (int i = 0; s && type_names[i]; i++)
		if (!strcmp(s, type_names[i]))
			return i;
	return -1;
}

static bool present(const cJSON *obj, const char *key)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);
	return c && !cJSON_IsNull(c);
}

/* remediation for critical, suggestion otherwise (and not the other);
 * file relative to the codebase root, never leaving it. */
static void finding_check(const cJSON *obj, const char *prefix, struct vctx *v)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "type");
	if (cJSON_IsString(t) && finding_type_from_name(t->valuestring) >= 0) {
		bool critical = !strcmp(t->valuestring, "critical");
		const char *want = critical ? "remediation" : "suggestion";
		const char *other = critical ? "suggestion" : "remediation";
		char *p = json_path_join(prefix, want);
		if (!present(obj, want))
			schema_error(v, p, "required when type is %s", t->valuestring);
		free(p);
		p = json_path_join(prefix, other);
		if (present(obj, other))
			schema_error(v, p, "not allowed when type is %s (use %s)",
				     t->valuestring, want);
		free(p);
	}
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, "file");
	if (cJSON_IsString(f) && f->valuestring[0]) {
		const char *s = f->valuestring;
		bool up = !strcmp(s, "..") || !strncmp(s, "../", 3) || strstr(s, "/../") ||
			  (strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/.."));
		if (s[0] == '/' || up) {
			char *p = json_path_join(prefix, "file");
			schema_error(v, p, "must be a path relative to the codebase root");
			free(p);
		}
	}
}

int finding_validate(const cJSON *f, const char *prefix, struct msg_errors *errs)
{
	return schema_validate(&finding_schema, f, prefix ? prefix : "", errs);
}

int finding_list_validate(const cJSON *arr, int want, const char *prefix,
			  struct msg_errors *errs)
{
	if (!cJSON_IsArray(arr)) {
		msg_errors_add(errs, "%s: must be an array", prefix && prefix[0] ? prefix : "(top level)");
		return 1;
	}
	int n = 0;
	size_t i = 0;
	for (const cJSON *c = arr->child; c; c = c->next, i++) {
		char *p = xasprintf("%s[%zu]", prefix ? prefix : "", i);
		n += finding_validate(c, p, errs);
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (want >= 0 && cJSON_IsString(t) && finding_type_from_name(t->valuestring) >= 0 &&
		    finding_type_from_name(t->valuestring) != want) {
			char *tp = json_path_join(p, "type");
			msg_errors_add(errs, "%s: must be %s in this list", tp,
				       finding_type_name((enum finding_type)want));
			free(tp);
			n++;
		}
		free(p);
	}
	return n;
}

cJSON *finding_new(enum finding_type type, const char *severity,
		   const char *description, const char *file, long line,
		   const char *advice, const char *reference)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "type", finding_type_name(type));
	cJSON_AddStringToObject(f, "severity", severity ? severity : "");
	cJSON_AddStringToObject(f, "description", description ? description : "");
	cJSON_AddStringToObject(f, "file", file ? file : "");
	cJSON_AddNumberToObject(f, "line", (double)line);
	cJSON_AddStringToObject(f, type == FINDING_CRITICAL ? "remediation" : "suggestion",
				advice ? advice : "");
	cJSON_AddStringToObject(f, "reference", reference ? reference : "");
	if (finding_validate(f, "", NULL) != 0) {
		cJSON_Delete(f);
		return NULL;
	}
	return f;
}
