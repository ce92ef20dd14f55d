"""The bench's access-pattern probes (``_kernels.stream_probe``): each touches exactly the bytes of
the kernel pattern it stands for, computes its one add per output, and refuses buffers that do
not fit. ``make bench`` sets the 8-bit step's ratio to the fp32 step beside the ratio of these two
probes, so a probe that skipped part of its streams would make that roofline a lie."""

import numpy as np
import pytest

from ascend_ema_adam import _kernels

from kernel_cases import ISAS

# many chunks per thread (kNativeMinElemsPerThread is 2^16): the threads that take part split it
THREADED = 64 * 16411


def _normal(rng, n):
    return rng.standard_normal(n).astype(np.float32)


@pytest.fixture(params=ISAS)
def isa(request, monkeypatch):
    """The probes run the kernels' instruction set (ASCEND_EMA_ADAM_ISA, read at each call)."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_ISA", request.param)
    return request.param


@pytest.mark.parametrize("threads", [1, 2])
def test_update_probe_adds_the_first_stream_to_the_other_four(isa, threads):
    rng = np.random.default_rng()
    n = THREADED + int(rng.integers(1, 64))  # any n
    x = [_normal(rng, n) for _ in range(5)]
    before = [a.copy() for a in x]
    assert 1 <= _kernels.stream_probe("update", x, 0.5, n, threads) <= threads
    np.testing.assert_array_equal(x[0], before[0])
    for k in range(1, 5):
        np.testing.assert_array_equal(x[k], before[k] + before[0])


@pytest.mark.parametrize("threads", [1, 2])
def test_update8bit_probe_moves_the_8bit_kernels_pattern(isa, threads):
    """Gradient read; parameter and EMA updated in place; every float of the two n-byte code
    streams read, added to and written once (a constant gradient makes that add checkable)."""
    rng = np.random.default_rng()
    n = THREADED + 64 * int(rng.integers(0, 64))
    step = np.float32(rng.uniform(0.25, 2.0))
    g = np.full(n, step, np.float32)
    p, s = _normal(rng, n), _normal(rng, n)
    m, v = _normal(rng, n // 4), _normal(rng, n // 4)
    before = [a.copy() for a in (p, s, m, v)]
    assert 1 <= _kernels.stream_probe("update8bit", [g, p, s, m, v], 0.5, n, threads) <= threads
    np.testing.assert_array_equal(g, step)
    np.testing.assert_array_equal(p, before[0] + step)
    np.testing.assert_array_equal(s, before[1] + (before[0] + step))
    np.testing.assert_array_equal(m, before[2] + step)
    np.testing.assert_array_equal(v, before[3] + step)


def test_update8bit_probe_refuses_what_does_not_fit_and_writes_nothing():
    rng = np.random.default_rng()
    n = 64 * int(rng.integers(2, 100))
    g, p, s = (_normal(rng, n) for _ in range(3))
    m, v = _normal(rng, n // 4), _normal(rng, n // 4)
    kept = [a.copy() for a in (p, s, m, v)]
    with pytest.raises(ValueError, match="multiple of 64"):
        _kernels.stream_probe("update8bit", [g[:n - 4], p[:n - 4], s[:n - 4], m[:-1], v[:-1]],
                           0.5, n - 4, 1)
    with pytest.raises(ValueError, match=rf"arrays\[3\]: expected {n} bytes, got {4 * n}"):
        _kernels.stream_probe("update8bit", [g, p, s, p.copy(), v], 0.5, n, 1)
    with pytest.raises(ValueError, match="needs 5 arrays"):
        _kernels.stream_probe("update8bit", [g, p, s, m], 0.5, n, 1)
    with pytest.raises(ValueError, match="update or update8bit"):
        _kernels.stream_probe("update8", [g, p, s, m, v], 0.5, n, 1)
    for a, b in zip((p, s, m, v), kept):
        np.testing.assert_array_equal(a, b)
