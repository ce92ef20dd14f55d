/**
 * @file twin_tensor.h
 * @brief GlobalTensor and LocalTensor of the CPU twin, plus the O(1) operand checks every DMA and
 *        vector call runs on its LocalTensor operands (UB_ALIGN, UB_RANGE, QUE_HAZARD).
 */
#ifndef ASCEND_EMA_ADAM_TWIN_TENSOR_H
#define ASCEND_EMA_ADAM_TWIN_TENSOR_H

#include <cstdint>

#include "twin_context.h"
#include "twin_types.h"

namespace twin::detail {

// One buffer of a TQue. LocalTensors from AllocTensor/DeQue point at it, so every use of the tensor can
// see the buffer's current queue state.
struct QueBuf {
    uint32_t offset = 0;  // from the UB base
    uint32_t gen = 0;     // bumped by FreeTensor: tensors from an earlier allocation become stale
    AscendC::TBufState state = AscendC::TBufState::FREE;
    AscendC::TPosition pos = AscendC::TPosition::VECCALC;
    AscendC::HardEvent heldEvt = AscendC::HardEvent::MAX;  // implicit queue event this buffer holds
    int8_t heldId = -1;
};

// How an API touches a LocalTensor operand; decides which queue states are legal (QUE_HAZARD).
enum class Use : uint8_t { VecRead, VecWrite, DmaIn, DmaOut, Scalar };

// The hazard model: a queue buffer that is FREE (or was freed since the tensor was taken) is never
// touched; an ENQUE buffer is in flight and only DeQue may take it; GM->UB into VECIN needs OCCUPIED;
// vector reads of VECIN need DEQUE; vector writes of VECOUT need OCCUPIED; UB->GM from VECOUT needs DEQUE.
inline bool QueueStateAllows(const QueBuf& b, uint32_t gen, Use use) {
    using AscendC::TBufState;
    using AscendC::TPosition;
    if (b.gen != gen || b.state == TBufState::FREE) return false;
    if (use == Use::Scalar) return true;
    if (b.state == TBufState::ENQUE) return false;
    switch (use) {
        case Use::DmaIn: return b.pos != TPosition::VECIN || b.state == TBufState::OCCUPIED;
        case Use::VecRead: return b.pos != TPosition::VECIN || b.state == TBufState::DEQUE;
        case Use::VecWrite: return b.pos != TPosition::VECOUT || b.state == TBufState::OCCUPIED;
        case Use::DmaOut: return b.pos != TPosition::VECOUT || b.state == TBufState::DEQUE;
        case Use::Scalar: return true;
    }
    return true;
}

// Slow path: works out which rule an operand broke and aborts.
[[noreturn]] void ReportOperand(BlockContext& ctx, const char* call, const char* name, const void* addr,
                                uint64_t sizeElems, uint64_t needElems, const QueBuf* buf, uint32_t gen, Use use);

struct TensorAccess;

}  // namespace twin::detail

namespace AscendC {

template <class T>
class GlobalTensor {
public:
    using PrimType = T;

    GlobalTensor() = default;

    // bufferSize is in elements; 0 (or the one-argument form) leaves the size unset, as in CPU-debug mode.
    // A null buffer is accepted (an unused input); any access through it then fails GM_BOUNDS.
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        twin::detail::BlockContext& ctx = twin::detail::Block("SetGlobalBuffer");
        if (buffer != nullptr) twin::detail::CheckGm(ctx, "SetGlobalBuffer", nullptr, 0, buffer, bufferSize * sizeof(T));
        addr_ = buffer;
        origin_ = buffer;
        size_ = bufferSize;
        originBytes_ = bufferSize * sizeof(T);
    }
    void SetGlobalBuffer(__gm__ T* buffer) { SetGlobalBuffer(buffer, 0); }

    const __gm__ T* GetPhyAddr() const { return addr_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
    uint64_t GetSize() const { return size_; }

    // A view advanced by offset elements; like upstream the size is unchanged. Bounds checks still use the
    // range given to SetGlobalBuffer.
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor view = *this;
        view.addr_ += offset;
        return view;
    }

    // Scalar GM access (PIPE_S through the data cache).
    T GetValue(uint64_t offset) const {
        twin::detail::BlockContext& ctx = twin::detail::Block("GlobalTensor::GetValue");
        twin::detail::CheckGm(ctx, "GlobalTensor::GetValue", origin_, OriginBytes(), addr_ + offset, sizeof(T));
        ctx.counters.gmScalarReadBytes += sizeof(T);
        return addr_[offset];
    }
    void SetValue(uint64_t offset, T value) {
        twin::detail::BlockContext& ctx = twin::detail::Block("GlobalTensor::SetValue");
        twin::detail::CheckGm(ctx, "GlobalTensor::SetValue", origin_, OriginBytes(), addr_ + offset, sizeof(T));
        ctx.counters.gmScalarWriteBytes += sizeof(T);
        addr_[offset] = value;
    }

private:
    friend struct twin::detail::TensorAccess;
    uint64_t OriginBytes() const { return originBytes_; }

    __gm__ T* addr_ = nullptr;
    __gm__ T* origin_ = nullptr;  // start given to SetGlobalBuffer: the range size_ refers to
    uint64_t size_ = 0;
    uint64_t originBytes_ = 0;    // bytes from origin_ the bounds checks allow: size_ * sizeof(T), except for
                                  // TensorDesc::GetDataObj, whose size_ is upstream's byte count
};

template <class T>
class LocalTensor {
public:
    using PrimType = T;

    LocalTensor() = default;

    // A view offset elements later, length reduced by offset (CPU-debug asserts offset < length).
    LocalTensor operator[](uint32_t offset) const {
        if (offset >= size_) {
            twin::detail::Fail("UB_RANGE", "LocalTensor::operator[]", "offset %u is not below the tensor length %u",
                               offset, size_);
        }
        LocalTensor view = *this;
        view.addr_ += offset;
        view.size_ -= offset;
        view.capBytes_ -= offset * static_cast<uint32_t>(sizeof(T));
        return view;
    }

    uint32_t GetSize() const { return size_; }

    // The length may shrink or grow, but not past the end of the buffer the tensor came from.
    void SetSize(uint32_t size) {
        if (static_cast<uint64_t>(size) * sizeof(T) > capBytes_) {
            twin::detail::Fail("UB_RANGE", "LocalTensor::SetSize", "%u elements (%llu B) exceed the %u B left in the buffer",
                               size, static_cast<unsigned long long>(size) * sizeof(T), capBytes_);
        }
        size_ = size;
    }

    T GetValue(uint32_t index) const {
        CheckScalar("LocalTensor::GetValue", index);
        return addr_[index];
    }
    template <class S>
    void SetValue(uint32_t index, S value) const {
        CheckScalar("LocalTensor::SetValue", index);
        addr_[index] = static_cast<T>(value);
    }

    // Same bytes as another element type; the length is rescaled to whole elements of U.
    template <class U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> out;
        out.addr_ = reinterpret_cast<U*>(addr_);
        out.size_ = static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(U));
        out.capBytes_ = capBytes_;
        out.buf_ = buf_;
        out.gen_ = gen_;
        return out;
    }

    // The buffer's address as an integer, as on the device (asc-devkit kernel_tensor.h: uint64_t outside
    // CPU-debug mode, where only the CPU build returns a pointer): a kernel cannot dereference it. Here it is
    // the host address in the block's UB arena; GetPhyAddr(offset) is offset elements further.
    uint64_t GetPhyAddr() const { return reinterpret_cast<uintptr_t>(addr_); }
    uint64_t GetPhyAddr(uint32_t offset) const { return reinterpret_cast<uintptr_t>(addr_ + offset); }

private:
    template <class>
    friend class LocalTensor;
    friend struct twin::detail::TensorAccess;

    void CheckScalar(const char* call, uint32_t index) const {
        twin::detail::BlockContext& ctx = twin::detail::Block(call);
        if (addr_ == nullptr || index >= size_ ||
            (buf_ != nullptr && !twin::detail::QueueStateAllows(*buf_, gen_, twin::detail::Use::Scalar))) {
            twin::detail::ReportOperand(ctx, call, "tensor", addr_, size_, static_cast<uint64_t>(index) + 1, buf_, gen_,
                                        twin::detail::Use::Scalar);
        }
    }

    T* addr_ = nullptr;
    uint32_t size_ = 0;      // elements
    uint32_t capBytes_ = 0;  // bytes from addr_ to the end of the underlying buffer
    twin::detail::QueBuf* buf_ = nullptr;  // queue buffer, or null for TBuf memory (unchecked)
    uint32_t gen_ = 0;
};

}  // namespace AscendC

namespace twin::detail {

// Internal door into the tensors' private fields for the queues, DMA and vector implementations.
struct TensorAccess {
    template <class T>
    static AscendC::LocalTensor<T> Make(T* addr, uint32_t bytes, QueBuf* buf) {
        AscendC::LocalTensor<T> t;
        t.addr_ = addr;
        t.size_ = bytes / static_cast<uint32_t>(sizeof(T));
        t.capBytes_ = bytes;
        t.buf_ = buf;
        t.gen_ = buf != nullptr ? buf->gen : 0;
        return t;
    }
    template <class T>
    static T* Addr(const AscendC::LocalTensor<T>& t) { return t.addr_; }
    template <class T>
    static QueBuf* Buf(const AscendC::LocalTensor<T>& t) { return t.buf_; }
    template <class T>
    static uint32_t Gen(const AscendC::LocalTensor<T>& t) { return t.gen_; }
    template <class T>
    static T* Addr(const AscendC::GlobalTensor<T>& g) { return g.addr_; }
    template <class T>
    static const T* Origin(const AscendC::GlobalTensor<T>& g) { return g.origin_; }
    template <class T>
    static uint64_t OriginBytes(const AscendC::GlobalTensor<T>& g) { return g.OriginBytes(); }
    // A GlobalTensor whose GetSize() reports `size` while its bounds checks use `bytes` from buffer.
    template <class T>
    static void SetListBuffer(AscendC::GlobalTensor<T>& g, T* buffer, uint64_t size, uint64_t bytes, const char* call) {
        BlockContext& ctx = Block(call);
        if (buffer != nullptr) CheckGm(ctx, call, nullptr, 0, buffer, bytes);
        g.addr_ = buffer;
        g.origin_ = buffer;
        g.size_ = size;
        g.originBytes_ = bytes;
    }
};

// UB_RANGE / UB_ALIGN / QUE_HAZARD on one LocalTensor operand that must hold needElems elements.
template <class T>
inline void CheckOperand(BlockContext& ctx, const char* call, const char* name, const AscendC::LocalTensor<T>& t,
                         uint64_t needElems, Use use) {
    const T* addr = TensorAccess::Addr(t);
    const QueBuf* buf = TensorAccess::Buf(t);
    const uint32_t gen = TensorAccess::Gen(t);
    if (addr == nullptr || (reinterpret_cast<uintptr_t>(addr) & 31u) != 0 || needElems > t.GetSize() ||
        (buf != nullptr && !QueueStateAllows(*buf, gen, use))) {
        ReportOperand(ctx, call, name, addr, t.GetSize(), needElems, buf, gen, use);
    }
}

}  // namespace twin::detail

#endif  // ASCEND_EMA_ADAM_TWIN_TENSOR_H
