"""The functional core (issue 32): every update of FusedEmaAdamW goes through
``optim.functional.ema_adamw``, once per group with a gradient, and ``ema_adamw`` called by hand
with the same tensors, steps and hyper-parameters (torch's ``adamw()`` shape) gives the
optimizer's bits; it refuses lists of different lengths before writing anything."""

import pytest
import torch

import ascend_ema_adam.optim._state_kinds as state_kinds  # where step() calls the core
from ascend_ema_adam.optim import FusedEmaAdamW, ema_adamw, fused_ema_adamw
from ascend_ema_adam.optim import functional

SHAPES = [(5, 3), (1,), (33,), (2, 2, 2), (17,), (4, 9)]


def seed_of(rng):
    return int(rng.integers(2**31))


def make_params(gen, dtypes):
    return [torch.nn.Parameter((torch.randn(SHAPES[k % len(SHAPES)], generator=gen) * 0.1)
                               .to(dtype)) for k, dtype in enumerate(dtypes)]


@pytest.fixture
def core_calls(monkeypatch):
    """Every call of ema_adamw from step(): (number of parameters, the steps argument)."""
    calls = []
    real = state_kinds.ema_adamw

    def spy(params, *args, **kwargs):
        calls.append((len(params), args[5]))
        return real(params, *args, **kwargs)

    monkeypatch.setattr(state_kinds, "ema_adamw", spy)
    return calls


@pytest.mark.parametrize("options", [dict(), dict(step_scope="group"), dict(foreach=False),
                                     dict(ema_decay=None), dict(ema_every=2),
                                     dict(amsgrad=True, master_weights=True)],
                         ids=["default", "group steps", "foreach=False", "no EMA", "ema_every",
                              "amsgrad+masters"])
def test_every_step_goes_through_the_core_once_per_group(rng, core_calls, options):
    """Full checks and cached steps alike (and a GradScaler's): one call per group that has a
    gradient, with exactly its parameters that have one."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    groups = [make_params(gen, [torch.float32, torch.bfloat16, torch.float32]),
              make_params(gen, [torch.float16, torch.float32]),
              make_params(gen, [torch.float32])]
    opt = FusedEmaAdamW([{"params": g} for g in groups], lr=0.01, **options)
    for k in range(5):
        for i, group in enumerate(groups):
            for j, p in enumerate(group):
                # group 1 loses a gradient at step 2, group 2 has none at all from step 3
                missing = (i == 1 and j == 0 and k == 2) or (i == 2 and k >= 3)
                p.grad = None if missing else torch.randn(p.shape, generator=gen).to(p.dtype)
        if k == 4:  # GradScaler's tensors (no unscale pass)
            opt.grad_scale, opt.found_inf = torch.tensor([2.0]), torch.tensor([0.0])
        core_calls.clear()
        opt.step()
        expected = [sum(p.grad is not None for p in g) for g in groups]
        assert [n for n, _ in core_calls] == [n for n in expected if n]


def test_the_core_by_hand_gives_the_optimizers_bits(rng):
    """fp32 and bf16 parameters with fp32 masters, AMSGrad, a parameter that starts late (its
    own step: a launch of its own), four steps: ema_adamw called with the same tensors, step
    tensors and hyper-parameters writes the same bits into parameters, masters and state."""
    gen = torch.Generator().manual_seed(seed_of(rng))
    params = make_params(gen, [torch.float32, torch.bfloat16, torch.float32, torch.bfloat16])
    hyper = dict(lr=0.02, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)
    opt = FusedEmaAdamW(params, **hyper, ema_decay=0.97, ema_warmup=None, amsgrad=True,
                        master_weights=True)
    mine = [torch.nn.Parameter(p.detach().clone()) for p in params]
    master = [p.detach().float() if p.dtype != torch.float32 else None for p in mine]
    zeros = [torch.zeros(p.shape) for p in mine]  # fp32 state (state_dtype's default)
    exp_avgs, exp_avg_sqs, max_sqs = ([z.clone() for z in zeros] for _ in range(3))
    emas = [(m if m is not None else p.detach()).float().clone() for p, m in zip(mine, master)]
    taken = [0] * len(mine)
    for k in range(4):
        late = 2  # no gradient before step 2
        grads = [None if (j == late and k < 2) else
                 torch.randn(p.shape, generator=gen).to(p.dtype) for j, p in enumerate(params)]
        for p, g in zip(params, grads):
            p.grad = g
        opt.step()
        idx = [j for j, g in enumerate(grads) if g is not None]
        for j in idx:
            taken[j] += 1
        by_value = {}
        steps = [by_value.setdefault(taken[j], torch.tensor([taken[j]])) for j in idx]
        ema_adamw([mine[j].data for j in idx], [grads[j] for j in idx],
                  [exp_avgs[j] for j in idx], [exp_avg_sqs[j] for j in idx],
                  [max_sqs[j] for j in idx], [emas[j] for j in idx], steps,
                  master_params=[master[j] for j in idx], amsgrad=True, beta1=0.8, beta2=0.95,
                  lr=0.02, weight_decay=0.1, eps=1e-6, maximize=False, ema_decay=0.97)
        for j, p in enumerate(params):
            assert torch.equal(p, mine[j]), (k, j)
            state = opt.state.get(p, {})
            if not taken[j]:
                assert not state
                continue
            for key, ours in (("exp_avg", exp_avgs[j]), ("exp_avg_sq", exp_avg_sqs[j]),
                              ("max_exp_avg_sq", max_sqs[j]), ("ema_params", emas[j])):
                assert torch.equal(state[key], ours), (k, j, key)
            if master[j] is not None:
                assert torch.equal(state["master_param"], master[j]), (k, j)
            assert float(state["step"]) == taken[j]


def test_the_core_refuses_lists_of_other_lengths_before_writing(rng):
    gen = torch.Generator().manual_seed(seed_of(rng))
    params = [torch.randn(s, generator=gen) for s in SHAPES[:3]]
    lists = [[torch.randn(p.shape, generator=gen) for p in params] for _ in range(4)]
    before = [t.clone() for t in params]
    common = dict(amsgrad=False, beta1=0.9, beta2=0.999, lr=1e-3, weight_decay=0.0, eps=1e-8,
                  maximize=False, ema_decay=0.9)
    with pytest.raises(ValueError, match=r"3 parameters but 2 exp_avg_sqs: one of each"):
        ema_adamw(params, lists[0], lists[1], lists[2][:2], [], lists[3], torch.tensor([1]),
                  **common)
    with pytest.raises(ValueError, match=r"3 parameters but 2 steps"):
        ema_adamw(params, *lists[:3], [], lists[3], [torch.tensor([1])] * 2, **common)
    with pytest.raises(ValueError, match="ema_params without an ema_decay"):
        ema_adamw(params, *lists[:3], [], lists[3], torch.tensor([1]),
                  **dict(common, ema_decay=None))
    assert all(torch.equal(a, b) for a, b in zip(params, before))


def test_mindspeeds_form_is_the_core_with_its_arguments(rng, monkeypatch):
    """fused_ema_adamw(grad, var, m, v, s, step, lr, ema_decay, beta1, beta2, eps, mode,
    bias_correction, weight_decay) passes its arguments to ema_adamw, and refuses a mode other
    than 0 and 1."""
    seen = []
    real = functional.ema_adamw

    def spy(*args, **kwargs):
        seen.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(functional, "ema_adamw", spy)
    gen = torch.Generator().manual_seed(seed_of(rng))
    grad, var, m, v, s = ([torch.randn(3, generator=gen)] for _ in range(5))
    step = torch.tensor([4])
    fused_ema_adamw(grad, var, m, v, s, step, 0.01, 0.9, 0.8, 0.95, 1e-7, 0, False, 0.2)
    (args, kwargs), = seen
    assert args == (var, grad, m, v, [], s, step)
    assert kwargs == dict(amsgrad=False, beta1=0.8, beta2=0.95, lr=0.01, weight_decay=0.2,
                          eps=1e-7, maximize=False, ema_decay=0.9, bias_correction=False,
                          decoupled_weight_decay=False)
    with pytest.raises(ValueError, match="mode is 2, expected 0"):
        fused_ema_adamw(grad, var, m, v, s, step, 0.01, 0.9, 0.8, 0.95, 1e-7, 2, False, 0.2)
