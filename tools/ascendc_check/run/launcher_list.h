/**
 * @file launcher_list.h
 * @brief tools/ascendc_check/run.py drivers (--run and --emulate): a tensor list in CANN's launcher layout for a DYNAMIC
 *        input or output (opbase RtsArg::AppendDevicePtrArg; drawn in twin/ascendc/twin_list_tensor.h): word 0 =
 *        byte offset of the pointer array; per entry a header (1 << 32 | rank) and its dims; then one data pointer
 *        per entry. Written here independently of the twin's encoder: this side feeds the real decoder. An absent
 *        optional list is the lone word 8 (the pointer array right after word 0).
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_LAUNCHER_LIST_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_LAUNCHER_LIST_H

#include <cstdint>
#include <vector>

namespace ascendc_check {

inline std::vector<uint64_t> LauncherListWords(const std::vector<uint8_t*>& data,
                                               const std::vector<std::vector<uint64_t>>& shapes)
{
    std::vector<uint64_t> words{0};
    for (const std::vector<uint64_t>& shape : shapes) {
        words.push_back((uint64_t{1} << 32) | shape.size());
        words.insert(words.end(), shape.begin(), shape.end());
    }
    words[0] = words.size() * sizeof(uint64_t);
    for (uint8_t* p : data) {
        words.push_back(reinterpret_cast<uint64_t>(p));
    }
    return words;
}

}  // namespace ascendc_check

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_LAUNCHER_LIST_H
