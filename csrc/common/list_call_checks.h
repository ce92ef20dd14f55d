/**
 * @file list_call_checks.h
 * @brief What every list op's kernels (CPU and NPU) check alike on a whole call before they
 *        launch: every tensor on one device, the shared validation's view of the tensors (dtype
 *        codes, real shapes), the memory rules over the whole call, and the split into launches of
 *        at most CANN's list limit. The op describes its call (ListCallTensors); its validation
 *        itself and its messages' names stay its own.
 */
#ifndef ASCEND_EMA_ADAM_OPS_LIST_CALL_CHECKS_H
#define ASCEND_EMA_ADAM_OPS_LIST_CALL_CHECKS_H

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "acl_dtype.h"
#include "validation.h"

namespace ascend_ema_adam::ops {

/** A list op's call as the whole-call checks see it: its lists, then its single tensors, each in
 *  CANN's order, with their names and roles. */
struct ListCallTensors {
    const at::TensorList* lists = nullptr;
    int listCount = 0;
    const char* const* torchListNames = nullptr;  // the schema's: the device check's messages
    const bool* updated = nullptr;                // per list: written in place
    std::string (*entryName)(int list, size_t index) = nullptr;  // the validation's: "msRef[5]"
    const at::Tensor* const* tensors = nullptr;  // null: an absent optional one
    int tensorCount = 0;
    const char* const* torchTensorNames = nullptr;  // the schema's
    const char* const* checkTensorNames = nullptr;  // the validation's (aclnn's): "qmapM"
};

/** The dtype code the shared validation reads (aclDataType's, which are ge::DataType's). */
inline int32_t DtypeCode(at::ScalarType type)
{
    return static_cast<int32_t>(ToAclDataType(type));
}

/** Every tensor of the call on `device`, or "<op>: <name> is on ..., expected ...". */
void CheckWholeCallDevice(const char* op, const ListCallTensors& call, const at::Device& device);

/** The memory rules over the whole call (op_host/common/memory_layout.h): every updated tensor
 *  addresses distinct elements and shares no memory with any other tensor of the call; raises
 *  "<op>: msRef[300] and vsRef[12] overlap in memory; ...". One sorted sweep, O(n log n). */
void CheckWholeCallMemory(const char* op, const ListCallTensors& call);

/** What the shared validation sees of the call's lists: per list each entry's dtype code and
 *  shape (`Entry` is the op's entry type: {dtype, shape pointer}); list(l) for its Args. */
template <class Entry>
class ListEntryArgs {
public:
    explicit ListEntryArgs(const ListCallTensors& call)
        : shapes_(static_cast<size_t>(call.listCount)), entries_(shapes_.size())
    {
        for (int l = 0; l < call.listCount; ++l) {
            shapes_[l].reserve(call.lists[l].size());  // stable addresses for the entries
            for (const at::Tensor& t : call.lists[l]) {
                shapes_[l].emplace_back(t.sizes().begin(), t.sizes().end());
                entries_[l].push_back({DtypeCode(t.scalar_type()), &shapes_[l].back()});
            }
        }
    }
    ListEntryArgs(const ListEntryArgs&) = delete;
    ListEntryArgs& operator=(const ListEntryArgs&) = delete;

    const std::vector<Entry>* list(int l) const { return &entries_[l]; }

private:
    std::vector<std::vector<std::vector<int64_t>>> shapes_;
    std::vector<std::vector<Entry>> entries_;
};

/** What the shared validation sees of the call's single tensors, named as its messages name them:
 *  Given(t) is null for an absent one. */
class CallTensorArgs {
public:
    explicit CallTensorArgs(const ListCallTensors& call);
    CallTensorArgs(const CallTensorArgs&) = delete;
    CallTensorArgs& operator=(const CallTensorArgs&) = delete;

    const TensorArg* Given(int t) const { return args_[t] ? &*args_[t] : nullptr; }

private:
    std::vector<std::vector<int64_t>> shapes_;
    std::vector<std::optional<TensorArg>> args_;
};

/** The launches of a call of `entries` entries: [begin, end) of at most `most` each, in order
 *  (one empty launch for a call without entries). */
std::vector<std::pair<size_t, size_t>> SplitLaunches(size_t entries, size_t most);

}  // namespace ascend_ema_adam::ops

#endif  // ASCEND_EMA_ADAM_OPS_LIST_CALL_CHECKS_H
