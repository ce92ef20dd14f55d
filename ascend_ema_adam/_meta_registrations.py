"""Fake (meta) kernels of the ascend_ema_adam torch ops, for FakeTensor tracing and torch.compile,
made from the ops' schemas (which each operator's signature generates:
op_host/<op>/<op>_signature.json). The schema files (csrc/ops/<op>/<op>.cpp) point here with
set_python_module, so torch imports this module whenever the ops need their fakes.

Every operator is an in-place update "<op>_" (it returns nothing) and its functional variant
"<op>" (new tensors for the arguments the in-place op writes, in order; an absent optional list
gives an empty one). Both fakes first check that every tensor is on the device of the op's first
required tensor: the fake kernel is also the Meta kernel, and a meta tensor among CPU tensors
routes the whole call here, which must then fail instead of doing nothing.
"""

import inspect

import torch

from ._extension import _C  # noqa: F401  (registers the ops)

NAMESPACE = "ascend_ema_adam"


def _python_signature(schema) -> inspect.Signature:
    """The schema's arguments as a Python signature (to bind a call's args and kwargs)."""
    kinds = {False: inspect.Parameter.POSITIONAL_OR_KEYWORD, True: inspect.Parameter.KEYWORD_ONLY}
    return inspect.Signature([
        inspect.Parameter(a.name, kinds[a.kwarg_only],
                          default=a.default_value if a.has_default_value() else inspect.Parameter.empty)
        for a in schema.arguments])


def _tensors(name: str, value) -> list:
    """(label, tensor) of an argument: a tensor, each tensor of a list, nothing for the rest."""
    if isinstance(value, torch.Tensor):
        return [(name, value)]
    if isinstance(value, (list, tuple)):
        return [(f"{name}[{i}]", t) for i, t in enumerate(value)]
    return []


def _check_one_device(op: str, values: dict, reference: str) -> None:
    device = values[reference].device
    for name, value in values.items():
        for label, t in _tensors(name, value):
            if t.device != device:
                raise RuntimeError(f"{op}: {label} is on {t.device}, {reference} is on {device}: "
                                   "all tensors must be on one device")


def _like(value):
    if isinstance(value, torch.Tensor):
        return torch.empty_like(value)
    return [torch.empty_like(t) for t in value or ()]


def _register(inplace, functional) -> None:
    """The fakes of one operator, from its two schemas."""
    op = inplace.name.split("::")[1]
    args = inplace.arguments
    reference = next(a.name for a in args if isinstance(a.type, torch.TensorType))
    written = [a.name for a in args if a.alias_info is not None and a.alias_info.is_write]

    def fake_of(schema, returns):
        signature = _python_signature(schema)

        def fake(*call_args, **call_kwargs):
            bound = signature.bind(*call_args, **call_kwargs)
            bound.apply_defaults()
            _check_one_device(op, bound.arguments, reference)
            return returns(bound.arguments)
        fake.__signature__ = signature
        fake.__name__ = f"{schema.name.split('::')[1]}_fake"
        return fake

    torch.library.register_fake(inplace.name, fake_of(inplace, lambda values: None))
    torch.library.register_fake(functional.name, fake_of(
        functional, lambda values: tuple(_like(values[name]) for name in written)))


def _operators():
    """(in-place schema, functional schema) of every operator of the namespace."""
    schemas = {s.name: s for s in torch._C._jit_get_all_schemas()
               if s.name.startswith(f"{NAMESPACE}::")}
    return [(schemas[name], schemas[name[:-1]]) for name in sorted(schemas)
            if name.endswith("_") and name[:-1] in schemas]


for _inplace, _functional in _operators():
    _register(_inplace, _functional)
