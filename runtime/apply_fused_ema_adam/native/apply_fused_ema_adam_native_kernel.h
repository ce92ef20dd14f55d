/**
 * @file apply_fused_ema_adam_native_kernel.h
 * @brief Internal interface between ApplyFusedEmaAdam's native driver
 *        (apply_fused_ema_adam_native.cpp) and its loops per instruction set
 *        (apply_fused_ema_adam_native_{avx512,avx2,generic}.cpp). Plain structs only: the ISA
 *        translation units are compiled with wider instruction sets and must not share inline
 *        library code with the rest of the program.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_KERNEL_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_KERNEL_H

#include <cstdint>

#include "data_type.h"
#include "ema_adam_params.h"

namespace ascend_ema_adam::native {

/** One update: five inputs (grad, var, m, v, s) and four outputs (var, m, v, s) of one dtype.
 *  An output either is its input (in place) or overlaps no input. */
struct ApplyFusedEmaAdamJob {
    UpdateScalars k;
    DataType dtype;
    bool streaming;  // the launch's data comes from memory, not the caches (NativeOptions::streamingBytes)
    const void* in[5];
    void* out[4];
};

/** One instruction set's loop: elements [begin, end) of a job. */
using ApplyFusedEmaAdamLoop = void (*)(const ApplyFusedEmaAdamJob& job, uint64_t begin,
                                       uint64_t end);

// Defined in apply_fused_ema_adam_native_<isa>.cpp; the AVX ones are null on other architectures.
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamAvx512();  // AVX-512 F/BW/VL + F16C: 16 lanes, masked tails
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamAvx2();    // AVX2 + F16C: 8 lanes, scalar tails
ApplyFusedEmaAdamLoop ApplyFusedEmaAdamGeneric(); // portable C++, one element at a time

}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_NATIVE_KERNEL_H
