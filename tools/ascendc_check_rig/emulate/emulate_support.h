/**
 * @file emulate_support.h
 * @brief tools/ascendc_check --emulate drivers: GM in memory shared with the forked blocks, seeded inputs, the
 *        launch of every block on the emulated core (hazards fail the block), and the case files compare.py
 *        holds against the golden (<out>/<case>/meta.txt, <tensor>.in / <tensor>.out raw little-endian).
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
