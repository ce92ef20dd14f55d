/**
 * @file apply_fused_ema_adam_list_opdef.cpp
 * @brief The list OpDefs' dtype columns (see the header).
 */
#include "apply_fused_ema_adam_list_opdef.h"

#include <algorithm>
#include <iterator>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

bool ApplyFusedEmaAdamListOpDefColumn::operator==(const ApplyFusedEmaAdamListOpDefColumn& o) const
{
    return std::equal(std::begin(inputs), std::end(inputs), std::begin(o.inputs)) &&
           std::equal(std::begin(outputs), std::end(outputs), std::begin(o.outputs));
}

DataType ApplyFusedEmaAdamListDtypeOf(const ApplyFusedEmaAdamListDtypes& d, int list)
{
    switch (list) {
        case kApplyFusedEmaAdamListGrads:
            return d.grad;
        case kApplyFusedEmaAdamListVars:
            return d.param;
        case kApplyFusedEmaAdamListCopies:
            return d.hasCopy ? d.copy : d.param;                 // placeholders: P
        default: return d.state;                                 // ms, vs, ss, max_vs
    }
}

std::vector<ApplyFusedEmaAdamListOpDefColumn> ApplyFusedEmaAdamListOpDefColumns()
{
    std::vector<ApplyFusedEmaAdamListOpDefColumn> columns;
    for (const ApplyFusedEmaAdamListDtypes& d : ApplyFusedEmaAdamListDtypeCombinations()) {
        ApplyFusedEmaAdamListOpDefColumn c;
        for (int l = 0; l < kApplyFusedEmaAdamListTensorLists; ++l)
            c.inputs[l] = ApplyFusedEmaAdamListDtypeOf(d, l);
        for (int o = 0; o < kApplyFusedEmaAdamListOutputs; ++o)
            c.outputs[o] = ApplyFusedEmaAdamListDtypeOf(d, o + 1);
        columns.push_back(c);
    }
    return columns;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
