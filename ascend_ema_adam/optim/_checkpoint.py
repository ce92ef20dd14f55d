"""Checkpoints of :class:`FusedEmaAdamW`, as functions its ``state_dict``/``load_state_dict``
and pickling call: torch's layout (per-parameter steps in the state), loading this optimizer's,
MindSpeed's and ``torch.optim.AdamW``/``Adam``'s dicts with the constructor's settings kept and
either state layout converted from the file's values, and the defaults of keys older pickles
lack."""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import Tensor

from ._common import (_MASTER, _MAX_V, _OPTION_DEFAULTS, _TORCH_ONLY_KEYS, _WIDE_KEYS,
                      _has_ema, _local)
from ._state8bit import (CODES_M, CODES_V, KEYS_8BIT, MAP_KEYS, MOMENTS, decoded, ensure_maps,
                         has_8bit_state, has_moments, is_8bit, to_8bit)
from ._steps import StepCounters, _host_step, _step_number
from ._validation import _layout
from .. import golden8bit
from .functional import SWITCHES


def with_ema_settings(groups: list[dict], state_dict: dict[str, Any]) -> dict[str, Any]:
    """``state_dict`` with this optimizer's EMA on/off in its groups (a shallow copy when that
    changes a group): a group of ours without an EMA keeps ``ema_decay=None``, one with an EMA
    keeps its own decay where the checkpoint's group has none (None, or no key: MindSpeed's).
    Groups are matched by position, as torch matches them; torch's loader raises on a count
    mismatch."""
    saved = state_dict.get("param_groups")
    if not isinstance(saved, list) or len(saved) != len(groups):
        return state_dict
    out, changed = [], False
    for ours, theirs in zip(groups, saved):
        mine = ours["ema_decay"]
        if isinstance(theirs, dict) and (mine is None) != (theirs.get("ema_decay") is None):
            theirs = dict(theirs, ema_decay=mine)
            changed = True
        out.append(theirs)
    return dict(state_dict, param_groups=out) if changed else state_dict


# The group key of our checkpoints that says how far their steps may run ahead of num_updates
# (steps a checkpoint brought before this optimizer's EMA began counting: a torch AdamW one).
STEP_LEAD = "num_updates_step_lead"


def _steps_and_counter(state: dict, groups: list[dict]) -> tuple[list[int], int] | None:
    """Every step a checkpoint (or the optimizer) holds, per parameter or per group, and its
    warm-up counter; None without a counter (-1: warm-up off) or with a step the load refuses
    itself."""
    try:
        counted = _step_number(groups[0].get("num_updates", -1), "num_updates")
        steps = [_step_number(st["step"], "step") for st in state.values()
                 if isinstance(st, dict) and "step" in st]
        steps += [_step_number(g["step"], "step") for g in groups if g.get("step") is not None]
    except (TypeError, ValueError):
        return None
    return steps, counted


def step_lead(state: dict, groups: list[dict]) -> int:
    """How far the steps run ahead of the warm-up counter now (saved as STEP_LEAD)."""
    found = _steps_and_counter(state, groups) if groups else None
    if found is None or not found[0]:
        return 0
    steps, counted = found
    return max(0, max(steps) - counted)


def stale_ema_warning(state_dict: dict[str, Any], use_num_updates: bool) -> str | None:
    """A checkpoint of ours whose steps ran further ahead of its warm-up counter than when it was
    saved: it was stepped by an optimizer that keeps no EMA (torch's AdamW loads ours, updates
    the moments and the steps, and leaves ``ema_params`` and ``num_updates`` as they were), so
    its EMA is that many steps stale. The warning's text, or None."""
    groups = state_dict.get("param_groups")
    if not use_num_updates or not isinstance(groups, list) or not groups:
        return None
    found = _steps_and_counter(state_dict.get("state", {}), groups)
    if found is None or not found[0]:
        return None
    steps, counted = found
    stale = max(steps) - counted - int(groups[0].get(STEP_LEAD, 0))
    if stale <= 0:
        return None
    return (f"FusedEmaAdamW: the checkpoint's steps (up to {max(steps)}) ran {stale} ahead of "
            f"its EMA warm-up counter num_updates ({counted}) since it was saved by "
            f"FusedEmaAdamW: an optimizer that keeps no EMA stepped it (torch's AdamW updates "
            f"the moments and steps, not 'ema_params'), so its EMA is {stale} steps stale. "
            f"Training continues with num_updates={counted}; set opt.num_updates = "
            f"{counted + stale} to continue the warm-up from the training step")


def to_torch_state_dict(state_dict: dict[str, Any]) -> dict[str, Any]:
    """A FusedEmaAdamW checkpoint in the layout ``torch.optim.AdamW``/``Adam`` steps from (a new
    dict; the given one is not changed): each parameter's ``step`` (its group's, with
    ``step_scope="group"``: torch's AdamW reads ``state['step']``), and 8-bit moments decoded to
    fp32 ``exp_avg`` / ``exp_avg_sq`` by the group's maps (golden8bit's decode, the operator's),
    the codes, scales and maps dropped. The EMA (``ema_params``) and the group keys of ours stay:
    torch's optimizers keep and ignore them, and FusedEmaAdamW loads the result again."""
    groups = [dict(g) for g in state_dict["param_groups"]]
    state = {}
    for group in groups:
        maps = {key: group.pop(key, None) for key in MAP_KEYS}
        group_step = group.get("step")
        for index in group["params"]:
            if index not in state_dict["state"]:
                continue
            st = dict(state_dict["state"][index])
            if CODES_M in st:
                if any(not isinstance(q, Tensor) for q in maps.values()):
                    raise ValueError(f"to_torch_state_dict: parameter {index} has 8-bit state but "
                                     f"its group has no '{MAP_KEYS[0]}' and '{MAP_KEYS[1]}'")
                for wide, codes, absmax, key in MOMENTS:
                    st[wide] = decoded(st.pop(codes), st.pop(absmax), maps[key])
            if "step" not in st and group_step is not None:
                st["step"] = _host_step(_step_number(group_step, "step"))
            state[index] = st
    return {**state_dict, "state": state, "param_groups": groups}


def saved_state_tensors(state_dict: dict[str, Any]) -> tuple[list, dict]:
    """The checkpoint's parameter ids in group order, and per id its state tensors that follow
    the layout (moments, EMA, master): converted from these, not from torch's cast of them."""
    saved_ids = [i for g in state_dict["param_groups"] for i in g["params"]]
    originals = {i: {k: v for k, v in state_dict["state"][i].items()
                     if k in _WIDE_KEYS + (_MASTER,) + KEYS_8BIT and isinstance(v, Tensor)}
                 for i in saved_ids if i in state_dict["state"]}
    return saved_ids, originals


def check_loaded_8bit(state_dict: dict[str, Any], params: list[Tensor]) -> None:
    """A checkpoint's 8-bit state, before anything is loaded: each parameter's four tensors
    (uint8 codes of its parameter's size, fp32 scales of one per block of 256) and its group's
    maps (fp32 [256], finite, sorted, within [-1, 1]), which its codes index. ``params``: this
    optimizer's, in group order (matched to the checkpoint's by position, as torch matches
    them). ValueError otherwise."""
    saved_state = state_dict.get("state", {})
    ids = [j for g in state_dict.get("param_groups", []) for j in g.get("params", ())]
    numel = {j: p.numel() for j, p in zip(ids, params)}
    for i, group in enumerate(state_dict.get("param_groups", [])):
        eight = [j for j in group.get("params", ())
                 if any(k in saved_state.get(j, {}) for k in KEYS_8BIT)]
        if not eight:
            continue
        for key in MAP_KEYS:
            q = group.get(key)
            if not isinstance(q, Tensor):
                raise ValueError(f"the checkpoint's param_groups[{i}] has 8-bit state but no "
                                 f"'{key}': the codes cannot be read without their map")
            try:
                golden8bit.check_map(q.detach().cpu().numpy(), key)
            except ValueError as e:
                raise ValueError(f"the checkpoint's param_groups[{i}]: {e}") from None
        for j in eight:
            st = saved_state[j]
            missing = [k for k in KEYS_8BIT if not isinstance(st.get(k), Tensor)]
            if missing:
                raise ValueError(f"the checkpoint's state of parameter {j} has 8-bit state "
                                 f"without {', '.join(missing)}")
            n = numel.get(j, st[CODES_M].numel())
            for _, codes, absmax, _ in MOMENTS:
                if (st[codes].dtype != torch.uint8 or st[codes].numel() != n
                        or st[absmax].dtype != torch.float32
                        or st[absmax].numel() != golden8bit.blocks(n)):
                    raise ValueError(
                        f"the checkpoint's state of parameter {j}: '{codes}' and '{absmax}' "
                        f"are {st[codes].dtype} [{st[codes].numel()}] and {st[absmax].dtype} "
                        f"[{st[absmax].numel()}]; expected uint8 [{n}] and float32 "
                        f"[{golden8bit.blocks(n)}]")


def without_8bit_state(state_dict: dict[str, Any]) -> dict[str, Any]:
    """``state_dict`` for torch's loader (a shallow copy, when it has 8-bit state): each 8-bit
    state tensor an empty placeholder under its key. torch's loader would cast the uint8 codes
    to the parameter's dtype, four times their memory, only for :func:`convert_loaded_state` to
    take the saved ones instead; the keys stay, so the state still counts as updated before
    (``has_moments``: a group step is split to it, an EMA made for it)."""
    state = state_dict.get("state")
    if not isinstance(state, dict) or not any(
            isinstance(st, dict) and CODES_M in st for st in state.values()):
        return state_dict
    empty = torch.empty(0, dtype=torch.uint8)
    return dict(state_dict, state={
        i: {k: empty if k in KEYS_8BIT else v for k, v in st.items()}
        if isinstance(st, dict) else st for i, st in state.items()})


def place_maps(group: dict[str, Any], state_map, drop: bool) -> None:
    """A loaded group's maps on its first parameter's device (the dynamic maps made where an
    8-bit group has none); ``drop``: after the conversions, a group with neither
    ``state_bits=8`` nor a parameter with 8-bit state drops them."""
    params = group["params"]
    needed = group["state_bits"] == 8 or any(has_8bit_state(state_map.get(p)) for p in params)
    if drop and not needed:
        for key in MAP_KEYS:
            group.pop(key, None)
        return
    device = _local(params[0]).device if params else torch.device("cpu")
    for key in MAP_KEYS:
        if isinstance(group.get(key), Tensor):
            group[key] = group[key].to(device)
    if needed:
        ensure_maps(group, device)


def convert_loaded_state(state_map, p: Tensor, group: dict[str, Any],
                         original: dict[str, Tensor]) -> None:
    """One parameter's loaded state in this optimizer's layout, converted from the checkpoint's
    tensors (``original``): the state dtype, the master, and the state kind (8-bit codes kept
    as saved, decoded into fp32 moments, or fp32 moments quantized: golden8bit's math)."""
    state = state_map.get(p)
    if not state or not p.is_floating_point():
        return
    state_dtype, master = _layout(group, p.dtype)
    if master:
        saved = original.get(_MASTER)
        state[_MASTER] = (saved.to(device=p.device, dtype=torch.float32, copy=True)
                          if saved is not None else p.detach().to(torch.float32, copy=True))
    else:
        state.pop(_MASTER, None)
    for key in _WIDE_KEYS:
        saved = original.get(key)
        if key == "ema_params" and not _has_ema(group):
            state.pop(key, None)  # (dropped with a warning by normalize_loaded_group)
        elif saved is not None:
            state[key] = saved.to(device=p.device, dtype=state_dtype, copy=True)
        elif key == "ema_params" and key in state:  # made from the parameter on load
            state[key] = state.get(_MASTER, p).detach().to(state_dtype, copy=True)
    for key in KEYS_8BIT:
        state.pop(key, None)  # (without_8bit_state's placeholders)
    eight = is_8bit(group, p.numel())
    if CODES_M in original:
        if eight:  # kept as saved: the group took the checkpoint's maps with them
            for key in KEYS_8BIT:
                state[key] = original[key].to(device=p.device, copy=True).reshape(
                    p.shape if key in (CODES_M, CODES_V) else -1)
        else:
            qmaps = (group[MAP_KEYS[0]], group[MAP_KEYS[1]])
            for (wide, codes, absmax, _), q in zip(MOMENTS, qmaps):
                state[wide] = decoded(original[codes], original[absmax], q).reshape(
                    p.shape).to(device=p.device, dtype=state_dtype)
    elif eight and "exp_avg" in state:
        for key in ("exp_avg", "exp_avg_sq"):
            if key not in state:
                state[key] = torch.zeros_like(p, dtype=torch.float32)
        to_8bit(state, ensure_maps(group, p.device))
    if eight:
        state.pop(_MAX_V, None)  # (no AMSGrad with 8-bit state)


def warn_on_weight_decay_mode(adam_w_mode: int, groups: list[dict[str, Any]]) -> None:
    mine = bool(adam_w_mode)
    theirs = {bool(g["decoupled_weight_decay"]) for g in groups
              if "decoupled_weight_decay" in g and g.get("weight_decay", 0) != 0}
    if theirs and theirs != {mine}:
        kind = {True: "decoupled (AdamW)", False: "L2 (Adam)"}
        warnings.warn(
            f"FusedEmaAdamW(adam_w_mode={mine}) loads a checkpoint whose groups say "
            f"decoupled_weight_decay={not mine}: it was trained with {kind[not mine]} weight "
            f"decay and continues with {kind[mine]} weight decay. Construct the optimizer "
            f"with adam_w_mode={not mine} to keep the checkpoint's.", stacklevel=3)


def fill_defaults(defaults: dict[str, Any], groups: list[dict[str, Any]], use_num_updates: bool,
                  adam_w_mode: int) -> None:
    """Keys older pickles and other optimizers' checkpoints lack take their defaults; the
    settings follow the constructor's switches; torch-only keys are dropped."""
    defaults.setdefault("ema_decay", 0.9999)
    defaults.setdefault("foreach", None)
    for key, value in _OPTION_DEFAULTS.items():
        defaults.setdefault(key, value)
    for group in groups:
        group.setdefault("bias_correction", True)
        for key, value in SWITCHES.items():
            group.setdefault(key, value)
        group.setdefault("ema_decay", defaults["ema_decay"])
        group.setdefault("foreach", defaults["foreach"])
        group.setdefault("num_updates", 0 if use_num_updates else -1)
        for key in _OPTION_DEFAULTS:
            group.setdefault(key, defaults[key])
        if not use_num_updates:
            group["ema_warmup"] = None
        group["decoupled_weight_decay"] = bool(adam_w_mode)
        for key in _TORCH_ONLY_KEYS:
            group.pop(key, None)


def normalize_loaded_group(i: int, group: dict[str, Any], state_map, step_scope: str,
                           counters: StepCounters, warnings_out: list[str]) -> None:
    """A loaded group in this optimizer's step layout (read back from the device once), and
    the EMA from the parameter when the checkpoint has none (torch's); a group without an
    EMA drops the checkpoint's (a warning says how many)."""
    saved_steps = {}
    dropped = 0
    for j, p in enumerate(group["params"]):
        state = state_map.get(p)
        if not state:
            continue
        if not _has_ema(group):
            dropped += state.pop("ema_params", None) is not None
        elif has_moments(state) and "ema_params" not in state:
            state["ema_params"] = p.detach().clone()
        if "step" in state:
            saved_steps[p] = _step_number(state["step"], f"param_groups[{i}]['params'][{j}]: "
                                                   f"state 'step'")
    if dropped:
        warnings_out.append(
            f"FusedEmaAdamW: param_groups[{i}] has no EMA (ema_decay=None), so the "
            f"checkpoint's EMA ('ema_params') of its {dropped} parameter(s) is dropped; "
            f"construct the optimizer with an ema_decay to keep it")
    if step_scope == "param":
        if "step" in group:
            counters.split_group_step(i, group, state_map)
        for p, value in saved_steps.items():
            state_map[p]["step"] = _host_step(value)
        return
    for p in saved_steps:
        del state_map[p]["step"]
    if group.get("step") is None and saved_steps:
        if len(set(saved_steps.values())) > 1:
            warnings_out.append(
                f"FusedEmaAdamW(step_scope='group'): the checkpoint's parameters in "
                f"param_groups[{i}] have different steps ({min(saved_steps.values())} to "
                f"{max(saved_steps.values())}); the group continues from the largest, so the "
                f"others are bias-corrected as if they were older. step_scope='param' keeps "
                f"each parameter's step.")
        group["step"] = max(saved_steps.values())
    if group.get("step") is not None:
        # MindSpeed's and ours: an int64 [1] tensor on the group's device
        value = _step_number(group["step"], f"param_groups[{i}]: step")
        device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
        group["step"] = torch.tensor([value], dtype=torch.int64, device=device)
        counters.know_group_step(i, group["step"], value)

