/**
 * @file acl_views.h
 * @brief What the stand-in built-in operators (builtin_ops.cpp) read from the aclTensor,
 *        aclTensorList, aclScalar and aclIntArray handles op-plugin passes them: nnopbase's
 *        objects (acl_views.cpp reads them with nnopbase's own class definitions), described
 *        without nnopbase's headers, which do not mix with torch's in one translation unit.
 */
#ifndef TORCH_NPU_RUN_ACL_VIEWS_H
#define TORCH_NPU_RUN_ACL_VIEWS_H

#include <cstdint>
#include <vector>

struct aclTensor;
struct aclTensorList;
struct aclScalar;
struct aclIntArray;

namespace standin {

/** A tensor as nnopbase holds it: the address of its first element (storage address + view
 *  offset), its aclDataType, view sizes and strides (elements). Device memory is host memory
 *  here (the stand-in runtime), so the view can be read and written in place. */
struct DeviceView {
    void* data = nullptr;
    int aclDtype = -1;
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
};

/** A scalar as op-plugin made it (ConvertType(at::Scalar) keeps double, int64 or bool). */
struct ScalarValue {
    enum Kind { kFloating, kIntegral, kBoolean } kind = kFloating;
    double floating = 0.0;
    int64_t integral = 0;
    bool boolean = false;
};

DeviceView ViewOf(const aclTensor* tensor);
std::vector<DeviceView> ViewsOf(const aclTensorList* list);
ScalarValue ValueOf(const aclScalar* scalar);
std::vector<int64_t> ValuesOf(const aclIntArray* array);

}  // namespace standin

#endif  // TORCH_NPU_RUN_ACL_VIEWS_H
