"""The EMA helpers of :class:`FusedEmaAdamW`, as functions of its groups and state: MindSpeed's
``copy_to``/``store``/``restore``, ``swap_ema`` (weights swapped in and out, restored on any
failure) and ``ema_state_dict`` (tied weights under all their names); also what
``ascend_ema_adam.distributed`` and the engine glue use."""

from __future__ import annotations

import contextlib
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import torch
from torch import Tensor

from ._common import _MASTER, _dtensor_type, _has_ema, _local, user_stacklevel


def _checked_stash_device(stash_device) -> torch.device:
    device = torch.device(stash_device)  # RuntimeError for an unknown device string
    if device.type == "meta":
        raise ValueError(f"stash_device={stash_device!r}: a meta tensor cannot hold the training "
                         f"weights (it has no data); use 'cpu' or the parameters' device")
    return device


@contextlib.contextmanager
def _weights_swapped(pairs: Iterable[tuple[Tensor, Tensor]], stash_device):
    """Inside, each parameter of ``pairs`` holds its replacement's values; its own values come
    back on exit: after the body, after an exception in it, and after a failure half-way
    through the swap itself. The stash device is checked before anything is touched."""
    device = _checked_stash_device(stash_device)
    stash = []
    try:
        with torch.no_grad():
            for param, replacement in pairs:
                local = _local(param)
                stash.append((local, local.detach().to(device, copy=True)))
                local.copy_(_local(replacement))
            param = replacement = None  # the caller may be freeing the replacements as it goes
        yield
    finally:
        _copy_back(stash)


@torch.no_grad()
def _copy_back(stash: list[tuple[Tensor, Tensor]]) -> None:
    """Every stashed value back, even when one copy fails (the first error is raised after)."""
    error = None
    for local, saved in stash:
        try:
            local.copy_(saved)
        except Exception as e:  # noqa: BLE001 - keep restoring the others first
            error = error or e
    if error is not None:
        raise error


def require_ema(groups: list[dict], what: str) -> None:
    """The EMA helpers need a group with an EMA: an optimizer whose every group has
    ``ema_decay=None`` has no EMA weights (a RuntimeError naming the groups). With some groups
    without one, the helpers act on the others: their parameters keep their own weights, as
    parameters without EMA state (never stepped) do."""
    if any(map(_has_ema, groups)) or not groups:
        return
    names = ", ".join(f"param_groups[{i}]" for i in range(len(groups)))
    raise RuntimeError(
        f"FusedEmaAdamW.{what}: no param group has an EMA (ema_decay=None in {names}), so "
        f"there are no EMA weights; give the optimizer an ema_decay (optimizer.ema_decay = "
        f"0.999 sets every group's: a new EMA starts from the weights at the next step())")


def warn_before_first_step(groups: list[dict], state_map, what: str) -> None:
    """An EMA helper called before any step has made EMA weights: it gives the training weights
    (each parameter's EMA starts from its weights at its first step); a warning says so."""
    if not any(True for _ in params_with_ema(groups, state_map)):
        warnings.warn(f"FusedEmaAdamW.{what}: no step has made EMA weights yet (each parameter's "
                      f"EMA starts from its weights at its first step), so it gives the training "
                      f"weights", UserWarning, stacklevel=user_stacklevel())


def params_with_ema(groups: list[dict], state_map) -> Iterator[tuple[Tensor, Tensor]]:
    """(parameter, EMA) of every parameter with EMA state in a group with an EMA."""
    for group in groups:
        if not _has_ema(group):  # (its EMA, if any is left, is dropped at the next step)
            continue
        for p in group["params"]:
            state = state_map.get(p)
            if state and "ema_params" in state:
                yield p, state["ema_params"]


def weights_with_ema(groups: list[dict], state_map) -> Iterator[tuple[Tensor, Tensor]]:
    """(parameter, EMA) pairs, and (master, EMA) for parameters with an fp32 master: what the
    user sees and what training continues from both take the EMA (a 16-bit parameter its
    rounding to nearest even)."""
    for p, ema in params_with_ema(groups, state_map):
        yield p, ema
        master = state_map[p].get(_MASTER)
        if master is not None:
            yield master, ema


@torch.no_grad()
def copy_ema_to_weights(groups: list[dict], state_map, parameters=None) -> None:
    """``copy_to``: the EMA into the parameters (and masters); with ``parameters`` (diffusers'
    ``EMAModel.copy_to(parameters)``) into those: this optimizer's own parameters (any of them,
    by identity: the others keep their weights), or one tensor per parameter of the optimizer in
    its groups' order (another copy of the model: its ``parameters()``), each getting the
    parameter's EMA, or its weights where it has none (as ``ema_state_dict``)."""
    what = "copy_to()" if parameters is None else "copy_to(parameters)"
    require_ema(groups, what)
    warn_before_first_step(groups, state_map, what)
    if parameters is None:
        for p, ema in weights_with_ema(groups, state_map):
            _local(p).copy_(_local(ema))
        return
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    targets = list(parameters)
    ours = [p for g in groups for p in g["params"]]
    if not all(isinstance(t, Tensor) for t in targets):
        kinds = sorted({type(t).__name__ for t in targets if not isinstance(t, Tensor)})
        raise TypeError(f"FusedEmaAdamW.{what}: parameters must be tensors (model.parameters()), "
                        f"got {', '.join(kinds)}")
    own = {id(p) for p in ours}
    if all(id(t) in own for t in targets):
        wanted = {id(t) for t in targets}
        for p, ema in params_with_ema(groups, state_map):
            if id(p) in wanted:
                _local(p).copy_(_local(ema))
                master = state_map[p].get(_MASTER)
                if master is not None:  # (training continues from the EMA, as copy_to())
                    _local(master).copy_(_local(ema))
        return
    if len(targets) != len(ours):
        raise ValueError(
            f"FusedEmaAdamW.{what}: {len(targets)} tensors, neither parameters of this "
            f"optimizer nor one per parameter of it ({len(ours)}, in its param_groups' order)")
    dtensor = _dtensor_type()
    if dtensor is not None and any(isinstance(p, dtensor) for p in ours):
        raise TypeError(f"FusedEmaAdamW.{what}: the optimizer's parameters are DTensor shards; "
                        f"copy into other tensors from ascend_ema_adam.distributed."
                        f"gather_full_ema_state_dict")
    emas = {id(p): ema for p, ema in params_with_ema(groups, state_map)}
    for k, (t, p) in enumerate(zip(targets, ours)):
        if t.shape != p.shape:
            raise ValueError(f"FusedEmaAdamW.{what}: tensor {k} has shape {list(t.shape)}, the "
                             f"optimizer's parameter {k} {list(p.shape)} (one tensor per "
                             f"parameter, in its param_groups' order)")
    for t, p in zip(targets, ours):
        t.copy_(_local(emas.get(id(p), p)))


def _with_masters(parameters, state_map) -> list[list[Tensor]]:
    """Each group's parameters, each followed by its fp32 master when it has one."""
    out = []
    for g in parameters:
        params = list(g["params"]) if isinstance(g, dict) else [g]
        with_masters = []
        for p in params:
            with_masters.append(p)
            state = state_map.get(p) if isinstance(p, Tensor) else None
            if state and _MASTER in state:
                with_masters.append(state[_MASTER])
        out.append(with_masters)
    return out


@torch.no_grad()
def stashed_weights(parameters, state_map) -> list[list[Tensor]]:
    """MindSpeed's ``store``: host copies of the weights of ``parameters`` (param groups) and
    their masters."""
    return [[_local(p).detach().cpu().clone() for p in params]
            for params in _with_masters(parameters, state_map)]


@torch.no_grad()
def restore_weights(stash: list[list[Tensor]] | None, parameters, state_map) -> None:
    """MindSpeed's ``restore``: the weights (and masters) ``stash`` holds copied back."""
    if stash is None:
        raise RuntimeError("FusedEmaAdamW.restore() without a preceding store(): no weights "
                           "are stashed (each store() is restored once)")
    for saved_group, params in zip(stash, _with_masters(parameters, state_map), strict=True):
        for saved, p in zip(saved_group, params, strict=True):
            _local(p).copy_(saved)


def ema_swapped(groups: list[dict], state_map, stash_device):
    """``swap_ema``'s context: the EMA in the weights (and masters) inside."""
    require_ema(groups, "swap_ema()")
    warn_before_first_step(groups, state_map, "swap_ema()")
    return _weights_swapped(weights_with_ema(groups, state_map), stash_device)


BUFFER_POLICIES = ("copy", "live")


def ema_state_dict_of(groups: list[dict], state_map, model: torch.nn.Module | None,
                      buffers: str = "copy") -> dict[str, Tensor]:
    """``FusedEmaAdamW.ema_state_dict``'s dict (see there)."""
    if buffers not in BUFFER_POLICIES:
        raise ValueError(f"ema_state_dict(buffers={buffers!r}): 'copy' (the buffers as they are "
                         f"now) or 'live' (the model's buffers themselves)")
    require_ema(groups, "ema_state_dict()")
    warn_before_first_step(groups, state_map, "ema_state_dict()")
    if model is not None:
        source = model.state_dict(keep_vars=True)
        out = OrderedDict()
        metadata = getattr(source, "_metadata", None)
        if metadata is not None:
            out._metadata = metadata
        items = source.items()
    else:
        if not all("param_names" in g for g in groups):
            raise TypeError(
                "ema_state_dict() needs the model (ema_state_dict(model)) unless the "
                "optimizer was built from model.named_parameters() (with tied weights: "
                "named_parameters(remove_duplicate=False), or pass the model)")
        out = OrderedDict()
        items = _named_params_with_aliases(groups)
    emas = {id(p): ema for p, ema in params_with_ema(groups, state_map)}
    params = ({id(p) for p in model.parameters()} if model is not None
              else {id(p) for g in groups for p in g["params"]})
    exported: dict[int, Tensor] = {}
    for name, value in items:
        if isinstance(value, Tensor):
            if id(value) not in exported and id(value) not in params and buffers == "copy":
                exported[id(value)] = value.detach().clone()  # a buffer, as it is now
            elif id(value) not in exported:
                source_value = emas.get(id(value), value).detach()
                if source_value.dtype != value.dtype:  # an fp32 EMA of a 16-bit weight
                    source_value = source_value.to(value.dtype)
                exported[id(value)] = source_value
            value = exported[id(value)]
        out[name] = value
    return out


def _merge_tied_names(param_group: dict[str, Any]) -> None:
    """Named parameters listed twice (tied weights): the first name keeps the parameter, the
    others go to ``param_aliases`` (alias -> name), so the step updates it once and
    :meth:`FusedEmaAdamW.ema_state_dict` exports every name."""
    params = param_group.get("params")
    if params is None or isinstance(params, (Tensor, set)):  # torch's checks decide
        return
    params = list(params)
    param_group["params"] = params
    if not params or not all(isinstance(p, tuple) for p in params):
        return
    first: dict[int, str] = {}
    kept, aliases = [], {}
    for name, p in params:
        if id(p) in first:
            aliases[name] = first[id(p)]
        else:
            first[id(p)] = name
            kept.append((name, p))
    if aliases:
        param_group["params"] = kept
        param_group["param_aliases"] = aliases


def _named_params_with_aliases(groups) -> Iterator[tuple[str, Tensor]]:
    for g in groups:
        by_name = dict(zip(g["param_names"], g["params"], strict=True))
        yield from by_name.items()
        for alias, name in g.get("param_aliases", {}).items():
            yield alias, by_name[name]
