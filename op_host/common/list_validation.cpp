/**
 * @file list_validation.cpp
 * @brief The list operators' shared checks (see the header).
 */
#include "list_validation.h"

namespace ascend_ema_adam {

const std::vector<ListEntryArg>& EntriesOrEmpty(const std::vector<ListEntryArg>* list)
{
    static const std::vector<ListEntryArg> kEmpty;
    return list != nullptr ? *list : kEmpty;
}

std::string EntryName(const char* list, size_t index)
{
    return std::string(list) + "[" + std::to_string(index) + "]";
}

Refusal CheckOneDtypePerList(const std::vector<ListEntryArg>* const* lists,
                             const char* const* names, int count)
{
    for (int list = 0; list < count; ++list) {
        const std::vector<ListEntryArg>& entries = EntriesOrEmpty(lists[list]);
        for (size_t i = 1; i < entries.size(); ++i) {
            if (entries[i].dtype != entries[0].dtype) {
                const NamedListEntry t(names[list], i, entries[i]);
                const NamedListEntry first(names[list], 0, entries[0]);
                const std::string group = std::string("the tensors of ") + names[list];
                return CheckSameDtype(t.arg, first.arg, group.c_str());
            }
        }
    }
    return {};
}

Refusal ListLengthRefusal(const char* list, size_t size, size_t grads, bool optional)
{
    return std::string(list) + " has " + std::to_string(size) + " tensors but grads has " +
           std::to_string(grads) + ": every list holds one tensor per entry" +
           (optional ? " (an absent optional list: none, or one zero-element placeholder per "
                       "entry)"
                     : "");
}

bool AllPlaceholders(const std::vector<ListEntryArg>& entries, int32_t dtype)
{
    if (entries.empty()) return false;
    for (const ListEntryArg& e : entries) {
        if (Numel(*e.shape) != 0 || e.dtype != dtype) return false;
    }
    return true;
}

}  // namespace ascend_ema_adam
