/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_FUTEX_H
#define HEXLINT_STUB_QURT_FUTEX_H
#ifdef __cplusplus
extern "C" {
#endif
int qurt_futex_wait(void *lock, int val);
int qurt_futex_wait_cancellable(void *lock, int val);
int qurt_futex_wake(void *lock, int n_to_wake);
#ifdef __cplusplus
}
#endif
#endif
