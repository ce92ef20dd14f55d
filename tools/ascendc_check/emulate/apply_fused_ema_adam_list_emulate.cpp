// tools/ascendc_check/run.py --emulate driver for op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list.cpp (and,
// compiled with AEA_LIST_EMULATE_V2 by apply_fused_ema_adam_list_v2_emulate.cpp, for the V2 entry): the unchanged
// list kernel, compiled against the real AscendC library with the emulated intrinsics, computes every dtype row
// of the contract (tiling key) on seeded inputs, the lists in CANN's launcher layout (an absent optional list the
// empty list): small lists on 48 cores (entries shorter than a block, fewer elements than cores), and lists of
// 1-6 chunks per core on 4 cores (entries across core boundaries, queue buffers reused), with AMSGrad, grad
// scale, found_inf clear, maximize, both modes and bias correction on and off; found_inf set (nothing written);
// the 16-bit-state rows with overflowing results in INF_NAN and saturation mode; V2 with lr / ema_decay tensors
// and without the EMA. Each case is written for compare.py (golden.emulate_entry). Usage: <program> <out> <seed>
// ascendc-check: run-sources op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "apply_fused_ema_adam_list_tiling.h"
#include "emulate_support.h"
#include "kernel_entries.h"

#ifndef AEA_LIST_EMULATE_V2
#define AEA_LIST_EMULATE_V2 0
#endif


namespace {

namespace aea = ascend_ema_adam;
namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
using ascendc_emulate::Dt;
using ascendc_emulate::DtOf;

constexpr bool kV2 = AEA_LIST_EMULATE_V2 != 0;
constexpr float kNoValue = -1.0f;  // found_inf absent

/** A case's options: which optional inputs the launch has, and maximize. */
struct Options {
    list_op::ApplyFusedEmaAdamListOptions inputs;
    bool maximize = false;
};

struct Case {
    uint32_t cores;
    std::vector<uint64_t> numels;  // elements; an entry c * 1000000 + e means c full chunks plus e
    Options options;
    float foundInf = kNoValue;     // its value when given
    int64_t mode = 1;
    bool biasCorrection = true;
    bool overflow = false;         // overflowing 16-bit results
    bool saturation = false;       // the device in saturation mode
};

/** Gradients whose 16-bit results overflow: squares past the state's maximum, +-inf and NaN. */
void Overflow(uint8_t* grad, uint64_t n, Dt gradDt, Dt stateDt)
{
    const float big = stateDt == Dt::kF16 ? 16000.0f : 8.9e20f;
    const float specials[] = {INFINITY, -INFINITY, NAN};
    for (uint64_t i = 0; i < n; i += 5) ascendc_emulate::PutFloat(grad, i, gradDt, big);
    for (uint64_t i = 1; i < n && i <= 3; ++i) ascendc_emulate::PutFloat(grad, i, gradDt, specials[i - 1]);
}

int RunCase(const std::string& out, uint64_t seed, const list_op::ApplyFusedEmaAdamListDtypes& d, const Case& c,
            int index)
{
    aea::Platform platform = aea::FindPlatform("Ascend910B2");
    platform.vectorCoreNum = c.cores;
    list_op::ApplyFusedEmaAdamListAttrs attrs;
    attrs.lr = 1e-3;
    attrs.emaDecay = 0.995;
    attrs.mode = c.mode;
    attrs.biasCorrection = c.biasCorrection;
    attrs.weightDecay = c.mode == 0 ? 0.05 : 0.01;
    attrs.maximize = c.options.maximize;
    list_op::ApplyFusedEmaAdamListOptions options = c.options.inputs;
    options.foundInf = c.foundInf != kNoValue;
    const uint32_t chunk =
        list_op::ComputeApplyFusedEmaAdamListTiling({uint64_t{1} << 26}, d, attrs, options, platform).data.chunkLength;
    std::vector<uint64_t> numels;
    for (uint64_t n : c.numels) numels.push_back(n / 1000000 * chunk + n % 1000000);
    const list_op::ApplyFusedEmaAdamListTilingResult t =
        list_op::ComputeApplyFusedEmaAdamListTiling(numels, d, attrs, options, platform);

    const Dt p = DtOf(d.param), s = DtOf(d.state), g = DtOf(d.grad);
    auto list = [&](Dt dt) { return ascendc_emulate::MakeList(numels, ascendc_emulate::DtBytes(dt)); };
    ascendc_emulate::Lists lists;
    lists.Add("grads", list(g));
    lists.Add("vars", list(p));
    lists.Add("ms", list(s));
    lists.Add("vs", list(s));
    if (options.ema) lists.Add("ss", list(s));
    if (options.amsgrad) lists.Add("max_vs", list(s));
    if (d.hasCopy) lists.Add("model_copies", list(DtOf(d.copy)));

    ascendc_emulate::Inputs in(seed * 1000 + static_cast<uint64_t>(index) + (kV2 ? 500 : 0));
    for (size_t i = 0; i < numels.size(); ++i) {
        const uint64_t n = numels[i];
        in.Fill(lists.Entry("grads", i), n, g, 0.01f, 1.0f, true);
        in.Fill(lists.Entry("vars", i), n, p, 0.1f, 2.0f, true);
        in.Fill(lists.Entry("ms", i), n, s, 0.0f, 0.1f, true);
        in.Fill(lists.Entry("vs", i), n, s, 0.0f, 0.01f, false);
        if (options.ema) in.Fill(lists.Entry("ss", i), n, s, 0.1f, 2.0f, true);
        if (options.amsgrad) in.Fill(lists.Entry("max_vs", i), n, s, 0.0f, 0.02f, false);
        if (d.hasCopy) in.Fill(lists.Entry("model_copies", i), n, DtOf(d.copy), 0.1f, 2.0f, true);
        if (c.overflow) Overflow(lists.Entry("grads", i), n, g, d.hasCopy ? DtOf(d.copy) : s);
    }
    const ascendc_emulate::ListScalars scalars(
        ascendc_emulate::SeededStep(seed, index), c.foundInf,
        {options.gradScale, options.foundInf, options.lrTensor, options.emaDecayTensor});
    ApplyFusedEmaAdamListTilingData tiling = t.data;

    char name[96];
    std::snprintf(name, sizeof name, "%s_%03d", kV2 ? "list_v2" : "list", index);
    ascendc_emulate::CaseWriter w(out, name);
    lists.Write(w, ".in", true);
    const ascendc_emulate::LaunchOutcome o =
        t.blockDim == 0 ? ascendc_emulate::LaunchOutcome{}
                        : ascendc_emulate::Launch(name, t.blockDim, t.tilingKey, c.saturation, [&] {
#if AEA_LIST_EMULATE_V2
                              apply_fused_ema_adam_list_v2(
                                  lists.In("grads"), lists.In("vars"), lists.In("ms"), lists.In("vs"), lists.In("ss"),
                                  lists.In("max_vs"), lists.In("model_copies"), scalars.Step(), scalars.GradScale(),
                                  scalars.FoundInf(), scalars.Lr(), scalars.EmaDecay(), lists.Out("vars"),
                                  lists.Out("ss"), lists.Out("max_vs"), lists.Out("model_copies"), lists.Out("ms"),
                                  lists.Out("vs"), nullptr, reinterpret_cast<uint8_t*>(&tiling));
#else
                              apply_fused_ema_adam_list(
                                  lists.In("grads"), lists.In("vars"), lists.In("ms"), lists.In("vs"), lists.In("ss"),
                                  lists.In("max_vs"), lists.In("model_copies"), scalars.Step(), scalars.GradScale(),
                                  scalars.FoundInf(), lists.Out("vars"), lists.Out("ss"), lists.Out("max_vs"),
                                  lists.Out("model_copies"), lists.Out("ms"), lists.Out("vs"), nullptr,
                                  reinterpret_cast<uint8_t*>(&tiling));
#endif
                          });
    lists.Write(w, ".out", false);
    const Dt copy = DtOf(d.copy);
    ascendc_emulate::MetaList(w, kV2 ? "list_v2" : "list", numels.size(), p, g, d.hasCopy ? &copy : nullptr,
                              options.ema, attrs.maximize);
    w.Meta("state", ascendc_emulate::DtName(s));
    w.Meta("amsgrad", options.amsgrad ? 1.0 : 0.0);
    scalars.Meta(w, attrs);
    ascendc_emulate::MetaTiling(w, c.saturation, t.tilingKey, c.cores, t.blockDim, chunk);
    ascendc_emulate::MetaOutcome(w, o);
    return o.failedBlocks;
}

}  // namespace

int main(int argc, char** argv)
{
    const ascendc_emulate::DriverArgs args(argc, argv);
    if (!args.ok) return 2;
    Options small;  // grad scale, found_inf clear; V2: lr and decay tensors
    small.inputs.gradScale = true;
    small.inputs.lrTensor = small.inputs.emaDecayTensor = kV2;
    Options chunked;  // AMSGrad, maximize; V2: without the EMA
    chunked.inputs.amsgrad = true;
    chunked.inputs.ema = !kV2;
    chunked.maximize = true;
    int failed = 0, index = 0;
    for (const list_op::ApplyFusedEmaAdamListDtypes& d : list_op::ApplyFusedEmaAdamListDtypeCombinations()) {
        // 48 cores: entries of 1 element, shorter than a block, and a few hundred.
        failed += RunCase(args.out, args.seed, d, {48, {1, 37, 300, 17}, small, 0.0f, 1, true}, index++);
        // 4 cores: 2 + 3 + 1 chunks and tails spread over the cores (1-2 chunks each), then 6 chunks more.
        failed += RunCase(args.out, args.seed, d,
                          {4, {2000013, 1, 3000000, 1000064, 5}, chunked, kNoValue, 0, false}, index++);
        failed += RunCase(args.out, args.seed, d, {4, {16000029, 7}, small, kNoValue, 1, true}, index++);
        const bool sixteenBit = d.state != aea::DataType::kFloat32 || d.hasCopy;
        if (sixteenBit) {
            for (bool saturation : {false, true}) {
                Case c{4, {2000041, 9}, chunked, kNoValue, 1, true};
                c.overflow = true;
                c.saturation = saturation;
                failed += RunCase(args.out, args.seed, d, c, index++);
            }
        }
    }
    // found_inf set: nothing is written (the first dtype row).
    failed += RunCase(args.out, args.seed, list_op::ApplyFusedEmaAdamListDtypeCombinations()[0],
                      {4, {1000003, 40}, small, 1.0f, 1, true}, index++);
    return ascendc_emulate::DriverResult(argv[0], index, failed);
}
