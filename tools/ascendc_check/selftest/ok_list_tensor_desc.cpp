// ascendc-check: expect-ok
// Rig self-test: a tensor-list kernel (a dynamic input decoded with ListTensorDesc / TensorDesc, as in the
// documented dynamic-input pattern) type-checks; the header is not reached from kernel_operator.h and must be
// included by name.
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"

extern "C" __global__ __aicore__ void list_scale(GM_ADDR xList, GM_ADDR workspace, GM_ADDR tiling)
{
    AscendC::ListTensorDesc list;
    list.Init(reinterpret_cast<__gm__ void*>(xList));
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    AscendC::LocalTensor<float> t = buf.Get<float>();
    uint64_t shape[8] = {0};
    for (uint32_t i = 0; i < list.GetSize(); ++i) {
        __gm__ float* data = list.GetDataPtr<float>(i);
        AscendC::TensorDesc<float> desc;
        desc.SetShapeAddr(shape);
        list.GetDesc(desc, i);
        uint64_t numel = 1;
        for (uint64_t d = 0; d < desc.GetDim(); ++d) {
            numel *= desc.GetShape(static_cast<uint32_t>(d));
        }
        AscendC::GlobalTensor<float> g = desc.GetDataObj();
        const uint64_t index = desc.GetIndex();
        (void)desc.GetDataPtr();
        AscendC::GlobalTensor<float> x;
        x.SetGlobalBuffer(data, numel);
        AscendC::DataCopyPad(t, x, AscendC::DataCopyExtParams{1, 32, 0, 0, 0},
                             AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
        (void)g;
        (void)index;
    }
    AscendC::ListTensorDesc direct(reinterpret_cast<__gm__ void*>(xList), 0xffffffff, 0xffffffff);
    (void)direct.GetSize();
}
