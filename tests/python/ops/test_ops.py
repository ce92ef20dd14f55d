"""The torch op ascend_ema_adam::apply_fused_ema_adam_ on CPU tensors: golden agreement for every
dtype and mode on contiguous and non-contiguous tensors, the MindSpeed-compatible Python API,
bad inputs (tensors untouched), autograd rules, torch.compile and opcheck."""

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable

import numpy as np
import pytest
import torch

import ascend_ema_adam
from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import FLOAT_DTYPES, by_torch, to_numpy, to_torch
from ascend_ema_adam.apps.check import random_inputs
from ascend_ema_adam.golden import Hyper
from ascend_ema_adam.ops import (apply_fused_ema_adam, apply_fused_ema_adam_functional,
                                 npu_apply_fused_ema_adamw)

TORCH_DTYPES = [d.torch for d in FLOAT_DTYPES]
IDS = [d.short for d in FLOAT_DTYPES]


def make_state(rng, shape, dtype):
    return [to_torch(x) for x in random_inputs(rng, shape, by_torch(dtype).numpy)]


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


@dataclass(frozen=True)
class BadCase:
    """One bad call: `build(fresh)` returns its (args, kwargs) from fresh valid fp32 [8, 4]
    tensors; `error` is a regex of the message, naming the argument and the value seen."""
    name: str
    build: Callable[[SimpleNamespace], tuple]
    error: str


def _call(t, grad=None, var=None, m=None, v=None, s=None, step=None, **kwargs):
    """The valid call on fresh tensors `t`, with the given arguments replaced."""
    pick = lambda given, default: default if given is None else given  # noqa: E731
    return ((pick(grad, t.g), pick(var, t.var), pick(m, t.m), pick(v, t.v), pick(s, t.s),
             pick(step, t.step)), kwargs)


def _self_overlapping(t):
    """var and s: two views of one buffer, 8 elements apart (they share 24 elements)."""
    shared = torch.zeros(40)
    flat = [x.view(-1)[:32] for x in (t.g, t.m, t.v)]
    return ((flat[0], shared.as_strided((32,), (1,), 0), flat[1], flat[2],
             shared.as_strided((32,), (1,), 8), t.step), {})


BAD_CASES = [
    BadCase("dtype-mismatch", lambda t: _call(t, m=t.m.half()),
            r"mRef has dtype ACL_FLOAT16 \(1\) but grad has ACL_FLOAT \(0\)"),
    BadCase("float64", lambda t: (tuple(x.double() for x in (t.g, t.var, t.m, t.v, t.s)) +
                                  (t.step,), {}),
            r"grad has dtype ACL_DOUBLE \(11\), expected ACL_FLOAT, ACL_FLOAT16 or ACL_BF16"),
    BadCase("shape-mismatch", lambda t: _call(t, s=t.s[:4]),
            r"sRef has shape \[4,4\] but grad has shape \[8,4\]"),
    BadCase("step-float", lambda t: _call(t, step=torch.tensor([1.0])),
            r"step has dtype ACL_FLOAT \(0\), expected ACL_INT64"),
    BadCase("step-two-elements", lambda t: _call(t, step=torch.tensor([1, 2])),
            r"step has shape \[2\] \(2 elements\), expected exactly one element"),
    BadCase("step-zero", lambda t: _call(t, step=torch.tensor([0])),
            r"step is 0, expected step >= 1 when biasCorrection is true"),
    BadCase("step-negative", lambda t: _call(t, step=torch.tensor([-3])),
            r"step is -3, expected step >= 1 when biasCorrection is true"),
    BadCase("mode-2", lambda t: _call(t, mode=2), r"mode is 2, expected 0 \(Adam"),
    BadCase("beta1-1", lambda t: _call(t, beta1=1.0),
            r"beta1 is 1 \(1 in fp32\), expected 0 <= beta1 < 1"),
    BadCase("ema-decay-nan", lambda t: _call(t, ema_decay=float("nan")),
            r"emaDecay is nan, expected a finite value"),
    BadCase("eps-negative", lambda t: _call(t, eps=-1.0),
            r"eps is -1 \(-1 in fp32\), expected eps >= 0"),
    BadCase("var-aliases-m", lambda t: _call(t, m=t.var), r"varRef and mRef overlap in memory"),
    BadCase("self-overlapping-view", _self_overlapping, r"varRef and sRef overlap in memory"),
]


@pytest.mark.parametrize("case", BAD_CASES, ids=[c.name for c in BAD_CASES])
def test_bad_input_raises_and_touches_nothing(rng, case):
    g, var, m, v, s = make_state(rng, (8, 4), torch.float32)
    fresh = SimpleNamespace(g=g, var=var, m=m, v=v, s=s,
                            step=torch.tensor([1], dtype=torch.int64))
    args, kwargs = case.build(fresh)
    before = [a.clone() for a in args]
    with pytest.raises(RuntimeError, match=case.error) as info:
        npu_apply_fused_ema_adamw(*args, **kwargs)
    assert "aclnn status 161002" in str(info.value)
    for a, b in zip(args, before):
        assert torch.equal(a, b), case.name


@pytest.mark.parametrize("step", [0, -3])
def test_any_step_without_bias_correction(rng, step):
    """Without bias correction c1 = c2 = 1: step is not used, so any value is valid."""
    hyper = Hyper(mode=1, bias_correction=False, weight_decay=0.01)
    tensors = make_state(rng, (33,), torch.float32)
    expected = expected_after(tensors, step, hyper)
    assert_matches(call(tensors, step, hyper), expected)


def test_null_like_inputs_are_type_errors(rng):
    grad, var, m, v, s = make_state(rng, (4,), torch.float32)
    with pytest.raises(TypeError, match="m must be a torch.Tensor, got NoneType"):
        npu_apply_fused_ema_adamw(grad, var, None, v, s, torch.tensor([1]))
    with pytest.raises(TypeError, match="m must be a torch.Tensor, got ndarray"):
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
