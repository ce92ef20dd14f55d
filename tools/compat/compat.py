#!/usr/bin/env python3
"""`make compat`: every row of the supported-versions table (tools/compat/versions.toml, the
README's "Supported versions") built and tested as a user of that stack would build it.

    compat.py [--rows NAME,...] [--steps STEP,...] [--work build/compat]

For each row, in build/compat/<row>/ (kept between runs; each step logs to <step>.log there):

  python    a CPython of the row's version: python3.X on PATH, else pyenv's
            (~/.pyenv/versions/3.X.*, or $PYENV_ROOT); SKIPPED without one, saying so
  venv      a venv with torch and the row's requirements (and the engines), installed from
            build/compat/wheels/<row>/ -- pip downloads into it once; SKIPPED when a download
            is impossible and the wheels are not there
  build     `pip install --no-build-isolation .` into that venv, as the README tells a user
            (build dir build/compat/<row>/build: a second run rebuilds what changed)
  tests     the CPU Python suite (tests/python) against the installed package
  errors    tests/python/ops/test_error_paths.py alone: our C++ errors reach Python as exceptions
  npu-abi   the torch_npu wheels of the row (x86_64 and aarch64, never installed) unpacked, the
            NPU sources compiled against their headers and the ABI check (tools/npu_abi_check/run.sh)
  npu-run   with the CANN snapshots (source /work/snap/env.sh): the real torch_npu of the row in a
            venv of its own, stand-in CANN libraries, the case table (tools/torch_npu_run/run.sh);
            SKIPPED without them

Prints a line per step (PASSED / FAILED / SKIPPED, with its time and what it counted) and a
table at the end; exits 1 if a step failed (a SKIPPED step does not fail the run, it says why).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
STEPS = ("python", "venv", "build", "tests", "errors", "npu-abi", "npu-run")
SNAPSHOT_VARS = ("CANN_OPBASE_DIR", "CANN_RUNTIME_DIR", "CANN_METADEF_DIR", "ASC_DEVKIT_DIR",
                 "ASC_TOOLS_DIR")
PIP = ["-m", "pip", "--disable-pip-version-check"]


class Skip(Exception):
    """The step cannot run here; the message says why."""


class Fail(Exception):
    """The step ran and failed; the message says how (its log has the rest)."""


@dataclass
class Row:
    name: str
    python: str
    torch: str
    torch_npu: str
    cann: str
    megatron_core: str
    deepspeed: str
    replace: list[str]
    work: Path = field(init=False)
    interpreter: Path | None = None
    results: dict[str, tuple[str, float, str]] = field(default_factory=dict)

    @property
    def venv(self) -> Path:
        return self.work / "venv"

    @property
    def py(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def cp(self) -> str:
        return "cp" + self.python.replace(".", "")


def load_rows(path: Path) -> list[Row]:
    return [Row(**r) for r in tomllib.loads(path.read_text())["row"]]


def run(cmd: list, log: Path, env: dict | None = None, cwd: Path = REPO, append=False) -> int:
    """Runs cmd with its output into log; returns the exit status."""
    with open(log, "a" if append else "w") as out:
        out.write(f"$ {' '.join(map(str, cmd))}\n")
        out.flush()
        return subprocess.run([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT,
                              env=env, cwd=cwd).returncode


def tail(log: Path, n: int = 15) -> str:
    lines = log.read_text(errors="replace").splitlines()
    return "\n".join("    " + line for line in lines[-n:])


# ---- python: a CPython of the row's version -----------------------------------------------------

def version_of(exe: Path | str) -> str | None:
    try:
        out = subprocess.run([str(exe), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def find_python(version: str) -> Path:
    """python<version> on PATH (one that really is that version: a pyenv shim of another
    version is not), else the newest patch release of it in pyenv's versions folder."""
    on_path = shutil.which(f"python{version}")
    if on_path and version_of(on_path) == version:
        return Path(on_path)
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(pyenv_root.glob(f"versions/{version}.*/bin/python{version}"),
                   key=lambda p: [int(x) for x in re.findall(r"\d+", p.parts[-3])])
    for exe in reversed(found):
        if version_of(exe) == version:
            return exe
    raise Skip(f"no CPython {version}: neither python{version} on PATH nor one in "
               f"{pyenv_root}/versions/{version}.* (pyenv: `pyenv install {version}` builds one "
               f"from python.org's sources; a distribution's python{version} package also works)")


def step_python(row: Row, log: Path) -> str:
    row.interpreter = find_python(row.python)
    return str(row.interpreter)


# ---- venv: torch, the row's requirements and the engines, from a wheel cache --------------------

def requirements(row: Row) -> tuple[list[str], list[str]]:
    """(the venv's requirements, the engines'): requirements-dev.txt with the row's torch and
    its replacements; megatron-core (no dependencies, as `make test`) and DeepSpeed."""
    replaced = {re.split(r"[=<>]", r)[0].lower(): r for r in row.replace}
    reqs = [f"torch=={row.torch}"]
    for line in (REPO / "requirements-dev.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name = re.split(r"[=<>]", line)[0].lower()
        if name != "torch":
            reqs.append(replaced.pop(name, line))
    if replaced:
        raise Fail(f"versions.toml replaces what requirements-dev.txt does not pin: {replaced}")
    return reqs, [f"deepspeed=={row.deepspeed}", f"megatron-core=={row.megatron_core}"]


def pip_install(row: Row, log: Path, args: list[str], wheels: Path) -> None:
    """pip install args from the wheel cache alone; what is not there is downloaded into it
    first (then installed from it, so a second run needs no network)."""
    if run([row.py, *PIP, "install", "--no-index", "--find-links", wheels, *args], log,
           append=True) == 0:
        return
    download = [a for a in args if a not in ("--no-build-isolation", "--no-deps")]
    deps = [] if "--no-deps" not in args else ["--no-deps"]
    if run([row.py, *PIP, "download", "-d", wheels, *deps, *download], log, append=True) != 0:
        last = [ln for ln in log.read_text().splitlines() if "ERROR" in ln][-1:]
        raise Skip(f"cannot download {' '.join(download[:3])}...: {''.join(last) or 'see log'} "
                   f"(put the wheels into {wheels} to run offline)")
    if run([row.py, *PIP, "install", "--no-index", "--find-links", wheels, *args], log,
           append=True) != 0:
        raise Fail(f"pip install from {wheels} failed:\n{tail(log)}")


def step_venv(row: Row, log: Path) -> str:
    if row.interpreter is None:
        raise Skip("no interpreter (the python step was skipped)")
    reqs, engines = requirements(row)
    constraints = REPO / "requirements-engines.txt"
    stamp_text = "\n".join([str(row.interpreter), *reqs, *engines, constraints.read_text()])
    stamp = row.venv / ".compat-stamp"
    if stamp.exists() and stamp.read_text() == stamp_text:
        return "cached"
    shutil.rmtree(row.venv, ignore_errors=True)
    log.write_text("")
    if run([row.interpreter, "-m", "venv", row.venv], log, append=True) != 0:
        raise Fail(f"python -m venv failed:\n{tail(log)}")
    wheels = row.work.parent / "wheels" / row.name
    wheels.mkdir(parents=True, exist_ok=True)
    pip_install(row, log, reqs, wheels)
    # The engines after torch, without build isolation (DeepSpeed builds against that torch),
    # megatron-core without its declared dependencies: as the Makefile's engines stamp. Held to
    # the row's pins too: `pip download` does not see what is installed, and DeepSpeed's
    # unpinned torch would fetch the newest torch (gigabytes) into the cache for nothing.
    pins = row.work / "constraints.txt"
    pins.write_text(constraints.read_text() + "\n".join(reqs) + "\n")
    pip_install(row, log, ["--no-build-isolation", "-c", str(pins), engines[0]], wheels)
    pip_install(row, log, ["--no-deps", engines[1]], wheels)
    stamp.write_text(stamp_text)
    version = subprocess.run([row.py, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    return f"torch {version}"


# ---- build: the package as a user builds it ------------------------------------------------------

def step_build(row: Row, log: Path) -> str:
    if not row.py.exists():
        raise Skip("no venv")
    env = dict(os.environ, PATH=f"{row.venv / 'bin'}:{os.environ['PATH']}")
    start = time.monotonic()
    # (the C++ test programs too, as `make python` builds them: the suite's twin-rule tests run them)
    status = run([row.py, *PIP, "install", "--no-build-isolation", "--no-deps",
                  f"--config-settings=build-dir={row.work / 'build'}",
                  "--config-settings=cmake.define.AEA_BUILD_TESTS=ON", "."],
                 log, env=env)
    if status != 0:
        errors = [ln for ln in log.read_text(errors="replace").splitlines()
                  if "error" in ln.lower()][:12]
        raise Fail("pip install --no-build-isolation . failed:\n" + ("\n".join(
            "    " + e for e in errors) or tail(log)))
    return f"built in {time.monotonic() - start:.0f} s"


# ---- tests, errors: the CPU suite against the installed package ---------------------------------

def pytest_counts(log: Path) -> str:
    last = [ln for ln in log.read_text(errors="replace").splitlines()
            if re.search(r"\d+ (passed|failed|error)", ln)]
    return last[-1].strip("= ") if last else "no pytest summary"


def run_pytest(row: Row, log: Path, paths: list[str]) -> str:
    if not (row.venv / ".compat-stamp").exists():
        raise Skip("no venv")
    installed = subprocess.run([row.py, "-c", "import ascend_ema_adam, os; "
                                "print(os.path.dirname(ascend_ema_adam.__file__))"],
                               capture_output=True, text=True, cwd="/")
    if installed.returncode != 0:
        raise Skip("the package is not installed in the venv (the build step failed)")
    # The installed package, not the source tree: pytest's script puts its own folder first on
    # sys.path, never the working directory; every engine's tests must run, not skip.
    env = dict(os.environ, AEA_REQUIRE_ENGINES="1", PYTHONDONTWRITEBYTECODE="1",
               AEA_CPP_BIN=str(row.work / "build" / "bin"))
    status = run([row.venv / "bin" / "pytest", "-q", "-p", "no:cacheprovider", "-rfEs", *paths],
                 log, env=env)
    counts = pytest_counts(log)
    if status != 0:
        failed = [ln for ln in log.read_text(errors="replace").splitlines()
                  if ln.startswith(("FAILED", "ERROR"))][:15]
        raise Fail(f"{counts}\n" + "\n".join("    " + f for f in failed))
    where = installed.stdout.strip()
    if str(REPO / "ascend_ema_adam") == where:
        raise Fail(f"the tests imported the source tree, not the installed package ({where})")
    return counts


def step_tests(row: Row, log: Path) -> str:
    return run_pytest(row, log, ["tests/python"])


def step_errors(row: Row, log: Path) -> str:
    return run_pytest(row, log, ["tests/python/ops/test_error_paths.py"])


# ---- npu-abi: the NPU sources against the row's torch_npu headers, the ABI check ----------------

def torch_npu_wheels(row: Row, log: Path) -> dict[str, Path]:
    """The x86_64 and aarch64 torch_npu wheels of the row (downloaded once, never installed)."""
    wheels = row.work.parent / "wheels" / "torch_npu"
    wheels.mkdir(parents=True, exist_ok=True)
    found = {}
    for arch in ("x86_64", "aarch64"):
        pattern = f"torch_npu-{row.torch_npu}-{row.cp}-{row.cp}-*{arch}.whl"
        have = sorted(wheels.glob(pattern))
        if not have:
            status = run([sys.executable, *PIP, "download", "--no-deps", "--only-binary=:all:",
                          "--platform", f"manylinux_2_28_{arch}", "--python-version", row.python,
                          f"torch-npu=={row.torch_npu}", "-d", wheels], log, append=True)
            have = sorted(wheels.glob(pattern))
            if status != 0 or not have:
                raise Skip(f"cannot download torch-npu=={row.torch_npu} for {arch} / {row.cp} "
                           f"(put it into {wheels} to run offline)")
        found[arch] = have[-1]
    return found


def step_npu_abi(row: Row, log: Path) -> str:
    if not (row.work / "build" / "CMakeCache.txt").exists():
        raise Skip("the package is not built (the build step)")
    log.write_text("")
    wheels = torch_npu_wheels(row, log)
    unpacked = row.work / "torch_npu"
    stamp = unpacked / ".stamp"
    names = "\n".join(sorted(w.name for w in wheels.values()))
    if not stamp.exists() or stamp.read_text() != names:
        shutil.rmtree(unpacked, ignore_errors=True)
        staged = row.work / "torch_npu_wheels"
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir()
        for w in wheels.values():
            (staged / w.name).symlink_to(w)
        if run([sys.executable, REPO / "tools" / "npu_abi_check" / "unpack_torch_npu.py", staged, unpacked], log,
               append=True) != 0:
            raise Fail(f"unpacking the wheels failed:\n{tail(log)}")
        stamp.write_text(names)
    env = dict(os.environ, PATH=f"{row.venv / 'bin'}:{os.environ['PATH']}")
    status = run([REPO / "tools" / "npu_abi_check" / "run.sh", unpacked, row.py, row.work / "build",
                  row.work / "npu_check"], log, env=env, append=True)
    text = log.read_text(errors="replace")
    if status != 0:
        raise Fail(f"the NPU sources against torch_npu {row.torch_npu}:\n{tail(log, 25)}")
    compiled = re.search(r"npu-check: (\d+) NPU source\(s\) compile against (.*) headers", text)
    needed = re.search(r"npu-abi-check: \d+ NPU object\(s\) need these symbol\(s\) of "
                       r"torch_npu / op-plugin, each exported by the wheels for (.*): (\d+)", text)
    if not compiled or not needed or "self-test ok" not in text:
        raise Fail(f"unexpected output of tools/npu_abi_check/run.sh:\n{tail(log)}")
    return (f"{compiled[1]} NPU sources compile against {compiled[2]}'s headers; the "
            f"{needed[2]} torch_npu symbols they need are exported for {needed[1]}; the "
            "self-test is refused")


# ---- npu-run: the real torch_npu of the row on stand-in CANN libraries --------------------------

def cpu_torch_wheel(row: Row, log: Path) -> Path | None:
    """For a row whose torch is PyPI's CUDA build (x86_64): torch's CPU build of that version,
    which torch_npu's README asks for on x86_64 (from download.pytorch.org/whl/cpu, cached with
    the row's wheels), or None where it cannot be had: the run then uses the CUDA build."""
    cuda = subprocess.run([row.py, "-c", "import torch; print(torch.version.cuda or '')"],
                          capture_output=True, text=True).stdout.strip()
    if not cuda:
        return None
    wheels = row.work.parent / "wheels" / row.name
    pattern = f"torch-{row.torch}+cpu-{row.cp}-{row.cp}-*x86_64.whl"
    if not sorted(wheels.glob(pattern)):
        run([sys.executable, *PIP, "download", "--no-deps", "--only-binary=:all:", "--timeout", "15",
             "--retries", "0", "--index-url", "https://download.pytorch.org/whl/cpu",
             "--python-version", row.python, "--platform", "manylinux_2_28_x86_64",
             f"torch=={row.torch}+cpu", "-d", wheels], log, append=True)
    found = sorted(wheels.glob(pattern))
    return found[-1] if found else None


def step_npu_run(row: Row, log: Path) -> str:
    missing = [v for v in SNAPSHOT_VARS if not os.environ.get(v)]
    if missing:
        raise Skip(f"set {', '.join(missing)} (source /work/snap/env.sh: snapshots of hicann/opbase, "
                   "runtime, metadef, asc-devkit and asc-tools) to run the real torch_npu on "
                   "stand-in CANN libraries")
    if not (row.venv / ".compat-stamp").exists():
        raise Skip("no venv")
    log.write_text("")
    wheel = torch_npu_wheels(row, log)["x86_64"]
    env = dict(os.environ, PATH=f"{row.venv / 'bin'}:{os.environ['PATH']}")
    # CANN's host stack (op_build's generated aclnn, opbase, metadef): shared with make npu-check,
    # independent of torch; cached.
    for script in ("tools/cann_op_build/run.sh", "tools/cann_host/build.sh"):
        if run([REPO / script], log, env=env, append=True) != 0:
            raise Fail(f"{script} failed:\n{tail(log)}")
    env.update(TORCH_NPU_WHEEL=str(wheel), TORCH_NPU_WORK=str(row.work / "torch_npu_run"),
               TORCH_NPU_BASE_PYTHON=str(row.py), TORCH_NPU_VERSION=row.torch_npu)
    cpu_torch = cpu_torch_wheel(row, log)
    if cpu_torch is not None:
        env["TORCH_NPU_TORCH_WHEEL"] = str(cpu_torch)
    status = run([REPO / "tools" / "torch_npu_run" / "run.sh"], log, env=env, append=True)
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith("torch-npu:")]
    errors = row.work / "torch_npu_run" / "cases.err"
    if (status != 0 and cpu_torch is None and errors.exists()
            and "Duplicated key" in errors.read_text(errors="replace")):
        raise Skip(f"torch_npu {row.torch_npu} aborts at import beside PyPI's CUDA build of torch "
                   f"{row.torch} ({next(ln.strip() for ln in errors.read_text().splitlines() if 'Duplicated key' in ln)}): "
                   f"on x86_64 it needs torch's CPU build, as its README says, and "
                   f"download.pytorch.org/whl/cpu cannot be reached here (put "
                   f"torch-{row.torch}+cpu-{row.cp}-{row.cp}-manylinux_2_28_x86_64.whl into "
                   f"{row.work.parent / 'wheels' / row.name} to run it)")
    if status != 0:
        raise Fail("\n".join("    " + ln for ln in lines[-12:]) or tail(log))
    return next((ln.removeprefix("torch-npu: ") for ln in reversed(lines) if "cases through" in ln),
                "passed")


STEP_FUNCTIONS = {"python": step_python, "venv": step_venv, "build": step_build,
                  "tests": step_tests, "errors": step_errors, "npu-abi": step_npu_abi,
                  "npu-run": step_npu_run}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"of {', '.join(STEPS)}")
    parser.add_argument("--work", type=Path, default=REPO / "build" / "compat")
    args = parser.parse_args()
    rows = load_rows(Path(__file__).with_name("versions.toml"))
    wanted = [r for r in args.rows.split(",") if r]
    unknown = set(wanted) - {r.name for r in rows}
    if unknown:
        parser.error(f"no such row: {', '.join(sorted(unknown))} (rows: {', '.join(r.name for r in rows)})")
    rows = [r for r in rows if not wanted or r.name in wanted]
    steps = [s for s in args.steps.split(",") if s]
    if set(steps) - set(STEPS):
        parser.error(f"steps are {', '.join(STEPS)}")
    start = time.monotonic()
    for row in rows:
        row.work = args.work / row.name
        row.work.mkdir(parents=True, exist_ok=True)
        print(f"compat: row {row.name}: torch {row.torch}, torch_npu {row.torch_npu}, "
              f"Python {row.python}", flush=True)
        for step in STEPS:
            if step not in steps and step != "python":
                continue
            log = row.work / f"{step}.log"
            t0 = time.monotonic()
            try:
                verdict, detail = "PASSED", STEP_FUNCTIONS[step](row, log)
            except Skip as e:
                verdict, detail = "SKIPPED", str(e)
            except Fail as e:
                verdict, detail = "FAILED", f"{e} (log: {log.relative_to(REPO) if log.is_relative_to(REPO) else log})"
            seconds = time.monotonic() - t0
            row.results[step] = (verdict, seconds, detail)
            print(f"compat: {row.name} {step}: {verdict} ({seconds:.0f} s): {detail}", flush=True)
    print(f"\ncompat: {len(rows)} row(s) in {time.monotonic() - start:.0f} s")
    width = max(len(s) for s in STEPS)
    for row in rows:
        cells = "  ".join(f"{s:<{width}} {row.results[s][0]}" for s in STEPS if s in row.results)
        print(f"  {row.name:<8} {cells}")
    failed = any(v == "FAILED" for row in rows for v, *_ in row.results.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
