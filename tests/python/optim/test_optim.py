"""FusedEmaAdamW (ascend_ema_adam.optim): trajectories against an independent plain-torch
reference and, bit for bit, against golden.emulate_update; MindSpeed-compatible construction,
errors and state; EMA helpers; checkpoints (resume, torch AdamW and old dicts); per-group
hyper-parameters, LR schedulers, gradient clipping and GradScaler."""

import copy
import io
import math
import re

import numpy as np
import pytest
import ranks
import torch

import ascend_ema_adam
import ascend_ema_adam.optim.functional as optim_module  # where the launches happen (spied on)
from ascend_ema_adam import golden
from ascend_ema_adam._dtypes import FLOAT_DTYPES, to_numpy
from ascend_ema_adam.golden import Hyper
from ascend_ema_adam.optim import FusedEmaAdamW

TORCH_DTYPES = [d.torch for d in FLOAT_DTYPES]
DTYPE_IDS = [d.short for d in FLOAT_DTYPES]
MANTISSA_BITS = {torch.float32: 23, torch.bfloat16: 7, torch.float16: 10}


@pytest.fixture(autouse=True)
def one_thread():
    """These models are tiny: one thread is faster than two spinning against each other (and
    against the other test processes on a shared machine)."""
    with ranks.one_thread():
        yield


def torch_seed(rng) -> int:
    return int(rng.integers(2**62))


class MLP(torch.nn.Module):
    def __init__(self, layers, extra):
        super().__init__()
        self.net = torch.nn.Sequential(*layers)
        if extra:
            self.unused = torch.nn.Linear(4, 4)  # never in forward: its params get no gradient

    def forward(self, x):
        return self.net(x)


def make_model(seed: int, dtype=torch.float32, *, extra: bool = False) -> torch.nn.Module:
    """A small MLP with fresh random weights (uneven sizes, biases, three layers)."""
    gen = torch.Generator().manual_seed(seed)
    layers = [torch.nn.Linear(10, 24), torch.nn.Tanh(), torch.nn.Linear(24, 17), torch.nn.Tanh(),
              torch.nn.Linear(17, 3)]
    model = MLP(layers, extra)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.to(dtype)


def make_batches(seed: int, steps: int, dtype=torch.float32, batch: int = 16):
    gen = torch.Generator().manual_seed(seed + 1)
    xs = torch.randn(steps, batch, 10, generator=gen).to(dtype)
    ys = torch.randn(steps, batch, 3, generator=gen).to(dtype)
    return list(zip(xs, ys))


def backward(model, batch) -> None:
    for p in model.parameters():
        p.grad = None
    x, y = batch
    torch.nn.functional.mse_loss(model(x).float(), y.float()).backward()


def warmup_decay(ema_decay: float, n: int) -> float:
    """MindSpeed's EMA warm-up: min(ema_decay, (1+n)/(10+n)) with n counted from 1."""
    return min(ema_decay, (1 + n) / (10 + n))


# ------------------------------------------------------------------------------------------
# The plain-torch reference: written from the algorithm, independent of the kernel's op order


def f32(x: float) -> float:
    """The operator contract narrows every scalar attribute to fp32; the reference uses the same
    fp32 values (1 - 0.999 in fp32 differs from 0.001 by 1.3e-5 relative, which would otherwise
    dominate any comparison)."""
    return float(np.float32(x))


@torch.no_grad()
def reference_update(p, g, m, v, s, *, step, lr, betas, eps, weight_decay, mode,
                     bias_correction, ema_decay):
    """One update in torch's AdamW formulation (fp32 math), then the EMA as a lerp; stores p,
    m, v, s rounded to their dtype. Like the kernel contract, m_hat/v_hat use the unrounded
    moments and the EMA uses the unrounded new parameter."""
    lr, b1, b2, eps, wd, d = (f32(x) for x in (lr, betas[0], betas[1], eps, weight_decay,
                                               ema_decay))
    g32, x, m32, v32, s32 = (t.float() for t in (g, p, m, v, s))
    if mode == 0:
        g32 = g32 + wd * x
    m32 = m32.mul(b1).add(g32, alpha=1 - b1)
    v32 = v32.mul(b2).addcmul(g32, g32, value=1 - b2)
    bc1 = 1 - b1**step if bias_correction else 1.0
    bc2 = 1 - b2**step if bias_correction else 1.0
    denom = (v32.sqrt() / math.sqrt(bc2)).add(eps)
    if mode == 1:
        x = x.mul(1 - lr * wd)
    x = x.addcdiv(m32, denom, value=-lr / bc1)
    s32 = s32.lerp(x, 1 - d)
    for dst, src in ((p, x), (m, m32), (v, v32), (s, s32)):
        dst.copy_(src)


class ReferenceEmaAdam:
    """FusedEmaAdamW's documented behaviour with plain torch ops (one group)."""

    def __init__(self, params, *, lr, betas, eps, weight_decay, ema_decay, mode,
                 bias_correction):
        self.params = list(params)
        self.hyper = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, mode=mode,
                          bias_correction=bias_correction)
        self.ema_decay = ema_decay
        self.step_count = 0
        self.state = {}

    def step(self):
        self.step_count += 1
        decay = warmup_decay(self.ema_decay, self.step_count)
        for p in self.params:
            if p.grad is None:
                continue
            st = self.state.setdefault(p, dict(m=torch.zeros_like(p), v=torch.zeros_like(p),
                                               s=p.detach().clone()))
            reference_update(p, p.grad, st["m"], st["v"], st["s"], step=self.step_count,
                             ema_decay=decay, **self.hyper)


# ------------------------------------------------------------------------------------------
# Golden (tier 2): the kernel's own op order, so bit-exact


def snapshot(optimizer, p):
    """numpy copies of (grad, var, m, v, s) as the op will see them (fresh state: zeros, p)."""
    st = optimizer.state.get(p) or {}
    m = st.get("exp_avg", torch.zeros_like(p))
    v = st.get("exp_avg_sq", torch.zeros_like(p))
    s = st.get("ema_params", p)
    return [to_numpy(t) for t in (p.grad, p, m, v, s)]


def pre_step_state(optimizer, p):
    """Clones of (var, m, v, s) as the op will see them."""
    st = optimizer.state.get(p) or {}
    return [t.detach().clone() for t in (p, st.get("exp_avg", torch.zeros_like(p)),
                                         st.get("exp_avg_sq", torch.zeros_like(p)),
                                         st.get("ema_params", p))]


def golden_hyper(group, decay, mode):
    b1, b2 = group["betas"]
    return Hyper(lr=group["lr"], ema_decay=decay, beta1=b1, beta2=b2, eps=group["eps"],
                 mode=mode, bias_correction=group["bias_correction"],
                 weight_decay=group["weight_decay"])


def step_and_check_golden(optimizer, params, step, decay):
    """optimizer.step(), asserting every param's (var, m, v, s) equals the golden bit for bit."""
    expected = {}
    for group in optimizer.param_groups:
        h = golden_hyper(group, decay, optimizer.adam_w_mode)
        for p in group["params"]:
            if p.grad is not None:
                expected[p] = golden.emulate_update(*snapshot(optimizer, p),
                                                    np.array([step], np.int64), h)
    optimizer.step()
    for i, p in enumerate(params):
        if p not in expected:
            continue
        st = optimizer.state[p]
        actual = (p, st["exp_avg"], st["exp_avg_sq"], st["ema_params"])
        for name, a, e in zip(("var", "m", "v", "s"), actual, expected[p]):
            assert golden.bit_equal(to_numpy(a), e), f"step {step} param {i} {name}"
    return len(expected)


# ------------------------------------------------------------------------------------------
# Trajectories


def ulp(t: torch.Tensor, dtype) -> torch.Tensor:
    """Spacing of ``dtype`` at |t| (normal range)."""
    a = t.float().abs().clamp_min(torch.finfo(dtype).tiny)
    return torch.exp2(torch.floor(torch.log2(a)) - MANTISSA_BITS[dtype])


STEPS = 60


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
def test_fp32_trajectory_matches_torch_reference(rng, mode, bias):
    """60 steps of a small MLP trained by FusedEmaAdamW and, separately, by the plain-torch
    reference (each model follows its own trajectory, gradients included).

    Bound: both compute the same fp32 math in a different order (torch's AdamW form
    ``p*(1-lr*wd) - lr/c1 * m/(sqrt(v)/sqrt(c2)+eps)`` and a lerp for the EMA, vs. the kernel's
    ``p - lr*(m/c1 / (sqrt(v/c2)+eps) + wd*p)`` and ``d*s + (1-d)*p``). Each stored value takes
    at most ~4 roundings per step on each side, so one step moves them apart by at most ~8 ulp
    of the tensor's magnitude; Adam's update is normalised (|m_hat/sqrt(v_hat)| is O(1)), so
    the differences, including those fed back through the gradients, add up rather than grow:
    after N steps |a - b| <= 16 * N * 2^-24 * max|b| (2x for the feedback). Measured over 240
    random runs: at most 0.2x this bound (a non-narrowed beta2 alone would exceed it, see f32).
    """
    seed = torch_seed(rng)
    hyper = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.05)
    model = make_model(seed)
    ref_model = copy.deepcopy(model)
    opt = FusedEmaAdamW(model.parameters(), ema_decay=0.99, adam_w_mode=bool(mode),
                        bias_correction=bias, **hyper)
    ref = ReferenceEmaAdam(ref_model.parameters(), ema_decay=0.99, mode=mode,
                           bias_correction=bias, **hyper)
    for n, batch in enumerate(make_batches(seed, STEPS), start=1):
        backward(model, batch)
        backward(ref_model, batch)
        if n % 10 == 0:  # the same run, held to the golden bit for bit on some steps
            step_and_check_golden(opt, list(model.parameters()), n, warmup_decay(0.99, n))
        else:
            opt.step()
        ref.step()

    bound = 16 * STEPS * 2.0**-24
    for i, (p, q) in enumerate(zip(model.parameters(), ref_model.parameters())):
        st, rs = opt.state[p], ref.state[q]
        for name, a, b in (("param", p, q), ("ema", st["ema_params"], rs["s"]),
                           ("exp_avg", st["exp_avg"], rs["m"]),
                           ("exp_avg_sq", st["exp_avg_sq"], rs["v"])):
            err = (a - b).abs().max().item()
            scale = b.abs().max().item()
            assert err <= bound * scale, f"param {i} {name}: {err:.3g} > {bound * scale:.3g}"
        assert not torch.equal(st["ema_params"], p)  # the EMA lags the weights


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("mode", [0, 1], ids=["l2", "adamw"])
@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=DTYPE_IDS)
def test_trajectory_each_step_matches_golden_and_reference(rng, dtype, mode, bias):
    """60 steps of a model with params in ``dtype`` and MindSpeed's layout (``state_dtype=None``:
    the state in the parameter's dtype); every step: the optimizer's result equals
    the golden bit for bit, and the plain-torch reference applied to the same pre-step state
    (all state in the param dtype, rounded each step, as the kernel's contract says) agrees
    within 1 ulp of the dtype plus 16 fp32 ulps of the tensor's scale.

    Why per step for 16-bit: both sides compute the same fp32 value up to a few fp32 ulps and
    round it to 16 bits, so they land on the same or adjacent 16-bit values (the fp32 term
    covers results that cancel to far below their operands). Run free, two 16-bit trajectories
    drift apart: one such 1-ulp flip in a stored m or v changes later updates by 2^-8 relative.
    fp16 uses eps = 1e-3 (as torch's fp16 optimizer tests raise eps): with 1e-8, gradients
    below ~1e-5 underflow fp16 v and make the update m/eps explode (cann reference doc §8).
    """
    seed = torch_seed(rng)
    eps = 1e-3 if dtype == torch.float16 else 1e-8
    hyper = dict(lr=1e-2, betas=(0.9, 0.999), eps=eps, weight_decay=0.05)
    model = make_model(seed, dtype)
    params = list(model.parameters())
    opt = FusedEmaAdamW(params, ema_decay=0.99, adam_w_mode=bool(mode), bias_correction=bias,
                        state_dtype=None, **hyper)
    fp32_floor = 16 * 2.0**-24
    moved = 0
    for n, batch in enumerate(make_batches(seed, STEPS, dtype), start=1):
        backward(model, batch)
        decay = warmup_decay(0.99, n)
        before = {p: pre_step_state(opt, p) for p in params}
        step_and_check_golden(opt, params, n, decay)
        for i, p in enumerate(params):
            rp, rm, rv, rs = before[p]
            old = [t.clone() for t in (rp, rm, rv, rs)]
            reference_update(rp, p.grad, rm, rv, rs, step=n, ema_decay=decay, mode=mode,
                             bias_correction=bias, **hyper)
            st = opt.state[p]
            for name, a, b, o, extra in (("param", p, rp, old[0], None),
                                         ("exp_avg", st["exp_avg"], rm, old[1], None),
                                         ("exp_avg_sq", st["exp_avg_sq"], rv, old[2], None),
                                         ("ema", st["ema_params"], rs, old[3], rp)):
                scale = max(o.float().abs().max().item(), b.float().abs().max().item(),
                            0.0 if extra is None else extra.float().abs().max().item())
                bound = ulp(torch.maximum(a.float().abs(), b.float().abs()), dtype) + (
                    fp32_floor * scale)
                excess = ((a.float() - b.float()).abs() - bound).max().item()
                assert excess <= 0, f"step {n} param {i} {name}: exceeds the bound by {excess}"
            moved += int(not torch.equal(p, old[0]))
    assert moved > 0.9 * STEPS * len(params)  # the weights really train


# ------------------------------------------------------------------------------------------
# MindSpeed compatibility: construction, defaults, errors, state


def test_defaults_and_positional_order_match_mindspeed():
    p = torch.nn.Parameter(torch.randn(3))
    opt = FusedEmaAdamW([p])
    g = opt.param_groups[0]
    assert (g["lr"], g["eps"], g["betas"], g["weight_decay"]) == (1e-3, 1e-8, (0.9, 0.999), 1e-2)
    assert g["bias_correction"] is True and g["amsgrad"] is False and g["maximize"] is False
    assert opt.ema_decay == 0.9999 and opt.num_updates == 0
    assert opt.adam_w_mode == 1 and opt.set_grad_none is True
    mindspeed_defaults = {"lr", "bias_correction", "betas", "eps", "weight_decay", "amsgrad",
                          "maximize"}
    assert mindspeed_defaults <= set(opt.defaults)
    # Positional order: lr, eps, betas, weight_decay, ema_decay, amsgrad (torch: lr, betas, eps)
    opt = FusedEmaAdamW([p], 0.5, 1e-6, (0.8, 0.9), 0.25, 0.75, False)
    g = opt.param_groups[0]
    assert (g["lr"], g["eps"], g["betas"], g["weight_decay"], opt.ema_decay) == (
        0.5, 1e-6, (0.8, 0.9), 0.25, 0.75)
    opt = FusedEmaAdamW([p], use_num_updates=False, adam_w_mode=False, set_grad_none=False,
                        bias_correction=False)
    assert opt.num_updates == -1 and opt.adam_w_mode == 0 and opt.set_grad_none is False
    assert opt.param_groups[0]["bias_correction"] is False
    # the switches are keyword-only, as in MindSpeed
    with pytest.raises(TypeError, match=r"positional arguments but 9 were given"):
        FusedEmaAdamW([p], 1e-3, 1e-8, (0.9, 0.999), 1e-2, 0.9999, False, False)
    assert ascend_ema_adam.FusedEmaAdamW is FusedEmaAdamW


ERROR_CASES = [
    (dict(lr=-1e-3), ValueError, "Invalid learning rate: -0.001"),
    (dict(eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (dict(betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (dict(betas=(-0.1, 0.999)), ValueError, "Invalid beta parameter at index 0: -0.1"),
    (dict(betas=(0.9, 1.5)), ValueError, "Invalid beta parameter at index 1: 1.5"),
    (dict(weight_decay=-0.5), ValueError, "Invalid weight_decay value: -0.5"),
    # an addition to MindSpeed's checks
    (dict(ema_decay=1.5), ValueError, "Invalid ema_decay value: 1.5"),
    (dict(ema_decay=-0.01), ValueError, "Invalid ema_decay value: -0.01"),
    (dict(ema_decay=float("nan")), ValueError, "Invalid ema_decay value: nan"),
    (dict(lr=-1.0, eps=-1.0), ValueError, "Invalid learning rate: -1.0"),
    # this optimizer's options (amsgrad and maximize, MindSpeed's RuntimeErrors, are supported)
    (dict(state_dtype=torch.float16), ValueError, "Invalid state_dtype: torch.float16 (torch.float32: fp32 moments and EMA for 16-bit "
     "parameters; None: the parameter's dtype)"),
    (dict(master_weights=1), ValueError, "Invalid master_weights: 1 (True or False)"),
    (dict(master_weights=True, state_dtype=None), ValueError,
     "Invalid state_dtype: None with master_weights=True (the state of an fp32 master is fp32: "
     "use state_dtype=torch.float32)"),
    (dict(amsgrad="yes"), ValueError, "Invalid amsgrad: 'yes' (True or False)"),
    (dict(ema_warmup="linear"), ValueError, "Invalid ema_warmup: 'linear' ('num_updates', 'power' or None)"),
    (dict(ema_warmup="power", inv_gamma=0.0), ValueError, "Invalid inv_gamma: 0.0 (a finite number > 0)"),
    (dict(power=float("inf")), ValueError, "Invalid power: inf (a finite number > 0)"),
    (dict(min_ema_decay=1.5), ValueError, "Invalid min_ema_decay: 1.5 (a number in [0, 1])"),
    (dict(ema_update_after_step=-1), ValueError, "Invalid ema_update_after_step: -1 (an int >= 0)"),
    (dict(ema_every=0), ValueError, "Invalid ema_every: 0 (an int >= 1)"),
    (dict(ema_every=2.0), ValueError, "Invalid ema_every: 2.0 (an int >= 1)"),
    (dict(lr=torch.tensor(0.1, dtype=torch.float64)), ValueError, "Invalid lr: a tensor lr must be a float32 tensor of one element "
     "without grad (got torch.float64, 1 elements)"),
    (dict(ema_decay=torch.ones(2)), ValueError, "Invalid ema_decay: a tensor ema_decay must be a "
     "float32 tensor of one element without grad (got torch.float32, 2 elements)"),
    (dict(use_num_updates=False, ema_warmup="power"), ValueError, "use_num_updates=False turns the warm-up counter off: ema_warmup='power' and "
     "ema_update_after_step need it"),
]


@pytest.mark.parametrize("kwargs, error, text", ERROR_CASES,
                         ids=[f"{i}-{','.join(c[0])}" for i, c in enumerate(ERROR_CASES)])
def test_constructor_errors_match_mindspeed(kwargs, error, text):
    with pytest.raises(error) as info:
        FusedEmaAdamW([torch.nn.Parameter(torch.randn(2))], **kwargs)
    if len(text) > 10 and not text.isalpha():
        assert str(info.value) == text
    else:
        assert text in str(info.value)


def test_group_values_are_validated_too():
    a, b = torch.nn.Parameter(torch.randn(2)), torch.nn.Parameter(torch.randn(2))
    with pytest.raises(ValueError, match=re.escape("Invalid learning rate: -2")):
        FusedEmaAdamW([{"params": [a]}, {"params": [b], "lr": -2}])
    opt = FusedEmaAdamW([a])
    with pytest.raises(ValueError, match="Invalid ema_decay value: 2"):
        opt.add_param_group({"params": [b], "ema_decay": 2})
    with pytest.raises(ValueError, match="Invalid ema_every: 0"):
        opt.add_param_group({"params": [b], "ema_every": 0})
    assert len(opt.param_groups) == 1  # nothing half-added
    with pytest.raises(ValueError, match="Invalid ema_decay value: -1"):
        opt.ema_decay = -1


def test_step_errors_match_mindspeed_and_change_nothing(rng):
    seed = torch_seed(rng)
    gen = torch.Generator().manual_seed(seed)
    good = torch.nn.Parameter(torch.randn(5, generator=gen))
    bad = torch.nn.Parameter(torch.randn(5, generator=gen, dtype=torch.float64))
    opt = FusedEmaAdamW([{"params": [good]}, {"params": [bad]}])
    good.grad, bad.grad = torch.randn(5, generator=gen), torch.randn(5, generator=gen,
                                                                     dtype=torch.float64)
    before = good.detach().clone()
    with pytest.raises(RuntimeError) as info:
        opt.step()
    # MindSpeed's text, naming the parameter (issue 12)
    assert str(info.value) == ("param_groups[1]['params'][0]: ema_adamw only support fp32, fp16, "
                               "bf16. (this parameter is torch.float64)")
    assert torch.equal(good, before) and opt.num_updates == 0 and good not in opt.state
    assert all("step" not in g for g in opt.param_groups)

    emb = torch.nn.Embedding(10, 4, sparse=True)
    opt = FusedEmaAdamW(emb.parameters())
    emb(torch.tensor([1, 3, 3])).sum().backward()
    assert emb.weight.grad.is_sparse
    before = emb.weight.detach().clone()
    with pytest.raises(RuntimeError) as info:
        opt.step()
    assert str(info.value) == ("param_groups[0]['params'][0]: AdamW does not support sparse "
                               "gradients")
    assert torch.equal(emb.weight, before) and opt.num_updates == 0


@pytest.mark.parametrize("scope", ["group", "param"])
def test_state_layout_step_counter_and_warmup_decay(rng, monkeypatch, scope):
    """State keys and dtypes, EMA initialised as a clone, int64 [1] step incremented before
    each update (the group's: MindSpeed; each parameter's, kept in its state as torch does),
    warm-up min(d, (1+n)/(10+n)), one update per param with a grad (each launch of the
    multi-tensor op updates the parameters of its lists: one record per parameter)."""
    calls = []
    real = optim_module.apply_fused_ema_adam_list

    def spy(grad, var, m, v, s, step, lr, ema_decay, beta1, beta2, eps, mode, bc, wd):
        calls.extend(dict(var=p, step=step.clone(), ema_decay=ema_decay, mode=mode) for p in var)
        return real(grad, var, m, v, s, step, lr, ema_decay, beta1, beta2, eps, mode, bc, wd)

    monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)  # every launch through the op
    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", spy)
    seed = torch_seed(rng)
    model = make_model(seed, torch.bfloat16, extra=True)
    trained = [p for n, p in model.named_parameters() if not n.startswith("unused")]
    unused = list(model.unused.parameters())
    unused_before = [p.detach().clone() for p in unused]
    opt = FusedEmaAdamW(model.parameters(), ema_decay=0.7, adam_w_mode=False, step_scope=scope,
                        state_dtype=None)  # MindSpeed's layout: state in the param's dtype
    batches = make_batches(seed, 25, torch.bfloat16)

    backward(model, batches[0])
    first = [p.detach().clone() for p in trained]
    opt.step()
    assert len(calls) == len(trained)  # one call per parameter with a gradient
    assert [c["var"] for c in calls] == trained
    assert all(c["ema_decay"] == 2 / 11 and c["mode"] == 0 for c in calls)
    assert all(c["step"].dtype == torch.int64 and c["step"].tolist() == [1] for c in calls)
    for p, p0 in zip(trained, first):
        st = opt.state[p]
        if scope == "param":  # torch's per-parameter step: a 0-d float32 CPU tensor
            st = dict(st)
            step = st.pop("step")
            assert step.dtype == torch.float32 and step.shape == () and step.device.type == "cpu"
            assert step.item() == 1
        assert list(st) == ["exp_avg", "exp_avg_sq", "ema_params"]
        assert all(t.dtype == torch.bfloat16 and t.shape == p.shape for t in st.values())
        # EMA started as a clone of p0: s1 = d*p0 + (1-d)*p1 in fp32, rounded (golden order)
        d = np.float32(2 / 11)
        expected = ((d * to_numpy(p0).astype(np.float32))
                    + (np.float32(1) - d) * to_numpy(p).astype(np.float32))
        assert np.max(np.abs(to_numpy(st["ema_params"]).astype(np.float32) - expected)) <= (
            2.0**-7 * np.abs(expected).max())

    for n in range(2, 26):
        calls.clear()
        backward(model, batches[n - 1])
        opt.step()
        assert opt.num_updates == n
        if scope == "group":
            step = opt.param_groups[0]["step"]
            assert step.dtype == torch.int64 and step.shape == (1,) and step.item() == n
        else:
            assert "step" not in opt.param_groups[0]
            assert all(opt.state[p]["step"].item() == n for p in trained)
        assert all(c["step"].dtype == torch.int64 and c["step"].tolist() == [n] for c in calls)
        assert {c["ema_decay"] for c in calls} == {min(0.7, (1 + n) / (10 + n))}
    assert calls[0]["ema_decay"] == 0.7  # warm-up over: (1+25)/(10+25) > 0.7
    for p, b in zip(unused, unused_before):
        assert torch.equal(p, b) and p not in opt.state


@pytest.mark.parametrize("scope", ["group", "param"])
def test_without_num_updates_the_decay_is_constant(monkeypatch, scope):
    decays = []
    real = optim_module.apply_fused_ema_adam_list

    def spy(*args):
        decays.extend(args[7] for _ in args[1])  # one decay per parameter launched
        return real(*args)

    monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)  # every launch through the op
    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", spy)
    p = torch.nn.Parameter(torch.randn(8))
    opt = FusedEmaAdamW([p], ema_decay=0.95, use_num_updates=False, step_scope=scope)
    for _ in range(3):
        p.grad = torch.randn(8)
        opt.step()
    assert decays == [0.95] * 3 and opt.num_updates == -1
    if scope == "group":
        assert opt.param_groups[0]["step"].item() == 3
    else:
        assert opt.state[p]["step"].item() == 3


def test_params_without_grad_are_skipped_and_the_step_still_counts(rng):
    """MindSpeed's group step (step_scope="group"); test_optim_steps has the per-parameter
    steps, where a late parameter starts at its own step 1."""
    seed = torch_seed(rng)
    model = make_model(seed, extra=True)
    frozen_group = list(model.unused.parameters())
    opt = FusedEmaAdamW([{"params": [p for n, p in model.named_parameters()
                                     if not n.startswith("unused")]},
                         {"params": frozen_group, "lr": 0.5}], step_scope="group")
    before = [p.detach().clone() for p in frozen_group]
    for batch in make_batches(seed, 3):
        backward(model, batch)
        opt.step()
    assert all(torch.equal(p, b) and p not in opt.state for p, b in zip(frozen_group, before))
    assert [g["step"].item() for g in opt.param_groups] == [3, 3]  # MindSpeed counts it too
    # a param that gets a gradient later starts its state then, at the group's step
    p = frozen_group[0]
    p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(seed))
    expected = golden.emulate_update(*snapshot(opt, p), np.array([4]),
                                     golden_hyper(opt.param_groups[1], warmup_decay(0.9999, 4), 1))
    opt.step()
    assert golden.bit_equal(to_numpy(p), expected[0])
    assert golden.bit_equal(to_numpy(opt.state[p]["ema_params"]), expected[3])
    assert torch.equal(frozen_group[1], before[1])


def test_zero_grad():
    p = torch.nn.Parameter(torch.randn(4))
    p.grad = torch.randn(4)
    opt = FusedEmaAdamW([p])
    opt.zero_grad()
    assert p.grad is None
    opt = FusedEmaAdamW([p], set_grad_none=False)
    p.grad = torch.randn(4)
    grad = p.grad
    opt.zero_grad()
    assert p.grad is grad and torch.equal(grad, torch.zeros(4))
    opt.zero_grad(set_to_none=True)
    assert p.grad is None


# ------------------------------------------------------------------------------------------
# EMA access


def trained(rng, steps=4, dtype=torch.float32, **kwargs):
    seed = torch_seed(rng)
    model = make_model(seed, dtype)
    opt = FusedEmaAdamW(model.parameters(), lr=0.05, ema_decay=0.9, **kwargs)
    for batch in make_batches(seed, steps, dtype):
        backward(model, batch)
        opt.step()
    return model, opt


def test_copy_to_store_restore(rng):
    model, opt = trained(rng)
    params = list(model.parameters())
    weights = [p.detach().clone() for p in params]
    emas = [opt.state[p]["ema_params"].clone() for p in params]
    assert not any(torch.equal(w, e) for w, e in zip(weights, emas))
    opt.store(opt.param_groups)
    assert all(t.device.type == "cpu" and t.data_ptr() != p.data_ptr()
               for t, p in zip(opt.collected_params_group[0], params))
    opt.copy_to()
    assert all(torch.equal(p, e) for p, e in zip(params, emas))
    opt.restore(opt.param_groups)
    assert all(torch.equal(p, w) for p, w in zip(params, weights))
    assert not hasattr(opt, "collected_params_group")
    assert all(torch.equal(opt.state[p]["ema_params"], e) for p, e in zip(params, emas))


def test_store_restore_with_an_empty_group(rng):
    """MindSpeed's restore pairs its stash (empty groups skipped) with all groups, so an empty
    group in front shifts everything; here each group keeps its own slot."""
    seed = torch_seed(rng)
    gen = torch.Generator().manual_seed(seed)
    a, b = (torch.nn.Parameter(torch.randn(3, generator=gen)) for _ in range(2))
    opt = FusedEmaAdamW([{"params": []}, {"params": [a]}, {"params": [b]}], lr=0.1,
                        step_scope="group")
    a.grad, b.grad = torch.randn(3, generator=gen), torch.randn(3, generator=gen)
    opt.step()
    weights = [a.detach().clone(), b.detach().clone()]
    opt.store()
    opt.copy_to()
    opt.restore()
    assert torch.equal(a, weights[0]) and torch.equal(b, weights[1])
    assert [g["step"].item() for g in opt.param_groups] == [1, 1, 1]


def test_swap_ema_swaps_and_restores_even_on_exception(rng):
    model, opt = trained(rng)
    params = list(model.parameters())
    weights = [p.detach().clone() for p in params]
    emas = [opt.state[p]["ema_params"].clone() for p in params]
    x = torch.randn(5, 10, generator=torch.Generator().manual_seed(torch_seed(rng)))
    with opt.swap_ema():
        assert all(torch.equal(p, e) for p, e in zip(params, emas))
        ema_out = model(x)
    assert all(torch.equal(p, w) for p, w in zip(params, weights))
    assert not torch.equal(model(x), ema_out)

    with pytest.raises(KeyError, match="boom"):
        with opt.swap_ema(stash_device="cpu"):
            assert torch.equal(params[0], emas[0])
            raise KeyError("boom")
    assert all(torch.equal(p, w) for p, w in zip(params, weights))
    assert all(torch.equal(opt.state[p]["ema_params"], e) for p, e in zip(params, emas))


def test_ema_state_dict_loads_into_the_model(rng):
    seed = torch_seed(rng)
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8),
                                torch.nn.Linear(8, 2), torch.nn.Linear(2, 2))
    frozen = model[3]
    opt = FusedEmaAdamW(model.named_parameters(), lr=0.05, ema_decay=0.8)
    for _ in range(3):
        opt.zero_grad()
        model[2](model[1](model[0](torch.randn(16, 6, generator=gen)))).pow(2).mean().backward()
        opt.step()
    ema = opt.ema_state_dict(model)
    assert list(ema) == list(model.state_dict())  # buffers included: strict loading works
    for name, p in model.named_parameters():
        if p in opt.state:
            assert torch.equal(ema[name], opt.state[p]["ema_params"])
            assert not torch.equal(ema[name], p)
        else:  # never had a gradient: its own value
            assert name.startswith("3.") and torch.equal(ema[name], p)
    assert torch.equal(ema["1.running_mean"], model[1].running_mean)

    copy_model = copy.deepcopy(model)
    copy_model.load_state_dict(ema)
    for name, p in copy_model.named_parameters():
        assert torch.equal(p, ema[name])
    # built from named_parameters(): the parameter names are known without the model
    named = opt.ema_state_dict()
    assert list(named) == [n for n, _ in model.named_parameters()]
    assert all(torch.equal(named[k], ema[k]) for k in named)
    with pytest.raises(TypeError, match="needs the model"):
        FusedEmaAdamW(frozen.parameters()).ema_state_dict()


# ------------------------------------------------------------------------------------------
# Checkpoints


def all_state(model, opt):
    out = [("param", p) for p in model.parameters()]
    for i, p in enumerate(model.parameters()):
        for k, v in opt.state[p].items():
            out.append((f"{i}.{k}", v))
    for i, g in enumerate(opt.param_groups):
        if opt.step_scope == "group":
            out.append((f"group{i}.step", g["step"]))
    return out


@pytest.mark.parametrize("scope", ["group", "param"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_state_dict_round_trip_resumes_bit_identically(rng, dtype, scope):
    seed = torch_seed(rng)
    model = make_model(seed, dtype)
    opt = FusedEmaAdamW([{"params": list(model.parameters())[:2], "lr": 0.02},
                         {"params": list(model.parameters())[2:], "betas": (0.8, 0.99)}],
                        lr=0.01, ema_decay=0.999, step_scope=scope, state_dtype=None)
    batches = make_batches(seed, 14, dtype)
    for batch in batches[:6]:
        backward(model, batch)
        opt.step()
    opt.ema_decay = 0.95  # Megatron's glue sets it on the optimizer; the checkpoint keeps it
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)

    for batch in batches[6:]:
        backward(model, batch)
        opt.step()

    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    groups = checkpoint["optimizer"]["param_groups"]
    assert [g["num_updates"] for g in groups] == [6, 6]
    if scope == "group":
        assert [g["step"].tolist() for g in groups] == [[6], [6]]
    else:
        assert [st["step"].item() for st in checkpoint["optimizer"]["state"].values()] == [6] * 6
    assert [g["ema_decay"] for g in groups] == [0.95, 0.95]
    resumed = make_model(seed + 7, dtype)  # different weights until loaded
    resumed.load_state_dict(checkpoint["model"])
    opt2 = FusedEmaAdamW([{"params": list(resumed.parameters())[:2]},
                          {"params": list(resumed.parameters())[2:]}], step_scope=scope,
                         state_dtype=None)
    opt2.load_state_dict(checkpoint["optimizer"])
    assert opt2.num_updates == 6 and opt2.ema_decay == 0.95
    assert all(t.dtype == dtype for st in opt2.state.values() for k, t in st.items()
               if k != "step")
    if scope == "group":
        assert all(g["step"].dtype == torch.int64 for g in opt2.param_groups)
    else:  # torch's per-parameter steps: float32 whatever the parameter's dtype
        assert all(st["step"].dtype == torch.float32 for st in opt2.state.values())
    for batch in batches[6:]:
        backward(resumed, batch)
        opt2.step()
    for (name, a), (_, b) in zip(all_state(model, opt), all_state(resumed, opt2), strict=True):
        assert a.dtype == b.dtype and torch.equal(a, b), name
    assert opt2.num_updates == opt.num_updates == 14


def test_load_torch_adamw_checkpoint_and_continue(rng):
    """A torch.optim.AdamW checkpoint loads into MindSpeed's layout (step_scope="group"): float
    per-param steps become the group's int64 step, moments are kept, the EMA starts from the
    weights; training continues like AdamW (test_optim_steps: the per-parameter layout).
    Hyper-parameters are exact in fp32 so torch's double scalars equal the kernel's fp32 ones;
    the bound is the trajectory test's (16 * N * 2^-24 of the magnitude, N = 5 + 15 steps)."""
    seed = torch_seed(rng)
    hyper = dict(lr=2.0**-7, betas=(0.875, 1 - 2.0**-10), eps=2.0**-27, weight_decay=2.0**-5)
    model = make_model(seed)
    adamw = torch.optim.AdamW(model.parameters(), **hyper)
    batches = make_batches(seed, 20)
    for batch in batches[:5]:
        backward(model, batch)
        adamw.step()
    state_dict = copy.deepcopy(adamw.state_dict())
    assert all(st["step"].dtype == torch.float32 for st in state_dict["state"].values())

    ours = copy.deepcopy(model)
    opt = FusedEmaAdamW(ours.parameters(), **hyper, ema_decay=0.9, step_scope="group")
    opt.load_state_dict(state_dict)
    group = opt.param_groups[0]
    assert group["step"].dtype == torch.int64 and group["step"].tolist() == [5]
    assert opt.num_updates == 0 and group["bias_correction"] is True
    for p, q in zip(ours.parameters(), model.parameters()):
        st = opt.state[p]
        assert set(st) == {"exp_avg", "exp_avg_sq", "ema_params"}
        assert torch.equal(st["exp_avg"], adamw.state[q]["exp_avg"])
        assert torch.equal(st["ema_params"], p) and st["ema_params"] is not p

    for batch in batches[5:]:
        backward(model, batch)
        adamw.step()
        backward(ours, batch)
        opt.step()
    bound = 16 * 20 * 2.0**-24
    for p, q in zip(ours.parameters(), model.parameters()):
        for a, b in ((p, q), (opt.state[p]["exp_avg_sq"], adamw.state[q]["exp_avg_sq"])):
            assert (a - b).abs().max() <= bound * b.abs().max()
    assert opt.param_groups[0]["step"].item() == 20


def test_load_old_and_mindspeed_style_dicts(rng):
    """apex#577: a checkpoint without ``bias_correction`` (or our extra group keys, as
    MindSpeed's own checkpoints) loads with the defaults; an amsgrad checkpoint loads with its
    max_exp_avg_sq (torch's), kept in fp32."""
    model, opt = trained(rng, steps=3, step_scope="group")
    state_dict = copy.deepcopy(opt.state_dict())
    for g in state_dict["param_groups"]:
        for key in ("bias_correction", "num_updates", "ema_decay"):
            del g[key]
    fresh = FusedEmaAdamW(copy.deepcopy(model).parameters(), ema_decay=0.5,
                          use_num_updates=False, step_scope="group")
    fresh.load_state_dict(state_dict)
    g = fresh.param_groups[0]
    assert g["bias_correction"] is True and g["ema_decay"] == 0.5 and g["num_updates"] == -1
    assert g["step"].tolist() == [3]

    amsgrad = copy.deepcopy(state_dict)
    amsgrad["param_groups"][0]["amsgrad"] = True
    for st in amsgrad["state"].values():
        st["max_exp_avg_sq"] = st["exp_avg_sq"].double() * 2
    fresh.load_state_dict(amsgrad)
    assert fresh.param_groups[0]["amsgrad"] is True
    for p, st in zip(fresh.param_groups[0]["params"], amsgrad["state"].values()):
        got = fresh.state[p]["max_exp_avg_sq"]
        assert got.dtype == torch.float32 and torch.equal(got, st["max_exp_avg_sq"].float())


def test_deepcopy_keeps_the_switches(rng):
    """torch's Optimizer pickles defaults, state and groups only; adam_w_mode (the kernel mode),
    set_grad_none and use_num_updates must survive a copy too."""
    model, opt = trained(rng, steps=2, adam_w_mode=False, set_grad_none=False,
                         use_num_updates=False, step_scope="group")
    clone = copy.deepcopy(opt)
    assert (clone.adam_w_mode, clone.set_grad_none, clone.use_num_updates) == (0, False, False)
    assert clone.step_scope == "group"
    assert clone.num_updates == -1 and clone.param_groups[0]["step"].tolist() == [2]


def test_load_keeps_16bit_state_and_casts_to_the_param_dtype(rng):
    """MindSpeed's layout: every state tensor in the parameter's dtype (test_optim_steps: the
    per-parameter steps, float32 like torch's)."""
    model, opt = trained(rng, steps=2, dtype=torch.bfloat16, step_scope="group",
                         state_dtype=None)
    state_dict = opt.state_dict()
    fresh = FusedEmaAdamW(copy.deepcopy(model).parameters(), step_scope="group",
                          state_dtype=None)
    fresh.load_state_dict(state_dict)
    assert all(t.dtype == torch.bfloat16 for st in fresh.state.values() for t in st.values())
    # an fp32 checkpoint loaded into bf16 params takes the kernel's one dtype
    fp32_state = {"state": {k: {n: t.float() for n, t in v.items()}
                            for k, v in state_dict["state"].items()},
                  "param_groups": state_dict["param_groups"]}
    fresh.load_state_dict(fp32_state)
    assert all(t.dtype == torch.bfloat16 for st in fresh.state.values() for t in st.values())


# ------------------------------------------------------------------------------------------
# Per-group hyper-parameters, schedulers, clipping, AMP


def test_per_group_hyperparameters(rng):
    seed = torch_seed(rng)
    model = make_model(seed)
    params = list(model.parameters())
    opt = FusedEmaAdamW([
        {"params": params[:2], "lr": 0.03, "betas": (0.8, 0.99), "eps": 1e-6,
         "weight_decay": 0.1, "ema_decay": 0.5},
        {"params": params[2:4], "bias_correction": False},
        {"params": params[4:]},
    ], lr=0.01, weight_decay=0.0, ema_decay=0.99)
    for n, batch in enumerate(make_batches(seed, 12), start=1):
        backward(model, batch)
        # golden per group: its own lr, betas, eps, wd, bias correction and decay
        expected = {}
        for group in opt.param_groups:
            h = golden_hyper(group, warmup_decay(group["ema_decay"], n), 1)
            for p in group["params"]:
                expected[p] = golden.emulate_update(*snapshot(opt, p), np.array([n]), h)
        opt.step()
        for p, e in expected.items():
            assert golden.bit_equal(to_numpy(p), e[0])
            assert golden.bit_equal(to_numpy(opt.state[p]["ema_params"]), e[3])


def test_lr_scheduler_and_clip_grad_norm(rng):
    seed = torch_seed(rng)
    model = make_model(seed)
    params = list(model.parameters())
    opt = FusedEmaAdamW(params, lr=0.05, ema_decay=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    lrs = []
    for n, batch in enumerate(make_batches(seed, 10), start=1):
        backward(model, batch)
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm=0.05)
        assert norm > 0.05  # clipping is active: the golden sees the clipped gradients
        lrs.append(opt.param_groups[0]["lr"])
        step_and_check_golden(opt, params, n, warmup_decay(0.9, n))
        sched.step()
    assert lrs == pytest.approx([0.05] * 3 + [0.025] * 3 + [0.0125] * 3 + [0.00625])


@pytest.mark.parametrize("scope", ["group", "param"])
def test_grad_scaler_skips_inf_steps_and_leaves_the_ema_alone(rng, scope):
    """torch.amp.GradScaler: a step with an inf gradient is skipped (params, moments, EMA, step
    and warm-up count untouched, the scale backs off); the run then equals, bit for bit, a run
    that never saw that step (power-of-two scales unscale exactly)."""
    seed = torch_seed(rng)
    model = make_model(seed)
    twin = copy.deepcopy(model)
    opt = FusedEmaAdamW(model.parameters(), lr=0.02, ema_decay=0.9, step_scope=scope)
    opt_twin = FusedEmaAdamW(twin.parameters(), lr=0.02, ema_decay=0.9, step_scope=scope)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**12, growth_interval=1000)
    batches = make_batches(seed, 8)
    for n, batch in enumerate(batches):
        opt.zero_grad()
        x, y = batch
        scaler.scale(torch.nn.functional.mse_loss(model(x), y)).backward()
        if n == 4:
            next(model.parameters()).grad[0, 0] = float("inf")
            before = [t.clone() for _, t in all_state(model, opt)]
            step_holder = opt.param_groups[0] if scope == "group" else opt.state[
                next(model.parameters())]
            counters = (opt.num_updates, step_holder["step"].item())
        scale = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        if n == 4:
            assert all(torch.equal(a, b) for (_, a), b in zip(all_state(model, opt), before))
            assert (opt.num_updates, step_holder["step"].item()) == counters
            assert scaler.get_scale() == scale / 2
        else:
            backward(twin, batch)
            opt_twin.step()
    assert opt.num_updates == opt_twin.num_updates == 7
    for (name, a), (_, b) in zip(all_state(model, opt), all_state(twin, opt_twin), strict=True):
        assert torch.equal(a, b), name


# ------------------------------------------------------------------------------------------
# The demo


def test_train_demo_cli_trains_plots_and_spot_checks(tmp_path, capsys):
    from ascend_ema_adam import checkpoint
    from ascend_ema_adam.apps.cli import main

    out = tmp_path / "curves.png"
    assert main(["train-demo", "--epochs", "2", "--out", str(out), "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "epoch  2" in text and "EMA" in text and f"plot: {out}" in text
    for run in ("float32", "bfloat16"):
        assert re.search(run + r" golden spot-check, step \d+: 8 tensors, 38,282 elements, "
                         r".*bit-exact, PASS", text)
    # the bf16 run keeps its optimizer state in fp32 (the default state_dtype)
    assert "bfloat16 run: parameters in bfloat16, exp_avg/exp_avg_sq/ema_params in float32" in text
    for run in ("float32", "bfloat16"):
        assert re.search(f"{run} checkpoint \\(saved after every epoch\\): "
                         f"{tmp_path / f'train_demo_{run}.pt'}; reloaded into a fresh model: "
                         r"EMA \d+\.\d% \(the same\), PASS", text)
        assert checkpoint.load(tmp_path / f"train_demo_{run}.pt")["extra"]["epoch"] == 2
