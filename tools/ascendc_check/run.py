#!/usr/bin/env python3
"""Type-checks the AscendC kernels in op_kernel/ against the REAL AscendC headers (CPU-debug mode).

    tools/ascendc_check/run.py [--asc-devkit DIR] [--asc-tools DIR] [--self-test | --kernels] [--run] [--emulate [--seed N]]

The directories default to $ASC_DEVKIT_DIR / $ASC_TOOLS_DIR: work trees of
https://github.com/mirror-cann/asc-devkit (the AscendC class library: include/, impl/) and
https://github.com/hicann/asc-tools (cpudebug/: stub_def.h, kernel_fp16.h, kernel_bf16.h, the API checkers),
e.g. `git clone --depth 1 <url> /tmp/asc-devkit`. Nothing of either is copied into the project.

Every translation unit op_kernel/<op>/*.cpp (headers come along through its includes) is compiled with
`g++ -fsyntax-only -Wall -Wextra -Wconversion` in the official CPU-debug configuration (ASCENDC_CPU_DEBUG,
__CCE_KT_TEST__, __CCE_AICORE__=220, __NPU_ARCH__=2201, __DAV_C220_VEC__, ...; ascendc_api.md section 12), so
every AscendC call a kernel makes is type-checked by the library's own templates; an error anywhere or a
warning located in the project fails it. Generated at run time into build/ascendc_check/:

  include/stub_fun.h     stand-in for the closed intrinsic layer: tools/ascendc_check/intrinsic_types.h
                         (the types and enumerators the library names) plus one permissive do-nothing
                         template per intrinsic FUNCTION the library calls without declaring it, discovered
                         from the compiler's "not declared" diagnostics located in library files (never in
                         the project). A name the public AscendC interface (asc-devkit include/) declares is
                         refused, so the stand-in cannot declare class-library API. The GM<->UB copies
                         (copy_gm_to_ubuf*, copy_ubuf_to_gm*) also report their GM ranges to --run drivers
                         (tools/ascendc_check/gm_copy_trace.h).
  include/kernel_tiling/kernel_tiling.h
                         by asc-devkit's own generator (impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py).
  tiling/<tu>.h          the header CANN's op compiler writes for a kernel and passes with -include
                         (asc_op_compiler/get_op_tiling.py: gen_dynamic_shape_v2, CPU-debug branch):
                         InitTilingData and GET_TILING_DATA for the struct the kernel registers with
                         REGISTER_TILING_DEFAULT, found as CANN finds it (preprocessing with
                         __CHECK_FEATURE_AT_PRECOMPILE).

Modes (default: self-test, then kernels):
  --self-test  proves the rig with tools/ascendc_check/selftest/*.cpp: `// ascendc-check: expect-ok` must
               compile cleanly; `// ascendc-check: expect-error <regex>` must fail, with an error located in the
               test itself and a diagnostic matching every such regex.
  --kernels    op_kernel/<op>/*.cpp only.
  --run        also links and runs (tools/ascendc_check/run/): each kernel with a driver
               run/<stem>_run.cpp over every block of its launches, the self-tests marked `run-ok` /
               `run-abort <regex>`, and each driver's self-tests (`// ascendc-check: driver-self-test <arg>
               <regex>`: the driver run with <arg> builds a deliberately broken launch and must fail with
               output matching <regex>). Blocks run one forked process each, as asc-tools' ICPU_RUN_KF.

What --run verifies: the intrinsics do nothing, so no data is computed; what runs is the real library's
CPU-debug bookkeeping and checks (TPipe/TQue buffer accounting against the 192 KiB UB, Cast round modes,
DataCopyPad, vector operand checks from asc-tools' api_check), which abort on a violation, on the tilings the
project's host code computes, and the real ListTensorDesc decoder on lists in CANN's launcher layout. Its
count assertions, which that layout fails in CPU-debug mode only, are compiled as the device compiles them
(run/list_decoder_device_asserts.h) and reported. The drivers check every GM range the copy intrinsics reach
(run/gm_coverage.h): inside one tensor, with its dtype's width, at most a chunk; every input read and every
output written exactly once per element, nothing else touched; each block exactly its share of the host's
work split (the 8-bit kernel's scale lists in blocks, its other lists in elements; with found_inf set no copy at
all). The list driver also makes tensor data inaccessible in the blocks (only copies may move it),
and with found_inf nonzero every list, step and grad_scale too (the kernel must return first), and places
the empty list of an absent optional input before an inaccessible page (it must not be opened). Not verified:
numerical results (the twin tests hold the kernels to the golden), UB addresses, synchronisation between
pipes (no instruction model) and anything of the device compiler. Kernels are built -O2 for --run (the
library's TPipe constructor fills ~2 MB of simulated buffers through map lookups: 25 ms per block at -O0);
the run self-tests -O0, since their expected backtraces name the library function that aborts.
--emulate: the kernels COMPUTE through the real library. The intrinsic layer is emulate/emu_intrinsics.h instead
of do-nothing templates (EMULATED below; any other intrinsic a kernel reaches aborts by name): vector arithmetic
(float, half, int32) with normal and counter masks, repeats, block and repeat strides; conversions in every round
mode with the 910B saturation setting (CTRL[48]), uint8 -> half and to int32 / uint8; vector_dup; vgather; vcmpv_*
into a bit mask; set_cmpmask + vsel (VSEL_TENSOR_TENSOR_MODE); the GM<->UB copies; mask, control and pad registers;
set_flag / wait_flag / pipe_barrier; TPipe's event-id allocator (sff0 / sbitset*). Every instruction goes to a pipe (V, MTE2,
MTE3) and a vector-clock hazard checker (emulate/emu_core.h) reports any UB access not ordered after the
conflicting access of another pipe, with both call sites in the kernel (V->V in program order: the device compiler
inserts the PIPE_V barriers on dav-c220). Drivers emulate/<kernel>_emulate.cpp run every tiling key and dtype row
of each kernel on seeded inputs (tails, 1 to 8 chunks per core, both float-overflow modes); emulate/compare.py (the
project's venv) holds every output bit-exactly to golden.emulate_* (the 8-bit kernel's codes, scales, vars, EMA and
copies to golden8bit.emulate_entry8); emulate/hazard_selftest/ holds kernels with
broken synchronisation the checker must catch. What it cannot prove: the device's own vdiv/vsqrt rounding (the
emulation is IEEE, the docs give no bit-level rule for 910B), flush-to-zero of subnormals, the device compiler.
emulate/selftest/ holds the emulated layer itself to its documented rules (each intrinsic configuration against an
independent Python model) and the same API-level programs through it and through the twin.

Exit status 0 when everything is as expected.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RIG = REPO / "tools" / "ascendc_check"
RUN_DIR = RIG / "run"
EMU_DIR = RIG / "emulate"
KERNEL_DIR = REPO / "op_kernel"
# The shared folders; a source of an operator also gets that operator's own (operator_includes), as the
# CMake build gives them (cmake/aea_add_operator.cmake): headers are included by name.
KERNEL_INCLUDES = [KERNEL_DIR / "common"]
HOST_INCLUDES = [REPO / "op_host" / "common", *KERNEL_INCLUDES]


def operator_of(tu: Path):
    """The operator a kernel translation unit belongs to (op_kernel/<op>/), or None (a self-test)."""
    return tu.parent.name if tu.parent.parent == KERNEL_DIR and tu.parent.name != "common" else None


def source_operator(src: Path):
    """The operator a host source of the repository belongs to (op_host/<op>/, op_kernel/<op>/), or None."""
    rel = src.resolve().relative_to(REPO).parts if src.resolve().is_relative_to(REPO) else ()
    return rel[1] if len(rel) > 2 and rel[0] in ("op_host", "op_kernel") and rel[1] != "common" else None


def operator_includes(op, host=False) -> list[Path]:
    """Operator `op`'s folders a kernel (or, with host, a host source or driver) of it may include."""
    if op is None:
        return []
    return [REPO / "op_host" / op, KERNEL_DIR / op] if host else [KERNEL_DIR / op]

# The official CPU-debug configuration of a 910B (dav-c220) vector kernel (ascendc_api.md section 12;
# asc-tools cpudebug/CMakeLists.txt, asc-devkit tests/api/basic_api/CMakeLists.txt: ascend910B1_AIV).
DEFINES = ["ASCENDC_CPU_DEBUG=1", "ASCENDC_DEBUG=1", "ASCENDC_DUMP=0", "__CCE_KT_TEST__=1", "__CCE_AICORE__=220",
           "__NPU_ARCH__=2201", "__DAV_C220__", "__DAV_C220_VEC__", "__DAV_VEC__", "_GLIBCXX_USE_CXX11_ABI=0"]
# Include directories of asc-devkit's asc_kernel_headers target (impl/adv_api/gen_kernel_tiling.cmake)
# plus include/utils (std:: replacements) and asc-tools' cpudebug headers.
DEVKIT_INCLUDES = ["", "include", "include/basic_api", "include/simt_api", "include/utils", "impl", "impl/basic_api",
                   "impl/simt_api"]
CXX = os.environ.get("CXX", "g++")
# Kernels must also be warning-free where the warning points into the project (e.g. an implicit narrowing
# into an API parameter such as InitBuffer's uint8_t buffer count).
KERNEL_WARNINGS = ("-Wall", "-Wextra", "-Wconversion")

NOT_DECLARED = re.compile(
    r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+): error: (?:there are no arguments to ‘(?P<a>\w+)’|"
    r"‘(?P<b>\w+)’ was not declared in this scope)")
# A permissive intrinsic whose result must convert to a type the placeholder result does not reach.
NEEDS_RESULT = re.compile(r"could not convert ‘(?P<name>\w+)(?:<[^’]*>)?\([^’]*’ from ‘AscIntrinsicResult’ to ‘(?P<type>[^’]+)’")
EXPECT = re.compile(r"^//\s*ascendc-check:\s*(?P<kind>expect-ok|expect-error)\s*(?P<regex>.*?)\s*$", re.M)
# A function declaration or definition at the start of a line: specifiers, a return type, the name, "(".
DECLARATION = re.compile(
    r"^[ \t]*(?!return\b|else\b|case\b|delete\b|new\b|throw\b)(?:(?:static|inline|constexpr|__aicore__|__inline__|"
    r"extern|const|volatile|unsigned|signed|struct|enum|typename|__attribute__\(\([^)]*\)\))\s+)*"
    r"[A-Za-z_][\w:]*(?:<[^;(){}]*>)?[\s*&]+(\w+)\s*\(", re.M)
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)", re.M)
RUN_MARK = re.compile(r"^//\s*ascendc-check:\s*(?P<kind>run-ok|run-abort)\s*(?P<regex>.*?)\s*$", re.M)
# A deliberately broken launch of a kernel driver (its argument) that must fail with output matching the regex.
DRIVER_SELF_TEST = re.compile(r"^//\s*ascendc-check:\s*driver-self-test\s+(?P<arg>\S+)\s+(?P<regex>.+?)\s*$", re.M)
RUN_SOURCES = re.compile(r"^//\s*ascendc-check:\s*run-sources\s+(?P<paths>.+?)\s*$", re.M)
# The stand-in's GM<->UB copy intrinsics (DataCopy, DataCopyPad), which report their GM range (gm_copy_trace.h).
GM_COPY = re.compile(r"^copy_(?P<dir>gm_to_ubuf|ubuf_to_gm)(?:_align_b(?P<bits>8|16|32))?$")
# The intrinsics emulate/emu_intrinsics.h gives semantics to (--emulate); every other one aborts when reached.
EMULATED = frozenset(
    ["vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vadds", "vmuls", "vmaxs", "vmins", "vsqrt", "vabs",
     "vector_dup", "vconv_f162f32", "vconv_bf162f32", "vconv_f322f16", "vconv_f322f16r", "vconv_f322f16f",
     "vconv_f322f16c", "vconv_f322f16a", "vconv_f322f16z", "vconv_f322f16o", "vconv_f322bf16r", "vconv_f322bf16f",
     "vconv_f322bf16c", "vconv_f322bf16a", "vconv_f322bf16z", "vconv_f322f32r", "vconv_f322f32f", "vconv_f322f32c",
     "vconv_f322f32a", "vconv_f322f32z", "vconv_u82f16", "vconv_f162u8", "copy_gm_to_ubuf", "copy_ubuf_to_gm",
     "vgather", "set_cmpmask", "vsel"]
    + [f"vconv_{c}{m}" for c in ("f162s32", "f162u8", "f322s32") for m in "rfcaz"]
    + [f"vcmpv_{m}" for m in ("lt", "gt", "eq", "le", "ge", "ne")]
    + [f"copy_{d}_align_b{b}" for d in ("gm_to_ubuf", "ubuf_to_gm") for b in (8, 16, 32)]
    + ["set_mask_count", "set_mask_norm", "set_vector_mask", "set_atomic_none", "set_mov_pad_val", "get_ctrl",
       "set_ctrl", "set_flag", "wait_flag", "pipe_barrier", "sff0", "sbitset0", "sbitset1"])
TILING_STRUCT = re.compile(r"__enable_custom_tiling\s*([0-9a-zA-Z_:<>]+)\s*=\s*default;")


def write_if_changed(path: Path, text: str):
    """Keeps the file (and its time stamp) when the content is the same, so cached objects stay valid."""
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def log(msg):
    print(f"ascendc-check: {msg}", flush=True)


class Rig:
    """The generated pieces and the compiler command for one (asc-devkit, asc-tools) pair."""

    def __init__(self, devkit: Path, tools: Path, build: Path):
        self.devkit, self.tools, self.build = devkit, tools, build
        self.include = build / "include"
        self.emulate_include = build / "emulate-include"  # its stub_fun.h shadows the do-nothing one
        self.tiling_dir = build / "tiling"
        self.key = hashlib.sha256(f"{devkit}\n{tools}".encode()).hexdigest()[:12]
        self.cache = build / f"intrinsics-{self.key}.txt"  # discovered names (speeds up later runs)
        self.intrinsics: dict[str, str] = {}           # name -> result type
        if self.cache.is_file():
            for line in self.cache.read_text().splitlines():
                name, _, result = line.partition(" ")
                self.intrinsics[name] = result or "AscIntrinsicResult"
        self.library_names = None

    def flags(self, emulate=False, tu=None):
        """The kernel compile command's flags; for a kernel of an operator (tu) with its folder."""
        out = ["-std=c++17", "-fmax-errors=0"] + [f"-D{d}" for d in DEFINES]
        out += ["-I", str(self.emulate_include)] if emulate else []
        out += ["-I", str(self.include)]
        for sub in DEVKIT_INCLUDES:
            out += ["-I", str(self.devkit / sub)]
        for inc in KERNEL_INCLUDES + operator_includes(operator_of(tu) if tu else None):
            out += ["-I", str(inc)]
        return out + ["-I", str(self.tools / "cpudebug" / "include")]

    # ---- generated files ------------------------------------------------------------------------------
    def generate_kernel_tiling(self):
        out = self.include / "kernel_tiling" / "kernel_tiling.h"
        script = self.devkit / "impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py"
        out.parent.mkdir(parents=True, exist_ok=True)
        fresh = out.with_suffix(".new")
        subprocess.run([sys.executable, str(script), str(self.devkit / "include/adv_api"), str(fresh)], check=True,
                       stdout=subprocess.DEVNULL)
        write_if_changed(out, fresh.read_text())
        fresh.unlink()

    def write_stub_fun(self, emulate=False):
        """The intrinsic layer: do-nothing templates (type-check, --run) or, with `emulate`, the emulated
        intrinsics of emulate/emu_intrinsics.h and an abort by name for every other intrinsic."""
        if emulate:
            return self.write_emulated_stub_fun()
        lines = [
            "// GENERATED by tools/ascendc_check/run.py: stand-in for CANN's closed stub_fun.h (the CCE intrinsic layer).",
            "// Types/enumerators: tools/ascendc_check/intrinsic_types.h. Functions: every intrinsic the",
            "// asc-devkit headers call without declaring it, as a permissive do-nothing template.",
            "#pragma once",
            f'#include "{RIG / "intrinsic_types.h"}"',
            "// Result of an intrinsic: converts to an integer (the scalar intrinsics' results) and, explicitly,",
            "// to any pointer (the library casts e.g. get_imm() to UB pointers).",
            "struct AscIntrinsicResult {",
            "    int64_t value = 0;",
            "    constexpr operator int64_t() const { return value; }",
            "    template <class P> explicit constexpr operator P*() const { return nullptr; }",
            "};",
        ]
        lines += ["// The GM<->UB copies also report their GM range to a --run driver (gm_copy_trace.h).",
                  f'#include "{RIG / "gm_copy_trace.h"}"']
        for name in sorted(self.intrinsics):
            result = self.intrinsics[name]
            traced = GM_COPY.match(name)
            if traced:
                to_gm = "true" if traced["dir"] == "ubuf_to_gm" else "false"
                elem_bytes = int(traced["bits"]) // 8 if traced["bits"] else 0
                lines.append(f"template <class... Args> inline {result} {name}(Args&&... args) {{ "
                             f'ascendc_check::TraceGmCopy("{name}", {to_gm}, {elem_bytes}, args...); return {result}(); }}')
            else:
                lines.append(f"template <class... Args> inline {result} {name}(Args&&...) {{ return {result}(); }}")
        write_if_changed(self.include / "stub_fun.h", "\n".join(lines) + "\n")
        write_if_changed(self.cache, "".join(f"{n} {r}\n" for n, r in sorted(self.intrinsics.items())))

    def write_emulated_stub_fun(self):
        header = (EMU_DIR / "emu_intrinsics.h").read_text()
        # (the align copies are written once per width with a macro: copy_..._align_b##BITS)
        missing = [n for n in EMULATED if not re.search(rf"\b{re.sub(r'_b[0-9]+$', '_b', n)}", header)]
        if missing:
            sys.exit(f"ascendc-check: EMULATED names missing from emu_intrinsics.h: {', '.join(missing)}")
        lines = [
            "// GENERATED by tools/ascendc_check/run.py --emulate: the intrinsic layer with semantics. The intrinsics of",
            "// tools/ascendc_check/emulate/emu_intrinsics.h compute; every other one aborts by name when a",
            "// kernel reaches it; asc-tools' CPU-debug hooks (AscendC*) do nothing, as in --run.",
            "#pragma once",
            f'#include "{RIG / "intrinsic_types.h"}"',
            f'#include "{EMU_DIR / "emu_intrinsics.h"}"',
            "struct AscIntrinsicResult {",
            "    int64_t value = 0;",
            "    constexpr operator int64_t() const { return value; }",
            "    template <class P> explicit constexpr operator P*() const { return nullptr; }",
            "};",
        ]
        for name in sorted(self.intrinsics):
            if name in EMULATED:
                continue
            result = self.intrinsics[name]
            if name.startswith("AscendC"):
                lines.append(f"template <class... Args> inline {result} {name}(Args&&...) {{ return {result}(); }}")
            else:
                lines.append(f"template <class... Args> inline {result} {name}(Args&&...) "
                             f'{{ ascendc_emu::Unemulated("{name}"); }}')
        self.emulate_include.mkdir(parents=True, exist_ok=True)
        write_if_changed(self.emulate_include / "stub_fun.h", "\n".join(lines) + "\n")

    def tiling_header(self, tu: Path) -> Path:
        """CANN's generated tiling header for one kernel (gen_dynamic_shape_v2, ASCENDC_CPU_DEBUG branch)."""
        pre = subprocess.run([CXX, "-E", "-P", "-D__CHECK_FEATURE_AT_PRECOMPILE", *self.flags(tu=tu), str(tu)],
                             capture_output=True, text=True)
        found = sorted(set(TILING_STRUCT.findall(pre.stdout)))
        guard = re.sub(r"\W", "_", tu.stem).upper()
        text = [f"// GENERATED by tools/ascendc_check/run.py for {tu.name}: the shape of the header CANN's op compiler",
                "// writes and passes with -include (asc_op_compiler/get_op_tiling.py: gen_dynamic_shape_v2,",
                "// get_tiling_data_func (CPU-debug branch), _get_tiling_data_with_time_stamp).",
                f"#ifndef __{guard}_HEADER__", f"#define __{guard}_HEADER__", '#include "kernel_tiling/kernel_tiling.h"',
                "#define __ASCENDC_INCLUDE_INTERNAL_HEADERS__  // kernel_log.h is internal: as the library's own headers do",
                '#include "kernel_log.h"', "#undef __ASCENDC_INCLUDE_INTERNAL_HEADERS__",
                "#define REGISTER_TILINGDATA_SIZE(tiling_struct, counter)",
                "template <class T>",
                "inline __aicore__ void InitTilingData(const __gm__ uint8_t *p_tilingdata, T *tilingdata)",
                "{",
                "    constexpr uint64_t all_bytes = sizeof(T);",
                "    constexpr uint32_t judge_bytes = all_bytes > 15 ? all_bytes - 15 : 0;",
                "    uint32_t i = 0;",
                "    if (judge_bytes > 0) {",
                "        for (; i < judge_bytes; i += 16) {",
                "            (*(uint64_t*)((uint8_t*)tilingdata + i)) = (*(const __gm__ uint64_t*)((const __gm__ uint8_t *)p_tilingdata + i));",
                "            (*(uint64_t*)((uint8_t*)tilingdata + i + 8)) = (*(const __gm__ uint64_t*)((const __gm__ uint8_t *)p_tilingdata + i + 8));",
                "        }",
                "    }",
                "    if (all_bytes & 0x00000008) {",
                "        (*(uint64_t*)((uint8_t*)tilingdata + i)) = (*(const __gm__ uint64_t *)((const __gm__ uint8_t *)p_tilingdata + i));",
                "        i += 8;",
                "    }",
                "    if (all_bytes & 0x00000004) {",
                "        (*(uint32_t*)((uint8_t*)tilingdata + i)) = (*(const __gm__ uint32_t *)((const __gm__ uint8_t *)p_tilingdata + i));",
                "        i += 4;",
                "    }",
                "    if (all_bytes & 0x00000002) {",
                "        (*(uint16_t*)((uint8_t*)tilingdata + i)) = (*(const __gm__ uint16_t *)((const __gm__ uint8_t *)p_tilingdata + i));",
                "        i += 2;",
                "    }",
                "    if (all_bytes & 0x00000001) {",
                "        (*(uint8_t*)((uint8_t*)tilingdata + i)) = (*(const __gm__ uint8_t *)((const __gm__ uint8_t *)p_tilingdata + i));",
                "    }",
                "}"]
        if len(found) == 1:
            text += ["#define GET_TILING_DATA(tiling_data, tiling_arg) \\",
                     f"    {found[0]} tiling_data; \\", f"    InitTilingData<{found[0]}>(tiling_arg, &tiling_data);"]
        text += ["#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, tiling_data, tiling_arg) \\",
                 "    REGISTER_TILINGDATA_SIZE(tiling_struct, __COUNTER__); \\",
                 "    tiling_struct tiling_data; \\",
                 "    InitTilingData<tiling_struct>(tiling_arg, &tiling_data);",
                 "#define GET_TILING_DATA_MEMBER(tiling_type, member, var, tiling) \\",
                 "    REGISTER_TILINGDATA_SIZE(tiling_type, __COUNTER__); \\",
                 "    decltype(((tiling_type *)0)->member) var; \\",
                 "    size_t offset##var = (size_t)(&((tiling_type*)0)->member); \\",
                 "    InitTilingData<decltype(((tiling_type *)0)->member)>(tiling + offset##var, &var);",
                 f"#endif  // __{guard}_HEADER__"]
        self.tiling_dir.mkdir(parents=True, exist_ok=True)
        out = self.tiling_dir / f"{tu.stem}.h"
        write_if_changed(out, "\n".join(text) + "\n")
        return out

    # ---- compiling --------------------------------------------------------------------------------------
    def compile(self, tu: Path, tiling: Path, extra=()):
        cmd = [CXX, "-fsyntax-only", *self.flags(tu=tu), "-include", str(tiling), *extra, str(tu)]
        return subprocess.run(cmd, capture_output=True, text=True)

    def in_library(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real.startswith((str(self.devkit) + os.sep, str(self.tools) + os.sep))

    def learn(self, stderr: str) -> dict:
        """Intrinsics the library calls without a declaration (only diagnostics located in library files)."""
        found = {}
        for line in stderr.splitlines():
            m = NOT_DECLARED.match(line)
            if m and self.in_library(m["path"]):
                name = m["a"] or m["b"]
                if name not in self.intrinsics and self.called_at(m["path"], int(m["line"]), int(m["col"]), name):
                    found[name] = "AscIntrinsicResult"
            m = NEEDS_RESULT.search(line)
            if m and m["name"] in self.intrinsics and self.intrinsics[m["name"]] != m["type"]:
                found[m["name"]] = m["type"]
        return found

    @staticmethod
    def called_at(path, line, col, name) -> bool:
        """True when the diagnostic points at `name(` (a call), not at a type, constant or enumerator."""
        text = Path(path).read_text(errors="replace").splitlines()[line - 1]
        c = col - 1
        if text[c:].startswith(name):
            return text[c + len(name):].lstrip().startswith("(")
        return text[c:c + 1] == "(" and text[:c].rstrip().endswith(name)

    def declared_by_library(self, names):
        """Names among `names` that the class library's public interface (asc-devkit include/) declares or
        #defines: the AscendC API. The stand-in never declares those, whatever the diagnostics say."""
        if self.library_names is None:
            self.library_names = set()
            for path in (self.devkit / "include").rglob("*.h"):
                text = path.read_text(errors="replace")
                self.library_names.update(DECLARATION.findall(text))
                self.library_names.update(DEFINE.findall(text))
        return sorted(n for n in names if n in self.library_names)

    def compile_all(self, units, jobs):
        """Compiles every (tu, tiling header, extra flags) unit, discovering intrinsics until nothing new turns up."""
        while True:
            self.write_stub_fun()
            with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
                results = list(pool.map(lambda u: self.compile(*u), units))
            new = {}
            for r in results:
                new.update(self.learn(r.stderr))
            if not new:
                return results
            clash = self.declared_by_library(n for n in new if new[n] == "AscIntrinsicResult")
            if clash:
                sys.exit(f"ascendc-check: refusing to stub names the library declares itself: {', '.join(clash)}")
            log(f"stand-in: {len(new)} more intrinsic(s) ({len(self.intrinsics) + len(new)} in all)")
            self.intrinsics.update(new)


class Runner:
    """--run: links translation units with the open part of asc-tools' CPU-debug runtime (api_check
    operand checkers, regfwk globals, the half/bf16 host types) and runs them (run/run_support.h)."""

    def __init__(self, rig: Rig, jobs: int):
        self.rig, self.jobs = rig, jobs
        self.locks: dict[Path, threading.Lock] = {}
        self.out = rig.build / f"run-{rig.key}"
        self.out.mkdir(parents=True, exist_ok=True)
        cpudebug = rig.tools / "cpudebug"
        self.host_flags = ["-std=c++17", "-O0", "-g", "-DNO_COSIM"] + [f"-D{d}" for d in DEFINES]
        for inc in (RUN_DIR, RUN_DIR / "host", rig.include, cpudebug / "include", cpudebug / "src/api_check",
                    cpudebug / "src/api_check/inc", cpudebug / "utils", cpudebug / "utils/include",
                    cpudebug / "utils/include/utils", *HOST_INCLUDES):
            self.host_flags += ["-I", str(inc)]
        bf16 = rig.devkit / "tests/api/simt_api/common_simt/kernel_bf16.cpp"  # Bf16T's out-of-line members
        self.support_sources = sorted((cpudebug / "src/api_check").glob("*.cpp")) + [
            cpudebug / "src/regfwk/stub_base.cpp", cpudebug / "src/regfwk/stub_backtrace.cpp",
            cpudebug / "src/regfwk/kernel_print_lock.cpp",
            cpudebug / "src/acl_stub/kernel_fp16.cpp", bf16,
            RUN_DIR / "run_support.cpp", RUN_DIR / "gm_coverage.cpp"]
        self.mask_model = RUN_DIR / "mask_model_none.cpp"  # --emulate links the emulated core's instead

    def compile(self, src: Path, flags, obj: Path):
        """Compiles src to obj, unless obj is newer than every file its last compile read (the compiler's
        dependency list) and was built with the same command."""
        cmd = [CXX, "-c", *map(str, flags), "-MMD", "-MF", str(obj.with_suffix(".d")), str(src), "-o", str(obj)]
        stamp = obj.with_suffix(".cmd")
        with self.locks.setdefault(obj, threading.Lock()):  # programs built in parallel share objects
            if not (obj.is_file() and stamp.is_file() and stamp.read_text() == "\n".join(cmd) and
                    self.fresh(obj)):
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError(f"compiling {src} for --run failed:\n{r.stderr}")
                stamp.write_text("\n".join(cmd))
        return obj

    @staticmethod
    def fresh(obj: Path) -> bool:
        depfile = obj.with_suffix(".d")
        if not depfile.is_file():
            return False
        deps = depfile.read_text().replace("\\\n", " ").split(":", 1)[1].split()
        built = obj.stat().st_mtime
        return all(os.path.exists(d) and os.stat(d).st_mtime <= built for d in deps)

    def support_objects(self):
        def one(src):
            return self.compile(src, self.host_flags, self.out / f"support-{src.stem}.o")
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            return list(pool.map(one, self.support_sources + [self.mask_model]))

    def kernel_object(self, tu: Path, tiling: Path, optimize: str):
        """A kernel (or run self-test) translation unit; the list decoder's count assertions compiled as the
        device compiles them (run/list_decoder_device_asserts.h)."""
        return self.compile(tu, [optimize, "-g", *self.rig.flags(tu=tu), "-include", str(tiling),
                                 "-include", str(RUN_DIR / "list_decoder_device_asserts.h")],
                            self.out / f"kernel-{tu.stem}.o")

    def program(self, name: str, driver: Path, objects, op=None):
        """The driver (of operator `op`'s kernel) and its run-sources linked with `objects`; each source is
        compiled with its own operator's host folders, a shared one with the shared folders only."""
        def flags(owner):
            return self.host_flags + [f for inc in operator_includes(owner, host=True) for f in ("-I", str(inc))]
        extra = []
        for match in RUN_SOURCES.finditer(driver.read_text()):
            for rel in match["paths"].split():
                src = REPO / rel
                extra.append(self.compile(src, flags(source_operator(src)), self.out / f"host-{src.stem}.o"))
        objs = [*objects, self.compile(driver, flags(op), self.out / f"driver-{driver.stem}.o"), *extra]
        exe = self.out / name
        r = subprocess.run([CXX, *map(str, objs), "-o", str(exe), "-lpthread"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"linking {name} failed:\n{r.stderr}")
        return exe

    def run(self, exe: Path, *args):
        return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=1800)


class Emulator(Runner):
    """--emulate: the kernels compiled against the real library over the emulated intrinsic layer
    (emulate/emu_intrinsics.h, emu_core.h), run by the drivers emulate/<kernel>_emulate.cpp on seeded inputs; the
    cases they write are held against the golden by emulate/compare.py (run with the project's venv)."""

    def __init__(self, rig: Rig, jobs: int):
        super().__init__(rig, jobs)
        self.out = rig.build / f"emulate-{rig.key}"
        self.out.mkdir(parents=True, exist_ok=True)
        self.host_flags = self.host_flags + ["-I", str(EMU_DIR), "-ffp-contract=off"]
        self.fast_flags = [f if f != "-O0" else "-O2" for f in self.host_flags]
        self.mask_model = EMU_DIR / "emulate_support.cpp"

    def emulator_objects(self):
        return [self.compile(src, self.fast_flags, self.out / f"emu-{src.stem}.o")
                for src in (EMU_DIR / "emu_core.cpp", EMU_DIR / "emu_convert.cpp")]

    def kernel_object(self, tu: Path, tiling: Path, optimize: str = "-O2"):
        return self.compile(tu, [optimize, "-g", "-ffp-contract=off", *self.rig.flags(emulate=True, tu=tu),
                                 "-include", str(tiling), "-include", str(RUN_DIR / "list_decoder_device_asserts.h")],
                            self.out / f"kernel-{tu.stem}.o")


def errors_of(stderr: str, limit=60):
    lines = [ln for ln in stderr.splitlines() if ": error:" in ln or ": fatal error:" in ln]
    return lines[:limit], len(lines)


def parse_expectations(tu: Path):
    spec = EXPECT.findall(tu.read_text())
    if not spec:
        sys.exit(f"ascendc-check: {tu} has no `// ascendc-check: expect-...` line")
    kinds = {k for k, _ in spec}
    if kinds == {"expect-ok"}:
        return None
    if kinds == {"expect-error"} and all(r for _, r in spec):
        return [re.compile(r) for _, r in spec]
    sys.exit(f"ascendc-check: {tu}: use either one `expect-ok` or `expect-error <regex>` lines")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--asc-devkit", default=os.environ.get("ASC_DEVKIT_DIR"), help="asc-devkit work tree")
    ap.add_argument("--asc-tools", default=os.environ.get("ASC_TOOLS_DIR"), help="asc-tools work tree")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--self-test", action="store_true", help="only the rig's own tests")
    mode.add_argument("--kernels", action="store_true", help="only op_kernel/<op>/*.cpp")
    ap.add_argument("--run", action="store_true", help="also link and run each kernel once per tiling key")
    ap.add_argument("--emulate", action="store_true",
                    help="also compute the kernels through the real library with emulated intrinsics")
    ap.add_argument("--seed", type=int, default=None, help="--emulate's input seed (default: fresh)")
    ap.add_argument("--build-dir", default=str(REPO / "build" / "ascendc_check"))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    started = time.monotonic()
    if not args.asc_devkit or not args.asc_tools:
        ap.error("give --asc-devkit and --asc-tools (or set ASC_DEVKIT_DIR and ASC_TOOLS_DIR)")
    devkit, tools = Path(args.asc_devkit).resolve(), Path(args.asc_tools).resolve()
    if not (devkit / "include" / "kernel_operator.h").is_file():
        sys.exit(f"ascendc-check: {devkit} is not an asc-devkit work tree (no include/kernel_operator.h)")
    if not (tools / "cpudebug" / "include" / "stub_def.h").is_file():
        sys.exit(f"ascendc-check: {tools} is not an asc-tools work tree (no cpudebug/include/stub_def.h)")

    rig = Rig(devkit, tools, Path(args.build_dir))
    rig.include.mkdir(parents=True, exist_ok=True)
    rig.generate_kernel_tiling()
    rig.write_stub_fun()

    selftests = [] if args.kernels else sorted((RIG / "selftest").glob("*.cpp"))
    kernels = [] if args.self_test else sorted(KERNEL_DIR.glob("*/*.cpp"))
    if not args.self_test and not kernels:
        sys.exit(f"ascendc-check: no kernel translation units in {KERNEL_DIR}")
    expectations = {tu: parse_expectations(tu) for tu in selftests}
    units = [(tu, rig.tiling_header(tu), ()) for tu in selftests]
    units += [(tu, rig.tiling_header(tu), KERNEL_WARNINGS) for tu in kernels]
    results = dict(zip([u[0] for u in units], rig.compile_all(units, args.jobs)))

    failed = 0
    for tu in selftests:
        r, expected = results[tu], expectations[tu]
        errs, count = errors_of(r.stderr)
        if expected is None:
            ok = r.returncode == 0
            why = "" if ok else f"expected to compile, got {count} error(s):\n  " + "\n  ".join(errs)
        else:
            missing = [p.pattern for p in expected if not p.search(r.stderr)]
            at_call = any(line.startswith(f"{tu}:") for line in errs)  # the wrong call itself is reported
            ok = r.returncode != 0 and not missing and at_call
            why = ("compiled, but must fail" if r.returncode == 0 else
                   f"failed, but not for the expected reason (no match for {missing}"
                   f"{'' if at_call else ', no error located in the test itself'}):\n  " + "\n  ".join(errs))
        log(f"self-test {'ok  ' if ok else 'FAIL'} {tu.name}" + ("" if ok else f": {why}"))
        failed += not ok
    for tu in kernels:
        r = results[tu]
        errs, count = errors_of(r.stderr)
        # Warnings count where they are located in the project's own files (the library has its own).
        warnings = [ln for ln in r.stderr.splitlines()
                    if ": warning:" in ln and os.path.realpath(ln.split(":", 1)[0]).startswith(str(REPO) + os.sep)]
        if r.returncode == 0 and not warnings:
            log(f"kernel ok   {tu.relative_to(REPO)}: compiles against the real AscendC headers")
        else:
            failed += 1
            log(f"kernel FAIL {tu.relative_to(REPO)}: {count} error(s), {len(warnings)} warning(s) in the project\n  "
                + "\n  ".join(errs + warnings) + ("" if count <= len(errs) else "\n  ..."))
    if args.run and not failed:
        failed += run_all(Runner(rig, args.jobs), selftests, kernels, {u[0]: u[1] for u in units})
    if args.emulate and not failed:
        seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
        failed += emulate_all(Emulator(rig, args.jobs), kernels, {u[0]: u[1] for u in units}, seed)
    log(f"took {time.monotonic() - started:.0f} s")
    log("all as expected" if not failed else f"{failed} FAILURE(S)")
    return 1 if failed else 0


def run_all(runner: Runner, selftests, kernels, tiling_of) -> int:
    """--run: the self-tests marked run-ok / run-abort, then each kernel that has a driver, then the drivers'
    own self-tests (driver-self-test: a deliberately broken launch that must fail for the stated reason)."""
    log("run: building asc-tools' CPU-debug checkers and the drivers (cached in build/ascendc_check/run-*)")
    started = time.monotonic()
    support = runner.support_objects()
    marked = [tu for tu in selftests if RUN_MARK.search(tu.read_text())]
    driven = [tu for tu in kernels if (RUN_DIR / f"{tu.stem}_run.cpp").is_file()]
    for tu in kernels:
        if tu not in driven:
            log(f"run: no driver tools/ascendc_check/run/{tu.stem}_run.cpp: {tu.relative_to(REPO)} not run")

    def build(tu):
        if tu in driven:  # kernels -O2: the library's TPipe fills ~2 MB of simulated buffers word by word
            return runner.program(f"run-{tu.stem}", RUN_DIR / f"{tu.stem}_run.cpp",
                                  support + [runner.kernel_object(tu, tiling_of[tu], "-O2")], operator_of(tu))
        # self-tests -O0: their expected backtraces name the library function that aborts
        return runner.program(f"selftest-{tu.stem}", RUN_DIR / "selftest_run.cpp",
                              support + [runner.kernel_object(tu, tiling_of[tu], "-O0")])
    with concurrent.futures.ThreadPoolExecutor(runner.jobs) as pool:
        exes = dict(zip(marked + driven, pool.map(build, marked + driven)))
    log(f"run: built in {time.monotonic() - started:.0f} s")

    failed = 0
    for tu in marked:
        marks = RUN_MARK.findall(tu.read_text())
        r = runner.run(exes[tu])
        output = r.stdout + r.stderr
        if marks[0][0] == "run-ok":
            ok, why = r.returncode == 0, "must run cleanly"
        else:
            missing = [rx for _, rx in marks if not re.search(rx, output)]
            ok, why = r.returncode != 0 and not missing, f"must abort with output matching {missing or marks}"
        log(f"run self-test {'ok  ' if ok else 'FAIL'} {tu.name}" + ("" if ok else f": {why}\n{output}"))
        failed += not ok
    for tu in driven:
        driver = RUN_DIR / f"{tu.stem}_run.cpp"
        began = time.monotonic()
        r = runner.run(exes[tu])
        print(r.stdout, end="")
        ok = r.returncode == 0
        log(f"run {'ok  ' if ok else 'FAIL'} {tu.relative_to(REPO)} ({time.monotonic() - began:.0f} s)"
            + ("" if ok else f"\n{r.stderr}"))
        failed += not ok
        for arg, regex in DRIVER_SELF_TEST.findall(driver.read_text()):
            r = runner.run(exes[tu], arg)
            output = r.stdout + r.stderr
            ok = r.returncode == 1 and re.search(regex, output) is not None
            log(f"run driver self-test {'ok  ' if ok else 'FAIL'} {driver.name} {arg}" +
                ("" if ok else f": must fail with output matching {regex!r}, exited {r.returncode}:\n{output}"))
            failed += not ok
    log(f"run: {time.monotonic() - started:.0f} s (building and running)")
    return failed


def emulate_hazard_selftests(emu: Emulator, env) -> tuple[int, int]:
    """The pipe-hazard checker's expect-tests (emulate/hazard_selftest/): correct pipelines report nothing, each
    broken one is caught. Returns (as expected, tests)."""
    selftest = EMU_DIR / "hazard_selftest"
    kernels = selftest / "hazard_kernels.cpp"
    support = emu.support_objects() + emu.emulator_objects()
    exe = emu.program("emulate-hazard-selftest", selftest / "hazard_selftest.cpp",
                      support + [emu.kernel_object(kernels, emu.rig.tiling_header(kernels))])
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600,
                       env={**env, "AEA_EMU_SOURCE_ROOTS": f"{env['AEA_EMU_SOURCE_ROOTS']}:{selftest}"})
    results = [ln for ln in r.stdout.splitlines() if ln.startswith("hazard-selftest ")]
    passed = sum(ln.startswith("hazard-selftest ok") for ln in results)
    for line in r.stdout.splitlines():
        if line.startswith("hazard-selftest FAIL") or (line.startswith("emulate: HAZARD") and passed != len(results)):
            print(line)
    if not results:
        log(f"emulate: the hazard self-tests did not run:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        return 0, 1
    return passed, len(results)


def emulate_all(emu: Emulator, kernels, tiling_of, seed: int) -> int:
    """--emulate: each kernel with a driver emulate/<stem>_emulate.cpp computes its cases through the real library;
    compare.py holds them against the golden. Prints the summary line."""
    log("emulate: building the emulated intrinsic layer and the drivers (cached in build/ascendc_check/emulate-*)")
    started = time.monotonic()
    emu.rig.write_stub_fun(emulate=True)
    sys.path.insert(0, str(EMU_DIR / "selftest"))
    import selftests  # each emulated intrinsic against its documented rule; API programs against the twin
    selftests_passed, selftests_total, selftest_failures = selftests.run(emu, emu.rig, log)
    for line in selftest_failures[:40]:
        print(line)
    support = emu.support_objects() + emu.emulator_objects()
    driven = [tu for tu in kernels if (EMU_DIR / f"{tu.stem}_emulate.cpp").is_file()]
    for tu in kernels:
        if tu not in driven:
            log(f"emulate: no driver tools/ascendc_check/emulate/{tu.stem}_emulate.cpp: {tu.relative_to(REPO)} "
                "not computed")

    def build(tu):
        return emu.program(f"emulate-{tu.stem}", EMU_DIR / f"{tu.stem}_emulate.cpp",
                           support + [emu.kernel_object(tu, tiling_of[tu])], operator_of(tu))
    with concurrent.futures.ThreadPoolExecutor(emu.jobs) as pool:
        exes = dict(zip(driven, pool.map(build, driven)))
    log(f"emulate: built in {time.monotonic() - started:.0f} s")
    cases = emu.out / "cases"
    shutil.rmtree(cases, ignore_errors=True)
    cases.mkdir(parents=True)
    env = {**os.environ, "AEA_EMU_SOURCE_ROOTS": str(KERNEL_DIR)}
    failed = int(selftests_passed != selftests_total)
    hazards_found = 0
    for tu in driven:
        began = time.monotonic()
        r = subprocess.run([str(exes[tu]), str(cases), str(seed)], capture_output=True, text=True, env=env,
                           timeout=3600)
        hazard_lines = [ln for ln in r.stdout.splitlines() if "HAZARD" in ln]
        hazards_found += len(hazard_lines)
        for line in hazard_lines[:20]:
            print(line)
        ok = r.returncode == 0
        log(f"emulate {'ok  ' if ok else 'FAIL'} {tu.relative_to(REPO)} ({time.monotonic() - began:.0f} s)"
            + ("" if ok else f"\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"))
        failed += not ok
    sys.path.insert(0, str(EMU_DIR / "opsnn"))
    import opsnn  # CANN's own kernel on our single-op cases' inputs (needs CANN_OPS_NN_DIR)
    opsnn_dir = emu.out / "opsnn-cases"
    opsnn_ok, opsnn_message = opsnn.run(emu, emu.rig, cases, opsnn_dir, env, log)
    if not opsnn_ok:
        log(f"emulate: FAIL ops-nn's kernel: {opsnn_message}")
        failed += 1
    hazards_caught, hazard_tests = emulate_hazard_selftests(emu, env)
    failed += hazards_caught != hazard_tests
    python = REPO / ".venv" / "bin" / "python"
    r = subprocess.run([str(python if python.is_file() else sys.executable), str(EMU_DIR / "compare.py"), str(cases),
                        str(opsnn_dir)], capture_output=True, text=True)
    summary = None
    for line in r.stdout.splitlines():
        if line.startswith("SUMMARY "):
            summary = json.loads(line[len("SUMMARY "):])
        else:
            print(line)
    if r.returncode != 0 or summary is None:
        log(f"emulate: compare.py failed:\n{r.stderr[-3000:]}")
        return failed + 1
    bad = summary["launches"] - summary["identical"]
    opsnn_part = (f"ops-nn kernel: {summary['opsnn_identical']}/{summary['opsnn']} cases bit-identical to ours"
                  if summary["opsnn"] else f"ops-nn kernel: {opsnn_message}")
    log(f"emulate: {summary['launches']} launches through the real AscendC library, {summary['identical']} "
        f"bit-identical to the golden; {opsnn_part}; hazards: {hazards_found} (self-tests: "
        f"{hazards_caught}/{hazard_tests} caught) (seed {seed}; {time.monotonic() - started:.0f} s)")
    log(f"emulate: intrinsic and API-program self-tests: {selftests_passed}/{selftests_total} as documented "
        f"and bit-identical to the twin")
    return failed + (1 if bad or summary["opsnn_identical"] != summary["opsnn"] else 0)


if __name__ == "__main__":
    sys.exit(main())
