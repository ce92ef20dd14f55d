// tools/ascendc_check/run.py --emulate driver for op_kernel/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list.cpp:
// the unchanged 8-bit kernel, compiled against the real AscendC library with the emulated intrinsics (the uint8 /
// half / int32 casts, Gather, Compare, Select among them), computes every tiling key (dtype row of the contract) on
// seeded inputs, on the host's tilings (op_host ComputeApplyFusedEmaAdam8bitListTiling), the lists in CANN's
// launcher layout:
//   - 48 cores (Ascend910B2): entries of 1 element, shorter than a block, a block, a block and a partial second one
//     (6 blocks: the host uses 6 cores, one block each); the EMA, a grad scale, found_inf given and clear, every 7th
//     element's v' below the v map's positive floor;
//   - 4 cores with 1 to 3 chunks per core (entries across core boundaries, partial last blocks), without the EMA,
//     maximize, Adam + L2 without bias correction, lr and the EMA decay as tensors;
//   - 4 cores with 6 chunks and more per core, the EMA, a grad scale, non-finite gradients (+-inf, NaN: their
//     blocks' scales become NaN or inf);
//   - the 16-bit-parameter rows with parameters at the format's maximum and infinite, steps of about a thousand,
//     in both float-overflow modes (INF_NAN and saturation);
// and found_inf set (nothing may be written) on the first row. Codes, scales and the two maps are seeded random
// (the maps sorted, within [-1, 1], dense near 0 as the dynamic maps are, with an equal pair: a tie of thresholds).
// Each case is written for compare.py (golden8bit.emulate_entry8). Usage: <program> <out> <seed>
// ascendc-check: run-sources op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_tiling.cpp op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_check.cpp op_host/common/list_validation.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include "kernel_scalar_host.h"  // defines __aicore__ away: first (the codebook header is kernel code)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "apply_fused_ema_adam8bit_list_codebook.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "emulate_support.h"
#include "kernel_entries.h"

namespace {

namespace aea = ascend_ema_adam;
namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
using ascendc_emulate::Dt;
using ascendc_emulate::DtBytes;
using ascendc_emulate::DtOf;
using ascendc_emulate::MakeList;
using ascendc_emulate::PutFloat;

constexpr float kNoValue = -1.0f;  // found_inf absent
constexpr uint32_t kBlock = aea::kApplyFusedEmaAdam8bitListBlock;
constexpr uint32_t kMapSize = aea::kApplyFusedEmaAdam8bitListMapSize;

struct Row {
    op8::ApplyFusedEmaAdam8bitListDtypes dtypes;
    uint32_t key;
};

const std::vector<Row>& Rows()
{
    static const std::vector<Row> rows = {
#define AEA_ADAM8BIT_EMULATE_ROW(key, P, G, C)                                               \
    {{op8::kApplyFusedEmaAdam8bitListDtype_##P, op8::kApplyFusedEmaAdam8bitListDtype_##G,    \
      op8::kApplyFusedEmaAdam8bitListHasCopy_##C, op8::kApplyFusedEmaAdam8bitListDtype_##C}, \
     APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key},
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_EMULATE_ROW)
#undef AEA_ADAM8BIT_EMULATE_ROW
    };
    return rows;
}

struct Case {
    uint32_t cores;
    std::vector<uint64_t> numels;  // elements; an entry c * 1000000 + e means c full chunks plus e elements
    op8::ApplyFusedEmaAdam8bitListOptions options;  // options.foundInf is set from foundInf
    float foundInf = kNoValue;     // its value when given
    int64_t mode = 1;
    bool biasCorrection = true;
    bool nonFinite = false;        // some gradients +-inf and NaN
    bool tinyV = false;            // v' below the v map's positive floor: TinySecondMoments
    bool overflow = false;         // 16-bit parameters near their maximum, an update past it
    bool saturation = false;       // the device in saturation mode
};

/** Seeded bits for the codes, the scales and the maps (the float inputs use ascendc_emulate::Inputs). */
class Bits {
public:
    explicit Bits(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ULL + 0x51ed27ULL) {}
    uint64_t Next()
    {
        s_ += 0x9E3779B97F4A7C15ULL;  // splitmix64
        uint64_t z = s_;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    float Unit() { return static_cast<float>(Next() >> 40) / 16777216.0f; }  // [0, 1)

private:
    uint64_t s_;
};

/** A map as the operator takes it: 256 sorted fp32 values within [-1, 1] (signed: from -1; else from 0) up to 1,
 *  dense near 0 (cubes of uniform values), with one equal pair. */
std::vector<float> Map(Bits& bits, bool isSigned)
{
    std::vector<float> q(kMapSize);
    for (uint32_t k = 0; k < kMapSize; ++k) {
        const float u = bits.Unit();
        const float cube = u * u * u;
        q[k] = isSigned && (bits.Next() & 1) ? -cube : cube;
    }
    q[0] = isSigned ? -1.0f : 0.0f;
    q[1] = 0.0f;
    q[kMapSize - 1] = 1.0f;
    std::sort(q.begin(), q.end());
    const uint32_t twin = 60 + static_cast<uint32_t>(bits.Next() % 120);
    q[twin + 1] = q[twin];
    return q;
}

/** Every 7th element of an entry: v's code 0 (the maps' q[0] = 0) and a gradient of +-1e-6, so its v' quotient is
 *  about 1e-12 / 1e-3, below the v map's positive floor: the kernel raises it (Compare, Maxs, Select). */
void TinySecondMoments(uint8_t* grad, uint8_t* v, uint64_t n, Dt dt)
{
    for (uint64_t i = 0; i < n; i += 7) {
        v[i] = 0;
        PutFloat(grad, i, dt, i % 2 == 0 ? 1e-6f : -1e-6f);
    }
}

/** +-inf and NaN gradients at a few places of an entry (the first elements and every 97th). */
void NonFinite(uint8_t* grad, uint64_t n, Dt dt)
{
    const float specials[] = {INFINITY, -INFINITY, NAN};
    for (uint64_t i = 0, k = 0; i < n; i += 97, ++k) PutFloat(grad, i, dt, specials[k % 3]);
}

/** 16-bit parameters at the format's largest finite value (every 3rd; the launch's steps of about a thousand take
 *  fp16 ones past it in either direction) and infinite (every 7th: inf -> MAX when saturating). */
void Overflow(uint8_t* var, uint64_t n, Dt paramDt)
{
    const float top = paramDt == Dt::kF16 ? 65504.0f : 3.3895314e38f;
    for (uint64_t i = 0; i < n; i += 3) PutFloat(var, i, paramDt, (i / 3) % 2 == 1 ? -top : top);
    for (uint64_t i = 1; i < n; i += 7) PutFloat(var, i, paramDt, (i / 7) % 2 == 1 ? -INFINITY : INFINITY);
}

int RunCase(const std::string& out, uint64_t seed, const Row& row, const Case& c, int index)
{
    aea::Platform platform = aea::FindPlatform("Ascend910B2");
    platform.vectorCoreNum = c.cores;
    aea::Attrs attrs;
    attrs.lr = c.overflow ? 1000.0 : 1e-3;  // overflow: steps of about a thousand
    attrs.emaDecay = 0.995;
    attrs.mode = c.mode;
    attrs.biasCorrection = c.biasCorrection;
    attrs.weightDecay = c.overflow ? 0.0 : c.mode == 0 ? 0.05 : 0.01;
    op8::ApplyFusedEmaAdam8bitListOptions options = c.options;
    options.foundInf = c.foundInf != kNoValue;
    const op8::ApplyFusedEmaAdam8bitListDtypes& d = row.dtypes;
    const uint32_t chunk =
        op8::ComputeApplyFusedEmaAdam8bitListTiling({uint64_t{1} << 26}, d, attrs, options, platform).data.chunkBlocks *
        kBlock;
    std::vector<uint64_t> numels, blocks;
    for (uint64_t n : c.numels) {
        numels.push_back(n / 1000000 * chunk + n % 1000000);
        blocks.push_back(aea::ApplyFusedEmaAdam8bitListBlocks(numels.back()));
    }
    const op8::ApplyFusedEmaAdam8bitListTilingResult t =
        op8::ComputeApplyFusedEmaAdam8bitListTiling(numels, d, attrs, options, platform);
    if (t.tilingKey != row.key) {
        std::printf("emulate: the tiling gave key %u for the row of key %u\n", t.tilingKey, row.key);
        return 1;
    }

    const Dt p = DtOf(d.param), g = DtOf(d.grad);
    ascendc_emulate::Lists lists;
    lists.Add("grads", MakeList(numels, DtBytes(g)));
    lists.Add("vars", MakeList(numels, DtBytes(p)));
    lists.Add("ms", MakeList(numels, 1));
    lists.Add("vs", MakeList(numels, 1));
    lists.Add("m_absmaxes", MakeList(blocks, 4));
    lists.Add("v_absmaxes", MakeList(blocks, 4));
    if (options.ema) lists.Add("ss", MakeList(numels, 4));
    if (d.hasCopy) lists.Add("model_copies", MakeList(numels, DtBytes(DtOf(d.copy))));

    ascendc_emulate::Inputs in(seed * 1000 + static_cast<uint64_t>(index));
    Bits bits(seed * 1000 + static_cast<uint64_t>(index));
    ascendc_emulate::SharedBytes maps(2 * kMapSize * 4);
    const std::vector<float> qmapM = Map(bits, true), qmapV = Map(bits, false);
    std::memcpy(maps.data(), qmapM.data(), kMapSize * 4);
    std::memcpy(maps.data() + kMapSize * 4, qmapV.data(), kMapSize * 4);
    for (size_t i = 0; i < numels.size(); ++i) {
        const uint64_t n = numels[i];
        in.Fill(lists.Entry("grads", i), n, g, 0.01f, 1.0f, true);
        in.Fill(lists.Entry("vars", i), n, p, 0.1f, 2.0f, true);
        for (const char* codes : {"ms", "vs"}) {
            uint8_t* q = lists.Entry(codes, i);
            for (uint64_t k = 0; k < n; ++k) q[k] = static_cast<uint8_t>(bits.Next());
        }
        // Old scales: m's in [1e-3, 0.1), v's in [1e-6, 1e-2).
        for (uint64_t b = 0; b < blocks[i]; ++b) {
            const float sm = 1e-3f + bits.Unit() * 0.099f, sv = 1e-6f + bits.Unit() * 0.01f;
            std::memcpy(lists.Entry("m_absmaxes", i) + b * 4, &sm, 4);
            std::memcpy(lists.Entry("v_absmaxes", i) + b * 4, &sv, 4);
        }
        if (options.ema) in.Fill(lists.Entry("ss", i), n, Dt::kF32, 0.1f, 2.0f, true);
        if (d.hasCopy) in.Fill(lists.Entry("model_copies", i), n, DtOf(d.copy), 0.1f, 2.0f, true);
        if (c.tinyV) TinySecondMoments(lists.Entry("grads", i), lists.Entry("vs", i), n, g);
        if (c.nonFinite) NonFinite(lists.Entry("grads", i), n, g);
        if (c.overflow) Overflow(lists.Entry("vars", i), n, p);
    }
    const ascendc_emulate::ListScalars scalars(
        ascendc_emulate::SeededStep(seed, index), c.foundInf,
        {options.gradScale, options.foundInf, options.lrTensor, options.emaDecayTensor});
    ApplyFusedEmaAdam8bitListTilingData tiling = t.data;

    char name[96];
    std::snprintf(name, sizeof name, "list8bit_%03d", index);
    ascendc_emulate::CaseWriter w(out, name);
    lists.Write(w, ".in", true);
    w.Tensor("qmap_m.in", maps.data(), kMapSize * 4);
    w.Tensor("qmap_v.in", maps.data() + kMapSize * 4, kMapSize * 4);
    uint8_t* const qm = maps.data();
    uint8_t* const qv = maps.data() + kMapSize * 4;
    const ascendc_emulate::LaunchOutcome o =
        t.blockDim == 0 ? ascendc_emulate::LaunchOutcome{}
                        : ascendc_emulate::Launch(name, t.blockDim, t.tilingKey, c.saturation, [&] {
                              apply_fused_ema_adam8bit_list(
                                  lists.In("grads"), lists.In("vars"), lists.In("ms"), lists.In("vs"),
                                  lists.In("m_absmaxes"), lists.In("v_absmaxes"), lists.In("ss"),
                                  lists.In("model_copies"), qm, qv, scalars.Step(), scalars.GradScale(),
                                  scalars.FoundInf(), scalars.Lr(), scalars.EmaDecay(), lists.Out("vars"),
                                  lists.Out("ss"), lists.Out("model_copies"), lists.Out("ms"), lists.Out("vs"),
                                  lists.Out("m_absmaxes"), lists.Out("v_absmaxes"), nullptr,
                                  reinterpret_cast<uint8_t*>(&tiling));
                          });
    lists.Write(w, ".out", false);
    const Dt copy = DtOf(d.copy);
    ascendc_emulate::MetaList(w, "list8bit", numels.size(), p, g, d.hasCopy ? &copy : nullptr, options.ema,
                              options.maximize);
    scalars.Meta(w, attrs);
    ascendc_emulate::MetaTiling(w, c.saturation, t.tilingKey, c.cores, t.blockDim, t.data.chunkBlocks * kBlock);
    uint64_t totalBlocks = 0;
    for (uint64_t b : blocks) totalBlocks += b;
    // The most chunks one core walks (a chunk never crosses an entry).
    uint64_t mostChunks = 0;
    for (uint32_t core = 0; core < t.blockDim; ++core) {
        const ApplyFusedEmaAdam8bitListPosition from = t.data.coreStart[core], to = t.data.coreStart[core + 1];
        uint64_t chunks = 0;
        for (uint32_t e = from.tensor; e < numels.size() && (e < to.tensor || (e == to.tensor && to.block > 0)); ++e) {
            const uint64_t first = e == from.tensor ? from.block : 0;
            const uint64_t last = e == to.tensor ? std::min<uint64_t>(to.block, blocks[e]) : blocks[e];
            if (last > first) chunks += (last - first + t.data.chunkBlocks - 1) / t.data.chunkBlocks;
        }
        mostChunks = std::max(mostChunks, chunks);
    }
    w.Meta("blocks", static_cast<double>(totalBlocks));
    w.Meta("most_chunks_per_core", static_cast<double>(mostChunks));
    ascendc_emulate::MetaOutcome(w, o);
    std::printf("emulate: %s key %u: %u cores, chunks of %u blocks, up to %llu chunks per core%s\n", name, row.key,
                t.blockDim, t.data.chunkBlocks, static_cast<unsigned long long>(mostChunks),
                o.failedBlocks == 0 ? "" : ", FAILED blocks");
    return o.failedBlocks;
}

}  // namespace

int main(int argc, char** argv)
{
    const ascendc_emulate::DriverArgs args(argc, argv);
    if (!args.ok) return 2;
    op8::ApplyFusedEmaAdam8bitListOptions small;  // the EMA, a grad scale (found_inf given and clear)
    small.ema = true;
    small.gradScale = true;
    op8::ApplyFusedEmaAdam8bitListOptions chunked;  // no EMA, maximize, lr and the EMA decay as tensors
    chunked.ema = false;
    chunked.maximize = true;
    chunked.lrTensor = chunked.emaDecayTensor = true;
    op8::ApplyFusedEmaAdam8bitListOptions manyChunks;  // the EMA, a grad scale, found_inf absent
    manyChunks.ema = true;
    manyChunks.gradScale = true;
    int failed = 0, index = 0;
    for (const Row& row : Rows()) {
        // 48 cores: 1 element, shorter than a block, a block, a block and a partial one (6 blocks: 6 cores),
        // tiny second moments.
        Case smallCase{48, {1, 37, 256, 300, 17}, small, 0.0f, 1, true};
        smallCase.tinyV = true;
        failed += RunCase(args.out, args.seed, row, smallCase, index++);
        // 4 cores: 1 + 3 chunks and tails (1 to 3 chunks per core), Adam + L2 without bias correction.
        failed += RunCase(args.out, args.seed, row,
                          {4, {1000013, 1, 3000000, 200, 5}, chunked, kNoValue, 0, false}, index++);
        // 4 cores: 25 chunks and a partial block (6 and more per core), non-finite gradients.
        Case manyChunksCase{4, {25000029, 7}, manyChunks, kNoValue, 1, true};
        manyChunksCase.nonFinite = true;
        failed += RunCase(args.out, args.seed, row, manyChunksCase, index++);
        if (row.dtypes.param != aea::DataType::kFloat32) {
            for (bool saturation : {false, true}) {
                Case c{4, {1000041, 9}, small, kNoValue, 1, true};
                c.overflow = true;
                c.saturation = saturation;
                failed += RunCase(args.out, args.seed, row, c, index++);
            }
        }
    }
    // found_inf set: nothing is written (the first row).
    failed += RunCase(args.out, args.seed, Rows()[0], {4, {1000003, 40}, small, 1.0f, 1, true}, index++);
    return ascendc_emulate::DriverResult(argv[0], index, failed);
}
