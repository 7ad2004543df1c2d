/* JSON for people: two-space indentation, "key": value; field getters
 * and setters. */
#ifndef MADF_JSON_OUT_H
#define MADF_JSON_OUT_H

#include <cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/util.h"

/* Pretty-prints j; caller frees. Scalars use cJSON's own escaping. */
char *json_pretty(const cJSON *j);

/* Field getters, the one set for all of madf. o may be NULL or not an
 * object: every field is then missing. Keys match exactly (case
 * sensitive). Strings are borrowed from o (valid while o is). */

/* The field k, or NULL. */
static inline const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* The string at k, or NULL (missing, or not a string). */
static inline const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The string at k, or def. */
static inline const char *jstr_or(const cJSON *o, const char *k, const char *def)
{
	const char *s = jstr(o, k);
	return s ? s : def;
}

/* Whether k is a string equal to want. */
static inline bool jstr_is(const cJSON *o, const char *k, const char *want)
{
	const char *s = jstr(o, k);
	return s && !strcmp(s, want);
}

/* The number at k, or def. */
static inline double jnum(const cJSON *o, const char *k, double def)
{
	const cJSON *v = jget(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* A finite number at k: true with *v; false (*v untouched) otherwise. */
static inline bool jnum_get(const cJSON *o, const char *k, double *v)
{
	const cJSON *j = jget(o, k);
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
		return false;
	*v = j->valuedouble;
	return true;
}

/* A number at k within [min, max]: true with *v (truncated toward zero);
 * false (*v untouched) otherwise. */
static inline bool jint(const cJSON *o, const char *k, long min, long max, long *v)
{
	const cJSON *j = jget(o, k);
	double d = cJSON_IsNumber(j) ? j->valuedouble : NAN;
	if (!(d >= (double)min) || !(d <= (double)max) || d >= 9223372036854775807.0)
		return false; /* (the last: 2^63, where (double)LONG_MAX rounds to) */
	*v = (long)d;
	return true;
}

/* The string at k made safe to show (util_sanitize: control and escape
 * sequences replaced, invalid UTF-8 replaced), newly allocated (the caller
 * frees it), or NULL. For objects read from files that may have failed
 * validation. */
static inline char *jstr_clean(const cJSON *o, const char *k)
{
	const char *s = jstr(o, k);
	return s ? util_sanitize(s, strlen(s), false) : NULL;
}

/* true or false at k, or def. */
static inline bool jbool(const cJSON *o, const char *k, bool def)
{
	const cJSON *v = jget(o, k);
	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

/* Field setters: k replaced by v (a string, or null when v is NULL), by a
 * number; the object or array at k, created (replacing a value of another
 * type) when absent. */
static inline void jset_str(cJSON *o, const char *k, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddItemToObject(o, k, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

static inline void jset_num(cJSON *o, const char *k, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddNumberToObject(o, k, v);
}

static inline cJSON *jobj(cJSON *o, const char *k)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsObject(v)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		v = cJSON_AddObjectToObject(o, k);
	}
	return v;
}

static inline cJSON *jarr(cJSON *o, const char *k)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsArray(v)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		v = cJSON_AddArrayToObject(o, k);
	}
	return v;
}

#endif
