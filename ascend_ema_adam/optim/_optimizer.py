"""The :class:`FusedEmaAdamW` class. ``step()`` runs the closure and :func:`._update.update`, the
step itself (check everything, then write). The class composes two parts that keep state between
steps, the step counters (``_steps.StepCounters``) and the launch cache
(``_launch_cache.LaunchCache``: the group caches, their prepared launches, the updated storages),
and calls functions for the rest: the step (``_update``, over the state kinds of
``_state_kinds``), the gather (``_gather``), the checks (``_validation``, ``_memory``), clipping
(``_clip``), the EMA schedule (``_schedule``), checkpoints (``_checkpoint``) and the EMA helpers
(``_ema``)."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import torch
from torch import Tensor
from torch.optim.optimizer import Optimizer

from ._checkpoint import (STEP_LEAD, check_loaded_8bit, convert_loaded_state, fill_defaults,
                          normalize_loaded_group, place_maps, saved_state_tensors,
                          stale_ema_warning, step_lead, warn_on_weight_decay_mode,
                          with_ema_settings, without_8bit_state)
from ._clip import requested_norm
from ._common import _SETTINGS, _STEP_SCOPES, _dtensor_type, counter_device, user_stacklevel
from ._ema import (_merge_tied_names, copy_ema_to_weights, ema_state_dict_of, ema_swapped,
                   restore_weights, stashed_weights)
from ._launch_cache import LaunchCache
from ._memory import check_new_params
from ._state8bit import ensure_maps, is_8bit
from ._steps import StepCounters
from ._update import needs_eager_update, update, update_outside_graph
from ._validation import (_check_capturable, _check_ema_decay, _check_hyperparameters,
                          _check_implementation, _check_types, _hyperparameter_error,
                          _option_error)

class FusedEmaAdamW(Optimizer):
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
        ema_every_decay (str): ``"power"`` (default: as above, a constant-decay EMA sampled
            every k steps) or ``"once"``: ema-pytorch's ``update_every=k``, the EMA updated on
            steps 1, k+1, 2k+1, ... with the decay once.
        max_grad_norm (float | None): fused gradient clipping: the gradients of the groups
            that set it are clipped to this total 2-norm (one norm over all of them, as
            ``torch.nn.utils.clip_grad_norm_`` of their parameters), computed on the device
            and folded into the kernel's gradient divisor (no gradient is written, no host
            sync; under a GradScaler of the unscaled gradients). A non-finite norm skips the
            step. :meth:`clip_grad_norm_` does the same for one step (default: None).
        state_bits (int): 32 (default), or 8: Adam's moments as uint8 codes with one fp32
            scale per block of 256 elements (the ``ApplyFusedEmaAdam8bitList`` operator; the
            EMA stays fp32), for parameters of at least ``min_8bit_size`` elements. Not with
            ``amsgrad`` or ``state_dtype=None``. A checkpoint of either kind converts on load.
        min_8bit_size (int): the smallest parameter that keeps 8-bit state in a
            ``state_bits=8`` group; smaller ones keep fp32 state (default: 4096, as
            bitsandbytes).

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
    With 8-bit state ``exp_avg``/``exp_avg_sq`` are ``exp_avg_codes``/``exp_avg_sq_codes``
    (uint8) and ``exp_avg_absmax``/``exp_avg_sq_absmax`` (fp32 block scales), and the group
    holds the maps ``exp_avg_qmap``/``exp_avg_sq_qmap`` (``docs/OPTIMIZER.md``, "8-bit state").
    Parameters without a gradient are skipped; their state (and EMA) is untouched.
    """

    def __init__(self, params, lr=1e-3, eps=1e-8, betas=(0.9, 0.999), weight_decay=1e-2,
                 ema_decay=0.9999, amsgrad=False, *, maximize=False, use_num_updates=True,
                 bias_correction=True, adam_w_mode=True, set_grad_none=True, step_scope="param",
                 foreach=None, fused=None, state_dtype=torch.float32, master_weights=False,
                 ema_warmup="num_updates", inv_gamma=1.0, power=2.0 / 3.0, min_ema_decay=0.0,
                 ema_update_after_step=0, ema_every=1, ema_every_decay="power", capturable=False,
                 max_grad_norm=None, state_bits=32, min_8bit_size=4096):
        options = dict(state_dtype=state_dtype, master_weights=master_weights,
                       ema_warmup=ema_warmup if use_num_updates else None, inv_gamma=inv_gamma,
                       power=power, min_ema_decay=min_ema_decay,
                       ema_update_after_step=ema_update_after_step, ema_every=ema_every,
                       ema_every_decay=ema_every_decay, max_grad_norm=max_grad_norm,
                       state_bits=state_bits, min_8bit_size=min_8bit_size)
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
        self._reset_parts()
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        ema_decay=ema_decay, foreach=foreach, **options)
        super().__init__(params, defaults)

    def _reset_parts(self) -> None:
        """The composed parts, made (construction, unpickling) or emptied (a loaded checkpoint;
        an open ``partial_steps()`` block stays open)."""
        if "_steps" in self.__dict__:
            self._steps.reset()
            self._launch_cache.clear()
        else:
            self._steps = StepCounters()  # what is known of the counters; partial_steps()
            self._launch_cache = LaunchCache()  # what a step may skip (cached groups)
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
            self._launch_cache.clear()

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
        if group["state_bits"] == 8:
            # The maps from the start, even in a group with no parameters: ZeroRedundancyOptimizer
            # gives a rank empty shares of groups, never steps them, and saves its consolidated
            # checkpoint from those groups (without maps, the other ranks' codes could not load).
            ensure_maps(group, group["params"][0].device if group["params"] else "cpu")
            if group["params"] and not any(is_8bit(group, p.numel()) for p in group["params"]):
                warnings.warn(
                    f"state_bits=8: none of param_groups[{len(self.param_groups) - 1}]'s "
                    f"{len(group['params'])} parameters has min_8bit_size="
                    f"{group['min_8bit_size']} elements or more, so all of them keep fp32 state "
                    "(lower min_8bit_size to quantize smaller ones)", UserWarning,
                    stacklevel=user_stacklevel())

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

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0,
                        error_if_nonfinite: bool = False) -> Tensor:
        """``torch.nn.utils.clip_grad_norm_`` for every parameter of this optimizer, fused into
        the next ``step()``: returns the total norm of the gradients as they are now (computed
        on the device; under a GradScaler the scaled gradients' norm, ``last_grad_norm`` has the
        unscaled one after the step), and the next ``step()`` clips by it, with the coefficient
        in the kernel's gradient divisor: the gradients are not written. It replaces the groups'
        ``max_grad_norm`` for that step. A non-finite norm skips the step (nothing changes);
        ``error_if_nonfinite=True`` raises instead, which reads the norm on the host (a sync)."""
        grads = [p.grad for group in self.param_groups for p in group["params"]
                 if p.grad is not None]
        norm = requested_norm(grads, max_norm, norm_type, error_if_nonfinite,
                              self.clip_process_group, _dtensor_type(),
                              counter_device(self.param_groups, None))
        self._clip_request = (norm, float(max_norm))
        return norm

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
        if torch.compiler.is_compiling() and needs_eager_update(self):
            update_outside_graph(self)
        else:
            update(self)
        return loss

    @contextlib.contextmanager
    def partial_steps(self):
        """Context manager: the ``step()`` calls inside make one optimizer step together, each
        updating a part of the parameters.

        DeepSpeed steps its client optimizer in parts: ZeRO-3 calls ``step()`` once per
        sub-group (``sub_group_size``) with the group's ``params`` set to that sub-group's flat
        fp32 partition, ZeRO-1/2 once per param group with ``param_groups`` narrowed to it.
        Counted per call, the warm-up counter ``num_updates`` (and with
        ``step_scope="group"`` each group's step) would advance once per part, not once per
        training step. Inside the block they advance once: ``num_updates`` and each group's
        ``ema_every`` clock at the first call, each group's step at the first call that holds
        the group (empty or not, as outside); later calls use the same values.
        Per-parameter steps (``step_scope="param"``) count each parameter's updates as always.
        A parameter updated twice in one block, and fused clipping (one norm needs all the
        parameters at once), raise ``RuntimeError`` before anything changes.
        ``ascend_ema_adam.integrations.deepspeed.attach`` runs each engine step in a block.
        Re-entrant: an inner block belongs to the outer one."""
        with self._steps.partial_block():
            yield self

    # -- the EMA helpers (MindSpeed's methods and additions)

    def copy_to(self, parameters=None) -> None:
        """Write the EMA weights into the parameters (params without EMA state, or in a group
        without an EMA, are skipped); with master weights, into the masters too (training
        continues from the EMA). ``parameters`` (diffusers' ``copy_to(parameters)``): only
        those of this optimizer's parameters, or one tensor per parameter of it in its groups'
        order (another copy of the model), each getting the EMA (its weights where it has
        none). RuntimeError when no group has an EMA; a warning before the first step (the
        EMA is the weights then)."""
        copy_ema_to_weights(self.param_groups, self.state, parameters)

    def store(self, parameters=None) -> None:
        """Stash the current weights of ``parameters`` (param groups, default this optimizer's;
        their fp32 masters too) on the host, for :meth:`restore`. Stores nest: each
        :meth:`restore` brings back the latest store not yet restored."""
        stash = stashed_weights(self.param_groups if parameters is None else parameters,
                                self.state)
        self.__dict__.setdefault("_stashes", []).append(stash)
        self.collected_params_group = stash  # (MindSpeed's attribute: the latest stash)

    def restore(self, parameters=None) -> None:
        """Copy the weights (and masters) of the latest :meth:`store` back and drop that stash."""
        stashes = self.__dict__.get("_stashes", [])
        restore_weights(stashes[-1] if stashes else None,
                        self.param_groups if parameters is None else parameters, self.state)
        stashes.pop()
        if stashes:
            self.collected_params_group = stashes[-1]
        else:
            del self.collected_params_group

    @contextlib.contextmanager
    def swap_ema(self, stash_device: str | torch.device = "cpu"):
        """Context manager: the parameters hold their EMA weights inside (16-bit parameters its
        rounding; their fp32 masters the EMA itself), their own weights again on exit, also
        when the body raises or the swap fails half-way. The EMA state is not modified.

        ``stash_device``: where the training weights wait meanwhile (host memory by default,
        as :meth:`store` does; the parameters' own device is faster and costs device memory).
        It is checked before anything is swapped (``"meta"`` cannot hold them).

        Parameters of a group without an EMA (``ema_decay=None``) keep their weights; when no
        group has an EMA, entering raises RuntimeError.

        Example::

            with optimizer.swap_ema():
                evaluate(model)
        """
        with ema_swapped(self.param_groups, self.state, stash_device):
            yield self

    def ema_state_dict(self, model: torch.nn.Module | None = None,
                       buffers: str = "copy") -> dict[str, Tensor]:
        """The model's state dict with the EMA in place of each parameter that has one.

        With ``model`` the keys are ``model.state_dict()``'s (buffers included, parameters
        without EMA state keep their own value), so ``model.load_state_dict(...)`` loads the EMA
        weights. ``buffers``: ``"copy"`` (default) exports copies of the model's buffers as they
        are now (BatchNorm's running statistics: training on does not change the exported
        dict, as ema-pytorch copies them); ``"live"`` the buffers themselves, as
        ``Module.state_dict()``. Without it, the optimizer must have been built from ``named_parameters()``
        and the dict holds parameters only; tied weights keep all their names only when the
        optimizer was built from ``named_parameters(remove_duplicate=False)``. Values are
        detached references, like ``Module.state_dict()``: save or clone them before training
        on (a tied weight is one tensor under all its names). An fp32 EMA of a 16-bit parameter
        is returned in the parameter's dtype (rounded to nearest even: a new tensor). DTensor
        parameters give sharded DTensor values (see
        ``ascend_ema_adam.distributed.gather_full_ema_state_dict``). Parameters of a group
        without an EMA (``ema_decay=None``) keep their own value; when no group has an EMA,
        RuntimeError.
        """
        return ema_state_dict_of(self.param_groups, self.state, model, buffers)

    # -- checkpoints (torch's layout; _checkpoint has the conversions)

    def state_dict(self) -> dict[str, Any]:
        """torch's layout: per-parameter ``step`` in ``state`` (``step_scope="param"``), so the
        dict loads into ``torch.optim.AdamW``/``Adam``; the groups carry the warm-up counter, the
        EMA decay, ``decoupled_weight_decay`` (this optimizer's ``adam_w_mode``) and how far the
        steps run ahead of the warm-up counter (a load warns when another optimizer stepped the
        checkpoint since: its EMA is stale)."""
        for group in self.param_groups:
            group["decoupled_weight_decay"] = bool(self.adam_w_mode)
        self._steps.hand_out()  # its step tensors now have another holder
        out = super().state_dict()
        lead = step_lead(self.state, self.param_groups) if self.use_num_updates else 0
        for group in out["param_groups"]:  # (the saved groups only: torch's loaders keep it)
            group[STEP_LEAD] = lead
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a checkpoint of this optimizer (either step scope), of MindSpeed's, or of
        ``torch.optim.AdamW``/``Adam``.

        The checkpoint gives the state, the counters (steps, ``num_updates``) and the groups'
        hyper-parameters; this optimizer's construction gives its settings (``adam_w_mode``,
        ``use_num_updates``, ``step_scope``, ``foreach``). Per-parameter steps are kept per
        parameter (``step_scope="param"``) or merged into the group's (``"group"``: the largest,
        with a warning when they differ); a missing ``ema_params`` starts as a clone of the
        parameter; missing group keys take their defaults. A checkpoint of the other weight
        decay mode (torch ``Adam``: ``decoupled_weight_decay=False``) warns. State tensors take
        the parameter's device and this optimizer's layout (``state_dtype``, ``master_weights``
        are settings): either layout converts, from the checkpoint's own values (torch's loader
        alone would round fp32 state to a 16-bit parameter's dtype first); a missing master is
        made from the parameter, an unwanted one dropped.

        Whether a group has an EMA is a setting too (its ``ema_decay`` is None or not; the
        checkpoint gives the decay's value only): a group without an EMA drops the
        checkpoint's ``ema_params`` (with a UserWarning), and a group with one loading a
        checkpoint without (``ema_decay=None``, or torch's) keeps its decay and starts the EMA
        from the weights."""
        state_dict = with_ema_settings(self.param_groups, state_dict)
        warn_on_weight_decay_mode(self.adam_w_mode, state_dict["param_groups"])
        check_loaded_8bit(state_dict, [p for g in self.param_groups for p in g["params"]])
        settings = [{key: g[key] for key in _SETTINGS} for g in self.param_groups]
        saved_ids, originals = saved_state_tensors(state_dict)
        stale = stale_ema_warning(state_dict, self.use_num_updates)
        self._load_warnings = []  # (__setstate__ collects them; warned here, to the caller)
        super().load_state_dict(without_8bit_state(state_dict))
        for group, kept in zip(self.param_groups, settings):
            group.update(kept)
            group.pop(STEP_LEAD, None)  # (the checkpoint's, read above; state_dict() writes it)
        params = [(p, g) for g in self.param_groups for p in g["params"]]
        with torch.no_grad():
            for group in self.param_groups:  # (before the conversions, which use the maps)
                place_maps(group, self.state, drop=False)
            for saved_id, (p, group) in zip(saved_ids, params):
                convert_loaded_state(self.state, p, group, originals.get(saved_id, {}))
            for group in self.param_groups:
                place_maps(group, self.state, drop=True)
        if stale is not None:
            self._load_warnings.append(stale)
        for message in self._load_warnings:
            warnings.warn(message, stacklevel=2)
        del self._load_warnings

    def __getstate__(self) -> dict[str, Any]:
        """torch pickles only defaults, state and groups; the constructor's switches too."""
        state = super().__getstate__()
        state.update(adam_w_mode=self.adam_w_mode, set_grad_none=self.set_grad_none,
                     use_num_updates=self.use_num_updates, step_scope=self.step_scope)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling, and torch's ``load_state_dict`` (which ends here with the loaded state
        and groups): missing keys take their defaults, the steps take this optimizer's layout,
        the warm-up counter follows ``use_num_updates``."""
        super().__setstate__(state)
        for key, value in (("use_num_updates", True), ("adam_w_mode", 1),
                           ("set_grad_none", True),
                           ("step_scope", "group"),  # pickled before per-parameter steps
                           ("clip_process_group", None)):  # (a process group never pickles)
            self.__dict__.setdefault(key, value)
        self._reset_parts()
        fill_defaults(self.defaults, self.param_groups, self.use_num_updates, self.adam_w_mode)
        # load_state_dict warns its caller; unpickling has nobody to warn
        warnings_out = self.__dict__.get("_load_warnings", [])
        for i, group in enumerate(self.param_groups):
            normalize_loaded_group(i, group, self.state, self.step_scope, self._steps,
                                   warnings_out)
        n = self.num_updates
        self.num_updates = -1 if not self.use_num_updates else max(n, 0)
