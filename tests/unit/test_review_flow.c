/* review.flow, madf's own finder: outside input followed to commands
 * (CWE-78) and format strings (CWE-134) in small C snippets; each flow
 * found at its exact line, each safe twin (a constant, a literal format, a
 * dead branch, an overwrite) not found; memory leaks (CWE-401) found at the
 * line the block is lost, their twins (freed, returned, kept) not found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agents/review_flow.h"
#include "core/json_out.h"
#include "core/util.h"

#include "core/banned.h"

/* The findings over the given files (path, text, path, text, ..., NULL)
 * as "file:line:CWE" joined by spaces (new); *msgs (may be NULL) gets the
 * messages joined by " | " (new). */
static char *run(char **msgs, ...)
{
	va_list ap;
	struct flow_file f[8];
	size_t n = 0;
	va_start(ap, msgs);
	for (const char *p; n < 8 && (p = va_arg(ap, const char *));) {
		const char *text = va_arg(ap, const char *);
		flow_file_from_text(&f[n++], p, text, strlen(text));
	}
	va_end(ap);
	cJSON *items = cJSON_CreateArray();
	flow_analyze(f, n, items);
	struct sbuf b, m;
	sbuf_init(&b);
	sbuf_init(&m);
	sbuf_addstr(&b, "");
	sbuf_addstr(&m, "");
	const cJSON *x;
	cJSON_ArrayForEach(x, items) {
		sbuf_addf(&b, "%s%s:%d:%s", b.len ? " " : "", jstr(x, "file"), (int)jnum(x, "line", 0),
			  jstr(x, "cwe"));
		sbuf_addf(&m, "%s%s", m.len ? " | " : "", jstr(x, "message"));
		assert_string_equal(jstr(x, "tool"), "madf-flow");
	}
	cJSON_Delete(items);
	for (size_t i = 0; i < n; i++)
		flow_file_release(&f[i]);
	if (msgs)
		*msgs = sbuf_detach(&m);
	else
		sbuf_release(&m);
	return sbuf_detach(&b);
}

static void expect(char *got, const char *want)
{
	assert_string_equal(got, want);
	free(got);
}

static const char SOCKET_TO_SYSTEM[] =
	"#include <stdlib.h>\n"                        /* 1 */
	"#include <sys/socket.h>\n"                    /* 2 */
	"void run(int s)\n"                            /* 3 */
	"{\n"                                          /* 4 */
	"    char buf[100] = \"ls \";\n"               /* 5 */
	"    char *data = buf;\n"                      /* 6 */
	"    size_t n = strlen(data);\n"               /* 7 */
	"    int r = recv(s, data + n, 99 - n, 0);\n"  /* 8 */
	"    if (r <= 0)\n"                            /* 9 */
	"        return;\n"                            /* 10 */
	"    data[n + r] = '\\0';\n"                   /* 11 */
	"    system(data);\n"                          /* 12 */
	"}\n";

static void test_socket_to_system(void **state)
{
	(void)state;
	char *msgs = NULL;
	expect(run(&msgs, "a.c", SOCKET_TO_SYSTEM, NULL), "a.c:12:CWE-78");
	assert_non_null(strstr(msgs, "data from recv() at line 8 reaches system() (argument 1) at "
				    "line 12 unchecked"));
	free(msgs);
}

/* The same buffer filled with a constant instead: nothing. */
static void test_constant_twin(void **state)
{
	(void)state;
	expect(run(NULL, "a.c",
		   "void run(void)\n{\n    char buf[100] = \"ls \";\n    char *data = buf;\n"
		   "    strcat(data, \"*.*\");\n    system(data);\n}\n", NULL), "");
	/* read, then overwritten whole with a constant: nothing */
	expect(run(NULL, "a.c",
		   "void run(void)\n{\n    char buf[100];\n    fgets(buf, 100, stdin);\n"
		   "    strcpy(buf, \"date\");\n    system(buf);\n}\n", NULL), "");
}

static void test_format_string(void **state)
{
	(void)state;
	const char *src =
		"#include <stdio.h>\n"                       /* 1 */
		"void show(void)\n"                          /* 2 */
		"{\n"                                        /* 3 */
		"    char line[64] = \"\";\n"                /* 4 */
		"    if (fgets(line, sizeof(line), stdin) == NULL)\n" /* 5 */
		"        return;\n"                          /* 6 */
		"    printf(\"%s\", line); /* safe */\n"     /* 7 */
		"    fprintf(stderr, line);\n"               /* 8 */
		"    printf(\"fixed\");\n"                   /* 9 */
		"}\n";
	char *msgs = NULL;
	expect(run(&msgs, "f.c", src, NULL), "f.c:8:CWE-134");
	assert_non_null(strstr(msgs, "data from fgets() at line 5 reaches the format string of "
				    "fprintf() (argument 2) at line 8"));
	free(msgs);
	/* a non-literal format that holds no input: nothing */
	expect(run(NULL, "f.c",
		   "void show(void)\n{\n    char f[16];\n    strcpy(f, \"%d\\n\");\n    printf(f, 3);\n}\n",
		   NULL), "");
}

/* The input read in one file, passed through a struct, a global and a
 * function pointer to a sink in another. */
static void test_across_files(void **state)
{
	(void)state;
	const char *a =
		"typedef struct { char *first; } holder;\n"   /* 1 */
		"void sink_b(holder h);\n"                     /* 2 */
		"char *shared;\n"                              /* 3 */
		"void start(void)\n"                           /* 4 */
		"{\n"                                          /* 5 */
		"    holder h;\n"                              /* 6 */
		"    void (*fp)(holder) = sink_b;\n"           /* 7 */
		"    h.first = getenv(\"CMD\");\n"             /* 8 */
		"    fp(h);\n"                                 /* 9 */
		"}\n";
	const char *b =
		"typedef struct { char *first; } holder;\n"   /* 1 */
		"extern char *shared;\n"                       /* 2 */
		"static void last(void)\n"                     /* 3 */
		"{\n"                                          /* 4 */
		"    popen(shared, \"r\");\n"                  /* 5 */
		"}\n"                                          /* 6 */
		"void sink_b(holder h)\n"                      /* 7 */
		"{\n"                                          /* 8 */
		"    shared = h.first;\n"                      /* 9 */
		"    last();\n"                                /* 10 */
		"}\n";
	char *msgs = NULL;
	expect(run(&msgs, "a.c", a, "b.c", b, NULL), "b.c:5:CWE-78");
	assert_non_null(strstr(msgs, "data from getenv() at a.c:8 reaches popen() (argument 1)"));
	free(msgs);
}

/* Directives and macros as the compiler sees them: the Windows arm is not
 * taken, the macros expand, a dead branch is not followed. */
static void test_preprocessor_and_branches(void **state)
{
	(void)state;
	const char *src =
		"#ifdef _WIN32\n"                              /* 1 */
		"#define EXEC _execl\n"                        /* 2 */
		"#else\n"                                      /* 3 */
		"#define EXEC execl\n"                         /* 4 */
		"#endif\n"                                     /* 5 */
		"#define ARGS(x) \"/bin/sh\", \"sh\", \"-c\", x, NULL\n" /* 6 */
		"void go(int argc, char **argv)\n"             /* 7 */
		"{\n"                                          /* 8 */
		"    char *cmd = \"true\";\n"                  /* 9 */
		"    if (0) {\n"                               /* 10 */
		"        cmd = getenv(\"X\");\n"               /* 11 */
		"    }\n"                                      /* 12 */
		"    EXEC(\"/bin/sh\", ARGS(cmd));\n"          /* 13 */
		"    if (argc > 1)\n"                          /* 14 */
		"        cmd = getenv(\"Y\");\n"               /* 15 */
		"    EXEC(\"/bin/sh\",\n"                      /* 16 */
		"         ARGS(cmd));\n"                       /* 17 */
		"}\n";
	expect(run(NULL, "p.c", src, NULL), "p.c:16:CWE-78");
}

/* main's arguments are outside input. */
/* A buffer the caller passes (a parameter) read into, then printed. */
static void test_parameter_buffer(void **state)
{
	(void)state;
	expect(run(NULL, "b.c",
		   "void log_message(char *msg, int size)\n{\n    if (!fgets(msg, size, stdin))\n"
		   "        return;\n    printf(msg);\n    printf(\"%s\", msg);\n}\n", NULL),
	       "b.c:5:CWE-134");
}

static void test_argv(void **state)
{
	(void)state;
	expect(run(NULL, "m.c",
		   "int main(int argc, char *argv[])\n{\n    if (argc < 2)\n        return 1;\n"
		   "    return system(argv[1]);\n}\n", NULL), "m.c:5:CWE-78");
}

/* Text that is not C, or broken C, gives no finding and no crash. */
static void test_garbage(void **state)
{
	(void)state;
	expect(run(NULL, "g.c", "}}}{{( ) ] [ #if\n#else\n#endif\n#endif\n\"unterminated\n"
		   "int f( { puts(x) ; \n/* open comment", NULL), "");
	expect(run(NULL, "g.c", "#define A A B\n#define B A\nvoid f(void) { A; B; f(); }\n", NULL), "");
	expect(run(NULL, "g.c", "", NULL), "");
}

/* ---- memory leaks (CWE-401) ---- */

static const char LEAK[] =
	"#include <stdlib.h>\n"                        /* 1 */
	"void use(int n)\n"                            /* 2 */
	"{\n"                                          /* 3 */
	"    char *data = malloc(n);\n"                /* 4 */
	"    if (data == NULL)\n"                      /* 5 */
	"        return;\n"                            /* 6 */
	"    memset(data, 'A', n);\n"                  /* 7 */
	"    data[0] = strlen(data) > 3;\n"            /* 8 */
	"}\n";                                         /* 9 */

/* Found at the function's end, the allocation's line in the message. */
static void test_leak_at_end(void **state)
{
	(void)state;
	char *msgs = NULL;
	expect(run(&msgs, "l.c", LEAK, NULL), "l.c:9:CWE-401");
	assert_non_null(strstr(msgs, "memory allocated by malloc() at line 4 is lost at line 9"));
	free(msgs);
}

/* The twins: freed on every path, returned, kept in a global or a
 * parameter's struct, handed to a function the files do not define. */
static void test_leak_twins(void **state)
{
	(void)state;
	expect(run(NULL, "f.c",
		   "void f(int n)\n{\n    char *d = malloc(n);\n    if (n > 4)\n"
		   "        free(d);\n    else {\n        d[0] = 1;\n        free(d);\n    }\n}\n",
		   NULL), "");
	expect(run(NULL, "r.c", "char *f(int n)\n{\n    char *d = calloc(n, 1);\n"
		   "    strcpy(d, \"x\");\n    return d;\n}\n", NULL), "");
	expect(run(NULL, "g.c", "char *keep;\nvoid f(int n)\n{\n    char *d = malloc(n);\n"
		   "    keep = d;\n}\n", NULL), "");
	expect(run(NULL, "s.c", "struct s { char *buf; };\nvoid f(struct s *p)\n{\n"
		   "    char *d = strdup(\"x\");\n    p->buf = d;\n}\n", NULL), "");
	expect(run(NULL, "u.c", "void f(void)\n{\n    char *d = malloc(8);\n"
		   "    register_buffer(d);\n}\n", NULL), "");
	/* the process ends there: nothing is lost */
	expect(run(NULL, "x.c", "void child(int n)\n{\n    char *d = malloc(n);\n    d[0] = 1;\n"
		   "    _exit(d[0]);\n}\n", NULL), "");
	/* not an allocation */
	expect(run(NULL, "a.c", "void f(void)\n{\n    char buf[8];\n    char *d = buf;\n"
		   "    d[0] = 1;\n}\n", NULL), "");
}

/* Handed to a function of another file: lost at that function's end when
 * it neither frees nor keeps it; not found when it frees it. */
static void test_leak_across_files(void **state)
{
	(void)state;
	const char *sink_a = "void sink(int *data);\nvoid bad(void)\n{\n    int *data;\n"
			     "    data = (int *)malloc(40);\n    data[0] = 5;\n    sink(data);\n}\n";
	char *msgs = NULL;
	expect(run(&msgs, "a.c", sink_a, "b.c",
		   "void sink(int *data)\n{\n    data[1] = 2;\n}\n", NULL), "b.c:4:CWE-401");
	assert_non_null(strstr(msgs, "malloc() at a.c:5 is lost at line 4"));
	free(msgs);
	expect(run(NULL, "a.c", sink_a, "b.c", "void sink(int *data)\n{\n    free(data);\n}\n",
		   NULL), "");
	/* through a local function pointer */
	expect(run(NULL, "a.c",
		   "void bad(void)\n{\n    void (*fp)(int *) = sink;\n    int *data = malloc(8);\n"
		   "    fp(data);\n}\n", "b.c", "void sink(int *data)\n{\n    data[1] = 2;\n}\n", NULL),
	       "b.c:4:CWE-401");
	/* a wrapper that returns malloc's block: the caller's allocation */
	expect(run(NULL, "w.c",
		   "static char *make(int n)\n{\n    char *p = malloc(n);\n    return p;\n}\n"
		   "void f(void)\n{\n    char *d = make(4);\n    d[0] = 0;\n}\n", NULL),
	       "w.c:10:CWE-401");
}

/* p = realloc(p, ...) loses p's block when realloc fails; through a
 * temporary it does not. */
static void test_leak_realloc(void **state)
{
	(void)state;
	char *msgs = NULL;
	expect(run(&msgs, "r.c",
		   "void f(void)\n{\n    char *d = malloc(10);\n    if (!d) return;\n"
		   "    d = realloc(d, 100);\n    free(d);\n}\n", NULL), "r.c:5:CWE-401");
	assert_non_null(strstr(msgs, "malloc() at line 3 is lost at line 5"));
	free(msgs);
	expect(run(NULL, "r.c",
		   "void f(void)\n{\n    char *d = malloc(10);\n    char *t;\n    if (!d) return;\n"
		   "    t = realloc(d, 100);\n    if (t)\n        d = t;\n    free(d);\n}\n", NULL), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_to_system),
		cmocka_unit_test(test_constant_twin),
		cmocka_unit_test(test_format_string),
		cmocka_unit_test(test_across_files),
		cmocka_unit_test(test_preprocessor_and_branches),
		cmocka_unit_test(test_parameter_buffer),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_leak_at_end),
		cmocka_unit_test(test_leak_twins),
		cmocka_unit_test(test_leak_across_files),
		cmocka_unit_test(test_leak_realloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
