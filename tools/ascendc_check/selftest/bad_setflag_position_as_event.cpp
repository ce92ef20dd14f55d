// ascendc-check: expect-error no matching function for call to ‘SetFlag<AscendC::TPosition::VECIN>\(int32_t&\)’
// ascendc-check: expect-error could not convert ‘AscendC::TPosition::VECIN’ from ‘AscendC::TPosition’ to ‘AscendC::HardEvent’
// Rig self-test: a wrong template argument. SetFlag takes a HardEvent (SRC_DST), not a queue position.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void bad_flag(GM_ADDR x)
{
    int32_t id = 0;
    AscendC::SetFlag<AscendC::TPosition::VECIN>(id);
}
