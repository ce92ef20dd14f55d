/**
 * @file native_stream_probe_avx2.cpp
 * @brief The bandwidth probes' loops for the avx2 backend (bench only).
 */
#include "native_simd_avx2.h"

#include "native_stream_probe_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX2
StreamProbeLoop StreamProbeAvx2() { return &ProbeRange<Avx2>; }
#else
StreamProbeLoop StreamProbeAvx2() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
