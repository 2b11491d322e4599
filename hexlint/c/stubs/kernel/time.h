/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK or libc header). */
#ifndef HEXLINT_STUB_TIME_H
#define HEXLINT_STUB_TIME_H
#include <stddef.h>
typedef long time_t;
typedef long clock_t;
typedef int clockid_t;
struct timespec { time_t tv_sec; long tv_nsec; };
#define CLOCKS_PER_SEC 1000000
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
clock_t clock(void);
time_t time(time_t *out);
int clock_gettime(clockid_t clock_id, struct timespec *out);
int nanosleep(const struct timespec *request, struct timespec *remaining);
#endif
