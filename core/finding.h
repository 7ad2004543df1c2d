/* Review findings (seed 001, "Agent Input/Output Interfaces"): the objects
 * the debt, improvement and critical agents output, kept beside the message
 * schemas and checked with the same declarative tables (core/schema.h):
 *
 *   {"type": "debt"|"improvement"|"critical",
 *    "severity": "low"|"medium"|"high"|"critical",
 *    "description": "...", "file": "<path relative to the codebase root>",
 *    "line": <integer >= 1>,
 *    "suggestion": "..."   (debt, improvement)
 *    "remediation": "..."  (critical),
 *    "reference": "CWE-NNN or the rule's documentation"}
 *
 * Strict: every field is required (suggestion or remediation as the type
 * says, never both), strings are not empty, no other member is allowed. */
#ifndef MADF_FINDING_H
#define MADF_FINDING_H

#include <cJSON.h>

struct msg_errors;

enum finding_type { FINDING_DEBT, FINDING_IMPROVEMENT, FINDING_CRITICAL };

const char *finding_type_name(enum finding_type t);
int finding_type_from_name(const char *s); /* -1 if unknown */

/* Validates one finding; paths start at prefix ("" or e.g. "critical[3]").
 * Returns the number of errors appended to errs (may be NULL). */
int finding_validate(const cJSON *f, const char *prefix, struct msg_errors *errs);
/* Validates an array of findings, each of type want (-1: any type). */
int finding_list_validate(const cJSON *arr, int want, const char *prefix,
			  struct msg_errors *errs);

/* A new finding object (the caller owns it); the advice goes to
 * "remediation" for critical, "suggestion" otherwise. Returns NULL when
 * the result would not validate (the fields are checked). */
cJSON *finding_new(enum finding_type type, const char *severity,
		   const char *description, const char *file, long line,
		   const char *advice, const char *reference);

#endif
