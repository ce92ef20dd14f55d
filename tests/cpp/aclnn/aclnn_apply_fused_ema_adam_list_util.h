/**
 * @file aclnn_apply_fused_ema_adam_list_util.h
 * @brief ApplyFusedEmaAdamList calls for the C API tests: a call built from a
 *        ApplyFusedEmaAdamListCallSpec (every entry in its own aclrtMalloc storage, the lists
 *        owning their tensors), what only the aclnn layer sees applied as
 *        ApplyFusedEmaAdamListBreaks, the whole memory snapshotted, and phase 1 invoked.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_UTIL_H
#define ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_UTIL_H

#include <memory>
#include <vector>

#include "../apply_fused_ema_adam_list_bad_inputs.h"
#include "aclnn_test_util.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"

namespace aea_test {

/** The role (value range, aclnn_test_util.h's RoleValue) of each list's values. */
inline int ListRole(int list)
{
    constexpr int kRoles[kLists] = {0, 1, 2, 3, 4, 3, 1};
    return kRoles[list];
}

/** One ApplyFusedEmaAdamList call: its tensors, lists and out-arguments. */
struct ListCall {
    std::vector<std::unique_ptr<TestTensor>> entries[kLists];
    std::vector<const aclTensor*> handles[kLists];  // what each list will hold
    TestTensor scalars[kScalarCount];
    const aclTensor* scalarArgs[kScalarCount] = {};
    aclTensorList* lists[kLists] = {};
    const aclTensorList* listArgs[kLists] = {};
    bool present[kLists] = {};
    Hyper h;
    bool maximize = false;
    uint64_t workspaceSize = 0xABCD;                                       // sentinel
    aclOpExecutor* executor = reinterpret_cast<aclOpExecutor*>(0x1234);  // sentinel, never used
    uint64_t* workspaceSizeArg = &workspaceSize;
    aclOpExecutor** executorArg = &executor;
    std::vector<const aclTensor*> loose;  // handles no list owns (replaced entries, aliases)
    std::vector<void*> buffers;
    bool built = false;

    ListCall(const ListCall&) = delete;
    ListCall& operator=(const ListCall&) = delete;

    /** Tensors as `spec` describes them (layout per list: contiguous unless given). */
    explicit ListCall(const ApplyFusedEmaAdamListCallSpec& spec,
                      Layout layout = Layout::kContiguous)
        : h(spec.h), maximize(spec.maximize)
    {
        for (int l = 0; l < kLists; ++l) {
            present[l] = spec.lists[l].present;
            if (!present[l]) continue;
            for (size_t i = 0; i < spec.lists[l].shape.size(); ++i) {
                entries[l].push_back(std::make_unique<TestTensor>());
                MakeTensor(entries[l].back().get(), spec.lists[l].dtype[i], spec.lists[l].shape[i],
                           spec.lists[l].shape[i].size() == 2 ? layout : Layout::kContiguous,
                           ListRole(l));
                handles[l].push_back(entries[l].back()->handle);
            }
        }
        const float scalarValues[kScalarCount] = {0.0F, 4.0F, 0.0F};
        for (int s = 0; s < kScalarCount; ++s) {
            if (!spec.scalars[s].present) continue;
            MakeTensor(&scalars[s], spec.scalars[s].dtype, spec.scalars[s].shape,
                       Layout::kContiguous, 4);
            if (scalars[s].Numel() > 0) {
                if (spec.scalars[s].dtype == ACL_INT64 && s == kScalarStep) {
                    std::memcpy(scalars[s].data, &spec.stepValue, sizeof(spec.stepValue));
                } else if (spec.scalars[s].dtype == ACL_FLOAT) {
                    std::memcpy(scalars[s].data, &scalarValues[s], sizeof(float));
                }
            }
            scalarArgs[s] = scalars[s].handle;
        }
    }

    ~ListCall()
    {
        for (int l = 0; l < kLists; ++l) {
            if (lists[l] != nullptr) aclDestroyTensorList(lists[l]);
            if (built) {
                for (auto& t : entries[l]) t->handle = nullptr;  // the list destroyed it
            }
        }
        for (const aclTensor* t : loose) aclDestroyTensor(t);
        for (void* b : buffers) aclrtFree(b);
        RecentError();  // cleanup of deliberately broken calls may leave messages
    }

    /** Creates the lists (they take the handles); an absent list is an empty one, as the
     *  contract says (never NULL). Idempotent. */
    void Build()
    {
        if (built) return;
        for (int l = 0; l < kLists; ++l) {
            lists[l] = present[l] ? aclCreateTensorList(handles[l].data(), handles[l].size())
                                  : aclCreateTensorList(nullptr, 0);
            listArgs[l] = lists[l];
        }
        built = true;
    }

    /** Entry (l, i) now holds `t`; the handle it replaces is destroyed at the end. */
    void Replace(int l, size_t i, const aclTensor* t)
    {
        loose.push_back(handles[l][i]);
        handles[l][i] = t;
    }

    /** A description of memory, destroyed at the end if no list owns it. */
    aclTensor* Describe(aclDataType dtype, const std::vector<int64_t>& shape,
                        const std::vector<int64_t>& strides, int64_t offset, void* data,
                        int64_t storageElems, aclFormat format = ACL_FORMAT_ND)
    {
        const int64_t storage[1] = {storageElems};
        aclTensor* t = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), offset,
                                       format, storage, 1, data);
        EXPECT_MSG(t != nullptr, "description rejected: %s", RecentError().c_str());
        return t;
    }

    /** Entry (l, i) described again, with other strides / offset / format / memory. */
    aclTensor* Alias(int l, size_t i, std::vector<int64_t> strides, int64_t offset = 0,
                     aclFormat format = ACL_FORMAT_ND, void* data = nullptr, int64_t storage = -1)
    {
        const TestTensor& t = *entries[l][i];
        return Describe(t.dtype, t.shape, strides.empty() ? t.strides : strides, offset,
                        data != nullptr ? data : t.data, storage >= 0 ? storage : t.storage[0],
                        format);
    }

    void* Buffer(size_t bytes)
    {
        void* p = nullptr;
        aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
        std::memset(p, 0x3C, bytes);
        buffers.push_back(p);
        return p;
    }

    static std::vector<int64_t> Contiguous(const std::vector<int64_t>& shape, int64_t scale = 1)
    {
        std::vector<int64_t> strides(shape.size(), scale);
        for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
        return strides;
    }

    /** What only the aclnn layer sees (every kind: -Wswitch holds the switch complete). */
    void Apply(const ApplyFusedEmaAdamListBreak& b)
    {
        switch (b.kind) {
            case ApplyFusedEmaAdamListBreak::kNullList:
            case ApplyFusedEmaAdamListBreak::kDestroyedList:
            case ApplyFusedEmaAdamListBreak::kNullWorkspaceSize:
            case ApplyFusedEmaAdamListBreak::kNullExecutor:
                break;  // after Build(), in ApplyToLists
            case ApplyFusedEmaAdamListBreak::kNullScalar:
                scalarArgs[b.a] = nullptr;
                break;
            case ApplyFusedEmaAdamListBreak::kNullEntry:
                Replace(b.a, b.i, nullptr);
                break;
            case ApplyFusedEmaAdamListBreak::kDestroyedEntry: {
                aclTensor* dead = Alias(b.a, b.i, {});
                aclDestroyTensor(dead);
                Replace(b.a, b.i, dead);
                break;
            }
            case ApplyFusedEmaAdamListBreak::kNullData: {
                const TestTensor& t = *entries[b.a][b.i];
                Replace(b.a, b.i, Describe(t.dtype, t.shape, t.strides, 0, nullptr, t.Numel()));
                break;
            }
            case ApplyFusedEmaAdamListBreak::kDestroyedScalar: {
                const TestTensor& t = scalars[b.a];
                aclTensor* dead = Describe(t.dtype, t.shape, t.strides, 0, t.data, t.storage[0]);
                aclDestroyTensor(dead);
                scalarArgs[b.a] = dead;
                break;
            }
            case ApplyFusedEmaAdamListBreak::kEntryFormat:
                Replace(b.a, b.i, Alias(b.a, b.i, {}, 0, b.format));
                break;
            case ApplyFusedEmaAdamListBreak::kScalarFormat: {
                const TestTensor& t = scalars[b.a];
                scalarArgs[b.a] = Describe(t.dtype, t.shape, t.strides, 0, t.data, t.storage[0],
                                           b.format);
                loose.push_back(scalarArgs[b.a]);
                break;
            }
            case ApplyFusedEmaAdamListBreak::kBroadcast: {
                std::vector<int64_t> strides = entries[b.a][b.i]->strides;
                strides[0] = 0;
                Replace(b.a, b.i, Alias(b.a, b.i, strides));
                break;
            }
            case ApplyFusedEmaAdamListBreak::kRowsOverlap:
                Replace(b.a, b.i, Alias(b.a, b.i, {2, 1}));
                break;
            case ApplyFusedEmaAdamListBreak::kSameMemory: {
                const TestTensor& other = *entries[b.b][b.j];
                const TestTensor& t = *entries[b.a][b.i];
                Replace(b.a, b.i, Alias(b.a, b.i, Contiguous(t.shape), 0, ACL_FORMAT_ND, other.data,
                                        t.Numel()));
                break;
            }
            case ApplyFusedEmaAdamListBreak::kHalfOverlap:
            case ApplyFusedEmaAdamListBreak::kInterleaved: {
                const TestTensor& t = *entries[b.a][b.i];
                const int64_t n = t.Numel();
                const bool half = b.kind == ApplyFusedEmaAdamListBreak::kHalfOverlap;
                void* shared = Buffer(static_cast<size_t>(2 * n) * 4);
                const std::vector<int64_t> strides = Contiguous(t.shape, half ? 1 : 2);
                Replace(b.a, b.i, Alias(b.a, b.i, strides, 0, ACL_FORMAT_ND, shared, 2 * n));
                Replace(b.b, b.j, Alias(b.b, b.j, strides, half ? n / 2 : 1, ACL_FORMAT_ND, shared,
                                        2 * n));
                break;
            }
            case ApplyFusedEmaAdamListBreak::kScalarInside: {
                const TestTensor& t = scalars[b.a];
                const TestTensor& inside = *entries[b.b][b.j];
                char* second = static_cast<char*>(inside.data) + ElemBytes(inside.dtype);
                scalarArgs[b.a] = Describe(t.dtype, {1}, {1}, 0, second, 1);
                loose.push_back(scalarArgs[b.a]);
                break;
            }
        }
    }

    /** The breaks that act on the lists themselves or the out-arguments, after Build(). */
    void ApplyToLists(const ApplyFusedEmaAdamListBreak& b)
    {
        if (b.kind == ApplyFusedEmaAdamListBreak::kNullList) {
            listArgs[b.a] = nullptr;
        } else if (b.kind == ApplyFusedEmaAdamListBreak::kDestroyedList) {
            std::vector<const aclTensor*> copies;
            for (size_t i = 0; i < entries[b.a].size(); ++i) copies.push_back(Alias(b.a, i, {}));
            aclTensorList* dead = aclCreateTensorList(copies.data(), copies.size());
            aclDestroyTensorList(dead);
            listArgs[b.a] = dead;
        } else if (b.kind == ApplyFusedEmaAdamListBreak::kNullWorkspaceSize) {
            workspaceSizeArg = nullptr;
        } else if (b.kind == ApplyFusedEmaAdamListBreak::kNullExecutor) {
            executorArg = nullptr;
        }
    }

    /** Every byte of every tensor the call was built with (and of the shared buffers). */
    std::vector<std::vector<uint8_t>> Snapshot() const
    {
        std::vector<std::vector<uint8_t>> out;
        for (const auto& list : entries) {
            for (const auto& t : list) out.push_back(t->Storage());
        }
        for (const TestTensor& s : scalars) {
            if (s.data != nullptr) out.push_back(s.Storage());
        }
        return out;
    }

    aclnnStatus Phase1()
    {
        Build();
        return aclnnApplyFusedEmaAdamListGetWorkspaceSize(
            listArgs[kGrads], const_cast<aclTensorList*>(listArgs[kVars]),
            const_cast<aclTensorList*>(listArgs[kMs]), const_cast<aclTensorList*>(listArgs[kVs]),
            const_cast<aclTensorList*>(listArgs[kSs]), const_cast<aclTensorList*>(listArgs[kMaxVs]),
            const_cast<aclTensorList*>(listArgs[kCopies]), scalarArgs[kScalarStep],
            scalarArgs[kScalarGradScale], scalarArgs[kScalarFoundInf], h.lr, h.emaDecay, h.beta1,
            h.beta2, h.eps, h.mode, h.biasCorrection, h.weightDecay, maximize, workspaceSizeArg,
            executorArg);
    }
};

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_ACLNN_APPLY_FUSED_EMA_ADAM_LIST_UTIL_H
