/* clock.h: a monotonic clock for compile and launch timings. */
#ifndef TILEC_UTIL_CLOCK_H
#define TILEC_UTIL_CLOCK_H

double tc_now_ms(void); /* milliseconds on CLOCK_MONOTONIC */

#endif
