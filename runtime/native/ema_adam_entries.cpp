/**
 * @file ema_adam_entries.cpp
 * @brief RunEmaAdamEntries: picks the loop of the instruction set and shape and hands the chunks
 *        of the flat element sequence of all entries to one ParallelChunks launch.
 */
#include "ema_adam_entries.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ascend_ema_adam {

namespace {

/**
 * The elements of all entries as one sequence (entry 0's, then entry 1's, ...), cut into chunks
 * of about `chunkElems` elements at grain boundaries of their entries. Built in one pass over the
 * element counts; a chunk is found by binary search, so a chunk costs O(log entries).
 */
class FlatChunks {
public:
    FlatChunks(const uint64_t* numels, uint32_t count, uint32_t threads)
        : numels_(numels), prefix_(count + 1U)
    {
        prefix_[0] = 0;
        for (uint32_t i = 0; i < count; ++i) {
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

    EmaAdamEntryChunk Chunk(uint64_t i) const
    {
        const uint64_t begin = Cut(i * chunkElems_);
        const uint64_t end = i + 1U < chunks_ ? Cut((i + 1U) * chunkElems_) : Total();
        const uint32_t entry = EntryOf(begin);
        return {entry, begin - prefix_[entry], end - begin};
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
        const uint32_t e = EntryOf(x);
        const uint64_t offset = (x - prefix_[e] + kNativeGrain - 1U) / kNativeGrain * kNativeGrain;
        return prefix_[e] + std::min(offset, numels_[e]);
    }

    const uint64_t* numels_;
    std::vector<uint64_t> prefix_;  // prefix_[i]: elements of the entries before entry i
    uint64_t chunkElems_ = 1;
    uint64_t chunks_ = 0;
};

native::EntriesLoop LoopFor(Isa isa, const native::EntryLoopShape& shape)
{
    using Pick = native::EntriesLoop (*)(const native::EntryLoopShape&);
    const Pick byIsa[kIsaCount] = {&native::EmaAdamEntriesAvx512, &native::EmaAdamEntriesAvx2,
                                   &native::EmaAdamEntriesNeon, &native::EmaAdamEntriesGeneric};
    const native::EntriesLoop loop = byIsa[static_cast<uint32_t>(isa)](shape);
    if (loop == nullptr) {
        throw std::invalid_argument(std::string("native EMA-Adam kernel: no '") + IsaName(isa) +
                                    "' loop for these storage types in this build");
    }
    return loop;
}

/** Bytes one element of every entry moves: grad, var and the state read; var, the state and the
 *  model copy written. */
uint64_t BytesPerElement(const EmaAdamEntryTypes& d, bool amsgrad, bool ema)
{
    const uint64_t states = 2U + (amsgrad ? 1U : 0U) + (ema ? 1U : 0U);
    return DataTypeSize(d.grad) + 2U * DataTypeSize(d.param) + 2U * states * DataTypeSize(d.state) +
           (d.hasCopy ? DataTypeSize(d.copy) : 0U);
}

/** Prologue codes of native::Prologue (ema_adam_native_update.h). */
constexpr uint32_t kPrologueNone = 0;
constexpr uint32_t kPrologueDivide = 1;

}  // namespace

std::vector<EmaAdamEntryChunk> EmaAdamEntryChunks(const uint64_t* numels, uint32_t count,
                                                  uint32_t threads)
{
    const FlatChunks flat(numels, count, threads);
    std::vector<EmaAdamEntryChunk> chunks;
    for (uint64_t i = 0; i < flat.Count(); ++i) {
        chunks.push_back(flat.Chunk(i));
    }
    return chunks;
}

uint32_t RunEmaAdamEntries(const EmaAdamEntries& e, const NativeOptions& options)
{
    const bool entries = e.count > 0;  // an empty launch may come with null arrays
    if (entries && (e.numels == nullptr || e.grads == nullptr || e.vars == nullptr ||
                    e.ms == nullptr || e.vs == nullptr || (e.amsgrad && e.maxVs == nullptr) ||
                    (e.ema && e.ss == nullptr) || (e.types.hasCopy && e.copies == nullptr))) {
        throw std::invalid_argument("native EMA-Adam kernel: an option without its entries");
    }
    native::EntryLoopShape shape{};
    shape.types = e.types;
    shape.mode = e.k.mode;
    shape.amsgrad = e.amsgrad;
    shape.ema = e.ema;
    shape.prologue = e.divideGrad ? kPrologueDivide : kPrologueNone;
    uint64_t total = 0;
    for (uint32_t i = 0; i < e.count; ++i) {
        total += e.numels[i];
    }
    shape.streaming = total * BytesPerElement(e.types, e.amsgrad, e.ema) >= options.streamingBytes;
    const native::EntriesLoop loop = LoopFor(ResolveIsa(options.isa), shape);
    if (total == 0) {
        return 0;
    }

    native::EntriesJob job{};
    job.k = e.k;
    job.gradDivisor = e.gradDivisor;
    job.numels = e.numels;
    job.grads = e.grads;
    job.vars = e.vars;
    job.ms = e.ms;
    job.vs = e.vs;
    job.ss = e.ema ? e.ss : nullptr;
    job.maxVs = e.maxVs;
    job.copies = e.copies;
    const uint32_t threads = NativeThreadsFor(total, options.threads, options.minElemsPerThread);
    const FlatChunks flat(e.numels, e.count, threads);
    return ParallelChunks(flat.Count(), threads, NativeWakes(total, options.minElemsPerThread),
                          [&](uint64_t i) {
        const EmaAdamEntryChunk c = flat.Chunk(i);
        loop(job, c.entry, c.offset, c.count);
    });
}

}  // namespace ascend_ema_adam
