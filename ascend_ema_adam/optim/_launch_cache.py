"""The launch cache: what lets a step of :class:`FusedEmaAdamW` skip its full check and launch
phase 2 only. Per group the last full check's findings (:class:`GroupCache`) with the group's
prepared launches (:class:`~.functional.PreparedLaunches`); for the optimizer the state map's
dicts after the last step and the storages every cached group updates (a
``_C.UpdatedStorages``). Only for plain tensors (no DTensor), outside tracing."""

from __future__ import annotations

from operator import attrgetter, itemgetter, methodcaller
from typing import Any

from torch import Tensor

from .. import _C
from ._common import _MASTER, _MAX_V, _WIDE_KEYS, _dtensor_type, _has_ema
from ._gather import Item, TensorLists, TensorLists8, state_keys
from ._state8bit import (ABSMAX_M, ABSMAX_V, CODES_M, CODES_V, KEYS_8BIT, QMAP_M, QMAP_V,
                         is_8bit)
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


class GroupCache:
    """What a group's last full check established, kept while it still holds: the same
    parameters (objects; their dtypes, shapes and devices), the same ones with a gradient, the
    same state dicts and state tensors. A step then re-checks the gradients and the identities in
    C++ loops (csrc/common/optimizer_checks.cpp), about 0.1 us per parameter instead of ten, and
    launches from lists built once, through its prepared launches (``prepared``). The steps of
    its parameters are the step counters' to follow (``_steps.StepCounters``), which hand their
    step tensors in to be checked with the state."""

    __slots__ = ("config", "group_params", "indexes", "gradients", "params", "state_map",
                 "states", "columns", "column_keys", "column_values", "devices",
                 "first_on_device", "prepared", "_lists", "eight_bit", "wide", "qmaps",
                 "_lists8", "prepared8")

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
        if group["state_bits"] == 8:  # either state kind per parameter: absent keys read None
            self.columns = {key: list(map(methodcaller("get", key), self.states))
                            for key in state_keys(group) + KEYS_8BIT}
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
        columns = self.columns
        # an 8-bit group: which parameters keep 8-bit state (``eight_bit``, their indexes into
        # the items; None in a 32-bit group), which fp32 state (``wide``), and the maps
        self.eight_bit = self.wide = self.qmaps = self._lists8 = self.prepared8 = None
        if group["state_bits"] == 8:
            flags = [is_8bit(group, p.numel()) for p in self.params]
            self.eight_bit = [k for k, f in enumerate(flags) if f]
            self.wide = [k for k, f in enumerate(flags) if not f]
            self.qmaps = _maps_of(group)
            columns = {key: [values[k] for k in self.wide] for key, values in columns.items()}
            eight = {key: [values[k] for k in self.eight_bit]
                     for key, values in self.columns.items()}
            self._lists8 = TensorLists8(
                [self.params[k] for k in self.eight_bit], None, eight[CODES_M], eight[CODES_V],
                eight[ABSMAX_M], eight[ABSMAX_V], eight.get("ema_params"), eight.get(_MASTER))
            if self.eight_bit:  # (their launches, prepared as the others')
                self.prepared8 = PreparedLaunches(self._lists8.params,
                                                  [grads[k] for k in self.eight_bit])
        params, wide_grads = self._wide(self.params), self._wide(grads)
        self.prepared = PreparedLaunches(params, wide_grads)
        self._lists = TensorLists(params, wide_grads, columns["exp_avg"], columns["exp_avg_sq"],
                                  columns.get(_MAX_V, []), columns.get("ema_params"),
                                  columns.get(_MASTER))

    def _wide(self, xs: list) -> list:
        """The entries of the parameters that keep fp32 state (all of a 32-bit group's)."""
        return xs if self.wide is None else [xs[k] for k in self.wide]

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

    def lists(self, grads: list[Tensor]) -> TensorLists:
        """This step's lists for ema_adamw: the cached tensors and the new gradients."""
        self._lists.grads = self._wide(grads)
        return self._lists

    def lists8(self, grads: list[Tensor]) -> TensorLists8 | None:
        """An 8-bit group's lists for ema_adamw8bit (None: no parameter keeps 8-bit state)."""
        if not self.eight_bit:
            return None
        self._lists8.grads = [grads[k] for k in self.eight_bit]
        return self._lists8

    def split_steps(self, steps):
        """An 8-bit group's steps (one tensor, or one per parameter) for the parameters that keep
        fp32 state and for those that keep 8-bit state."""
        if isinstance(steps, Tensor):
            return steps, steps
        return [steps[k] for k in self.wide], [steps[k] for k in self.eight_bit]

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
