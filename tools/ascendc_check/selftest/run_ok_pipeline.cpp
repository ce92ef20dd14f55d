// ascendc-check: expect-ok
// ascendc-check: run-ok
// Rig self-test (compiled and, with --run, executed): a correct queue pipeline passes the library's own
// CPU-debug checks: DataCopyPad of an unaligned length in and out, count-form Adds, widening and narrowing
// Cast with the round modes 910B accepts, TQue double buffering.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void ascendc_check_selftest()
{
    static float gmIn[100];
    static bfloat16_t gmOut[100];
    AscendC::GlobalTensor<float> in;
    AscendC::GlobalTensor<bfloat16_t> out;
    in.SetGlobalBuffer(gmIn, 100);
    out.SetGlobalBuffer(gmOut, 100);
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::TBuf<AscendC::TPosition::VECCALC> work;
    pipe.InitBuffer(inQueue, 2, 100 * sizeof(float));
    pipe.InitBuffer(outQueue, 2, 100 * sizeof(bfloat16_t));
    pipe.InitBuffer(work, 100 * sizeof(float));
    for (int round = 0; round < 3; ++round) {
        AscendC::LocalTensor<float> x = inQueue.AllocTensor<float>();
        AscendC::DataCopyPad(x, in, AscendC::DataCopyExtParams{1, 100 * sizeof(float), 0, 0, 0},
                             AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
        inQueue.EnQue(x);
        x = inQueue.DeQue<float>();
        AscendC::LocalTensor<float> w = work.Get<float>();
        AscendC::Adds(w, x, 1.0f, 100);
        AscendC::LocalTensor<bfloat16_t> y = outQueue.AllocTensor<bfloat16_t>();
        AscendC::Cast(y, w, AscendC::RoundMode::CAST_RINT, 100);
        AscendC::Cast(w, y, AscendC::RoundMode::CAST_NONE, 100);
        outQueue.EnQue(y);
        inQueue.FreeTensor(x);
        y = outQueue.DeQue<bfloat16_t>();
        AscendC::DataCopyPad(out, y, AscendC::DataCopyExtParams{1, 100 * sizeof(bfloat16_t), 0, 0, 0});
        outQueue.FreeTensor(y);
    }
}
