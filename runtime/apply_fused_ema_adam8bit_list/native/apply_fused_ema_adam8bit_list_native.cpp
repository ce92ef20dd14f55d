/**
 * @file apply_fused_ema_adam8bit_list_native.cpp
 * @brief RunApplyFusedEmaAdam8bitListNative: reads found_inf, folds the launch scalars with the
 *        kernels' LaunchPrologue, builds each map's encode tables (the codebook header's
 *        thresholds; kept while the maps stay the same) and hands the launch's quantization blocks
 *        to the loops of the chosen instruction set.
 */
#include "apply_fused_ema_adam8bit_list_native.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_scalar_host.h"  // defines __aicore__ away: first

#include "apply_fused_ema_adam8bit_list_codebook.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace {

/** LaunchPrologue's reader (ema_adam_scalar.h): the one-element tensors in host memory. */
struct HostScalarReader {
    const ApplyFusedEmaAdam8bitListBuffers& b;

    float FoundInf() const { return *b.foundInf; }
    float GradScale() const { return *b.gradScale; }
    int64_t Step() const { return *b.step; }
    float Lr() const { return *b.lr; }
    float EmaDecay() const { return *b.emaDecay; }
};

/** The key K of a threshold or value's bits (native::ApplyFusedEmaAdam8bitListEncodeTable). */
int32_t TableKey(const native::ApplyFusedEmaAdam8bitListEncodeTable& t, uint32_t xBits)
{
    if (t.positive) {
        return std::max(static_cast<int32_t>(xBits), t.floor);
    }
    const int32_t c = std::max(static_cast<int32_t>(xBits & 0x7fffffffU), t.floor) - t.floor;
    return (xBits >> 31) != 0U ? ~c : c;
}

/** The encode table of 255 sorted thresholds (native::ApplyFusedEmaAdam8bitListEncodeTable): the
 *  smallest table whose buckets hold one threshold each, or `fast` false; its buckets cover every
 *  key of [-1, 1] too (`unit`) when that table still fits. */
void BuildEncodeTable(const float* thresholds, native::ApplyFusedEmaAdam8bitListEncodeTable& t)
{
    t.fast = false;
    t.unit = false;
    t.positive = true;
    t.shift = 0;
    t.floor = 0;
    t.lo = 0;
    t.hi = 0;
    uint32_t bits[kApplyFusedEmaAdam8bitListThresholds];
    uint32_t minExponent = 255;
    for (uint32_t k = 0; k < kApplyFusedEmaAdam8bitListThresholds; ++k) {
        std::memcpy(&bits[k], &thresholds[k], sizeof bits[k]);
        const uint32_t exponent = (bits[k] & 0x7fffffffU) >> 23;
        if (exponent < 2U || exponent > 127U) {
            return;  // zero, subnormal, the smallest normal binade, |T| >= 2, inf or NaN
        }
        minExponent = std::min(minExponent, exponent);
        t.positive = t.positive && (bits[k] >> 31) == 0U;
    }
    t.floor = static_cast<int32_t>((minExponent - 1U) << 23);
    const auto keyOf = [&](uint32_t xBits) { return TableKey(t, xBits); };
    int32_t keys[kApplyFusedEmaAdam8bitListThresholds];
    for (uint32_t k = 0; k < kApplyFusedEmaAdam8bitListThresholds; ++k) {
        keys[k] = keyOf(bits[k]);
    }
    const int32_t keyOfMinusOne = keyOf(0xbf800000U);
    const int32_t keyOfOne = keyOf(0x3f800000U);
    for (uint32_t shift = 22; shift >= 1U; --shift) {
        const auto bucket = [&](int32_t key) { return key >> shift; };
        bool single = true;
        for (uint32_t k = 1; k < kApplyFusedEmaAdam8bitListThresholds && single; ++k) {
            single = bucket(keys[k - 1U]) < bucket(keys[k]);
        }
        if (!single) {
            continue;  // a finer table may separate them
        }
        int64_t lo = int64_t{bucket(keys[0])} - 1;
        int64_t hi = int64_t{bucket(keys[kApplyFusedEmaAdam8bitListThresholds - 1U])} + 1;
        const int64_t unitLo = std::min<int64_t>(lo, bucket(keyOfMinusOne));
        const int64_t unitHi = std::max<int64_t>(hi, bucket(keyOfOne));
        if (unitHi - unitLo + 1 <= int64_t{native::kApplyFusedEmaAdam8bitListTableMax}) {
            lo = unitLo;
            hi = unitHi;
            t.unit = true;
        } else if (hi - lo + 1 > int64_t{native::kApplyFusedEmaAdam8bitListTableMax}) {
            return;  // finer tables are larger still
        }
        t.shift = shift;
        t.lo = static_cast<int32_t>(lo);
        t.hi = static_cast<int32_t>(hi);
        // runs of empty buckets (the count of the thresholds below, no threshold), each
        // threshold's bucket after its run
        const auto entry = [&](int64_t b, uint32_t base, uint32_t low) {
            const int64_t value = (int64_t{base + 1U} << 24) - low - b * (int64_t{1} << shift);
            return static_cast<uint32_t>(value);  // mod 2^32
        };
        uint32_t* next = t.entries;
        int64_t b = lo;
        for (uint32_t k = 0; k <= kApplyFusedEmaAdam8bitListThresholds; ++k) {
            const int64_t end = k < kApplyFusedEmaAdam8bitListThresholds ? bucket(keys[k]) : hi + 1;
            for (; b < end; ++b) {
                *next++ = entry(b, k, 1U << shift);
            }
            if (k < kApplyFusedEmaAdam8bitListThresholds) {
                *next++ = entry(b, k, static_cast<uint32_t>(keys[k]) & ((1U << shift) - 1U));
                ++b;
            }
        }
        t.fast = true;
        return;
    }
}

/** The byte planes of a `unit` encode table of 255 sorted thresholds
 *  (native::ApplyFusedEmaAdam8bitListEncodePlanes), or `fast` false: the buckets of [-1, 1] at
 *  level one, each split into the fewest power-of-two buckets that hold one threshold each. */
void BuildEncodePlanes(const float* thresholds,
                       const native::ApplyFusedEmaAdam8bitListEncodeTable& t,
                       native::ApplyFusedEmaAdam8bitListEncodePlanes& p)
{
    constexpr uint32_t kShift = native::kApplyFusedEmaAdam8bitListPlaneShift;
    constexpr int64_t kEntries = native::kApplyFusedEmaAdam8bitListPlaneEntries;
    p.fast = false;
    if (!t.fast || !t.unit) {
        return;
    }
    int32_t keys[kApplyFusedEmaAdam8bitListThresholds];
    for (uint32_t k = 0; k < kApplyFusedEmaAdam8bitListThresholds; ++k) {
        uint32_t bits;
        std::memcpy(&bits, &thresholds[k], sizeof bits);
        keys[k] = TableKey(t, bits);
    }
    const int32_t lo = TableKey(t, 0xbf800000U) >> kShift;  // the buckets of -1 and 1
    const int32_t hi = TableKey(t, 0x3f800000U) >> kShift;
    if (int64_t{hi} - lo + 1 > int64_t{native::kApplyFusedEmaAdam8bitListPlaneBuckets}) {
        return;
    }
    int64_t next = 0;  // level two's next free entry
    uint32_t below = 0;  // thresholds below the current bucket's start
    for (int32_t b = lo; b <= hi; ++b) {
        uint32_t first = 0;
        uint32_t end = 0;  // b's thresholds: keys[first .. end)
        for (uint32_t k = 0; k < kApplyFusedEmaAdam8bitListThresholds; ++k) {
            if ((keys[k] >> kShift) < b) {
                first = k + 1U;
            }
            if ((keys[k] >> kShift) <= b) {
                end = k + 1U;
            }
        }
        uint32_t shift = kShift;
        const auto apart = [&](uint32_t s) {
            for (uint32_t k = first + 1U; k < end; ++k) {
                if ((keys[k - 1U] >> s) == (keys[k] >> s)) {
                    return false;
                }
            }
            return true;
        };
        while (shift > 0U && !apart(shift)) {
            --shift;
        }
        const int64_t count = int64_t{1} << (kShift - shift);
        if (!apart(shift) || next + count > kEntries) {
            return;
        }
        const int64_t j0 = int64_t{b} * count;  // b's first bucket K >> shift
        const auto offset = static_cast<uint32_t>(((next - j0) % kEntries + kEntries) % kEntries);
        const uint32_t level1 = offset | shift << 9U;
        const auto at = static_cast<uint32_t>(b) % native::kApplyFusedEmaAdam8bitListPlaneBuckets;
        p.first[0][at] = static_cast<uint8_t>(level1);
        p.first[1][at] = static_cast<uint8_t>(level1 >> 8U);
        for (int64_t q = 0; q < count; ++q) {
            const int64_t start = (j0 + q) * (int64_t{1} << shift);
            const int64_t stop = start + (int64_t{1} << shift);
            while (below < kApplyFusedEmaAdam8bitListThresholds && keys[below] < start) {
                ++below;
            }
            const int64_t low = below < kApplyFusedEmaAdam8bitListThresholds && keys[below] < stop
                                    ? keys[below] - start
                                    : int64_t{1} << shift;
            // the table's folded entry (BuildEncodeTable), mod 2^32
            const auto entry = static_cast<uint32_t>((int64_t{below + 1U} << 24) - low - start);
            for (uint32_t k = 0; k < 4U; ++k) {
                p.second[k][next + q] = static_cast<uint8_t>(entry >> (8U * k));
            }
        }
        next += count;
    }
    p.fast = true;
}

/** A map, its thresholds and their binary-search levels
 *  (native::ApplyFusedEmaAdam8bitListSearchLevels). */
native::ApplyFusedEmaAdam8bitListCodebook CodebookOf(const float* map)
{
    native::ApplyFusedEmaAdam8bitListCodebook book{};
    std::copy(map, map + kApplyFusedEmaAdam8bitListMapSize, book.map);
    for (uint32_t j = 0; j < kApplyFusedEmaAdam8bitListMapSize; ++j) {
        uint32_t bits;
        std::memcpy(&bits, &map[j], sizeof bits);
        for (uint32_t k = 0; k < 4U; ++k) {
            book.planes[k][j] = static_cast<uint8_t>(bits >> (8U * k));
        }
    }
    BuildApplyFusedEmaAdam8bitListEncodeThresholds(book.map, book.thresholds);
    book.positiveFloor = ApplyFusedEmaAdam8bitListPositiveFloor(book.map, book.thresholds);
    native::ApplyFusedEmaAdam8bitListSearchLevels& l = book.levels;
    float* const levels[] = {l.l128, l.l64, l.l32, l.l16, l.l8, l.l4, l.l2, l.l1};
    uint32_t s = 128;
    for (float* level : levels) {
        for (uint32_t j = 0; j < 128U / s; ++j) {
            level[j] = book.thresholds[s - 1U + j * 2U * s];
        }
        s >>= 1U;
    }
    BuildEncodeTable(book.thresholds, book.table);
    BuildEncodePlanes(book.thresholds, book.table, book.tablePlanes);
    return book;
}

/** The last launch's maps on this thread and their codebooks: a launch whose maps are the same
 *  bits reuses them (the maps are constant inputs, and building both codebooks cost more than
 *  the update of a small launch). */
struct CodebookCache {
    bool valid = false;
    float mapM[kApplyFusedEmaAdam8bitListMapSize];
    float mapV[kApplyFusedEmaAdam8bitListMapSize];
    native::ApplyFusedEmaAdam8bitListCodebook m;
    native::ApplyFusedEmaAdam8bitListCodebook v;
};

const CodebookCache& CodebooksOf(const float* mapM, const float* mapV)
{
    // on the heap: a 40 KiB thread_local would take static TLS a dlopen'ed module may not have
    thread_local std::unique_ptr<CodebookCache> cache;
    if (!cache) {
        cache = std::make_unique<CodebookCache>();
    }
    CodebookCache& c = *cache;
    if (!c.valid || std::memcmp(c.mapM, mapM, sizeof c.mapM) != 0 ||
        std::memcmp(c.mapV, mapV, sizeof c.mapV) != 0) {
        c.valid = false;  // until both are built (CodebookOf does not throw; no half state stays)
        std::memcpy(c.mapM, mapM, sizeof c.mapM);
        std::memcpy(c.mapV, mapV, sizeof c.mapV);
        c.m = CodebookOf(mapM);
        c.v = CodebookOf(mapV);
        c.valid = true;
    }
    return c;
}

/** The loop for `shape` on `isa` (AVX-512 decoding by byte planes: the VBMI loops). */
native::ApplyFusedEmaAdam8bitListLoop LoopFor(
    Isa isa, bool bytePlanes, const native::ApplyFusedEmaAdam8bitListLoopShape& shape)
{
    using Pick = native::ApplyFusedEmaAdam8bitListLoop (*)(
        const native::ApplyFusedEmaAdam8bitListLoopShape&);
    const Pick byIsa[kIsaCount] = {
        &native::ApplyFusedEmaAdam8bitListLoopAvx512, &native::ApplyFusedEmaAdam8bitListLoopAvx2,
        &native::ApplyFusedEmaAdam8bitListLoopNeon, &native::ApplyFusedEmaAdam8bitListLoopGeneric};
    const Pick pick = bytePlanes ? &native::ApplyFusedEmaAdam8bitListLoopAvx512Vbmi
                                 : byIsa[static_cast<uint32_t>(isa)];
    const native::ApplyFusedEmaAdam8bitListLoop loop = pick(shape);
    if (loop == nullptr) {
        throw std::invalid_argument(std::string("native 8-bit EMA-Adam kernel: no '") +
                                    IsaName(isa) + "' loop for these storage types in this build");
    }
    return loop;
}

/** The blocks of all entries as one sequence, cut into runs of about `runBlocks` blocks (a run
 *  ends early only at the end of the sequence). */
class BlockRuns {
public:
    BlockRuns(const uint64_t* numels, uint32_t count, uint32_t threads) : prefix_(count + 1U)
    {
        prefix_[0] = 0;
        for (uint32_t i = 0; i < count; ++i) {
            prefix_[i + 1U] = prefix_[i] + ApplyFusedEmaAdam8bitListBlocks(numels[i]);
        }
        const uint64_t total = prefix_.back();
        const uint64_t target = total / (uint64_t{threads} * kNativeChunksPerThread);
        runBlocks_ = threads > 1U ? std::max<uint64_t>(target, 1U) : std::max<uint64_t>(total, 1U);
        runs_ = (total + runBlocks_ - 1U) / runBlocks_;
    }

    uint64_t Count() const { return runs_; }
    uint64_t Blocks() const { return prefix_.back(); }

    ApplyFusedEmaAdam8bitListChunk Run(uint64_t i) const
    {
        const uint64_t begin = i * runBlocks_;
        const uint64_t count = std::min(runBlocks_, Blocks() - begin);
        // the non-empty entry holding block `begin`: the last entry starting at or before it
        const auto entry = static_cast<uint32_t>(
            std::upper_bound(prefix_.begin(), prefix_.end(), begin) - prefix_.begin() - 1);
        return {entry, begin - prefix_[entry], count};
    }

private:
    std::vector<uint64_t> prefix_;  // prefix_[i]: blocks of the entries before entry i
    uint64_t runBlocks_ = 1;
    uint64_t runs_ = 0;
};

}  // namespace

bool ApplyFusedEmaAdam8bitListBytePlaneDecode(Isa isa, const NativeOptions& options)
{
    return isa == Isa::kAvx512 && options.bytePlanes && CpuHasAvx512Vbmi();
}

namespace {

/** What ASCEND_EMA_ADAM_8BIT_ENCODE asks for: kAuto when unset or empty. Throws
 *  std::invalid_argument for another value than the encodes' names. */
Adam8bitEncode EncodeOfEnvironment()
{
    const char* env = std::getenv("ASCEND_EMA_ADAM_8BIT_ENCODE");
    if (env == nullptr || *env == '\0') {
        return Adam8bitEncode::kAuto;
    }
    Adam8bitEncode e;
    if (Adam8bitEncodeOfName(env, e)) {
        return e;
    }
    throw std::invalid_argument(std::string("ASCEND_EMA_ADAM_8BIT_ENCODE='") + env +
                                "': expected 'table', 'planes' or 'search' (or unset: the fastest "
                                "here)");
}

/** The measured choice per instruction set and decode: kAuto (0, a static's zero
 *  initialisation) until measured. */
std::atomic<Adam8bitEncode> measuredEncode[kIsaCount][2];

std::atomic<Adam8bitEncode>& MeasuredEncodeOf(Isa isa, bool bytePlanes)
{
    return measuredEncode[static_cast<uint32_t>(isa)][bytePlanes ? 1 : 0];
}

}  // namespace

Adam8bitEncode ApplyFusedEmaAdam8bitListMeasuredEncode(Isa isa, bool bytePlanes)
{
    return MeasuredEncodeOf(isa, bytePlanes).load();
}

namespace {

/** A launch's encode, and whether the choice is the measurement's (kAuto, no
 *  ASCEND_EMA_ADAM_8BIT_ENCODE, AVX-512). Reads the variable once. Throws std::invalid_argument
 *  for kPlanes where the loops are not the VBMI ones. */
struct EncodeChoice {
    Adam8bitEncode encode;
    bool measured;
};

EncodeChoice ChooseEncode(Isa isa, const NativeOptions& options)
{
    const bool bytePlanes = ApplyFusedEmaAdam8bitListBytePlaneDecode(isa, options);
    Adam8bitEncode asked = options.encode8bit;
    const char* by = "encode";
    if (asked == Adam8bitEncode::kAuto) {
        asked = EncodeOfEnvironment();
        by = "ASCEND_EMA_ADAM_8BIT_ENCODE";
    }
    if (asked == Adam8bitEncode::kPlanes && !bytePlanes) {
        throw std::invalid_argument(std::string(by) +
                                    "='planes' needs the AVX-512 VBMI loops (byte-plane decode); "
                                    "this launch's: " + IsaName(isa) + ", decode by gathers");
    }
    if (asked != Adam8bitEncode::kAuto) {
        return {asked, false};
    }
    if (isa != Isa::kAvx512) {
        // their searches gather (AVX2) or load (NEON, portable) per level
        return {Adam8bitEncode::kTable, false};
    }
    // until measured (the launch measures first): the table
    const Adam8bitEncode measured = ApplyFusedEmaAdam8bitListMeasuredEncode(isa, bytePlanes);
    return {measured == Adam8bitEncode::kAuto ? Adam8bitEncode::kTable : measured, true};
}

/** The loops' way of an encode chosen by ChooseEncode. */
native::ApplyFusedEmaAdam8bitListEncodeWay WayOf(Adam8bitEncode e)
{
    using Way = native::ApplyFusedEmaAdam8bitListEncodeWay;
    return e == Adam8bitEncode::kSearch ? Way::kSearch
           : e == Adam8bitEncode::kPlanes ? Way::kPlanes
                                          : Way::kTable;
}

}  // namespace

Adam8bitEncode ApplyFusedEmaAdam8bitListEncodeOf(Isa isa, const NativeOptions& options)
{
    return ChooseEncode(isa, options).encode;
}

ApplyFusedEmaAdam8bitListEncodeTables ApplyFusedEmaAdam8bitListEncodeTablesOf(const float* map)
{
    const auto book = std::make_unique<native::ApplyFusedEmaAdam8bitListCodebook>(CodebookOf(map));
    const native::ApplyFusedEmaAdam8bitListEncodeTable& t = book->table;
    return {t.fast, t.unit, book->tablePlanes.fast,
            t.fast ? static_cast<uint32_t>(t.hi - t.lo + 1) : 0U};
}

void ApplyFusedEmaAdam8bitListEncodeThresholds(const float* map, float* thresholds)
{
    BuildApplyFusedEmaAdam8bitListEncodeThresholds(map, thresholds);
}

std::vector<ApplyFusedEmaAdam8bitListChunk> ApplyFusedEmaAdam8bitListNativeChunks(
    const uint64_t* numels, uint32_t count, uint32_t threads)
{
    const BlockRuns runs(numels, count, threads);
    std::vector<ApplyFusedEmaAdam8bitListChunk> out;
    for (uint64_t i = 0; i < runs.Count(); ++i) {
        out.push_back(runs.Run(i));
    }
    return out;
}

namespace {

/** Blocks of the encode measurement: 8,192 elements, 126 KiB of streams (in L2). */
constexpr uint64_t kMeasureBlocks = 32;

/**
 * Which encode runs fastest here, for the AVX-512 loops of one decode: the loop with each encode
 * it has (the table, its byte planes with the VBMI loops, the search) on the same scratch blocks
 * (fp32, the EMA, `like`'s scalars and maps), five interleaved rounds on this thread, the fastest
 * of each compared (ties to the earlier). Once per process, instruction set and decode (about a
 * millisecond): whether a 16-lane gather beats permutes differs by CPU (every way gives the same
 * codes), and no CPU flag says which.
 */
Adam8bitEncode MeasureEncode(Isa isa, bool bytePlanes, uint32_t mode,
                  const native::ApplyFusedEmaAdam8bitListJob& like)
{
    constexpr uint64_t n = kMeasureBlocks * kApplyFusedEmaAdam8bitListBlock;
    std::vector<float> g(n), p(n), s(n);
    std::vector<float> mScale(kMeasureBlocks, 1e-3f), vScale(kMeasureBlocks, 1e-6f);  // reciprocal
    std::vector<uint8_t> m(n), v(n);
    uint32_t state = 0x9e3779b9U;
    const auto next = [&state] {
        state = state * 1664525U + 1013904223U;
        return state;
    };
    for (uint64_t i = 0; i < n; ++i) {
        g[i] = (static_cast<float>(next() >> 8) * 0x1p-24f - 0.5f) * 1e-3f;
        p[i] = s[i] = static_cast<float>(next() >> 8) * 0x1p-24f - 0.5f;
        m[i] = static_cast<uint8_t>(next() >> 24);
        v[i] = static_cast<uint8_t>(next() >> 24);
    }
    native::ApplyFusedEmaAdam8bitListLoopShape shape{};
    shape.types = {kApplyFusedEmaAdam8bitListDtype_FP32, kApplyFusedEmaAdam8bitListDtype_FP32,
                   false, kApplyFusedEmaAdam8bitListDtype_FP32};
    shape.mode = mode;
    shape.ema = true;
    const native::ApplyFusedEmaAdam8bitListLoop loop = LoopFor(isa, bytePlanes, shape);
    const uint64_t numel = n;
    const void* grads[] = {g.data()};
    void* vars[] = {p.data()};
    void* ms[] = {m.data()};
    void* vs[] = {v.data()};
    void* mScales[] = {mScale.data()};
    void* vScales[] = {vScale.data()};
    void* ss[] = {s.data()};
    native::ApplyFusedEmaAdam8bitListJob job = like;
    job.gradDivisor = 1.0f;
    job.bytePlanes = bytePlanes;
    job.numels = &numel;
    job.grads = grads;
    job.vars = vars;
    job.ms = ms;
    job.vs = vs;
    job.mAbsmaxes = mScales;
    job.vAbsmaxes = vScales;
    job.ss = ss;
    job.copies = nullptr;
    const Adam8bitEncode ways[] = {Adam8bitEncode::kTable, Adam8bitEncode::kPlanes,
                                   Adam8bitEncode::kSearch};
    const bool planes = bytePlanes && like.m->tablePlanes.fast && like.v->tablePlanes.fast;
    std::chrono::steady_clock::duration best[3];
    std::fill(std::begin(best), std::end(best), std::chrono::steady_clock::duration::max());
    for (int round = 0; round < 5; ++round) {
        for (int w = 0; w < 3; ++w) {
            if (ways[w] == Adam8bitEncode::kPlanes && !planes) {
                continue;
            }
            job.encode = WayOf(ways[w]);
            const auto start = std::chrono::steady_clock::now();
            loop(job, 0, 0, kMeasureBlocks);
            best[w] = std::min(best[w], std::chrono::steady_clock::now() - start);
        }
    }
    return ways[std::min_element(std::begin(best), std::end(best)) - std::begin(best)];
}

}  // namespace

uint32_t RunApplyFusedEmaAdam8bitListNative(const ApplyFusedEmaAdam8bitListTilingData& t,
                                            const ApplyFusedEmaAdam8bitListDtypes& dtypes,
                                            const ApplyFusedEmaAdam8bitListBuffers& b,
                                            const NativeOptions& options)
{
    const bool entries = b.tensorNum > 0;  // an empty launch may come with null arrays
    if ((t.hasLrTensor != 0U && b.lr == nullptr) ||
        (t.hasEmaDecayTensor != 0U && b.emaDecay == nullptr) ||
        (t.hasGradScale != 0U && b.gradScale == nullptr) ||
        (t.hasFoundInf != 0U && b.foundInf == nullptr) || b.step == nullptr ||
        b.qmapM == nullptr || b.qmapV == nullptr || t.tensorNum != b.tensorNum ||
        (entries && (b.numels == nullptr || b.grads == nullptr || b.vars == nullptr ||
                     b.ms == nullptr || b.vs == nullptr || b.mAbsmaxes == nullptr ||
                     b.vAbsmaxes == nullptr || (t.hasEma != 0U && b.ss == nullptr) ||
                     (dtypes.hasCopy && b.copies == nullptr)))) {
        throw std::invalid_argument("native 8-bit list kernel: the buffers do not match the tiling");
    }
    native::ApplyFusedEmaAdam8bitListLoopShape shape{};
    shape.types = dtypes;
    shape.mode = t.hyper.mode;
    shape.prologue = t.hasGradScale != 0U || t.maximize != 0U ? 1U : 0U;
    shape.ema = t.hasEma != 0U;
    const Isa isa = ResolveIsa(options.isa);
    const bool bytePlanes = ApplyFusedEmaAdam8bitListBytePlaneDecode(isa, options);
    const EncodeChoice encode = ChooseEncode(isa, options);  // validates the environment
    const native::ApplyFusedEmaAdam8bitListLoop loop = LoopFor(isa, bytePlanes, shape);

    // The kernels' launch prologue: found_inf first (nonzero, NaN included: nothing more is read
    // or written), step only when it is used, the lr and decay tensors replacing the attributes.
    HostScalarReader read{b};
    const LaunchScalars launch = LaunchPrologue(t, read);
    uint64_t elements = 0;
    for (uint32_t i = 0; i < b.tensorNum; ++i) {
        elements += b.numels[i];
    }
    if (launch.skip || elements == 0) {
        return 0;
    }
    const CodebookCache& books = CodebooksOf(b.qmapM, b.qmapV);
    native::ApplyFusedEmaAdam8bitListJob job{};
    job.k = launch.k;
    job.gradDivisor = launch.gradDivisor;
    job.m = &books.m;
    job.v = &books.v;
    job.bytePlanes = bytePlanes;
    job.encode = WayOf(encode.encode);
    if (encode.measured && books.m.table.fast && books.v.table.fast) {
        std::atomic<Adam8bitEncode>& measured = MeasuredEncodeOf(isa, bytePlanes);
        if (measured.load() == Adam8bitEncode::kAuto) {
            measured.store(MeasureEncode(isa, bytePlanes, shape.mode, job));
        }
        job.encode = WayOf(measured.load());
    }
    job.numels = b.numels;
    job.grads = b.grads;
    job.vars = b.vars;
    job.ms = b.ms;
    job.vs = b.vs;
    job.mAbsmaxes = b.mAbsmaxes;
    job.vAbsmaxes = b.vAbsmaxes;
    job.ss = t.hasEma != 0U ? b.ss : nullptr;
    job.copies = b.copies;
    const uint32_t threads = NativeThreadsFor(elements, options.threads, options.minElemsPerThread);
    const BlockRuns runs(b.numels, b.tensorNum, threads);
    return ParallelChunks(runs.Count(), threads, NativeWakes(elements, options.minElemsPerThread),
                          [&](uint64_t i) {
                              const ApplyFusedEmaAdam8bitListChunk c = runs.Run(i);
                              loop(job, c.entry, c.block, c.count);
                          });
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
