/* The aggregate as SARIF 2.1.0: one run per agent (debt, improvement,
 * critical), ruleId from the finding's reference, level error for
 * critical and warning/note by severity for the others, the location
 * relative to the codebase root (uriBaseId SRCROOT) with a 1-based
 * startLine, and a partialFingerprints hash of the rule, the file and the
 * line's text (so a finding keeps it when lines above it move). */
#include "agents/review.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static char *rule_of(const char *reference)
{
	const char *slash = strrchr(reference, '/');
	if (!strncmp(reference, "http", 4) && slash && slash[1])
		return xstrdup(slash + 1);
	return xstrdup(reference);
}

cJSON *review_sarif(const cJSON *agg)
{
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(agg, "review");
	const char *root = jstr_or(rv, "root", "");
	cJSON *log = cJSON_CreateObject();
	cJSON_AddStringToObject(log, "$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json");
	cJSON_AddStringToObject(log, "version", "2.1.0");
	cJSON *runs = cJSON_AddArrayToObject(log, "runs");
	static const char *const parts[] = { "critical", "debt", "improvement" };
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(agg, parts[i]);
		const cJSON *agent = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(rv, "agents"), parts[i]);
		if (!agent)
			continue;
		cJSON *run = cJSON_CreateObject();
		cJSON_AddItemToArray(runs, run);
		cJSON *driver = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "tool"), "driver");
		char *name = xasprintf("madf-review-%s", parts[i]);
		cJSON_AddStringToObject(driver, "name", name);
		free(name);
		cJSON_AddStringToObject(driver, "version", MADF_VERSION);
		cJSON_AddStringToObject(driver, "informationUri", "https://cwe.mitre.org/");
		cJSON *rules = cJSON_AddArrayToObject(driver, "rules");
		cJSON *base = cJSON_AddObjectToObject(run, "originalUriBaseIds");
		char *uri = xasprintf("file://%s/", root);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(base, "SRCROOT"), "uri", uri);
		free(uri);
		cJSON *results = cJSON_AddArrayToObject(run, "results");
		cJSON *seen = cJSON_CreateObject(); /* fingerprint -> count */
		const cJSON *f;
		cJSON_ArrayForEach(f, list) {
			const char *ref = jstr_or(f, "reference", "");
			char *rule = rule_of(ref);
			bool known = false;
			const cJSON *r;
			cJSON_ArrayForEach(r, rules)
				known = known || !strcmp(jstr_or(r, "id", ""), rule);
			if (!known) {
				cJSON *rd = cJSON_CreateObject();
				cJSON_AddStringToObject(rd, "id", rule);
				if (!strncmp(ref, "CWE-", 4)) {
					char *help = xasprintf("https://cwe.mitre.org/data/definitions/%s.html", ref + 4);
					cJSON_AddStringToObject(rd, "helpUri", help);
					free(help);
				} else if (!strncmp(ref, "http", 4)) {
					cJSON_AddStringToObject(rd, "helpUri", ref);
				}
				cJSON_AddItemToArray(rules, rd);
			}
			cJSON *res = cJSON_CreateObject();
			cJSON_AddStringToObject(res, "ruleId", rule);
			const char *sev = jstr_or(f, "severity", "");
			cJSON_AddStringToObject(res, "level", i == 0 ? "error" :
						!strcmp(sev, "low") ? "note" : "warning");
			cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "message"), "text",
						jstr_or(f, "description", ""));
			cJSON *loc = cJSON_CreateObject();
			cJSON_AddItemToArray(cJSON_AddArrayToObject(res, "locations"), loc);
			cJSON *pl = cJSON_AddObjectToObject(loc, "physicalLocation");
			cJSON *al = cJSON_AddObjectToObject(pl, "artifactLocation");
			cJSON_AddStringToObject(al, "uri", jstr_or(f, "file", ""));
			cJSON_AddStringToObject(al, "uriBaseId", "SRCROOT");
			long line = (long)cJSON_GetNumberValue(cJSON_GetObjectItem(f, "line"));
			cJSON_AddNumberToObject(cJSON_AddObjectToObject(pl, "region"), "startLine", (double)line);
			char *text = review_line_text(root, jstr_or(f, "file", ""), line);
			uint64_t h = 14695981039346656037ULL;
			h = fnv(h, rule, strlen(rule) + 1);
			h = fnv(h, jstr_or(f, "file", ""), strlen(jstr_or(f, "file", "")) + 1);
			h = fnv(h, text, strlen(text));
			free(text);
			char key[32];
			snprintf(key, sizeof(key), "%016" PRIx64, h);
			cJSON *cnt = cJSON_GetObjectItemCaseSensitive(seen, key);
			int nth = cnt ? (int)cnt->valuedouble + 1 : 1;
			if (cnt)
				cJSON_SetNumberValue(cnt, nth);
			else
				cJSON_AddNumberToObject(seen, key, 1);
			char *fp = xasprintf("%s:%d", key, nth);
			cJSON_AddStringToObject(cJSON_AddObjectToObject(res, "partialFingerprints"),
						"primaryLocationLineHash", fp);
			free(fp);
			free(rule);
			cJSON_AddItemToArray(results, res);
		}
		cJSON_Delete(seen);
	}
	return log;
}
