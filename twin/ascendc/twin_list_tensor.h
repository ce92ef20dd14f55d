/**
 * @file twin_list_tensor.h
 * @brief ListTensorDesc and TensorDesc<T> of the CPU twin: how a kernel reads the tensor list a DYNAMIC input
 *        or output of a CANN op arrives as (asc-devkit include/basic_api/kernel_operator_list_tensor_intf.h),
 *        decoded exactly as the dav-c220 decoder does, plus the twin's checks.
 *
 * GM layout (little-endian u64 words; the list's GM_ADDR points at word 0):
 *
 *   word 0               ptrOffset: byte offset of the pointer array from word 0
 *   word 1 ...           per tensor a header word (low half: rank r; high half: see the layouts below)
 *                        followed by its r dims
 *   word ptrOffset/8 ... one data pointer per tensor
 *
 *   CANN's launcher (opbase RtsArg::AppendDevicePtrArg, ge KernelTaskInfo): high half 1 in every header,
 *   each tensor its own rank, e.g. shapes [4, 5] and [7]:
 *     | 48 | 1<<32|2 | 4 | 5 | 1<<32|1 | 7 | ptr0 | ptr1 |
 *   asc-devkit's tests and docs: high half = tensor index, one rank for the whole list, e.g. [4, 5] and [7, 1]:
 *     | 56 | 0<<32|2 | 4 | 5 | 1<<32|2 | 7 | 1 | ptr0 | ptr1 |
 *   No shape info (the decoder's second form): the count in the header's high half, rank 0, then 0xffffffff:
 *     | 24 | n<<32|0 | 0xffffffff | ptr0 | ... | ptr(n-1) |
 *   twin_list_launch.h encodes all three (twin::ListLayout).
 *
 * What the c220 decoder makes of it (ListTensorDescImpl::ListTensorDecode): dim = rank of tensor 0 (low half
 * of word 1); every descriptor is taken to be 1 + dim words (2 when dim is 0); count = the high half of word 1
 * when nonzero, else the high half of the header at word ptrOffset/8 - (1 + dim), plus one. Hence, on the device:
 *   - GetDataPtr(i) reads pointer i: right for every layout;
 *   - GetSize() returns count: right for the indexed and no-shape layouts, but 1 for every list CANN's
 *     launcher builds (its headers all say 1);
 *   - GetDesc(i) copies the dim words after word 1 + i * (1 + dim) and reports rank dim: right only while
 *     tensors 0..i all have tensor 0's rank, which is >= 1.
 * CPU-debug mode asserts the decoder's view (count consistent with ptrOffset, index < count, dim != 0 for
 * GetDesc, non-null data pointer, offset < dim for GetShape, count/length when given). On the device the
 * asserts compile out and a wrong index or layout silently reads other words.
 *
 * The twin decodes the same way and returns what the device returns, but also walks the descriptors once at
 * Init (not counted as traffic) to learn how many tensors the list really holds and how many leading ones
 * share tensor 0's rank. Every call then checks against that truth, so a kernel that works on the device with
 * CANN's lists runs here, and one that would read wrong words there aborts here. That is where the twin departs
 * from CPU-debug, whose decode assert rejects every CANN launcher list of two or more tensors (its count is 1):
 * the twin checks the walk instead, and checks indexes, shapeSize and length against the real tensor count
 * (the decoder's count on every layout CPU-debug accepts); and it allows a null data pointer for a tensor
 * without elements (CPU-debug asserts on any null pointer GetDesc hands out; the device does not care).
 * The rules:
 *   GM_BOUNDS    a descriptor word the decoder reads (or the descriptor area the twin walks) is outside the
 *                launch's registered GM regions; data reached through a pointer goes through the usual
 *                GlobalTensor checks
 *   LIST_LAYOUT  Init on a null or misaligned address, or on bytes that are not a tensor list (ptrOffset not a
 *                multiple of 8, an empty list, descriptors that run past the pointer array)
 *   LIST_LENGTH  length and shapeSize both given and the list does not hold shapeSize tensors in length bytes
 *   LIST_INDEX   GetDataPtr/GetDesc index >= the number of tensors; TensorDesc::GetShape(i) with i >= GetDim()
 *   LIST_COUNT   GetSize() on a list whose headers do not carry its tensor count (the device returns another
 *                number: 1 for CANN's lists of two or more tensors)
 *   LIST_SHAPE   GetDesc on a list without shape info (or whose tensor 0 has rank 0); GetDesc before
 *                SetShapeAddr; SetShapeAddr(nullptr); GetDesc(i) when tensors 0..i do not all have tensor 0's
 *                rank (the device would copy another tensor's words)
 *   LIST_NULL    GetDesc of a tensor with elements whose data pointer is null
 * The shape buffer given to SetShapeAddr must hold GetDim() words; its size is the caller's business (the
 * twin cannot see it, nor can the device).
 *
 * Traffic: the device decoder reads words 0 and 1 (and the count header when word 1's high half is 0) at
 * Init, one pointer word per GetDataPtr, and a pointer word plus dim shape words per GetDesc. The twin counts
 * exactly those as scalar GM reads (gmScalarReadBytes), never as DMA bytes. GetDesc's 256-B dc_preload on the
 * device is a cache hint and is not counted.
 *
 * TensorDesc<T>::GetDataObj reproduces the real GlobalTensor size: sizeof(T) times the element count (a size
 * in bytes where GlobalTensor sizes are in elements, as upstream; a uint32 product). Its bounds checks use the
 * tensor's true extent, so relying on that size to address data fails GM_BOUNDS.
 */
#ifndef ASCEND_EMA_ADAM_TWIN_LIST_TENSOR_H
#define ASCEND_EMA_ADAM_TWIN_LIST_TENSOR_H

#include <cstdint>

#include "twin_context.h"
#include "twin_tensor.h"
#include "twin_types.h"

namespace twin::detail {

constexpr uint64_t kListNoShapeMarker = 0xffffffffu;  // word 2 of a list without shape info

// A decoded list: the decoder's fields plus what the twin's walk learned.
struct ListState {
    const uint8_t* base = nullptr;      // word 0
    const uint64_t* pointers = nullptr;  // the pointer array (the decoder's dataPtr_)
    uint32_t dim = 0;                    // the decoder's dim_: tensor 0's rank
    uint32_t descWords = 0;              // the decoder's descStructSize_: 1 + dim, or 2 when dim is 0
    uint32_t count = 0;                  // the decoder's count_: what GetSize() returns on the device
    uint32_t tensors = 0;                // how many tensors the list holds
    uint32_t uniform = 0;                // tensors 0..uniform-1 have rank dim (>= 1): where GetDesc reads right
};

// ListTensorDesc's work, out of line (twin_list_tensor.cpp).
void DecodeList(ListState& st, const void* data, uint32_t length, uint32_t shapeSize);
uint64_t ListPointer(const ListState& st, uint32_t index, const char* call);
uint32_t ListSize(const ListState& st);
// GetDesc: the checks, then the data pointer (returned) and the dim shape words into shapeOut (the buffer given
// to SetShapeAddr, null if none was).
uint64_t ListDescriptor(const ListState& st, uint32_t index, uint64_t* shapeOut);
[[noreturn]] void ShapeIndexFail(uint32_t offset, uint32_t dim);
[[noreturn]] void NullShapeAddrFail();

}  // namespace twin::detail

namespace AscendC {

class ListTensorDesc;

// One tensor of a list: rank, index, shape (in the caller's buffer) and data pointer, filled by GetDesc.
template <class T>
class TensorDesc {
public:
    TensorDesc() {}
    ~TensorDesc() {}

    // The buffer GetDesc copies the dims into (GetDim() words).
    void SetShapeAddr(uint64_t* shapePtr) {
        if (shapePtr == nullptr) twin::detail::NullShapeAddrFail();
        shape_ = shapePtr;
    }

    uint64_t GetDim() { return dim_; }
    uint64_t GetIndex() { return index_; }
    uint64_t GetShape(uint32_t offset) {
        if (offset >= dim_) twin::detail::ShapeIndexFail(offset, dim_);
        return shape_[offset];
    }
    __gm__ T* GetDataPtr() { return ptr_; }

    // The tensor as a GlobalTensor; GetSize() of it is sizeof(T) x elements, as upstream (see the file comment).
    GlobalTensor<T> GetDataObj() {
        uint64_t elems = 1;
        uint32_t reported = sizeof(T);  // upstream's uint32 product
        for (uint32_t i = 0; i < dim_; ++i) {
            elems *= shape_[i];
            reported *= static_cast<uint32_t>(shape_[i]);
        }
        GlobalTensor<T> obj;
        twin::detail::TensorAccess::SetListBuffer(obj, ptr_, reported, elems * sizeof(T), "TensorDesc::GetDataObj");
        return obj;
    }

    friend class ListTensorDesc;

private:
    uint32_t dim_ = 0;
    uint32_t index_ = 0;
    uint64_t* shape_ = nullptr;
    __gm__ T* ptr_ = nullptr;
};

class ListTensorDesc {
public:
    ListTensorDesc() {}
    ~ListTensorDesc() {}
    // length (bytes) and shapeSize (tensors) are checked only when both are given.
    ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff) {
        Init(data, length, shapeSize);
    }
    void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff) {
        twin::detail::DecodeList(state_, data, length, shapeSize);
    }

    template <class T>
    void GetDesc(TensorDesc<T>& desc, uint32_t index) {
        const uint64_t ptr = twin::detail::ListDescriptor(state_, index, desc.shape_);
        desc.dim_ = state_.dim;
        desc.ptr_ = reinterpret_cast<__gm__ T*>(ptr);
        desc.index_ = index;
    }

    template <class T>
    __gm__ T* GetDataPtr(uint32_t index) {
        return reinterpret_cast<__gm__ T*>(twin::detail::ListPointer(state_, index, "ListTensorDesc::GetDataPtr"));
    }

    uint32_t GetSize() { return twin::detail::ListSize(state_); }

private:
    twin::detail::ListState state_;
};

}  // namespace AscendC

#endif  // ASCEND_EMA_ADAM_TWIN_LIST_TENSOR_H
