"""The torch op ascend_ema_adam::apply_fused_ema_adam_list_ (a whole parameter group per launch)
on CPU tensors: the schema and the CANN OpDef's dtype columns against the contract, bad inputs
(a clear error, every tensor untouched), devices, fakes."""

import json
import pathlib
import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import ascend_ema_adam
from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import FLOAT_DTYPES, by_name, to_numpy
from ascend_ema_adam.apps.check import random_inputs
from ascend_ema_adam.ops import apply_fused_ema_adam_list

REPO = pathlib.Path(__file__).resolve().parents[3]
F32, F16, BF16 = (by_name(n).torch for n in ("float32", "float16", "bfloat16"))

#: The schema of issue 10, verbatim, with issue 12's two keywords at the end (issue12_design).
ISSUE_SCHEMA = (
    "ascend_ema_adam::apply_fused_ema_adam_list_(Tensor[] grads, Tensor(a!)[] vars, "
    "Tensor(b!)[] ms, Tensor(c!)[] vs, Tensor(d!)[] ss, Tensor step, float lr, float ema_decay, "
    "float beta1, float beta2, float eps, int adam_mode, bool bias_correction, "
    "float weight_decay, *, Tensor(e!)[]? max_vs=None, Tensor(f!)[]? model_copies=None, "
    "Tensor? grad_scale=None, Tensor? found_inf=None, bool maximize=False, "
    "Tensor? lr_tensor=None, Tensor? ema_decay_tensor=None) -> ()")


def make_group(rng, shapes, param=F32, state=None, grad=None, copy=None, amsgrad=False):
    """A parameter group: per shape one entry of optimizer-like values in the given dtypes
    (state and grad default to the param dtype). Returns a namespace of lists."""
    state = state or param
    grad = grad or param
    g = SimpleNamespace(grads=[], vars=[], ms=[], vs=[], ss=[], max_vs=[] if amsgrad else None,
                        copies=[] if copy else None)
    for shape in shapes:
        gr, var, m, v, s = (torch.from_numpy(np.ascontiguousarray(x))
                            for x in random_inputs(rng, shape, np.float32))
        g.grads.append(gr.to(grad))
        g.vars.append(var.to(param))
        for name, t in (("ms", m), ("vs", v), ("ss", s)):
            getattr(g, name).append(t.to(state))
        if amsgrad:
            g.max_vs.append((v * 1.5).to(state))
        if copy:
            g.copies.append(torch.zeros(shape, dtype=copy))
    g.step = torch.tensor([3], dtype=torch.int64)
    return g


def tensors_of(g):
    """Every tensor of a group, for before/after comparisons."""
    out = g.grads + g.vars + g.ms + g.vs + g.ss + (g.max_vs or []) + (g.copies or []) + [g.step]
    return out + [t for t in (getattr(g, "grad_scale", None), getattr(g, "found_inf", None))
                  if t is not None]


def run(g, **kwargs):
    extra = {k: getattr(g, k) for k in ("grad_scale", "found_inf")
             if getattr(g, k, None) is not None}
    extra.update(kwargs)
    return apply_fused_ema_adam_list(g.grads, g.vars, g.ms, g.vs, g.ss, g.step,
                                     max_vs=g.max_vs, model_copies=g.copies, **extra)


def test_schema_is_the_issues():
    assert str(torch.ops.ascend_ema_adam.apply_fused_ema_adam_list_.default._schema) == ISSUE_SCHEMA


def test_package_exports():
    assert ascend_ema_adam.apply_fused_ema_adam_list is apply_fused_ema_adam_list
    assert "apply_fused_ema_adam_list" in ascend_ema_adam.__all__


def _contract_combinations():
    """Every (P, S, G, C) over the float dtypes (C also absent) the golden's contract accepts."""
    names = [d.name for d in FLOAT_DTYPES]
    accepted = set()
    one = np.zeros(1, np.float32)
    for p in names:
        for s in names:
            for g in names:
                for c in names + [None]:
                    arrays = [one.astype(by_name(n).numpy) for n in (g, p, s, s, s)]
                    copy = None if c is None else one.astype(by_name(c).numpy)
                    try:
                        golden.check_entry_dtypes(*arrays, copy=copy)
                    except TypeError:
                        continue
                    accepted.add((p, s, g, c))
    return accepted


def test_opdef_dtype_columns_cover_the_contract():
    """Every dtype combination the golden's contract accepts has its CANN kernel column: every
    list in its own dtype, an absent model_copies as its placeholders' (the parameters' dtype;
    an absent ss or max_vs keys as a given one, in the state's). That every launch finds one and
    every column is the OpDef's are op_host.test_apply_fused_ema_adam_list_opdef's and
    test_cann_op_json's."""
    (op,) = json.loads((REPO / "op_host/apply_fused_ema_adam_list/cann/apply_fused_ema_adam_list.json").read_text())
    types = {d["name"]: d["type"] for d in op["input_desc"]}
    outputs = {d["name"]: d["type"] for d in op["output_desc"]}
    json_names = {"float": "float32", "float16": "float16", "bfloat16": "bfloat16"}
    lists = ["grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"]
    columns = {(tuple(json_names[types[k][i]] for k in lists),
                tuple(json_names[outputs[k][i]] for k in lists[1:]))
               for i in range(len(types["vars"]))}
    combinations = _contract_combinations()
    assert len(combinations) == 13
    for p, s, g, c in combinations:
        inputs = (g, p, s, s, s, s, c or p)
        outs = (p, s, s, s, s, c or p)
        assert (inputs, outs) in columns, (p, s, g, c)
    for i in range(len(types["vars"])):
        assert types["step"][i] == "int64"
        assert types["grad_scale"][i] == types["found_inf"][i] == "float"
    assert {d["name"]: d["param_type"] for d in op["input_desc"]} == {
        "grads": "dynamic", "vars": "dynamic", "ms": "dynamic", "vs": "dynamic", "ss": "dynamic",
        "max_vs": "dynamic", "model_copies": "dynamic", "step": "required",
        "grad_scale": "optional", "found_inf": "optional"}


# ------------------------------------------------------------------------------------------
# Bad input: a clear exception naming the list and entry, every tensor byte-identical afterwards

SHAPES = [(3, 4), (5,), (2, 1, 3)]


def _alias(g):
    g.vs[2] = g.ms[2].view(-1).view(2, 1, 3)
    return g


def _cross_entry_overlap(g):
    base = torch.zeros(40)
    g.vars[0] = base[:12].view(3, 4)
    g.ss[1] = base[10:15]
    return g


BAD_CASES = [
    ("length", lambda g: setattr(g, "vars", g.vars[:2]) or g,
     r"varsRef has 2 tensors but grads has 3: every list holds one tensor per entry"),
    ("one-dtype-per-list", lambda g: g.ms.__setitem__(1, g.ms[1].half()) or g,
     r"msRef\[1\] has dtype ACL_FLOAT16 \(1\) but msRef\[0\] has ACL_FLOAT \(0\)"),
    ("fp16-state-of-fp32-params",
     lambda g: [setattr(g, k, [t.half() for t in getattr(g, k)]) for k in ("ms", "vs", "ss")] and g,
     r"msRef\[0\] has dtype ACL_FLOAT16 \(1\), expected varsRef's dtype ACL_FLOAT \(0\)"),
    ("fp64-params", lambda g: setattr(g, "vars", [t.double() for t in g.vars]) or g,
     r"varsRef\[0\] has dtype ACL_DOUBLE \(11\)"),
    ("shape", lambda g: g.ss.__setitem__(1, torch.zeros(6)) or g,
     r"ssRef\[1\] has shape \[6\] but grads\[1\] has shape \[5\]"),
    ("same-count-other-shape", lambda g: g.vars.__setitem__(0, g.vars[0].reshape(4, 3)) or g,
     r"varsRef\[0\] has shape \[4,3\] but grads\[0\] has shape \[3,4\]"),
    ("alias-in-one-entry", _alias, r"msRef\[2\] and vsRef\[2\] overlap in memory"),
    ("overlap-across-entries", _cross_entry_overlap, r"varsRef\[0\] and ssRef\[1\] overlap"),
    ("step-zero", lambda g: setattr(g, "step", torch.tensor([0])) or g,
     r"step is 0, expected step >= 1 when biasCorrection is true"),
    ("grad-scale-fp16", lambda g: setattr(g, "grad_scale", torch.tensor([2.0]).half()) or g,
     r"gradScaleOptional has dtype ACL_FLOAT16 \(1\), expected ACL_FLOAT"),
    ("found-inf-two", lambda g: setattr(g, "found_inf", torch.zeros(2)) or g,
     r"foundInfOptional has shape \[2\] \(2 elements\), expected exactly one element"),
    ("max-vs-short", lambda g: setattr(g, "max_vs", [torch.zeros(s) for s in SHAPES[:2]]) or g,
     r"maxVsRef has 2 tensors but grads has 3"),
    ("copies-of-fp16", lambda g: setattr(g, "copies", [torch.zeros(s, dtype=F32) for s in SHAPES])
     or g, r"modelCopiesRef\[0\] has dtype ACL_FLOAT \(0\), expected ACL_FLOAT16 or "
           r"ACL_BF16"),
]


@pytest.mark.parametrize("build,error", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_input_raises_and_touches_nothing(rng, build, error):
    g = build(make_group(rng, SHAPES, amsgrad=True))
    before = [t.clone() for t in tensors_of(g)]
    with pytest.raises(RuntimeError, match=error) as info:
        run(g, lr=0.1)
    assert "aclnn status 161002" in str(info.value)
    # the API the op calls (V2 since issue 12)
    assert "aclnnApplyFusedEmaAdamListV2GetWorkspaceSize: " in str(info.value)
    for t, b in zip(tensors_of(g), before):
        assert torch.equal(t, b)


def test_meta_tensor_among_cpu_tensors_is_refused(rng):
    """A meta tensor routes the whole call to the fake (Meta) kernel, which must refuse it rather
    than update nothing silently."""
    g = make_group(rng, SHAPES)
    g.ss[2] = torch.empty(2, 1, 3, device="meta")
    before = [t.clone() for t in tensors_of(g) if t.device.type == "cpu"]
    with pytest.raises(RuntimeError, match=re.escape("ss[2] is on meta, step is on cpu")):
        run(g)
    assert all(torch.equal(t, b) for t, b in
               zip([t for t in tensors_of(g) if t.device.type == "cpu"], before))


def test_fake_kernels_give_shapes_and_dtypes(rng):
    from torch._subclasses.fake_tensor import FakeTensorMode
    g = make_group(rng, SHAPES, param=F32, state=F32, grad=BF16, copy=BF16, amsgrad=True)
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake = lambda ts: [mode.from_tensor(t) for t in ts]  # noqa: E731
        out = torch.ops.ascend_ema_adam.apply_fused_ema_adam_list(
            fake(g.grads), fake(g.vars), fake(g.ms), fake(g.vs), fake(g.ss), g.step, 1e-3, 0.99,
            0.9, 0.999, 1e-8, 1, True, 0.0, max_vs=fake(g.max_vs), model_copies=fake(g.copies))
    for got, want in zip(out, (g.vars, g.ms, g.vs, g.ss, g.max_vs, g.copies)):
        assert [(t.shape, t.dtype) for t in got] == [(t.shape, t.dtype) for t in want]


# ------------------------------------------------------------------------------------------
# Results: the golden, the single op, per-entry launches

COMBOS = [(F32, F32, F32, None), (F32, F32, F16, F16), (F32, F32, F32, F16),
          (F32, F32, BF16, BF16), (F32, F32, F32, BF16), (F16, F16, F16, None),
          (F16, F16, F32, None), (F16, F32, F16, None), (F16, F32, F32, None),
          (BF16, BF16, BF16, None), (BF16, BF16, F32, None), (BF16, F32, BF16, None),
          (BF16, F32, F32, None)]
COMBO_IDS = ["-".join(str(d).removeprefix("torch.") for d in c if d is not None) for c in COMBOS]
MIXED = [(0,), (1,), (7,), (16,), (33,), (3, 5), (2, 0, 4), (1000,)]
HYPER = golden.Hyper(lr=0.01, ema_decay=0.99, weight_decay=0.05, mode=1)


def numpy_of(tensors):
    return None if tensors is None else [to_numpy(t) for t in tensors]


def golden_after(g, step, hyper, extras):
    """Per updated list, the golden's new arrays (None for an absent list)."""
    before = {k: numpy_of(getattr(g, k)) for k in ("grads", "vars", "ms", "vs", "ss", "max_vs",
                                                    "copies")}
    out = {k: [] for k in ("vars", "ms", "vs", "ss", "max_vs", "copies")}
    for i in range(len(g.vars)):
        got = golden.emulate_entry(
            *(before[k][i] for k in ("grads", "vars", "ms", "vs", "ss")), np.array([step]), hyper,
            extras, max_v=None if g.max_vs is None else before["max_vs"][i],
            copy=None if g.copies is None else before["copies"][i])
        for k, value in zip(out, got.astuple()):
            out[k].append(value)
    return out


def assert_golden(g, expected):
    for k, arrays in expected.items():
        tensors = getattr(g, k)
        if tensors is None:
            continue
        for i, (t, e) in enumerate(zip(tensors, arrays)):
            assert golden.bit_equal(to_numpy(t), e), f"{k}[{i}] differs from the golden"


def call_with(g, hyper, extras, step=3):
    g.step = torch.tensor([step])
    scale = None if extras.grad_scale is None else torch.tensor([extras.grad_scale])
    found = None if extras.found_inf is None else torch.tensor([extras.found_inf])
    apply_fused_ema_adam_list(g.grads, g.vars, g.ms, g.vs, g.ss, g.step, hyper.lr,
                              hyper.ema_decay, hyper.beta1, hyper.beta2, hyper.eps, hyper.mode,
                              hyper.bias_correction, hyper.weight_decay, max_vs=g.max_vs,
                              model_copies=g.copies, grad_scale=scale, found_inf=found,
                              maximize=extras.maximize)


@pytest.mark.parametrize("amsgrad", [False, True], ids=["adam", "amsgrad"])
@pytest.mark.parametrize("combo", COMBOS, ids=COMBO_IDS)
def test_every_combination_matches_golden_and_per_entry_launches(rng, combo, amsgrad):
    """Every dtype combination, with and without AMSGrad, maximize and a grad scale: one launch
    over mixed sizes equals the golden, and launches of one entry each, bit for bit."""
    p, s, gr, c = combo
    extras = golden.Extras(maximize=amsgrad, grad_scale=8.0 if amsgrad else None)
    g = make_group(rng, MIXED, param=p, state=s, grad=gr, copy=c, amsgrad=amsgrad)
    single = SimpleNamespace(**{k: ([t.clone() for t in v] if isinstance(v, list) else v)
                                for k, v in vars(g).items()})
    expected = golden_after(g, 3, HYPER, extras)
    call_with(g, HYPER, extras)
    assert_golden(g, expected)
    for i in range(len(MIXED)):
        one = SimpleNamespace(**{k: (v[i:i + 1] if isinstance(v, list) else v)
                                 for k, v in vars(single).items()})
        call_with(one, HYPER, extras)
    for k in ("vars", "ms", "vs", "ss", "max_vs", "copies"):
        for a, b in zip(getattr(g, k) or [], getattr(single, k) or []):
            assert torch.equal(a.view(torch.uint8) if a.numel() else a,
                               b.view(torch.uint8) if b.numel() else b), k


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=["fp32", "fp16", "bf16"])
def test_list_equals_single_op_on_large_and_tail_sizes(rng, dtype):
    """The list op and the single op, entry by entry, over sizes past 2^20, odd tails and
    empty tensors, with several steps: the same bits."""
    shapes = [((1 << 20) + 5,), (0,), (1,), (31,), (4097,), (130, 17)]
    g = make_group(rng, shapes, param=dtype)
    ref = SimpleNamespace(**{k: ([t.clone() for t in v] if isinstance(v, list) else v)
                             for k, v in vars(g).items()})
    for step in (1, 2, 3):
        g.step = torch.tensor([step])
        run(g, lr=0.01, ema_decay=0.99, weight_decay=0.1)
        for i in range(len(shapes)):
            ascend_ema_adam.npu_apply_fused_ema_adamw(
                ref.grads[i], ref.vars[i], ref.ms[i], ref.vs[i], ref.ss[i], g.step, 0.01, 0.99,
                weight_decay=0.1)
        for k in ("vars", "ms", "vs", "ss"):
            assert all(torch.equal(a, b) for a, b in zip(getattr(g, k), getattr(ref, k))), k


def test_found_inf_set_writes_nothing(rng):
    g = make_group(rng, MIXED, param=F32, grad=BF16, copy=BF16, amsgrad=True)
    g.vars[5] = torch.randn(7, 9)[::3, 1:6]  # entry 5 ([3, 5]) a strided view of a larger tensor
    base = g.vars[5]._base.clone()
    before = [t.clone() for t in tensors_of(g)]
    for flag in (1.0, float("nan"), float("inf")):
        g.found_inf = torch.tensor([flag])
        run(g, lr=0.1)
        assert all(torch.equal(t, b) for t, b in zip(tensors_of(g)[:-1], before))
        assert torch.equal(g.vars[5]._base, base)
    g.found_inf = torch.tensor([0.0])  # zero: the update runs
    run(g, lr=0.1)
    assert not torch.equal(g.vars[7], before[len(g.grads) + 7])


def test_strided_views_update_in_place(rng):
    """Non-contiguous entries (transposed, sliced, offset) are updated like contiguous copies;
    the rest of each base tensor is untouched."""
    g = make_group(rng, [(4, 6), (5, 3), (10,)])
    ref = SimpleNamespace(**{k: ([t.clone() for t in v] if isinstance(v, list) else v)
                             for k, v in vars(g).items()})
    bases = []
    for k in ("grads", "vars", "ms", "vs", "ss"):
        lst = getattr(g, k)
        t_base = torch.randn(6, 4).abs()
        t_base.t()[...] = lst[0]
        s_base = torch.randn(10, 7).abs()
        s_base[::2, 2:5] = lst[1]
        o_base = torch.randn(30).abs()
        o_base[7:17] = lst[2]
        lst[:] = [t_base.t(), s_base[::2, 2:5], o_base[7:17]]
        bases.append([(b.clone(), b, v) for b, v in ((t_base, lst[0]), (s_base, lst[1]),
                                                     (o_base, lst[2]))])
    run(g, lr=0.05, weight_decay=0.1)
    run(ref, lr=0.05, weight_decay=0.1)
    for k in ("vars", "ms", "vs", "ss"):
        assert all(torch.equal(a, b) for a, b in zip(getattr(g, k), getattr(ref, k))), k
    for entries in bases:
        for before, base, view in entries:
            mask = torch.ones_like(base, dtype=torch.bool)
            view_mask = mask.as_strided(view.shape, view.stride(),
                                        view.storage_offset())
            view_mask.fill_(False)
            assert torch.equal(base[mask], before[mask])


# ------------------------------------------------------------------------------------------
# torch integration: autograd, opcheck, torch.compile

def test_in_place_rules_and_version_counters(rng):
    g = make_group(rng, SHAPES, amsgrad=True)
    leaf = torch.nn.Parameter(g.vars[0].clone())
    g.vars[0] = leaf
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        run(g)
    versions = [t._version for t in g.vars + g.ms + g.vs + g.ss + g.max_vs]
    grad_versions = [t._version for t in g.grads]
    with torch.no_grad():
        run(g)
    assert [t._version for t in g.vars + g.ms + g.vs + g.ss + g.max_vs] == [v + 1 for v in versions]
    assert [t._version for t in g.grads] == grad_versions


def _opcheck_args(g, **extra):
    args = (g.grads, g.vars, g.ms, g.vs, g.ss, g.step, 1e-3, 0.99, 0.9, 0.999, 1e-8, 1, True,
            0.01)
    return args, dict(max_vs=g.max_vs, model_copies=g.copies, **extra)


def test_opcheck_inplace(rng):
    g = make_group(rng, SHAPES, param=F32, grad=BF16, copy=BF16, amsgrad=True)
    args, kwargs = _opcheck_args(g, grad_scale=torch.tensor([2.0]), found_inf=torch.tensor([0.0]),
                                 maximize=True)
    torch.library.opcheck(torch.ops.ascend_ema_adam.apply_fused_ema_adam_list_.default, args,
                          kwargs)


def test_opcheck_functional(rng):
    g = make_group(rng, SHAPES, param=BF16, state=F32)
    args, kwargs = _opcheck_args(g)
    torch.library.opcheck(torch.ops.ascend_ema_adam.apply_fused_ema_adam_list.default, args,
                          kwargs)


def test_functional_variant_leaves_inputs(rng):
    g = make_group(rng, SHAPES, amsgrad=True)
    before = [t.clone() for t in tensors_of(g)]
    out = torch.ops.ascend_ema_adam.apply_fused_ema_adam_list(*_opcheck_args(g)[0],
                                                              max_vs=g.max_vs)
    assert all(torch.equal(t, b) for t, b in zip(tensors_of(g), before))
    run(g, lr=1e-3, ema_decay=0.99, weight_decay=0.01)
    for got, want in zip(out, (g.vars, g.ms, g.vs, g.ss, g.max_vs, [])):
        assert len(got) == len(want) and all(torch.equal(a, b) for a, b in zip(got, want))


def test_torch_compile_fullgraph_matches_eager(rng):
    g = make_group(rng, SHAPES, param=F16, state=F32, grad=F32, amsgrad=True)
    eager = SimpleNamespace(**{k: ([t.clone() for t in v] if isinstance(v, list) else v)
                               for k, v in vars(g).items()})

    def update(grads, vars_, ms, vs, ss, max_vs, step, scale):
        apply_fused_ema_adam_list(grads, vars_, ms, vs, ss, step, 0.01, 0.99, weight_decay=0.1,
                                  max_vs=max_vs, grad_scale=scale, maximize=True)

    compiled = torch.compile(update, fullgraph=True)
    scale = torch.tensor([4.0])
    for step in (1, 2):
        g.step = eager.step = torch.tensor([step])
        compiled(g.grads, g.vars, g.ms, g.vs, g.ss, g.max_vs, g.step, scale)
        update(eager.grads, eager.vars, eager.ms, eager.vs, eager.ss, eager.max_vs, eager.step,
               scale)
    for k in ("vars", "ms", "vs", "ss", "max_vs"):
        assert all(torch.equal(a, b) for a, b in zip(getattr(g, k), getattr(eager, k))), k


# ------------------------------------------------------------------------------------------
# More than 256 entries: launches of at most 256 (CANN's limit per dynamic list), the whole call
# validated before the first one

MANY = 600  # three launches: 256, 256, 88


def _many_shapes(rng, n=MANY):
    return [tuple(int(d) for d in rng.integers(1, 9, size=int(rng.integers(1, 3))))
            for _ in range(n)]


@pytest.mark.parametrize("combo", [COMBOS[0], COMBOS[3], COMBOS[6]],
                         ids=[COMBO_IDS[0], COMBO_IDS[3], COMBO_IDS[6]])
def test_many_entries_equal_golden_and_per_entry_launches(rng, combo):
    """600 entries in one call: bit for bit the golden and launches of one entry each, with and
    without AMSGrad and the EMA (an empty ss)."""
    p, s, gr, c = combo
    for amsgrad, ema in ((True, True), (False, False)):
        extras = golden.Extras(maximize=False, grad_scale=4.0)
        g = make_group(rng, _many_shapes(rng), param=p, state=s, grad=gr, copy=c,
                       amsgrad=amsgrad)
        if not ema:
            g.ss = []
        single = SimpleNamespace(**{k: ([t.clone() for t in v] if isinstance(v, list) else v)
                                    for k, v in vars(g).items()})
        call_with(g, HYPER, extras)
        for i in range(MANY):
            one = SimpleNamespace(**{k: (v[i:i + 1] if isinstance(v, list) and v else v)
                                     for k, v in vars(single).items()})
            call_with(one, HYPER, extras)
        for k in ("vars", "ms", "vs", "ss", "max_vs", "copies"):
            for a, b in zip(getattr(g, k) or [], getattr(single, k) or []):
                assert torch.equal(a, b), k


def test_many_entries_match_the_golden(rng):
    """700 entries (three launches) of bf16 parameters with fp32 state, AMSGrad, maximize and a
    grad scale: every entry the golden's, bit for bit."""
    g = make_group(rng, _many_shapes(rng, 700), param=BF16, state=F32, grad=BF16, amsgrad=True)
    extras = golden.Extras(maximize=True, grad_scale=2.0)
    expected = golden_after(g, 3, HYPER, extras)
    call_with(g, HYPER, extras)
    assert_golden(g, expected)


LATE_BAD = [
    ("dtype-at-entry-500", lambda g: g.ms.__setitem__(500, g.ms[500].half()),
     r"msRef\[500\] has dtype ACL_FLOAT16 \(1\) but msRef\[0\] has ACL_FLOAT \(0\)"),
    ("shape-at-entry-599", lambda g: g.vs.__setitem__(599, torch.zeros(g.vs[599].numel() + 1)),
     r"vsRef\[599\] has shape"),
    ("same-param-in-two-launches", lambda g: g.vars.__setitem__(400, g.vars[3]),
     r"varsRef\[3\] and varsRef\[400\] overlap in memory"),
    ("grad-aliasing-a-state-of-another-launch", lambda g: g.grads.__setitem__(10, g.ms[300]),
     r"msRef\[300\] and grads\[10\] overlap in memory"),
    ("broadcast-moment-in-last-launch",
     lambda g: g.ms.__setitem__(590, torch.zeros(1).expand(g.ms[590].shape)),
     r"msRef\[590\] \(shape \[.*\], stride \[0.*\]\) addresses some elements more than once"),
]


@pytest.mark.parametrize("build,error", [c[1:] for c in LATE_BAD], ids=[c[0] for c in LATE_BAD])
def test_bad_entry_in_a_later_launch_changes_nothing(rng, build, error):
    """A defect in any launch is found before the first one runs: nothing is written, and the
    message names the entry by its index in the call."""
    shapes = _many_shapes(rng)
    shapes[3] = shapes[400] = (4, 3)  # the aliasing cases need equal shapes
    shapes[10] = shapes[300] = (5,)
    shapes[590] = (3, 2)  # a broadcast repeats its element only in a tensor of more than one
    g = make_group(rng, shapes, amsgrad=True)
    build(g)
    before = [t.clone() for t in tensors_of(g)]
    with pytest.raises(RuntimeError, match=error):
        run(g, lr=0.1)
    for t, b in zip(tensors_of(g), before):
        assert torch.equal(t, b)
