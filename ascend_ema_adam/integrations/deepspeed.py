"""FusedEmaAdamW as DeepSpeed's client optimizer under ZeRO, offloaded to the host CPU (tested
with DeepSpeed 0.19.8, the ``deepspeed`` extra).

DeepSpeed hands a client optimizer its fp32 partitions: ZeRO-1/2 one flat partition per param
group, ZeRO-3 one per sub-group (``sub_group_size``). FusedEmaAdamW keeps the EMA as state of
those partitions (``ema_params``, shaped like them), so DeepSpeed's fragment mapping finds it
(``deepspeed.utils.safe_get_full_optimizer_state(param, "ema_params")``) and its checkpoints
carry it. What this module adds:

* :func:`deepspeed_config`: the config keys DeepSpeed needs to take FusedEmaAdamW as an
  offloaded optimizer (it refuses any but its own CPU Adam otherwise);
* :func:`attach` (done by :func:`initialize`): DeepSpeed calls ``step()`` once per part of an
  engine step (ZeRO-3: per sub-group; ZeRO-1/2: per param group), so the warm-up counter
  ``num_updates`` and the group steps would advance once per part (2x with two sub-groups).
  Each engine step runs inside :meth:`FusedEmaAdamW.partial_steps`, which counts the parts as
  one step. The optimizer is told the boundary rather than counting per parameter, so plain
  use keeps MindSpeed's optimizer-wide counter;
* :func:`full_ema`, :func:`ema_state_dict` (an EMA model for saving) and :func:`swap_ema`
  (the EMA weights in the model for evaluation, ZeRO-3 included, and back).

Every helper taking an engine is a collective unless it says otherwise: call it on all ranks,
in the same order. DeepSpeed itself is imported when a function needs it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from ..optim import FusedEmaAdamW
from ..optim._ema import _checked_stash_device, _weights_swapped

__all__ = ["REQUIRED_CONFIG", "deepspeed_config", "initialize", "attach", "local_optimizer",
           "full_ema", "ema_state_dict", "swap_ema"]

#: What DeepSpeed's engine (``_configure_optimizer``) needs to accept FusedEmaAdamW with an
#: offloaded optimizer: without the first it raises for any client optimizer but its own CPU
#: Adam/Lion; without the second it refuses an optimizer it has not tested with ZeRO.
REQUIRED_CONFIG = {"zero_force_ds_cpu_optimizer": False, "zero_allow_untested_optimizer": True}

_EMA = "ema_params"
_OFFLOADS = ("cpu", None)


def deepspeed_config(base: Mapping[str, Any] | None = None, *, stage: int | None = None,
                     offload: str | None = "cpu") -> dict[str, Any]:
    """A DeepSpeed config for FusedEmaAdamW: ``base`` (not modified) with
    :data:`REQUIRED_CONFIG` and ``zero_optimization.offload_optimizer.device = "cpu"`` merged in.

    Args:
        base: the rest of the config (batch sizes, precision, ...); its
            ``offload_optimizer`` options (``pin_memory``, ...) are kept.
        stage: the ZeRO stage (1, 2 or 3); may come from ``base`` instead. Offloading needs one.
        offload: ``"cpu"`` (default): the optimizer steps on the host; None: the config's
            offload settings are left as they are (without any, the optimizer steps where the
            partitions are, e.g. on the NPU).

    Raises ``ValueError`` for a config that contradicts what FusedEmaAdamW needs (an
    ``optimizer`` section, a key of :data:`REQUIRED_CONFIG` set otherwise, another offload
    device, no ZeRO stage to offload with), ``TypeError`` for a config that is not a mapping.
    """
    if base is None:
        base = {}
    if not isinstance(base, Mapping):
        raise TypeError(f"deepspeed_config: base must be a dict (a loaded JSON config), got "
                        f"{type(base).__name__}")
    if offload not in _OFFLOADS:
        raise ValueError(f"deepspeed_config: offload={offload!r}: 'cpu' or None (NVMe offload "
                         f"swaps the optimizer's state files and is not tested with FusedEmaAdamW)")
    if stage is not None and (isinstance(stage, bool) or stage not in (0, 1, 2, 3)):
        raise ValueError(f"deepspeed_config: stage={stage!r}: a ZeRO stage 0, 1, 2 or 3")
    config = copy.deepcopy(dict(base))
    if "optimizer" in config:
        raise ValueError("deepspeed_config: the config's 'optimizer' section makes DeepSpeed "
                         "build its own optimizer; drop it and pass FusedEmaAdamW as "
                         "deepspeed.initialize(optimizer=...)")
    for key, value in REQUIRED_CONFIG.items():
        if key in config and config[key] != value:
            raise ValueError(f"deepspeed_config: {key}={config[key]!r}, but FusedEmaAdamW as a "
                             f"client optimizer needs {value!r}")
        config[key] = value
    zero = config.setdefault("zero_optimization", {})
    if not isinstance(zero, Mapping):
        raise TypeError(f"deepspeed_config: zero_optimization must be a dict, got "
                        f"{type(zero).__name__}")
    zero = config["zero_optimization"] = dict(zero)
    if stage is not None:
        if "stage" in zero and zero["stage"] != stage:
            raise ValueError(f"deepspeed_config: stage={stage} but the config says "
                             f"zero_optimization.stage={zero['stage']!r}")
        zero["stage"] = stage
    if offload is not None:
        if zero.get("stage", 0) not in (1, 2, 3):
            raise ValueError(f"deepspeed_config: offloading the optimizer needs ZeRO stage 1, 2 "
                             f"or 3 (zero_optimization.stage is {zero.get('stage', 0)!r}): pass "
                             f"stage=")
        options = dict(zero.get("offload_optimizer") or {})
        if options.get("device", offload) != offload:
            raise ValueError(f"deepspeed_config: zero_optimization.offload_optimizer.device is "
                             f"{options['device']!r}, but offload={offload!r}")
        options["device"] = offload
        zero["offload_optimizer"] = options
    return config


def local_optimizer(engine) -> FusedEmaAdamW:
    """The FusedEmaAdamW inside a DeepSpeed engine (or inside its ZeRO optimizer). Not a
    collective."""
    opt = getattr(engine, "optimizer", engine)
    seen = []
    while opt is not None and not isinstance(opt, FusedEmaAdamW):
        seen.append(type(opt).__name__)
        opt = getattr(opt, "optimizer", None)
    if opt is None:
        raise TypeError(f"no FusedEmaAdamW inside {' -> '.join(seen) or type(engine).__name__}: "
                        f"pass it as deepspeed.initialize(optimizer=FusedEmaAdamW(...))")
    return opt


def _zero_optimizer(engine):
    """The engine's wrapper of the client optimizer (ZeRO-1/2/3, bf16), or None without one."""
    outer = getattr(engine, "optimizer", None)
    return None if outer is None or isinstance(outer, FusedEmaAdamW) else outer


def _flat_partitions(zero) -> list[Tensor]:
    """The fp32 partitions the client optimizer updates: ZeRO-3's sub-groups, ZeRO-1/2's (and
    the bf16 optimizer's) param groups."""
    for name in ("fp32_partitioned_groups_flat", "single_partition_of_fp32_groups",
                 "fp32_groups_flat_partition"):
        flats = getattr(zero, name, None)
        if flats is not None:
            return list(flats)
    raise TypeError(f"{type(zero).__name__} has no fp32 partitions this module knows: the "
                    f"helpers need DeepSpeed's ZeRO (stage 1, 2 or 3) or bf16 optimizer")


def _checked_engine(engine) -> None:
    """Raises unless the engine has a ZeRO optimizer whose every fp32 partition has its EMA (all
    ranks step together, so every rank raises alike, before any collective); relinks the
    partitions' EMA if a load made the links stale. A group without an EMA (``ema_decay=None``)
    is refused: every trained parameter's EMA is read."""
    base = local_optimizer(engine)
    off = [i for i, g in enumerate(base.param_groups) if g["ema_decay"] is None]
    if off:
        raise RuntimeError(f"FusedEmaAdamW param_groups {off} have no EMA (ema_decay=None): the "
                           f"DeepSpeed EMA helpers read every trained parameter's EMA")
    zero = _zero_optimizer(engine)
    if zero is None:
        raise TypeError("the engine steps FusedEmaAdamW on the model's own parameters (no ZeRO "
                        "optimizer): use the optimizer's swap_ema() and ema_state_dict()")
    flats = _flat_partitions(zero)
    missing = sum(1 for flat in flats if _EMA not in base.state.get(flat, {}))
    if missing:
        raise RuntimeError(f"{missing} of the engine's {len(flats)} fp32 partitions have no EMA "
                           f"yet: it is made at the first engine step")
    _relink_if_stale(zero, base)


# -- the engine step as one optimizer step


def attach(engine) -> FusedEmaAdamW:
    """Make the engine's steps count once in FusedEmaAdamW: each call of the ZeRO optimizer's
    ``step()`` (what ``engine.step()`` calls at a gradient-accumulation boundary) runs inside
    :meth:`FusedEmaAdamW.partial_steps`, so ``num_updates`` and the group steps
    (``step_scope="group"``) advance once per engine step however many parts DeepSpeed steps.
    Per-parameter steps count per fp32 partition, once per engine step too. After each step,
    ZeRO-1/2's fragment links of ``ema_params`` are renewed when stale (DeepSpeed 0.19.8 links
    them once, at the first step, before a second param group has state, and a loaded
    checkpoint replaces the state tensors).

    Idempotent; not a collective. Returns the engine's FusedEmaAdamW. ``ValueError`` (before
    anything changes) for fused clipping (``max_grad_norm``): DeepSpeed clips itself
    (``gradient_clipping``), and a step in parts cannot take one norm over all parameters."""
    base = local_optimizer(engine)
    _refuse_fused_clipping(base)
    zero = _zero_optimizer(engine)
    if zero is None:  # no ZeRO: one step() per engine step already
        return base
    if getattr(zero.step, "_fused_ema_adamw", None) is base:
        return base
    inner_step = zero.step

    @functools.wraps(inner_step)
    def step(*args, **kwargs):
        with base.partial_steps():
            result = inner_step(*args, **kwargs)
        _relink_if_stale(zero, base)
        return result

    step._fused_ema_adamw = base
    zero.step = step
    return base


def _refuse_fused_clipping(optimizer: FusedEmaAdamW) -> None:
    clipped = [i for i, g in enumerate(optimizer.param_groups)
               if g.get("max_grad_norm") is not None]
    if clipped:
        raise ValueError(f"FusedEmaAdamW param_groups {clipped} set max_grad_norm: under "
                         f"DeepSpeed use its 'gradient_clipping' config key instead")


def _relink_if_stale(zero, base: FusedEmaAdamW) -> None:
    """ZeRO-1/2 (and bf16) link each parameter's fragment to views of its partition's state
    tensors once; renew the links (DeepSpeed's own linking) when a state tensor is not the one
    linked. ZeRO-3 reads the state when asked: nothing to do."""
    relink = getattr(zero, "_lazy_init_hp_params_optimizer_state", None)
    groups = getattr(zero, "bit16_groups", None) or getattr(zero, "bf16_groups", None)
    if relink is None or groups is None:
        return
    flats = {flat.untyped_storage().data_ptr(): flat for flat in _flat_partitions(zero)}
    for lp in (p for group in groups for p in group):
        mapping = getattr(lp, "_hp_mapping", None)
        flat = None if mapping is None else flats.get(
            mapping.hp_fragment.untyped_storage().data_ptr())
        if flat is None:
            continue
        linked = mapping.optim_fragment or {}
        for key, tensor in base.state.get(flat, {}).items():
            if not isinstance(tensor, Tensor) or tensor.shape != flat.shape:
                continue  # what DeepSpeed links: the state shaped like the partition
            view = linked.get(key)
            if view is None or view.untyped_storage().data_ptr() != \
                    tensor.untyped_storage().data_ptr():
                zero._hp_optimizer_states_linked = False
                relink()
                return


def initialize(model, optimizer: FusedEmaAdamW, config: Mapping[str, Any] | None = None, *,
               stage: int | None = None, offload: str | None = "cpu", **kwargs):
    """``deepspeed.initialize`` with FusedEmaAdamW: the config completed by
    :func:`deepspeed_config`, the engine attached (:func:`attach`). Returns what
    ``deepspeed.initialize`` returns: ``(engine, optimizer, training_dataloader,
    lr_scheduler)``. Other keyword arguments go to ``deepspeed.initialize``."""
    if not isinstance(optimizer, FusedEmaAdamW):
        raise TypeError(f"initialize: optimizer must be a FusedEmaAdamW, got "
                        f"{type(optimizer).__name__}")
    config = deepspeed_config(config, stage=stage, offload=offload)
    _refuse_fused_clipping(optimizer)
    import deepspeed

    out = deepspeed.initialize(model=model, optimizer=optimizer, config=config, **kwargs)
    attach(out[0])
    return out


# -- the EMA


def _trainable(engine) -> list[Tensor]:
    """The model's parameters DeepSpeed's optimizer updates (each once, in module order:
    Module.parameters() lists a shared one once)."""
    return [p for p in engine.module.parameters() if p.requires_grad]


def _full_shape(param: Tensor) -> torch.Size:
    return param.ds_shape if hasattr(param, "ds_id") else param.shape


def _full_ema(param: Tensor) -> Tensor:
    from deepspeed.utils import safe_get_full_optimizer_state

    value = safe_get_full_optimizer_state(param, _EMA)
    if value is None:
        raise ValueError(f"a parameter of shape {list(_full_shape(param))} has no EMA: not a "
                         f"trainable parameter of this engine's model")
    return value.reshape(_full_shape(param))


def full_ema(engine, param: Tensor) -> Tensor:
    """The full fp32 EMA of one model parameter (``safe_get_full_optimizer_state(param,
    "ema_params")``: an all-reduce (ZeRO-1/2) or all-gather (ZeRO-3) of the ranks' fragments),
    shaped like the parameter. ``RuntimeError`` before the first engine step; ``ValueError`` for
    a parameter the engine does not train."""
    _checked_engine(engine)
    if not getattr(param, "requires_grad", False):
        raise ValueError(f"full_ema: the parameter of shape {list(_full_shape(param))} does not "
                         f"require grad: DeepSpeed does not train it, it has no EMA")
    return _full_ema(param)


def ema_state_dict(engine, *, dtype: torch.dtype | None = None, cpu_offload: bool = True,
                   rank0_only: bool = False) -> dict[str, Any]:
    """The EMA model: ``engine.module.state_dict()``'s keys with full tensors, each trained
    parameter's EMA in its place, frozen parameters (gathered under ZeRO-3) and buffers as they
    are. Loads into an unsharded copy of the model with ``load_state_dict``.

    Args:
        dtype: the EMA's dtype in the dict: None (default) the parameter's (an fp32 EMA of a
            bf16 parameter rounds to nearest even), or e.g. ``torch.float32`` to keep it exact.
        cpu_offload: return CPU tensors (default True).
        rank0_only: the dict on rank 0 only (an empty dict elsewhere); every rank still takes
            part in the collectives.
    """
    import torch.distributed as dist

    _checked_engine(engine)
    source = engine.module.state_dict(keep_vars=True)
    keep = not rank0_only or not dist.is_initialized() or dist.get_rank() == 0
    out: dict[str, Any] = OrderedDict()
    metadata = getattr(source, "_metadata", None)
    if metadata is not None and keep:
        out._metadata = metadata
    done: dict[int, Tensor] = {}
    for name, value in source.items():
        if isinstance(value, Tensor):
            if id(value) not in done:
                done[id(value)] = _exported(value, dtype, cpu_offload)
            value = done[id(value)]
        if keep:
            out[name] = value
    return out


def _exported(value: Tensor, dtype, cpu_offload: bool) -> Tensor:
    """One state dict entry, full: a trained parameter's EMA, else the tensor's own value."""
    if isinstance(value, torch.nn.Parameter) and value.requires_grad:
        out = _full_ema(value).to(dtype or value.dtype)
    elif hasattr(value, "ds_id"):  # a frozen ZeRO-3 parameter: gathered to read it
        import deepspeed

        with deepspeed.zero.GatheredParameters([value]):
            out = value.detach().clone()
    else:
        out = value.detach().clone()
    return out.cpu() if cpu_offload else out


@contextlib.contextmanager
def swap_ema(engine, stash_device: str | torch.device = "cpu"):
    """Context manager: the model holds the EMA weights inside (a bf16/fp16 model their
    rounding), its own weights again on exit, also when the body raises or the swap fails
    half-way. DeepSpeed's fp32 partitions and the optimizer state are not touched, so training
    continues exactly as without the swap. For evaluation: ``with swap_ema(engine):
    evaluate(engine)``.

    ZeRO-3: every parameter is released to its shard (``engine.empty_partition_cache()``, also
    the whole ones kept between steps) and each rank writes its shard's EMA into its shard (no
    collective: the forward gathers the shards); on exit the gathered EMA copies are released
    the same way before the shards get their weights back. ZeRO-1/2: each parameter gets its
    full EMA (an all-reduce each). ``stash_device`` holds the training weights meanwhile (host
    memory by default); it and the engine are checked on every rank before anything moves.
    Enter it outside the forward (not inside ``GatheredParameters``)."""
    _checked_stash_device(stash_device)
    _checked_engine(engine)
    params = _trainable(engine)
    if not any(hasattr(p, "ds_id") for p in params):
        with _weights_swapped(((p, _full_ema(p)) for p in params), stash_device):
            yield engine
        return
    if any(getattr(p, "ds_secondary_tensor", None) is not None for p in params):
        raise RuntimeError("swap_ema: ZeRO++ hierarchical partitions (zero_hpz_partition_size) "
                           "hold second copies of the shards, which the swap does not write")
    from deepspeed.utils import safe_get_local_optimizer_state

    engine.empty_partition_cache()
    shards = ((p.ds_tensor, safe_get_local_optimizer_state(p, _EMA).view(p.ds_tensor.shape))
              for p in params)
    with _weights_swapped(shards, stash_device):
        try:
            yield engine
        finally:  # no gathered copy of the EMA may outlive the swap
            engine.empty_partition_cache()
