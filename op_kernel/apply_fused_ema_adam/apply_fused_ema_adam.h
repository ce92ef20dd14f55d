/**
 * @file apply_fused_ema_adam.h
 * @brief FusedEmaAdam vector kernel: Adam (L2 or decoupled decay) + EMA of the parameter in one
 *        pass over memory. Written only against the AscendC API; the same source builds with
 *        CANN's compiler for Atlas A2/A3 and with g++ against the CPU twin.
 *
 * Data flow per AI vector core:
 *   its element range [begin, end) (whole 32-byte blocks, from the tiling) is walked in chunks;
 *   CopyIn:  grad, var, m, v, s  GM -> VECIN queue (DataCopyPad: any start, any tail)
 *   Compute: (16-bit: widen to fp32) -> the fp32 update -> (16-bit: narrow with RINT) -> VECOUT
 *   CopyOut: var', m', v', s'    VECOUT queue -> GM
 * Both queues hold bufferNum (2) buffers, so chunk i+1 loads while chunk i computes and stores.
 * Each element is read once from each input and written once to each output (36 B/elem fp32,
 * 18 B/elem fp16/bf16).
 */
#ifndef APPLY_FUSED_EMA_ADAM_H
#define APPLY_FUSED_EMA_ADAM_H

#include "kernel_operator.h"
#include "apply_fused_ema_adam_tiling_data.h"
#include "ema_adam_scalar.h"
#include "ema_adam_update.h"

namespace ascend_ema_adam::apply_fused_ema_adam {

using namespace AscendC;

// Slot order inside one VECIN / VECOUT buffer (each slot chunkLength elements, 32-B aligned).
enum InSlot : uint32_t { IN_GRAD = 0, IN_VAR, IN_M, IN_V, IN_S, IN_SLOT_NUM };
enum OutSlot : uint32_t { OUT_VAR = 0, OUT_M, OUT_V, OUT_S, OUT_SLOT_NUM };

/**
 * One core's share of the update. T is the dtype of all five float tensors. CopyIn / CopyOut move
 * the slots of one chunk; Process walks the core's element range in chunks.
 */
template <typename T>
class KernelApplyFusedEmaAdam {
public:
    __aicore__ inline KernelApplyFusedEmaAdam() {}

    __aicore__ inline void Init(GM_ADDR grad, GM_ADDR var, GM_ADDR m, GM_ADDR v, GM_ADDR s,
                                GM_ADDR step, GM_ADDR varOut, GM_ADDR mOut, GM_ADDR vOut,
                                GM_ADDR sOut, const ApplyFusedEmaAdamTilingData& tiling,
                                TPipe* pipe)
    {
        chunk_ = tiling.chunkLength;
        const ElementRange range = CoreElementRange(tiling.totalLength, tiling.blocksPerCore,
                                                    tiling.usedCoreNum, tiling.bigCoreNum,
                                                    tiling.alignElems,
                                                    static_cast<uint32_t>(GetBlockIdx()));
        begin_ = range.begin;
        end_ = range.end;
        const uint64_t length = end_ - begin_;
        GM_ADDR inputs[IN_SLOT_NUM] = {grad, var, m, v, s};
        for (uint32_t i = 0; i < IN_SLOT_NUM; ++i) {
            inGm_[i].SetGlobalBuffer(reinterpret_cast<__gm__ T*>(inputs[i]) + begin_, length);
        }
        GM_ADDR outputs[OUT_SLOT_NUM] = {varOut, mOut, vOut, sOut};
        for (uint32_t i = 0; i < OUT_SLOT_NUM; ++i) {
            outGm_[i].SetGlobalBuffer(reinterpret_cast<__gm__ T*>(outputs[i]) + begin_, length);
        }
        stepGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(step), 1);

        const uint8_t bufferNum = static_cast<uint8_t>(tiling.bufferNum);  // InitBuffer takes a uint8_t count
        pipe->InitBuffer(inQueue_, bufferNum, chunk_ * sizeof(T) * IN_SLOT_NUM);
        pipe->InitBuffer(outQueue_, bufferNum, chunk_ * sizeof(T) * OUT_SLOT_NUM);
        if constexpr (!IS_FP32) {
            pipe->InitBuffer(workBuf_, chunk_ * sizeof(float) * (IN_SLOT_NUM + OUT_SLOT_NUM));
        }
        // step is read only when it is used; it is host-written before launch: no cache sync.
        const int64_t stepValue = tiling.hyper.biasCorrection != 0U ? stepGm_.GetValue(0) : 0;
        k_ = FoldScalars(tiling.hyper, stepValue);
    }

    __aicore__ inline void Process()
    {
        const uint64_t length = end_ - begin_;
        for (uint64_t offset = 0; offset < length; offset += chunk_) {
            const uint64_t left = length - offset;
            const uint32_t count = left < chunk_ ? static_cast<uint32_t>(left) : chunk_;
            CopyIn(offset, count);
            Compute(count);
            CopyOut(offset, count);
        }
    }

private:
    static constexpr bool IS_FP32 = sizeof(T) == sizeof(float);

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> in = inQueue_.template AllocTensor<T>();
        const DataCopyExtParams copy{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
        const DataCopyPadExtParams<T> noPad{false, 0, 0, 0};
        for (uint32_t i = 0; i < IN_SLOT_NUM; ++i) {
            DataCopyPad(in[i * chunk_], inGm_[i][offset], copy, noPad);
        }
        inQueue_.EnQue(in);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<T> in = inQueue_.template DeQue<T>();
        LocalTensor<T> out = outQueue_.template AllocTensor<T>();
        const int32_t n = static_cast<int32_t>(count);
        if constexpr (IS_FP32) {
            UpdateFp32(SlotTensors(in, out), k_, UpdateOptions{}, n);
        } else {
            // Widen exactly (CAST_NONE), update in fp32, narrow round-to-nearest-even (CAST_RINT).
            LocalTensor<float> work = workBuf_.template Get<float>();
            for (uint32_t i = 0; i < IN_SLOT_NUM; ++i) {
                Cast(work[i * chunk_], in[i * chunk_], RoundMode::CAST_NONE, count);
            }
            const uint32_t o = IN_SLOT_NUM * chunk_;
            UpdateFp32(SlotTensors(work, work[o]), k_, UpdateOptions{}, n);
            for (uint32_t i = 0; i < OUT_SLOT_NUM; ++i) {
                Cast(out[i * chunk_], work[o + i * chunk_], RoundMode::CAST_RINT, count);
            }
        }
        outQueue_.EnQue(out);
        inQueue_.FreeTensor(in);
    }

    /** The update's operands: input slot i of `in` and output slot i of `out` (chunk_ apart). */
    __aicore__ inline UpdateTensors SlotTensors(const LocalTensor<float>& in,
                                                const LocalTensor<float>& out) const
    {
        UpdateTensors t;
        t.grad = in[IN_GRAD * chunk_];
        t.var = in[IN_VAR * chunk_];
        t.m = in[IN_M * chunk_];
        t.v = in[IN_V * chunk_];
        t.s = in[IN_S * chunk_];
        t.varOut = out[OUT_VAR * chunk_];
        t.mOut = out[OUT_M * chunk_];
        t.vOut = out[OUT_V * chunk_];
        t.sOut = out[OUT_S * chunk_];
        return t;
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<T> out = outQueue_.template DeQue<T>();
        const DataCopyExtParams copy{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
        for (uint32_t i = 0; i < OUT_SLOT_NUM; ++i) {
            DataCopyPad(outGm_[i][offset], out[i * chunk_], copy);
        }
        outQueue_.FreeTensor(out);
    }

    TQue<QuePosition::VECIN, 1> inQueue_;
    TQue<QuePosition::VECOUT, 1> outQueue_;
    TBuf<TPosition::VECCALC> workBuf_;
    GlobalTensor<T> inGm_[IN_SLOT_NUM];
    GlobalTensor<T> outGm_[OUT_SLOT_NUM];
    GlobalTensor<int64_t> stepGm_;
    UpdateScalars k_{};
    uint64_t begin_ = 0;
    uint64_t end_ = 0;
    uint32_t chunk_ = 0;
};

}  // namespace ascend_ema_adam::apply_fused_ema_adam

#endif  // APPLY_FUSED_EMA_ADAM_H
