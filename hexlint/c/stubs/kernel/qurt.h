/* hexlint stand-in: declaration-only, written from the names ggml-hexagon uses and the public Hexagon SDK docs (not the SDK header). */
#ifndef HEXLINT_STUB_QURT_H
#define HEXLINT_STUB_QURT_H
#include "qurt_atomic_ops.h"
#include "qurt_barrier.h"
#include "qurt_futex.h"
#include "qurt_hvx.h"
#include "qurt_memory.h"
#include "qurt_mutex.h"
#include "qurt_pmu.h"
#include "qurt_signal.h"
#include "qurt_sysenv.h"
#include "qurt_thread.h"
#include "qurt_timer.h"
#define QURT_EOK 0
#define QURT_EFAILED 12
#define QURT_EINVALID 4
#endif
