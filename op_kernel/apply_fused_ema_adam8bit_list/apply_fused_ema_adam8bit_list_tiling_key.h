/**
 * @file apply_fused_ema_adam8bit_list_tiling_key.h
 * @brief Tiling keys of ApplyFusedEmaAdam8bitList: one kernel instantiation per dtype combination
 *        of a launch, named P_G[_C]: the param (var) dtype, the grad dtype and, with model copies,
 *        the copy dtype. The state has one layout for every key (uint8 codes, fp32 block scales,
 *        an fp32 EMA). Integer-literal macros: CANN's kernel compiler collects the keys from the
 *        preprocessed TILING_KEY_IS(...) arguments. Values are apart from the other operators'.
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_KEY_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_KEY_H

// fp32 params, with a gradient of any float dtype.
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_FP32 2000
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_FP16 2001
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_BF16 2002
// fp32 masters of fp16 model copies.
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_FP32_FP16 2010
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_FP16_FP16 2011
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_BF16_FP16 2012
// fp32 masters of bf16 model copies.
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_FP32_BF16 2020
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_FP16_BF16 2021
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP32_BF16_BF16 2022
// fp16 params.
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP16_FP32 2030
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP16_FP16 2031
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_FP16_BF16 2032
// bf16 params.
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_BF16_FP32 2040
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_BF16_FP16 2041
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_BF16_BF16 2042

/**
 * The operator's dtype contract, the one table every layer reads: X(key, P, G, C) per tiling key
 * APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_<key>, with the dtypes as tokens FP32, FP16, BF16 (C: NONE
 * without model copies), in the order of the golden model's table (_dtypes.LIST8BIT_DTYPES,
 * held equal by tests/python/native/test_apply_fused_ema_adam8bit_list_native.py).
 */
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(X)   \
    X(FP32_FP32, FP32, FP32, NONE)              \
    X(FP32_FP16, FP32, FP16, NONE)              \
    X(FP32_BF16, FP32, BF16, NONE)              \
    X(FP32_FP32_FP16, FP32, FP32, FP16)         \
    X(FP32_FP16_FP16, FP32, FP16, FP16)         \
    X(FP32_BF16_FP16, FP32, BF16, FP16)         \
    X(FP32_FP32_BF16, FP32, FP32, BF16)         \
    X(FP32_FP16_BF16, FP32, FP16, BF16)         \
    X(FP32_BF16_BF16, FP32, BF16, BF16)         \
    X(FP16_FP32, FP16, FP32, NONE)              \
    X(FP16_FP16, FP16, FP16, NONE)              \
    X(FP16_BF16, FP16, BF16, NONE)              \
    X(BF16_FP32, BF16, FP32, NONE)              \
    X(BF16_FP16, BF16, FP16, NONE)              \
    X(BF16_BF16, BF16, BF16, NONE)

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_KEY_H
