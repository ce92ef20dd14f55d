"""The AscendC kernels on the CPU twin, and the native CPU kernel, for numpy arrays.

:func:`apply_fused_ema_adam` updates ``var, m, v, s`` in place exactly as the NPU kernel does,
running the unchanged kernel source on the CPU twin, and returns the launch's tiling and the
per-core counters (GM bytes moved, vector instructions, UB use): the kernel-verification interface.
:func:`apply_fused_ema_adam_list` does the same for ApplyFusedEmaAdamList (lists of tensors, one
launch).

:func:`apply_fused_ema_adam_native` runs the same update with the native CPU kernel (one SIMD pass
over memory on a thread pool), bit-identical to the twin; the torch op uses it on the CPU device.
:func:`apply_fused_ema_adam_list_native` runs the list operator (ApplyFusedEmaAdamList: a whole
parameter group, mixed precision, AMSGrad, maximize, grad_scale, found_inf) with the native kernel
in one pool launch, bit-identical to :func:`golden.emulate_entry` per entry.
:func:`apply_fused_ema_adam8bit_list` and :func:`apply_fused_ema_adam8bit_list_native` run
ApplyFusedEmaAdam8bitList (8-bit moments, fp32 EMA) on the twin and with the native kernel,
bit-identical to :func:`golden8bit.emulate_entry8` per entry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from . import _kernels, golden
from ._dtypes import FLOAT_DTYPES, NUMPY_FLOAT_DTYPES
from .golden import Extras, Hyper, check_entry_dtypes, dtype_name


@dataclass(frozen=True)
class LaunchStats:
    tiling: dict
    blocks: list[dict]

    def total(self, key: str) -> int:
        return sum(b[key] for b in self.blocks)


def _raw(a: np.ndarray) -> np.ndarray:
    """A flat view whose buffer pybind11 accepts (bfloat16 has no buffer-protocol format)."""
    flat = a.reshape(-1)
    return flat.view(np.uint16) if flat.dtype.itemsize == 2 else flat


def _checked(step, read: dict, written: dict) -> np.ndarray:
    """Checks the float arrays of one launch by name (``read`` starts with grad; ``written`` are
    updated) and returns ``step`` as a one-element int64 array."""
    arrays = {**read, **written}
    grad = read["grad"]
    count = {5: "five", 9: "nine"}[len(arrays)]
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, got {type(a).__name__}")
        if a.dtype not in NUMPY_FLOAT_DTYPES:
            raise TypeError(f"{name}: dtype {a.dtype} is not "
                            f"{', '.join(d.name for d in FLOAT_DTYPES)}")
        if a.dtype != grad.dtype or a.shape != grad.shape:
            raise ValueError(f"{name} is {a.dtype}{list(a.shape)}, grad is "
                             f"{grad.dtype}{list(grad.shape)}: all {count} must match")
        if not a.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous")
        if name in written and not a.flags.writeable:
            raise ValueError(f"{name} must be writeable (the kernel writes it)")
    return _checked_step(step)


def _checked_step(step) -> np.ndarray:
    """``step`` as a one-element int64 array (TypeError otherwise)."""
    step = np.asarray(step)
    if step.dtype != np.int64 or step.size != 1:
        raise TypeError(f"step must be an int64 array of one element, got {step.dtype}"
                        f"{list(step.shape)}")
    return np.ascontiguousarray(step).reshape(-1)


def _attrs(hyper: Hyper):
    """The C++ attributes, set field by field by name."""
    attrs = _kernels.Attrs()
    for field in dataclasses.fields(Hyper):
        setattr(attrs, field.name, getattr(hyper, field.name))
    return attrs


def _list_attrs(hyper: Hyper, extras: Extras):
    """The list op's C++ attributes (its spec's): each from the field of its name in ``hyper`` or
    ``extras`` (whose other fields are the values of its optional tensors)."""
    attrs = _kernels.ApplyFusedEmaAdamListAttrs()
    for values in (hyper, extras):
        for field in dataclasses.fields(values):
            if hasattr(attrs, field.name):
                setattr(attrs, field.name, getattr(values, field.name))
    return attrs


def _hyper_args(grad, hyper: Hyper) -> tuple:
    """The launch arguments after the buffers: numel, dtype and the attributes."""
    return grad.size, dtype_name(grad.dtype), _attrs(hyper)


def apply_fused_ema_adam(grad, var, m, v, s, step, hyper: Hyper = Hyper(), *,
                         platform: str = "cpu", threads: int = 0,
                         overflow_mode: str = "inf_nan") -> LaunchStats:
    """Run one update in place through the twin. All five float arrays must be C-contiguous,
    of one supported dtype and one shape; ``step`` an int64 array of one element.
    ``overflow_mode``: the device's float-overflow mode the launch runs in, "inf_nan" (IEEE, the
    A2/A3 default) or "saturation" (:func:`golden.narrow`)."""
    step = _checked(step, {"grad": grad}, {"var": var, "m": m, "v": v, "s": s})
    result = _kernels.launch_apply_fused_ema_adam(_raw(grad), _raw(var), _raw(m), _raw(v), _raw(s),
                                               step, *_hyper_args(grad, hyper), platform, threads,
                                               overflow_mode)
    return LaunchStats(result["tiling"], result["blocks"])


def apply_fused_ema_adam_native(grad, var, m, v, s, step, hyper: Hyper = Hyper(), *,
                                threads: int = 0, isa: str = "", out=None,
                                min_elems_per_thread: int | None = None,
                                streaming_bytes: int | None = None) -> dict:
    """Run one update with the native CPU kernel: in place, or, with ``out=(var, m, v, s)``, into
    those arrays (the inputs are then only read). Same array rules as
    :func:`apply_fused_ema_adam`. ``threads`` 0 uses :func:`cpu_kernel`'s default; ``isa``
    forces a narrower one of this CPU's instruction sets than the best ("avx2", "generic" on an
    AVX-512 machine; "generic" on aarch64, whose best is "neon"); smaller launches
    than ``min_elems_per_thread`` per thread use fewer threads; launches moving at least
    ``streaming_bytes`` bytes run the loops tuned for streaming from memory (0: always). Returns
    the tiling, the instruction set and the threads used."""
    state = {"var": var, "m": m, "v": v, "s": s}
    if out is None:
        step = _checked(step, {"grad": grad}, state)
        outputs = {}
    else:
        if len(out) != 4:
            raise ValueError("out must be the four arrays (var, m, v, s)")
        outputs = dict(zip(("var_out", "m_out", "v_out", "s_out"), out))
        step = _checked(step, {"grad": grad, **state}, outputs)
    kwargs = {name: _raw(a) for name, a in outputs.items()}
    kwargs.update(_native_options(min_elems_per_thread, streaming_bytes))
    return _kernels.launch_native_apply_fused_ema_adam(_raw(grad), _raw(var), _raw(m), _raw(v),
                                                    _raw(s), step, *_hyper_args(grad, hyper),
                                                    threads, isa, **kwargs)


def _given_arrays(named: dict, one_dtype: bool) -> tuple[dict, int]:
    """The given lists of a launch by name, and their length: equal lengths; numpy arrays,
    C-contiguous, writeable where the kernel writes (all but ``grads``); with ``one_dtype``, one
    dtype per list."""
    lists = {name: list(arrays) for name, arrays in named.items() if arrays is not None}
    count = len(lists["grads"])
    for name, arrays in lists.items():
        if len(arrays) != count:
            raise ValueError(f"{name} has {len(arrays)} entries, grads has {count}")
        for i, a in enumerate(arrays):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"{name}[{i}] must be a numpy array, got {type(a).__name__}")
            if not a.flags.c_contiguous:
                raise ValueError(f"{name}[{i}] must be C-contiguous")
            if name != "grads" and not a.flags.writeable:
                raise ValueError(f"{name}[{i}] must be writeable (the kernel writes it)")
            if one_dtype and a.dtype != arrays[0].dtype:
                raise TypeError(f"{name}[{i}] is {a.dtype} but {name}[0] is {arrays[0].dtype}: "
                                "every tensor of a list has one dtype")
    return lists, count


def _checked_lists(grads, vars, ms, vs, ss, max_vs=None, model_copies=None) -> dict:
    """Checks the lists of one list launch and returns them by name (``ss``, ``max_vs`` and
    ``model_copies`` only when given): equal lengths; numpy arrays, C-contiguous, writeable where
    the kernel writes; one dtype per list; entry i of every list has vars[i]'s shape; each entry's
    dtypes follow :func:`golden.check_entry_dtypes`."""
    named = {"grads": grads, "vars": vars, "ms": ms, "vs": vs, "ss": ss,
             "max_vs": max_vs, "model_copies": model_copies}
    lists, count = _given_arrays(named, one_dtype=True)
    for i in range(count):
        entry = {name: arrays[i] for name, arrays in lists.items()}
        for name, a in entry.items():
            if a.shape != entry["vars"].shape:
                raise ValueError(f"{name}[{i}] has shape {list(a.shape)}, vars[{i}] has "
                                 f"{list(entry['vars'].shape)}")
        check_entry_dtypes(entry["grads"], entry["vars"], entry["ms"], entry["vs"], entry.get("ss"),
                           entry.get("max_vs"), entry.get("model_copies"))
    return lists


def _list_dtype_names(lists: dict) -> tuple[str, str, str, str]:
    """The launch's (param, state, grad, copy) dtype names; copy "" without model copies."""
    def name_of(key, default="float32"):
        arrays = lists.get(key)
        return dtype_name(arrays[0].dtype) if arrays else default
    copy = name_of("model_copies", "float16") if "model_copies" in lists else ""
    return name_of("vars"), name_of("ms"), name_of("grads"), copy


def _scalar_f32(value, name: str) -> np.ndarray | None:
    """The one-element float32 array of an optional scalar tensor argument (None stays None)."""
    if value is None:
        return None
    arr = np.ascontiguousarray(np.asarray(value, dtype=np.float32)).reshape(-1)
    if arr.size != 1:
        raise ValueError(f"{name} must have one element, got {arr.size}")
    return arr


def apply_fused_ema_adam_list(grads, vars, ms, vs, ss, step, hyper: Hyper = Hyper(),
                              extras: Extras = Extras(), *, max_vs=None, model_copies=None,
                              platform: str = "cpu", threads: int = 0, lr_tensor=None,
                              ema_decay_tensor=None, overflow_mode: str = "inf_nan") -> LaunchStats:
    """Run ApplyFusedEmaAdamList in place through the twin: one launch for the whole lists.

    Entry i of every list has the shape of ``vars[i]``; each list has one dtype, and the
    launch's dtypes follow :func:`golden.check_entry_dtypes` (vars P, state S for ms/vs/ss/max_vs,
    grads G, model copies C). ``max_vs`` turns on AMSGrad, ``model_copies`` the model copies
    (written from the fp32 vars, never read). ``extras`` gives the list op's own attributes and
    the values of the optional one-element grad_scale and found_inf tensors. ``ss=None``: a
    launch without the EMA (the kernel neither reads nor writes it). ``lr_tensor`` /
    ``ema_decay_tensor``: values of the one-element fp32 tensors the kernel reads instead of
    ``hyper.lr`` / ``hyper.ema_decay``. ``overflow_mode`` as in :func:`apply_fused_ema_adam`.
    Returns the tiling (with ``core_segments``: per core its [(tensor, begin, end), ...]) and the
    per-core counters."""
    lists = _checked_lists(grads, vars, ms, vs, ss, max_vs, model_copies)
    raw = {name: [_raw(a) for a in arrays] for name, arrays in lists.items()}
    result = _kernels.launch_list(
        raw["grads"], raw["vars"], raw["ms"], raw["vs"], raw.get("ss"), _checked_step(step),
        [a.size for a in lists["vars"]], *_list_dtype_names(lists), _list_attrs(hyper, extras),
        max_vs=raw.get("max_vs"), copies=raw.get("model_copies"),
        grad_scale=_scalar_f32(extras.grad_scale, "grad_scale"),
        found_inf=_scalar_f32(extras.found_inf, "found_inf"),
        platform=platform, threads=threads, lr=_scalar_f32(lr_tensor, "lr_tensor"),
        ema_decay=_scalar_f32(ema_decay_tensor, "ema_decay_tensor"), overflow_mode=overflow_mode)
    return LaunchStats(result["tiling"], result["blocks"])


def compute_list_tiling(numels, param, state=None, grad=None, copy=None, hyper: Hyper = Hyper(),
                        *, maximize: bool = False, amsgrad: bool = False,
                        grad_scale: bool = False, found_inf: bool = False, ema: bool = True,
                        lr_tensor: bool = False, ema_decay_tensor: bool = False,
                        platform: str = "cpu", vector_core_num: int = 0,
                        ub_size: int = 0) -> dict:
    """ApplyFusedEmaAdamList host tiling for tensors of ``numels`` elements: dtypes P (``param``),
    S (``state``, default P), G (``grad``, default P, or C with copies) and C (``copy``, None:
    no model copies); the options say which optional inputs a launch has. Includes
    ``core_starts`` and per core its ``core_segments`` [(tensor, begin, end), ...]."""
    state = param if state is None else state
    grad = (copy if copy is not None else param) if grad is None else grad
    return _kernels.compute_list_tiling(
        [int(n) for n in numels], dtype_name(param), dtype_name(state), dtype_name(grad),
        "" if copy is None else dtype_name(copy), _list_attrs(hyper, Extras(maximize=maximize)),
        amsgrad, grad_scale, found_inf, platform, vector_core_num, ub_size, ema, lr_tensor,
        ema_decay_tensor)


def list_dtype_combinations() -> list[dict]:
    """ApplyFusedEmaAdamList's dtype combinations, one per tiling key: dicts of param, state,
    grad, copy (dtype names; copy None without model copies) and tiling_key."""
    return _kernels.list_dtype_combinations()
def apply_fused_ema_adam_list_native(grads, vars, ms, vs, ss, step, hyper: Hyper = Hyper(),
                                     extras: Extras = Extras(), *, max_vs=None,
                                     model_copies=None, threads: int = 0, isa: str = "",
                                     min_elems_per_thread: int | None = None,
                                     streaming_bytes: int | None = None, lr_tensor=None,
                                     ema_decay_tensor=None) -> dict:
    """Run ApplyFusedEmaAdamList with the native CPU kernel, in place on lists of numpy arrays:
    the lists, ``lr_tensor`` and ``ema_decay_tensor`` as in :func:`apply_fused_ema_adam_list`;
    ``threads``, ``isa``,
    ``min_elems_per_thread`` and ``streaming_bytes`` as in :func:`apply_fused_ema_adam_native`.
    Returns the instruction set and the threads used (0 when nothing ran)."""
    lists = _checked_lists(grads, vars, ms, vs, ss, max_vs, model_copies)
    raw = {name: [_raw(a) for a in arrays] for name, arrays in lists.items()}
    return _kernels.launch_native_list(
        raw["grads"], raw["vars"], raw["ms"], raw["vs"], raw.get("ss"), raw.get("max_vs"),
        raw.get("model_copies"), [a.size for a in lists["vars"]], _checked_step(step),
        _scalar_f32(extras.grad_scale, "grad_scale"), _scalar_f32(extras.found_inf, "found_inf"),
        *_list_dtype_names(lists), _list_attrs(hyper, extras), threads, isa,
        **_native_options(min_elems_per_thread, streaming_bytes),
        lr=_scalar_f32(lr_tensor, "lr_tensor"),
        ema_decay=_scalar_f32(ema_decay_tensor, "ema_decay_tensor"))


def _checked_lists8(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, model_copies) -> dict:
    """Checks the lists of one 8-bit list launch and returns them by name (``ss`` and
    ``model_copies`` only when given): equal lengths; numpy arrays, C-contiguous, writeable where
    the kernel writes; each entry as :func:`golden8bit.check_entry8` wants it."""
    from . import golden8bit
    named = {"grads": grads, "vars": vars, "ms": ms, "vs": vs, "m_absmaxes": m_absmaxes,
             "v_absmaxes": v_absmaxes, "ss": ss, "model_copies": model_copies}
    lists, count = _given_arrays(named, one_dtype=False)
    for i in range(count):
        e = {name: arrays[i] for name, arrays in lists.items()}
        golden8bit.check_entry8(e["grads"], e["vars"], e["ms"], e["vs"], e["m_absmaxes"],
                                e["v_absmaxes"], e.get("ss"), e.get("model_copies"))
    return lists


def _lists8_args(lists: dict, qmap_m, qmap_v, step, hyper: Hyper, extras: Extras) -> tuple:
    """The 8-bit launch's arguments in the bindings' order, from the checked lists."""
    raw = {name: [_raw(a) for a in arrays] for name, arrays in lists.items()}
    first = (lambda key: dtype_name(lists[key][0].dtype) if lists.get(key) else "")
    maps = [np.ascontiguousarray(np.asarray(q, dtype=np.float32)).reshape(-1)
            for q in (qmap_m, qmap_v)]
    return (raw["grads"], raw["vars"], raw["ms"], raw["vs"], raw["m_absmaxes"],
            raw["v_absmaxes"], raw.get("ss"), raw.get("model_copies"),
            [a.size for a in lists["vars"]], *maps, _checked_step(step),
            _scalar_f32(extras.grad_scale, "grad_scale"),
            _scalar_f32(extras.found_inf, "found_inf"), first("vars") or "float32",
            first("grads") or "float32", first("model_copies"), _attrs(hyper), extras.maximize)


def apply_fused_ema_adam8bit_list(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, qmap_m,
                                  qmap_v, step, hyper: Hyper = Hyper(),
                                  extras: Extras = Extras(), *, model_copies=None,
                                  platform: str = "cpu", threads: int = 0, lr_tensor=None,
                                  ema_decay_tensor=None,
                                  overflow_mode: str = "inf_nan") -> LaunchStats:
    """Run ApplyFusedEmaAdam8bitList's AscendC kernel in place through the twin: one launch for
    the whole lists. Entry i: ``grads[i]``, ``vars[i]``, ``ms[i]`` / ``vs[i]`` (uint8 codes),
    ``ss[i]`` (fp32 EMA; ``ss=None``: no EMA) and ``model_copies[i]`` of one size;
    ``m_absmaxes[i]``, ``v_absmaxes[i]`` fp32 [ceil(n / 256)]; ``qmap_m``, ``qmap_v`` the 256-entry
    maps (``golden8bit.dynamic_map``). ``hyper``, ``extras``, ``lr_tensor``, ``ema_decay_tensor``,
    ``overflow_mode`` as in :func:`apply_fused_ema_adam_list`. Returns the tiling and the per-block
    counters."""
    lists = _checked_lists8(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, model_copies)
    result = _kernels.launch_adam8bit_list(
        *_lists8_args(lists, qmap_m, qmap_v, step, hyper, extras), platform=platform,
        threads=threads, lr=_scalar_f32(lr_tensor, "lr_tensor"),
        ema_decay=_scalar_f32(ema_decay_tensor, "ema_decay_tensor"), overflow_mode=overflow_mode)
    return LaunchStats(result["tiling"], result["blocks"])


def apply_fused_ema_adam8bit_list_native(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, qmap_m,
                                         qmap_v, step, hyper: Hyper = Hyper(),
                                         extras: Extras = Extras(), *, model_copies=None,
                                         threads: int = 0, isa: str = "",
                                         min_elems_per_thread: int | None = None,
                                         lr_tensor=None, ema_decay_tensor=None) -> dict:
    """Run ApplyFusedEmaAdam8bitList with the native CPU kernel, in place on lists of numpy
    arrays (as :func:`apply_fused_ema_adam8bit_list`); ``threads``, ``isa`` and
    ``min_elems_per_thread`` as in :func:`apply_fused_ema_adam_native`. Returns the instruction
    set and the threads used (0 when nothing ran)."""
    lists = _checked_lists8(grads, vars, ms, vs, m_absmaxes, v_absmaxes, ss, model_copies)
    options = {} if min_elems_per_thread is None else {"min_elems_per_thread": min_elems_per_thread}
    return _kernels.launch_native_adam8bit_list(
        *_lists8_args(lists, qmap_m, qmap_v, step, hyper, extras), threads=threads, isa=isa,
        lr=_scalar_f32(lr_tensor, "lr_tensor"),
        ema_decay=_scalar_f32(ema_decay_tensor, "ema_decay_tensor"), **options)


def native_list_chunks(numels, threads: int) -> list[tuple[int, int, int]]:
    """The chunks ``(tensor, offset, count)`` the native list kernel hands out for entries of
    these element counts on ``threads`` threads (one pool launch claims them all)."""
    return _kernels.native_list_chunks(list(numels), threads)


def native_wakes(n: int) -> bool:
    """Whether a native launch of ``n`` elements started now on this thread would wake sleeping
    pool workers (from 2^20 elements, alone or in a burst of launches each starting within 2 ms of
    the one before); the call counts as such a launch."""
    return _kernels.native_wakes(n)


def native_pool_launches() -> int:
    """How many times the native kernels' thread pool has been launched in this process."""
    return _kernels.native_pool_launches()


def _native_options(min_elems_per_thread, streaming_bytes) -> dict:
    """The native launch options given (the bindings' defaults otherwise)."""
    options = {"min_elems_per_thread": min_elems_per_thread, "streaming_bytes": streaming_bytes}
    return {name: value for name, value in options.items() if value is not None}


def cpu_kernel() -> dict:
    """The CPU kernel the torch op and the aclnn API run now: ``kernel`` is "native" (default) or
    "twin" (``ASCEND_EMA_ADAM_CPU_KERNEL=twin``); ``isa`` the native kernel's instruction set;
    ``threads`` its default thread count (``ASCEND_EMA_ADAM_NUM_THREADS``, else every CPU the
    process may use). Raises ValueError if either variable is invalid."""
    return _kernels.cpu_kernel()


def compute_tiling(numel: int, dtype, hyper: Hyper = Hyper(), *, platform: str = "cpu",
                   vector_core_num: int = 0, ub_size: int = 0) -> dict:
    """Host tiling for ``numel`` elements on a platform preset (optionally overriding the
    preset's vector core count or UB size)."""
    return _kernels.compute_apply_fused_ema_adam_tiling(numel, dtype_name(dtype), platform,
                                                     _attrs(hyper), vector_core_num, ub_size)


def platforms() -> list[dict]:
    """The platform presets: name, vector_core_num, ub_size, hbm_gbps."""
    return _kernels.platforms()
