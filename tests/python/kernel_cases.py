"""Cases and assertions shared by the kernel suites: the AscendC kernel on the twin
(test_apply_fused_ema_adam_kernel.py) and the native CPU kernel
(test_apply_fused_ema_adam_native.py) run the same sweep; the native suites of every operator run
on the instruction sets and CPUs below."""

import os

import ml_dtypes
import numpy as np

from ascend_ema_adam import golden, kernels
from ascend_ema_adam._dtypes import FLOAT_DTYPES
from ascend_ema_adam.apps.check import OUTPUTS

BEST_ISA = kernels.cpu_kernel()["isa"]
#: Each architecture's instruction sets, widest first (native_runtime.h's Isa).
_WIDEST_FIRST = ("neon", "generic") if BEST_ISA == "neon" else ("avx512", "avx2", "generic")
#: Every instruction set this CPU runs ("generic" runs everywhere).
ISAS = list(_WIDEST_FIRST[_WIDEST_FIRST.index(BEST_ISA):])
CPUS = len(os.sched_getaffinity(0))

DTYPES = [d.numpy for d in FLOAT_DTYPES]
DTYPE_IDS = [d.short for d in FLOAT_DTYPES]
A2 = "Ascend910B2"  # 48 vector cores: exercises the multi-core split on the twin
A2_CORES = 48

SIZES = [1, 7, 8, 9, 15, 16, 17, 33,
         A2_CORES - 1, A2_CORES * 8 - 1, A2_CORES * 8, A2_CORES * 8 + 1,  # N < cores, k*cores+-1
         A2_CORES * 16 * 3 + 5,                                            # 3 blocks per core
         2728 * 2 * 3 + 11]                                                # 3 chunks per CPU core

SHAPES = [(), (5,), (3, 7), (2, 3, 5), (2, 1, 3, 4), (1, 2, 3, 2, 3), (2, 2, 1, 3, 2, 2),
          (1, 3, 1, 2, 2, 1, 3), (2, 1, 2, 1, 2, 1, 2, 3)]


def assert_bit_exact(actual, expected, what="the emulation golden"):
    for name, a, e in zip(OUTPUTS, actual, expected):
        assert golden.bit_equal(a, e), f"{name} differs from {what}"


def assert_cann_precision(actual, reference):
    for name, a, r in zip(OUTPUTS, actual, reference):
        p = golden.cann_precision(a, r)
        assert p.passed, f"{name}: {p}"


# The list operator's entry dtype rows (parameter, state, gradient, model copy), shared by the
# golden's and the native kernel's suites.
BF16 = np.dtype(ml_dtypes.bfloat16)
FP16 = np.dtype(np.float16)
FP32 = np.dtype(np.float32)

#: (P, S, G, C) combinations of the list operator's contract (C None: no model copy).
ENTRY_DTYPES = [
    (FP32, FP32, FP32, None),
    (FP32, FP32, FP16, FP16), (FP32, FP32, FP32, FP16),
    (FP32, FP32, BF16, BF16), (FP32, FP32, FP32, BF16),
    (FP16, FP16, FP16, None), (FP16, FP16, FP32, None),
    (FP16, FP32, FP16, None), (FP16, FP32, FP32, None),
    (BF16, BF16, BF16, None), (BF16, BF16, FP32, None),
    (BF16, FP32, BF16, None), (BF16, FP32, FP32, None),
]
ENTRY_IDS = ["-".join(golden.dtype_name(d) if d is not None else "nocopy" for d in c)
             for c in ENTRY_DTYPES]


def entry_inputs(rng, n, p, s, g, c, amsgrad):
    """Optimizer-like tensors of one list entry in the given dtypes."""
    sigma = 10.0 ** rng.uniform(-3.0, -1.0)
    var = rng.normal(0.0, 0.05, n)
    arrays = dict(
        grad=rng.normal(0.0, sigma, n).astype(g), var=var.astype(p),
        m=rng.normal(0.0, 0.3 * sigma, n).astype(s), v=(rng.normal(0.0, sigma, n) ** 2).astype(s),
        s=(var + rng.normal(0.0, 0.005, n)).astype(s))
    extra = {}
    if amsgrad:
        extra["max_v"] = (rng.normal(0.0, sigma, n) ** 2).astype(s)
    if c is not None:
        extra["copy"] = rng.normal(0.0, 0.05, n).astype(c)
    return arrays, extra
