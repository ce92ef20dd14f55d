// tools/ascendc_check/run.py --run: asc-tools' level-0 operand checks read the vector mask through these hooks
// (host/model/model_factory_mask.h). The do-nothing intrinsics keep no mask: normal mode, no mask.
#include <cstdint>

#include "model/model_factory_mask.h"

uint64_t ModelFactoryGetMaskHigh() { return 0; }
uint64_t ModelFactoryGetMaskLow() { return 0; }
uint64_t ModelFactoryGetMaskMode() { return 0; }

// Gather's CPU-debug implementation hands the model its source table (dav_c220
// kernel_operator_vec_gather_impl.h; declared in asc-tools' cpudebug utils/kernel_utils_constants.h): the
// do-nothing intrinsics keep no model.
namespace AscendC {
void SetModelGatherbSrc0Tensor(uint64_t, const uint32_t) {}
}  // namespace AscendC
