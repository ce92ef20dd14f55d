"""The op descriptions CANN's msopgen reads (op_host/<op>/cann/<op>.json, merged by build.sh)
describe the same operators as the OpDefs: the list operators' dtype columns are the OpDefs' own
(``_kernels.list_opdef_columns``, the C++ ApplyFusedEmaAdamListOpDefColumns that
op_host/apply_fused_ema_adam_list/cann declares, held to CANN's kernel selection rule by
op_host.test_apply_fused_ema_adam_list_opdef). A description out of step fails here, with the
columns it should list."""

import json
from pathlib import Path

import pytest

from ascend_ema_adam import _kernels

OP_HOST = Path(__file__).resolve().parents[3] / "op_host"


def cann_json(op: str) -> Path:
    """op_host/<operator folder>/cann/<op>.json (a folder may hold several ops: the list op's V2)."""
    (path,) = OP_HOST.glob(f"*/cann/{op}.json")
    return path
LISTS = ["grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"]
JSON_DTYPE = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16"}


def expected_columns() -> dict[tuple[str, str], list[str]]:
    """Per (input|output, list name) the msopgen dtype names, one per OpDef column."""
    columns = _kernels.list_opdef_columns()
    expected = {}
    for i, name in enumerate(LISTS):
        expected[("input", name)] = [JSON_DTYPE[c[0][i]] for c in columns]
        if i > 0:
            expected[("output", name)] = [JSON_DTYPE[c[1][i - 1]] for c in columns]
    return expected


@pytest.mark.parametrize("op, scalars", [
    ("apply_fused_ema_adam_list", ["step", "grad_scale", "found_inf"]),
    ("apply_fused_ema_adam_list_v2", ["step", "grad_scale", "found_inf", "lr_tensor",
                                      "ema_decay_tensor"]),
])
def test_list_op_json_has_the_opdef_columns(op, scalars):
    (desc,) = json.loads(cann_json(op).read_text())
    expected = expected_columns()
    n = len(expected[("input", "grads")])
    got = {}
    for side in ("input", "output"):
        for param in desc[f"{side}_desc"]:
            assert param["format"] == ["ND"] * len(param["type"]), param["name"]
            if param["name"] in LISTS:
                assert param["param_type"] == "dynamic", param["name"]
                got[(side, param["name"])] = param["type"]
    assert got == expected, (
        f"{op}.json is out of step with the OpDef's {n} dtype columns; its lists should read:\n"
        + json.dumps({f"{s}:{name}": types for (s, name), types in expected.items()}))
    inputs = {p["name"]: p for p in desc["input_desc"]}
    assert [p["name"] for p in desc["input_desc"]] == LISTS + scalars
    assert inputs["step"]["type"] == ["int64"] * n and inputs["step"]["param_type"] == "required"
    for name in scalars[1:]:
        assert inputs[name]["type"] == ["float"] * n and inputs[name]["param_type"] == "optional"


def test_one_column_per_dtype_combination():
    """An absent list is keyed by its placeholders' dtype, which is the dtype the list would have
    (the state's for ss and max_vs, the parameters' for model_copies): each of the 13 dtype
    combinations has one column, and no two combinations share one."""
    combos = _kernels.list_dtype_combinations()
    columns = _kernels.list_opdef_columns()
    assert len(columns) == len(set(columns)) == len(combos) == 13
    for combo, (inputs, outputs) in zip(combos, columns):
        param, state, grad = combo["param"], combo["state"], combo["grad"]
        assert inputs == (grad, param, state, state, state, state, combo["copy"] or param)
        assert outputs == inputs[1:]
