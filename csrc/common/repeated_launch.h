/**
 * @file repeated_launch.h
 * @brief What a repeated prepared launch compares before it runs phase 2 again, whatever the
 *        operator (RepeatedLaunchTensors): the tensors it holds, still at the address and with the
 *        description phase 1 saw, and the gradients it is handed, new tensors of the description
 *        phase 1 saw that share no memory with a tensor the launch updates. The list ops'
 *        prepared calls use it (apply_fused_ema_adam_list_repeated.h,
 *        apply_fused_ema_adam8bit_list_prepared.h).
 */
#ifndef ASCEND_EMA_ADAM_OPS_REPEATED_LAUNCH_H
#define ASCEND_EMA_ADAM_OPS_REPEATED_LAUNCH_H

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "memory_layout.h"
#include "tensor_identity.h"

namespace ascend_ema_adam::ops {

/** The gradients of a repeated launch, borrowed: the caller holds them for the call (no
 *  at::Tensor copies: copying a tensor that Python owns takes the GIL). */
using BorrowedTensors = std::vector<const at::Tensor*>;

/** lr or the EMA decay of a repeated launch: a value, or a one-element fp32 tensor. */
struct ScalarArg {
    double value = 0.0;
    std::optional<at::Tensor> tensor;
};

/** The tensors of a prepared call as phase 1 saw them, and the checks of a repeated launch. */
class RepeatedLaunchTensors {
public:
    /**
     * Remembers `count` lists (`grads`: the index of the gradients' list, which are replaced each
     * step and not held; `updated[l]`: list l is written by the launch) and the single tensors
     * `maps` (held, with their version counters: phase 1 read their values).
     */
    void Remember(const at::TensorList* lists, size_t count, size_t grads, const bool* updated,
                  std::initializer_list<const at::Tensor*> maps);

    /** Every held tensor still at the address and of the description phase 1 saw (the lists'
     *  unless `listsChecked`: the caller has just compared them), the maps unwritten since. */
    bool HeldUnchanged(bool listsChecked) const;

    /** The gradients fit the launch: as many as phase 1 saw, each of the description it saw, and
     *  one at a new address (appended to *moved, by index) shares no memory with an updated
     *  tensor. */
    bool GradsFit(const BorrowedTensors& grads, std::vector<size_t>* moved) const;

    /** The storage address for aclSetDynamicInputTensorAddr that puts phase 1's view of gradient
     *  i at t's first element; GradMoved records that it is there now. */
    void* GradStorageAddress(size_t i, const at::Tensor& t) const
    {
        return seenGrads_[i].StorageAddressOf(t);
    }
    void GradMoved(size_t i, const at::Tensor& t) { seenGrads_[i].data = t.data_ptr(); }

    /** Whether t shares no byte with a tensor the launch updates (an empty t shares none). */
    bool OverlapsNoUpdated(const at::Tensor& t) const;

private:
    std::vector<at::Tensor> held_;  // every list entry but the gradients, in list order
    std::vector<SeenTensor> seenHeld_;
    std::vector<std::pair<at::Tensor, int64_t>> maps_;  // with their versions
    std::vector<SeenTensor> seenMaps_;
    std::vector<SeenTensor> seenGrads_;
    std::vector<MemorySpan> updatedSpans_;  // sorted, disjoint (phase 1 checked)
};

/** Whether `given` is a one-element host (CPU) tensor of owned's dtype, whose value
 *  CopyOneElement can copy into `owned`. */
bool FitsOneElement(const at::Tensor& given, const at::Tensor& owned);
void CopyOneElement(const at::Tensor& given, at::Tensor& owned);

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OPS_REPEATED_LAUNCH_H
