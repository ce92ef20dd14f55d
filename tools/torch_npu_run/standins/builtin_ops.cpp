/**
 * @file builtin_ops.cpp
 * @brief libopapi.so for the torch-npu run: the built-in CANN aclnn operators that torch_npu's
 *        own kernels reach while the optimizer runs on npu tensors (zeros_like, copies, a step's
 *        "+ 1", fills, the clipping norm, the GradScaler's checks ...). Our operators come from
 *        our custom package (libcust_opapi.so), found before this library.
 *
 * Each operator takes the handles op-plugin's EXEC_NPU_CMD converts its arguments to (nnopbase's
 * aclTensor / aclScalar / aclTensorList, read by acl_views.cpp) and computes with torch's CPU
 * kernel of the same operation over the same memory (device memory is host memory in the
 * stand-in runtime): what CANN's operator computes, with the CPU's rounding, so a case can be
 * compared bit for bit with the same call on CPU tensors. Phase 1 captures the views and hands
 * back an executor of this library; phase 2 runs it on the calling thread (the stream's order:
 * the stand-in runtime runs every launch where it is issued) and frees it. Workspace: none.
 *
 * An operator torch_npu reaches that is not here is not found by op-plugin, which then falls back
 * to aclop graph compilation: that aborts in libcann_absent.so, naming the aclop function.
 */
#include <ATen/ATen.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "acl_views.h"

using aclnnStatus = int32_t;
using aclrtStream = void*;
struct aclOpExecutor;

namespace standin {

namespace {

constexpr aclnnStatus kOk = 0;
constexpr aclnnStatus kInnerError = 561000;  // ACLNN_ERR_INNER

at::ScalarType TorchDtype(int aclDtype)
{
    switch (aclDtype) {  // aclDataType (acl/acl_base.h)
        case 0: return at::kFloat;
        case 1: return at::kHalf;
        case 2: return at::kChar;
        case 3: return at::kInt;
        case 4: return at::kByte;
        case 6: return at::kShort;
        case 9: return at::kLong;
        case 11: return at::kDouble;
        case 12: return at::kBool;
        case 27: return at::kBFloat16;
        default: TORCH_CHECK(false, "stand-in builtin op: aclDataType ", aclDtype, " not stood in");
    }
}

/** The device memory of a handle as a CPU tensor over it (no copy). */
at::Tensor Tensor(const aclTensor* handle)
{
    const DeviceView v = ViewOf(handle);
    return at::from_blob(v.data, v.sizes, v.strides, at::TensorOptions().dtype(TorchDtype(v.aclDtype)));
}

std::vector<at::Tensor> Tensors(const aclTensorList* handle)
{
    std::vector<at::Tensor> tensors;
    for (const DeviceView& v : ViewsOf(handle)) {
        tensors.push_back(at::from_blob(v.data, v.sizes, v.strides,
                                        at::TensorOptions().dtype(TorchDtype(v.aclDtype))));
    }
    return tensors;
}

at::Scalar Scalar(const aclScalar* handle)
{
    const ScalarValue s = ValueOf(handle);
    switch (s.kind) {
        case ScalarValue::kBoolean: return at::Scalar(s.boolean);
        case ScalarValue::kIntegral: return at::Scalar(s.integral);
        default: return at::Scalar(s.floating);
    }
}

/** What phase 1 prepared: the operation over the captured views. */
struct Executor {
    const char* name;
    std::function<void()> run;
};

aclnnStatus Prepare(const char* name, std::function<void()> run, uint64_t* workspaceSize,
                    aclOpExecutor** executor)
{
    *workspaceSize = 0;
    *executor = reinterpret_cast<aclOpExecutor*>(new Executor{name, std::move(run)});
    return kOk;
}

aclnnStatus Launch(aclOpExecutor* handle)
{
    Executor* executor = reinterpret_cast<Executor*>(handle);
    aclnnStatus status = kOk;
    try {
        executor->run();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "stand-in %s failed: %s\n", executor->name, e.what());
        status = kInnerError;
    }
    delete executor;
    return status;
}

}  // namespace

}  // namespace standin

// One operator: phase 1 `name`GetWorkspaceSize(params..., workspaceSize, executor) capturing
// the body (a lambda over the parameters' views), and phase 2 `name`(workspace, size, executor,
// stream) running it.
#define STANDIN_OP(name, params, ...)                                                           \
    extern "C" __attribute__((visibility("default"))) aclnnStatus name##GetWorkspaceSize params \
    {                                                                                            \
        using namespace standin;                                                                 \
        return Prepare(#name, __VA_ARGS__, workspaceSize, executor);                             \
    }                                                                                            \
    extern "C" __attribute__((visibility("default"))) aclnnStatus name(                         \
        void*, uint64_t, aclOpExecutor* executor, aclrtStream)                                   \
    {                                                                                            \
        return standin::Launch(executor);                                                        \
    }

// self.zero_()  (zeros_like, zero_)
STANDIN_OP(aclnnInplaceZero, (aclTensor* self, uint64_t* workspaceSize, aclOpExecutor** executor),
           [t = Tensor(self)]() mutable { t.zero_(); })

// dst.copy_(src): dtype conversion and broadcasting as torch's copy_
STANDIN_OP(aclnnInplaceCopy,
           (aclTensor* dst, const aclTensor* src, uint64_t* workspaceSize, aclOpExecutor** executor),
           [d = Tensor(dst), s = Tensor(src)]() mutable { d.copy_(s); })

// ---- elementwise arithmetic (out = self op alpha * other, as torch's add / sub / mul / div) ----
STANDIN_OP(aclnnAdd,
           (const aclTensor* self, const aclTensor* other, const aclScalar* alpha, aclTensor* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), a = Scalar(alpha), r = Tensor(out)]() mutable {
               at::add_out(r, s, o, a);
           })
STANDIN_OP(aclnnAdds,
           (const aclTensor* self, const aclScalar* other, const aclScalar* alpha, aclTensor* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other), a = Scalar(alpha), r = Tensor(out)]() mutable {
               r.copy_(at::add(s, o, a));
           })
STANDIN_OP(aclnnInplaceAdd,
           (aclTensor* self, const aclTensor* other, const aclScalar* alpha, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), a = Scalar(alpha)]() mutable { s.add_(o, a); })
STANDIN_OP(aclnnInplaceAdds,
           (aclTensor* self, const aclScalar* other, const aclScalar* alpha, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other), a = Scalar(alpha)]() mutable { s.add_(o, a); })
STANDIN_OP(aclnnSub,
           (const aclTensor* self, const aclTensor* other, const aclScalar* alpha, aclTensor* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), a = Scalar(alpha), r = Tensor(out)]() mutable {
               at::sub_out(r, s, o, a);
           })
STANDIN_OP(aclnnSubs,
           (const aclTensor* self, const aclScalar* other, const aclScalar* alpha, aclTensor* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other), a = Scalar(alpha), r = Tensor(out)]() mutable {
               r.copy_(at::sub(s, o, a));
           })
STANDIN_OP(aclnnMul,
           (const aclTensor* self, const aclTensor* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), r = Tensor(out)]() mutable { at::mul_out(r, s, o); })
STANDIN_OP(aclnnMuls,
           (const aclTensor* self, const aclScalar* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other), r = Tensor(out)]() mutable { r.copy_(at::mul(s, o)); })
STANDIN_OP(aclnnInplaceMul,
           (aclTensor* self, const aclTensor* other, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other)]() mutable { s.mul_(o); })
STANDIN_OP(aclnnInplaceMuls,
           (aclTensor* self, const aclScalar* other, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other)]() mutable { s.mul_(o); })
STANDIN_OP(aclnnDiv,
           (const aclTensor* self, const aclTensor* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), r = Tensor(out)]() mutable { at::div_out(r, s, o); })
STANDIN_OP(aclnnDivs,
           (const aclTensor* self, const aclScalar* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other), r = Tensor(out)]() mutable { r.copy_(at::div(s, o)); })
STANDIN_OP(aclnnMaximum,
           (const aclTensor* self, const aclTensor* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), r = Tensor(out)]() mutable { at::maximum_out(r, s, o); })
STANDIN_OP(aclnnMinimum,
           (const aclTensor* self, const aclTensor* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Tensor(other), r = Tensor(out)]() mutable { at::minimum_out(r, s, o); })

// ---- fills, casts, comparisons, selection ---------------------------------------------------
STANDIN_OP(aclnnInplaceFillScalar,
           (aclTensor* self, const aclScalar* value, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), v = Scalar(value)]() mutable { s.fill_(v); })
STANDIN_OP(aclnnInplaceFillTensor,
           (aclTensor* self, const aclTensor* value, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), v = Tensor(value)]() mutable { s.fill_(v); })
// out = self.to(out's dtype) (the dtype argument is out's)
STANDIN_OP(aclnnCast,
           (const aclTensor* self, int32_t /*aclDataType*/, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), r = Tensor(out)]() mutable { r.copy_(s); })
STANDIN_OP(aclnnEqScalar,
           (const aclTensor* self, const aclScalar* other, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(other), r = Tensor(out)]() mutable { at::eq_out(r, s, o); })
STANDIN_OP(aclnnSWhere,
           (const aclTensor* condition, const aclTensor* self, const aclTensor* other, aclTensor* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [c = Tensor(condition), s = Tensor(self), o = Tensor(other), r = Tensor(out)]() mutable {
               at::where_out(r, c, s, o);
           })

// ---- reductions, lists ------------------------------------------------------------------------
STANDIN_OP(aclnnLinalgVectorNorm,
           (const aclTensor* self, const aclScalar* ord, const aclIntArray* dim, bool keepdim,
            int32_t /*aclDataType: out's*/, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), o = Scalar(ord), d = ValuesOf(dim), k = keepdim, r = Tensor(out)]() mutable {
               at::linalg_vector_norm_out(r, s, o, d, k, r.scalar_type());
           })
STANDIN_OP(aclnnForeachNorm,
           (const aclTensorList* self, const aclScalar* ord, aclTensorList* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensors(self), o = Scalar(ord), r = Tensors(out)]() mutable {
               const std::vector<at::Tensor> norms = at::_foreach_norm(s, o);
               for (size_t i = 0; i < r.size(); ++i) r[i].copy_(norms[i]);
           })
STANDIN_OP(aclnnCat,
           (const aclTensorList* tensors, int64_t dim, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [t = Tensors(tensors), d = dim, r = Tensor(out)]() mutable { at::cat_out(r, t, d); })
STANDIN_OP(aclnnStack,
           (const aclTensorList* tensors, int64_t dim, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [t = Tensors(tensors), d = dim, r = Tensor(out)]() mutable { at::stack_out(r, t, d); })

// ---- torch.amp.GradScaler (inf-nan mode: the device keeps IEEE inf and NaN) -------------------
STANDIN_OP(aclnnForeachNonFiniteCheckAndUnscale,
           (const aclTensorList* scaledGrads, aclTensor* foundInf, const aclTensor* invScale,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [g = Tensors(scaledGrads), f = Tensor(foundInf), s = Tensor(invScale)]() mutable {
               at::_amp_foreach_non_finite_check_and_unscale_(g, f, s);
           })
STANDIN_OP(aclnnAmpUpdateScale,
           (const aclTensor* currentScale, aclTensor* growthTracker, const aclTensor* foundInf,
            double growthFactor, double backoffFactor, int64_t growthInterval, aclTensor* outScale,
            aclTensor* outTracker, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(currentScale), t = Tensor(growthTracker), f = Tensor(foundInf),
            growthFactor, backoffFactor, growthInterval, os = Tensor(outScale),
            ot = Tensor(outTracker)]() mutable {
               at::Tensor scale = s.clone();
               at::Tensor tracker = t.clone();
               at::_amp_update_scale_(scale, tracker, f, growthFactor, backoffFactor, growthInterval);
               os.copy_(scale);
               ot.copy_(tracker);
           })

// ---- what fused clipping's scalars need (isfinite, logical_not, clamp, reductions, pow) ------
STANDIN_OP(aclnnIsFinite,
           (const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), r = Tensor(out)]() mutable { r.copy_(at::isfinite(s)); })
STANDIN_OP(aclnnLogicalNot,
           (const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), r = Tensor(out)]() mutable { at::logical_not_out(r, s); })
STANDIN_OP(aclnnClamp,
           (const aclTensor* self, const aclScalar* min, const aclScalar* max, aclTensor* out,
            uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), lo = min ? std::optional<at::Scalar>(Scalar(min)) : std::nullopt,
            hi = max ? std::optional<at::Scalar>(Scalar(max)) : std::nullopt,
            r = Tensor(out)]() mutable { at::clamp_out(r, s, lo, hi); })
STANDIN_OP(aclnnClampMax,
           (const aclTensor* self, const aclScalar* max, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), hi = Scalar(max), r = Tensor(out)]() mutable { at::clamp_max_out(r, s, hi); })
STANDIN_OP(aclnnClampMin,
           (const aclTensor* self, const aclScalar* min, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), lo = Scalar(min), r = Tensor(out)]() mutable { at::clamp_min_out(r, s, lo); })
STANDIN_OP(aclnnPowTensorTensor,
           (const aclTensor* self, const aclTensor* exponent, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), e = Tensor(exponent), r = Tensor(out)]() mutable { at::pow_out(r, s, e); })
STANDIN_OP(aclnnReciprocal,
           (const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), r = Tensor(out)]() mutable { at::reciprocal_out(r, s); })
STANDIN_OP(aclnnPowTensorScalar,
           (const aclTensor* self, const aclScalar* exponent, aclTensor* out, uint64_t* workspaceSize,
            aclOpExecutor** executor),
           [s = Tensor(self), e = Scalar(exponent), r = Tensor(out)]() mutable { at::pow_out(r, s, e); })
// max over every element
STANDIN_OP(aclnnMax,
           (const aclTensor* self, aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), r = Tensor(out)]() mutable { r.copy_(at::max(s)); })
STANDIN_OP(aclnnReduceSum,
           (const aclTensor* self, const aclIntArray* dim, bool keepdim, int32_t /*aclDataType: out's*/,
            aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor),
           [s = Tensor(self), d = ValuesOf(dim), k = keepdim, r = Tensor(out)]() mutable {
               at::sum_out(r, s, d, k, r.scalar_type());
           })

// ---- comparisons with a scalar (out: bool) ----------------------------------------------------
#define STANDIN_COMPARE_SCALAR(name, fn)                                                         \
    STANDIN_OP(name,                                                                             \
               (const aclTensor* self, const aclScalar* other, aclTensor* out,                  \
                uint64_t* workspaceSize, aclOpExecutor** executor),                              \
               [s = Tensor(self), o = Scalar(other), r = Tensor(out)]() mutable { fn(r, s, o); })
STANDIN_COMPARE_SCALAR(aclnnGtScalar, at::gt_out)
STANDIN_COMPARE_SCALAR(aclnnGeScalar, at::ge_out)
STANDIN_COMPARE_SCALAR(aclnnLtScalar, at::lt_out)
STANDIN_COMPARE_SCALAR(aclnnNeScalar, at::ne_out)

// ---- CANN's own ApplyFusedEmaAdam (ops-nn), present so that cases.py can show which library an
// aclnn name resolves to: the package's AeaApplyFusedEmaAdam never replaces it. Not computed
// here (CANN's bias correction uses the device's approximate Power): calling it aborts.
extern "C" __attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdamGetWorkspaceSize()
{
    std::fprintf(stderr, "stand-in CANN: the built-in aclnnApplyFusedEmaAdam is not computed here\n");
    std::abort();
}
extern "C" __attribute__((visibility("default"))) aclnnStatus aclnnApplyFusedEmaAdam()
{
    std::fprintf(stderr, "stand-in CANN: the built-in aclnnApplyFusedEmaAdam is not computed here\n");
    std::abort();
}
