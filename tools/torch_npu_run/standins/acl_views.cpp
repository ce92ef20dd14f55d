/**
 * @file acl_views.cpp
 * @brief nnopbase's aclTensor, aclTensorList, aclScalar and aclIntArray, read with its own class
 *        definitions (opdev/common_types.h of the hicann/opbase snapshot): see acl_views.h.
 */
#include "acl_views.h"

#include "opdev/common_types.h"
#include "opdev/data_type_utils.h"

namespace standin {

DeviceView ViewOf(const aclTensor* tensor)
{
    DeviceView view;
    if (tensor == nullptr) return view;
    view.aclDtype = static_cast<int>(op::ToAclDataType(tensor->GetDataType()));
    const op::Shape& shape = tensor->GetViewShape();
    const op::Strides& strides = tensor->GetViewStrides();
    for (size_t i = 0; i < shape.GetDimNum(); ++i) {
        view.sizes.push_back(shape.GetDim(i));
        view.strides.push_back(strides[i]);
    }
    view.data = static_cast<char*>(tensor->GetStorageAddr()) +
                tensor->GetViewOffset() * static_cast<int64_t>(op::TypeSize(tensor->GetDataType()));
    return view;
}

std::vector<DeviceView> ViewsOf(const aclTensorList* list)
{
    std::vector<DeviceView> views;
    for (uint64_t i = 0; list != nullptr && i < list->Size(); ++i) views.push_back(ViewOf((*list)[i]));
    return views;
}

ScalarValue ValueOf(const aclScalar* scalar)
{
    ScalarValue value;
    switch (scalar->GetDataType()) {
        case op::DataType::DT_BOOL:
            value.kind = ScalarValue::kBoolean;
            value.boolean = scalar->ToBool();
            break;
        case op::DataType::DT_INT8: case op::DataType::DT_INT16: case op::DataType::DT_INT32:
        case op::DataType::DT_INT64: case op::DataType::DT_UINT8:
            value.kind = ScalarValue::kIntegral;
            value.integral = scalar->ToInt64();
            break;
        default:
            value.floating = scalar->ToDouble();
    }
    return value;
}

std::vector<int64_t> ValuesOf(const aclIntArray* array)
{
    std::vector<int64_t> values;
    for (uint64_t i = 0; array != nullptr && i < array->Size(); ++i) values.push_back((*array)[i]);
    return values;
}

}  // namespace standin
