// Tensor lists of the CPU twin: the c220 decoder with the twin's checks (twin_list_tensor.h) and the host-side
// encoder (twin_list_launch.h).
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernel_operator_list_tensor_intf.h"
#include "twin_list_launch.h"

namespace twin::detail {

namespace {

constexpr uint32_t kUnchecked = 0xffffffffu;  // ListTensorDesc's default length/shapeSize: no check
constexpr uint64_t kWordBytes = sizeof(uint64_t);

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

uint64_t Word(const uint8_t* base, uint64_t index) {
    uint64_t w;
    std::memcpy(&w, base + index * kWordBytes, sizeof w);
    return w;
}

// A word the device decoder reads: GM_BOUNDS, then one scalar GM read of 8 B.
uint64_t ReadWord(BlockContext& ctx, const char* call, const uint8_t* base, uint64_t index) {
    CheckGm(ctx, call, nullptr, 0, base + index * kWordBytes, kWordBytes);
    ctx.counters.gmScalarReadBytes += kWordBytes;
    return Word(base, index);
}

// Walks the descriptors of a list with shape info (each a header and its rank's dims) up to the pointer array:
// how many tensors there are, and how many leading ones have rank dim. Twin-only: not counted as traffic.
void Walk(ListState& st, uint64_t ptrWords, const char* call) {
    uint64_t pos = 1;
    uint32_t tensors = 0;
    uint32_t uniform = 0;
    bool run = st.dim != 0;
    while (pos < ptrWords) {
        const uint64_t rank = Word(st.base, pos) & 0xffffffffu;
        if (rank > ptrWords - pos - 1) {
            Fail("LIST_LAYOUT", call,
                 "tensor %u's header (word %llu) claims rank %llu, which runs past the pointer array at word %llu: "
                 "not a tensor list",
                 tensors, Ull(pos), Ull(rank), Ull(ptrWords));
        }
        run = run && rank == st.dim;
        uniform += run ? 1 : 0;
        pos += 1 + rank;
        ++tensors;
    }
    st.tensors = tensors;
    st.uniform = uniform;
}

}  // namespace

void DecodeList(ListState& st, const void* data, uint32_t length, uint32_t shapeSize) {
    const char* call = "ListTensorDesc::Init";
    BlockContext& ctx = Block(call);
    if (data == nullptr) Fail("LIST_LAYOUT", call, "the list address is null (an absent list has no descriptor)");
    if (reinterpret_cast<uintptr_t>(data) % kWordBytes != 0) {
        Fail("LIST_LAYOUT", call, "the list address %p is not 8-B aligned", data);
    }
    ListState s;
    s.base = static_cast<const uint8_t*>(data);
    const uint64_t ptrOffset = ReadWord(ctx, call, s.base, 0);
    if (ptrOffset % kWordBytes != 0) {
        Fail("LIST_LAYOUT", call, "word 0 (the pointer array's byte offset) is %llu, not a multiple of 8",
             Ull(ptrOffset));
    }
    if (ptrOffset < 2 * kWordBytes) {
        Fail("LIST_LAYOUT", call,
             "word 0 is %llu: an empty list has no header for the decoder to read (it would read past the list); "
             "do not open an empty list",
             Ull(ptrOffset));
    }
    const uint64_t ptrWords = ptrOffset / kWordBytes;
    // The whole descriptor area, which the decoder reads in parts and the twin walks.
    CheckGm(ctx, call, nullptr, 0, s.base + kWordBytes, ptrOffset - kWordBytes);
    s.pointers = reinterpret_cast<const uint64_t*>(s.base + ptrOffset);

    const uint64_t header = ReadWord(ctx, call, s.base, 1);
    s.dim = static_cast<uint32_t>(header);
    const uint64_t descWords = s.dim == 0 ? 2 : uint64_t{1} + s.dim;
    // The decoder reads the last descriptor's header at word ptrWords - descWords: word 0 at the earliest (one
    // tensor of rank 0 reads the offset word itself, whose high half is 0: count 1, right).
    if (descWords > ptrWords) {
        Fail("LIST_LAYOUT", call, "tensor 0's header (word 1) claims rank %u, which runs past the pointer array at word %llu",
             s.dim, Ull(ptrWords));
    }
    s.descWords = static_cast<uint32_t>(descWords);
    const uint32_t high = static_cast<uint32_t>(header >> 32);
    // The decoder's count: word 1's high half, or the last descriptor's (as it sizes them) plus one.
    s.count = high != 0 ? high : static_cast<uint32_t>(ReadWord(ctx, call, s.base, ptrWords - descWords) >> 32) + 1;

    if (s.dim == 0 && ptrOffset == 3 * kWordBytes && Word(s.base, 2) == kListNoShapeMarker) {
        s.tensors = s.count;  // the no-shape form: the header's count is all there is
        s.uniform = 0;
    } else {
        Walk(s, ptrWords, call);
    }

    if (length != kUnchecked && shapeSize != kUnchecked) {
        if (s.tensors != shapeSize) {
            Fail("LIST_LENGTH", call, "shapeSize is %u but the list holds %u tensors", shapeSize, s.tensors);
        }
        const uint64_t bytes = ptrOffset + uint64_t{s.tensors} * kWordBytes;
        if (length != bytes) {
            Fail("LIST_LENGTH", call, "length is %u B but the list's %u tensors take %llu B (descriptors and pointers)",
                 length, s.tensors, Ull(bytes));
        }
    }
    st = s;
}

uint64_t ListPointer(const ListState& st, uint32_t index, const char* call) {
    BlockContext& ctx = Block(call);
    if (index >= st.tensors) {
        Fail("LIST_INDEX", call, "index %u, but the list holds %u tensors%s", index, st.tensors,
             st.base == nullptr ? " (ListTensorDesc never initialised)" : "");
    }
    CheckGm(ctx, call, nullptr, 0, st.pointers + index, kWordBytes);
    ctx.counters.gmScalarReadBytes += kWordBytes;
    uint64_t p;
    std::memcpy(&p, st.pointers + index, sizeof p);
    return p;
}

uint32_t ListSize(const ListState& st) {
    const char* call = "ListTensorDesc::GetSize";
    Block(call);
    if (st.count != st.tensors) {
        Fail("LIST_COUNT", call,
             "the list holds %u tensors but its headers make the decoder count %u (CANN's launcher writes 1 in every "
             "header): the device would return %u; take the count from the tiling",
             st.tensors, st.count, st.count);
    }
    return st.count;
}

uint64_t ListDescriptor(const ListState& st, uint32_t index, uint64_t* shapeOut) {
    const char* call = "ListTensorDesc::GetDesc";
    BlockContext& ctx = Block(call);
    if (index >= st.tensors) {
        Fail("LIST_INDEX", call, "index %u, but the list holds %u tensors%s", index, st.tensors,
             st.base == nullptr ? " (ListTensorDesc never initialised)" : "");
    }
    if (st.dim == 0) {
        Fail("LIST_SHAPE", call,
             "the list carries no shape info (tensor 0's header says rank 0): only GetDataPtr works on it");
    }
    if (shapeOut == nullptr) {
        Fail("LIST_SHAPE", call, "no shape buffer for tensor %u: call TensorDesc::SetShapeAddr first", index);
    }
    if (index >= st.uniform) {
        Fail("LIST_SHAPE", call,
             "tensor %u: the decoder takes every descriptor to be tensor 0's size (rank %u), but tensor %u has "
             "another rank, so the device would copy the wrong words; GetDesc only works on lists of one rank",
             index, st.dim, st.uniform);
    }
    const uint64_t ptr = ListPointer(st, index, call);
    const uint8_t* dims = st.base + (1 + uint64_t{index} * st.descWords + 1) * kWordBytes;
    const uint64_t bytes = uint64_t{st.dim} * kWordBytes;
    CheckGm(ctx, call, nullptr, 0, dims, bytes);
    ctx.counters.gmScalarReadBytes += bytes;
    std::memcpy(shapeOut, dims, bytes);
    // CPU-debug asserts every pointer GetDesc hands out is non-null; the device does not care, and an empty
    // tensor may well have no data, so only a tensor with elements must have a pointer.
    uint64_t elems = 1;
    for (uint32_t i = 0; i < st.dim; ++i) elems *= shapeOut[i];
    if (ptr == 0 && elems != 0) {
        Fail("LIST_NULL", call, "tensor %u has %llu elements and a null data pointer (an absent entry)", index,
             Ull(elems));
    }
    return ptr;
}

void ShapeIndexFail(uint32_t offset, uint32_t dim) {
    Fail("LIST_INDEX", "TensorDesc::GetShape", "offset %u, but the tensor has rank %u", offset, dim);
}

void NullShapeAddrFail() { Fail("LIST_SHAPE", "TensorDesc::SetShapeAddr", "the shape buffer is null"); }

}  // namespace twin::detail

namespace twin {

namespace {

constexpr uint64_t kMax32 = 0xffffffffu;

[[noreturn]] void Reject(const std::string& what) { throw std::invalid_argument("twin::EncodeList: " + what); }

void AppendShape(std::vector<uint64_t>& words, uint64_t high, const ListEntry& e, size_t i) {
    if (e.shape.size() > kMax32) Reject("entry " + std::to_string(i) + " has 2^32 or more dims");
    words.push_back((high << 32) | e.shape.size());
    for (const int64_t d : e.shape) {
        if (d < 0) Reject("entry " + std::to_string(i) + " has a negative dim " + std::to_string(d));
        words.push_back(static_cast<uint64_t>(d));
    }
}

}  // namespace

EncodedList EncodeList(const std::vector<ListEntry>& entries, ListLayout layout) {
    const size_t n = entries.size();
    if (n > kMax32) Reject("2^32 or more entries");
    std::vector<uint64_t> words{0};  // word 0, the pointer array's offset, is filled in below
    switch (layout) {
        case ListLayout::kFramework:
            for (size_t i = 0; i < n; ++i) AppendShape(words, 1, entries[i], i);
            break;
        case ListLayout::kIndexed:
            for (size_t i = 0; i < n; ++i) {
                if (entries[i].shape.empty() || entries[i].shape.size() != entries[0].shape.size()) {
                    Reject("kIndexed needs one rank >= 1 for every entry; entry " + std::to_string(i) + " has rank " +
                           std::to_string(entries[i].shape.size()) + ", entry 0 rank " +
                           std::to_string(entries[0].shape.size()));
                }
                AppendShape(words, i, entries[i], i);
            }
            break;
        case ListLayout::kPointersOnly:
            if (n == 0) Reject("kPointersOnly cannot express an empty list (the decoder would count 1)");
            words.push_back(static_cast<uint64_t>(n) << 32);
            words.push_back(detail::kListNoShapeMarker);
            break;
    }
    words[0] = words.size() * sizeof(uint64_t);
    for (const ListEntry& e : entries) words.push_back(reinterpret_cast<uintptr_t>(e.data));
    return EncodedList(std::move(words), static_cast<uint32_t>(n));
}

}  // namespace twin
