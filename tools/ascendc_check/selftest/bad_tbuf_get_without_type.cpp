// ascendc-check: expect-error conversion from ‘AscendC::TBufHandle’ \{aka ‘unsigned char\*’\} to non-scalar type ‘AscendC::LocalTensor<float>’ requested
// Rig self-test: a missing template argument. TBuf::Get needs the element type (Get<float>()); without it
// only the library's internal buffer-handle overload matches, which is no LocalTensor.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void bad_get(GM_ADDR x)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<float> t = buf.Get();
    (void)t;
}
