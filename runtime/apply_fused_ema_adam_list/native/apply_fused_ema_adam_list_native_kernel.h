/**
 * @file apply_fused_ema_adam_list_native_kernel.h
 * @brief Internal interface between ApplyFusedEmaAdamList's native driver
 *        (apply_fused_ema_adam_list_native.cpp) and its loops per instruction set
 *        (apply_fused_ema_adam_list_native_{avx512,avx2,generic}.cpp). Plain structs only: the loop
 *        files are compiled for other instruction sets.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_KERNEL_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_KERNEL_H

#include <cstdint>

#include "data_type.h"
#include "ema_adam_params.h"

namespace ascend_ema_adam::native {

/** What one launch's loop is compiled for: the storage types and the options. */
struct ListLoopShape {
    DataType param;        // P (vars)
    DataType state;        // S (ms, vs, ss, max_vs)
    DataType grad;         // G (grads)
    bool hasCopy;          // model copies given
    DataType copy;         // C, when hasCopy
    uint32_t mode;         // 0: Adam + L2; 1: AdamW
    uint32_t prologue;     // native::Prologue: 0 none, 1 negate, 2 divide by gradDivisor
    bool amsgrad;          // max_vs given
    bool ema;              // ss given (false: the EMA is neither read nor written)
    bool streaming;        // the launch's data comes from memory, not the caches (NativeOptions::streamingBytes)
};

/** One launch: every entry updated in place (entry i has numels[i] elements in every list). */
struct ApplyFusedEmaAdamListJob {
    UpdateScalars k;
    float gradDivisor;     // prologue 2: the grad scale, negated with maximize
    const uint64_t* numels;
    const void* const* grads;
    void* const* vars;
    void* const* ms;
    void* const* vs;
    void* const* ss;       // the EMA only
    void* const* maxVs;    // AMSGrad only
    void* const* copies;   // model copies only
};

/** One instruction set's loop for one shape: `count` elements of the launch's flat sequence,
 *  starting at element `offset` of entry `tensor` and continuing into the next entries. */
using ApplyFusedEmaAdamListLoop = void (*)(const ApplyFusedEmaAdamListJob& job, uint32_t tensor,
                                           uint64_t offset, uint64_t count);

// Defined in apply_fused_ema_adam_list_native_<isa>.cpp: the loop for `shape`, null for a shape
// outside the operator's contract or (AVX) a build for another architecture.
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListAvx512(const ListLoopShape& shape);
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListAvx2(const ListLoopShape& shape);
ApplyFusedEmaAdamListLoop ApplyFusedEmaAdamListGeneric(const ListLoopShape& shape);

}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_NATIVE_KERNEL_H
