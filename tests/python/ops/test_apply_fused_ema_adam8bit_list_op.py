"""The torch op of ApplyFusedEmaAdam8bitList (torch.ops.ascend_ema_adam.apply_fused_ema_adam8bit_list_
and its functional variant; ops.apply_fused_ema_adam8bit_list) on the CPU device, through our aclnn
API: bit-exact to golden8bit.emulate_entry8 on every dtype row with both CPU kernels, every option,
EMA on and off, lr / EMA decay as tensors, more than 256 entries, strided views; bad calls refused
with nothing written; the fakes, opcheck and torch.compile; the OpDef description's dtype columns
are the contract's."""

import json
import pathlib

import numpy as np
import pytest
import torch

from adam8bit_cases import OPTIONS, QMAP_M, QMAP_V, ROW_IDS, make_entries
from ascend_ema_adam import _kernels, golden, golden8bit as g8
from ascend_ema_adam._dtypes import LIST8BIT_DTYPES, to_numpy, to_torch
from ascend_ema_adam.golden import Extras, Hyper
from ascend_ema_adam.ops import apply_fused_ema_adam8bit_list

ROOT = pathlib.Path(__file__).resolve().parents[3]
OP = torch.ops.ascend_ema_adam.apply_fused_ema_adam8bit_list_.default
FUNCTIONAL = torch.ops.ascend_ema_adam.apply_fused_ema_adam8bit_list.default
SIZES = [1, 17, 256, 257, 1000, 4 * 256 + 33]
LISTS = ("grads", "vars", "ms", "vs", "m_absmaxes", "v_absmaxes", "ss", "model_copies")
#: The golden entry's keys (adam8bit_cases.make_entries) per list.
KEYS = dict(zip(LISTS, ("grad", "var", "m", "v", "m_absmax", "v_absmax", "s", "copy")))


@pytest.fixture(params=["native", "twin"])
def cpu_kernel(request, monkeypatch):
    """Both CPU kernels, chosen at each phase 1 from the environment."""
    monkeypatch.setenv("ASCEND_EMA_ADAM_CPU_KERNEL", request.param)
    return request.param


def group(rng, row=LIST8BIT_DTYPES[0], sizes=SIZES, ema=True):
    """Fresh random entries as torch lists (None for an absent list), and the numpy originals."""
    entries = make_entries(rng, sizes, row, ema)
    lists = {name: [to_torch(e[KEYS[name]]) for e in entries]
             if entries and entries[0][KEYS[name]] is not None else None for name in LISTS}
    return lists, entries


def qmaps():
    return torch.from_numpy(QMAP_M.copy()), torch.from_numpy(QMAP_V.copy())


def run(lists, step, h=Hyper(), extras=Extras(), *, lr=None, ema_decay=None, maps=None):
    """The op through ops.apply_fused_ema_adam8bit_list; lr / ema_decay given as tensors when set."""
    qm, qv = maps if maps is not None else qmaps()
    scalar = (lambda x: None if x is None else torch.tensor([x], dtype=torch.float32))
    return apply_fused_ema_adam8bit_list(
        lists["grads"], lists["vars"], lists["ms"], lists["vs"], lists["m_absmaxes"],
        lists["v_absmaxes"], lists["ss"], qm, qv, torch.tensor([step]),
        scalar(lr) if lr is not None else h.lr,
        scalar(ema_decay) if ema_decay is not None else h.ema_decay, h.beta1, h.beta2, h.eps,
        h.mode, h.bias_correction, h.weight_decay, model_copies=lists["model_copies"],
        grad_scale=scalar(extras.grad_scale), found_inf=scalar(extras.found_inf),
        maximize=extras.maximize)


def expect_golden(lists, entries, step, h=Hyper(), extras=Extras()):
    """Every updated tensor bit-equal to golden8bit.emulate_entry8 on the entries' old values."""
    for i, e in enumerate(entries):
        want = g8.emulate_entry8(e["grad"], e["var"], e["m"], e["v"], e["m_absmax"],
                                 e["v_absmax"], e["s"], np.array([step]), QMAP_M, QMAP_V, h,
                                 extras, copy=e["copy"])
        for name, key in (("vars", "var"), ("ms", "m"), ("vs", "v"), ("m_absmaxes", "m_absmax"),
                          ("v_absmaxes", "v_absmax"), ("ss", "s"), ("model_copies", "copy")):
            if lists[name] is None:
                continue
            got, expected = to_numpy(lists[name][i]), getattr(want, key)
            ok = (np.array_equal(got, expected) if got.dtype == np.uint8
                  else golden.bit_equal(got, expected))
            assert ok and got.dtype == expected.dtype, f"entry {i} ({e['var'].size}): {name}"


# ------------------------------------------------------------------------------------------
# results: bit-exact to the golden

@pytest.mark.parametrize("row", LIST8BIT_DTYPES, ids=ROW_IDS)
def test_every_row_matches_the_golden(rng, cpu_kernel, row):
    lists, entries = group(rng, row)
    run(lists, 3, Hyper(weight_decay=0.01))
    expect_golden(lists, entries, 3, Hyper(weight_decay=0.01))


@pytest.mark.parametrize("ema", [True, False], ids=["ema", "no-ema"])
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_options_match_the_golden(rng, option, ema):
    h, extras, tensors = OPTIONS[option]
    row = LIST8BIT_DTYPES[int(rng.integers(len(LIST8BIT_DTYPES)))]
    lists, entries = group(rng, row, ema=ema)
    snapshot = {k: None if v is None else [t.clone() for t in v] for k, v in lists.items()}
    run(lists, 7, h, extras, **tensors)
    want_h = Hyper(**{**h.__dict__, **{k: float(np.float32(v)) for k, v in tensors.items()}})
    expect_golden(lists, entries, 7, want_h, extras)
    if not ema:
        assert lists["ss"] is None and snapshot["ss"] is None


@pytest.mark.parametrize("found_inf", [1.0, float("nan"), float("inf")])
def test_found_inf_writes_nothing(rng, found_inf):
    lists, _ = group(rng, LIST8BIT_DTYPES[4])
    before = {k: [t.clone() for t in v] for k, v in lists.items() if v is not None}
    run(lists, 2, extras=Extras(grad_scale=64.0, found_inf=found_inf))
    for k, tensors in before.items():
        assert all(torch.equal(a, b) for a, b in zip(lists[k], tensors)), k


def test_trajectory_with_and_without_the_ema(rng):
    """Five steps, the EMA on odd steps only (ema_every = 2), against the golden step by step."""
    lists, entries = group(rng, LIST8BIT_DTYPES[1], sizes=[300, 5, 1025])
    h = Hyper(lr=1e-2, weight_decay=0.05)
    for step in range(1, 6):
        ema = step % 2 == 1
        current = [{k: to_numpy(lists[n][i]) if lists[n] is not None else None
                    for n, k in KEYS.items()} for i in range(len(entries))]
        view = dict(lists, ss=lists["ss"] if ema else None)
        for e in current:
            e["s"] = e["s"] if ema else None
        run(view, step, h)
        expect_golden(view, current, step, h)


def test_many_entries_run_as_launches_of_256(rng):
    """600 entries: three launches (256, 256, 88), bit-equal to the golden."""
    sizes = [int(n) for n in rng.integers(1, 300, size=600)]
    lists, entries = group(rng, LIST8BIT_DTYPES[3], sizes=sizes)
    run(lists, 4)
    expect_golden(lists, entries, 4)


def test_strided_views_update_in_place(rng):
    """Transposed parameters, codes and EMA (one shared layout per entry), a strided map: the
    contiguous run's bits, and nothing outside the views written."""
    lists, entries = group(rng, LIST8BIT_DTYPES[0], sizes=[600, 5 * 7])
    shapes = [(20, 30), (5, 7)]
    contiguous = {k: [t.clone() for t in v] for k, v in lists.items() if v is not None}
    contiguous.update(ss=contiguous["ss"], model_copies=None)
    views = {}
    for name in ("grads", "vars", "ms", "vs", "ss"):
        views[name] = [t.reshape(s[::-1]).t().contiguous().t() for t, s in zip(lists[name],
                                                                            shapes)]
        views[name] = [v.copy_(t.reshape(v.shape)) for v, t in zip(views[name], lists[name])]
    views.update(m_absmaxes=lists["m_absmaxes"], v_absmaxes=lists["v_absmaxes"],
                 model_copies=None)
    storage = torch.full((512 + 3,), 5.0)
    qm = storage[3::2]
    qm.copy_(torch.from_numpy(QMAP_M))
    run(contiguous, 2)
    run(views, 2, maps=(qm, torch.from_numpy(QMAP_V.copy())))
    for name in ("vars", "ms", "vs", "ss"):
        for v, c in zip(views[name], contiguous[name]):
            assert not v.is_contiguous()
            assert torch.equal(v.reshape(-1), c), name
    for name in ("m_absmaxes", "v_absmaxes"):
        assert all(torch.equal(a, b) for a, b in zip(views[name], contiguous[name])), name
    assert torch.equal(storage[::2][:1], torch.tensor([5.0]))  # a gap of the map, never written
    expect_golden(contiguous, entries, 2)


# ------------------------------------------------------------------------------------------
# bad calls: a clear error, nothing written

def _float_codes(lists):
    lists["ms"] = [t.float() for t in lists["ms"]]


def _mixed_codes(lists):
    lists["ms"][1] = lists["ms"][1].half()


def _short_scales(lists):
    lists["v_absmaxes"][2] = lists["v_absmaxes"][2][:-1]


def _unsorted_map(lists):
    lists["qmap_v"][9] = 0.75


def _nan_map(lists):
    lists["qmap_m"][0] = float("nan")


def _overlap(lists):
    lists["vs"][3] = lists["ms"][3]


def _amsgrad_list(lists):
    lists["extra"] = dict(max_vs=[t.float() for t in lists["vs"]])


def _fp16_masters(lists):
    lists["vars"] = [t.half() for t in lists["vars"]]
    lists["model_copies"] = [t.clone() for t in lists["vars"]]


def _step_zero(lists):
    lists["step"] = torch.tensor([0])


def _meta_map(lists):
    lists["qmap_m"] = lists["qmap_m"].to("meta")


def _bad_entry_in_a_later_launch(lists):
    for name in LISTS[:7]:  # 600 entries (three launches), each its own memory
        lists[name] = [t.clone() for t in lists[name] for _ in range(150)]
    lists["m_absmaxes"][500] = torch.zeros(7)


@pytest.mark.parametrize("build, error", [
    (_float_codes, r"msRef\[0\] has dtype ACL_FLOAT \(0\), expected ACL_UINT8 \(4\)"),
    (_mixed_codes, r"msRef\[1\] has dtype ACL_FLOAT16 \(1\) but msRef\[0\] has ACL_UINT8"),
    (_short_scales, r"vAbsmaxesRef\[2\] has shape \[\d+\], expected \[\d+\]"),
    (_unsorted_map, r"qmapV\[10\] is .*below qmapV\[9\]"),
    (_nan_map, r"qmapM\[0\] is nan"),
    (_overlap, r"msRef\[3\] and vsRef\[3\] overlap"),
    (_amsgrad_list, r"max_vs"),
    (_fp16_masters, r"modelCopiesRef needs fp32 varsRef"),
    (_step_zero, r"step"),
    (_meta_map, r"qmap_m is on meta"),
    (_bad_entry_in_a_later_launch, r"mAbsmaxesRef\[500\] has shape \[7\]"),
])
def test_bad_call_raises_and_touches_nothing(rng, build, error):
    lists, _ = group(rng, LIST8BIT_DTYPES[0], sizes=[3, 300, 17, 256])
    qm, qv = qmaps()
    lists.update(qmap_m=qm, qmap_v=qv, step=torch.tensor([1]), extra={})
    build(lists)
    everything = [t for name in LISTS if lists[name] is not None for t in lists[name]]
    everything += [t for t in (lists["qmap_m"], lists["qmap_v"]) if t.device.type == "cpu"]
    before = [t.clone() for t in everything]
    with pytest.raises((RuntimeError, TypeError), match=error):
        OP(lists["grads"], lists["vars"], lists["ms"], lists["vs"], lists["m_absmaxes"],
           lists["v_absmaxes"], lists["ss"], lists["qmap_m"], lists["qmap_v"], lists["step"],
           1e-3, 0.999, 0.9, 0.999, 1e-8, 1, True, 0.0, model_copies=lists["model_copies"],
           **lists["extra"])
    assert all(torch.equal(_bytes(a), _bytes(b)) for a, b in zip(everything, before))


def _bytes(t):
    return t.contiguous().view(torch.uint8)


# ------------------------------------------------------------------------------------------
# torch integration: in-place rules, functional variant, fakes, opcheck, torch.compile

def _args(lists, step=1):
    qm, qv = qmaps()
    return ((lists["grads"], lists["vars"], lists["ms"], lists["vs"], lists["m_absmaxes"],
             lists["v_absmaxes"], lists["ss"] if lists["ss"] is not None else [], qm, qv,
             torch.tensor([step]), 1e-3, 0.99, 0.9, 0.999, 1e-8, 1, True, 0.01),
            dict(model_copies=lists["model_copies"]))


def test_in_place_rules_and_version_counters(rng):
    lists, _ = group(rng, sizes=[10, 300])
    lists["vars"][0] = torch.nn.Parameter(lists["vars"][0].clone())
    args, kwargs = _args(lists)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        OP(*args, **kwargs)
    written = [t for name in LISTS[1:7] for t in lists[name]]
    versions = [t._version for t in written]
    with torch.no_grad():
        OP(*args, **kwargs)
    assert [t._version for t in written] == [v + 1 for v in versions]


def test_functional_variant_leaves_inputs(rng):
    lists, _ = group(rng, LIST8BIT_DTYPES[5], sizes=[10, 300])
    args, kwargs = _args(lists)
    before = [t.clone() for name in LISTS for t in lists[name]]
    out = FUNCTIONAL(*args, **kwargs)
    assert all(torch.equal(a, b) for a, b in zip([t for n in LISTS for t in lists[n]], before))
    OP(*args, **kwargs)
    for got, name in zip(out, LISTS[1:]):
        assert len(got) == len(lists[name])
        assert all(torch.equal(a, b) for a, b in zip(got, lists[name])), name


def test_fake_kernels_give_shapes_and_dtypes(rng):
    from torch._subclasses.fake_tensor import FakeTensorMode
    lists, _ = group(rng, LIST8BIT_DTYPES[4], sizes=[10, 300])
    args, kwargs = _args(lists)
    with FakeTensorMode(allow_non_fake_inputs=True):
        out = FUNCTIONAL(*args, **kwargs)
    for got, name in zip(out, LISTS[1:]):
        assert [(t.shape, t.dtype) for t in got] == [(t.shape, t.dtype) for t in lists[name]]


def test_opcheck(rng):
    lists, _ = group(rng, LIST8BIT_DTYPES[7], sizes=[10, 300])
    args, kwargs = _args(lists)
    kwargs.update(grad_scale=torch.tensor([2.0]), found_inf=torch.tensor([0.0]), maximize=True,
                  lr_tensor=torch.tensor([1e-3]), ema_decay_tensor=torch.tensor([0.9]))
    torch.library.opcheck(OP, args, kwargs)
    torch.library.opcheck(FUNCTIONAL, args, kwargs)


def test_torch_compile_fullgraph_matches_eager(rng):
    """torch.compile(fullgraph=True) of a step with the EMA and lr / decay tensors, and one
    without the EMA: the eager op's bits every call, one graph each however the values change."""
    from torch._dynamo.testing import CompileCounterWithBackend
    torch._dynamo.reset()
    lists, _ = group(rng, LIST8BIT_DTYPES[2], sizes=[10, 300])
    eager = {k: [t.clone() for t in v] if v is not None else None for k, v in lists.items()}
    qm, qv = qmaps()

    def update(g, step, lr, decay, ema):
        apply_fused_ema_adam8bit_list(g["grads"], g["vars"], g["ms"], g["vs"], g["m_absmaxes"],
                                      g["v_absmaxes"], g["ss"] if ema else None, qm, qv, step,
                                      lr, decay, weight_decay=0.1, maximize=True)

    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(update, fullgraph=True, backend=counter)
    lr, decay = torch.tensor([1e-3]), torch.tensor([0.9])
    for step in range(1, 6):
        lr.fill_(float(rng.uniform(1e-4, 1e-2)))
        decay.fill_(float(rng.uniform(0.5, 0.999)))
        compiled(lists, torch.tensor([step]), lr, decay, step % 2 == 1)
        update(eager, torch.tensor([step]), lr, decay, step % 2 == 1)
        for k in LISTS[1:7]:
            assert all(torch.equal(a, b) for a, b in zip(lists[k], eager[k])), k
    assert counter.frame_count == 2


# ------------------------------------------------------------------------------------------
# the registration

def test_schema():
    assert str(OP._schema) == (
        "ascend_ema_adam::apply_fused_ema_adam8bit_list_(Tensor[] grads, Tensor(a!)[] vars, "
        "Tensor(b!)[] ms, Tensor(c!)[] vs, Tensor(d!)[] m_absmaxes, Tensor(e!)[] v_absmaxes, "
        "Tensor(f!)[] ss, Tensor qmap_m, Tensor qmap_v, Tensor step, float lr, float ema_decay, "
        "float beta1, float beta2, float eps, int adam_mode, bool bias_correction, "
        "float weight_decay, *, Tensor(g!)[]? model_copies=None, Tensor? grad_scale=None, "
        "Tensor? found_inf=None, bool maximize=False, Tensor? lr_tensor=None, "
        "Tensor? ema_decay_tensor=None) -> ()")


def test_opdef_dtype_columns_are_the_contract():
    """The OpDef description's dtype columns (op_host/<op>/cann/<op>.json, which op_build holds
    the OpDef to) are the contract's rows in tiling-key order, an absent model_copies keyed by the
    parameters' dtype (its placeholders')."""
    path = ROOT / "op_host" / "apply_fused_ema_adam8bit_list" / "cann" / "apply_fused_ema_adam8bit_list.json"
    (desc,) = json.loads(path.read_text())
    cann = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16"}
    columns = {p["name"]: p["type"] for p in desc["input_desc"]}
    rows = _kernels.adam8bit_dtype_contract()
    assert columns["grads"] == [cann[g] for _, g, _, _ in rows]
    assert columns["vars"] == [cann[p] for p, _, _, _ in rows]
    assert columns["model_copies"] == [cann[c or p] for p, _, c, _ in rows]
    for name in ("ms", "vs"):
        assert columns[name] == ["uint8"] * len(rows)
    for name in ("m_absmaxes", "v_absmaxes", "ss", "qmap_m", "qmap_v", "grad_scale", "found_inf",
                 "lr_tensor", "ema_decay_tensor"):
        assert columns[name] == ["float"] * len(rows)
    outputs = {p["name"]: p["type"] for p in desc["output_desc"]}
    # the kernel entry's order: a list that is never empty last (docs/ACLNN.md, "D1")
    assert [p["name"] for p in desc["output_desc"]] == [
        "vars", "ss", "model_copies", "ms", "vs", "m_absmaxes", "v_absmaxes"]
    assert all(outputs[n] == columns[n] for n in outputs)


@pytest.mark.parametrize("launch", ["twin", "native"])
def test_twin_functions_give_the_golden_bits(rng, launch):
    """ascend_ema_adam.kernels's functions of the operator (numpy in place; the spec's arguments as
    parameters, golden.Hyper and golden.Extras): the golden's bits, ss=None without the EMA."""
    from ascend_ema_adam import kernels
    h, extras = Hyper(mode=0, weight_decay=0.05), Extras(maximize=True, grad_scale=8.0)
    for row, ema in ((LIST8BIT_DTYPES[7], True), (LIST8BIT_DTYPES[13], False)):
        entries = make_entries(rng, [300, 1, 513], row, ema)
        before = [{k: None if x is None else x.copy() for k, x in e.items()} for e in entries]
        lists = {name: [e[KEYS[name]] for e in entries] if entries[0][KEYS[name]] is not None
                 else None for name in LISTS}
        run_twin = (kernels.apply_fused_ema_adam8bit_list if launch == "twin"
                    else kernels.apply_fused_ema_adam8bit_list_native)
        run_twin(lists["grads"], lists["vars"], lists["ms"], lists["vs"], lists["m_absmaxes"],
                 lists["v_absmaxes"], lists["ss"], QMAP_M, QMAP_V, np.array([5]), h, extras,
                 model_copies=lists["model_copies"], lr_tensor=2e-3)
        want_h = Hyper(**{**h.__dict__, "lr": float(np.float32(2e-3))})
        torch_view = {name: None if v is None else [to_torch(a) for a in v]
                      for name, v in lists.items()}
        expect_golden(torch_view, before, 5, want_h, extras)
