// tools/ascendc_check/run.py --emulate: self-tests of the emulated intrinsics (emulate/emu_intrinsics.h), called DIRECTLY
// on buffers standing in for UB (32-B aligned) and GM. For every test the program writes <out>/<test>.json (the
// parameters) and the raw bytes of each buffer before (<test>.<buffer>.in) and after (<test>.<buffer>.out) the
// instructions ran. intrinsics_selftest.py computes the expected bytes from the documented rules, independently of
// this file and of the emulation, and compares them bit for bit.
//
//   intrinsics_selftest <out dir> [<seed>]
//
// Covered: vadd vsub vmul vdiv vmax vmin, vadds vmuls vmaxs vmins, vsqrt, vabs (float and half), vector_dup (float,
// half, bf16, int16, int32); normal mask mode with partial masks (low and high words), mask 0, counter mode with a
// count ending in a partial last repeat (the repeat argument and the high mask word ignored), repeats 1/3/255, block
// strides 0/1/2, repeat strides 0/8/10 and destination strides unlike the sources', in-place and the documented
// dst == src1 accumulation; every vconv_* on special values (+-0, +-inf, NaN, subnormals, ties, values past the
// 16-bit maximum) and random values with CTRL[48] set and cleared; copy_gm_to_ubuf_align_b8/16/32 with left/right
// padding and gaps, copy_ubuf_to_gm_align_b8/16/32, copy_gm_to_ubuf / copy_ubuf_to_gm; sff0, sbitset0, sbitset1;
// get_ctrl / set_ctrl. For the 8-bit kernel: vconv_u82f16, vconv_f162s32*, vconv_f162u8*, vconv_f322s32* (ties,
// values past the integer range and infinities, which saturate); int32 vadd vsub vmul vmax vmin vadds vmuls vmaxs
// vmins; vgather (32- and 16-bit, masks, counter mode, a destination repeat stride); vcmpv_* (every mode, float and
// half, source strides, int32 EQ); set_cmpmask + vsel in VSEL_TENSOR_TENSOR_MODE (counter and normal mode, strides);
// and the calls the emulation refuses (a NaN or a negative value into an integer conversion, int32 overflow, a gather
// offset misaligned or past the table, vsel mode 0, vcmpv in counter mode, int32 vdiv): each must abort, naming it.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

// The types the emulated intrinsics are written against, as the generated stub_fun.h provides them.
#include "../../intrinsic_types.h"
#include "kernel_bf16.h"
#include "kernel_fp16.h"
// The emulated intrinsics themselves.
#include "../emu_intrinsics.h"

namespace {

using Bf16 = bfloat16::Bf16T;

std::string g_out;
int g_tests = 0;

// ---- random values ------------------------------------------------------------------------------------------
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL) {}
    uint64_t Next()
    {
        s_ ^= s_ << 13;
        s_ ^= s_ >> 7;
        s_ ^= s_ << 17;
        return s_;
    }
    uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }
    bool Chance(uint32_t percent) { return Below(100) < percent; }

private:
    uint64_t s_;
};

Rng* g_rng = nullptr;

// Special float32 values (bit patterns): signed zeros, infinities, NaNs (quiet, signalling, with payload),
// subnormals, the extremes, values around the half maximum, ties of the half and bf16 roundings (normal and
// subnormal), halves for the integral roundings.
const uint32_t kF32Specials[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fa12345,
    0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff,
    0x477fe000 /* 65504 */, 0x477fefff /* 65519.998 */, 0x477ff000 /* 65520 */, 0xc77ff000, 0x477ff001,
    0x47800000 /* 65536 */, 0x47c35000 /* 1e5 */, 0xc7c35000, 0x501502f9 /* 1e10 */,
    0x3f801000 /* 1 + 2^-11 */, 0x3f803000 /* 1 + 3 * 2^-11 */, 0xbf801000, 0xbf803000, 0x3f800800, 0x3f801800,
    0x33000000 /* 2^-25 */, 0xb3000000, 0x33400000 /* 3 * 2^-25 */, 0x33800000 /* 2^-24 */, 0x33c00000,
    0x32800000 /* 2^-26 */, 0x387fe000 /* 2^-14 - 2^-25 */, 0x387fc000, 0x38800000 /* 2^-14 */, 0xb87fe000,
    0x3f808000 /* 1 + 2^-8 */, 0x3f818000 /* 1 + 3 * 2^-8 */, 0xbf808000, 0xbf818000, 0x3f804000, 0x3f80c000,
    0x00008000 /* 2^-134 */, 0x00018000, 0x00010000 /* 2^-133 */, 0x80008000, 0x00004000,
    0x7f7f0000 /* bf16 max */, 0x7f7f8000, 0x7f7f7fff, 0xff7f8000, 0x00ff8000, 0x00808000,
    0x3f000000 /* 0.5 */, 0x3fc00000 /* 1.5 */, 0x40200000 /* 2.5 */, 0xbf000000, 0xbfc00000, 0xc0200000,
    0x3e99999a /* 0.3 */, 0xbe99999a, 0x3effffff /* 0.49999997 */, 0x4affffff /* 8388607.5 */, 0xcaffffff,
    0x4b7fffff /* 16777215 */, 0x000116c2 /* 1e-40 */, 0x3f800000, 0xbf800000, 0x4b000001,
};
const uint16_t kF16Specials[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x7d23, 0x0001, 0x8001,
                                 0x03ff, 0x83ff, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3c01, 0x3555,
                                 0x5bff, 0x7800, 0x0200, 0x3800};
const uint16_t kBf16Specials[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0x0001, 0x8001,
                                  0x007f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3f81};

enum class Dt { kF32, kF16, kBf16, kI16, kI32, kU8 };
const char* DtName(Dt dt)
{
    switch (dt) {
        case Dt::kF32: return "float32";
        case Dt::kF16: return "float16";
        case Dt::kBf16: return "bfloat16";
        case Dt::kI16: return "int16";
        case Dt::kI32: return "int32";
        case Dt::kU8: return "uint8";
    }
    return "?";
}
uint32_t DtBytes(Dt dt) { return dt == Dt::kF32 || dt == Dt::kI32 ? 4 : dt == Dt::kU8 ? 1 : 2; }

// How the values of a buffer are drawn.
enum class Profile {
    kArith,     // moderate magnitudes, 10 % specials (arithmetic operands)
    kPositive,  // as kArith, sign cleared (vsqrt)
    kConvert,   // the special list first, then ties and random bits over the whole range
    kIntegral,  // magnitudes around 1..2^24 with fractions and ties (vconv_f322f32*)
    kToInt,     // no NaN (no documented integer result): specials first (+-0, ties, values past int32 and uint8, +-inf),
                // then values with fractions and ties over the integer range (conversions to int32 / uint8)
    kToUnsigned,  // as kToInt, non-negative (a negative input into uint8 is an error)
    kSmallInt,  // int32 values within +-2^14 (int32 arithmetic: sums and products stay in range)
};

// Sources of the conversions to integers (bit patterns; no NaN): zeros, ties at .5, around 255 / 256, the
// int32 limits, far past them, infinities.
const uint32_t kF32ToIntSpecials[] = {
    0x00000000, 0x80000000, 0x3f000000 /* 0.5 */, 0x3fc00000 /* 1.5 */, 0x40200000 /* 2.5 */, 0xbf000000,
    0xbfc00000, 0xc0200000, 0x3effffff, 0x437f0000 /* 255 */, 0x437f8000 /* 255.5 */, 0x43800000 /* 256 */,
    0x4effffff /* 2^31 - 128 */, 0x4f000000 /* 2^31 */, 0xcf000000 /* -2^31 */, 0xcf000001, 0x501502f9 /* 1e10 */,
    0xd01502f9, 0x4affffff /* 8388607.5 */, 0xcaffffff, 0x7f800000, 0xff800000, 0x00000001, 0x3e99999a};
const uint16_t kF16ToIntSpecials[] = {0x0000, 0x8000, 0x3800 /* 0.5 */, 0x3e00 /* 1.5 */, 0x4100 /* 2.5 */,
                                      0xb800, 0xbe00, 0xc100, 0x5bf8 /* 255 */, 0x5bfc /* 255.5 */,
                                      0x5c00 /* 256 */, 0x7bff /* 65504 */, 0xfbff, 0x7c00, 0xfc00, 0x0001,
                                      0x3555, 0x57fe /* 127.5 */};

uint32_t RandomF32(Profile p)
{
    Rng& r = *g_rng;
    const uint32_t sign = static_cast<uint32_t>(r.Next() & 1) << 31;
    const uint32_t man = static_cast<uint32_t>(r.Next()) & 0x7fffff;
    if (p == Profile::kIntegral) {
        const uint32_t e = 127 - 3 + r.Below(28);           // 2^-3 .. 2^24
        uint32_t m = man;
        if (r.Chance(30)) {                                 // a tie: exactly .5 at the integer position
            const int frac = static_cast<int>(e) - 127;     // bits above the point in the mantissa
            if (frac >= 0 && frac < 23) m = (man & ~((1u << (23 - frac)) - 1)) | (1u << (22 - frac));
        }
        return sign | (e << 23) | m;
    }
    if (p == Profile::kConvert) {
        switch (r.Below(6)) {
            case 0: return sign | ((127 - 30 + r.Below(50)) << 23) | (man & ~0x1fffu) | 0x1000;  // a half tie
            case 1: return sign | ((1 + r.Below(254)) << 23) | (man & ~0xffffu) | 0x8000;        // a bf16 tie
            case 2: return sign | ((127 - 27 + r.Below(14)) << 23) | man;  // the half subnormal range
            case 3: return sign | ((127 + 14 + r.Below(4)) << 23) | man;   // around the half maximum
            case 4: return sign | ((r.Below(6)) << 23) | man;              // f32 / bf16 subnormals
            default: return sign | (r.Below(255) << 23) | man;             // anything finite
        }
    }
    if (r.Chance(10)) {
        return kF32Specials[r.Below(sizeof kF32Specials / 4)] & (p == Profile::kPositive ? 0x7fffffffu : ~0u);
    }
    const uint32_t e = 127 - 20 + r.Below(40);
    return (p == Profile::kPositive ? 0 : sign) | (e << 23) | man;
}

uint16_t Random16(Dt dt, Profile p)
{
    Rng& r = *g_rng;
    const uint16_t sign = p == Profile::kPositive ? 0 : static_cast<uint16_t>((r.Next() & 1) << 15);
    const uint16_t keep = p == Profile::kPositive ? 0x7fff : 0xffff;
    if (dt == Dt::kF16) {
        if (r.Chance(10)) return kF16Specials[r.Below(sizeof kF16Specials / 2)] & keep;
        return static_cast<uint16_t>(sign | ((1 + r.Below(30)) << 10) | (r.Next() & 0x3ff));
    }
    if (dt == Dt::kBf16) {
        if (r.Chance(10)) return kBf16Specials[r.Below(sizeof kBf16Specials / 2)] & keep;
        return static_cast<uint16_t>(sign | ((127 - 30 + r.Below(60)) << 7) | (r.Next() & 0x7f));
    }
    return static_cast<uint16_t>(r.Next());
}

/** A source value of a conversion to an integer (no NaN; kToUnsigned: non-negative). */
uint32_t ToIntSource(Dt dt, uint64_t i, Profile prof)
{
    Rng& r = *g_rng;
    const bool positive = prof == Profile::kToUnsigned;
    const uint32_t signBit = dt == Dt::kF32 ? 0x80000000u : 0x8000u;
    uint32_t v;
    if (dt == Dt::kF32 && i < sizeof kF32ToIntSpecials / 4) {
        v = kF32ToIntSpecials[i];
    } else if (dt == Dt::kF16 && i < sizeof kF16ToIntSpecials / 2) {
        v = kF16ToIntSpecials[i];
    } else if (dt == Dt::kF32) {  // 2^-2 .. 2^33, a third of them ties at .5
        const uint32_t e = 127 - 2 + r.Below(36);
        uint32_t m = static_cast<uint32_t>(r.Next()) & 0x7fffff;
        const int frac = static_cast<int>(e) - 127;
        if (r.Chance(30) && frac >= 0 && frac < 23) m = (m & ~((1u << (23 - frac)) - 1)) | (1u << (22 - frac));
        v = static_cast<uint32_t>(r.Next() & 1) << 31 | e << 23 | m;
    } else {  // half: 2^-2 .. 2^15, ties likewise
        const uint32_t e = 15 - 2 + r.Below(17);
        uint32_t m = static_cast<uint32_t>(r.Next()) & 0x3ff;
        const int frac = static_cast<int>(e) - 15;
        if (r.Chance(30) && frac >= 0 && frac < 10) m = (m & ~((1u << (10 - frac)) - 1)) | (1u << (9 - frac));
        v = static_cast<uint32_t>(r.Next() & 1) << 15 | e << 10 | m;
    }
    return positive ? v & ~signBit : v;
}

/** Fills n bytes with elements of dt: the profile's specials first (kConvert), then random values. */
void Fill(uint8_t* p, uint64_t bytes, Dt dt, Profile prof)
{
    const uint32_t e = DtBytes(dt);
    for (uint64_t i = 0; i * e < bytes; ++i) {
        if (dt == Dt::kU8) {
            p[i] = static_cast<uint8_t>(g_rng->Next());
            continue;
        }
        if (prof == Profile::kToInt || prof == Profile::kToUnsigned) {
            const uint32_t v = ToIntSource(dt, i, prof);
            std::memcpy(p + i * e, &v, e);  // little-endian: the low 16 bits for half
            continue;
        }
        if (dt == Dt::kI32 && prof == Profile::kSmallInt) {
            const int32_t v = static_cast<int32_t>(g_rng->Below(1u << 15)) - (1 << 14);
            std::memcpy(p + i * 4, &v, 4);
            continue;
        }
        if (dt == Dt::kF32) {
            uint32_t v = prof == Profile::kConvert && i < sizeof kF32Specials / 4 ? kF32Specials[i] : RandomF32(prof);
            std::memcpy(p + i * 4, &v, 4);
        } else if (dt == Dt::kI32) {
            uint32_t v = static_cast<uint32_t>(g_rng->Next());
            std::memcpy(p + i * 4, &v, 4);
        } else {
            uint16_t v;
            if (prof == Profile::kConvert && dt == Dt::kF16 && i < sizeof kF16Specials / 2) v = kF16Specials[i];
            else if (prof == Profile::kConvert && dt == Dt::kBf16 && i < sizeof kBf16Specials / 2) v = kBf16Specials[i];
            else v = Random16(dt, prof);
            std::memcpy(p + i * 2, &v, 2);
        }
    }
}

// ---- buffers and output -------------------------------------------------------------------------------------
/** A buffer standing in for UB or GM: 32-B aligned (64 in fact), zero-initialised, freed at scope end. */
class Buffer {
public:
    explicit Buffer(uint64_t bytes) : n_((bytes + 63) & ~uint64_t{63})
    {
        p_ = static_cast<uint8_t*>(std::aligned_alloc(64, n_));
        std::memset(p_, 0, n_);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { std::free(p_); }
    uint8_t* data() const { return p_; }
    uint64_t size() const { return n_; }

private:
    uint8_t* p_;
    uint64_t n_;
};

void WriteFile(const std::string& path, const uint8_t* p, uint64_t n)
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || (n != 0 && std::fwrite(p, 1, n, f) != n)) {
        std::perror(path.c_str());
        std::exit(2);
    }
    std::fclose(f);
}

/** A test's JSON object, built field by field. */
class Json {
public:
    Json& Str(const char* k, const std::string& v)
    {
        Key(k);
        s_ << '"' << v << '"';
        return *this;
    }
    Json& Num(const char* k, uint64_t v)
    {
        Key(k);
        s_ << v;
        return *this;
    }
    Json& SNum(const char* k, int64_t v)
    {
        Key(k);
        s_ << v;
        return *this;
    }
    Json& Raw(const char* k, const std::string& v)
    {
        Key(k);
        s_ << v;
        return *this;
    }
    std::string Text() const { return "{" + s_.str() + "}"; }

private:
    void Key(const char* k)
    {
        if (!first_) s_ << ", ";
        first_ = false;
        s_ << '"' << k << "\": ";
    }
    std::ostringstream s_;
    bool first_ = true;
};

/** Before the instructions of a test: a fresh core, CTRL[48] as asked (through get_ctrl / set_ctrl). */
void FreshCore(bool saturation)
{
    ascendc_emu::SetSaturationMode(false);  // ResetCore: registers, flags, clocks, counters
    const uint64_t bit = uint64_t{1} << 48;
    const uint64_t ctrl = static_cast<uint64_t>(get_ctrl());
    set_ctrl(saturation ? (ctrl & ~bit) : (ctrl | bit));
}

struct Named {
    const char* name;
    const Buffer* buf;
};

/** Writes <test>.json and, per buffer, <test>.<name>.in (taken before) and .out (now). */
void Emit(const std::string& test, Json& j, const std::vector<Named>& bufs,
          const std::vector<std::vector<uint8_t>>& before)
{
    std::string names;
    for (size_t i = 0; i < bufs.size(); ++i) {
        names += std::string(i ? ", " : "") + "\"" + bufs[i].name + "\"";
        WriteFile(g_out + "/" + test + "." + bufs[i].name + ".in", before[i].data(), before[i].size());
        WriteFile(g_out + "/" + test + "." + bufs[i].name + ".out", bufs[i].buf->data(), bufs[i].buf->size());
    }
    j.Str("name", test).Raw("buffers", "[" + names + "]");
    j.Num("hazards", ascendc_emu::BlockCounters().hazards);
    j.Num("ctrl_after", static_cast<uint64_t>(get_ctrl()));
    const std::string text = j.Text() + "\n";
    WriteFile(g_out + "/" + test + ".json", reinterpret_cast<const uint8_t*>(text.data()), text.size());
    ++g_tests;
}

std::vector<uint8_t> Snapshot(const Buffer& b) { return std::vector<uint8_t>(b.data(), b.data() + b.size()); }

// ---- vector instructions ------------------------------------------------------------------------------------
struct Opnd {
    uint32_t off;  // bytes from the UB buffer's start (a multiple of 32)
    uint32_t blk;  // block stride, 32-B units
    uint32_t rep;  // repeat stride, 32-B units
};

struct Mask {
    bool counter;
    uint64_t high;
    uint64_t low;
};

const Mask kFull{false, ~uint64_t{0}, ~uint64_t{0}};

std::string OpndJson(const Opnd& o)
{
    return "[" + std::to_string(o.off) + ", " + std::to_string(o.blk) + ", " + std::to_string(o.rep) + "]";
}

/** Bytes the operands reach, rounded up, with a slack block. */
uint64_t Reach(const std::vector<Opnd>& ops, uint64_t repeats)
{
    uint64_t end = 0;
    for (const Opnd& o : ops) {
        const uint64_t last = o.off + ((repeats == 0 ? 0 : repeats - 1) * o.rep + 7ull * o.blk) * 32 + 32;
        end = last > end ? last : end;
    }
    return end + 64;
}

/** One vector test: UB filled with `fill` elements, the mask and CTRL set, `issue(ub)` runs the instruction(s). */
void VectorTest(const std::string& name, const std::string& op, Dt dst, Dt src, const Opnd& d,
                const std::vector<Opnd>& srcs, uint64_t repeat, const Mask& m, bool sat, Profile prof,
                const std::function<void(uint8_t*)>& issue, const std::string& scalarJson = "")
{
    std::vector<Opnd> all = srcs;
    all.push_back(d);
    const uint32_t widest = DtBytes(dst) > DtBytes(src) ? DtBytes(dst) : DtBytes(src);
    const uint64_t lanes = 256 / widest;
    const uint64_t repeats = m.counter ? (m.low + lanes - 1) / lanes : repeat;
    Buffer ub(Reach(all, repeats));
    Fill(ub.data(), ub.size(), src, prof);
    std::vector<std::vector<uint8_t>> before{Snapshot(ub)};
    FreshCore(sat);
    if (m.counter) set_mask_count();
    else set_mask_norm();
    set_vector_mask(m.high, m.low);
    issue(ub.data());
    std::string srcList;
    for (size_t i = 0; i < srcs.size(); ++i) srcList += (i ? ", " : "") + OpndJson(srcs[i]);
    Json j;
    j.Str("kind", "vector").Str("op", op).Str("dst_dtype", DtName(dst)).Str("src_dtype", DtName(src));
    j.Raw("dst", OpndJson(d)).Raw("srcs", "[" + srcList + "]").Num("repeat", repeat);
    j.Num("counter", m.counter).Num("mask_high", m.high).Num("mask_low", m.low).Num("saturation", sat);
    if (!scalarJson.empty()) j.Raw("scalar", scalarJson);
    Emit(name, j, {{"ub", &ub}}, before);
}

template <class T>
T* At(uint8_t* ub, const Opnd& o)
{
    return reinterpret_cast<T*>(ub + o.off);
}

// The configurations every arithmetic instruction runs (name, operands, repeat, mask); `s` is the source element
// size, so the operand regions are laid out without overlapping (unless a test asks for it).
struct Layout {
    std::string tag;
    std::vector<Opnd> ops;  // dst first, then the sources
    uint64_t repeat;
    Mask mask;
};

std::vector<Layout> Layouts(uint32_t elemBytes, int sources)
{
    const uint64_t partialLow = g_rng->Next() | 1, partialHigh = g_rng->Next() & ~(uint64_t{1} << 63);
    const bool half = elemBytes == 2;
    const uint64_t lanes = 256 / elemBytes;
    auto seq = [sources](std::vector<Opnd> ops) {
        ops.resize(1 + static_cast<size_t>(sources));
        return ops;
    };
    std::vector<Layout> out;
    // Contiguous operands (block stride 1, repeat stride 8), every mask bit, 3 repeats.
    out.push_back({"full_r3", seq({{0, 1, 8}, {1024, 1, 8}, {2048, 1, 8}}), 3, kFull});
    // Normal mode, a partial mask: the low word (32-bit: the only one; 16-bit: lanes 0-63) and the high word.
    out.push_back({"mask_partial_r3", seq({{0, 1, 8}, {1024, 1, 8}, {2048, 1, 8}}), 3,
                   {false, half ? partialHigh : 0, partialLow}});
    if (half) {  // only the high word: lanes 64-127
        out.push_back({"mask_high_only_r2", seq({{0, 1, 8}, {1024, 1, 8}, {2048, 1, 8}}), 2, {false, partialHigh, 0}});
    }
    // Counter mode: 2 full repeats and a partial one; the repeat argument (7) and the high word are ignored.
    out.push_back({"counter_tail", seq({{0, 1, 8}, {1024, 1, 8}, {2048, 1, 8}}), 7,
                   {true, 0xdeadbeefull, 2 * lanes + 37}});
    // Strides: src0 block stride 2 / repeat stride 16, src1 block stride 0 (its first block 8 times) / repeat
    // stride 1; dst repeat stride 10 (2 blocks skipped between repeats).
    out.push_back({"strides_a_r3", seq({{0, 1, 10}, {2048, 2, 16}, {4096, 0, 1}}), 3, kFull});
    // dst block stride 2 / repeat stride 20, src0 repeat stride 0 (the same 8 blocks every repeat), src1 repeat 10.
    out.push_back({"strides_b_r3", seq({{0, 2, 20}, {2048, 1, 0}, {4096, 1, 10}}), 3, kFull});
    // Counter mode with strides: the partial last repeat at its strided place.
    out.push_back({"strides_counter", seq({{0, 2, 16}, {2048, 1, 10}, {4096, 2, 16}}), 1,
                   {true, 0, lanes + 5}});
    // One repeat, a partial mask, block stride 2 on every operand.
    out.push_back({"strides_mask_r1", seq({{0, 2, 8}, {1024, 2, 8}, {2048, 2, 8}}), 1,
                   {false, half ? partialHigh : 0, partialLow}});
    return out;
}

using F16 = half;

template <class T>
void BinaryTests(Dt dt)
{
    struct Op {
        const char* name;
        void (*fn)(T*, T*, T*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
    };
    const Op ops[] = {{"vadd", vadd<T>}, {"vsub", vsub<T>}, {"vmul", vmul<T>},
                      {"vdiv", vdiv<T>}, {"vmax", vmax<T>}, {"vmin", vmin<T>}};
    for (const Op& op : ops) {
        for (const Layout& l : Layouts(DtBytes(dt), 2)) {
            for (bool sat : {false, true}) {
                if (sat && dt == Dt::kF32 && l.tag != "full_r3") continue;  // fp32 results ignore CTRL[48]
                const std::string name = std::string(op.name) + "_" + DtName(dt) + "_" + l.tag + (sat ? "_sat" : "");
                VectorTest(name, op.name, dt, dt, l.ops[0], {l.ops[1], l.ops[2]}, l.repeat, l.mask, sat,
                           Profile::kArith, [&](uint8_t* ub) {
                               op.fn(At<T>(ub, l.ops[0]), At<T>(ub, l.ops[1]), At<T>(ub, l.ops[2]), l.repeat,
                                     l.ops[0].blk, l.ops[1].blk, l.ops[2].blk, l.ops[0].rep, l.ops[1].rep,
                                     l.ops[2].rep);
                           });
            }
        }
    }
    // 1 and 255 repeats, contiguous.
    for (uint64_t repeat : {uint64_t{1}, uint64_t{255}}) {
        const Opnd d{0, 1, 8}, a{static_cast<uint32_t>(repeat * 256 + 512), 1, 8},
            b{static_cast<uint32_t>(2 * repeat * 256 + 1024), 1, 8};
        const std::string name = std::string("vmul_") + DtName(dt) + "_r" + std::to_string(repeat);
        VectorTest(name, "vmul", dt, dt, d, {a, b}, repeat, kFull, false, Profile::kArith, [&](uint8_t* ub) {
            vmul(At<T>(ub, d), At<T>(ub, a), At<T>(ub, b), repeat, 1, 1, 1, 8, 8, 8);
        });
    }
    {  // In place: dst identical to src0.
        const Opnd d{0, 1, 8}, b{2048, 1, 8};
        VectorTest(std::string("vadd_") + DtName(dt) + "_inplace_r3", "vadd", dt, dt, d, {d, b}, 3, kFull, false,
                   Profile::kArith, [&](uint8_t* ub) {
                       vadd(At<T>(ub, d), At<T>(ub, d), At<T>(ub, b), 3, 1, 1, 1, 8, 8, 8);
                   });
    }
    {  // The documented accumulation: dst == src1 with repeat stride 0 (每次迭代 dst = src0[r] + dst).
        const Opnd d{0, 1, 0}, a{1024, 1, 8};
        VectorTest(std::string("vadd_") + DtName(dt) + "_accumulate_r3", "vadd", dt, dt, d, {a, d}, 3, kFull, false,
                   Profile::kArith, [&](uint8_t* ub) {
                       vadd(At<T>(ub, d), At<T>(ub, a), At<T>(ub, d), 3, 1, 1, 1, 0, 8, 0);
                   });
    }
    {  // mask 0 in normal mode, count 0 in counter mode, repeat 0 in normal mode: no operation.
        const Opnd d{0, 1, 8}, a{1024, 1, 8}, b{2048, 1, 8};
        for (const Mask& m : {Mask{false, 0, 0}, Mask{true, 0, 0}}) {
            VectorTest(std::string("vadd_") + DtName(dt) + (m.counter ? "_count0" : "_mask0"), "vadd", dt, dt, d,
                       {a, b}, 2, m, false, Profile::kArith, [&](uint8_t* ub) {
                           vadd(At<T>(ub, d), At<T>(ub, a), At<T>(ub, b), 2, 1, 1, 1, 8, 8, 8);
                       });
        }
        VectorTest(std::string("vadd_") + DtName(dt) + "_repeat0", "vadd", dt, dt, d, {a, b}, 0, kFull, false,
                   Profile::kArith, [&](uint8_t* ub) {
                       vadd(At<T>(ub, d), At<T>(ub, a), At<T>(ub, b), 0, 1, 1, 1, 8, 8, 8);
                   });
    }
}

template <class T>
std::string ScalarJson(const T& s)
{
    uint64_t bits = 0;
    std::memcpy(&bits, &s, sizeof(T));
    return std::to_string(bits);
}

template <class T>
T ScalarFromBits(uint32_t bits)
{
    T s;
    std::memcpy(static_cast<void*>(&s), &bits, sizeof(T));
    return s;
}

template <class T>
void ScalarTests(Dt dt)
{
    struct Op {
        const char* name;
        int kind;  // 0 vadds, 1 vmuls, 2 vmaxs, 3 vmins
    };
    const Op ops[] = {{"vadds", 0}, {"vmuls", 1}, {"vmaxs", 2}, {"vmins", 3}};
    for (const Op& op : ops) {
        int index = 0;
        for (const Layout& l : Layouts(DtBytes(dt), 1)) {
            for (bool sat : {false, true}) {
                if (sat && (dt == Dt::kF32 || l.tag != "full_r3")) continue;
                // The scalar: random, or a special value in some layouts.
                uint32_t bits;
                if (dt == Dt::kF32) {
                    const uint32_t specials[] = {0x7f800000, 0x80000000, 0x7fc00000, 0x00000001};
                    bits = index % 3 == 2 ? specials[(index / 3) % 4] : RandomF32(Profile::kArith);
                } else {
                    const uint16_t specials[] = {0x7c00, 0x8000, 0x7e00, 0x0001};
                    bits = index % 3 == 2 ? specials[(index / 3) % 4] : Random16(dt, Profile::kArith);
                }
                ++index;
                const T s = ScalarFromBits<T>(bits);
                const Opnd d = l.ops[0], a = l.ops[1];
                const std::string name = std::string(op.name) + "_" + DtName(dt) + "_" + l.tag + (sat ? "_sat" : "");
                VectorTest(name, op.name, dt, dt, d, {a}, l.repeat, l.mask, sat, Profile::kArith, [&](uint8_t* ub) {
                    T* dp = At<T>(ub, d);
                    T* ap = At<T>(ub, a);
                    switch (op.kind) {
                        case 0: vadds(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep); break;
                        case 1: vmuls(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep); break;
                        case 2: vmaxs(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep, false, false); break;
                        default: vmins(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep, false, false); break;
                    }
                }, ScalarJson(s));
            }
        }
    }
}

template <class T>
void UnaryTests(Dt dt)
{
    for (const char* opName : {"vsqrt", "vabs"}) {
        const bool isSqrt = std::string(opName) == "vsqrt";
        for (const Layout& l : Layouts(DtBytes(dt), 1)) {
            for (bool sat : {false, true}) {
                if (sat && (dt == Dt::kF32 || l.tag != "full_r3")) continue;
                const Opnd d = l.ops[0], a = l.ops[1];
                const std::string name = std::string(opName) + "_" + DtName(dt) + "_" + l.tag + (sat ? "_sat" : "");
                VectorTest(name, opName, dt, dt, d, {a}, l.repeat, l.mask, sat,
                           isSqrt ? Profile::kPositive : Profile::kArith, [&](uint8_t* ub) {
                               if (isSqrt) vsqrt(At<T>(ub, d), At<T>(ub, a), l.repeat, d.blk, a.blk, d.rep, a.rep);
                               else vabs(At<T>(ub, d), At<T>(ub, a), l.repeat, d.blk, a.blk, d.rep, a.rep);
                           });
            }
        }
    }
}

template <class T>
void DupTests(Dt dt, const std::vector<uint32_t>& scalars)
{
    int index = 0;
    for (const Layout& l : Layouts(DtBytes(dt), 0)) {
        const uint32_t bits = scalars[static_cast<size_t>(index++) % scalars.size()];
        const T s = ScalarFromBits<T>(bits);
        const Opnd d = l.ops[0];
        const std::string name = std::string("vector_dup_") + DtName(dt) + "_" + l.tag;
        VectorTest(name, "vector_dup", dt, dt, d, {}, l.repeat, l.mask, false, Profile::kArith, [&](uint8_t* ub) {
            vector_dup(At<T>(ub, d), s, l.repeat, d.blk, 1, d.rep, 0);
        }, ScalarJson(s));
    }
}

// ---- conversions --------------------------------------------------------------------------------------------
template <class D, class S>
void ConvertTests(const char* name, void (*fn)(D*, S*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t), Dt dst,
                  Dt src, Profile prof, const char* suffix = "")
{
    const uint32_t dBytes = DtBytes(dst), sBytes = DtBytes(src);
    // Contiguous operands: lanes of the wider type per repeat, so the narrower one advances fewer blocks (4 for
    // 64 lanes of 16 bits or 128 lanes of 8 bits).
    const uint32_t lanes = 256 / (dBytes > sBytes ? dBytes : sBytes);
    const uint32_t dRep = lanes * dBytes / 32, sRep = lanes * sBytes / 32;
    const uint64_t partial = g_rng->Next() | 1;
    struct Cfg {
        std::string tag;
        Opnd d, s;
        uint64_t repeat;
        Mask mask;
    };
    const Cfg cfgs[] = {
        // 4 repeats of 64 lanes: the special values and random ones, contiguous.
        {"r4", {4096, 1, dRep}, {0, 1, sRep}, 4, kFull},
        // Counter mode, 2 full repeats and a partial one.
        {"counter", {4096, 1, dRep}, {0, 1, sRep}, 1, {true, 0, 2 * lanes + 19}},
        // A partial mask and strides: dst block stride 2 / repeat stride 10, src block stride 1 / repeat stride 8
        // (or 2 / 16 for a 16-bit source).
        {"strides_mask", {4096, 2, 10}, {0, sBytes == 4 ? 1u : 2u, sBytes == 4 ? 8u : 16u}, 2, {false, 0, partial}},
    };
    for (const Cfg& c : cfgs) {
        for (bool sat : {false, true}) {
            const std::string test = std::string(name) + suffix + "_" + c.tag + (sat ? "_sat" : "");
            VectorTest(test, name, dst, src, c.d, {c.s}, c.repeat, c.mask, sat, prof, [&](uint8_t* ub) {
                fn(At<D>(ub, c.d), At<S>(ub, c.s), c.repeat, c.d.blk, c.s.blk, c.d.rep, c.s.rep);
            });
        }
    }
}

void AllConvertTests()
{
    ConvertTests<float, F16>("vconv_f162f32", vconv_f162f32, Dt::kF32, Dt::kF16, Profile::kConvert);
    ConvertTests<float, Bf16>("vconv_bf162f32", vconv_bf162f32, Dt::kF32, Dt::kBf16, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16", vconv_f322f16, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16r", vconv_f322f16r, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16f", vconv_f322f16f, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16c", vconv_f322f16c, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16a", vconv_f322f16a, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16z", vconv_f322f16z, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<F16, float>("vconv_f322f16o", vconv_f322f16o, Dt::kF16, Dt::kF32, Profile::kConvert);
    ConvertTests<Bf16, float>("vconv_f322bf16r", vconv_f322bf16r, Dt::kBf16, Dt::kF32, Profile::kConvert);
    ConvertTests<Bf16, float>("vconv_f322bf16f", vconv_f322bf16f, Dt::kBf16, Dt::kF32, Profile::kConvert);
    ConvertTests<Bf16, float>("vconv_f322bf16c", vconv_f322bf16c, Dt::kBf16, Dt::kF32, Profile::kConvert);
    ConvertTests<Bf16, float>("vconv_f322bf16a", vconv_f322bf16a, Dt::kBf16, Dt::kF32, Profile::kConvert);
    ConvertTests<Bf16, float>("vconv_f322bf16z", vconv_f322bf16z, Dt::kBf16, Dt::kF32, Profile::kConvert);
    ConvertTests<float, float>("vconv_f322f32r", vconv_f322f32r, Dt::kF32, Dt::kF32, Profile::kIntegral);
    ConvertTests<float, float>("vconv_f322f32f", vconv_f322f32f, Dt::kF32, Dt::kF32, Profile::kIntegral);
    ConvertTests<float, float>("vconv_f322f32c", vconv_f322f32c, Dt::kF32, Dt::kF32, Profile::kIntegral);
    ConvertTests<float, float>("vconv_f322f32a", vconv_f322f32a, Dt::kF32, Dt::kF32, Profile::kIntegral);
    ConvertTests<float, float>("vconv_f322f32z", vconv_f322f32z, Dt::kF32, Dt::kF32, Profile::kIntegral);
    // The integral roundings also on the special values.
    ConvertTests<float, float>("vconv_f322f32r", vconv_f322f32r, Dt::kF32, Dt::kF32, Profile::kConvert, "_specials");
    ConvertTests<float, float>("vconv_f322f32a", vconv_f322f32a, Dt::kF32, Dt::kF32, Profile::kConvert, "_specials");
    ConvertTests<float, float>("vconv_f322f32f", vconv_f322f32f, Dt::kF32, Dt::kF32, Profile::kConvert, "_specials");
    ConvertTests<float, float>("vconv_f322f32c", vconv_f322f32c, Dt::kF32, Dt::kF32, Profile::kConvert, "_specials");
    ConvertTests<float, float>("vconv_f322f32z", vconv_f322f32z, Dt::kF32, Dt::kF32, Profile::kConvert, "_specials");
    // The 8-bit kernel's integer conversions.
    ConvertTests<F16, uint8_t>("vconv_u82f16", vconv_u82f16, Dt::kF16, Dt::kU8, Profile::kArith);
    ConvertTests<int32_t, F16>("vconv_f162s32r", vconv_f162s32r, Dt::kI32, Dt::kF16, Profile::kToInt);
    ConvertTests<int32_t, F16>("vconv_f162s32f", vconv_f162s32f, Dt::kI32, Dt::kF16, Profile::kToInt);
    ConvertTests<int32_t, F16>("vconv_f162s32c", vconv_f162s32c, Dt::kI32, Dt::kF16, Profile::kToInt);
    ConvertTests<int32_t, F16>("vconv_f162s32a", vconv_f162s32a, Dt::kI32, Dt::kF16, Profile::kToInt);
    ConvertTests<int32_t, F16>("vconv_f162s32z", vconv_f162s32z, Dt::kI32, Dt::kF16, Profile::kToInt);
    ConvertTests<uint8_t, F16>("vconv_f162u8", vconv_f162u8, Dt::kU8, Dt::kF16, Profile::kToUnsigned);
    ConvertTests<uint8_t, F16>("vconv_f162u8r", vconv_f162u8r, Dt::kU8, Dt::kF16, Profile::kToUnsigned);
    ConvertTests<uint8_t, F16>("vconv_f162u8f", vconv_f162u8f, Dt::kU8, Dt::kF16, Profile::kToUnsigned);
    ConvertTests<uint8_t, F16>("vconv_f162u8c", vconv_f162u8c, Dt::kU8, Dt::kF16, Profile::kToUnsigned);
    ConvertTests<uint8_t, F16>("vconv_f162u8a", vconv_f162u8a, Dt::kU8, Dt::kF16, Profile::kToUnsigned);
    ConvertTests<uint8_t, F16>("vconv_f162u8z", vconv_f162u8z, Dt::kU8, Dt::kF16, Profile::kToUnsigned);
    ConvertTests<int32_t, float>("vconv_f322s32r", vconv_f322s32r, Dt::kI32, Dt::kF32, Profile::kToInt);
    ConvertTests<int32_t, float>("vconv_f322s32f", vconv_f322s32f, Dt::kI32, Dt::kF32, Profile::kToInt);
    ConvertTests<int32_t, float>("vconv_f322s32c", vconv_f322s32c, Dt::kI32, Dt::kF32, Profile::kToInt);
    ConvertTests<int32_t, float>("vconv_f322s32a", vconv_f322s32a, Dt::kI32, Dt::kF32, Profile::kToInt);
    ConvertTests<int32_t, float>("vconv_f322s32z", vconv_f322s32z, Dt::kI32, Dt::kF32, Profile::kToInt);
}

// ---- int32 arithmetic (the 8-bit kernel's byte offsets and integer block maxima) ------------------------------
void Int32Tests()
{
    using Fn = void (*)(int32_t*, int32_t*, int32_t*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                        uint64_t);
    const struct {
        const char* name;
        Fn fn;
    } binary[] = {{"vadd", vadd<int32_t>}, {"vsub", vsub<int32_t>}, {"vmul", vmul<int32_t>},
                  {"vmax", vmax<int32_t>}, {"vmin", vmin<int32_t>}};
    for (const auto& op : binary) {
        for (const Layout& l : Layouts(4, 2)) {
            const std::string name = std::string(op.name) + "_int32_" + l.tag;
            VectorTest(name, op.name, Dt::kI32, Dt::kI32, l.ops[0], {l.ops[1], l.ops[2]}, l.repeat, l.mask, false,
                       Profile::kSmallInt, [&](uint8_t* ub) {
                           op.fn(At<int32_t>(ub, l.ops[0]), At<int32_t>(ub, l.ops[1]), At<int32_t>(ub, l.ops[2]),
                                 l.repeat, l.ops[0].blk, l.ops[1].blk, l.ops[2].blk, l.ops[0].rep, l.ops[1].rep,
                                 l.ops[2].rep);
                       });
        }
    }
    const char* scalarOps[] = {"vadds", "vmuls", "vmaxs", "vmins"};
    for (int kind = 0; kind < 4; ++kind) {
        for (const Layout& l : Layouts(4, 1)) {
            const int32_t s = kind == 1 ? 4 : static_cast<int32_t>(g_rng->Below(1u << 15)) - (1 << 14);
            const Opnd d = l.ops[0], a = l.ops[1];
            const std::string name = std::string(scalarOps[kind]) + "_int32_" + l.tag;
            VectorTest(name, scalarOps[kind], Dt::kI32, Dt::kI32, d, {a}, l.repeat, l.mask, false, Profile::kSmallInt,
                       [&](uint8_t* ub) {
                           int32_t* dp = At<int32_t>(ub, d);
                           int32_t* ap = At<int32_t>(ub, a);
                           switch (kind) {
                               case 0: vadds(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep); break;
                               case 1: vmuls(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep); break;
                               case 2: vmaxs(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep, false, false); break;
                               default: vmins(dp, ap, s, l.repeat, d.blk, a.blk, d.rep, a.rep, false, false); break;
                           }
                       }, std::to_string(static_cast<uint32_t>(s)));
        }
    }
}

// ---- gather, compare, select ----------------------------------------------------------------------------------
/** vgather: a table of `tableElems` elements at UB+table, offsets (uint32, multiples of the element size, inside
 *  the table) at UB+offsets, the destination at UB+dst with repeat stride dstRep. */
template <class T>
void GatherTest(const std::string& tag, uint64_t repeat, const Mask& m, uint32_t dstRep)
{
    constexpr uint32_t kBytes = sizeof(T);
    const uint32_t lanes = 256 / kBytes, tableElems = 300;
    const uint64_t repeats = m.counter ? (m.low + lanes - 1) / lanes : repeat;
    const uint32_t table = 0, offsets = 2048, dst = 2048 + static_cast<uint32_t>(repeats * lanes * 4 + 256);
    Buffer ub(dst + (repeats * dstRep + 8) * 32 + 64);
    Fill(ub.data(), ub.size(), kBytes == 4 ? Dt::kF32 : Dt::kF16, Profile::kArith);
    for (uint64_t i = 0; i < repeats * lanes; ++i) {
        const uint32_t at = g_rng->Below(tableElems) * kBytes;
        std::memcpy(ub.data() + offsets + i * 4, &at, 4);
    }
    std::vector<std::vector<uint8_t>> before{Snapshot(ub)};
    FreshCore(false);
    if (m.counter) set_mask_count();
    else set_mask_norm();
    set_vector_mask(m.high, m.low);
    ascendc_emu::State().gatherSource = ub.data() + table;  // as the library hands the table to the model
    ascendc_emu::State().gatherSourceLength = tableElems;
    using U = std::conditional_t<kBytes == 4, uint32_t, uint16_t>;
    vgather(reinterpret_cast<U*>(ub.data() + dst), reinterpret_cast<uint32_t*>(ub.data() + offsets),
            static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ub.data() + table) & 0xffffffffu), dstRep, repeat);
    Json j;
    j.Str("kind", "gather").Num("bytes", kBytes).Num("table", table).Num("table_elems", tableElems);
    j.Num("offsets", offsets).Num("dst", dst).Num("dst_rep", dstRep).Num("repeat", repeat);
    j.Num("counter", m.counter).Num("mask_high", m.high).Num("mask_low", m.low);
    Emit("vgather_b" + std::to_string(kBytes * 8) + "_" + tag, j, {{"ub", &ub}}, before);
}

/** vcmpv_<mode>: 3 repeats of src0 / src1 with the given strides into a contiguous bit mask at UB+0. */
template <class T>
void CompareTest(const char* name, void (*fn)(uint8_t*, T*, T*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                              uint64_t, uint64_t),
                 Dt dt, const Opnd& a, const Opnd& b, uint64_t repeat, bool counterSet)
{
    Buffer ub(Reach({a, b}, repeat));
    Fill(ub.data(), ub.size(), dt, dt == Dt::kI32 ? Profile::kSmallInt : Profile::kArith);
    const uint32_t lanes = 256 / DtBytes(dt);
    // Equal operands in some lanes (EQ / LE / GE), also +0 against -0.
    for (uint64_t r = 0; r < repeat; ++r) {
        for (uint32_t k = 0; k < lanes; k += 5) {
            const Opnd& from = k % 10 == 0 ? a : b;
            const Opnd& to = k % 10 == 0 ? b : a;
            const uint64_t fa = from.off + (r * from.rep + k / (32 / DtBytes(dt)) * from.blk) * 32 + k % (32 / DtBytes(dt)) * DtBytes(dt);
            const uint64_t ta = to.off + (r * to.rep + k / (32 / DtBytes(dt)) * to.blk) * 32 + k % (32 / DtBytes(dt)) * DtBytes(dt);
            std::memcpy(ub.data() + ta, ub.data() + fa, DtBytes(dt));
            if (k % 15 == 0 && dt != Dt::kI32) ub.data()[ta + DtBytes(dt) - 1] ^= 0x80;  // flips the sign
        }
    }
    std::vector<std::vector<uint8_t>> before{Snapshot(ub)};
    FreshCore(false);
    set_mask_norm();
    set_vector_mask(counterSet ? 0 : 0x5555, 0x0f0f);  // a partial mask: not applied by vcmpv on 910B
    fn(ub.data(), At<T>(ub.data(), a), At<T>(ub.data(), b), repeat, 1, a.blk, b.blk, 8, a.rep, b.rep);
    Json j;
    j.Str("kind", "compare").Str("op", name).Str("dtype", DtName(dt)).Raw("srcs", "[" + OpndJson(a) + ", " + OpndJson(b) + "]");
    j.Num("repeat", repeat);
    Emit(std::string(name) + "_" + DtName(dt) + "_r" + std::to_string(repeat) + (a.blk != 1 ? "_strides" : ""), j,
         {{"ub", &ub}}, before);
}

template <class T>
void CompareTests(Dt dt)
{
    using Fn = void (*)(uint8_t*, T*, T*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
    const struct {
        const char* name;
        Fn fn;
    } ops[] = {{"vcmpv_lt", vcmpv_lt<uint8_t, T>}, {"vcmpv_gt", vcmpv_gt<uint8_t, T>},
               {"vcmpv_eq", vcmpv_eq<uint8_t, T>}, {"vcmpv_le", vcmpv_le<uint8_t, T>},
               {"vcmpv_ge", vcmpv_ge<uint8_t, T>}, {"vcmpv_ne", vcmpv_ne<uint8_t, T>}};
    for (const auto& op : ops) {
        CompareTest<T>(op.name, op.fn, dt, {1024, 1, 8}, {3072, 1, 8}, 3, false);
        CompareTest<T>(op.name, op.fn, dt, {1024, 2, 16}, {4096, 1, 10}, 2, true);
    }
}

/** set_cmpmask (the mask tensor's address, as the CPU-debug library stores it) + vsel in VSEL_TENSOR_TENSOR_MODE. */
template <class T>
void SelectTest(const std::string& tag, Dt dt, const Opnd& d, const Opnd& a, const Opnd& b, uint64_t repeat,
                const Mask& m)
{
    const uint32_t lanes = 256 / DtBytes(dt);
    const uint64_t repeats = m.counter ? (m.low + lanes - 1) / lanes : repeat;
    const uint32_t maskAt = 8192, slot = 8192 + 1024;  // the mask tensor and CMPMASK's 16-byte source
    Buffer ub(std::max<uint64_t>(Reach({d, a, b}, repeats), slot + 64));
    Fill(ub.data(), ub.size(), dt, Profile::kArith);
    for (uint32_t i = 0; i < 1024; ++i) ub.data()[maskAt + i] = static_cast<uint8_t>(g_rng->Next());
    const uint64_t address = reinterpret_cast<uintptr_t>(ub.data() + maskAt);
    std::memcpy(ub.data() + slot, &address, 8);
    std::vector<std::vector<uint8_t>> before{Snapshot(ub)};
    FreshCore(false);
    if (m.counter) set_mask_count();
    else set_mask_norm();
    set_vector_mask(m.high, m.low);
    set_cmpmask(ub.data() + slot);
    vsel(At<T>(ub.data(), d), At<T>(ub.data(), a), At<T>(ub.data(), b), repeat, d.blk, a.blk, b.blk, d.rep, a.rep,
         b.rep, static_cast<uint8_t>(2));
    Json j;
    j.Str("kind", "select").Str("dtype", DtName(dt)).Raw("dst", OpndJson(d));
    j.Raw("srcs", "[" + OpndJson(a) + ", " + OpndJson(b) + "]").Num("repeat", repeat).Num("mask_at", maskAt);
    j.Num("slot", slot).Num("counter", m.counter).Num("mask_high", m.high).Num("mask_low", m.low);
    Emit(std::string("vsel_mode2_") + DtName(dt) + "_" + tag, j, {{"ub", &ub}}, before);
}

/** A call the emulation must refuse: run in a child process, which must abort with `expect` in its message (the
 *  message goes to <test>.message, the verdict to the JSON). */
void RefusalTest(const std::string& name, const std::string& expect, const std::function<void(uint8_t*)>& call)
{
    Buffer ub(8192);
    Fill(ub.data(), ub.size(), Dt::kF32, Profile::kArith);
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
        dup2(fds[1], 2);
        std::signal(SIGABRT, SIG_DFL);
        FreshCore(false);
        set_mask_count();
        set_vector_mask(0, 64);
        call(ub.data());
        _exit(0);
    }
    close(fds[1]);
    std::string message;
    char chunk[256];
    for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) message.append(chunk, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    WriteFile(g_out + "/" + name + ".message", reinterpret_cast<const uint8_t*>(message.data()), message.size());
    Json j;
    j.Str("kind", "refusal").Str("expect", expect).Num("aborted", WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    Emit(name, j, {}, {});
}

void RefusalTests()
{
    auto putF32 = [](uint8_t* ub, uint32_t at, uint32_t bits) { std::memcpy(ub + at, &bits, 4); };
    auto putU32 = [](uint8_t* ub, uint32_t at, uint32_t v) { std::memcpy(ub + at, &v, 4); };
    RefusalTest("refuse_vconv_f322s32r_nan", "vconv_f322s32r", [&](uint8_t* ub) {
        for (uint32_t i = 0; i < 64; ++i) putF32(ub, i * 4, i == 1 ? 0x7fc00000 : 0x3fc00000);  // 1.5, one NaN
        vconv_f322s32r(reinterpret_cast<int32_t*>(ub + 4096), reinterpret_cast<float*>(ub), 1, 1, 1, 8, 8);
    });
    RefusalTest("refuse_vconv_f162u8r_negative", "vconv_f162u8r", [&](uint8_t* ub) {
        for (uint32_t i = 0; i < 64; ++i) {
            const uint16_t v = i == 1 ? 0xbe00 : 0x3e00;  // 1.5, one -1.5
            std::memcpy(ub + i * 2, &v, 2);
        }
        vconv_f162u8r(ub + 4096, reinterpret_cast<F16*>(ub), 1, 1, 1, 4, 4);
    });
    RefusalTest("refuse_vmul_int32_overflow", "vmul", [&](uint8_t* ub) {
        for (uint32_t i = 0; i < 64; ++i) putU32(ub, i * 4, 1u << 20);
        vmul(reinterpret_cast<int32_t*>(ub + 4096), reinterpret_cast<int32_t*>(ub), reinterpret_cast<int32_t*>(ub), 1,
             1, 1, 1, 8, 8, 8);
    });
    RefusalTest("refuse_vdiv_int32", "vdiv", [&](uint8_t* ub) {
        vdiv(reinterpret_cast<int32_t*>(ub + 4096), reinterpret_cast<int32_t*>(ub), reinterpret_cast<int32_t*>(ub), 1,
             1, 1, 1, 8, 8, 8);
    });
    for (const auto& [tag, bad] : {std::pair<const char*, uint32_t>{"misaligned", 6}, {"past_table", 256 * 4}}) {
        RefusalTest(std::string("refuse_vgather_") + tag, "vgather: an offset", [&, bad = bad](uint8_t* ub) {
            for (uint32_t i = 0; i < 64; ++i) putU32(ub, 2048 + i * 4, i == 9 ? bad : i * 4);
            ascendc_emu::State().gatherSource = ub;
            ascendc_emu::State().gatherSourceLength = 256;
            vgather(reinterpret_cast<uint32_t*>(ub + 4096), reinterpret_cast<uint32_t*>(ub + 2048),
                    static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ub) & 0xffffffffu), 8, 1);
        });
    }
    RefusalTest("refuse_vsel_mode0", "vsel in mode 0", [&](uint8_t* ub) {
        vsel(reinterpret_cast<float*>(ub + 4096), reinterpret_cast<float*>(ub), reinterpret_cast<float*>(ub + 1024), 1,
             1, 1, 1, 8, 8, 8);
    });
    RefusalTest("refuse_vcmpv_counter_mode", "vcmpv in counter mode", [&](uint8_t* ub) {
        vcmpv_lt(ub + 4096, reinterpret_cast<float*>(ub), reinterpret_cast<float*>(ub + 1024), 1, 1, 1, 1, 8, 8, 8);
    });
}

void GatherCompareSelectTests()
{
    const uint64_t partial = g_rng->Next() | 1, partialHigh = g_rng->Next();
    GatherTest<float>("r3", 3, kFull, 8);
    GatherTest<float>("mask_dst_rep10_r2", 2, {false, 0, partial}, 10);
    GatherTest<float>("counter", 7, {true, 0xdead, 2 * 64 + 21}, 8);
    GatherTest<F16>("r2", 2, kFull, 8);
    GatherTest<F16>("mask_counter", 1, {true, 0, 128 + 77}, 8);
    GatherTest<F16>("mask_high", 2, {false, partialHigh, partial}, 12);
    CompareTests<float>(Dt::kF32);
    CompareTests<F16>(Dt::kF16);
    CompareTest<int32_t>("vcmpv_eq", vcmpv_eq<uint8_t, int32_t>, Dt::kI32, {1024, 1, 8}, {3072, 1, 8}, 3, false);
    for (Dt dt : {Dt::kF32, Dt::kF16}) {
        const uint32_t lanes = 256 / DtBytes(dt);
        auto run = [&](const std::string& tag, const Opnd& d, const Opnd& a, const Opnd& b, uint64_t r, const Mask& m) {
            if (dt == Dt::kF32) SelectTest<float>(tag, dt, d, a, b, r, m);
            else SelectTest<F16>(tag, dt, d, a, b, r, m);
        };
        run("counter", {0, 1, 8}, {2048, 1, 8}, {4096, 1, 8}, 1, {true, 0, 3 * lanes + 29});
        run("mask_r2", {0, 1, 8}, {2048, 1, 8}, {4096, 1, 8}, 2, {false, dt == Dt::kF16 ? partialHigh : 0, partial});
        run("strides_r3", {0, 2, 20}, {2048, 1, 10}, {4096, 2, 16}, 3, kFull);
        run("in_place_counter", {2048, 1, 8}, {2048, 1, 8}, {4096, 1, 8}, 1, {true, 0, 2 * lanes});
    }
}

// ---- GM <-> UB copies ---------------------------------------------------------------------------------------
struct AlignCopy {
    uint32_t bits;   // 8, 16, 32
    uint64_t nBurst;
    uint64_t len;    // bytes
    uint64_t left;   // elements
    uint64_t right;  // elements
    uint64_t gmGap;  // bytes
    uint64_t ubGap;  // 32-B blocks
    uint64_t pad;    // set_mov_pad_val (when there is padding)
};

template <class T>
void CallGmToUb(uint32_t bits, uint8_t* ub, uint8_t* gm, const AlignCopy& c)
{
    T* u = reinterpret_cast<T*>(ub);
    T* g = reinterpret_cast<T*>(gm);
    if (bits == 8) copy_gm_to_ubuf_align_b8(u, g, 0, c.nBurst, c.len, c.left, c.right, c.gmGap, c.ubGap);
    else if (bits == 16) copy_gm_to_ubuf_align_b16(u, g, 0, c.nBurst, c.len, c.left, c.right, c.gmGap, c.ubGap);
    else copy_gm_to_ubuf_align_b32(u, g, 0, c.nBurst, c.len, c.left, c.right, c.gmGap, c.ubGap);
}

template <class T>
void CallUbToGm(uint32_t bits, uint8_t* gm, uint8_t* ub, const AlignCopy& c)
{
    T* u = reinterpret_cast<T*>(ub);
    T* g = reinterpret_cast<T*>(gm);
    if (bits == 8) copy_ubuf_to_gm_align_b8(g, u, 0, c.nBurst, c.len, 0, 0, c.ubGap, c.gmGap);
    else if (bits == 16) copy_ubuf_to_gm_align_b16(g, u, 0, c.nBurst, c.len, 0, 0, c.ubGap, c.gmGap);
    else copy_ubuf_to_gm_align_b32(g, u, 0, c.nBurst, c.len, 0, 0, c.ubGap, c.gmGap);
}

void RandomBytes(const Buffer& b)
{
    for (uint64_t i = 0; i < b.size(); i += 8) {
        const uint64_t v = g_rng->Next();
        std::memcpy(b.data() + i, &v, 8);
    }
}

Json CopyJson(const char* op, const AlignCopy& c, bool padSet)
{
    Json j;
    j.Str("kind", "copy").Str("op", op).Num("bits", c.bits).Num("n_burst", c.nBurst).Num("len", c.len);
    j.Num("left", c.left).Num("right", c.right).Num("gm_gap", c.gmGap).Num("ub_gap", c.ubGap);
    j.Num("pad_set", padSet).Num("pad", c.pad);
    return j;
}

void CopyTests()
{
    const AlignCopy in[] = {
        {8, 3, 47, 0, 0, 5, 1, 0},             // unaligned bursts, no padding: the dummy tail
        {8, 2, 20, 5, 7, 0, 0, 0xab},          // both paddings
        {8, 1, 64, 0, 0, 0, 0, 0},             // aligned
        {8, 4, 33, 32, 0, 3, 2, 0x5a},         // 32 B of left padding, gaps
        {8, 2, 1, 0, 31, 2, 0, 0x11},          // 1 byte + 31 B right padding: exactly one block
        {16, 3, 26, 3, 4, 6, 1, 0x3c00},       // half: padding 1.0, GM gap 6 B, UB gap 1 block
        {16, 2, 64, 0, 16, 2, 0, 0xfc00},      // 32 B right padding (-inf)
        {16, 5, 2, 0, 0, 0, 0, 0},             // 2-byte bursts
        {16, 3, 30, 1, 0, 1, 3, 0x7e00},       // odd GM gap
        {32, 3, 44, 1, 2, 8, 1, 0x7fc00000},   // float: NaN padding
        {32, 2, 100, 8, 8, 4, 3, 0x3f800000},  // 32 B each side
        {32, 1, 4, 0, 7, 0, 0, 0xdeadbeef},    // one element + 7 padding: one block
        {32, 4, 12, 0, 0, 20, 0, 0},           // dummy tails, GM gap 20 B
        {16, 2, 0, 4, 4, 0, 0, 0x3c00},        // blockLen 0: no operation, even with padding
        {32, 0, 64, 2, 0, 0, 0, 0x3f800000},   // blockCount 0: no operation
    };
    int index = 0;
    for (const AlignCopy& c : in) {
        Buffer gm(4096), ub(4096);
        RandomBytes(gm);
        RandomBytes(ub);
        const std::vector<std::vector<uint8_t>> before{Snapshot(gm), Snapshot(ub)};
        FreshCore(false);
        const bool padSet = c.left != 0 || c.right != 0;
        if (padSet) set_mov_pad_val(c.pad);
        if (c.bits == 8) CallGmToUb<uint8_t>(8, ub.data(), gm.data(), c);
        else if (c.bits == 16) CallGmToUb<F16>(16, ub.data(), gm.data(), c);
        else CallGmToUb<float>(32, ub.data(), gm.data(), c);
        Json j = CopyJson("copy_gm_to_ubuf_align", c, padSet);
        Emit("copy_gm_to_ubuf_align_b" + std::to_string(c.bits) + "_" + std::to_string(index++), j,
             {{"gm", &gm}, {"ub", &ub}}, before);
    }
    const AlignCopy out[] = {
        {8, 3, 47, 0, 0, 5, 1, 0}, {8, 1, 64, 0, 0, 0, 0, 0}, {8, 4, 1, 0, 0, 3, 2, 0},
        {16, 3, 26, 0, 0, 6, 1, 0}, {16, 2, 96, 0, 0, 0, 0, 0},
        {32, 3, 44, 0, 0, 8, 1, 0}, {32, 2, 4, 0, 0, 1, 3, 0}, {32, 5, 64, 0, 0, 0, 2, 0},
        {16, 2, 0, 0, 0, 4, 1, 0}, {32, 0, 64, 0, 0, 0, 0, 0},  // blockLen 0, blockCount 0: no operation
    };
    index = 0;
    for (const AlignCopy& c : out) {
        Buffer gm(4096), ub(4096);
        RandomBytes(gm);
        RandomBytes(ub);
        const std::vector<std::vector<uint8_t>> before{Snapshot(gm), Snapshot(ub)};
        FreshCore(false);
        if (c.bits == 8) CallUbToGm<uint8_t>(8, gm.data(), ub.data(), c);
        else if (c.bits == 16) CallUbToGm<F16>(16, gm.data(), ub.data(), c);
        else CallUbToGm<float>(32, gm.data(), ub.data(), c);
        Json j = CopyJson("copy_ubuf_to_gm_align", c, false);
        Emit("copy_ubuf_to_gm_align_b" + std::to_string(c.bits) + "_" + std::to_string(index++), j,
             {{"gm", &gm}, {"ub", &ub}}, before);
    }
    // Plain block copies: nBurst bursts of `blocks` 32-B blocks, both gaps in blocks.
    struct Plain {
        bool toUb;
        uint64_t nBurst, blocks, srcGap, dstGap;
    };
    const Plain plain[] = {{true, 3, 2, 1, 2}, {true, 1, 8, 0, 0}, {true, 4, 1, 3, 0},
                           {false, 3, 2, 2, 1}, {false, 2, 5, 0, 4}, {false, 1, 1, 0, 0}};
    index = 0;
    for (const Plain& p : plain) {
        Buffer gm(4096), ub(4096);
        RandomBytes(gm);
        RandomBytes(ub);
        const std::vector<std::vector<uint8_t>> before{Snapshot(gm), Snapshot(ub)};
        FreshCore(false);
        if (p.toUb) {
            copy_gm_to_ubuf(reinterpret_cast<float*>(ub.data()), reinterpret_cast<float*>(gm.data()), 0, p.nBurst,
                            p.blocks, p.srcGap, p.dstGap);
        } else {
            copy_ubuf_to_gm(reinterpret_cast<float*>(gm.data()), reinterpret_cast<float*>(ub.data()), 0, p.nBurst,
                            p.blocks, p.srcGap, p.dstGap);
        }
        Json j;
        j.Str("kind", "copy").Str("op", p.toUb ? "copy_gm_to_ubuf" : "copy_ubuf_to_gm").Num("n_burst", p.nBurst);
        j.Num("blocks", p.blocks).Num("src_gap", p.srcGap).Num("dst_gap", p.dstGap);
        Emit(std::string(p.toUb ? "copy_gm_to_ubuf_" : "copy_ubuf_to_gm_") + std::to_string(index++), j,
             {{"gm", &gm}, {"ub", &ub}}, before);
    }
}

// ---- scalar bit intrinsics and CTRL -------------------------------------------------------------------------
void BitTests()
{
    std::vector<uint64_t> values = {0, ~uint64_t{0}, 0xb, 0x7fffffffffffffffull, 0xfffffffffffffffeull,
                                    0x00000000ffffffffull, 0xff, 1ull << 63};
    for (int i = 0; i < 12; ++i) values.push_back(g_rng->Next() | (g_rng->Next() & 0xffff));
    std::string sff = "[", set0 = "[", set1 = "[";
    const int64_t indexes[] = {0, 1, 5, 31, 32, 63, 64, 65, 127, -1, -64, -65};
    bool first = true, firstSet = true;
    for (uint64_t v : values) {
        sff += std::string(first ? "" : ", ") + "[" + std::to_string(v) + ", " + std::to_string(sff0(v)) + "]";
        first = false;
        for (int64_t i : indexes) {
            const std::string sep = firstSet ? "" : ", ";
            const std::string args = "[" + std::to_string(v) + ", " + std::to_string(i) + ", ";
            set0 += sep + args + std::to_string(sbitset0(v, i)) + "]";
            set1 += sep + args + std::to_string(sbitset1(v, i)) + "]";
            firstSet = false;
        }
    }
    Json j;
    j.Str("kind", "bits").Raw("sff0", sff + "]").Raw("sbitset0", set0 + "]").Raw("sbitset1", set1 + "]");
    FreshCore(false);
    Emit("bits_sff0_sbitset", j, {}, {});

    // CTRL: set_ctrl stores, get_ctrl reads back; bit 48 governs saturation (Saturating()).
    FreshCore(false);
    const uint64_t initial = static_cast<uint64_t>(get_ctrl());
    const uint64_t pattern = 0x0122456789abcdefull;  // bit 48 clear
    set_ctrl(pattern);
    const uint64_t readBack = static_cast<uint64_t>(get_ctrl());
    const bool satWithPattern = ascendc_emu::Saturating();
    set_ctrl(pattern | (uint64_t{1} << 48));
    const uint64_t readBackSet = static_cast<uint64_t>(get_ctrl());
    const bool satWithBit = ascendc_emu::Saturating();
    Json c;
    c.Str("kind", "ctrl").Num("initial", initial).Num("written", pattern).Num("read_back", readBack);
    c.Num("read_back_bit48_set", readBackSet);
    c.Num("saturating_bit48_clear", satWithPattern).Num("saturating_bit48_set", satWithBit);
    Emit("ctrl_get_set", c, {}, {});
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s <out dir> [<seed>]\n", argv[0]);
        return 2;
    }
    g_out = argv[1];
    Rng rng(argc == 3 ? std::strtoull(argv[2], nullptr, 10) : 1);
    g_rng = &rng;

    BinaryTests<float>(Dt::kF32);
    BinaryTests<F16>(Dt::kF16);
    ScalarTests<float>(Dt::kF32);
    ScalarTests<F16>(Dt::kF16);
    UnaryTests<float>(Dt::kF32);
    UnaryTests<F16>(Dt::kF16);
    DupTests<float>(Dt::kF32, {0x3f800000, 0xc0490fdb, 0x7f800000, 0x7fc00001, 0x80000000, 0x00000001});
    DupTests<F16>(Dt::kF16, {0x3c00, 0xfbff, 0x7c00, 0x7e01, 0x8000, 0x0001});
    DupTests<Bf16>(Dt::kBf16, {0x3f80, 0xff7f, 0x7f80, 0x7fc1, 0x8000, 0x0001});
    DupTests<int16_t>(Dt::kI16, {0x1234, 0x8000, 0xffff, 0x0001});
    DupTests<int32_t>(Dt::kI32, {0x12345678, 0x80000000, 0xffffffff, 0x00000001});
    AllConvertTests();
    Int32Tests();
    GatherCompareSelectTests();
    RefusalTests();
    CopyTests();
    BitTests();
    std::printf("intrinsics-selftest: %d tests written to %s\n", g_tests, g_out.c_str());
    return 0;
}
