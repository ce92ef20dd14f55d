"""Step bookkeeping: the optimizer-wide warm-up counter (``num_updates``), the steps per group
(MindSpeed) or per parameter (torch), and the int64 device steps the launches read. No step is
read back from the device: the host keeps the values it wrote (and caches the device steps it
made), and under a GradScaler the counters advance on the device by ``found_inf == 0``."""

from __future__ import annotations

import contextlib
import math
from itertools import repeat
from operator import is_
from typing import Any

import torch
from torch import Tensor

from ._buckets import _Bucket, _GroupCache, _Item
from ._common import _dtensor_type, _has_ema, _local, _same_objects
from ._scaler import _Scaler


def _step_number(value, where: str) -> int:
    """The value of a step (a number or a one-element tensor; a device tensor is read once):
    a whole number >= 0, the updates taken so far."""
    if isinstance(value, Tensor) and value.numel() != 1:
        raise ValueError(f"{where} holds {value.numel()} numbers, expected one")
    number = float(value)
    if not (math.isfinite(number) and number >= 0 and number == int(number)):
        raise ValueError(f"{where} is {number:g}; a step is a whole number >= 0 (the updates "
                         f"taken so far: the next update uses step + 1)")
    return int(number)


def _scalar_dtype() -> torch.dtype:
    """The dtype torch stores per-parameter steps in (``torch.optim.optimizer``'s rule)."""
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


def _host_step(number: float) -> Tensor:
    """A per-parameter step as torch stores it (not capturable, not fused): 0-d CPU float."""
    return torch.scalar_tensor(float(number), dtype=_scalar_dtype())


def _host_steps(numbers: list[int]) -> tuple[Tensor, ...]:
    """Many per-parameter steps at once (0-d CPU float views of one new tensor: one torch call
    for a whole group instead of one per parameter)."""
    return torch.tensor(numbers, dtype=_scalar_dtype()).unbind(0)


def _op_step(step: Tensor, device: torch.device) -> Tensor:
    """The op's int64 [1] step of an update from a (float) step tensor before it."""
    return (step.to(device=device, dtype=torch.int64) + 1).reshape(1)



class _PartialBlock:
    """What one :meth:`_StepsMixin.partial_steps` block has counted so far: the warm-up count
    of its first ``step()`` (None before), each group's step of this update and whether its
    ``ema_every`` clock ticked (by group; the group itself is kept, so its id stays unique), and
    the parameters already updated (by id, with the tensor)."""

    __slots__ = ("n", "group_steps", "ticked", "updated")

    def __init__(self):
        self.n = None
        self.group_steps: dict[int, tuple[dict, Tensor]] = {}
        self.ticked: dict[int, dict] = {}
        self.updated: dict[int, Tensor] = {}

    def first_tick(self, group: dict) -> bool:
        if self.ticked.get(id(group)) is group:
            return False
        self.ticked[id(group)] = group
        return True


class _StepsMixin:
    """The counters of :class:`FusedEmaAdamW`, and the steps of a cached group. Its caches
    (``_known_group_steps``, ``_device_steps``, ``_shared_steps``, ``_group_caches``) are made
    by ``_reset_caches``; ``_partial`` is the open :meth:`partial_steps` block (None: each
    ``step()`` is a whole step)."""

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
        if self._partial is not None:
            yield self
            return
        self._partial = _PartialBlock()
        try:
            yield self
        finally:
            self._partial = None

    def _check_partial(self, plan) -> None:
        """Inside :meth:`partial_steps`: refuse (before anything changes) fused clipping (a
        ``clip_grad_norm_`` request is dropped with it) and a parameter this block updated
        already; then remember this call's parameters."""
        block = self._partial
        if self._clip_request is not None or any(
                group.get("max_grad_norm") is not None for _, group, *_ in plan):
            self._clip_request = None
            raise RuntimeError(
                "fused gradient clipping inside partial_steps(): each step() of the block holds "
                "a part of the parameters, and one norm needs them all (DeepSpeed clips by "
                "itself: set 'gradient_clipping' in its config); this step() changed nothing")
        updating = []
        for i, _, items, cache, _ in plan:
            pairs = (enumerate(cache.params) if cache is not None
                     else ((item.index, item.param) for item in items))
            for j, p in pairs:
                if block.updated.get(id(p)) is p:
                    raise RuntimeError(
                        f"param_groups[{i}]['params'][{j}] (shape {list(p.shape)}) was updated "
                        f"already in this partial_steps() block, which is one optimizer step: "
                        f"each parameter is updated once in it; this step() changed nothing")
                updating.append(p)
        for p in updating:
            block.updated[id(p)] = p

    def _advance_num_updates(self, scaler: "_Scaler"):
        """The optimizer-wide warm-up counter (MindSpeed's), once per step, and each group's
        ema_every clock (``ema_calls``: step() calls, counted on the host). The constructor's
        ``use_num_updates`` decides whether it counts, whatever a loaded group says. Under a
        GradScaler or torch.compile the counter is an int64 tensor advanced on the device
        (``+ (found_inf == 0)``: a skipped step does not count). Returns the new count.
        Inside :meth:`partial_steps` only the block's first call counts; the others take its
        count (ZeRO-1/2's narrowed groups join it)."""
        compiling = torch.compiler.is_compiling()
        block = self._partial
        if not compiling:
            for group in self.param_groups:
                if (group["ema_every"] > 1 and _has_ema(group)  # (inert without an EMA)
                        and (block is None or block.first_tick(group))):
                    group["ema_calls"] = group.get("ema_calls", 0) + 1
        if block is not None and block.n is not None:
            n = block.n
        elif not self.use_num_updates:
            n = -1
        else:
            n = self.param_groups[0].get("num_updates", 0) if self.param_groups else 0
            if not isinstance(n, Tensor) and scaler.found_inf is None and not compiling:
                n = max(n, 0) + 1
            else:
                if not isinstance(n, Tensor):
                    n = torch.full((), max(n, 0), dtype=torch.int64,
                                   device=self._counter_device(scaler))
                n = n + 1 if scaler.found_inf is None else n + scaler.not_inf(n.device,
                                                                              torch.int64)
        if block is not None:
            block.n = n
        for group in self.param_groups:
            group["num_updates"] = n
        return n

    def _counter_device(self, scaler: "_Scaler") -> torch.device:
        if scaler.found_inf is not None:
            return scaler.found_inf.device
        for group in self.param_groups:
            for p in group["params"]:
                return _local(p).device
        return torch.device("cpu")

    # -- steps: per group (MindSpeed) or per parameter (torch)

    def _group_step_before(self, i: int, group: dict[str, Any]):
        """The group's step before this update, checked, without reading the device: the value
        this optimizer wrote last, else read once (a checkpoint, an assignment, a ZeRO sync).
        None: this optimizer's own step tensor, advanced on the device by a GradScaler."""
        step = group.get("step")
        if step is None:  # fresh, or per-parameter steps from a checkpoint (ZeRO loads)
            steps = [_step_number(self.state[p]["step"], f"param_groups[{i}]['params'][{j}]: "
                                  f"state 'step'")
                     for j, p in enumerate(group["params"])
                     if p in self.state and "step" in self.state[p]]
            return max(steps, default=0)
        known = self._known_group_steps.get(i)
        if known is not None and known[0] is step:
            return known[1]
        value = _step_number(step, f"param_groups[{i}]: step")
        self._known_group_steps[i] = (step, value)
        return value

    def _advance_group_step(self, i: int, group: dict[str, Any], items: list[_Item], dtensor,
                            scaler) -> list[_Bucket]:
        """The group's next step (_next_group_step) and one bucket per (device, dtype).
        Every group counts, with or without gradients (MindSpeed), empty ones too, so
        ZeroRedundancyOptimizer's per-rank partitions of a group keep equal counters."""
        step = self._next_group_step(i, group, scaler)
        buckets: dict[tuple, _Bucket] = {}
        for item in items:
            key = (item.param.device, item.param.dtype, item.grad.dtype)
            if key not in buckets:
                buckets[key] = _Bucket(step)
            buckets[key].add(item, dtensor)
        return list(buckets.values())

    def _next_group_step(self, i: int, group: dict[str, Any], scaler) -> Tensor:
        """Increment (or create) the group's int64 step on the group's device; returns the
        step of this update (under a GradScaler the group keeps ``step + (found_inf == 0)``).

        Out of place: a step tensor shared with a state dict (ZeroRedundancyOptimizer's load
        shares the caller's tensors) or saved earlier never changes behind the caller's back.
        Inside :meth:`partial_steps` a group counts once: the block's later calls get the step
        of its first."""
        device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
        block = self._partial
        if block is not None:
            seen = block.group_steps.get(id(group))
            if seen is not None and seen[0] is group:
                return seen[1] if seen[1].device == device else seen[1].to(device)
        step = group.get("step")
        before = None if torch.compiler.is_compiling() else self._group_step_before(i, group)
        if step is None:
            step = torch.tensor([before or 0], dtype=torch.int64, device=device)
            for p in group["params"]:  # per-parameter steps of a loaded checkpoint, now merged
                if p in self.state:
                    self.state[p].pop("step", None)
        this = step.to(device) + 1
        if scaler.found_inf is None:
            group["step"] = this
            after = None if before is None else before + 1
        else:
            group["step"] = step.to(device) + scaler.not_inf(device, torch.int64)
            after = None
        if not torch.compiler.is_compiling():
            self._known_group_steps[i] = (group["step"], after)
        if block is not None:
            block.group_steps[id(group)] = (group, this)
        return this

    def _param_step_before(self, i: int, group: dict[str, Any], state: dict, where: str):
        """A parameter's step before this update, on the host: its own, else (a group-step
        checkpoint synced in by ZeroRedundancyOptimizer) its group's, else 0 (first update).
        A step tensor this optimizer shares between parameters (GradScaler) is returned as it
        is: its value lives on the device."""
        if "step" in state:
            if self._is_device_step(state["step"]):
                return state["step"]
            return _step_number(state["step"], where + "state 'step'")
        if "step" in group and "exp_avg" in state:
            return _step_number(group["step"], f"param_groups[{i}]: step")
        return 0

    def _is_device_step(self, step: Tensor) -> bool:
        return self._shared_steps.get(id(step)) is step

    def _next_shared_step(self, step, scaler) -> Tensor:
        """The step tensor of parameters that share one device-side step (made by a
        GradScaler step), after this update: one tensor for all of them."""
        if isinstance(step, Tensor):
            new = step + (1 if scaler.found_inf is None else scaler.not_inf(step.device,
                                                                              step.dtype))
        else:  # a host value: the new tensor lives on the scaler's device (no device read)
            device = scaler.found_inf.device if scaler.found_inf is not None else torch.device(
                "cpu")
            new = torch.full((), float(step), dtype=_scalar_dtype(), device=device)
            new = new + (1 if scaler.found_inf is None else scaler.not_inf(device, new.dtype))
        self._shared_steps[id(new)] = new
        return new

    def _advance_param_steps(self, i: int, group: dict[str, Any], items: list[_Item],
                             device_steps: dict, dtensor, scaler) -> list[_Bucket]:
        """Each parameter's own step, incremented out of place and kept on the host (as torch
        does without ``capturable``); one bucket per (device, dtype, step value), normally one
        per device and dtype. The op's int64 [1] device step of each value is made once per
        update, from the previous update's (one device op) when it can be: nothing is read
        back from the device. Under a GradScaler the parameters of one bucket share one step
        tensor, ``step + (found_inf == 0)``, whose value the host does not know."""
        if "step" in group:  # a group-step checkpoint synced in by ZeroRedundancyOptimizer
            self._split_group_step(i, group)
        if torch.compiler.is_compiling():  # step values are unknown while tracing
            buckets = []
            for item in items:
                old = item.state.get("step")
                new = (old if old is not None else torch.zeros((), dtype=_scalar_dtype())) + 1
                device = _local(item.param).device
                buckets.append(_Bucket(new.to(torch.int64).reshape(1).to(device)))
                if scaler.found_inf is not None:  # on the scaler's device: no device read
                    device = scaler.found_inf.device
                    new = new.to(device) - 1 + scaler.not_inf(device, new.dtype)
                item.state["step"] = new
                buckets[-1].add(item, dtensor)
            return buckets
        buckets: dict[tuple, _Bucket] = {}
        shared: dict[tuple, Tensor] = {}
        host_known = scaler.found_inf is None and not any(
            isinstance(item.step, Tensor) for item in items)
        new_steps = _host_steps([item.step + 1 for item in items]) if host_known else None
        for k, item in enumerate(items):
            device = item.param.device if dtensor is None else _local(item.param).device
            before = item.step
            if isinstance(before, Tensor):
                key = (device, item.param.dtype, item.grad.dtype, id(before))
                if key not in buckets:
                    buckets[key] = _Bucket(_op_step(before, device))
            else:
                key = (device, item.param.dtype, item.grad.dtype, before + 1)
                if key not in buckets:
                    buckets[key] = _Bucket(self._device_step(device, before + 1, device_steps))
            buckets[key].add(item, dtensor)
            if host_known:
                item.state["step"] = new_steps[k]
            else:
                if key not in shared:
                    shared[key] = self._next_shared_step(before, scaler)
                item.state["step"] = shared[key]
        return list(buckets.values())

    def _device_step(self, device: torch.device, value: int, device_steps: dict) -> Tensor:
        step = device_steps.get((device, value))
        if step is None:
            previous = self._device_steps.get((device, value - 1))
            if previous is not None:
                step = previous + 1
            else:
                step = torch.tensor([value], dtype=torch.int64, device=device)
            device_steps[(device, value)] = step
        return step

    def _split_group_step(self, i: int, group: dict[str, Any]) -> None:
        """Per-parameter steps from a group step (a MindSpeed-layout checkpoint): every
        parameter with state takes the group's value."""
        value = _step_number(group.pop("step"), f"param_groups[{i}]: step")
        for p in group["params"]:
            state = self.state.get(p)
            if state and "exp_avg" in state and "step" not in state:
                state["step"] = _host_step(value)

    # -- the steps of a group whose last full check still holds (its _GroupCache)

    def _remember(self, i: int, group: dict[str, Any], items: list[_Item]) -> None:
        """Cache group ``i`` after a full check and update (its parameters with a gradient: a
        step where the same ones have one stays cached)."""
        dtensor = _dtensor_type()
        if (not items
                or (dtensor is not None
                    and any(isinstance(item.param, dtensor) for item in items))):
            self._group_caches.pop(i, None)
            return
        cache = _GroupCache(self.state, items, group)
        if self.step_scope == "param" and not self._cache_steps(cache, items):
            self._group_caches.pop(i, None)
            return
        self._group_caches[i] = cache

    def _cache_steps(self, cache: _GroupCache, items: list[_Item]) -> bool:
        """The per-parameter steps an update just wrote (``items``, with their steps before it),
        as the cache follows them; False if it cannot (steps that are neither one shared
        GradScaler step nor views of one host tensor)."""
        steps = [item.state["step"] for item in items]
        if _same_objects(steps, [steps[0]] * len(steps)) and self._is_device_step(steps[0]):
            cache.step_values = [steps[0]] * len(steps)  # one shared GradScaler step
            cache.step_base, cache.step_version = None, -1
        else:
            base = steps[0]._base
            if base is None or not all(t._base is base for t in steps):
                return False  # not the views _host_steps made
            if any(isinstance(item.step, Tensor) for item in items):
                return False  # values only the device knows, of several step tensors
            cache.step_base, cache.step_version = base, base._version
            cache.step_values = [item.step + 1 for item in items]
        cache.step_tensors = steps
        cache.steps_handed_out = False
        return True

    def _advance_cached(self, i: int, group: dict[str, Any], cache: _GroupCache,
                        grads: list[Tensor], device_steps: dict, scaler) -> list[_Bucket]:
        """The steps and buckets of a cached group: what _advance_group_step and
        _advance_param_steps do, from the cached lists."""
        if self.step_scope == "group":
            step = self._next_group_step(i, group, scaler)
            return cache.buckets_for(grads, lambda device: step)
        values = cache.step_values
        first = values[0]
        if scaler.found_inf is None and not isinstance(first, Tensor):
            # host steps, in one tensor (_host_steps' views): one launch per step value
            uniform = values.count(first) == len(values)
            values = [first + 1] * len(values) if uniform else [v + 1 for v in values]
            buckets = cache.buckets_for(
                grads, lambda device, value=values[0]: self._device_step(device, value,
                                                                         device_steps),
                None if uniform else values)
            if cache.steps_handed_out:  # out of place: a saved state dict keeps its values
                cache.step_tensors = list(_host_steps(values))
                cache.step_base = cache.step_tensors[0]._base
                for state, step in zip(cache.states, cache.step_tensors):
                    state["step"] = step
            else:  # nobody else holds this optimizer's step tensors: one in-place add
                cache.step_base.add_(1)
            cache.step_version = cache.step_base._version
            cache.steps_handed_out = False
            cache.step_values = values
            return buckets
        if isinstance(first, Tensor) and all(map(is_, values, repeat(first))):
            # one shared device-side step (GradScaler): one launch per device and dtype
            new = self._next_shared_step(first, scaler)
            buckets = cache.buckets_for(grads, lambda device: _op_step(first, device))
            for state in cache.states:
                state["step"] = new
            cache.step_tensors = [new] * len(values)
            cache.step_values = [new] * len(values)
            return buckets
        # a GradScaler's first step (or its steps on parameters at different steps): the
        # general path, then the cache takes the steps it wrote
        items = [_Item(p, g, st, v) for p, g, st, v in
                 zip(cache.params, grads, cache.states, values)]
        buckets = self._advance_param_steps(i, group, items, device_steps, None, scaler)
        if not self._cache_steps(cache, items):
            self._group_caches.pop(i, None)  # the next step checks fully and caches again
        return buckets
