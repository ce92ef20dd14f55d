"""Digests of fixed-seed runs of every layer, to hold an aarch64 build bit-identical to x86
(tools/aarch64/run.sh runs this on both and compares the lines).

Each line: `<case> <sha256 of the outputs' bytes> <what ran>`. The inputs come from numpy's
generator with fixed seeds (gradients too: never torch's autograd, whose matmuls may round
differently on another CPU), so the same bits go in on every machine. A case that runs on several
instruction sets (the native kernels: avx512 / avx2 / generic on x86-64, neon / generic on
aarch64) must give one digest on all of them, or the line says MISMATCH.
"""

import hashlib
import io
import sys

import ml_dtypes
import numpy as np

from ascend_ema_adam import golden, kernels
from ascend_ema_adam import golden8bit as g8
from ascend_ema_adam.golden import Extras, Hyper

BF16 = ml_dtypes.bfloat16
DTYPES = {"fp32": np.float32, "fp16": np.float16, "bf16": BF16}
ISAS = (("neon", "generic") if kernels.cpu_kernel()["isa"] == "neon"
        else ("avx512", "avx2", "generic"))
ISAS = ISAS[ISAS.index(kernels.cpu_kernel()["isa"]):]
SIZES = [1, 7, 64, 255, 256, 257, 1000, 4099]  # whole and partial vectors and 8-bit blocks
HYPER = Hyper(lr=3e-3, ema_decay=0.99, weight_decay=0.02)


def digest(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is not None:
            h.update(np.ascontiguousarray(a).view(np.uint8).tobytes())
    return h.hexdigest()[:32]


def single_inputs(seed, dtype):
    rng = np.random.default_rng(seed)
    n = 4099
    var = (rng.standard_normal(n) * 0.05).astype(dtype)
    v = (rng.standard_normal(n) * 1e-2).astype(np.float32) ** 2
    m = (rng.standard_normal(n).astype(np.float32) * 0.3 * np.sqrt(v)).astype(dtype)
    return dict(grad=(rng.standard_normal(n) * 1e-2).astype(dtype), var=var, m=m,
                v=v.astype(dtype), s=(var.astype(np.float32) + 1e-3).astype(dtype))


def copy_of(entry):
    return {k: None if x is None else x.copy() for k, x in entry.items()}


def list_inputs(seed, param, state, grad, copy=None):
    out = []
    for i, n in enumerate(SIZES):
        e = single_inputs(seed * 100 + i, np.float32)
        out.append(dict(grad=e["grad"][:n].astype(grad), var=e["var"][:n].astype(param),
                        m=e["m"][:n].astype(state), v=e["v"][:n].astype(state),
                        s=e["s"][:n].astype(state),
                        copy=None if copy is None else np.zeros(n, copy)))
    return out


def list8_inputs(seed, param, grad, copy=None):
    rng = np.random.default_rng(seed)
    out = []
    for n in SIZES:
        sigma = 1e-2
        var = (rng.standard_normal(n) * 0.05).astype(param)
        m, m_absmax = g8.quantize((rng.standard_normal(n) * sigma).astype(np.float32), QMAP_M)
        v, v_absmax = g8.quantize((rng.standard_normal(n) * sigma).astype(np.float32) ** 2, QMAP_V)
        out.append(dict(grad=(rng.standard_normal(n) * sigma).astype(grad), var=var, m=m, v=v,
                        m_absmax=m_absmax, v_absmax=v_absmax,
                        s=var.astype(np.float32) + np.float32(1e-3),
                        copy=None if copy is None else np.zeros(n, copy)))
    return out


QMAP_M = g8.dynamic_map(signed=True)
QMAP_V = g8.dynamic_map(signed=False)
LIST_KEYS = ("var", "m", "v", "s", "copy")
LIST8_KEYS = ("var", "m", "v", "m_absmax", "v_absmax", "s", "copy")


def run_list(launch, entries, **kwargs):
    col = lambda k: [e[k] for e in entries]  # noqa: E731
    copies = col("copy") if entries[0]["copy"] is not None else None
    launch(col("grad"), col("var"), col("m"), col("v"), col("s"), np.array([7], np.int64), HYPER,
           Extras(grad_scale=2.0), model_copies=copies, **kwargs)
    return [e[k] for e in entries for k in LIST_KEYS]


def run_list8(launch, entries, **kwargs):
    col = lambda k: [e[k] for e in entries]  # noqa: E731
    copies = col("copy") if entries[0]["copy"] is not None else None
    launch(col("grad"), col("var"), col("m"), col("v"), col("m_absmax"), col("v_absmax"),
           col("s"), QMAP_M, QMAP_V, np.array([7], np.int64), HYPER, Extras(maximize=True),
           model_copies=copies, **kwargs)
    return [e[k] for e in entries for k in LIST8_KEYS]


def per_isa(name, run):
    """One digest for every instruction set of this CPU (they must agree)."""
    found = {isa: digest(run(isa)) for isa in ISAS}
    values = set(found.values())
    shown = next(iter(values)) if len(values) == 1 else "MISMATCH"
    print(name, shown, "native " + ",".join(f"{k}={v[:8]}" for k, v in found.items()))


def numpy_cases():
    for short, dtype in DTYPES.items():
        base = single_inputs(1, dtype)
        e = copy_of(base)
        out = golden.emulate_entry(e["grad"], e["var"], e["m"], e["v"], e["s"], np.array([7]), HYPER)
        print(f"single-{short}-golden", digest(out.astuple()), "golden.emulate_entry")

        def native(isa, base=base):
            e = copy_of(base)
            kernels.apply_fused_ema_adam_native(e["grad"], e["var"], e["m"], e["v"], e["s"],
                                             np.array([7], np.int64), HYPER, isa=isa, threads=2)
            return [e[k] for k in ("var", "m", "v", "s")]
        per_isa(f"single-{short}-native", native)
        e = copy_of(base)
        kernels.apply_fused_ema_adam(e["grad"], e["var"], e["m"], e["v"], e["s"],
                                  np.array([7], np.int64), HYPER)
        print(f"single-{short}-twin", digest([e[k] for k in ("var", "m", "v", "s")]),
              "AscendC kernel on the twin")

    rows = {"fp32": (np.float32, np.float32, np.float32, None),
            "bf16-fp32state": (BF16, np.float32, BF16, None),
            "fp16": (np.float16, np.float16, np.float16, None),
            "fp32master-bf16copy": (np.float32, np.float32, BF16, BF16)}
    for short, (p, s, g, c) in rows.items():
        base = list_inputs(2, p, s, g, c)
        per_isa(f"list-{short}-native", lambda isa, base=base: run_list(
            kernels.apply_fused_ema_adam_list_native, [copy_of(e) for e in base], isa=isa,
            threads=2, min_elems_per_thread=1))
        print(f"list-{short}-twin", digest(run_list(kernels.apply_fused_ema_adam_list,
                                                    [copy_of(e) for e in base])),
              "AscendC kernel on the twin")

    rows8 = {"fp32": (np.float32, np.float32, None), "bf16": (BF16, BF16, None),
             "fp32master-fp16copy": (np.float32, np.float16, np.float16)}
    for short, (p, g, c) in rows8.items():
        base = list8_inputs(3, p, g, c)
        per_isa(f"8bit-{short}-native", lambda isa, base=base: run_list8(
            kernels.apply_fused_ema_adam8bit_list_native, [copy_of(e) for e in base], isa=isa,
            threads=2, min_elems_per_thread=1))
        print(f"8bit-{short}-twin", digest(run_list8(kernels.apply_fused_ema_adam8bit_list,
                                                     [copy_of(e) for e in base])),
              "AscendC kernel on the twin")


def torch_cases():
    import torch

    from ascend_ema_adam import FusedEmaAdamW

    def params(seed, dtype):
        rng = np.random.default_rng(seed)
        shapes = [(64, 33), (33,), (300, 20), (5,), (4096 + 17,)]
        return [torch.nn.Parameter(torch.from_numpy((rng.standard_normal(s) * 0.05).astype(
            np.float32)).to(dtype)) for s in shapes]

    def grads(step, ps):
        rng = np.random.default_rng(1000 + step)
        for p in ps:
            p.grad = torch.from_numpy((rng.standard_normal(tuple(p.shape)) * 1e-2).astype(
                np.float32)).to(p.dtype)

    def flat(ps, opt):
        arrays = [p.detach().float().numpy() for p in ps]
        for st in opt.state_dict()["state"].values():
            for k in sorted(st):
                if torch.is_tensor(st[k]):
                    arrays.append(st[k].detach().float().numpy() if st[k].is_floating_point()
                                  else st[k].detach().numpy())
        return arrays

    configs = {
        "fp32": (torch.float32, dict()),
        "bf16-master": (torch.bfloat16, dict(master_weights=True)),
        "8bit": (torch.float32, dict(state_bits=8, min_8bit_size=256)),
        "amsgrad-l2": (torch.float32, dict(amsgrad=True, adam_w_mode=False)),
    }
    for name, (dtype, options) in configs.items():
        ps = params(4, dtype)
        model = torch.nn.Module()
        for i, p in enumerate(ps):
            model.register_parameter(f"p{i}", p)
        opt = FusedEmaAdamW(ps, lr=3e-3, ema_decay=0.99, weight_decay=0.02, **options)
        for step in range(4):
            grads(step, ps)
            opt.step()
        buffer = io.BytesIO()
        torch.save(opt.state_dict(), buffer)  # a checkpoint, resumed in a fresh optimizer
        buffer.seek(0)
        resumed = FusedEmaAdamW(ps, lr=3e-3, ema_decay=0.99, weight_decay=0.02, **options)
        resumed.load_state_dict(torch.load(buffer, weights_only=True))
        for step in range(4, 7):
            grads(step, ps)
            resumed.step()
        ema = [t.float().numpy() for t in resumed.ema_state_dict(model).values()]
        print(f"optimizer-{name}", digest(flat(ps, resumed) + ema),
              "FusedEmaAdamW, 4 steps, state_dict through torch.save, 3 steps")

    e = single_inputs(5, np.float32)
    t = {k: torch.from_numpy(x) for k, x in e.items()}
    from ascend_ema_adam import ops
    ops.npu_apply_fused_ema_adamw(t["grad"], t["var"], t["m"], t["v"], t["s"],
                                  torch.tensor([7]), lr=3e-3, ema_decay=0.99, weight_decay=0.02)
    print("torch-op-single", digest([t[k].numpy() for k in ("var", "m", "v", "s")]),
          "npu_apply_fused_ema_adamw on CPU tensors")


def main():
    numpy_cases()
    if "--no-torch" not in sys.argv:
        torch_cases()


if __name__ == "__main__":
    main()
