/**
 * @file apply_fused_ema_adam8bit_list_native.h
 * @brief The native CPU kernel of ApplyFusedEmaAdam8bitList: a whole parameter group in ONE pool
 *        launch over the quantization blocks of all its entries, after the kernels' launch
 *        prologue (ema_adam_scalar.h). Per block: decode, the fp32 update in the AscendC kernels'
 *        op order, the new scales, the exact-nearest encode; bit-identical to
 *        golden8bit.emulate_entry8 on every instruction set and thread count.
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_H

#include <cstdint>
#include <vector>

#include "apply_fused_ema_adam8bit_list_buffers.h"
#include "apply_fused_ema_adam8bit_list_native_loops.h"
#include "apply_fused_ema_adam8bit_list_tiling_data.h"
#include "native_runtime.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

/**
 * Runs the update of every entry of `buffers` (storage types `dtypes`, a row of the contract;
 * scalars and flags from `tiling`, whose core table is not used) on the calling thread and the
 * pool. Reads found_inf first: nonzero writes nothing. Returns the threads used (0 when nothing
 * ran). Throws std::invalid_argument for dtypes outside the contract, buffers that do not match
 * the flags, or an unsupported isa.
 */
uint32_t RunApplyFusedEmaAdam8bitListNative(const ApplyFusedEmaAdam8bitListTilingData& tiling,
                                            const ApplyFusedEmaAdam8bitListDtypes& dtypes,
                                            const ApplyFusedEmaAdam8bitListBuffers& buffers,
                                            const NativeOptions& options = {});

/** A run of quantization blocks: `count` blocks from block `block` of entry `entry` on,
 *  continuing into the next entries. */
struct ApplyFusedEmaAdam8bitListChunk {
    uint32_t entry;
    uint64_t block;
    uint64_t count;
};

/** The chunks RunApplyFusedEmaAdam8bitListNative hands out for entries of numels[0..count) elements
 *  on `threads` threads, in order: the blocks of all entries cut into about 16 runs per thread
 *  (whole blocks, so a block's scale and codes are one thread's). */
std::vector<ApplyFusedEmaAdam8bitListChunk> ApplyFusedEmaAdam8bitListNativeChunks(
    const uint64_t* numels, uint32_t count, uint32_t threads);

/** thresholds[k] (k < 255) of a 256-entry map, as the kernels compute them (the codebook header's
 *  BuildApplyFusedEmaAdam8bitListEncodeThresholds). */
void ApplyFusedEmaAdam8bitListEncodeThresholds(const float* map, float* thresholds);

/** The encode tables a 256-entry map gets (ApplyFusedEmaAdam8bitListEncodeTable and its byte
 *  planes, loops_h): whether each exists, and the table's entries. */
struct ApplyFusedEmaAdam8bitListEncodeTables {
    bool table;   // the one-gather table
    bool unit;    // it covers [-1, 1]
    bool planes;  // its two levels of byte planes (the VBMI loops' kPlanes)
    uint32_t tableEntries;
};
ApplyFusedEmaAdam8bitListEncodeTables ApplyFusedEmaAdam8bitListEncodeTablesOf(const float* map);

/** Whether a launch on `isa` with `options` decodes by the maps' byte planes (the AVX-512 VBMI
 *  loops, on a CPU with VBMI, unless options.bytePlanes is false) rather than by gathers (the
 *  AVX-512 loops without VBMI, AVX2). */
bool ApplyFusedEmaAdam8bitListBytePlaneDecode(Isa isa, const NativeOptions& options);

/** How a launch on `isa` with `options` encodes (kTable, kPlanes or kSearch): as
 *  options.encode8bit says; kAuto: as ASCEND_EMA_ADAM_8BIT_ENCODE ("table", "planes" or "search")
 *  says if set and not empty, else on AVX-512 the fastest on this CPU, measured by the first
 *  launch with tables for both maps (the table until then), elsewhere the table (the search
 *  gathers or loads a lane per level there). Throws std::invalid_argument if the variable says
 *  anything else, or for kPlanes where the loops are not the VBMI ones. */
Adam8bitEncode ApplyFusedEmaAdam8bitListEncodeOf(Isa isa, const NativeOptions& options);

/** The AVX-512 loops' measured encode for a decode (ApplyFusedEmaAdam8bitListEncodeOf): kAuto
 *  while not measured in this process. */
Adam8bitEncode ApplyFusedEmaAdam8bitListMeasuredEncode(Isa isa, bool bytePlanes);

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_NATIVE_H
