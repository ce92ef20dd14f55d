// tools/ascendc_check --run driver for op_kernel/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list.cpp:
// the 8-bit kernel compiled against the real AscendC headers (CPU-debug mode, do-nothing intrinsics) runs every
// block of a launch per tiling key, with and without the EMA, with a grad scale and maximize on some, on the
// host's tilings (op_host ComputeAdam8bitListTiling): full 16-block chunks on 48 cores, a tensor's partial last
// block, one-element and empty entries, the lists written as CANN's launcher writes a DYNAMIC input and decoded by
// the real ListTensorDesc. What runs is the class library's own checks (TPipe/TQue UB accounting against the 192
// KiB UB, Cast round modes of the uint8 / half / int32 conversions, Gather, Compare and Select operands, DataCopyPad
// parameters): none may abort. NOT verified here: the GM ranges of the copies and the numbers (the twin tests hold
// the kernel to the golden bit for bit).
// ascendc-check: run-sources op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_tiling.cpp op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_check.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "launcher_list.h"
#include "run_support.h"

extern "C" void apply_fused_ema_adam8bit_list(
    uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* mAbsmaxes, uint8_t* vAbsmaxes, uint8_t* ss,
    uint8_t* modelCopies, uint8_t* qmapM, uint8_t* qmapV, uint8_t* step, uint8_t* gradScale, uint8_t* foundInf,
    uint8_t* lr, uint8_t* emaDecay, uint8_t* varsRef, uint8_t* msRef, uint8_t* vsRef, uint8_t* mAbsmaxesRef,
    uint8_t* vAbsmaxesRef, uint8_t* ssRef, uint8_t* modelCopiesRef, uint8_t* workspace, uint8_t* tiling);

namespace {

namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
using ascend_ema_adam::DataType;
using ascend_ema_adam::DataTypeSize;

/** One list's memory: per entry `count` elements of `bytes` each, and its launcher-layout words. */
struct List {
    std::vector<std::vector<uint8_t>> data;
    std::vector<uint64_t> words{8};  // absent: the lone word 8

    List(const std::vector<uint64_t>& counts, uint32_t bytes)
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
};

int RunCase(const op8::Adam8bitDtypes& dtypes, uint32_t key, bool ema, bool gradScale)
{
    const ascend_ema_adam::Platform platform = ascend_ema_adam::FindPlatform("Ascend910B2");
    // the first entry gives every core full 16-block chunks; then partial, tiny and empty entries
    const std::vector<uint64_t> numels = {uint64_t{48} * 16 * 256 * 2 + 300, 257, 1, 0, 5000};
    std::vector<uint64_t> blocks;
    for (uint64_t n : numels) blocks.push_back((n + 255) / 256);
    op8::Adam8bitOptions options;
    options.ema = ema;
    options.gradScale = gradScale;
    options.maximize = gradScale;
    ascend_ema_adam::Attrs attrs;
    attrs.mode = gradScale ? 0 : 1;
    attrs.weightDecay = 0.01;
    const op8::Adam8bitTilingResult t = op8::ComputeAdam8bitListTiling(numels, dtypes, attrs, options, platform);
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
    std::vector<uint8_t> tiling(sizeof(t.data));
    std::memcpy(tiling.data(), &t.data, sizeof(t.data));
    char what[200];
    std::snprintf(what, sizeof what, "8-bit key %u, %s EMA%s: %u cores, chunks of %u blocks, UB %u B", key,
                  ema ? "with" : "without", gradScale ? ", grad scale, maximize, mode 0" : "", t.blockDim,
                  t.data.chunkBlocks, t.ubBytesPerCore);
    const int failed = ascendc_check::RunBlocks(what, t.blockDim, t.tilingKey, [&] {
        apply_fused_ema_adam8bit_list(
            grads.Addr(), vars.Addr(), ms.Addr(), vs.Addr(), mScales.Addr(), vScales.Addr(), ss.Addr(), copies.Addr(),
            reinterpret_cast<uint8_t*>(qmapM.data()), reinterpret_cast<uint8_t*>(qmapV.data()),
            reinterpret_cast<uint8_t*>(step.data()), gradScale ? reinterpret_cast<uint8_t*>(scale.data()) : nullptr,
            nullptr, nullptr, nullptr, vars.Addr(), ms.Addr(), vs.Addr(), mScales.Addr(), vScales.Addr(), ss.Addr(),
            copies.Addr(), nullptr, tiling.data());
    }, false);
    ascendc_check::GmCopyTrace::Take();  // the ranges are not checked here (see the file comment)
    std::printf("run: %s: %s\n", what, failed == 0 ? "ok" : "FAILED");
    return failed;
}

}  // namespace

int main()
{
    ascendc_check::GmCopyTrace::Open(uint64_t{1} << 22);
    std::printf("run: 8-bit list kernel: every block under the real class library's checks (UB accounting, Cast "
                "modes, Gather / Compare / Select operands, DataCopyPad); GM ranges and numbers are the twin "
                "tests'\n");
    int failed = 0;
    const struct {
        op8::Adam8bitDtypes dtypes;
        uint32_t key;
    } rows[] = {
#define AEA_ADAM8BIT_RUN_ROW(key, P, G, C)                                                                        \
    {{op8::kAdam8bitDtype_##P, op8::kAdam8bitDtype_##G, op8::kAdam8bitHasCopy_##C, op8::kAdam8bitDtype_##C},    \
     APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key},
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_RUN_ROW)
#undef AEA_ADAM8BIT_RUN_ROW
    };
    for (const auto& row : rows) {
        failed += RunCase(row.dtypes, row.key, true, false);
        failed += RunCase(row.dtypes, row.key, false, true);
    }
    return failed == 0 ? 0 : 1;
}
