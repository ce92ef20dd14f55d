"""One step of :class:`FusedEmaAdamW` (``step()`` calls :func:`update`), top to bottom: check
every group (read only: a cached group re-reads its gradients, the others are checked in full),
the memory rules and clipping; then complete the state, count, and launch each group's
parameters, one launch per state kind (:mod:`._state_kinds`), as torch's ``AdamW.step()`` calls
``adamw()``. Nothing is written before every check has passed."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import torch
from torch import Tensor

from ._clip import step_clipping
from ._common import _dtensor_type, _has_ema, user_stacklevel
from ._gather import Item, check_group, complete_state, hyper_parameters
from ._launch_cache import GroupCache, LaunchCache
from ._memory import check_plan_memory
from ._scaler import _Scaler
from ._state_kinds import parts_of_items
from ._steps import warn_zero3_parts
from ._validation import _check_hyperparameters, _check_tensor_hypers, check_cpu_device


class PlanEntry(NamedTuple):
    """One group's part of a step's plan, from its check: the full check's items (None for a
    cached group), or the group's cache and the gradients it re-read."""

    index: int
    group: dict[str, Any]
    items: list[Item] | None
    cached: GroupCache | None
    grads: list[Tensor] | None


@torch.no_grad()
def update(opt) -> None:
    """One step of ``opt``: check every group (read only), then complete the state, count, and
    launch each group with a gradient. A group whose last full check still holds (the launch
    cache's) re-checks only what may change and runs its prepared launches."""
    dtensor = _dtensor_type()
    compiling = torch.compiler.is_compiling()
    scaler = _Scaler(getattr(opt, "grad_scale", None), getattr(opt, "found_inf", None))
    cache = None if compiling else opt._launch_cache
    state_unchanged = cache is not None and cache.begin(opt.state)
    plan = [check_for_step(opt, i, group, cache, state_unchanged, dtensor)
            for i, group in enumerate(opt.param_groups)]
    if (opt._steps.partial is None
            and not any(entry.items or entry.cached is not None for entry in plan)):
        if opt.step_scope == "param":
            # no parameter has a gradient: torch's step is a no-op, and so is this one (no
            # counter moves: the warm-up does not run ahead of the updates)
            opt._clip_request = None
            return
        warnings.warn(
            "FusedEmaAdamW.step(): no parameter has a gradient; with step_scope='group' "
            "(MindSpeed's layout) the step still counts, as MindSpeed's does: num_updates (the "
            "EMA warm-up) and every group's step advance (step_scope='param' makes it a no-op, "
            "as torch's)", RuntimeWarning, stacklevel=user_stacklevel())
    if cache is not None:  # (traced tensors have no addresses; the op checks at run time)
        check_plan_memory(plan, opt.param_groups, scaler, cache.updated)
    if not compiling:
        check_cpu_device(opt.param_groups)
    if opt._steps.partial is not None:  # one step in parts (DeepSpeed): partial_steps()
        clipping = opt._clip_request is not None or any(
            group.get("max_grad_norm") is not None for group in opt.param_groups)
        if clipping:
            opt._clip_request = None  # (dropped with the refusal)
        opt._steps.check_partial(plan, clipping)
    elif not compiling:
        warn_zero3_parts(plan)
    # clipping: a non-finite norm skips the counters too; each group its divisor
    request = opt._clip_request
    if request is not None:  # (only then: dynamo of torch 2.7 cannot trace this setattr)
        opt._clip_request = None
    scaler, group_scalers, norm = step_clipping(request, plan, scaler,
                                                opt.clip_process_group, dtensor,
                                                opt.param_groups)
    if norm is not None:
        opt.last_grad_norm = norm

    # every check has passed: from here on the step writes
    for _, group, items, _, _ in plan:
        for item in items or ():
            complete_state(item, group, opt.state)
    n = opt._steps.advance_num_updates(opt.param_groups, scaler, opt.use_num_updates)
    for entry in plan:
        launch_group(opt, entry, n, scaler if group_scalers is None
                     else group_scalers[entry[0]], cache, dtensor)
    if cache is not None:
        opt._steps.finish_step()
        cache.finish(opt.state, len(opt.param_groups),
                     any(cached is None for _, _, _, cached, _ in plan), state_unchanged)


# Under torch.compile every float the op receives is a constant of the graph, so the warm-up
# counter and decay are tensors there (computed on the device). ema_every's EMA-or-not is a
# host decision, new every step: with ema_every > 1 the update runs eagerly (one graph break
# at the call of step()).
try:
    update_outside_graph = torch.compiler.disable(
        update, reason="FusedEmaAdamW: ema_every > 1 decides on the host whether a step "
        "updates the EMA, so the update runs outside the graph")
except TypeError:  # torch before 2.8: no reason
    update_outside_graph = torch.compiler.disable(update)


def needs_eager_update(opt) -> bool:
    """Under tracing: would the traced update take a new constant on every step? (ema_every's
    EMA-or-not is decided on the host.)"""
    return any(group["ema_every"] > 1 and _has_ema(group) for group in opt.param_groups)


def check_for_step(opt, i: int, group: dict[str, Any], cache: LaunchCache | None,
                   state_unchanged: bool, dtensor) -> PlanEntry:
    """Group ``i``'s check, read only: a cached group re-reads its gradients and re-checks
    what may have changed; any other group (or a cache that no longer holds) is checked in
    full (``check_group``), which raises the error if there is one. Returns the group's part
    of the step's plan: a full check's items, or the group's cache and the gradients it
    re-read."""
    steps, per_param = opt._steps, opt.step_scope == "param"
    cached = (cache.group(i) if cache is not None and not (per_param and "step" in group)
              else None)
    held = steps.held_steps(i) if cached is not None and per_param else None
    if cached is not None and (held is not None or not per_param):
        grads = cached.gradients_if_unchanged(group, opt.state, state_unchanged,
                                              cache.updated, held)
        if grads is not None:
            _check_hyperparameters(group, f"param_groups[{i}]: ")
            for device, j in cached.first_on_device:
                _check_tensor_hypers(i, group, j, device)
            if not per_param:
                steps.group_step_before(i, group, opt.state)
            return PlanEntry(i, group, None, cached, grads)
    eager = not torch.compiler.is_compiling()
    items = check_group(i, group, opt.state, dtensor,
                        steps.param_step_before if per_param and eager else None)
    if not per_param and eager:
        steps.group_step_before(i, group, opt.state)
    return PlanEntry(i, group, items, None, None)


def launch_group(opt, entry: PlanEntry, n, scaler: _Scaler, cache: LaunchCache | None,
                 dtensor) -> None:
    """One group's update: its counters advanced (every group counts, with or without
    gradients), its tensors gathered, one launch per state kind its parameters keep
    (:mod:`._state_kinds`) with this step's hyper-parameters; then the launch cache follows
    the group."""
    i, group, items, cached, grads = entry
    steps, per_param = opt._steps, opt.step_scope == "param"
    keep = True
    if cached is not None:
        if per_param:
            step, keep = steps.advance_cached(i, group, opt.state, cached, grads, scaler)
        else:
            step = steps.next_group_step(i, group, opt.state, scaler)
        parts = cached.launch_parts(grads, step)
    else:
        step = (steps.advance_param_steps(i, group, items, opt.state, dtensor, scaler)
                if per_param else steps.next_group_step(i, group, opt.state, scaler))
        parts = parts_of_items(group, items, step, dtensor)
    parts = [part for part in parts if part.lists.params]
    if parts:  # (the lists hold local tensors)
        ema_on, hypers = hyper_parameters(group, n, opt.adam_w_mode,
                                          parts[0].lists.params[0].device)
        prepared_checked = cache is not None and cache.held_checked
        for part in parts:
            part.kind.launch(part.lists, part.step, group, ema_on, hypers, scaler,
                             part.prepared, prepared_checked)
    if cache is None:
        return
    if cached is None:
        if (cache.remember(i, group, opt.state, items) and per_param
                and not steps.follow(i, items)):
            cache.forget(i)
    elif not keep:
        cache.forget(i)  # the next step checks it in full and caches it again

