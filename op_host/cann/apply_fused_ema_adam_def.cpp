/**
 * @file apply_fused_ema_adam_def.cpp
 * @brief CANN registration of ApplyFusedEmaAdam: OpDef, tiling adapter, infershape.
 *        Built only inside a CANN custom-op project (see build.sh); the tiling itself is the
 *        project's pure ComputeTiling, so the NPU and the CPU twin run identical tilings.
 */
#include <cstring>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

#include "apply_fused_ema_adam_tiling.h"

namespace {

enum InputIndex : size_t { INPUT_GRAD = 0, INPUT_VAR, INPUT_M, INPUT_V, INPUT_S, INPUT_STEP };
enum AttrIndex : size_t {
    ATTR_LR = 0, ATTR_EMA_DECAY, ATTR_BETA1, ATTR_BETA2, ATTR_EPS, ATTR_MODE,
    ATTR_BIAS_CORRECTION, ATTR_WEIGHT_DECAY
};
constexpr size_t kFloatTensorNum = 5;

bool ToDataType(ge::DataType dt, ascend_ema_adam::DataType* out)
{
    switch (dt) {
        case ge::DT_FLOAT: *out = ascend_ema_adam::DataType::kFloat32; return true;
        case ge::DT_FLOAT16: *out = ascend_ema_adam::DataType::kFloat16; return true;
        case ge::DT_BF16: *out = ascend_ema_adam::DataType::kBFloat16; return true;
        default: return false;
    }
}

}  // namespace

namespace optiling {

static ge::graphStatus TilingApplyFusedEmaAdam(gert::TilingContext* context)
{
    // Same checks as the aclnn layer: one float dtype, one shape, mode 0/1.
    ascend_ema_adam::DataType dtype;
    if (!ToDataType(context->GetInputDesc(INPUT_GRAD)->GetDataType(), &dtype)) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = context->GetInputShape(INPUT_GRAD)->GetStorageShape();
    for (size_t i = 1; i < kFloatTensorNum; ++i) {
        if (context->GetInputDesc(i)->GetDataType() != context->GetInputDesc(INPUT_GRAD)->GetDataType() ||
            !(context->GetInputShape(i)->GetStorageShape() == shape)) {
            return ge::GRAPH_FAILED;
        }
    }
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    ascend_ema_adam::Attrs a;
    a.lr = *attrs->GetAttrPointer<float>(ATTR_LR);
    a.emaDecay = *attrs->GetAttrPointer<float>(ATTR_EMA_DECAY);
    a.beta1 = *attrs->GetAttrPointer<float>(ATTR_BETA1);
    a.beta2 = *attrs->GetAttrPointer<float>(ATTR_BETA2);
    a.eps = *attrs->GetAttrPointer<float>(ATTR_EPS);
    a.mode = *attrs->GetAttrPointer<int64_t>(ATTR_MODE);
    a.biasCorrection = *attrs->GetAttrPointer<bool>(ATTR_BIAS_CORRECTION);
    a.weightDecay = *attrs->GetAttrPointer<float>(ATTR_WEIGHT_DECAY);
    if (a.mode != 0 && a.mode != 1) {
        return ge::GRAPH_FAILED;
    }

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const ascend_ema_adam::Platform target{"npu", platform.GetCoreNumAiv(),
                                                static_cast<uint32_t>(ubSize), 0.0};
    const ascend_ema_adam::TilingResult r =
        ascend_ema_adam::ComputeTiling(static_cast<uint64_t>(shape.GetShapeSize()), dtype, a,
                                            target);
    if (r.blockDim == 0) {
        return ge::GRAPH_FAILED;  // empty tensors are handled before launch by the caller
    }
    ApplyFusedEmaAdamTilingData* tiling = context->GetTilingData<ApplyFusedEmaAdamTilingData>();
    std::memcpy(tiling, &r.data, sizeof(r.data));
    context->SetBlockDim(r.blockDim);
    context->SetTilingKey(r.tilingKey);
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = platform.GetLibApiWorkSpaceSize() + r.workspaceSize;
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling

namespace ge {

static graphStatus InferShapeApplyFusedEmaAdam(gert::InferShapeContext* context)
{
    for (size_t out = 0; out < 4; ++out) {  // var, m, v, s keep their input shapes
        *context->GetOutputShape(out) = *context->GetInputShape(INPUT_VAR + out);
    }
    return GRAPH_SUCCESS;
}

static graphStatus InferDataTypeApplyFusedEmaAdam(gert::InferDataTypeContext* context)
{
    for (size_t out = 0; out < 4; ++out) {
        context->SetOutputDataType(out, context->GetInputDataType(INPUT_VAR + out));
    }
    return GRAPH_SUCCESS;
}

}  // namespace ge

namespace ops {

class ApplyFusedEmaAdam : public OpDef {
public:
    explicit ApplyFusedEmaAdam(const char* name) : OpDef(name)
    {
        const std::vector<ge::DataType> floats = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16};
        const std::vector<ge::Format> nd = {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND};
        for (const char* in : {"grad", "var", "m", "v", "s"}) {
            this->Input(in).ParamType(REQUIRED).DataType(floats).Format(nd).UnknownShapeFormat(nd);
        }
        this->Input("step").ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64}).Format(nd).UnknownShapeFormat(nd);
        for (const char* out : {"var", "m", "v", "s"}) {
            this->Output(out).ParamType(REQUIRED).DataType(floats).Format(nd).UnknownShapeFormat(nd);
        }
        this->Attr("lr").AttrType(OPTIONAL).Float(1e-3f);
        this->Attr("ema_decay").AttrType(OPTIONAL).Float(0.9999f);
        this->Attr("beta1").AttrType(OPTIONAL).Float(0.9f);
        this->Attr("beta2").AttrType(OPTIONAL).Float(0.999f);
        this->Attr("eps").AttrType(OPTIONAL).Float(1e-8f);
        this->Attr("mode").AttrType(OPTIONAL).Int(1);
        this->Attr("bias_correction").AttrType(OPTIONAL).Bool(true);
        this->Attr("weight_decay").AttrType(OPTIONAL).Float(0.0f);

        this->SetInferShape(ge::InferShapeApplyFusedEmaAdam)
            .SetInferDataType(ge::InferDataTypeApplyFusedEmaAdam);
        this->AICore().SetTiling(optiling::TilingApplyFusedEmaAdam);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(ApplyFusedEmaAdam);

}  // namespace ops
