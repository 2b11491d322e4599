/* hexlint stand-in for the qaic output of htp/htp_iface.idl: the same declarations, without the RPC stubs. */
#ifndef HEXLINT_STUB_HTP_IFACE_H
#define HEXLINT_STUB_HTP_IFACE_H

#include "AEEStdDef.h"
#include "remote.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct htp_iface_pmu_conf htp_iface_pmu_conf;
struct htp_iface_pmu_conf {
    uint32 events[8];
};

#define htp_iface_URI "file:///libhtp_iface_skel.so?htp_iface_skel_handle_invoke&_modver=1.0"

AEEResult htp_iface_open(const char *uri, remote_handle64 *h);
AEEResult htp_iface_close(remote_handle64 h);
AEEResult htp_iface_start(remote_handle64 _h, uint32 sess_id, uint64 dsp_queue_id, uint32 n_hvx, uint32 n_hmx,
                          uint64 max_vmem);
AEEResult htp_iface_stop(remote_handle64 _h);
AEEResult htp_iface_mmap(remote_handle64 _h, uint32 fd, uint32 size);
AEEResult htp_iface_munmap(remote_handle64 _h, uint32 fd);
AEEResult htp_iface_profiler(remote_handle64 _h, uint32 mode, const htp_iface_pmu_conf *pmu);
AEEResult htp_iface_etm(remote_handle64 _h, uint32 enable);
AEEResult htp_iface_hwinfo(remote_handle64 _h, uint32 *n_threads, uint32 *n_hvx, uint32 *n_hmx, uint64 *vtcm_size);
int htp_iface_skel_handle_invoke(remote_handle64 _h, uint32_t _sc, remote_arg *_pra);

#ifdef __cplusplus
}
#endif

#endif
