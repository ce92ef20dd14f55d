// The list OpDefs' dtype columns (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_opdef.h) against CANN's kernel
// selection: for every launch the operators' contract allows (every dtype combination with each
// optional list given or absent as zero-element placeholders), the key opbase builds from the
// launch's tensors must be a column of the OpDef, or CANN finds no kernel binary. The key is
// computed here as opbase computes it (hicann/opbase indv_executor_tensor.cpp /
// indv_executor_ext.cpp; ascendc_api.md section 17), on the tensors of a launch, not from the
// columns' own recipe:
//   - the inputs and the outputs are each one array of tensors in parameter order; a DYNAMIC
//     parameter's start index is set where its first tensor lands, and an EMPTY list returns before
//     setting it, so it stays 0;
//   - the key takes, per non-optional parameter (DYNAMIC lists, the REQUIRED step; OPTIONAL inputs
//     are skipped), the dtype of the tensor at its start index.
#include <algorithm>
#include <string>
#include <vector>

#include "../test_harness.h"
#include "apply_fused_ema_adam_list_opdef.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "data_type.h"

using namespace aea_test;
namespace aea = ascend_ema_adam;
namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;
using aea::DataType;

namespace {

constexpr int kLists = list_op::kApplyFusedEmaAdamListTensorLists;
constexpr int kOutputs = list_op::kApplyFusedEmaAdamListOutputs;

/** One launch: per list its tensors' dtype and count (0: an empty list). */
struct Launch {
    list_op::ApplyFusedEmaAdamListDtypes dtypes;
    DataType dtype[kLists];
    size_t count[kLists];
    std::string what;
};

/** One side (inputs or outputs) of a launch as opbase lays it out: the tensors in parameter order,
 *  and per parameter its start index (0 for an empty list). */
struct Side {
    std::vector<DataType> tensors;
    std::vector<size_t> start;
};

/** The key opbase builds from one side: the dtype at each selecting parameter's start index. */
std::vector<DataType> KeyOf(const Side& side)
{
    std::vector<DataType> key;
    for (size_t start : side.start) key.push_back(side.tensors.at(start));
    return key;
}

Side Add(Side side, DataType dtype, size_t count)
{
    side.start.push_back(count == 0 ? 0 : side.tensors.size());  // empty: never set, stays 0
    side.tensors.insert(side.tensors.end(), count, dtype);
    return side;
}

/** The selection key of a launch: inputs (the lists, then step) and outputs (the updated lists). */
std::pair<std::vector<DataType>, std::vector<DataType>> SelectionKey(const Launch& l)
{
    Side in;
    Side out;
    for (int list = 0; list < kLists; ++list) {
        in = Add(in, l.dtype[list], l.count[list]);
        if (list > 0) out = Add(out, l.dtype[list], l.count[list]);
    }
    in = Add(in, DataType::kInt64, 1);  // step, REQUIRED; the OPTIONAL scalars select nothing
    std::vector<DataType> inputs = KeyOf(in);
    inputs.pop_back();                  // step is int64 in every column
    return {inputs, KeyOf(out)};
}

bool HasColumn(const std::vector<list_op::ApplyFusedEmaAdamListOpDefColumn>& columns,
               const std::pair<std::vector<DataType>, std::vector<DataType>>& key)
{
    return std::any_of(columns.begin(), columns.end(),
                       [&](const list_op::ApplyFusedEmaAdamListOpDefColumn& c) {
                           return std::equal(key.first.begin(), key.first.end(), c.inputs) &&
                                  std::equal(key.second.begin(), key.second.end(), c.outputs);
                       });
}

/** A launch of combination `d` with `entries` entries: ss, max_vs given or absent, model_copies
 *  given exactly with the combinations that have copies; an absent list as placeholders (one tensor
 *  per entry of the list's placeholder dtype, ApplyFusedEmaAdamListDtypeOf) or, `empty`, as an
 *  empty list. */
Launch Make(const list_op::ApplyFusedEmaAdamListDtypes& d, bool ema, bool amsgrad, size_t entries,
            bool empty)
{
    const bool given[kLists] = {true, true, true, true, ema, amsgrad, d.hasCopy};
    const char* names[kLists] = {"grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"};
    Launch l{d, {}, {}, ""};
    l.what = "P=" + std::string(aea::DataTypeName(d.param)) + " S=" + aea::DataTypeName(d.state) +
             " G=" + aea::DataTypeName(d.grad) +
             (d.hasCopy ? std::string(" C=") + aea::DataTypeName(d.copy) : std::string());
    for (int list = 0; list < kLists; ++list) {
        l.dtype[list] = list_op::ApplyFusedEmaAdamListDtypeOf(d, list);
        l.count[list] = given[list] || !empty ? entries : 0;
        if (!given[list]) l.what += std::string(", ") + names[list] + (empty ? " empty" : " absent");
    }
    return l;
}

/** Every launch the contract allows, absent lists as placeholders; 1 and 256 entries. */
std::vector<Launch> AllowedLaunches()
{
    std::vector<Launch> launches;
    for (const list_op::ApplyFusedEmaAdamListDtypes& d :
         list_op::ApplyFusedEmaAdamListDtypeCombinations()) {
        for (bool ema : {true, false}) {
            for (bool amsgrad : {true, false}) {
                for (size_t entries : {size_t{1}, list_op::kApplyFusedEmaAdamListMaxTensors}) {
                    launches.push_back(Make(d, ema, amsgrad, entries, /*empty=*/false));
                }
            }
        }
    }
    return launches;
}

/** Every allowed launch finds a column: a key without a binary cannot come back. */
AEA_CASE(every_allowed_launch_finds_a_column)
{
    const std::vector<list_op::ApplyFusedEmaAdamListOpDefColumn> columns =
        list_op::ApplyFusedEmaAdamListOpDefColumns();
    for (const Launch& l : AllowedLaunches()) {
        EXPECT_MSG(HasColumn(columns, SelectionKey(l)), "no OpDef column for %s", l.what.c_str());
    }
}

/** One column per dtype combination (absent lists key as given ones), each selected by a launch
 *  (no binary is built for nothing), none twice. */
AEA_CASE(one_column_per_combination_each_selected)
{
    const std::vector<list_op::ApplyFusedEmaAdamListOpDefColumn> columns =
        list_op::ApplyFusedEmaAdamListOpDefColumns();
    EXPECT(columns.size() == list_op::ApplyFusedEmaAdamListDtypeCombinations().size());
    const std::vector<Launch> launches = AllowedLaunches();
    for (size_t c = 0; c < columns.size(); ++c) {
        const bool used = std::any_of(launches.begin(), launches.end(), [&](const Launch& l) {
            return HasColumn({columns[c]}, SelectionKey(l));
        });
        EXPECT_MSG(used, "column %zu is selected by no launch", c);
        for (size_t o = 0; o < c; ++o) {
            EXPECT_MSG(!(columns[o] == columns[c]), "column %zu repeats column %zu", c, o);
        }
    }
}

/** Why placeholders: an EMPTY list is keyed with the first tensor of its side (grads[0] as an
 *  input, varsRef[0] as an output), so every combination whose gradients, parameters and state
 *  differ finds no column for a launch without AMSGrad that passes max_vs empty. One such launch,
 *  checked by hand, then all of them. */
AEA_CASE(an_empty_list_is_keyed_by_grads_and_vars)
{
    const list_op::ApplyFusedEmaAdamListDtypes d{DataType::kBFloat16, DataType::kFloat32,
                                                 DataType::kBFloat16, false, DataType::kFloat16};
    const Launch l = Make(d, true, false, 3, /*empty=*/true);
    const auto key = SelectionKey(l);
    const std::vector<DataType> inputs = {DataType::kBFloat16, DataType::kBFloat16,
                                          DataType::kFloat32,  DataType::kFloat32,
                                          DataType::kFloat32,  DataType::kBFloat16,
                                          DataType::kBFloat16};
    const std::vector<DataType> outputs = {DataType::kBFloat16, DataType::kFloat32,
                                           DataType::kFloat32,  DataType::kFloat32,
                                           DataType::kBFloat16, DataType::kBFloat16};
    EXPECT(key.first == inputs);
    EXPECT(key.second == outputs);
    EXPECT(!HasColumn(list_op::ApplyFusedEmaAdamListOpDefColumns(), key));
    EXPECT(HasColumn(list_op::ApplyFusedEmaAdamListOpDefColumns(),
                     SelectionKey(Make(d, true, false, 3, false))));
    for (const list_op::ApplyFusedEmaAdamListDtypes& c :
         list_op::ApplyFusedEmaAdamListDtypeCombinations()) {
        const bool uniform = c.grad == c.param && c.param == c.state;
        const Launch empty = Make(c, true, false, 4, /*empty=*/true);
        EXPECT_MSG(
            HasColumn(list_op::ApplyFusedEmaAdamListOpDefColumns(), SelectionKey(empty)) == uniform,
            "%s", empty.what.c_str());
    }
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCases(argc, argv);
}
