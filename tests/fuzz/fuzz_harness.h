/**
 * @file fuzz_harness.h
 * @brief The libFuzzer targets' shared part (tests/fuzz/README.md): tensors drawn from the input,
 *        the harness's own model of which calls the C API must refuse, and the oracle.
 *
 * A target decodes its input into one whole call: a valid call drawn from the operator's contract
 * (dtype rows, shapes, strided and offset views, placeholders, attributes), then mutations that
 * each break one documented rule (a null, a dtype, a shape, a format, a stride of 0, storage
 * shared with another tensor, an attribute out of range, a step of any value). The model knows
 * what it broke; the memory rules it computes itself from the views' byte spans. The oracle:
 *   - a call the model refuses is refused with the documented class of status (161001 for a null,
 *     161002 otherwise), a message naming phase 1, both out-arguments unwritten and every byte of
 *     every tensor's storage unchanged;
 *   - a call the model accepts succeeds, and after each phase 2 every updated view equals the same
 *     call run on contiguous copies by the AscendC kernel on the twin (ASCEND_EMA_ADAM_CPU_KERNEL=
 *     twin; the native kernels run the fuzzed call), bit for bit (any NaN equals any NaN), while
 *     bytes outside the updated views are unchanged;
 *   - executors: a single-use one refuses a second phase 2 touching nothing; a repeatable one runs
 *     2 or 3 times with gradients rewritten or moved to new memory in between (the reference's
 *     copies rewritten where they are: no address update of its own to go stale with the fuzzed
 *     one's); one destroyed unrun writes nothing; a phase 2 with a short workspace is refused and
 *     does not consume the executor.
 * A finding prints what broke and aborts (libFuzzer saves the input).
 */
#ifndef ASCEND_EMA_ADAM_FUZZ_HARNESS_H
#define ASCEND_EMA_ADAM_FUZZ_HARNESS_H

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnn/opdev/op_errno.h"

namespace aea_fuzz {

[[noreturn]] inline void Finding(const char* format, ...)
{
    va_list args;
    va_start(args, format);
    std::fprintf(stderr, "fuzz finding: ");
    std::vfprintf(stderr, format, args);
    std::fprintf(stderr, "\n");
    va_end(args);
    std::abort();
}

inline size_t ElemBytes(aclDataType dtype)
{
    switch (dtype) {
        case ACL_INT64:
        case ACL_DOUBLE:
        case ACL_UINT64:
            return 8;
        case ACL_FLOAT16:
        case ACL_BF16:
        case ACL_INT16:
            return 2;
        case ACL_UINT8:
        case ACL_INT8:
        case ACL_BOOL:
            return 1;
        default:
            return 4;
    }
}

/** What a tensor holds: the range its random values are drawn from. */
enum class Role { kGrad, kParam, kMoment, kSecondMoment, kCopy, kCode, kAbsmax, kScalar };

/** A view over storage the harness owns (or over another tensor's storage: an alias). */
struct Tensor {
    aclDataType dtype = ACL_FLOAT;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;        // elements
    int64_t storageElems = 0;  // what aclCreateTensor is told the storage holds
    uint8_t* base = nullptr;   // the storage's first byte
    bool updated = false;
    aclFormat format = ACL_FORMAT_ND;
    bool nullData = false;  // created with a null data address

    int64_t Numel() const
    {
        int64_t n = 1;
        for (int64_t s : sizes) n *= s;
        return n;
    }
    /** Byte offsets from base of the view's elements, row-major. */
    std::vector<size_t> ElementOffsets() const
    {
        std::vector<size_t> out;
        const int64_t n = Numel();
        if (n <= 0) return out;
        out.reserve(static_cast<size_t>(n));
        std::vector<int64_t> index(sizes.size(), 0);
        for (int64_t k = 0; k < n; ++k) {
            int64_t at = offset;
            for (size_t d = 0; d < sizes.size(); ++d) at += index[d] * strides[d];
            out.push_back(static_cast<size_t>(at) * ElemBytes(dtype));
            for (size_t d = sizes.size(); d-- > 0;) {
                if (++index[d] < sizes[d]) break;
                index[d] = 0;
            }
        }
        return out;
    }
    /** [begin, end) bytes of the view; empty for no elements (the runtime's span, by the model). */
    std::pair<uintptr_t, uintptr_t> Span() const
    {
        if (Numel() == 0 || base == nullptr || nullData) return {0, 0};
        int64_t last = offset;
        for (size_t d = 0; d < sizes.size(); ++d) last += (sizes[d] - 1) * strides[d];
        const uintptr_t b = reinterpret_cast<uintptr_t>(base);
        return {b + static_cast<uintptr_t>(offset) * ElemBytes(dtype),
                b + static_cast<uintptr_t>(last + 1) * ElemBytes(dtype)};
    }
    bool RepeatsElements() const
    {
        if (Numel() == 0) return false;
        for (size_t d = 0; d < sizes.size(); ++d) {
            if (sizes[d] > 1 && strides[d] == 0) return true;
        }
        return false;
    }
};

/** One storage allocation (aclrtMalloc), freed with the call. */
struct Storage {
    uint8_t* data = nullptr;
    size_t bytes = 0;
};

/** Random values of a role in a dtype, as bit patterns (no conversion code to get wrong). */
class Values {
public:
    explicit Values(uint64_t seed, bool specials) : rng_(seed), specials_(specials) {}

    void Fill(aclDataType dtype, Role role, uint8_t* out, size_t elems)
    {
        const size_t eb = ElemBytes(dtype);
        for (size_t i = 0; i < elems; ++i) Store(dtype, role, out + i * eb);
    }

private:
    void Store(aclDataType dtype, Role role, uint8_t* out)
    {
        if (dtype == ACL_UINT8 || dtype == ACL_INT8 || dtype == ACL_BOOL) {
            out[0] = static_cast<uint8_t>(rng_());
            return;
        }
        if (dtype == ACL_INT64) {
            const int64_t v = static_cast<int64_t>(rng_() % 2000) - 5;
            std::memcpy(out, &v, 8);
            return;
        }
        // sign, exponent (unbiased) and mantissa bits by role
        int lo = -4, hi = 2;
        bool positive = false;
        switch (role) {
            case Role::kGrad:
                lo = -8;
                hi = 3;
                break;
            case Role::kMoment:
                lo = -10;
                hi = -2;
                break;
            case Role::kSecondMoment:
                lo = -14;
                hi = -6;
                positive = true;
                break;
            case Role::kAbsmax:
                lo = -8;
                hi = 1;
                positive = true;
                break;
            case Role::kScalar:
                lo = -3;
                hi = 3;
                positive = true;
                break;
            default:
                break;
        }
        const bool special = specials_ && role == Role::kGrad && rng_() % 16 == 0;
        const uint32_t sign = positive ? 0 : static_cast<uint32_t>(rng_() & 1);
        const int e = lo + static_cast<int>(rng_() % static_cast<uint64_t>(hi - lo + 1));
        const uint64_t mant = rng_();
        if (dtype == ACL_FLOAT16) {
            uint16_t h = static_cast<uint16_t>(
                (sign << 15) | (uint32_t(std::clamp(e + 15, 1, 30)) << 10) | (mant & 0x3FF));
            if (special) h = kHalfSpecials[mant % 4] | static_cast<uint16_t>(sign << 15);
            std::memcpy(out, &h, 2);
        } else if (dtype == ACL_BF16) {
            uint16_t b =
                static_cast<uint16_t>((sign << 15) | (uint32_t(e + 127) << 7) | (mant & 0x7F));
            if (special) b = kBf16Specials[mant % 4] | static_cast<uint16_t>(sign << 15);
            std::memcpy(out, &b, 2);
        } else if (dtype == ACL_DOUBLE) {
            const double x = std::ldexp(1.0 + double(mant % 1000) / 1000.0, e) * (sign ? -1 : 1);
            std::memcpy(out, &x, 8);
        } else {
            uint32_t f = (sign << 31) | (uint32_t(e + 127) << 23) | (mant & 0x7FFFFF);
            if (special) f = kFloatSpecials[mant % 4] | (sign << 31);
            std::memcpy(out, &f, 4);
        }
    }

    // NaN, inf, the largest finite value, a subnormal
    static constexpr uint16_t kHalfSpecials[4] = {0x7E00, 0x7C00, 0x7BFF, 0x0003};
    static constexpr uint16_t kBf16Specials[4] = {0x7FC0, 0x7F80, 0x7F7F, 0x0003};
    static constexpr uint32_t kFloatSpecials[4] = {0x7FC00000U, 0x7F800000U, 0x7F7FFFFFU,
                                                   0x00000003U};

    std::mt19937_64 rng_;
    bool specials_;
};

/** The operators' attributes (the single op has no maximize). */
struct Attrs {
    double lr = 1e-3, emaDecay = 0.999, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01;
    int64_t mode = 1;
    bool biasCorrection = true;
    bool maximize = false;
};

/** The documented attribute rules (docs/ACLNN.md, "Validation"), on the fp32 value. */
inline bool AttrsValid(const Attrs& a)
{
    const auto finite = [](double x) { return std::isfinite(static_cast<float>(x)); };
    const auto f = [](double x) { return static_cast<float>(x); };
    if (a.mode != 0 && a.mode != 1) return false;
    for (double x : {a.lr, a.emaDecay, a.beta1, a.beta2, a.eps, a.weightDecay}) {
        if (!finite(x)) return false;
    }
    return f(a.beta1) >= 0 && f(a.beta1) < 1 && f(a.beta2) >= 0 && f(a.beta2) < 1 &&
           f(a.emaDecay) >= 0 && f(a.emaDecay) <= 1 && f(a.eps) >= 0;
}

/** An attribute's value at or beyond its range's edges: NaN, infinities, boundaries, raw bits. */
inline double DrawAttr(FuzzedDataProvider& in, double typical)
{
    static constexpr double kEdges[] = {0.0,  -0.0,   1.0,   -1.0,  0.9999999999, 1.0000001, 1e-45,
                                        1e38, 3.5e38, 1e300, -1e-8, 2.0,          0.5};
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
        case 0:
            return kEdges[in.ConsumeIntegralInRange<size_t>(0, std::size(kEdges) - 1)];
        case 1:
            return std::nan("");
        case 2:
            return in.ConsumeBool() ? INFINITY : -INFINITY;
        case 3: {
            const uint64_t bits = in.ConsumeIntegral<uint64_t>();
            double x = 0;
            std::memcpy(&x, &bits, 8);
            return x;
        }
        default:
            return -typical;
    }
}

/** Attributes in range, or (one draw in eight) one of them anything DrawAttr gives. */
inline Attrs DrawAttrs(FuzzedDataProvider& in)
{
    Attrs a;
    a.lr = in.ConsumeFloatingPointInRange<double>(-1e-3, 0.1);  // a negative lr is accepted
    a.emaDecay = in.ConsumeFloatingPointInRange<double>(0.0, 1.0);
    a.beta1 = in.ConsumeFloatingPointInRange<double>(0.0, 0.99);
    a.beta2 = in.ConsumeFloatingPointInRange<double>(0.0, 0.9999);
    a.eps = in.ConsumeFloatingPointInRange<double>(0.0, 1e-3);
    a.weightDecay = in.ConsumeFloatingPointInRange<double>(-0.1, 0.1);
    a.mode = in.ConsumeIntegralInRange<int64_t>(0, 1);
    a.biasCorrection = in.ConsumeBool();
    a.maximize = in.ConsumeBool();
    if (in.ConsumeIntegralInRange<int>(0, 7) == 7) {
        double* const fields[] = {&a.lr, &a.emaDecay, &a.beta1, &a.beta2, &a.eps, &a.weightDecay};
        const size_t which = in.ConsumeIntegralInRange<size_t>(0, std::size(fields));
        if (which == std::size(fields)) {
            a.mode = in.ConsumeIntegral<int64_t>();
        } else {
            *fields[which] = DrawAttr(in, *fields[which]);
        }
    }
    return a;
}

/** What the harness expects of phase 1. */
struct Expect {
    bool nullRefusal = false;     // a null was passed: 161001
    bool invalidRefusal = false;  // another rule broken: 161002
    std::string why;              // what the harness broke, for a finding's message

    void Null(const std::string& what)
    {
        nullRefusal = true;
        why += what + "; ";
    }
    void Invalid(const std::string& what)
    {
        invalidRefusal = true;
        why += what + "; ";
    }
    bool Refused() const { return nullRefusal || invalidRefusal; }
};

/** Every tensor of one call, the storage behind them and their handles. */
class Call {
public:
    Call() = default;
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call()
    {
        for (aclTensorList* list : lists_) aclDestroyTensorList(list);
        for (aclTensor* t : loose_) aclDestroyTensor(t);
        for (const Storage& s : storages_) aclrtFree(s.data);
        for (void* w : workspaces_) aclrtFree(w);
    }

    /** Memory for a workspace: not a tensor's storage, so neither snapshotted nor compared. */
    void* Workspace(uint64_t bytes)
    {
        void* w = nullptr;
        if (bytes > 0 &&
            aclrtMalloc(&w, static_cast<size_t>(bytes), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            Finding("aclrtMalloc(%llu) failed", static_cast<unsigned long long>(bytes));
        }
        if (w != nullptr) workspaces_.push_back(w);
        return w;
    }

    uint8_t* Allocate(size_t bytes)
    {
        Storage s;
        s.bytes = bytes;
        if (bytes > 0 && aclrtMalloc(reinterpret_cast<void**>(&s.data), bytes,
                                     ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            Finding("aclrtMalloc(%zu) failed: %s", bytes, aclGetRecentErrMsg());
        }
        if (bytes > 0) byStart_[reinterpret_cast<uintptr_t>(s.data)] = storages_.size();
        storages_.push_back(s);
        return s.data;
    }

    /** A tensor of `sizes` with its own storage: contiguous, permuted and padded, or offset. */
    Tensor* Make(FuzzedDataProvider& in, Values& values, aclDataType dtype,
                 const std::vector<int64_t>& sizes, Role role, bool updated)
    {
        auto t = std::make_unique<Tensor>();
        t->dtype = dtype;
        t->sizes = sizes;
        t->updated = updated;
        const size_t rank = sizes.size();
        std::vector<size_t> order(rank);  // dims from innermost to outermost in storage
        for (size_t d = 0; d < rank; ++d) order[d] = rank - 1 - d;
        int64_t pad = 0;
        if (in.ConsumeIntegralInRange<int>(0, 3) == 3) {  // strided: permuted dims, padded rows
            for (size_t d = rank; d > 1; --d) {
                std::swap(order[d - 1], order[in.ConsumeIntegralInRange<size_t>(0, d - 1)]);
            }
            pad = in.ConsumeIntegralInRange<int64_t>(0, 3);
            t->offset = in.ConsumeIntegralInRange<int64_t>(0, 7);
        }
        t->strides.assign(rank, 1);
        int64_t next = in.ConsumeIntegralInRange<int>(0, 7) == 7 ? 2 : 1;  // every other element
        for (size_t k = 0; k < rank; ++k) {
            t->strides[order[k]] = next;
            next = next * sizes[order[k]] + (k == 0 ? 0 : pad);
        }
        int64_t last = t->offset;
        for (size_t d = 0; d < rank; ++d) last += (sizes[d] - 1) * t->strides[d];
        t->storageElems = t->Numel() == 0 ? 0 : last + 1 + in.ConsumeIntegralInRange<int64_t>(0, 2);
        t->base = Allocate(static_cast<size_t>(t->storageElems) * ElemBytes(dtype));
        values.Fill(dtype, role, t->base, static_cast<size_t>(t->storageElems));
        tensors_.push_back(std::move(t));
        return tensors_.back().get();
    }

    /** A contiguous tensor holding t's view's values (the reference's copy). */
    Tensor* ContiguousCopy(const Tensor& t)
    {
        auto c = std::make_unique<Tensor>();
        c->dtype = t.dtype;
        c->sizes = t.sizes;
        c->updated = t.updated;
        c->strides.assign(t.sizes.size(), 1);
        for (size_t d = t.sizes.size(); d-- > 1;) c->strides[d - 1] = c->strides[d] * t.sizes[d];
        c->storageElems = t.Numel();
        c->base = Allocate(static_cast<size_t>(c->storageElems) * ElemBytes(t.dtype));
        CopyView(t, *c);
        tensors_.push_back(std::move(c));
        return tensors_.back().get();
    }

    /** Copies the elements of src's view into dst's (same dtype and sizes). */
    static void CopyView(const Tensor& src, Tensor& dst)
    {
        const std::vector<size_t> from = src.ElementOffsets(), to = dst.ElementOffsets();
        const size_t eb = ElemBytes(src.dtype);
        for (size_t k = 0; k < from.size(); ++k)
            std::memcpy(dst.base + to[k], src.base + from[k], eb);
    }

    /** t placed inside the storage of one of `others` that can hold its view, mostly at that
     *  tensor's first element (false when none can). */
    bool Alias(FuzzedDataProvider& in, Tensor* t, const std::vector<const Tensor*>& others)
    {
        const size_t eb = ElemBytes(t->dtype);
        int64_t last = t->offset;
        for (size_t d = 0; d < t->sizes.size(); ++d) last += (t->sizes[d] - 1) * t->strides[d];
        const size_t need = static_cast<size_t>(last + 1) * eb;  // the view's reach
        std::vector<std::pair<const Storage*, const Tensor*>> hosts;
        for (const Tensor* o : others) {
            const Storage* s = StorageOf(o->base);
            if (o != t && s != nullptr && need <= s->bytes) hosts.emplace_back(s, o);
        }
        if (t->Numel() == 0 || hosts.empty()) return false;
        const auto [host, other] = hosts[in.ConsumeIntegralInRange<size_t>(0, hosts.size() - 1)];
        const size_t room = (host->bytes - need) / eb;
        const size_t first = static_cast<size_t>(other->base - host->data) +
                             static_cast<size_t>(other->offset) * ElemBytes(other->dtype);
        const size_t slot = in.ConsumeBool() ? std::min(first / eb, room)
                                             : in.ConsumeIntegralInRange<size_t>(0, room);
        t->base = host->data + slot * eb;
        t->storageElems = static_cast<int64_t>((host->bytes - slot * eb) / eb);
        return true;
    }

    aclTensor* Handle(Tensor* t)
    {
        if (t == nullptr) return nullptr;
        const int64_t storage = t->storageElems;
        aclTensor* h =
            aclCreateTensor(t->sizes.data(), t->sizes.size(), t->dtype, t->strides.data(),
                            t->offset, t->format, &storage, 1, t->nullData ? nullptr : t->base);
        if (h == nullptr)
            Finding("aclCreateTensor refused a valid description: %s", aclGetRecentErrMsg());
        return h;
    }
    aclTensor* Loose(Tensor* t)
    {
        aclTensor* h = Handle(t);
        if (h != nullptr) loose_.push_back(h);
        return h;
    }
    aclTensorList* List(const std::vector<Tensor*>& entries)
    {
        std::vector<aclTensor*> handles;
        for (Tensor* t : entries) handles.push_back(Handle(t));
        aclTensorList* list =
            aclCreateTensorList(handles.empty() ? nullptr : handles.data(), handles.size());
        if (list == nullptr) Finding("aclCreateTensorList failed: %s", aclGetRecentErrMsg());
        lists_.push_back(list);
        return list;
    }

    /** Every storage's bytes. */
    std::vector<std::vector<uint8_t>> Snapshot() const
    {
        std::vector<std::vector<uint8_t>> out;
        for (const Storage& s : storages_) out.emplace_back(s.data, s.data + s.bytes);
        return out;
    }
    /** The first storage whose bytes differ from `before`, or -1. */
    long Changed(const std::vector<std::vector<uint8_t>>& before) const
    {
        for (size_t i = 0; i < before.size(); ++i) {
            if (!before[i].empty() &&
                std::memcmp(storages_[i].data, before[i].data(), before[i].size()) != 0) {
                return long(i);
            }
        }
        return -1;
    }
    const std::vector<std::unique_ptr<Tensor>>& Tensors() const { return tensors_; }
    const std::vector<Storage>& Storages() const { return storages_; }
    const Storage* StorageOf(const uint8_t* p) const
    {
        auto it = byStart_.upper_bound(reinterpret_cast<uintptr_t>(p));
        if (p == nullptr || it == byStart_.begin()) return nullptr;
        const Storage& s = storages_[(--it)->second];
        return p < s.data + s.bytes ? &s : nullptr;
    }

private:
    std::vector<std::unique_ptr<Tensor>> tensors_;
    std::vector<Storage> storages_;        // aclrtMalloc'd, in allocation order
    std::map<uintptr_t, size_t> byStart_;  // a storage's first byte: its index
    std::vector<aclTensorList*> lists_;
    std::vector<aclTensor*> loose_;
    std::vector<void*> workspaces_;
};

/** The model's memory rules over the call's tensors (null entries skipped): a stride of 0 in an
 *  updated tensor, or an updated tensor's bytes meeting another tensor's. */
/** Every tensor with elements has a data address. Judged, as the formats below, on the call as it
 *  is passed: a later mutation may replace a tensor an earlier one changed. */
inline void ExpectData(const std::vector<const Tensor*>& tensors, Expect* expect)
{
    for (const Tensor* t : tensors) {
        if (t->nullData && t->Numel() > 0) {
            expect->Null("a tensor with elements but no data");
            return;
        }
    }
}

/** Every tensor ND or a format the contract takes as ND (NCL, NCHW, NCDHW). */
inline void ExpectNdFormats(const std::vector<const Tensor*>& tensors, Expect* expect)
{
    for (const Tensor* t : tensors) {
        const aclFormat f = t->format;
        if (f != ACL_FORMAT_ND && f != ACL_FORMAT_NCHW && f != ACL_FORMAT_NCL &&
            f != ACL_FORMAT_NCDHW) {
            expect->Invalid("a format other than ND");
            return;
        }
    }
}

inline void ExpectMemoryRules(const std::vector<const Tensor*>& tensors, Expect* expect)
{
    std::vector<size_t> order;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i]->updated && tensors[i]->RepeatsElements()) {
            expect->Invalid("an updated tensor repeats elements (stride 0)");
        }
        const auto span = tensors[i]->Span();
        if (span.first != span.second) order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return tensors[a]->Span() < tensors[b]->Span(); });
    for (size_t x = 0; x < order.size();
         ++x) {  // every later span starting before this one ends meets it
        const Tensor* a = tensors[order[x]];
        for (size_t y = x + 1;
             y < order.size() && tensors[order[y]]->Span().first < a->Span().second; ++y) {
            if (a->updated || tensors[order[y]]->updated) {
                expect->Invalid("an updated tensor overlaps another");
                return;
            }
        }
    }
}

inline bool IsNan(aclDataType dtype, const uint8_t* p)
{
    if (dtype == ACL_FLOAT) {
        uint32_t b;
        std::memcpy(&b, p, 4);
        return (b & 0x7FFFFFFFU) > 0x7F800000U;
    }
    if (dtype == ACL_FLOAT16 || dtype == ACL_BF16) {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return (b & 0x7FFFU) > (dtype == ACL_FLOAT16 ? 0x7C00U : 0x7F80U);
    }
    return false;
}

/**
 * After a phase 2 of the fuzzed call and of its reference: each updated view equals its
 * reference (`pairs`: fuzzed tensor, its contiguous copy), any NaN equal to any NaN, and every
 * storage byte no updated view covers is what `before` holds.
 */
inline void CompareWithReference(const Call& call, const std::vector<std::vector<uint8_t>>& before,
                                 const std::vector<std::pair<const Tensor*, const Tensor*>>& pairs,
                                 const char* op)
{
    std::vector<std::vector<bool>> covered(before.size());
    for (size_t i = 0; i < before.size(); ++i) covered[i].assign(before[i].size(), false);
    for (const auto& [t, ref] : pairs) {
        if (!t->updated || t->Numel() == 0) continue;
        const std::vector<size_t> at = t->ElementOffsets(), refAt = ref->ElementOffsets();
        const size_t eb = ElemBytes(t->dtype);
        const Storage* s = call.StorageOf(t->base);
        const size_t index = static_cast<size_t>(s - call.Storages().data());
        const size_t shift = static_cast<size_t>(t->base - s->data);
        for (size_t k = 0; k < at.size(); ++k) {
            const uint8_t* got = t->base + at[k];
            const uint8_t* want = ref->base + refAt[k];
            if (std::memcmp(got, want, eb) != 0 &&
                !(IsNan(t->dtype, got) && IsNan(t->dtype, want))) {
                uint64_t g = 0, w = 0;
                std::memcpy(&g, got, eb);
                std::memcpy(&w, want, eb);
                Finding(
                    "%s: element %zu of an updated tensor (dtype %d, %zu elements) is 0x%llx, the "
                    "twin kernel on contiguous copies wrote 0x%llx",
                    op, k, int(t->dtype), at.size(), static_cast<unsigned long long>(g),
                    static_cast<unsigned long long>(w));
            }
            for (size_t b = 0; b < eb; ++b) covered[index][shift + at[k] + b] = true;
        }
    }
    for (size_t i = 0; i < before.size(); ++i) {
        const uint8_t* now = call.Storages()[i].data;
        for (size_t b = 0; b < before[i].size(); ++b) {
            if (!covered[i][b] && now[b] != before[i][b]) {
                Finding("%s: byte %zu of storage %zu, outside every updated view, changed", op, b,
                        i);
            }
        }
    }
}

/** The stream every target queues on (created once). */
inline aclrtStream Stream()
{
    static aclrtStream stream = [] {
        aclrtStream s = nullptr;
        if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
            aclrtCreateStream(&s) != ACL_SUCCESS) {
            Finding("runtime setup failed: %s", aclGetRecentErrMsg());
        }
        return s;
    }();
    return stream;
}

/** Phase 1 and phase 2 of one operator, over handles the target made. */
struct Phases {
    const char* phase1;  // its name: every refusal's message starts with it
    const char* phase2;
    aclnnStatus (*run)(void* workspace, uint64_t size, aclOpExecutor* executor, aclrtStream stream);
};

/** A phase 1's result checked against the model; true when the call was accepted. */
inline bool CheckPhase1(const Phases& op, const Expect& expect, aclnnStatus status,
                        uint64_t workspace, aclOpExecutor* executor, const Call& call,
                        const std::vector<std::vector<uint8_t>>& before, uint64_t unsetWorkspace,
                        aclOpExecutor* unsetExecutor)
{
    if (!expect.Refused()) {
        if (status != ACLNN_SUCCESS) {
            Finding("%s refused a call the contract allows (%d): %s", op.phase1, status,
                    aclGetRecentErrMsg());
        }
        return true;
    }
    const bool classOk = (expect.nullRefusal && status == ACLNN_ERR_PARAM_NULLPTR) ||
                         (expect.invalidRefusal && status == ACLNN_ERR_PARAM_INVALID);
    if (!classOk) {
        Finding("%s returned %d for a call the contract refuses (%s): %s", op.phase1, status,
                expect.why.c_str(), status == ACLNN_SUCCESS ? "" : aclGetRecentErrMsg());
    }
    const std::string message = aclGetRecentErrMsg();
    if (message.rfind(std::string(op.phase1) + ": ", 0) != 0) {
        Finding("%s's refusal message does not name it: '%s'", op.phase1, message.c_str());
    }
    if (workspace != unsetWorkspace || executor != unsetExecutor) {
        Finding("%s wrote an out-argument while refusing (%s)", op.phase1, message.c_str());
    }
    if (const long changed = call.Changed(before); changed >= 0) {
        Finding("%s changed storage %ld while refusing (%s)", op.phase1, changed, message.c_str());
    }
    return false;
}

/** The twin kernel chosen for the reference's phase 1 (read when phase 1 runs). */
class TwinKernel {
public:
    TwinKernel() { setenv("ASCEND_EMA_ADAM_CPU_KERNEL", "twin", 1); }
    ~TwinKernel() { unsetenv("ASCEND_EMA_ADAM_CPU_KERNEL"); }
};

/** A phase 2, then the stream synchronized; the status is checked. */
inline void Run(const Phases& op, void* workspace, uint64_t size, aclOpExecutor* executor)
{
    const aclnnStatus status = op.run(workspace, size, executor, Stream());
    if (status != ACLNN_SUCCESS)
        Finding("%s failed (%d): %s", op.phase2, status, aclGetRecentErrMsg());
    if (aclrtSynchronizeStream(Stream()) != ACL_SUCCESS) {
        Finding("%s: the stream failed: %s", op.phase2, aclGetRecentErrMsg());
    }
}

/** How the accepted call's executor is used (drawn first, while the input lasts). */
struct ExecutorPlan {
    int runs = 1;               // phase 2s (more than one: repeatable)
    bool destroyUnrun = false;  // destroyed without a phase 2: nothing may change
    bool shortWorkspace = false;
    bool moveGrads = false;  // between runs: gradients moved to new memory, else rewritten in place

    static ExecutorPlan Draw(FuzzedDataProvider& in)
    {
        ExecutorPlan p;
        switch (in.ConsumeIntegralInRange<int>(0, 7)) {
            case 7:
                p.destroyUnrun = true;
                break;
            case 4:
            case 5:
            case 6:
                p.runs = in.ConsumeIntegralInRange<int>(2, 3);
                break;
            default:
                break;
        }
        p.shortWorkspace = in.ConsumeBool();
        p.moveGrads = in.ConsumeBool();
        return p;
    }
};

/** The refusals a consumed or wrongly given executor must meet: nothing changes. */
inline void ExpectPhase2Refused(const Phases& op, const Call& call, void* workspace, uint64_t size,
                                aclOpExecutor* executor, const char* what)
{
    const std::vector<std::vector<uint8_t>> before = call.Snapshot();
    const aclnnStatus status = op.run(workspace, size, executor, Stream());
    aclrtSynchronizeStream(Stream());
    if (status != ACLNN_ERR_PARAM_INVALID)
        Finding("%s: %s returned %d, expected 161002", op.phase2, what, status);
    if (const long changed = call.Changed(before); changed >= 0) {
        Finding("%s: %s changed storage %ld", op.phase2, what, changed);
    }
}

/** A call's arguments: lists of entries (nullptr: a null entry) and single tensors (nullptr:
 *  NULL), as the target lays them out; `nullLists` are passed as NULL lists. */
struct Args {
    std::vector<std::vector<Tensor*>> lists;
    std::vector<bool> nullLists;
    std::vector<Tensor*> singles;
    bool nullWorkspaceSize = false, nullExecutor = false;

    std::vector<const Tensor*> All() const
    {
        std::vector<const Tensor*> out;
        for (const auto& list : lists) {
            for (const Tensor* t : list) {
                if (t != nullptr) out.push_back(t);
            }
        }
        for (const Tensor* t : singles) {
            if (t != nullptr) out.push_back(t);
        }
        return out;
    }
};

/** The handles of a call's arguments. */
struct Handles {
    std::vector<aclTensorList*> lists;
    std::vector<aclTensor*> singles;
};

inline Handles Realize(Call& call, const Args& args)
{
    Handles h;
    for (size_t k = 0; k < args.lists.size(); ++k) {
        h.lists.push_back(
            k < args.nullLists.size() && args.nullLists[k] ? nullptr : call.List(args.lists[k]));
    }
    for (Tensor* t : args.singles) h.singles.push_back(call.Loose(t));
    return h;
}

/** What a target gives the driver. */
struct Operator {
    Phases phases;
    aclnnStatus (*phase1)(const Handles& h, const Attrs& a, uint64_t* workspaceSize,
                          aclOpExecutor** executor);
    /** Gradient tensors (list 0, or single 0 when the operator has no lists). */
    bool gradsAreList;
    /** Moves gradient `entry` of a repeatable executor to `addr`. */
    aclnnStatus (*moveGrad)(aclOpExecutor* executor, const Handles& h, size_t entry, void* addr);
};

/** The reference: the same arguments as contiguous copies, in their own call. */
inline Args CopyArgs(Call& into, const Args& args,
                     std::vector<std::pair<const Tensor*, const Tensor*>>* pairs)
{
    Args copy;
    copy.nullLists = args.nullLists;
    for (const auto& list : args.lists) {
        copy.lists.emplace_back();
        for (const Tensor* t : list) {
            Tensor* c = into.ContiguousCopy(*t);
            copy.lists.back().push_back(c);
            pairs->emplace_back(t, c);
        }
    }
    for (const Tensor* t : args.singles) {
        Tensor* c = t == nullptr ? nullptr : into.ContiguousCopy(*t);
        copy.singles.push_back(c);
        if (t != nullptr) pairs->emplace_back(t, c);
    }
    return copy;
}

/** A storage no other tensor of the call uses (so rewriting it changes only `t`). */
inline bool OwnsStorage(const Call& call, const Tensor* t)
{
    const Storage* s = call.StorageOf(t->base);
    for (const auto& other : call.Tensors()) {
        if (other.get() != t && call.StorageOf(other->base) == s) return false;
    }
    return true;
}

/**
 * Runs one drawn call through phase 1 and, when accepted, the executor plan, checking the model's
 * expectation and the reference after every phase 2 (the file comment).
 */
inline void Drive(const ExecutorPlan& plan, const Operator& op, Call& call, Args& args,
                  const Attrs& attrs, Expect expect, Values& values)
{
    const Phases& ph = op.phases;
    ExpectMemoryRules(args.All(), &expect);
    ExpectNdFormats(args.All(), &expect);
    ExpectData(args.All(), &expect);
    if (!AttrsValid(attrs)) expect.Invalid("an attribute out of range");
    if (args.nullWorkspaceSize || args.nullExecutor) expect.Null("a null out-argument");
    const Handles h = Realize(call, args);
    const std::vector<std::vector<uint8_t>> before = call.Snapshot();
    constexpr uint64_t kUnsetWorkspace = 0xFEEDFACEULL;
    aclOpExecutor* const unsetExecutor = reinterpret_cast<aclOpExecutor*>(uintptr_t{0x10});
    uint64_t workspaceSize = kUnsetWorkspace;
    aclOpExecutor* executor = unsetExecutor;
    const aclnnStatus status =
        op.phase1(h, attrs, args.nullWorkspaceSize ? nullptr : &workspaceSize,
                  args.nullExecutor ? nullptr : &executor);
    if (!CheckPhase1(ph, expect, status, workspaceSize, executor, call, before, kUnsetWorkspace,
                     unsetExecutor)) {
        return;
    }
    Call refCall;
    std::vector<std::pair<const Tensor*, const Tensor*>> pairs;
    Args refArgs = CopyArgs(refCall, args, &pairs);
    const Handles refH = Realize(refCall, refArgs);
    uint64_t refSize = 0;
    aclOpExecutor* refExecutor = nullptr;
    {
        TwinKernel twin;
        if (op.phase1(refH, attrs, &refSize, &refExecutor) != ACLNN_SUCCESS) {
            Finding("%s refused the contiguous copies of an accepted call: %s", ph.phase1,
                    aclGetRecentErrMsg());
        }
    }
    if (plan.destroyUnrun) {
        const std::vector<std::vector<uint8_t>> unrun = call.Snapshot();
        if (aclDestroyAclOpExecutor(executor) != ACLNN_SUCCESS)
            Finding("%s: destroying an unrun executor failed", ph.phase1);
        if (call.Changed(unrun) >= 0)
            Finding("%s: an executor destroyed unrun changed memory", ph.phase1);
        aclDestroyAclOpExecutor(refExecutor);
        return;
    }
    if (plan.runs > 1 && (aclSetAclOpExecutorRepeatable(executor) != ACLNN_SUCCESS ||
                          aclSetAclOpExecutorRepeatable(refExecutor) != ACLNN_SUCCESS)) {
        Finding("%s: aclSetAclOpExecutorRepeatable failed: %s", ph.phase1, aclGetRecentErrMsg());
    }
    void* workspace = call.Workspace(workspaceSize);
    void* refWorkspace = refCall.Workspace(refSize);
    if (plan.shortWorkspace && workspaceSize > 0) {
        ExpectPhase2Refused(ph, call, workspace, workspaceSize - 1, executor,
                            "a workspace one byte short");
    }
    std::vector<Tensor*> grads =
        op.gradsAreList ? args.lists[0] : std::vector<Tensor*>{args.singles[0]};
    std::vector<Tensor*> refGrads =
        op.gradsAreList ? refArgs.lists[0] : std::vector<Tensor*>{refArgs.singles[0]};
    for (int run = 0; run < plan.runs; ++run) {
        for (size_t i = 0; run > 0 && i < grads.size();
             ++i) {  // new gradients for a repeated launch
            Tensor* g = grads[i];
            if (g->Numel() == 0) continue;
            const size_t bytes = static_cast<size_t>(g->storageElems) * ElemBytes(g->dtype);
            if (plan.moveGrads) {
                g->base = call.Allocate(bytes);
                values.Fill(g->dtype, Role::kGrad, g->base, static_cast<size_t>(g->storageElems));
                // the reference's copy rewritten where it is: it owes nothing to the address
                // updates under test
                Call::CopyView(*g, *refGrads[i]);
                if (op.moveGrad(executor, h, i, g->base) != ACLNN_SUCCESS) {
                    Finding("%s: moving gradient %zu failed: %s", ph.phase1, i,
                            aclGetRecentErrMsg());
                }
            } else if (OwnsStorage(call, g)) {
                values.Fill(g->dtype, Role::kGrad, g->base, static_cast<size_t>(g->storageElems));
                Call::CopyView(*g, *refGrads[i]);
            }
        }
        const std::vector<std::vector<uint8_t>> ran = call.Snapshot();
        Run(ph, workspace, workspaceSize, executor);
        Run(ph, refWorkspace, refSize, refExecutor);
        CompareWithReference(call, ran, pairs, ph.phase2);
    }
    if (plan.runs == 1) {
        ExpectPhase2Refused(ph, call, workspace, workspaceSize, executor,
                            "a second phase 2 of a single-use executor");
    } else {
        aclDestroyAclOpExecutor(executor);
        aclDestroyAclOpExecutor(refExecutor);
    }
}

/** A shape of at most `maxNumel` elements: rank 0 to 4, small dims, sometimes 0 or a long one. */
inline std::vector<int64_t> DrawShape(FuzzedDataProvider& in, int64_t maxNumel = 4096)
{
    const size_t rank = in.ConsumeIntegralInRange<size_t>(0, 4);
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (size_t d = 0; d < rank; ++d) {
        int64_t size = in.ConsumeIntegralInRange<int64_t>(1, 5);
        switch (in.ConsumeIntegralInRange<int>(0, 15)) {
            case 14:
                size = 0;
                break;
            case 15:
                size = in.ConsumeIntegralInRange<int64_t>(6, 1100);
                break;
            default:
                break;
        }
        if (size > 0 && numel * size > maxNumel)
            size = std::max<int64_t>(1, maxNumel / std::max<int64_t>(numel, 1));
        numel *= size;
        shape.push_back(size);
    }
    return shape;
}

/** A format: ND mostly, else one ND accepts as ND or one it refuses (the model's rule). */
inline aclFormat DrawFormat(FuzzedDataProvider& in)
{
    static constexpr aclFormat kFormats[] = {ACL_FORMAT_NCHW,    ACL_FORMAT_NCL,
                                             ACL_FORMAT_NCDHW,   ACL_FORMAT_NHWC,
                                             ACL_FORMAT_NC1HWC0, ACL_FORMAT_FRACTAL_NZ};
    return kFormats[in.ConsumeIntegralInRange<size_t>(0, std::size(kFormats) - 1)];
}

/** A stride of 0 on a dim of more than one element (false when t has none). */
inline bool ZeroStride(FuzzedDataProvider& in, Tensor* t)
{
    std::vector<size_t> dims;
    for (size_t d = 0; d < t->sizes.size(); ++d) {
        if (t->sizes[d] > 1) dims.push_back(d);
    }
    if (dims.empty()) return false;
    t->strides[dims[in.ConsumeIntegralInRange<size_t>(0, dims.size() - 1)]] = 0;
    return true;
}

// ---- lists ------------------------------------------------------------------------------------

/** An absent optional list: empty, or one zero-element placeholder per entry of `dtype`. */
inline std::vector<Tensor*> AbsentList(FuzzedDataProvider& in, Call& call, Values& values,
                                       size_t entries, aclDataType dtype)
{
    std::vector<Tensor*> list;
    if (in.ConsumeBool()) {
        for (size_t i = 0; i < entries; ++i)
            list.push_back(call.Make(in, values, dtype, {0}, Role::kParam, true));
    }
    return list;
}

/** Whether a list stands for an absent optional one: empty, or only zero-element tensors of the
 *  placeholders' dtype (docs/ACLNN.md, "Absent lists"). */
inline bool IsAbsent(const std::vector<Tensor*>& list, aclDataType placeholder)
{
    for (const Tensor* t : list) {
        if (t == nullptr || t->Numel() != 0 || t->dtype != placeholder) return false;
    }
    return true;
}

/** The one dtype of a list's tensors (nulls skipped), or -1 for two, or `none` for none. */
inline int ListDtype(const std::vector<Tensor*>& list, int none = -2)
{
    int d = none;
    for (const Tensor* t : list) {
        if (t == nullptr) continue;
        if (d == none)
            d = t->dtype;
        else if (d != t->dtype)
            return -1;
    }
    return d;
}

/** A one-element tensor (shape [1], or rank 0) of `dtype` holding `value` when it is fp32. */
inline Tensor* ScalarTensor(FuzzedDataProvider& in, Call& call, Values& values, aclDataType dtype,
                            float value)
{
    const std::vector<int64_t> shape =
        in.ConsumeBool() ? std::vector<int64_t>{1} : std::vector<int64_t>{};
    Tensor* t = call.Make(in, values, dtype, shape, Role::kScalar, false);
    if (dtype == ACL_FLOAT) std::memcpy(t->base + t->offset * 4, &value, 4);
    return t;
}

/** A float for a scalar tensor: typical, zero, NaN or raw bits (values are not validated). */
inline float DrawScalarValue(FuzzedDataProvider& in, float typical)
{
    switch (in.ConsumeIntegralInRange<int>(0, 7)) {
        case 5:
            return 0.0F;
        case 6:
            return std::nanf("");
        case 7: {
            const uint32_t bits = in.ConsumeIntegral<uint32_t>();
            float x = 0;
            std::memcpy(&x, &bits, 4);
            return x;
        }
        default:
            return typical;
    }
}

/** The model's rules for the one-element tensors: dtype and exactly one element. */
inline void ExpectScalar(const Tensor* t, aclDataType dtype, const char* name, Expect* expect)
{
    if (t != nullptr && (t->dtype != dtype || t->Numel() != 1)) {
        expect->Invalid(std::string(name) + " not one " + (dtype == ACL_INT64 ? "int64" : "fp32") +
                        " element");
    }
}

/** The step's value as phase 1 reads it, when the step is an int64 element with data. */
inline void ExpectStepValue(const Tensor* step, bool biasCorrection, Expect* expect)
{
    if (step == nullptr || step->dtype != ACL_INT64 || step->Numel() != 1 || step->nullData) return;
    int64_t v = 0;
    std::memcpy(&v, step->base + step->offset * 8, 8);
    if (biasCorrection && v < 1) expect->Invalid("step < 1 with bias correction");
}

/** Writes an int64 (step) or fp32 value into a one-element tensor's element. */
inline void SetScalar(Tensor* t, double value)
{
    if (t == nullptr || t->Numel() != 1) return;
    if (t->dtype == ACL_INT64) {
        const int64_t v = static_cast<int64_t>(value);
        std::memcpy(t->base + t->offset * 8, &v, 8);
    } else if (t->dtype == ACL_FLOAT) {
        const float v = static_cast<float>(value);
        std::memcpy(t->base + t->offset * 4, &v, 4);
    }
}

/** The dtypes a mutation draws from: the operators' own and some no row has. */
constexpr aclDataType kMutationDtypes[] = {ACL_FLOAT,  ACL_FLOAT16, ACL_BF16,
                                           ACL_DOUBLE, ACL_INT32,   ACL_UINT8};

/** What the shared mutations of a list operator's call need to know of its lists. */
struct ListLayout {
    const char* const* names;
    const Role* roles;
    const aclDataType* dtypes;  // each list's dtype in the drawn row
    int lists;
    int grads;                 // the gradients' list (never written)
    size_t entries;            // the drawn number of entries
    int64_t maxEntryNumel;     // an entry's new shape holds at most this many elements
    int64_t maxSingleNumel;    // a single tensor's new shape holds at most this many
    uint32_t oneElementLists;  // bit k: list k's entries stay {1} when entry i goes to rank 9
    int step;                  // the step's index among the singles
};

/** The number of mutations MutateList knows; a target numbers its own from here. */
constexpr int kListMutations = 12;

/** One of the mutations every list operator shares (`choice` below kListMutations): a null list,
 *  entry or data pointer, one more entry, an entry of another dtype or shape, every tensor of
 *  entry i of rank 9, a format, a zero stride, an entry inside another tensor's storage, a single
 *  tensor of another dtype or shape, a step of any int32 value, or a null out-argument. The
 *  model (the targets' and Drive's Expect* rules) judges what each gives; the null lists and
 *  entries are judged here (no later mutation undoes them). */
inline void MutateList(FuzzedDataProvider& in, Call& call, Values& values, Args& args,
                       const ListLayout& layout, int choice, Expect* expect)
{
    const int k = in.ConsumeIntegralInRange<int>(0, layout.lists - 1);
    std::vector<Tensor*>& list = args.lists[k];
    const size_t i = list.empty() ? 0 : in.ConsumeIntegralInRange<size_t>(0, list.size() - 1);
    Tensor** entry =
        list.empty() || list[i] == nullptr || list[i]->Numel() == 0 ? nullptr : &list[i];
    const size_t s = in.ConsumeIntegralInRange<size_t>(0, args.singles.size() - 1);
    const bool written = k != layout.grads;
    auto drawDtype = [&in] {
        return kMutationDtypes[in.ConsumeIntegralInRange<size_t>(0,
                                                                 std::size(kMutationDtypes) - 1)];
    };
    switch (choice) {
        case 0:
            args.nullLists[k] = true;
            expect->Null(std::string(layout.names[k]) + " null");
            break;
        case 1:
            if (!list.empty()) {
                list[i] = nullptr;
                expect->Null(std::string(layout.names[k]) + " entry null");
            }
            break;
        case 2:
            if (entry != nullptr) (*entry)->nullData = true;
            break;
        case 3:  // one more entry, with elements
            list.push_back(call.Make(in, values, layout.dtypes[k],
                                     {in.ConsumeIntegralInRange<int64_t>(1, 8)}, layout.roles[k],
                                     written));
            break;
        case 4:
            if (entry != nullptr) {
                *entry =
                    call.Make(in, values, drawDtype(), (*entry)->sizes, layout.roles[k], written);
            }
            break;
        case 5:
            if (entry != nullptr && in.ConsumeBool()) {
                *entry = call.Make(in, values, (*entry)->dtype, DrawShape(in, layout.maxEntryNumel),
                                   layout.roles[k], written);
            } else if (i < layout.entries) {
                for (int j = 0; j < layout.lists; ++j) {
                    if (args.lists[j].size() != layout.entries) continue;
                    Tensor*& t = args.lists[j][i];
                    if (t == nullptr || t->Numel() == 0) continue;
                    const bool one = (layout.oneElementLists >> j) & 1U;
                    t = call.Make(in, values, t->dtype,
                                  one ? std::vector<int64_t>{1} : std::vector<int64_t>(9, 1),
                                  layout.roles[j], j != layout.grads);
                }
            }
            break;
        case 6:
            if (entry != nullptr) (*entry)->format = DrawFormat(in);
            break;
        case 7:
            if (entry != nullptr) ZeroStride(in, *entry);
            break;
        case 8:
            if (entry != nullptr) call.Alias(in, *entry, args.All());
            break;
        case 9:
            if (args.singles[s] == nullptr) break;
            args.singles[s] =
                in.ConsumeBool()
                    ? call.Make(in, values, drawDtype(), args.singles[s]->sizes, Role::kScalar,
                                false)
                    : call.Make(in, values, args.singles[s]->dtype,
                                DrawShape(in, layout.maxSingleNumel), Role::kScalar, false);
            break;
        case 10:
            SetScalar(args.singles[layout.step],
                      static_cast<double>(in.ConsumeIntegral<int32_t>()));
            break;
        default:
            if (in.ConsumeBool())
                args.nullWorkspaceSize = true;
            else
                args.nullExecutor = true;
    }
}

}  // namespace aea_fuzz

#endif  // ASCEND_EMA_ADAM_FUZZ_HARNESS_H
