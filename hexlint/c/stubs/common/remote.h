/* hexlint stand-in: declaration-only FastRPC remote API, written from the names ggml-hexagon uses. */
#ifndef HEXLINT_STUB_REMOTE_H
#define HEXLINT_STUB_REMOTE_H

#include "AEEStdDef.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t remote_handle;
typedef uint64_t remote_handle64;
typedef uint64_t fastrpc_async_jobid;

typedef struct {
    void *pv;
    size_t nLen;
} remote_buf;

typedef struct {
    int32_t fd;
    uint32_t offset;
} remote_dma_handle;

typedef union {
    remote_buf buf;
    remote_handle h;
    remote_handle64 h64;
    remote_dma_handle dma;
} remote_arg;

#define ADSP_DOMAIN_ID 0
#define MDSP_DOMAIN_ID 1
#define SDSP_DOMAIN_ID 2
#define CDSP_DOMAIN_ID 3
#define CDSP1_DOMAIN_ID 4
#define GDSP0_DOMAIN_ID 5
#define GDSP1_DOMAIN_ID 6

#define ADSP_DOMAIN_NAME "adsp"
#define MDSP_DOMAIN_NAME "mdsp"
#define SDSP_DOMAIN_NAME "sdsp"
#define CDSP_DOMAIN_NAME "cdsp"
#define CDSP1_DOMAIN_NAME "cdsp1"

#define MAX_DOMAIN_NAMELEN 30

#define ITRANSPORT_PREFIX "'\":;./\\"
#define FASTRPC_URI_SEPARATOR "&"
#define FASTRPC_DOMAIN_URI "_dom="
#define FASTRPC_SESSION_URI "_session="
#define ADSP_DOMAIN "&_dom=adsp"
#define MDSP_DOMAIN "&_dom=mdsp"
#define SDSP_DOMAIN "&_dom=sdsp"
#define CDSP_DOMAIN "&_dom=cdsp"
#define CDSP1_DOMAIN "&_dom=cdsp1"

typedef struct domain {
    int id;
    const char *uri;
} domain;

enum fastrpc_map_flags {
    FASTRPC_MAP_STATIC,
    FASTRPC_MAP_RESERVED,
    FASTRPC_MAP_FD,
    FASTRPC_MAP_FD_DELAYED,
    FASTRPC_MAP_FD_NOMAP = 16,
    FASTRPC_MAP_MAX,
};
#ifdef __cplusplus
typedef enum fastrpc_map_flags fastrpc_map_flags;
#endif

enum remote_dsp_attributes {
    DOMAIN_SUPPORT,
    UNSIGNED_PD_SUPPORT,
    HVX_SUPPORT_64B,
    HVX_SUPPORT_128B,
    VTCM_PAGE,
    VTCM_COUNT,
    ARCH_VER,
    HMX_SUPPORT_DEPTH,
    HMX_SUPPORT_SPATIAL,
    ASYNC_FASTRPC_SUPPORT,
    STATUS_NOTIFICATION_SUPPORT,
    MCID_MULTICAST,
    FASTRPC_MAX_DSP_ATTRIBUTES,
};

struct remote_dsp_capability {
    uint32_t domain;
    uint32_t attribute_ID;
    uint32_t capability;
};

enum handle_control_req_id {
    DSPRPC_RESERVED,
    DSPRPC_CONTROL_LATENCY = 1,
    DSPRPC_GET_DSP_INFO = 2,
    DSPRPC_CONTROL_WAKELOCK = 3,
    DSPRPC_GET_DOMAIN = 4,
};

enum remote_rpc_latency_flags {
    RPC_DISABLE_QOS = 0,
    RPC_PM_QOS,
    RPC_ADAPTIVE_QOS,
    RPC_POLL_QOS,
};

struct remote_rpc_control_latency {
    uint32_t enable;
    uint32_t latency;
};

enum session_control_req_id {
    FASTRPC_RESERVED_1,
    FASTRPC_THREAD_PARAMS = 1,
    DSPRPC_CONTROL_UNSIGNED_MODULE = 2,
    FASTRPC_RESERVED_2,
    FASTRPC_RELATIVE_THREAD_PRIORITY = 4,
    FASTRPC_RESERVED_3,
    FASTRPC_REMOTE_PROCESS_KILL = 6,
    FASTRPC_SESSION_CLOSE = 7,
    FASTRPC_CONTROL_PD_DUMP = 8,
    FASTRPC_REMOTE_PROCESS_EXCEPTION = 9,
    FASTRPC_REMOTE_PROCESS_TYPE = 10,
    FASTRPC_REGISTER_STATUS_NOTIFICATIONS = 11,
    FASTRPC_PD_INITMEM_SIZE = 12,
    FASTRPC_RESERVE_NEW_SESSION = 13,
    FASTRPC_GET_EFFECTIVE_DOMAIN_ID = 14,
    FASTRPC_GET_URI = 15,
};

struct remote_rpc_control_unsigned_module {
    int domain;
    int enable;
};

struct remote_rpc_reserve_new_session {
    char *domain_name;
    uint32_t domain_name_len;
    char *session_name;
    uint32_t session_name_len;
    uint32_t effective_domain_id;
    uint32_t session_id;
};

typedef struct remote_rpc_effective_domain_id {
    char *domain_name;
    uint32_t domain_name_len;
    uint32_t session_id;
    uint32_t effective_domain_id;
} remote_rpc_effective_domain_id_t;

struct remote_rpc_get_uri {
    char *domain_name;
    uint32_t domain_name_len;
    uint32_t session_id;
    char *module_uri;
    uint32_t module_uri_len;
    char *uri;
    uint32_t uri_len;
};

/* Subsystem types and the domain list returned by remote_system_request(FASTRPC_GET_DOMAINS). */
enum fastrpc_subsystem_type {
    FASTRPC_LPASS = 1,
    FASTRPC_HPASS = 2,
    FASTRPC_NSP = 3,
};

#define DOMAINS_LIST_FLAGS_SET_TYPE(flags, type) (((flags) & ~0x3u) | ((uint32_t) (type) & 0x3u))

typedef struct {
    int id;
    char name[MAX_DOMAIN_NAMELEN];
    int type;
    int status;
    uint32_t card;
    uint32_t ss_id;
} fastrpc_domain;

typedef struct {
    fastrpc_domain *domains;
    int max_domains;
    int num_domains;
    uint32_t flags;
    uint64_t reserved;
} fastrpc_domains_info;

enum system_req_id {
    FASTRPC_GET_DOMAINS = 0,
};

typedef struct {
    enum system_req_id id;
    union {
        fastrpc_domains_info sys;
    };
} system_req_payload;

int remote_handle_open(const char *name, remote_handle *ph);
int remote_handle64_open(const char *name, remote_handle64 *ph);
int remote_handle_invoke(remote_handle h, uint32_t dwScalars, remote_arg *pra);
int remote_handle64_invoke(remote_handle64 h, uint32_t dwScalars, remote_arg *pra);
int remote_handle_close(remote_handle h);
int remote_handle64_close(remote_handle64 h);
int remote_handle_control(uint32_t req, void *data, uint32_t datalen);
int remote_handle64_control(remote_handle64 h, uint32_t req, void *data, uint32_t datalen);
int remote_session_control(uint32_t req, void *data, uint32_t datalen);
int remote_system_request(system_req_payload *req);
int remote_mmap(int fd, uint32_t flags, uint32_t vaddrin, int size, uint32_t *vaddrout);
int remote_munmap(uint32_t vaddrout, int size);
int remote_mmap64(int fd, uint32_t flags, uint64_t vaddrin, int64_t size, uint64_t *vaddrout);
int remote_munmap64(uint64_t vaddrout, int64_t size);
int remote_register_buf(void *buf, int size, int fd);
int fastrpc_mmap(int domain, int fd, void *addr, int offset, size_t length, enum fastrpc_map_flags flags);
int fastrpc_munmap(int domain, int fd, void *addr, size_t length);

#ifdef __cplusplus
}
#endif

#endif
