r"""FusedEmaAdamW: Adam/AdamW and an EMA of the weights in one fused kernel launch per
parameter group (per device and dtype).

A drop-in for MindSpeed's ``FusedEmaAdamW`` (``mindspeed/core/optimizer/fused_ema_adamw``): the
same constructor, errors and EMA helpers, running the updates through
:func:`ascend_ema_adam.ops.apply_fused_ema_adam_list` (``aclnnApplyFusedEmaAdamList``; with
``foreach=False`` one :func:`ascend_ema_adam.ops.npu_apply_fused_ema_adamw` per parameter) on CPU
tensors (this package's CPU device) and NPU tensors (CANN). On top of MindSpeed it adds torch's
per-parameter steps (``step_scope="param"``, the default; ``"group"`` is MindSpeed's layout, bit
for bit), checkpoints that load into and from ``torch.optim.AdamW`` and carry the EMA warm-up,
:meth:`FusedEmaAdamW.swap_ema`, :meth:`FusedEmaAdamW.ema_state_dict`, DTensor (FSDP2)
parameters and ``torch.compile``. ``docs/OPTIMIZER.md`` is the user guide.

Per step, for every group and every parameter :math:`\theta` with a gradient :math:`g`
(:math:`t` the parameter's own step, or its group's with ``step_scope="group"``; :math:`n` the
optimizer's update counter):

.. math::
    \begin{aligned}
    & t \leftarrow t + 1, \qquad n \leftarrow n + 1,
      \qquad d = \min\bigl(d_{\max}, \tfrac{1+n}{10+n}\bigr) \ \text{(or } d_{\max}
      \text{ without } use\_num\_updates) \\
    & g \leftarrow g + \lambda\theta \quad \text{(Adam-L2 mode only)} \\
    & m \leftarrow \beta_1 m + (1-\beta_1) g, \qquad v \leftarrow \beta_2 v + (1-\beta_2) g^2 \\
    & u = \frac{m / c_1}{\sqrt{v / c_2} + \epsilon} \;(+\, \lambda\theta \text{ in AdamW mode}),
      \qquad c_i = 1-\beta_i^t \text{ (1 without bias correction)} \\
    & \theta \leftarrow \theta - \gamma u, \qquad s \leftarrow d\,s + (1-d)\,\theta
    \end{aligned}

in fp32 arithmetic with the kernel's operation order (``docs/ARCHITECTURE.md``). The moments and
the EMA of 16-bit parameters are fp32 by default (``state_dtype``); with ``master_weights`` the
kernel updates an fp32 master and writes the 16-bit parameter as its rounding. The options (torch
AdamW's, ``torch.amp.GradScaler`` without an unscale pass or a host sync, EMA schedules, tensor
(capturable) ``lr``/``ema_decay``, ...) are listed in ``docs/OPTIMIZER.md``.

The package, in torch's shape: the class (``_optimizer``) checks every group, gathers its tensors
and this step's hyper-parameters and calls the functional core
:func:`ascend_ema_adam.optim.functional.ema_adamw` once per group, as ``torch.optim.AdamW`` calls
``adamw()``; every update goes through it, and MindSpeed's :func:`fused_ema_adamw` is a thin
wrapper over it. The class composes the step counters (``_steps``) and the launch cache
(``_launch_cache``: group caches, prepared launches, updated storages), and calls the gather
(``_gather``), the checks (``_validation``; ``_memory``, the op's memory rules over a step),
clipping (``_clip``), the EMA schedule (``_schedule``), GradScaler's tensors (``_scaler``),
checkpoints (``_checkpoint``), the EMA helpers (``_ema``) and the 8-bit state (``_state8bit``;
``state_bits=8`` groups call :func:`~ascend_ema_adam.optim.functional.ema_adamw8bit` for their
8-bit parameters).
"""

from ._checkpoint import to_torch_state_dict
from ._optimizer import FusedEmaAdamW
from .functional import ema_adamw, ema_adamw8bit, fused_ema_adamw

# What the single module ascend_ema_adam/optim.py also held, for code that imported it from there.
from ..ops import apply_fused_ema_adam_list, npu_apply_fused_ema_adamw  # noqa: F401
from ._common import _dtensor_type, _local  # noqa: F401
from ._ema import _checked_stash_device, _weights_swapped  # noqa: F401
from ._schedule import _device_decay, _host_decay  # noqa: F401

__all__ = ["FusedEmaAdamW", "ema_adamw", "ema_adamw8bit", "fused_ema_adamw", "to_torch_state_dict"]

# Pickles (torch.save of the optimizer object) name the class by its module: the package's, as
# when the optimizer was the single module ascend_ema_adam/optim.py, so old and new pickles load.
FusedEmaAdamW.__module__ = __name__
