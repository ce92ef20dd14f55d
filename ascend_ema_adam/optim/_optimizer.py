"""The :class:`FusedEmaAdamW` class: construction, the group options, ``step()`` (check every
group, then complete the state, count and launch) and ``zero_grad``. The parts live beside it:
``_validation`` (the checks), ``_memory`` (the op's memory rules over a step), ``_steps``
(counters, cached groups), ``_buckets`` (launch lists and the per-group cache), ``functional``
(the launches), ``_schedule`` (the EMA decay), ``_scaler`` (GradScaler), ``_ema`` (EMA helpers)
and ``_checkpoint`` (state dicts, pickling)."""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer

from .. import _C
from ._buckets import _GroupCache, _Item, _state_keys
from ._checkpoint import _CheckpointMixin
from ._clip import _ClipMixin
from ._common import (_MASTER, _MAX_V, _STEP_SCOPES, _VALID_DTYPES, _WIDE_KEYS, _dtensor_type,
                      _has_ema, _local)
from ._ema import _EmaMixin, _merge_tied_names
from ._memory import check_new_params, check_plan_memory, updated_ranges
from ._scaler import _Scaler
from ._steps import _StepsMixin
from ._validation import (_check_capturable, _check_hyperparameters, _check_implementation,
                          _check_ema_decay, _check_tensor_hypers, _check_types, _grad_dtypes,
                          _hyperparameter_error, _layout, _option_error, _state_dtypes,
                          _tensor_error)
from .functional import launch_buckets


def _warn_zero3_parts(plan) -> None:
    """DeepSpeed ZeRO-3 steps its client optimizer once per sub-group, its fp32 partitions
    (they carry ``ds_id``) as the params: outside a partial_steps() block the counters would
    advance once per sub-group. Warned (once per call site, Python's default) rather than
    refused: with one sub-group the count is right."""
    if any(items and hasattr(items[0].param, "ds_id") for _, _, items, _, _ in plan):
        warnings.warn(
            "FusedEmaAdamW.step() on DeepSpeed ZeRO-3 partitions outside partial_steps(): "
            "DeepSpeed calls step() once per sub-group, so num_updates (the EMA warm-up) and "
            "group steps advance once per sub-group, not per engine step; attach the engine "
            "(ascend_ema_adam.integrations.deepspeed.attach(engine), or create it with that "
            "module's initialize())", RuntimeWarning,
            stacklevel=6)  # this, _update, no_grad, step, torch's step hooks: the caller


class FusedEmaAdamW(_ClipMixin, _StepsMixin, _EmaMixin, _CheckpointMixin, Optimizer):
    r"""Adam/AdamW with an exponential moving average of the weights, one fused multi-tensor
    kernel launch per device and dtype of a parameter group (a drop-in for MindSpeed's
    ``FusedEmaAdamW``).

    Args:
        params: iterable of parameters, dicts defining parameter groups, or named parameters
            (``named_parameters(remove_duplicate=False)`` keeps tied weights' other names for
            :meth:`ema_state_dict`). DTensor parameters (FSDP2 ``fully_shard``) are updated
            shard by shard, and their state stays sharded.
        lr (float): learning rate (default: 1e-3).
        eps (float): added to the denominator after the square root (default: 1e-8).
        betas (tuple[float, float]): coefficients of the first and second moments
            (default: (0.9, 0.999)).
        weight_decay (float): decoupled (AdamW) or L2 (Adam) weight decay (default: 1e-2).
        ema_decay (float | None): the EMA decay :math:`d_{\max}` (default: 0.9999). Also a
            per-group option, and settable later through :attr:`ema_decay` (as Megatron's glue
            does). None: no EMA (a fused Adam/AdamW): no ``ema_params`` state, launches without
            the EMA; the EMA schedule options are kept but do nothing, and the EMA helpers
            refuse an optimizer none of whose groups has an EMA.
        amsgrad (bool): AMSGrad: the denominator uses the running maximum of ``exp_avg_sq``
            (state ``max_exp_avg_sq``, as torch) (default: False).
        maximize (bool): ascend the gradient instead of descending (default: False).
        use_num_updates (bool): EMA warm-up: the decay is ``min(ema_decay, (1+n)/(10+n))`` with
            ``n`` the number of steps taken, counted from 1 (default: True).
        bias_correction (bool): divide the moments by ``1 - beta**step`` (default: True).
        adam_w_mode (bool): decoupled weight decay (AdamW, kernel mode 1); False gives Adam with
            L2 decay added to the gradient (mode 0) (default: True).
        set_grad_none (bool): :meth:`zero_grad` sets gradients to None; False zeroes them
            (default: True).
        step_scope (str): ``"param"`` (default): each parameter counts its own updates, as
            torch's optimizers do (``state[p]["step"]``), so a parameter that first gets a
            gradient late starts its bias correction at 1. ``"group"``: MindSpeed's one step per
            group (``param_groups[i]["step"]``), counted also when no parameter has a gradient;
            bit-compatible with MindSpeed.
        foreach (bool | None): torch's keyword. None/True: one multi-tensor launch
            (``apply_fused_ema_adam_list``) per bucket of a group (its parameters of one device
            and dtype, and one step value), False: one launch per parameter; both give the same
            bits (default: None).
        fused (bool | None): torch's keyword: this optimizer is always fused; ``False`` raises
            ``ValueError`` (default: None).
        capturable (bool): torch's keyword (megatron-core >= 0.18 passes it), accepted and
            ignored, not stored. What it buys in torch, a step that never syncs with the host,
            is how this optimizer always steps: no device value is read back (steps live on the
            host; ``lr``/``ema_decay`` may be device tensors; GradScaler's values stay on the
            device). What ``capturable=True`` cannot give here is a step captured once into a
            device graph (CUDA/NPU graph) and replayed: each step hands the kernel new step
            tensors and host floats, which a replay would repeat. ``torch.compile`` works.
        state_dtype (torch.dtype | None): the dtype of ``exp_avg``, ``exp_avg_sq``,
            ``max_exp_avg_sq`` and ``ema_params`` of 16-bit parameters: ``torch.float32``
            (default), or None for the parameter's dtype (MindSpeed's layout). fp32 parameters
            always have fp32 state. A checkpoint of either layout converts on load.
        master_weights (bool): 16-bit parameters get an fp32 master (state ``master_param``,
            from the parameter at its first step); the kernel updates the master and writes the
            parameter as the master rounded to nearest even, and the EMA follows the master
            (default: False; fp32 parameters need no master).
        ema_warmup (str | None): the EMA decay schedule, from the warm-up counter ``n``:
            ``"num_updates"`` (default, MindSpeed's ``min(ema_decay, (1+n)/(10+n))``), ``"power"``
            (timm/diffusers: ``min(ema_decay, 1 - (1 + n/inv_gamma)**-power)``) or None
            (constant ``ema_decay``; ``use_num_updates=False`` is its old spelling).
        inv_gamma, power (float): the ``"power"`` warm-up's constants (defaults 1.0 and 2/3).
        min_ema_decay (float): the decay never goes below this, after the warm-up's min
            (default: 0.0).
        ema_update_after_step (int): for the first this many steps the EMA is a plain copy of
            the weights (decay 0); the warm-up counts from there (default: 0).
        ema_every (int): update the EMA on every k-th ``step()`` with ``decay**k``; the other
            steps do not touch it (default: 1).
        max_grad_norm (float | None): fused gradient clipping: the gradients of the groups
            that set it are clipped to this total 2-norm (one norm over all of them, as
            ``torch.nn.utils.clip_grad_norm_`` of their parameters), computed on the device
            and folded into the kernel's gradient divisor (no gradient is written, no host
            sync; under a GradScaler of the unscaled gradients). A non-finite norm skips the
            step. :meth:`clip_grad_norm_` does the same for one step (default: None).

    ``lr`` and ``ema_decay`` may also be one-element float32 tensors on the parameters'
    device: the kernel reads them there, so ``step()`` never syncs (capturable). Under
    ``torch.amp.GradScaler`` the step reads its ``grad_scale`` and ``found_inf`` (no unscale
    pass, no host sync); a step with an inf/NaN gradient changes nothing, counters included.

    State, per parameter: ``exp_avg``, ``exp_avg_sq`` (zeros), ``ema_params`` (a copy of the
    parameter, or of its master; none in a group with ``ema_decay=None``), ``max_exp_avg_sq``
    (amsgrad), ``master_param`` (master_weights), created at the parameter's first step, and
    (``step_scope="param"``) ``step``, a 0-d float32 CPU tensor like torch's (on the
    GradScaler's device once a scaler drives the steps: its value is then the device's). Per
    group: ``num_updates`` (the warm-up counter, -1 without warm-up), ``ema_decay``,
    ``foreach``, ``decoupled_weight_decay`` (mirrors ``adam_w_mode`` for torch's loaders) and
    (``step_scope="group"``) ``step``, an int64 tensor of one element on the group's device.
    Parameters without a gradient are skipped; their state (and EMA) is untouched.
    """

    def __init__(self, params, lr=1e-3, eps=1e-8, betas=(0.9, 0.999), weight_decay=1e-2,
                 ema_decay=0.9999, amsgrad=False, *, maximize=False, use_num_updates=True,
                 bias_correction=True, adam_w_mode=True, set_grad_none=True, step_scope="param",
                 foreach=None, fused=None, state_dtype=torch.float32, master_weights=False,
                 ema_warmup="num_updates", inv_gamma=1.0, power=2.0 / 3.0, min_ema_decay=0.0,
                 ema_update_after_step=0, ema_every=1, capturable=False, max_grad_norm=None):
        options = dict(state_dtype=state_dtype, master_weights=master_weights,
                       ema_warmup=ema_warmup if use_num_updates else None, inv_gamma=inv_gamma,
                       power=power, min_ema_decay=min_ema_decay,
                       ema_update_after_step=ema_update_after_step, ema_every=ema_every,
                       max_grad_norm=max_grad_norm)
        _check_types(lr, eps, betas, weight_decay, ema_decay)
        _check_capturable(capturable)
        error = _hyperparameter_error(lr, eps, betas, weight_decay, ema_decay) or _option_error(
            dict(options, amsgrad=amsgrad, maximize=maximize))
        if error is not None:
            raise ValueError(error)
        _check_implementation(foreach, fused)
        if step_scope not in _STEP_SCOPES:
            raise ValueError(f"step_scope must be 'param' or 'group', got {step_scope!r}")
        if not use_num_updates and (ema_warmup == "power" or ema_update_after_step):
            raise ValueError("use_num_updates=False turns the warm-up counter off: "
                             "ema_warmup='power' and ema_update_after_step need it")
        self.use_num_updates = bool(use_num_updates)
        self.adam_w_mode = 1 if adam_w_mode else 0
        self.set_grad_none = set_grad_none
        self.step_scope = step_scope
        # ZeroRedundancyOptimizer: the ranks' local norms are all-reduced over this group
        # (distributed.set_clip_process_group); DTensor gradients reduce over their mesh.
        self.clip_process_group = None
        self._partial = None  # the open partial_steps() block
        self._reset_caches()
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        ema_decay=ema_decay, foreach=foreach, **options)
        super().__init__(params, defaults)

    def _reset_caches(self) -> None:
        # Host values of the group steps this optimizer wrote (group index -> (tensor, value)),
        # and the int64 device steps of the last update ((device, value) -> tensor): neither is
        # ever read back from the device.
        self._known_group_steps: dict[int, tuple[Tensor, int]] = {}
        self._device_steps: dict[tuple[torch.device, int], Tensor] = {}
        # Per group index: what its last full check established (_GroupCache), and the state
        # map's dicts after the last step.
        self._group_caches: dict[int, _GroupCache] = {}
        self._state_values: list = []
        # The per-parameter step tensors that GradScaler steps made, shared by the parameters
        # of one launch (id -> tensor): their values live on the device, the host never reads
        # them.
        self._shared_steps: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        # The storages the cached groups update (_memory.updated_ranges), while every group is
        # cached: a step then checks only its gradients against them (None: check in full).
        self._updated_ranges = None
        # clip_grad_norm_'s (norm, max_norm) for the next step; the unscaled total norm of the
        # last step that clipped (a device tensor: the step reads nothing back).
        self._clip_request = None
        self.last_grad_norm = None

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
    def ema_decay(self) -> float | Tensor | None:
        """The EMA decay (MindSpeed's attribute; None: no EMA). Setting it sets every group's
        decay. Set to None, the EMA is dropped at once (its memory freed); set to a decay
        again, a new EMA starts from the weights at the next ``step()``, as at a parameter's
        first step (the warm-up counter ``num_updates`` is not reset)."""
        return self.param_groups[0].get("ema_decay", self.defaults["ema_decay"])

    @ema_decay.setter
    def ema_decay(self, value: float | Tensor | None) -> None:
        _check_ema_decay(value)
        self.defaults["ema_decay"] = value
        for group in self.param_groups:
            group["ema_decay"] = value
        if value is None:  # the EMA's memory is freed now: no state, cache or launch holds it
            for group in self.param_groups:
                for p in group["params"]:
                    self.state.get(p, {}).pop("ema_params", None)
            self._group_caches.clear()
            self._updated_ranges = None

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (torch semantics); its own hyper-parameters are validated like the
        constructor's, and it joins the optimizer's current warm-up count. Named parameters
        listed twice (tied weights from ``named_parameters(remove_duplicate=False)``) are kept
        once, their other names in the group's ``param_aliases``; any other parameter listed
        twice (in this group or another) or sharing memory with another is a ValueError."""
        if isinstance(param_group, dict):
            merged = {**self.defaults, **param_group}
            _check_hyperparameters(merged)
            if not self.use_num_updates and (merged["ema_warmup"] is not None
                                             or merged["ema_update_after_step"]):
                raise ValueError("use_num_updates=False turns the warm-up counter off: "
                                 "ema_warmup and ema_update_after_step need it")
            _check_implementation(merged["foreach"], None)
            _merge_tied_names(param_group)
            params = param_group.get("params")
            if isinstance(params, list):
                check_new_params(self.param_groups, params, len(self.param_groups))
            elif isinstance(params, Tensor):
                check_new_params(self.param_groups, [params], len(self.param_groups))
        current = (self.param_groups[0].get("num_updates", self._initial_num_updates)
                   if self.param_groups else self._initial_num_updates)
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        group.setdefault("num_updates", current)
        group.setdefault("ema_calls", 0)
        group["decoupled_weight_decay"] = bool(self.adam_w_mode)

    # -- gradients

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        """Set gradients to None (``set_grad_none``, MindSpeed's behaviour) or zero them;
        ``set_to_none`` overrides the constructor's choice for one call."""
        if set_to_none is None:
            set_to_none = self.set_grad_none
        if not torch.compiler.is_compiling():
            super().zero_grad(set_to_none=set_to_none)
            return
        # torch's zero_grad is excluded from tracing; inside a compiled training step the same
        # work is traced here (a full graph needs it)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # -- the step: check everything, then write

    # torch.amp.GradScaler: step() reads self.grad_scale / self.found_inf (set by the scaler)
    _step_supports_amp_scaling = True

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss.

        Every group and parameter is checked first (hyper-parameters, dtypes, shapes, devices,
        state, steps): a step that raises has changed nothing."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if torch.compiler.is_compiling() and self._needs_eager_update():
            self._update_outside_graph()
        else:
            self._update()
        return loss

    @torch.no_grad()
    def _update(self) -> None:
        """Check every group (read only), then create missing state, count, and launch. A group
        whose last full check still holds (its _GroupCache) re-checks only what may change."""
        dtensor = _dtensor_type()
        compiling = torch.compiler.is_compiling()
        cacheable = not compiling
        scaler = _Scaler(getattr(self, "grad_scale", None), getattr(self, "found_inf", None))
        # The state map as after the last step (same state dicts, same order; no hashing)?
        state_unchanged = cacheable and _C.same_dict_values(self.state, self._state_values)
        # Every tensor the cached groups update still has the memory and description the caches
        # saw (their prepared launches then need not compare them again)? If one has new memory
        # (p.data = ..., set_()), what the caches established about memory no longer holds:
        # every group is checked in full, before anything is written, and cached again.
        held_checked = cacheable and self._updated_ranges is not None
        if held_checked and not self._updated_ranges.in_place():
            self._group_caches.clear()
            self._updated_ranges = None
            held_checked = False
        plan = []
        for i, group in enumerate(self.param_groups):
            cache = self._group_caches.get(i) if cacheable else None
            grads = None
            if cache is not None and not (self.step_scope == "param" and "step" in group):
                grads = cache.grads_if_unchanged(group, self.state, state_unchanged,
                                                 self._updated_ranges)
            if grads is not None:
                _check_hyperparameters(group, f"param_groups[{i}]: ")
                for (device, *_), indexes in cache.buckets.items():
                    _check_tensor_hypers(i, group, indexes[0], device)
                if self.step_scope == "group":
                    self._group_step_before(i, group)
                plan.append((i, group, None, cache, grads))
            else:
                plan.append((i, group, self._checked_group(i, group, dtensor), None, None))
        if not compiling:  # (traced tensors have no addresses; the op checks at run time)
            check_plan_memory(plan, self.param_groups, scaler, self._updated_ranges)
        if self._partial is not None:  # one step in parts (DeepSpeed): see partial_steps()
            self._check_partial(plan)
        elif not compiling:
            _warn_zero3_parts(plan)
        # clipping: the counters skip on a non-finite norm too; each group its divisor
        scaler, group_scalers = self._clipping_scalers(plan, scaler, dtensor)

        for _, group, items, _, _ in plan:
            for item in items or ():
                self._complete_state(item, group)
        n = self._advance_num_updates(scaler)
        device_steps: dict[tuple[torch.device, int], Tensor] = {}
        for i, group, items, cache, grads in plan:
            if cache is not None:
                buckets = self._advance_cached(i, group, cache, grads, device_steps, scaler)
            elif self.step_scope == "group":
                buckets = self._advance_group_step(i, group, items, dtensor, scaler)
            else:
                buckets = self._advance_param_steps(i, group, items, device_steps, dtensor,
                                                    scaler)
            launch_buckets(group, buckets, n, scaler if group_scalers is None
                           else group_scalers[i], self.adam_w_mode,
                           None if cache is None else cache.launches, held_checked)
            if cacheable and cache is None:
                self._remember(i, group, items)
        if cacheable:
            self._device_steps = device_steps
            rechecked = any(cache is None for *_, cache, _ in plan)
            if rechecked or not state_unchanged:  # (a cached step adds no state)
                self._state_values = list(self.state.values())
            if rechecked:  # a group was (re)checked in full
                caches = [self._group_caches.get(i) for i in range(len(self.param_groups))]
                self._updated_ranges = (updated_ranges(caches) if all(caches) else None)

    # Under torch.compile every float the op receives is a constant of the graph, so the warm-up
    # counter and decay are tensors there (computed on the device). ema_every's EMA-or-not is a
    # host decision, new every step: with ema_every > 1 the update runs eagerly (one graph break
    # at the call of step()).
    try:
        _update_outside_graph = torch.compiler.disable(
            _update, reason="FusedEmaAdamW: ema_every > 1 decides on the host whether a step "
            "updates the EMA, so the update runs outside the graph")
    except TypeError:  # torch before 2.8: no reason
        _update_outside_graph = torch.compiler.disable(_update)

    def _needs_eager_update(self) -> bool:
        """Under tracing: would the traced update take a new constant on every step? (ema_every's
        EMA-or-not is decided on the host.)"""
        return any(group["ema_every"] > 1 and _has_ema(group) for group in self.param_groups)

    def _checked_group(self, i: int, group: dict[str, Any], dtensor) -> list[_Item]:
        """Check group ``i`` and its parameters with a gradient; read only."""
        _check_hyperparameters(group, f"param_groups[{i}]: ")
        compiling = torch.compiler.is_compiling()
        per_param = self.step_scope == "param" and not compiling
        keys = _state_keys(group)
        items = []
        for j, p in enumerate(group["params"]):
            grad = p.grad
            if grad is None:
                continue
            where = f"param_groups[{i}]['params'][{j}]: "
            # MindSpeed's two checks and texts first, naming the parameter
            if p.dtype not in _VALID_DTYPES:
                raise RuntimeError(where + 'ema_adamw only support fp32, fp16, bf16. '
                                   f'(this parameter is {p.dtype})')
            if grad.is_sparse:
                raise RuntimeError(where + 'AdamW does not support sparse gradients')
            error = _tensor_error(p, grad, "the gradient", dtensor,
                                  _grad_dtypes(group, p.dtype))
            state = self.state[p] if p in self.state else {}
            for key in keys:
                if error is None and state.get(key) is not None:
                    error = _tensor_error(p, state[key], f"state '{key}'", dtensor,
                                          _state_dtypes(p.dtype, key))
            if error is not None:
                raise RuntimeError(where + error)
            _check_tensor_hypers(i, group, j, _local(p).device)
            step = self._param_step_before(i, group, state, where) if per_param else None
            items.append(_Item(p, grad, state, step, j))
        if self.step_scope == "group" and not compiling:
            self._group_step_before(i, group)
        return items

    def _complete_state(self, item: _Item, group: dict[str, Any]) -> None:
        """Create the missing state, key by key (a partially loaded state, e.g. a ZeRO load of
        a torch AdamW checkpoint, is completed rather than rejected), and bring it to the
        group's layout: the master created (or dropped), the state dtype converted."""
        p, state = item.param, item.state
        if not state:
            state = item.state = self.state[p]
        state_dtype, master = _layout(group, p.dtype)
        if master and _MASTER not in state:
            state[_MASTER] = p.detach().to(torch.float32, copy=True)
        elif not master:
            state.pop(_MASTER, None)
        for key in ("exp_avg", "exp_avg_sq") + ((_MAX_V,) if group["amsgrad"] else ()):
            if key not in state:
                state[key] = torch.zeros_like(p, dtype=state_dtype,
                                              memory_format=torch.preserve_format)
        if not _has_ema(group):  # (a group whose EMA was switched off: its memory is freed)
            state.pop("ema_params", None)
        elif "ema_params" not in state:  # the EMA starts at the weights (the master's, if any)
            state["ema_params"] = state.get(_MASTER, p).detach().to(state_dtype, copy=True)
        for key in _WIDE_KEYS:
            if key in state and state[key].dtype != state_dtype:
                state[key] = state[key].to(state_dtype)
