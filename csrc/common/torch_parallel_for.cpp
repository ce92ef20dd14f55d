/**
 * @file torch_parallel_for.cpp
 * @brief TorchParallelFor. Compiled with -fopenmp, as torch's own CPU code is: torch's OpenMP
 *        at::parallel_for is a header template whose `omp parallel` exists only when its caller is
 *        compiled for OpenMP (otherwise it runs on one thread). Linked without an OpenMP library:
 *        the runtime calls bind, through libtorch_cpu's dependencies, to the OpenMP runtime torch
 *        itself loaded (libgomp on x86, a renamed copy in the aarch64 wheels), never a second one.
 */
#include "torch_parallel_for.h"

#include <ATen/Parallel.h>

#include <atomic>

namespace ascend_ema_adam::ops {

uint32_t TorchParallelFor(void* /*host*/, uint32_t slots, aeaCpuTask task, const void* ctx)
{
    std::atomic<uint32_t> threads{0};
    // grain 1: thread t of a team of k takes slots [t * ceil(slots / k), ...), one each when k is
    // the slot count (torch.get_num_threads(), which the launch's thread count follows)
    at::parallel_for(0, slots, 1, [&](int64_t begin, int64_t end) {
        threads.fetch_add(1, std::memory_order_relaxed);
        for (int64_t slot = begin; slot < end; ++slot) {
            task(ctx, static_cast<uint32_t>(slot));
        }
    });
    return threads.load(std::memory_order_relaxed);
}

}  // namespace ascend_ema_adam::ops
