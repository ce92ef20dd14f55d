// tools/ascendc_check --emulate driver for op_kernel/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list.cpp:
// the unchanged 8-bit kernel, compiled against the real AscendC library with the emulated intrinsics (the uint8 /
// half / int32 casts, Gather, Compare, Select among them), computes every tiling key (dtype row of the contract) on
// seeded inputs, on the host's tilings (op_host ComputeAdam8bitListTiling), the lists in CANN's launcher layout:
//   - 48 cores (Ascend910B2): entries of 1 element, shorter than a block, a block, a block and a partial second one
//     (6 blocks: the host uses 6 cores, one block each); the EMA, a grad scale, found_inf given and clear;
//   - 4 cores with 1 to 3 chunks per core (entries across core boundaries, partial last blocks), without the EMA,
//     maximize, Adam + L2 without bias correction, lr and the EMA decay as tensors;
//   - 4 cores with 6 chunks and more per core, the EMA, a grad scale, non-finite gradients (+-inf, NaN: their
//     blocks' scales become NaN or inf);
//   - the 16-bit-parameter rows with parameters at the format's maximum and infinite, steps of about a thousand,
//     in both float-overflow modes (INF_NAN and saturation);
// and found_inf set (nothing may be written) on the first row. Codes, scales and the two maps are seeded random
// (the maps sorted, within [-1, 1], dense near 0 as the dynamic maps are, with an equal pair: a tie of thresholds).
// Each case is written for compare.py (golden8bit.emulate_entry8). Usage: <program> <out> <seed>
// ascendc-check: run-sources op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_tiling.cpp op_host/apply_fused_ema_adam8bit_list/apply_fused_ema_adam8bit_list_check.cpp op_host/common/platform.cpp op_host/common/ema_adam_attrs.cpp op_host/common/validation.cpp
#include "kernel_scalar_host.h"  // defines __aicore__ away: first (the codebook header is kernel code)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "apply_fused_ema_adam8bit_list_codebook.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "emu_convert.h"
#include "emulate_support.h"
#include "launcher_list.h"

extern "C" void apply_fused_ema_adam8bit_list(
    uint8_t* grads, uint8_t* vars, uint8_t* ms, uint8_t* vs, uint8_t* mAbsmaxes, uint8_t* vAbsmaxes, uint8_t* ss,
    uint8_t* modelCopies, uint8_t* qmapM, uint8_t* qmapV, uint8_t* step, uint8_t* gradScale, uint8_t* foundInf,
    uint8_t* lr, uint8_t* emaDecay, uint8_t* varsRef, uint8_t* ssRef, uint8_t* modelCopiesRef, uint8_t* msRef,
    uint8_t* vsRef, uint8_t* mAbsmaxesRef, uint8_t* vAbsmaxesRef, uint8_t* workspace, uint8_t* tiling);

namespace {

namespace aea = ascend_ema_adam;
namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;
using ascendc_emulate::Dt;

constexpr float kNoValue = -1.0f;  // found_inf absent
constexpr uint32_t kBlock = aea::kAdam8bitBlock;
constexpr uint32_t kMapSize = aea::kAdam8bitMapSize;

Dt DtOf(aea::DataType d)
{
    return d == aea::DataType::kFloat32 ? Dt::kF32 : d == aea::DataType::kFloat16 ? Dt::kF16 : Dt::kBf16;
}

struct Row {
    op8::Adam8bitDtypes dtypes;
    uint32_t key;
};

const std::vector<Row>& Rows()
{
    static const std::vector<Row> rows = {
#define AEA_ADAM8BIT_EMULATE_ROW(key, P, G, C)                                                                    \
    {{op8::kAdam8bitDtype_##P, op8::kAdam8bitDtype_##G, op8::kAdam8bitHasCopy_##C, op8::kAdam8bitDtype_##C},    \
     APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key},
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_EMULATE_ROW)
#undef AEA_ADAM8BIT_EMULATE_ROW
    };
    return rows;
}

struct Case {
    uint32_t cores;
    std::vector<uint64_t> numels;  // elements; an entry c * 1000000 + e means c full chunks plus e elements
    op8::Adam8bitOptions options;  // options.foundInf is set from foundInf
    float foundInf = kNoValue;     // its value when given
    int64_t mode = 1;
    bool biasCorrection = true;
    bool nonFinite = false;        // some gradients +-inf and NaN
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

/** One list: an arena per entry (shared with the blocks) and its launcher descriptor. */
struct List {
    std::vector<ascendc_emulate::SharedBytes> entries;
    std::vector<uint64_t> words;
    uint8_t* Descriptor() { return reinterpret_cast<uint8_t*>(words.data()); }
};

List MakeList(const std::vector<uint64_t>& counts, uint32_t elemBytes)
{
    List l;
    std::vector<uint8_t*> data;
    std::vector<std::vector<uint64_t>> shapes;
    for (uint64_t n : counts) {
        l.entries.emplace_back(n * elemBytes);
        data.push_back(l.entries.back().data());
        shapes.push_back({n});
    }
    l.words = ascendc_check::LauncherListWords(data, shapes);
    return l;
}

void PutFloat(uint8_t* p, uint64_t i, Dt dt, float v)
{
    if (dt == Dt::kF32) {
        std::memcpy(p + i * 4, &v, 4);
    } else {
        const uint16_t b = dt == Dt::kF16 ? ascendc_emu::FloatToHalf(v, ascendc_emu::Round::kRint)
                                          : ascendc_emu::FloatToBf16(v, ascendc_emu::Round::kRint);
        std::memcpy(p + i * 2, &b, 2);
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
    op8::Adam8bitOptions options = c.options;
    options.foundInf = c.foundInf != kNoValue;
    const op8::Adam8bitDtypes& d = row.dtypes;
    const uint32_t chunk =
        op8::ComputeAdam8bitListTiling({uint64_t{1} << 26}, d, attrs, options, platform).data.chunkBlocks * kBlock;
    std::vector<uint64_t> numels, blocks;
    for (uint64_t n : c.numels) {
        numels.push_back(n / 1000000 * chunk + n % 1000000);
        blocks.push_back(aea::Adam8bitBlocks(numels.back()));
    }
    const op8::Adam8bitTilingResult t = op8::ComputeAdam8bitListTiling(numels, d, attrs, options, platform);
    if (t.tilingKey != row.key) {
        std::printf("emulate: the tiling gave key %u for the row of key %u\n", t.tilingKey, row.key);
        return 1;
    }

    const Dt p = DtOf(d.param), g = DtOf(d.grad);
    std::map<std::string, List> lists;
    lists.emplace("grads", MakeList(numels, ascendc_emulate::DtBytes(g)));
    lists.emplace("vars", MakeList(numels, ascendc_emulate::DtBytes(p)));
    lists.emplace("ms", MakeList(numels, 1));
    lists.emplace("vs", MakeList(numels, 1));
    lists.emplace("m_absmaxes", MakeList(blocks, 4));
    lists.emplace("v_absmaxes", MakeList(blocks, 4));
    if (options.ema) lists.emplace("ss", MakeList(numels, 4));
    if (d.hasCopy) lists.emplace("model_copies", MakeList(numels, ascendc_emulate::DtBytes(DtOf(d.copy))));

    ascendc_emulate::Inputs in(seed * 1000 + static_cast<uint64_t>(index));
    Bits bits(seed * 1000 + static_cast<uint64_t>(index));
    ascendc_emulate::SharedBytes maps(2 * kMapSize * 4);
    const std::vector<float> qmapM = Map(bits, true), qmapV = Map(bits, false);
    std::memcpy(maps.data(), qmapM.data(), kMapSize * 4);
    std::memcpy(maps.data() + kMapSize * 4, qmapV.data(), kMapSize * 4);
    for (size_t i = 0; i < numels.size(); ++i) {
        const uint64_t n = numels[i];
        in.Fill(lists.at("grads").entries[i].data(), n, g, 0.01f, 1.0f, true);
        in.Fill(lists.at("vars").entries[i].data(), n, p, 0.1f, 2.0f, true);
        for (const char* codes : {"ms", "vs"}) {
            uint8_t* q = lists.at(codes).entries[i].data();
            for (uint64_t k = 0; k < n; ++k) q[k] = static_cast<uint8_t>(bits.Next());
        }
        // Old scales: m's in [1e-3, 0.1), v's in [1e-6, 1e-2).
        for (uint64_t b = 0; b < blocks[i]; ++b) {
            const float sm = 1e-3f + bits.Unit() * 0.099f, sv = 1e-6f + bits.Unit() * 0.01f;
            std::memcpy(lists.at("m_absmaxes").entries[i].data() + b * 4, &sm, 4);
            std::memcpy(lists.at("v_absmaxes").entries[i].data() + b * 4, &sv, 4);
        }
        if (options.ema) in.Fill(lists.at("ss").entries[i].data(), n, Dt::kF32, 0.1f, 2.0f, true);
        if (d.hasCopy) in.Fill(lists.at("model_copies").entries[i].data(), n, DtOf(d.copy), 0.1f, 2.0f, true);
        if (c.nonFinite) NonFinite(lists.at("grads").entries[i].data(), n, g);
        if (c.overflow) Overflow(lists.at("vars").entries[i].data(), n, p);
    }
    // Separate descriptors of the same tensors for the in-place outputs, as on the device.
    std::map<std::string, std::vector<uint64_t>> outWords;
    for (auto& [name, l] : lists) outWords[name] = l.words;
    static uint64_t emptyList = sizeof(uint64_t);
    auto inList = [&](const char* name) {
        return lists.count(name) ? lists.at(name).Descriptor() : reinterpret_cast<uint8_t*>(&emptyList);
    };
    auto outList = [&](const char* name) {
        return lists.count(name) ? reinterpret_cast<uint8_t*>(outWords.at(name).data())
                                 : reinterpret_cast<uint8_t*>(&emptyList);
    };
    ascendc_emulate::SharedBytes scalars(64);
    const int64_t stepValue = 1 + static_cast<int64_t>((seed + static_cast<uint64_t>(index) * 7919) % 1000);
    const float gradScale = 512.0f, lr = 2e-3f, emaDecay = 0.99f;
    uint8_t* const base = scalars.data();
    std::memcpy(base, &stepValue, 8);
    std::memcpy(base + 8, &gradScale, 4);
    std::memcpy(base + 12, &c.foundInf, 4);
    std::memcpy(base + 16, &lr, 4);
    std::memcpy(base + 20, &emaDecay, 4);
    ApplyFusedEmaAdam8bitListTilingData tiling = t.data;

    char name[96];
    std::snprintf(name, sizeof name, "list8bit_%03d", index);
    ascendc_emulate::CaseWriter w(out, name);
    auto writeAll = [&](const char* suffix, bool inputs) {
        for (auto& [listName, l] : lists) {
            if (!inputs && listName == "grads") continue;
            for (size_t i = 0; i < l.entries.size(); ++i) {
                w.Tensor(listName + "_" + std::to_string(i) + suffix, l.entries[i].data(), l.entries[i].size());
            }
        }
    };
    writeAll(".in", true);
    w.Tensor("qmap_m.in", maps.data(), kMapSize * 4);
    w.Tensor("qmap_v.in", maps.data() + kMapSize * 4, kMapSize * 4);
    uint8_t* const qm = maps.data();
    uint8_t* const qv = maps.data() + kMapSize * 4;
    const ascendc_emulate::LaunchOutcome o =
        t.blockDim == 0 ? ascendc_emulate::LaunchOutcome{}
                        : ascendc_emulate::Launch(name, t.blockDim, t.tilingKey, c.saturation, [&] {
                              apply_fused_ema_adam8bit_list(
                                  inList("grads"), inList("vars"), inList("ms"), inList("vs"), inList("m_absmaxes"),
                                  inList("v_absmaxes"), inList("ss"), inList("model_copies"), qm, qv, base,
                                  options.gradScale ? base + 8 : nullptr, options.foundInf ? base + 12 : nullptr,
                                  options.lrTensor ? base + 16 : nullptr, options.emaDecayTensor ? base + 20 : nullptr,
                                  outList("vars"), outList("ss"), outList("model_copies"), outList("ms"),
                                  outList("vs"), outList("m_absmaxes"), outList("v_absmaxes"), nullptr,
                                  reinterpret_cast<uint8_t*>(&tiling));
                          });
    writeAll(".out", false);
    w.Meta("kernel", "list8bit");
    w.Meta("param", ascendc_emulate::DtName(p));
    w.Meta("grad", ascendc_emulate::DtName(g));
    w.Meta("copy", d.hasCopy ? ascendc_emulate::DtName(DtOf(d.copy)) : "");
    w.Meta("entries", static_cast<double>(numels.size()));
    w.Meta("ema", options.ema ? 1.0 : 0.0);
    w.Meta("maximize", options.maximize ? 1.0 : 0.0);
    if (options.gradScale) w.Meta("grad_scale", gradScale); else w.Meta("grad_scale", "none");
    if (options.foundInf) w.Meta("found_inf", c.foundInf); else w.Meta("found_inf", "none");
    w.Meta("step", static_cast<double>(stepValue));
    w.Meta("lr", options.lrTensor ? double{lr} : attrs.lr);
    w.Meta("ema_decay", options.emaDecayTensor ? double{emaDecay} : attrs.emaDecay);
    w.Meta("beta1", attrs.beta1);
    w.Meta("beta2", attrs.beta2);
    w.Meta("eps", attrs.eps);
    w.Meta("mode", static_cast<double>(attrs.mode));
    w.Meta("bias_correction", attrs.biasCorrection ? 1.0 : 0.0);
    w.Meta("weight_decay", attrs.weightDecay);
    w.Meta("overflow_mode", c.saturation ? "saturation" : "inf_nan");
    w.Meta("tiling_key", static_cast<double>(t.tilingKey));
    w.Meta("platform_cores", static_cast<double>(c.cores));
    w.Meta("cores", static_cast<double>(t.blockDim));
    w.Meta("chunk", static_cast<double>(t.data.chunkBlocks * kBlock));
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
    w.Meta("failed_blocks", static_cast<double>(o.failedBlocks));
    w.Meta("hazards", static_cast<double>(o.hazards));
    w.Meta("vector_instructions", static_cast<double>(o.total.vectorInstructions));
    w.Meta("mte2_bytes", static_cast<double>(o.total.mte2Bytes));
    w.Meta("mte3_bytes", static_cast<double>(o.total.mte3Bytes));
    w.Meta("max_core_vector_instructions", static_cast<double>(o.perCoreMax.vectorInstructions));
    w.Meta("max_core_mte2_copies", static_cast<double>(o.perCoreMax.mte2Copies));
    std::printf("emulate: %s key %u: %u cores, chunks of %u blocks, up to %llu chunks per core%s\n", name, row.key,
                t.blockDim, t.data.chunkBlocks, static_cast<unsigned long long>(mostChunks),
                o.failedBlocks == 0 ? "" : ", FAILED blocks");
    return o.failedBlocks;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <out dir> <seed>\n", argv[0]);
        return 2;
    }
    ascendc_emulate::UseSourceRootsFromEnvironment();
    const std::string out = argv[1];
    const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
    op8::Adam8bitOptions small;  // the EMA, a grad scale (found_inf given and clear)
    small.ema = true;
    small.gradScale = true;
    op8::Adam8bitOptions chunked;  // no EMA, maximize, lr and the EMA decay as tensors
    chunked.ema = false;
    chunked.maximize = true;
    chunked.lrTensor = chunked.emaDecayTensor = true;
    op8::Adam8bitOptions manyChunks;  // the EMA, a grad scale, found_inf absent
    manyChunks.ema = true;
    manyChunks.gradScale = true;
    int failed = 0, index = 0;
    for (const Row& row : Rows()) {
        // 48 cores: 1 element, shorter than a block, a block, a block and a partial one (6 blocks: 6 cores).
        failed += RunCase(out, seed, row, {48, {1, 37, 256, 300, 17}, small, 0.0f, 1, true}, index++);
        // 4 cores: 1 + 3 chunks and tails (1 to 3 chunks per core), Adam + L2 without bias correction.
        failed += RunCase(out, seed, row, {4, {1000013, 1, 3000000, 200, 5}, chunked, kNoValue, 0, false}, index++);
        // 4 cores: 25 chunks and a partial block (6 and more per core), non-finite gradients.
        Case manyChunksCase{4, {25000029, 7}, manyChunks, kNoValue, 1, true};
        manyChunksCase.nonFinite = true;
        failed += RunCase(out, seed, row, manyChunksCase, index++);
        if (row.dtypes.param != aea::DataType::kFloat32) {
            for (bool saturation : {false, true}) {
                Case c{4, {1000041, 9}, small, kNoValue, 1, true};
                c.overflow = true;
                c.saturation = saturation;
                failed += RunCase(out, seed, row, c, index++);
            }
        }
    }
    // found_inf set: nothing is written (the first row).
    failed += RunCase(out, seed, Rows()[0], {4, {1000003, 40}, small, 1.0f, 1, true}, index++);
    std::printf("emulate: %s: %d launches, %d failed block(s)\n", argv[0], index, failed);
    return failed == 0 ? 0 : 1;
}
