"""Bad arguments, drawn (issue 52 item 3): hypothesis mutates one or two arguments of a valid call
of every public torch op (``ascend_ema_adam.ops``) and of ``FusedEmaAdamW(...)`` / ``step()``.
Every mutation in the catalogue below makes the call invalid, so the call must raise
``TypeError``, ``ValueError`` or ``RuntimeError`` (no other exception, no crash), with a message
naming a mutated argument, and leave every tensor's bytes as they were. An op argument is named
by its Python name, its torch schema's name or its aclnn parameter's name (all three from the
operator's signature JSON, cmake/gen_op_signature.py); an entry of a list by the list's name.
"""

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from ascend_ema_adam import golden8bit as g8, ops
from ascend_ema_adam.optim import FusedEmaAdamW

from op_signatures import SPECS

OPERATOR_OF = {"npu_apply_fused_ema_adamw": "apply_fused_ema_adam",
             "apply_fused_ema_adam_functional": "apply_fused_ema_adam",
             "apply_fused_ema_adam_list": "apply_fused_ema_adam_list",
             "apply_fused_ema_adam8bit_list": "apply_fused_ema_adam8bit_list"}
RAISES = (TypeError, ValueError, RuntimeError)
FLOATS = ("lr", "ema_decay", "beta1", "beta2", "eps", "weight_decay")
#: Values no float attribute takes, and per attribute the values out of its range.
BAD_FLOATS = (math.nan, math.inf, -math.inf, 1e300, "0.1", None, True, 1j)
OUT_OF_RANGE = {"beta1": (1.5, -0.1), "beta2": (1.0 + 1e-6, -2.0), "eps": (-1e-8,),
                "ema_decay": (1.5, -0.5)}
BAD_INTS = (2, -1, 1.5, "1", None, True, 2**70)
BAD_BOOLS = (None, 2, "yes", 1.0)


def names_of(op: str, argument: str) -> set:
    """The names a message may give `argument` of `op`: Python's, the schema's, aclnn's (and
    those of the tensors a Python argument stands for: lr for lr_tensor)."""
    names = {argument}
    for a in SPECS[OPERATOR_OF[op]].arguments:
        if argument in (a.name, a.python_via):
            names |= {a.name, a.schema_name, a.aclnn_name}
    return names


def snapshot(values) -> list:
    """Every tensor among `values` (lists searched), as bytes."""
    found = []
    for value in values:
        for t in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                found.append(t.detach().contiguous().view(-1).view(torch.uint8).clone()
                             if t.numel() else t.detach().clone())
    return found


def assert_refused(call, mutated: set, tensors) -> None:
    before = snapshot(tensors)
    with pytest.raises(RAISES) as raised:
        call()
    message = str(raised.value)
    assert any(name in message for name in mutated), (mutated, message)
    after = snapshot(tensors)
    assert len(before) == len(after) and all(torch.equal(a, b) for a, b in zip(before, after)), \
        f"a refused call changed a tensor: {message}"


# ---- valid calls ------------------------------------------------------------------------------

def random_shape(draw) -> tuple:
    return tuple(draw(st.lists(st.integers(1, 7), min_size=1, max_size=3)))


HYPER = dict(lr=1e-3, ema_decay=0.99, beta1=0.9, beta2=0.999, eps=1e-8, mode=1,
             bias_correction=True, weight_decay=0.01)


def single_call(gen_, shape, dtype=torch.float32, step=3):
    grad, var, m, v, s = (torch.randn(shape, generator=gen_).to(dtype) for _ in range(5))
    return dict(grad=grad, var=var, m=m, v=v.abs(), s=s, step=torch.tensor([step]), **HYPER)


def list_call(gen_, shapes, step=3):
    lists = {name: [torch.randn(shape, generator=gen_) for shape in shapes]
             for name in ("grads", "vars", "ms", "vs", "ss")}
    lists["vs"] = [v.abs() for v in lists["vs"]]
    return dict(lists, step=torch.tensor([step]), **HYPER)


def list8bit_call(gen_, sizes, step=3):
    codes = lambda: [torch.randint(0, 256, (n,), generator=gen_, dtype=torch.uint8)  # noqa: E731
                     for n in sizes]
    scales = lambda: [torch.rand(-(-n // 256), generator=gen_) for n in sizes]  # noqa: E731
    return dict(grads=[torch.randn(n, generator=gen_) for n in sizes],
                vars=[torch.randn(n, generator=gen_) for n in sizes],
                ms=codes(), vs=codes(), m_absmaxes=scales(), v_absmaxes=scales(),
                ss=[torch.randn(n, generator=gen_) for n in sizes],
                qmap_m=torch.from_numpy(g8.dynamic_map(True)),
                qmap_v=torch.from_numpy(g8.dynamic_map(False)), step=torch.tensor([step]),
                **HYPER)


def drawn_call(draw, op, gen_):
    """A valid call of `op` with drawn shapes (0 to 3 entries for the list ops), dtype and step."""
    step = draw(st.integers(1, 99))
    if OPERATOR_OF[op] == "apply_fused_ema_adam":
        dtype = draw(st.sampled_from((torch.float32, torch.float16, torch.bfloat16)))
        return single_call(gen_, random_shape(draw), dtype, step)
    entries = draw(st.integers(0, 3))
    if op == "apply_fused_ema_adam_list":
        return list_call(gen_, [random_shape(draw) for _ in range(entries)], step)
    return list8bit_call(gen_, [draw(st.integers(1, 700)) for _ in range(entries)], step)


def plain_call(op, entries=2):
    """A fixed valid call of `op`."""
    gen_ = torch.Generator().manual_seed(2)
    if OPERATOR_OF[op] == "apply_fused_ema_adam":
        return single_call(gen_, (3, 4))
    if op == "apply_fused_ema_adam_list":
        return list_call(gen_, [(3, 4), (5,)][:entries])
    return list8bit_call(gen_, [300, 7][:entries])


# ---- mutations --------------------------------------------------------------------------------

def mutate_tensor(draw, call, name, written) -> None:
    """`call[name]`, a tensor, replaced by what the argument cannot be."""
    t = call[name]
    others = [k for k in written if k != name and isinstance(call[k], torch.Tensor)
              and call[k].shape == t.shape and call[k].dtype == t.dtype]
    kinds = ["not a tensor", "dtype", "shape"] + (["alias"] if others else [])
    if snapshot(v for k, v in call.items() if k != name):  # (alone on meta: a fake call)
        kinds.append("meta")
    kind = draw(st.sampled_from(kinds))
    if kind == "not a tensor":
        call[name] = draw(st.sampled_from((None, 3.0, "x", [t])))
    elif kind == "dtype":
        call[name] = t.to(torch.float64 if t.is_floating_point() else torch.float32)
    elif kind == "shape":
        call[name] = torch.zeros(*t.shape, 2, dtype=t.dtype) if name != "step" else \
            torch.tensor([3, 4])
    elif kind == "meta":
        call[name] = torch.empty_like(t, device="meta")
    else:
        call[name] = call[draw(st.sampled_from(others))]


def mutate_list(draw, call, name, written) -> None:
    """`call[name]`, a list of tensors, made one the operator refuses."""
    entries = call[name]
    kinds = ["not a list", "longer", "entry not a tensor", "entry dtype", "entry meta"]
    if entries:
        kinds.append("entry shape")
        if name != "ss" or len(entries) > 1:  # (an empty ss: no EMA)
            kinds.append("shorter")
        if name in written:
            kinds.append("alias")
    kind = draw(st.sampled_from(kinds))
    if kind == "not a list":  # (ss=None is a call without the EMA)
        call[name] = draw(st.sampled_from((3.0, "x") if name == "ss" else (None, 3.0, "x")))
        return
    entries = list(entries)
    if kind == "longer":
        entries.append(torch.zeros(5))
    elif kind == "shorter":
        entries.pop(draw(st.integers(0, len(entries) - 1)))
    else:
        if not entries:  # an entry for an empty list: a longer list
            entries.append(torch.zeros(5))
            call[name] = entries
            return
        i = draw(st.integers(0, len(entries) - 1))
        t = entries[i]
        if kind == "entry not a tensor":
            entries[i] = draw(st.sampled_from((None, 1.0, "x")))
        elif kind == "entry dtype":
            entries[i] = t.to(torch.float64 if t.dtype != torch.float64 else torch.float32)
        elif kind == "entry meta":
            entries[i] = torch.empty_like(t, device="meta")
        elif kind == "entry shape":
            entries[i] = torch.zeros(*t.shape, 2, dtype=t.dtype)
        else:  # the entry of another written list of the same shape and dtype
            others = [k for k in written if k != name and len(call[k]) > i
                      and call[k][i].shape == t.shape and call[k][i].dtype == t.dtype]
            if not others:
                entries[i] = t.to(torch.float64 if t.dtype != torch.float64 else torch.float32)
            else:
                entries[i] = call[draw(st.sampled_from(others))][i]
    call[name] = entries


def mutate_scalar(draw, call, name) -> None:
    """An attribute (float, int or bool) given a value it cannot take."""
    if name in FLOATS:
        call[name] = draw(st.sampled_from(BAD_FLOATS + OUT_OF_RANGE.get(name, ())))
    elif name == "mode":
        call[name] = draw(st.sampled_from(BAD_INTS))
    else:
        call[name] = draw(st.sampled_from(BAD_BOOLS))


def mutate(draw, op, call) -> set:
    """One or two arguments of `call` mutated; returns the names that may name them."""
    spec = SPECS[OPERATOR_OF[op]]
    written = [a.name for a in spec.arguments if a.written and a.name in call
               and op != "apply_fused_ema_adam_functional"]  # (it writes new tensors)
    choices = [name for name in call if name != "maximize"]
    choices.append("step value")
    if "grads" in call:  # the list ops' optional arguments, given as they cannot be
        choices += ["grad_scale", "found_inf", "lr tensor", "ema_decay tensor", "model_copies"]
        if "qmap_m" not in call:
            choices.append("max_vs")
    mutated = set()
    for name in draw(st.lists(st.sampled_from(choices), min_size=1, max_size=2, unique=True)):
        if name in ("grad_scale", "found_inf", "lr tensor", "ema_decay tensor"):
            name = name.replace(" tensor", "")
            call[name] = draw(st.sampled_from((
                torch.ones(2), torch.ones(1, dtype=torch.float64), torch.ones(1, dtype=torch.int64),
                torch.ones(1, device="meta")) + ((3.0, "x") if name in ("grad_scale", "found_inf")
                                                 else ())))
        elif name in ("max_vs", "model_copies"):  # one entry too many, or fp32 copies
            vars_ = call["vars"] if isinstance(call["vars"], list) else []
            call[name] = draw(st.sampled_from((
                [torch.zeros(5)] + [torch.zeros_like(v) for v in vars_],
                [torch.zeros_like(v) for v in vars_] if vars_ and name == "model_copies"
                else [torch.zeros(5)])))
        elif name == "step value":  # 0 or negative with bias correction
            call["step"] = torch.tensor([draw(st.integers(-2**62, 0))])
            call["bias_correction"] = True
            name = "step"
        elif name in ("qmap_m", "qmap_v"):
            q = call[name]
            call[name] = draw(st.sampled_from((None, q[:255], q.double(), q.flip(0), q * 2)))
        elif isinstance(call[name], list):
            mutate_list(draw, call, name, written)
        elif isinstance(call[name], torch.Tensor):
            mutate_tensor(draw, call, name, written)
        else:
            mutate_scalar(draw, call, name)
        mutated |= names_of(op, name)
    return mutated


@settings(max_examples=300)
@given(data=st.data())
def test_a_mutated_op_call_is_refused_naming_the_argument(data):
    draw = data.draw
    op = draw(st.sampled_from(sorted(OPERATOR_OF)))
    gen_ = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    call = drawn_call(draw, op, gen_)
    mutated = mutate(draw, op, call)
    assert_refused(lambda: getattr(ops, op)(**call), mutated, call.values())


# ---- the optimizer ----------------------------------------------------------------------------

#: FusedEmaAdamW's arguments and values it refuses.
BAD_OPTIONS = {
    "lr": (math.nan, -1.0, "0.1", None), "eps": (-1.0, math.nan, "x"),
    "betas": ((1.5, 0.999), (0.9, -0.1), (0.9,), "ab", None), "weight_decay": (-0.1, math.nan),
    "ema_decay": (1.5, -0.1, "x", math.nan), "step_scope": ("step", None),
    "state_bits": (4, 16, "8"), "min_8bit_size": (-1, 1.5), "ema_every": (0, -2, 1.5),
    "ema_warmup": ("bogus", 3), "inv_gamma": (0.0, -1.0, math.nan), "power": (-1.0, math.nan),
    "min_ema_decay": (1.5, -0.5), "ema_update_after_step": (-1, 0.5),
    "max_grad_norm": (-1.0, math.nan, "1"), "state_dtype": (torch.int32, "float32"),
    "foreach": ("yes",), "fused": ("yes",), "ema_every_decay": ("bogus",),
}


#: The words torch.optim.AdamW's (and MindSpeed's) messages name an option by, which
#: FusedEmaAdamW's keep: "Invalid learning rate: nan".
TORCH_NAMES = {"betas": {"beta"}, "lr": {"learning rate"}, "eps": {"epsilon"}}


def option_names(options) -> set:
    return set(options).union(*(TORCH_NAMES.get(name, set()) for name in options))


def model_params(gen_, count):
    return [torch.nn.Parameter(torch.randn(n, generator=gen_)) for n in (5, 300, 4096)[:count]]


@settings(max_examples=150)
@given(data=st.data())
def test_fused_ema_adamw_refuses_bad_options_naming_them(data):
    draw = data.draw
    gen_ = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    params = model_params(gen_, draw(st.integers(1, 3)))
    options = {name: draw(st.sampled_from(values)) for name in
               draw(st.lists(st.sampled_from(sorted(BAD_OPTIONS)), min_size=1, max_size=2,
                             unique=True))
               for values in [BAD_OPTIONS[name]]}
    assert_refused(lambda: FusedEmaAdamW(params, **options), option_names(options), params)


#: param_groups values step() refuses (a group edited after construction, as schedulers and
#: users do), checked before anything is written.
BAD_GROUP_VALUES = {
    "lr": (math.nan, math.inf, "0.1", None), "eps": (-1.0, math.nan),
    "betas": ((1.5, 0.999), (0.9, math.nan), (0.9,)), "weight_decay": (math.nan, "x"),
    "ema_decay": (1.5, -0.1, math.nan, "x"),
}


@settings(max_examples=100)
@given(data=st.data())
def test_step_refuses_a_bad_group_value_before_writing(data):
    draw = data.draw
    gen_ = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    params = model_params(gen_, 3)
    optimizer = FusedEmaAdamW(params, lr=1e-3, ema_decay=0.99,
                              state_bits=draw(st.sampled_from((32, 8))))
    for _ in range(draw(st.integers(0, 2))):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen_)
        optimizer.step()
    for p in params:
        p.grad = torch.randn(p.shape, generator=gen_)
    key = draw(st.sampled_from(sorted(BAD_GROUP_VALUES)))
    optimizer.param_groups[0][key] = draw(st.sampled_from(BAD_GROUP_VALUES[key]))
    state = [t for p in params for t in optimizer.state[p].values()]
    assert_refused(optimizer.step, option_names([key]), params + state)


# ---- what the mutations found, kept as plain cases -------------------------------------------

@pytest.mark.parametrize("op", ["apply_fused_ema_adam_list", "apply_fused_ema_adam8bit_list"])
@pytest.mark.parametrize("ss", [[], None])
def test_empty_lists_beside_gradients_are_refused(op, ss):
    """Gradients for one entry, every other list empty and no EMA: the CPU op made the absent
    ss's placeholders from ms[0] / vars[0] before phase 1 counted the lists (a segfault)."""
    call = plain_call(op, entries=1)
    for name, value in call.items():
        if isinstance(value, list) and name != "grads":
            call[name] = []
    call["ss"] = ss
    assert_refused(lambda: getattr(ops, op)(**call), {"varsRef"}, call.values())


@pytest.mark.parametrize("op", sorted(OPERATOR_OF))
@pytest.mark.parametrize("name, value", [("bias_correction", None), ("bias_correction", 2),
                                         ("mode", True), ("lr", True), ("mode", 2**70)])
def test_attributes_of_the_wrong_type_are_refused(op, name, value):
    """torch's schema takes None or 2 as a bool and True as a float or an int."""
    call = plain_call(op)
    call[name] = value
    assert_refused(lambda: getattr(ops, op)(**call), {name}, call.values())
