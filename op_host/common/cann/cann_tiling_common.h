/**
 * @file cann_tiling_common.h
 * @brief What every EMA-Adam operator's CANN tiling adapter reads from the gert context the same
 *        way: its node name for the log, the EMA-Adam attributes (indexes 0-7 of every operator's
 *        OpDef, in CANN's order; AddEmaAdamAttrs declares them), the platform (vector cores, UB, AscendC's system workspace),
 *        and the tiling data, written only after checking its capacity. Header-only: build.sh
 *        copies it beside each operator's registration; tools/cann_registration_check/run.sh type-checks it.
 */
#ifndef ASCEND_EMA_ADAM_CANN_TILING_COMMON_H
#define ASCEND_EMA_ADAM_CANN_TILING_COMMON_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

#include "ema_adam_attrs.h"
#include "platform.h"
#include "validation.h"

// CANN's OP_LOGE (ops-nn's log/log.h, over the toolkit's closed dlog library) is not among the
// public headers a custom-op project builds against; CANN's own custom-op samples define a local
// macro the same way. This one writes "[ERROR] OP(<node>): <reason>" to stderr.
#ifndef OP_LOGE
#define OP_LOGE(nodeName, fmt, ...) \
    std::fprintf(stderr, "[ERROR] OP(%s): " fmt "\n", (nodeName), ##__VA_ARGS__)
#endif

namespace ascend_ema_adam::cann {

// Our dtype codes are aclDataType's; ge::DataType uses the same values for every dtype we accept.
constexpr bool SameCode(ge::DataType ge, DataType ours)
{
    return static_cast<int32_t>(ge) == CannCodeOf(ours);
}
static_assert(SameCode(ge::DT_FLOAT, DataType::kFloat32) &&
                  SameCode(ge::DT_FLOAT16, DataType::kFloat16) &&
                  SameCode(ge::DT_BF16, DataType::kBFloat16) &&
                  SameCode(ge::DT_INT64, DataType::kInt64) &&
                  SameCode(ge::DT_UINT8, DataType::kUInt8),
              "ge::DataType and aclDataType disagree on a dtype the operators accept");

/** ge::DataType of one of our dtypes. */
constexpr ge::DataType GeDataType(DataType ours)
{
    return static_cast<ge::DataType>(CannCodeOf(ours));
}

/** The EMA-Adam attributes, indexes 0-7 of every operator's OpDef (its own follow). */
enum EmaAdamAttrIndex : size_t {
    ATTR_LR = 0, ATTR_EMA_DECAY, ATTR_BETA1, ATTR_BETA2, ATTR_EPS, ATTR_MODE,
    ATTR_BIAS_CORRECTION, ATTR_WEIGHT_DECAY, EMA_ADAM_ATTR_COUNT
};
constexpr const char* kEmaAdamAttrNames[EMA_ADAM_ATTR_COUNT] = {
    "lr", "ema_decay", "beta1", "beta2", "eps", "mode", "bias_correction", "weight_decay"};

/** The node's name for the log, or `fallback` (the op type) if CANN gives none. */
inline const char* NodeName(const gert::TilingContext* context, const char* fallback)
{
    const char* name = context->GetNodeName();
    return name != nullptr ? name : fallback;
}

/** Attribute `index` of type T, or false (logged with `name`) if CANN gives none. */
template <class T>
bool ReadAttr(const char* node, const gert::RuntimeAttrs* attrs, size_t index, const char* name,
              T* value)
{
    const T* pointer = attrs->GetAttrPointer<T>(index);
    if (pointer == nullptr) {
        OP_LOGE(node, "attribute %s is missing", name);
        return false;
    }
    *value = *pointer;
    return true;
}

/** The runtime attributes, or null (logged). */
inline const gert::RuntimeAttrs* ReadAttrs(const gert::TilingContext* context, const char* node)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        OP_LOGE(node, "the attributes are missing");
    }
    return attrs;
}

/** The EMA-Adam attributes (fp32 in the OpDef, widened for the shared checks). */
inline bool ReadEmaAdamAttrs(const char* node, const gert::RuntimeAttrs* attrs, Attrs* out)
{
    float lr = 0.0F, emaDecay = 0.0F, beta1 = 0.0F, beta2 = 0.0F, eps = 0.0F, weightDecay = 0.0F;
    int64_t mode = 0;
    bool biasCorrection = false;
    const char* const* names = kEmaAdamAttrNames;
    if (!ReadAttr(node, attrs, ATTR_LR, names[ATTR_LR], &lr) ||
        !ReadAttr(node, attrs, ATTR_EMA_DECAY, names[ATTR_EMA_DECAY], &emaDecay) ||
        !ReadAttr(node, attrs, ATTR_BETA1, names[ATTR_BETA1], &beta1) ||
        !ReadAttr(node, attrs, ATTR_BETA2, names[ATTR_BETA2], &beta2) ||
        !ReadAttr(node, attrs, ATTR_EPS, names[ATTR_EPS], &eps) ||
        !ReadAttr(node, attrs, ATTR_MODE, names[ATTR_MODE], &mode) ||
        !ReadAttr(node, attrs, ATTR_BIAS_CORRECTION, names[ATTR_BIAS_CORRECTION], &biasCorrection) ||
        !ReadAttr(node, attrs, ATTR_WEIGHT_DECAY, names[ATTR_WEIGHT_DECAY], &weightDecay)) {
        return false;
    }
    *out = AttrsInCannOrder(lr, emaDecay, beta1, beta2, eps, mode, biasCorrection, weightDecay);
    return true;
}

/** The EMA-Adam attributes of an OpDef, in kEmaAdamAttrNames' order, with CANN's defaults. */
inline void AddEmaAdamAttrs(ops::OpDef& def)
{
    def.Attr("lr").AttrType(ops::OPTIONAL).Float(1e-3f);
    def.Attr("ema_decay").AttrType(ops::OPTIONAL).Float(0.9999f);
    def.Attr("beta1").AttrType(ops::OPTIONAL).Float(0.9f);
    def.Attr("beta2").AttrType(ops::OPTIONAL).Float(0.999f);
    def.Attr("eps").AttrType(ops::OPTIONAL).Float(1e-8f);
    def.Attr("mode").AttrType(ops::OPTIONAL).Int(1);
    def.Attr("bias_correction").AttrType(ops::OPTIONAL).Bool(true);
    def.Attr("weight_decay").AttrType(ops::OPTIONAL).Float(0.0f);
}

/** The vector cores and UB of the SoC the op is compiled for, and AscendC's system workspace. */
inline bool ReadPlatform(gert::TilingContext* context, const char* node, Platform* out,
                         size_t* systemWorkspace)
{
    fe::PlatFormInfos* info = context->GetPlatformInfo();
    if (info == nullptr) {
        OP_LOGE(node, "the platform information is missing");
        return false;
    }
    const platform_ascendc::PlatformAscendC platform(info);
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t cores = platform.GetCoreNumAiv();
    if (cores == 0 || ubSize == 0 || ubSize > UINT32_MAX) {
        OP_LOGE(node, "the platform reports %u vector cores and %llu UB bytes per core", cores,
                static_cast<unsigned long long>(ubSize));
        return false;
    }
    *out = Platform{"npu", cores, static_cast<uint32_t>(ubSize), 0.0};
    *systemWorkspace = platform.GetLibApiWorkSpaceSize();
    return true;
}

/**
 * Writes the tiling data (after checking the context's capacity: CANN's default is 16 KiB), the
 * workspace size, the block dim and the tiling key; false (logged) if CANN refuses any.
 */
template <class TilingData>
bool WriteTiling(gert::TilingContext* context, const char* node, const TilingData& data,
                 uint64_t tilingKey, uint32_t blockDim, size_t workspaceSize)
{
    gert::TilingData* raw = context->GetRawTilingData();
    if (raw == nullptr || raw->GetCapacity() < sizeof(TilingData)) {
        OP_LOGE(node, "the tiling data needs %zu bytes, CANN offers %zu", sizeof(TilingData),
                raw == nullptr ? size_t{0} : raw->GetCapacity());
        return false;
    }
    size_t* workspaces = context->GetWorkspaceSizes(1);
    TilingData* tiling = context->GetTilingData<TilingData>();
    if (tiling == nullptr || workspaces == nullptr) {
        OP_LOGE(node, "no room for the %zu-byte tiling data or the workspace size",
                sizeof(TilingData));
        return false;
    }
    std::memcpy(tiling, &data, sizeof(TilingData));
    workspaces[0] = workspaceSize;
    if (context->SetBlockDim(blockDim) != ge::GRAPH_SUCCESS ||
        context->SetTilingKey(tilingKey) != ge::GRAPH_SUCCESS) {
        OP_LOGE(node, "could not set the block dim or the tiling key");
        return false;
    }
    return true;
}

/**
 * Every adapter's tail: `tile(&result)` runs the operator's check on what the context described
 * and computes its tiling, returning the check's Refusal (empty: accepted); it may throw (no
 * exception crosses into CANN). A launch without elements is refused (nothing to launch); else
 * WriteTiling, with the system workspace ahead of the tiling's own.
 */
template <class Result, class Tile>
ge::graphStatus TileAndWrite(gert::TilingContext* context, const char* node, size_t systemWorkspace,
                             Tile&& tile)
{
    Result r;
    try {
        const Refusal refusal = tile(&r);
        if (!refusal.empty()) {
            OP_LOGE(node, "%s", refusal.c_str());
            return ge::GRAPH_FAILED;
        }
    } catch (const std::exception& e) {
        OP_LOGE(node, "tiling failed: %s", e.what());
        return ge::GRAPH_FAILED;
    }
    if (r.blockDim == 0) {
        OP_LOGE(node, "the launch holds no element: there is nothing to launch");
        return ge::GRAPH_FAILED;
    }
    return WriteTiling(context, node, r.data, r.tilingKey, r.blockDim,
                       systemWorkspace + r.workspaceSize)
               ? ge::GRAPH_SUCCESS
               : ge::GRAPH_FAILED;
}

}  // namespace ascend_ema_adam::cann

#endif  // ASCEND_EMA_ADAM_CANN_TILING_COMMON_H
