/* What the fuzz targets of files (tokens, limits, agents, conversation
 * logs) share: a private directory in /dev/shm (or /tmp) removed when the
 * fuzzer exits, a file written there with the input's exact bytes, and
 * the checks every error message passes. Header-only: each target is one
 * program. */
#ifndef MADF_FUZZ_UTIL_H
#define MADF_FUZZ_UTIL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

static const char *fuzz_name = "fuzz";

/* The standard error as it was at start: a noisy target runs with
 * -close_fd_mask=2 (tests/fuzz/run.sh), and libFuzzer and the sanitizers
 * report on a copy they make, as fuzz_fail does on this one. */
static int fuzz_err_fd = 2;

__attribute__((constructor)) static void fuzz_err_keep(void)
{
	int fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (fd >= 0)
		fuzz_err_fd = fd;
}

__attribute__((noreturn, unused)) static void fuzz_fail(const char *what, const char *detail)
{
	dprintf(fuzz_err_fd, "fuzz_%s: %s%s%s\n", fuzz_name, what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

static char fuzz_dir[96];

static void fuzz_dir_remove(void)
{
	if (fuzz_dir[0])
		util_rm_tree(fuzz_dir);
}

/* The target's directory (made at the first call, removed at exit). */
__attribute__((unused)) static const char *fuzz_tmpdir(void)
{
	if (fuzz_dir[0])
		return fuzz_dir;
	struct stat st;
	const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
			   access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/madf-fuzz-%s.XXXXXX", base, fuzz_name);
	if (!mkdtemp(fuzz_dir))
		fuzz_fail("mkdtemp", fuzz_dir);
	atexit(fuzz_dir_remove);
	return fuzz_dir;
}

/* Writes exactly n bytes of data to path (mode), replacing it. */
__attribute__((unused)) static void fuzz_write(const char *path, const void *data, size_t n,
					       mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		fuzz_fail("cannot write", path);
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			fuzz_fail("cannot write", path);
		p += w;
		n -= (size_t)w;
	}
	if (fchmod(fd, mode) < 0)
		fuzz_fail("chmod", path);
	close(fd);
}

/* Two files from one input: the bytes before its first NUL to first (none
 * written when empty), the rest after the NUL to second (written only when
 * there is a NUL). Returns the length of the first part. */
__attribute__((unused)) static size_t fuzz_write_split(const uint8_t *data, size_t size,
						       const char *first, const char *second)
{
	unlink(first);
	unlink(second);
	const uint8_t *nul = memchr(data, '\0', size);
	size_t n = nul ? (size_t)(nul - data) : size;
	if (nul)
		fuzz_write(second, nul + 1, size - n - 1, 0600);
	if (n)
		fuzz_write(first, data, n, 0600);
	return n;
}

/* An error shown to an operator or a client: one line, no control
 * characters (the input's are stripped). */
__attribute__((unused)) static void fuzz_check_text(const char *what, const char *s)
{
	if (!s || !*s)
		fuzz_fail(what, "empty");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fuzz_fail(what, "has a control character");
}

/* The input split at the first occurrence of sep: [data, *n1) and the rest
 * after sep (*rest, *n2; none when sep is absent). */
__attribute__((unused)) static void fuzz_split(const uint8_t *data, size_t size, const char *sep,
					       size_t *n1, const uint8_t **rest, size_t *n2)
{
	size_t k = strlen(sep);
	*n1 = size;
	*rest = data + size;
	*n2 = 0;
	for (size_t i = 0; i + k <= size; i++)
		if (!memcmp(data + i, sep, k)) {
			*n1 = i;
			*rest = data + i + k;
			*n2 = size - i - k;
			return;
		}
}

#endif
