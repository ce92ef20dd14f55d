// tools/ascendc_check/run.py --emulate: float conversions by their documented rules (emu_convert.h). Exact arithmetic
// in double: a float and every quantum of the 16-bit formats are exact there.
#include "emu_convert.h"

#include <cmath>
#include <cstring>

namespace ascendc_emu {

namespace {

uint32_t Bits(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}

/** Decodes a binary16-like value of E exponent and M mantissa bits. */
float Widen(uint16_t bits, int expBits, int manBits)
{
    const uint32_t sign = bits >> (expBits + manBits);
    const uint32_t expField = (bits >> manBits) & ((1u << expBits) - 1);
    const uint32_t man = bits & ((1u << manBits) - 1);
    const int bias = (1 << (expBits - 1)) - 1;
    double v;
    if (expField == (1u << expBits) - 1) {
        v = man != 0 ? std::nan("") : INFINITY;
    } else if (expField == 0) {
        v = std::ldexp(static_cast<double>(man), 1 - bias - manBits);
    } else {
        v = std::ldexp(static_cast<double>(man | (1u << manBits)), static_cast<int>(expField) - bias - manBits);
    }
    return static_cast<float>(sign ? -v : v);
}

/** Rounds a non-negative `m` to an integer: `up` / `down` toward +inf / 0 of the magnitude, or the other modes. */
double RoundMagnitude(double m, Round mode, bool negative)
{
    switch (mode) {
        case Round::kRint: return std::nearbyint(m);  // the default rounding direction: ties to even
        case Round::kAway: return std::round(m);
        case Round::kTrunc: return std::trunc(m);
        case Round::kFloor: return negative ? std::ceil(m) : std::floor(m);
        case Round::kCeil: return negative ? std::floor(m) : std::ceil(m);
        case Round::kOdd: {
            const double t = std::trunc(m);
            return t != m && std::fmod(t, 2.0) == 0.0 ? t + 1.0 : t;
        }
    }
    return m;
}

/** Whether a finite value past the range becomes inf (else MAX) under `mode`. */
bool OverflowsToInf(Round mode, bool negative)
{
    switch (mode) {
        case Round::kRint:
        case Round::kAway: return true;
        case Round::kFloor: return negative;
        case Round::kCeil: return !negative;
        case Round::kTrunc:
        case Round::kOdd: return false;
    }
    return true;
}

uint16_t Narrow(float x, int expBits, int manBits, Round mode)
{
    const uint32_t signBit = Bits(x) >> 31;
    const uint16_t sign = static_cast<uint16_t>(signBit << (expBits + manBits));
    const uint16_t expMask = static_cast<uint16_t>(((1u << expBits) - 1) << manBits);
    const uint16_t maxBits = static_cast<uint16_t>(expMask - (1u << manBits) + ((1u << manBits) - 1));
    if (std::isnan(x)) return static_cast<uint16_t>(sign | expMask | (1u << (manBits - 1)));
    if (std::isinf(x)) return static_cast<uint16_t>(sign | expMask);
    const double a = std::fabs(static_cast<double>(x));
    if (a == 0.0) return sign;
    const int bias = (1 << (expBits - 1)) - 1;
    const int emin = 1 - bias;
    int e = std::ilogb(a);
    if (e < emin) e = emin;
    const double quantum = std::ldexp(1.0, e - manBits);
    const double r = RoundMagnitude(a / quantum, mode, signBit != 0) * quantum;
    if (r >= std::ldexp(1.0, bias + 1)) {
        return OverflowsToInf(mode, signBit != 0) ? static_cast<uint16_t>(sign | expMask)
                                                  : static_cast<uint16_t>(sign | maxBits);
    }
    if (r < std::ldexp(1.0, emin)) {  // subnormal (or zero)
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(r / std::ldexp(1.0, emin - manBits)));
    }
    const int re = std::ilogb(r);
    const uint32_t man = static_cast<uint32_t>(r / std::ldexp(1.0, re - manBits)) - (1u << manBits);
    return static_cast<uint16_t>(sign | (static_cast<uint32_t>(re + bias) << manBits) | man);
}

}  // namespace

float HalfToFloat(uint16_t bits) { return Widen(bits, 5, 10); }
float Bf16ToFloat(uint16_t bits) { return Widen(bits, 8, 7); }
uint16_t FloatToHalf(float x, Round mode) { return Narrow(x, 5, 10, mode); }
uint16_t FloatToBf16(float x, Round mode) { return Narrow(x, 8, 7, mode); }

float RoundToIntegral(float x, Round mode)
{
    if (std::isnan(x) || std::isinf(x)) return x;
    const double r = RoundMagnitude(std::fabs(static_cast<double>(x)), mode, std::signbit(x));
    return static_cast<float>(std::signbit(x) ? -r : r);
}

uint16_t Saturate16(uint16_t bits, bool isHalf)
{
    const uint16_t expMask = isHalf ? 0x7c00 : 0x7f80;
    const uint16_t maxBits = isHalf ? 0x7bff : 0x7f7f;
    if ((bits & expMask) != expMask) return bits;
    return (bits & static_cast<uint16_t>(~(0x8000u | expMask))) != 0 ? uint16_t{0}
                                                                     : static_cast<uint16_t>((bits & 0x8000u) | maxBits);
}

}  // namespace ascendc_emu
