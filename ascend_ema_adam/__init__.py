"""ascend-ema-adam: FusedEmaAdam (Adam/AdamW + EMA in one pass) for Huawei Ascend NPUs.

Layers, from the metal up:
  * ``op_kernel/``   the AscendC kernel (NPU), also compiled against the CPU twin;
  * ``op_host/``     host tiling (cores x unified-buffer chunks);
  * :mod:`ascend_ema_adam.twin`    the kernel on the CPU twin for numpy arrays;
  * :mod:`ascend_ema_adam.golden`  numpy golden models (float64 and dtype-faithful fp32).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
