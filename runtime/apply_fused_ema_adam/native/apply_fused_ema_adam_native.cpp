/**
 * @file apply_fused_ema_adam_native.cpp
 * @brief RunNative: folds the launch scalars with the kernel's FoldScalars, picks the loop of the
 *        instruction set, and hands the elements to Parallel.
 */
#include "apply_fused_ema_adam_native.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "apply_fused_ema_adam_native_kernel.h"

namespace ascend_ema_adam {

namespace {

native::ApplyFusedEmaAdamLoop LoopFor(Isa isa)
{
    const native::ApplyFusedEmaAdamLoop byIsa[kIsaCount] = {
        native::ApplyFusedEmaAdamAvx512(), native::ApplyFusedEmaAdamAvx2(),
        native::ApplyFusedEmaAdamGeneric()};
    const native::ApplyFusedEmaAdamLoop loop = byIsa[static_cast<uint32_t>(isa)];
    if (loop == nullptr) {
        throw std::invalid_argument(std::string("native kernel: instruction set '") +
                                    IsaName(isa) + "' is not compiled into this build");
    }
    return loop;
}

}  // namespace

uint32_t RunNative(const TilingResult& tiling, const ApplyFusedEmaAdamBuffers& b,
                   const NativeOptions& options)
{
    const uint64_t n = tiling.data.totalLength;
    const native::ApplyFusedEmaAdamLoop loop = LoopFor(ResolveIsa(options.isa));
    native::ApplyFusedEmaAdamJob job{};
    job.dtype = DataTypeOfTilingKey(tiling.tilingKey);
    if (n == 0) {
        return 0;
    }
    // Like the kernel, step is read only when it is used.
    const int64_t step = tiling.data.hyper.biasCorrection != 0U ? *b.step : 0;
    job.k = FoldScalars(tiling.data.hyper, step);
    job.streaming = n * 9U * DataTypeSize(job.dtype) >= options.streamingBytes;  // 5 in, 4 out
    const void* in[] = {b.grad, b.var, b.m, b.v, b.s};
    void* out[] = {b.varOut, b.mOut, b.vOut, b.sOut};
    std::memcpy(job.in, in, sizeof in);
    std::memcpy(job.out, out, sizeof out);
    return Parallel(n, NativeThreadsFor(n, options.threads, options.minElemsPerThread),
                    NativeWakes(n, options.minElemsPerThread),
                    [&](uint64_t begin, uint64_t end) { loop(job, begin, end); });
}

}  // namespace ascend_ema_adam
