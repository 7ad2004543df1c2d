/* What the NATS transport parses, without a server: the bus URL's split
 * into servers, user and password (nats_url_split), a stored message's
 * Nats-Time-Stamp (nats_parse_time) and an event line's seq read back
 * from the conversations' stream (nats_line_seq). Found by
 * tests/fuzz/fuzz_nats.c: a time past 2262 and a seq of more than 18
 * digits overflowed; a server with control bytes put them in the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/bus_nats.h"
#include "core/util.h"

#include "core/banned.h"

static void test_parse_time(void **state)
{
	(void)state;
	/* 2026-11-24T10:00:00Z is 1795514400 s after the epoch */
	assert_int_equal(nats_parse_time("2026-11-24T10:00:00Z"), 1795514400LL * 1000000000);
	assert_int_equal(nats_parse_time("2026-11-24T10:00:00.123456789Z"),
			 1795514400LL * 1000000000 + 123456789);
	assert_int_equal(nats_parse_time("2026-11-24T10:00:00.5Z"),
			 1795514400LL * 1000000000 + 500000000);
	assert_int_equal(nats_parse_time("garbage"), 0);
	assert_int_equal(nats_parse_time(NULL), 0);
	/* the last second whose ns a signed 64-bit count holds: 2262-04-11T23:47:15 */
	assert_int_equal(nats_parse_time("2262-04-11T23:47:15.999999999Z"),
			 9223372035LL * 1000000000 + 999999999);
	/* beyond it: no time (was a signed overflow) */
	assert_int_equal(nats_parse_time("9999-12-31T23:59:59.999Z"), 0);
	assert_int_equal(nats_parse_time("2262-04-11T23:47:17Z"), 0);
}

static void test_line_seq(void **state)
{
	(void)state;
	const char *ev = "{\"type\":\"agent_message\",\"data\":{\"content\":\"say \\\"seq\\\":3\","
			 "\"seq\":12,\"sessionId\":\"0123456789abcdef01234567\"}}";
	assert_int_equal(nats_line_seq(ev, strlen(ev)), 12);
	assert_int_equal(nats_line_seq(ev, 10), 0);
	const char *big = "{\"data\":{\"seq\":999999999999999999}}";
	assert_int_equal(nats_line_seq(big, strlen(big)), 999999999999999999L);
	/* more than a long holds: none (was a signed overflow) */
	const char *over = "{\"type\"seq\":99999999999999999999:{\"a";
	assert_int_equal(nats_line_seq(over, strlen(over)), 0);
}

static void test_url_split(void **state)
{
	(void)state;
	struct natsbus nb;
	memset(&nb, 0, sizeof(nb));
	char **sv = NULL, *err = NULL;
	int n = 0;
	assert_int_equal(nats_url_split(&nb, "nats://madf:s3cret@n1:4222,n2:4222", &sv, &n, &err), 0);
	assert_int_equal(n, 2);
	/* the servers without the credentials: bus_nats_open gives the
	 * decoded user and password to the connection's options */
	assert_string_equal(sv[0], "nats://n1:4222");
	assert_string_equal(sv[1], "nats://n2:4222");
	assert_string_equal(nb.where, "nats://n1:4222,nats://n2:4222");
	assert_string_equal(nb.user, "madf");
	assert_string_equal(nb.secret, "s3cret");
	for (int i = 0; i < n; i++)
		free(sv[i]);
	free(sv);
	free(nb.where);
	free(nb.user);
	free(nb.secret);
	memset(&nb, 0, sizeof(nb));
	sv = NULL;
	n = 0;
	/* a server with control bytes: refused, without them (they reached
	 * the terminal; found by tests/fuzz/fuzz_nats.c) */
	assert_int_equal(nats_url_split(&nb, "nats://127.0.0\263\a:4222/x\033[2J", &sv, &n, &err),
			 -1);
	assert_non_null(strstr(err, "invalid NATS server \"127.0.0"));
	for (const char *p = err; *p; p++)
		assert_false((unsigned char)*p < 0x20 || *p == 0x7f);
	free(err);
	err = NULL;
	assert_null(sv);
	free(nb.where);
	free(nb.user);
	free(nb.secret);
	memset(&nb, 0, sizeof(nb));
	assert_int_equal(nats_url_split(&nb, "tls://u:pw@h:1,v@h2:2", &sv, &n, &err), -1);
	assert_non_null(strstr(err, "user@..."));
	assert_null(strstr(err, "pw"));
	for (int i = 0; i < n; i++)
		free(sv[i]);
	free(sv);
	free(err);
	free(nb.where);
	free(nb.user);
	free(nb.secret);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_line_seq),
		cmocka_unit_test(test_url_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
