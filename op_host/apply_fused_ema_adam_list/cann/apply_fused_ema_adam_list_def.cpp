/**
 * @file apply_fused_ema_adam_list_def.cpp
 * @brief CANN registration of ApplyFusedEmaAdamList (the V1 operator: ss required, lr and the EMA
 *        decay attributes only). Its OpDef, tiling adapter and infershape are the shared ones of
 *        apply_fused_ema_adam_list_def.h; ApplyFusedEmaAdamListV2 (apply_fused_ema_adam_list_v2_def.cpp)
 *        registers the same kernel with two more optional inputs.
 */
#include "apply_fused_ema_adam_list_def.h"

namespace optiling {

static ge::graphStatus TilingApplyFusedEmaAdamList(gert::TilingContext* context)
{
    namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list::registration;
    return list_op::Tiling(context, "ApplyFusedEmaAdamList", list_op::Version::kV1);
}

}  // namespace optiling

namespace ops {

class ApplyFusedEmaAdamList : public OpDef {
public:
    explicit ApplyFusedEmaAdamList(const char* name) : OpDef(name)
    {
        namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list::registration;
        list_op::Define(*this, list_op::Version::kV1, optiling::TilingApplyFusedEmaAdamList);
    }
};

OP_ADD(ApplyFusedEmaAdamList);

}  // namespace ops
