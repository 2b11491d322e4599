/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_PERF_H
#define HEXLINT_STUB_HAP_PERF_H
#include "AEEStdDef.h"
#ifdef __cplusplus
extern "C" {
#endif
uint64 HAP_perf_get_time_us(void);
uint64 HAP_perf_get_pcycles(void);
uint64 HAP_perf_get_qtimer_count(void);
uint64 HAP_perf_qtimer_count_to_us(uint64 count);
void HAP_timer_sleep(unsigned long long sleep_duration);
#ifdef __cplusplus
}
#endif
#endif
