/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_SYSENV_H
#define HEXLINT_STUB_QURT_SYSENV_H
#ifdef __cplusplus
extern "C" {
#endif
typedef struct { unsigned int max_hthreads; } qurt_sysenv_max_hthreads_t;
typedef struct { unsigned int hw_ver; } qurt_arch_version_t;
int qurt_sysenv_get_max_hw_threads(qurt_sysenv_max_hthreads_t *max_hthreads);
int qurt_sysenv_get_arch_version(qurt_arch_version_t *version);
#ifdef __cplusplus
}
#endif
#endif
