/**
 * @file aclnn_apply_fused_ema_adam.cpp
 * @brief The two-phase aclnn API of ApplyFusedEmaAdam on the CPU device.
 *
 * Phase 1 (GetWorkspaceSize) checks every argument in a fixed order (nulls, dtypes, shapes and
 * step, attributes, formats, memory layout) before it does anything, runs the host tiling and
 * registers a single-use executor holding copies of the views. Phase 2 queues the executor on the
 * stream: strided views are gathered into the workspace, the kernel runs on contiguous memory,
 * and the updated var/m/v/s are scattered back into their views.
 */
#include "aclnnop/aclnn_apply_fused_ema_adam.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

#include "acl_internal.h"
#include "apply_fused_ema_adam_native.h"
#include "apply_fused_ema_adam_tiling.h"
#include "apply_fused_ema_adam_twin_run.h"

namespace ascend_ema_adam::acl {

namespace {

constexpr const char* kPhase1 = "aclnnApplyFusedEmaAdamGetWorkspaceSize";
constexpr const char* kPhase2 = "aclnnApplyFusedEmaAdam";

// Tensor arguments in signature order; the first five are the float tensors.
enum TensorArg { kGrad, kVar, kM, kV, kS, kStep, kTensorArgs };
constexpr int kFloatTensors = kS + 1;
constexpr const char* kTensorNames[kTensorArgs] = {"grad", "varRef", "mRef", "vRef", "sRef", "step"};
constexpr uint64_t kStagingAlign = 64;  // each staged copy starts on a cache line

using Tensors = const aclTensor* const (&)[kTensorArgs];

/** A checked view, copied into the executor: the aclTensor may be destroyed after phase 1. */
struct View {
    char* first = nullptr;  // element 0 of the view
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    bool contiguous = true;
    uint64_t stagingOffset = 0;  // workspace bytes where a strided view is staged
};

struct ApplyFusedEmaAdamExecutor final : aclOpExecutor {
    TilingResult tiling;
    Platform platform;
    View views[kFloatTensors];
    const int64_t* step = nullptr;
    uint32_t elemBytes = 0;
    CpuKernel kernel = CpuKernel::kNative;  // from the environment at phase 1
    uint32_t threads = 0;                   // the native kernel's
};

aclnnStatus Reject(aclnnStatus status, const std::string& message)
{
    AddErrorMessage(std::string(kPhase1) + ": " + message);
    return status;
}

uint32_t ElemBytes(aclDataType dtype)
{
    return dtype == ACL_INT64 ? 8U : dtype == ACL_FLOAT ? 4U : 2U;
}

/** Address of the view's element 0 (null for the null address an empty tensor may have). */
char* FirstElement(const aclTensor* t)
{
    char* data = static_cast<char*>(t->data);
    return data == nullptr ? nullptr : data + t->offset * static_cast<int64_t>(ElemBytes(t->dataType));
}

/** Row-major contiguous, ignoring the strides of size-1 dims (they address nothing). */
bool IsContiguous(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides)
{
    int64_t expected = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] != 1 && strides[i] != expected) {
            return false;
        }
        expected *= sizes[i];
    }
    return true;
}

/**
 * True if no two elements of the view share an address: ordered by stride, every dim must step
 * past everything the smaller dims span. Conservative: a few exotic interleavings without overlap
 * are refused too.
 */
bool HasDistinctElements(const aclTensor* t)
{
    if (Numel(t->viewDims) == 0) {
        return true;
    }
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims that repeat
    for (size_t i = 0; i < t->viewDims.size(); ++i) {
        if (t->viewDims[i] > 1) {
            dims.emplace_back(t->strides[i], t->viewDims[i]);
        }
    }
    std::sort(dims.begin(), dims.end());
    int64_t span = 1;  // elements covered by the dims seen so far
    for (const auto& [stride, size] : dims) {
        if (stride < span) {
            return false;
        }
        span += (size - 1) * stride;
    }
    return true;
}

/** Addresses [begin, end) from a view's first to past its last byte (empty for an empty view). */
std::pair<uintptr_t, uintptr_t> ByteRange(const aclTensor* t)
{
    if (Numel(t->viewDims) == 0) {
        return {0, 0};
    }
    int64_t lastIndex = 0;
    for (size_t i = 0; i < t->viewDims.size(); ++i) {
        lastIndex += (t->viewDims[i] - 1) * t->strides[i];
    }
    const auto begin = reinterpret_cast<uintptr_t>(FirstElement(t));
    return {begin, begin + static_cast<uintptr_t>(lastIndex + 1) * ElemBytes(t->dataType)};
}

bool Overlap(const aclTensor* a, const aclTensor* b)
{
    const auto [aBegin, aEnd] = ByteRange(a);
    const auto [bBegin, bEnd] = ByteRange(b);
    return aBegin != aEnd && bBegin != bEnd && aBegin < bEnd && bBegin < aEnd;
}

/** The shortest text that reads back as x (in double, or in fp32 when `asFloat`). */
std::string Number(double x, bool asFloat = false)
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

// ---- CheckParams, in order ---------------------------------------------------------------------

aclnnStatus CheckNotNull(Tensors tensors, const uint64_t* workspaceSize,
                         aclOpExecutor* const* executor)
{
    for (int i = 0; i < kTensorArgs; ++i) {
        if (tensors[i] == nullptr) {
            return Reject(ACLNN_ERR_PARAM_NULLPTR, std::string(kTensorNames[i]) + " is null");
        }
    }
    if (workspaceSize == nullptr) {
        return Reject(ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is null");
    }
    if (executor == nullptr) {
        return Reject(ACLNN_ERR_PARAM_NULLPTR, "executor is null");
    }
    for (int i = 0; i < kTensorArgs; ++i) {
        if (!IsLiveTensor(tensors[i])) {
            return Reject(ACLNN_ERR_PARAM_INVALID,
                          std::string(kTensorNames[i]) +
                              " is not a live aclTensor (already destroyed, or not from "
                              "aclCreateTensor)");
        }
        const int64_t numel = Numel(tensors[i]->viewDims);
        if (tensors[i]->data == nullptr && numel > 0) {
            return Reject(ACLNN_ERR_PARAM_NULLPTR, std::string(kTensorNames[i]) + " has " +
                                                       std::to_string(numel) +
                                                       " elements but a null data address");
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckDtypes(Tensors tensors)
{
    const aclDataType dtype = tensors[kGrad]->dataType;
    if (dtype != ACL_FLOAT && dtype != ACL_FLOAT16 && dtype != ACL_BF16) {
        return Reject(ACLNN_ERR_PARAM_INVALID, "grad has dtype " + DataTypeToString(dtype) +
                                                   ", expected ACL_FLOAT, ACL_FLOAT16 or ACL_BF16");
    }
    for (int i = kVar; i < kFloatTensors; ++i) {
        if (tensors[i]->dataType != dtype) {
            return Reject(ACLNN_ERR_PARAM_INVALID,
                          std::string(kTensorNames[i]) + " has dtype " +
                              DataTypeToString(tensors[i]->dataType) + " but grad has " +
                              DataTypeToString(dtype) +
                              ": grad, varRef, mRef, vRef and sRef must share one dtype");
        }
    }
    if (tensors[kStep]->dataType != ACL_INT64) {
        return Reject(ACLNN_ERR_PARAM_INVALID, "step has dtype " +
                                                   DataTypeToString(tensors[kStep]->dataType) +
                                                   ", expected ACL_INT64");
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckShapes(Tensors tensors)
{
    const std::vector<int64_t>& shape = tensors[kGrad]->viewDims;
    for (int i = kVar; i < kFloatTensors; ++i) {
        if (tensors[i]->viewDims != shape) {
            return Reject(ACLNN_ERR_PARAM_INVALID,
                          std::string(kTensorNames[i]) + " has shape " +
                              ShapeToString(tensors[i]->viewDims) + " but grad has shape " +
                              ShapeToString(shape) +
                              ": grad, varRef, mRef, vRef and sRef must have one shape");
        }
    }
    const int64_t stepNumel = Numel(tensors[kStep]->viewDims);
    if (stepNumel != 1) {
        return Reject(ACLNN_ERR_PARAM_INVALID,
                      "step has shape " + ShapeToString(tensors[kStep]->viewDims) + " (" +
                          std::to_string(stepNumel) + " elements), expected exactly one element");
    }
    return ACLNN_SUCCESS;
}

/** Range checks run on the fp32 values the kernel uses (0.999999999 is 1 in fp32). */
aclnnStatus CheckAttr(const char* name, double value, bool (*inRange)(float), const char* range)
{
    const float narrowed = static_cast<float>(value);
    if (!std::isfinite(narrowed)) {
        return Reject(ACLNN_ERR_PARAM_INVALID,
                      std::string(name) + " is " + Number(value) + ", expected a finite value" +
                          (std::isfinite(value) ? " (it overflows fp32, the operator's precision)"
                                                : ""));
    }
    if (!inRange(narrowed)) {
        return Reject(ACLNN_ERR_PARAM_INVALID, std::string(name) + " is " + Number(value) + " (" +
                                                   Number(narrowed, true) + " in fp32), expected " +
                                                   range);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckAttrs(const Attrs& a)
{
    if (a.mode != 0 && a.mode != 1) {
        return Reject(ACLNN_ERR_PARAM_INVALID,
                      "mode is " + std::to_string(a.mode) +
                          ", expected 0 (Adam, L2 weight decay) or 1 (AdamW, decoupled decay)");
    }
    const auto any = [](float) { return true; };
    const auto unitOpen = [](float x) { return x >= 0.0F && x < 1.0F; };
    const auto unitClosed = [](float x) { return x >= 0.0F && x <= 1.0F; };
    const auto nonNegative = [](float x) { return x >= 0.0F; };
    const struct {
        const char* name;
        double value;
        bool (*inRange)(float);
        const char* range;
    } checks[] = {
        {"lr", a.lr, any, ""},
        {"emaDecay", a.emaDecay, unitClosed, "0 <= emaDecay <= 1"},
        {"beta1", a.beta1, unitOpen, "0 <= beta1 < 1"},
        {"beta2", a.beta2, unitOpen, "0 <= beta2 < 1"},
        {"eps", a.eps, nonNegative, "eps >= 0"},
        {"weightDecay", a.weightDecay, any, ""},
    };
    for (const auto& c : checks) {
        const aclnnStatus status = CheckAttr(c.name, c.value, c.inRange, c.range);
        if (status != ACLNN_SUCCESS) {
            return status;
        }
    }
    return ACLNN_SUCCESS;
}

/**
 * ND, or the plain layout tags torch_npu and MindSpeed attach to 3/4/5-D ND tensors (NCL, NCHW,
 * NCDHW): all describe row-major memory. Private NPU layouts (NC1HWC0, FRACTAL_NZ, ...) do not.
 */
aclnnStatus CheckFormats(Tensors tensors)
{
    for (int i = 0; i < kTensorArgs; ++i) {
        const aclFormat f = tensors[i]->format;
        if (f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL && f != ACL_FORMAT_NCHW &&
            f != ACL_FORMAT_NCDHW) {
            return Reject(ACLNN_ERR_PARAM_INVALID,
                          std::string(kTensorNames[i]) + " has format " + FormatToString(f) +
                              ", expected ACL_FORMAT_ND (NCL, NCHW and NCDHW are accepted as ND)");
        }
    }
    return ACLNN_SUCCESS;
}

/**
 * Updated tensors are written in place, so each must address distinct elements and none may
 * overlap another tensor of the call (the result would depend on the order of the writes).
 */
aclnnStatus CheckMemory(Tensors tensors)
{
    for (int i = kVar; i < kFloatTensors; ++i) {
        if (!HasDistinctElements(tensors[i])) {
            return Reject(ACLNN_ERR_PARAM_INVALID,
                          std::string(kTensorNames[i]) + " (shape " +
                              ShapeToString(tensors[i]->viewDims) + ", stride " +
                              ShapeToString(tensors[i]->strides) +
                              ") addresses some elements more than once; an updated tensor must "
                              "not");
        }
    }
    for (int i = kVar; i < kFloatTensors; ++i) {
        // Each pair once: the later updated tensors, then the two read-only inputs.
        std::vector<int> others;
        for (int j = i + 1; j < kFloatTensors; ++j) {
            others.push_back(j);
        }
        others.push_back(kGrad);
        others.push_back(kStep);
        for (int j : others) {
            if (Overlap(tensors[i], tensors[j])) {
                return Reject(ACLNN_ERR_PARAM_INVALID,
                              std::string(kTensorNames[i]) + " and " + kTensorNames[j] +
                                  " overlap in memory; an updated tensor must not overlap any "
                                  "other tensor of the call");
            }
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus CheckParams(Tensors tensors, const Attrs& attrs, const uint64_t* workspaceSize,
                        aclOpExecutor* const* executor)
{
    aclnnStatus status = CheckNotNull(tensors, workspaceSize, executor);
    if (status == ACLNN_SUCCESS) status = CheckDtypes(tensors);
    if (status == ACLNN_SUCCESS) status = CheckShapes(tensors);
    if (status == ACLNN_SUCCESS) status = CheckAttrs(attrs);
    if (status == ACLNN_SUCCESS) status = CheckFormats(tensors);
    if (status == ACLNN_SUCCESS) status = CheckMemory(tensors);
    return status;
}

DataType KernelDataType(aclDataType dtype)
{
    return dtype == ACL_FLOAT ? DataType::kFloat32
           : dtype == ACL_FLOAT16 ? DataType::kFloat16
                                  : DataType::kBFloat16;
}

// ---- phase 2 -----------------------------------------------------------------------------------

/** Copies a view to or from its row-major packed copy; innermost unit-stride runs as one block. */
void CopyView(const View& view, uint32_t elemBytes, char* packed, bool toPacked)
{
    const size_t rank = view.sizes.size();
    const int64_t inner = rank ? view.sizes[rank - 1] : 1;
    const int64_t innerStride = rank ? view.strides[rank - 1] : 1;
    const int64_t outer = inner ? Numel(view.sizes) / inner : 0;
    std::vector<int64_t> index(rank ? rank - 1 : 0, 0);
    int64_t base = 0;  // element offset of the current inner row
    for (int64_t row = 0; row < outer; ++row) {
        char* elem = view.first + base * elemBytes;
        if (innerStride == 1) {
            const size_t bytes = static_cast<size_t>(inner) * elemBytes;
            toPacked ? std::memcpy(packed, elem, bytes) : std::memcpy(elem, packed, bytes);
            packed += bytes;
        } else {
            for (int64_t k = 0; k < inner; ++k, packed += elemBytes) {
                char* e = elem + k * innerStride * elemBytes;
                toPacked ? std::memcpy(packed, e, elemBytes) : std::memcpy(e, packed, elemBytes);
            }
        }
        for (size_t d = index.size(); d-- > 0;) {  // odometer over the outer dims
            base += view.strides[d];
            if (++index[d] < view.sizes[d]) {
                break;
            }
            base -= view.sizes[d] * view.strides[d];
            index[d] = 0;
        }
    }
}

/**
 * The CPU device's kernel launch for one executor: the one place a CPU kernel is chosen. The
 * native kernel by default; the AscendC kernel, unchanged, through the twin with
 * ASCEND_EMA_ADAM_CPU_KERNEL=twin. Both give the same bits.
 */
void RunCpuKernel(const ApplyFusedEmaAdamExecutor& e, const KernelBuffers& buffers)
{
    if (e.kernel == CpuKernel::kTwin) {
        RunOnTwin(e.tiling, e.platform, buffers);
        return;
    }
    NativeOptions options;
    options.threads = e.threads;
    RunNative(e.tiling, buffers, options);
}

/** Phase 2's work, in stream order: stage strided views in, run the kernel, scatter results. */
void Execute(const ApplyFusedEmaAdamExecutor& e, char* workspace)
{
    void* data[kFloatTensors];
    for (int i = 0; i < kFloatTensors; ++i) {
        const View& v = e.views[i];
        data[i] = v.contiguous ? v.first : workspace + v.stagingOffset;
        if (!v.contiguous) {
            CopyView(v, e.elemBytes, static_cast<char*>(data[i]), true);
        }
    }
    KernelBuffers b{};
    b.grad = data[kGrad];
    b.var = b.varOut = data[kVar];
    b.m = b.mOut = data[kM];
    b.v = b.vOut = data[kV];
    b.s = b.sOut = data[kS];
    b.step = e.step;
    RunCpuKernel(e, b);
    for (int i = kVar; i < kFloatTensors; ++i) {
        if (!e.views[i].contiguous) {
            CopyView(e.views[i], e.elemBytes, static_cast<char*>(data[i]), false);
        }
    }
}

aclnnStatus GetWorkspaceSize(Tensors tensors, const Attrs& attrs, uint64_t* workspaceSize,
                             aclOpExecutor** executor)
{
    const aclnnStatus status = CheckParams(tensors, attrs, workspaceSize, executor);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    auto e = std::make_unique<ApplyFusedEmaAdamExecutor>();
    try {  // read at every call, so a process (or a test) can switch kernels
        e->kernel = SelectedCpuKernel();
        e->threads = e->kernel == CpuKernel::kNative ? NativeThreads() : 0;
    } catch (const std::invalid_argument& ex) {
        return Reject(ACLNN_ERR_RUNTIME_ERROR, ex.what());
    }
    const aclDataType dtype = tensors[kGrad]->dataType;
    const uint64_t numel = static_cast<uint64_t>(Numel(tensors[kGrad]->viewDims));
    e->platform = CpuPlatform();
    try {
        e->tiling = ComputeTiling(numel, KernelDataType(dtype), attrs, e->platform);
    } catch (const std::invalid_argument& ex) {
        return Reject(ACLNN_ERR_INNER_TILING_ERROR, std::string("tiling failed: ") + ex.what());
    }
    e->elemBytes = ElemBytes(dtype);
    e->step = reinterpret_cast<const int64_t*>(FirstElement(tensors[kStep]));
    uint64_t staging = 0;
    for (int i = 0; i < kFloatTensors; ++i) {
        View& v = e->views[i];
        v.first = FirstElement(tensors[i]);
        v.sizes = tensors[i]->viewDims;
        v.strides = tensors[i]->strides;
        v.contiguous = numel == 0 || IsContiguous(v.sizes, v.strides);
        if (!v.contiguous) {
            v.stagingOffset = staging;
            staging += (numel * e->elemBytes + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
        }
    }
    e->workspaceSize = staging;
    *workspaceSize = staging;
    *executor = RegisterExecutor(std::move(e));
    return ACLNN_SUCCESS;
}

aclnnStatus Run(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                aclrtStream stream)
{
    if (executor == nullptr) {
        AddErrorMessage(std::string(kPhase2) + ": executor is null");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (!IsValidStream(stream)) {
        AddErrorMessage(std::string(kPhase2) +
                        ": stream is not a live stream (not from aclrtCreateStream, or destroyed)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    std::unique_ptr<aclOpExecutor> taken;
    const aclnnStatus status = TakeExecutor(kPhase2, executor, workspace, workspaceSize, &taken);
    if (status != ACLNN_SUCCESS) {
        return status;
    }
    // Every executor in the registry comes from this operator's phase 1.
    std::shared_ptr<const ApplyFusedEmaAdamExecutor> e(
        static_cast<ApplyFusedEmaAdamExecutor*>(taken.release()));
    if (e->tiling.data.totalLength == 0) {
        return ACLNN_SUCCESS;  // empty tensors: nothing to queue
    }
    char* ws = static_cast<char*>(workspace);
    if (SubmitToStream(stream, [e, ws] { Execute(*e, ws); }) != ACL_SUCCESS) {
        AddErrorMessage(std::string(kPhase2) + ": could not run on the stream");
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    return ACLNN_SUCCESS;
}

/** No exception crosses the C boundary. */
template <class F>
aclnnStatus Guarded(const char* api, F&& body)
{
    try {
        return body();
    } catch (const std::bad_alloc&) {
        AddErrorMessage(std::string(api) + ": out of host memory");
        return ACLNN_ERR_INNER;
    } catch (const std::exception& ex) {
        AddErrorMessage(std::string(api) + ": internal error: " + ex.what());
        return ACLNN_ERR_INNER;
    }
}

}  // namespace

}  // namespace ascend_ema_adam::acl

extern "C" {

aclnnStatus aclnnApplyFusedEmaAdamGetWorkspaceSize(
    const aclTensor* grad, aclTensor* varRef, aclTensor* mRef, aclTensor* vRef, aclTensor* sRef,
    const aclTensor* step, double lr, double emaDecay, double beta1, double beta2, double eps,
    int64_t mode, bool biasCorrection, double weightDecay, uint64_t* workspaceSize,
    aclOpExecutor** executor)
{
    namespace acl = ascend_ema_adam::acl;
    return acl::Guarded(acl::kPhase1, [&] {
        const aclTensor* const tensors[acl::kTensorArgs] = {grad, varRef, mRef, vRef, sRef, step};
        const ascend_ema_adam::Attrs attrs{lr, emaDecay, beta1, beta2, eps, mode, biasCorrection,
                                           weightDecay};
        return acl::GetWorkspaceSize(tensors, attrs, workspaceSize, executor);
    });
}

aclnnStatus aclnnApplyFusedEmaAdam(void* workspace, uint64_t workspaceSize,
                                   aclOpExecutor* executor, aclrtStream stream)
{
    namespace acl = ascend_ema_adam::acl;
    return acl::Guarded(acl::kPhase2,
                        [&] { return acl::Run(workspace, workspaceSize, executor, stream); });
}

}  // extern "C"
