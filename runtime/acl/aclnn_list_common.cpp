/**
 * @file aclnn_list_common.cpp
 * @brief Phase 1's handle checks and the executor every list operator shares (see the header).
 *
 * Host work grows with the number of tensors, so it is kept per tensor to a few loads and
 * compares: names are built only for a refusal, no allocation per contiguous tensor.
 */
#include "aclnn_list_common.h"

#include <utility>

namespace ascend_ema_adam::acl {

namespace {

aclnnStatus CheckListEntries(const char* api, const ListOpArgs& op, int list,
                             const aclTensorList* tensorList)
{
    const std::vector<const aclTensor*>& tensors = tensorList->tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i] == nullptr) {
            return Reject(api, ACLNN_ERR_PARAM_NULLPTR, op.entryName(list, i) + " is null");
        }
    }
    const size_t dead = FirstDeadTensor(tensors.data(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const aclTensor* t = tensors[i];
        if (i == dead || (t->data == nullptr && Numel(t->viewDims) > 0)) {
            return CheckLiveTensor(api, op.entryName(list, i).c_str(), t);
        }
    }
    return ACLNN_SUCCESS;
}

}  // namespace

aclnnStatus CheckListHandles(const char* api, const ListOpArgs& op,
                             const aclTensorList* const* lists, const aclTensor* const* tensors,
                             const uint64_t* workspaceSize, aclOpExecutor* const* executor)
{
    // Every list is a DYNAMIC parameter: never null (an absent optional list is an empty list).
    for (int list = 0; list < op.lists; ++list) {
        if (aclnnStatus s = CheckNotNull(api, op.listNames[list], lists[list])) return s;
    }
    for (int i = 0; i < op.requiredTensors; ++i) {
        if (aclnnStatus s = CheckNotNull(api, op.tensorNames[i], tensors[i])) return s;
    }
    if (aclnnStatus s = CheckNotNull(api, "workspaceSize", workspaceSize)) return s;
    if (aclnnStatus s = CheckNotNull(api, "executor", executor)) return s;
    for (int list = 0; list < op.lists; ++list) {
        if (!IsLiveTensorList(lists[list])) {
            return Reject(api, ACLNN_ERR_PARAM_INVALID,
                          std::string(op.listNames[list]) +
                              " is not a live aclTensorList (already destroyed, or not from "
                              "aclCreateTensorList)");
        }
    }
    for (int list = 0; list < op.lists; ++list) {
        const size_t size = lists[list]->tensors.size();
        if (size > op.maxListTensors) {
            return Reject(api, ACLNN_ERR_PARAM_INVALID,
                          std::string(op.listNames[list]) + " holds " + std::to_string(size) +
                              " tensors, more than the " + std::to_string(op.maxListTensors) +
                              " a dynamic list of a CANN operator may hold (opbase's limit): "
                              "launch in slices of at most " +
                              std::to_string(op.maxListTensors) + " entries");
        }
    }
    for (int list = 0; list < op.lists; ++list) {
        if (aclnnStatus s = CheckListEntries(api, op, list, lists[list])) return s;
    }
    for (int i = 0; i < op.tensors; ++i) {
        if (tensors[i] != nullptr) {
            if (aclnnStatus s = CheckLiveTensor(api, op.tensorNames[i], tensors[i])) return s;
        }
    }
    return ACLNN_SUCCESS;
}

ListTensorArgs::ListTensorArgs(const ListOpArgs& op, const aclTensor* const* tensors)
    : args_(static_cast<size_t>(op.tensors))
{
    for (int i = 0; i < op.tensors; ++i) {
        if (tensors[i] != nullptr) args_[i].emplace(ArgOf(op.tensorNames[i], tensors[i]));
    }
}

CallTensors ListCallTensors(const ListOpArgs& op, const aclTensorList* const* lists,
                            const aclTensor* const* tensors)
{
    CallTensors out;
    std::vector<size_t> sizes(op.lists);  // the lists' lengths: argument k's name is found from them
    for (int list = 0; list < op.lists; ++list) {
        sizes[list] = lists[list]->tensors.size();
        for (const aclTensor* t : lists[list]->tensors) {
            out.Add(t, op.updated[list]);
        }
    }
    std::vector<int> given;  // the single tensors given, in order
    for (int i = 0; i < op.tensors; ++i) {
        if (tensors[i] != nullptr) {
            out.Add(tensors[i], false);
            given.push_back(i);
        }
    }
    const ListOpArgs* described = &op;
    out.nameOf = [described, sizes = std::move(sizes), given = std::move(given)](size_t k) {
        for (int list = 0; list < described->lists; ++list) {
            if (k < sizes[list]) return described->entryName(list, k);
            k -= sizes[list];
        }
        return std::string(described->tensorNames[given[k]]);
    };
    return out;
}

void LaunchScalars::Set(const aclTensor* const* tensors)
{
    const auto first = [&](int k) {
        return tensors[k] != nullptr ? FirstElement(tensors[k]) : nullptr;
    };
    step = reinterpret_cast<const int64_t*>(first(kStep));
    gradScale = reinterpret_cast<const float*>(first(kGradScale));
    foundInf = reinterpret_cast<const float*>(first(kFoundInf));
    lr = reinterpret_cast<const float*>(first(kLr));
    emaDecay = reinterpret_cast<const float*>(first(kEmaDecay));
}

void LaunchScalars::Move(int k, char* first)
{
    if (k == kStep) {
        step = reinterpret_cast<const int64_t*>(first);
        return;
    }
    const float** slots[kCount] = {nullptr, &gradScale, &foundInf, &lr, &emaDecay};
    if (*slots[k] != nullptr) *slots[k] = reinterpret_cast<const float*>(first);
}

// ---- ListExecutor ------------------------------------------------------------------------------

ListExecutor::ListExecutor(const AclnnOp& creator, const ListOpArgs& opArgs, int slots)
    : aclOpExecutor(creator), args(&opArgs), data(static_cast<size_t>(slots)),
      listSizes(static_cast<size_t>(opArgs.lists))
{
}

aclnnStatus ListExecutor::Begin(const char* api, const aclTensorList* counted)
{
    if (aclnnStatus s = SelectCpuKernel(api, &kernel, &threads)) return s;
    const std::vector<const aclTensor*>& tensors = counted->tensors;
    numels.resize(tensors.size());
    uint64_t elements = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
        numels[i] = static_cast<uint64_t>(Numel(tensors[i]->viewDims));
        elements += numels[i];
    }
    empty = elements == 0;
    return ACLNN_SUCCESS;
}

void ListExecutor::Hold(int slot, size_t index, const aclTensor* t, bool written)
{
    if (IsContiguous(t->viewDims, t->strides)) {
        data[slot][index] = FirstElement(t);
    } else {
        staged.push_back({slot, index, MakeView(t, &staging_), written});
    }
}

void ListExecutor::HoldList(int list, const aclTensorList* tensors, bool present)
{
    const std::vector<const aclTensor*>& entries = tensors->tensors;
    listSizes[list] = entries.size();
    if (!present) return;  // empty, or placeholders: the kernel never sees it
    data[list].resize(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
        if (numels[i] == 0) {
            data[list][i] = FirstElement(entries[i]);  // never read
        } else {
            Hold(list, i, entries[i], args->updated[list]);
        }
    }
}

void ListExecutor::HoldTensor(int slot, const aclTensor* t)
{
    data[slot].resize(1);
    Hold(slot, 0, t, false);
}

aclnnStatus ListExecutor::Register(std::unique_ptr<ListExecutor> e, uint64_t* workspaceSize,
                                   aclOpExecutor** executor)
{
    const ListOpArgs& op = *e->args;
    e->outputInstances.clear();
    for (int o = 0; o < op.outputs; ++o) {
        e->outputInstances.push_back(e->listSizes[op.outputOrder[o]]);
    }
    e->inputInstances.assign(e->listSizes.begin(), e->listSizes.end());
    e->inputInstances.insert(e->inputInstances.end(), static_cast<size_t>(e->singleInputs), 1);
    e->workspaceSize = e->staging_;
    *workspaceSize = e->staging_;
    *executor = RegisterExecutor(std::move(e));
    return ACLNN_SUCCESS;
}

void ListExecutor::Execute(char* workspace) const
{
    if (scalars.Skipped()) return;
    if (staged.empty()) {
        Launch(data.data());
        return;
    }
    std::vector<std::vector<void*>> entries = data;
    for (const StagedView& s : staged) {
        entries[s.slot][s.index] = StageIn(s.view, workspace);
    }
    Launch(entries.data());
    for (const StagedView& s : staged) {
        if (s.written) StageOut(s.view, workspace);
    }
}

void ListExecutor::MoveEntry(int slot, size_t index, char* first)
{
    for (StagedView& s : staged) {
        if (s.slot == slot && s.index == index) {
            s.view.first = first;
            return;
        }
    }
    data[slot][index] = first;
}

bool ListExecutor::SetAddress(bool input, size_t irIndex, size_t relativeIndex,
                              const aclTensor* tensor)
{
    char* first = FirstElement(tensor);
    if (first == nullptr && Numel(tensor->viewDims) > 0) return false;
    if (!input || irIndex < static_cast<size_t>(args->lists)) {
        const int list = input ? static_cast<int>(irIndex) : args->outputOrder[irIndex];
        if (relativeIndex >= numels.size()) return false;
        // no memory is ever read: an empty entry, or a list absent (empty, or placeholders)
        if (numels[relativeIndex] == 0 || data[list].empty()) return true;
        MoveEntry(list, relativeIndex, first);
        return true;
    }
    // single-tensor input k, at its slot whether or not it was given
    const size_t tensorIndex = irIndex - static_cast<size_t>(args->lists);
    if (tensorIndex >= static_cast<size_t>(singleInputs)) return false;
    return SetTensorAddress(static_cast<int>(tensorIndex), first);
}

}  // namespace ascend_ema_adam::acl
