/* Configuration: the environment, then a config file and `.env` (KEY=VALUE
 * lines) for what the environment does not set; secrets stay in the
 * environment and are never logged or shown. */
#ifndef MADF_CONFIG_H
#define MADF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define CONFIG_FILE_MAX ((size_t)1 << 20) /* the largest config or .env file */

/* Loads KEY=VALUE lines from path into the environment without replacing
 * variables already set. Missing file: 0 when optional, else -1. Lines
 * that are not KEY=VALUE are errors naming the line. */
int config_load_env_file(const char *path, bool optional, char **err);

/* Called for each variable of an env text, in order (key and value are
 * borrowed for the call). Returns 0, or -1 with *err to stop. */
typedef int (*config_env_fn)(void *ctx, const char *key, const char *value, char **err);
/* Parses env text of len bytes, what config_load_env_file reads: lines
 * of KEY=VALUE (an optional "export ", a value in matching quotes taken
 * as is, else cut at " #"), blank lines and # comments. origin names the
 * text in errors ("ORIGIN:LINE: what"). Returns 0, or -1 with *err at the
 * first bad line (a NUL byte, no '=', a bad name); fn has seen the
 * variables before it. */
int config_parse_env(const char *text, size_t len, const char *origin, config_env_fn fn,
		     void *ctx, char **err);

/* The data directory: explicit (--data-dir), else MADF_DATA_DIR, else the
 * parent of MESSAGE_DIR when it ends in /messages, else "data".
 * Returns a new string. */
char *config_data_dir(const char *explicit_dir);
/* The log directory: explicit (--log-dir), else LOG_DIR, else "logs"
 * beside data_dir (the data directory in use, as config_data_dir gives
 * it): "data" gives "logs", "/srv/x/data" "/srv/x/logs"; a data directory
 * named "." or ".." (or "/") holds its logs inside, "<data_dir>/logs".
 * Returns a new string. */
char *config_log_dir(const char *explicit_dir, const char *data_dir);

/* Names whose values are secrets (API keys, tokens, passwords). */
bool config_is_secret(const char *name);
/* Replaces every secret value from the environment found in s with
 * "[redacted]". Returns a new string. */
char *config_redact(const char *s);

#endif
