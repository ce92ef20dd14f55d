/**
 * @file apply_fused_ema_adam_list_tiling_data.h
 * @brief The tiling struct of ApplyFusedEmaAdamList, shared by the host tiling, the AscendC list
 *        kernel, the CPU twin launch and the tests.
 *
 * Work split: every tensor of the launch is cut into 32-byte blocks of alignElems elements (the
 * narrowest dtype among the launch's tensors; a tensor's last block may be partial); the blocks
 * of all tensors, in list order, form one global sequence that is split over usedCoreNum cores
 * balanced to one block. Core c works from coreStart[c] (inclusive) to coreStart[c + 1]
 * (exclusive), so a core may span several tensors and a tensor several cores. The table has one
 * entry per core plus the end sentinel {tensorNum, 0}: it does not grow with the number of
 * tensors, which CANN's tiling-data size limit (16 KiB by default) would not allow. Element counts
 * per tensor come from the lists themselves (the kernel) or from the host (CPU kernels).
 *
 * lr and the EMA decay are attributes (hyper) or, with hasLrTensor / hasEmaDecayTensor, read by
 * the kernel from one-element fp32 GM tensors once per launch (capturable training: the values
 * change without a new tiling); the fold of the scalars is then the same fp32 arithmetic.
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_TILING_DATA_H
#define APPLY_FUSED_EMA_ADAM_LIST_TILING_DATA_H

#include <cstdint>

#include "ema_adam_params.h"

/** Most cores one launch uses (Atlas A2/A3 have 40-48 AIV cores; the CPU preset is capped). */
constexpr uint32_t kApplyFusedEmaAdamListMaxCores = 64;

/** A position in the global block sequence: block `block` of tensor `tensor`. */
struct ApplyFusedEmaAdamListPosition {
    uint32_t tensor;    // index in the lists (tensorNum: past the last tensor)
    uint32_t reserved;  // keeps `block` 8-byte aligned on every compiler
    uint64_t block;     // 32-byte block within that tensor
};

struct ApplyFusedEmaAdamListTilingData {
    // lr, emaDecay, beta1, beta2, eps, weightDecay, mode, biasCorrection (32 bytes)
    ascend_ema_adam::EmaAdamHyperParams hyper;
    uint32_t maximize;      // 1: the gradient is negated first
    uint32_t amsgrad;       // 1: max_vs is given (AMSGrad)
    uint32_t hasGradScale;  // 1: grad_scale is given: the gradient is divided by it
    uint32_t hasFoundInf;   // 1: found_inf is given: nonzero means nothing is written
    uint32_t tensorNum;     // entries in every list
    uint32_t usedCoreNum;   // launch blockDim
    uint32_t alignElems;    // elements per 32-byte block of the narrowest dtype of the launch
    uint32_t chunkLength;   // elements per unified-buffer chunk (a multiple of alignElems)
    uint32_t bufferNum;     // queue depth of the copy-in/copy-out queues (2: double buffering)
    uint32_t hasEma;        // 1: ss is given and updated; 0: the launch neither reads nor writes it
    uint32_t hasLrTensor;   // 1: lr is read from a one-element fp32 GM tensor (replaces hyper.lr)
    uint32_t hasEmaDecayTensor;  // 1: the EMA decay likewise (replaces hyper.emaDecay)
    ApplyFusedEmaAdamListPosition coreStart[kApplyFusedEmaAdamListMaxCores + 1];
};

#endif  // APPLY_FUSED_EMA_ADAM_LIST_TILING_DATA_H
