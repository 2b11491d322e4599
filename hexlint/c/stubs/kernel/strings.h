/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK or libc header). */
#ifndef HEXLINT_STUB_STRINGS_H
#define HEXLINT_STUB_STRINGS_H
#include <stddef.h>
int strcasecmp(const char *a, const char *b);
int strncasecmp(const char *a, const char *b, size_t n);
#endif
