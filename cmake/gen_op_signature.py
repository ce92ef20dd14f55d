#!/usr/bin/env python3
"""An operator's signature, declared once in op_host/<op>/<op>_signature.json, as C++.

    gen_op_signature.py SPEC HEADER
    gen_op_signature.py --msopgen OUT OP_JSON...

writes HEADER (only when its text changes: an unchanged spec rebuilds nothing), the macros the
operator's torch op, aclnn functions and bindings expand (docs/ARCHITECTURE.md, "One signature per
operator"). cmake/aea_add_operator.cmake runs it when CMake configures, and CMake configures again
when the spec or this file changes. tests/python/host/test_op_signature.py imports it: it pins the
schemas written here and holds the OpDef JSONs, include/aclnnop/ and the Python functions to the
spec. With --msopgen it writes OUT, the op descriptions msopgen reads: each op_host/<op>/cann/
JSON (tensors and the OpDef's dtype columns) with its spec's attributes (op_host/common/cann/
build.sh; tools/cann_op_build/run.sh holds op_build's ops-info to the same descriptions).

The spec (JSON):
    operator            the operator's folder name, which is the torch op's: "<op>_" (in place)
                        and "<op>" (functional)
    cann_ops            {CANN op type: {}} for each aclnn API of the operator; "omits": the
                        arguments that op type does not have; "cann_builtin": CANN's own op type,
                        whose aclnn functions the CPU library implements (no OpDef here)
    functional_returns  "named" or "unnamed": the functional schema's returns
    python              {"ops": [...], "kernels": [...], "_C": [...]}: the functions of
                        ascend_ema_adam.ops and .kernels that take the operator's arguments (the
                        kernels' attributes as golden.Hyper and golden.Extras), and the callables of
                        ascend_ema_adam._C that take them in CANN's order
    arguments           in the torch schema's order; "*" starts the keyword-only ones. Each:
        name        CANN's name (OpDef, JSON) and the Python functions'
        type        Tensor, Tensor?, Tensor[], Tensor[]? (a list), float, int or bool (an attribute)
        written     the operator updates it in place (an output of the OpDef)
        default     an attribute's default (CANN's)
        torch_name  the schema's name, where it differs
        python_via  the Python functions take this tensor as the value of that argument
CANN's order, of the OpDef and the aclnn functions, is the lists, the tensors, then the attributes,
each in the spec's order.
"""
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

TENSOR_TYPES = ("Tensor", "Tensor?", "Tensor[]", "Tensor[]?")
ATTR_TYPES = {"float": "double", "int": "int64_t", "bool": "bool"}
TORCH_CPP = {"Tensor": "const at::Tensor&", "Tensor?": "const std::optional<at::Tensor>&",
             "Tensor[]": "at::TensorList", "Tensor[]?": "std::optional<at::TensorList>"}
ARGUMENT_KEYS = {"name", "type", "written", "default", "torch_name", "python_via"}


def camel(name: str) -> str:
    """ema_decay_tensor -> emaDecayTensor (CANN's aclnn names, and ours in C++)."""
    first, *rest = name.split("_")
    return first + "".join(w[:1].upper() + w[1:] for w in rest)


def snake(op_type: str) -> str:
    """ApplyFusedEmaAdamListV2 -> apply_fused_ema_adam_list_v2 (CANN's file names)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", op_type).lower()


@dataclass(frozen=True)
class Argument:
    name: str
    type: str
    written: bool = False
    default: object = None
    torch_name: str = ""
    python_via: str = ""
    keyword_only: bool = False

    @property
    def kind(self) -> str:
        """"list", "tensor" or "attr"."""
        if self.type.startswith("Tensor["):
            return "list"
        return "tensor" if self.type.startswith("Tensor") else "attr"

    @property
    def optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def cpp(self) -> str:
        return camel(self.name)

    @property
    def schema_name(self) -> str:
        return self.torch_name or self.name

    @property
    def aclnn_name(self) -> str:
        """As CANN's op_build names the parameter: Ref for an output, Optional for an optional
        tensor (never for a list: an absent DYNAMIC input is an empty list)."""
        suffix = "Ref" if self.written else ""
        return self.cpp + suffix + ("Optional" if self.type == "Tensor?" else "")

    @property
    def aclnn_type(self) -> str:
        if self.kind == "attr":
            return ATTR_TYPES[self.type]
        base = "aclTensorList" if self.kind == "list" else "aclTensor"
        return f"{base} *" if self.written else f"const {base} *"


@dataclass(frozen=True)
class Signature:
    operator: str
    arguments: tuple
    cann_ops: dict
    functional_returns: str
    python: dict = field(default_factory=dict)

    def by_kind(self, kind: str) -> list:
        return [a for a in self.arguments if a.kind == kind]

    def cann_arguments(self, op_type: str) -> list:
        """The arguments of CANN op type `op_type`, in CANN's order."""
        omitted = set(self.cann_ops[op_type].get("omits", ()))
        return [a for kind in ("list", "tensor", "attr") for a in self.by_kind(kind)
                if a.name not in omitted]

    def written(self) -> list:
        return [a for a in self.arguments if a.written]


class SpecError(ValueError):
    pass


def load(path) -> Signature:
    """The spec at `path`, checked (SpecError names what is wrong)."""
    path = Path(path)
    spec = json.loads(path.read_text())

    def fail(message):
        raise SpecError(f"{path}: {message}")

    known = {"doc", "operator", "cann_ops", "functional_returns", "python", "arguments"}
    if set(spec) - known:
        fail(f"unknown keys {sorted(set(spec) - known)}")
    if spec.get("functional_returns") not in ("named", "unnamed"):
        fail('functional_returns must be "named" or "unnamed"')
    arguments, keyword_only = [], False
    for entry in spec["arguments"]:
        if entry == "*":
            if keyword_only:
                fail('"*" twice')
            keyword_only = True
            continue
        if set(entry) - ARGUMENT_KEYS:
            fail(f"{entry.get('name')}: unknown keys {sorted(set(entry) - ARGUMENT_KEYS)}")
        arg = Argument(keyword_only=keyword_only, **entry)
        if arg.type not in TENSOR_TYPES and arg.type not in ATTR_TYPES:
            fail(f"{arg.name}: type {arg.type!r} is none of {TENSOR_TYPES + tuple(ATTR_TYPES)}")
        if (arg.kind == "attr") != ("default" in entry):
            fail(f"{arg.name}: an attribute has a default (CANN's), a tensor none")
        if arg.written and arg.kind == "attr":
            fail(f"{arg.name}: only tensors are written")
        if arg.written and arg.type == "Tensor?":
            fail(f"{arg.name}: an optional tensor that is written has no aclnn name here")
        arguments.append(arg)
    names = [a.name for a in arguments]
    if len(set(names)) != len(names):
        fail("an argument name repeats")
    for arg in arguments:
        if arg.python_via and (arg.python_via not in names or arg.kind != "tensor"):
            fail(f"{arg.name}: python_via names no argument, or it is not a tensor")
    for op_type, options in spec["cann_ops"].items():
        if set(options) - {"omits", "cann_builtin"}:
            fail(f"{op_type}: unknown keys {sorted(set(options) - {'omits', 'cann_builtin'})}")
        if set(options.get("omits", ())) - set(names):
            fail(f"{op_type}: omits an argument the spec does not have")
    if spec["operator"] != path.parent.name:
        fail(f"operator {spec['operator']!r} is not its folder's name {path.parent.name!r}")
    return Signature(spec["operator"], tuple(arguments), spec["cann_ops"],
                     spec["functional_returns"], spec.get("python", {}))


def _default_text(arg: Argument) -> str:
    if arg.kind != "attr":
        return "None"
    if arg.type == "bool":
        return "True" if arg.default else "False"
    return repr(arg.default)


def schema(sig: Signature, functional: bool = False) -> str:
    """The torch schema of the in-place op "<op>_(...) -> ()", or of the functional one."""
    parts, letters, star = [], iter("abcdefghijklmnopqrstuvwxyz"), False
    for arg in sig.arguments:
        if arg.keyword_only and not star:
            parts.append("*")
            star = True
        text = arg.type
        if arg.written and not functional:
            text = text.replace("Tensor", f"Tensor({next(letters)}!)", 1)
        text += f" {arg.schema_name}"
        if arg.keyword_only:
            text += f"={_default_text(arg)}"
        parts.append(text)
    if not functional:
        return f"{sig.operator}_({', '.join(parts)}) -> ()"
    returns = [a.type.rstrip("?") + (f" {a.schema_name}" if sig.functional_returns == "named"
                                     else "") for a in sig.written()]
    return f"{sig.operator}({', '.join(parts)}) -> ({', '.join(returns)})"


def torch_params(sig: Signature) -> list:
    """The torch kernels' C++ parameters, in the schema's order."""
    return [f"{TORCH_CPP.get(a.type) or ATTR_TYPES[a.type]} {a.cpp}" for a in sig.arguments]


def aclnn_params(sig: Signature, op_type: str) -> list:
    """aclnn<op_type>GetWorkspaceSize's parameters before workspaceSize and executor."""
    return [(a.aclnn_type, a.aclnn_name) for a in sig.cann_arguments(op_type)]


def aclnn_declarations(sig: Signature) -> dict:
    """Per aclnn header name (aclnn_<op type in snake case>.h), the two functions' declarations
    as CANN's op_build writes them (without its attributes)."""
    out = {}
    for op_type in sig.cann_ops:
        params = [f"{t}{n}" if t.endswith("*") else f"{t} {n}" for t, n in aclnn_params(sig, op_type)]
        params += ["uint64_t *workspaceSize", "aclOpExecutor **executor"]
        out[f"aclnn_{snake(op_type)}.h"] = (
            f"aclnnStatus aclnn{op_type}GetWorkspaceSize({', '.join(params)});\n"
            f"aclnnStatus aclnn{op_type}(void *workspace, uint64_t workspaceSize, "
            f"aclOpExecutor *executor, aclrtStream stream);\n")
    return out


def _cann_default(arg: Argument) -> str:
    """An attribute's default as CANN's op descriptions write it ("true", "1", "1e-8")."""
    if arg.type == "bool":
        return "true" if arg.default else "false"
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", repr(arg.default))


def cann_attributes(sig: Signature, op_type: str) -> list:
    """The attributes of CANN op type `op_type` as msopgen's description lists them: in CANN's
    order, each OPTIONAL with CANN's default."""
    return [{"name": a.name, "param_type": "optional", "type": a.type,
             "default_value": _cann_default(a)}
            for a in sig.cann_arguments(op_type) if a.kind == "attr"]


def msopgen_description(path) -> dict:
    """msopgen's description of one CANN op, as op_host/common/cann/build.sh gives it to msopgen:
    op_host/<op>/cann/<op type in snake case>.json (the op, its inputs and outputs with the
    OpDef's dtype columns) with the attributes of the operator's spec."""
    path = Path(path)
    (desc,) = json.loads(path.read_text())
    if "attr" in desc:
        raise SpecError(f"{path}: lists attributes; the operator's spec declares them")
    operator = path.parent.parent
    sig = load(operator / f"{operator.name}_signature.json")
    if desc.get("op") not in sig.cann_ops:
        raise SpecError(f"{path}: op {desc.get('op')!r} is none of its spec's cann_ops")
    return {**desc, "attr": cann_attributes(sig, desc["op"])}


def _define(name: str, items) -> str:
    """#define name item, item, ... wrapped at 100 columns."""
    lines, line = [], f"#define {name}"
    for i, item in enumerate(items):
        piece = f" {item}" + ("," if i + 1 < len(items) else "")
        if len(line) + len(piece) > 98:
            lines.append(line + " \\")
            line = "   "
        line += piece
    return "\n".join(lines + [line])


def _table(name: str, attrs) -> str:
    """#define name(X) X(type, cppName, "name") ..., one attribute a line."""
    rows = [f'X({ATTR_TYPES[a.type]}, {a.cpp}, "{a.name}")' for a in attrs]
    return " \\\n    ".join([f"#define {name}(X)"] + rows)


def header(sig: Signature, spec_name: str) -> str:
    """The generated C++ header (macros only: it includes nothing)."""
    p = sig.operator.upper()
    attrs = sig.by_kind("attr")
    guard = f"ASCEND_EMA_ADAM_{p}_SIGNATURE_H"
    lists, tensors = sig.by_kind("list"), sig.by_kind("tensor")
    via = {a.python_via for a in tensors if a.python_via}
    out = [f"/* Generated from {spec_name} by cmake/gen_op_signature.py:",
           " * edit the spec, not this file. C++ names are the spec's in camelCase. */",
           f"#ifndef {guard}", f"#define {guard}", "",
           "/* The torch schemas: the in-place op and its functional variant. */",
           f'#define {p}_SCHEMA \\\n    "{schema(sig)}"',
           f'#define {p}_FUNCTIONAL_SCHEMA \\\n    "{schema(sig, functional=True)}"', "",
           "/* The torch kernels' parameters, in the schema's order, and their names. */",
           _define(f"{p}_PARAMS", torch_params(sig)),
           _define(f"{p}_ARGS", [a.cpp for a in sig.arguments]), "",
           "/* The lists and the tensors in CANN's order, by C++ name and by schema name. */",
           _define(f"{p}_LISTS", [a.cpp for a in lists]),
           _define(f"{p}_LIST_NAMES", [f'"{a.schema_name}"' for a in lists]),
           _define(f"{p}_TENSORS", [a.cpp for a in tensors]),
           _define(f"{p}_TENSOR_NAMES", [f'"{a.schema_name}"' for a in tensors]), "",
           "/* The attributes in CANN's order: by C++ name; the members of `attrs` (a struct with",
           " * one per attribute, of its C++ name) as arguments; `attrs` set from the parameters. */",
           _define(f"{p}_ATTRS", [a.cpp for a in attrs]),
           _define(f"{p}_ATTR_VALUES(attrs)", [f"(attrs).{a.cpp}" for a in attrs]),
           _define(f"{p}_SET_ATTRS(attrs)",
                   [f"(attrs).{a.cpp} = {a.cpp}" for a in attrs]).replace(
                       "_SET_ATTRS(attrs) ", "_SET_ATTRS(attrs) (", 1) + ")", "",
           "/* The attributes in CANN's order as X(C++ type, C++ name, \"name\"): the",
           " * struct's members and what bindings call them; _NUMBER_: those the Python",
           " * functions take only as numbers (no tensor stands for them: python_via). */",
           _table(f"{p}_ATTR_TABLE", attrs),
           _table(f"{p}_NUMBER_ATTR_TABLE", [a for a in attrs if a.name not in via]), ""]
    for op_type in sig.cann_ops:
        q = f"ACLNN_{snake(op_type).upper()}"
        args = sig.cann_arguments(op_type)
        params = [f"{t}{n}" if t.endswith("*") else f"{t} {n}" for t, n in aclnn_params(sig, op_type)]
        out += [f"/* aclnn{op_type}GetWorkspaceSize's parameters before workspaceSize and",
                " * executor, and its lists and tensors by name. */",
                _define(f"{q}_PARAMS", params),
                _define(f"{q}_LISTS", [a.aclnn_name for a in args if a.kind == "list"]),
                _define(f"{q}_TENSORS", [a.aclnn_name for a in args if a.kind == "tensor"]), ""]
    out.append(f"#endif  /* {guard} */\n")
    return "\n".join(out)


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def main(argv) -> int:
    if len(argv) >= 3 and argv[1] == "--msopgen":
        try:
            merged = [msopgen_description(path) for path in argv[3:]]
        except (SpecError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            print(f"gen_op_signature: {e}", file=sys.stderr)
            return 1
        Path(argv[2]).write_text(json.dumps(merged, indent=2) + "\n")
        return 0
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    spec = Path(argv[1]).resolve()
    try:
        sig = load(spec)
    except (SpecError, json.JSONDecodeError, KeyError, TypeError) as e:
        print(f"gen_op_signature: {e}", file=sys.stderr)
        return 1
    name = "/".join(spec.parts[-3:])
    write_if_changed(Path(argv[2]), header(sig, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
