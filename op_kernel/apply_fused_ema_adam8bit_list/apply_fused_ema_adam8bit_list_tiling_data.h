/**
 * @file apply_fused_ema_adam8bit_list_tiling_data.h
 * @brief The tiling struct of ApplyFusedEmaAdam8bitList, shared by the host tiling, the kernels
 *        (AscendC and native) and the tests.
 *
 * Work split: every entry is cut into quantization blocks of 256 elements (its last block may be
 * shorter), each with its own pair of scales; the blocks of all entries, in list order, form one
 * sequence split over usedCoreNum cores balanced to one block, so a block's two passes (the new
 * scale over the whole block, then the encode) never cross cores. Core c works from coreStart[c]
 * (inclusive) to coreStart[c + 1] (exclusive); the end sentinel is {tensorNum, 0}.
 *
 * lr and the EMA decay are attributes (hyper) or, with hasLrTensor / hasEmaDecayTensor, read
 * once per launch from one-element fp32 tensors; the fold is the same fp32 arithmetic as the
 * other operators' (ema_adam_scalar.h's LaunchPrologue reads this struct's flags).
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_DATA_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_DATA_H

#include <cstdint>

#include "ema_adam_params.h"

/** Most cores one launch uses (Atlas A2/A3 have 40-48 AIV cores). */
constexpr uint32_t kApplyFusedEmaAdam8bitListMaxCores = 64;

/** A position in the global sequence of quantization blocks: block `block` of tensor `tensor`. */
struct ApplyFusedEmaAdam8bitListPosition {
    uint32_t tensor;    // index in the lists (tensorNum: past the last tensor)
    uint32_t reserved;  // keeps `block` 8-byte aligned on every compiler
    uint64_t block;     // quantization block (256 elements) within that tensor
};

struct ApplyFusedEmaAdam8bitListTilingData {
    // lr, emaDecay, beta1, beta2, eps, weightDecay, mode, biasCorrection (32 bytes)
    ascend_ema_adam::EmaAdamHyperParams hyper;
    uint32_t maximize;           // 1: the gradient is negated first
    uint32_t hasGradScale;       // 1: grad_scale is given: the gradient is divided by it
    uint32_t hasFoundInf;        // 1: found_inf is given: nonzero means nothing is written
    uint32_t tensorNum;          // entries in every list
    uint32_t usedCoreNum;        // launch blockDim
    uint32_t chunkBlocks;        // quantization blocks per unified-buffer chunk
    uint32_t bufferNum;          // queue depth of the copy-in/copy-out queues
    uint32_t hasEma;             // 1: ss is given and updated; 0: neither read nor written
    uint32_t hasLrTensor;        // 1: lr is read from a one-element fp32 tensor (replaces hyper.lr)
    uint32_t hasEmaDecayTensor;  // 1: the EMA decay likewise (replaces hyper.emaDecay)
    ApplyFusedEmaAdam8bitListPosition coreStart[kApplyFusedEmaAdam8bitListMaxCores + 1];
};

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_TILING_DATA_H
