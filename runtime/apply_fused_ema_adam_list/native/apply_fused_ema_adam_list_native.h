/**
 * @file apply_fused_ema_adam_list_native.h
 * @brief The native CPU kernel of ApplyFusedEmaAdamList: a whole parameter group in ONE pool
 *        launch. The elements of all tensors form one sequence cut into balanced chunks that the
 *        calling thread and the pool claim; a chunk may span several tensors (no per-tensor
 *        dispatch). Same fp32 operation order as the AscendC list kernel and
 *        golden.emulate_entry, one IEEE rounding per operation: bit-identical results.
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_NATIVE_H
#define APPLY_FUSED_EMA_ADAM_LIST_NATIVE_H

#include <cstdint>
#include <vector>

#include "apply_fused_ema_adam_list_buffers.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "native_runtime.h"

namespace ascend_ema_adam {

/**
 * Runs the update of every entry of `buffers` (dtypes from tiling.tilingKey, scalars and flags
 * from tiling.data; the NPU core table is not used) on the calling thread and the pool. Reads
 * found_inf first: nonzero writes nothing. Returns the threads used (0 when nothing ran).
 * Throws std::invalid_argument for an unknown tiling key or an unsupported isa.
 */
uint32_t RunNativeList(const ListTilingResult& tiling, const ApplyFusedEmaAdamListBuffers& buffers,
                       const NativeOptions& options = {});

/** One chunk of a list launch: `count` elements from element `offset` of entry `tensor` on,
 *  continuing into the next entries. */
struct NativeListChunk {
    uint32_t tensor;
    uint64_t offset;
    uint64_t count;
};

/**
 * The chunks RunNativeList hands out for entries of numels[0..tensorNum) elements on `threads`
 * threads, in order: the flat sequence of all elements cut about every NativeChunkElems(total,
 * threads) elements, each cut moved up to the next kNativeGrain boundary of its entry (or the
 * entry's end), so chunks are within one grain of each other (the last may be shorter) and no
 * two share a cache line of a 64-B aligned tensor. No empty chunk; one chunk for one thread;
 * none without elements.
 */
std::vector<NativeListChunk> NativeListChunks(const uint64_t* numels, uint32_t tensorNum,
                                              uint32_t threads);

}  // namespace ascend_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_LIST_NATIVE_H
