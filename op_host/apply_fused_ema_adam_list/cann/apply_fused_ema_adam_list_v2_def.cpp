/**
 * @file apply_fused_ema_adam_list_v2_def.cpp
 * @brief CANN registration of ApplyFusedEmaAdamListV2 (generates aclnnApplyFusedEmaAdamListV2):
 *        ApplyFusedEmaAdamList's OpDef (apply_fused_ema_adam_list_def.h) with the OPTIONAL inputs
 *        lr_tensor and ema_decay_tensor after found_inf, and an ss list that may have no instance
 *        (no EMA). Kernel: op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list_v2.cpp.
 */
#include "apply_fused_ema_adam_list_def.h"

namespace optiling {

static ge::graphStatus TilingApplyFusedEmaAdamListV2(gert::TilingContext* context)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list::registration;
    return list_op::Tiling(context, "ApplyFusedEmaAdamListV2", list_op::Version::kV2);
}

}  // namespace optiling

namespace ops {

class ApplyFusedEmaAdamListV2 : public OpDef {
public:
    explicit ApplyFusedEmaAdamListV2(const char* name) : OpDef(name)
    {
        namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list::registration;
        list_op::Define(*this, list_op::Version::kV2, optiling::TilingApplyFusedEmaAdamListV2);
    }
};

OP_ADD(ApplyFusedEmaAdamListV2);

}  // namespace ops
