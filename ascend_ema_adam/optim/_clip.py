"""Fused gradient clipping: the total gradient norm is computed on the device over the gradients
as they are (scaled by a GradScaler or not), and the clip coefficient is folded into the op's
gradient divisor (``grad_scale``, which the kernel divides each gradient by as it reads it), so
clipping costs one read of the gradients, no write of them and no host sync.

``torch.nn.utils.clip_grad_norm_``'s formulas, on the unscaled norm ``N = N_raw / scale``::

    coef    = min(max_norm / (N + 1e-6), 1)
    divisor = scale / coef        (the kernel computes g / divisor)

A non-finite norm sets the step's ``found_inf``: the kernel writes nothing and every counter
stays (as for a GradScaler's inf). Under ZeRO (``clip_process_group``) and FSDP2 (DTensor
gradients sharded over a 1-D mesh) the norm is global: the local sums of ``|g|^p`` (the maximum
for the inf-norm) are all-reduced before the root."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor
from torch.utils._foreach_utils import _group_tensors_by_device_and_dtype, _has_foreach_support

from ._common import counter_device
from ._scaler import _Scaler


def _tensor_norms(tensors: list[Tensor], norm_type: float) -> list[Tensor]:
    """Per-tensor norms as torch's ``get_total_norm`` makes them (foreach where it can); 16-bit
    gradients in fp32 (a GradScaler-scaled fp16 norm would overflow fp16)."""
    norms: list[Tensor] = []
    if not tensors:  # (torch's grouping refuses an empty list)
        return norms
    for (device, dtype), ([ts], _) in _group_tensors_by_device_and_dtype([tensors]).items():
        wide = None if dtype in (torch.float32, torch.float64) else torch.float32
        if _has_foreach_support(ts, device):
            norms.extend(torch._foreach_norm(ts, norm_type, dtype=wide))
        else:
            norms.extend(torch.linalg.vector_norm(g, norm_type, dtype=wide) for g in ts)
    return norms


def _shards(grads: list[Tensor], dtensor) -> tuple[list[Tensor], dict[Any, list[Tensor]]]:
    """Plain local tensors (plain gradients, replicated DTensors: counted once), and the local
    shards of sharded DTensors by the process group of their mesh."""
    plain: list[Tensor] = []
    sharded: dict[Any, list[Tensor]] = {}
    for g in grads:
        if dtensor is None or not isinstance(g, dtensor):
            plain.append(g)
        elif all(p.is_replicate() for p in g.placements):
            plain.append(g.to_local())
        elif g.device_mesh.ndim == 1 and g.placements[0].is_shard():
            sharded.setdefault(g.device_mesh.get_group(), []).append(g.to_local())
        else:
            raise NotImplementedError(
                f"fused gradient clipping: a DTensor gradient with placements {g.placements} on "
                f"a {g.device_mesh.ndim}-D mesh (supported: plain, replicated, or sharded over a "
                f"1-D mesh as FSDP2's fully_shard makes them)")
    return plain, sharded


def total_norm(grads: list[Tensor], norm_type: float, process_group, dtensor,
               device: torch.device) -> Tensor:
    """The total ``norm_type``-norm of ``grads`` (0-d fp32 on the first gradient's device, or
    ``device`` without any), global over ``process_group`` and over the meshes of sharded
    DTensors. Without either it is exactly ``torch.nn.utils.get_total_norm``'s value."""
    norm_type = float(norm_type)
    plain, sharded = _shards(grads, dtensor)
    if not sharded and process_group is None:
        norms = _tensor_norms(plain, norm_type)
        if not norms:
            return torch.zeros((), dtype=torch.float32, device=device)
        first = norms[0].device
        return torch.linalg.vector_norm(torch.stack([n.to(first) for n in norms]), norm_type)
    if not (norm_type > 0):
        raise NotImplementedError(f"fused gradient clipping across ranks: norm_type "
                                  f"{norm_type} (supported: p > 0 and inf)")
    inf = math.isinf(norm_type)
    op = dist.ReduceOp.MAX if inf else dist.ReduceOp.SUM
    first = next((g.device for g in plain + [t for ts in sharded.values() for t in ts]), device)

    def partial(tensors: list[Tensor]) -> Tensor:
        # the local sum of |g|^p (max |g| for inf): what the ranks add (or take the max of)
        norms = [n.to(first, torch.float32) for n in _tensor_norms(tensors, norm_type)]
        if not norms:
            return torch.zeros((), dtype=torch.float32, device=first)
        stacked = torch.stack(norms)
        return stacked.max() if inf else stacked.pow(norm_type).sum()

    parts = []
    for group, tensors in sharded.items():  # the same meshes, in the same order, on all ranks
        part = partial(tensors)
        dist.all_reduce(part, op=op, group=group)
        parts.append(part)
    part = partial(plain)
    if process_group is not None:
        dist.all_reduce(part, op=op, group=process_group)
    parts.append(part)
    acc = torch.stack(parts)
    return acc.max() if inf else acc.sum().pow(1.0 / norm_type)


def clip_scalers(norm: Tensor, max_norms: list, scaler: _Scaler):
    """From the raw total norm of this step (of the gradients as they are): the step's scaler
    for the counters (``found_inf`` also set by a non-finite norm), one per entry of
    ``max_norms`` (None: not clipped) with the divisor ``scale / coef``, and the unscaled norm."""
    scale = scaler.grad_scale
    unscaled = norm if scale is None else norm / scale.to(norm.device).reshape(())
    nonfinite = torch.logical_not(torch.isfinite(unscaled)).to(torch.float32).reshape(1)
    if scaler.found_inf is None:
        found = nonfinite
    else:
        found = scaler.found_inf + nonfinite.to(scaler.found_inf.device)
    counters = _Scaler(scale, found)
    divisors: dict[float, Tensor] = {}
    out = []
    for max_norm in max_norms:
        if max_norm is None:
            out.append(counters)
            continue
        key = float(max_norm)
        if key not in divisors:
            coef = torch.clamp(key / (unscaled + 1e-6), max=1.0)  # torch's clip_coef_clamped
            divisors[key] = ((1.0 if scale is None else scale.to(norm.device).reshape(()))
                             / coef).reshape(1)
        out.append(_Scaler(divisors[key], found))
    return counters, out, unscaled


def check_max_norm(max_norm, name: str = "max_grad_norm") -> str | None:
    """The error for a clipping threshold that is neither None nor a finite number >= 0."""
    if max_norm is None:
        return None
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) or not (
            0.0 <= max_norm < math.inf):
        return f"Invalid {name}: {max_norm!r} (None, or a finite number >= 0)"
    return None


def requested_norm(grads: list[Tensor], max_norm, norm_type: float, error_if_nonfinite: bool,
                   process_group, dtensor, device: torch.device) -> Tensor:
    """``FusedEmaAdamW.clip_grad_norm_``'s norm: the threshold checked, the total norm of
    ``grads`` computed on the device (``error_if_nonfinite``: read on the host, a sync, and a
    non-finite one raises as torch's)."""
    error = check_max_norm(max_norm, "max_norm")
    if error is not None:
        raise ValueError(error)
    norm = total_norm(grads, norm_type, process_group, dtensor, device)
    if error_if_nonfinite and torch.logical_not(torch.isfinite(norm)):  # a host sync
        raise RuntimeError(
            f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
            f"non-finite, so it cannot be clipped. To disable this error and scale the "
            f"gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return norm


def step_clipping(request, plan, scaler: _Scaler, process_group, dtensor, groups: list[dict]):
    """For a step that clips (``request``: ``clip_grad_norm_``'s (norm, max_norm) for this step,
    or a group's ``max_grad_norm``; ``plan``: per group of ``groups`` ``(i, group, items,
    cached, grads)``): the scaler of the counters, one per group (None: no clipping at all) and
    the unscaled total norm (None without clipping)."""
    if request is not None:
        norm, max_norm = request
        max_norms = [max_norm] * len(plan)
    else:
        max_norms = [group.get("max_grad_norm") for _, group, *_ in plan]
        if all(m is None for m in max_norms):
            return scaler, None, None
        grads = [g for (_, _, items, cached, grads), max_norm in zip(plan, max_norms)
                 if max_norm is not None
                 for g in (grads if cached is not None else [item.grad for item in items])]
        norm = total_norm(grads, 2.0, process_group, dtensor,
                          counter_device(groups, scaler.found_inf))
    return clip_scalers(norm, max_norms, scaler)
