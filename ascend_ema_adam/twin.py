"""The AscendC kernel on the CPU twin, for numpy arrays (the kernel-verification interface).

:func:`apply_fused_ema_adam` updates ``var, m, v, s`` in place exactly as the NPU kernel does,
running the unchanged kernel source on the CPU twin, and returns the launch's tiling and the
per-core counters (GM bytes moved, vector instructions, UB use).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _twin
from .golden import SUPPORTED_DTYPES, Hyper, dtype_name


@dataclass(frozen=True)
class LaunchStats:
    tiling: dict
    blocks: list[dict]

    def total(self, key: str) -> int:
        return sum(b[key] for b in self.blocks)


def _raw(a: np.ndarray) -> np.ndarray:
    """A flat view whose buffer pybind11 accepts (bfloat16 has no buffer-protocol format)."""
    flat = a.reshape(-1)
    return flat.view(np.uint16) if flat.dtype.itemsize == 2 else flat


def apply_fused_ema_adam(grad, var, m, v, s, step, hyper: Hyper = Hyper(), *,
                         platform: str = "cpu", threads: int = 0) -> LaunchStats:
    """Run one update in place through the twin. All five float arrays must be C-contiguous,
    of one supported dtype and one shape; ``step`` an int64 array of one element."""
    arrays = {"grad": grad, "var": var, "m": m, "v": v, "s": s}
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(a).__name__}")
        if a.dtype not in SUPPORTED_DTYPES:
            raise TypeError(f"{name}: dtype {a.dtype} is not float32, float16 or bfloat16")
        if a.dtype != grad.dtype or a.shape != grad.shape:
            raise ValueError(f"{name} is {a.dtype}{list(a.shape)}, grad is "
                             f"{grad.dtype}{list(grad.shape)}: all five must match")
        if not a.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous")
        if name != "grad" and not a.flags.writeable:
            raise ValueError(f"{name} must be writeable (it is updated in place)")
    step = np.asarray(step)
    if step.dtype != np.int64 or step.size != 1:
        raise TypeError(f"step must be an int64 array of one element, got {step.dtype}"
                        f"{list(step.shape)}")
    h = hyper
    result = _twin.launch(_raw(grad), _raw(var), _raw(m), _raw(v), _raw(s),
                          np.ascontiguousarray(step).reshape(-1), grad.size,
                          dtype_name(grad.dtype), h.lr, h.ema_decay, h.beta1, h.beta2, h.eps,
                          h.mode, h.bias_correction, h.weight_decay, platform, threads)
    return LaunchStats(result["tiling"], result["blocks"])


def compute_tiling(numel: int, dtype, hyper: Hyper = Hyper(), *, platform: str = "cpu",
                   vector_core_num: int = 0, ub_size: int = 0) -> dict:
    """Host tiling for ``numel`` elements on a platform preset (optionally overriding the
    preset's vector core count or UB size)."""
    h = hyper
    return _twin.compute_tiling(numel, dtype_name(dtype), platform, h.lr, h.ema_decay, h.beta1,
                                h.beta2, h.eps, h.mode, h.bias_correction, h.weight_decay,
                                vector_core_num, ub_size)


def platforms() -> list[dict]:
    """The platform presets: name, vector_core_num, ub_size, hbm_gbps."""
    return _twin.platforms()
