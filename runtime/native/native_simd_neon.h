/**
 * @file native_simd_neon.h
 * @brief The aarch64 NEON (Advanced SIMD) backend: 4 fp32 lanes per instruction, tails left to
 *        the portable backend. NEON is part of every ARMv8-A core (Kunpeng 920 among them), so the
 *        loops need no extra compiler flags; the kernels call it when BestIsa() says "neon".
 *        Defines AEA_NATIVE_HAVE_NEON (and the backend) only in an aarch64 translation unit.
 *
 * Bit-exactness with the golden: GCC's vmulq_f32 / vaddq_f32 are plain vector `*` and `+`, which
 * GNU C++ contracts into fmla by default; every kernel translation unit is compiled with
 * -ffp-contract=off (AEA_EXACT_FP_FLAGS), and the ctest native.neon_loops_have_no_fma holds the
 * built loops to it (no fmla/fmls/fmadd/fmsub/fnmadd/fnmsub in their objects).
 * fdiv and fsqrt round correctly; fcvtn/fcvtl (fp16) round to nearest even and quiet NaNs as
 * F16C does, under Linux's default FPCR (round to nearest, no flush-to-zero, no default NaN).
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_SIMD_NEON_H
#define ASCEND_EMA_ADAM_NATIVE_SIMD_NEON_H

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include "native_simd.h"

#define AEA_NATIVE_HAVE_NEON 1

namespace ascend_ema_adam::native {
namespace {

struct Neon {
    using V = float32x4_t;
    static constexpr uint64_t kLanes = 4;
    static constexpr bool kMaskedTail = false;
    static constexpr uint64_t kStreamingPrefetch = 0;  // not measured on a Kunpeng: none
    static V Set1(float x) { return vdupq_n_f32(x); }
    static V Add(V a, V b) { return vaddq_f32(a, b); }
    static V Sub(V a, V b) { return vsubq_f32(a, b); }
    static V Mul(V a, V b) { return vmulq_f32(a, b); }
    static V Div(V a, V b) { return vdivq_f32(a, b); }
    static V Sqrt(V a) { return vsqrtq_f32(a); }
    /** a > b ? a : b lane by lane, as x86's maxps (fmax would return the non-NaN operand and
     *  order -0 below +0). */
    static V Max(V a, V b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
    static V LoadFloat(const float* x) { return vld1q_f32(x); }
    /** A plain store: GCC's NEON intrinsics have no non-temporal one (the probes only). */
    static void Stream(float* x, V y) { vst1q_f32(x, y); }
    static void StreamFence() {}

    /** bf16 of each lane, round to nearest even on the bit pattern (add 0x7fff plus the kept lsb),
     *  NaN quieted: four 16-bit words in lane order. */
    static uint16x4_t Bf16Bits(V y)
    {
        const uint32x4_t bits = vreinterpretq_u32_f32(y);
        const uint32x4_t lsb = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
        const uint32x4_t rounded = vshrq_n_u32(vaddq_u32(vaddq_u32(bits, vdupq_n_u32(0x7fff)), lsb), 16);
        const uint32x4_t quiet = vorrq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(0x0040));
        const uint32x4_t ordered = vceqq_f32(y, y);  // all ones unless NaN
        return vmovn_u32(vbslq_u32(ordered, rounded, quiet));
    }

    /** Every storage type in lane order, one vector per step (4 elements). */
    template <class T>
    struct Full;
    template <class T>
    struct Ordered : Full<T> {};
};

template <>
struct Neon::Full<float> {
    using P = Pack<V, 1>;
    static constexpr int kVecs = 1;
    static P Load(const float* x) { return {{vld1q_f32(x)}}; }
    static void Store(float* x, const P& y) { vst1q_f32(x, y.v[0]); }
};

template <>
struct Neon::Full<F16> {
    using P = Pack<V, 1>;
    static constexpr int kVecs = 1;
    static P Load(const F16* x)
    {
        return {{vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(&x->bits)))}};  // fcvtl: exact
    }
    static void Store(F16* x, const P& y)
    {
        vst1_u16(&x->bits, vreinterpret_u16_f16(vcvt_f16_f32(y.v[0])));  // fcvtn: RNE
    }
};

/** bf16 is the high half of fp32: widening is a shift by 16 (ushll), exact. */
template <>
struct Neon::Full<Bf16> {
    using P = Pack<V, 1>;
    static constexpr int kVecs = 1;
    static P Load(const Bf16* x)
    {
        return {{vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(&x->bits), 16))}};
    }
    static void Store(Bf16* x, const P& y) { vst1_u16(&x->bits, Bf16Bits(y.v[0])); }
};

}  // namespace
}  // namespace ascend_ema_adam::native

#endif
#endif  // ASCEND_EMA_ADAM_NATIVE_SIMD_NEON_H
