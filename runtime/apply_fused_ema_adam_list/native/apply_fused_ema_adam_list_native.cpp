/**
 * @file apply_fused_ema_adam_list_native.cpp
 * @brief RunNativeList: reads found_inf, folds the launch scalars with the kernel's FoldScalars,
 *        picks the loop of the instruction set and shape, and hands the chunks of the flat element
 *        sequence of all entries to one ParallelChunks launch.
 */
#include "apply_fused_ema_adam_list_native.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "apply_fused_ema_adam_list_native_kernel.h"
#include "kernel_scalar_host.h"

namespace ascend_ema_adam {

namespace {

/**
 * The elements of all entries as one sequence (entry 0's, then entry 1's, ...), cut into chunks
 * of about `chunkElems` elements at grain boundaries of their entries. Built in one pass over the
 * element counts; a chunk is found by binary search, so a chunk costs O(log entries).
 */
class FlatChunks {
public:
    FlatChunks(const uint64_t* numels, uint32_t tensorNum, uint32_t threads)
        : numels_(numels), prefix_(tensorNum + 1U)
    {
        prefix_[0] = 0;
        for (uint32_t i = 0; i < tensorNum; ++i) {
            prefix_[i + 1U] = prefix_[i] + numels[i];
        }
        const uint64_t total = prefix_.back();
        chunkElems_ = threads > 1U ? NativeChunkElems(total, threads) : (total > 0 ? total : 1U);
        chunks_ = (total + chunkElems_ - 1U) / chunkElems_;
        if (chunks_ > 1U && Cut((chunks_ - 1U) * chunkElems_) == total) {
            --chunks_;  // the last cut moved to the end: no empty chunk
        }
    }

    uint64_t Total() const { return prefix_.back(); }
    uint64_t Count() const { return chunks_; }

    NativeListChunk Chunk(uint64_t i) const
    {
        const uint64_t begin = Cut(i * chunkElems_);
        const uint64_t end = i + 1U < chunks_ ? Cut((i + 1U) * chunkElems_) : Total();
        const uint32_t tensor = EntryOf(begin);
        return {tensor, begin - prefix_[tensor], end - begin};
    }

private:
    /** The non-empty entry holding flat element x < Total() (the last entry starting at or
     *  before x, which skips empty entries). */
    uint32_t EntryOf(uint64_t x) const
    {
        return static_cast<uint32_t>(std::upper_bound(prefix_.begin(), prefix_.end(), x) -
                                     prefix_.begin() - 1);
    }
    /** The first grain boundary of x's entry at or after x, or that entry's end. */
    uint64_t Cut(uint64_t x) const
    {
        if (x >= Total()) {
            return Total();
        }
        const uint32_t t = EntryOf(x);
        const uint64_t offset = (x - prefix_[t] + kNativeGrain - 1U) / kNativeGrain * kNativeGrain;
        return prefix_[t] + std::min(offset, numels_[t]);
    }

    const uint64_t* numels_;
    std::vector<uint64_t> prefix_;  // prefix_[i]: elements of the entries before entry i
    uint64_t chunkElems_ = 1;
    uint64_t chunks_ = 0;
};

native::ApplyFusedEmaAdamListLoop LoopFor(Isa isa, const native::ListLoopShape& shape)
{
    using Pick = native::ApplyFusedEmaAdamListLoop (*)(const native::ListLoopShape&);
    const Pick byIsa[kIsaCount] = {&native::ApplyFusedEmaAdamListAvx512,
                                   &native::ApplyFusedEmaAdamListAvx2,
                                   &native::ApplyFusedEmaAdamListGeneric};
    const native::ApplyFusedEmaAdamListLoop loop = byIsa[static_cast<uint32_t>(isa)](shape);
    if (loop == nullptr) {
        throw std::invalid_argument(std::string("native list kernel: no '") + IsaName(isa) +
                                    "' loop for this dtype combination in this build");
    }
    return loop;
}

/** Bytes one element of every entry moves: grad, var and the state read; var, the state and the
 *  model copy written. */
uint64_t BytesPerElement(const ListDtypes& d, bool amsgrad, bool ema)
{
    const uint64_t states = 2U + (amsgrad ? 1U : 0U) + (ema ? 1U : 0U);
    return DataTypeSize(d.grad) + 2U * DataTypeSize(d.param) + 2U * states * DataTypeSize(d.state) +
           (d.hasCopy ? DataTypeSize(d.copy) : 0U);
}

/** LaunchPrologue's reader (ema_adam_scalar.h): the one-element tensors in host memory. */
struct HostScalarReader {
    const ApplyFusedEmaAdamListBuffers& b;

    float FoundInf() const { return *b.foundInf; }
    float GradScale() const { return *b.gradScale; }
    int64_t Step() const { return *b.step; }
    float Lr() const { return *b.lr; }
    float EmaDecay() const { return *b.emaDecay; }
};

/** Prologue codes of native::Prologue (ema_adam_native_update.h). */
constexpr uint32_t kPrologueNone = 0;
constexpr uint32_t kPrologueDivide = 1;

}  // namespace

std::vector<NativeListChunk> NativeListChunks(const uint64_t* numels, uint32_t tensorNum,
                                              uint32_t threads)
{
    const FlatChunks flat(numels, tensorNum, threads);
    std::vector<NativeListChunk> chunks;
    for (uint64_t i = 0; i < flat.Count(); ++i) {
        chunks.push_back(flat.Chunk(i));
    }
    return chunks;
}

uint32_t RunNativeList(const ListTilingResult& tiling, const ApplyFusedEmaAdamListBuffers& b,
                       const NativeOptions& options)
{
    const ApplyFusedEmaAdamListTilingData& t = tiling.data;
    const ListDtypes dtypes = ListDtypesOfKey(tiling.tilingKey);
    const bool amsgrad = t.amsgrad != 0U;
    const bool ema = t.hasEma != 0U;
    const bool entries = b.tensorNum > 0;  // an empty list may come with null list arrays
    if ((entries && amsgrad && b.maxVs == nullptr) || (entries && ema && b.ss == nullptr) ||
        (t.hasLrTensor != 0U && b.lr == nullptr) ||
        (t.hasEmaDecayTensor != 0U && b.emaDecay == nullptr) ||
        (entries && dtypes.hasCopy && b.copies == nullptr) ||
        (t.hasGradScale != 0U && b.gradScale == nullptr) ||
        (t.hasFoundInf != 0U && b.foundInf == nullptr) || t.tensorNum != b.tensorNum) {
        throw std::invalid_argument("native list kernel: the buffers do not match the tiling");
    }
    native::ListLoopShape shape{};
    shape.param = dtypes.param;
    shape.state = dtypes.state;
    shape.grad = dtypes.grad;
    shape.hasCopy = dtypes.hasCopy;
    shape.copy = dtypes.copy;
    shape.mode = t.hyper.mode;
    shape.amsgrad = amsgrad;
    shape.ema = ema;
    shape.prologue = t.hasGradScale != 0U || t.maximize != 0U ? kPrologueDivide : kPrologueNone;
    uint64_t total = 0;
    for (uint32_t i = 0; i < b.tensorNum; ++i) {
        total += b.numels[i];
    }
    shape.streaming = total * BytesPerElement(dtypes, amsgrad, ema) >= options.streamingBytes;
    const native::ApplyFusedEmaAdamListLoop loop = LoopFor(ResolveIsa(options.isa), shape);

    // The kernel's launch prologue: found_inf first (nonzero, NaN included: nothing more is read
    // or written), step only when it is used, the lr and decay tensors replacing the attributes;
    // maximize rides on the divisor (native::Prologue::kDivide).
    HostScalarReader read{b};
    const LaunchScalars launch = LaunchPrologue(t, read);
    if (launch.skip) {
        return 0;
    }
    native::ApplyFusedEmaAdamListJob job{};
    job.k = launch.k;
    job.gradDivisor = launch.gradDivisor;
    job.numels = b.numels;
    job.grads = b.grads;
    job.vars = b.vars;
    job.ms = b.ms;
    job.vs = b.vs;
    job.ss = ema ? b.ss : nullptr;
    job.maxVs = b.maxVs;
    job.copies = b.copies;

    if (total == 0) {
        return 0;
    }
    const uint32_t threads = NativeThreadsFor(total, options.threads, options.minElemsPerThread);
    const FlatChunks flat(b.numels, b.tensorNum, threads);
    return ParallelChunks(flat.Count(), threads, NativeWakes(total, options.minElemsPerThread),
                          [&](uint64_t i) {
        const NativeListChunk c = flat.Chunk(i);
        loop(job, c.tensor, c.offset, c.count);
    });
}

}  // namespace ascend_ema_adam
