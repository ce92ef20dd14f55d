/**
 * @file native_stream_probe_generic.cpp
 * @brief The bandwidth probes' loops for the generic backend (bench only).
 */
#include "native_stream_probe_impl.h"

namespace ascend_ema_adam::native {

#ifndef AEA_NATIVE_OMITTED  // see cmake/aea_add_operator.cmake
StreamProbeLoop StreamProbeGeneric() { return &ProbeRange<Scalar>; }
#else
StreamProbeLoop StreamProbeGeneric() { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
