/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_POWER_H
#define HEXLINT_STUB_HAP_POWER_H
#include "AEEStdDef.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef enum {
    HAP_DCVS_VCORNER_DISABLE,
    HAP_DCVS_VCORNER_SVS2,
    HAP_DCVS_VCORNER_SVS,
    HAP_DCVS_VCORNER_SVS_PLUS,
    HAP_DCVS_VCORNER_NOM,
    HAP_DCVS_VCORNER_NOM_PLUS,
    HAP_DCVS_VCORNER_TURBO,
    HAP_DCVS_VCORNER_TURBO_PLUS,
    HAP_DCVS_VCORNER_MAX = 255,
} HAP_dcvs_voltage_corner_t;
typedef enum {
    HAP_DCVS_EXP_VCORNER_DISABLE = 0,
    HAP_DCVS_EXP_VCORNER_MIN = 0x100,
    HAP_DCVS_EXP_VCORNER_LOW_SVS = 0x200,
    HAP_DCVS_EXP_VCORNER_SVS = 0x300,
    HAP_DCVS_EXP_VCORNER_NOM = 0x400,
    HAP_DCVS_EXP_VCORNER_TUR = 0x600,
    HAP_DCVS_EXP_VCORNER_MAX = 0xFFFF,
} HAP_dcvs_exp_voltage_corner_t;
typedef enum { HAP_CLK_PERF_HIGH, HAP_CLK_PERF_LOW } HAP_clk_perf_mode_t;
typedef enum {
    HAP_DCVS_V2_BALANCED_MODE,
    HAP_DCVS_V2_POWER_SAVER_MODE,
    HAP_DCVS_V2_POWER_SAVER_AGGRESSIVE_MODE,
    HAP_DCVS_V2_PERFORMANCE_MODE,
    HAP_DCVS_V2_DUTY_CYCLE_MODE,
} HAP_dcvs_v2_dcvs_option;
typedef enum {
    HAP_POWER_UNKNOWN_CLIENT_CLASS = 0,
    HAP_POWER_VOICE_CLIENT_CLASS = 1,
    HAP_POWER_COMPUTE_CLIENT_CLASS = 2,
    HAP_POWER_STREAMING_1HVX_CLIENT_CLASS = 3,
    HAP_POWER_STREAMING_2HVX_CLIENT_CLASS = 4,
} HAP_power_app_type_payload;
typedef enum {
    HAP_power_set_mips_bw = 1,
    HAP_power_set_HVX,
    HAP_power_set_apptype,
    HAP_power_set_linelock,
    HAP_power_set_DCVS,
    HAP_power_set_linelock_nolock,
    HAP_power_set_DCVS_v2,
    HAP_power_set_vapss,
    HAP_power_set_vapss_v2,
    HAP_power_set_dcvs_v3,
    HAP_power_set_DCVS_v3 = HAP_power_set_dcvs_v3,
    HAP_power_set_sleep_mode,
    HAP_power_set_HMX,
    HAP_power_set_HMX_v2,
    HAP_power_set_CENG,
} HAP_Power_request_type;
typedef struct {
    HAP_dcvs_voltage_corner_t target_corner;
    HAP_dcvs_voltage_corner_t min_corner;
    HAP_dcvs_voltage_corner_t max_corner;
    uint32 param1;
    uint32 param2;
    uint32 param3;
} HAP_dcvs_v3_params_t;
typedef struct {
    uint32 set_dcvs_enable;
    uint32 dcvs_enable;
    uint32 dcvs_option;
    uint32 set_latency;
    uint32 latency;
    uint32 set_core_params;
    HAP_dcvs_v3_params_t core_params;
    uint32 set_bus_params;
    HAP_dcvs_v3_params_t bus_params;
    uint32 set_dcvs_v3_params;
    uint32 set_sleep_disable;
    uint8 sleep_disable;
} HAP_power_dcvs_v3_payload;
typedef struct { boolean power_up; } HAP_power_hvx_payload;
typedef struct { boolean power_up; } HAP_power_hmx_payload;
typedef struct {
    boolean set_power;
    boolean power_up;
    boolean set_clock;
    HAP_dcvs_exp_voltage_corner_t target_corner;
    HAP_dcvs_exp_voltage_corner_t min_corner;
    HAP_dcvs_exp_voltage_corner_t max_corner;
    uint32 freq_mhz;
    HAP_clk_perf_mode_t perf_mode;
    uint16 pmu_reg;
} HAP_power_hmx_payload_v2;
typedef struct {
    boolean set_mips;
    unsigned int mipsPerThread;
    unsigned int mipsTotal;
    boolean set_bus_bw;
    uint64 bwBytePerSec;
    unsigned short busbwUsagePercentage;
    boolean set_latency;
    int latency;
} HAP_power_mips_bw_payload;
typedef struct {
    HAP_Power_request_type type;
    union {
        HAP_power_mips_bw_payload mips_bw;
        HAP_power_hvx_payload hvx;
        HAP_power_app_type_payload apptype;
        HAP_power_dcvs_v3_payload dcvs_v3;
        HAP_power_hmx_payload hmx;
        HAP_power_hmx_payload_v2 hmx_v2;
        uint32 sleep_mode;
    };
} HAP_power_request_t;
int HAP_power_set(void *context, HAP_power_request_t *request);
int HAP_power_destroy_client(void *context);
#ifdef __cplusplus
}
#endif
#endif
