/**
 * @file native_stream_probe_avx512.cpp
 * @brief The bandwidth probes' loops for the avx512 backend (bench only).
 */
#include "native_simd_avx512.h"

#include "native_stream_probe_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX512
StreamProbeLoop StreamProbeAvx512() { return &ProbeRange<Avx512>; }
#else
StreamProbeLoop StreamProbeAvx512() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
