/**
 * @file emu_convert.h
 * @brief tools/ascendc_check/run.py --emulate only: the float conversions of the emulated vconv_* intrinsics, written
 *        from their documented rules (asc-devkit docs, 数据结构/precision_conversion.md and Cast.md), not from
 *        the twin: round to nearest even (r), toward -inf (f), toward +inf (c), to nearest away from zero (a),
 *        toward zero (z), to odd (o); NaN stays NaN (quiet, sign kept), infinities stay infinite, and a finite
 *        value past the format's range becomes inf or MAX as the round mode directs. Saturation mode
 *        (CTRL[48] clear) then stores a 16-bit inf as +-MAX and NaN as 0.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_CONVERT_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_CONVERT_H

#include <cstdint>

namespace ascendc_emu {

enum class Round : uint8_t { kRint, kFloor, kCeil, kAway, kTrunc, kOdd };

float HalfToFloat(uint16_t bits);
float Bf16ToFloat(uint16_t bits);
uint16_t FloatToHalf(float x, Round mode);
uint16_t FloatToBf16(float x, Round mode);
/** vconv_f322f32{r,f,c,a,z}: x rounded to an integral value, as a float. */
float RoundToIntegral(float x, Round mode);
/** Saturation mode's rule on a half (isHalf) or bf16 result: inf -> +-MAX, NaN -> +0. */
uint16_t Saturate16(uint16_t bits, bool isHalf);

}  // namespace ascendc_emu

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_CONVERT_H
