/**
 * @file cpu_kernel.h
 * @brief The CPU device's choice of kernel implementation, the same for every operator: the
 *        native kernel (runtime/native/, default) or the unchanged AscendC kernel on the twin.
 */
#ifndef ASCEND_EMA_ADAM_CPU_KERNEL_H
#define ASCEND_EMA_ADAM_CPU_KERNEL_H

namespace ascend_ema_adam {

/** Which kernel the CPU device runs. */
enum class CpuKernel { kNative, kTwin };

/**
 * ASCEND_EMA_ADAM_CPU_KERNEL, read at every call: unset, empty or "native" selects the native kernel,
 * "twin" the AscendC kernel on the twin. Throws std::invalid_argument for any other value.
 */
CpuKernel SelectedCpuKernel();

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_CPU_KERNEL_H
