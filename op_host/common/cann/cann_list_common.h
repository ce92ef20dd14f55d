/**
 * @file cann_list_common.h
 * @brief What the CANN registrations of the list operators (a parameter group per launch, each
 *        list a DYNAMIC input) share, parametrised by the operator: reading every list's instances
 *        and the single tensor inputs from the gert context into the call their shared validation
 *        checks (storage shapes), the attributes (the EMA-Adam ones, then maximize) and the
 *        platform; infershape and inferdtype (each output instance is its input instance's
 *        in-place twin, in the operator's output order); and the OpDef's parts. Header-only, as
 *        cann_tiling_common.h; the operators' *_def files call it (ApplyFusedEmaAdamList and its V2,
 *        ApplyFusedEmaAdam8bitList).
 */
#ifndef ASCEND_EMA_ADAM_CANN_LIST_COMMON_H
#define ASCEND_EMA_ADAM_CANN_LIST_COMMON_H

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "cann_tiling_common.h"

namespace ascend_ema_adam::cann {

/** The list operators' attribute after the EMA-Adam ones. */
constexpr size_t ATTR_MAXIMIZE = EMA_ADAM_ATTR_COUNT;

/** dims of a gert shape. */
inline std::vector<int64_t> DimsOf(const gert::Shape& shape)
{
    std::vector<int64_t> dims(shape.GetDimNum());
    for (size_t d = 0; d < dims.size(); ++d) {
        dims[d] = shape.GetDim(d);
    }
    return dims;
}

/**
 * A list operator's call as its shared validation sees it. Entry is the operator's list entry
 * ({int32_t dtype, const std::vector<int64_t>* shape}); Args its call, whose lists[] and tensor
 * slots point into this object (not copied or moved once read).
 */
template <int kLists, class Entry, int kTensorInputs, class Args>
struct ListCall {
    static constexpr int kListCount = kLists;
    static constexpr int kTensorCount = kTensorInputs;
    std::vector<std::vector<int64_t>> shapes[kLists];
    std::vector<Entry> entries[kLists];
    std::vector<int64_t> tensorShapes[kTensorInputs];
    std::vector<TensorArg> tensors;  // the single tensors given, in the inputs' order
    Args args;

    /** The elements of each entry of `list` (what the tilings take). */
    std::vector<uint64_t> Numels(int list) const
    {
        std::vector<uint64_t> numels;
        numels.reserve(shapes[list].size());
        for (const std::vector<int64_t>& shape : shapes[list]) {
            numels.push_back(static_cast<uint64_t>(Numel(shape)));
        }
        return numels;
    }
};

/** How messages name a list operator's lists ("msRef") and their entries ("msRef[5]"). */
struct ListNaming {
    const char* const* lists;
    std::string (*entry)(int list, size_t index);
};

/** A single tensor input after the lists: its OpDef index, its name in messages, whether it is
 *  required (an optional one is absent when CANN has no instance), and its slot in the call. */
struct TensorInput {
    size_t index;
    const char* name;
    bool required;
    const TensorArg** slot;
};

/** Every instance of dynamic input `list`; false (logged) if CANN gives one without its shape or
 *  description. */
template <class Call>
bool ReadList(const gert::TilingContext* context, const char* node, const ListNaming& naming,
              int list, Call* call)
{
    const gert::ComputeNodeInfo* info = context->GetComputeNodeInfo();
    const gert::AnchorInstanceInfo* instances =
        info != nullptr ? info->GetInputInstanceInfo(list) : nullptr;
    if (instances == nullptr) {
        OP_LOGE(node, "input %s has no instance information", naming.lists[list]);
        return false;
    }
    const size_t count = instances->GetInstanceNum();
    call->shapes[list].reserve(count);  // stable addresses for the entries
    call->entries[list].reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const gert::CompileTimeTensorDesc* desc = context->GetDynamicInputDesc(list, i);
        const gert::StorageShape* shape = context->GetDynamicInputShape(list, i);
        if (desc == nullptr || shape == nullptr) {
            OP_LOGE(node, "%s has no %s", naming.entry(list, i).c_str(),
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

/** The single tensor inputs `inputs[0, count)` (count <= Call::kTensorCount); false (logged) if
 *  a required one, or a given optional one, comes without its shape or description. */
template <class Call>
bool ReadTensorInputs(const gert::TilingContext* context, const char* node,
                      const TensorInput* inputs, int count, Call* call)
{
    call->tensors.reserve(Call::kTensorCount);  // stable addresses for the slots
    for (int t = 0; t < count; ++t) {
        const TensorInput& input = inputs[t];
        const gert::CompileTimeTensorDesc* desc = context->GetOptionalInputDesc(input.index);
        const gert::StorageShape* shape = context->GetOptionalInputShape(input.index);
        if (desc == nullptr || shape == nullptr) {
            if (!input.required && context->GetOptionalInputTensor(input.index) == nullptr) {
                continue;  // not given
            }
            OP_LOGE(node, "input %s has no %s", input.name,
                    desc == nullptr ? "tensor description" : "shape");
            return false;
        }
        call->tensorShapes[t] = DimsOf(shape->GetStorageShape());
        call->tensors.push_back(
            {input.name, static_cast<int32_t>(desc->GetDataType()), call->tensorShapes[t]});
        *input.slot = &call->tensors.back();
    }
    return true;
}

/**
 * What a list operator's tiling adapter reads before its check: every list, the single tensor
 * inputs, the EMA-Adam attributes and maximize (OpAttrs: Attrs with maximize), the platform and
 * AscendC's system workspace; false (logged) if CANN withholds any.
 */
template <class Call, class OpAttrs>
bool ReadListLaunch(gert::TilingContext* context, const char* node, const ListNaming& naming,
                    const TensorInput* inputs, int inputCount, Call* call, OpAttrs* attrs,
                    Platform* platform, size_t* systemWorkspace)
{
    for (int list = 0; list < Call::kListCount; ++list) {
        if (!ReadList(context, node, naming, list, call)) {
            return false;
        }
    }
    const gert::RuntimeAttrs* runtimeAttrs = ReadAttrs(context, node);
    return ReadTensorInputs(context, node, inputs, inputCount, call) && runtimeAttrs != nullptr &&
           ReadEmaAdamAttrs(node, runtimeAttrs, attrs) &&
           ReadAttr(node, runtimeAttrs, ATTR_MAXIMIZE, "maximize", &attrs->maximize) &&
           ReadPlatform(context, node, platform, systemWorkspace);
}

/** Calls copy(list, i, index) for instance i of every output (the in-place twin of input list
 *  kOutputOrder[o], output index `index`) until one returns false; false then, or if an output
 *  has no instance information. An absent list has no instance. */
template <const auto& kOutputOrder, class Context, class Copy>
bool ForEachOutputInstance(Context* context, Copy&& copy)
{
    for (size_t out = 0; out < std::size(kOutputOrder); ++out) {
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
template <const auto& kOutputOrder>
ge::graphStatus InferListShape(gert::InferShapeContext* context)
{
    const bool ok = ForEachOutputInstance<kOutputOrder>(
        context, [context](int list, size_t i, size_t index) {
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
template <const auto& kOutputOrder>
ge::graphStatus InferListDataType(gert::InferDataTypeContext* context)
{
    const bool ok = ForEachOutputInstance<kOutputOrder>(
        context, [context](int list, size_t i, size_t index) {
            return context->SetOutputDataType(index, context->GetDynamicInputDataType(list, i)) ==
                   ge::GRAPH_SUCCESS;
        });
    return ok ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;
}

/**
 * An OpDef input of `type` with one dtype per column, ND. Every input is AutoContiguous (the torch
 * ops pass contiguous 1-D views; other callers' strided views are copied to contiguous ones and
 * back by the generated layer).
 */
inline void AddInput(ops::OpDef& def, const char* name, ops::Option type,
                     const std::vector<ge::DataType>& dtypes)
{
    const std::vector<ge::Format> nd(dtypes.size(), ge::FORMAT_ND);
    def.Input(name).ParamType(type).DataType(dtypes).Format(nd).UnknownShapeFormat(nd)
        .AutoContiguous();
}

/** A DYNAMIC OpDef output with one dtype per column, ND. */
inline void AddListOutput(ops::OpDef& def, const char* name,
                          const std::vector<ge::DataType>& dtypes)
{
    const std::vector<ge::Format> nd(dtypes.size(), ge::FORMAT_ND);
    def.Output(name).ParamType(ops::DYNAMIC).DataType(dtypes).Format(nd).UnknownShapeFormat(nd);
}

/** step (required, int64) and the OPTIONAL fp32 scalar tensors `scalars`, in `columns` columns. */
inline void AddStepAndScalars(ops::OpDef& def, size_t columns,
                              const std::vector<const char*>& scalars)
{
    AddInput(def, "step", ops::REQUIRED, std::vector<ge::DataType>(columns, ge::DT_INT64));
    for (const char* scalar : scalars) {
        AddInput(def, scalar, ops::OPTIONAL, std::vector<ge::DataType>(columns, ge::DT_FLOAT));
    }
}

/** A list OpDef's tail: the EMA-Adam attributes and maximize, infershape / inferdtype in
 *  kOutputOrder, the tiling and the SoCs. */
template <const auto& kOutputOrder>
void FinishListOpDef(ops::OpDef& def, gert::OpImplRegisterV2::TilingKernelFunc tiling)
{
    AddEmaAdamAttrs(def);
    def.Attr("maximize").AttrType(ops::OPTIONAL).Bool(false);
    def.SetInferShape(InferListShape<kOutputOrder>)
        .SetInferDataType(InferListDataType<kOutputOrder>);
    def.AICore().SetTiling(tiling);
    def.AICore().AddConfig("ascend910b");
    def.AICore().AddConfig("ascend910_93");
}

}  // namespace ascend_ema_adam::cann

#endif  // ASCEND_EMA_ADAM_CANN_LIST_COMMON_H
