// Out-of-line part of the AscendC CPU twin: the violation reporter, GM bounds, event pools, queue state
// machine, UB allocation, DMA block copies and the launcher.
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "kernel_operator.h"
#include "twin_launch.h"

namespace twin::detail {

using AscendC::HardEvent;
using AscendC::TBufState;
using AscendC::TPosition;

void Fail(const char* rule, const char* call, const char* fmt, ...) {
    char detail[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(detail, sizeof detail, fmt, args);
    va_end(args);
    const BlockContext* ctx = tlsBlock;
    if (ctx != nullptr) {
        std::fprintf(stderr, "ascendc-twin: [%s] %s(): %s (block %lld/%lld)\n", rule, call, detail,
                     static_cast<long long>(ctx->blockIdx), static_cast<long long>(ctx->blockNum));
    } else {
        std::fprintf(stderr, "ascendc-twin: [%s] %s(): %s (no launch)\n", rule, call, detail);
    }
    std::fflush(stderr);
    std::abort();
}

namespace {

bool Inside(const void* p, uint64_t bytes, const void* base, uint64_t baseBytes) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    return a >= b && a - b <= baseBytes && bytes <= baseBytes - (a - b);
}

const char* StateName(TBufState s) {
    switch (s) {
        case TBufState::FREE: return "FREE";
        case TBufState::OCCUPIED: return "OCCUPIED";
        case TBufState::ENQUE: return "ENQUE";
        case TBufState::DEQUE: return "DEQUE";
    }
    return "?";
}

const char* PositionName(TPosition p) {
    switch (p) {
        case TPosition::VECIN: return "VECIN";
        case TPosition::VECOUT: return "VECOUT";
        case TPosition::VECCALC: return "VECCALC";
        default: return "non-UB";
    }
}

const char* UseName(Use use) {
    switch (use) {
        case Use::VecRead: return "a vector read";
        case Use::VecWrite: return "a vector write";
        case Use::DmaIn: return "a GM->UB copy";
        case Use::DmaOut: return "a UB->GM copy";
        case Use::Scalar: return "a scalar access";
    }
    return "?";
}

}  // namespace

void CheckGm(BlockContext& ctx, const char* call, const void* origin, uint64_t originBytes, const void* p,
             uint64_t bytes) {
    if (originBytes != 0 && !Inside(p, bytes, origin, originBytes)) {
        const long long off = static_cast<long long>(reinterpret_cast<const uint8_t*>(p) -
                                                     static_cast<const uint8_t*>(origin));
        Fail("GM_BOUNDS", call, "bytes [%lld, %lld) are outside the GlobalTensor's %llu B set by SetGlobalBuffer", off,
             off + static_cast<long long>(bytes), static_cast<unsigned long long>(originBytes));
    }
    // Among the regions starting at or below p, the one reaching furthest covers [p, p + bytes) if any does.
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const GmRegion* first = ctx.regions;
    const GmRegion* last = ctx.regions + ctx.regionCount;
    const size_t below = static_cast<size_t>(
        std::upper_bound(first, last, a, [](uintptr_t x, const GmRegion& r) { return x < reinterpret_cast<uintptr_t>(r.base); }) -
        first);
    if (below > 0 && ctx.regionEnd[below - 1] >= a && bytes <= ctx.regionEnd[below - 1] - a) return;
    const GmRegion* nearest = below > 0 ? &ctx.regions[below - 1] : nullptr;  // starts closest below p: the message
    if (nearest == nullptr) {
        Fail("GM_BOUNDS", call, "%llu B at %p lie below every GM region registered for the launch (%zu regions)",
             static_cast<unsigned long long>(bytes), p, ctx.regionCount);
    }
    const long long off = static_cast<const uint8_t*>(p) - static_cast<const uint8_t*>(nearest->base);
    Fail("GM_BOUNDS", call,
         "%llu B are outside every registered GM region: they are bytes [%lld, %lld) of the nearest, which holds %zu B",
         static_cast<unsigned long long>(bytes), off, off + static_cast<long long>(bytes), nearest->bytes);
}

const char* EventName(HardEvent evt) {
    static const char* const kNames[] = {
        "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",    "M_MTE1",    "MTE2_V",   "V_MTE2",   "MTE3_V",   "V_MTE3",   "M_V",
        "V_M",       "V_V",       "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",   "MTE2_M",   "M_MTE2",   "V_MTE1",   "M_FIX",
        "FIX_M",     "MTE3_MTE2", "MTE2_MTE3", "S_V",       "V_S",      "S_MTE2",   "MTE2_S",   "S_MTE3",   "MTE3_S",
        "MTE2_FIX",  "FIX_MTE2",  "FIX_S",     "M_S",       "FIX_MTE3", "MTE1_FIX", "FIX_MTE1", "FIX_FIX",
    };
    static_assert(sizeof kNames / sizeof kNames[0] == kHardEvents, "one name per HardEvent");
    const size_t i = static_cast<size_t>(evt);
    return i < kHardEvents ? kNames[i] : "MAX";
}

const char* RoundModeName(AscendC::RoundMode mode) {
    static const char* const kNames[] = {"CAST_NONE",  "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                                         "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    const size_t i = static_cast<size_t>(mode);
    if (mode == AscendC::RoundMode::UNKNOWN) return "RoundMode::UNKNOWN";
    return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "an out-of-range RoundMode";
}

// ---- events --------------------------------------------------------------------------------------------

namespace {

size_t EventIndex(HardEvent evt, const char* call) {
    const size_t i = static_cast<size_t>(evt);
    if (i >= kHardEvents) Fail("EVENT_ID", call, "HardEvent::MAX is not an event");
    return i;
}

void CheckId(HardEvent evt, int32_t id, const char* call) {
    if (id < 0 || id >= kEventIds) {
        Fail("EVENT_ID", call, "event ID %d for %s is outside 0-%d", id, EventName(evt), kEventIds - 1);
    }
}

int LowestFreeId(const BlockContext& ctx, size_t e) {
    for (int id = 0; id < kEventIds; ++id) {
        if ((ctx.idAllocated[e] & (1u << id)) == 0) return id;
    }
    return -1;
}

[[noreturn]] void PoolExhausted(const BlockContext& ctx, size_t e, const char* call) {
    Fail("EVENT_ID", call, "all %d IDs of %s are allocated (%d held by freed or enqueued queue buffers)", kEventIds,
         EventName(static_cast<HardEvent>(e)), __builtin_popcount(ctx.queueHeld[e]));
}

}  // namespace

AscendC::TEventID AllocEventId(BlockContext& ctx, HardEvent evt, const char* call) {
    const size_t e = EventIndex(evt, call);
    const int id = LowestFreeId(ctx, e);
    if (id < 0) PoolExhausted(ctx, e, call);
    ctx.idAllocated[e] |= static_cast<uint8_t>(1u << id);
    return static_cast<AscendC::TEventID>(id);
}

void ReleaseEventId(BlockContext& ctx, HardEvent evt, int32_t id, const char* call) {
    const size_t e = EventIndex(evt, call);
    CheckId(evt, id, call);
    if ((ctx.idAllocated[e] & (1u << id)) == 0) {
        Fail("EVENT_ID", call, "event ID %d of %s is not allocated", id, EventName(evt));
    }
    ctx.idAllocated[e] &= static_cast<uint8_t>(~(1u << id));
}

AscendC::TEventID FetchEventId(BlockContext& ctx, HardEvent evt, const char* call) {
    const size_t e = EventIndex(evt, call);
    const int id = LowestFreeId(ctx, e);
    if (id < 0) PoolExhausted(ctx, e, call);
    return static_cast<AscendC::TEventID>(id);
}

void SetFlagId(BlockContext& ctx, HardEvent evt, int32_t id, bool byQueue, const char* call) {
    const size_t e = EventIndex(evt, call);
    CheckId(evt, id, call);
    const uint8_t bit = static_cast<uint8_t>(1u << id);
    if (ctx.flagSet[e] & bit) {
        Fail("EVENT_PAIR", call, "SetFlag<%s>(%d) while the previous SetFlag on it is still unwaited%s", EventName(evt),
             id, (ctx.queueHeld[e] & bit) ? " (a queue buffer holds this ID)" : "");
    }
    ctx.flagSet[e] |= bit;
    if (byQueue) ctx.queueHeld[e] |= bit;
}

void WaitFlagId(BlockContext& ctx, HardEvent evt, int32_t id, const char* call) {
    const size_t e = EventIndex(evt, call);
    CheckId(evt, id, call);
    const uint8_t bit = static_cast<uint8_t>(1u << id);
    if ((ctx.flagSet[e] & bit) == 0) {
        Fail("EVENT_PAIR", call, "WaitFlag<%s>(%d) has no pending SetFlag", EventName(evt), id);
    }
    ctx.flagSet[e] &= static_cast<uint8_t>(~bit);
    ctx.queueHeld[e] &= static_cast<uint8_t>(~bit);
}

// ---- LocalTensor operands ------------------------------------------------------------------------------

void ReportOperand(BlockContext& ctx, const char* call, const char* name, const void* addr, uint64_t sizeElems,
                   uint64_t needElems, const QueBuf* buf, uint32_t gen, Use use) {
    if (addr == nullptr) Fail("UB_RANGE", call, "%s is an empty LocalTensor (never allocated)", name);
    const long long offset = static_cast<const uint8_t*>(addr) - ctx.ub;
    if ((reinterpret_cast<uintptr_t>(addr) & 31u) != 0) {
        Fail("UB_ALIGN", call, "%s starts at UB offset %lld, not 32-B aligned", name, offset);
    }
    if (needElems > sizeElems) {
        Fail("UB_RANGE", call, "%s needs %llu elements but holds %llu (UB offset %lld)", name,
             static_cast<unsigned long long>(needElems), static_cast<unsigned long long>(sizeElems), offset);
    }
    if (buf->gen != gen) {
        Fail("QUE_HAZARD", call, "%s belongs to a %s queue buffer that was freed after this tensor was taken", name,
             PositionName(buf->pos));
    }
    const char* need = "";
    if (buf->state == TBufState::FREE) need = "; the buffer is not allocated";
    else if (buf->state == TBufState::ENQUE) need = "; it is in flight until DeQue";
    else if (use == Use::DmaIn) need = "; needs OCCUPIED (AllocTensor, before EnQue)";
    else if (use == Use::VecRead) need = "; needs DEQUE (EnQue + DeQue after the copy-in)";
    else if (use == Use::VecWrite) need = "; needs OCCUPIED (write before EnQue)";
    else if (use == Use::DmaOut) need = "; needs DEQUE (EnQue + DeQue after the compute)";
    Fail("QUE_HAZARD", call, "%s is a %s queue buffer in state %s, not allowed for %s%s", name, PositionName(buf->pos),
         StateName(buf->state), UseName(use), need);
}

// ---- queues ----------------------------------------------------------------------------------------------

namespace {

// The implicit events of a queue: EnQue->DeQue and FreeTensor->AllocTensor edges.
bool QueueEvents(TPosition pos, HardEvent& enque, HardEvent& free) {
    if (pos == TPosition::VECIN) {
        enque = HardEvent::MTE2_V;
        free = HardEvent::V_MTE2;
        return true;
    }
    if (pos == TPosition::VECOUT) {
        enque = HardEvent::V_MTE3;
        free = HardEvent::MTE3_V;
        return true;
    }
    return false;
}

void HoldEvent(BlockContext& ctx, QueBuf& b, HardEvent evt, const char* call) {
    b.heldId = AllocEventId(ctx, evt, call);
    b.heldEvt = evt;
    SetFlagId(ctx, evt, b.heldId, true, call);
}

void ReleaseHeld(BlockContext& ctx, QueBuf& b, const char* call) {
    if (b.heldId < 0) return;
    WaitFlagId(ctx, b.heldEvt, b.heldId, call);
    ReleaseEventId(ctx, b.heldEvt, b.heldId, call);
    b.heldId = -1;
}

void RequirePipe(BlockContext& ctx, const char* call) {
    if (ctx.pipe == nullptr) Fail("QUE_STATE", call, "no TPipe is alive in this block");
    if (ctx.pipeDestroyed) Fail("QUE_STATE", call, "the TPipe was destroyed");
}

}  // namespace

void QueueCore::Init(TPosition pos, int32_t depth, uint8_t num, uint32_t len, uint32_t offset) {
    for (uint8_t i = 0; i < num; ++i) {
        bufs_[i] = QueBuf{};
        bufs_[i].offset = offset + i * len;
        bufs_[i].pos = pos;
    }
    num_ = num;
    len_ = len;
    depth_ = depth;
    pos_ = pos;
    init_ = true;
}

QueBuf* QueueCore::Alloc(BlockContext& ctx) {
    const char* call = "TQue::AllocTensor";
    RequirePipe(ctx, call);
    if (!init_) Fail("QUE_STATE", call, "queue used before TPipe::InitBuffer");
    for (uint8_t k = 0; k < num_; ++k) {
        QueBuf& b = bufs_[(cursor_ + k) % num_];
        if (b.state != TBufState::FREE) continue;
        cursor_ = static_cast<uint8_t>((cursor_ + k + 1) % num_);
        ReleaseHeld(ctx, b, call);
        b.state = TBufState::OCCUPIED;
        return &b;
    }
    Fail("QUE_STATE", call, "no FREE buffer: all %u buffers of the %s queue are allocated (FreeTensor first)", num_,
         PositionName(pos_));
}

void QueueCore::EnQue(BlockContext& ctx, QueBuf* buf, uint32_t gen) {
    const char* call = "TQue::EnQue";
    RequirePipe(ctx, call);
    if (buf == nullptr || buf < bufs_ || buf >= bufs_ + num_) {
        Fail("QUE_STATE", call, "the tensor was not allocated from this queue");
    }
    if (buf->gen != gen) Fail("QUE_STATE", call, "the tensor's buffer was freed since the tensor was taken");
    if (buf->state != TBufState::OCCUPIED && buf->state != TBufState::DEQUE) {
        Fail("QUE_STATE", call, "buffer state is %s; EnQue needs OCCUPIED or DEQUE", StateName(buf->state));
    }
    if (used_ >= depth_) {
        Fail("QUE_DEPTH", call, "%u tensors already enqueued in a %s queue of depth %d (DeQue first)", used_,
             PositionName(pos_), depth_);
    }
    HardEvent enq, freeEvt;
    if (QueueEvents(pos_, enq, freeEvt)) HoldEvent(ctx, *buf, enq, call);
    fifo_[(head_ + used_) % kMaxQueueBuffers] = static_cast<uint8_t>(buf - bufs_);
    ++used_;
    buf->state = TBufState::ENQUE;
}

QueBuf* QueueCore::DeQue(BlockContext& ctx) {
    const char* call = "TQue::DeQue";
    RequirePipe(ctx, call);
    if (used_ == 0) Fail("QUE_STATE", call, "the %s queue has no enqueued tensor", PositionName(pos_));
    QueBuf& b = bufs_[fifo_[head_]];
    head_ = static_cast<uint8_t>((head_ + 1) % kMaxQueueBuffers);
    --used_;
    ReleaseHeld(ctx, b, call);
    b.state = TBufState::DEQUE;
    return &b;
}

void QueueCore::Free(BlockContext& ctx, QueBuf* buf, uint32_t gen) {
    const char* call = "TQue::FreeTensor";
    RequirePipe(ctx, call);
    if (buf == nullptr || buf < bufs_ || buf >= bufs_ + num_) {
        Fail("QUE_STATE", call, "the tensor was not allocated from this queue");
    }
    if (buf->gen != gen || buf->state == TBufState::FREE) Fail("QUE_STATE", call, "the buffer is already FREE");
    if (buf->state == TBufState::ENQUE) Fail("QUE_STATE", call, "the buffer is still enqueued (DeQue it first)");
    HardEvent enq, freeEvt;
    if (QueueEvents(pos_, enq, freeEvt)) HoldEvent(ctx, *buf, freeEvt, call);
    buf->state = TBufState::FREE;
    ++buf->gen;
}

// ---- TPipe -----------------------------------------------------------------------------------------------

namespace {
constexpr uint32_t kMaxPipeBuffers = 64;

// The framework waits for every flag a queue still holds when the pipe goes away.
void DrainQueueEvents(BlockContext& ctx) {
    for (size_t e = 0; e < kHardEvents; ++e) {
        ctx.flagSet[e] &= static_cast<uint8_t>(~ctx.queueHeld[e]);
        ctx.idAllocated[e] &= static_cast<uint8_t>(~ctx.queueHeld[e]);
        ctx.queueHeld[e] = 0;
    }
}
}  // namespace

void RegisterPipe(PipeState& pipe, AscendC::TPipe* self) {
    BlockContext& ctx = Block("TPipe");
    if (ctx.pipe != nullptr) Fail("BLOCK", "TPipe", "a second TPipe while another is alive (one TPipe per block)");
    ctx.pipe = self;
    ctx.pipeDestroyed = false;
    pipe.ctx = &ctx;
}

void DestroyPipe(PipeState& pipe, AscendC::TPipe* self, bool explicitDestroy) {
    BlockContext* ctx = pipe.ctx;
    if (ctx == nullptr || ctx->pipe != self) return;
    if (!ctx->pipeDestroyed) DrainQueueEvents(*ctx);
    if (explicitDestroy) {
        ctx->pipeDestroyed = true;
    } else {
        ctx->pipe = nullptr;
        ctx->pipeDestroyed = false;
    }
}

uint32_t ReserveUb(PipeState& pipe, uint8_t num, uint32_t& len, const char* call) {
    BlockContext& ctx = *pipe.ctx;
    if (ctx.pipeDestroyed) Fail("QUE_STATE", call, "the TPipe was destroyed");
    if (num < 1 || num > kMaxQueueBuffers) Fail("UB_BUDGET", call, "num %u is outside 1-%d", num, kMaxQueueBuffers);
    if (len == 0) Fail("UB_BUDGET", call, "len is 0");
    const uint64_t rounded = AlignUp32(len);
    if (pipe.buffers + num > kMaxPipeBuffers) {
        Fail("UB_BUDGET", call, "%u buffers already allocated; %u more exceed the %u a TPipe holds", pipe.buffers, num,
             kMaxPipeBuffers);
    }
    const uint64_t end = pipe.cursor + rounded * num;
    if (end > ctx.ubBytes) {
        Fail("UB_BUDGET", call, "%u x %llu B from UB offset %u ends at %llu B, beyond the launch's UB of %u B", num,
             static_cast<unsigned long long>(rounded), pipe.cursor, static_cast<unsigned long long>(end), ctx.ubBytes);
    }
    const uint32_t offset = pipe.cursor;
    // UB holds garbage when a kernel starts: NaN in every float format. Kernels reach UB only through
    // InitBuffer, so poisoning what it hands out is the same as poisoning the arena, at the cost of what is used.
    std::memset(ctx.ub + offset, 0xFF, static_cast<size_t>(end - offset));
    pipe.cursor = static_cast<uint32_t>(end);
    pipe.buffers += num;
    len = static_cast<uint32_t>(rounded);
    ctx.counters.ubBytesUsed = std::max(ctx.counters.ubBytesUsed, pipe.cursor);
    return offset;
}

// ---- DMA -------------------------------------------------------------------------------------------------

void CopyBlocks(uint8_t* dst, const uint8_t* src, const BlockCopy& plan) {
    if (plan.srcStep == plan.blockLen && plan.dstStep == plan.blockLen) {
        std::memcpy(dst, src, plan.blockCount * plan.blockLen);
        return;
    }
    for (uint64_t i = 0; i < plan.blockCount; ++i) {
        std::memcpy(dst + i * plan.dstStep, src + i * plan.srcStep, plan.blockLen);
    }
}

void CopyBlocksPadded(uint8_t* ub, const uint8_t* gm, const BlockCopy& plan, const PadFill& pad) {
    constexpr uint8_t kPoison = 0xFF;  // NaN in every float format
    for (uint64_t i = 0; i < plan.blockCount; ++i) {
        uint8_t* block = ub + i * plan.dstStep;
        uint8_t* data = block + pad.leftBytes;
        uint8_t* right = data + plan.blockLen;
        std::memcpy(data, gm + i * plan.srcStep, plan.blockLen);
        if (pad.isPad) {
            for (uint32_t b = 0; b < pad.leftBytes; b += pad.elemBytes) std::memcpy(block + b, pad.value, pad.elemBytes);
            for (uint32_t b = 0; b < pad.rightBytes; b += pad.elemBytes) std::memcpy(right + b, pad.value, pad.elemBytes);
        } else {
            std::memset(block, kPoison, pad.leftBytes);
            std::memset(right, kPoison, pad.rightBytes);
        }
        uint8_t* tail = right + pad.rightBytes;
        std::memset(tail, kPoison, static_cast<size_t>(block + pad.ubBlockBytes - tail));
    }
}

// ---- launcher --------------------------------------------------------------------------------------------

namespace {

struct ArenaFree {
    void operator()(uint8_t* p) const { std::free(p); }
};

// One UB arena per host thread, reused across blocks and launches.
uint8_t* ThreadArena(uint32_t bytes) {
    thread_local std::unique_ptr<uint8_t, ArenaFree> arena;
    thread_local uint32_t capacity = 0;
    if (capacity < bytes) {
        const size_t rounded = (static_cast<size_t>(bytes) + 63) & ~size_t{63};
        arena.reset(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)));
        if (!arena) {
            std::fprintf(stderr, "ascendc-twin: cannot allocate a %u-B UB arena\n", bytes);
            std::abort();
        }
        capacity = bytes;
    }
    return arena.get();
}

// The launch's GM regions by base address, with the running maximum of their end addresses (CheckGm's index).
struct RegionIndex {
    std::vector<GmRegion> sorted;
    std::vector<uintptr_t> end;

    explicit RegionIndex(const std::vector<GmRegion>& regions) : sorted(regions) {
        std::stable_sort(sorted.begin(), sorted.end(), [](const GmRegion& x, const GmRegion& y) {
            return reinterpret_cast<uintptr_t>(x.base) < reinterpret_cast<uintptr_t>(y.base);
        });
        end.reserve(sorted.size());
        uintptr_t reach = 0;
        for (const GmRegion& r : sorted) {
            reach = std::max(reach, reinterpret_cast<uintptr_t>(r.base) + r.bytes);
            end.push_back(reach);
        }
    }
};

struct LaunchState {
    const LaunchConfig& cfg;
    const RegionIndex& gm;
    KernelThunk thunk;
    const void* closure;
    LaunchResult& result;
    std::atomic<uint32_t> next{0};
};

void RunBlock(LaunchState& st, uint8_t* ub, uint32_t idx) {
    BlockContext ctx;
    ctx.blockIdx = idx;
    ctx.blockNum = st.cfg.blockDim;
    ctx.tilingKey = st.cfg.tilingKey;
    ctx.ub = ub;
    ctx.ubBytes = st.cfg.ubBytes;
    ctx.saturate16 = st.cfg.overflowMode == FloatOverflowMode::Saturation;
    ctx.regions = st.gm.sorted.data();
    ctx.regionEnd = st.gm.end.data();
    ctx.regionCount = st.gm.sorted.size();

    tlsBlock = &ctx;
    st.thunk(st.closure);
    // A TPipe still alive here was leaked by the kernel; its queues' flags are the framework's, not the kernel's.
    DrainQueueEvents(ctx);
    for (size_t e = 0; e < kHardEvents; ++e) {
        for (int id = 0; id < kEventIds; ++id) {
            if (ctx.flagSet[e] & (1u << id)) {
                Fail("EVENT_PAIR", "BlockEnd", "SetFlag<%s>(%d) is still pending when the block ends",
                     EventName(static_cast<HardEvent>(e)), id);
            }
        }
    }
    tlsBlock = nullptr;
    st.result.blocks[idx] = ctx.counters;
}

void Worker(LaunchState& st) {
    uint8_t* ub = ThreadArena(st.cfg.ubBytes);
    for (;;) {
        const uint32_t idx = st.next.fetch_add(1, std::memory_order_relaxed);
        if (idx >= st.cfg.blockDim) return;
        RunBlock(st, ub, idx);
    }
}

}  // namespace

LaunchResult RunLaunch(const LaunchConfig& cfg, KernelThunk thunk, const void* closure) {
    // The caller's thread runs blocks with the thread's UB arena, so it must not be inside a block already.
    if (tlsBlock != nullptr) Fail("BLOCK", "Launch", "called from inside a kernel");
    if (cfg.blockDim < 1 || cfg.blockDim > 65535) Fail("BLOCK", "Launch", "blockDim %u is outside 1-65535", cfg.blockDim);
    if (cfg.ubBytes == 0 || cfg.ubBytes % 32 != 0) {
        Fail("BLOCK", "Launch", "ubBytes %u is not a positive multiple of 32", cfg.ubBytes);
    }
    LaunchResult result;
    result.blocks.resize(cfg.blockDim);
    const RegionIndex gm(cfg.gm);
    LaunchState st{cfg, gm, thunk, closure, result};

    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned threads = std::min<unsigned>(cfg.blockDim, cfg.threads != 0 ? cfg.threads : hw);
    std::vector<std::thread> helpers;
    helpers.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(Worker, std::ref(st));
    Worker(st);  // the caller is worker 0, so blockDim 1 never spawns a thread
    for (std::thread& h : helpers) h.join();
    return result;
}

}  // namespace twin::detail

namespace twin {

BlockCounters LaunchResult::total() const {
    BlockCounters t;
    for (const BlockCounters& b : blocks) {
        t.gmReadBytes += b.gmReadBytes;
        t.gmWriteBytes += b.gmWriteBytes;
        t.gmScalarReadBytes += b.gmScalarReadBytes;
        t.gmScalarWriteBytes += b.gmScalarWriteBytes;
        t.dmaCalls += b.dmaCalls;
        t.vectorCalls += b.vectorCalls;
        t.vectorElements += b.vectorElements;
        t.ubBytesUsed = std::max(t.ubBytesUsed, b.ubBytesUsed);
    }
    return t;
}

}  // namespace twin
