/**
 * @file apply_fused_ema_adam8bit_list_call.cpp
 * @brief The whole-call checks and the launch split shared by the 8-bit list op's kernels (see the
 *        header).
 */
#include "apply_fused_ema_adam8bit_list_call.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <string>

#include "acl_dtype.h"
#include "memory_layout.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

namespace {

/** The names the shared validation's messages use for the single tensors (aclnn's). */
constexpr const char* kCheckTensorNames[kCallTensors] = {
    "qmapM", "qmapV", "step", "gradScaleOptional", "foundInfOptional", "lrTensorOptional",
    "emaDecayTensorOptional"};

/** The dtype code the shared validation reads (aclDataType's, which are ge::DataType's). */
int32_t DtypeCode(at::ScalarType type)
{
    return static_cast<int32_t>(ToAclDataType(type));
}

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

void CheckAdam8bitCallDevice(const Adam8bitCall& call, const at::Device& device)
{
    for (int l = 0; l < kAdam8bitLists; ++l) {
        for (size_t i = 0; i < call.lists[l].size(); ++i) {
            TORCH_CHECK(call.lists[l][i].device() == device, kAdam8bitOpName, ": ",
                        kAdam8bitTorchListNames[l], "[", i, "] is on ", call.lists[l][i].device(),
                        ", expected ", device, ": all tensors must be on one device");
        }
    }
    for (int t = 0; t < kCallTensors; ++t) {
        const at::Tensor* tensor = call.tensors[t];
        TORCH_CHECK(tensor == nullptr || tensor->device() == device, kAdam8bitOpName, ": ",
                    kAdam8bitTorchTensorNames[t], " is on ", tensor->device(), ", expected ",
                    device, ": all tensors must be on one device");
    }
}

void CheckAdam8bitCallDescription(const Adam8bitCall& call, Adam8bitOptions* options)
{
    std::vector<std::vector<int64_t>> shapes[kAdam8bitLists];
    std::vector<Adam8bitEntryArg> entries[kAdam8bitLists];
    Adam8bitListArgs args;
    for (int l = 0; l < kAdam8bitLists; ++l) {
        shapes[l].reserve(call.lists[l].size());  // stable addresses for the entries
        for (const at::Tensor& t : call.lists[l]) {
            shapes[l].emplace_back(t.sizes().begin(), t.sizes().end());
            entries[l].push_back({DtypeCode(t.scalar_type()), &shapes[l].back()});
        }
        args.lists[l] = &entries[l];
    }
    std::vector<int64_t> tensorShapes[kCallTensors];
    std::optional<TensorArg> tensorArgs[kCallTensors];
    for (int t = 0; t < kCallTensors; ++t) {
        const at::Tensor* tensor = call.tensors[t];
        if (tensor == nullptr) continue;
        tensorShapes[t].assign(tensor->sizes().begin(), tensor->sizes().end());
        tensorArgs[t].emplace(
            TensorArg{kCheckTensorNames[t], DtypeCode(tensor->scalar_type()), tensorShapes[t]});
    }
    const auto given = [&](int t) { return tensorArgs[t] ? &*tensorArgs[t] : nullptr; };
    args.qmapM = given(kCallQmapM);
    args.qmapV = given(kCallQmapV);
    args.step = given(kCallStep);
    args.gradScale = given(kCallGradScale);
    args.foundInf = given(kCallFoundInf);
    args.lr = given(kCallLr);
    args.emaDecay = given(kCallEmaDecay);
    args.wholeCall = true;  // launched in slices of at most 256 entries (Adam8bitLaunches)
    Adam8bitDtypes dtypes{DataType::kFloat32, DataType::kFloat32};
    Adam8bitOptions found;
    const Refusal refusal =
        CheckApplyFusedEmaAdam8bitList(args, call.attrs, call.attrs.maximize, &dtypes, &found);
    TORCH_CHECK(refusal.empty(), kAdam8bitOpName, ": ", refusal);
    if (options != nullptr) *options = found;
}

void CheckAdam8bitCallMemory(const Adam8bitCall& call)
{
    std::vector<MemorySpan> spans;
    for (int l = 0; l < kAdam8bitLists; ++l) {
        const at::TensorList list = call.lists[l];
        for (size_t i = 0; i < list.size(); ++i) {
            const at::Tensor& t = list[i];
            if (kAdam8bitUpdated[l] && !HasDistinctElements(LayoutOf(t))) {
                TORCH_CHECK(false, kAdam8bitOpName, ": ",
                            RepeatedElementsRefusal(Adam8bitEntryName(l, i).c_str(), LayoutOf(t)));
            }
            spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(t.data_ptr()), LayoutOf(t),
                                       static_cast<uint32_t>(t.itemsize()), OwnerOf(l, i),
                                       kAdam8bitUpdated[l]));
        }
    }
    for (int t = 0; t < kCallTensors; ++t) {
        const at::Tensor* tensor = call.tensors[t];
        if (tensor == nullptr) continue;
        spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(tensor->data_ptr()),
                                   LayoutOf(*tensor), static_cast<uint32_t>(tensor->itemsize()),
                                   OwnerOf(kAdam8bitLists + t, 0), false));
    }
    uint64_t first = 0;
    uint64_t second = 0;
    if (!FindUpdatedOverlap(&spans, &first, &second)) {
        return;
    }
    const auto name = [&](uint64_t owner) {
        const int arg = static_cast<int>(owner >> 32);
        return arg < kAdam8bitLists ? Adam8bitEntryName(arg, owner & 0xffffffffU)
                                    : std::string(kCheckTensorNames[arg - kAdam8bitLists]);
    };
    TORCH_CHECK(false, kAdam8bitOpName, ": ",
                OverlapRefusal(name(first).c_str(), name(second).c_str()));
}

std::vector<std::pair<size_t, size_t>> Adam8bitLaunches(size_t entries)
{
    std::vector<std::pair<size_t, size_t>> launches;
    size_t begin = 0;
    do {
        const size_t end = std::min(entries, begin + kAdam8bitMaxTensors);
        launches.emplace_back(begin, end);
        begin = end;
    } while (begin < entries);
    return launches;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
