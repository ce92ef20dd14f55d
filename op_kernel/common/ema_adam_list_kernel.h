/**
 * @file ema_adam_list_kernel.h
 * @brief What the list kernels (ApplyFusedEmaAdamList, ApplyFusedEmaAdam8bitList) share: type
 *        helpers for their instantiations, the reader of the one-element GM scalars their launch
 *        prologue reads, the base class with a core's launch prologue and the lists both have,
 *        an entry's element count from its list descriptor, and the copies between a queue
 *        buffer's slots and GM. Written only against the AscendC API.
 */
#ifndef EMA_ADAM_LIST_KERNEL_H
#define EMA_ADAM_LIST_KERNEL_H

#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"  // ListTensorDesc: kernel_operator.h does not reach it
#include "ema_adam_scalar.h"
#include "ema_adam_update.h"

namespace ascend_ema_adam::list_kernel {

using namespace AscendC;

/** C of the instantiations without model copies. */
struct NoModelCopy {};

template <class A, class B>
struct SameType {
    static constexpr bool value = false;
};
template <class A>
struct SameType<A, A> {
    static constexpr bool value = true;
};
template <class T>
constexpr bool kIsFp32 = SameType<T, float>::value;
/** sizeof(T) as the uint32_t byte counts the UB layouts are computed in. */
template <class T>
constexpr uint32_t kBytes = static_cast<uint32_t>(sizeof(T));
template <bool B, class T, class F>
struct Conditional {
    using type = T;
};
template <class T, class F>
struct Conditional<false, T, F> {
    using type = F;
};

/** LaunchPrologue's reader: element 0 of each one-element GM tensor of a kernel's arguments
 *  (Args: its GM addresses, with foundInf, gradScale, step, lr and emaDecay), on the scalar
 *  unit. */
template <class Args>
struct GmScalarReader {
    const Args& args;

    template <typename T>
    __aicore__ inline static T Read(GM_ADDR address)
    {
        GlobalTensor<T> value;
        value.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(address), 1);
        return value.GetValue(0);
    }
    __aicore__ inline float FoundInf() const { return Read<float>(args.foundInf); }
    __aicore__ inline float GradScale() const { return Read<float>(args.gradScale); }
    __aicore__ inline int64_t Step() const { return Read<int64_t>(args.step); }
    __aicore__ inline float Lr() const { return Read<float>(args.lr); }
    __aicore__ inline float EmaDecay() const { return Read<float>(args.emaDecay); }
};

/**
 * What both list kernels keep of a launch: the core, its share of the tiling's sequence
 * (Position: the operator's tiling position), the folded scalars, the update's options and the
 * descriptors of the lists both have; a kernel declares its other lists itself.
 */
template <class Position>
class ListKernelBase {
protected:
    /** The start of a core's Init: false when this core writes nothing (past the launch's cores,
     *  or found_inf set). The launch's one-element tensors are host- (or earlier-kernel-)
     *  written before launch, so plain scalar reads see them; found_inf first (NaN counts as
     *  nonzero). With a grad scale, maximize rides on the divisor's sign (g / -scale is exactly
     *  the golden's (-g) / scale: one vector pass less); without one the update negates. */
    template <class Args, class Tiling>
    __aicore__ inline bool InitLaunch(const Args& args, const Tiling& tiling)
    {
        core_ = static_cast<uint32_t>(GetBlockIdx());
        if (core_ >= tiling.usedCoreNum) {
            return false;
        }
        GmScalarReader<Args> read{args};
        const LaunchScalars launch = LaunchPrologue(tiling, read);
        if (launch.skip) {
            return false;
        }
        k_ = launch.k;
        gradDivisor_ = launch.gradDivisor;
        options_.maximize = tiling.maximize != 0U && tiling.hasGradScale == 0U;
        options_.gradScale = tiling.hasGradScale != 0U;
        options_.ema = tiling.hasEma != 0U;
        start_ = tiling.coreStart[core_];
        end_ = tiling.coreStart[core_ + 1];
        return true;
    }

    /** The shared lists' descriptors, inputs and in-place outputs: ss only with the EMA, the model
     *  copies only when the instantiation writes them. */
    template <class Args>
    __aicore__ inline void InitSharedLists(const Args& args, bool copies)
    {
        grads_.Init(args.grads);
        vars_.Init(args.vars);
        ms_.Init(args.ms);
        vs_.Init(args.vs);
        varsOut_.Init(args.varsRef);
        msOut_.Init(args.msRef);
        vsOut_.Init(args.vsRef);
        if (options_.ema) {
            ss_.Init(args.ss);
            ssOut_.Init(args.ssRef);
        }
        if (copies) {
            copiesOut_.Init(args.modelCopiesRef);
        }
    }

    UpdateScalars k_{};
    float gradDivisor_ = 1.0f;  // g / gradDivisor_ (LaunchScalars), with a grad scale
    UpdateOptions options_{};
    Position start_{};
    Position end_{};
    uint32_t core_ = 0;
    ListTensorDesc grads_;
    ListTensorDesc vars_;
    ListTensorDesc ms_;
    ListTensorDesc vs_;
    ListTensorDesc ss_;
    ListTensorDesc varsOut_;
    ListTensorDesc msOut_;
    ListTensorDesc vsOut_;
    ListTensorDesc ssOut_;
    ListTensorDesc copiesOut_;
};

/** The highest rank the API layers accept (the lists the launchers hand the kernels are 1-D). */
constexpr uint32_t kMaxRank = 8;

/** Elements of entry `tensor` of a list of T: the product of its descriptor's dims (GetDesc
 *  writes GetDim() <= kMaxRank words). */
template <typename T>
__aicore__ inline uint64_t EntryNumel(ListTensorDesc& list, uint32_t tensor)
{
    uint64_t shape[kMaxRank];
    TensorDesc<T> desc;
    desc.SetShapeAddr(shape);
    list.GetDesc(desc, tensor);
    uint64_t numel = 1;
    const uint64_t dim = desc.GetDim();
    for (uint32_t i = 0; i < dim; ++i) {
        numel *= desc.GetShape(i);
    }
    return numel;
}

/** The slot `byteOffset` bytes into a queue buffer, as a tensor of its own dtype. */
template <typename T>
__aicore__ inline LocalTensor<T> Slot(const LocalTensor<uint8_t>& buffer, uint32_t byteOffset)
{
    return buffer[byteOffset].template ReinterpretCast<T>();
}

/** `count` elements of gm from `offset` into a slot of an input buffer (any length: DataCopyPad). */
template <typename T>
__aicore__ inline void LoadSlot(const LocalTensor<uint8_t>& in, uint32_t byteOffset,
                                const GlobalTensor<T>& gm, uint64_t offset, uint32_t count)
{
    const DataCopyExtParams copy{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
    const DataCopyPadExtParams<T> noPad{false, 0, 0, 0};
    DataCopyPad(Slot<T>(in, byteOffset), gm[offset], copy, noPad);
}

/** `count` elements of a slot of an output buffer into gm from `offset`. */
template <typename T>
__aicore__ inline void StoreSlot(const GlobalTensor<T>& gm, const LocalTensor<uint8_t>& out,
                                 uint32_t byteOffset, uint64_t offset, uint32_t count)
{
    const DataCopyExtParams copy{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
    DataCopyPad(gm[offset], Slot<T>(out, byteOffset), copy);
}

}  // namespace ascend_ema_adam::list_kernel

#endif  // EMA_ADAM_LIST_KERNEL_H
