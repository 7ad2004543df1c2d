/* The insides of messages, shared by core/message*.c only: a validation
 * pass, the content schemas' table, and what one part calls in
 * another. No other file includes this. */
#ifndef MADF_MESSAGE_PRIV_H
#define MADF_MESSAGE_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "core/message.h"
#include "core/schema.h"

#define RULE_TIME "must be ISO 8601 with a time zone"

/* A validation pass: errors go to errs (when not NULL), n counts them. */
struct vctx {
	struct msg_errors *errs;
	int n;
};

/* message.c: names, errors and field rules. */
char *msg_choices_join(const char *const *list);
char *msg_type_choices(bool with_aliases);
void msg_verr(struct vctx *v, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool msg_json_is_integer(double d);

/* message_schema.c: the schemas, content validation, seed 003 content. */
extern const struct schema msg_schemas[MSG_TYPE_COUNT];
void msg_content_validate(enum msg_type type, const cJSON *content,
			  const char *prefix, struct vctx *v);
void msg_content_map_apply(enum msg_type type, cJSON *content);

#endif
