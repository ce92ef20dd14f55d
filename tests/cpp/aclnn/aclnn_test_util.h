/**
 * @file aclnn_test_util.h
 * @brief Shared by the C API tests: random tensors in aclrtMalloc memory (contiguous or strided
 *        views with gaps) and one-call helpers for the two phases; the case harness is
 *        tests/cpp/test_harness.h.
 */
#ifndef ASCEND_EMA_ADAM_ACLNN_TEST_UTIL_H
#define ASCEND_EMA_ADAM_ACLNN_TEST_UTIL_H

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"
#include "../ema_adam_bad_inputs.h"  // Hyper
#include "../test_harness.h"

namespace aea_test {

// ---- random data --------------------------------------------------------------------------------

/**
 * One generator per thread, freshly seeded, or from AEA_TEST_SEED when set (a replay); the seed is
 * printed so a failure can be replayed.
 */
inline std::mt19937_64& Rng()
{
    thread_local std::mt19937_64 rng = [] {
        const char* replay = std::getenv("AEA_TEST_SEED");
        const uint64_t seed = replay != nullptr && *replay != '\0'
                                  ? std::strtoull(replay, nullptr, 10)
                                  : (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                        std::random_device{}();
        std::printf("rng seed %llu (replay: AEA_TEST_SEED=%llu)\n",
                    static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
        return std::mt19937_64(seed);
    }();
    return rng;
}

inline float Uniform(float lo, float hi)
{
    return std::uniform_real_distribution<float>(lo, hi)(Rng());
}

inline size_t ElemBytes(aclDataType dtype)
{
    return dtype == ACL_INT64 || dtype == ACL_DOUBLE ? 8 : dtype == ACL_FLOAT || dtype == ACL_INT32 ? 4 : 2;
}

/** Stores x as dtype (fp16 / bf16 rounded to nearest even; the values are finite). */
inline void StoreAs(aclDataType dtype, float x, void* out)
{
    if (dtype == ACL_FLOAT) {
        std::memcpy(out, &x, 4);
    } else if (dtype == ACL_FLOAT16) {
        // On the bit pattern (no _Float16, which GCC's C++ lacks on aarch64 before GCC 13).
        uint32_t bits = 0;
        std::memcpy(&bits, &x, 4);
        const uint32_t magnitude = bits & 0x7FFFFFFFU;
        uint32_t h = 0;
        if (magnitude >= 0x477FF000U) {
            h = 0x7C00U;  // rounds to inf
        } else if (magnitude < 0x38800000U) {
            float tiny = 0;  // a subnormal half: 0.5 + |x| rounds |x| to a multiple of 2^-24
            std::memcpy(&tiny, &magnitude, 4);
            const float sum = tiny + 0.5F;
            std::memcpy(&h, &sum, 4);
            h -= 0x3F000000U;
        } else {
            h = (magnitude + 0xC8000FFFU + ((magnitude >> 13) & 1U)) >> 13;  // rebias, round to even
        }
        const auto half = static_cast<uint16_t>(((bits >> 16) & 0x8000U) | h);
        std::memcpy(out, &half, 2);
    } else {
        uint32_t bits = 0;
        std::memcpy(&bits, &x, 4);
        const uint16_t b = static_cast<uint16_t>((bits + 0x7FFFU + ((bits >> 16) & 1U)) >> 16);
        std::memcpy(out, &b, 2);
    }
}

// ---- tensors --------------------------------------------------------------------------------------

enum class Layout {
    kContiguous,
    kTransposed,  // a 2-D view whose storage is the transposed matrix: strides (1, rows)
    kStrided,     // every other element of the last dim, padded rows, a non-zero offset
};

/** An aclTensor over its own aclrtMalloc storage; gap elements are random too. */
struct TestTensor {
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    std::vector<int64_t> storage;
    int64_t offset = 0;
    aclDataType dtype = ACL_FLOAT;
    void* data = nullptr;
    size_t storageBytes = 0;
    aclTensor* handle = nullptr;

    TestTensor() = default;
    TestTensor(const TestTensor&) = delete;
    TestTensor& operator=(const TestTensor&) = delete;
    ~TestTensor() { Release(); }

    void Release()
    {
        if (handle != nullptr) aclDestroyTensor(handle);
        if (data != nullptr) aclrtFree(data);
        handle = nullptr;
        data = nullptr;
    }

    int64_t Numel() const
    {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }

    /** Byte offsets, in row-major view order, of every element of the view. */
    std::vector<size_t> ElementOffsets() const
    {
        std::vector<size_t> out;
        const int64_t n = Numel();
        std::vector<int64_t> index(shape.size(), 0);
        for (int64_t k = 0; k < n; ++k) {
            int64_t e = offset;
            for (size_t d = 0; d < shape.size(); ++d) e += index[d] * strides[d];
            out.push_back(static_cast<size_t>(e) * ElemBytes(dtype));
            for (size_t d = shape.size(); d-- > 0;) {
                if (++index[d] < shape[d]) break;
                index[d] = 0;
            }
        }
        return out;
    }

    /** The view's elements, packed row-major. */
    std::vector<uint8_t> Packed() const
    {
        std::vector<uint8_t> out;
        const size_t es = ElemBytes(dtype);
        for (size_t off : ElementOffsets()) {
            const uint8_t* p = static_cast<const uint8_t*>(data) + off;
            out.insert(out.end(), p, p + es);
        }
        return out;
    }

    /** The whole storage, gaps included. */
    std::vector<uint8_t> Storage() const
    {
        const uint8_t* p = static_cast<const uint8_t*>(data);
        return std::vector<uint8_t>(p, p + storageBytes);
    }
};

/** Random float in the range typical of one optimizer tensor (v, the second moment, is >= 0). */
inline float RoleValue(int role)
{
    switch (role) {
        case 0: return Uniform(-0.1F, 0.1F);         // grad
        case 1: return Uniform(-1.0F, 1.0F);         // var
        case 2: return Uniform(-0.05F, 0.05F);       // m
        case 3: return Uniform(0.0F, 0.01F);         // v
        default: return Uniform(-1.0F, 1.0F);        // s
    }
}

/** Allocates, fills with random role values (or `packed` for the view) and creates the handle. */
inline void MakeTensor(TestTensor* t, aclDataType dtype, const std::vector<int64_t>& shape,
                       Layout layout, int role, const std::vector<uint8_t>* packed = nullptr)
{
    t->Release();
    t->dtype = dtype;
    t->shape = shape;
    t->strides.assign(shape.size(), 1);
    t->offset = 0;
    int64_t storageNumel = 1;
    if (layout == Layout::kContiguous) {
        for (size_t i = shape.size(); i-- > 1;) t->strides[i - 1] = t->strides[i] * shape[i];
        storageNumel = t->Numel();
    } else if (layout == Layout::kTransposed) {
        t->strides = {1, shape[0]};
        storageNumel = t->Numel();
    } else {
        t->offset = 5;
        t->strides.back() = 2;
        for (size_t i = shape.size(); i-- > 1;) t->strides[i - 1] = t->strides[i] * shape[i] + 3;
        int64_t last = t->offset;
        for (size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * t->strides[i];
        storageNumel = last + 4;
    }
    t->storage = {storageNumel};
    const size_t es = ElemBytes(dtype);
    t->storageBytes = static_cast<size_t>(storageNumel) * es;
    if (t->storageBytes > 0 &&
        aclrtMalloc(&t->data, t->storageBytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        std::fprintf(stderr, "aclrtMalloc failed: %s\n", aclGetRecentErrMsg());
        std::abort();
    }
    if (t->storageBytes > 0) {
        std::memset(t->data, 0, t->storageBytes);  // dtypes StoreAs does not fill are all zeros
    }
    for (size_t i = 0; i < static_cast<size_t>(storageNumel); ++i) {
        uint8_t* p = static_cast<uint8_t*>(t->data) + i * es;
        if (dtype == ACL_INT64) {
            const int64_t s = std::uniform_int_distribution<int64_t>(1, 1000)(Rng());
            std::memcpy(p, &s, 8);
        } else {
            StoreAs(dtype, RoleValue(role), p);
        }
    }
    if (packed != nullptr) {
        const std::vector<size_t> offsets = t->ElementOffsets();
        for (size_t k = 0; k < offsets.size(); ++k) {
            std::memcpy(static_cast<uint8_t*>(t->data) + offsets[k], packed->data() + k * es, es);
        }
    }
    t->handle = aclCreateTensor(shape.data(), shape.size(), dtype, t->strides.data(), t->offset,
                                ACL_FORMAT_ND, t->storage.data(), t->storage.size(), t->data);
    if (t->handle == nullptr) {
        std::fprintf(stderr, "aclCreateTensor failed: %s\n", aclGetRecentErrMsg());
        std::abort();
    }
}

/** The six tensors of one call: grad, var, m, v, s (one dtype and shape) and an int64 step. */
struct OptimizerTensors {
    TestTensor t[6];

    void Make(aclDataType dtype, const std::vector<int64_t>& shape, Layout layout)
    {
        for (int i = 0; i < 5; ++i) MakeTensor(&t[i], dtype, shape, layout, i);
        MakeTensor(&t[5], ACL_INT64, {1}, Layout::kContiguous, 5);
    }

    /** The same logical values, laid out as `layout` (the step value too). */
    void CopyOf(const OptimizerTensors& other, Layout layout)
    {
        for (int i = 0; i < 5; ++i) {
            const std::vector<uint8_t> packed = other.t[i].Packed();
            MakeTensor(&t[i], other.t[i].dtype, other.t[i].shape, layout, i, &packed);
        }
        const std::vector<uint8_t> step = other.t[5].Packed();
        MakeTensor(&t[5], ACL_INT64, {1}, Layout::kContiguous, 5, &step);
    }

    void SetStep(int64_t step) { std::memcpy(t[5].data, &step, sizeof(step)); }

    std::vector<std::vector<uint8_t>> Snapshot() const
    {
        std::vector<std::vector<uint8_t>> out;
        for (const TestTensor& x : t) out.push_back(x.Storage());
        return out;
    }
};

inline aclnnStatus Phase1(const OptimizerTensors& ts, const Hyper& h, uint64_t* workspaceSize,
                          aclOpExecutor** executor)
{
    return aclnnApplyFusedEmaAdamGetWorkspaceSize(
        ts.t[0].handle, ts.t[1].handle, ts.t[2].handle, ts.t[3].handle, ts.t[4].handle,
        ts.t[5].handle, h.lr, h.emaDecay, h.beta1, h.beta2, h.eps, h.mode, h.biasCorrection,
        h.weightDecay, workspaceSize, executor);
}

/** Device memory that frees itself. */
struct Workspace {
    void* data = nullptr;
    explicit Workspace(uint64_t bytes)
    {
        if (bytes > 0 && aclrtMalloc(&data, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            std::abort();
        }
    }
    ~Workspace()
    {
        if (data != nullptr) aclrtFree(data);
    }
    Workspace(const Workspace&) = delete;
    Workspace& operator=(const Workspace&) = delete;
};

/** Both phases and a synchronisation; returns the first non-success status. */
inline int RunOnce(const OptimizerTensors& ts, const Hyper& h, aclrtStream stream)
{
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    aclnnStatus status = Phase1(ts, h, &workspaceSize, &executor);
    if (status != ACLNN_SUCCESS) return status;
    Workspace ws(workspaceSize);
    status = aclnnApplyFusedEmaAdam(ws.data, workspaceSize, executor, stream);
    if (status != ACLNN_SUCCESS) return status;
    return aclrtSynchronizeStream(stream);
}

/** main() of a program whose cases need aclInit and device 0: runs them in between. */
inline int RunCasesOnDevice(int argc, char** argv)
{
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::fprintf(stderr, "setup failed: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    const int rc = RunCases(argc, argv);
    aclrtResetDevice(0);
    aclFinalize();
    return rc;
}

/** The recent error message, or "" (clears it). */
inline std::string RecentError()
{
    const char* msg = aclGetRecentErrMsg();
    return msg != nullptr ? msg : "";
}

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_ACLNN_TEST_UTIL_H
