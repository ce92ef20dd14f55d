/**
 * @file apply_fused_ema_adam_list.h
 * @brief ApplyFusedEmaAdamList vector kernel: a whole parameter group (lists of grads, params,
 *        moments, EMA, optional AMSGrad maxima and model copies) in one launch. Written only
 *        against the AscendC API; the same source builds with CANN's compiler for Atlas A2/A3 and
 *        with g++ against the CPU twin.
 *
 * Data flow per AI vector core:
 *   found_inf (if given) first: nonzero (or NaN) -> the core returns before any other GM access;
 *   grad_scale (if given) once, broadcast into an fp32 UB slot; step once (bias correction); lr
 *   and the EMA decay once each when given as tensors (they replace the attributes before the
 *   scalars are folded: the same fp32 arithmetic, so fp32(x) in a tensor gives the attribute
 *   x's bits);
 *   the core's share of the lists' global block sequence, from coreStart[core] to
 *   coreStart[core + 1] (tiling), tensor by tensor; each tensor's element count from the vars
 *   list's descriptor (GetDesc: every list the kernel receives holds 1-D [numel] entries), its
 *   data pointers from each list (GetDataPtr); within a tensor, chunks of <= chunkLength:
 *   CopyIn:  G, P, M, V (, S) (, MaxV)        GM -> VECIN buffer (DataCopyPad, per-slot dtype)
 *   Compute: widen 16-bit slots (CAST_NONE) -> UpdateFp32 (ema_adam_update.h) -> narrow
 *            16-bit results (CAST_RINT); the model copy = RINT(fp32 var') into its own slot
 *   CopyOut: P', M', V' (, S') (, MaxV') (, C) VECOUT buffer -> GM
 * S only with the EMA (tiling hasEma): a launch without it neither reads nor writes the EMA list
 * (it is never opened) and its chunk is larger by the UB the S slots would take.
 * Both queues hold bufferNum (2) buffers: chunk i+1 loads while chunk i computes and stores, also
 * across tensor boundaries. GM traffic is exactly one read of each input and one write of each
 * output; the model copies are never read.
 *
 * The tensor count comes from the tiling, never from ListTensorDesc::GetSize(): CANN's launcher
 * writes 1 in every descriptor header, so GetSize() is 1 on the device for any list (see
 * twin/ascendc/twin_list_tensor.h). Absent optional lists (ss, max_vs, model copies) are never
 * opened.
 *
 * UB per chunk element (op_host ApplyFusedEmaAdamListUbBytesPerElement, the tiling's one source of
 * this number): bufferNum x (input slots + output slots, each in its tensor's dtype)
 *   + 4 B per fp32 work slot: one per 16-bit input (widened) and per 16-bit output (computed in
 *     fp32, then narrowed), + one for the broadcast grad scale.
 */
#ifndef APPLY_FUSED_EMA_ADAM_LIST_H
#define APPLY_FUSED_EMA_ADAM_LIST_H

#include "kernel_operator.h"
#include "apply_fused_ema_adam_list_range.h"
#include "apply_fused_ema_adam_list_tiling_data.h"
#include "apply_fused_ema_adam_list_tiling_key.h"
#include "ema_adam_list_kernel.h"
#include "ema_adam_scalar.h"
#include "ema_adam_update.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace AscendC;
using namespace list_kernel;  // the list kernels' shared part (ema_adam_list_kernel.h)

/** The kernel's GM arguments (CANN's order: inputs, in-place outputs). A list argument is the
 *  GM address of its descriptor; absent optional lists and tensors may be null or empty lists. */
struct ApplyFusedEmaAdamListKernelArgs {
    GM_ADDR grads;
    GM_ADDR vars;
    GM_ADDR ms;
    GM_ADDR vs;
    GM_ADDR ss;
    GM_ADDR maxVs;
    GM_ADDR step;
    GM_ADDR gradScale;
    GM_ADDR foundInf;
    GM_ADDR lr;        // ApplyFusedEmaAdamListV2 only: null for the V1 entry
    GM_ADDR emaDecay;  // likewise
    GM_ADDR varsRef;
    GM_ADDR msRef;
    GM_ADDR vsRef;
    GM_ADDR ssRef;
    GM_ADDR maxVsRef;
    GM_ADDR modelCopiesRef;
};

/**
 * One core's share of the list update. P: params (vars), S: state (m, v, s, max_v), G: grads,
 * C: model copies (NoModelCopy: none). Each slot of the queue buffers holds chunk elements of its
 * own dtype; every slot starts 32-byte aligned because chunk is a multiple of the launch's
 * 32-byte block of the narrowest dtype.
 */
template <typename P, typename S, typename G, typename C>
class KernelApplyFusedEmaAdamList : ListKernelBase<ApplyFusedEmaAdamListPosition> {
public:
    __aicore__ inline KernelApplyFusedEmaAdamList() {}

    /** Reads the launch scalars and sets up UB; false: this core writes nothing (found_inf set,
     *  or no work). */
    __aicore__ inline bool Init(const ApplyFusedEmaAdamListKernelArgs& args,
                                const ApplyFusedEmaAdamListTilingData& tiling, TPipe* pipe)
    {
        if (!InitLaunch(args, tiling)) {
            return false;
        }
        options_.amsgrad = tiling.amsgrad != 0U;
        align_ = tiling.alignElems;
        chunk_ = tiling.chunkLength;
        InitSharedLists(args, HAS_COPY);
        if (options_.amsgrad) {
            maxVs_.Init(args.maxVs);
            maxVsOut_.Init(args.maxVsRef);
        }

        InitLayout();
        const uint8_t bufferNum = static_cast<uint8_t>(tiling.bufferNum);  // InitBuffer takes a uint8_t count
        pipe->InitBuffer(inQueue_, bufferNum, inBytes_);
        pipe->InitBuffer(outQueue_, bufferNum, outBytes_);
        if (workSlots_ > 0U) {
            pipe->InitBuffer(workBuf_, workSlots_ * chunk_ * kBytes<float>);
            work_ = workBuf_.template Get<float>();
        }
        if (options_.gradScale) {
            pipe->InitBuffer(scaleBuf_, chunk_ * kBytes<float>);
            scale_ = scaleBuf_.template Get<float>();
            Duplicate(scale_, gradDivisor_, static_cast<int32_t>(chunk_));
        }
        return true;
    }

    /** Walks the core's share tensor by tensor, chunk by chunk. */
    __aicore__ inline void Process()
    {
        const uint32_t stop = ApplyFusedEmaAdamListTensorStop(end_.tensor, end_.block);
        for (uint32_t tensor = start_.tensor; tensor < stop; ++tensor) {
            const ElementRange range = ApplyFusedEmaAdamListTensorRange(
                start_.tensor, start_.block, end_.tensor, end_.block, tensor,
                EntryNumel<P>(vars_, tensor), align_);
            const uint64_t length = range.end - range.begin;
            if (length == 0) {
                continue;  // a tensor without elements
            }
            BindTensor(tensor, range.begin, length);
            for (uint64_t offset = 0; offset < length; offset += chunk_) {
                const uint64_t left = length - offset;
                const uint32_t count = left < chunk_ ? static_cast<uint32_t>(left) : chunk_;
                CopyIn(offset, count);
                Compute(count);
                CopyOut(offset, count);
            }
        }
    }

private:
    static constexpr bool HAS_COPY = !SameType<C, NoModelCopy>::value;
    using CopyT = typename Conditional<HAS_COPY, C, half>::type;  // half: never used without copies

    /** Byte offsets of the slots in the queue buffers and the number of fp32 work slots. */
    __aicore__ inline void InitLayout()
    {
        uint32_t at = 0;
        inGrad_ = at;
        at += chunk_ * kBytes<G>;
        inVar_ = at;
        at += chunk_ * kBytes<P>;
        inM_ = at;
        at += chunk_ * kBytes<S>;
        inV_ = at;
        at += chunk_ * kBytes<S>;
        inS_ = at;
        at += options_.ema ? chunk_ * kBytes<S> : 0U;
        inMaxV_ = at;
        at += options_.amsgrad ? chunk_ * kBytes<S> : 0U;
        inBytes_ = at;

        at = 0;
        outVar_ = at;
        at += chunk_ * kBytes<P>;
        outM_ = at;
        at += chunk_ * kBytes<S>;
        outV_ = at;
        at += chunk_ * kBytes<S>;
        outS_ = at;
        at += options_.ema ? chunk_ * kBytes<S> : 0U;
        outMaxV_ = at;
        at += options_.amsgrad ? chunk_ * kBytes<S> : 0U;
        outCopy_ = at;
        at += HAS_COPY ? chunk_ * kBytes<CopyT> : 0U;
        outBytes_ = at;

        const uint32_t stateSlots = 2U + (options_.ema ? 1U : 0U) + (options_.amsgrad ? 1U : 0U);
        workSlots_ = (kIsFp32<G> ? 0U : 1U) + (kIsFp32<P> ? 0U : 2U) +
                     (kIsFp32<S> ? 0U : 2U * stateSlots);
    }

    /** Points the GM tensors at elements [begin, begin + length) of entry `tensor`. */
    __aicore__ inline void BindTensor(uint32_t tensor, uint64_t begin, uint64_t length)
    {
        gradGm_.SetGlobalBuffer(grads_.template GetDataPtr<G>(tensor) + begin, length);
        varGm_.SetGlobalBuffer(vars_.template GetDataPtr<P>(tensor) + begin, length);
        mGm_.SetGlobalBuffer(ms_.template GetDataPtr<S>(tensor) + begin, length);
        vGm_.SetGlobalBuffer(vs_.template GetDataPtr<S>(tensor) + begin, length);
        varOutGm_.SetGlobalBuffer(varsOut_.template GetDataPtr<P>(tensor) + begin, length);
        mOutGm_.SetGlobalBuffer(msOut_.template GetDataPtr<S>(tensor) + begin, length);
        vOutGm_.SetGlobalBuffer(vsOut_.template GetDataPtr<S>(tensor) + begin, length);
        if (options_.ema) {
            sGm_.SetGlobalBuffer(ss_.template GetDataPtr<S>(tensor) + begin, length);
            sOutGm_.SetGlobalBuffer(ssOut_.template GetDataPtr<S>(tensor) + begin, length);
        }
        if (options_.amsgrad) {
            maxVGm_.SetGlobalBuffer(maxVs_.template GetDataPtr<S>(tensor) + begin, length);
            maxVOutGm_.SetGlobalBuffer(maxVsOut_.template GetDataPtr<S>(tensor) + begin, length);
        }
        if constexpr (HAS_COPY) {
            copyOutGm_.SetGlobalBuffer(copiesOut_.template GetDataPtr<CopyT>(tensor) + begin,
                                       length);
        }
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t count)
    {
        LocalTensor<uint8_t> in = inQueue_.template AllocTensor<uint8_t>();
        LoadSlot(in, inGrad_, gradGm_, offset, count);
        LoadSlot(in, inVar_, varGm_, offset, count);
        LoadSlot(in, inM_, mGm_, offset, count);
        LoadSlot(in, inV_, vGm_, offset, count);
        if (options_.ema) {
            LoadSlot(in, inS_, sGm_, offset, count);
        }
        if (options_.amsgrad) {
            LoadSlot(in, inMaxV_, maxVGm_, offset, count);
        }
        inQueue_.EnQue(in);
    }

    /** An input slot as fp32: the slot itself, or its exact widening into the next work slot. */
    template <typename T>
    __aicore__ inline LocalTensor<float> Widen(const LocalTensor<uint8_t>& in, uint32_t byteOffset,
                                               uint32_t* workSlot, uint32_t count)
    {
        if constexpr (kIsFp32<T>) {
            return Slot<float>(in, byteOffset);
        } else {
            LocalTensor<float> wide = work_[(*workSlot)++ * chunk_];
            Cast(wide, Slot<T>(in, byteOffset), RoundMode::CAST_NONE, count);
            return wide;
        }
    }

    /** Where the fp32 result of an output slot is computed: the slot itself, or a work slot that
     *  Narrow rounds into it afterwards. */
    template <typename T>
    __aicore__ inline LocalTensor<float> Result(const LocalTensor<uint8_t>& out,
                                                uint32_t byteOffset, uint32_t* workSlot)
    {
        if constexpr (kIsFp32<T>) {
            return Slot<float>(out, byteOffset);
        } else {
            return work_[(*workSlot)++ * chunk_];
        }
    }

    template <typename T>
    __aicore__ inline void Narrow(const LocalTensor<uint8_t>& out, uint32_t byteOffset,
                                  const LocalTensor<float>& result, uint32_t count)
    {
        if constexpr (!kIsFp32<T>) {
            Cast(Slot<T>(out, byteOffset), result, RoundMode::CAST_RINT, count);
        }
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        LocalTensor<uint8_t> in = inQueue_.template DeQue<uint8_t>();
        LocalTensor<uint8_t> out = outQueue_.template AllocTensor<uint8_t>();
        uint32_t workSlot = 0;
        UpdateTensors t;
        t.grad = Widen<G>(in, inGrad_, &workSlot, count);
        t.var = Widen<P>(in, inVar_, &workSlot, count);
        t.m = Widen<S>(in, inM_, &workSlot, count);
        t.v = Widen<S>(in, inV_, &workSlot, count);
        if (options_.ema) {
            t.s = Widen<S>(in, inS_, &workSlot, count);
        }
        if (options_.amsgrad) {
            t.maxV = Widen<S>(in, inMaxV_, &workSlot, count);
        }
        t.varOut = Result<P>(out, outVar_, &workSlot);
        t.mOut = Result<S>(out, outM_, &workSlot);
        t.vOut = Result<S>(out, outV_, &workSlot);
        if (options_.ema) {
            t.sOut = Result<S>(out, outS_, &workSlot);
        }
        if (options_.amsgrad) {
            t.maxVOut = Result<S>(out, outMaxV_, &workSlot);
        }
        t.gradScale = scale_;

        UpdateFp32(t, k_, options_, static_cast<int32_t>(count));

        Narrow<P>(out, outVar_, t.varOut, count);
        Narrow<S>(out, outM_, t.mOut, count);
        Narrow<S>(out, outV_, t.vOut, count);
        if (options_.ema) {
            Narrow<S>(out, outS_, t.sOut, count);
        }
        if (options_.amsgrad) {
            Narrow<S>(out, outMaxV_, t.maxVOut, count);
        }
        if constexpr (HAS_COPY) {
            // The copy is the fp32 master's var' rounded to nearest even (P is fp32 with copies).
            Cast(Slot<CopyT>(out, outCopy_), t.varOut, RoundMode::CAST_RINT, count);
        }
        outQueue_.EnQue(out);
        inQueue_.FreeTensor(in);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t count)
    {
        LocalTensor<uint8_t> out = outQueue_.template DeQue<uint8_t>();
        StoreSlot(varOutGm_, out, outVar_, offset, count);
        StoreSlot(mOutGm_, out, outM_, offset, count);
        StoreSlot(vOutGm_, out, outV_, offset, count);
        if (options_.ema) {
            StoreSlot(sOutGm_, out, outS_, offset, count);
        }
        if (options_.amsgrad) {
            StoreSlot(maxVOutGm_, out, outMaxV_, offset, count);
        }
        if constexpr (HAS_COPY) {
            StoreSlot(copyOutGm_, out, outCopy_, offset, count);
        }
        outQueue_.FreeTensor(out);
    }

    TQue<QuePosition::VECIN, 1> inQueue_;
    TQue<QuePosition::VECOUT, 1> outQueue_;
    TBuf<TPosition::VECCALC> workBuf_;
    TBuf<TPosition::VECCALC> scaleBuf_;
    LocalTensor<float> work_;
    LocalTensor<float> scale_;

    ListTensorDesc maxVs_;
    ListTensorDesc maxVsOut_;

    GlobalTensor<G> gradGm_;
    GlobalTensor<P> varGm_;
    GlobalTensor<S> mGm_;
    GlobalTensor<S> vGm_;
    GlobalTensor<S> sGm_;
    GlobalTensor<S> maxVGm_;
    GlobalTensor<P> varOutGm_;
    GlobalTensor<S> mOutGm_;
    GlobalTensor<S> vOutGm_;
    GlobalTensor<S> sOutGm_;
    GlobalTensor<S> maxVOutGm_;
    GlobalTensor<CopyT> copyOutGm_;

    uint32_t align_ = 0;
    uint32_t chunk_ = 0;
    uint32_t workSlots_ = 0;
    uint32_t inBytes_ = 0;
    uint32_t outBytes_ = 0;
    uint32_t inGrad_ = 0;
    uint32_t inVar_ = 0;
    uint32_t inM_ = 0;
    uint32_t inV_ = 0;
    uint32_t inS_ = 0;
    uint32_t inMaxV_ = 0;
    uint32_t outVar_ = 0;
    uint32_t outM_ = 0;
    uint32_t outV_ = 0;
    uint32_t outS_ = 0;
    uint32_t outMaxV_ = 0;
    uint32_t outCopy_ = 0;
};

template <typename P, typename S, typename G, typename C>
__aicore__ inline void RunApplyFusedEmaAdamList(const ApplyFusedEmaAdamListKernelArgs& args,
                                                const ApplyFusedEmaAdamListTilingData& tiling)
{
    AscendC::TPipe pipe;
    KernelApplyFusedEmaAdamList<P, S, G, C> op;
    if (op.Init(args, tiling, &pipe)) {
        op.Process();
    }
}

// The kernel types of the dtype contract's tokens (apply_fused_ema_adam_list_tiling_key.h).
#define AEA_LIST_KERNEL_TYPE_FP32 float
#define AEA_LIST_KERNEL_TYPE_FP16 half
#define AEA_LIST_KERNEL_TYPE_BF16 bfloat16_t
#define AEA_LIST_KERNEL_TYPE_NONE NoModelCopy

/** The (P, S, G, C) instantiation of the launch's tiling key, run on this core: one branch per row
 *  of the dtype contract. Shared by the kernel entries of ApplyFusedEmaAdamList and
 *  ApplyFusedEmaAdamListV2 (one kernel, two operator registrations: V1 passes no lr/decay
 *  tensors). */
__aicore__ inline void RunApplyFusedEmaAdamListOfKey(
    const ApplyFusedEmaAdamListKernelArgs& args, const ApplyFusedEmaAdamListTilingData& tilingData)
{
#define AEA_LIST_RUN_KEY(key, P, S, G, C)                                                   \
    if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM_LIST_KEY_##key)) {                               \
        RunApplyFusedEmaAdamList<AEA_LIST_KERNEL_TYPE_##P, AEA_LIST_KERNEL_TYPE_##S,        \
                                 AEA_LIST_KERNEL_TYPE_##G, AEA_LIST_KERNEL_TYPE_##C>(       \
            args, tilingData);                                                              \
        return;                                                                             \
    }
    APPLY_FUSED_EMA_ADAM_LIST_KEYS(AEA_LIST_RUN_KEY)
#undef AEA_LIST_RUN_KEY
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list

#endif  // APPLY_FUSED_EMA_ADAM_LIST_H
