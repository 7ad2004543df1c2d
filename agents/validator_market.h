/* The validator's recomputation of a market finding's range, volatility,
 * largest daily move, moving averages or z-score from the price data. */
#ifndef MADF_VALIDATOR_MARKET_H
#define MADF_VALIDATOR_MARKET_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "agents/runtime.h"

/* d is the finding's data: window_start and window_end (YYYY-MM-DD) and
 * one of: high, high_date, low, low_date, vol_pct?; max_move_pct,
 * max_move_date; ma_short, ma_long; zscore. Returns 1 when the figures
 * are the ones the price data gives, 0 when not, -1 when it cannot say;
 * *why (the caller frees) says what the data gives or why not. */
int validator_market_recheck(struct agent *a, const char *pair, const cJSON *d, char **why);

/* The same on closes given (day[i] ascending, close[i]): no data tool. */
int validator_market_judge(const int32_t *day, const double *close, size_t n, const cJSON *d,
			   char **why);

#endif
