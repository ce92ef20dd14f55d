/**
 * @file acl_view.h
 * @brief What the CPU device does with the memory an aclTensor describes, for every operator:
 *        its layout and byte span (the rules on them, contiguity, distinct elements and overlap,
 *        are op_host/common/memory_layout.h's), and the staging of strided views through the workspace
 *        (phase 1 lays the copies out, phase 2 gathers, runs, scatters).
 */
#ifndef ASCEND_EMA_ADAM_ACL_VIEW_H
#define ASCEND_EMA_ADAM_ACL_VIEW_H

#include <cstdint>
#include <vector>

#include "acl_internal.h"
#include "memory_layout.h"

namespace ascend_ema_adam::acl {

/** Bytes per element of a dtype the operators accept (throws std::logic_error for another). */
uint32_t ElemBytes(aclDataType dtype);
/** Address of the view's element 0 (null for the null address an empty tensor may have). */
char* FirstElement(const aclTensor* t);

/** The sizes and strides of t's view (op_host/common/memory_layout.h), borrowed from t. */
inline ViewLayout LayoutOf(const aclTensor* t)
{
    return {t->viewDims.data(), t->strides.data(), t->viewDims.size()};
}
/** Row-major contiguous, ignoring the strides of size-1 dims (they address nothing). */
inline bool IsContiguous(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides)
{
    return ascend_ema_adam::IsContiguous(ViewLayout{sizes.data(), strides.data(), sizes.size()});
}
/** The bytes of t's view, owned by `owner` (memory_layout.h's FindUpdatedOverlap sweeps them). */
MemorySpan SpanOf(const aclTensor* t, uint64_t owner, bool updated);

/** A checked view, copied into an executor: the aclTensor may be destroyed after phase 1. */
struct View {
    char* first = nullptr;  // element 0 of the view
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    uint32_t elemBytes = 0;
    bool contiguous = true;      // an empty view counts as contiguous
    uint64_t stagingOffset = 0;  // workspace bytes where a strided view is staged
};

/**
 * Phase 1: the view of t. A strided view gets a staging copy in the workspace at *workspaceBytes
 * (each copy 64-byte aligned), which advances past it.
 */
View MakeView(const aclTensor* t, uint64_t* workspaceBytes);
/** Phase 2, before the kernel: the contiguous memory the kernel uses for `view`, which is the view
 *  itself or its staging copy in `workspace`, gathered now. */
char* StageIn(const View& view, char* workspace);
/** Phase 2, after the kernel: scatters an updated staging copy back into its view (elements
 *  outside the view, gaps included, are never written). Nothing for a contiguous view. */
void StageOut(const View& view, char* workspace);

}  // namespace ascend_ema_adam::acl

#endif  // ASCEND_EMA_ADAM_ACL_VIEW_H
