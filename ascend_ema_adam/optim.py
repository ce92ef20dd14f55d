r"""FusedEmaAdamW: Adam/AdamW and an EMA of the weights in one fused kernel per parameter.

A drop-in for MindSpeed's ``FusedEmaAdamW`` (``mindspeed/core/optimizer/fused_ema_adamw``): the
same constructor, errors, state layout and EMA helpers, running every update through
:func:`ascend_ema_adam.ops.npu_apply_fused_ema_adamw` (CPU tensors on this package's CPU device,
NPU tensors through CANN's ``aclnnApplyFusedEmaAdam``). On top of MindSpeed it adds
:meth:`FusedEmaAdamW.swap_ema`, :meth:`FusedEmaAdamW.ema_state_dict`, checkpoints that carry the
EMA warm-up counter and decay, loading of plain ``torch.optim.AdamW`` checkpoints, and DTensor
(FSDP2) parameters. ``docs/OPTIMIZER.md`` is the user guide.

Per step, for every group and every parameter :math:`\theta` with a gradient :math:`g`
(:math:`t` the group's step, :math:`n` the optimizer's update counter):

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

in fp32 arithmetic with the kernel's operation order (``docs/ARCHITECTURE.md``); all state is
stored in the parameter's dtype.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer

from ._dtypes import torch_float_dtypes
from .ops import npu_apply_fused_ema_adamw

__all__ = ["FusedEmaAdamW", "fused_ema_adamw"]

_VALID_DTYPES = torch_float_dtypes()


# ---------------------------------------------------------------------------------------------
# DTensor (FSDP2) support: the op runs on each rank's local shard


def _dtensor_type():
    """``torch.distributed.tensor.DTensor`` if that module is loaded, else None. A DTensor can
    only exist once the module is imported, so this never imports it (and costs nothing)."""
    module = sys.modules.get("torch.distributed.tensor")
    return getattr(module, "DTensor", None)


def _local(t: Tensor) -> Tensor:
    """The tensor the kernel updates: the local shard (a view) of a DTensor, else ``t``."""
    dtensor = _dtensor_type()
    if dtensor is not None and isinstance(t, dtensor):
        return t.to_local()
    return t


def _check_same_layout(param: Tensor, other: Tensor, what: str) -> None:
    """A DTensor parameter needs its gradient and state sharded the same way (each rank updates
    exactly the elements it holds)."""
    dtensor = _dtensor_type()
    p_is = dtensor is not None and isinstance(param, dtensor)
    o_is = dtensor is not None and isinstance(other, dtensor)
    if p_is != o_is:
        raise RuntimeError(f"FusedEmaAdamW: the parameter is {'a' if p_is else 'not a'} DTensor "
                           f"but its {what} is {'a' if o_is else 'not a'} DTensor")
    if p_is and (other.placements != param.placements or other.device_mesh != param.device_mesh):
        raise RuntimeError(f"FusedEmaAdamW: {what} placements {other.placements} differ from the "
                           f"parameter's {param.placements}")


# ---------------------------------------------------------------------------------------------
# Functional form (MindSpeed's ``fused_ema_adamw``)


def fused_ema_adamw(grad: list[Tensor], var: list[Tensor], m: list[Tensor], v: list[Tensor],
                    s: list[Tensor], step: Tensor, lr: float, ema_decay: float, beta1: float,
                    beta2: float, eps: float, mode: int, bias_correction: bool,
                    weight_decay: float) -> None:
    """One fused op call per tensor, in place (MindSpeed's functional form, same signature).

    The tensors are plain (local) tensors; ``step`` is the int64 one-element step, copied once
    per other device when the tensors live on several devices.
    """
    steps = {step.device: step}
    for g, p, m_, v_, s_ in zip(grad, var, m, v, s, strict=True):
        step_here = steps.get(p.device)
        if step_here is None:
            step_here = steps[p.device] = step.to(p.device)
        npu_apply_fused_ema_adamw(g, p, m_, v_, s_, step_here, lr, ema_decay, beta1, beta2, eps,
                                  mode, bias_correction, weight_decay)


# ---------------------------------------------------------------------------------------------


def _validate_hyperparameters(lr, eps, betas, weight_decay, ema_decay) -> None:
    """MindSpeed's checks and texts, in its order; ``ema_decay`` is an addition."""
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
    if not 0.0 <= ema_decay <= 1.0:
        raise ValueError("Invalid ema_decay value: {}".format(ema_decay))


def _check_variants(amsgrad, maximize) -> None:
    if amsgrad:
        raise RuntimeError('ema_adamw does not support the AMSGrad variant.')
    if maximize:
        raise RuntimeError('ema_adamw does not support the maximize variant.')


class FusedEmaAdamW(Optimizer):
    r"""Adam/AdamW with an exponential moving average of the weights, one fused kernel call per
    parameter (a drop-in for MindSpeed's ``FusedEmaAdamW``).

    Args:
        params: iterable of parameters, dicts defining parameter groups, or named parameters.
            DTensor parameters (FSDP2 ``fully_shard``) are updated shard by shard, and their
            state stays sharded.
        lr (float): learning rate (default: 1e-3).
        eps (float): added to the denominator after the square root (default: 1e-8).
        betas (tuple[float, float]): coefficients of the first and second moments
            (default: (0.9, 0.999)).
        weight_decay (float): decoupled (AdamW) or L2 (Adam) weight decay (default: 1e-2).
        ema_decay (float): the EMA decay :math:`d_{\max}` (default: 0.9999). Also a per-group
            option, and settable later through :attr:`ema_decay` (as Megatron's glue does).
        amsgrad (bool): not supported yet; ``True`` raises ``RuntimeError`` (as MindSpeed).
        maximize (bool): not supported yet; ``True`` raises ``RuntimeError`` (as MindSpeed).
        use_num_updates (bool): EMA warm-up: the decay is ``min(ema_decay, (1+n)/(10+n))`` with
            ``n`` the number of steps taken, counted from 1 (default: True).
        bias_correction (bool): divide the moments by ``1 - beta**step`` (default: True).
        adam_w_mode (bool): decoupled weight decay (AdamW, kernel mode 1); False gives Adam with
            L2 decay added to the gradient (mode 0) (default: True).
        set_grad_none (bool): :meth:`zero_grad` sets gradients to None; False zeroes them
            (default: True).

    State, per parameter: ``exp_avg``, ``exp_avg_sq`` (zeros) and ``ema_params`` (a clone of
    the parameter), created at the parameter's first step, in the parameter's dtype. Per group:
    ``step`` (int64 tensor of one element on the group's device, incremented before each
    update), ``num_updates`` (the warm-up counter, -1 without warm-up) and ``ema_decay``.
    Parameters without a gradient are skipped; their state (and EMA) is untouched.
    """

    def __init__(self, params, lr=1e-3, eps=1e-8, betas=(0.9, 0.999), weight_decay=1e-2,
                 ema_decay=0.9999, amsgrad=False, *, maximize=False, use_num_updates=True,
                 bias_correction=True, adam_w_mode=True, set_grad_none=True):
        _check_variants(amsgrad, maximize)
        _validate_hyperparameters(lr, eps, betas, weight_decay, ema_decay)
        self.use_num_updates = bool(use_num_updates)
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        ema_decay=ema_decay)
        super().__init__(params, defaults)
        self.adam_w_mode = 1 if adam_w_mode else 0
        self.set_grad_none = set_grad_none

    # -- optimizer-wide EMA settings (MindSpeed attributes), stored in every param group so
    # -- that checkpoints and ZeroRedundancyOptimizer (which syncs group keys) carry them

    @property
    def _initial_num_updates(self) -> int:
        return 0 if self.use_num_updates else -1

    @property
    def num_updates(self) -> int:
        """Steps taken, for the EMA warm-up (MindSpeed's attribute; -1: warm-up off)."""
        return int(self.param_groups[0].get("num_updates", self._initial_num_updates))

    @num_updates.setter
    def num_updates(self, value: int) -> None:
        for group in self.param_groups:
            group["num_updates"] = int(value)

    @property
    def ema_decay(self) -> float:
        """The EMA decay (MindSpeed's attribute). Setting it sets every group's decay."""
        return self.param_groups[0].get("ema_decay", self.defaults["ema_decay"])

    @ema_decay.setter
    def ema_decay(self, value: float) -> None:
        if not 0.0 <= value <= 1.0:
            raise ValueError("Invalid ema_decay value: {}".format(value))
        self.defaults["ema_decay"] = value
        for group in self.param_groups:
            group["ema_decay"] = value

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (torch semantics); its own hyper-parameters are validated like the
        constructor's, and it joins the optimizer's current warm-up count."""
        if isinstance(param_group, dict):
            merged = {**self.defaults, **param_group}
            _check_variants(merged["amsgrad"], merged["maximize"])
            _validate_hyperparameters(merged["lr"], merged["eps"], merged["betas"],
                                      merged["weight_decay"], merged["ema_decay"])
        current = (self.param_groups[0].get("num_updates", self._initial_num_updates)
                   if self.param_groups else self._initial_num_updates)
        super().add_param_group(param_group)
        self.param_groups[-1].setdefault("num_updates", current)

    # -- gradients

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        """Set gradients to None (``set_grad_none``, MindSpeed's behaviour) or zero them;
        ``set_to_none`` overrides the constructor's choice for one call."""
        if set_to_none is None:
            set_to_none = self.set_grad_none
        super().zero_grad(set_to_none=set_to_none)

    # -- the step

    @staticmethod
    def _check_group(group: dict[str, Any]) -> None:
        """MindSpeed's step-time checks (its texts), for one group's params with a gradient."""
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.dtype not in _VALID_DTYPES:
                raise RuntimeError('ema_adamw only support fp32, fp16, bf16.')
            if p.grad.is_sparse:
                raise RuntimeError('AdamW does not support sparse gradients')
            _check_same_layout(p, p.grad, "gradient")

    def _init_group(self, group: dict[str, Any]):
        """Create missing state and return the local tensors (params, grads, exp_avgs,
        exp_avg_sqs, ema_params) of the group's params with a gradient."""
        lists = ([], [], [], [], [])
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            # Key by key, so partially loaded states (a ZeRO load of a torch AdamW checkpoint)
            # are completed rather than rejected.
            if "exp_avg" not in state:
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            if "exp_avg_sq" not in state:
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            if "ema_params" not in state:
                state["ema_params"] = p.detach().clone()
            for target, t in zip(lists, (p, p.grad, state["exp_avg"], state["exp_avg_sq"],
                                         state["ema_params"])):
                if t is not p:
                    _check_same_layout(p, t, "state")
                target.append(_local(t))
        return lists

    def _advance_step(self, group: dict[str, Any]) -> Tensor:
        """Increment (or create at 1) the group's int64 step on the group's device.

        Out of place: a step tensor shared with a state dict (ZeroRedundancyOptimizer's load
        shares the caller's tensors) or saved earlier never changes behind the caller's back."""
        device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
        step = group.get("step")
        if step is None:
            group["step"] = torch.tensor([1], dtype=torch.int64, device=device)
        else:
            group["step"] = step.to(device) + 1
        return group["step"]

    @torch.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:  # every check before anything changes
            self._check_group(group)
        work = [(group, self._init_group(group)) for group in self.param_groups]

        # The warm-up decay, once per step from the optimizer-wide counter (MindSpeed).
        warmup = None
        n = self.num_updates
        if n >= 0:
            n += 1
            warmup = (1 + n) / (10 + n)
        self.num_updates = n

        for group, (params, grads, exp_avgs, exp_avg_sqs, ema_params) in work:
            # Every group counts the step, with or without gradients (MindSpeed); groups with
            # no parameters too, so ZeroRedundancyOptimizer's partitions keep equal counters.
            step = self._advance_step(group)
            if not params:
                continue
            ema_decay = group.get("ema_decay", self.defaults["ema_decay"])
            if warmup is not None:
                ema_decay = min(ema_decay, warmup)
            beta1, beta2 = group["betas"]
            fused_ema_adamw(grads, params, exp_avgs, exp_avg_sqs, ema_params, step,
                            float(group["lr"]), float(ema_decay), float(beta1), float(beta2),
                            float(group["eps"]), self.adam_w_mode, bool(group["bias_correction"]),
                            float(group["weight_decay"]))
        return loss

    # -- EMA access (MindSpeed) and additions

    def _params_with_ema(self) -> Iterator[tuple[Tensor, Tensor]]:
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state.get(p)
                if state and "ema_params" in state:
                    yield p, state["ema_params"]

    @torch.no_grad()
    def copy_to(self) -> None:
        """Write the EMA weights into the parameters (params without EMA state are skipped)."""
        for p, ema in self._params_with_ema():
            _local(p).copy_(_local(ema))

    @staticmethod
    def _group_params(parameters) -> list[list[Tensor]]:
        return [list(g["params"]) if isinstance(g, dict) else [g] for g in parameters]

    @torch.no_grad()
    def store(self, parameters=None) -> None:
        """Stash the current weights of ``parameters`` (param groups, default this optimizer's)
        on the host, for :meth:`restore`."""
        if parameters is None:
            parameters = self.param_groups
        self.collected_params_group = [[_local(p).detach().cpu().clone() for p in params]
                                       for params in self._group_params(parameters)]

    @torch.no_grad()
    def restore(self, parameters=None) -> None:
        """Copy the weights stashed by :meth:`store` back and drop the stash."""
        if parameters is None:
            parameters = self.param_groups
        for stash, params in zip(self.collected_params_group, self._group_params(parameters),
                                 strict=True):
            for saved, p in zip(stash, params, strict=True):
                _local(p).copy_(saved)
        del self.collected_params_group

    @contextlib.contextmanager
    def swap_ema(self, stash_device: str | torch.device = "cpu"):
        """Context manager: the parameters hold their EMA weights inside, their own weights
        again on exit, also when the body raises. The EMA state is not modified.

        ``stash_device``: where the training weights wait meanwhile (host memory by default,
        as :meth:`store` does; the parameters' own device is faster and costs device memory).

        Example::

            with optimizer.swap_ema():
                evaluate(model)
        """
        stash = []
        try:
            with torch.no_grad():
                for p, ema in self._params_with_ema():
                    local = _local(p)
                    stash.append((local, local.detach().to(stash_device, copy=True)))
                    local.copy_(_local(ema))
            yield self
        finally:
            with torch.no_grad():
                for local, saved in stash:
                    local.copy_(saved)

    def ema_state_dict(self, model: torch.nn.Module | None = None) -> dict[str, Tensor]:
        """The model's state dict with the EMA in place of each parameter that has one.

        With ``model`` the keys are ``model.state_dict()``'s (buffers included, parameters
        without EMA state keep their own value), so ``model.load_state_dict(...)`` loads the EMA
        weights. Without it, the optimizer must have been built from ``named_parameters()`` and
        the dict holds parameters only. Values are detached references, like
        ``Module.state_dict()``: save or clone them before training on. DTensor parameters give
        sharded DTensor values (see ``ascend_ema_adam.distributed.gather_full_ema_state_dict``).
        """
        if model is not None:
            source = model.state_dict(keep_vars=True)
            out = OrderedDict()
            metadata = getattr(source, "_metadata", None)
            if metadata is not None:
                out._metadata = metadata
            items = source.items()
        else:
            if not all("param_names" in g for g in self.param_groups):
                raise TypeError("ema_state_dict() needs the model (ema_state_dict(model)) unless "
                                "the optimizer was built from model.named_parameters()")
            out = OrderedDict()
            items = ((name, p) for g in self.param_groups
                     for name, p in zip(g["param_names"], g["params"], strict=True))
        for name, value in items:
            state = self.state.get(value) if isinstance(value, Tensor) else None
            if state and "ema_params" in state:
                value = state["ema_params"]
            out[name] = value.detach() if isinstance(value, Tensor) else value
        return out

    # -- checkpoints

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a checkpoint of this optimizer, of MindSpeed's, or of ``torch.optim.AdamW``/
        ``Adam``: per-parameter float ``step`` tensors become the group's int64 step, a missing
        ``ema_params`` starts as a clone of the parameter, missing group keys take their
        defaults. State tensors take the parameter's dtype and device (the kernel's contract:
        16-bit parameters keep 16-bit state, nothing is promoted)."""
        for group in state_dict["param_groups"]:
            _check_variants(group.get("amsgrad", False), group.get("maximize", False))
        super().load_state_dict(state_dict)

    def __getstate__(self) -> dict[str, Any]:
        """torch pickles only defaults, state and groups; the constructor's switches too."""
        state = super().__getstate__()
        state.update(adam_w_mode=self.adam_w_mode, set_grad_none=self.set_grad_none,
                     use_num_updates=self.use_num_updates)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("use_num_updates", True)
        self.__dict__.setdefault("adam_w_mode", 1)
        self.__dict__.setdefault("set_grad_none", True)
        self.defaults.setdefault("ema_decay", 0.9999)
        for group in self.param_groups:
            group.setdefault("bias_correction", True)
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("ema_decay", self.defaults["ema_decay"])
            group.setdefault("num_updates", self._initial_num_updates)
            self._migrate_group_state(group)

    def _migrate_group_state(self, group: dict[str, Any]) -> None:
        """Per-parameter torch steps -> the group's int64 step; EMA from the parameter when a
        checkpoint has none."""
        device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
        param_steps = []
        for p in group["params"]:
            state = self.state.get(p)
            if not state:
                continue
            if "step" in state:
                param_steps.append(int(torch.as_tensor(state.pop("step")).reshape(-1)[0].item()))
            if "exp_avg" in state and "ema_params" not in state:
                state["ema_params"] = p.detach().clone()
        step = group.get("step")
        if step is None and param_steps:
            step = max(param_steps)
        if step is not None:
            # MindSpeed's and ours: an int64 [1] tensor; anything else holding one integer.
            value = torch.as_tensor(step).detach().reshape(-1)
            if value.numel() != 1 or not math.isfinite(float(value[0])):
                raise ValueError(f"FusedEmaAdamW: a group step must hold one finite number, "
                                 f"got {step!r}")
            group["step"] = value.to(device=device, dtype=torch.int64, copy=True)
