/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_MEMORY_H
#define HEXLINT_STUB_QURT_MEMORY_H
#ifdef __cplusplus
extern "C" {
#endif
typedef unsigned int qurt_addr_t;
typedef unsigned long long qurt_paddr_64_t;
typedef unsigned int qurt_size_t;
typedef unsigned int qurt_mem_region_t;
typedef enum {
    QURT_MEM_CACHE_FLUSH,
    QURT_MEM_CACHE_INVALIDATE,
    QURT_MEM_CACHE_FLUSH_INVALIDATE,
    QURT_MEM_CACHE_FLUSH_ALL,
    QURT_MEM_CACHE_FLUSH_INVALIDATE_ALL,
    QURT_MEM_CACHE_TABLE_FLUSH_INVALIDATE,
    QURT_MEM_CACHE_FLUSH_INVALIDATE_L2,
} qurt_mem_cache_op_t;
typedef enum { QURT_MEM_ICACHE, QURT_MEM_DCACHE } qurt_mem_cache_type_t;
int qurt_mem_cache_clean(qurt_addr_t addr, qurt_size_t size, qurt_mem_cache_op_t opcode, qurt_mem_cache_type_t type);
int qurt_mem_cache_clean2(qurt_addr_t addr, qurt_size_t size, qurt_mem_cache_op_t opcode, qurt_mem_cache_type_t type);
qurt_paddr_64_t qurt_lookup_physaddr_64(qurt_addr_t vaddr);
unsigned int qurt_lookup_physaddr(unsigned int vaddr);
void qurt_mem_barrier(void);
#ifdef __cplusplus
}
#endif
#endif
