/**
 * @file native_stream_probe_neon.cpp
 * @brief The bandwidth probes' loops for the neon backend (bench only).
 */
#include "native_simd_neon.h"

#include "native_stream_probe_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_NEON
StreamProbeLoop StreamProbeNeon() { return &ProbeRange<Neon>; }
#else
StreamProbeLoop StreamProbeNeon() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
