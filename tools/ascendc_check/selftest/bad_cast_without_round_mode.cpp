// ascendc-check: expect-error no matching function for call to ‘Cast\(AscendC::LocalTensor<float>&, AscendC::LocalTensor<half>&, (const )?uint32_t&\)’
// Rig self-test: Cast has no overload without a RoundMode (level 2 is (dst, src, roundMode, count)).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void bad_cast(GM_ADDR x)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<half> src = buf.Get<half>();
    AscendC::LocalTensor<float> dst = buf.Get<float>()[128];
    const uint32_t count = 64;
    AscendC::Cast(dst, src, count);
}
