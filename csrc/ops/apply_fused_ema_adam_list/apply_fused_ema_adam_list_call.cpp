/**
 * @file apply_fused_ema_adam_list_call.cpp
 * @brief The whole-call checks and the launch split shared by the list op's kernels (see the
 *        header).
 */
#include "apply_fused_ema_adam_list_call.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <string>

#include "acl_dtype.h"
#include "memory_layout.h"

namespace ascend_ema_adam::apply_fused_ema_adam_list {

using namespace ops;  // the torch ops' shared part (csrc/ops/common/)

namespace {

/** The dtype code the shared validation reads (aclDataType's, which are ge::DataType's). */
int32_t DtypeCode(at::ScalarType type)
{
    return static_cast<int32_t>(ToAclDataType(type));
}

ViewLayout LayoutOf(const at::Tensor& t)
{
    return {t.sizes().data(), t.strides().data(), static_cast<size_t>(t.dim())};
}

/** Owner ids of the memory sweep: a list entry, or a scalar tensor after the lists. */
uint64_t OwnerOf(int arg, size_t index)
{
    return (static_cast<uint64_t>(arg) << 32) | index;
}

}  // namespace

std::vector<at::Tensor> ListPlaceholders(const ListCall& call, int list,
                                         std::pair<size_t, size_t> launch)
{
    const size_t entries = launch.second - launch.first;
    if (!kListOptional[list] || !call.lists[list].empty() || entries == 0) return {};
    const at::Tensor& like = list == kListCopies ? call.lists[kListVars][0] : call.lists[kListMs][0];
    return std::vector<at::Tensor>(entries, at::empty({0}, like.options()));
}

void CheckListCallDevice(const char* op, const ListCall& call, const at::Device& device)
{
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        for (size_t i = 0; i < call.lists[l].size(); ++i) {
            TORCH_CHECK(call.lists[l][i].device() == device, op, ": ", kListTorchNames[l], "[", i,
                        "] is on ", call.lists[l][i].device(), ", expected ", device,
                        ": all tensors must be on one device");
        }
    }
    TORCH_CHECK(call.step->device() == device, op, ": step is on ", call.step->device(),
                ", expected ", device, ": all tensors must be on one device");
    for (int s = 0; s < kCallScalars; ++s) {
        const std::optional<at::Tensor>& t = *call.scalars[s];
        TORCH_CHECK(!t.has_value() || t->device() == device, op, ": ", kListTorchTensorNames[1 + s],
                    " is on ", t->device(), ", expected ", device,
                    ": all tensors must be on one device");
    }
}

void CheckListCallDescription(const char* op, const ListCall& call)
{
    std::vector<std::vector<int64_t>> shapes[kApplyFusedEmaAdamLists];
    std::vector<ListEntryArg> entries[kApplyFusedEmaAdamLists];
    ApplyFusedEmaAdamListArgs args;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        shapes[l].reserve(call.lists[l].size());  // stable addresses for the entries
        for (const at::Tensor& t : call.lists[l]) {
            shapes[l].emplace_back(t.sizes().begin(), t.sizes().end());
            entries[l].push_back({DtypeCode(t.scalar_type()), &shapes[l].back()});
        }
        args.lists[l] = &entries[l];
    }
    const std::vector<int64_t> stepShape(call.step->sizes().begin(), call.step->sizes().end());
    const TensorArg stepArg{kListStepName, DtypeCode(call.step->scalar_type()), stepShape};
    args.step = &stepArg;
    constexpr const char* kCheckNames[kCallScalars] = {kListGradScaleName, kListFoundInfName,
                                                       kListLrName, kListEmaDecayName};
    std::vector<int64_t> scalarShapes[kCallScalars];
    std::optional<TensorArg> scalarArgs[kCallScalars];
    for (int s = 0; s < kCallScalars; ++s) {
        if (!call.scalars[s]->has_value()) continue;
        const at::Tensor& t = **call.scalars[s];
        scalarShapes[s].assign(t.sizes().begin(), t.sizes().end());
        scalarArgs[s].emplace(TensorArg{kCheckNames[s], DtypeCode(t.scalar_type()), scalarShapes[s]});
    }
    const auto given = [&](int s) { return scalarArgs[s] ? &*scalarArgs[s] : nullptr; };
    args.gradScale = given(kCallGradScale);
    args.foundInf = given(kCallFoundInf);
    args.lr = given(kCallLr);
    args.emaDecay = given(kCallEmaDecay);
    args.emaOptional = true;  // an empty ss: no EMA on this launch
    ListDtypes dtypes;
    ListOptions options;
    const Refusal refusal =
        CheckApplyFusedEmaAdamList(args, call.attrs, &dtypes, &options);
    TORCH_CHECK(refusal.empty(), op, ": ", refusal);
}

void CheckListCallMemory(const char* op, const ListCall& call)
{
    std::vector<MemorySpan> spans;
    for (int l = 0; l < kApplyFusedEmaAdamLists; ++l) {
        const at::TensorList list = call.lists[l];
        for (size_t i = 0; i < list.size(); ++i) {
            const at::Tensor& t = list[i];
            if (kApplyFusedEmaAdamListUpdated[l] && !HasDistinctElements(LayoutOf(t))) {
                TORCH_CHECK(false, op, ": ",
                            RepeatedElementsRefusal(ListEntryName(l, i).c_str(), LayoutOf(t)));
            }
            spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(t.data_ptr()), LayoutOf(t),
                                       static_cast<uint32_t>(t.itemsize()), OwnerOf(l, i),
                                       kApplyFusedEmaAdamListUpdated[l]));
        }
    }
    const at::Tensor* scalars[1 + kCallScalars] = {call.step};
    for (int s = 0; s < kCallScalars; ++s) {
        if (call.scalars[s]->has_value()) scalars[1 + s] = &**call.scalars[s];
    }
    for (int s = 0; s < 1 + kCallScalars; ++s) {
        if (scalars[s] == nullptr) continue;
        spans.push_back(SpanOfView(reinterpret_cast<uintptr_t>(scalars[s]->data_ptr()),
                                   LayoutOf(*scalars[s]),
                                   static_cast<uint32_t>(scalars[s]->itemsize()),
                                   OwnerOf(kApplyFusedEmaAdamLists + s, 0), false));
    }
    uint64_t first = 0;
    uint64_t second = 0;
    if (!FindUpdatedOverlap(&spans, &first, &second)) {
        return;
    }
    constexpr const char* kScalarNames[1 + kCallScalars] = {
        kListStepName, kListGradScaleName, kListFoundInfName, kListLrName, kListEmaDecayName};
    const auto name = [&](uint64_t owner) {
        const int arg = static_cast<int>(owner >> 32);
        return arg < kApplyFusedEmaAdamLists
                   ? ListEntryName(arg, owner & 0xffffffffU)
                   : std::string(kScalarNames[arg - kApplyFusedEmaAdamLists]);
    };
    TORCH_CHECK(false, op, ": ", OverlapRefusal(name(first).c_str(), name(second).c_str()));
}

std::vector<std::pair<size_t, size_t>> ListLaunches(size_t entries)
{
    std::vector<std::pair<size_t, size_t>> launches;
    size_t begin = 0;
    do {
        const size_t end = std::min(entries, begin + kListMaxTensors);
        launches.emplace_back(begin, end);
        begin = end;
    } while (begin < entries);
    return launches;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
