#!/usr/bin/env python3
"""Compares the aclnn declarations CANN's op_build generated with include/aclnnop/.

    aclnn_decl_compare.py GENERATED_DIR INCLUDE_ACLNNOP_DIR

Every function that a generated aclnn_<op>.h declares must be declared in the file of the same
name under INCLUDE_ACLNNOP_DIR with the same return type and the same parameters: types, names and
order. Types are compared as C types: whitespace, the order of the specifiers (`long unsigned` is
`unsigned long`) and where `const` stands within one declarator level (`const T *` is `T const *`)
do not matter; anything else does, top-level qualifiers included. One line per function, details
indented below it; exit status 1 if any function differs or is missing. Run by
tools/cann_op_build/run.sh.
"""
import difflib
import pathlib
import re
import sys

PREFIX = "cann-op-build:"
QUALIFIERS = {"const", "volatile", "restrict"}
STORAGE = {"extern", "static", "inline"}
INTEGER_WORDS = {"signed", "unsigned", "short", "long", "int", "char"}
TOKEN = re.compile(r"[A-Za-z_]\w*|\*|\S")
DECLARATION = re.compile(r"^(?P<ret>.*?)\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)$", re.S)


def remove_attributes(text):
    """Drops every __attribute__((...)) (balanced parentheses)."""
    out, i = [], 0
    while (j := text.find("__attribute__", i)) >= 0:
        out.append(text[i:j])
        k, depth = text.index("(", j), 0
        while True:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        i = k + 1
    out.append(text[i:])
    return "".join(out)


def statements(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)
    text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)
    text = re.sub(r'extern\s+"C"', " ", remove_attributes(text))
    for statement in re.split(r"[;{}]", text):
        yield " ".join(statement.split())


def specifiers(words):
    """Canonical base specifiers: sorted, integer spellings reduced (`unsigned long int` is
    `long unsigned`)."""
    words = list(words)
    if words and set(words) <= INTEGER_WORDS and "char" not in words:
        if "signed" in words:
            words.remove("signed")
        if not words:
            words = ["int"]
        if len(words) > 1 and "int" in words:
            words.remove("int")
    return tuple(sorted(words))


class Type:
    def __init__(self, tokens):
        self.tokens = tokens
        levels = [[]]
        for token in tokens:
            if token == "*":
                levels.append([])
            else:
                levels[-1].append(token)
        base = levels[0]
        self.key = ((specifiers(t for t in base if t not in QUALIFIERS),
                     frozenset(t for t in base if t in QUALIFIERS)),) + \
            tuple(frozenset(level) for level in levels[1:])

    def text(self, name=""):
        text = re.sub(r"\s*\*\s*", "*", " ".join(self.tokens))
        text = re.sub(r"(\w)\*", r"\1 *", text)
        if not name:
            return text
        return text + name if text.endswith("*") else f"{text} {name}"


class Parameter:
    def __init__(self, text):
        tokens = TOKEN.findall(text)
        if len(tokens) > 1 and re.fullmatch(r"[A-Za-z_]\w*", tokens[-1]) and \
                tokens[-1] not in QUALIFIERS:
            self.name, tokens = tokens[-1], tokens[:-1]
        else:
            self.name = ""
        self.type = Type(tokens)
        self.key = (self.type.key, self.name)

    def __str__(self):
        return self.type.text(self.name)


class Declaration:
    def __init__(self, ret, name, params):
        self.name = name
        self.ret = Type([t for t in TOKEN.findall(ret) if t not in STORAGE])
        parts = [p.strip() for p in params.split(",")] if params.strip() else []
        # `f(void)` takes no arguments; `f()` is no prototype in C: never the same declaration.
        self.prototype = bool(parts)
        self.params = [] if parts == ["void"] else [Parameter(p) for p in parts]


def declarations(path):
    """The function declarations of a C header, by name, in file order."""
    found = {}
    for statement in statements(path.read_text()):
        match = DECLARATION.match(statement)
        if not match or "typedef" in statement.split() or not match["ret"].strip() or \
                any(c in match["ret"] for c in "()=") or "(" in match["params"]:
            continue
        found[match["name"]] = Declaration(match["ret"], match["name"], match["params"])
    return found


def differences(generated, ours):
    """What differs between two declarations of one function, one line each."""
    lines = []
    if generated.ret.key != ours.ret.key:
        lines.append(f"return type: generated `{generated.ret.text()}`, ours `{ours.ret.text()}`")
    if generated.prototype != ours.prototype:
        spelling = {True: "a parameter list", False: "`()`, no prototype in C"}
        lines.append(f"generated has {spelling[generated.prototype]}, ours"
                     f" {spelling[ours.prototype]}")
    g, o = generated.params, ours.params
    if len(g) != len(o):
        lines.append(f"{len(g)} parameters generated, {len(o)} in ours")
    matcher = difflib.SequenceMatcher(None, [p.key for p in g], [p.key for p in o], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2)):
                what = [w for w, differs in (("name", g[i].name != o[j].name),
                                             ("type", g[i].type.key != o[j].type.key)) if differs]
                note = ""
                if g[i].type.key[:-1] == o[j].type.key[:-1] and "type" in what:
                    note = ": top-level qualifier only, the function types are the same"
                lines.append(f"parameter {i + 1}: generated `{g[i]}`, ours `{o[j]}`"
                             f" ({' and '.join(what)} differ{'s' if len(what) == 1 else ''}{note})")
            continue
        for i in range(i1, i2):
            lines.append(f"parameter {i + 1}: generated `{g[i]}`, missing from ours")
        for j in range(j1, j2):
            lines.append(f"ours has parameter {j + 1} `{o[j]}`, which the generated one has not")
    return lines


def main(generated_dir, ours_dir):
    shown = ours_dir.rstrip("/")
    generated_dir, ours_dir = pathlib.Path(generated_dir), pathlib.Path(ours_dir)
    if not ours_dir.is_dir():
        print(f"{PREFIX} FAILED: {ours_dir} is not a directory", file=sys.stderr)
        return 1
    headers = sorted(generated_dir.glob("aclnn_*.h"))
    if not headers:
        print(f"{PREFIX} FAILED: no aclnn_*.h in {generated_dir}", file=sys.stderr)
        return 1
    ours_by_file = {p.name: declarations(p) for p in sorted(ours_dir.glob("*.h"))}
    where = {name: file for file, decls in ours_by_file.items() for name in decls}
    total = differing = 0
    for header in headers:
        generated = declarations(header)
        ours = ours_by_file.get(header.name)
        for name, declaration in generated.items():
            total += 1
            if ours is not None and name in ours:
                lines = differences(declaration, ours[name])
                if not lines:
                    print(f"{PREFIX} {name}: identical")
                    continue
                print(f"{PREFIX} {name}: differs from {shown}/{header.name}:")
            else:
                missing = f"{PREFIX} {name}: missing from {shown}/{header.name}"
                if ours is None:
                    missing += " (no such file)"
                lines = []
                if name in where:
                    lines = differences(declaration, ours_by_file[where[name]][name])
                    missing += f"; {shown}/{where[name]} declares it" + \
                        (", and differs:" if lines else ", identically")
                print(missing)
            differing += 1
            for line in lines:
                print(f"    {line}")
        if ours is not None:
            extra = [n for n in ours if n not in generated]
            if extra:
                print(f"{PREFIX} note: {shown}/{header.name} also declares {', '.join(extra)},"
                      f" which op_build does not generate in {header.name}")
    generated_names = {h.name for h in headers}
    for file in ours_by_file:
        if file not in generated_names:
            print(f"{PREFIX} note: {shown}/{file}: op_build generates no file of this name")
    if differing:
        print(f"{PREFIX} FAILED: {differing} of {total} aclnn declarations generated by CANN's"
              f" op_build differ from {shown}/ or are missing there", file=sys.stderr)
        return 1
    print(f"{PREFIX} {total} aclnn declarations generated by CANN's op_build match {shown}/")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    sys.exit(main(sys.argv[1], sys.argv[2]))
