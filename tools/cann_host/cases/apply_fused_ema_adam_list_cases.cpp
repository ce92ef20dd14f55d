/**
 * @file apply_fused_ema_adam_list_cases.cpp
 * @brief ApplyFusedEmaAdamList's cases of tools/cann_host, V1 and V2: every dtype combination with
 *        the optional lists absent and present, the scalars, repeatable executors, executor reuse,
 *        entry counts, overflowing 16-bit results; then its refusals.
 */
#include <cmath>

#include "cann_host_case.h"

namespace cann_host {
namespace {

// The dtype combinations: every (grad, param, state, copy) our kernels have a tiling key for
// (op_kernel/*_tiling_key.h): each a dtype column of the OpDef.
std::vector<Combo> ListCombos()
{
    std::vector<Combo> c = {{F32, F32, F32, -1}, {F16, F32, F32, F16}, {F32, F32, F32, F16},
                            {BF16, F32, F32, BF16}, {F32, F32, F32, BF16}};
    for (int p : {F16, BF16}) {
        c.push_back({p, p, p, -1});
        c.push_back({F32, p, p, -1});
        c.push_back({p, p, F32, -1});
        c.push_back({F32, p, F32, -1});
    }
    return c;
}

std::string ComboName(const Combo& c)
{
    std::string s = std::string("g") + DtName(c.grad) + "_p" + DtName(c.param) + "_s" + DtName(c.state);
    if (c.copy >= 0) {
        s += std::string("_c") + DtName(c.copy);
    }
    return s;
}

}  // namespace

std::vector<Case> ApplyFusedEmaAdamListCases()
{
    std::vector<Case> t;
    {
        std::vector<std::pair<Case, std::string>> bases;
        Case v2;
        v2.op = Op::kV2;
        v2.maxVs = v2.lrTensor = v2.emaDecayTensor = true;
        for (int d : {F16, BF16}) {
            v2.c = {d, d, d, -1};
            bases.push_back({v2, std::string("V2_") + DtName(d) + "_amsgrad"});
        }
        Case copies;
        copies.copies = true;
        copies.c = {F16, F32, F32, F16};
        bases.push_back({copies, "V1_gf16_pf32_sf32_cf16"});
        copies.c = {F32, F32, F32, BF16};
        bases.push_back({copies, "V1_gf32_pf32_sf32_cbf16"});
        AddOverflowing(t, bases);
    }
    // List ops: every combination, the optional lists absent and present.
    for (Op op : {Op::kV1, Op::kV2}) {
        for (const Combo& c : ListCombos()) {
            for (int variant = 0; variant < 4; ++variant) {
                Case k;
                k.op = op;
                k.c = c;
                k.copies = c.copy >= 0;
                k.maxVs = variant & 1;
                k.ss = !(variant & 2);
                k.name = std::string(OpName(op)) + "_" + ComboName(c) + (k.maxVs ? "_amsgrad" : "") +
                         (k.ss ? "" : "_noema");
                if (op == Op::kV1 && !k.ss) {
                    // V1 is the EMA op: its ssRef holds values, and placeholders have the wrong
                    // shape: refused by our tiling (561002).
                    k.expected = -1;
                }
                t.push_back(k);
            }
            if (c.copy >= 0 && c.grad != F32) {  // 16-bit grads of fp32 params come with copies
                Case k;
                k.op = op;
                k.c = c;
                k.copies = false;
                k.expected = 161002;  // no OpDef dtype column (copies keyed fp32): opbase refuses
                k.name = std::string(OpName(op)) + "_" + ComboName(c) + "_nocopies";
                t.push_back(k);
            }
        }
        // Scalars: grad scale, found_inf (clear and set), maximize, L2 mode, lr/decay tensors (V2).
        for (int s = 0; s < 5; ++s) {
            Case k;
            k.op = op;
            k.gradScale = s == 0 || s == 2;
            k.foundInf = s == 1 || s == 2;
            k.foundInfValue = s == 2 ? 1.0f : 0.0f;
            k.maximize = s == 3;
            k.mode = s == 4 ? 0 : 1;
            k.name = std::string(OpName(op)) + "_scalars" + std::to_string(s);
            t.push_back(k);
        }
        if (op == Op::kV2) {
            for (int s = 0; s < 3; ++s) {
                Case k;
                k.op = op;
                k.lrTensor = s != 1;
                k.emaDecayTensor = s != 0;
                k.name = "V2_tensors" + std::to_string(s);
                t.push_back(k);
            }
        }
        // Repeatable executors: phase 2 again after address updates, every optional one-element
        // input given, then none of them (each keeps its slot of the flat index), then (V2) a grad
        // scale and the lr / decay tensors without found_inf, lr moving: its slot is after
        // found_inf's, given or not (opbase), not after the grad scale.
        for (int optionals = 0; optionals < (op == Op::kV2 ? 3 : 2); ++optionals) {
            Case k;
            k.op = op;
            k.c = {F16, F32, F32, F16};
            k.copies = true;
            k.numels = {5, 300, 64};
            k.gradScale = optionals != 1;
            k.foundInf = optionals == 0;
            k.lrTensor = k.emaDecayTensor = optionals != 1 && op == Op::kV2;
            k.moveLr = optionals == 2;
            k.repeats = 3;
            k.name = std::string(OpName(op)) + "_repeatable" +
                     (optionals == 1 ? "_no_optionals" : optionals == 2 ? "_no_found_inf_lr_moves" : "");
            t.push_back(k);
        }
        // Executor reuse: one process runs option sets one after the other (opbase's pool hands an
        // executor back): AMSGrad -> none and back, with and without model copies; placeholders
        // keep every list's instances current. With empty lists instead, opbase keeps the last
        // max_vs of the reused executor (D2: an expected failure, docs/ACLNN.md).
        for (bool empty : {false, true}) {
            for (bool copies : {false, true}) {
                Case k;
                k.op = op;
                k.c = copies ? Combo{F16, F32, F32, F16} : Combo{F32, F32, F32, -1};
                k.copies = copies;
                k.emptyLists = empty;
                auto first = std::make_shared<Case>(k);
                first->maxVs = true;
                k.before = first;
                const std::string tail = std::string(copies ? "_copies" : "") + (empty ? "_empty_lists" : "");
                k.name = std::string(OpName(op)) + "_reuse_amsgrad_then_not" + tail;
                t.push_back(k);
                Case r = k;  // and the reverse
                auto first2 = std::make_shared<Case>(k);
                first2->before = nullptr;
                r.before = first2;
                r.maxVs = true;
                r.name = std::string(OpName(op)) + "_reuse_not_then_amsgrad" + tail;
                t.push_back(r);
            }
        }
        if (op == Op::kV2) {
            // Every order of option sets the optimizer makes on one process: EMA on -> off -> on
            // (ema_every), AMSGrad with the EMA on then off (an empty ss aliased the stale max_vs
            // before placeholders), model copies -> none.
            Case v2;
            v2.op = op;
            const Case on = WithModelCopies(v2);
            t.push_back(EmaOnOffOn(on, "V2_order_ema_on_off_on"));
            Case amsOn = on;
            amsOn.maxVs = true;
            Case amsOff = amsOn;
            amsOff.ss = false;
            t.push_back(Chain({amsOn, amsOff}, "V2_order_amsgrad_ema_on_then_off"));
            Case copies = on;
            Case none = on;
            none.c = {F32, F32, F32, -1};
            none.copies = false;
            t.push_back(Chain({copies, none, copies}, "V2_order_copies_none_copies"));
            // An empty max_vs is keyed with grads[0]'s dtype as an input and varsRef[0]'s as an
            // output: where they differ from the state's, the OpDef has no column for it.
            Case mixed;
            mixed.op = op;
            t.push_back(EmptyListWithoutAColumn(
                mixed, {BF16, BF16, F32, -1},
                "an empty (not placeholder) max_vs of a bf16 group with fp32 state: opbase keys it bf16 and finds "
                "no OpDef column; our CPU layer takes an empty list as absent",
                "V2_empty_list_without_a_column"));
        }
        // Entry counts.
        for (size_t count : {1, 255, 256}) {
            Case k;
            k.op = op;
            k.numels.assign(count, 0);
            for (size_t i = 0; i < count; ++i) {
                k.numels[i] = static_cast<int64_t>(1 + (i * 7) % 29);
            }
            k.name = std::string(OpName(op)) + "_entries" + std::to_string(count);
            t.push_back(k);
        }
    }

    const auto add = [&](Op op, const std::string& bad, int64_t code, const std::function<void(Case&)>& f = {}) {
        t.push_back(Refusal(op, bad, code, f));
    };
    for (Op op : {Op::kV1, Op::kV2}) {
        add(op, "null-list", 161001);
        add(op, "rank2", 561002, [](Case& k) {
            k.numels = {64, 33};
            k.copies = true;
            k.c = {F16, F32, F32, F16};
            k.cannRefuses = true;
            k.difference = "a 2-D list entry: our tiling takes 1-D entries only (the NPU torch op passes 1-D "
                           "views), our CPU layer takes any shape";
        });
        add(op, "entries257", 161002, [](Case& k) { k.numels.assign(257, 3); });
        add(op, "grad-dtype", 561002);
        add(op, "state-dtype", 161002);
        add(op, "int-dtype", 161002);
        add(op, "shape", 561002);
        add(op, "overlap", 561002);
        add(op, "step-dtype", 161002);
        add(op, "step-shape", 561002);
        add(op, "bad-mode", 561002, [](Case& k) { k.mode = 2; });
        add(op, "bad-lr", 561002, [](Case& k) { k.lr = std::nan(""); });
        add(op, "bad-beta", 561002, [](Case& k) { k.beta1 = 1.0; });
        add(op, "step0", -1, [](Case& k) {
            k.step = 0;
            k.copies = true;
            k.c = {F16, F32, F32, F16};
            k.difference = "step is device data: CANN's tiling cannot read it (the kernel divides by 1 - beta^0 = 0); "
                           "our CPU layer reads it at phase 1 and refuses step < 1 with bias correction";
        });
    }
    return t;
}

}  // namespace cann_host
