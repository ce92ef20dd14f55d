/**
 * @file twin_list_launch.h
 * @brief Host side of tensor lists (twin-only: kernels never include it). Builds the GM descriptor a DYNAMIC
 *        input or output of a CANN op arrives as, which is the framework's job on the device; the word
 *        layouts are drawn in twin_list_tensor.h.
 *
 *   std::vector<twin::ListEntry> entries = {{w.data(), {768, 768}}, {b.data(), {768}}};
 *   twin::EncodedList list = twin::EncodeList(entries);  // CANN's launcher layout
 *   cfg.gm.push_back(list.Region());                      // and a region for every tensor it points to
 *   twin::Launch(kernel, cfg, list.Addr(), ...);          // the kernel: AscendC::ListTensorDesc(x)
 *
 * The EncodedList owns the words; keep it alive until the launch returns.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_LIST_LAUNCH_H
#define ASCEND_EMA_ADAM_TWIN_LIST_LAUNCH_H

#include <cstdint>
#include <utility>
#include <vector>

#include "twin_context.h"

namespace twin {

enum class ListLayout : uint8_t {
    // What CANN's aclnn launcher writes (opbase RtsArg::AppendDevicePtrArg; GE's model loader likewise): header
    // (1 << 32) | rank, each tensor its own rank, a rank-0 tensor a header alone, a null entry a header of rank
    // 0 with a null pointer. GetSize() on the device returns 1 for such lists; GetDesc(i) reads right only
    // while tensors 0..i share tensor 0's rank.
    kFramework,
    // asc-devkit's own tests and docs: header (index << 32) | rank, one rank >= 1 for every tensor; the
    // decoder's count and GetDesc are right for every index.
    kIndexed,
    // No shape info: | 24 | count << 32 | 0xffffffff | pointers |; count >= 1. Only GetDataPtr and GetSize work.
    kPointersOnly,
};

struct ListEntry {
    const void* data;            // the tensor's GM address (null: an absent entry)
    std::vector<int64_t> shape;  // its dims; unused by kPointersOnly
};

class EncodedList {
public:
    EncodedList(std::vector<uint64_t> words, uint32_t count) : words_(std::move(words)), count_(count) {}

    // What the kernel receives for the list (its GM_ADDR).
    uint8_t* Addr() { return reinterpret_cast<uint8_t*>(words_.data()); }
    // The descriptor as a GM region to register with the launch.
    GmRegion Region() const { return {words_.data(), words_.size() * sizeof(uint64_t)}; }
    // ListTensorDesc's optional checks: length in bytes and shapeSize (the number of tensors).
    uint32_t Length() const { return static_cast<uint32_t>(words_.size() * sizeof(uint64_t)); }
    uint32_t Count() const { return count_; }
    const std::vector<uint64_t>& Words() const { return words_; }

private:
    std::vector<uint64_t> words_;
    uint32_t count_;
};

// Throws std::invalid_argument for what the layout cannot express: a negative dim; kIndexed with ranks that
// differ or are 0; kPointersOnly without entries (the decoder would count one); 2^32 or more entries or dims.
// An empty kFramework or kIndexed list is the lone word 8, as the launcher writes it (ListTensorDesc cannot
// decode it: a kernel must not open an empty list).
EncodedList EncodeList(const std::vector<ListEntry>& entries, ListLayout layout = ListLayout::kFramework);

}  // namespace twin

#endif  // ASCEND_EMA_ADAM_TWIN_LIST_LAUNCH_H
