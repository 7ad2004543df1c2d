/* The analyzers of tests/fuzz/fuzz_review_tools.c: installed on its PATH
 * as cppcheck, flawfinder, shellcheck, ctags, cloc, pmccabe, gcc and
 * clang, it writes $FUZZ_TOOL_DIR/out (the fuzzer's input) to its
 * standard output and its standard error, and exits with the status in
 * $FUZZ_TOOL_DIR/status. Its arguments are ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void put(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

int main(void)
{
	const char *dir = getenv("FUZZ_TOOL_DIR");
	char path[4096], buf[1 << 16];
	if (!dir)
		return 127;
	snprintf(path, sizeof(path), "%s/out", dir);
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	put(1, buf, n);
	put(2, buf, n);
	snprintf(path, sizeof(path), "%s/status", dir);
	f = fopen(path, "r");
	int st = 0;
	if (!f || fscanf(f, "%d", &st) != 1)
		st = 0;
	if (f)
		fclose(f);
	return st;
}
