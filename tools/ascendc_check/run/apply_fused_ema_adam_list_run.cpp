// tools/ascendc_check/run.py --run driver for op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list.cpp: the list kernel compiled against
// the real AscendC headers (CPU-debug mode, do-nothing intrinsics that report their GM ranges) runs every block of
// every tiling key x {AMSGrad off/on} x {grad_scale absent/given} x {found_inf absent/0/1/NaN} (maximize, mode and
// bias correction varied along), on three list layouts, with the tilings the host computes (op_host
// ComputeApplyFusedEmaAdamListTiling), the lists written in GM as CANN's launcher writes a DYNAMIC input, decoded by
// the real ListTensorDesc.
// ascendc-check: run-sources op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
//
// Self-tests of this driver (`tools/ascendc_check/run.py --run` runs them: each must fail, for the reason given):
// ascendc-check: driver-self-test --break=mixed-ranks vars\[2\] elements \[24, 960\) never read
// ascendc-check: driver-self-test --break=ub-formula \[InitBuffer\].*exceeds the limit 196608
// ascendc-check: driver-self-test --break=core-boundary block 0 read grads\[\d+\] elements .*outside its share
// ascendc-check: driver-self-test --break=found-inf-ignored block 0 touched list descriptors, step, grad_scale
// ascendc-check: driver-self-test --break=found-inf-ignored-unprotected found_inf = 1: the blocks issued \d+ GM copies
// ascendc-check: driver-self-test --break=absent-list-opened block 0 touched the page after the empty list
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "apply_fused_ema_adam_list_tiling.h"
#include "gm_coverage.h"
#include "kernel_entries.h"
#include "launcher_list.h"
#include "run_support.h"

// 1: this file is compiled by apply_fused_ema_adam_list_v2_run.cpp, the driver of the V2 entry (lr / ema_decay
// tensors, ss optional); 0: the driver of the V1 entry.
#ifndef AEA_LIST_RUN_V2
#define AEA_LIST_RUN_V2 0
#endif

namespace {

using ascend_ema_adam::DataType;
using ascend_ema_adam::DataTypeName;
using ascend_ema_adam::DataTypeSize;
using ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListAttrs;
using ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListDtypes;
using ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListOptions;
using ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListTilingResult;
using ascend_ema_adam::Platform;
using ascendc_check::GmTensor;

const char* const kVerifies =
    "run: list kernel: every block of every launch runs the real class library in CPU-debug mode (TPipe/TQue UB\n"
    "run:   accounting, Cast round modes, DataCopyPad and vector operand checks; none may abort) and the real\n"
    "run:   ListTensorDesc decoder on lists in CANN's launcher layout (1-D entries, header high half 1; absent\n"
    "run:   max_vs/model_copies as the empty list, word 8, on a guard page). Checked per launch from the GM ranges\n"
    "run:   of the copy intrinsics: each copy lies inside one tensor, with its dtype's width, at most a chunk long;\n"
    "run:   G, P, M, V, S (, max_v) are read and P, M, V, S (, max_v) (, copy) written exactly once per element;\n"
    "run:   grads are never written, model copies never read; each block moves exactly its share of the host's\n"
    "run:   split (ApplyFusedEmaAdamListCoreSegments). Tensor data is PROT_NONE in the blocks (only copies touch it); "
    "with\n"
    "run:   found_inf nonzero also every list, step and grad_scale: no copy and no other GM access happens.\n"
    "run:   NOT verified: numerical results (the intrinsics do nothing; the twin tests hold the kernel to the\n"
    "run:   golden), UB addresses and dependencies between pipes (no instruction model), the device compiler.\n"
#if AEA_LIST_RUN_V2
    "run: V2 entry: also launches without the EMA (ss and ssRef the empty list before an inaccessible page: never\n"
    "run:   opened, S neither read nor written) and with lr / ema_decay as one-element GM tensors (scalar reads)\n"
#endif
    ;

enum class FoundInf { kAbsent, kZero, kOne, kNaN };
const FoundInf kFoundInfs[] = {FoundInf::kAbsent, FoundInf::kZero, FoundInf::kOne, FoundInf::kNaN};

const char* FoundInfName(FoundInf f)
{
    switch (f) {
        case FoundInf::kAbsent: return "absent";
        case FoundInf::kZero: return "0";
        case FoundInf::kOne: return "1";
        case FoundInf::kNaN: return "NaN";
    }
    return "?";
}

/** What a driver self-test breaks (--break=...); kNone for the real runs. */
enum class Break { kNone, kMixedRanks, kUbFormula, kCoreBoundary, kFoundInfIgnored, kFoundInfIgnoredUnprotected,
                   kAbsentListOpened, kAbsentEmaOpened };

/** Pages of host memory standing in for GM; Protect() makes them inaccessible (in a forked block). */
class Pages {
public:
    explicit Pages(size_t bytes) : size_(RoundUp(bytes == 0 ? 1 : bytes, PageSize()))
    {
        void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            throw std::runtime_error("mmap of " + std::to_string(size_) + " bytes failed");
        }
        base_ = static_cast<uint8_t*>(p);
    }
    ~Pages() { munmap(base_, size_); }
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;

    /** `bytes` at the next `align`-aligned offset. */
    uint8_t* Take(size_t bytes, size_t align)
    {
        used_ = RoundUp(used_, align);
        if (used_ + bytes > size_) {
            throw std::logic_error("GM arena too small");
        }
        uint8_t* p = base_ + used_;
        used_ += bytes;
        return p;
    }
    void Protect() const { mprotect(base_, size_, PROT_NONE); }
    uint8_t* Base() const { return base_; }
    size_t Size() const { return size_; }

    static size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
    static size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

private:
    size_t size_;
    size_t used_ = 0;
    uint8_t* base_ = nullptr;
};

/** The empty list CANN's launcher passes for an absent optional dynamic input or output: the lone word 8 (the
 *  pointer array starts right after word 0), as the last word of a page whose successor is inaccessible, so a
 *  kernel that opens it (ListTensorDesc reads word 1) faults. */
struct EmptyList {
    EmptyList() : pages(2 * Pages::PageSize())
    {
        mprotect(Guard(), Pages::PageSize(), PROT_NONE);
        const uint64_t eight = sizeof(uint64_t);
        std::memcpy(Addr(), &eight, sizeof eight);
    }
    uint8_t* Addr() const { return pages.Base() + Pages::PageSize() - sizeof(uint64_t); }
    uint8_t* Guard() const { return pages.Base() + Pages::PageSize(); }
    Pages pages;
};

/** A list in CANN's launcher layout (launcher_list.h), written into `meta`. */
uint8_t* EncodeLauncherList(Pages& meta, const std::vector<uint8_t*>& data,
                            const std::vector<std::vector<uint64_t>>& shapes)
{
    const std::vector<uint64_t> words = ascendc_check::LauncherListWords(data, shapes);
    uint8_t* at = meta.Take(words.size() * sizeof(uint64_t), sizeof(uint64_t));
    std::memcpy(at, words.data(), words.size() * sizeof(uint64_t));
    return at;
}

struct Launch {
    const char* layout;
    Platform platform;
    std::vector<uint64_t> numels;
    ApplyFusedEmaAdamListDtypes dtypes;
    ApplyFusedEmaAdamListOptions options;
    ApplyFusedEmaAdamListAttrs attrs;
    FoundInf foundInf = FoundInf::kAbsent;
    Break broken = Break::kNone;

    /** found_inf is nonzero: the kernel must write nothing, and read nothing but found_inf. */
    bool Skips() const { return foundInf == FoundInf::kOne || foundInf == FoundInf::kNaN; }
};

struct Outcome {
    bool ok = true;
    uint32_t blocks = 0;
    uint64_t copies = 0;
    uint32_t chunk = 0;
    uint32_t ubBytes = 0;
    uint64_t tensorsPerBlock = 0;  // most tensors one block works on
    uint64_t chunksPerBlock = 0;   // most chunks one block moves
};

std::string Describe(const Launch& l, const ApplyFusedEmaAdamListTilingResult& t)
{
    std::string s = "list key " + std::to_string(t.tilingKey) + " (P " + DataTypeName(l.dtypes.param) + ", S " +
                    DataTypeName(l.dtypes.state) + ", G " + DataTypeName(l.dtypes.grad) +
                    (l.dtypes.hasCopy ? std::string(", C ") + DataTypeName(l.dtypes.copy) : std::string()) + ") on " +
                    l.platform.name + " (" + std::to_string(l.platform.vectorCoreNum) + " cores), " + l.layout +
                    " layout (" + std::to_string(l.numels.size()) + " tensors), chunk " +
                    std::to_string(t.data.chunkLength) + (l.options.amsgrad ? ", amsgrad" : ", max_vs absent") +
                    ", grad_scale " + (l.options.gradScale ? "given" : "absent") + ", found_inf = " +
                    FoundInfName(l.foundInf) + (l.attrs.maximize ? ", maximize" : "") + ", mode " +
                    std::to_string(l.attrs.mode) + (l.attrs.biasCorrection ? ", bias correction" : "") +
                    (l.options.ema ? "" : ", ss absent") + (l.options.lrTensor ? ", lr tensor" : "") +
                    (l.options.emaDecayTensor ? ", ema_decay tensor" : "");
    return s;
}

/**
 * The GM of one launch: every tensor of every list in `data` (512-B aligned, at least 512 B apart, so an empty
 * tensor has an address nothing covers), the list descriptors (inputs, then separate descriptors of the same
 * tensors for the in-place outputs, as on the device), step, grad_scale, lr and ema_decay in `meta`, found_inf alone
 * in `flag`.
 */
class LaunchGm {
public:
    static constexpr size_t kGap = 512;

    LaunchGm(const Launch& l, const ApplyFusedEmaAdamListTilingResult& tiling)
        : data_(DataBytes(l)), meta_(MetaBytes(l)), flag_(sizeof(float)), tiling_(tiling.data)
    {
        const DataType p = l.dtypes.param;
        const DataType s = l.dtypes.state;
        const uint8_t rw = ascendc_check::kRead | ascendc_check::kWrite;
        AddList(l, "grads", l.dtypes.grad, ascendc_check::kRead);
        AddList(l, "vars", p, rw);
        AddList(l, "ms", s, rw);
        AddList(l, "vs", s, rw);
        if (l.options.ema) {
            AddList(l, "ss", s, rw);
        }
        if (l.options.amsgrad) {
            AddList(l, "max_vs", s, rw);
        }
        if (l.dtypes.hasCopy) {
            AddList(l, "model_copies", l.dtypes.copy, ascendc_check::kWrite);
        }
        step_ = reinterpret_cast<int64_t*>(meta_.Take(sizeof(int64_t), sizeof(int64_t)));
        *step_ = 3;
        if (l.options.gradScale) {
            gradScale_ = reinterpret_cast<float*>(meta_.Take(sizeof(float), sizeof(float)));
            *gradScale_ = 1024.0f;
        }
        if (l.options.lrTensor) {
            lr_ = reinterpret_cast<float*>(meta_.Take(sizeof(float), sizeof(float)));
            *lr_ = 1e-3f;
        }
        if (l.options.emaDecayTensor) {
            emaDecay_ = reinterpret_cast<float*>(meta_.Take(sizeof(float), sizeof(float)));
            *emaDecay_ = 0.999f;
        }
        if (l.foundInf != FoundInf::kAbsent) {
            foundInf_ = reinterpret_cast<float*>(flag_.Base());
            *foundInf_ = l.foundInf == FoundInf::kZero ? 0.0f
                         : l.foundInf == FoundInf::kOne ? 1.0f
                                                        : std::numeric_limits<float>::quiet_NaN();
        }
    }

    /** The tensors as the coverage check sees them. */
    const std::vector<GmTensor>& Tensors() const { return tensors_; }
    ApplyFusedEmaAdamListTilingData& KernelTiling() { return tiling_; }

    /** Guards the memory the blocks must not touch (and names it for their fault reports). */
    void Guard(bool descriptorsToo) const
    {
        std::vector<ascendc_check::GuardedRegion> guarded = {
            {data_.Base(), data_.Size(), "tensor data (only copies may move it)"},
            {Empty().Guard(), Pages::PageSize(),
             "the page after the empty list of an absent ss, max_vs or model_copies"}};
        if (descriptorsToo) {
            guarded.push_back({meta_.Base(), meta_.Size(),
                               "list descriptors, step, grad_scale, lr and ema_decay (found_inf is nonzero)"});
        }
        ascendc_check::SetGuardedRegions(guarded);
    }
    /** In a block: makes the guarded memory inaccessible. */
    void Protect(bool descriptorsToo) const
    {
        data_.Protect();  // tensor data is moved by copies only, and those do nothing here
        if (descriptorsToo) {
            meta_.Protect();
        }
    }

    /** The kernel on this block, with CANN's argument order (the outputs in the OpDef's order). */
    void RunBlock()
    {
#if AEA_LIST_RUN_V2
        apply_fused_ema_adam_list_v2(In("grads"), In("vars"), In("ms"), In("vs"), In("ss"), In("max_vs"),
                                     In("model_copies"), reinterpret_cast<uint8_t*>(step_),
                                     reinterpret_cast<uint8_t*>(gradScale_), reinterpret_cast<uint8_t*>(foundInf_),
                                     reinterpret_cast<uint8_t*>(lr_), reinterpret_cast<uint8_t*>(emaDecay_),
                                     Out("vars"), Out("ss"), Out("max_vs"), Out("model_copies"), Out("ms"),
                                     Out("vs"), nullptr, reinterpret_cast<uint8_t*>(&tiling_));
#else
        apply_fused_ema_adam_list(In("grads"), In("vars"), In("ms"), In("vs"), In("ss"), In("max_vs"),
                                  In("model_copies"), reinterpret_cast<uint8_t*>(step_),
                                  reinterpret_cast<uint8_t*>(gradScale_), reinterpret_cast<uint8_t*>(foundInf_),
                                  Out("vars"), Out("ss"), Out("max_vs"), Out("model_copies"), Out("ms"), Out("vs"),
                                  nullptr, reinterpret_cast<uint8_t*>(&tiling_));
#endif
    }

private:
    static size_t DataBytes(const Launch& l)
    {
        size_t bytes = 0;
        for (uint64_t n : l.numels) {
            bytes += 7 * (Pages::RoundUp(n * sizeof(float), kGap) + kGap);  // at most 7 lists of <= 4-B elements
        }
        return bytes;
    }
    static size_t MetaBytes(const Launch& l)
    {
        size_t words = 2 + 4;  // word 0 and the last pointer's slack; step, grad_scale, lr and ema_decay
        for (size_t i = 0; i < l.numels.size(); ++i) {
            words += 2 + 2;  // header, dim (a mixed-rank entry one more), pointer
        }
        return 14 * words * sizeof(uint64_t);  // 7 lists, input and output descriptors
    }
    static const EmptyList& Empty()
    {
        static const EmptyList empty;
        return empty;
    }

    void AddList(const Launch& l, const char* name, DataType dtype, uint8_t expected)
    {
        std::vector<uint8_t*> data;
        std::vector<std::vector<uint64_t>> shapes;
        for (uint32_t i = 0; i < l.numels.size(); ++i) {
            const uint64_t bytes = l.numels[i] * DataTypeSize(dtype);
            data.push_back(data_.Take(Pages::RoundUp(bytes, kGap) + kGap, kGap) + kGap);
            tensors_.push_back({name, i, reinterpret_cast<uint64_t>(data.back()), bytes, DataTypeSize(dtype),
                                expected});
            shapes.push_back({l.numels[i]});
        }
        out_[name] = EncodeLauncherList(meta_, data, shapes);
        if (l.broken == Break::kMixedRanks && std::strcmp(name, "vars") == 0) {
            shapes.back() = {24, 40};  // the same 960 elements as a 2-D entry after 1-D ones
        }
        in_[name] = EncodeLauncherList(meta_, data, shapes);
    }
    uint8_t* In(const char* name) { return in_.count(name) != 0 ? in_[name] : Empty().Addr(); }
    uint8_t* Out(const char* name) { return out_.count(name) != 0 ? out_[name] : Empty().Addr(); }

    Pages data_;
    Pages meta_;
    Pages flag_;
    ApplyFusedEmaAdamListTilingData tiling_;  // what the kernel gets
    std::vector<GmTensor> tensors_;
    std::map<std::string, uint8_t*> in_;
    std::map<std::string, uint8_t*> out_;
    int64_t* step_ = nullptr;
    float* gradScale_ = nullptr;
    float* foundInf_ = nullptr;
    float* lr_ = nullptr;
    float* emaDecay_ = nullptr;
};

/** What the host tiling says each block moves: its ApplyFusedEmaAdamListCoreSegments. */
ascendc_check::GmExpectation Expectation(const Launch& l, const ApplyFusedEmaAdamListTilingResult& tiling,
                                         const LaunchGm& gm, Outcome* out)
{
    ascendc_check::GmExpectation expected;
    expected.tensors = gm.Tensors();
    expected.maxCopyElems = tiling.data.chunkLength;
    for (uint32_t core = 0; core < tiling.data.usedCoreNum; ++core) {
        expected.shares.emplace_back();
        uint64_t chunks = 0;
        for (const ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListSegment& seg :
             ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListCoreSegments(tiling.data, l.numels,
                                                                                           core)) {
            expected.shares.back().push_back({seg.tensor, seg.begin, seg.end});
            chunks += (seg.end - seg.begin + tiling.data.chunkLength - 1) / tiling.data.chunkLength;
        }
        out->tensorsPerBlock = std::max<uint64_t>(out->tensorsPerBlock, expected.shares.back().size());
        out->chunksPerBlock = std::max(out->chunksPerBlock, chunks);
    }
    return expected;
}

/** Breaks the kernel's tiling for a driver self-test. */
void BreakTiling(Break b, ApplyFusedEmaAdamListTilingData* t)
{
    switch (b) {
        case Break::kUbFormula: t->hasGradScale = 1; break;  // the host sized the chunk without the scale slot
        case Break::kCoreBoundary: ++t->coreStart[1].block; break;
        case Break::kFoundInfIgnored:
        case Break::kFoundInfIgnoredUnprotected: t->hasFoundInf = 0; break;
        case Break::kAbsentListOpened: t->amsgrad = 1; break;  // max_vs is absent: an empty list
        case Break::kAbsentEmaOpened: t->hasEma = 1; break;    // ss is absent: an empty list
        default: break;
    }
}

Outcome RunLaunch(const Launch& l)
{
    Outcome out;
    ApplyFusedEmaAdamListOptions hostOptions = l.options;
    hostOptions.foundInf = l.foundInf != FoundInf::kAbsent;
    if (l.broken == Break::kUbFormula) {
        hostOptions.gradScale = false;  // a host whose UB formula forgot the grad-scale slot
    }
    const ApplyFusedEmaAdamListTilingResult tiling =
        ComputeApplyFusedEmaAdamListTiling(l.numels, l.dtypes, l.attrs, hostOptions, l.platform);
    out.chunk = tiling.data.chunkLength;
    out.ubBytes = tiling.ubBytesPerCore;
    if (tiling.blockDim == 0) {
        return out;
    }
    LaunchGm gm(l, tiling);
    BreakTiling(l.broken, &gm.KernelTiling());
    const ascendc_check::GmExpectation expected = Expectation(l, tiling, gm, &out);
    const bool guardDescriptors = l.Skips() && l.broken != Break::kFoundInfIgnoredUnprotected;
    gm.Guard(guardDescriptors);
    const std::string what = Describe(l, tiling);
    const int failedBlocks = ascendc_check::RunBlocks(
        what.c_str(), tiling.blockDim, tiling.tilingKey,
        [&] {
            gm.Protect(guardDescriptors);
            gm.RunBlock();
        },
        false);

    const std::vector<ascendc_check::GmCopy> copies = ascendc_check::GmCopyTrace::Take();
    out.blocks = tiling.blockDim;
    out.copies = copies.size();
    std::vector<std::string> problems;
    if (!l.Skips()) {
        problems = ascendc_check::CheckGmCopies(expected, copies);
    } else if (!copies.empty()) {
        problems.push_back("found_inf = " + std::string(FoundInfName(l.foundInf)) + ": the blocks issued " +
                           std::to_string(copies.size()) + " GM copies (first by block " +
                           std::to_string(copies[0].block) + ", " + copies[0].intrinsic +
                           "); nothing may be read or written");
    }
    if (failedBlocks != 0 || !problems.empty()) {
        out.ok = false;
        std::printf("run: FAILED %s%s\n", what.c_str(), failedBlocks != 0 ? " (blocks failed, above)" : "");
        for (const std::string& line : problems) {
            std::printf("run:   %s\n", line.c_str());
        }
    }
    return out;
}

/** The chunk a launch of these dtypes/options gets when UB, not the core's share, limits it. */
uint32_t FullChunk(const ApplyFusedEmaAdamListDtypes& d, const ApplyFusedEmaAdamListOptions& o,
                   const ApplyFusedEmaAdamListAttrs& a, const Platform& platform)
{
    return ComputeApplyFusedEmaAdamListTiling({uint64_t{1} << 26}, d, a, o, platform).data.chunkLength;
}

/**
 * The layouts every combination runs on:
 *   big    (48 cores): empty tensors first, in the middle and last; 1, a tail under one block, a few blocks; one
 *          tensor of two full chunks per core plus tails: the UB high-water mark, several chunks per core, core
 *          boundaries inside a tensor, small tensors sharing a core with the big one;
 *   many   (48 cores): 150 tensors of 0..100 elements: many tensor boundaries inside each core, chunks capped at
 *          the core's share;
 *   small  (3 cores): chunk-boundary tails inside a tensor, several chunks per core, a tensor across all cores.
 */
std::vector<uint64_t> Numels(const char* layout, uint32_t chunk, uint32_t align)
{
    const uint64_t c = chunk;
    const uint64_t a = align;
    if (std::strcmp(layout, "big") == 0) {
        return {0, 1, a - 1, 0, 5 * a + 3, 48 * 2 * c + 7 * a + 5, 0, 3, 0};
    }
    if (std::strcmp(layout, "many") == 0) {
        std::vector<uint64_t> n;
        for (uint64_t i = 0; i < 150; ++i) {
            n.push_back(i % 7 == 3 ? 0 : (i * 37) % 101);
        }
        return n;
    }
    return {1, 0, c + 5, 2 * a, 0, 3 * c + a / 2, 17, 0};
}

Platform WithCores(const char* preset, uint32_t cores)
{
    Platform p = ascend_ema_adam::FindPlatform(preset);
    if (cores != p.vectorCoreNum) {
        p.vectorCoreNum = cores;
        p.name += " with " + std::to_string(cores) + " cores";
    }
    return p;
}

int RunAll()
{
    std::printf("%s", kVerifies);
    const auto started = std::chrono::steady_clock::now();
    struct Layout {
        const char* name;
        Platform platform;
    };
    const Layout layouts[] = {{"big", WithCores("Ascend910B2", 48)},
                              {"many", WithCores("Ascend910B2", 48)},
                              {"small", WithCores("Ascend910B2", 3)}};
    int failed = 0;
    uint64_t launches = 0;
    uint64_t blocks = 0;
    uint64_t copies = 0;
    const std::vector<ApplyFusedEmaAdamListDtypes> keys =
        ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListDtypeCombinations();
    for (size_t k = 0; k < keys.size(); ++k) {
        for (const Layout& layout : layouts) {
            Outcome sum;
            uint64_t n = 0;
            // V1: AMSGrad x grad_scale x found_inf. V2: AMSGrad x EMA or none (grad_scale with AMSGrad, lr and
            // ema_decay tensors always) x found_inf.
            for (int amsgrad = 0; amsgrad < 2; ++amsgrad) {
                for (int variant = 0; variant < 2; ++variant) {
                    for (FoundInf f : kFoundInfs) {
                        const int scale = AEA_LIST_RUN_V2 ? amsgrad : variant;
                        Launch l;
                        l.layout = layout.name;
                        l.platform = layout.platform;
                        l.dtypes = keys[k];
                        l.options.amsgrad = amsgrad != 0;
                        l.options.gradScale = scale != 0;
                        l.options.ema = !AEA_LIST_RUN_V2 || variant == 0;
                        l.options.lrTensor = l.options.emaDecayTensor = AEA_LIST_RUN_V2 != 0;
                        l.attrs.maximize = (k + amsgrad + scale) % 2 == 1;
                        l.attrs.mode = static_cast<int64_t>((k + scale) % 2);
                        l.attrs.biasCorrection = !(amsgrad != 0 && scale != 0);
                        l.attrs.weightDecay = 0.01;
                        l.foundInf = f;
                        const uint32_t align =
                            ascend_ema_adam::apply_fused_ema_adam_list::ComputeApplyFusedEmaAdamListTiling(
                                {1}, l.dtypes, l.attrs, l.options, l.platform)
                                .data.alignElems;
                        l.numels = Numels(layout.name, FullChunk(l.dtypes, l.options, l.attrs, l.platform), align);
                        const Outcome o = RunLaunch(l);
                        failed += o.ok ? 0 : 1;
                        ++n;
                        sum.blocks += o.blocks;
                        sum.copies += o.copies;
                        sum.ubBytes = std::max(sum.ubBytes, o.ubBytes);
                        sum.chunk = std::max(sum.chunk, o.chunk);
                        sum.tensorsPerBlock = std::max(sum.tensorsPerBlock, o.tensorsPerBlock);
                        sum.chunksPerBlock = std::max(sum.chunksPerBlock, o.chunksPerBlock);
                    }
                }
            }
            std::printf(
                "run: list key %llu (P %s, S %s, G %s%s%s) on %s (%u cores), %s layout: %llu launches, %u "
                "blocks (up to %llu tensors and %llu chunks per block), %llu GM copies checked, chunk <= %u, "
                "UB <= %u B\n",
                static_cast<unsigned long long>(
                    ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListTilingKeyOf(keys[k])),
                DataTypeName(keys[k].param), DataTypeName(keys[k].state), DataTypeName(keys[k].grad),
                keys[k].hasCopy ? ", C " : "", keys[k].hasCopy ? DataTypeName(keys[k].copy) : "",
                layout.platform.name.c_str(), layout.platform.vectorCoreNum, layout.name,
                static_cast<unsigned long long>(n), sum.blocks, static_cast<unsigned long long>(sum.tensorsPerBlock),
                static_cast<unsigned long long>(sum.chunksPerBlock), static_cast<unsigned long long>(sum.copies),
                sum.chunk, sum.ubBytes);
            launches += n;
            blocks += sum.blocks;
            copies += sum.copies;
        }
    }
    for (const ascendc_check::ToleratedAssert& a : ascendc_check::GmCopyTrace::ToleratedAsserts()) {
        std::printf("run: list decoder: CPU-debug assertion failed %llu times on launcher-layout lists and was let "
                    "through (the device compiles it out): %s\n",
                    static_cast<unsigned long long>(a.count), a.expression.c_str());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("run: list kernel: %llu launches, %llu blocks, %llu GM copies checked in %.1f s: %s\n",
                static_cast<unsigned long long>(launches), static_cast<unsigned long long>(blocks),
                static_cast<unsigned long long>(copies), seconds, failed == 0 ? "ok" : "FAILED");
    return failed == 0 ? 0 : 1;
}

/** One deliberately broken launch (a driver self-test): must fail. */
int RunBroken(Break b)
{
    Launch l;
    l.dtypes = ascend_ema_adam::apply_fused_ema_adam_list::ApplyFusedEmaAdamListDtypeCombinations()
        [0];  // fp32 params, state and grads
    l.attrs.weightDecay = 0.01;
    l.broken = b;
    l.layout = "small";
    l.platform = WithCores("Ascend910B2", 3);
    const uint32_t chunk = FullChunk(l.dtypes, l.options, l.attrs, l.platform);
    l.numels = Numels("small", chunk, 8);
    switch (b) {
        case Break::kMixedRanks:
            l.layout = "mixed-rank";
            l.numels = {1000, 37, 960};  // vars[2] is encoded as [24, 40]
            break;
        case Break::kUbFormula:
            l.options.gradScale = true;
            l.layout = "big";
            l.platform = WithCores("Ascend910B2", 48);
            l.numels = Numels("big", chunk, 8);
            break;
        case Break::kFoundInfIgnored:
        case Break::kFoundInfIgnoredUnprotected: l.foundInf = FoundInf::kOne; break;
        case Break::kAbsentEmaOpened: l.options.ema = false; break;
        default: break;
    }
    return RunLaunch(l).ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    ascendc_check::GmCopyTrace::Open(uint64_t{1} << 20);
    if (argc == 1) {
        return RunAll();
    }
    const std::map<std::string, Break> breaks = {
        {"--break=mixed-ranks", Break::kMixedRanks},
        {"--break=ub-formula", Break::kUbFormula},
        {"--break=core-boundary", Break::kCoreBoundary},
        {"--break=found-inf-ignored", Break::kFoundInfIgnored},
        {"--break=found-inf-ignored-unprotected", Break::kFoundInfIgnoredUnprotected},
        {"--break=absent-list-opened", Break::kAbsentListOpened},
        {"--break=absent-ema-opened", Break::kAbsentEmaOpened},
    };
    const auto b = breaks.find(argc == 2 ? argv[1] : "");
    if (b == breaks.end()) {
        std::fprintf(stderr, "usage: %s [--break=mixed-ranks|ub-formula|core-boundary|found-inf-ignored|"
                             "found-inf-ignored-unprotected|absent-list-opened|absent-ema-opened]\n", argv[0]);
        return 2;
    }
    const int rc = RunBroken(b->second);
    std::printf("run: deliberately broken launch (%s): %s\n", argv[1], rc == 0 ? "passed" : "failed");
    return rc;
}
