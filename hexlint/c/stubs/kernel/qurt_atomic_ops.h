/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_ATOMIC_OPS_H
#define HEXLINT_STUB_QURT_ATOMIC_OPS_H
#ifdef __cplusplus
extern "C" {
#endif
unsigned int qurt_atomic_add_return(unsigned int *target, unsigned int value);
unsigned int qurt_atomic_sub_return(unsigned int *target, unsigned int value);
void qurt_atomic_add(unsigned int *target, unsigned int value);
void qurt_atomic_sub(unsigned int *target, unsigned int value);
unsigned int qurt_atomic_compare_and_set(unsigned int *target, unsigned int old_value, unsigned int new_value);
unsigned int qurt_atomic_set(unsigned int *target, unsigned int value);
#ifdef __cplusplus
}
#endif
#endif
