/**
 * @file apply_fused_ema_adam_list_opdef.cpp
 * @brief The list OpDefs' dtype columns (see the header).
 */
#include "apply_fused_ema_adam_list_opdef.h"

#include <algorithm>
#include <iterator>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

bool ListOpDefColumn::operator==(const ListOpDefColumn& o) const
{
    return std::equal(std::begin(inputs), std::end(inputs), std::begin(o.inputs)) &&
           std::equal(std::begin(outputs), std::end(outputs), std::begin(o.outputs));
}

DataType ListDtypeOf(const ListDtypes& d, int list)
{
    switch (list) {
        case kListGrads: return d.grad;
        case kListVars: return d.param;
        case kListCopies: return d.hasCopy ? d.copy : d.param;  // placeholders: P
        default: return d.state;                                 // ms, vs, ss, max_vs
    }
}

std::vector<ListOpDefColumn> ListOpDefColumns()
{
    std::vector<ListOpDefColumn> columns;
    for (const ListDtypes& d : ListDtypeCombinations()) {
        ListOpDefColumn c;
        for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) c.inputs[l] = ListDtypeOf(d, l);
        for (int o = 0; o < kApplyFusedEmaAdamListOutputs; ++o) c.outputs[o] = ListDtypeOf(d, o + 1);
        columns.push_back(c);
    }
    return columns;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
