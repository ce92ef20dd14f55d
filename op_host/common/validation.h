/**
 * @file validation.h
 * @brief Argument checks every operator's validation is built from: pure C++ on what a caller
 *        knows of each tensor (name, dtype code, shape) and of the attributes, so the CPU aclnn
 *        layer and the CANN tiling adapter run the same checks with the same messages. Checks that
 *        need the tensors' memory (null pointers, live handles, formats, overlap) are the aclnn
 *        layer's (runtime/acl/).
 */
#ifndef ASCEND_EMA_ADAM_VALIDATION_H
#define ASCEND_EMA_ADAM_VALIDATION_H

#include <cstdint>
#include <string>
#include <vector>

#include "data_type.h"

namespace ascend_ema_adam {

/**
 * Why the arguments are refused, or "" if they are accepted. Every refusal of these checks is an
 * invalid parameter: the aclnn layer returns ACLNN_ERR_PARAM_INVALID (161002) with the message
 * after "<api>: ", the CANN tiling adapter logs it and fails the tiling.
 */
using Refusal = std::string;

/** One tensor argument as the checks see it. */
struct TensorArg {
    const char* name;                   // the argument's name in the C API ("varRef")
    int32_t dtype;                      // aclDataType / ge::DataType value
    const std::vector<int64_t>& shape;  // view shape (aclnn), storage shape (CANN tiling)
};

/** Element count of a shape (the caller has checked it does not overflow). */
int64_t Numel(const std::vector<int64_t>& dims);
/** "[2,3,4]" */
std::string ShapeToString(const std::vector<int64_t>& dims);
/** "ACL_FLOAT16 (1)" */
std::string DescribeDtype(int32_t cannCode);
/** The shortest text that reads back as x (in double, or in fp32 when `asFloat`). */
std::string FormatNumber(double x, bool asFloat = false);

/** t's dtype is one the kernels update (fp32, fp16, bf16). */
Refusal CheckFloatDtype(const TensorArg& t);
/** t has ref's dtype; `group` lists the tensors that must share it. */
Refusal CheckSameDtype(const TensorArg& t, const TensorArg& ref, const char* group);
/** t has ref's shape (the full shape, not only the element count). */
Refusal CheckSameShape(const TensorArg& t, const TensorArg& ref, const char* group);

/** t has dtype `expected` ("t has dtype ACL_FLOAT16 (1), expected ACL_FLOAT"). */
Refusal CheckDtypeIs(const TensorArg& t, DataType expected);
/** t holds exactly one element (a scalar tensor: step, a grad scale, a found-inf flag). */
Refusal CheckOneElement(const TensorArg& t);

/** The step tensor is int64 ... */
Refusal CheckStepDtype(const TensorArg& step);
/** ... of exactly one element ... */
Refusal CheckStepShape(const TensorArg& step);
/**
 * ... whose value is at least 1 when bias correction is on (1 - beta^step is 0 at step 0 and the
 * update would divide by it); any value without bias correction. Only where the value is known
 * on the host: the CPU aclnn layer reads it in phase 1, the NPU tiling cannot (docs/ACLNN.md).
 */
Refusal CheckStepValue(int64_t step, bool biasCorrection);

/**
 * A floating-point attribute: finite in fp32 (the operator's precision) and, narrowed to fp32
 * like the kernel uses it, inRange; `range` says the range in the message ("0 <= beta1 < 1").
 */
Refusal CheckFloatAttr(const char* name, double value, bool (*inRange)(float), const char* range);

}  // namespace ascend_ema_adam

#endif  // ASCEND_EMA_ADAM_VALIDATION_H
