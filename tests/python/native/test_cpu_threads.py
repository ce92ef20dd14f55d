"""The CPU kernels follow torch.set_num_threads; ASCEND_EMA_ADAM_NUM_THREADS overrides it; they
run on torch's intra-op threads (ASCEND_EMA_ADAM_THREAD_POOL=own: the CPU device's own pool).

The torch op hands torch.get_num_threads() to the CPU device before each phase 1 (which fixes the
executor's thread count); a prepared (phase-2-only) step is prepared again when the count changed.
``_C.cpu_threads()`` reports the count of the next launch, the threads the last one used and
whose threads they are.
"""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from ascend_ema_adam import FusedEmaAdamW, _C, apply_fused_ema_adam_list

CPUS = len(os.sched_getaffinity(0))
BIG = 2**21  # enough elements per thread for every CPU to take part


@pytest.fixture
def torch_threads(monkeypatch):
    monkeypatch.delenv("ASCEND_EMA_ADAM_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _big_param():
    p = torch.nn.Parameter(torch.randn(BIG))
    p.grad = torch.randn(BIG)
    return p


def test_op_uses_torch_thread_count(torch_threads):
    grads, vars_, ms, vs, ss = ([torch.randn(BIG)] for _ in range(5))
    vs[0].abs_()
    torch.set_num_threads(1)
    apply_fused_ema_adam_list(grads, vars_, ms, vs, ss, torch.tensor([1]))
    assert _C.cpu_threads() == {"next": 1, "last": 1, "pool": "torch"}
    torch.set_num_threads(CPUS)
    assert _C.cpu_threads()["next"] == CPUS


def test_optimizer_follows_set_num_threads_between_steps(torch_threads):
    p = _big_param()
    opt = FusedEmaAdamW([p], lr=1e-3)
    torch.set_num_threads(1)
    opt.step()
    opt.step()  # a prepared relaunch
    assert _C.cpu_threads() == {"next": 1, "last": 1, "pool": "torch"}
    if CPUS >= 2:
        torch.set_num_threads(2)
        opt.step()  # prepared again with the new count
        assert _C.cpu_threads()["next"] == 2
        torch.set_num_threads(1)
        opt.step()  # and again: a launch prepared with 2 threads may not run now
        assert _C.cpu_threads() == {"next": 1, "last": 1, "pool": "torch"}


def test_environment_overrides_torch(monkeypatch, torch_threads):
    monkeypatch.delenv("ASCEND_EMA_ADAM_THREAD_POOL", raising=False)
    torch.set_num_threads(CPUS)
    monkeypatch.setenv("ASCEND_EMA_ADAM_NUM_THREADS", "1")
    assert _C.cpu_threads()["next"] == 1
    p = _big_param()
    FusedEmaAdamW([p], lr=1e-3).step()
    assert _C.cpu_threads()["last"] == 1
    monkeypatch.setenv("ASCEND_EMA_ADAM_NUM_THREADS", "many")
    with pytest.raises(RuntimeError, match="expected a positive integer"):
        _C.cpu_threads()


def test_never_more_than_the_cpus(torch_threads):
    torch.set_num_threads(CPUS + 3)
    assert _C.cpu_threads()["next"] == CPUS


def test_a_big_launch_runs_on_every_torch_thread(monkeypatch, torch_threads):
    monkeypatch.delenv("ASCEND_EMA_ADAM_THREAD_POOL", raising=False)
    torch.set_num_threads(CPUS)
    FusedEmaAdamW([_big_param()], lr=1e-3).step()
    assert _C.cpu_threads() == {"next": CPUS, "last": CPUS, "pool": "torch"}


def test_both_pools_compute_the_same_bits(monkeypatch, torch_threads):
    torch.set_num_threads(CPUS)
    results = {}
    for pool in ("torch", "own"):
        monkeypatch.setenv("ASCEND_EMA_ADAM_THREAD_POOL", pool)
        gen = torch.Generator().manual_seed(7)
        grads, vars_, ms, vs, ss = ([torch.randn(BIG, generator=gen)] for _ in range(5))
        vs[0].abs_()
        apply_fused_ema_adam_list(grads, vars_, ms, vs, ss, torch.tensor([3]), weight_decay=0.01)
        assert _C.cpu_threads()["pool"] == pool
        results[pool] = [t[0] for t in (vars_, ms, vs, ss)]
    for a, b in zip(results["torch"], results["own"]):
        assert torch.equal(a, b)


def test_unknown_pool_is_a_clear_error_and_updates_nothing(monkeypatch):
    p = _big_param()
    opt = FusedEmaAdamW([p], lr=1e-3)
    opt.step()
    monkeypatch.setenv("ASCEND_EMA_ADAM_THREAD_POOL", "openmp")
    before = p.detach().clone()
    state = {k: v.clone() for k, v in opt.state[p].items()}
    with pytest.raises(RuntimeError, match="ASCEND_EMA_ADAM_THREAD_POOL is 'openmp'"):
        opt.step()
    assert torch.equal(p.detach(), before)
    assert all(torch.equal(opt.state[p][k], v) for k, v in state.items())  # the step count too


def test_8bit_path_is_reported_and_a_bad_encode_updates_nothing(monkeypatch):
    """_C.cpu_8bit_path() says how the device's 8-bit kernel looks codes up (the bench prints it):
    measured by the first launch on AVX-512; ASCEND_EMA_ADAM_8BIT_ENCODE wins; a bad value makes
    step() a clear error that leaves the parameter and the state as they were."""
    p = _big_param()
    opt = FusedEmaAdamW([p], lr=1e-3, state_bits=8)
    opt.step()
    isa = _C.cpu_8bit_path().split(",")[0]
    assert _C.cpu_8bit_path().endswith(" (measured)" if isa == "avx512" else "table")
    monkeypatch.setenv("ASCEND_EMA_ADAM_8BIT_ENCODE", "search")
    assert _C.cpu_8bit_path().endswith("encode by search (ASCEND_EMA_ADAM_8BIT_ENCODE)")
    monkeypatch.setenv("ASCEND_EMA_ADAM_8BIT_ENCODE", "fast")
    before = p.detach().clone()
    state = {k: v.clone() for k, v in opt.state[p].items() if torch.is_tensor(v)}
    with pytest.raises(RuntimeError, match="ASCEND_EMA_ADAM_8BIT_ENCODE='fast'"):
        opt.step()
    assert torch.equal(p.detach(), before)
    assert all(torch.equal(opt.state[p][k], v) for k, v in state.items())
    with pytest.raises(RuntimeError, match="ASCEND_EMA_ADAM_8BIT_ENCODE='fast'"):
        _C.cpu_8bit_path()


_COUNT_THREADS = textwrap.dedent("""
    import os, torch
    from ascend_ema_adam import FusedEmaAdamW
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    p = torch.nn.Parameter(torch.randn(2**22)); p.grad = torch.randn(2**22)
    opt = FusedEmaAdamW([p], lr=1e-3)
    for _ in range(3):
        torch.add(p.grad, p.grad).sum()  # torch's intra-op threads
        opt.step()
    print(len(os.listdir("/proc/self/task")))
""")


@pytest.mark.skipif(CPUS < 2, reason="one CPU: no thread beside the caller either way")
def test_one_set_of_threads_in_the_process():
    """With torch's threads the optimizer starts none of its own: the process has as many threads
    as without the CPU device's pool, CPUS - 1 fewer than with it."""
    counts = {}
    for pool in ("torch", "own"):
        env = dict(os.environ, ASCEND_EMA_ADAM_THREAD_POOL=pool)
        env.pop("ASCEND_EMA_ADAM_NUM_THREADS", None)
        out = subprocess.run([sys.executable, "-c", _COUNT_THREADS], env=env, check=True,
                             capture_output=True, text=True).stdout
        counts[pool] = int(out.split()[-1])
    assert counts["own"] - counts["torch"] == CPUS - 1


_OPENMP_RUNTIMES = textwrap.dedent("""
    import re, torch
    from ascend_ema_adam import FusedEmaAdamW
    p = torch.nn.Parameter(torch.randn(2**21)); p.grad = torch.randn(2**21)
    FusedEmaAdamW([p], lr=1e-3).step()
    maps = open("/proc/self/maps").read().split()
    print(" ".join(sorted({m for m in maps if re.search(r"/lib(g|i)?omp[^/]*\\.so", m)})))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="needs glibc's dynamic linker (LD_DEBUG) and /proc/self/maps")
def test_openmp_calls_bind_to_torchs_runtime(tmp_path):
    """The torch op's OpenMP calls (at::parallel_for compiled for OpenMP) bind to the OpenMP runtime
    torch loaded, and no second one is loaded: two runtimes would be two sets of threads again."""
    env = dict(os.environ, LD_DEBUG="bindings", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    env.pop("ASCEND_EMA_ADAM_THREAD_POOL", None)
    res = subprocess.run([sys.executable, "-c", _OPENMP_RUNTIMES], capture_output=True,
                         text=True, env=env, timeout=300, check=True)
    runtimes = res.stdout.split()
    assert len(runtimes) == 1, f"OpenMP runtimes mapped: {runtimes}"
    targets = set()
    for log in tmp_path.glob("ld.*"):
        for line in log.read_text(errors="replace").splitlines():
            if "/ascend_ema_adam/_C" in line and "symbol `GOMP_parallel" in line:
                targets.add(line.split(" to ")[1].split(" [")[0])
    assert targets and {os.path.realpath(t) for t in targets} == {os.path.realpath(runtimes[0])}
