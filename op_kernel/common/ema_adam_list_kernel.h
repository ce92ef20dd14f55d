/**
 * @file ema_adam_list_kernel.h
 * @brief What the list kernels (ApplyFusedEmaAdamList, ApplyFusedEmaAdam8bitList) share: type
 *        helpers for their instantiations, the reader of the one-element GM scalars their launch
 *        prologue reads, an entry's element count from its list descriptor, and the copies
 *        between a queue buffer's slots and GM. Written only against the AscendC API.
 */
#ifndef EMA_ADAM_LIST_KERNEL_H
#define EMA_ADAM_LIST_KERNEL_H

#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"  // ListTensorDesc: kernel_operator.h does not reach it

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
