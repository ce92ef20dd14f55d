#!/usr/bin/env python3
"""Unpacks what the checks need from the torch_npu wheels, never installing them.

    unpack_torch_npu.py <wheel dir> <out dir>

<out>/include/: the headers (torch_npu, op-plugin, CANN's ACL), from the x86_64 wheel (the
wheels' headers are identical; <out> is named torch_npu: the wheel's own folder). <out>/VERSION:
the wheel's torch_npu version. <out>/symbols/<arch>/<library>.txt: `nm -D --defined-only` of
each shared library of the wheel for <arch> (x86_64, aarch64): what an extension may link
against (tools/npu_abi_check/abi_check.py). The libraries themselves are not kept.
"""
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

wheels, out = Path(sys.argv[1]), Path(sys.argv[2])
if out.name != "torch_npu":
    sys.exit(f"unpack_torch_npu: {out}: the folder must be named torch_npu (the wheel's own)")
for arch in ("x86_64", "aarch64"):
    found = sorted(wheels.glob(f"torch_npu-*-{arch}.whl")) + sorted(wheels.glob(f"torch_npu-*_{arch}.whl"))
    if not found:
        sys.exit(f"unpack_torch_npu: no torch_npu wheel for {arch} in {wheels}")
    with zipfile.ZipFile(found[0]) as wheel:
        if arch == "x86_64":
            wheel.extractall(out.parent, [n for n in wheel.namelist() if n.startswith("torch_npu/include/")])
            version = re.search(r"__version__ = '([^']+)'", wheel.read("torch_npu/version.py").decode())
            (out / "VERSION").write_text(version.group(1) + "\n")
        symbols = out / "symbols" / arch
        symbols.mkdir(parents=True, exist_ok=True)
        for name in wheel.namelist():
            if name.startswith("torch_npu/lib/") and ".so" in Path(name).name:
                with tempfile.TemporaryDirectory() as tmp:
                    lib = Path(wheel.extract(name, tmp))
                    listing = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", str(lib)],
                                             check=True, capture_output=True, text=True).stdout
                (symbols / f"{Path(name).name}.txt").write_text(listing)
    print(f"unpack_torch_npu: {found[0].name}: symbols of {len(list(symbols.glob('*.txt')))} libraries")
