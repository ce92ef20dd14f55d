// Tensor lists on the AscendC CPU twin: ListTensorDesc/TensorDesc decoding what twin::EncodeList builds in each
// layout, the encoded words against the c220 decoder's expectations, traffic counting, data reached through a
// list, and one deliberately wrong kernel per rule (GM_BOUNDS, LIST_*). Also the 910B dtype table of Max, which
// the list kernel uses for AMSGrad. Case conventions: twin_case_harness.h.
//
// Shapes, counts and data are drawn at random; the seed is printed on stderr and AEA_SEED=<seed> replays it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"  // the upstream header name resolves too
#include "twin_case_harness.h"
#include "twin_list_launch.h"

using namespace AscendC;
using namespace twin_test;

namespace {

constexpr uint32_t kUnchecked = 0xffffffffu;
constexpr uint64_t kMaxRank = 8;

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

std::mt19937_64& Rng() {
    static std::mt19937_64 rng = [] {
        const char* env = std::getenv("AEA_SEED");
        const uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 0) : std::random_device{}();
        std::fprintf(stderr, "twin_list_tensor_test: seed %llu (AEA_SEED=<seed> replays)\n", Ull(seed));
        return std::mt19937_64(seed);
    }();
    return rng;
}

uint32_t Draw(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(Rng()); }

std::vector<int64_t> RandomShape(uint32_t rank, uint32_t maxDim) {
    std::vector<int64_t> shape(rank);
    for (int64_t& d : shape) d = Draw(0, maxDim);
    return shape;
}

// n entries of the given ranks with distinct fake data addresses (decoded, never dereferenced).
std::vector<twin::ListEntry> FakeEntries(const std::vector<uint32_t>& ranks) {
    static const uint64_t kStorage[1] = {};
    std::vector<twin::ListEntry> entries;
    for (size_t i = 0; i < ranks.size(); ++i) {
        entries.push_back({reinterpret_cast<const uint8_t*>(kStorage) + 64 * (i + 1), RandomShape(ranks[i], 1u << 20)});
    }
    return entries;
}

std::vector<uint32_t> Ranks(size_t n, uint32_t rank) { return std::vector<uint32_t>(n, rank); }

uint64_t Address(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// ---- a kernel that reports what it decodes ---------------------------------------------------------------

struct Probe {
    bool size = false;        // call GetSize()
    uint32_t pointers = 0;    // GetDataPtr(0 .. pointers-1)
    uint32_t descs = 0;       // GetDesc(0 .. descs-1)
    uint32_t length = kUnchecked;
    uint32_t shapeSize = kUnchecked;
};

// GetSize() if size, GetDataPtr(0 .. pointers-1), GetDesc(0 .. descs-1); Init checks against `checked`'s length
// and count when given.
Probe Calls(bool size, uint32_t pointers, uint32_t descs, const twin::EncodedList* checked = nullptr) {
    Probe p;
    p.size = size;
    p.pointers = pointers;
    p.descs = descs;
    if (checked != nullptr) {
        p.length = checked->Length();
        p.shapeSize = checked->Count();
    }
    return p;
}

Probe Checked(uint32_t length, uint32_t shapeSize) {
    Probe p;
    p.length = length;
    p.shapeSize = shapeSize;
    return p;
}

struct Decoded {
    uint32_t size = 0;
    std::vector<uint64_t> pointers;
    std::vector<uint64_t> descDims, descIndices, descPointers;
    std::vector<std::vector<int64_t>> descShapes;
};

__global__ __aicore__ void k_decode(GM_ADDR list, const Probe* probe, Decoded* out) {
    ListTensorDesc desc(reinterpret_cast<__gm__ void*>(list), probe->length, probe->shapeSize);
    if (probe->size) out->size = desc.GetSize();
    for (uint32_t i = 0; i < probe->pointers; ++i) {
        out->pointers.push_back(Address(desc.GetDataPtr<__gm__ uint8_t>(i)));
    }
    uint64_t shape[kMaxRank];
    TensorDesc<float> td;
    td.SetShapeAddr(shape);
    for (uint32_t i = 0; i < probe->descs; ++i) {
        desc.GetDesc(td, i);
        out->descDims.push_back(td.GetDim());
        out->descIndices.push_back(td.GetIndex());
        out->descPointers.push_back(Address(td.GetDataPtr()));
        std::vector<int64_t> dims;
        for (uint32_t j = 0; j < td.GetDim(); ++j) dims.push_back(static_cast<int64_t>(td.GetShape(j)));
        out->descShapes.push_back(dims);
    }
}

Decoded Decode(twin::EncodedList& list, const Probe& probe, twin::BlockCounters* counters = nullptr) {
    Decoded out;
    const twin::LaunchResult r = twin::Launch(k_decode, Config(1, {list.Region()}), list.Addr(), &probe, &out);
    if (counters != nullptr) *counters = r.total();
    return out;
}

// Every pointer and the first `descs` descriptors decode to the entries.
void ExpectDecoded(const char* what, const std::vector<twin::ListEntry>& entries, const Decoded& d, uint32_t descs) {
    Expect(d.pointers.size() == entries.size(), "%s: %zu pointers decoded", what, d.pointers.size());
    for (size_t i = 0; i < d.pointers.size() && i < entries.size(); ++i) {
        Expect(d.pointers[i] == Address(entries[i].data), "%s: GetDataPtr(%zu) = %#llx, want %p", what, i,
               Ull(d.pointers[i]), entries[i].data);
    }
    Expect(d.descDims.size() == descs, "%s: %zu descriptors decoded", what, d.descDims.size());
    for (size_t i = 0; i < d.descDims.size(); ++i) {
        Expect(d.descDims[i] == entries[i].shape.size(), "%s: tensor %zu GetDim() = %llu, want %zu", what, i,
               Ull(d.descDims[i]), entries[i].shape.size());
        Expect(d.descIndices[i] == i, "%s: tensor %zu GetIndex() = %llu", what, i, Ull(d.descIndices[i]));
        Expect(d.descPointers[i] == Address(entries[i].data), "%s: tensor %zu GetDataPtr() = %#llx", what, i,
               Ull(d.descPointers[i]));
        Expect(d.descShapes[i] == entries[i].shape, "%s: tensor %zu shape differs", what, i);
    }
}

// ---- ok: decoding each layout -----------------------------------------------------------------------------

// CANN's launcher layout, one rank per list: every pointer and descriptor; GetSize() only for one tensor (the
// headers say 1).
TWIN_CASE(ok_framework_layout_one_rank) {
    for (uint32_t rank = 1; rank <= kMaxRank; ++rank) {
        for (const uint32_t n : {1u, 2u, Draw(3, 64)}) {
            const std::vector<twin::ListEntry> entries = FakeEntries(Ranks(n, rank));
            twin::EncodedList list = twin::EncodeList(entries);
            const Decoded d = Decode(list, Calls(n == 1, n, n, n % 2 == 1 ? &list : nullptr));
            ExpectDecoded("framework", entries, d, n);
            if (n == 1) Expect(d.size == 1, "framework rank %u: GetSize() = %u", rank, d.size);
        }
    }
    return Verdict();
}

// asc-devkit's layout (header high half = index): GetSize() counts right, every descriptor decodes.
TWIN_CASE(ok_indexed_layout) {
    for (uint32_t rank = 1; rank <= kMaxRank; ++rank) {
        for (const uint32_t n : {1u, 2u, Draw(3, 64)}) {
            const std::vector<twin::ListEntry> entries = FakeEntries(Ranks(n, rank));
            twin::EncodedList list = twin::EncodeList(entries, twin::ListLayout::kIndexed);
            const Decoded d = Decode(list, Calls(true, n, n, &list));
            ExpectDecoded("indexed", entries, d, n);
            Expect(d.size == n, "indexed rank %u: GetSize() = %u, want %u", rank, d.size, n);
        }
    }
    return Verdict();
}

// No shape info: GetSize() and every pointer.
TWIN_CASE(ok_pointers_only_layout) {
    for (const uint32_t n : {1u, 2u, Draw(3, 300)}) {
        const std::vector<twin::ListEntry> entries = FakeEntries(Ranks(n, 0));
        twin::EncodedList list = twin::EncodeList(entries, twin::ListLayout::kPointersOnly);
        const Decoded d = Decode(list, Calls(true, n, 0, &list));
        ExpectDecoded("pointers-only", entries, d, 0);
        Expect(d.size == n, "pointers-only: GetSize() = %u, want %u", d.size, n);
    }
    return Verdict();
}

// CANN's launcher with ranks 0..8 mixed and null entries: every pointer decodes; GetDesc works on the leading
// run of tensor 0's rank.
TWIN_CASE(ok_framework_layout_mixed_ranks) {
    // Trials 0 and 1: one tensor of rank 0, then one null entry (the decoder reads word 0 as the last header).
    for (int trial = 0; trial < 22; ++trial) {
        const uint32_t n = trial < 2 ? 1 : Draw(1, 80);
        std::vector<uint32_t> ranks(n);
        for (uint32_t& r : ranks) r = trial < 2 ? 0 : Draw(0, kMaxRank);
        std::vector<twin::ListEntry> entries = FakeEntries(ranks);
        for (twin::ListEntry& e : entries) {
            if (trial == 1 || (trial >= 2 && Draw(0, 9) == 0)) e = {nullptr, {}};  // a null aclTensor: rank-0 header, null pointer
        }
        uint32_t run = 0;
        const size_t rank0 = entries[0].shape.size();
        while (rank0 != 0 && run < n && entries[run].shape.size() == rank0 && entries[run].data != nullptr) ++run;
        twin::EncodedList list = twin::EncodeList(entries);
        ExpectDecoded("framework mixed", entries, Decode(list, Calls(false, n, run, &list)), run);
    }
    return Verdict();
}

// An empty tensor may have no data (a null pointer): GetDesc still decodes it, as on the device.
TWIN_CASE(ok_empty_tensor_with_null_pointer) {
    std::vector<twin::ListEntry> entries = FakeEntries(Ranks(3, 2));
    entries[1] = {nullptr, {0, 7}};
    twin::EncodedList list = twin::EncodeList(entries);
    ExpectDecoded("empty tensor", entries, Decode(list, Calls(false, 3, 3)), 3);
    return Verdict();
}

// Descriptor reads are scalar GM reads, exactly the words the device decoder reads, and never DMA bytes.
TWIN_CASE(ok_descriptor_reads_are_scalar_traffic) {
    struct Layout {
        twin::ListLayout layout;
        uint32_t rank;
        uint64_t initWords;  // words 0 and 1, plus the count header when word 1's high half is 0
    };
    for (const Layout& l : {Layout{twin::ListLayout::kFramework, Draw(1, 8), 2},
                            Layout{twin::ListLayout::kIndexed, Draw(1, 8), 3},
                            Layout{twin::ListLayout::kPointersOnly, 0, 2}}) {
        const uint32_t n = Draw(1, 40);
        const std::vector<twin::ListEntry> entries = FakeEntries(Ranks(n, l.rank));
        twin::EncodedList list = twin::EncodeList(entries, l.layout);
        const Probe probe = Calls(l.layout != twin::ListLayout::kFramework || n == 1, Draw(0, n),
                                  l.rank == 0 ? 0 : Draw(0, n));
        twin::BlockCounters c;
        Decode(list, probe, &c);
        const uint64_t want = 8 * (l.initWords + probe.pointers + uint64_t{probe.descs} * (1 + l.rank));
        Expect(c.gmScalarReadBytes == want, "layout %d, %u tensors of rank %u: %llu scalar bytes read, want %llu",
               static_cast<int>(l.layout), n, l.rank, Ull(c.gmScalarReadBytes), Ull(want));
        Expect(c.gmReadBytes == 0 && c.gmWriteBytes == 0 && c.dmaCalls == 0 && c.gmScalarWriteBytes == 0,
               "layout %d: DMA %llu/%llu B in %llu calls, scalar writes %llu B", static_cast<int>(l.layout),
               Ull(c.gmReadBytes), Ull(c.gmWriteBytes), Ull(c.dmaCalls), Ull(c.gmScalarWriteBytes));
    }
    return Verdict();
}

// ---- ok: data reached through lists -------------------------------------------------------------------------

constexpr uint32_t kChunk = 1024;  // fp32 elements per DataCopyPad

// ys[i] = 2 * xs[i] for every tensor of two lists; element counts from xs' descriptors, xs through GetDataObj,
// ys through GetDataPtr. reported[i] = GetDataObj().GetSize().
__global__ __aicore__ void k_list_double(GM_ADDR xs, GM_ADDR ys, uint32_t n, uint64_t* reported) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, kChunk * sizeof(float));
    ListTensorDesc xList(reinterpret_cast<__gm__ void*>(xs));
    ListTensorDesc yList;
    yList = ListTensorDesc(reinterpret_cast<__gm__ void*>(ys));  // member-style assignment, as CANN's kernels do
    uint64_t shape[kMaxRank];
    TensorDesc<float> desc;
    desc.SetShapeAddr(shape);
    LocalTensor<float> t = buf.Get<float>();
    for (uint32_t i = 0; i < n; ++i) {
        xList.GetDesc(desc, i);
        uint64_t elems = 1;
        for (uint32_t j = 0; j < desc.GetDim(); ++j) elems *= desc.GetShape(j);
        GlobalTensor<float> x = desc.GetDataObj();
        reported[i] = x.GetSize();
        GlobalTensor<float> y;
        y.SetGlobalBuffer(yList.GetDataPtr<float>(i), elems);
        for (uint64_t off = 0; off < elems; off += kChunk) {
            const uint32_t c = static_cast<uint32_t>(elems - off < kChunk ? elems - off : kChunk);
            DataCopyPad(t, x[off], DataCopyExtParams{1, c * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
            Muls(t, t, 2.0f, c);
            DataCopyPad(y[off], t, DataCopyExtParams{1, c * 4, 0, 0, 0});
        }
    }
}

TWIN_CASE(ok_list_data_through_datacopypad) {
    const uint32_t n = Draw(1, 12);
    std::vector<std::vector<float>> xs(n), ys(n);
    std::vector<twin::ListEntry> xEntries, yEntries;
    std::vector<twin::GmRegion> regions;
    std::uniform_real_distribution<float> value(-1e3f, 1e3f);
    uint64_t totalElems = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const std::vector<int64_t> shape = {Draw(i == 0 ? 1 : 0, 40), Draw(1, 97)};  // empty tensors, tails
        const size_t elems = static_cast<size_t>(shape[0] * shape[1]);
        totalElems += elems;
        xs[i].resize(elems);
        for (float& v : xs[i]) v = value(Rng());
        ys[i].assign(elems, -1.0f);
        xEntries.push_back({xs[i].data(), shape});
        yEntries.push_back({ys[i].data(), shape});
        regions.push_back(Region(xs[i]));
        regions.push_back(Region(ys[i]));
    }
    twin::EncodedList xList = twin::EncodeList(xEntries);
    twin::EncodedList yList = twin::EncodeList(yEntries);
    regions.push_back(xList.Region());
    regions.push_back(yList.Region());
    std::vector<uint64_t> reported(n);
    const twin::LaunchResult r =
        twin::Launch(k_list_double, Config(1, regions), xList.Addr(), yList.Addr(), n, reported.data());

    for (uint32_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < xs[i].size(); ++k) {
            Expect(ys[i][k] == 2.0f * xs[i][k], "tensor %u [%zu] = %a, want %a", i, k, ys[i][k], 2.0f * xs[i][k]);
        }
        Expect(reported[i] == sizeof(float) * xs[i].size(), "tensor %u: GetDataObj().GetSize() = %llu, want %zu",
               i, Ull(reported[i]), sizeof(float) * xs[i].size());
    }
    const twin::BlockCounters c = r.total();
    Expect(c.gmReadBytes == 4 * totalElems && c.gmWriteBytes == 4 * totalElems, "DMA %llu/%llu B, want %llu each",
           Ull(c.gmReadBytes), Ull(c.gmWriteBytes), Ull(4 * totalElems));
    // Init of each list reads 2 words; per tensor GetDesc reads a pointer and 2 dims, GetDataPtr a pointer.
    const uint64_t scalar = 2 * 16 + uint64_t{n} * (8 + 16 + 8);
    Expect(c.gmScalarReadBytes == scalar, "scalar reads %llu B, want %llu", Ull(c.gmScalarReadBytes), Ull(scalar));
    return Verdict();
}

// ---- ok: the encoded words ----------------------------------------------------------------------------------

// The c220 decoder's view of a list (ListTensorDecode): dim, descriptor size and count, from the words alone.
struct DecoderView {
    uint64_t ptrOffset, dim, descWords, count;
};

DecoderView ViewOf(const std::vector<uint64_t>& w) {
    DecoderView v{};
    v.ptrOffset = w[0];
    v.dim = w[1] & 0xffffffffu;
    v.descWords = v.dim == 0 ? 2 : 1 + v.dim;
    const uint64_t high = w[1] >> 32;
    v.count = high != 0 ? high : (w[v.ptrOffset / 8 - v.descWords] >> 32) + 1;
    return v;
}

template <class F>
bool Throws(F f) {
    try {
        f();
    } catch (const std::invalid_argument&) {
        return true;
    }
    return false;
}

TWIN_CASE(ok_encoded_words) {
    const uint64_t p0 = 0x1000, p1 = 0x2040, p2 = 0x30c0;
    const void* d0 = reinterpret_cast<const void*>(p0);
    const void* d1 = reinterpret_cast<const void*>(p1);
    const void* d2 = reinterpret_cast<const void*>(p2);
    const uint64_t one = uint64_t{1} << 32;

    // CANN's launcher: ptrOffset, per tensor (1 << 32) | rank and the dims, then the pointers.
    twin::EncodedList f = twin::EncodeList({{d0, {4, 5}}, {d1, {7}}});
    Expect(f.Words() == std::vector<uint64_t>{48, one | 2, 4, 5, one | 1, 7, p0, p1}, "framework words differ");
    Expect(f.Length() == 64 && f.Count() == 2, "framework length %u count %u", f.Length(), f.Count());
    Expect(ViewOf(f.Words()).count == 1, "the decoder counts %llu in a framework list, the device says 1",
           Ull(ViewOf(f.Words()).count));
    twin::EncodedList scalars = twin::EncodeList({{d0, {}}, {nullptr, {}}, {d2, {3}}});
    Expect(scalars.Words() == std::vector<uint64_t>{40, one, one, one | 1, 3, p0, 0, p2}, "rank-0/null words differ");
    Expect(twin::EncodeList({}).Words() == std::vector<uint64_t>{8}, "an empty list is the lone word 8");

    // asc-devkit's layout passes the CPU-debug decode assert: count == (ptrOffset - 8) / (descWords * 8).
    twin::EncodedList x = twin::EncodeList({{d0, {4, 5}}, {d1, {7, 1}}, {d2, {0, 9}}}, twin::ListLayout::kIndexed);
    Expect(x.Words() == std::vector<uint64_t>{80, 2, 4, 5, one | 2, 7, 1, (2 * one) | 2, 0, 9, p0, p1, p2},
           "indexed words differ");
    const DecoderView xv = ViewOf(x.Words());
    Expect(xv.count == 3 && xv.count == (xv.ptrOffset - 8) / (xv.descWords * 8), "indexed: decoder count %llu",
           Ull(xv.count));
    for (int trial = 0; trial < 50; ++trial) {  // and for random lists
        const uint32_t n = Draw(1, 100);
        twin::EncodedList r = twin::EncodeList(FakeEntries(Ranks(n, Draw(1, 8))), twin::ListLayout::kIndexed);
        const DecoderView v = ViewOf(r.Words());
        Expect(v.count == n && v.count == (v.ptrOffset - 8) / (v.descWords * 8), "indexed %u: decoder count %llu", n,
               Ull(v.count));
        // CANN's launcher sizes the descriptor as 8 + sum(8 + 8 * rank).
        std::vector<uint32_t> ranks(n);
        uint64_t bytes = 8;
        for (uint32_t& k : ranks) bytes += 8 + 8 * (k = Draw(0, 8));
        Expect(twin::EncodeList(FakeEntries(ranks)).Words()[0] == bytes, "framework ptrOffset differs");
    }

    // No shape info: the CPU-debug assert wants dim 0, word 2 = 0xffffffff and ptrOffset 24.
    twin::EncodedList p = twin::EncodeList({{d0, {}}, {d1, {}}, {d2, {}}}, twin::ListLayout::kPointersOnly);
    Expect(p.Words() == std::vector<uint64_t>{24, 3 * one, 0xffffffffu, p0, p1, p2}, "pointers-only words differ");
    Expect(ViewOf(p.Words()).count == 3, "pointers-only: decoder count %llu", Ull(ViewOf(p.Words()).count));

    Expect(Throws([&] { twin::EncodeList({{d0, {4, -1}}}); }), "a negative dim is accepted");
    Expect(Throws([&] { twin::EncodeList({{d0, {4}}, {d1, {4, 4}}}, twin::ListLayout::kIndexed); }),
           "kIndexed accepts two ranks");
    Expect(Throws([&] { twin::EncodeList({{d0, {}}}, twin::ListLayout::kIndexed); }), "kIndexed accepts rank 0");
    Expect(Throws([&] { twin::EncodeList({}, twin::ListLayout::kPointersOnly); }), "kPointersOnly accepts no entries");
    return Verdict();
}

// ---- abort: GM_BOUNDS ---------------------------------------------------------------------------------------

// Runs k_decode on a list that must make it abort; the list's own region is registered unless regions are given.
int ProbeAbort(twin::EncodedList list, const Probe& probe, const std::vector<twin::GmRegion>* regions = nullptr) {
    Decoded out;
    twin::Launch(k_decode, Config(1, regions != nullptr ? *regions : std::vector<twin::GmRegion>{list.Region()}),
                 list.Addr(), &probe, &out);
    return ExpectedAbort();
}

TWIN_CASE(abort_GM_BOUNDS_list_not_registered) {
    const std::vector<twin::GmRegion> none;
    return ProbeAbort(twin::EncodeList(FakeEntries(Ranks(3, 2))), Probe{}, &none);
}

TWIN_CASE(abort_GM_BOUNDS_list_pointers_not_registered) {
    twin::EncodedList list = twin::EncodeList(FakeEntries(Ranks(3, 2)));
    const std::vector<twin::GmRegion> descriptors = {{list.Words().data(), list.Words()[0]}};
    return ProbeAbort(list, Calls(false, 1, 0), &descriptors);
}

// GetDataObj().GetSize() is sizeof(T) x elements (upstream): copying that many elements runs off the tensor.
__global__ __aicore__ void k_copy_reported_size(GM_ADDR list) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    ListTensorDesc xList(reinterpret_cast<__gm__ void*>(list));
    uint64_t shape[kMaxRank];
    TensorDesc<float> desc;
    desc.SetShapeAddr(shape);
    xList.GetDesc(desc, 0);
    GlobalTensor<float> x = desc.GetDataObj();
    const uint32_t wrongCount = static_cast<uint32_t>(x.GetSize());
    DataCopyPad(buf.Get<float>(), x, DataCopyExtParams{1, wrongCount * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
}

TWIN_CASE(abort_GM_BOUNDS_get_data_obj_size_is_bytes) {
    std::vector<float> x(64);  // the tensor is the first 16 elements
    twin::EncodedList list = twin::EncodeList({{x.data(), {4, 4}}});
    twin::Launch(k_copy_reported_size, Config(1, {list.Region(), Region(x)}), list.Addr());
    return ExpectedAbort();
}

// ---- abort: LIST_LAYOUT -------------------------------------------------------------------------------------

TWIN_CASE(abort_LIST_LAYOUT_null_list) {
    const Probe probe;
    Decoded out;
    twin::Launch(k_decode, Config(1), nullptr, &probe, &out);
    return ExpectedAbort();
}

TWIN_CASE(abort_LIST_LAYOUT_empty_list) { return ProbeAbort(twin::EncodeList({}), Probe{}); }

TWIN_CASE(abort_LIST_LAYOUT_misaligned_list) {
    std::vector<uint64_t> words(8);
    const Probe probe;
    Decoded out;
    twin::Launch(k_decode, Config(1, {Region(words)}), Gm(words) + 4, &probe, &out);
    return ExpectedAbort();
}

// Tensor 1's header claims more dims than there are words before the pointer array.
TWIN_CASE(abort_LIST_LAYOUT_descriptor_overruns_pointers) {
    std::vector<twin::ListEntry> entries = FakeEntries({2, 1, 3});
    twin::EncodedList list = twin::EncodeList(entries);
    std::vector<uint64_t> words = list.Words();
    words[4] = (uint64_t{1} << 32) | 9;  // tensor 1's header
    return ProbeAbort(twin::EncodedList(words, list.Count()), Probe{});
}

// Tensor 0's header claims a rank whose descriptor would put the decoder's count read before the list.
TWIN_CASE(abort_LIST_LAYOUT_first_descriptor_overruns_list) {
    std::vector<twin::ListEntry> entries = FakeEntries({2, 2, 2});
    twin::EncodedList list = twin::EncodeList(entries);
    std::vector<uint64_t> words = list.Words();
    words[1] = (uint64_t{1} << 32) | 20;  // tensor 0's header: 21 descriptor words, the list has 10 before its pointers
    return ProbeAbort(twin::EncodedList(words, list.Count()), Probe{});
}

// ---- abort: LIST_LENGTH -------------------------------------------------------------------------------------

TWIN_CASE(abort_LIST_LENGTH_shape_size) {
    twin::EncodedList list = twin::EncodeList(FakeEntries(Ranks(4, 3)), twin::ListLayout::kIndexed);
    return ProbeAbort(list, Checked(list.Length(), list.Count() + 1));
}

TWIN_CASE(abort_LIST_LENGTH_length) {
    twin::EncodedList list = twin::EncodeList(FakeEntries(Ranks(4, 3)));
    return ProbeAbort(list, Checked(list.Length() - 8, list.Count()));
}

// ---- abort: LIST_INDEX --------------------------------------------------------------------------------------

TWIN_CASE(abort_LIST_INDEX_get_data_ptr) {
    return ProbeAbort(twin::EncodeList(FakeEntries(Ranks(5, 0)), twin::ListLayout::kPointersOnly), Calls(false, 6, 0));
}

TWIN_CASE(abort_LIST_INDEX_get_desc) { return ProbeAbort(twin::EncodeList(FakeEntries(Ranks(5, 2))), Calls(false, 0, 6)); }

__global__ __aicore__ void k_shape_past_rank(GM_ADDR list) {
    ListTensorDesc xList(reinterpret_cast<__gm__ void*>(list));
    uint64_t shape[kMaxRank];
    TensorDesc<half> desc;
    desc.SetShapeAddr(shape);
    xList.GetDesc(desc, 0);
    (void)desc.GetShape(static_cast<uint32_t>(desc.GetDim()));
}

TWIN_CASE(abort_LIST_INDEX_get_shape_past_rank) {
    twin::EncodedList list = twin::EncodeList(FakeEntries(Ranks(2, 3)));
    twin::Launch(k_shape_past_rank, Config(1, {list.Region()}), list.Addr());
    return ExpectedAbort();
}

__global__ __aicore__ void k_uninitialised_list() {
    ListTensorDesc never;
    (void)never.GetDataPtr<float>(0);
}

TWIN_CASE(abort_LIST_INDEX_uninitialised_list) {
    twin::Launch(k_uninitialised_list, Config(1));
    return ExpectedAbort();
}

// ---- abort: LIST_COUNT --------------------------------------------------------------------------------------

// CANN's launcher writes 1 in every header: GetSize() would be 1 on the device for these 3 tensors.
TWIN_CASE(abort_LIST_COUNT_framework_list) {
    return ProbeAbort(twin::EncodeList(FakeEntries(Ranks(3, 1))), Calls(true, 0, 0));
}

// ---- abort: LIST_SHAPE --------------------------------------------------------------------------------------

TWIN_CASE(abort_LIST_SHAPE_no_shape_info) {
    return ProbeAbort(twin::EncodeList(FakeEntries(Ranks(3, 0)), twin::ListLayout::kPointersOnly), Calls(false, 0, 1));
}

// Tensor 0 has rank 0: the decoder sees a list without shape info (the pointers still decode).
TWIN_CASE(abort_LIST_SHAPE_framework_rank0_first) {
    return ProbeAbort(twin::EncodeList(FakeEntries({0, 2, 2})), Calls(false, 3, 1));
}

// Ranks 2, 1, 2: GetDesc(0) is right, GetDesc(1) would read tensor 1's header as a dim on the device.
TWIN_CASE(abort_LIST_SHAPE_mixed_ranks) { return ProbeAbort(twin::EncodeList(FakeEntries({2, 1, 2})), Calls(false, 0, 2)); }

__global__ __aicore__ void k_desc_without_shape_buffer(GM_ADDR list) {
    ListTensorDesc xList(reinterpret_cast<__gm__ void*>(list));
    TensorDesc<float> desc;
    xList.GetDesc(desc, 0);
}

TWIN_CASE(abort_LIST_SHAPE_no_shape_buffer) {
    twin::EncodedList list = twin::EncodeList(FakeEntries(Ranks(2, 2)));
    twin::Launch(k_desc_without_shape_buffer, Config(1, {list.Region()}), list.Addr());
    return ExpectedAbort();
}

__global__ __aicore__ void k_null_shape_buffer() {
    TensorDesc<float> desc;
    desc.SetShapeAddr(nullptr);
}

TWIN_CASE(abort_LIST_SHAPE_null_shape_buffer) {
    twin::Launch(k_null_shape_buffer, Config(1));
    return ExpectedAbort();
}

// ---- abort: LIST_NULL ---------------------------------------------------------------------------------------

TWIN_CASE(abort_LIST_NULL_tensor_without_data) {
    std::vector<twin::ListEntry> entries = FakeEntries(Ranks(3, 2));
    entries[1] = {nullptr, {3, 4}};  // 12 elements and no data
    return ProbeAbort(twin::EncodeList(entries), Calls(false, 0, 2));
}

// ---- abort: BLOCK -------------------------------------------------------------------------------------------

TWIN_CASE(abort_BLOCK_list_outside_launch) {
    twin::EncodedList list = twin::EncodeList(FakeEntries(Ranks(1, 1)));
    ListTensorDesc desc(reinterpret_cast<__gm__ void*>(list.Addr()));
    return ExpectedAbort();
}

// ---- Max: the 910B dtype table (int16_t, half, int32_t, float) ------------------------------------------------

template <class T>
__global__ __aicore__ void k_max(const T* a, const T* b, T* out, uint32_t n) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * 256);
    LocalTensor<T> la = buf.Get<T>();
    LocalTensor<T> lb = la[256 / sizeof(T)];
    LocalTensor<T> ld = la[512 / sizeof(T)];
    for (uint32_t i = 0; i < n; ++i) {
        la.SetValue(i, a[i]);
        lb.SetValue(i, b[i]);
    }
    Max(ld, la, lb, static_cast<int32_t>(n));
    for (uint32_t i = 0; i < n; ++i) out[i] = ld.GetValue(i);
}

template <class T>
void CheckMax(const char* type) {
    const uint32_t n = Draw(1, 256 / sizeof(T));
    std::vector<T> a(n), b(n), out(n);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = static_cast<T>(static_cast<int32_t>(Draw(0, 2000)) - 1000);
        b[i] = static_cast<T>(static_cast<int32_t>(Draw(0, 2000)) - 1000);
    }
    twin::Launch(k_max<T>, Config(1), a.data(), b.data(), out.data(), n);
    for (uint32_t i = 0; i < n; ++i) {
        const float want = static_cast<float>(a[i]) > static_cast<float>(b[i]) ? static_cast<float>(a[i])
                                                                              : static_cast<float>(b[i]);
        Expect(static_cast<float>(out[i]) == want, "Max<%s>[%u] = %g, want %g", type, i, static_cast<float>(out[i]),
               want);
    }
}

TWIN_CASE(ok_max_dtype_table) {
    CheckMax<int16_t>("int16_t");
    CheckMax<half>("half");
    CheckMax<int32_t>("int32_t");
    CheckMax<float>("float");
    return Verdict();
}

TWIN_CASE(abort_DTYPE_max_bfloat16) {
    std::vector<bfloat16_t> a(16, bfloat16_t(1.0f)), b(16, bfloat16_t(2.0f)), out(16);
    twin::Launch(k_max<bfloat16_t>, Config(1), a.data(), b.data(), out.data(), 16u);
    return ExpectedAbort();
}

}  // namespace

int main(int argc, char** argv) { return twin_test::RunCases(argc, argv); }
