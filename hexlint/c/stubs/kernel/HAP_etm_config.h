/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_ETM_CONFIG_H
#define HEXLINT_STUB_HAP_ETM_CONFIG_H
#ifdef __cplusplus
extern "C" {
#endif
int HAP_user_etm_enable(void);
int HAP_user_etm_disable(void);
#ifdef __cplusplus
}
#endif
#endif
