// ComputeApplyFusedEmaAdamListTiling
// (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.h) as the CANN adapter and
// the CPU runtime call it: the keys of the 13 dtype combinations and nothing else, launches without
// elements, the balance of a 50257x768 embedding beside 768-element biases on a 910B2, and a
// chunk that fits the UB for every combination and option.
// tests/python/host/test_apply_fused_ema_adam_list_tiling.py holds the random-list properties.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../test_harness.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "apply_fused_ema_adam_list_tiling_key.h"

using namespace aea_test;
namespace aea = ascend_ema_adam;
namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;

namespace {

constexpr aea::DataType kF32 = aea::DataType::kFloat32;
constexpr aea::DataType kF16 = aea::DataType::kFloat16;
constexpr aea::DataType kBf16 = aea::DataType::kBFloat16;
constexpr aea::DataType kFloats[] = {kF32, kF16, kBf16};

list_op::ApplyFusedEmaAdamListDtypes Dtypes(aea::DataType p, aea::DataType s, aea::DataType g,
                                            bool hasCopy = false, aea::DataType c = kF16)
{
    list_op::ApplyFusedEmaAdamListDtypes d;
    d.param = p;
    d.state = s;
    d.grad = g;
    d.hasCopy = hasCopy;
    d.copy = c;
    return d;
}

/** The operator's contract, written out: S = P or fp32; G = P (or C) or fp32; copies need an
 *  fp32 P and a 16-bit C. */
bool InContract(const list_op::ApplyFusedEmaAdamListDtypes& d)
{
    if (d.state != d.param && d.state != kF32) return false;
    if (d.hasCopy) {
        return d.param == kF32 && d.copy != kF32 && (d.grad == d.copy || d.grad == kF32);
    }
    return d.grad == d.param || d.grad == kF32;
}

list_op::ApplyFusedEmaAdamListOptions Options(bool amsgrad, bool gradScale)
{
    list_op::ApplyFusedEmaAdamListOptions o;
    o.amsgrad = amsgrad;
    o.gradScale = gradScale;
    return o;
}

/** Elements of every core under `t`, from the segments the kernel walks. */
std::vector<uint64_t> CoreElements(const list_op::ApplyFusedEmaAdamListTilingResult& r,
                                   const std::vector<uint64_t>& numels)
{
    std::vector<uint64_t> elems;
    for (uint32_t core = 0; core < r.blockDim; ++core) {
        uint64_t sum = 0;
        for (const list_op::ApplyFusedEmaAdamListSegment& s :
             list_op::ApplyFusedEmaAdamListCoreSegments(r.data, numels, core)) {
            sum += s.end - s.begin;
        }
        elems.push_back(sum);
    }
    return elems;
}

AEA_CASE(keys_for_the_thirteen_combinations)
{
    const struct {
        list_op::ApplyFusedEmaAdamListDtypes dtypes;
        uint64_t key;
    } expected[] = {
        {Dtypes(kF32, kF32, kF32), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32},
        {Dtypes(kF32, kF32, kF16, true, kF16), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP16_FP16},
        {Dtypes(kF32, kF32, kF32, true, kF16), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32_FP16},
        {Dtypes(kF32, kF32, kBf16, true, kBf16), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_BF16_BF16},
        {Dtypes(kF32, kF32, kF32, true, kBf16), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP32_FP32_FP32_BF16},
        {Dtypes(kF16, kF16, kF16), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP16_FP16},
        {Dtypes(kF16, kF16, kF32), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP16_FP32},
        {Dtypes(kF16, kF32, kF16), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP32_FP16},
        {Dtypes(kF16, kF32, kF32), APPLY_FUSED_EMA_ADAM_LIST_KEY_FP16_FP32_FP32},
        {Dtypes(kBf16, kBf16, kBf16), APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_BF16_BF16},
        {Dtypes(kBf16, kBf16, kF32), APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_BF16_FP32},
        {Dtypes(kBf16, kF32, kBf16), APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_FP32_BF16},
        {Dtypes(kBf16, kF32, kF32), APPLY_FUSED_EMA_ADAM_LIST_KEY_BF16_FP32_FP32},
    };
    const std::vector<list_op::ApplyFusedEmaAdamListDtypes> all =
        list_op::ApplyFusedEmaAdamListDtypeCombinations();
    EXPECT(all.size() == 13);
    for (size_t i = 0; i < 13 && i < all.size(); ++i) {
        const uint64_t key = list_op::ApplyFusedEmaAdamListTilingKeyOf(expected[i].dtypes);
        EXPECT_MSG(key == expected[i].key, "combination %zu: key %llu", i,
                   static_cast<unsigned long long>(key));
        EXPECT(list_op::ApplyFusedEmaAdamListTilingKeyOf(all[i]) ==
               key);  // the table is in key order
        const list_op::ApplyFusedEmaAdamListDtypes back =
            list_op::ApplyFusedEmaAdamListDtypesOfKey(key);
        EXPECT(list_op::ApplyFusedEmaAdamListTilingKeyOf(back) == key &&
               back.hasCopy == expected[i].dtypes.hasCopy);
        EXPECT(key != 100 && key != 101 && key != 102);  // the single op's keys
    }
    bool threw = false;
    try {
        list_op::ApplyFusedEmaAdamListDtypesOfKey(102);
    } catch (const std::invalid_argument& e) {
        threw = Contains(e.what(), "unknown tiling key 102");
    }
    EXPECT(threw);
}

AEA_CASE(refuses_every_combination_outside_the_contract)
{
    int accepted = 0;
    for (aea::DataType p : kFloats) {
        for (aea::DataType s : kFloats) {
            for (aea::DataType g : kFloats) {
                for (int copy = -1; copy < 3; ++copy) {
                    const list_op::ApplyFusedEmaAdamListDtypes d =
                        Dtypes(p, s, g, copy >= 0, copy >= 0 ? kFloats[copy] : kF16);
                    std::string error;
                    try {
                        list_op::ComputeApplyFusedEmaAdamListTiling(
                            {100, 3}, d, list_op::ApplyFusedEmaAdamListAttrs(),
                            list_op::ApplyFusedEmaAdamListOptions(),
                            aea::FindPlatform("Ascend910B2"));
                    } catch (const std::invalid_argument& e) {
                        error = e.what();
                    }
                    const bool ok = error.empty();
                    accepted += ok ? 1 : 0;
                    EXPECT_MSG(ok == InContract(d), "param %s state %s grad %s copy %d: %s",
                               aea::DataTypeName(p), aea::DataTypeName(s), aea::DataTypeName(g),
                               copy, error.c_str());
                    if (!ok) {
                        EXPECT_MSG(Contains(error, std::string("has no kernel for param ") +
                                                       aea::DataTypeName(p)),
                                   "%s", error.c_str());
                    }
                }
            }
        }
    }
    EXPECT(accepted == 13);
}

AEA_CASE(no_elements_no_launch)
{
    for (const std::vector<uint64_t>& numels :
         {std::vector<uint64_t>{}, std::vector<uint64_t>{0}, std::vector<uint64_t>{0, 0, 0}}) {
        const list_op::ApplyFusedEmaAdamListTilingResult r =
            list_op::ComputeApplyFusedEmaAdamListTiling(
                numels, Dtypes(kBf16, kF32, kBf16), list_op::ApplyFusedEmaAdamListAttrs(),
                Options(true, true), aea::FindPlatform("Ascend910B2"));
        EXPECT(r.blockDim == 0 && r.data.usedCoreNum == 0 && r.data.chunkLength == 0);
        EXPECT(r.ubBytesPerCore == 0 && r.data.tensorNum == numels.size());
        EXPECT(r.data.coreStart[0].tensor == numels.size() && r.data.coreStart[0].block == 0);
        EXPECT(list_op::ApplyFusedEmaAdamListCoreSegments(r.data, numels, 0).empty());
    }
}

AEA_CASE(attributes_and_inputs_reach_the_tiling_data)
{
    // The attributes, passed whole, and which optional inputs the launch has: each its field.
    for (int bits = 0; bits < 4; ++bits) {
        list_op::ApplyFusedEmaAdamListAttrs attrs;
        attrs.lr = 0.25;
        attrs.mode = bits & 1;
        attrs.maximize = (bits & 2) != 0;
        list_op::ApplyFusedEmaAdamListOptions options = Options((bits & 1) != 0, (bits & 2) == 0);
        options.foundInf = bits == 3;
        options.ema = bits != 1;
        const ApplyFusedEmaAdamListTilingData t =
            list_op::ComputeApplyFusedEmaAdamListTiling({64}, Dtypes(kF32, kF32, kF32), attrs,
                                                        options, aea::FindPlatform("Ascend910B2"))
                .data;
        EXPECT(t.hyper.lr == 0.25f && t.hyper.mode == static_cast<uint32_t>(bits & 1));
        EXPECT(t.maximize == ((bits & 2) != 0 ? 1U : 0U));
        EXPECT(t.amsgrad == ((bits & 1) != 0 ? 1U : 0U));
        EXPECT(t.hasGradScale == ((bits & 2) == 0 ? 1U : 0U));
        EXPECT(t.hasFoundInf == (bits == 3 ? 1U : 0U) && t.hasEma == (bits != 1 ? 1U : 0U));
    }
}

AEA_CASE(embedding_beside_biases_balances_on_910b2)
{
    // wte 50257x768 between 768-element biases, one partial-block tail (777) at the end.
    std::vector<uint64_t> numels = {768, 50257ULL * 768, 768};
    for (int i = 0; i < 100; ++i) numels.push_back(768);
    numels.push_back(777);
    const aea::Platform a2 = aea::FindPlatform("Ascend910B2");
    for (const list_op::ApplyFusedEmaAdamListDtypes& d :
         {Dtypes(kF32, kF32, kF32), Dtypes(kBf16, kF32, kBf16)}) {
        const list_op::ApplyFusedEmaAdamListTilingResult r =
            list_op::ComputeApplyFusedEmaAdamListTiling(
                numels, d, list_op::ApplyFusedEmaAdamListAttrs(),
                list_op::ApplyFusedEmaAdamListOptions(), a2);
        const ApplyFusedEmaAdamListTilingData& t = r.data;
        EXPECT(r.blockDim == 48);
        // The start table: monotone in (tensor, block), from {0, 0} to the sentinel.
        EXPECT(t.coreStart[0].tensor == 0 && t.coreStart[0].block == 0);
        EXPECT(t.coreStart[48].tensor == numels.size() && t.coreStart[48].block == 0);
        for (uint32_t c = 0; c < 48; ++c) {
            const auto& a = t.coreStart[c];
            const auto& b = t.coreStart[c + 1];
            EXPECT(a.tensor < b.tensor || (a.tensor == b.tensor && a.block < b.block));
        }
        const std::vector<uint64_t> elems = CoreElements(r, numels);
        const uint64_t lo = *std::min_element(elems.begin(), elems.end());
        const uint64_t hi = *std::max_element(elems.begin(), elems.end());
        // One block of imbalance plus the one tail (the last core's 777 % alignElems).
        EXPECT_MSG(hi - lo <= 2 * t.alignElems, "per-core elements %llu..%llu",
                   static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
        uint64_t total = 0;
        for (uint64_t e : elems) total += e;
        uint64_t expect = 0;
        for (uint64_t n : numels) expect += n;
        EXPECT(total == expect);
        EXPECT(list_op::ApplyFusedEmaAdamListCoreSegments(t, numels, 48).empty());
    }
}

AEA_CASE(chunk_fits_the_ub_for_every_combination_and_option)
{
    for (const aea::Platform& platform : aea::PlatformPresets()) {
        for (const list_op::ApplyFusedEmaAdamListDtypes& d :
             list_op::ApplyFusedEmaAdamListDtypeCombinations()) {
            for (int o = 0; o < 4; ++o) {
                const list_op::ApplyFusedEmaAdamListOptions options =
                    Options((o & 1) != 0, (o & 2) != 0);
                const list_op::ApplyFusedEmaAdamListTilingResult r =
                    list_op::ComputeApplyFusedEmaAdamListTiling(
                        {5, 1ULL << 30, 17}, d, list_op::ApplyFusedEmaAdamListAttrs(), options,
                        platform);
                const uint32_t bytes =
                    list_op::ApplyFusedEmaAdamListUbBytesPerElement(d, options, 2);
                const uint32_t chunk = r.data.chunkLength;
                const uint32_t align = r.data.alignElems;
                EXPECT(align == (d.param == kF32 && d.state == kF32 && d.grad == kF32 && !d.hasCopy
                                     ? 8U
                                     : 16U));
                EXPECT(chunk > 0 && chunk % align == 0);
                EXPECT(r.ubBytesPerCore == uint64_t{chunk} * bytes);
                EXPECT_MSG(r.ubBytesPerCore <= platform.ubSize &&
                               uint64_t{chunk + align} * bytes > platform.ubSize,
                           "%s key %llu options %d: chunk %u x %u B", platform.name.c_str(),
                           static_cast<unsigned long long>(r.tilingKey), o, chunk, bytes);
            }
        }
    }
}

}  // namespace

int main(int argc, char** argv) { return RunCases(argc, argv); }
