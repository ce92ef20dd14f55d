/**
 * @file apply_fused_ema_adam8bit_list_cases.cpp
 * @brief ApplyFusedEmaAdam8bitList's cases of tools/cann_host: every dtype row of its contract with
 *        the EMA and without, empty lists (D1), the scalars, overflowing 16-bit results, entry
 *        counts and sizes, repeatable executors, executor reuse; then its refusals.
 */
#include <cmath>

#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "cann_host_case.h"

namespace cann_host {
namespace {

// ApplyFusedEmaAdam8bitList's dtype rows, from its contract (the OpDef's columns, one tiling key
// each): {G, P, state (unused: uint8 codes, fp32 scales and EMA for every row), C or -1}.
constexpr int kRow8_FP32 = F32, kRow8_FP16 = F16, kRow8_BF16 = BF16, kRow8_NONE = -1;
std::vector<Combo> Rows8()
{
    std::vector<Combo> rows;
#define AEA_ROW8(key, P, G, C) rows.push_back({kRow8_##G, kRow8_##P, F32, kRow8_##C});
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ROW8)
#undef AEA_ROW8
    return rows;
}

std::string RowName8(const Combo& c)
{
    return std::string("8bit_g") + DtName(c.grad) + "_p" + DtName(c.param) +
           (c.copy >= 0 ? std::string("_c") + DtName(c.copy) : std::string());
}

/** The 8-bit list op: entries with tails (5, 300 and 513 elements: 1, 2 and 3 blocks of 256, the
 *  last ones short). */
std::vector<Case> Table8()
{
    std::vector<Case> t;
    Case base;
    base.op = Op::k8bit;
    base.numels = {5, 300, 513};
    // Every dtype row, with the EMA and without it (ss as placeholders).
    for (const Combo& c : Rows8()) {
        for (bool ema : {true, false}) {
            Case k = base;
            k.c = c;
            k.copies = c.copy >= 0;
            k.ss = ema;
            k.name = RowName8(c) + (ema ? "" : "_noema");
            t.push_back(k);
        }
    }
    // D1: empty (not placeholder) ss / model_copies lists. model_copies was the last output list
    // before the outputs were reordered: its place holder stayed unfilled and the kernel's first
    // argument pointed at the argument buffer. Now an empty list is in the middle of the outputs.
    {
        Case k = base;
        k.emptyLists = true;
        k.name = "8bit_D1_empty_model_copies";
        t.push_back(k);
        k.ss = false;
        k.name = "8bit_D1_empty_ss_and_model_copies";
        t.push_back(k);
        Case b = base;
        b.c = {BF16, BF16, F32, -1};
        b.emptyLists = true;
        b.name = "8bit_D1_empty_model_copies_gbf16_pbf16";
        t.push_back(b);
        // opbase keys an empty list by grads[0]'s dtype as an input (and varsRef[0]'s as an
        // output): where that is not the list's dtype in any column, it refuses the call.
        Case ss = base;
        ss.copies = true;
        ss.ss = false;
        t.push_back(EmptyListWithoutAColumn(
            ss, {F16, F32, F32, BF16},
            "an empty (not placeholder) ss of fp16 gradients: opbase keys it fp16 and finds no OpDef column (ss is "
            "fp32); our CPU layer takes an empty list as absent",
            "8bit_empty_ss_without_a_column"));
        t.push_back(EmptyListWithoutAColumn(
            base, {F32, BF16, F32, -1},
            "an empty (not placeholder) model_copies of bf16 parameters with fp32 gradients: opbase keys it fp32 as "
            "an input, the column has bf16; our CPU layer takes an empty list as absent",
            "8bit_empty_model_copies_without_a_column"));
    }
    // Scalars on fp32 masters with bf16 copies and fp16 gradients.
    {
        Case s = base;
        s.c = {F16, F32, F32, BF16};
        s.copies = true;
        const struct {
            const char* name;
            std::function<void(Case&)> set;
        } variants[] = {
            {"grad_scale", [](Case& k) { k.gradScale = true; }},
            {"found_inf_clear", [](Case& k) { k.foundInf = true; }},
            {"found_inf_set", [](Case& k) { k.foundInf = true; k.foundInfValue = 1.0f; }},
            {"grad_scale_found_inf_set", [](Case& k) { k.gradScale = k.foundInf = true; k.foundInfValue = 1.0f; }},
            {"maximize", [](Case& k) { k.maximize = true; }},
            {"l2_mode", [](Case& k) { k.mode = 0; }},
            {"no_bias_correction", [](Case& k) { k.biasCorrection = false; }},
            {"lr_tensor", [](Case& k) { k.lrTensor = true; }},
            {"ema_decay_tensor", [](Case& k) { k.emaDecayTensor = true; }},
            {"all_tensors", [](Case& k) { k.gradScale = k.foundInf = k.lrTensor = k.emaDecayTensor = true; }},
            {"lr_tensor_noema", [](Case& k) { k.lrTensor = k.emaDecayTensor = true; k.ss = false; }},
        };
        for (const auto& v : variants) {
            Case k = s;
            v.set(k);
            k.name = std::string("8bit_") + v.name;
            t.push_back(k);
        }
    }
    // 16-bit results that overflow (16-bit parameters, model copies), the device in INF_NAN and in
    // saturation mode; the blocks with a non-finite gradient get a NaN or inf scale.
    for (const Combo& c : {Combo{F16, F16, F32, -1}, Combo{BF16, BF16, F32, -1}, Combo{F16, F32, F32, F16},
                           Combo{F32, F32, F32, BF16}}) {
        for (bool saturation : {false, true}) {
            Case k = base;
            k.c = c;
            k.copies = c.copy >= 0;
            k.overflowing = true;
            k.saturation = saturation;
            k.name = RowName8(c) + "_overflow" + (saturation ? "_saturation_mode" : "_inf_nan_mode");
            t.push_back(k);
        }
    }
    // Entry counts and sizes: one entry of many blocks (several chunks per core), 255 and 256 small
    // entries (CANN's limit per list).
    {
        Case k = base;
        k.numels = {1000003};
        k.name = "8bit_one_entry_1000003";
        t.push_back(k);
        for (size_t count : {255, 256}) {
            Case e = base;
            e.numels.assign(count, 0);
            for (size_t i = 0; i < count; ++i) {
                e.numels[i] = static_cast<int64_t>(1 + (i * 37) % 301);
            }
            e.name = "8bit_entries" + std::to_string(count);
            t.push_back(e);
        }
    }
    // Repeatable executors: new gradients, vars entry 0 moved, a new step (and lr) each repeat.
    for (int optionals = 0; optionals < 3; ++optionals) {
        Case k = base;
        k.c = {F16, F32, F32, F16};
        k.copies = true;
        k.gradScale = optionals != 1;
        k.foundInf = optionals == 0;
        k.lrTensor = k.emaDecayTensor = optionals != 1;
        k.moveLr = optionals == 2;
        k.repeats = 3;
        k.name = std::string("8bit_repeatable") +
                 (optionals == 1 ? "_no_optionals" : optionals == 2 ? "_no_found_inf_lr_moves" : "");
        t.push_back(k);
    }
    // Executor reuse on one process (placeholders): the EMA on -> off -> on, copies -> none ->
    // copies; with an empty model_copies list instead, D2 (an expected failure while it fails).
    {
        const Case on = WithModelCopies(base);
        t.push_back(EmaOnOffOn(on, "8bit_order_ema_on_off_on"));
        Case none = base;
        none.c = {BF16, F32, F32, -1};
        t.push_back(Chain({on, none, on}, "8bit_order_copies_none_copies"));
        Case empty = base;
        empty.emptyLists = true;
        Case copies32 = base;
        copies32.c = {F32, F32, F32, BF16};
        copies32.copies = true;
        t.push_back(Chain({copies32, empty}, "8bit_reuse_copies_then_empty"));
    }
    return t;
}

}  // namespace

std::vector<Case> ApplyFusedEmaAdam8bitListCases()
{
    std::vector<Case> t = Table8();
    // Refusals, on fp32 masters with bf16 copies unless set.
    const auto add8 = [&](const std::string& bad, int64_t code, std::function<void(Case&)> f = {}) {
        t.push_back(Refusal(Op::k8bit, bad, code, [f](Case& k) {
            k.numels = {5, 300, 513};
            k.c = {F32, F32, F32, BF16};
            k.copies = true;
            if (f) {
                f(k);
            }
        }));
    };
    add8("null-list", 161001);
    add8("entries257", 161002, [](Case& k) { k.numels.assign(257, 3); });
    add8("grad-dtype", 561002);
    add8("int-dtype", 161002);
    add8("float-codes", 161002);
    add8("absmax-dtype", 161002);
    add8("ss-dtype", 161002);
    add8("map-dtype", 161002);
    add8("step-dtype", 161002);
    add8("shape", 561002);
    add8("absmax-shape", 561002);
    add8("ss-short", 561002);
    add8("map-shape", 561002);
    add8("step-shape", 561002);
    add8("copies-of-fp16-params", 561002, [](Case& k) { k.c = {F16, F16, F32, F16}; });
    add8("bad-mode", 561002, [](Case& k) { k.mode = 2; });
    add8("bad-lr", 561002, [](Case& k) { k.lr = std::nan(""); });
    add8("bad-beta", 561002, [](Case& k) { k.beta1 = 1.0; });
    add8("rank2", 561002, [](Case& k) {
        k.numels = {64, 300};
        k.cannRefuses = true;
        k.difference = "a 2-D list entry: our tiling takes 1-D entries only (the NPU torch op passes 1-D "
                       "views), our CPU layer takes any shape";
    });
    add8("step0", -1, [](Case& k) {
        k.step = 0;
        k.difference = "step is device data: CANN's tiling cannot read it (the kernel divides by 1 - beta^0 = 0); "
                       "our CPU layer reads it at phase 1 and refuses step < 1 with bias correction";
    });
    return t;
}

}  // namespace cann_host
