"""Host tiling: every preset, tiny and huge N; coverage, disjointness, balance, alignment and
the UB budget are checked from the tiling the host actually produces."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st

from ascend_ema_adam import _kernels, golden, kernels
from ascend_ema_adam._dtypes import FLOAT_DTYPES
from ascend_ema_adam.golden import Hyper

DTYPES = [d.numpy for d in FLOAT_DTYPES]
PRESETS = [p["name"] for p in kernels.platforms()]
KEYS = {np.dtype(np.float32): 102, np.dtype(np.float16): 101, np.dtype(ml_dtypes.bfloat16): 100}


def check_tiling(t, numel, dtype, platform):
    itemsize = np.dtype(dtype).itemsize
    align = 32 // itemsize
    assert t["total_length"] == numel
    assert t["align_elems"] == align
    assert t["tiling_key"] == KEYS[np.dtype(dtype)]
    assert t["buffer_num"] == 2
    assert t["workspace_size"] == 0
    if numel == 0:
        assert t["block_dim"] == 0 and t["core_ranges"] == []
        return
    blocks = -(-numel // align)
    assert t["block_dim"] == min(platform["vector_core_num"], blocks)
    ranges = t["core_ranges"]
    assert len(ranges) == t["block_dim"]
    # Covering and disjoint: consecutive ranges from 0 to numel, none empty.
    assert ranges[0][0] == 0 and ranges[-1][1] == numel
    for (b0, e0), (b1, e1) in zip(ranges, ranges[1:]):
        assert e0 == b1
    assert all(e > b for b, e in ranges)
    # Every core starts on a 32-byte boundary; block counts differ by at most one.
    assert all(b % align == 0 for b, _ in ranges)
    core_blocks = [-(-(e - b) // align) for b, e in ranges]
    assert max(core_blocks) - min(core_blocks) <= 1
    assert sum(core_blocks) == blocks
    # UB: chunk is whole blocks, fits the budget with double buffering, and is no larger than
    # the biggest core range needs.
    chunk = t["chunk_length"]
    assert chunk > 0 and chunk % align == 0
    per_elem = 2 * 9 * itemsize + (0 if itemsize == 4 else 9 * 4)
    assert t["ub_bytes_per_core"] == chunk * per_elem <= platform["ub_size"]
    assert chunk <= max(core_blocks) * align
    # The chunk is as large as the budget allows (unless the core range is smaller).
    if chunk < max(core_blocks) * align:
        assert (chunk + align) * per_elem > platform["ub_size"]


@pytest.mark.parametrize("platform", kernels.platforms(), ids=lambda p: p["name"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("numel", [0, 1, 7, 8, 9, 15, 16, 17, 33, 47, 48, 49, 383, 384, 385,
                                   48 * 16 - 1, 48 * 16 + 1, 2**21 + 3, 2**31 + 5, 2**40 + 3])
def test_tiling_invariants(platform, dtype, numel):
    t = kernels.compute_tiling(numel, dtype, platform=platform["name"])
    check_tiling(t, numel, dtype, platform)


@given(numel=st.integers(0, 2**45), cores=st.integers(1, 256),
       ub=st.integers(2048, 256 * 1024), dtype=st.sampled_from(DTYPES))
def test_tiling_invariants_random(numel, cores, ub, dtype):
    platform = {"name": "Ascend910B2", "vector_core_num": cores, "ub_size": ub}
    t = kernels.compute_tiling(numel, dtype, platform="Ascend910B2", vector_core_num=cores,
                            ub_size=ub)
    check_tiling(t, numel, dtype, platform)


def test_presets():
    by_name = {p["name"]: p for p in kernels.platforms()}
    assert by_name["Ascend910B2"]["vector_core_num"] == 48
    assert by_name["Ascend910B3"]["vector_core_num"] == 40
    assert by_name["Ascend910_93"]["vector_core_num"] == 48
    assert all(p["ub_size"] == 196608 for p in by_name.values())
    assert by_name["cpu"]["vector_core_num"] >= 1


def test_chunk_sizes_on_atlas_a2():
    """72 bytes of UB per element (2 x 9 fp32 slots, or 2 x 9 16-bit slots + 9 fp32 work slots)."""
    big = 2**24
    assert kernels.compute_tiling(big, np.float32, platform="Ascend910B2")["chunk_length"] == 2728
    assert kernels.compute_tiling(big, np.float16, platform="Ascend910B2")["chunk_length"] == 2720


def test_scalars_are_narrowed_to_fp32():
    h = Hyper(lr=0.1, ema_decay=0.3, beta1=0.9, beta2=0.999, eps=1e-8, mode=0,
              bias_correction=False, weight_decay=0.7)
    t = kernels.compute_tiling(100, np.float32, h)
    for key, value in [("lr", 0.1), ("ema_decay", 0.3), ("beta1", 0.9), ("beta2", 0.999),
                       ("eps", 1e-8), ("weight_decay", 0.7)]:
        assert t[key] == float(np.float32(value)), key
    assert t["mode"] == 0 and t["bias_correction"] == 0


def test_platform_too_small_is_an_error():
    with pytest.raises(ValueError, match="cannot hold"):
        kernels.compute_tiling(100, np.float32, platform="Ascend910B2", ub_size=64)
    with pytest.raises(ValueError, match="unknown platform"):
        kernels.compute_tiling(100, np.float32, platform="Ascend310P")


def test_dtype_tables_agree():
    """The Python dtype table (_dtypes.py) is the C++ one (op_host/common/data_type.h), and the golden's
    per-dtype precision constants cover exactly its dtypes."""
    cpp = [(d["name"], d["size"]) for d in _kernels.data_types() if d["is_float"]]
    assert cpp == [(d.name, d.itemsize) for d in FLOAT_DTYPES]
    assert [d["name"] for d in _kernels.data_types() if not d["is_float"]] == ["int64", "uint8"]
    numpy_dtypes = {d.numpy for d in FLOAT_DTYPES}
    assert set(golden.MERE_THRESHOLD) == set(golden.SMALL_VALUE) == numpy_dtypes
    with pytest.raises(ValueError, match="dtype must be one of float32, float16, bfloat16"):
        _kernels.compute_apply_fused_ema_adam_tiling(10, "float64")
