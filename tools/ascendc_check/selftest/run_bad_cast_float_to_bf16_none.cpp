// ascendc-check: expect-ok
// ascendc-check: run-abort SIGABRT Signal
// ascendc-check: run-abort AscendC::CastIntrinsicsImpl\(bfloat16::Bf16T\*, float\*, AscendC::RoundMode const&
// Rig self-test (--run): float -> bfloat16_t has no CAST_NONE on 910B (it must round: CAST_RINT etc.);
// the library's Cast must abort.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void ascendc_check_selftest()
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<float> src = buf.Get<float>();
    AscendC::LocalTensor<bfloat16_t> dst = buf.Get<bfloat16_t>()[256];
    AscendC::Cast(dst, src, AscendC::RoundMode::CAST_NONE, 64);
}
