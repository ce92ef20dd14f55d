/**
 * @file apply_fused_ema_adam_tiling_data.h
 * @brief The one tiling struct shared by host tiling, the AscendC kernel, the CPU twin and tests.
 *
 * Plain standard-layout struct of fixed-width fields: the host fills it, copies it byte for byte
 * into the launch's tiling buffer, and the kernel reads it back with GET_TILING_DATA.
 */
#ifndef APPLY_FUSED_EMA_ADAM_TILING_DATA_H
#define APPLY_FUSED_EMA_ADAM_TILING_DATA_H

#include <cstdint>

#include "ema_adam_params.h"

struct ApplyFusedEmaAdamTilingData {
    // lr, emaDecay, beta1, beta2, eps, weightDecay, mode, biasCorrection (32 bytes)
    ascend_ema_adam::EmaAdamHyperParams hyper;

    // Work split. Elements are grouped into 32-byte blocks (alignElems elements each);
    // core i owns whole blocks [firstBlock(i), firstBlock(i+1)), the last block may be partial.
    uint64_t totalLength;     // elements in each of grad/var/m/v/s
    uint64_t blocksPerCore;   // blocks of every core before the "big" ones
    uint32_t usedCoreNum;     // launch blockDim
    uint32_t bigCoreNum;      // the last bigCoreNum cores own blocksPerCore + 1 blocks
    uint32_t alignElems;      // elements per 32-byte block of the narrowest tensor dtype
    uint32_t chunkLength;     // elements per unified-buffer chunk (a multiple of alignElems)
    uint32_t bufferNum;       // queue depth of the copy-in/copy-out queues (2: double buffering)
    uint32_t reserved;        // keeps sizeof a multiple of 8
};

#endif  // APPLY_FUSED_EMA_ADAM_TILING_DATA_H
