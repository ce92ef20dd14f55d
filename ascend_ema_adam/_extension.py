"""The torch ops' extension module, ``_C`` (it registers the ascend_ema_adam ops), loaded for
every module of the package that needs it.

Built with its NPU kernel, ``_C`` links libtorch_npu.so, which ``import torch_npu`` loads: torch
does that at ``import torch`` (its device-backend autoload) unless TORCH_DEVICE_BACKEND_AUTOLOAD=0,
so the package imports torch_npu itself when the library is not loaded yet."""

from __future__ import annotations


def _load():
    try:
        from . import _C
    except ImportError as error:
        if "libtorch_npu" not in str(error):
            raise
        try:
            import torch_npu  # noqa: F401  (loads libtorch_npu.so into the process)
        except ImportError as npu_error:
            raise ImportError(
                f"ascend_ema_adam was built with its NPU kernel, which needs torch_npu: "
                f"{npu_error}. Install the torch_npu of this build, or build the package "
                f"without AEA_TORCH_NPU_ROOT for the CPU only") from error
        from . import _C
    return _C


_C = _load()
