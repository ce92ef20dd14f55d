/**
 * @file twin_pipe.h
 * @brief TPipe, TQue, TBuf and the synchronisation calls (SetFlag/WaitFlag/PipeBarrier) of the CPU twin.
 *
 * UB is bump-allocated from offset 0 of the block's arena exactly like upstream (lengths rounded up to
 * 32 B). Queues keep the upstream buffer state machine FREE -> OCCUPIED -> ENQUE -> DEQUE -> FREE and the
 * implicit events it raises (VECIN: EnQue sets MTE2_V, FreeTensor sets V_MTE2; VECOUT: V_MTE3, MTE3_V),
 * drawn from the same 8-ID pools as the kernel's own AllocEventID, so pool exhaustion and ID clashes
 * surface as they would on the device.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_PIPE_H
#define ASCEND_EMA_ADAM_TWIN_PIPE_H

#include <cstdint>

#include "twin_context.h"
#include "twin_tensor.h"
#include "twin_types.h"

namespace twin::detail {

constexpr int kMaxQueueBuffers = 64;  // QBUF_MAX_LEN: buffers per queue and per TPipe

// Non-template core of a TQue; the template only adds the element type to the tensors it hands out.
class QueueCore {
public:
    void Init(AscendC::TPosition pos, int32_t depth, uint8_t num, uint32_t len, uint32_t offset);
    bool Initialized() const { return init_; }
    QueBuf* Alloc(BlockContext& ctx);
    void EnQue(BlockContext& ctx, QueBuf* buf, uint32_t gen);
    QueBuf* DeQue(BlockContext& ctx);
    void Free(BlockContext& ctx, QueBuf* buf, uint32_t gen);
    uint32_t Len() const { return len_; }

private:
    QueBuf bufs_[kMaxQueueBuffers];
    uint8_t fifo_[kMaxQueueBuffers] = {};  // enqueued buffer indices, oldest at head_
    uint8_t num_ = 0;
    uint8_t cursor_ = 0;  // round-robin start for AllocTensor
    uint8_t head_ = 0;
    uint8_t used_ = 0;    // tensors currently enqueued
    int32_t depth_ = 0;
    uint32_t len_ = 0;
    AscendC::TPosition pos_ = AscendC::TPosition::VECCALC;
    bool init_ = false;
};

// The UB allocator and buffer count of one TPipe.
struct PipeState {
    BlockContext* ctx = nullptr;
    uint32_t cursor = 0;   // running end of the allocated UB, bytes
    uint32_t buffers = 0;  // buffers handed out so far (at most 64)
};

// UB_BUDGET checks for num buffers of len bytes; returns the UB offset of the first one and the rounded len.
uint32_t ReserveUb(PipeState& pipe, uint8_t num, uint32_t& len, const char* call);
void RegisterPipe(PipeState& pipe, AscendC::TPipe* self);
void DestroyPipe(PipeState& pipe, AscendC::TPipe* self, bool explicitDestroy);

}  // namespace twin::detail

namespace AscendC {

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue {
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC,
                  "the twin models UB queues only (VECIN, VECOUT, VECCALC)");

public:
    TQue() = default;
    TQue(const TQue&) = delete;
    TQue& operator=(const TQue&) = delete;

    template <class T>
    LocalTensor<T> AllocTensor() {
        twin::detail::BlockContext& ctx = twin::detail::Block("TQue::AllocTensor");
        twin::detail::QueBuf* buf = core_.Alloc(ctx);
        return twin::detail::TensorAccess::Make<T>(reinterpret_cast<T*>(ctx.ub + buf->offset), core_.Len(), buf);
    }
    template <class T>
    bool EnQue(const LocalTensor<T>& tensor) {
        twin::detail::BlockContext& ctx = twin::detail::Block("TQue::EnQue");
        core_.EnQue(ctx, twin::detail::TensorAccess::Buf(tensor), twin::detail::TensorAccess::Gen(tensor));
        return true;
    }
    template <class T>
    LocalTensor<T> DeQue() {
        twin::detail::BlockContext& ctx = twin::detail::Block("TQue::DeQue");
        twin::detail::QueBuf* buf = core_.DeQue(ctx);
        return twin::detail::TensorAccess::Make<T>(reinterpret_cast<T*>(ctx.ub + buf->offset), core_.Len(), buf);
    }
    template <class T>
    void FreeTensor(LocalTensor<T>& tensor) {
        twin::detail::BlockContext& ctx = twin::detail::Block("TQue::FreeTensor");
        core_.Free(ctx, twin::detail::TensorAccess::Buf(tensor), twin::detail::TensorAccess::Gen(tensor));
    }

private:
    friend class TPipe;
    twin::detail::QueueCore core_;
};

// Plain UB scratch without queue semantics: the kernel orders its users itself (unchecked by QUE_HAZARD).
template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    TBuf() = default;
    TBuf(const TBuf&) = delete;
    TBuf& operator=(const TBuf&) = delete;

    template <class T>
    LocalTensor<T> Get() {
        return Slice<T>("TBuf::Get", 0, len_);
    }
    // len in elements; len * sizeof(T) must be a positive multiple of 32 B that fits the buffer.
    template <class T>
    LocalTensor<T> Get(uint32_t len) {
        const uint64_t bytes = static_cast<uint64_t>(len) * sizeof(T);
        if (len == 0 || bytes % 32 != 0) {
            twin::detail::Fail("UB_RANGE", "TBuf::Get", "len %u x %zu B = %llu B is not a positive multiple of 32 B", len,
                               sizeof(T), static_cast<unsigned long long>(bytes));
        }
        return Slice<T>("TBuf::Get", 0, bytes);
    }
    // size elements starting bufOffset bytes into the buffer.
    template <class T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        if (bufOffset % 32 != 0) {
            twin::detail::Fail("UB_ALIGN", "TBuf::GetWithOffset", "bufOffset %u B is not a multiple of 32 B", bufOffset);
        }
        return Slice<T>("TBuf::GetWithOffset", bufOffset, static_cast<uint64_t>(size) * sizeof(T));
    }

private:
    friend class TPipe;

    template <class T>
    LocalTensor<T> Slice(const char* call, uint64_t offset, uint64_t bytes) {
        twin::detail::BlockContext& ctx = twin::detail::Block(call);
        if (!init_) twin::detail::Fail("QUE_STATE", call, "TBuf used before TPipe::InitBuffer");
        if (offset + bytes > len_) {
            twin::detail::Fail("UB_RANGE", call, "bytes [%llu, %llu) exceed the %u B buffer",
                               static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset + bytes),
                               len_);
        }
        return twin::detail::TensorAccess::Make<T>(reinterpret_cast<T*>(ctx.ub + offset_ + offset),
                                                   static_cast<uint32_t>(bytes), nullptr);
    }

    uint32_t offset_ = 0;
    uint32_t len_ = 0;
    bool init_ = false;
};

// One per block, constructed inside the kernel. Owns the UB layout and the event-ID pools.
class TPipe {
public:
    TPipe() { twin::detail::RegisterPipe(state_, this); }
    ~TPipe() { twin::detail::DestroyPipe(state_, this, false); }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    // num buffers of len bytes each (len rounded up to 32 B).
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
        const char* call = "TPipe::InitBuffer";
        if (que.core_.Initialized()) twin::detail::Fail("QUE_STATE", call, "InitBuffer called twice on the same queue");
        const uint32_t offset = twin::detail::ReserveUb(state_, num, len, call);
        que.core_.Init(QueTraits<Q>::kPos, QueTraits<Q>::kDepth, num, len, offset);
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
        const char* call = "TPipe::InitBuffer";
        if (buf.init_) twin::detail::Fail("QUE_STATE", call, "InitBuffer called twice on the same TBuf");
        buf.offset_ = twin::detail::ReserveUb(state_, 1, len, call);
        buf.len_ = len;
        buf.init_ = true;
        return true;
    }

    template <HardEvent evt>
    TEventID AllocEventID() {
        return twin::detail::AllocEventId(*state_.ctx, evt, "TPipe::AllocEventID");
    }
    template <HardEvent evt>
    void ReleaseEventID(TEventID id) {
        twin::detail::ReleaseEventId(*state_.ctx, evt, id, "TPipe::ReleaseEventID");
    }
    template <HardEvent evt>
    TEventID FetchEventID() {
        return FetchEventID(evt);
    }
    // The ID the next AllocEventID would return, without reserving it.
    TEventID FetchEventID(HardEvent evt) { return twin::detail::FetchEventId(*state_.ctx, evt, "TPipe::FetchEventID"); }

    // Drains the queues' pending events; the pipe cannot hand out buffers afterwards.
    void Destroy() { twin::detail::DestroyPipe(state_, this, true); }

private:
    template <class Q>
    struct QueTraits;
    template <TPosition pos, int32_t depth, auto mask>
    struct QueTraits<TQue<pos, depth, mask>> {
        static constexpr TPosition kPos = pos;
        static constexpr int32_t kDepth = depth;
    };

    twin::detail::PipeState state_;
};

inline TPipe* GetTPipePtr() {
    twin::detail::BlockContext& ctx = twin::detail::Block("GetTPipePtr");
    if (ctx.pipe == nullptr) twin::detail::Fail("BLOCK", "GetTPipePtr", "no TPipe is alive in this block");
    return ctx.pipe;
}

template <HardEvent event>
void SetFlag(int32_t eventID) {
    twin::detail::SetFlagId(twin::detail::Block("SetFlag"), event, eventID, false, "SetFlag");
}

template <HardEvent event>
void WaitFlag(int32_t eventID) {
    twin::detail::WaitFlagId(twin::detail::Block("WaitFlag"), event, eventID, "WaitFlag");
}

// Calls execute in program order on the host, so a barrier only has its legality to check.
template <pipe_t pipe>
void PipeBarrier() {
    twin::detail::Block("PipeBarrier");
    if constexpr (pipe == PIPE_S) twin::detail::Fail("PIPE_BARRIER", "PipeBarrier", "PipeBarrier<PIPE_S> is not allowed");
}

}  // namespace AscendC

#endif  // ASCEND_EMA_ADAM_TWIN_PIPE_H
