"""Errors raised by the C++ code reach Python as the documented exceptions, on every supported torch
(issue 35: on one torch 2.11 build, a bad input crashed the process inside torch/_ops.py while the
op formatted its message). `make compat` runs this file for each row of the README's
supported-versions table; `make test` runs it with the rest.

Each path is taken in a child process with faulthandler on, so a crash fails the test with the
signal and the child's traceback instead of taking pytest down: the single op through torch.ops
(the aclnn layer's refusal, whose message carries the status and the step as integers), the list
op (refusals of the torch op itself and of the aclnn layer), an error of the CPU device's own
environment, the pybind11 functions of _C and _kernels. Then the modules' dynamic symbol tables:
they export their init function alone (csrc/module_exports.map), so nothing they define can
interpose or be interposed by another copy in the process."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

CHILD = textwrap.dedent(r'''
    import faulthandler, os, re, sys
    faulthandler.enable()
    import numpy as np
    import torch
    import ascend_ema_adam
    from ascend_ema_adam import kernels
    from ascend_ema_adam.ops import apply_fused_ema_adam_list, npu_apply_fused_ema_adamw

    def expect(name, exc_type, pattern, fn):
        try:
            fn()
        except exc_type as e:
            if not re.search(pattern, str(e)):
                sys.exit(f"{name}: {type(e).__name__} without /{pattern}/: {e}")
            print("ok", name, "|", str(e).splitlines()[0][:160], flush=True)
            return
        except BaseException as e:
            sys.exit(f"{name}: expected {exc_type.__name__}, got {type(e).__name__}: {e}")
        sys.exit(f"{name}: nothing raised")

    def state(n=8, dtype=torch.float32):
        g = torch.randn(n, dtype=dtype)
        return [g, torch.randn(n, dtype=dtype), torch.zeros(n, dtype=dtype),
                torch.zeros(n, dtype=dtype), torch.randn(n, dtype=dtype)]

    def single(step, **kw):
        return lambda: npu_apply_fused_ema_adamw(*state(), torch.tensor([step]), **kw)

    # the single op through torch.ops: the aclnn layer refuses, the op raises its message
    expect("step 0 with bias correction", RuntimeError, r"aclnn status 161002.*step", single(0))
    expect("step -7 with bias correction", RuntimeError, r"aclnn status 161002.*-7", single(-7))
    expect("mode 2", RuntimeError, r"aclnn status 161002.*mode", single(1, mode=2))
    expect("beta1 1.5", RuntimeError, r"aclnn status 161002.*beta1", single(1, beta1=1.5))
    bad = state()
    bad[2] = torch.zeros(8, dtype=torch.float16)
    expect("dtype mismatch", RuntimeError, r"aclnn status 161002",
           lambda: npu_apply_fused_ema_adamw(*bad, torch.tensor([1])))
    expect("through torch.ops", RuntimeError, r"aclnn status 161002",
           lambda: torch.ops.ascend_ema_adam.apply_fused_ema_adam_(
               *state(), torch.tensor([0]), 1e-3, 0.9, 0.9, 0.999, 1e-8, 1, True, 0.0))

    # the list op: the torch op's own checks and the aclnn layer's
    def lists(k=3, n=5):
        return [[torch.randn(n) for _ in range(k)] for _ in range(5)]
    expect("list step 0", RuntimeError, r"step", lambda: apply_fused_ema_adam_list(
        *lists(), torch.tensor([0]), lr=1e-3, ema_decay=0.9))
    short = lists()
    short[3] = short[3][:2]
    expect("list lengths", (RuntimeError, ValueError), r"3|2",
           lambda: torch.ops.ascend_ema_adam.apply_fused_ema_adam_list_(
               *short, torch.tensor([1]), 1e-3, 0.9, 0.9, 0.999, 1e-8, 1, True, 0.0))
    mixed = lists()
    mixed[2][1] = torch.zeros(5, dtype=torch.float64)
    expect("list dtype", RuntimeError, r"\[1\]|float64|double",
           lambda: torch.ops.ascend_ema_adam.apply_fused_ema_adam_list_(
               *mixed, torch.tensor([1]), 1e-3, 0.9, 0.9, 0.999, 1e-8, 1, True, 0.0))

    # the CPU device's environment, read by the aclnn library (its aclGetRecentErrMsg)
    os.environ["ASCEND_EMA_ADAM_NUM_THREADS"] = "many"
    expect("environment", RuntimeError, r"ASCEND_EMA_ADAM_NUM_THREADS is 'many'", single(1))
    # ... and through a pybind11 function of _C (c10::Error through pybind11)
    from ascend_ema_adam import _C
    expect("_C pybind11", RuntimeError, r"ASCEND_EMA_ADAM_NUM_THREADS", _C.cpu_threads)
    del os.environ["ASCEND_EMA_ADAM_NUM_THREADS"]

    # _kernels (pybind11, no torch): value and type errors
    x = [np.random.rand(10).astype(np.float32) for _ in range(5)]
    expect("_kernels ValueError", ValueError, r"m is float16",
           lambda: kernels.apply_fused_ema_adam_native(
               x[0], x[1], x[2].astype(np.float16), x[3], x[4], np.array([1], np.int64)))
    expect("_kernels TypeError", TypeError, r"step must be an int64",
           lambda: kernels.apply_fused_ema_adam_native(*x, np.array([1.0])))

    # after all of them the op still works, and twice more each error (nothing left broken)
    t = state()
    npu_apply_fused_ema_adamw(*t, torch.tensor([1]))
    for _ in range(2):
        expect("again", RuntimeError, r"aclnn status 161002", single(0))
    print("done", torch.__version__, ascend_ema_adam.__file__, flush=True)
''')


def test_cpp_errors_reach_python_as_exceptions(tmp_path):
    env = dict(os.environ)
    env.pop("ASCEND_EMA_ADAM_NUM_THREADS", None)
    # in an empty folder: `python -c` puts its working directory first on sys.path, and the
    # package under test is the installed one
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    detail = f"exit {res.returncode}\n--- stdout\n{res.stdout}\n--- stderr\n{res.stderr}"
    assert res.returncode == 0, detail  # negative: killed by that signal (a crash)
    assert res.stdout.rstrip().splitlines()[-1].startswith("done"), detail
    assert sum(line.startswith("ok ") for line in res.stdout.splitlines()) == 15, detail


def _dynamic_definitions(path):
    out = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", str(path)],
                         capture_output=True, text=True, check=True).stdout
    # nm lists the linker's own markers (_edata, _end, __bss_start) too: absolute, not code
    return sorted(line.split()[0] for line in out.splitlines()
                  if line and line.split()[0] not in ("_edata", "_end", "__bss_start", "_init",
                                                      "_fini"))


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
@pytest.mark.parametrize("module", ["_C", "_kernels"])
def test_modules_export_their_init_alone(module):
    import importlib

    mod = importlib.import_module(f"ascend_ema_adam.{module}")
    defined = _dynamic_definitions(Path(mod.__file__))
    assert defined == [f"PyInit_{module}"], (
        f"{mod.__file__} exports {len(defined)} symbols, e.g. {defined[:8]}: every symbol it "
        "defines must bind inside it (csrc/module_exports.map)")


BINDINGS_CHILD = textwrap.dedent(r'''
    import torch
    from ascend_ema_adam import _C, _kernels  # noqa: F401
    from ascend_ema_adam.ops import npu_apply_fused_ema_adamw
    try:  # the path that crashed: the op formats its error (std::ostringstream)
        npu_apply_fused_ema_adamw(*[torch.randn(8) for _ in range(5)], torch.tensor([0]))
    except RuntimeError:
        pass
    print(next(line.split()[-1] for line in open("/proc/self/maps") if "/libstdc++.so" in line))
''')


@pytest.mark.skipif(shutil.which("nm") is None or not sys.platform.startswith("linux"),
                    reason="needs binutils' nm and glibc's dynamic linker (LD_DEBUG)")
def test_cpp_runtime_calls_bind_to_libstdcxx(tmp_path):
    """Every call our modules make into the C++ runtime binds to libstdc++ itself, never to one of
    the copies of libstdc++'s functions that torch's libraries export (16 to 161 per library,
    from the toolchain torch is built with; a copy from another libstdc++ than the process runs
    is how an error message's formatting crashed on torch 2.11): libstdc++ is _C's first library
    (cmake/aea_torch.cmake). The dynamic linker's own record of each binding (LD_DEBUG)."""
    env = dict(os.environ, LD_DEBUG="bindings", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    env.pop("ASCEND_EMA_ADAM_NUM_THREADS", None)
    res = subprocess.run([sys.executable, "-c", BINDINGS_CHILD], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    libstdcxx = res.stdout.split()[-1]
    runtime = {line.split()[0].split("@")[0] for line in subprocess.run(
        ["nm", "-D", "--defined-only", "--format=posix", libstdcxx], capture_output=True,
        text=True, check=True).stdout.splitlines() if line}
    binding = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'")
    ours, elsewhere = 0, []
    for log in tmp_path.glob("ld.*"):
        for m in binding.finditer(log.read_text(errors="replace")):
            source, target, symbol = m.groups()
            if "/ascend_ema_adam/" not in source or symbol.split("@")[0] not in runtime:
                continue
            ours += 1
            if Path(target).resolve() != Path(libstdcxx).resolve():
                elsewhere.append(f"{Path(source).name} -> {target}: {symbol}")
    assert ours > 20, f"only {ours} of our modules' libstdc++ calls seen: the check sees nothing"
    assert not elsewhere, "\n".join(elsewhere[:20])
