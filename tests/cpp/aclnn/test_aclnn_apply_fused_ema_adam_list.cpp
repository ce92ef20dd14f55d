// aclnnApplyFusedEmaAdamListGetWorkspaceSize / aclnnApplyFusedEmaAdamList on the CPU runtime.
//
//   bad_input_table      every rejected input of tests/cpp/apply_fused_ema_adam_list_bad_inputs.h:
//                        exact status, the message matching its pattern, every tensor byte-identical
//                        and both out-arguments unwritten
//   the other cases      what phase 1 accepts (read-only tensors sharing memory, absent and empty
//                        optional lists, empty calls, strided views and their workspace), executors
//                        of the two operators kept apart
#include <regex>

#include "aclnn_list_test_util.h"

using namespace aea_test;

namespace {

constexpr const char* kPhase1Prefix = "aclnnApplyFusedEmaAdamListGetWorkspaceSize: ";

/** The message of the call just made, without the phase-1 prefix ("" if it lacks it). */
std::string Phase1Message(const std::string& message)
{
    return message.rfind(kPhase1Prefix, 0) == 0 ? message.substr(std::strlen(kPhase1Prefix))
                                                : "<no '" + std::string(kPhase1Prefix) + "'>" +
                                                      message;
}

/** Every row: exact status and message; tensors, workspace size and executor untouched. */
AEA_CASE(bad_input_table)
{
    const std::vector<ListBadInput> rows = ListBadInputs();
    for (const ListBadInput& row : rows) {
        ListCallSpec spec;
        row.describe(spec);
        ListCall call(spec);
        const auto before = call.Snapshot();
        for (const ListBreak& b : row.aclnnOnly) call.Apply(b);
        call.Build();
        for (const ListBreak& b : row.aclnnOnly) call.ApplyToLists(b);
        RecentError();  // only the call's own message below
        const aclnnStatus status = call.Phase1();
        const std::string message = RecentError();
        EXPECT_MSG(status == row.status, "[%s] status %d, expected %d (%s)", row.name.c_str(),
                   status, row.status, message.c_str());
        const std::string text = Phase1Message(message);
        EXPECT_MSG(std::regex_search(text, std::regex(row.pattern)),
                   "[%s] message '%s' does not match '%s'", row.name.c_str(), message.c_str(),
                   row.pattern.c_str());
        EXPECT_MSG(call.Snapshot() == before, "[%s] a tensor changed", row.name.c_str());
        EXPECT_MSG(call.workspaceSize == 0xABCD &&
                       call.executor == reinterpret_cast<aclOpExecutor*>(0x1234),
                   "[%s] an out-argument was written", row.name.c_str());
    }
    std::printf("  %zu bad inputs\n", rows.size());
}

/** Phase 1 of `call` succeeds with a live executor and `workspace` bytes of workspace. */
void ExpectAccepted(ListCall& call, uint64_t workspace, const char* what)
{
    call.executor = nullptr;
    const aclnnStatus status = call.Phase1();
    EXPECT_MSG(status == ACLNN_SUCCESS && call.executor != nullptr, "[%s] status %d: %s", what,
               status, RecentError().c_str());
    EXPECT_MSG(call.workspaceSize == workspace, "[%s] workspace %llu, expected %llu", what,
               static_cast<unsigned long long>(call.workspaceSize),
               static_cast<unsigned long long>(workspace));
}

/** The table's base call is valid: every rejection above is due to the row's change. */
AEA_CASE(bad_input_table_base_call_is_valid)
{
    ListCall call{ListCallSpec()};
    ExpectAccepted(call, 0, "base call");
}

/** Read-only tensors may share memory: grads with each other, the scale, the flag and step. */
AEA_CASE(read_only_tensors_may_share_memory)
{
    ListCall call{ListCallSpec()};
    TestTensor& g0 = *call.entries[kGrads][0];
    call.Replace(kGrads, 2, call.Describe(ACL_FLOAT, {2, 1, 3}, {3, 3, 1}, 0, g0.data, 12));
    call.Replace(kGrads, 1, call.Describe(ACL_FLOAT, {5}, {1}, 4, g0.data, 12));
    call.scalarArgs[kScalarGradScale] = call.Describe(ACL_FLOAT, {1}, {1}, 3, g0.data, 12);
    call.scalarArgs[kScalarFoundInf] = call.Describe(ACL_FLOAT, {1}, {1}, 3, g0.data, 12);
    call.loose.push_back(call.scalarArgs[kScalarGradScale]);
    call.loose.push_back(call.scalarArgs[kScalarFoundInf]);
    ExpectAccepted(call, 0, "shared read-only memory");
}

/** An optional list that is empty is absent (torch_npu passes absent dynamic inputs so). */
AEA_CASE(empty_optional_lists_are_absent)
{
    ListCallSpec spec;
    for (int l : {kMaxVs, kCopies}) {
        spec.lists[l].shape.clear();
        spec.lists[l].dtype.clear();
    }
    ListCall call(spec);
    ExpectAccepted(call, 0, "empty optional lists");
    spec.lists[kMaxVs].present = false;
    spec.lists[kCopies].present = false;
    ListCall absent(spec);
    ExpectAccepted(absent, 0, "null optional lists");
}

/** No entries, or only empty tensors: a valid call whose phase 2 does nothing. */
AEA_CASE(empty_calls)
{
    ListCallSpec none;
    for (ListSpec& l : none.lists) {
        l.shape.clear();
        l.dtype.clear();
    }
    ListCallSpec zeros;
    zeros.SetEntryShape(0, {0});
    zeros.SetEntryShape(1, {3, 0});
    zeros.SetEntryShape(2, {0, 7});
    for (const ListCallSpec* spec : {&none, &zeros}) {
        ListCall call(*spec);
        const auto before = call.Snapshot();
        ExpectAccepted(call, 0, "empty call");
        aclrtStream stream = nullptr;
        EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
        EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, call.executor, stream) == ACLNN_SUCCESS);
        EXPECT(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
        EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, call.executor, stream) ==
               ACLNN_ERR_PARAM_INVALID);  // single-use
        EXPECT(Contains(RecentError(), "aclnnApplyFusedEmaAdamList: executor is not a live executor"));
        EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
        EXPECT(call.Snapshot() == before);
    }
}

/** Each strided view gets a 64-byte aligned staging copy in the workspace; contiguous ones none. */
AEA_CASE(strided_views_need_workspace)
{
    ListCallSpec spec;
    spec.lists[kCopies].present = false;
    ListCall call(spec, Layout::kStrided);  // the [3,4] entry of every list is strided
    // grads, vars, m, v, s, max_v: six fp32 [3,4] copies of 48 bytes, each rounded to 64.
    ExpectAccepted(call, 6 * 64, "strided [3,4] entries");
    ListCall transposed(spec, Layout::kTransposed);
    ExpectAccepted(transposed, 6 * 64, "transposed [3,4] entries");
}

/** Each operator's phase 2 refuses the other's executor, which stays usable for its own. */
AEA_CASE(executors_of_the_two_operators_are_kept_apart)
{
    ListCallSpec none;
    for (ListSpec& l : none.lists) {
        l.shape.clear();
        l.dtype.clear();
    }
    ListCall call(none);
    ExpectAccepted(call, 0, "empty call");
    RecentError();
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, call.executor, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(),
                    "aclnnApplyFusedEmaAdam: executor was created by "
                    "aclnnApplyFusedEmaAdamListGetWorkspaceSize, not by "
                    "aclnnApplyFusedEmaAdamGetWorkspaceSize; run it with aclnnApplyFusedEmaAdamList"));
    EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, call.executor, nullptr) == ACLNN_SUCCESS);

    OptimizerTensors single;
    single.Make(ACL_FLOAT, {3, 7}, Layout::kContiguous);
    const auto before = single.Snapshot();
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(single, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, executor, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(),
                    "aclnnApplyFusedEmaAdamList: executor was created by "
                    "aclnnApplyFusedEmaAdamGetWorkspaceSize, not by "
                    "aclnnApplyFusedEmaAdamListGetWorkspaceSize; run it with aclnnApplyFusedEmaAdam"));
    EXPECT(single.Snapshot() == before);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(single.Snapshot() != before);
}

/** Phase 2's own refusals: null executor, dead stream, small workspace (executor kept). */
AEA_CASE(phase2_refusals)
{
    EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, nullptr, nullptr) == ACLNN_ERR_PARAM_NULLPTR);
    EXPECT(Contains(RecentError(), "aclnnApplyFusedEmaAdamList: executor is null"));
    ListCallSpec spec;
    ListCall call(spec, Layout::kStrided);
    call.executor = nullptr;
    EXPECT(call.Phase1() == ACLNN_SUCCESS);
    const uint64_t ws = call.workspaceSize;
    EXPECT(ws > 0);
    Workspace workspace(ws);
    EXPECT(aclnnApplyFusedEmaAdamList(workspace.data, ws - 1, call.executor, nullptr) ==
           ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "workspaceSize is " + std::to_string(ws - 1) +
                                       " but phase 1 asked for " + std::to_string(ws)));
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdamList(workspace.data, ws, call.executor, stream) ==
           ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "stream is not a live stream"));
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCasesOnDevice(argc, argv);
}
