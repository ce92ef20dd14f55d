/**
 * @file apply_fused_ema_adam_list_opdef.cpp
 * @brief The list OpDefs' dtype columns (see the header).
 */
#include "apply_fused_ema_adam_list_opdef.h"

#include <algorithm>

namespace ascend_ema_adam {

bool ListOpDefColumn::operator==(const ListOpDefColumn& o) const
{
    return std::equal(std::begin(inputs), std::end(inputs), std::begin(o.inputs)) &&
           std::equal(std::begin(outputs), std::end(outputs), std::begin(o.outputs));
}

std::vector<ListOpDefColumn> ListOpDefColumns(bool emaOptional)
{
    std::vector<ListOpDefColumn> columns;
    for (const ListDtypes& d : ListDtypeCombinations()) {
        for (bool ema : {true, false}) {
            if (!ema && !emaOptional) continue;
            for (bool amsgrad : {true, false}) {
                const bool given[kApplyFusedEmaAdamLists] = {true, true, true, true,
                                                             ema, amsgrad, d.hasCopy};
                const DataType dtype[kApplyFusedEmaAdamLists] = {
                    d.grad, d.param, d.state, d.state, d.state, d.state, d.copy};
                ListOpDefColumn c;
                for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
                    c.inputs[l] = given[l] ? dtype[l] : d.grad;  // empty: keyed as grads[0]
                }
                for (int o = 0; o < kApplyFusedEmaAdamListOutputs; ++o) {
                    c.outputs[o] = given[o + 1] ? dtype[o + 1] : d.param;  // empty: as varsRef[0]
                }
                if (std::find(columns.begin(), columns.end(), c) == columns.end()) {
                    columns.push_back(c);
                }
            }
        }
    }
    return columns;
}

}  // namespace ascend_ema_adam
