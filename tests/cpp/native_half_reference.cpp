/**
 * @file native_half_reference.cpp
 * @brief native_half_test's reference: twin::fp's conversions behind plain functions, in a
 *        translation unit of their own (the twin names AscendC's bfloat16_t, which arm_neon.h
 *        also declares).
 */
#include <cstdint>

#include "twin_types.h"

uint16_t TwinHalfOf(float x) { return twin::fp::FloatToHalfRne(x); }
float TwinFloatOfHalf(uint16_t h) { return twin::fp::HalfToFloat(h); }
uint16_t TwinBf16Of(float x) { return twin::fp::FloatToBf16Rne(x); }
float TwinFloatOfBf16(uint16_t b) { return twin::fp::Bf16ToFloat(b); }
