/**
 * @file data_type.h
 * @brief The element types of the operators' tensors, in one table: a DataType's name, size and
 *        CANN code all come from kDataTypes, and every other layer derives its dtype mapping from
 *        it (tiling keys, the native kernel, the aclnn layer, the Python bindings).
 *        An enum, plain data and constexpr lookups only: the native kernel's ISA translation units
 *        include it and must not share inline library code with the rest of the program.
 */
#ifndef ASCEND_EMA_ADAM_DATA_TYPE_H
#define ASCEND_EMA_ADAM_DATA_TYPE_H

#include <cstdint>

namespace ascend_ema_adam {

enum class DataType : uint32_t { kFloat32, kFloat16, kBFloat16, kInt64, kUInt8 };

struct DataTypeInfo {
    DataType type;
    const char* name;  // numpy/torch spelling: the Python layer's key and _kernels's dtype argument
    uint32_t size;     // bytes per element
    int32_t cannCode;  // its aclDataType value, shared by ge::DataType (ACL_FLOAT = DT_FLOAT = 0)
    bool isFloat;      // one of the updated tensors' dtypes (the kernels' instantiations)
};

/** Indexed by the enum's value. */
inline constexpr DataTypeInfo kDataTypes[] = {
    {DataType::kFloat32, "float32", 4, 0, true},
    {DataType::kFloat16, "float16", 2, 1, true},
    {DataType::kBFloat16, "bfloat16", 2, 27, true},
    {DataType::kInt64, "int64", 8, 9, false},
    {DataType::kUInt8, "uint8", 1, 4, false},  // ApplyFusedEmaAdam8bitList's moment codes
};
inline constexpr uint32_t kDataTypeCount = sizeof(kDataTypes) / sizeof(kDataTypes[0]);

constexpr bool DataTypeTableIsIndexedByEnum()
{
    for (uint32_t i = 0; i < kDataTypeCount; ++i) {
        if (static_cast<uint32_t>(kDataTypes[i].type) != i) {
            return false;
        }
    }
    return true;
}
static_assert(DataTypeTableIsIndexedByEnum(), "kDataTypes must list the enum in order");

constexpr const DataTypeInfo& InfoOf(DataType dtype)
{
    return kDataTypes[static_cast<uint32_t>(dtype)];
}
constexpr uint32_t DataTypeSize(DataType dtype) { return InfoOf(dtype).size; }
constexpr const char* DataTypeName(DataType dtype) { return InfoOf(dtype).name; }
constexpr int32_t CannCodeOf(DataType dtype) { return InfoOf(dtype).cannCode; }

/** The entry with this aclDataType / ge::DataType value, or null. */
constexpr const DataTypeInfo* FindDataTypeByCode(int32_t cannCode)
{
    for (const DataTypeInfo& info : kDataTypes) {
        if (info.cannCode == cannCode) {
            return &info;
        }
    }
    return nullptr;
}

/** The entry named `name` ("float32", ...), or null. */
constexpr const DataTypeInfo* FindDataTypeByName(const char* name)
{
    for (const DataTypeInfo& info : kDataTypes) {
        const char* a = info.name;
        const char* b = name;
        while (*a != '\0' && *a == *b) {
            ++a;
            ++b;
        }
        if (*a == '\0' && *b == '\0') {
            return &info;
        }
    }
    return nullptr;
}

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_DATA_TYPE_H
