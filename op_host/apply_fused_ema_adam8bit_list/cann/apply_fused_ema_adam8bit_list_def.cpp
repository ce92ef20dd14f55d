/**
 * @file apply_fused_ema_adam8bit_list_def.cpp
 * @brief CANN registration of ApplyFusedEmaAdam8bitList (generates aclnnApplyFusedEmaAdam8bitList):
 *        the tiling adapter, infershape and the OpDef. Kernel:
 *        op_kernel/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list.cpp. Built only
 *        inside a CANN custom-op project (op_host/common/cann/build.sh); type-checked against
 *        CANN's registration headers by tools/cann_host_check.sh.
 *
 * The tiling adapter reads every list from the gert context (instance counts, per-instance dtype
 * and storage shape), the maps, step and the optional scalar tensors and the attributes, refuses
 * the call with the CPU aclnn layer's own validation (CheckApplyFusedEmaAdam8bitList, the same
 * messages) plus the NPU's condition that every list entry is 1-D (the device's list decoder reads
 * every shape of a list with its first tensor's rank; the torch op passes 1-D views), and tiles
 * with the same ComputeAdam8bitListTiling. The maps' values are not read here (device memory):
 * the torch op and the CPU aclnn layer check them.
 *
 * Dtype columns: one per row of the contract (APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS), opbase
 * selecting the binary by each DYNAMIC list's first tensor; an absent optional list reaches CANN as
 * zero-element placeholders of the dtype it would have (ss fp32, model_copies the parameters'),
 * so a row without copies keys model_copies by P. The outputs (kAdam8bitOutputOrder, which the
 * kernel entry follows) put varsRef first and a list that is never empty last: an EMPTY last
 * output list would leave its place holder unfilled (docs/ACLNN.md, "D1").
 */
#include <cstdint>
#include <exception>
#include <vector>

#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "cann_tiling_common.h"

// The registration's own helpers: nested, since only CANN's tiling library compiles them.
namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::registration {

// OpDef input order: the eight lists (kAdam8bitGrads ... kAdam8bitCopies), then these.
constexpr size_t INPUT_QMAP_M = kAdam8bitLists;
constexpr int kTensorInputs = 7;  // qmap_m, qmap_v, step, grad_scale, found_inf, lr, ema_decay
// Attributes after the EMA-Adam ones (cann_tiling_common.h).
constexpr size_t ATTR_MAXIMIZE = cann::EMA_ADAM_ATTR_COUNT;
constexpr const char* kInputNames[kAdam8bitLists] = {
    "grads", "vars", "ms", "vs", "m_absmaxes", "v_absmaxes", "ss", "model_copies"};

inline std::vector<int64_t> DimsOf(const gert::Shape& shape)
{
    std::vector<int64_t> dims(shape.GetDimNum());
    for (size_t d = 0; d < dims.size(); ++d) {
        dims[d] = shape.GetDim(d);
    }
    return dims;
}

/** The call as the shared validation sees it; the shapes are the tensors' storage shapes. */
struct Call {
    std::vector<std::vector<int64_t>> shapes[kAdam8bitLists];
    std::vector<Adam8bitEntryArg> entries[kAdam8bitLists];
    std::vector<int64_t> tensorShapes[kTensorInputs];
    std::vector<TensorArg> tensors;  // the single tensors given, in order
    Adam8bitListArgs args;
};

/** Every instance of dynamic input `list`; false (logged) if CANN gives one without its shape or
 *  description. */
bool ReadList(const gert::TilingContext* context, const char* node, int list, Call* call)
{
    const gert::ComputeNodeInfo* info = context->GetComputeNodeInfo();
    const gert::AnchorInstanceInfo* instances =
        info != nullptr ? info->GetInputInstanceInfo(list) : nullptr;
    if (instances == nullptr) {
        OP_LOGE(node, "input %s has no instance information", kAdam8bitListNames[list]);
        return false;
    }
    const size_t count = instances->GetInstanceNum();
    call->shapes[list].reserve(count);
    call->entries[list].reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const gert::CompileTimeTensorDesc* desc = context->GetDynamicInputDesc(list, i);
        const gert::StorageShape* shape = context->GetDynamicInputShape(list, i);
        if (desc == nullptr || shape == nullptr) {
            OP_LOGE(node, "%s has no %s", Adam8bitEntryName(list, i).c_str(),
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

/** The maps and step (required) and the optional scalar tensors (absent when CANN has no
 *  instance). */
bool ReadTensors(const gert::TilingContext* context, const char* node, Call* call)
{
    const struct {
        const char* name;
        bool required;
        const TensorArg** slot;
    } inputs[kTensorInputs] = {{"qmapM", true, &call->args.qmapM},
                               {"qmapV", true, &call->args.qmapV},
                               {"step", true, &call->args.step},
                               {"gradScaleOptional", false, &call->args.gradScale},
                               {"foundInfOptional", false, &call->args.foundInf},
                               {"lrTensorOptional", false, &call->args.lr},
                               {"emaDecayTensorOptional", false, &call->args.emaDecay}};
    call->tensors.reserve(kTensorInputs);  // stable addresses for args
    for (int t = 0; t < kTensorInputs; ++t) {
        const size_t index = INPUT_QMAP_M + static_cast<size_t>(t);
        const gert::CompileTimeTensorDesc* desc = context->GetOptionalInputDesc(index);
        const gert::StorageShape* shape = context->GetOptionalInputShape(index);
        if (desc == nullptr || shape == nullptr) {
            if (!inputs[t].required && context->GetOptionalInputTensor(index) == nullptr) {
                continue;  // not given
            }
            OP_LOGE(node, "input %s has no %s", inputs[t].name,
                    desc == nullptr ? "tensor description" : "shape");
            return false;
        }
        call->tensorShapes[t] = DimsOf(shape->GetStorageShape());
        call->tensors.push_back(
            {inputs[t].name, static_cast<int32_t>(desc->GetDataType()), call->tensorShapes[t]});
        *inputs[t].slot = &call->tensors.back();
    }
    return true;
}

/** The NPU's condition: every list entry is 1-D (what the device's list decoder can read). */
Refusal CheckFlat(const Call& call)
{
    for (int list = 0; list < kAdam8bitLists; ++list) {
        for (size_t i = 0; i < call.shapes[list].size(); ++i) {
            if (call.shapes[list][i].size() != 1) {
                return Adam8bitEntryName(list, i) + " has " +
                       std::to_string(call.shapes[list][i].size()) +
                       " dimensions: on the NPU every list entry is 1-D (pass flat views)";
            }
        }
    }
    return {};
}

ge::graphStatus Tiling(gert::TilingContext* context)
{
    const char* node = cann::NodeName(context, "ApplyFusedEmaAdam8bitList");
    Call call;
    for (int list = 0; list < kAdam8bitLists; ++list) {
        if (!ReadList(context, node, list, &call)) {
            return ge::GRAPH_FAILED;
        }
    }
    Adam8bitAttrs attrs;
    Platform platform;
    size_t systemWorkspace = 0;
    const gert::RuntimeAttrs* runtimeAttrs = cann::ReadAttrs(context, node);
    if (!ReadTensors(context, node, &call) || runtimeAttrs == nullptr ||
        !cann::ReadEmaAdamAttrs(node, runtimeAttrs, &attrs) ||
        !cann::ReadAttr(node, runtimeAttrs, ATTR_MAXIMIZE, "maximize", &attrs.maximize) ||
        !cann::ReadPlatform(context, node, &platform, &systemWorkspace)) {
        return ge::GRAPH_FAILED;
    }
    return cann::TileAndWrite<Adam8bitTilingResult>(
        context, node, systemWorkspace, [&](Adam8bitTilingResult* r) {
            Adam8bitDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
            Adam8bitOptions options;
            Refusal refusal = CheckApplyFusedEmaAdam8bitList(call.args, attrs, attrs.maximize,
                                                             &dtypes, &options);
            if (refusal.empty()) {
                refusal = CheckFlat(call);
            }
            if (!refusal.empty()) {
                return refusal;
            }
            std::vector<uint64_t> numels;
            numels.reserve(call.shapes[kAdam8bitGrads].size());
            for (const std::vector<int64_t>& shape : call.shapes[kAdam8bitGrads]) {
                numels.push_back(static_cast<uint64_t>(Numel(shape)));
            }
            *r = ComputeAdam8bitListTiling(numels, dtypes, attrs, options, platform);
            return Refusal();
        });
}

/** Calls copy(list, i, index) for instance i of every output (the in-place twin of input list
 *  kAdam8bitOutputOrder[o], output index `index`) until one returns false. */
template <class Context, class Copy>
bool ForEachOutputInstance(Context* context, Copy&& copy)
{
    for (size_t out = 0; out < static_cast<size_t>(kAdam8bitOutputs); ++out) {
        const gert::AnchorInstanceInfo* instances = context->GetIrOutputInstanceInfo(out);
        if (instances == nullptr) {
            return false;
        }
        for (size_t i = 0; i < instances->GetInstanceNum(); ++i) {
            if (!copy(kAdam8bitOutputOrder[out], i, instances->GetInstanceStart() + i)) {
                return false;
            }
        }
    }
    return true;
}

/** Every output instance has its input instance's shape ... */
ge::graphStatus InferShape(gert::InferShapeContext* context)
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
ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    const bool ok = ForEachOutputInstance(context, [context](int list, size_t i, size_t index) {
        return context->SetOutputDataType(index, context->GetDynamicInputDataType(list, i)) ==
               ge::GRAPH_SUCCESS;
    });
    return ok ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;
}

/** The dtype of each list in one column of the OpDef: a row of the contract, model_copies keyed
 *  by P where the row has none (its placeholders). */
struct Column {
    DataType lists[kAdam8bitLists];
};

std::vector<Column> Columns()
{
    std::vector<Column> out;
#define AEA_ADAM8BIT_COLUMN(key, P, G, C)                                                    \
    out.push_back({{kAdam8bitDtype_##G, kAdam8bitDtype_##P, DataType::kUInt8, DataType::kUInt8, \
                    DataType::kFloat32, DataType::kFloat32, DataType::kFloat32,                 \
                    kAdam8bitHasCopy_##C ? kAdam8bitDtype_##C : kAdam8bitDtype_##P}});
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_COLUMN)
#undef AEA_ADAM8BIT_COLUMN
    return out;
}

/**
 * The OpDef: its dtype columns are Columns(), one per row of the contract. Every input is
 * AutoContiguous (the torch op passes contiguous 1-D views; other callers' strided views are
 * copied to contiguous ones and back by the generated layer).
 */
void Define(ops::OpDef& def, gert::OpImplRegisterV2::TilingKernelFunc tiling)
{
    std::vector<ge::DataType> lists[kAdam8bitLists];
    for (const Column& c : Columns()) {
        for (int list = 0; list < kAdam8bitLists; ++list) {
            lists[list].push_back(cann::GeDataType(c.lists[list]));
        }
    }
    const size_t n = lists[0].size();
    const std::vector<ge::Format> nd(n, ge::FORMAT_ND);
    const std::vector<ge::DataType> fp32(n, ge::DT_FLOAT);
    for (int list = 0; list < kAdam8bitLists; ++list) {
        def.Input(kInputNames[list]).ParamType(ops::DYNAMIC).DataType(lists[list]).Format(nd)
            .UnknownShapeFormat(nd).AutoContiguous();
    }
    for (const char* map : {"qmap_m", "qmap_v"}) {
        def.Input(map).ParamType(ops::REQUIRED).DataType(fp32).Format(nd).UnknownShapeFormat(nd)
            .AutoContiguous();
    }
    def.Input("step").ParamType(ops::REQUIRED)
        .DataType(std::vector<ge::DataType>(n, ge::DT_INT64)).Format(nd).UnknownShapeFormat(nd)
        .AutoContiguous();
    // not "lr"/"ema_decay": the attributes have those names
    for (const char* scalar : {"grad_scale", "found_inf", "lr_tensor", "ema_decay_tensor"}) {
        def.Input(scalar).ParamType(ops::OPTIONAL).DataType(fp32).Format(nd)
            .UnknownShapeFormat(nd).AutoContiguous();
    }
    for (const int list : kAdam8bitOutputOrder) {
        def.Output(kInputNames[list]).ParamType(ops::DYNAMIC).DataType(lists[list]).Format(nd)
            .UnknownShapeFormat(nd);
    }
    cann::AddEmaAdamAttrs(def);
    def.Attr("maximize").AttrType(ops::OPTIONAL).Bool(false);

    def.SetInferShape(InferShape).SetInferDataType(InferDataType);
    def.AICore().SetTiling(tiling);
    def.AICore().AddConfig("ascend910b");
    def.AICore().AddConfig("ascend910_93");
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::registration

namespace optiling {

static ge::graphStatus TilingApplyFusedEmaAdam8bitList(gert::TilingContext* context)
{
    return ascend_ema_adam::apply_fused_ema_adam8bit_list::registration::Tiling(context);
}

}  // namespace optiling

namespace ops {

class ApplyFusedEmaAdam8bitList : public OpDef {
public:
    explicit ApplyFusedEmaAdam8bitList(const char* name) : OpDef(name)
    {
        ascend_ema_adam::apply_fused_ema_adam8bit_list::registration::Define(
            *this, optiling::TilingApplyFusedEmaAdam8bitList);
    }
};

OP_ADD(ApplyFusedEmaAdam8bitList);

}  // namespace ops
