/**
 * @file apply_fused_ema_adam_list_tiling_key.h
 * @brief Tiling keys of ApplyFusedEmaAdamList: one kernel instantiation per dtype combination of
 *        a launch, named P_S_G[_C]: the param (var) dtype, the state dtype (m, v, s, max_v), the
 *        grad dtype and, with model copies, the copy dtype. AMSGrad, maximize, grad_scale and
 *        found_inf are runtime flags of the tiling data, not keys. Integer-literal macros: CANN's
 *        kernel compiler collects the keys from the preprocessed TILING_KEY_IS(...) arguments.
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

#endif  // APPLY_FUSED_EMA_ADAM_LIST_TILING_KEY_H
