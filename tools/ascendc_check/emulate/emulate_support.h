/**
 * @file emulate_support.h
 * @brief tools/ascendc_check/run.py --emulate drivers: GM in memory shared with the forked blocks, seeded inputs, the
 *        list kernels' lists in CANN's launcher layout and their one-element inputs, the launch of every block on
 *        the emulated core (hazards fail the block), and the case files compare.py holds against the golden
 *        (<out>/<case>/meta.txt, <tensor>.in / <tensor>.out raw little-endian) with the meta lines they share.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_EMULATE_SUPPORT_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_EMULATE_SUPPORT_H

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "data_type.h"
#include "ema_adam_attrs.h"
#include "emu_core.h"
#include "run_support.h"

namespace ascendc_emulate {

/** Bytes in memory shared with the forked blocks (their GM writes reach the parent). */
class SharedBytes {
public:
    SharedBytes() = default;
    explicit SharedBytes(uint64_t bytes);
    SharedBytes(const SharedBytes&) = delete;
    SharedBytes& operator=(const SharedBytes&) = delete;
    SharedBytes(SharedBytes&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
    ~SharedBytes();
    uint8_t* data() const { return static_cast<uint8_t*>(p_); }
    uint64_t size() const { return n_; }

private:
    void* p_ = nullptr;
    uint64_t n_ = 0;
};

/** Element types by name, as compare.py reads them. */
enum class Dt { kF32, kF16, kBf16 };
uint32_t DtBytes(Dt dt);
const char* DtName(Dt dt);
/** The element type of one of the operators' float dtypes. */
inline Dt DtOf(ascend_ema_adam::DataType d)
{
    return d == ascend_ema_adam::DataType::kFloat32   ? Dt::kF32
           : d == ascend_ema_adam::DataType::kFloat16 ? Dt::kF16
                                                      : Dt::kBf16;
}
/** Writes `v` as element i of `out` (dt; 16-bit ones rounded to nearest even). */
void PutFloat(uint8_t* out, uint64_t i, Dt dt, float v);

/** A seeded generator of inputs: `n` values of dt, uniform in +-[lo, hi) (non-negative when !sign), never all 0. */
class Inputs {
public:
    explicit Inputs(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
    void Fill(uint8_t* out, uint64_t n, Dt dt, float lo, float hi, bool sign);

private:
    uint64_t Next();
    uint64_t state_;
};

/** The counters of a launch, summed over its blocks, and how its blocks ended. */
struct LaunchOutcome {
    int failedBlocks = 0;
    uint64_t hazards = 0;
    ascendc_emu::Counters total;
    ascendc_emu::Counters perCoreMax;  // the busiest core's counters (element-wise maximum)
};

/** Runs body() once per block on the emulated core (each block a forked process, as --run), the device in
 *  saturation mode when `saturation`; a block with a hazard fails. */
template <class Body>
LaunchOutcome Launch(const char* what, uint32_t blockDim, uint64_t tilingKey, bool saturation, Body body);

/** Writes a case for compare.py: meta lines and each tensor's bytes. */
class CaseWriter {
public:
    CaseWriter(const std::string& root, const std::string& name);
    void Meta(const std::string& key, const std::string& value);
    void Meta(const std::string& key, double value);
    void Tensor(const std::string& file, const uint8_t* data, uint64_t bytes);
    ~CaseWriter();

private:
    std::string dir_;
    std::FILE* meta_ = nullptr;
};

/** The kernel's source roots for hazard call sites, from $AEA_EMU_SOURCE_ROOTS (':'-separated). */
void UseSourceRootsFromEnvironment();

/** A driver's arguments, <out dir> <seed> (`ok` false after the usage line); takes the source roots from the
 *  environment too. */
struct DriverArgs {
    DriverArgs(int argc, char** argv);
    bool ok = false;
    std::string out;
    uint64_t seed = 0;
};
/** A driver's last line and exit status: 0 when no block failed. */
int DriverResult(const char* program, int launches, int failedBlocks);
/** The step of case `index` (1 to 1000, from the seed). */
int64_t SeededStep(uint64_t seed, int index);

/** The Adam attributes after lr and ema_decay as a case's meta lines (beta1 ... weight_decay), of ours or ops-nn's
 *  attribute struct. */
template <class Attrs>
void MetaAdamAttrs(CaseWriter& w, const Attrs& attrs)
{
    w.Meta("beta1", static_cast<double>(attrs.beta1));
    w.Meta("beta2", static_cast<double>(attrs.beta2));
    w.Meta("eps", static_cast<double>(attrs.eps));
    w.Meta("mode", static_cast<double>(attrs.mode));
    w.Meta("bias_correction", attrs.biasCorrection ? 1.0 : 0.0);
    w.Meta("weight_decay", static_cast<double>(attrs.weightDecay));
}
/** A launch's tiling as a case's meta lines: the overflow mode, the tiling key, the platform's cores, the cores the
 *  launch uses, the chunk in elements. */
void MetaTiling(CaseWriter& w, bool saturation, uint64_t tilingKey, uint32_t platformCores, uint32_t cores,
                uint64_t chunk);
/** A launch's outcome as a case's meta lines (failed_blocks, hazards and the counters). */
void MetaOutcome(CaseWriter& w, const LaunchOutcome& o);

// ---- the list kernels' launches ------------------------------------------------------------------------------
/** One list: an arena per entry (shared with the blocks) and its descriptor in CANN's launcher layout. */
struct List {
    std::vector<SharedBytes> entries;
    std::vector<uint64_t> words;
};
/** A list of entries of `counts[i]` elements of `elemBytes` each. */
List MakeList(const std::vector<uint64_t>& counts, uint32_t elemBytes);
/** A list launch's meta lines: its kernel, entries, the param and grad dtypes, the copies' ("" without), ema and
 *  maximize. */
void MetaList(CaseWriter& w, const char* kernel, size_t entries, Dt param, Dt grad, const Dt* copy, bool ema,
              bool maximize);

/**
 * A launch's lists by name. In(name) is a list's descriptor for the kernel's input, Out(name) a separate descriptor of
 * the same tensors for its in-place output, as on the device; an absent list is the empty list (the lone word 8).
 */
class Lists {
public:
    void Add(const std::string& name, List list);
    bool Has(const std::string& name) const { return lists_.count(name) != 0; }
    /** Entry i of list `name`. */
    uint8_t* Entry(const std::string& name, size_t i) { return lists_.at(name).entries[i].data(); }
    uint8_t* In(const std::string& name);
    uint8_t* Out(const std::string& name);
    /** Every entry as <list>_<i><suffix>; grads only with `inputs` (it is not updated). */
    void Write(CaseWriter& w, const char* suffix, bool inputs);

private:
    std::map<std::string, List> lists_;
    std::map<std::string, std::vector<uint64_t>> outWords_;
    uint64_t empty_ = sizeof(uint64_t);
};

/** The list kernels' one-element inputs in memory shared with the blocks: step (int64), grad_scale, found_inf, lr and
 *  ema_decay (fp32); each optional one null where the launch leaves it absent. */
class ListScalars {
public:
    static constexpr float kGradScale = 512.0f, kLr = 2e-3f, kEmaDecay = 0.99f;
    struct Given {
        bool gradScale, foundInf, lr, emaDecay;
    };
    ListScalars(int64_t step, float foundInf, Given given);
    uint8_t* Step() const { return bytes_.data(); }
    uint8_t* GradScale() const { return given_.gradScale ? bytes_.data() + 8 : nullptr; }
    uint8_t* FoundInf() const { return given_.foundInf ? bytes_.data() + 12 : nullptr; }
    uint8_t* Lr() const { return given_.lr ? bytes_.data() + 16 : nullptr; }
    uint8_t* EmaDecay() const { return given_.emaDecay ? bytes_.data() + 20 : nullptr; }
    /** Their meta lines (grad_scale, found_inf, step, lr, ema_decay; lr and ema_decay the attributes' where absent),
     *  then MetaAdamAttrs. */
    void Meta(CaseWriter& w, const ascend_ema_adam::Attrs& attrs) const;

private:
    SharedBytes bytes_{64};
    int64_t step_;
    float foundInf_;
    Given given_;
};

// ---- implementation of Launch ------------------------------------------------------------------------------
struct BlockSlot {
    ascendc_emu::Counters counters;
};

template <class Body>
LaunchOutcome Launch(const char* what, uint32_t blockDim, uint64_t tilingKey, bool saturation, Body body)
{
    SharedBytes slots(sizeof(BlockSlot) * (blockDim == 0 ? 1 : blockDim));
    auto* slot = reinterpret_cast<BlockSlot*>(slots.data());
    LaunchOutcome out;
    out.failedBlocks = ascendc_check::RunBlocks(what, blockDim, tilingKey, [&] {
        ascendc_emu::SetSaturationMode(saturation);
        body();
        ascendc_emu::EndBlock();
        slot[block_idx].counters = ascendc_emu::BlockCounters();
        std::fflush(stdout);
        if (ascendc_emu::BlockCounters().hazards != 0) _exit(3);
    }, false);
    for (uint32_t b = 0; b < blockDim; ++b) {
        const ascendc_emu::Counters& c = slot[b].counters;
        ascendc_emu::Counters& t = out.total;
        ascendc_emu::Counters& m = out.perCoreMax;
        t.vectorInstructions += c.vectorInstructions;
        t.mte2Bytes += c.mte2Bytes;
        t.mte3Bytes += c.mte3Bytes;
        t.mte2Copies += c.mte2Copies;
        t.mte3Copies += c.mte3Copies;
        t.flags += c.flags;
        t.barriers += c.barriers;
        t.hazards += c.hazards;
        m.vectorInstructions = std::max(m.vectorInstructions, c.vectorInstructions);
        m.mte2Bytes = std::max(m.mte2Bytes, c.mte2Bytes);
        m.mte3Bytes = std::max(m.mte3Bytes, c.mte3Bytes);
        m.mte2Copies = std::max(m.mte2Copies, c.mte2Copies);
        m.mte3Copies = std::max(m.mte3Copies, c.mte3Copies);
    }
    out.hazards = out.total.hazards;
    return out;
}

}  // namespace ascendc_emulate

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_EMULATE_SUPPORT_H
