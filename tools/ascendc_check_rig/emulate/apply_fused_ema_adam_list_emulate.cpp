// tools/ascendc_check --emulate driver for op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list.cpp (and,
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
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "apply_fused_ema_adam_list_tiling.h"
#include "emu_convert.h"
#include "emulate_support.h"
#include "launcher_list.h"

#ifndef AEA_LIST_EMULATE_V2
#define AEA_LIST_EMULATE_V2 0
#endif

#if AEA_LIST_EMULATE_V2
extern "C" void apply_fused_ema_adam_list_v2(uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* ss,
                                             uint8_t* maxVs, uint8_t* modelCopies, uint8_t* step, uint8_t* gradScale,
                                             uint8_t* foundInf, uint8_t* lr, uint8_t* emaDecay, uint8_t* varsRef,
                                             uint8_t* ssRef, uint8_t* maxVsRef, uint8_t* modelCopiesRef,
                                             uint8_t* msRef, uint8_t* vsRef, uint8_t* workspace, uint8_t* tiling);
#else
extern "C" void apply_fused_ema_adam_list(uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* ss,
                                          uint8_t* maxVs, uint8_t* modelCopies, uint8_t* step, uint8_t* gradScale,
                                          uint8_t* foundInf, uint8_t* varsRef, uint8_t* ssRef, uint8_t* maxVsRef,
                                          uint8_t* modelCopiesRef, uint8_t* msRef, uint8_t* vsRef,
                                          uint8_t* workspace, uint8_t* tiling);
#endif

namespace {

namespace aea = ascend_ema_adam;
namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
using ascendc_emulate::Dt;

constexpr bool kV2 = AEA_LIST_EMULATE_V2 != 0;
constexpr float kNoValue = -1.0f;  // found_inf absent

Dt DtOf(aea::DataType d)
{
    return d == aea::DataType::kFloat32 ? Dt::kF32 : d == aea::DataType::kFloat16 ? Dt::kF16 : Dt::kBf16;
}

/** A case's options: which optional inputs the launch has, and maximize. */
struct Options {
    list_op::ListOptions inputs;
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

/** One list: an arena of entries (shared with the blocks) and its launcher descriptor. */
struct List {
    std::vector<ascendc_emulate::SharedBytes> entries;
    std::vector<uint64_t> words;
    Dt dt;
    uint8_t* Descriptor() { return reinterpret_cast<uint8_t*>(words.data()); }
};

List MakeList(const std::vector<uint64_t>& numels, Dt dt)
{
    List l;
    l.dt = dt;
    std::vector<uint8_t*> data;
    std::vector<std::vector<uint64_t>> shapes;
    for (uint64_t n : numels) {
        l.entries.emplace_back(n * ascendc_emulate::DtBytes(dt));
        data.push_back(l.entries.back().data());
        shapes.push_back({n});
    }
    l.words = ascendc_check::LauncherListWords(data, shapes);
    return l;
}

/** Gradients whose 16-bit results overflow: squares past the state's maximum, +-inf and NaN. */
void Overflow(uint8_t* grad, uint64_t n, Dt gradDt, Dt stateDt)
{
    const float big = stateDt == Dt::kF16 ? 16000.0f : 8.9e20f;
    const float specials[] = {INFINITY, -INFINITY, NAN};
    auto put = [&](uint64_t i, float v) {
        if (gradDt == Dt::kF32) {
            std::memcpy(grad + i * 4, &v, 4);
        } else {
            const uint16_t b = gradDt == Dt::kF16 ? ascendc_emu::FloatToHalf(v, ascendc_emu::Round::kRint)
                                                  : ascendc_emu::FloatToBf16(v, ascendc_emu::Round::kRint);
            std::memcpy(grad + i * 2, &b, 2);
        }
    };
    for (uint64_t i = 0; i < n; i += 5) put(i, big);
    for (uint64_t i = 1; i < n && i <= 3; ++i) put(i, specials[i - 1]);
}

int RunCase(const std::string& out, uint64_t seed, const list_op::ListDtypes& d, const Case& c, int index)
{
    aea::Platform platform = aea::FindPlatform("Ascend910B2");
    platform.vectorCoreNum = c.cores;
    list_op::ListAttrs attrs;
    attrs.lr = 1e-3;
    attrs.emaDecay = 0.995;
    attrs.mode = c.mode;
    attrs.biasCorrection = c.biasCorrection;
    attrs.weightDecay = c.mode == 0 ? 0.05 : 0.01;
    attrs.maximize = c.options.maximize;
    list_op::ListOptions options = c.options.inputs;
    options.foundInf = c.foundInf != kNoValue;
    const uint32_t chunk = list_op::ComputeListTiling({uint64_t{1} << 26}, d, attrs, options, platform).data.chunkLength;
    std::vector<uint64_t> numels;
    for (uint64_t n : c.numels) numels.push_back(n / 1000000 * chunk + n % 1000000);
    const list_op::ListTilingResult t = list_op::ComputeListTiling(numels, d, attrs, options, platform);

    const Dt p = DtOf(d.param), s = DtOf(d.state), g = DtOf(d.grad);
    std::map<std::string, List> lists;
    lists.emplace("grads", MakeList(numels, g));
    lists.emplace("vars", MakeList(numels, p));
    lists.emplace("ms", MakeList(numels, s));
    lists.emplace("vs", MakeList(numels, s));
    if (options.ema) lists.emplace("ss", MakeList(numels, s));
    if (options.amsgrad) lists.emplace("max_vs", MakeList(numels, s));
    if (d.hasCopy) lists.emplace("model_copies", MakeList(numels, DtOf(d.copy)));

    ascendc_emulate::Inputs in(seed * 1000 + static_cast<uint64_t>(index) + (kV2 ? 500 : 0));
    for (size_t i = 0; i < numels.size(); ++i) {
        const uint64_t n = numels[i];
        in.Fill(lists.at("grads").entries[i].data(), n, g, 0.01f, 1.0f, true);
        in.Fill(lists.at("vars").entries[i].data(), n, p, 0.1f, 2.0f, true);
        in.Fill(lists.at("ms").entries[i].data(), n, s, 0.0f, 0.1f, true);
        in.Fill(lists.at("vs").entries[i].data(), n, s, 0.0f, 0.01f, false);
        if (options.ema) in.Fill(lists.at("ss").entries[i].data(), n, s, 0.1f, 2.0f, true);
        if (options.amsgrad) in.Fill(lists.at("max_vs").entries[i].data(), n, s, 0.0f, 0.02f, false);
        if (d.hasCopy) in.Fill(lists.at("model_copies").entries[i].data(), n, DtOf(d.copy), 0.1f, 2.0f, true);
        if (c.overflow) Overflow(lists.at("grads").entries[i].data(), n, g, d.hasCopy ? DtOf(d.copy) : s);
    }
    // Separate descriptors of the same tensors for the in-place outputs, as on the device.
    std::map<std::string, std::vector<uint64_t>> outWords;
    for (auto& [name, l] : lists) outWords[name] = l.words;
    static uint64_t emptyList = sizeof(uint64_t);
    auto inList = [&](const char* name) {
        return lists.count(name) ? lists.at(name).Descriptor() : reinterpret_cast<uint8_t*>(&emptyList);
    };
    auto outList = [&](const char* name) {
        return lists.count(name) ? reinterpret_cast<uint8_t*>(outWords.at(name).data())
                                 : reinterpret_cast<uint8_t*>(&emptyList);
    };
    ascendc_emulate::SharedBytes scalars(64);
    int64_t stepValue = 1 + static_cast<int64_t>((seed + static_cast<uint64_t>(index) * 7919) % 1000);
    const float gradScale = 512.0f, lr = 2e-3f, emaDecay = 0.99f;
    uint8_t* const base = scalars.data();
    std::memcpy(base, &stepValue, 8);
    std::memcpy(base + 8, &gradScale, 4);
    std::memcpy(base + 12, &c.foundInf, 4);
    std::memcpy(base + 16, &lr, 4);
    std::memcpy(base + 20, &emaDecay, 4);
    ApplyFusedEmaAdamListTilingData tiling = t.data;

    char name[96];
    std::snprintf(name, sizeof name, "%s_%03d", kV2 ? "list_v2" : "list", index);
    ascendc_emulate::CaseWriter w(out, name);
    auto writeAll = [&](const char* suffix, bool inputs) {
        for (auto& [listName, l] : lists) {
            if (!inputs && listName == "grads") continue;
            for (size_t i = 0; i < l.entries.size(); ++i) {
                w.Tensor(listName + "_" + std::to_string(i) + suffix, l.entries[i].data(), l.entries[i].size());
            }
        }
    };
    writeAll(".in", true);
    const ascendc_emulate::LaunchOutcome o =
        t.blockDim == 0 ? ascendc_emulate::LaunchOutcome{}
                        : ascendc_emulate::Launch(name, t.blockDim, t.tilingKey, c.saturation, [&] {
#if AEA_LIST_EMULATE_V2
                              apply_fused_ema_adam_list_v2(
                                  inList("grads"), inList("vars"), inList("ms"), inList("vs"), inList("ss"),
                                  inList("max_vs"), inList("model_copies"), base,
                                  options.gradScale ? base + 8 : nullptr, options.foundInf ? base + 12 : nullptr,
                                  options.lrTensor ? base + 16 : nullptr, options.emaDecayTensor ? base + 20 : nullptr,
                                  outList("vars"), outList("ss"), outList("max_vs"), outList("model_copies"),
                                  outList("ms"), outList("vs"), nullptr, reinterpret_cast<uint8_t*>(&tiling));
#else
                              apply_fused_ema_adam_list(
                                  inList("grads"), inList("vars"), inList("ms"), inList("vs"), inList("ss"),
                                  inList("max_vs"), inList("model_copies"), base,
                                  options.gradScale ? base + 8 : nullptr, options.foundInf ? base + 12 : nullptr,
                                  outList("vars"), outList("ss"), outList("max_vs"), outList("model_copies"),
                                  outList("ms"), outList("vs"), nullptr, reinterpret_cast<uint8_t*>(&tiling));
#endif
                          });
    writeAll(".out", false);
    w.Meta("kernel", kV2 ? "list_v2" : "list");
    w.Meta("param", ascendc_emulate::DtName(p));
    w.Meta("state", ascendc_emulate::DtName(s));
    w.Meta("grad", ascendc_emulate::DtName(g));
    w.Meta("copy", d.hasCopy ? ascendc_emulate::DtName(DtOf(d.copy)) : "");
    w.Meta("entries", static_cast<double>(numels.size()));
    w.Meta("amsgrad", options.amsgrad ? 1.0 : 0.0);
    w.Meta("ema", options.ema ? 1.0 : 0.0);
    w.Meta("maximize", attrs.maximize ? 1.0 : 0.0);
    if (options.gradScale) w.Meta("grad_scale", gradScale); else w.Meta("grad_scale", "none");
    if (options.foundInf) w.Meta("found_inf", c.foundInf); else w.Meta("found_inf", "none");
    w.Meta("step", static_cast<double>(stepValue));
    w.Meta("lr", options.lrTensor ? double{lr} : attrs.lr);
    w.Meta("ema_decay", options.emaDecayTensor ? double{emaDecay} : attrs.emaDecay);
    w.Meta("beta1", attrs.beta1);
    w.Meta("beta2", attrs.beta2);
    w.Meta("eps", attrs.eps);
    w.Meta("mode", static_cast<double>(attrs.mode));
    w.Meta("bias_correction", attrs.biasCorrection ? 1.0 : 0.0);
    w.Meta("weight_decay", attrs.weightDecay);
    w.Meta("overflow_mode", c.saturation ? "saturation" : "inf_nan");
    w.Meta("tiling_key", static_cast<double>(t.tilingKey));
    w.Meta("platform_cores", static_cast<double>(c.cores));
    w.Meta("cores", static_cast<double>(t.blockDim));
    w.Meta("chunk", static_cast<double>(chunk));
    w.Meta("failed_blocks", static_cast<double>(o.failedBlocks));
    w.Meta("hazards", static_cast<double>(o.hazards));
    w.Meta("vector_instructions", static_cast<double>(o.total.vectorInstructions));
    w.Meta("mte2_bytes", static_cast<double>(o.total.mte2Bytes));
    w.Meta("mte3_bytes", static_cast<double>(o.total.mte3Bytes));
    w.Meta("max_core_vector_instructions", static_cast<double>(o.perCoreMax.vectorInstructions));
    w.Meta("max_core_mte2_copies", static_cast<double>(o.perCoreMax.mte2Copies));
    return o.failedBlocks;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <out dir> <seed>\n", argv[0]);
        return 2;
    }
    ascendc_emulate::UseSourceRootsFromEnvironment();
    const std::string out = argv[1];
    const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
    Options small;  // grad scale, found_inf clear; V2: lr and decay tensors
    small.inputs.gradScale = true;
    small.inputs.lrTensor = small.inputs.emaDecayTensor = kV2;
    Options chunked;  // AMSGrad, maximize; V2: without the EMA
    chunked.inputs.amsgrad = true;
    chunked.inputs.ema = !kV2;
    chunked.maximize = true;
    int failed = 0, index = 0;
    for (const list_op::ListDtypes& d : list_op::ListDtypeCombinations()) {
        // 48 cores: entries of 1 element, shorter than a block, and a few hundred.
        failed += RunCase(out, seed, d, {48, {1, 37, 300, 17}, small, 0.0f, 1, true}, index++);
        // 4 cores: 2 + 3 + 1 chunks and tails spread over the cores (1-2 chunks each), then 6 chunks more.
        failed += RunCase(out, seed, d, {4, {2000013, 1, 3000000, 1000064, 5}, chunked, kNoValue, 0, false}, index++);
        failed += RunCase(out, seed, d, {4, {16000029, 7}, small, kNoValue, 1, true}, index++);
        const bool sixteenBit = d.state != aea::DataType::kFloat32 || d.hasCopy;
        if (sixteenBit) {
            for (bool saturation : {false, true}) {
                Case c{4, {2000041, 9}, chunked, kNoValue, 1, true};
                c.overflow = true;
                c.saturation = saturation;
                failed += RunCase(out, seed, d, c, index++);
            }
        }
    }
    // found_inf set: nothing is written (the first dtype row).
    failed += RunCase(out, seed, list_op::ListDtypeCombinations()[0], {4, {1000003, 40}, small, 1.0f, 1, true}, index++);
    std::printf("emulate: %s: %d launches, %d failed block(s)\n", argv[0], index, failed);
    return failed == 0 ? 0 : 1;
}
