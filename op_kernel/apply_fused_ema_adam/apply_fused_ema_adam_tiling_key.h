/**
 * @file apply_fused_ema_adam_tiling_key.h
 * @brief Tiling keys: one per kernel instantiation. Host tiling sets them, the kernel dispatches on
 *        them with TILING_KEY_IS. Values are CANN's ApplyFusedEmaAdam keys, so a host built from
 *        either project drives either kernel. Macros, not constants: CANN's kernel compiler collects
 *        the keys from the preprocessed TILING_KEY_IS(...) arguments, which must be integer literals.
 */
#ifndef APPLY_FUSED_EMA_ADAM_TILING_KEY_H
#define APPLY_FUSED_EMA_ADAM_TILING_KEY_H

#define APPLY_FUSED_EMA_ADAM_KEY_BF16 100  // all five float tensors bfloat16
#define APPLY_FUSED_EMA_ADAM_KEY_FP16 101  // all five float tensors float16
#define APPLY_FUSED_EMA_ADAM_KEY_FP32 102  // all five float tensors float32

#endif  // APPLY_FUSED_EMA_ADAM_TILING_KEY_H
