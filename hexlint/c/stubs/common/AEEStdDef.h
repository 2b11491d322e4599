/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK header). */
#ifndef HEXLINT_STUB_AEESTDDEF_H
#define HEXLINT_STUB_AEESTDDEF_H

#include <stdint.h>
#include <stddef.h>

typedef int AEEResult;
typedef uint8_t uint8;
typedef int8_t int8;
typedef uint16_t uint16;
typedef int16_t int16;
typedef uint32_t uint32;
typedef int32_t int32;
/* The SDK spells 64-bit as long long on every target, so host code passing `unsigned long long *` matches. */
typedef unsigned long long uint64;
typedef long long int64;
typedef unsigned char boolean;
typedef uint8_t byte;
typedef char _cstring_t;
typedef uint16_t _wchar_t;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#endif
