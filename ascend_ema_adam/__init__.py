"""ascend-ema-adam: FusedEmaAdam (Adam/AdamW + EMA in one pass) for Huawei Ascend NPUs.

Layers, from the metal up:
  * ``op_kernel/``   the AscendC kernel (NPU), also compiled against the CPU twin;
  * ``op_host/``     host tiling (cores x unified-buffer chunks);
  * :mod:`ascend_ema_adam.kernels`    the kernel on the CPU twin for numpy arrays;
  * :mod:`ascend_ema_adam.golden`  numpy golden models (float64 and dtype-faithful fp32);
  * :mod:`ascend_ema_adam.ops`     the torch op (CPU and NPU tensors), MindSpeed's API;
  * :mod:`ascend_ema_adam.optim`   ``FusedEmaAdamW``; :mod:`ascend_ema_adam.checkpoint` its
    checkpoints on disk, saved atomically and checked on load.

numpy-only users never import torch: the torch API below is loaded on first use.
"""

import os as _os

__version__ = "0.1.0"

__all__ = ["__version__", "get_include", "get_library", "info", "npu_apply_fused_ema_adamw",
           "apply_fused_ema_adam", "apply_fused_ema_adam_list", "FusedEmaAdamW"]

_LAZY = {
    "npu_apply_fused_ema_adamw": ("ops", "npu_apply_fused_ema_adamw"),
    "apply_fused_ema_adam": ("ops", "apply_fused_ema_adam"),
    "apply_fused_ema_adam_list": ("ops", "apply_fused_ema_adam_list"),
    "info": ("info", "info"),
    "FusedEmaAdamW": ("optim", "FusedEmaAdamW"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _find_installed(relative: str) -> str:
    """First ``<package dir>/<relative>`` that exists. An editable install splits the package:
    compiled files land in site-packages, the sources stay in the checkout, so every entry of
    ``__path__`` is searched."""
    for base in __path__:
        candidate = _os.path.join(base, relative)
        if _os.path.exists(candidate):
            return candidate
    raise FileNotFoundError(
        f"{relative} is not installed with ascend_ema_adam (searched {list(__path__)}); "
        "reinstall the package (make python)")


def get_include() -> str:
    """Directory holding the C API headers ``acl/`` and ``aclnnop/`` (CANN's names), for building
    a C/C++ program against the CPU runtime: ``-I$(python -c 'import ascend_ema_adam as a;
    print(a.get_include())')``."""
    header = _find_installed(_os.path.join("include", "aclnnop", "aclnn_apply_fused_ema_adam.h"))
    return _os.path.dirname(_os.path.dirname(header))


def get_library() -> str:
    """Path of ``libascend_ema_adam_acl.so``: the CPU ACL runtime and the aclnn API."""
    return _find_installed(_os.path.join("lib", "libascend_ema_adam_acl.so"))
