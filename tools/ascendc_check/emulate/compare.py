"""tools/ascendc_check/run.py --emulate: holds the cases the emulate drivers wrote against the golden.

    compare.py <cases dir> [<ops-nn cases dir>]

Each case directory (emulate_support.h, CaseWriter) has meta.txt and the raw bytes of every input (*.in) and output
(*.out). A case passes when every output is bit-identical (any NaN equal to any NaN) to the golden model's emulation of
the kernel (golden.emulate_update / emulate_entry; the 8-bit list kernel's: golden8bit.emulate_entry8, every var,
m and v code, block scale, EMA and model copy) in the case's float-overflow mode, and its blocks ran without a
failure or hazard. With an ops-nn cases dir, each of its cases is also compared, byte for byte, with our
case of the same name. Prints one line per failure, the side-by-side table, and a last line
``SUMMARY {"launches": N, "identical": M, "opsnn": K, "opsnn_identical": J}``.
Run with the project's venv (numpy, ml_dtypes, ascend_ema_adam).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ascend_ema_adam import golden, golden8bit
from ascend_ema_adam._dtypes import by_name


def read_meta(case: Path) -> dict:
    meta = {}
    for line in (case / "meta.txt").read_text().splitlines():
        key, _, value = line.partition("=")
        meta[key] = value
    return meta


def num(meta, key) -> float:
    return float(meta[key])


def load(case: Path, name: str, dtype: str, shape=None) -> np.ndarray:
    numpy_dtype = np.dtype(np.uint8) if dtype == "uint8" else by_name(dtype).numpy
    arr = np.frombuffer((case / name).read_bytes(), dtype=numpy_dtype).copy()
    return arr if shape is None else arr.reshape(shape)


def hyper_of(meta) -> golden.Hyper:
    return golden.Hyper(lr=num(meta, "lr"), ema_decay=num(meta, "ema_decay"), beta1=num(meta, "beta1"),
                        beta2=num(meta, "beta2"), eps=num(meta, "eps"), mode=int(num(meta, "mode")),
                        bias_correction=bool(int(num(meta, "bias_correction"))),
                        weight_decay=num(meta, "weight_decay"))


def check_single(case: Path, meta: dict) -> list[str]:
    dtype = meta["dtype"]
    ins = {t: load(case, f"{t}.in", dtype) for t in ("grad", "var", "m", "v", "s")}
    step = np.array([int(num(meta, "step"))], np.int64)
    want = golden.emulate_update(ins["grad"], ins["var"], ins["m"], ins["v"], ins["s"], step, hyper_of(meta),
                                 overflow_mode=meta["overflow_mode"])
    problems = []
    for name, w in zip(("var", "m", "v", "s"), want):
        got = load(case, f"{name}.out", dtype)
        if not golden.bit_equal(got, w):
            bad = np.flatnonzero(got.view(np.uint8 if got.itemsize == 1 else f"u{got.itemsize}")
                                 != w.view(f"u{w.itemsize}"))
            problems.append(f"{name}: {bad.size} of {got.size} elements differ from the golden "
                            f"(first at {bad[0] if bad.size else '?'}: {got[bad[0]] if bad.size else ''} vs "
                            f"{w[bad[0]] if bad.size else ''})")
    return problems


def check_list(case: Path, meta: dict) -> list[str]:
    entries = int(num(meta, "entries"))
    param, state, grad, copy = meta["param"], meta["state"], meta["grad"], meta.get("copy", "")
    amsgrad, ema = bool(int(num(meta, "amsgrad"))), bool(int(num(meta, "ema")))
    extras = golden.Extras(maximize=bool(int(num(meta, "maximize"))),
                           grad_scale=float(meta["grad_scale"]) if meta["grad_scale"] != "none" else None,
                           found_inf=float(meta["found_inf"]) if meta["found_inf"] != "none" else None)
    step = np.array([int(num(meta, "step"))], np.int64)
    h = hyper_of(meta)
    problems = []
    for i in range(entries):
        g = load(case, f"grads_{i}.in", grad)
        var, m, v = (load(case, f"{n}_{i}.in", d) for n, d in (("vars", param), ("ms", state), ("vs", state)))
        s = load(case, f"ss_{i}.in", state) if ema else None
        max_v = load(case, f"max_vs_{i}.in", state) if amsgrad else None
        c = load(case, f"model_copies_{i}.in", copy) if copy else None
        want = golden.emulate_entry(g, var, m, v, s, step, h, extras, max_v=max_v, copy=c,
                                    overflow_mode=meta["overflow_mode"])
        outputs = (("vars", param, want.var), ("ms", state, want.m), ("vs", state, want.v),
                   ("ss", state, want.s), ("max_vs", state, want.max_v), ("model_copies", copy, want.copy))
        for name, dtype, w in outputs:
            if w is None:
                continue
            got = load(case, f"{name}_{i}.out", dtype)
            if not golden.bit_equal(got, w):
                problems.append(f"{name}[{i}] ({got.size} elements) differs from the golden")
    return problems


def check_list8(case: Path, meta: dict) -> list[str]:
    """The 8-bit list kernel: per entry var, the m and v codes, their block scales, the EMA and the model copy,
    against golden8bit.emulate_entry8 on the case's maps."""
    entries = int(num(meta, "entries"))
    param, grad, copy = meta["param"], meta["grad"], meta.get("copy", "")
    ema = bool(int(num(meta, "ema")))
    extras = golden.Extras(maximize=bool(int(num(meta, "maximize"))),
                           grad_scale=float(meta["grad_scale"]) if meta["grad_scale"] != "none" else None,
                           found_inf=float(meta["found_inf"]) if meta["found_inf"] != "none" else None)
    step = np.array([int(num(meta, "step"))], np.int64)
    h = hyper_of(meta)
    qmap_m, qmap_v = (load(case, f"qmap_{n}.in", "float32") for n in ("m", "v"))
    problems = []
    for i in range(entries):
        ins = {n: load(case, f"{n}_{i}.in", d) for n, d in (
            ("grads", grad), ("vars", param), ("ms", "uint8"), ("vs", "uint8"), ("m_absmaxes", "float32"),
            ("v_absmaxes", "float32"))}
        s = load(case, f"ss_{i}.in", "float32") if ema else None
        c = load(case, f"model_copies_{i}.in", copy) if copy else None
        want = golden8bit.emulate_entry8(ins["grads"], ins["vars"], ins["ms"], ins["vs"], ins["m_absmaxes"],
                                         ins["v_absmaxes"], s, step, qmap_m, qmap_v, h, extras, copy=c,
                                         overflow_mode=meta["overflow_mode"])
        outputs = (("vars", param, want.var), ("ms", "uint8", want.m), ("vs", "uint8", want.v),
                   ("m_absmaxes", "float32", want.m_absmax), ("v_absmaxes", "float32", want.v_absmax),
                   ("ss", "float32", want.s), ("model_copies", copy, want.copy))
        for name, dtype, w in outputs:
            if w is None:
                continue
            got = load(case, f"{name}_{i}.out", dtype)
            same = np.array_equal(got, w) if dtype == "uint8" else golden.bit_equal(got, w)  # codes: exact
            if not same:
                bits = f"u{got.itemsize}"
                bad = np.flatnonzero(got.view(bits) != np.asarray(w).reshape(-1).view(bits))
                first = f"first at {bad[0]}: {got[bad[0]]!r} vs {np.asarray(w).reshape(-1)[bad[0]]!r}" if bad.size \
                    else "NaN placement"
                problems.append(f"{name}[{i}] ({got.size} elements): {bad.size} differ from the golden ({first})")
    return problems


CHECKS = {"single": check_single, "list8bit": check_list8}


def main() -> int:
    root = Path(sys.argv[1])
    opsnn = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    launches = identical = 0
    for case in sorted(p for p in root.iterdir() if (p / "meta.txt").is_file()):
        meta = read_meta(case)
        launches += 1
        problems = []
        if int(num(meta, "failed_blocks")) or int(num(meta, "hazards")):
            problems.append(f"{int(num(meta, 'failed_blocks'))} block(s) failed, "
                            f"{int(num(meta, 'hazards'))} hazard(s)")
        try:
            problems += CHECKS.get(meta["kernel"], check_list)(case, meta)
        except FileNotFoundError as e:
            problems.append(f"missing {e.filename}")
        if problems:
            print(f"emulate: FAIL {case.name}: " + "; ".join(problems))
        else:
            identical += 1
    summary = {"launches": launches, "identical": identical, "opsnn": 0, "opsnn_identical": 0}
    if opsnn is not None and opsnn.is_dir():
        table = []
        for case in sorted(p for p in opsnn.iterdir() if (p / "meta.txt").is_file()):
            meta = read_meta(case)
            ours = root / meta["ours"]
            ours_meta = read_meta(ours)
            summary["opsnn"] += 1
            same = not int(num(meta, "failed_blocks")) and not int(num(meta, "hazards"))
            for name in ("var", "m", "v", "s"):
                same = same and (case / f"{name}.out").read_bytes() == (ours / f"{name}.out").read_bytes()
            if same:
                summary["opsnn_identical"] += 1
            else:
                print(f"emulate: FAIL ops-nn {case.name}: not bit-identical to ours ({meta['ours']})")
            table.append((case.name, meta, ours_meta))
        print_table(table)
    print("SUMMARY " + json.dumps(summary))
    return 0


def print_table(rows):
    """Vector instructions, MTE bytes and chunks per core of ops-nn's kernel and ours, launch by launch. A chunk of
    the single op copies its five inputs (grad, var, m, v, s) into UB once: chunks = GM->UB copies / 5."""
    width = max([len("case")] + [len(name) for name, _, _ in rows])
    print("emulate: ops-nn's ApplyFusedEmaAdam kernel and ours on the same inputs (per launch: vector "
          "instructions, MTE2/MTE3 bytes, cores; the busiest core's vector instructions and chunks)")
    heads = f"{'MTE2 B':>9} {'MTE3 B':>9} {'cores':>5} {'core vec':>8} {'chunks':>6}"
    print(f"emulate:   {'case':<{width}} {'dtype':<9} {'numel':>8} | {'ops-nn: vec':>11} {heads} | "
          f"{'ours: vec':>11} {heads}")
    for name, theirs, ours in rows:
        def cols(m):
            return (f"{int(num(m, 'vector_instructions')):>11} {int(num(m, 'mte2_bytes')):>9} "
                    f"{int(num(m, 'mte3_bytes')):>9} {int(num(m, 'cores')):>5} "
                    f"{int(num(m, 'max_core_vector_instructions')):>8} "
                    f"{int(num(m, 'max_core_mte2_copies')) // 5:>6}")
        print(f"emulate:   {name:<{width}} {theirs['dtype']:<9} {int(num(theirs, 'numel')):>8} | "
              f"{cols(theirs)} | {cols(ours)}")


if __name__ == "__main__":
    sys.exit(main())
