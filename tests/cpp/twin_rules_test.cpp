// Rules and semantics of the AscendC CPU twin.
//
//   twin_rules_test --list     one case name per line
//   twin_rules_test <case>     run one case
//
// abort_<RULE>_<what>: a deliberately wrong kernel; must die with SIGABRT and "[<RULE>]" on stderr.
// ok_<what>:           must exit 0; checks its own results and prints every mismatch.
// bench_<what>:        prints timings (launch overhead, vector throughput); always exits 0.
// tests/python/kernel/test_twin_rules.py runs every abort_ and ok_ case in its own process.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel_operator.h"
#include "twin_launch.h"
#include "twin_case_harness.h"

#include "ascendc_api_values.h"  // enumerator values, also checked against the real headers

using namespace AscendC;

namespace {

// The case registry, Expect/Verdict and the launch helpers: twin_case_harness.h.
using namespace twin_test;

uint32_t Bits(float f) { return twin::fp::FloatBits(f); }
float FromBits(uint32_t u) { return twin::fp::BitsFloat(u); }

bool SameFloat(float a, float b) { return Bits(a) == Bits(b) || (std::isnan(a) && std::isnan(b)); }

// ---- abort kernels: UB_BUDGET ---------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_ub_budget_exceeds_ub() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 100 * 1024);  // 200 KiB > 192 KiB
}

extern "C" __global__ __aicore__ void k_ub_budget_num_zero() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 0, 1024);
}

extern "C" __global__ __aicore__ void k_ub_budget_65_buffers() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    TBuf<TPosition::VECCALC> extra;
    pipe.InitBuffer(q, 64, 32);
    pipe.InitBuffer(extra, 32);  // the 65th buffer
}

TWIN_CASE(abort_UB_BUDGET_exceeds_ub) {
    twin::Launch(k_ub_budget_exceeds_ub, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_BUDGET_num_zero) {
    twin::Launch(k_ub_budget_num_zero, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_BUDGET_too_many_buffers) {
    twin::Launch(k_ub_budget_65_buffers, Config(1));
    return ExpectedAbort();
}

// ---- UB_ALIGN ---------------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_ub_align_vector_subview() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> t = buf.Get<float>();
    Adds(t[64], t[3], 1.0f, 8);  // src starts 12 B past a 32-B boundary
}

extern "C" __global__ __aicore__ void k_ub_align_datacopypad(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
    DataCopyPad(buf.Get<float>()[4], gx, DataCopyExtParams{1, 16, 0, 0, 0}, DataCopyPadExtParams<float>{});
}

TWIN_CASE(abort_UB_ALIGN_vector_subview) {
    twin::Launch(k_ub_align_vector_subview, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_ALIGN_datacopypad_dst) {
    std::vector<float> x(64);
    twin::Launch(k_ub_align_datacopypad, Config(1, {Region(x)}), Gm(x));
    return ExpectedAbort();
}

// ---- UB_RANGE ---------------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_ub_range_count() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> t = buf.Get<float>(64);
    Add(t, t, t, 65);
}

extern "C" __global__ __aicore__ void k_ub_range_subview_offset() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<float> t = buf.Get<float>();
    LocalTensor<float> past = t[t.GetSize()];
    Duplicate(past, 0.0f, 1);
}

extern "C" __global__ __aicore__ void k_ub_range_tbuf_get_len() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    LocalTensor<float> t = buf.Get<float>(10);  // 40 B: not a multiple of 32 B
    Duplicate(t, 0.0f, 8);
}

extern "C" __global__ __aicore__ void k_ub_range_empty_tensor() {
    LocalTensor<float> never;
    Duplicate(never, 0.0f, 8);
}

TWIN_CASE(abort_UB_RANGE_count_exceeds_tensor) {
    twin::Launch(k_ub_range_count, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_RANGE_subview_offset) {
    twin::Launch(k_ub_range_subview_offset, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_RANGE_tbuf_get_len) {
    twin::Launch(k_ub_range_tbuf_get_len, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_RANGE_empty_tensor) {
    twin::Launch(k_ub_range_empty_tensor, Config(1));
    return ExpectedAbort();
}

// ---- DATACOPY_ALIGN / DATACOPY_PARAMS -------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_datacopy_count(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
    DataCopy(buf.Get<float>(), gx, 10);  // 40 B: the device would silently copy 32
}

extern "C" __global__ __aicore__ void k_datacopy_block_count(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
    DataCopy(buf.Get<float>(), gx, DataCopyParams{4096, 1, 0, 0});
}

TWIN_CASE(abort_DATACOPY_ALIGN_count_not_32B) {
    std::vector<float> x(64);
    twin::Launch(k_datacopy_count, Config(1, {Region(x)}), Gm(x));
    return ExpectedAbort();
}
TWIN_CASE(abort_DATACOPY_PARAMS_block_count) {
    std::vector<float> x(64);
    twin::Launch(k_datacopy_block_count, Config(1, {Region(x)}), Gm(x));
    return ExpectedAbort();
}

// ---- DATACOPYPAD_PARAMS ---------------------------------------------------------------------------------

// Each variant loads from x into a 256-B UB tensor with one bad parameter.
enum class PadBad : uint32_t { BlockLenNotMultiple, Footprint, PaddingOver32B, BlockCount, BlockLenRange, OutFootprint };

extern "C" __global__ __aicore__ void k_datacopypad_bad(GM_ADDR x, uint32_t which) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x));
    GlobalTensor<half> gh;
    gh.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x));
    LocalTensor<float> t = buf.Get<float>();
    const DataCopyPadExtParams<float> noPad;
    switch (static_cast<PadBad>(which)) {
        case PadBad::BlockLenNotMultiple: DataCopyPad(t, gx, DataCopyExtParams{1, 6, 0, 0, 0}, noPad); break;
        case PadBad::Footprint: DataCopyPad(t, gx, DataCopyExtParams{3, 100, 0, 0, 0}, noPad); break;  // 3 x 128 B
        case PadBad::PaddingOver32B:
            DataCopyPad(buf.Get<half>(), gh, DataCopyExtParams{1, 32, 0, 0, 0},
                        DataCopyPadExtParams<half>{true, 17, 0, half(0.0f)});  // 34 B of left padding
            break;
        case PadBad::BlockCount: DataCopyPad(t, gx, DataCopyExtParams{4096, 4, 0, 0, 0}, noPad); break;
        case PadBad::BlockLenRange: DataCopyPad(t, gx, DataCopyExtParams{1, 2097152, 0, 0, 0}, noPad); break;
        case PadBad::OutFootprint: DataCopyPad(gx, t, DataCopyParams{2, 160, 0, 0}); break;  // 2 x 160 B from 256 B
    }
}

extern "C" __global__ __aicore__ void k_datacopypad_int64_pad(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<int64_t> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(x), 16);
    DataCopyPad(buf.Get<int64_t>(), gx, DataCopyExtParams{1, 16, 0, 0, 0}, DataCopyPadExtParams<int64_t>{true, 1, 0, 5});
}

int RunPadBad(PadBad which) {
    std::vector<float> x(4096);
    twin::Launch(k_datacopypad_bad, Config(1, {Region(x)}), Gm(x), static_cast<uint32_t>(which));
    return ExpectedAbort();
}

TWIN_CASE(abort_DATACOPYPAD_PARAMS_blocklen_not_multiple) { return RunPadBad(PadBad::BlockLenNotMultiple); }
TWIN_CASE(abort_DATACOPYPAD_PARAMS_footprint_exceeds_tensor) { return RunPadBad(PadBad::Footprint); }
TWIN_CASE(abort_DATACOPYPAD_PARAMS_padding_over_32B) { return RunPadBad(PadBad::PaddingOver32B); }
TWIN_CASE(abort_DATACOPYPAD_PARAMS_block_count) { return RunPadBad(PadBad::BlockCount); }
TWIN_CASE(abort_DATACOPYPAD_PARAMS_blocklen_range) { return RunPadBad(PadBad::BlockLenRange); }
TWIN_CASE(abort_DATACOPYPAD_PARAMS_copyout_footprint) { return RunPadBad(PadBad::OutFootprint); }
TWIN_CASE(abort_DATACOPYPAD_PARAMS_int64_pad_value) {
    std::vector<int64_t> x(16);
    twin::Launch(k_datacopypad_int64_pad, Config(1, {Region(x)}), Gm(x));
    return ExpectedAbort();
}

// ---- GM_BOUNDS --------------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_gm_past_set_size(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 16);
    DataCopy(buf.Get<float>(), gx[8], 16);  // elements [8, 24) of a 16-element tensor
}

extern "C" __global__ __aicore__ void k_gm_set_outside(GM_ADDR x) {
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 16);
}

extern "C" __global__ __aicore__ void k_gm_getvalue(GM_ADDR x) {
    GlobalTensor<int32_t> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(x), 4);
    (void)gx.GetValue(4);
}

extern "C" __global__ __aicore__ void k_gm_copyout_past_region(GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<float> gy;
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y));  // size unset: only the region bounds apply
    DataCopyPad(gy, buf.Get<float>(), DataCopyExtParams{1, 128, 0, 0, 0});
}

extern "C" __global__ __aicore__ void k_gm_tiling_short(GM_ADDR tiling) {
    struct Big {
        uint64_t fields[8];
    };
    GET_TILING_DATA_WITH_STRUCT(Big, t, tiling);
    (void)t;
}

TWIN_CASE(abort_GM_BOUNDS_past_set_size) {
    std::vector<float> x(64);
    twin::Launch(k_gm_past_set_size, Config(1, {Region(x)}), Gm(x));
    return ExpectedAbort();
}
TWIN_CASE(abort_GM_BOUNDS_set_buffer_unregistered) {
    std::vector<float> registered(64), other(64);
    twin::Launch(k_gm_set_outside, Config(1, {Region(registered)}), Gm(other));
    return ExpectedAbort();
}
TWIN_CASE(abort_GM_BOUNDS_getvalue) {
    std::vector<int32_t> x(8);
    twin::Launch(k_gm_getvalue, Config(1, {Region(x)}), Gm(x));
    return ExpectedAbort();
}
TWIN_CASE(abort_GM_BOUNDS_copyout_past_region) {
    std::vector<float> y(25);  // 100 B registered, 128 B written
    twin::Launch(k_gm_copyout_past_region, Config(1, {Region(y)}), Gm(y));
    return ExpectedAbort();
}
TWIN_CASE(abort_GM_BOUNDS_tiling_too_short) {
    std::vector<uint64_t> tiling(4);
    twin::Launch(k_gm_tiling_short, Config(1, {Region(tiling)}), Gm(tiling));
    return ExpectedAbort();
}

// The region lookup is a search over regions sorted by address: a range inside a large region passes even
// when a smaller region nested in it (or registered after it) ends earlier; a range across two adjacent
// regions is inside neither.
TWIN_CASE(ok_GM_BOUNDS_nested_and_unsorted_regions) {
    std::vector<float> big(256), other(64);
    const twin::GmRegion nested{big.data() + 16, 4 * sizeof(float)};
    twin::Launch(k_gm_set_outside, Config(1, {Region(other), nested, Region(big), nested}),
                 Gm(big) + 100 * sizeof(float));  // floats [100, 116): only `big` holds them
    return Verdict();
}
TWIN_CASE(abort_GM_BOUNDS_across_two_regions) {
    std::vector<float> x(64);
    const twin::GmRegion low{x.data(), 32 * sizeof(float)};
    const twin::GmRegion high{x.data() + 32, 32 * sizeof(float)};
    twin::Launch(k_gm_set_outside, Config(1, {high, low}), Gm(x) + 24 * sizeof(float));  // [24, 40)
    return ExpectedAbort();
}

// ---- QUE_STATE / QUE_DEPTH --------------------------------------------------------------------------------

enum class QueBad : uint32_t { AllocWithoutFree, DoubleFree, DeQueEmpty, InitTwice, EnQueStale, FreeEnqueued, EnQueTBuf };

extern "C" __global__ __aicore__ void k_que_state(uint32_t which) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    TBuf<TPosition::VECCALC> scratch;
    pipe.InitBuffer(q, 1, 256);
    pipe.InitBuffer(scratch, 256);
    LocalTensor<float> t = q.AllocTensor<float>();
    switch (static_cast<QueBad>(which)) {
        case QueBad::AllocWithoutFree: (void)q.AllocTensor<float>(); break;
        case QueBad::DoubleFree:
            q.FreeTensor(t);
            q.FreeTensor(t);
            break;
        case QueBad::DeQueEmpty: (void)q.DeQue<float>(); break;
        case QueBad::InitTwice: pipe.InitBuffer(q, 1, 256); break;
        case QueBad::EnQueStale:
            q.FreeTensor(t);
            q.EnQue(t);
            break;
        case QueBad::FreeEnqueued:
            q.EnQue(t);
            q.FreeTensor(t);
            break;
        case QueBad::EnQueTBuf: q.EnQue(scratch.Get<float>()); break;
    }
}

extern "C" __global__ __aicore__ void k_que_depth() {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 256);
    LocalTensor<float> a = q.AllocTensor<float>();
    LocalTensor<float> b = q.AllocTensor<float>();
    q.EnQue(a);
    q.EnQue(b);  // depth 1
}

int RunQueBad(QueBad which) {
    twin::Launch(k_que_state, Config(1), static_cast<uint32_t>(which));
    return ExpectedAbort();
}

TWIN_CASE(abort_QUE_STATE_alloc_without_free) { return RunQueBad(QueBad::AllocWithoutFree); }
TWIN_CASE(abort_QUE_STATE_double_free) { return RunQueBad(QueBad::DoubleFree); }
TWIN_CASE(abort_QUE_STATE_deque_empty) { return RunQueBad(QueBad::DeQueEmpty); }
TWIN_CASE(abort_QUE_STATE_init_twice) { return RunQueBad(QueBad::InitTwice); }
TWIN_CASE(abort_QUE_STATE_enque_freed_tensor) { return RunQueBad(QueBad::EnQueStale); }
TWIN_CASE(abort_QUE_STATE_free_enqueued) { return RunQueBad(QueBad::FreeEnqueued); }
TWIN_CASE(abort_QUE_STATE_enque_tbuf_tensor) { return RunQueBad(QueBad::EnQueTBuf); }
TWIN_CASE(abort_QUE_DEPTH_enque_beyond_depth) {
    twin::Launch(k_que_depth, Config(1));
    return ExpectedAbort();
}

// ---- QUE_HAZARD -------------------------------------------------------------------------------------------

enum class Hazard : uint32_t { ReadVecinBeforeDeQue, CopyOutBeforeDeQue, UseAfterFree, CopyInAfterEnQue, WriteVecoutAfterEnQue };

extern "C" __global__ __aicore__ void k_que_hazard(GM_ADDR x, uint32_t which) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> in;
    TQue<TPosition::VECOUT, 1> out;
    TBuf<TPosition::VECCALC> scratch;
    pipe.InitBuffer(in, 1, 256);
    pipe.InitBuffer(out, 1, 256);
    pipe.InitBuffer(scratch, 256);
    GlobalTensor<float> gx;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
    LocalTensor<float> s = scratch.Get<float>();
    switch (static_cast<Hazard>(which)) {
        case Hazard::ReadVecinBeforeDeQue: {
            LocalTensor<float> t = in.AllocTensor<float>();
            DataCopy(t, gx, 64);
            Adds(s, t, 1.0f, 64);  // the load may still be in flight: EnQue/DeQue (MTE2->V) missing
            break;
        }
        case Hazard::CopyOutBeforeDeQue: {
            LocalTensor<float> t = out.AllocTensor<float>();
            Duplicate(t, 1.0f, 64);
            DataCopy(gx, t, 64);  // V->MTE3 missing
            break;
        }
        case Hazard::UseAfterFree: {
            LocalTensor<float> t = in.AllocTensor<float>();
            DataCopy(t, gx, 64);
            in.EnQue(t);
            LocalTensor<float> d = in.DeQue<float>();
            in.FreeTensor(d);
            Adds(s, d, 1.0f, 64);
            break;
        }
        case Hazard::CopyInAfterEnQue: {
            LocalTensor<float> t = in.AllocTensor<float>();
            in.EnQue(t);
            DataCopy(t, gx, 64);
            break;
        }
        case Hazard::WriteVecoutAfterEnQue: {
            LocalTensor<float> t = out.AllocTensor<float>();
            out.EnQue(t);
            Duplicate(t, 1.0f, 64);
            break;
        }
    }
}

int RunHazard(Hazard which) {
    std::vector<float> x(64);
    twin::Launch(k_que_hazard, Config(1, {Region(x)}), Gm(x), static_cast<uint32_t>(which));
    return ExpectedAbort();
}

TWIN_CASE(abort_QUE_HAZARD_vector_reads_vecin_before_deque) { return RunHazard(Hazard::ReadVecinBeforeDeQue); }
TWIN_CASE(abort_QUE_HAZARD_copyout_before_deque) { return RunHazard(Hazard::CopyOutBeforeDeQue); }
TWIN_CASE(abort_QUE_HAZARD_use_after_free) { return RunHazard(Hazard::UseAfterFree); }
TWIN_CASE(abort_QUE_HAZARD_copyin_after_enque) { return RunHazard(Hazard::CopyInAfterEnQue); }
TWIN_CASE(abort_QUE_HAZARD_vecout_write_after_enque) { return RunHazard(Hazard::WriteVecoutAfterEnQue); }

// ---- CAST_MODE / DTYPE / OVERLAP --------------------------------------------------------------------------

enum class BadOp : uint32_t {
    CastBf16None,
    CastBf16Odd,
    CastHalfToFloatRint,
    CastHalfUnknown,
    CastBf16OutOfRange,
    CastInt32Unknown,
    AddBf16,
    DivInt32,
    SqrtInt32,
    AxpyHalfFloat,
    CastFloatToUint8,
    DuplicateInt8,
    OverlapPartialAdd,
    OverlapWideningCast,
    OverlapMixedAxpy,
};

extern "C" __global__ __aicore__ void k_bad_op(uint32_t which) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    LocalTensor<float> f = buf.GetWithOffset<float>(256, 0);
    LocalTensor<float> f2 = buf.GetWithOffset<float>(256, 1024);
    LocalTensor<half> h = buf.GetWithOffset<half>(256, 2048);
    LocalTensor<bfloat16_t> b = buf.GetWithOffset<bfloat16_t>(256, 2560);
    LocalTensor<int32_t> i = buf.GetWithOffset<int32_t>(256, 3072);
    switch (static_cast<BadOp>(which)) {
        case BadOp::CastBf16None: Cast(b, f, RoundMode::CAST_NONE, 64); break;
        case BadOp::CastBf16Odd: Cast(b, f, RoundMode::CAST_ODD, 64); break;
        case BadOp::CastHalfToFloatRint: Cast(f, h, RoundMode::CAST_RINT, 64); break;
        // Modes outside a conversion's dav-c220 switch take the library's aborting default branch.
        case BadOp::CastHalfUnknown: Cast(h, f, RoundMode::UNKNOWN, 64); break;
        case BadOp::CastBf16OutOfRange: Cast(b, f, static_cast<RoundMode>(9), 64); break;
        case BadOp::CastInt32Unknown: Cast(i, f, RoundMode::UNKNOWN, 64); break;
        case BadOp::AddBf16: Add(b, b, b, 64); break;
        case BadOp::DivInt32: Div(i, i, i, 64); break;
        case BadOp::SqrtInt32: Sqrt(i, i, 64); break;
        case BadOp::AxpyHalfFloat: Axpy(h, f, 2.0f, 64); break;
        // not in the 910B table (float converts to uint8 only through half)
        case BadOp::CastFloatToUint8: Cast(buf.GetWithOffset<uint8_t>(256, 3072), f, RoundMode::CAST_RINT, 64); break;
        case BadOp::DuplicateInt8: Duplicate(buf.Get<int8_t>(), static_cast<int8_t>(1), 64); break;
        case BadOp::OverlapPartialAdd: Add(f[8], f, f2, 64); break;
        case BadOp::OverlapWideningCast: Cast(f, f.ReinterpretCast<half>(), RoundMode::CAST_NONE, 64); break;
        case BadOp::OverlapMixedAxpy: Axpy(f, f.ReinterpretCast<half>(), half(2.0f), 64); break;
    }
}

int RunBadOp(BadOp which) {
    twin::Launch(k_bad_op, Config(1), static_cast<uint32_t>(which));
    return ExpectedAbort();
}

TWIN_CASE(abort_CAST_MODE_float_to_bf16_none) { return RunBadOp(BadOp::CastBf16None); }
TWIN_CASE(abort_CAST_MODE_float_to_bf16_odd) { return RunBadOp(BadOp::CastBf16Odd); }
TWIN_CASE(abort_CAST_MODE_half_to_float_rint) { return RunBadOp(BadOp::CastHalfToFloatRint); }
TWIN_CASE(abort_CAST_MODE_float_to_half_unknown) { return RunBadOp(BadOp::CastHalfUnknown); }
TWIN_CASE(abort_CAST_MODE_float_to_bf16_out_of_range) { return RunBadOp(BadOp::CastBf16OutOfRange); }
TWIN_CASE(abort_CAST_MODE_float_to_int32_unknown) { return RunBadOp(BadOp::CastInt32Unknown); }
TWIN_CASE(abort_DTYPE_bf16_add) { return RunBadOp(BadOp::AddBf16); }
TWIN_CASE(abort_DTYPE_int32_div) { return RunBadOp(BadOp::DivInt32); }
TWIN_CASE(abort_DTYPE_int32_sqrt) { return RunBadOp(BadOp::SqrtInt32); }
TWIN_CASE(abort_DTYPE_axpy_half_dst_float_src) { return RunBadOp(BadOp::AxpyHalfFloat); }
TWIN_CASE(abort_DTYPE_cast_float_to_uint8) { return RunBadOp(BadOp::CastFloatToUint8); }
TWIN_CASE(abort_DTYPE_duplicate_int8) { return RunBadOp(BadOp::DuplicateInt8); }
TWIN_CASE(abort_OVERLAP_partial_add) { return RunBadOp(BadOp::OverlapPartialAdd); }
TWIN_CASE(abort_OVERLAP_widening_cast_in_place) { return RunBadOp(BadOp::OverlapWideningCast); }
TWIN_CASE(abort_OVERLAP_mixed_axpy_in_place) { return RunBadOp(BadOp::OverlapMixedAxpy); }

// ---- EVENT_ID / EVENT_PAIR / PIPE_BARRIER -----------------------------------------------------------------

enum class EventBad : uint32_t { IdOutOfRange, PoolExhausted, PoolHeldByQueues, ReleaseUnallocated, DoubleSet, WaitWithoutSet, PendingAtEnd, ClashWithQueue };

extern "C" __global__ __aicore__ void k_event_bad(uint32_t which) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 8, 256);
    switch (static_cast<EventBad>(which)) {
        case EventBad::IdOutOfRange: SetFlag<HardEvent::V_S>(8); break;
        case EventBad::PoolExhausted:
            for (int k = 0; k < 9; ++k) (void)pipe.AllocEventID<HardEvent::V_MTE2>();
            break;
        case EventBad::PoolHeldByQueues: {
            // Every freed VECIN buffer holds a V_MTE2 ID until it is allocated again: 8 frees use all 8.
            LocalTensor<float> t[8];
            for (auto& x : t) x = q.AllocTensor<float>();
            for (auto& x : t) q.FreeTensor(x);
            (void)pipe.AllocEventID<HardEvent::V_MTE2>();
            break;
        }
        case EventBad::ReleaseUnallocated: pipe.ReleaseEventID<HardEvent::V_S>(3); break;
        case EventBad::DoubleSet:
            SetFlag<HardEvent::MTE2_V>(1);
            SetFlag<HardEvent::MTE2_V>(1);
            break;
        case EventBad::WaitWithoutSet: WaitFlag<HardEvent::V_MTE3>(2); break;
        case EventBad::PendingAtEnd: SetFlag<HardEvent::V_S>(0); break;
        case EventBad::ClashWithQueue: {
            LocalTensor<float> t = q.AllocTensor<float>();
            q.FreeTensor(t);                    // the queue now waits on V_MTE2 ID 0
            SetFlag<HardEvent::V_MTE2>(0);      // a literal ID colliding with it
            break;
        }
    }
}

extern "C" __global__ __aicore__ void k_pipe_barrier_s() { PipeBarrier<PIPE_S>(); }

int RunEventBad(EventBad which) {
    twin::Launch(k_event_bad, Config(1), static_cast<uint32_t>(which));
    return ExpectedAbort();
}

TWIN_CASE(abort_EVENT_ID_out_of_range) { return RunEventBad(EventBad::IdOutOfRange); }
TWIN_CASE(abort_EVENT_ID_pool_exhausted) { return RunEventBad(EventBad::PoolExhausted); }
TWIN_CASE(abort_EVENT_ID_pool_held_by_queues) { return RunEventBad(EventBad::PoolHeldByQueues); }
TWIN_CASE(abort_EVENT_ID_release_unallocated) { return RunEventBad(EventBad::ReleaseUnallocated); }
TWIN_CASE(abort_EVENT_PAIR_double_set) { return RunEventBad(EventBad::DoubleSet); }
TWIN_CASE(abort_EVENT_PAIR_wait_without_set) { return RunEventBad(EventBad::WaitWithoutSet); }
TWIN_CASE(abort_EVENT_PAIR_pending_at_block_end) { return RunEventBad(EventBad::PendingAtEnd); }
TWIN_CASE(abort_EVENT_PAIR_clash_with_queue_event) { return RunEventBad(EventBad::ClashWithQueue); }
TWIN_CASE(abort_PIPE_BARRIER_pipe_s) {
    twin::Launch(k_pipe_barrier_s, Config(1));
    return ExpectedAbort();
}

// ---- BLOCK ------------------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_two_pipes() {
    TPipe first;
    TPipe second;
}

TWIN_CASE(abort_BLOCK_get_block_idx_outside_launch) {
    std::printf("%lld\n", static_cast<long long>(GetBlockIdx()));
    return ExpectedAbort();
}
TWIN_CASE(abort_BLOCK_tpipe_outside_launch) {
    TPipe pipe;
    return ExpectedAbort();
}
TWIN_CASE(abort_BLOCK_two_live_pipes) {
    twin::Launch(k_two_pipes, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_BLOCK_block_dim_zero) {
    twin::Launch(k_two_pipes, Config(0));
    return ExpectedAbort();
}

// ---- ok: double-buffered vector add ----------------------------------------------------------------------

struct AddTiling {
    uint64_t total;
    uint32_t chunk;
    uint32_t reserved;
};

// Each block owns a contiguous range starting at an arbitrary element (so GM starts are unaligned), walked in
// chunks with two buffers per queue: chunk i+1 is loaded (and enqueued, depth 2) before chunk i is computed.
class KernelAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTiling& t, TPipe* pipe) {
        const uint64_t blocks = static_cast<uint64_t>(GetBlockNum());
        const uint64_t idx = static_cast<uint64_t>(GetBlockIdx());
        const uint64_t per = t.total / blocks;
        const uint64_t rem = t.total % blocks;
        const uint64_t begin = idx * per + (idx < rem ? idx : rem);
        length_ = per + (idx < rem ? 1 : 0);
        chunk_ = t.chunk;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + begin, length_);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + begin, length_);
        zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z) + begin, length_);
        pipe->InitBuffer(inX_, 2, chunk_ * sizeof(float));
        pipe->InitBuffer(inY_, 2, chunk_ * sizeof(float));
        pipe->InitBuffer(outZ_, 2, chunk_ * sizeof(float));
    }

    __aicore__ inline void Process() {
        const uint64_t chunks = (length_ + chunk_ - 1) / chunk_;
        if (chunks == 0) return;
        CopyIn(0);
        for (uint64_t c = 0; c < chunks; ++c) {
            if (c + 1 < chunks) CopyIn(c + 1);
            Compute(c);
            CopyOut(c);
        }
    }

private:
    __aicore__ inline uint32_t Count(uint64_t c) const {
        const uint64_t left = length_ - c * chunk_;
        return left < chunk_ ? static_cast<uint32_t>(left) : chunk_;
    }

    __aicore__ inline void CopyIn(uint64_t c) {
        const uint32_t n = Count(c);
        LocalTensor<float> x = inX_.AllocTensor<float>();
        LocalTensor<float> y = inY_.AllocTensor<float>();
        DataCopyPad(x, xGm_[c * chunk_], DataCopyExtParams{1, n * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
        DataCopyPad(y, yGm_[c * chunk_], DataCopyParams{1, static_cast<uint16_t>(n * 4), 0, 0},
                    DataCopyPadParams{false, 0, 0, 0});
        inX_.EnQue(x);
        inY_.EnQue(y);
    }

    __aicore__ inline void Compute(uint64_t c) {
        const int32_t n = static_cast<int32_t>(Count(c));
        LocalTensor<float> x = inX_.DeQue<float>();
        LocalTensor<float> y = inY_.DeQue<float>();
        LocalTensor<float> z = outZ_.AllocTensor<float>();
        Add(z, x, y, n);
        outZ_.EnQue(z);
        inX_.FreeTensor(x);
        inY_.FreeTensor(y);
    }

    __aicore__ inline void CopyOut(uint64_t c) {
        const uint32_t n = Count(c);
        LocalTensor<float> z = outZ_.DeQue<float>();
        DataCopyPad(zGm_[c * chunk_], z, DataCopyExtParams{1, n * 4, 0, 0, 0});
        outZ_.FreeTensor(z);
    }

    TQue<TPosition::VECIN, 2> inX_;
    TQue<TPosition::VECIN, 2> inY_;
    TQue<TPosition::VECOUT, 1> outZ_;
    GlobalTensor<float> xGm_, yGm_, zGm_;
    uint64_t length_ = 0;
    uint32_t chunk_ = 0;
};

extern "C" __global__ __aicore__ void k_vector_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
    GET_TILING_DATA_WITH_STRUCT(AddTiling, t, tiling);
    TPipe pipe;
    KernelAdd op;
    op.Init(x, y, z, t, &pipe);
    op.Process();
}

twin::LaunchResult RunVectorAdd(std::vector<float>& x, std::vector<float>& y, std::vector<float>& z, uint32_t blockDim,
                                uint32_t chunk, uint32_t threads = 0) {
    std::vector<AddTiling> tiling{{x.size(), chunk, 0}};
    twin::LaunchConfig cfg = Config(blockDim, {Region(x), Region(y), Region(z), Region(tiling)});
    cfg.threads = threads;
    return twin::Launch(k_vector_add, cfg, Gm(x), Gm(y), Gm(z), Gm(tiling));
}

TWIN_CASE(ok_vector_add_double_buffered) {
    const size_t n = 100003;
    const uint32_t blockDim = 7, chunk = 1000;
    std::vector<float> x(n), y(n), z(n, -1.0f);
    for (size_t i = 0; i < n; ++i) {
        x[i] = std::sin(static_cast<float>(i)) * 1e3f;
        y[i] = 1.0f / (static_cast<float>(i) + 0.5f);
    }
    const twin::LaunchResult r = RunVectorAdd(x, y, z, blockDim, chunk);
    for (size_t i = 0; i < n; ++i) Expect(Bits(z[i]) == Bits(x[i] + y[i]), "z[%zu] = %a, want %a", i, z[i], x[i] + y[i]);

    const twin::BlockCounters t = r.total();
    Expect(t.gmReadBytes == 8 * n, "gmReadBytes %llu", static_cast<unsigned long long>(t.gmReadBytes));
    Expect(t.gmWriteBytes == 4 * n, "gmWriteBytes %llu", static_cast<unsigned long long>(t.gmWriteBytes));
    Expect(t.vectorElements == n, "vectorElements %llu", static_cast<unsigned long long>(t.vectorElements));
    uint64_t chunks = 0;
    for (uint32_t b = 0; b < blockDim; ++b) {
        const uint64_t len = n / blockDim + (b < n % blockDim ? 1 : 0);
        chunks += (len + chunk - 1) / chunk;
        Expect(r.blocks[b].ubBytesUsed == 6 * chunk * 4, "block %u ubBytesUsed %u", b, r.blocks[b].ubBytesUsed);
    }
    Expect(t.dmaCalls == 3 * chunks, "dmaCalls %llu, want %llu", static_cast<unsigned long long>(t.dmaCalls),
           static_cast<unsigned long long>(3 * chunks));
    Expect(t.vectorCalls == chunks, "vectorCalls %llu", static_cast<unsigned long long>(t.vectorCalls));
    return Verdict();
}

// ---- ok: Cast ---------------------------------------------------------------------------------------------

constexpr uint32_t kCastChunk = 8192;

// Streams n elements of S from GM through Cast to D in chunks (TBuf scratch, DataCopyPad both ways).
template <class D, class S>
__global__ __aicore__ void k_cast_stream(GM_ADDR src, GM_ADDR dst, uint32_t n, RoundMode mode) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> sBuf, dBuf;
    pipe.InitBuffer(sBuf, kCastChunk * sizeof(S));
    pipe.InitBuffer(dBuf, kCastChunk * sizeof(D));
    GlobalTensor<S> gs;
    GlobalTensor<D> gd;
    gs.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(src), n);
    gd.SetGlobalBuffer(reinterpret_cast<__gm__ D*>(dst), n);
    LocalTensor<S> ls = sBuf.Get<S>();
    LocalTensor<D> ld = dBuf.Get<D>();
    for (uint32_t off = 0; off < n; off += kCastChunk) {
        const uint32_t c = n - off < kCastChunk ? n - off : kCastChunk;
        DataCopyPad(ls, gs[off], DataCopyExtParams{1, static_cast<uint32_t>(c * sizeof(S)), 0, 0, 0},
                    DataCopyPadExtParams<S>{});
        Cast(ld, ls, mode, c);
        DataCopyPad(gd[off], ld, DataCopyExtParams{1, static_cast<uint32_t>(c * sizeof(D)), 0, 0, 0});
    }
}

template <class D, class S>
std::vector<D> CastOnTwin(std::vector<S> src, RoundMode mode,
                          twin::FloatOverflowMode overflow = twin::FloatOverflowMode::InfNan) {
    std::vector<D> dst(src.size());
    twin::LaunchConfig cfg = Config(1, {Region(src), Region(dst)});
    cfg.overflowMode = overflow;
    twin::Launch(k_cast_stream<D, S>, cfg, Gm(src), Gm(dst), static_cast<uint32_t>(src.size()), mode);
    return dst;
}

constexpr RoundMode kModes[] = {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL,
                                RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC, RoundMode::CAST_ODD};
const char* const kModeNames[] = {"RINT", "FLOOR", "CEIL", "ROUND", "TRUNC", "ODD"};

// Expected binary16 bits of float inputs, derived by hand: columns RINT, FLOOR, CEIL, ROUND, TRUNC, ODD.
struct HalfRow {
    uint32_t in;
    uint16_t out[6];
};
const HalfRow kHalfRows[] = {
    {0x00000000, {0x0000, 0x0000, 0x0000, 0x0000, 0x0000, 0x0000}},  // +0
    {0x80000000, {0x8000, 0x8000, 0x8000, 0x8000, 0x8000, 0x8000}},  // -0
    {0x3f800000, {0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00}},  // 1
    {0x3f801000, {0x3c00, 0x3c00, 0x3c01, 0x3c01, 0x3c00, 0x3c01}},  // 1 + 2^-11: tie, even is below
    {0x3f803000, {0x3c02, 0x3c01, 0x3c02, 0x3c02, 0x3c01, 0x3c01}},  // 1 + 3*2^-11: tie, even is above
    {0x3f801001, {0x3c01, 0x3c00, 0x3c01, 0x3c01, 0x3c00, 0x3c01}},  // just above a tie
    {0xbf801000, {0xbc00, 0xbc01, 0xbc00, 0xbc01, 0xbc00, 0xbc01}},  // -(1 + 2^-11)
    {0x3f7ff000, {0x3c00, 0x3bff, 0x3c00, 0x3c00, 0x3bff, 0x3bff}},  // 1 - 2^-12: tie below 1
    {0x3dcccccd, {0x2e66, 0x2e66, 0x2e67, 0x2e66, 0x2e66, 0x2e67}},  // 0.1f
    {0xbfc00000, {0xbe00, 0xbe00, 0xbe00, 0xbe00, 0xbe00, 0xbe00}},  // -1.5 exact
    {0x477fe000, {0x7bff, 0x7bff, 0x7bff, 0x7bff, 0x7bff, 0x7bff}},  // 65504 = max half
    {0x477fefff, {0x7bff, 0x7bff, 0x7c00, 0x7bff, 0x7bff, 0x7bff}},  // just below 65520
    {0x477ff000, {0x7c00, 0x7bff, 0x7c00, 0x7c00, 0x7bff, 0x7bff}},  // 65520: tie between max and 2^16
    {0x501502f9, {0x7c00, 0x7bff, 0x7c00, 0x7c00, 0x7bff, 0x7bff}},  // 1e10: overflow
    {0xd01502f9, {0xfc00, 0xfc00, 0xfbff, 0xfc00, 0xfbff, 0xfbff}},  // -1e10
    {0x7f800000, {0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00}},  // +Inf
    {0xff800000, {0xfc00, 0xfc00, 0xfc00, 0xfc00, 0xfc00, 0xfc00}},  // -Inf
    {0x7fc00000, {0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00}},  // qNaN
    {0xffc00000, {0xfe00, 0xfe00, 0xfe00, 0xfe00, 0xfe00, 0xfe00}},  // -qNaN
    {0x7f800001, {0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00, 0x7e00}},  // sNaN comes out quiet
    {0x38800000, {0x0400, 0x0400, 0x0400, 0x0400, 0x0400, 0x0400}},  // 2^-14 = min normal
    {0x387fc000, {0x03ff, 0x03ff, 0x03ff, 0x03ff, 0x03ff, 0x03ff}},  // max subnormal
    {0x387fe000, {0x0400, 0x03ff, 0x0400, 0x0400, 0x03ff, 0x03ff}},  // tie between max subnormal and min normal
    {0x33800000, {0x0001, 0x0001, 0x0001, 0x0001, 0x0001, 0x0001}},  // 2^-24 = min subnormal
    {0x33000000, {0x0000, 0x0000, 0x0001, 0x0001, 0x0000, 0x0001}},  // 2^-25: tie with zero
    {0x33000001, {0x0001, 0x0000, 0x0001, 0x0001, 0x0000, 0x0001}},  // just above it
    {0x33c00000, {0x0002, 0x0001, 0x0002, 0x0002, 0x0001, 0x0001}},  // 1.5 * 2^-24: tie, even is above
    {0x00000001, {0x0000, 0x0000, 0x0001, 0x0000, 0x0000, 0x0001}},  // min float subnormal
    {0x80000001, {0x8000, 0x8001, 0x8000, 0x8000, 0x8000, 0x8001}},  // its negative
};

// Expected bfloat16 bits; columns RINT, FLOOR, CEIL, ROUND, TRUNC.
struct Bf16Row {
    uint32_t in;
    uint16_t out[5];
};
const Bf16Row kBf16Rows[] = {
    {0x00000000, {0x0000, 0x0000, 0x0000, 0x0000, 0x0000}},
    {0x80000000, {0x8000, 0x8000, 0x8000, 0x8000, 0x8000}},
    {0x3f800000, {0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80}},
    {0x3f808000, {0x3f80, 0x3f80, 0x3f81, 0x3f81, 0x3f80}},  // tie, even is below
    {0x3f818000, {0x3f82, 0x3f81, 0x3f82, 0x3f82, 0x3f81}},  // tie, even is above
    {0x3f808001, {0x3f81, 0x3f80, 0x3f81, 0x3f81, 0x3f80}},
    {0xbf808000, {0xbf80, 0xbf81, 0xbf80, 0xbf81, 0xbf80}},
    {0x3dcccccd, {0x3dcd, 0x3dcc, 0x3dcd, 0x3dcd, 0x3dcc}},  // 0.1f
    {0x7f7f7fff, {0x7f7f, 0x7f7f, 0x7f80, 0x7f7f, 0x7f7f}},
    {0x7f7f8000, {0x7f80, 0x7f7f, 0x7f80, 0x7f80, 0x7f7f}},  // tie between max bf16 and 2^128
    {0x7f7fffff, {0x7f80, 0x7f7f, 0x7f80, 0x7f80, 0x7f7f}},  // FLT_MAX
    {0xff7fffff, {0xff80, 0xff80, 0xff7f, 0xff80, 0xff7f}},  // -FLT_MAX
    {0x7f800000, {0x7f80, 0x7f80, 0x7f80, 0x7f80, 0x7f80}},
    {0xff800000, {0xff80, 0xff80, 0xff80, 0xff80, 0xff80}},
    {0x7fc00000, {0x7fc0, 0x7fc0, 0x7fc0, 0x7fc0, 0x7fc0}},
    {0x7f800001, {0x7fc0, 0x7fc0, 0x7fc0, 0x7fc0, 0x7fc0}},  // sNaN comes out quiet
    {0xffc00001, {0xffc0, 0xffc0, 0xffc0, 0xffc0, 0xffc0}},
    {0x00800000, {0x0080, 0x0080, 0x0080, 0x0080, 0x0080}},  // min normal float
    {0x007fffff, {0x0080, 0x007f, 0x0080, 0x0080, 0x007f}},  // max subnormal float
    {0x00008000, {0x0000, 0x0000, 0x0001, 0x0001, 0x0000}},  // subnormal tie with zero
    {0x00018000, {0x0002, 0x0001, 0x0002, 0x0002, 0x0001}},  // subnormal tie, even is above
    {0x00008001, {0x0001, 0x0000, 0x0001, 0x0001, 0x0000}},
};

TWIN_CASE(ok_cast_float_to_half_boundaries) {
    std::vector<float> in;
    for (const HalfRow& row : kHalfRows) in.push_back(FromBits(row.in));
    for (int m = 0; m < 6; ++m) {
        const std::vector<half> out = CastOnTwin<half>(in, kModes[m]);
        for (size_t i = 0; i < in.size(); ++i) {
            Expect(out[i].bits == kHalfRows[i].out[m], "float 0x%08x -> half %s: 0x%04x, want 0x%04x", kHalfRows[i].in,
                   kModeNames[m], out[i].bits, kHalfRows[i].out[m]);
        }
    }
    const std::vector<half> none = CastOnTwin<half>(in, RoundMode::CAST_NONE);  // NONE rounds like RINT
    for (size_t i = 0; i < in.size(); ++i) Expect(none[i].bits == kHalfRows[i].out[0], "CAST_NONE row %zu", i);
    return Verdict();
}

TWIN_CASE(ok_cast_float_to_bf16_boundaries) {
    std::vector<float> in;
    for (const Bf16Row& row : kBf16Rows) in.push_back(FromBits(row.in));
    for (int m = 0; m < 5; ++m) {
        const std::vector<bfloat16_t> out = CastOnTwin<bfloat16_t>(in, kModes[m]);
        for (size_t i = 0; i < in.size(); ++i) {
            Expect(out[i].bits == kBf16Rows[i].out[m], "float 0x%08x -> bf16 %s: 0x%04x, want 0x%04x", kBf16Rows[i].in,
                   kModeNames[m], out[i].bits, kBf16Rows[i].out[m]);
        }
    }
    return Verdict();
}

// Saturation mode (the device's float-overflow mode, CTRL[48] clear): a conversion to half/bf16 that gives
// +-inf gives +-MAX instead and a NaN gives +0; every other result is the IEEE one. Checked on the boundary
// rows in every round mode, with the IEEE columns above as the reference.
uint16_t Saturated(uint16_t ieee, uint16_t expMask, uint16_t maxBits) {
    if ((ieee & expMask) != expMask) return ieee;
    return (ieee & ~(0x8000 | expMask) & 0xFFFF) != 0 ? 0 : static_cast<uint16_t>((ieee & 0x8000) | maxBits);
}

TWIN_CASE(ok_saturation_mode_casts) {
    constexpr auto kSat = twin::FloatOverflowMode::Saturation;
    std::vector<float> hin, bin;
    for (const HalfRow& row : kHalfRows) hin.push_back(FromBits(row.in));
    for (const Bf16Row& row : kBf16Rows) bin.push_back(FromBits(row.in));
    int changed = 0;
    for (int m = 0; m < 6; ++m) {
        const std::vector<half> out = CastOnTwin<half>(hin, kModes[m], kSat);
        for (size_t i = 0; i < hin.size(); ++i) {
            const uint16_t want = Saturated(kHalfRows[i].out[m], 0x7C00, 0x7BFF);
            changed += want != kHalfRows[i].out[m];
            Expect(out[i].bits == want, "saturation: float 0x%08x -> half %s: 0x%04x, want 0x%04x", kHalfRows[i].in,
                   kModeNames[m], out[i].bits, want);
        }
    }
    for (int m = 0; m < 5; ++m) {
        const std::vector<bfloat16_t> out = CastOnTwin<bfloat16_t>(bin, kModes[m], kSat);
        for (size_t i = 0; i < bin.size(); ++i) {
            const uint16_t want = Saturated(kBf16Rows[i].out[m], 0x7F80, 0x7F7F);
            changed += want != kBf16Rows[i].out[m];
            Expect(out[i].bits == want, "saturation: float 0x%08x -> bf16 %s: 0x%04x, want 0x%04x", kBf16Rows[i].in,
                   kModeNames[m], out[i].bits, want);
        }
    }
    Expect(changed > 0, "the boundary rows have no inf or NaN result to saturate");
    // Widening is exact in both modes: half/bf16 -> float keeps inf and NaN.
    const std::vector<half> specials = {half(INFINITY), half(-INFINITY), half(NAN)};
    const std::vector<float> wide = CastOnTwin<float>(specials, RoundMode::CAST_NONE, kSat);
    Expect(std::isinf(wide[0]) && wide[0] > 0 && std::isinf(wide[1]) && wide[1] < 0 && std::isnan(wide[2]),
           "saturation mode changed a widening cast");
    return Verdict();
}

// Every half and bf16 bit pattern widens exactly, and narrows back (RINT) to itself.
TWIN_CASE(ok_cast_widening_exact_all_patterns) {
    std::vector<half> h(65536);
    std::vector<bfloat16_t> b(65536);
    for (uint32_t v = 0; v < 65536; ++v) h[v].bits = b[v].bits = static_cast<uint16_t>(v);
    const std::vector<float> hf = CastOnTwin<float>(h, RoundMode::CAST_NONE);
    const std::vector<float> bf = CastOnTwin<float>(b, RoundMode::CAST_NONE);
    for (uint32_t v = 0; v < 65536; ++v) {
        const int exp = (v >> 10) & 0x1f;
        const int mant = v & 0x3ff;
        const double mag = exp == 0 ? std::ldexp(mant, -24) : exp == 31 ? INFINITY : std::ldexp(1024 + mant, exp - 25);
        const double want = (v & 0x8000) ? -mag : mag;
        if (exp == 31 && mant != 0) {
            Expect(std::isnan(hf[v]), "half 0x%04x should widen to NaN", v);
        } else {
            Expect(static_cast<double>(hf[v]) == want && std::signbit(hf[v]) == std::signbit(want),
                   "half 0x%04x -> %a, want %a", v, hf[v], want);
        }
        Expect(Bits(bf[v]) == v << 16, "bf16 0x%04x -> 0x%08x", v, Bits(bf[v]));
    }
    const std::vector<half> hBack = CastOnTwin<half>(hf, RoundMode::CAST_RINT);
    const std::vector<bfloat16_t> bBack = CastOnTwin<bfloat16_t>(bf, RoundMode::CAST_RINT);
    for (uint32_t v = 0; v < 65536; ++v) {
        const bool nan = ((v >> 10) & 0x1f) == 31 && (v & 0x3ff) != 0;
        if (!nan) Expect(hBack[v].bits == v, "half 0x%04x round trip gives 0x%04x", v, hBack[v].bits);
        const bool bnan = ((v >> 7) & 0xff) == 0xff && (v & 0x7f) != 0;
        if (!bnan) Expect(bBack[v].bits == v, "bf16 0x%04x round trip gives 0x%04x", v, bBack[v].bits);
    }
    return Verdict();
}

// The vectorized RNE paths against the scalar any-mode rounder (and the compiler's half where it has
// one: aarch64's __fp16, x86's _Float16 from GCC 12), on a stride through all 2^32 float patterns.
#if defined(__aarch64__)
#define AEA_COMPILER_HALF __fp16
#elif defined(__FLT16_MAX__) && defined(__x86_64__)
#define AEA_COMPILER_HALF _Float16
#endif
TWIN_CASE(ok_cast_rne_matches_reference) {
    std::vector<float> in;
    for (uint64_t u = 0; u <= 0xffffffffull; u += 1021) in.push_back(FromBits(static_cast<uint32_t>(u)));
    const std::vector<half> h = CastOnTwin<half>(in, RoundMode::CAST_RINT);
    const std::vector<bfloat16_t> b = CastOnTwin<bfloat16_t>(in, RoundMode::CAST_RINT);
    for (size_t i = 0; i < in.size(); ++i) {
        const uint16_t hRef = static_cast<uint16_t>(twin::fp::NarrowFloat<5, 10>(in[i], RoundMode::CAST_RINT));
        const uint16_t bRef = static_cast<uint16_t>(twin::fp::NarrowFloat<8, 7>(in[i], RoundMode::CAST_RINT));
        Expect(h[i].bits == hRef, "float 0x%08x -> half 0x%04x, reference 0x%04x", Bits(in[i]), h[i].bits, hRef);
        Expect(b[i].bits == bRef, "float 0x%08x -> bf16 0x%04x, reference 0x%04x", Bits(in[i]), b[i].bits, bRef);
#if defined(__aarch64__) || (defined(__FLT16_MAX__) && defined(__x86_64__))
        if (!std::isnan(in[i])) {
            const AEA_COMPILER_HALF g = static_cast<AEA_COMPILER_HALF>(in[i]);
            uint16_t gBits;
            std::memcpy(&gBits, &g, sizeof gBits);
            Expect(h[i].bits == gBits, "float 0x%08x -> half 0x%04x, _Float16 0x%04x", Bits(in[i]), h[i].bits, gBits);
        }
#endif
    }
    return Verdict();
}

TWIN_CASE(ok_cast_int32_float) {
    const std::vector<int32_t> ints{0, 1, -1, 16777216, 16777217, 16777219, -16777217, INT32_MAX, INT32_MIN};
    const std::vector<float> f = CastOnTwin<float>(ints, RoundMode::CAST_RINT);
    for (size_t i = 0; i < ints.size(); ++i) {
        Expect(Bits(f[i]) == Bits(static_cast<float>(ints[i])), "int %d -> %a", ints[i], f[i]);
    }
    Expect(f[4] == 16777216.0f && f[5] == 16777220.0f, "2^24 + 1 and + 3 round to even");
    const std::vector<float> fl{2.5f, -2.5f, 3.5f, 0.49999997f, -0.5f, 1e10f, -1e10f, NAN};
    const int32_t want[5][8] = {
        {2, -2, 4, 0, 0, INT32_MAX, INT32_MIN, 0},   // RINT
        {2, -3, 3, 0, -1, INT32_MAX, INT32_MIN, 0},  // FLOOR
        {3, -2, 4, 1, 0, INT32_MAX, INT32_MIN, 0},   // CEIL
        {3, -3, 4, 0, -1, INT32_MAX, INT32_MIN, 0},  // ROUND (ties away)
        {2, -2, 3, 0, 0, INT32_MAX, INT32_MIN, 0},   // TRUNC
    };
    for (int m = 0; m < 5; ++m) {
        const std::vector<int32_t> out = CastOnTwin<int32_t>(fl, kModes[m]);
        for (size_t i = 0; i < fl.size(); ++i) {
            Expect(out[i] == want[m][i], "float %g -> int32 %s: %d, want %d", fl[i], kModeNames[m], out[i], want[m][i]);
        }
    }
    return Verdict();
}

// ---- ok: vector instructions against plain loops ----------------------------------------------------------

enum class Op : uint32_t { Add, Sub, Mul, Div, Max, Min, Adds, Muls, Maxs, Mins, Sqrt, Abs, Exp, Reciprocal, Rsqrt, Duplicate, AddInPlace, Axpy };

constexpr uint32_t kSlotBytes = 8192;

// Elements of T in n elements rounded up to whole 32-B blocks: the UB footprint of a DataCopyPad of n.
template <class T>
constexpr uint32_t Padded(uint32_t n) {
    return static_cast<uint32_t>((n * sizeof(T) + 31) / 32 * 32 / sizeof(T));
}

// d = op(a, b or scalar) over n elements; a, b and d are loaded/stored with DataCopyPad.
template <class T, Op kOp>
__global__ __aicore__ void k_vec(GM_ADDR a, GM_ADDR b, GM_ADDR d, uint32_t n, T scalar) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * kSlotBytes);
    LocalTensor<T> la = buf.GetWithOffset<T>(Padded<T>(n), 0);
    LocalTensor<T> lb = buf.GetWithOffset<T>(Padded<T>(n), kSlotBytes);
    LocalTensor<T> ld = buf.GetWithOffset<T>(Padded<T>(n), 2 * kSlotBytes);
    GlobalTensor<T> ga, gb, gd;
    ga.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a), n);
    gb.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b), n);
    gd.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(d), n);
    const DataCopyExtParams copy{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(la, ga, copy, DataCopyPadExtParams<T>{});
    DataCopyPad(lb, gb, copy, DataCopyPadExtParams<T>{});
    DataCopyPad(ld, gd, copy, DataCopyPadExtParams<T>{});
    const int32_t c = static_cast<int32_t>(n);
    if constexpr (kOp == Op::Add) Add(ld, la, lb, c);
    if constexpr (kOp == Op::Sub) Sub(ld, la, lb, c);
    if constexpr (kOp == Op::Mul) Mul(ld, la, lb, c);
    if constexpr (kOp == Op::Div) Div(ld, la, lb, c);
    if constexpr (kOp == Op::Max) Max(ld, la, lb, c);
    if constexpr (kOp == Op::Min) Min(ld, la, lb, c);
    if constexpr (kOp == Op::Adds) Adds(ld, la, scalar, c);
    if constexpr (kOp == Op::Muls) Muls(ld, la, scalar, c);
    if constexpr (kOp == Op::Maxs) Maxs(ld, la, scalar, c);
    if constexpr (kOp == Op::Mins) Mins(ld, la, scalar, c);
    if constexpr (kOp == Op::Sqrt) Sqrt(ld, la, c);
    if constexpr (kOp == Op::Abs) Abs(ld, la, c);
    if constexpr (kOp == Op::Exp) Exp(ld, la, c);
    if constexpr (kOp == Op::Reciprocal) Reciprocal(ld, la, c);
    if constexpr (kOp == Op::Rsqrt) Rsqrt(ld, la, c);
    if constexpr (kOp == Op::Duplicate) Duplicate(ld, scalar, c);
    if constexpr (kOp == Op::Axpy) Axpy(ld, la, scalar, c);
    if constexpr (kOp == Op::AddInPlace) {
        Add(la, la, lb, c);
        Add(ld, la, la, c);
    }
    DataCopyPad(gd, ld, copy);
}

template <class T, Op kOp, class Ref>
void CheckVec(const char* name, std::vector<T> a, std::vector<T> b, std::vector<T> d, T scalar, Ref ref) {
    std::vector<T> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = ref(a[i], b[i], d[i], scalar);
    twin::Launch(k_vec<T, kOp>, Config(1, {Region(a), Region(b), Region(d)}), Gm(a), Gm(b), Gm(d),
                 static_cast<uint32_t>(a.size()), scalar);
    for (size_t i = 0; i < a.size(); ++i) {
        Expect(std::memcmp(&d[i], &want[i], sizeof(T)) == 0 ||
                   (std::is_floating_point_v<T> && SameFloat(static_cast<float>(d[i]), static_cast<float>(want[i]))),
               "%s %s element %zu differs from the plain loop", name, twin::detail::TypeName<T>(), i);
    }
}

half H(float f) { return half(f); }
float F(half h) { return static_cast<float>(h); }

TWIN_CASE(ok_vector_ops_match_loops) {
    const size_t n = 1000;  // not a multiple of 8: DataCopyPad tails
    std::vector<float> a(n), b(n), d(n);
    for (size_t i = 0; i < n; ++i) {
        a[i] = std::cos(static_cast<float>(i) * 0.37f) * 5.0f;  // includes negatives for Sqrt -> NaN
        b[i] = 0.25f + static_cast<float>(i % 17);
        d[i] = static_cast<float>(i) * 0.5f;
    }
    const float s = 0.3f;
    CheckVec<float, Op::Add>("Add", a, b, d, s, [](float x, float y, float, float) { return x + y; });
    CheckVec<float, Op::Sub>("Sub", a, b, d, s, [](float x, float y, float, float) { return x - y; });
    CheckVec<float, Op::Mul>("Mul", a, b, d, s, [](float x, float y, float, float) { return x * y; });
    CheckVec<float, Op::Div>("Div", a, b, d, s, [](float x, float y, float, float) { return x / y; });
    CheckVec<float, Op::Max>("Max", a, b, d, s, [](float x, float y, float, float) { return x > y ? x : y; });
    CheckVec<float, Op::Min>("Min", a, b, d, s, [](float x, float y, float, float) { return x < y ? x : y; });
    CheckVec<float, Op::Adds>("Adds", a, b, d, s, [](float x, float, float, float k) { return x + k; });
    CheckVec<float, Op::Muls>("Muls", a, b, d, s, [](float x, float, float, float k) { return x * k; });
    CheckVec<float, Op::Maxs>("Maxs", a, b, d, s, [](float x, float, float, float k) { return x > k ? x : k; });
    CheckVec<float, Op::Mins>("Mins", a, b, d, s, [](float x, float, float, float k) { return x < k ? x : k; });
    CheckVec<float, Op::Sqrt>("Sqrt", a, b, d, s, [](float x, float, float, float) { return std::sqrt(x); });
    CheckVec<float, Op::Abs>("Abs", a, b, d, s, [](float x, float, float, float) { return std::fabs(x); });
    CheckVec<float, Op::Exp>("Exp", a, b, d, s, [](float x, float, float, float) { return std::exp(x); });
    CheckVec<float, Op::Reciprocal>("Reciprocal", a, b, d, s, [](float x, float, float, float) { return 1.0f / x; });
    CheckVec<float, Op::Rsqrt>("Rsqrt", b, a, d, s, [](float x, float, float, float) { return 1.0f / std::sqrt(x); });
    CheckVec<float, Op::Duplicate>("Duplicate", a, b, d, s, [](float, float, float, float k) { return k; });
    CheckVec<float, Op::AddInPlace>("Add in place", a, b, d, s, [](float x, float y, float, float) {
        const float t = x + y;
        return t + t;
    });
    // Axpy: the product rounds, then the sum rounds (never a fused multiply-add).
    CheckVec<float, Op::Axpy>("Axpy", a, b, d, s, [](float x, float, float acc, float k) {
        const float p = x * k;
        return p + acc;
    });
    std::vector<float> sq{-1.0f, -0.0f, 0.0f, 4.0f};
    std::vector<float> sqOut(4), dummy(4);
    twin::Launch(k_vec<float, Op::Sqrt>, Config(1, {Region(sq), Region(dummy), Region(sqOut)}), Gm(sq), Gm(dummy),
                 Gm(sqOut), 4u, 0.0f);
    Expect(std::isnan(sqOut[0]) && Bits(sqOut[1]) == 0x80000000u && sqOut[2] == 0.0f && sqOut[3] == 2.0f,
           "Sqrt(-1, -0, 0, 4) = %g %g %g %g", sqOut[0], sqOut[1], sqOut[2], sqOut[3]);

    // half: computed in fp32, rounded once to half.
    std::vector<half> ha(n), hb(n), hd(n);
    for (size_t i = 0; i < n; ++i) {
        ha[i] = H(a[i]);
        hb[i] = H(b[i]);
        hd[i] = H(d[i] * 0.01f);
    }
    const half hs = H(0.3f);
    CheckVec<half, Op::Add>("Add", ha, hb, hd, hs, [](half x, half y, half, half) { return H(F(x) + F(y)); });
    CheckVec<half, Op::Mul>("Mul", ha, hb, hd, hs, [](half x, half y, half, half) { return H(F(x) * F(y)); });
    CheckVec<half, Op::Div>("Div", ha, hb, hd, hs, [](half x, half y, half, half) { return H(F(x) / F(y)); });
    CheckVec<half, Op::Sqrt>("Sqrt", hb, ha, hd, hs, [](half x, half, half, half) { return H(std::sqrt(F(x))); });
    CheckVec<half, Op::Muls>("Muls", ha, hb, hd, hs, [](half x, half, half, half k) { return H(F(x) * F(k)); });
    CheckVec<half, Op::Axpy>("Axpy", ha, hb, hd, hs, [](half x, half, half acc, half k) {
        return H(F(H(F(x) * F(k))) + F(acc));
    });

    // Integers wrap.
    std::vector<int32_t> ia(n), ib(n), id(n);
    for (size_t i = 0; i < n; ++i) {
        ia[i] = static_cast<int32_t>(i * 2654435761u);
        ib[i] = static_cast<int32_t>(i * 40503u) - 20000;
    }
    const auto wrapAdd = [](int32_t x, int32_t y) { return static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(y)); };
    CheckVec<int32_t, Op::Add>("Add", ia, ib, id, 7, [&](int32_t x, int32_t y, int32_t, int32_t) { return wrapAdd(x, y); });
    CheckVec<int32_t, Op::Mul>("Mul", ia, ib, id, 7, [](int32_t x, int32_t y, int32_t, int32_t) {
        return static_cast<int32_t>(static_cast<uint32_t>(x) * static_cast<uint32_t>(y));
    });
    CheckVec<int32_t, Op::Maxs>("Maxs", ia, ib, id, 7, [](int32_t x, int32_t, int32_t, int32_t k) { return x > k ? x : k; });
    std::vector<int16_t> sa(n), sb(n), sd(n);
    for (size_t i = 0; i < n; ++i) {
        sa[i] = static_cast<int16_t>(i * 97);
        sb[i] = static_cast<int16_t>(30000 - static_cast<int>(i) * 61);
    }
    CheckVec<int16_t, Op::Sub>("Sub", sa, sb, sd, int16_t{3}, [](int16_t x, int16_t y, int16_t, int16_t) {
        return static_cast<int16_t>(static_cast<uint32_t>(x) - static_cast<uint32_t>(y));
    });
    CheckVec<int16_t, Op::Duplicate>("Duplicate", sa, sb, sd, int16_t{-5}, [](int16_t, int16_t, int16_t, int16_t k) { return k; });
    return Verdict();
}

// Saturation mode saturates half arithmetic (+-inf -> +-65504, NaN -> 0); fp32 arithmetic stays IEEE.
TWIN_CASE(ok_saturation_mode_arithmetic) {
    const std::vector<float> fa = {60000.0f, -60000.0f, INFINITY, 1.0f, 3e38f, 0.0f, 2.0f, -1.0f};
    const std::vector<float> fb = {60000.0f, -60000.0f, -INFINITY, 2.0f, 3e38f, 0.0f, 0.5f, 4.0f};
    for (const auto mode : {twin::FloatOverflowMode::InfNan, twin::FloatOverflowMode::Saturation}) {
        const bool sat = mode == twin::FloatOverflowMode::Saturation;
        std::vector<half> ha, hb, hd(fa.size());
        for (size_t i = 0; i < fa.size(); ++i) {
            ha.push_back(H(fa[i] == 3e38f ? 1.0f : fa[i]));
            hb.push_back(H(fb[i] == 3e38f ? 1.0f : fb[i]));
        }
        twin::LaunchConfig cfg = Config(1, {Region(ha), Region(hb), Region(hd)});
        cfg.overflowMode = mode;
        twin::Launch(k_vec<half, Op::Add>, cfg, Gm(ha), Gm(hb), Gm(hd), static_cast<uint32_t>(ha.size()), H(0.0f));
        for (size_t i = 0; i < ha.size(); ++i) {
            const float ieee = F(ha[i]) + F(hb[i]);
            const half rounded = H(ieee);
            const float want = !sat ? F(rounded)
                               : std::isnan(F(rounded)) ? 0.0f
                               : std::isinf(F(rounded)) ? std::copysign(65504.0f, F(rounded))
                                                        : F(rounded);
            Expect(SameFloat(F(hd[i]), want), "%s half Add element %zu: %g, want %g",
                   sat ? "saturation" : "inf_nan", i, F(hd[i]), want);
        }
        Expect(sat ? F(hd[0]) == 65504.0f && F(hd[2]) == 0.0f : std::isinf(F(hd[0])) && std::isnan(F(hd[2])),
               "%s: the overflowing half sums are not what the mode gives", sat ? "saturation" : "inf_nan");
        std::vector<float> a = fa, b = fb, d(fa.size());
        twin::LaunchConfig fcfg = Config(1, {Region(a), Region(b), Region(d)});
        fcfg.overflowMode = mode;
        twin::Launch(k_vec<float, Op::Add>, fcfg, Gm(a), Gm(b), Gm(d), static_cast<uint32_t>(a.size()), 0.0f);
        for (size_t i = 0; i < a.size(); ++i) {
            Expect(SameFloat(d[i], a[i] + b[i]), "%s float Add element %zu is not IEEE: %g",
                   sat ? "saturation" : "inf_nan", i, d[i]);
        }
    }
    return Verdict();
}

// Axpy(float dst, half src): half * half is exact in fp32, then one rounding for the add.
extern "C" __global__ __aicore__ void k_axpy_mixed(GM_ADDR src, GM_ADDR dst, uint32_t n) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * kSlotBytes);
    LocalTensor<half> ls = buf.GetWithOffset<half>(Padded<half>(n), 0);
    LocalTensor<float> ld = buf.GetWithOffset<float>(Padded<float>(n), kSlotBytes);
    GlobalTensor<half> gs;
    GlobalTensor<float> gd;
    gs.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(src), n);
    gd.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dst), n);
    DataCopyPad(ls, gs, DataCopyExtParams{1, n * 2, 0, 0, 0}, DataCopyPadExtParams<half>{});
    DataCopyPad(ld, gd, DataCopyExtParams{1, n * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
    Axpy(ld, ls, half(-0.75f), static_cast<int32_t>(n));
    DataCopyPad(gd, ld, DataCopyExtParams{1, n * 4, 0, 0, 0});
}

TWIN_CASE(ok_axpy_float_half) {
    const uint32_t n = 333;
    std::vector<half> src(n);
    std::vector<float> dst(n), want(n);
    for (uint32_t i = 0; i < n; ++i) {
        src[i] = H(static_cast<float>(i) * 0.1f - 7.0f);
        dst[i] = static_cast<float>(i) * 1e-3f;
        want[i] = F(src[i]) * -0.75f + dst[i];
    }
    twin::Launch(k_axpy_mixed, Config(1, {Region(src), Region(dst)}), Gm(src), Gm(dst), n);
    for (uint32_t i = 0; i < n; ++i) Expect(Bits(dst[i]) == Bits(want[i]), "element %u: %a, want %a", i, dst[i], want[i]);
    return Verdict();
}

// ---- ok: DMA layouts --------------------------------------------------------------------------------------

constexpr float kSentinel = 7.0f;

// GM->UB DataCopyPad with gaps and padding, then the raw UB contents are copied out with DataCopy.
extern "C" __global__ __aicore__ void k_pad_layout(GM_ADDR x, GM_ADDR ubDump, GM_ADDR hx, GM_ADDR hDump, GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf, hbuf;
    pipe.InitBuffer(buf, 512);
    pipe.InitBuffer(hbuf, 64);
    GlobalTensor<float> gx, gDump, gy;
    GlobalTensor<half> ghx, ghDump;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
    gDump.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ubDump), 128);
    ghx.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(hx), 16);
    ghDump.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(hDump), 32);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), 16);
    LocalTensor<float> ub = buf.Get<float>();
    Duplicate(ub, kSentinel, 128);
    // 3 blocks of 5 floats, 2 floats apart in GM; 1 float of padding each side; 1 block of gap in UB.
    DataCopyPad(ub, gx, DataCopyExtParams{3, 20, 8, 1, 0}, DataCopyPadExtParams<float>{true, 1, 1, -1.0f});
    // Same without isPad, into the second half of the buffer: the padding is undefined (poison).
    DataCopyPad(ub[64], gx, DataCopyExtParams{1, 20, 0, 0, 0}, DataCopyPadExtParams<float>{false, 1, 1, -1.0f});
    DataCopy(gDump, ub, 128);
    // Legacy form with half and a raw padding value (0x3c00 = 1.0): 3 data elements, 2 right padding.
    LocalTensor<half> hub = hbuf.Get<half>();
    DataCopyPad(hub, ghx, DataCopyParams{1, 6, 0, 0}, DataCopyPadParams{true, 0, 2, 0x3c00});
    DataCopy(ghDump, hub, 32);
    // UB->GM: 2 blocks of 3 floats; UB blocks 1 block apart, GM blocks 4 B apart.
    DataCopyPad(gy, ub, DataCopyExtParams{2, 12, 1, 4, 0});
}

TWIN_CASE(ok_datacopypad_layout) {
    std::vector<float> x(64), dump(128), y(16, -9.0f);
    std::vector<half> hx(16), hdump(32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 100.0f + static_cast<float>(i);
    for (size_t i = 0; i < hx.size(); ++i) hx[i] = H(static_cast<float>(i) + 10.0f);
    twin::Launch(k_pad_layout, Config(1, {Region(x), Region(dump), Region(hx), Region(hdump), Region(y)}), Gm(x),
                 Gm(dump), Gm(hx), Gm(hdump), Gm(y));
    for (int b = 0; b < 3; ++b) {
        const float* blk = &dump[b * 16];  // 32-B block + 32-B gap
        Expect(blk[0] == -1.0f && blk[6] == -1.0f, "block %d padding %g %g", b, blk[0], blk[6]);
        for (int k = 0; k < 5; ++k) Expect(blk[1 + k] == x[b * 7 + k], "block %d data %d = %g", b, k, blk[1 + k]);
        Expect(Bits(blk[7]) == 0xffffffffu, "block %d alignment tail 0x%08x is not poison", b, Bits(blk[7]));
        for (int k = 8; k < 16; ++k) Expect(blk[k] == kSentinel, "block %d gap word %d was written", b, k);
    }
    const float* np = &dump[64];
    Expect(Bits(np[0]) == 0xffffffffu && Bits(np[6]) == 0xffffffffu && Bits(np[7]) == 0xffffffffu,
           "isPad=false padding is not poison");
    for (int k = 0; k < 5; ++k) Expect(np[1 + k] == x[k], "unpadded data %d", k);
    Expect(np[8] == kSentinel, "DataCopyPad wrote past its 32-B block");
    for (int k = 0; k < 3; ++k) Expect(hdump[k].bits == hx[k].bits, "half data %d", k);
    Expect(hdump[3].bits == 0x3c00 && hdump[4].bits == 0x3c00, "half right padding 0x%04x 0x%04x", hdump[3].bits,
           hdump[4].bits);
    for (int k = 5; k < 16; ++k) Expect(hdump[k].bits == 0xffff, "half tail %d is not poison", k);
    const float wantY[] = {-1.0f, x[0], x[1], -9.0f, -1.0f, x[7], x[8], -9.0f};
    for (int k = 0; k < 8; ++k) Expect(y[k] == wantY[k], "copy-out y[%d] = %g, want %g", k, y[k], wantY[k]);
    return Verdict();
}

// DataCopy block forms (32-B units on both sides) and UB->UB copies.
extern "C" __global__ __aicore__ void k_datacopy_blocks(GM_ADDR x, GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 64);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), 64);
    LocalTensor<float> ub = buf.Get<float>();
    Duplicate(ub, kSentinel, 256);
    DataCopy(ub, gx, DataCopyParams{2, 1, 1, 2});       // GM blocks 0 and 2 -> UB blocks 0 and 3
    DataCopy(ub[64], ub, 32);                           // UB -> UB, 4 blocks
    DataCopy(gy, ub[64], DataCopyParams{2, 1, 2, 1});   // UB blocks 0 and 3 -> GM blocks 0 and 2
}

TWIN_CASE(ok_datacopy_block_forms) {
    std::vector<float> x(64), y(64, -9.0f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    twin::Launch(k_datacopy_blocks, Config(1, {Region(x), Region(y)}), Gm(x), Gm(y));
    for (int k = 0; k < 8; ++k) {
        Expect(y[k] == x[k], "y[%d] = %g", k, y[k]);
        Expect(y[8 + k] == -9.0f, "gap y[%d] written", 8 + k);
        Expect(y[16 + k] == x[16 + k], "y[%d] = %g", 16 + k, y[16 + k]);
    }
    return Verdict();
}

// ---- ok: counters -----------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_counters(GM_ADDR x, GM_ADDR h, GM_ADDR step, GM_ADDR y) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4000);  // rounds up to 4000 -> 4000 is a multiple of 32
    GlobalTensor<float> gx, gy;
    GlobalTensor<half> gh;
    GlobalTensor<int64_t> gs;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 1000);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + 16 * GetBlockIdx(), 16);
    gh.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(h), 64);
    gs.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(step), 1);
    LocalTensor<float> t = buf.GetWithOffset<float>(64, 0);
    LocalTensor<half> th = buf.GetWithOffset<half>(48, 256);
    LocalTensor<float> tf = buf.GetWithOffset<float>(16, 512);
    LocalTensor<float> t2 = buf.GetWithOffset<float>(8, 1024);
    DataCopy(t, gx, 64);                                                                // read 256 B
    DataCopyPad(th, gh[3], DataCopyExtParams{2, 26, 4, 1, 0}, DataCopyPadExtParams<half>{});  // read 52 B
    Adds(t, t, 1.0f, 64);
    Muls(t, t, 2.0f, 10);
    Cast(tf, th, RoundMode::CAST_NONE, 13);                                             // 3 calls, 87 elements
    DataCopy(t2, t, 8);                                                                 // UB -> UB: no GM bytes
    DataCopyPad(gy, t, DataCopyExtParams{1, 36, 0, 0, 0});                             // write 36 B
    DataCopy(gy[8], t2, 8);                                                             // write 32 B
    const float v = gx.GetValue(7);                                                     // scalar read 4 B
    const int64_t s = gs.GetValue(0);                                                   // scalar read 8 B
    gy.SetValue(15, v + static_cast<float>(s));                                         // scalar write 4 B
}

TWIN_CASE(ok_counters_exact) {
    std::vector<float> x(1000, 1.5f), y(48);
    std::vector<half> h(64);
    std::vector<int64_t> step{3};
    const twin::LaunchResult r = twin::Launch(k_counters, Config(3, {Region(x), Region(h), Region(step), Region(y)}),
                                              Gm(x), Gm(h), Gm(step), Gm(y));
    for (const twin::BlockCounters& c : r.blocks) {
        Expect(c.gmReadBytes == 308 && c.gmWriteBytes == 68, "DMA bytes read %llu written %llu",
               static_cast<unsigned long long>(c.gmReadBytes), static_cast<unsigned long long>(c.gmWriteBytes));
        Expect(c.gmScalarReadBytes == 12 && c.gmScalarWriteBytes == 4, "scalar bytes read %llu written %llu",
               static_cast<unsigned long long>(c.gmScalarReadBytes), static_cast<unsigned long long>(c.gmScalarWriteBytes));
        Expect(c.dmaCalls == 5 && c.vectorCalls == 3 && c.vectorElements == 87, "calls dma %llu vector %llu elems %llu",
               static_cast<unsigned long long>(c.dmaCalls), static_cast<unsigned long long>(c.vectorCalls),
               static_cast<unsigned long long>(c.vectorElements));
        Expect(c.ubBytesUsed == 4000, "ubBytesUsed %u", c.ubBytesUsed);
    }
    const twin::BlockCounters t = r.total();
    Expect(t.gmReadBytes == 3 * 308 && t.dmaCalls == 15 && t.ubBytesUsed == 4000, "totals");
    Expect(y[15] == 4.5f && y[16 + 15] == 4.5f, "scalar write %g", y[15]);
    Expect(y[0] == 5.0f && y[8] == 5.0f && y[14] == 5.0f, "data %g %g %g", y[0], y[8], y[14]);
    return Verdict();
}

// ---- ok: blocks, threads, concurrency, tiling ---------------------------------------------------------------

std::thread::id g_blockThread[8];

extern "C" __global__ __aicore__ void k_fill_slice(GM_ADDR out, GM_ADDR info) {
    const int64_t idx = GetBlockIdx();
    g_blockThread[idx] = std::this_thread::get_id();
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1000 * sizeof(float));
    GlobalTensor<float> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out) + 1000 * idx, 1000);
    GlobalTensor<int64_t> gi;
    gi.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(info), 16);
    LocalTensor<float> t = buf.Get<float>();
    Duplicate(t, static_cast<float>(idx), 1000);
    DataCopy(g, t, 1000);
    gi.SetValue(2 * idx, GetBlockNum());
    gi.SetValue(2 * idx + 1, idx);
}

TWIN_CASE(ok_blocks_8_on_2_threads) {
    std::vector<float> out(8000, -1.0f);
    std::vector<int64_t> info(16, -1);
    twin::LaunchConfig cfg = Config(8, {Region(out), Region(info)});
    cfg.threads = 2;
    const twin::LaunchResult r = twin::Launch(k_fill_slice, cfg, Gm(out), Gm(info));
    for (size_t i = 0; i < out.size(); ++i) Expect(out[i] == static_cast<float>(i / 1000), "out[%zu] = %g", i, out[i]);
    for (int b = 0; b < 8; ++b) Expect(info[2 * b] == 8 && info[2 * b + 1] == b, "block %d saw num %lld idx %lld", b,
                                      static_cast<long long>(info[2 * b]), static_cast<long long>(info[2 * b + 1]));
    const std::set<std::thread::id> threads(std::begin(g_blockThread), std::end(g_blockThread));
    Expect(threads.size() <= 2, "%zu host threads ran the blocks", threads.size());
    Expect(r.blocks.size() == 8 && r.total().gmWriteBytes == 32000, "counters");
    return Verdict();
}

extern "C" __global__ __aicore__ void k_key_probe(GM_ADDR out, GM_ADDR tiling) {
    struct Probe {
        uint64_t scale;
    };
    GET_TILING_DATA_WITH_STRUCT(Probe, t, tiling);
    GlobalTensor<int64_t> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(out), 64);
    const int64_t key = TILING_KEY_IS(1) ? 1 : TILING_KEY_IS(2) ? 2 : 0;
    g.SetValue(GetBlockIdx(), key * static_cast<int64_t>(t.scale) + GetBlockIdx());
}

// Two host threads launch concurrently, each with its own tiling key, data and blocks.
TWIN_CASE(ok_concurrent_launches) {
    std::atomic<int> bad{0};
    auto worker = [&bad](uint64_t key) {
        for (int iter = 0; iter < 200; ++iter) {
            std::vector<int64_t> out(64, -1);
            std::vector<uint64_t> tiling{1000};
            twin::LaunchConfig cfg = Config(6, {Region(out), Region(tiling)});
            cfg.tilingKey = key;
            cfg.threads = 2;
            twin::Launch(k_key_probe, cfg, Gm(out), Gm(tiling));
            for (int b = 0; b < 6; ++b) {
                if (out[b] != static_cast<int64_t>(key) * 1000 + b) ++bad;
            }
        }
    };
    std::thread t1(worker, 1), t2(worker, 2);
    t1.join();
    t2.join();
    Expect(bad.load() == 0, "%d wrong block results", bad.load());
    return Verdict();
}

struct DemoTiling {
    float lr;
    uint32_t mode;
    uint64_t total;
};

extern "C" __global__ __aicore__ void k_tiling(GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(DemoTiling);
    GET_TILING_DATA(t, tiling);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 4);
    g.SetValue(0, t.lr);
    g.SetValue(1, static_cast<float>(t.mode));
    g.SetValue(2, static_cast<float>(t.total));
    g.SetValue(3, GetUserWorkspace(workspace) == workspace && TILING_KEY_IS(102) ? 1.0f : 0.0f);
}

TWIN_CASE(ok_tiling_data_key_workspace) {
    std::vector<DemoTiling> tiling{{0.125f, 3, 123456789}};
    std::vector<float> out(4), workspace(8);
    twin::LaunchConfig cfg = Config(1, {Region(out), Region(tiling), Region(workspace)});
    cfg.tilingKey = 102;
    const twin::LaunchResult r = twin::Launch(k_tiling, cfg, Gm(out), Gm(workspace), Gm(tiling));
    Expect(out[0] == 0.125f && out[1] == 3.0f && out[2] == 123456792.0f && out[3] == 1.0f, "tiling %g %g %g %g",
           out[0], out[1], out[2], out[3]);
    Expect(r.total().gmReadBytes == 0 && r.total().gmScalarWriteBytes == 16, "the tiling copy counted as traffic");
    return Verdict();
}

// ---- ok: queues, events, views -----------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_queue_events(GM_ADDR out) {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    TQue<TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(in, 2, 64);
    pipe.InitBuffer(outQ, 1, 64);
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), 16);

    LocalTensor<float> a = in.AllocTensor<float>();
    LocalTensor<float> b = in.AllocTensor<float>();
    Duplicate(a, 1.0f, 16);
    Duplicate(b, 2.0f, 16);
    in.EnQue(a);
    in.EnQue(b);
    LocalTensor<float> first = in.DeQue<float>();  // FIFO: a
    LocalTensor<float> second = in.DeQue<float>();
    g.SetValue(0, static_cast<int32_t>(first.GetValue(0)));
    g.SetValue(1, static_cast<int32_t>(second.GetValue(0)));
    in.FreeTensor(first);  // holds V_MTE2 ID 0 until the buffer is allocated again
    g.SetValue(2, GetTPipePtr()->FetchEventID(HardEvent::V_MTE2));
    in.FreeTensor(second);

    const TEventID id = pipe.AllocEventID<HardEvent::V_S>();
    SetFlag<HardEvent::V_S>(id);
    WaitFlag<HardEvent::V_S>(id);
    g.SetValue(3, pipe.FetchEventID<HardEvent::V_S>());  // still allocated: the next one
    pipe.ReleaseEventID<HardEvent::V_S>(id);
    g.SetValue(4, pipe.FetchEventID<HardEvent::V_S>());

    LocalTensor<float> o = outQ.AllocTensor<float>();
    Duplicate(o, 5.0f, 16);
    outQ.EnQue(o);
    o = outQ.DeQue<float>();
    g.SetValue(5, static_cast<int32_t>(o.GetValue(15)));
    outQ.FreeTensor(o);
    PipeBarrier<PIPE_V>();
    PipeBarrier<PIPE_ALL>();
    pipe.Destroy();
}

TWIN_CASE(ok_queue_events_and_ids) {
    std::vector<int32_t> out(16, -1);
    twin::Launch(k_queue_events, Config(1, {Region(out)}), Gm(out));
    Expect(out[0] == 1 && out[1] == 2, "DeQue order %d %d", out[0], out[1]);
    Expect(out[2] == 1, "FetchEventID(V_MTE2) = %d, want 1 (ID 0 held by the freed buffer)", out[2]);
    Expect(out[3] == 1 && out[4] == 0, "V_S IDs %d %d", out[3], out[4]);
    Expect(out[5] == 5, "VECOUT round trip %d", out[5]);
    return Verdict();
}

extern "C" __global__ __aicore__ void k_views(GM_ADDR gm, GM_ADDR out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 100);  // rounds up to 128
    GlobalTensor<float> g, go;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gm), 40);
    go.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 16);
    LocalTensor<float> t = buf.Get<float>();
    LocalTensor<uint8_t> bytes = t.ReinterpretCast<uint8_t>();
    LocalTensor<float> view = t[8];
    go.SetValue(0, static_cast<float>(t.GetSize()));
    go.SetValue(1, static_cast<float>(bytes.GetSize()));
    go.SetValue(2, static_cast<float>(view.GetSize()));
    go.SetValue(3, static_cast<float>(g[10].GetSize()));
    go.SetValue(4, g[10].GetValue(0));
    view.SetSize(4);
    view.SetValue(3, 2.5f);
    go.SetValue(5, t.GetValue(11));
    go.SetValue(6, view.GetPhyAddr() == t.GetPhyAddr(8) ? 1.0f : 0.0f);
    go.SetValue(7, g.GetPhyAddr(10) == g[10].GetPhyAddr() ? 1.0f : 0.0f);
    bytes.SetValue(0, 0);
    bytes.SetValue(1, 0);
    bytes.SetValue(2, 0x80);
    bytes.SetValue(3, 0x3f);  // 1.0f little endian
    go.SetValue(8, t.GetValue(0));
}

TWIN_CASE(ok_tensor_views) {
    std::vector<float> gm(40), out(16, -1.0f);
    for (size_t i = 0; i < gm.size(); ++i) gm[i] = static_cast<float>(i) * 10.0f;
    twin::Launch(k_views, Config(1, {Region(gm), Region(out)}), Gm(gm), Gm(out));
    const float want[] = {32, 128, 24, 40, 100, 2.5f, 1, 1, 1};
    for (int k = 0; k < 9; ++k) Expect(out[k] == want[k], "view probe %d = %g, want %g", k, out[k], want[k]);
    return Verdict();
}

// LocalTensor::GetPhyAddr has the device's type (asc-devkit kernel_tensor.h outside CPU-debug mode): an integer
// UB address a kernel cannot dereference, so pointer use that only CPU-debug accepts fails here too.
static_assert(std::is_same_v<decltype(std::declval<const LocalTensor<float>&>().GetPhyAddr()), uint64_t>);
static_assert(std::is_same_v<decltype(std::declval<const LocalTensor<half>&>().GetPhyAddr(1u)), uint64_t>);

extern "C" __global__ __aicore__ void k_phy_addr(GM_ADDR out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    GlobalTensor<uint64_t> go;
    go.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t*>(out), 3);
    LocalTensor<float> t = buf.Get<float>();
    go.SetValue(0, t.GetPhyAddr(8) - t.GetPhyAddr());                                 // bytes, not elements
    go.SetValue(1, t[16].GetPhyAddr() - t.GetPhyAddr());
    go.SetValue(2, t.ReinterpretCast<half>().GetPhyAddr(8) - t.GetPhyAddr());
}

TWIN_CASE(ok_local_tensor_phy_addr_is_device_integer) {
    std::vector<uint64_t> out(3, 0);
    twin::Launch(k_phy_addr, Config(1, {Region(out)}), Gm(out));
    Expect(out[0] == 32 && out[1] == 64 && out[2] == 16, "address deltas %llu %llu %llu, want 32 64 16",
           static_cast<unsigned long long>(out[0]), static_cast<unsigned long long>(out[1]),
           static_cast<unsigned long long>(out[2]));
    return Verdict();
}

// ---- bench ------------------------------------------------------------------------------------------------

extern "C" __global__ __aicore__ void k_empty() {}

constexpr int32_t kAddLen = 16384;  // 3 x 64 KiB tensors fill the 192-KiB UB

extern "C" __global__ __aicore__ void k_add_ub(uint32_t reps) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * kAddLen * sizeof(float));
    LocalTensor<float> a = buf.GetWithOffset<float>(kAddLen, 0);
    LocalTensor<float> b = buf.GetWithOffset<float>(kAddLen, kAddLen * 4);
    LocalTensor<float> c = buf.GetWithOffset<float>(kAddLen, 2 * kAddLen * 4);
    Duplicate(a, 1.0f, kAddLen);
    Duplicate(b, 2.0f, kAddLen);
    for (uint32_t r = 0; r < reps; ++r) Add(c, a, b, kAddLen);
}

extern "C" __global__ __aicore__ void k_cast_ub(uint32_t reps) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, kAddLen * 6);
    LocalTensor<float> f = buf.GetWithOffset<float>(kAddLen, 0);
    LocalTensor<half> h = buf.GetWithOffset<half>(kAddLen, kAddLen * 4);
    Duplicate(f, 0.1f, kAddLen);
    for (uint32_t r = 0; r < reps; ++r) {
        Cast(h, f, RoundMode::CAST_RINT, kAddLen);
        Cast(f, h, RoundMode::CAST_NONE, kAddLen);
    }
}

template <class F>
double SecondsPer(int iters, F f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
}

TWIN_CASE(bench_launch_and_vector_throughput) {
    std::printf("host threads: %u\n", std::thread::hardware_concurrency());
    const double inline1 = SecondsPer(2000, [] { twin::Launch(k_empty, Config(1)); });
    std::printf("launch overhead, blockDim 1 (inline):        %8.2f us\n", inline1 * 1e6);
    const double par8 = SecondsPer(500, [] { twin::Launch(k_empty, Config(8)); });
    std::printf("launch overhead, blockDim 8 (thread pool):   %8.2f us\n", par8 * 1e6);
    const double par48 = SecondsPer(200, [] { twin::Launch(k_empty, Config(48)); });
    std::printf("launch overhead, blockDim 48:                %8.2f us\n", par48 * 1e6);

    const uint32_t reps = 64;  // 64 x 16384 = 1,048,576 elements
    const double add = SecondsPer(50, [] { twin::Launch(k_add_ub, Config(1), reps); });
    const double elems = static_cast<double>(reps) * kAddLen;
    std::printf("fp32 Add, 1M elements in UB (1 block):        %8.3f ms  = %.2f Gelem/s\n", add * 1e3,
                elems / add * 1e-9);
    const double cast = SecondsPer(20, [] { twin::Launch(k_cast_ub, Config(1), reps); });
    std::printf("Cast f32->f16 RINT + f16->f32, 1M each:       %8.3f ms  = %.2f Gelem/s per cast\n", cast * 1e3,
                2 * elems / cast * 1e-9);

    const size_t n = 1u << 20;
    std::vector<float> x(n, 1.0f), y(n, 2.0f), z(n);
    const double stream1 = SecondsPer(20, [&] { RunVectorAdd(x, y, z, 1, 8192); });
    std::printf("GM->UB->Add->GM stream, 1M fp32, blockDim 1:  %8.3f ms  = %.2f GB/s\n", stream1 * 1e3,
                12.0 * n / stream1 * 1e-9);
    const double stream40 = SecondsPer(20, [&] { RunVectorAdd(x, y, z, 40, 8192); });
    std::printf("same, blockDim 40 on all host threads:        %8.3f ms  = %.2f GB/s\n", stream40 * 1e3,
                12.0 * n / stream40 * 1e-9);
    return 0;
}

// ---- Gather, Compare, Select and the code conversions (the 8-bit operator's kernel) -----------------------

// 64 fp32 lanes: table t[i] = 10 * i; offsets o = 4 * (62 - i) with base 4; x, y from GM. Writes to GM: the gather,
// the GE mask bytes (8), the selection x >= y ? x : y, and the conversions u8 -> half -> int32, half -> u8.
extern "C" __global__ __aicore__ void k_gather_compare_select(GM_ADDR xs, GM_ADDR ys, GM_ADDR out) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 64 * 4 * 6 + 64 * 2 + 64 + 32);
    LocalTensor<uint8_t> ub = buf.Get<uint8_t>();
    LocalTensor<float> table = ub[0].ReinterpretCast<float>();
    LocalTensor<uint32_t> offsets = ub[256].ReinterpretCast<uint32_t>();
    LocalTensor<float> x = ub[512].ReinterpretCast<float>();
    LocalTensor<float> y = ub[768].ReinterpretCast<float>();
    LocalTensor<float> picked = ub[1024].ReinterpretCast<float>();
    LocalTensor<int32_t> ints = ub[1280].ReinterpretCast<int32_t>();
    LocalTensor<half> halves = ub[1536].ReinterpretCast<half>();
    LocalTensor<uint8_t> codes = ub[1664];
    LocalTensor<uint8_t> mask = ub[1728];
    GlobalTensor<float> gx, gy, g;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(xs), 64);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ys), 64);
    g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), 64 * 5);
    for (uint32_t i = 0; i < 64; ++i) {
        table.SetValue(i, 10.0f * static_cast<float>(i));
        offsets.SetValue(i, i < 63 ? 4U * (62U - i) : 0U);
        x.SetValue(i, gx.GetValue(i));
        y.SetValue(i, gy.GetValue(i));
        codes.SetValue(i, static_cast<uint8_t>(4 * i));
    }
    Gather(picked, table, offsets, 4U, 63);  // the base moves every lane one entry on
    for (uint32_t i = 0; i < 63; ++i) g.SetValue(i, picked.GetValue(i));
    Compare(mask, x, y, CMPMODE::GE, 64);
    for (uint32_t i = 0; i < 8; ++i) g.SetValue(64 + i, static_cast<float>(mask.GetValue(i)));
    Select(picked, mask, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
    for (uint32_t i = 0; i < 64; ++i) g.SetValue(128 + i, picked.GetValue(i));
    Cast(halves, codes, RoundMode::CAST_NONE, 64);
    Cast(ints, halves, RoundMode::CAST_RINT, 64);
    for (uint32_t i = 0; i < 64; ++i) g.SetValue(192 + i, static_cast<float>(ints.GetValue(i)));
    Cast(halves, x, RoundMode::CAST_RINT, 64);
    Cast(codes, halves, RoundMode::CAST_RINT, 64);
    for (uint32_t i = 0; i < 64; ++i) g.SetValue(256 + i, static_cast<float>(codes.GetValue(i)));
}

TWIN_CASE(ok_gather_compare_select_and_code_casts) {
    std::vector<float> x(64), y(64), out(64 * 5, -1.0f);
    for (int i = 0; i < 64; ++i) {
        x[i] = static_cast<float>(i % 7) - 1.5f + (i == 9 ? 0.5f : 0.0f);  // i == 9: a tie with y
        y[i] = static_cast<float>(i % 5) - 1.0f;
    }
    x[20] = std::nanf("");
    x[21] = 300.0f;  // saturates to the code 255
    x[22] = 2.5f;    // RINT: a tie goes to the even 2
    twin::Launch(k_gather_compare_select, Config(1, {Region(x), Region(y), Region(out)}), Gm(x), Gm(y),
                 Gm(out));
    for (int i = 0; i < 63; ++i) Expect(out[i] == 10.0f * static_cast<float>(63 - i), "gather lane %d: %g", i, out[i]);
    Expect(out[63] == -1.0f, "gather wrote past its count");
    for (int b = 0; b < 8; ++b) {
        uint32_t want = 0;
        for (int k = 0; k < 8; ++k) want |= (x[b * 8 + k] >= y[b * 8 + k] ? 1U : 0U) << k;  // NaN: false
        Expect(static_cast<uint32_t>(out[64 + b]) == want, "mask byte %d: %g, want %u", b, out[64 + b], want);
    }
    for (int i = 0; i < 64; ++i) {
        const float want = x[i] >= y[i] ? x[i] : y[i];
        Expect(SameFloat(out[128 + i], want), "select lane %d: %g, want %g", i, out[128 + i], want);
        Expect(out[192 + i] == static_cast<float>((4 * i) & 0xff), "u8 -> half -> int32 lane %d: %g", i, out[192 + i]);
    }
    Expect(out[256 + 20] == 0.0f && out[256 + 21] == 255.0f && out[256 + 22] == 2.0f,
           "half -> u8: NaN %g, 300 %g, 2.5 %g", out[256 + 20], out[256 + 21], out[256 + 22]);
    Expect(out[256 + 0] == 0.0f, "half -> u8 of a negative: %g", out[256 + 0]);  // -1.5 saturates to 0
    return Verdict();
}

extern "C" __global__ __aicore__ void k_gather_past_src() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    LocalTensor<float> table = buf.Get<float>(64);
    LocalTensor<uint32_t> offsets = buf.Get<float>()[64].ReinterpretCast<uint32_t>();
    Duplicate(offsets.ReinterpretCast<int32_t>(), 256, 64);  // byte 256: past the 64-entry table
    Gather(buf.Get<float>()[128], table, offsets, 0U, 64);
}

extern "C" __global__ __aicore__ void k_compare_partial_block() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2048);
    LocalTensor<float> x = buf.Get<float>();
    Compare(buf.Get<uint8_t>()[1024], x, x[128], CMPMODE::GE, 32);  // 128 bytes: half a 256-byte block
}

extern "C" __global__ __aicore__ void k_select_scalar_mode() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2048);
    LocalTensor<float> x = buf.Get<float>();
    Select(x, buf.Get<uint8_t>()[1024], x, x[128], SELMODE::VSEL_CMPMASK_SPR, 64);
}

TWIN_CASE(abort_UB_RANGE_gather_offset_past_src) {
    twin::Launch(k_gather_past_src, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_UB_ALIGN_compare_partial_block) {
    twin::Launch(k_compare_partial_block, Config(1));
    return ExpectedAbort();
}
TWIN_CASE(abort_SEL_MODE_select_other_modes) {
    twin::Launch(k_select_scalar_mode, Config(1));
    return ExpectedAbort();
}

}  // namespace

int main(int argc, char** argv) { return RunCases(argc, argv); }
