/**
 * @file platform.h
 * @brief What every operator's host code shares: the dtypes (data_type.h), CANN's dtype names, the
 *        target platforms (Atlas A2/A3 presets and the CPU "device"), and the tiling arithmetic of
 *        an elementwise vector kernel: 32-byte blocks split over cores, unified-buffer chunks.
 *        Pure C++, no CANN dependency.
 */
#ifndef ASCEND_EMA_ADAM_PLATFORM_H
#define ASCEND_EMA_ADAM_PLATFORM_H

#include <cstdint>
#include <string>
#include <vector>

#include "data_type.h"

namespace ascend_ema_adam {

/**
 * The enumerator name of an aclDataType value ("ACL_FLOAT16"), "unknown aclDataType" for a value
 * it does not define. ge::DataType uses the same values for every type the operators accept.
 */
const char* CannDataTypeName(int32_t cannCode);

/** What the tiling needs to know about the target. */
struct Platform {
    std::string name;
    uint32_t vectorCoreNum;  // AI vector cores (AIV) on the NPU; hardware threads on the CPU
    uint32_t ubSize;         // unified-buffer bytes per core
    double hbmGBps;          // nominal memory bandwidth, only for projections (0: unknown)
};

/** Atlas A2/A3 presets (AIV cores, UB per core, nominal HBM bandwidth) and the CPU. */
std::vector<Platform> PlatformPresets();
/** Finds a preset by name ("cpu", "Ascend910B2", ...); throws std::invalid_argument. */
Platform FindPlatform(const std::string& name);
/**
 * The CPU "device": one block per hardware thread and a 192 KiB UB, the device's own size, so the
 * twin runs the device's chunk sizes; a block's whole UB (inputs, outputs, work buffers) then
 * stays inside the per-core L2 of any current x86/Arm server core.
 */
Platform CpuPlatform();

// ---- tiling arithmetic shared by the elementwise kernels ---------------------------------------

/** The DMA and unified-buffer granule: every UB operand starts on a 32-byte boundary. */
constexpr uint32_t kBlockBytes = 32;

/** Buffers per copy-in / copy-out queue of every EMA-Adam kernel: 2 = double buffering (the load
 *  of chunk i+1 and the store of chunk i-1 overlap the compute of chunk i). */
constexpr uint32_t kBufferNum = 2;

/** Elements of `dtype` in one 32-byte block. */
constexpr uint32_t BlockElems(DataType dtype) { return kBlockBytes / DataTypeSize(dtype); }

/**
 * `blocks` blocks over at most `cores` cores, balanced to one block: every used core owns
 * blocksPerCore blocks and the last bigCores of them one more (the kernels' CoreElementRange).
 */
struct BlockSplit {
    uint64_t blocksPerCore = 0;
    uint32_t usedCores = 0;  // min(cores, blocks): 0 for nothing to do
    uint32_t bigCores = 0;
};
BlockSplit SplitBlocks(uint64_t blocks, uint32_t cores);

/**
 * Elements per unified-buffer chunk: the largest multiple of alignElems whose bytesPerElem bytes
 * each fit ubBytes, capped at capElems (a multiple of alignElems: small work allocates less UB).
 * 0 if not even one block fits.
 */
uint32_t ChunkElems(uint32_t ubBytes, uint32_t bytesPerElem, uint32_t alignElems,
                    uint64_t capElems);

/**
 * The chunk of a launch split as `split` (blocks of alignElems elements): ChunkElems capped at the
 * largest core's share, since no core needs a chunk longer than its own range (small launches
 * allocate less UB); 0 when no core is used.
 */
uint32_t SplitChunkElems(const BlockSplit& split, uint32_t ubBytes, uint32_t bytesPerElem,
                         uint32_t alignElems);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_PLATFORM_H
