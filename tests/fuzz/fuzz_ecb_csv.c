/* libFuzzer target: the ECB csvdata reader, live_ecb_parse_csv on an
 * exact-size buffer as the ECB source calls it; byte 0 picks the currency
 * asked for. A series it accepts has strictly increasing days and finite
 * positive rates; a refusal has an error naming the answer. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/live_data.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_ecb_csv: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ccys[] = { "USD", "JPY", "GBP", "CHF" };
	if (size < 1)
		return 0;
	const char *ccy = ccys[data[0] % 4];
	size--;
	data++;
	/* Exactly size bytes, so ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct fx_series s;
	char *err = NULL;
	if (live_ecb_parse_csv(buf, size, "ecb", ccy, &s, &err) == 0) {
		if (err)
			fuzz_fail("accepted with an error", err);
		for (size_t i = 0; i < s.n; i++) {
			if (i && s.days[i] <= s.days[i - 1])
				fuzz_fail("days not strictly increasing", NULL);
			if (!isfinite(s.close[i]) || s.close[i] <= 0)
				fuzz_fail("a rate that is not finite and positive", NULL);
		}
		market_series_release(&s);
	} else if (!err || strncmp(err, "ecb", 3)) {
		fuzz_fail("refused without an error naming the answer", err);
	}
	free(err);
	free(buf);
	return 0;
}
