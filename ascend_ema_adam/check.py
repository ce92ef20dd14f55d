"""Golden-compare sweep: the AscendC kernel on the CPU twin against both golden tiers.

``python -m ascend_ema_adam check`` runs dtype x mode x bias correction x sizes, and per case
prints whether all four outputs equal the dtype-faithful emulation bit for bit, and the worst
mean / max relative error against the float64 golden as a fraction of CANN's thresholds.
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass

import numpy as np

from . import golden, twin
from ._dtypes import NUMPY_FLOAT_DTYPES
from .golden import Hyper

DTYPES = NUMPY_FLOAT_DTYPES
OUTPUTS = ("var", "m", "v", "s")

#: Sizes of the full sweep: tails around one 32-byte block, fewer elements than cores, and
#: several unified-buffer chunks per core (the CPU preset's chunk is 2728 fp32 / 2720 16-bit).
FULL_SIZES = (1, 7, 8, 9, 15, 16, 17, 33, 4099, 65537, 2**21 + 3)
QUICK_SIZES = (1, 17, 4099, 65537)


def random_inputs(rng: np.random.Generator, shape, dtype, grad_scale: float | None = None):
    """Fresh optimizer-like tensors: weights ~ N(0, 0.05), EMA = weights + small noise,
    gradients ~ N(0, sigma) with sigma log-uniform in [1e-3, 1e-1] unless given, m on the
    gradient scale and v >= 0 on its square. Returns (grad, var, m, v, s) in ``dtype``."""
    sigma = grad_scale if grad_scale is not None else 10.0 ** rng.uniform(-3.0, -1.0)
    var = rng.normal(0.0, 0.05, shape)
    s = var + rng.normal(0.0, 0.005, shape)
    grad = rng.normal(0.0, sigma, shape)
    m = rng.normal(0.0, 0.3 * sigma, shape)
    v = rng.normal(0.0, sigma, shape) ** 2
    return tuple(np.asarray(x).astype(dtype) for x in (grad, var, m, v, s))


@dataclass(frozen=True)
class CaseResult:
    dtype: np.dtype
    hyper: Hyper
    numel: int
    step: int
    cores: int
    chunks: int
    bit_exact: dict[str, bool]
    precision: dict[str, golden.Precision]
    gm_bytes: int
    gm_bytes_min: int
    seconds: float

    @property
    def passed(self) -> bool:
        return (all(self.bit_exact.values()) and all(p.passed for p in self.precision.values())
                and self.gm_bytes == self.gm_bytes_min)


def run_case(rng: np.random.Generator, dtype, hyper: Hyper, shape, step: int,
             platform: str = "cpu") -> CaseResult:
    """One launch on the twin, compared with both goldens."""
    inputs = random_inputs(rng, shape, dtype)
    step_arr = np.array([step], dtype=np.int64)
    expected = golden.emulate_update(*inputs, step_arr, hyper)
    reference = golden.reference_update(*inputs, step_arr, hyper)
    grad, var, m, v, s = (x.copy() for x in inputs)
    start = time.perf_counter()
    stats = twin.apply_fused_ema_adam(grad, var, m, v, s, step_arr, hyper, platform=platform)
    seconds = time.perf_counter() - start
    actual = (var, m, v, s)
    numel = int(np.prod(shape, dtype=np.int64))
    tiling = stats.tiling
    chunks = -(-max(e - b for b, e in tiling["core_ranges"]) // tiling["chunk_length"]) \
        if numel else 0
    return CaseResult(
        dtype=np.dtype(dtype), hyper=hyper, numel=numel, step=step,
        cores=tiling["block_dim"], chunks=chunks,
        bit_exact={n: golden.bit_equal(a, e) for n, a, e in zip(OUTPUTS, actual, expected)},
        precision={n: golden.cann_precision(a, r) for n, a, r in zip(OUTPUTS, actual, reference)},
        gm_bytes=stats.total("gm_read_bytes") + stats.total("gm_write_bytes"),
        gm_bytes_min=numel * 9 * np.dtype(dtype).itemsize,
        seconds=seconds)


def sweep(sizes=FULL_SIZES, seed: int | None = None):
    """Yields one CaseResult per dtype x mode x bias correction x size (fresh random inputs)."""
    rng = np.random.default_rng(seed)
    for dtype, mode, bias, numel in itertools.product(DTYPES, (0, 1), (True, False), sizes):
        hyper = Hyper(lr=1e-3, ema_decay=0.999, beta1=0.9, beta2=0.999, eps=1e-8, mode=mode,
                      bias_correction=bias, weight_decay=0.01)
        yield run_case(rng, dtype, hyper, (numel,), step=10)


HEADER = (f"{'dtype':<9}{'mode':>5}{'bias':>6}{'numel':>10}{'cores':>6}{'chunks':>7}  "
          f"{'bit-exact vs emulation':<24}{'MERE/thr':>9}{'MARE/thr':>9}{'GM bytes':>10}  result")


def format_row(r: CaseResult) -> str:
    exact = " ".join(f"{n}{'=' if ok else 'X'}" for n, ok in r.bit_exact.items())
    mere = max(p.mere / p.threshold for p in r.precision.values())
    mare = max(p.mare / (10 * p.threshold) for p in r.precision.values())
    traffic = "min" if r.gm_bytes == r.gm_bytes_min else f"{r.gm_bytes / r.gm_bytes_min:.2f}x"
    return (f"{golden.dtype_name(r.dtype):<9}{r.hyper.mode:>5}{str(r.hyper.bias_correction):>6}"
            f"{r.numel:>10}{r.cores:>6}{r.chunks:>7}  {exact:<24}{mere:>9.3f}{mare:>9.3f}"
            f"{traffic:>10}  {'PASS' if r.passed else 'FAIL'}")


def main(quick: bool = False, seed: int | None = None, out=sys.stdout) -> int:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    print("ApplyFusedEmaAdam: AscendC kernel on the CPU twin vs the golden models", file=out)
    print("  bit-exact: all outputs equal the dtype-faithful fp32 emulation (= per output, X "
          "differs)", file=out)
    print("  MERE/thr, MARE/thr: worst output's mean / max relative error vs the float64 golden, "
          "as a fraction of CANN's threshold (pass < 1)", file=out)
    print("  GM bytes: DMA traffic counted by the twin vs the minimum 9 x numel x itemsize\n",
          file=out)
    print(HEADER, file=out)
    failures = 0
    total_seconds = 0.0
    for result in sweep(sizes, seed):
        print(format_row(result), file=out, flush=True)
        failures += not result.passed
        total_seconds += result.seconds
    rows = len(DTYPES) * 4 * len(sizes)
    print(f"\n{rows - failures}/{rows} PASS ({total_seconds:.1f} s in the kernel)", file=out)
    return 1 if failures else 0
