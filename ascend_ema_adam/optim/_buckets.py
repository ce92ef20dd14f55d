"""Buckets: the parameters of one launch (one device, one dtype, one step tensor), and the
per-group cache that lets a step rebuild them without the full check."""

from __future__ import annotations

from operator import attrgetter, itemgetter, methodcaller
from typing import Any

import torch
from torch import Tensor

from .. import _C
from ._common import _MASTER, _MAX_V, _STATE_KEYS, _WIDE_KEYS, _has_ema


class _Item:
    """One parameter with a gradient, as checked before the step: its state and (per-parameter
    steps, eager) its step before this update: a host int, or a step tensor whose value only
    the device knows (a GradScaler step made it; parameters sharing that tensor share the
    value)."""

    __slots__ = ("param", "grad", "state", "step", "index")

    def __init__(self, param: Tensor, grad: Tensor, state: dict, step, index: int = -1):
        self.param, self.grad, self.state, self.step = param, grad, state, step
        self.index = index  # its position in the group's params (for messages)


class _Bucket:
    """Parameters that share one launch: one device, one dtype of the parameters and one of the
    gradients (a 16-bit parameter may have an fp32 gradient), one step tensor (the lists the
    multi-tensor op takes). ``masters`` (fp32, the op's vars; the parameters are then its model
    copies), ``max_vs`` (AMSGrad) and ``ema_params`` (``ema_decay=None``) stay empty when the
    group has none."""

    __slots__ = ("step", "params", "grads", "exp_avgs", "exp_avg_sqs", "ema_params", "max_vs",
                 "masters")

    def __init__(self, step: Tensor):
        self.step = step
        self.params, self.grads, self.exp_avgs, self.exp_avg_sqs, self.ema_params = (
            [], [], [], [], [])
        self.max_vs, self.masters = [], []

    def add(self, item: _Item, dtensor) -> None:
        """``dtensor``: :func:`_dtensor_type`'s answer (None: no DTensor can exist)."""
        st = item.state
        for target, t in ((self.params, item.param), (self.grads, item.grad),
                          (self.exp_avgs, st["exp_avg"]), (self.exp_avg_sqs, st["exp_avg_sq"]),
                          (self.ema_params, st.get("ema_params")),
                          (self.max_vs, st.get(_MAX_V)),
                          (self.masters, st.get(_MASTER))):
            if t is not None:
                target.append(t.to_local() if dtensor is not None and isinstance(t, dtensor)
                              else t)


# C-level accessors for the checks of a cached group (map() runs them without a Python frame).
_DTYPE, _DEVICE = attrgetter("dtype"), attrgetter("device")
# (the master is absent for fp32 parameters: get gives None; every other key is always there)
_GETTERS = {**{key: itemgetter(key) for key in _WIDE_KEYS + ("step",)},
            _MASTER: methodcaller("get", _MASTER)}


def _same(xs):
    return xs


def _group_config(group: dict[str, Any]) -> tuple:
    """What decides a group's state keys and launches (a cache is valid for one config): an
    EMA switched on or off sends the group to the full check, which makes or drops it."""
    return (group["amsgrad"], group["master_weights"], group["state_dtype"], _has_ema(group))


def _state_keys(group: dict[str, Any]) -> tuple[str, ...]:
    """The state tensors a step of this group checks and updates (the master only for 16-bit
    parameters: the key is absent, ``get`` gives None, for fp32 ones); no ``ema_params`` in a
    group without an EMA (``ema_decay=None``)."""
    keys = _STATE_KEYS if _has_ema(group) else _NO_EMA_KEYS
    return (keys + ((_MAX_V,) if group["amsgrad"] else ())
            + ((_MASTER,) if group["master_weights"] else ()))


_NO_EMA_KEYS = tuple(key for key in _STATE_KEYS if key != "ema_params")


class _GroupCache:
    """What a group's last full check established, kept while it still holds: the same
    parameters (objects; their dtypes, shapes and devices), the same ones with a gradient, the
    same state dicts and state tensors (and, with per-parameter steps, the step tensors this
    optimizer wrote and their values). A step then re-checks the gradients and the identities in
    C++ loops (csrc/ops/optimizer_checks.cpp), about 0.1 us per parameter instead of ten, and
    launches from lists built once. Only for plain tensors (no DTensor), outside tracing."""

    __slots__ = ("config", "group_params", "indexes", "gradients", "params", "state_map",
                 "states", "columns", "column_keys", "column_values", "step_tensors",
                 "step_values", "step_base", "step_version", "steps_handed_out", "buckets",
                 "launches")

    def __init__(self, state_map, items: list[_Item], group: dict[str, Any]):
        self.config = _group_config(group)
        # the group's parameters, and which of them had a gradient (``indexes``): a step with the
        # same ones missing stays cached; ``gradients`` keeps the parameters and each gradient's
        # dtype, shape and device (no tensor: nothing kept alive), and reads the next ones
        self.group_params = list(group["params"])
        self.indexes = [item.index for item in items]
        absent = sorted(set(range(len(self.group_params))) - set(self.indexes))
        self.gradients = _C.CachedGradients(self.group_params, [item.grad for item in items],
                                            absent)
        self.params = [item.param for item in items]
        self.state_map = state_map
        self.states = [item.state for item in items]
        self.columns = {key: list(map(_GETTERS[key], self.states)) for key in _state_keys(group)}
        self.column_keys, self.column_values = list(self.columns), list(self.columns.values())
        self.step_tensors = None  # per-parameter steps: the tensors written, and their values
        self.step_values = None   # (host ints, or the one shared step tensor of a GradScaler step)
        # The tensor the step tensors are 0-d views of (None: they are one shared tensor), its
        # version after this optimizer's last write (a write by anyone else changes it: the
        # views share the base's counter), and whether state_dict() has handed them out.
        self.step_base = None
        self.step_version = -1
        self.steps_handed_out = False
        # (device, dtype, gradient dtype) -> the parameters' indexes, in group order
        self.buckets: dict[tuple[torch.device, torch.dtype, torch.dtype], list[int]] = {}
        # the prepared launches of these buckets (functional._launch_prepared), made on demand
        self.launches: dict[tuple, Any] = {}
        for k, key in enumerate(zip(map(_DEVICE, self.params), map(_DTYPE, self.params),
                                    (item.grad.dtype for item in items))):
            self.buckets.setdefault(key, []).append(k)

    def grads_if_unchanged(self, group: dict[str, Any], state_map, state_unchanged: bool,
                           updated) -> list[Tensor] | None:
        """The gradients of the parameters that had one, if everything cached still holds: the
        same parameters, the same ones without a gradient, each gradient a plain tensor of the
        dtype, shape and device it had, touching none of ``updated`` (a ``_C.UpdatedStorages``,
        or None), and the state dicts holding the cached tensors; None otherwise (the full
        check then runs, and raises the error if there is one). ``state_unchanged``: the
        optimizer's state map holds the same state dicts, in the same order, as after the last
        step. A parameter changed since (p.data = ...) has a gradient of its new kind, so the
        full check runs."""
        if (not state_unchanged or state_map is not self.state_map
                or _group_config(group) != self.config):
            return None
        grads = self.gradients.read(group["params"], updated)
        if grads is None:
            return None
        # the state dicts still hold the cached tensors and step tensors (a missing key reads
        # None: a state dict emptied in place, opt.state[p].clear(), fails the check), and
        # nobody else wrote the steps (their shared version counter)
        keys, values = self.column_keys, self.column_values
        if self.step_tensors is not None:
            if self.step_base is not None and self.step_base._version != self.step_version:
                return None
            keys, values = keys + ["step"], values + [self.step_tensors]
        if not _C.same_state_columns(self.states, keys, values):
            return None
        return grads

    def buckets_for(self, grads: list[Tensor], step_of, values: list | None = None
                    ) -> list[_Bucket]:
        """One bucket per (device, dtype, gradient dtype), with the step tensor
        ``step_of(device)``; with ``values`` (each parameter's step value, when they differ) one
        per (device, dtypes, value), in order of first appearance, with ``step_of(device,
        value)``."""
        out = []
        columns = self.columns
        for (device, *_), indexes in self.buckets.items():
            if values is None:
                parts = [(indexes, (device,))]
            else:
                by_value: dict = {}
                for k in indexes:
                    by_value.setdefault(values[k], []).append(k)
                parts = [(ks, (device, v)) for v, ks in by_value.items()]
            for part, step_args in parts:
                b = _Bucket(step_of(*step_args))
                if len(part) == len(self.params):  # the usual case: one device and dtype
                    pick = _same
                else:
                    pick = ((lambda xs, get=itemgetter(*part): list(get(xs))) if len(part) > 1
                            else (lambda xs, k=part[0]: [xs[k]]))
                b.params, b.grads = pick(self.params), pick(grads)
                b.exp_avgs, b.exp_avg_sqs = pick(columns["exp_avg"]), pick(columns["exp_avg_sq"])
                if "ema_params" in columns:  # (absent: a group without an EMA)
                    b.ema_params = pick(columns["ema_params"])
                if _MAX_V in columns:
                    b.max_vs = pick(columns[_MAX_V])
                if _MASTER in columns:
                    b.masters = [m for m in pick(columns[_MASTER]) if m is not None]
                out.append(b)
        return out
