/**
 * @file ema_adam_entries_loops.h
 * @brief Internal interface between the EMA-Adam entries driver (ema_adam_entries.cpp) and its
 *        loops per instruction set (ema_adam_entries_{avx512,avx2,neon,generic}.cpp), and the storage
 *        types those loops are compiled for. Plain structs and constants only: the loop files are
 *        compiled for other instruction sets (native_simd.h says why nothing else may be shared).
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_LOOPS_H
#define ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_LOOPS_H

#include <cstdint>

#include "data_type.h"
#include "ema_adam_params.h"

namespace ascend_ema_adam {

/** The storage types of a launch's entries (every entry of a list has its list's type). */
struct EmaAdamEntryTypes {
    DataType param;                      // P: the updated parameter (fp32 master with copies)
    DataType state;                      // S: m, v, the EMA and AMSGrad's max_v
    DataType grad;                       // G
    bool hasCopy = false;                // model copies written from the updated parameter
    DataType copy = DataType::kFloat16;  // C, when hasCopy
};

// The storage types of the tokens below.
constexpr DataType kEntryDtype_FP32 = DataType::kFloat32;
constexpr DataType kEntryDtype_FP16 = DataType::kFloat16;
constexpr DataType kEntryDtype_BF16 = DataType::kBFloat16;
constexpr DataType kEntryDtype_NONE = EmaAdamEntryTypes{}.copy;
constexpr bool kEntryHasCopy_FP16 = true;
constexpr bool kEntryHasCopy_BF16 = true;
constexpr bool kEntryHasCopy_NONE = false;

/**
 * The storage-type rows the loops are compiled for, X(P, S, G, C) with the dtypes as tokens FP32,
 * FP16, BF16 (C: NONE without model copies): a 16-bit parameter with state and gradient each in
 * its own type or fp32; an fp32 parameter with fp32 state, alone or the master of a 16-bit model
 * copy whose gradient is fp32 or the copy's type. Every row is compiled for every mode, gradient
 * prologue, AMSGrad, EMA and streaming choice (32 loops a row), so a row costs compile time: an
 * operator's native driver holds its dtype contract to this table with HasEmaAdamEntryLoops.
 */
#define EMA_ADAM_ENTRY_TYPES(X)   \
    X(FP32, FP32, FP32, NONE)     \
    X(FP32, FP32, FP16, FP16)     \
    X(FP32, FP32, FP32, FP16)     \
    X(FP32, FP32, BF16, BF16)     \
    X(FP32, FP32, FP32, BF16)     \
    X(FP16, FP16, FP16, NONE)     \
    X(FP16, FP16, FP32, NONE)     \
    X(FP16, FP32, FP16, NONE)     \
    X(FP16, FP32, FP32, NONE)     \
    X(BF16, BF16, BF16, NONE)     \
    X(BF16, BF16, FP32, NONE)     \
    X(BF16, FP32, BF16, NONE)     \
    X(BF16, FP32, FP32, NONE)

/** Whether the loops are compiled for `t` (a row of EMA_ADAM_ENTRY_TYPES). For static_assert. */
constexpr bool HasEmaAdamEntryLoops(const EmaAdamEntryTypes& t)
{
#define AEA_ENTRY_ROW_MATCHES(P, S, G, C)                                                       \
    if (t.param == kEntryDtype_##P && t.state == kEntryDtype_##S && t.grad == kEntryDtype_##G && \
        t.hasCopy == kEntryHasCopy_##C && (!t.hasCopy || t.copy == kEntryDtype_##C)) {          \
        return true;                                                                            \
    }
    EMA_ADAM_ENTRY_TYPES(AEA_ENTRY_ROW_MATCHES)
#undef AEA_ENTRY_ROW_MATCHES
    return false;
}

namespace native {

/** What one launch's loop is compiled for: the storage types and the options. */
struct EntryLoopShape {
    EmaAdamEntryTypes types;
    uint32_t mode;      // 0: Adam + L2; 1: AdamW
    uint32_t prologue;  // native::Prologue: 0 none, 1 divide by gradDivisor
    bool amsgrad;       // max_vs given
    bool ema;           // ss given (false: the EMA is neither read nor written)
    bool streaming;     // the launch's data comes from memory, not the caches
};

/** One launch: every entry updated in place (entry i has numels[i] elements in every array). */
struct EntriesJob {
    UpdateScalars k;
    float gradDivisor;  // prologue 1: LaunchScalars' (the grad scale or 1, negative to ascend)
    const uint64_t* numels;
    const void* const* grads;
    void* const* vars;
    void* const* ms;
    void* const* vs;
    void* const* ss;      // the EMA only
    void* const* maxVs;   // AMSGrad only
    void* const* copies;  // model copies only
};

/** One instruction set's loop for one shape: `count` elements of the launch's flat sequence,
 *  starting at element `offset` of entry `entry` and continuing into the next entries. */
using EntriesLoop = void (*)(const EntriesJob& job, uint32_t entry, uint64_t offset,
                             uint64_t count);

// Defined in ema_adam_entries_<isa>.cpp: the loop for `shape`, null for storage types outside
// EMA_ADAM_ENTRY_TYPES or (AVX) a build for another architecture.
EntriesLoop EmaAdamEntriesAvx512(const EntryLoopShape& shape);
EntriesLoop EmaAdamEntriesAvx2(const EntryLoopShape& shape);
EntriesLoop EmaAdamEntriesNeon(const EntryLoopShape& shape);
EntriesLoop EmaAdamEntriesGeneric(const EntryLoopShape& shape);

}  // namespace native
}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_LOOPS_H
