/**
 * @file apply_fused_ema_adam8bit_list_native_loops.h
 * @brief Internal interface between the 8-bit native driver (apply_fused_ema_adam8bit_list_native.cpp)
 *        and its loops per instruction set (*_native_{avx512,avx2,generic}.cpp). Plain structs and
 *        constants only: the loop files are compiled for other instruction sets (native_simd.h
 *        says why nothing else may be shared).
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_LOOPS_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_LOOPS_H

#include <cstdint>

#include "apply_fused_ema_adam8bit_list_dtypes.h"
#include "ema_adam_params.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace native {

/** The encode thresholds by binary-search level, for vector lookups: level s (128, 64, ..., 1)
 *  holds T[s - 1 + j * 2s] for j < 128 / s, the thresholds the search compares with at that
 *  step (each level padded to a whole 64-byte line). */
struct Adam8bitSearchLevels {
    alignas(64) float l128[16];
    alignas(64) float l64[16];
    alignas(64) float l32[16];
    alignas(64) float l16[16];
    alignas(64) float l8[16];
    alignas(64) float l4[32];
    alignas(64) float l2[64];
    alignas(64) float l1[128];
};

/** One map and what its encode needs. */
struct Adam8bitCodebook {
    alignas(64) float map[256];
    alignas(64) float thresholds[256];  // 255 used: Adam8bitEncodeThreshold of neighbours
    Adam8bitSearchLevels levels;
};

/** What one launch's loop is compiled for. */
struct Adam8bitLoopShape {
    Adam8bitDtypes types;
    uint32_t mode;      // 0: Adam + L2; 1: AdamW
    uint32_t prologue;  // 0: none; 1: g / gradDivisor first (grad scale, maximize)
    bool ema;           // ss given (false: the EMA is neither read nor written)
};

/** One launch: every entry updated in place. */
struct Adam8bitJob {
    UpdateScalars k;
    float gradDivisor;
    const Adam8bitCodebook* m;
    const Adam8bitCodebook* v;
    const uint64_t* numels;
    const void* const* grads;
    void* const* vars;
    void* const* ms;
    void* const* vs;
    void* const* mAbsmaxes;
    void* const* vAbsmaxes;
    void* const* ss;      // the EMA only
    void* const* copies;  // model copies only
};

/** One instruction set's loop for one shape: `blocks` quantization blocks of the launch's block
 *  sequence, from block `block` of entry `entry` on, continuing into the next entries. */
using Adam8bitLoop = void (*)(const Adam8bitJob& job, uint32_t entry, uint64_t block,
                              uint64_t blocks);

// Defined in apply_fused_ema_adam8bit_list_native_<isa>.cpp: the loop for `shape`, null for
// storage types outside the contract or (AVX) a build for another architecture.
Adam8bitLoop Adam8bitLoopAvx512(const Adam8bitLoopShape& shape);
Adam8bitLoop Adam8bitLoopAvx2(const Adam8bitLoopShape& shape);
Adam8bitLoop Adam8bitLoopGeneric(const Adam8bitLoopShape& shape);

}  // namespace native
}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_LOOPS_H
