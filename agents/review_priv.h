/* Shared by the review tools' files (agents/review_tools.c,
 * agents/review_analyzers.c): the analyzer slots and the raw finding. */
#ifndef MADF_REVIEW_PRIV_H
#define MADF_REVIEW_PRIV_H

#include <cJSON.h>
#include <stdbool.h>

#include "core/tools.h"

/* Analyzer processes run at once across the agents of this process: at
 * most the CPU count (MADF_REVIEW_JOBS overrides). take blocks until a
 * slot is free; give returns it. */
int review_slots_max(void);
void review_slot_take(void);
void review_slot_give(void);

/* A raw finding {"tool","rule","level","file","line","message","cwe"}
 * (file without a leading "./", line at least 1, cwe null when NULL or
 * ""). New; caller owns it. */
cJSON *review_raw_new(const char *tool, const char *rule, int level, const char *file,
		      long line, const char *message, const char *cwe);

/* The Debian package of a program ("universal-ctags" for ctags). */
const char *review_package_of(const char *prog);

/* Registers review.gcc_analyzer and review.clang_analyzer (agents/
 * review_analyzers.c). */
int review_analyzers_register(struct tools *t, char **err);

/* ---- the critical agent's keep-policy (agents/review_critical.c) ---- */

/* A single tool's report is kept when its track record in the defect
 * class (hits / (hits + false alarms)) is at least this. */
#define REVIEW_KEEP_PRECISION 0.90

/* Groups raw findings (review_raw_new's, borrowed) by file, line and
 * defect class (e.g. CWE-415, the overflow family), and keeps a group when
 * two tools agree on it, or one tool whose track record in the class
 * reaches REVIEW_KEEP_PRECISION, or a secret matching a credential format.
 * Returns the kept ones (new), in file and line order, each {"file",
 * "line", "cwe", "severity", "message", "tools" (e.g. "gcc-analyzer
 * -Wanalyzer-double-free, clang-analyzer unix.Malloc"), "why"}; *dropped
 * counts the raw findings left out. root: the codebase (unused for now). */
cJSON *review_critical_keep(const cJSON *raw, const char *root, long *dropped);
/* The remediation advice for a CWE id (a general one when unknown). */
const char *review_critical_remedy(const char *cwe);

#endif
