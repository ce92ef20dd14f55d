// tools/ascendc_check/run.py --emulate driver for op_kernel/apply_fused_ema_adam/aea_apply_fused_ema_adam.cpp: the
// unchanged kernel, compiled against the real AscendC library with the emulated intrinsics, computes every
// dtype (tiling key) on seeded inputs: tails, one element, fewer elements than cores, 1, 2, 3 and 5 chunks per
// core (a queue buffer is reused from bufferNum + 1 chunks on), both modes, bias correction on and off, and the
// 16-bit dtypes with overflowing results in INF_NAN and in saturation mode. Each case is written for
// compare.py (golden.emulate_update). Usage: <program> <out dir> <seed>
// ascendc-check: run-sources op_host/apply_fused_ema_adam/apply_fused_ema_adam_tiling.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "apply_fused_ema_adam_tiling.h"
#include "emulate_support.h"
#include "kernel_entries.h"

namespace {

using ascendc_emulate::Dt;
namespace aea = ascend_ema_adam;
namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;

struct Case {
    uint32_t cores;        // the platform's vector cores (a small number makes many chunks per core cheap)
    uint64_t chunks;       // 0: `numel` elements; else chunks per core on every core, plus `numel` more
    uint64_t numel;
    int64_t mode;
    bool biasCorrection;
    bool overflow;         // overflowing 16-bit results, run in INF_NAN and in saturation mode
};

aea::DataType DataTypeOf(Dt dt)
{
    return dt == Dt::kF32 ? aea::DataType::kFloat32 : dt == Dt::kF16 ? aea::DataType::kFloat16
                                                                      : aea::DataType::kBFloat16;
}

/** Makes some gradients overflow the 16-bit results: squares past the maximum, +-inf and NaN. */
void Overflow(uint8_t* grad, uint64_t n, Dt dt)
{
    const uint16_t big = dt == Dt::kF16 ? 0x73d0 /* 16000 */ : 0x6240 /* ~8.9e20 */;
    const uint16_t specials[] = {static_cast<uint16_t>(dt == Dt::kF16 ? 0x7c00 : 0x7f80),
                                 static_cast<uint16_t>(dt == Dt::kF16 ? 0xfc00 : 0xff80),
                                 static_cast<uint16_t>(dt == Dt::kF16 ? 0x7e00 : 0x7fc0)};
    for (uint64_t i = 0; i < n; i += 5) std::memcpy(grad + i * 2, &big, 2);
    for (uint64_t i = 1; i < n && i <= 3; ++i) std::memcpy(grad + i * 2, &specials[i - 1], 2);
}

int RunCase(const std::string& out, uint64_t seed, Dt dt, const Case& c, bool saturation, int index)
{
    aea::Platform platform = aea::FindPlatform("Ascend910B2");
    platform.vectorCoreNum = c.cores;
    aea::Attrs attrs;
    attrs.lr = 1e-3;
    attrs.emaDecay = 0.995;
    attrs.mode = c.mode;
    attrs.biasCorrection = c.biasCorrection;
    attrs.weightDecay = c.mode == 0 ? 0.05 : 0.01;
    uint64_t numel = c.numel;
    if (c.chunks != 0) {
        const fused_op::ApplyFusedEmaAdamTilingResult probe =
            fused_op::ComputeApplyFusedEmaAdamTiling(uint64_t{1} << 24, DataTypeOf(dt), attrs, platform);
        numel += uint64_t{c.cores} * probe.data.chunkLength * c.chunks;
    }
    const fused_op::ApplyFusedEmaAdamTilingResult t =
        fused_op::ComputeApplyFusedEmaAdamTiling(numel, DataTypeOf(dt), attrs, platform);
    const uint64_t bytes = numel * ascendc_emulate::DtBytes(dt);
    ascendc_emulate::SharedBytes grad(bytes), var(bytes), m(bytes), v(bytes), s(bytes), step(8), tiling(sizeof t.data);
    ascendc_emulate::Inputs in(seed * 1000 + static_cast<uint64_t>(index));
    in.Fill(grad.data(), numel, dt, 0.01f, 1.0f, true);
    in.Fill(var.data(), numel, dt, 0.1f, 2.0f, true);
    in.Fill(m.data(), numel, dt, 0.0f, 0.1f, true);
    in.Fill(v.data(), numel, dt, 0.0f, 0.01f, false);
    in.Fill(s.data(), numel, dt, 0.1f, 2.0f, true);
    if (c.overflow) Overflow(grad.data(), numel, dt);
    const int64_t stepValue = ascendc_emulate::SeededStep(seed, index);
    std::memcpy(step.data(), &stepValue, 8);
    std::memcpy(tiling.data(), &t.data, sizeof t.data);

    char name[96];
    std::snprintf(name, sizeof name, "single_%s_%03d", ascendc_emulate::DtName(dt), index);
    ascendc_emulate::CaseWriter w(out, name);
    for (const auto& [file, buf] : {std::pair<const char*, const ascendc_emulate::SharedBytes*>{"grad.in", &grad},
                                    {"var.in", &var}, {"m.in", &m}, {"v.in", &v}, {"s.in", &s}}) {
        w.Tensor(file, buf->data(), bytes);
    }
    const ascendc_emulate::LaunchOutcome o = ascendc_emulate::Launch(name, t.blockDim, t.tilingKey, saturation, [&] {
        aea_apply_fused_ema_adam(grad.data(), var.data(), m.data(), v.data(), s.data(), step.data(), var.data(),
                                 m.data(), v.data(), s.data(), nullptr, tiling.data());
    });
    for (const auto& [file, buf] : {std::pair<const char*, const ascendc_emulate::SharedBytes*>{"var.out", &var},
                                    {"m.out", &m}, {"v.out", &v}, {"s.out", &s}}) {
        w.Tensor(file, buf->data(), bytes);
    }
    w.Meta("kernel", "single");
    w.Meta("dtype", ascendc_emulate::DtName(dt));
    w.Meta("numel", static_cast<double>(numel));
    w.Meta("step", static_cast<double>(stepValue));
    w.Meta("lr", attrs.lr);
    w.Meta("ema_decay", attrs.emaDecay);
    ascendc_emulate::MetaAdamAttrs(w, attrs);
    w.Meta("platform", platform.name);
    ascendc_emulate::MetaTiling(w, saturation, t.tilingKey, c.cores, t.blockDim, t.data.chunkLength);
    w.Meta("chunks_per_core", static_cast<double>(c.chunks));
    ascendc_emulate::MetaOutcome(w, o);
    return o.failedBlocks;
}

}  // namespace

int main(int argc, char** argv)
{
    const ascendc_emulate::DriverArgs args(argc, argv);
    if (!args.ok) return 2;
    const Case cases[] = {
        {48, 0, 1, 1, true, false},      // one element: one core, one block
        {48, 0, 37, 0, false, false},    // fewer elements than cores
        {4, 1, 0, 1, true, false},       // exactly one chunk per core
        {4, 2, 1001, 0, false, false},   // two chunks and a tail
        {4, 3, 29, 1, true, false},      // three chunks: the queue buffers reused
        {3, 5, 3, 1, false, false},      // five chunks, an odd core count
    };
    int failed = 0, index = 0;
    for (Dt dt : {Dt::kF32, Dt::kF16, Dt::kBf16}) {
        for (const Case& c : cases) failed += RunCase(args.out, args.seed, dt, c, false, index++);
        if (dt != Dt::kF32) {
            const Case overflow{4, 2, 77, 1, true, true};
            failed += RunCase(args.out, args.seed, dt, overflow, false, index++);
            failed += RunCase(args.out, args.seed, dt, overflow, true, index++);
        }
    }
    return ascendc_emulate::DriverResult(argv[0], index, failed);
}
