/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_MEM_H
#define HEXLINT_STUB_HAP_MEM_H
#include "AEEStdDef.h"
#ifdef __cplusplus
extern "C" {
#endif
#define HAP_PROT_NONE 0x00
#define HAP_PROT_READ 0x01
#define HAP_PROT_WRITE 0x02
#define HAP_PROT_EXEC 0x04
void *HAP_mmap(void *addr, int len, int prot, int flags, int fd, long offset);
int HAP_munmap(void *addr, int len);
void *HAP_mmap2(void *addr, size_t len, int prot, int flags, int fd, long offset);
int HAP_munmap2(void *addr, size_t len);
int HAP_mmap_get(int fd, void **vaddr, uint64 *paddr);
int HAP_mmap_put(int fd);
#ifdef __cplusplus
}
#endif
#endif
