"""``python -m ascend_ema_adam bench --zero-offload``: one DeepSpeed ZeRO-2 engine step with the
optimizer offloaded to the host CPU, on a GPT-2-small-shaped model (148 fp32 tensors, 124M
elements), with FusedEmaAdamW (Adam and EMA in one pass, through
``ascend_ema_adam.integrations.deepspeed``) against DeepSpeedCPUAdam and a separate EMA
(``torch._foreach_lerp_`` of the fp32 partitions after each step), what DeepSpeed users run
today.

Both engines live in one process (one gloo rank: two ranks of a 124M model do not fit two
cores' worth of time), share the gradients (fixed random tensors: the loss is
``sum(p * g)``), and are timed interleaved, in a random order each round, after warm-up; the
forward and backward are not timed. Reported: the medians of ``engine.step()`` (with the EMA
for the baseline), of the optimizer's share of it (the client optimizer's ``step()``, with the
EMA), and their ratios. Needs the ``deepspeed`` extra; DeepSpeed JIT-builds its CPU
Adam once (about a minute, cached under ``~/.cache/torch_extensions``). Two engines of this size
take about 8 GB of memory.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import socket
import statistics
import sys
import time

from .. import kernels
from .._files import atomic_file
from .bench_common import (BENCH_OUT, HYPER, _cpu_name, _fmt_time, gpt2_small_shapes, output_dir,
                           use_isa)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _init_one_rank():
    """DeepSpeed on the CPU accelerator, one gloo rank (this process)."""
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    import logging

    import deepspeed
    import torch.distributed as dist

    logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    if not dist.is_initialized():
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), RANK="0",
                          LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_SIZE="1")
        deepspeed.init_distributed(dist_backend="gloo",
                                   timeout=datetime.timedelta(seconds=600))
    return deepspeed


def _model(torch, shapes, grads, seed):
    """GPT-2 small's parameter tensors in a module whose loss has the gradients ``grads``."""
    gen = torch.Generator().manual_seed(seed)

    class Shaped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tensors = torch.nn.ParameterList(
                torch.nn.Parameter(torch.randn(s, generator=gen) * 0.05) for s in shapes)

        def forward(self):
            return sum((p * g).sum() for p, g in zip(self.tensors, grads))

    return Shaped()


def _config(stage: int = 2) -> dict:
    return {"train_micro_batch_size_per_gpu": 1, "steps_per_print": 10**9,
            "zero_optimization": {"stage": stage, "offload_optimizer": {"device": "cpu"}}}


def run(repeats: int = 7, seed: int = 0, out_dir: str = BENCH_OUT, out=sys.stdout,
        isa: str | None = None) -> dict:
    """``isa``: every implementation runs that instruction set (bench.use_isa)."""
    import torch

    if isa:
        use_isa(isa, torch)
    deepspeed = _init_one_rank()
    from deepspeed.ops.adam import DeepSpeedCPUAdam

    from ..integrations import deepspeed as integration
    from ..optim import FusedEmaAdamW

    cpus = len(os.sched_getaffinity(0))
    torch.set_num_threads(cpus)
    os.environ["ASCEND_EMA_ADAM_NUM_THREADS"] = str(cpus)
    h = HYPER
    shapes = gpt2_small_shapes()
    gen = torch.Generator().manual_seed(seed + 1)
    grads = [torch.randn(s, generator=gen) * 1e-2 for s in shapes]
    print(f"ZeRO-2 offload step, GPT-2-small shapes ({len(shapes)} tensors, "
          f"{sum(g.numel() for g in grads):,} fp32 elements), 1 gloo rank, {cpus} threads; "
          f"CPU {_cpu_name()}; instruction sets: ours {kernels.cpu_kernel()['isa']}, torch "
          f"{torch.backends.cpu.get_cpu_capability()}", file=out)
    path = output_dir(out_dir, out)

    ours_model = _model(torch, shapes, grads, seed)
    ours = FusedEmaAdamW(ours_model.parameters(), lr=h.lr, eps=h.eps, betas=(h.beta1, h.beta2),
                         weight_decay=h.weight_decay, ema_decay=h.ema_decay)
    ours_engine, *_ = integration.initialize(ours_model, ours, _config())

    ds_model = _model(torch, shapes, grads, seed)
    start = time.perf_counter()
    ds_opt = DeepSpeedCPUAdam(ds_model.parameters(), lr=h.lr, betas=(h.beta1, h.beta2),
                              eps=h.eps, weight_decay=h.weight_decay, adamw_mode=True)
    built = time.perf_counter() - start
    ds_engine, *_ = deepspeed.initialize(model=ds_model, optimizer=ds_opt, config=_config())
    # the baseline's EMA: of the fp32 partitions DeepSpeedCPUAdam updates, after each step
    flats = list(ds_engine.optimizer.single_partition_of_fp32_groups)
    ema = [f.detach().clone() for f in flats]

    inner: dict[str, float] = {}  # the optimizer's share of the step (with the EMA)

    def timed(name, fn):
        def run(*args, **kwargs):
            t = time.perf_counter()
            result = fn(*args, **kwargs)
            inner[name] = inner.get(name, 0.0) + time.perf_counter() - t
            return result
        return run

    ours.step = timed("FusedEmaAdamW", ours.step)  # what the ZeRO optimizer calls
    ds_opt.step = timed("DeepSpeedCPUAdam + lerp EMA", ds_opt.step)
    lerp = timed("DeepSpeedCPUAdam + lerp EMA", torch._foreach_lerp_)

    def ours_step():
        ours_engine.step()

    def deepspeed_step():
        ds_engine.step()
        lerp(ema, flats, 1.0 - h.ema_decay)

    engines = {"FusedEmaAdamW": (ours_engine, ours_step),
               "DeepSpeedCPUAdam + lerp EMA": (ds_engine, deepspeed_step)}
    samples: dict[str, list[float]] = {name: [] for name in engines}
    inner_samples: dict[str, list[float]] = {name: [] for name in engines}
    rng = random.Random(seed)
    load_start = os.getloadavg()
    for round_ in range(repeats + 1):  # round 0 warms up (first steps create the state)
        order = list(engines)
        rng.shuffle(order)
        for name in order:
            engine, step = engines[name]
            engine.backward(engine())
            time.sleep(0.05)  # let the other engine's threads go idle
            inner.clear()
            t = time.perf_counter()
            step()
            if round_:
                samples[name].append(time.perf_counter() - t)
                inner_samples[name].append(inner[name])
    medians = {name: statistics.median(s) for name, s in samples.items()}
    inner_medians = {name: statistics.median(s) for name, s in inner_samples.items()}
    ratio = medians["FusedEmaAdamW"] / medians["DeepSpeedCPUAdam + lerp EMA"]
    inner_ratio = (inner_medians["FusedEmaAdamW"]
                   / inner_medians["DeepSpeedCPUAdam + lerp EMA"])
    report = {"case": "ZeRO-2 offload engine step, GPT-2-small shapes, fp32", "ranks": 1,
              "threads": cpus, "repeats": repeats, "tensors": len(shapes),
              "elements": sum(g.numel() for g in grads), "seconds": medians,
              "samples": samples, "fused_over_deepspeed": ratio,
              "optimizer_seconds": inner_medians, "optimizer_samples": inner_samples,
              "optimizer_fused_over_deepspeed": inner_ratio,
              "deepspeed_cpu_adam_load_seconds": built,
              "isa": {"ours": kernels.cpu_kernel()["isa"],
                      "torch": torch.backends.cpu.get_cpu_capability(),
                      "deepspeed": getattr(ds_opt.ds_opt_adam, "__name__", "cpu_adam")},
              "load_average": {"start": load_start, "end": os.getloadavg()},
              "counters_equal_engine_steps": ours.num_updates == repeats + 1}
    print(f"  {'':<30}{'engine.step()':>14}{'optimizer + EMA':>17}   (medians of {repeats})",
          file=out)
    for name, s in medians.items():
        print(f"  {name:<30}{_fmt_time(s):>14}{_fmt_time(inner_medians[name]):>17}", file=out)
    print(f"  FusedEmaAdamW / (DeepSpeedCPUAdam + lerp): engine step {ratio:.3f}, optimizer + "
          f"EMA {inner_ratio:.3f}; load average "
          f"{load_start[0]:.2f} -> {os.getloadavg()[0]:.2f} (other work on the CPUs "
          f"slows both alike, not equally: rerun on a quiet machine)", file=out)
    with atomic_file(path / "zero_offload.json", "w") as file:
        file.write(json.dumps(report, indent=1))
    print(f"wrote {path / 'zero_offload.json'}", file=out)
    return report


def main(repeats: int | None = None, out_dir: str = BENCH_OUT, isa: str | None = None) -> int:
    run(repeats=repeats or 7, out_dir=out_dir, isa=isa)
    return 0
