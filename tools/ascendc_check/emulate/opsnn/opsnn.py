"""tools/ascendc_check/run.py --emulate: CANN's own ApplyFusedEmaAdam kernel on the inputs of our cases.

ops-nn's kernel (hicann/ops-nn optim/apply_fused_ema_adam/op_kernel/apply_fused_ema_adam.cpp) is compiled unchanged,
in place in $CANN_OPS_NN_DIR, against the real AscendC library over the emulated intrinsic layer, exactly as our
kernels are (the Emulator's flags), with two additions that stand in for the tiling header CANN's kernel-UT build
generates for it (tests/ut/op_kernel/scripts/gen_tiling_head_file.py, from the registered tiling class):

    -include <ops-nn>/optim/apply_fused_ema_adam/tests/ut/op_kernel/test_apply_fused_ema_adam_tiling_def.h
    -DApplyFusedEmaAdamTilingData=ApplyFusedEmaAdamUtTilingData

The UT header defines GET_TILING_DATA (a memcpy of the 96 tiling bytes) and the struct with the op_host's field
layout, under the name ApplyFusedEmaAdamUtTilingData; the kernel names the struct ApplyFusedEmaAdamTilingData.
Our op_kernel/ folders are left off its include path. The driver opsnn/apply_fused_ema_adam_emulate.cpp runs it on
every one of our single-op cases with bias correction off and the INF_NAN overflow mode (ops-nn's tiling
reimplemented in opsnn/opsnn_tiling.cpp) and writes <opsnn_dir>/opsnn_<case>/, which compare.py holds byte for byte
against our case when given opsnn_dir as its second argument.

Called by tools/ascendc_check/run.py's emulate_all after our drivers ran:

    ok, message = opsnn.run(emu, emu.rig, cases, opsnn_dir, env, log)
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "apply_fused_ema_adam_emulate.cpp"
REPO = HERE.parents[3]
OP = Path("optim") / "apply_fused_ema_adam"
KERNEL = OP / "op_kernel" / "apply_fused_ema_adam.cpp"
TILING_DEF = OP / "tests" / "ut" / "op_kernel" / "test_apply_fused_ema_adam_tiling_def.h"
TILING_NAME = ["-DApplyFusedEmaAdamTilingData=ApplyFusedEmaAdamUtTilingData"]
OBJECT = "opsnn-kernel-apply_fused_ema_adam.o"
PROGRAM = "emulate-opsnn-apply_fused_ema_adam"
NOT_DECLARED = re.compile(r"error: (?:there are no arguments to ‘\w+’|‘\w+’ was not declared in this scope)")


def kernel_flags(rig, tiling_def: Path) -> list[str]:
    """The Emulator's kernel flags (Emulator.kernel_object) for ops-nn's kernel: our op_kernel/ folders left off the
    include path, the UT tiling header and the struct's name instead of our generated tiling header."""
    ours = REPO / "op_kernel"
    flags, it = [], iter(rig.flags(emulate=True))
    for flag in it:
        if flag == "-I":
            path = next(it)
            if Path(path).resolve().is_relative_to(ours):
                continue
            flags += [flag, path]
        else:
            flags.append(flag)
    return ["-O2", "-g", "-ffp-contract=off", *flags, "-include", str(tiling_def), *TILING_NAME]


def compile_kernel(emu, rig, tu: Path, tiling_def: Path, log) -> Path:
    """The kernel object; when the library calls an intrinsic no kernel of ours made it call, the rig's discovery
    (Rig.compile_all) learns it first and the emulated stub_fun.h is written again (it then aborts by name if
    reached)."""
    obj = emu.out / OBJECT
    try:
        return emu.compile(tu, kernel_flags(rig, tiling_def), obj)
    except RuntimeError as e:
        if not NOT_DECLARED.search(str(e)):
            raise
    log("emulate: ops-nn's kernel calls intrinsics the stand-in does not declare yet: learning them")
    r = rig.compile_all([(tu, tiling_def, tuple(TILING_NAME))], 1)[0]
    if r.returncode != 0:
        errors = [ln for ln in r.stderr.splitlines() if ": error:" in ln or ": fatal error:" in ln]
        raise RuntimeError("ops-nn's kernel does not compile against the library:\n  " + "\n  ".join(errors[:40]))
    rig.write_stub_fun(emulate=True)
    return emu.compile(tu, kernel_flags(rig, tiling_def), obj)


def run(emu, rig, cases: Path, opsnn_dir: Path, env: dict, log) -> tuple[bool, str]:
    """Builds and runs ops-nn's kernel on our cases in `cases`, writing its cases to `opsnn_dir` (emptied first).
    Returns (ok, message); ok is False when it does not build, a block fails or has a hazard, or no case of ours
    qualifies. Bit-identity with our cases is compare.py's verdict (given `opsnn_dir`)."""
    root = env.get("CANN_OPS_NN_DIR")
    if not root:
        return True, "SKIPPED ops-nn's ApplyFusedEmaAdam kernel: CANN_OPS_NN_DIR is not set"
    root = Path(root).resolve()
    tu, tiling_def = root / KERNEL, root / TILING_DEF
    missing = [str(p) for p in (tu, tiling_def) if not p.is_file()]
    if missing:
        return False, f"ops-nn's ApplyFusedEmaAdam kernel: CANN_OPS_NN_DIR={root} lacks {', '.join(missing)}"
    rig.write_stub_fun(emulate=True)
    try:
        obj = compile_kernel(emu, rig, tu, tiling_def, log)
        support = emu.support_objects() + emu.emulator_objects()
        exe = emu.program(PROGRAM, DRIVER, support + [obj])
    except RuntimeError as e:
        return False, f"ops-nn's ApplyFusedEmaAdam kernel: {str(e)[-4000:]}"
    shutil.rmtree(opsnn_dir, ignore_errors=True)
    opsnn_dir.mkdir(parents=True)
    roots = [r for r in env.get("AEA_EMU_SOURCE_ROOTS", "").split(":") if r] + [str(tu.parent)]
    r = subprocess.run([str(exe), str(cases), str(opsnn_dir)], capture_output=True, text=True, timeout=3600,
                       env={**env, "AEA_EMU_SOURCE_ROOTS": ":".join(roots)})
    for line in [ln for ln in r.stdout.splitlines() if "HAZARD" in ln][:20]:
        print(line)
    launches = sum(1 for p in opsnn_dir.iterdir() if (p / "meta.txt").is_file())
    where = f"{KERNEL} of {root}"
    if r.returncode != 0:
        return False, (f"ops-nn's ApplyFusedEmaAdam kernel ({where}) FAILED on our cases (exit {r.returncode}, "
                       f"{launches} launch(es) written):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return True, (f"ops-nn's ApplyFusedEmaAdam kernel ({where}), unchanged: {launches} launches on the inputs of our "
                  f"bias-correction-off INF_NAN cases, in {opsnn_dir}")
