/**
 * @file apply_fused_ema_adam_list_tiling_key.h
 * @brief Tiling keys of ApplyFusedEmaAdamList: one kernel instantiation per dtype combination of
 *        a launch, named P_S_G[_C]: the param (var) dtype, the state dtype (m, v, s, max_v), the
 *        grad dtype and, with model copies, the copy dtype. The rest (AMSGrad, the attributes,
 *        the optional tensors) are runtime values of the tiling data, not keys. Integer-literal
 *        macros: CANN's kernel compiler collects the keys from the preprocessed TILING_KEY_IS(...)
 *        arguments.
 *        Values are apart from ApplyFusedEmaAdam's (100-102).
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_TILING_KEY_H
#define APPLY_FUSED_EMA_ADAM_LIST_TILING_KEY_H

// fp32 params (with fp32 state), optionally the master weights of fp16/bf16 model copies.
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32 1000
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP16_FP16 1001
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32_FP16 1002
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_BF16_BF16 1003
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32_BF16 1004
// fp16 params: state in fp16 (MindSpeed's layout) or fp32; grads in fp16 or fp32.
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP16_FP16 1010
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP16_FP32 1011
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP32_FP16 1012
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP32_FP32 1013
// bf16 params: likewise.
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_BF16_BF16 1020
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_BF16_FP32 1021
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_FP32_BF16 1022
#define APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_FP32_FP32 1023

/**
 * The operator's dtype contract, the one table every layer reads: X(key, P, S, G, C) per tiling key
 * APPLY_FUSED_EMA_ADAM_LIST_KEY_<key>, with the dtypes as tokens FP32, FP16, BF16 (C: NONE without
 * model copies). Each user maps the tokens to its own types by pasting: the kernel's dispatch
 * (apply_fused_ema_adam_list.h), the host's key table and checks (op_host/apply_fused_ema_adam_list/),
 * the native driver (runtime/apply_fused_ema_adam_list/native/: every row has its loops among the
 * shared EMA_ADAM_ENTRY_TYPES, a static_assert). The golden model's table (ascend_ema_adam/_dtypes.py)
 * is held equal to it by tests/python.
 */
#define APPLY_FUSED_EMA_ADAM_LIST_KEYS(X)                 \
    X(FP32_FP32_FP32, FP32, FP32, FP32, NONE)             \
    X(FP32_FP32_FP16_FP16, FP32, FP32, FP16, FP16)        \
    X(FP32_FP32_FP32_FP16, FP32, FP32, FP32, FP16)        \
    X(FP32_FP32_BF16_BF16, FP32, FP32, BF16, BF16)        \
    X(FP32_FP32_FP32_BF16, FP32, FP32, FP32, BF16)        \
    X(FP16_FP16_FP16, FP16, FP16, FP16, NONE)             \
    X(FP16_FP16_FP32, FP16, FP16, FP32, NONE)             \
    X(FP16_FP32_FP16, FP16, FP32, FP16, NONE)             \
    X(FP16_FP32_FP32, FP16, FP32, FP32, NONE)             \
    X(BF16_BF16_BF16, BF16, BF16, BF16, NONE)             \
    X(BF16_BF16_FP32, BF16, BF16, FP32, NONE)             \
    X(BF16_FP32_BF16, BF16, FP32, BF16, NONE)             \
    X(BF16_FP32_FP32, BF16, FP32, FP32, NONE)

#endif  // APPLY_FUSED_EMA_ADAM_LIST_TILING_KEY_H
