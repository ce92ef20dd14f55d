/**
 * @file ema_adam_bad_inputs.h
 * @brief What every operator's bad-input table (tests/cpp/<op>_bad_inputs.h) shares: the
 *        attributes of a call as a test passes them, and the verdicts of the shared validation
 *        (the NPU path's) on a row (tests/cpp/op_host/shared_verdicts.h holds the rows to them).
 */
#ifndef ASCEND_EMA_ADAM_TEST_EMA_ADAM_BAD_INPUTS_H
#define ASCEND_EMA_ADAM_TEST_EMA_ADAM_BAD_INPUTS_H

#include <cstdint>

namespace aea_test {

/** The operator's attributes as a test passes them (defaults: a valid call). */
struct Hyper {
    double lr = 1e-3;
    double emaDecay = 0.999;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    int64_t mode = 1;
    bool biasCorrection = true;
    double weightDecay = 0.01;
};

/** The shared validation's verdict on a row's CallSpec. */
enum class Shared {
    kAlike,          // it refuses the call with the aclnn layer's message (always 161002)
    kAclnnOnly,      // it accepts the description: the defect needs the tensors themselves
    kStepValueOnly,  // only CheckStepValue refuses: where step's value is readable (CPU aclnn)
    kOther,          // it refuses with `sharedMessage` (the aclnn layer found another defect first)
    kOpbaseOnly,     // it accepts the description: on the NPU, CANN's opbase refuses the launch
                     // before the tiling (a dynamic list of more than 256 tensors)
};

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_TEST_EMA_ADAM_BAD_INPUTS_H
