/**
 * @file kernel_entries.h
 * @brief The kernels' entries as the tools/ascendc_check/run.py drivers (--run and --emulate) call them: every GM argument a
 *        byte pointer (GM_ADDR on the host), in the kernels' parameter order (op_kernel/<op>/<op>.cpp).
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_KERNEL_ENTRIES_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_KERNEL_ENTRIES_H

#include <cstdint>

extern "C" {

void aea_apply_fused_ema_adam(uint8_t* grad, uint8_t* var, uint8_t* m, uint8_t* v, uint8_t* s, uint8_t* step,
                              uint8_t* varRef, uint8_t* mRef, uint8_t* vRef, uint8_t* sRef, uint8_t* workspace,
                              uint8_t* tiling);

void apply_fused_ema_adam_list(uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* ss, uint8_t* maxVs,
                               uint8_t* modelCopies, uint8_t* step, uint8_t* gradScale, uint8_t* foundInf,
                               uint8_t* varsRef, uint8_t* ssRef, uint8_t* maxVsRef, uint8_t* modelCopiesRef,
                               uint8_t* msRef, uint8_t* vsRef, uint8_t* workspace, uint8_t* tiling);

void apply_fused_ema_adam_list_v2(uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* ss,
                                  uint8_t* maxVs, uint8_t* modelCopies, uint8_t* step, uint8_t* gradScale,
                                  uint8_t* foundInf, uint8_t* lr, uint8_t* emaDecay, uint8_t* varsRef, uint8_t* ssRef,
                                  uint8_t* maxVsRef, uint8_t* modelCopiesRef, uint8_t* msRef, uint8_t* vsRef,
                                  uint8_t* workspace, uint8_t* tiling);

void apply_fused_ema_adam8bit_list(uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* mAbsmaxes,
                                   uint8_t* vAbsmaxes, uint8_t* ss, uint8_t* modelCopies, uint8_t* qmapM,
                                   uint8_t* qmapV, uint8_t* step, uint8_t* gradScale, uint8_t* foundInf, uint8_t* lr,
                                   uint8_t* emaDecay, uint8_t* varsRef, uint8_t* ssRef, uint8_t* modelCopiesRef,
                                   uint8_t* msRef, uint8_t* vsRef, uint8_t* mAbsmaxesRef, uint8_t* vAbsmaxesRef,
                                   uint8_t* workspace, uint8_t* tiling);

}  // extern "C"

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_KERNEL_ENTRIES_H
