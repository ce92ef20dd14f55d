/**
 * @file twin_context.h
 * @brief Per-block execution context of the CPU twin and the rule-violation reporter.
 *
 * The launcher (twin_launch.h) runs each block on a host thread and points a thread-local pointer at
 * that block's context: block index/num, tiling key, GM regions, the block's UB arena, its event and
 * pipe bookkeeping and its traffic counters. Every AscendC call of the twin reads it from there, so
 * blocks never share state and concurrent launches never see each other.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_CONTEXT_H
#define ASCEND_EMA_ADAM_TWIN_CONTEXT_H

#include <cstddef>
#include <cstdint>

#include "twin_types.h"

namespace AscendC {
class TPipe;
}

namespace twin {

// A host allocation the kernel may touch through GlobalTensor or the tiling pointer.
struct GmRegion {
    const void* base;
    size_t bytes;
};

struct BlockCounters {
    uint64_t gmReadBytes = 0, gmWriteBytes = 0;              // DMA (DataCopy/DataCopyPad) bytes moved
    uint64_t gmScalarReadBytes = 0, gmScalarWriteBytes = 0;  // GlobalTensor GetValue/SetValue
    uint64_t dmaCalls = 0, vectorCalls = 0, vectorElements = 0;
    uint32_t ubBytesUsed = 0;                                // UB bytes handed out by TPipe::InitBuffer
};

namespace detail {

constexpr int kEventIds = 8;  // event IDs 0-7 per HardEvent on A2/A3
constexpr size_t kHardEvents = static_cast<size_t>(AscendC::HardEvent::MAX);

struct BlockContext {
    int64_t blockIdx = 0;
    int64_t blockNum = 1;
    uint64_t tilingKey = 0;
    uint8_t* ub = nullptr;  // 64-B aligned arena of ubBytes; InitBuffer poisons what it hands out
    uint32_t ubBytes = 0;
    bool saturate16 = false;  // CTRL[48] clear (FloatOverflowMode::Saturation): half/bf16 results saturate
    // The launch's GM regions sorted by base address; regionEnd[i] is the largest end address of
    // regions[0..i], so CheckGm finds a covering region by binary search (a list launch registers
    // thousands of tensors).
    const GmRegion* regions = nullptr;
    const uintptr_t* regionEnd = nullptr;
    size_t regionCount = 0;
    BlockCounters counters;

    AscendC::TPipe* pipe = nullptr;  // the block's live TPipe
    bool pipeDestroyed = false;      // TPipe::Destroy() was called

    // One bit per event ID, per HardEvent.
    uint8_t idAllocated[kHardEvents] = {};  // AllocEventID (by the kernel or by a queue)
    uint8_t flagSet[kHardEvents] = {};      // SetFlag not yet matched by WaitFlag
    uint8_t queueHeld[kHardEvents] = {};    // the pending flag belongs to a queue buffer (drained by TPipe)
};

inline thread_local BlockContext* tlsBlock = nullptr;

// Prints "ascendc-twin: [RULE] Call(): detail (block i/n)" to stderr and aborts.
[[noreturn]] void Fail(const char* rule, const char* call, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// The current block, or a BLOCK violation when the kernel API is used outside a launch.
inline BlockContext& Block(const char* call) {
    BlockContext* ctx = tlsBlock;
    if (ctx == nullptr) Fail("BLOCK", call, "AscendC kernel API used outside a twin::Launch");
    return *ctx;
}

// GM_BOUNDS: [p, p + bytes) must lie inside the tensor's own range [origin, origin + originBytes) when that
// is known (originBytes > 0), and inside one GM region registered for the launch.
void CheckGm(BlockContext& ctx, const char* call, const void* origin, uint64_t originBytes, const void* p,
             uint64_t bytes);

const char* EventName(AscendC::HardEvent evt);

// Event-ID pool and flag table shared by the kernel's SetFlag/WaitFlag and the queues' implicit events.
AscendC::TEventID AllocEventId(BlockContext& ctx, AscendC::HardEvent evt, const char* call);
void ReleaseEventId(BlockContext& ctx, AscendC::HardEvent evt, int32_t id, const char* call);
AscendC::TEventID FetchEventId(BlockContext& ctx, AscendC::HardEvent evt, const char* call);
void SetFlagId(BlockContext& ctx, AscendC::HardEvent evt, int32_t id, bool byQueue, const char* call);
void WaitFlagId(BlockContext& ctx, AscendC::HardEvent evt, int32_t id, const char* call);

}  // namespace detail
}  // namespace twin

#endif  // ASCEND_EMA_ADAM_TWIN_CONTEXT_H
