"""Golden-compare sweep: the AscendC kernels on the CPU twin against both golden tiers.

``python -m ascend_ema_adam check`` runs ApplyFusedEmaAdam over dtype x mode x bias correction x
sizes, then ApplyFusedEmaAdamList over its dtype combinations, with and without its options
(AMSGrad, every switch of ``golden.Extras``, a grad scale), on a list of mixed sizes, then
ApplyFusedEmaAdam8bitList over its dtype rows against ``golden8bit``. Per case it
prints whether every output equals the dtype-faithful emulation bit for bit, the worst mean / max
relative error against the float64 golden as a fraction of CANN's thresholds, and whether the GM
traffic the twin counted is the minimum.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time
from dataclasses import dataclass

import numpy as np

from .. import golden, golden8bit, kernels
from .._dtypes import LIST8BIT_DTYPES, LIST_DTYPES, NUMPY_FLOAT_DTYPES, List8bitDtypes
from ..golden import Hyper

DTYPES = NUMPY_FLOAT_DTYPES
OUTPUTS = ("var", "m", "v", "s")

#: Sizes of the full sweep: tails around one 32-byte block, fewer elements than cores, and
#: several unified-buffer chunks per core (the CPU preset's chunk is 2728 fp32 / 2720 16-bit).
FULL_SIZES = (1, 7, 8, 9, 15, 16, 17, 33, 4099, 65537, 2**21 + 3)
QUICK_SIZES = (1, 17, 4099, 65537)


def random_inputs(rng: np.random.Generator, shape, dtype, grad_scale: float | None = None):
    """Fresh optimizer-like tensors: weights ~ N(0, 0.05), EMA = weights + small noise,
    gradients ~ N(0, sigma) with sigma log-uniform in [1e-3, 1e-1] unless given, v >= 0 on the
    gradient's square and m ~ N(0, 0.3) x sqrt(v): m / sqrt(v) stays O(1), as Adam's moments
    keep it (|m| is at most a few sqrt(v) for these betas). An m drawn apart from v made that
    ratio Cauchy-tailed (|m| / sqrt(v) = 900 in one element): an update lr * m / sqrt(v) that
    cancelled its weight to 1e-4 of its size, whose fp32 rounding then failed the float64
    standard though the kernel equals the fp32 golden (seed 3090244512928824998 of
    test_large_tensor_many_chunks). Returns (grad, var, m, v, s) in ``dtype``."""
    sigma = grad_scale if grad_scale is not None else 10.0 ** rng.uniform(-3.0, -1.0)
    var = rng.normal(0.0, 0.05, shape)
    s = var + rng.normal(0.0, 0.005, shape)
    grad = rng.normal(0.0, sigma, shape)
    v = rng.normal(0.0, sigma, shape) ** 2
    m = np.sqrt(v) * rng.normal(0.0, 0.3, shape)
    return tuple(np.asarray(x).astype(dtype) for x in (grad, var, m, v, s))


@dataclass(frozen=True)
class Verdict:
    """What a case of either operator is judged by: bit-exactness with the emulation per output,
    CANN's precision against the float64 golden per output, GM traffic against its minimum."""

    bit_exact: dict[str, bool]
    precision: dict[str, golden.Precision]
    gm_bytes: int
    gm_bytes_min: int
    seconds: float

    @property
    def passed(self) -> bool:
        return (all(self.bit_exact.values()) and all(p.passed for p in self.precision.values())
                and self.gm_bytes == self.gm_bytes_min)

    def columns(self) -> str:
        """The table's verdict columns: MERE/thr, MARE/thr, GM bytes, result."""
        mere = max(p.mere / p.threshold for p in self.precision.values())
        mare = max(p.mare / (10 * p.threshold) for p in self.precision.values())
        traffic = ("min" if self.gm_bytes == self.gm_bytes_min
                   else f"{self.gm_bytes / self.gm_bytes_min:.2f}x")
        return f"{mere:>9.3f}{mare:>9.3f}{traffic:>10}  {'PASS' if self.passed else 'FAIL'}"

    def exact_column(self) -> str:
        return " ".join(f"{n}{'=' if ok else 'X'}" for n, ok in self.bit_exact.items())


@dataclass(frozen=True, kw_only=True)
class CaseResult(Verdict):
    dtype: np.dtype
    hyper: Hyper
    numel: int
    step: int
    cores: int
    chunks: int


def run_case(rng: np.random.Generator, dtype, hyper: Hyper, shape, step: int,
             platform: str = "cpu") -> CaseResult:
    """One launch on the twin, compared with both goldens."""
    inputs = random_inputs(rng, shape, dtype)
    step_arr = np.array([step], dtype=np.int64)
    expected = golden.emulate_update(*inputs, step_arr, hyper)
    reference = golden.reference_update(*inputs, step_arr, hyper)
    grad, var, m, v, s = (x.copy() for x in inputs)
    start = time.perf_counter()
    stats = kernels.apply_fused_ema_adam(grad, var, m, v, s, step_arr, hyper, platform=platform)
    seconds = time.perf_counter() - start
    actual = (var, m, v, s)
    numel = int(np.prod(shape, dtype=np.int64))
    tiling = stats.tiling
    chunks = -(-max(e - b for b, e in tiling["core_ranges"]) // tiling["chunk_length"]) \
        if numel else 0
    return CaseResult(
        dtype=np.dtype(dtype), hyper=hyper, numel=numel, step=step,
        cores=tiling["block_dim"], chunks=chunks,
        bit_exact={n: golden.bit_equal(a, e) for n, a, e in zip(OUTPUTS, actual, expected)},
        precision={n: golden.cann_precision(a, r) for n, a, r in zip(OUTPUTS, actual, reference)},
        gm_bytes=stats.total("gm_read_bytes") + stats.total("gm_write_bytes"),
        gm_bytes_min=numel * 9 * np.dtype(dtype).itemsize,
        seconds=seconds)


def sweep(sizes=FULL_SIZES, seed: int | None = None):
    """Yields one CaseResult per dtype x mode x bias correction x size (fresh random inputs)."""
    rng = np.random.default_rng(seed)
    for dtype, mode, bias, numel in itertools.product(DTYPES, (0, 1), (True, False), sizes):
        hyper = Hyper(lr=1e-3, ema_decay=0.999, beta1=0.9, beta2=0.999, eps=1e-8, mode=mode,
                      bias_correction=bias, weight_decay=0.01)
        yield run_case(rng, dtype, hyper, (numel,), step=10)


# ---------------------------------------------------------------------------------------------
# ApplyFusedEmaAdamList

#: The list operator's outputs, in golden.Outputs order.
LIST_OUTPUTS = ("var", "m", "v", "s", "max_v", "copy")

#: Entry sizes of the list sweep: empty, single elements, 32-byte block tails, several chunks.
LIST_FULL_SIZES = (0, 1, 7, 16, 17, 33, 0, 1000, 4099, 65537, 2**20 + 3)
LIST_QUICK_SIZES = (0, 1, 17, 33, 0, 4099, 12289)


@dataclass(frozen=True)
class ListCombo:
    """One dtype combination of the list operator (one tiling key); copy None: no model copies."""

    param: np.dtype
    state: np.dtype
    grad: np.dtype
    copy: np.dtype | None
    tiling_key: int

    @property
    def name(self) -> str:
        names = [golden.dtype_name(d) for d in (self.param, self.state, self.grad)]
        return "/".join(names + ([golden.dtype_name(self.copy)] if self.copy else []))


def list_combos() -> list[ListCombo]:
    """The list operator's dtype combinations (``_dtypes.LIST_DTYPES``), each with the tiling key
    the host gives it (a KeyError if the host had no kernel for one)."""
    keys = {(c["param"], c["state"], c["grad"], c["copy"]): c["tiling_key"]
            for c in kernels.list_dtype_combinations()}
    return [ListCombo(row.param.numpy, row.state.numpy, row.grad.numpy,
                      None if row.copy is None else row.copy.numpy, keys[row.names])
            for row in LIST_DTYPES]


def random_list_inputs(rng: np.random.Generator, sizes, combo: ListCombo, *, amsgrad: bool,
                       grad_scale: float | None = None) -> dict:
    """Optimizer-like lists (see :func:`random_inputs`), entry i of ``sizes[i]`` elements:
    grads, vars, ms, vs, ss, and max_vs (AMSGrad: v times U(0.5, 1.5), so either side of the
    maximum wins) and copies (garbage: the kernel only writes them) or None. With a grad scale
    the gradients are scaled by it, as a loss scaler's are."""
    lists = {name: [] for name in ("grads", "vars", "ms", "vs", "ss")}
    lists["max_vs"] = [] if amsgrad else None
    lists["copies"] = [] if combo.copy is not None else None
    for n in sizes:
        grad, var, m, v, s = random_inputs(rng, (n,), np.float64)
        lists["grads"].append((grad * (grad_scale or 1.0)).astype(combo.grad))
        lists["vars"].append(var.astype(combo.param))
        for name, x in (("ms", m), ("vs", v), ("ss", s)):
            lists[name].append(x.astype(combo.state))
        if amsgrad:
            lists["max_vs"].append((v * rng.uniform(0.5, 1.5, n)).astype(combo.state))
        if combo.copy is not None:
            lists["copies"].append(rng.normal(0.0, 1.0, n).astype(combo.copy))
    return lists


def list_traffic_per_element(combo: ListCombo, amsgrad: bool,
                             ema: bool = True) -> tuple[int, int]:
    """(bytes read, bytes written) per element: G, P, M, V (, S) (, MaxV) once each; P, M, V
    (, S) (, MaxV) (, C) once each. The model copies are never read; without the EMA neither is
    S written nor read."""
    p, s, g = combo.param.itemsize, combo.state.itemsize, combo.grad.itemsize
    states = (2 + ema + amsgrad) * s
    written = p + states + (combo.copy.itemsize if combo.copy is not None else 0)
    return g + p + states, written


@dataclass(frozen=True, kw_only=True)
class ListCaseResult(Verdict):
    combo: ListCombo
    hyper: Hyper
    extras: golden.Extras
    amsgrad: bool
    sizes: tuple
    stats: kernels.LaunchStats
    ema: bool = True


def run_list_case(rng: np.random.Generator, combo: ListCombo, hyper: Hyper,
                  extras: golden.Extras, sizes, step: int, *, amsgrad: bool,
                  platform: str = "cpu", ema: bool = True,
                  tensor_scalars: bool = False) -> ListCaseResult:
    """One list launch on the twin, every entry compared with both goldens (each output's
    entries concatenated for the precision standard). ``ema=False``: the launch has no EMA
    list (the goldens get ``s=None``). ``tensor_scalars``: lr and the EMA decay reach the
    kernel as one-element fp32 tensors holding fp32(hyper.lr), fp32(hyper.ema_decay), with
    different numbers in the attributes (which must then not be used)."""
    lists = random_list_inputs(rng, sizes, combo, amsgrad=amsgrad, grad_scale=extras.grad_scale)
    if not ema:
        lists["ss"] = None
    step_arr = np.array([step], dtype=np.int64)
    count = len(sizes)
    entries = [{name: (None if arrays is None else arrays[i]) for name, arrays in lists.items()}
               for i in range(count)]
    expected, reference = [], []
    launch_hyper, scalars = hyper, {}
    if tensor_scalars:
        scalars = {"lr_tensor": np.float32(hyper.lr),
                   "ema_decay_tensor": np.float32(hyper.ema_decay)}
        launch_hyper = dataclasses.replace(hyper, lr=hyper.lr * 3.0 + 1.0, ema_decay=0.5)
    for e in entries:
        args = (e["grads"], e["vars"], e["ms"], e["vs"], e["ss"], step_arr, hyper, extras)
        optional = {"max_v": e["max_vs"], "copy": e["copies"]}
        expected.append(golden.emulate_entry(*args, **optional).astuple())
        reference.append(golden.reference_entry(*args, **optional).astuple())
    work = {name: None if arrays is None else [a.copy() for a in arrays]
            for name, arrays in lists.items()}
    start = time.perf_counter()
    stats = kernels.apply_fused_ema_adam_list(
        work["grads"], work["vars"], work["ms"], work["vs"], work["ss"], step_arr, launch_hyper,
        extras, max_vs=work["max_vs"], model_copies=work["copies"], platform=platform, **scalars)
    seconds = time.perf_counter() - start
    actual = [(work["vars"][i], work["ms"][i], work["vs"][i],
               None if work["ss"] is None else work["ss"][i],
               None if work["max_vs"] is None else work["max_vs"][i],
               None if work["copies"] is None else work["copies"][i]) for i in range(count)]
    skipped = golden.writes_nothing(extras)
    bit_exact, precision = {}, {}
    for k, name in enumerate(LIST_OUTPUTS):
        if actual and actual[0][k] is None:
            continue
        bit_exact[name] = all(golden.bit_equal(a[k], e[k]) for a, e in zip(actual, expected))
        if sum(sizes) and not skipped:
            precision[name] = golden.cann_precision_of_entries([a[k] for a in actual],
                                                               [r[k] for r in reference])
    read, written = list_traffic_per_element(combo, amsgrad, ema)
    return ListCaseResult(
        combo=combo, hyper=hyper, extras=extras, amsgrad=amsgrad, sizes=tuple(sizes), ema=ema,
        stats=stats, bit_exact=bit_exact, precision=precision,
        gm_bytes=stats.total("gm_read_bytes") + stats.total("gm_write_bytes"),
        gm_bytes_min=0 if skipped else sum(sizes) * (read + written), seconds=seconds)


#: The list op's own switches (its bool attributes: golden.Extras' bool fields), all on.
SWITCHES_ON = {f.name: True for f in dataclasses.fields(golden.Extras) if f.type in (bool, "bool")}

#: The list sweep's option sets: (label, AMSGrad, Extras, V2: no EMA and lr / EMA decay tensors).
LIST_OPTIONS = (
    ("adam", False, golden.Extras(), False),
    ("amsgrad+on+scale", True, golden.Extras(**SWITCHES_ON, grad_scale=1024.0, found_inf=0.0),
     False),
    ("noema+lr/d tensors", True, golden.Extras(grad_scale=64.0), True),
)


def list_sweep(sizes=LIST_FULL_SIZES, seed: int | None = None, platform: str = "cpu"):
    """Yields one ListCaseResult per dtype combination x option set (fresh random inputs)."""
    rng = np.random.default_rng(seed)
    for combo in list_combos():
        for k, (label, amsgrad, extras, v2) in enumerate(LIST_OPTIONS):
            hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=k % 2, weight_decay=0.01)
            yield run_list_case(rng, combo, hyper, extras, sizes, step=10, amsgrad=amsgrad,
                                platform=platform, ema=not v2, tensor_scalars=v2)


LIST_HEADER = (f"{'param/state/grad[/copy]':<34}{'options':<19}{'mode':>4}{'cores':>6}  "
               f"{'bit-exact vs emulation':<40}{'MERE/thr':>9}{'MARE/thr':>9}{'GM bytes':>10}"
               "  result")


def format_list_row(r: ListCaseResult) -> str:
    label = next(name for name, ams, ex, v2 in LIST_OPTIONS
                 if ams == r.amsgrad and ex == r.extras and v2 != r.ema)
    return (f"{r.combo.name:<34}{label:<19}{r.hyper.mode:>4}{r.stats.tiling['block_dim']:>6}  "
            f"{r.exact_column():<40}{r.columns()}")


HEADER = (f"{'dtype':<9}{'mode':>5}{'bias':>6}{'numel':>10}{'cores':>6}{'chunks':>7}  "
          f"{'bit-exact vs emulation':<24}{'MERE/thr':>9}{'MARE/thr':>9}{'GM bytes':>10}  result")


def format_row(r: CaseResult) -> str:
    return (f"{golden.dtype_name(r.dtype):<9}{r.hyper.mode:>5}{str(r.hyper.bias_correction):>6}"
            f"{r.numel:>10}{r.cores:>6}{r.chunks:>7}  {r.exact_column():<24}{r.columns()}")


def print_table(header: str, results, format_result, out) -> int:
    """Prints a row per result as it comes and the pass count; returns the failures."""
    print(header, file=out)
    rows = failures = 0
    seconds = 0.0
    for result in results:
        print(format_result(result), file=out, flush=True)
        rows += 1
        failures += not result.passed
        seconds += result.seconds
    print(f"\n{rows - failures}/{rows} PASS ({seconds:.1f} s in the kernel)", file=out)
    return failures


#: The 8-bit sweep's entries: a partial block, a block and a partial second one, three blocks
#: and a short fourth; the full sweep adds several chunks per core.
LIST8_QUICK_SIZES = (5, 300, 513, 1000)
LIST8_FULL_SIZES = LIST8_QUICK_SIZES + (4097, 65537)
#: The 8-bit sweep's option sets: (label, Extras, with the EMA).
LIST8_OPTIONS = (
    ("adam", golden.Extras(), True),
    ("scale+maximize", golden.Extras(grad_scale=1024.0, found_inf=0.0, maximize=True), True),
    ("noema", golden.Extras(), False),
)
LIST8_OUTPUTS = ("var", "m", "v", "m_absmax", "v_absmax", "s", "copy")


@dataclass(frozen=True, kw_only=True)
class List8CaseResult(Verdict):
    row: List8bitDtypes
    label: str
    hyper: Hyper
    stats: kernels.LaunchStats


def random_list8_entries(rng: np.random.Generator, sizes, row: List8bitDtypes, ema: bool):
    """Entries an optimizer could reach: weights ~ N(0, 0.05), gradients and moments of one
    log-uniform scale, the moments quantized with the dynamic maps, the EMA near the weights."""
    qmap_m, qmap_v = golden8bit.dynamic_map(True), golden8bit.dynamic_map(False)
    entries = []
    for n in sizes:
        sigma = 10.0 ** rng.uniform(-3.0, -1.0)
        var = (rng.standard_normal(n) * 0.05).astype(row.param.numpy)
        m, m_absmax = golden8bit.quantize((rng.standard_normal(n) * sigma).astype(np.float32),
                                          qmap_m)
        v, v_absmax = golden8bit.quantize(
            ((rng.standard_normal(n) * sigma) ** 2).astype(np.float32), qmap_v)
        s = (var.astype(np.float32) + rng.standard_normal(n).astype(np.float32) * 1e-3
             if ema else None)
        entries.append(dict(grad=(rng.standard_normal(n) * sigma).astype(row.grad.numpy),
                            var=var, m=m, v=v, m_absmax=m_absmax, v_absmax=v_absmax, s=s,
                            copy=None if row.copy is None else np.zeros(n, row.copy.numpy)))
    return entries, qmap_m, qmap_v


def run_list8_case(rng: np.random.Generator, row: List8bitDtypes, label: str, hyper: Hyper,
                   extras: golden.Extras, sizes, step: int, ema: bool,
                   platform: str = "cpu") -> List8CaseResult:
    """One ApplyFusedEmaAdam8bitList launch on the twin: every output of every entry equal to
    golden8bit's emulation bit for bit, the weights and the EMA by CANN's standard against its
    float64 update, and the DMA traffic one read of each input and one write of each output."""
    entries, qmap_m, qmap_v = random_list8_entries(rng, sizes, row, ema)
    step_arr = np.array([step], dtype=np.int64)
    keys = ("grad", "var", "m", "v", "m_absmax", "v_absmax", "s")
    expected, reference = [], []
    for e in entries:
        args = (*(e[k] for k in keys), step_arr, qmap_m, qmap_v, hyper, extras)
        expected.append(golden8bit.emulate_entry8(*args, copy=e["copy"]))
        reference.append(golden8bit.reference_entry8(*args, copy=e["copy"]))
    work = [{k: None if x is None else x.copy() for k, x in e.items()} for e in entries]
    column = (lambda k: None if work[0][k] is None else [w[k] for w in work])
    start = time.perf_counter()
    stats = kernels.apply_fused_ema_adam8bit_list(
        column("grad"), column("var"), column("m"), column("v"), column("m_absmax"),
        column("v_absmax"), column("s"), qmap_m, qmap_v, step_arr, hyper, extras,
        model_copies=column("copy"), platform=platform)
    seconds = time.perf_counter() - start
    bit_exact, precision = {}, {}
    for name in LIST8_OUTPUTS:
        if work[0][name] is None:
            continue
        equal = golden.bit_equal if name not in ("m", "v") else np.array_equal  # (uint8 codes)
        bit_exact[name] = all(equal(w[name], getattr(x, name)) for w, x in zip(work, expected))
        if name in ("var", "s") and not golden.writes_nothing(extras):
            precision[name] = golden.cann_precision_of_entries(
                [w[name] for w in work], [getattr(r, name) for r in reference])
    n, blocks = sum(sizes), sum(golden8bit.blocks(k) for k in sizes)
    p, g = row.param.numpy.itemsize, row.grad.numpy.itemsize
    c, s = (0 if row.copy is None else row.copy.numpy.itemsize), (4 if ema else 0)
    minimum = n * (g + p + 2 + s) + n * (p + 2 + s + c) + blocks * 2 * 4
    return List8CaseResult(
        row=row, label=label, hyper=hyper, stats=stats, bit_exact=bit_exact,
        precision=precision, seconds=seconds, gm_bytes_min=minimum,
        gm_bytes=stats.total("gm_read_bytes") + stats.total("gm_write_bytes"))


def list8_sweep(sizes=LIST8_FULL_SIZES, seed: int | None = None, platform: str = "cpu"):
    """Yields one List8CaseResult per dtype row x option set (fresh random inputs)."""
    rng = np.random.default_rng(seed)
    for row in LIST8BIT_DTYPES:
        for k, (label, extras, ema) in enumerate(LIST8_OPTIONS):
            hyper = Hyper(lr=1e-3, ema_decay=0.999, mode=k % 2, weight_decay=0.01)
            yield run_list8_case(rng, row, label, hyper, extras, sizes, step=10, ema=ema,
                                 platform=platform)


LIST8_HEADER = (f"{'param/grad[/copy]':<28}{'options':<16}{'mode':>4}{'cores':>6}  "
                f"{'bit-exact vs emulation':<44}{'MERE/thr':>9}{'MARE/thr':>9}{'GM bytes':>10}"
                "  result")


def format_list8_row(r: List8CaseResult) -> str:
    name = "/".join(d.short for d in (r.row.param, r.row.grad, r.row.copy) if d is not None)
    return (f"{name:<28}{r.label:<16}{r.hyper.mode:>4}{r.stats.tiling['block_dim']:>6}  "
            f"{r.exact_column():<44}{r.columns()}")


def main(quick: bool = False, seed: int | None = None, out=sys.stdout) -> int:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    print("ApplyFusedEmaAdam: AscendC kernel on the CPU twin vs the golden models", file=out)
    print("  bit-exact: all outputs equal the dtype-faithful fp32 emulation (= per output, X "
          "differs)", file=out)
    print("  MERE/thr, MARE/thr: worst output's mean / max relative error vs the float64 golden, "
          "as a fraction of CANN's threshold (pass < 1)", file=out)
    print("  GM bytes: DMA traffic counted by the twin vs the minimum 9 x numel x itemsize\n",
          file=out)
    failures = print_table(HEADER, sweep(sizes, seed), format_row, out)

    list_sizes = LIST_QUICK_SIZES if quick else LIST_FULL_SIZES
    print(f"\nApplyFusedEmaAdamList: the list kernel on the CPU twin vs the golden models, one "
          f"launch per row over {len(list_sizes)} tensors of {', '.join(map(str, list_sizes))} "
          "elements", file=out)
    print("  GM bytes: vs the minimum (each input read once, each output written once, model "
          "copies never read)\n", file=out)
    list_failures = print_table(LIST_HEADER, list_sweep(list_sizes, seed), format_list_row, out)

    list8_sizes = LIST8_QUICK_SIZES if quick else LIST8_FULL_SIZES
    print(f"\nApplyFusedEmaAdam8bitList: the 8-bit kernel on the CPU twin vs golden8bit, one "
          f"launch per row over {len(list8_sizes)} tensors of {', '.join(map(str, list8_sizes))} "
          "elements (MERE/MARE: the weights and the EMA)", file=out)
    print("  GM bytes: vs the minimum (each input read once, each output written once, the "
          "new scales written; the old ones are scalar reads)\n", file=out)
    list8_failures = print_table(LIST8_HEADER, list8_sweep(list8_sizes, seed), format_list8_row,
                                 out)
    total = failures + list_failures + list8_failures
    print(f"\ncheck: {'PASS' if not total else f'FAIL ({total} cases)'}: ApplyFusedEmaAdam, "
          f"ApplyFusedEmaAdamList and ApplyFusedEmaAdam8bitList on the CPU twin", file=out)
    return 1 if total else 0
