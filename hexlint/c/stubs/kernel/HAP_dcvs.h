/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_DCVS_H
#define HEXLINT_STUB_HAP_DCVS_H
#include "HAP_power.h"
#ifdef __cplusplus
extern "C" {
#endif
int HAP_set_dcvs_v3_core_perf_mode(void *context, HAP_power_request_t *request);
int HAP_set_dcvs_v3_protected_bus_corners(HAP_power_request_t *request, unsigned char enable);
int HAP_set_dcvs_v3_duty_cycle(void *context, uint32 max_active_time, uint32 periodicity);
#ifdef __cplusplus
}
#endif
#endif
