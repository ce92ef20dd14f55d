// tools/ascendc_check/run.py --run driver for op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list_v2.cpp (ApplyFusedEmaAdamListV2's entry):
// the list driver (apply_fused_ema_adam_list_run.cpp, compiled here with AEA_LIST_RUN_V2) calling the V2 entry, every
// tiling key x {AMSGrad off/on} x {EMA given / absent} x {found_inf absent/0/1/NaN}, lr and ema_decay given as
// one-element GM tensors, on the same three layouts. An absent EMA is the empty list before an inaccessible page.
// ascendc-check: run-sources op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
//
// Self-tests of this driver (`tools/ascendc_check/run.py --run` runs them: each must fail, for the reason given):
// ascendc-check: driver-self-test --break=absent-ema-opened block 0 touched the page after the empty list
// ascendc-check: driver-self-test --break=found-inf-ignored block 0 touched list descriptors, step, grad_scale
#define AEA_LIST_RUN_V2 1
#include "apply_fused_ema_adam_list_run.cpp"  // NOLINT(bugprone-suspicious-include): one driver, two entries
