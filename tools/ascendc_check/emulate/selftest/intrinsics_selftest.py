#!/usr/bin/env python3
"""tools/ascendc_check/run.py --emulate: the expected results of intrinsics_selftest.cpp's tests, from the documented rules.

    intrinsics_selftest.py <dir written by intrinsics_selftest>

Written from the documentation (asc-devkit docs/zh/api/SIMD-API), independently of the emulation (emu_*.h/.cpp)
and of the test program: every value is decoded to an exact rational and every result rounded by the rounding
rules of 数据结构/precision_conversion.md with integer arithmetic (no host floating point). Prints one line per
failing test and, last, ``SELFTEST {"passed": N, "total": M}``.

The rules (and where the documentation is silent, the choice made here, marked ASSUMED):
  * Addressing (SIMD计算说明/高维切分.md): a repeat is 8 blocks of 32 B; lane k of repeat r of an operand of E-byte
    elements lies at base + (r * repStride + (k // (32 / E)) * blkStride) * 32 + (k % (32 / E)) * E; lanes per
    repeat follow the widest operand (Cast.md: "按照输入和输出类型中sizeof(dtype)较大的"); srcBlkStride 0 reuses
    the first block; repeats run in order, each reading its sources before it writes (the documented dst == src1,
    repeat stride 0 accumulation follows).
  * Masks (掩码.md): normal mode, lane k active when bit k of (high << 64 | low) is set, a 0 mask is a no-op, a
    masked lane keeps its value ("mask为0时，目的操作数保持原值"; the C-API's 通用说明和约束.md calls it undefined);
    counter mode, the low word is the element count, the repeat argument and the high word are ignored.
  * Arithmetic: the exact result rounded once to nearest even (ASSUMED for every op: the docs give no bit-level rule
    for 910B; Div.md/Sqrt.md's 1-ulp and flush-to-zero statements are for the 950); IEEE specials (x/0 = inf,
    0/0 = NaN, signed zeros; ASSUMED); NaN results compare as any NaN (NaN bits are not documented); vmax/vmin with a
    NaN operand may give the NaN or the other operand, and of +0/-0 either (not documented); vsqrt only of inputs
    >= 0 (asc_sqrt.md: "src只支持设置为正数"; +0, +inf and NaN ASSUMED IEEE).
  * Saturation (SetCtrlSpr(ISASI).md, A2 table): CTRL[48] clear makes half/bf16 results and conversions to them
    saturate, inf -> +-MAX and NaN -> 0 (here +0); float results are not affected.
  * Conversions (precision_conversion.md): r nearest even, a nearest away, f toward -inf, c toward +inf, z toward 0,
    o to odd; the no-suffix vconv_f322f16 is CAST_NONE (= r when inexact). Subnormal results are produced (the doc's
    bf16 -> half example 2.90573e-06 -> 2.9e-06 is a half subnormal). A finite value past the format's range
    becomes inf under r/a, MAX under z/o, inf on the side f/c round to (ASSUMED: IEEE 754 directed rounding; the
    doc only says overflow saturates by default). Widening is exact; float -> float rounds to an integral value
    keeping the sign (-0.3 -> -0; ASSUMED IEEE roundToIntegral).
  * copy_gm_to_ubuf_align_bN (DataCopyPad GM->UB): burst i from gm + i * (len + gmGap bytes) to
    ub + i * (AlignUp32(left*E + len + right*E) + ubGap * 32), left padding, data, right padding, the padding from
    the MOV pad register (set_mov_pad_val); the bytes up to the 32-B boundary ("dummy") hold the burst's first
    element when there is no padding and the padding value otherwise (DataCopyPad（GMToUB非对齐数据搬运）.md,
    checked as a separate test "<name>/dummy"). copy_ubuf_to_gm_align_bN: len bytes of burst i from
    ub + i * (AlignUp32(len) + ubGap * 32) to gm + i * (len + gmGap bytes) (DataCopyPad（UBToGM非对齐数据搬运）.md).
    blockCount or blockLen 0: no operation (both DataCopyPad pages). Plain copies: whole blocks, both gaps in
    blocks (DataCopy（GM与UB高维切分数据搬运）.md). Nothing else changes.
  * sff0 = asc_ffz (first 0 bit from the least significant, -1 if none); sbitset0/1 = asc_clear_nthbit /
    asc_set_nthbit, an index outside [0, 63] taken as (idx % 64 + 64) % 64.
  * Integer conversions (precision_conversion.md): uint8 -> half exact; half / float -> int32 and half -> uint8
    rounded to an integer by the mode (the no-suffix vconv_f162u8 is CAST_NONE: r), a value past the type's range
    (infinities too) saturated ("溢出默认按照饱和模式处理"). A NaN (no documented result) or a negative value into
    uint8 ("负数输入会被视为异常") is not a valid test input: the emulation aborts on them.
  * int32 arithmetic (Add Sub Mul Max Min and their scalar forms take int32_t on 910B): the exact result, which the
    tests keep within int32 (the docs give no overflow rule; the emulation aborts past the range).
  * Gather (Gather.md): dst[i] = src[(srcBaseAddr + srcOffset[i]) / sizeof(T)], offsets in bytes; 256 / sizeof(T)
    lanes per repeat under the vector mask (counter or normal), lane k of repeat r takes offset r * lanes + k and
    writes dst + r * dstRepStride * 32 + k * sizeof(T) (dstRepStride in blocks, "相邻迭代间的地址步长").
  * Compare into a bit mask (Compare.md): 256 / sizeof(T) lanes per repeat, bit r * lanes + k of dst (LSB first,
    "小端顺序") = src0 <mode> src1 by IEEE comparison (NaN false, NE true; +0 == -0); the vector mask is not applied
    on A2 ("保留参数，设置无效"); the destination is contiguous (ASSUMED from the count form, which passes the default
    strides and steps dst by the repeats' bits).
  * Select, VSEL_TENSOR_TENSOR_MODE (Select.md 模式2): lane k of repeat r = bit r * lanes + k of the mask tensor
    ("多轮迭代连续消耗selMask的不同部分") ? src0 : src1, under the vector mask; CMPMASK (set_cmpmask) holds the mask
    tensor's address (CPU-debug: the full address, as the library stores it). The element is copied bit for bit.
  * Refusals: a call outside the documented behaviour (a NaN or a negative value into an integer conversion, int32
    overflow, a gather offset misaligned or past the table) or outside what is emulated (vsel mode 0, vcmpv in
    counter mode, int32 vdiv) must abort, its message naming the instruction.
"""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path


class Fmt:
    def __init__(self, name, exp_bits, man_bits):
        self.name, self.exp_bits, self.man_bits = name, exp_bits, man_bits
        self.bias = (1 << (exp_bits - 1)) - 1
        self.emin, self.emax = 1 - self.bias, self.bias
        self.size = (1 + exp_bits + man_bits) // 8
        self.sign_bit = 1 << (exp_bits + man_bits)
        self.exp_mask = ((1 << exp_bits) - 1) << man_bits
        self.inf = self.exp_mask
        self.max = self.exp_mask - 1
        self.qnan = self.exp_mask | (1 << (man_bits - 1))


FLOAT = {"float32": Fmt("float32", 8, 23), "float16": Fmt("float16", 5, 10), "bfloat16": Fmt("bfloat16", 8, 7)}
INT_SIZE = {"int16": 2, "int32": 4, "uint8": 1}
INT_RANGE = {"int32": (-2**31, 2**31 - 1), "uint8": (0, 255)}


def signed(bits, size):
    """A two's-complement integer of `size` bytes."""
    return bits - (1 << (8 * size)) if bits >> (8 * size - 1) else bits


def size_of(dtype):
    return FLOAT[dtype].size if dtype in FLOAT else INT_SIZE[dtype]


# ---- exact values ---------------------------------------------------------------------------------------------
class Val:
    """kind 'nan' | 'inf' | 'fin'; sign 0/1; mag: the exact magnitude (a Fraction) of a finite value."""
    __slots__ = ("kind", "sign", "mag")

    def __init__(self, kind, sign, mag=Fraction(0)):
        self.kind, self.sign, self.mag = kind, sign, mag

    def real(self):
        if self.kind == "inf":
            return float("-inf") if self.sign else float("inf")
        return -self.mag if self.sign else self.mag


NAN = Val("nan", 0)


def decode(bits, fmt):
    sign = 1 if bits & fmt.sign_bit else 0
    e = (bits & fmt.exp_mask) >> fmt.man_bits
    m = bits & ((1 << fmt.man_bits) - 1)
    if e == (1 << fmt.exp_bits) - 1:
        return Val("nan", sign) if m else Val("inf", sign)
    if e == 0:
        return Val("fin", sign, Fraction(m) * Fraction(2) ** (fmt.emin - fmt.man_bits))
    return Val("fin", sign, Fraction(m | (1 << fmt.man_bits)) * Fraction(2) ** (e - fmt.bias - fmt.man_bits))


def floor_log2(fr):
    n, d = fr.numerator, fr.denominator
    e = n.bit_length() - d.bit_length()
    ok = n >= (d << e) if e >= 0 else (n << -e) >= d
    return e if ok else e - 1


def round_int(mag, mode, sign):
    """mag (>= 0) rounded to an integer by `mode` (precision_conversion.md, 表1); sign only for f / c."""
    q, rem = divmod(mag.numerator, mag.denominator)
    d = mag.denominator
    inexact = rem != 0
    if mode == "r":
        up = 2 * rem > d or (2 * rem == d and q & 1)
    elif mode == "a":
        up = inexact and 2 * rem >= d
    elif mode == "z":
        up = False
    elif mode == "f":
        up = inexact and sign == 1
    elif mode == "c":
        up = inexact and sign == 0
    elif mode == "o":
        up = inexact and q & 1 == 0
    else:
        raise ValueError(mode)
    return q + (1 if up else 0)


class AnyNaN:
    """Marker: any NaN of the format is accepted (NaN bits are not documented)."""


ANY_NAN = AnyNaN()


def encode(v, fmt, mode="r"):
    """v rounded to fmt by mode: an int bit pattern, or ANY_NAN."""
    if v.kind == "nan":
        return ANY_NAN
    sign = fmt.sign_bit if v.sign else 0
    if v.kind == "inf":
        return sign | fmt.inf
    if v.mag == 0:
        return sign
    e = max(floor_log2(v.mag), fmt.emin)
    qe = e - fmt.man_bits
    q = round_int(v.mag * Fraction(2) ** -qe, mode, v.sign)
    if q == 1 << (fmt.man_bits + 1):
        q >>= 1
        e += 1
    if e > fmt.emax:
        to_inf = mode in ("r", "a") or (mode == "c" and not v.sign) or (mode == "f" and v.sign)
        return sign | (fmt.inf if to_inf else fmt.max)
    if q < 1 << fmt.man_bits:  # subnormal (e == emin)
        return sign | q
    return sign | ((e + fmt.bias) << fmt.man_bits) | (q - (1 << fmt.man_bits))


def saturate(bits, fmt):
    """CTRL[48] clear: inf -> +-MAX, NaN -> 0 (half and bf16 results)."""
    if bits is ANY_NAN:
        return 0
    if bits & fmt.exp_mask == fmt.exp_mask:
        return 0 if bits & ((1 << fmt.man_bits) - 1) else (bits & fmt.sign_bit) | fmt.max
    return bits


# ---- IEEE arithmetic on exact values --------------------------------------------------------------------------
def neg(a):
    return Val(a.kind, 1 - a.sign, a.mag)


def add(a, b):
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    if a.kind == "inf" and b.kind == "inf":
        return a if a.sign == b.sign else NAN
    if a.kind == "inf":
        return a
    if b.kind == "inf":
        return b
    s = a.real() + b.real()
    if s == 0:
        both_zero = a.mag == 0 and b.mag == 0
        return Val("fin", 1 if both_zero and a.sign and b.sign else 0)
    return Val("fin", 1 if s < 0 else 0, abs(s))


def mul(a, b):
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    sign = a.sign ^ b.sign
    if a.kind == "inf" or b.kind == "inf":
        if (a.kind == "fin" and a.mag == 0) or (b.kind == "fin" and b.mag == 0):
            return NAN
        return Val("inf", sign)
    return Val("fin", sign, a.mag * b.mag)


def div(a, b):
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    sign = a.sign ^ b.sign
    if a.kind == "inf":
        return NAN if b.kind == "inf" else Val("inf", sign)
    if b.kind == "inf":
        return Val("fin", sign)
    if b.mag == 0:
        return NAN if a.mag == 0 else Val("inf", sign)
    return Val("fin", sign, a.mag / b.mag)


def isqrt(n):
    import math
    return math.isqrt(n)


def sqrt(a):
    if a.kind == "nan" or (a.sign and not (a.kind == "fin" and a.mag == 0)):
        return NAN
    if a.kind == "inf" or a.mag == 0:
        return a
    # floor(sqrt(mag) * 2^s) with s far below any format's quantum, plus a sticky half unit when inexact.
    s = 80 + max(0, -floor_log2(a.mag) // 2)
    scaled = a.mag * Fraction(4) ** s
    n = scaled.numerator // scaled.denominator
    r = isqrt(n)
    exact = r * r == n and scaled.denominator == 1
    mag = Fraction(r, 1 << s) if exact else Fraction(2 * r + 1, 1 << (s + 1))
    return Val("fin", 0, mag)


def absolute(a):
    return NAN if a.kind == "nan" else Val(a.kind, 0, a.mag)


def round_integral(a, mode):
    if a.kind != "fin":
        return a
    return Val("fin", a.sign, Fraction(round_int(a.mag, mode, a.sign)))


# ---- expected lanes -------------------------------------------------------------------------------------------
class Allowed:
    """The accepted bit patterns of one lane: a set, and whether any NaN is accepted."""
    __slots__ = ("bits", "nan")

    def __init__(self, bits=(), nan=False):
        self.bits, self.nan = frozenset(bits), nan

    def canonical(self, fmt_or_size):
        if self.bits:
            return min(self.bits)
        return fmt_or_size.qnan

    def accepts(self, got, fmt):
        if got in self.bits:
            return True
        if self.nan and fmt is not None:
            return got & fmt.exp_mask == fmt.exp_mask and got & ((1 << fmt.man_bits) - 1) != 0
        return False

    def describe(self):
        parts = [f"{b:#x}" for b in sorted(self.bits)] + (["any NaN"] if self.nan else [])
        return " or ".join(parts)


def allowed_of(results, fmt, saturation):
    """Allowed from a list of encoded results (ints or ANY_NAN), saturated when asked."""
    bits, nan = set(), False
    for r in results:
        if saturation:
            bits.add(saturate(r, fmt))
        elif r is ANY_NAN:
            nan = True
        else:
            bits.add(r)
    return Allowed(bits, nan)


def minmax(a, b, want_max, fmt, saturation):
    """vmax/vmin: IEEE max/min; a NaN operand may give the NaN or the other operand, +0/-0 either one."""
    if a.kind == "nan" or b.kind == "nan":
        options = [ANY_NAN] + [encode(x, fmt) for x in (a, b) if x.kind != "nan"]
    elif a.real() == b.real():
        options = [encode(a, fmt), encode(b, fmt)]
    else:
        bigger = a if a.real() > b.real() else b
        smaller = b if bigger is a else a
        options = [encode(bigger if want_max else smaller, fmt)]
    return allowed_of(options, fmt, saturation)


ARITH = {"vadd": add, "vsub": lambda a, b: add(a, neg(b)), "vmul": mul, "vdiv": div,
         "vadds": add, "vmuls": mul}
CONVERT_MODE = {"vconv_f162f32": "r", "vconv_bf162f32": "r", "vconv_f322f16": "r", "vconv_f162u8": "r",
                "vconv_u82f16": "r"}
INT_ARITH = {"vadd": lambda a, b: a + b, "vsub": lambda a, b: a - b, "vmul": lambda a, b: a * b, "vmax": max,
             "vmin": min, "vadds": lambda a, b: a + b, "vmuls": lambda a, b: a * b, "vmaxs": max, "vmins": min}


def to_integer(bits, sfmt, dst_t, mode):
    """A float converted to an integer type: rounded by the mode, saturated to the type's range."""
    v = decode(bits, sfmt)
    lo, hi = INT_RANGE[dst_t]
    if v.kind == "nan" or (dst_t == "uint8" and v.sign and not (v.kind == "fin" and v.mag == 0)):
        raise ValueError(f"not a valid input of a conversion to {dst_t}: {bits:#x}")
    if v.kind == "inf":
        q = lo if v.sign else hi
    else:
        q = round_int(v.mag, mode, v.sign)
        q = max(lo, min(hi, -q if v.sign else q))
    return q & ((1 << (8 * size_of(dst_t))) - 1)


def convert_mode(op):
    return CONVERT_MODE.get(op, op[-1])


# ---- one vector test ------------------------------------------------------------------------------------------
def lane_addr(opnd, r, k, esize):
    off, blk, rep = opnd
    per_block = 32 // esize
    return off + (r * rep + (k // per_block) * blk) * 32 + (k % per_block) * esize


def read(buf, addr, size):
    return int.from_bytes(buf[addr:addr + size], "little")


def write(buf, addr, size, value):
    buf[addr:addr + size] = value.to_bytes(size, "little")


def expect_vector(t, ub_in):
    op = t["op"]
    dst_t, src_t = t["dst_dtype"], t["src_dtype"]
    dsize, ssize = size_of(dst_t), size_of(src_t)
    dfmt, sfmt = FLOAT.get(dst_t), FLOAT.get(src_t)
    sat = bool(t["saturation"]) and dst_t in ("float16", "bfloat16")
    lanes = 256 // max(dsize, ssize)
    if t["counter"]:
        n = t["mask_low"]
        repeats = (n + lanes - 1) // lanes

        def active(r, k):
            return r * lanes + k < n
    else:
        repeats = t["repeat"]
        mask = (t["mask_high"] << 64) | t["mask_low"]

        def active(r, k):
            return (mask >> k) & 1 == 1
    buf = bytearray(ub_in)
    lanes_written = {}  # dst byte offset -> (Allowed, description)
    scalar = None
    if "scalar" in t and dfmt is not None:
        scalar = decode(t["scalar"], dfmt)
    elif "scalar" in t:
        scalar = signed(t["scalar"], dsize)
    for r in range(repeats):
        results = []
        for k in range(lanes):
            if not active(r, k):
                continue
            ins = [read(buf, lane_addr(s, r, k, ssize), ssize) for s in t["srcs"]]
            if op == "vector_dup":
                allowed = Allowed([t["scalar"]])
            elif op.startswith("vconv_") and dst_t in INT_RANGE:
                allowed = Allowed([to_integer(ins[0], sfmt, dst_t, convert_mode(op))])
            elif op.startswith("vconv_") and src_t == "uint8":
                allowed = Allowed([encode(Val("fin", 0, Fraction(ins[0])), dfmt)])
            elif src_t == "int32":
                vals = [signed(x, ssize) for x in ins] + ([scalar] if scalar is not None else [])
                result = INT_ARITH[op](vals[0], vals[1])
                if not INT_RANGE["int32"][0] <= result <= INT_RANGE["int32"][1]:
                    raise ValueError(f"an int32 test with a result out of range: {op}{tuple(vals)}")
                allowed = Allowed([result & 0xffffffff])
            elif op.startswith("vconv_"):
                v = decode(ins[0], sfmt)
                if dst_t == src_t:
                    res = encode(round_integral(v, convert_mode(op)), dfmt)
                else:
                    res = encode(v, dfmt, convert_mode(op))
                allowed = allowed_of([res], dfmt, sat)
            else:
                vals = [decode(x, sfmt) for x in ins]
                if scalar is not None:
                    vals.append(scalar)
                if op in ARITH:
                    allowed = allowed_of([encode(ARITH[op](vals[0], vals[1]), dfmt)], dfmt, sat)
                elif op in ("vmax", "vmaxs", "vmin", "vmins"):
                    allowed = minmax(vals[0], vals[1], op in ("vmax", "vmaxs"), dfmt, sat)
                elif op == "vsqrt":
                    if vals[0].sign and not (vals[0].kind == "fin" and vals[0].mag == 0) and vals[0].kind != "nan":
                        raise ValueError("vsqrt test with a negative input")
                    allowed = allowed_of([encode(sqrt(vals[0]), dfmt)], dfmt, sat)
                elif op == "vabs":
                    allowed = allowed_of([encode(absolute(vals[0]), dfmt)], dfmt, sat)
                else:
                    raise ValueError(f"unknown op {op}")
            results.append((lane_addr(t["dst"], r, k, dsize), allowed,
                            f"repeat {r} lane {k} inputs {', '.join(f'{x:#x}' for x in ins)}"))
        for addr, allowed, what in results:
            write(buf, addr, dsize, allowed.canonical(dfmt) if (allowed.bits or dfmt) else 0)
            lanes_written[addr] = (allowed, what)
    return buf, lanes_written, dsize, dfmt


def compare_vector(t, ub_in, ub_out):
    expected, lanes, dsize, dfmt = expect_vector(t, ub_in)
    problems = []
    lane_bytes = set()
    for addr, (allowed, what) in sorted(lanes.items()):
        lane_bytes.update(range(addr, addr + dsize))
        got = read(ub_out, addr, dsize)
        if not allowed.accepts(got, dfmt) and len(problems) < 4:
            problems.append(f"UB+{addr}: got {got:#0{2 + 2 * dsize}x}, expected {allowed.describe()} ({what})")
    changed = [i for i in range(len(expected)) if expected[i] != ub_out[i] and i not in lane_bytes]
    if changed:
        problems.append(f"{len(changed)} byte(s) outside the active destination lanes changed (first UB+{changed[0]}: "
                        f"{ub_in[changed[0]]:#04x} -> {ub_out[changed[0]]:#04x})")
    return problems


def changed_elsewhere(expected, got, written):
    changed = [i for i in range(len(expected)) if expected[i] != got[i] and i not in written]
    if not changed:
        return []
    return [f"{len(changed)} byte(s) outside the written lanes changed (first UB+{changed[0]})"]


def active_lanes(t, lanes):
    """(repeat, lane) pairs of the active lanes: counter mode's count, or the normal mode's mask and repeats."""
    if t["counter"]:
        n = t["mask_low"]
        return [(r, k) for r in range((n + lanes - 1) // lanes) for k in range(lanes) if r * lanes + k < n]
    mask = (t["mask_high"] << 64) | t["mask_low"]
    return [(r, k) for r in range(t["repeat"]) for k in range(lanes) if (mask >> k) & 1]


def check_gather(t, ub_in, ub_out):
    e = t["bytes"]
    lanes = 256 // e
    buf = bytearray(ub_in)
    written = set()
    problems = []
    for r, k in active_lanes(t, lanes):
        offset = read(ub_in, t["offsets"] + (r * lanes + k) * 4, 4)
        if offset % e or offset + e > t["table_elems"] * e:
            return [f"the test's offset {offset} is outside the table"]
        addr = t["dst"] + r * t["dst_rep"] * 32 + k * e
        want = read(ub_in, t["table"] + offset, e)
        written.update(range(addr, addr + e))
        got = read(ub_out, addr, e)
        if got != want and len(problems) < 4:
            problems.append(f"repeat {r} lane {k} (offset {offset}): got {got:#x}, expected {want:#x}")
        write(buf, addr, e, want)
    return problems + changed_elsewhere(buf, ub_out, written)


CMP = {"lt": lambda a, b: a < b, "gt": lambda a, b: a > b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
       "ge": lambda a, b: a >= b, "ne": lambda a, b: a != b}


def check_compare(t, ub_in, ub_out):
    dt = t["dtype"]
    size = size_of(dt)
    fmt = FLOAT.get(dt)
    lanes = 256 // size
    mode = t["op"].rsplit("_", 1)[1]
    buf = bytearray(ub_in)
    for r in range(t["repeat"]):
        bits = 0
        for k in range(lanes):
            a, b = (read(ub_in, lane_addr(s, r, k, size), size) for s in t["srcs"])
            if fmt is None:
                result = CMP[mode](signed(a, size), signed(b, size))
            else:
                va, vb = decode(a, fmt), decode(b, fmt)
                if va.kind == "nan" or vb.kind == "nan":
                    result = mode == "ne"
                else:
                    result = CMP[mode](va.real(), vb.real())
            bits |= int(result) << k
        buf[r * lanes // 8:(r + 1) * lanes // 8] = bits.to_bytes(lanes // 8, "little")
    bad = [i for i in range(len(buf)) if buf[i] != ub_out[i]]
    return [] if not bad else [f"{len(bad)} byte(s) differ (first UB+{bad[0]}: got {ub_out[bad[0]]:#04x}, expected "
                               f"{buf[bad[0]]:#04x})"]


def check_select(t, ub_in, ub_out):
    size = size_of(t["dtype"])
    lanes = 256 // size
    buf = bytearray(ub_in)
    written = set()
    problems = []
    results = {}
    for r, k in active_lanes(t, lanes):
        bit = r * lanes + k
        first = (ub_in[t["mask_at"] + bit // 8] >> (bit % 8)) & 1
        src = t["srcs"][0] if first else t["srcs"][1]
        results[lane_addr(t["dst"], r, k, size)] = (read(buf, lane_addr(src, r, k, size), size), r, k)
    for addr, (want, r, k) in results.items():
        written.update(range(addr, addr + size))
        got = read(ub_out, addr, size)
        if got != want and len(problems) < 4:
            problems.append(f"repeat {r} lane {k}: got {got:#x}, expected {want:#x}")
        write(buf, addr, size, want)
    return problems + changed_elsewhere(buf, ub_out, written)


# ---- copies ---------------------------------------------------------------------------------------------------
def align32(n):
    return (n + 31) // 32 * 32


def compare_bytes(label, expected, got, skip=()):
    for i in range(len(expected)):
        if i in skip:
            continue
        if expected[i] != got[i]:
            return [f"{label}+{i}: got {got[i]:#04x}, expected {expected[i]:#04x}"]
    return []


def check_copy(t, gm_in, gm_out, ub_in, ub_out):
    """Returns (layout problems, dummy problems or None when the test has no dummy bytes)."""
    op = t["op"]
    if op.endswith("_align") and (t["n_burst"] == 0 or t["len"] == 0):  # a no-op (blockCount or blockLen 0)
        return compare_bytes("UB", ub_in, ub_out) + compare_bytes("GM", gm_in, gm_out), None
    if op == "copy_gm_to_ubuf_align":
        e = t["bits"] // 8
        left, right, n = t["left"] * e, t["right"] * e, t["len"]
        pad = (t["pad"] & ((1 << (8 * e)) - 1)).to_bytes(e, "little")
        step = align32(left + n + right) + t["ub_gap"] * 32
        ub = bytearray(ub_in)
        dummy = {}
        for i in range(t["n_burst"]):
            u, g = i * step, i * (n + t["gm_gap"])
            for j in range(left):
                ub[u + j] = pad[j % e]
            ub[u + left:u + left + n] = gm_in[g:g + n]
            for j in range(right):
                ub[u + left + n + j] = pad[j % e]
            filler = bytes(gm_in[g:g + e]) if left == 0 and right == 0 else pad
            for j, a in enumerate(range(u + left + n + right, u + align32(left + n + right))):
                dummy[a] = filler[j % e]
        layout = compare_bytes("UB", ub, ub_out, skip=dummy) + compare_bytes("GM", gm_in, gm_out)
        if not dummy:
            return layout, None
        bad = [a for a in sorted(dummy) if ub_out[a] != dummy[a]]
        dummy_problems = [] if not bad else [
            f"UB+{bad[0]}..: {len(bad)} dummy byte(s) differ (first: got {ub_out[bad[0]]:#04x}, expected "
            f"{dummy[bad[0]]:#04x}: {'the burst first element' if left == 0 and right == 0 else 'the padding value'}"
            f"; got the bytes before the copy: {all(ub_out[a] == ub_in[a] for a in bad)})"]
        return layout, dummy_problems
    if op == "copy_ubuf_to_gm_align":
        n = t["len"]
        step = align32(n) + t["ub_gap"] * 32
        gm = bytearray(gm_in)
        for i in range(t["n_burst"]):
            g = i * (n + t["gm_gap"])
            gm[g:g + n] = ub_in[i * step:i * step + n]
        return compare_bytes("GM", gm, gm_out) + compare_bytes("UB", ub_in, ub_out), None
    # plain block copies
    n = t["blocks"] * 32
    to_ub = op == "copy_gm_to_ubuf"
    src, dst_in, dst_out = (gm_in, ub_in, ub_out) if to_ub else (ub_in, gm_in, gm_out)
    dst = bytearray(dst_in)
    for i in range(t["n_burst"]):
        s, d = i * (n + t["src_gap"] * 32), i * (n + t["dst_gap"] * 32)
        dst[d:d + n] = src[s:s + n]
    other_in, other_out = (gm_in, gm_out) if to_ub else (ub_in, ub_out)
    return compare_bytes("UB" if to_ub else "GM", dst, dst_out) + compare_bytes(
        "GM" if to_ub else "UB", other_in, other_out), None


# ---- scalar bit intrinsics and CTRL ---------------------------------------------------------------------------
def check_bits(t):
    problems = []
    for v, got in t["sff0"]:
        want = next((i for i in range(64) if not (v >> i) & 1), -1)
        if got != want:
            problems.append(f"sff0({v:#x}) = {got}, expected {want}")
    for key, setting in (("sbitset0", 0), ("sbitset1", 1)):
        for v, idx, got in t[key]:
            bit = 1 << ((idx % 64 + 64) % 64)
            want = (v | bit) if setting else (v & ~bit & (2 ** 64 - 1))
            if got != want:
                problems.append(f"{key}({v:#x}, {idx}) = {got:#x}, expected {want:#x}")
    return problems[:6]


def check_ctrl(t):
    problems = []
    if t["read_back"] != t["written"]:
        problems.append(f"get_ctrl() after set_ctrl({t['written']:#x}) = {t['read_back']:#x}")
    if t["read_back_bit48_set"] != t["written"] | (1 << 48):
        problems.append(f"get_ctrl() after setting bit 48 = {t['read_back_bit48_set']:#x}")
    if not t["saturating_bit48_clear"] or t["saturating_bit48_set"]:
        problems.append("saturation does not follow CTRL[48] (clear: saturation, set: inf/NaN kept)")
    return problems


# ---- driver ---------------------------------------------------------------------------------------------------
def run(directory: Path):
    """Returns (passed, total, failure lines)."""
    passed = total = 0
    failures = []
    tests = sorted(directory.glob("*.json"))
    if not tests:
        return 0, 1, [f"intrinsics self-test: no tests in {directory}"]

    def verdict(name, problems):
        nonlocal passed, total
        total += 1
        if problems:
            failures.append(f"intrinsics FAIL {name}: " + "; ".join(problems))
        else:
            passed += 1

    for path in tests:
        t = json.loads(path.read_text())
        name = t["name"]

        def data(buf, when):
            return (directory / f"{name}.{buf}.{when}").read_bytes()
        hazards = [] if t.get("hazards", 0) == 0 else [f"{t['hazards']} pipe hazard(s) reported"]
        kind = t["kind"]
        if kind == "vector":
            verdict(name, compare_vector(t, data("ub", "in"), data("ub", "out")) + hazards)
        elif kind == "copy":
            layout, dummy = check_copy(t, data("gm", "in"), data("gm", "out"), data("ub", "in"), data("ub", "out"))
            verdict(name, layout + hazards)
            if dummy is not None:
                verdict(f"{name}/dummy", dummy)
        elif kind in ("gather", "compare", "select"):
            check = {"gather": check_gather, "compare": check_compare, "select": check_select}[kind]
            verdict(name, check(t, data("ub", "in"), data("ub", "out")) + hazards)
        elif kind == "refusal":
            message = (directory / f"{name}.message").read_text(errors="replace")
            verdict(name, [] if t["aborted"] and t["expect"] in message else
                    [f"must abort naming {t['expect']!r}; aborted: {bool(t['aborted'])}, said: {message.strip()[:200]!r}"])
        elif kind == "bits":
            verdict(name, check_bits(t))
        elif kind == "ctrl":
            verdict(name, check_ctrl(t))
        else:
            verdict(name, [f"unknown test kind {kind}"])
    return passed, total, failures


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    passed, total, failures = run(Path(sys.argv[1]))
    for line in failures:
        print(line)
    print("SELFTEST " + json.dumps({"passed": passed, "total": total}))
    return 0 if passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
