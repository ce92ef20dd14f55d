"""The step counters of :class:`FusedEmaAdamW` (:class:`StepCounters`): the optimizer-wide
warm-up counter (``num_updates``), the steps per group (MindSpeed) or per parameter (torch), and
the int64 device steps the launches read (the ``steps`` of ``ema_adamw``). No step is read back
from the device: the host keeps the values it wrote (and the device steps it made), and under a
GradScaler the counters advance on the device by ``found_inf == 0``. The counters themselves live
where torch and MindSpeed keep them (``state[p]["step"]``, ``param_groups[i]["step"]`` and
``["num_updates"]``); this part keeps what it knows of them."""

from __future__ import annotations

import contextlib
import math
import warnings
import weakref
from itertools import repeat
from operator import is_
from typing import Any

import torch
from torch import Tensor

from ._common import _has_ema, _local, _same_objects, counter_device
from ._gather import Item
from ._scaler import _Scaler
from ._state8bit import has_moments


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


def warn_zero3_parts(plan) -> None:
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
            stacklevel=6)  # this, update, no_grad, step, torch's step hooks: the caller


class _PartialBlock:
    """What one ``partial_steps()`` block has counted so far: the warm-up count of its first
    ``step()`` (None before), each group's step of this update and whether its ``ema_every``
    clock ticked (by group; the group itself is kept, so its id stays unique), and the
    parameters already updated (by id, with the tensor)."""

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


class _Followed:
    """The per-parameter steps a cached group's last update wrote (``tensors``) and their values
    (host ints, or the one shared step tensor of a GradScaler step); the tensor the step tensors
    are 0-d views of (None: they are one shared tensor), its version after this optimizer's last
    write (a write by anyone else changes it: the views share the base's counter), and whether
    ``state_dict()`` has handed them out."""

    __slots__ = ("tensors", "values", "base", "version", "handed_out")

    def __init__(self, tensors: list[Tensor], values: list, base: Tensor | None):
        self.tensors, self.values, self.base = tensors, values, base
        self.version = -1 if base is None else base._version
        self.handed_out = False


class StepCounters:
    """What the optimizer knows of its counters without reading the device: the group steps it
    wrote (group index -> (tensor, value)), the int64 device steps of this and the last update
    ((device, value) -> tensor), the shared device-side steps of GradScaler steps, the
    per-parameter steps of cached groups (:meth:`follow`), and the open ``partial_steps()``
    block (``partial``; None: each ``step()`` is a whole step)."""

    __slots__ = ("partial", "_known_group_steps", "_device_steps", "_last_device_steps",
                 "_shared_steps", "_followed")

    def __init__(self):
        self.partial: _PartialBlock | None = None
        self.reset()

    def reset(self) -> None:
        """Forget what is known (a loaded checkpoint); an open partial_steps() block stays."""
        self._known_group_steps: dict[int, tuple[Tensor, int]] = {}
        self._device_steps: dict[tuple[torch.device, int], Tensor] = {}
        self._last_device_steps: dict[tuple[torch.device, int], Tensor] = {}
        # id -> the step tensor shared by the parameters of one launch (its value lives on the
        # device, the host never reads it)
        self._shared_steps: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._followed: dict[int, _Followed] = {}

    def finish_step(self) -> None:
        """After an eager step: its device steps become the ones the next step adds 1 to."""
        self._last_device_steps, self._device_steps = self._device_steps, {}

    # -- partial_steps(): one optimizer step in parts (DeepSpeed)

    @contextlib.contextmanager
    def partial_block(self):
        """The block of ``FusedEmaAdamW.partial_steps()``; re-entrant (an inner block belongs
        to the outer one)."""
        if self.partial is not None:
            yield
            return
        self.partial = _PartialBlock()
        try:
            yield
        finally:
            self.partial = None

    def check_partial(self, plan, clipping: bool) -> None:
        """Inside a block: refuse (before anything changes) fused clipping and a parameter this
        block updated already; then remember this call's parameters."""
        block = self.partial
        if clipping:
            raise RuntimeError(
                "fused gradient clipping inside partial_steps(): each step() of the block holds "
                "a part of the parameters, and one norm needs them all (DeepSpeed clips by "
                "itself: set 'gradient_clipping' in its config); this step() changed nothing")
        updating = []
        for i, _, items, cached, _ in plan:
            pairs = (zip(cached.indexes, cached.params) if cached is not None
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

    # -- the warm-up counter

    def advance_num_updates(self, groups: list[dict], scaler: _Scaler, counting: bool):
        """The optimizer-wide warm-up counter (MindSpeed's), once per step, and each group's
        ema_every clock (``ema_calls``: step() calls, counted on the host). ``counting``: the
        constructor's ``use_num_updates``, whatever a loaded group says. Under a GradScaler or
        torch.compile the counter is an int64 tensor advanced on the device (``+ (found_inf ==
        0)``: a skipped step does not count). Returns the new count. Inside a partial_steps()
        block only its first call counts; the others take its count (ZeRO-1/2's narrowed groups
        join it)."""
        compiling = torch.compiler.is_compiling()
        block = self.partial
        if not compiling:
            for group in groups:
                if (group["ema_every"] > 1 and _has_ema(group)  # (inert without an EMA)
                        and (block is None or block.first_tick(group))):
                    group["ema_calls"] = group.get("ema_calls", 0) + 1
        if block is not None and block.n is not None:
            n = block.n
        elif not counting:
            n = -1
        else:
            n = groups[0].get("num_updates", 0) if groups else 0
            if not isinstance(n, Tensor) and scaler.found_inf is None and not compiling:
                n = max(n, 0) + 1
            else:
                if not isinstance(n, Tensor):
                    n = torch.full((), max(n, 0), dtype=torch.int64,
                                   device=counter_device(groups, scaler.found_inf))
                n = n + 1 if scaler.found_inf is None else n + scaler.not_inf(n.device,
                                                                              torch.int64)
        if block is not None:
            block.n = n
        for group in groups:
            group["num_updates"] = n
        return n

    # -- steps per group (MindSpeed)

    def group_step_before(self, i: int, group: dict[str, Any], state_map):
        """The group's step before this update, checked, without reading the device: the value
        this optimizer wrote last, else read once (a checkpoint, an assignment, a ZeRO sync).
        None: this optimizer's own step tensor, advanced on the device by a GradScaler."""
        step = group.get("step")
        if step is None:  # fresh, or per-parameter steps from a checkpoint (ZeRO loads)
            steps = [_step_number(state_map[p]["step"], f"param_groups[{i}]['params'][{j}]: "
                                  f"state 'step'")
                     for j, p in enumerate(group["params"])
                     if p in state_map and "step" in state_map[p]]
            return max(steps, default=0)
        known = self._known_group_steps.get(i)
        if known is not None and known[0] is step:
            return known[1]
        value = _step_number(step, f"param_groups[{i}]: step")
        self._known_group_steps[i] = (step, value)
        return value

    def know_group_step(self, i: int, step: Tensor, value: int) -> None:
        """Group ``i``'s step tensor now holds ``value`` (a loaded checkpoint's)."""
        self._known_group_steps[i] = (step, value)

    def next_group_step(self, i: int, group: dict[str, Any], state_map, scaler) -> Tensor:
        """Increment (or create) the group's int64 step on the group's device; returns the
        step of this update (under a GradScaler the group keeps ``step + (found_inf == 0)``).
        Every group counts, with or without gradients (MindSpeed), empty ones too, so
        ZeroRedundancyOptimizer's per-rank partitions of a group keep equal counters.

        Out of place: a step tensor shared with a state dict (ZeroRedundancyOptimizer's load
        shares the caller's tensors) or saved earlier never changes behind the caller's back.
        Inside a partial_steps() block a group counts once: the block's later calls get the
        step of its first."""
        device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
        block = self.partial
        if block is not None:
            seen = block.group_steps.get(id(group))
            if seen is not None and seen[0] is group:
                return seen[1] if seen[1].device == device else seen[1].to(device)
        step = group.get("step")
        compiling = torch.compiler.is_compiling()
        before = None if compiling else self.group_step_before(i, group, state_map)
        if step is None:
            step = torch.tensor([before or 0], dtype=torch.int64, device=device)
            for p in group["params"]:  # per-parameter steps of a loaded checkpoint, now merged
                if p in state_map:
                    state_map[p].pop("step", None)
        this = step.to(device) + 1
        if scaler.found_inf is None:
            group["step"] = this
            after = None if before is None else before + 1
        else:
            group["step"] = step.to(device) + scaler.not_inf(device, torch.int64)
            after = None
        if not compiling:
            self._known_group_steps[i] = (group["step"], after)
        if block is not None:
            block.group_steps[id(group)] = (group, this)
        return this

    def split_group_step(self, i: int, group: dict[str, Any], state_map) -> None:
        """Per-parameter steps from a group step (a MindSpeed-layout checkpoint): every
        parameter with state takes the group's value."""
        value = _step_number(group.pop("step"), f"param_groups[{i}]: step")
        for p in group["params"]:
            state = state_map.get(p)
            if has_moments(state) and "step" not in state:
                state["step"] = _host_step(value)

    # -- steps per parameter (torch)

    def param_step_before(self, i: int, group: dict[str, Any], state: dict, where: str):
        """A parameter's step before this update, on the host: its own, else (a group-step
        checkpoint synced in by ZeroRedundancyOptimizer) its group's, else 0 (first update).
        A step tensor this optimizer shares between parameters (GradScaler) is returned as it
        is: its value lives on the device."""
        if "step" in state:
            if self._is_device_step(state["step"]):
                return state["step"]
            return _step_number(state["step"], where + "state 'step'")
        if "step" in group and has_moments(state):
            return _step_number(group["step"], f"param_groups[{i}]: step")
        return 0

    def _is_device_step(self, step: Tensor) -> bool:
        return self._shared_steps.get(id(step)) is step

    def _next_shared_step(self, step, scaler: _Scaler) -> Tensor:
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

    def _device_step(self, device: torch.device, value: int) -> Tensor:
        """The op's int64 [1] step ``value`` on ``device``: made once per update, from the last
        update's (one device op) when it can be."""
        step = self._device_steps.get((device, value))
        if step is None:
            previous = self._last_device_steps.get((device, value - 1))
            if previous is not None:
                step = previous + 1
            else:
                step = torch.tensor([value], dtype=torch.int64, device=device)
            self._device_steps[(device, value)] = step
        return step

    def advance_param_steps(self, i: int, group: dict[str, Any], items: list[Item], state_map,
                            dtensor, scaler: _Scaler):
        """Each parameter's own step, incremented out of place and kept on the host (as torch
        does without ``capturable``); returns the steps of this update, one tensor for all
        (normally) or one per parameter. The op's int64 [1] device step of each value is made
        once per update, from the previous update's when it can be: nothing is read back from
        the device. Under a GradScaler the parameters of one launch share one step tensor,
        ``step + (found_inf == 0)``, whose value the host does not know."""
        if "step" in group:  # a group-step checkpoint synced in by ZeroRedundancyOptimizer
            self.split_group_step(i, group, state_map)
        steps: list[Tensor] = []
        if torch.compiler.is_compiling():  # step values are unknown while tracing
            for item in items:
                old = item.state.get("step")
                new = (old if old is not None else torch.zeros((), dtype=_scalar_dtype())) + 1
                steps.append(new.to(torch.int64).reshape(1).to(_local(item.param).device))
                if scaler.found_inf is not None:  # on the scaler's device: no device read
                    device = scaler.found_inf.device
                    new = new.to(device) - 1 + scaler.not_inf(device, new.dtype)
                item.state["step"] = new
            return steps
        host_known = scaler.found_inf is None and not any(
            isinstance(item.step, Tensor) for item in items)
        new_steps = _host_steps([item.step + 1 for item in items]) if host_known else None
        op_steps: dict[tuple, Tensor] = {}
        shared: dict[tuple, Tensor] = {}
        for k, item in enumerate(items):
            device = item.param.device if dtensor is None else _local(item.param).device
            before = item.step
            if isinstance(before, Tensor):
                step = op_steps.get((device, id(before)))
                if step is None:
                    step = op_steps[(device, id(before))] = _op_step(before, device)
            else:
                step = self._device_step(device, before + 1)
            steps.append(step)
            if host_known:
                item.state["step"] = new_steps[k]
            else:  # one new step tensor per launch
                key = (device, item.param.dtype, item.grad.dtype,
                       id(before) if isinstance(before, Tensor) else before)
                if key not in shared:
                    shared[key] = self._next_shared_step(before, scaler)
                item.state["step"] = shared[key]
        return steps[0] if steps and all(map(is_, steps, repeat(steps[0]))) else steps

    # -- the per-parameter steps of a cached group

    def follow(self, i: int, items: list[Item]) -> bool:
        """Follow the per-parameter steps an update of group ``i`` just wrote (``items``, with
        their steps before it) from now on; False if they cannot be followed (steps that are
        neither one shared GradScaler step nor views of one host tensor)."""
        self._followed.pop(i, None)
        steps = [item.state["step"] for item in items]
        if _same_objects(steps, [steps[0]] * len(steps)) and self._is_device_step(steps[0]):
            self._followed[i] = _Followed(steps, [steps[0]] * len(steps), None)
            return True  # one shared GradScaler step
        base = steps[0]._base
        if base is None or not all(t._base is base for t in steps):
            return False  # not the views _host_steps made
        if any(isinstance(item.step, Tensor) for item in items):
            return False  # values only the device knows, of several step tensors
        self._followed[i] = _Followed(steps, [item.step + 1 for item in items], base)
        return True

    def held_steps(self, i: int) -> list[Tensor] | None:
        """The step tensors this optimizer wrote into cached group ``i``'s state dicts, for the
        cache to check that they still hold them; None if they no longer hold (not followed, or
        written by someone else: their shared version counter)."""
        followed = self._followed.get(i)
        if followed is None or (followed.base is not None
                                and followed.base._version != followed.version):
            return None
        return followed.tensors

    def hand_out(self) -> None:
        """``state_dict()`` hands the step tensors out: the next update makes new ones."""
        for followed in self._followed.values():
            followed.handed_out = True

    def advance_cached(self, i: int, group: dict[str, Any], state_map, cached, grads,
                       scaler: _Scaler) -> tuple[Any, bool]:
        """The per-parameter steps of this update of cached group ``i`` (``cached``: its params,
        states and their devices), as :meth:`advance_param_steps` makes them, from what is
        followed (:meth:`held_steps` said they hold); and whether the group stays cached."""
        followed = self._followed[i]
        values, states = followed.values, cached.states
        first = values[0]
        if scaler.found_inf is None and not isinstance(first, Tensor):
            # host steps, in one tensor (_host_steps' views): one launch per step value
            uniform = values.count(first) == len(values)
            values = [first + 1] * len(values) if uniform else [v + 1 for v in values]
            if uniform and len(cached.first_on_device) == 1:
                steps = self._device_step(cached.first_on_device[0][0], values[0])
            else:
                steps = list(map(self._device_step, cached.devices, values))
            if followed.handed_out:  # out of place: a saved state dict keeps its values
                followed.tensors = list(_host_steps(values))
                followed.base = followed.tensors[0]._base
                for state, step in zip(states, followed.tensors):
                    state["step"] = step
            else:  # nobody else holds this optimizer's step tensors: one in-place add
                followed.base.add_(1)
            followed.version = followed.base._version
            followed.handed_out = False
            followed.values = values
            return steps, True
        if isinstance(first, Tensor) and all(map(is_, values, repeat(first))):
            # one shared device-side step (GradScaler): one launch per device and dtype
            new = self._next_shared_step(first, scaler)
            by_device = {device: _op_step(first, device) for device, _ in cached.first_on_device}
            steps = (next(iter(by_device.values())) if len(by_device) == 1
                     else [by_device[device] for device in cached.devices])
            for state in states:
                state["step"] = new
            followed.tensors = [new] * len(values)
            followed.values = [new] * len(values)
            return steps, True
        # a GradScaler's first step (or its steps on parameters at different steps): the
        # general path, then what it wrote is followed
        items = [Item(p, g, st, v) for p, g, st, v in zip(cached.params, grads, states, values)]
        steps = self.advance_param_steps(i, group, items, state_map, None, scaler)
        return steps, self.follow(i, items)
