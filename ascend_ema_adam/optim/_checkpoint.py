"""Checkpoints: torch's layout (per-parameter steps in the state), loading this optimizer's,
MindSpeed's and ``torch.optim.AdamW``/``Adam``'s dicts with the constructor's settings kept and
either state layout converted from the file's values, pickling with the constructor's
switches."""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import Tensor

from ._common import (_MASTER, _OPTION_DEFAULTS, _SETTINGS, _TORCH_ONLY_KEYS, _WIDE_KEYS,
                      _has_ema, _local)
from ._steps import _host_step, _step_number
from ._validation import _layout


class _CheckpointMixin:
    """``state_dict``/``load_state_dict`` and pickling of :class:`FusedEmaAdamW`."""

    def state_dict(self) -> dict[str, Any]:
        """torch's layout: per-parameter ``step`` in ``state`` (``step_scope="param"``), so the
        dict loads into ``torch.optim.AdamW``/``Adam``; the groups carry the warm-up counter, the
        EMA decay and ``decoupled_weight_decay`` (this optimizer's ``adam_w_mode``)."""
        for group in self.param_groups:
            group["decoupled_weight_decay"] = bool(self.adam_w_mode)
        for cache in self._group_caches.values():  # its step tensors now have another holder
            cache.steps_handed_out = True
        return super().state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a checkpoint of this optimizer (either step scope), of MindSpeed's, or of
        ``torch.optim.AdamW``/``Adam``.

        The checkpoint gives the state, the counters (steps, ``num_updates``) and the groups'
        hyper-parameters; this optimizer's construction gives its settings (``adam_w_mode``,
        ``use_num_updates``, ``step_scope``, ``foreach``). Per-parameter steps are kept per
        parameter (``step_scope="param"``) or merged into the group's (``"group"``: the largest,
        with a warning when they differ); a missing ``ema_params`` starts as a clone of the
        parameter; missing group keys take their defaults. A checkpoint of the other weight
        decay mode (torch ``Adam``: ``decoupled_weight_decay=False``) warns. State tensors take
        the parameter's device and this optimizer's layout (``state_dtype``, ``master_weights``
        are settings): either layout converts, from the checkpoint's own values (torch's loader
        alone would round fp32 state to a 16-bit parameter's dtype first); a missing master is
        made from the parameter, an unwanted one dropped.

        Whether a group has an EMA is a setting too (its ``ema_decay`` is None or not; the
        checkpoint gives the decay's value only): a group without an EMA drops the
        checkpoint's ``ema_params`` (with a UserWarning), and a group with one loading a
        checkpoint without (``ema_decay=None``, or torch's) keeps its decay and starts the EMA
        from the weights."""
        state_dict = self._with_ema_settings(state_dict)
        groups = state_dict["param_groups"]
        self._warn_on_weight_decay_mode(groups)
        settings = [{key: g[key] for key in _SETTINGS} for g in self.param_groups]
        saved_ids = [i for g in groups for i in g["params"]]
        originals = {i: {k: v for k, v in state_dict["state"][i].items()
                         if k in _WIDE_KEYS + (_MASTER,) and isinstance(v, Tensor)}
                     for i in saved_ids if i in state_dict["state"]}
        self._load_warnings = []
        super().load_state_dict(state_dict)
        for group, kept in zip(self.param_groups, settings):
            group.update(kept)
        params = [(p, g) for g in self.param_groups for p in g["params"]]
        with torch.no_grad():
            for saved_id, (p, group) in zip(saved_ids, params):
                self._convert_loaded_state(p, group, originals.get(saved_id, {}))
        for message in self._load_warnings:
            warnings.warn(message, stacklevel=2)
        del self._load_warnings

    def _with_ema_settings(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        """``state_dict`` with this optimizer's EMA on/off in its groups (a shallow copy when
        that changes a group): a group of ours without an EMA keeps ``ema_decay=None``, one
        with an EMA keeps its own decay where the checkpoint's group has none (None, or no key:
        MindSpeed's). Groups are matched by position, as torch matches them; torch's loader
        raises on a count mismatch."""
        saved = state_dict.get("param_groups")
        if not isinstance(saved, list) or len(saved) != len(self.param_groups):
            return state_dict
        groups, changed = [], False
        for ours, theirs in zip(self.param_groups, saved):
            mine = ours["ema_decay"]
            if isinstance(theirs, dict) and (mine is None) != (theirs.get("ema_decay") is None):
                theirs = dict(theirs, ema_decay=mine)
                changed = True
            groups.append(theirs)
        return dict(state_dict, param_groups=groups) if changed else state_dict

    def _convert_loaded_state(self, p: Tensor, group: dict[str, Any],
                              original: dict[str, Tensor]) -> None:
        """One parameter's loaded state in this optimizer's layout, converted from the
        checkpoint's tensors (``original``)."""
        state = self.state.get(p)
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
                state.pop(key, None)  # (dropped with a warning by _normalize_loaded_group)
            elif saved is not None:
                state[key] = saved.to(device=p.device, dtype=state_dtype, copy=True)
            elif key == "ema_params" and key in state:  # made from the parameter on load
                state[key] = state.get(_MASTER, p).detach().to(state_dtype, copy=True)

    def _warn_on_weight_decay_mode(self, groups: list[dict[str, Any]]) -> None:
        mine = bool(self.adam_w_mode)
        theirs = {bool(g["decoupled_weight_decay"]) for g in groups
                  if "decoupled_weight_decay" in g and g.get("weight_decay", 0) != 0}
        if theirs and theirs != {mine}:
            kind = {True: "decoupled (AdamW)", False: "L2 (Adam)"}
            warnings.warn(
                f"FusedEmaAdamW(adam_w_mode={mine}) loads a checkpoint whose groups say "
                f"decoupled_weight_decay={not mine}: it was trained with {kind[not mine]} weight "
                f"decay and continues with {kind[mine]} weight decay. Construct the optimizer "
                f"with adam_w_mode={not mine} to keep the checkpoint's.", stacklevel=3)

    def __getstate__(self) -> dict[str, Any]:
        """torch pickles only defaults, state and groups; the constructor's switches too."""
        state = super().__getstate__()
        state.update(adam_w_mode=self.adam_w_mode, set_grad_none=self.set_grad_none,
                     use_num_updates=self.use_num_updates, step_scope=self.step_scope)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling, and torch's ``load_state_dict`` (which ends here with the loaded state
        and groups): missing keys take their defaults, the steps take this optimizer's layout,
        the warm-up counter follows ``use_num_updates``."""
        super().__setstate__(state)
        self.__dict__.setdefault("use_num_updates", True)
        self.__dict__.setdefault("adam_w_mode", 1)
        self.__dict__.setdefault("set_grad_none", True)
        self.__dict__.setdefault("step_scope", "group")  # pickled before per-parameter steps
        self.__dict__.setdefault("clip_process_group", None)  # (a process group never pickles)
        self.__dict__.setdefault("_partial", None)  # (a load inside partial_steps() keeps it)
        self._reset_caches()
        self.defaults.setdefault("ema_decay", 0.9999)
        self.defaults.setdefault("foreach", None)
        for key, value in _OPTION_DEFAULTS.items():
            self.defaults.setdefault(key, value)
        for i, group in enumerate(self.param_groups):
            group.setdefault("bias_correction", True)
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("ema_decay", self.defaults["ema_decay"])
            group.setdefault("foreach", self.defaults["foreach"])
            group.setdefault("num_updates", self._initial_num_updates)
            for key in _OPTION_DEFAULTS:
                group.setdefault(key, self.defaults[key])
            if not self.use_num_updates:
                group["ema_warmup"] = None
            group["decoupled_weight_decay"] = bool(self.adam_w_mode)
            for key in _TORCH_ONLY_KEYS:
                group.pop(key, None)
            # load_state_dict warns its caller; unpickling has nobody to warn
            self._normalize_loaded_group(i, group, self.__dict__.get("_load_warnings", []))
        n = self.num_updates
        self.num_updates = -1 if not self.use_num_updates else max(n, 0)

    def _normalize_loaded_group(self, i: int, group: dict[str, Any],
                                warnings_out: list[str]) -> None:
        """A loaded group in this optimizer's step layout (read back from the device once), and
        the EMA from the parameter when the checkpoint has none (torch's); a group without an
        EMA drops the checkpoint's (a warning says how many)."""
        steps = {}
        dropped = 0
        for j, p in enumerate(group["params"]):
            state = self.state.get(p)
            if not state:
                continue
            if not _has_ema(group):
                dropped += state.pop("ema_params", None) is not None
            elif "exp_avg" in state and "ema_params" not in state:
                state["ema_params"] = p.detach().clone()
            if "step" in state:
                steps[p] = _step_number(state["step"], f"param_groups[{i}]['params'][{j}]: "
                                                       f"state 'step'")
        if dropped:
            warnings_out.append(
                f"FusedEmaAdamW: param_groups[{i}] has no EMA (ema_decay=None), so the "
                f"checkpoint's EMA ('ema_params') of its {dropped} parameter(s) is dropped; "
                f"construct the optimizer with an ema_decay to keep it")
        if self.step_scope == "param":
            if "step" in group:
                self._split_group_step(i, group)
            for p, value in steps.items():
                self.state[p]["step"] = _host_step(value)
            return
        for p in steps:
            del self.state[p]["step"]
        if group.get("step") is None and steps:
            if len(set(steps.values())) > 1:
                warnings_out.append(
                    f"FusedEmaAdamW(step_scope='group'): the checkpoint's parameters in "
                    f"param_groups[{i}] have different steps ({min(steps.values())} to "
                    f"{max(steps.values())}); the group continues from the largest, so the "
                    f"others are bias-corrected as if they were older. step_scope='param' keeps "
                    f"each parameter's step.")
            group["step"] = max(steps.values())
        if group.get("step") is not None:
            # MindSpeed's and ours: an int64 [1] tensor on the group's device
            value = _step_number(group["step"], f"param_groups[{i}]: step")
            device = _local(group["params"][0]).device if group["params"] else torch.device("cpu")
            group["step"] = torch.tensor([value], dtype=torch.int64, device=device)
            self._known_group_steps[i] = (group["step"], value)

