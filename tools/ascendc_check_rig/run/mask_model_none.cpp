// tools/ascendc_check --run: asc-tools' level-0 operand checks read the vector mask through these hooks
// (host/model/model_factory_mask.h). The do-nothing intrinsics keep no mask: normal mode, no mask.
#include <cstdint>

#include "model/model_factory_mask.h"

uint64_t ModelFactoryGetMaskHigh() { return 0; }
uint64_t ModelFactoryGetMaskLow() { return 0; }
uint64_t ModelFactoryGetMaskMode() { return 0; }
