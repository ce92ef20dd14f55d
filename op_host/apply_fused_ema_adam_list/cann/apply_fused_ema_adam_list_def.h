/**
 * @file apply_fused_ema_adam_list_def.h
 * @brief What the two CANN registrations of the list kernel share (apply_fused_ema_adam_list_def.cpp:
 *        ApplyFusedEmaAdamList, and apply_fused_ema_adam_list_v2_def.cpp: ApplyFusedEmaAdamListV2):
 *        the tiling adapter, infershape and the OpDef. Built only inside a CANN custom-op project
 *        (see build.sh); type-checked against CANN's registration headers by
 *        tools/cann_host_check.sh.
 *
 * The tiling adapter reads every list from the gert context (instance counts, per-instance dtype
 * and storage shape), the optional grad_scale/found_inf (V2: and lr_tensor/ema_decay_tensor) and
 * the attributes, refuses the call with the CPU aclnn layer's own validation
 * (CheckApplyFusedEmaAdamList, the same messages) plus the NPU's condition that every list is 1-D
 * (CheckApplyFusedEmaAdamListFlat: the device's list decoder reads every shape of a list with its
 * first tensor's rank), and tiles with the same ComputeListTiling. The per-core start table keeps
 * the tiling data small for any number of tensors; its size is checked against CANN's capacity
 * before it is written.
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
#include <exception>
#include <vector>

#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_opdef.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "cann_tiling_common.h"

// The CANN registrations' own helpers: nested, since only CANN's tiling library compiles them (its
// ListCall is not the torch op's, csrc/ops/apply_fused_ema_adam_list/, in the same process).
namespace ascend_ema_adam::apply_fused_ema_adam_list::registration {

/** The two registrations of the one list kernel: V2 adds the optional lr_tensor and
 *  ema_decay_tensor inputs after found_inf, and its ss list may have no instance (no EMA). */
enum class Version { kV1, kV2 };

// OpDef input order: the seven lists (kListGrads ... kListCopies), then these.
constexpr size_t INPUT_STEP = kApplyFusedEmaAdamLists;
constexpr size_t INPUT_GRAD_SCALE = INPUT_STEP + 1;
constexpr size_t INPUT_FOUND_INF = INPUT_STEP + 2;
constexpr size_t INPUT_LR = INPUT_STEP + 3;         // V2 only
constexpr size_t INPUT_EMA_DECAY = INPUT_STEP + 4;  // V2 only
constexpr int kMaxScalars = 5;  // step, grad_scale, found_inf (, lr_tensor, ema_decay_tensor)
// Outputs: the six updated lists, the refs of inputs 1..6 (vars ... model_copies).
constexpr size_t kOutputLists = kApplyFusedEmaAdamListOutputs;
// Attributes after the EMA-Adam ones (cann_tiling_common.h).
constexpr size_t ATTR_MAXIMIZE = cann::EMA_ADAM_ATTR_COUNT;

/** dims of a gert shape. */
inline std::vector<int64_t> DimsOf(const gert::Shape& shape)
{
    std::vector<int64_t> dims(shape.GetDimNum());
    for (size_t d = 0; d < dims.size(); ++d) {
        dims[d] = shape.GetDim(d);
    }
    return dims;
}

/** The call as the shared validation sees it; the shapes are the tensors' storage shapes. */
struct ListCall {
    std::vector<std::vector<int64_t>> shapes[kApplyFusedEmaAdamLists];
    std::vector<ListEntryArg> entries[kApplyFusedEmaAdamLists];
    std::vector<int64_t> scalarShapes[kMaxScalars];
    std::vector<TensorArg> scalars;  // step, then the optional ones that are given
    ApplyFusedEmaAdamListArgs args;
};

/** Every instance of dynamic input `list`; false (logged) if CANN gives one without its shape or
 *  description. */
inline bool ReadList(const gert::TilingContext* context, const char* node, int list, ListCall* call)
{
    const gert::ComputeNodeInfo* info = context->GetComputeNodeInfo();
    const gert::AnchorInstanceInfo* instances =
        info != nullptr ? info->GetInputInstanceInfo(list) : nullptr;
    if (instances == nullptr) {
        OP_LOGE(node, "input %s has no instance information", kApplyFusedEmaAdamListNames[list]);
        return false;
    }
    const size_t count = instances->GetInstanceNum();
    call->shapes[list].reserve(count);
    call->entries[list].reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const gert::CompileTimeTensorDesc* desc = context->GetDynamicInputDesc(list, i);
        const gert::StorageShape* shape = context->GetDynamicInputShape(list, i);
        if (desc == nullptr || shape == nullptr) {
            OP_LOGE(node, "%s has no %s", ListEntryName(list, i).c_str(),
                    desc == nullptr ? "tensor description" : "shape");
            return false;
        }
        call->shapes[list].push_back(DimsOf(shape->GetStorageShape()));
        call->entries[list].push_back(
            {static_cast<int32_t>(desc->GetDataType()), &call->shapes[list].back()});
    }
    call->args.lists[list] = &call->entries[list];
    return true;
}

/** step (required) and grad_scale / found_inf (, lr_tensor / ema_decay_tensor with V2) (optional:
 *  absent when CANN has no instance). */
inline bool ReadScalars(const gert::TilingContext* context, const char* node, Version version,
                        ListCall* call)
{
    const struct {
        size_t index;
        const char* name;
        bool required;
    } inputs[kMaxScalars] = {{INPUT_STEP, kListStepName, true},
                             {INPUT_GRAD_SCALE, kListGradScaleName, false},
                             {INPUT_FOUND_INF, kListFoundInfName, false},
                             {INPUT_LR, kListLrName, false},
                             {INPUT_EMA_DECAY, kListEmaDecayName, false}};
    const int count = version == Version::kV2 ? kMaxScalars : 3;
    call->scalars.reserve(kMaxScalars);  // stable addresses for args
    const TensorArg** slots[kMaxScalars] = {&call->args.step, &call->args.gradScale,
                                                 &call->args.foundInf, &call->args.lr,
                                                 &call->args.emaDecay};
    for (int s = 0; s < count; ++s) {
        const gert::CompileTimeTensorDesc* desc = context->GetOptionalInputDesc(inputs[s].index);
        const gert::StorageShape* shape = context->GetOptionalInputShape(inputs[s].index);
        if (desc == nullptr || shape == nullptr) {
            if (!inputs[s].required && context->GetOptionalInputTensor(inputs[s].index) == nullptr) {
                continue;  // not given
            }
            OP_LOGE(node, "input %s has no %s", inputs[s].name,
                    desc == nullptr ? "tensor description" : "shape");
            return false;
        }
        call->scalarShapes[s] = DimsOf(shape->GetStorageShape());
        call->scalars.push_back(
            {inputs[s].name, static_cast<int32_t>(desc->GetDataType()), call->scalarShapes[s]});
        *slots[s] = &call->scalars.back();
    }
    return true;
}

/** The tiling of either registration (opType names it in messages). */
inline ge::graphStatus Tiling(gert::TilingContext* context, const char* opType, Version version)
{
    const char* node = cann::NodeName(context, opType);
    ListCall call;
    call.args.emaOptional = version == Version::kV2;
    for (int list = 0; list < kApplyFusedEmaAdamLists; ++list) {
        if (!ReadList(context, node, list, &call)) {
            return ge::GRAPH_FAILED;
        }
    }
    ListAttrs attrs;
    Platform platform;
    size_t systemWorkspace = 0;
    const gert::RuntimeAttrs* runtimeAttrs = cann::ReadAttrs(context, node);
    if (!ReadScalars(context, node, version, &call) || runtimeAttrs == nullptr ||
        !cann::ReadEmaAdamAttrs(node, runtimeAttrs, &attrs) ||
        !cann::ReadAttr(node, runtimeAttrs, ATTR_MAXIMIZE, "maximize", &attrs.maximize) ||
        !cann::ReadPlatform(context, node, &platform, &systemWorkspace)) {
        return ge::GRAPH_FAILED;
    }
    return cann::TileAndWrite<ListTilingResult>(
        context, node, systemWorkspace, [&](ListTilingResult* r) {
            ListDtypes dtypes;
            ListOptions options;
            Refusal refusal =
                CheckApplyFusedEmaAdamList(call.args, attrs, &dtypes, &options);
            if (refusal.empty()) {
                refusal = CheckApplyFusedEmaAdamListFlat(call.args);
            }
            if (!refusal.empty()) {
                return refusal;
            }
            std::vector<uint64_t> numels;
            numels.reserve(call.shapes[kListGrads].size());
            for (const std::vector<int64_t>& shape : call.shapes[kListGrads]) {
                numels.push_back(static_cast<uint64_t>(Numel(shape)));
            }
            *r = ComputeListTiling(numels, dtypes, attrs, options, platform);
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
 * in-place twins).
 */
static constexpr const int (&kOutputOrder)[kOutputLists] = kApplyFusedEmaAdamListOutputOrder;

/** Calls copy(list, i, index) for instance i of every output (its input list kOutputOrder[o],
 *  output index `index`) until one returns false; false then, or if an output has no instance
 *  information. An absent list, or V2's ss without the EMA, has no instance. */
template <class Context, class Copy>
bool ForEachOutputInstance(Context* context, Copy&& copy)
{
    for (size_t out = 0; out < kOutputLists; ++out) {
        const gert::AnchorInstanceInfo* instances = context->GetIrOutputInstanceInfo(out);
        if (instances == nullptr) {
            return false;
        }
        for (size_t i = 0; i < instances->GetInstanceNum(); ++i) {
            if (!copy(kOutputOrder[out], i, instances->GetInstanceStart() + i)) {
                return false;
            }
        }
    }
    return true;
}

/** Every output instance has its input instance's shape ... */
inline ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    const bool ok = ForEachOutputInstance(context, [context](int list, size_t i, size_t index) {
        const gert::Shape* in = context->GetDynamicInputShape(list, i);
        gert::Shape* shape = context->GetOutputShape(index);
        if (in == nullptr || shape == nullptr) {
            return false;
        }
        *shape = *in;
        return true;
    });
    return ok ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;
}

/** ... and its dtypes. */
inline ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    const bool ok = ForEachOutputInstance(context, [context](int list, size_t i, size_t index) {
        return context->SetOutputDataType(index, context->GetDynamicInputDataType(list, i)) ==
               ge::GRAPH_SUCCESS;
    });
    return ok ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;
}

/**
 * The OpDef of either registration. Its dtype columns are ListOpDefColumns
 * (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_opdef.h): one per dtype
 * combination, an absent list keyed by its placeholders' dtype, so every launch the contract
 * allows finds its kernel binary.
 * Every input is AutoContiguous, as in the single op (the torch op passes contiguous 1-D views;
 * other callers' strided views are copied to contiguous ones and back by the generated layer).
 */
inline void Define(ops::OpDef& def, Version version, gert::OpImplRegisterV2::TilingKernelFunc tiling)
{
    std::vector<ge::DataType> inputs[kApplyFusedEmaAdamLists];
    std::vector<ge::DataType> outputs[kApplyFusedEmaAdamListOutputs];
    for (const ListOpDefColumn& c : ListOpDefColumns()) {
        for (int list = 0; list < kApplyFusedEmaAdamLists; ++list) {
            inputs[list].push_back(cann::GeDataType(c.inputs[list]));
        }
        for (int out = 0; out < kApplyFusedEmaAdamListOutputs; ++out) {
            outputs[out].push_back(cann::GeDataType(c.outputs[out]));
        }
    }
    const size_t n = inputs[0].size();
    const std::vector<ge::Format> nd(n, ge::FORMAT_ND);
    const char* names[kApplyFusedEmaAdamLists] = {
        "grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"};
    for (int list = 0; list < kApplyFusedEmaAdamLists; ++list) {
        def.Input(names[list]).ParamType(ops::DYNAMIC).DataType(inputs[list]).Format(nd)
            .UnknownShapeFormat(nd).AutoContiguous();
    }
    def.Input("step").ParamType(ops::REQUIRED)
        .DataType(std::vector<ge::DataType>(n, ge::DT_INT64)).Format(nd).UnknownShapeFormat(nd)
        .AutoContiguous();
    std::vector<const char*> scalars = {"grad_scale", "found_inf"};
    if (version == Version::kV2) {  // not "lr"/"ema_decay": the attributes have those names
        scalars.insert(scalars.end(), {"lr_tensor", "ema_decay_tensor"});
    }
    for (const char* scalar : scalars) {
        def.Input(scalar).ParamType(ops::OPTIONAL)
            .DataType(std::vector<ge::DataType>(n, ge::DT_FLOAT)).Format(nd)
            .UnknownShapeFormat(nd).AutoContiguous();
    }
    for (const int list : kOutputOrder) {  // outputs[] is indexed by input list - 1
        def.Output(names[list]).ParamType(ops::DYNAMIC).DataType(outputs[list - 1]).Format(nd)
            .UnknownShapeFormat(nd);
    }
    cann::AddEmaAdamAttrs(def);
    def.Attr("maximize").AttrType(ops::OPTIONAL).Bool(false);

    def.SetInferShape(InferShape).SetInferDataType(InferDataType);
    def.AICore().SetTiling(tiling);
    def.AICore().AddConfig("ascend910b");
    def.AICore().AddConfig("ascend910_93");
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list::registration

#endif  // ASCEND_EMA_ADAM_CANN_APPLY_FUSED_EMA_ADAM_LIST_DEF_H
