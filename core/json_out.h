/* JSON for people: two-space indentation, "key": value; field getters. */
#ifndef MADF_JSON_OUT_H
#define MADF_JSON_OUT_H

#include <cJSON.h>

/* Pretty-prints j; caller frees. Scalars use cJSON's own escaping. */
char *json_pretty(const cJSON *j);

/* Field getters: the string (borrowed) or NULL, the number or def. */
static inline const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline double jnum(const cJSON *o, const char *k, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
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
