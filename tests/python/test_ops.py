"""The torch op ascend_ema_adam::apply_fused_ema_adam_ on CPU tensors: golden agreement for every
dtype and mode on contiguous and non-contiguous tensors, the MindSpeed-compatible Python API,
bad inputs (tensors untouched), autograd rules, torch.compile and opcheck."""

import ml_dtypes
import numpy as np
import pytest
import torch

import ascend_ema_adam
from ascend_ema_adam import golden
from ascend_ema_adam.check import random_inputs
from ascend_ema_adam.golden import Hyper
from ascend_ema_adam.ops import (apply_fused_ema_adam, apply_fused_ema_adam_functional,
                                 npu_apply_fused_ema_adamw)

TORCH_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
NP_DTYPE = {torch.float32: np.dtype(np.float32), torch.float16: np.dtype(np.float16),
            torch.bfloat16: np.dtype(ml_dtypes.bfloat16)}
IDS = ["fp32", "fp16", "bf16"]


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """Exact numpy copy (bf16 through its bits)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def to_torch(a: np.ndarray) -> torch.Tensor:
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def make_state(rng, shape, dtype):
    return [to_torch(x) for x in random_inputs(rng, shape, NP_DTYPE[dtype])]


def expected_after(tensors, step, hyper):
    return golden.emulate_update(*(to_numpy(t) for t in tensors),
                                 np.array([step], dtype=np.int64), hyper)


def assert_matches(actual_tensors, expected):
    for name, t, e in zip(("var", "m", "v", "s"), actual_tensors, expected):
        assert golden.bit_equal(to_numpy(t), e), f"{name} differs from the golden"


def call(tensors, step, hyper):
    grad, var, m, v, s = tensors
    return npu_apply_fused_ema_adamw(grad, var, m, v, s, torch.tensor([step], dtype=torch.int64),
                                     hyper.lr, hyper.ema_decay, hyper.beta1, hyper.beta2,
                                     hyper.eps, hyper.mode, hyper.bias_correction,
                                     hyper.weight_decay)


@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=IDS)
def test_contiguous_matches_golden_and_returns_inputs(rng, dtype, mode):
    hyper = Hyper(lr=1e-3, ema_decay=0.99, mode=mode, weight_decay=0.02)
    tensors = make_state(rng, (37, 29), dtype)
    expected = expected_after(tensors, 4, hyper)
    out = call(tensors, 4, hyper)
    assert all(o is t for o, t in zip(out, tensors[1:]))  # the very objects, updated in place
    assert_matches(out, expected)


def _views(kind, base):
    if kind == "sliced":
        return base[1:-1:2, 3:]
    if kind == "transposed":
        return base.t()
    if kind == "offset":
        return base.view(-1)[7:7 + 40].view(5, 8)
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["sliced", "transposed", "offset"])
@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=IDS)
def test_non_contiguous_views_update_in_place(rng, dtype, kind):
    """Views with strides or a storage offset are updated in place; the rest of each base
    tensor is untouched."""
    hyper = Hyper(mode=1, weight_decay=0.1, ema_decay=0.9)
    bases = make_state(rng, (11, 13), dtype)
    before = [b.clone() for b in bases]
    views = [_views(kind, b) for b in bases]
    expected = expected_after(views, 9, hyper)
    call(views, 9, hyper)
    assert_matches(views[1:], expected)
    for base, old, view in zip(bases, before, views):
        mask = torch.ones_like(base, dtype=torch.bool)
        _views(kind, mask).fill_(False)
        assert torch.equal(base[mask], old[mask])


def test_keyword_call_and_alias(rng):
    grad, var, m, v, s = make_state(rng, (100,), torch.float32)
    ref = [x.clone() for x in (grad, var, m, v, s)]
    step = torch.tensor([3], dtype=torch.int64)
    apply_fused_ema_adam(grad=grad, var=var, m=m, v=v, s=s, step=step, lr=0.01, mode=0,
                         weight_decay=0.1)
    npu_apply_fused_ema_adamw(*ref, step, 0.01, 0.9999, 0.9, 0.999, 1e-8, 0, True, 0.1)
    for a, b in zip((var, m, v, s), ref[1:]):
        assert torch.equal(a, b)


def test_defaults_match_mindspeed(rng):
    """lr 1e-3, ema_decay 0.9999, betas 0.9/0.999, eps 1e-8, mode 1, bias on, wd 0."""
    tensors = make_state(rng, (64,), torch.float32)
    expected = expected_after(tensors, 2, Hyper())
    grad, var, m, v, s = tensors
    npu_apply_fused_ema_adamw(grad, var, m, v, s, torch.tensor([2]))
    assert_matches((var, m, v, s), expected)


def test_functional_variant_leaves_inputs(rng):
    tensors = make_state(rng, (50,), torch.bfloat16)
    before = [t.clone() for t in tensors]
    hyper = Hyper(mode=0, weight_decay=0.3)
    expected = expected_after(tensors, 5, hyper)
    grad, var, m, v, s = tensors
    out = apply_fused_ema_adam_functional(grad, var, m, v, s, torch.tensor([5]), hyper.lr,
                                          hyper.ema_decay, hyper.beta1, hyper.beta2, hyper.eps,
                                          hyper.mode, hyper.bias_correction, hyper.weight_decay)
    assert_matches(out, expected)
    for t, b in zip(tensors, before):
        assert torch.equal(t, b)


def test_empty_tensors_are_a_no_op():
    empty = [torch.empty(0, 3) for _ in range(5)]
    out = npu_apply_fused_ema_adamw(*empty, torch.tensor([1]))
    assert all(o.shape == (0, 3) for o in out)


# ------------------------------------------------------------------------------------------
# Bad input: a clear exception and every tensor byte-identical afterwards


def _bad_cases(rng):
    def state(dtype=torch.float32, shape=(8, 4)):
        return make_state(rng, shape, dtype)

    g, var, m, v, s = state()
    step = torch.tensor([1], dtype=torch.int64)
    yield "dtype-mismatch", (g, var, m.half(), v, s, step), {}, "m"
    yield "float64", tuple(x.double() for x in state()) + (step,), {}, "dtype"
    yield "shape-mismatch", (g, var, m, v, s[:4], step), {}, "shape"
    yield "step-float", (g, var, m, v, s, torch.tensor([1.0])), {}, "step"
    yield "step-two-elements", (g, var, m, v, s, torch.tensor([1, 2])), {}, "step"
    yield "mode-2", (g, var, m, v, s, step), {"mode": 2}, "mode"
    yield "beta1-1", (g, var, m, v, s, step), {"beta1": 1.0}, "beta1"
    yield "ema-decay-nan", (g, var, m, v, s, step), {"ema_decay": float("nan")}, "ema"
    yield "eps-negative", (g, var, m, v, s, step), {"eps": -1.0}, "eps"
    yield "var-aliases-m", (g, var, var, v, s, step), {}, "overlap"
    overlapping = torch.zeros(40)
    yield ("self-overlapping-view",
           (g.view(-1)[:32], overlapping.as_strided((32,), (1,), 0),
            m.view(-1)[:32], v.view(-1)[:32], overlapping.as_strided((32,), (1,), 8), step),
           {}, "overlap")


@pytest.mark.parametrize("case", range(11))
def test_bad_input_raises_and_touches_nothing(rng, case):
    name, args, kwargs, needle = list(_bad_cases(rng))[case]
    before = [a.clone() for a in args]
    with pytest.raises((RuntimeError, TypeError, ValueError)) as info:
        npu_apply_fused_ema_adamw(*args, **kwargs)
    text = str(info.value)
    assert needle.lower() in text.lower(), (name, text)
    if isinstance(info.value, RuntimeError) and "aclnn" in text:
        assert "status 161002" in text, text
    for a, b in zip(args, before):
        assert torch.equal(a.view(torch.uint8) if a.dtype == torch.bool else a, b), name


def test_null_like_inputs_are_type_errors(rng):
    grad, var, m, v, s = make_state(rng, (4,), torch.float32)
    with pytest.raises((TypeError, RuntimeError)):
        npu_apply_fused_ema_adamw(grad, var, None, v, s, torch.tensor([1]))
    with pytest.raises((TypeError, RuntimeError)):
        npu_apply_fused_ema_adamw(grad, var, m.numpy(), v, s, torch.tensor([1]))


def test_device_mismatch_names_the_argument(rng):
    grad, var, m, v, s = make_state(rng, (4,), torch.float32)
    before = [t.clone() for t in (grad, var, m, v)]
    meta = torch.empty(4, device="meta")
    with pytest.raises(ValueError, match="s is on meta, grad is on cpu"):
        npu_apply_fused_ema_adamw(grad, var, m, v, meta, torch.tensor([1]))
    with pytest.raises(ValueError, match="step is on meta"):
        npu_apply_fused_ema_adamw(grad, var, m, v, s, torch.tensor([1], device="meta"))
    for t, b in zip((grad, var, m, v), before):
        assert torch.equal(t, b)


# ------------------------------------------------------------------------------------------
# Autograd


def test_no_grad_updates_parameters_that_require_grad(rng):
    grad, var, m, v, s = make_state(rng, (16,), torch.float32)
    param = torch.nn.Parameter(var.clone())
    expected = expected_after((grad, param.detach(), m, v, s), 1, Hyper())
    with torch.no_grad():
        npu_apply_fused_ema_adamw(grad, param, m, v, s, torch.tensor([1]))
    assert_matches((param.detach(), m, v, s), expected)
    assert param.requires_grad and param.grad_fn is None


def test_in_place_on_leaf_requiring_grad_outside_no_grad_is_torch_error(rng):
    grad, var, m, v, s = make_state(rng, (16,), torch.float32)
    param = torch.nn.Parameter(var.clone())
    before = param.detach().clone()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        npu_apply_fused_ema_adamw(grad, param, m, v, s, torch.tensor([1]))
    assert torch.equal(param.detach(), before)


def test_version_counter_bumps(rng):
    grad, var, m, v, s = make_state(rng, (16,), torch.float32)
    versions = [t._version for t in (var, m, v, s)]
    npu_apply_fused_ema_adamw(grad, var, m, v, s, torch.tensor([1]))
    assert all(t._version > old for t, old in zip((var, m, v, s), versions))


# ------------------------------------------------------------------------------------------
# torch.compile and opcheck


def _optimizer_step(params, grads, ms, vs, ss, step):
    for p, g, m, v, s in zip(params, grads, ms, vs, ss):
        torch.ops.ascend_ema_adam.apply_fused_ema_adam_(g, p, m, v, s, step, 1e-3, 0.99, 0.9,
                                                        0.999, 1e-8, 1, True, 0.01)


def test_torch_compile_fullgraph_matches_eager(rng):
    shapes = [(33,), (8, 5), (2, 3, 4)]
    state = [make_state(rng, shape, torch.float32) for shape in shapes]
    eager = [[t.clone() for t in group] for group in state]
    compiled_fn = torch.compile(_optimizer_step, fullgraph=True)
    for step in (1, 2, 3):
        step_t = torch.tensor([step], dtype=torch.int64)
        compiled_fn(*[[g[i] for g in state] for i in (1, 0, 2, 3, 4)], step_t)
        _optimizer_step(*[[g[i] for g in eager] for i in (1, 0, 2, 3, 4)], step_t)
    for group, ref in zip(state, eager):
        for a, b in zip(group, ref):
            assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=IDS)
def test_opcheck_inplace(rng, dtype):
    grad, var, m, v, s = make_state(rng, (3, 7), dtype)
    args = (grad, var, m, v, s, torch.tensor([2]), 1e-3, 0.99, 0.9, 0.999, 1e-8, 1, True, 0.01)
    torch.library.opcheck(torch.ops.ascend_ema_adam.apply_fused_ema_adam_.default, args)


def test_opcheck_functional(rng):
    grad, var, m, v, s = make_state(rng, (5,), torch.float32)
    args = (grad, var, m, v, s, torch.tensor([2]), 1e-3, 0.99, 0.9, 0.999, 1e-8, 0, False, 0.01)
    torch.library.opcheck(torch.ops.ascend_ema_adam.apply_fused_ema_adam.default, args)


def test_package_exports():
    assert ascend_ema_adam.npu_apply_fused_ema_adamw is npu_apply_fused_ema_adamw
    assert ascend_ema_adam.apply_fused_ema_adam is npu_apply_fused_ema_adamw
