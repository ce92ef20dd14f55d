// The list OpDefs' dtype columns (op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_opdef.h) against CANN's kernel
// selection: for every launch the operators' contract allows (every dtype combination with each
// optional list given or empty), the key opbase builds from the launch's tensors must be a column
// of the OpDef, or CANN finds no kernel binary. The key is computed here as opbase computes it
// (hicann/opbase indv_executor_tensor.cpp / indv_executor_ext.cpp; ascendc_api.md section 17), on
// the tensors of a launch, not from the columns' own recipe:
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
using aea::DataType;

namespace {

constexpr int kLists = aea::kApplyFusedEmaAdamLists;
constexpr int kOutputs = aea::kApplyFusedEmaAdamListOutputs;

/** One launch: per list its tensors' dtype and count (0: an empty list), with n entries. */
struct Launch {
    aea::ListDtypes dtypes;
    bool given[kLists];
    size_t entries;
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
    const aea::ListDtypes& d = l.dtypes;
    const DataType dtype[kLists] = {d.grad, d.param, d.state, d.state, d.state, d.state, d.copy};
    Side in;
    Side out;
    for (int list = 0; list < kLists; ++list) {
        in = Add(in, dtype[list], l.given[list] ? l.entries : 0);
        if (list > 0) out = Add(out, dtype[list], l.given[list] ? l.entries : 0);
    }
    in = Add(in, DataType::kInt64, 1);  // step, REQUIRED; the OPTIONAL scalars select nothing
    std::vector<DataType> inputs = KeyOf(in);
    inputs.pop_back();                  // step is int64 in every column
    return {inputs, KeyOf(out)};
}

bool HasColumn(const std::vector<aea::ListOpDefColumn>& columns,
               const std::pair<std::vector<DataType>, std::vector<DataType>>& key)
{
    return std::any_of(columns.begin(), columns.end(), [&](const aea::ListOpDefColumn& c) {
        return std::equal(key.first.begin(), key.first.end(), c.inputs) &&
               std::equal(key.second.begin(), key.second.end(), c.outputs);
    });
}

std::string Describe(const Launch& l)
{
    const char* names[kLists] = {"grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"};
    std::string s = "P=" + std::string(aea::DataTypeName(l.dtypes.param)) +
                    " S=" + aea::DataTypeName(l.dtypes.state) +
                    " G=" + aea::DataTypeName(l.dtypes.grad);
    if (l.dtypes.hasCopy) s += std::string(" C=") + aea::DataTypeName(l.dtypes.copy);
    for (int list = 0; list < kLists; ++list) {
        if (!l.given[list]) s += std::string(", ") + names[list] + " empty";
    }
    return s;
}

/** Every launch the contract allows: each combination, with max_vs and (V2) ss given or empty,
 *  model_copies exactly with the combinations that have copies; 1 and 256 entries. */
std::vector<Launch> AllowedLaunches(bool v2)
{
    std::vector<Launch> launches;
    for (const aea::ListDtypes& d : aea::ListDtypeCombinations()) {
        for (bool ema : {true, false}) {
            if (!ema && !v2) continue;
            for (bool amsgrad : {true, false}) {
                for (size_t entries : {size_t{1}, aea::kListMaxTensors}) {
                    launches.push_back({d, {true, true, true, true, ema, amsgrad, d.hasCopy},
                                        entries});
                }
            }
        }
    }
    return launches;
}

/** Every allowed launch of either operator finds a column: a key without a binary cannot come
 *  back. */
AEA_CASE(every_allowed_launch_finds_a_column)
{
    for (bool v2 : {false, true}) {
        const std::vector<aea::ListOpDefColumn> columns = aea::ListOpDefColumns(v2);
        for (const Launch& l : AllowedLaunches(v2)) {
            EXPECT_MSG(HasColumn(columns, SelectionKey(l)), "%s: no OpDef column for %s",
                       v2 ? "V2" : "V1", Describe(l).c_str());
        }
    }
}

/** No column without a launch that selects it (no binary is built for nothing), and none twice. */
AEA_CASE(every_column_is_selected_by_some_launch)
{
    for (bool v2 : {false, true}) {
        const std::vector<aea::ListOpDefColumn> columns = aea::ListOpDefColumns(v2);
        const std::vector<Launch> launches = AllowedLaunches(v2);
        for (size_t c = 0; c < columns.size(); ++c) {
            const bool used = std::any_of(launches.begin(), launches.end(), [&](const Launch& l) {
                return HasColumn({columns[c]}, SelectionKey(l));
            });
            EXPECT_MSG(used, "%s: column %zu is selected by no launch", v2 ? "V2" : "V1", c);
            for (size_t o = 0; o < c; ++o) {
                EXPECT_MSG(!(columns[o] == columns[c]), "column %zu repeats column %zu", c, o);
            }
        }
    }
}

/** What the rule means for the old columns: an empty max_vs or model_copies is keyed with the
 *  gradients' dtype as an input and the parameters' as an output, which the previous OpDef (one
 *  column per combination, absent lists declared as the state dtype or fp32) lacked for every
 *  combination that is not pure fp32. One such launch, checked by hand. */
AEA_CASE(bf16_launch_without_amsgrad_is_keyed_by_grads_and_vars)
{
    Launch l{{DataType::kBFloat16, DataType::kFloat32, DataType::kBFloat16, false,
              DataType::kFloat16},
             {true, true, true, true, true, false, false},
             3};
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
    EXPECT(HasColumn(aea::ListOpDefColumns(false), key));
}

/** V1 never has an empty ss (its ssRef holds one tensor per entry): no column for one. */
AEA_CASE(v1_has_no_column_without_the_ema)
{
    for (const aea::ListDtypes& d : aea::ListDtypeCombinations()) {
        if (d.state == d.grad && d.state == d.param) continue;  // an empty ss looks like a full one
        Launch l{d, {true, true, true, true, false, true, d.hasCopy}, 4};
        EXPECT_MSG(!HasColumn(aea::ListOpDefColumns(false), SelectionKey(l)), "%s",
                   Describe(l).c_str());
        EXPECT_MSG(HasColumn(aea::ListOpDefColumns(true), SelectionKey(l)), "%s",
                   Describe(l).c_str());
    }
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCases(argc, argv);
}
