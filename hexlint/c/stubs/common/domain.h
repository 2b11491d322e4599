/* hexlint stand-in: the SDK example's domain table, declaration-only (URIs follow remote.h). */
#ifndef HEXLINT_STUB_DOMAIN_H
#define HEXLINT_STUB_DOMAIN_H

#include "remote.h"

#ifdef __cplusplus
extern "C" {
#endif

static domain supported_domains[] = {
    {ADSP_DOMAIN_ID, ADSP_DOMAIN},
    {MDSP_DOMAIN_ID, MDSP_DOMAIN},
    {SDSP_DOMAIN_ID, SDSP_DOMAIN},
    {CDSP_DOMAIN_ID, CDSP_DOMAIN},
    {CDSP1_DOMAIN_ID, CDSP1_DOMAIN},
};

domain *get_domain(int domain_id);
int get_domains_info(char *domain_type, int *num_domains, void **domains_info);
int is_valid_domain_id(int domain_id, int compute_only);

#ifdef __cplusplus
}
#endif

#endif
