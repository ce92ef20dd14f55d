"""docs/OPTIMIZER.md, "Why not 16-bit state": an EMA stored in 16 bits freezes at a decay near 1,
because the per-step increment (1-d)(θ-s) falls below half an ulp of s. Replayed through the
golden's kernel order (golden.emulate_entry): a weight fixed at 1 (zero gradient), its EMA from 0,
20,000 steps at d = 0.9999; the exact EMA covers 1 - d**20000 = 86.5 % of the distance."""

import ml_dtypes
import numpy as np
import pytest

from ascend_ema_adam import golden

STEPS, DECAY = 20_000, 0.9999


def replay(state_dtype, steps=STEPS):
    """The EMA after each step, for a parameter (and state) of ``state_dtype``."""
    rng = np.random.default_rng()
    n = 8
    zeros = np.zeros(n, state_dtype)
    p = np.ones(n, state_dtype)
    s = np.zeros(n, state_dtype)
    h = golden.Hyper(lr=float(rng.uniform(1e-4, 1e-2)), ema_decay=DECAY)
    history = []
    for step in range(1, steps + 1):
        out = golden.emulate_entry(zeros, p, zeros, zeros, s, step, h)
        assert np.array_equal(out.var, p)  # zero gradient, zero moments: the weight stays
        s = out.s
        history.append(float(s[0]))
        assert np.all(s == s[0])
    return np.array(history)


@pytest.mark.parametrize("dtype,covered_below", [(ml_dtypes.bfloat16, 0.04), (np.float16, 0.26)],
                         ids=["bf16", "fp16"])
def test_a_16bit_ema_freezes_far_from_the_target(dtype, covered_below):
    history = replay(dtype)
    exact = 1 - DECAY ** STEPS
    assert history[-1] < covered_below < exact / 3
    # frozen, not slow: the last 5,000 steps did not move it at all
    assert np.all(history[-5000:] == history[-1])


def test_an_fp32_ema_follows_the_exact_one():
    history = replay(np.float32)
    exact = 1 - DECAY ** np.arange(1, STEPS + 1)
    assert np.max(np.abs(history - exact)) < 1e-4
