/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_SIGNAL_H
#define HEXLINT_STUB_QURT_SIGNAL_H
#ifdef __cplusplus
extern "C" {
#endif
typedef union { unsigned long long raw; struct { unsigned int signals; unsigned int waiting; }; } qurt_signal_t;
#define QURT_SIGNAL_ATTR_WAIT_ANY 0x00000000
#define QURT_SIGNAL_ATTR_WAIT_ALL 0x00000001
void qurt_signal_init(qurt_signal_t *signal);
void qurt_signal_destroy(qurt_signal_t *signal);
unsigned int qurt_signal_wait(qurt_signal_t *signal, unsigned int mask, unsigned int attribute);
unsigned int qurt_signal_wait_any(qurt_signal_t *signal, unsigned int mask);
unsigned int qurt_signal_wait_all(qurt_signal_t *signal, unsigned int mask);
void qurt_signal_set(qurt_signal_t *signal, unsigned int mask);
unsigned int qurt_signal_get(qurt_signal_t *signal);
void qurt_signal_clear(qurt_signal_t *signal, unsigned int mask);
#ifdef __cplusplus
}
#endif
#endif
