// ascendc-check: expect-ok
// ascendc-check: run-ok
// Rig self-test (--run): the GM layout of a tensor list (ascendc_api.md "Tensor lists"), decoded by the real
// ListTensorDesc: word 0 = byte offset of the pointer array; per tensor one header word (low 32 bits: dim,
// high 32 bits: index) and `dim` shape words, all descriptors the size of the first (1 + dim words); then
// one data pointer per tensor. Any value the decoder reads differently aborts the run.
#include <cstdio>
#include <cstdlib>

#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"

namespace {
void Require(bool ok, const char* what)
{
    if (!ok) {
        std::printf("list layout: %s\n", what);
        std::abort();
    }
}
}  // namespace

extern "C" __global__ __aicore__ void ascendc_check_selftest()
{
    static float x0[12];
    static float x1[30];
    static uint64_t list[9] = {
        7 * sizeof(uint64_t),                 // the pointer array starts at word 7
        2, 3, 4,                              // tensor 0: dim 2, index 0, shape [3, 4]
        2 | (uint64_t{1} << 32), 5, 6,        // tensor 1: dim 2, index 1, shape [5, 6]
        0, 0};                                // data pointers
    list[7] = reinterpret_cast<uint64_t>(x0);
    list[8] = reinterpret_cast<uint64_t>(x1);

    AscendC::ListTensorDesc desc(reinterpret_cast<__gm__ void*>(list), sizeof(list), 2);  // length/count checked
    Require(desc.GetSize() == 2, "GetSize");
    Require(desc.GetDataPtr<float>(0) == x0 && desc.GetDataPtr<float>(1) == x1, "GetDataPtr");
    uint64_t shape[2] = {0, 0};
    AscendC::TensorDesc<float> t;
    t.SetShapeAddr(shape);
    desc.GetDesc(t, 1);
    Require(t.GetDim() == 2 && t.GetIndex() == 1, "GetDim / GetIndex");
    Require(t.GetShape(0) == 5 && t.GetShape(1) == 6 && shape[0] == 5 && shape[1] == 6, "GetShape");
    Require(t.GetDataPtr() == x1, "TensorDesc::GetDataPtr");
    // GetDataObj sizes its GlobalTensor with sizeof(T) * numel, a byte count in SetGlobalBuffer's element-count
    // argument (dav_c220/kernel_operator_list_tensor_impl.h, TensorDescImpl::GetDataObj).
    Require(t.GetDataObj().GetSize() == sizeof(float) * 30, "GetDataObj size");
}
