// tools/ascendc_check/run.py --emulate driver for op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list_v2.cpp
// (ApplyFusedEmaAdamListV2's entry): the list driver (apply_fused_ema_adam_list_emulate.cpp, compiled here with
// AEA_LIST_EMULATE_V2) calling the V2 entry: lr and ema_decay as one-element GM tensors, and launches without
// the EMA (ss and ssRef the empty list).
// ascendc-check: run-sources op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#define AEA_LIST_EMULATE_V2 1
#include "apply_fused_ema_adam_list_emulate.cpp"  // NOLINT(bugprone-suspicious-include): one driver, two entries
