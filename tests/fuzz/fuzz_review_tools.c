/* libFuzzer target: what the review crew reads from the analyzers and the
 * codebase, through the tool registry as the agents call it
 * (tools_call of review.*). The analyzers are tests/fuzz/tool_out.c
 * installed on PATH under their names: each prints the input as its
 * output (on stdout and stderr) and exits with the status byte 1 picks,
 * so review_exec's capture, the status handling and each tool's own
 * parser run as in a review. Byte 0 picks the tool: cppcheck (template
 * lines), flawfinder (SARIF), shellcheck (json1), ctags (JSON lines),
 * cloc (JSON), pmccabe (lines), gcc -fanalyzer (JSON diagnostics), clang
 * --analyze (text), or review.secrets and review.markers, which read the
 * input as the source file itself. A result's items have the tool's
 * fields (a raw finding's file relative, its line a whole number from 1,
 * its cwe null or CWE-N), print as JSON that parses strictly again, and a
 * failure is one line. */
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/review.h"
#include "core/message.h"
#include "core/tools.h"

#include "tests/fuzz/fuzz_util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const tools[] = {
	"cppcheck", "flawfinder", "shellcheck", "ctags", "cloc", "pmccabe",
	"gcc_analyzer", "clang_analyzer", "secrets", "markers",
};
static const char *const progs[] = { "cppcheck", "flawfinder", "shellcheck", "ctags",
				     "cloc", "pmccabe", "gcc", "clang" };
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))
#define NPROGS (sizeof(progs) / sizeof(progs[0]))

static struct tools *reg;
static char root[200], out_path[200], status_path[200], src_path[200], log_dir[200];
static cJSON *args;
static unsigned long calls;

static void setup(void)
{
	const char *dir = fuzz_tmpdir();
	char exe[4096], bin[256], link[300], helper[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		fuzz_fail("readlink /proc/self/exe", NULL);
	exe[n] = '\0';
	snprintf(helper, sizeof(helper), "%s/tool_out", dirname(exe));
	if (access(helper, X_OK) < 0)
		fuzz_fail("the fake analyzer is not built (make fuzz-build)", helper);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	mkdir(bin, 0700);
	for (size_t i = 0; i < NPROGS; i++) {
		snprintf(link, sizeof(link), "%s/%s", bin, progs[i]);
		if (symlink(helper, link) < 0)
			fuzz_fail("symlink", link);
	}
	/* only the fake analyzers are found */
	setenv("PATH", bin, 1);
	setenv("FUZZ_TOOL_DIR", dir, 1);
	setenv("MADF_REVIEW_JOBS", "1", 1);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	snprintf(status_path, sizeof(status_path), "%s/status", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	mkdir(root, 0700);
	snprintf(src_path, sizeof(src_path), "%s/a.c", root);
	fuzz_write(src_path, "int main(void) { return 0; }\n", 29, 0600);
	char sh[260];
	snprintf(sh, sizeof(sh), "%s/run.sh", root);
	fuzz_write(sh, "#!/bin/sh\necho hi\n", 18, 0600);
	char data_dir[220];
	snprintf(data_dir, sizeof(data_dir), "%s/data", dir);
	snprintf(log_dir, sizeof(log_dir), "%s/log", dir);
	char *err = NULL;
	if (tools_open(data_dir, log_dir, NULL, &reg, &err) < 0 ||
	    review_tools_register(reg, &err) < 0)
		fuzz_fail("the registry", err);
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "root", root);
	cJSON *files = cJSON_AddArrayToObject(args, "files");
	cJSON_AddItemToArray(files, cJSON_CreateString("a.c"));
	cJSON_AddItemToArray(files, cJSON_CreateString("run.sh"));
}

static bool whole(const cJSON *n, double min)
{
	return cJSON_IsNumber(n) && isfinite(n->valuedouble) && n->valuedouble >= min &&
	       floor(n->valuedouble) == n->valuedouble;
}

static void check_raw(const cJSON *it)
{
	const char *tool = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "tool"));
	const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "file"));
	const cJSON *cwe = cJSON_GetObjectItemCaseSensitive(it, "cwe");
	if (!tool || !file || !cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "rule")) ||
	    !cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "message")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "level")))
		fuzz_fail("a finding without its fields", NULL);
	if (!strncmp(file, "./", 2))
		fuzz_fail("a finding's file not relative to the root", file);
	if (!whole(cJSON_GetObjectItemCaseSensitive(it, "line"), 1))
		fuzz_fail("a finding's line is not a whole number from 1", file);
	if (!cJSON_IsNull(cwe)) {
		const char *c = cJSON_GetStringValue(cwe);
		if (!c || strncmp(c, "CWE-", 4) || !c[4] || strspn(c + 4, "0123456789") != strlen(c + 4))
			fuzz_fail("a cwe that is not CWE-N", c);
	}
}

static void check_result(size_t k, const cJSON *res)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(res, "items"), *it;
	if (!cJSON_IsArray(items))
		fuzz_fail("a result without items", tools[k]);
	cJSON_ArrayForEach(it, items) {
		switch (k) {
		case 3: /* ctags */
			if (!cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name")) ||
			    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "line")) ||
			    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "end")))
				fuzz_fail("a function without its name or lines", NULL);
			break;
		case 4: /* cloc */
			if (!cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "file")) ||
			    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "code")))
				fuzz_fail("a file's count without its fields", NULL);
			break;
		case 5: /* pmccabe */
			if (!cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name")) ||
			    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "complexity")))
				fuzz_fail("a function's complexity without its fields", NULL);
			break;
		default:
			check_raw(it);
		}
	}
	const cJSON *note;
	cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(res, "notes"))
		fuzz_check_text("a note", cJSON_GetStringValue(note));
	/* the findings travel in bus messages and reports: strict JSON */
	char *text = cJSON_PrintUnformatted(res);
	char *perr = NULL;
	cJSON *back = text ? json_parse_strict(text, strlen(text), &perr) : NULL;
	if (!back)
		fuzz_fail("a result that does not parse strictly again", perr);
	cJSON_Delete(back);
	cJSON_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_name = "review_tools";
	if (!reg)
		setup();
	if (size < 2)
		return 0;
	static const int statuses[] = { 0, 0, 1, 2, 124, 139 };
	size_t k = data[0] % NTOOLS;
	char st[8];
	snprintf(st, sizeof(st), "%d", statuses[data[1] % 6]);
	fuzz_write(status_path, st, strlen(st), 0600);
	if (k >= NPROGS)
		fuzz_write(src_path, data + 2, size - 2, 0600);
	else
		fuzz_write(out_path, data + 2, size - 2, 0600);
	char name[64];
	snprintf(name, sizeof(name), "review.%s", tools[k]);
	cJSON *res = NULL;
	char *err = NULL;
	if (tools_call(reg, "review_critical", name, args, &res, &err) == 0) {
		if (err)
			fuzz_fail("a result with an error", err);
		check_result(k, res);
		cJSON_Delete(res);
	} else {
		fuzz_check_text("a tool's failure", err);
		if (res)
			fuzz_fail("a failure with a result", NULL);
	}
	free(err);
	/* cppcheck's result is kept for the review: one review per input */
	review_tools_release(reg);
	if (++calls % 4096 == 0) {
		/* the registry's usage lines */
		char tdir[260];
		snprintf(tdir, sizeof(tdir), "%s/tools", log_dir);
		util_rm_tree(tdir);
	}
	return 0;
}
