// ApplyFusedEmaAdam8bitList's validation (op_host/apply_fused_ema_adam8bit_list/*_check.h): a valid
// call per row of the dtype contract, and each rule's refusal with its message.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../test_harness.h"
#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "data_type.h"

using namespace aea_test;
namespace aea = ascend_ema_adam;
namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

const int32_t kF32 = aea::CannCodeOf(aea::DataType::kFloat32);
const int32_t kF16 = aea::CannCodeOf(aea::DataType::kFloat16);
const int32_t kBf16 = aea::CannCodeOf(aea::DataType::kBFloat16);
const int32_t kI64 = aea::CannCodeOf(aea::DataType::kInt64);
const int32_t kU8 = op8::kApplyFusedEmaAdam8bitListCodeDtype;

/** A call of entries with these shapes, every list given; edit, then Check(). */
struct Call {
    std::vector<std::vector<int64_t>> shapes;     // per entry
    std::vector<std::vector<int64_t>> scales;     // per entry: [ceil(numel / 256)]
    int32_t dtype[op8::kApplyFusedEmaAdam8bitListTensorLists] = {kF32, kF32, kU8,  kU8,
                                                                 kF32, kF32, kF32, kF16};
    bool present[op8::kApplyFusedEmaAdam8bitListTensorLists] = {true, true, true, true,
                                                                true, true, true, false};
    bool placeholders[op8::kApplyFusedEmaAdam8bitListTensorLists] =
        {};  // every tensor of the list [0]
    std::vector<int64_t> none{0};
    bool wholeCall = false;
    std::vector<op8::ListEntryArg> lists[op8::kApplyFusedEmaAdam8bitListTensorLists];
    std::vector<int64_t> mapShape{256};
    std::vector<int64_t> one{1};
    int32_t stepDtype = kI64;
    bool gradScale = false;
    aea::Attrs attrs;
    op8::ApplyFusedEmaAdam8bitListDtypes dtypes{aea::DataType::kFloat32, aea::DataType::kFloat32};
    op8::ApplyFusedEmaAdam8bitListOptions options;

    explicit Call(Shapes s) : shapes(std::move(s))
    {
        for (const auto& shape : shapes) {
            int64_t n = 1;
            for (int64_t d : shape) n *= d;
            scales.push_back({(n + 255) / 256});
        }
    }

    aea::Refusal Check()
    {
        for (int list = 0; list < op8::kApplyFusedEmaAdam8bitListTensorLists; ++list) {
            lists[list].clear();
            if (!present[list]) continue;
            const bool scale = list == op8::kApplyFusedEmaAdam8bitListMAbsmaxes ||
                               list == op8::kApplyFusedEmaAdam8bitListVAbsmaxes;
            for (size_t i = 0; i < shapes.size(); ++i) {
                lists[list].push_back({dtype[list], placeholders[list] ? &none
                                                    : scale             ? &scales[i]
                                                                        : &shapes[i]});
            }
        }
        const aea::TensorArg qmapM{"qmapM", kF32, mapShape};
        const aea::TensorArg qmapV{"qmapV", kF32, std::vector<int64_t>{256}};
        const aea::TensorArg step{"step", stepDtype, one};
        const aea::TensorArg scale{"gradScaleOptional", kF32, std::vector<int64_t>{2}};
        op8::ApplyFusedEmaAdam8bitListArgs args;
        for (int list = 0; list < op8::kApplyFusedEmaAdam8bitListTensorLists; ++list)
            args.lists[list] = &lists[list];
        args.qmapM = &qmapM;
        args.qmapV = &qmapV;
        args.step = &step;
        args.gradScale = gradScale ? &scale : nullptr;
        args.wholeCall = wholeCall;
        return op8::CheckApplyFusedEmaAdam8bitList(args, attrs, false, &dtypes, &options);
    }
};

bool Says(const aea::Refusal& r, const char* text)
{
    const bool ok = r.find(text) != std::string::npos;
    if (!ok) std::fprintf(stderr, "  refusal: '%s'\n  expected to contain: '%s'\n", r.c_str(), text);
    return ok;
}

AEA_CASE(valid_call_gives_dtypes_and_options)
{
    Call c(Shapes{{300}, {7, 5}, {0}});
    EXPECT(c.Check().empty());
    EXPECT(c.dtypes.param == aea::DataType::kFloat32 && !c.dtypes.hasCopy);
    EXPECT(c.options.ema && !c.options.gradScale && !c.options.foundInf);
    c.present[op8::kApplyFusedEmaAdam8bitListSs] = false;
    EXPECT(c.Check().empty() && !c.options.ema);
}

AEA_CASE(every_row_of_the_contract_is_accepted_with_its_key)
{
    struct Row { int32_t p, g, c; uint32_t key; };
    const std::vector<Row> rows = {
#define AEA_ROW(key, P, G, C)                                        \
    {aea::CannCodeOf(op8::kApplyFusedEmaAdam8bitListDtype_##P),      \
     aea::CannCodeOf(op8::kApplyFusedEmaAdam8bitListDtype_##G),      \
     op8::kApplyFusedEmaAdam8bitListHasCopy_##C                      \
         ? aea::CannCodeOf(op8::kApplyFusedEmaAdam8bitListDtype_##C) \
         : -1,                                                       \
     APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key},
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ROW)
#undef AEA_ROW
    };
    EXPECT(rows.size() == 15);
    for (const Row& row : rows) {
        Call c(Shapes{{1000}});
        c.dtype[op8::kApplyFusedEmaAdam8bitListVars] = row.p;
        c.dtype[op8::kApplyFusedEmaAdam8bitListGrads] = row.g;
        c.present[op8::kApplyFusedEmaAdam8bitListCopies] = row.c >= 0;
        c.dtype[op8::kApplyFusedEmaAdam8bitListCopies] = row.c;
        EXPECT_MSG(
            c.Check().empty() && op8::ApplyFusedEmaAdam8bitListTilingKeyOf(c.dtypes) == row.key,
            "key %u", row.key);
    }
}

AEA_CASE(dtype_rules)
{
    Call codes(Shapes{{300}});
    codes.dtype[op8::kApplyFusedEmaAdam8bitListMs] = kF32;
    EXPECT(Says(codes.Check(), "msRef[0] has dtype ACL_FLOAT (0), expected ACL_UINT8 (4)"));
    Call ema(Shapes{{300}});
    ema.dtype[op8::kApplyFusedEmaAdam8bitListSs] = kBf16;
    EXPECT(Says(ema.Check(), "ssRef[0] has dtype ACL_BF16 (27), expected ACL_FLOAT (0): the EMA"));
    Call copies(Shapes{{300}});
    copies.present[op8::kApplyFusedEmaAdam8bitListCopies] = true;
    copies.dtype[op8::kApplyFusedEmaAdam8bitListVars] = kF16;
    EXPECT(Says(copies.Check(), "modelCopiesRef needs fp32 varsRef"));
    Call fp32Copy(Shapes{{300}});
    fp32Copy.present[op8::kApplyFusedEmaAdam8bitListCopies] = true;
    fp32Copy.dtype[op8::kApplyFusedEmaAdam8bitListCopies] = kF32;
    EXPECT(Says(fp32Copy.Check(), "expected ACL_FLOAT16 or ACL_BF16"));
    Call intGrad(Shapes{{300}});
    intGrad.dtype[op8::kApplyFusedEmaAdam8bitListGrads] = kI64;
    EXPECT(Says(intGrad.Check(), "grads[0] has dtype ACL_INT64 (9)"));
    Call step(Shapes{{300}});
    step.stepDtype = kF32;
    EXPECT(Says(step.Check(), "step has dtype ACL_FLOAT (0), expected ACL_INT64"));
}

AEA_CASE(shape_and_length_rules)
{
    Call scale(Shapes{{300}, {40}});
    scale.scales[1] = {2};
    EXPECT(Says(scale.Check(), "mAbsmaxesRef[1] has shape [2], expected [1]"));
    Call map(Shapes{{300}});
    map.mapShape = {255};
    EXPECT(Says(map.Check(), "qmapM has shape [255], expected [256]"));
    Call many(std::vector<std::vector<int64_t>>(257, std::vector<int64_t>{3}));
    EXPECT(Says(many.Check(), "grads has 257 tensors, expected at most 256"));
    Call rank(Shapes{{1, 1, 1, 1, 1, 1, 1, 1, 2}});
    EXPECT(Says(rank.Check(), "grads[0] has 9 dimensions, expected at most 8"));
    Call scalar(Shapes{{300}});
    scalar.gradScale = true;
    EXPECT(Says(scalar.Check(), "gradScaleOptional has shape [2] (2 elements)"));
    Call attrs(Shapes{{300}});
    attrs.attrs.SetBeta1(1.0);
    EXPECT(Says(attrs.Check(), "beta1 is 1"));
    Call empty(Shapes{});
    EXPECT(empty.Check().empty());
}

/** Zero-element placeholders of the dtype a list would have (fp32 ss, the parameters' copies:
 *  what the NPU path passes) are an absent list; of another dtype they are a list that holds
 *  values, refused by its shape. */
AEA_CASE(placeholders_are_absent_lists)
{
    Call c(Shapes{{300}, {5}});
    c.present[op8::kApplyFusedEmaAdam8bitListCopies] = true;
    c.dtype[op8::kApplyFusedEmaAdam8bitListCopies] = kF32;
    c.placeholders[op8::kApplyFusedEmaAdam8bitListSs] =
        c.placeholders[op8::kApplyFusedEmaAdam8bitListCopies] = true;
    EXPECT(c.Check().empty() && !c.options.ema && !c.dtypes.hasCopy);
    c.dtype[op8::kApplyFusedEmaAdam8bitListVars] = c.dtype[op8::kApplyFusedEmaAdam8bitListCopies] =
        kBf16;
    EXPECT(c.Check().empty() && !c.options.ema && !c.dtypes.hasCopy &&
           c.dtypes.param == aea::DataType::kBFloat16);
    Call wrong(Shapes{{300}, {5}});
    wrong.present[op8::kApplyFusedEmaAdam8bitListCopies] = true;
    wrong.placeholders[op8::kApplyFusedEmaAdam8bitListCopies] =
        true;  // fp16, the parameters are fp32
    EXPECT(Says(wrong.Check(), "modelCopiesRef[0] has shape [0]"));
    Call ema(Shapes{{300}});
    ema.placeholders[op8::kApplyFusedEmaAdam8bitListSs] = true;
    ema.dtype[op8::kApplyFusedEmaAdam8bitListSs] = kF16;
    EXPECT(Says(ema.Check(), "ssRef[0] has dtype ACL_FLOAT16 (1), expected ACL_FLOAT (0)"));
}

/** wholeCall: a call its caller launches in slices of at most 256 entries has no length limit. */
AEA_CASE(whole_call_of_any_length)
{
    Call many(std::vector<std::vector<int64_t>>(600, std::vector<int64_t>{3}));
    many.wholeCall = true;
    EXPECT(many.Check().empty());
    many.scales[500] = {2};
    EXPECT(Says(many.Check(), "mAbsmaxesRef[500] has shape [2], expected [1]"));
}

AEA_CASE(map_values)
{
    std::vector<float> q(256);
    for (int k = 0; k < 256; ++k) q[k] = -1.0f + 2.0f * k / 255.0f;
    EXPECT(op8::CheckApplyFusedEmaAdam8bitListMap(q.data(), "qmapM").empty());
    q[10] = q[9] - 0.5f;
    EXPECT(Says(op8::CheckApplyFusedEmaAdam8bitListMap(q.data(), "qmapM"), "qmapM[10] is"));
    q[10] = q[9];  // repeated values are sorted
    EXPECT(op8::CheckApplyFusedEmaAdam8bitListMap(q.data(), "qmapM").empty());
    q[255] = 1.5f;
    EXPECT(Says(op8::CheckApplyFusedEmaAdam8bitListMap(q.data(), "qmapV"), "qmapV[255] is 1.5"));
    q[255] = std::nanf("");
    EXPECT(
        Says(op8::CheckApplyFusedEmaAdam8bitListMap(q.data(), "qmapV"), "expected a finite value"));
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCases(argc, argv);
}
