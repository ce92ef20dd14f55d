"""The CPU kernels follow torch.set_num_threads; ASCEND_EMA_ADAM_NUM_THREADS overrides it.

The torch op hands torch.get_num_threads() to the CPU device before each phase 1 (which fixes the
executor's thread count); a prepared (phase-2-only) step is prepared again when the count changed.
``_C.cpu_threads()`` reports the count of the next launch and the threads the last one used.
"""
import os

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
    assert _C.cpu_threads() == {"next": 1, "last": 1}
    torch.set_num_threads(CPUS)
    assert _C.cpu_threads()["next"] == CPUS


def test_optimizer_follows_set_num_threads_between_steps(torch_threads):
    p = _big_param()
    opt = FusedEmaAdamW([p], lr=1e-3)
    torch.set_num_threads(1)
    opt.step()
    opt.step()  # a prepared relaunch
    assert _C.cpu_threads() == {"next": 1, "last": 1}
    if CPUS >= 2:
        torch.set_num_threads(2)
        opt.step()  # prepared again with the new count
        assert _C.cpu_threads()["next"] == 2
        torch.set_num_threads(1)
        opt.step()  # and again: a launch prepared with 2 threads may not run now
        assert _C.cpu_threads() == {"next": 1, "last": 1}


def test_environment_overrides_torch(monkeypatch, torch_threads):
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
