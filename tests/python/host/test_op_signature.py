"""Each operator's signature, declared once (op_host/<op>/<op>_signature.json; docs/ARCHITECTURE.md,
"One signature per operator"): the torch schemas it generates are pinned (a generator change
cannot alter them silently), and everything declared elsewhere is held to it: the OpDefs' op_build
JSONs, the aclnn headers of include/aclnnop/, the C++ attribute defaults, the Python functions of
ops.py, kernels.py and _C, and the fake kernels made from the schemas."""

import inspect
import json
import re
from dataclasses import fields

import pytest
import torch

from ascend_ema_adam import _C, _kernels, golden, kernels, ops

from op_signatures import OPERATORS, ROOT, SPECS, gen, load_module

decl_compare = load_module(ROOT / "tools" / "cann_op_build" / "aclnn_decl_compare.py")


#: The torch schemas as they were when the specs replaced the hand-written strings, verbatim.
PINNED = {
    "apply_fused_ema_adam_": (
        "ascend_ema_adam::apply_fused_ema_adam_(Tensor grad, Tensor(a!) var, Tensor(b!) m, "
        "Tensor(c!) v, Tensor(d!) s, Tensor step, float lr, float ema_decay, float beta1, "
        "float beta2, float eps, int adam_mode, bool bias_correction, float weight_decay) -> ()"),
    "apply_fused_ema_adam": (
        "ascend_ema_adam::apply_fused_ema_adam(Tensor grad, Tensor var, Tensor m, Tensor v, "
        "Tensor s, Tensor step, float lr, float ema_decay, float beta1, float beta2, float eps, "
        "int adam_mode, bool bias_correction, float weight_decay) -> (Tensor, Tensor, Tensor, "
        "Tensor)"),
    "apply_fused_ema_adam_list_": (
        "ascend_ema_adam::apply_fused_ema_adam_list_(Tensor[] grads, Tensor(a!)[] vars, "
        "Tensor(b!)[] ms, Tensor(c!)[] vs, Tensor(d!)[] ss, Tensor step, float lr, "
        "float ema_decay, float beta1, float beta2, float eps, int adam_mode, "
        "bool bias_correction, float weight_decay, *, Tensor(e!)[]? max_vs=None, "
        "Tensor(f!)[]? model_copies=None, Tensor? grad_scale=None, Tensor? found_inf=None, "
        "bool maximize=False, Tensor? lr_tensor=None, Tensor? ema_decay_tensor=None) -> ()"),
    "apply_fused_ema_adam_list": (
        "ascend_ema_adam::apply_fused_ema_adam_list(Tensor[] grads, Tensor[] vars, Tensor[] ms, "
        "Tensor[] vs, Tensor[] ss, Tensor step, float lr, float ema_decay, float beta1, "
        "float beta2, float eps, int adam_mode, bool bias_correction, float weight_decay, *, "
        "Tensor[]? max_vs=None, Tensor[]? model_copies=None, Tensor? grad_scale=None, "
        "Tensor? found_inf=None, bool maximize=False, Tensor? lr_tensor=None, "
        "Tensor? ema_decay_tensor=None) -> (Tensor[] vars, Tensor[] ms, Tensor[] vs, "
        "Tensor[] ss, Tensor[] max_vs, Tensor[] model_copies)"),
}

#: The CANN attribute types of the op_build JSONs.
JSON_TYPE = {"float": "float", "int": "int", "bool": "bool"}


def test_every_operator_with_an_api_has_a_spec():
    """An operator with a torch op (csrc/ops/<op>/) or a CANN registration (op_host/<op>/cann/)
    declares its signature (the generated header is what those layers expand)."""
    with_api = [op for op in OPERATORS if (ROOT / "csrc" / "ops" / op).is_dir()
                or (ROOT / "op_host" / op / "cann").is_dir()]
    assert with_api, "no operator has a torch op or a CANN registration"
    missing = [op for op in with_api if op not in SPECS]
    assert not missing, f"operators without op_host/<op>/<op>_signature.json: {missing}"


@pytest.mark.parametrize("name", sorted(PINNED))
def test_schemas_are_pinned(name):
    """The registered schema (the generated header's) and the generator's text are today's."""
    assert str(getattr(torch.ops.ascend_ema_adam, name).default._schema) == PINNED[name]
    sig = SPECS[name.rstrip("_")]
    generated = gen.schema(sig, functional=not name.endswith("_"))
    assert f"ascend_ema_adam::{generated}" == PINNED[name]


def test_registered_ops_are_the_specs():
    """Every op of the namespace is an operator's in-place op or functional variant."""
    registered = {s.name.split("::")[1] for s in torch._C._jit_get_all_schemas()
                  if s.name.startswith("ascend_ema_adam::")}
    assert registered == {name for op in SPECS for name in (op, f"{op}_")}


@pytest.mark.parametrize("op", sorted(SPECS))
def test_aclnn_headers_declare_the_spec(op):
    """include/aclnnop/aclnn_<op type>.h declares both functions of every CANN op type with the
    spec's parameters: types, names (CANN's naming: Ref, Optional) and order (the header is in
    turn op_build's output on the OpDef: tools/cann_op_build/run.sh)."""
    sig = SPECS[op]
    for header, text in gen.aclnn_declarations(sig).items():
        ours = decl_compare.declarations(ROOT / "include" / "aclnnop" / header)
        tmp = {m["name"]: decl_compare.Declaration(m["ret"], m["name"], m["params"])
               for m in (decl_compare.DECLARATION.match(s)
                         for s in decl_compare.statements(text)) if m}
        assert len(tmp) == 2
        for name, declared in tmp.items():
            assert name in ours, f"{header} does not declare {name}"
            assert decl_compare.differences(declared, ours[name]) == [], (header, name)


def _cann_json(sig, op_type):
    path = ROOT / "op_host" / sig.operator / "cann" / f"{gen.snake(op_type)}.json"
    (written,) = json.loads(path.read_text())
    assert "attr" not in written, f"{path.name}: the attributes are the spec's"
    desc = gen.msopgen_description(path)
    assert desc["op"] == op_type
    return desc


@pytest.mark.parametrize("op", sorted(SPECS))
def test_op_build_jsons_are_the_spec(op):
    """Each OpDef's description as msopgen reads it (op_host/<op>/cann/<op type>.json with the
    spec's attributes, merged by build.sh; tools/cann_op_build/run.sh holds op_build's ops-info of the
    OpDef to it): inputs in CANN's order with their parameter types, the written ones as
    outputs, the attributes with their types and CANN's defaults."""
    sig = SPECS[op]
    param_type = {"Tensor": "required", "Tensor?": "optional", "Tensor[]": "dynamic",
                  "Tensor[]?": "dynamic"}
    for op_type, options in sig.cann_ops.items():
        if options.get("cann_builtin"):
            assert not (ROOT / "op_host" / op / "cann" / f"{gen.snake(op_type)}.json").exists()
            continue
        desc = _cann_json(sig, op_type)
        args = sig.cann_arguments(op_type)
        tensors = [a for a in args if a.kind != "attr"]
        assert [(p["name"], p["param_type"]) for p in desc["input_desc"]] == \
            [(a.name, param_type[a.type]) for a in tensors]
        assert sorted((p["name"], p["param_type"]) for p in desc["output_desc"]) == \
            sorted((a.name, param_type[a.type.rstrip("?")]) for a in tensors if a.written)
        attrs = [a for a in args if a.kind == "attr"]
        assert [(p["name"], p["type"], p["param_type"]) for p in desc["attr"]] == \
            [(a.name, JSON_TYPE[a.type], "optional") for a in attrs]
        for p, a in zip(desc["attr"], attrs):
            value = {"true": True, "false": False}.get(p["default_value"], p["default_value"])
            assert type(a.default)(value) == a.default, (op_type, a.name, p["default_value"])


def test_msopgen_descriptions_refuse_written_attributes(tmp_path):
    """An op JSON that lists attributes itself is refused, named (they are the spec's), and so is
    one of an op type its spec does not have."""
    source = ROOT / "op_host" / "apply_fused_ema_adam"
    op = tmp_path / "apply_fused_ema_adam"
    (op / "cann").mkdir(parents=True)
    (op / "apply_fused_ema_adam_signature.json").write_text(
        (source / "apply_fused_ema_adam_signature.json").read_text())
    (desc,) = json.loads((source / "cann" / "aea_apply_fused_ema_adam.json").read_text())
    path = op / "cann" / "aea_apply_fused_ema_adam.json"
    path.write_text(json.dumps([desc]))
    assert [a["name"] for a in gen.msopgen_description(path)["attr"]] == [
        "lr", "ema_decay", "beta1", "beta2", "eps", "mode", "bias_correction", "weight_decay"]
    path.write_text(json.dumps([{**desc, "attr": []}]))
    with pytest.raises(gen.SpecError, match="lists attributes"):
        gen.msopgen_description(path)
    path.write_text(json.dumps([{**desc, "op": "Other"}]))
    with pytest.raises(gen.SpecError, match="none of its spec's cann_ops"):
        gen.msopgen_description(path)


def test_cpp_attribute_defaults_are_the_spec():
    """The C++ Attrs (every operator's EMA-Adam attributes, _kernels.Attrs) and golden.Hyper default
    to the specs' values."""
    for sig in SPECS.values():
        defaults = {a.name: a.default for a in sig.by_kind("attr")}
        shared = {f.name for f in fields(golden.Hyper)}
        assert shared <= set(defaults)
        attrs = _kernels.Attrs()
        for name in shared:
            assert getattr(attrs, name) == defaults[name], name
            assert getattr(golden.Hyper(), name) == defaults[name], name


def test_list_attrs_are_the_spec():
    """_kernels.ApplyFusedEmaAdamListAttrs (the C++ ApplyFusedEmaAdamListAttrs, bound from the
    generated attribute table) has exactly the list op's attributes with the spec's defaults, and
    twin's conversion sets each from the golden.Hyper / golden.Extras field of its name."""
    sig = SPECS["apply_fused_ema_adam_list"]
    attrs = _kernels.ApplyFusedEmaAdamListAttrs()
    names = {n for n in dir(attrs) if not n.startswith("_")}
    assert names == {a.name for a in sig.by_kind("attr")}
    for a in sig.by_kind("attr"):
        assert getattr(attrs, a.name) == a.default, a.name
    hyper = golden.Hyper(lr=0.5, ema_decay=0.25, beta1=0.125, beta2=0.75, eps=2.0 ** -10, mode=0,
                         bias_correction=False, weight_decay=0.0625)
    switches = {f.name for f in fields(golden.Extras)}
    extras = golden.Extras(**{a.name: not a.default for a in sig.by_kind("attr")
                              if a.type == "bool" and a.name in switches})
    converted = kernels._list_attrs(hyper, extras)
    for a in sig.by_kind("attr"):
        source = hyper if hasattr(hyper, a.name) else extras
        assert getattr(converted, a.name) == getattr(source, a.name), a.name
        assert getattr(converted, a.name) != a.default, a.name


def _python_view(sig):
    """(name, keyword-only, default) of each argument as the Python functions take it."""
    out = []
    for a in sig.arguments:
        if a.python_via:
            continue
        default = a.default if a.kind == "attr" else None if a.optional else inspect.Parameter.empty
        out.append((a.name, a.keyword_only, default))
    return out


@pytest.mark.parametrize("op", sorted(SPECS))
def test_ops_functions_take_the_spec(op):
    """ascend_ema_adam.ops' functions: the spec's names in its order, the same keyword-only ones,
    CANN's attribute defaults, None for the optional tensors (python_via tensors are passed as
    their argument's value)."""
    sig = SPECS[op]
    assert sig.python["ops"]
    for name in sig.python["ops"]:
        params = inspect.signature(getattr(ops, name)).parameters.values()
        got = [(p.name, p.kind == p.KEYWORD_ONLY, p.default) for p in params]
        assert got == _python_view(sig), name


@pytest.mark.parametrize("op", sorted(SPECS))
def test_kernels_functions_take_every_argument(op):
    """ascend_ema_adam.kernels's functions take every argument of the spec: as a parameter of its
    name, or (attributes, the values of the optional tensors) a field of golden.Hyper or
    golden.Extras."""
    sig = SPECS[op]
    assert sig.python["kernels"]
    carried = {f.name for f in fields(golden.Hyper)} | {f.name for f in fields(golden.Extras)}
    for name in sig.python["kernels"]:
        params = set(inspect.signature(getattr(kernels, name)).parameters)
        missing = [a.name for a in sig.arguments if a.name not in params | carried]
        assert not missing, (name, missing)
        if any(a.name in {f.name for f in fields(golden.Extras)} for a in sig.arguments):
            assert "extras" in params, name


@pytest.mark.parametrize("op", sorted(SPECS))
def test_c_bindings_take_the_spec_in_cann_order(op):
    """_C's callables over an operator's arguments (the optimizer's prepared launches) name them
    as the spec does, in CANN's order (the last CANN op type's: all of them), a python_via
    tensor as its argument's value."""
    sig = SPECS[op]
    for name in sig.python.get("_C", ()):
        doc = getattr(_C, name).__init__.__doc__.splitlines()[0]
        names = re.findall(r"(\w+): ", doc)[1:]  # after self
        op_type = list(sig.cann_ops)[-1]
        assert names == [a.name for a in sig.cann_arguments(op_type) if not a.python_via], name


@pytest.mark.parametrize("op", sorted(SPECS))
def test_fakes_follow_the_schemas(op):
    """The fakes made from the schemas: the in-place op returns nothing, the functional one new
    tensors for the written arguments, and a tensor on another device than the first required
    tensor's is refused, named."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    sig = SPECS[op]
    size = 3
    values = {}
    for a in sig.arguments:
        if a.kind == "attr":
            values[a.name] = a.default
        elif a.type == "Tensor[]":
            values[a.name] = [torch.zeros(2), torch.zeros(5)]
        elif a.type == "Tensor":
            values[a.name] = torch.zeros(size) if a.name != "step" else torch.ones(1, dtype=torch.int64)
    positional = [values[a.name] for a in sig.arguments if not a.keyword_only]
    inplace = getattr(torch.ops.ascend_ema_adam, f"{op}_").default
    functional = getattr(torch.ops.ascend_ema_adam, op).default
    with FakeTensorMode() as mode:
        fake = [[mode.from_tensor(t) for t in v] if isinstance(v, list)
                else mode.from_tensor(v) if isinstance(v, torch.Tensor) else v for v in positional]
        assert inplace(*fake) is None
        out = functional(*fake)
        written = [a for a in sig.arguments if a.written]
        assert len(out) == len(written)
        for result, a in zip(out, written):
            given = values.get(a.name)
            if isinstance(given, list):
                assert [t.shape for t in result] == [t.shape for t in given]
            elif given is None:
                assert list(result) == []
            else:
                assert result.shape == given.shape
    reference = next(a.name for a in sig.arguments if a.type == "Tensor")
    moved = next(a for a in sig.arguments if a.kind != "attr" and not a.optional
                 and a.name != reference)
    meta = [[t.to("meta") for t in v] if isinstance(v, list)
            else v.to("meta") if isinstance(v, torch.Tensor) else v for v in positional]
    names = [a.name for a in sig.arguments if not a.keyword_only]
    meta[names.index(moved.name)] = values[moved.name]  # this one stays on the CPU
    label = f"{moved.name}[0]" if moved.type == "Tensor[]" else moved.name
    with pytest.raises(RuntimeError, match=re.escape(f"{label} is on cpu, {reference} is on meta")):
        inplace(*meta)


@pytest.mark.parametrize("broken, message", [
    ({"arguments": [{"name": "lr", "type": "float"}]}, "an attribute has a default"),
    ({"arguments": ["*", "*"]}, '"*" twice'),
    ({"arguments": [{"name": "x", "type": "Tensor", "colour": 1}]}, "unknown keys"),
    ({"arguments": [{"name": "x", "type": "double", "default": 1.0}]}, "type 'double'"),
    ({"arguments": [{"name": "x", "type": "Tensor?", "python_via": "y"}]}, "python_via"),
    ({"cann_ops": {"Op": {"omits": ["y"]}}}, "omits an argument"),
    ({"operator": "other"}, "is not its folder's name"),
])
def test_generator_refuses_a_bad_spec(tmp_path, broken, message):
    spec = json.loads((ROOT / "op_host" / "apply_fused_ema_adam" /
                       "apply_fused_ema_adam_signature.json").read_text())
    spec.update(broken)
    path = tmp_path / "apply_fused_ema_adam" / "apply_fused_ema_adam_signature.json"
    path.parent.mkdir()
    path.write_text(json.dumps(spec))
    with pytest.raises(gen.SpecError, match=re.escape(message)):
        gen.load(path)


def test_header_is_written_only_when_it_changes(tmp_path):
    """An unchanged spec leaves the header's time stamp alone (nothing rebuilds)."""
    spec = ROOT / "op_host" / "apply_fused_ema_adam" / "apply_fused_ema_adam_signature.json"
    header = tmp_path / "apply_fused_ema_adam_signature.h"
    assert gen.main(["gen", str(spec), str(header)]) == 0
    stamp = header.stat().st_mtime_ns
    text = header.read_text()
    assert gen.main(["gen", str(spec), str(header)]) == 0
    assert header.stat().st_mtime_ns == stamp and header.read_text() == text
    assert "#define APPLY_FUSED_EMA_ADAM_SCHEMA" in text
