"""The native CPU kernel against the tier-2 golden and the AscendC kernel on the twin, bit for bit,
over the twin suite's sweep (dtypes x modes x bias x sizes, ranks, steps and decays, NaN/Inf,
trajectories, a property test), for every instruction set this CPU runs, 1 and 2 threads, in place
and out of place; plus its bias correction, thread pool and kernel selection."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kernel_cases import (BEST_ISA, CPUS, DTYPE_IDS, DTYPES, ISAS, SHAPES, SIZES,
                          assert_bit_exact, assert_cann_precision)

from ascend_ema_adam import golden, kernels
from ascend_ema_adam.apps.check import random_inputs
from ascend_ema_adam.golden import Hyper


def run_native(inputs, step, hyper, *, out_of_place=False, **options):
    """Native outputs for one update on copies of ``inputs``; out of place, the inputs must stay
    untouched."""
    step_arr = np.array([step], dtype=np.int64)
    grad, var, m, v, s = (x.copy() for x in inputs)
    if out_of_place:
        out = tuple(np.full_like(x, np.nan) for x in (var, m, v, s))
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step_arr, hyper, out=out, **options)
        for name, before, after in zip(("grad", "var", "m", "v", "s"), inputs,
                                       (grad, var, m, v, s)):
            assert golden.bit_equal(before, after), f"input {name} was written"
        return out
    kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step_arr, hyper, **options)
    return var, m, v, s


def run_twin(inputs, step, hyper):
    grad, var, m, v, s = (x.copy() for x in inputs)
    kernels.apply_fused_ema_adam(grad, var, m, v, s, np.array([step], dtype=np.int64), hyper)
    return var, m, v, s


def check(inputs, step, hyper, *, with_twin=True, **options):
    """Native == tier-2 golden (== twin) bit for bit; returns the native outputs."""
    actual = run_native(inputs, step, hyper, **options)
    assert_bit_exact(actual, golden.emulate_update(*inputs, np.array([step], np.int64), hyper))
    if with_twin:
        assert_bit_exact(actual, run_twin(inputs, step, hyper), "the twin")
    return actual


# ------------------------------------------------------------------------------------------
# Golden sweep over dtypes x modes x bias correction x sizes


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_sweep_sizes(rng, isa, dtype, mode, bias, size):
    """Every instruction set; two threads with ranges as small as one 64-element grain, so every
    size also exercises range boundaries and per-thread tails."""
    hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=mode, bias_correction=bias, weight_decay=0.01)
    inputs = random_inputs(rng, (size,), dtype)
    actual = check(inputs, 10, hyper, isa=isa, threads=2, min_elems_per_thread=1)
    step_arr = np.array([10], dtype=np.int64)
    assert_cann_precision(actual, golden.reference_update(*inputs, step_arr, hyper))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_sweep_sizes_streaming_loops(rng, isa, dtype, mode, size):
    """The loops for launches that stream from memory (unrolled), forced on small sizes so every
    tail and range boundary goes through them too."""
    hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=mode, bias_correction=True, weight_decay=0.01)
    check(random_inputs(rng, (size,), dtype), 10, hyper, with_twin=False, isa=isa, threads=2,
          min_elems_per_thread=1, streaming_bytes=0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_sweep_large(rng, dtype, mode, threads):
    """>= 2^21 + 3 elements with the default small-launch threshold: the pool takes part."""
    hyper = Hyper(lr=1e-3, ema_decay=0.9999, mode=mode, weight_decay=0.05)
    inputs = random_inputs(rng, (2**21 + 3,), dtype)
    step_arr = np.array([10000], dtype=np.int64)
    grad, var, m, v, s = (x.copy() for x in inputs)
    used = kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step_arr, hyper,
                                            threads=threads)["threads"]
    # A worker that wakes after the caller has taken every chunk does not take part.
    assert 1 <= used <= min(threads, CPUS) and (threads > 1 or used == 1)
    assert_bit_exact((var, m, v, s), golden.emulate_update(*inputs, step_arr, hyper))
    assert_bit_exact((var, m, v, s), run_twin(inputs, 10000, hyper), "the twin")


# ------------------------------------------------------------------------------------------
# Ranks, steps and decays


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"rank{len(s)}")
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_ranks(rng, dtype, shape):
    actual = check(random_inputs(rng, shape, dtype), 3, Hyper(mode=1, weight_decay=0.1))
    assert all(a.shape == shape for a in actual)


@pytest.mark.parametrize("step", [1, 10, 10000])
@pytest.mark.parametrize("decay", [0.0, 0.5, 0.9999, 1.0])
@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.0, 0.0), (0.5, 0.9999)])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_steps_decays_betas(rng, dtype, betas, decay, step):
    hyper = Hyper(lr=1e-3, ema_decay=decay, beta1=betas[0], beta2=betas[1], mode=1,
                  weight_decay=0.01)
    inputs = random_inputs(rng, (1031,), dtype)
    actual = check(inputs, step, hyper)
    # Equal as numbers (a -0 input plus the +0 term gives +0, as IEEE says).
    if decay == 1.0:  # s' = 1*s + 0*var' = s
        assert np.array_equal(actual[3].astype(np.float32), inputs[4].astype(np.float32))
    if decay == 0.0:  # s' = 0*s + 1*var' = var'
        assert np.array_equal(actual[3].astype(np.float32), actual[0].astype(np.float32))


def test_step_zero_with_bias_correction_divides_by_zero(rng):
    actual = check(random_inputs(rng, (100,), np.float32), 0, Hyper())
    assert not np.isfinite(actual[0]).all()


# ------------------------------------------------------------------------------------------
# NaN / Inf and extreme magnitudes (the narrowing's special cases), every instruction set


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("tensor", range(5), ids=["grad", "var", "m", "v", "s"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_nan_inf_injection(rng, isa, dtype, mode, tensor, special):
    inputs = list(random_inputs(rng, (777,), dtype))
    hit = rng.choice(777, size=9, replace=False)
    inputs[tensor] = inputs[tensor].copy()
    inputs[tensor][hit] = special
    check(inputs, 5, Hyper(mode=mode, weight_decay=0.02, ema_decay=0.9), isa=isa)


@pytest.mark.parametrize("scale", [1e-40, 1e-30, 1e-7, 3e4, 1e19, 1e38],
                         ids=["fp32-subnormal", "tiny", "fp16-subnormal", "fp16-overflow",
                              "square-overflow", "fp32-max"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_extreme_magnitudes(rng, isa, dtype, scale):
    """Subnormal results (fp32 subnormals narrowed to bf16 too), overflow to Inf when squaring
    or narrowing, and the rounding of every binade in between."""
    n = 999
    with np.errstate(over="ignore"):  # the largest scales overflow the 16-bit formats on purpose
        grad, var, m, s = (rng.normal(0, scale, n).astype(dtype) for _ in range(4))
        v = np.abs(rng.normal(0, scale, n)).astype(dtype)
    hyper = Hyper(lr=0.5, ema_decay=0.5, beta1=0.5, beta2=0.5, eps=0.0, mode=0,
                  weight_decay=0.25)
    check((grad, var, m, v, s), 3, hyper, isa=isa)


# ------------------------------------------------------------------------------------------
# Multi-step trajectories, aliasing


@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_trajectory_120_steps(rng, dtype, mode):
    """120 in-place steps with fresh gradients equal the emulation's trajectory at every step."""
    n = 4099
    hyper = Hyper(lr=1e-3, ema_decay=0.99, mode=mode, weight_decay=0.05)
    _, var, m, v, s = random_inputs(rng, (n,), dtype)
    m[:] = 0
    v[:] = 0
    s[:] = var
    expected = [x.copy() for x in (var, m, v, s)]
    for step in range(1, 121):
        grad = rng.normal(0, 0.01, n).astype(dtype)
        step_arr = np.array([step], dtype=np.int64)
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step_arr, hyper, threads=2,
                                         min_elems_per_thread=1024)
        expected = list(golden.emulate_update(grad, *expected, step_arr, hyper))
        assert_bit_exact((var, m, v, s), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("isa", ISAS)
def test_out_of_place_equals_in_place(rng, isa, dtype):
    """Outputs into separate buffers (inputs untouched) equal the in-place update."""
    inputs = random_inputs(rng, (5000 + 13,), dtype)
    hyper = Hyper(mode=0, weight_decay=0.01)
    in_place = check(inputs, 7, hyper, isa=isa, threads=2, min_elems_per_thread=64)
    out = check(inputs, 7, hyper, isa=isa, threads=2, min_elems_per_thread=64, out_of_place=True)
    assert_bit_exact(out, in_place, "the in-place update")


def test_mixed_aliasing(rng):
    """Some outputs in place, others into fresh buffers."""
    inputs = random_inputs(rng, (4096 + 5,), np.float32)
    grad, var, m, v, s = (x.copy() for x in inputs)
    step = np.array([4], dtype=np.int64)
    m_out, s_out = np.empty_like(m), np.empty_like(s)
    kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step, Hyper(),
                                     out=(var, m_out, v, s_out))
    expected = golden.emulate_update(*inputs, step, Hyper())
    assert_bit_exact((var, m_out, v, s_out), expected)
    assert golden.bit_equal(m, inputs[2]) and golden.bit_equal(s, inputs[4])


# ------------------------------------------------------------------------------------------
# Property test: any shape, hyper-parameters, data, instruction set and thread split


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(),
       shape=st.lists(st.integers(1, 40), min_size=0, max_size=4),
       dtype=st.sampled_from(DTYPES),
       mode=st.sampled_from([0, 1]),
       bias=st.booleans(),
       step=st.integers(1, 10**7),
       lr=st.floats(0.0, 1.0), decay=st.floats(0.0, 1.0),
       beta1=st.floats(0.0, 0.99999), beta2=st.floats(0.0, 0.99999),
       eps=st.floats(0.0, 1e-2), wd=st.floats(0.0, 1.0),
       isa=st.sampled_from(ISAS), threads=st.integers(1, 3),
       min_elems=st.sampled_from([1, 64, 1000]),
       out_of_place=st.booleans())
def test_property_bit_exact(data, shape, dtype, mode, bias, step, lr, decay, beta1, beta2, eps,
                            wd, isa, threads, min_elems, out_of_place):
    shape = tuple(shape)
    numel = int(np.prod(shape, dtype=np.int64))
    r = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    scale = 10.0 ** r.uniform(-6, 2)
    grad, var, m, s = (r.normal(0, scale, numel).reshape(shape).astype(dtype) for _ in range(4))
    v = (r.normal(0, scale, numel) ** 2).reshape(shape).astype(dtype)
    hyper = Hyper(lr=lr, ema_decay=decay, beta1=beta1, beta2=beta2, eps=eps, mode=mode,
                  bias_correction=bias, weight_decay=wd)
    check((grad, var, m, v, s), step, hyper, isa=isa, threads=threads,
          min_elems_per_thread=min_elems, out_of_place=out_of_place)


# ------------------------------------------------------------------------------------------
# Bias correction: the host copy of the kernel's recurrence


BETAS = [0.0, 1e-3, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.99999, 0.999999]
STEPS = ([-(2**40), -1, 0] + list(range(1, 130)) + [2**k + d for k in range(7, 63)
                                                   for d in (-1, 0, 1)] + [2**63 - 1])


@pytest.mark.parametrize("beta", BETAS)
def test_bias_correction_equals_golden(beta):
    for step in STEPS:
        expected = golden.bias_correction_f32(np.float32(beta), step)
        assert np.float32(kernels._kernels.native_bias_correction(beta, step)) == expected, step


@given(beta=st.floats(0.0, 1.0, exclude_max=True, width=32), step=st.integers(-5, 2**63 - 1))
def test_bias_correction_property(beta, step):
    expected = golden.bias_correction_f32(np.float32(beta), step)
    actual = np.float32(kernels._kernels.native_bias_correction(beta, step))
    assert golden.bit_equal(actual, expected)


# ------------------------------------------------------------------------------------------
# Kernel selection, threads, argument checks


def test_cpu_kernel_selection(monkeypatch):
    monkeypatch.delenv("ASCEND_EMA_ADAM_CPU_KERNEL", raising=False)
    assert kernels.cpu_kernel()["kernel"] == "native"
    assert kernels.cpu_kernel()["isa"] == BEST_ISA
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", "twin")
    assert kernels.cpu_kernel()["kernel"] == "twin"
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", "native")
    assert kernels.cpu_kernel()["kernel"] == "native"
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", "fast")
    with pytest.raises(ValueError, match="ASCEND_EMA_ADAM_CPU_KERNEL is 'fast'"):
        kernels.cpu_kernel()


def test_thread_count_from_environment(monkeypatch, rng):
    monkeypatch.delenv("ASCEND_EMA_ADAM_NUM_THREADS", raising=False)
    assert kernels.cpu_kernel()["threads"] == CPUS
    monkeypatch.setenv("ASCEND_EMA_ADAM_NUM_THREADS", "1")
    assert kernels.cpu_kernel()["threads"] == 1
    inputs = [x.copy() for x in random_inputs(rng, (2**17,), np.float32)]
    step = np.array([1], dtype=np.int64)
    assert kernels.apply_fused_ema_adam_native(*inputs, step, Hyper())["threads"] == 1
    monkeypatch.setenv("ASCEND_EMA_ADAM_NUM_THREADS", "1000000")
    assert kernels.cpu_kernel()["threads"] == CPUS  # never more than the process's CPUs
    for bad in ("0", "-2", "two", "3x"):
        monkeypatch.setenv("ASCEND_EMA_ADAM_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="expected a positive integer"):
            kernels.cpu_kernel()
        with pytest.raises(ValueError, match="expected a positive integer"):
            kernels.apply_fused_ema_adam_native(*inputs, step, Hyper())


def test_isa_from_environment(monkeypatch, rng):
    """ASCEND_EMA_ADAM_ISA picks the default instruction set (read per call); a set this CPU does
    not run is refused before anything is written."""
    inputs = random_inputs(rng, (1000,), np.float32)
    step = np.array([2], dtype=np.int64)
    expected = golden.emulate_update(*inputs, step, Hyper())
    for isa in ISAS:
        monkeypatch.setenv("ASCEND_EMA_ADAM_ISA", isa)
        assert kernels.cpu_kernel()["isa"] == isa
        grad, var, m, v, s = (x.copy() for x in inputs)
        assert kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step)["isa"] == isa
        assert_bit_exact((var, m, v, s), expected)
    monkeypatch.setenv("ASCEND_EMA_ADAM_ISA", "sse9")
    with pytest.raises(ValueError, match="ASCEND_EMA_ADAM_ISA: instruction set 'sse9'"):
        kernels.cpu_kernel()
    grad, var, m, v, s = (x.copy() for x in inputs)
    with pytest.raises(ValueError, match="ASCEND_EMA_ADAM_ISA: instruction set 'sse9'"):
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step)
    assert_bit_exact((var, m, v, s), inputs[1:], "the untouched inputs")
    monkeypatch.setenv("ASCEND_EMA_ADAM_ISA", "")
    assert kernels.cpu_kernel()["isa"] == BEST_ISA


def test_small_launches_stay_on_the_calling_thread(rng):
    inputs = [x.copy() for x in random_inputs(rng, (1000,), np.float32)]
    step = np.array([1], dtype=np.int64)
    assert kernels.apply_fused_ema_adam_native(*inputs, step, Hyper(), threads=2)["threads"] == 1
    assert kernels.apply_fused_ema_adam_native(*random_inputs(rng, (0,), np.float32), step,
                                            Hyper())["threads"] == 0


def test_concurrent_callers(rng):
    """Launches from several Python threads at once (the pool serves one, the others run on their
    own thread) all equal the golden."""
    from concurrent.futures import ThreadPoolExecutor
    cases = [random_inputs(rng, (2**16 + i,), np.float32) for i in range(8)]
    hyper = Hyper(mode=1, weight_decay=0.01)
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda c: run_native(c, 3, hyper, threads=2,
                                                  min_elems_per_thread=1024), cases))
    for case, out in zip(cases, outs):
        assert_bit_exact(out, golden.emulate_update(*case, np.array([3], np.int64), hyper))


def test_wrapper_rejects_bad_input(rng):
    grad, var, m, v, s = random_inputs(rng, (10,), np.float32)
    step = np.array([1], dtype=np.int64)
    with pytest.raises(ValueError, match="m is float16"):
        kernels.apply_fused_ema_adam_native(grad, var, m.astype(np.float16), v, s, step)
    with pytest.raises(ValueError, match="all nine must match"):
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step,
                                         out=(var, m, v, np.empty(9, np.float32)))
    with pytest.raises(ValueError, match="out must be the four arrays"):
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step, out=(var, m))
    with pytest.raises(ValueError, match="var_out must be writeable"):
        frozen = var.copy()
        frozen.flags.writeable = False
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step, out=(frozen, m, v, s))
    with pytest.raises(TypeError, match="step must be an int64"):
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, np.array([1.0]))
    with pytest.raises(ValueError, match="instruction set 'sse9'"):
        kernels.apply_fused_ema_adam_native(grad, var, m, v, s, step, isa="sse9")


# ------------------------------------------------------------------------------------------
# Through the torch op and the aclnn layer: the environment picks the kernel per call


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
def test_torch_op_runs_the_selected_kernel(monkeypatch, rng, dtype):
    torch = pytest.importorskip("torch")
    from ascend_ema_adam.ops import npu_apply_fused_ema_adamw

    inputs = random_inputs(rng, (2**18 + 3,), dtype)  # large enough for the thread pool
    hyper = Hyper(mode=0, weight_decay=0.01)
    expected = golden.emulate_update(*inputs, np.array([5], np.int64), hyper)

    def call(tensors):
        npu_apply_fused_ema_adamw(*tensors, torch.tensor([5]), hyper.lr, hyper.ema_decay,
                                  hyper.beta1, hyper.beta2, hyper.eps, hyper.mode,
                                  hyper.bias_correction, hyper.weight_decay)

    for kernel in ("native", "twin"):
        monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", kernel)
        tensors = [torch.from_numpy(x.copy()) for x in inputs]
        call(tensors)
        assert_bit_exact([t.numpy() for t in tensors[1:]], expected, f"the golden ({kernel})")

    for variable, value in (("ASCEND_EMA_ADAM_CPU_KERNEL", "fast"),
                            ("ASCEND_EMA_ADAM_NUM_THREADS", "many")):
        monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", "native")
        monkeypatch.setenv(variable, value)
        tensors = [torch.from_numpy(x.copy()) for x in inputs]
        with pytest.raises(RuntimeError, match=f"{variable} is '{value}'"):
            call(tensors)
        assert_bit_exact([t.numpy() for t in tensors[1:]], inputs[1:], "the untouched inputs")
        monkeypatch.delenv(variable)


def test_launches_in_a_burst_wake_the_pool():
    """A launch below 2^20 elements leaves sleeping workers asleep, unless the launches the same
    thread started just before it (each within 2 ms of the one before) add up to 2^20 with it: an
    optimizer step's launches of 256 tensors each then run on every thread after the first; and
    the first launch of the next burst (the next step) wakes them from 2^18 elements on."""
    import time
    time.sleep(0.01)
    kernels.native_wakes(1)  # whatever this thread launched before: a small burst now
    time.sleep(0.01)
    assert not kernels.native_wakes(2**19)
    assert kernels.native_wakes(2**19)  # right after: 2^20 in the burst
    assert kernels.native_wakes(2**10)  # still in it
    time.sleep(0.01)
    assert kernels.native_wakes(2**18)  # a new burst, after one that reached 2^20
    assert not kernels.native_wakes(2**10)  # (this burst: 2^18 + 2^10)
    time.sleep(0.01)
    assert not kernels.native_wakes(2**19)  # after a burst below 2^20
    time.sleep(0.01)
    assert kernels.native_wakes(2**20)  # one launch at the threshold
    time.sleep(0.01)
    assert not kernels.native_wakes(2**18 - 64)  # after a big burst, but below 2^18
