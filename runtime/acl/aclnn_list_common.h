/**
 * @file aclnn_list_common.h
 * @brief What every list operator's aclnn API on the CPU device shares (a parameter group per
 *        launch: tensor lists, then single tensors, in CANN's order): phase 1's handle checks
 *        and the call's tensors for the format and memory checks, and the executor's memory
 *        (contiguous entries by address, strided views staged through the workspace), its
 *        instances as opbase numbers them and its address updates. The operator describes its
 *        arguments (ListOpArgs); its validation, tiling, kernel and single-tensor slots stay in
 *        its own aclnn file.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_LIST_COMMON_H
#define ASCEND_EMA_ADAM_ACLNN_LIST_COMMON_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "acl_internal.h"
#include "acl_view.h"
#include "aclnn_common.h"
#include "cpu_kernel.h"
#include "native_runtime.h"

namespace ascend_ema_adam::acl {

/** What the shared list code knows of an operator's arguments (a constant of its aclnn file). */
struct ListOpArgs {
    int lists;                     // the tensor lists, in CANN's order
    const char* const* listNames;  // "varsRef", ...
    const bool* updated;           // per list: written in place
    const int* outputOrder;        // the OpDef's outputs (the in-place lists), in its order
    int outputs;                   // how many
    size_t maxListTensors;         // most tensors one list may hold (opbase's limit)
    std::string (*entryName)(int list, size_t index);  // "msRef[5]": made only for a refusal
    int tensors;                     // the single tensors after the lists, in CANN's order
    const char* const* tensorNames;  // "step", ...
    int requiredTensors;             // the first this many of them are required
};

/**
 * Phase 1's first checks, in order: null lists, required tensors and out-arguments; live lists;
 * list sizes (at most maxListTensors); null entries; live entries; live single tensors given.
 * `lists` and `tensors` hold the call's handles in op's order (a null tensor: not given).
 */
aclnnStatus CheckListHandles(const char* api, const ListOpArgs& op,
                             const aclTensorList* const* lists, const aclTensor* const* tensors,
                             const uint64_t* workspaceSize, aclOpExecutor* const* executor);

/** What the shared validation sees of a live list: each entry's dtype and view shape. */
template <class Entry>
std::vector<Entry> EntriesOf(const aclTensorList* list)
{
    std::vector<Entry> entries;
    entries.reserve(list->tensors.size());
    for (const aclTensor* t : list->tensors) {
        entries.push_back({static_cast<int32_t>(t->dataType), &t->viewDims});
    }
    return entries;
}

/** What the shared validation sees of a call's single tensors: `Given(i)` is null for one not
 *  given. */
class ListTensorArgs {
public:
    ListTensorArgs(const ListOpArgs& op, const aclTensor* const* tensors);
    const TensorArg* Given(int i) const { return args_[i] ? &*args_[i] : nullptr; }

private:
    std::vector<std::optional<TensorArg>> args_;
};

/** Every list entry, then the single tensors given, for the shared format and memory checks
 *  (only the lists op.updated marks are written; the single tensors are read-only). */
CallTensors ListCallTensors(const ListOpArgs& op, const aclTensorList* const* lists,
                            const aclTensor* const* tensors);

/**
 * The one-element tensors an EMA-Adam list launch reads when it runs (the kernels'
 * LaunchPrologue): the step, and the grad scale, found-inf flag, lr and EMA decay when given
 * (null: absent). Each list operator has them in this order among its single tensors.
 */
struct LaunchScalars {
    // their order
    static constexpr int kStep = 0, kGradScale = 1, kFoundInf = 2, kLr = 3, kEmaDecay = 4,
                         kCount = 5;

    const int64_t* step = nullptr;
    const float* gradScale = nullptr;
    const float* foundInf = nullptr;
    const float* lr = nullptr;
    const float* emaDecay = nullptr;

    /** From the call's handles: `tensors` holds kCount of them in that order (null: absent). */
    void Set(const aclTensor* const* tensors);
    /** found_inf set (NaN counts as set): the launch writes nothing at all. */
    bool Skipped() const { return foundInf != nullptr && !(*foundInf == 0.0F); }
    /** Scalar `k` (kStep ...) of a repeatable executor now at `first`; one not given at phase 1 keeps
     *  its slot, and nothing reads it. */
    void Move(int k, char* first);
    /** Into a kernel's buffers (the five fields of the same names). */
    template <class Buffers>
    void Into(Buffers* b) const
    {
        b->step = step;
        b->gradScale = gradScale;
        b->foundInf = foundInf;
        b->lr = lr;
        b->emaDecay = emaDecay;
    }
    /** What the shared validation sees of them (the five TensorArg fields of an operator's
     *  Args): single tensors first + kStep ... of `given`. */
    template <class Args>
    static void Describe(const ListTensorArgs& given, int first, Args* args)
    {
        args->step = given.Given(first + kStep);
        args->gradScale = given.Given(first + kGradScale);
        args->foundInf = given.Given(first + kFoundInf);
        args->lr = given.Given(first + kLr);
        args->emaDecay = given.Given(first + kEmaDecay);
    }
    /** The arguments point into `given`: a temporary would leave them dangling. */
    template <class Args>
    static void Describe(const ListTensorArgs&& given, int first, Args* args) = delete;
};

/** The tiling `tile` computes, or ACLNN_ERR_INNER_TILING_ERROR with its message. */
template <class F>
aclnnStatus TileOrReject(const char* api, F&& tile)
{
    try {
        tile();
    } catch (const std::invalid_argument& ex) {
        return Reject(api, ACLNN_ERR_INNER_TILING_ERROR, std::string("tiling failed: ") + ex.what());
    }
    return ACLNN_SUCCESS;
}

/** A strided view staged through the workspace: entry `index` of slot `slot`. */
struct StagedView {
    int slot;
    size_t index;
    View view;
    bool written;  // scattered back after the kernel
};

/**
 * What every list operator's executor holds: per slot (each list, in the operator's order, then
 * any single tensor the operator stages the same way) per entry its contiguous memory, or a view
 * staged through the workspace; each list's length as given; the launch scalars; the CPU kernel
 * chosen at phase 1. Phase 2 (Execute) runs the operator's Launch between the staging copies.
 * It numbers the instances as opbase does (the lists with their lengths as given, an empty list
 * none; then one per single-tensor input, given or NULL; outputs: the in-place lists in the
 * OpDef's order) and moves a list entry's address; the operator moves its single tensors'
 * (SetTensorAddress).
 */
struct ListExecutor : aclOpExecutor {
    ListExecutor(const AclnnOp& creator, const ListOpArgs& opArgs, int slots);

    const ListOpArgs* args;
    std::vector<uint64_t> numels;          // per entry (the gradients' element counts)
    std::vector<std::vector<void*>> data;  // per slot, per entry its contiguous memory (null:
                                           // staged); an absent optional list has none
    std::vector<StagedView> staged;
    std::vector<size_t> listSizes;          // each list's length as given (0: empty)
    LaunchScalars scalars;                  // set by the operator at phase 1
    int singleInputs = 0;                   // the single-tensor inputs opbase numbers
    CpuKernel kernel = CpuKernel::kNative;  // from the environment at phase 1
    uint32_t threads = 0;                   // the native kernel's

    // ---- phase 1, after the checks ----
    /** The kernel from the environment; numels from `counted` (the gradients); empty if none has
     *  elements. */
    aclnnStatus Begin(const char* api, const aclTensorList* counted);
    /** List `list` (slot `list`): its length; if `present`, each entry with elements by address,
     *  or staged if strided. An absent list (empty, or placeholders) is none the kernel sees. */
    void HoldList(int list, const aclTensorList* tensors, bool present);
    /** A single tensor in slot `slot` (one entry): by address, or staged if strided. */
    void HoldTensor(int slot, const aclTensor* t);
    /** The instances; the workspace phase 2 needs; registers the executor. */
    static aclnnStatus Register(std::unique_ptr<ListExecutor> e, uint64_t* workspaceSize,
                                aclOpExecutor** executor);

    // ---- phase 2 ----
    /** In stream order: with found_inf set, nothing at all (not even a staging copy written
     *  back); else stage strided views in, Launch, scatter the written ones back. */
    void Execute(char* workspace) const final;
    /** The entries of a slot for the kernel's buffers: null for an absent one. */
    static void* const* EntriesOrNull(const std::vector<void*>& entries)
    {
        return entries.empty() ? nullptr : entries.data();
    }

    // ---- address updates of a repeatable executor (acl_executor_reuse.cpp) ----
    bool SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                    const aclTensor* tensor) final;
    /** Entry `index` of slot `slot` now at `first` (its staged view's source, or its memory). */
    void MoveEntry(int slot, size_t index, char* first);

protected:
    ListExecutor(const ListExecutor&) = default;  // for Copy
    /** The operator's kernel on `entries`: per slot each entry's contiguous memory. */
    virtual void Launch(const std::vector<void*>* entries) const = 0;
    /** The CPU device's kernel, the one place it is chosen: `native(options)` (the default; it
     *  returns its launch's thread count), or the AscendC kernel, unchanged, through the twin
     *  (`twin()`, ASCEND_EMA_ADAM_CPU_KERNEL=twin). Both give the same bits. */
    template <class Twin, class Native>
    void RunCpuKernel(Twin&& twin, Native&& native) const
    {
        if (kernel == CpuKernel::kTwin) {
            twin();
            return;
        }
        NativeOptions options;
        options.threads = threads;
        NoteNativeLaunchThreads(native(options));
    }
    /** Single-tensor input `tensor` (< singleInputs) now at `first`. False if there is none. */
    virtual bool SetTensorAddress(int tensor, char* first) = 0;

private:
    void Hold(int slot, size_t index, const aclTensor* t, bool written);
    uint64_t staging_ = 0;  // workspace bytes of the staged views
};

}  // namespace ascend_ema_adam::acl

#endif  // ASCEND_EMA_ADAM_ACLNN_LIST_COMMON_H
