#!/usr/bin/env python3
"""Operators independent by construction: no C/C++ source of one operator includes a file of
another, and no shared source includes a file of any operator (docs/ARCHITECTURE.md, "Adding an
operator").

The operators are found, not named: every folder of op_kernel/ but common/ is one. A file belongs
to operator <op> when it lies in a layer's folder of that name (op_kernel/<op>/, op_host/<op>/,
runtime/<op>/, csrc/ops/<op>/), is one of its C++ tests (a file under tests/cpp/ whose name
carries <op>: the longest operator name it contains) or one of its public aclnn headers
(include/aclnnop/aclnn_*<op>*.h, likewise); every other file of those trees is shared (the
layers' common/ folders, csrc/common/, runtime/acl/, runtime/native/, twin/, ...).

Rules, for every #include of op_kernel/, op_host/, runtime/, csrc/, twin/ and tests/cpp/ that
names a file of the repository (resolved as the compiler would: beside the including file first,
then by its path among the repository's files):
  - an operator's file includes only its own operator's files and shared ones;
  - a shared file includes only shared files; a shared C++ test may include the public aclnn
    header of any operator (tests of the runtime drive it through an operator's C API).
A folder of those layers that is neither shared nor an operator's is reported too: nothing goes
unchecked. Exit status 1 on any finding; each names the file, the line and the include.

Usage: tools/operator_independence/run.py [--root DIR]
"""
import argparse
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".h", ".hpp", ".hh", ".inc", ".c", ".cc", ".cpp", ".cxx"}
# The trees whose includes are checked, and the public headers includes may name.
CHECKED = ("op_kernel", "op_host", "runtime", "csrc", "twin", "tests/cpp")
PUBLIC = "include"
# Each layer's folders: the shared ones; any other folder must be an operator's.
LAYERS = {
    "op_kernel": {"common"},
    "op_host": {"common"},
    "runtime": {"common", "acl", "native"},
    "csrc/ops": set(),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


class Tree:
    def __init__(self, root: Path):
        self.root = root
        kernel = root / "op_kernel"
        self.operators = sorted(p.name for p in kernel.iterdir() if p.is_dir() and p.name != "common")
        self.files = [p for top in (*CHECKED, PUBLIC) if (root / top).is_dir()
                      for p in sorted((root / top).rglob("*"))
                      if p.is_file() and p.suffix in SOURCE_SUFFIXES]
        self.by_path = {p.relative_to(root).as_posix(): p for p in self.files}

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def named_operator(self, name: str):
        """The longest operator name `name` contains (None: none)."""
        found = [op for op in self.operators if op in name]
        return max(found, key=len) if found else None

    def owner(self, rel: str):
        """The operator a file belongs to, or None for a shared file."""
        parts = rel.split("/")
        for layer in LAYERS:
            depth = layer.count("/") + 1
            if rel.startswith(layer + "/") and len(parts) > depth + 1:
                folder = parts[depth]
                return folder if folder in self.operators else None
        if rel.startswith("tests/cpp/") or rel.startswith(PUBLIC + "/aclnnop/"):
            return self.named_operator(parts[-1])
        return None

    def unknown_folders(self):
        """Folders of the layers that are neither shared nor an operator's."""
        out = []
        for layer, shared in LAYERS.items():
            base = self.root / layer
            if base.is_dir():
                out += [f"{layer}/{p.name}/" for p in sorted(base.iterdir())
                        if p.is_dir() and p.name not in shared and p.name not in self.operators]
        return out

    def resolve(self, including: Path, target: str):
        """The repository files an #include "target" may name: beside the including file if it
        is there (as the compiler looks first), else every file whose path ends with it."""
        beside = (including.parent / target).resolve()
        try:
            rel = beside.relative_to(self.root.resolve()).as_posix()
        except ValueError:
            rel = None
        if rel in self.by_path:
            return [rel]
        suffix = "/" + target.lstrip("./")
        return [r for r in self.by_path if ("/" + r).endswith(suffix)]


def check(root: Path):
    tree = Tree(root)
    findings = [f"{folder}: neither a shared folder nor an operator's (operators: the folders of "
                f"op_kernel/)" for folder in tree.unknown_folders()]
    includes = 0
    checked = [p for p in tree.files if not tree.rel(p).startswith(PUBLIC + "/")]
    for path in checked:
        rel = tree.rel(path)
        mine = tree.owner(rel)
        is_test = rel.startswith("tests/")
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            targets = tree.resolve(path, m.group(2))
            if not targets:
                continue  # a system or third-party header
            includes += 1
            owners = {t: tree.owner(t) for t in targets}
            bad = []
            for target, theirs in owners.items():
                if theirs is None or theirs == mine:
                    continue
                if mine is None and is_test and target.startswith(PUBLIC + "/aclnnop/"):
                    continue
                bad.append((target, theirs))
            for target, theirs in bad:
                who = f"operator {mine}'s file" if mine else "shared file"
                findings.append(f"{rel}:{number}: {who} includes {m.group(1)}{m.group(2)}"
                                f"{'>' if m.group(1) == '<' else chr(34)} -> {target} "
                                f"(operator {theirs}'s)")
    return tree, checked, includes, findings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = ap.parse_args(argv)
    tree, checked, includes, findings = check(args.root.resolve())
    for finding in findings:
        print(f"operator-independence: {finding}")
    verdict = "FAILED" if findings else "ok"
    print(f"operator-independence: {verdict}: {len(tree.operators)} operators "
          f"({', '.join(tree.operators)}), {len(checked)} files, {includes} includes of the "
          f"repository's files, {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
