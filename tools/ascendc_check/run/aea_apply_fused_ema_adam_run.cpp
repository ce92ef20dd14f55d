// tools/ascendc_check/run.py --run driver for op_kernel/apply_fused_ema_adam/aea_apply_fused_ema_adam.cpp: the kernel compiled against the
// real AscendC headers (CPU-debug mode, do-nothing intrinsics) runs every block of a few launches per tiling
// key, with the tilings the host computes (op_host ComputeApplyFusedEmaAdamTiling), so the class library's own
// runtime checks see the kernel's real UB layout: the full 910B chunk (TPipe's InitBuffer accounting against the 192 KiB
// UB), partial tails, the last core's short range, both modes and bias correction on/off. The copies' GM
// ranges are checked (gm_coverage.h): grad read, var/m/v/s read and written, each element exactly once, each
// core exactly its CoreElementRange.
// ascendc-check: run-sources op_host/apply_fused_ema_adam/apply_fused_ema_adam_tiling.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "apply_fused_ema_adam_tiling.h"
#include "gm_coverage.h"
#include "kernel_entries.h"
#include "run_support.h"

namespace {

using ascend_ema_adam::Attrs;
using ascend_ema_adam::DataType;
using ascend_ema_adam::apply_fused_ema_adam::ApplyFusedEmaAdamTilingResult;
using ascend_ema_adam::apply_fused_ema_adam::ComputeApplyFusedEmaAdamTiling;

struct Case {
    const char* platform;
    uint64_t numel;  // 0: two full chunks per core plus a partial one on a 48-core part
    int64_t mode;
    bool biasCorrection;
};

int RunCase(DataType dtype, const Case& c)
{
    const ascend_ema_adam::Platform platform = ascend_ema_adam::FindPlatform(c.platform);
    Attrs attrs;
    attrs.mode = c.mode;
    attrs.biasCorrection = c.biasCorrection;
    attrs.weightDecay = 0.01;
    uint64_t numel = c.numel;
    if (numel == 0) {
        const ApplyFusedEmaAdamTilingResult probe = ComputeApplyFusedEmaAdamTiling(1u << 24, dtype, attrs, platform);
        numel = uint64_t{platform.vectorCoreNum} * probe.data.chunkLength * 2 + 1001;
    }
    const ApplyFusedEmaAdamTilingResult t = ComputeApplyFusedEmaAdamTiling(numel, dtype, attrs, platform);
    const size_t bytes = numel * ascend_ema_adam::DataTypeSize(dtype);
    std::vector<uint8_t> grad(bytes), var(bytes), m(bytes), v(bytes), s(bytes);
    std::vector<int64_t> step{1};
    std::vector<uint8_t> tiling(sizeof(t.data));
    std::memcpy(tiling.data(), &t.data, sizeof(t.data));
    char what[160];
    std::snprintf(what, sizeof what, "%s key %llu on %s, %llu elements, chunk %u, UB %u B, mode %lld%s",
                  ascend_ema_adam::DataTypeName(dtype), static_cast<unsigned long long>(t.tilingKey), c.platform,
                  static_cast<unsigned long long>(numel), t.data.chunkLength, t.ubBytesPerCore,
                  static_cast<long long>(c.mode), c.biasCorrection ? ", bias correction" : "");
    const int failedBlocks = ascendc_check::RunBlocks(what, t.blockDim, t.tilingKey, [&] {
        aea_apply_fused_ema_adam(grad.data(), var.data(), m.data(), v.data(), s.data(),
                             reinterpret_cast<uint8_t*>(step.data()), var.data(), m.data(), v.data(), s.data(),
                             nullptr, tiling.data());
    }, false);
    ascendc_check::GmExpectation expected;
    expected.maxCopyElems = t.data.chunkLength;
    const uint32_t size = ascend_ema_adam::DataTypeSize(dtype);
    const uint8_t rw = ascendc_check::kRead | ascendc_check::kWrite;
    const std::pair<const char*, std::vector<uint8_t>*> tensors[] = {
        {"grad", &grad}, {"var", &var}, {"m", &m}, {"v", &v}, {"s", &s}};
    for (const auto& [name, data] : tensors) {
        expected.tensors.push_back({name, 0, reinterpret_cast<uint64_t>(data->data()), bytes, size,
                                    data == &grad ? uint8_t{ascendc_check::kRead} : rw});
    }
    for (uint32_t core = 0; core < t.data.usedCoreNum; ++core) {
        const ascend_ema_adam::ElementRange r =
            ascend_ema_adam::CoreElementRange(numel, t.data.blocksPerCore, t.data.usedCoreNum, t.data.bigCoreNum,
                                              t.data.alignElems, core);
        expected.shares.push_back({{0, r.begin, r.end}});
    }
    const std::vector<ascendc_check::GmCopy> copies = ascendc_check::GmCopyTrace::Take();
    const std::vector<std::string> problems = ascendc_check::CheckGmCopies(expected, copies);
    std::printf("run: %s: %u block(s), %zu GM copies checked, %s\n", what, t.blockDim, copies.size(),
                failedBlocks == 0 && problems.empty() ? "ok" : "FAILED");
    for (const std::string& line : problems) {
        std::printf("run:   %s\n", line.c_str());
    }
    return failedBlocks + (problems.empty() ? 0 : 1);
}

}  // namespace

int main()
{
    ascendc_check::GmCopyTrace::Open(uint64_t{1} << 20);
    const Case cases[] = {
        {"Ascend910B2", 0, 1, true},      // full chunks on 48 cores: the UB high-water mark
        {"Ascend910B4", 100003, 0, false},  // 40 cores, partial tails
        {"Ascend910B2", 1, 1, true},      // one element: one core, one 2- or 4-byte block
    };
    int failed = 0;
    for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
        for (const Case& c : cases) failed += RunCase(dtype, c);
    }
    return failed == 0 ? 0 : 1;
}
