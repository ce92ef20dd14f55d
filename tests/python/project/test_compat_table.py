"""The README's supported-versions table is tools/compat/versions.toml (what `make compat`
checks), and its newest row is what `make test` uses."""

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (make compat's oldest row): tomli, which pytest itself needs there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[3]
COLUMNS = ["row", "torch", "torch_npu", "Python", "CANN", "megatron-core", "DeepSpeed"]
FIELDS = ["name", "torch", "torch_npu", "python", "cann", "megatron_core", "deepspeed"]


def rows():
    return tomllib.loads((REPO / "tools" / "compat" / "versions.toml").read_text())["row"]


def readme_table():
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Supported versions\n", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    body = [[c.strip().strip("`") for c in ln.strip("|").split("|")] for ln in lines[2:]]
    return header, body


def test_readme_table_is_versions_toml():
    header, body = readme_table()
    assert header[:len(COLUMNS)] == COLUMNS
    expected = [[str(r[f]) or "—" for f in FIELDS] for r in rows()]
    assert [cells[:len(COLUMNS)] for cells in body] == expected


def test_newest_row_is_what_make_test_uses():
    newest = next(r for r in rows() if r["name"] == "newest")
    pins = dict(re.findall(r"^([\w-]+)==(\S+)", (REPO / "requirements-dev.txt").read_text(), re.M))
    assert pins["torch"] == newest["torch"]
    makefile = (REPO / "Makefile").read_text()
    assert f"torch-npu=={newest['torch_npu']}" in makefile
    assert f"--python-version {newest['python']}" in makefile


def test_engines_are_the_extras_pins():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for row in rows():
        assert f"megatron-core=={row['megatron_core']}" in extras["megatron"]
        assert f"deepspeed=={row['deepspeed']}" in extras["deepspeed"]


def test_replacements_name_pinned_requirements():
    """A row replaces only what requirements-dev.txt pins (tools/compat/compat.py refuses
    anything else, and so does this, without building anything)."""
    pinned = set(re.findall(r"^([\w-]+)==", (REPO / "requirements-dev.txt").read_text(), re.M))
    for row in rows():
        names = {re.split(r"[=<>]", r)[0] for r in row["replace"]}
        assert names <= pinned - {"torch"}, (row["name"], names - pinned)
