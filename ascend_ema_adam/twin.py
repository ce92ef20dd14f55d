"""The AscendC kernels on the CPU twin, and the native CPU kernel, for numpy arrays.

:func:`apply_fused_ema_adam` updates ``var, m, v, s`` in place exactly as the NPU kernel does,
running the unchanged kernel source on the CPU twin, and returns the launch's tiling and the
per-core counters (GM bytes moved, vector instructions, UB use): the kernel-verification interface.
:func:`apply_fused_ema_adam_list` does the same for ApplyFusedEmaAdamList (lists of tensors, one
launch).

:func:`apply_fused_ema_adam_native` runs the same update with the native CPU kernel (one SIMD pass
over memory on a thread pool), bit-identical to the twin; the torch op uses it on the CPU device.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from . import _twin
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
    attrs = _twin.Attrs()
    for field in dataclasses.fields(Hyper):
        setattr(attrs, field.name, getattr(hyper, field.name))
    return attrs


def _hyper_args(grad, hyper: Hyper) -> tuple:
    """The launch arguments after the buffers: numel, dtype and the attributes."""
    return grad.size, dtype_name(grad.dtype), _attrs(hyper)


def apply_fused_ema_adam(grad, var, m, v, s, step, hyper: Hyper = Hyper(), *,
                         platform: str = "cpu", threads: int = 0) -> LaunchStats:
    """Run one update in place through the twin. All five float arrays must be C-contiguous,
    of one supported dtype and one shape; ``step`` an int64 array of one element."""
    step = _checked(step, {"grad": grad}, {"var": var, "m": m, "v": v, "s": s})
    result = _twin.launch(_raw(grad), _raw(var), _raw(m), _raw(v), _raw(s), step,
                          *_hyper_args(grad, hyper), platform, threads)
    return LaunchStats(result["tiling"], result["blocks"])


def apply_fused_ema_adam_native(grad, var, m, v, s, step, hyper: Hyper = Hyper(), *,
                                threads: int = 0, isa: str = "", out=None,
                                min_elems_per_thread: int | None = None) -> dict:
    """Run one update with the native CPU kernel: in place, or, with ``out=(var, m, v, s)``, into
    those arrays (the inputs are then only read). Same array rules as
    :func:`apply_fused_ema_adam`. ``threads`` 0 uses :func:`cpu_kernel`'s default; ``isa``
    forces a narrower instruction set ("avx2", "generic") than the best one; smaller launches
    than ``min_elems_per_thread`` per thread use fewer threads. Returns the tiling, the
    instruction set and the threads used."""
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
    if min_elems_per_thread is not None:
        kwargs["min_elems_per_thread"] = min_elems_per_thread
    return _twin.launch_native(_raw(grad), _raw(var), _raw(m), _raw(v), _raw(s), step,
                               *_hyper_args(grad, hyper), threads, isa, **kwargs)


def _list_arrays(name: str, arrays, count: int, writable: bool) -> list:
    """Checks one list of a list launch (``count`` numpy arrays, C-contiguous, one dtype,
    writeable if the kernel writes it) and returns it as a list."""
    arrays = list(arrays)
    if len(arrays) != count:
        raise ValueError(f"{name} has {len(arrays)} entries, grads has {count}")
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name}[{i}] must be a numpy array, got {type(a).__name__}")
        if not a.flags.c_contiguous:
            raise ValueError(f"{name}[{i}] must be C-contiguous")
        if writable and not a.flags.writeable:
            raise ValueError(f"{name}[{i}] must be writeable (the kernel writes it)")
        if a.dtype != arrays[0].dtype:
            raise TypeError(f"{name}[{i}] is {a.dtype} but {name}[0] is {arrays[0].dtype}: "
                            "every entry of a list has one dtype")
    return arrays


def _scalar_f32(value) -> np.ndarray | None:
    return None if value is None else np.array([value], dtype=np.float32)


def apply_fused_ema_adam_list(grads, vars, ms, vs, ss, step, hyper: Hyper = Hyper(),
                              extras: Extras = Extras(), *, max_vs=None, copies=None,
                              platform: str = "cpu", threads: int = 0) -> LaunchStats:
    """Run ApplyFusedEmaAdamList in place through the twin: one launch for the whole lists.

    Entry i of every list has the shape of ``grads[i]``; each list has one dtype, and the
    launch's dtypes follow :func:`golden.check_entry_dtypes` (vars P, state S for ms/vs/ss/max_vs,
    grads G, model copies C). ``max_vs`` turns on AMSGrad, ``copies`` the model copies (written
    from the fp32 vars, never read). ``extras`` gives maximize and the values of the optional
    one-element grad_scale and found_inf tensors. Returns the tiling (with ``core_segments``: per
    core its [(tensor, begin, end), ...]) and the per-core counters."""
    grads = _list_arrays("grads", grads, len(grads), False)
    count = len(grads)
    lists = {name: _list_arrays(name, arrays, count, True)
             for name, arrays in (("vars", vars), ("ms", ms), ("vs", vs), ("ss", ss))}
    optional = {name: _list_arrays(name, arrays, count, True)
                for name, arrays in (("max_vs", max_vs), ("copies", copies))
                if arrays is not None}
    for i, g in enumerate(grads):
        entry = {name: arrays[i] for name, arrays in {**lists, **optional}.items()}
        for name, a in entry.items():
            if a.shape != g.shape:
                raise ValueError(f"{name}[{i}] has shape {list(a.shape)}, grads[{i}] "
                                 f"{list(g.shape)}: the entries of a list must match")
        check_entry_dtypes(g, entry["vars"], entry["ms"], entry["vs"], entry["ss"],
                           entry.get("max_vs"), entry.get("copies"))
    step = _checked_step(step)

    def name_of(arrays, default="float32"):
        return dtype_name(arrays[0].dtype) if arrays else default

    copy_dtype = name_of(optional["copies"], "float16") if "copies" in optional else ""
    result = _twin.launch_list(
        [_raw(a) for a in grads], *([_raw(a) for a in lists[n]] for n in ("vars", "ms", "vs", "ss")),
        step, [a.size for a in grads], name_of(lists["vars"]), name_of(lists["ms"]),
        name_of(grads), copy_dtype, _attrs(hyper), extras.maximize,
        max_vs=[_raw(a) for a in optional["max_vs"]] if "max_vs" in optional else None,
        copies=[_raw(a) for a in optional["copies"]] if "copies" in optional else None,
        grad_scale=_scalar_f32(extras.grad_scale), found_inf=_scalar_f32(extras.found_inf),
        platform=platform, threads=threads)
    return LaunchStats(result["tiling"], result["blocks"])


def compute_list_tiling(numels, param, state=None, grad=None, copy=None, hyper: Hyper = Hyper(),
                        *, maximize: bool = False, amsgrad: bool = False,
                        grad_scale: bool = False, found_inf: bool = False,
                        platform: str = "cpu", vector_core_num: int = 0,
                        ub_size: int = 0) -> dict:
    """ApplyFusedEmaAdamList host tiling for tensors of ``numels`` elements: dtypes P (``param``),
    S (``state``, default P), G (``grad``, default P, or C with copies) and C (``copy``, None:
    no model copies); the options say which optional inputs a launch has. Includes
    ``core_starts`` and per core its ``core_segments`` [(tensor, begin, end), ...]."""
    state = param if state is None else state
    grad = (copy if copy is not None else param) if grad is None else grad
    return _twin.compute_list_tiling(
        [int(n) for n in numels], dtype_name(param), dtype_name(state), dtype_name(grad),
        "" if copy is None else dtype_name(copy), _attrs(hyper), maximize, amsgrad, grad_scale,
        found_inf, platform, vector_core_num, ub_size)


def list_dtype_combinations() -> list[dict]:
    """ApplyFusedEmaAdamList's dtype combinations, one per tiling key: dicts of param, state,
    grad, copy (dtype names; copy None without model copies) and tiling_key."""
    return _twin.list_dtype_combinations()


def cpu_kernel() -> dict:
    """The CPU kernel the torch op and the aclnn API run now: ``kernel`` is "native" (default) or
    "twin" (``ASCEND_EMA_ADAM_CPU_KERNEL=twin``); ``isa`` the native kernel's instruction set;
    ``threads`` its default thread count (``ASCEND_EMA_ADAM_NUM_THREADS``, else every CPU the
    process may use). Raises ValueError if either variable is invalid."""
    return _twin.cpu_kernel()


def compute_tiling(numel: int, dtype, hyper: Hyper = Hyper(), *, platform: str = "cpu",
                   vector_core_num: int = 0, ub_size: int = 0) -> dict:
    """Host tiling for ``numel`` elements on a platform preset (optionally overriding the
    preset's vector core count or UB size)."""
    return _twin.compute_tiling(numel, dtype_name(dtype), platform, _attrs(hyper),
                                vector_core_num, ub_size)


def platforms() -> list[dict]:
    """The platform presets: name, vector_core_num, ub_size, hbm_gbps."""
    return _twin.platforms()
