"""FusedEmaAdamW(state_bits=8): the 8-bit blockwise moments of ApplyFusedEmaAdam8bitList.

Every step is golden8bit.emulate_entry8 driven by hand, bit for bit, on each dtype row (fp32,
16-bit parameters, fp32 masters with 16-bit copies); parameters below min_8bit_size keep the fp32
path's state and bits; checkpoints carry codes, scales and maps, resume bit for bit and convert
to and from fp32 state by golden8bit's quantize / decode; the state is about 6 bytes per
parameter, measured from the tensors; refused configurations and bad state change nothing;
GradScaler skips, fused clipping, lr tensors, foreach=False, no EMA, the EMA helpers, the
launch cache and torch.compile work on 8-bit groups; a training run equals the native kernel
launched by hand."""

import copy
import io

import ml_dtypes
import numpy as np
import pytest
import torch

from ascend_ema_adam import golden8bit as g8
from ascend_ema_adam.golden import Extras, Hyper
from ascend_ema_adam.optim import FusedEmaAdamW
from torch_features import set_grad

QMAP_M, QMAP_V = g8.dynamic_map(True), g8.dynamic_map(False)
CODE_KEYS = ("exp_avg_codes", "exp_avg_sq_codes", "exp_avg_absmax", "exp_avg_sq_absmax")
# sizes of 8-bit state: a short last block, a 2-D shape, whole blocks only
SHAPES = [(4096 + 77,), (80, 70), (4096,)]
HYPER = dict(lr=3e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.02, ema_decay=0.99,
             ema_warmup=None)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().reshape(-1)
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def bits(t: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(to_numpy(t)).view(np.uint8))


def assert_bits(actual: torch.Tensor, want: np.ndarray, what: str) -> None:
    want = np.asarray(want).reshape(-1)
    got = to_numpy(actual)
    assert got.dtype == want.dtype, what
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), what


ROWS = {  # id: (parameter dtype, gradient dtype, master_weights)
    "fp32": (torch.float32, torch.float32, False),
    "bf16": (torch.bfloat16, torch.bfloat16, False),
    "fp16-fp32-grads": (torch.float16, torch.float32, False),
    "fp32-master-bf16": (torch.bfloat16, torch.bfloat16, True),
    "fp32-master-fp16-fp32-grads": (torch.float16, torch.float32, True),
}


def params_of(rng, shapes, dtype):
    return [torch.nn.Parameter(torch.from_numpy(
        (rng.standard_normal(s) * 0.1).astype(np.float32)).to(dtype)) for s in shapes]


def fresh_grads(rng, params, dtype=None, scale=1e-2):
    for p in params:
        set_grad(p, torch.from_numpy((rng.standard_normal(tuple(p.shape)) * scale).astype(
            np.float32)).to(dtype or p.dtype))


@pytest.mark.parametrize("row", ROWS)
def test_steps_are_emulate_entry8_driven_by_hand(rng, row):
    """Six steps with fresh gradients: every parameter, master, code, scale and EMA is the
    golden's, step by step (the maps are golden8bit.dynamic_map's; the state starts as
    quantize(zeros) and the EMA as the parameter, or its master)."""
    dtype, grad_dtype, masters = ROWS[row]
    params = params_of(rng, SHAPES, dtype)
    opt = FusedEmaAdamW(params, state_bits=8, master_weights=masters, **HYPER)
    golden = []
    for p in params:
        var = to_numpy(p).astype(np.float32) if masters else to_numpy(p)
        m, m_absmax = g8.quantize(np.zeros(p.numel(), np.float32), QMAP_M)
        v, v_absmax = g8.quantize(np.zeros(p.numel(), np.float32), QMAP_V)
        golden.append(dict(var=var, m=m, v=v, m_absmax=m_absmax, v_absmax=v_absmax,
                           s=var.astype(np.float32), copy=to_numpy(p) if masters else None))
    h = Hyper(lr=HYPER["lr"], ema_decay=HYPER["ema_decay"], beta1=0.9, beta2=0.99, eps=1e-8,
              mode=1, bias_correction=True, weight_decay=0.02)
    for step in range(1, 7):
        fresh_grads(rng, params, grad_dtype)
        for p, st in zip(params, golden):
            out = g8.emulate_entry8(to_numpy(p.grad), st["var"], st["m"], st["v"],
                                    st["m_absmax"], st["v_absmax"], st["s"], np.array([step]),
                                    QMAP_M, QMAP_V, h, copy=st["copy"])
            st.update(var=out.var, m=out.m, v=out.v, m_absmax=out.m_absmax,
                      v_absmax=out.v_absmax, s=out.s, copy=out.copy)
        opt.step()
        for k, (p, st) in enumerate(zip(params, golden)):
            state = opt.state[p]
            where = f"step {step}, parameter {k}"
            assert "exp_avg" not in state and "exp_avg_sq" not in state
            assert_bits(state["master_param"] if masters else p, st["var"], where + " var")
            if masters:
                assert_bits(p, st["copy"], where + " copy")
            for key, name in zip(CODE_KEYS, ("m", "v", "m_absmax", "v_absmax")):
                assert_bits(state[key], st[name], f"{where} {key}")
            assert_bits(state["ema_params"], st["s"], where + " ema")
    group = opt.param_groups[0]
    assert_bits(group["exp_avg_qmap"], QMAP_M, "qmap_m")
    assert_bits(group["exp_avg_sq_qmap"], QMAP_V, "qmap_v")


@pytest.mark.parametrize("option", ["maximize", "adam-l2", "no-bias-correction", "warm-up"])
def test_options_are_emulate_entry8_driven_by_hand(rng, option):
    """maximize, Adam with L2 decay, no bias correction and the EMA warm-up (the decay of step n
    is min(0.999, (1 + n) / (10 + n))): four steps equal to the golden's."""
    options = {"maximize": dict(maximize=True), "adam-l2": dict(adam_w_mode=False),
               "no-bias-correction": dict(bias_correction=False),
               "warm-up": dict(ema_warmup="num_updates", ema_decay=0.999)}[option]
    params = params_of(rng, [(4096 + 300,)], torch.float32)
    opt = FusedEmaAdamW(params, state_bits=8, **{**HYPER, **options})
    p = params[0]
    var = to_numpy(p)
    m, m_absmax = g8.quantize(np.zeros(p.numel(), np.float32), QMAP_M)
    v, v_absmax = g8.quantize(np.zeros(p.numel(), np.float32), QMAP_V)
    s = var.copy()
    for step in range(1, 5):
        decay = min(0.999, (1 + step) / (10 + step)) if option == "warm-up" else 0.99
        h = Hyper(lr=HYPER["lr"], ema_decay=decay, beta1=0.9, beta2=0.99, eps=1e-8,
                  mode=0 if option == "adam-l2" else 1,
                  bias_correction=option != "no-bias-correction", weight_decay=0.02)
        fresh_grads(rng, params)
        out = g8.emulate_entry8(to_numpy(p.grad), var, m, v, m_absmax, v_absmax, s,
                                np.array([step]), QMAP_M, QMAP_V, h,
                                Extras(maximize=option == "maximize"))
        var, m, v, m_absmax, v_absmax, s = (out.var, out.m, out.v, out.m_absmax, out.v_absmax,
                                            out.s)
        opt.step()
        state = opt.state[p]
        assert_bits(p, var, f"step {step} var")
        for key, want in zip(CODE_KEYS, (m, v, m_absmax, v_absmax)):
            assert_bits(state[key], want, f"step {step} {key}")
        assert_bits(state["ema_params"], s, f"step {step} ema")


def test_small_tensors_keep_the_fp32_paths_state_and_bits(rng):
    """min_8bit_size (4096 by default, bitsandbytes' rule): a parameter below it keeps fp32
    moments and steps exactly as in a state_bits=32 optimizer; at the size it is 8-bit;
    min_8bit_size=0 makes every parameter 8-bit."""
    shapes = [(4095,), (4096,), (3, 5), (0,)]
    p8 = params_of(rng, shapes, torch.float32)
    p32 = [torch.nn.Parameter(p.detach().clone()) for p in p8]
    opt8 = FusedEmaAdamW(p8, state_bits=8, **HYPER)
    opt32 = FusedEmaAdamW(p32, **HYPER)
    for _ in range(3):
        fresh_grads(rng, p8)
        for a, b in zip(p8, p32):
            b.grad = a.grad.clone()
        opt8.step()
        opt32.step()
    for k in (0, 2, 3):
        assert opt8.state[p8[k]].keys() == opt32.state[p32[k]].keys()
        for key, value in opt32.state[p32[k]].items():
            assert torch.equal(bits(opt8.state[p8[k]][key]), bits(value)), (k, key)
        assert torch.equal(bits(p8[k]), bits(p32[k]))
    assert set(CODE_KEYS) <= opt8.state[p8[1]].keys()
    everything = params_of(rng, [(3, 5), (1,)], torch.float32)
    opt = FusedEmaAdamW(everything, state_bits=8, min_8bit_size=0, **HYPER)
    fresh_grads(rng, everything)
    opt.step()
    for p in everything:
        assert opt.state[p]["exp_avg_codes"].dtype == torch.uint8
        assert opt.state[p]["exp_avg_absmax"].shape == (1,)


def test_mixed_groups_equal_their_own_optimizers(rng):
    """An 8-bit and a 32-bit group in one optimizer: each group's bits are those of an
    optimizer of that group alone."""
    a = params_of(rng, [(5000,), (64,)], torch.float32)
    b = params_of(rng, [(6000,)], torch.bfloat16)
    clone = (lambda ps: [torch.nn.Parameter(p.detach().clone()) for p in ps])
    a8, b32 = clone(a), clone(b)
    opt = FusedEmaAdamW([{"params": a, "state_bits": 8}, {"params": b, "lr": 1e-2}], **HYPER)
    alone8 = FusedEmaAdamW(a8, state_bits=8, **HYPER)
    alone32 = FusedEmaAdamW(b32, **dict(HYPER, lr=1e-2))
    for _ in range(4):
        fresh_grads(rng, a + b)
        for x, y in zip(a + b, a8 + b32):
            y.grad = x.grad.clone()
        opt.step()
        alone8.step()
        alone32.step()
    for x, y, other in [(x, y, alone8) for x, y in zip(a, a8)] + [
            (x, y, alone32) for x, y in zip(b, b32)]:
        assert torch.equal(bits(x), bits(y))
        assert opt.state[x].keys() == other.state[y].keys()
        for key in opt.state[x]:
            assert torch.equal(bits(opt.state[x][key]), bits(other.state[y][key])), key
    assert "exp_avg_qmap" not in opt.param_groups[1]


def test_state_bytes_per_parameter(rng):
    """Measured from the state tensors of a 1M-element parameter: codes (2 B), scales (8 B per
    256) and the fp32 EMA (4 B): 6.03 B per parameter, against 12 for fp32 state."""
    def state_bytes(bits_):
        p = torch.nn.Parameter(torch.randn(1 << 20))
        opt = FusedEmaAdamW([p], state_bits=bits_)
        p.grad = torch.randn_like(p)
        opt.step()
        tensors = [t for key, t in opt.state[p].items() if key != "step"]
        return sum(t.numel() * t.element_size() for t in tensors) / p.numel()
    eight, wide = state_bytes(8), state_bytes(32)
    assert eight == pytest.approx(6 + 8 / 256)
    assert eight <= 6.1 and wide == 12


def snapshot(opt, params):
    return copy.deepcopy(([p.detach().clone() for p in params],
                          {k: dict(v) for k, v in opt.state.items()},
                          [{k: v for k, v in g.items() if k != "params"}
                           for g in opt.param_groups]))


def assert_unchanged(before, after):
    (p0, s0, g0), (p1, s1, g1) = before, after
    assert all(torch.equal(bits(a), bits(b)) for a, b in zip(p0, p1))
    assert [sorted(s) for s in s0.values()] == [sorted(s) for s in s1.values()]
    for a, b in zip(s0.values(), s1.values()):
        for key in a:
            assert torch.equal(bits(a[key]), bits(b[key])), key
    assert len(g0) == len(g1)
    for a, b in zip(g0, g1):
        assert sorted(a) == sorted(b)
        for key in a:
            if isinstance(a[key], torch.Tensor):
                assert torch.equal(bits(a[key]), bits(b[key])), key
            else:
                assert a[key] == b[key], key


@pytest.mark.parametrize("options, message", [
    (dict(state_bits=8, amsgrad=True), "Invalid amsgrad: True with state_bits=8"),
    (dict(state_bits=16), r"Invalid state_bits: 16 \(32: fp32 moments; 8:"),
    (dict(state_bits=True), "Invalid state_bits: True"),
    (dict(state_bits=8, state_dtype=None), "Invalid state_dtype: None with state_bits=8"),
    (dict(state_bits=8, min_8bit_size=-1), r"Invalid min_8bit_size: -1 \(an int >= 0\)"),
])
def test_refused_options(options, message):
    with pytest.raises(ValueError, match=message):
        FusedEmaAdamW([torch.nn.Parameter(torch.zeros(3))], **options)


def trained(rng, steps=2):
    """An optimizer with an 8-bit group and a 32-bit group after a few steps, gradients set."""
    params = params_of(rng, [(5000,), (10,), (300,)], torch.float32)
    opt = FusedEmaAdamW([{"params": params[:2], "state_bits": 8}, {"params": params[2:]}],
                        **HYPER)
    for _ in range(steps):
        fresh_grads(rng, params)
        opt.step()
    fresh_grads(rng, params)
    return params, opt


@pytest.mark.parametrize("case, error, message", [
    ("amsgrad", ValueError, r"param_groups\[0\]: Invalid amsgrad: True with state_bits=8"),
    ("short-codes", RuntimeError,
     r"param_groups\[0\]\['params'\]\[0\]: state 'exp_avg_codes' is torch.uint8 \[4999\], "
     r"expected torch.uint8 \[5000\]"),
    ("float-scales", RuntimeError, r"state 'exp_avg_sq_absmax' is torch.float64 \[20\]"),
    ("half-state", RuntimeError, "the 8-bit state has exp_avg_codes, exp_avg_absmax, "
     "exp_avg_sq_absmax but not exp_avg_sq_codes"),
    ("bad-map", RuntimeError, r"the group's exp_avg_sq_qmap must be sorted"),
    ("map-written", RuntimeError, r"the group's exp_avg_qmap must hold finite values"),
    ("no-map", RuntimeError, "the 8-bit state has no maps"),
])
def test_bad_state_and_settings_change_nothing(rng, case, error, message):
    params, opt = trained(rng)
    group, state = opt.param_groups[0], opt.state[params[0]]
    if case == "amsgrad":
        group["amsgrad"] = True
    elif case == "short-codes":
        state["exp_avg_codes"] = state["exp_avg_codes"][:4999].clone()
    elif case == "float-scales":
        state["exp_avg_sq_absmax"] = state["exp_avg_sq_absmax"].double()
    elif case == "half-state":
        del state["exp_avg_sq_codes"]
    elif case == "bad-map":
        group["exp_avg_sq_qmap"] = group["exp_avg_sq_qmap"].flip(0).contiguous()
    elif case == "map-written":  # in place: a cached group sees the map's version move
        group["exp_avg_qmap"][7] = float("nan")
    elif case == "no-map":
        del group["exp_avg_qmap"]
    before = snapshot(opt, params)
    with pytest.raises(error, match=message):
        opt.step()
    assert_unchanged(before, snapshot(opt, params))


def test_device_the_op_does_not_reach_is_refused(rng):
    """An 8-bit parameter on a device the 8-bit op does not reach (meta here) is refused before
    any group is written."""
    params = params_of(rng, [(5000,)], torch.float32)
    ghost = torch.nn.Parameter(torch.empty(5000, device="meta"))
    opt = FusedEmaAdamW([{"params": params}, {"params": [ghost]}], state_bits=8, **HYPER)
    fresh_grads(rng, params)
    ghost.grad = torch.empty(5000, device="meta")
    before = [p.detach().clone() for p in params]
    with pytest.raises(RuntimeError, match=r"param_groups\[1\]\['params'\]\[0\]: state_bits=8 "
                                           r"runs on cpu.* tensors \(this build\), this "
                                           r"parameter is on meta"):
        opt.step()
    assert all(torch.equal(bits(a), bits(b)) for a, b in zip(params, before))
    assert not opt.state


def test_strided_tensors_give_the_contiguous_bits(rng):
    """A parameter and gradient with strides (a transposed view, every other element) step as
    their contiguous copies do."""
    base = torch.from_numpy((rng.standard_normal((90, 120)) * 0.1).astype(np.float32))
    strided = torch.nn.Parameter(base.t())  # (120, 90), strides (1, 120)
    dense = torch.nn.Parameter(base.t().contiguous())
    opt_s = FusedEmaAdamW([strided], state_bits=8, **HYPER)
    opt_d = FusedEmaAdamW([dense], state_bits=8, **HYPER)
    for _ in range(3):
        g = torch.from_numpy((rng.standard_normal((120, 180)) * 1e-2).astype(np.float32))
        strided.grad = g[:, ::2]
        dense.grad = g[:, ::2].contiguous()
        opt_s.step()
        opt_d.step()
    assert not strided.is_contiguous()
    assert torch.equal(strided.detach().contiguous(), dense.detach())
    for key, value in opt_d.state[dense].items():
        assert torch.equal(bits(opt_s.state[strided][key]), bits(value)), key


def continue_steps(rng, params, opt, steps):
    grads = [[torch.from_numpy((rng.standard_normal(tuple(p.shape)) * 1e-2).astype(
        np.float32)).to(p.dtype) for p in params] for _ in range(steps)]
    return grads


def run(opt, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g.clone()
        opt.step()


def rebuilt(params, opt, **options):
    """A new optimizer of the same layout over copies of the parameters."""
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    groups = [{**{k: v for k, v in g.items() if k in ("state_bits", "lr")},
               "params": copies[sum(len(h["params"]) for h in opt.param_groups[:i]):][
                   :len(g["params"])]} for i, g in enumerate(opt.param_groups)]
    return copies, FusedEmaAdamW(groups, **{**HYPER, **options})


def test_checkpoint_resumes_bit_for_bit(rng):
    """torch.save of an 8-bit state dict (codes, scales, the maps in the groups), loaded into a
    new optimizer: the next steps are the uninterrupted run's, bit for bit."""
    params, opt = trained(rng, steps=3)
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    saved = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    assert set(CODE_KEYS) <= saved["state"][0].keys()
    assert saved["state"][0]["exp_avg_codes"].dtype == torch.uint8
    assert torch.equal(saved["param_groups"][0]["exp_avg_qmap"], torch.from_numpy(QMAP_M))
    assert "exp_avg_qmap" not in saved["param_groups"][1]
    copies, resumed = rebuilt(params, opt)
    resumed.load_state_dict(saved)
    grads = continue_steps(rng, params, opt, 3)
    run(opt, params, grads)
    run(resumed, copies, grads)
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        assert opt.state[p].keys() == resumed.state[q].keys()
        for key in opt.state[p]:
            assert torch.equal(bits(opt.state[p][key]), bits(resumed.state[q][key])), key


def test_group_step_checkpoint_of_codes_only_loads_into_per_parameter_steps(rng):
    """A state of 8-bit tensors alone (step_scope="group", no EMA) loads into per-parameter
    steps: each 8-bit parameter takes the group's step and continues bit for bit."""
    params = params_of(rng, [(5000,), (4200,)], torch.float32)
    options = dict(HYPER, ema_decay=None, state_bits=8)
    grouped = FusedEmaAdamW(params, step_scope="group", **options)
    for _ in range(3):
        fresh_grads(rng, params)
        grouped.step()
    saved = copy.deepcopy(grouped.state_dict())
    assert sorted(saved["state"][0]) == sorted(CODE_KEYS)
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    per_param = FusedEmaAdamW(copies, **options)
    per_param.load_state_dict(saved)
    for q in copies:
        assert float(per_param.state[q]["step"]) == 3
    grads = continue_steps(rng, params, grouped, 2)
    run(grouped, params, grads)
    run(per_param, copies, grads)
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        for key in CODE_KEYS:
            assert torch.equal(bits(grouped.state[p][key]), bits(per_param.state[q][key])), key


def test_checkpoint_converts_32_to_8_and_8_to_32(rng):
    """fp32 moments loaded into an 8-bit group become golden8bit.quantize's codes and scales;
    8-bit state loaded into a 32-bit group becomes golden8bit.decode's moments; the EMA, steps
    and the small parameter's fp32 state are kept as saved."""
    params = params_of(rng, [(5000,), (10,)], torch.bfloat16)
    wide = FusedEmaAdamW(params, master_weights=True, **HYPER)
    for _ in range(3):
        fresh_grads(rng, params)
        wide.step()
    saved = copy.deepcopy(wide.state_dict())
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    eight = FusedEmaAdamW(copies, master_weights=True, state_bits=8, **HYPER)
    eight.load_state_dict(saved)
    big, small = eight.state[copies[0]], eight.state[copies[1]]
    for wide_key, codes, absmax, qmap in (("exp_avg", "exp_avg_codes", "exp_avg_absmax", QMAP_M),
                                          ("exp_avg_sq", "exp_avg_sq_codes",
                                           "exp_avg_sq_absmax", QMAP_V)):
        want_codes, want_absmax = g8.quantize(to_numpy(saved["state"][0][wide_key]), qmap,
                                              second_moment=wide_key == "exp_avg_sq")
        assert_bits(big[codes], want_codes, codes)
        assert_bits(big[absmax], want_absmax, absmax)
        assert big[codes].shape == copies[0].shape
        assert torch.equal(bits(small[wide_key]), bits(saved["state"][1][wide_key]))
    for key in ("ema_params", "master_param", "step"):
        assert torch.equal(bits(big[key]), bits(saved["state"][0][key])), key
    assert "exp_avg" not in big
    # and back: decode into fp32 moments
    saved8 = copy.deepcopy(eight.state_dict())
    again = [torch.nn.Parameter(p.detach().clone()) for p in params]
    back = FusedEmaAdamW(again, master_weights=True, **HYPER)
    back.load_state_dict(saved8)
    state = back.state[again[0]]
    for wide_key, codes, absmax, qmap in (("exp_avg", "exp_avg_codes", "exp_avg_absmax", QMAP_M),
                                          ("exp_avg_sq", "exp_avg_sq_codes",
                                           "exp_avg_sq_absmax", QMAP_V)):
        want = g8.decode(to_numpy(saved8["state"][0][codes]),
                         to_numpy(saved8["state"][0][absmax]), qmap)
        assert_bits(state[wide_key], want, wide_key)
        assert state[wide_key].shape == again[0].shape
    assert not set(CODE_KEYS) & state.keys()
    assert "exp_avg_qmap" not in back.param_groups[0]
    fresh_grads(rng, again)
    back.step()  # the decoded state steps on the fp32 path


def test_state_bits_changed_between_steps_converts_at_the_step(rng):
    """A group switched to state_bits=8 (or back) converts its state at its next step by the
    same functions: the step then equals one from the converted state."""
    params = params_of(rng, [(5000,)], torch.float32)
    opt = FusedEmaAdamW(params, **HYPER)
    fresh_grads(rng, params)
    opt.step()
    m, v = (to_numpy(opt.state[params[0]][k]) for k in ("exp_avg", "exp_avg_sq"))
    var, s = to_numpy(params[0]), to_numpy(opt.state[params[0]]["ema_params"])
    opt.param_groups[0]["state_bits"] = 8
    fresh_grads(rng, params)
    grad = to_numpy(params[0].grad)
    opt.step()
    m_codes, m_absmax = g8.quantize(m, QMAP_M)
    v_codes, v_absmax = g8.quantize(v, QMAP_V, second_moment=True)
    h = Hyper(lr=HYPER["lr"], ema_decay=0.99, beta1=0.9, beta2=0.99, weight_decay=0.02)
    out = g8.emulate_entry8(grad, var, m_codes, v_codes, m_absmax, v_absmax, s, np.array([2]),
                            QMAP_M, QMAP_V, h)
    state = opt.state[params[0]]
    assert_bits(params[0], out.var, "var")
    assert_bits(state["exp_avg_codes"], out.m, "m")
    assert_bits(state["exp_avg_sq_absmax"], out.v_absmax, "v_absmax")
    opt.param_groups[0]["state_bits"] = 32
    fresh_grads(rng, params)
    opt.step()
    assert "exp_avg" in opt.state[params[0]] and "exp_avg_codes" not in opt.state[params[0]]


def test_bad_checkpoint_is_refused_before_anything_loads(rng):
    params, opt = trained(rng)
    saved = copy.deepcopy(opt.state_dict())
    del saved["param_groups"][0]["exp_avg_sq_qmap"]
    before = snapshot(opt, params)
    with pytest.raises(ValueError, match=r"param_groups\[0\] has 8-bit state but no "
                                         r"'exp_avg_sq_qmap'"):
        opt.load_state_dict(saved)
    assert_unchanged(before, snapshot(opt, params))
    saved = copy.deepcopy(opt.state_dict())
    saved["state"][0]["exp_avg_absmax"] = saved["state"][0]["exp_avg_absmax"][:3]
    with pytest.raises(ValueError, match=r"expected uint8 \[5000\] and float32 \[20\]"):
        opt.load_state_dict(saved)
    assert_unchanged(before, snapshot(opt, params))


def test_grad_scaler_skip_changes_nothing_and_scaled_steps_are_exact(rng):
    """Under torch.amp.GradScaler a step with an inf gradient writes nothing (weights, codes,
    scales, EMA, steps); the run with the skipped step equals the run without it, bit for bit
    (the power-of-two scale divides exactly)."""
    params = params_of(rng, [(5000,), (40,)], torch.float32)
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    opt = FusedEmaAdamW(params, state_bits=8, **HYPER)
    plain = FusedEmaAdamW(copies, state_bits=8, **HYPER)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    for step in range(5):
        grads = [torch.from_numpy((rng.standard_normal(tuple(p.shape)) * 1e-2).astype(
            np.float32)) for p in params]
        skip = step == 2
        for p, q, g in zip(params, copies, grads):
            p.grad = scaler.scale(g)
            q.grad = g.clone()
        if skip:
            params[0].grad[17] = float("inf")
            before = snapshot(opt, params)
        scaler.step(opt)
        scaler.update()
        if skip:
            assert_unchanged(before, snapshot(opt, params))
        else:
            plain.step()
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        for key in opt.state[p]:
            if key != "step":
                assert torch.equal(bits(opt.state[p][key]), bits(plain.state[q][key])), key


def test_fused_clipping_divides_the_gradients(rng):
    """max_grad_norm on an 8-bit group: the kernel divides each gradient by 1 / torch's clip
    coefficient (the golden with that grad_scale), and a non-finite norm skips the step."""
    params = params_of(rng, [(5000,)], torch.float32)
    opt = FusedEmaAdamW(params, state_bits=8, max_grad_norm=0.05, **HYPER)
    p = params[0]
    fresh_grads(rng, params, scale=1.0)
    norm = torch.nn.utils.get_total_norm([p.grad])
    divisor = 1.0 / torch.clamp(0.05 / (norm + 1e-6), max=1.0)
    m, m_absmax = g8.quantize(np.zeros(p.numel(), np.float32), QMAP_M)
    v, v_absmax = g8.quantize(np.zeros(p.numel(), np.float32), QMAP_V)
    h = Hyper(lr=HYPER["lr"], ema_decay=0.99, beta1=0.9, beta2=0.99, weight_decay=0.02)
    out = g8.emulate_entry8(to_numpy(p.grad), to_numpy(p), m, v, m_absmax, v_absmax,
                            to_numpy(p), np.array([1]), QMAP_M, QMAP_V, h,
                            Extras(grad_scale=float(divisor)))
    opt.step()
    assert torch.equal(opt.last_grad_norm, norm)
    assert_bits(p, out.var, "var")
    assert_bits(opt.state[p]["exp_avg_codes"], out.m, "m")
    p.grad[3] = float("nan")
    before = snapshot(opt, params)
    opt.step()
    assert_unchanged(before, snapshot(opt, params))


@pytest.mark.parametrize("variant", ["foreach-false", "lr-tensor", "ema-decay-tensor",
                                     "group-steps", "no-ema"])
def test_variants_give_the_same_bits(rng, variant):
    """foreach=False (one launch per parameter), a tensor lr or EMA decay and per-group steps
    give the default's bits; without an EMA the weights and codes are the same and no EMA exists."""
    params = params_of(rng, [(5000,), (4100,), (20,)], torch.float32)
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    reference = FusedEmaAdamW(params, state_bits=8, **HYPER)
    options = {"foreach-false": dict(foreach=False), "group-steps": dict(step_scope="group"),
               "lr-tensor": dict(lr=torch.tensor([HYPER["lr"]], dtype=torch.float32)),
               "ema-decay-tensor": dict(ema_decay=torch.tensor([HYPER["ema_decay"]],
                                                               dtype=torch.float32)),
               "no-ema": dict(ema_decay=None)}[variant]
    other = FusedEmaAdamW(copies, state_bits=8, **{**HYPER, **options})
    for _ in range(3):
        fresh_grads(rng, params)
        for p, q in zip(params, copies):
            q.grad = p.grad.clone()
        reference.step()
        other.step()
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        for key, value in other.state[q].items():
            if key != "step":
                assert torch.equal(bits(value), bits(reference.state[p][key])), key
        assert ("ema_params" in other.state[q]) == (variant != "no-ema")


def test_ema_helpers_read_the_fp32_ema(rng):
    """swap_ema, ema_state_dict and copy_to see the 8-bit group's fp32 EMA as any other."""
    model = torch.nn.Linear(100, 60).to(torch.bfloat16)
    opt = FusedEmaAdamW(model.parameters(), state_bits=8, master_weights=True, **HYPER)
    for _ in range(3):
        fresh_grads(rng, list(model.parameters()))
        opt.step()
    weight = model.weight
    assert "exp_avg_codes" in opt.state[weight]
    ema = opt.state[weight]["ema_params"]
    exported = opt.ema_state_dict(model)
    assert torch.equal(bits(exported["weight"]), bits(ema.to(torch.bfloat16)))
    before = weight.detach().clone()
    with opt.swap_ema():
        assert torch.equal(bits(weight), bits(ema.to(torch.bfloat16)))
    assert torch.equal(bits(weight), bits(before))


def test_compiled_step_equals_eager(rng):
    """torch.compile(opt.step) on an 8-bit group (the op's fake kernel traces it): eager's
    bits; with fullgraph=True once the state exists."""
    params = params_of(rng, [(5000,), (30,)], torch.float32)
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    eager = FusedEmaAdamW(params, state_bits=8, **HYPER)
    compiled_opt = FusedEmaAdamW(copies, state_bits=8, **HYPER)
    compiled = torch.compile(compiled_opt.step, backend="aot_eager", fullgraph=True)
    for k in range(4):
        fresh_grads(rng, params)
        for p, q in zip(params, copies):
            q.grad = p.grad.clone()
        eager.step()
        compiled() if k else compiled_opt.step()  # (the first step makes the state eagerly)
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        for key in ("exp_avg_codes", "exp_avg_absmax", "ema_params", "exp_avg"):
            if key in eager.state[p]:
                assert torch.equal(bits(eager.state[p][key]),
                                   bits(compiled_opt.state[q][key])), key


def test_memory_rules_cover_the_8bit_state(rng):
    """The step's memory rules see the 8-bit state: a gradient that is the EMA, or a map that
    lies in a parameter, is refused before anything is written."""
    params, opt = trained(rng)
    p = params[0]
    p.grad = opt.state[p]["ema_params"]
    before = snapshot(opt, params)
    with pytest.raises(RuntimeError, match=r"state 'ema_params' and .* the gradient overlap"):
        opt.step()
    assert_unchanged(before, snapshot(opt, params))
    fresh_grads(rng, params)
    with torch.no_grad():
        params[0][:256] = torch.from_numpy(QMAP_M)  # a valid map, inside a parameter
    opt.param_groups[0]["exp_avg_qmap"] = params[0].detach()[:256]
    before = snapshot(opt, params)
    with pytest.raises(RuntimeError, match=r"param_groups\[0\]\['exp_avg_qmap'\] overlap"):
        opt.step()
    assert_unchanged(before, snapshot(opt, params))


def test_add_param_group_and_pickling(rng):
    """add_param_group checks a group's state_bits like the constructor (a refused group is not
    added); the optimizer pickles with its 8-bit state and continues bit for bit."""
    params, opt = trained(rng)
    with pytest.raises(ValueError, match="Invalid amsgrad: True with state_bits=8"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(5000))],
                             "state_bits": 8, "amsgrad": True})
    assert len(opt.param_groups) == 2
    clone = torch.load(io.BytesIO(_pickled(opt)), weights_only=False)
    copies = [p for g in clone.param_groups for p in g["params"]]
    grads = continue_steps(rng, params, opt, 2)
    run(opt, params, grads)
    run(clone, copies, grads)
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        for key in opt.state[p]:
            assert torch.equal(bits(opt.state[p][key]), bits(clone.state[q][key])), key


def _pickled(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def test_training_equals_the_native_kernel_driven_by_hand(rng):
    """The MLP of test_adam8bit_training, 60 steps on digits: FusedEmaAdamW(state_bits=8,
    min_8bit_size=0) ends with the weights, codes, scales and EMA of the 8-bit native kernel
    launched by hand over the same parameters (one launch per step), bit for bit."""
    from test_adam8bit_training import HYPER as TRAIN, Ours, digits, mlp
    seed = int(rng.integers(0, 2**31))
    x, y, _, _ = digits(seed)
    nets = [mlp(seed), mlp(seed)]
    by_hand = Ours(nets[0].parameters(), 8)
    opt = FusedEmaAdamW(nets[1].parameters(), lr=TRAIN.lr, weight_decay=TRAIN.weight_decay,
                        ema_decay=TRAIN.ema_decay, ema_warmup=None, state_bits=8,
                        min_8bit_size=0)
    batches = torch.Generator().manual_seed(seed + 1)
    for _ in range(60):
        index = torch.randint(0, len(x), (64,), generator=batches)
        for net, step in zip(nets, (by_hand, opt.step)):
            net.zero_grad()
            torch.nn.functional.cross_entropy(net(x[index]), y[index]).backward()
            step()
    for k, (p, q) in enumerate(zip(nets[0].parameters(), nets[1].parameters())):
        state = opt.state[q]
        assert torch.equal(bits(p), bits(q)), k
        assert torch.equal(bits(by_hand.ema[k]), bits(state["ema_params"])), k
        for key, want in zip(CODE_KEYS, (by_hand.m, by_hand.v, by_hand.m_absmax,
                                         by_hand.v_absmax)):
            assert_bits(state[key], want[k], f"parameter {k} {key}")


@pytest.mark.parametrize("step_scope", ["param", "group"])
def test_cached_steps_equal_fully_checked_steps(rng, step_scope):
    """Steps of a cached 8-bit group (its launch cache: re-checked identities, lists kept) give
    the bits of steps checked in full, also when a parameter skips steps (its own step falls
    behind: launches per step value) and with parameters of both state kinds."""
    params = params_of(rng, [(5000,), (30,), (4500,), (7,)], torch.float32)
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    cached = FusedEmaAdamW(params, state_bits=8, step_scope=step_scope, **HYPER)
    checked = FusedEmaAdamW(copies, state_bits=8, step_scope=step_scope, **HYPER)
    for k in range(8):
        fresh_grads(rng, params)
        for p, q in zip(params, copies):
            q.grad = p.grad.clone()
        if k % 3 == 1:  # parameters 2 and 3 skip this step
            for x in (params[2], params[3], copies[2], copies[3]):
                x.grad = None
        cached.step()
        checked._launch_cache.clear()
        checked.step()
        assert cached._launch_cache.group(0) is not None
    for p, q in zip(params, copies):
        assert torch.equal(bits(p), bits(q))
        for key, value in checked.state[q].items():
            assert torch.equal(bits(cached.state[p][key]), bits(value)), key


def test_maps_are_made_with_the_group(seed):
    """An 8-bit group holds its maps from construction, an empty group too (ZeRO saves its
    consolidated checkpoint from a rank's empty shares of groups), on its parameters' device;
    a group with fp32 state has none."""
    gen = torch.Generator().manual_seed(seed)
    p = torch.nn.Parameter(torch.randn(64, 80, generator=gen))
    q = torch.nn.Parameter(torch.randn(64, 80, generator=gen))
    opt = FusedEmaAdamW([{"params": [p]}, {"params": []}, {"params": [q], "state_bits": 32}],
                        state_bits=8)
    for group in opt.param_groups[:2]:
        assert torch.equal(group["exp_avg_qmap"], torch.from_numpy(QMAP_M))
        assert torch.equal(group["exp_avg_sq_qmap"], torch.from_numpy(QMAP_V))
        assert group["exp_avg_qmap"].device == p.device
    assert "exp_avg_qmap" not in opt.param_groups[2]
