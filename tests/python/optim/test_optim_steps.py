"""FusedEmaAdamW's step semantics and checkpoints in both directions.

* ``step_scope="param"`` (default): torch's per-parameter steps, so a parameter that first gets
  a gradient late is bias-corrected from its own first step, like ``torch.optim.AdamW``;
  ``step_scope="group"``: MindSpeed's per-group step, kept bit for bit.
* Checkpoints: ours load into ``torch.optim.AdamW``/``Adam`` and continue like them; theirs load
  into ours keeping every parameter's step; the constructor's settings win over a checkpoint's,
  the checkpoint's counters win.
* torch's ``foreach=``/``fused=`` keywords."""

import contextlib
import copy
import io
import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from test_optim import (backward, golden_hyper, make_batches, make_model, snapshot, to_numpy,
                        torch_seed, warmup_decay)

import ascend_ema_adam.optim.functional as optim_module  # where the launches happen (spied on)
from ascend_ema_adam import golden
from ascend_ema_adam.optim import FusedEmaAdamW

# Hyper-parameters exact in fp32, so torch's double arithmetic and the kernel's fp32 agree on
# the values (the trajectories then differ by rounding order only).
EXACT = dict(lr=2.0**-7, betas=(0.875, 1 - 2.0**-10), eps=2.0**-27, weight_decay=2.0**-5)


def fp32_bound(steps: int) -> float:
    """test_optim's trajectory bound: 16 * N * 2^-24 of the tensor's magnitude."""
    return 16 * steps * 2.0**-24


def assert_close_to_torch(ours, theirs, opt, ref, steps, what):
    bound = fp32_bound(steps)
    for i, (p, q) in enumerate(zip(ours.parameters(), theirs.parameters())):
        for name, a, b in (("param", p, q), ("exp_avg", opt.state[p]["exp_avg"],
                                             ref.state[q]["exp_avg"]),
                           ("exp_avg_sq", opt.state[p]["exp_avg_sq"],
                            ref.state[q]["exp_avg_sq"])):
            err = (a - b).abs().max().item()
            assert err <= bound * b.abs().max().item(), f"{what}: param {i} {name} off by {err}"
        assert float(opt.state[p]["step"]) == float(ref.state[q]["step"]), (what, i)


# ------------------------------------------------------------------------------------------
# Late-starting parameters: per-parameter steps


LATE = 10_000


def late_start_ratios(make_optimizer, join=LATE, after=50):
    """|update|/lr of a parameter that first gets a gradient at step ``join`` of its group
    (the other parameter trains from step 1), for ``after`` steps: the issue's measurement.
    A constant gradient and no weight decay, so the ratio is exactly |m_hat| / sqrt(v_hat)."""
    gen = torch.Generator().manual_seed(7)
    early = torch.nn.Parameter(torch.randn(8, generator=gen))
    late = torch.nn.Parameter(torch.randn(64, generator=gen))
    opt = make_optimizer([early, late])
    early_grad = torch.randn(8, generator=gen)
    late_grad = torch.randn(64, generator=gen)
    for _ in range(join - 1):
        early.grad = early_grad
        opt.step()
    ratios = []
    lr = opt.param_groups[0]["lr"]
    for _ in range(after):
        early.grad, late.grad = early_grad, late_grad
        before = late.detach().clone()
        opt.step()
        ratios.append(((late.detach() - before).abs() / lr).mean().item())
    return ratios, opt, late


def test_late_starting_parameter_steps_like_torch_adamw():
    """The issue's numbers: with MindSpeed's group step the late parameter's m_hat, v_hat are
    bias-corrected as if it had 10,000 steps of history: |update|/lr = 3.16, 4.25, ... up to
    6.5 and still 4.5 after 50 steps. Per-parameter steps give torch AdamW's 1.0."""
    hyper = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    group_ratios, _, _ = late_start_ratios(
        lambda ps: FusedEmaAdamW(ps, **hyper, step_scope="group"))
    param_ratios, opt, late = late_start_ratios(lambda ps: FusedEmaAdamW(ps, **hyper))
    torch_ratios, ref, _ = late_start_ratios(lambda ps: torch.optim.AdamW(ps, **hyper))
    print("group:", [round(r, 3) for r in group_ratios[:3]], max(group_ratios), group_ratios[-1])
    print("param:", [round(r, 3) for r in param_ratios[:3]], param_ratios[-1])
    print("torch:", [round(r, 3) for r in torch_ratios[:3]], torch_ratios[-1])

    # A constant gradient g: after k steps m = (1 - b1^k) g, v = (1 - b2^k) g^2, corrected with
    # the group's t = LATE - 1 + k instead of k.
    b1, b2 = hyper["betas"]
    for k, ratio in enumerate(group_ratios, start=1):
        t = LATE - 1 + k
        expected = ((1 - b1**k) / (1 - b1**t)) / math.sqrt((1 - b2**k) / (1 - b2**t))
        assert ratio == pytest.approx(expected, rel=1e-3), k
    assert group_ratios[0] == pytest.approx(3.162, abs=2e-3)
    assert group_ratios[1] == pytest.approx(4.25, abs=1e-2)
    assert max(group_ratios) == pytest.approx(6.57, abs=0.01)
    assert group_ratios[-1] == pytest.approx(4.5, abs=0.01)
    for ours, theirs in zip(param_ratios, torch_ratios, strict=True):
        # |update| of ~1e-2 on weights of ~1: fp32 cancellation leaves ~1e-5 relative
        assert ours == pytest.approx(theirs, rel=1e-4)
        assert ours == pytest.approx(1.0, abs=1e-3)
    # each parameter counts its own updates, stored as torch stores them
    steps = [opt.state[p]["step"] for p in opt.param_groups[0]["params"]]
    assert [float(s) for s in steps] == [LATE - 1 + 50, 50]
    assert all(s.dtype == torch.float32 and s.shape == () and s.device.type == "cpu"
               for s in steps)
    assert "step" not in opt.param_groups[0]


def test_param_scope_launches_once_per_distinct_step(rng, monkeypatch):
    """Parameters of a group that share a step value share one launch and one int64 [1] step
    tensor on their device; a late parameter gets its own launch; the golden agrees bit for
    bit with each parameter's own step."""
    launches = []
    real = optim_module.apply_fused_ema_adam_list

    def spy(grad, var, m, v, s, step, *args):
        launches.append(dict(params=list(var), step=step, value=step.tolist()))
        return real(grad, var, m, v, s, step, *args)

    monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)  # every launch through the op
    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", spy)
    seed = torch_seed(rng)
    model = make_model(seed, extra=True)
    trained = [p for n, p in model.named_parameters() if not n.startswith("unused")]
    late = list(model.unused.parameters())
    opt = FusedEmaAdamW([{"params": trained[:3] + late}, {"params": trained[3:]}], lr=0.02,
                        ema_decay=0.9)
    batches = make_batches(seed, 4)
    for batch in batches[:3]:
        backward(model, batch)
        opt.step()
    assert len(launches) == 6  # two groups, one step value each, three steps
    assert all(c["step"].dtype == torch.int64 and c["step"].shape == (1,) for c in launches)
    assert launches[4]["step"] is launches[5]["step"]  # one device step tensor per value

    launches.clear()
    backward(model, batches[3])
    gen = torch.Generator().manual_seed(seed)
    for p in late:
        p.grad = torch.randn(p.shape, generator=gen)
    expected = {}
    for group in opt.param_groups:
        h = golden_hyper(group, warmup_decay(0.9, 4), 1)
        for p in group["params"]:
            step = int(opt.state[p]["step"]) + 1 if p in opt.state else 1
            expected[p] = golden.emulate_update(*snapshot(opt, p), np.array([step]), h)
    opt.step()
    assert [c["value"] for c in launches] == [[4], [1], [4]]
    assert len(launches[1]["params"]) == len(late)
    assert all(a is b for a, b in zip(launches[1]["params"], late))
    for p, e in expected.items():
        st = opt.state[p]
        for a, want in zip((p, st["exp_avg"], st["exp_avg_sq"], st["ema_params"]), e):
            assert golden.bit_equal(to_numpy(a), want)


def test_group_scope_is_mindspeeds_step_bit_for_bit(rng):
    """step_scope="group" counts one step per group (also for parameters without gradients,
    and for empty groups), so it equals the per-parameter scope exactly while every parameter
    trains every step, and differs from the first late parameter on."""
    seed = torch_seed(rng)
    models = [make_model(seed, extra=True) for _ in range(2)]
    opts = [FusedEmaAdamW([{"params": [p for n, p in m.named_parameters()
                                       if not n.startswith("unused")]},
                           {"params": list(m.unused.parameters())}, {"params": []}],
                          lr=0.02, step_scope=scope)
            for m, scope in zip(models, ("group", "param"))]
    for batch in make_batches(seed, 3):
        for m, o in zip(models, opts):
            backward(m, batch)
            o.step()
    group_opt, param_opt = opts
    assert [g["step"].tolist() for g in group_opt.param_groups] == [[3], [3], [3]]
    for p, q in zip(models[0].parameters(), models[1].parameters()):
        assert torch.equal(p, q)
    for m in models:
        m.unused.weight.grad = torch.ones_like(m.unused.weight)
    for o in opts:
        o.step()
    assert not torch.equal(models[0].unused.weight, models[1].unused.weight)
    assert float(param_opt.state[models[1].unused.weight]["step"]) == 1


def test_steps_never_leave_the_host(rng):
    """Meta parameters have no values to read: a step that synchronised with the device (read
    a device step back to the host) would fail here. Per-parameter steps stay on the CPU, the
    group step's value is known without reading it."""
    for scope in ("param", "group"):
        params = [torch.nn.Parameter(torch.empty(5, 3, device="meta")),
                  torch.nn.Parameter(torch.empty(3, device="meta"))]
        opt = FusedEmaAdamW(params, step_scope=scope)
        for _ in range(3):
            for p in params:
                p.grad = torch.empty_like(p)
            opt.step()
        if scope == "param":
            assert all(opt.state[p]["step"].device.type == "cpu" for p in params)
            assert [float(opt.state[p]["step"]) for p in params] == [3, 3]
        else:
            assert opt.param_groups[0]["step"].device.type == "meta"


# ------------------------------------------------------------------------------------------
# Checkpoints: ours into torch


@pytest.mark.parametrize("adam_w_mode", [True, False], ids=["adamw", "adam-l2"])
def test_our_checkpoint_continues_in_torch_adamw(rng, adam_w_mode):
    """N steps with FusedEmaAdamW, save, load into torch.optim.AdamW (Adam for the L2 mode),
    M more steps each: the same trajectory to fp32 rounding."""
    seed = torch_seed(rng)
    n_steps, m_steps = 6, 14
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), **EXACT, ema_decay=0.9, adam_w_mode=adam_w_mode)
    batches = make_batches(seed, n_steps + m_steps)
    for batch in batches[:n_steps]:
        backward(model, batch)
        opt.step()
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)

    theirs = copy.deepcopy(model)
    torch_class = torch.optim.AdamW if adam_w_mode else torch.optim.Adam
    ref = torch_class(theirs.parameters(), **EXACT)
    ref.load_state_dict(checkpoint)
    assert ref.param_groups[0]["decoupled_weight_decay"] is adam_w_mode
    for batch in batches[n_steps:]:
        backward(model, batch)
        opt.step()
        backward(theirs, batch)
        ref.step()
    assert_close_to_torch(model, theirs, opt, ref, n_steps + m_steps, "ours -> torch")


# ------------------------------------------------------------------------------------------
# Checkpoints: torch into ours


def torch_checkpoint_with_late_parameter(seed, total=100, late_steps=5):
    """torch AdamW: every parameter trained ``total`` steps except the last layer's bias, which
    joined ``late_steps`` steps before the save."""
    model = make_model(seed)
    params = list(model.parameters())
    ref = torch.optim.AdamW(params, **EXACT)
    for n, batch in enumerate(make_batches(seed, total)):
        backward(model, batch)
        if n < total - late_steps:
            params[-1].grad = None
        ref.step()
    return model, ref


def continue_both(model, ref, opt_model, opt, seed, steps):
    for batch in make_batches(seed + 3, steps):
        backward(model, batch)
        ref.step()
        backward(opt_model, batch)
        opt.step()


def test_torch_checkpoint_with_different_steps_keeps_each_step(rng):
    """The issue's case: a parameter at step 5 in an AdamW checkpoint whose others are at
    step 100. Each parameter keeps its step, so training continues like AdamW; MindSpeed's group
    step (step_scope="group") takes the largest for all and the late parameter drifts away (the
    issue measured 0.03, 60 % of its movement), with a warning."""
    seed = torch_seed(rng)
    model, ref = torch_checkpoint_with_late_parameter(seed)
    checkpoint = copy.deepcopy(ref.state_dict())
    assert sorted({float(s["step"]) for s in checkpoint["state"].values()}) == [5, 100]
    late_at_save = list(model.parameters())[-1].detach().clone()

    results = {}
    for scope in ("param", "group"):
        theirs, ref_copy = copy.deepcopy(model), None
        ref_copy = torch.optim.AdamW(theirs.parameters(), **EXACT)
        ref_copy.load_state_dict(copy.deepcopy(checkpoint))
        ours = copy.deepcopy(model)
        opt = FusedEmaAdamW(ours.parameters(), **EXACT, ema_decay=0.9, step_scope=scope)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opt.load_state_dict(copy.deepcopy(checkpoint))
        results[scope] = (theirs, ref_copy, ours, opt, caught)
        continue_both(theirs, ref_copy, ours, opt, seed, 20)

    theirs, ref_copy, ours, opt, caught = results["param"]
    assert not [w for w in caught if "step" in str(w.message)]
    assert [float(opt.state[p]["step"]) for p in ours.parameters()][-2:] == [120, 25]
    # the trajectories part at the load: 20 steps of rounding differences
    assert_close_to_torch(ours, theirs, opt, ref_copy, 20, "torch -> ours (param)")

    theirs, ref_copy, ours, opt, caught = results["group"]
    assert any("different steps" in str(w.message) for w in caught)
    late_ours, late_torch = list(ours.parameters())[-1], list(theirs.parameters())[-1]
    drift = (late_ours - late_torch).abs().max().item()
    movement = (late_torch - late_at_save).abs().max().item()
    print(f"group scope: late parameter {drift:.4f} away from AdamW, "
          f"{100 * drift / movement:.0f}% of its movement {movement:.4f}")
    assert drift > 0.1 * movement


@pytest.mark.parametrize("source, adam_w_mode, warns", [
    ("Adam", True, True), ("AdamW", False, True), ("AdamW", True, False), ("Adam", False, False)])
def test_loading_a_checkpoint_of_the_other_weight_decay_mode_warns(rng, source, adam_w_mode,
                                                                    warns):
    """torch Adam checkpoints say ``decoupled_weight_decay=False`` (L2), AdamW's True; a mismatch
    with this optimizer's ``adam_w_mode`` changes what the weight decay does: a warning. The
    constructor's mode stays."""
    seed = torch_seed(rng)
    model = make_model(seed)
    ref = getattr(torch.optim, source)(model.parameters(), **EXACT)
    backward(model, make_batches(seed, 1)[0])
    ref.step()
    opt = FusedEmaAdamW(copy.deepcopy(model).parameters(), **EXACT, adam_w_mode=adam_w_mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.load_state_dict(ref.state_dict())
    mode_warnings = [w for w in caught if "decoupled_weight_decay" in str(w.message)]
    assert len(mode_warnings) == int(warns)
    if warns:
        assert f"adam_w_mode={adam_w_mode}" in str(mode_warnings[0].message)
    assert opt.adam_w_mode == int(adam_w_mode)
    assert opt.param_groups[0]["decoupled_weight_decay"] is adam_w_mode


def test_constructor_settings_win_and_checkpoint_counters_win(rng, monkeypatch):
    """use_num_updates (and the other switches) come from the constructor, num_updates and the
    steps from the checkpoint: warm-up off stays off after loading a warm-up checkpoint
    (constant decay 0.5, not the warm-up's 0.25), and warm-up on stays on after loading a
    checkpoint saved without it (restarting at 0, like MindSpeed's own checkpoints)."""
    decays = []
    real = optim_module.apply_fused_ema_adam_list
    real_single = optim_module.npu_apply_fused_ema_adamw

    def spy(*args):
        decays.append(args[7])
        return real(*args)

    def spy_single(*args):  # foreach=False: one launch of the single op per parameter
        decays.append(args[7])
        return real_single(*args)

    seed = torch_seed(rng)
    batches = make_batches(seed, 4)

    def saved(**kwargs):
        model = make_model(seed)
        opt = FusedEmaAdamW(model.parameters(), ema_decay=0.5, **kwargs)
        backward(model, batches[0])
        opt.step()
        return model, opt.state_dict()

    # warm-up on in the checkpoint (num_updates 1), off in the constructor
    model, checkpoint = saved()
    assert checkpoint["param_groups"][0]["num_updates"] == 1
    opt = FusedEmaAdamW(model.parameters(), ema_decay=0.5, use_num_updates=False, foreach=False)
    checkpoint["param_groups"][0]["foreach"] = True
    opt.load_state_dict(checkpoint)
    assert opt.num_updates == -1 and opt.use_num_updates is False
    assert opt.param_groups[0]["foreach"] is False
    assert [float(opt.state[p]["step"]) for p in model.parameters()] == [1] * 6
    monkeypatch.setattr(optim_module, "PREPARED_LAUNCHES", False)  # every launch through the op
    monkeypatch.setattr(optim_module, "apply_fused_ema_adam_list", spy)
    monkeypatch.setattr(optim_module, "npu_apply_fused_ema_adamw", spy_single)
    backward(model, batches[1])
    opt.step()
    assert set(decays) == {0.5}  # (1+2)/(10+2) = 0.25 had the checkpoint's warm-up come back

    # warm-up off in the checkpoint, on in the constructor: restarts at 0
    model, checkpoint = saved(use_num_updates=False)
    decays.clear()
    assert checkpoint["param_groups"][0]["num_updates"] == -1
    opt = FusedEmaAdamW(model.parameters(), ema_decay=0.5)
    opt.load_state_dict(checkpoint)
    assert opt.num_updates == 0
    backward(model, batches[1])
    opt.step()
    assert set(decays) == {2 / 11} and opt.num_updates == 1

    # both on: the checkpoint's counter continues
    model, checkpoint = saved()
    opt = FusedEmaAdamW(model.parameters(), ema_decay=0.9)
    opt.load_state_dict(checkpoint)
    assert opt.num_updates == 1


def test_scope_conversions_on_load(rng):
    """A group-scope checkpoint (MindSpeed's layout) loads into a per-parameter optimizer: each
    parameter with state takes the group's step; the other way, the group takes the largest
    per-parameter step (with a warning when they differ)."""
    seed = torch_seed(rng)
    model = make_model(seed)
    opt = FusedEmaAdamW(model.parameters(), step_scope="group")
    for batch in make_batches(seed, 3):
        backward(model, batch)
        opt.step()
    checkpoint = opt.state_dict()
    per_param = FusedEmaAdamW(copy.deepcopy(model).parameters())
    per_param.load_state_dict(checkpoint)
    assert "step" not in per_param.param_groups[0]
    assert all(float(st["step"]) == 3 and st["step"].dtype == torch.float32
               for st in per_param.state.values())

    back = FusedEmaAdamW(copy.deepcopy(model).parameters(), step_scope="group")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back.load_state_dict(per_param.state_dict())  # equal steps: no warning
    assert back.param_groups[0]["step"].tolist() == [3]
    assert all("step" not in st for st in back.state.values())


def test_copies_keep_the_step_scope(rng):
    model = make_model(torch_seed(rng))
    opt = FusedEmaAdamW(model.parameters(), step_scope="group", foreach=False)
    for clone in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        assert clone.step_scope == "group" and clone.param_groups[0]["foreach"] is False


# ------------------------------------------------------------------------------------------
# torch's keywords


def test_foreach_and_fused_keywords(rng):
    p = torch.nn.Parameter(torch.randn(3))
    for fused in (None, True):
        assert FusedEmaAdamW([p], fused=fused).defaults["foreach"] is None
    with pytest.raises(ValueError, match=r"fused=False.*always fused"):
        FusedEmaAdamW([p], fused=False)
    for foreach in (None, True, False):
        opt = FusedEmaAdamW([p], foreach=foreach)
        assert opt.defaults["foreach"] is foreach and opt.param_groups[0]["foreach"] is foreach
    with pytest.raises(TypeError, match="foreach"):
        FusedEmaAdamW([p], foreach="yes")
    with pytest.raises(ValueError, match=r"step_scope must be 'param' or 'group'"):
        FusedEmaAdamW([p], step_scope="layer")
    # both values run the same kernel today: bit-identical trajectories
    seed = torch_seed(rng)
    models = [make_model(seed) for _ in range(2)]
    opts = [FusedEmaAdamW(m.parameters(), lr=0.02, foreach=f) for m, f in zip(models, (True,
                                                                                     False))]
    for batch in make_batches(seed, 3):
        for m, o in zip(models, opts):
            backward(m, batch)
            o.step()
    assert all(torch.equal(a, b) for a, b in zip(models[0].parameters(), models[1].parameters()))


# ------------------------------------------------------------------------------------------
# One step in parts: partial_steps() (DeepSpeed steps its client optimizer in parts)


def flat_partitions(seed):
    """Four flat fp32 tensors, like DeepSpeed's fp32 partitions: three of param group 0
    (ZeRO-3 sub-groups), one of group 1."""
    gen = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(n, generator=gen) * 0.3) for n in (40, 7, 19, 11)]


def parts_optimizer(params, scope, **kwargs):
    return FusedEmaAdamW([{"params": params[:3]},
                          {"params": params[3:], "lr": 0.005, "weight_decay": 0.0,
                           "ema_every": 2}],
                         lr=0.02, ema_decay=0.95, weight_decay=0.05, step_scope=scope, **kwargs)


def zero3_parts(opt, params):
    """DeepSpeed ZeRO-3's _optimizer_step: one step() per sub-group, its group's params set
    to that sub-group's partition and every other group's empty."""
    groups = opt.param_groups
    for group_index, part in ((0, params[0:1]), (0, params[1:3]), (1, params[3:4])):
        for k, group in enumerate(groups):
            group["params"] = part if k == group_index else []
        opt.step()
    groups[0]["params"], groups[1]["params"] = params[:3], params[3:]


def zero12_parts(opt, params):
    """DeepSpeed ZeRO-1/2's _optimizer_step: one step() per param group, param_groups narrowed
    to it."""
    groups = opt.param_groups
    for group in groups:
        opt.param_groups = [group]
        opt.step()
    opt.param_groups = groups


def counters(opt, params):
    return (opt.num_updates, [g["num_updates"] for g in opt.param_groups],
            [g["ema_calls"] for g in opt.param_groups],
            [g["step"].tolist() for g in opt.param_groups if "step" in g],
            [float(opt.state[p]["step"]) for p in params if "step" in opt.state[p]])


@pytest.mark.parametrize("pattern", [zero3_parts, zero12_parts], ids=["zero3", "zero12"])
@pytest.mark.parametrize("scope", ["param", "group"])
def test_partial_steps_equal_whole_steps(rng, pattern, scope):
    """A step in parts inside partial_steps() is the whole step, bit for bit: weights, EMA
    (its warm-up decay reads num_updates, ema_every's clock), moments and every counter. The
    same parts without the block count once per part (what DeepSpeed showed)."""
    seed = torch_seed(rng)
    whole_params, part_params, loose_params = (flat_partitions(seed) for _ in range(3))
    whole = parts_optimizer(whole_params, scope)
    parts = parts_optimizer(part_params, scope)
    loose = parts_optimizer(loose_params, scope)
    gen = torch.Generator().manual_seed(seed + 1)
    for step in range(1, 6):
        grads = [torch.randn(p.shape, generator=gen) for p in whole_params]
        for ps in (whole_params, part_params, loose_params):
            for p, g in zip(ps, grads):
                p.grad = g.clone()
        whole.step()
        with parts.partial_steps():
            pattern(parts, part_params)
        pattern(loose, loose_params)
        for p, q in zip(whole_params, part_params):
            for a, b in [(p, q)] + [(whole.state[p][k], parts.state[q][k])
                                    for k in ("exp_avg", "exp_avg_sq", "ema_params")]:
                assert torch.equal(a, b), (seed, step)
        assert counters(parts, part_params) == counters(whole, whole_params), (seed, step)
        assert whole.num_updates == step
    # without the block each part counts: the warm-up runs 3x (ZeRO-3) or per group (ZeRO-1/2)
    if pattern is zero3_parts:
        assert loose.num_updates == 15
        if scope == "group":  # the empty group counts at every part too
            assert [g["step"].item() for g in loose.param_groups] == [15, 15]
    else:  # ZeRO-1/2's narrowed groups each count their own calls: right per group
        assert [g["num_updates"] for g in loose.param_groups] == [5, 5]
    # a block is over at its end: a plain step afterwards counts again
    for p in part_params:
        p.grad = torch.ones_like(p)
    parts.step()
    assert parts.num_updates == 6


def all_bytes(opt, params):
    return [t.detach().clone() for p in params
            for t in [p] + [v for v in opt.state[p].values() if isinstance(v, torch.Tensor)]]


def test_partial_steps_refuse_a_second_update_and_clipping(rng):
    """In a block a parameter is updated once (the block is one step), and fused clipping
    needs all parameters at once: both raise before anything changes."""
    seed = torch_seed(rng)
    params = flat_partitions(seed)
    opt = parts_optimizer(params, "group")
    for p in params:
        p.grad = torch.randn(p.shape)
    opt.step()
    before = all_bytes(opt, params), counters(opt, params)
    with opt.partial_steps():
        with opt.partial_steps():  # re-entrant: the inner block is the outer one
            opt.param_groups[0]["params"] = params[:2]
            opt.step()
        opt.param_groups[0]["params"], opt.param_groups[1]["params"] = params[1:3], []
        after_first = all_bytes(opt, params), counters(opt, params)
        with pytest.raises(RuntimeError, match=r"param_groups\[0\]\['params'\]\[0\] \(shape "
                                               r"\[7\]\) was updated already"):
            opt.step()
        assert all(map(torch.equal, all_bytes(opt, params), after_first[0]))
        assert counters(opt, params) == after_first[1]
        opt.param_groups[0]["params"] = params[2:3]
        opt.clip_grad_norm_(0.1)
        with pytest.raises(RuntimeError, match="fused gradient clipping inside partial_steps"):
            opt.step()
        opt.param_groups[0]["max_grad_norm"] = 0.1
        with pytest.raises(RuntimeError, match="fused gradient clipping inside partial_steps"):
            opt.step()
        assert all(map(torch.equal, all_bytes(opt, params), after_first[0]))
        opt.param_groups[0]["max_grad_norm"] = None
        opt.step()  # the third partition: the same step as the first two
    opt.param_groups[0]["params"], opt.param_groups[1]["params"] = params[:3], params[3:]
    assert counters(opt, params)[0] == before[1][0] + 1
    assert [g["step"].item() for g in opt.param_groups] == [2, 2]


def test_zero3_partitions_outside_a_block_warn(rng):
    """DeepSpeed's ZeRO-3 fp32 partitions carry ``ds_id``: stepped outside partial_steps()
    (an engine not attached) the optimizer warns that its counters run per sub-group; not inside
    a block, nor for plain tensors. (The check looks at a group's full check: each case is a new
    optimizer's first step.)"""
    seed = torch_seed(rng)

    def first_step(marked: bool, in_block: bool):
        params = flat_partitions(seed)
        if marked:
            params[0].ds_id = 7  # as DeepSpeed marks its partitions (every one)
        opt = parts_optimizer(params, "param")
        for p in params:
            p.grad = torch.randn(p.shape)
        with opt.partial_steps() if in_block else contextlib.nullcontext():
            opt.step()

    with pytest.warns(RuntimeWarning, match="outside partial_steps"):
        first_step(marked=True, in_block=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first_step(marked=True, in_block=True)
        first_step(marked=False, in_block=False)  # plain tensors: no warning
