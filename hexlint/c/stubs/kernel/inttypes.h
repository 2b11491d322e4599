/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses (not the Hexagon SDK or libc header). */
/* Reached by include_next from clang's builtin inttypes.h: the printf/scanf format macros of a 32-bit target. */
#ifndef HEXLINT_STUB_INTTYPES_H
#define HEXLINT_STUB_INTTYPES_H
#include <stdint.h>
#define PRId8 "d"
#define PRId16 "d"
#define PRId32 "d"
#define PRId64 "lld"
#define PRIi32 "i"
#define PRIi64 "lli"
#define PRIu8 "u"
#define PRIu16 "u"
#define PRIu32 "u"
#define PRIu64 "llu"
#define PRIx8 "x"
#define PRIx16 "x"
#define PRIx32 "x"
#define PRIx64 "llx"
#define PRIX32 "X"
#define PRIX64 "llX"
#define PRIdPTR "d"
#define PRIuPTR "u"
#define PRIxPTR "x"
#define SCNd32 "d"
#define SCNu32 "u"
#define SCNd64 "lld"
#define SCNu64 "llu"
typedef struct { intmax_t quot; intmax_t rem; } imaxdiv_t;
#endif
