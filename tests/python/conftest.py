import os

import numpy as np
import pytest
from hypothesis import settings

# Property tests run the real kernel: keep them bounded in time, never flaky on deadlines.
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    """A fresh, unseeded generator per test (inputs are never fixed); the seed is printed on
    failure so a case can be replayed."""
    seed = int(np.random.SeedSequence().entropy % 2**63)
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)
