// Executors know their operator. Phase 2 of one operator refuses an executor that another
// operator's phase 1 created (161002, naming both) and leaves it registered, so its own phase 2
// still runs it; a reused executor is refused too.
//
// The library has one operator, so this program adds a second one, TestOp, whose executor counts
// its runs. It links the runtime's objects (not libascend_ema_adam_acl.so, which exports only the
// C API) to register TestOp's executors in the same registry and run TestOp's phase 2 with the
// same RunPhase2 every operator uses.
#include <atomic>
#include <memory>
#include <vector>

#include "aclnn_common.h"
#include "aclnn_test_util.h"

using namespace aea_test;
using ascend_ema_adam::acl::AclnnOp;

namespace {

constexpr AclnnOp kTestOp{"TestOp", "aclnnTestOpGetWorkspaceSize", "aclnnTestOp"};

struct TestOpExecutor final : aclOpExecutor {
    explicit TestOpExecutor(std::atomic<int>* counter) : aclOpExecutor(kTestOp), runs(counter) {}
    void Execute(char* /*workspace*/) const override { ++*runs; }
    std::unique_ptr<aclOpExecutor> Copy() const override
    {
        return std::make_unique<TestOpExecutor>(*this);
    }
    bool SetAddress(bool, size_t, size_t, const aclTensor*) override { return false; }
    std::atomic<int>* runs;
};

aclOpExecutor* TestOpPhase1(std::atomic<int>* runs)
{
    return ascend_ema_adam::acl::RegisterExecutor(std::make_unique<TestOpExecutor>(runs));
}

aclnnStatus TestOpPhase2(aclOpExecutor* executor)
{
    return ascend_ema_adam::acl::RunPhase2(kTestOp, nullptr, 0, executor, nullptr);
}

AEA_CASE(foreign_executor_is_refused_and_stays_usable)
{
    std::atomic<int> runs{0};
    aclOpExecutor* testOp = TestOpPhase1(&runs);
    RecentError();
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, testOp, nullptr) == ACLNN_ERR_PARAM_INVALID);
    const std::string message = RecentError();
    EXPECT_MSG(Contains(message, "aclnnApplyFusedEmaAdam: executor was created by "
                                 "aclnnTestOpGetWorkspaceSize, not by "
                                 "aclnnApplyFusedEmaAdamGetWorkspaceSize; run it with aclnnTestOp"),
               "%s", message.c_str());
    EXPECT(runs == 0);
    EXPECT(TestOpPhase2(testOp) == ACLNN_SUCCESS);  // still registered: its own phase 2 runs it
    EXPECT(runs == 1);
}

AEA_CASE(apply_fused_ema_adam_executor_is_refused_by_another_op)
{
    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {3, 7}, Layout::kContiguous);
    const auto before = ts.Snapshot();
    uint64_t ws = 1;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    RecentError();
    EXPECT(TestOpPhase2(executor) == ACLNN_ERR_PARAM_INVALID);
    const std::string message = RecentError();
    EXPECT_MSG(Contains(message, "aclnnTestOp: executor was created by "
                                 "aclnnApplyFusedEmaAdamGetWorkspaceSize, not by "
                                 "aclnnTestOpGetWorkspaceSize; run it with aclnnApplyFusedEmaAdam"),
               "%s", message.c_str());
    EXPECT(ts.Snapshot() == before);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
    EXPECT(ts.Snapshot() != before);
}

AEA_CASE(reused_executor_is_refused)
{
    std::atomic<int> runs{0};
    aclOpExecutor* testOp = TestOpPhase1(&runs);
    EXPECT(TestOpPhase2(testOp) == ACLNN_SUCCESS);
    RecentError();
    EXPECT(TestOpPhase2(testOp) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "aclnnTestOp: executor is not a live executor: it was already run"));
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, testOp, nullptr) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "aclnnApplyFusedEmaAdam: executor is not a live executor"));
    EXPECT(runs == 1);

    OptimizerTensors ts;
    ts.Make(ACL_FLOAT, {5}, Layout::kContiguous);
    uint64_t ws = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT(Phase1(ts, Hyper{}, &ws, &executor) == ACLNN_SUCCESS);
    EXPECT(aclnnApplyFusedEmaAdam(nullptr, 0, executor, nullptr) == ACLNN_SUCCESS);
    const auto after = ts.Snapshot();
    EXPECT(TestOpPhase2(executor) == ACLNN_ERR_PARAM_INVALID);
    EXPECT(Contains(RecentError(), "aclnnTestOp: executor is not a live executor"));
    EXPECT(ts.Snapshot() == after);
}

}  // namespace

int main(int argc, char** argv)
{
    return RunCasesOnDevice(argc, argv);
}
