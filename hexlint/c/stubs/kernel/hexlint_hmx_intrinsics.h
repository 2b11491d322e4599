/* hexlint stand-in: the HMX intrinsics the Hexagon SDK compiler declares by itself under -mhmx (upstream clang has
   none). Force-included into kernel parses, so trees that call them (older ggml-hexagon HMX kernels) parse; the
   signatures follow how the sources call them. Define HEXLINT_NO_HMX_INTRINSICS to leave them out. */
#ifndef HEXLINT_HMX_INTRINSICS_H
#define HEXLINT_HMX_INTRINSICS_H
#ifndef HEXLINT_NO_HMX_INTRINSICS
void Q6_activation_hf_mxmem_RR(unsigned int address, unsigned int range);
void Q6_activation_hf_mxmem_RR_deep(unsigned int address, unsigned int range);
void Q6_weight_hf_mxmem_RR(unsigned int address, unsigned int range);
void Q6_bias_mxmem2_A(void *scales);
void Q6_mxmem_AR_after_hf(void *output, unsigned int scale);
void Q6_mxclracc_hf(void);
#endif
#endif
