/**
 * @file memory_layout.h
 * @brief Every operator's rules on the memory of its tensor arguments, in pure C++ over sizes,
 *        strides and addresses, for every layer that sees the tensors themselves: the CPU aclnn
 *        layer (runtime/acl/acl_view.h, over aclTensors) and the torch ops (csrc/ops/, over
 *        at::Tensors, e.g. across the slices of a list launch). The messages are made here once.
 *
 *   - contiguity (row-major, strides of size-1 dims ignored);
 *   - distinct elements: an updated tensor must address each element once;
 *   - overlap: no updated tensor may share memory with any other tensor of the call (read-only
 *     ones may share with each other), found among many tensors by one sorted sweep.
 */
#ifndef ASCEND_EMA_ADAM_MEMORY_LAYOUT_H
#define ASCEND_EMA_ADAM_MEMORY_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "validation.h"

namespace ascend_ema_adam {

/** A view's sizes and strides (in elements, non-negative), borrowed from its owner. */
struct ViewLayout {
    const int64_t* sizes;
    const int64_t* strides;
    size_t rank;
};

/** Row-major contiguous, ignoring the strides of size-1 dims (they address nothing). */
bool IsContiguous(const ViewLayout& view);
/**
 * True if no two elements of the view share an address: ordered by stride, every dim must step
 * past everything the smaller dims span. Conservative: a few exotic interleavings without overlap
 * are refused too.
 */
bool HasDistinctElements(const ViewLayout& view);

/** The bytes from a view's first to past its last element ({0, 0} without elements), with an
 *  id its owner chooses and whether the call writes it. */
struct MemorySpan {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    uint64_t owner = 0;
    bool updated = false;
};
/** The span of the view whose element 0 is at `first` (null for an empty view is fine). */
MemorySpan SpanOfView(uintptr_t first, const ViewLayout& view, uint32_t elemBytes,
                      uint64_t owner, bool updated);
/** Two spans share a byte (conservative: the ranges from first to last element intersect). */
bool SpansOverlap(const MemorySpan& a, const MemorySpan& b);
/**
 * Overlap among many views, where only pairs with an updated view count (read-only views may
 * share memory): sorts `spans` by start and sweeps once, O(n log n). Returns false if no such
 * pair overlaps; else true with the owners of one such pair, an updated view first (the smaller
 * owner when both are). Empty spans overlap nothing.
 */
bool FindUpdatedOverlap(std::vector<MemorySpan>* spans, uint64_t* first, uint64_t* second);

/** "<name> (shape [2,4], stride [0,1]) addresses some elements more than once; ..." */
Refusal RepeatedElementsRefusal(const char* name, const ViewLayout& view);
/** "<name> and <other> overlap in memory; an updated tensor must not overlap ..." */
Refusal OverlapRefusal(const char* name, const char* otherName);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_MEMORY_LAYOUT_H
