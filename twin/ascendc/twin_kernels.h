/**
 * @file twin_kernels.h
 * @brief The per-element loops behind the twin's vector instructions.
 *
 * They live in twin_kernels.cpp, compiled -O3 with -ffp-contract=off whatever the kernel's own flags, so
 * every instruction is one tight auto-vectorized loop with one IEEE rounding per element. Operands are
 * either identical or disjoint (the OVERLAP rule guarantees it), which is what lets the loops ignore
 * aliasing.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_KERNELS_H
#define ASCEND_EMA_ADAM_TWIN_KERNELS_H

#include <cstddef>
#include <cstdint>

#include "twin_types.h"

namespace twin::detail::kern {

enum class BinOp : uint8_t { Add, Sub, Mul, Div, Max, Min };
enum class ScalarOp : uint8_t { Adds, Muls, Maxs, Mins };
enum class UnOp : uint8_t { Sqrt, Abs, Exp, Reciprocal, Rsqrt };

// Integer Div is never dispatched (DTYPE rejects it); integer arithmetic wraps.
void Binary(BinOp op, float* d, const float* a, const float* b, size_t n);
void Binary(BinOp op, half* d, const half* a, const half* b, size_t n);
void Binary(BinOp op, int32_t* d, const int32_t* a, const int32_t* b, size_t n);
void Binary(BinOp op, int16_t* d, const int16_t* a, const int16_t* b, size_t n);

void Scalar(ScalarOp op, float* d, const float* a, float s, size_t n);
void Scalar(ScalarOp op, half* d, const half* a, half s, size_t n);
void Scalar(ScalarOp op, int32_t* d, const int32_t* a, int32_t s, size_t n);
void Scalar(ScalarOp op, int16_t* d, const int16_t* a, int16_t s, size_t n);

void Unary(UnOp op, float* d, const float* a, size_t n);
void Unary(UnOp op, half* d, const half* a, size_t n);

// d = s * a + d, rounded after the multiply and after the add.
void Axpy(float* d, const float* s, float a, size_t n);
void Axpy(float* d, const half* s, half a, size_t n);
void Axpy(half* d, const half* s, half a, size_t n);

void Fill(uint16_t* d, uint16_t v, size_t n);
void Fill(uint32_t* d, uint32_t v, size_t n);

void Cast(float* d, const half* s, size_t n);
void Cast(float* d, const bfloat16_t* s, size_t n);
void Cast(half* d, const float* s, size_t n, AscendC::RoundMode mode);
void Cast(bfloat16_t* d, const float* s, size_t n, AscendC::RoundMode mode);
void Cast(float* d, const int32_t* s, size_t n);
void Cast(int32_t* d, const float* s, size_t n, AscendC::RoundMode mode);
void Cast(half* d, const uint8_t* s, size_t n);
void Cast(int32_t* d, const half* s, size_t n, AscendC::RoundMode mode);
void Cast(uint8_t* d, const half* s, size_t n, AscendC::RoundMode mode);

// dst[i] = src[(base + offset[i]) / sizeof(T)] (byte offsets), 4-byte elements.
void Gather(uint32_t* d, const uint32_t* src, const uint32_t* offsets, uint32_t base, size_t n);
void Gather(uint16_t* d, const uint16_t* src, const uint32_t* offsets, uint32_t base, size_t n);
// Bit i of d (LSB first per byte) = a[i] <mode> b[i]; a NaN operand compares false (NE: true).
void Compare(uint8_t* d, const float* a, const float* b, AscendC::CMPMODE mode, size_t n);
void Compare(uint8_t* d, const half* a, const half* b, AscendC::CMPMODE mode, size_t n);
// d[i] = bit i of mask ? a[i] : b[i].
void Select(uint32_t* d, const uint8_t* mask, const uint32_t* a, const uint32_t* b, size_t n);
void Select(uint16_t* d, const uint8_t* mask, const uint16_t* a, const uint16_t* b, size_t n);

// Saturation mode's result rule for 16-bit floats: +-inf -> +-MAX, NaN -> +0, everything else kept.
void Saturate(half* d, size_t n);
void Saturate(bfloat16_t* d, size_t n);

}  // namespace twin::detail::kern

#endif  // ASCEND_EMA_ADAM_TWIN_KERNELS_H
