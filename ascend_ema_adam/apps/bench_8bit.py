"""The 8-bit operator's row of ``python -m ascend_ema_adam bench``: one step on 16.8M fp32
parameters (one tensor), on all CPUs, interleaved (bench_common.measure: random order each
round, an idle gap before each sample, warm-up first), medians:

* ``opt_8bit``: ``FusedEmaAdamW(state_bits=8).step()``, the whole optimizer step through the
  torch op ``apply_fused_ema_adam8bit_list`` (the issue's measure);
* ``opt_fp32``: ``FusedEmaAdamW().step()`` on fp32 state, the step it is compared with;
* ``ours_8bit``: ApplyFusedEmaAdam8bitList's native kernel launched alone (uint8 m, v with fp32
  block scales, an fp32 EMA: decode, update, new scales, encode and the EMA in one pass);
* ``ours_fp32``: ApplyFusedEmaAdamList's native kernel alone on fp32 m, v and EMA (the same update);
* ``k8_<decode>_<encode>``: the 8-bit kernel alone on each lookup path this CPU has (decode by
  ``planes``, AVX-512 VBMI's byte permutes, or ``gathers``; encode by ``table``, its byte
  ``planes`` with the VBMI loops, or ``search``), ``ours_8bit`` being the one launches choose;
* ``probe_8bit``, ``probe_fp32``: the two kernels' access patterns with one add per output (the
  ``update8bit`` and ``update`` stream probes: 24 and 36 B/elem, split over the threads as the
  kernels are): what this machine's memory allows the 8-bit step against the fp32 one;
* ``torchao``: ``torchao.optim.AdamW8bit.step()`` (its compiled per-parameter step) +
  ``torch._foreach_lerp_`` EMA;
* ``bnb``: ``bitsandbytes.optim.AdamW8bit.step()`` (its CPU backend) + ``torch._foreach_lerp_`` EMA.

The kernel rows run on the tensors' memory through ``_kernels``: kernel to kernel, without the
optimizer's host work. The baselines need the ``bench`` extra; without one its row says so. The
state's bytes per parameter are measured from the tensors each implementation keeps.
"""

from __future__ import annotations

import os
import random
import sys
import warnings

import numpy as np

from .. import _kernels, golden8bit as g8
from ..optim import FusedEmaAdamW
from .bench_common import HYPER, TARGET_NUMEL, _fmt_time, measure, use_threads


def _attrs(attrs):
    """``attrs`` (a _kernels.Attrs, or the list op's _kernels.ApplyFusedEmaAdamListAttrs) with
    the bench's values."""
    for name in ("lr", "ema_decay", "beta1", "beta2", "eps", "mode", "bias_correction",
                 "weight_decay"):
        setattr(attrs, name, getattr(HYPER, name))
    return attrs


def _baselines(torch, params, ema):
    """(name -> step function or the reason it is missing), and each optimizer for its state."""
    h = HYPER
    found, missing = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from torchao.optim import AdamW8bit as TorchaoAdamW8bit
            found["torchao"] = TorchaoAdamW8bit(params[0:1], lr=h.lr, betas=(h.beta1, h.beta2),
                                                eps=h.eps, weight_decay=h.weight_decay,
                                                block_size=g8.BLOCK)
        except ImportError as e:
            missing["torchao"] = (f"not installed ({e.name}): pip install --no-build-isolation "
                                  f"'.[bench]' in a checkout")
        try:
            import bitsandbytes as bnb
            found["bnb"] = bnb.optim.AdamW8bit(params[1:2], lr=h.lr, betas=(h.beta1, h.beta2),
                                               eps=h.eps, weight_decay=h.weight_decay)
        except ImportError as e:
            missing["bnb"] = (f"not installed ({e.name}): pip install --no-build-isolation "
                              f"'.[bench]' in a checkout")

    def with_lerp(optimizer, i):
        def run():
            optimizer.step()
            torch._foreach_lerp_([ema[i]], [params[i].data], 1.0 - h.ema_decay)
        return run
    steps = {name: with_lerp(opt, 0 if name == "torchao" else 1) for name, opt in found.items()}
    return steps, found, missing


def _state_bytes(optimizer, param, torch) -> int:
    total = 0
    for value in optimizer.state[param].values():
        if isinstance(value, torch.Tensor):
            inner = getattr(value, "__tensor_flatten__", None)
            if inner is not None:  # torchao's OptimState8bit: codes, scale, qmap
                total += sum(getattr(value, n).numel() * getattr(value, n).element_size()
                             for n in inner()[0])
            elif value.numel() > 1:
                total += value.numel() * value.element_size()
    return total


def _pattern_probes(n: int, threads: int, torch) -> dict:
    """The access-pattern probes on fresh buffers of ones (the code streams' n bytes as floats)."""
    fp32 = [torch.ones(n).numpy() for _ in range(5)]
    eight = ([torch.ones(n).numpy() for _ in range(3)]
             + [torch.ones(n // 4).numpy() for _ in range(2)])
    return {"probe_8bit": lambda: _kernels.stream_probe("update8bit", eight, 0.5, n, threads),
            "probe_fp32": lambda: _kernels.stream_probe("update", fp32, 0.5, n, threads)}


def adam8bit_step(torch, quick: bool = False, seed: int = 0, out=sys.stdout,
                  repeats: int | None = None) -> dict:
    """The row: timings, ratios and state bytes per parameter (see the module docstring);
    ``repeats`` interleaved rounds (default 11, 3 with ``quick``)."""
    n = TARGET_NUMEL
    repeats = repeats or (3 if quick else 11)
    gen = torch.Generator().manual_seed(seed)
    grad = torch.randn(n, generator=gen) * 1e-2
    # four copies of the weights and EMAs: ours (8-bit, fp32) and the two baselines
    weights = torch.randn(n, generator=gen) * 5e-2
    params = [torch.nn.Parameter(weights.clone()) for _ in range(6)]
    ema = [weights.clone() for _ in range(4)]
    for p in params:
        p.grad = grad
    m32 = (torch.randn(n, generator=gen) * 3e-3)
    v32 = (torch.randn(n, generator=gen) * 1e-2) ** 2
    qmap_m, qmap_v = g8.dynamic_map(True), g8.dynamic_map(False)
    m_codes, m_absmax = g8.quantize(m32.numpy(), qmap_m)
    v_codes, v_absmax = g8.quantize(v32.numpy(), qmap_v)
    step = np.array([10], np.int64)
    attrs, list_attrs = _attrs(_kernels.Attrs()), _attrs(_kernels.ApplyFusedEmaAdamListAttrs())
    g_np, m32_np, v32_np = grad.numpy(), m32.numpy(), v32.numpy()
    p8, s8 = params[2].data.numpy(), ema[2].numpy()  # views: updated in place
    p32, s32 = params[3].data.numpy(), ema[3].numpy()

    def ours_8bit():
        _kernels.launch_native_adam8bit_list(
            [g_np], [p8], [m_codes], [v_codes], [m_absmax], [v_absmax], [s8], None, [n],
            qmap_m, qmap_v, step, None, None, "float32", "float32", "", attrs, False)

    def kernel_on_path(planes: bool, encode: str):
        def run():
            _kernels.launch_native_adam8bit_list(
                [g_np], [p8], [m_codes], [v_codes], [m_absmax], [v_absmax], [s8], None, [n],
                qmap_m, qmap_v, step, None, None, "float32", "float32", "", attrs, False,
                byte_planes=planes, encode=encode)
        return run

    vbmi = _kernels.adam8bit_native_path()["decode"] == "byte planes"  # (by default where it may)
    paths = {f"k8_{'planes' if planes else 'gathers'}_{encode}": kernel_on_path(planes, encode)
             for planes in ((True, False) if vbmi else (False,))
             for encode in (("table", "planes", "search") if planes else ("table", "search"))}

    def ours_fp32():
        _kernels.launch_native_list([g_np], [p32], [m32_np], [v32_np], [s32], None, None, [n], step,
                                 None, None, "float32", "float32", "float32", "", list_attrs)

    h = HYPER
    optimizers8 = {bits: FusedEmaAdamW([params[i]], lr=h.lr, betas=(h.beta1, h.beta2), eps=h.eps,
                                       weight_decay=h.weight_decay, ema_decay=h.ema_decay,
                                       state_bits=bits)
                   for bits, i in ((8, 4), (32, 5))}
    fns = {"opt_8bit": optimizers8[8].step, "opt_fp32": optimizers8[32].step,
           "ours_8bit": ours_8bit, "ours_fp32": ours_fp32, **paths}
    cpus = len(os.sched_getaffinity(0))
    fns.update(_pattern_probes(n, cpus, torch))
    steps, optimizers, missing = _baselines(torch, params, ema)
    fns.update(steps)
    print(f"\n8-bit state: one {n / 1e6:.1f}M fp32 tensor, {cpus} threads, medians of "
          f"{repeats} interleaved rounds", file=out)
    for name, why in missing.items():
        print(f"  {name}: {why}", file=out)
    with warnings.catch_warnings(), use_threads(torch, cpus):
        # torchao's tensor subclass under torch.compile says why it cannot be cached: nothing to
        # act on here
        warnings.simplefilter("ignore")
        timings = measure(fns, repeats, 0.0, 0.05, random.Random(seed))
    ours = timings["opt_8bit"].seconds
    state = {"ours_8bit": (m_codes.nbytes + v_codes.nbytes + m_absmax.nbytes + v_absmax.nbytes
                           + s8.nbytes) / n,
             "ours_fp32": (m32_np.nbytes + v32_np.nbytes + s32.nbytes) / n,
             "probe_8bit": None, "probe_fp32": None}
    state.update({name: state["ours_8bit"] for name in paths})
    for bits, opt in optimizers8.items():
        state["opt_8bit" if bits == 8 else "opt_fp32"] = sum(
            t.numel() * t.element_size() for t in opt.state[opt.param_groups[0]["params"][0]].values()
            if isinstance(t, torch.Tensor) and t.numel() > 1) / n
    for name, opt in optimizers.items():
        p = params[0 if name == "torchao" else 1]
        state[name] = (_state_bytes(opt, p, torch) + ema[0].numel() * 4) / n
    eight_over_fp32 = {what: timings[f"{a}_8bit"].seconds / timings[f"{a}_fp32"].seconds
                       for what, a in (("step", "opt"), ("kernel", "ours"),
                                       ("access_pattern", "probe"))}
    from .._extension import _C  # (after torch: the extension links its libraries)
    path = _C.cpu_8bit_path()  # after the steps: the encode they measured
    row = {"numel": n, "threads": cpus, "repeats": repeats, "timings": timings,
           "opt_8bit_over": {}, "state_bytes_per_param": state, "missing": missing,
           "eight_bit_over_fp32": eight_over_fp32, "path": path}
    print(f"  the 8-bit steps' path: {path}", file=out)
    width = max(len(name) for name in timings) + 2
    print(f"  {'impl':<{width}}{'time':>12}{'opt_8bit/impl':>16}{'state+EMA B/param':>19}",
          file=out)
    for name, t in timings.items():
        ratio = ours / t.seconds
        row["opt_8bit_over"][name] = ratio
        bytes_column = "" if state[name] is None else f"{state[name]:.2f}"
        print(f"  {name:<{width}}{_fmt_time(t.seconds):>12}{ratio:>16.3f}{bytes_column:>19}",
              file=out)
    print("  8-bit / fp32: " + ", ".join(f"{what.replace('_', ' ')} {r:.3f}"
                                         for what, r in eight_over_fp32.items())
          + " (the access pattern alone: what the memory allows)", file=out)
    return row


def main() -> None:
    import torch
    adam8bit_step(torch)


if __name__ == "__main__":
    main()
