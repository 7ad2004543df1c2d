/* JSON output for people: two-space indentation, "key": value. */
#ifndef MADF_JSON_OUT_H
#define MADF_JSON_OUT_H

#include <cJSON.h>

/* Pretty-prints j; caller frees. Scalars use cJSON's own escaping. */
char *json_pretty(const cJSON *j);

#endif
