/**
 * @file twin_datacopy.h
 * @brief DataCopy and DataCopyPad of the CPU twin (GM <-> UB, UB -> UB) with their parameter structs.
 *
 * Layout rules (ascendc_api.md sections 5-6): DataCopy moves whole 32-B blocks only. DataCopyPad gaps are
 * in bytes on the GM side and in 32-B blocks on the UB side; each GM->UB block lands 32-B aligned and
 * occupies AlignUp(blockLen + padding, 32) bytes. Bytes the device leaves undefined (the alignment tail,
 * and the padding when isPad is false) are filled with 0xFF, so a kernel that reads them sees NaNs.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_DATACOPY_H
#define ASCEND_EMA_ADAM_TWIN_DATACOPY_H

#include <cstdint>
#include <cstring>

#include "twin_context.h"
#include "twin_tensor.h"
#include "twin_types.h"

namespace AscendC {

// DataCopy: lengths and gaps in 32-B blocks. DataCopyPad (legacy overloads): blockLen in bytes, the GM gap
// in bytes, the UB gap in blocks.
struct DataCopyParams {
    DataCopyParams() {}
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}

    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    union {  // upstream spells the gaps both ways
        uint16_t srcGap = 0;
        uint16_t srcStride;
    };
    union {
        uint16_t dstGap = 0;
        uint16_t dstStride;
    };
};

// DataCopyPad: blockLen in bytes (at most 2097151), GM gap in bytes, UB gap in 32-B blocks.
struct DataCopyExtParams {
    DataCopyExtParams() {}
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                      const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}

    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

// Padding in elements (each side at most 32 B); paddingValue fills it when isPad is true.
template <class T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() {}
    DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}

    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
};

// Legacy padding parameters: paddingValue holds the raw bits of one element in its low bytes.
struct DataCopyPadParams {
    DataCopyPadParams() {}
    DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                      const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}

    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

}  // namespace AscendC

namespace twin::detail {

constexpr uint32_t kMaxBlockCount = 4095;
constexpr uint32_t kMaxExtBlockLen = 2097151;

// blockCount blocks of blockLen bytes; block i starts at i * srcStep in src and i * dstStep in dst.
struct BlockCopy {
    uint64_t blockCount;
    uint64_t blockLen;
    uint64_t srcStep;
    uint64_t dstStep;
};

// Plain block copy (UB->GM, GM->UB without padding, UB->UB).
void CopyBlocks(uint8_t* dst, const uint8_t* src, const BlockCopy& plan);

// GM->UB with padding: each UB block is [left pad][data][right pad][0xFF up to ubBlockBytes].
struct PadFill {
    uint32_t leftBytes;
    uint32_t rightBytes;
    uint32_t ubBlockBytes;
    bool isPad;
    uint8_t value[8];  // one element's bytes
    uint32_t elemBytes;
};
void CopyBlocksPadded(uint8_t* ub, const uint8_t* gm, const BlockCopy& plan, const PadFill& pad);

constexpr uint64_t AlignUp32(uint64_t v) { return (v + 31) & ~uint64_t{31}; }

// DATACOPY_ALIGN: whole 32-B blocks, and GM element alignment.
template <class T>
inline void CheckDataCopyCount(const char* call, uint32_t count, const void* gm) {
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % 32 != 0) {
        Fail("DATACOPY_ALIGN", call,
             "%u elements x %zu B = %llu B is not a multiple of 32 B (the device would drop the tail; use DataCopyPad)",
             count, sizeof(T), static_cast<unsigned long long>(bytes));
    }
    if (gm != nullptr && reinterpret_cast<uintptr_t>(gm) % sizeof(T) != 0) {
        Fail("DATACOPY_ALIGN", call, "GM address %p is not %zu-B aligned", gm, sizeof(T));
    }
}

inline void CheckDataCopyParams(const char* call, const AscendC::DataCopyParams& p) {
    if (p.blockCount > kMaxBlockCount) {
        Fail("DATACOPY_PARAMS", call, "blockCount %u exceeds %u", p.blockCount, kMaxBlockCount);
    }
}

// GM->UB DataCopyPad common to both parameter forms. gmGap in bytes, ubGap in 32-B blocks.
template <class T>
void PadCopyIn(const char* call, const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src,
               uint32_t blockCount, uint32_t blockLen, uint32_t maxBlockLen, uint64_t gmGap, uint64_t ubGap, bool isPad,
               uint32_t leftPad, uint32_t rightPad, uint64_t padBits) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "DataCopyPad: 8/16/32/64-bit types");
    BlockContext& ctx = Block(call);
    CheckOperand(ctx, call, "dst", dst, 0, Use::DmaIn);
    if (blockCount == 0 || blockLen == 0) return;  // no-op on the device
    if (blockCount > kMaxBlockCount) Fail("DATACOPYPAD_PARAMS", call, "blockCount %u exceeds %u", blockCount, kMaxBlockCount);
    if (blockLen > maxBlockLen) Fail("DATACOPYPAD_PARAMS", call, "blockLen %u B exceeds %u B", blockLen, maxBlockLen);
    if (blockLen % sizeof(T) != 0) {
        Fail("DATACOPYPAD_PARAMS", call, "blockLen %u B is not a multiple of the %zu-B element", blockLen, sizeof(T));
    }
    if (leftPad * sizeof(T) > 32 || rightPad * sizeof(T) > 32) {
        Fail("DATACOPYPAD_PARAMS", call, "padding %u/%u elements of %zu B exceeds 32 B per side", leftPad, rightPad,
             sizeof(T));
    }
    if (sizeof(T) == 8 && padBits != 0) {
        Fail("DATACOPYPAD_PARAMS", call, "64-bit element types require paddingValue 0");
    }
    const uint64_t padBytes = static_cast<uint64_t>(leftPad + rightPad) * sizeof(T);
    const uint64_t ubBlock = AlignUp32(blockLen + padBytes);
    const uint64_t footprint = blockCount * ubBlock + (blockCount - 1) * ubGap * 32;
    const uint64_t dstBytes = static_cast<uint64_t>(dst.GetSize()) * sizeof(T);
    if (footprint > dstBytes) {
        Fail("DATACOPYPAD_PARAMS", call, "UB footprint %llu B (%u blocks of %llu B, gap %llu blocks) exceeds dst of %llu B",
             static_cast<unsigned long long>(footprint), blockCount, static_cast<unsigned long long>(ubBlock),
             static_cast<unsigned long long>(ubGap), static_cast<unsigned long long>(dstBytes));
    }
    const T* gm = TensorAccess::Addr(src);
    const uint64_t span = blockCount * static_cast<uint64_t>(blockLen) + (blockCount - 1) * gmGap;
    CheckGm(ctx, call, TensorAccess::Origin(src), TensorAccess::OriginBytes(src), gm, span);

    PadFill fill{leftPad * static_cast<uint32_t>(sizeof(T)), rightPad * static_cast<uint32_t>(sizeof(T)),
                 static_cast<uint32_t>(ubBlock), isPad, {}, static_cast<uint32_t>(sizeof(T))};
    std::memcpy(fill.value, &padBits, sizeof(T));
    CopyBlocksPadded(reinterpret_cast<uint8_t*>(TensorAccess::Addr(dst)), reinterpret_cast<const uint8_t*>(gm),
                     {blockCount, blockLen, blockLen + gmGap, ubBlock + ubGap * 32}, fill);
    ctx.counters.gmReadBytes += static_cast<uint64_t>(blockCount) * blockLen;
    ++ctx.counters.dmaCalls;
}

// UB->GM DataCopyPad common to both parameter forms. ubGap in 32-B blocks, gmGap in bytes.
template <class T>
void PadCopyOut(const char* call, const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                uint32_t blockCount, uint32_t blockLen, uint32_t maxBlockLen, uint64_t ubGap, uint64_t gmGap) {
    BlockContext& ctx = Block(call);
    CheckOperand(ctx, call, "src", src, 0, Use::DmaOut);
    if (blockCount == 0 || blockLen == 0) return;
    if (blockCount > kMaxBlockCount) Fail("DATACOPYPAD_PARAMS", call, "blockCount %u exceeds %u", blockCount, kMaxBlockCount);
    if (blockLen > maxBlockLen) Fail("DATACOPYPAD_PARAMS", call, "blockLen %u B exceeds %u B", blockLen, maxBlockLen);
    if (blockLen % sizeof(T) != 0) {
        Fail("DATACOPYPAD_PARAMS", call, "blockLen %u B is not a multiple of the %zu-B element", blockLen, sizeof(T));
    }
    const uint64_t ubBlock = AlignUp32(blockLen);
    const uint64_t footprint = blockCount * ubBlock + (blockCount - 1) * ubGap * 32;
    const uint64_t srcBytes = static_cast<uint64_t>(src.GetSize()) * sizeof(T);
    if (footprint > srcBytes) {
        Fail("DATACOPYPAD_PARAMS", call, "UB footprint %llu B exceeds src of %llu B",
             static_cast<unsigned long long>(footprint), static_cast<unsigned long long>(srcBytes));
    }
    T* gm = TensorAccess::Addr(dst);
    const uint64_t span = blockCount * static_cast<uint64_t>(blockLen) + (blockCount - 1) * gmGap;
    CheckGm(ctx, call, TensorAccess::Origin(dst), TensorAccess::OriginBytes(dst), gm, span);
    CopyBlocks(reinterpret_cast<uint8_t*>(gm), reinterpret_cast<const uint8_t*>(TensorAccess::Addr(src)),
               {blockCount, blockLen, ubBlock + ubGap * 32, blockLen + gmGap});
    ctx.counters.gmWriteBytes += static_cast<uint64_t>(blockCount) * blockLen;
    ++ctx.counters.dmaCalls;
}

}  // namespace twin::detail

namespace AscendC {

// GM -> UB (MTE2), count elements; count * sizeof(T) must be a multiple of 32 B.
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    using namespace twin::detail;
    const char* call = "DataCopy";
    BlockContext& ctx = Block(call);
    const T* gm = TensorAccess::Addr(src);
    CheckDataCopyCount<T>(call, count, gm);
    CheckOperand(ctx, call, "dst", dst, count, Use::DmaIn);
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    CheckGm(ctx, call, TensorAccess::Origin(src), TensorAccess::OriginBytes(src), gm, bytes);
    if (bytes != 0) std::memcpy(TensorAccess::Addr(dst), gm, bytes);
    ctx.counters.gmReadBytes += bytes;
    ++ctx.counters.dmaCalls;
}

// UB -> GM (MTE3).
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    using namespace twin::detail;
    const char* call = "DataCopy";
    BlockContext& ctx = Block(call);
    T* gm = TensorAccess::Addr(dst);
    CheckDataCopyCount<T>(call, count, gm);
    CheckOperand(ctx, call, "src", src, count, Use::DmaOut);
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    CheckGm(ctx, call, TensorAccess::Origin(dst), TensorAccess::OriginBytes(dst), gm, bytes);
    if (bytes != 0) std::memcpy(gm, TensorAccess::Addr(src), bytes);
    ctx.counters.gmWriteBytes += bytes;
    ++ctx.counters.dmaCalls;
}

// UB -> UB.
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    using namespace twin::detail;
    const char* call = "DataCopy";
    BlockContext& ctx = Block(call);
    CheckDataCopyCount<T>(call, count, nullptr);
    CheckOperand(ctx, call, "dst", dst, count, Use::VecWrite);
    CheckOperand(ctx, call, "src", src, count, Use::VecRead);
    if (count != 0) std::memmove(TensorAccess::Addr(dst), TensorAccess::Addr(src), count * sizeof(T));
    ++ctx.counters.dmaCalls;
}

// Block forms: blockLen and both gaps in 32-B blocks.
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    using namespace twin::detail;
    const char* call = "DataCopy";
    BlockContext& ctx = Block(call);
    CheckDataCopyParams(call, p);
    const T* gm = TensorAccess::Addr(src);
    CheckDataCopyCount<T>(call, 0, gm);
    const BlockCopy plan{p.blockCount, p.blockLen * 32ull, (p.blockLen + p.srcStride) * 32ull,
                         (p.blockLen + p.dstStride) * 32ull};
    const bool empty = plan.blockCount == 0 || plan.blockLen == 0;
    const uint64_t ubBytes = empty ? 0 : (plan.blockCount - 1) * plan.dstStep + plan.blockLen;
    CheckOperand(ctx, call, "dst", dst, ubBytes / sizeof(T), Use::DmaIn);
    if (empty) return;
    CheckGm(ctx, call, TensorAccess::Origin(src), TensorAccess::OriginBytes(src), gm,
            (plan.blockCount - 1) * plan.srcStep + plan.blockLen);
    CopyBlocks(reinterpret_cast<uint8_t*>(TensorAccess::Addr(dst)), reinterpret_cast<const uint8_t*>(gm), plan);
    ctx.counters.gmReadBytes += plan.blockCount * plan.blockLen;
    ++ctx.counters.dmaCalls;
}

template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    using namespace twin::detail;
    const char* call = "DataCopy";
    BlockContext& ctx = Block(call);
    CheckDataCopyParams(call, p);
    T* gm = TensorAccess::Addr(dst);
    CheckDataCopyCount<T>(call, 0, gm);
    const BlockCopy plan{p.blockCount, p.blockLen * 32ull, (p.blockLen + p.srcStride) * 32ull,
                         (p.blockLen + p.dstStride) * 32ull};
    const bool empty = plan.blockCount == 0 || plan.blockLen == 0;
    const uint64_t ubBytes = empty ? 0 : (plan.blockCount - 1) * plan.srcStep + plan.blockLen;
    CheckOperand(ctx, call, "src", src, ubBytes / sizeof(T), Use::DmaOut);
    if (empty) return;
    CheckGm(ctx, call, TensorAccess::Origin(dst), TensorAccess::OriginBytes(dst), gm,
            (plan.blockCount - 1) * plan.dstStep + plan.blockLen);
    CopyBlocks(reinterpret_cast<uint8_t*>(gm), reinterpret_cast<const uint8_t*>(TensorAccess::Addr(src)), plan);
    ctx.counters.gmWriteBytes += plan.blockCount * plan.blockLen;
    ++ctx.counters.dmaCalls;
}

template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    using namespace twin::detail;
    const char* call = "DataCopy";
    BlockContext& ctx = Block(call);
    CheckDataCopyParams(call, p);
    const BlockCopy plan{p.blockCount, p.blockLen * 32ull, (p.blockLen + p.srcStride) * 32ull,
                         (p.blockLen + p.dstStride) * 32ull};
    const bool empty = plan.blockCount == 0 || plan.blockLen == 0;
    CheckOperand(ctx, call, "dst", dst, empty ? 0 : ((plan.blockCount - 1) * plan.dstStep + plan.blockLen) / sizeof(T),
                 Use::VecWrite);
    CheckOperand(ctx, call, "src", src, empty ? 0 : ((plan.blockCount - 1) * plan.srcStep + plan.blockLen) / sizeof(T),
                 Use::VecRead);
    if (empty) return;
    CopyBlocks(reinterpret_cast<uint8_t*>(TensorAccess::Addr(dst)), reinterpret_cast<const uint8_t*>(TensorAccess::Addr(src)),
               plan);
    ++ctx.counters.dmaCalls;
}

// GM -> UB, unaligned lengths, optional padding.
template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
    uint64_t bits = 0;
    std::memcpy(&bits, &pad.paddingValue, sizeof(T));
    twin::detail::PadCopyIn("DataCopyPad", dst, src, p.blockCount, p.blockLen, twin::detail::kMaxExtBlockLen,
                            p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding, bits);
}

// UB -> GM, exactly blockLen bytes per block.
template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    twin::detail::PadCopyOut("DataCopyPad", dst, src, p.blockCount, p.blockLen, twin::detail::kMaxExtBlockLen,
                             p.srcStride, p.dstStride);
}

// Legacy forms: blockLen in bytes as uint16.
template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                 const DataCopyPadParams& pad) {
    twin::detail::PadCopyIn("DataCopyPad", dst, src, p.blockCount, p.blockLen, UINT16_MAX, p.srcStride, p.dstStride,
                            pad.isPad, pad.leftPadding, pad.rightPadding, pad.paddingValue);
}

template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    twin::detail::PadCopyOut("DataCopyPad", dst, src, p.blockCount, p.blockLen, UINT16_MAX, p.srcStride, p.dstStride);
}

}  // namespace AscendC

#endif  // ASCEND_EMA_ADAM_TWIN_DATACOPY_H
