"""The operators' signatures as the build reads them (cmake/gen_op_signature.py, one spec JSON
per operator in op_host/<op>/), for the tests that hold code or messages to them."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_module(path: Path):
    """A Python file of the repository outside the package (a build or tool script)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = load_module(ROOT / "cmake" / "gen_op_signature.py")

OPERATORS = sorted(p.name for p in (ROOT / "op_kernel").iterdir()
                   if p.is_dir() and p.name != "common")
SPECS = {op: gen.load(ROOT / "op_host" / op / f"{op}_signature.json") for op in OPERATORS
         if (ROOT / "op_host" / op / f"{op}_signature.json").exists()}
