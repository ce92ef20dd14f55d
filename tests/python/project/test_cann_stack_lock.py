"""tools/common/cann_stack_lock.sh: one run of CANN's host stack at a time per checkout.

A build of build/cann_host/ beside a running torch-npu case table laid the operator package out
afresh under it, and torch_npu's task queue stopped the process (SIGABRT). The lock is exercised
on a copy of the script (its lock file then lives in the copy's build/, never this checkout's).
"""
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tools" / "common" / "cann_stack_lock.sh"
# Each script that writes build/cann_op_build/ or build/cann_host/, or runs cases from them.
USERS = ("tools/cann_op_build/run.sh", "tools/cann_host/build.sh", "tools/cann_host/run.sh",
         "tools/torch_npu_run/run.sh")

if shutil.which("flock") is None:  # util-linux; every Debian has it
    pytest.fail("flock (util-linux) is not installed", pytrace=False)


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "tools" / "common").mkdir(parents=True)
    shutil.copy(SCRIPT, tmp_path / "tools" / "common")
    return tmp_path


def bash(checkout, body, **kw):
    return subprocess.Popen(["bash", "-c", f"set -euo pipefail; source tools/common/cann_stack_lock.sh; {body}"],
                            cwd=checkout, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def test_a_second_run_waits_until_the_first_ends(checkout):
    first = bash(checkout, "cann_stack_lock first; echo held; read -r _")
    assert first.stdout.readline().strip() == "held"
    second = bash(checkout, "cann_stack_lock second; echo got")
    assert second.stdout.readline().startswith("second: waiting for another run")
    time.sleep(0.5)
    assert second.poll() is None, "the second run went on while the first held the lock"
    first.communicate("\n", timeout=10)  # the first run ends: the lock is free
    rest, _ = second.communicate(timeout=10)
    assert (second.returncode, rest.strip()) == (0, "got")
    assert (checkout / "build" / ".cann_stack.lock").is_file()


def test_a_script_called_by_the_holder_shares_its_lock(checkout):
    # run.sh holds it and calls build.sh, which locks too: that must not wait for its caller.
    nested = bash(checkout, "cann_stack_lock outer; bash -c 'source tools/common/cann_stack_lock.sh; "
                            "cann_stack_lock inner; echo inner ran'")
    out, _ = nested.communicate(timeout=20)
    assert (nested.returncode, out.strip()) == (0, "inner ran")


def test_a_lock_held_elsewhere_does_not_count(checkout, tmp_path_factory):
    # Another checkout's lock (its AEA_CANN_STACK_LOCK inherited) must not let this one through.
    other = tmp_path_factory.mktemp("other")
    (other / "tools" / "common").mkdir(parents=True)
    shutil.copy(SCRIPT, other / "tools" / "common")
    first = bash(checkout, "cann_stack_lock first; echo held; read -r _")
    assert first.stdout.readline().strip() == "held"
    second = bash(checkout, "cann_stack_lock second; echo got",
                  env={"PATH": "/usr/bin:/bin", "AEA_CANN_STACK_LOCK": str(other / "build" / ".cann_stack.lock")})
    assert second.stdout.readline().startswith("second: waiting")
    first.communicate("\n", timeout=10)
    assert second.communicate(timeout=10)[0].strip() == "got"


@pytest.mark.parametrize("script", USERS)
def test_every_user_of_the_stack_locks_before_it_writes(script):
    lines = (ROOT / script).read_text().splitlines()
    lock = [i for i, line in enumerate(lines) if re.match(r"source tools/common/cann_stack_lock\.sh; cann_stack_lock ", line)]
    assert len(lock) == 1, f"{script} does not take tools/common/cann_stack_lock.sh's lock (exactly once)"
    writes = [i for i, line in enumerate(lines)
              if re.match(r'\s*(mkdir|rm -rf|cp |ln |cmake|ninja|tools/cann_host/build\.sh|"\$stage")', line)]
    assert writes and lock[0] < writes[0], f"{script} writes (line {writes[0] + 1}) before it takes the lock"
