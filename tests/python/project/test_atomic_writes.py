"""Every file the package writes goes through ascend_ema_adam._files.atomic_file (or
checkpoint.save, built on it): no call in the package's sources writes a path directly."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "ascend_ema_adam"
# Calls that write a file given a path: methods of any object, and functions of these modules.
METHOD_WRITERS = {"write_text", "write_bytes", "savefig", "to_csv", "to_json", "tofile"}
MODULE_WRITERS = {"torch": {"save"}, "np": {"save", "savez", "savez_compressed", "savetxt"},
                  "numpy": {"save", "savez", "savez_compressed", "savetxt"}, "json": {"dump"},
                  "pickle": {"dump"}, "shutil": {"copy", "copy2", "copyfile", "move"}}


def _direct_writes(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    atomic = _atomic_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(
            function, "id", "")
        module = getattr(function.value, "id", "") if isinstance(function, ast.Attribute) else ""
        if name == "open" and isinstance(function, ast.Name):
            modes = [a for a in node.args[1:2]] + [k.value for k in node.keywords
                                                   if k.arg == "mode"]
            if any(not isinstance(m, ast.Constant) or set(str(m.value)) & set("wax+")
                   for m in modes):
                found.append((node.lineno, "open for writing"))
        elif name in METHOD_WRITERS or name in MODULE_WRITERS.get(module, ()):
            # savefig(file) / torch.save(obj, writer) into a stream atomic_file opened are fine:
            # the target is a name bound by a `with atomic_file(...) as name`.
            target = node.args[1] if name in ("save", "dump") and len(node.args) > 1 else (
                node.args[0] if node.args else None)
            if not (isinstance(target, ast.Name) and target.id in atomic):
                found.append((node.lineno, name))
    return found


def _atomic_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "atomic_file"
                        and isinstance(item.optional_vars, ast.Name)):
                    names.add(item.optional_vars.id)
    # checkpoint.save's stream: torch.save into the hashing writer over atomic_file's file.
    names.add("writer")
    return names


def test_the_package_writes_files_only_atomically():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_files.py":
            continue
        for line, what in _direct_writes(path.read_text()):
            offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {what}")
    assert not offenders, "write through ascend_ema_adam._files.atomic_file:\n" + "\n".join(
        offenders)


def test_the_check_finds_direct_writes():
    planted = ("import json\nfrom pathlib import Path\n"
               "Path('x').write_text('a')\nopen('y', 'w').write('b')\nfig.savefig('z.png')\n"
               "torch.save(obj, 'c.pt')\njson.dump(obj, open('d', mode='a'))\n"
               "with atomic_file('ok') as file:\n    fig.savefig(file)\n    torch.save(o, file)\n"
               "open('r').read()\n")
    assert sorted(line for line, _ in _direct_writes(planted)) == [3, 4, 5, 6, 7, 7]
