/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_BARRIER_H
#define HEXLINT_STUB_QURT_BARRIER_H
#ifdef __cplusplus
extern "C" {
#endif
typedef union { unsigned long long raw; struct { unsigned int count; unsigned int waiting; }; } qurt_barrier_t;
int qurt_barrier_init(qurt_barrier_t *barrier, unsigned int threads_total);
int qurt_barrier_destroy(qurt_barrier_t *barrier);
int qurt_barrier_wait(qurt_barrier_t *barrier);
#define QURT_BARRIER_SERIAL_THREAD 1
#define QURT_BARRIER_OTHER 0
#ifdef __cplusplus
}
#endif
#endif
