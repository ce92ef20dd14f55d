/**
 * @file cann_host_cases.cpp
 * @brief The runner of tools/cann_host's case table (each operator's cases in cases/<op>_cases.cpp):
 *        every case runs twice on the same inputs --
 *        through CANN's host stack (op_build's generated aclnn, opbase's executor, our tiling via
 *        gert's registry, the launch on the twin; linked into this program) and through our CPU
 *        aclnn layer (libascend_ema_adam_acl.so, dlopen'ed with RTLD_DEEPBIND so that its acl*
 *        symbols stay its own) -- and the outputs must be bit-identical; a case expected to be
 *        refused must be refused by CANN's stack with the listed code.
 *
 *   cann_host_cases <libascend_ema_adam_acl.so> [--only SUBSTRING|NAME$] [--expect CODE]
 * --expect: a self-test -- every selected case must end with CODE on CANN's stack (phase 1 or 2).
 *
 * Prints one line per case that is not as expected, the differences in refusal codes between the
 * two layers, and the summary line; exit 0 only when N = M + K.
 */
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn_aea_apply_fused_ema_adam.h"
#include "aclnn_apply_fused_ema_adam8bit_list.h"
#include "aclnn_apply_fused_ema_adam_list.h"
#include "aclnn_apply_fused_ema_adam_list_v2.h"
#include "cases/cann_host_case.h"

namespace cann_host {
namespace {

// ---- the two layers' C APIs --------------------------------------------------------------------------
struct Api {
    const char* name;
    decltype(&aclCreateTensor) createTensor;
    decltype(&aclCreateTensorList) createTensorList;
    decltype(&aclDestroyTensor) destroyTensor;
    decltype(&aclDestroyTensorList) destroyTensorList;
    decltype(&aclrtMalloc) malloc;
    decltype(&aclrtFree) free;
    decltype(&aclrtMemcpy) memcpy;
    decltype(&aclrtSynchronizeStream) sync;
    decltype(&aclnnAeaApplyFusedEmaAdamGetWorkspaceSize) single1;  // the package's op type
    decltype(&aclnnAeaApplyFusedEmaAdam) single2;
    decltype(&aclnnApplyFusedEmaAdamListGetWorkspaceSize) v1a;
    decltype(&aclnnApplyFusedEmaAdamList) v1b;
    decltype(&aclnnApplyFusedEmaAdamListV2GetWorkspaceSize) v2a;
    decltype(&aclnnApplyFusedEmaAdamListV2) v2b;
    decltype(&aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize) q8a;
    decltype(&aclnnApplyFusedEmaAdam8bitList) q8b;
    decltype(&aclSetAclOpExecutorRepeatable) repeatable;
    decltype(&aclSetDynamicInputTensorAddr) setDynamicInput;
    decltype(&aclSetInputTensorAddr) setInput;
    decltype(&aclDestroyAclOpExecutor) destroyExecutor;
    aclrtStream stream = nullptr;
};

Api CannApi()
{
    return {"CANN", &aclCreateTensor, &aclCreateTensorList, &aclDestroyTensor, &aclDestroyTensorList,
            &aclrtMalloc, &aclrtFree, &aclrtMemcpy, &aclrtSynchronizeStream,
            &aclnnAeaApplyFusedEmaAdamGetWorkspaceSize, &aclnnAeaApplyFusedEmaAdam,
            &aclnnApplyFusedEmaAdamListGetWorkspaceSize, &aclnnApplyFusedEmaAdamList,
            &aclnnApplyFusedEmaAdamListV2GetWorkspaceSize, &aclnnApplyFusedEmaAdamListV2,
            &aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize, &aclnnApplyFusedEmaAdam8bitList,
            &aclSetAclOpExecutorRepeatable, &aclSetDynamicInputTensorAddr, &aclSetInputTensorAddr,
            &aclDestroyAclOpExecutor};
}

template <class F>
void Sym(void* lib, const char* name, F& out)
{
    out = reinterpret_cast<F>(dlsym(lib, name));
    if (out == nullptr) {
        std::fprintf(stderr, "cann-host: %s missing from our CPU layer\n", name);
        std::exit(2);
    }
}

Api CpuApi(const char* path, void** libOut)
{
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (lib == nullptr) {
        std::fprintf(stderr, "cann-host: cannot load %s: %s\n", path, dlerror());
        std::exit(2);
    }
    *libOut = lib;
    Api a{};
    a.name = "CPU";
    Sym(lib, "aclCreateTensor", a.createTensor);
    Sym(lib, "aclCreateTensorList", a.createTensorList);
    Sym(lib, "aclDestroyTensor", a.destroyTensor);
    Sym(lib, "aclDestroyTensorList", a.destroyTensorList);
    Sym(lib, "aclrtMalloc", a.malloc);
    Sym(lib, "aclrtFree", a.free);
    Sym(lib, "aclrtMemcpy", a.memcpy);
    Sym(lib, "aclrtSynchronizeStream", a.sync);
    Sym(lib, "aclnnAeaApplyFusedEmaAdamGetWorkspaceSize", a.single1);
    Sym(lib, "aclnnAeaApplyFusedEmaAdam", a.single2);
    Sym(lib, "aclnnApplyFusedEmaAdamListGetWorkspaceSize", a.v1a);
    Sym(lib, "aclnnApplyFusedEmaAdamList", a.v1b);
    Sym(lib, "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize", a.v2a);
    Sym(lib, "aclnnApplyFusedEmaAdamListV2", a.v2b);
    Sym(lib, "aclnnApplyFusedEmaAdam8bitListGetWorkspaceSize", a.q8a);
    Sym(lib, "aclnnApplyFusedEmaAdam8bitList", a.q8b);
    Sym(lib, "aclSetAclOpExecutorRepeatable", a.repeatable);
    Sym(lib, "aclSetDynamicInputTensorAddr", a.setDynamicInput);
    Sym(lib, "aclSetInputTensorAddr", a.setInput);
    Sym(lib, "aclDestroyAclOpExecutor", a.destroyExecutor);
    using Init = aclError (*)(const char*);
    using SetDevice = aclError (*)(int32_t);
    using CreateStream = aclError (*)(aclrtStream*);
    Init init;
    SetDevice setDevice;
    CreateStream createStream;
    Sym(lib, "aclInit", init);
    Sym(lib, "aclrtSetDevice", setDevice);
    Sym(lib, "aclrtCreateStream", createStream);
    if (init(nullptr) != 0 || setDevice(0) != 0 || createStream(&a.stream) != 0) {
        std::fprintf(stderr, "cann-host: our CPU layer did not initialise\n");
        std::exit(2);
    }
    return a;
}

// ---- data ------------------------------------------------------------------------------------------------
size_t Bytes(int dt) { return dt == F32 ? 4 : dt == I64 ? 8 : dt == U8 ? 1 : 2; }

uint16_t ToHalf(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000U;
    int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffffU;
    if (exp <= 0) {
        return static_cast<uint16_t>(sign);  // tiny values: zero (the generator avoids them)
    }
    if (exp >= 31) {
        return static_cast<uint16_t>(sign | 0x7c00U);
    }
    uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffU;
    if (rest > 0x1000U || (rest == 0x1000U && (h & 1U))) {
        ++h;
    }
    return static_cast<uint16_t>(h);
}
uint16_t ToBf16(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    x += 0x7fffU + ((x >> 16) & 1U);
    return static_cast<uint16_t>(x >> 16);
}

/** n values of dtype dt from a seeded generator: |x| in [lo, hi), negative too when `sign`. */
std::vector<uint8_t> Values(int dt, size_t n, uint64_t seed, float lo, float hi, bool sign)
{
    std::vector<uint8_t> out(n * Bytes(dt));
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (size_t i = 0; i < n; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const float u = static_cast<float>((s >> 40) & 0xffffff) / 16777216.0f;
        float v = lo + (hi - lo) * u;
        if (sign && ((s >> 20) & 1U)) {
            v = -v;
        }
        if (dt == F32) {
            std::memcpy(&out[i * 4], &v, 4);
        } else if (dt == F16) {
            const uint16_t h = ToHalf(v);
            std::memcpy(&out[i * 2], &h, 2);
        } else {
            const uint16_t b = ToBf16(v);
            std::memcpy(&out[i * 2], &b, 2);
        }
    }
    return out;
}

/** n uint8 codes (every value 0 .. 255) from a seeded generator: the 8-bit op's moments. */
std::vector<uint8_t> Codes(size_t n, uint64_t seed)
{
    std::vector<uint8_t> out(n);
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (uint8_t& c : out) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        c = static_cast<uint8_t>(s >> 56);
    }
    return out;
}

/** The 8-bit op's maps: sorted fp32 [256] within [-1, 1], dense near 0 as bitsandbytes' dynamic
 *  maps are -- signed (((k - 127) / 128)^3, an exact 0 at code 127, 1 at 255) or unsigned
 *  ((k / 255)^2). The kernels take any sorted map; both layers get these bytes. */
std::vector<uint8_t> Map8(bool isSigned)
{
    std::vector<uint8_t> out(256 * 4);
    for (int k = 0; k < 256; ++k) {
        const float t = isSigned ? static_cast<float>(k - 127) / 128.0f : static_cast<float>(k) / 255.0f;
        const float v = isSigned ? t * t * t : t * t;
        std::memcpy(&out[4 * k], &v, 4);
    }
    return out;
}

/** Stores value v of dtype dt at element i (the special values bit-exactly). */
void Put(std::vector<uint8_t>& bytes, int dt, size_t i, float v)
{
    if (dt == F32) {
        std::memcpy(&bytes[i * 4], &v, 4);
        return;
    }
    uint16_t h = dt == F16 ? ToHalf(v) : ToBf16(v);
    if (std::isnan(v)) {
        h = dt == F16 ? 0x7e00U : 0x7fc0U;
    }
    std::memcpy(&bytes[i * 2], &h, 2);
}

/** Makes a case's gradients overflow the 16-bit results (Case::overflowing): every fifth one large
 *  enough that (1 - beta2) g^2 passes the maximum of `stateDt` when that is 16-bit, and +inf,
 *  -inf and NaN at elements 1, 2 and 3. */
void Overflow(std::vector<uint8_t>& grad, int dt, int stateDt, size_t n)
{
    const float big = stateDt == F16 ? 16000.0f : stateDt == BF16 ? 1e21f : 0.0f;
    for (size_t i = 0; big != 0.0f && i < n; i += 5) {
        Put(grad, dt, i, (i / 5) % 2 ? -big : big);
    }
    const float specials[] = {INFINITY, -INFINITY, NAN};
    for (size_t i = 1; i < n && i <= 3; ++i) {
        Put(grad, dt, i, specials[i - 1]);
    }
}

/** Saturation mode's rule on one output (dtype dt): a 16-bit inf becomes +-MAX, a NaN +0. */
void Saturate(std::vector<uint8_t>& bytes, int dt)
{
    if (dt != F16 && dt != BF16) {
        return;
    }
    const uint16_t expMask = dt == F16 ? 0x7c00U : 0x7f80U;
    const uint16_t maxBits = dt == F16 ? 0x7bffU : 0x7f7fU;
    for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
        uint16_t h;
        std::memcpy(&h, &bytes[i], 2);
        if ((h & expMask) == expMask) {
            h = (h & ~(0x8000U | expMask) & 0xffffU) != 0 ? 0 : static_cast<uint16_t>((h & 0x8000U) | maxBits);
            std::memcpy(&bytes[i], &h, 2);
        }
    }
}

/** The inf and NaN values of one output (dtype dt) if it is 16-bit. */
size_t NonFinite16(const std::vector<uint8_t>& bytes, int dt)
{
    if (dt != F16 && dt != BF16) {
        return 0;
    }
    const uint16_t expMask = dt == F16 ? 0x7c00U : 0x7f80U;
    size_t count = 0;
    for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
        uint16_t h;
        std::memcpy(&h, &bytes[i], 2);
        count += (h & expMask) == expMask;
    }
    return count;
}
struct DevBuf {
    void* p = nullptr;
    size_t bytes = 0;
    int dt = F32;
    bool written = true;  // by the kernel (false: an input compared to show it unchanged)
};

/** One layer's run of one case: status and the bytes of every output. */
struct Outcome {
    int64_t status = 0;
    std::string where;  // "phase 1" or "phase 2"
    std::vector<std::vector<uint8_t>> outputs;
    std::vector<int> dtypes;     // of each output (filled where the case ran, not sent from a child)
    std::vector<bool> written;  // by the kernel (likewise)
};

class Runner {
public:
    explicit Runner(const Api& api) : a_(api) {}
    ~Runner() { Release(); }

    Outcome Run(const Case& k)
    {
        Release();
        if (k.op == Op::k8bit) {
            return Run8(k);
        }
        const bool list = k.op != Op::kSingle;
        const size_t n = k.numels.size();
        // Inputs (host), seeded by tensor role and index: both layers get identical bytes.
        auto make = [&](int role, int dt, size_t i, float lo, float hi, bool sign) {
            return Values(dt, static_cast<size_t>(k.numels[i]), role * 1000 + i + 1, lo, hi, sign);
        };
        std::vector<aclTensor*> grads, vars, ms, vs, ss, maxVs, copies;
        for (size_t i = 0; i < n; ++i) {
            int gdt = k.c.grad, pdt = k.c.param, sdt = k.c.state;
            int64_t gn = k.numels[i];
            if (k.bad == "grad-dtype" && i == n - 1) {
                gdt = gdt == F32 ? F16 : F32;
            }
            if (k.bad == "state-dtype" && i == 0) {
                sdt = sdt == F32 ? BF16 : F32;
            }
            if (k.bad == "shape" && i == n - 1) {
                gn += 1;
            }
            if (k.bad == "int-dtype" && i == 0) {
                gdt = ACL_INT32;
            }
            const bool r2 = k.bad == "rank2" && i == 0;  // entry 0 of every list as [n/2, 2]
            std::vector<uint8_t> grad = Values(gdt == ACL_INT32 ? F32 : gdt, gn, 1000 + i, 0.01f, 1.0f, true);
            std::vector<uint8_t> var = make(2, pdt, i, 0.1f, 2.0f, true);
            if (k.overflowing) {
                Overflow(grad, gdt, sdt, static_cast<size_t>(gn));
                for (size_t j = 0; k.copies && j < static_cast<size_t>(k.numels[i]); j += 3) {
                    Put(var, pdt, j, k.c.copy == F16 ? 1e5f : 3.4e38f);  // beyond the copy's range
                }
            }
            grads.push_back(T(grad, gdt, gn, r2));
            bufs_.back().written = false;
            vars.push_back(T(var, pdt, k.numels[i], r2));
            ms.push_back(T(make(3, sdt, i, 0.0f, 0.1f, true), sdt, k.numels[i], r2));
            vs.push_back(T(make(4, sdt, i, 0.0f, 0.01f, false), sdt, k.numels[i], r2));
            if (k.ss) {
                ss.push_back(T(make(5, sdt, i, 0.1f, 2.0f, true), sdt, k.numels[i], r2));
            }
            if (k.maxVs) {
                maxVs.push_back(T(make(6, sdt, i, 0.0f, 0.02f, false), sdt, k.numels[i], r2));
            }
            if (k.copies) {
                copies.push_back(T(make(7, k.c.copy, i, 0.1f, 2.0f, true), k.c.copy, k.numels[i], r2));
            }
        }
        if (list && !k.emptyLists) {  // absent lists as placeholders, of the dtype each keys by
            for (size_t i = 0; i < n; ++i) {
                if (!k.ss) ss.push_back(T({}, k.c.state, 0));
                if (!k.maxVs) maxVs.push_back(T({}, k.c.state, 0));
                if (!k.copies) copies.push_back(T({}, k.c.param, 0));
            }
        }
        if (k.bad == "overlap" && n >= 2) {
            ms[1] = ms[0];  // one tensor as two list entries
        }
        if (k.bad == "alias-var-m") {
            ms[0] = vars[0];  // the parameter as its own first moment
        }
        const Scalars sc = MakeScalars(k);
        uint64_t ws = 0;
        aclOpExecutor* ex = nullptr;
        aclnnStatus st;
        if (!list) {
            st = a_.single1(grads[0], vars[0], ms[0], vs[0], k.ss ? ss[0] : nullptr,
                            k.bad == "null-step" ? nullptr : sc.step, k.lr, k.emaDecay, k.beta1, k.beta2, k.eps,
                            k.mode, k.biasCorrection, k.weightDecay, &ws, &ex);
        } else {
            std::vector<aclTensor*> grads257 = grads;
            aclTensorList* gl = k.bad == "null-list" ? nullptr : L(grads);
            aclTensorList* vl = L(vars);
            aclTensorList* ml = L(ms);
            aclTensorList* vsl = L(vs);
            aclTensorList* sl = L(ss);
            aclTensorList* mvl = L(maxVs);
            aclTensorList* cl = L(copies);
            if (k.op == Op::kV1) {
                st = a_.v1a(gl, vl, ml, vsl, sl, mvl, cl, sc.step, sc.gradScale, sc.foundInf, k.lr, k.emaDecay,
                            k.beta1, k.beta2, k.eps, k.mode, k.biasCorrection, k.weightDecay, k.maximize, &ws, &ex);
            } else {
                st = a_.v2a(gl, vl, ml, vsl, sl, mvl, cl, sc.step, sc.gradScale, sc.foundInf, sc.lr, sc.emaDecay,
                            k.lr, k.emaDecay, k.beta1, k.beta2, k.eps, k.mode, k.biasCorrection, k.weightDecay,
                            k.maximize, &ws, &ex);
            }
            gradList = gl;
            varList = vl;
            size_t entries = 0;
            for (const auto* v : {&grads, &vars, &ms, &vs, &ss, &maxVs, &copies}) entries += v->size();
            stepIndex = entries;  // the step's flat input index: after every list entry
        }
        stepTensor = sc.step;
        lrTensor = sc.lr;
        return Launch(k, st, ws, ex);
    }

    /** ApplyFusedEmaAdam8bitList: per entry grads, vars, ms and vs (uint8 codes), m / v absmaxes
     *  (fp32 per block of 256), ss and model copies; then the maps, step and the optional scalar
     *  tensors. Buffers 0 and 1 are grads[0] and vars[0], as Repeat expects. */
    Outcome Run8(const Case& k)
    {
        const size_t n = k.numels.size();
        std::vector<aclTensor*> grads, vars, ms, vs, mAbs, vAbs, ss, copies;
        for (size_t i = 0; i < n; ++i) {
            const int64_t numel = k.numels[i];
            int64_t blocks = (numel + 255) / 256;
            int gdt = k.c.grad;
            int64_t gn = numel;
            if (k.bad == "grad-dtype" && i == n - 1) {
                gdt = gdt == F32 ? F16 : F32;  // two dtypes in one list
            }
            if (k.bad == "shape" && i == n - 1) {
                gn += 1;
            }
            if (k.bad == "int-dtype" && i == 0) {
                gdt = ACL_INT32;
            }
            const bool r2 = k.bad == "rank2" && i == 0;  // entry 0 of the element lists as [n/2, 2]
            std::vector<uint8_t> grad = Values(gdt == ACL_INT32 ? F32 : gdt, gn, 1000 + i, 0.01f, 1.0f, true);
            std::vector<uint8_t> var = Values(k.c.param, numel, 2001 + i, 0.1f, 2.0f, true);
            if (k.overflowing) {  // +-inf and NaN gradients (the state is fp32), masters beyond the copies' range
                Overflow(grad, gdt, F32, static_cast<size_t>(gn));
                for (size_t j = 0; k.copies && j < static_cast<size_t>(numel); j += 3) {
                    Put(var, k.c.param, j, k.c.copy == F16 ? 1e5f : 3.4e38f);
                }
            }
            grads.push_back(T(grad, gdt, gn, r2));
            bufs_.back().written = false;
            vars.push_back(T(var, k.c.param, numel, r2));
            if (k.bad == "float-codes" && i == 0) {
                ms.push_back(T(Values(F32, numel, 3001 + i, 0.0f, 0.1f, true), F32, numel, r2));
            } else {
                ms.push_back(T(Codes(numel, 3001 + i), U8, numel, r2));
            }
            vs.push_back(T(Codes(numel, 4001 + i), U8, numel, r2));
            const int absDt = k.bad == "absmax-dtype" && i == 0 ? F16 : F32;
            mAbs.push_back(T(Values(absDt, blocks, 8001 + i, 0.01f, 0.1f, false), absDt, blocks));
            if (k.bad == "absmax-shape" && i == n - 1) {
                blocks += 1;
            }
            vAbs.push_back(T(Values(F32, blocks, 9001 + i, 1e-4f, 1e-2f, false), F32, blocks));
            if (k.ss && !(k.bad == "ss-short" && i == n - 1)) {
                const int sdt = k.bad == "ss-dtype" && i == 0 ? BF16 : F32;
                ss.push_back(T(Values(sdt, numel, 5001 + i, 0.1f, 2.0f, true), sdt, numel, r2));
            }
            if (k.copies) {
                copies.push_back(T(Values(k.c.copy, numel, 7001 + i, 0.1f, 2.0f, true), k.c.copy, numel, r2));
            }
        }
        if (!k.emptyLists) {  // absent lists as placeholders: ss fp32, model copies the parameters' dtype
            for (size_t i = 0; i < n; ++i) {
                if (!k.ss) ss.push_back(T({}, F32, 0));
                if (!k.copies) copies.push_back(T({}, k.c.param, 0));
            }
        }
        const int mapDt = k.bad == "map-dtype" ? F16 : F32;
        std::vector<uint8_t> mapM = Map8(true);
        if (k.bad == "map-shape") {
            mapM.resize(255 * 4);
        }
        if (mapDt == F16) {
            mapM.resize(256 * 2);
        }
        aclTensor* qmapM = T(mapM, mapDt, static_cast<int64_t>(mapM.size() / Bytes(mapDt)));
        bufs_.back().written = false;
        aclTensor* qmapV = T(Map8(false), F32, 256);
        bufs_.back().written = false;
        const Scalars sc = MakeScalars(k);
        aclTensorList* gl = k.bad == "null-list" ? nullptr : L(grads);
        aclTensorList* vl = L(vars);
        uint64_t ws = 0;
        aclOpExecutor* ex = nullptr;
        const aclnnStatus st = a_.q8a(gl, vl, L(ms), L(vs), L(mAbs), L(vAbs), L(ss), L(copies), qmapM, qmapV,
                                      sc.step, sc.gradScale, sc.foundInf, sc.lr, sc.emaDecay, k.lr, k.emaDecay,
                                      k.beta1, k.beta2, k.eps, k.mode, k.biasCorrection, k.weightDecay, k.maximize,
                                      &ws, &ex);
        gradList = gl;
        varList = vl;
        size_t entries = 0;
        for (const auto* v : {&grads, &vars, &ms, &vs, &mAbs, &vAbs, &ss, &copies}) entries += v->size();
        stepIndex = entries + 2;  // the step's flat input index: after every list entry and the two maps
        stepTensor = sc.step;
        lrTensor = sc.lr;
        return Launch(k, st, ws, ex);
    }

    /** A launch's single tensors after the lists, as the case gives them (null: absent). */
    struct Scalars {
        aclTensor* step;
        aclTensor* gradScale;
        aclTensor* foundInf;
        aclTensor* lr;
        aclTensor* emaDecay;
    };

    /** The step (int64 [1]; "step-dtype": fp32, "step-shape": [1, 2]), an input, not an output to
     *  compare (it may move); then the fp32 scalar tensors the case gives. */
    Scalars MakeScalars(const Case& k)
    {
        const int stepDt = k.bad == "step-dtype" ? F32 : I64;
        std::vector<uint8_t> stepBytes(8);
        if (stepDt == I64) {
            std::memcpy(stepBytes.data(), &k.step, 8);
        } else {
            const float f = static_cast<float>(k.step);
            std::memcpy(stepBytes.data(), &f, 4);
            stepBytes.resize(4);
        }
        if (k.bad == "step-shape") {
            stepBytes.resize(16, 0);  // [1, 2]
        }
        Scalars out{};
        out.step = T(stepBytes, stepDt, k.bad == "step-shape" ? 2 : 1, k.bad == "step-shape",
                     /*compared=*/false);
        auto scalar = [&](float v) {
            std::vector<uint8_t> b(4);
            std::memcpy(b.data(), &v, 4);
            return T(b, F32, 1);
        };
        out.gradScale = k.gradScale ? scalar(1024.0f) : nullptr;
        out.foundInf = k.foundInf ? scalar(k.foundInfValue) : nullptr;
        out.lr = k.lrTensor ? scalar(2e-3f) : nullptr;
        out.emaDecay = k.emaDecayTensor ? scalar(0.99f) : nullptr;
        return out;
    }

    /** The tensor list of `v` (released with the case's other lists). */
    aclTensorList* L(std::vector<aclTensor*>& v)
    {
        static aclTensor* none = nullptr;
        aclTensorList* l = a_.createTensorList(v.empty() ? &none : v.data(), v.size());
        lists_.push_back(l);
        return l;
    }

    /** Phase 1's status `st`; then the workspace, phase 2 (and the repeats) and the outputs. */
    Outcome Launch(const Case& k, aclnnStatus st, uint64_t ws, aclOpExecutor* ex)
    {
        Outcome o;
        if (st != 0) {
            o.status = st;
            o.where = "phase 1";
            return o;
        }
        void* wsp = nullptr;
        if (ws > 0 && a_.malloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST) != 0) {
            o.status = -2;
            o.where = "workspace";
            return o;
        }
        if (k.repeats > 0 && (st = a_.repeatable(ex)) != 0) {
            o.status = st;
            o.where = "aclSetAclOpExecutorRepeatable";
            return o;
        }
        const auto phase2 = [&] {
            aclnnStatus s2 = k.op == Op::kSingle ? a_.single2(wsp, ws, ex, a_.stream)
                             : k.op == Op::kV1  ? a_.v1b(wsp, ws, ex, a_.stream)
                             : k.op == Op::kV2  ? a_.v2b(wsp, ws, ex, a_.stream)
                                                : a_.q8b(wsp, ws, ex, a_.stream);
            return s2 == 0 ? static_cast<aclnnStatus>(a_.sync(a_.stream)) : s2;
        };
        st = phase2();
        for (int r = 1; r <= k.repeats && st == 0; ++r) {
            st = Repeat(k, r, ex);
            o.where = "address update";
            if (st == 0) {
                st = phase2();
                o.where.clear();
            }
        }
        if (k.repeats > 0) {
            a_.destroyExecutor(ex);
        }
        if (wsp != nullptr) {
            a_.free(wsp);
        }
        if (st != 0) {
            o.status = st;
            if (o.where.empty()) o.where = "phase 2";
            return o;
        }
        // Outputs: every in-place tensor, in creation order (inputs unchanged are compared too).
        for (const DevBuf& b : bufs_) {
            std::vector<uint8_t> host(b.bytes);
            a_.memcpy(host.data(), b.bytes, b.p, b.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
            o.outputs.push_back(std::move(host));
            o.dtypes.push_back(b.dt);
            o.written.push_back(b.written);
        }
        return o;
    }

private:
    /** Device memory holding `host`, freed with the case; `compared`: an output, read back and
     *  compared after the call (in creation order), else an input only. */
    void* Upload(const std::vector<uint8_t>& host, bool compared, int dt)
    {
        void* p = nullptr;
        if (a_.malloc(&p, host.empty() ? 1 : host.size(), ACL_MEM_MALLOC_HUGE_FIRST) != 0) {
            std::fprintf(stderr, "cann-host: %s aclrtMalloc failed\n", a_.name);
            std::exit(2);
        }
        if (!host.empty()) {
            a_.memcpy(p, host.size(), host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE);
        }
        if (compared) {
            bufs_.push_back({p, host.size(), dt});
        } else {
            extra_.push_back(p);
        }
        return p;
    }

    /** Repeat r of a repeatable case: new gradients, vars entry 0 moved, a new step tensor. */
    aclnnStatus Repeat(const Case& k, int r, aclOpExecutor* ex)
    {
        for (size_t i = 0; i < k.numels.size(); ++i) {
            void* p = Upload(Values(k.c.grad, static_cast<size_t>(k.numels[i]), 5000 + 100 * r + i, 0.01f, 1.0f,
                                    true), false, k.c.grad);
            if (aclnnStatus s = a_.setDynamicInput(ex, 0, i, gradList, p)) return s;
        }
        // vars entry 0 (buffer 1 of the case: grads[0], vars[0], ...) to new memory with its contents
        DevBuf& var0 = bufs_[1];
        std::vector<uint8_t> contents(var0.bytes);
        a_.memcpy(contents.data(), contents.size(), var0.p, var0.bytes, ACL_MEMCPY_DEVICE_TO_HOST);
        void* moved = Upload(contents, true, var0.dt);  // an output now: compared after the others
        if (aclnnStatus s = a_.setDynamicInput(ex, 1, 0, varList, moved)) return s;
        const int64_t step = k.step + r;
        std::vector<uint8_t> stepBytes(8);
        std::memcpy(stepBytes.data(), &step, 8);
        if (aclnnStatus s = a_.setInput(ex, stepIndex, stepTensor, Upload(stepBytes, false, I64))) return s;
        if (!k.moveLr) return 0;
        // lr_tensor at its slot: step, grad scale, found_inf, lr -- each one-element input has
        // its slot whether given or not (opbase's NnopbaseAddInput)
        const float lr = 1e-3f * static_cast<float>(r + 1);
        std::vector<uint8_t> lrBytes(4);
        std::memcpy(lrBytes.data(), &lr, 4);
        return a_.setInput(ex, stepIndex + 3, lrTensor, Upload(lrBytes, false, F32));
    }

    aclTensor* T(const std::vector<uint8_t>& host, int dt, int64_t numel, bool twoDims = false,
                 bool compared = true)
    {
        void* p = Upload(host, compared, dt);
        std::vector<int64_t> shape = twoDims ? std::vector<int64_t>{numel / 2, 2} : std::vector<int64_t>{numel};
        std::vector<int64_t> strides = twoDims ? std::vector<int64_t>{2, 1} : std::vector<int64_t>{1};
        aclTensor* t = a_.createTensor(shape.data(), shape.size(), static_cast<aclDataType>(dt), strides.data(), 0,
                                       ACL_FORMAT_ND, shape.data(), shape.size(), p);
        tensors_.push_back(t);
        return t;
    }

    void Release()
    {
        for (aclTensorList* l : lists_) {
            if (l != nullptr) {
                a_.destroyTensorList(l);  // destroys its tensors too
            }
        }
        lists_.clear();
        tensors_.clear();  // owned by the lists or leaked (a handful of bytes per case)
        for (DevBuf& b : bufs_) {
            a_.free(b.p);
        }
        bufs_.clear();
        for (void* p : extra_) {
            a_.free(p);
        }
        extra_.clear();
    }

    const Api& a_;
    std::vector<DevBuf> bufs_;
    std::vector<aclTensor*> tensors_;
    std::vector<aclTensorList*> lists_;
    std::vector<void*> extra_;  // device memory of repeats, not compared
    aclTensorList* gradList = nullptr;
    aclTensorList* varList = nullptr;
    aclTensor* stepTensor = nullptr;
    aclTensor* lrTensor = nullptr;
    size_t stepIndex = 0;
};
void WriteAll(int fd, const void* p, size_t n)
{
    const auto* c = static_cast<const char*>(p);
    while (n > 0) {
        const ssize_t w = write(fd, c, n);
        if (w <= 0) {
            _exit(3);
        }
        c += w;
        n -= static_cast<size_t>(w);
    }
}
bool ReadAll(int fd, void* p, size_t n)
{
    auto* c = static_cast<char*>(p);
    while (n > 0) {
        const ssize_t r = read(fd, c, n);
        if (r <= 0) {
            return false;
        }
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

/** The cases a case runs after, oldest first, on the same layer. */
void RunBefore(Runner& runner, const Case& k)
{
    if (k.before) {
        RunBefore(runner, *k.before);
        (void)runner.Run(*k.before);
    }
}

/** Runs a case (after its `before`) on CANN's stack in a child process: a kernel fault on the
 *  twin aborts the process as it would kill the device context, and must not end the table. */
Outcome RunIsolated(Runner& runner, const Case& k)
{
    int fds[2];
    if (pipe(fds) != 0) {
        std::perror("pipe");
        std::exit(2);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (k.saturation) {
            aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION);
        }
        RunBefore(runner, k);
        const Outcome x = runner.Run(k);
        const int64_t head[2] = {x.status, static_cast<int64_t>(x.outputs.size())};
        WriteAll(fds[1], head, sizeof(head));
        const uint64_t wl = x.where.size();
        WriteAll(fds[1], &wl, sizeof(wl));
        WriteAll(fds[1], x.where.data(), wl);
        for (const auto& o : x.outputs) {
            const uint64_t n = o.size();
            WriteAll(fds[1], &n, sizeof(n));
            WriteAll(fds[1], o.data(), n);
        }
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    Outcome x;
    int64_t head[2];
    bool ok = ReadAll(fds[0], head, sizeof(head));
    if (ok) {
        x.status = head[0];
        uint64_t wl = 0;
        ok = ReadAll(fds[0], &wl, sizeof(wl));
        x.where.resize(ok ? wl : 0);
        ok = ok && ReadAll(fds[0], x.where.data(), wl);
        for (int64_t i = 0; ok && i < head[1]; ++i) {
            uint64_t n = 0;
            ok = ReadAll(fds[0], &n, sizeof(n));
            std::vector<uint8_t> o(ok ? n : 0);
            ok = ok && ReadAll(fds[0], o.data(), n);
            x.outputs.push_back(std::move(o));
        }
    }
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!ok) {
        x = Outcome{};
        x.status = -3;
        x.where = WIFSIGNALED(st) ? std::string("kernel fault: signal ") + std::to_string(WTERMSIG(st))
                                  : "child exit " + std::to_string(WEXITSTATUS(st));
    }
    return x;
}

bool Same(const Outcome& a, const Outcome& b)
{
    return a.status == 0 && b.status == 0 && a.outputs == b.outputs;
}

bool Selected(const std::string& name, const std::string& only)
{
    if (!only.empty() && only.back() == '$') {
        return name == only.substr(0, only.size() - 1);
    }
    return name.find(only) != std::string::npos;
}

}  // namespace
}  // namespace cann_host

int main(int argc, char** argv)
{
    using namespace cann_host;
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <libascend_ema_adam_acl.so> [--only NAME] [--selftest KIND]\n", argv[0]);
        return 2;
    }
    std::string only;
    int64_t expect = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--only") == 0) {
            only = argv[i + 1];
        } else if (std::strcmp(argv[i], "--expect") == 0) {
            expect = std::strtoll(argv[i + 1], nullptr, 10);
        }
    }
    void* lib = nullptr;
    Api cpu = CpuApi(argv[1], &lib);
    Api cann = CannApi();
    if (aclInit(nullptr) != 0 || aclrtSetDevice(0) != 0 || aclrtCreateStream(&cann.stream) != 0) {
        std::fprintf(stderr, "cann-host: the stand-in runtime did not initialise\n");
        return 2;
    }
    Runner cannRun(cann), cpuRun(cpu);
    {
        // opbase's one-time initialisation (collector, binary configs, tiling library) in the
        // parent, so that every forked case starts from the same state.
        Case warm;
        warm.op = Op::kSingle;
        warm.numels = {8};
        (void)cannRun.Run(warm);
    }

    std::vector<Case> cases;
    for (const auto& table : {ApplyFusedEmaAdamCases, ApplyFusedEmaAdamListCases, ApplyFusedEmaAdam8bitListCases}) {
        for (Case& k : table()) {
            cases.push_back(k);
        }
    }
    for (Case& k : cases) {
        if (k.before && k.emptyLists) {
            k.defect = "D2";
        }
    }
    if (expect != 0) {
        int matched = 0, bad = 0;
        std::string where;
        for (const Case& k : cases) {
            if (!Selected(k.name, only)) {
                continue;
            }
            ++matched;
            const Outcome x = RunIsolated(cannRun, k);
            where = x.where;
            if (x.status != expect) {
                ++bad;
                std::printf("cann-host: %s: CANN %" PRId64 " (%s), expected %" PRId64 "\n", k.name.c_str(), x.status,
                            x.where.c_str(), expect);
            }
        }
        if (matched == 0 || bad != 0) {
            return 1;
        }
        std::printf("cann-host: selftest ok: %s ends with %" PRId64 " in %s\n", only.c_str(), expect, where.c_str());
        return 0;
    }
    int n = 0, identical = 0, refused = 0, failed = 0;
    std::map<std::string, int> defects;
    int differences = 0;
    for (const Case& k : cases) {
        if (!only.empty() && !Selected(k.name, only)) {
            continue;
        }
        const Outcome x = RunIsolated(cannRun, k);
        RunBefore(cpuRun, k);
        Outcome y = cpuRun.Run(k);
        if (k.overflowing) {
            // The case must overflow: the CPU layer (IEEE) has 16-bit infs or NaNs, which saturation
            // mode on CANN's side turns into +-MAX and 0.
            size_t nonFinite = 0;
            for (size_t b = 0; b < y.outputs.size(); ++b) {
                nonFinite += NonFinite16(y.outputs[b], y.dtypes[b]);
                if (k.saturation && y.written[b]) {
                    Saturate(y.outputs[b], y.dtypes[b]);
                }
            }
            if (nonFinite == 0) {
                ++n;
                ++failed;
                std::printf("cann-host: FAIL %s: no 16-bit output overflows\n", k.name.c_str());
                continue;
            }
        }
        const bool verbose = std::getenv("CANN_HOST_VERBOSE") != nullptr;
        if (!k.difference.empty()) {
            // One layer runs it, the other refuses it: shown, not counted.
            if (k.cannRefuses && x.status == k.expected && y.status == 0) {
                ++differences;
                std::printf("cann-host: difference %s: CANN refuses (%" PRId64 "), our CPU layer runs it: %s\n",
                            k.name.c_str(), x.status, k.difference.c_str());
            } else if (!k.cannRefuses && x.status == 0 && y.status != 0) {
                ++differences;
                std::printf("cann-host: difference %s: CANN runs it, our CPU layer refuses (%" PRId64 "): %s\n",
                            k.name.c_str(), y.status, k.difference.c_str());
            } else {
                ++n;
                ++failed;
                std::printf("cann-host: FAIL %s: expected the documented difference; CANN %" PRId64
                            " (%s), CPU %" PRId64 "\n", k.name.c_str(), x.status, x.where.c_str(), y.status);
            }
            continue;
        }
        if (!k.defect.empty() && !Same(x, y)) {
            // The defect shows as documented: a fault, a refusal or different outputs on CANN's side.
            ++defects[k.defect];
            if (verbose) {
                std::printf("cann-host: %s %s: CANN %" PRId64 " (%s), CPU %" PRId64 "\n", k.defect.c_str(),
                            k.name.c_str(), x.status, x.where.c_str(), y.status);
            }
            continue;
        }
        ++n;
        if (k.expected == 0) {
            if (Same(x, y)) {
                ++identical;
            } else {
                ++failed;
                if (x.status != 0 || y.status != 0) {
                    std::printf("cann-host: FAIL %s: CANN %" PRId64 " (%s), CPU %" PRId64 " (%s)\n", k.name.c_str(),
                                x.status, x.where.c_str(), y.status, y.where.c_str());
                } else {
                    size_t which = 0;
                    while (which < x.outputs.size() && x.outputs[which] == y.outputs[which]) {
                        ++which;
                    }
                    std::printf("cann-host: FAIL %s: outputs differ (buffer %zu)\n", k.name.c_str(), which);
                }
            }
        } else {
            const bool ok = x.status != 0 && x.where == "phase 1" && (k.expected < 0 || x.status == k.expected);
            if (ok && y.status != 0) {
                ++refused;
                if (x.status != y.status || verbose) {
                    std::printf("cann-host: refused %s: CANN %" PRId64 ", our CPU layer %" PRId64 "\n", k.name.c_str(),
                                x.status, y.status);
                }
            } else {
                ++failed;
                std::printf("cann-host: FAIL %s: expected refusal %" PRId64 ", CANN %" PRId64 " (%s), CPU %" PRId64
                            " (%s)\n",
                            k.name.c_str(), k.expected, x.status, x.where.c_str(), y.status, y.where.c_str());
            }
        }
        std::fflush(stdout);
    }
    int expectedFailures = 0;
    std::string defectList;
    for (const auto& [d, count] : defects) {
        expectedFailures += count;
        defectList += (defectList.empty() ? "" : ", ") + d + " " + std::to_string(count);
    }
    if (expectedFailures > 0 || differences > 0) {
        std::printf("cann-host: not counted: %d expected failures from opbase defects (%s; docs/ACLNN.md), %d "
                    "documented differences\n",
                    expectedFailures, defectList.empty() ? "none" : defectList.c_str(), differences);
    }
    std::printf("cann-host: %d cases through CANN's generated aclnn and opbase, %d bit-identical, %d refused as "
                "expected\n",
                n, identical, refused);
    return (failed == 0 && n == identical + refused) ? 0 : 1;
}
