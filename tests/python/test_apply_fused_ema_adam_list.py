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
from ascend_ema_adam._dtypes import FLOAT_DTYPES, by_name, by_torch, to_torch
from ascend_ema_adam.check import random_inputs
from ascend_ema_adam.ops import apply_fused_ema_adam_list

REPO = pathlib.Path(__file__).resolve().parents[2]
F32, F16, BF16 = (by_name(n).torch for n in ("float32", "float16", "bfloat16"))

#: The schema of issue 10, verbatim.
ISSUE_SCHEMA = (
    "ascend_ema_adam::apply_fused_ema_adam_list_(Tensor[] grads, Tensor(a!)[] vars, "
    "Tensor(b!)[] ms, Tensor(c!)[] vs, Tensor(d!)[] ss, Tensor step, float lr, float ema_decay, "
    "float beta1, float beta2, float eps, int adam_mode, bool bias_correction, "
    "float weight_decay, *, Tensor(e!)[]? max_vs=None, Tensor(f!)[]? model_copies=None, "
    "Tensor? grad_scale=None, Tensor? found_inf=None, bool maximize=False) -> ()")


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
    extra = {k: getattr(g, k) for k in ("grad_scale", "found_inf") if getattr(g, k, None) is not None}
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


def test_opdef_dtype_columns_are_the_contract():
    """The CANN op description has one dtype column per kernel key: exactly the combinations the
    contract accepts; max_vs has the state's dtype; a column without model copies names fp32
    there (a dtype no copy has), so every column is distinct."""
    (op,) = json.loads((REPO / "op_host/cann/apply_fused_ema_adam_list.json").read_text())
    types = {d["name"]: d["type"] for d in op["input_desc"]}
    outputs = {d["name"]: d["type"] for d in op["output_desc"]}
    json_names = {"float": "float32", "float16": "float16", "bfloat16": "bfloat16"}
    columns = set()
    for i in range(len(types["vars"])):
        p, s, g = (json_names[types[k][i]] for k in ("vars", "ms", "grads"))
        assert types["vs"][i] == types["ss"][i] == types["max_vs"][i] == types["ms"][i]
        c = json_names[types["model_copies"][i]]
        columns.add((p, s, g, None if c == "float32" else c))
        assert types["step"][i] == "int64"
        assert types["grad_scale"][i] == types["found_inf"][i] == "float"
    assert len(columns) == len(types["vars"]) == 13
    assert columns == _contract_combinations()
    assert all(outputs[k] == types[k] for k in outputs)
    assert {d["name"]: d["param_type"] for d in op["input_desc"]} == {
        "grads": "dynamic", "vars": "dynamic", "ms": "dynamic", "vs": "dynamic", "ss": "dynamic",
        "max_vs": "dynamic", "model_copies": "dynamic", "step": "required",
        "grad_scale": "optional", "found_inf": "optional"}
    assert [a["name"] for a in op["attr"]] == [
        "lr", "ema_decay", "beta1", "beta2", "eps", "mode", "bias_correction", "weight_decay",
        "maximize"]


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
     r"maxVsRefOptional has 2 tensors but grads has 3"),
    ("copies-of-fp16", lambda g: setattr(g, "copies", [torch.zeros(s, dtype=F32) for s in SHAPES])
     or g, r"modelCopiesRefOptional\[0\] has dtype ACL_FLOAT \(0\), expected ACL_FLOAT16 or "
           r"ACL_BF16"),
]


@pytest.mark.parametrize("build,error", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_input_raises_and_touches_nothing(rng, build, error):
    g = build(make_group(rng, SHAPES, amsgrad=True))
    before = [t.clone() for t in tensors_of(g)]
    with pytest.raises(RuntimeError, match=error) as info:
        run(g, lr=0.1)
    assert "aclnn status 161002" in str(info.value)
    assert "aclnnApplyFusedEmaAdamListGetWorkspaceSize: " in str(info.value)
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
