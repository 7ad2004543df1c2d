/* The validator's recomputation of the market findings (range and
 * volatility, largest daily move, moving averages, z-score) on the FRED
 * closes of USD/JPY: the researcher's figures (analytics_fx_stats) are
 * confirmed, a changed figure or day is disputed naming what the data
 * gives, and a window without closes cannot be judged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents/analytics.h"
#include "agents/market.h"
#include "agents/validator_market.h"

#include "core/banned.h"

#define FRED "../shared/data/fx/fred-daily-1971-2017.csv"
#define D(y, m, d) market_day_from_ymd((y), (m), (d))

static struct fx_series jpy;
static struct fx_stats st;

static int setup(void **state)
{
	(void)state;
	const char *pairs[] = { "USD/JPY" };
	char *err = NULL;
	if (market_load_csv(FRED, pairs, 1, &jpy, &err) < 0) {
		free(err);
		return -1;
	}
	return analytics_fx_stats(&jpy, D(1987, 3, 20), D(1987, 3, 27), &st, &err) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	market_series_release(&jpy);
	return 0;
}

static cJSON *window(void)
{
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "window_start", "1987-03-20");
	cJSON_AddStringToObject(d, "window_end", "1987-03-27");
	return d;
}

static int judge(const cJSON *d, char **why)
{
	return validator_market_judge(jpy.days, jpy.close, jpy.n, d, why);
}

static void day_str(int32_t day, char *buf)
{
	market_day_format(day, buf, 16);
}

static void test_range_and_volatility(void **state)
{
	(void)state;
	char hd[16], ld[16], *why = NULL;
	day_str(st.high_day, hd);
	day_str(st.low_day, ld);
	cJSON *d = window();
	cJSON_AddNumberToObject(d, "high", st.high);
	cJSON_AddStringToObject(d, "high_date", hd);
	cJSON_AddNumberToObject(d, "low", st.low);
	cJSON_AddStringToObject(d, "low_date", ld);
	cJSON_AddNumberToObject(d, "vol_pct", st.vol_pct);
	assert_int_equal(judge(d, &why), 1);
	assert_string_equal(why, "the price data agrees: high 151.7 (1987-03-20), low 147.72 "
			    "(1987-03-27); realised volatility 7.54%");
	free(why);
	/* The high's day wrong: disputed, the data's day named. */
	cJSON_ReplaceItemInObject(d, "high_date", cJSON_CreateString("1987-03-23"));
	assert_int_equal(judge(d, &why), 0);
	assert_non_null(strstr(why, "the price data says: high 151.7 (1987-03-20)"));
	free(why);
	cJSON_ReplaceItemInObject(d, "high_date", cJSON_CreateString(hd));
	cJSON_ReplaceItemInObject(d, "vol_pct", cJSON_CreateNumber(st.vol_pct * 1.1));
	assert_int_equal(judge(d, &why), 0);
	free(why);
	cJSON_Delete(d);
}

static void test_largest_move(void **state)
{
	(void)state;
	char md[16], *why = NULL;
	day_str(st.max_move_day, md);
	cJSON *d = window();
	cJSON_AddNumberToObject(d, "max_move_pct", st.max_move_pct);
	cJSON_AddStringToObject(d, "max_move_date", md);
	assert_int_equal(judge(d, &why), 1);
	assert_string_equal(why, "the price data agrees: the largest daily move is -0.9920% on "
			    "1987-03-27 (149.2 on 1987-03-26 to 147.72)");
	free(why);
	cJSON_ReplaceItemInObject(d, "max_move_pct", cJSON_CreateNumber(-0.5));
	assert_int_equal(judge(d, &why), 0);
	free(why);
	cJSON_Delete(d);
}

static void test_moving_averages_and_z(void **state)
{
	(void)state;
	char *why = NULL;
	cJSON *d = window();
	cJSON_AddNumberToObject(d, "ma_short", st.ma_short);
	cJSON_AddNumberToObject(d, "ma_long", st.ma_long);
	assert_int_equal(judge(d, &why), 1);
	assert_non_null(strstr(why, "the last 20 (from 1987-03-02) 151.972"));
	free(why);
	cJSON_ReplaceItemInObject(d, "ma_long", cJSON_CreateNumber(150.0));
	assert_int_equal(judge(d, &why), 0);
	free(why);
	cJSON_Delete(d);
	assert_true(st.z_ok);
	d = window();
	cJSON_AddNumberToObject(d, "zscore", st.zscore);
	assert_int_equal(judge(d, &why), 1);
	assert_non_null(strstr(why, "against 13 earlier moves"));
	assert_non_null(strstr(why, "z-score of -2.2703"));
	free(why);
	cJSON_ReplaceItemInObject(d, "zscore", cJSON_CreateNumber(-1.0));
	assert_int_equal(judge(d, &why), 0);
	free(why);
	cJSON_Delete(d);
}

static void test_cannot_judge(void **state)
{
	(void)state;
	char *why = NULL;
	/* No closes in the window (a weekend). */
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "window_start", "1987-03-21");
	cJSON_AddStringToObject(d, "window_end", "1987-03-22");
	cJSON_AddNumberToObject(d, "high", 150.0);
	assert_int_equal(judge(d, &why), -1);
	assert_string_equal(why, "the price data has too few closes to compute the figure again");
	free(why);
	cJSON_Delete(d);
	/* No window. */
	d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "high", 150.0);
	assert_int_equal(judge(d, &why), -1);
	assert_string_equal(why, "no figures to check against the price data");
	free(why);
	cJSON_Delete(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_and_volatility),
		cmocka_unit_test(test_largest_move),
		cmocka_unit_test(test_moving_averages_and_z),
		cmocka_unit_test(test_cannot_judge),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
