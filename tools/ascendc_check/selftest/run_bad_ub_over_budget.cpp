// ascendc-check: expect-ok
// ascendc-check: run-abort \[InitBuffer\].* buffer size is 204800, exceeds the limit 196608
// Rig self-test (--run): two 100 KiB queue buffers exceed the 192 KiB UB of a 910B vector core; TPipe's
// own CPU-debug accounting must abort.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void ascendc_check_selftest()
{
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 2, 100 * 1024);
}
