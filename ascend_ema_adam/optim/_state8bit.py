"""The 8-bit state of :class:`FusedEmaAdamW` (``state_bits=8``): which parameters of a group
keep it, its keys, the group's maps, its checks, and the conversions between the two state
kinds. The math of a conversion is :mod:`ascend_ema_adam.golden8bit`'s (``quantize``,
``decode``: the operator's own encode and decode), run on the host.

Per parameter of at least ``min_8bit_size`` elements in a group with ``state_bits=8``:
``exp_avg_codes`` and ``exp_avg_sq_codes`` (uint8, the parameter's shape), ``exp_avg_absmax`` and
``exp_avg_sq_absmax`` (fp32 ``[ceil(n / 256)]``: one scale per block of 256 elements of the
flattened parameter), beside the usual ``ema_params`` (fp32), ``master_param`` and ``step``.
Per group: ``exp_avg_qmap`` and ``exp_avg_sq_qmap`` (fp32 ``[256]``, the signed and unsigned
dynamic maps), made when an 8-bit group is added (a group set to 8 bits later: at its next
step) or taken from a checkpoint."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .. import golden8bit

CODES_M, CODES_V = "exp_avg_codes", "exp_avg_sq_codes"
ABSMAX_M, ABSMAX_V = "exp_avg_absmax", "exp_avg_sq_absmax"
#: The per-parameter state of the 8-bit kind (beside ema_params, master_param, step).
KEYS_8BIT = (CODES_M, CODES_V, ABSMAX_M, ABSMAX_V)
#: The group's maps: m's codes index the signed map, v's the unsigned one.
QMAP_M, QMAP_V = "exp_avg_qmap", "exp_avg_sq_qmap"
MAP_KEYS = (QMAP_M, QMAP_V)
_SIGNED = {QMAP_M: True, QMAP_V: False}
# which moment each key belongs to: (fp32 key, codes key, absmax key, map key)
MOMENTS = (("exp_avg", CODES_M, ABSMAX_M, QMAP_M), ("exp_avg_sq", CODES_V, ABSMAX_V, QMAP_V))


def is_8bit(group: dict, numel: int) -> bool:
    """Whether a parameter of ``numel`` elements keeps 8-bit state in ``group``: the group says
    ``state_bits=8`` and the parameter has at least ``min_8bit_size`` elements (bitsandbytes'
    rule: the state of smaller tensors is a rounding error of the total, and their fp32 state
    is exact)."""
    return group.get("state_bits", 32) == 8 and numel >= group["min_8bit_size"]


# (`state is not None`, not `bool(state)`: torch 2.7's dynamo cannot trace bool() of a dict)
def has_8bit_state(state: dict | None) -> bool:
    return state is not None and CODES_M in state


def has_moments(state: dict | None) -> bool:
    """Whether ``state`` holds moments, of either kind (a parameter updated before)."""
    return state is not None and ("exp_avg" in state or CODES_M in state)


def default_map(key: str, device) -> Tensor:
    """``golden8bit.dynamic_map`` (bitsandbytes' ``create_dynamic_map``) of the map ``key``."""
    return torch.from_numpy(golden8bit.dynamic_map(_SIGNED[key])).to(device)


def ensure_maps(group: dict, device) -> tuple[Tensor, Tensor]:
    """The group's maps, made (the dynamic maps, on ``device``) where the group has none."""
    for key in MAP_KEYS:
        if not isinstance(group.get(key), Tensor):
            group[key] = default_map(key, device)
    return group[QMAP_M], group[QMAP_V]


def map_error(group: dict) -> str | None:
    """The group's maps, where it has them, as the operator takes them: fp32 ``[256]`` tensors,
    on the host finite, sorted and within [-1, 1] (golden8bit.check_map; a device map, or one
    traced by torch.compile, is checked by the operator)."""
    for key in MAP_KEYS:
        q = group.get(key)
        if q is None:
            continue
        if not isinstance(q, Tensor) or q.dtype != torch.float32 or tuple(q.shape) != (256,):
            what = (f"{q.dtype} {list(q.shape)}" if isinstance(q, Tensor)
                    else type(q).__name__)
            return f"the group's {key} must be a float32 tensor of shape [256], got {what}"
        if q.device.type == "cpu" and not torch.compiler.is_compiling():
            try:
                golden8bit.check_map(q.numpy(), key)
            except ValueError as e:
                return f"the group's {e}"
    return None


def state_error(p: Tensor, state: dict) -> str | None:
    """The 8-bit state tensors present in ``state`` against parameter ``p``: uint8 codes of its
    shape, fp32 scales of one per block; on its device; all four or none."""
    present = [key for key in KEYS_8BIT if key in state]
    if not present:
        return None
    if len(present) != len(KEYS_8BIT):
        missing = [key for key in KEYS_8BIT if key not in state]
        return f"the 8-bit state has {', '.join(present)} but not {', '.join(missing)}"
    blocks = golden8bit.blocks(p.numel())
    for key in KEYS_8BIT:
        t = state[key]
        codes = key in (CODES_M, CODES_V)
        dtype, shape = (torch.uint8, tuple(p.shape)) if codes else (torch.float32, (blocks,))
        if not isinstance(t, Tensor):
            return f"state '{key}' is a {type(t).__name__}, expected a tensor"
        if t.dtype != dtype or tuple(t.shape) != shape:
            what = "one code per element" if codes else "one scale per block of 256 elements"
            return (f"state '{key}' is {t.dtype} {list(t.shape)}, expected {dtype} "
                    f"{list(shape)} ({what})")
        if not t.is_contiguous():
            return f"state '{key}' is not contiguous (the 8-bit launch takes contiguous tensors)"
        if t.device != p.device:
            return f"state '{key}' is on {t.device}, the parameter on {p.device}"
    return None


def zero_state(p: Tensor, qmaps: tuple[Tensor, Tensor]) -> dict[str, Tensor]:
    """The 8-bit state of zero moments: each block's scale 0 and every code the map's code of
    0 (what ``golden8bit.quantize`` makes of zeros)."""
    out = {}
    blocks = golden8bit.blocks(p.numel())
    for (_, codes, absmax, _), q in zip(MOMENTS, qmaps):
        zero_code = int(golden8bit.encode(np.zeros(1, np.float32),
                                          golden8bit.encode_thresholds(_host(q)))[0])
        out[codes] = torch.full(p.shape, zero_code, dtype=torch.uint8, device=p.device)
        out[absmax] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
    return out


def _host(t: Tensor) -> np.ndarray:
    return t.detach().to("cpu").contiguous().numpy()


def quantized(x: Tensor, qmap: Tensor, *, second_moment: bool) -> tuple[Tensor, Tensor]:
    """``golden8bit.quantize`` of a moment (any float dtype, widened exactly to fp32): its uint8
    codes (``x``'s shape) and fp32 block scales, on ``x``'s device."""
    codes, absmax = golden8bit.quantize(_host(x.to(torch.float32)).reshape(-1), _host(qmap),
                                        second_moment=second_moment)
    return (torch.from_numpy(codes).reshape(x.shape).to(x.device),
            torch.from_numpy(absmax).to(x.device))


def decoded(codes: Tensor, absmax: Tensor, qmap: Tensor) -> Tensor:
    """``golden8bit.decode``: the fp32 moment the codes stand for (the codes' shape and device)."""
    values = golden8bit.decode(_host(codes), _host(absmax), _host(qmap))
    return torch.from_numpy(np.ascontiguousarray(values)).reshape(codes.shape).to(codes.device)


def to_8bit(state: dict, qmaps: tuple[Tensor, Tensor]) -> None:
    """fp32 (or 16-bit) moments of ``state`` replaced by their 8-bit state (AMSGrad's maximum,
    which the 8-bit state has not, is dropped by the caller's checks before)."""
    for (wide, codes, absmax, _), q in zip(MOMENTS, qmaps):
        state[codes], state[absmax] = quantized(state.pop(wide), q,
                                                second_moment=wide == "exp_avg_sq")


def to_wide(state: dict, qmaps: tuple[Tensor, Tensor], dtype: torch.dtype) -> None:
    """The 8-bit state of ``state`` replaced by the moments it stands for, in ``dtype``."""
    for (wide, codes, absmax, _), q in zip(MOMENTS, qmaps):
        state[wide] = decoded(state.pop(codes), state.pop(absmax), q).to(dtype)
