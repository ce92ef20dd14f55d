"""The EMA helpers: MindSpeed's ``copy_to``/``store``/``restore``, :meth:`swap_ema` (weights
swapped in and out, restored on any failure) and :meth:`ema_state_dict` (tied weights under all
their names)."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import torch
from torch import Tensor

from ._common import _MASTER, _has_ema, _local



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



class _EmaMixin:
    """EMA access for :class:`FusedEmaAdamW` (MindSpeed's methods and additions)."""

    def _require_ema(self, what: str) -> None:
        """The EMA helpers need a group with an EMA: an optimizer whose every group has
        ``ema_decay=None`` has no EMA weights (a RuntimeError naming the groups). With some
        groups without one, the helpers act on the others: their parameters keep their own
        weights, as parameters without EMA state (never stepped) do."""
        if any(map(_has_ema, self.param_groups)) or not self.param_groups:
            return
        names = ", ".join(f"param_groups[{i}]" for i in range(len(self.param_groups)))
        raise RuntimeError(
            f"FusedEmaAdamW.{what}: no param group has an EMA (ema_decay=None in {names}), so "
            f"there are no EMA weights; give the optimizer an ema_decay (optimizer.ema_decay = "
            f"0.999 sets every group's: a new EMA starts from the weights at the next step())")

    def _params_with_ema(self) -> Iterator[tuple[Tensor, Tensor]]:
        for group in self.param_groups:
            if not _has_ema(group):  # (its EMA, if any is left, is dropped at the next step)
                continue
            for p in group["params"]:
                state = self.state.get(p)
                if state and "ema_params" in state:
                    yield p, state["ema_params"]

    def _weights_with_ema(self) -> Iterator[tuple[Tensor, Tensor]]:
        """(parameter, EMA) pairs, and (master, EMA) for parameters with an fp32 master: what
        the user sees and what training continues from both take the EMA (a 16-bit parameter
        its rounding to nearest even)."""
        for p, ema in self._params_with_ema():
            yield p, ema
            master = self.state[p].get(_MASTER)
            if master is not None:
                yield master, ema

    @torch.no_grad()
    def copy_to(self) -> None:
        """Write the EMA weights into the parameters (params without EMA state, or in a group
        without an EMA, are skipped); with master weights, into the masters too (training
        continues from the EMA). RuntimeError when no group has an EMA."""
        self._require_ema("copy_to()")
        for p, ema in self._weights_with_ema():
            _local(p).copy_(_local(ema))

    def _group_params(self, parameters) -> list[list[Tensor]]:
        """Each group's parameters, each followed by its fp32 master when it has one."""
        out = []
        for g in parameters:
            params = list(g["params"]) if isinstance(g, dict) else [g]
            with_masters = []
            for p in params:
                with_masters.append(p)
                state = self.state.get(p) if isinstance(p, Tensor) else None
                if state and _MASTER in state:
                    with_masters.append(state[_MASTER])
            out.append(with_masters)
        return out

    @torch.no_grad()
    def store(self, parameters=None) -> None:
        """Stash the current weights of ``parameters`` (param groups, default this optimizer's;
        their fp32 masters too) on the host, for :meth:`restore`."""
        if parameters is None:
            parameters = self.param_groups
        self.collected_params_group = [[_local(p).detach().cpu().clone() for p in params]
                                       for params in self._group_params(parameters)]

    @torch.no_grad()
    def restore(self, parameters=None) -> None:
        """Copy the weights (and masters) stashed by :meth:`store` back and drop the stash."""
        stash = getattr(self, "collected_params_group", None)
        if stash is None:
            raise RuntimeError("FusedEmaAdamW.restore() without a preceding store(): no weights "
                               "are stashed (each store() is restored once)")
        if parameters is None:
            parameters = self.param_groups
        for saved_group, params in zip(stash, self._group_params(parameters), strict=True):
            for saved, p in zip(saved_group, params, strict=True):
                _local(p).copy_(saved)
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
        self._require_ema("swap_ema()")
        with _weights_swapped(self._weights_with_ema(), stash_device):
            yield self

    def ema_state_dict(self, model: torch.nn.Module | None = None) -> dict[str, Tensor]:
        """The model's state dict with the EMA in place of each parameter that has one.

        With ``model`` the keys are ``model.state_dict()``'s (buffers included, parameters
        without EMA state keep their own value), so ``model.load_state_dict(...)`` loads the EMA
        weights. Without it, the optimizer must have been built from ``named_parameters()``
        and the dict holds parameters only; tied weights keep all their names only when the
        optimizer was built from ``named_parameters(remove_duplicate=False)``. Values are
        detached references, like ``Module.state_dict()``: save or clone them before training
        on (a tied weight is one tensor under all its names). An fp32 EMA of a 16-bit parameter
        is returned in the parameter's dtype (rounded to nearest even: a new tensor). DTensor
        parameters give sharded DTensor values (see ``ascend_ema_adam.distributed.gather_full_ema_state_dict``).
        Parameters of a group without an EMA (``ema_decay=None``) keep their own value; when
        no group has an EMA, RuntimeError.
        """
        self._require_ema("ema_state_dict()")
        if model is not None:
            source = model.state_dict(keep_vars=True)
            out = OrderedDict()
            metadata = getattr(source, "_metadata", None)
            if metadata is not None:
                out._metadata = metadata
            items = source.items()
        else:
            if not all("param_names" in g for g in self.param_groups):
                raise TypeError(
                    "ema_state_dict() needs the model (ema_state_dict(model)) unless the "
                    "optimizer was built from model.named_parameters() (with tied weights: "
                    "named_parameters(remove_duplicate=False), or pass the model)")
            out = OrderedDict()
            items = _named_params_with_aliases(self.param_groups)
        emas = {id(p): ema for p, ema in self._params_with_ema()}
        exported: dict[int, Tensor] = {}
        for name, value in items:
            if isinstance(value, Tensor):
                if id(value) not in exported:
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
