/* Configuration: the environment, then a config file and `.env` (KEY=VALUE
 * lines) for what the environment does not set; secrets stay in the
 * environment and are never logged or shown. */
#ifndef MADF_CONFIG_H
#define MADF_CONFIG_H

#include <stdbool.h>

/* Loads KEY=VALUE lines from path into the environment without replacing
 * variables already set. Missing file: 0 when optional, else -1. Lines
 * that are not KEY=VALUE are errors naming the line. */
int config_load_env_file(const char *path, bool optional, char **err);

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
