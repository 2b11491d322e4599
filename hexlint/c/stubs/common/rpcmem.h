/* hexlint stand-in: declaration-only rpcmem API, written from the names ggml-hexagon uses. */
#ifndef HEXLINT_STUB_RPCMEM_H
#define HEXLINT_STUB_RPCMEM_H

#include "AEEStdDef.h"

#define RPCMEM_DEFAULT_HEAP -1
#define RPCMEM_HEAP_ID_SECURE 9
#define RPCMEM_HEAP_ID_CONTIG 22
#define RPCMEM_HEAP_ID_SYSTEM 25
#define RPCMEM_DEFAULT_FLAGS 1
#define RPCMEM_FLAG_UNCACHED 0
#define RPCMEM_FLAG_CACHED RPCMEM_DEFAULT_FLAGS
#define RPCMEM_HEAP_DEFAULT 0x80000000
#define RPCMEM_HEAP_NOREG 0x40000000
#define RPCMEM_HEAP_UNCACHED 0x20000000
#define RPCMEM_HEAP_NOVA 0x10000000
#define RPCMEM_HEAP_NONCOHERENT 0x08000000
#define RPCMEM_FORCE_NOFLUSH 0x01000000
#define RPCMEM_FORCE_NOINVALIDATE 0x02000000

#ifdef __cplusplus
extern "C" {
#endif

void rpcmem_init(void);
void rpcmem_deinit(void);
void *rpcmem_alloc(int heapid, uint32_t flags, int size);
void *rpcmem_alloc2(int heapid, uint32_t flags, size_t size);
void rpcmem_free(void *po);
int rpcmem_to_fd(void *po);

#ifdef __cplusplus
}
#endif

#endif
