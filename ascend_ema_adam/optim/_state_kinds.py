"""The kinds of moment state a parameter of :class:`FusedEmaAdamW` keeps, each with the lists its
launch takes and its launch: :data:`WIDE` (fp32 or 16-bit moments, through
:func:`~.functional.ema_adamw`) and :data:`EIGHT_BIT` (8-bit moments in blocks of 256, through
:func:`~.functional.ema_adamw8bit`; a parameter of a ``state_bits=8`` group with at least
``min_8bit_size`` elements). A step splits each group's parameters by kind
(:func:`split_by_kind`) and launches every part (:class:`LaunchPart`) alike: the step itself does
not branch on the kind. Each kind names its moment keys (beside the keys every kind has:
``ema_params``, ``master_param``, ``step``); their checks and the conversions between kinds are
in :mod:`._gather` and :mod:`._state8bit`."""

from __future__ import annotations

from typing import Any, NamedTuple

from torch import Tensor

from ._common import _MASTER, _MAX_V
from ._gather import Item, TensorLists, TensorLists8
from ._scaler import _Scaler
from ._state8bit import (ABSMAX_M, ABSMAX_V, CODES_M, CODES_V, KEYS_8BIT, QMAP_M, QMAP_V,
                         is_8bit)
from .functional import ema_adamw, ema_adamw8bit


class WideState:
    """fp32 (or 16-bit, ``state_dtype``) moments: every parameter of a 32-bit group, those
    under ``min_8bit_size`` of an 8-bit group."""

    name = "wide"
    moment_keys = ("exp_avg", "exp_avg_sq")  # (and max_exp_avg_sq with AMSGrad)

    @staticmethod
    def keeps(group: dict[str, Any], numel: int) -> bool:
        return not is_8bit(group, numel)

    @staticmethod
    def lists_of(items: list[Item], group: dict[str, Any], dtensor) -> TensorLists:
        return TensorLists.of_items(items, group, dtensor)

    @staticmethod
    def lists_of_columns(params: list[Tensor], columns: dict[str, list]) -> TensorLists:
        """The lists from a cached group's state columns (their gradients set per step)."""
        return TensorLists(params, None, columns["exp_avg"], columns["exp_avg_sq"],
                           columns.get(_MAX_V, []), columns.get("ema_params"),
                           columns.get(_MASTER))

    @staticmethod
    def launch(lists: TensorLists, step, group: dict[str, Any], ema_on: bool,
               hypers: dict[str, Any], scaler: _Scaler, prepared, prepared_checked: bool) -> None:
        ema_adamw(lists.params, lists.grads, lists.exp_avgs, lists.exp_avg_sqs,
                  lists.max_exp_avg_sqs, lists.ema_params if ema_on else None, step,
                  master_params=lists.master_params, foreach=group.get("foreach"),
                  grad_scale=scaler.grad_scale, found_inf=scaler.found_inf, **hypers,
                  prepared=prepared, prepared_checked=prepared_checked)


class EightBitState:
    """8-bit moments: uint8 codes of the group's maps and one fp32 scale per block of 256
    (8-bit parameters are never DTensors: the full check refuses them)."""

    name = "8-bit"
    moment_keys = KEYS_8BIT

    @staticmethod
    def keeps(group: dict[str, Any], numel: int) -> bool:
        return is_8bit(group, numel)

    @staticmethod
    def lists_of(items: list[Item], group: dict[str, Any], dtensor) -> TensorLists8:
        return TensorLists8.of_items(items, group)

    @staticmethod
    def lists_of_columns(params: list[Tensor], columns: dict[str, list]) -> TensorLists8:
        return TensorLists8(params, None, columns[CODES_M], columns[CODES_V], columns[ABSMAX_M],
                            columns[ABSMAX_V], columns.get("ema_params"), columns.get(_MASTER))

    @staticmethod
    def launch(lists: TensorLists8, step, group: dict[str, Any], ema_on: bool,
               hypers: dict[str, Any], scaler: _Scaler, prepared, prepared_checked: bool) -> None:
        ema_adamw8bit(lists.params, lists.grads, lists.exp_avg_codes, lists.exp_avg_sq_codes,
                      lists.exp_avg_absmaxes, lists.exp_avg_sq_absmaxes,
                      lists.ema_params if ema_on else None, step, qmap_m=group[QMAP_M],
                      qmap_v=group[QMAP_V], master_params=lists.master_params,
                      foreach=group.get("foreach"), grad_scale=scaler.grad_scale,
                      found_inf=scaler.found_inf, **hypers, prepared=prepared,
                      prepared_checked=prepared_checked)


WIDE, EIGHT_BIT = WideState(), EightBitState()


def kinds_of(group: dict[str, Any]) -> tuple:
    """The state kinds a group's parameters may keep, in launch order."""
    return (WIDE, EIGHT_BIT) if group["state_bits"] == 8 else (WIDE,)


def split_by_kind(group: dict[str, Any], numels: list[int]) -> list[tuple[Any, list[int] | None]]:
    """The group's parameters (their element counts) by state kind: ``(kind, indexes)`` for
    each kind some parameter keeps, ``indexes`` None where every parameter keeps that kind."""
    kinds = kinds_of(group)
    if len(kinds) == 1:
        return [(kinds[0], None)]
    parts = []
    for kind in kinds:
        indexes = [k for k, numel in enumerate(numels) if kind.keeps(group, numel)]
        if indexes:
            parts.append((kind, indexes))
    return parts


def pick(xs, indexes: list[int] | None):
    """The entries of ``xs`` at ``indexes`` (all of them for None; a shared step tensor is
    every parameter's)."""
    if indexes is None or isinstance(xs, Tensor):
        return xs
    return [xs[k] for k in indexes]


class LaunchPart(NamedTuple):
    """One launch of a group's step: the parameters of one state kind, their lists, their steps
    (a tensor, or one per parameter) and their prepared launches (None: checked in full)."""

    kind: Any
    lists: Any
    step: Any
    prepared: Any = None


def parts_of_items(group: dict[str, Any], items: list[Item], steps, dtensor) -> list[LaunchPart]:
    """A fully checked group's launches, its state completed."""
    return [LaunchPart(kind, kind.lists_of(pick(items, indexes), group, dtensor),
                       pick(steps, indexes))
            for kind, indexes in split_by_kind(group, [item.param.numel() for item in items])]
