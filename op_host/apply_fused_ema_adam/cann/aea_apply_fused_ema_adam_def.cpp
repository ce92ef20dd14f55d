/**
 * @file aea_apply_fused_ema_adam_def.cpp
 * @brief CANN registration of FusedEmaAdam as AeaApplyFusedEmaAdam: OpDef, tiling adapter,
 *        infershape. Built only inside a CANN custom-op project (see build.sh); type-checked
 *        against CANN's registration headers by tools/cann_registration_check/run.sh.
 *
 * The op type is this package's own, not CANN's ApplyFusedEmaAdam: a custom package's op wins
 * over CANN's built-in one of the same type, in op-plugin and in opbase, for every program in the
 * environment, and this operator differs from CANN's on purpose (its bias correction, and the
 * inputs it refuses: docs/ACLNN.md, "Differences from CANN's ApplyFusedEmaAdam" and "The op
 * type"). So installing the package leaves CANN's ApplyFusedEmaAdam (MindSpeed's
 * npu_apply_fused_ema_adamw) as it is, and the aclnn functions op_build generates from this OpDef
 * are aclnnAeaApplyFusedEmaAdam*.
 *
 * The tiling adapter reads the call from the gert context, refuses it with the CPU aclnn layer's
 * own validation (CheckApplyFusedEmaAdam: dtypes, shapes, step, attributes, with the same
 * messages) and tiles with the same ComputeApplyFusedEmaAdamTiling, so the NPU and the CPU twin run identical
 * tilings. What it cannot check, the NPU path does not: memory overlap and null data addresses
 * need the tensors (CANN's generated aclnn layer checks nulls and formats), and step's value is
 * device memory this function cannot read (docs/ACLNN.md, "The NPU path").
 */
#include <cstdint>
#include <exception>
#include <vector>

#include "apply_fused_ema_adam_check.h"
#include "apply_fused_ema_adam_tiling.h"
#include "cann_tiling_common.h"

namespace {

namespace aea = ascend_ema_adam;
namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;  // this operator's names
namespace cann = ascend_ema_adam::cann;

constexpr const char* kOpType = "AeaApplyFusedEmaAdam";
// Inputs in OpDef order are the aclnn tensors in signature order (kGrad ... kStep).
constexpr size_t kOutputNum = 4;  // var, m, v, s: the refs of inputs INPUT 1..4

/** The storage shape of input `index` (what the kernel walks), or false if CANN gave none. */
bool ReadInput(const gert::TilingContext* context, const char* node, size_t index, int32_t* dtype,
               std::vector<int64_t>* dims)
{
    const gert::CompileTimeTensorDesc* desc = context->GetInputDesc(index);
    const gert::StorageShape* shape = context->GetInputShape(index);
    if (desc == nullptr || shape == nullptr) {
        OP_LOGE(node, "input %s has no %s", fused_op::kApplyFusedEmaAdamTensorNames[index],
                desc == nullptr ? "tensor description" : "shape");
        return false;
    }
    *dtype = static_cast<int32_t>(desc->GetDataType());
    const gert::Shape& storage = shape->GetStorageShape();
    dims->clear();
    for (size_t d = 0; d < storage.GetDimNum(); ++d) {
        dims->push_back(storage.GetDim(d));
    }
    return true;
}

}  // namespace

namespace optiling {

static ge::graphStatus TilingApplyFusedEmaAdam(gert::TilingContext* context)
{
    const char* node = cann::NodeName(context, kOpType);
    int32_t dtypes[fused_op::kApplyFusedEmaAdamTensors] = {};
    std::vector<int64_t> shapes[fused_op::kApplyFusedEmaAdamTensors];
    for (size_t i = 0; i < fused_op::kApplyFusedEmaAdamTensors; ++i) {
        if (!ReadInput(context, node, i, &dtypes[i], &shapes[i])) {
            return ge::GRAPH_FAILED;
        }
    }
    aea::Attrs attrs;
    aea::Platform platform;
    size_t systemWorkspace = 0;
    const gert::RuntimeAttrs* runtimeAttrs = cann::ReadAttrs(context, node);
    if (runtimeAttrs == nullptr || !cann::ReadEmaAdamAttrs(node, runtimeAttrs, &attrs) ||
        !cann::ReadPlatform(context, node, &platform, &systemWorkspace)) {
        return ge::GRAPH_FAILED;
    }
    return cann::TileAndWrite<fused_op::ApplyFusedEmaAdamTilingResult>(
        context, node, systemWorkspace, [&](fused_op::ApplyFusedEmaAdamTilingResult* r) {
            const char* const* names = fused_op::kApplyFusedEmaAdamTensorNames;
            const fused_op::ApplyFusedEmaAdamTensorArgs args = {
                {names[fused_op::kGrad], dtypes[fused_op::kGrad], shapes[fused_op::kGrad]},
                {names[fused_op::kVar], dtypes[fused_op::kVar], shapes[fused_op::kVar]},
                {names[fused_op::kM], dtypes[fused_op::kM], shapes[fused_op::kM]},
                {names[fused_op::kV], dtypes[fused_op::kV], shapes[fused_op::kV]},
                {names[fused_op::kS], dtypes[fused_op::kS], shapes[fused_op::kS]},
                {names[fused_op::kStep], dtypes[fused_op::kStep], shapes[fused_op::kStep]}};
            const aea::Refusal refusal = fused_op::CheckApplyFusedEmaAdam(args, attrs);
            if (!refusal.empty()) {
                return refusal;
            }
            // the check accepted the dtype
            const aea::DataType dtype = aea::FindDataTypeByCode(dtypes[fused_op::kGrad])->type;
            const uint64_t numel = static_cast<uint64_t>(aea::Numel(shapes[fused_op::kGrad]));
            *r = fused_op::ComputeApplyFusedEmaAdamTiling(numel, dtype, attrs, platform);
            return aea::Refusal();
        });
}

}  // namespace optiling

namespace ge {

static graphStatus InferShapeApplyFusedEmaAdam(gert::InferShapeContext* context)
{
    for (size_t out = 0; out < kOutputNum; ++out) {  // var, m, v, s keep their input shapes
        const gert::Shape* in = context->GetInputShape(fused_op::kVar + out);
        gert::Shape* shape = context->GetOutputShape(out);
        if (in == nullptr || shape == nullptr) {
            return GRAPH_FAILED;
        }
        *shape = *in;
    }
    return GRAPH_SUCCESS;
}

static graphStatus InferDataTypeApplyFusedEmaAdam(gert::InferDataTypeContext* context)
{
    for (size_t out = 0; out < kOutputNum; ++out) {
        if (context->SetOutputDataType(out, context->GetInputDataType(fused_op::kVar + out)) !=
            GRAPH_SUCCESS) {
            return GRAPH_FAILED;
        }
    }
    return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

/**
 * Every input is AutoContiguous, as in CANN's own ApplyFusedEmaAdam: the torch op's NPU kernel
 * (csrc/ops/apply_fused_ema_adam/apply_fused_ema_adam_npu.cpp) passes each tensor as its view
 * (sizes, strides, storage offset), and with AutoContiguous the generated aclnn layer copies strided inputs to contiguous ones (aclnnContiguous) and the updated
 * var/m/v/s back into their views (aclnnViewCopy), so strided views are updated in place, as on
 * the CPU device. Without it, the generated layer's contiguity check refuses them (the
 * IgnoreContiguous documentation: "the framework ignores the non-contiguous check").
 * step is not ValueDepend: that would make the generated aclnn API take step as a host
 * aclIntArray instead of CANN's aclTensor, and reading a device step at tiling time needs a
 * device-to-host copy per call.
 */
class AeaApplyFusedEmaAdam : public OpDef {
public:
    explicit AeaApplyFusedEmaAdam(const char* name) : OpDef(name)
    {
        const std::vector<ge::DataType> floats = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16};
        const std::vector<ge::Format> nd = {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND};
        for (const char* in : {"grad", "var", "m", "v", "s"}) {
            this->Input(in).ParamType(REQUIRED).DataType(floats).Format(nd).UnknownShapeFormat(nd)
                .AutoContiguous();
        }
        this->Input("step").ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64}).Format(nd).UnknownShapeFormat(nd)
            .AutoContiguous();
        for (const char* out : {"var", "m", "v", "s"}) {
            this->Output(out).ParamType(REQUIRED).DataType(floats).Format(nd)
                .UnknownShapeFormat(nd);
        }
        cann::AddEmaAdamAttrs(*this);

        this->SetInferShape(ge::InferShapeApplyFusedEmaAdam)
            .SetInferDataType(ge::InferDataTypeApplyFusedEmaAdam);
        this->AICore().SetTiling(optiling::TilingApplyFusedEmaAdam);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(AeaApplyFusedEmaAdam);

}  // namespace ops
