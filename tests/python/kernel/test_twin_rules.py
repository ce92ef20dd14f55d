"""Rule enforcement and semantics of the AscendC CPU twin, one subprocess per case of each C++ case binary
(twin_rules_test: the core API; twin_list_tensor_test: tensor lists).

Case names encode the expectation:
  abort_<RULE>_<what>  must die with SIGABRT and print "[<RULE>]" (RULE is the leading run of upper-case words)
  ok_<what>            must exit 0 (the case checks its own results)
  bench_<what>         timings only; not run here
The binaries are found in $AEA_CPP_BIN (default <repo>/build/release/bin).
"""

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN_DIR = Path(os.environ.get("AEA_CPP_BIN", REPO / "build" / "release" / "bin"))
BINARIES = ("twin_rules_test", "twin_list_tensor_test")
MISSING = "<missing>"
ABORT_NAME = re.compile(r"^abort_((?:[A-Z][A-Z0-9]*_)+?)[a-z0-9]")
TIMEOUT_S = 300


def _case_names():
    """(binary, case) pairs; (binary, MISSING) when a binary is not built."""
    cases = []
    for binary in BINARIES:
        path = BIN_DIR / binary
        if not path.is_file():
            cases.append((binary, MISSING))
            continue
        listing = subprocess.run([str(path), "--list"], capture_output=True, text=True, check=True, timeout=60)
        cases += [(binary, name) for name in listing.stdout.split() if not name.startswith("bench_")]
    return cases


def _rule(case):
    match = ABORT_NAME.match(case)
    assert match, f"abort case {case!r} does not start with abort_<RULE>_<what>"
    return match.group(1).rstrip("_")


CASES = _case_names()


def _require_built(binary, case):
    if case == MISSING:
        pytest.fail(f"{BIN_DIR / binary} not found: build the C++ tests first (run `make test`), or set AEA_CPP_BIN")


def test_case_names_follow_the_convention():
    names = []
    for binary, case in CASES:
        _require_built(binary, case)
        assert case.startswith(("abort_", "ok_")), case
        if case.startswith("abort_"):
            _rule(case)
        names.append(case)
    assert len(names) == len(set(names)), "case names must be unique across the binaries (they are the test ids)"


@pytest.mark.parametrize(("binary", "case"), CASES, ids=[case for _, case in CASES])
def test_twin_case(binary, case):
    _require_built(binary, case)
    proc = subprocess.run([str(BIN_DIR / binary), case], capture_output=True, text=True, timeout=TIMEOUT_S)
    if case.startswith("abort_"):
        rule = _rule(case)
        assert proc.returncode == -signal.SIGABRT, (
            f"expected SIGABRT, got exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
        assert f"[{rule}]" in proc.stderr, f"stderr lacks [{rule}]:\n{proc.stderr}"
        assert "ascendc-twin:" in proc.stderr
    else:
        assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
