#!/usr/bin/env python3
"""Does the NPU build of the torch extension load inside the real torch_npu?

Every symbol the NPU objects leave undefined must be defined by something that is loaded beside
them on an Ascend host: the rest of the extension (``--ours``), torch (``--torch-lib``), the C and
C++ runtimes, the Python interpreter, or the torch_npu wheel's libraries -- and of those only the
dynamic symbols they *export* (``nm -D --defined-only``; libtorch_npu.so exports a curated ~6,500),
on every architecture given (``--wheel ARCH=DIR``: the x86_64 and aarch64 wheels, whose C++ names
mangle alike). CANN's own C API (acl*, aclnn*, aclrt*, Hccl*: libascendcl and friends, or the
op-API libraries) is listed apart: CANN provides it, not torch_npu.

A symbol nothing defines is reported with the objects that need it: such an extension links (a
shared library may keep undefined symbols) and then fails at import ("undefined symbol: ...").
``--expect-unresolved OBJ``: a self-test object that must be reported (op-plugin's EXEC_NPU_CMD,
whose inline code needs internals libtorch_npu.so does not export); the check fails if it is not.

Usage: npu_abi_check.py --objects A.o B.o --ours _C.dir/*.o libaea_tiling.a --torch-lib DIR
           --wheel x86_64=DIR --wheel aarch64=DIR [--expect-unresolved SELFTEST.o]
Exit status 0 when every object resolves and every self-test object does not.
"""
from __future__ import annotations

import argparse
import re
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

# CANN's C API: provided by CANN's libraries (libascendcl, libhccl, the op-API libraries).
CANN_C_API = re.compile(r"^(acl[A-Za-z]|Hccl[A-Z])")
# The interpreter's C API (an extension module is not linked with libpython), and what the
# linker (crtbegin, the GOT) and the dynamic loader (TLS) provide.
PYTHON_C_API = re.compile(r"^_?Py[A-Za-z_]")
LINKER_PROVIDED = {"_GLOBAL_OFFSET_TABLE_", "__dso_handle", "__tls_get_addr"}
SYSTEM_LIBRARIES = ("libstdc++.so.6", "libc.so.6", "libm.so.6", "libgcc_s.so.1")
# What the link copies into the extension itself from the compiler's static runtime: on aarch64
# GCC >= 10 calls libgcc.a's outline atomics (__aarch64_ldadd4_acq_rel, ...) for std::atomic.
STATIC_SYSTEM_LIBRARIES = ("libgcc.a",)


def nm(path: Path | str, *flags: str) -> list[tuple[str, str]]:
    """(type, name) of each symbol nm lists for `path` with `flags`."""
    out = subprocess.run(["nm", "--format=posix", *flags, str(path)], check=True,
                         capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        # posix format: "name type [value size]"; archives add "lib.a[member.o]:" headers
        if len(parts) >= 2 and len(parts[1]) == 1:
            symbols.append((parts[1], parts[0].split("@")[0]))  # without the symbol version
    return symbols


def defined(path: Path | str, dynamic: bool = False) -> set[str]:
    flags = ("-D", "--defined-only") if dynamic else ("--defined-only",)
    return {name for _, name in nm(path, *flags)}


def undefined(path: Path) -> set[str]:
    """Strong undefined symbols (weak ones may stay unresolved)."""
    return {name for kind, name in nm(path, "--undefined-only") if kind == "U"}


def demangle(names: list[str]) -> list[str]:
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True,
                         text=True).stdout
    return out.splitlines()


def system_library(name: str) -> Path:
    # NPU_CHECK_CXX: the compiler of the objects (aarch64-linux-gnu-g++ for an aarch64 build)
    found = subprocess.run([os.environ.get("NPU_CHECK_CXX", "g++"), f"-print-file-name={name}"],
                           check=True, capture_output=True, text=True).stdout.strip()
    return Path(found)


def wheel_exports(spec: str) -> tuple[str, set[str]]:
    """ARCH=DIR: the exports of every library listed in DIR (one `nm -D --defined-only` output
    per library, *.txt, as the Makefile saves them from the wheel)."""
    arch, _, directory = spec.partition("=")
    names: set[str] = set()
    files = sorted(Path(directory).glob("*.txt"))
    if not files:
        sys.exit(f"npu-abi-check: no symbol lists (*.txt) in {directory}")
    for f in files:
        for line in f.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 2 and len(parts[1]) == 1:
                names.add(parts[0].split("@")[0])
    return arch, names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", nargs="+", type=Path, required=True)
    parser.add_argument("--ours", nargs="*", type=Path, default=[])
    parser.add_argument("--torch-lib", type=Path, required=True)
    parser.add_argument("--wheel", action="append", required=True, metavar="ARCH=DIR")
    parser.add_argument("--expect-unresolved", nargs="*", type=Path, default=[])
    args = parser.parse_args()

    ours: set[str] = set()
    for path in [*args.objects, *args.ours]:
        ours |= defined(path)
    torch: set[str] = set()
    for lib in sorted(args.torch_lib.glob("lib*.so*")):
        torch |= defined(lib, dynamic=True)
    system: set[str] = set()
    for name in SYSTEM_LIBRARIES:
        system |= defined(system_library(name), dynamic=True)
    for name in STATIC_SYSTEM_LIBRARIES:
        system |= defined(system_library(name))
    wheels = dict(wheel_exports(spec) for spec in args.wheel)

    def check(objects: list[Path], extra_ours: set[str]) -> tuple[dict, dict, dict]:
        """(unresolved, per-arch missing, CANN C API), each symbol -> objects needing it."""
        unresolved, cann = defaultdict(set), defaultdict(set)
        missing = {arch: defaultdict(set) for arch in wheels}
        for obj in objects:
            for name in undefined(obj):
                if name in LINKER_PROVIDED:
                    continue
                if name in ours or name in extra_ours or name in torch or name in system:
                    continue
                if PYTHON_C_API.match(name):
                    continue
                if CANN_C_API.match(name):
                    cann[name].add(obj.name)
                    continue
                in_wheels = [arch for arch, names in wheels.items() if name in names]
                if not in_wheels:
                    unresolved[name].add(obj.name)
                for arch in wheels:
                    if in_wheels and arch not in in_wheels:
                        missing[arch][name].add(obj.name)
        return unresolved, missing, cann

    def report(title: str, table: dict) -> None:
        names = sorted(table)
        print(f"npu-abi-check: {title}: {len(names)}")
        for name, readable in zip(names, demangle(names)):
            print(f"  {readable}  (needed by {', '.join(sorted(table[name]))})")

    status = 0
    unresolved, missing, cann = check(args.objects, set())
    if unresolved:
        report("FAILED: symbols that neither torch_npu's wheels export nor anything else loaded "
               "defines (the extension would not import)", unresolved)
        status = 1
    for arch, table in missing.items():
        if table:
            report(f"FAILED: exported by another architecture's wheel but not by {arch}'s", table)
            status = 1
    wheel_symbols = defaultdict(set)
    for obj in args.objects:
        for name in undefined(obj):
            if name in ours or name in torch or name in system:
                continue
            if any(name in names for names in wheels.values()):
                wheel_symbols[name].add(obj.name)
    report(f"{len(args.objects)} NPU object(s) need these symbol(s) of torch_npu / op-plugin, "
           f"each exported by the wheels for {' and '.join(wheels)}", wheel_symbols)
    print(f"npu-abi-check: CANN's C API, from CANN's libraries: {', '.join(sorted(cann)) or 'none'}")

    for selftest in args.expect_unresolved:
        bad, _, _ = check([selftest], set())
        if bad:
            shown = ", ".join(demangle(sorted(bad))[:4])
            print(f"npu-abi-check: self-test ok: {selftest.name} is refused ({len(bad)} unexported "
                  f"symbol(s): {shown}, ...)")
        else:
            print(f"npu-abi-check: FAILED: self-test {selftest.name} should need unexported "
                  f"symbols and does not: the check cannot see what it is for")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
