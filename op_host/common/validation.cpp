/**
 * @file validation.cpp
 * @brief The shared argument checks and their message pieces (see the header).
 */
#include "validation.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "platform.h"

namespace ascend_ema_adam {

namespace {

/** "ACL_FLOAT, ACL_FLOAT16 or ACL_BF16": the float dtypes of the table. */
std::string FloatDtypeNames()
{
    std::vector<const char*> names;
    for (const DataTypeInfo& info : kDataTypes) {
        if (info.isFloat) {
            names.push_back(CannDataTypeName(info.cannCode));
        }
    }
    std::string text;
    for (size_t i = 0; i < names.size(); ++i) {
        text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ");
        text += names[i];
    }
    return text;
}

}  // namespace

int64_t Numel(const std::vector<int64_t>& dims)
{
    int64_t numel = 1;
    for (int64_t d : dims) {
        numel *= d;
    }
    return numel;
}

std::string ShapeToString(const std::vector<int64_t>& dims)
{
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
        s += (i ? "," : "") + std::to_string(dims[i]);
    }
    return s + "]";
}

std::string DescribeDtype(int32_t cannCode)
{
    return std::string(CannDataTypeName(cannCode)) + " (" + std::to_string(cannCode) + ")";
}

std::string FormatNumber(double x, bool asFloat)
{
    char buf[40];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof(buf), "%.*g", digits, x);
        if (asFloat ? std::strtof(buf, nullptr) == static_cast<float>(x)
                    : std::strtod(buf, nullptr) == x) {
            break;
        }
    }
    return buf;
}

Refusal CheckFloatDtype(const TensorArg& t)
{
    const DataTypeInfo* info = FindDataTypeByCode(t.dtype);
    if (info != nullptr && info->isFloat) {
        return {};
    }
    return std::string(t.name) + " has dtype " + DescribeDtype(t.dtype) + ", expected " +
           FloatDtypeNames();
}

Refusal CheckSameDtype(const TensorArg& t, const TensorArg& ref, const char* group)
{
    if (t.dtype == ref.dtype) {
        return {};
    }
    return std::string(t.name) + " has dtype " + DescribeDtype(t.dtype) + " but " + ref.name +
           " has " + DescribeDtype(ref.dtype) + ": " + group + " must share one dtype";
}

Refusal CheckSameShape(const TensorArg& t, const TensorArg& ref, const char* group)
{
    if (t.shape == ref.shape) {
        return {};
    }
    return std::string(t.name) + " has shape " + ShapeToString(t.shape) + " but " + ref.name +
           " has shape " + ShapeToString(ref.shape) + ": " + group + " must have one shape";
}

Refusal CheckDtypeIs(const TensorArg& t, DataType expected)
{
    const int32_t code = CannCodeOf(expected);
    if (t.dtype == code) {
        return {};
    }
    return std::string(t.name) + " has dtype " + DescribeDtype(t.dtype) + ", expected " +
           CannDataTypeName(code);
}

Refusal CheckOneElement(const TensorArg& t)
{
    const int64_t numel = Numel(t.shape);
    if (numel == 1) {
        return {};
    }
    return std::string(t.name) + " has shape " + ShapeToString(t.shape) + " (" +
           std::to_string(numel) + " elements), expected exactly one element";
}

Refusal CheckStepDtype(const TensorArg& step)
{
    return CheckDtypeIs(step, DataType::kInt64);
}

Refusal CheckStepShape(const TensorArg& step)
{
    return CheckOneElement(step);
}

Refusal CheckStepValue(int64_t step, bool biasCorrection)
{
    if (!biasCorrection || step >= 1) {
        return {};
    }
    return "step is " + std::to_string(step) +
           ", expected step >= 1 when biasCorrection is true (the update divides by the bias "
           "correction 1 - beta^step, which is 0 at step 0)";
}

Refusal CheckFloatAttr(const char* name, double value, bool (*inRange)(float), const char* range)
{
    const float narrowed = static_cast<float>(value);
    if (!std::isfinite(narrowed)) {
        return std::string(name) + " is " + FormatNumber(value) + ", expected a finite value" +
               (std::isfinite(value) ? " (it overflows fp32, the operator's precision)" : "");
    }
    if (!inRange(narrowed)) {
        return std::string(name) + " is " + FormatNumber(value) + " (" +
               FormatNumber(narrowed, true) + " in fp32), expected " + range;
    }
    return {};
}

}  // namespace ascend_ema_adam
