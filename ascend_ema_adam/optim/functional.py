"""The functional core of :class:`~ascend_ema_adam.optim.FusedEmaAdamW`, in torch's shape.

As ``torch.optim.AdamW.step()`` gathers each group's tensors and calls the functional ``adamw()``,
``FusedEmaAdamW.step()`` gathers each group's tensors, state and this step's hyper-parameters and
calls :func:`ema_adamw`, which picks an implementation per launch (one device, dtype pair and
step): a prepared launch that runs phase 2 only (lists the optimizer hands in again and again,
``prepared=``), one launch of the list op, or with ``foreach=False`` one launch per parameter. Every
update the optimizer makes goes through :func:`ema_adamw`. MindSpeed's functional form
:func:`fused_ema_adamw` is a thin wrapper over it."""

from __future__ import annotations

from operator import itemgetter
from typing import Sequence

import torch
from torch import Tensor

from .._extension import _C
from ..ops import (apply_fused_ema_adam8bit_list, apply_fused_ema_adam_list,
                   npu_apply_fused_ema_adamw)

__all__ = ["ema_adamw", "ema_adamw8bit", "fused_ema_adamw", "PreparedLaunches"]

# The core's on/off options and their defaults: a param group carries each under its name
# (FusedEmaAdamW's constructor, its checkpoints and its group checks take them from here).
SWITCHES = {"amsgrad": False, "maximize": False}

# Calls with ``prepared`` run their launches through prepared launches (phase 2 only) on these
# devices; PREPARED_LAUNCHES = False launches through the op every time (the same bits).
PREPARED_LAUNCHES = True
_PREPARED_DEVICES = frozenset({"cpu"} | ({"npu"} if _C.build_info()["npu_kernel"] else set()))


def ema_adamw(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
              exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
              ema_params: list[Tensor] | None, steps: Tensor | Sequence[Tensor], *,
              master_params: list[Tensor | None] | None = None, foreach: bool | None = None,
              grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
              amsgrad: bool, beta1: float, beta2: float, lr: float | Tensor,
              weight_decay: float, eps: float, maximize: bool, ema_decay: float | Tensor | None,
              bias_correction: bool = True, decoupled_weight_decay: bool = True,
              prepared: PreparedLaunches | None = None, prepared_checked: bool = False) -> None:
    r"""One Adam/AdamW update with an EMA of the weights, in place, of every parameter given:
    torch's functional ``adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
    state_steps, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, ...)`` plus the EMA.

    The lists hold plain (local) tensors, one entry per parameter: ``params`` (the op's vars, or
    with ``master_params`` its 16-bit model copies), their gradients, ``exp_avgs`` and
    ``exp_avg_sqs``, ``max_exp_avg_sqs`` (with ``amsgrad``; else empty), ``ema_params`` (None:
    this update leaves the EMA alone, as a group without one or ``ema_every``'s other steps) and
    ``master_params`` (fp32 masters of 16-bit parameters, None entries for the others: the kernel
    updates the master and writes the parameter as its rounding).

    ``steps`` is the step of this update (:math:`t`, counted from 1; torch's ``state_steps``
    hold the step before it, which its functional increments): an int64 one-element tensor for
    every parameter, or one per parameter (parameters with the same tensor share a launch). The
    counters stay with the caller, which knows their values without reading the device.

    Hyper-parameters as torch's; ``lr`` and ``ema_decay`` may be float32 one-element tensors (a
    tensor ``ema_decay`` is copied to each other device), ``grad_scale``/``found_inf`` are
    GradScaler's (the kernel divides the gradients by ``grad_scale`` and writes nothing when
    ``found_inf`` is nonzero). ``decoupled_weight_decay``: AdamW (the kernel's mode 1); False:
    Adam with L2 decay added to the gradient (mode 0).

    The parameters are launched in groups of one device, one parameter dtype, one gradient dtype
    and one step tensor (:func:`ascend_ema_adam.ops.apply_fused_ema_adam_list` each; with
    ``foreach=False`` one launch per parameter: the single op where it can serve, the same bits).
    ``prepared``: launches kept for lists handed in again (:class:`PreparedLaunches`); then each
    group runs phase 2 only where the device allows (CPU; NPU with a torch_npu build).
    ``prepared_checked``: the caller has compared every tensor those launches hold with the
    tensors they were made from (FusedEmaAdamW: ``_C.UpdatedStorages.in_place``).
    """
    count = len(params)
    if not (len(grads) == len(exp_avgs) == len(exp_avg_sqs) == count
            and (ema_params is None or len(ema_params) == count)
            and (not amsgrad or len(max_exp_avg_sqs) == count)
            and (master_params is None or len(master_params) == count)):
        _raise_length_error(count, grads, exp_avgs, exp_avg_sqs, ema_params,
                            max_exp_avg_sqs if amsgrad else None, master_params)
    if ema_params is not None and ema_decay is None:
        raise ValueError("ema_adamw: ema_params without an ema_decay")
    if not count:
        return
    launches, rest = _launches_and_attrs(prepared, params, grads, steps, count, beta1, beta2,
                                         eps, decoupled_weight_decay, bias_correction,
                                         weight_decay)
    maximize = bool(maximize)
    moved: dict = {}  # (tensor id, device) -> the tensor there: copied once per call
    lists = (grads, params, exp_avgs, exp_avg_sqs, ema_params,
             max_exp_avg_sqs if amsgrad else None, master_params)
    for k, device, step, picked, scale, found in _each_launch(launches, lists, grad_scale,
                                                               found_inf, moved):
        grads_k, params_k, ms, vs, ss, max_vs, masters = picked
        max_vs = max_vs or []
        vars, copies = _vars_and_copies(params_k, masters)
        decay = _decay_on(ema_decay, ss, device, moved)
        if (prepared is not None and PREPARED_LAUNCHES and foreach is not False
                and device.type in _PREPARED_DEVICES):
            _launch_prepared(prepared.launches, (k, ss is not None), grads_k, vars, ms, vs, ss,
                             max_vs, copies or [], step, lr, decay, rest, maximize, scale, found,
                             prepared_checked)
            continue
        # only what is used: the op's defaults stay implicit
        extras = {key: value for key, value in (
            ("max_vs", max_vs or None), ("model_copies", copies),
            ("grad_scale", scale), ("found_inf", found), ("maximize", maximize or None))
            if value is not None}
        if foreach is not False:  # the group is one device and dtype already: no regrouping
            apply_fused_ema_adam_list(grads_k, vars, ms, vs, ss, step, lr, decay, *rest,
                                      **extras)
        elif (not extras and ss is not None and not isinstance(lr, Tensor)
              and not isinstance(decay, Tensor) and ms[0].dtype == vars[0].dtype
              and grads_k[0].dtype == vars[0].dtype):
            # what the single op can do: one call of it per parameter
            for update in zip(grads_k, vars, ms, vs, ss):
                npu_apply_fused_ema_adamw(*update, step, float(lr), float(decay), *rest)
        else:  # one launch of the list op per parameter
            for j in range(len(vars)):
                one = dict(extras)
                if max_vs:
                    one["max_vs"] = [max_vs[j]]
                if copies:
                    one["model_copies"] = [copies[j]]
                apply_fused_ema_adam_list([grads_k[j]], [vars[j]], [ms[j]], [vs[j]],
                                          None if ss is None else [ss[j]], step, lr, decay,
                                          *rest, **one)


def _launches_and_attrs(prepared: PreparedLaunches | None, params, grads, steps, count: int,
                        beta1, beta2, eps, decoupled_weight_decay, bias_correction,
                        weight_decay) -> tuple[list, tuple]:
    """A call's launches, one per device, dtype pair and step (``prepared``'s groups when it
    has them), and the attributes after lr and ema_decay in the ops' order: beta1, beta2, eps,
    mode, bias_correction, weight_decay."""
    groups = prepared.groups if prepared is not None else _launch_groups(params, grads)
    rest = (float(beta1), float(beta2), float(eps), 1 if decoupled_weight_decay else 0,
            bool(bias_correction), float(weight_decay))
    return _split_by_step(groups, steps, count), rest


def ema_adamw8bit(params: list[Tensor], grads: list[Tensor], exp_avg_codes: list[Tensor],
                  exp_avg_sq_codes: list[Tensor], exp_avg_absmaxes: list[Tensor],
                  exp_avg_sq_absmaxes: list[Tensor], ema_params: list[Tensor] | None,
                  steps: Tensor | Sequence[Tensor], *, qmap_m: Tensor, qmap_v: Tensor,
                  master_params: list[Tensor | None] | None = None, foreach: bool | None = None,
                  grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
                  amsgrad: bool = False, beta1: float, beta2: float, lr: float | Tensor,
                  weight_decay: float, eps: float, maximize: bool,
                  ema_decay: float | Tensor | None, bias_correction: bool = True,
                  decoupled_weight_decay: bool = True, prepared: PreparedLaunches | None = None,
                  prepared_checked: bool = False) -> None:
    r""":func:`ema_adamw` with 8-bit blockwise moments (the ``ApplyFusedEmaAdam8bitList``
    operator, op_host/apply_fused_ema_adam8bit_list/README.md): per parameter its moments as
    uint8 codes (``exp_avg_codes``, ``exp_avg_sq_codes``, the parameter's shape) and one fp32
    scale per block of 256 elements (``exp_avg_absmaxes``, ``exp_avg_sq_absmaxes``, ``[ceil(n /
    256)]``), decoded through the maps ``qmap_m`` (signed) and ``qmap_v`` (unsigned, fp32
    ``[256]``, one pair for the call, copied once to each other device), updated in fp32 and
    encoded again, in place; the EMA (``ema_params``) is fp32. Every other argument is
    :func:`ema_adamw`'s, the launches are grouped as there (one call of
    :func:`ascend_ema_adam.ops.apply_fused_ema_adam8bit_list` per device, dtype pair and step;
    ``foreach=False``: one per parameter, the same bits). ``prepared`` and ``prepared_checked``
    as :func:`ema_adamw`'s (prepared launches on the CPU device:
    ``_C.ApplyFusedEmaAdam8bitListLaunch``). AMSGrad is refused (the operator has no 8-bit running
    maximum)."""
    if amsgrad:
        raise ValueError("ema_adamw8bit: AMSGrad is not available with 8-bit state (the "
                         "operator keeps no running maximum of v)")
    count = len(params)
    if not (len(grads) == len(exp_avg_codes) == len(exp_avg_sq_codes) == len(exp_avg_absmaxes)
            == len(exp_avg_sq_absmaxes) == count
            and (ema_params is None or len(ema_params) == count)
            and (master_params is None or len(master_params) == count)):
        raise ValueError(
            f"ema_adamw8bit: {count} parameters but {len(grads)} gradients, "
            f"{len(exp_avg_codes)}/{len(exp_avg_sq_codes)} code and {len(exp_avg_absmaxes)}/"
            f"{len(exp_avg_sq_absmaxes)} scale tensors, "
            f"{'no' if ema_params is None else len(ema_params)} EMA and "
            f"{'no' if master_params is None else len(master_params)} master entries: one of "
            f"each per parameter")
    if ema_params is not None and ema_decay is None:
        raise ValueError("ema_adamw8bit: ema_params without an ema_decay")
    if not count:
        return
    launches, rest = _launches_and_attrs(prepared, params, grads, steps, count, beta1, beta2,
                                         eps, decoupled_weight_decay, bias_correction,
                                         weight_decay)
    moved: dict = {}
    lists = (grads, params, exp_avg_codes, exp_avg_sq_codes, exp_avg_absmaxes,
             exp_avg_sq_absmaxes, ema_params, master_params)
    for k, device, step_k, picked, scale, found in _each_launch(launches, lists, grad_scale,
                                                                 found_inf, moved):
        grads_k, params_k, ms, vs, m_scales, v_scales, ss, masters = picked
        vars, copies = _vars_and_copies(params_k, masters)
        decay = _decay_on(ema_decay, ss, device, moved)
        lr_k = _on(lr, device, moved) if isinstance(lr, Tensor) else lr
        q_m, q_v = _on(qmap_m, device, moved), _on(qmap_v, device, moved)
        if (prepared is not None and PREPARED_LAUNCHES and foreach is not False
                and device.type == "cpu"):
            _launch_prepared8bit(prepared.launches, (k, ss is not None), grads_k, vars, ms, vs,
                                 m_scales, v_scales, ss, copies, step_k, q_m, q_v, lr_k, decay,
                                 rest, bool(maximize), scale, found, prepared_checked)
            continue
        if foreach is not False:
            _launch_adam8bit_list(grads_k, vars, ms, vs, m_scales, v_scales, ss, copies, step_k,
                                  q_m, q_v, lr_k, decay, rest, bool(maximize), scale, found)
            continue
        for j in range(len(vars)):  # one launch per parameter
            _launch_adam8bit_list(
                [grads_k[j]], [vars[j]], [ms[j]], [vs[j]], [m_scales[j]], [v_scales[j]],
                None if ss is None else [ss[j]], None if copies is None else [copies[j]],
                step_k, q_m, q_v, lr_k, decay, rest, bool(maximize), scale, found)


#: The devices the 8-bit launches reach (checked by FusedEmaAdamW before a step writes).
ADAM8BIT_DEVICES = frozenset({"cpu"} | ({"npu"} if _C.build_info()["npu_kernel"] else set()))


def _launch_adam8bit_list(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, copies, step, qmap_m,
                          qmap_v, lr, ema_decay, rest, maximize, grad_scale, found_inf) -> None:
    """One call of the 8-bit list op (``ss``/``copies`` None when absent; ``rest``: beta1,
    beta2, eps, mode, bias_correction, weight_decay), in place: the op checks the whole call
    and launches it in slices of at most 256 entries."""
    apply_fused_ema_adam8bit_list(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, qmap_m,
                                  qmap_v, step, lr, ema_decay, *rest, model_copies=copies,
                                  grad_scale=grad_scale, found_inf=found_inf,
                                  maximize=maximize)


def _launch_prepared8bit(launches: dict, slot: tuple, grads, vars, ms, vs, m_absmaxes,
                         v_absmaxes, ss, copies, step, qmap_m, qmap_v, lr, decay, rest: tuple,
                         maximize: bool, scale: Tensor | None, found: Tensor | None,
                         checked: bool) -> None:
    """:func:`_launch_prepared` of the 8-bit list op: its launch kept per slot with what decides
    it besides the lists (the attributes, which one-element tensors are given, the maps)."""
    lr = lr if isinstance(lr, Tensor) else float(lr)
    decay = decay if isinstance(decay, Tensor) else float(decay)
    kind = (rest, maximize, scale is not None, found is not None, isinstance(lr, Tensor),
            isinstance(decay, Tensor))
    kept = launches.get(slot)
    if (kept is not None and kept[0] == kind and kept[1][0] is qmap_m and kept[1][1] is qmap_v
            and kept[2].run(grads, step, lr, decay, scale, found, checked)):
        return
    launches.pop(slot, None)  # (its executors go before the new ones are made)
    launch = _C.ApplyFusedEmaAdam8bitListLaunch(grads, vars, ms, vs, m_absmaxes, v_absmaxes,
                                                ss or [], copies or [], qmap_m, qmap_v, step, scale,
                                                found, lr, decay, *rest, maximize)
    launches[slot] = (kind, (qmap_m, qmap_v), launch)
    if not launch.run(grads, step, lr, decay, scale, found):
        raise RuntimeError("FusedEmaAdamW: a launch prepared from this step's tensors refused "
                           "them")  # cannot happen: nothing changed since it was prepared


def fused_ema_adamw(grad: list[Tensor], var: list[Tensor], m: list[Tensor], v: list[Tensor],
                    s: list[Tensor], step: Tensor, lr: float, ema_decay: float, beta1: float,
                    beta2: float, eps: float, mode: int, bias_correction: bool,
                    weight_decay: float) -> None:
    """MindSpeed's functional form (same signature): :func:`ema_adamw` over plain lists, in
    place, one fused launch per device and dtype of the parameters. ``step`` is the int64
    one-element step, copied once to each other device; ``mode`` 1 is AdamW, 0 Adam."""
    if mode not in (0, 1):
        raise ValueError(f"fused_ema_adamw: mode is {mode!r}, expected 0 (Adam, L2 weight "
                         f"decay) or 1 (AdamW, decoupled decay)")
    if not len(grad) == len(var) == len(m) == len(v) == len(s):
        raise ValueError(f"fused_ema_adamw: {len(grad)} gradients, {len(var)} parameters, "
                         f"{len(m)}, {len(v)} and {len(s)} state tensors: one of each per "
                         f"parameter")
    ema_adamw(var, grad, m, v, [], s, step, amsgrad=False, beta1=beta1, beta2=beta2, lr=lr,
              weight_decay=weight_decay, eps=eps, maximize=False, ema_decay=ema_decay,
              bias_correction=bias_correction, decoupled_weight_decay=bool(mode))


class PreparedLaunches:
    """What :func:`ema_adamw` (or :func:`ema_adamw8bit`) keeps for lists handed in again and
    again (FusedEmaAdamW's cached groups): their grouping into launches, made once, and per
    launch its prepared phase 2 (``_C.ApplyFusedEmaAdamListLaunch``,
    ``_C.ApplyFusedEmaAdam8bitListLaunch``: CANN's repeatable executors), made at its first run.
    Valid while the lists hold the same tensors in the same order (the caller's promise); the
    gradients and steps may be new tensors of the same kind: a launch that finds anything its
    phase 1 checked changed is prepared again."""

    __slots__ = ("groups", "launches")

    def __init__(self, params: list[Tensor], grads: list[Tensor]):
        self.groups = _launch_groups(params, grads)
        # (launch index, whether it has the EMA: ema_every alternates the two) -> (what decides
        # the launch besides its tensors, the launch)
        self.launches: dict[tuple[int, bool], tuple] = {}


def _launch_groups(params: list[Tensor], grads: list[Tensor]) -> list[tuple]:
    """``(device, indexes)`` per device, parameter dtype and gradient dtype, in order of first
    appearance; ``indexes`` None: every parameter (the usual case, nothing to pick)."""
    groups: dict[tuple, list[int]] = {}
    for k, (p, g) in enumerate(zip(params, grads)):
        key = (p.device, p.dtype, g.dtype)
        indexes = groups.get(key)
        if indexes is None:
            groups[key] = indexes = []
        indexes.append(k)
    if len(groups) == 1:
        return [(next(iter(groups))[0], None)]
    return [(key[0], indexes) for key, indexes in groups.items()]


def _split_by_step(groups: list[tuple], steps, count: int) -> list[tuple]:
    """``(device, indexes, step)`` per launch: each group split by step tensor (parameters
    sharing one share a launch), in order of first appearance."""
    if isinstance(steps, Tensor):
        return [(device, indexes, steps) for device, indexes in groups]
    if len(steps) != count:
        raise ValueError(f"ema_adamw: {count} parameters but {len(steps)} steps: one step "
                         f"tensor for all, or one per parameter")
    out = []
    for device, indexes in groups:
        by_step = _by_identity(steps, range(count) if indexes is None else indexes)
        if len(by_step) == 1:
            out.append((device, indexes, by_step[0][0]))
        else:
            out += [(device, ks, step) for step, ks in by_step]
    return out


def _by_identity(steps, ks) -> list[tuple[Tensor, list[int]]]:
    """``(step, its indexes)`` per distinct tensor among ``steps[k]`` for ``k`` in ``ks``, in
    order of first appearance: found by id(), and while dynamo traces by ``is`` (dynamo of torch
    2.7 cannot trace id() of a tensor; the search is quadratic, but a trace runs once)."""
    if torch.compiler.is_compiling():
        found: list[tuple[Tensor, list[int]]] = []
        for k in ks:
            for step, own in found:
                if step is steps[k]:
                    own.append(k)
                    break
            else:
                found.append((steps[k], [k]))
        return found
    by_id: dict[int, tuple[Tensor, list[int]]] = {}
    for k in ks:
        step = steps[k]
        entry = by_id.get(id(step))
        if entry is None:
            by_id[id(step)] = entry = (step, [])
        entry[1].append(k)
    return list(by_id.values())


def _raise_length_error(count: int, *lists) -> None:
    for name, values in zip(("gradients", "exp_avgs", "exp_avg_sqs", "ema_params",
                             "max_exp_avg_sqs", "master_params"), lists):
        if values is not None and len(values) != count:
            raise ValueError(f"ema_adamw: {count} parameters but {len(values)} {name}: one of "
                             f"each per parameter")


def _each_launch(launches: list[tuple], lists: tuple, grad_scale: Tensor | None,
                 found_inf: Tensor | None, moved: dict):
    """Per launch of a call (``_launches_and_attrs``): its index, device and step, the entries of
    ``lists`` it takes (a None list stays None), and GradScaler's tensors; every tensor on the
    launch's device."""
    for k, (device, indexes, step) in enumerate(launches):
        picked = lists
        if indexes is not None:  # (None, the usual case: every parameter in this launch)
            pick = _picker(indexes)
            picked = tuple(None if xs is None else pick(xs) for xs in lists)
        yield (k, device, _on(step, device, moved), picked,
               None if grad_scale is None else _on(grad_scale, device, moved),
               None if found_inf is None else _on(found_inf, device, moved))


def _vars_and_copies(params: list[Tensor], masters: list[Tensor | None] | None) -> tuple:
    """A launch's updated weights and model copies: the fp32 master weights and the parameters
    (their 16-bit copies) where masters are given, else the parameters and no copies (None)."""
    masters = [] if masters is None else [m for m in masters if m is not None]
    return (masters, params) if masters else (params, None)


def _decay_on(ema_decay, ss: list[Tensor] | None, device: torch.device, moved: dict):
    """The launch's EMA decay: on its device when a tensor, 1.0 (unused) without an EMA list."""
    if ss is None:
        return 1.0
    return _on(ema_decay, device, moved) if isinstance(ema_decay, Tensor) else ema_decay


def _picker(indexes: list[int]):
    if len(indexes) == 1:
        k = indexes[0]
        return lambda xs: [xs[k]]
    get = itemgetter(*indexes)
    return lambda xs: list(get(xs))


def _on(t: Tensor, device: torch.device, moved: dict) -> Tensor:
    """``t`` on ``device``, copied there once per call of ema_adamw."""
    if t.device == device:
        return t
    key = (id(t), device)
    out = moved.get(key)
    if out is None:
        out = moved[key] = t.to(device, non_blocking=True)
    return out


def _launch_prepared(launches: dict, slot: tuple, grads: list[Tensor], vars: list[Tensor],
                     ms: list[Tensor], vs: list[Tensor], ss: list[Tensor] | None,
                     max_vs: list[Tensor], copies: list[Tensor], step: Tensor, lr, decay,
                     rest: tuple, maximize: bool, scale: Tensor | None, found: Tensor | None,
                     checked: bool) -> None:
    """A launch through its prepared phase 2, prepared again when anything its phase 1 checked
    has changed. Each slot keeps one launch, with what decides it besides the tensors (the
    attributes, which one-element tensors are given): a change of those replaces it."""
    # lr and the decay: numbers, or one-element tensors (a capturable lr, the decay a GradScaler
    # or torch.compile keeps on the device)
    lr = lr if isinstance(lr, Tensor) else float(lr)
    decay = decay if isinstance(decay, Tensor) else float(decay)
    kind = (rest, maximize, scale is not None, found is not None, isinstance(lr, Tensor),
            isinstance(decay, Tensor))
    kept = launches.get(slot)
    if kept is not None and kept[0] == kind and kept[1].run(grads, step, lr, decay, scale,
                                                            found, checked):
        return
    launches.pop(slot, None)  # (its executors go before the new ones are made)
    launch = _C.ApplyFusedEmaAdamListLaunch(grads, vars, ms, vs, ss or [], max_vs, copies, step,
                                            scale, found, lr, decay, *rest, maximize)
    launches[slot] = (kind, launch)
    if not launch.run(grads, step, lr, decay, scale, found):
        raise RuntimeError("FusedEmaAdamW: a launch prepared from this step's tensors refused "
                           "them")  # cannot happen: nothing changed since it was prepared
