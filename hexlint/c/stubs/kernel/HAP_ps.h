/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_PS_H
#define HEXLINT_STUB_HAP_PS_H
#include "AEEStdDef.h"
#ifdef __cplusplus
extern "C" {
#endif
int HAP_setFARFRuntimeLoggingParams(unsigned int mask, const char *files[], unsigned short number_of_files);
int HAP_get_userpd_params(void *params);
#ifdef __cplusplus
}
#endif
#endif
