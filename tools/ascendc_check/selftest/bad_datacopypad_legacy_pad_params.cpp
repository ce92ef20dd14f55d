// ascendc-check: expect-error no matching function for call to ‘DataCopyPad\(AscendC::LocalTensor<float>&, AscendC::GlobalTensor<float>&, AscendC::DataCopyExtParams&, AscendC::DataCopyPadParams&\)’
// Rig self-test: DataCopyExtParams pairs with DataCopyPadExtParams<T>; the legacy DataCopyPadParams only goes
// with the legacy DataCopyParams.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void bad_pad(GM_ADDR x)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<float> local = buf.Get<float>();
    AscendC::GlobalTensor<float> global;
    global.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), 100);
    AscendC::DataCopyExtParams copy{1, 100 * sizeof(float), 0, 0, 0};
    AscendC::DataCopyPadParams pad{false, 0, 0, 0};
    AscendC::DataCopyPad(local, global, copy, pad);
}
