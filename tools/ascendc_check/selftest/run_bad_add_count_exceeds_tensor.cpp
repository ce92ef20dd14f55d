// ascendc-check: expect-ok
// ascendc-check: run-abort Failed to check dstLocal size in Add, tensor size needs to be at least 260 bytes, while current tensor size is only 256 bytes
// Rig self-test (--run): a count-form Add over more elements than its operands hold must fail the library's
// operand check.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void ascendc_check_selftest()
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::Add(t, t, t, 65);
}
