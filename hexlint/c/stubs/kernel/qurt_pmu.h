/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_PMU_H
#define HEXLINT_STUB_QURT_PMU_H
#ifdef __cplusplus
extern "C" {
#endif
#define QURT_PMUCNT0 0
#define QURT_PMUCNT1 1
#define QURT_PMUCNT2 2
#define QURT_PMUCNT3 3
#define QURT_PMUCFG 4
#define QURT_PMUEVTCFG 5
#define QURT_PMUCNT4 6
#define QURT_PMUCNT5 7
#define QURT_PMUCNT6 8
#define QURT_PMUCNT7 9
#define QURT_PMUEVTCFG1 10
void qurt_pmu_set(int reg_id, unsigned int reg_value);
unsigned int qurt_pmu_get(int reg_id);
void qurt_pmu_enable(int enable);
#ifdef __cplusplus
}
#endif
#endif
