// ascendc-check: expect-error no matching function for call to ‘Muls\(AscendC::LocalTensor<float>&, AscendC::LocalTensor<float>&, double, int32_t&\)’
// ascendc-check: expect-error deduced conflicting types for parameter ‘const T’ \(‘float’ and ‘double’\)
// Rig self-test: the scalar of Muls/Adds must have the tensors' element type (a double literal does not deduce).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void bad_muls(GM_ADDR x)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<float> t = buf.Get<float>();
    int32_t n = 64;
    AscendC::Muls(t, t, 0.5, n);
}
