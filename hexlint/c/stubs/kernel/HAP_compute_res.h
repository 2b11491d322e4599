/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_HAP_COMPUTE_RES_H
#define HEXLINT_STUB_HAP_COMPUTE_RES_H
#include "AEEStdDef.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef struct { unsigned long long attributes[8]; } compute_res_attr_t;
typedef enum { HAP_COMPUTE_RES_VTCM_PAGE_DEFAULT = 0 } compute_res_vtcm_page_size_t;
int HAP_compute_res_attr_init(compute_res_attr_t *attr);
int HAP_compute_res_attr_set_serialize(compute_res_attr_t *attr, unsigned char b_serialize);
int HAP_compute_res_attr_set_cache_mode(compute_res_attr_t *attr, unsigned char b_enable);
int HAP_compute_res_attr_set_vtcm_param(compute_res_attr_t *attr, unsigned int vtcm_size, unsigned char b_single_page);
int HAP_compute_res_attr_set_vtcm_param_v2(compute_res_attr_t *attr, unsigned int vtcm_size, unsigned int min_page_size,
                                           unsigned int min_vtcm_size);
int HAP_compute_res_attr_set_hmx_param(compute_res_attr_t *attr, unsigned char b_enable);
int HAP_compute_res_attr_set_release_callback(compute_res_attr_t *attr,
                                              int (*release_callback)(unsigned int context_id, void *client_context),
                                              void *client_context);
void *HAP_compute_res_attr_get_vtcm_ptr(compute_res_attr_t *attr);
int HAP_compute_res_attr_get_vtcm_ptr_v2(compute_res_attr_t *attr, void **vtcm_ptr, unsigned int *vtcm_size);
unsigned int HAP_compute_res_acquire(compute_res_attr_t *attr, unsigned int timeout_us);
int HAP_compute_res_acquire_cached(unsigned int context_id, unsigned int timeout_us);
int HAP_compute_res_release(unsigned int context_id);
int HAP_compute_res_release_cached(unsigned int context_id);
int HAP_compute_res_update_priority(unsigned int context_id, unsigned short priority);
int HAP_compute_res_query_VTCM(unsigned int page_size, unsigned int *total_block_size, unsigned int *avail_block_size,
                               unsigned int *max_page_size, unsigned int *num_pages);
int HAP_compute_res_hmx_lock(unsigned int context_id);
int HAP_compute_res_hmx_unlock(unsigned int context_id);
void *HAP_request_VTCM(unsigned int size, unsigned int single_page_flag);
int HAP_release_VTCM(void *pVA);
#ifdef __cplusplus
}
#endif
#endif
