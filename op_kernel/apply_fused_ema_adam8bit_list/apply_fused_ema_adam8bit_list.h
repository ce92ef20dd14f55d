/**
 * @file apply_fused_ema_adam8bit_list.h
 * @brief ApplyFusedEmaAdam8bitList vector kernel: a parameter group with 8-bit blockwise moments
 *        and an fp32 EMA in one launch. Written only against the AscendC API; the same source
 *        builds with CANN's compiler and with g++ against the CPU twin.
 *
 * Per AI vector core: found_inf first (nonzero or NaN: return before any other GM access), then
 * the launch scalars (LaunchPrologue, as the other kernels), the two maps (scalar reads from GM)
 * and their encode thresholds (the codebook header's, on the scalar unit) into UB tables; then the
 * core's quantization blocks, coreStart[core] to coreStart[core + 1] (tiling), tensor by tensor,
 * in chunks of at most chunkBlocks whole blocks of one tensor:
 *   CopyIn:  G, P, the two code arrays (uint8), S              GM -> VECIN buffer (DataCopyPad)
 *   Compute: widen G, P; decode: code -> half -> int32 byte offset -> Gather from the map, times
 *            the block's old scale (a scalar read of GM); UpdateFp32 (ema_adam_update.h);
 *            the partial last block of a tensor: lanes past its end zeroed (Compare with the lane
 *            index, Select); the new scales: |m'| as int32 bits, a halving tree of int32 Max per
 *            block down to 8 lanes, the last 8 on the scalar unit (NaN's bits are the largest);
 *            encode: x = m' / divisor per block (v's x of a v' > 0 below the map's positive
 *            floor taken as the floor: Compare, Select, twice), then the binary search of 8 steps
 *            (threshold Gather at index + s - 1, Compare GE, Select index + s), index -> half ->
 *            uint8
 *   CopyOut: P', the codes, the new scales, S', the copy       VECOUT buffer -> GM
 * The op order is golden8bit.emulate_entry8's, bit for bit. Single-buffered queues (the work area
 * holds most of the UB); UB per core: ApplyFusedEmaAdam8bitListUbBytes (the codebook header), below
 * 184 KiB because Compare and Select may use the library's scratch above it.
 */
#ifndef APPLY_FUSED_EMA_ADAM8BIT_LIST_H
#define APPLY_FUSED_EMA_ADAM8BIT_LIST_H

#include "kernel_operator.h"
#include "apply_fused_ema_adam8bit_list_codebook.h"
#include "apply_fused_ema_adam8bit_list_tiling_data.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "ema_adam_list_kernel.h"
#include "ema_adam_scalar.h"
#include "ema_adam_update.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace AscendC;
using namespace list_kernel;  // the list kernels' shared part (ema_adam_list_kernel.h)

/** The kernel's GM arguments (CANN's order: inputs, in-place outputs). */
struct ApplyFusedEmaAdam8bitListKernelArgs {
    GM_ADDR grads;
    GM_ADDR vars;
    GM_ADDR ms;
    GM_ADDR vs;
    GM_ADDR mAbsmaxes;
    GM_ADDR vAbsmaxes;
    GM_ADDR ss;
    GM_ADDR qmapM;
    GM_ADDR qmapV;
    GM_ADDR step;
    GM_ADDR gradScale;
    GM_ADDR foundInf;
    GM_ADDR lr;
    GM_ADDR emaDecay;
    GM_ADDR varsRef;
    GM_ADDR msRef;
    GM_ADDR vsRef;
    GM_ADDR mAbsmaxesRef;
    GM_ADDR vAbsmaxesRef;
    GM_ADDR ssRef;
    GM_ADDR modelCopiesRef;
};

/** One moment's tables and per-chunk slots. */
struct MomentSlots {
    LocalTensor<float> map;         // 256: the map (Gather source of the decode)
    LocalTensor<float> thresholds;  // 256: 255 encode thresholds (Gather source of the search)
    LocalTensor<float> decoded;     // chunk: qmap[code] * old scale
    LocalTensor<float> updated;     // chunk: m' or v'
    float positiveFloor;            // the map's (the codebook header's), raising v's quotients
};

template <typename P, typename G, typename C>
class KernelApplyFusedEmaAdam8bitList
    : ListKernelBase<ApplyFusedEmaAdam8bitListPosition> {
public:
    __aicore__ inline KernelApplyFusedEmaAdam8bitList() {}

    /** Reads the launch scalars and maps and sets up UB; false: this core writes nothing. */
    __aicore__ inline bool Init(const ApplyFusedEmaAdam8bitListKernelArgs& args,
                                const ApplyFusedEmaAdam8bitListTilingData& tiling, TPipe* pipe)
    {
        if (!InitLaunch(args, tiling)) {
            return false;
        }
        pipe_ = pipe;
        blocks_ = tiling.chunkBlocks;
        chunk_ = blocks_ * kApplyFusedEmaAdam8bitListBlock;
        InitSharedLists(args, HAS_COPY);
        mAbsmaxes_.Init(args.mAbsmaxes);
        vAbsmaxes_.Init(args.vAbsmaxes);
        mAbsmaxesOut_.Init(args.mAbsmaxesRef);
        vAbsmaxesOut_.Init(args.vAbsmaxesRef);

        InitLayout();
        pipe->InitBuffer(inQueue_, 1, inBytes_);
        pipe->InitBuffer(outQueue_, 1, outBytes_);
        pipe->InitBuffer(workBuf_, workBytes_);
        pipe->InitBuffer(tableBuf_, 8U * kApplyFusedEmaAdam8bitListMapSize * kBytes<float>);
        LocalTensor<uint8_t> work = workBuf_.template Get<uint8_t>();
        uint32_t at = 0;
        const auto slot = [&](uint32_t bytes) {
            const uint32_t here = at;
            at += bytes;
            return work[here];
        };
        m_.decoded = slot(chunk_ * 4U).template ReinterpretCast<float>();
        v_.decoded = slot(chunk_ * 4U).template ReinterpretCast<float>();
        m_.updated = slot(chunk_ * 4U).template ReinterpretCast<float>();
        v_.updated = slot(chunk_ * 4U).template ReinterpretCast<float>();
        x_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
        index_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
        candidate_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
        threshold_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
        offsets_ = slot(chunk_ * 4U).template ReinterpretCast<int32_t>();
        if constexpr (!kIsFp32<G>) {
            gradWide_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
        }
        if constexpr (!kIsFp32<P>) {
            varWide_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
            varOutWide_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
        }
        if (options_.gradScale) {
            scale_ = slot(chunk_ * 4U).template ReinterpretCast<float>();
            Duplicate(scale_, gradDivisor_, static_cast<int32_t>(chunk_));
        }
        halves_ = slot(chunk_ * 2U).template ReinterpretCast<half>();
        mask_ = slot(chunk_ / 8U);

        LocalTensor<float> tables = tableBuf_.template Get<float>();
        m_.map = tables[0 * kApplyFusedEmaAdam8bitListMapSize];
        v_.map = tables[1 * kApplyFusedEmaAdam8bitListMapSize];
        m_.thresholds = tables[2 * kApplyFusedEmaAdam8bitListMapSize];
        v_.thresholds = tables[3 * kApplyFusedEmaAdam8bitListMapSize];
        lanes_ = tables[4 * kApplyFusedEmaAdam8bitListMapSize];
        divisor_ = tables[5 * kApplyFusedEmaAdam8bitListMapSize];
        zeros_ = tables[6 * kApplyFusedEmaAdam8bitListMapSize];
        LoadTable(m_, args.qmapM);
        LoadTable(v_, args.qmapV);
        for (uint32_t i = 0; i < kApplyFusedEmaAdam8bitListBlock; ++i) {
            lanes_.SetValue(i, static_cast<float>(i));
        }
        SyncScalarToVector();
        Duplicate(zeros_, 0.0f, static_cast<int32_t>(kApplyFusedEmaAdam8bitListBlock));
        return true;
    }

    /** Walks the core's blocks tensor by tensor, chunk by chunk. */
    __aicore__ inline void Process()
    {
        const uint32_t stop = end_.block > 0 ? end_.tensor + 1 : end_.tensor;
        for (uint32_t tensor = start_.tensor; tensor < stop; ++tensor) {
            const uint64_t numel = EntryNumel<P>(vars_, tensor);
            const uint64_t have = ApplyFusedEmaAdam8bitListBlocks(numel);
            const uint64_t first = tensor == start_.tensor ? start_.block : 0;
            const uint64_t last = tensor == end_.tensor && end_.block < have ? end_.block : have;
            if (first >= last) {
                continue;
            }
            BindTensor(tensor);
            for (uint64_t block = first; block < last; block += blocks_) {
                const uint64_t left = last - block;
                const uint32_t blocks = left < blocks_ ? static_cast<uint32_t>(left) : blocks_;
                const uint64_t begin = block * kApplyFusedEmaAdam8bitListBlock;
                const uint64_t end = begin + uint64_t{blocks} * kApplyFusedEmaAdam8bitListBlock;
                const uint32_t count = static_cast<uint32_t>((end < numel ? end : numel) - begin);
                CopyIn(begin, count);
                Compute(block, blocks, count);
                CopyOut(begin, block, blocks, count);
            }
        }
    }

private:
    static constexpr bool HAS_COPY = !SameType<C, NoModelCopy>::value;
    using CopyT = typename Conditional<HAS_COPY, C, half>::type;

    __aicore__ inline void InitLayout()
    {
        const uint32_t emaBytes = options_.ema ? 4U : 0U;
        uint32_t at = 0;
        inGrad_ = at;
        at += chunk_ * kBytes<G>;
        inVar_ = at;
        at += chunk_ * kBytes<P>;
        inM_ = at;
        at += chunk_;
        inV_ = at;
        at += chunk_;
        inS_ = at;
        at += chunk_ * emaBytes;
        inBytes_ = at;
        at = 0;
        outVar_ = at;
        at += chunk_ * kBytes<P>;
        outM_ = at;
        at += chunk_;
        outV_ = at;
        at += chunk_;
        outS_ = at;
        at += chunk_ * emaBytes;
        outCopy_ = at;
        at += HAS_COPY ? chunk_ * kBytes<CopyT> : 0U;
        outScaleM_ = at;
        at += ApplyFusedEmaAdam8bitListScaleSlotBytes(blocks_);
        outScaleV_ = at;
        at += ApplyFusedEmaAdam8bitListScaleSlotBytes(blocks_);
        outBytes_ = at;
        workBytes_ =
            chunk_ * 4U *
                ApplyFusedEmaAdam8bitListWorkSlots(kBytes<G>, kBytes<P>, options_.gradScale) +
            chunk_ * 2U + chunk_ / 8U;
    }

    /** The map from GM (scalar reads) and its thresholds (the codebook's fp32 code), into UB. */
    __aicore__ inline void LoadTable(MomentSlots& moment, GM_ADDR map)
    {
        GlobalTensor<float> gm;
        gm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(map), kApplyFusedEmaAdam8bitListMapSize);
        float previous = gm.GetValue(0);
        moment.map.SetValue(0, previous);
        moment.positiveFloor = 0.0f;
        bool positive = previous > 0.0f;  // past the first positive entry
        for (uint32_t k = 1; k < kApplyFusedEmaAdam8bitListMapSize; ++k) {
            const float value = gm.GetValue(k);
            const float threshold = ApplyFusedEmaAdam8bitListEncodeThreshold(previous, value);
            moment.map.SetValue(k, value);
            moment.thresholds.SetValue(k - 1U, threshold);
            if (!positive && value > 0.0f) {
                positive = true;
                moment.positiveFloor =
                    ApplyFusedEmaAdam8bitListPositiveFloorAt(previous, threshold);
            }
            previous = value;
        }
        moment.thresholds.SetValue(kApplyFusedEmaAdam8bitListThresholds,
                                   previous);  // never read: index <= 254
    }

    __aicore__ inline void SyncScalarToVector()
    {
        const int32_t ev = static_cast<int32_t>(pipe_->FetchEventID(HardEvent::S_V));
        SetFlag<HardEvent::S_V>(ev);
        WaitFlag<HardEvent::S_V>(ev);
    }
    __aicore__ inline void SyncVectorToScalar()
    {
        const int32_t ev = static_cast<int32_t>(pipe_->FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(ev);
        WaitFlag<HardEvent::V_S>(ev);
    }

    __aicore__ inline void BindTensor(uint32_t tensor)
    {
        const uint64_t numel = EntryNumel<P>(vars_, tensor);
        const uint64_t blocks = ApplyFusedEmaAdam8bitListBlocks(numel);
        gradGm_.SetGlobalBuffer(grads_.template GetDataPtr<G>(tensor), numel);
        varGm_.SetGlobalBuffer(vars_.template GetDataPtr<P>(tensor), numel);
        mGm_.SetGlobalBuffer(ms_.template GetDataPtr<uint8_t>(tensor), numel);
        vGm_.SetGlobalBuffer(vs_.template GetDataPtr<uint8_t>(tensor), numel);
        mScaleGm_.SetGlobalBuffer(mAbsmaxes_.template GetDataPtr<float>(tensor), blocks);
        vScaleGm_.SetGlobalBuffer(vAbsmaxes_.template GetDataPtr<float>(tensor), blocks);
        varOutGm_.SetGlobalBuffer(varsOut_.template GetDataPtr<P>(tensor), numel);
        mOutGm_.SetGlobalBuffer(msOut_.template GetDataPtr<uint8_t>(tensor), numel);
        vOutGm_.SetGlobalBuffer(vsOut_.template GetDataPtr<uint8_t>(tensor), numel);
        mScaleOutGm_.SetGlobalBuffer(mAbsmaxesOut_.template GetDataPtr<float>(tensor), blocks);
        vScaleOutGm_.SetGlobalBuffer(vAbsmaxesOut_.template GetDataPtr<float>(tensor), blocks);
        if (options_.ema) {
            sGm_.SetGlobalBuffer(ss_.template GetDataPtr<float>(tensor), numel);
            sOutGm_.SetGlobalBuffer(ssOut_.template GetDataPtr<float>(tensor), numel);
        }
        if constexpr (HAS_COPY) {
            copyOutGm_.SetGlobalBuffer(copiesOut_.template GetDataPtr<CopyT>(tensor), numel);
        }
    }

    __aicore__ inline void CopyIn(uint64_t begin, uint32_t count)
    {
        LocalTensor<uint8_t> in = inQueue_.template AllocTensor<uint8_t>();
        LoadSlot(in, inGrad_, gradGm_, begin, count);
        LoadSlot(in, inVar_, varGm_, begin, count);
        LoadSlot(in, inM_, mGm_, begin, count);
        LoadSlot(in, inV_, vGm_, begin, count);
        if (options_.ema) {
            LoadSlot(in, inS_, sGm_, begin, count);
        }
        inQueue_.EnQue(in);
    }

    /** qmap[code] * the block's old scale, for `blocks` blocks of codes. */
    __aicore__ inline void Decode(const MomentSlots& moment, const LocalTensor<uint8_t>& codes,
                                  const GlobalTensor<float>& scales, uint64_t block, uint32_t blocks)
    {
        const int32_t n = static_cast<int32_t>(blocks * kApplyFusedEmaAdam8bitListBlock);
        Cast(halves_, codes, RoundMode::CAST_NONE, n);                    // exact: codes < 2^11
        Cast(offsets_, halves_, RoundMode::CAST_RINT, n);
        Muls(offsets_, offsets_, 4, n);                                    // byte offsets
        Gather(moment.decoded, moment.map, offsets_.template ReinterpretCast<uint32_t>(), 0U,
               static_cast<uint32_t>(n));
        for (uint32_t b = 0; b < blocks; ++b) {
            const LocalTensor<float> lane = moment.decoded[b * kApplyFusedEmaAdam8bitListBlock];
            Muls(lane, lane, scales.GetValue(block + b),
                 static_cast<int32_t>(kApplyFusedEmaAdam8bitListBlock));
        }
    }

    /** Lanes [valid, 256) of a block set to 0 (they follow a tensor's end: their inputs are not
     *  the tensor's, and the new scale must not see them). */
    __aicore__ inline void ZeroPast(const LocalTensor<float>& block, uint32_t valid)
    {
        Duplicate(divisor_, static_cast<float>(valid),
                  static_cast<int32_t>(kApplyFusedEmaAdam8bitListBlock));
        Compare(mask_, lanes_, divisor_, CMPMODE::LT, kApplyFusedEmaAdam8bitListBlock);
        Select(block, mask_, block, zeros_, SELMODE::VSEL_TENSOR_TENSOR_MODE,
               kApplyFusedEmaAdam8bitListBlock);
    }

    /** |x| as int32 bits, then per block a halving tree of int32 Max down to 8 lanes. */
    __aicore__ inline void BlockMaxima(const LocalTensor<float>& updated, uint32_t blocks)
    {
        const int32_t n = static_cast<int32_t>(blocks * kApplyFusedEmaAdam8bitListBlock);
        Abs(x_, updated, n);
        const LocalTensor<int32_t> bits = x_.template ReinterpretCast<int32_t>();
        for (uint32_t b = 0; b < blocks; ++b) {
            const LocalTensor<int32_t> lane = bits[b * kApplyFusedEmaAdam8bitListBlock];
            for (uint32_t width = kApplyFusedEmaAdam8bitListBlock / 2U; width >= 8U; width /= 2U) {
                Max(lane, lane, lane[width], static_cast<int32_t>(width));
            }
        }
    }

    /** The 8 lanes left of block b's tree, on the scalar unit: its new scale's bits. */
    __aicore__ inline float BlockMax(uint32_t b) const
    {
        const LocalTensor<int32_t> bits = x_.template ReinterpretCast<int32_t>();
        int32_t top = 0;
        for (uint32_t i = 0; i < 8U; ++i) {
            const int32_t value = bits.GetValue(b * kApplyFusedEmaAdam8bitListBlock + i);
            top = value > top ? value : top;  // magnitudes' bits: NaN > inf > finite, all >= 0
        }
        union {
            int32_t i;
            float f;
        } u;
        u.i = top;
        return u.f;
    }

    /** The codes of x (count = blocks * 256): the number of thresholds <= x, then uint8. */
    __aicore__ inline void Encode(const MomentSlots& moment, const LocalTensor<uint8_t>& codes,
                                  uint32_t elems)
    {
        const int32_t n = static_cast<int32_t>(elems);
        Duplicate(index_, 0.0f, n);
        for (uint32_t s = 128U; s > 0U; s /= 2U) {
            Adds(candidate_, index_, static_cast<float>(s - 1U), n);     // T[index + s - 1]
            Cast(offsets_, candidate_, RoundMode::CAST_RINT, n);         // exact: < 255
            Muls(offsets_, offsets_, 4, n);
            Gather(threshold_, moment.thresholds, offsets_.template ReinterpretCast<uint32_t>(), 0U,
                   elems);
            Compare(mask_, x_, threshold_, CMPMODE::GE, elems);          // NaN: false
            Adds(candidate_, index_, static_cast<float>(s), n);
            Select(index_, mask_, candidate_, index_, SELMODE::VSEL_TENSOR_TENSOR_MODE, elems);
        }
        Cast(halves_, index_, RoundMode::CAST_RINT, n);                  // exact: <= 255
        Cast(codes, halves_, RoundMode::CAST_RINT, n);
    }

    template <typename T>
    __aicore__ inline LocalTensor<float> Widen(const LocalTensor<uint8_t>& in, uint32_t byteOffset,
                                               const LocalTensor<float>& wide, uint32_t elems)
    {
        if constexpr (kIsFp32<T>) {
            return Slot<float>(in, byteOffset);
        } else {
            Cast(wide, Slot<T>(in, byteOffset), RoundMode::CAST_NONE, elems);
            return wide;
        }
    }

    __aicore__ inline void Compute(uint64_t block, uint32_t blocks, uint32_t count)
    {
        LocalTensor<uint8_t> in = inQueue_.template DeQue<uint8_t>();
        LocalTensor<uint8_t> out = outQueue_.template AllocTensor<uint8_t>();
        const uint32_t elems = blocks * kApplyFusedEmaAdam8bitListBlock;
        Decode(m_, Slot<uint8_t>(in, inM_), mScaleGm_, block, blocks);
        Decode(v_, Slot<uint8_t>(in, inV_), vScaleGm_, block, blocks);
        UpdateTensors t;
        t.grad = Widen<G>(in, inGrad_, gradWide_, elems);
        t.var = Widen<P>(in, inVar_, varWide_, elems);
        t.m = m_.decoded;
        t.v = v_.decoded;
        if (options_.ema) {
            t.s = Slot<float>(in, inS_);
            t.sOut = Slot<float>(out, outS_);
        }
        if constexpr (kIsFp32<P>) {
            t.varOut = Slot<float>(out, outVar_);
        } else {
            t.varOut = varOutWide_;
        }
        t.mOut = m_.updated;
        t.vOut = v_.updated;
        t.gradScale = scale_;
        UpdateFp32(t, k_, options_, static_cast<int32_t>(elems));
        if constexpr (!kIsFp32<P>) {
            Cast(Slot<P>(out, outVar_), t.varOut, RoundMode::CAST_RINT, elems);
        }
        if constexpr (HAS_COPY) {
            Cast(Slot<CopyT>(out, outCopy_), t.varOut, RoundMode::CAST_RINT, elems);
        }
        const uint32_t valid =
            count - (blocks - 1U) * kApplyFusedEmaAdam8bitListBlock;  // of the last block
        if (valid < kApplyFusedEmaAdam8bitListBlock) {
            ZeroPast(m_.updated[(blocks - 1U) * kApplyFusedEmaAdam8bitListBlock], valid);
            ZeroPast(v_.updated[(blocks - 1U) * kApplyFusedEmaAdam8bitListBlock], valid);
        }
        const LocalTensor<float> mScales = Slot<float>(out, outScaleM_);
        const LocalTensor<float> vScales = Slot<float>(out, outScaleV_);
        NewScalesAndEncode(m_, mScales, Slot<uint8_t>(out, outM_), blocks, false);
        NewScalesAndEncode(v_, vScales, Slot<uint8_t>(out, outV_), blocks, true);
        outQueue_.EnQue(out);
        inQueue_.FreeTensor(in);
    }

    /** The blocks' new scales (into the output slot), then x = m' / divisor and the codes. */
    __aicore__ inline void NewScalesAndEncode(const MomentSlots& moment,
                                              const LocalTensor<float>& scales,
                                              const LocalTensor<uint8_t>& codes, uint32_t blocks,
                                              bool raisePositive)
    {
        BlockMaxima(moment.updated, blocks);
        SyncVectorToScalar();
        float divisors[kApplyFusedEmaAdam8bitListMaxChunkBlocks];
        for (uint32_t b = 0; b < blocks; ++b) {
            const float absmax = BlockMax(b);
            scales.SetValue(b, absmax);
            divisors[b] = absmax > 0.0f ? absmax : 1.0f;  // all zero, or NaN: divide by 1
        }
        SyncScalarToVector();
        for (uint32_t b = 0; b < blocks; ++b) {
            Duplicate(divisor_, divisors[b], static_cast<int32_t>(kApplyFusedEmaAdam8bitListBlock));
            Div(x_[b * kApplyFusedEmaAdam8bitListBlock],
                moment.updated[b * kApplyFusedEmaAdam8bitListBlock], divisor_,
                static_cast<int32_t>(kApplyFusedEmaAdam8bitListBlock));
        }
        if (raisePositive && moment.positiveFloor > 0.0f) {
            RaisePositive(moment, blocks);
        }
        Encode(moment, codes, blocks * kApplyFusedEmaAdam8bitListBlock);
    }

    /** v's quotients x below the map's positive floor F taken as F where v' > 0 (the codebook
     *  header), per block: x < F ? F : x, then v' > 0 ? that : x (a NaN x compares false). */
    __aicore__ inline void RaisePositive(const MomentSlots& moment, uint32_t blocks)
    {
        constexpr uint32_t kBlock = kApplyFusedEmaAdam8bitListBlock;
        Duplicate(divisor_, moment.positiveFloor, static_cast<int32_t>(kBlock));  // divisions done
        for (uint32_t b = 0; b < blocks; ++b) {
            const LocalTensor<float> lane = x_[b * kBlock];
            const LocalTensor<float> raised = candidate_[b * kBlock];
            Compare(mask_, lane, divisor_, CMPMODE::LT, kBlock);
            Select(raised, mask_, divisor_, lane, SELMODE::VSEL_TENSOR_TENSOR_MODE, kBlock);
            Compare(mask_, moment.updated[b * kBlock], zeros_, CMPMODE::GT, kBlock);
            Select(lane, mask_, raised, lane, SELMODE::VSEL_TENSOR_TENSOR_MODE, kBlock);
        }
    }

    __aicore__ inline void CopyOut(uint64_t begin, uint64_t block, uint32_t blocks, uint32_t count)
    {
        LocalTensor<uint8_t> out = outQueue_.template DeQue<uint8_t>();
        {   // the scales were written by the scalar unit
            const int32_t ev = static_cast<int32_t>(pipe_->FetchEventID(HardEvent::S_MTE3));
            SetFlag<HardEvent::S_MTE3>(ev);
            WaitFlag<HardEvent::S_MTE3>(ev);
        }
        StoreSlot(varOutGm_, out, outVar_, begin, count);
        StoreSlot(mOutGm_, out, outM_, begin, count);
        StoreSlot(vOutGm_, out, outV_, begin, count);
        StoreSlot(mScaleOutGm_, out, outScaleM_, block, blocks);
        StoreSlot(vScaleOutGm_, out, outScaleV_, block, blocks);
        if (options_.ema) {
            StoreSlot(sOutGm_, out, outS_, begin, count);
        }
        if constexpr (HAS_COPY) {
            StoreSlot(copyOutGm_, out, outCopy_, begin, count);
        }
        outQueue_.FreeTensor(out);
    }

    TPipe* pipe_ = nullptr;
    TQue<QuePosition::VECIN, 1> inQueue_;
    TQue<QuePosition::VECOUT, 1> outQueue_;
    TBuf<TPosition::VECCALC> workBuf_;
    TBuf<TPosition::VECCALC> tableBuf_;
    MomentSlots m_;
    MomentSlots v_;
    LocalTensor<float> x_;
    LocalTensor<float> index_;
    LocalTensor<float> candidate_;
    LocalTensor<float> threshold_;
    LocalTensor<int32_t> offsets_;
    LocalTensor<float> gradWide_;
    LocalTensor<float> varWide_;
    LocalTensor<float> varOutWide_;
    LocalTensor<float> scale_;
    LocalTensor<half> halves_;
    LocalTensor<uint8_t> mask_;
    LocalTensor<float> lanes_;
    LocalTensor<float> divisor_;
    LocalTensor<float> zeros_;

    ListTensorDesc mAbsmaxes_;
    ListTensorDesc vAbsmaxes_;
    ListTensorDesc mAbsmaxesOut_;
    ListTensorDesc vAbsmaxesOut_;

    GlobalTensor<G> gradGm_;
    GlobalTensor<P> varGm_;
    GlobalTensor<uint8_t> mGm_;
    GlobalTensor<uint8_t> vGm_;
    GlobalTensor<float> mScaleGm_;
    GlobalTensor<float> vScaleGm_;
    GlobalTensor<float> sGm_;
    GlobalTensor<P> varOutGm_;
    GlobalTensor<uint8_t> mOutGm_;
    GlobalTensor<uint8_t> vOutGm_;
    GlobalTensor<float> mScaleOutGm_;
    GlobalTensor<float> vScaleOutGm_;
    GlobalTensor<float> sOutGm_;
    GlobalTensor<CopyT> copyOutGm_;

    uint32_t blocks_ = 0;
    uint32_t chunk_ = 0;
    uint32_t inBytes_ = 0;
    uint32_t outBytes_ = 0;
    uint32_t workBytes_ = 0;
    uint32_t inGrad_ = 0;
    uint32_t inVar_ = 0;
    uint32_t inM_ = 0;
    uint32_t inV_ = 0;
    uint32_t inS_ = 0;
    uint32_t outVar_ = 0;
    uint32_t outM_ = 0;
    uint32_t outV_ = 0;
    uint32_t outS_ = 0;
    uint32_t outCopy_ = 0;
    uint32_t outScaleM_ = 0;
    uint32_t outScaleV_ = 0;
};

template <typename P, typename G, typename C>
__aicore__ inline void RunApplyFusedEmaAdam8bitList(
    const ApplyFusedEmaAdam8bitListKernelArgs& args,
    const ApplyFusedEmaAdam8bitListTilingData& tiling)
{
    AscendC::TPipe pipe;
    KernelApplyFusedEmaAdam8bitList<P, G, C> op;
    if (op.Init(args, tiling, &pipe)) {
        op.Process();
    }
}

// The kernel types of the dtype contract's tokens (apply_fused_ema_adam8bit_list_tiling_key.h).
#define AEA_ADAM8BIT_KERNEL_TYPE_FP32 float
#define AEA_ADAM8BIT_KERNEL_TYPE_FP16 half
#define AEA_ADAM8BIT_KERNEL_TYPE_BF16 bfloat16_t
#define AEA_ADAM8BIT_KERNEL_TYPE_NONE NoModelCopy

/** The (P, G, C) instantiation of the launch's tiling key, run on this core. */
__aicore__ inline void RunApplyFusedEmaAdam8bitListOfKey(
    const ApplyFusedEmaAdam8bitListKernelArgs& args,
    const ApplyFusedEmaAdam8bitListTilingData& tilingData)
{
#define AEA_ADAM8BIT_RUN_KEY(key, P, G, C)                                                     \
    if (TILING_KEY_IS(APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key)) {                              \
        RunApplyFusedEmaAdam8bitList<AEA_ADAM8BIT_KERNEL_TYPE_##P, AEA_ADAM8BIT_KERNEL_TYPE_##G, \
                                     AEA_ADAM8BIT_KERNEL_TYPE_##C>(args, tilingData);          \
        return;                                                                                \
    }
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_RUN_KEY)
#undef AEA_ADAM8BIT_RUN_KEY
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list

#endif  // APPLY_FUSED_EMA_ADAM8BIT_LIST_H
