"""Reproducible randomness for every test.

Each test draws fresh random inputs from its own seed, printed before it runs (pytest shows it
with a failure). Replay a failure with that seed: ``pytest <test id> --seed N`` or
``AEA_TEST_SEED=N pytest ...``; every test then uses N. The seed drives the ``rng`` fixture
(numpy) and, before each test, numpy's, Python's and torch's global generators, so tests that
call ``torch.randn`` without a generator replay too.

Hypothesis runs with the derandomized ``ci`` profile by default (``make test``: the same examples
on every run); ``HYPOTHESIS_PROFILE=dev`` explores fresh examples, and a failure there prints
the ``@reproduce_failure`` blob (and ``--hypothesis-seed`` replays a run).
"""

import os
import random
import sys

import numpy as np
import pytest
from hypothesis import settings

# Property tests run the real kernel: keep them bounded in time, never flaky on deadlines.
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                          print_blob=True)
settings.register_profile("dev", max_examples=60, deadline=None, derandomize=False,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SEED_ENV = "AEA_TEST_SEED"


def pytest_configure(config):
    """Under pytest-xdist each worker takes its share of the cores for torch's intra-op threads
    (and the CPU kernels, which run on them), also for the processes it starts: n workers each
    running n OpenMP threads on n cores spin in each other's way after every parallel region
    (without OMP_WAIT_POLICY=PASSIVE, which make test no longer sets). Tests of the threads set
    torch.set_num_threads themselves."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1 and "OMP_NUM_THREADS" not in os.environ:
        share = max(1, len(os.sched_getaffinity(0)) // workers)
        os.environ["OMP_NUM_THREADS"] = str(share)
        import torch

        torch.set_num_threads(share)


def pytest_addoption(parser):
    parser.addoption("--seed", type=int, default=None,
                     help=f"replay the random tests with this seed (also ${SEED_ENV})")


def replay_seed(config) -> int | None:
    """The seed to replay (--seed, else $AEA_TEST_SEED), or None for fresh seeds."""
    if config.getoption("--seed") is not None:
        return config.getoption("--seed")
    value = os.environ.get(SEED_ENV, "")
    return int(value) if value else None


def draw_seed(config, what: str) -> int:
    """A fresh seed (or the replay seed), printed with how to replay it."""
    seed = replay_seed(config)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**62)
    print(f"{what} seed: {seed} (replay: --seed {seed} or {SEED_ENV}={seed})")
    return seed


@pytest.hookimpl(tryfirst=True)  # before the fixtures are set up
def pytest_runtest_setup(item):
    """Seeds the global generators for the test (numpy, random, torch if loaded)."""
    seed = draw_seed(item.config, "random")
    item.aea_seed = seed
    np.random.seed(seed % 2**32)
    random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


@pytest.fixture
def seed(request) -> int:
    """This test's seed (printed before it ran)."""
    return request.node.aea_seed


@pytest.fixture
def rng(seed):
    """A generator from this test's seed: fresh inputs on every run, replayable."""
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def new_seed(pytestconfig):
    """For fixtures wider than one test: new_seed("what") draws a printed, replayable seed."""
    return lambda what: draw_seed(pytestconfig, what)
