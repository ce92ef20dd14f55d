/**
 * @file cpu_kernel.cpp
 * @brief SelectedCpuKernel (see the header).
 */
#include "cpu_kernel.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ascend_ema_adam {

CpuKernel SelectedCpuKernel()
{
    const char* env = std::getenv("ASCEND_EMA_ADAM_CPU_KERNEL");
    if (env == nullptr || *env == '\0' || std::strcmp(env, "native") == 0) {
        return CpuKernel::kNative;
    }
    if (std::strcmp(env, "twin") == 0) {
        return CpuKernel::kTwin;
    }
    throw std::invalid_argument(std::string("ASCEND_EMA_ADAM_CPU_KERNEL is '") + env +
                                "', expected 'native' (the default) or 'twin'");
}

}  // namespace ascend_ema_adam
