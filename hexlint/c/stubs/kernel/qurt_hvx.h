/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_HVX_H
#define HEXLINT_STUB_QURT_HVX_H
#ifdef __cplusplus
extern "C" {
#endif
typedef enum { QURT_HVX_MODE_64B = 0, QURT_HVX_MODE_128B = 1 } qurt_hvx_mode_t;
#define QURT_HVX_HW_UNITS_2X128B_4X64B 0x00000204
#define QURT_HVX_HW_UNITS_4X128B_0X64B 0x00000400
int qurt_hvx_lock(qurt_hvx_mode_t lock_mode);
int qurt_hvx_unlock(void);
int qurt_hvx_try_lock(qurt_hvx_mode_t lock_mode);
int qurt_hvx_get_mode(void);
int qurt_hvx_get_units(void);
int qurt_hvx_reserve(int num_units);
int qurt_hvx_cancel_reserve(void);
#ifdef __cplusplus
}
#endif
#endif
