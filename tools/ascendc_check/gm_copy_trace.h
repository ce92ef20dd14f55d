/**
 * @file gm_copy_trace.h
 * @brief For tools/ascendc_check/run.py only (never part of a build of the project): what the stand-in's GM<->UB copy
 *        intrinsics report. The generated stub_fun.h defines copy_gm_to_ubuf[_align_bN] and
 *        copy_ubuf_to_gm[_align_bN] as do-nothing templates that pass their arguments here, so a --run driver
 *        can see every GM range a kernel's DataCopy/DataCopyPad reaches (run/run_support.cpp records them).
 *        The type-check (-fsyntax-only) never links, so the hook needs no definition there.
 *
 * Argument order, as the library calls them (asc-devkit impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h):
 *   _align_bN (DataCopyPad): dst, src, sid, nBurst, lenBurst (bytes), leftPad, rightPad, srcGap, dstGap; the GM
 *                            side's gap is in bytes (srcGap reading GM, dstGap writing GM); N = element bits.
 *   plain     (DataCopy):    dst, src, sid, nBurst, lenBurst (32-B blocks), srcGap, dstGap (32-B blocks).
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_GM_COPY_TRACE_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_GM_COPY_TRACE_H

#include <cstdint>

/** One GM<->UB copy: nBurst bursts of burstBytes at gm, gm + (burstBytes + gapBytes), ...; elemBytes 0 when
 *  the intrinsic does not say (plain copies); bursts 0 with gm null for a form the trace does not decode. */
extern "C" void ascendc_check_gm_copy(const char* intrinsic, int toGm, uint32_t elemBytes, const void* gm,
                                      uint64_t bursts, uint64_t burstBytes, uint64_t gapBytes);

namespace ascendc_check {

constexpr uint64_t kCopyBlockBytes = 32;

template <class D, class S, class Sid, class N, class L, class LeftPad, class RightPad, class SrcGap, class DstGap>
inline void TraceGmCopy(const char* intrinsic, bool toGm, uint32_t elemBytes, D* dst, S* src, Sid, N nBurst,
                        L lenBurst, LeftPad, RightPad, SrcGap srcGap, DstGap dstGap)
{
    ascendc_check_gm_copy(intrinsic, toGm ? 1 : 0, elemBytes,
                          toGm ? static_cast<const void*>(dst) : static_cast<const void*>(src),
                          static_cast<uint64_t>(nBurst), static_cast<uint64_t>(lenBurst),
                          toGm ? static_cast<uint64_t>(dstGap) : static_cast<uint64_t>(srcGap));
}

template <class D, class S, class Sid, class N, class L, class SrcGap, class DstGap>
inline void TraceGmCopy(const char* intrinsic, bool toGm, uint32_t, D* dst, S* src, Sid, N nBurst, L lenBurst,
                        SrcGap srcGap, DstGap dstGap)
{
    ascendc_check_gm_copy(intrinsic, toGm ? 1 : 0, 0,
                          toGm ? static_cast<const void*>(dst) : static_cast<const void*>(src),
                          static_cast<uint64_t>(nBurst), static_cast<uint64_t>(lenBurst) * kCopyBlockBytes,
                          (toGm ? static_cast<uint64_t>(dstGap) : static_cast<uint64_t>(srcGap)) * kCopyBlockBytes);
}

/** Any other argument list (e.g. a config-register form): reported as undecoded, which a driver treats as a
 *  failure rather than guess the range. */
template <class... Args>
inline void TraceGmCopy(const char* intrinsic, bool toGm, uint32_t elemBytes, Args&&...)
{
    ascendc_check_gm_copy(intrinsic, toGm ? 1 : 0, elemBytes, nullptr, 0, 0, 0);
}

}  // namespace ascendc_check

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_GM_COPY_TRACE_H
