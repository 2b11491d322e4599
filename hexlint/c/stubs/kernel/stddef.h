/* hexlint stand-in: clang's stddef.h, but with NULL as the Hexagon C library spells it (a plain 0), because kernel
   code assigns NULL to integer handles and addresses (e.g. `uint64_t base = NULL`). No include guard, like clang's. */
#include_next <stddef.h>
#undef NULL
#define NULL 0
