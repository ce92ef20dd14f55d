"""Rule enforcement and semantics of the AscendC CPU twin, one subprocess per case of twin_rules_test.

Case names encode the expectation:
  abort_<RULE>_<what>  must die with SIGABRT and print "[<RULE>]" (RULE is the leading run of upper-case words)
  ok_<what>            must exit 0 (the case checks its own results)
  bench_<what>         timings only; not run here
The binary is found in $AEA_CPP_BIN (default <repo>/build/cpp/bin).
"""

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN_DIR = Path(os.environ.get("AEA_CPP_BIN", REPO / "build" / "cpp" / "bin"))
BINARY = BIN_DIR / "twin_rules_test"
MISSING = "<twin_rules_test missing>"
ABORT_NAME = re.compile(r"^abort_((?:[A-Z][A-Z0-9]*_)+?)[a-z0-9]")
TIMEOUT_S = 300


def _case_names():
    if not BINARY.is_file():
        return [MISSING]
    listing = subprocess.run([str(BINARY), "--list"], capture_output=True, text=True, check=True, timeout=60)
    return [name for name in listing.stdout.split() if not name.startswith("bench_")]


def _rule(case):
    match = ABORT_NAME.match(case)
    assert match, f"abort case {case!r} does not start with abort_<RULE>_<what>"
    return match.group(1).rstrip("_")


CASES = _case_names()


def test_case_names_follow_the_convention():
    if CASES == [MISSING]:
        pytest.fail(f"{BINARY} not found: build the C++ tests first (run `make test`), or set AEA_CPP_BIN")
    for case in CASES:
        assert case.startswith(("abort_", "ok_")), case
        if case.startswith("abort_"):
            _rule(case)


@pytest.mark.parametrize("case", CASES)
def test_twin_case(case):
    if case == MISSING:
        pytest.fail(f"{BINARY} not found: build the C++ tests first (run `make test`), or set AEA_CPP_BIN")
    proc = subprocess.run([str(BINARY), case], capture_output=True, text=True, timeout=TIMEOUT_S)
    if case.startswith("abort_"):
        rule = _rule(case)
        assert proc.returncode == -signal.SIGABRT, (
            f"expected SIGABRT, got exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
        assert f"[{rule}]" in proc.stderr, f"stderr lacks [{rule}]:\n{proc.stderr}"
        assert "ascendc-twin:" in proc.stderr
    else:
        assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
