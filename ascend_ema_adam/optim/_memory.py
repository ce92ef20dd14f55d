"""The op's memory rules over a whole step, checked before anything is written or counted.

The list op refuses, per launch, an updated tensor (parameter, master, moment, EMA) that
addresses an element twice or shares memory with any other tensor of the launch (gradients and
scalar tensors may share with each other). A step launches once per bucket of every group, so
the optimizer applies the same rules to the union of all its launches: a tensor updated by two
launches (a parameter listed twice) or a gradient one launch reads while another writes it is
refused too, before the first launch.

Cost: tensors of different storages are separate allocations and cannot overlap, so the byte
ranges are compared only within a storage that holds an updated tensor and another tensor
(Megatron's flat buffers, a duplicate, a gradient that is a view of its parameter). Memory that
two storages both wrap (``torch.from_numpy`` of overlapping arrays) is not seen here; the op
still refuses it within one launch."""

from __future__ import annotations

from operator import methodcaller

from torch import Tensor

from ._common import _MASTER, _MAX_V, _STATE_KEYS, _dtensor_type, _local
from ._gather import state_keys
from ._state8bit import KEYS_8BIT, MAP_KEYS, has_8bit_state, is_8bit
from ._validation import _layout

# Unbound methods: map() calls them without a Python frame (twice as fast as methodcaller).
_STORAGE = Tensor.untyped_storage
_STORAGE_PTR = methodcaller("data_ptr")  # (of a storage)
_CONTIGUOUS = Tensor.is_contiguous


class _StepTensors:
    """Every tensor of a step's launches, whether the launch writes it, and its name (made only
    for a message: ``(i, j, what)``, parameter ``j`` of group ``i``, or a text)."""

    __slots__ = ("tensors", "updated", "names")

    def __init__(self):
        self.tensors: list[Tensor] = []
        self.updated: list[bool] = []
        self.names: list = []

    def add(self, t: Tensor, updated: bool, name) -> None:
        self.tensors.append(t)
        self.updated.append(updated)
        self.names.append(name)

    def add_many(self, ts: list[Tensor], updated: bool, names: list) -> None:
        self.tensors += ts
        self.updated += [updated] * len(ts)
        self.names += names


def _same(t: Tensor) -> Tensor:
    return t


def _describe(name, t: Tensor) -> str:
    if isinstance(name, str):
        return name
    i, j, what = name
    return f"param_groups[{i}]['params'][{j}] (shape {list(t.shape)}) {what}"


def distinct_elements(t: Tensor) -> bool:
    """No element addressed twice (the op's HasDistinctElements, op_host/common/memory_layout):
    ordered by stride, each dim steps past everything the smaller ones span."""
    if t.is_contiguous() or t.numel() == 0:
        return True
    span = 1
    for stride, size in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz > 1):
        if stride < span:
            return False
        span += (size - 1) * stride
    return True


def _span(t: Tensor) -> tuple[int, int] | None:
    """The bytes from the first to past the last element (None: no elements)."""
    if t.numel() == 0:
        return None
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    begin = t.data_ptr()
    return begin, begin + (last + 1) * t.element_size()


def first_overlap(tensors: list[Tensor], updated: list[bool]) -> tuple[int, int] | None:
    """Indexes of an updated tensor and another tensor that share a byte, or None. Only
    tensors of a storage that holds an updated tensor and another one are compared: sorted by
    their first byte, one sweep."""
    keys = list(map(_STORAGE_PTR, map(_STORAGE, tensors)))
    updated_keys = [k for k, u in zip(keys, updated) if u]
    seen: set[int] = set()
    shared = {k for k in updated_keys if k in seen or seen.add(k)}
    shared.update(k for k, u in zip(keys, updated) if not u and k in seen)
    shared.discard(0)  # no storage: no elements (empty or meta tensors)
    if not shared:
        return None
    spans = []
    for k, (key, t) in enumerate(zip(keys, tensors)):
        if key in shared:
            span = _span(t)
            if span is not None:
                spans.append((span[0], span[1], k))
    spans.sort()
    end_any, owner_any = -1, -1   # the span reaching furthest so far, and the furthest updated
    end_updated, owner_updated = -1, -1
    for begin, end, k in spans:
        if updated[k] and begin < end_any:
            return k, owner_any
        if not updated[k] and begin < end_updated:
            return owner_updated, k
        if end > end_any:
            end_any, owner_any = end, k
        if updated[k] and end > end_updated:
            end_updated, owner_updated = end, k
    return None


def check_step_memory(step: _StepTensors, where: str = "") -> None:
    """The op's memory rules over all of a step's launches; raises a RuntimeError naming the
    tensors."""
    tensors, updated = step.tensors, step.updated
    writes = [t for t, u in zip(tensors, updated) if u]
    if not all(map(_CONTIGUOUS, writes)):
        for k, t in enumerate(tensors):
            if updated[k] and not distinct_elements(t):
                raise RuntimeError(
                    f"{where}{_describe(step.names[k], t)} (stride {list(t.stride())}) addresses "
                    f"some elements more than once; an updated tensor must not (the step changed "
                    f"nothing)")
    pair = first_overlap(tensors, updated)
    if pair is None:
        return
    a, b = pair
    same = " (the same tensor)" if tensors[a] is tensors[b] else ""
    raise RuntimeError(
        f"{where}{_describe(step.names[a], tensors[a])} and {_describe(step.names[b], tensors[b])} "
        f"overlap in memory{same}: a tensor the step updates (parameter, master, moment, EMA) "
        f"must not share memory with any other tensor of the step, and a parameter may be "
        f"listed once (the step changed nothing)")


def _scalar_tensors(groups, scaler) -> list[tuple[Tensor, str]]:
    """The read-only small tensors the launches take from the user: a group's tensor
    ``lr``/``ema_decay`` and 8-bit maps, GradScaler's scale and inf flag."""
    out = [(group[key], f"param_groups[{i}]['{key}'] tensor") for i, group in enumerate(groups)
           for key in ("lr", "ema_decay") if isinstance(group[key], Tensor)]
    out += [(group[key], f"param_groups[{i}]['{key}']") for i, group in enumerate(groups)
            for key in MAP_KEYS if isinstance(group.get(key), Tensor)]
    out += [(t, f"the GradScaler's {name}") for name, t in (
        ("grad_scale", scaler.grad_scale), ("found_inf", scaler.found_inf)) if t is not None]
    return out


_STATE_NAMES = {key: f"state '{key}'" for key in _STATE_KEYS + (_MAX_V, _MASTER) + KEYS_8BIT}
_MOMENT_KEYS = ("exp_avg", "exp_avg_sq") + KEYS_8BIT


def _add_item(step: "_StepTensors", i: int, item, group, keys, dtensor) -> None:
    """The tensors the launch will use for one checked parameter: itself and its gradient, and
    the state tensors that exist and are kept as they are (one of another layout is replaced by
    a new tensor before the launch, a master not wanted is dropped)."""
    p, state, j = item.param, item.state, item.index
    # (a DTensor parameter's gradient and state are DTensors too: checked before)
    local = _local if dtensor is not None and isinstance(p, dtensor) else _same
    state_dtype, master = _layout(group, p.dtype)
    step.add(local(p), True, (i, j, "the parameter"))
    eight = is_8bit(group, p.numel())
    if eight or has_8bit_state(state):
        # the state of the kind the parameter keeps: the other kind is converted into new
        # tensors before the launch
        moments = KEYS_8BIT if eight else ("exp_avg", "exp_avg_sq")
        keys = moments + tuple(key for key in keys if key not in _MOMENT_KEYS)
    for key in keys:
        t = state.get(key)
        if t is None or (key == _MASTER and not master) or (
                key not in (_MASTER,) + KEYS_8BIT and t.dtype != state_dtype):
            continue
        step.add(local(t), True, (i, j, _STATE_NAMES[key]))
    step.add(local(item.grad), False, (i, j, "the gradient"))


def check_plan_memory(plan, groups, scaler, ranges) -> None:
    """The memory rules for one step of :class:`FusedEmaAdamW` (``plan``: per group ``(i,
    group, items, cache, grads)``, a full check's items or a cached group's gradients). When
    every group is cached and ``ranges`` (a ``_C.UpdatedStorages``: the updated storages when
    the caches were made) holds, only the gradients and scalar tensors are new: each cached
    group read its gradients against ``ranges`` already (``GroupCache.gradients_if_unchanged``),
    so the scalar tensors are checked here, and the full check runs only if one of them lies in
    an updated storage."""
    scalars = _scalar_tensors(groups, scaler)
    if ranges is not None and all(cache is not None for _, _, _, cache, _ in plan):
        if not ranges.touches_any([_local(t) for t, _ in scalars]):
            return
    step = _StepTensors()
    for i, group, items, cache, grads in plan:
        if cache is not None:  # (its parameters with a gradient: indexes in the group)
            where = cache.indexes
            step.add_many(cache.params, True, [(i, j, "the parameter") for j in where])
            for key, column in cache.columns.items():
                for j, t in zip(where, column):
                    if t is not None:
                        step.add(t, True, (i, j, _STATE_NAMES[key]))
            step.add_many(grads, False, [(i, j, "the gradient") for j in where])
            continue
        keys = state_keys(group)
        dtensor = _dtensor_type()
        for item in items or ():
            _add_item(step, i, item, group, keys, dtensor)
    for t, name in scalars:
        step.add(_local(t), False, name)
    check_step_memory(step)


def check_new_params(groups, params: list, index: int) -> None:
    """A group about to become ``param_groups[index]`` (its ``params``: tensors or ``(name,
    tensor)`` pairs, tied names already merged) adds no parameter twice, none already in a group,
    and none sharing memory with another parameter: one step cannot update a tensor twice (torch
    only warns about duplicates within a group). Raises ValueError naming both places; run before
    anything is stored."""
    tensors = [p[1] if isinstance(p, tuple) and len(p) == 2 else p for p in params]
    if not all(isinstance(t, Tensor) for t in tensors):
        return  # torch's add_param_group says what is wrong
    where: dict[int, tuple[int, int]] = {}
    everything, names = [], []
    for i, group in enumerate(groups):
        for j, p in enumerate(group["params"]):
            where.setdefault(id(p), (i, j))
            everything.append(p)
            names.append((i, j))
    for j, p in enumerate(tensors):
        first = where.get(id(p))
        if first is not None:
            raise ValueError(
                f"param_groups[{index}]['params'][{j}] (shape {list(p.shape)}) is the parameter "
                f"at param_groups[{first[0]}]['params'][{first[1]}]: a parameter may appear once "
                f"in the optimizer (one step cannot update a tensor twice; torch only warns). "
                f"Remove the duplicate, e.g. list(dict.fromkeys(params))")
        where[id(p)] = (index, j)
        everything.append(p)
        names.append((index, j))
    try:
        local = [_local(p) for p in everything]
        pair = first_overlap(local, [True] * len(local))
    except (RuntimeError, NotImplementedError):  # tensors without addresses (fake, traced)
        return
    if pair is not None:
        (i, j), (k, m) = names[pair[0]], names[pair[1]]
        raise ValueError(
            f"param_groups[{i}]['params'][{j}] (shape {list(everything[pair[0]].shape)}) and "
            f"param_groups[{k}]['params'][{m}] (shape {list(everything[pair[1]].shape)}) share "
            f"memory: a step would update those elements twice. Give the optimizer each tensor "
            f"once (views of one tensor that overlap cannot be parameters side by side)")
