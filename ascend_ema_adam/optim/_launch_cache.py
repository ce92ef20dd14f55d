"""The launch cache: what lets a step of :class:`FusedEmaAdamW` skip its full check and launch
phase 2 only. Per group the last full check's findings (:class:`GroupCache`) with the group's
prepared launches (:class:`~.functional.PreparedLaunches`); for the optimizer the state map's
dicts after the last step and the storages every cached group updates (a
``_C.UpdatedStorages``). Only for plain tensors (no DTensor), outside tracing."""

from __future__ import annotations

from operator import attrgetter, itemgetter, methodcaller
from typing import Any, NamedTuple

from torch import Tensor

from .._extension import _C
from ._common import _MASTER, _WIDE_KEYS, _dtensor_type, _has_ema
from ._gather import Item, state_keys
from ._state8bit import QMAP_M, QMAP_V
from ._state_kinds import LaunchPart, kinds_of, pick, split_by_kind
from .functional import PreparedLaunches

# C-level accessors for the checks of a cached group (map() runs them without a Python frame).
_DEVICE = attrgetter("device")
# (the master is absent for fp32 parameters: get gives None; every other key is always there)
_GETTERS = {**{key: itemgetter(key) for key in _WIDE_KEYS},
            _MASTER: methodcaller("get", _MASTER)}


def _group_config(group: dict[str, Any]) -> tuple:
    """What decides a group's state keys and launches (a cache is valid for one config): an
    EMA switched on or off sends the group to the full check, which makes or drops it."""
    return (group["amsgrad"], group["master_weights"], group["state_dtype"], _has_ema(group),
            group["state_bits"], group["min_8bit_size"])


def _maps_of(group: dict[str, Any]) -> tuple:
    """An 8-bit group's maps and their versions (an in-place write changes a version)."""
    return tuple((q, q._version) if isinstance(q, Tensor) else (q, None)
                 for q in (group.get(QMAP_M), group.get(QMAP_V)))


def _same_maps(group: dict[str, Any], kept: tuple) -> bool:
    return all(q is k and v == kv for (q, v), (k, kv) in zip(_maps_of(group), kept))


class CachedPart(NamedTuple):
    """A cached group's parameters of one state kind: their indexes into the group's items
    (None: all of them), their lists (the gradients set per step) and prepared launches."""

    kind: Any
    indexes: list[int] | None
    lists: Any
    prepared: PreparedLaunches


class GroupCache:
    """What a group's last full check established, kept while it still holds: the same
    parameters (objects; their dtypes, shapes and devices), the same ones with a gradient, the
    same state dicts and state tensors. A step then re-checks the gradients and the identities in
    C++ loops (csrc/common/optimizer_checks.cpp), about 0.1 us per parameter instead of ten, and
    launches from lists built once, through its prepared launches (``parts``: one per state
    kind). The steps of its parameters are the step counters' to follow
    (``_steps.StepCounters``), which hand their step tensors in to be checked with the state."""

    __slots__ = ("config", "group_params", "indexes", "gradients", "params", "state_map",
                 "states", "columns", "column_keys", "column_values", "devices",
                 "first_on_device", "qmaps", "parts")

    def __init__(self, state_map, items: list[Item], group: dict[str, Any]):
        self.config = _group_config(group)
        # the group's parameters, and which of them had a gradient (``indexes``): a step with the
        # same ones missing stays cached; ``gradients`` keeps the parameters and each gradient's
        # dtype, shape and device (no tensor: nothing kept alive), and reads the next ones
        self.group_params = list(group["params"])
        self.indexes = [item.index for item in items]
        absent = sorted(set(range(len(self.group_params))) - set(self.indexes))
        grads = [item.grad for item in items]
        self.gradients = _C.CachedGradients(self.group_params, grads, absent)
        self.params = [item.param for item in items]
        self.state_map = state_map
        self.states = [item.state for item in items]
        kinds = kinds_of(group)
        if len(kinds) > 1:  # either state kind per parameter: absent keys read None
            keys = state_keys(group)
            keys += tuple(key for kind in kinds for key in kind.moment_keys if key not in keys)
            self.columns = {key: list(map(methodcaller("get", key), self.states)) for key in keys}
        else:
            self.columns = {key: list(map(_GETTERS[key], self.states))
                            for key in state_keys(group)}
        self.column_keys, self.column_values = list(self.columns), list(self.columns.values())
        self.devices = list(map(_DEVICE, self.params))
        # (device, the group index of its first parameter there): where a tensor lr/ema_decay
        # must be
        first: dict = {}
        for device, j in zip(self.devices, self.indexes):
            first.setdefault(device, j)
        self.first_on_device = list(first.items())
        # the group's launches, one per state kind its parameters keep (their lists built once,
        # their launches prepared); an 8-bit group's maps, whose change sends it to the full check
        self.qmaps = _maps_of(group) if group["state_bits"] == 8 else None
        self.parts = []
        for kind, indexes in split_by_kind(group, [p.numel() for p in self.params]):
            params = pick(self.params, indexes)
            columns = {key: pick(values, indexes) for key, values in self.columns.items()}
            self.parts.append(CachedPart(kind, indexes, kind.lists_of_columns(params, columns),
                                         PreparedLaunches(params, pick(grads, indexes))))

    def gradients_if_unchanged(self, group: dict[str, Any], state_map, state_unchanged: bool,
                               updated, steps: list[Tensor] | None = None) -> list[Tensor] | None:
        """The gradients of the parameters that had one, if everything cached still holds: the
        same parameters, the same ones without a gradient, each gradient a plain tensor of the
        dtype, shape and device it had, touching none of ``updated`` (a ``_C.UpdatedStorages``,
        or None), and the state dicts holding the cached tensors; None otherwise (the full
        check then runs, and raises the error if there is one). ``state_unchanged``: the
        optimizer's state map holds the same state dicts, in the same order, as after the last
        step. A parameter changed since (p.data = ...) has a gradient of its new kind, so the
        full check runs. ``steps``: per-parameter step tensors the state dicts must hold too."""
        if (not state_unchanged or state_map is not self.state_map
                or _group_config(group) != self.config):
            return None
        if self.qmaps is not None and not _same_maps(group, self.qmaps):
            return None  # (new maps, or maps written since: the full check checks them)
        grads = self.gradients.read(group["params"], updated)
        if grads is None:
            return None
        # the state dicts still hold the cached tensors (a missing key reads None: a state dict
        # emptied in place, opt.state[p].clear(), fails the check)
        keys, values = self.column_keys, self.column_values
        if steps is not None:
            keys, values = keys + ["step"], values + [steps]
        if not _C.same_state_columns(self.states, keys, values):
            return None
        return grads

    def launch_parts(self, grads: list[Tensor], steps) -> list[LaunchPart]:
        """This step's launches: the cached tensors, the new gradients and this step's steps (one
        tensor, or one per parameter) of each state kind's parameters."""
        out = []
        for kind, indexes, lists, prepared in self.parts:
            lists.grads = pick(grads, indexes)
            out.append(LaunchPart(kind, lists, pick(steps, indexes), prepared))
        return out

    def updated_tensors(self) -> list[Tensor]:
        out = list(self.params)
        for column in self.column_values:
            out += [t for t in column if t is not None]
        return out


class LaunchCache:
    """The group caches of one optimizer (by group index), the state map's dicts after the last
    step, and ``updated``: the storages every cached group updates (a ``_C.UpdatedStorages``,
    while every group is cached; None: check in full). A step begins with :meth:`begin`, asks
    :meth:`group` per group, :meth:`remember`\\ s the groups it checked in full and ends with
    :meth:`finish`."""

    def __init__(self):
        self.groups: dict[int, GroupCache] = {}
        self.updated = None
        self._state_values: list = []

    def clear(self) -> None:
        """Forget everything (the next step checks every group in full)."""
        self.groups.clear()
        self.updated = None
        self._state_values = []

    def begin(self, state_map) -> bool:
        """At a step's start: whether the state map holds the same state dicts, in the same
        order, as after the last step (no hashing). If a tensor the cached groups update has new
        memory (p.data = ..., set_()), what the caches established about memory no longer
        holds: every group is checked in full, before anything is written, and cached again."""
        if self.updated is not None and not self.updated.in_place():
            self.groups.clear()
            self.updated = None
        return _C.same_dict_values(state_map, self._state_values)

    @property
    def held_checked(self) -> bool:
        """After :meth:`begin`: every tensor the prepared launches hold still has the memory and
        description the caches saw (the launches then need not compare them again)."""
        return self.updated is not None

    def group(self, i: int) -> GroupCache | None:
        return self.groups.get(i)

    def remember(self, i: int, group: dict[str, Any], state_map, items: list[Item]) -> bool:
        """Cache group ``i`` after a full check and update (its parameters with a gradient: a
        step where the same ones have one stays cached); False if it cannot be (no parameter
        with a gradient, DTensors)."""
        dtensor = _dtensor_type()
        if not items or (dtensor is not None
                         and any(isinstance(item.param, dtensor) for item in items)):
            self.groups.pop(i, None)
            return False
        self.groups[i] = GroupCache(state_map, items, group)
        return True

    def forget(self, i: int) -> None:
        self.groups.pop(i, None)

    def finish(self, state_map, group_count: int, rechecked: bool,
               state_unchanged: bool) -> None:
        """At a step's end (``rechecked``: a group was checked in full): the state map's dicts
        now, and the storages the caches update while every group is cached."""
        if rechecked or not state_unchanged:  # (a cached step adds no state)
            self._state_values = list(state_map.values())
        if rechecked:
            caches = [self.groups.get(i) for i in range(group_count)]
            self.updated = (_C.UpdatedStorages([t for cache in caches
                                                for t in cache.updated_tensors()])
                            if all(caches) else None)
