"""FusedEmaAdamW as megatron-core's inner Adam (MindSpeed's route), with the EMA in its
checkpoints and an EMA model export.

megatron-core's optimizer builder makes one ``Adam`` per model part and wraps it: the
DistributedOptimizer hands it each data-parallel rank's shard of the fp32 main parameters, so
the EMA (state ``ema_params``) is fp32 and sharded like ``exp_avg``. MindSpeed gets there by
patching apex's FusedAdam; here the builder's own name for its Adam is substituted while it
builds:

* :func:`get_megatron_optimizer` (or :func:`substitute_adam` around megatron's own builder, then
  :func:`attach`): FusedEmaAdamW where megatron would build its Adam, with the EMA options.
* :func:`attach`: the DistributedOptimizer's dp-zero parameter state
  (``get_parameter_state_dp_zero`` / ``load_parameter_state_from_dp_zero``, so also
  ``save_parameter_state`` / ``load_parameter_state`` and the distributed checkpoint's
  ``dp_zero_gather_scatter`` format) carries ``ema_params`` beside ``param``, ``exp_avg`` and
  ``exp_avg_sq``, in the same flat per-buffer layout (MindSpeed's key and layout).
  The ``fully_sharded_model_space`` format saves every state key, the EMA included, by itself.
* :func:`swap_ema` / :func:`ema_state_dict`: the EMA weights in the main parameters, copied
  to the model parameters and all-gathered, so every rank's model holds the EMA model (for
  evaluation or an export); the training weights come back on exit.

Steps: without apex or Transformer Engine megatron-core's DistributedOptimizer saves torch
AdamW's per-parameter ``step`` (``step_scope="param"`` here); with either it keeps only the
param groups, where ``step_scope="group"`` keeps the step. The scope follows megatron-core.

Every function that moves EMA between ranks is a collective over the data-parallel group.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import torch
import torch.distributed as dist

from ..optim import FusedEmaAdamW

__all__ = ["get_megatron_optimizer", "substitute_adam", "attach", "swap_ema", "ema_state_dict",
           "megatron_step_scope"]

EMA_KEY = "ema_params"
# What megatron-core's builder passes to its Adam itself (from the OptimizerConfig).
_FROM_CONFIG = ("params", "lr", "weight_decay", "betas", "eps")


def megatron_step_scope() -> str:
    """The ``step_scope`` the installed megatron-core's DistributedOptimizer checkpoints: its
    ``state_dict()`` keeps torch AdamW's per-parameter steps when neither apex nor Transformer
    Engine is installed ("param"), and only the param groups otherwise ("group")."""
    from megatron.core.optimizer import distrib_optimizer
    return "group" if distrib_optimizer.HAVE_APEX_OR_TE else "param"


def _check_config(config) -> None:
    """The OptimizerConfig settings this glue supports; raises before anything is built."""
    if config.optimizer != "adam":
        raise ValueError(f"OptimizerConfig.optimizer is {config.optimizer!r}: FusedEmaAdamW "
                         f"replaces megatron's Adam, so it needs optimizer='adam'")
    if config.use_precision_aware_optimizer:
        raise ValueError("OptimizerConfig.use_precision_aware_optimizer is Transformer Engine's "
                         "FusedAdam contract (decoupled grads, its master weights); FusedEmaAdamW "
                         "runs on megatron's fp32 main parameters: set it to False")
    if config.optimizer_cpu_offload:
        raise ValueError("OptimizerConfig.optimizer_cpu_offload builds megatron's "
                         "HybridDeviceOptimizer (torch AdamW on the host), which FusedEmaAdamW "
                         "does not replace: set it to False")


_EIGHT_BIT_REFUSED = (
    "state_bits=8: megatron's DistributedOptimizer checkpoints each shard's exp_avg and exp_avg_sq "
    "as fp32 buffers and re-shards them on load, and 8-bit codes come with a scale per block of "
    "256 of the shard, which this glue does not carry; use state_bits=32 with megatron")


def _optimizer_options(options: dict[str, Any]) -> dict[str, Any]:
    """FusedEmaAdamW's keywords for megatron: the EMA options are the caller's, the Adam
    hyper-parameters the OptimizerConfig's, the step scope megatron-core's checkpoint's."""
    clash = sorted(set(options) & set(_FROM_CONFIG))
    if clash:
        raise ValueError(f"{', '.join(clash)}: megatron passes these from its OptimizerConfig "
                         f"(lr, weight_decay, adam_beta1/2, adam_eps); set them there")
    scope = megatron_step_scope()
    if options.get("step_scope", scope) != scope:
        saves = ("only the param groups (apex or Transformer Engine is installed)"
                 if scope == "group" else
                 "torch AdamW's per-parameter steps (neither apex nor Transformer Engine)")
        raise ValueError(f"step_scope={options['step_scope']!r}: this megatron-core's "
                         f"DistributedOptimizer checkpoints {saves}, so the steps survive a "
                         f"checkpoint only with step_scope={scope!r}")
    if options.get("state_bits", 32) == 8:
        raise ValueError(_EIGHT_BIT_REFUSED)
    if "ema_decay" in options and options["ema_decay"] is None:
        raise ValueError("ema_decay=None (no EMA): this glue carries the EMA in megatron's "
                         "checkpoints and exports it; without an EMA use megatron's own "
                         "optimizer builder")
    out = dict(options, step_scope=scope)
    # Constructed once here, so that a bad option fails before megatron builds anything.
    FusedEmaAdamW([torch.zeros(1, requires_grad=True)], **out)
    return out


@contextlib.contextmanager
def substitute_adam(**optimizer_kwargs):
    """Inside, megatron-core's optimizer builder makes a FusedEmaAdamW (with these keywords:
    ``ema_decay``, the EMA schedule, ...) where it would make its Adam, and the
    DistributedOptimizer accepts it. For code that calls megatron's builder itself; pass the
    result to :func:`attach`. :func:`get_megatron_optimizer` does both."""
    import megatron.core.optimizer as mcore_optimizer
    from megatron.core.optimizer import distrib_optimizer

    options = _optimizer_options(optimizer_kwargs)

    def adam(**kwargs):  # megatron passes keywords only (>= 0.18 adds capturable=)
        return FusedEmaAdamW(**kwargs, **options)

    saved = mcore_optimizer.Adam, distrib_optimizer.Adam
    mcore_optimizer.Adam = adam
    # the DistributedOptimizer asserts isinstance(optimizer, Adam): accept both
    distrib_optimizer.Adam = (saved[1], FusedEmaAdamW)
    try:
        yield
    finally:
        mcore_optimizer.Adam, distrib_optimizer.Adam = saved


def get_megatron_optimizer(config, model_chunks, *args, ema_decay: float = 0.9999,
                           optimizer_kwargs: dict[str, Any] | None = None, **kwargs):
    """megatron-core's ``get_megatron_optimizer(config, model_chunks, *args, **kwargs)`` with
    FusedEmaAdamW as the inner optimizer (``ema_decay`` and ``optimizer_kwargs``: its EMA
    options), the EMA attached to the dp-zero checkpoints (:func:`attach`).

    The config must be ``optimizer='adam'`` without ``use_precision_aware_optimizer`` or
    ``optimizer_cpu_offload`` (checked first). lr, weight decay, betas and eps come from the
    config (and megatron's OptimizerParamScheduler, per group); the step scope from
    megatron-core (:func:`megatron_step_scope`)."""
    from megatron.core.optimizer import get_megatron_optimizer as build

    _check_config(config)
    if "ema_decay" in (optimizer_kwargs or {}):
        raise ValueError("pass ema_decay as get_megatron_optimizer's own keyword, not in "
                         "optimizer_kwargs")
    options = dict(optimizer_kwargs or {}, ema_decay=ema_decay)
    with substitute_adam(**options):
        optimizer = build(config, model_chunks, *args, **kwargs)
    return attach(optimizer)


# ------------------------------------------------------------------------------------------
# The parts of a (chained) megatron optimizer


def _parts(optimizer) -> list:
    """The megatron optimizers inside ``optimizer`` (a ChainedOptimizer's, or itself) that have
    an inner optimizer; each must be a FusedEmaAdamW."""
    parts = list(getattr(optimizer, "chained_optimizers", [optimizer]))
    out = []
    for part in parts:
        inner = getattr(part, "optimizer", None)
        if inner is None:  # a stub (no trainable parameters on this rank)
            continue
        if not isinstance(inner, FusedEmaAdamW):
            raise TypeError(f"expected megatron optimizers around FusedEmaAdamW, got "
                            f"{type(part).__name__} around {type(inner).__name__} (build it "
                            f"with ascend_ema_adam.integrations.megatron.get_megatron_optimizer)")
        if getattr(getattr(part, "ddp_config", None), "use_custom_fsdp", False):
            raise ValueError("megatron's custom FSDP (use_custom_fsdp) is not supported: its "
                             "parameter state follows another layout")
        out.append(part)
    return out


def _is_distributed(part) -> bool:
    from megatron.core.optimizer import DistributedOptimizer
    return isinstance(part, DistributedOptimizer)


# ------------------------------------------------------------------------------------------
# dp-zero parameter state: the EMA beside param, exp_avg, exp_avg_sq


def attach(optimizer):
    """Make every DistributedOptimizer in ``optimizer`` (a ChainedOptimizer's parts, or
    itself) save and load ``ema_params`` with its parameter state; returns ``optimizer``.
    Idempotent; not a collective. Every part must wrap a FusedEmaAdamW (checked before any is
    changed).

    * dp-zero (``get_parameter_state_dp_zero`` / ``load_parameter_state_from_dp_zero``):
      the EMA is gathered to and scattered from DP rank 0 like ``exp_avg``.
    * Every load: megatron copies each state key of the inner optimizer from the checkpoint's
      tensors, which hold only the keys it saved (dp-zero: ``param``, ``exp_avg``,
      ``exp_avg_sq``; the distributed checkpoint: no ``step``); the other keys are kept as
      they are, and an EMA the checkpoint lacks starts at the loaded weights."""
    parts = [p for p in _parts(optimizer) if _is_distributed(p) and not p.is_stub_optimizer]
    for part in parts:
        _require_glue_groups(part)
    for part in parts:
        if getattr(part, "_aea_ema_attached", False):
            continue
        get_stock = part.get_parameter_state_dp_zero
        load_stock = part.load_parameter_state_from_dp_zero
        set_stock = part._set_main_param_and_optimizer_states

        def get_parameter_state_dp_zero(part=part, get_stock=get_stock):
            _require_glue_groups(part)  # (an EMA switched off after attach, or 8-bit state)
            state = get_stock()
            _gather_ema(part, state)
            return state

        def load_parameter_state_from_dp_zero(state_dict, *, update_legacy_format=False,
                                              part=part, load_stock=load_stock):
            _load_with_ema(part, state_dict, update_legacy_format, load_stock)

        def _set_main_param_and_optimizer_states(model_param, tensors, part=part,
                                                 set_stock=set_stock):
            _require_glue_groups(part)
            _set_known_keys(part, model_param, tensors, set_stock)

        part.get_parameter_state_dp_zero = get_parameter_state_dp_zero
        part.load_parameter_state_from_dp_zero = load_parameter_state_from_dp_zero
        part._set_main_param_and_optimizer_states = _set_main_param_and_optimizer_states
        part._aea_ema_attached = True
    return optimizer


def _require_glue_groups(part) -> None:
    """Every group as the glue carries it: with an EMA, and fp32 (or 16-bit) moments."""
    _require_ema(part)
    if any(g.get("state_bits", 32) == 8 for g in part.optimizer.param_groups):
        raise ValueError(_EIGHT_BIT_REFUSED)


def _require_ema(part) -> None:
    """The glue saves, loads and exports every main parameter's EMA: a FusedEmaAdamW group
    without one (``ema_decay=None``) is refused (the same on every rank: megatron builds the
    same groups everywhere), before anything is changed or communicated."""
    off = [i for i, g in enumerate(part.optimizer.param_groups) if g["ema_decay"] is None]
    if off:
        raise ValueError(f"FusedEmaAdamW param_groups {off} have no EMA (ema_decay=None): the "
                         f"megatron glue saves, loads and exports every parameter's EMA")


def _main_param(part, model_param) -> torch.Tensor:
    group_index, order = part.model_param_group_index_map[model_param]
    return part.optimizer.param_groups[group_index]["params"][order]


def _set_known_keys(part, model_param, tensors, set_stock) -> None:
    """megatron's copy of one parameter's loaded tensors, over the state keys ``tensors``
    has; the others are hidden from it and put back (``step``; ``ema_params`` of a dp-zero
    load, scattered after). A missing EMA starts at the loaded weights."""
    main = _main_param(part, model_param)
    state = part.optimizer.state[main]
    hidden = {key: state.pop(key) for key in list(state) if key not in tensors}
    try:
        set_stock(model_param, tensors)
    finally:
        state.update(hidden)
    if EMA_KEY not in tensors and "exp_avg" in state:
        _set_ema(part.optimizer, main, main.detach())


def _dp_group(part):
    group = part.data_parallel_group_gloo
    if group is None:
        raise ValueError("the dp-zero parameter state needs megatron's gloo data-parallel group "
                         "(get_megatron_optimizer(..., use_gloo_process_groups=True))")
    return group, dist.get_rank(group), dist.get_process_group_ranks(group)[0]


def _buckets(part):
    """Per buffer and dtype: the checkpoint's entry key, the buffer's unpadded size, and per
    bucket (its world size, its unpadded size, and this rank's (main param, local range) in
    its shard). The dp-zero layout: each buffer's buckets back to back without their padding."""
    for gbuf_idx, by_dtype in enumerate(part.gbuf_ranges):
        buffer = part.buffers[gbuf_idx]
        for dtype, bucket_maps in by_dtype.items():
            buckets = []
            for bucket_idx, bucket_map in enumerate(bucket_maps):
                bucket = buffer.buckets[bucket_idx]
                shards = []
                for model_param, ranges in bucket_map["param_map"].items():
                    shards.append((_main_param(part, model_param), ranges["gbuf_local"]))
                buckets.append((bucket.grad_data.numel(), bucket.numel_unpadded, shards))
            yield (gbuf_idx, dtype), buffer.numel_unpadded, buckets


def _gather_ema(part, state: dict) -> None:
    """Adds each buffer's EMA (fp32, flat, unpadded) to the dp-zero ``state`` on DP rank 0."""
    group, me, root = _dp_group(part)
    world = group.size()
    for (gbuf_idx, dtype), numel, buckets in _buckets(part):
        full = torch.zeros(numel, dtype=torch.float32) if me == 0 else None
        offset = 0
        for world_numel, unpadded, shards in buckets:
            local = torch.zeros(world_numel // world, dtype=torch.float32)
            for main, where in shards:
                local[where.start:where.end].copy_(part.optimizer.state[main][EMA_KEY].view(-1))
            pieces = ([torch.empty_like(local) for _ in range(world)] if me == 0 else None)
            dist.gather(local, pieces, dst=root, group=group)
            if me == 0:
                full[offset:offset + unpadded].copy_(torch.cat(pieces)[:unpadded])
            offset += unpadded
        if me == 0:
            state[gbuf_idx][dtype][EMA_KEY] = full


def _ema_verdict(part, state_dict) -> str:
    """On DP rank 0: "ok" (every buffer has its EMA), "missing" (none has: a checkpoint without
    EMA) or what is wrong."""
    found = []
    for (gbuf_idx, dtype), numel, _ in _buckets(part):
        try:
            entry = state_dict[gbuf_idx][dtype]
        except (KeyError, TypeError):
            return f"the checkpoint has no parameter state for buffer {gbuf_idx} ({dtype})"
        ema = entry.get(EMA_KEY) if isinstance(entry, dict) else None
        found.append(ema is not None)
        if ema is not None and (not isinstance(ema, torch.Tensor) or ema.dim() != 1
                                or ema.numel() != numel):
            shape = list(ema.shape) if isinstance(ema, torch.Tensor) else type(ema).__name__
            return (f"buffer {gbuf_idx} ({dtype}): '{EMA_KEY}' is {shape}, this model's buffer "
                    f"holds {numel} elements")
    if all(found):
        return "ok"
    if not any(found):
        return "missing"
    return f"'{EMA_KEY}' is in some buffers of the checkpoint and not in others"


def _load_with_ema(part, state_dict, update_legacy_format: bool, load_stock) -> None:
    """megatron's dp-zero load, then the EMA scattered the same way. DP rank 0 checks the EMA
    entries first and tells every rank: a bad entry raises on all of them before anything is
    loaded; a checkpoint without EMA (megatron's own) starts the EMA at the loaded weights."""
    _require_ema(part)
    group, me, root = _dp_group(part)
    verdict = [None]
    if me == 0:
        verdict[0] = "missing" if update_legacy_format else _ema_verdict(part, state_dict)
    dist.broadcast_object_list(verdict, src=root, group=group)
    if verdict[0] not in ("ok", "missing"):
        raise ValueError(f"load_parameter_state_from_dp_zero: {verdict[0]} (nothing loaded)")
    load_stock(state_dict, update_legacy_format=update_legacy_format)
    if verdict[0] == "missing":
        warnings.warn("load_parameter_state_from_dp_zero: the checkpoint has no "
                      f"'{EMA_KEY}'; the EMA starts at the loaded weights", stacklevel=3)
        for group in part.optimizer.param_groups:
            for main in group["params"]:
                _set_ema(part.optimizer, main, main.detach())
        return
    world = group.size()
    for (gbuf_idx, dtype), _, buckets in _buckets(part):
        full = state_dict[gbuf_idx][dtype][EMA_KEY] if me == 0 else None
        offset = 0
        for world_numel, unpadded, shards in buckets:
            local = torch.empty(world_numel // world, dtype=torch.float32)
            pieces = None
            if me == 0:
                padded = torch.zeros(world_numel, dtype=torch.float32)
                padded[:unpadded].copy_(full[offset:offset + unpadded])
                pieces = list(padded.chunk(world))
            dist.scatter(local, pieces, src=root, group=group)
            for main, where in shards:
                _set_ema(part.optimizer, main, local[where.start:where.end])
            offset += unpadded


@torch.no_grad()
def _set_ema(inner: FusedEmaAdamW, main: torch.Tensor, values: torch.Tensor) -> None:
    state = inner.state[main]
    ema = state.get(EMA_KEY)
    if ema is None:
        state[EMA_KEY] = values.view_as(main).to(main.dtype, copy=True)
    else:
        ema.copy_(values.view_as(ema))


# ------------------------------------------------------------------------------------------
# The EMA model


def _drain_param_gathers(part) -> None:
    """Waits for parameter all-gathers in flight (overlap_param_gather): they must not land on
    top of the weights swapped in."""
    for chunk in getattr(part, "model_chunks", ()):
        groups = (list(getattr(chunk, "bucket_groups", ()))
                  + list(getattr(chunk, "expert_parallel_bucket_groups", ())))
        if any(getattr(g, "param_gather_handle", None) is not None for g in groups):
            chunk.start_param_sync(force_sync=True)  # waits, gathers nothing new


def _main_to_model(part) -> None:
    """Main parameters -> model parameters, all-gathered over the DP group (megatron's own
    copy and gather, as after a step)."""
    copy = getattr(part, "_copy_main_params_to_model_params", None)
    if copy is not None:  # the FP32Optimizer's main parameters are the model's
        copy()
    if _is_distributed(part):
        for chunk in part.model_chunks:
            chunk.start_param_sync(force_sync=True)


@contextlib.contextmanager
def swap_ema(optimizer, stash_device: str | torch.device = "cpu"):
    """Context manager: inside, the main parameters of every part of ``optimizer`` hold their
    EMA and the model parameters (all of them, on every DP rank) its rounding to the model's
    dtype; on exit, also on an exception, the training weights are back in both. The EMA
    state is not modified. ``stash_device``: where the main shards wait meanwhile (the host
    by default). A collective over the data-parallel group (the parameter all-gathers).

    Example::

        with swap_ema(optimizer):
            evaluate(model)
    """
    parts = _parts(optimizer)
    for part in parts:
        _drain_param_gathers(part)
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: [_main_to_model(part) for part in parts])  # runs last
        for part in parts:
            stack.enter_context(part.optimizer.swap_ema(stash_device))
        for part in parts:
            _main_to_model(part)
        yield optimizer


def ema_state_dict(model, optimizer) -> dict[str, Any] | list[dict[str, Any]]:
    """The model's checkpoint state dict (``state_dict_for_save_checkpoint``) with the EMA
    weights, as CPU copies: one dict, or one per model chunk when ``model`` is a list. Runs
    :func:`swap_ema` (a collective); every rank gets the full dict (the model parameters are
    all-gathered). A 16-bit model's values are the fp32 EMA rounded to its dtype."""
    chunks = model if isinstance(model, (list, tuple)) else [model]
    out = []
    with swap_ema(optimizer):
        for chunk in chunks:
            save = getattr(chunk, "state_dict_for_save_checkpoint", chunk.state_dict)
            out.append({k: v.detach().cpu().clone() if isinstance(v, torch.Tensor) else v
                        for k, v in save().items()})
    return out if isinstance(model, (list, tuple)) else out[0]
