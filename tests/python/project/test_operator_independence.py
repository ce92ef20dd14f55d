"""Operators independent by construction (tools/operator_independence/run.py): the repository
passes, and a copy of it with one include planted across operators, or from shared code into an
operator, fails in every C++ layer, naming the file and the include."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CHECKER = ROOT / "tools" / "operator_independence" / "run.py"
TREES = ("op_kernel", "op_host", "runtime", "csrc", "twin", "tests/cpp", "include")


def run_checker(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root)],
                          capture_output=True, text=True, timeout=120)


def test_the_repository_passes():
    result = run_checker(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 finding(s)" in result.stdout
    # The operators are found, not named: every folder of op_kernel/ but common/.
    operators = sorted(p.name for p in (ROOT / "op_kernel").iterdir()
                       if p.is_dir() and p.name != "common")
    assert f"{len(operators)} operators ({', '.join(operators)})" in result.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The checked trees of the repository, copied once (each test plants into its own copy of
    the one file it changes and restores it)."""
    root = tmp_path_factory.mktemp("tree")
    for tree in TREES:
        shutil.copytree(ROOT / tree, root / tree,
                        ignore=shutil.ignore_patterns("__pycache__", "build*"))
    return root


# (file that gets the include, the include it gets): across operators in every layer, and from
# each layer's shared part into an operator.
PLANTED = [
    ("op_kernel/apply_fused_ema_adam_list/apply_fused_ema_adam_list.h",
     '"apply_fused_ema_adam_tiling_data.h"'),
    ("op_host/apply_fused_ema_adam_list/apply_fused_ema_adam_list_tiling.cpp",
     '"apply_fused_ema_adam_tiling.h"'),
    ("op_host/apply_fused_ema_adam/cann/aea_apply_fused_ema_adam_def.cpp",
     '"apply_fused_ema_adam_list_check.h"'),
    ("runtime/apply_fused_ema_adam/native/apply_fused_ema_adam_native.cpp",
     '"apply_fused_ema_adam_list_native.h"'),
    ("runtime/apply_fused_ema_adam_list/aclnn_apply_fused_ema_adam_list.cpp",
     '"apply_fused_ema_adam_twin_run.h"'),
    ("csrc/ops/apply_fused_ema_adam/apply_fused_ema_adam_cpu.cpp",
     '"apply_fused_ema_adam_list_call.h"'),
    ("csrc/ops/apply_fused_ema_adam_list/apply_fused_ema_adam_list_cpu.cpp",
     '"aclnnop/aclnn_apply_fused_ema_adam.h"'),
    ("csrc/ops/apply_fused_ema_adam/apply_fused_ema_adam_kernels_bindings.cpp",
     '"apply_fused_ema_adam_list_tiling.h"'),
    ("tests/cpp/op_host/test_apply_fused_ema_adam_check.cpp",
     '"../apply_fused_ema_adam_list_bad_inputs.h"'),
    # shared code into an operator
    ("op_kernel/common/ema_adam_update.h", '"apply_fused_ema_adam_list_range.h"'),
    ("op_host/common/platform.h", '"apply_fused_ema_adam_tiling.h"'),
    ("runtime/native/ema_adam_entries.cpp", '"apply_fused_ema_adam_list_tiling_key.h"'),
    ("runtime/acl/aclnn_common.h", '"apply_fused_ema_adam_buffers.h"'),
    ("runtime/acl/acl_runtime.cpp", '"aclnnop/aclnn_apply_fused_ema_adam_list.h"'),
    ("csrc/common/optimizer_checks.cpp", '"apply_fused_ema_adam_list_repeated.h"'),
    ("csrc/common/cpu_op_api.cpp", '"apply_fused_ema_adam.h"'),
    ("csrc/common/kernels_module.cpp", '"apply_fused_ema_adam_native.h"'),
    ("twin/ascendc/twin_launch.h", '"apply_fused_ema_adam_list_twin_run.h"'),
    ("tests/cpp/op_host/shared_verdicts.h", '"../apply_fused_ema_adam_bad_inputs.h"'),
]


@pytest.mark.parametrize("where,include", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_include_fails_naming_file_and_include(copy, where, include):
    path = copy / where
    original = path.read_text()
    lines = original.splitlines(keepends=True)
    # after the file's first include (or at its top), as an edit would put it
    at = next((i + 1 for i, line in enumerate(lines) if line.lstrip().startswith("#include")), 0)
    planted = f"#include {include}\n"
    path.write_text("".join(lines[:at]) + planted + "".join(lines[at:]))
    try:
        result = run_checker(copy)
    finally:
        path.write_text(original)
    assert result.returncode == 1, result.stdout
    assert f"{where}:{at + 1}: " in result.stdout and f"includes {include}" in result.stdout, \
        result.stdout
    assert "FAILED" in result.stdout


def test_an_unknown_folder_of_a_layer_fails(copy):
    stray = copy / "runtime" / "stray"
    stray.mkdir()
    (stray / "stray.cpp").write_text("int stray;\n")
    try:
        result = run_checker(copy)
    finally:
        shutil.rmtree(stray)
    assert result.returncode == 1 and "runtime/stray/: neither a shared folder" in result.stdout


def test_a_new_operator_is_found_and_checked(copy):
    """A new operator (a copy of the first's kernel folder) is one more operator of the
    checker's, and its own cross-include is caught like the others'."""
    before = sum(1 for p in (copy / "op_kernel").iterdir() if p.is_dir() and p.name != "common")
    new = copy / "op_kernel" / "throwaway_ema_adam"
    shutil.copytree(copy / "op_kernel" / "apply_fused_ema_adam", new)
    (new / "throwaway_ema_adam.h").write_text('#include "apply_fused_ema_adam_list_range.h"\n')
    try:
        result = run_checker(copy)
    finally:
        shutil.rmtree(new)
    assert f"{before + 1} operators" in result.stdout
    assert ('op_kernel/throwaway_ema_adam/throwaway_ema_adam.h:1: operator throwaway_ema_adam\'s '
            'file includes "apply_fused_ema_adam_list_range.h"') in result.stdout
