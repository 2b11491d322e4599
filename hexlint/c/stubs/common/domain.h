/* hexlint stand-in: the SDK example's domain table, declaration-only (URIs follow remote.h). */
#ifndef HEXLINT_STUB_DOMAIN_H
#define HEXLINT_STUB_DOMAIN_H

#include "remote.h"

#ifdef __cplusplus
extern "C" {
#endif

#define is_ADSP(domain_id) ((domain_id) == ADSP_DOMAIN_ID)
#define is_MDSP(domain_id) ((domain_id) == MDSP_DOMAIN_ID)
#define is_SDSP(domain_id) ((domain_id) == SDSP_DOMAIN_ID)
#define is_CDSP(domain_id) ((domain_id) == CDSP_DOMAIN_ID || (domain_id) == CDSP1_DOMAIN_ID)

static domain supported_domains[] = {
    {ADSP_DOMAIN_ID, ADSP_DOMAIN},
    {MDSP_DOMAIN_ID, MDSP_DOMAIN},
    {SDSP_DOMAIN_ID, SDSP_DOMAIN},
    {CDSP_DOMAIN_ID, CDSP_DOMAIN},
    {CDSP1_DOMAIN_ID, CDSP1_DOMAIN},
};

/* get_domain(), get_domains_info() ... are defined by the sources that use them (SDK example code): not declared. */

#ifdef __cplusplus
}
#endif

#endif
