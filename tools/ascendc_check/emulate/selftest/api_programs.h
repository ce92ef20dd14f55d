/**
 * @file api_programs.h
 * @brief tools/ascendc_check/run.py --emulate self-tests: small AscendC API-level vector programs, written once and compiled
 *        twice, (a) against the real AscendC library over the emulated intrinsics (api_programs_kernels.cpp, as
 *        tools/ascendc_check/run.py compiles our kernels in --emulate) and (b) against the project's CPU twin
 *        (twin/ascendc/kernel_operator.h). api_programs_main.cpp runs the same seeded inputs through both;
 *        selftests.py compares the outputs bit for bit.
 *
 * Every kernel takes (params, x, y, z): `params` is a ProgramParams in GM (read with a plain copy, as a tiling
 * struct), x and y are the inputs, z the output. Each program moves its inputs GM -> UB with DataCopyPad, computes
 * in count form (a count that ends in a partial last repeat), and moves the result UB -> GM with DataCopyPad, the
 * queues (TQue EnQue / DeQue) carrying the synchronisation:
 *   binary (float, half):  Add Sub Mul Div Max Min
 *   unary (float, half):   Adds Muls Maxs Mins (scalar from params), Sqrt, Abs
 *   cast:                  float -> half (CAST_NONE RINT FLOOR CEIL ROUND TRUNC ODD), float -> bfloat16_t (RINT
 *                          FLOOR CEIL ROUND TRUNC), half -> float, bfloat16_t -> float (CAST_NONE)
 *   duplicate:             Duplicate of float, half, bfloat16_t
 *   pad copy:              DataCopyPad GM -> UB with left/right padding (isPad), GM gap in bytes, UB gap in
 *                          blocks, then UB -> GM of the padded rows (pads included), for uint8_t, half, bfloat16_t,
 *                          float
 *   the 8-bit kernel's:    int32_t Add Sub Mul Max Min, Adds Muls Maxs Mins; Cast uint8_t -> half (CAST_NONE),
 *                          half -> int32_t, half -> uint8_t, float -> int32_t (RINT FLOOR CEIL ROUND TRUNC);
 *                          Gather of float and half (x the table, y the byte offsets); Compare (every CMPMODE, in
 *                          roundMode) of float and half into the uint8_t mask (z); Select in VSEL_TENSOR_TENSOR_MODE
 *                          of x and y by Compare's mask
 * Each program runs on one block; the float-overflow mode (saturation or INF_NAN) is the launch's.
 *
 * Include after the kernel_operator.h of the side being built. With AEA_SELFTEST_DECLARATIONS_ONLY only the
 * parameter struct and the kernel declarations (for a driver that does not include the AscendC headers).
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_API_PROGRAMS_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_API_PROGRAMS_H

#include <cstdint>
#include <cstring>

namespace aea_selftest {

/** The program's parameters, in GM (little-endian uint32 fields, as selftests.py writes them). */
struct ProgramParams {
    uint32_t op;          // Op
    uint32_t count;       // elements (vector programs)
    uint32_t roundMode;   // AscendC::RoundMode value (Cast)
    uint32_t scalarBits;  // the scalar's bit pattern (Adds Muls Maxs Mins Duplicate), in its low bytes
    uint32_t blockCount;  // pad copy: GM -> UB DataCopyExtParams
    uint32_t blockLen;    //   bytes
    uint32_t gmGap;       //   bytes (GM -> UB srcStride and UB -> GM dstStride)
    uint32_t ubGap;       //   32-B blocks (GM -> UB dstStride and UB -> GM srcStride)
    uint32_t leftPad;     //   elements
    uint32_t rightPad;    //   elements
    uint32_t isPad;
    uint32_t padBits;     //   the padding value's bit pattern
};

enum Op : uint32_t {
    kAdd, kSub, kMul, kDiv, kMax, kMin, kAdds, kMuls, kMaxs, kMins, kSqrt, kAbs, kCast, kDup, kPadCopy, kGather,
    kCompare, kSelect
};

}  // namespace aea_selftest

// The kernels, by name: X(name) for every extern "C" entry (params, x, y, z).
#define AEA_SELFTEST_KERNELS(X)                                                                                     \
    X(aea_selftest_binary_f32) X(aea_selftest_binary_f16) X(aea_selftest_unary_f32) X(aea_selftest_unary_f16)        \
    X(aea_selftest_cast_f32_f16) X(aea_selftest_cast_f32_bf16) X(aea_selftest_cast_f16_f32)                          \
    X(aea_selftest_cast_bf16_f32) X(aea_selftest_dup_f32) X(aea_selftest_dup_f16) X(aea_selftest_dup_bf16)          \
    X(aea_selftest_pad_copy_u8) X(aea_selftest_pad_copy_f16) X(aea_selftest_pad_copy_bf16) X(aea_selftest_pad_copy_f32) \
    X(aea_selftest_binary_s32) X(aea_selftest_unary_s32) X(aea_selftest_cast_u8_f16) X(aea_selftest_cast_f16_s32)    \
    X(aea_selftest_cast_f16_u8) X(aea_selftest_cast_f32_s32) X(aea_selftest_gather_f32) X(aea_selftest_gather_f16)   \
    X(aea_selftest_compare_f32_u8) X(aea_selftest_compare_f16_u8) X(aea_selftest_select_f32)                         \
    X(aea_selftest_select_f16)

#ifdef AEA_SELFTEST_DECLARATIONS_ONLY

#define AEA_SELFTEST_DECLARE(name) void name(uint8_t* params, uint8_t* x, uint8_t* y, uint8_t* z);
extern "C" {
AEA_SELFTEST_KERNELS(AEA_SELFTEST_DECLARE)
}
#undef AEA_SELFTEST_DECLARE

#else  // the kernels

namespace aea_selftest {

using namespace AscendC;

__aicore__ inline ProgramParams LoadParams(GM_ADDR params)
{
    ProgramParams p;
    std::memcpy(&p, params, sizeof p);
    return p;
}

template <class T>
__aicore__ inline T FromBits(uint32_t bits)
{
    T value;
    std::memcpy(static_cast<void*>(&value), &bits, sizeof(T));
    return value;
}

__aicore__ inline uint32_t AlignUp32(uint32_t bytes) { return (bytes + 31) / 32 * 32; }

/** GM -> UB of `count` elements through a VECIN queue (the tensor comes back dequeued). */
template <class T, class Q>
__aicore__ inline LocalTensor<T> LoadInput(Q& queue, const GlobalTensor<T>& g, uint32_t count)
{
    LocalTensor<T> t = queue.template AllocTensor<T>();
    DataCopyPad(t, g, DataCopyExtParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0},
                DataCopyPadExtParams<T>{});
    queue.EnQue(t);
    return queue.template DeQue<T>();
}

/** UB -> GM of `count` elements of a VECOUT tensor, then frees it. */
template <class T, class Q>
__aicore__ inline void StoreOutput(Q& queue, LocalTensor<T>& t, const GlobalTensor<T>& g, uint32_t count)
{
    queue.EnQue(t);
    LocalTensor<T> ready = queue.template DeQue<T>();
    DataCopyPad(g, ready, DataCopyExtParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0});
    queue.FreeTensor(ready);
}

template <class T>
__aicore__ inline void BinaryProgram(GM_ADDR params, GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 2, AlignUp32(p.count * sizeof(T)));
    pipe.InitBuffer(out, 1, AlignUp32(p.count * sizeof(T)));
    GlobalTensor<T> gx, gy, gz;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), p.count);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), p.count);
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z), p.count);
    LocalTensor<T> a = LoadInput(in, gx, p.count);
    LocalTensor<T> b = LoadInput(in, gy, p.count);
    LocalTensor<T> c = out.AllocTensor<T>();
    const int32_t n = static_cast<int32_t>(p.count);
    switch (p.op) {
        case kAdd: Add(c, a, b, n); break;
        case kSub: Sub(c, a, b, n); break;
        case kMul: Mul(c, a, b, n); break;
        case kDiv: Div(c, a, b, n); break;
        case kMax: Max(c, a, b, n); break;
        default: Min(c, a, b, n); break;
    }
    in.FreeTensor(a);
    in.FreeTensor(b);
    StoreOutput(out, c, gz, p.count);
}

template <class T>
__aicore__ inline void UnaryProgram(GM_ADDR params, GM_ADDR x, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, AlignUp32(p.count * sizeof(T)));
    pipe.InitBuffer(out, 1, AlignUp32(p.count * sizeof(T)));
    GlobalTensor<T> gx, gz;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), p.count);
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z), p.count);
    LocalTensor<T> a = LoadInput(in, gx, p.count);
    LocalTensor<T> c = out.AllocTensor<T>();
    const T s = FromBits<T>(p.scalarBits);
    const int32_t n = static_cast<int32_t>(p.count);
    switch (p.op) {
        case kAdds: Adds(c, a, s, n); break;
        case kMuls: Muls(c, a, s, n); break;
        case kMaxs: Maxs(c, a, s, n); break;
        case kMins: Mins(c, a, s, n); break;
        case kSqrt: Sqrt(c, a, n); break;
        default: Abs(c, a, n); break;
    }
    in.FreeTensor(a);
    StoreOutput(out, c, gz, p.count);
}

template <class D, class S>
__aicore__ inline void CastProgram(GM_ADDR params, GM_ADDR x, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(in, 1, AlignUp32(p.count * sizeof(S)));
    pipe.InitBuffer(out, 1, AlignUp32(p.count * sizeof(D)));
    GlobalTensor<S> gx;
    GlobalTensor<D> gz;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(x), p.count);
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ D*>(z), p.count);
    LocalTensor<S> a = LoadInput(in, gx, p.count);
    LocalTensor<D> c = out.AllocTensor<D>();
    Cast(c, a, static_cast<RoundMode>(p.roundMode), p.count);
    in.FreeTensor(a);
    StoreOutput(out, c, gz, p.count);
}

template <class T>
__aicore__ inline void DupProgram(GM_ADDR params, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    TPipe pipe;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(out, 1, AlignUp32(p.count * sizeof(T)));
    GlobalTensor<T> gz;
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z), p.count);
    LocalTensor<T> c = out.AllocTensor<T>();
    Duplicate(c, FromBits<T>(p.scalarBits), static_cast<int32_t>(p.count));
    StoreOutput(out, c, gz, p.count);
}

/** GM -> UB with padding, then the padded rows UB -> GM (MTE2 -> MTE3 ordered by a flag). */
template <class T>
__aicore__ inline void PadCopyProgram(GM_ADDR params, GM_ADDR x, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    const uint32_t row = p.blockLen + (p.leftPad + p.rightPad) * static_cast<uint32_t>(sizeof(T));
    const uint32_t footprint = p.blockCount * AlignUp32(row) + (p.blockCount - 1) * p.ubGap * 32;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, footprint);
    GlobalTensor<T> gx, gz;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), (p.blockCount * (p.blockLen + p.gmGap)) / sizeof(T));
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z), (p.blockCount * (row + p.gmGap)) / sizeof(T));
    LocalTensor<T> u = buf.Get<T>();
    DataCopyPad(u, gx, DataCopyExtParams{static_cast<uint16_t>(p.blockCount), p.blockLen, p.gmGap, p.ubGap, 0},
                DataCopyPadExtParams<T>{p.isPad != 0, static_cast<uint8_t>(p.leftPad), static_cast<uint8_t>(p.rightPad),
                                        FromBits<T>(p.padBits)});
    const TEventID id = GetTPipePtr()->FetchEventID(HardEvent::MTE2_MTE3);
    SetFlag<HardEvent::MTE2_MTE3>(id);
    WaitFlag<HardEvent::MTE2_MTE3>(id);
    DataCopyPad(gz, u, DataCopyExtParams{static_cast<uint16_t>(p.blockCount), row, p.ubGap, p.gmGap, 0});
}

/** Gather: `count` elements of the table x (blockLen elements) at the byte offsets y. */
template <class T>
__aicore__ inline void GatherProgram(GM_ADDR params, GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> tableIn;
    TQue<TPosition::VECIN, 1> offsetsIn;
    TQue<TPosition::VECOUT, 1> out;
    pipe.InitBuffer(tableIn, 1, AlignUp32(p.blockLen * sizeof(T)));
    pipe.InitBuffer(offsetsIn, 1, AlignUp32(p.count * 4));
    pipe.InitBuffer(out, 1, AlignUp32(p.count * sizeof(T)));
    GlobalTensor<T> gx, gz;
    GlobalTensor<uint32_t> gy;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), p.blockLen);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(y), p.count);
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z), p.count);
    LocalTensor<T> table = LoadInput(tableIn, gx, p.blockLen);
    LocalTensor<uint32_t> offsets = LoadInput(offsetsIn, gy, p.count);
    LocalTensor<T> c = out.AllocTensor<T>();
    Gather(c, table, offsets, 0U, p.count);
    tableIn.FreeTensor(table);
    offsetsIn.FreeTensor(offsets);
    StoreOutput(out, c, gz, p.count);
}

/** Compare (mode in roundMode) of x and y into a uint8_t mask: the mask itself (kCompare) or Select(mask, x, y)
 *  in VSEL_TENSOR_TENSOR_MODE (kSelect) goes to z. */
template <class T>
__aicore__ inline void CompareSelectProgram(GM_ADDR params, GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    const ProgramParams p = LoadParams(params);
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    TQue<TPosition::VECOUT, 1> out;
    TBuf<TPosition::VECCALC> maskBuf;
    pipe.InitBuffer(in, 2, AlignUp32(p.count * sizeof(T)));
    pipe.InitBuffer(out, 1, AlignUp32(p.count * sizeof(T)));
    pipe.InitBuffer(maskBuf, AlignUp32(p.count / 8));
    GlobalTensor<T> gx, gy;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), p.count);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), p.count);
    LocalTensor<T> a = LoadInput(in, gx, p.count);
    LocalTensor<T> b = LoadInput(in, gy, p.count);
    LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
    Compare(mask, a, b, static_cast<CMPMODE>(p.roundMode), p.count);
    if (p.op == kCompare) {  // the mask straight to GM, after the vector unit wrote it
        const TEventID id = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
        SetFlag<HardEvent::V_MTE3>(id);
        WaitFlag<HardEvent::V_MTE3>(id);
        GlobalTensor<uint8_t> gm;
        gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(z), p.count / 8);
        DataCopyPad(gm, mask, DataCopyExtParams{1, p.count / 8, 0, 0, 0});
        in.FreeTensor(a);
        in.FreeTensor(b);
        return;
    }
    GlobalTensor<T> gz;
    gz.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z), p.count);
    LocalTensor<T> c = out.AllocTensor<T>();
    Select(c, mask, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, p.count);
    in.FreeTensor(a);
    in.FreeTensor(b);
    StoreOutput(out, c, gz, p.count);
}

}  // namespace aea_selftest

#define AEA_SELFTEST_ENTRY(name, body)                                                                        \
    extern "C" __global__ __aicore__ void name(GM_ADDR params, GM_ADDR x, GM_ADDR y, GM_ADDR z)                 \
    {                                                                                                         \
        (void)x;                                                                                              \
        (void)y;                                                                                              \
        body;                                                                                                 \
    }
AEA_SELFTEST_ENTRY(aea_selftest_binary_f32, aea_selftest::BinaryProgram<float>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_binary_f16, aea_selftest::BinaryProgram<half>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_unary_f32, aea_selftest::UnaryProgram<float>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_unary_f16, aea_selftest::UnaryProgram<half>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_cast_f32_f16, (aea_selftest::CastProgram<half, float>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_cast_f32_bf16, (aea_selftest::CastProgram<bfloat16_t, float>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_cast_f16_f32, (aea_selftest::CastProgram<float, half>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_cast_bf16_f32, (aea_selftest::CastProgram<float, bfloat16_t>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_dup_f32, aea_selftest::DupProgram<float>(params, z))
AEA_SELFTEST_ENTRY(aea_selftest_dup_f16, aea_selftest::DupProgram<half>(params, z))
AEA_SELFTEST_ENTRY(aea_selftest_dup_bf16, aea_selftest::DupProgram<bfloat16_t>(params, z))
AEA_SELFTEST_ENTRY(aea_selftest_pad_copy_u8, aea_selftest::PadCopyProgram<uint8_t>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_pad_copy_f16, aea_selftest::PadCopyProgram<half>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_pad_copy_bf16, aea_selftest::PadCopyProgram<bfloat16_t>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_pad_copy_f32, aea_selftest::PadCopyProgram<float>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_binary_s32, aea_selftest::BinaryProgram<int32_t>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_unary_s32, aea_selftest::UnaryProgram<int32_t>(params, x, z))
AEA_SELFTEST_ENTRY(aea_selftest_cast_u8_f16, (aea_selftest::CastProgram<half, uint8_t>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_cast_f16_s32, (aea_selftest::CastProgram<int32_t, half>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_cast_f16_u8, (aea_selftest::CastProgram<uint8_t, half>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_cast_f32_s32, (aea_selftest::CastProgram<int32_t, float>(params, x, z)))
AEA_SELFTEST_ENTRY(aea_selftest_gather_f32, aea_selftest::GatherProgram<float>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_gather_f16, aea_selftest::GatherProgram<half>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_compare_f32_u8, aea_selftest::CompareSelectProgram<float>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_compare_f16_u8, aea_selftest::CompareSelectProgram<half>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_select_f32, aea_selftest::CompareSelectProgram<float>(params, x, y, z))
AEA_SELFTEST_ENTRY(aea_selftest_select_f16, aea_selftest::CompareSelectProgram<half>(params, x, y, z))
#undef AEA_SELFTEST_ENTRY

#endif  // AEA_SELFTEST_DECLARATIONS_ONLY

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_API_PROGRAMS_H
