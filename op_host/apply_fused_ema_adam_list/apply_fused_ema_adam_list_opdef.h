/**
 * @file apply_fused_ema_adam_list_opdef.h
 * @brief The dtype columns of the list operators' CANN OpDefs (ApplyFusedEmaAdamList and its V2),
 *        in pure C++: op_host/apply_fused_ema_adam_list/cann/apply_fused_ema_adam_list_def.h declares them, the operators'
 *        op JSONs (msopgen's input) list them, and the tests hold both to CANN's selection rule.
 *
 * CANN compiles one kernel binary per OpDef column and opbase selects it at run time by the dtype
 * of every non-optional parameter, reading each DYNAMIC list's FIRST tensor. An EMPTY list never
 * sets its start index (opbase NnopbaseExecutorAddDynamicTensors returns early), so it is read at
 * index 0: an empty input list is keyed with the dtype of the op's first input tensor (grads[0],
 * G), an empty output list with the first output tensor's (varsRef[0], P)
 * (../shared/reference/ascendc_api.md section 17). So every launch the contract allows needs a
 * column with, per list, its dtype when given and G (input) / P (output) when it is empty:
 * for each dtype combination (ListDtypeCombinations, the tiling keys) with and without AMSGrad
 * (max_vs), and, for V2, with and without the EMA (ss). model_copies is given exactly when the
 * combination has copies. Columns that coincide (e.g. every list fp32) are listed once. Every
 * binary holds every tiling key's instantiation, so the column only has to exist.
 */
#ifndef ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_OPDEF_H
#define ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_OPDEF_H

#include <vector>

#include "apply_fused_ema_adam_list_check.h"

namespace ascend_ema_adam {

/** The outputs of the list OpDefs: the in-place lists vars ... model_copies (input l + 1). */
constexpr int kApplyFusedEmaAdamListOutputs = kApplyFusedEmaAdamLists - 1;

/** The OpDefs' outputs in declaration order, as input lists (kList*): varsRef first and a list
 *  that is never empty last, for opbase's sake (cann/apply_fused_ema_adam_list_def.h says why).
 *  An executor's output irIndex o (aclSetDynamicOutputTensorAddr) is this list. */
constexpr int kApplyFusedEmaAdamListOutputOrder[kApplyFusedEmaAdamListOutputs] = {
    kListVars, kListSs, kListMaxVs, kListCopies, kListMs, kListVs};

/** One column of the OpDef: the dtype of each DYNAMIC list as an input (grads ... model_copies,
 *  kListGrads order) and as an output (vars ... model_copies). The other inputs are the same in
 *  every column: step int64, the OPTIONAL scalar tensors fp32 (not part of the selection). */
struct ListOpDefColumn {
    DataType inputs[kApplyFusedEmaAdamLists];
    DataType outputs[kApplyFusedEmaAdamListOutputs];

    bool operator==(const ListOpDefColumn& o) const;
};

/** The columns of ApplyFusedEmaAdamList (emaOptional false: ss always given) or of
 *  ApplyFusedEmaAdamListV2 (true: ss may be empty), in tiling-key order, without duplicates. */
std::vector<ListOpDefColumn> ListOpDefColumns(bool emaOptional);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_APPLY_FUSED_EMA_ADAM_LIST_OPDEF_H
