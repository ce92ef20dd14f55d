/**
 * @file apply_fused_ema_adam8bit_list_def.cpp
 * @brief CANN registration of ApplyFusedEmaAdam8bitList (generates aclnnApplyFusedEmaAdam8bitList):
 *        the tiling adapter and the OpDef, over what every list operator's registration shares
 *        (cann_list_common.h: reading the gert context, infershape). Kernel:
 *        op_kernel/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list.cpp. Built only
 *        inside a CANN custom-op project (op_host/common/cann/build.sh); type-checked against
 *        CANN's registration headers by tools/cann_registration_check/run.sh.
 *
 * The tiling adapter reads every list from the gert context (instance counts, per-instance dtype
 * and storage shape), the maps, step and the optional scalar tensors and the attributes, refuses
 * the call with the CPU aclnn layer's own validation (CheckApplyFusedEmaAdam8bitList, the same
 * messages) plus the NPU's condition that every list entry is 1-D (the device's list decoder reads
 * every shape of a list with its first tensor's rank; the torch op passes 1-D views), and tiles
 * with the same ComputeApplyFusedEmaAdam8bitListTiling. The maps' values are not read here (device
 * memory): the torch op and the CPU aclnn layer check them.
 *
 * Dtype columns: one per row of the contract (APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS), opbase
 * selecting the binary by each DYNAMIC list's first tensor; an absent optional list reaches CANN as
 * zero-element placeholders of the dtype it would have (ss fp32, model_copies the parameters'),
 * so a row without copies keys model_copies by P. The outputs
 * (kApplyFusedEmaAdam8bitListOutputOrder, which the kernel entry follows) put varsRef first and a
 * list that is never empty last: an EMPTY last output list would leave its place holder unfilled
 * (docs/ACLNN.md, "D1").
 */
#include <cstdint>
#include <string>
#include <vector>

#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "cann_list_common.h"

// The registration's own helpers: nested, since only CANN's tiling library compiles them.
namespace ascend_ema_adam::apply_fused_ema_adam8bit_list::registration {

// OpDef input order: the eight lists (kApplyFusedEmaAdam8bitListGrads ...
// kApplyFusedEmaAdam8bitListCopies), then these.
constexpr size_t INPUT_QMAP_M = kApplyFusedEmaAdam8bitListTensorLists;
constexpr int kTensorInputs = 7;  // qmap_m, qmap_v, step, grad_scale, found_inf, lr, ema_decay
constexpr const char* kInputNames[kApplyFusedEmaAdam8bitListTensorLists] = {
    "grads", "vars", "ms", "vs", "m_absmaxes", "v_absmaxes", "ss", "model_copies"};

/** The call as the shared validation sees it (cann_list_common.h). */
using Call = cann::ListCall<kApplyFusedEmaAdam8bitListTensorLists, ListEntryArg, kTensorInputs,
                            ApplyFusedEmaAdam8bitListArgs>;

/** The NPU's condition: every list entry is 1-D (what the device's list decoder can read). */
Refusal CheckFlat(const Call& call)
{
    for (int list = 0; list < kApplyFusedEmaAdam8bitListTensorLists; ++list) {
        for (size_t i = 0; i < call.shapes[list].size(); ++i) {
            if (call.shapes[list][i].size() != 1) {
                return ApplyFusedEmaAdam8bitListEntryName(list, i) + " has " +
                       std::to_string(call.shapes[list][i].size()) +
                       " dimensions: on the NPU every list entry is 1-D (pass flat views)";
            }
        }
    }
    return {};
}

/** Every list, the maps and step (required), the optional scalar tensors (absent when CANN has no
 *  instance), the attributes and the platform; then the checks and
 *  ComputeApplyFusedEmaAdam8bitListTiling. */
ge::graphStatus Tiling(gert::TilingContext* context)
{
    const char* node = cann::NodeName(context, "ApplyFusedEmaAdam8bitList");
    Call call;
    const cann::TensorInput inputs[kTensorInputs] = {
        {INPUT_QMAP_M, "qmapM", true, &call.args.qmapM},
        {INPUT_QMAP_M + 1, "qmapV", true, &call.args.qmapV},
        {INPUT_QMAP_M + 2, "step", true, &call.args.step},
        {INPUT_QMAP_M + 3, "gradScaleOptional", false, &call.args.gradScale},
        {INPUT_QMAP_M + 4, "foundInfOptional", false, &call.args.foundInf},
        {INPUT_QMAP_M + 5, "lrTensorOptional", false, &call.args.lr},
        {INPUT_QMAP_M + 6, "emaDecayTensorOptional", false, &call.args.emaDecay}};
    ApplyFusedEmaAdam8bitListAttrs attrs;
    Platform platform;
    size_t systemWorkspace = 0;
    if (!cann::ReadListLaunch(context, node,
                              {kApplyFusedEmaAdam8bitListNames, ApplyFusedEmaAdam8bitListEntryName},
                              inputs, kTensorInputs, &call, &attrs, &platform, &systemWorkspace)) {
        return ge::GRAPH_FAILED;
    }
    return cann::TileAndWrite<ApplyFusedEmaAdam8bitListTilingResult>(
        context, node, systemWorkspace, [&](ApplyFusedEmaAdam8bitListTilingResult* r) {
            ApplyFusedEmaAdam8bitListDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
            ApplyFusedEmaAdam8bitListOptions options;
            Refusal refusal = CheckApplyFusedEmaAdam8bitList(call.args, attrs, attrs.maximize,
                                                             &dtypes, &options);
            if (refusal.empty()) {
                refusal = CheckFlat(call);
            }
            if (!refusal.empty()) {
                return refusal;
            }
            *r = ComputeApplyFusedEmaAdam8bitListTiling(
                call.Numels(kApplyFusedEmaAdam8bitListGrads), dtypes, attrs, options, platform);
            return Refusal();
        });
}

/** The dtype of each list in one column of the OpDef: a row of the contract, model_copies keyed
 *  by P where the row has none (its placeholders). */
struct Column {
    DataType lists[kApplyFusedEmaAdam8bitListTensorLists];
};

std::vector<Column> Columns()
{
    std::vector<Column> out;
#define AEA_ADAM8BIT_COLUMN(key, P, G, C)                                             \
    out.push_back(                                                                    \
        {{kApplyFusedEmaAdam8bitListDtype_##G, kApplyFusedEmaAdam8bitListDtype_##P,   \
          DataType::kUInt8, DataType::kUInt8, DataType::kFloat32, DataType::kFloat32, \
          DataType::kFloat32,                                                         \
          kApplyFusedEmaAdam8bitListHasCopy_##C ? kApplyFusedEmaAdam8bitListDtype_##C \
                                                : kApplyFusedEmaAdam8bitListDtype_##P}});
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_COLUMN)
#undef AEA_ADAM8BIT_COLUMN
    return out;
}

/** The OpDef: its dtype columns are Columns(), one per row of the contract. */
void Define(ops::OpDef& def, gert::OpImplRegisterV2::TilingKernelFunc tiling)
{
    std::vector<ge::DataType> lists[kApplyFusedEmaAdam8bitListTensorLists];
    for (const Column& c : Columns()) {
        for (int list = 0; list < kApplyFusedEmaAdam8bitListTensorLists; ++list) {
            lists[list].push_back(cann::GeDataType(c.lists[list]));
        }
    }
    const size_t n = lists[0].size();
    for (int list = 0; list < kApplyFusedEmaAdam8bitListTensorLists; ++list) {
        cann::AddInput(def, kInputNames[list], ops::DYNAMIC, lists[list]);
    }
    for (const char* map : {"qmap_m", "qmap_v"}) {
        cann::AddInput(def, map, ops::REQUIRED, std::vector<ge::DataType>(n, ge::DT_FLOAT));
    }
    // not "lr"/"ema_decay": the attributes have those names
    cann::AddStepAndScalars(def, n, {"grad_scale", "found_inf", "lr_tensor", "ema_decay_tensor"});
    for (const int list : kApplyFusedEmaAdam8bitListOutputOrder) {
        cann::AddListOutput(def, kInputNames[list], lists[list]);
    }
    cann::FinishListOpDef<kApplyFusedEmaAdam8bitListOutputOrder>(def, tiling);
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
