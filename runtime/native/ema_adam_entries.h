/**
 * @file ema_adam_entries.h
 * @brief The native CPU kernel every EMA-Adam operator runs: a launch of entries (a parameter with
 *        its gradient, moments, EMA, optional AMSGrad maximum and model copy; a single tensor is one
 *        entry) in ONE pool launch. The elements of all entries form one sequence cut into
 *        balanced chunks that the calling thread and the pool claim; a chunk may span several
 *        entries (no per-entry dispatch). The arithmetic is the AscendC kernels' fp32 operation
 *        order (ema_adam_native_update.h), one IEEE rounding per operation, so results are
 *        bit-identical to the kernels on the twin and to golden.emulate_entry.
 *
 * An operator's native driver (runtime/<op>/native/) reads its launch's scalars (found_inf, the
 * grad scale, step, lr and decay tensors) and folds them with the kernels' own code
 * (FoldScalars / LaunchPrologue of ema_adam_scalar.h), then hands the entries here.
 */
#ifndef ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_H
#define ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_H

#include <cstdint>
#include <vector>

#include "ema_adam_entries_loops.h"  // EmaAdamEntryTypes, EMA_ADAM_ENTRY_TYPES
#include "ema_adam_params.h"
#include "native_runtime.h"

namespace ascend_ema_adam {

/** One launch: `count` entries, entry i numels[i] contiguous elements in every array, each
 *  updated in place. Arrays of absent options (ss without the EMA, maxVs without AMSGrad, copies
 *  without model copies) may be null; every array may be null when count is 0. */
struct EmaAdamEntries {
    EmaAdamEntryTypes types;
    bool amsgrad = false;      // maxVs given
    bool ema = true;           // ss given (false: the EMA is neither read nor written)
    bool divideGrad = false;   // g / gradDivisor first (LaunchScalars', ema_adam_scalar.h)
    UpdateScalars k{};         // the launch's folded scalars (k.mode: Adam + L2 or AdamW)
    float gradDivisor = 1.0f;  // LaunchScalars': the grad scale or 1, negative to ascend
    uint32_t count = 0;
    const uint64_t* numels = nullptr;
    const void* const* grads = nullptr;
    void* const* vars = nullptr;
    void* const* ms = nullptr;
    void* const* vs = nullptr;
    void* const* ss = nullptr;
    void* const* maxVs = nullptr;
    void* const* copies = nullptr;  // written, never read
};

/**
 * Runs the update of every entry on the calling thread and the pool. Returns the threads used (0
 * when there is no element). Throws std::invalid_argument for storage types outside
 * EMA_ADAM_ENTRY_TYPES, an option without its arrays, or an unsupported isa.
 */
uint32_t RunEmaAdamEntries(const EmaAdamEntries& entries, const NativeOptions& options = {});

/** One chunk of a launch: `count` elements from element `offset` of entry `entry` on,
 *  continuing into the next entries. */
struct EmaAdamEntryChunk {
    uint32_t entry;
    uint64_t offset;
    uint64_t count;
};

/**
 * The chunks RunEmaAdamEntries hands out for entries of numels[0..count) elements on `threads`
 * threads, in order: the flat sequence of all elements cut about every NativeChunkElems(total,
 * threads) elements, each cut moved up to the next kNativeGrain boundary of its entry (or the
 * entry's end), so chunks are within one grain of each other (the last may be shorter) and no
 * two share a cache line of a 64-B aligned tensor. No empty chunk; one chunk for one thread;
 * none without elements.
 */
std::vector<EmaAdamEntryChunk> EmaAdamEntryChunks(const uint64_t* numels, uint32_t count,
                                                  uint32_t threads);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_EMA_ADAM_ENTRIES_H
