/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_TIMER_H
#define HEXLINT_STUB_QURT_TIMER_H
#ifdef __cplusplus
extern "C" {
#endif
void qurt_sleep(unsigned long long duration);
unsigned long long qurt_timer_get_ticks(void);
unsigned long long qurt_sysclock_get_hw_ticks(void);
#ifdef __cplusplus
}
#endif
#endif
