/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_FARF_H
#define HEXLINT_STUB_HAP_FARF_H
#include "AEEStdDef.h"
/* Kernel sources call snprintf, calloc, free ... having included only HAP_farf.h: the SDK brings libc in with it. */
#include <stdio.h>
#include <stdlib.h>
#ifdef __cplusplus
extern "C" {
#endif
/* Every level logs here, so the arguments of a FARF stay ordinary expressions in the AST (reads count as reads). */
enum hexlint_farf_level {
    HAP_LEVEL_LOW = 0,
    HAP_LEVEL_MEDIUM = 1,
    HAP_LEVEL_HIGH = 2,
    HAP_LEVEL_ERROR = 3,
    HAP_LEVEL_FATAL = 4,
    HAP_LEVEL_ALWAYS = 5,
    HAP_LEVEL_RUNTIME_LOW = 16,
    HAP_LEVEL_RUNTIME_MEDIUM = 17,
    HAP_LEVEL_RUNTIME_HIGH = 18,
    HAP_LEVEL_RUNTIME_ERROR = 19,
    HAP_LEVEL_RUNTIME_FATAL = 20,
};
void HAP_debug_v2(int level, const char *file, int line, const char *format, ...);
void HAP_debug_runtime(int level, const char *file, int line, const char *format, ...);
#define FARF(level, ...) HAP_debug_v2(HAP_LEVEL_##level, __FILE__, __LINE__, __VA_ARGS__)
#define FARF_LOW 0
#define FARF_MEDIUM 0
#define FARF_HIGH 0
#define FARF_ERROR 1
#define FARF_FATAL 1
#define FARF_ALWAYS 1
#ifdef __cplusplus
}
#endif
#endif
