/**
 * @file apply_fused_ema_adam_list_def.cpp
 * @brief CANN registration of ApplyFusedEmaAdamList: OpDef (DYNAMIC lists), tiling adapter,
 *        infershape. Built only inside a CANN custom-op project (see build.sh); type-checked
 *        against CANN's registration headers by tools/cann_host_check.sh.
 *
 * The tiling adapter reads every list from the gert context (instance counts, per-instance dtype
 * and storage shape), the optional grad_scale/found_inf and the attributes, refuses the call with
 * the CPU aclnn layer's own validation (CheckApplyFusedEmaAdamList, the same messages) plus the
 * NPU's condition that every list is 1-D (CheckApplyFusedEmaAdamListFlat: the device's list
 * decoder reads every shape of a list with its first tensor's rank), and tiles with the same
 * ComputeListTiling. The per-core start table keeps the tiling data small for any number of
 * tensors; its size is checked against CANN's capacity before it is written.
 */
#include <cstdint>
#include <exception>
#include <vector>

#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "cann_tiling_common.h"

namespace {

namespace aea = ascend_ema_adam;
namespace cann = ascend_ema_adam::cann;

constexpr const char* kOpType = "ApplyFusedEmaAdamList";

// OpDef input order: the seven lists (aea::kListGrads ... kListCopies), then these.
constexpr size_t INPUT_STEP = aea::kApplyFusedEmaAdamLists;
constexpr size_t INPUT_GRAD_SCALE = INPUT_STEP + 1;
constexpr size_t INPUT_FOUND_INF = INPUT_STEP + 2;
// Outputs: the six updated lists, the refs of inputs 1..6 (vars ... model_copies).
constexpr size_t kOutputLists = aea::kApplyFusedEmaAdamLists - 1;
// Attributes after the EMA-Adam ones (cann_tiling_common.h).
constexpr size_t ATTR_MAXIMIZE = cann::EMA_ADAM_ATTR_COUNT;

/** dims of a gert shape. */
std::vector<int64_t> DimsOf(const gert::Shape& shape)
{
    std::vector<int64_t> dims(shape.GetDimNum());
    for (size_t d = 0; d < dims.size(); ++d) {
        dims[d] = shape.GetDim(d);
    }
    return dims;
}

/** The call as the shared validation sees it; the shapes are the tensors' storage shapes. */
struct ListCall {
    std::vector<std::vector<int64_t>> shapes[aea::kApplyFusedEmaAdamLists];
    std::vector<aea::ListEntryArg> entries[aea::kApplyFusedEmaAdamLists];
    std::vector<int64_t> scalarShapes[3];
    std::vector<aea::TensorArg> scalars;  // step, then the optional ones that are given
    aea::ApplyFusedEmaAdamListArgs args;
};

/** Every instance of dynamic input `list`; false (logged) if CANN gives one without its shape or
 *  description. */
bool ReadList(const gert::TilingContext* context, const char* node, int list, ListCall* call)
{
    const gert::ComputeNodeInfo* info = context->GetComputeNodeInfo();
    const gert::AnchorInstanceInfo* instances =
        info != nullptr ? info->GetInputInstanceInfo(list) : nullptr;
    if (instances == nullptr) {
        OP_LOGE(node, "input %s has no instance information", aea::kApplyFusedEmaAdamListNames[list]);
        return false;
    }
    const size_t count = instances->GetInstanceNum();
    call->shapes[list].reserve(count);
    call->entries[list].reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const gert::CompileTimeTensorDesc* desc = context->GetDynamicInputDesc(list, i);
        const gert::StorageShape* shape = context->GetDynamicInputShape(list, i);
        if (desc == nullptr || shape == nullptr) {
            OP_LOGE(node, "%s has no %s", aea::ListEntryName(list, i).c_str(),
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

/** step (required) and grad_scale / found_inf (optional: absent when CANN has no instance). */
bool ReadScalars(const gert::TilingContext* context, const char* node, ListCall* call)
{
    const struct {
        size_t index;
        const char* name;
        bool required;
    } inputs[3] = {{INPUT_STEP, aea::kListStepName, true},
                   {INPUT_GRAD_SCALE, aea::kListGradScaleName, false},
                   {INPUT_FOUND_INF, aea::kListFoundInfName, false}};
    call->scalars.reserve(3);  // stable addresses for args
    const aea::TensorArg** slots[3] = {&call->args.step, &call->args.gradScale,
                                       &call->args.foundInf};
    for (int s = 0; s < 3; ++s) {
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

}  // namespace

namespace optiling {

static ge::graphStatus TilingApplyFusedEmaAdamList(gert::TilingContext* context)
{
    const char* node = cann::NodeName(context, kOpType);
    ListCall call;
    for (int list = 0; list < aea::kApplyFusedEmaAdamLists; ++list) {
        if (!ReadList(context, node, list, &call)) {
            return ge::GRAPH_FAILED;
        }
    }
    aea::Attrs attrs;
    bool maximize = false;
    aea::Platform platform;
    size_t systemWorkspace = 0;
    const gert::RuntimeAttrs* runtimeAttrs = cann::ReadAttrs(context, node);
    if (!ReadScalars(context, node, &call) || runtimeAttrs == nullptr ||
        !cann::ReadEmaAdamAttrs(node, runtimeAttrs, &attrs) ||
        !cann::ReadAttr(node, runtimeAttrs, ATTR_MAXIMIZE, "maximize", &maximize) ||
        !cann::ReadPlatform(context, node, &platform, &systemWorkspace)) {
        return ge::GRAPH_FAILED;
    }
    aea::ListTilingResult r;
    try {
        aea::ListDtypes dtypes;
        aea::ListOptions options;
        aea::Refusal refusal =
            aea::CheckApplyFusedEmaAdamList(call.args, attrs, maximize, &dtypes, &options);
        if (refusal.empty()) {
            refusal = aea::CheckApplyFusedEmaAdamListFlat(call.args);
        }
        if (!refusal.empty()) {
            OP_LOGE(node, "%s", refusal.c_str());
            return ge::GRAPH_FAILED;
        }
        std::vector<uint64_t> numels;
        numels.reserve(call.shapes[aea::kListGrads].size());
        for (const std::vector<int64_t>& shape : call.shapes[aea::kListGrads]) {
            numels.push_back(static_cast<uint64_t>(aea::Numel(shape)));
        }
        r = aea::ComputeListTiling(numels, dtypes, attrs, options, platform);
    } catch (const std::exception& e) {  // no exception crosses into CANN
        OP_LOGE(node, "tiling failed: %s", e.what());
        return ge::GRAPH_FAILED;
    }
    if (r.blockDim == 0) {
        OP_LOGE(node, "the lists hold no element: there is nothing to launch");
        return ge::GRAPH_FAILED;
    }
    return cann::WriteTiling(context, node, r.data, r.tilingKey, r.blockDim,
                             systemWorkspace + r.workspaceSize)
               ? ge::GRAPH_SUCCESS
               : ge::GRAPH_FAILED;
}

}  // namespace optiling

namespace ge {

/** Output list o (vars ... model_copies) is input list o + 1, instance by instance. */
static graphStatus InferShapeApplyFusedEmaAdamList(gert::InferShapeContext* context)
{
    for (size_t out = 0; out < kOutputLists; ++out) {
        const gert::AnchorInstanceInfo* instances = context->GetIrOutputInstanceInfo(out);
        if (instances == nullptr) {
            return GRAPH_FAILED;
        }
        for (size_t i = 0; i < instances->GetInstanceNum(); ++i) {
            const gert::Shape* in = context->GetDynamicInputShape(out + 1, i);
            gert::Shape* shape = context->GetOutputShape(instances->GetInstanceStart() + i);
            if (in == nullptr || shape == nullptr) {
                return GRAPH_FAILED;
            }
            *shape = *in;
        }
    }
    return GRAPH_SUCCESS;
}

static graphStatus InferDataTypeApplyFusedEmaAdamList(gert::InferDataTypeContext* context)
{
    for (size_t out = 0; out < kOutputLists; ++out) {
        const gert::AnchorInstanceInfo* instances = context->GetIrOutputInstanceInfo(out);
        if (instances == nullptr) {
            return GRAPH_FAILED;
        }
        for (size_t i = 0; i < instances->GetInstanceNum(); ++i) {
            if (context->SetOutputDataType(instances->GetInstanceStart() + i,
                                           context->GetDynamicInputDataType(out + 1, i)) !=
                GRAPH_SUCCESS) {
                return GRAPH_FAILED;
            }
        }
    }
    return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

/**
 * One dtype column per kernel instantiation (ListDtypeCombinations, the tiling keys): grads G,
 * vars P, ms/vs/ss/max_vs S, model_copies C. A launch without model copies has no model_copies
 * instance; its columns name fp32 there, a dtype no copy has, so that every column is distinct.
 * Every input is AutoContiguous, as in the single op (the torch op passes contiguous 1-D views;
 * other callers' strided views are copied to contiguous ones and back by the generated layer).
 */
class ApplyFusedEmaAdamList : public OpDef {
public:
    explicit ApplyFusedEmaAdamList(const char* name) : OpDef(name)
    {
        std::vector<ge::DataType> columns[aea::kApplyFusedEmaAdamLists];
        for (const aea::ListDtypes& d : aea::ListDtypeCombinations()) {
            const aea::DataType perList[aea::kApplyFusedEmaAdamLists] = {
                d.grad, d.param, d.state, d.state, d.state, d.state,
                d.hasCopy ? d.copy : aea::DataType::kFloat32};
            for (int list = 0; list < aea::kApplyFusedEmaAdamLists; ++list) {
                columns[list].push_back(cann::GeDataType(perList[list]));
            }
        }
        const size_t n = columns[0].size();
        const std::vector<ge::Format> nd(n, ge::FORMAT_ND);
        const char* names[aea::kApplyFusedEmaAdamLists] = {
            "grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"};
        for (int list = 0; list < aea::kApplyFusedEmaAdamLists; ++list) {
            this->Input(names[list]).ParamType(DYNAMIC).DataType(columns[list]).Format(nd)
                .UnknownShapeFormat(nd).AutoContiguous();
        }
        this->Input("step").ParamType(REQUIRED)
            .DataType(std::vector<ge::DataType>(n, ge::DT_INT64)).Format(nd).UnknownShapeFormat(nd)
            .AutoContiguous();
        for (const char* scalar : {"grad_scale", "found_inf"}) {
            this->Input(scalar).ParamType(OPTIONAL)
                .DataType(std::vector<ge::DataType>(n, ge::DT_FLOAT)).Format(nd)
                .UnknownShapeFormat(nd).AutoContiguous();
        }
        for (int list = aea::kListVars; list < aea::kApplyFusedEmaAdamLists; ++list) {
            this->Output(names[list]).ParamType(DYNAMIC).DataType(columns[list]).Format(nd)
                .UnknownShapeFormat(nd);
        }
        cann::AddEmaAdamAttrs(*this);
        this->Attr("maximize").AttrType(OPTIONAL).Bool(false);

        this->SetInferShape(ge::InferShapeApplyFusedEmaAdamList)
            .SetInferDataType(ge::InferDataTypeApplyFusedEmaAdamList);
        this->AICore().SetTiling(optiling::TilingApplyFusedEmaAdamList);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(ApplyFusedEmaAdamList);

}  // namespace ops
