/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_MUTEX_H
#define HEXLINT_STUB_QURT_MUTEX_H
#ifdef __cplusplus
extern "C" {
#endif
typedef union { unsigned long long raw; struct { unsigned int holder; unsigned int count; }; } qurt_mutex_t;
void qurt_mutex_init(qurt_mutex_t *lock);
void qurt_mutex_destroy(qurt_mutex_t *lock);
void qurt_mutex_lock(qurt_mutex_t *lock);
void qurt_mutex_unlock(qurt_mutex_t *lock);
int qurt_mutex_try_lock(qurt_mutex_t *lock);
#ifdef __cplusplus
}
#endif
#endif
