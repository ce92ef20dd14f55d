"""Whole optimizer steps, as users run them (``bench``'s second part): ``FusedEmaAdamW.step()``
(one multi-tensor launch, and ``foreach=False``: one launch per parameter) against
``torch.optim.AdamW(fused=True)`` and DeepSpeed CPUAdam, each + a ``torch._foreach_lerp_`` EMA, on
2048 small parameters and GPT-2-small's 148 shapes; the host cost per call; the NPU model of the
GPT-2 list."""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass

import numpy as np

from .. import kernels
from .bench_common import (HYPER, NPU_PLATFORM, TIME_RATIO, _fmt_time, gpt2_small_shapes,
                           measure, print_targets, use_threads)

@dataclass(frozen=True)
class StepCase:
    name: str
    shapes: tuple
    missing: tuple = ()  # parameters without a gradient (the same ones every step)

    @property
    def total(self) -> int:
        return sum(int(np.prod(s)) for s in self.shapes)


def step_cases() -> list[StepCase]:
    return [StepCase("step 2048x2K float32", tuple([(2048,)] * 2048)),
            StepCase("step 2048x1 float32", tuple([(1,)] * 2048)),
            StepCase("step 2048x64 one no-grad", tuple([(64,)] * 2048), missing=(7,)),
            StepCase("step GPT-2-small float32", tuple(gpt2_small_shapes()))]


def step_implementations(case: StepCase, torch, deepspeed_cls, seed: int) -> dict:
    """One optimizer step of each implementation over the same parameters and gradients (each
    keeps its own moments; the baselines share one EMA list)."""
    from ..optim import FusedEmaAdamW

    gen = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(s, generator=gen) * 0.05) for s in case.shapes]
    for p in params:
        p.grad = torch.randn(p.shape, generator=gen) * 1e-2
    twins = [torch.nn.Parameter(p.detach().clone()) for p in params]  # every gradient given
    for t, p in zip(twins, params):
        t.grad = p.grad.clone()
    for k in case.missing:
        params[k].grad = None
    h = HYPER
    ours = FusedEmaAdamW(params, lr=h.lr, eps=h.eps, betas=(h.beta1, h.beta2),
                         weight_decay=h.weight_decay, ema_decay=h.ema_decay)
    group = ours.param_groups[0]
    data = [p.data for p in params]
    ema = [d.clone() for d in data]

    def per_parameter():
        group["foreach"] = False
        try:
            ours.step()
        finally:
            group["foreach"] = None

    def with_lerp(optimizer):
        def run():
            optimizer.step()
            torch._foreach_lerp_(ema, data, 1.0 - h.ema_decay)
        return run

    torch_adamw = torch.optim.AdamW(params, lr=h.lr, betas=(h.beta1, h.beta2), eps=h.eps,
                                    weight_decay=h.weight_decay, fused=True)
    fns = {"ours": ours.step, "ours_per_param": per_parameter, "torch": with_lerp(torch_adamw)}
    if len(case.shapes) >= 1024 and max(map(len, case.shapes)) == 1 and case.total < 2**16:
        fns["torch_no_ema"] = torch_adamw.step  # host cost alone: torch fused AdamW's step
    if case.missing:  # the same step with every gradient: the cost of the missing one
        fns["ours_all_grads"] = FusedEmaAdamW(twins, lr=h.lr, eps=h.eps, betas=(h.beta1, h.beta2),
                                              weight_decay=h.weight_decay,
                                              ema_decay=h.ema_decay).step
    if deepspeed_cls is not None:
        fns["deepspeed"] = with_lerp(deepspeed_cls(params, lr=h.lr, betas=(h.beta1, h.beta2),
                                                   eps=h.eps, weight_decay=h.weight_decay,
                                                   adamw_mode=True))
    return fns


def list_npu_model(shapes) -> dict:
    """The NPU model of one list launch over ``shapes`` (fp32) on the preset: launches per step,
    elements per core of the list tiling (max / mean) against CANN FusedAdamw's split (whole
    tensors per core), and the bandwidth-bound time of the busiest core (a model)."""
    numels = [int(np.prod(s)) for s in shapes]
    preset = next(p for p in kernels.platforms() if p["name"] == NPU_PLATFORM)
    tiling = kernels.compute_list_tiling(numels, np.float32, hyper=HYPER, platform=NPU_PLATFORM)
    per_core = [sum(end - begin for _, begin, end in segs) for segs in tiling["core_segments"]]
    cores = tiling["block_dim"]
    per_tensor_core = -(-len(numels) // cores)  # FusedAdamw: ceil(tensors / cores) each
    whole = [sum(numels[c * per_tensor_core:(c + 1) * per_tensor_core])
             for c in range(-(-len(numels) // per_tensor_core))]
    share = preset["hbm_gbps"] * 1e9 / cores
    mean = sum(per_core) / len(per_core)
    return {"platform": NPU_PLATFORM, "tensors": len(numels), "elements": sum(numels),
            "launches_per_step": 1, "launches_per_step_per_parameter": len(numels),
            "cores": cores, "max_elements_per_core": max(per_core),
            "mean_elements_per_core": mean, "imbalance_max_over_mean": max(per_core) / mean,
            "whole_tensors_max_over_mean": max(whole) / (sum(whole) / cores),
            "seconds_model": max(per_core) * 36 / share}


def host_overhead(torch, count: int = 2048) -> dict:
    """Host time per call, 1 thread, on ``count`` 1-element fp32 tensors (the kernel's work is
    negligible): the list op on 5 lists, and FusedEmaAdamW.step() both ways."""
    from ..ops import apply_fused_ema_adam_list
    from ..optim import FusedEmaAdamW

    lists = [[torch.rand(1) for _ in range(count)] for _ in range(5)]
    step = torch.tensor([3])
    params = [torch.nn.Parameter(torch.rand(1)) for _ in range(count)]
    for p in params:
        p.grad = torch.rand(1)
    opt = FusedEmaAdamW(params)
    group = opt.param_groups[0]

    def per_parameter():
        group["foreach"] = False
        opt.step()
        group["foreach"] = None

    fns = {"list op, 5 lists": lambda: apply_fused_ema_adam_list(*lists, step),
           "FusedEmaAdamW.step()": opt.step,
           "FusedEmaAdamW.step(), foreach=False": per_parameter}
    with use_threads(torch, 1):
        timings = measure(fns, 7, 0.05, 0.002, random.Random(2))
    return {"tensors": count,
            **{name: {"call_us": t.seconds * 1e6, "per_tensor_ns": t.seconds / count * 1e9}
               for name, t in timings.items()}}


def optimizer_steps(torch, deepspeed_cls, quick: bool, seed: int, only: list[str] | None = None,
                    out=sys.stdout) -> dict:
    """Whole optimizer steps on all CPUs: medians of interleaved rounds, the issue's targets.
    ``only`` keeps the cases whose name contains one of its strings ("step" keeps them all)."""
    cpus = len(os.sched_getaffinity(0))
    rng = random.Random(seed + 1)
    print(f"\nOptimizer steps, {cpus} threads (medians of interleaved rounds):", file=out)
    print(f"  {'case':<26}{'impl':<16}{'time':>12}{'ours/impl':>11}", file=out)
    rows = {}
    for case in step_cases():
        if only and not any(name in case.name for name in only):
            continue
        fns = step_implementations(case, torch, deepspeed_cls, seed)
        repeats = 5 if quick or case.total > 2**26 else 11
        with use_threads(torch, cpus):
            timings = measure(fns, repeats, 0.0 if case.total > 2**26 else 0.05, 0.002, rng)
        ours = timings["ours"].seconds
        rows[case.name] = {"tensors": len(case.shapes), "elements": case.total,
                           "seconds": {k: t.seconds for k, t in timings.items()},
                           "ours_over": {k: ours / t.seconds for k, t in timings.items()
                                         if k != "ours"}}
        for name, t in timings.items():
            ratio = rows[case.name]["ours_over"].get(name)
            print(f"  {case.name:<26}{name:<16}{_fmt_time(t.seconds):>12}"
                  f"{(f'{ratio:.3f}' if ratio else '-'):>11}", file=out)
        del fns
    overhead = host_overhead(torch)
    print(f"\nHost time per call, {overhead['tensors']} one-element tensors, 1 thread:", file=out)
    for name, v in overhead.items():
        if isinstance(v, dict):
            print(f"  {name:<38}{v['call_us']:>10.0f} us  {v['per_tensor_ns']:>6.0f} ns/tensor",
                  file=out)
    model = list_npu_model(gpt2_small_shapes())
    print(f"\nNPU model of the GPT-2-small list ({model['tensors']} tensors, {model['platform']}, "
          f"a MODEL): {model['launches_per_step']} launch per step (per parameter: "
          f"{model['launches_per_step_per_parameter']}); elements per core max/mean "
          f"{model['imbalance_max_over_mean']:.4f} over {model['cores']} cores (whole tensors "
          f"per core as CANN's FusedAdamw: {model['whole_tensors_max_over_mean']:.2f}); busiest "
          f"core {_fmt_time(model['seconds_model']).strip()} at the nominal HBM share", file=out)
    targets = []
    for case, limits in (("step 2048x2K float32", {"torch": 1 / 3, "deepspeed": 1 / 3}),
                         ("step 2048x1 float32", {"torch_no_ema": 0.1}),
                         ("step 2048x64 one no-grad", {"ours_all_grads": 1.5}),
                         ("step GPT-2-small float32", {"torch": 0.85, "deepspeed": 0.80})):
        for impl, limit in limits.items():
            measured = rows[case]["ours_over"].get(impl) if case in rows else None
            if measured is not None:
                what = {"torch_no_ema": "torch fused AdamW",
                        "ours_all_grads": "itself with every gradient"}.get(impl,
                                                                            f"{impl} + lerp")
                unit = (TIME_RATIO if impl != "ours_all_grads"
                        else "time ratio, ours with it / ours with every gradient")
                targets.append({"target": f"{case}: FusedEmaAdamW.step() <= {limit:.3g} x "
                                          f"{what}", "measured": measured,
                                "limit": limit, "le": True, "met": measured <= limit,
                                "unit": unit})
    if "step 2048x1 float32" in rows:
        per_tensor = rows["step 2048x1 float32"]["seconds"]["ours"] / 2048 * 1e6
        targets.append({"target": "step 2048x1 float32: FusedEmaAdamW.step() <= 0.5 us per "
                                  "tensor", "measured": per_tensor, "limit": 0.5, "le": True,
                        "met": per_tensor <= 0.5, "unit": "us per tensor"})
    print_targets("Targets (optimizer steps)", targets, out)
    return {"threads": cpus, "cases": rows, "host_overhead": overhead, "npu_list_model": model,
            "targets": targets}


