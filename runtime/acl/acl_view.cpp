/**
 * @file acl_view.cpp
 * @brief Views, overlap and staging (see the header).
 */
#include "acl_view.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "data_type.h"

namespace ascend_ema_adam::acl {

namespace {

constexpr uint64_t kStagingAlign = 64;  // each staged copy starts on a cache line

/** Copies a view to or from its row-major packed copy; innermost unit-stride runs as one block. */
void CopyView(const View& view, char* packed, bool toPacked)
{
    const uint32_t elemBytes = view.elemBytes;
    const size_t rank = view.sizes.size();
    const int64_t inner = rank ? view.sizes[rank - 1] : 1;
    const int64_t innerStride = rank ? view.strides[rank - 1] : 1;
    const int64_t outer = inner ? Numel(view.sizes) / inner : 0;
    std::vector<int64_t> index(rank ? rank - 1 : 0, 0);
    int64_t base = 0;  // element offset of the current inner row
    for (int64_t row = 0; row < outer; ++row) {
        char* elem = view.first + base * elemBytes;
        if (innerStride == 1) {
            const size_t bytes = static_cast<size_t>(inner) * elemBytes;
            toPacked ? std::memcpy(packed, elem, bytes) : std::memcpy(elem, packed, bytes);
            packed += bytes;
        } else {
            for (int64_t k = 0; k < inner; ++k, packed += elemBytes) {
                char* e = elem + k * innerStride * elemBytes;
                toPacked ? std::memcpy(packed, e, elemBytes) : std::memcpy(e, packed, elemBytes);
            }
        }
        for (size_t d = index.size(); d-- > 0;) {  // odometer over the outer dims
            base += view.strides[d];
            if (++index[d] < view.sizes[d]) {
                break;
            }
            base -= view.sizes[d] * view.strides[d];
            index[d] = 0;
        }
    }
}

}  // namespace

uint32_t ElemBytes(aclDataType dtype)
{
    const DataTypeInfo* info = FindDataTypeByCode(static_cast<int32_t>(dtype));
    if (info == nullptr) {
        throw std::logic_error("no element size for dtype " + DataTypeToString(dtype));
    }
    return info->size;
}

char* FirstElement(const aclTensor* t)
{
    char* data = static_cast<char*>(t->data);
    return data == nullptr ? nullptr
                           : data + t->offset * static_cast<int64_t>(ElemBytes(t->dataType));
}

MemorySpan SpanOf(const aclTensor* t, uint64_t owner, bool updated)
{
    return SpanOfView(reinterpret_cast<uintptr_t>(FirstElement(t)), LayoutOf(t),
                      ElemBytes(t->dataType), owner, updated);
}

View MakeView(const aclTensor* t, uint64_t* workspaceBytes)
{
    View v;
    v.first = FirstElement(t);
    v.sizes = t->viewDims;
    v.strides = t->strides;
    v.elemBytes = ElemBytes(t->dataType);
    const uint64_t numel = static_cast<uint64_t>(Numel(v.sizes));
    v.contiguous = numel == 0 || IsContiguous(v.sizes, v.strides);
    if (!v.contiguous) {
        v.stagingOffset = *workspaceBytes;
        *workspaceBytes +=
            (numel * v.elemBytes + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
    }
    return v;
}

char* StageIn(const View& view, char* workspace)
{
    if (view.contiguous) {
        return view.first;
    }
    char* staged = workspace + view.stagingOffset;
    CopyView(view, staged, true);
    return staged;
}

void StageOut(const View& view, char* workspace)
{
    if (!view.contiguous) {
        CopyView(view, workspace + view.stagingOffset, false);
    }
}

}  // namespace ascend_ema_adam::acl
