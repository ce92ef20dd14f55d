"""``python -m ascend_ema_adam info``: what is installed, and which backend runs where."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path

from . import __version__


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cann_version() -> str | None:
    """CANN toolkit version from ASCEND_HOME_PATH's version files, if a toolkit is set up."""
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home:
        return None
    for name in ("version.cfg", "compiler/version.info", "version.info"):
        path = Path(home) / name
        if path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                if "version" in line.lower() and "=" in line:
                    return line.split("=", 1)[1].strip()
    return f"found at {home} (version file not read)"


def info() -> dict:
    """A dict describing the installation (see :func:`format_info`)."""
    from . import _kernels

    torch_version = _version("torch")
    result = {
        "ascend_ema_adam": __version__,
        "torch": torch_version,
        # Looked up, never imported: importing torch_npu without CANN breaks torch.
        "torch_npu": _version("torch_npu") or _version("torch-npu"),
        "cann": _cann_version(),
        "cpu_platform": next(p for p in _kernels.platforms() if p["name"] == "cpu"),
        "build": None,
        "cpu_tensor_backend": None,
        "npu_tensor_backend": None,
    }
    if torch_version is not None and importlib.util.find_spec("ascend_ema_adam._C") is not None:
        import torch  # noqa: F401  (loads libtorch, which _C links against)

        from ._extension import _C
        build = _C.build_info()
        result["build"] = build
        result["cpu_tensor_backend"] = (
            "aclnnApplyFusedEmaAdam on the CPU device (libascend_ema_adam_acl), kernel: "
            + _kernels.cpu_kernel_name())
        result["npu_tensor_backend"] = (
            "aclnnApplyFusedEmaAdam* of CANN's op-API libraries (our custom package) through "
            "torch_npu's task queue"
            if build["npu_kernel"] else
            "not built: needs torch_npu and CANN at build time (see README)")
    return result


def format_info(d: dict) -> str:
    cpu = d["cpu_platform"]
    lines = [
        f"ascend_ema_adam   {d['ascend_ema_adam']}",
        f"torch             {d['torch'] or 'not installed'}",
        f"torch_npu         {d['torch_npu'] or 'not installed'}",
        f"CANN              {d['cann'] or 'not found (ASCEND_HOME_PATH unset)'}",
        f"CPU device        {cpu['vector_core_num']} blocks (hardware threads), "
        f"UB {cpu['ub_size']} B per block",
        f"CPU tensors    -> {d['cpu_tensor_backend'] or 'torch op not built'}",
        f"NPU tensors    -> {d['npu_tensor_backend'] or 'torch op not built'}",
    ]
    if d["build"]:
        b = d["build"]
        lines.append(f"build             {b['compiler']}, C++11 ABI {b['cxx11_abi']}, "
                     f"NPU kernel {'yes' if b['npu_kernel'] else 'no'}")
    return "\n".join(lines)
