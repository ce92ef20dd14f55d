// tools/ascendc_check/run.py --run driver for op_kernel/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list.cpp:
// the 8-bit kernel compiled against the real AscendC headers (CPU-debug mode, do-nothing intrinsics) runs every
// block of a launch per tiling key, with and without the EMA, with a grad scale and maximize on some, on the
// host's tilings (op_host ComputeApplyFusedEmaAdam8bitListTiling): full 16-block chunks on 48 cores, a tensor's
// partial last block, one-element and empty entries, the lists written as CANN's launcher writes a DYNAMIC input and decoded by
// the real ListTensorDesc. What runs is the class library's own checks (TPipe/TQue UB accounting against the 192
// KiB UB, Cast round modes of the uint8 / half / int32 conversions, Gather, Compare and Select operands, DataCopyPad
// parameters): none may abort. And the GM ranges the copies reach (run/gm_coverage.h): every copy inside one tensor
// with its dtype's width and at most a chunk (chunkBlocks * 256 elements, or chunkBlocks scales); every input read
// and every output written exactly once per element (grads read; vars, the codes and the EMA read and written; the
// scales written: their old values are scalar reads; model copies written); each core exactly its blocks of the
// host's split; with found_inf set (1 and NaN) no copy at all. The numbers are --emulate's (and the twin tests').
// ascendc-check: run-sources op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_tiling.cpp op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_check.cpp op_host/common/list_validation.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "gm_coverage.h"
#include "kernel_entries.h"
#include "launcher_list.h"
#include "run_support.h"

namespace {

namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
using ascend_ema_adam::DataType;
using ascend_ema_adam::DataTypeSize;

/** One list's memory: per entry `count` elements of `bytes` each, and its launcher-layout words. */
struct List {
    std::vector<std::vector<uint8_t>> data;
    std::vector<uint64_t> counts;
    uint32_t elemBytes = 0;
    std::vector<uint64_t> words{8};  // absent: the lone word 8

    List(const std::vector<uint64_t>& counts_, uint32_t bytes) : counts(counts_), elemBytes(bytes)
    {
        std::vector<uint8_t*> pointers;
        std::vector<std::vector<uint64_t>> shapes;
        for (uint64_t n : counts) {
            data.emplace_back(n * bytes + 32);
            pointers.push_back(data.back().data());  // an address for an empty entry too, as the list driver
            shapes.push_back({n});
        }
        words = ascendc_check::LauncherListWords(pointers, shapes);
    }
    List() = default;
    uint8_t* Addr() { return reinterpret_cast<uint8_t*>(words.data()); }

    /** Its entries with elements, as the coverage check sees them. */
    void AddTensors(const char* name, uint8_t expected, std::vector<ascendc_check::GmTensor>* out) const
    {
        for (size_t i = 0; i < data.size(); ++i) {
            if (counts[i] > 0) {
                out->push_back({name, static_cast<uint32_t>(i), reinterpret_cast<uint64_t>(data[i].data()),
                                counts[i] * elemBytes, elemBytes, expected});
            }
        }
    }
};

/** Each core's part of every entry, from the tiling's core starts: in elements, or (scales) in blocks. */
std::vector<std::vector<ascendc_check::BlockShare>> Shares(const ApplyFusedEmaAdam8bitListTilingData& t,
                                                           const std::vector<uint64_t>& numels, bool scales)
{
    std::vector<std::vector<ascendc_check::BlockShare>> shares(t.usedCoreNum);
    for (uint32_t core = 0; core < t.usedCoreNum; ++core) {
        const ApplyFusedEmaAdam8bitListPosition from = t.coreStart[core], to = t.coreStart[core + 1];
        for (uint32_t e = from.tensor; e < numels.size() && (e < to.tensor || (e == to.tensor && to.block > 0)); ++e) {
            const uint64_t blocks = (numels[e] + 255) / 256;
            const uint64_t first = e == from.tensor ? from.block : 0;
            const uint64_t last = e == to.tensor ? std::min<uint64_t>(to.block, blocks) : blocks;
            if (last <= first) continue;
            if (scales) {
                shares[core].push_back({e, first, last});
            } else {
                shares[core].push_back({e, first * 256, std::min<uint64_t>(last * 256, numels[e])});
            }
        }
    }
    return shares;
}

/** A deliberately broken launch for the driver's self-tests: the check must catch it. */
enum class Break { kNone, kCoreStart, kFoundInfIgnored };

int RunCase(const op8::ApplyFusedEmaAdam8bitListDtypes& dtypes, uint32_t key, bool ema, bool gradScale, float foundInf,
            Break broken = Break::kNone)
{
    const ascend_ema_adam::Platform platform = ascend_ema_adam::FindPlatform("Ascend910B2");
    // the first entry gives every core full 16-block chunks; then partial, tiny and empty entries
    const std::vector<uint64_t> numels = {uint64_t{48} * 16 * 256 * 2 + 300, 257, 1, 0, 5000};
    std::vector<uint64_t> blocks;
    for (uint64_t n : numels) blocks.push_back((n + 255) / 256);
    op8::ApplyFusedEmaAdam8bitListOptions options;
    options.ema = ema;
    options.gradScale = gradScale;
    options.maximize = gradScale;
    options.foundInf = foundInf >= 0.0f || std::isnan(foundInf);  // -1: absent
    ascend_ema_adam::Attrs attrs;
    attrs.mode = gradScale ? 0 : 1;
    attrs.weightDecay = 0.01;
    const op8::ApplyFusedEmaAdam8bitListTilingResult t =
        op8::ComputeApplyFusedEmaAdam8bitListTiling(numels, dtypes, attrs, options, platform);
    List grads(numels, DataTypeSize(dtypes.grad));
    List vars(numels, DataTypeSize(dtypes.param));
    List ms(numels, 1);
    List vs(numels, 1);
    List mScales(blocks, 4);
    List vScales(blocks, 4);
    List ss = ema ? List(numels, 4) : List();
    List copies = dtypes.hasCopy ? List(numels, DataTypeSize(dtypes.copy)) : List();
    std::vector<float> qmapM(256), qmapV(256);
    for (int k = 0; k < 256; ++k) {
        qmapM[k] = -1.0f + 2.0f * static_cast<float>(k) / 255.0f;
        qmapV[k] = static_cast<float>(k) / 255.0f;
    }
    std::vector<int64_t> step{3};
    std::vector<float> scale{128.0f};
    std::vector<float> foundInfValue{foundInf};
    ApplyFusedEmaAdam8bitListTilingData kernelTiling = t.data;
    if (broken == Break::kCoreStart) ++kernelTiling.coreStart[1].block;  // core 0 takes core 1's first block
    if (broken == Break::kFoundInfIgnored) kernelTiling.hasFoundInf = 0;  // the kernel never reads found_inf
    std::vector<uint8_t> tiling(sizeof(kernelTiling));
    std::memcpy(tiling.data(), &kernelTiling, sizeof(kernelTiling));
    char what[200];
    char found[32] = "";
    if (options.foundInf) std::snprintf(found, sizeof found, ", found_inf %g", static_cast<double>(foundInf));
    std::snprintf(what, sizeof what, "8-bit key %u, %s EMA%s%s: %u cores, chunks of %u blocks, UB %u B", key,
                  ema ? "with" : "without", gradScale ? ", grad scale, maximize, mode 0" : "", found, t.blockDim,
                  t.data.chunkBlocks, t.ubBytesPerCore);
    const int failed = ascendc_check::RunBlocks(what, t.blockDim, t.tilingKey, [&] {
        apply_fused_ema_adam8bit_list(
            grads.Addr(), vars.Addr(), ms.Addr(), vs.Addr(), mScales.Addr(), vScales.Addr(), ss.Addr(), copies.Addr(),
            reinterpret_cast<uint8_t*>(qmapM.data()), reinterpret_cast<uint8_t*>(qmapV.data()),
            reinterpret_cast<uint8_t*>(step.data()), gradScale ? reinterpret_cast<uint8_t*>(scale.data()) : nullptr,
            options.foundInf ? reinterpret_cast<uint8_t*>(foundInfValue.data()) : nullptr, nullptr, nullptr,
            vars.Addr(), ss.Addr(), copies.Addr(), ms.Addr(), vs.Addr(), mScales.Addr(), vScales.Addr(), nullptr,
            tiling.data());
    }, false);
    const std::vector<ascendc_check::GmCopy> moved = ascendc_check::GmCopyTrace::Take();
    std::vector<std::string> problems;
    if (options.foundInf && foundInf != 0.0f) {  // nonzero or NaN: the kernel returns before any GM access
        if (!moved.empty()) {
            problems.push_back("found_inf set: the blocks issued " + std::to_string(moved.size()) +
                               " GM copies (first by block " + std::to_string(moved[0].block) + ", " +
                               moved[0].intrinsic + "); nothing may be read or written");
        }
    } else {
        // Two checks: the element-wise lists (shares in elements, copies of at most a chunk) and the scale lists
        // (shares in blocks, copies of at most chunkBlocks scales); each copy goes to the one whose tensor it hits.
        using ascendc_check::kRead;
        using ascendc_check::kWrite;
        const uint8_t both = kRead | kWrite;
        ascendc_check::GmExpectation elementwise, scales;
        grads.AddTensors("grads", kRead, &elementwise.tensors);
        vars.AddTensors("vars", both, &elementwise.tensors);
        ms.AddTensors("ms", both, &elementwise.tensors);
        vs.AddTensors("vs", both, &elementwise.tensors);
        if (ema) ss.AddTensors("ss", both, &elementwise.tensors);
        if (dtypes.hasCopy) copies.AddTensors("model_copies", kWrite, &elementwise.tensors);
        mScales.AddTensors("m_absmaxes", kWrite, &scales.tensors);
        vScales.AddTensors("v_absmaxes", kWrite, &scales.tensors);
        elementwise.maxCopyElems = uint64_t{t.data.chunkBlocks} * 256;
        scales.maxCopyElems = t.data.chunkBlocks;
        elementwise.shares = Shares(t.data, numels, false);
        scales.shares = Shares(t.data, numels, true);
        std::vector<ascendc_check::GmCopy> elementCopies, scaleCopies;
        for (const ascendc_check::GmCopy& c : moved) {
            bool isScale = false;
            for (const ascendc_check::GmTensor& s : scales.tensors) {
                isScale = isScale || (c.gm >= s.base && c.gm < s.base + s.bytes);
            }
            (isScale ? scaleCopies : elementCopies).push_back(c);
        }
        problems = ascendc_check::CheckGmCopies(elementwise, elementCopies);
        for (const std::string& line : ascendc_check::CheckGmCopies(scales, scaleCopies)) problems.push_back(line);
    }
    std::printf("run: %s: %s (%zu GM copies)\n", what, failed == 0 && problems.empty() ? "ok" : "FAILED",
                moved.size());
    for (const std::string& line : problems) std::printf("run:   %s\n", line.c_str());
    return failed + (problems.empty() ? 0 : 1);
}

}  // namespace

// ascendc-check: driver-self-test break-core-start outside its share
// ascendc-check: driver-self-test break-found-inf found_inf set: the blocks issued \d+ GM copies
int main(int argc, char** argv)
{
    ascendc_check::GmCopyTrace::Open(uint64_t{1} << 22);
    const std::string selfTest = argc > 1 ? argv[1] : "";
    std::printf("run: 8-bit list kernel: every block under the real class library's checks (UB accounting, Cast "
                "modes, Gather / Compare / Select operands, DataCopyPad) and every GM range of its copies; the "
                "numbers are --emulate's\n");
    int failed = 0;
    const struct {
        op8::ApplyFusedEmaAdam8bitListDtypes dtypes;
        uint32_t key;
    } rows[] = {
#define AEA_ADAM8BIT_RUN_ROW(key, P, G, C)                                                   \
    {{op8::kApplyFusedEmaAdam8bitListDtype_##P, op8::kApplyFusedEmaAdam8bitListDtype_##G,    \
      op8::kApplyFusedEmaAdam8bitListHasCopy_##C, op8::kApplyFusedEmaAdam8bitListDtype_##C}, \
     APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key},
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_RUN_ROW)
#undef AEA_ADAM8BIT_RUN_ROW
    };
    if (selfTest == "break-core-start") {
        return RunCase(rows[0].dtypes, rows[0].key, true, false, 0.0f, Break::kCoreStart) == 0 ? 0 : 1;
    }
    if (selfTest == "break-found-inf") {
        return RunCase(rows[0].dtypes, rows[0].key, true, false, 1.0f, Break::kFoundInfIgnored) == 0 ? 0 : 1;
    }
    for (const auto& row : rows) {
        failed += RunCase(row.dtypes, row.key, true, false, 0.0f);   // found_inf given and clear
        failed += RunCase(row.dtypes, row.key, false, true, -1.0f);  // found_inf absent
    }
    failed += RunCase(rows[0].dtypes, rows[0].key, true, true, 1.0f);  // found_inf set: nothing moves
    failed += RunCase(rows[3].dtypes, rows[3].key, true, false, NAN);  // NaN counts as set
    return failed == 0 ? 0 : 1;
}
