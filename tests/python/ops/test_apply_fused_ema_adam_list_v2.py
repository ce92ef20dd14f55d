"""Issue 12's list-op extensions through the torch op (CPU tensors, aclnnApplyFusedEmaAdamListV2):
launches without the EMA (an empty ``ss``, ``ss=None`` in the wrapper), lr and the EMA decay as
one-element fp32 tensors (the same bits as the attributes, on both CPU kernels), bad tensors
refused with nothing written, fakes, opcheck, and torch.compile keeping one graph while the
tensors' values change."""

import numpy as np
import pytest
import torch
from test_apply_fused_ema_adam_list import (BF16, COMBO_IDS, COMBOS, F16, F32, MIXED, SHAPES,
                                            make_group, tensors_of)

from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import to_numpy
from ascend_ema_adam.golden import Extras, Hyper
from ascend_ema_adam.ops import apply_fused_ema_adam_list

OP = torch.ops.ascend_ema_adam.apply_fused_ema_adam_list_.default
FUNCTIONAL = torch.ops.ascend_ema_adam.apply_fused_ema_adam_list.default


@pytest.fixture(params=["native", "twin"])
def cpu_kernel(request, monkeypatch):
    """Both CPU kernels: the native one and the AscendC list kernel on the twin (chosen at each
    phase 1 from the environment)."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", request.param)
    return request.param


def golden_after(g, hyper, extras, step, ema=True):
    """The golden's new arrays per list (``ss`` None without the EMA)."""
    out = {k: [] for k in ("vars", "ms", "vs", "ss", "max_vs", "copies")}
    for i in range(len(g.vars)):
        got = golden.emulate_entry(
            to_numpy(g.grads[i]), to_numpy(g.vars[i]), to_numpy(g.ms[i]), to_numpy(g.vs[i]),
            to_numpy(g.ss[i]) if ema else None, np.array([step]), hyper, extras,
            max_v=None if g.max_vs is None else to_numpy(g.max_vs[i]),
            copy=None if g.copies is None else to_numpy(g.copies[i]))
        for k, value in zip(out, got.astuple()):
            out[k].append(value)
    return out


def assert_golden(g, expected, lists=("vars", "ms", "vs", "ss", "max_vs", "copies")):
    for k in lists:
        tensors = getattr(g, k)
        if tensors is None:
            continue
        for i, (t, e) in enumerate(zip(tensors, expected[k])):
            assert golden.bit_equal(to_numpy(t), e), f"{k}[{i}] differs from the golden"


def call(g, hyper, extras, step, *, ss, lr=None, ema_decay=None):
    """The wrapper with the hyper-parameters of `hyper` (lr / ema_decay overridable, e.g. by
    tensors)."""
    g.step = torch.tensor([step])
    scale = None if extras.grad_scale is None else torch.tensor([extras.grad_scale])
    return apply_fused_ema_adam_list(
        g.grads, g.vars, g.ms, g.vs, ss, g.step, hyper.lr if lr is None else lr,
        hyper.ema_decay if ema_decay is None else ema_decay, hyper.beta1, hyper.beta2, hyper.eps,
        hyper.mode, hyper.bias_correction, hyper.weight_decay, max_vs=g.max_vs,
        model_copies=g.copies, grad_scale=scale, maximize=extras.maximize)


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and (
        a.numel() == 0 or torch.equal(a.view(torch.uint8), b.view(torch.uint8)))


def clone_group(g):
    from types import SimpleNamespace
    return SimpleNamespace(**{k: ([t.clone() for t in v] if isinstance(v, list) else v)
                              for k, v in vars(g).items()})


# ------------------------------------------------------------------------------------------
# no EMA


@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_no_ema_matches_golden(rng, cpu_kernel, combo, amsgrad):
    """``ss=None`` (and an empty list): every other output bit-exact with
    golden.emulate_entry(s=None); the EMA tensors are not part of the call and stay as they
    were; mode 0 and 1."""
    p, s, gr, c = combo
    for mode, ss in ((0, None), (1, [])):
        hyper = Hyper(lr=3e-3, ema_decay=0.9, mode=mode, weight_decay=0.05)
        extras = Extras(maximize=amsgrad, grad_scale=16.0 if amsgrad else None)
        g = make_group(rng, MIXED, param=p, state=s, grad=gr, copy=c, amsgrad=amsgrad)
        ema_before = [t.clone() for t in g.ss]
        expected = golden_after(g, hyper, extras, 5, ema=False)
        returned = call(g, hyper, extras, 5, ss=ss)
        assert returned[3] is ss
        assert_golden(g, expected, ("vars", "ms", "vs", "max_vs", "copies"))
        assert all(same_bits(a, b) for a, b in zip(g.ss, ema_before))


def test_no_ema_then_ema_equals_golden_trajectory(rng):
    """An ``ema_every``-like schedule: EMA-less steps between EMA steps follow the golden, whose
    EMA stays where the last EMA step left it."""
    g = make_group(rng, MIXED, param=BF16, state=F32, amsgrad=True)
    hyper = Hyper(lr=1e-2, ema_decay=0.9, mode=1, weight_decay=0.01)
    for step in range(1, 7):
        ema = step % 3 == 0
        expected = golden_after(g, hyper, Extras(), step, ema=ema)
        ema_before = [t.clone() for t in g.ss]
        call(g, hyper, Extras(), step, ss=g.ss if ema else None)
        assert_golden(g, expected, ("vars", "ms", "vs", "max_vs") + (("ss",) if ema else ()))
        if not ema:
            assert all(same_bits(a, b) for a, b in zip(g.ss, ema_before))


# ------------------------------------------------------------------------------------------
# lr / EMA decay as tensors


@pytest.mark.parametrize("ema", [True, False], ids=["ema", "noema"])
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_tensor_lr_and_decay_give_the_attributes_bits(rng, cpu_kernel, combo, ema):
    """lr and ema_decay as float32 tensors of one element: the same bits as the same numbers
    given as attributes (which the op narrows to fp32 the same way), and as the golden."""
    p, s, gr, c = combo
    lr, decay = float(rng.uniform(1e-4, 1e-2)), float(rng.uniform(0.9, 0.99999))
    hyper = Hyper(lr=lr, ema_decay=decay, mode=int(rng.integers(0, 2)), weight_decay=0.01)
    extras = Extras(maximize=True, grad_scale=4.0)
    with_tensors = make_group(rng, MIXED, param=p, state=s, grad=gr, copy=c, amsgrad=True)
    with_attrs = clone_group(with_tensors)
    expected = golden_after(with_tensors, hyper, extras, 9, ema=ema)
    call(with_tensors, hyper, extras, 9, ss=with_tensors.ss if ema else None,
         lr=torch.tensor([lr], dtype=torch.float32),
         ema_decay=torch.tensor([decay], dtype=torch.float32))
    call(with_attrs, hyper, extras, 9, ss=with_attrs.ss if ema else None)
    lists = ("vars", "ms", "vs", "max_vs", "copies") + (("ss",) if ema else ())
    assert_golden(with_tensors, expected, lists)
    for k in lists:
        a, b = getattr(with_tensors, k), getattr(with_attrs, k)
        assert a is None or all(same_bits(x, y) for x, y in zip(a, b)), k


def test_tensor_values_are_read_when_the_launch_runs(rng):
    """The tensors' values at launch time are used, not the wrapper's placeholder attributes:
    two calls with one tensor object written in between follow the golden with each value."""
    g = make_group(rng, SHAPES, param=F32)
    lr, decay = torch.tensor([1e-3]), torch.tensor([0.5])
    for step, (lr_value, decay_value) in enumerate(((1e-3, 0.5), (0.25, 0.0)), start=1):
        lr.fill_(lr_value)
        decay.fill_(decay_value)
        hyper = Hyper(lr=lr_value, ema_decay=decay_value)
        expected = golden_after(g, hyper, Extras(), step)
        call(g, hyper, Extras(), step, ss=g.ss, lr=lr, ema_decay=decay)
        assert_golden(g, expected)


def _bad_scalar_cases():
    """(id, keyword, tensor builder, message pattern) of refused lr / decay tensors."""
    return [
        ("lr-fp16", "lr", lambda g: torch.tensor([1e-3], dtype=F16),
         r"lrTensorOptional has dtype ACL_FLOAT16 \(1\), expected ACL_FLOAT"),
        ("lr-fp64", "lr", lambda g: torch.tensor([1e-3], dtype=torch.float64),
         r"lrTensorOptional has dtype ACL_DOUBLE"),
        ("decay-bf16", "ema_decay", lambda g: torch.tensor([0.9], dtype=BF16),
         r"emaDecayTensorOptional has dtype ACL_BF16"),
        ("lr-two-elements", "lr", lambda g: torch.tensor([1e-3, 1e-3]),
         r"lrTensorOptional has shape \[2\] \(2 elements\), expected exactly one element"),
        ("decay-empty", "ema_decay", lambda g: torch.zeros(0),
         r"emaDecayTensorOptional has shape \[0\] \(0 elements\), expected exactly one element"),
        ("lr-aliases-a-var", "lr", lambda g: g.vars[1].view(-1)[:1],
         r"overlap in memory"),
        ("decay-aliases-an-ema", "ema_decay", lambda g: g.ss[7].view(-1)[2:3],
         r"overlap in memory"),
        ("lr-on-meta", "lr", lambda g: torch.tensor([1e-3], device="meta"),
         r"lr_tensor is on meta"),
    ]


@pytest.mark.parametrize("keyword,build,error", [c[1:] for c in _bad_scalar_cases()],
                         ids=[c[0] for c in _bad_scalar_cases()])
def test_bad_scalar_tensors_raise_and_touch_nothing(rng, keyword, build, error):
    g = make_group(rng, MIXED, param=F32, copy=F16, grad=F16, amsgrad=True)
    before = [t.clone() for t in tensors_of(g)]
    bad = build(g)
    with pytest.raises((RuntimeError, ValueError), match=error):
        call(g, Hyper(), Extras(), 3, ss=g.ss, **{keyword: bad})
    assert all(same_bits(t, b) for t, b in zip(tensors_of(g), before))


def test_mismatched_ema_list_is_still_refused(rng):
    """Only an EMPTY ss means "no EMA": a shorter one is a length error, as before."""
    g = make_group(rng, MIXED, param=F32)
    before = [t.clone() for t in tensors_of(g)]
    with pytest.raises(RuntimeError, match=r"ssRef has 2 tensors but grads has \d+"):
        call(g, Hyper(), Extras(), 3, ss=g.ss[:2])
    assert all(same_bits(t, b) for t, b in zip(tensors_of(g), before))


# ------------------------------------------------------------------------------------------
# torch integration


def test_schema_keywords():
    """The issue-12 keywords are keyword-only, optional, at the end; the rest is unchanged."""
    for op in (OP, FUNCTIONAL):
        args = op._schema.arguments
        assert [a.name for a in args[-2:]] == ["lr_tensor", "ema_decay_tensor"]
        assert all(a.kwarg_only and str(a.type) == "Optional[Tensor]" and a.default_value is None
                   for a in args[-2:])


def test_fake_kernels(rng):
    """The fakes accept the new arguments (an empty ss gives an empty ss output) and refuse a
    scalar tensor on another device."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    g = make_group(rng, SHAPES, amsgrad=True)
    with FakeTensorMode() as mode:
        fake = [[mode.from_tensor(t) for t in lst] for lst in (g.grads, g.vars, g.ms, g.vs)]
        step, lr = mode.from_tensor(g.step), mode.from_tensor(torch.tensor([1e-3]))
        out = FUNCTIONAL(*fake, [], step, 0.0, 0.9, 0.9, 0.999, 1e-8, 1, True, 0.0,
                         lr_tensor=lr, ema_decay_tensor=lr)
        assert [len(o) for o in out] == [len(SHAPES)] * 3 + [0, 0, 0]
        assert [t.shape for t in out[0]] == [t.shape for t in g.vars]
    meta = [[t.to("meta") for t in lst] for lst in (g.grads, g.vars, g.ms, g.vs)]
    with pytest.raises(RuntimeError, match="ema_decay_tensor is on cpu, step is on meta"):
        OP(*meta, [], g.step.to("meta"), 0.0, 0.9, 0.9, 0.999, 1e-8, 1, True, 0.0,
           lr_tensor=torch.tensor([1e-3], device="meta"), ema_decay_tensor=torch.tensor([0.9]))


def test_opcheck(rng):
    g = make_group(rng, SHAPES, param=F32, grad=BF16, copy=BF16, amsgrad=True)
    lr, decay = torch.tensor([1e-3]), torch.tensor([0.99])
    for ss in (g.ss, []):
        args = (g.grads, g.vars, g.ms, g.vs, ss, g.step, 0.0, 0.0, 0.9, 0.999, 1e-8, 1, True, 0.01)
        kwargs = dict(max_vs=g.max_vs, model_copies=g.copies, grad_scale=torch.tensor([2.0]),
                      lr_tensor=lr, ema_decay_tensor=decay)
        torch.library.opcheck(OP, args, kwargs)
        torch.library.opcheck(FUNCTIONAL, args, kwargs)


def test_functional_variant_without_ema(rng):
    g = make_group(rng, SHAPES, amsgrad=True)
    before = [t.clone() for t in tensors_of(g)]
    lr = torch.tensor([1e-2])
    out = FUNCTIONAL(g.grads, g.vars, g.ms, g.vs, [], g.step, 0.0, 0.9, 0.9, 0.999, 1e-8, 1, True,
                     0.01, max_vs=g.max_vs, lr_tensor=lr)
    assert all(same_bits(t, b) for t, b in zip(tensors_of(g), before))
    assert out[3] == []
    apply_fused_ema_adam_list(g.grads, g.vars, g.ms, g.vs, None, g.step, lr, 0.9,
                              weight_decay=0.01, max_vs=g.max_vs)
    for got, want in zip(out, (g.vars, g.ms, g.vs, [], g.max_vs)):
        assert len(got) == len(want) and all(same_bits(a, b) for a, b in zip(got, want))


def test_torch_compile_tensor_lr_and_decay_change_without_recompiling(rng):
    """torch.compile(fullgraph=True) of a step taking lr and the decay as tensors, with an EMA
    and an EMA-less variant: one compiled frame each however the tensors' values change, and
    the eager op's bits every call."""
    from torch._dynamo.testing import CompileCounterWithBackend
    torch._dynamo.reset()
    g = make_group(rng, SHAPES, param=BF16, state=F32, amsgrad=True)
    eager = clone_group(g)

    def update(grads, vars_, ms, vs, ss, max_vs, step, lr, decay):
        apply_fused_ema_adam_list(grads, vars_, ms, vs, ss, step, lr, decay, weight_decay=0.1,
                                  max_vs=max_vs)

    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(update, fullgraph=True, backend=counter)
    lr, decay = torch.tensor([1e-3]), torch.tensor([0.9])
    for step in range(1, 7):
        lr.fill_(float(rng.uniform(1e-4, 1e-2)))
        decay.fill_(float(rng.uniform(0.5, 0.999)))
        ss = (g.ss, eager.ss) if step % 2 else (None, None)
        g.step = eager.step = torch.tensor([step])
        compiled(g.grads, g.vars, g.ms, g.vs, ss[0], g.max_vs, g.step, lr, decay)
        update(eager.grads, eager.vars, eager.ms, eager.vs, ss[1], eager.max_vs, eager.step, lr,
               decay)
        for k in ("vars", "ms", "vs", "ss", "max_vs"):
            assert all(same_bits(a, b) for a, b in zip(getattr(g, k), getattr(eager, k))), k
    assert counter.frame_count == 2  # one graph with the EMA, one without; never per value
