"""Fused gradient clipping of FusedEmaAdamW (issue 22, item 3): ``max_grad_norm`` and
``clip_grad_norm_`` against torch (GradScaler unscale, ``torch.nn.utils.clip_grad_norm_``,
AdamW, an EMA lerp) in fp32; fp16 parameters with fp32 masters under a GradScaler, with and
without an injected inf; a non-finite norm skips the step; clipping writes no gradient and reads
nothing back to the host. The 2-rank ZeRO/FSDP2 runs are in ``test_distributed.py``."""

import copy

import pytest
import torch

from test_optim import one_thread  # noqa: F401  (autouse: one thread for these tiny tensors)
from test_optim_mixed import assert_identical, everything, no_host_reads, seed_of  # noqa: F401

from ascend_ema_adam.optim import FusedEmaAdamW

SCOPES = ["param", "group"]
LR, WD, EMA = 1e-2, 0.1, 0.9


def make_params(seed, shapes=((40, 30), (30,), (7, 3, 5), (1,), (64,)), dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=gen).to(dtype)) for s in shapes]


def groups_of(params, **extra):
    """Two groups (weight decay and none), as models usually have: one global norm over both."""
    return [{"params": params[::2], **extra}, {"params": params[1::2], "weight_decay": 0.0,
                                               **extra}]


def ema_decay(n):
    return min(EMA, (1 + n) / (10 + n))


def assert_close(actual, expected, what, tol=1e-6):
    """Lists of tensors at most ``tol`` of the model's scale apart (the largest magnitude over
    all of the reference's tensors of that kind, as docs/OPTIMIZER.md measures): fp32 rounding."""
    actual, expected = list(actual), list(expected)
    scale = max(max(e.abs().max().item() for e in expected if e.numel()), 1e-30)
    err = max((a.float() - e.float()).abs().max().item() for a, e in zip(actual, expected)
              if e.numel())
    assert err <= tol * scale, f"{what}: {err:.3e} of scale {scale:.3e}"


def torch_reference(params, use_scaler):
    ref = [p.detach().clone().requires_grad_() for p in params]
    adamw = torch.optim.AdamW(groups_of(ref), lr=LR, weight_decay=WD)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2) if use_scaler \
        else None
    return ref, adamw, scaler, [p.detach().clone() for p in ref]


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("how", ["max_grad_norm", "clip_grad_norm_", "clip_grad_norm_-inf",
                                 "clip_grad_norm_-1"])
@pytest.mark.parametrize("use_scaler", [False, True], ids=["plain", "grad_scaler"])
def test_matches_unscale_clip_grad_norm_adamw_and_ema(rng, scope, how, use_scaler):
    """fp32: GradScaler unscale -> torch.nn.utils.clip_grad_norm_ -> AdamW -> EMA lerp, against
    the fused step (no unscale, no clip pass), within 1e-6 of the weights' scale, with steps that
    clip and steps that do not, and (GradScaler) an injected inf that both skip."""
    seed = seed_of(rng)
    params = make_params(seed)
    norm_type = {"clip_grad_norm_-inf": float("inf"), "clip_grad_norm_-1": 1.0}.get(how, 2.0)
    max_norm = {2.0: 20.0, 1.0: 1000.0}.get(norm_type, 2.5)
    per_group = {"max_grad_norm": max_norm} if how == "max_grad_norm" else {}
    opt = FusedEmaAdamW(groups_of(params, **per_group), lr=LR, weight_decay=WD, ema_decay=EMA,
                        step_scope=scope)
    ref, adamw, ref_scaler, emas = torch_reference(params, use_scaler)
    # and this optimizer without clipping, given torch's unscaled and clipped gradients: isolates
    # the clipping (its moments too; torch's exp_avg_sq differs from the kernel's fp32 scalars)
    plain = [p.detach().clone().requires_grad_() for p in params]
    unclipped_opt = FusedEmaAdamW(groups_of(plain), lr=LR, weight_decay=WD, ema_decay=EMA,
                                  step_scope=scope)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2) if use_scaler \
        else None
    gen = torch.Generator().manual_seed(seed + 1)
    clipped = unclipped = taken = 0
    for n in range(12):
        # gradient sizes around max_norm: some steps clip, some do not
        size = [0.3, 3.0][n % 2]
        coefs = [torch.randn(p.shape, generator=gen) * size for p in params]
        inf_here = use_scaler and n == 5
        for ps, o, sc in ((params, opt, scaler), (ref, adamw, ref_scaler)):
            o.zero_grad()
            loss = sum((p * c).sum() for p, c in zip(ps, coefs))
            (sc.scale(loss) if sc is not None else loss).backward()
            if inf_here:
                ps[1].grad[3] = float("inf")
        # ours: no unscale, no clip pass
        if how != "max_grad_norm":
            opt.clip_grad_norm_(max_norm, norm_type=norm_type)
        scaler.step(opt) if scaler is not None else opt.step()
        # torch's recipe
        if ref_scaler is not None:
            ref_scaler.unscale_(adamw)
        total = torch.nn.utils.clip_grad_norm_(ref, max_norm, norm_type=norm_type)
        if ref_scaler is not None:
            ref_scaler.step(adamw)
            before = ref_scaler.get_scale()
            ref_scaler.update()
            scaler.update()
            assert scaler.get_scale() == ref_scaler.get_scale()
            if ref_scaler.get_scale() < before:
                assert inf_here
                continue
        else:
            adamw.step()
        taken += 1
        for x, r in zip(plain, ref):
            x.grad = r.grad.clone()
        unclipped_opt.step()
        assert_close([opt.last_grad_norm], [total], f"step {n}: the total norm")
        if total > max_norm:
            clipped += 1
        else:
            unclipped += 1
        with torch.no_grad():
            for e, p in zip(emas, ref):
                e.lerp_(p, 1 - ema_decay(taken))
    assert clipped >= 3 and unclipped >= 3, (clipped, unclipped)
    assert opt.num_updates == taken
    assert_close(params, ref, f"seed {seed}: the weights")
    assert_close((opt.state[p]["ema_params"] for p in params), emas, f"seed {seed}: the EMA")
    assert_close(params, plain, f"seed {seed}: the weights against the pre-clipped step")
    for key in ("exp_avg", "exp_avg_sq", "ema_params"):
        assert_close((opt.state[p][key] for p in params),
                     (unclipped_opt.state[x][key] for x in plain),
                     f"seed {seed}: {key} against the pre-clipped step")


@pytest.mark.parametrize("inject_inf", [False, True], ids=["finite", "injected-inf"])
def test_fp16_masters_grad_scaler_and_clipping_the_recipe(rng, inject_inf):
    """The recipe torch cannot run (it refuses to unscale fp16 gradients): model.half(),
    master_weights=True, GradScaler, max_grad_norm, no unscale call. Reference: fp32 masters
    updated by torch.optim.AdamW on the fp16 gradients widened and unscaled, clipped by
    torch.nn.utils.clip_grad_norm_, and an EMA of the masters; an inf step is skipped by both."""
    seed = seed_of(rng)
    params = make_params(seed, dtype=torch.float16)
    max_norm = 5.0
    opt = FusedEmaAdamW(groups_of(params), lr=LR, weight_decay=WD, ema_decay=EMA,
                        master_weights=True, max_grad_norm=max_norm, eps=1e-6)
    masters = [p.detach().float().requires_grad_() for p in params]
    adamw = torch.optim.AdamW(groups_of(masters), lr=LR, weight_decay=WD, eps=1e-6)
    emas = [m.detach().clone() for m in masters]
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
    gen = torch.Generator().manual_seed(seed + 1)
    taken = clipped = 0
    for n in range(10):
        coefs = [torch.randn(p.shape, generator=gen) * [0.05, 1.0][n % 2] for p in params]
        opt.zero_grad()
        scaler.scale(sum((p.float() * c).sum() for p, c in zip(params, coefs))).backward()
        skip = inject_inf and n in (3, 6)
        if skip:
            params[2].grad[0, 1, 2] = float("inf")
        scale = scaler.get_scale()
        before = everything(opt)
        scaler.step(opt)
        scaler.update()
        if skip:
            assert scaler.get_scale() < scale
            assert_identical(everything(opt), before)   # nothing changed, counters included
            continue
        for m, p in zip(masters, params):
            m.grad = p.grad.float() / scale             # (a power of two: exact)
        total = torch.nn.utils.clip_grad_norm_(masters, max_norm)
        clipped += bool(total > max_norm)
        adamw.step()
        taken += 1
        with torch.no_grad():
            for e, m in zip(emas, masters):
                e.lerp_(m, 1 - ema_decay(taken))
        assert_close([opt.last_grad_norm], [total], f"step {n}: the total norm")
    assert clipped >= 2 and opt.num_updates == taken
    assert_close((opt.state[p]["master_param"] for p in params), masters, f"seed {seed}: masters")
    assert_close((opt.state[p]["ema_params"] for p in params), emas, f"seed {seed}: the EMA")
    for p in params:
        state = opt.state[p]
        assert torch.equal(p, state["master_param"].half())  # the fp16 weight is its rounding


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("bad", ["nan", "inf", "overflow"])
@pytest.mark.parametrize("how", ["max_grad_norm", "clip_grad_norm_"])
def test_a_nonfinite_norm_skips_the_step_without_a_grad_scaler(rng, scope, bad, how):
    """A NaN/inf gradient, or finite gradients whose norm overflows fp32, skip the step through
    the op's found_inf (no host sync): nothing changes, counters included; the next finite step
    proceeds."""
    seed = seed_of(rng)
    params = make_params(seed)
    per_group = {"max_grad_norm": 1.0} if how == "max_grad_norm" else {}
    opt = FusedEmaAdamW(groups_of(params, **per_group), lr=LR, step_scope=scope)
    gen = torch.Generator().manual_seed(seed + 1)
    for n in range(4):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen)
        if n == 2:
            if bad == "overflow":
                params[0].grad.mul_(1e30)               # finite, but the squares overflow
            else:
                params[3].grad[0] = float(bad)
        if how == "clip_grad_norm_":
            opt.clip_grad_norm_(1.0)
        before = everything(opt)
        grads = [p.grad.clone() for p in params]
        opt.step()
        if n == 2:
            assert not torch.isfinite(opt.last_grad_norm)
            assert_identical(everything(opt), before)
        for p, g in zip(params, grads):
            assert torch.equal(p.grad, g, ) or (g.isnan().any() and torch.equal(
                p.grad.nan_to_num(), g.nan_to_num()))
    assert opt.num_updates == 3


def test_error_if_nonfinite_raises_before_anything_changes(rng):
    seed = seed_of(rng)
    params = make_params(seed)
    opt = FusedEmaAdamW(params, lr=LR)
    for p in params:
        p.grad = torch.randn_like(p)
    opt.step()
    params[1].grad[0] = float("nan")
    before = everything(opt)
    with pytest.raises(RuntimeError, match="non-finite"):
        opt.clip_grad_norm_(1.0, error_if_nonfinite=True)
    assert_identical(everything(opt), before)


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("how", ["max_grad_norm", "clip_grad_norm_", "grad_scaler"])
def test_clipping_writes_no_gradient_and_reads_nothing_back(rng, scope, how, no_host_reads):
    """step() with clipping: the gradients are bit-unchanged (the coefficient is in the kernel's
    divisor) and no tensor value is read on the host (item, tolist, bool, float, int, index)."""
    seed = seed_of(rng)
    params = make_params(seed)
    opt = FusedEmaAdamW(groups_of(params, max_grad_norm=1.0), lr=LR, step_scope=scope,
                        master_weights=True)
    gen = torch.Generator().manual_seed(seed + 1)
    for n in range(5):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen) * 4.0
        grads = [p.grad.clone() for p in params]
        weights = [p.detach().clone() for p in params]
        if how == "clip_grad_norm_":
            norm = opt.clip_grad_norm_(0.5)
            assert norm > 0.5
        if how == "grad_scaler":
            for p in params:
                p.grad.mul_(2.0**4)
            grads = [p.grad.clone() for p in params]
            opt.grad_scale, opt.found_inf = torch.tensor(2.0**4), torch.tensor(0.0)
        with no_host_reads():
            opt.step()
        for p, g, w in zip(params, grads, weights):
            assert torch.equal(p.grad, g)
            assert not torch.equal(p, w)
    assert opt.num_updates == 5


@pytest.mark.parametrize("scope", SCOPES)
def test_a_norm_below_the_threshold_is_bit_identical_to_no_clipping(rng, scope):
    """coef = 1 gives the divisor 1 (or the scale itself): g / 1 is g, so the step is the
    unclipped step bit for bit."""
    seed = seed_of(rng)
    a = make_params(seed)
    b = copy.deepcopy(a)
    opts = [FusedEmaAdamW(groups_of(ps, **extra), lr=LR, step_scope=scope)
            for ps, extra in ((a, {"max_grad_norm": 1e6}), (b, {}))]
    gen = torch.Generator().manual_seed(seed + 1)
    for _ in range(4):
        for x, y in zip(a, b):
            x.grad = torch.randn(x.shape, generator=gen)
            y.grad = x.grad.clone()
        for o in opts:
            o.step()
    for x, y in zip(a, b):
        assert torch.equal(x, y)
        for key in ("exp_avg", "exp_avg_sq", "ema_params"):
            assert torch.equal(opts[0].state[x][key], opts[1].state[y][key])


def test_only_the_groups_with_max_grad_norm_are_clipped_by_their_norm(rng):
    """The norm is over the groups that set max_grad_norm; a group without it is neither clipped
    nor counted (torch: clip_grad_norm_ of those groups' parameters only)."""
    seed = seed_of(rng)
    params = make_params(seed)
    groups = [{"params": params[:2], "max_grad_norm": 0.5}, {"params": params[2:]}]
    opt = FusedEmaAdamW(groups, lr=LR, ema_decay=EMA)
    ref = [p.detach().clone().requires_grad_() for p in params]
    adamw = torch.optim.AdamW([{"params": ref[:2]}, {"params": ref[2:]}], lr=LR)
    gen = torch.Generator().manual_seed(seed + 1)
    for _ in range(3):
        for p, r in zip(params, ref):
            p.grad = torch.randn(p.shape, generator=gen) * 3
            r.grad = p.grad.clone()
        opt.step()
        total = torch.nn.utils.clip_grad_norm_(ref[:2], 0.5)
        assert total > 0.5
        adamw.step()
        assert torch.equal(opt.last_grad_norm, total)
    assert_close(params, ref, f"seed {seed}")


@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan"), "1", True])
def test_invalid_max_grad_norm(bad):
    p = torch.nn.Parameter(torch.randn(3))
    with pytest.raises(ValueError, match="max_grad_norm"):
        FusedEmaAdamW([p], max_grad_norm=bad)
    opt = FusedEmaAdamW([p])
    with pytest.raises(ValueError, match="max_norm"):
        opt.clip_grad_norm_(bad)


def test_max_grad_norm_travels_in_checkpoints_and_pickles(rng):
    params = make_params(seed_of(rng))
    opt = FusedEmaAdamW(params, max_grad_norm=2.0)
    for p in params:
        p.grad = torch.randn_like(p)
    opt.step()
    assert opt.state_dict()["param_groups"][0]["max_grad_norm"] == 2.0
    assert copy.deepcopy(opt).param_groups[0]["max_grad_norm"] == 2.0
    other = FusedEmaAdamW(params)
    sd = opt.state_dict()
    for g in sd["param_groups"]:
        del g["max_grad_norm"]  # a checkpoint from before clipping: the constructor's value
    other.load_state_dict(sd)
    assert other.param_groups[0]["max_grad_norm"] is None
