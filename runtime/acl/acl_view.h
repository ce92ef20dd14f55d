/**
 * @file acl_view.h
 * @brief What the CPU device does with the memory an aclTensor describes, for every operator:
 *        contiguity, distinct elements, overlap, and the staging of strided views through the
 *        workspace (phase 1 lays the copies out, phase 2 gathers, runs, scatters).
 */
#ifndef ASCEND_EMA_ADAM_ACL_VIEW_H
#define ASCEND_EMA_ADAM_ACL_VIEW_H

#include <cstdint>
#include <vector>

#include "acl_internal.h"

namespace ascend_ema_adam::acl {

/** Bytes per element of a dtype the operators accept (throws std::logic_error for another). */
uint32_t ElemBytes(aclDataType dtype);
/** Address of the view's element 0 (null for the null address an empty tensor may have). */
char* FirstElement(const aclTensor* t);

/** Row-major contiguous, ignoring the strides of size-1 dims (they address nothing). */
bool IsContiguous(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);
/**
 * True if no two elements of the view share an address: ordered by stride, every dim must step
 * past everything the smaller dims span. Conservative: a few exotic interleavings without overlap
 * are refused too.
 */
bool HasDistinctElements(const aclTensor* t);
/** The byte ranges from first to last element of two views intersect (conservative). */
bool Overlap(const aclTensor* a, const aclTensor* b);

/** The bytes from a view's first to past its last element ({0, 0} without elements), with an
 *  id its owner chooses and whether the call writes it. */
struct MemorySpan {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    uint64_t owner = 0;
    bool updated = false;
};
MemorySpan SpanOf(const aclTensor* t, uint64_t owner, bool updated);
/**
 * Overlap among many views, where only pairs with an updated view count (read-only views may
 * share memory): sorts `spans` by start and sweeps once, O(n log n). Returns false if no such
 * pair overlaps; else true with the owners of one such pair, an updated view first (the smaller
 * owner when both are). Empty spans overlap nothing. Conservative like Overlap.
 */
bool FindUpdatedOverlap(std::vector<MemorySpan>* spans, uint64_t* first, uint64_t* second);

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
