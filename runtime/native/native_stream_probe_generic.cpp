/**
 * @file native_stream_probe_generic.cpp
 * @brief The bandwidth probes' loops for the generic backend (bench only).
 */
#include "native_stream_probe_impl.h"

namespace ascend_ema_adam::native {

StreamProbeLoop StreamProbeGeneric() { return &ProbeRange<Scalar>; }

}  // namespace ascend_ema_adam::native
