/* libFuzzer target: util_pct_decode (core/util.c) on the user, password or
 * token of a NATS bus URL, as nats_url_split (core/bus_nats.c) calls it: the
 * bytes given (not NUL-terminated). It succeeds exactly when every '%'
 * starts an escape of two hex digits that is not %00; the output is the
 * input less two bytes per escape; and the output, every byte written as
 * %XX, decodes back to itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexv(uint8_t c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly size bytes: a copy of its own, so a read past it is caught */
	char *in = malloc(size ? size : 1);
	if (!in)
		return 0;
	memcpy(in, data, size);
	bool valid = true;
	size_t escapes = 0;
	for (size_t i = 0; i < size && valid; i++) {
		if (data[i] != '%')
			continue;
		if (i + 2 >= size) {
			valid = false; /* cut short */
			break;
		}
		int hi = hexv(data[i + 1]), lo = hexv(data[i + 2]);
		valid = hi >= 0 && lo >= 0 && (hi || lo);
		escapes++;
		i += 2;
	}
	char *out = NULL, *err = NULL;
	int r = util_pct_decode(in, size, &out, &err);
	if ((r == 0) != valid || (r == 0 && (!out || err)) || (r < 0 && (out || !err))) {
		fprintf(stderr, "fuzz_pct: returned %d for input that is %svalid\n", r,
			valid ? "" : "not ");
		abort();
	}
	if (r == 0) {
		size_t n = strlen(out);
		/* no NUL decoded (%00 is refused), so strlen is the length, unless
		 * the input held a NUL byte itself */
		if (!memchr(data, 0, size) && n != size - 2 * escapes) {
			fprintf(stderr, "fuzz_pct: %zu bytes out of %zu with %zu escapes\n", n, size,
				escapes);
			abort();
		}
		char *enc = malloc(3 * n + 1), *back = NULL;
		if (enc) {
			for (size_t i = 0; i < n; i++)
				snprintf(enc + 3 * i, 4, "%%%02X", (unsigned char)out[i]);
			if (util_pct_decode(enc, 3 * n, &back, NULL) != 0 || strcmp(back, out)) {
				fprintf(stderr, "fuzz_pct: the output encoded does not decode back\n");
				abort();
			}
			free(back);
			free(enc);
		}
	}
	free(out);
	free(err);
	free(in);
	return 0;
}
