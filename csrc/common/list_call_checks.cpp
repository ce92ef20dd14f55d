/**
 * @file list_call_checks.cpp
 * @brief The whole-call checks and the launch split every list op's kernels share (see the
 *        header).
 */
#include "list_call_checks.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include "memory_layout.h"

namespace ascend_ema_adam::ops {

namespace {

ViewLayout LayoutOf(const at::Tensor& t)
{
    return {t.sizes().data(), t.strides().data(), static_cast<size_t>(t.dim())};
}

/** Owner ids of the memory sweep: a list entry, or a single tensor after the lists. */
uint64_t OwnerOf(int arg, size_t index)
{
    return (static_cast<uint64_t>(arg) << 32) | index;
}

}  // namespace

void CheckWholeCallDevice(const char* op, const ListCallTensors& call, const at::Device& device)
{
    for (int l = 0; l < call.listCount; ++l) {
        for (size_t i = 0; i < call.lists[l].size(); ++i) {
            TORCH_CHECK(call.lists[l][i].device() == device, op, ": ", call.torchListNames[l], "[",
                        i, "] is on ", call.lists[l][i].device(), ", expected ", device,
                        ": all tensors must be on one device");
        }
    }
    for (int t = 0; t < call.tensorCount; ++t) {
        const at::Tensor* tensor = call.tensors[t];
        TORCH_CHECK(tensor == nullptr || tensor->device() == device, op, ": ",
                    call.torchTensorNames[t], " is on ", tensor->device(), ", expected ", device,
                    ": all tensors must be on one device");
    }
}

void CheckWholeCallMemory(const char* op, const ListCallTensors& call)
{
    std::vector<MemorySpan> spans;
    for (int l = 0; l < call.listCount; ++l) {
        const at::TensorList list = call.lists[l];
        for (size_t i = 0; i < list.size(); ++i) {
            const at::Tensor& t = list[i];
            if (call.updated[l] && !HasDistinctElements(LayoutOf(t))) {
                TORCH_CHECK(false, op, ": ",
                            RepeatedElementsRefusal(call.entryName(l, i).c_str(), LayoutOf(t)));
            }
            spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(t.data_ptr()), LayoutOf(t),
                                       static_cast<uint32_t>(t.itemsize()), OwnerOf(l, i),
                                       call.updated[l]));
        }
    }
    for (int t = 0; t < call.tensorCount; ++t) {
        const at::Tensor* tensor = call.tensors[t];
        if (tensor == nullptr) continue;
        spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(tensor->data_ptr()),
                                   LayoutOf(*tensor), static_cast<uint32_t>(tensor->itemsize()),
                                   OwnerOf(call.listCount + t, 0), false));
    }
    uint64_t first = 0;
    uint64_t second = 0;
    if (!FindUpdatedOverlap(&spans, &first, &second)) {
        return;
    }
    const auto name = [&](uint64_t owner) {
        const int arg = static_cast<int>(owner >> 32);
        return arg < call.listCount ? call.entryName(arg, owner & 0xffffffffU)
                                    : std::string(call.checkTensorNames[arg - call.listCount]);
    };
    TORCH_CHECK(false, op, ": ", OverlapRefusal(name(first).c_str(), name(second).c_str()));
}

CallTensorArgs::CallTensorArgs(const ListCallTensors& call)
    : shapes_(static_cast<size_t>(call.tensorCount)), args_(shapes_.size())
{
    for (int t = 0; t < call.tensorCount; ++t) {
        const at::Tensor* tensor = call.tensors[t];
        if (tensor == nullptr) continue;
        shapes_[t].assign(tensor->sizes().begin(), tensor->sizes().end());
        args_[t].emplace(
            TensorArg{call.checkTensorNames[t], DtypeCode(tensor->scalar_type()), shapes_[t]});
    }
}

std::vector<std::pair<size_t, size_t>> SplitLaunches(size_t entries, size_t most)
{
    std::vector<std::pair<size_t, size_t>> launches;
    size_t begin = 0;
    do {
        const size_t end = std::min(entries, begin + most);
        launches.emplace_back(begin, end);
        begin = end;
    } while (begin < entries);
    return launches;
}

}  // namespace ascend_ema_adam::ops
