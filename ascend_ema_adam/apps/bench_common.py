"""What the benchmarks share: the hyper-parameters, the interleaved timing harness, the
instruction-set switch of every implementation (ours, torch, DeepSpeed's CPU Adam) and the report
helpers. Used by :mod:`.bench` (the op), :mod:`.bench_steps` (whole optimizer steps) and
:mod:`.bench_zero` (a DeepSpeed ZeRO-2 offload step)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import golden, kernels

#: Where ``bench`` writes by default: a directory named after the tool, under the current one.
BENCH_OUT = "ascend-ema-adam-bench"

HYPER = golden.Hyper(lr=1e-3, ema_decay=0.9999, beta1=0.9, beta2=0.999, eps=1e-8, mode=1,
                     bias_correction=True, weight_decay=0.01)
NPU_PLATFORM = "Ascend910B2"
TARGET_NUMEL = 2**24  # the targets' case: 16.8M elements


@dataclass
class Timing:
    seconds: float            # median wall time of one step
    cpu_per_wall: float       # median process CPU time / wall time (threads actually busy)
    samples: list[float] = field(repr=False)
    calls_per_sample: int = 1


# ---------------------------------------------------------------------------------------------
# The harness


@contextlib.contextmanager
def use_threads(torch, count: int):
    """torch's and our kernel's thread count (ASCEND_EMA_ADAM_NUM_THREADS, read per call) for
    the block, both restored after it: a one-thread measurement must not leave the cases after it
    on one thread (the 8-bit row had run on one of two CPUs that way)."""
    before = torch.get_num_threads(), os.environ.get("ASCEND_EMA_ADAM_NUM_THREADS")
    torch.set_num_threads(count)
    os.environ["ASCEND_EMA_ADAM_NUM_THREADS"] = str(count)
    try:
        yield count
    finally:
        torch.set_num_threads(before[0])
        if before[1] is None:
            os.environ.pop("ASCEND_EMA_ADAM_NUM_THREADS", None)
        else:
            os.environ["ASCEND_EMA_ADAM_NUM_THREADS"] = before[1]


def _sample(fn, calls: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


def measure(fns: dict, repeats: int, sample_seconds: float, gap_seconds: float,
            rng: random.Random) -> dict[str, Timing]:
    """Warm-up, then ``repeats`` rounds; each round runs every fn once in a fresh random order.
    A sample is as many back-to-back calls as fill ``sample_seconds`` (small cases); the idle gap
    before it lets the previous implementation's spinning threads (OpenMP, our pool) go to
    sleep, so no implementation pays for another's."""
    calls = {}
    for name, fn in fns.items():
        for _ in range(2):
            fn()
        once = min(_sample(fn, 1)[0] for _ in range(3))
        calls[name] = max(1, int(sample_seconds / max(once, 1e-7)))
    raw: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    order = list(fns)
    for _ in range(repeats):
        rng.shuffle(order)
        for name in order:
            time.sleep(gap_seconds)
            raw[name].append(_sample(fns[name], calls[name]))
    return {name: Timing(statistics.median(w for w, _ in s),
                         statistics.median(c / w for w, c in s if w > 0),
                         [w for w, _ in s], calls[name])
            for name, s in raw.items()}


# ---------------------------------------------------------------------------------------------
# The implementations


#: ``--isa`` for every implementation, so that an AVX-512 machine can stand in for an AVX2-only one:
#: our kernel's instruction set (ASCEND_EMA_ADAM_ISA), torch's ATen CPU capability
#: (ATEN_CPU_CAPABILITY, read at torch's first vectorized op) and DeepSpeed CPUAdam's SIMD width
#: (its build's -D flag, plus the compiler flags that keep wider instructions out).
ISA_EQUIVALENTS = {
    "avx512": {"torch": "avx512", "deepspeed": ("-D__AVX512__", [])},
    "avx2": {"torch": "avx2", "deepspeed": ("-D__AVX256__", ["-mno-avx512f"])},
    "generic": {"torch": "default", "deepspeed": ("-D__SCALAR__", ["-mno-avx"])},
}


def _set_torch_isa(isa: str, torch) -> str:
    """Sets torch's CPU capability for ``isa`` before its first vectorized op; returns the one
    torch runs. Raises RuntimeError if torch had already chosen another (it chooses once)."""
    want = ISA_EQUIVALENTS[isa]["torch"]
    os.environ["ATEN_CPU_CAPABILITY"] = want
    got = torch.backends.cpu.get_cpu_capability()
    if got.lower() != want:
        raise RuntimeError(f"--isa {isa}: torch already runs {got} kernels in this process; run "
                           f"the bench in a new process or set ATEN_CPU_CAPABILITY={want} first")
    return got


def _deepspeed_builder_for(isa: str):
    """DeepSpeed's CPU Adam builder compiling for ``isa`` (its own name, so its own JIT cache)."""
    from deepspeed.ops import op_builder
    from deepspeed.ops.adam import cpu_adam

    simd, extra = ISA_EQUIVALENTS[isa]["deepspeed"]
    base = op_builder.CPUAdamBuilder  # DeepSpeed's own, whatever cpu_adam's global is now

    class Builder(base):
        NAME = f"{base.NAME}_{isa}"

        def simd_width(self):
            return simd

        def cxx_args(self):
            return super().cxx_args() + extra

    return cpu_adam, Builder


def use_isa(isa: str, torch) -> None:
    """Every implementation in this process runs ``isa`` (ISA_EQUIVALENTS): our kernel, torch's
    kernels and, if DeepSpeed is installed, every DeepSpeedCPUAdam created from now on (a build
    for it, compiled on first use). Call before torch's first vectorized op. Raises ValueError
    for an instruction set this CPU lacks, RuntimeError if torch already chose another."""
    os.environ["ASCEND_EMA_ADAM_ISA"] = isa
    kernels.cpu_kernel()  # an instruction set this CPU does not run fails here, not mid-run
    _set_torch_isa(isa, torch)
    if importlib.util.find_spec("deepspeed") is not None:
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
        module, builder = _deepspeed_builder_for(isa)
        module.CPUAdamBuilder = builder  # what DeepSpeedCPUAdam() loads (a module global)


def _deepspeed(isa: str | None = None):
    """DeepSpeedCPUAdam, built (once, cached by DeepSpeed) and loaded; or (None, reason). With
    ``isa`` (after :func:`use_isa`), checks that it loads the CPU Adam built for it."""
    os.environ.setdefault("DS_ACCELERATOR", "cpu")
    try:
        import logging

        import deepspeed  # noqa: F401
        from deepspeed.ops.adam import DeepSpeedCPUAdam
        logging.getLogger("DeepSpeed").setLevel(logging.ERROR)
    except ImportError as e:
        return None, f"not installed ({e}); pip install --no-build-isolation '.[bench]'"
    import torch
    start = time.perf_counter()
    try:
        probe = torch.nn.Parameter(torch.zeros(16))
        probe.grad = torch.zeros(16)
        opt = DeepSpeedCPUAdam([probe])
        opt.step()
    except Exception as e:  # the JIT build can fail on a machine without a compiler
        return None, f"CPU Adam unavailable: {type(e).__name__}: {e}"
    built = getattr(opt.ds_opt_adam, "__name__", "cpu_adam")
    if isa and not built.endswith(f"_{isa}"):
        return None, (f"CPU Adam for {isa} not loaded (got {built}): this DeepSpeed builds "
                      "differently")
    return DeepSpeedCPUAdam, f"{built}, loaded in {time.perf_counter() - start:.1f} s"


# ---------------------------------------------------------------------------------------------
# Report


def _fmt_time(s: float) -> str:
    return f"{s * 1e3:9.3f} ms" if s >= 1e-3 else f"{s * 1e6:9.1f} us"


def output_dir(out_dir: str, out=sys.stdout) -> Path:
    """The output directory, created and announced before the (long) run."""
    path = Path(out_dir).resolve()
    path.mkdir(parents=True, exist_ok=True)
    print(f"  output directory: {path}", file=out)
    return path


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"



def gpt2_small_shapes() -> list[tuple[int, ...]]:
    """GPT-2 small's 148 parameter tensors (124,439,808 elements): embeddings, 12 blocks, ln_f."""
    block = [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,), (768,), (768,),
             (768, 3072), (3072,), (3072, 768), (768,)]
    return [(50257, 768), (1024, 768)] + block * 12 + [(768,), (768,)]


#: The unit of a target that compares times: ours over theirs.
TIME_RATIO = "time ratio, ours / theirs"


def print_targets(title: str, targets: list[dict], out) -> None:
    """Each target: MET or MISS, what it asks, and the measured value with its unit and the way
    that is better (``le``: at most the limit, lower is better; else at least, higher)."""
    print(f"\n{title}:", file=out)
    for t in targets:
        better = "lower" if t.get("le", True) else "higher"
        print(f"  {'MET ' if t['met'] else 'MISS'}  {t['target']}: measured {t['measured']:.3f} "
              f"{t['unit']} ({better} is better)", file=out)
