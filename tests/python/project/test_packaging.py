"""What a pip user meets: the build's message when it cannot see torch (pip's build isolation),
the ``demo`` extra of ``train-demo``, where ``bench`` writes and what its ``--isa`` sets."""

import importlib.util
import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (make compat's oldest row): the same parser from PyPI
    import tomli as tomllib

from ascend_ema_adam.apps import cli

ROOT = Path(__file__).resolve().parents[3]
NO_ISOLATION = "pip install --no-build-isolation ."


def test_build_without_torch_says_which_command_to_use(tmp_path):
    """pip's default build isolation runs CMake with a Python that has no torch: configuring the
    Python build with such an interpreter (a fresh venv) must fail at once, naming the command
    that works, instead of the old "torch is required (pip install torch)"."""
    env_dir = tmp_path / "no-torch"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    assert subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0
    cmake = Path(sys.executable).with_name("cmake")
    result = subprocess.run(
        [cmake, "-S", ROOT, "-B", tmp_path / "build", "-G", "Ninja", "-DAEA_BUILD_PYTHON=ON",
         "-DAEA_BUILD_TESTS=OFF", f"-DPython_EXECUTABLE={python}"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert result.returncode != 0
    message = " ".join((result.stdout + result.stderr).split())
    assert NO_ISOLATION in message, message
    assert "build isolation" in message and str(python) in message
    # the README gives the same command
    assert NO_ISOLATION in (ROOT / "README.md").read_text()


def test_demo_extra_is_declared():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    names = {req.split("=")[0].split(">")[0].split("<")[0].strip() for req in extras["demo"]}
    assert names == {"tqdm", "scikit-learn", "matplotlib"}


@pytest.mark.parametrize("missing,package", [("sklearn", "scikit-learn"), ("tqdm", "tqdm")])
def test_train_demo_without_what_it_needs_names_it(missing, package, monkeypatch, capsys):
    """Each missing package the training needs gives a clear message with a command that works
    here (pip install of the package, or the checkout's extra), before any training."""
    monkeypatch.setitem(sys.modules, missing, None)  # import raises ImportError
    with pytest.raises(SystemExit) as info:
        cli.main(["train-demo", "--epochs", "1"])
    text = str(info.value)
    assert f"pip install {package} " in text and f"(import {missing})" in text, text
    assert "pip install '.[demo]' in a checkout" in text
    assert "epoch" not in capsys.readouterr().out


def test_train_demo_without_matplotlib_trains_and_draws_nothing(monkeypatch, capsys, tmp_path):
    """Only the picture needs matplotlib: without it the demo trains, checks and says so."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "demo.png"
    assert cli.main(["train-demo", "--epochs", "1", "--out", str(out)]) in (0, None)
    printed = capsys.readouterr().out
    assert "plot: none (matplotlib is not installed: pip install matplotlib)" in printed
    assert "golden spot-check" in printed and not out.exists()


def test_install_hints_work_from_a_checkout():
    """The package is not on PyPI: no hint names it as a requirement, and every extra a hint
    installs from the checkout ('.[name]') is declared."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    files = [p for top in ("ascend_ema_adam", "docs", "tools") for p in (ROOT / top).rglob("*")
             if p.suffix in (".py", ".md", ".sh")] + [ROOT / "README.md", ROOT / "Makefile"]
    named = []
    for path in files:
        text = path.read_text()
        assert "ascend-ema-adam[" not in text, path
        named += [(path, extra) for extra in re.findall(r"'\.\[([a-z-]+)\]'", text)]
    assert named and all(extra in extras for _, extra in named), named


def test_bench_writes_to_a_named_directory_and_says_where(tmp_path, monkeypatch, capsys):
    args = cli.build_parser().parse_args(["bench"])
    assert args.out == "ascend-ema-adam-bench"
    from ascend_ema_adam.apps import bench

    monkeypatch.chdir(tmp_path)
    path = bench.output_dir(args.out, out=sys.stdout)
    assert path == tmp_path / "ascend-ema-adam-bench" and path.is_dir()
    assert str(path) in capsys.readouterr().out
    assert cli.build_parser().parse_args(["train-demo"]).out is None


def test_bench_isa_applies_to_torch_and_deepspeed_too(tmp_path):
    """`bench --isa avx2` on an AVX-512 machine stands in for an AVX2-only CPU only if every
    implementation runs AVX2: torch's kernels (its CPU capability, chosen once per process) and
    DeepSpeed's CPU Adam (built for the SIMD width under a name of its own), not only ours. Run
    in a new process: this one's torch has chosen already, and the suite never imports DeepSpeed."""
    if importlib.util.find_spec("deepspeed") is None and not os.environ.get("AEA_REQUIRE_ENGINES"):
        pytest.skip("deepspeed is not installed; `make test` installs it")
    code = """
import json, torch
from ascend_ema_adam.apps import bench_common as bench
out = {"torch": bench._set_torch_isa("avx2", torch)}
try:
    bench._set_torch_isa("avx512", torch)
except RuntimeError as e:
    out["again"] = str(e)
module, builder = bench._deepspeed_builder_for("avx2")
module.CPUAdamBuilder = builder  # as use_isa does: a second call must not build on the first
_, builder = bench._deepspeed_builder_for("avx2")
out["name"], out["args"] = builder().name, builder().cxx_args()
print(json.dumps(out))
"""
    env = dict(os.environ, DS_ACCELERATOR="cpu")
    env.pop("ATEN_CPU_CAPABILITY", None)
    # in an empty folder: `python -c` puts its working directory first on sys.path, and the
    # package under test is the installed one (make compat installs it, not editable)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["torch"] == "AVX2"
    assert "already runs AVX2" in out["again"] and "ATEN_CPU_CAPABILITY=avx512" in out["again"]
    assert out["name"] == "cpu_adam_avx2"
    args = out["args"]
    assert "-D__AVX256__" in args and "-D__AVX512__" not in args
    assert args.index("-mno-avx512f") > max(i for i, a in enumerate(args) if a.startswith("-march"))


def test_one_thread_measurements_leave_the_thread_counts_as_they_were(monkeypatch):
    """The bench's one-thread measurements (the op's call overhead, the host time per call)
    restore torch's thread count and ASCEND_EMA_ADAM_NUM_THREADS: the cases measured after them
    (the 8-bit row) had run on one thread while the report said all CPUs."""
    import torch
    from ascend_ema_adam.apps import bench, bench_steps

    monkeypatch.setenv("ASCEND_EMA_ADAM_NUM_THREADS", "2")
    before = torch.get_num_threads()
    overhead = bench._op_overhead(torch)
    host = bench_steps.host_overhead(torch, count=4)
    assert torch.get_num_threads() == before
    assert os.environ["ASCEND_EMA_ADAM_NUM_THREADS"] == "2"
    assert all(us > 0 for us in overhead.values()) and host["tensors"] == 4


def test_the_command_line_says_its_version(capsys):
    """`ascend-ema-adam --version`: the package's version (pyproject's), and exit status 0."""
    import ascend_ema_adam

    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out.strip() == f"ascend-ema-adam {version}"
    assert ascend_ema_adam.__version__ == version


def test_bench_targets_say_what_is_measured_and_which_way_is_better():
    """A bench target line: MET/MISS, the target, the measured value with its unit and whether
    lower or higher is better."""
    import io

    from ascend_ema_adam.apps.bench_common import TIME_RATIO, print_targets

    out = io.StringIO()
    print_targets("Targets", [
        {"target": "step: ours <= 0.5 us per tensor", "measured": 0.936, "limit": 0.5,
         "le": True, "met": False, "unit": "us per tensor"},
        {"target": "fp32: fused <= 0.95 x torch", "measured": 0.81, "limit": 0.95, "le": True,
         "met": True, "unit": TIME_RATIO},
        {"target": "fp32: fused >= 90% of the copy probe", "measured": 0.93, "limit": 0.9,
         "le": False, "met": True, "unit": "of the copy probe's bytes per second"}], out)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["", "Targets:"] and lines[2:] == [
        "  MISS  step: ours <= 0.5 us per tensor: measured 0.936 us per tensor (lower is better)",
        "  MET   fp32: fused <= 0.95 x torch: measured 0.810 time ratio, ours / theirs (lower is "
        "better)",
        "  MET   fp32: fused >= 90% of the copy probe: measured 0.930 of the copy probe's bytes per "
        "second (higher is better)"]
