/* The review crew's secrets scan (review.secrets, agents/review_tools.c)
 * through the tool registry, as the critical agent calls it, over a file
 * written here: a hard-coded value is a secret (a well-known token format,
 * or a high-entropy literal assigned to a name that says key, secret,
 * token or password), the name of an environment variable is not. It
 * reported MADF_TASK_TOKEN_BUDGET, getenv("ANTHROPIC_API_KEY"), "${VAR}",
 * its own regular expressions and literals beside a word that named no
 * variable ("madf review ." flagged agents/llm_agent.c), and "sk-" at the
 * tail of a word ("task-", "desk-" and a long tail) as an API key. The
 * values below are written in pieces (each under 16 characters) so that
 * this file is not itself reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "agents/review.h"
#include "core/tools.h"
#include "core/util.h"

#include "core/banned.h"

/* a made-up value: 20 characters, 4.3 bits each */
#define KEY20 "Zx8Qp2Lm" "9Rt4Vw7Yb3Nc"
/* a made-up body of an "sk-" key: 24 letters and digits */
#define SK24 "Ab3dEf6hIj9k" "Lm2nOp5qRs8t"

static const char *const lines[] = {
	/* 1-3: names of variables, reported before */
	"const char *k = getenv(\"ANTHROPIC_API_KEY\");",
	"key_var = \"MADF_TASK_TOKEN_BUDGET\";",
	"n = env_long(\"MADF_REVIEW_LLM_INPUT_TOKENS\", 100, 10000000);",
	/* 4-7: values beside them */
	"static const char *api_key = \"" KEY20 "\";",
	"setenv(\"OPENAI_API_KEY\", \"" KEY20 "\", 1);",
	"const char *tok = getenv(\"GITHUB_TOKEN\"), *dflt = \"ghp_" "0a1b2c3d4e5f6g7"
	"h8i9j0k1l2m3n4o" "5p6q7r\";",
	"putenv(\"API_KEY=" KEY20 "\");",
	/* 8: a reference to a variable; 9: a default that is a value */
	"\"env\": {\"API_KEY\": \"${API_KEY_FROM_THE_VAULT}\"}",
	"\"env\": {\"API_KEY\": \"${UNSET:-" KEY20 "}\"}",
	/* 10: a regular expression; 11: a word after the literal, naming
	 * nothing it is assigned to */
	"{ \"an AWS access key id\", \"(AKIA|ASIA)[0-9A-Z]{16}\" },",
	"{\"id\": \"reuters-21578-4005\", \"title\": \"KEY DATA\"}",
	/* 12: base64 ending in padding */
	"password = \"c2VjcmV0a2V5" "MTIzNDU2Nzg5MA==\";",
	/* 13: a shell path built from a variable */
	"cp -p \"$DATA/serve-tokens\" \"$T/b\"",
	/* 14-15: shell assignments of a value */
	"export TOKEN=\"" KEY20 "\"",
	"run(\"TOKEN=" KEY20 "\")",
	/* 16: an escaped quote is no end of the literal */
	"printf(\"madf_resources{resource=\\\"input_tokens\\\"} %.0f\\n\", x);",
	/* 17: an "sk-" key; 18-20: "sk-" as a word's tail ("task-", "disk-",
	 * "desk-"), reported before; 21: a placeholder; 22: a key at the
	 * line's start; 23: a placeholder, then a key on the same line */
	"openai = \"s" "k-" SK24 "\";",
	"id = \"ta" "sk-" "abcdefghij0123456789klmn\";",
	"path = \"/dev/di" "sk-" "0123456789abcdef0123456789\";",
	"de" "sk-" "0123456789abcdef0123456789",
	"# OPENAI_API_KEY=s" "k-" "xxxxxxxxxxxxxxxxxxxxxxxx",
	"s" "k-" SK24,
	"keys: s" "k-" "xxxxxxxxxxxxxxxxxxxxxxxx, then s" "k-" SK24,
};

static void test_secrets_names_and_values(void **state)
{
	(void)state;
	char *dir = xstrdup("/tmp/madf-test-review-secrets-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char *root = xasprintf("%s/root", dir), *src = xasprintf("%s/root/a.c", dir);
	assert_int_equal(mkdir(root, 0700), 0);
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		sbuf_addf(&b, "%s\n", lines[i]);
	assert_int_equal(util_write_file_atomic(src, b.data, b.len, false, NULL), 0);
	sbuf_release(&b);

	char *data = xasprintf("%s/data", dir), *logs = xasprintf("%s/log", dir), *err = NULL;
	struct tools *reg = NULL;
	assert_int_equal(tools_open(data, logs, NULL, &reg, &err), 0);
	assert_int_equal(review_tools_register(reg, &err), 0);
	cJSON *args = cJSON_CreateObject(), *res = NULL;
	cJSON_AddStringToObject(args, "root", root);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(args, "files"), cJSON_CreateString("a.c"));
	if (tools_call(reg, "review_critical", "review.secrets", args, &res, &err) < 0)
		fail_msg("review.secrets: %s", err);

	/* what is reported: line:rule, in order */
	sbuf_init(&b);
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(res, "items")) {
		sbuf_addf(&b, "%d:%s ", (int)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")),
			  cJSON_GetStringValue(cJSON_GetObjectItem(it, "rule")));
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(it, "cwe")), "CWE-798");
		/* the value is never in the finding */
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(it, "message"));
		assert_null(strstr(m, "Zx8Qp2Lm"));
		assert_null(strstr(m, "c2VjcmV0"));
		assert_null(strstr(m, "Ab3dEf6h"));
		if (cJSON_GetNumberValue(cJSON_GetObjectItem(it, "line")) == 17)
			assert_non_null(strstr(m, "an API secret key matches its well-known pattern"));
	}
	assert_string_equal(b.data, "4:entropy 5:entropy 6:pattern 7:entropy 9:entropy "
			    "12:entropy 14:entropy 15:entropy 17:pattern 22:pattern 23:pattern ");
	sbuf_release(&b);

	cJSON_Delete(res);
	cJSON_Delete(args);
	review_tools_release(reg);
	tools_free(&reg);
	util_rm_tree(dir);
	free(data);
	free(logs);
	free(src);
	free(root);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secrets_names_and_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
