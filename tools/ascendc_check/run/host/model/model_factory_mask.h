/**
 * @file model_factory_mask.h
 * @brief Stand-in for the closed CPU-debug instruction model's vector-mask query, used by asc-tools'
 *        level-0 (mask/repeat) operand checks. Defined in run_support.cpp as "normal mode, no mask":
 *        the count-form checks the project's kernels go through do not consult it.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_MODEL_FACTORY_MASK_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_MODEL_FACTORY_MASK_H

#include <cstdint>

uint64_t ModelFactoryGetMaskHigh();
uint64_t ModelFactoryGetMaskLow();
uint64_t ModelFactoryGetMaskMode();

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_MODEL_FACTORY_MASK_H
