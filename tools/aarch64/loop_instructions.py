"""Instructions per element of the native kernels' inner loops, read off the built aarch64 objects
(docs/PERFORMANCE.md, "aarch64 (Kunpeng 920)"; the speed itself cannot be measured under qemu).

    python tools/aarch64/loop_instructions.py build/aarch64/gcc12-torch-2.7.1

For each case (an operator's loop instantiation on the NEON and the portable backend) it
disassembles the function (aarch64-linux-gnu-objdump), finds its innermost loops (a branch
back to an earlier address), keeps the one that holds the most updates (square roots), and prints the instructions of
the loop body per element: elements per iteration = lanes of its square roots (fsqrt v.4s: 4,
fsqrt s: 1; every update takes one per element), with the loads, stores and arithmetic among them.
"""

import re
import subprocess
import sys
from pathlib import Path

OBJDUMP = "aarch64-linux-gnu-objdump"
NATIVE = "runtime/native/CMakeFiles/aea_native.dir"
ENTRIES = f"{NATIVE}/ema_adam_entries_{{isa}}.cpp.o"
ADAM8 = (f"{NATIVE}/__/apply_fused_ema_adam8bit_list/native/"
         "apply_fused_ema_adam8bit_list_native_{isa}.cpp.o")
BACKEND = {"neon": "Neon", "generic": "Scalar"}
NS = r"ascend_ema_adam::native::\(anonymous namespace\)::"
KIND = NS + r"Kind<{g}, {p}, {s}, {c}, 1u, \(" + NS + r"Prologue\)0, false, true>"
F16 = NS + "F16"
BF16 = NS + "Bf16"
NOCOPY = NS + "NoCopy"
# (case, object, function pattern): AdamW, no gradient prologue, no AMSGrad, with the EMA.
CASES = [
    ("fp32 (single op, list op), streaming", ENTRIES,
     r"RunChunk<" + NS + "{B}, " + KIND.format(g="float", p="float", s="float", c=NOCOPY) + ", {U}>"),
    ("bf16 params, grads and state", ENTRIES,
     r"RunChunk<" + NS + "{B}, " + KIND.format(g=BF16, p=BF16, s=BF16, c=NOCOPY) + ", {U}>"),
    ("fp16 params, grads and state", ENTRIES,
     r"RunChunk<" + NS + "{B}, " + KIND.format(g=F16, p=F16, s=F16, c=NOCOPY) + ", {U}>"),
    ("fp32 master, bf16 grads, bf16 model copy", ENTRIES,
     r"RunChunk<" + NS + "{B}, " + KIND.format(g=BF16, p="float", s="float", c=BF16) + ", {U}>"),
    ("8-bit state (fp32 params and EMA)", ADAM8,
     r"RunBlocks<" + NS + "{B}, " + KIND.format(g="float", p="float", s="float", c=NOCOPY) + " ?>"),
]
INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
BRANCH = re.compile(r"^(b(\.\w+)?|cbn?z|tbn?z)$")


def functions(obj: Path) -> dict[str, list[tuple[int, str, str]]]:
    out = subprocess.run([OBJDUMP, "-d", "-C", "--no-show-raw-insn", str(obj)], check=True,
                         capture_output=True, text=True).stdout
    found, name = {}, None
    for line in out.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            name = header.group(1)
            found[name] = []
        elif name and (m := INSTRUCTION.match(line)):
            found[name].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return found


def loops(body):
    """(start, end) index ranges of the loop bodies: a branch to an earlier address in the function."""
    index = {addr: i for i, (addr, _, _) in enumerate(body)}
    for i, (_, op, args) in enumerate(body):
        if BRANCH.match(op):
            target = re.search(r"\b([0-9a-f]+) <", args)
            if target and int(target.group(1), 16) in index and int(target.group(1), 16) < body[i][0]:
                yield index[int(target.group(1), 16)], i


def lanes(op, args) -> int:
    if op != "fsqrt":
        return 0
    return 4 if ".4s" in args else 2 if ".2s" in args else 1


def describe(body, start, end):
    ops = body[start:end + 1]
    elements = sum(lanes(op, args) for _, op, args in ops)
    loads = sum(op.startswith(("ld", "ldr", "ldp", "ldur")) for _, op, _ in ops)
    stores = sum(op.startswith(("st", "str", "stp", "stur")) for _, op, _ in ops)
    fp = sum(op.startswith(("fadd", "fsub", "fmul", "fdiv", "fsqrt", "fcm", "fcvt", "fmax"))
             for _, op, _ in ops)
    return dict(instructions=len(ops), elements=elements, loads=loads, stores=stores, fp=fp)


def main():
    build = Path(sys.argv[1] if len(sys.argv) > 1 else "build/aarch64/gcc12-torch-2.7.1")
    print("| loop | backend | instructions per iteration | elements | per element | loads, stores, fp ops per element |")
    print("|---|---|---|---|---|---|")
    for case, obj_pattern, fn_pattern in CASES:
        for isa in ("neon", "generic"):
            obj = build / obj_pattern.format(isa=isa)
            unroll = "2" if isa == "neon" and "RunChunk" in fn_pattern else "1"
            want = re.compile(fn_pattern.format(B=BACKEND[isa], U=unroll))
            matches = [(n, b) for n, b in functions(obj).items() if want.search(n)]
            if len(matches) != 1:
                raise SystemExit(f"{case} {isa}: {len(matches)} functions match in {obj}")
            _, body = matches[0]
            found = list(loops(body))
            # innermost loops only: an entry's loop holds its vector loops and its tail
            inner = [(s, e) for s, e in found
                     if not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in found)]
            rows = [describe(body, s, e) for s, e in inner]
            rows = [r for r in rows if r["elements"] > 0]
            if not rows:
                raise SystemExit(f"{case} {isa}: no loop with a square root")
            hot = max(rows, key=lambda r: r["elements"])  # the widest: the streaming loop
            e = hot["elements"]
            print(f"| {case} | {isa} | {hot['instructions']} | {e} | {hot['instructions'] / e:.1f} | "
                  f"{hot['loads'] / e:.1f}, {hot['stores'] / e:.1f}, {hot['fp'] / e:.1f} |")


if __name__ == "__main__":
    main()
