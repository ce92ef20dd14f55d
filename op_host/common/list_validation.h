/**
 * @file list_validation.h
 * @brief What the list operators' validations share (built on validation.h): the view of one tensor
 *        of a list argument, its name in messages ("msRef[5]", made only for a refusal: a group of
 *        thousands of tensors is checked without a string per tensor), and the checks that read a
 *        list without knowing which operator's it is.
 */
#ifndef ASCEND_EMA_ADAM_LIST_VALIDATION_H
#define ASCEND_EMA_ADAM_LIST_VALIDATION_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "validation.h"

namespace ascend_ema_adam {

/** One tensor of a list argument as the checks see it. */
struct ListEntryArg {
    int32_t dtype;                      // aclDataType / ge::DataType value
    const std::vector<int64_t>* shape;  // view shape (aclnn), storage shape (CANN tiling)
};

/** A list argument's entries; null (an absent list) reads as empty. */
const std::vector<ListEntryArg>& EntriesOrEmpty(const std::vector<ListEntryArg>* list);

/** "msRef[5]": entry `index` of the list named `list`. */
std::string EntryName(const char* list, size_t index);

/** An entry with its name, for the checks of validation.h and their messages. */
struct NamedListEntry {
    std::string name;
    TensorArg arg;

    NamedListEntry(const char* list, size_t index, const ListEntryArg& e)
        : name(EntryName(list, index)), arg{name.c_str(), e.dtype, *e.shape}
    {
    }
    NamedListEntry(const NamedListEntry&) = delete;
    NamedListEntry& operator=(const NamedListEntry&) = delete;
};

/** Every tensor of each of the `count` lists has its entry 0's dtype (one kernel instantiation per
 *  launch); `names[i]` is list i's name. */
Refusal CheckOneDtypePerList(const std::vector<ListEntryArg>* const* lists,
                             const char* const* names, int count);

/** The refusal of a list of `size` tensors in a call whose grads hold `grads`: "msRef has 3
 *  tensors but grads has 4: every list holds one tensor per entry", and what an optional list
 *  may be instead. */
Refusal ListLengthRefusal(const char* list, size_t size, size_t grads, bool optional);

/** Every entry has no elements and dtype `dtype`: an absent optional list passed as placeholders
 *  (docs/ACLNN.md, "Absent lists"). False for an empty list. */
bool AllPlaceholders(const std::vector<ListEntryArg>& entries, int32_t dtype);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_LIST_VALIDATION_H
