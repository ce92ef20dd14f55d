// The closed instruction model's mask state, for asc-tools' level-0 operand checks (see
// host/model/model_factory_mask.h): normal mode, no mask.
#include "model/model_factory_mask.h"

uint64_t ModelFactoryGetMaskHigh() { return 0; }
uint64_t ModelFactoryGetMaskLow() { return 0; }
uint64_t ModelFactoryGetMaskMode() { return 0; }
