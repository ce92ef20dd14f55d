#!/usr/bin/env python3
"""The torch-npu run's cases (tools/torch_npu_run/run.sh sets up what they run in).

    cases.py --modes 0 1 2 [--only REGEX] [--seed N]

Each case makes its inputs on the CPU (fresh random values, never all zeros) and calls one
function twice: on CPU tensors (this package's CPU device: our aclnn layer, the native kernel)
and on copies moved with ``.npu()`` (the real torch_npu, 2.13.0 or a make compat row's, and its op-plugin, our NPU
extension, CANN's generated aclnn and opbase, our kernel on the twin behind the stand-in
runtime). The function returns the tensors it updated or made. A case *runs* when both calls
return and every returned tensor is bit-identical after ``.cpu()``; a case is *refused* when both
calls raise and the NPU call changed none of its inputs. Each case says which it must be; any
other outcome fails. Every case runs in a fresh process per TASK_QUEUE_ENABLE mode (torch_npu reads
it at import), on the same inputs (one seed for all modes), and counts once it passed in all.

Prints one line per failure and the summary
    torch-npu: N cases through the real torch_npu <version> and op-plugin, M bit-identical, K refused as expected
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import traceback
from dataclasses import dataclass
from typing import Callable

RUNS, REFUSED = "runs", "refused"
# The torch_npu under test (run.sh: TORCH_NPU_VERSION; make compat runs each row's).
NPU_VERSION = os.environ.get("AEA_TORCH_NPU_VERSION", "2.13.0")
# The fault-injection case (fault_case), run in processes of its own with the faulty package.
FAULT = "a failed queued address update: nothing written, the prepared call not run again"


@dataclass
class Case:
    name: str
    expect: str                        # RUNS or REFUSED
    make: Callable                     # make(gen) -> list of CPU input tensors
    call: Callable                     # call(inputs on one device) -> list of tensors to compare


CASES: list[Case] = []


def case(name: str, expect: str = RUNS):
    def register(fn):
        make, call = fn()
        CASES.append(Case(name, expect, make, call))
        return fn
    return register


# ---------------------------------------------------------------------------------------------
# Inputs

def rand(gen, shape, dtype=None, positive=False):
    import torch
    t = torch.randn(shape, generator=gen)
    if positive:
        t = t.abs() + 1e-3
    return t.to(dtype or torch.float32)


def state_of(gen, shape, dtype=None):
    """grad, param, m, v (positive), s of one entry, in `dtype`."""
    return [rand(gen, shape, dtype), rand(gen, shape, dtype), rand(gen, shape, dtype),
            rand(gen, shape, dtype, positive=True), rand(gen, shape, dtype)]


def step_tensor(value):
    import torch
    return torch.tensor([value], dtype=torch.int64)


def overflowing(gen, grad, state_dtype):
    """`grad` changed so that the 16-bit results overflow (docs/ACLNN.md, "The float-overflow
    mode"): every fifth element large enough that (1 - beta2) g^2 passes `state_dtype`'s maximum
    (when that is 16-bit), and +inf, -inf and NaN at random places."""
    import torch
    flat = grad.clone().view(-1)
    big = {torch.float16: 16000.0, torch.bfloat16: 1e21}.get(state_dtype)
    if big is not None:
        flat[::5] = torch.where(flat[::5] < 0, -big, big).to(flat.dtype)
    specials = torch.tensor([float("inf"), float("-inf"), float("nan")])[:flat.numel()]
    flat[torch.randperm(flat.numel(), generator=gen)[:specials.numel()]] = specials.to(flat.dtype)
    return flat.view(grad.shape)


# ---------------------------------------------------------------------------------------------
# The single op (MindSpeed's npu_apply_fused_ema_adamw)

def _single(dtype_name, mode, bias_correction, weight_decay, overflow=False):
    import torch
    from ascend_ema_adam import npu_apply_fused_ema_adamw
    dtype = getattr(torch, dtype_name)

    def make(gen):
        t = state_of(gen, (3, 517), dtype) + [step_tensor(7)]
        if overflow:
            t[0] = overflowing(gen, t[0], dtype)
        return t

    def call(t):
        grad, var, m, v, s, step = t
        npu_apply_fused_ema_adamw(grad, var, m, v, s, step, lr=1e-3, ema_decay=0.999,
                                  mode=mode, bias_correction=bias_correction,
                                  weight_decay=weight_decay)
        return [var, m, v, s]
    return make, call


for _dtype in ("float32", "float16", "bfloat16"):
    for _mode, _bias, _wd in ((1, True, 0.01), (0, False, 0.05)):
        case(f"single {_dtype} mode={_mode} bias_correction={_bias}")(
            lambda d=_dtype, m=_mode, b=_bias, w=_wd: _single(d, m, b, w))

# Results that overflow 16 bits: inf and NaN kept (the INF_NAN mode torch_npu sets on A2/A3),
# and, in a process of its own in saturation mode, stored as +-MAX and 0 (overflow_mode_check).
OVERFLOWING = "overflowing 16-bit results"
for _dtype in ("float16", "bfloat16"):
    case(f"single {_dtype}: {OVERFLOWING}")(lambda d=_dtype: _single(d, 1, True, 0.01, overflow=True))


@case("single: var passed as m", REFUSED)
def _():
    import torch
    from ascend_ema_adam import npu_apply_fused_ema_adamw

    def make(gen):
        return state_of(gen, (64,)) + [step_tensor(2)]

    def call(t):
        grad, var, m, v, s, step = t
        npu_apply_fused_ema_adamw(grad, var, var, v, s, step)  # two updated tensors alias
        return [var, v, s]
    return make, call


@case("single: step of dtype float32", REFUSED)
def _():
    import torch
    from ascend_ema_adam import npu_apply_fused_ema_adamw

    def make(gen):
        return state_of(gen, (64,)) + [torch.tensor([2.0])]

    def call(t):
        npu_apply_fused_ema_adamw(*t)
        return t[1:5]
    return make, call


# ---------------------------------------------------------------------------------------------
# The list op (FusedEmaAdamW's launches): every dtype row of the contract, the options

LIST_SHAPES = [(100,), (37,), (2, 1000), (1,), (4096,)]


def _list_case(row, amsgrad=False, copies=None, ema=True, n_shapes=None, scalars=(),
               found_inf=0.0, maximize=False, mode=1, bias_correction=True, shapes=None,
               overflow=False):
    """A list call of one dtype row (ascend_ema_adam._dtypes.LIST_DTYPES[row])."""
    import torch
    from ascend_ema_adam import apply_fused_ema_adam_list
    from ascend_ema_adam._dtypes import LIST_DTYPES
    dt = LIST_DTYPES[row]
    shapes = shapes or LIST_SHAPES[:n_shapes]
    with_copies = dt.copy is not None if copies is None else copies

    def make(gen):
        tensors = []
        for shape in shapes:
            grad = rand(gen, shape, dt.grad.torch)
            if overflow:
                grad = overflowing(gen, grad, dt.state.torch)
            tensors += [grad, rand(gen, shape, dt.param.torch),
                        rand(gen, shape, dt.state.torch),
                        rand(gen, shape, dt.state.torch, positive=True),
                        rand(gen, shape, dt.state.torch)]
            if amsgrad:
                tensors.append(rand(gen, shape, dt.state.torch, positive=True))
            if with_copies:
                tensors.append(rand(gen, shape, dt.copy.torch))
        tensors.append(step_tensor(5))
        tensors.append(torch.tensor([2.0 ** 7]))           # grad scale
        tensors.append(torch.tensor([found_inf]))          # found_inf
        tensors.append(torch.tensor([3e-3]))               # lr tensor
        tensors.append(torch.tensor([0.99]))               # EMA decay tensor
        return tensors

    per = 5 + amsgrad + with_copies

    def call(t):
        entries = [t[i * per:(i + 1) * per] for i in range(len(shapes))]
        step, scale, inf, lr, decay = t[len(shapes) * per:]
        lists = [[e[k] for e in entries] for k in range(per)]
        grads, vars_, ms, vs, ss = lists[:5]
        max_vs = lists[5] if amsgrad else None
        model_copies = lists[-1] if with_copies else None
        apply_fused_ema_adam_list(
            grads, vars_, ms, vs, ss if ema else [], step,
            lr=lr if "lr" in scalars else 1e-3,
            ema_decay=decay if "ema_decay" in scalars else 0.999,
            mode=mode, bias_correction=bias_correction, weight_decay=0.02, max_vs=max_vs,
            model_copies=model_copies, maximize=maximize,
            grad_scale=scale if "grad_scale" in scalars else None,
            found_inf=inf if "found_inf" in scalars else None)
        return [x for e in entries for x in e[1:]]
    return make, call


def _list_rows():
    from ascend_ema_adam._dtypes import LIST_DTYPES
    return LIST_DTYPES


for _row, _dt in enumerate(_list_rows()):
    _name = "-".join(d.short for d in (_dt.grad, _dt.param, _dt.state) + ((_dt.copy,) if _dt.copy else ()))
    case(f"list {_name} (grad-param-state[-copy])")(lambda r=_row: _list_case(r))
case("list fp32 AMSGrad")(lambda: _list_case(0, amsgrad=True))
case("list bf16-fp32 AMSGrad with model copies")(lambda: _list_case(3, amsgrad=True))
case("list fp32 without EMA (ss empty)")(lambda: _list_case(0, ema=False))
case("list fp16 without EMA, AMSGrad")(lambda: _list_case(5, ema=False, amsgrad=True))
case("list fp32 maximize")(lambda: _list_case(0, maximize=True))
case("list fp32 Adam-L2 without bias correction")(lambda: _list_case(0, mode=0, bias_correction=False))
case("list fp32 grad_scale")(lambda: _list_case(0, scalars=("grad_scale",)))
case("list bf16 grad_scale + found_inf clear")(lambda: _list_case(9, scalars=("grad_scale", "found_inf")))
case("list fp32 found_inf set: nothing written")(lambda: _list_case(0, scalars=("found_inf",), found_inf=1.0))
case("list fp32 lr and EMA decay tensors")(lambda: _list_case(0, scalars=("lr", "ema_decay")))
case("list fp16 all scalars, AMSGrad, copies off")(
    lambda: _list_case(6, amsgrad=True, scalars=("grad_scale", "found_inf", "lr", "ema_decay")))
case("list fp32 300 entries (two launches)")(lambda: _list_case(0, shapes=[(7 + i % 5,) for i in range(300)]))
case("list fp32 513 entries, AMSGrad, all scalars")(
    lambda: _list_case(0, amsgrad=True, shapes=[(3 + i % 4,) for i in range(513)],
                       scalars=("grad_scale", "found_inf", "lr", "ema_decay")))
case("list fp32 empty entries")(lambda: _list_case(0, shapes=[(0,), (5,), (0, 3)]))
case(f"list fp16 AMSGrad, lr and EMA decay tensors: {OVERFLOWING}")(
    lambda: _list_case(5, amsgrad=True, scalars=("lr", "ema_decay"), overflow=True))
case(f"list bf16: {OVERFLOWING}")(lambda: _list_case(9, overflow=True))


# ---------------------------------------------------------------------------------------------
# The 8-bit list operator (ApplyFusedEmaAdam8bitList): codes, block scales and maps

ADAM8BIT_SHAPES = [(300,), (1,), (2, 600), (256,), (37,)]


def _adam8bit_case(row, ema=True, scalars=(), found_inf=0.0, maximize=False, mode=1,
                   shapes=None, functional=False):
    """An 8-bit list call of one dtype row (ascend_ema_adam._dtypes.LIST8BIT_DTYPES[row]): random
    codes and positive block scales, bitsandbytes' maps (golden8bit.dynamic_map)."""
    import torch
    from ascend_ema_adam import golden8bit
    from ascend_ema_adam._dtypes import LIST8BIT_DTYPES
    from ascend_ema_adam.ops import apply_fused_ema_adam8bit_list
    dt = LIST8BIT_DTYPES[row]
    shapes = shapes or ADAM8BIT_SHAPES
    with_copies = dt.copy is not None
    per = 7 + with_copies

    def make(gen):
        tensors = []
        for shape in shapes:
            n = 1
            for d in shape:
                n *= d
            blocks = (n + 255) // 256
            tensors += [rand(gen, shape, dt.grad.torch) * 1e-2, rand(gen, shape, dt.param.torch),
                        torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8),
                        torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8),
                        rand(gen, (blocks,), positive=True) * 1e-2,
                        rand(gen, (blocks,), positive=True) * 1e-4, rand(gen, shape)]
            if with_copies:
                tensors.append(rand(gen, shape, dt.copy.torch))
        tensors += [torch.from_numpy(golden8bit.dynamic_map(True).copy()),
                    torch.from_numpy(golden8bit.dynamic_map(False).copy()), step_tensor(5),
                    torch.tensor([2.0 ** 7]), torch.tensor([found_inf]), torch.tensor([3e-3]),
                    torch.tensor([0.99])]
        return tensors

    def call(t):
        entries = [t[i * per:(i + 1) * per] for i in range(len(shapes))]
        qmap_m, qmap_v, step, scale, inf, lr, decay = t[len(shapes) * per:]
        lists = [[e[k] for e in entries] for k in range(per)]
        args = dict(lr=lr if "lr" in scalars else 1e-3,
                    ema_decay=decay if "ema_decay" in scalars else 0.999, mode=mode,
                    weight_decay=0.02, model_copies=lists[7] if with_copies else None,
                    maximize=maximize, grad_scale=scale if "grad_scale" in scalars else None,
                    found_inf=inf if "found_inf" in scalars else None)
        if functional:
            out = torch.ops.ascend_ema_adam.apply_fused_ema_adam8bit_list(
                *lists[:6], lists[6] if ema else [], qmap_m, qmap_v, step, 1e-3, 0.999, 0.9,
                0.999, 1e-8, mode, True, 0.02, model_copies=args["model_copies"])
            return [x for lst in out for x in lst] + [x for e in entries for x in e]
        apply_fused_ema_adam8bit_list(*lists[:6], lists[6] if ema else None, qmap_m, qmap_v,
                                      step, **args)
        return [x for e in entries for x in e[1:]]
    return make, call


def _refused_adam8bit(what):
    """A valid fp32 8-bit call with its codes made float, or one entry's scales short."""
    make, call = _adam8bit_case(0)

    def broken(t):
        per = 7
        t = list(t)
        if what == "codes":
            t[2] = t[2].float()
        else:
            t[per + 4] = t[per + 4][:0]
        return call(t)
    return make, broken

case("8-bit list fp32 (grad-param fp32-fp32)")(lambda: _adam8bit_case(0))
case("8-bit list bf16 grads of fp32 masters with bf16 copies")(lambda: _adam8bit_case(8))
case("8-bit list fp16 params without EMA (ss and model_copies placeholders)")(
    lambda: _adam8bit_case(10, ema=False))
case("8-bit list bf16 params: lr / decay tensors, grad_scale, found_inf clear, maximize, L2")(
    lambda: _adam8bit_case(14, scalars=("lr", "ema_decay", "grad_scale", "found_inf"),
                           maximize=True, mode=0))
case("8-bit list fp32 found_inf set: nothing written")(
    lambda: _adam8bit_case(3, scalars=("found_inf",), found_inf=1.0))
case("8-bit list fp32 300 entries (two launches)")(
    lambda: _adam8bit_case(1, shapes=[(7 + i % 300,) for i in range(300)]))
case("8-bit list functional variant, fp16 copies")(lambda: _adam8bit_case(4, functional=True))
case("8-bit list: float codes", REFUSED)(lambda: _refused_adam8bit("codes"))
case("8-bit list: short block scales", REFUSED)(lambda: _refused_adam8bit("scales"))



@case("single functional variant (apply_fused_ema_adam), bf16")
def _():
    import torch
    from ascend_ema_adam.ops import apply_fused_ema_adam_functional

    def make(gen):
        return state_of(gen, (700,), torch.bfloat16) + [step_tensor(4)]

    def call(t):
        grad, var, m, v, s, step = t
        out = apply_fused_ema_adam_functional(grad, var, m, v, s, step, weight_decay=0.01)
        return list(out) + [var, m, v, s]  # the new tensors, and the inputs unchanged
    return make, call


@case("list functional variant (apply_fused_ema_adam_list), fp32 with AMSGrad")
def _():
    import torch

    def make(gen):
        return [rand(gen, (33,), positive=(k in (3, 5))) for _ in range(3) for k in range(6)] + \
            [step_tensor(6)]

    def call(t):
        lists = [[t[i * 6 + k] for i in range(3)] for k in range(6)]
        grads, vars_, ms, vs, ss, max_vs = lists
        out = torch.ops.ascend_ema_adam.apply_fused_ema_adam_list(
            grads, vars_, ms, vs, ss, t[-1], 1e-3, 0.999, 0.9, 0.999, 1e-8, 1, True, 0.01,
            max_vs=max_vs)
        return [x for lst in out for x in lst] + [x for lst in lists for x in lst]
    return make, call


@case("list: a transposed entry (one dense layout)")
def _():
    import torch
    from ascend_ema_adam import apply_fused_ema_adam_list

    def make(gen):
        return [rand(gen, (5, 7)).t() for _ in range(4)] + [rand(gen, (5, 7), positive=True).t(),
                                                           rand(gen, (5, 7)).t(), step_tensor(3)]

    def call(t):
        g, p, m, _, v, s, step = t
        apply_fused_ema_adam_list([g], [p], [m], [v], [s], step, weight_decay=0.01)
        return [p, m, v, s]
    return make, call


def _refused_list(mutate):
    """A valid fp32 list call of 3 entries with `mutate(lists, step)` applied: it must raise."""
    import torch
    from ascend_ema_adam import apply_fused_ema_adam_list

    def make(gen):
        return [rand(gen, (40,), positive=(k == 3)) for _ in range(3) for k in range(5)] + [step_tensor(4)]

    def call(t):
        entries = [list(t[i * 5:(i + 1) * 5]) for i in range(3)]
        lists = [[e[k] for e in entries] for k in range(5)]
        step = t[-1]
        kwargs = mutate(lists, step) or {}
        apply_fused_ema_adam_list(*lists, step, **kwargs)
        return [x for e in entries for x in e[1:]]
    return make, call


case("list: dtypes mixed inside a list", REFUSED)(
    lambda: _refused_list(lambda l, s: l[2].__setitem__(1, l[2][1].to(__import__("torch").float16))))
case("list: shapes differ across lists", REFUSED)(
    lambda: _refused_list(lambda l, s: l[3].__setitem__(2, l[3][2][:20])))
case("list: one tensor twice (vars and ms)", REFUSED)(
    lambda: _refused_list(lambda l, s: l[2].__setitem__(0, l[1][0])))
case("list: ss shorter than vars", REFUSED)(lambda: _refused_list(lambda l, s: l[4].pop()))
case("list: beta1 = 1", REFUSED)(lambda: _refused_list(lambda l, s: {"beta1": 1.0}))
case("list: NaN lr", REFUSED)(lambda: _refused_list(lambda l, s: {"lr": float("nan")}))
case("list: adam mode 2", REFUSED)(lambda: _refused_list(lambda l, s: {"mode": 2}))
case("list: 16-bit grads of fp32 params without model copies", REFUSED)(
    lambda: _refused_list(lambda l, s: l[0].__setitem__(0, l[0][0].to(__import__("torch").float16))))


# ---------------------------------------------------------------------------------------------
# FusedEmaAdamW on npu parameters: gradients set directly (no device forward / backward)

class _Relaunches:
    """Counts FusedEmaAdamW's phase-2-only steps (_C.ApplyFusedEmaAdamListLaunch.run returning True:
    a prepared launch ran again), so a case shows the NPU took the prepared path as often as the
    CPU."""

    count = 0

    @classmethod
    def install(cls):
        from ascend_ema_adam import _C
        if getattr(_C.ApplyFusedEmaAdamListLaunch.run, "counted", False):
            return
        run = _C.ApplyFusedEmaAdamListLaunch.run

        def counted(self, *args, **kwargs):
            done = run(self, *args, **kwargs)
            cls.count += bool(done)
            return done
        counted.counted = True
        _C.ApplyFusedEmaAdamListLaunch.run = counted


def _workspace_released(before: int) -> bool:
    """After a step, the NPU's allocated memory is back to `before` within 1 MiB: the launches'
    workspaces (at least CANN's 16 MiB system workspace each) went back to the caching allocator
    once they ran (the task queue's release thread frees them: given a moment)."""
    import time
    import torch
    torch.npu.synchronize()
    for _ in range(100):
        if torch.npu.memory_allocated() - before < 1 << 20:
            return True
        time.sleep(0.01)
    return False


def _optimizer_case(steps=4, groups=None, options=None, between=None, state_dict_round_trip=False,
                    swap=False, new_grads=True, scaler=False, inf_at=None, relaunches=True,
                    unscale=False, workspace_check=False):
    """FusedEmaAdamW over five parameters for `steps` steps; returns every parameter and state
    tensor, the scaler's final scale, and how many steps ran as prepared relaunches (which must be
    some with `relaunches`). `unscale`: GradScaler.unscale_ before each step (the step then gets
    found_inf without grad_scale). `workspace_check`: on the NPU the last step holds no memory
    after it ran (no workspace kept between steps)."""
    import torch
    from ascend_ema_adam import FusedEmaAdamW
    shapes = [(16, 8), (16,), (2, 16), (2,), (300,)]
    groups = groups or [{"params": list(range(len(shapes)))}]
    options = options or {}

    def make(gen):
        params = [rand(gen, s, torch.float32) for s in shapes]
        grads = [rand(gen, s, torch.float32) for _ in range(steps) for s in shapes]
        return params + grads

    def call(t):
        _Relaunches.install()
        _Relaunches.count = 0
        device = t[0].device
        params = [torch.nn.Parameter(x.to(g.get("dtype", torch.float32))) for x, g in
                  ((t[i], grp) for grp in groups for i in grp["params"])]
        index = {i: params[k] for k, i in enumerate(i for grp in groups for i in grp["params"])}
        opt = FusedEmaAdamW([{**{k: v for k, v in grp.items() if k not in ("params", "dtype")},
                              "params": [index[i] for i in grp["params"]]} for grp in groups],
                            **options)
        amp = torch.amp.GradScaler(device.type, init_scale=2.0 ** 10, growth_interval=2) if scaler else None
        for n in range(steps):
            for i, p in index.items():
                g = t[len(shapes) + n * len(shapes) + i].to(p.dtype)
                if amp is not None:
                    g = amp.scale(g)  # as a scaled loss's backward would make it
                if inf_at == n and i == 0:
                    g = g.clone()
                    g[0, 0] = float("inf")
                if new_grads or p.grad is None:
                    p.grad = g.clone()
                else:
                    p.grad.copy_(g)
            measure = workspace_check and device.type == "npu" and n == steps - 1
            if measure:
                torch.npu.synchronize()
                before = torch.npu.memory_allocated()
            if amp is not None:
                if unscale:
                    amp.unscale_(opt)
                amp.step(opt)
                amp.update()
            else:
                opt.step()
            if measure and not _workspace_released(before):
                raise AssertionError(f"a step kept {torch.npu.memory_allocated() - before} bytes "
                                     f"of NPU memory after it ran")
            if between is not None:
                between(opt, n)
        out = [p.detach() for p in params]
        if amp is not None:  # the scale it ended with (it backs off on an inf step)
            out.append(torch.tensor([amp.get_scale()], dtype=torch.float64))
        if swap:
            with opt.swap_ema():
                out += [p.detach().clone() for p in params]
        if state_dict_round_trip:
            saved = opt.state_dict()
            fresh = FusedEmaAdamW([{**{k: v for k, v in grp.items() if k not in ("params", "dtype")},
                                    "params": [index[i] for i in grp["params"]]} for grp in groups],
                                  **options)
            fresh.load_state_dict(saved)
            for i, p in index.items():
                p.grad = t[len(shapes) + i].to(p.dtype).clone()
            fresh.step()
            out += [p.detach() for p in params]
            opt = fresh
        for p in params:
            state = opt.state[p]
            out += [v for k, v in sorted(state.items()) if isinstance(v, torch.Tensor) and k != "step"]
        if relaunches and _Relaunches.count == 0:
            raise AssertionError(f"no step ran as a prepared relaunch on {device}")
        return out + [torch.tensor([_Relaunches.count])]
    return make, call


case("FusedEmaAdamW 4 steps (prepared relaunches), new gradients each step, no workspace kept")(
    lambda: _optimizer_case(workspace_check=True))
case("FusedEmaAdamW 4 steps, gradients updated in place")(lambda: _optimizer_case(new_grads=False))
case("FusedEmaAdamW two groups, step_scope=group, AMSGrad")(
    lambda: _optimizer_case(groups=[{"params": [0, 1]}, {"params": [2, 3, 4], "amsgrad": True,
                                                         "weight_decay": 0.1}],
                            options={"step_scope": "group", "lr": 3e-3}))
case("FusedEmaAdamW bf16 params with fp32 masters")(
    lambda: _optimizer_case(groups=[{"params": [0, 1, 2, 3, 4], "dtype": __import__("torch").bfloat16}],
                            options={"master_weights": True}))
case("FusedEmaAdamW fp16 params, fp32 state, ema_every=2")(
    lambda: _optimizer_case(groups=[{"params": [0, 1, 2, 3, 4], "dtype": __import__("torch").float16}],
                            options={"ema_every": 2}))
case("FusedEmaAdamW fused clipping (max_grad_norm)")(
    lambda: _optimizer_case(options={"max_grad_norm": 0.5}))
case("FusedEmaAdamW GradScaler (grad_scale and found_inf read by the kernel)")(
    lambda: _optimizer_case(scaler=True))
case("FusedEmaAdamW GradScaler, an inf gradient skips step 2")(
    lambda: _optimizer_case(scaler=True, inf_at=2))
case("FusedEmaAdamW GradScaler with unscale_ (a new found_inf each step, no grad_scale)")(
    lambda: _optimizer_case(scaler=True, unscale=True, inf_at=1))
case("FusedEmaAdamW swap_ema")(lambda: _optimizer_case(swap=True))
case("FusedEmaAdamW state_dict round trip, then a step")(
    lambda: _optimizer_case(state_dict_round_trip=True))
case("FusedEmaAdamW foreach=False (one single-op launch per parameter)")(
    lambda: _optimizer_case(options={"foreach": False}, relaunches=False))
case("FusedEmaAdamW lr changed between steps (scheduler-like)")(
    lambda: _optimizer_case(between=lambda opt, n: [g.__setitem__("lr", g["lr"] * 0.5)
                                                    for g in opt.param_groups]))
# 8-bit state (min_8bit_size=0: these parameters are small): every launch goes through the
# 8-bit op (no prepared relaunches); the state compared holds the codes, scales and the EMA.
case("FusedEmaAdamW state_bits=8, 4 steps")(
    lambda: _optimizer_case(options={"state_bits": 8, "min_8bit_size": 0}, relaunches=False))
case("FusedEmaAdamW state_bits=8, bf16 params with fp32 masters, maximize")(
    lambda: _optimizer_case(groups=[{"params": [0, 1, 2, 3, 4],
                                     "dtype": __import__("torch").bfloat16}],
                            options={"state_bits": 8, "min_8bit_size": 0, "master_weights": True,
                                     "maximize": True}, relaunches=False))
case("FusedEmaAdamW an 8-bit group beside an fp32 one, GradScaler with an inf step, "
     "state_dict round trip")(
    lambda: _optimizer_case(groups=[{"params": [0, 2, 4], "state_bits": 8, "min_8bit_size": 0},
                                    {"params": [1, 3]}],
                            scaler=True, inf_at=2, state_dict_round_trip=True))


# ---------------------------------------------------------------------------------------------
# Running

def bit_identical(a, b) -> bool:
    import torch
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.detach().contiguous(), b.detach().contiguous()
    if a.is_floating_point():
        view = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        a, b = a.view(view), b.view(view)
    return torch.equal(a, b)


def saturated(t):
    """A CPU result as a device in saturation mode stores it: 16-bit inf -> +-MAX, NaN -> 0
    (golden.narrow)."""
    import torch
    from ascend_ema_adam import golden
    from ascend_ema_adam._dtypes import by_torch
    if t.dtype not in (torch.float16, torch.bfloat16):
        return t
    np_dtype = by_torch(t.dtype).numpy
    wide = t.float().numpy()
    return torch.from_numpy(golden.narrow(wide, np_dtype, "saturation").view(
        {2: "int16"}[t.element_size()])).view(t.dtype)


def run_one(c: Case, seed: int, saturation: bool = False) -> tuple[str, str]:
    """(outcome, detail): outcome 'ok' or 'failed'. With `saturation` (the device in saturation
    mode) the NPU results must be the CPU's (IEEE) as saturation mode stores them, and the CPU's
    must have 16-bit infs or NaNs for that to show."""
    import torch
    gen = torch.Generator().manual_seed(seed)
    inputs = c.make(gen)
    cpu = [t.clone() for t in inputs]
    npu = [t.npu() for t in inputs]
    errors = {}
    results = {}
    for device, tensors in (("cpu", cpu), ("npu", npu)):
        try:
            results[device] = [t.cpu() for t in c.call(tensors)]
            torch.npu.synchronize()
        except Exception as e:  # noqa: BLE001 -- a refusal is an outcome
            errors[device] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if c.expect == REFUSED:
        if set(errors) != {"cpu", "npu"}:
            return "failed", f"expected a refusal on both devices, got errors {errors or 'none'}"
        changed = [i for i, (a, b) in enumerate(zip(inputs, npu)) if not bit_identical(a, b.cpu())]
        if changed:
            return "failed", f"refused but changed NPU inputs {changed}: {errors['npu']}"
        return "ok", errors["npu"]
    if errors:
        return "failed", f"raised: {errors}"
    a, b = results["cpu"], results["npu"]
    if saturation:
        nonfinite = sum(int((~x.float().isfinite()).sum()) for x in a if x.element_size() == 2)
        if nonfinite == 0:
            return "failed", "no 16-bit CPU result overflows"
        a = [saturated(x) for x in a]
    if len(a) != len(b):
        return "failed", f"{len(a)} CPU results, {len(b)} NPU results"
    different = [i for i, (x, y) in enumerate(zip(a, b)) if not bit_identical(x, y)]
    if different:
        i = different[0]
        worst = (a[i].double() - b[i].double()).abs().max().item() if a[i].numel() else 0
        return "failed", (f"{len(different)} of {len(a)} results differ (first: #{i}, "
                          f"{tuple(a[i].shape)} {a[i].dtype}, max |diff| {worst:g})")
    return "ok", f"{len(a)} tensors"


def fault_case(seed: int) -> tuple[str, str]:
    """A prepared call whose queued address update fails (the fault injector of
    standins/faulty_opapi.c fails the first aclSetDynamicInputTensorAddr): the launch writes
    nothing, the failure reaches the caller as torch_npu's error, and the prepared call refuses
    to run again (run() is False: the caller prepares a new one) instead of reusing addresses
    it never set. (outcome, detail), as run_one."""
    import torch
    from ascend_ema_adam import _C
    gen = torch.Generator().manual_seed(seed)
    shapes = [(64,), (300,)]
    lists = [[rand(gen, s, positive=(k == 3)).npu() for s in shapes] for k in range(5)]
    grads, vars_, ms, vs, ss = lists
    step = step_tensor(3).npu()
    launch = _C.ApplyFusedEmaAdamListLaunch(grads, vars_, ms, vs, ss, [], [], step, None, None,
                                            1e-3, 0.999, 0.9, 0.999, 1e-8, 1, True, 0.01, False)
    before = [x.cpu() for x in vars_ + ms + vs + ss]
    moved = [g.clone() for g in grads]  # new gradient tensors: their addresses are updated
    error = None
    # The failure surfaces at the call (TASK_QUEUE_ENABLE=0) or, from the task queue's thread, at
    # a later synchronisation or enqueue (the queue's error is sticky; one synchronisation may
    # return before the thread has recorded it).
    steps = [lambda: launch.run(moved, step, 1e-3, 0.999, None, None), torch.npu.synchronize,
             lambda: torch.zeros(1).npu(), torch.npu.synchronize]
    for attempt in steps:
        try:
            attempt()
        except RuntimeError as e:
            error = str(e).splitlines()[0]
            break
    if error is None:
        return "failed", "the failed address update did not reach the caller"
    if launch.run(moved, step, 1e-3, 0.999, None, None):
        return "failed", "the prepared call ran again after its address update had failed"
    try:
        after = [x.cpu() for x in vars_ + ms + vs + ss]
    except RuntimeError as e:  # torch_npu may stop the stream after a failed launch
        return "ok", f"raised ({error}); run() then False; the device then refused reads: {e}"
    if not all(bit_identical(a, b) for a, b in zip(before, after)):
        return "failed", "the launch whose address update failed wrote to the device"
    return "ok", f"raised ({error}); nothing written; run() then False"


# ---------------------------------------------------------------------------------------------
# Which operator an aclnn name reaches (docs/ACLNN.md, "The op type"), each in a process of its own

def _library_of(address: int) -> str:
    """The file name of the shared library holding `address` (dladdr)."""
    import ctypes
    import os

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]
    info = DlInfo()
    libc = ctypes.CDLL(None)
    if not address or not libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
        return "(not found)"
    return os.path.basename(info.dli_fname.decode())


def _op_api_address(name: str) -> int:
    """torch_npu's own lookup of an aclnn name (op-plugin's GetOpApiFuncAddr, exported by
    libtorch_npu.so): the custom packages of ASCEND_CUSTOM_OPP_PATH, then CANN's libraries."""
    import ctypes
    import os
    import torch_npu
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch_npu.__file__), "lib", "libtorch_npu.so"))
    lookup = lib._Z16GetOpApiFuncAddrPKc
    lookup.restype, lookup.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    return lookup(name.encode()) or 0


def _single_op_on_npu() -> str | None:
    """The single op on npu tensors: None when it ran, else the error's first line."""
    import torch
    from ascend_ema_adam import npu_apply_fused_ema_adamw
    cpu = [torch.randn(8) for _ in range(5)]
    cpu[3] = cpu[3].abs() + 1e-3  # v >= 0 (on the host: the device path of abs is not stood in)
    t = [x.npu() for x in cpu]
    try:
        npu_apply_fused_ema_adamw(*t, torch.tensor([1]).npu())
        torch.npu.synchronize()
        return None
    except RuntimeError as e:
        return str(e).splitlines()[0]


def lookup_check(which: str) -> tuple[str, str]:
    """(outcome, detail) of one check of how the package is found."""
    import os
    import torch  # noqa: F401
    import torch_npu  # noqa: F401 -- reads ASCEND_CUSTOM_OPP_PATH now
    if which == "op-types":
        builtin = _library_of(_op_api_address("aclnnApplyFusedEmaAdam"))
        ours = _library_of(_op_api_address("aclnnAeaApplyFusedEmaAdam"))
        detail = f"aclnnApplyFusedEmaAdam in {builtin}, aclnnAeaApplyFusedEmaAdam in {ours}"
        ok = builtin == "libopapi.so" and ours == "libcust_opapi.so"
        error = _single_op_on_npu()
        if error is not None:
            return "failed", f"{detail}; the single op raised: {error}"
        return ("ok" if ok else "failed"), detail
    if which == "path-after-import":  # the package named only after torch_npu read the variable
        os.environ["ASCEND_CUSTOM_OPP_PATH"] = os.environ.pop("AEA_LATE_OPP_PATH")
    error = _single_op_on_npu()
    if error is None:
        return "failed", "the single op ran, though torch_npu cannot have found the package"
    if "not found in CANN's op-API libraries" not in error:
        return "failed", f"not the package's not-found error: {error}"
    return "ok", error


def import_order_check() -> tuple[str, str]:
    """(outcome, detail): ``import ascend_ema_adam`` in a process that has not imported torch_npu,
    torch's device-backend autoload off: the package loads torch_npu itself, and its op runs."""
    script = (
        "import sys, torch\n"
        "assert 'torch_npu' not in sys.modules, 'torch imported torch_npu'\n"
        "import ascend_ema_adam\n"
        "from ascend_ema_adam.optim import FusedEmaAdamW\n"
        "assert 'torch_npu' in sys.modules, 'the package did not import torch_npu'\n"
        "cpu = [torch.randn(8) for _ in range(5)]\n"
        "cpu[3] = cpu[3].abs() + 1e-3\n"
        "t = [x.npu() for x in cpu]\n"
        "ascend_ema_adam.npu_apply_fused_ema_adamw(*t, torch.tensor([1]).npu())\n"
        "torch.npu.synchronize()\n"
        "from ascend_ema_adam import _C\n"
        "print('npu kernel', _C.build_info()['npu_kernel'], 'torch_npu loaded',"
        " 'torch_npu' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0",
                               "TASK_QUEUE_ENABLE": "0"})
    out = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not out:
        return "failed", (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return ("ok" if out[-1] == "npu kernel True torch_npu loaded True" else "failed"), out[-1]


IMPORT_ORDER = {"import-order": "import ascend_ema_adam before torch_npu with torch's backend "
                                "autoload off (TORCH_DEVICE_BACKEND_AUTOLOAD=0): the package loads "
                                "torch_npu itself and its op runs"}


LOOKUP_CHECKS = {
    "op-types": "the package's single op is its own op type: CANN's ApplyFusedEmaAdam is left "
                "to CANN's library",
    "path-after-import": "ASCEND_CUSTOM_OPP_PATH set after import torch_npu: the op says the "
                         "package is not found",
    "foreign-owner": "the package's library owned by another user: the op says it is not found",
}


# ---------------------------------------------------------------------------------------------
# The float-overflow mode torch_npu runs the device in (docs/ACLNN.md, "The float-overflow mode")

def _device_sat_mode() -> int:
    """The device's float-overflow mode as torch_npu left it (aclrtGetDeviceSatMode of the
    runtime torch_npu loaded): 0 saturation, 1 INF_NAN."""
    import ctypes
    mode = ctypes.c_int(-1)
    ctypes.CDLL("libascendcl.so").aclrtGetDeviceSatMode(ctypes.byref(mode))
    return mode.value


def overflow_mode_check(which: str, seed: int) -> tuple[str, str]:
    """(outcome, detail): the mode torch_npu set at device init, and the overflowing cases in
    it: bit-identical to the CPU in INF_NAN mode (also run with every case), the CPU's results
    as saturation mode stores them in saturation mode."""
    import torch
    import torch_npu
    torch.zeros(1).npu()  # device init: torch_npu sets the mode here
    inf_nan = torch_npu.npu.utils.is_support_inf_nan()
    device = _device_sat_mode()
    want_inf_nan = which == "inf-nan-mode"
    detail = f"is_support_inf_nan() {inf_nan}, device mode {'INF_NAN' if device == 1 else 'saturation'}"
    if inf_nan != want_inf_nan or device != int(want_inf_nan):
        return "failed", detail
    cases = [c for c in CASES if OVERFLOWING in c.name]
    for c in cases:
        outcome, why = run_one(c, seed, saturation=not want_inf_nan)
        if outcome != "ok":
            return "failed", f"{detail}; {c.name}: {why}"
    return "ok", f"{detail}; {len(cases)} overflowing cases as the mode stores them"


OVERFLOW_MODE_CHECKS = {
    "inf-nan-mode": "a torch_npu process runs the device in INF_NAN mode: inf and NaN stored as the "
                    "CPU computes them",
    "saturation-mode": "with INF_NAN_MODE_ENABLE=0 INF_NAN_MODE_FORCE_DISABLE=1 torch_npu sets "
                       "saturation mode: 16-bit inf stored as +-MAX, NaN as 0",
}


def child(mode: str, seed: int, only: str | None) -> int:
    import torch
    import torch_npu  # noqa: F401 -- the real one, from the wheel
    import ascend_ema_adam  # noqa: F401
    assert torch_npu.__version__ == NPU_VERSION, (torch_npu.__version__, NPU_VERSION)
    from ascend_ema_adam import _C
    assert _C.build_info()["npu_kernel"], "ascend_ema_adam was built without its NPU kernel"
    if only in LOOKUP_CHECKS:
        outcome, detail = lookup_check(only)
        print(json.dumps({"case": only, "expect": RUNS, "mode": mode, "outcome": outcome,
                          "detail": detail}), flush=True)
        return 0
    if only in OVERFLOW_MODE_CHECKS:
        outcome, detail = overflow_mode_check(only, seed)
        print(json.dumps({"case": only, "expect": RUNS, "mode": mode, "outcome": outcome,
                          "detail": detail}), flush=True)
        return 0
    if only == FAULT:
        outcome, detail = fault_case(seed)
        print(json.dumps({"case": FAULT, "expect": REFUSED, "mode": mode, "outcome": outcome,
                          "detail": detail}), flush=True)
        return 0
    for c in CASES:
        if only and not re.search(only, c.name):
            continue
        try:
            outcome, detail = run_one(c, seed)
        except Exception:  # noqa: BLE001
            outcome, detail = "failed", traceback.format_exc().splitlines()[-1]
        print(json.dumps({"case": c.name, "expect": c.expect, "mode": mode, "outcome": outcome,
                          "detail": detail}), flush=True)
    return 0


def _foreign_copy(opp: str) -> str:
    """A copy of the package whose aclnn library belongs to another user (uid 65534, nobody):
    op-plugin skips a custom library owned by neither the running user nor root."""
    import os
    import shutil
    copy = os.path.join(os.path.dirname(os.path.dirname(opp)), "opp_foreign", "aea")
    shutil.rmtree(os.path.dirname(copy), ignore_errors=True)
    os.makedirs(os.path.join(copy, "op_api", "lib"))
    os.symlink(os.path.realpath(os.path.join(opp, "op_impl")), os.path.join(copy, "op_impl"))
    lib = os.path.join(copy, "op_api", "lib", "libcust_opapi.so")
    shutil.copy2(os.path.join(opp, "op_api", "lib", "libcust_opapi.so"), lib)
    os.chown(lib, 65534, 65534)
    return copy


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", nargs="+", default=["0", "1", "2"])
    parser.add_argument("--only")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--faulty-opp", help="the fault injector's operator package (run.sh)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    if args.child is not None:
        return child(args.child, seed, args.only)

    results: dict[str, dict[str, dict]] = {}
    for mode in args.modes:
        env = {**os.environ, "TASK_QUEUE_ENABLE": mode}
        cmd = [sys.executable, __file__, "--child", mode, "--seed", str(seed)]
        if args.only:
            cmd += ["--only", args.only]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results.setdefault(r["case"], {})[mode] = r
        if proc.returncode != 0:
            print(f"torch-npu: TASK_QUEUE_ENABLE={mode}: the process ended with status "
                  f"{proc.returncode} (stderr: build/torch_npu/cases.err)")
    if args.faulty_opp:  # the fault case: the injector's package first, in each mode
        for mode in args.modes:
            env = {**os.environ, "TASK_QUEUE_ENABLE": mode, "AEA_FAULTY_SET_ADDR_AT": "1",
                   "ASCEND_CUSTOM_OPP_PATH": args.faulty_opp}
            proc = subprocess.run([sys.executable, __file__, "--child", mode, "--seed", str(seed),
                                   "--only", FAULT], env=env, stdout=subprocess.PIPE, text=True)
            for line in proc.stdout.splitlines():
                if line.startswith("{"):
                    results.setdefault(FAULT, {})[mode] = json.loads(line)
    lookups: dict[str, dict] = {}
    if args.faulty_opp and not args.only:  # (run.sh: the package's layout is known)
        opp = os.environ["ASCEND_CUSTOM_OPP_PATH"]
        foreign = _foreign_copy(opp)
        for which, env in (("op-types", {}),
                           ("path-after-import", {"ASCEND_CUSTOM_OPP_PATH": "",
                                                  "AEA_LATE_OPP_PATH": opp}),
                           ("foreign-owner", {"ASCEND_CUSTOM_OPP_PATH": foreign})):
            proc = subprocess.run([sys.executable, __file__, "--child", "0", "--seed", str(seed),
                                   "--only", which],
                                  env={**os.environ, "TASK_QUEUE_ENABLE": "0", **env},
                                  stdout=subprocess.PIPE, text=True)
            lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
            lookups[which] = lines[0] if lines else {"outcome": "failed",
                                                     "detail": "the process ended"}
    if not args.only:
        for which, env in (("inf-nan-mode", {}),
                           ("saturation-mode", {"INF_NAN_MODE_ENABLE": "0",
                                                "INF_NAN_MODE_FORCE_DISABLE": "1"})):
            proc = subprocess.run([sys.executable, __file__, "--child", "1", "--seed", str(seed),
                                   "--only", which],
                                  env={**os.environ, "TASK_QUEUE_ENABLE": "1", **env},
                                  stdout=subprocess.PIPE, text=True)
            lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
            lookups[which] = lines[0] if lines else {"outcome": "failed",
                                                     "detail": "the process ended"}
    if not args.only:
        outcome, detail = import_order_check()
        lookups["import-order"] = {"outcome": outcome, "detail": detail}
    names = [c.name for c in CASES if not args.only or re.search(args.only, c.name)]
    names += [FAULT] if args.faulty_opp else []
    expect = {c.name: c.expect for c in CASES}
    expect[FAULT] = REFUSED
    identical = refused = 0
    failed = False
    for name in names:
        per_mode = results.get(name, {})
        bad = [m for m in args.modes if per_mode.get(m, {}).get("outcome") != "ok"]
        if bad:
            failed = True
            for m in bad:
                detail = per_mode.get(m, {}).get("detail", "did not run (the process ended)")
                print(f"torch-npu: FAILED {name} (TASK_QUEUE_ENABLE={m}): {detail}")
        elif expect[name] == REFUSED:
            refused += 1
        else:
            identical += 1
    for which, r in lookups.items():
        good = r["outcome"] == "ok"
        failed = failed or not good
        title = {**LOOKUP_CHECKS, **OVERFLOW_MODE_CHECKS, **IMPORT_ORDER}[which]
        print(f"torch-npu: {'' if good else 'FAILED '}{title} ({r['detail']})")
    print(f"torch-npu: {identical + refused} cases through the real torch_npu {NPU_VERSION} and op-plugin, "
          f"{identical} bit-identical, {refused} refused as expected (each in TASK_QUEUE_ENABLE="
          f"{', '.join(args.modes)}; seed {seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
