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

#endif
