/**
 * @file native_half_test.cpp
 * @brief The native kernels' fp16 and bf16 conversions against the twin's (twin::fp, which the
 *        golden compares hold to numpy's): the portable backend's (on the bit pattern, no
 *        _Float16) and, on aarch64, the NEON backend's (fcvtl / fcvtn, shll / the rounding on the
 *        bit pattern), on every half and on every float of the boundary regions (subnormal halves,
 *        the rounding to inf, NaN payloads) plus a stride through all 2^32 patterns.
 */
#include <cstdint>
#include <cstring>
#include <vector>

#include "native_simd.h"
#include "native_simd_neon.h"
#include "test_harness.h"

// twin::fp's conversions (native_half_reference.cpp)
uint16_t TwinHalfOf(float x);
float TwinFloatOfHalf(uint16_t h);
uint16_t TwinBf16Of(float x);
float TwinFloatOfBf16(uint16_t b);

namespace {

using ascend_ema_adam::native::Bf16;
using ascend_ema_adam::native::F16;
using ascend_ema_adam::native::Scalar;

uint32_t Bits(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

float Float(uint32_t u)
{
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

/** Every float the narrowing tests: the regions where the cases meet, densely, and a stride. */
std::vector<uint32_t> NarrowingInputs()
{
    std::vector<uint32_t> in;
    const uint32_t dense[][2] = {
        {0x00000000U, 0x00010000U},  // zero and fp32 subnormals
        {0x33000000U, 0x33800000U},  // around half's smallest subnormal / 2
        {0x387fc000U, 0x38804000U},  // half's smallest normal
        {0x477fe000U, 0x47802000U},  // the rounding to inf (65504 .. 65536)
        {0x7f7ff000U, 0x7fc10000U},  // the largest floats, inf, signalling and quiet NaNs
    };
    for (const auto& r : dense) {
        for (uint64_t u = r[0]; u <= r[1]; ++u) {
            in.push_back(static_cast<uint32_t>(u));
            in.push_back(static_cast<uint32_t>(u) | 0x80000000U);
        }
    }
    for (uint64_t u = 0; u <= 0xffffffffULL; u += 4099) {
        in.push_back(static_cast<uint32_t>(u));
    }
    return in;
}

/** Quiet NaN with the payload's top bits, as F16C, aarch64's fcvtn and twin::fp round NaNs. */
uint16_t ExpectedHalf(uint32_t f)
{
    return TwinHalfOf(Float(f));
}

}  // namespace

AEA_CASE(portable_f16_widens_every_half_as_the_twin)
{
    for (uint32_t h = 0; h <= 0xffffU; ++h) {
        const float got = Scalar::Widen(F16{static_cast<uint16_t>(h)});
        const float want = TwinFloatOfHalf(static_cast<uint16_t>(h));
        EXPECT_MSG(Bits(got) == Bits(want), "half 0x%04x -> 0x%08x, twin 0x%08x", h, Bits(got), Bits(want));
    }
}

AEA_CASE(portable_f16_narrows_as_the_twin)
{
    for (const uint32_t f : NarrowingInputs()) {
        const uint16_t got = Scalar::Narrow(Float(f), static_cast<const F16*>(nullptr)).bits;
        EXPECT_MSG(got == ExpectedHalf(f), "float 0x%08x -> 0x%04x, twin 0x%04x", f, got, ExpectedHalf(f));
    }
}

AEA_CASE(portable_bf16_as_the_twin)
{
    for (const uint32_t f : NarrowingInputs()) {
        const uint16_t got = Scalar::Narrow(Float(f), static_cast<const Bf16*>(nullptr)).bits;
        const uint16_t want = TwinBf16Of(Float(f));
        EXPECT_MSG(got == want, "float 0x%08x -> bf16 0x%04x, twin 0x%04x", f, got, want);
    }
}

#ifdef AEA_NATIVE_HAVE_NEON
using ascend_ema_adam::native::Neon;

AEA_CASE(neon_f16_and_bf16_widen_as_the_twin)
{
    for (uint32_t h = 0; h <= 0xffffU; h += 4) {
        uint16_t four[4];
        for (uint32_t k = 0; k < 4; ++k) four[k] = static_cast<uint16_t>(h + k);
        float f16[4], bf16[4];
        vst1q_f32(f16, Neon::Full<F16>::Load(reinterpret_cast<const F16*>(four)).v[0]);
        vst1q_f32(bf16, Neon::Full<Bf16>::Load(reinterpret_cast<const Bf16*>(four)).v[0]);
        for (uint32_t k = 0; k < 4; ++k) {
            const float want = TwinFloatOfHalf(four[k]);
            EXPECT_MSG(Bits(f16[k]) == Bits(want), "half 0x%04x -> 0x%08x, twin 0x%08x", four[k],
                       Bits(f16[k]), Bits(want));
            EXPECT_MSG(Bits(bf16[k]) == Bits(TwinFloatOfBf16(four[k])), "bf16 0x%04x", four[k]);
        }
    }
}

AEA_CASE(neon_f16_and_bf16_narrow_as_the_twin)
{
    std::vector<uint32_t> in = NarrowingInputs();
    while (in.size() % 4 != 0) in.push_back(0);
    for (size_t i = 0; i < in.size(); i += 4) {
        float four[4];
        for (size_t k = 0; k < 4; ++k) four[k] = Float(in[i + k]);
        F16 h[4];
        Bf16 b[4];
        Neon::Full<F16>::Store(h, {{vld1q_f32(four)}});
        Neon::Full<Bf16>::Store(b, {{vld1q_f32(four)}});
        for (size_t k = 0; k < 4; ++k) {
            EXPECT_MSG(h[k].bits == ExpectedHalf(in[i + k]), "float 0x%08x -> half 0x%04x, twin 0x%04x",
                       in[i + k], h[k].bits, ExpectedHalf(in[i + k]));
            EXPECT_MSG(b[k].bits == TwinBf16Of(four[k]), "float 0x%08x -> bf16 0x%04x",
                       in[i + k], b[k].bits);
        }
    }
}

AEA_CASE(neon_max_is_x86s)
{
    // a > b ? a : b, lane by lane: b when either is NaN, b for +-0 pairs (AMSGrad's max_v).
    const float nan = Float(0x7fc00001U);
    const float a[] = {1.0F, nan, 0.0F, -0.0F, 2.0F, -1.0F, nan, 3.0F};
    const float b[] = {2.0F, 1.0F, -0.0F, 0.0F, nan, -2.0F, nan, 3.0F};
    for (int i = 0; i < 8; i += 4) {
        float got[4];
        vst1q_f32(got, Neon::Max(vld1q_f32(a + i), vld1q_f32(b + i)));
        for (int k = 0; k < 4; ++k) {
            const float want = a[i + k] > b[i + k] ? a[i + k] : b[i + k];
            EXPECT_MSG(Bits(got[k]) == Bits(want), "max(0x%08x, 0x%08x) = 0x%08x", Bits(a[i + k]),
                       Bits(b[i + k]), Bits(got[k]));
        }
    }
}
#endif

int main(int argc, char** argv)
{
    return aea_test::RunCases(argc, argv);
}
