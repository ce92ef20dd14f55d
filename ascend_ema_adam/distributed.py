"""FusedEmaAdamW under data-parallel sharding: ZeroRedundancyOptimizer and FSDP2.

* ``torch.distributed.optim.ZeroRedundancyOptimizer(params, optimizer_class=FusedEmaAdamW, ...)``
  works as is: each rank's local FusedEmaAdamW updates the parameters it owns (EMA included),
  ZeRO broadcasts the new weights, ``consolidate_state_dict`` gathers the EMA with the moments,
  and the step, warm-up counter and decay travel in the param groups, which ZeRO keeps in sync.
  The EMA of a parameter lives on its owner rank only: :func:`gather_full_ema_state_dict` and
  :func:`swap_ema` bring it to every rank.
* FSDP2 (``fully_shard``): parameters, gradients and state are DTensors; the optimizer calls the
  kernel on each rank's local shard, so the EMA stays sharded.
  :func:`gather_full_ema_state_dict` all-gathers it into a full state dict for saving.
* Fused gradient clipping is global: DTensor gradients all-reduce their partial norms over their
  mesh; under ZeRO, :func:`set_clip_process_group` names the group to reduce over.

Every function here is a collective: call it on all ranks of the group, in the same order.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from itertools import chain
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

from .optim import FusedEmaAdamW
from .optim._common import _dtensor_type
from .optim._ema import _checked_stash_device, _weights_swapped, params_with_ema, require_ema

__all__ = ["gather_full_ema_state_dict", "swap_ema", "local_optimizer", "set_clip_process_group"]


def _is_zero(optimizer) -> bool:
    from torch.distributed.optim import ZeroRedundancyOptimizer
    return isinstance(optimizer, ZeroRedundancyOptimizer)


def local_optimizer(optimizer) -> FusedEmaAdamW:
    """The FusedEmaAdamW doing the work: ``optimizer`` itself, or a ZeRO wrapper's ``.optim``."""
    inner = optimizer.optim if _is_zero(optimizer) else optimizer
    if not isinstance(inner, FusedEmaAdamW):
        raise TypeError(f"expected FusedEmaAdamW or a ZeroRedundancyOptimizer wrapping it, got "
                        f"{type(inner).__name__}")
    return inner


def set_clip_process_group(optimizer, group=None) -> None:
    """Make fused gradient clipping (``max_grad_norm``, ``clip_grad_norm_``) global over the
    ranks: the local optimizer's partial norms are all-reduced over ``group`` (default: a
    ZeroRedundancyOptimizer's own process group, whose ranks each hold a share of the
    parameters). Not needed for FSDP2: DTensor gradients reduce over their mesh by themselves.
    Not a collective."""
    inner = local_optimizer(optimizer)
    if group is None:
        if not _is_zero(optimizer):
            raise ValueError("set_clip_process_group: pass the process group that shares the "
                             "parameters (only a ZeroRedundancyOptimizer brings its own)")
        group = optimizer.process_group
    inner.clip_process_group = group


def _zero_ema_owners(zero) -> list[tuple[Tensor, int | None]]:
    """For each parameter of a ZeroRedundancyOptimizer (global order): the parameter and the
    rank of the process group that holds its EMA (None: no EMA yet, e.g. never had a grad)."""
    inner = local_optimizer(zero)
    params = list(chain.from_iterable(g["params"] for g in zero.param_groups))
    index = {p: i for i, p in enumerate(params)}
    mine = [index[p] for p, _ in params_with_ema(inner.param_groups, inner.state)]
    everyone: list[Any] = [None] * dist.get_world_size(zero.process_group)
    dist.all_gather_object(everyone, mine, group=zero.process_group)
    owner: list[int | None] = [None] * len(params)
    for rank, indices in enumerate(everyone):
        for i in indices:
            owner[i] = rank
    return list(zip(params, owner))


def _broadcast_(t: Tensor, src: int, group) -> None:
    """Broadcast a contiguous tensor's bytes from group rank ``src`` (dtype-agnostic: gloo and
    HCCL move bytes for any dtype)."""
    dist.broadcast(t.view(-1).view(torch.uint8), src=dist.get_global_rank(group, src),
                   group=group)


def _zero_ema_tensors(zero) -> dict[Tensor, Tensor]:
    """Every parameter's EMA as a full tensor on every rank (copies; owner ranks send theirs)."""
    inner = local_optimizer(zero)
    group = zero.process_group
    me = dist.get_rank(group)
    out = {}
    for p, owner in _zero_ema_owners(zero):
        if owner is None:
            continue
        if owner == me:
            # in the parameter's dtype (an fp32 EMA of a 16-bit parameter rounds to nearest even)
            buf = inner.state[p]["ema_params"].detach().to(p.dtype).clone(
                memory_format=torch.contiguous_format)
        else:
            buf = torch.empty(p.shape, dtype=p.dtype, device=p.device)
        _broadcast_(buf, owner, group)
        out[p] = buf
    return out


def gather_full_ema_state_dict(model: torch.nn.Module, optimizer, *, cpu_offload: bool = True,
                               rank0_only: bool = False) -> dict[str, Tensor]:
    """The full (unsharded) EMA weights as ``model.state_dict()`` keys, for saving.

    ``optimizer`` is a FusedEmaAdamW (FSDP2/DTensor parameters are all-gathered shard by
    shard) or a ZeroRedundancyOptimizer wrapping one (each EMA is broadcast from its owner).
    Buffers and parameters without EMA state (in a group with ``ema_decay=None`` too) keep
    their own (full) values, so the result loads into an unsharded copy of the model with
    ``load_state_dict``. RuntimeError (on every rank, before any collective) when no group has
    an EMA.

    Args:
        cpu_offload: return CPU tensors (default True).
        rank0_only: return the dict on rank 0 only (an empty dict elsewhere); every rank still
            takes part in the collectives.
    """
    dtensor = _dtensor_type()
    if _is_zero(optimizer):
        # (ZeRO keeps the groups' ema_decay equal on every rank: all raise alike)
        require_ema(local_optimizer(optimizer).param_groups, "gather_full_ema_state_dict()")
        emas = _zero_ema_tensors(optimizer)
        source = model.state_dict(keep_vars=True)
        items = [(k, emas.get(v, v) if isinstance(v, Tensor) else v) for k, v in source.items()]
    else:
        items = list(local_optimizer(optimizer).ema_state_dict(model).items())
    keep = not rank0_only or not dist.is_initialized() or dist.get_rank() == 0
    out: dict[str, Tensor] = OrderedDict()
    for name, value in items:
        if isinstance(value, Tensor):
            if dtensor is not None and isinstance(value, dtensor):
                value = value.full_tensor()  # collective, same order on every rank
            else:
                value = value.detach().clone()
            if cpu_offload:
                value = value.cpu()
        if keep:
            out[name] = value
    return out


@contextlib.contextmanager
def swap_ema(optimizer, stash_device: str | torch.device = "cpu"):
    """Like :meth:`FusedEmaAdamW.swap_ema`, for a ZeroRedundancyOptimizer too: inside, every
    rank's parameters hold the EMA weights (broadcast from the owners); on exit, also on an
    exception or a failure half-way through the swap, each rank gets its own weights back. For a
    plain FusedEmaAdamW (FSDP2 included: each rank swaps its shards) it is
    ``optimizer.swap_ema()``."""
    if not _is_zero(optimizer):
        with local_optimizer(optimizer).swap_ema(stash_device) as inner:
            yield inner
        return
    _checked_stash_device(stash_device)  # before the collective: every rank fails alike
    require_ema(local_optimizer(optimizer).param_groups, "swap_ema()")
    emas = _zero_ema_tensors(optimizer)
    # popped one by one: each broadcast copy is freed once it is in its parameter
    with _weights_swapped((emas.popitem() for _ in range(len(emas))), stash_device):
        yield local_optimizer(optimizer)
