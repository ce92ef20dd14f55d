/**
 * @file gm_coverage.h
 * @brief tools/ascendc_check/run.py --run: checks the GM copies a launch's blocks issued (GmCopyTrace) against the
 *        tensors of the launch: every copy inside one tensor that may be accessed that way, with the tensor's
 *        element width, at most a chunk long; every expected access (read or write) covering each tensor exactly
 *        once; and each block moving exactly its share of every tensor (the host's view of the work split).
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_GM_COVERAGE_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_GM_COVERAGE_H

#include <cstdint>
#include <string>
#include <vector>

#include "run_support.h"

namespace ascendc_check {

enum GmAccess : uint8_t { kNoAccess = 0, kRead = 1, kWrite = 2 };

/** Entry `index` of list `list`: `bytes` at `base`, elements of elemBytes. `expected`: the accesses (GmAccess
 *  bits) the kernel must make, each covering every byte exactly once; any other access is an error. */
struct GmTensor {
    std::string list;
    uint32_t index;
    uint64_t base;
    uint64_t bytes;
    uint32_t elemBytes;
    uint8_t expected;
};

/** Elements [begin, end) of entry `index` of every list: part of what one block must move. */
struct BlockShare {
    uint32_t index;
    uint64_t begin;
    uint64_t end;
};

struct GmExpectation {
    std::vector<GmTensor> tensors;
    std::vector<std::vector<BlockShare>> shares;  // per block
    uint64_t maxCopyElems = 0;                    // the chunk: no copy moves more elements
};

/** What is wrong with `copies` (empty: nothing), at most maxMessages lines plus a count of the rest. */
std::vector<std::string> CheckGmCopies(const GmExpectation& expected, const std::vector<GmCopy>& copies,
                                       size_t maxMessages = 8);

}  // namespace ascendc_check

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_GM_COVERAGE_H
