/**
 * @file apply_fused_ema_adam_list_def.h
 * @brief What the two CANN registrations of the list kernel share
 *        (apply_fused_ema_adam_list_def.cpp: ApplyFusedEmaAdamList, and
 *        apply_fused_ema_adam_list_v2_def.cpp: ApplyFusedEmaAdamListV2): the tiling adapter and the
 *        OpDef, over what every list operator's registration shares (cann_list_common.h: reading
 *        the gert context, infershape). Built only inside a CANN custom-op project (see build.sh);
 *        type-checked against CANN's registration headers by tools/cann_registration_check/run.sh.
 *
 * The tiling adapter reads every list from the gert context (instance counts, per-instance dtype
 * and storage shape), the optional grad_scale/found_inf (V2: and lr_tensor/ema_decay_tensor) and
 * the attributes, refuses the call with the CPU aclnn layer's own validation
 * (CheckApplyFusedEmaAdamList, the same messages) plus the NPU's condition that every list is 1-D
 * (CheckApplyFusedEmaAdamListFlat: the device's list decoder reads every shape of a list with its
 * first tensor's rank), and tiles with the same ComputeApplyFusedEmaAdamListTiling. The per-core
 * start table keeps the tiling data small for any number of tensors; its size is checked against
 * CANN's capacity before it is written.
 *
 * The EMA list of V2 is optional. CANN's OpDef cannot say so: a parameter's ParamType is ONE of
 * REQUIRED, OPTIONAL and DYNAMIC (metadef op_def.h, enum Option), so ss stays DYNAMIC and "no
 * EMA" is, as for max_vs and model_copies, a list of zero-element placeholders (or a dynamic
 * input with no instance, from a caller that passes an empty list; docs/ACLNN.md, "Absent
 * lists").
 */
#ifndef ASCEND_EMA_ADAM_CANN_APPLY_FUSED_EMA_ADAM_LIST_DEF_H
#define ASCEND_EMA_ADAM_CANN_APPLY_FUSED_EMA_ADAM_LIST_DEF_H

#include <cstdint>
#include <vector>

#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_opdef.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "cann_list_common.h"

// The CANN registrations' own helpers: nested, since only CANN's tiling library compiles them (its
// ListCall is not the torch op's, csrc/ops/apply_fused_ema_adam_list/, in the same process).
namespace ascend_ema_adam::apply_fused_ema_adam_list::registration {

/** The two registrations of the one list kernel: V2 adds the optional lr_tensor and
 *  ema_decay_tensor inputs after found_inf, and its ss list may have no instance (no EMA). */
enum class Version { kV1, kV2 };

// OpDef input order: the seven lists (kApplyFusedEmaAdamListGrads ...
// kApplyFusedEmaAdamListCopies), then these.
constexpr size_t INPUT_STEP = kApplyFusedEmaAdamListTensorLists;
constexpr size_t INPUT_GRAD_SCALE = INPUT_STEP + 1;
constexpr size_t INPUT_FOUND_INF = INPUT_STEP + 2;
constexpr size_t INPUT_LR = INPUT_STEP + 3;         // V2 only
constexpr size_t INPUT_EMA_DECAY = INPUT_STEP + 4;  // V2 only
constexpr int kMaxScalars = 5;  // step, grad_scale, found_inf (, lr_tensor, ema_decay_tensor)

/** The call as the shared validation sees it (cann_list_common.h). */
using ListCall = cann::ListCall<kApplyFusedEmaAdamListTensorLists, ListEntryArg, kMaxScalars,
                                ApplyFusedEmaAdamListArgs>;

/** The tiling of either registration (opType names it in messages): every list, step and grad_scale
 *  / found_inf (, lr_tensor / ema_decay_tensor with V2) (optional: absent when CANN has no
 *  instance), the attributes and the platform, then the checks and
 *  ComputeApplyFusedEmaAdamListTiling. */
inline ge::graphStatus Tiling(gert::TilingContext* context, const char* opType, Version version)
{
    const char* node = cann::NodeName(context, opType);
    ListCall call;
    call.args.emaOptional = version == Version::kV2;
    const cann::TensorInput inputs[kMaxScalars] = {
        {INPUT_STEP, kApplyFusedEmaAdamListStepName, true, &call.args.step},
        {INPUT_GRAD_SCALE, kApplyFusedEmaAdamListGradScaleName, false, &call.args.gradScale},
        {INPUT_FOUND_INF, kApplyFusedEmaAdamListFoundInfName, false, &call.args.foundInf},
        {INPUT_LR, kApplyFusedEmaAdamListLrName, false, &call.args.lr},
        {INPUT_EMA_DECAY, kApplyFusedEmaAdamListEmaDecayName, false, &call.args.emaDecay}};
    ApplyFusedEmaAdamListAttrs attrs;
    Platform platform;
    size_t systemWorkspace = 0;
    if (!cann::ReadListLaunch(context, node,
                              {kApplyFusedEmaAdamListNames, ApplyFusedEmaAdamListEntryName}, inputs,
                              version == Version::kV2 ? kMaxScalars : 3, &call, &attrs, &platform,
                              &systemWorkspace)) {
        return ge::GRAPH_FAILED;
    }
    return cann::TileAndWrite<ApplyFusedEmaAdamListTilingResult>(
        context, node, systemWorkspace, [&](ApplyFusedEmaAdamListTilingResult* r) {
            ApplyFusedEmaAdamListDtypes dtypes;
            ApplyFusedEmaAdamListOptions options;
            Refusal refusal =
                CheckApplyFusedEmaAdamList(call.args, attrs, &dtypes, &options);
            if (refusal.empty()) {
                refusal = CheckApplyFusedEmaAdamListFlat(call.args);
            }
            if (!refusal.empty()) {
                return refusal;
            }
            *r = ComputeApplyFusedEmaAdamListTiling(call.Numels(kApplyFusedEmaAdamListGrads),
                                                    dtypes, attrs, options, platform);
            return Refusal();
        });
}

/**
 * The OpDefs' outputs, as input lists (kList*), in declaration order: varsRef first (opbase
 * keys an empty output list by the first output's dtype, so the dtype columns do not depend on
 * the rest), and a list that is never empty last. CANN's opbase leaves the place holder of an
 * empty LAST output list unfilled, and the runtime then writes the argument buffer's address
 * over the kernel's first argument (docs/ACLNN.md, "D1"). The kernels' entry parameters follow
 * this order; the generated aclnn signatures do not depend on it (the outputs are the inputs'
 * in-place twins). An absent list, or V2's ss without the EMA, has no output instance.
 */
static constexpr const int (&kOutputOrder)[kApplyFusedEmaAdamListOutputs] =
    kApplyFusedEmaAdamListOutputOrder;

/**
 * The OpDef of either registration. Its dtype columns are ApplyFusedEmaAdamListOpDefColumns
 * (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_opdef.h): one per dtype
 * combination, an absent list keyed by its placeholders' dtype, so every launch the contract
 * allows finds its kernel binary.
 */
inline void Define(ops::OpDef& def, Version version, gert::OpImplRegisterV2::TilingKernelFunc tiling)
{
    std::vector<ge::DataType> inputs[kApplyFusedEmaAdamListTensorLists];
    std::vector<ge::DataType> outputs[kApplyFusedEmaAdamListOutputs];
    for (const ApplyFusedEmaAdamListOpDefColumn& c : ApplyFusedEmaAdamListOpDefColumns()) {
        for (int list = 0; list < kApplyFusedEmaAdamListTensorLists; ++list) {
            inputs[list].push_back(cann::GeDataType(c.inputs[list]));
        }
        for (int out = 0; out < kApplyFusedEmaAdamListOutputs; ++out) {
            outputs[out].push_back(cann::GeDataType(c.outputs[out]));
        }
    }
    const char* names[kApplyFusedEmaAdamListTensorLists] = {"grads", "vars",   "ms",          "vs",
                                                            "ss",    "max_vs", "model_copies"};
    for (int list = 0; list < kApplyFusedEmaAdamListTensorLists; ++list) {
        cann::AddInput(def, names[list], ops::DYNAMIC, inputs[list]);
    }
    std::vector<const char*> scalars = {"grad_scale", "found_inf"};
    if (version == Version::kV2) {  // not "lr"/"ema_decay": the attributes have those names
        scalars.insert(scalars.end(), {"lr_tensor", "ema_decay_tensor"});
    }
    cann::AddStepAndScalars(def, inputs[0].size(), scalars);
    for (const int list : kOutputOrder) {  // outputs[] is indexed by input list - 1
        cann::AddListOutput(def, names[list], outputs[list - 1]);
    }
    cann::FinishListOpDef<kApplyFusedEmaAdamListOutputOrder>(def, tiling);
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list::registration

#endif  // ASCEND_EMA_ADAM_CANN_APPLY_FUSED_EMA_ADAM_LIST_DEF_H
