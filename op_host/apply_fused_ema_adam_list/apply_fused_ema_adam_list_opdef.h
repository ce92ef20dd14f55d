/**
 * @file apply_fused_ema_adam_list_opdef.h
 * @brief The dtype columns of the list operators' CANN OpDefs (ApplyFusedEmaAdamList and its V2),
 *        in pure C++: op_host/apply_fused_ema_adam_list/cann/apply_fused_ema_adam_list_def.h
 *        declares them, the operators' op JSONs (msopgen's input) list them, and the tests hold
 *        both to CANN's selection rule.
 *
 * CANN compiles one kernel binary per OpDef column and opbase selects it at run time by the dtype
 * of every non-optional parameter, reading each DYNAMIC list's FIRST tensor. An absent optional
 * list (max_vs, model_copies; V2's ss) reaches CANN as placeholders, one zero-element tensor per
 * entry, of the dtype the list would have: the state's (S) for ss and max_vs, the parameters' (P)
 * for model_copies (apply_fused_ema_adam_list_check.h; docs/ACLNN.md, "Absent lists"). So a list
 * keys the same whether it is given or absent, and each dtype combination
 * (ApplyFusedEmaAdamListDtypeCombinations, the tiling keys) needs exactly one column, the same for
 * ApplyFusedEmaAdamList and V2. (An EMPTY list would be keyed by another tensor's dtype -- opbase
 * never sets its start index -- and an executor reused from opbase's pool would keep the last
 * non-empty instances of it: the reasons the torch op never passes one.) Every binary holds every
 * tiling key's instantiation, so the column only has to exist.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_OPDEF_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_OPDEF_H

#include <vector>

#include "apply_fused_ema_adam_list_check.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

/** The outputs of the list OpDefs: the in-place lists vars ... model_copies (input l + 1). */
constexpr int kApplyFusedEmaAdamListOutputs = kApplyFusedEmaAdamListTensorLists - 1;

/** The OpDefs' outputs in declaration order, as input lists (kList*): varsRef first and a list
 *  that is never empty last, for opbase's sake (cann/apply_fused_ema_adam_list_def.h says why).
 *  An executor's output irIndex o (aclSetDynamicOutputTensorAddr) is this list. */
constexpr int kApplyFusedEmaAdamListOutputOrder[kApplyFusedEmaAdamListOutputs] = {
    kApplyFusedEmaAdamListVars,   kApplyFusedEmaAdamListSs, kApplyFusedEmaAdamListMaxVs,
    kApplyFusedEmaAdamListCopies, kApplyFusedEmaAdamListMs, kApplyFusedEmaAdamListVs};

/** One column of the OpDef: the dtype of each DYNAMIC list as an input (grads ... model_copies,
 *  kApplyFusedEmaAdamListGrads order) and as an output (vars ... model_copies). The other inputs
 *  are the same in every column: step int64, the OPTIONAL scalar tensors fp32 (not part of the
 *  selection). */
struct ApplyFusedEmaAdamListOpDefColumn {
    DataType inputs[kApplyFusedEmaAdamListTensorLists];
    DataType outputs[kApplyFusedEmaAdamListOutputs];

    bool operator==(const ApplyFusedEmaAdamListOpDefColumn& o) const;
};

/** The dtype an absent optional list's placeholders have in combination `d` (ss and max_vs: the
 *  state's; model_copies: the parameters'), and the dtype of each list as given otherwise. */
DataType ApplyFusedEmaAdamListDtypeOf(const ApplyFusedEmaAdamListDtypes& d, int list);

/** The columns of both list OpDefs: one per dtype combination, in tiling-key order. */
std::vector<ApplyFusedEmaAdamListOpDefColumn> ApplyFusedEmaAdamListOpDefColumns();

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_OPDEF_H
