// aclnnApplyFusedEmaAdamListGetWorkspaceSize / aclnnApplyFusedEmaAdamList on the CPU runtime.
//
//   bad_input_table      every rejected input of tests/cpp/apply_fused_ema_adam_list_bad_inputs.h:
//                        exact status, the message matching its pattern, every tensor byte-identical
//                        and both out-arguments unwritten
//   the other cases      what phase 1 accepts (read-only tensors sharing memory, empty optional
//                        lists, 256 entries, empty calls, strided views and their workspace), executors
//                        of the two operators kept apart; phase 2: strided views against
//                        contiguous runs, queued steps in stream order, 8 threads at once, lists
//                        destroyed between the phases (tests/python holds the results to the golden)
#include <memory>
#include <regex>
#include <thread>

#include "aclnn_apply_fused_ema_adam_list_util.h"

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
    const std::vector<ApplyFusedEmaAdamListBadInput> rows = ApplyFusedEmaAdamListBadInputs();
    for (const ApplyFusedEmaAdamListBadInput& row : rows) {
        ApplyFusedEmaAdamListCallSpec spec;
        row.describe(spec);
        ListCall call(spec);
        const auto before = call.Snapshot();
        for (const ApplyFusedEmaAdamListBreak& b : row.aclnnOnly) call.Apply(b);
        call.Build();
        for (const ApplyFusedEmaAdamListBreak& b : row.aclnnOnly) call.ApplyToLists(b);
        RecentError();  // only the call's own message below
        const aclnnStatus status = call.Phase1();
        const std::string message = RecentError();
        EXPECT_MSG(status == row.status, "[%s] status %d, expected %d (%s)", row.name.c_str(),
                   status, row.status, message.c_str());
        const std::string text = Phase1Message(message);
        EXPECT_MSG(std::regex_search(text, std::regex(row.message)),
                   "[%s] message '%s' does not match '%s'", row.name.c_str(), message.c_str(),
                   row.message.c_str());
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
    ListCall call{ApplyFusedEmaAdamListCallSpec()};
    ExpectAccepted(call, 0, "base call");
}

/** Read-only tensors may share memory: grads with each other, the scale, the flag and step. */
AEA_CASE(read_only_tensors_may_share_memory)
{
    ListCall call{ApplyFusedEmaAdamListCallSpec()};
    TestTensor& g0 = *call.entries[kGrads][0];
    call.Replace(kGrads, 2, call.Describe(ACL_FLOAT, {2, 1, 3}, {3, 3, 1}, 0, g0.data, 12));
    call.Replace(kGrads, 1, call.Describe(ACL_FLOAT, {5}, {1}, 4, g0.data, 12));
    call.scalarArgs[kScalarGradScale] = call.Describe(ACL_FLOAT, {1}, {1}, 3, g0.data, 12);
    call.scalarArgs[kScalarFoundInf] = call.Describe(ACL_FLOAT, {1}, {1}, 3, g0.data, 12);
    call.loose.push_back(call.scalarArgs[kScalarGradScale]);
    call.loose.push_back(call.scalarArgs[kScalarFoundInf]);
    ExpectAccepted(call, 0, "shared read-only memory");
}

/** An optional list that is empty is absent: the contract of CANN's generated aclnn, where a
 *  DYNAMIC parameter is never NULL (the bad-input table holds NULL lists to 161001). */
AEA_CASE(empty_optional_lists_are_absent)
{
    ApplyFusedEmaAdamListCallSpec spec;
    for (int l : {kMaxVs, kCopies}) {
        spec.lists[l].shape.clear();
        spec.lists[l].dtype.clear();
    }
    ListCall call(spec);
    ExpectAccepted(call, 0, "empty optional lists");
    EXPECT(call.lists[kMaxVs] != nullptr && call.lists[kCopies] != nullptr);
}

/** 256 tensors per list, opbase's limit, are one launch; every entry is updated (one more is
 *  refused: the bad-input table). */
AEA_CASE(lists_of_256_tensors_run)
{
    ApplyFusedEmaAdamListCallSpec spec;
    for (ApplyFusedEmaAdamListSpec& l : spec.lists) {
        l.shape.assign(256, {3});
        l.Fill(l.dtype[0]);
    }
    spec.scalars[kScalarFoundInf].present = false;
    ListCall call(spec);
    ExpectAccepted(call, 0, "256 entries");
    const auto before = call.Snapshot();
    EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, call.executor, nullptr) == ACLNN_SUCCESS);
    const auto after = call.Snapshot();
    for (size_t i = 0; i < 256; ++i) {  // snapshots list the tensors list by list
        EXPECT_MSG(after[kVars * 256 + i] != before[kVars * 256 + i], "varsRef[%zu] unchanged", i);
        EXPECT_MSG(after[kGrads * 256 + i] == before[kGrads * 256 + i], "grads[%zu] written", i);
    }
}

/** aclDestroyAclOpExecutor (CANN's opbase semantics and status codes): an executor phase 1
 *  returned can be destroyed instead of run (a caller that prepared several launches and gives up
 *  after a later phase 1 failed); nothing is written, and it is gone for phase 2 and for a second
 *  destroy. */
AEA_CASE(prepared_executors_can_be_destroyed)
{
    ListCall call{ApplyFusedEmaAdamListCallSpec()};
    ExpectAccepted(call, 0, "to destroy");
    const auto before = call.Snapshot();
    EXPECT(aclDestroyAclOpExecutor(call.executor) == ACLNN_SUCCESS);
    EXPECT(call.Snapshot() == before);
    EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, call.executor, nullptr) ==
           ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "executor is not a live executor"));
    EXPECT(aclDestroyAclOpExecutor(call.executor) == ACLNN_ERR_INNER);
    EXPECT(Contains(RecentError(), "aclDestroyAclOpExecutor: executor is not a live executor"));
    EXPECT(aclDestroyAclOpExecutor(nullptr) == ACLNN_ERR_INNER_NULLPTR);
    EXPECT(Contains(RecentError(), "aclDestroyAclOpExecutor: executor is null"));
    ListCall ran{ApplyFusedEmaAdamListCallSpec()};
    ExpectAccepted(ran, 0, "to run");
    EXPECT(aclnnApplyFusedEmaAdamList(nullptr, 0, ran.executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(aclDestroyAclOpExecutor(ran.executor) == ACLNN_ERR_INNER);  // phase 2 consumed it
    RecentError();
}

/** No entries, or only empty tensors: a valid call whose phase 2 does nothing. */
AEA_CASE(empty_calls)
{
    ApplyFusedEmaAdamListCallSpec none;
    for (ApplyFusedEmaAdamListSpec& l : none.lists) {
        l.shape.clear();
        l.dtype.clear();
    }
    ApplyFusedEmaAdamListCallSpec zeros;
    zeros.SetEntryShape(0, {0});
    zeros.SetEntryShape(1, {3, 0});
    zeros.SetEntryShape(2, {0, 7});
    for (const ApplyFusedEmaAdamListCallSpec* spec : {&none, &zeros}) {
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
    ApplyFusedEmaAdamListCallSpec spec;
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
    ApplyFusedEmaAdamListCallSpec none;
    for (ApplyFusedEmaAdamListSpec& l : none.lists) {
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
    ApplyFusedEmaAdamListCallSpec spec;
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

// ---- phase 2: runs compared with each other bit for bit (tests/python holds them to the golden)

/** The same logical call as `source` (values copied), each entry laid out as `layout`. */
std::unique_ptr<ListCall> CopyOf(const ListCall& source, const ApplyFusedEmaAdamListCallSpec& spec,
                                 Layout layout)
{
    auto copy = std::make_unique<ListCall>(spec, layout);
    for (int l = 0; l < kLists; ++l) {
        for (size_t i = 0; i < source.entries[l].size(); ++i) {
            const TestTensor& from = *source.entries[l][i];
            const std::vector<uint8_t> packed = from.Packed();
            TestTensor& to = *copy->entries[l][i];
            MakeTensor(&to, from.dtype, from.shape,
                       from.shape.size() == 2 ? layout : Layout::kContiguous, ListRole(l), &packed);
            copy->handles[l][i] = to.handle;
        }
    }
    return copy;
}

/** Both phases on `stream` and a synchronisation; the call's lists are then spent. */
aclnnStatus RunList(ListCall& call, aclrtStream stream)
{
    call.executor = nullptr;
    aclnnStatus status = call.Phase1();
    if (status != ACLNN_SUCCESS) return status;
    Workspace ws(call.workspaceSize);
    status = aclnnApplyFusedEmaAdamList(ws.data, call.workspaceSize, call.executor, stream);
    return status != ACLNN_SUCCESS ? status : aclrtSynchronizeStream(stream);
}

/** Every entry of every updated list, packed. */
std::vector<std::vector<uint8_t>> Results(const ListCall& call)
{
    std::vector<std::vector<uint8_t>> out;
    for (int l = kVars; l < kLists; ++l) {
        for (const auto& t : call.entries[l]) out.push_back(t->Packed());
    }
    return out;
}

/** A spec with a fresh step value (the scalars of a call are its own tensors). */
ApplyFusedEmaAdamListCallSpec WithStep(ApplyFusedEmaAdamListCallSpec spec, int64_t step)
{
    spec.stepValue = step;
    return spec;
}

/**
 * Strided views are updated in place exactly as contiguous copies of the same values, and every
 * list changes; the base call (AMSGrad, bf16 copies, grad scale, found_inf 0) on both layouts.
 */
AEA_CASE(strided_views_match_contiguous)
{
    for (Layout layout : {Layout::kStrided, Layout::kTransposed}) {
        ApplyFusedEmaAdamListCallSpec spec;
        spec.h.lr = 0.05;
        ListCall strided(spec, layout);
        auto contiguous = CopyOf(strided, spec, Layout::kContiguous);
        const auto before = Results(strided);
        EXPECT(RunList(strided, nullptr) == ACLNN_SUCCESS);
        EXPECT_MSG(RunList(*contiguous, nullptr) == ACLNN_SUCCESS, "%s", RecentError().c_str());
        const auto after = Results(strided);
        EXPECT(after == Results(*contiguous));
        size_t changed = 0;
        for (size_t k = 0; k < after.size(); ++k) changed += after[k] != before[k];
        EXPECT_MSG(changed >= after.size() - kLists, "only %zu of %zu tensors changed", changed,
                   after.size());  // all but the empty entry of each list
    }
}

/**
 * Phase 2 only queues: several steps prepared up front (each call its own step tensor) and
 * queued back to back run in order, equal to the same steps run one at a time.
 */
AEA_CASE(queued_steps_run_in_stream_order)
{
    constexpr int kSteps = 4;
    ApplyFusedEmaAdamListCallSpec spec;
    spec.lists[kCopies].present = false;
    spec.scalars[kScalarFoundInf].present = false;
    ListCall first(WithStep(spec, 1));
    auto sequential = CopyOf(first, WithStep(spec, 1), Layout::kContiguous);
    // Later steps describe the same memory: lists of aliases of the first call's tensors.
    std::vector<std::unique_ptr<ListCall>> later;
    for (int k = 1; k < kSteps; ++k) {
        later.push_back(std::make_unique<ListCall>(WithStep(spec, k + 1)));
        for (int l = 0; l < kLists; ++l) {
            for (size_t i = 0; i < first.entries[l].size(); ++i) {
                later.back()->Replace(l, i, first.Alias(l, i, {}));
            }
        }
    }
    aclrtStream stream = nullptr;
    EXPECT(aclrtCreateStream(&stream) == ACL_SUCCESS);
    std::vector<ListCall*> calls = {&first};
    for (auto& c : later) calls.push_back(c.get());
    std::vector<std::unique_ptr<Workspace>> workspaces;
    for (ListCall* c : calls) {
        c->executor = nullptr;
        EXPECT(c->Phase1() == ACLNN_SUCCESS);
        workspaces.push_back(std::make_unique<Workspace>(c->workspaceSize));
    }
    for (size_t k = 0; k < calls.size(); ++k) {
        EXPECT(aclnnApplyFusedEmaAdamList(workspaces[k]->data, calls[k]->workspaceSize,
                                          calls[k]->executor, stream) == ACLNN_SUCCESS);
    }
    EXPECT(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    EXPECT(aclrtDestroyStream(stream) == ACL_SUCCESS);
    for (int k = 0; k < kSteps; ++k) {
        auto step = CopyOf(*sequential, WithStep(spec, k + 1), Layout::kContiguous);
        EXPECT(RunList(*step, nullptr) == ACLNN_SUCCESS);
        sequential = std::move(step);
    }
    EXPECT(Results(first) == Results(*sequential));
}

/**
 * 8 threads, each with its own device context, stream and lists (dtype combination, AMSGrad
 * and size differ per thread), run several steps at once; every result equals the same work
 * done alone afterwards.
 */
AEA_CASE(eight_threads_concurrently)
{
    constexpr int kThreads = 8;
    constexpr int kSteps = 3;
    const struct {
        aclDataType p, s, g;
    } dtypes[4] = {{ACL_FLOAT, ACL_FLOAT, ACL_FLOAT},
                   {ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT16},
                   {ACL_BF16, ACL_BF16, ACL_FLOAT},
                   {ACL_BF16, ACL_FLOAT, ACL_BF16}};
    std::vector<ApplyFusedEmaAdamListCallSpec> specs(kThreads);
    std::vector<std::vector<std::vector<uint8_t>>> results(kThreads), alone(kThreads);
    int failures[kThreads] = {};
    std::vector<std::thread> threads;
    std::vector<std::unique_ptr<ListCall>> firsts;
    for (int t = 0; t < kThreads; ++t) {
        ApplyFusedEmaAdamListCallSpec& spec = specs[t];
        spec.SetEntryShape(1, {517 + 131 * t});
        spec.SetDtypes(dtypes[t % 4].p, dtypes[t % 4].s, dtypes[t % 4].g);
        spec.lists[kMaxVs].present = t % 2 == 0;
        spec.h.mode = t % 2;
        spec.h.lr = 1e-3 * (t + 1);
        firsts.push_back(std::make_unique<ListCall>(spec));
    }
    std::vector<std::unique_ptr<ListCall>> references;
    for (int t = 0; t < kThreads; ++t) {
        references.push_back(CopyOf(*firsts[t], specs[t], Layout::kContiguous));
    }
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            if (aclrtSetDevice(0) != ACL_SUCCESS) {
                ++failures[t];
                return;
            }
            aclrtStream stream = nullptr;
            failures[t] += aclrtCreateStream(&stream) != ACL_SUCCESS;
            std::unique_ptr<ListCall> call = std::move(firsts[t]);
            for (int64_t step = 1; step <= kSteps; ++step) {
                failures[t] += RunList(*call, stream) != ACLNN_SUCCESS;
                auto next = CopyOf(*call, WithStep(specs[t], step + 1), Layout::kContiguous);
                results[t] = Results(*call);
                call = std::move(next);
            }
            failures[t] += aclrtDestroyStream(stream) != ACL_SUCCESS;
            failures[t] += aclrtResetDevice(0) != ACL_SUCCESS;
        });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_MSG(failures[t] == 0, "thread %d: %d failed calls", t, failures[t]);
        std::unique_ptr<ListCall> call = std::move(references[t]);
        for (int64_t step = 1; step <= kSteps; ++step) {
            EXPECT(RunList(*call, nullptr) == ACLNN_SUCCESS);
            alone[t] = Results(*call);
            call = CopyOf(*call, WithStep(specs[t], step + 1), Layout::kContiguous);
        }
        EXPECT_MSG(results[t] == alone[t], "thread %d differs from the same work alone", t);
    }
}

/** The views are copied in phase 1: the lists (and their tensors) may be destroyed before
 *  phase 2. */
AEA_CASE(lists_destroyed_between_phases)
{
    ApplyFusedEmaAdamListCallSpec spec;
    ListCall call(spec, Layout::kTransposed);
    auto reference = CopyOf(call, spec, Layout::kContiguous);
    call.executor = nullptr;
    EXPECT(call.Phase1() == ACLNN_SUCCESS);
    for (int l = 0; l < kLists; ++l) {
        if (call.lists[l] == nullptr) continue;
        EXPECT(aclDestroyTensorList(call.lists[l]) == ACLNN_SUCCESS);
        call.lists[l] = nullptr;
    }
    Workspace ws(call.workspaceSize);
    EXPECT(aclnnApplyFusedEmaAdamList(ws.data, call.workspaceSize, call.executor, nullptr) ==
           ACLNN_SUCCESS);
    EXPECT(RunList(*reference, nullptr) == ACLNN_SUCCESS);
    EXPECT(Results(call) == Results(*reference));
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCasesOnDevice(argc, argv);
}
