"""The op descriptions CANN's msopgen reads (op_host/<op>/cann/<op>.json, merged by build.sh) describe
the same operators as the OpDefs: the list operators' dtype columns are the OpDefs' own
(``_twin.list_opdef_columns``, the C++ ListOpDefColumns that op_host/apply_fused_ema_adam_list/cann declares, held to CANN's
kernel selection rule by op_host.test_apply_fused_ema_adam_list_opdef). A description out of step
fails here, with the columns it should list."""

import json
from pathlib import Path

import pytest

from ascend_ema_adam import _twin

OP_HOST = Path(__file__).resolve().parents[2] / "op_host"


def cann_json(op: str) -> Path:
    """op_host/<operator folder>/cann/<op>.json (a folder may hold several ops: the list op's V2)."""
    (path,) = OP_HOST.glob(f"*/cann/{op}.json")
    return path
LISTS = ["grads", "vars", "ms", "vs", "ss", "max_vs", "model_copies"]
JSON_DTYPE = {"float32": "float", "float16": "float16", "bfloat16": "bfloat16"}


def expected_columns(ema_optional: bool) -> dict[tuple[str, str], list[str]]:
    """Per (input|output, list name) the msopgen dtype names, one per OpDef column."""
    columns = _twin.list_opdef_columns(ema_optional)
    expected = {}
    for i, name in enumerate(LISTS):
        expected[("input", name)] = [JSON_DTYPE[c[0][i]] for c in columns]
        if i > 0:
            expected[("output", name)] = [JSON_DTYPE[c[1][i - 1]] for c in columns]
    return expected


@pytest.mark.parametrize("op, ema_optional, scalars", [
    ("apply_fused_ema_adam_list", False, ["step", "grad_scale", "found_inf"]),
    ("apply_fused_ema_adam_list_v2", True,
     ["step", "grad_scale", "found_inf", "lr_tensor", "ema_decay_tensor"]),
])
def test_list_op_json_has_the_opdef_columns(op, ema_optional, scalars):
    (desc,) = json.loads(cann_json(op).read_text())
    expected = expected_columns(ema_optional)
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


def test_columns_cover_each_absent_list():
    """The V2 OpDef has strictly more columns than V1 (an empty ss is keyed differently unless
    every dtype agrees), and both more than the 13 dtype combinations (an empty max_vs is keyed
    with the gradients' and the parameters' dtypes)."""
    combos = len(_twin.list_dtype_combinations())
    v1, v2 = _twin.list_opdef_columns(False), _twin.list_opdef_columns(True)
    assert combos < len(v1) < len(v2)
    assert set(v1) < set(v2)
